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
the bordered-inverse update, and there are about ``1.6 n`` events over ``(0, 1)``; when the
elbow is large the warm-started SMO grid of :func:`pi_grid_smo` is the cheaper route (measured;
benchmarks/log.csv).
"""

from __future__ import annotations

import numpy as np

from cohstats.kernels import KERNEL_CALLABLE, kernel_cross
from cohstats.solvers.result import SolverResult
from cohstats.solvers.svm.rows import expansion, n_cache_rows, rows_provider
from cohstats.solvers.svm.smo import smo_solve
from cohstats.solvers.svm.svmpath_core import (
    E_SET,
    FIXED,
    FLAG_DONE,
    L_SET,
    R_SET,
    _common_args,
    _path_result,
    _two_halves,
    invert_pivot,
    path_core,
)
from cohstats.solvers.svm.svmpath_core import _n_threads  # noqa: F401 -- re-exported (models.svm)
from cohstats.solvers.svm.svmpath_grid import _repair_equality, _secant_start, pi_grid_smo  # noqa: F401 -- re-exported

__all__ = ["path_decision", "pi_grid_smo", "pi_path", "train_decision"]


def train_decision(code, X, kpar, Kpre, y, alpha, alpha0, nlam, n_cache):
    """Training decision values ``f_k = (alpha_0 + sum_i alpha_i y_i K_ki) / (n lambda)``."""
    kr = rows_provider(int(code), X, kpar, Kpre, n_slots=n_cache, in_place=True)
    return expansion(kr, alpha * y, float(alpha0)) / nlam


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
