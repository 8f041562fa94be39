"""cohstats: formula-driven large-margin classification with honest class probabilities.

Fit functions: :func:`clearn`, :func:`lum`, :func:`lamsvm`, :func:`gboost_c`, :func:`svm`;
tuning: :func:`cv`, :func:`tune`, :func:`gkl`. Everything is imported lazily so that
``import cohstats`` stays fast.
"""

from __future__ import annotations

import importlib
import warnings

__version__ = "0.1.0"


from .exceptions import CalibrationWarning, ConvergenceWarning, DataWarning  # noqa: E402


_LAZY = {
    "bootstrap_confint": "cohstats.inference",
    "build_design": "cohstats.formula",
    "Design": "cohstats.formula",
    "Fit": "cohstats.results",
    "Summary": "cohstats.results",
    "PathFrame": "cohstats.results",
    "make_kernel": "cohstats.kernels",
    "get_loss": "cohstats.losses",
    "coherence_link": "cohstats.losses",
    "lum_link": "cohstats.losses",
    "clearn": "cohstats.models.clearn",
    "svm": "cohstats.models.svm",
    "psi_learn": "cohstats.models.svm",
    "lamsvm": "cohstats.models.lamsvm",
    "lum": "cohstats.models.lum",
    "tune_lum": "cohstats.tuning",
    "lum_refit": "cohstats.models.lum",
    "gboost_c": "cohstats.models.gboost",
    "gboost": "cohstats.models.gboost",
    "cart": "cohstats.models.cart",
    "cv": "cohstats.tuning",
    "tune": "cohstats.tuning",
    "gkl": "cohstats.tuning",
    "CVResult": "cohstats.tuning",
    "TuneResult": "cohstats.tuning",
    "GKLResult": "cohstats.tuning",
    "wsl_grid": "cohstats.tuning",
    "make_folds": "cohstats.tuning",
    "compare": "cohstats.reporting",
    "load": "cohstats.persist",
    "calibration": "cohstats.calibration",
}

_SUBMODULES = (
    "formula",
    "results",
    "persist",
    "losses",
    "kernels",
    "metrics",
    "probability",
    "tuning",
    "reporting",
    "calibration",
    "kernel_approx",
    "validation",
    "exceptions",
    "plotting",
    "datasets",
    "solvers",
    "models",
    "vignettes",
    "sklearn",
)

__all__ = ["ConvergenceWarning", "CalibrationWarning", "DataWarning", "__version__", *sorted(_LAZY)]


def __getattr__(name):
    if name in _SUBMODULES:
        module = importlib.import_module(f"cohstats.{name}")
        globals()[name] = module
        return module
    mod = _LAZY.get(name)
    if mod is None:
        raise AttributeError(f"module 'cohstats' has no attribute {name!r}")
    value = getattr(importlib.import_module(mod), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY) | set(_SUBMODULES))


warnings.filterwarnings("default", category=ConvergenceWarning)
