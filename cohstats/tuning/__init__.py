"""Cross-validation, grid search and the GKL data-perturbation estimate for every fit function.

* :func:`cv` -- K-fold cross-validation of any fit function, cv.glmnet style for path fits
  (the folds reuse the full-data penalty sequence; ``lambda_min``, ``lambda_1se``).
* :func:`gkl` -- the estimated comparative GKL loss of [WSL] eq. (9): the training
  cross-entropy plus a Monte-Carlo covariance penalty (eq. 13) and the random-input
  correction (eq. 14), by data perturbation.
* :func:`tune` -- grid search over any fit arguments by cross-validation, by a hold-out
  validation set, or by the GKL estimate.
* :func:`wsl_grid` -- the 61-point penalty grid of [WSL].

Layout: :mod:`.folds` (fold assignment), :mod:`.measures` (CV measures, built on
:mod:`cohstats.metrics`), :mod:`.cv`, :mod:`.gkl` (the data-perturbation estimator),
:mod:`.tune` (grid search), :mod:`.parallel` (joblib + progress bars),
:mod:`.shared` (one kernel matrix lent to all the fits of a cross-validation), :mod:`.grids`.

Every independent fit (folds, grid points, perturbation replicates) runs through joblib, so
``n_jobs`` parallelises on one machine and ``with joblib.parallel_backend("dask"):`` runs the
same code on a Dask cluster. All random numbers are fixed in the parent process before any
work is dispatched (fold ids; one spawned seed per perturbation replicate), so a fixed
``random_state`` gives the same result serially, with ``n_jobs`` workers, and on Dask.
Serial cross-validations of kernel fits whose kernel depends on the rows only compute the
kernel matrix once for all their fits (:func:`cv`, Notes); the result is the same to rounding.

For large data on Dask, build the design once and scatter it, so that workers receive it once
instead of with every task::

    d = cohstats.build_design("y ~ .", df)
    with joblib.parallel_backend("dask", scatter=[d]):
        res = cv(clearn, d, measure="cre")

Fit functions are called as ``fit_fn(design, **fit_args)`` with a
:class:`cohstats.formula.Design` (``design.take(rows)`` for folds,
``design.replace(X=..., y=...)`` for perturbed data), so formulas are parsed once. The fold and
perturbation refits of a fit that carries its settings (``fit.settings``, every fit of a
declared fit function) pass those back instead, ``fit_fn(rows, _settings=fit.settings)`` with
the path argument replaced by the fitted sequence: the refits run exactly the checked settings
of the full fit. A user's own fit function receives the keywords.

The tuners import no model: they receive the fit function as an argument and read its declared
:class:`~cohstats.validation.FitSpec`. The tuned LUM :func:`tune_lum` is a model that uses them
(``lum(c="tuned")``); it lives in :mod:`cohstats.models.lum` and is reached here by name, on
first access.
"""

from __future__ import annotations

from .cv import CVResult, cv
from .folds import make_folds
from .gkl import GKLResult, _gkl_many, _Perturbation, _seed_seq, gkl
from .grids import wsl_grid
from .measures import _MEASURES
from .tune import TuneResult, tune

__all__ = [
    "cv",
    "tune",
    "gkl",
    "CVResult",
    "TuneResult",
    "GKLResult",
    "wsl_grid",
    "make_folds",
    "tune_lum",
    "_MEASURES",
    "_gkl_many",
    "_Perturbation",
    "_seed_seq",
]


#: names of this package defined in a higher layer (a model), imported on first access
_LAZY_UP = {"tune_lum": "cohstats.models.lum"}


def __getattr__(name):
    if name in _LAZY_UP:
        import importlib

        value = getattr(importlib.import_module(_LAZY_UP[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
