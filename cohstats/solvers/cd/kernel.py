"""Kernel-expansion C-learning: [ZDJ] Algorithm 1 along a penalty path.

Minimises, for each ``gamma`` of a decreasing sequence (warm starts),

    (1/n) sum_i w_i phi(y_i f(x_i)) + gamma ((1 - alpha)/2 beta'K beta + alpha ||beta||_1),
    f(x) = b + sum_j beta_j K(x_j, x),

with the coordinate updates of [ZDJ] (the engine of :mod:`cohstats.solvers.cd.path` with the
penalty matrix ``K`` in place of the identity). The points with ``beta_j != 0`` are the support
points. The columns of ``K`` are centred (weighted) internally, which leaves the solution
unchanged (the intercept is unpenalised) and decouples the intercept from the coefficients;
the intercept is reported for the uncentred expansion above.

The same loss codes and update modes as the linear engine apply (IRLS with exact curvature and
step halving for the C-/V-/logistic losses, MM for the huberized hinge, exact coordinate
minimisation for LUM).

Pure kernel ridge (``alpha = 0``) with a loss of finite curvature bound (all but the hinge and
LUM with ``c = inf``) is solved by damped Newton steps with a
direct (n+1)-dimensional linear solve instead of coordinate descent: the Gaussian kernel matrix is
severely ill-conditioned (eigenvalues down to 1e-10 are common), and coordinate descent in
``beta`` then needs thousands of passes to reach the optimum although each Newton step costs
only one O(n^3) solve. Without an l1 part there is no sparsity for coordinate descent to exploit.
This is the quadratic approximation of [ZDJ] Algorithm 1 solved exactly (the inner loop of Algorithm 1
run to convergence) with the step-halving safeguard of; ``solver="cd"`` forces Algorithm 1.
"""

from __future__ import annotations


import numpy as np

from cohstats.losses.scalar import LOSS_MCOH, loss_curv_bound, loss_eval_sum
from cohstats.solvers.cd.design import (
    _check_alpha,
    _check_lambdas,
    _check_loss,
    _check_tol,
    _check_xyw,
    _lambda_max_std,
    _resolve_mode,
    _warn_conv,
    continuation_grid,
    default_mode,
    xv_of,
)
from cohstats.solvers.cd.multi import _check_T, _group_mode, grouped_output, _prep as _prep_multi
from cohstats.solvers.cd.path import path_info, run_path
from cohstats.solvers.cd.scalar import _objective
from cohstats.solvers.cd.solve import _null_fit
from cohstats.solvers.cd.state import Control, PathSpec, Penalty, make_data, make_loss, make_penalty

__all__ = ["cd_kernel_path", "kernel_gamma_max", "cd_kernel_multi_path", "kernel_multi_gamma_max"]


def _prep(K, y, w):
    K = _square(K)
    K, y, w = _check_xyw(K, y, w)
    return K, y, w


def _square(K):
    K = np.asarray(K, dtype=np.float64)
    if K.ndim != 2 or K.shape[0] != K.shape[1]:
        raise ValueError(f"K must be a square (n, n) kernel matrix; got shape {K.shape}")
    if not np.all(np.isfinite(K)):
        raise ValueError("K contains NaN or infinite values")
    if not np.allclose(K, K.T, rtol=1e-10, atol=1e-12 * max(1.0, np.abs(K).max())):
        raise ValueError("K must be symmetric (a kernel matrix of the training points)")
    return np.ascontiguousarray(0.5 * (K + K.T))


def _design(K, w, intercept):
    n = K.shape[0]
    m = (w @ K) / n if intercept else np.zeros(n)
    Xt = np.ascontiguousarray(K - m[:, None])  # row j = centred column j (K symmetric)
    xv = np.einsum("ji,ji,i->j", Xt, Xt, w) / n
    excl = xv <= 0.0
    return Xt, m, xv, excl


