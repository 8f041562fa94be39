"""SMO for the λ-SVM dual ([RH] eq. 22-23; SPEC.md 6.2-6.3).

The dual over the ``N * L`` multipliers ``alpha[i, j]`` (point ``i``, class ``j``) is

    maximize  W(alpha) = sum_ij alpha_ij l_ij - 1/2 sum_ij sum_i'j' b_ij b_i'j' K(x_i, x_i') (I[j=j'] - 1/L)
    s.t.      0 <= alpha_ij <= C_i,

with ``b_ij = alpha_ij y_ij``, ``y_ij = +1`` if ``y_i = j`` else ``-1``, ``l_ij = margin`` for the
true class and ``1`` otherwise. There is no equality constraint (no bias), so every exact step is a
single-variable clipped Newton step. The solver keeps the decision values
``F[i, j] = f_j(x_i) = sum_i' K(x_i', x_i) (b_i'j - mean_j' b_i'j')`` (rows sum to zero) and the
KKT quantities ``V_ij = y_ij F_ij - l_ij`` (``dW/dalpha_ij = -V_ij``).

Algorithm (one *outer* iteration):

1. ``(i, j) = argmax`` of the KKT violation of SPEC 6.3 / [RH] eq. 24-26 (maximal violation;
   the per-point maxima are kept in ``pv`` so the scan is O(N));
2. fetch the kernel row ``K(x_i, .)`` from an LRU cache of ``n_slots`` rows (memory
   ``O(n_slots * N)``, never ``O(N^2 L^2)``);
3. exact single-variable step on ``alpha[i, j]``; then, with ``inner_max > 1``, further exact
   single-variable steps on the other multipliers of the same point ``i`` (largest violation
   first) while they violate by more than ``tol`` -- they share the kernel row just fetched;
4. one O(nnz(row) * L) pass updates ``F`` and the violations of the points touched by the row.

With ``inner_max = 1`` this is literally the single-variable SMO of SPEC 6.3 ([D20]).
Optional shrinking (libsvm style, per point) removes from the scan points whose multipliers
all sit at a bound with a KKT slack larger than the current maximal violation; before stopping,
their decision values are rebuilt exactly and the whole problem is checked again.

Everything is float64 and deterministic. The numba kernels only take arrays and scalars;
:func:`solve_lambda_svm` is the thin numpy driver (time limit, chunking).
"""
from __future__ import annotations

import math
import time

import numpy as np
from numba import njit

from cohstats.kernels import KERNEL_CALLABLE, kernel_pair

# ---------------------------------------------------------------------------------------------
# kernel-row cache (LRU)
# ---------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def _get_row(i, code, X, kpar, Kfull, cache, slot_of, owner, stamp, clock):
    """Return the slot index holding row ``K(x_i, .)`` (computing it on a miss).

    ``clock[0]`` is the LRU clock, ``clock[1]`` counts kernel-row computations (misses).
    """
    clock[0] += 1
    s = slot_of[i]
    if s >= 0:
        stamp[s] = clock[0]
        return s
    # choose a slot: a free one, else the least recently used
    n_slots = cache.shape[0]
    best = 0
    bst = stamp[0]
    for t in range(n_slots):
        if owner[t] < 0:
            best = t
            break
        if stamp[t] < bst:
            bst = stamp[t]
            best = t
    s = best
    if owner[s] >= 0:
        slot_of[owner[s]] = -1
    owner[s] = i
    slot_of[i] = s
    stamp[s] = clock[0]
    clock[1] += 1
    row = cache[s]
    n = X.shape[0]
    if code == KERNEL_CALLABLE:
        for t in range(n):
            row[t] = Kfull[i, t]
    else:
        xi = X[i]
        for t in range(n):
            row[t] = kernel_pair(code, xi, X[t], kpar)
    return s


