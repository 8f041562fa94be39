"""Dual coordinate ascent for the ridge-penalised hard LUM (linear expansion, finite large ``c``).

The problem, for each ``lambda`` of a decreasing sequence (warm starts),

``min_{b, beta}  P(b, beta) = (1/n) sum_i w_i V(z_i) + (lambda/2) sum_j pf_j beta_j^2``,
``z_i = y_i (o_i + b + x_i'beta)``,

with the LUM loss ``V = V_{a,c}`` of [LZW], is near the hinge limit (``c >= 1000``) a smoothed
SVM: ``V`` is linear left of its connection point ``u_e = c/(1+c)`` and curved only on a window
of width about ``1/(1+c)`` right of it. Primal coordinate or Newton steps see that window as a
near-kink and zigzag or take one short step per observation crossing it. Its Fenchel dual is
instead a smooth box-constrained problem on which single-coordinate ascent is the method of
choice for linear SVMs (Hsieh, Chang, Lin, Keerthi and Sundararajan, *A dual coordinate descent
method for large-scale linear SVM*, ICML 2008):

``max_{0 <= alpha_i <= w_i}  D(alpha) = (1/n) sum_i w_i psi(alpha_i / w_i) - (lambda/2) sum_j pf_j beta_j^2``
``subject to  sum_i alpha_i y_i = 0``,  ``beta_j = (1/(lambda n pf_j)) sum_i alpha_i y_i x_ij``,

(plus ``- (1/n) sum_i alpha_i y_i o_i`` with known offsets ``o_i``, R's ``offset()``: the
offset enters the dual as a linear term, and a coordinate step only through the margin ``z_i``),
where ``psi(t) = -V^*(-t) = ((1+a) t^{a/(a+1)} + (c-a) t)/(1+c)`` (``V^*`` the convex conjugate;
``psi' (t)`` is the margin at which the loss has slope ``-t``), and at the optimum
``alpha_i = -w_i V'(z_i)``. The equality constraint (the unpenalised intercept) is handled by
the augmented Lagrangian (method of multipliers; equivalently the proximal-point method on the
intercept): the dual is maximised with the term ``- mu S/n - S^2/(2 rho n^2)``, ``S = sum_i
alpha_i y_i``, so that the primal intercept is ``b = mu + S/(rho n)`` and moves with every
coordinate step, and the multiplier is updated ``mu <- b`` after each pass.

One coordinate step maximises the augmented dual exactly in ``alpha_i``: with ``q_i =
sum_j x_ij^2/(lambda n pf_j) + 1/(rho n)`` the new margin ``m`` solves the monotone equation
``m = z_i + q_i (w_i (-V'(m)) - alpha_i)``; it is ``z_i + q_i (w_i - alpha_i)`` when that lies
left of ``u_e``, and otherwise the root of a concave increasing function, reached by Newton's
method from the left without safeguards. A step costs O(p). The augmented dual never decreases
along the steps of a pass (each is an exact coordinate maximiser); the primal objective of the
iterates is not monotone, and convergence is judged on the exact KKT residual of the primal
point ``(b, beta)``.

Shrinking (as in the paper above): an observation at a bound whose margin lies on that bound's
side of the curved window (``alpha_i = w_i`` and ``z_i <= u_e``, or ``alpha_i`` and ``-w_i
V'(z_i)`` both negligible) is a fixed point of its coordinate step and is left out of the passes
until the next full check, which recomputes every margin and rebuilds the set; the set of the
last check, converged or not, is where the next ``lambda`` starts (along a path most
observations stay at a bound, so a pass visits only those near the curved window). Convergence
is only declared at a full check: the exact KKT residual of the primal point, coordinates and
intercept, at most ``sqrt(tol * obj0)`` (``obj0`` the intercept-only objective) -- the in-pass
gate of the primal coordinate-descent engine. A full check costs one product with ``X``; one
is made after the first pass of each ``lambda`` (along a path one pass often suffices) and then
once the passes since the last check have visited a quarter of the observations.

Warm starts keep ``alpha`` from one ``lambda`` to the next (the box ``[0, w_i]`` does not depend
on ``lambda``) and rescale ``beta``. The smallest penalties (``C = 1/(n lambda)`` of order one and
more) converge slowly at tight tolerances, as dual coordinate ascent does for linear SVMs at
large ``C``; such a ``lambda`` is reported not converged when it reaches ``max_iter`` passes.

Scope: the pure ridge with positive penalty factors, finite ``a`` and finite ``c``; the primal
engine (:mod:`cohstats.solvers.cd.path`) solves every other case.
"""

