"""The SVM solvers' kernel-row provider (solvers/svm/rows.py) against the package's kernel matrix,
and the prediction path (kernels.kernel_cross) against the training decision values."""

import numpy as np
import pytest

from cohstats.kernels import KERNEL_CALLABLE, kernel_cross, make_kernel
from cohstats._numba_cache import njit
from cohstats.solvers.svm.rows import get_row, gram_matrix, kernel_diagonal, n_cache_rows, rows_provider
from cohstats.solvers.svm.rows import permute_rows as _permute_rows_nb
from cohstats.solvers.svm.smo import kernel_decision, smo_solve
from cohstats.solvers.svm.smo_lambda import solve_lambda_svm
from cohstats.solvers.svm.svmpath import path_decision, pi_grid_smo

KERNELS = [
    ("linear", {}),
    ("rbf", {"gamma": 0.3}),
    ("poly", {"gamma": 0.5, "degree": 3, "coef0": 1.0}),
    ("compact", {"gamma_k": 2.0}),
]


@njit(cache=False)
def permute_rows(kr, swa, swb, nsw):
    """The cache's permute_rows, called from jitted code (it has no Python entry point)."""
    _permute_rows_nb(kr, swa, swb, nsw)


def _X(n, p=7, seed=0):
    return np.random.default_rng(seed).normal(size=(n, p))


@pytest.mark.parametrize("name,kw", KERNELS)
def test_rows_equal_kernel_matrix(name, kw):
    # n = 700 > one block of 512 columns; p = 7: one pass of four features and a rest of three
    X = _X(700)
    k = make_kernel(name, X, **kw)
    K = k(X)
    scale = np.abs(K).max()
    rng = np.random.default_rng(1)
    order = rng.integers(0, 700, 400)  # repeats and evictions in a 3-row cache
    kr = rows_provider(k.code, X, k.kpar, n_slots=3)
    for i in order:
        np.testing.assert_allclose(get_row(kr, i), K[i], rtol=0, atol=1e-12 * scale)
    # the LRU cache: rows computed = misses of an independently simulated 3-row LRU cache
    used, computed, hits, ident = kr.state
    assert used == 3 and ident == 1 and computed + hits == 400
    assert computed == _lru_misses(order, 3) > 300
    np.testing.assert_allclose(
        kernel_diagonal(k.code, X, k.kpar, np.empty((1, 1))), np.diag(K), rtol=0, atol=1e-12 * scale
    )
    np.testing.assert_allclose(gram_matrix(k.code, X, k.kpar), K, rtol=0, atol=1e-12 * scale)
    # float32 rows are the float64 rows rounded once
    k32 = rows_provider(k.code, X, k.kpar, n_slots=2, dtype=np.float32)
    for i in (0, 511, 512, 699):
        r = get_row(k32, i)
        assert r.dtype == np.float32
        np.testing.assert_array_equal(r, get_row(kr, i).astype(np.float32))


def _lru_misses(order, n_slots):
    """Misses of a least-recently-used cache of ``n_slots`` rows on the request sequence."""
    cache, misses = [], 0
    for i in order:
        if i in cache:
            cache.remove(i)
        else:
            misses += 1
            if len(cache) == n_slots:
                cache.pop(0)
        cache.append(i)
    return misses


def test_precomputed_rows_in_place_and_permuted_rows():
    X = _X(60, 3, seed=2)
    k = make_kernel("rbf", X, gamma=0.7)
    K = k(X)
    kr = rows_provider(KERNEL_CALLABLE, None, None, K, n_slots=0, in_place=True)
    assert np.shares_memory(get_row(kr, 5), K) and kr.state[1] == 0
    # rows in position order: after swapping positions (0, 59) and (3, 4), row[q] = K[i, perm[q]]
    kp = rows_provider(k.code, X, k.kpar, n_slots=4)
    get_row(kp, 10)
    swa, swb = np.array([0, 3]), np.array([59, 4])
    for a, b in zip(swa, swb):
        kp.perm[a], kp.perm[b] = kp.perm[b], kp.perm[a]
    permute_rows(kp, swa, swb, 2)
    for i in (10, 20):  # 10 was cached before the swaps, 20 is computed after
        np.testing.assert_allclose(get_row(kp, i), K[i, kp.perm], rtol=0, atol=1e-12)
    assert n_cache_rows(1000, 200.0) == 1000 and n_cache_rows(10**6, 1.0) == 2
    assert n_cache_rows(1000, 8000 / 2**20, itemsize=4) == 2 and n_cache_rows(1000, 1.0) == 131
    with pytest.raises(ValueError, match="cache_size"):
        n_cache_rows(10, 0.0)


