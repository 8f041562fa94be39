"""Thin script: ``python vignettes/zdj_clearn.py --reps N --out DIR`` (see cohstats.vignettes.zdj_clearn)."""

from cohstats.vignettes.zdj_clearn import main

if __name__ == "__main__":
    main()
