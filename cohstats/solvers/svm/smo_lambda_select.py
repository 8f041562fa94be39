"""List selection and exact passes of the λ-SVM's lazy SMO loop.

The lazy loop (:func:`cohstats.solvers.svm.smo_lambda_lazy.smo_lambda_lazy_chunk`) recomputes
the per-point maximal KKT violations in exact passes over the active points (:func:`_fold`) or
over the watched points only (:func:`_fold_watch`), lists the most violating points
(:func:`_select_top`, :func:`_select_top_sub`: an order statistic and a stable order, written
by hand because numpy's ``partition`` and ``argsort`` cost seconds of compilation) and the
points with a free multiplier, from which block visits draw their partners.
"""

from __future__ import annotations

import numpy as np


from cohstats._numba_cache import internal
from cohstats.solvers.svm.smo_lambda_kkt import _centre_point, _viol_s


@internal
def _select_top(pv, n_act, B, tol, idx):
    """Positions of the (at most ``B``) largest ``pv >= tol`` among ``0..n_act-1``, largest first
    (ties: smaller position first). Returns their number.

    O(n_act) (one order statistic for the ``B``-th largest value) plus a stable sort of the
    ``B`` selected (an insertion into a sorted list of ``B`` would cost O(n_act B))."""
    if B <= 1:
        best = -1
        bv = tol
        for q in range(n_act):
            v = pv[q]
            if v >= bv and (best < 0 or v > bv):
                bv = v
                best = q
        if best < 0:
            return 0
        idx[0] = best
        return 1
    cand = np.empty(n_act, dtype=np.int64)
    nc = np.int64(0)  # typed: see _shrink_event
    for q in range(n_act):
        if pv[q] >= tol:
            cand[nc] = q
            nc += 1
    return _rank_candidates(pv, cand, nc, B, idx, np.empty(nc))


@internal
def _kth_smallest(v, k):
    """The ``k``-th smallest value of ``v`` (0-based; ``v`` is reordered in place): quickselect
    with Hoare's partition around a median-of-three pivot, O(len(v)) expected. The order
    statistic is one value whatever the algorithm (``np.partition``'s), written here because
    ``np.partition`` costs seconds of compilation (its argument checks and sorts)."""
    lo = 0
    hi = v.shape[0] - 1
    while hi > lo:
        mid = (lo + hi) >> 1
        a = v[lo]
        b = v[mid]
        c = v[hi]
        if a > b:
            a, b = b, a
        pivot = b if b <= c else (c if c >= a else a)  # the median of the three
        i = lo
        j = hi
        while i <= j:
            while v[i] < pivot:
                i += 1
            while v[j] > pivot:
                j -= 1
            if i <= j:
                t = v[i]
                v[i] = v[j]
                v[j] = t
                i += 1
                j -= 1
        # now v[lo..j] <= pivot <= v[i..hi], and every entry strictly between j and i equals pivot
        if k <= j:
            hi = j
        elif k >= i:
            lo = i
        else:
            return v[k]
    return v[k]


@internal
def _order_desc_stable(key, n):
    """The order of ``key[:n]`` by decreasing value, equal values in increasing index order (a
    stable bottom-up merge sort; the permutation of ``np.argsort(-key[:n], kind="mergesort")``)."""
    a = np.empty(n, dtype=np.int64)
    b = np.empty(n, dtype=np.int64)
    for r in range(n):
        a[r] = r
    width = 1
    while width < n:
        lo = 0
        while lo < n:
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            i = lo
            j = mid
            o = lo
            while i < mid and j < hi:
                if key[a[j]] > key[a[i]]:  # the right run only on a strictly larger value
                    b[o] = a[j]
                    j += 1
                else:
                    b[o] = a[i]
                    i += 1
                o += 1
            while i < mid:
                b[o] = a[i]
                i += 1
                o += 1
            while j < hi:
                b[o] = a[j]
                j += 1
                o += 1
            lo = hi
        a, b = b, a
        width *= 2
    return a