from __future__ import annotations

import math

import numpy as np
from cohstats._numba_cache import njit

from cohstats.losses.scalar import LOSS_LUM, lum_d1, lum_value
from cohstats.solvers.cd.scalar import _dot, _solve_1d

#: ALM weight of the intercept: rho = RHO_FACTOR * lambda
RHO_FACTOR = 0.1
#: after a lambda's first pass, a full check once the passes visited 1/CHECK_SHARE of the observations
CHECK_SHARE = 4
#: alpha_i (and -w_i V'(z_i)) below this share of w_i count as zero for shrinking
_TINY = 1e-20


@njit(cache=True, nogil=True)
def lum_psi(t, a, c):
    """``psi(t) = -V^*(-t)`` of the LUM loss for ``t`` in [0, 1] (finite ``a`` and ``c``)."""
    if t <= 0.0:
        return 0.0
    return ((1.0 + a) * math.exp((a / (a + 1.0)) * math.log(t)) + (c - a) * t) / (1.0 + c)


@njit(cache=True, nogil=True)
def _coord(z, q, wi, a0, a, c, ue):
    """Exact maximiser of the augmented dual in one coordinate: the new ``alpha_i``.

    ``z`` is the current margin, ``q`` the margin change per unit of ``alpha_i``, ``wi`` the
    weight (upper bound), ``a0`` the current value. The new margin ``m`` solves
    ``F(m) = m - (z - q a0) + q wi V'(m) = 0``; ``F`` is increasing, and concave right of
    ``u_e``, so Newton's method from a point with ``F <= 0`` increases monotonically to the root.
    ``V'`` and ``V''`` share one ``log1p`` and one ``exp`` per iteration: with ``t = ((1+c) m -
    c)/a``, ``-V'(m) = (1+t)^-(a+1)`` and ``V''(m) = ((a+1)(1+c)/a) (1+t)^-(a+2)`` ([LZW]).
    When ``z - q a0`` lies left of ``u_e`` (the usual case inside the window) Newton's method runs
    on the logarithm of the equation instead, from ``u_e``: about 3 iterations against 5-6 on the
    path of ``benchmarks/bench_lum.py``, the same root."""
    mL = z + q * (wi - a0)
    if mL <= ue:
        return wi
    base = z - q * a0
    k1 = (1.0 + c) / a  # t = k1 (m - ue)
    k2 = (a + 1.0) * k1  # V''(m) = k2 (1 + t)^-(a + 2)
    qw = q * wi
    if base < ue:
        # the root solves G(m) = log(qw) - (a+1) log1p(t) - log(m - base) = 0; G is convex and
        # decreasing on m > base, positive at ue (mL > ue), so Newton's iterates from ue increase
        # monotonically to the root; G is nearly linear there (the exponential is taken out).
        lq = math.log(qw)
        m = ue
        for _ in range(200):
            t = k1 * (m - ue)
            dm = m - base
            G = lq - (a + 1.0) * math.log1p(t) - math.log(dm)
            if G <= 0.0:
                break
            mn = m + G / (k2 / (1.0 + t) + 1.0 / dm)
            if not (mn > m) or mn - m <= 1e-15 * (1.0 + abs(mn)):
                m = mn
                break
            m = mn
        v = wi * math.exp(-(a + 1.0) * math.log1p(k1 * (m - ue)))
        return v if v < wi else wi
    m = base
    e = 1.0
    for _ in range(200):
        t = k1 * (m - ue)
        e = math.exp(-(a + 1.0) * math.log1p(t))  # -V'(m)
        F = m - base - qw * e
        if F >= 0.0:
            break
        mn = m - F / (1.0 + qw * k2 * e / (1.0 + t))
        if not (mn > m):
            break
        if mn - m <= 1e-15 * (1.0 + abs(mn)):
            t = k1 * (mn - ue)
            e = math.exp(-(a + 1.0) * math.log1p(t))
            break
        m = mn
    v = wi * e
    if v > wi:
        v = wi
    return v