@pytest.mark.parametrize("gamma", [0.3, 40.0])
def test_float32_gaussian_rows_are_the_float64_rows_rounded(gamma):
    """The float32 cache computes Gaussian rows in one fused pass (rows.rbf_row32_into): bitwise the
    float64 rows of kernel_row_into rounded once, in the original order and, after positions were
    permuted, in position order -- also where the exponential underflows (gamma = 40: most entries
    below float32's smallest normal or exactly 0) and for a duplicated point (distance exactly 0)."""
    X = _X(1100, 5, seed=9)  # three blocks of 512 columns, the last one partial
    X[7] = X[1000]
    k = make_kernel("rbf", X, gamma=gamma)
    G = gram_matrix(k.code, X, k.kpar)  # float64 rows of kernel_row_into
    k32 = rows_provider(k.code, X, k.kpar, n_slots=3, dtype=np.float32)
    for i in (0, 7, 511, 512, 1000, 1099):
        r = get_row(k32, i)
        assert r.dtype == np.float32
        np.testing.assert_array_equal(r.view(np.int32), G[i].astype(np.float32).view(np.int32))
    assert G[7, 1000] == 1.0 and get_row(k32, 7)[1000] == 1.0
    if gamma > 1:
        r = get_row(k32, 3)
        assert np.mean(r == 0) > 0.5 and np.any((r > 0) & (r < np.finfo(np.float32).tiny))
    # positions permuted (a random permutation as swaps): rows computed afterwards are gathered
    rng = np.random.default_rng(2)
    swa = rng.integers(0, 1100, 700)
    swb = rng.integers(0, 1100, 700)
    for a, b in zip(swa, swb):
        k32.perm[a], k32.perm[b] = k32.perm[b], k32.perm[a]
    permute_rows(k32, swa, swb, 700)
    for i in (7, 40, 1000, 1099):  # a row cached before the swaps (permuted in place), rows computed after
        np.testing.assert_array_equal(get_row(k32, i).view(np.int32), G[i, k32.perm].astype(np.float32).view(np.int32))


@pytest.mark.parametrize("n_rows", [3, 11])
def test_permute_rows_replays_the_swaps_in_order_on_every_cached_row(n_rows):
    """permute_rows (four rows at a time, then the rest) against the swaps applied one by one with
    numpy, on a cache of ``n_rows`` of 13 slots (empty slots untouched), with swaps that chain
    (a position moved twice) and repeat."""
    X = _X(300, 3, seed=5)
    k = make_kernel("rbf", X, gamma=0.5)
    kr = rows_provider(k.code, X, k.kpar, n_slots=13, dtype=np.float32)
    for i in range(n_rows):
        get_row(kr, 20 * i)
    before = kr.rows.copy()
    rng = np.random.default_rng(6)
    swa = rng.integers(0, 300, 500)
    swb = rng.integers(0, 300, 500)
    swa[1], swb[1] = swb[0], 299  # the position just written is swapped again
    permute_rows(kr, swa, swb, 450)  # only the first 450
    want = before.copy()
    for a, b in zip(swa[:450], swb[:450]):
        want[:n_rows, [a, b]] = want[:n_rows, [b, a]]
    np.testing.assert_array_equal(kr.rows[:n_rows], want[:n_rows])
    np.testing.assert_array_equal(kr.rows[n_rows:].view(np.int32), before[n_rows:].view(np.int32))
    assert not np.array_equal(want[:n_rows], before[:n_rows]) and kr.state[3] == 0


