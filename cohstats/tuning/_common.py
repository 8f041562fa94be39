from __future__ import annotations

import numbers

import numpy as np

from ..validation import spec_of


_EPS_P = 1e-10  # probabilities are clipped to [_EPS_P, 1 - _EPS_P] inside the GKL estimator only


def _check_fit_fn(fit_fn):
    if not callable(fit_fn):
        raise TypeError(f"fit_fn must be a fit function such as cohstats.clearn; got {type(fit_fn).__name__}")


def _is_design(obj) -> bool:
    return all(hasattr(obj, a) for a in ("take", "replace", "X", "y", "classes"))


def _as_design(formula, data, fit_args: dict, context=None):
    """Build the Design once; weights/subset/na_action/offset go to the design, not the fits.

    Offsets (``offset(col)`` terms or ``offset=``) stay with the rows of the design: every fold
    or refit takes the offsets of its training rows (``Design.take``), and the held-out rows are
    scored on ``offset + b + x'beta`` (:func:`cohstats.tuning.cv._outputs_at`)."""
    return _build(formula, data, fit_args, context)


def _build(formula, data, fit_args: dict, context=None):
    from ..formula import build_design

    kw = {k: fit_args.pop(k) for k in ("weights", "subset", "na_action", "offset") if k in fit_args}
    if _is_design(formula):
        if data is not None:
            raise TypeError("data must be None when a Design is passed in place of the formula")
        if kw:
            return build_design(formula, **kw), fit_args
        return formula, fit_args
    if isinstance(formula, str):
        if data is None:
            raise TypeError(f"formula {formula!r} needs data (a DataFrame)")
        return build_design(formula, data, context=context, **kw), fit_args
    if formula is None:
        raise TypeError("formula must be a formula string, a Design, or a predictor matrix")
    return build_design(formula, data, **kw), fit_args


def _capture(level=2):
    try:
        from ..formula import capture_context

        return capture_context(level + 1)
    except Exception:  # pragma: no cover
        return None


def _rng(random_state) -> np.random.Generator:
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(0, 2**32 - 1))
    if random_state is None or isinstance(random_state, (numbers.Integral, np.random.SeedSequence)):
        if isinstance(random_state, numbers.Integral) and random_state < 0:
            raise ValueError(f"random_state must be a non-negative integer; got {random_state}")
        return np.random.default_rng(random_state)
    raise TypeError(f"random_state must be None, an int or a numpy Generator; got {type(random_state).__name__}")


def _check_n_jobs(n_jobs):
    if n_jobs is not None and (not isinstance(n_jobs, numbers.Integral) or n_jobs == 0):
        raise ValueError(f"n_jobs must be None or a non-zero integer (-1 = all cores); got {n_jobs!r}")


def _has_path(fit) -> bool:
    """Is the fit a path (a fitted sequence of more than one value)?"""
    lam = getattr(fit, "lambda_", None)
    return lam is not None and np.ndim(lam) == 1 and len(lam) > 1 and hasattr(fit, "_decision_path")


def _refit_args(fit, args: dict) -> dict:
    """Keyword arguments that refit ``fit`` on other rows: its validated settings
    (``fit.settings``, passed back as ``_settings``) when its fit function declared them, else the
    arguments ``args`` it was called with (a user's own fit function)."""
    settings = getattr(fit, "settings", None)
    return dict(args) if settings is None else {"_settings": settings}


def _along(parg, args: dict, lam) -> dict:
    """Arguments that refit a model along the sequence ``lam``.

    Through the fit's ``path_arg`` ``parg`` (``lambda_``, ``C``, ``margin``): a new settings object
    with that field replaced when ``args`` holds settings (:func:`_refit_args`), else the keyword.
    A fit whose sequence is reproduced by the same arguments (boosting steps) or depends on the
    data (pruning) has none, and its refits are scored at the values of ``lam`` (see
    :func:`_outputs`).
    """
    if parg is None:
        return dict(args)
    settings = args.get("_settings")
    if settings is not None:
        return {**args, "_settings": settings.replace(**{parg: lam})}
    return {**args, parg: lam}


def _default_measure(fit_fn) -> str:
    spec = spec_of(fit_fn)
    return spec.default_measure if spec is not None else "class"


def _fit_name(fit_fn):
    return getattr(fit_fn, "__name__", type(fit_fn).__name__)


def _fmt_args(args: dict) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in args.items())


def _summary_cls():
    from ..results import Summary

    return Summary


# ============================================================================ folds


def _merge_fit_kwargs(fit_kwargs, fit_args: dict) -> dict:
    """``fit_kwargs`` (a dict, for names the tuner uses itself) merged with ``**fit_args``."""
    if fit_kwargs is None:
        return dict(fit_args)
    if not isinstance(fit_kwargs, dict):
        raise TypeError(f"fit_kwargs must be a dict of fit arguments; got {type(fit_kwargs).__name__}")
    both = sorted(set(fit_kwargs) & set(fit_args))
    if both:
        raise TypeError(f"fit argument(s) {both} given both in fit_kwargs and directly")
    return {**fit_kwargs, **fit_args}