@njit(cache=True, nogil=True, fastmath=True)
def _axpy(t, x, v):
    for j in range(x.shape[0]):
        v[j] += t * x[j]


@njit(cache=True, nogil=True)
def _check(X, y, off, w, a, c, lam, b, beta, alpha, z, g, act):
    """Margins ``z`` at ``(b, beta)`` (offsets ``off``), the primal objective, the exact KKT residual of ``P``
    (largest over the coordinates and the intercept) and the working set of these margins.

    The gradient in ``beta`` is ``(1/n) sum_i y_i x_i (alpha_i - alpha_hat_i)`` with
    ``alpha_hat_i = -w_i V'(z_i)``, because ``lambda beta = (1/n) sum_i alpha_i y_i x_i``; only
    observations with ``alpha_i != alpha_hat_i`` enter the sum. Right of ``u_e = c/(1+c)`` the
    loss and its slope share one ``log1p`` and one ``exp``: with ``t = ((1+c) z - c)/a``,
    ``-V'(z) = (1+t)^-(a+1)`` and ``V(z) = (1+t) (-V'(z))/(1+c)`` ([LZW]). ``act[:nact]``
    receives the observations whose coordinate step is not a fixed point (``alpha_i = w_i`` with
    ``z_i <= u_e``, or ``alpha_i`` and the loss slope both negligible, are left out; all
    observations of positive weight when none is left). Returns ``(objective, kkt, nact)``."""
    n, p = X.shape
    ue = c / (1.0 + c)
    k1 = (1.0 + c) / a
    loss = 0.0
    gb = 0.0
    nact = 0
    g[:] = 0.0
    for i in range(n):
        zi = y[i] * (off[i] + b + _dot(X[i], beta))
        z[i] = zi
        wi = w[i]
        if wi > 0.0:
            ai = alpha[i]
            if zi < ue:
                loss += wi * (1.0 - zi)
                ah = wi
                if ai != wi:
                    act[nact] = i
                    nact += 1
            else:
                t = k1 * (zi - ue)
                e = math.exp(-(a + 1.0) * math.log1p(t))
                loss += wi * (1.0 + t) * e / (1.0 + c)
                ah = wi * e
                if not (ai <= _TINY * wi and e <= _TINY):
                    act[nact] = i
                    nact += 1
            gb += y[i] * ah
            ri = ai - ah
            if ri != 0.0:
                _axpy(ri * y[i], X[i], g)
    kk = abs(gb) / n
    pen = 0.0
    for j in range(p):
        pen += beta[j] * beta[j]
        v = abs(g[j]) / n
        if v > kk:
            kk = v
    if nact == 0:
        for i in range(n):
            if w[i] > 0.0:
                act[nact] = i
                nact += 1
    return loss / n + 0.5 * lam * pen, kk, nact


