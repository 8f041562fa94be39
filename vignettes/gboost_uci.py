"""Thin script: ``python vignettes/gboost_uci.py --reps N --out DIR`` (see cohstats.vignettes.gboost_uci)."""

from cohstats.vignettes.gboost_uci import main

if __name__ == "__main__":
    main()
