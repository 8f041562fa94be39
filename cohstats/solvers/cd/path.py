"""Pathwise coordinate descent for elastic-net penalised smooth margin losses.

One path driver (:func:`_path_core`: warm starts, sequential strong rule, KKT check of the
discarded coordinates, per-``lambda`` records) serves every problem of the package's
coordinate-descent family, selected by a loss code of :mod:`cohstats.losses.scalar`:

* binary margin losses with the **linear expansion** ``f(x) = b + x'beta`` and the elastic net
  ``lambda * sum_j pf_j ((1 - alpha)/2 beta_j^2 + alpha |beta_j|)`` (:func:`cd_path`);
* binary margin losses with the **kernel expansion** ``f(x) = b + sum_j beta_j K(x_j, x)`` and
  the penalty ``lambda ((1 - alpha)/2 beta'K beta + alpha ||beta||_1)``
  (:mod:`cohstats.solvers.cd.kernel`), which differs only in the quadratic penalty matrix
  (``K`` instead of the identity);
* the multicategory coherence loss of [ZJLY] (code ``LOSS_MCOH``) with K class margins and a
  grouped penalty on the K coefficients of each coordinate, linear
  (:mod:`cohstats.solvers.cd.multi`) or kernel (:func:`cohstats.solvers.cd.kernel.cd_kernel_multi_path`);
* the angle-based multicategory LUM (Zhang & Liu 2014; code ``LOSS_ALUM``): ``f`` in
  ``R^{K-1}``, loss ``V_{a,c}(<f, W_y>)`` with the simplex vertices ``W`` of
  :mod:`cohstats.losses.angle`, grouped penalty on the K-1 coefficients of each coordinate
  (:mod:`cohstats.solvers.cd.angle`); G = K-1 groups, unconstrained intercepts.

Coefficients are held as a (G, p) array: G = 1 for binary problems (whose coordinate updates
work on its single row), G = K for the grouped problem (block updates of one column at a time:
the ``"irls"`` mode below applied to a group -- proximal-Newton passes with the exact per-row
K x K Hessians, the intercepts profiled out, each block the exact minimiser of its quadratic
model, and step halving on the true objective -- or the ``"mm"`` mode, the majorisation with
Boehning's global curvature bound, whose cheap passes stall at small temperatures T).

The minimised objective is

    (1/n) sum_i w_i phi(y_i f_i) + penalty,        weights normalised to mean 1.

Three coordinate-update modes
-----------------------------
``"irls"`` (MODE_IRLS)
    Quadratic approximation with the exact curvature ``w_i phi''(y_i f_i)`` of the selected loss
    (), minimised by inner coordinate descent, then re-expanded (Newton / IRLS outer loop) with
    the step-halving safeguard of that makes the objective monotone. Curvatures are floored at
    ``1e-6`` times the global curvature bound so that the inner problem stays well posed; the
    floor changes the step, not the fixed point. Default for the C-, V- and logistic losses and the
    squared hinge.
``"mm"`` (MODE_MM)
    Coordinate-wise majorisation-minimisation: each coordinate step uses the exact gradient of
    the loss at the current fit and the constant curvature bound ``L = loss_curv_bound`` (for the
    huberized hinge ``1/delta``, [ZDJ] 3.7 /). Monotone without line search. Default for the
    huberized hinge.
``"exact"`` (MODE_EXACT)
    Exact coordinate minimisation (): each one-dimensional convex ``C^1`` problem is
    solved by safeguarded Newton / bisection on its monotone derivative, with the ``l1`` part
    handled by a subgradient test at zero (soft-thresholding). Needed for losses whose curvature is
    zero on a piece and huge elsewhere (LUM with large ``c``); default for LUM, usable for all.

Path strategy (as glmnet): warm starts along a decreasing ``lambda`` sequence; sequential strong
rules screen the coordinates, which are cycled over the strong set, then over the active
(nonzero) set to convergence, then once more over the strong set; finally the KKT conditions
are checked on all coordinates and violators are added. The intercept is never penalised.

Convergence (glmnet's criterion plus a KKT gate): the problem at one ``lambda`` is solved when
a pass over the strong set changes no coordinate by more than ``max_j h_j (delta beta_j)^2 <
tol * obj0`` (``h_j`` the model curvature of coordinate ``j``, ``obj0`` the objective of the
intercept-only fit) and, in the IRLS and MM modes, the KKT residuals seen in that pass are below
``sqrt(tol * obj0)``. The exact KKT violation is returned in ``info["kkt"]`` so that callers (and
tests) can check optimality directly.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from numba import njit

from cohstats.losses.angle import simplex_vertices_nb
from cohstats.losses.multiclass import mc_coh_beta, mc_coh_loss
from cohstats.losses.scalar import (
    LOSS_ALUM,
    LOSS_C,
    LOSS_EXP,
    LOSS_HHINGE,
    LOSS_HINGE,
    LOSS_LOGIT,
    LOSS_LUM,
    LOSS_MCOH,
    LOSS_SQHINGE,
    LOSS_V,
    loss_curv_bound,
    loss_d1,
    loss_d2,
    loss_eval_sum,
    loss_value,
    lum_d1,
    lum_value,
)

MODE_IRLS = 0
MODE_MM = 1
MODE_EXACT = 2
_MODES = {"irls": MODE_IRLS, "mm": MODE_MM, "exact": MODE_EXACT}

__all__ = [
    "cd_path",
    "lambda_max",
    "lambda_sequence",
    "default_mode",
    "MODE_IRLS",
    "MODE_MM",
    "MODE_EXACT",
    "standardize_design",
]


# =========================================================================== numba helpers
@njit(cache=True, nogil=True, fastmath=True)
def _dot(a, b):
    s = 0.0
    for i in range(a.shape[0]):
        s += a[i] * b[i]
    return s


@njit(cache=True, nogil=True, fastmath=True)
def _wsq(x, W):
    s = 0.0
    for i in range(x.shape[0]):
        s += W[i] * x[i] * x[i]
    return s


@njit(cache=True, nogil=True)
def _soft(z, t):
    if z > t:
        return z - t
    if z < -t:
        return z + t
    return 0.0


@njit(cache=True, nogil=True)
def _objective(code, p1, p2, y, w, f, beta, pf, l1, l2, use_P, Pbeta):
    n = y.shape[0]
    s = 0.0
    for i in range(n):
        if w[i] > 0.0:
            s += w[i] * loss_value(code, y[i] * f[i], p1, p2)
    s /= n
    pen = 0.0
    for j in range(beta.shape[0]):
        bj = beta[j]
        if bj != 0.0:
            q = Pbeta[j] if use_P else bj
            pen += pf[j] * (0.5 * l2 * bj * q + l1 * abs(bj))
    return s + pen


@njit(cache=True, nogil=True)
def _neg_grad(code, p1, p2, y, w, f, r):
    """r_i = -w_i d phi(y_i f)/df at f_i."""
    for i in range(y.shape[0]):
        if w[i] > 0.0:
            r[i] = -w[i] * y[i] * loss_d1(code, y[i] * f[i], p1, p2)
        else:
            r[i] = 0.0


@njit(cache=True, nogil=True)
def _d_sum(code, p1, p2, y, w, f, x, delta, want2):
    """(1/n) sum w_i y_i x_i phi'(y_i (f_i + x_i delta)) and (1/n) sum w_i x_i^2 phi''(.)."""
    n = y.shape[0]
    g = 0.0
    h = 0.0
    for i in range(n):
        xi = x[i]
        if w[i] > 0.0 and xi != 0.0:
            z = y[i] * (f[i] + xi * delta)
            g += w[i] * y[i] * xi * loss_d1(code, z, p1, p2)
            if want2:
                h += w[i] * xi * xi * loss_d2(code, z, p1, p2)
    return g / n, h / n


@njit(cache=True, nogil=True)
def _gh(code, p1, p2, y, w, f, x, bj, t, a2, c2, s):
    """Derivative and curvature of the 1-d objective of :func:`_solve_1d` at ``t`` (on the side
    of zero whose l1 subgradient is ``s``)."""
    g, h = _d_sum(code, p1, p2, y, w, f, x, t - bj, True)
    return g + a2 * t + c2 + s, h + a2


