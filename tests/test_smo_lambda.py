"""SMO for the λ-SVM dual against independent references (SPEC 6.2-6.5)."""

import numpy as np
import pytest
from scipy.optimize import minimize

from cohstats.kernels import KERNEL_CALLABLE, make_kernel
from cohstats.losses.lamsvm import lamsvm_loss
from cohstats.solvers.svm.smo_lambda import solve_lambda_svm


def _data(N, L, seed, p=2):
    rng = np.random.default_rng(seed)
    y = np.arange(N) % L
    rng.shuffle(y)
    X = rng.normal(size=(N, p)) + 0.8 * np.eye(L, p)[y] * 2.0
    return np.ascontiguousarray(X), y.astype(np.int64)


def _qp(K, y, L, margin, Cb):
    """Generic box-QP solve of the dual (22)-(23) with scipy (L-BFGS-B, tight tolerances)."""
    N = len(y)
    Y = np.where(y[:, None] == np.arange(L), 1.0, -1.0)
    lv = np.where(Y > 0, margin, 1.0).ravel()
    G = np.kron(K, np.eye(L) - 1.0 / L)
    yv = Y.ravel()
    Q = yv[:, None] * G * yv[None, :]

    def fun(a):
        Qa = Q @ a
        return 0.5 * a @ Qa - lv @ a, Qa - lv

    r = minimize(
        fun,
        np.zeros(N * L),
        jac=True,
        method="L-BFGS-B",
        bounds=list(zip(np.zeros(N * L), np.repeat(Cb, L))),
        options=dict(ftol=1e-15, gtol=1e-11, maxiter=20000, maxcor=30),
    )
    a = r.x.reshape(N, L)
    B = np.where(Y > 0, a, -a)
    F = K @ (B - B.mean(axis=1, keepdims=True))
    return -r.fun, F, a


def _F_from_alpha(K, y, L, a):
    B = np.where(y[:, None] == np.arange(L), a, -a)
    Bt = B - B.mean(axis=1, keepdims=True)
    return K @ Bt, Bt


@pytest.mark.parametrize("L,margin", [(3, -5.0), (3, 0.1), (3, 1.0), (3, 10.0), (4, 1.0), (4, 3.0), (4, 100.0)])
def test_dual_matches_generic_qp(L, margin):
    N = 8 * L
    X, y = _data(N, L, seed=L + int(abs(margin)))
    k = make_kernel("rbf", X, gamma=0.5)
    K = k(X)
    Cb = np.full(N, 2.0)
    Cb[::5] = 0.7  # observation weights -> per-point box bounds
    W_ref, F_ref, _ = _qp(K, y, L, margin, Cb)
    res = solve_lambda_svm(X, y, L, margin, Cb, k.code, k.kpar, tol=1e-9, eps=1e-12)
    assert res.converged
    assert res.info["dual"] == pytest.approx(W_ref, rel=1e-8)
    # F (= Q alpha up to signs) is unique on the optimal face of a convex QP
    assert np.abs(res.info["F"] - F_ref).max() < 1e-4 * max(1.0, np.abs(F_ref).max())
    # returned F is the decision value recomputed from alpha
    F_own, _ = _F_from_alpha(K, y, L, res.dual)
    assert np.allclose(res.info["F"], F_own, atol=1e-9)


@pytest.mark.parametrize("L,margin,T", [(3, 2.5, 1e-4), (4, 1.0, 1e-4), (4, 50.0, 5e-2), (3, -10.0, 5e-2)])
def test_kkt_conditions_and_sum_to_zero(L, margin, T):
    N = 40
    X, y = _data(N, L, seed=7)
    k = make_kernel("rbf", X, gamma=1.0)
    K = k(X)
    C, eps = 5.0, 1e-6
    res = solve_lambda_svm(X, y, L, margin, np.full(N, C), k.code, k.kpar, tol=T, eps=eps)
    assert res.converged
    a = res.dual
    F, _ = _F_from_alpha(K, y, L, a)  # independent recomputation with numpy
    assert np.abs(F.sum(axis=1)).max() < 1e-9 * max(1.0, np.abs(F).max())
    Y = np.where(y[:, None] == np.arange(L), 1.0, -1.0)
    V = Y * F - np.where(Y > 0, margin, 1.0)
    lo, hi = a < eps, a > C - eps
    mid = ~lo & ~hi
    assert np.all(V[lo] >= -T)  # eq. (24)
    assert np.all(np.abs(V[mid]) < T)  # eq. (25)
    assert np.all(V[hi] < T)  # eq. (26)
    assert np.all((a >= 0) & (a <= C))


