"""The binary problem's coordinate updates: one-dimensional loss derivatives, the exact 1-D
minimiser, and one coordinate pass in each update mode (see :mod:`cohstats.solvers.cd.path`).

Losses come from :mod:`cohstats.losses.scalar` by code; the state is passed as the named tuples
of :mod:`cohstats.solvers.cd.state`.
"""

from __future__ import annotations

import math

from cohstats._numba_cache import njit


from cohstats._numba_cache import internal
from cohstats.losses.scalar import loss_d1, loss_d2, loss_value
from cohstats.solvers.cd.state import UPD_IRLS, UPD_MM


@internal(fastmath=True)
def _dot(a, b):
    s = 0.0
    for i in range(a.shape[0]):
        s += a[i] * b[i]
    return s


@internal(fastmath=True)
def _wsq(x, W):
    s = 0.0
    for i in range(x.shape[0]):
        s += W[i] * x[i] * x[i]
    return s


@njit(cache=True, nogil=True, inline="always")
def _soft(z, t):
    if z > t:
        return z - t
    if z < -t:
        return z + t
    return 0.0


@njit(cache=True, nogil=True)
def _objective(data, loss, pen, f, beta, Pbeta):
    """Objective of the binary problem at the fits ``f`` and coefficients ``beta`` (``Pbeta``
    = ``P beta`` when the penalty has a matrix)."""
    y, w = data.y, data.w
    code, p1, p2 = loss.code, loss.p1, loss.p2
    n = y.shape[0]
    s = 0.0
    for i in range(n):
        if w[i] > 0.0:
            s += w[i] * loss_value(code, y[i] * f[i], p1, p2)
    s /= n
    return s + _penalty(pen, beta, Pbeta)


@internal
def _neg_grad(code, p1, p2, y, w, f, r):
    """r_i = -w_i d phi(y_i f)/df at f_i."""
    for i in range(y.shape[0]):
        if w[i] > 0.0:
            r[i] = -w[i] * y[i] * loss_d1(code, y[i] * f[i], p1, p2)
        else:
            r[i] = 0.0


@internal
def _d_sum(code, p1, p2, y, w, f, x, delta):
    """(1/n) sum w_i y_i x_i phi'(y_i (f_i + x_i delta)) and (1/n) sum w_i x_i^2 phi''(.)."""
    n = y.shape[0]
    g = 0.0
    h = 0.0
    for i in range(n):
        xi = x[i]
        if w[i] > 0.0 and xi != 0.0:
            z = y[i] * (f[i] + xi * delta)
            g += w[i] * y[i] * xi * loss_d1(code, z, p1, p2)
            h += w[i] * xi * xi * loss_d2(code, z, p1, p2)
    return g / n, h / n


@internal
def _d1_sum(code, p1, p2, y, w, f, x, delta):
    """The first sum of :func:`_d_sum` alone."""
    n = y.shape[0]
    g = 0.0
    for i in range(n):
        xi = x[i]
        if w[i] > 0.0 and xi != 0.0:
            g += w[i] * y[i] * xi * loss_d1(code, y[i] * (f[i] + xi * delta), p1, p2)
    return g / n


@internal
def _gh(code, p1, p2, y, w, f, x, bj, t, a2, c2, s):
    """Derivative and curvature of the 1-d objective of :func:`_solve_1d` at ``t`` (on the side
    of zero whose l1 subgradient is ``s``)."""
    g, h = _d_sum(code, p1, p2, y, w, f, x, t - bj)
    return g + a2 * t + c2 + s, h + a2


