"""Exact solution path of the weighted SVM in the class weight pi ([WSL] section 4).

Scaled problem (case weights ``w_i``, class weights ``S_i(pi) = w_i (1 - pi)`` for ``y_i = +1``
and ``w_i pi`` for ``y_i = -1``):

    min  sum_i S_i(pi) xi_i + (1 / (2 n lambda)) alpha' K_y alpha
    f(x) = (alpha_0 + sum_i alpha_i y_i K(x, x_i)) / (n lambda),   0 <= alpha_i <= S_i(pi)

so ``alpha_i / (n lambda)`` are the C-SVM multipliers of :mod:`cohstats.solvers.svm.smo` with
``C_i = S_i / (n lambda)`` and ``alpha_0 = n lambda b``.

Between events the elbow multipliers and the intercept are linear in ``pi``; with elbow ``E``
and left set ``L`` the slopes solve the bordered system (with case weights)

    [[0, y_E'], [y_E, (K_y)_EE]] (b_0, b_E) = (sum_L w_i, (y_k sum_{i in L} w_i K_ki)_{k in E})

and ``f`` moves along ``h(x) = (b_0 + sum_E b_i y_i K(x, x_i) - sum_L w_i K(x, x_i)) / (n lambda)``.
Events: an elbow multiplier reaching 0 (to ``R``) or ``S_i(pi)`` (to ``L``), or a point of ``L``
or ``R`` reaching ``y f = 1`` (to ``E``).  An empty elbow (only possible at the isolated ``pi``
where ``sum_L S_i y_i = 0``) is left by an intercept jump.  The path starts from an
exact SMO solve (``tol = 1e-10``) polished by solving the elbow system, tracks set membership
explicitly, and falls back to a fresh SMO solve at the next grid point when the bordered
system is singular or an update violates a constraint by more than ``1e-6``.

Cost: each event costs ``O(n |E|)`` for the direction ``h`` plus ``O(|E|^2)`` for the slopes and
the bordered-inverse update, and there are about ``1.6 n`` events over ``(0, 1)``. Measured
timings against one SMO fit and the warm-started grid of :func:`pi_grid_smo` are kept in the
repository's ``benchmarks/README.md``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from cohstats.kernels import KERNEL_CALLABLE, gram_symmetric, kernel_cross
from cohstats.solvers.result import SolverResult
from cohstats.solvers.svm.rows import expansion, get_row, kernel_diagonal, n_cache_rows, rows_provider
from cohstats.solvers.svm.smo import _bound_value, _start_gradient, _update_gbar, smo_core, smo_core_active, smo_solve

R_SET = 0
E_SET = 1
L_SET = 2
FIXED = 3

FLAG_DONE = 0
FLAG_FALLBACK = 1
FLAG_MAXEVENTS = 2


@njit(cache=True, nogil=True)
def _S(yi, wi, pi):
    return wi * (1.0 - pi) if yi > 0 else wi * pi


@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True)
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
        A_out[g, :] = alpha
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


def train_decision(code, X, kpar, Kpre, y, alpha, alpha0, nlam, n_cache):
    """Training decision values ``f_k = (alpha_0 + sum_i alpha_i y_i K_ki) / (n lambda)``."""
    kr = rows_provider(int(code), X, kpar, Kpre, n_slots=n_cache, in_place=True)
    return expansion(kr, alpha * y, float(alpha0)) / nlam


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


def _start_state(code, X, kpar, Kpre, y, w, nlam, pi, tol_path, cache_size):
    """Exact weighted-SVM solution at ``pi`` by SMO, classified into E/L/R and polished.

    SMO first runs to ``tol = 1e-6``; the E/L/R classification is then made exact by solving
    the elbow system and verified (bounds, ``y f`` of L and R to 1e-7). If the verification
    fails, SMO continues (warm start) to ``1e-9`` and the polish is retried; a degenerate
    problem that still cannot be polished starts from the SMO solution itself.
    """
    n = y.shape[0]
    S = np.where(y > 0, w * (1.0 - pi), w * pi)
    # a tight tolerance; degenerate problems (flat f at extreme pi) may stall SMO at this
    # level, so the iterations are capped: the polish below makes the start exact anyway
    r = smo_solve(
        X, y, code=code, kpar=kpar, Kpre=Kpre, C=S / nlam, tol=1e-6, cache_size=cache_size, max_iter=max(20_000, 50 * n)
    )
    out = _classify_polish(code, X, kpar, Kpre, y, S, nlam, r, tol_path, cache_size)
    if out is not None:
        return out
    r = smo_solve(
        X,
        y,
        code=code,
        kpar=kpar,
        Kpre=Kpre,
        C=S / nlam,
        tol=1e-9,
        a0=r.dual,
        cache_size=cache_size,
        max_iter=max(5_000, 20 * n),
    )
    out = _classify_polish(code, X, kpar, Kpre, y, S, nlam, r, tol_path, cache_size)
    if out is not None:
        return out
    return _classify_polish(code, X, kpar, Kpre, y, S, nlam, r, tol_path, cache_size, force=True)


def _classify_polish(code, X, kpar, Kpre, y, S, nlam, r, tol_path, cache_size, force=False):
    """E/L/R sets from an SMO solution, polished by the elbow system; None if not verified."""
    n = y.shape[0]
    alpha = r.dual * nlam
    alpha0 = r.intercept * nlam
    nc = n_cache_rows(n, cache_size)
    Xc = np.empty((n, 1)) if code == KERNEL_CALLABLE else X
    Kc = Kpre if code == KERNEL_CALLABLE else np.empty((1, 1))
    f = train_decision(code, Xc, kpar, Kc, y, alpha, alpha0, nlam, nc)
    yf = y * f
    status = np.full(n, R_SET, dtype=np.int64)
    tb = tol_path * np.maximum(S, 1.0)
    for i in range(n):
        if S[i] <= 0.0:
            status[i] = FIXED
        elif alpha[i] <= tb[i]:
            status[i] = R_SET if yf[i] > 1.0 + tol_path else E_SET
        elif alpha[i] >= S[i] - tb[i]:
            status[i] = L_SET if yf[i] < 1.0 - tol_path else E_SET
        else:
            status[i] = E_SET
    # polish: alpha_R = 0, alpha_L = S exactly; solve the elbow system for (alpha_0, alpha_E)
    Eidx = np.flatnonzero(status == E_SET)
    Lidx = np.flatnonzero(status == L_SET)
    a_new = np.zeros(n)
    a_new[Lidx] = S[Lidx]
    if Eidx.size:
        KE = _kernel_block(code, X, kpar, Kpre, Eidx, np.arange(n))
        m = Eidx.size + 1
        M = np.zeros((m, m))
        M[0, 1:] = y[Eidx]
        M[1:, 0] = y[Eidx]
        M[1:, 1:] = (y[Eidx][:, None] * y[Eidx][None, :]) * KE[:, Eidx]
        rhs = np.empty(m)
        rhs[0] = -np.sum(S[Lidx] * y[Lidx])
        rhs[1:] = nlam - y[Eidx] * (KE[:, Lidx] @ (S[Lidx] * y[Lidx]))
        Minv, ok = invert_pivot(M)  # the same pivoted elimination the path updates use
        sol = Minv @ rhs
        if ok and np.all(sol[1:] >= -1e-8 * np.maximum(S[Eidx], 1)) and np.all(sol[1:] <= S[Eidx] * (1 + 1e-8) + 1e-12):
            a_new[Eidx] = np.clip(sol[1:], 0.0, S[Eidx])
            a0_new = sol[0]
            f_new = train_decision(code, Xc, kpar, Kc, y, a_new, a0_new, nlam, nc)
            ok = np.all(y[status == R_SET] * f_new[status == R_SET] >= 1 - 1e-7) and np.all(
                y[Lidx] * f_new[Lidx] <= 1 + 1e-7
            )
            if ok:
                f_new[Eidx] = y[Eidx]
                return a_new, a0_new, f_new, status
    if not force:
        return None
    # not polishable: keep the SMO solution (E points are put exactly on the elbow)
    alpha = np.where(status == R_SET, 0.0, alpha)
    alpha[Lidx] = S[Lidx]
    f[Eidx] = y[Eidx]
    return alpha, alpha0, f, status


def _kernel_block(code, X, kpar, Kpre, rows_idx, cols_idx):
    if code == KERNEL_CALLABLE:
        return Kpre[np.ix_(rows_idx, cols_idx)]
    return kernel_cross(
        int(code),
        np.ascontiguousarray(X[rows_idx]),
        np.ascontiguousarray(X[cols_idx]),
        np.ascontiguousarray(kpar, dtype=np.float64),
    )


def _check_grid(grid) -> np.ndarray:
    """The pi grid as a float array; strictly increasing inside (0, 1) or ValueError."""
    grid = np.ascontiguousarray(grid, dtype=np.float64)
    if grid.ndim != 1 or grid.size == 0 or np.any(np.diff(grid) <= 0) or grid[0] <= 0 or grid[-1] >= 1:
        raise ValueError("grid must be a strictly increasing sequence inside (0, 1)")
    return grid


MIN_N_THREADS = 400
SHRINK_FIRST = 10  # shrinking schedule of the warm-started grid solves (see pi_grid_smo)
SHRINK_EVERY = 30
ACTIVE_MARGIN = 0.1  # warm grid solves start with the bounded multipliers beyond this KKT slack shrunk
SECANT_RATIO = 0.9  # secant starts while the shrinking box keeps at least this ratio per grid step


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


def pi_path(
    X,
    y,
    *,
    code: int,
    kpar=None,
    Kpre=None,
    nlam: float,
    grid,
    weights=None,
    tol_path: float = 1e-8,
    cache_size: float = 200.0,
    max_events: int | None = None,
    n_jobs: int | None = None,
) -> SolverResult:
    """Weighted-SVM multipliers at every ``pi`` of an increasing ``grid`` in (0, 1) ([WSL] section 4).

    Parameters
    ----------
    X, y : training inputs (n, d) and +-1 labels.
    code, kpar, Kpre : kernel (codes of :mod:`cohstats.kernels`; ``-1`` = precomputed ``Kpre``).
    nlam : ``n * lambda`` (so the C-SVM costs are ``C_i = S_i(pi) / nlam``).
    grid : increasing values in (0, 1); the path starts with an exact SMO solve at ``grid[0]``.
    weights : case weights ``w_i >= 0`` (default ones).
    tol_path : tolerance for the initial E/L/R classification.
    n_jobs : ``None``/1 follows the path once from ``grid[0]``; 2 (or -1 on a machine with two
        cores) follows the two halves of the grid in two threads (from ``n = 400``; below, one
        path), each from an exact start at its middle end: the upper half upwards, the lower half
        as the upward path of the
        label-flipped problem (``y -> -y`` maps ``pi -> 1 - pi``, ``alpha -> alpha`` and
        ``alpha_0 -> -alpha_0``). Both are exact, so the result is the same up to the path's
        rounding.

    Returns
    -------
    SolverResult
        ``A = dual`` with ``A[g, i] = alpha_i(grid[g])`` (``0 <= alpha_i <= S_i``) and
        ``A0 = intercept``; the decision function at ``grid[g]`` is
        ``(A0[g] + sum_i A[g, i] y_i K(x_i, x)) / nlam``. ``n_iter`` counts the path's events;
        ``converged`` is True (every grid value is recorded on an exact piece of the path);
        ``objective`` is None; ``info`` holds ``grid``, ``nlam``, ``n_events``, ``n_restarts``
        (fresh SMO starts after a singular elbow system) and ``n_jumps`` (empty-elbow intercept
        jumps).

    Examples
    --------
    >>> import numpy as np
    >>> from cohstats.kernels import KERNEL_LINEAR
    >>> rng = np.random.default_rng(1); X = rng.normal(size=(40, 2))
    >>> y = np.where(X[:, 0] + 0.5 * rng.normal(size=40) > 0, 1.0, -1.0)
    >>> r = pi_path(X, y, code=KERNEL_LINEAR, nlam=40 * 0.1, grid=np.linspace(0.1, 0.9, 9))
    >>> r.dual.shape
    (9, 40)
    """
    y, n, grid, w, threads = _common_args(y, grid, nlam, weights, n_jobs)
    kpar = np.zeros(5) if kpar is None else np.ascontiguousarray(kpar, dtype=np.float64)
    if threads >= 2 and grid.size >= 4:
        k = grid.size // 2
        args = dict(
            code=code,
            kpar=kpar,
            Kpre=Kpre,
            nlam=nlam,
            weights=weights,
            tol_path=tol_path,
            cache_size=cache_size,
            max_events=max_events,
        )
        lo, up = _two_halves(
            lambda: pi_path(X, -y, grid=1.0 - grid[:k][::-1], **args),
            lambda: pi_path(X, y, grid=grid[k:], **args),
            threads,
        )
        li, ui = lo.info, up.info
        return _path_result(
            grid,
            np.vstack([lo.dual[::-1], up.dual]),
            np.concatenate([-lo.intercept[::-1], up.intercept]),
            nlam,
            li["n_events"] + ui["n_events"],
            li["n_restarts"] + ui["n_restarts"],
            li["n_jumps"] + ui["n_jumps"],
        )
    if code == KERNEL_CALLABLE:
        Kpre = np.ascontiguousarray(Kpre, dtype=np.float64)
        Xn = np.empty((n, 1))
    else:
        X = np.ascontiguousarray(X, dtype=np.float64)
        Xn = X
        Kpre = np.empty((1, 1))
    if code != KERNEL_CALLABLE:
        # identical (x, y) pairs are one observation with the summed weight (exactly the same
        # weighted SVM); without this the elbow system is singular whenever two copies sit on
        # the elbow (e.g. the resampled inputs of the GKL perturbation)
        key = np.column_stack([X, y])
        uniq, first, inv = np.unique(key, axis=0, return_index=True, return_inverse=True)
        inv = inv.ravel()
        if uniq.shape[0] < n:
            wg = np.bincount(inv, weights=w, minlength=uniq.shape[0])
            keep = first
            sub = pi_path(
                X[keep],
                y[keep],
                code=code,
                kpar=kpar,
                nlam=nlam,
                grid=grid,
                weights=wg,
                tol_path=tol_path,
                cache_size=cache_size,
                max_events=max_events,
            )
            share = np.where(wg[inv] > 0, w / np.where(wg[inv] > 0, wg[inv], 1.0), 0.0)
            A = sub.dual[:, inv] * share[None, :]
            return sub._replace(dual=A)
    if max_events is None:
        max_events = 50 * n + 1000
    nc = n_cache_rows(n, cache_size)
    ng = grid.size
    A = np.zeros((ng, n))
    A0 = np.zeros(ng)
    g = 0
    n_events = n_restarts = n_jumps = 0
    while g < ng:
        alpha, alpha0, f, status = _start_state(code, Xn, kpar, Kpre, y, w, float(nlam), grid[g], tol_path, cache_size)
        kr = rows_provider(int(code), Xn, kpar, Kpre, n_slots=nc, in_place=True)
        g_new, ev, flag, jumps = path_core(
            kr, y, w, float(nlam), grid, g, grid[g], alpha, float(alpha0), f, status, A, A0, int(max_events)
        )
        n_events += ev
        n_jumps += jumps
        if flag != FLAG_DONE:
            n_restarts += 1
            if g_new == g:  # not even the start point was recorded: impossible by design
                raise RuntimeError("pi_path: no progress after a restart")
        g = g_new
    return _path_result(grid, A, A0, nlam, n_events, n_restarts, n_jumps)


def path_decision(X, y, res: SolverResult, Xnew, *, code: int, kpar=None, Kpre_new=None) -> np.ndarray:
    """Decision values at every grid pi of a :func:`pi_path` / :func:`pi_grid_smo` result: array
    ``(len(grid), m)``."""
    A, A0, nlam = res.dual, res.intercept, res.info["nlam"]
    kpar = np.zeros(5) if kpar is None else np.ascontiguousarray(kpar, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if code == KERNEL_CALLABLE:
        Kn = np.ascontiguousarray(Kpre_new, dtype=np.float64)
        return (Kn @ (A * y).T).T / nlam + A0[:, None] / nlam
    Xtr = np.ascontiguousarray(X, dtype=np.float64)
    Xnew = np.ascontiguousarray(Xnew, dtype=np.float64)
    used = np.flatnonzero(np.any(A != 0.0, axis=0))
    Kn = kernel_cross(int(code), Xnew, np.ascontiguousarray(Xtr[used]), kpar)
    return ((A[:, used] * y[used]) @ Kn.T + A0[:, None]) / nlam


@njit(cache=True, nogil=True)
def _repair_equality(a, C, pos):
    """Restore ``sum_i y_i a_i = 0`` inside the box ``0 <= a <= C`` (a repaired copy of ``a``),
    moving free multipliers first.

    With ``d = sum_{y=+1} a - sum_{y=-1} a > 0`` positives are lowered and negatives raised (the
    reverse for ``d < 0``), each in proportion to its room; multipliers at a bound are used only
    when the free ones cannot absorb ``d`` (keeping the bounded ones, whose rescaling is exact
    along the path, where the rescaling put them saves SMO iterations).
    """
    a = a.copy()
    n = a.shape[0]
    csum = 0.0
    for i in range(n):
        csum += C[i]
    eps = 1e-13 * (1.0 + csum)
    for use_bounded in (False, True):
        d = 0.0
        for i in range(n):
            d += a[i] if pos[i] else -a[i]
        if abs(d) <= eps:
            break
        tot = 0.0
        for i in range(n):
            if use_bounded or (a[i] > 0.0 and a[i] < C[i]):
                tot += a[i] if pos[i] == (d > 0) else C[i] - a[i]  # lower to 0 / raise to C
        if tot <= 0.0:
            continue
        t = min(1.0, abs(d) / tot)
        for i in range(n):
            if use_bounded or (a[i] > 0.0 and a[i] < C[i]):
                if pos[i] == (d > 0):
                    v = a[i] - t * a[i]
                else:
                    v = a[i] + t * (C[i] - a[i])
                a[i] = min(max(v, 0.0), C[i])
    return a


@njit(cache=True, nogil=True)
def _repair_greedy(a, C, pos, dist):
    """Restore ``sum_i y_i a_i = 0`` inside the box ``0 <= a <= C`` in place: the free
    multipliers first, in proportion to their room (as :func:`_repair_equality`); what they
    cannot absorb by whole moves of the fewest multipliers, those with the smallest ``dist``
    (the previous solution's distance to the margin, ``|y_i f_i - 1|``) first."""
    n = a.shape[0]
    csum = 0.0
    d = 0.0
    for i in range(n):
        csum += C[i]
        d += a[i] if pos[i] else -a[i]
    eps = 1e-13 * (1.0 + csum)
    if abs(d) <= eps:
        return
    down_pos = d > 0  # lower the positives / raise the negatives when d > 0, the reverse else
    tot = 0.0
    for i in range(n):
        if a[i] > 0.0 and a[i] < C[i]:
            tot += a[i] if pos[i] == down_pos else C[i] - a[i]
    if tot > 0.0:
        t = min(1.0, abs(d) / tot)
        for i in range(n):
            if a[i] > 0.0 and a[i] < C[i]:
                v = a[i] - t * a[i] if pos[i] == down_pos else a[i] + t * (C[i] - a[i])
                a[i] = min(max(v, 0.0), C[i])
        d = 0.0
        for i in range(n):
            d += a[i] if pos[i] else -a[i]
        if abs(d) <= eps:
            return
    down_pos = d > 0
    need = abs(d)
    key = np.full(n, np.inf)
    for i in range(n):
        room = a[i] if pos[i] == down_pos else C[i] - a[i]
        if room > 0.0:
            key[i] = dist[i]
    for i in np.argsort(key, kind="mergesort"):
        if need <= 0.0 or key[i] == np.inf:
            break
        room = a[i] if pos[i] == down_pos else C[i] - a[i]
        mv = min(room, need)
        a[i] = a[i] - mv if pos[i] == down_pos else a[i] + mv
        need -= mv


@njit(cache=True, nogil=True)
def _apply_moves(kr, y, pos, a_old, a, C, G, gbp, gbn, moved):
    """Update the gradient ``G`` and its class-split bound parts for the multipliers that moved
    from ``a_old`` to ``a`` (box ``0 <= a <= C``): four kernel rows per pass over ``G`` (the
    repair moves hundreds of free multipliers on noisy data) when the provider holds them all at
    once; ``moved`` is integer scratch of length n."""
    n = y.shape[0]
    nm = 0
    for i in range(n):
        if a[i] != a_old[i]:
            moved[nm] = i
            nm += 1
    q = 0
    if kr.rows.shape[0] >= 8:
        while q + 4 <= nm:
            i0, i1, i2, i3 = moved[q], moved[q + 1], moved[q + 2], moved[q + 3]
            K0, K1, K2, K3 = get_row(kr, i0), get_row(kr, i1), get_row(kr, i2), get_row(kr, i3)
            d0 = (a[i0] - a_old[i0]) * y[i0]
            d1 = (a[i1] - a_old[i1]) * y[i1]
            d2 = (a[i2] - a_old[i2]) * y[i2]
            d3 = (a[i3] - a_old[i3]) * y[i3]
            for k in range(n):
                G[k] += y[k] * (((d0 * K0[k] + d1 * K1[k]) + d2 * K2[k]) + d3 * K3[k])
            q += 4
    for r in range(q, nm):
        i = moved[r]
        Ki = get_row(kr, i)
        da = (a[i] - a_old[i]) * y[i]
        for k in range(n):
            G[k] += y[k] * da * Ki[k]
    for r in range(nm):
        i = moved[r]
        _, b_old = _bound_value(a_old[i], 0.0, C[i])
        _, b_new = _bound_value(a[i], 0.0, C[i])
        if b_old or b_new:
            _update_gbar(gbp if pos[i] else gbn, y, a_old[i], a[i], 0.0, C[i], y[i], get_row(kr, i))


@njit(cache=True, nogil=True)
def _clip_start(kr, y, pos, a, G, gbp, gbn, C, Cn, rp, rn):
    """The neighbour's solution (box ``C``) clipped to the box ``Cn`` in place, gradient and
    class-split bound parts kept current: the class whose box shrinks keeps its multipliers
    at the upper bound there (all scaled by the same ratio ``r``, so the gradient moves by
    ``(r - 1)`` times that class's bound part), its free multipliers above the new bound are
    clipped (by their rows); the other class's bounded multipliers become free (its bound
    part is 0)."""
    n = y.shape[0]
    shrink_pos = rp < 1.0
    r = rp if shrink_pos else rn
    gs = gbp if shrink_pos else gbn
    go = gbn if shrink_pos else gbp
    for k in range(n):
        G[k] += (r - 1.0) * gs[k]
        gs[k] *= r
        go[k] = 0.0
    for i in range(n):
        if pos[i] == shrink_pos and a[i] > 0.0:
            if a[i] >= C[i]:
                a[i] = Cn[i]
            elif a[i] > Cn[i]:
                Ki = get_row(kr, i)
                da = (Cn[i] - a[i]) * y[i]
                ca = Cn[i] * y[i]
                for k in range(n):
                    G[k] += y[k] * da * Ki[k]
                    gs[k] += y[k] * ca * Ki[k]
                a[i] = Cn[i]


@njit(cache=True, nogil=True)
def _secant_start(kr, y, pos, a, G, gbp, gbn, C, Cn, a_pp, G_pp, C_pp, t, rp, rn):
    """The secant start ``a + t (a - a_pp)`` (``t`` the ratio of the grid steps) clipped to
    the box ``Cn``, in place, with the gradient ``G + t (G - G_pp)`` (exact: ``G`` is linear in
    ``a``) and the class-split bound parts kept current. Between events of the solution path
    the multipliers are linear in pi, so this is the next solution there; it keeps
    ``sum_i y_i a_i = 0`` up to the clipped multipliers (whose rows correct the gradient)."""
    n = y.shape[0]
    for k in range(n):
        G[k] += t * (G[k] - G_pp[k])
        gbp[k] *= rp  # multipliers at the upper bound follow it (the box is linear in pi)
        gbn[k] *= rn
    for i in range(n):
        ai = a[i]
        was_up = ai > 0.0 and ai >= C[i]
        if was_up and a_pp[i] > 0.0 and a_pp[i] >= C_pp[i]:
            v = Cn[i]  # on the bound at both earlier grid values: on the new bound
        else:
            v = ai + t * (ai - a_pp[i])
        vc = min(max(v, 0.0), Cn[i])
        now_up = vc > 0.0 and vc >= Cn[i]
        a[i] = vc
        dz = (vc - v) * y[i]
        c = ((Cn[i] if now_up else 0.0) - (Cn[i] if was_up else 0.0)) * y[i]
        if dz != 0.0 or c != 0.0:
            Ki = get_row(kr, i)
            gb = gbp if pos[i] else gbn
            for k in range(n):
                G[k] += y[k] * dz * Ki[k]
                gb[k] += y[k] * c * Ki[k]


@njit(cache=True, nogil=True)
def _grid_chain(
    kr,
    y,
    w,
    nlam,
    grid,
    order,
    pi0,
    a0,
    b0,
    tol,
    max_iter,
    shrink_first,
    shrink_every,
    carry,
    margin,
    secant_ratio,
    A,
    A0,
    obj,
    its,
    conv,
):
    """SMO at ``grid[g]`` for ``g`` in ``order``, each started from the solutions before it (the
    first from ``a0``, intercept ``b0``, the solution at ``pi0``) and results stored in row
    ``g`` of ``A``, ``A0``, ``obj``, ``its``, ``conv``. One compiled call per chain.

    The start: from the second grid value on, while the shrinking class's box shrinks by a
    ratio of at least ``secant_ratio`` in the step, the secant through the two previous
    solutions (:func:`_secant_start`); otherwise, and for the first step, the previous
    solution clipped to the new box (:func:`_clip_start`). Then the equality is repaired
    (:func:`_repair_greedy`). The gradient is carried from one grid value to the next
    (kernel rows are read only for the multipliers clipped, changing bound or moved by the
    repair); with ``carry`` False (tight tolerances) it is recomputed at every grid value.
    SMO starts with the bounded multipliers whose KKT condition holds with slack ``margin`` or
    more shrunk (:func:`smo_core_active`; its final check is over all variables).
    """
    n = y.shape[0]
    pos = y > 0
    a = a0.copy()
    lo = np.zeros(n)
    p = -np.ones(n)
    C = np.empty(n)
    Cn = np.empty(n)
    for i in range(n):
        C[i] = w[i] * ((1.0 - pi0) if pos[i] else pi0) / nlam
    G, gbp, gbn = _start_gradient(kr, y, p, lo, C, a)
    b = b0
    prev = pi0
    dist = np.empty(n)
    a_in = np.empty(n)
    active = np.empty(n, dtype=np.bool_)
    moved = np.empty(n, dtype=np.int64)
    Kd = kernel_diagonal(kr.code, kr.X, kr.kpar, kr.Kpre)
    # the solution one grid value back (multipliers, gradient, box, intercept), for the secant
    a_pp = np.empty(n)
    G_pp = np.empty(n)
    C_pp = np.empty(n)
    a_k = np.empty(n)
    G_k = np.empty(n)
    b_pp = 0.0
    pi_pp = 0.0
    have_pp = False
    for g in order:
        pi = grid[g]
        rp = (1.0 - pi) / (1.0 - prev)
        rn = pi / prev
        for i in range(n):
            Cn[i] = w[i] * ((1.0 - pi) if pos[i] else pi) / nlam
            a_k[i] = a[i]
            G_k[i] = G[i]
        b_k = b
        if have_pp and min(rp, rn) >= secant_ratio:
            t = (pi - prev) / (prev - pi_pp)
            _secant_start(kr, y, pos, a, G, gbp, gbn, C, Cn, a_pp, G_pp, C_pp, t, rp, rn)
            b = b + t * (b - b_pp)
        else:
            _clip_start(kr, y, pos, a, G, gbp, gbn, C, Cn, rp, rn)
        for i in range(n):
            a_in[i] = a[i]
            dist[i] = abs(G[i] + y[i] * b)
        _repair_greedy(a, Cn, pos, dist)
        _apply_moves(kr, y, pos, a_in, a, Cn, G, gbp, gbn, moved)
        for i in range(n):
            a_pp[i] = a_k[i]
            G_pp[i] = G_k[i]
            C_pp[i] = C[i]
            C[i] = Cn[i]
        b_pp = b_k
        pi_pp = prev
        have_pp = True
        if not carry:
            # tight tolerances: the carried gradient's rounding (a few ulps of |Q a| per grid
            # value) would be of the order of tol; start from the exact gradient instead
            G, gbp, gbn = _start_gradient(kr, y, p, lo, C, a)
        # shrunk from the start: multipliers at a bound whose KKT condition holds with slack
        # ``margin`` or more (y f - 1 = G + y b at the start's intercept); violators stay active
        for i in range(n):
            s = G[i] + y[i] * b
            active[i] = not ((a[i] <= 0.0 and s >= margin) or (a[i] >= C[i] and s <= -margin))
        a, G, gbp, gbn, b, it, cv, ob, _ = smo_core_active(
            kr, y, p, lo, C.copy(), a, G, gbp, gbn, tol, max_iter, True, shrink_first, shrink_every, active, Kd
        )
        for i in range(n):
            A[g, i] = a[i] * nlam
        A0[g] = b * nlam
        obj[g] = ob
        its[g] = it
        conv[g] = cv
        prev = pi


def pi_grid_smo(
    X,
    y,
    *,
    code: int,
    kpar=None,
    Kpre=None,
    nlam: float,
    grid,
    weights=None,
    tol: float = 1e-3,
    cache_size: float = 200.0,
    n_jobs: int | None = None,
    secant_ratio: float = SECANT_RATIO,
) -> SolverResult:
    """Weighted SVMs on the pi grid by SMO, each warm-started from its neighbours' solutions.

    An alternative to :func:`pi_path` for problems whose elbow is large (the exact path costs
    ``O(n |E|)`` per event): a cold SMO solve at the grid value nearest ``1/2``, then two
    chains outwards (upwards and downwards; in two threads with ``n_jobs=2``).

    Each step starts where the path is heading. Between events the solution path of [WSL] is
    linear in pi (multipliers, gradient and intercept; the box ``C_i(pi)`` is linear too), so
    from the second step of a chain on the start is the secant through the two previous
    solutions, ``a_k + t (a_k - a_{k-1})`` clipped to the new box, while the shrinking class's
    box keeps at least ``secant_ratio`` of its size in the step (near the ends of the grid a
    step crosses many events and the secant overshoots). Otherwise, and for the first step, the
    start is the neighbour's multipliers clipped to the next box (the class whose box shrinks
    is clipped, the other kept where it was). Either start is then made to satisfy
    ``sum_i y_i a_i = 0`` by moving the free multipliers first (:func:`_repair_greedy`); the
    gradient is carried over (the secant's is exact, ``G`` being linear in ``a``; kernel rows
    are read only for multipliers that are clipped, change bound or are moved by the repair).
    SMO then continues to ``tol`` with the bounded multipliers whose KKT condition holds with a
    slack of 0.1 or more shrunk from the start, shrinking after 10 iterations and then every
    30 (a warm start needs a few hundred iterations, which libsvm's first shrink at 1 000
    would leave scanning every variable); every solve ends with libsvm's check over all
    variables. ``secant_ratio=1`` gives the clipped start at every step, ``0`` the secant at
    every step after the first.
    When the kernel matrix fits in ``cache_size`` it is computed once for all grid values,
    in float32 when ``tol >= 1e-3`` (as libsvm's kernel cache; the solves then solve the
    problem with the rounded kernel, relative error ``2^-24`` per entry, far below ``tol``).
    The result has SMO's accuracy (maximal KKT violation below ``tol``), not the path's
    exactness; the choice of start and the measured costs are recorded in the repository's
    ``benchmarks/README.md``.
    Returns a :class:`~cohstats.solvers.result.SolverResult` in the scaled parametrisation of
    :func:`pi_path`, with ``n_iter`` the SMO iterations of all grid fits, ``converged`` whether
    every fit met ``tol`` and ``objective`` the C-SVM dual objective of each fit;
    ``info["iterations"]`` the SMO iterations of each grid fit,
    ``info["mid"]`` is the index of the grid value nearest ``1/2`` (the cold start) and
    ``info["gradient"]`` the C-SVM dual gradient ``G = Q a - 1`` there (the training decision
    values are ``y (G + 1) + b``, in the solver's kernel arithmetic).

    Examples
    --------
    >>> import numpy as np
    >>> from cohstats.kernels import KERNEL_LINEAR
    >>> rng = np.random.default_rng(1); X = rng.normal(size=(40, 2))
    >>> y = np.where(X[:, 0] + 0.5 * rng.normal(size=40) > 0, 1.0, -1.0)
    >>> pi_grid_smo(X, y, code=KERNEL_LINEAR, nlam=4.0, grid=np.linspace(0.1, 0.9, 9)).dual.shape
    (9, 40)
    """
    y, n, grid, w, threads = _common_args(y, grid, nlam, weights, n_jobs)
    A = np.zeros((grid.size, n))
    A0 = np.zeros(grid.size)
    obj = np.zeros(grid.size)
    its = np.zeros(grid.size, dtype=np.int64)
    conv = np.zeros(grid.size, dtype=bool)
    kpar = np.zeros(5) if kpar is None else np.ascontiguousarray(kpar, dtype=np.float64)
    f32 = tol >= 1e-3  # float32 kernel values, as libsvm's (and the lambda-SVM's) row cache
    if code != KERNEL_CALLABLE and (4.0 if f32 else 8.0) * n * n <= cache_size * 1024.0 * 1024.0:
        # the whole kernel matrix fits in the cache budget: compute it once for all grid fits
        Kpre = gram_symmetric(int(code), X, kpar, dtype=np.float32 if f32 else np.float64)
        code = KERNEL_CALLABLE
    elif code == KERNEL_CALLABLE:
        Kpre = np.ascontiguousarray(Kpre, dtype=np.float64)
        if Kpre.shape != (n, n):
            raise ValueError(f"Kpre must have shape {(n, n)}; got {Kpre.shape}")
    nc = n_cache_rows(n, cache_size)
    Xn = np.zeros((n, 1)) if code == KERNEL_CALLABLE else np.ascontiguousarray(X, dtype=np.float64)
    max_iter = max(10_000_000, 100 * n)
    mid = int(np.argmin(np.abs(grid - 0.5)))
    C = w * np.where(y > 0, 1.0 - grid[mid], grid[mid]) / nlam
    kr = rows_provider(int(code), Xn, kpar, Kpre, n_slots=nc, in_place=True)
    every = min(n, 1000)  # libsvm's shrinking schedule for the cold start
    a_mid, G_mid, b, it, cv, ob, _ = smo_core(
        kr, y, -np.ones(n), np.zeros(n), C, np.zeros(n), float(tol), max_iter, True, every + 1, every
    )
    A[mid] = a_mid * nlam
    A0[mid] = b * nlam
    obj[mid] = ob
    its[mid] = it
    conv[mid] = cv

    def chain(order):
        # a provider per chain (the two chains may run in two threads); a precomputed matrix is
        # shared by both, read in place
        krc = rows_provider(int(code), Xn, kpar, Kpre, n_slots=nc, in_place=True)
        order = np.asarray(order, dtype=np.int64)
        _grid_chain(
            krc,
            y,
            w,
            float(nlam),
            grid,
            order,
            grid[mid],
            a_mid,
            b,
            float(tol),
            max_iter,
            SHRINK_FIRST,
            SHRINK_EVERY,
            f32,
            float(ACTIVE_MARGIN),
            float(secant_ratio),
            A,
            A0,
            obj,
            its,
            conv,
        )

    _two_halves(lambda: chain(range(mid - 1, -1, -1)), lambda: chain(range(mid + 1, grid.size)), threads)
    out = _path_result(grid, A, A0, nlam, 0, 0, 0, n_iter=its.sum(), converged=conv.all(), objective=obj)
    out.info["mid"] = mid
    out.info["gradient"] = G_mid
    out.info["iterations"] = its
    return out
