"""Thin script: ``python vignettes/data_check.py --out DIR`` (see cohstats.vignettes.data_check)."""

from cohstats.vignettes.data_check import main

if __name__ == "__main__":
    main()
