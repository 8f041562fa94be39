"""The event loop of the exact pi path of the weighted SVM, and what both pi-grid drivers share.

:func:`path_core` follows the elbow (E), left (L) and right (R) sets of
:mod:`cohstats.solvers.svm.svmpath` from one grid value to the next with the bordered inverse of
the elbow system kept by rank-one updates (:func:`invert_pivot`, :func:`_inv_add`,
:func:`_inv_remove`); the helpers at the end (grid check, thread split, result) are shared by
:func:`cohstats.solvers.svm.svmpath.pi_path` and
:func:`cohstats.solvers.svm.svmpath_grid.pi_grid_smo`.
"""

from __future__ import annotations

import numpy as np
from cohstats._numba_cache import njit


from cohstats._numba_cache import internal
from cohstats.solvers.result import SolverResult
from cohstats.solvers.svm.rows import get_row

R_SET = 0
E_SET = 1
L_SET = 2
FIXED = 3

FLAG_DONE = 0
FLAG_FALLBACK = 1
FLAG_MAXEVENTS = 2


@internal
def _S(yi, wi, pi):
    return wi * (1.0 - pi) if yi > 0 else wi * pi


@internal
def _dS(yi, wi):
    return -wi if yi > 0 else wi


@njit(cache=True, nogil=True)
def invert_pivot(A):
    """Inverse by Gauss-Jordan elimination with partial pivoting; ``ok`` False if singular."""
    m = A.shape[0]
    M = A.copy()
    inv = np.eye(m)
    scale = 0.0
    for i in range(m):
        for j in range(m):
            v = abs(M[i, j])
            if v > scale:
                scale = v
    if scale == 0.0:
        return inv, False
    for c in range(m):
        piv = c
        best = abs(M[c, c])
        for r in range(c + 1, m):
            if abs(M[r, c]) > best:
                best = abs(M[r, c])
                piv = r
        if best <= 1e-11 * scale:
            return inv, False
        if piv != c:
            for j in range(m):
                t = M[c, j]
                M[c, j] = M[piv, j]
                M[piv, j] = t
                t = inv[c, j]
                inv[c, j] = inv[piv, j]
                inv[piv, j] = t
        d = 1.0 / M[c, c]
        for j in range(m):
            M[c, j] *= d
            inv[c, j] *= d
        for r in range(m):
            if r != c:
                fct = M[r, c]
                if fct != 0.0:
                    for j in range(m):
                        M[r, j] -= fct * M[c, j]
                        inv[r, j] -= fct * inv[c, j]
    return inv, True


@internal
def _bordered(E, nE, y, kr):
    m = nE + 1
    Ks = np.zeros((m, m))
    for a in range(nE):
        ia = E[a]
        Ka = get_row(kr, ia)
        Ks[0, a + 1] = y[ia]
        Ks[a + 1, 0] = y[ia]
        for c in range(nE):
            ic = E[c]
            Ks[a + 1, c + 1] = y[ia] * y[ic] * Ka[ic]
    return Ks


@internal
def _mv(A, x):
    """``A @ x`` by plain loops: numba's ``@`` calls BLAS, whose threads cost far more than these
    small products on a busy machine (measured: up to 30 ms per call under load)."""
    m = A.shape[0]
    out = np.empty(m)
    for i in range(m):
        s = 0.0
        for j in range(x.shape[0]):
            s += A[i, j] * x[j]
        out[i] = s
    return out


@internal
def _inv_add(Minv, u, c):
    """Inverse of ``[[M, u], [u', c]]`` from ``Minv``; ``ok`` False when the pivot vanishes."""
    m = Minv.shape[0]
    v = _mv(Minv, u)
    s = c
    for i in range(m):
        s -= u[i] * v[i]
    big = abs(c)
    for i in range(m):
        if abs(u[i]) > big:
            big = abs(u[i])
    out = np.empty((m + 1, m + 1))
    if abs(s) <= 1e-10 * max(big, 1.0):
        return out, False
    for i in range(m):
        for j in range(m):
            out[i, j] = Minv[i, j] + v[i] * v[j] / s
        out[i, m] = -v[i] / s
        out[m, i] = -v[i] / s
    out[m, m] = 1.0 / s
    return out, True