@pytest.mark.parametrize("name,kw", KERNELS)
def test_prediction_equals_training_decision_smo(name, kw):
    rng = np.random.default_rng(3)
    X = _X(150, 4, seed=3)
    y = np.where(X[:, 0] + X[:, 1] ** 2 - 1 + 0.5 * rng.normal(size=150) > 0, 1.0, -1.0)
    k = make_kernel(name, X, **kw)
    r = smo_solve(X, y, code=k.code, kpar=k.kpar, C=np.full(150, 1.0), tol=1e-8, cache_size=0.01)
    assert r.converged and r.info["kernel_rows"] > 150  # rows were evicted and recomputed
    # training decision values from the solver's gradient: y_i (G_i + 1) = sum_j a_j y_j K_ij
    f_train = y * (r.info["gradient"] + 1.0) + r.intercept
    f_pred = kernel_decision(k.code, X, k.kpar, r.dual * y, r.intercept, X, None)
    # compact kernel: sqrt of a squared distance that cancels to ~1e-16 instead of 0 on the
    # diagonal moves K_ii by ~1e-8 relative (a property of the kernel at 0, not of the rows)
    tol = 1e-6 if name == "compact" else 1e-12
    np.testing.assert_allclose(f_pred, f_train, rtol=0, atol=tol * (1 + np.abs(f_train).max()))
    # and against the package's kernel matrix
    np.testing.assert_allclose(
        k(X) @ (r.dual * y) + r.intercept, f_train, rtol=0, atol=tol * (1 + np.abs(f_train).max())
    )


@pytest.mark.parametrize("name,kw", [KERNELS[1], KERNELS[3]])
def test_prediction_equals_training_decision_lambda_svm(name, kw):
    L, N = 3, 120
    rng = np.random.default_rng(4)
    y = rng.integers(0, L, N)
    X = rng.normal(size=(N, 5)) + y[:, None] * 0.7
    k = make_kernel(name, X, **kw)
    res = solve_lambda_svm(X, y, L, 4.0, np.full(N, 2.0), k.code, k.kpar, tol=1e-8, cache_size=0.01)
    assert res.converged
    B = np.where(y[:, None] == np.arange(L), res.dual, -res.dual)
    Bt = B - B.mean(axis=1, keepdims=True)
    F = res.info["F"]
    tol = 1e-6 if name == "compact" else 1e-12
    np.testing.assert_allclose(kernel_cross(k.code, X, X, k.kpar) @ Bt, F, rtol=0, atol=tol * (1 + np.abs(F).max()))


def test_path_prediction_uses_the_rows():
    X = _X(80, 2, seed=5)
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    y[::7] *= -1
    k = make_kernel("rbf", X, gamma=1.0)
    grid = np.array([0.3, 0.5, 0.7])
    # cache too small for the whole matrix (rows) and large enough (precomputed once): same fits
    small = pi_grid_smo(X, y, code=k.code, kpar=k.kpar, nlam=2.0, grid=grid, tol=1e-10, cache_size=0.01)
    whole = pi_grid_smo(X, y, code=k.code, kpar=k.kpar, nlam=2.0, grid=grid, tol=1e-10)
    F = path_decision(X, y, small, X, code=k.code, kpar=k.kpar)
    np.testing.assert_allclose(F, path_decision(X, y, whole, X, code=k.code, kpar=k.kpar), atol=1e-8)
    K = k(X)
    ref = ((small.dual * y) @ K + small.intercept[:, None]) / small.info["nlam"]
    np.testing.assert_allclose(F, ref, rtol=0, atol=1e-12 * (1 + np.abs(ref).max()))
    # the recorded objectives are the C-SVM dual objectives of the grid fits
    assert small.converged
    for g in range(grid.size):
        a = small.dual[g] / small.info["nlam"]
        assert small.objective[g] == pytest.approx(0.5 * (a * y) @ K @ (a * y) - a.sum(), rel=1e-9)
