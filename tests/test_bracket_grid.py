"""The warm-started bracketing grid ([WSL] section 4) at the default tolerance: float32 kernel
matrix, clipped warm starts, path_method="auto"; each fit checked at its optimum with a float64
kernel computed independently by scikit-learn."""

import numpy as np
import pytest

from cohstats.datasets import make_wsl1
from cohstats.kernels import KERNEL_COMPACT, KERNEL_LINEAR, KERNEL_POLY, KERNEL_RBF, gram_symmetric
from cohstats.models.svm import svm
from cohstats.solvers.svm.rows import gram_matrix, rows_provider
from cohstats.solvers.svm.svmpath import path_decision, pi_grid_smo, pi_path


def _wsl1(n, seed):
    df = make_wsl1(n, random_state=seed)
    X = df[["x1", "x2"]].to_numpy()
    y = np.where(df["y"].to_numpy() == df["y"].max(), 1.0, -1.0)
    return X, y


def _max_kkt_violation(K, y, a, C):
    """libsvm's stopping quantity m(a) - M(a) for the C-SVM dual with bounds 0 <= a <= C."""
    G = y * (K @ (a * y)) - 1.0
    up = np.where(y > 0, a < C, a > 0)
    low = np.where(y > 0, a > 0, a < C)
    return np.max(-y[up] * G[up]) - np.min(-y[low] * G[low])


def test_warm_grid_meets_tol_with_the_float64_kernel():
    from sklearn.metrics.pairwise import rbf_kernel

    X, y = _wsl1(500, 3)
    gamma = 0.7
    kpar = np.array([gamma, 0, 0, 0, 0.0])
    grid = np.arange(1, 22) / 22
    w = np.random.default_rng(0).uniform(0.5, 1.5, y.size)
    nlam = 2.0
    res = pi_grid_smo(X, y, code=KERNEL_RBF, kpar=kpar, nlam=nlam, grid=grid, weights=w, tol=1e-3)
    assert res.converged
    K = rbf_kernel(X, X, gamma=gamma)
    for g, pi in enumerate(grid):
        C = w * np.where(y > 0, 1 - pi, pi) / nlam
        a = res.dual[g] / nlam
        assert np.all(a >= 0) and np.all(a <= C * (1 + 1e-12))
        assert abs(a @ y) <= 1e-10 * C.sum()
        # the float32 kernel moves the violation by at most ~1e-6 here: well inside tol
        assert _max_kkt_violation(K, y, a, C) < 1e-3 + 1e-5


def test_float32_gram_is_the_rounded_float64_gram_and_stays_float32_in_place():
    X, _ = _wsl1(120, 4)
    kpar = np.array([0.5, 0, 0, 0, 0.0])
    K64 = gram_matrix(KERNEL_RBF, X, kpar)
    K32 = gram_matrix(KERNEL_RBF, X, kpar, dtype=np.float32)
    assert K32.dtype == np.float32
    np.testing.assert_array_equal(K32, K64.astype(np.float32))
    np.testing.assert_array_equal(K64, K64.T)  # the row arithmetic is exactly symmetric
    kr = rows_provider(-1, None, kpar, K32, n_slots=1, in_place=True)
    assert kr.rows.dtype == np.float32 and np.shares_memory(kr.rows, K32)  # read in place, no copy


@pytest.mark.parametrize("n", [1, 63, 65, 130])
@pytest.mark.parametrize("code", [KERNEL_LINEAR, KERNEL_RBF, KERNEL_POLY, KERNEL_COMPACT])
def test_symmetric_gram_is_bitwise_the_row_by_row_gram(n, code):
    # the upper-triangle build (blocks of 64 rows, mirrored) against the solvers' row arithmetic
    X = np.random.default_rng(n).normal(size=(n, 5))
    kpar = np.array([0.3, 1.0, 3.0, 4.0, 2.5])
    for dtype in (np.float64, np.float32):
        K = gram_symmetric(code, X, kpar, dtype=dtype)
        assert K.dtype == dtype
        np.testing.assert_array_equal(K, gram_matrix(code, X, kpar, dtype=dtype))
    if code == KERNEL_RBF and n > 1:
        from sklearn.metrics.pairwise import rbf_kernel

        np.testing.assert_allclose(K, rbf_kernel(X, X, gamma=0.3), rtol=1e-6, atol=1e-7)


def test_warm_grid_agrees_with_the_exact_path_to_the_tolerance():
    X, y = _wsl1(400, 6)
    kpar = np.array([1.0, 0, 0, 0, 0.0])
    grid = np.arange(1, 20) / 20
    ex = pi_path(X, y, code=KERNEL_RBF, kpar=kpar, nlam=4.0, grid=grid)
    wm = pi_grid_smo(X, y, code=KERNEL_RBF, kpar=kpar, nlam=4.0, grid=grid, tol=1e-3)
    Fe = path_decision(X, y, ex, X, code=KERNEL_RBF, kpar=kpar)
    Fw = path_decision(X, y, wm, X, code=KERNEL_RBF, kpar=kpar)
    # a KKT violation of tol = 1e-3 moves f by a few tol at most
    assert np.max(np.abs(Fw - Fe)) < 2e-2
    # bracketing reads signs: they agree except within that distance of 0
    differ = np.sign(Fw) != np.sign(Fe)
    assert np.all(np.abs(Fe[differ]) < 2e-2)


