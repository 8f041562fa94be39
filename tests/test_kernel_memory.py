"""Kernel C-learning holds one n x n array: the kernel is symmetrised and centred in place
(cohstats/solvers/cd/kernel.py, ``prepare_kernel``), the penalty matrix is that centred design
plus a row shift, and a caller's kernel matrix is copied once, never modified.

numpy reports its buffers to ``tracemalloc``, so the traced peak bounds what a fit allocates
(the whole-process peak at n = 8 000 is measured by ``benchmarks/bench_memory.py``).
"""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

import cohstats as cs
from cohstats.losses.scalar import LOSS_C, LOSS_LOGIT
from cohstats.solvers.cd.kernel import (
    PreparedKernel,
    cd_kernel_multi_path,
    cd_kernel_path,
    kernel_gamma_max,
    kernel_multi_gamma_max,
    prepare_kernel,
)


def _rbf(X, gamma=0.5):
    d2 = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    return np.exp(-gamma * d2)


def _data(n, seed=0, p=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    y = np.where(X[:, 0] * X[:, 1] + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    yc = np.digitize(X[:, 0] + 0.3 * rng.normal(size=n), [-0.5, 0.5])
    return X, y, yc


def test_prepare_kernel_matches_numpy_reference():
    X, _, _ = _data(60, seed=1)
    rng = np.random.default_rng(2)
    K = _rbf(X)
    K = K + 1e-13 * rng.normal(size=K.shape)  # asymmetric within the tolerance
    w = rng.uniform(0.2, 3.0, size=60)
    Ks = 0.5 * (K + K.T)
    wn = w * (60 / w.sum())
    m = (wn @ Ks) / 60
    Xt = Ks - m[:, None]
    K0 = K.copy()
    pk = prepare_kernel(K, w)
    assert np.array_equal(K, K0)  # overwrite_K=False: the caller's matrix is untouched
    assert np.allclose(pk.m, m, rtol=1e-14, atol=1e-15)
    assert np.allclose(pk.Xt, Xt, rtol=1e-13, atol=1e-15)
    assert np.allclose(pk.xv, (Xt**2 * wn).sum(1) / 60, rtol=1e-12)
    v = rng.normal(size=60)
    assert np.allclose(pk.matvec(v), Ks @ v, rtol=1e-12, atol=1e-12)
    # without an intercept nothing is centred
    pk0 = prepare_kernel(K, w, intercept=False)
    assert np.array_equal(pk0.m, np.zeros(60)) and np.array_equal(pk0.Xt, Ks)


def test_overwrite_K_reuses_the_callers_memory_and_gives_the_same_fit():
    X, y, _ = _data(50, seed=3)
    K = _rbf(X)
    gam = [0.05, 0.01]
    b1, B1, _ = cd_kernel_path(K.copy(), y, None, LOSS_C, 1.0, 1.0, gam, 0.5)
    Kw = K.copy()
    pk = prepare_kernel(Kw, overwrite_K=True)
    assert np.shares_memory(pk.Xt, Kw)  # centred in place: no second n x n array
    b2, B2, _ = cd_kernel_path(pk, y, None, LOSS_C, 1.0, 1.0, gam, 0.5)
    assert np.array_equal(b1, b2) and np.array_equal(B1, B2)
    # a view into a larger array is never overwritten, even when allowed
    big = np.zeros((51, 50))
    big[:50] = K
    pkv = prepare_kernel(big[:50], overwrite_K=True)
    assert not np.shares_memory(pkv.Xt, big) and np.array_equal(big[:50], K)


def test_callers_kernel_is_unchanged_by_the_public_solvers():
    X, y, yc = _data(45, seed=4)
    K = _rbf(X)
    K[0, 1] += 1e-14  # slightly asymmetric: symmetrised internally, not in the caller's array
    K0 = K.copy()
    gmax = kernel_gamma_max(K, y, None, LOSS_LOGIT, 0.0, 0.0, 1.0)
    cd_kernel_path(K, y, None, LOSS_LOGIT, 0.0, 0.0, [gmax * 0.5, gmax * 0.05], 1.0)
    cd_kernel_path(K, y, None, LOSS_LOGIT, 0.0, 0.0, [gmax * 0.05], 0.0)  # the Newton ridge route
    gm = kernel_multi_gamma_max(K, yc, None, 1.0, 0.5)
    cd_kernel_multi_path(K, yc, None, 1.0, [gm * 0.5, gm * 0.1], 0.5)
    assert np.array_equal(K, K0)


def test_prepared_kernel_equals_fresh_preparation():
    """gamma_max and the path from one PreparedKernel equal those from the raw matrix."""
    X, y, yc = _data(40, seed=5)
    K = _rbf(X)
    w = np.random.default_rng(6).uniform(0.5, 2.0, 40)
    pk = prepare_kernel(K, w)
    assert isinstance(pk, PreparedKernel)
    g1 = kernel_gamma_max(K, y, w, LOSS_C, 1.0, 1.0, 0.5)
    assert kernel_gamma_max(pk, y, None, LOSS_C, 1.0, 1.0, 0.5) == g1
    gm = kernel_multi_gamma_max(K, yc, w, 1.0, 0.5)
    assert kernel_multi_gamma_max(pk, yc, None, 1.0, 0.5) == gm
    r1 = cd_kernel_multi_path(K, yc, w, 1.0, [gm * 0.3], 0.5)
    r2 = cd_kernel_multi_path(pk, yc, None, 1.0, [gm * 0.3], 0.5)
    assert np.array_equal(r1[1], r2[1])
    with pytest.raises(ValueError, match="w must be None"):
        cd_kernel_path(pk, y, w, LOSS_C, 1.0, 1.0, [g1], 0.5)
    with pytest.raises(ValueError, match="intercept"):
        cd_kernel_path(pk, y, None, LOSS_C, 1.0, 1.0, [g1], 0.5, intercept=False)


def test_asymmetric_or_nonfinite_kernel_is_refused_and_left_unchanged():
    X, y, _ = _data(30, seed=7)
    K = _rbf(X)
    K[3, 17] += 1e-3
    K0 = K.copy()
    with pytest.raises(ValueError, match=r"symmetric.*K\[3, 17\]"):
        cd_kernel_path(K, y, None, LOSS_C, 1.0, 1.0, [0.1], 0.5)
    assert np.array_equal(K, K0)
    K = _rbf(X)
    K[5, 5] = np.nan
    with pytest.raises(ValueError, match="NaN or infinite"):
        prepare_kernel(K)
    # an asymmetric callable's output is averaged (clearn's kernel=callable contract)
    K = _rbf(X)
    K[3, 17] += 1e-3
    pk = prepare_kernel(K, check_symmetric=False, intercept=False)
    assert pk.Xt[3, 17] == pk.Xt[17, 3] == 0.5 * (K[3, 17] + K[17, 3])


@pytest.mark.parametrize("multiclass", [False, True])
def test_kernel_clearn_peak_is_one_kernel_matrix(multiclass):
    """A kernel clearn fit at n = 1500 peaks at the n x n kernel plus at most 0.3 of another
    (before the in-place preparation it held three n x n copies: 3.1 kernels at peak)."""
    n = 1500
    X, y, yc = _data(n, seed=8, p=4)
    yy = yc if multiclass else y
    cs.clearn(X[:100], yy[:100], kernel="rbf", nlambda=3)  # compile outside the traced window
    tracemalloc.start()
    try:
        fit = cs.clearn(X, yy, kernel="rbf", nlambda=6)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak <= 1.3 * 8 * n * n, f"peak {peak / (8 * n * n):.2f} kernel matrices"
    # and the fit is the one of the kernel solver on the same (independently built) matrix
    Z = (X - X.mean(0)) / X.std(0)
    K = fit._kernel(Z, Z)
    assert np.allclose(K, K.T)
    if not multiclass:
        lo = fit._lossobj
        b, B, _ = cd_kernel_path(K, y, None, lo.code, lo.p1, lo.p2, fit.lambda_, fit.alpha)
        assert np.allclose(fit._beta_path, B, atol=1e-8) and np.allclose(fit._intercept_path, b, atol=1e-8)