@njit(cache=True, nogil=True)
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
        d0, _ = _d_sum(code, p1, p2, y, w, f, x, -bj, False)
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


@njit(cache=True, nogil=True)
def _penalty(beta, pf, l1, l2, use_P, Pbeta):
    pen = 0.0
    for j in range(beta.shape[0]):
        bj = beta[j]
        if bj != 0.0:
            q = Pbeta[j] if use_P else bj
            pen += pf[j] * (0.5 * l2 * bj * q + l1 * abs(bj))
    return pen


_FM = {"reassoc", "contract", "nsz", "arcp"}  # reassociation for vectorised reductions only


@njit(cache=True, nogil=True, fastmath=_FM)
def _cycle(idx, m, Xt, y, w, f, e, W, gst, beta, pf, l1, l2, use_P, P, Pbeta, mode, code, p1, p2, Lb, xv, prof, dst):
    """One pass of the binary problem over coordinates idx[:m]; returns max_j h_j (delta_j)^2.

    ``gst[j]`` receives the smooth part of the KKT residual of coordinate j before its update
    (used by the strong rule at the next lambda). In IRLS mode with ``prof`` the intercept is
    profiled out (each step is the exact joint minimiser over (b, beta_j) of the quadratic
    model); ``dst = [pending intercept shift, sum of curvatures]``.
    """
    dmax = 0.0
    n = y.shape[0]
    for k in range(m):
        j = idx[k]
        xj = Xt[j]
        bj = beta[j]
        pj = pf[j]
        Pjj = P[j, j] if use_P else 1.0
        cm = (Pbeta[j] - Pjj * bj) if use_P else 0.0
        if mode == MODE_IRLS:
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
        elif mode == MODE_MM:
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
            if mode == MODE_IRLS:
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
                Pj = P[j]
                for i in range(Pbeta.shape[0]):
                    Pbeta[i] += Pj[i] * d
            v = H * d * d
            if v > dmax:
                dmax = v
    return dmax


@njit(cache=True, nogil=True)
def _intercept_step(mode, code, p1, p2, y, w, f, e, W, Lb, sw, ones):
    """Update the intercept of the binary problem; returns (delta, curvature-weighted change)."""
    n = y.shape[0]
    if mode == MODE_IRLS:
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
    elif mode == MODE_MM:
        g = 0.0
        for i in range(n):
            if w[i] > 0.0:
                g -= w[i] * y[i] * loss_d1(code, y[i] * f[i], p1, p2)
        d = g / (Lb * sw)
        for i in range(n):
            f[i] += d
        return d, Lb * (sw / n) * d * d
    else:
        d = _solve_1d(code, p1, p2, y, w, f, ones, 0.0, 0.0, 0.0, 0.0)
        for i in range(n):
            f[i] += d
        return d, (sw / n) * d * d


# --------------------------------------------------------------------------- grouped problem
@njit(cache=True, nogil=True)
def _gobjective(F, yc, w, T, sc, B, pf, l1, l2, use_P, PB):
    """Objective of the grouped (K-class) problem: (s/n) sum w C(g_i, c_i) + group penalty."""
    K, n = F.shape
    g = np.empty(K)
    s = 0.0
    for i in range(n):
        if w[i] > 0.0:
            for k in range(K):
                g[k] = F[k, i]
            s += w[i] * mc_coh_loss(g, yc[i], T)
    s *= sc / n
    pen = 0.0
    for j in range(B.shape[1]):
        nn = 0.0
        q = 0.0
        for k in range(K):
            nn += B[k, j] * B[k, j]
            if use_P:
                q += B[k, j] * PB[k, j]
        if not use_P:
            q = nn
        if nn > 0.0:
            pen += pf[j] * (0.5 * l2 * q + l1 * math.sqrt(nn))
    return s + pen


@njit(cache=True, nogil=True)
def _gresid(F, yc, w, T, sc, R):
    """R[k, i] = -s w_i dC/dg_k at g_i = F[:, i] (negative gradient) = s w_i (I[k = c_i] - beta^c_k)."""
    K, n = F.shape
    g = np.empty(K)
    bet = np.empty(K)
    for i in range(n):
        for k in range(K):
            g[k] = F[k, i]
        mc_coh_beta(g, yc[i], T, bet)
        for k in range(K):
            R[k, i] = -sc * w[i] * bet[k]
        R[yc[i], i] += sc * w[i]


@njit(cache=True, nogil=True)
def _aobjective(F, yc, w, a, c, B, pf, l1, l2, use_P, PB):
    """Objective of the angle-based LUM: (1/n) sum w V_{a,c}(<f_i, W_{y_i}>) + group penalty."""
    G, n = F.shape
    Wv = simplex_vertices_nb(G + 1)
    s = 0.0
    for i in range(n):
        if w[i] > 0.0:
            u = 0.0
            for k in range(G):
                u += F[k, i] * Wv[yc[i], k]
            s += w[i] * lum_value(u, a, c)
    s /= n
    pen = 0.0
    for j in range(B.shape[1]):
        nn = 0.0
        q = 0.0
        for k in range(G):
            nn += B[k, j] * B[k, j]
            if use_P:
                q += B[k, j] * PB[k, j]
        if not use_P:
            q = nn
        if nn > 0.0:
            pen += pf[j] * (0.5 * l2 * q + l1 * math.sqrt(nn))
    return s + pen


@njit(cache=True, nogil=True)
def _aresid(F, yc, w, a, c, R):
    """R[k, i] = -w_i V'(u_i) W_{y_i, k}, u_i = <f_i, W_{y_i}> (negative gradient, angle LUM)."""
    G, n = F.shape
    Wv = simplex_vertices_nb(G + 1)
    for i in range(n):
        if w[i] > 0.0:
            u = 0.0
            for k in range(G):
                u += F[k, i] * Wv[yc[i], k]
            d = -w[i] * lum_d1(u, a, c)
            for k in range(G):
                R[k, i] = d * Wv[yc[i], k]
        else:
            for k in range(G):
                R[k, i] = 0.0


@njit(cache=True, nogil=True, fastmath=_FM)
def _gpass(idx, m, Xt, yc, w, T, sc, Lb, pf, l1, l2, use_P, P, PB, B, b, F, R, E, Gst, xv, intercept, sw, code):
    """One majorise-minimise pass of the grouped problem over rows idx[:m], then the intercepts.

    The working residual is refreshed from the exact gradient; each block update is the exact
    minimiser of the majorised objective (loss curvature bound ``Lb`` times ``xv_j``), a group
    soft-thresholding. ``Gst[:, j]`` receives the smooth KKT residual before the update.
    Returns (max_j h_j ||delta_j||^2, largest KKT violation seen before the updates).
    """
    K, n = F.shape
    v = np.empty(K)
    cmv = np.empty(K)
    d = np.empty(K)
    if code == LOSS_ALUM:
        _aresid(F, yc, w, T, sc, R)  # (T, sc) carry LUM's (a, c)
    else:
        _gresid(F, yc, w, T, sc, R)
    for k in range(K):
        for i in range(n):
            E[k, i] = R[k, i]
    dmax = 0.0
    kk = 0.0
    for q in range(m):
        j = idx[q]
        xj = Xt[j]
        pj = pf[j]
        Pjj = P[j, j] if use_P else 1.0
        H = Lb * xv[j]
        bn = 0.0
        for k in range(K):
            v[k] = _dot(xj, E[k]) / n
            bn += B[k, j] * B[k, j]
        bn = math.sqrt(bn)
        rn = 0.0
        gn = 0.0
        for k in range(K):
            cmv[k] = (PB[k, j] - Pjj * B[k, j]) if use_P else 0.0
            gk = v[k] - l2 * pj * (cmv[k] + Pjj * B[k, j])
            Gst[k, j] = gk
            gn += gk * gk
            if bn > 0.0:
                gk -= l1 * pj * B[k, j] / bn
            rn += gk * gk
        viol = math.sqrt(rn) if bn > 0.0 else max(math.sqrt(gn) - l1 * pj, 0.0)
        if viol > kk:
            kk = viol
        nv = 0.0
        for k in range(K):
            v[k] += H * B[k, j]
            if use_P:
                v[k] -= l2 * pj * cmv[k]
            nv += v[k] * v[k]
        nv = math.sqrt(nv)
        den = H + l2 * pj * Pjj
        fac = 0.0
        if nv > l1 * pj and den > 0.0:
            fac = (1.0 - l1 * pj / nv) / den
        ch = 0.0
        for k in range(K):
            nb = fac * v[k]
            d[k] = nb - B[k, j]
            ch += d[k] * d[k]
            B[k, j] = nb
        if ch > 0.0:
            for k in range(K):
                dk = d[k]
                if dk != 0.0:
                    for i in range(n):
                        xi = xj[i]
                        E[k, i] -= Lb * w[i] * xi * dk
                        F[k, i] += xi * dk
                    if use_P:
                        Pj = P[j]
                        for i in range(PB.shape[1]):
                            PB[k, i] += Pj[i] * dk
            if H * ch > dmax:
                dmax = H * ch
    if intercept:
        ch = 0.0
        mean = 0.0
        for k in range(K):
            se = 0.0
            for i in range(n):
                se += E[k, i]
            d[k] = se / (Lb * sw)
            mean += d[k]
        mean /= K
        if code == LOSS_ALUM:
            mean = 0.0  # angle-based intercepts are free in R^{K-1}
        for k in range(K):
            d[k] -= mean
            b[k] += d[k]
            ch += d[k] * d[k]
            for i in range(n):
                F[k, i] += d[k]
                E[k, i] -= Lb * w[i] * d[k]
        if Lb * (sw / n) * ch > dmax:
            dmax = Lb * (sw / n) * ch
    return dmax, kk


