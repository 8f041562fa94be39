"""Dual coordinate ascent for the kernel ridge LUM (finite ``a`` and ``c``).

The problem, for each ``gamma`` of a decreasing sequence (warm starts),

``min_{b, beta}  P(b, beta) = (1/n) sum_i w_i V(z_i) + (gamma/2) beta'K beta``,
``z_i = y_i f_i``, ``f = o + b + K beta``,

with the LUM loss ``V = V_{a,c}`` of [LZW] and ``K`` the (symmetric, positive semidefinite)
kernel matrix of the training points, is the kernel form of the problem of
:mod:`cohstats.solvers.cd.lum_dual`, and its Fenchel dual is the same box-constrained problem
with ``K`` in place of ``X X'`` (Hsieh, Chang, Lin, Keerthi and Sundararajan, *A dual coordinate
descent method for large-scale linear SVM*, ICML 2008, whose method is also the kernel SVM's
single-coordinate ascent):

``max_{0 <= alpha_i <= w_i}  (1/n) sum_i w_i psi(alpha_i / w_i) - (gamma/2) beta'K beta``
``subject to  sum_i alpha_i y_i = 0``,  ``beta_i = alpha_i y_i / (gamma n)``,

(plus ``- (1/n) sum_i alpha_i y_i o_i`` with known offsets ``o_i``, R's ``offset()``, zero by
default: a linear term of the dual, which reaches a coordinate step through the margin ``z_i``
only), with ``psi(t) = -V^*(-t)`` the LUM conjugate of :func:`cohstats.solvers.cd.lum_dual.lum_psi`; at
the optimum ``alpha_i = -w_i V'(z_i)``. The intercept is handled by the augmented Lagrangian
(method of multipliers) exactly as in :mod:`cohstats.solvers.cd.lum_dual`: ``b = mu + S/(rho
n)``, ``S = sum_i alpha_i y_i``, ``rho = gamma``, multiplier update ``mu <- b`` after each
pass. The expansion coefficients are the scaled dual variables themselves, so the fit is
reported directly for the uncentred kernel.

A coordinate step maximises the augmented dual exactly in ``alpha_i``
(:func:`cohstats.solvers.cd.lum_dual._coord`) with ``q_i = K_ii/(gamma n) + 1/(rho n)``; a step
that moves ``alpha_i`` by ``d`` adds ``d y_i/(gamma n)`` times kernel column ``i`` to the
maintained vector ``K beta`` -- O(n) per step, one kernel row read from the prepared design
(``K[i, j] = Xt[i, j] + m_i``, :class:`cohstats.solvers.cd.kernel.PreparedKernel`), so the
n x n kernel is never copied. The augmented dual never decreases along the steps of a pass.

Shrinking and convergence as in :mod:`cohstats.solvers.cd.lum_dual`: observations whose step is
a fixed point at the last full check (at the upper bound with margin left of the curved window,
or at zero with a negligible loss slope) are left out of the passes until the next full check.
A full check, made once the passes since the last have visited at least half of the
observations, recomputes ``K beta`` exactly (one product with ``K``), the primal objective and
the exact KKT residual of the primal point (``max_j |(1/n) sum_i K_ji y_i (alpha_i -
alpha_hat_i)|``, ``alpha_hat_i = -w_i V'(z_i)``, and the intercept's ``|(1/n) sum_i y_i
alpha_hat_i|``; a second product with ``K``) -- the residual the damped Newton route of
:func:`cohstats.solvers.cd.kernel.cd_kernel_path` reports. Convergence is declared at a full
check with residual at most the gate below; ``max_iter`` bounds the passes (and Newton steps)
per ``gamma``, and a ``gamma`` that reaches it is reported not converged.

Newton rounds: near the hinge (large ``c``) the observations whose margins lie on the curved
window are coupled through ``K`` and single-coordinate passes stall on them (slow linear
convergence). When a ``gamma`` has not converged after 50 passes, up to 20 damped Newton steps
are taken on the primal point: the Newton system of the damped Newton route with the rows of
zero (or negligible) loss curvature eliminated, so that only the ``|F|`` observations on the
curved part enter a dense solve; the dual point is then recovered as ``alpha_i = y_i gamma n
beta_i`` clipped to ``[0, w_i]`` and the rounds alternate until the KKT gate or ``max_iter``
(passes plus Newton steps) is reached. The solve is bounded: up to 512 observations it is a
dense LU; beyond, the reduced system is solved by GMRES (one cycle of at most 20 iterations)
with products ``K_FF x`` read from the kernel's rows, preconditioned by the dense solve on the
512 observations of largest curvature ``w_i V''(z_i) K_ii`` (the others' rows by their
diagonals, their curvature kept on the intercept's diagonal). A step then costs one product
with ``K`` (one numba thread), O(n |F|) for the columns of ``F``, O(512^3) and at most 21
products with ``K_FF`` -- O(n^2) time and O(n) memory beyond the kernel, whatever ``|F|`` is.
An inexact step changes only how many steps a round takes: the line search keeps the objective
from rising (a step along which it cannot fall ends the round, and the passes resume), and the
gate and the optimum are the same.

Gate: the damped Newton route's, ``1e-2 sqrt(tol * obj0)`` (``obj0`` the intercept-only
objective), on the same exact KKT residual, so that the two routes deliver the same accuracy.

Memory: the prepared kernel (one n x n float64 array, read only), O(n) per ``gamma``, and at
most a 513 x 513 block plus 21 vectors of length ``|F|`` during a Newton round.
"""