def kernel_gamma_max(K, y, w, loss_code, p1, p2, alpha, intercept=True):
    """Smallest ``gamma`` with ``beta = 0``: ``max_j |(1/n) sum_i K_ij g_i^0| / alpha``.

    ``g^0`` is the negative gradient at the intercept-only fit. For ``alpha < 1e-3`` (no finite
    value exists for the pure ridge) the value at ``alpha = 1e-3`` is returned (glmnet's rule).

    Examples
    --------
    >>> import numpy as np
    >>> from cohstats.solvers.cd.kernel import kernel_gamma_max
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]]); y = np.array([-1.0, -1.0, 1.0, 1.0])
    >>> K = np.exp(-(X - X.T) ** 2)
    >>> kernel_gamma_max(K, y, None, 7, 0.0, 0.0, 1.0) > 0
    True
    """
    loss_code, p1, p2 = _check_loss(loss_code, p1, p2)
    K, y, w = _prep(K, y, w)
    alpha = _check_alpha(alpha)
    Xt, m, xv, excl = _design(K, w, intercept)
    data = make_data(Xt, y, w, xv_of(Xt, w), excl, intercept)
    pen = make_penalty(np.ones(K.shape[0]), K)
    return _lambda_max_std(data, make_loss(loss_code, p1, p2), pen, default_mode(loss_code), alpha)


def _newton_ridge(data, loss, K, gam, b, beta, tol, max_iter, obj0):
    """Damped Newton for (1/n) sum w phi(y (b + K beta)) + gam/2 beta'K beta (see module doc)."""
    y, w, intercept = data.y, data.w, data.intercept
    code, p1, p2, Lb = loss.code, loss.p1, loss.p2, loss.Lb
    n = K.shape[0]
    floor_c = 1e-10 * Lb if (np.isfinite(Lb) and Lb > 0) else 1e-10
    W = np.empty(n)
    r = np.empty(n)
    pen = Penalty(np.ones(n), 0.0, gam, True, K)
    f = b + K @ beta
    Kb = K @ beta
    obj = _objective(data, loss, pen, f, beta, Kb)
    gate = 1e-2 * np.sqrt(tol * max(obj0, 1e-10))
    it = 0
    converged = False
    for it in range(1, max_iter + 1):
        loss_eval_sum(code, p1, p2, y, w, f, W, r, floor_c)
        res_beta = r / n - gam * beta  # K times this is minus the beta-gradient
        res_b = r.sum() / n
        kkt = max(np.abs(K @ res_beta).max(), abs(res_b) if intercept else 0.0)
        if kkt <= gate:
            converged = True
            break
        A = np.empty((n + 1, n + 1))
        A[:n, :n] = W[:, None] * K / n
        A[:n, :n][np.diag_indices(n)] += gam
        A[:n, n] = W / n
        A[n, :n] = W @ K / n
        A[n, n] = W.sum() / n + 1e-12
        rhs = np.concatenate([res_beta, [res_b]])
        if not intercept:
            A = A[:n, :n]
            rhs = rhs[:n]
        try:
            step = np.linalg.solve(A, rhs)
        except np.linalg.LinAlgError:
            step = np.linalg.lstsq(A, rhs, rcond=None)[0]
        dbeta = step[:n]
        db = step[n] if intercept else 0.0
        Kd = K @ dbeta
        t = 1.0
        for _ in range(40):
            nb = beta + t * dbeta
            nKb = Kb + t * Kd
            nbb = b + t * db
            nf = nbb + nKb
            nobj = _objective(data, loss, pen, nf, nb, nKb)
            if nobj <= obj:
                break
            t *= 0.5
        else:
            converged = True  # no decrease possible at machine precision
            break
        done = obj - nobj <= 1e-16 * max(abs(obj), 1.0)
        beta, Kb, b, f, obj = nb, nKb, nbb, nf, nobj
        if done:
            converged = True
            break
    return b, beta, it, converged, obj, Kb