@internal
def _solve_1d(code, p1, p2, y, w, f, x, bj, l1, a2, c2):
    """Exact minimiser t of  (1/n) sum w_i phi(y_i (f_i + x_i (t - bj))) + a2/2 t^2 + c2 t + l1 |t|.

    ``a2 >= 0`` and ``c2`` carry the quadratic penalty (a2 = l2 pf P_jj, c2 = l2 pf (P beta)_{-j});
    the derivative of the objective is monotone, its root is found by safeguarded Newton with
    bisection fallback. Returns t.
    """
    # derivative G(t) = D(t - bj) + a2 t + c2 + s l1 ; choose the side of zero first
    s = 0.0
    lo = -math.inf
    hi = math.inf
    if l1 > 0.0:
        d0 = _d1_sum(code, p1, p2, y, w, f, x, -bj)
        d0 += c2
        if d0 + l1 < 0.0:
            s = l1
            lo = 0.0
        elif d0 - l1 > 0.0:
            s = -l1
            hi = 0.0
        else:
            return 0.0
    t = bj
    if t <= lo or t >= hi:
        t = lo if lo > -math.inf else hi
    g, h = _gh(code, p1, p2, y, w, f, x, bj, t, a2, c2, s)
    if g == 0.0:
        return t
    if g < 0.0:
        lo = t
    else:
        hi = t
    # bracket search
    step = abs(g) / h if h > 0.0 else 1.0
    if not (step > 0.0) or step == math.inf:
        step = 1.0
    it = 0
    while (lo == -math.inf or hi == math.inf) and it < 200:
        it += 1
        tn = t + step if g < 0.0 else t - step
        gn, hn = _gh(code, p1, p2, y, w, f, x, bj, tn, a2, c2, s)
        if gn == 0.0:
            return tn
        if gn < 0.0:
            lo = tn
        else:
            hi = tn
        t, g, h = tn, gn, hn
        if lo > -math.inf and hi < math.inf:
            break
        step *= 2.0
    if lo == -math.inf or hi == math.inf:
        return t  # unbounded direction (no penalty and separable data): give up at the last point
    # safeguarded Newton inside [lo, hi]
    for it in range(200):
        if h > 0.0:
            tn = t - g / h
        else:
            tn = 0.5 * (lo + hi)
        if not (tn > lo and tn < hi):
            tn = 0.5 * (lo + hi)
        if abs(tn - t) <= 1e-13 * (1.0 + abs(t)) or (hi - lo) <= 1e-13 * (1.0 + abs(t)):
            return tn
        t = tn
        g, h = _gh(code, p1, p2, y, w, f, x, bj, t, a2, c2, s)
        if g == 0.0:
            return t
        if g < 0.0:
            lo = t
        else:
            hi = t
    return t


@internal
def _penalty(pen, beta, Pbeta):
    """Elastic-net penalty of the binary problem."""
    pf, l1, l2, use_P = pen.pf, pen.l1, pen.l2, pen.use_P
    tot = 0.0
    for j in range(beta.shape[0]):
        bj = beta[j]
        if bj != 0.0:
            q = Pbeta[j] if use_P else bj
            tot += pf[j] * (0.5 * l2 * bj * q + l1 * abs(bj))
    return tot


_FM = {"reassoc", "contract", "nsz", "arcp"}  # reassociation for vectorised reductions only