@njit(cache=True, nogil=True)
def _aug_dual(y, off, w, a, c, alpha, lam, beta, mu, S, rho):
    """The augmented dual ``(1/n) sum (w_i psi(alpha_i/w_i) - alpha_i y_i o_i) -
    (lambda/2)||beta||^2 - mu S/n - S^2/(2 rho n^2)`` (coordinates prescaled so that every
    penalty factor is 1)."""
    n = w.shape[0]
    s = 0.0
    for i in range(n):
        if w[i] > 0.0:
            s += w[i] * lum_psi(alpha[i] / w[i], a, c) - alpha[i] * y[i] * off[i]
    pen = 0.0
    for j in range(beta.shape[0]):
        pen += beta[j] * beta[j]
    return s / n - 0.5 * lam * pen - mu * S / n - S * S / (2.0 * rho * n * n)


@njit(cache=True, nogil=True)
def _shuffle(act, nact, seed):
    """Shuffle ``act[:nact]`` in place (Fisher-Yates on a fixed linear congruential stream:
    deterministic); returns the next state of the stream."""
    for k in range(nact - 1, 0, -1):
        seed = (seed * 1103515245 + 12345) % 2147483648
        jj = seed % (k + 1)
        tmp = act[k]
        act[k] = act[jj]
        act[jj] = tmp
    return seed


@njit(cache=True, nogil=True)
def _working_set(w, alpha, z, a, c, act):
    """Rebuild the working set ``act[:nact]`` at a full check (margins ``z`` exact): leave out
    the observations whose coordinate step is a fixed point (``alpha_i = w_i`` with ``z_i`` left
    of the curved window, or ``alpha_i`` and the loss slope both negligible); all observations
    of positive weight when none is left. Returns ``nact``."""
    n = w.shape[0]
    ue = c / (1.0 + c)
    nact = 0
    for i in range(n):
        wi = w[i]
        if wi <= 0.0:
            continue
        zi = z[i]
        if alpha[i] == wi and zi <= ue:
            continue
        if alpha[i] <= _TINY * wi and zi > ue and -lum_d1(zi, a, c) <= _TINY:
            continue
        act[nact] = i
        nact += 1
    if nact == 0:
        for i in range(n):
            if w[i] > 0.0:
                act[nact] = i
                nact += 1
    return nact


@njit(cache=True, nogil=True)
def _solve_lambda(X, y, off, w, xsq, a, c, lam, rho, thr, max_pass, alpha, beta, st, z, g, act, trace):
    """Dual coordinate ascent with the augmented Lagrangian for one ``lambda``.

    ``st = [b, S, m]`` (primal intercept, ``sum_i alpha_i y_i``, size of the working set held in
    ``act[:m]``) is updated in place, as are
    ``alpha`` and ``beta`` (which must satisfy ``lambda beta = (1/n) sum_i alpha_i y_i x_i`` on
    entry). ``trace`` (k, 3) receives, per pass while it has rows, the augmented dual before and
    after the pass (same multiplier) and the primal objective at the last full check.
    Returns ``(passes, converged, objective, kkt)``."""
    n, p = X.shape
    ue = c / (1.0 + c)
    inv_rn = 1.0 / (rho * n)
    inv_ln = 1.0 / (lam * n)
    b = st[0]
    S = st[1]
    mu = b - S * inv_rn
    nact = int(st[2])  # the working set of the previous lambda's last check (all observations at first)
    passes = 0
    conv = False
    obj = math.nan
    kk = math.inf
    seed = 12345
    ntr = 0
    npos = 0
    for i in range(n):
        if w[i] > 0.0:
            npos += 1
    work = 0  # coordinate steps since the last full check
    while passes < max_pass:
        passes += 1
        if ntr < trace.shape[0]:
            trace[ntr, 0] = _aug_dual(y, off, w, a, c, alpha, lam, beta, mu, S, rho)
        seed = _shuffle(act, nact, seed)
        for k in range(nact):
            i = act[k]
            xi = X[i]
            zi = y[i] * (off[i] + b + _dot(xi, beta))
            q = xsq[i] * inv_ln + inv_rn
            a0 = alpha[i]
            a1 = _coord(zi, q, w[i], a0, a, c, ue)
            d = a1 - a0
            if d != 0.0:
                alpha[i] = a1
                _axpy(d * y[i] * inv_ln, xi, beta)
                S += d * y[i]
                b = mu + S * inv_rn
        if ntr < trace.shape[0]:
            trace[ntr, 1] = _aug_dual(y, off, w, a, c, alpha, lam, beta, mu, S, rho)
        # multiplier update: mu <- b, so that b = mu + S/(rho n) moves on by S/(rho n)
        mu = b
        b = mu + S * inv_rn
        work += nact
        if passes == 1 or CHECK_SHARE * work >= npos or passes >= max_pass:
            # a full check after the first pass of each lambda and then once the passes have
            # visited a share of the observations: exact margins, objective, KKT residual and the
            # working set of these margins (which the next lambda starts from)
            work = 0
            obj, kk, nact = _check(X, y, off, w, a, c, lam, b, beta, alpha, z, g, act)
            if kk <= thr:
                conv = True
                if ntr < trace.shape[0]:
                    trace[ntr, 2] = obj
                    ntr += 1
                break
        if ntr < trace.shape[0]:
            trace[ntr, 2] = obj
            ntr += 1
    st[0] = b
    st[1] = S
    st[2] = nact
    return passes, conv, obj, kk


