"""Thin script: ``python vignettes/gkl_tracking.py --reps N --out DIR`` (see cohstats.vignettes.gkl_tracking)."""

from cohstats.vignettes.gkl_tracking import main

if __name__ == "__main__":
    main()