@njit(cache=True, nogil=True)
def _gstate(F, yc, w, T, sc, R, Pi):
    """Loss, gradient and curvature state of the grouped problem at the fits F, in one pass.

    ``Pi[:, i]`` receives the soft weights ``beta^c`` of row i (their Hessian
    ``(diag(beta) - beta beta')/T`` is the loss curvature of the row), ``R`` the negative
    gradient ``s w_i (I[k = c_i] - beta_k)``; returns ``(s/n) sum_i w_i C(g_i, c_i)`` (stable
    form: the largest exponent is factored out and the rest summed through ``log1p``).
    """
    K, n = F.shape
    tot = 0.0
    for i in range(n):
        c = yc[i]
        gc = F[c, i]
        m = 0.0
        km = c
        for k in range(K):
            if k != c:
                e = (1.0 + F[k, i] - gc) / T
                if e > m:
                    m = e
                    km = k
        rest = 0.0
        for k in range(K):
            e = 0.0 if k == c else (1.0 + F[k, i] - gc) / T
            t = math.exp(e - m)
            Pi[k, i] = t
            if k != km:
                rest += t
        S = 1.0 + rest
        for k in range(K):
            Pi[k, i] /= S
            R[k, i] = -sc * w[i] * Pi[k, i]
        R[c, i] += sc * w[i]
        if w[i] > 0.0:
            tot += w[i] * T * (m + math.log1p(rest))
    return tot * sc / n


@njit(cache=True, nogil=True)
def _gpenalty(B, pf, l1, l2, use_P, PB):
    """Group elastic-net penalty of the grouped problem."""
    K = B.shape[0]
    pen = 0.0
    for j in range(B.shape[1]):
        nn = 0.0
        q = 0.0
        for k in range(K):
            nn += B[k, j] * B[k, j]
            if use_P:
                q += B[k, j] * PB[k, j]
        if not use_P:
            q = nn
        if nn > 0.0:
            pen += pf[j] * (0.5 * l2 * q + l1 * math.sqrt(nn))
    return pen


@njit(cache=True, nogil=True)
def _group_prox(lam, U, v, b, r, t, out):
    """Minimiser z of 1/2 (z - b)'S(z - b) - v'z + r/2 ||z||^2 + t ||z||_2, S = U diag(lam) U'.

    With c = v + S b (lam >= 0): z = 0 when ||c|| <= t; otherwise z = (S + (r + mu) I)^-1 c with
    mu = t/||z|| > 0, the root of sum_k ct_k^2 mu^2 / (lam_k + r + mu)^2 = t^2 (ct = U'c), found
    by safeguarded Newton in a bracket that follows from lam_min <= lam_k <= lam_max.
    """
    K = v.shape[0]
    ct = np.empty(K)
    cn = 0.0
    for k in range(K):
        s = 0.0
        q = 0.0
        for l in range(K):
            s += U[l, k] * v[l]
            q += U[l, k] * b[l]
        ct[k] = s + lam[k] * q
        cn += ct[k] * ct[k]
    cn = math.sqrt(cn)
    for k in range(K):
        out[k] = 0.0
    if cn <= t:
        return
    mu = 0.0
    if t > 0.0:
        lmin = math.inf
        lmax = 0.0
        for k in range(K):
            if ct[k] != 0.0:
                q = lam[k] + r
                lmin = min(lmin, q)
                lmax = max(lmax, q)
        lo = t * lmin / (cn - t)
        hi = t * lmax / (cn - t)
        mu = hi
        for it in range(100):
            # g(mu) = sum ct^2 mu^2/(q + mu)^2 - t^2, increasing in mu
            g = -t * t
            dg = 0.0
            for k in range(K):
                q = lam[k] + r
                e = ct[k] * ct[k]
                a = mu / (q + mu)
                g += e * a * a
                dg += 2.0 * e * a * q / ((q + mu) * (q + mu))
            if g > 0.0:
                hi = mu
            else:
                lo = mu
            if abs(g) <= 1e-15 * t * t or hi - lo <= 1e-15 * hi:
                break
            mn = mu - g / dg if dg > 0.0 else 0.5 * (lo + hi)
            if not (mn > lo and mn < hi):
                mn = 0.5 * (lo + hi)
            mu = mn
    for k in range(K):
        q = lam[k] + r + mu
        if ct[k] == 0.0 or not (q > 0.0):
            continue
        zk = ct[k] / q
        for l in range(K):
            out[l] += U[l, k] * zk


