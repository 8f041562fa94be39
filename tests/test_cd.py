"""Tests of the pathwise coordinate-descent engine (cohstats/solvers/cd/path.py) against independent
references: scikit-learn, scipy.optimize on the same objective, closed-form KKT conditions."""

import math

import numpy as np
import pytest
from scipy.optimize import minimize

from cohstats._numba_cache import njit
from cohstats.losses.scalar import (
    LOSS_C,
    LOSS_HHINGE,
    LOSS_LOGIT,
    LOSS_LUM,
    LOSS_SQHINGE,
    LOSS_V,
    closs_kappa,
    loss_d1,
    loss_value,
)
from cohstats.solvers.cd.path import cd_path, lambda_max, lambda_sequence, standardize_design

TIGHT = 1e-13


def _data(n=80, p=5, seed=0, noise=1.0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p)) * rng.uniform(0.5, 3.0, p) + rng.uniform(-1, 1, p)
    beta = np.zeros(p)
    beta[: min(3, p)] = [1.5, -1.0, 0.5][: min(3, p)]
    lin = (X - X.mean(0)) @ beta
    y = np.where(lin + noise * rng.standard_normal(n) > 0, 1.0, -1.0)
    return X, y


def _vec_loss(code, z, p1, p2):
    return np.array([loss_value(code, zi, p1, p2) for zi in z])


@njit(cache=False)
def _d1(code, z, p1, p2):  # loss_d1 has no Python entry point
    return loss_d1(code, z, p1, p2)


def _vec_d1(code, z, p1, p2):
    return np.array([_d1(code, zi, p1, p2) for zi in z])


def _scipy_enet(X, y, w, code, p1, p2, lam, alpha, pf=None):
    """Minimise (1/n) sum w phi(y(b + X beta)) + lam sum pf((1-a)/2 b^2 + a|b|) by L-BFGS-B
    on the split beta = bp - bm (bp, bm >= 0)."""
    n, p = X.shape
    w = np.ones(n) if w is None else w * n / w.sum()
    pf = np.ones(p) if pf is None else pf

    def fun(v):
        b, bp, bm = v[0], v[1 : p + 1], v[p + 1 :]
        beta = bp - bm
        z = y * (b + X @ beta)
        val = np.sum(w * _vec_loss(code, z, p1, p2)) / n
        val += lam * np.sum(pf * ((1 - alpha) / 2 * beta**2 + alpha * (bp + bm)))
        d = w * y * _vec_d1(code, z, p1, p2) / n
        gb = d.sum()
        gbeta = X.T @ d + lam * pf * (1 - alpha) * beta
        g = np.concatenate([[gb], gbeta + lam * pf * alpha, -gbeta + lam * pf * alpha])
        return val, g

    v0 = np.zeros(2 * p + 1)
    bounds = [(None, None)] + [(0, None)] * (2 * p)
    res = minimize(
        fun,
        v0,
        jac=True,
        method="L-BFGS-B",
        bounds=bounds,
        options=dict(maxiter=20000, ftol=1e-16, gtol=1e-13, maxcor=30),
    )
    v = res.x
    return v[0], v[1 : p + 1] - v[p + 1 :], res.fun


def _objective(X, y, w, code, p1, p2, lam, alpha, b, beta):
    n = X.shape[0]
    w = np.ones(n) if w is None else w * n / w.sum()
    z = y * (b + X @ beta)
    return np.sum(w * _vec_loss(code, z, p1, p2)) / n + lam * np.sum((1 - alpha) / 2 * beta**2 + alpha * np.abs(beta))


