"""SMO for the λ-SVM dual ([RH] eq. 22-23).

The dual over the ``N * L`` multipliers ``alpha[i, j]`` (point ``i``, class ``j``) is

    maximize  W(alpha) = sum_ij alpha_ij l_ij - 1/2 sum_ij sum_i'j' b_ij b_i'j' K(x_i, x_i') (I[j=j'] - 1/L)
    s.t.      0 <= alpha_ij <= C_i,

with ``b_ij = alpha_ij y_ij``, ``y_ij = +1`` if ``y_i = j`` else ``-1``, ``l_ij = margin`` for the
true class and ``1`` otherwise. There is no equality constraint (no bias), so every exact step is a
single-variable clipped Newton step. The solver keeps the decision values
``F[i, j] = f_j(x_i) = sum_i' K(x_i', x_i) (b_i'j - mean_j' b_i'j')`` (rows sum to zero) and the
KKT quantities ``V_ij = y_ij F_ij - l_ij`` (``dW/dalpha_ij = -V_ij``).

Exact greedy algorithm (``n_select = 1``, :func:`smo_lambda_chunk`; one iteration = one visit):

1. ``(i, j) = argmax`` of the KKT violation of [RH] eq. 24-26 (maximal violation;
   the per-point maxima are kept in ``pv`` so the scan is O(N));
2. fetch the kernel row ``K(x_i, .)`` from the LRU cache of :mod:`cohstats.solvers.svm.rows` (memory
   ``O(n_slots * N)``, never ``O(N^2 L^2)``); cached rows are stored in the solver's *position*
   order (permuted once per shrink event), so no per-visit gather is needed;
3. exact single-variable step on ``alpha[i, j]``; then, with ``inner_max > 1``, further exact
   single-variable steps on the other multipliers of the same point ``i`` (largest violation
   first) while they violate by more than ``tol`` -- they share the kernel row just fetched;
4. one O(N L) pass updates ``F`` (stored class-major, ``(L, N)``, so the pass vectorises) and
   the per-point maximal violations; multiplier states are kept as status bits (``uint8``).

With ``inner_max = 1`` this is the single-variable SMO of [RH]; the default
``inner_max = 2 L`` performs the same exact single-variable steps but shares one kernel row and
one O(N L) refresh among the multipliers of a point.

Lazy selection (the default, ``n_select = 512``, ``rho = 0.5``, :func:`smo_lambda_lazy_chunk`):
instead of the single most violating multiplier, each round lists up to ``n_select`` points whose
violation is at least ``max(tol, rho * maximal violation)`` (capped at ``n_active / 8``) and
visits them in turn with the same exact steps; the list is rebuilt when it is used up. The
points whose violation is at least ``rho_watch`` (0.3) times the maximum of a full recomputation
are *watched*: the next lists are drawn from them alone (their violations recomputed exactly,
``O(watched * L)`` instead of ``O(N L)``) while their maximal violation stays above
``watch_drop`` (0.7) times that maximum; then all violations are recomputed again. The
stopping rule is unchanged (maximal KKT violation below ``tol`` on a full recomputation), so the
solution is the same to the tolerance.

Block visits (the default from ``N`` visits on, ``n_block = 9``, :func:`_block_visit`): a listed
point is visited together with the ``n_block - 1`` points with a free multiplier most correlated with
it (largest ``|K(x_i, x_q)|`` in its kernel row, found among the free points of the last exact
pass and kept per point until positions move or ``N`` visits pass). The block's multipliers take
exact single-variable steps (largest violation of the block first) on the block's decision values,
kept exact with the block's kernel, while the block's maximal violation is at least ``block_rho``
(0.5) times the list threshold; then ``F`` is refreshed once per moved point. Two highly
correlated multipliers move together along the direction in which their joint curvature is small,
which single-point visits reach only by many alternating steps, each with a kernel row and an
``O(N)`` refresh (the reason for libsvm's second-order working-set selection; the λ-SVM has no
equality constraint, so the block is formed by correlation rather than by a violating pair).
Every step is an exact step of the dual, so the dual never decreases and the stopping rule is
unchanged.

Shrinking (libsvm style, per point; on by default): points whose multipliers all sit at a bound
with KKT slack larger than the current maximal violation are moved behind the active points, so
the O(N L) refresh runs over active points only. The lazy loop checks every ``N / 2`` visits and
shrinks the points whose KKT slack exceeds half the current maximal violation, only when at
least a quarter of the active points qualify (an event permutes every cached kernel row); up to 6
events are kept between exact rebuilds, after which the shrunk points are rebuilt, made active
and shrunk again. When the active problem has converged, the decision
values of the shrunk points are rebuilt exactly and the full problem is checked again, so
shrinking never changes the solution.

Measurements, the comparison with libsvm and the variants tried and dropped are in
``benchmarks/README.md`` ("lambda-SVM solver notes").

Everything is float64 and deterministic, except the cached kernel values, which are float32 when
``tol >= 1e-3`` (``cache_float32``). The numba loops take their state as one
:class:`LambdaState` and the row provider; :func:`solve_lambda_svm` is the thin numpy driver
(time limit, chunking) and returns a :class:`~cohstats.solvers.result.SolverResult`.
"""

from __future__ import annotations

import time
from typing import NamedTuple

import numpy as np
from numba import njit

from cohstats.kernels import KERNEL_CALLABLE, KERNEL_LINEAR
from cohstats.solvers.result import SolverResult
from cohstats.solvers.svm.rows import get_row, kernel_diagonal, n_cache_rows, permute_rows, row_slot, rows_provider

# ---------------------------------------------------------------------------------------------
# KKT violation
# ---------------------------------------------------------------------------------------------

# status bits of a multiplier: may increase (not at C), may decrease (not at 0), true class
_INC = 1
_DEC = 2
_TRUE = 4


@njit(cache=True, nogil=True, inline="always")
def _status(a, is_true, Ci, eps):
    """Status bits of a multiplier (``a <= eps`` lower, ``a >= C - eps`` upper)."""
    s = _TRUE if is_true else 0
    if Ci <= 0.0:
        return s
    if a <= eps:
        return s | _INC
    if a >= Ci - eps:
        return s | _DEC
    return s | _INC | _DEC