@internal(fastmath=_FM)
def _cycle(upd, idx, m, data, loss, pen, ws, prof, dst):
    """One pass of the binary problem over coordinates idx[:m] in the update mode ``upd``
    (:func:`~cohstats.solvers.cd.state.upd_of`); returns max_j h_j (delta_j)^2.

    Updates row 0 of ``ws.B``, ``ws.F``, ``ws.E`` and ``ws.PB``; ``ws.Gst[0, j]`` receives the
    smooth part of the KKT residual of coordinate j before its update
    (used by the strong rule at the next lambda). In IRLS mode with ``prof`` the intercept is
    profiled out (each step is the exact joint minimiser over (b, beta_j) of the quadratic
    model); ``dst = [pending intercept shift, sum of curvatures]``.
    """
    Xt, y, w, xv = data.Xt, data.y, data.w, data.xv
    code, p1, p2, Lb = loss.code, loss.p1, loss.p2, loss.Lb
    pf, l1, l2, use_P, P, Psh = pen.pf, pen.l1, pen.l2, pen.use_P, pen.P, pen.Pshift
    beta, f, e, gst, Pbeta = ws.B[0], ws.F[0], ws.E[0], ws.Gst[0], ws.PB[0]
    W = ws.W
    dmax = 0.0
    n = y.shape[0]
    for k in range(m):
        j = idx[k]
        xj = Xt[j]
        bj = beta[j]
        pj = pf[j]
        Pjj = (P[j, j] + Psh[j]) if use_P else 1.0
        cm = (Pbeta[j] - Pjj * bj) if use_P else 0.0
        if len(upd) == UPD_IRLS:
            g = 0.0
            H = 0.0
            M = 0.0
            for i in range(n):
                xi = xj[i]
                g += xi * e[i]
                wx = W[i] * xi
                H += wx * xi
                M += wx
            # profiled intercept: the intercept is kept at its conditional optimum, with its
            # pending shift dst[0] applied to e and f only at the end of the pass
            grad = (g - dst[0] * M) / n
            if prof:
                H = (H - M * M / dst[1]) / n
                if H < 0.0:
                    H = 0.0
            else:
                H /= n
            gst[j] = grad - l2 * pj * (cm + Pjj * bj)
            den = H + l2 * pj * Pjj
            if den <= 0.0:
                continue
            nb = _soft(H * bj + grad - l2 * pj * cm, l1 * pj) / den
        elif len(upd) == UPD_MM:
            grad = 0.0
            for i in range(n):
                if w[i] > 0.0 and xj[i] != 0.0:
                    grad -= w[i] * y[i] * xj[i] * loss_d1(code, y[i] * f[i], p1, p2)
            grad /= n
            gst[j] = grad - l2 * pj * (cm + Pjj * bj)
            H = Lb * xv[j]
            den = H + l2 * pj * Pjj
            if den <= 0.0:
                continue
            nb = _soft(H * bj + grad - l2 * pj * cm, l1 * pj) / den
        else:
            H = xv[j]
            nb = _solve_1d(code, p1, p2, y, w, f, xj, bj, l1 * pj, l2 * pj * Pjj, l2 * pj * cm)
        d = nb - bj
        if d != 0.0:
            beta[j] = nb
            if len(upd) == UPD_IRLS:
                for i in range(n):
                    xi = xj[i]
                    e[i] -= W[i] * xi * d
                    f[i] += xi * d
                if prof:
                    dst[0] -= M * d / dst[1]
            else:
                for i in range(n):
                    f[i] += xj[i] * d
            if use_P:
                # row j of the penalty matrix is P[j] + Psh[j]
                Pj = P[j]
                sd = Psh[j] * d
                for i in range(Pbeta.shape[0]):
                    Pbeta[i] += Pj[i] * d + sd
            v = H * d * d
            if v > dmax:
                dmax = v
    return dmax


@internal
def _intercept_step(upd, data, loss, ws):
    """Update the intercept of the binary problem (the fits ``ws.F[0]`` and, in IRLS mode, the
    working residual ``ws.E[0]`` follow); returns (delta, curvature-weighted change)."""
    y, w, sw = data.y, data.w, data.sw
    code, p1, p2, Lb = loss.code, loss.p1, loss.p2, loss.Lb
    f = ws.F[0]
    e = ws.E[0]
    W = ws.W
    n = y.shape[0]
    if len(upd) == UPD_IRLS:
        sW = 0.0
        se = 0.0
        for i in range(n):
            sW += W[i]
            se += e[i]
        if sW <= 0.0:
            return 0.0, 0.0
        d = se / sW
        for i in range(n):
            e[i] -= W[i] * d
            f[i] += d
        return d, (sW / n) * d * d
    elif len(upd) == UPD_MM:
        g = 0.0
        for i in range(n):
            if w[i] > 0.0:
                g -= w[i] * y[i] * loss_d1(code, y[i] * f[i], p1, p2)
        d = g / (Lb * sw)
        for i in range(n):
            f[i] += d
        return d, Lb * (sw / n) * d * d
    else:
        d = _solve_1d(code, p1, p2, y, w, f, ws.ones, 0.0, 0.0, 0.0, 0.0)
        for i in range(n):
            f[i] += d
        return d, (sw / n) * d * d