# ---------------------------------------------------------------------------------------------
# KKT violation
# ---------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True, inline="always")
def _viol(f, a, yi, j, margin, Ci, eps):
    """KKT violation of multiplier (i, j) given its decision value ``f = F[i, j]`` (SPEC 6.3)."""
    if yi == j:
        V = f - margin
    else:
        V = -f - 1.0
    if Ci <= 0.0:
        return 0.0
    if a <= eps:
        return -V if V < 0.0 else 0.0
    if a >= Ci - eps:
        return V if V > 0.0 else 0.0
    return abs(V)


@njit(cache=True, nogil=True, inline="always")
def _set_w(Wn, Wp, alpha, i, j, y, Ci, eps):
    """Branch-free violation weights of a wrong-class multiplier: with ``g = F_ij + 1 = -V_ij``
    its violation is ``max(0, g Wn_ij, -g Wp_ij)``; true-class entries get zero weights (they are
    handled separately)."""
    a = alpha[i, j]
    if y[i] == j or Ci <= 0.0:
        Wn[i, j] = 0.0
        Wp[i, j] = 0.0
    elif a <= eps:
        Wn[i, j] = 1.0
        Wp[i, j] = 0.0
    elif a >= Ci - eps:
        Wn[i, j] = 0.0
        Wp[i, j] = 1.0
    else:
        Wn[i, j] = 1.0
        Wp[i, j] = 1.0


@njit(cache=True, nogil=True)
def init_weights(alpha, y, Cb, eps):
    N, L = alpha.shape
    Wn = np.zeros((N, L))
    Wp = np.zeros((N, L))
    for i in range(N):
        for j in range(L):
            _set_w(Wn, Wp, alpha, i, j, y, Cb[i], eps)
    return Wn, Wp


@njit(cache=True, nogil=True)
def _point_viol(F, alpha, y, i, margin, Cb, eps):
    L = F.shape[1]
    m = 0.0
    for j in range(L):
        v = _viol(F[i, j], alpha[i, j], y[i], j, margin, Cb[i], eps)
        if v > m:
            m = v
    return m


@njit(cache=True, nogil=True)
def kkt_violations(F, alpha, y, margin, Cb, eps):
    """(N, L) array of KKT violations (SPEC 6.3) for given decision values and multipliers."""
    N, L = F.shape
    out = np.empty((N, L))
    for i in range(N):
        for j in range(L):
            out[i, j] = _viol(F[i, j], alpha[i, j], y[i], j, margin, Cb[i], eps)
    return out


# ---------------------------------------------------------------------------------------------
# decision values from multipliers
# ---------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def decision_from_alpha(alpha, y, code, X, kpar, Kfull, cache, slot_of, owner, stamp, clock,
                        rows_mask):
    """F = K btilde restricted to the rows with ``rows_mask`` true (others left at 0).

    ``btilde[i, j] = b_ij - mean_j b_ij`` with ``b_ij = alpha_ij y_ij``.
    """
    N, L = alpha.shape
    F = np.zeros((N, L))
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
        for j in range(L):
            c[j] -= mb
        s = _get_row(i, code, X, kpar, Kfull, cache, slot_of, owner, stamp, clock)
        row = cache[s]
        for t in range(N):
            if rows_mask[t]:
                k = row[t]
                if k != 0.0:
                    for j in range(L):
                        F[t, j] += k * c[j]
    return F


