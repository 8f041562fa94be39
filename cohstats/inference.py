"""Bootstrap inference for a fitted linear model: percentile intervals of the coefficients and of
the test error at the selected ``s`` (``fit.confint()``), and the error lines of ``summary()``.

Penalised estimators have no simple sampling distribution (the penalty biases the coefficients
towards zero and the lasso sets some exactly to zero), so the intervals come from the
nonparametric bootstrap [Efron1979]_: the model is refitted with the same arguments -- for a
path fit, along the same penalty sequence -- on ``B`` samples of the training rows drawn with
replacement, and evaluated at the same ``s``. The percentile interval of a coefficient is the
``(1 - level) / 2`` and ``(1 + level) / 2`` quantiles of its ``B`` replicates
(``numpy.quantile``, linear interpolation) [EfronTibshirani1993]_. It describes the variability
of the *penalised* estimate at this ``s``; it is not a confidence interval for an unpenalised
parameter, and it does not account for ``s`` having been chosen from the same data.

The test error of replicate ``b`` is its (weighted) misclassification rate on the training rows
left out of sample ``b`` (on average 36.8 % of them): the out-of-bag error. Its estimate is the
mean over the replicates, the interval their percentiles; out-of-bag errors are computed from
fits on about 63.2 % distinct rows and are somewhat pessimistic ([EfronTibshirani1997]_).

Reproducibility. Sample ``b`` (``b = 1..B``, in order) holds the rows
``rng.integers(0, n, size=n)`` with ``rng = numpy.random.default_rng(random_state)``; a sample that
misses a class of the response is drawn again. The samples are drawn before any fit, so the
result does not depend on ``n_jobs`` or the scheduler.

References
----------
.. [Efron1979] B. Efron (1979). Bootstrap methods: another look at the jackknife. *The Annals of
   Statistics* 7, 1-26.
.. [EfronTibshirani1993] B. Efron and R. J. Tibshirani (1993). *An Introduction to the
   Bootstrap*, chapter 13. Chapman & Hall.
.. [EfronTibshirani1997] B. Efron and R. Tibshirani (1997). Improvements on cross-validation:
   the .632+ bootstrap method. *Journal of the American Statistical Association* 92, 548-560.
"""

from __future__ import annotations

import importlib

import numpy as np
import pandas as pd

from .result_intervals import BOOTSTRAP_NOTE, bootstrap_info

__all__ = ["bootstrap_confint", "BootstrapCI", "REFIT_FUNCTIONS"]

#: the fit functions whose fits can be refitted from ``fit.method`` and ``fit.call``
REFIT_FUNCTIONS = ("clearn", "lum", "svm", "psi_learn", "lamsvm", "gboost_c", "gboost", "cart")

#: attempts at drawing a sample that holds every class, per replicate
_MAX_REDRAWS = 1000


def _check_B(B) -> int:
    if isinstance(B, (bool, np.bool_)) or not isinstance(B, (int, np.integer)) or B < 2:
        raise ValueError(f"B must be a whole number of bootstrap samples, at least 2 (e.g. 200); got {B!r}")
    return int(B)


def _fit_function(fit):
    if fit.method not in REFIT_FUNCTIONS:
        raise ValueError(
            f"confint() refits the model with its fit function; a {type(fit).__name__} made by "
            f"{fit.method!r} is not one of {list(REFIT_FUNCTIONS)}"
        )
    return getattr(importlib.import_module("cohstats"), fit.method)


def _refit_args(fit) -> dict:
    """The fit's arguments, with its fitted sequence for a path (as cross-validation refits)."""
    args = dict(fit.call)
    if fit.is_path and fit.path_arg is not None:
        args[fit.path_arg] = np.asarray(fit.lambda_, dtype=float)
    return args


def _check_reproduces(fit, fit_fn, args, s, est) -> None:
    """Refit on all the rows: the recorded arguments must give the fit's own coefficients (a fit
    function records the arguments that define the model, not every option it was given)."""
    full = fit_fn(fit.design, **args)
    got = np.asarray(full.coef_at(_at(full, s)), dtype=float).ravel()
    want = np.asarray(est, dtype=float).ravel()
    gap = float(np.max(np.abs(got - want))) if got.shape == want.shape else np.inf
    if not gap <= 1e-3 * (1.0 + float(np.max(np.abs(want)))):
        raise ValueError(
            f"confint(): refitting {fit.method} with the arguments the fit recorded ({args_text(fit.call)}) "
            f"does not reproduce its coefficients (largest difference {gap:.3g}); it was fitted with "
            "options the fit does not record (penalty_factor, intercept, max_iter, ...): give them "
            "as confint(fit_args={...})"
        )