from __future__ import annotations

import math

import numpy as np
from cohstats._numba_cache import njit

from cohstats.losses.scalar import LOSS_LUM, lum_d1, lum_d2, lum_value
from cohstats.solvers.cd.lum_dual import _axpy, _coord, _shuffle, _working_set, lum_psi
from cohstats.solvers.cd.ridge import _ridge_info, small_lapack
from cohstats.solvers.cd.scalar import _dot, _solve_1d


@njit(cache=True, nogil=True)
def _kmatvec(Xt, m, v, out):
    """``out = K v`` with ``K[j, i] = Xt[j, i] + m_j`` (row by row, no n x n temporary)."""
    s = 0.0
    for i in range(v.shape[0]):
        s += v[i]
    for j in range(Xt.shape[0]):
        out[j] = _dot(Xt[j], v) + m[j] * s


@njit(cache=True, nogil=True)
def _kcheck(Xt, m, y, o, w, a, c, gam, b, beta, alpha, g, z, r, icpt):
    """Exact ``g = K beta``, margins ``z`` (offsets ``o``), the primal objective and the exact KKT residual.

    The gradient of ``P`` in ``beta`` is ``(1/n) K r`` with ``r_i = y_i (alpha_i - alpha_hat_i)``
    (because ``gamma beta_i = alpha_i y_i / n``). Returns ``(objective, kkt)``."""
    n = Xt.shape[0]
    _kmatvec(Xt, m, beta, g)
    loss = 0.0
    gb = 0.0
    pen = 0.0
    for i in range(n):
        zi = y[i] * (o[i] + b + g[i])
        z[i] = zi
        pen += beta[i] * g[i]
        wi = w[i]
        if wi > 0.0:
            loss += wi * lum_value(zi, a, c)
            ah = -wi * lum_d1(zi, a, c)
            gb += y[i] * ah
            r[i] = y[i] * (alpha[i] - ah)
        else:
            r[i] = 0.0
    kk = abs(gb) / n if icpt else 0.0
    sr = 0.0
    for i in range(n):
        sr += r[i]
    for j in range(n):
        v = abs(_dot(Xt[j], r) + m[j] * sr) / n
        if v > kk:
            kk = v
    return loss / n + 0.5 * gam * pen, kk


@njit(cache=True, nogil=True)
def _kaug_dual(y, o, w, a, c, alpha, gam, beta, g, off, mu, S, inv_rn):
    """The augmented dual ``(1/n) sum (w_i psi(alpha_i/w_i) - alpha_i y_i o_i) - (gamma/2)
    beta'K beta - mu S/n - S^2/(2 rho n^2)`` with ``K beta = g + off`` (the maintained vector and
    its constant shift)."""
    n = w.shape[0]
    s = 0.0
    pen = 0.0
    for i in range(n):
        if w[i] > 0.0:
            s += w[i] * lum_psi(alpha[i] / w[i], a, c) - alpha[i] * y[i] * o[i]
        pen += beta[i] * (g[i] + off)
    return s / n - 0.5 * gam * pen - mu * S / n - 0.5 * S * S * inv_rn / n


