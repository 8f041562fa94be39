"""SMO against libsvm (scikit-learn SVC), KKT conditions and a scipy QP on a small problem."""

import numpy as np
import pytest
from scipy.optimize import minimize
from sklearn.svm import SVC

from cohstats.kernels import KERNEL_CALLABLE, KERNEL_LINEAR, KERNEL_RBF, make_kernel
from cohstats.solvers.svm.smo import smo_solve


def _data(n, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(X[:, 0] + X[:, 1] ** 2 - 1 + 0.7 * rng.normal(size=n) > 0, 1.0, -1.0)
    return X, y


def _kpar(gamma):
    return np.array([gamma, 0.0, 0.0, 0.0, 0.0])


def _sk_dual(s, n):
    beta = np.zeros(n)
    beta[s.support_] = s.dual_coef_[0]
    return beta


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
@pytest.mark.parametrize("pi", [None, 0.3])
def test_matches_libsvm(kernel, pi):
    n = 150
    X, y = _data(n)
    C = 2.0
    code = KERNEL_LINEAR if kernel == "linear" else KERNEL_RBF
    g = 0.3
    cost = np.full(n, C) if pi is None else C * np.where(y > 0, 1 - pi, pi)
    r = smo_solve(X, y, code=code, kpar=_kpar(g), C=cost, tol=1e-9)
    cw = None if pi is None else {1.0: 1 - pi, -1.0: pi}
    s = SVC(C=C, kernel=kernel, gamma=g, tol=1e-9, class_weight=cw, shrinking=True).fit(X, y)
    K = make_kernel(kernel, gamma=g)(X) if kernel == "rbf" else X @ X.T
    beta = r.dual * y
    beta_sk = _sk_dual(s, n)
    obj = 0.5 * beta @ K @ beta - r.dual.sum()
    obj_sk = 0.5 * beta_sk @ K @ beta_sk - np.abs(beta_sk).sum()
    assert r.converged
    assert obj == pytest.approx(obj_sk, rel=1e-7, abs=1e-9)
    assert r.objective == pytest.approx(obj, rel=1e-9, abs=1e-9)
    f = K @ beta + r.intercept
    # libsvm caches Q in single precision (Qfloat), so it agrees to ~1e-6, not to tol
    np.testing.assert_allclose(f, s.decision_function(X), atol=2e-5)
    # ours satisfies the KKT conditions to the requested tolerance in double precision
    yf = y * f
    assert np.all(yf[r.dual == 0] >= 1 - 1e-8) and np.all(yf[r.dual == cost] <= 1 + 1e-8)
    free = (r.dual > 0) & (r.dual < cost)
    assert np.all(np.abs(yf[free] - 1) <= 1e-8)
    # same support vectors (multipliers clearly away from zero)
    assert set(np.flatnonzero(r.dual > 1e-6)) == set(np.flatnonzero(np.abs(beta_sk) > 1e-6))
    np.testing.assert_allclose(beta, beta_sk, atol=1e-4)


def test_kkt_at_default_tolerance():
    n = 200
    X, y = _data(n, seed=3)
    C = np.full(n, 0.7)
    tol = 1e-3
    r = smo_solve(X, y, code=KERNEL_RBF, kpar=_kpar(0.5), C=C, tol=tol)
    K = make_kernel("rbf", gamma=0.5)(X)
    yf = y * (K @ (r.dual * y) + r.intercept)
    assert abs(np.sum(r.dual * y)) < 1e-12
    assert np.all(r.dual >= 0) and np.all(r.dual <= C)
    zero, top = r.dual == 0, r.dual == C
    free = ~zero & ~top
    assert np.all(yf[zero] >= 1 - tol)
    assert np.all(yf[top] <= 1 + tol)
    assert np.all(np.abs(yf[free] - 1) <= tol)
    # libsvm at the same tolerance reaches the same objective to the order of tol
    s = SVC(C=0.7, gamma=0.5, tol=tol).fit(X, y)
    b_sk = _sk_dual(s, n)
    o_sk = 0.5 * b_sk @ K @ b_sk - np.abs(b_sk).sum()
    assert r.objective == pytest.approx(o_sk, rel=1e-4)


def test_cache_and_shrinking_do_not_change_the_solution():
    n = 160
    X, y = _data(n, seed=5)
    C = np.full(n, 5.0)
    ref = smo_solve(X, y, code=KERNEL_RBF, kpar=_kpar(1.0), C=C, tol=1e-10, shrinking=False)
    tiny = smo_solve(
        X, y, code=KERNEL_RBF, kpar=_kpar(1.0), C=C, tol=1e-10, shrinking=True, cache_size=8 * n * 3 / 2**20
    )  # three cached rows
    assert tiny.info["kernel_rows"] > n  # the LRU cache really evicted rows
    np.testing.assert_allclose(tiny.dual, ref.dual, atol=1e-7)
    assert tiny.intercept == pytest.approx(ref.intercept, abs=1e-8)
    K = make_kernel("rbf", gamma=1.0)(X)
    pre = smo_solve(None, y, code=KERNEL_CALLABLE, Kpre=K, C=C, tol=1e-10)
    np.testing.assert_allclose(pre.dual, ref.dual, atol=1e-7)
    # early and frequent shrinking (the warm-start setting of pi_grid_smo), from a warm start
    a0 = np.where(y > 0, 1.0, 0.0) * C
    a0[y < 0] = a0.sum() / np.sum(y < 0)  # feasible: sum y_i a_i = 0
    for start in (None, a0):
        early = smo_solve(
            X, y, code=KERNEL_RBF, kpar=_kpar(1.0), C=C, tol=1e-10, a0=start, shrink_first=5, shrink_every=7
        )
        np.testing.assert_allclose(early.dual, ref.dual, atol=1e-7)
        assert early.intercept == pytest.approx(ref.intercept, abs=1e-8)


def test_general_bounds_and_linear_term_vs_scipy_qp():
    rng = np.random.default_rng(7)
    n = 14
    X, y = _data(n, seed=7)
    K = make_kernel("rbf", gamma=0.4)(X)
    Q = (y[:, None] * y[None, :]) * K
    lo = -rng.uniform(0, 0.5, n) * (rng.uniform(size=n) < 0.5)
    hi = lo + rng.uniform(0.5, 2.0, n)
    p = -1.0 + 0.3 * rng.normal(size=n)
    r = smo_solve(X, y, code=KERNEL_RBF, kpar=_kpar(0.4), lo=lo, hi=hi, p=p, a0=np.clip(0, lo, hi), tol=1e-10)
    a0 = np.clip(0, lo, hi)
    cons = {"type": "eq", "fun": lambda a: y @ a - y @ a0, "jac": lambda a: y}
    q = minimize(
        lambda a: 0.5 * a @ Q @ a + p @ a,
        a0,
        jac=lambda a: Q @ a + p,
        bounds=list(zip(lo, hi)),
        constraints=[cons],
        method="SLSQP",
        options={"ftol": 1e-14, "maxiter": 1000},
    )
    assert q.success
    assert r.objective == pytest.approx(q.fun, abs=1e-8)
    np.testing.assert_allclose(r.dual, q.x, atol=1e-5)
    assert y @ r.dual == pytest.approx(y @ a0, abs=1e-12)
    # intercept: free variables satisfy G_i + b y_i = 0
    free = (r.dual > lo + 1e-8) & (r.dual < hi - 1e-8)
    assert free.any()
    np.testing.assert_allclose(r.info["gradient"][free] + r.intercept * y[free], 0.0, atol=1e-8)


def test_input_errors():
    X, y = _data(10)
    with pytest.raises(ValueError, match="lo <= hi"):
        smo_solve(X, y, code=KERNEL_RBF, kpar=_kpar(1.0), lo=np.ones(10), hi=np.zeros(10))
    with pytest.raises(ValueError, match="tol"):
        smo_solve(X, y, code=KERNEL_RBF, kpar=_kpar(1.0), C=np.ones(10), tol=0.0)
    with pytest.raises(ValueError, match="cache_size"):
        smo_solve(X, y, code=KERNEL_RBF, kpar=_kpar(1.0), C=np.ones(10), cache_size=-1)


@pytest.mark.parametrize("seed", [0, 1])
def test_start_mask_changes_the_work_not_the_solution(seed):
    # smo_core_active from a warm start with a random half of the variables shrunk from the
    # start, among them multipliers that must move: the final check over all variables brings
    # them back, and the solution is libsvm's
    from sklearn.metrics.pairwise import rbf_kernel

    from cohstats.solvers.svm.rows import kernel_diagonal, rows_provider
    from cohstats.solvers.svm.smo import _start_gradient, smo_core_active

    n, C, g = 160, 1.5, 0.4
    X, y = _data(n, seed=seed)
    rng = np.random.default_rng(seed)
    s = SVC(C=C, kernel="rbf", gamma=g, tol=1e-9).fit(X, y)
    ref = np.abs(_sk_dual(s, n))
    # a feasible start: the solution moved towards the middle of the box, pairwise so that
    # sum_i y_i a_i = 0 still holds
    a = 0.5 * ref + 0.5 * np.where(y > 0, np.sum(ref[y < 0]), np.sum(ref[y > 0])) / n
    a += (np.sum(a[y < 0]) - np.sum(a[y > 0])) * (y > 0) / np.sum(y > 0)
    a = np.clip(a, 0.0, C)
    assert abs(a @ y) < 1e-9 and np.any(np.abs(a - ref) > 0.1)
    kr = rows_provider(KERNEL_RBF, X, _kpar(g), n_slots=n)
    p, lo, hi = -np.ones(n), np.zeros(n), np.full(n, C)
    G, gbp, gbn = _start_gradient(kr, y, p, lo, hi, a)
    active = rng.random(n) < 0.5
    active0 = active.copy()
    Kd = kernel_diagonal(KERNEL_RBF, X, _kpar(g), np.empty((1, 1)))
    out = smo_core_active(kr, y, p, lo, hi, a.copy(), G, gbp, gbn, 1e-6, 10**6, True, 30, 100, active, Kd)
    a_hat, G_hat, b_hat, converged = out[0], out[1], out[4], out[6]
    assert converged
    assert np.max(np.abs(a_hat - a)[~active0]) > 0.05  # shrunk at the start, yet moved
    K = rbf_kernel(X, X, gamma=g)
    Q = (y[:, None] * y[None, :]) * K
    np.testing.assert_allclose(G_hat, Q @ a_hat - 1.0, atol=1e-10)  # the returned gradient is exact
    up = np.where(y > 0, a_hat < C, a_hat > 0)
    low = np.where(y > 0, a_hat > 0, a_hat < C)
    assert np.max(-y[up] * G_hat[up]) - np.min(-y[low] * G_hat[low]) < 1e-6  # KKT to tol
    obj = 0.5 * a_hat @ Q @ a_hat - a_hat.sum()
    obj_ref = 0.5 * ref @ Q @ ref - ref.sum()
    assert obj == pytest.approx(obj_ref, rel=1e-8, abs=1e-8)
    np.testing.assert_allclose(a_hat, ref, atol=1e-4)
    assert b_hat == pytest.approx(float(s.intercept_[0]), abs=1e-4)


def test_degenerate_linear_dual_matches_libsvm():
    """Integer-coded inputs with repeated rows, linear kernel and a large cost: the dual is
    singular and SMO needs many iterations (libsvm too), but both reach one optimum."""
    rng = np.random.default_rng(2)
    base = rng.integers(1, 5, size=(30, 8)).astype(float)
    X = base[rng.integers(0, 30, size=80)]  # 29 distinct rows among 80
    X = (X - X.mean(0)) / X.std(0)
    y = np.where(X[:, 0] + X[:, 1] - X[:, 2] + rng.normal(0, 1.0, 80) > 0, 1.0, -1.0)
    C = 500.0
    r = smo_solve(X, y, code=KERNEL_LINEAR, kpar=np.zeros(5), C=np.full(80, C), tol=1e-3)
    s = SVC(kernel="linear", C=C, tol=1e-3).fit(X, y)
    a = np.zeros(80)
    a[s.support_] = np.abs(s.dual_coef_[0])
    K = X @ X.T

    def dual(al):
        return 0.5 * (al * y) @ K @ (al * y) - al.sum()

    assert r.converged and r.n_iter > 10_000
    assert abs(dual(r.dual) - dual(a)) <= 1e-7 * abs(dual(a))
    f = (r.dual * y) @ K + r.intercept
    assert np.max(np.abs(f - s.decision_function(X))) < 0.05
