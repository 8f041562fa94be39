"""Dual coordinate descent for the linear C-SVM with per-sample costs and an unpenalised intercept.

The problem (libsvm's C-SVM with a linear kernel on the rows ``x_i`` of a feature matrix, e.g.
a low-rank feature map of :mod:`cohstats.kernel_approx`):

    minimise   (1/2) ||w||^2 + sum_i C_i [1 - y_i (w'x_i + b)]_+

with dual

    minimise   D(a) = (1/2) ||sum_i a_i y_i x_i||^2 - sum_i a_i
    subject to 0 <= a_i <= C_i,   sum_i y_i a_i = 0,

``w = sum_i a_i y_i x_i`` and ``b`` the multiplier of the equality constraint.

Algorithm
---------
Without the equality constraint (no intercept, or liblinear's intercept: a constant feature
whose weight is penalised) this is the dual coordinate descent of Hsieh, Chang, Lin, Keerthi &
Sundararajan (2008), the algorithm of liblinear's L1-loss SVM: visit the coordinates in a random
order (a seeded permutation per epoch), minimise the dual exactly in ``a_i`` (a clipped Newton
step with ``Q_ii = ||x_i||^2``), update ``w`` in ``O(r)``; one epoch costs ``O(n r)``. Shrinking
(liblinear's rule) drops a variable at a bound whose projected gradient lies outside the last
epoch's range ``[PGmin, PGmax]``; the solver stops when the projected-gradient gap
``max PG - min PG`` over all variables falls below ``tol`` (after a final pass over the
unshrunk set, as liblinear).

The intercept of libsvm's model is *not* penalised: it is the multiplier of ``sum y_i a_i = 0``,
which coordinate descent on one variable cannot keep. liblinear instead appends a constant
feature and so penalises ``b^2 / 2`` (a different model; its fits depend on the feature's
scale). Here the equality constraint is handled by the method of multipliers (augmented
Lagrangian; Hestenes 1969, Powell 1969; Bertsekas 1982): with ``s = sum y_i a_i``,

    L_mu(a; b) = D(a) + b s + (mu/2) s^2,

each stage minimises ``L_mu`` over the box by the coordinate descent above (the gradient
gains ``y_i (b + mu s)`` and the curvature ``mu``, both ``O(1)`` to keep), and then sets
``b <- b + mu s``. At a stage's minimiser the KKT conditions of the C-SVM hold exactly with
intercept ``b + mu s``, except the equality ``s = 0``; the updates drive ``s`` to zero (for
a convex QP the method converges for every ``mu > 0``; ``mu`` is multiplied by 4 whenever
``|s|`` fails to fall by a factor of 4, so the intercept converges linearly at rate <= 1/4).
The solver stops when a stage ends with the projected-gradient gap below ``tol`` and the last
intercept change ``mu |s|`` below ``tol`` (both in the units of the decision values, as
libsvm's ``eps``). The result is libsvm's model, the same (dual objective, decision values) as
``SVC(kernel="linear")`` on the same features to the tolerance.

The objective ``L_mu`` never rises within a stage (every step is an exact minimisation along a
coordinate); ``info["history"]`` records it after every epoch together with the stage number.
Across stages ``L_mu`` changes with ``b`` by construction (it is a saddle-point method), so
monotonicity is a per-stage property; the dual objective ``D`` at the returned point is the
QP's optimum to the tolerance.

Memory: the feature matrix (n x r, read in place), ``a``, ``C``, ``w`` and an index array --
``O(n r)`` for the input and ``O(n + r)`` for the solver.
"""

from __future__ import annotations

import math

import numpy as np
from cohstats._numba_cache import njit


from cohstats._numba_cache import internal
from cohstats.solvers.result import SolverResult

__all__ = ["linear_svm_dcd"]

_MU_MAX = 1e12


@internal
def _next_random(state):
    """splitmix64 step: returns (new state, a 64-bit pseudo-random integer)."""
    state = (state + np.uint64(0x9E3779B97F4A7C15)) & np.uint64(0xFFFFFFFFFFFFFFFF)
    z = state
    z = ((z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)) & np.uint64(0xFFFFFFFFFFFFFFFF)
    z = ((z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)) & np.uint64(0xFFFFFFFFFFFFFFFF)
    z = z ^ (z >> np.uint64(31))
    return state, z


