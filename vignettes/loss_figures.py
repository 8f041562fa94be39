"""Thin script: ``python vignettes/loss_figures.py --out DIR`` (see cohstats.vignettes.loss_figures)."""

from cohstats.vignettes.loss_figures import main

if __name__ == "__main__":
    main()