@internal
def _inv_remove(P, k):
    """Inverse of a symmetric matrix with row/column ``k`` deleted, from its inverse ``P``."""
    m = P.shape[0]
    out = np.empty((m - 1, m - 1))
    pkk = P[k, k]
    ii = 0
    for i in range(m):
        if i == k:
            continue
        jj = 0
        for j in range(m):
            if j == k:
                continue
            out[ii, jj] = P[i, j] - P[i, k] * P[k, j] / pkk
            jj += 1
        ii += 1
    return out, abs(pkk) > 0.0


@internal
def _enter_elbow(kr, k, status, f, y, w, sL):
    """Move point ``k`` into the elbow (``y_k f_k = 1``), taking it out of ``sL = sum_L w_i K(., x_i)``
    when it comes from ``L``."""
    if status[k] == L_SET:
        Kk = get_row(kr, k)
        for q in range(sL.shape[0]):
            sL[q] -= w[k] * Kk[q]
    status[k] = E_SET
    f[k] = y[k]


@njit(cache=True, nogil=True)
def path_core(kr, y, w, nlam, grid, g0, pi0, alpha, alpha0, f, status, A_out, A0_out, max_events):
    """Follow the path from the exact state at ``pi0`` (``status`` holds E/L/R/FIXED).

    Records ``alpha`` and ``alpha_0`` at every ``grid[g] >= pi0``, ``g >= g0`` into ``A_out[g]``,
    ``A0_out[g]``. Returns ``(g_next, n_events, flag, n_jumps)``: ``g_next`` is the first grid
    index not recorded (``len(grid)`` when done); ``flag`` is ``FLAG_FALLBACK`` when the
    bordered system is singular or a constraint is violated by more than 1e-6 (the caller
    re-solves at ``grid[g_next]``), ``FLAG_MAXEVENTS`` when ``max_events`` was reached.
    """
    n = y.shape[0]
    ng = grid.shape[0]
    # sum over L of w_i K(., x_i)
    sL = np.zeros(n)
    for i in range(n):
        if status[i] == L_SET:
            Ki = get_row(kr, i)
            for k in range(n):
                sL[k] += w[i] * Ki[k]
    E = np.empty(n, dtype=np.int64)
    nE = 0
    for i in range(n):
        if status[i] == E_SET:
            E[nE] = i
            nE += 1
    pi = pi0
    g = g0
    # grid points at the start value
    while g < ng and grid[g] <= pi + 1e-14:
        for i in range(n):  # (an element loop: a slice assignment compiles numba's shape-error text)
            A_out[g, i] = alpha[i]
        A0_out[g] = alpha0
        g += 1
    h = np.zeros(n)
    n_events = 0
    n_jumps = 0
    last = -1
    need_inv = True
    since_refresh = 0
    Minv = np.zeros((1, 1))
    while g < ng:
        if n_events >= max_events:
            return g, n_events, FLAG_MAXEVENTS, n_jumps
        # ---------------- empty elbow: intercept jump
        if nE == 0:
            best = -np.inf
            kbest = -1
            for k in range(n):
                if status[k] == R_SET and y[k] > 0:
                    d = 1.0 - f[k]
                elif status[k] == L_SET and y[k] < 0:
                    d = -1.0 - f[k]
                else:
                    continue
                if d > best:
                    best = d
                    kbest = k
            if kbest < 0 or best > 1e-6:
                return g, n_events, FLAG_FALLBACK, n_jumps
            if best > 0.0:
                best = 0.0
            alpha0 += nlam * best
            for k in range(n):
                f[k] += best
            _enter_elbow(kr, kbest, status, f, y, w, sL)
            E[0] = kbest
            nE = 1
            need_inv = True
            last = kbest
            n_jumps += 1
            continue
        # ---------------- slopes from the bordered system (inverse kept up to date)
        m = nE + 1
        rhs = np.empty(m)
        sw = 0.0
        for i in range(n):
            if status[i] == L_SET:
                sw += w[i]
        rhs[0] = sw
        for a in range(nE):
            ia = E[a]
            rhs[a + 1] = y[ia] * sL[ia]
        if (not need_inv) and since_refresh >= 50:
            # residual check of the updated inverse; rebuild only when it has drifted
            Ks = _bordered(E, nE, y, kr)
            bs = _mv(Minv, rhs)
            res = _mv(Ks, bs) - rhs
            scale = 1.0
            for a in range(m):
                if abs(rhs[a]) > scale:
                    scale = abs(rhs[a])
            for a in range(m):
                if abs(res[a]) > 1e-10 * scale:
                    need_inv = True
            since_refresh = 0
        if need_inv:
            Ks = _bordered(E, nE, y, kr)
            Minv, ok = invert_pivot(Ks)
            if not ok:
                return g, n_events, FLAG_FALLBACK, n_jumps
            need_inv = False
            since_refresh = 0
        bs = _mv(Minv, rhs)
        for k in range(n):
            h[k] = bs[0] - sL[k]
        for a in range(nE):
            ia = E[a]
            Ka = get_row(kr, ia)
            c = bs[a + 1] * y[ia]
            for k in range(n):
                h[k] += c * Ka[k]
        for k in range(n):
            h[k] /= nlam
        # ---------------- next event
        dmin = np.inf
        kev = -1
        kind = -1
        for a in range(nE):
            ia = E[a]
            bi = bs[a + 1]
            if bi < 0.0:
                d = -alpha[ia] / bi
                if d < 0.0:
                    d = 0.0
                if not (ia == last and d <= 1e-12) and d < dmin:
                    dmin = d
                    kev = ia
                    kind = R_SET
            gi = bi - _dS(y[ia], w[ia])
            if gi > 0.0:
                d = (_S(y[ia], w[ia], pi) - alpha[ia]) / gi
                if d < 0.0:
                    d = 0.0
                if not (ia == last and d <= 1e-12) and d < dmin:
                    dmin = d
                    kev = ia
                    kind = L_SET
        for k in range(n):
            st = status[k]
            if st != L_SET and st != R_SET:
                continue
            yf = y[k] * f[k]
            yh = y[k] * h[k]
            if st == L_SET and yh > 0.0:
                d = (1.0 - yf) / yh
            elif st == R_SET and yh < 0.0:
                d = (1.0 - yf) / yh
            else:
                continue
            if d < 0.0:
                d = 0.0
            if not (k == last and d <= 1e-12) and d < dmin:
                dmin = d
                kev = k
                kind = E_SET
        # ---------------- record grid points on this linear piece
        while g < ng and grid[g] <= pi + dmin:
            t = grid[g] - pi
            for k in range(n):
                st = status[k]
                if st == E_SET:
                    A_out[g, k] = alpha[k]
                elif st == L_SET:
                    A_out[g, k] = _S(y[k], w[k], grid[g])
                else:
                    A_out[g, k] = 0.0
            for a in range(nE):
                ia = E[a]
                A_out[g, ia] = alpha[ia] + t * bs[a + 1]
            A0_out[g] = alpha0 + t * bs[0]
            g += 1
        if g >= ng or kev < 0:
            return g, n_events, FLAG_DONE, n_jumps
        # ---------------- move to the event
        n_events += 1
        pi += dmin
        alpha0 += dmin * bs[0]
        for a in range(nE):
            ia = E[a]
            alpha[ia] += dmin * bs[a + 1]
        for k in range(n):
            if status[k] == L_SET:
                alpha[k] = _S(y[k], w[k], pi)
            f[k] += dmin * h[k]
        for a in range(nE):
            f[E[a]] = y[E[a]]
        if kind == R_SET or kind == L_SET:
            # leave the elbow
            pos = 0
            for a in range(nE):
                if E[a] == kev:
                    pos = a
            for a in range(pos, nE - 1):
                E[a] = E[a + 1]
            nE -= 1
            if nE == 0:
                need_inv = True
            else:
                Minv, ok = _inv_remove(Minv, pos + 1)
                since_refresh += 1
            status[kev] = kind
            f[kev] = y[kev]
            if kind == R_SET:
                alpha[kev] = 0.0
            else:
                alpha[kev] = _S(y[kev], w[kev], pi)
                Kk = get_row(kr, kev)
                for q in range(n):
                    sL[q] += w[kev] * Kk[q]
        else:
            _enter_elbow(kr, kev, status, f, y, w, sL)
            Kk = get_row(kr, kev)
            u = np.empty(nE + 1)
            u[0] = y[kev]
            for a in range(nE):
                u[a + 1] = y[kev] * y[E[a]] * Kk[E[a]]
            Minv, ok = _inv_add(Minv, u, Kk[kev])
            if not ok:
                need_inv = True  # the rebuild detects a singular system (fallback)
            since_refresh += 1
            E[nE] = kev
            nE += 1
        last = kev
        # ---------------- safety checks
        for a in range(nE):
            ia = E[a]
            s_hi = _S(y[ia], w[ia], pi)
            if alpha[ia] < -1e-6 * (1.0 + s_hi) or alpha[ia] > s_hi + 1e-6 * (1.0 + s_hi):
                return g, n_events, FLAG_FALLBACK, n_jumps
        for k in range(n):
            st = status[k]
            if st == L_SET and y[k] * f[k] > 1.0 + 1e-6:
                return g, n_events, FLAG_FALLBACK, n_jumps
            if st == R_SET and y[k] * f[k] < 1.0 - 1e-6:
                return g, n_events, FLAG_FALLBACK, n_jumps
    return g, n_events, FLAG_DONE, n_jumps