@pytest.mark.parametrize("L,margin", [(3, 1.0), (4, 3.0), (4, 1000.0), (5, -100.0)])
def test_primal_equals_dual_at_optimum(L, margin):
    N = 36
    X, y = _data(N, L, seed=11)
    k = make_kernel("rbf", X, gamma=0.7)
    K = k(X)
    C = 3.0
    res = solve_lambda_svm(X, y, L, margin, np.full(N, C), k.code, k.kpar, tol=1e-4)
    assert res.converged
    F, Bt = _F_from_alpha(K, y, L, res.dual)
    # primal (14)-(16): 1/2 sum_j ||w_j||^2 + C sum_i Psi_{y_i}(f(x_i)), loss from cohstats.losses
    primal = 0.5 * np.sum(Bt * (K @ Bt)) + C * lamsvm_loss(F, y, margin).sum()
    assert primal == pytest.approx(res.info["primal"], rel=1e-10)
    assert (primal - res.info["dual"]) / abs(primal) < 1e-3
    assert primal >= res.info["dual"] - 1e-9 * abs(primal)


def _binary_svm_qp(K, ypm, C):
    """Bias-free binary SVM: max sum a - 1/2 a' (yy'K) a, 0 <= a <= C; f = K (a y)."""
    Q = ypm[:, None] * K * ypm[None, :]
    n = len(ypm)

    def fun(a):
        Qa = Q @ a
        return 0.5 * a @ Qa - a.sum(), Qa - 1.0

    r = minimize(
        fun,
        np.zeros(n),
        jac=True,
        method="L-BFGS-B",
        bounds=[(0, C)] * n,
        options=dict(ftol=1e-15, gtol=1e-12, maxiter=20000),
    )
    return K @ (r.x * ypm), -r.fun


@pytest.mark.parametrize("kernel,C", [("rbf", 1.0), ("linear", 0.3), ("rbf", 20.0)])
def test_binary_margin_one_is_bias_free_svm(kernel, C):
    rng = np.random.default_rng(3)
    N = 50
    X = rng.normal(size=(N, 3))
    y = (X[:, 0] + 0.7 * rng.normal(size=N) > 0).astype(np.int64)
    k = make_kernel(kernel, X, gamma=0.4) if kernel == "rbf" else make_kernel(kernel, X)
    K = k(X)
    res = solve_lambda_svm(X, y, 2, 1.0, np.full(N, C), k.code, k.kpar, tol=1e-9, eps=1e-12)
    f_ref, W_bin = _binary_svm_qp(K, np.where(y == 1, 1.0, -1.0), C)
    # f = f_2 (class coded +1) = -f_1; the lambda-SVM objective is twice the binary one
    assert np.abs(res.info["F"][:, 1] - f_ref).max() < 1e-5 * max(1.0, np.abs(f_ref).max())
    assert res.info["dual"] == pytest.approx(2 * W_bin, rel=1e-8)


def test_tiny_cache_gives_identical_results():
    L, N = 4, 60
    X, y = _data(N, L, seed=5, p=3)
    k = make_kernel("rbf", X, gamma=0.5)
    kw = dict(tol=1e-3)
    big = solve_lambda_svm(X, y, L, 5.0, np.full(N, 10.0), k.code, k.kpar, cache_size=100, **kw)
    tiny = solve_lambda_svm(X, y, L, 5.0, np.full(N, 10.0), k.code, k.kpar, cache_size=1e-4, **kw)
    assert tiny.info["n_cache_rows"] == 2 and big.info["n_cache_rows"] == N
    assert tiny.info["kernel_rows"] > big.info["kernel_rows"]
    assert np.array_equal(big.dual, tiny.dual)
    assert np.array_equal(big.info["F"], tiny.info["F"])
    assert big.n_iter == tiny.n_iter


def test_block_single_variable_and_shrinking_reach_the_same_optimum():
    L, N = 3, 90
    X, y = _data(N, L, seed=9)
    k = make_kernel("rbf", X, gamma=0.5)
    K = k(X)
    Cb = np.full(N, 50.0)
    ref = solve_lambda_svm(X, y, L, 20.0, Cb, k.code, k.kpar, tol=1e-8, shrinking=False)
    for kw in (dict(inner_max=1), dict(inner_max=3), dict(inner_max=1, shrinking=False)):
        r = solve_lambda_svm(X, y, L, 20.0, Cb, k.code, k.kpar, tol=1e-8, **kw)
        assert r.converged
        assert r.info["dual"] == pytest.approx(ref.info["dual"], rel=1e-10)
        F, _ = _F_from_alpha(K, y, L, r.dual)
        assert np.allclose(F, ref.info["F"], atol=1e-6)