def args_text(args: dict) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in args.items()) or "none"


def _class_codes(design) -> np.ndarray:
    y = np.asarray(design.y)
    return (y > 0).astype(np.int64) if design.binary else y.astype(np.int64)


def draw_samples(design, B: int, random_state) -> list:
    """The ``B`` bootstrap samples (row positions) of the module docstring."""
    rng = np.random.default_rng(random_state)
    codes = _class_codes(design)
    n, K = design.nobs, np.unique(codes).size
    out = []
    for b in range(B):
        for _ in range(_MAX_REDRAWS):
            idx = rng.integers(0, n, size=n)
            if np.unique(codes[idx]).size == K:
                break
        else:
            raise ValueError(
                f"bootstrap sample {b + 1} missed a class in {_MAX_REDRAWS} draws: a class has too few "
                "rows for the bootstrap"
            )
        out.append(idx)
    return out


def _at(rep, s):
    """``s`` clamped to a replicate's fitted range (a refit path may stop early), or None."""
    if s is None or not rep.is_path:
        return None
    lam = np.asarray(rep.lambda_, dtype=float)
    return float(min(max(s, lam.min()), lam.max()))


def _replicate(fit_fn, design, idx, args, s):
    """Coefficients (intercept first, flattened) and out-of-bag error of one bootstrap refit."""
    rep = fit_fn(design.take(idx), **args)
    sr = _at(rep, s)
    coef = np.asarray(rep.coef_at(sr), dtype=float).ravel()
    oob = np.ones(design.nobs, dtype=bool)
    oob[idx] = False
    if not oob.any():
        return coef, np.nan
    pred = np.asarray(rep._classify(design.X[oob], **({} if sr is None else {"s": sr})))
    w = design.weights[oob]
    return coef, float(np.sum(w * (pred != _class_codes(design)[oob])) / np.sum(w))


class BootstrapCI:
    """Bootstrap percentile intervals of a fit (returned by ``fit.confint()``).

    Attributes
    ----------
    coef : DataFrame
        One row per coefficient (``(term, class)`` rows for K-column coefficients), intercept
        first: ``estimate`` (the fit's own), ``lower``, ``upper`` (percentile interval) and ``se``
        (standard deviation of the replicates).
    test_error : Series
        ``estimate`` (mean out-of-bag error), ``lower``, ``upper`` (percentiles), ``se``.
    replicates : ndarray (B, m)
        The coefficient replicates, columns in the order of ``coef``'s rows.
    oob_error : ndarray (B,)
        The out-of-bag error of every replicate.
    B, level, s, random_state
        The number of samples, the level, the path value and the seed used.
    """

    def __init__(self, *, coef, test_error, replicates, oob_error, B, level, s, random_state, method):
        self.coef, self.test_error = coef, test_error
        self.replicates, self.oob_error = replicates, oob_error
        self.B, self.level, self.s, self.random_state, self.method = B, level, s, random_state, method

    def to_dict(self) -> dict:
        """Plain data (tables and numbers) kept by the fit for its summary and saved with it."""
        return {
            "coef": self.coef,
            "test_error": self.test_error,
            "B": self.B,
            "level": self.level,
            "s": self.s,
            "random_state": self.random_state,
        }

    def summary(self):
        from .summary import Summary

        return Summary(
            f"Bootstrap percentile intervals ({self.method})",
            bootstrap_info(self.to_dict()),
            {"Coefficients": self.coef, "Test error (out-of-bag)": self.test_error.to_frame().T},
            [BOOTSTRAP_NOTE],
        )

    def __repr__(self) -> str:
        return str(self.summary())


