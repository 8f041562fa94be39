"""The exact pi path against independent SMO solves at every grid value (SPEC 4.6, D15)."""

import numpy as np
import pytest

from cohstats.kernels import KERNEL_LINEAR, KERNEL_RBF, make_kernel
from cohstats.solvers.svm.smo import smo_solve
from cohstats.solvers.svm.svmpath import path_decision, pi_path


def _wsl1(n, seed):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 2))
    y = np.where(X[:, 0] >= 0, 1.0, -1.0)
    y[rng.choice(n, n // 5, replace=False)] *= -1
    return X, y


def _check_against_smo(X, y, code, gamma, nlam, grid, w=None, tol_f=1e-6, n_jobs=None):
    n = y.size
    w = np.ones(n) if w is None else w
    kpar = np.array([gamma, 0, 0, 0, 0.0])
    res = pi_path(X, y, code=code, kpar=kpar, nlam=nlam, grid=grid, weights=w, n_jobs=n_jobs)
    F = path_decision(X, y, res, X, code=code, kpar=kpar)
    K = make_kernel("rbf", gamma=gamma)(X) if code == KERNEL_RBF else X @ X.T
    worst = 0.0
    for g, pi in enumerate(grid):
        S = w * np.where(y > 0, 1 - pi, pi)
        a = res.dual[g]
        # feasibility of the path multipliers
        assert np.all(a >= -1e-9) and np.all(a <= S + 1e-9)
        assert abs(np.sum(a * y)) < 1e-8 * max(1.0, S.sum())
        s = smo_solve(X, y, code=code, kpar=kpar, C=S / nlam, tol=1e-11)
        f = K @ (s.dual * y) + s.intercept
        worst = max(worst, np.abs(f - F[g]).max())
    assert worst < tol_f
    return res


def test_rbf_path_matches_smo_with_empty_elbow_jump():
    X, y = _wsl1(60, 0)
    grid = np.arange(1, 7) / 7
    res = _check_against_smo(X, y, KERNEL_RBF, 1.0, 60 * 0.05, grid)
    assert res.info["n_events"] > 30
    assert res.info["n_jumps"] >= 1  # the empty-elbow rule of SPEC 4.6 was exercised


@pytest.mark.parametrize("lam", [0.002, 0.2])
def test_rbf_path_many_events(lam):
    X, y = _wsl1(120, 4)
    m = 10
    res = _check_against_smo(X, y, KERNEL_RBF, 2.0, 120 * lam, np.arange(1, m) / m)
    assert res.info["n_restarts"] == 0


@pytest.mark.parametrize("n_jobs", [None, 2])
def test_linear_path_with_degenerate_ends_and_case_weights(n_jobs):
    X, y = _wsl1(80, 2)
    w = np.random.default_rng(2).uniform(0.5, 2.0, 80)
    res = _check_against_smo(X, y, KERNEL_LINEAR, 0.0, 80 * 0.01, np.arange(1, 10) / 10, w=w, n_jobs=n_jobs)
    # flat ends of [WSL] Figure 1: f is constant (slopes zero) at the extreme grid values
    B = res.dual * y / res.info["nlam"]
    W = B @ X
    assert np.abs(W[0]).max() < 1e-8 and np.abs(W[-1]).max() < 1e-8


def test_grid_validation():
    X, y = _wsl1(20, 1)
    with pytest.raises(ValueError, match="grid"):
        pi_path(X, y, code=KERNEL_RBF, kpar=np.array([1.0, 0, 0, 0, 0]), nlam=1.0, grid=[0.5, 0.2])
    with pytest.raises(ValueError, match="nlam"):
        pi_path(X, y, code=KERNEL_RBF, kpar=np.array([1.0, 0, 0, 0, 0]), nlam=0.0, grid=[0.5])


def test_duplicated_points_are_merged_exactly():
    X, y = _wsl1(50, 6)
    idx = np.random.default_rng(6).integers(0, 50, 80)  # resampled with duplicates
    Xd, yd = X[idx], y[idx]
    res = _check_against_smo(Xd, yd, KERNEL_RBF, 1.5, 80 * 0.01, np.arange(1, 8) / 8)
    assert res.dual.shape == (7, 80)


def test_warm_started_grid_agrees_with_exact_path():
    from cohstats.solvers.svm.svmpath import pi_grid_smo

    X, y = _wsl1(90, 8)
    kpar = np.array([1.0, 0, 0, 0, 0.0])
    grid = np.arange(1, 9) / 9
    ex = pi_path(X, y, code=KERNEL_RBF, kpar=kpar, nlam=90 * 0.01, grid=grid)
    wm = pi_grid_smo(X, y, code=KERNEL_RBF, kpar=kpar, nlam=90 * 0.01, grid=grid, tol=1e-9)
    Fe = path_decision(X, y, ex, X, code=KERNEL_RBF, kpar=kpar)
    Fw = path_decision(X, y, wm, X, code=KERNEL_RBF, kpar=kpar)
    np.testing.assert_allclose(Fw, Fe, atol=1e-6)
    assert np.all(np.abs(wm.dual @ y) < 1e-9)
    # the two chains (down and up from the value nearest 1/2) in two threads: same numbers
    X4, y4 = _wsl1(400, 5)
    w1 = pi_grid_smo(X4, y4, code=KERNEL_RBF, kpar=kpar, nlam=4.0, grid=grid)
    w2 = pi_grid_smo(X4, y4, code=KERNEL_RBF, kpar=kpar, nlam=4.0, grid=grid, n_jobs=2)
    np.testing.assert_array_equal(w2.dual, w1.dual)
    np.testing.assert_array_equal(w2.intercept, w1.intercept)
    # without the precomputed matrix (cache budget below n^2) the chains give the same solution
    w3 = pi_grid_smo(
        X, y, code=KERNEL_RBF, kpar=kpar, nlam=90 * 0.01, grid=grid, tol=1e-9, cache_size=8 * 90 * 10 / 2**20
    )
    np.testing.assert_allclose(path_decision(X, y, w3, X, code=KERNEL_RBF, kpar=kpar), Fe, atol=1e-6)


def test_two_half_paths_equal_the_single_path():
    X, y = _wsl1(400, 11)  # n >= 400: the halves really run in threads
    kpar = np.array([2.0, 0, 0, 0, 0.0])
    grid = np.arange(1, 10) / 10
    one = pi_path(X, y, code=KERNEL_RBF, kpar=kpar, nlam=400 * 0.02, grid=grid)
    two = pi_path(X, y, code=KERNEL_RBF, kpar=kpar, nlam=400 * 0.02, grid=grid, n_jobs=2)
    F1 = path_decision(X, y, one, X, code=KERNEL_RBF, kpar=kpar)
    F2 = path_decision(X, y, two, X, code=KERNEL_RBF, kpar=kpar)
    np.testing.assert_allclose(F2, F1, atol=2e-6)  # each path is exact to ~1e-6
    assert two.info["n_events"] > 0 and two.info["n_restarts"] == 0 and two.info["n_events"] != one.info["n_events"]
    with pytest.raises(ValueError, match="n_jobs"):
        pi_path(X, y, code=KERNEL_RBF, kpar=kpar, nlam=2.0, grid=grid, n_jobs=0)


def test_repair_equality_restores_the_constraint_inside_the_box():
    from cohstats.solvers.svm.svmpath_grid import _repair_equality

    rng = np.random.default_rng(3)
    for _ in range(200):
        n = int(rng.integers(2, 30))
        pos = rng.random(n) < rng.random()
        if pos.all() or not pos.any():
            pos[0] = not pos[0]
        C = rng.uniform(0.1, 2.0, n)
        a = C * rng.choice([0.0, 1.0, 0.5], n) * rng.random(n) ** (rng.random() < 0.5)
        out = _repair_equality(a, C, pos)
        assert np.all(out >= 0.0) and np.all(out <= C)
        assert abs(out[pos].sum() - out[~pos].sum()) <= 1e-12 * max(1.0, C.sum())
        free = (a > 0) & (a < C)
        room = np.where(pos == (a[pos].sum() > a[~pos].sum()), a, C - a)
        if room[free].sum() >= abs(a[pos].sum() - a[~pos].sum()):
            np.testing.assert_array_equal(out[~free], a[~free])  # bounded ones untouched