@pytest.mark.parametrize("n, method", [(200, "exact"), (301, "warm")])
def test_auto_path_method_by_n(n, method):
    df = make_wsl1(n, random_state=1)
    fit = svm("y ~ x1 + x2", df, pi="path")
    assert fit.path_method == method
    new = make_wsl1(300, random_state=2)
    other = svm("y ~ x1 + x2", df, pi="path", path_method="exact" if method == "warm" else "warm")
    pa = fit.predict(new, type="prob").to_numpy()
    pb = other.predict(new, type="prob").to_numpy()
    # probabilities are multiples of 1/m: only points with |f| at the solver's accuracy move,
    # by one grid step
    m = fit.m
    assert np.max(np.abs(pa - pb)) <= 1.0 / m + 1e-12
    assert np.mean(np.abs(pa - pb) > 1e-12) < 0.05
    np.testing.assert_allclose(fit.predict(new, type="link"), other.predict(new, type="link"), atol=2e-2)


def test_lamsvm_default_width_is_scikit_learns_scale():
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC

    from cohstats.models.lamsvm import lamsvm

    rng = np.random.default_rng(0)
    X = rng.normal(size=(90, 4)) * np.array([1.0, 10.0, 0.1, 3.0]) + 5.0
    y = np.arange(90) % 3
    fit = lamsvm(X, y)
    Z = StandardScaler().fit_transform(X)
    assert fit.gamma == pytest.approx(SVC(gamma="scale").fit(Z, y)._gamma, rel=1e-12)


def test_secant_start_carries_the_exact_gradient_and_bound_parts():
    # two neighbouring solutions of the weighted C-SVM (tight SMO), then the secant start to a
    # third pi: the start is the clipped linear prediction, and the carried gradient and its
    # class-split bound parts equal those recomputed from the kernel at the start
    from sklearn.metrics.pairwise import rbf_kernel

    from cohstats.solvers.svm.smo import _start_gradient
    from cohstats.solvers.svm.smo import smo_solve
    from cohstats.solvers.svm.svmpath_grid import _secant_start

    X, y = _wsl1(150, 11)
    gamma = 0.8
    K = rbf_kernel(X, X, gamma=gamma)
    w = np.random.default_rng(3).uniform(0.5, 1.5, y.size)
    nlam = 1.5
    pis = (0.40, 0.45, 0.50)
    Cs = [w * np.where(y > 0, 1 - pi, pi) / nlam for pi in pis]
    sols = [smo_solve(None, y, code=-1, Kpre=K, C=C, tol=1e-10).dual for C in Cs[:2]]
    kr = rows_provider(-1, None, np.zeros(5), K, n_slots=y.size, in_place=True)
    lo, p = np.zeros(y.size), -np.ones(y.size)
    a_pp, C_pp = sols[0], Cs[0]
    a, C, Cn = sols[1].copy(), Cs[1], Cs[2]
    G_pp, _, _ = _start_gradient(kr, y, p, lo, C_pp, a_pp)
    G, gbp, gbn = _start_gradient(kr, y, p, lo, C, a)
    t = (pis[2] - pis[1]) / (pis[1] - pis[0])
    rp, rn = (1 - pis[2]) / (1 - pis[1]), pis[2] / pis[1]
    a_lin = a + t * (a - a_pp)
    _secant_start(kr, y, y > 0, a, G, gbp, gbn, C, Cn, a_pp, G_pp, C_pp, t, rp, rn)
    both_up = (sols[1] >= C) & (a_pp >= C_pp) & (sols[1] > 0)
    expect = np.where(both_up, Cn, np.clip(a_lin, 0.0, Cn))
    np.testing.assert_allclose(a, expect, rtol=0, atol=1e-14)
    assert np.sum(a != a_lin) > 0  # some multipliers were clipped (the case that reads rows)
    G_ref, gbp_ref, gbn_ref = _start_gradient(kr, y, p, lo, Cn, a)
    np.testing.assert_allclose(G, G_ref, rtol=0, atol=1e-11)
    np.testing.assert_allclose(gbp, gbp_ref, rtol=0, atol=1e-11)
    np.testing.assert_allclose(gbn, gbn_ref, rtol=0, atol=1e-11)
    # independent of the solver's arithmetic: G = y * (K (a y)) - 1
    np.testing.assert_allclose(G, y * (K @ (a * y)) - 1.0, rtol=0, atol=1e-11)


@pytest.mark.parametrize("secant_ratio", [0.0, 0.9, 1.0])
def test_every_start_route_reaches_the_optimum(secant_ratio):
    # secant at every step (0), the default switch (0.9) and the clipped start only (1): each
    # grid fit meets tol on a float64 kernel computed by scikit-learn, and the dual objectives
    # agree with cold solves at each pi to the accuracy that tol allows
    from sklearn.metrics.pairwise import rbf_kernel

    from cohstats.solvers.svm.smo import smo_solve

    X, y = _wsl1(400, 8)
    gamma = 1.0
    kpar = np.array([gamma, 0, 0, 0, 0.0])
    grid = np.arange(1, 20) / 20
    nlam = 1.0
    res = pi_grid_smo(X, y, code=KERNEL_RBF, kpar=kpar, nlam=nlam, grid=grid, tol=1e-3, secant_ratio=secant_ratio)
    assert res.converged
    K = rbf_kernel(X, X, gamma=gamma)
    for g, pi in enumerate(grid):
        C = np.where(y > 0, 1 - pi, pi) / nlam
        a = res.dual[g] / nlam
        assert np.all(a >= 0) and np.all(a <= C * (1 + 1e-12))
        assert abs(a @ y) <= 1e-10 * C.sum()
        assert _max_kkt_violation(K, y, a, C) < 1e-3 + 1e-5
        cold = smo_solve(None, y, code=-1, Kpre=K, C=C, tol=1e-9).dual
        d_warm = 0.5 * (a * y) @ K @ (a * y) - a.sum()
        d_cold = 0.5 * (cold * y) @ K @ (cold * y) - cold.sum()
        assert d_cold <= d_warm + 1e-9
        assert d_warm - d_cold <= 1e-3 * max(1.0, abs(d_cold))