@njit(cache=True, nogil=True, fastmath=_FM)
def _gpass_newton(
    idx,
    m,
    Xt,
    yc,
    w,
    T,
    sc,
    Lb,
    floor_c,
    pf,
    l1,
    l2,
    use_P,
    P,
    PB,
    B,
    b,
    F,
    R,
    Pi,
    E,
    Gst,
    xv,
    intercept,
    sw,
    fresh,
    outer,
    stamp,
    Uc,
    Lc,
    Cc,
    A0,
):
    """One block coordinate pass over rows idx[:m] on the grouped proximal-Newton (IRLS) model.

    The quadratic model of the loss at the start of an outer iteration (``fresh``: ``R``, ``Pi``
    from :func:`_gstate` at the current fits) uses the exact per-row Hessians
    ``H_i = s w_i (diag(beta_i) - beta_i beta_i')/T`` plus ``w_i floor_c (I - 11'/K)``, which
    keeps the model well posed where the loss is flat and, like ``H_i``, annihilates the
    constant vector. Later (inner) passes of the same outer iteration continue on that model:
    ``E`` is its negative gradient, kept exact under the updates. As in the binary IRLS pass
    the intercepts are profiled out (kept at the minimiser of the model given the coefficients,
    their pending shift ``db`` applied at the end of the pass), so each block step is the joint
    minimiser over (intercepts, block) of the model: block ``j`` has the curvature
    ``S_j = M_j - C_j M_0^+ C_j`` (``M_j = (1/n) sum x_ij^2 H_i``, ``C_j = (1/n) sum x_ij H_i``,
    ``M_0 = (1/n) sum H_i``), whose eigendecomposition is cached per outer iteration
    (``stamp[j] == outer``) in ``Uc``, ``Lc``, ``Cc`` (and ``A0`` = ``(M_0 + tau 11'/K)^-1``,
    then ``M_0`` in ``A0[K:]``); the block update is the exact minimiser of its model, a group
    soft-thresholding with the anisotropic curvature (:func:`_group_prox`). Unlike Boehning's
    global bound (``s/(2T)`` everywhere, which makes steps up to ``1/T`` times too short where
    the loss is nearly linear, i.e. almost everywhere at small T), these curvatures follow the
    data; the caller halves the step of an outer iteration when the true objective rises.
    Returns (max_j h_j ||delta_j||^2, largest KKT violation seen before the updates).
    """
    K, n = F.shape
    v = np.empty(K)
    cmv = np.empty(K)
    d = np.empty(K)
    tt = np.empty(K)
    hd = np.empty(K)
    db = np.zeros(K)
    Mj = np.empty((K, K))
    Cj = np.empty((K, K))
    CA = np.empty((K, K))
    fK = 1.0 / K
    if fresh:
        for k in range(K):
            for i in range(n):
                E[k, i] = R[k, i]
    if intercept:
        if fresh:
            # M0 (a Laplacian: M0 1 = 0) + (tau/K) 11' is invertible and its inverse acts as
            # M0^+ on vectors with zero sum (all gradients and curvature products here)
            M0 = np.zeros((K, K))
            for i in range(n):
                if w[i] > 0.0:
                    a = w[i] * sc / T
                    fl = w[i] * floor_c
                    for k in range(K):
                        tt[k] = a * Pi[k, i]
                    for k in range(K):
                        for l in range(K):
                            M0[k, l] += (tt[k] + fl if k == l else 0.0) - tt[k] * Pi[l, i] - fl * fK
            tau = 0.0
            for k in range(K):
                tau += M0[k, k] / n
            tau = tau / K if tau > 0.0 else 1.0
            for k in range(K):
                for l in range(K):
                    M0[k, l] /= n
                    A0[K + k, l] = M0[k, l]
                    M0[k, l] += tau * fK
            Ai = np.linalg.inv(M0)
            for k in range(K):
                for l in range(K):
                    A0[k, l] = Ai[k, l]
        for k in range(K):
            se = 0.0
            for i in range(n):
                se += E[k, i]
            v[k] = se / n
        for k in range(K):
            s = 0.0
            for l in range(K):
                s += A0[k, l] * v[l]
            db[k] = s
    dmax = 0.0
    kk = 0.0
    for q in range(m):
        j = idx[q]
        xj = Xt[j]
        pj = pf[j]
        Pjj = P[j, j] if use_P else 1.0
        for k in range(K):
            v[k] = _dot(xj, E[k]) / n
        if stamp[j] != outer:
            # curvature of the block in this outer iteration: M_j, C_j, the Schur complement
            for k in range(K):
                for l in range(K):
                    Mj[k, l] = 0.0
                    Cj[k, l] = 0.0
            for i in range(n):
                xi = xj[i]
                if xi != 0.0 and w[i] > 0.0:
                    a = w[i] * sc / T
                    fl = w[i] * floor_c
                    x2 = xi * xi
                    for k in range(K):
                        tt[k] = a * Pi[k, i]
                    for k in range(K):
                        for l in range(K):
                            h = (tt[k] + fl if k == l else 0.0) - tt[k] * Pi[l, i] - fl * fK
                            Mj[k, l] += x2 * h
                            Cj[k, l] += xi * h
            for k in range(K):
                for l in range(K):
                    Mj[k, l] /= n
                    Cj[k, l] /= n
            if intercept:
                for k in range(K):
                    for l in range(K):
                        s = 0.0
                        for r in range(K):
                            s += Cj[k, r] * A0[r, l]
                        CA[k, l] = s
                for k in range(K):
                    for l in range(K):
                        s = 0.0
                        for r in range(K):
                            s += CA[k, r] * Cj[r, l]
                        Mj[k, l] -= s
            for k in range(K):
                for l in range(k):
                    s = 0.5 * (Mj[k, l] + Mj[l, k])
                    Mj[k, l] = s
                    Mj[l, k] = s
            lam_s, U = np.linalg.eigh(Mj)
            lo_c = floor_c * xv[j] * 1e-3
            for k in range(K):
                lk = lam_s[k]
                if not (lk >= lo_c):
                    lk = lo_c
                if lk > (Lb + floor_c) * xv[j]:
                    lk = (Lb + floor_c) * xv[j]
                Lc[j, k] = lk
                for l in range(K):
                    Uc[j, l, k] = U[l, k]
                    Cc[j, k, l] = Cj[k, l]
            stamp[j] = outer
        if intercept:
            # profiled gradient: v - C_j db
            for k in range(K):
                s = 0.0
                for l in range(K):
                    s += Cc[j, k, l] * db[l]
                v[k] -= s
        H = Lc[j, K - 1]
        bn = 0.0
        for k in range(K):
            bn += B[k, j] * B[k, j]
        bn = math.sqrt(bn)
        rn = 0.0
        gn = 0.0
        for k in range(K):
            cmv[k] = (PB[k, j] - Pjj * B[k, j]) if use_P else 0.0
            gk = v[k] - l2 * pj * (cmv[k] + Pjj * B[k, j])
            Gst[k, j] = gk
            gn += gk * gk
            if bn > 0.0:
                gk -= l1 * pj * B[k, j] / bn
            rn += gk * gk
        viol = math.sqrt(rn) if bn > 0.0 else max(math.sqrt(gn) - l1 * pj, 0.0)
        if viol > kk:
            kk = viol
        # exact minimiser of the block model: z = B_j + d solves (S + r I + mu I) z = c with
        # mu = l1 pf / ||z|| (group soft-thresholding with an anisotropic curvature)
        for k in range(K):
            tt[k] = v[k] - (l2 * pj * cmv[k] if use_P else 0.0)
            d[k] = B[k, j]
        _group_prox(Lc[j], Uc[j], tt, d, l2 * pj * Pjj, l1 * pj, hd)
        mean = 0.0
        for k in range(K):
            mean += hd[k]
        mean /= K
        ch = 0.0
        for k in range(K):
            hd[k] -= mean
            d[k] = hd[k] - B[k, j]
            ch += d[k] * d[k]
            B[k, j] = hd[k]
        if ch > 0.0:
            for i in range(n):
                xi = xj[i]
                if xi != 0.0:
                    a = xi * w[i] * sc / T
                    fl = xi * w[i] * floor_c
                    pd = 0.0
                    for k in range(K):
                        pd += Pi[k, i] * d[k]
                    for k in range(K):
                        E[k, i] -= a * Pi[k, i] * (d[k] - pd) + fl * d[k]
                        F[k, i] += xi * d[k]
            if use_P:
                Pj = P[j]
                for k in range(K):
                    dk = d[k]
                    if dk != 0.0:
                        for i in range(PB.shape[1]):
                            PB[k, i] += Pj[i] * dk
            if intercept:
                # the intercepts follow: db -= A^-1 C_j d
                for k in range(K):
                    s = 0.0
                    for l in range(K):
                        s += Cc[j, k, l] * d[l]
                    hd[k] = s
                for k in range(K):
                    s = 0.0
                    for l in range(K):
                        s += A0[k, l] * hd[l]
                    db[k] -= s
            if H * ch > dmax:
                dmax = H * ch
    if intercept:
        mean = 0.0
        for k in range(K):
            mean += db[k]
        mean /= K
        ch = 0.0
        for k in range(K):
            d[k] = db[k] - mean
            if not math.isfinite(d[k]):
                return dmax, kk
        for k in range(K):
            b[k] += d[k]
            for i in range(n):
                F[k, i] += d[k]
        # the model residual follows the intercepts: E_i -= H_i d
        for i in range(n):
            if w[i] > 0.0:
                a = w[i] * sc / T
                fl = w[i] * floor_c
                pd = 0.0
                for k in range(K):
                    pd += Pi[k, i] * d[k]
                for k in range(K):
                    E[k, i] -= a * Pi[k, i] * (d[k] - pd) + fl * d[k]
        for k in range(K):
            s = 0.0
            for l in range(K):
                s += A0[K + k, l] * d[l]
            ch += d[k] * s
        if ch > dmax:
            dmax = ch
    return dmax, kk