@njit(cache=True, nogil=True)
def _solve_gamma(Xt, m, kd, y, o, w, a, c, gam, inv_rn, icpt, thr, max_pass, alpha, beta, g, st, z, r, act, trace):
    """Dual coordinate ascent with the augmented Lagrangian for one ``gamma``.

    ``st = [b, S, nact]`` (primal intercept, ``sum_i alpha_i y_i``, size of the working set in
    ``act[:nact]``) is updated in place, as are ``alpha``, ``beta`` (``beta_i = alpha_i y_i /
    (gamma n)`` on entry) and ``g`` (``K beta`` on entry). ``inv_rn = 1/(rho n)`` (0 without an
    intercept). ``trace`` (k, 3) receives, per pass while it has rows, the augmented dual
    before and after the pass (same multiplier) and the primal objective at the last full check.
    Returns ``(passes, converged, objective, kkt)``."""
    n = Xt.shape[0]
    ue = c / (1.0 + c)
    inv_gn = 1.0 / (gam * n)
    b = st[0]
    S = st[1]
    mu = b - S * inv_rn
    nact = int(st[2])
    npos = 0
    for i in range(n):
        if w[i] > 0.0:
            npos += 1
    off = 0.0  # K beta = g + off: the row shifts m_i of the kernel columns, summed
    passes = 0
    conv = False
    obj = math.nan
    kk = math.inf
    seed = 12345
    work = 0
    ntr = 0
    while passes < max_pass:
        passes += 1
        if ntr < trace.shape[0]:
            trace[ntr, 0] = _kaug_dual(y, o, w, a, c, alpha, gam, beta, g, off, mu, S, inv_rn)
        seed = _shuffle(act, nact, seed)
        for k in range(nact):
            i = act[k]
            zi = y[i] * (o[i] + b + off + g[i])
            q = kd[i] * inv_gn + inv_rn
            a0 = alpha[i]
            a1 = _coord(zi, q, w[i], a0, a, c, ue)
            d = a1 - a0
            if d != 0.0:
                alpha[i] = a1
                t = d * y[i] * inv_gn
                beta[i] += t
                _axpy(t, Xt[i], g)  # kernel column i = row i of Xt plus m_i (K symmetric)
                off += t * m[i]
                S += d * y[i]
                b = mu + S * inv_rn
        work += nact
        if ntr < trace.shape[0]:
            trace[ntr, 1] = _kaug_dual(y, o, w, a, c, alpha, gam, beta, g, off, mu, S, inv_rn)
        mu = b
        b = mu + S * inv_rn
        if 2 * work >= npos or passes >= max_pass:  # full check
            work = 0
            obj, kk = _kcheck(Xt, m, y, o, w, a, c, gam, b, beta, alpha, g, z, r, icpt)
            off = 0.0
            conv = kk <= thr
            if not conv:
                nact = _working_set(w, alpha, z, a, c, act)
        if ntr < trace.shape[0]:
            trace[ntr, 2] = obj
            ntr += 1
        if conv:
            break
    # leave g = K beta exact for the caller
    if off != 0.0:
        for j in range(n):
            g[j] += off
    st[0] = b
    st[1] = S
    st[2] = nact
    return passes, conv, obj, kk


@njit(cache=True, nogil=True)
def _kstart(Xt, m, y, o, w, icpt, a, c):
    """Intercept-only fit: ``(b0, obj0, alpha)`` with ``alpha_i = -w_i V'(y_i (o_i + b0))``."""
    n = Xt.shape[0]
    ones = np.ones(n)
    b0 = _solve_1d(LOSS_LUM, a, c, y, w, o, ones, 0.0, 0.0, 0.0, 0.0) if icpt else 0.0
    alpha = np.empty(n)
    obj0 = 0.0
    for i in range(n):
        zi = y[i] * (o[i] + b0)
        obj0 += w[i] * lum_value(zi, a, c)
        alpha[i] = -w[i] * lum_d1(zi, a, c) if w[i] > 0.0 else 0.0
    return b0, obj0 / n, alpha