def test_ridge_logistic_matches_sklearn():
    from sklearn.linear_model import LogisticRegression

    X, y = _data(120, 6, seed=1)
    n = X.shape[0]
    lams = np.array([0.5, 0.05, 0.005])
    # loss V with rho = 1, u = 0 is the logistic loss
    b0, B, info = cd_path(X, y, None, LOSS_V, 1.0, 0.0, lams, 0.0, standardize=False, tol=TIGHT)
    for k, lam in enumerate(lams):
        clf = LogisticRegression(C=1.0 / (n * lam), tol=1e-12, max_iter=10000, solver="lbfgs")
        clf.fit(X, y)
        ref = np.concatenate([clf.intercept_, clf.coef_.ravel()])
        ours = np.concatenate([[b0[k]], B[k]])
        np.testing.assert_allclose(ours, ref, rtol=1e-5, atol=1e-6 * np.abs(ref).max())
    assert info["converged"].all()


@pytest.mark.parametrize("alpha", [0.5, 1.0])
def test_enet_logistic_matches_scipy_with_weights_and_standardization(alpha):
    X, y = _data(90, 5, seed=2)
    rng = np.random.default_rng(3)
    w = rng.uniform(0.2, 2.0, X.shape[0])
    pf = np.array([1.0, 0.5, 2.0, 1.0, 0.0])
    lm = lambda_max(X, y, w, LOSS_LOGIT, 0.0, 0.0, alpha, penalty_factor=pf)
    lams = lm * np.array([0.5, 0.1, 0.02])
    b0, B, info = cd_path(X, y, w, LOSS_LOGIT, 0.0, 0.0, lams, alpha, tol=TIGHT, penalty_factor=pf)
    # independent reference: standardise by hand, minimise with scipy, map back
    ws = w * len(w) / w.sum()
    mu = ws @ X / len(w)
    sd = np.sqrt(ws @ (X - mu) ** 2 / len(w))
    Z = (X - mu) / sd
    for k, lam in enumerate(lams):
        b, beta_s, _ = _scipy_enet(Z, y, w, LOSS_LOGIT, 0.0, 0.0, lam, alpha, pf)
        beta = beta_s / sd
        b = b - beta @ mu
        scale = max(np.abs(beta).max(), abs(b))
        np.testing.assert_allclose(B[k], beta, rtol=0, atol=1e-5 * scale)
        assert abs(b0[k] - b) <= 1e-5 * scale


def test_closs_enet_matches_scipy_and_kkt_holds_along_path():
    X, y = _data(70, 6, seed=4)
    rho, u, alpha = 0.7, 1.0, 0.6
    lm = lambda_max(X, y, None, LOSS_C, rho, u, alpha, standardize=False)
    lams = lambda_sequence(lm, 15, 1e-2)
    b0, B, info = cd_path(X, y, None, LOSS_C, rho, u, lams, alpha, standardize=False, tol=TIGHT)
    n = X.shape[0]
    for k, lam in enumerate(lams):
        # KKT (SPEC 3.5) recomputed here from the returned coefficients
        f = b0[k] + X @ B[k]
        psi = y * _vec_d1(LOSS_C, y * f, rho, u)  # d phi(y f) / df
        assert abs(psi.sum() / n) < 1e-7
        g = X.T @ psi / n + lam * (1 - alpha) * B[k]
        nz = B[k] != 0
        np.testing.assert_allclose(g[nz] + lam * alpha * np.sign(B[k][nz]), 0, atol=1e-6)
        assert np.all(np.abs(g[~nz]) <= lam * alpha + 1e-8)
        assert info["kkt"][k] < 1e-6
    for k in (4, 14):
        b, beta, fun = _scipy_enet(X, y, None, LOSS_C, rho, u, lams[k], alpha)
        scale = max(np.abs(beta).max(), abs(b))
        np.testing.assert_allclose(B[k], beta, atol=1e-5 * scale)
        ours = _objective(X, y, None, LOSS_C, rho, u, lams[k], alpha, b0[k], B[k])
        assert ours <= fun + 1e-10
        np.testing.assert_allclose(info["objective"][k], ours, rtol=1e-12)


