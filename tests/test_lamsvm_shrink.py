"""λ-SVM SMO with shrinking actually triggered: the same optimum as the unshrunk and the exact
greedy solver (and as the former shrinking rule), an independent KKT certificate from the full
kernel matrix, a dual that never decreases, and a row cache whose rows are the kernel rows in the
solver's position order after points were shrunk and made active again."""

import os
import sys

import numpy as np
import pytest

import cohstats.solvers.svm.smo_lambda as sl
from cohstats.kernels import make_kernel
from cohstats.solvers.svm.rows import gram_matrix

sys.path.insert(0, os.path.dirname(__file__))
from _lamsvm_reference import _centred_b, _data, _dual  # noqa: E402


def _kkt(K, y, L, margin, a, C, eps):
    """Largest KKT violation of ``a`` computed from scratch: ``g = dW/dalpha = l - y F`` with
    ``F = K btilde``; at the lower bound only ``g > 0`` violates, at ``C`` only ``g < 0``."""
    F = K @ _centred_b(y, L, a)
    true = y[:, None] == np.arange(L)
    g = np.where(true, margin - F, 1.0 + F)
    lo = a <= eps
    hi = a >= C - eps
    v = np.where(lo, np.maximum(g, 0.0), np.where(hi, np.maximum(-g, 0.0), np.abs(g)))
    return float(v.max())


@pytest.mark.parametrize("margin,C,gamma", [(6.0, 5.0, 0.4), (30.0, 31.0, 0.5)])
def test_shrinking_reaches_the_unshrunk_and_greedy_optimum(margin, C, gamma):
    L, N = 4, 1500
    X, y = _data(N, L, seed=11)
    k = make_kernel("rbf", X, gamma=gamma)
    K = k(X)
    Cb = np.full(N, C)
    kw = dict(tol=1e-7, eps=1e-9, cache_float32=False)
    new = sl.solve_lambda_svm(X, y, L, margin, Cb, k.code, k.kpar, **kw)
    # the shrinking rule before this change: slack above the whole maximal violation, an event only
    # when one active point in 16 qualifies, checks every 2 N visits
    old = sl.solve_lambda_svm(
        X, y, L, margin, Cb, k.code, k.kpar, shrink_rho=1.0, shrink_min=16, shrink_every=2 * N, **kw
    )
    off = sl.solve_lambda_svm(X, y, L, margin, Cb, k.code, k.kpar, shrinking=False, **kw)
    greedy = sl.solve_lambda_svm(X, y, L, margin, Cb, k.code, k.kpar, n_select=1, shrinking=False, **kw)
    for r in (new, old, off, greedy):
        assert r.converged and r.info["max_violation"] < 1e-7
    assert new.info["n_shrink"] >= 2 and new.info["n_rebuild"] >= 1  # shrinking really ran
    assert off.info["n_shrink"] == 0
    W_ref = _dual(K, y, L, margin, greedy.dual)
    for r in (new, old, off):
        assert _kkt(K, y, L, margin, r.dual, C, 1e-9) < 1e-6
        F = K @ _centred_b(y, L, r.dual)
        assert np.allclose(r.info["F"], F, atol=1e-8 * max(1.0, np.abs(F).max()))
        assert _dual(K, y, L, margin, r.dual) == pytest.approx(W_ref, rel=1e-9)
        assert r.info["dual"] == pytest.approx(W_ref, rel=1e-9)
        assert np.array_equal(r.info["F"].argmax(axis=1), greedy.info["F"].argmax(axis=1))


def test_dual_never_decreases_across_shrink_events_and_rebuilds():
    """Runs stopped after 1, 2, 4, ... visits are prefixes of one deterministic run; with shrink
    events (and rebuilds) inside it, the dual, recomputed with the full kernel matrix, never
    decreases."""
    L, N = 4, 1200
    X, y = _data(N, L, seed=3)
    k = make_kernel("rbf", X, gamma=0.5)
    K = k(X)
    margin = 30.0
    Cb = np.full(N, 31.0)
    kw = dict(tol=1e-6, cache_float32=False)
    full = sl.solve_lambda_svm(X, y, L, margin, Cb, k.code, k.kpar, **kw)
    assert full.converged and full.info["n_shrink"] >= 2 and full.info["n_rebuild"] >= 1
    budgets = np.unique(np.r_[np.geomspace(1, full.n_iter, 30).astype(int), full.n_iter - 1])
    duals = []
    events = []
    for b in budgets:
        r = sl.solve_lambda_svm(X, y, L, margin, Cb, k.code, k.kpar, max_iter=int(b), **kw)
        assert r.n_iter == b
        duals.append(_dual(K, y, L, margin, r.dual))
        events.append(r.info["n_shrink"])
    assert max(events) >= 2  # prefixes past the shrink events are among the checked ones
    W_full = _dual(K, y, L, margin, full.dual)
    d = np.diff(np.r_[0.0, duals, W_full])
    assert np.all(d >= -1e-9 * abs(W_full)), d.min()
    assert W_full == pytest.approx(full.info["dual"], rel=1e-10)


@pytest.mark.parametrize("f32", [False, True])
def test_row_cache_holds_kernel_rows_in_position_order_after_unshrinking(monkeypatch, f32):
    """A cache far smaller than the problem (rows evicted and recomputed after shrink events, when
    the positions are no longer the original order): every cached row equals the kernel row of its
    point, permuted to the solver's final position order, entry by entry."""
    L, N = 4, 1500
    X, y = _data(N, L, seed=7)
    k = make_kernel("rbf", X, gamma=0.4)
    seen = []
    provider = sl.rows_provider

    def spy(*a, **kw):
        kr = provider(*a, **kw)
        seen.append(kr)
        return kr

    monkeypatch.setattr(sl, "rows_provider", spy)
    n_bytes = 4 if f32 else 8
    cache_mb = 300 * N * n_bytes / 2.0**20  # 300 rows
    r = sl.solve_lambda_svm(
        X, y, L, 30.0, np.full(N, 31.0), k.code, k.kpar, tol=1e-6, cache_size=cache_mb, cache_float32=f32
    )
    assert r.converged and r.info["n_shrink"] >= 2 and r.info["n_rebuild"] >= 1
    kr = seen[-1]
    assert kr.rows.shape[0] == 300 and r.info["kernel_rows"] > 300  # rows were evicted
    perm = kr.perm
    assert not np.array_equal(perm, np.arange(N))  # the positions were permuted
    assert np.array_equal(np.sort(perm), np.arange(N))
    G = gram_matrix(k.code, X, k.kpar, dtype=np.float32 if f32 else np.float64)
    cached = np.flatnonzero(kr.row_of >= 0)
    assert cached.size == 300
    for s in cached:
        i = kr.row_of[s]
        assert kr.slot_of[i] == s
        np.testing.assert_array_equal(kr.rows[s], G[i, perm])
    # and the rows agree with the kernel matrix itself (to float32 rounding for a float32 cache)
    K = k(X)
    s = cached[0]
    assert np.allclose(kr.rows[s], K[kr.row_of[s], perm], rtol=0, atol=1e-7 if f32 else 1e-13)
