"""Thin script: ``python vignettes/wsl_probability.py --reps N --out DIR`` (see cohstats.vignettes.wsl_probability)."""

from cohstats.vignettes.wsl_probability import main

if __name__ == "__main__":
    main()