def test_c_v_reparametrisation_identity():
    X, y = _data(60, 4, seed=5)
    rho, u, alpha = 0.5, 2.0, 0.3
    kappa = closs_kappa(rho, u)
    lams = np.array([0.2, 0.05, 0.01])
    bC, BC, _ = cd_path(X, y, None, LOSS_C, rho, u, lams, alpha, tol=TIGHT)
    bV, BV, _ = cd_path(X, y, None, LOSS_V, rho, u, lams / kappa, alpha, tol=TIGHT)
    np.testing.assert_allclose(BC, BV, atol=1e-7)
    np.testing.assert_allclose(bC, bV, atol=1e-7)


@pytest.mark.parametrize("code,p1,p2", [(LOSS_C, 1.0, 1.0), (LOSS_SQHINGE, 0.0, 0.0)])
def test_irls_mm_exact_agree(code, p1, p2):
    X, y = _data(60, 5, seed=6)
    lm = lambda_max(X, y, None, code, p1, p2, 0.5)
    lams = lm * np.array([0.3, 0.05])
    res = [cd_path(X, y, None, code, p1, p2, lams, 0.5, tol=TIGHT, mode=m) for m in ("irls", "mm", "exact")]
    for b0, B, info in res[1:]:
        np.testing.assert_allclose(B, res[0][1], atol=1e-6)
        np.testing.assert_allclose(b0, res[0][0], atol=1e-6)
        np.testing.assert_allclose(info["objective"], res[0][2]["objective"], rtol=1e-10)


def test_hhinge_mm_matches_scipy():
    X, y = _data(60, 4, seed=7, noise=2.0)
    lam, alpha = 0.02, 0.5
    b0, B, info = cd_path(X, y, None, LOSS_HHINGE, 2.0, 0.0, [lam], alpha, standardize=False, tol=TIGHT)
    assert info["mode"] == 1
    b, beta, fun = _scipy_enet(X, y, None, LOSS_HHINGE, 2.0, 0.0, lam, alpha)
    np.testing.assert_allclose(B[0], beta, atol=1e-5 * np.abs(beta).max())
    assert info["objective"][0] <= fun + 1e-10


def test_lambda_max_gives_exact_zero():
    X, y = _data(50, 6, seed=8)
    for code, p1, p2 in [(LOSS_C, 1.0, 1.0), (LOSS_LOGIT, 0, 0), (LOSS_HHINGE, 2.0, 0.0), (LOSS_LUM, 1.0, 1.0)]:
        lm = lambda_max(X, y, None, code, p1, p2, 0.8)
        b0, B, info = cd_path(X, y, None, code, p1, p2, [lm * 1.0001, lm * (1 + 1e-10), lm * 0.98], 0.8, tol=TIGHT)
        assert np.all(B[0] == 0.0) and np.all(B[1] == 0.0)
        assert np.count_nonzero(B[2]) >= 1
        # the null intercept solves sum_i y_i phi'(y_i b) = 0
        d = y * _vec_d1(code, y * b0[0], p1, p2)
        assert abs(d.mean()) < 1e-8


def test_lum_infinite_c_reaches_the_svm_objective():
    from sklearn.svm import SVC

    X, y = _data(60, 3, seed=3, noise=1.5)
    n, lam = X.shape[0], 0.05
    svc = SVC(kernel="linear", C=1.0 / (n * lam), tol=1e-10).fit(X, y)

    def hinge_obj(b, beta):
        return np.mean(np.maximum(1 - y * (b + X @ beta), 0)) + lam / 2 * beta @ beta

    ref = hinge_obj(svc.intercept_[0], svc.coef_.ravel())
    b0, B, info = cd_path(
        X, y, None, LOSS_LUM, 1.0, math.inf, [lam], 0.0, standardize=False, tol=1e-12, max_iter=100000
    )
    # c = inf is the hinge itself; the continuation in c keeps coordinate descent from stalling
    assert hinge_obj(b0[0], B[0]) <= ref * (1 + 1e-5)
    assert hinge_obj(b0[0], B[0]) >= ref * (1 - 1e-9)