# --------------------------------------------------------------------------- shared driver
# The coefficients are a (G, p) array B (G = 1: binary; G = K: one row of K class coefficients
# per coordinate, kept as a column of B), the fits a (G, n) array F, the smooth KKT residuals a
# (G, p) array Gst. Binary problems use row 0 of each as 1-D views.
@njit(cache=True, nogil=True)
def _objective_any(code, p1, p2, y, yc, w, F, B, pf, l1, l2, use_P, PB):
    if code == LOSS_MCOH:
        return _gobjective(F, yc, w, p1, p2, B, pf, l1, l2, use_P, PB)
    if code == LOSS_ALUM:
        return _aobjective(F, yc, w, p1, p2, B, pf, l1, l2, use_P, PB)
    return _objective(code, p1, p2, y, w, F[0], B[0], pf, l1, l2, use_P, PB[0])


@njit(cache=True, nogil=True)
def _resid_any(code, p1, p2, y, yc, w, F, R):
    """Negative loss gradient in the fit, (G, n)."""
    if code == LOSS_MCOH:
        _gresid(F, yc, w, p1, p2, R)
    elif code == LOSS_ALUM:
        _aresid(F, yc, w, p1, p2, R)
    else:
        _neg_grad(code, p1, p2, y, w, F[0], R[0])


@njit(cache=True, nogil=True)
def _grad_into(Xt, R, Gst, B, PB, use_P, l2, pf, sel, which):
    """Gst[k, j] = (1/n) sum_i x_ij R[k, i] - l2 pf_j (P B)_kj for j with sel[j] == which."""
    G, n = R.shape
    if G == 1:  # binary problems: 1-D rows (measurably faster when p >> n)
        r = R[0]
        gst = Gst[0]
        beta = B[0]
        Pbeta = PB[0]
        for j in range(Xt.shape[0]):
            if sel[j] == which:
                g = _dot(Xt[j], r) / n
                q = Pbeta[j] if use_P else beta[j]
                gst[j] = g - l2 * pf[j] * q
        return
    for j in range(Xt.shape[0]):
        if sel[j] == which:
            for k in range(G):
                g = _dot(Xt[j], R[k]) / n
                q = PB[k, j] if use_P else B[k, j]
                Gst[k, j] = g - l2 * pf[j] * q


@njit(cache=True, nogil=True)
def _gnorm(Gst, j):
    if Gst.shape[0] == 1:
        return abs(Gst[0, j])
    s = 0.0
    for k in range(Gst.shape[0]):
        s += Gst[k, j] * Gst[k, j]
    return math.sqrt(s)


@njit(cache=True, nogil=True)
def _nz(B, j):
    for k in range(B.shape[0]):
        if B[k, j] != 0.0:
            return True
    return False


@njit(cache=True, nogil=True)
def _kkt_term(g, t, bj):
    """KKT violation of one coordinate: smooth residual g, l1 threshold t, coefficient bj."""
    if bj > 0.0:
        return abs(g - t)
    if bj < 0.0:
        return abs(g + t)
    return max(abs(g) - t, 0.0)


@njit(cache=True, nogil=True)
def _kkt_j(Gst, B, j, t):
    """KKT violation of coordinate (group) j with l1 threshold t: the distance of the smooth
    residual Gst[:, j] from t times the subdifferential of ||B[:, j]||_2 (|.| when G = 1)."""
    if B.shape[0] == 1:
        return _kkt_term(Gst[0, j], t, B[0, j])
    bn = 0.0
    for k in range(B.shape[0]):
        bn += B[k, j] * B[k, j]
    if bn == 0.0:
        return max(_gnorm(Gst, j) - t, 0.0)
    bn = math.sqrt(bn)
    s = 0.0
    for k in range(B.shape[0]):
        gk = Gst[k, j] - t * B[k, j] / bn
        s += gk * gk
    return math.sqrt(s)


@njit(cache=True, nogil=True)
def _kkt_violation(Gst, B, pf, l1, excl):
    """Largest KKT violation given the smooth residuals Gst."""
    kk = 0.0
    for j in range(B.shape[1]):
        if excl[j]:
            continue
        v = _kkt_j(Gst, B, j, l1 * pf[j])
        if v > kk:
            kk = v
    return kk


@njit(cache=True, nogil=True)
def _ghalve(B, B_old, b, b_old, F, F_old, PB, PB_old, use_P):
    """Move the grouped state halfway back to its saved start (step halving)."""
    for k in range(B.shape[0]):
        b[k] = 0.5 * (b[k] + b_old[k])
        for j in range(B.shape[1]):
            B[k, j] = 0.5 * (B[k, j] + B_old[k, j])
        for i in range(F.shape[1]):
            F[k, i] = 0.5 * (F[k, i] + F_old[k, i])
        if use_P:
            for i in range(PB.shape[1]):
                PB[k, i] = 0.5 * (PB[k, i] + PB_old[k, i])


@njit(cache=True, nogil=True)
def _grestore(B, B_old, b, b_old, F, F_old, PB, PB_old, use_P):
    _gsave(B_old, B, b_old, b, F_old, F, PB_old, PB, use_P)


@njit(cache=True, nogil=True)
def _gsave(B, B_old, b, b_old, F, F_old, PB, PB_old, use_P):
    """Save the grouped state (B, b, F, PB) into the *_old arrays."""
    B_old[:, :] = B
    b_old[:] = b
    F_old[:, :] = F
    if use_P:
        PB_old[:, :] = PB


#: inner passes over the quadratic model per outer (Newton) iteration of the grouped problem
_GN_INNER = 10