@njit(cache=True, nogil=True)
def _dual_path(X, y, off, w, a, c, lambdas, rho_f, tol, max_pass, trace_len):
    n, p = X.shape
    nlam = lambdas.shape[0]
    xsq = np.empty(n)
    for i in range(n):
        xsq[i] = _dot(X[i], X[i])
    ones = np.ones(n)
    b0 = _solve_1d(LOSS_LUM, a, c, y, w, off, ones, 0.0, 0.0, 0.0, 0.0)
    alpha = np.empty(n)
    obj0 = 0.0
    S = 0.0
    for i in range(n):
        obj0 += w[i] * lum_value(y[i] * (off[i] + b0), a, c)
        alpha[i] = -w[i] * lum_d1(y[i] * (off[i] + b0), a, c) if w[i] > 0.0 else 0.0
        S += alpha[i] * y[i]
    obj0 /= n
    thr = math.sqrt(tol * max(obj0, 1e-10))
    beta = np.zeros(p)
    for i in range(n):
        _axpy(alpha[i] * y[i], X[i], beta)
    st = np.array([b0, S, 0.0])
    z = np.empty(n)
    g = np.empty(p)
    act = np.empty(n, dtype=np.int64)
    nact = 0
    for i in range(n):
        if w[i] > 0.0:
            act[nact] = i
            nact += 1
    st[2] = nact
    Bs = np.zeros((nlam, p))
    bs = np.zeros(nlam)
    n_iter = np.zeros(nlam, dtype=np.int64)
    conv = np.zeros(nlam, dtype=np.bool_)
    objs = np.zeros(nlam)
    kkts = np.zeros(nlam)
    traces = np.zeros((nlam, trace_len, 3))
    scale = 1.0 / n  # beta currently holds (1/n) sum alpha_i y_i x_i times this / lambda
    for k in range(nlam):
        lam = lambdas[k]
        f = scale / lam
        for j in range(p):
            beta[j] *= f
        scale = lam
        passes, ok, ob, kk = _solve_lambda(
            X, y, off, w, xsq, a, c, lam, rho_f * lam, thr, max_pass, alpha, beta, st, z, g, act, traces[k]
        )
        Bs[k] = beta
        bs[k] = st[0]
        n_iter[k] = passes
        conv[k] = ok
        objs[k] = ob
        kkts[k] = kk
    return bs, Bs, n_iter, conv, objs, kkts, obj0, traces