def test_compact_and_callable_kernels_against_qp():
    L, N = 3, 30
    X, y = _data(N, L, seed=2, p=4)
    kc = make_kernel("compact", X, gamma_k=2.0)
    K = kc(X)
    assert (K == 0).mean() > 0.1  # the compact support actually truncates
    W_ref, F_ref, _ = _qp(K, y, L, 7.0, np.full(N, 4.0))
    r1 = solve_lambda_svm(X, y, L, 7.0, np.full(N, 4.0), kc.code, kc.kpar, tol=1e-9)
    r2 = solve_lambda_svm(X, y, L, 7.0, np.full(N, 4.0), KERNEL_CALLABLE, np.zeros(5), K, tol=1e-9)
    for r in (r1, r2):
        assert r.info["dual"] == pytest.approx(W_ref, rel=1e-8)
        assert np.abs(r.info["F"] - F_ref).max() < 1e-4 * max(1.0, np.abs(F_ref).max())


def test_warm_start_reaches_same_optimum_in_fewer_iterations():
    L, N = 4, 60
    X, y = _data(N, L, seed=4)
    k = make_kernel("rbf", X, gamma=0.5)
    r1 = solve_lambda_svm(X, y, L, 10.0, np.full(N, 10.0), k.code, k.kpar, tol=1e-6)
    r2 = solve_lambda_svm(X, y, L, 10.0, np.full(N, 20.0), k.code, k.kpar, tol=1e-6)
    r3 = solve_lambda_svm(X, y, L, 10.0, np.full(N, 20.0), k.code, k.kpar, tol=1e-6, alpha0=r1.dual)
    assert r3.info["dual"] == pytest.approx(r2.info["dual"], rel=1e-9)
    assert r3.n_iter < r2.n_iter


def test_budget_exhaustion_reports_status():
    L, N = 3, 60
    X, y = _data(N, L, seed=1)
    k = make_kernel("rbf", X, gamma=0.5)
    r = solve_lambda_svm(X, y, L, 1.0, np.full(N, 100.0), k.code, k.kpar, tol=1e-8, max_iter=5)
    assert not r.converged and r.info["status"] == "max_iter" and r.n_iter == 5
    assert r.info["max_violation"] > 1e-8


@pytest.mark.parametrize("margin,C", [(1.0, 1.0), (6.0, 10.0), (-20.0, 3.0)])
def test_shrinking_rebuild_is_exact(margin, C):
    """Shrinking (with the exact rebuild of shrunk points) returns the same optimum and decision
    values equal to K btilde recomputed from the multipliers."""
    L, N = 4, 300
    X, y = _data(N, L, seed=12, p=3)
    k = make_kernel("rbf", X, gamma=0.3)
    K = k(X)
    Cb = np.full(N, C)
    a = solve_lambda_svm(X, y, L, margin, Cb, k.code, k.kpar, tol=1e-6, shrinking=False)
    b = solve_lambda_svm(X, y, L, margin, Cb, k.code, k.kpar, tol=1e-6, shrinking=True)
    assert b.info["n_shrink"] >= 1 and b.info["n_rebuild"] >= 1
    assert b.converged
    F, _ = _F_from_alpha(K, y, L, b.dual)
    assert np.allclose(b.info["F"], F, atol=1e-8 * max(1.0, np.abs(F).max()))
    assert b.info["dual"] == pytest.approx(a.info["dual"], rel=1e-8)
    assert np.allclose(b.info["F"], a.info["F"], atol=1e-3)


def test_shrink_events_reused_after_an_exact_rebuild():
    """With frequent shrink checks the event slots run out; the shrunk points are then rebuilt
    exactly, become active and are shrunk again. The optimum and the decision values (against
    K btilde from the multipliers) are those of the run without shrinking."""
    L, N = 4, 700
    X, y = _data(N, L, seed=13, p=3)
    k = make_kernel("rbf", X, gamma=0.3)
    K = k(X)
    Cb = np.full(N, 30.0)
    a = solve_lambda_svm(X, y, L, 6.0, Cb, k.code, k.kpar, tol=1e-6, shrinking=False)
    # the former shrinking rule (slack above the maximal violation, an event when one active point
    # in 16 qualifies) shrinks often enough here for the 6 event slots to run out
    b = solve_lambda_svm(
        X, y, L, 6.0, Cb, k.code, k.kpar, tol=1e-6, shrinking=True, shrink_every=20, shrink_rho=1.0, shrink_min=16
    )
    assert b.converged and b.info["n_shrink"] > 6 and b.info["n_rebuild"] >= 2
    F, _ = _F_from_alpha(K, y, L, b.dual)
    assert np.allclose(b.info["F"], F, atol=1e-8 * max(1.0, np.abs(F).max()))
    assert b.info["max_violation"] < 1e-6
    assert b.info["dual"] == pytest.approx(a.info["dual"], rel=1e-8)
    assert np.allclose(b.info["F"], a.info["F"], atol=1e-3)


