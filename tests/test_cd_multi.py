"""Multiclass coherence-loss path (cohstats/solvers/cd/multi.py): K = 2 reduction to the binary
fit (SPEC 5.3.1), scipy.optimize on the same objective, KKT and sum-to-zero."""

import numpy as np
import pytest
from scipy.optimize import minimize

from cohstats.losses.multiclass import coherence_grad, coherence_loss
from cohstats.losses.scalar import LOSS_C, LOSS_V, closs_kappa
from cohstats.solvers.cd.path import cd_path
from cohstats.solvers.cd.multi import binary_equivalent, cd_multi_path, multi_lambda_max


def _data(n=90, p=4, K=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p)) * rng.uniform(0.5, 2, p)
    W = rng.standard_normal((p, K))
    W[-1] = 0
    y = np.argmax(X @ W + rng.gumbel(size=(n, K)), axis=1)
    return X, y


@pytest.mark.parametrize("alpha", [0.0, 0.6, 1.0])
@pytest.mark.parametrize("loss", ["V", "C"])
def test_k2_equals_binary_fit(alpha, loss):
    X, y = _data(80, 4, 2, seed=1)
    T = 0.8
    sc = 1.0 if loss == "V" else closs_kappa(T, 1.0)
    lams = np.array([0.2, 0.03, 0.005])
    bm, Bm, im = cd_multi_path(X, y, None, T, lams, alpha, tol=1e-14, loss_scale=sc)
    yb = np.where(y == 1, 1.0, -1.0)
    code = LOSS_V if loss == "V" else LOSS_C
    eq = [binary_equivalent(l, alpha) for l in lams]
    ab = eq[0][1]
    bb, Bb, ib = cd_path(X, yb, None, code, T, 1.0, [e[0] for e in eq], ab, tol=1e-14)
    np.testing.assert_allclose(Bm[:, :, 1] - Bm[:, :, 0], Bb, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(bm[:, 1] - bm[:, 0], bb, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(im["objective"], ib["objective"], rtol=1e-9)


def test_multiclass_matches_scipy_and_sum_to_zero():
    X, y = _data(70, 3, 3, seed=2)
    n, p = X.shape
    K = 3
    T, lam, alpha = 1.0, 0.02, 0.0
    b, B, info = cd_multi_path(X, y, None, T, [lam], alpha, standardize=False, tol=1e-14)
    np.testing.assert_allclose(B[0].sum(axis=1), 0, atol=1e-12)
    np.testing.assert_allclose(b[0].sum(), 0, atol=1e-12)

    def fun(v):
        bb = v[:K]
        BB = v[K:].reshape(p, K)
        G = bb + X @ BB
        val = coherence_loss(G, y, T).mean() + lam / 2 * np.sum(BB**2)
        gr = coherence_grad(G, y, T) / n
        return val, np.concatenate([gr.sum(0), (X.T @ gr + lam * BB).ravel()])

    res = minimize(
        fun, np.zeros(K + p * K), jac=True, method="L-BFGS-B", options=dict(ftol=1e-16, gtol=1e-12, maxiter=10000)
    )
    BB = res.x[K:].reshape(p, K)
    BB = BB - BB.mean(1, keepdims=True)
    np.testing.assert_allclose(B[0], BB, atol=1e-5 * np.abs(BB).max())
    assert info["objective"][0] <= res.fun + 1e-10


def test_group_lasso_kkt_and_lambda_max():
    X, y = _data(100, 6, 4, seed=3)
    lm = multi_lambda_max(X, y, None, 1.0, 1.0)
    lams = lm * np.array([1.0001, 0.5, 0.1, 0.02])
    b, B, info = cd_multi_path(X, y, None, 1.0, lams, 1.0, tol=1e-13)
    assert np.all(B[0] == 0)
    assert info["df"][1] >= 1 and info["df"][1] < 6
    assert np.all(info["kkt"] < 1e-6)
    np.testing.assert_allclose(B.sum(axis=2), 0, atol=1e-12)
    # predictors enter as groups: zero for all classes or for none
    nz = B != 0
    assert np.all(nz.all(axis=2) == nz.any(axis=2))