@njit(cache=True, nogil=True, inline="always")
def _viol_s(f, s, margin):
    """KKT violation from the decision value ``f`` and the status bits ``s``.

    ``g = -V = l - y f``: ``margin - f`` for the true class, ``f + 1`` otherwise; the violation
    is ``max(g, 0)`` at the lower bound, ``max(-g, 0)`` at the upper bound, ``|g|`` in between.
    """
    g = (margin - f) if (s & _TRUE) else (f + 1.0)
    return max(g * (s & _INC), -g * ((s >> 1) & 1))


@njit(cache=True, nogil=True, inline="always")
def _centre_point(Ft, S, q, margin, inv_L):
    """Centre point ``q``'s decision values over the classes in place; its maximal violation."""
    L = Ft.shape[0]
    mf = 0.0
    for j in range(L):
        mf += Ft[j, q]
    mf *= inv_L
    m = 0.0
    for j in range(L):
        f = Ft[j, q] - mf
        Ft[j, q] = f
        m = max(m, _viol_s(f, S[j, q], margin))
    return m


@njit(cache=True, nogil=True)
def _init_status(alpha, y, Cb, eps):
    N, L = alpha.shape
    S = np.empty((L, N), dtype=np.uint8)
    for i in range(N):
        for j in range(L):
            S[j, i] = _status(alpha[i, j], y[i] == j, Cb[i], eps)
    return S


@njit(cache=True, nogil=True)
def kkt_violations(Ft, alpha, y, margin, Cb, eps):
    """(N, L) KKT violations ([RH] eq. 24-26) from decision values ``Ft`` (L, N) and multipliers."""
    N, L = alpha.shape
    out = np.empty((N, L))
    for i in range(N):
        for j in range(L):
            out[i, j] = _viol_s(Ft[j, i], _status(alpha[i, j], y[i] == j, Cb[i], eps), margin)
    return out


# ---------------------------------------------------------------------------------------------
# decision values from multipliers
# ---------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def decision_from_alpha(alpha, y, kr):
    """``Ft[j, t] = sum_i K(x_i, x_t) btilde_ij`` (shape (L, N)), with ``btilde_ij = b_ij -
    mean_j b_ij`` and ``b_ij = alpha_ij y_ij`` (rows from the provider ``kr``, not permuted)."""
    N, L = alpha.shape
    Ft = np.zeros((L, N))
    c = np.empty(L)
    for i in range(N):
        nz = False
        for j in range(L):
            if alpha[i, j] != 0.0:
                nz = True
                break
        if not nz:
            continue
        mb = 0.0
        for j in range(L):
            b = alpha[i, j] if y[i] == j else -alpha[i, j]
            c[j] = b
            mb += b
        mb /= L
        row = get_row(kr, i)
        for j in range(L):
            cj = c[j] - mb
            Fj = Ft[j]
            for t in range(N):
                Fj[t] += row[t] * cj
    return Ft


# ---------------------------------------------------------------------------------------------
# the SMO loop
# ---------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True, inline="always")
def _swap(p, q, st, perm):
    """Exchange the points at positions ``p`` and ``q`` in every position-indexed array."""
    alpha, Ft, S, pv, y, Cb, Kdiag, pos_of = st.alpha, st.Ft, st.S, st.pv, st.y, st.Cb, st.Kdiag, st.pos_of
    L = alpha.shape[1]
    for j in range(L):
        alpha[p, j], alpha[q, j] = alpha[q, j], alpha[p, j]
        Ft[j, p], Ft[j, q] = Ft[j, q], Ft[j, p]
        S[j, p], S[j, q] = S[j, q], S[j, p]
    for arr in (pv, Cb, Kdiag):
        arr[p], arr[q] = arr[q], arr[p]
    y[p], y[q] = y[q], y[p]
    perm[p], perm[q] = perm[q], perm[p]
    pos_of[perm[p]] = p
    pos_of[perm[q]] = q


@njit(cache=True, nogil=True, inline="always")
def _shrink_event(st, kr, n_act, swa, swb, margin, bv):
    """One shrinking event: snapshot ``alpha`` (for the rebuild), move every shrinkable active
    point behind the active block (replaying the swaps on the row cache) and record the event
    in ``sstate`` / ``counter``. Returns the new number of active points."""
    alpha, Ft, S, snap, sstate, counter = st.alpha, st.Ft, st.S, st.snap, st.sstate, st.counter
    perm = kr.perm
    N, L = alpha.shape
    e = sstate[1]
    for q in range(N):
        for j in range(L):
            snap[e, perm[q], j] = alpha[q, j]
    q = np.int64(0)  # typed ints: a literal 0 passed on compiles the callee once more
    nsw = np.int64(0)
    while q < n_act:
        if _shrinkable(Ft, S, q, margin, bv):
            n_act -= 1
            _swap(q, n_act, st, perm)
            swa[nsw] = q
            swb[nsw] = n_act
            nsw += 1
        else:
            q += 1
    permute_rows(kr, swa, swb, nsw)
    st.ev_bound[e] = n_act  # event e shrank the positions ev_bound[e] .. ev_bound[e - 1] - 1
    sstate[0] = n_act
    sstate[1] = e + 1
    sstate[2] = counter[0]
    counter[2] += 1
    return n_act


@njit(cache=True, nogil=True)
def _shrinkable(Ft, S, q, margin, thr):
    """Every multiplier of the point at position ``q`` sits at a bound with KKT slack > ``thr``."""
    L = Ft.shape[0]
    for j in range(L):
        st = S[j, q]
        f = Ft[j, q]
        g = (margin - f) if (st & _TRUE) else (f + 1.0)  # g = -V
        inc = st & _INC
        dec = st & _DEC
        if inc and dec:
            return False
        if inc and not g < -thr:
            return False
        if dec and not g > thr:
            return False
    return True


@njit(cache=True, nogil=True)
def _count_shrinkable(Ft, S, n_act, margin, thr):
    """Number of active points that :func:`_shrinkable` would shrink at threshold ``thr``."""
    c = 0
    for q in range(n_act):
        if _shrinkable(Ft, S, q, margin, thr):
            c += 1
    return c