@njit(cache=True, nogil=True)
def _lum_terms(y, w, a, c, f, r, W):
    """``r_i = -w_i V'(y_i f_i) y_i``, ``W_i = w_i V''(y_i f_i)``; returns ``sum_i w_i V(y_i f_i)``."""
    s = 0.0
    for i in range(y.shape[0]):
        wi = w[i]
        if wi > 0.0:
            zi = y[i] * f[i]
            s += wi * lum_value(zi, a, c)
            r[i] = -wi * lum_d1(zi, a, c) * y[i]
            W[i] = wi * lum_d2(zi, a, c)
        else:
            r[i] = 0.0
            W[i] = 0.0
    return s


@njit(cache=True, nogil=True)
def _fill_reduced(Xt, m, F, Wn, gam, u, res, res_b, icpt, A, rhs, extra):
    """The reduced Newton system of :func:`_newton_polish` in place, without temporaries:
    ``A[p, q] = Wn_p K[F_p, F_q] + gam [p = q]`` and, with an intercept, ``A[p, nf] = Wn_p``,
    ``A[nf, q] = (K_FF Wn)_q``, ``A[nf, nf] = sum(Wn)``; ``rhs = res_F - Wn u_F`` (and
    ``res_b - Wn'u_F``)."""
    nf = F.shape[0]
    tot = 0.0
    dot = 0.0
    if icpt:
        for q in range(nf):
            A[nf, q] = 0.0
    for p in range(nf):
        fp = F[p]
        row = Xt[fp]
        mp = m[fp]
        wp = Wn[p]
        for q in range(nf):
            kpq = row[F[q]] + mp
            A[p, q] = wp * kpq
            if icpt:
                A[nf, q] += wp * kpq  # (Wn' K_FF)_q = (K_FF Wn)_q, K symmetric
        A[p, p] += gam
        rhs[p] = res[fp] - wp * u[fp]
        tot += wp
        dot += wp * u[fp]
    if icpt:
        for p in range(nf):
            A[p, nf] = Wn[p]
        A[nf, nf] = tot + extra + 1e-12
        rhs[nf] = res_b - dot


@njit(cache=True, nogil=True)
def _kcols(Xt, m, F, x, out):
    """``out = K[:, F] x`` (``K[j, i] = Xt[j, i] + m_j``): O(n |F|), no temporary."""
    sx = 0.0
    for q in range(F.shape[0]):
        sx += x[q]
    for j in range(Xt.shape[0]):
        row = Xt[j]
        s = 0.0
        for q in range(F.shape[0]):
            s += row[F[q]] * x[q]
        out[j] = s + m[j] * sx


@njit(cache=True, nogil=True)
def _kff_matvec(Xt, m, F, x, out):
    """``out = K_FF x`` from the rows of the centred design (``K[j, i] = Xt[j, i] + m_j``)."""
    nf = F.shape[0]
    sx = 0.0
    for q in range(nf):
        sx += x[q]
    for p in range(nf):
        row = Xt[F[p]]
        s = 0.0
        for q in range(nf):
            s += row[F[q]] * x[q]
        out[p] = s + m[F[p]] * sx