def cd_kernel_path(
    K,
    y,
    w,
    loss_code,
    p1,
    p2,
    gammas,
    alpha,
    tol=1e-7,
    max_iter=10000,
    *,
    mode=None,
    intercept=True,
    warn=True,
    exact_kkt=True,
    solver="auto",
):
    """Kernel C-learning (or RLRM / HHSVM / LUM) along a decreasing ``gamma`` path.

    Parameters
    ----------
    K : (n, n) symmetric kernel matrix of the training points
    y : (n,) labels coded -1/+1
    w : (n,) nonnegative observation weights (normalised to mean 1) or None
    loss_code, p1, p2 : loss code of :mod:`cohstats.losses.scalar` and its parameters
    gammas : penalties, best given decreasing (warm starts follow the given order)
    alpha : l1 share ``omega`` of the penalty, in [0, 1]
    tol : convergence threshold relative to the intercept-only objective
    max_iter : maximum coordinate passes per ``gamma``
    mode : None/"auto", "irls", "mm" or "exact" (see :mod:`cohstats.solvers.cd.path`)
    solver : "auto" (damped Newton for ``alpha = 0`` and a loss with finite curvature bound,
        coordinate descent), "cd" ([ZDJ] Algorithm 1 always) or "newton"
    intercept : fit an unpenalised intercept
    exact_kkt : report the exact KKT violation in ``info["kkt"]``

    Returns
    -------
    intercepts : (ngam,) array
    betas : (ngam, n) array of expansion coefficients (support points: nonzero entries)
    info : dict with ``n_iter``, ``converged``, ``objective``, ``df`` (number of support
        points), ``kkt``, ``null_objective``, ``mode``

    Examples
    --------
    >>> import numpy as np
    >>> from cohstats.solvers.cd.kernel import cd_kernel_path, kernel_gamma_max
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((40, 2)); y = np.where(X[:, 0] * X[:, 1] > 0, 1.0, -1.0)
    >>> K = np.exp(-((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    >>> gmax = kernel_gamma_max(K, y, None, 0, 1.0, 1.0, 0.5)
    >>> b, B, info = cd_kernel_path(K, y, None, 0, 1.0, 1.0, gmax * np.array([1.0, 0.01]), 0.5)
    >>> int(info["df"][0]), bool(info["df"][1] > 0)
    (0, True)
    """
    loss_code, p1, p2 = _check_loss(loss_code, p1, p2)
    K, y, w = _prep(K, y, w)
    alpha = _check_alpha(alpha)
    gam = _check_lambdas(gammas)
    tol, max_iter = _check_tol(tol, max_iter)
    m_ = _resolve_mode(mode, loss_code, p1, p2)
    Xt, m, xv, excl = _design(K, w, intercept)
    pf = np.ones(K.shape[0])
    if solver not in ("auto", "cd", "newton"):
        raise ValueError(f"solver must be 'auto', 'cd' or 'newton'; got {solver!r}")
    smooth = bool(np.isfinite(loss_curv_bound(loss_code, p1, p2)))
    if solver == "newton" and (alpha != 0.0 or not smooth):
        raise ValueError("solver='newton' needs alpha=0 and a loss with a finite curvature bound")
    if solver == "newton" or (solver == "auto" and alpha == 0.0 and smooth):
        return _ridge_path(K, y, w, loss_code, p1, p2, gam, tol, max_iter, intercept, warn, m_)
    data = make_data(Xt, y, w, xv, excl, intercept)
    spec = PathSpec(gam, alpha, m_, tol, max_iter, bool(exact_kkt), continuation_grid(loss_code, p1, p2, m_))
    res = run_path(data, make_loss(loss_code, p1, p2), make_penalty(pf, K), spec, 1)
    B = res.coef[:, 0, :]
    intercepts = res.intercept[:, 0] - B @ m
    info = path_info(res, np.count_nonzero(B, axis=1), mode=m_)
    if warn and not res.converged:
        _warn_conv(gam, res.info["converged"], max_iter, name="gamma")
    return intercepts, B, info


