"""Thin script: ``python vignettes/zdj_svm_probability.py --reps N --out DIR``.

See :mod:`cohstats.vignettes.zdj_svm_probability`.
"""

from cohstats.vignettes.zdj_svm_probability import main

if __name__ == "__main__":
    main()
