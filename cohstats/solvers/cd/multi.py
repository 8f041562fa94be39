"""Multiclass C-learning: the multicategory coherence loss of [ZJLY] with a linear
expansion and a grouped elastic net, along a decreasing ``lambda`` path.

Model: class margins ``g_k(x) = b_k + x'B_{.k}``, ``k = 0..K-1``, and the objective

    (s/n) sum_i w_i C(g(x_i), c_i) + lambda sum_j pf_j ((1-alpha)/2 ||B_j||_2^2 + alpha ||B_j||_2)

with ``C(g, c) = T log(1 + sum_{j != c} exp((1 + g_j - g_c)/T))`` and ``B_j`` the row of
coefficients of predictor ``j`` over the K classes. ``s`` is a constant loss scale (1 for
[ZJLY]'s loss; the C-loss normalisation ``kappa`` makes K = 2 coincide with the binary C-loss).

Decision (grouped penalty). The loss depends on ``g`` only through differences, so it is
invariant under ``B_j -> B_j + t 1``. With the grouped penalty ``||B_j||_2`` (and the ridge part)
the minimum over such shifts is attained only at the centred row, so every solution satisfies
the sum-to-zero constraint ``sum_k B_jk = 0`` exactly, and a predictor is either in the model
for all classes or for none (glmnet's ``type.multinomial = "grouped"``). A plain (ungrouped)
lasso would make the constraint an extra restriction that changes the solution. The intercepts
are centred too (``sum_k b_k = 0``), which leaves the loss unchanged.

Binary reduction. With K = 2, ``g = (-f/2, f/2)`` and the second class coded
``y = +1``, the loss is ``s V_{T,1}(y f)`` and ``B_j = (-beta_j/2, beta_j/2)``, so the penalty is
``lambda ((1-alpha)/4 beta_j^2 + alpha/sqrt(2) |beta_j|)``. Hence the K = 2 fit at
``(lambda, alpha)`` equals the binary fit (:func:`cohstats.solvers.cd.path.cd_path`, loss V with
``rho = T, u = 1`` (s = 1) or loss C (s = kappa)) at

    lambda_b = lambda ((1 - alpha)/2 + alpha/sqrt(2)),
    alpha_b  = (alpha/sqrt(2)) / ((1 - alpha)/2 + alpha/sqrt(2)),

with ``beta = B_{.1} - B_{.0}`` and ``f = g_1 - g_0`` (see :func:`binary_equivalent`).

Algorithm: block coordinate descent over predictors, as a proximal Newton method (the IRLS of
the binary losses, for K margins). At the start of every pass the loss gradient and the per-row
Hessians ``H_i = s w_i (diag(beta^c) - beta^c beta^c')/T`` are computed at the current fit; the
pass minimises the quadratic model of the loss plus the penalty block by block. The intercepts
are profiled out (kept at the minimiser of the model given the coefficients), so a block's
curvature is the Schur complement ``S_j = M_j - C_j M_0^+ C_j`` of its K x K blocks; each block
update is the exact minimiser of its model, a group soft-thresholding with the anisotropic
curvature ``S_j`` (a one-dimensional root search in the eigenbasis of ``S_j``). A pass that
raises the true objective is halved back towards its start; if 30 halvings do not help, it is
undone and replaced by one majorise-minimise pass with Böhning's bound ``s/(2T)``, which cannot
raise it. So the objective never rises. Böhning's bound alone (``mode="mm"``) is valid but
``1/T`` times too pessimistic wherever the loss is nearly linear, i.e. almost everywhere when
the temperature is small, where it stalls far from the tolerance; at moderate temperatures its
passes are much cheaper than the Newton passes (no K x K curvature blocks) and few enough, so
``mode="auto"`` uses proximal Newton only for ``T < 0.1``. The problem runs on the one path driver of
:mod:`cohstats.solvers.cd.path` (loss code ``LOSS_MCOH``, groups of size K): strong rules, active
sets, warm starts, KKT checks and the convergence test (coefficient steps plus a KKT gate) are
shared with the binary problems.
"""

from __future__ import annotations

import math

import numpy as np

from cohstats.losses.scalar import LOSS_MCOH
from cohstats.solvers.cd.design import (
    _check_alpha,
    _check_lambdas,
    _check_pf,
    _check_tol,
    _warn_conv,
    standardize_design,
    xv_of,
)
from cohstats.solvers.cd.path import _lambda_max_std, path_info, run_path
from cohstats.solvers.cd.state import MODE_IRLS, MODE_MM, PathSpec, make_data, make_loss, make_penalty

