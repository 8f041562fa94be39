"""The grouped problems' pieces shared by both update modes: objectives and loss gradients of the
multicategory coherence loss ([ZJLY]) and of the angle-based LUM, the group penalty, the
majorise-minimise block pass with a global curvature bound, and the saved state that the
proximal-Newton passes (:mod:`cohstats.solvers.cd.group_newton`) halve back to.

Coefficients are (G, p) arrays with one column per coordinate (a group of G entries); see
:mod:`cohstats.solvers.cd.state` for the state tuples.
"""

from __future__ import annotations

import math

import numpy as np
from cohstats._numba_cache import njit


from cohstats._numba_cache import internal
from cohstats.losses.angle import alum_obs_neg_grad, alum_obs_value, simplex_vertices_nb
from cohstats.losses.multiclass import mc_coh_beta_u, mc_coh_loss_u
from cohstats.solvers.cd.scalar import _FM, _dot
from cohstats.solvers.cd.state import KIND_ALUM


@internal
def _gobjective(data, loss, pen, F, B, PB):
    """Objective of the grouped (K-class) problem: (s/n) sum w C(g_i, c_i) + group penalty
    (``C`` with the loss's margin ``u``)."""
    yc, w = data.yc, data.w
    T, sc, u = loss.p1, loss.p2, loss.u
    K, n = F.shape
    g = np.empty(K)
    s = 0.0
    for i in range(n):
        if w[i] > 0.0:
            for k in range(K):
                g[k] = F[k, i]
            s += w[i] * mc_coh_loss_u(g, yc[i], T, u)
    s *= sc / n
    return s + _gpenalty(pen, B, PB)


@internal
def _gresid(F, yc, w, T, sc, u, R):
    """R[k, i] = -s w_i dC/dg_k at g_i = F[:, i] (negative gradient) = s w_i (I[k = c_i] - beta^c_k)
    (``C`` with margin ``u``)."""
    K, n = F.shape
    g = np.empty(K)
    bet = np.empty(K)
    for i in range(n):
        for k in range(K):
            g[k] = F[k, i]
        mc_coh_beta_u(g, yc[i], T, u, bet)
        for k in range(K):
            R[k, i] = -sc * w[i] * bet[k]
        R[yc[i], i] += sc * w[i]


@internal
def _aobjective(data, loss, pen, F, B, PB):
    """Objective of the angle-based LUM: (1/n) sum w L(f_i, y_i) + group penalty, ``L`` the
    loss of form ``loss.u`` (:func:`cohstats.losses.angle.alum_obs_value`)."""
    yc, w = data.yc, data.w
    a, c, form = loss.p1, loss.p2, loss.u
    G, n = F.shape
    Wv = simplex_vertices_nb(G + 1)
    s = 0.0
    for i in range(n):
        if w[i] > 0.0:
            s += w[i] * alum_obs_value(F, i, yc[i], a, c, form, Wv)
    s /= n
    return s + _gpenalty(pen, B, PB)


@internal
def _aresid(F, yc, w, a, c, form, R):
    """R[:, i] = -w_i grad_f L(f_i, y_i) (negative gradient of the angle-based LUM of form ``form``)."""
    G, n = F.shape
    Wv = simplex_vertices_nb(G + 1)
    for i in range(n):
        if w[i] > 0.0:
            alum_obs_neg_grad(F, i, yc[i], a, c, form, Wv, w[i], R)
        else:
            for k in range(G):
                R[k, i] = 0.0


@njit(cache=True, nogil=True, fastmath=_FM, inline="always")
def _block_kkt(pen, ws, j, v, cmv, bn):
    """KKT violation of block ``j`` of a grouped pass before its update.

    ``v`` is the block's loss gradient (negative), ``bn`` the norm of its coefficients; stores
    the smooth residual in ``ws.Gst[:, j]`` and the off-diagonal penalty-matrix part
    ``(P B)_kj - P_jj B_kj`` in ``cmv``.
    """
    B, PB, Gst = ws.B, ws.PB, ws.Gst
    l1, l2, use_P = pen.l1, pen.l2, pen.use_P
    pj = pen.pf[j]
    Pjj = (pen.P[j, j] + pen.Pshift[j]) if use_P else 1.0
    K = B.shape[0]
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
    return viol


