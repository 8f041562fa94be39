"""Multiclass C-learning: the multicategory coherence loss of [ZJLY] (SPEC.md 5.1) with a linear
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

Binary reduction (SPEC 5.3.1). With K = 2, ``g = (-f/2, f/2)`` and the second class coded
``y = +1``, the loss is ``s V_{T,1}(y f)`` and ``B_j = (-beta_j/2, beta_j/2)``, so the penalty is
``lambda ((1-alpha)/4 beta_j^2 + alpha/sqrt(2) |beta_j|)``. Hence the K = 2 fit at
``(lambda, alpha)`` equals the binary fit (:func:`cohstats.solvers.cd.cd_path`, loss V with
``rho = T, u = 1`` (s = 1) or loss C (s = kappa)) at

    lambda_b = lambda ((1 - alpha)/2 + alpha/sqrt(2)),
    alpha_b  = (alpha/sqrt(2)) / ((1 - alpha)/2 + alpha/sqrt(2)),

with ``beta = B_{.1} - B_{.0}`` and ``f = g_1 - g_0`` (see :func:`binary_equivalent`).

Algorithm: block coordinate descent over predictors with the majorisation of Böhning (the
Hessian of ``C`` in ``g`` is ``(diag(beta^c) - beta^c beta^c')/T <= I/(2T)``): before every pass
the working residual is refreshed from the exact gradient, each block update is the exact
minimiser of the majorised objective (a group soft-thresholding), so the objective decreases
monotonically. Strong rules, active sets, warm starts and the convergence test (coefficient steps
plus a KKT gate) are those of :mod:`cohstats.solvers.cd`.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from cohstats.losses.multiclass import mc_coh_beta, mc_coh_loss
from cohstats.solvers.cd import (_check_alpha, _check_lambdas, _check_pf, _check_tol, _warn_conv,
                                 standardize_design)

__all__ = ["cd_multi_path", "multi_lambda_max", "binary_equivalent"]


@njit(cache=True, nogil=True)
def _mobjective(G, yc, w, T, sc, B, pf, l1, l2):
    n, K = G.shape
    s = 0.0
    for i in range(n):
        if w[i] > 0.0:
            s += w[i] * mc_coh_loss(G[i], yc[i], T)
    s *= sc / n
    pen = 0.0
    for j in range(B.shape[0]):
        nn = 0.0
        for k in range(K):
            nn += B[j, k] * B[j, k]
        if nn > 0.0:
            pen += pf[j] * (0.5 * l2 * nn + l1 * math.sqrt(nn))
    return s + pen


@njit(cache=True, nogil=True)
def _mresid(G, yc, w, T, sc, R, tmp):
    """R_i = -s w_i dC/dg (negative gradient) = s w_i (onehot(c_i) - beta^{c_i})."""
    n, K = G.shape
    for i in range(n):
        mc_coh_beta(G[i], yc[i], T, tmp)
        for k in range(K):
            R[i, k] = -sc * w[i] * tmp[k]
        R[i, yc[i]] += sc * w[i]


@njit(cache=True, nogil=True)
def _mgrad(Xt, R, j, out):
    n, K = R.shape
    for k in range(K):
        out[k] = 0.0
    xj = Xt[j]
    for i in range(n):
        xi = xj[i]
        if xi != 0.0:
            for k in range(K):
                out[k] += xi * R[i, k]
    for k in range(K):
        out[k] /= n


@njit(cache=True, nogil=True)
def _msolve(Xt, yc, w, T, sc, Lb, pf, l1, l2, B, b, G, inS, intercept, thr, max_pass, xv, R, E,
            gnorm, idxS, idxA, v, tmp):
    p, n = Xt.shape
    K = G.shape[1]
    mS = 0
    for j in range(p):
        if inS[j]:
            idxS[mS] = j
            mS += 1
    mA = 0
    passes = 0
    full = True
    sw = 0.0
    for i in range(n):
        sw += w[i]
    kgate = math.sqrt(thr)
    while passes < max_pass:
        if full:
            idx = idxS
            m = mS
        else:
            idx = idxA
            m = mA
        _mresid(G, yc, w, T, sc, R, tmp)
        for i in range(n):
            for k in range(K):
                E[i, k] = R[i, k]
        dmax = 0.0
        kk = 0.0
        for q in range(m):
            j = idx[q]
            _mgrad(Xt, E, j, v)
            H = Lb * xv[j]
            # KKT residual before the update (for the gate) and strong-rule statistic
            rn = 0.0
            bn = 0.0
            for k in range(K):
                bn += B[j, k] * B[j, k]
            bn = math.sqrt(bn)
            for k in range(K):
                gk = v[k] - l2 * pf[j] * B[j, k]
                if bn > 0.0:
                    gk -= l1 * pf[j] * B[j, k] / bn
                rn += gk * gk
            rn = math.sqrt(rn)
            gg = 0.0
            for k in range(K):
                gg += v[k] * v[k]
            gnorm[j] = math.sqrt(gg)
            viol = rn if bn > 0.0 else max(gnorm[j] - l1 * pf[j], 0.0)
            if viol > kk:
                kk = viol
            # group soft-thresholding of the majorised problem
            nv = 0.0
            for k in range(K):
                v[k] += H * B[j, k]
                nv += v[k] * v[k]
            nv = math.sqrt(nv)
            den = H + l2 * pf[j]
            fac = 0.0
            if nv > l1 * pf[j] and den > 0.0:
                fac = (1.0 - l1 * pf[j] / nv) / den
            ch = 0.0
            for k in range(K):
                nb = fac * v[k]
                d = nb - B[j, k]
                tmp[k] = d
                ch += d * d
                B[j, k] = nb
            if ch > 0.0:
                xj = Xt[j]
                for i in range(n):
                    xi = xj[i]
                    if xi != 0.0:
                        c = Lb * w[i] * xi
                        for k in range(K):
                            E[i, k] -= c * tmp[k]
                            G[i, k] += xi * tmp[k]
                if H * ch > dmax:
                    dmax = H * ch
        if intercept:
            ch = 0.0
            for k in range(K):
                se = 0.0
                for i in range(n):
                    se += E[i, k]
                tmp[k] = se / (Lb * sw)
            mean = 0.0
            for k in range(K):
                mean += tmp[k]
            mean /= K
            for k in range(K):
                tmp[k] -= mean
                b[k] += tmp[k]
                ch += tmp[k] * tmp[k]
            for i in range(n):
                for k in range(K):
                    G[i, k] += tmp[k]
                    E[i, k] -= Lb * w[i] * tmp[k]
            if Lb * (sw / n) * ch > dmax:
                dmax = Lb * (sw / n) * ch
        passes += 1
        if full:
            if dmax < thr and kk <= kgate:
                return passes, True
            mA = 0
            for q in range(mS):
                j = idxS[q]
                nz = False
                for k in range(K):
                    if B[j, k] != 0.0:
                        nz = True
                if nz or pf[j] == 0.0:
                    idxA[mA] = j
                    mA += 1
            full = False
        elif dmax < thr:
            full = True
    return passes, False


@njit(cache=True, nogil=True)
def _mpath(Xt, yc, w, K, T, sc, lambdas, alpha, pf, excl, intercept, tol, max_iter, xv):
    p, n = Xt.shape
    nlam = lambdas.shape[0]
    Lb = sc / (2.0 * T)
    B = np.zeros((p, K))
    b = np.zeros(K)
    G = np.zeros((n, K))
    R = np.zeros((n, K))
    E = np.zeros((n, K))
    gnorm = np.zeros(p)
    idxS = np.empty(p, dtype=np.int64)
    idxA = np.empty(p, dtype=np.int64)
    v = np.empty(K)
    tmp = np.empty(K)
    inS = np.zeros(p, dtype=np.bool_)
    ever = np.zeros(p, dtype=np.bool_)
    for j in range(p):
        inS[j] = pf[j] == 0.0 and not excl[j]
        ever[j] = inS[j]
    # null fit (intercepts and unpenalised predictors)
    _msolve(Xt, yc, w, T, sc, Lb, pf, 0.0, 0.0, B, b, G, inS, intercept, 1e-16, 100000, xv, R,
            E, gnorm, idxS, idxA, v, tmp)
    obj0 = _mobjective(G, yc, w, T, sc, B, pf, 0.0, 0.0)
    thr = tol * max(obj0, 1e-10)
    _mresid(G, yc, w, T, sc, R, tmp)
    for j in range(p):
        _mgrad(Xt, R, j, v)
        s = 0.0
        for k in range(K):
            s += v[k] * v[k]
        gnorm[j] = math.sqrt(s)
    Bs = np.zeros((nlam, p, K))
    bs = np.zeros((nlam, K))
    n_iter = np.zeros(nlam, dtype=np.int64)
    conv = np.zeros(nlam, dtype=np.bool_)
    objs = np.zeros(nlam)
    kkts = np.zeros(nlam)
    lam_prev = -1.0
    for q in range(nlam):
        lam = lambdas[q]
        l1 = lam * alpha
        l2 = lam * (1.0 - alpha)
        if lam_prev < 0.0:
            lam_prev = lam
        cut = alpha * (2.0 * lam - lam_prev)
        for j in range(p):
            inS[j] = (not excl[j]) and (ever[j] or gnorm[j] >= cut * pf[j])
        total = 0
        ok = False
        while True:
            passes, ok = _msolve(Xt, yc, w, T, sc, Lb, pf, l1, l2, B, b, G, inS, intercept, thr,
                                 max_iter - total, xv, R, E, gnorm, idxS, idxA, v, tmp)
            total += passes
            _mresid(G, yc, w, T, sc, R, tmp)
            added = 0
            for j in range(p):
                if not inS[j] and not excl[j]:
                    _mgrad(Xt, R, j, v)
                    s = 0.0
                    for k in range(K):
                        s += v[k] * v[k]
                    gnorm[j] = math.sqrt(s)
                    if gnorm[j] > l1 * pf[j] * (1.0 + 1e-12) + 1e-300:
                        inS[j] = True
                        added += 1
            if added == 0 or total >= max_iter:
                break
        # exact KKT violation over all predictors
        kk = 0.0
        for j in range(p):
            if excl[j]:
                continue
            _mgrad(Xt, R, j, v)
            bn = 0.0
            for k in range(K):
                bn += B[j, k] * B[j, k]
            bn = math.sqrt(bn)
            s = 0.0
            gg = 0.0
            for k in range(K):
                gk = v[k] - l2 * pf[j] * B[j, k]
                gg += v[k] * v[k]
                if bn > 0.0:
                    gk -= l1 * pf[j] * B[j, k] / bn
                s += gk * gk
            gnorm[j] = math.sqrt(gg)
            viol = math.sqrt(s) if bn > 0.0 else max(math.sqrt(gg) - l1 * pf[j], 0.0)
            if viol > kk:
                kk = viol
            if bn > 0.0:
                ever[j] = True
        Bs[q] = B
        bs[q] = b
        n_iter[q] = total
        conv[q] = ok
        objs[q] = _mobjective(G, yc, w, T, sc, B, pf, l1, l2)
        kkts[q] = kk
        lam_prev = lam
    return bs, Bs, n_iter, conv, objs, kkts, obj0


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
        raise ValueError(f"y must hold class codes in 0..K-1 with K >= 2; got range "
                         f"[{yc.min()}, {yc.max()}] and K={K}")
    if w is None:
        w = np.ones(n)
    w = np.ascontiguousarray(w, dtype=np.float64).ravel()
    if w.shape[0] != n or not np.all(np.isfinite(w)) or np.any(w < 0) or not w.sum() > 0:
        raise ValueError("w (observation weights) must have one finite value >= 0 per row, not all 0")
    if not np.all(np.isfinite(X)):
        raise ValueError("X contains NaN or infinite values")
    return X, yc, w * (n / w.sum()), K


def _check_T(T):
    T = float(T)
    if not (T > 0 and np.isfinite(T)):
        raise ValueError(f"T (rho) must be positive and finite; got {T!r}")
    return T


def multi_lambda_max(X, y, w, T, alpha, *, K=None, standardize=True, penalty_factor=None,
                     intercept=True, loss_scale=1.0):
    """Smallest ``lambda`` at which every (penalised) coefficient row is zero:
    ``max_j ||(1/n) sum_i x_ij r_i||_2 / (alpha pf_j)`` at the intercept-only fit (``alpha`` is
    replaced by 1e-3 when smaller, glmnet's rule for the ridge).

    Examples
    --------
    >>> import numpy as np
    >>> from cohstats.solvers.cd_multi import multi_lambda_max
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0], [4.0], [5.0]]); y = np.array([0, 0, 1, 1, 2, 2])
    >>> multi_lambda_max(X, y, None, 1.0, 1.0) > 0
    True
    """
    X, yc, w, K = _prep(X, y, w, K)
    T = _check_T(T)
    alpha = _check_alpha(alpha)
    pf = _check_pf(penalty_factor, X.shape[1])
    Xt, center, scale, excl = standardize_design(X, w, standardize, intercept)
    xv = np.einsum("ji,ji,i->j", Xt, Xt, w) / X.shape[0]
    return _multi_lmax_from_null(Xt, yc, w, K, T, float(loss_scale), alpha, pf, excl, intercept, xv)


def cd_multi_path(X, y, w, T, lambdas, alpha, *, K=None, standardize=True, tol=1e-7,
                  max_iter=10000, penalty_factor=None, intercept=True, loss_scale=1.0, warn=True):
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
    standardize, tol, max_iter, penalty_factor, intercept : as :func:`cohstats.solvers.cd.cd_path`
    loss_scale : constant ``s`` multiplying the loss (see the module docstring)

    Returns
    -------
    intercepts : (nlam, K) array (rows sum to zero)
    coefs : (nlam, p, K) array on the original scale (rows sum to zero)
    info : dict ``n_iter``, ``converged``, ``objective``, ``df`` (predictors in the model),
        ``kkt`` (largest KKT violation, Euclidean norm per predictor), ``null_objective``

    Examples
    --------
    >>> import numpy as np
    >>> from cohstats.solvers.cd_multi import cd_multi_path
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((90, 3)); y = np.digitize(X[:, 0], [-0.5, 0.5])
    >>> b, B, info = cd_multi_path(X, y, None, 1.0, [0.05], 0.5)
    >>> B.shape, bool(abs(B[0].sum(axis=1)).max() < 1e-12)
    ((1, 3, 3), True)
    """
    X, yc, w, K = _prep(X, y, w, K)
    T = _check_T(T)
    alpha = _check_alpha(alpha)
    lam = _check_lambdas(lambdas)
    tol, max_iter = _check_tol(tol, max_iter)
    sc = float(loss_scale)
    if not (sc > 0 and np.isfinite(sc)):
        raise ValueError(f"loss_scale must be positive; got {loss_scale!r}")
    n, p = X.shape
    pf = _check_pf(penalty_factor, p)
    Xt, center, scale, excl = standardize_design(X, w, standardize, intercept)
    xv = np.einsum("ji,ji,i->j", Xt, Xt, w) / n
    bs, Bs, n_iter, conv, objs, kkts, obj0 = _mpath(Xt, yc, w, K, T, sc, lam, alpha, pf, excl,
                                                    bool(intercept), tol, max_iter, xv)
    coefs = Bs / scale[None, :, None]
    intercepts = bs - np.einsum("p,lpk->lk", center, coefs) if intercept else bs.copy()
    df = np.count_nonzero(np.any(Bs != 0, axis=2), axis=1)
    info = dict(n_iter=n_iter, converged=conv, objective=objs, df=df, kkt=kkts,
                null_objective=obj0)
    if warn and not np.all(conv):
        _warn_conv(lam, conv, max_iter)
    return intercepts, coefs, info