@njit(cache=True, nogil=True)
def _solve_set(
    Xt,
    y,
    yc,
    w,
    code,
    p1,
    p2,
    mode,
    Lb,
    floor_c,
    pf,
    l1,
    l2,
    use_P,
    P,
    PB,
    B,
    b,
    F,
    inS,
    intercept,
    thr,
    max_pass,
    xv,
    W,
    R,
    E,
    Gst,
    idxS,
    idxA,
    ones,
    sw,
):
    """Minimise the objective over the coordinates with inS[j] (others fixed at their values).

    Passes alternate glmnet-style between the whole set S and its active (nonzero) part; the
    problem is solved when a pass over S changes no coordinate by more than the threshold and
    (IRLS and MM modes) the KKT residuals of that pass are below ``sqrt(thr)``.
    Binary problems: in IRLS mode the curvatures and the working residual are refreshed from the
    current fit before every pass (an inexact Newton method whose inner solve is one coordinate
    pass), and a pass that increases the objective is halved back towards its start (up to 30
    times,). Grouped problems: one majorise-minimise pass (:func:`_gpass`) per pass.

    Updates B, b, F, PB, Gst in place; returns (passes, converged).
    """
    p = B.shape[1]
    n = F.shape[1]
    group = code == LOSS_MCOH or code == LOSS_ALUM
    kgate = math.sqrt(thr)
    mS = 0
    for j in range(p):
        if inS[j]:
            idxS[mS] = j
            mS += 1
    mA = 0
    passes = 0
    full = True
    irls = mode == MODE_IRLS and not group
    beta = B[0]
    f = F[0]
    Pbeta = PB[0]
    gst = Gst[0]
    r = R[0]
    e = E[0]
    bb = b[0]
    dst = np.zeros(2)
    gnewton = code == LOSS_MCOH and mode == MODE_IRLS  # the Newton passes are the coherence loss's
    if gnewton:
        G = F.shape[0]
        Pi = np.empty((G, n))
        B_old = B.copy()
        F_old = F.copy()
        PB_old = PB.copy()
        b_old_g = b.copy()
        gobj = math.inf
        stamp = np.full(p, -1, dtype=np.int64)
        Uc = np.empty((p, G, G))
        Lc = np.empty((p, G))
        Cc = np.empty((p, G, G))
        A0 = np.zeros((2 * G, G))
        outer = 0
        inner = 0
        refresh = True
        fresh = True
    if irls:
        beta_old = np.empty(p)
        f_old = np.empty(n)
        Pb_old = np.empty(Pbeta.shape[0])
        obj = math.inf
        b_old = bb
        m_old = 0
        idx_old = idxS
    while passes < max_pass:
        if full:
            idx = idxS
            m = mS
        else:
            idx = idxA
            m = mA
        kk = -1.0
        if gnewton:
            # proximal Newton for the grouped problem. An outer iteration starts from the state
            # (gradient, soft weights, objective) at the current fits; if the last outer step
            # raised the objective it is first halved back towards its start, and if 30 halvings
            # do not help it is undone and replaced by a Boehning majorise-minimise pass, which
            # cannot raise it. Inner passes (up to _GN_INNER) minimise the quadratic model.
            use_mm = False
            fresh = False
            if refresh:
                obj_new = _gstate(F, yc, w, p1, p2, R, Pi) + _gpenalty(B, pf, l1, l2, use_P, PB)
                nh = 0
                while not (obj_new <= gobj + 1e-12 * abs(gobj)) and nh < 30:
                    nh += 1
                    _ghalve(B, B_old, b, b_old_g, F, F_old, PB, PB_old, use_P)
                    obj_new = _gstate(F, yc, w, p1, p2, R, Pi) + _gpenalty(B, pf, l1, l2, use_P, PB)
                if not (obj_new <= gobj + 1e-12 * abs(gobj)):
                    _grestore(B, B_old, b, b_old_g, F, F_old, PB, PB_old, use_P)
                    obj_new = _gstate(F, yc, w, p1, p2, R, Pi) + _gpenalty(B, pf, l1, l2, use_P, PB)
                    use_mm = True
                gobj = obj_new
                _gsave(B, B_old, b, b_old_g, F, F_old, PB, PB_old, use_P)
                outer += 1
                inner = 0
                fresh = True
                refresh = False
            if use_mm:
                dmax, kk = _gpass(
                    idx, m, Xt, yc, w, p1, p2, Lb, pf, l1, l2, use_P, P, PB, B, b, F, R, E, Gst, xv, intercept, sw, code
                )
                refresh = True
            else:
                dmax, kk = _gpass_newton(
                    idx,
                    m,
                    Xt,
                    yc,
                    w,
                    p1,
                    p2,
                    Lb,
                    floor_c,
                    pf,
                    l1,
                    l2,
                    use_P,
                    P,
                    PB,
                    B,
                    b,
                    F,
                    R,
                    Pi,
                    E,
                    Gst,
                    xv,
                    intercept,
                    sw,
                    fresh,
                    outer,
                    stamp,
                    Uc,
                    Lc,
                    Cc,
                    A0,
                )
                inner += 1
                if inner >= _GN_INNER:
                    refresh = True
                # every pass is checked on the true objective: a pass that lowered it becomes the
                # point that later steps are halved back to; one that raised it ends the outer
                # iteration (the next one starts by halving it back)
                ob = _gobjective(F, yc, w, p1, p2, B, pf, l1, l2, use_P, PB)
                if ob <= gobj + 1e-12 * abs(gobj):
                    gobj = ob
                    _gsave(B, B_old, b, b_old_g, F, F_old, PB, PB_old, use_P)
                else:
                    refresh = True
        elif group:
            dmax, kk = _gpass(
                idx, m, Xt, yc, w, p1, p2, Lb, pf, l1, l2, use_P, P, PB, B, b, F, R, E, Gst, xv, intercept, sw, code
            )
        else:
            if irls:
                # refresh curvatures/gradients; the same loop gives the objective of the last
                # pass, which is halved back towards its start if it went up ()
                obj_new = loss_eval_sum(code, p1, p2, y, w, f, W, r, floor_c) + _penalty(beta, pf, l1, l2, use_P, Pbeta)
                nh = 0
                while obj_new > obj + 1e-12 * abs(obj) and nh < 30:
                    nh += 1
                    for k in range(m_old):
                        j = idx_old[k]
                        beta[j] = 0.5 * (beta[j] + beta_old[j])
                    for i in range(n):
                        f[i] = 0.5 * (f[i] + f_old[i])
                    if use_P:
                        for i in range(Pbeta.shape[0]):
                            Pbeta[i] = 0.5 * (Pbeta[i] + Pb_old[i])
                    bb = 0.5 * (bb + b_old)
                    obj_new = loss_eval_sum(code, p1, p2, y, w, f, W, r, floor_c) + _penalty(
                        beta, pf, l1, l2, use_P, Pbeta
                    )
                obj = obj_new
                for i in range(n):
                    e[i] = r[i]
                for k in range(m):
                    beta_old[idx[k]] = beta[idx[k]]
                f_old[:] = f
                if use_P:
                    Pb_old[:] = Pbeta
                b_old = bb
                m_old = m
                idx_old = idx
            dmax = 0.0
            if irls and intercept:
                d, v = _intercept_step(mode, code, p1, p2, y, w, f, e, W, Lb, sw, ones)
                bb += d
                dmax = v
                sWt = 0.0
                for i in range(n):
                    sWt += W[i]
                dst[0] = 0.0
                dst[1] = sWt
            dc = _cycle(
                idx,
                m,
                Xt,
                y,
                w,
                f,
                e,
                W,
                gst,
                beta,
                pf,
                l1,
                l2,
                use_P,
                P,
                Pbeta,
                mode,
                code,
                p1,
                p2,
                Lb,
                xv,
                irls and intercept and dst[1] > 0.0,
                dst,
            )
            if dc > dmax:
                dmax = dc
            if irls and intercept and dst[0] != 0.0:
                D = dst[0]
                for i in range(n):
                    e[i] -= W[i] * D
                    f[i] += D
                bb += D
                v = (dst[1] / n) * D * D
                if v > dmax:
                    dmax = v
            elif intercept:
                d, v = _intercept_step(mode, code, p1, p2, y, w, f, e, W, Lb, sw, ones)
                bb += d
                if v > dmax:
                    dmax = v
            b[0] = bb
        passes += 1
        if full:
            if dmax < thr:
                if mode == MODE_EXACT:
                    return passes, True
                if gnewton and not fresh:
                    # the model is solved: convergence is judged on a fresh outer iteration
                    refresh = True
                    continue
                # also require the KKT conditions (residuals Gst from this pass) to hold to
                # sqrt(thr): small steps alone can hide slow progress (ill-conditioned kernels)
                if kk < 0.0:
                    kk = 0.0
                    for k in range(mS):
                        j = idxS[k]
                        v = _kkt_j(Gst, B, j, l1 * pf[j])
                        if v > kk:
                            kk = v
                if kk <= kgate:
                    if gnewton:
                        # the last (small) step is kept only if it did not raise the objective
                        ob = _gstate(F, yc, w, p1, p2, R, Pi) + _gpenalty(B, pf, l1, l2, use_P, PB)
                        if not (ob <= gobj + 1e-12 * abs(gobj)):
                            _grestore(B, B_old, b, b_old_g, F, F_old, PB, PB_old, use_P)
                    return passes, True
            mA = 0
            for k in range(mS):
                j = idxS[k]
                if _nz(B, j) or pf[j] == 0.0:
                    idxA[mA] = j
                    mA += 1
            full = False
        elif dmax < thr:
            full = True
    if gnewton:
        # out of passes: the last Newton pass is kept only if it did not raise the objective
        ob = _gstate(F, yc, w, p1, p2, R, Pi) + _gpenalty(B, pf, l1, l2, use_P, PB)
        if not (ob <= gobj + 1e-12 * abs(gobj)):
            _grestore(B, B_old, b, b_old_g, F, F_old, PB, PB_old, use_P)
    return passes, False