@pytest.mark.parametrize("n_select", [4, 16])
def test_lazy_selection_reaches_the_exact_greedy_optimum(n_select):
    """The lazy selection (violations recomputed every few visits, decision values kept up to a
    per-point shift between those passes) converges to the optimum of the exact maximal-violation
    SMO, with exact decision values."""
    L, N = 3, 1100  # N // 256 >= 4, so the lazy list really has several points
    X, y = _data(N, L, seed=21, p=3)
    k = make_kernel("rbf", X, gamma=0.3)
    K = k(X)
    Cb = np.full(N, 5.0)
    kw = dict(tol=1e-6, eps=1e-9)
    a = solve_lambda_svm(X, y, L, 6.0, Cb, k.code, k.kpar, n_select=1, **kw)
    b = solve_lambda_svm(X, y, L, 6.0, Cb, k.code, k.kpar, n_select=n_select, **kw)
    assert a.converged and b.converged
    assert b.info["max_violation"] < 1e-6
    F, _ = _F_from_alpha(K, y, L, b.dual)
    assert np.allclose(b.info["F"], F, atol=1e-8 * max(1.0, np.abs(F).max()))
    assert b.info["dual"] == pytest.approx(a.info["dual"], rel=1e-9)
    assert np.allclose(b.info["F"], a.info["F"], atol=1e-3)


def test_linear_weight_vector_path_reaches_the_exact_greedy_optimum():
    """Linear kernel: explicit class weight vectors with lists of N / 8 points give the optimum of
    the exact maximal-violation kernel SMO, with exact decision values and the KKT rule."""
    L, N = 3, 1100
    X, y = _data(N, L, seed=22, p=3)
    k = make_kernel("linear", X)
    K = k(X)
    C, eps, T = 2.0, 1e-9, 1e-6
    a = solve_lambda_svm(X, y, L, 4.0, np.full(N, C), k.code, k.kpar, tol=T, eps=eps, n_select=1)
    b = solve_lambda_svm(X, y, L, 4.0, np.full(N, C), k.code, k.kpar, tol=T, eps=eps)
    assert a.converged and b.converged and b.info["kernel_rows"] == 0
    F, _ = _F_from_alpha(K, y, L, b.dual)
    assert np.allclose(b.info["F"], F, atol=1e-9 * max(1.0, np.abs(F).max()))
    Y = np.where(y[:, None] == np.arange(L), 1.0, -1.0)
    V = Y * F - np.where(Y > 0, 4.0, 1.0)
    al = b.dual
    lo, hi = al < eps, al > C - eps
    assert np.all(V[lo] >= -T) and np.all(np.abs(V[~lo & ~hi]) < T) and np.all(V[hi] < T)
    assert b.info["dual"] == pytest.approx(a.info["dual"], rel=1e-9)


def test_vectorised_exp_and_kernel_rows():
    """The kernel rows of the solver (blocked distances, vectorised exp) equal the kernel matrix
    used for prediction; the exp agrees with numpy's to 2 ulp and is 0 below -708."""
    from cohstats.kernels import exp_nonpos as _exp_nonpos
    from cohstats.solvers.svm.rows import get_row, rows_provider

    rng = np.random.default_rng(3)
    x = -np.concatenate([rng.random(2000) * 2, rng.random(2000) * 800, [0.0, -0.0, 5e-324, 707.9, 708.0, 708.5, 1e300]])
    out, kb = np.empty_like(x), np.empty_like(x)
    _exp_nonpos(out, x, kb)
    ref = np.exp(x)
    big = x > -708.0
    assert np.all(np.abs(out[big] - ref[big]) <= 2 * np.spacing(ref[big]))
    assert np.all(out[~big] == 0.0)
    for name, kw in (("rbf", {"gamma": 0.2}), ("compact", {"gamma_k": 2.0})):
        X = rng.normal(size=(2500, 5))  # several blocks of 512 points; p = 5: passes of 4 features and a rest
        k = make_kernel(name, X, **kw)
        K = k(X)
        for dt in (np.float64, np.float32):
            kr = rows_provider(k.code, X, k.kpar, n_slots=2, dtype=dt)
            for i in (0, 511, 512, 2499):
                row = get_row(kr, i)
                tol = 1e-14 if dt == np.float64 else 1e-7
                assert np.abs(row - K[i]).max() < tol
                assert row[i] == 1.0


