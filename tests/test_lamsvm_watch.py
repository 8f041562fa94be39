"""λ-SVM SMO with watched points: lists drawn from the points that violated most at the last full
pass reach the optimum of the exact maximal-violation SMO, and the dual never decreases."""

import os
import sys

import numpy as np
import pytest

from cohstats.kernels import make_kernel
from cohstats.solvers.svm.smo_lambda import solve_lambda_svm

sys.path.insert(0, os.path.dirname(__file__))
from _lamsvm_reference import _centred_b, _data, _dual  # noqa: E402


@pytest.mark.parametrize("margin,C", [(6.0, 5.0), (30.0, 10.0)])
def test_watched_lists_reach_the_exact_greedy_optimum(margin, C):
    L, N = 4, 1500
    X, y = _data(N, L, seed=5)
    k = make_kernel("rbf", X, gamma=0.4)
    K = k(X)
    Cb = np.full(N, C)
    kw = dict(tol=1e-6, eps=1e-9)
    greedy = solve_lambda_svm(X, y, L, margin, Cb, k.code, k.kpar, n_select=1, **kw)
    watch = solve_lambda_svm(X, y, L, margin, Cb, k.code, k.kpar, **kw)
    full = solve_lambda_svm(X, y, L, margin, Cb, k.code, k.kpar, rho_watch=0.0, **kw)
    assert greedy.converged and watch.converged and full.converged
    assert watch.info["n_watch"] > 10  # the watched passes really ran
    assert full.info["n_watch"] == 0
    for r in (watch, full):
        assert r.info["max_violation"] < 1e-6
        F = K @ _centred_b(y, L, r.dual)
        assert np.allclose(r.info["F"], F, atol=1e-8 * max(1.0, np.abs(F).max()))
        assert r.info["dual"] == pytest.approx(greedy.info["dual"], rel=1e-9)
        assert _dual(K, y, L, margin, r.dual) == pytest.approx(greedy.info["dual"], rel=1e-9)
        assert np.allclose(r.info["F"], greedy.info["F"], atol=1e-3)
        # the same classification of the training points as the exact greedy solution
        assert np.array_equal(r.info["F"].argmax(axis=1), greedy.info["F"].argmax(axis=1))


def test_dual_never_decreases_with_watched_lists():
    """Runs stopped after 1, 2, 4, ... visits are prefixes of one deterministic run (watched
    passes included); the dual, recomputed with the full kernel matrix, never decreases."""
    L, N = 4, 900
    X, y = _data(N, L, seed=8)
    k = make_kernel("rbf", X, gamma=0.5)
    K = k(X)
    margin = 30.0
    Cb = np.full(N, 31.0)
    kw = dict(tol=1e-6, cache_float32=False)
    full = solve_lambda_svm(X, y, L, margin, Cb, k.code, k.kpar, **kw)
    assert full.converged and full.info["n_watch"] > 0
    budgets = np.unique(np.r_[np.geomspace(1, full.n_iter, 25).astype(int), full.n_iter - 1])
    duals = []
    for b in budgets:
        r = solve_lambda_svm(X, y, L, margin, Cb, k.code, k.kpar, max_iter=int(b), **kw)
        assert r.n_iter == b
        duals.append(_dual(K, y, L, margin, r.dual))
    W_full = _dual(K, y, L, margin, full.dual)
    d = np.diff(np.r_[0.0, duals, W_full])
    assert np.all(d >= -1e-9 * abs(W_full)), d.min()
    assert W_full == pytest.approx(full.info["dual"], rel=1e-10)