@internal(fastmath=_FM)
def _gpass(kind, idx, m, data, loss, pen, ws):
    """One majorise-minimise pass of the grouped problem over rows idx[:m], then the intercepts.

    The working residual is refreshed from the exact gradient; each block update is the exact
    minimiser of the majorised objective (loss curvature bound ``Lb`` times ``xv_j``), a group
    soft-thresholding. ``Gst[:, j]`` receives the smooth KKT residual before the update.
    Updates ``ws`` in place; returns (max_j h_j ||delta_j||^2, largest KKT violation seen before
    the updates).
    """
    Xt, yc, w, xv, sw, intercept = data.Xt, data.yc, data.w, data.xv, data.sw, data.intercept
    T, sc, Lb = loss.p1, loss.p2, loss.Lb
    pf, l1, l2, use_P, P, Psh = pen.pf, pen.l1, pen.l2, pen.use_P, pen.P, pen.Pshift
    B, b, F, PB, R, E = ws.B, ws.b, ws.F, ws.PB, ws.R, ws.E
    K, n = F.shape
    v = np.empty(K)
    cmv = np.empty(K)
    d = np.empty(K)
    if len(kind) == KIND_ALUM:
        _aresid(F, yc, w, T, sc, loss.u, R)  # (T, sc, u) carry LUM's (a, c) and the loss form
    else:
        _gresid(F, yc, w, T, sc, loss.u, R)
    for k in range(K):
        for i in range(n):
            E[k, i] = R[k, i]
    dmax = 0.0
    kk = 0.0
    for q in range(m):
        j = idx[q]
        xj = Xt[j]
        H = Lb * xv[j]
        pj = pf[j]
        Pjj = (P[j, j] + Psh[j]) if use_P else 1.0
        bn = 0.0
        for k in range(K):
            v[k] = _dot(xj, E[k]) / n
            bn += B[k, j] * B[k, j]
        bn = math.sqrt(bn)
        viol = _block_kkt(pen, ws, j, v, cmv, bn)
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
                        Pj = P[j]  # row j of the penalty matrix is P[j] + Psh[j]
                        sd = Psh[j] * dk
                        for i in range(PB.shape[1]):
                            PB[k, i] += Pj[i] * dk + sd
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
        if len(kind) == KIND_ALUM:
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


@internal
def _gpenalty(pen, B, PB):
    """Group elastic-net penalty of the grouped problem."""
    pf, l1, l2, use_P = pen.pf, pen.l1, pen.l2, pen.use_P
    K = B.shape[0]
    tot = 0.0
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
            tot += pf[j] * (0.5 * l2 * q + l1 * math.sqrt(nn))
    return tot


@internal
def _ghalve(ws, nw, use_P):
    """Move the grouped state (B, b, F, PB) halfway back to its saved copy in ``nw``."""
    B, b, F, PB = ws.B, ws.b, ws.F, ws.PB
    B_old, b_old, F_old, PB_old = nw.B_old, nw.b_old, nw.F_old, nw.PB_old
    for k in range(B.shape[0]):
        b[k] = 0.5 * (b[k] + b_old[k])
        for j in range(B.shape[1]):
            B[k, j] = 0.5 * (B[k, j] + B_old[k, j])
        for i in range(F.shape[1]):
            F[k, i] = 0.5 * (F[k, i] + F_old[k, i])
        if use_P:
            for i in range(PB.shape[1]):
                PB[k, i] = 0.5 * (PB[k, i] + PB_old[k, i])


@internal
def _gsave(ws, nw, use_P):
    """Save the grouped state (B, b, F, PB) into the *_old arrays of ``nw``."""
    nw.B_old[:, :] = ws.B
    nw.b_old[:] = ws.b
    nw.F_old[:, :] = ws.F
    if use_P:
        nw.PB_old[:, :] = ws.PB


@internal
def _grestore(ws, nw, use_P):
    """Restore the grouped state (B, b, F, PB) from its saved copy in ``nw``."""
    ws.B[:, :] = nw.B_old
    ws.b[:] = nw.b_old
    ws.F[:, :] = nw.F_old
    if use_P:
        ws.PB[:, :] = nw.PB_old
