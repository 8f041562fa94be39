"""λ-SVM SMO with block visits (a visited point and its most correlated points with a free
multiplier optimised together on their kernel block): the same optimum as single-point visits and
the exact greedy solver (dual from the full kernel matrix, an independent KKT certificate), a dual
that never decreases along the visits, results independent of the row-cache size, and fewer row
refreshes than single-point visits where points are nearly duplicated."""

import os
import sys

import numpy as np
import pytest

import cohstats.solvers.svm.smo_lambda as sl
from cohstats.kernels import make_kernel

sys.path.insert(0, os.path.dirname(__file__))
from _lamsvm_reference import _centred_b, _data, _dual  # noqa: E402


def _kkt(K, y, L, margin, a, C, eps):
    """Largest KKT violation of ``a`` from scratch: ``g = l - y F`` with ``F = K btilde``."""
    F = K @ _centred_b(y, L, a)
    true = y[:, None] == np.arange(L)
    g = np.where(true, margin - F, 1.0 + F)
    lo = a <= eps
    hi = a >= C - eps
    v = np.where(lo, np.maximum(g, 0.0), np.where(hi, np.maximum(-g, 0.0), np.abs(g)))
    return float(v.max())


@pytest.mark.parametrize("margin,C,gamma,start", [(6.0, 5.0, 0.4, 0), (30.0, 31.0, 0.5, None)])
def test_block_visits_reach_the_single_visit_and_greedy_optimum(margin, C, gamma, start):
    L, N = 4, 1500
    X, y = _data(N, L, seed=11)
    k = make_kernel("rbf", X, gamma=gamma)
    K = k(X)
    Cb = np.full(N, C)
    kw = dict(tol=1e-7, eps=1e-9, cache_float32=False)
    blk = sl.solve_lambda_svm(X, y, L, margin, Cb, k.code, k.kpar, block_start=start, **kw)
    single = sl.solve_lambda_svm(X, y, L, margin, Cb, k.code, k.kpar, n_block=1, **kw)
    greedy = sl.solve_lambda_svm(X, y, L, margin, Cb, k.code, k.kpar, n_select=1, shrinking=False, **kw)
    assert blk.info["n_blocks"] > 100 and blk.info["block_points"] > 2 * blk.info["n_blocks"]  # blocks ran
    assert single.info["n_blocks"] == 0
    W_ref = _dual(K, y, L, margin, greedy.dual)
    for r in (blk, single):
        assert r.converged and r.info["max_violation"] < 1e-7
        assert _kkt(K, y, L, margin, r.dual, C, 1e-9) < 1e-6
        F = K @ _centred_b(y, L, r.dual)
        assert np.allclose(r.info["F"], F, atol=1e-8 * max(1.0, np.abs(F).max()))
        assert _dual(K, y, L, margin, r.dual) == pytest.approx(W_ref, rel=1e-9)
        assert r.info["dual"] == pytest.approx(W_ref, rel=1e-9)
        assert np.array_equal(r.info["F"].argmax(axis=1), greedy.info["F"].argmax(axis=1))


@pytest.mark.parametrize(
    "L, N, seed, gamma, margin, C, npts, counter",
    [(4, 700, 3, 0.5, 30.0, 31.0, 30, "n_blocks"), (3, 600, 29, 0.7, 20.0, 25.0, 25, "block_kept")],
)
def test_dual_never_decreases_along_block_visits(L, N, seed, gamma, margin, C, npts, counter):
    """Runs stopped after 1, 2, 4, ... visits are prefixes of one deterministic run (a block's
    visits count against the budget, so every budget is met exactly); the dual, recomputed with
    the full kernel matrix, never decreases. The second case's blocks reuse the kernel kept with
    their partners (``block_kept`` counts the reuses)."""
    X, y = _data(N, L, seed=seed)
    k = make_kernel("rbf", X, gamma=gamma)
    K = k(X)
    Cb = np.full(N, C)
    kw = dict(tol=1e-6, cache_float32=False, block_start=0)
    full = sl.solve_lambda_svm(X, y, L, margin, Cb, k.code, k.kpar, **kw)
    assert full.converged and full.info[counter] > 0
    budgets = np.unique(np.r_[np.geomspace(1, full.n_iter, npts).astype(int), full.n_iter - 1])
    duals = []
    for b in budgets:
        r = sl.solve_lambda_svm(X, y, L, margin, Cb, k.code, k.kpar, max_iter=int(b), **kw)
        assert r.n_iter == b
        duals.append(_dual(K, y, L, margin, r.dual))
    W_full = _dual(K, y, L, margin, full.dual)
    d = np.diff(np.r_[0.0, duals, W_full])
    assert np.all(d >= -1e-9 * abs(W_full)), d.min()
    assert W_full == pytest.approx(full.info["dual"], rel=1e-10)


@pytest.mark.parametrize("f32", [False, True])
def test_block_visits_do_not_depend_on_the_cache_size(f32):
    """A cache of 2 rows (fewer than a block) recomputes the rows a block needs: bitwise the same
    multipliers, decision values and visits as a cache holding every row."""
    L, N = 4, 300
    X, y = _data(N, L, seed=5)
    k = make_kernel("rbf", X, gamma=0.5)
    kw = dict(tol=1e-4, block_start=0, cache_float32=f32)
    big = sl.solve_lambda_svm(X, y, L, 20.0, np.full(N, 21.0), k.code, k.kpar, cache_size=100, **kw)
    tiny = sl.solve_lambda_svm(X, y, L, 20.0, np.full(N, 21.0), k.code, k.kpar, cache_size=1e-4, **kw)
    assert tiny.info["n_cache_rows"] == 2 and big.info["n_cache_rows"] == N
    assert big.info["n_blocks"] > 0 and tiny.info["kernel_rows"] > big.info["kernel_rows"]
    assert np.array_equal(big.dual, tiny.dual)
    assert np.array_equal(big.info["F"], tiny.info["F"])
    assert big.n_iter == tiny.n_iter