# ---------------------------------------------------------------------------------------------
# the SMO loop
# ---------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def smo_lambda_chunk(alpha, F, Wn, Wp, pv, active, n_active_arr, frozen_F, changed,
                     y, margin, Cb, Kdiag, code, X, kpar, Kfull,
                     cache, slot_of, owner, stamp, clock,
                     tol, eps, max_steps, inner_max, shrinking, shrink_every, counter):
    """Run at most ``max_steps`` outer SMO iterations in place.

    State arrays (all updated in place): ``alpha`` (N, L); ``F`` (N, L) decision values (exact
    for active points; for shrunk points ``frozen_F`` holds their values at shrink time and
    ``changed`` marks points whose multipliers moved since the last reconstruction);
    ``pv`` (N,) per-point max violation (0 for shrunk points); ``active`` (N,) permutation whose
    first ``n_active_arr[0]`` entries are the active points; ``counter`` = [outer iterations,
    single-variable steps, shrink events, unshrink events].

    Returns ``(status, max_violation)``; status 1 = converged on the full problem, 0 = the step
    budget ran out.
    """
    N, L = alpha.shape
    delta = np.zeros(L)
    c = np.zeros(L)
    Fi = np.zeros(L)
    inv_L = 1.0 / L
    steps = 0
    while True:
        n_active = n_active_arr[0]
        # ---- selection: maximal violation over active points
        best = -1
        bv = 0.0
        for q in range(n_active):
            i = active[q]
            if pv[i] > bv:
                bv = pv[i]
                best = i
        if bv < tol:
            if n_active < N:
                # unshrink: rebuild F of shrunk points exactly and re-check everything
                _unshrink(alpha, F, pv, active, n_active_arr, frozen_F, changed, y, margin, Cb,
                          code, X, kpar, Kfull, cache, slot_of, owner, stamp, clock, eps)
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
            Fi[j] = F[i, j]
            delta[j] = 0.0
        moved = False
        # ---- exact single-variable steps on the multipliers of point i
        for t in range(inner_max):
            jb = -1
            vb = 0.0
            for j in range(L):
                v = _viol(Fi[j], alpha[i, j], yi, j, margin, Ci, eps)
                if v > vb:
                    vb = v
                    jb = j
            if jb < 0 or (t > 0 and vb < tol):
                break
            j = jb
            ysgn = 1.0 if yi == j else -1.0
            lk = margin if yi == j else 1.0
            V = ysgn * Fi[j] - lk
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
            _set_w(Wn, Wp, alpha, i, j, y, Ci, eps)
            moved = True
            db = d * ysgn
            delta[j] += db
            counter[1] += 1
            # local update of F[i, :]
            sh = Kii * db * inv_L
            for jj in range(L):
                Fi[jj] -= sh
            Fi[j] += Kii * db
        md = 0.0
        for j in range(L):
            md += delta[j]
        md *= inv_L
        nzc = False
        for j in range(L):
            c[j] = delta[j] - md
            if c[j] != 0.0:
                nzc = True
        if not moved:
            # no representable step on this point (floating-point stall): take it out of the
            # scan; the final exact check in the driver still sees its violation
            pv[i] = 0.0
            continue
        if not nzc:
            pv[i] = _point_viol(F, alpha, y, i, margin, Cb, eps)
            continue
        if n_active < N:
            changed[i] = True
        s = _get_row(i, code, X, kpar, Kfull, cache, slot_of, owner, stamp, clock)
        row = cache[s]
        # ---- update F and the violations of the active points
        for q in range(n_active):
            t = active[q]
            k = row[t]
            if k != 0.0:
                m = 0.0
                for j in range(L):
                    f = F[t, j] + k * c[j]
                    F[t, j] = f
                    g = f + 1.0
                    m = max(m, g * Wn[t, j], -g * Wp[t, j])
                yt = y[t]
                v = _viol(F[t, yt], alpha[t, yt], yt, yt, margin, Cb[t], eps)
                pv[t] = max(m, v)
        pv[i] = _point_viol(F, alpha, y, i, margin, Cb, eps)
        # ---- shrinking
        if shrinking and counter[0] % shrink_every == 0:
            if _shrink(alpha, F, pv, active, n_active_arr, frozen_F, y, margin, Cb, eps, bv):
                counter[2] += 1
    return 0, 0.0


@njit(cache=True, nogil=True)
def _shrink(alpha, F, pv, active, n_active_arr, frozen_F, y, margin, Cb, eps, thr):
    """Move to the inactive tail the points whose multipliers are all at a bound with KKT slack
    larger than ``thr`` (the current maximal violation). Returns True if any point moved."""
    N, L = alpha.shape
    n_active = n_active_arr[0]
    q = 0
    moved = False
    while q < n_active:
        i = active[q]
        ok = True
        Ci = Cb[i]
        for j in range(L):
            a = alpha[i, j]
            if y[i] == j:
                V = F[i, j] - margin
            else:
                V = -F[i, j] - 1.0
            if a <= 0.0:
                if not V > thr:
                    ok = False
                    break
            elif a >= Ci:
                if not V < -thr:
                    ok = False
                    break
            else:
                ok = False
                break
        if ok:
            for j in range(L):
                frozen_F[i, j] = F[i, j]
            pv[i] = 0.0
            n_active -= 1
            active[q] = active[n_active]
            active[n_active] = i
            moved = True
        else:
            q += 1
    n_active_arr[0] = n_active
    return moved


