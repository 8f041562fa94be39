"""Thin script: ``python vignettes/lum_simulations.py --reps N --out DIR`` (see cohstats.vignettes.lum_simulations)."""

from cohstats.vignettes.lum_simulations import main

if __name__ == "__main__":
    main()
