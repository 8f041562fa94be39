"""One penalised problem: coordinate passes over a fixed candidate set to convergence.

Both functions take the problem kind first (:func:`cohstats.solvers.cd.state.kind_of`): the
branches of the other kinds are pruned when numba compiles them, so a binary fit compiles no
grouped passes and a grouped fit no binary ones.

:func:`_solve_set` alternates glmnet-style between the candidate (strong) set and its active
part, with the binary passes of :mod:`cohstats.solvers.cd.scalar` (IRLS with step halving, MM or
exact updates) or the grouped passes of :mod:`cohstats.solvers.cd.group` (majorise-minimise) and
:mod:`cohstats.solvers.cd.group_newton` (proximal Newton with step halving on the true
objective); :func:`_null_fit` solves the intercept-only problem that sets the tolerance scale.
"""

from __future__ import annotations

import math

import numpy as np
from cohstats._numba_cache import njit


from cohstats._numba_cache import internal
from cohstats.losses.scalar import loss_eval_sum
from cohstats.solvers.cd.group import _gobjective, _gpass, _gpenalty, _ghalve, _grestore, _gsave
from cohstats.solvers.cd.group_newton import _gpass_newton, _gstate
from cohstats.solvers.cd.kkt import _kkt_j, _nz
from cohstats.solvers.cd.lum_hard import LUM_MAJ_C, lum_maj_weights, lum_newton_step
from cohstats.solvers.cd.scalar import _cycle, _intercept_step, _penalty, _solve_1d
from cohstats.solvers.cd.state import (
    KIND_LUM,
    KIND_MCOH,
    UPD_EXACT,
    UPD_IRLS,
    NewtonWork,
    Penalty,
    Work,
)

#: inner passes over the quadratic model per outer (Newton) iteration of the grouped problem
_GN_INNER = 10