@njit(cache=True, nogil=True)
def _null_grad(Xt, yc, w, K, T, sc, pf, excl, intercept, xv):
    p, n = Xt.shape
    B = np.zeros((p, K))
    b = np.zeros(K)
    G = np.zeros((n, K))
    R = np.zeros((n, K))
    E = np.zeros((n, K))
    gnorm = np.zeros(p)
    idxS = np.empty(p, dtype=np.int64)
    idxA = np.empty(p, dtype=np.int64)
    v = np.empty(K)
    tmp = np.empty(K)
    inS = np.zeros(p, dtype=np.bool_)
    for j in range(p):
        inS[j] = pf[j] == 0.0 and not excl[j]
    Lb = sc / (2.0 * T)
    _msolve(Xt, yc, w, T, sc, Lb, pf, 0.0, 0.0, B, b, G, inS, intercept, 1e-16, 100000, xv, R, E,
            gnorm, idxS, idxA, v, tmp)
    _mresid(G, yc, w, T, sc, R, tmp)
    for j in range(p):
        _mgrad(Xt, R, j, v)
        s = 0.0
        for k in range(K):
            s += v[k] * v[k]
        gnorm[j] = math.sqrt(s)
    return gnorm


def _multi_lmax_from_null(Xt, yc, w, K, T, sc, alpha, pf, excl, intercept, xv):
    g = _null_grad(Xt, yc, w, K, T, sc, pf, excl, bool(intercept), xv)
    m = (pf > 0) & ~excl
    if not np.any(m):
        return math.inf
    val = float(np.max(g[m] / (max(alpha, 1e-3) * pf[m])))
    return val if val > 0 else 1e-10


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