@internal
def _rank_candidates(pv, cand, nc, B, idx, vals):
    """The (at most ``B``) largest ``pv`` over the positions ``cand[:nc]`` (increasing), largest
    first, ties at the ``B``-th value to the smaller positions, written to ``idx``; ``vals`` is
    float scratch of length at least ``nc``. Returns the number listed."""
    if nc > B:
        for r in range(nc):
            vals[r] = pv[cand[r]]
        thr = _kth_smallest(vals[:nc], nc - B)  # the B-th largest value
        m = 0
        for r in range(nc):
            if pv[cand[r]] > thr:
                idx[m] = cand[r]
                m += 1
        r = 0
        while m < B:  # ties at the threshold: smaller positions first
            if pv[cand[r]] == thr:
                idx[m] = cand[r]
                m += 1
            r += 1
        nc = B
    else:
        for r in range(nc):
            idx[r] = cand[r]
    # stable sort: equal values keep increasing positions (both the part above the threshold
    # and the tied part are in position order, and every tie is inside one of the two parts)
    key = np.empty(nc)
    for r in range(nc):
        key[r] = pv[idx[r]]
    order = _order_desc_stable(key, nc)
    sel = idx[:nc].copy()
    for r in range(nc):
        idx[r] = sel[order[r]]
    return nc


@internal
def _select_top_sub(pv, W, nw, B, tol, idx, cand, vals):
    """As :func:`_select_top`, over the positions ``W[:nw]`` (increasing) only; ``cand`` (int)
    and ``vals`` (float) are scratch of length at least ``nw``. Returns the number listed."""
    nc = np.int64(0)  # typed: see _shrink_event
    for r in range(nw):
        q = W[r]
        if pv[q] >= tol:
            cand[nc] = q
            nc += 1
    return _rank_candidates(pv, cand, nc, B, idx, vals)


@internal
def _fold_watch(Ft, S, pv, W, nw, margin, stall, moves):
    """:func:`_fold` restricted to the positions ``W[:nw]``: centre their decision values,
    recompute their maximal violations exactly (stalled points count as 0) and drop from ``W``
    the points whose violation is 0. Returns ``(maximum, new nw)``."""
    L = Ft.shape[0]
    inv_L = 1.0 / L
    bv = 0.0
    m = 0
    for r in range(nw):
        q = W[r]
        v = _centre_point(Ft, S, q, margin, inv_L)
        if stall[q] == moves:
            v = 0.0
        pv[q] = v
        if v > 0.0:
            W[m] = q
            m += 1
        if v > bv:
            bv = v
    return bv, m


@internal
def _fold(Ft, S, pv, mc, n_act, margin, stall, moves):
    """Centre the decision values of the active points, ``F[j, q] -= mean_j F[j, q]`` (between
    folds the lazy loop keeps ``F`` only up to a per-point shift common to all classes), and
    recompute their maximal violations (stalled points count as 0). ``mc`` is scratch. Returns
    the maximum."""
    L = Ft.shape[0]
    inv_L = 1.0 / L
    for q in range(n_act):
        pv[q] = 0.0
        mc[q] = 0.0
    for j in range(L):
        Fj = Ft[j]
        for q in range(n_act):
            mc[q] += Fj[q]
    for q in range(n_act):
        mc[q] *= inv_L
    for j in range(L):
        Fj = Ft[j]
        Sj = S[j]
        for q in range(n_act):
            f = Fj[q] - mc[q]
            Fj[q] = f
            pv[q] = max(pv[q], _viol_s(f, Sj[q], margin))
    bv = 0.0
    for q in range(n_act):
        if stall[q] == moves:
            pv[q] = 0.0
        if pv[q] > bv:
            bv = pv[q]
    return bv


@internal
def _free_points(S, n_act, FR):
    """Positions ``q < n_act`` with a free multiplier (strictly inside its box) written to ``FR``;
    returns their number."""
    L = S.shape[0]
    m = 0
    for q in range(n_act):
        for j in range(L):
            if S[j, q] & 3 == 3:
                FR[m] = q
                m += 1
                break
    return m


@internal
def _free_points_class(S, n_act, FRc, nfrc):
    """Per class ``j``: the positions ``q < n_act`` whose multiplier of class ``j`` is free, in
    ``FRc[j, :nfrc[j]]``."""
    L = S.shape[0]
    for j in range(L):
        m = 0
        Sj = S[j]
        Fj = FRc[j]
        for q in range(n_act):
            if Sj[q] & 3 == 3:
                Fj[m] = q
                m += 1
        nfrc[j] = m
