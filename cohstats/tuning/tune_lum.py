"""The tuned LUM of [LZW]: fix ``a``, choose ``c`` and ``lambda`` by validation or CV error.

A model-specific tuner built on :func:`cohstats.tuning.tune`; :func:`cohstats.lum` with
``c="tuned"`` calls it.
"""

from __future__ import annotations

import math
import warnings

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

if TYPE_CHECKING:  # pragma: no cover
    from cohstats.models.lum import LumFit


def tune_lum(
    formula,
    data=None,
    *,
    a: float = 1000.0,
    cs=(0.0, 10000.0),
    lambda_=None,
    validation=None,
    nfolds: int = 10,
    random_state=0,
    refit_on: str = "train",
    _context=None,
    **kwargs,
) -> "LumFit":
    """Tuned LUM ([LZW] section 5): fix ``a``, choose ``c`` in ``cs`` and ``lambda`` by validation error.

    For each ``c`` the LUM path is fitted on the training sample over the ``lambda`` grid
    (25 values ``10^2 .. 10^-4``) and the misclassification error is computed on the
    ``validation`` sample (or, without one, by stratified ``nfolds``-fold cross-validation);
    the best ``lambda`` per ``c`` is kept (ties: larger ``lambda``), then the ``c`` with the
    smaller error (ties: the smaller ``c``, i.e. the soft classifier).

    Parameters
    ----------
    formula, data : as :func:`lum`.
    a : float, default 1000 (the paper's choice).
    cs : candidate values of ``c``, default ``(0, 10000)`` (soft versus hard).
    lambda_ : grid, default :data:`LUM_LAMBDA_GRID`.
    validation : DataFrame with the response, or tuple ``(X, y)``; if None, cross-validation.
    nfolds, random_state : cross-validation folds and their seed.
    refit_on : passed to :func:`lum` (``"validation"`` needs ``validation``).
    **kwargs : other arguments of :func:`lum` (alpha, kernel, standardize, weights, ...).

    Returns
    -------
    LumFit at the winning ``c`` with ``s`` = the winning ``lambda``; ``fit.tuning`` holds the
    error of every ``(c, lambda)``, ``fit.c_selected`` the winner and ``fit.tuning_note`` says
    which regime won.

    Notes
    -----
    Built on :func:`cohstats.tuning.tune` (``method="holdout"`` with ``validation``, else
    ``method="cv"``) with the grid ``{"c": cs, "lambda_": lambda_}``; one path fit per ``c``.

    Kernel expansions whose kernel depends on the rows only (``standardize=False`` and a width
    that does not look at the data: a number, ``gamma="auto"``, a linear or polynomial kernel, or
    a callable) compute one kernel matrix of the training rows, shared by the fits of every
    ``c`` and, with cross-validation, of every fold (see :func:`cohstats.tuning.cv`, Notes); the
    results are those of a kernel matrix per fit.

    Examples
    --------
    >>> import numpy as np
    >>> import cohstats as cs
    >>> rng = np.random.default_rng(2)
    >>> X = rng.normal(size=(200, 3)); y = np.where(X[:, 0] + 0.5 * rng.normal(size=200) > 0, 1, -1)
    >>> fit = cs.tune_lum(X[:100], y[:100], validation=(X[100:], y[100:]))
    >>> fit.c_selected in (0.0, 10000.0)
    True
    """
    from cohstats.models.lum import (
        _HARD_C,
        LUM_LAMBDA_GRID,
        _check_ac,
        _check_lambda,
        _convergence_warning,
        _new_xy,
        _to_design,
        lum,
    )
    from cohstats.tuning.tune import tune

    a = float(a)
    cs_ = sorted(float(c) for c in np.atleast_1d(cs))
    if len(cs_) == 0:
        raise ValueError("cs must contain at least one value of c")
    for c in cs_:
        _check_ac(a, c)
    lambdas = LUM_LAMBDA_GRID.copy() if lambda_ is None else _check_lambda(lambda_)
    if isinstance(formula, str) and _context is None:
        from cohstats.formula import capture_context

        _context = capture_context(1)
    design = _to_design(
        formula,
        data,
        kwargs.pop("weights", None),
        kwargs.pop("subset", None),
        kwargs.pop("na_action", "omit"),
        _context,
    )
    if not design.binary:
        raise ValueError(
            f"the tuned LUM of [LZW] (c='tuned') is defined for two classes; the "
            f"response {design.yname!r} has {design.n_classes} levels: fit the "
            f"angle-based LUM with a number c and choose it with "
            f"cs.tune(cs.lum, ..., grid={{'c': [...]}})"
        )
    if refit_on not in ("train", "validation"):
        raise ValueError(f"refit_on must be 'train' or 'validation'; got refit_on={refit_on!r}")
    if refit_on == "validation" and validation is None:
        raise ValueError("refit_on='validation' needs the validation= sample")
    # tune(): ties go to the grid value listed first (c ascending: the soft c = 0) and,
    # within it, to the larger lambda; measure = misclassification error.
    grid = {"c": cs_, "lambda_": lambdas}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", _convergence_warning())
        if validation is not None:
            res = tune(
                lum,
                design,
                grid=grid,
                method="holdout",
                validation=validation,
                measure="class",
                verbose=False,
                a=a,
                **kwargs,
            )
            how = "validation"
        else:
            res = tune(
                lum,
                design,
                grid=grid,
                method="cv",
                nfolds=nfolds,
                measure="class",
                random_state=random_state,
                verbose=False,
                a=a,
                **kwargs,
            )
            how = f"{nfolds}-fold CV"
    tab = res.to_frame().rename(columns={"score": "error"})
    rows = tab.to_dict("records")
    best = {}
    for c in cs_:
        g = tab[tab["c"] == c].sort_values("lambda", ascending=False, kind="stable")
        k = int(np.argmin(g["error"].to_numpy()))
        best[c] = (float(g["error"].iloc[k]), float(g["lambda"].iloc[k]))
    fit = res.best_fit
    c_sel = float(res.best_params["c"])
    err_sel, lam_sel = best[c_sel]
    if not (fit.c == c_sel and math.isclose(fit.s, lam_sel)):  # pragma: no cover - guard
        raise RuntimeError("tune() and the tuned-LUM table disagree; please report")
    regime = "soft" if c_sel == 0 else ("hard" if c_sel >= _HARD_C else "intermediate")
    note = (
        f"tuned LUM (a = {a:g}): c = {c_sel:g} ({regime}) won by {how} error "
        f"{err_sel:.4f} at lambda = {lam_sel:.4g}; " + ", ".join(f"c = {c:g}: {best[c][0]:.4f}" for c in cs_)
    )
    refit = {}
    if refit_on == "validation":
        refit = dict(_validation=_new_xy(design, validation), refit_on="validation", _refit_cache={})
    # the tuned result is derived from the winning fit (a copy with the tuning record)
    return fit._derive(
        **refit,
        tuning=pd.DataFrame(rows),
        c_selected=c_sel,
        tuning_best=pd.DataFrame([{"c": c, "lambda": best[c][1], "error": best[c][0]} for c in cs_]),
        tuning_note=note,
        call=dict(getattr(fit, "call", {}) or {}, c="tuned"),
    )