@njit(cache=True, nogil=True)
def _unshrink(alpha, F, pv, active, n_active_arr, frozen_F, changed, y, margin, Cb,
              code, X, kpar, Kfull, cache, slot_of, owner, stamp, clock, eps):
    """Rebuild F for the shrunk points exactly and make every point active again.

    F of a shrunk point t = F at shrink time + sum over points i whose multipliers moved since of
    K(x_i, x_t) (btilde_i - btilde_i at shrink time). We do not store the old btilde; instead F of
    the shrunk points is recomputed from scratch with the rows of all support points (exact).
    """
    N, L = alpha.shape
    n_active = n_active_arr[0]
    mask = np.zeros(N, dtype=np.bool_)
    for q in range(n_active, N):
        mask[active[q]] = True
    Fs = decision_from_alpha(alpha, y, code, X, kpar, Kfull, cache, slot_of, owner, stamp,
                             clock, mask)
    for q in range(n_active, N):
        t = active[q]
        for j in range(L):
            F[t, j] = Fs[t, j]
        pv[t] = _point_viol(F, alpha, y, t, margin, Cb, eps)
    for i in range(N):
        changed[i] = False
    n_active_arr[0] = N


# ---------------------------------------------------------------------------------------------
# objectives
# ---------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def objectives(alpha, F, y, margin, Cb):
    """(primal, dual) objectives of (14)-(16) and (22) at multipliers ``alpha`` with exact ``F``.

    ``sum_j ||w_j||^2 = sum_ij b_ij F_ij``; primal slack ``eta_ij = [l_ij - y_ij F_ij]_+``.
    """
    N, L = alpha.shape
    quad = 0.0
    lin = 0.0
    hinge = 0.0
    for i in range(N):
        for j in range(L):
            if y[i] == j:
                b = alpha[i, j]
                lk = margin
                r = margin - F[i, j]
            else:
                b = -alpha[i, j]
                lk = 1.0
                r = 1.0 + F[i, j]
            quad += b * F[i, j]
            lin += alpha[i, j] * lk
            if r > 0.0:
                hinge += Cb[i] * r
    return 0.5 * quad + hinge, lin - 0.5 * quad


# ---------------------------------------------------------------------------------------------
# driver
# ---------------------------------------------------------------------------------------------


