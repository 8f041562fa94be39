"""``python -m cohstats.vignettes [name ...] --reps N --out DIR [--seed S] [--n-jobs J] [--full]``."""
import sys

from .runner import main

if __name__ == "__main__":
    sys.exit(main())