@internal
def _dot_row(X, i, w):
    acc = 0.0
    for k in range(w.shape[0]):
        acc += X[i, k] * w[k]
    return acc


@njit(cache=True, nogil=True)
def dcd_core(X, y, C, a, w, b, mu, intercept, tol, max_epochs, shrinking, seed, history):
    """Dual coordinate descent with (optionally) the method of multipliers for the intercept.

    ``a`` (n,) and ``w`` (r,) = ``X' (a * y)`` are updated in place (a warm start when given).
    ``history`` is an (max_epochs, 2) array receiving (stage, L_mu after the epoch).
    Returns ``(b, mu, epochs, stages, converged, gap, s)``.
    """
    n = X.shape[0]
    r = X.shape[1]
    qd = np.empty(n)
    for i in range(n):
        acc = 0.0
        for k in range(r):
            acc += X[i, k] * X[i, k]
        qd[i] = acc
    s = 0.0
    suma = 0.0
    for i in range(n):
        s += y[i] * a[i]
        suma += a[i]
    if not intercept:
        mu = 0.0
        b = 0.0
    act = np.arange(n)
    state = np.uint64(seed) * np.uint64(2654435761) + np.uint64(12345)
    epochs = 0
    stages = 0
    converged = False
    gap = np.inf
    s_prev = np.inf
    while epochs < max_epochs:
        # ---------------------------------------------------------------- one stage
        n_act = n
        pg_max_old = np.inf
        pg_min_old = -np.inf
        stage_done = False
        while epochs < max_epochs:
            for k in range(n_act - 1, 0, -1):  # Fisher-Yates on the active set
                state, z = _next_random(state)
                j = np.int64(z % np.uint64(k + 1))
                t = act[k]
                act[k] = act[j]
                act[j] = t
            pg_max = -np.inf
            pg_min = np.inf
            k = 0
            while k < n_act:
                i = act[k]
                yi = y[i]
                G = yi * (_dot_row(X, i, w) + b + mu * s) - 1.0
                PG = 0.0
                ai = a[i]
                if ai <= 0.0:
                    if shrinking and G > pg_max_old:
                        n_act -= 1
                        act[k] = act[n_act]
                        act[n_act] = i
                        continue
                    if G < 0.0 and C[i] > 0.0:
                        PG = G
                elif ai >= C[i]:
                    if shrinking and G < pg_min_old:
                        n_act -= 1
                        act[k] = act[n_act]
                        act[n_act] = i
                        continue
                    if G > 0.0:
                        PG = G
                else:
                    PG = G
                if PG > pg_max:
                    pg_max = PG
                if PG < pg_min:
                    pg_min = PG
                if PG != 0.0:
                    h = qd[i] + mu
                    if h > 0.0:
                        anew = ai - G / h
                        if anew < 0.0:
                            anew = 0.0
                        elif anew > C[i]:
                            anew = C[i]
                    else:  # zero row without intercept curvature: the dual is linear in a_i
                        anew = C[i] if G < 0.0 else 0.0
                    d = anew - ai
                    if d != 0.0:
                        a[i] = anew
                        dy = d * yi
                        for kk in range(r):
                            w[kk] += dy * X[i, kk]
                        s += dy
                        suma += d
                k += 1
            if n_act == 0:
                pg_max = 0.0
                pg_min = 0.0
            # the stage objective after the epoch (O(r) with the running sums)
            ww = 0.0
            for kk in range(r):
                ww += w[kk] * w[kk]
            history[epochs, 0] = stages
            history[epochs, 1] = 0.5 * ww - suma + b * s + 0.5 * mu * s * s
            epochs += 1
            gap = pg_max - pg_min
            if gap <= tol:
                if n_act == n:
                    stage_done = True
                    break
                n_act = n  # re-check every variable before stopping
                pg_max_old = np.inf
                pg_min_old = -np.inf
                continue
            pg_max_old = pg_max if pg_max > 0.0 else np.inf
            pg_min_old = pg_min if pg_min < 0.0 else -np.inf
        stages += 1
        if not intercept:
            converged = stage_done
            break
        step = mu * s
        b += step
        if stage_done and abs(step) <= tol:
            converged = True
            break
        if abs(s) > 0.25 * s_prev and mu < 1e12:
            mu *= 4.0
        s_prev = abs(s)
    return b, mu, epochs, stages, converged, gap, s


