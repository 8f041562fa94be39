"""The λ-SVM's lazy SMO loop: exact steps, selection refreshed by exact passes.

See :mod:`cohstats.solvers.svm.smo_lambda` ("Lazy selection", "Block visits", "Shrinking") for
the algorithm and :func:`cohstats.solvers.svm.smo_lambda.solve_lambda_svm` for the driver.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from cohstats.solvers.svm.rows import get_row
from cohstats.solvers.svm.smo_lambda_block import _block_visit
from cohstats.solvers.svm.smo_lambda_kkt import _axpy, _count_shrinkable, _point_steps, _rebuild, _shrink_event, _viol_s
from cohstats.solvers.svm.smo_lambda_select import (
    _fold,
    _fold_watch,
    _free_points,
    _free_points_class,
    _select_top,
    _select_top_sub,
)


@njit(cache=True, nogil=True)
def smo_lambda_lazy_chunk(
    st,
    kr,
    margin,
    tol,
    eps,
    max_steps,
    inner_max,
    shrinking,
    shrink_every,
    k_sel,
    rho,
    rho_watch,
    watch_drop,
    shrink_rho=0.5,
    shrink_min=4,
    n_block=1,
    block_rho=0.5,
    block_start=0,
    block_kmin=0.0,
    block_class=True,
    block_fuse=True,
    block_keep=True,
):
    """As :func:`smo_lambda_chunk`, with the selection refreshed only every ``k_sel`` visits.

    After each exact recomputation of the per-point violations (``_fold``, one O(N L) pass) the
    ``k_sel`` most violating points are listed and visited in that order (skipping a point whose
    current violation fell below ``rho`` times the maximum of the pass); a visit performs the
    same exact single-variable steps on the point's multipliers (computed from its current, exact
    decision values), and updates ``F`` for the changed classes only: ``F_j += d_j K(x_i, .)``
    with the *uncentred* change ``d_j`` of ``b_ij`` (``changed * N`` vectorised operations per
    visit instead of an ``L N`` pass with violation bookkeeping). The centring ``- mean_j(d_j)
    K(x_i, .)`` that every class would need is not applied: between folds ``F`` is known up to a
    per-point shift common to all classes, removed when a point's values are read (``F_j -
    mean_j F_j``) and by ``_fold``. Stopping is decided only on a fresh ``_fold`` (all
    violations exact), so the KKT rule is unchanged. Same state and return value as
    :func:`smo_lambda_chunk`; ``counter[0]`` counts visits.

    Watched points (``rho_watch > 0``, at least 512 active points): a full fold also records the
    active points whose violation is at least ``rho_watch`` times its maximum ``bv`` (unless they
    are more than half of the active points). When a list is used up, only the watched points are
    recomputed (``_fold_watch``) and the next list is drawn from them with the threshold ``rho``
    times their current maximum, as long as that maximum is at least ``watch_drop * bv``;
    otherwise a full fold follows. With ``rho_watch <= rho * watch_drop`` every point that the
    full fold could have listed at that threshold is watched. Only the visiting order differs from
    full folds every time; every step is the same exact step.
    """
    alpha, Ft, S, pv, y, Cb, Kdiag, counter = st.alpha, st.Ft, st.S, st.pv, st.y, st.Cb, st.Kdiag, st.counter
    snap, sstate = st.snap, st.sstate
    perm = kr.perm
    N, L = alpha.shape
    delta = np.zeros(L)
    Fi = np.zeros(L)
    swa = np.empty(N, dtype=np.int64)
    swb = np.empty(N, dtype=np.int64)
    mc = np.zeros(N)
    stall = np.full(N, -1, dtype=np.int64)
    lst = np.empty(max(k_sel, 1), dtype=np.int64)
    inv_L = 1.0 / L
    moves = np.int64(0)  # typed ints: a literal 0 passed on compiles the callee once more
    vthr = tol
    steps = 0
    nl = 0
    pos = 0
    max_events = snap.shape[0]
    W = np.empty(N, dtype=np.int64)
    wc = np.empty(N, dtype=np.int64)
    wv = np.empty(N)
    nw = np.int64(0)
    bv_full = 0.0
    nbk = max(1, n_block)
    P = np.empty(nbk, dtype=np.int64)
    Pk = np.empty(nbk)
    Fl = np.zeros((nbk, L))
    Kl = np.zeros((nbk, nbk))
    D = np.zeros((nbk, L))
    stalled = np.zeros(1, dtype=np.int64)
    FR = np.empty(N, dtype=np.int64)
    nfr = 0
    slots = np.empty(nbk, dtype=np.int64)
    idx = np.empty(nbk, dtype=np.int64)
    FRc = np.empty((L if block_class else 1, N), dtype=np.int64)
    nfrc = np.zeros(L, dtype=np.int64)
    # partner lists per position, valid while no shrink event or rebuild moved the positions and
    # for at most N visits (the free set changes slowly)
    PC = np.zeros((N if nbk > 1 else 1, nbk), dtype=np.int64)
    PCs = np.full(N if nbk > 1 else 1, -1, dtype=np.int64)
    # the kernel among each position's block, kept with its partners (the rows' dtype: bitwise)
    PK = np.zeros((N if nbk > 1 else 1, nbk, nbk), dtype=kr.rows.dtype)
    Sl = np.zeros((nbk, L), dtype=np.uint8)
    Al = np.zeros((nbk, L))
    Vl = np.zeros(nbk * L)
    yl = np.zeros(nbk, dtype=np.int64)
    Cl = np.zeros(nbk)
    Gl = np.zeros(nbk)
    while True:
        n_act = sstate[0]
        if pos >= nl and nw > 0 and steps < max_steps:
            # ---- watch pass: the next list from the points watched since the last full fold
            # (exact violations of those points only), while their maximum stays above
            # watch_drop times the full fold's; stopping is still decided on a full fold
            counter[7] += nw
            bw, nw = _fold_watch(Ft, S, pv, W, nw, margin, stall, moves)
            counter[8] += 1
            if bw >= tol and bw >= watch_drop * bv_full:
                kk = max(1, min(k_sel, n_act // 8))
                vthr = max(tol, rho * bw)
                nl = _select_top_sub(pv, W, nw, kk, vthr, lst, wc, wv)
                counter[6] += nl
                pos = 0
                if nl > 0:
                    continue
            nw = 0
        if pos >= nl:
            bv = _fold(Ft, S, pv, mc, n_act, margin, stall, moves)
            counter[7] += n_act
            if bv < tol:
                if n_act < N:
                    _rebuild(st, kr, margin, sstate[1], n_act)
                    sstate[0] = N
                    sstate[1] = 0
                    sstate[2] = counter[0]
                    counter[3] += 1
                    moves += 1
                    continue
                return 1, bv
            if steps >= max_steps:
                return 0, bv
            # ---- shrinking (libsvm style, per point), right after an exact fold: points at a bound
            # with KKT slack above shrink_rho * bv; an event only when it leaves out at least one
            # active point in shrink_min; when the events are used up, the shrunk points are
            # rebuilt exactly and become active again first
            if shrinking and max_events > 0 and counter[0] - sstate[2] >= shrink_every:
                sthr = max(tol, shrink_rho * bv)
                ns = _count_shrinkable(Ft, S, n_act, margin, sthr)
                if ns > 0 and ns * shrink_min >= n_act:
                    if sstate[1] >= max_events:
                        _rebuild(st, kr, margin, sstate[1], n_act)
                        sstate[0] = N
                        sstate[1] = 0
                        counter[3] += 1
                        n_act = N
                    n_act = _shrink_event(st, kr, n_act, swa, swb, margin, sthr)
                    moves += 1  # stall marks refer to positions: forget them
                else:
                    sstate[2] = counter[0]
            # list length: k_sel, at most one point in 8 active ones, and 1 (exact greedy) below
            # 512 active points, where the O(N L) pass is cheap anyway
            kk = max(1, min(k_sel, n_act // 8)) if n_act >= 512 else 1
            vthr = max(tol, rho * bv)
            if nbk > 1:
                if block_class:
                    # partners come from the class lists; nfr only says whether any point is free
                    _free_points_class(S, n_act, FRc, nfrc)
                    nfr = 0
                    for j in range(L):
                        nfr += nfrc[j]
                else:
                    nfr = _free_points(S, n_act, FR)
            nl = _select_top(pv, n_act, kk, vthr, lst)
            counter[5] += 1
            counter[6] += nl
            pos = 0
            # the points watched until the next full fold: violation at least rho_watch * bv
            nw = 0
            if rho_watch > 0.0 and n_act >= 512:
                wthr = max(tol, rho_watch * bv)
                for q in range(n_act):
                    if pv[q] >= wthr:
                        W[nw] = q
                        nw += 1
                if nw * 2 > n_act:
                    nw = 0  # a watch pass would cost about a full fold
                bv_full = bv
            continue
        if steps >= max_steps:
            pos = nl  # fold before returning, so that F is exact
            continue
        i = lst[pos]
        pos += 1
        Ci = Cb[i]
        Kii = Kdiag[i]
        G = Kii * (1.0 - inv_L)
        yi = y[i]
        fm = 0.0
        for j in range(L):
            Fi[j] = Ft[j, i]
            fm += Fi[j]
            delta[j] = 0.0
        fm *= inv_L
        for j in range(L):
            Fi[j] -= fm
        vb0 = 0.0
        for j in range(L):
            vb0 = max(vb0, _viol_s(Fi[j], S[j, i], margin))
        if vb0 < vthr:
            continue  # no longer among the largest violations (its row moved since the fold)
        if nbk > 1 and nfr > 0 and counter[0] >= block_start:
            thr_in = max(tol, block_rho * vthr)
            cap = min(nbk, max_steps - steps)  # the visits of a block count against the budget
            stamp = (counter[2] + counter[3]) * (N + 1) + counter[0] // N
            FRu = FR
            nfru = nfr
            if block_class:
                jb = 0
                vj = -1.0
                for j in range(L):
                    v = _viol_s(Fi[j], S[j, i], margin)
                    if v > vj:
                        vj = v
                        jb = j
                FRu = FRc[jb]
                nfru = nfrc[jb]
                stamp = stamp * L + jb
            nm = _block_visit(
                st,
                kr,
                i,
                Fi,
                n_act,
                FRu,
                nfru,
                margin,
                tol,
                thr_in,
                eps,
                cap,
                P,
                Pk,
                Fl,
                Kl,
                D,
                stalled,
                PC,
                PCs,
                stamp,
                block_kmin,
                slots,
                idx,
                block_fuse,
                PK,
                Sl,
                Al,
                Vl,
                yl,
                Cl,
                Gl,
                block_keep,
            )
            if nm == 0:
                if stalled[0] >= 0:
                    stall[P[stalled[0]]] = moves
                continue
            moves += 1
            steps += nm
            continue
        steps += 1
        counter[0] += 1
        moved = _point_steps(i, Fi, delta, alpha, S, yi, Ci, Kii, G, inv_L, margin, tol, eps, inner_max, counter)
        if not moved:
            stall[i] = moves  # skipped by the folds until something else moves
            continue
        moves += 1
        row = get_row(kr, perm[i])
        counter[4] += n_act
        for j in range(L):
            if delta[j] != 0.0:
                _axpy(Ft[j, :n_act], row[:n_act], delta[j])
    return 0, 0.0