__all__ = ["cd_multi_path", "multi_lambda_max", "binary_equivalent"]


def _prep(X, y, w, K):
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"X must be a 2-D array; got shape {X.shape}")
    n = X.shape[0]
    yc = np.ascontiguousarray(y).ravel()
    if yc.shape[0] != n:
        raise ValueError(f"y has {yc.shape[0]} entries but X has {n} rows")
    if not np.issubdtype(yc.dtype, np.integer):
        if not np.all(yc == np.round(yc)):
            raise ValueError("y must hold integer class codes 0..K-1")
    yc = yc.astype(np.int64)
    if K is None:
        K = int(yc.max()) + 1
    K = int(K)
    if K < 2 or yc.min() < 0 or yc.max() >= K:
        raise ValueError(f"y must hold class codes in 0..K-1 with K >= 2; got range [{yc.min()}, {yc.max()}] and K={K}")
    if w is None:
        w = np.ones(n)
    w = np.ascontiguousarray(w, dtype=np.float64).ravel()
    if w.shape[0] != n or not np.all(np.isfinite(w)) or np.any(w < 0) or not w.sum() > 0:
        raise ValueError("w (observation weights) must have one finite value >= 0 per row, not all 0")
    if not np.all(np.isfinite(X)):
        raise ValueError("X contains NaN or infinite values")
    return X, yc, w * (n / w.sum()), K


#: temperatures below which the K-class problem is solved by proximal Newton passes by default
NEWTON_BELOW_T = 0.1


def _group_mode(mode, T=1.0):
    """Update mode of the grouped problem: ``"irls"`` (proximal Newton) or ``"mm"`` (Böhning's
    bound); ``None``/``"auto"`` picks proximal Newton for ``T < NEWTON_BELOW_T``, where Böhning's
    bound stalls, and the cheaper majorise-minimise passes otherwise."""
    if mode is None or mode == "auto":
        return MODE_IRLS if float(T) < NEWTON_BELOW_T else MODE_MM
    if mode == "irls":
        return MODE_IRLS
    if mode == "mm":
        return MODE_MM
    raise ValueError(f"mode must be 'auto', 'irls' or 'mm' for the K-class problem; got {mode!r}")


def _check_T(T):
    T = float(T)
    if not (T > 0 and np.isfinite(T)):
        raise ValueError(f"T (rho) must be positive and finite; got {T!r}")
    return T


def _check_margin(margin):
    u = float(margin)
    if not (math.isfinite(u) and u >= 0.0):
        raise ValueError(f"margin must be a finite number >= 0; got {margin!r}")
    return u


def multi_lambda_max(
    X,
    y,
    w,
    T,
    alpha,
    *,
    K=None,
    standardize=True,
    penalty_factor=None,
    intercept=True,
    loss_scale=1.0,
    mode=None,
    margin=1.0,
):
    """Smallest ``lambda`` at which every (penalised) coefficient row is zero:
    ``max_j ||(1/n) sum_i x_ij r_i||_2 / (alpha pf_j)`` at the intercept-only fit (``alpha`` is
    replaced by 1e-3 when smaller, glmnet's rule for the ridge).

    Examples
    --------
    >>> import numpy as np
    >>> from cohstats.solvers.cd.multi import multi_lambda_max
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0], [4.0], [5.0]]); y = np.array([0, 0, 1, 1, 2, 2])
    >>> multi_lambda_max(X, y, None, 1.0, 1.0) > 0
    True
    """
    X, yc, w, K = _prep(X, y, w, K)
    T = _check_T(T)
    alpha = _check_alpha(alpha)
    pf = _check_pf(penalty_factor, X.shape[1])
    Xt, center, scale, excl = standardize_design(X, w, standardize, intercept)
    data = make_data(Xt, np.zeros(X.shape[0]), w, xv_of(Xt, w), excl, intercept, yc=yc)
    loss = make_loss(LOSS_MCOH, T, float(loss_scale), _check_margin(margin))
    return _lambda_max_std(data, loss, make_penalty(pf), _group_mode(mode, T), alpha, G=K)


