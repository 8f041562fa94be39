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

Block visits (the default from ``N`` visits on, ``n_block = 9``, :mod:`.smo_lambda_block`): a listed
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

The defaults (list length, thresholds, block size, shrinking schedule) change the work, not the
solution beyond ``tol`` (measured; benchmarks/log.csv).

Everything is float64 and deterministic, except the cached kernel values, which are float32 when
``tol >= 1e-3`` (``cache_float32``). The numba loops take their state as one
:class:`LambdaState` and the row provider; :func:`solve_lambda_svm` is the thin numpy driver
(time limit, chunking) and returns a :class:`~cohstats.solvers.result.SolverResult`.
"""

from __future__ import annotations

import time
from typing import NamedTuple

import numpy as np
from cohstats._numba_cache import njit


from cohstats._numba_cache import internal
from cohstats.kernels import KERNEL_CALLABLE, KERNEL_LINEAR
from cohstats.solvers.result import SolverResult
from cohstats.solvers.svm.rows import get_row, kernel_diagonal, n_cache_rows, rows_provider
from cohstats.solvers.svm.smo_lambda_kkt import (
    _init_status,
    _point_steps,
    _rebuild,
    _shrink_event,
    _viol_s,
    decision_from_alpha,
    kkt_violations,
    objectives,
    rebuild_shrunk,
)
from cohstats.solvers.svm.smo_lambda_block import block_scratch
from cohstats.solvers.svm.smo_lambda_lazy import LazyOptions, run_lazy_chunk, smo_lambda_lazy_chunk
from cohstats.solvers.svm.smo_lambda_select import _select_top

__all__ = [
    "LambdaState",
    "decision_from_alpha",
    "kkt_violations",
    "objectives",
    "smo_lambda_chunk",
    "smo_lambda_lazy_chunk",
    "smo_lambda_linear_chunk",
    "solve_lambda_svm",
]

# ---------------------------------------------------------------------------------------------
# exact greedy loop
# ---------------------------------------------------------------------------------------------


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
# linear kernel: explicit class weight vectors (liblinear-style dual coordinate descent)
# ---------------------------------------------------------------------------------------------


@internal
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
        kernel block (:mod:`.smo_lambda_block`), then ``F`` is refreshed once per moved point.
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
        # visits cost little (measured; benchmarks/log.csv)
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
    lazy_opt = LazyOptions(
        margin,
        float(tol),
        eps,
        int(inner_max),
        bool(shrinking),
        int(shrink_every),
        float(shrink_rho),
        int(shrink_min),
        n_select,
        float(rho),
        float(rho_watch),
        float(watch_drop),
        float(block_rho),
        float(block_kmin),
        int(block_start),
        bool(block_class),
        bool(block_fuse),
        bool(block_keep),
    )
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
            # fresh block scratch per call: partner lists are kept within one call
            bs = block_scratch(N, L, int(n_block), kr.rows.dtype)
            st, _ = run_lazy_chunk(state, kr, bs, lazy_opt, budget)
        if st == 1:
            status = "converged"
            break
        if time_limit is not None and time.perf_counter() - t0 > time_limit:
            status = "time_limit"
            break
    if sstate[0] < N:
        rebuild_shrunk(state, kr, margin)
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
