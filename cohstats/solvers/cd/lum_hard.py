"""Curvatures of the quadratic models of hard LUMs (large ``c``) in the IRLS coordinate mode.

Near the hinge limit the LUM loss ``V_{a,c}`` of [LZW] is linear left of its connection point
``u_e = c/(1+c)`` and has curvature up to ``(a+1)(1+c)/a`` just right of it, decaying on the
scale ``1/(1+c)``. The exact curvature ``V''(z_i)`` (zero for most observations) makes the
IRLS model flat in almost every direction, so that its steps overshoot and are halved many
times; the global bound makes every step tiny. :func:`lum_maj_weights` uses instead the
curvature of a quadratic that lies above the loss on (essentially) its whole domain and touches
it at the current margin -- the quadratic majorisation of the hinge used by SVM-Maj (Groenen,
Nalbantov and Bioch, *SVM-Maj: a majorization approach to linear support vector machines with
different hinge errors*, Advances in Data Analysis and Classification 2 (2008) 17-43):

``W_i = w_i min(L, max(V''(z_i), 1 / (2 |z_i - u_e|)))``,  ``L`` the global curvature bound.

For ``z_i < u_e`` this quadratic majorises ``V`` exactly (``V(u) - (1 - u) <= u - u_e`` for
``u >= u_e``); for ``z_i > u_e`` it does so up to a term of order ``1/(1+c)``. Observations far
from the connection point get small curvatures (they may move far before they reach it), those
at the point the full bound. The step-halving safeguard of the IRLS mode keeps the objective
monotone whatever the model; the fixed point (zero gradient of the true objective) is unchanged.
"""

from __future__ import annotations

import math

import numpy as np


from cohstats._numba_cache import internal
from cohstats.losses.scalar import lum_d2
from cohstats.solvers.cd.scalar import _objective

#: c at or above which the IRLS mode of the LUM uses the majorising curvatures
LUM_MAJ_C = 100.0
_NEWTON_FLOOR = 1e-6


@internal
def lum_maj_weights(a, c, Lb, y, w, f, W):
    """Overwrite ``W`` with the majorising curvatures of the LUM at the fits ``f`` (see the
    module docstring); observations with ``w_i = 0`` get 0."""
    ue = c / (1.0 + c)
    for i in range(y.shape[0]):
        wi = w[i]
        if wi > 0.0:
            z = y[i] * f[i]
            d = abs(z - ue)
            k = 0.5 / d if d > 0.0 else Lb
            h = lum_d2(z, a, c)
            if h > k:
                k = h
            if k > Lb:
                k = Lb
            W[i] = wi * k
        else:
            W[i] = 0.0


@internal
def _chol_solve(H, g, m):
    """Solve ``H d = g`` for the symmetric positive definite leading ``m x m`` block of ``H``
    (Cholesky in place; ``H`` is overwritten). Returns ``(d, ok)``; ``ok`` False when a pivot is
    not positive."""
    d = np.zeros(m)
    for j in range(m):
        s = H[j, j]
        for k in range(j):
            s -= H[j, k] * H[j, k]
        if not (s > 0.0):
            return d, False
        s = math.sqrt(s)
        H[j, j] = s
        for i in range(j + 1, m):
            t = H[i, j]
            for k in range(j):
                t -= H[i, k] * H[j, k]
            H[i, j] = t / s
    for i in range(m):
        t = g[i]
        for k in range(i):
            t -= H[i, k] * d[k]
        d[i] = t / H[i, i]
    for i in range(m - 1, -1, -1):
        t = d[i]
        for k in range(i + 1, m):
            t -= H[k, i] * d[k]
        d[i] = t / H[i, i]
    return d, True