def _solve_capped(Xt, m, F, Wn, cur, kdF, gam, u, res, res_b, icpt, cap):
    """The reduced Newton system of :func:`_newton_polish` on ``|F| > cap`` observations without
    an ``|F| x |F|`` array: GMRES with products ``K_FF x`` read from the kernel rows, preconditioned
    by the exact solve on the ``cap`` observations of largest curvature (the others' rows by their
    diagonals, their curvature kept on the intercept's diagonal). Returns the solution (``|F|`` and
    the intercept's step)."""
    from scipy.linalg import lu_factor, lu_solve
    from scipy.sparse.linalg import LinearOperator, gmres

    nf = F.size
    kf = nf + 1 if icpt else nf
    ks = cap + 1 if icpt else cap
    pos = np.sort(np.argpartition(-cur, cap - 1)[:cap])
    rest = np.ones(nf, dtype=bool)
    rest[pos] = False
    As = np.empty((ks, ks), order="F")
    rhs_s = np.empty(ks)
    _fill_reduced(Xt, m, F[pos], Wn[pos], gam, u, res, res_b, icpt, As, rhs_s, float(Wn[rest].sum()))
    with np.errstate(all="ignore"), small_lapack(ks):
        lu = lu_factor(As, overwrite_a=True, check_finite=False)
    del As
    diag_r = Wn[rest] * kdF[rest] + gam
    wsum = float(Wn.sum()) + 1e-12
    t = np.empty(nf)

    def amul(x):
        x = np.ravel(x)
        xf = np.ascontiguousarray(x[:nf])
        _kff_matvec(Xt, m, F, xf, t)
        out = np.empty(kf)
        out[:nf] = Wn * t + gam * xf
        if icpt:
            out[:nf] += Wn * x[nf]
            out[nf] = float(Wn @ t) + wsum * x[nf]
        return out

    def prec(v):
        v = np.ravel(v)
        vs = np.empty(ks)
        vs[:cap] = v[pos]
        if icpt:
            vs[cap] = v[nf]
        with np.errstate(all="ignore"):
            xs = lu_solve(lu, vs, check_finite=False)
        out = np.empty(kf)
        out[pos] = xs[:cap]
        out[:nf][rest] = v[:nf][rest] / diag_r
        if icpt:
            out[nf] = xs[cap]
        return out

    rhs = np.empty(kf)
    ur = u[F]
    rhs[:nf] = res[F] - Wn * ur
    if icpt:
        rhs[nf] = res_b - float(Wn @ ur)
    op = LinearOperator((kf, kf), matvec=amul, dtype=np.float64)
    pre = LinearOperator((kf, kf), matvec=prec, dtype=np.float64)
    kw = dict(x0=prec(rhs), atol=0.0, restart=_GMRES_RESTART, maxiter=_GMRES_CYCLES, M=pre)
    with np.errstate(all="ignore"):
        try:
            sol, _ = gmres(op, rhs, rtol=1e-10, **kw)
        except TypeError:  # scipy < 1.12 names the relative tolerance tol
            sol, _ = gmres(op, rhs, tol=1e-10, **kw)
    return sol


def _newton_polish(pk, y, a, c, gam, b, beta, Kb, thr, max_steps, cap=None, o=0.0):
    """Damped Newton steps on the primal from ``(b, beta)`` (``Kb = K beta``; offsets ``o``),
    each solved on the observations of non-negligible loss curvature only.

    Observations with ``V''(z_i) = 0`` (the linear part of the LUM loss) make rows ``gamma
    dbeta_i = res_i`` of the Newton system of :func:`cohstats.solvers.cd.kernel._newton_ridge`,
    eliminated directly; so are those whose curvature term ``w_i V''(z_i) K_ii / n`` is below
    ``1e-12 gamma`` (the far right tail of the loss), which leaves a positive semidefinite
    approximation of the Hessian and hence a descent direction. The remaining ``|F| + 1``
    equations are solved by a dense LU when ``|F| <= cap`` (default 512), and otherwise by
    :func:`_solve_capped` (preconditioned GMRES, no ``|F| x |F|`` array), so a step costs one
    product with ``K`` (for the KKT residual; the others are read from it and from the ``|F|``
    columns, O(n |F|)) plus ``O(cap^3 + 20 |F|^2)``. Step halving keeps the objective from
    rising; convergence is judged on the exact KKT residual. Products with ``K`` run in one numba
    thread (a threaded BLAS product spins on busy cores).
    Returns ``(b, beta, Kb, steps, converged, objective, kkt)``."""
    from scipy.linalg import lu_factor, lu_solve

    n = pk.n
    w, icpt, Xt, m = pk.w, pk.intercept, pk.Xt, pk.m
    cap = _NEWTON_CAP if cap is None else int(cap)

    def matvec(v):  # K v in one numba thread (a threaded BLAS product spins on busy cores)
        out = np.empty(n)
        _kmatvec(Xt, m, np.ascontiguousarray(v), out)
        return out

    r = np.empty(n)
    W = np.empty(n)
    r2 = np.empty(n)
    W2 = np.empty(n)
    kd = np.diagonal(Xt) + m
    lsum = _lum_terms(y, w, a, c, o + b + Kb, r, W)
    obj = lsum / n + 0.5 * gam * float(beta @ Kb)
    kk = math.inf
    for it in range(max_steps + 1):
        res = r / n - gam * beta
        res_b = r.sum() / n if icpt else 0.0
        Kres = matvec(res)
        kk = max(float(np.abs(Kres).max()), abs(res_b))
        if kk <= thr or it == max_steps:
            return b, beta, Kb, it, kk <= thr, obj, kk
        cur = W * kd
        F = np.flatnonzero(cur > _DROP * gam * n)
        Wn = W[F] / n
        d = res / gam
        d[F] = 0.0
        # u = K d with d zero on F: (K res - K[:, F] res_F) / gamma, O(n |F|) from K res
        u = np.empty(n)
        _kcols(Xt, m, F, np.ascontiguousarray(res[F]), u)
        u = (Kres - u) / gam
        nf = F.size
        kf = nf + 1 if icpt else nf
        if nf <= cap:
            A = np.empty((kf, kf), order="F")
            rhs = np.empty(kf)
            _fill_reduced(Xt, m, F, Wn, gam, u, res, res_b, icpt, A, rhs, 0.0)
            if kf:
                with np.errstate(all="ignore"), small_lapack(kf):
                    sol = lu_solve(lu_factor(A, overwrite_a=True, check_finite=False), rhs, check_finite=False)
            del A
        else:
            sol = _solve_capped(Xt, m, F, Wn, cur[F], kd[F], gam, u, res, res_b, icpt, cap)
        if kf:
            if not np.all(np.isfinite(sol)):
                return b, beta, Kb, it, False, obj, kk
            d[F] = sol[:nf]
        db = sol[nf] if icpt else 0.0
        Kd = np.empty(n)
        _kcols(Xt, m, F, np.ascontiguousarray(d[F]), Kd)  # K d = u + K[:, F] d_F
        Kd += u
        t = 1.0
        for _ in range(50):
            nb = beta + t * d
            nKb = Kb + t * Kd
            nbb = b + t * db
            ls = _lum_terms(y, w, a, c, o + nbb + nKb, r2, W2)
            nobj = ls / n + 0.5 * gam * float(nb @ nKb)
            if nobj <= obj:
                break
            t *= 0.5
        else:
            return b, beta, Kb, it, False, obj, kk
        beta, Kb, b, obj = nb, nKb, nbb, nobj
        r, r2 = r2, r
        W, W2 = W2, W
    return b, beta, Kb, max_steps, False, obj, kk