def _ridge_path(K, y, w, code, p1, p2, gam, tol, max_iter, intercept, warn, mode):
    n = K.shape[0]
    ng = gam.shape[0]
    pf = np.ones(n)
    # intercept-only start
    Xt, m, xv, excl = _design(K, w, intercept)
    loss = make_loss(code, p1, p2)
    data = make_data(Xt, y, w, xv, excl, intercept)._replace(sw=float(w.sum()))
    pen0 = make_penalty(pf, K)
    ws = _null_fit(data, loss, pen0, Control(mode, 1e-14, 1000), 1)
    b = float(ws.b[0])
    obj0 = _objective(data, loss, pen0, ws.F[0], ws.B[0], ws.PB[0])
    beta = np.zeros(n)
    B = np.zeros((ng, n))
    b0 = np.zeros(ng)
    n_iter = np.zeros(ng, dtype=np.int64)
    conv = np.zeros(ng, dtype=bool)
    objs = np.zeros(ng)
    kkts = np.zeros(ng)
    for k, g in enumerate(gam):
        b, beta, it, ok, obj, Kb = _newton_ridge(data, loss, K, float(g), b, beta, tol, max_iter, obj0)
        B[k], b0[k], n_iter[k], conv[k], objs[k] = beta, b, it, ok, obj
        W = np.empty(n)
        r = np.empty(n)
        loss_eval_sum(code, p1, p2, y, w, b + Kb, W, r, 0.0)
        kkts[k] = max(np.abs(K @ (r / n) - g * Kb).max(), abs(r.sum() / n) if intercept else 0.0)
    info = dict(
        n_iter=n_iter,
        converged=conv,
        objective=objs,
        df=np.count_nonzero(B, axis=1),
        kkt=kkts,
        null_objective=obj0,
        mode=mode,
        solver="newton",
    )
    if warn and not np.all(conv):
        _warn_conv(gam, conv, max_iter, name="gamma")
    return b0, B, info


# =========================================================================== K classes
def _prep_mc(K, y, w, n_classes, T, loss_scale):
    K = _square(K)
    K, yc, w, G = _prep_multi(K, y, w, n_classes)
    T = _check_T(T)
    sc = float(loss_scale)
    if not (sc > 0 and np.isfinite(sc)):
        raise ValueError(f"loss_scale must be positive; got {loss_scale!r}")
    return K, yc, w, G, T, sc


def kernel_multi_gamma_max(K, y, w, T, alpha, *, n_classes=None, intercept=True, loss_scale=1.0, mode=None):
    """Smallest penalty at which every row of the expansion coefficients is zero, for the
    K-class kernel problem of :func:`cd_kernel_multi_path`:
    ``max_j ||(1/n) sum_i K_ij r_i||_2 / alpha`` with ``r_i`` the negative gradient (in the K
    margins) at the intercept-only fit (``alpha`` replaced by 1e-3 when smaller).

    Examples
    --------
    >>> import numpy as np
    >>> from cohstats.solvers.cd.kernel import kernel_multi_gamma_max
    >>> X = np.arange(6.0)[:, None]; y = np.array([0, 0, 1, 1, 2, 2])
    >>> kernel_multi_gamma_max(np.exp(-(X - X.T) ** 2), y, None, 1.0, 1.0) > 0
    True
    """
    K, yc, w, G, T, sc = _prep_mc(K, y, w, n_classes, T, loss_scale)
    alpha = _check_alpha(alpha)
    Xt, m, xv, excl = _design(K, w, intercept)
    data = make_data(Xt, np.zeros(K.shape[0]), w, xv_of(Xt, w), excl, intercept, yc=yc)
    pen = make_penalty(np.ones(K.shape[0]), K)
    return _lambda_max_std(data, make_loss(LOSS_MCOH, T, sc), pen, _group_mode(mode, T), alpha, G=G)