@internal
def lum_newton_step(idx, m, data, loss, pen, ws, obj, bb):
    """One joint step over the active coordinates ``idx[:m]`` and the intercept of a hard LUM.

    Coordinate steps cannot follow the valley of the objective along which the observations at
    the connection point keep their margins (each single coordinate is blocked by their large
    curvature), which is what makes near-hinge problems slow for coordinate descent. This step
    minimises the quadratic model with the majorising curvatures ``ws.W`` (and the working
    gradient ``ws.E``, both at the current fit) jointly over the active coordinates with their
    signs fixed: the penalised Newton system is solved by Cholesky, the step is cut where a
    coefficient would change sign (that coefficient is set to zero), and halved until the true
    objective does not rise (up to 30 times; no step is taken otherwise).

    Returns ``(dmax, bb, obj, ok)``: the largest curvature-weighted change, the new intercept, the
    objective after the step and whether a step was taken. Updates ``ws.B[0]`` and ``ws.F[0]``.
    """
    Xt, y, w, intercept = data.Xt, data.y, data.w, data.intercept
    pf, l1, l2 = pen.pf, pen.l1, pen.l2
    beta, f, e = ws.B[0], ws.F[0], ws.E[0]
    W = ws.W
    n = y.shape[0]
    o = 1 if intercept else 0
    q = m + o
    H = np.zeros((q, q))
    g = np.zeros(q)
    # right-hand side: minus the gradient of the objective (signs of the active coefficients fixed)
    for a in range(m):
        j = idx[a]
        xj = Xt[j]
        s = 0.0
        for i in range(n):
            s += xj[i] * e[i]
        bj = beta[j]
        sg = 0.0
        if bj > 0.0:
            sg = 1.0
        elif bj < 0.0:
            sg = -1.0
        g[o + a] = s / n - l2 * pf[j] * bj - l1 * pf[j] * sg
    if intercept:
        s = 0.0
        sw = 0.0
        for i in range(n):
            s += e[i]
            sw += W[i]
        g[0] = s / n
        H[0, 0] = sw / n
    # model curvature: (1/n) X_A' diag(W) X_A (+ the ridge part of the penalty)
    wx = np.empty(n)
    Wn = np.empty(n)
    for i in range(n):
        Wn[i] = w[i] * max(lum_d2(y[i] * f[i], loss.p1, loss.p2), _NEWTON_FLOOR * loss.Lb)
    W = Wn
    if intercept:
        sw = 0.0
        for i in range(n):
            sw += W[i]
        H[0, 0] = sw / n
    for a in range(m):
        ja = idx[a]
        xa = Xt[ja]
        for i in range(n):
            wx[i] = W[i] * xa[i]
        if intercept:
            s = 0.0
            for i in range(n):
                s += wx[i]
            H[o + a, 0] = s / n
            H[0, o + a] = s / n
        for b2 in range(a + 1):
            xb = Xt[idx[b2]]
            s = 0.0
            for i in range(n):
                s += wx[i] * xb[i]
            H[o + a, o + b2] = s / n
            H[o + b2, o + a] = s / n
        H[o + a, o + a] += l2 * pf[ja]
    diag = np.empty(q)
    for a in range(q):
        diag[a] = H[a, a]
    d, ok = _chol_solve(H, g, q)
    if not ok:
        return 0.0, bb, obj, False
    # longest step keeping the signs of the active coefficients
    tmax = 1.0
    jz = -1
    for a in range(m):
        j = idx[a]
        bj = beta[j]
        da = d[o + a]
        if bj != 0.0 and bj * (bj + da) < 0.0:
            t = -bj / da
            if t < tmax:
                tmax = t
                jz = a
    df = np.zeros(n)
    if intercept:
        for i in range(n):
            df[i] = d[0]
    for a in range(m):
        xj = Xt[idx[a]]
        da = d[o + a]
        for i in range(n):
            df[i] += xj[i] * da
    b_old = np.empty(m)
    for a in range(m):
        b_old[a] = beta[idx[a]]
    f_old = f.copy()
    t = tmax
    for _ in range(31):
        for a in range(m):
            beta[idx[a]] = b_old[a] + t * d[o + a]
        if t == tmax and jz >= 0:
            beta[idx[jz]] = 0.0
        for i in range(n):
            f[i] = f_old[i] + t * df[i]
        ob = _objective(data, loss, pen, f, beta, ws.PB[0])
        if ob <= obj:
            dmax = 0.0
            for a in range(q):
                v = diag[a] * (t * d[a]) ** 2
                if v > dmax:
                    dmax = v
            return dmax, bb + (t * d[0] if intercept else 0.0), ob, True
        t *= 0.5
    for a in range(m):
        beta[idx[a]] = b_old[a]
    for i in range(n):
        f[i] = f_old[i]
    return 0.0, bb, obj, False