def bootstrap_confint(
    fit,
    B: int = 200,
    level: float = 0.95,
    *,
    n_jobs=None,
    scheduler=None,
    random_state=None,
    fit_args: dict | None = None,
    verbose=False,
) -> BootstrapCI:
    """Bootstrap percentile intervals of ``fit``'s coefficients and test error at its ``s``.

    Parameters
    ----------
    fit : Fit
        A fit with input-space coefficients (a linear ``clearn``, ``lum``, ``svm`` ...).
    B : int, default 200
        Number of bootstrap samples (at least 1000 for 99 % intervals is usual).
    level : float, default 0.95
        Level of the percentile intervals.
    n_jobs : int, optional
        Parallel workers for the refits (joblib, as :func:`cohstats.cv`).
    scheduler : dask.distributed ``Client`` or scheduler address, optional
        Run the refits on that Dask cluster (joblib's dask backend).
    random_state : None, int or Generator
        Seed of the samples (see the module docstring for the exact draw).
    fit_args : dict, optional
        Arguments of the refits added to those the fit records in ``fit.call`` (the fit
        functions record the arguments that define the model; options such as ``tol``,
        ``max_iter`` or ``penalty_factor`` are not recorded). The refit on all the rows must
        reproduce the fit's coefficients, else a ValueError asks for the missing arguments.
    verbose : bool
        Progress bar on a terminal.

    Returns
    -------
    BootstrapCI

    Examples
    --------
    >>> import cohstats as cs
    >>> from cohstats.datasets import make_wsl2
    >>> fit = cs.clearn("y ~ x1 + x2", make_wsl2(100, random_state=0), loss="logistic",
    ...                 alpha=0.0, lambda_=0.01)
    >>> ci = fit.confint(B=20, random_state=1)
    >>> bool((ci.coef["lower"] <= ci.coef["upper"]).all()), list(ci.coef.columns)
    (True, ['estimate', 'lower', 'upper', 'se'])
    """
    from .reporting import _check_level
    from .results import Fit
    from .tuning._common import _check_n_jobs
    from .tuning.parallel import _parallel, scheduler_backend

    if not isinstance(fit, Fit):
        raise TypeError(f"fit must be a cohstats fit; got {type(fit).__name__}")
    B = _check_B(B)
    lv = _check_level(level)
    _check_n_jobs(n_jobs)
    if fit.coef is None:
        raise ValueError(
            f"confint() gives intervals of input-space coefficients; a {type(fit).__name__} has none "
            "(a kernel expansion or trees): fit a linear model"
        )
    fit_fn = _fit_function(fit)
    s = float(fit.s) if fit.is_path else None
    est = fit.coef_at(s)
    args = {**_refit_args(fit), **dict(fit_args or {})}
    _check_reproduces(fit, fit_fn, args, s, est)
    samples = draw_samples(fit.design, B, random_state)
    tasks = [(fit_fn, fit.design, idx, args, s) for idx in samples]
    with scheduler_backend(scheduler):
        outs = _parallel(_replicate, tasks, n_jobs, verbose, "bootstrap refits")
    R = np.vstack([o[0] for o in outs])
    E = np.array([o[1] for o in outs], dtype=float)
    a = (1.0 - lv) / 2.0
    if isinstance(est, pd.DataFrame):
        point = est.stack(future_stack=True)
    else:
        point = est
    lo, hi = np.quantile(R, [a, 1.0 - a], axis=0)
    coef = pd.DataFrame(
        {"estimate": point.to_numpy(dtype=float), "lower": lo, "upper": hi, "se": R.std(axis=0, ddof=1)},
        index=point.index,
    )
    ok = E[np.isfinite(E)]
    elo, ehi = np.quantile(ok, [a, 1.0 - a]) if ok.size else (np.nan, np.nan)
    test_error = pd.Series(
        {
            "estimate": float(ok.mean()) if ok.size else np.nan,
            "lower": float(elo),
            "upper": float(ehi),
            "se": float(ok.std(ddof=1)) if ok.size > 1 else np.nan,
        },
        name="test error",
    )
    seed = random_state if isinstance(random_state, (int, np.integer)) else None
    return BootstrapCI(
        coef=coef,
        test_error=test_error,
        replicates=R,
        oob_error=E,
        B=B,
        level=lv,
        s=s,
        random_state=seed,
        method=fit.method,
    )
