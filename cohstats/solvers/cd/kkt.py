"""Objectives, gradients and KKT residuals of every problem of the coordinate-descent family,
specialised per problem kind (:func:`cohstats.solvers.cd.state.kind_of`): the pieces the path
driver uses for its strong rule and KKT checks.

The coefficients are a (G, p) array B (G = 1: binary; G = K: one row of K class coefficients per
coordinate, kept as a column of B), the fits a (G, n) array F, the smooth KKT residuals a (G, p)
array Gst (:class:`cohstats.solvers.cd.state.Work`). Binary problems use row 0 of each.
"""

from __future__ import annotations

import math

from cohstats._numba_cache import njit


from cohstats._numba_cache import internal
from cohstats.solvers.cd.group import _aobjective, _aresid, _gobjective, _gresid
from cohstats.solvers.cd.scalar import _dot, _neg_grad, _objective
from cohstats.solvers.cd.state import KIND_ALUM, KIND_MCOH


@internal
def _objective_any(kind, data, loss, pen, ws):
    """Objective of a problem of kind ``kind`` at the state ``ws``."""
    if len(kind) == KIND_MCOH:
        return _gobjective(data, loss, pen, ws.F, ws.B, ws.PB)
    if len(kind) == KIND_ALUM:
        return _aobjective(data, loss, pen, ws.F, ws.B, ws.PB)
    return _objective(data, loss, pen, ws.F[0], ws.B[0], ws.PB[0])


@internal
def _resid_any(kind, data, loss, ws):
    """Negative loss gradient in the fits ``ws.F``, into ``ws.R`` (G, n)."""
    code, p1, p2 = loss.code, loss.p1, loss.p2
    y, yc, w = data.y, data.yc, data.w
    F, R = ws.F, ws.R
    if len(kind) == KIND_MCOH:
        _gresid(F, yc, w, p1, p2, loss.u, R)
    elif len(kind) == KIND_ALUM:
        _aresid(F, yc, w, p1, p2, loss.u, R)
    else:
        _neg_grad(code, p1, p2, y, w, F[0], R[0])


@internal
def _grad_into(data, pen, ws, sel):
    """Gst[k, j] = (1/n) sum_i x_ij R[k, i] - l2 pf_j (P B)_kj for j with sel[j]."""
    Xt = data.Xt
    pf, l2, use_P = pen.pf, pen.l2, pen.use_P
    R, Gst, B, PB = ws.R, ws.Gst, ws.B, ws.PB
    G, n = R.shape
    if G == 1:  # binary problems: 1-D rows (measurably faster when p >> n)
        r = R[0]
        gst = Gst[0]
        beta = B[0]
        Pbeta = PB[0]
        for j in range(Xt.shape[0]):
            if sel[j]:
                g = _dot(Xt[j], r) / n
                q = Pbeta[j] if use_P else beta[j]
                gst[j] = g - l2 * pf[j] * q
        return
    for j in range(Xt.shape[0]):
        if sel[j]:
            for k in range(G):
                g = _dot(Xt[j], R[k]) / n
                q = PB[k, j] if use_P else B[k, j]
                Gst[k, j] = g - l2 * pf[j] * q


@njit(cache=True, nogil=True, inline="always")
def _gnorm(Gst, j):
    if Gst.shape[0] == 1:
        return abs(Gst[0, j])
    s = 0.0
    for k in range(Gst.shape[0]):
        s += Gst[k, j] * Gst[k, j]
    return math.sqrt(s)


@njit(cache=True, nogil=True, inline="always")
def _nz(B, j):
    for k in range(B.shape[0]):
        if B[k, j] != 0.0:
            return True
    return False


@njit(cache=True, nogil=True, inline="always")
def _kkt_term(g, t, bj):
    """KKT violation of one coordinate: smooth residual g, l1 threshold t, coefficient bj."""
    if bj > 0.0:
        return abs(g - t)
    if bj < 0.0:
        return abs(g + t)
    return max(abs(g) - t, 0.0)


@internal
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


@internal
def _kkt_violation(data, pen, ws):
    """Largest KKT violation given the smooth residuals ``ws.Gst``."""
    excl = data.excl
    pf, l1 = pen.pf, pen.l1
    Gst, B = ws.Gst, ws.B
    kk = 0.0
    for j in range(B.shape[1]):
        if excl[j]:
            continue
        v = _kkt_j(Gst, B, j, l1 * pf[j])
        if v > kk:
            kk = v
    return kk
