"""Thin script: ``python vignettes/multiclass_calibration.py --reps N --out DIR``."""

from cohstats.vignettes.multiclass_calibration import main

if __name__ == "__main__":
    main()
