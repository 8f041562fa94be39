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


# ------------------------------------------------------------------ multinomial logistic (margin 0)
def _multinomial_problem(n=240, p=4, K=3, seed=5):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    W = rng.standard_normal((p, K))
    eta = X @ W
    P = np.exp(eta - eta.max(1, keepdims=True))
    P /= P.sum(1, keepdims=True)
    y = np.array([rng.choice(K, p=row) for row in P])
    return X, y


def test_margin_zero_is_multinomial_logistic_regression_of_scikit_learn():
    """Ridge multinomial logistic: (1/n) sum -log softmax_y(g) + lam/2 ||B||^2 is scikit-learn's
    LogisticRegression with C = 1/(n lam) (its coefficients centred over the classes)."""
    from sklearn.linear_model import LogisticRegression

    X, y = _multinomial_problem()
    n = X.shape[0]
    for lam in (0.2, 0.01):
        b, B, info = cd_multi_path(X, y, None, 1.0, [lam], 0.0, standardize=False, margin=0.0, tol=1e-13)
        ref = LogisticRegression(C=1.0 / (n * lam), tol=1e-12, max_iter=100000).fit(X, y)
        Bs = ref.coef_.T - ref.coef_.T.mean(axis=1, keepdims=True)
        bs = ref.intercept_ - ref.intercept_.mean()
        np.testing.assert_allclose(B[0], Bs, atol=1e-6)
        np.testing.assert_allclose(b[0], bs, atol=1e-6)
        # the objective is the mean multinomial deviance: -log of scikit-learn's probabilities
        P = ref.predict_proba(X)
        dev = -np.mean(np.log(P[np.arange(n), y])) + 0.5 * lam * np.sum(Bs**2)
        assert info["objective"][0] == pytest.approx(dev, rel=1e-9, abs=1e-12)


def test_multinomial_group_lasso_reaches_the_scipy_optimum_and_descends_along_the_path():
    X, y = _multinomial_problem(n=150, p=5, seed=2)
    n, p = X.shape
    K = 3
    lams = multi_lambda_max(X, y, None, 1.0, 0.7, standardize=False, margin=0.0) * np.array([1.0, 0.5, 0.2, 0.05])
    b, B, info = cd_multi_path(X, y, None, 1.0, lams, 0.7, standardize=False, margin=0.0, tol=1e-12)
    assert np.all(B[0] == 0.0)  # lambda_max: exactly the null fit
    assert np.all(np.diff(info["objective"]) < 0)  # smaller penalties fit better
    lam = lams[2]

    def obj(t):
        Bm = t[: p * K].reshape(p, K)
        g = t[p * K :] + X @ Bm
        pen = lam * (0.3 / 2 * np.sum(Bm**2) + 0.7 * np.sum(np.sqrt(np.sum(Bm**2, axis=1) + 1e-300)))
        return np.mean(coherence_loss(g, y, 1.0, margin=0.0)) + pen

    t0 = np.concatenate([B[2].ravel(), b[2]])
    assert obj(t0) == pytest.approx(info["objective"][2], rel=1e-10)
    r = minimize(obj, np.zeros(p * K + K), method="Powell", options=dict(xtol=1e-10, ftol=1e-14, maxiter=200000))
    assert info["objective"][2] <= r.fun + 1e-9  # no point found by scipy does better
    assert info["kkt"].max() < 1e-5