def n_cache_rows(n: int, cache_size: float) -> int:
    """Number of kernel rows of length ``n`` that fit in ``cache_size`` megabytes (at least 2)."""
    rows = int(cache_size * 2**20 // (8 * max(n, 1)))
    return int(min(max(rows, 2), max(n, 2)))


def solve_lambda_svm(X, y, n_classes, margin, Cb, code, kpar, Kfull=None, *, tol=5e-2, eps=1e-6,
                     max_iter=None, time_limit=None, cache_size=200.0, inner_max=None,
                     shrinking=True, alpha0=None, chunk=None):
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
    inner_max : single-variable steps per fetched row (default ``2 L``; 1 = textbook SMO).
    shrinking : bool.
    alpha0 : (N, L) warm start (clipped into the box).
    chunk : outer iterations per numba call (time-limit granularity).

    Returns
    -------
    dict with ``alpha`` (N, L), ``F`` (N, L), ``n_iter``, ``n_steps``, ``converged``,
    ``status`` ("converged" | "max_iter" | "time_limit"), ``max_violation``, ``primal``,
    ``dual``, ``kernel_rows`` (rows computed), ``time``, ``n_shrink``, ``n_unshrink``.

    Examples
    --------
    >>> import numpy as np
    >>> from cohstats.kernels import make_kernel
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(30, 2)); y = rng.integers(0, 3, 30)
    >>> k = make_kernel("rbf", X, gamma=0.5)
    >>> res = solve_lambda_svm(X, y, 3, 5.0, np.full(30, 1.0), k.code, k.kpar, tol=1e-6)
    >>> bool(res["converged"]), bool(np.allclose(res["F"].sum(axis=1), 0.0))
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
        Kdiag = np.ascontiguousarray(np.diag(Kfull), dtype=np.float64)
    else:
        Kfull = np.zeros((1, 1))
        from cohstats.kernels import kernel_diag
        Kdiag = kernel_diag(code, X, kpar)
    if max_iter is None:
        max_iter = max(10_000_000, 100 * N)
    if inner_max is None:
        inner_max = 2 * L
    n_slots = n_cache_rows(N, cache_size)
    cache = np.empty((n_slots, N))
    slot_of = np.full(N, -1, dtype=np.int64)
    owner = np.full(n_slots, -1, dtype=np.int64)
    stamp = np.zeros(n_slots, dtype=np.int64)
    clock = np.zeros(2, dtype=np.int64)
    if alpha0 is None:
        alpha = np.zeros((N, L))
        F = np.zeros((N, L))
    else:
        alpha = np.clip(np.array(alpha0, dtype=np.float64, order="C"), 0.0, Cb[:, None])
        F = decision_from_alpha(alpha, y, code, X, kpar, Kfull, cache, slot_of, owner, stamp,
                                clock, np.ones(N, dtype=np.bool_))
    Wn, Wp = init_weights(alpha, y, Cb, float(eps))
    pv = np.empty(N)
    for i in range(N):
        pv[i] = _point_viol(F, alpha, y, i, float(margin), Cb, float(eps))
    active = np.arange(N, dtype=np.int64)
    n_active = np.array([N], dtype=np.int64)
    frozen_F = np.zeros((N, L))
    changed = np.zeros(N, dtype=np.bool_)
    counter = np.zeros(4, dtype=np.int64)
    shrink_every = int(min(N, 1000))
    if chunk is None:
        chunk = 2000 if time_limit is not None else max_iter
    status = "max_iter"
    maxv = float(pv.max()) if N else 0.0
    while True:
        budget = int(min(chunk, max_iter - counter[0]))
        if budget <= 0:
            break
        st, maxv = smo_lambda_chunk(alpha, F, Wn, Wp, pv, active, n_active, frozen_F, changed, y,
                                    float(margin), Cb, Kdiag, int(code), X, kpar, Kfull,
                                    cache, slot_of, owner, stamp, clock, float(tol), float(eps),
                                    budget, int(inner_max), bool(shrinking), shrink_every,
                                    counter)
        if st == 1:
            status = "converged"
            break
        if time_limit is not None and time.perf_counter() - t0 > time_limit:
            status = "time_limit"
            break
    if n_active[0] < N:
        # budget exhausted while shrunk: make F exact everywhere before returning
        _unshrink(alpha, F, pv, active, n_active, frozen_F, changed, y, float(margin), Cb,
                  int(code), X, kpar, Kfull, cache, slot_of, owner, stamp, clock, float(eps))
        maxv = float(pv.max())
    maxv = float(kkt_violations(F, alpha, y, float(margin), Cb, float(eps)).max()) if N else 0.0
    if status == "converged" and not maxv < tol:
        status = "stalled"
    primal, dual = objectives(alpha, F, y, float(margin), Cb)
    return {
        "alpha": alpha, "F": F, "n_iter": int(counter[0]), "n_steps": int(counter[1]),
        "converged": status == "converged", "status": status, "max_violation": float(maxv),
        "primal": float(primal), "dual": float(dual), "kernel_rows": int(clock[1]),
        "n_cache_rows": n_slots, "n_shrink": int(counter[2]), "n_unshrink": int(counter[3]),
        "time": time.perf_counter() - t0,
    }