@internal
def _solve_set(kind, upd, data, loss, pen, ctl, inS, ws):
    """Minimise the objective over the coordinates with inS[j] (others fixed at their values).

    Passes alternate glmnet-style between the whole set S and its active (nonzero) part; the
    problem is solved when a pass over S changes no coordinate by more than the threshold and
    (IRLS and MM modes) the KKT residuals of that pass are below ``sqrt(thr)``.
    Binary problems: in IRLS mode the curvatures and the working residual are refreshed from the
    current fit before every pass (an inexact Newton method whose inner solve is one coordinate
    pass), and a pass that increases the objective is halved back towards its start (up to 30
    times,). Grouped problems: one majorise-minimise pass (:func:`_gpass`) per pass.

    Updates ``ws`` (B, b, F, PB, Gst and the buffers) in place; returns (passes, converged).
    """
    y, yc, w, intercept = data.y, data.yc, data.w, data.intercept
    code, p1, p2, floor_c = loss.code, loss.p1, loss.p2, loss.floor_c
    pf, l1, use_P = pen.pf, pen.l1, pen.use_P
    thr, max_pass = ctl.thr, ctl.max_pass
    B, b, F, PB, W, R, E, Gst, idxS, idxA = ws.B, ws.b, ws.F, ws.PB, ws.W, ws.R, ws.E, ws.Gst, ws.idxS, ws.idxA
    p = B.shape[1]
    n = F.shape[1]
    kgate = math.sqrt(thr)
    # counters start as typed int64 zeros: a literal 0 would make numba compile the passes once
    # more for the argument type Literal[int](0)
    mS = np.int64(0)
    for j in range(p):
        if inS[j]:
            idxS[mS] = j
            mS += 1
    mA = np.int64(0)
    passes = 0
    full = True
    irls = len(upd) == UPD_IRLS
    # the hard LUM's majorised weights and joint Newton steps (IRLS mode only)
    lummaj = False
    if len(kind) == KIND_LUM and len(upd) == UPD_IRLS:
        lummaj = p2 >= LUM_MAJ_C and not use_P
    beta = B[0]
    f = F[0]
    Pbeta = PB[0]
    r = R[0]
    e = E[0]
    bb = b[0]
    dst = np.zeros(2)
    # the proximal-Newton passes are the coherence loss's, in the IRLS mode
    if len(kind) == KIND_MCOH and len(upd) == UPD_IRLS:
        G = F.shape[0]
        nw = NewtonWork(
            np.empty((G, n)),
            B.copy(),
            b.copy(),
            F.copy(),
            PB.copy(),
            np.full(p, -1, dtype=np.int64),
            np.empty((p, G, G)),
            np.empty((p, G)),
            np.empty((p, G, G)),
            np.zeros((2 * G, G)),
        )
        Pi = nw.Pi
        gobj = math.inf
        outer = 0
        inner = 0
        refresh = True
        fresh = True
    if len(kind) <= KIND_LUM and len(upd) == UPD_IRLS:
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
        if len(kind) == KIND_MCOH and len(upd) == UPD_IRLS:
            # proximal Newton for the grouped problem. An outer iteration starts from the state
            # (gradient, soft weights, objective) at the current fits; if the last outer step
            # raised the objective it is first halved back towards its start, and if 30 halvings
            # do not help it is undone and replaced by a Boehning majorise-minimise pass, which
            # cannot raise it. Inner passes (up to _GN_INNER) minimise the quadratic model.
            use_mm = False
            fresh = False
            if refresh:
                obj_new = _gstate(F, yc, w, p1, p2, loss.u, R, Pi) + _gpenalty(pen, B, PB)
                nh = 0
                while not (obj_new <= gobj + 1e-12 * abs(gobj)) and nh < 30:
                    nh += 1
                    _ghalve(ws, nw, use_P)
                    obj_new = _gstate(F, yc, w, p1, p2, loss.u, R, Pi) + _gpenalty(pen, B, PB)
                if not (obj_new <= gobj + 1e-12 * abs(gobj)):
                    _grestore(ws, nw, use_P)
                    obj_new = _gstate(F, yc, w, p1, p2, loss.u, R, Pi) + _gpenalty(pen, B, PB)
                    use_mm = True
                gobj = obj_new
                _gsave(ws, nw, use_P)
                outer += 1
                inner = 0
                fresh = True
                refresh = False
            if use_mm:
                dmax, kk = _gpass(kind, idx, m, data, loss, pen, ws)
                refresh = True
            else:
                dmax, kk = _gpass_newton(idx, m, data, loss, pen, ws, nw, fresh, outer)
                inner += 1
                if inner >= _GN_INNER:
                    refresh = True
                # every pass is checked on the true objective: a pass that lowered it becomes the
                # point that later steps are halved back to; one that raised it ends the outer
                # iteration (the next one starts by halving it back)
                ob = _gobjective(data, loss, pen, F, B, PB)
                if ob <= gobj + 1e-12 * abs(gobj):
                    gobj = ob
                    _gsave(ws, nw, use_P)
                else:
                    refresh = True
        elif len(kind) >= KIND_MCOH:
            dmax, kk = _gpass(kind, idx, m, data, loss, pen, ws)
        else:
            if len(upd) == UPD_IRLS:
                # refresh curvatures/gradients; the same loop gives the objective of the last
                # pass, which is halved back towards its start if it went up ()
                obj_new = loss_eval_sum(code, p1, p2, y, w, f, W, r, floor_c) + _penalty(pen, beta, Pbeta)
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
                    obj_new = loss_eval_sum(code, p1, p2, y, w, f, W, r, floor_c) + _penalty(pen, beta, Pbeta)
                obj = obj_new
                if len(kind) == KIND_LUM and len(upd) == UPD_IRLS and lummaj:
                    lum_maj_weights(p1, p2, loss.Lb, y, w, f, W)
                for i in range(n):
                    e[i] = r[i]
                for k in range(m):
                    beta_old[idx[k]] = beta[idx[k]]
                for i in range(n):
                    f_old[i] = f[i]
                if use_P:
                    for i in range(Pbeta.shape[0]):
                        Pb_old[i] = Pbeta[i]
                b_old = bb
                m_old = m
                idx_old = idx
            dmax = 0.0
            took = False
            if len(kind) == KIND_LUM and len(upd) == UPD_IRLS and lummaj and not full and m > 0:
                # hard LUM: a joint step over the active set instead of a coordinate pass
                dmax, bb, obj, took = lum_newton_step(idx, m, data, loss, pen, ws, obj, bb)
            if not took:
                if len(upd) == UPD_IRLS and intercept:
                    d, v = _intercept_step(upd, data, loss, ws)
                    bb += d
                    dmax = v
                    sWt = 0.0
                    for i in range(n):
                        sWt += W[i]
                    dst[0] = 0.0
                    dst[1] = sWt
                dc = _cycle(upd, idx, m, data, loss, pen, ws, irls and intercept and dst[1] > 0.0, dst)
                if dc > dmax:
                    dmax = dc
                if len(upd) == UPD_IRLS and intercept and dst[0] != 0.0:
                    D = dst[0]
                    for i in range(n):
                        e[i] -= W[i] * D
                        f[i] += D
                    bb += D
                    v = (dst[1] / n) * D * D
                    if v > dmax:
                        dmax = v
                elif intercept:
                    d, v = _intercept_step(upd, data, loss, ws)
                    bb += d
                    if v > dmax:
                        dmax = v
            b[0] = bb
        passes += 1
        if full:
            if dmax < thr:
                if len(upd) == UPD_EXACT:
                    return passes, True
                if len(kind) == KIND_MCOH and len(upd) == UPD_IRLS and not fresh:
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
                    if len(kind) == KIND_MCOH and len(upd) == UPD_IRLS:
                        # the last (small) step is kept only if it did not raise the objective
                        ob = _gstate(F, yc, w, p1, p2, loss.u, R, Pi) + _gpenalty(pen, B, PB)
                        if not (ob <= gobj + 1e-12 * abs(gobj)):
                            _grestore(ws, nw, use_P)
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
    if len(kind) == KIND_MCOH and len(upd) == UPD_IRLS:
        # out of passes: the last Newton pass is kept only if it did not raise the objective
        ob = _gstate(F, yc, w, p1, p2, loss.u, R, Pi) + _gpenalty(pen, B, PB)
        if not (ob <= gobj + 1e-12 * abs(gobj)):
            _grestore(ws, nw, use_P)
    return passes, False