@njit(cache=True, nogil=True)
def _rebuild(st, kr, margin, n_events, n_act):
    """Make ``Ft`` exact (and centred) for the shrunk points (positions ``n_act..N-1``).

    The points shrunk at event ``e`` occupy the positions ``ev_bound[e] .. ev_bound[e - 1] - 1``
    (``N`` for ``e = 0``) and had exact, centred ``Ft`` at that event; since then only the
    multipliers of active points moved, so ``F_j += sum_i K(x_i, .) (b_ij - b_ij at event e)``
    on that range (uncentred changes, one vectorised update per changed class, each changed
    point's row fetched once for all events), and the shift common to the classes is removed at
    the end (exact ``F`` rows sum to zero). ``snap[e]`` holds the multipliers (original order) at
    event ``e``.
    """
    alpha, Ft, S, pv, y, pos_of, snap, bound = st.alpha, st.Ft, st.S, st.pv, st.y, st.pos_of, st.snap, st.ev_bound
    N, L = alpha.shape
    d = np.empty(L)
    for i in range(N):
        pi = pos_of[i]
        yi = y[pi]
        s = -1
        for e in range(n_events):
            lo = bound[e]
            hi = N if e == 0 else bound[e - 1]
            if lo >= hi:
                continue
            nz = False
            for j in range(L):
                dd = alpha[pi, j] - snap[e, i, j]
                d[j] = dd if yi == j else -dd
                if dd != 0.0:
                    nz = True
            if not nz:
                continue
            if s < 0:
                s = row_slot(kr, i)
            row = kr.rows[s]
            for j in range(L):
                if d[j] != 0.0:
                    _axpy(Ft[j, lo:hi], row[lo:hi], d[j])
    inv_L = 1.0 / L
    for q in range(n_act, N):
        pv[q] = _centre_point(Ft, S, q, margin, inv_L)


@njit(cache=True, nogil=True)
def _point_steps(i, Fi, delta, alpha, S, yi, Ci, Kii, G, inv_L, margin, tol, eps, inner_max, counter):
    """Exact single-variable steps on the multipliers of point ``i`` (largest violation first;
    after the first, only while the violation exceeds ``tol``; at most ``inner_max``), sharing
    one kernel row. ``Fi`` (the point's decision values) and ``delta`` (the changes of
    ``alpha_ij y_ij``) are updated in place; ``counter[1]`` counts the steps. Returns whether a
    multiplier moved."""
    L = Fi.shape[0]
    moved = False
    for t in range(inner_max):
        jb = -1
        vb = 0.0
        for j in range(L):
            v = _viol_s(Fi[j], S[j, i], margin)
            if v > vb:
                vb = v
                jb = j
        if jb < 0 or (t > 0 and vb < tol):
            break
        j = jb
        ysgn = 1.0 if yi == j else -1.0
        V = ysgn * Fi[j] - (margin if yi == j else 1.0)
        a = alpha[i, j]
        if G > 1e-12:
            an = a - V / G
        else:
            # the variable does not move F: the dual is linear in it
            an = Ci if V < 0.0 else 0.0
        if an < 0.0:
            an = 0.0
        elif an > Ci:
            an = Ci
        d = an - a
        if d == 0.0:
            break
        alpha[i, j] = an
        S[j, i] = _status(an, yi == j, Ci, eps)
        moved = True
        db = d * ysgn
        delta[j] += db
        counter[1] += 1
        sh = Kii * db * inv_L
        for jj in range(L):
            Fi[jj] -= sh
        Fi[j] += Kii * db
    return moved


@njit(cache=True, nogil=True)
def smo_lambda_chunk(st, kr, margin, tol, eps, max_steps, inner_max, shrinking, shrink_every):
    """Run at most ``max_steps`` outer SMO iterations in place.

    ``st`` is the :class:`LambdaState`, ``kr`` the kernel-row provider
    (:class:`cohstats.solvers.svm.rows.KernelRows`). All point-indexed state is kept in *position*
    order (``kr.perm[q]`` is the original index of the point at position ``q``, ``pos_of`` the
    inverse); ``X`` stays in the original order and the cached rows follow the positions. State:
    ``alpha`` (N, L) multipliers; ``Ft`` (L, N) decision values
    ``f_j(x)`` (class-major so that the O(N L) refresh vectorises); ``S`` (L, N) status bits;
    ``pv`` (N,) per-point maximal violation; ``counter`` = [outer iterations, single-variable
    steps, shrink events, rebuilds]. With shrinking, the active points occupy positions
    ``0..sstate[0]-1``; ``sstate = [n_active, n_events, iteration of the last event]``,
    ``snap[e]`` the multipliers at event ``e`` and ``ev_bound[e]`` the first position shrunk at
    event ``e``. Returns ``(status, max_violation)``: status 1 = all violations below ``tol`` (after an
    exact rebuild of shrunk points), 0 = the step budget ran out.
    """
    alpha, Ft, S, pv, y, Cb, Kdiag, counter = st.alpha, st.Ft, st.S, st.pv, st.y, st.Cb, st.Kdiag, st.counter
    snap, sstate = st.snap, st.sstate
    perm = kr.perm
    N, L = alpha.shape
    delta = np.zeros(L)
    c = np.zeros(L)
    Fi = np.zeros(L)
    swa = np.empty(N, dtype=np.int64)
    swb = np.empty(N, dtype=np.int64)
    inv_L = 1.0 / L
    steps = 0
    max_events = snap.shape[0]
    while True:
        n_act = sstate[0]
        # ---- selection: maximal violation over the active points
        best = -1
        bv = 0.0
        for q in range(n_act):
            if pv[q] > bv:
                bv = pv[q]
                best = q
        if bv < tol:
            if n_act < N:
                _rebuild(st, kr, margin, sstate[1], n_act)
                sstate[0] = N
                sstate[1] = 0
                sstate[2] = counter[0]
                counter[3] += 1
                continue
            return 1, bv
        if steps >= max_steps:
            return 0, bv
        steps += 1
        counter[0] += 1
        i = best
        Ci = Cb[i]
        Kii = Kdiag[i]
        G = Kii * (1.0 - inv_L)
        yi = y[i]
        for j in range(L):
            Fi[j] = Ft[j, i]
            delta[j] = 0.0
        moved = _point_steps(i, Fi, delta, alpha, S, yi, Ci, Kii, G, inv_L, margin, tol, eps, inner_max, counter)
        if not moved:
            # no representable step (floating-point stall): drop the point from the scan; the
            # driver's final exact check still sees its violation
            pv[i] = 0.0
            continue
        md = 0.0
        for j in range(L):
            md += delta[j]
        md *= inv_L
        for j in range(L):
            c[j] = delta[j] - md
        rowp = get_row(kr, perm[i])
        # ---- refresh F and the per-point violations of the active points, vectorised
        for q in range(n_act):
            pv[q] = 0.0
        for j in range(L):
            cj = c[j]
            Fj = Ft[j]
            Sj = S[j]
            if cj != 0.0:
                for q in range(n_act):
                    f = Fj[q] + rowp[q] * cj
                    Fj[q] = f
                    pv[q] = max(pv[q], _viol_s(f, Sj[q], margin))
            else:
                for q in range(n_act):
                    pv[q] = max(pv[q], _viol_s(Fj[q], Sj[q], margin))
        # ---- shrinking (libsvm style, per point; at most max_events events between rebuilds)
        if shrinking and sstate[1] < max_events and counter[0] - sstate[2] >= shrink_every:
            n_act = _shrink_event(st, kr, sstate[0], swa, swb, margin, bv)
    return 0, 0.0