def test_float32_kernel_cache():
    """float32 cached rows (default for tol >= 1e-3): the decision values are those of the rounded
    kernel, within 2^-24 sum |btilde| of the exact ones, so the KKT rule holds for the exact
    kernel up to that; the optimum agrees with the float64 cache."""
    L, N = 4, 600
    X, y = _data(N, L, seed=31, p=3)
    k = make_kernel("rbf", X, gamma=0.5)
    K = k(X)
    Cb = np.full(N, 10.0)
    T = 1e-3
    r32 = solve_lambda_svm(X, y, L, 6.0, Cb, k.code, k.kpar, tol=T)
    r64 = solve_lambda_svm(X, y, L, 6.0, Cb, k.code, k.kpar, tol=T, cache_float32=False)
    assert r32.info["n_cache_rows"] == r64.info["n_cache_rows"] == N
    assert r32.converged and r64.converged
    F, Bt = _F_from_alpha(K, y, L, r32.dual)
    bound = 2.0**-24 * np.abs(Bt).sum(axis=0).max() + 1e-12
    assert np.abs(r32.info["F"] - F).max() < bound
    assert r32.info["max_violation"] < T
    Y = np.where(y[:, None] == np.arange(L), 1.0, -1.0)
    V = Y * F - np.where(Y > 0, 6.0, 1.0)
    al = r32.dual
    lo, hi = al < 1e-6, al > 10.0 - 1e-6
    assert np.all(V[lo] >= -T - bound) and np.all(np.abs(V[~lo & ~hi]) < T + bound)
    assert np.all(V[hi] < T + bound)
    assert r32.info["dual"] == pytest.approx(r64.info["dual"], rel=1e-5)
    # tight tolerances keep float64 rows by default
    r = solve_lambda_svm(X[:60], y[:60], L, 6.0, Cb[:60], k.code, k.kpar, tol=1e-8)
    F, _ = _F_from_alpha(K[:60, :60], y[:60], L, r.dual)
    assert np.abs(r.info["F"] - F).max() < 1e-10


def _dual_from_alpha(K, y, L, margin, a):
    """W(alpha) of (22) computed directly from the multipliers and the full kernel matrix."""
    F, Bt = _F_from_alpha(K, y, L, a)
    lv = np.where(y[:, None] == np.arange(L), margin, 1.0)
    return float((a * lv).sum() - 0.5 * (Bt * F).sum())


@pytest.mark.parametrize("n_select,shrinking", [(None, True), (None, False), (1, True)])
def test_dual_objective_never_decreases_along_the_iterations(n_select, shrinking):
    """Runs stopped after 1, 2, 4, ... visits are prefixes of one deterministic run; the dual
    objective, recomputed from their multipliers with the full kernel matrix, never decreases
    and ends at the converged optimum (lazy selection with lists of up to N / 8 points, the
    exact greedy loop, with and without shrinking; cost 2 and margin 10 (L - 1) as the
    defaults of lamsvm)."""
    L, N = 4, 700
    X, y = _data(N, L, seed=11, p=3)
    k = make_kernel("rbf", X, gamma=0.5)
    K = k(X)
    margin = 30.0
    Cb = np.full(N, 31.0)
    kw = dict(tol=1e-6, n_select=n_select, shrinking=shrinking, cache_float32=False)
    full = solve_lambda_svm(X, y, L, margin, Cb, k.code, k.kpar, **kw)
    assert full.converged and full.n_iter > 1000
    budgets = np.unique(np.r_[np.geomspace(1, full.n_iter, 25).astype(int), full.n_iter - 1])
    duals = []
    for b in budgets:
        r = solve_lambda_svm(X, y, L, margin, Cb, k.code, k.kpar, max_iter=int(b), **kw)
        assert r.n_iter == b
        duals.append(_dual_from_alpha(K, y, L, margin, r.dual))
    W_full = _dual_from_alpha(K, y, L, margin, full.dual)
    d = np.diff(np.r_[0.0, duals, W_full])
    assert np.all(d >= -1e-9 * abs(W_full)), d.min()
    assert W_full == pytest.approx(full.info["dual"], rel=1e-10)
