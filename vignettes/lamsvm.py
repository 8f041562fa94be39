"""Thin script: ``python vignettes/lamsvm.py [--reps N] [--out DIR] [--full]`` (see cohstats.vignettes.lamsvm)."""

from cohstats.vignettes.lamsvm import main

if __name__ == "__main__":
    main()
