"""Memory of the width heuristics and of the low-rank SVM: O(n), never an n x n matrix.

numpy reports its buffers to ``tracemalloc``, so the traced peak bounds what these functions
allocate (the whole-process peaks of the large fits are measured in fresh processes by
``benchmarks/bench_memory.py``).
"""

from __future__ import annotations

import tracemalloc

import numpy as np
from scipy.spatial.distance import cdist, pdist

import cohstats as cs
import cohstats.kernels as ck
from cohstats.kernels import mean_all, median_between, resolve_gamma


def _peak_mb(fn, *args, **kw):
    tracemalloc.start()
    try:
        out = fn(*args, **kw)
        return out, tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def _two_classes(n, seed=0, p=3):
    rng = np.random.default_rng(seed)
    y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    X = rng.normal(size=(n, p)) + 0.7 * y[:, None]
    return X, y


def test_width_heuristics_are_exact_below_the_subsample_size():
    X, y = _two_classes(2 * ck.WIDTH_SUBSAMPLE, seed=1)  # each class exactly at the threshold
    assert median_between(X, y) == np.median(cdist(X[y > 0], X[y < 0]))
    Xs = X[: ck.WIDTH_SUBSAMPLE]
    assert np.isclose(mean_all(Xs), pdist(Xs).mean(), rtol=1e-12)
    assert resolve_gamma("median", X, y) == 1.0 / median_between(X, y) ** 2


def test_width_heuristics_memory_does_not_grow_with_n():
    """Above the subsample size the heuristics' peak memory is flat in n (all between-class pairs
    at n = 40 000 would take 3.2 GB), and the subsampled value is seeded and close to the exact one."""
    peaks = {}
    for n in (8_000, 40_000):
        X, y = _two_classes(n, seed=2)
        (med, pm) = _peak_mb(median_between, X, y)
        (mean, pa) = _peak_mb(mean_all, X)
        peaks[n] = (pm, pa)
        assert med == median_between(X, y) and mean == mean_all(X)  # seeded: reproducible
        # the subsample estimates the full-data value (exact at n = 8 000 from its pairs in blocks)
        if n == 8_000:
            full = np.median(cdist(X[y > 0][:4000], X[y < 0][:4000]))
            assert abs(med - full) < 0.02 * full
    for k in (0, 1):
        # per n: the input copies grow (n p doubles, 1 MB at n = 40 000); the pair buffers do not
        assert peaks[40_000][k] < peaks[8_000][k] + 8.0
        assert peaks[40_000][k] < 4 * 8 * ck.WIDTH_SUBSAMPLE**2 / 2**20 + 16.0


def test_kernel_approx_svm_memory_is_o_n_r():
    n, r = 20_000, 50
    X, y = _two_classes(n, seed=3)
    X[:, 0] = X[:, 0] ** 2
    cs.svm(X[:300], y[:300], kernel_approx="nystroem", n_components=20)  # compile outside
    fit, peak = _peak_mb(cs.svm, X, y, kernel_approx="nystroem", n_components=r)
    assert fit.converged
    nr_mb = 8 * n * r / 2**20  # one mapped copy: 7.6 MB; the kernel would be 3 GB
    assert peak < 3 * nr_mb + 10.0