def test_lum_large_c_matches_linear_svm():
    from sklearn.svm import SVC

    X, y = _data(60, 3, seed=9, noise=1.5)
    n = X.shape[0]
    lam = 0.05
    b0, B, info = cd_path(X, y, None, LOSS_LUM, 1.0, 1e4, [lam], 0.0, standardize=False, tol=1e-14, max_iter=100000)
    svc = SVC(kernel="linear", C=1.0 / (n * lam), tol=1e-10).fit(X, y)
    f_ours = b0[0] + X @ B[0]
    f_svm = svc.decision_function(X)
    assert np.max(np.abs(f_ours - f_svm)) <= 1e-2 * np.max(np.abs(f_svm))

    def hinge_obj(b, beta):
        return np.mean(np.maximum(1 - y * (b + X @ beta), 0)) + lam / 2 * beta @ beta

    w_svm = svc.coef_.ravel()
    assert abs(hinge_obj(b0[0], B[0]) - hinge_obj(svc.intercept_[0], w_svm)) <= 1e-3 * hinge_obj(
        svc.intercept_[0], w_svm
    )


def test_integer_weights_equal_replicated_rows():
    X, y = _data(40, 4, seed=10)
    rng = np.random.default_rng(11)
    k = rng.integers(0, 4, X.shape[0]).astype(float)
    k[0] = 1
    Xr = np.repeat(X, k.astype(int), axis=0)
    yr = np.repeat(y, k.astype(int))
    lm = lambda_max(Xr, yr, None, LOSS_C, 1.0, 1.0, 0.5)
    lams = lm * np.array([0.5, 0.1, 0.01])
    a = cd_path(X, y, k, LOSS_C, 1.0, 1.0, lams, 0.5, tol=TIGHT)
    b = cd_path(Xr, yr, None, LOSS_C, 1.0, 1.0, lams, 0.5, tol=TIGHT)
    assert np.isclose(lambda_max(X, y, k, LOSS_C, 1.0, 1.0, 0.5), lm, rtol=1e-10)
    np.testing.assert_allclose(a[1], b[1], atol=1e-7)
    np.testing.assert_allclose(a[0], b[0], atol=1e-7)


def test_ridge_path_start_and_standardisation_helper():
    X, y = _data(50, 3, seed=12)
    w = np.ones(50)
    Xt, c, s, excl = standardize_design(X, w)
    np.testing.assert_allclose((Xt**2).mean(1), 1.0)
    np.testing.assert_allclose(Xt.mean(1), 0.0, atol=1e-12)
    lm0 = lambda_max(X, y, None, LOSS_LOGIT, 0, 0, 0.0)
    lm1 = lambda_max(X, y, None, LOSS_LOGIT, 0, 0, 1.0)
    assert np.isclose(lm0, lm1 / 1e-3)  # glmnet's alpha = 0 convention
    b0, B, _ = cd_path(X, y, None, LOSS_LOGIT, 0, 0, [lm0], 0.0, tol=TIGHT)
    # at the ridge start the coefficients are tiny but nonzero
    assert 0 < np.abs(B[0]).max() < 1e-2


def test_constant_column_and_errors():
    X, y = _data(40, 3, seed=13)
    X[:, 1] = 3.0
    b0, B, _ = cd_path(X, y, None, LOSS_LOGIT, 0, 0, [0.01], 0.5)
    assert B[0, 1] == 0.0
    with pytest.raises(ValueError, match="alpha"):
        cd_path(X, y, None, LOSS_LOGIT, 0, 0, [0.1], 1.5)
    with pytest.raises(ValueError, match="y must be coded"):
        cd_path(X, (y > 0).astype(float), None, LOSS_LOGIT, 0, 0, [0.1], 0.5)
    with pytest.raises(ValueError, match="penalty_factor"):
        cd_path(X, y, None, LOSS_LOGIT, 0, 0, [0.1], 0.5, penalty_factor=[1, 1])
    with pytest.raises(ValueError, match="rho"):
        cd_path(X, y, None, LOSS_C, -1.0, 1.0, [0.1], 0.5)