# ---------------------------------------------------------------------------------------------
# lazy selection: exact steps and refreshes, violations recomputed every ``k`` visits
# ---------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def _select_top(pv, n_act, B, tol, idx):
    """Positions of the (at most ``B``) largest ``pv >= tol`` among ``0..n_act-1``, largest first
    (ties: smaller position first). Returns their number.

    O(n_act) (one partition for the ``B``-th largest value) plus a stable sort of the ``B``
    selected; the former insertion into a sorted list of ``B`` cost O(n_act B) in the worst case
    (0.12 s of 0.86 s at C=10, margin 18)."""
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


@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True)
def _axpy(yv, xv, a):
    """``yv += a xv`` -- a separate function on contiguous slices so that LLVM vectorises it."""
    for q in range(yv.shape[0]):
        yv[q] += a * xv[q]


@njit(cache=True, nogil=True)
def _axpy2(yv, x1, a1, x2, a2):
    """``yv += a1 x1``, then ``yv += a2 x2``, entry by entry (the rounding of two :func:`_axpy`)."""
    for q in range(yv.shape[0]):
        f = yv[q] + a1 * x1[q]
        yv[q] = f + a2 * x2[q]


@njit(cache=True, nogil=True)
def _axpy4(yv, x1, a1, x2, a2, x3, a3, x4, a4):
    """Four :func:`_axpy` in one pass, in order, entry by entry (the same rounding)."""
    for q in range(yv.shape[0]):
        f = yv[q] + a1 * x1[q]
        f = f + a2 * x2[q]
        f = f + a3 * x3[q]
        yv[q] = f + a4 * x4[q]


@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True, inline="always")
def _flat_max(V, n):
    """``max(0, V[0], ..., V[n - 1])`` with four running maxima (exact: a maximum does not round)."""
    m0 = 0.0
    m1 = 0.0
    m2 = 0.0
    m3 = 0.0
    e = 0
    while e + 4 <= n:
        m0 = max(m0, V[e])
        m1 = max(m1, V[e + 1])
        m2 = max(m2, V[e + 2])
        m3 = max(m3, V[e + 3])
        e += 4
    while e < n:
        m0 = max(m0, V[e])
        e += 1
    return max(max(m0, m1), max(m2, m3))


