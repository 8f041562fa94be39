"""The prepared problem of the coordinate-descent family: argument checks, glmnet-style
weighted standardisation of the design, the default ``lambda`` sequence,
the update-mode choice and LUM's continuation grid.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from cohstats._numba_cache import njit

from cohstats.losses.scalar import (
    LOSS_ALUM,
    LOSS_C,
    LOSS_EXP,
    LOSS_HHINGE,
    LOSS_HINGE,
    LOSS_LOGIT,
    LOSS_LUM,
    LOSS_SQHINGE,
    LOSS_V,
    loss_curv_bound,
)
from cohstats.solvers.cd.scalar import _wsq
from cohstats.solvers.cd.state import (
    MODE_EXACT,
    MODE_IRLS,
    MODE_MM,
)

_MODES = {"irls": MODE_IRLS, "mm": MODE_MM, "exact": MODE_EXACT}


def default_mode(loss_code: int) -> int:
    """Coordinate-update mode chosen automatically for a loss code (see the module docstring)."""
    if loss_code == LOSS_LUM or loss_code == LOSS_HINGE:
        return MODE_EXACT
    if loss_code == LOSS_HHINGE:
        return MODE_MM
    return MODE_IRLS


def _resolve_mode(mode, loss_code, p1=1.0, p2=1.0):
    if mode is None or mode == "auto":
        return default_mode(loss_code)
    if isinstance(mode, str):
        if mode not in _MODES:
            raise ValueError(f"mode must be one of 'auto', 'irls', 'mm', 'exact'; got {mode!r}")
        m = _MODES[mode]
    else:
        m = int(mode)
    if m not in (MODE_IRLS, MODE_MM, MODE_EXACT):
        raise ValueError(f"mode must be one of 'auto', 'irls', 'mm', 'exact'; got {mode!r}")
    if m == MODE_MM and not np.isfinite(loss_curv_bound(loss_code, p1, p2)):
        raise ValueError(
            f"mode='mm' needs a loss with a finite curvature bound; loss code "
            f"{loss_code} with parameters ({p1}, {p2}) has none; use mode='exact'"
        )
    if m == MODE_IRLS and loss_code == LOSS_HINGE:
        raise ValueError("mode='irls' is not available for the hinge loss (zero curvature); use 'exact'")
    return m


def _check_loss(loss_code, p1, p2):
    loss_code = int(loss_code)
    if loss_code not in (LOSS_C, LOSS_V, LOSS_HHINGE, LOSS_SQHINGE, LOSS_LUM, LOSS_LOGIT, LOSS_HINGE, LOSS_EXP):
        raise ValueError(f"loss_code {loss_code} is not a known loss code")
    p1 = float(p1)
    p2 = float(p2)
    if loss_code in (LOSS_C, LOSS_V):
        if not (p1 > 0 and np.isfinite(p1)):
            raise ValueError(f"rho (p1) must be positive and finite; got {p1!r}")
        if not (p2 >= 0 and np.isfinite(p2)) or (loss_code == LOSS_C and p2 == 0):
            raise ValueError(f"u (p2) must be {'> 0' if loss_code == LOSS_C else '>= 0'} and finite; got {p2!r}")
    if loss_code == LOSS_HHINGE and not (p1 > 0 and np.isfinite(p1)):
        raise ValueError(f"delta (p1) of the huberized hinge must be positive; got {p1!r}")
    if loss_code == LOSS_LUM and not (p1 > 0 and p2 >= 0):
        raise ValueError(f"LUM needs a > 0 and c >= 0; got a={p1!r}, c={p2!r}")
    return loss_code, p1, p2


def _check_xyw(X, y, w):
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"X must be a 2-D array; got shape {X.shape}")
    n = X.shape[0]
    y = np.ascontiguousarray(y, dtype=np.float64).ravel()
    if y.shape[0] != n:
        raise ValueError(f"y has {y.shape[0]} entries but X has {n} rows")
    if not np.all(np.abs(y) == 1.0):
        raise ValueError("y must be coded -1/+1")
    if w is None:
        w = np.ones(n)
    w = np.ascontiguousarray(w, dtype=np.float64).ravel()
    if w.shape[0] != n:
        raise ValueError(f"w has {w.shape[0]} entries but X has {n} rows")
    if not np.all(np.isfinite(w)) or np.any(w < 0) or not w.sum() > 0:
        raise ValueError("w (observation weights) must be finite, >= 0 and not all zero")
    if not np.all(np.isfinite(X)):
        raise ValueError("X contains NaN or infinite values")
    w = w * (n / w.sum())
    return X, y, w


@njit(cache=True, nogil=True)
def _standardize_nb(X, w, standardize, intercept):
    n, p = X.shape
    # moments are computed on each column divided by its largest magnitude, so that columns of
    # order 1e+-300 neither overflow nor underflow in their squares (a standardised fit is
    # invariant to the scale of a predictor)
    mx = np.ones(p)
    for j in range(p):
        m = 0.0
        for i in range(n):
            a = abs(X[i, j])
            if a > m:
                m = a
        if m > 0.0 and m < math.inf:
            mx[j] = m
    center = np.zeros(p)
    ss = np.zeros(p)
    ref = np.zeros(p)
    for i in range(n):
        wi = w[i]
        for j in range(p):
            x = X[i, j] / mx[j]
            center[j] += wi * x
            ref[j] += wi * x * x
    for j in range(p):
        center[j] /= n
        ref[j] = math.sqrt(ref[j] / n)
        if not intercept:
            center[j] = 0.0
    for i in range(n):
        wi = w[i]
        for j in range(p):
            d = X[i, j] / mx[j] - center[j]
            ss[j] += wi * d * d
    excl = np.zeros(p, dtype=np.bool_)
    scale = np.ones(p)
    for j in range(p):
        ss[j] = math.sqrt(ss[j] / n)
        if intercept:
            excl[j] = ss[j] <= 1e-12 * ref[j] or ss[j] == 0.0
        else:
            excl[j] = ref[j] == 0.0
        if standardize and not excl[j]:
            scale[j] = (ss[j] if intercept else ref[j]) * mx[j]
        center[j] *= mx[j]
    Xt = np.empty((p, n))
    for i in range(n):
        for j in range(p):
            Xt[j, i] = (X[i, j] - center[j]) / scale[j]
    return Xt, center, scale, excl


def standardize_design(X, w, standardize=True, intercept=True):
    """glmnet-style weighted centring and scaling.

    Returns ``(Xt, center, scale, excl)`` with ``Xt = ((X - center) / scale).T`` (C-contiguous,
    one row per column of X); with ``standardize`` the columns satisfy
    ``(1/n) sum_i w_i Xt[j, i]^2 = 1`` (weights of mean 1). Columns are centred whenever an
    intercept is fitted (this does not change the solution); without an intercept they are
    neither centred nor, when scaled, scaled by anything but their root mean square. Constant
    columns are flagged in ``excl`` and kept at coefficient 0.
    """
    X = np.asarray(X, dtype=np.float64)
    w = np.ascontiguousarray(w, dtype=np.float64)
    return _standardize_nb(X, w, bool(standardize), bool(intercept))


def _check_pf(penalty_factor, p):
    if penalty_factor is None:
        return np.ones(p)
    pf = np.ascontiguousarray(penalty_factor, dtype=np.float64).ravel()
    if pf.shape[0] != p:
        raise ValueError(f"penalty_factor must have length {p}; got {pf.shape[0]}")
    if not np.all(np.isfinite(pf)) or np.any(pf < 0):
        raise ValueError("penalty_factor must be finite and >= 0")
    return pf


def _check_alpha(alpha):
    alpha = float(alpha)
    if not (0.0 <= alpha <= 1.0):
        raise ValueError(f"alpha must lie in [0, 1]; got {alpha!r}")
    return alpha


@njit(cache=True, nogil=True)
def _xv(Xt, w):
    p, n = Xt.shape
    out = np.empty(p)
    for j in range(p):
        out[j] = _wsq(Xt[j], w) / n
    return out


def xv_of(Xt, w):
    """Weighted mean squares ``(1/n) sum_i w_i Xt[j, i]^2`` of the rows of a prepared design."""
    return _xv(np.ascontiguousarray(Xt), np.ascontiguousarray(w))


def lambda_sequence(lam_max, nlambda=100, lambda_min_ratio=None, n=None, p=None):
    """glmnet's default sequence: ``nlambda`` values log-spaced from ``lam_max`` down to
    ``lambda_min_ratio * lam_max`` (``1e-4`` if ``n > p`` else ``1e-2``).

    Examples
    --------
    >>> from cohstats.solvers.cd.path import lambda_sequence
    >>> lambda_sequence(1.0, 3, 1e-2)
    array([1.  , 0.1 , 0.01])
    """
    nlambda = int(nlambda)
    if nlambda < 1:
        raise ValueError(f"nlambda must be a positive integer; got {nlambda!r}")
    if lambda_min_ratio is None:
        lambda_min_ratio = 1e-4 if (n is not None and p is not None and n > p) else 1e-2
    lambda_min_ratio = float(lambda_min_ratio)
    if not (0 < lambda_min_ratio < 1) and nlambda > 1:
        raise ValueError(f"lambda_min_ratio must lie in (0, 1); got {lambda_min_ratio!r}")
    if nlambda == 1:
        return np.array([float(lam_max)])
    return float(lam_max) * np.exp(np.linspace(0.0, math.log(lambda_min_ratio), nlambda))


def _check_lambdas(lambdas):
    lam = np.ascontiguousarray(lambdas, dtype=np.float64).ravel()
    if lam.size == 0:
        raise ValueError("lambdas must contain at least one value")
    if not np.all(np.isfinite(lam)) or np.any(lam < 0):
        raise ValueError("lambdas must be finite and >= 0")
    return lam


def continuation_grid(loss_code, p1, p2, mode):
    """Values of LUM's ``c`` solved before the requested one at every ``lambda``.

    LUM with large ``c`` is nearly the hinge: its curvature jumps from 0 to ``(a+1)(1+c)/a`` at
    the connection point, and for ``c = inf`` it is not differentiable at all, where cyclic
    coordinate descent can stall at non-optimal points. Solving ``c = 10, 100, ...`` first (each
    warm-starting the next, the last stage at the requested ``c``) reaches the optimum in far
    fewer passes for ``c = 1e4`` and gives a solution within about ``1/c_last`` of the hinge
    optimum for ``c = inf`` (``c_last = 1e6``).
    """
    if loss_code == LOSS_ALUM and mode == MODE_MM and p2 > 10.0:
        pass  # the grouped angle-based LUM: same continuation, MM steps
    elif loss_code != LOSS_LUM or mode != MODE_EXACT or not p2 > 10.0:
        return np.zeros(0)
    grid = np.array([10.0, 100.0, 1e3, 1e4, 1e5, 1e6])
    return np.ascontiguousarray(grid[grid < p2 / 10.0] if np.isfinite(p2) else grid)


def _check_tol(tol, max_iter):
    tol = float(tol)
    if not (tol > 0 and np.isfinite(tol)):
        raise ValueError(f"tol must be a positive number; got {tol!r}")
    if int(max_iter) != max_iter or max_iter < 1:
        raise ValueError(f"max_iter must be a positive integer; got {max_iter!r}")
    return tol, int(max_iter)


def _warn_conv(lam, conv, max_iter, name="lambda", stacklevel=3):
    """Warn that coordinate descent did not converge at some path values (``stacklevel`` 3: the
    caller of the public path function)."""
    from cohstats.exceptions import ConvergenceWarning

    bad = np.flatnonzero(~conv)
    warnings.warn(
        f"coordinate descent did not converge for {bad.size} of {conv.size} {name} values "
        f"(first at {name}={lam[bad[0]]:.4g}) within max_iter={max_iter} passes; "
        f"increase max_iter or loosen tol",
        ConvergenceWarning,
        stacklevel=stacklevel,
    )