def test_convergence_warning_names_max_iter():
    from cohstats import ConvergenceWarning

    X, y = _data(60, 5, seed=14)
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        cd_path(X, y, None, LOSS_LOGIT, 0, 0, [1e-4], 0.5, tol=1e-15, max_iter=2)


def test_no_intercept_matches_sklearn():
    from sklearn.linear_model import LogisticRegression

    X, y = _data(80, 4, seed=15)
    n, lam = X.shape[0], 0.02
    b0, B, _ = cd_path(X, y, None, LOSS_LOGIT, 0, 0, [lam], 0.0, standardize=False, tol=TIGHT, intercept=False)
    clf = LogisticRegression(C=1 / (n * lam), fit_intercept=False, tol=1e-12, max_iter=10000)
    clf.fit(X, y)
    assert b0[0] == 0.0
    np.testing.assert_allclose(B[0], clf.coef_.ravel(), rtol=1e-5)


# ------------------------------------------------------------------ offsets
def _offset_problem(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3))
    o = rng.normal(0.0, 1.0, n)
    y = np.where(rng.random(n) < 1.0 / (1.0 + np.exp(-(o + X @ [1.0, -0.5, 0.0] + 0.3))), 1.0, -1.0)
    return X, y, o


def test_offset_logistic_equals_statsmodels_glm_with_offset():
    import statsmodels.api as sm

    X, y, o = _offset_problem()
    b, B, info = cd_path(X, y, None, 7, 0.0, 0.0, [0.0], 0.0, standardize=False, offset=o, tol=1e-14)
    glm = sm.GLM((y > 0).astype(float), sm.add_constant(X), family=sm.families.Binomial(), offset=o).fit(tol=1e-14)
    assert b[0] == pytest.approx(glm.params[0], abs=1e-9)
    np.testing.assert_allclose(B[0], glm.params[1:], atol=1e-9)
    # the null fit (lambda_max) and a penalised path see the offset too: the intercept-only fit
    # with the offset is statsmodels' constant-only GLM with the same offset
    lm = lambda_max(X, y, None, 7, 0.0, 0.0, 1.0, offset=o)
    b1, B1, _ = cd_path(X, y, None, 7, 0.0, 0.0, [lm], 1.0, offset=o, tol=1e-12)
    null = sm.GLM((y > 0).astype(float), np.ones((len(y), 1)), family=sm.families.Binomial(), offset=o).fit(tol=1e-14)
    assert np.all(B1[0] == 0.0) and b1[0] == pytest.approx(null.params[0], abs=1e-8)


def test_offset_in_the_kernel_path_shifts_the_fits():
    """A kernel fit with offset o reaches the optimum of the objective with f = o + b + K beta
    (checked against scipy on a small problem)."""
    from scipy.optimize import minimize

    from cohstats.losses.scalar import loss_value
    from cohstats.solvers.cd.kernel import cd_kernel_path

    X, y, o = _offset_problem(n=40, seed=3)
    K = np.exp(-((X[:, None, :] - X[None, :, :]) ** 2).sum(-1) / 3.0)
    lam = 0.05
    b, B, info = cd_kernel_path(K, y, None, 7, 0.0, 0.0, [lam], 0.0, tol=1e-13, offset=o)

    def obj(t):
        f = o + t[0] + K @ t[1:]
        return np.mean([loss_value(7, v, 0.0, 0.0) for v in y * f]) + 0.5 * lam * t[1:] @ K @ t[1:]

    r = minimize(obj, np.zeros(41), method="BFGS", options=dict(gtol=1e-10))
    assert info["objective"][0] == pytest.approx(obj(np.concatenate([b, B[0]])), rel=1e-9)
    assert info["objective"][0] <= r.fun * (1.0 + 1e-8)  # coordinate descent's tolerance on a kernel
    with pytest.raises(ValueError, match="takes no offset"):
        cd_kernel_path(K, y, None, 7, 0.0, 0.0, [lam], 0.0, solver="newton", offset=o)