#: ALM weight of the intercept: rho = RHO_FACTOR * gamma
RHO_FACTOR = 1.0
#: Newton rounds treat curvatures w_i V''(z_i) K_ii / n below this share of gamma as zero
_DROP = 1e-12
#: dual passes per round before Newton steps are tried on a gamma that has not converged
_CD_ROUND = 50
#: Newton steps per round
_NEWTON_ROUND = 20
#: most observations in one dense Newton factorisation (larger systems: preconditioned GMRES)
_NEWTON_CAP = 512
#: GMRES restart length and cycles for the larger Newton systems
_GMRES_RESTART = 20
_GMRES_CYCLES = 1


def lum_kernel_dual_path(
    pk, y, a, c, gammas, tol=1e-7, max_iter=10000, *, trace_len=0, rho_factor=RHO_FACTOR, offset=None
):
    """Kernel ridge LUM path by dual coordinate ascent (module docstring).

    Minimises, for each ``gamma`` in turn (warm started from the previous dual solution),
    ``(1/n) sum_i w_i V_{a,c}(y_i f_i) + (gamma/2) beta'K beta``, ``f = o + b + K beta``, with the
    weights ``w`` of the prepared kernel (mean 1) and known offsets ``o`` (``offset``; zero
    when None).

    Parameters
    ----------
    pk : :class:`cohstats.solvers.cd.kernel.PreparedKernel` (read only; never copied)
    y : (n,) float64 labels -1/+1 (checked by the caller)
    a, c : finite LUM parameters, ``a > 0``, ``c >= 0``
    gammas : decreasing 1-D float64 array of penalties (checked by the caller)
    tol : float, the KKT gate is ``1e-2 sqrt(tol * obj0)``
    max_iter : int, maximum number of passes (and Newton steps) per ``gamma``
    trace_len : int, passes per ``gamma`` recorded in ``info["trace"]`` (augmented dual before
        and after the pass, primal objective at the last full check) from its first round
    rho_factor : float, the augmented-Lagrangian weight ``rho = rho_factor * gamma``
    offset : (n,) known offsets ``o_i`` (R's ``offset()``) or None

    Returns
    -------
    intercepts : (ngam,) array, for the uncentred kernel
    betas : (ngam, n) array of expansion coefficients
    info : dict with ``n_iter`` (passes and Newton steps), ``converged``, ``objective``,
        ``kkt`` (exact KKT residual, intercept included), ``df``, ``null_objective``, ``mode``
        and ``solver`` (``"dual"``), ``newton_steps``
    """
    a, c = float(a), float(c)
    if not (math.isfinite(a) and a > 0 and math.isfinite(c) and c >= 0):
        raise ValueError(f"the dual kernel LUM route needs finite a > 0 and c >= 0; got a={a!r}, c={c!r}")
    rho_factor = float(rho_factor)
    if not (rho_factor > 0 and math.isfinite(rho_factor)):
        raise ValueError(f"rho_factor must be positive and finite; got {rho_factor!r}")
    Xt, m, w, icpt = pk.Xt, pk.m, pk.w, bool(pk.intercept)
    y = np.ascontiguousarray(y, dtype=np.float64)
    gammas = np.ascontiguousarray(gammas, dtype=np.float64)
    n, ng = pk.n, gammas.shape[0]
    max_iter = int(max_iter)
    kd = np.maximum(np.diagonal(Xt) + m, 0.0)
    o = np.zeros(n) if offset is None else np.ascontiguousarray(offset, dtype=np.float64).ravel()
    if o.shape != (n,) or not np.all(np.isfinite(o)):
        raise ValueError(f"offset must hold {n} finite values; got shape {np.shape(offset)}")
    b0, obj0, alpha = _kstart(Xt, m, y, o, w, icpt, a, c)
    thr = 1e-2 * math.sqrt(float(tol) * max(obj0, 1e-10))
    pos = np.flatnonzero(w > 0.0)
    act = np.zeros(n, dtype=np.int64)
    act[: pos.size] = pos
    st = np.array([b0, float(alpha @ y), float(pos.size)])
    g, z, r = np.empty(n), np.empty(n), np.empty(n)
    B = np.zeros((ng, n))
    b = np.zeros(ng)
    n_iter = np.zeros(ng, dtype=np.int64)
    n_newton = np.zeros(ng, dtype=np.int64)
    conv = np.zeros(ng, dtype=bool)
    objs = np.zeros(ng)
    kkts = np.zeros(ng)
    traces = np.zeros((ng, int(trace_len), 3))
    no_trace = np.zeros((0, 3))
    for k in range(ng):
        gam = float(gammas[k])
        inv_rn = 1.0 / (rho_factor * gam * n) if icpt else 0.0
        beta = alpha * y / (gam * n)
        _kmatvec(Xt, m, beta, g)
        used = 0
        ok = False
        ob = kk = math.nan
        first = True
        while used < max_iter and not ok:
            budget = min(_CD_ROUND, max_iter - used)
            passes, ok, ob, kk = _solve_gamma(
                Xt,
                m,
                kd,
                y,
                o,
                w,
                a,
                c,
                gam,
                inv_rn,
                icpt,
                thr,
                budget,
                alpha,
                beta,
                g,
                st,
                z,
                r,
                act,
                traces[k] if first else no_trace,
            )
            first = False
            used += passes
            if ok or used >= max_iter:
                break
            # the passes stall (free points coupled through K): Newton steps on the primal point
            bb, beta, Kb, steps, ok, ob, kk = _newton_polish(
                pk, y, a, c, gam, st[0], beta, g, thr, min(_NEWTON_ROUND, max_iter - used), o=o
            )
            used += steps
            n_newton[k] += steps
            # back to a dual point: alpha_i = y_i gamma n beta_i clipped to the box
            np.clip(y * beta * (gam * n), 0.0, w, out=alpha)
            st[0] = bb
            if ok or used >= max_iter:
                break  # report the Newton point (its objective and KKT residual)
            beta = alpha * y / (gam * n)
            g = np.empty(n)
            _kmatvec(Xt, m, beta, g)
            st[1] = float(alpha @ y)
            st[2] = float(pos.size)
            act[: pos.size] = pos
        B[k] = beta
        b[k] = st[0]
        n_iter[k] = used
        conv[k] = ok
        objs[k] = ob
        kkts[k] = kk
        if n_newton[k]:
            # the next gamma starts from this one's dual point (alpha clipped after a Newton round)
            st[1] = float(alpha @ y)
            st[2] = float(pos.size)
            act[: pos.size] = pos
    info = _ridge_info(B, n_iter, conv, objs, kkts, obj0, "dual", "dual")
    info["newton_steps"] = n_newton
    if trace_len:
        info["trace"] = traces
    return b, B, info