@njit(cache=True, nogil=True)
def _block_visit(
    st,
    kr,
    i,
    Fi,
    n_act,
    FR,
    nfr,
    margin,
    tol,
    thr_in,
    eps,
    nbk,
    P,
    Pk,
    Fl,
    Kl,
    D,
    stalled,
    PC,
    PCs,
    stamp,
    kmin0,
    slots,
    idx,
    fuse,
    PK,
    Sl,
    Al,
    Vl,
    yl,
    Cl,
    Gl,
    keep=True,
):
    """Point ``i`` and its most correlated partners, optimised together (a block visit).

    Partners: the (at most ``nbk - 1``) points of ``FR[:nfr]`` (points with a free multiplier in
    the class of ``i``'s largest violation, or in any class)
    with the largest ``|K(x_i, x_q)|``, read from ``i``'s kernel row. Exact single-variable steps
    on the block's multipliers (largest violation of the block first; at least one step, then
    while the block's maximal violation is at least ``thr_in``; at most ``8 |block|``) on the
    block's decision values ``Fl``, kept exact with the block's kernel ``Kl`` read from the cached
    rows; then ``F_j += d_j K(x_a, .)`` over the active points for every moved point ``a`` and
    changed class ``j``. A pair of highly correlated multipliers is moved along the direction in
    which their joint curvature is small, which single-variable visits reach only by many
    alternating steps (the second-order working-set idea of libsvm, without its equality
    constraint). ``Fi`` holds ``i``'s centred decision values. The partners of position ``i`` are
    kept in ``PC[i]`` (their number in ``PC[i, 0]``) and reused while ``PCs[i] == stamp`` (the
    caller changes ``stamp`` when positions move and, to follow the free set, every ``N`` visits).
    Partners need ``|K(x_i, x_q)| >= kmin0``. The off-diagonal kernel entries among the block are
    kept with the partners, ``PK[i, a, b] = K(x_P[a], x_P[b])`` (``PK`` has the cached rows'
    dtype, so the entries are bitwise the rows' values), so that a block whose partners are reused
    reads neither the rows nor scattered entries of them (``keep=False``: read again every time);
    a new block reads its kernel from the rows of its first ``|block| - 1`` points, one triangle,
    mirrored (the kernel rows are bitwise symmetric; ``counter[11]`` counts the blocks whose
    kernel was kept). With ``fuse`` and a cache holding the whole block, the refresh adds up to four rows
    per pass over ``F_j`` (:func:`_axpy4`, the rounding of one pass per row); ``slots``, ``idx``
    and ``Sl``, ``Al``, ``Vl``, ``yl``, ``Cl``, ``Gl`` (the block's status bits, multipliers,
    violations, labels, bounds and curvatures) are scratch. Returns the number of moved points (each
    one kernel row and one refresh); ``stalled[0] >= 0`` when the first step could not move."""
    alpha, Ft, S, y, Cb, Kdiag, counter = st.alpha, st.Ft, st.S, st.y, st.Cb, st.Kdiag, st.counter
    perm = kr.perm
    L = Ft.shape[0]
    inv_L = 1.0 / L
    P[0] = i
    c = nbk - 1
    m = 0
    reuse = PCs[i] == stamp and PC[i, 0] <= c
    if reuse:
        m = PC[i, 0]
        for t in range(m):
            P[t + 1] = PC[i, t + 1]
        c = 0  # no scan
    else:
        PCs[i] = stamp
    # the nbk - 1 largest |K(x_i, x_q)| over the free points (a short sorted buffer)
    kmin = -1.0
    if c > 0 and nfr > 0:
        r0 = get_row(kr, perm[i])
    else:
        r0 = kr.rows[0]  # not read
    for k in range(nfr if c > 0 else 0):
        q = FR[k]
        a = abs(r0[q])
        if q == i or a < kmin0 or (m == c and a <= kmin):
            continue
        t = m if m < c else c - 1
        while t > 0 and Pk[t - 1] < a:
            Pk[t] = Pk[t - 1]
            P[t + 1] = P[t]
            t -= 1
        Pk[t] = a
        P[t + 1] = q
        if m < c:
            m += 1
        kmin = Pk[m - 1]
    if c > 0:
        PC[i, 0] = m
        for t in range(m):
            PC[i, t + 1] = P[t + 1]
    nb = m + 1
    counter[9] += 1
    counter[10] += nb
    for j in range(L):
        Fl[0, j] = Fi[j]
        D[0, j] = 0.0
    for a in range(1, nb):
        q = P[a]
        fm = 0.0
        for j in range(L):
            fm += Ft[j, q]
        fm *= inv_L
        for j in range(L):
            Fl[a, j] = Ft[j, q] - fm
            D[a, j] = 0.0
    # the block's kernel: kept with reused partners; otherwise one triangle from the rows of the
    # first nb - 1 points, mirrored (rows are fetched again for the refresh: with a cache smaller
    # than the block they are recomputed, bitwise the same)
    if reuse and keep:
        counter[11] += 1
        PKi = PK[i]
        for a in range(nb):
            for b in range(a + 1, nb):
                v = PKi[a, b]
                Kl[a, b] = v
                Kl[b, a] = v
    else:
        for a in range(nb - 1):
            ra = get_row(kr, perm[P[a]])
            for b in range(a + 1, nb):
                v = ra[P[b]]
                Kl[a, b] = v
                Kl[b, a] = v
                PK[i, a, b] = v
    for a in range(nb):
        Kl[a, a] = Kdiag[P[a]]
    # the block's multipliers, status bits, bounds and curvatures copied next to its decision
    # values (the steps then touch only these and write the multipliers through), and the
    # violations of its multipliers, kept in Vl (flat, point-major) after every step
    n = nb * L
    Ff = Fl.reshape(Fl.size)
    Sf = Sl.reshape(Sl.size)
    for a in range(nb):
        q = P[a]
        yl[a] = y[q]
        Cl[a] = Cb[q]
        Gl[a] = Kdiag[q] * (1.0 - inv_L)
        for j in range(L):
            Sl[a, j] = S[j, q]
            Al[a, j] = alpha[q, j]
    for e in range(n):
        Vl[e] = _viol_s(Ff[e], Sf[e], margin)
    ns = 0
    stalled[0] = -1
    max_in = 8 * nb
    while ns < max_in:
        # the largest violation of the block and its first (point, class) in point-major order:
        # the multiplier a scan with ``v > vb`` would pick (a maximum of four running maxima, then
        # the first entry equal to it; the violations are never NaN)
        vb = _flat_max(Vl, n)
        if not vb > 0.0 or (ns > 0 and vb < thr_in):
            break
        e = 0
        while Vl[e] != vb:
            e += 1
        ab = e // L
        jb = e - ab * L
        q = P[ab]
        yi = yl[ab]
        Ci = Cl[ab]
        G = Gl[ab]
        ysgn = 1.0 if yi == jb else -1.0
        V = ysgn * Fl[ab, jb] - (margin if yi == jb else 1.0)
        a0 = Al[ab, jb]
        if G > 1e-12:
            an = a0 - V / G
        else:
            an = Ci if V < 0.0 else 0.0
        if an < 0.0:
            an = 0.0
        elif an > Ci:
            an = Ci
        d = an - a0
        if d == 0.0:
            if ns == 0:
                stalled[0] = ab
            break
        Al[ab, jb] = an
        alpha[q, jb] = an
        sn = _status(an, yi == jb, Ci, eps)
        S[jb, q] = sn
        Sl[ab, jb] = sn
        db = d * ysgn
        D[ab, jb] += db
        counter[1] += 1
        ns += 1
        # F_l += K_l[:, ab] db, centred: (F - kb / L) + kb in the moved class, as before
        for b in range(nb):
            kb = Kl[b, ab] * db
            sh = kb * inv_L
            for jj in range(L):
                f = Fl[b, jj] - sh
                Fl[b, jj] = f + kb if jj == jb else f
        for e in range(n):
            Vl[e] = _viol_s(Ff[e], Sf[e], margin)
    nm = 0
    if kr.rows.shape[0] <= nb or not fuse:
        for a in range(nb):
            ch = False
            for j in range(L):
                if D[a, j] != 0.0:
                    ch = True
            if not ch:
                continue
            nm += 1
            counter[0] += 1
            counter[4] += n_act
            row = get_row(kr, perm[P[a]])
            for j in range(L):
                if D[a, j] != 0.0:
                    _axpy(Ft[j, :n_act], row[:n_act], D[a, j])
        return nm
    # the cache holds every row of the block at once: class by class, the moved points' rows are
    # added in one pass over F_j for up to four rows -- in the same order per entry as one pass per
    # row (bitwise the same F), reading and writing F_j once instead of once per row
    for a in range(nb):
        ch = False
        for j in range(L):
            if D[a, j] != 0.0:
                ch = True
        if not ch:
            slots[a] = -1
            continue
        nm += 1
        counter[0] += 1
        counter[4] += n_act
        slots[a] = row_slot(kr, perm[P[a]])
    rows = kr.rows
    for j in range(L):
        c = 0
        for a in range(nb):
            if slots[a] >= 0 and D[a, j] != 0.0:
                idx[c] = a
                c += 1
        Fj = Ft[j, :n_act]
        t = 0
        while t < c:
            r = c - t
            a0 = idx[t]
            if r >= 4:
                a1, a2, a3 = idx[t + 1], idx[t + 2], idx[t + 3]
                _axpy4(
                    Fj,
                    rows[slots[a0], :n_act],
                    D[a0, j],
                    rows[slots[a1], :n_act],
                    D[a1, j],
                    rows[slots[a2], :n_act],
                    D[a2, j],
                    rows[slots[a3], :n_act],
                    D[a3, j],
                )
                t += 4
            elif r >= 2:
                a1 = idx[t + 1]
                _axpy2(Fj, rows[slots[a0], :n_act], D[a0, j], rows[slots[a1], :n_act], D[a1, j])
                t += 2
            else:
                _axpy(Fj, rows[slots[a0], :n_act], D[a0, j])
                t += 1
    return nm


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