@njit(cache=True, nogil=True)
def _null_fit(Xt, y, yc, w, code, p1, p2, mode, Lb, floor_c, pf, use_P, P, excl, intercept, thr, max_pass, xv, sw, G):
    """Fit with only the unpenalised coordinates free (pf == 0); returns B, b, F, PB."""
    p = Xt.shape[0]
    n = w.shape[0]
    B = np.zeros((G, p))
    PB = np.zeros((G, P.shape[0] if use_P else 1))
    F = np.zeros((G, n))
    b = np.zeros(G)
    inS = np.zeros(p, dtype=np.bool_)
    for j in range(p):
        inS[j] = pf[j] == 0.0 and not excl[j]
    W = np.empty(n)
    R = np.empty((G, n))
    E = np.empty((G, n))
    Gst = np.zeros((G, p))
    idxS = np.empty(p, dtype=np.int64)
    idxA = np.empty(p, dtype=np.int64)
    ones = np.ones(n)
    if intercept and code != LOSS_MCOH and code != LOSS_ALUM:
        # start the intercept at its exact 1-D minimiser (robust for every loss)
        b[0] = _solve_1d(code, p1, p2, y, w, F[0], ones, 0.0, 0.0, 0.0, 0.0)
        for i in range(n):
            F[0, i] = b[0]
    _solve_set(
        Xt,
        y,
        yc,
        w,
        code,
        p1,
        p2,
        mode,
        Lb,
        floor_c,
        pf,
        0.0,
        0.0,
        use_P,
        P,
        PB,
        B,
        b,
        F,
        inS,
        intercept,
        thr,
        max_pass,
        xv,
        W,
        R,
        E,
        Gst,
        idxS,
        idxA,
        ones,
        sw,
    )
    return B, b, F, PB


@njit(cache=True, nogil=True)
def _path_core(
    Xt,
    y,
    yc,
    w,
    code,
    p1,
    p2,
    mode,
    lambdas,
    alpha,
    pf,
    use_P,
    P,
    excl,
    intercept,
    tol,
    max_iter,
    xv,
    exact_kkt,
    cont,
    G,
):
    """The one path driver: warm starts, sequential strong rule, KKT check, per-lambda records.

    Serves the binary problems (``G = 1``, any scalar loss code, identity or kernel penalty
    matrix) and the grouped K-class problems (``code = LOSS_MCOH``, ``G = K``; ``code = LOSS_ALUM``,
    ``G = K - 1``).
    Returns b0 (nlam, G), B (nlam, G, p), n_iter, converged, objective, kkt, null objective.
    """
    p = Xt.shape[0]
    n = w.shape[0]
    nlam = lambdas.shape[0]
    group = code == LOSS_MCOH or code == LOSS_ALUM
    Lb = loss_curv_bound(code, p1, p2)
    floor_c = 1e-6 * Lb if (Lb < math.inf and Lb > 0.0) else 1e-6
    sw = 0.0
    for i in range(n):
        sw += w[i]
    Bs = np.zeros((nlam, G, p))
    b0 = np.zeros((nlam, G))
    n_iter = np.zeros(nlam, dtype=np.int64)
    conv = np.zeros(nlam, dtype=np.bool_)
    objs = np.zeros(nlam)
    kkts = np.zeros(nlam)
    # intercept-only (plus unpenalised coordinates) fit sets the scale of the tolerance
    if group:
        B, b, F, PB = _null_fit(
            Xt, y, yc, w, code, p1, p2, mode, Lb, floor_c, pf, use_P, P, excl, intercept, 1e-16, 100000, xv, sw, G
        )
    else:
        B, b, F, PB = _null_fit(
            Xt,
            y,
            yc,
            w,
            code,
            p1,
            p2,
            mode,
            Lb,
            floor_c,
            pf,
            use_P,
            P,
            excl,
            intercept,
            1e-3 * tol,
            max_iter,
            xv,
            sw,
            G,
        )
    obj0 = _objective_any(code, p1, p2, y, yc, w, F, B, pf, 0.0, 0.0, use_P, PB)
    thr = tol * max(obj0, 1e-10)
    W = np.empty(n)
    R = np.empty((G, n))
    E = np.empty((G, n))
    idxS = np.empty(p, dtype=np.int64)
    idxA = np.empty(p, dtype=np.int64)
    ones = np.ones(n)
    Gst = np.empty((G, p))
    inS = np.zeros(p, dtype=np.bool_)
    ever = np.zeros(p, dtype=np.bool_)
    for j in range(p):
        if pf[j] == 0.0 and not excl[j]:
            ever[j] = True
    _resid_any(code, p1, p2, y, yc, w, F, R)
    _grad_into(Xt, R, Gst, B, PB, use_P, 0.0, pf, inS, False)
    lam_prev = -1.0
    for k in range(nlam):
        lam = lambdas[k]
        l1 = lam * alpha
        l2 = lam * (1.0 - alpha)
        if lam_prev < 0.0:
            lam_prev = lam
        # sequential strong rule (Gst holds the smooth KKT residuals at the previous solution)
        cut = alpha * (2.0 * lam - lam_prev)
        if G == 1:
            beta = B[0]
            gst = Gst[0]
            for j in range(p):
                inS[j] = (not excl[j]) and (ever[j] or beta[j] != 0.0 or abs(gst[j]) >= cut * pf[j])
        else:
            for j in range(p):
                inS[j] = (not excl[j]) and (ever[j] or _nz(B, j) or _gnorm(Gst, j) >= cut * pf[j])
        total = 0
        ok = False
        # continuation in the second loss parameter (LUM's c): solve a sequence of smoother
        # problems first, each warm-starting the next (see cd_path's notes)
        for q in range(cont.shape[0]):
            Lq = Lb if mode != MODE_MM else loss_curv_bound(code, p1, cont[q])
            passes, ok = _solve_set(
                Xt,
                y,
                yc,
                w,
                code,
                p1,
                cont[q],
                mode,
                Lq,
                floor_c,
                pf,
                l1,
                l2,
                use_P,
                P,
                PB,
                B,
                b,
                F,
                inS,
                intercept,
                thr * 100.0,
                max_iter - total,
                xv,
                W,
                R,
                E,
                Gst,
                idxS,
                idxA,
                ones,
                sw,
            )
            total += passes
        while True:
            passes, ok = _solve_set(
                Xt,
                y,
                yc,
                w,
                code,
                p1,
                p2,
                mode,
                Lb,
                floor_c,
                pf,
                l1,
                l2,
                use_P,
                P,
                PB,
                B,
                b,
                F,
                inS,
                intercept,
                thr,
                max_iter - total,
                xv,
                W,
                R,
                E,
                Gst,
                idxS,
                idxA,
                ones,
                sw,
            )
            total += passes
            # KKT check on the coordinates outside the strong set
            _resid_any(code, p1, p2, y, yc, w, F, R)
            _grad_into(Xt, R, Gst, B, PB, use_P, l2, pf, inS, False)
            added = 0
            gst = Gst[0]
            for j in range(p):
                if not inS[j] and not excl[j]:
                    gn = abs(gst[j]) if G == 1 else _gnorm(Gst, j)
                    if gn > l1 * pf[j] * (1.0 + 1e-12) + 1e-300:
                        inS[j] = True
                        added += 1
            if added == 0 or total >= max_iter:
                break
        if exact_kkt:
            _grad_into(Xt, R, Gst, B, PB, use_P, l2, pf, inS, True)
        if G == 1:
            beta = B[0]
            Bk = Bs[k, 0]
            for j in range(p):
                bj = beta[j]
                Bk[j] = bj
                if bj != 0.0:
                    ever[j] = True
            b0[k, 0] = b[0]
        else:
            for j in range(p):
                if _nz(B, j):
                    ever[j] = True
            Bs[k] = B
            b0[k] = b
        n_iter[k] = total
        conv[k] = ok
        objs[k] = _objective_any(code, p1, p2, y, yc, w, F, B, pf, l1, l2, use_P, PB)
        kkts[k] = _kkt_violation(Gst, B, pf, l1, excl) if exact_kkt else math.nan
        lam_prev = lam
    return b0, Bs, n_iter, conv, objs, kkts, obj0


# =========================================================================== Python layer
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


_EMPTY_P = np.zeros((1, 1))