@njit(cache=True, nogil=True, inline="always")
def _null_fit(kind, upd, data, loss, pen, ctl, G):
    """Fit with only the unpenalised coordinates (pf == 0) free, from zero coefficients.

    Inlined into the path driver (its one jitted caller; a separate function would be compiled
    a second time with everything it calls, measured 0.9-1.3 s CPU of a first fit).

    Returns a fresh :class:`~cohstats.solvers.cd.state.Work` (G coefficient rows) at that fit.
    """
    Xt, w, excl = data.Xt, data.w, data.excl
    pf, P, use_P = pen.pf, pen.P, pen.use_P
    p = Xt.shape[0]
    n = w.shape[0]
    ws = Work(
        np.zeros((G, p)),
        np.zeros(G),
        np.zeros((G, n)),
        np.zeros((G, P.shape[0] if use_P else 1)),
        np.empty(n),
        np.empty((G, n)),
        np.empty((G, n)),
        np.zeros((G, p)),
        np.empty(p, dtype=np.int64),
        np.empty(p, dtype=np.int64),
        np.ones(n),
    )
    inS = np.zeros(p, dtype=np.bool_)
    for j in range(p):
        inS[j] = pf[j] == 0.0 and not excl[j]
    code = loss.code
    if len(kind) <= KIND_LUM:
        F0 = ws.F[0]
        off = data.off
        if off.shape[0] == n:  # binary fits with an offset: f = offset + b + x'beta
            for i in range(n):
                F0[i] = off[i]
        if data.intercept:
            # start the intercept at its exact 1-D minimiser (robust for every loss)
            b0 = _solve_1d(code, loss.p1, loss.p2, data.y, w, F0, ws.ones, 0.0, 0.0, 0.0, 0.0)
            ws.b[0] = b0
            for i in range(n):
                F0[i] += b0
    _solve_set(kind, upd, data, loss, Penalty(pf, 0.0, 0.0, use_P, P, pen.Pshift), ctl, inS, ws)
    return ws
