"""The λ-SVM's lazy SMO loop: exact steps, selection refreshed by exact passes.

See :mod:`cohstats.solvers.svm.smo_lambda` ("Lazy selection", "Block visits", "Shrinking") for
the algorithm and :func:`cohstats.solvers.svm.smo_lambda.solve_lambda_svm` for the driver.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from cohstats._numba_cache import njit

from cohstats.solvers.svm.rows import get_row
from cohstats.solvers.svm.smo_lambda_block import _block_visit
from cohstats.solvers.svm.smo_lambda_kkt import (
    _axpy,
    _count_shrinkable,
    _point_steps,
    _rebuild,
    _shrink_event,
    _viol_s,
)
from cohstats.solvers.svm.smo_lambda_select import (
    _fold,
    _fold_watch,
    _free_points,
    _free_points_class,
    _select_top,
    _select_top_sub,
)


class LazyOptions(NamedTuple):
    """Options of :func:`smo_lambda_lazy_chunk` (types fixed: one compiled specialisation).

    ``margin``, ``tol``, ``eps`` (float): the margin, KKT tolerance and bound resolution;
    ``inner_max`` (int) steps per single-point visit; ``shrinking`` (bool), ``shrink_every``
    (int), ``shrink_rho`` (float), ``shrink_min`` (int): the shrinking schedule; ``k_sel`` (int),
    ``rho``, ``rho_watch``, ``watch_drop`` (float): the lists and watched points; ``block_rho``,
    ``block_kmin`` (float), ``block_start`` (int), ``block_class``, ``block_fuse``,
    ``block_keep`` (bool): the block visits (see
    :func:`cohstats.solvers.svm.smo_lambda.solve_lambda_svm` for each).
    """

    margin: float
    tol: float
    eps: float
    inner_max: int
    shrinking: bool
    shrink_every: int
    shrink_rho: float
    shrink_min: int
    k_sel: int
    rho: float
    rho_watch: float
    watch_drop: float
    block_rho: float
    block_kmin: float
    block_start: int
    block_class: bool
    block_fuse: bool
    block_keep: bool


class LazyWork(NamedTuple):
    """Work arrays of :func:`smo_lambda_lazy_chunk`.

    ``delta``, ``Fi`` (L,) a visit's changes and decision values; ``mc`` (N,) fold scratch;
    ``stall`` (N,) the move count at which a point could not move (skipped until something else
    moves); ``lst`` the current list; ``W`` (N,) the watched positions, ``wc``/``wv`` their
    selection scratch; ``FR`` (N,) and ``FRc`` (L, N) / ``nfrc`` (L,) the points with a free
    multiplier (any class / per class); ``swa``/``swb`` (N,) the swaps of a shrink event.
    """

    delta: np.ndarray
    Fi: np.ndarray
    mc: np.ndarray
    stall: np.ndarray
    lst: np.ndarray
    W: np.ndarray
    wc: np.ndarray
    wv: np.ndarray
    FR: np.ndarray
    FRc: np.ndarray
    nfrc: np.ndarray
    swa: np.ndarray
    swb: np.ndarray


def lazy_work(N, L, k_sel, block_class):
    """A fresh :class:`LazyWork`."""
    return LazyWork(
        np.zeros(L),
        np.zeros(L),
        np.zeros(N),
        np.full(N, -1, dtype=np.int64),
        np.empty(max(k_sel, 1), dtype=np.int64),
        np.empty(N, dtype=np.int64),
        np.empty(N, dtype=np.int64),
        np.empty(N),
        np.empty(N, dtype=np.int64),
        np.empty((L if block_class else 1, N), dtype=np.int64),
        np.zeros(L, dtype=np.int64),
        np.empty(N, dtype=np.int64),
        np.empty(N, dtype=np.int64),
    )


def run_lazy_chunk(st, kr, bs, opt, max_steps):
    """At most ``max_steps`` visits of the lazy loop (:func:`smo_lambda_lazy_chunk`, with fresh
    work arrays). Returns ``(status, max_violation)`` as
    :func:`~cohstats.solvers.svm.smo_lambda.smo_lambda_chunk`."""
    N, L = st.alpha.shape
    return smo_lambda_lazy_chunk(st, kr, bs, lazy_work(N, L, opt.k_sel, opt.block_class), opt, max_steps)


@njit(cache=True, nogil=True, _nrt=False)
def smo_lambda_lazy_chunk(st, kr, bs, wk, opt, max_steps):
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

    ``st`` is the :class:`~cohstats.solvers.svm.smo_lambda.LambdaState`, ``kr`` the row provider,
    ``bs`` the block scratch (:func:`~cohstats.solvers.svm.smo_lambda_block.block_scratch`; its
    block size is the ``n_block`` of the driver), ``wk`` the :class:`LazyWork`, ``opt`` the
    :class:`LazyOptions` and ``max_steps`` the visit budget.

    Events: when the active points have converged, the shrunk points are rebuilt exactly
    (:func:`~cohstats.solvers.svm.smo_lambda_kkt._rebuild`) and become active again; a shrink
    event (:func:`~cohstats.solvers.svm.smo_lambda_kkt._shrink_event`) is followed by a list
    drawn from the exact pass before it; when the events are used up, the shrunk points are
    rebuilt first. Returns ``(code, bv)`` with ``bv`` the maximal violation of the last exact
    pass and ``code`` 1 (converged) or 0 (budget used up).
    """
    margin, tol, eps, inner_max, k_sel = opt.margin, opt.tol, opt.eps, opt.inner_max, opt.k_sel
    shrinking, shrink_every, shrink_rho, shrink_min = opt.shrinking, opt.shrink_every, opt.shrink_rho, opt.shrink_min
    rho, rho_watch, watch_drop = opt.rho, opt.rho_watch, opt.watch_drop
    block_rho, block_kmin, block_start = opt.block_rho, opt.block_kmin, opt.block_start
    block_class, block_fuse, block_keep = opt.block_class, opt.block_fuse, opt.block_keep
    alpha, Ft, S, pv, y, Cb, Kdiag, counter = st.alpha, st.Ft, st.S, st.pv, st.y, st.Cb, st.Kdiag, st.counter
    snap, sstate = st.snap, st.sstate
    perm = kr.perm
    N, L = alpha.shape
    delta, Fi, mc, stall, lst, W, wc, wv = wk.delta, wk.Fi, wk.mc, wk.stall, wk.lst, wk.W, wk.wc, wk.wv
    FR, FRc, nfrc = wk.FR, wk.FRc, wk.nfrc
    inv_L = 1.0 / L
    swa, swb = wk.swa, wk.swb
    moves = 0
    steps = 0
    vthr = tol
    nl = 0
    pos = 0
    max_events = snap.shape[0]
    nw = np.int64(0)
    bv_full = 0.0
    nbk = bs.P.shape[0]  # points per block (1: single-point visits only)
    nfr = 0
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
                if n_act == N:
                    return 1, bv
                # converged on the active points: the shrunk points rebuilt exactly, then on
                _rebuild(st, kr, margin, sstate[1], n_act)
                sstate[0] = N
                sstate[1] = 0
                sstate[2] = counter[0]
                counter[3] += 1
                moves += 1  # stall marks refer to positions: forget them
                nw = 0
                continue
            if steps >= max_steps:
                return 0, bv
            # ---- shrinking (libsvm style, per point), right after an exact fold: points at a
            # bound with KKT slack above shrink_rho * bv; an event only when it leaves out at
            # least one active point in shrink_min (when the events are used up, the shrunk points
            # are rebuilt first); the list then follows this fold
            if shrinking and max_events > 0 and counter[0] - sstate[2] >= shrink_every:
                sthr = max(tol, shrink_rho * bv)
                ns = _count_shrinkable(Ft, S, n_act, margin, sthr)
                if ns > 0 and ns * shrink_min >= n_act:
                    if sstate[1] >= max_events:
                        _rebuild(st, kr, margin, sstate[1], n_act)
                        sstate[0] = N
                        sstate[1] = 0
                        counter[3] += 1
                    n_act = _shrink_event(st, kr, sstate[0], swa, swb, margin, sthr)
                    moves += 1
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
            nm, stalled = _block_visit(
                st, kr, bs, i, Fi, FRu, nfru, n_act, margin, thr_in, eps, cap, stamp, block_kmin, block_fuse, block_keep
            )
            if nm == 0:
                if stalled >= 0:
                    stall[bs.P[stalled]] = moves
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
    return 0, 0.0  # not reached
