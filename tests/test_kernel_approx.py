"""Low-rank kernel feature maps (Nystroem, random Fourier features) and the LUM fitted on them."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import cohstats as cs
from cohstats.kernel_approx import feature_map
from cohstats.kernels import make_kernel


def _data(n=80, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = np.where(X[:, 0] ** 2 + X[:, 1] ** 2 + 0.4 * rng.normal(size=n) > 1.3, "out", "in")
    return X, y


def test_nystroem_with_every_row_is_the_kernel():
    X, _ = _data(60)
    k = make_kernel("rbf", X, gamma=0.7)
    fm = feature_map("nystroem", k, X, n_components=60, random_state=3)
    Phi = fm(X)
    np.testing.assert_allclose(Phi @ Phi.T, k(X), atol=1e-8)
    # on new points too: the map reproduces k(x, X) through the landmarks
    Xn = np.random.default_rng(9).normal(size=(7, 2))
    np.testing.assert_allclose(fm(Xn) @ Phi.T, k(Xn, X), atol=1e-7)


def test_nystroem_error_shrinks_with_rank_and_rff_is_unbiased():
    X, _ = _data(300, seed=1)
    k = make_kernel("rbf", X, gamma=0.5)
    K = k(X)
    errs = []
    for r in (10, 40, 160):
        P = feature_map("nystroem", k, X, r, random_state=0)(X)
        errs.append(np.abs(P @ P.T - K).mean())
    assert errs[0] > errs[1] > errs[2] and errs[2] < 1e-3
    # random Fourier features: E Phi Phi' = K; averaging independent maps drives the error down
    acc = np.zeros_like(K)
    for seed in range(20):
        P = feature_map("rff", k, X, 200, random_state=seed)(X)
        acc += P @ P.T
    one = feature_map("rff", k, X, 200, random_state=0)(X)
    assert np.abs(acc / 20 - K).mean() < 0.5 * np.abs(one @ one.T - K).mean()
    with pytest.raises(ValueError, match="Gaussian"):
        feature_map("rff", make_kernel("poly", X, degree=2), X, 10)


def test_lum_on_a_full_nystroem_map_equals_the_exact_kernel_lum():
    X, y = _data(70, seed=4)
    kw = dict(a=1000.0, c=0.0, kernel="rbf", gamma=0.8, lambda_=[0.1, 0.01], tol=1e-12)
    exact = cs.lum(X, y, **kw)
    approx = cs.lum(X, y, kernel_approx="nystroem", n_components=70, **kw)
    for s in (0.1, 0.01):
        np.testing.assert_allclose(
            approx.predict(X, type="link", s=s).to_numpy(), exact.predict(X, type="link", s=s).to_numpy(), atol=1e-5
        )
    Xn = np.random.default_rng(2).normal(size=(10, 2))
    np.testing.assert_allclose(
        approx.predict(Xn, type="prob").to_numpy(), exact.predict(Xn, type="prob").to_numpy(), atol=1e-5
    )
    assert approx.coef is None and approx.dual_coef is None and approx.support_ is None
    assert "nystroem" in str(approx.summary())


def test_low_rank_lum_is_close_to_the_exact_fit_at_moderate_rank():
    X, y = _data(400, seed=5)
    Xt, yt = _data(2000, seed=6)
    kw = dict(a=1000.0, c=0.0, kernel="rbf", lambda_=0.001)
    exact = cs.lum(X, y, **kw)
    for kind in ("nystroem", "rff"):
        approx = cs.lum(X, y, kernel_approx=kind, n_components=150, random_state=0, **kw)
        pe = exact.predict(Xt, type="prob").to_numpy()[:, 1]
        pa = approx.predict(Xt, type="prob").to_numpy()[:, 1]
        assert np.mean(np.abs(pe - pa)) < 0.05
        err_e = np.mean(exact.predict(Xt).to_numpy() != yt)
        err_a = np.mean(approx.predict(Xt).to_numpy() != yt)
        assert err_a < err_e + 0.03


def test_kernel_approx_needs_a_kernel():
    X, y = _data(30)
    with pytest.raises(ValueError, match="kernel_approx"):
        cs.lum(X, y, kernel_approx="nystroem")
    with pytest.raises(ValueError, match="kernel_approx"):
        cs.lum(X, y, kernel="rbf", kernel_approx="random")
    assert isinstance(pd.DataFrame(X), pd.DataFrame)


def test_clearn_on_a_full_nystroem_map_equals_the_exact_kernel_fit():
    """Ridge penalty (alpha = 0): lambda/2 ||w||^2 on Phi with Phi Phi' = K is the kernel
    problem's lambda/2 beta'K beta, so the full-rank Nystroem fit equals the exact kernel fit."""
    X, y = _data(60, seed=7)
    kw = dict(kernel="rbf", gamma=0.8, alpha=0.0, lambda_=[0.05, 0.01], tol=1e-12, max_iter=100000)
    exact = cs.clearn(X, y, **kw)
    approx = cs.clearn(X, y, kernel_approx="nystroem", n_components=60, **kw)
    Xn = np.random.default_rng(3).normal(size=(9, 2))
    for s in (0.05, 0.01):
        np.testing.assert_allclose(
            approx.predict(Xn, type="link", s=s).to_numpy(), exact.predict(Xn, type="link", s=s).to_numpy(), atol=1e-5
        )
    assert approx.coef is None and approx.dual_coef is None
    assert "nystroem" in str(approx.summary())
    # three classes: a moderate rank tracks the exact multiclass kernel fit
    y3 = np.array(["a", "b", "c"])[(X[:, 0] > 0).astype(int) + (X[:, 1] > 0.5).astype(int)]
    kw3 = dict(kernel="rbf", gamma=0.8, lambda_=[0.05], alpha=0.0, tol=1e-11, max_iter=200000)
    e3 = cs.clearn(X, y3, **kw3)
    a3 = cs.clearn(X, y3, kernel_approx="nystroem", n_components=60, **kw3)
    np.testing.assert_allclose(
        a3.predict(Xn, type="prob").to_numpy(), e3.predict(Xn, type="prob").to_numpy(), atol=1e-4
    )