# ---------------------------------------------------------------------------------------------
# linear kernel: explicit class weight vectors (liblinear-style dual coordinate descent)
# ---------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def _fold_linear(Ft, S, pv, W, X, margin, stall, moves):
    """``Ft[j, q] = <W_j, x_q>`` for all points and the per-point maximal violations."""
    L, p = W.shape
    N = X.shape[0]
    bv = 0.0
    for q in range(N):
        m = 0.0
        for j in range(L):
            f = 0.0
            for k in range(p):
                f += W[j, k] * X[q, k]
            Ft[j, q] = f
            m = max(m, _viol_s(f, S[j, q], margin))
        if stall[q] == moves:
            m = 0.0
        pv[q] = m
        if m > bv:
            bv = m
    return bv


@njit(cache=True, nogil=True)
def smo_lambda_linear_chunk(st, X, W, margin, tol, eps, max_steps, inner_max, k_sel):
    """Linear kernel: the same exact single-variable steps, with ``f_j(x) = <W_j, x>`` and the
    class weight vectors ``W_j = sum_i btilde_ij x_i`` (L, p) kept explicitly.

    A visit computes the point's decision values exactly from ``W`` (``O(L p)``), performs the
    steps of :func:`smo_lambda_chunk` and updates ``W`` (``O(L p)``) -- no kernel row and no
    ``O(N L)`` refresh. All decision values and violations are recomputed exactly from ``W``
    every ``k_sel`` visits (``O(N L p)``); the ``k_sel`` most violating points of that pass are
    visited in order, and stopping is decided on such a fresh pass only (KKT rule unchanged).
    No shrinking (a full pass costs about as much as ``N / 4`` visits of the kernel loop).
    ``counter[0]`` counts visits.
    """
    alpha, Ft, S, pv, y, Cb, Kdiag, counter = st.alpha, st.Ft, st.S, st.pv, st.y, st.Cb, st.Kdiag, st.counter
    N, L = alpha.shape
    p = X.shape[1]
    delta = np.zeros(L)
    Fi = np.zeros(L)
    stall = np.full(N, -1, dtype=np.int64)
    lst = np.empty(max(k_sel, 1), dtype=np.int64)
    inv_L = 1.0 / L
    moves = 0
    steps = 0
    nl = 0
    pos = 0
    while True:
        if pos >= nl:
            bv = _fold_linear(Ft, S, pv, W, X, margin, stall, moves)
            if bv < tol:
                return 1, bv
            if steps >= max_steps:
                return 0, bv
            nl = _select_top(pv, N, k_sel, tol, lst)
            pos = 0
            continue
        if steps >= max_steps:
            pos = nl
            continue
        i = lst[pos]
        pos += 1
        Ci = Cb[i]
        Kii = Kdiag[i]
        G = Kii * (1.0 - inv_L)
        yi = y[i]
        vb0 = 0.0
        for j in range(L):
            f = 0.0
            for k in range(p):
                f += W[j, k] * X[i, k]
            Fi[j] = f
            delta[j] = 0.0
            vb0 = max(vb0, _viol_s(f, S[j, i], margin))
        if vb0 < tol:
            continue
        steps += 1
        counter[0] += 1
        moved = _point_steps(i, Fi, delta, alpha, S, yi, Ci, Kii, G, inv_L, margin, tol, eps, inner_max, counter)
        if not moved:
            stall[i] = moves
            continue
        moves += 1
        md = 0.0
        for j in range(L):
            md += delta[j]
        md *= inv_L
        for j in range(L):
            c = delta[j] - md
            for k in range(p):
                W[j, k] += c * X[i, k]
    return 0, 0.0


# ---------------------------------------------------------------------------------------------
# objectives
# ---------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def objectives(alpha, Ft, y, margin, Cb):
    """(primal, dual) objectives of (14)-(16) and (22) at multipliers ``alpha`` with exact ``Ft``.

    ``sum_j ||w_j||^2 = sum_ij b_ij F_ij``; primal slack ``eta_ij = [l_ij - y_ij F_ij]_+``.
    """
    N, L = alpha.shape
    quad = 0.0
    lin = 0.0
    hinge = 0.0
    for i in range(N):
        for j in range(L):
            f = Ft[j, i]
            if y[i] == j:
                b = alpha[i, j]
                lk = margin
                r = margin - f
            else:
                b = -alpha[i, j]
                lk = 1.0
                r = 1.0 + f
            quad += b * f
            lin += alpha[i, j] * lk
            if r > 0.0:
                hinge += Cb[i] * r
    return 0.5 * quad + hinge, lin - 0.5 * quad


# ---------------------------------------------------------------------------------------------
# driver
# ---------------------------------------------------------------------------------------------


class LambdaState(NamedTuple):
    """State of the lambda-SVM SMO loops, every point-indexed array in *position* order.

    ``alpha`` (N, L) multipliers; ``Ft`` (L, N) decision values; ``S`` (L, N) status bits;
    ``pv`` (N,) per-point maximal violation; ``y``, ``Cb``, ``Kdiag`` the labels, box bounds and
    kernel diagonal; ``counter`` = [visits, single-variable steps, shrink events, rebuilds,
    refresh work, exact passes, listed points, points recomputed by the passes, watch passes,
    block visits, points in the blocks, block visits whose kernel was kept with the partners];
    ``pos_of`` the position of each original index;
    ``ev_bound[e]`` the first position shrunk at event ``e`` (the points shrunk at event ``e``
    occupy ``ev_bound[e] .. ev_bound[e - 1] - 1``, ``N`` for ``e = 0``); ``snap[e]`` the
    multipliers (original order) at event ``e``; ``sstate = [n_active, n_events, visit of the last event]``.
    """

    alpha: np.ndarray
    Ft: np.ndarray
    S: np.ndarray
    pv: np.ndarray
    y: np.ndarray
    Cb: np.ndarray
    Kdiag: np.ndarray
    counter: np.ndarray
    pos_of: np.ndarray
    ev_bound: np.ndarray
    snap: np.ndarray
    sstate: np.ndarray


