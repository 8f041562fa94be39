"""Kernel matrices: values against the defining formulas, built in one n x m array."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from cohstats.kernels import make_kernel

RNG = np.random.default_rng(0)
X = RNG.normal(size=(1500, 4))
D2 = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)


@pytest.mark.parametrize(
    "name,kw,ref,limit",
    [
        ("rbf", dict(gamma=0.3), lambda: np.exp(-0.3 * D2), 1.05),
        ("poly", dict(gamma=0.5, degree=3, coef0=1.0), lambda: (0.5 * X @ X.T + 1.0) ** 3, 1.05),
        ("linear", {}, lambda: X @ X.T, 1.05),
        (
            "compact",
            dict(gamma=0.2, D=3.0, nu=3.0),
            lambda: np.exp(-0.2 * D2) * np.maximum(1 - np.sqrt(D2) / 3.0, 0) ** 3,
            2.05,
        ),
    ],
)
def test_kernel_values_and_peak_memory(name, kw, ref, limit):
    k = make_kernel(name, X, **kw)
    tracemalloc.start()
    K = k(X)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    np.testing.assert_allclose(K, ref(), rtol=1e-12, atol=1e-12)
    assert peak <= limit * 8 * X.shape[0] ** 2, f"peak {peak / 8 / X.shape[0] ** 2:.2f} n^2 doubles"
    # rows against other points: identical points give distances of rounding size (not exactly
    # zero as on the diagonal of k(X)), which the compact kernel's square root magnifies
    np.testing.assert_allclose(k(X[:7], X), K[:7], rtol=1e-10, atol=1e-7)