def lum_ridge_dual_path(
    X,
    y,
    w,
    a,
    c,
    lambdas,
    standardize=True,
    tol=1e-7,
    max_iter=10000,
    penalty_factor=None,
    trace_len=0,
    rho_factor=RHO_FACTOR,
    offset=None,
):
    """Ridge-penalised LUM path (linear expansion) by dual coordinate ascent (module docstring).

    Minimises, for each ``lambda`` in turn (warm started from the previous dual solution),
    ``(1/n) sum_i w_i V_{a,c}(y_i (o_i + b + x_i'beta)) + (lambda/2) sum_j pf_j beta_j^2`` with ``w``
    normalised to mean 1 and, with ``standardize=True``, the penalty on the coefficients of the
    weighted-standardised columns (as :func:`cohstats.solvers.cd.path.cd_path`).

    Parameters
    ----------
    X : (n, p) array; y : (n,) labels -1/+1; w : (n,) nonnegative weights or None
    a, c : finite LUM parameters (``c`` large: the method is meant for ``c >= 1000``)
    lambdas : decreasing 1-D array of penalties
    standardize : bool
    tol : float, the KKT gate is ``sqrt(tol * obj0)``
    max_iter : int, maximum number of passes per ``lambda``
    penalty_factor : (p,) positive factors or None
    trace_len : int, passes per ``lambda`` recorded in ``info["trace"]`` (augmented dual before
        and after the pass, primal objective at the last full check)
    offset : (n,) known offsets ``o_i`` (R's ``offset()``) or None (zeros)

    Returns
    -------
    intercepts : (nlam,) array; coefs : (nlam, p) array on the original scale;
    info : dict with ``n_iter`` (passes), ``converged``, ``objective``, ``kkt`` (exact KKT
        residual, intercept included, standardised scale), ``df``, ``null_objective``, ``mode``.
    """
    from cohstats.solvers.cd.design import _check_lambdas, _check_pf, _check_tol, _check_xyw, standardize_design

    X, y, w = _check_xyw(X, y, w)
    a, c = float(a), float(c)
    if not (math.isfinite(a) and a > 0 and math.isfinite(c) and c >= 0):
        raise ValueError(f"lum_ridge_dual_path needs finite a > 0 and c >= 0; got a={a!r}, c={c!r}")
    lam = _check_lambdas(lambdas)
    n, p = X.shape
    pf = _check_pf(penalty_factor, p)
    tol, max_iter = _check_tol(tol, max_iter)
    Xt, center, scale, excl = standardize_design(X, w, standardize, True)
    excl = np.asarray(excl, dtype=bool)
    if np.any((pf <= 0) & ~excl):
        raise ValueError(
            "penalty_factor must be positive for the dual ridge LUM path (an unpenalised column has no dual)"
        )
    sq = np.where(excl, 0.0, 1.0 / np.sqrt(np.where(pf > 0, pf, 1.0)))
    Xs = np.ascontiguousarray(np.asarray(Xt).T * sq[None, :])
    off = np.zeros(n) if offset is None else np.ascontiguousarray(offset, dtype=np.float64).ravel()
    if off.shape != (n,) or not np.all(np.isfinite(off)):
        raise ValueError(f"offset must hold {n} finite values; got shape {np.shape(offset)}")
    bs, Bs, n_iter, conv, objs, kkts, obj0, traces = _dual_path(
        Xs, y, off, w, a, c, lam, float(rho_factor), float(tol), int(max_iter), int(trace_len)
    )
    B = Bs * sq[None, :]  # coefficients of the standardised columns
    coefs = B / np.asarray(scale)[None, :]
    intercepts = bs - coefs @ np.asarray(center)
    info = dict(
        n_iter=n_iter,
        converged=conv,
        objective=objs,
        kkt=kkts,
        df=np.count_nonzero(B, axis=1),
        null_objective=float(obj0),
        mode="dual",
    )
    if trace_len:
        info["trace"] = traces
    return intercepts, coefs, info