def solve_lambda_svm(
    X,
    y,
    n_classes,
    margin,
    Cb,
    code,
    kpar,
    Kfull=None,
    *,
    tol=5e-2,
    eps=1e-6,
    max_iter=None,
    time_limit=None,
    cache_size=200.0,
    inner_max=None,
    shrinking=True,
    alpha0=None,
    chunk=None,
    n_select=None,
    rho=0.5,
    rho_watch=0.3,
    watch_drop=0.7,
    cache_float32=None,
    shrink_every=None,
    shrink_rho=0.5,
    shrink_min=4,
    n_block=None,
    block_rho=0.5,
    block_start=None,
    block_kmin=0.0,
    block_class=True,
    block_fuse=True,
    block_keep=True,
):
    """Solve the λ-SVM dual by SMO. Arrays in, arrays out.

    Parameters
    ----------
    X : (N, p) float64 C-contiguous inputs (ignored values for a callable kernel).
    y : (N,) int64 class codes in ``0..n_classes-1``.
    n_classes : int, L >= 2.
    margin : float, the positive margin λ.
    Cb : (N,) float64 box bounds ``C_i`` (``C * w_i``).
    code, kpar : kernel code and parameters of :mod:`cohstats.kernels`.
    Kfull : (N, N) precomputed kernel matrix, only for ``code == KERNEL_CALLABLE``.
    tol : KKT tolerance ``T_kkt`` ([RH] eq. 24-26).
    eps : resolution deciding when a multiplier sits at a bound.
    max_iter : maximal number of outer iterations (default ``max(10_000_000, 100 N)``).
    time_limit : seconds, or None.
    cache_size : kernel-row cache in megabytes.
    inner_max : single-variable steps per fetched row (default 2 for the lazy kernel loop, ``2 L``
        otherwise; 1 = textbook SMO).
    n_select : points listed per exact recomputation of all violations (default 512, used at
        most ``n_active // 8``; 1 below 512 active points): the lazy selection of
        :func:`smo_lambda_lazy_chunk`;
        ``1`` runs the exact maximal-violation loop of :func:`smo_lambda_chunk`. With the linear
        kernel and ``n_select > 1`` the solver keeps the class weight vectors explicitly
        (:func:`smo_lambda_linear_chunk`, lists of ``N / 8`` points, no kernel rows).
    rho_watch, watch_drop : lazy selection between full recomputations (default 0.3 and 0.7; see
        :func:`smo_lambda_lazy_chunk`): the lists are drawn from the points whose violation was at
        least ``rho_watch`` times the maximum of the last full recomputation, while their current
        maximum stays above ``watch_drop`` times that maximum (``rho_watch = 0``: a full
        recomputation for every list).
    rho : a listed point is visited only while its current violation is at least ``rho`` times
        the maximal violation of the last exact pass (default 0.5; 0 = every listed point still
        above ``tol``).
    shrinking : leave out of the refresh the points whose multipliers all sit at a bound with
        KKT slack above the current maximal violation (rebuilt exactly before stopping).
    alpha0 : (N, L) warm start (clipped into the box).
    cache_float32 : store the cached kernel rows in float32 (as libsvm does; everything else,
        including the accumulation of ``F``, stays float64). Halves the memory traffic per visit
        and doubles the rows that fit in ``cache_size``; the solver then solves the problem with
        the rounded kernel (relative error ``2^-24`` per entry), so ``F`` and the KKT check are
        exact for that kernel and within ``2^-24 sum_i |btilde_ij| K_it`` of the float64 values.
        Default (None): float32 when ``tol >= 1e-3``, float64 for tighter tolerances.
    chunk : outer iterations per numba call (time-limit granularity).
    shrink_every : visits between shrinking checks (default ``max(N, 1000) // 2``).
    shrink_rho, shrink_min : lazy kernel loop: a check shrinks the points whose multipliers all sit
        at a bound with KKT slack above ``shrink_rho`` times the maximal violation of the current
        exact pass (default 0.5), and only when at least one active point in ``shrink_min``
        qualifies (default 4). Any values give the same solution (shrunk points are rebuilt
        exactly and checked before stopping); they only change the work.
    n_block : points per block visit of the lazy kernel loop (default 9; 1 = single-point
        visits): a visited point and the ``n_block - 1`` points with a free multiplier most
        correlated with it (largest ``|K(x_i, x_q)|`` in its row) are optimised together on their
        kernel block (:func:`_block_visit`), then ``F`` is refreshed once per moved point.
    block_rho : inside a block, steps continue while the block's maximal violation is at least
        ``block_rho`` times the list threshold (default 0.5; never below ``tol``).
    block_start : visits before block visits begin (default ``N``: the first pass over the data
        is made of single-point visits, where partners rarely pay).
    block_class : partners among the points whose multiplier of the visited point's most violated
        class is free (default True; False: a free multiplier of any class).
    block_kmin : partners need ``|K(x_i, x_q)| >= block_kmin`` (default 0).
    block_fuse : a block's refresh adds up to four rows per pass over ``F_j`` (the same rounding
        as one pass per row) when the row cache holds the whole block (default True).
    block_keep : the kernel among a block's points is kept with its partner list and reused with
        it (default True; False: read from the cached rows at every block visit, bitwise the same
        values and results).

    Returns
    -------
    SolverResult
        ``dual`` the multipliers ``alpha`` (N, L); ``intercept`` 0.0 (the lambda-SVM has no
        bias); ``n_iter`` the point visits (one kernel row and one refresh each; a block visit
        counts its moved points); ``converged``;
        ``objective`` the dual objective ``W(alpha)`` (maximised). ``info`` holds ``F`` (N, L)
        the decision values, ``n_steps``, ``status`` ("converged" | "max_iter" | "time_limit" |
        "stalled"), ``max_violation``, ``primal``, ``dual``, ``kernel_rows`` (rows computed),
        ``n_cache_rows``, ``n_shrink`` (events), ``n_rebuild``, ``refresh_work`` (sum over visits
        of the refreshed length; lazy path only), ``n_fold`` and ``n_listed`` (full exact passes of
        the lazy loop and points listed by all passes), ``n_watch`` (passes over the watched
        points only), ``pass_work`` (points recomputed by both kinds of pass), ``n_blocks`` and
        ``block_points`` (block visits and the points they held), ``block_kept`` (block visits
        that reused the kernel kept with their partners) and ``time``.

    Examples
    --------
    >>> import numpy as np
    >>> from cohstats.kernels import make_kernel
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(30, 2)); y = rng.integers(0, 3, 30)
    >>> k = make_kernel("rbf", X, gamma=0.5)
    >>> res = solve_lambda_svm(X, y, 3, 5.0, np.full(30, 1.0), k.code, k.kpar, tol=1e-6)
    >>> bool(res.converged), bool(np.allclose(res.info["F"].sum(axis=1), 0.0))
    (True, True)
    """
    t0 = time.perf_counter()
    X = np.ascontiguousarray(X, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.int64)
    N = y.shape[0]
    L = int(n_classes)
    Cb = np.ascontiguousarray(Cb, dtype=np.float64)
    kpar = np.ascontiguousarray(kpar, dtype=np.float64)
    if code == KERNEL_CALLABLE:
        Kfull = np.ascontiguousarray(Kfull, dtype=np.float64)
    if max_iter is None:
        max_iter = max(10_000_000, 100 * N)
    lazy_kernel = n_select is None or n_select > 1
    lazy_kernel = lazy_kernel and code != KERNEL_LINEAR
    if inner_max is None:
        inner_max = 2 if lazy_kernel else 2 * L
    if cache_float32 is None:
        cache_float32 = tol >= 1e-3
    cdt = np.float32 if cache_float32 else np.float64
    n_slots = n_cache_rows(N, cache_size, np.dtype(cdt).itemsize)
    # the cached rows are permuted with the points: a precomputed matrix is copied, not read in place
    kr = rows_provider(int(code), X, kpar, Kfull, n_slots=n_slots, dtype=cdt, huge_pages=True)
    Kdiag = kernel_diagonal(kr.code, kr.X, kpar, kr.Kpre)
    if alpha0 is None:
        alpha = np.zeros((N, L))
        Ft = np.zeros((L, N))
    else:
        alpha = np.clip(np.array(alpha0, dtype=np.float64, order="C"), 0.0, Cb[:, None])
        Ft = decision_from_alpha(alpha, y, kr)
    margin = float(margin)
    eps = float(eps)
    S = _init_status(alpha, y, Cb, eps)
    pv = kkt_violations(Ft, alpha, y, margin, Cb, eps).max(axis=1) if N else np.zeros(0)
    pv = np.ascontiguousarray(pv)
    counter = np.zeros(12, dtype=np.int64)
    # position-ordered copies (the solver permutes points when shrinking)
    yp, Cp, Kp = y.copy(), Cb.copy(), Kdiag.copy()
    perm = kr.perm  # position -> original index, shared with the row cache
    pos_of = np.arange(N, dtype=np.int64)
    max_events = 6 if shrinking else 0
    snap = np.zeros((max_events, N, L))
    ev_bound = np.full(max(max_events, 1), N, dtype=np.int64)
    sstate = np.array([N, 0, 0], dtype=np.int64)
    if shrink_every is None:
        # an event permutes every cached kernel row (O(cached rows x shrunk points)); the lazy
        # loop shrinks only when a quarter of the active points qualify, so checks every N / 2
        # visits cost little (benchmarks/README.md, sessions 9 and 10)
        shrink_every = int(max(N, 1000)) // 2
    if n_select is None:
        n_select = 512
    n_select = int(max(1, n_select))
    if n_block is None:
        n_block = 9
    if block_start is None:
        block_start = N
    linear = code == KERNEL_LINEAR and n_select > 1 and N > 0
    if linear:
        # explicit weights W_j = sum_i btilde_ij x_i; visits in lists of N / 8 (exact greedy below
        # N = 512, as for the kernel loop); no shrinking
        k_lin = max(1, N // 8) if N >= 512 else 1
        B = np.where(y[:, None] == np.arange(L), alpha, -alpha)
        W = np.ascontiguousarray((B - B.mean(axis=1, keepdims=True)).T @ X)
    state = LambdaState(alpha, Ft, S, pv, yp, Cp, Kp, counter, pos_of, ev_bound, snap, sstate)
    if chunk is None:
        chunk = 2000 if time_limit is not None else max_iter
    status = "max_iter"
    while True:
        budget = int(min(chunk, max_iter - counter[0]))
        if budget <= 0:
            break
        if linear:
            st, _ = smo_lambda_linear_chunk(state, X, W, margin, float(tol), eps, budget, int(inner_max), k_lin)
        elif n_select == 1:
            st, _ = smo_lambda_chunk(
                state, kr, margin, float(tol), eps, budget, int(inner_max), bool(shrinking), shrink_every
            )
        else:
            st, _ = smo_lambda_lazy_chunk(
                state,
                kr,
                margin,
                float(tol),
                eps,
                budget,
                int(inner_max),
                bool(shrinking),
                shrink_every,
                n_select,
                float(rho),
                float(rho_watch),
                float(watch_drop),
                float(shrink_rho),
                int(shrink_min),
                int(n_block),
                float(block_rho),
                int(block_start),
                float(block_kmin),
                bool(block_class),
                bool(block_fuse),
                bool(block_keep),
            )
        if st == 1:
            status = "converged"
            break
        if time_limit is not None and time.perf_counter() - t0 > time_limit:
            status = "time_limit"
            break
    if sstate[0] < N:
        _rebuild(state, kr, margin, sstate[1], sstate[0])
        counter[3] += 1
    # back to the original order
    alpha_o = np.empty_like(alpha)
    alpha_o[perm] = alpha
    Ft_o = np.empty_like(Ft)
    Ft_o[:, perm] = Ft
    alpha, Ft = alpha_o, np.ascontiguousarray(Ft_o)
    maxv = float(kkt_violations(Ft, alpha, y, margin, Cb, eps).max()) if N else 0.0
    if status == "converged" and not maxv < tol:
        status = "stalled"
    primal, dual = objectives(alpha, Ft, y, margin, Cb)
    info = {
        "F": np.ascontiguousarray(Ft.T),
        "n_steps": int(counter[1]),
        "refresh_work": int(counter[4]),
        "status": status,
        "max_violation": maxv,
        "primal": float(primal),
        "dual": float(dual),
        "kernel_rows": int(kr.state[1]),
        "n_cache_rows": n_slots,
        "n_shrink": int(counter[2]),
        "n_rebuild": int(counter[3]),
        "n_fold": int(counter[5]),
        "n_listed": int(counter[6]),
        "pass_work": int(counter[7]),
        "n_watch": int(counter[8]),
        "n_blocks": int(counter[9]),
        "block_points": int(counter[10]),
        "block_kept": int(counter[11]),
        "time": time.perf_counter() - t0,
    }
    return SolverResult(
        coef=None,
        dual=alpha,
        intercept=0.0,
        n_iter=int(counter[0]),
        converged=status == "converged",
        objective=float(dual),
        info=info,
    )