def lambda_max(X, y, w, loss_code, p1, p2, alpha, standardize=True, penalty_factor=None, intercept=True):
    """Smallest ``lambda`` at which every penalised coefficient is zero.

    ``lambda_max = max_j |(1/n) sum_i x_ij r_i| / (alpha pf_j)`` with ``r_i`` the negative
    gradient at the intercept-only fit (plus the unpenalised coordinates) and ``x_ij`` the
    standardised column. For ``alpha < 1e-3`` (including the pure ridge ``alpha = 0``, where no
    finite value zeroes the coefficients) glmnet's convention is used: the value computed with
    ``alpha = 1e-3``, a penalty at which the ridge fit is essentially the null model.

    Examples
    --------
    >>> import numpy as np
    >>> from cohstats.solvers.cd.path import lambda_max
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]]); y = np.array([-1.0, -1.0, 1.0, 1.0])
    >>> round(lambda_max(X, y, None, 7, 0.0, 0.0, 1.0), 6)   # logistic: |mean(x_std * y/2)|
    0.447214
    """
    loss_code, p1, p2 = _check_loss(loss_code, p1, p2)
    X, y, w = _check_xyw(X, y, w)
    alpha = _check_alpha(alpha)
    pf = _check_pf(penalty_factor, X.shape[1])
    Xt, center, scale, excl = standardize_design(X, w, standardize, intercept)
    mode = default_mode(loss_code)
    return _lambda_max_std(Xt, y, w, loss_code, p1, p2, alpha, pf, excl, intercept, mode, False, _EMPTY_P)


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


_NO_YC = np.zeros(1, dtype=np.int64)


def _lambda_max_std(Xt, y, w, code, p1, p2, alpha, pf, excl, intercept, mode, use_P, P, yc=None, G=1):
    """lambda_max on the prepared design (see :func:`lambda_max`); grouped problems use the
    Euclidean norm of each coordinate's K gradient entries."""
    n = w.shape[0]
    group = code == LOSS_MCOH or code == LOSS_ALUM
    yc = _NO_YC if yc is None else yc
    Lb = loss_curv_bound(code, p1, p2)
    floor_c = 1e-6 * Lb if (np.isfinite(Lb) and Lb > 0) else 1e-6
    B, b, F, PB = _null_fit(
        Xt,
        y,
        yc,
        w,
        code,
        p1,
        p2,
        mode,
        Lb,
        floor_c,
        pf,
        use_P,
        P,
        excl,
        bool(intercept),
        1e-16 if group else 1e-12,
        100000,
        xv_of(Xt, w),
        float(w.sum()),
        G,
    )
    R = np.empty((G, n))
    _resid_any(code, p1, p2, y, yc, w, F, R)
    if G == 1:
        g = np.abs(Xt @ R[0]) / n
    else:
        g = np.sqrt(((Xt @ R.T / n) ** 2).sum(axis=1))
    a = max(alpha, 1e-3)
    m = (pf > 0) & ~excl
    if not np.any(m):
        return math.inf
    val = float(np.max(g[m] / (a * pf[m])))
    return val if val > 0 else 1e-10


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


def cd_path(
    X,
    y,
    w,
    loss_code,
    p1,
    p2,
    lambdas,
    alpha,
    standardize=True,
    tol=1e-7,
    max_iter=10000,
    penalty_factor=None,
    intercept=True,
    mode=None,
    warn=True,
    exact_kkt=True,
):
    """Elastic-net penalised margin-loss fit along a sequence of ``lambda`` values.

    Minimises, for each ``lambda`` in turn (warm started from the previous solution),

    ``(1/n) sum_i w_i phi(y_i (b + x_i'beta)) + lambda sum_j pf_j ((1-alpha)/2 beta_j^2 + alpha |beta_j|)``

    where ``phi`` is the loss ``loss_code`` with parameters ``(p1, p2)``
    (:mod:`cohstats.losses.scalar`), ``w`` is normalised to mean 1, and with ``standardize=True``
    the penalty applies to the coefficients of the weighted-standardised columns (glmnet's
    convention); coefficients are returned on the original scale.

    Parameters
    ----------
    X : (n, p) array
    y : (n,) array of -1/+1
    w : (n,) nonnegative observation weights or None
    loss_code : int, a code of :mod:`cohstats.losses.scalar`
    p1, p2 : loss parameters (rho, u for the C-/V-losses; delta for hhinge; a, c for LUM)
    lambdas : 1-D array of penalties, best given decreasing (warm starts follow the order)
    alpha : float in [0, 1], the l1 share of the elastic net (the papers' omega)
    standardize : bool
    tol : float, convergence threshold relative to the intercept-only objective (glmnet's thr)
    max_iter : int, maximum number of coordinate passes per ``lambda``
    penalty_factor : (p,) nonnegative factors ``pf_j`` (0 = unpenalised); used as given
        (glmnet rescales them to sum to p; we do not, so the objective is exactly the one above)
    intercept : bool, fit an unpenalised intercept
    mode : None/"auto", "irls", "mm" or "exact" (see the module docstring)
    warn : emit :class:`cohstats.ConvergenceWarning` when some ``lambda`` did not converge
    exact_kkt : compute the exact gradient of every coordinate after each ``lambda`` to report
        ``info["kkt"]`` (one extra pass over X per ``lambda``; NaN is reported when False)

    Returns
    -------
    intercepts : (nlam,) array
    coefs : (nlam, p) array on the original scale
    info : dict with arrays ``n_iter`` (coordinate passes), ``converged``, ``objective``,
        ``df`` (nonzero coefficients), ``kkt`` (largest KKT violation on the standardised scale)
        and scalars ``null_objective``, ``mode``.

    Examples
    --------
    >>> import numpy as np
    >>> from cohstats.solvers.cd.path import cd_path, lambda_max
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((50, 3)); y = np.where(X[:, 0] + rng.standard_normal(50) > 0, 1.0, -1.0)
    >>> lm = lambda_max(X, y, None, 7, 0.0, 0.0, 1.0)
    >>> b0, B, info = cd_path(X, y, None, 7, 0.0, 0.0, [lm, lm / 10], 1.0)
    >>> bool(np.all(B[0] == 0)), bool(B[1, 0] > 0)
    (True, True)
    """
    loss_code, p1, p2 = _check_loss(loss_code, p1, p2)
    X, y, w = _check_xyw(X, y, w)
    alpha = _check_alpha(alpha)
    lam = _check_lambdas(lambdas)
    n, p = X.shape
    pf = _check_pf(penalty_factor, p)
    m = _resolve_mode(mode, loss_code, p1, p2)
    tol, max_iter = _check_tol(tol, max_iter)
    Xt, center, scale, excl = standardize_design(X, w, standardize, intercept)
    xv = _xv(Xt, w)
    b0, B, n_iter, conv, objs, kkts, obj0 = _path_core(
        Xt,
        y,
        _NO_YC,
        w,
        loss_code,
        p1,
        p2,
        m,
        lam,
        alpha,
        pf,
        False,
        _EMPTY_P,
        excl,
        bool(intercept),
        tol,
        max_iter,
        xv,
        bool(exact_kkt),
        continuation_grid(loss_code, p1, p2, m),
        1,
    )
    b0 = b0[:, 0]
    B = B[:, 0, :]
    coefs = B / scale
    intercepts = b0 - coefs @ center if intercept else b0.copy()
    info = dict(
        n_iter=n_iter,
        converged=conv,
        objective=objs,
        df=np.count_nonzero(B, axis=1),
        kkt=kkts,
        null_objective=obj0,
        mode=m,
    )
    if warn and not np.all(conv):
        _warn_conv(lam, conv, max_iter)
    return intercepts, coefs, info


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


def _warn_conv(lam, conv, max_iter, name="lambda"):
    from cohstats.exceptions import ConvergenceWarning

    bad = np.flatnonzero(~conv)
    warnings.warn(
        f"coordinate descent did not converge for {bad.size} of {conv.size} {name} values "
        f"(first at {name}={lam[bad[0]]:.4g}) within max_iter={max_iter} passes; "
        f"increase max_iter or loosen tol",
        ConvergenceWarning,
        stacklevel=3,
    )