def linear_svm_dcd(
    X,
    y,
    C,
    *,
    intercept: bool = True,
    tol: float = 1e-3,
    max_epochs: int | None = None,
    shrinking: bool = True,
    random_state=0,
    a0=None,
    b0: float = 0.0,
    mu0: float | None = None,
) -> SolverResult:
    """Solve the linear C-SVM with costs ``C_i`` by dual coordinate descent (see the module).

    Parameters
    ----------
    X : (n, r) float64 features (read in place when C-contiguous float64).
    y : (n,) labels in {-1, +1}.
    C : (n,) nonnegative per-sample costs ``C_i`` (a scalar is broadcast).
    intercept : True for libsvm's unpenalised intercept (method of multipliers); False for no
        intercept (the plain dual coordinate descent of liblinear; append a constant column to
        ``X`` for liblinear's penalised intercept).
    tol : stopping tolerance on the projected-gradient gap and on the last intercept change.
    max_epochs : cap on passes over the (active) data, over all stages (default 10 000).
    shrinking : liblinear's shrinking rule.
    random_state : seed of the coordinate permutations.
    a0, b0 : warm start (dual multipliers clipped into the box, intercept).
    mu0 : first augmented-Lagrangian weight (default the mean of ``||x_i||^2``).

    Returns
    -------
    SolverResult with ``coef`` = ``w`` (r,), ``dual`` = ``a`` (n,), ``intercept`` = ``b``,
    ``n_iter`` = epochs, ``objective`` = the dual objective ``D(a)`` (libsvm's ``obj``), and
    ``info`` holding ``fitted`` (the decision values ``Xw + b`` of the rows), ``stages``,
    ``gap`` (the last projected-gradient gap), ``s`` (the final ``sum y_i a_i``), ``mu`` and
    ``history`` (epochs x 2: stage, stage objective ``L_mu``).
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"X must be a 2-D array; got {X.ndim} dimension(s)")
    n, r = X.shape
    y = np.ascontiguousarray(y, dtype=np.float64)
    if y.shape != (n,) or not np.all(np.abs(y) == 1.0):
        raise ValueError("y must be a vector of -1/+1 labels, one per row of X")
    C = np.ascontiguousarray(np.broadcast_to(np.asarray(C, dtype=np.float64), (n,)))
    if not np.all(np.isfinite(C)) or np.any(C < 0):
        raise ValueError("C (the per-sample costs) must be finite and nonnegative")
    if not (math.isfinite(tol) and tol > 0):
        raise ValueError(f"tol must be a positive number; got {tol!r}")
    if not np.all(np.isfinite(X)):
        raise ValueError("X has non-finite entries")
    if max_epochs is None:
        max_epochs = 10_000
    max_epochs = int(max_epochs)
    if a0 is None:
        a = np.zeros(n)
        w = np.zeros(r)
    else:
        a = np.clip(np.asarray(a0, dtype=np.float64), 0.0, C).copy()
        w = X.T @ (a * y)
    if mu0 is None:
        mu0 = float(np.mean(np.einsum("ij,ij->i", X, X))) if n else 1.0
        mu0 = mu0 if mu0 > 0 else 1.0
    seed = int(np.random.default_rng(random_state).integers(0, 2**62))
    history = np.zeros((max_epochs, 2))
    b, mu, epochs, stages, converged, gap, s = dcd_core(
        X, y, C, a, w, float(b0), float(mu0), bool(intercept), float(tol), max_epochs, bool(shrinking), seed, history
    )
    fitted = X @ w + b
    obj = float(0.5 * (w @ w) - a.sum())
    return SolverResult(
        coef=w,
        dual=a,
        intercept=float(b),
        n_iter=int(epochs),
        converged=bool(converged),
        objective=obj,
        info=dict(
            fitted=fitted, stages=int(stages), gap=float(gap), s=float(s), mu=float(mu), history=history[:epochs]
        ),
    )