def cd_kernel_multi_path(
    K,
    y,
    w,
    T,
    gammas,
    alpha,
    *,
    n_classes=None,
    tol=1e-7,
    max_iter=10000,
    intercept=True,
    loss_scale=1.0,
    warn=True,
    mode=None,
):
    """Multicategory kernel C-learning along a decreasing penalty path.

    Minimises, for each penalty ``lambda`` of ``gammas`` in turn (warm starts),

        (s/n) sum_i w_i C(g(x_i), c_i)
            + lambda [(1 - alpha)/2 tr(B'KB) + alpha sum_j ||B_j.||_2],
        g_k(x) = b_k + sum_j B_jk K(x_j, x),  k = 0..K-1,

    with ``C`` the multicategory coherence loss of [ZJLY] (eq (6), temperature ``T``), ``s`` a
    constant loss scale (``kappa`` of the C-loss makes K = 2 the binary C-loss, [ZDJ]),
    ``B`` the (n, K) matrix of expansion coefficients and ``B_j.`` its row for training point
    ``j``. The ridge part is the squared RKHS norm ``sum_k ||f_k||^2_H`` of the class functions;
    the group-lasso part selects support points for all classes at once (a point with
    ``B_j. != 0`` is a support point). This is the kernel form of the grouped penalty of
    :func:`cohstats.solvers.cd.multi.cd_multi_path` (identity replaced by ``K``).

    Sum-to-zero: the loss depends on ``g`` only through differences, so it is unchanged by
    ``B_j. -> B_j. + t_j 1``; both penalty terms are minimised over such shifts at centred rows
    (for positive definite ``K``), so solutions satisfy ``sum_k B_jk = 0`` and
    ``sum_k b_k = 0``.

    Binary reduction: for K = 2 the fit equals the binary kernel fit
    (:func:`cd_kernel_path`, loss V with ``rho = T, u = 1`` or loss C with ``s = kappa``) at
    ``binary_equivalent(lambda, alpha)`` with ``beta = B_.1 - B_.0`` (see
    :mod:`cohstats.solvers.cd.multi`).

    Algorithm: block coordinate descent over the rows of ``B``, by proximal-Newton passes (exact
    per-row Hessians of the loss, profiled intercepts, step halving) for ``T < 0.1`` and with
    Böhning's bound otherwise (see :mod:`cohstats.solvers.cd.multi`), on the shared path driver of
    :mod:`cohstats.solvers.cd.path` (strong rules, KKT checks, warm starts); the columns of ``K``
    are centred internally as in
    :func:`cd_kernel_path`. Pure ridge (``alpha = 0``) runs the same coordinate descent, which
    is slow for ill-conditioned kernels; small positive ``alpha`` is faster.

    Parameters
    ----------
    K : (n, n) symmetric kernel matrix of the training points
    y : (n,) integer class codes 0..K-1
    w : (n,) nonnegative observation weights (normalised to mean 1) or None
    T : temperature (``rho``) of the coherence loss
    gammas : penalties, best decreasing
    alpha : group-lasso share in [0, 1]
    n_classes : number of classes (default ``max(y) + 1``)
    tol, max_iter, intercept, warn : as :func:`cd_kernel_path`
    loss_scale : the constant ``s``
    mode : ``"auto"`` (default), ``"irls"`` or ``"mm"``, as
        :func:`cohstats.solvers.cd.multi.cd_multi_path`

    Returns
    -------
    intercepts : (ngam, K) array (rows sum to zero), for the uncentred expansion
    betas : (ngam, n, K) array of expansion coefficients (rows sum to zero)
    info : dict ``n_iter``, ``converged``, ``objective``, ``df`` (support points), ``kkt``,
        ``null_objective``

    Examples
    --------
    >>> import numpy as np
    >>> from cohstats.solvers.cd.kernel import cd_kernel_multi_path, kernel_multi_gamma_max
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((45, 2)); y = np.digitize(X[:, 0], [-0.5, 0.5])
    >>> K = np.exp(-((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    >>> gmax = kernel_multi_gamma_max(K, y, None, 1.0, 0.5)
    >>> b, B, info = cd_kernel_multi_path(K, y, None, 1.0, gmax * np.array([1.0, 0.05]), 0.5)
    >>> B.shape, int(info["df"][0]), bool(abs(B[1].sum(axis=1)).max() < 1e-12)
    ((2, 45, 3), 0, True)
    """
    K, yc, w, G, T, sc = _prep_mc(K, y, w, n_classes, T, loss_scale)
    gmode = _group_mode(mode, T)
    alpha = _check_alpha(alpha)
    gam = _check_lambdas(gammas)
    tol, max_iter = _check_tol(tol, max_iter)
    n = K.shape[0]
    Xt, m, xv, excl = _design(K, w, intercept)
    data = make_data(Xt, np.zeros(n), yc=yc, w=w, xv=xv, excl=excl, intercept=intercept)
    spec = PathSpec(gam, alpha, gmode, tol, max_iter, True, np.zeros(0))
    res = run_path(data, make_loss(LOSS_MCOH, T, sc), make_penalty(np.ones(n), K), spec, G)
    # expansion coefficients are reported as fitted (no scale); intercepts for the uncentred K
    return grouped_output(res, m, np.ones(n), True, gam, max_iter, warn)