def cd_multi_path(
    X,
    y,
    w,
    T,
    lambdas,
    alpha,
    *,
    K=None,
    standardize=True,
    tol=1e-7,
    max_iter=10000,
    penalty_factor=None,
    intercept=True,
    loss_scale=1.0,
    warn=True,
    mode=None,
    margin=1.0,
):
    """Grouped elastic-net multicategory coherence-loss fit along a ``lambda`` path.

    Parameters
    ----------
    X : (n, p) array
    y : (n,) integer class codes 0..K-1
    w : (n,) nonnegative observation weights (normalised to mean 1) or None
    T : temperature (``rho``) of the coherence loss
    lambdas : penalties, best decreasing
    alpha : l1 (group-lasso) share in [0, 1]
    K : number of classes (default ``max(y) + 1``)
    standardize, tol, max_iter, penalty_factor, intercept : as :func:`cohstats.solvers.cd.path.cd_path`
    loss_scale : constant ``s`` multiplying the loss (see the module docstring)
    margin : the margin ``u`` of the loss ``T log(1 + sum_{j != c} exp((u + g_j - g_c)/T))``:
        1 for [ZJLY]'s coherence loss; ``margin=0`` with ``T=1`` and ``loss_scale=1`` is the
        multinomial logistic regression of glmnet's ``family="multinomial"``
        (``type.multinomial="grouped"``): the same objective, ``-(1/n) sum w_i log p_{c_i}``
        plus the penalty
    mode : ``"auto"`` (default: ``"irls"`` for ``T < 0.1``, else ``"mm"``), ``"irls"`` (proximal
        Newton) or ``"mm"`` (Böhning's bound), see the module docstring

    Returns
    -------
    intercepts : (nlam, K) array (rows sum to zero)
    coefs : (nlam, p, K) array on the original scale (rows sum to zero)
    info : dict ``n_iter``, ``converged``, ``objective``, ``df`` (predictors in the model),
        ``kkt`` (largest KKT violation, Euclidean norm per predictor), ``null_objective``

    Examples
    --------
    >>> import numpy as np
    >>> from cohstats.solvers.cd.multi import cd_multi_path
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((90, 3)); y = np.digitize(X[:, 0], [-0.5, 0.5])
    >>> b, B, info = cd_multi_path(X, y, None, 1.0, [0.05], 0.5)
    >>> B.shape, bool(abs(B[0].sum(axis=1)).max() < 1e-12)
    ((1, 3, 3), True)
    """
    X, yc, w, K = _prep(X, y, w, K)
    T = _check_T(T)
    gmode = _group_mode(mode, T)
    alpha = _check_alpha(alpha)
    lam = _check_lambdas(lambdas)
    tol, max_iter = _check_tol(tol, max_iter)
    sc = float(loss_scale)
    if not (sc > 0 and np.isfinite(sc)):
        raise ValueError(f"loss_scale must be positive; got {loss_scale!r}")
    n, p = X.shape
    pf = _check_pf(penalty_factor, p)
    Xt, center, scale, excl = standardize_design(X, w, standardize, intercept)
    data = make_data(Xt, np.zeros(n), w, xv_of(Xt, w), excl, intercept, yc=yc)
    spec = PathSpec(lam, alpha, gmode, tol, max_iter, True, np.zeros(0))
    res = run_path(data, make_loss(LOSS_MCOH, T, sc, _check_margin(margin)), make_penalty(pf), spec, K)
    return grouped_output(res, center, scale, intercept, lam, max_iter, warn)


def grouped_output(res, center, scale, intercept, lam, max_iter, warn, name="lambda"):
    """``(intercepts, coefs, info)`` of a grouped path fit from its :func:`run_path` result.

    Coefficients come back as (nlam, p, G) on the original scale (``coef / scale`` per row,
    intercepts for the uncentred predictors ``b - center' coef``); ``df`` counts the
    coordinates in the model; a :class:`cohstats.ConvergenceWarning` is emitted when ``warn``
    and some ``lambda`` did not converge.
    """
    Bs = np.ascontiguousarray(res.coef.transpose(0, 2, 1))  # (nlam, p, G)
    coefs = Bs / scale[None, :, None]
    bs = res.intercept
    intercepts = bs - np.einsum("p,lpk->lk", center, coefs) if intercept else bs.copy()
    info = path_info(res, np.count_nonzero(np.any(Bs != 0, axis=2), axis=1))
    if warn and not res.converged:
        _warn_conv(lam, res.info["converged"], max_iter, name=name, stacklevel=4)
    return intercepts, coefs, info


def binary_equivalent(lam, alpha):
    """``(lambda_b, alpha_b)`` of the binary fit equal to the K = 2 grouped fit (module doc).

    Examples
    --------
    >>> binary_equivalent(1.0, 0.0)
    (0.5, 0.0)
    """
    a = float(alpha)
    s = (1.0 - a) / 2.0 + a / math.sqrt(2.0)
    return float(lam) * s, (a / math.sqrt(2.0)) / s