def test_blocks_need_fewer_refreshes_on_nearly_duplicated_points():
    """Pairs of nearly equal points (kernel value close to 1) make single-variable steps zigzag
    along the direction in which the pair's curvature is small; a block moves the pair along it
    directly. Both reach the greedy optimum; the blocks with clearly fewer row refreshes."""
    L, n = 3, 400
    X0, y0 = _data(n, L, seed=21)
    rng = np.random.default_rng(0)
    X = np.ascontiguousarray(np.vstack([X0, X0 + 0.02 * rng.normal(size=X0.shape)]))
    y = np.r_[y0, y0]
    N = 2 * n
    k = make_kernel("rbf", X, gamma=0.5)
    K = k(X)
    Cb = np.full(N, 50.0)
    kw = dict(tol=1e-5, eps=1e-9, cache_float32=False)
    blk = sl.solve_lambda_svm(X, y, L, 10.0, Cb, k.code, k.kpar, block_start=0, **kw)
    single = sl.solve_lambda_svm(X, y, L, 10.0, Cb, k.code, k.kpar, n_block=1, **kw)
    greedy = sl.solve_lambda_svm(X, y, L, 10.0, Cb, k.code, k.kpar, n_select=1, shrinking=False, **kw)
    W_ref = _dual(K, y, L, 10.0, greedy.dual)
    for r in (blk, single):
        assert r.converged
        assert _kkt(K, y, L, 10.0, r.dual, 50.0, 1e-9) < 1e-4
        assert _dual(K, y, L, 10.0, r.dual) == pytest.approx(W_ref, rel=1e-7)
    assert blk.n_iter < 0.8 * single.n_iter, (blk.n_iter, single.n_iter)


@pytest.mark.parametrize("block_class", [True, False])
def test_fused_refresh_is_bitwise_the_row_by_row_refresh(block_class):
    """The block's refresh adds up to four rows per pass over ``F_j`` in the order of one pass per
    row: the same multipliers, decision values and visits, bit for bit."""
    L, N = 4, 900
    X, y = _data(N, L, seed=13)
    k = make_kernel("rbf", X, gamma=0.6)
    kw = dict(tol=1e-6, block_start=0, block_class=block_class, cache_float32=False)
    fused = sl.solve_lambda_svm(X, y, L, 20.0, np.full(N, 21.0), k.code, k.kpar, **kw)
    rows = sl.solve_lambda_svm(X, y, L, 20.0, np.full(N, 21.0), k.code, k.kpar, block_fuse=False, **kw)
    assert fused.info["n_blocks"] > 0 and fused.info["block_points"] > 3 * fused.info["n_blocks"]
    assert np.array_equal(fused.dual, rows.dual)
    assert np.array_equal(fused.info["F"], rows.info["F"])
    assert fused.n_iter == rows.n_iter


@pytest.mark.parametrize("code", ["rbf", "compact", "poly", "linear"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_kernel_rows_are_bitwise_symmetric(code, dtype):
    """A block reads one triangle of its kernel from the cached rows and mirrors it: the rows
    (float64, and float32 rounded from them) must satisfy ``K(x_i, x_t) == K(x_t, x_i)`` bit for
    bit, which the norm expansion with the ``-2 x_k`` factor (exact) and the features summed in
    order gives."""
    from cohstats.solvers.svm.rows import gram_matrix

    X, _ = _data(200, 3, seed=8, p=7)
    k = make_kernel(code, X, gamma=0.3, degree=3, coef0=1.0)
    K = gram_matrix(k.code, X, k.kpar, dtype=dtype)
    assert np.array_equal(K, K.T)


@pytest.mark.parametrize("f32", [False, True])
def test_kept_block_kernel_is_bitwise_the_kernel_read_from_the_rows(f32):
    """Blocks whose partners are reused take their kernel from the copy kept with the partners
    (checked to happen): bitwise the same multipliers, decision values and visits as reading it from
    the cached rows at every block visit; both reach the exact greedy optimum (dual to 1e-9
    relative from the full kernel matrix, an independent KKT check)."""
    L, N = 4, 1200
    X, y = _data(N, L, seed=17)
    k = make_kernel("rbf", X, gamma=0.5)
    K = k(X)
    margin, C = 30.0, 31.0
    Cb = np.full(N, C)
    kw = dict(tol=1e-7, eps=1e-9, block_start=0, cache_float32=f32)
    kept = sl.solve_lambda_svm(X, y, L, margin, Cb, k.code, k.kpar, **kw)
    read = sl.solve_lambda_svm(X, y, L, margin, Cb, k.code, k.kpar, block_keep=False, **kw)
    assert kept.info["block_kept"] > 0.2 * kept.info["n_blocks"] > 0
    assert read.info["block_kept"] == 0 and read.info["n_blocks"] == kept.info["n_blocks"]
    assert np.array_equal(kept.dual, read.dual)
    assert np.array_equal(kept.info["F"], read.info["F"])
    assert kept.n_iter == read.n_iter and kept.info["n_steps"] == read.info["n_steps"]
    if not f32:
        greedy = sl.solve_lambda_svm(
            X, y, L, margin, Cb, k.code, k.kpar, n_select=1, shrinking=False, tol=1e-7, eps=1e-9, cache_float32=False
        )
        assert kept.converged and _kkt(K, y, L, margin, kept.dual, C, 1e-9) < 1e-6
        assert _dual(K, y, L, margin, kept.dual) == pytest.approx(_dual(K, y, L, margin, greedy.dual), rel=1e-9)
