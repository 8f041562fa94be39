"""``python -m cohstats.vignettes [name ...] --reps N --out DIR [--seed S] [--n-jobs J] [--full]``
and ``python -m cohstats.vignettes --fidelity --out DIR`` (the fidelity table of a run)."""

import sys

from .runner import main

if __name__ == "__main__":
    sys.exit(main())