def _path_result(grid, A, A0, nlam, n_events, n_restarts, n_jumps, *, n_iter=None, converged=True, objective=None):
    """The :class:`~cohstats.solvers.result.SolverResult` of a pi grid (see :func:`pi_path`)."""
    return SolverResult(
        coef=None,
        dual=A,
        intercept=A0,
        n_iter=int(n_events if n_iter is None else n_iter),
        converged=bool(converged),
        objective=objective,
        info={
            "grid": grid,
            "nlam": float(nlam),
            "n_events": int(n_events),
            "n_restarts": int(n_restarts),
            "n_jumps": int(n_jumps),
        },
    )


def _check_grid(grid) -> np.ndarray:
    """The pi grid as a float array; strictly increasing inside (0, 1) or ValueError."""
    grid = np.ascontiguousarray(grid, dtype=np.float64)
    if grid.ndim != 1 or grid.size == 0 or np.any(np.diff(grid) <= 0) or grid[0] <= 0 or grid[-1] >= 1:
        raise ValueError("grid must be a strictly increasing sequence inside (0, 1)")
    return grid


MIN_N_THREADS = 400


def _n_threads(n_jobs, n: int = MIN_N_THREADS) -> int:
    """Threads for the two halves of a grid: 1 (``None``/1) or 2 (``n_jobs >= 2``, or -1 with
    at least two cores); the two halves are independent, so there is no use for more. Below
    ``n = 400`` always 1: the thread pool and the BLAS thread limit cost about a millisecond,
    and the exact path's second start solve more, than a small problem gains (measured)."""
    if n_jobs is None:
        return 1
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)) or n_jobs == 0:
        raise ValueError(f"n_jobs must be None or a non-zero integer (-1 = all cores); got {n_jobs!r}")
    import os

    want = (os.cpu_count() or 1) if n_jobs < 0 else int(n_jobs)
    return 2 if want >= 2 and n >= MIN_N_THREADS else 1


def _common_args(y, grid, nlam, weights, n_jobs):
    """Validated ``(y, n, grid, w, threads)`` shared by :func:`pi_path` and :func:`pi_grid_smo`."""
    y = np.ascontiguousarray(y, dtype=np.float64)
    n = y.shape[0]
    grid = _check_grid(grid)
    if not (np.isfinite(nlam) and nlam > 0):
        raise ValueError(f"nlam (n * lambda) must be positive; got {nlam!r}")
    w = np.ones(n) if weights is None else np.ascontiguousarray(weights, dtype=np.float64)
    return y, n, grid, w, _n_threads(n_jobs, n)


def _two_halves(lower, upper, threads):
    """Run the two half-grid computations, in two threads when asked (numba releases the GIL)."""
    if threads < 2:
        return lower(), upper()
    from concurrent.futures import ThreadPoolExecutor

    from threadpoolctl import threadpool_limits

    # one BLAS thread per half: OpenBLAS's own threads would otherwise serialise the two
    with threadpool_limits(limits=1, user_api="blas"), ThreadPoolExecutor(max_workers=2) as ex:
        fl = ex.submit(lower)
        fu = ex.submit(upper)
        return fl.result(), fu.result()
