"""Tests of cohstats.models.lum (SPEC section 7) against independent references.

References: scipy.optimize on small problems (the LUM objective written out in numpy here),
scikit-learn's SVC for the hinge limit, closed forms of the link, the true probabilities of
simulated data.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize, minimize_scalar

from cohstats import ConvergenceWarning
from cohstats.models.lum import LUM_LAMBDA_GRID, lum, lum_link, lum_refit, tune_lum, _interp_weights


# --------------------------------------------------------------------------- numpy reference
def V(u, a, c):
    """LUM loss written independently in numpy (SPEC 7.1, eq (2))."""
    u = np.asarray(u, dtype=float)
    u0 = c / (1 + c)
    t = np.maximum((1 + c) * u - c, 0.0)
    with np.errstate(over="ignore"):
        if math.isinf(a):
            right = np.exp(-t) / (1 + c)
        else:
            right = (1 / (1 + c)) * (a / (t + a)) ** a
    return np.where(u < u0, 1 - u, right)


def dV(u, a, c):
    u = np.asarray(u, dtype=float)
    u0 = c / (1 + c)
    t = np.maximum((1 + c) * u - c, 0.0)
    with np.errstate(over="ignore"):
        right = -np.exp(-t) if math.isinf(a) else -((a / (t + a)) ** (a + 1))
    return np.where(u < u0, -1.0, right)


def lum_objective(theta, X, y, lam, a, c, w=None):
    b, beta = theta[0], theta[1:]
    w = np.ones(len(y)) if w is None else w / np.mean(w)
    m = y * (X @ beta + b)
    return np.mean(w * V(m, a, c)) + 0.5 * lam * beta @ beta


def lum_grad(theta, X, y, lam, a, c, w=None):
    b, beta = theta[0], theta[1:]
    w = np.ones(len(y)) if w is None else w / np.mean(w)
    m = y * (X @ beta + b)
    g = w * dV(m, a, c) * y / len(y)
    return np.r_[g.sum(), X.T @ g + lam * beta]


def scipy_lum(X, y, lam, a, c, w=None):
    p = X.shape[1]
    r = minimize(
        lum_objective,
        np.zeros(p + 1),
        jac=lum_grad,
        args=(X, y, lam, a, c, w),
        method="L-BFGS-B",
        options=dict(maxiter=20000, ftol=1e-15, gtol=1e-11),
    )
    return r.x, r.fun


def make_data(n=60, p=3, seed=0, noise=0.7):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    beta = np.linspace(1.0, -0.5, p)
    y = np.where(X @ beta + 0.3 + noise * rng.normal(size=n) > 0, 1.0, -1.0)
    return X, y


# --------------------------------------------------------------------------- link
@pytest.mark.parametrize("a,c", [(1.0, 0.0), (5.0, 1.0), (1000.0, 0.0), (10.0, 10.0)])
def test_link_inverts_numerical_population_minimiser(a, c):
    # f*(p) = argmin_f p V(f) + (1-p) V(-f), found numerically; link(f*) must give back p
    for p in (0.05, 0.3, 0.45, 0.6, 0.9, 0.99):
        risk = lambda f: p * V(f, a, c) + (1 - p) * V(-f, a, c)
        r = minimize_scalar(risk, bounds=(-30, 30), method="bounded", options=dict(xatol=1e-12))
        assert abs(lum_link(np.array([r.x]), a, c)[0] - p) < 2e-6


def test_link_flat_region_and_logistic_limit():
    f = np.linspace(-10, 10, 2001)
    # c = 0, a = 1e6: the logistic link expit(f) (SPEC 7.6)
    assert np.max(np.abs(lum_link(f, 1e6, 0.0) - 1 / (1 + np.exp(-f)))) < 1e-5
    # a = inf is exactly logistic for c = 0
    assert np.max(np.abs(lum_link(f, np.inf, 0.0) - 1 / (1 + np.exp(-f)))) < 1e-14
    # flat region |f| <= c/(1+c) gives 1/2; symmetry p(-f) = 1 - p(f)
    c = 3.0
    p = lum_link(f, 2.0, c)
    assert np.all(p[np.abs(f) <= c / (1 + c)] == 0.5)
    np.testing.assert_allclose(p + lum_link(-f, 2.0, c), 1.0, atol=1e-15)
    # closed form R^(a+1) / (1 + R^(a+1)), R = ((1+c) f - c + a)/a, for f > c/(1+c)
    fr = f[f > c / (1 + c)]
    R = ((1 + c) * fr - c + 2.0) / 2.0
    np.testing.assert_allclose(lum_link(fr, 2.0, c), R**3 / (1 + R**3), rtol=1e-13)
    with pytest.raises(ValueError, match="c = inf"):
        lum_link(f, 1.0, np.inf)


# --------------------------------------------------------------------------- refit
@pytest.mark.parametrize("a", [1.0, 10.0, 1000.0, np.inf])
def test_refit_matches_scipy(a):
    rng = np.random.default_rng(3)
    f = 3 * rng.normal(size=150)
    y = np.where(rng.random(150) < 1 / (1 + np.exp(-0.5 * f + 0.4)), 1.0, -1.0)
    w = rng.uniform(0.5, 2.0, size=150)
    r = lum_refit(f, y, a, w)
    obj = lambda g: np.sum(w * V(y * (g[0] + g[1] * f), a, 0.0)) / len(f)
    ref = minimize(obj, [0.0, 1.0], method="Nelder-Mead", options=dict(xatol=1e-11, fatol=1e-15, maxiter=20000))
    assert r["converged"] and not r["separable"]
    np.testing.assert_allclose([r["g0"], r["g1"]], ref.x, atol=2e-6)
    assert r["objective"] <= ref.fun + 1e-12


def test_refit_separable_guard_warns():
    f = np.array([-2.0, -1.0, -0.5, 0.5, 1.0, 3.0])
    y = np.array([-1.0, -1.0, -1.0, 1.0, 1.0, 1.0])
    with pytest.warns(ConvergenceWarning, match="separate"):
        r = lum_refit(f, y, 1000.0)
    assert r["separable"]
    # the guarded problem is the 1e-6 ridge: check its stationarity independently
    obj = lambda g: np.mean(V(y * (g[0] + g[1] * f), 1000.0, 0.0)) + 0.5e-6 * (g @ g)
    ref = minimize(obj, [0.0, 1.0], method="Nelder-Mead", options=dict(xatol=1e-10, fatol=1e-16, maxiter=40000))
    assert r["objective"] <= ref.fun + 1e-10
    assert r["g1"] > 10


# --------------------------------------------------------------------------- fits
try:
    import cohstats.solvers.cd.path  # noqa: F401  (the coordinate-descent engine, branch clearn)

    _ENGINE = True
except ImportError:  # pragma: no cover - only before the engine is merged
    _ENGINE = False
pytestmark_engine = pytest.mark.skipif(not _ENGINE, reason="coordinate-descent engine not merged")


@pytestmark_engine
def test_dwd_matches_direct_convex_solve():
    # a = c = 1 is DWD (Theorem 1 of [LZW]); compare with L-BFGS on the written-out objective
    X, y = make_data(60, 3, seed=1)
    lam = 0.05
    fit = lum(X, y, a=1.0, c=1.0, lambda_=lam, standardize=False, tol=1e-12)
    ref, fref = scipy_lum(X, y, lam, 1.0, 1.0)
    np.testing.assert_allclose(fit.intercept, ref[0], atol=1e-5)
    np.testing.assert_allclose(fit.coef.to_numpy(), ref[1:], atol=1e-5)
    ours = lum_objective(np.r_[fit.intercept, fit.coef.to_numpy()], X, y, lam, 1.0, 1.0)
    assert ours <= fref + 1e-10
    assert fit.converged
    np.testing.assert_allclose(fit._info_objective[-1], ours, rtol=1e-9)


@pytestmark_engine
@pytest.mark.parametrize("a,c,kkt", [(5.0, 0.0, 1e-6), (1000.0, 10.0, 1e-6), (1.0, 100.0, 1e-5)])
def test_optimality_conditions(a, c, kkt):
    # SPEC 7.4: (1/n) sum V'(y f) y x_j + lambda w_j = 0 and sum V'(y f) y = 0, to 1e-6.
    # For c = 100 the engine's stopping rule (on coefficient changes) ends at a KKT residual of
    # ~3e-6 with the objective within 4e-11 of L-BFGS's; checked at 1e-5 plus the objective.
    X, y = make_data(80, 4, seed=2)
    lams = np.array([0.5, 0.1, 0.02])
    fit = lum(X, y, a=a, c=c, lambda_=lams, standardize=False, tol=1e-12)
    for k, lam in enumerate(lams):
        theta = np.r_[fit._intercepts[k], fit._coefs[k]]
        g = lum_grad(theta, X, y, lam, a, c)
        assert np.max(np.abs(g)) < kkt, (lam, g)
    _, fref = scipy_lum(X, y, lams[-1], a, c)
    assert fit._info_objective[-1] <= fref + 1e-9
    # objective decreases along the decreasing lambda path and matches the engine's report
    objs = [lum_objective(np.r_[fit._intercepts[k], fit._coefs[k]], X, y, lam, a, c) for k, lam in enumerate(lams)]
    assert np.all(np.diff(objs) < 0)
    np.testing.assert_allclose(fit._info_objective, objs, rtol=1e-8)


@pytestmark_engine
def test_weighted_fit_matches_scipy():
    X, y = make_data(50, 2, seed=4)
    w = np.random.default_rng(4).uniform(0.2, 3.0, size=50)
    fit = lum(X, y, a=10.0, c=0.0, lambda_=0.03, standardize=False, weights=w, tol=1e-12)
    ref, _ = scipy_lum(X, y, 0.03, 10.0, 0.0, w)
    np.testing.assert_allclose(np.r_[fit.intercept, fit.coef.to_numpy()], ref, atol=1e-5)


@pytestmark_engine
def test_hard_limit_is_linear_svm():
    # c = 1e4 LUM and the SVM with the same objective: C = 1/(n lambda) (SPEC 0.5, 7.6)
    from sklearn.svm import SVC

    X, y = make_data(80, 2, seed=5, noise=1.0)
    n = len(y)
    for lam in (0.1, 0.01):
        fit = lum(X, y, a=1000.0, c=1e4, lambda_=lam, standardize=False, tol=1e-12)
        svc = SVC(kernel="linear", C=1.0 / (n * lam), tol=1e-10).fit(X, y)
        f_svm = svc.decision_function(X)
        f_lum = fit.predict(type="link").to_numpy()
        rel = np.max(np.abs(f_lum - f_svm)) / np.max(np.abs(f_svm))
        assert rel < 1e-2, (lam, rel)
        assert fit.regime == "hard"


@pytestmark_engine
def test_soft_lum_probabilities_are_consistent():
    # logistic truth; c = 0, a = 1e6 has the logistic link: probabilities estimate the truth
    rng = np.random.default_rng(7)
    n = 4000
    X = rng.normal(size=(n, 2))
    eta = 1 / (1 + np.exp(-(0.3 + 1.5 * X[:, 0] - X[:, 1])))
    y = np.where(rng.random(n) < eta, 1.0, -1.0)
    fit = lum(X, y, a=1e6, c=0.0, lambda_=1e-5, standardize=False)
    for method in ("lum", "refit"):
        p = fit.predict(type="prob", method=method).iloc[:, 1].to_numpy()
        assert np.mean(np.abs(p - eta)) < 0.03, method
    # the fitted coefficients approach the true logit coefficients
    np.testing.assert_allclose(fit.coef.to_numpy(), [1.5, -1.0], atol=0.25)


@pytestmark_engine
def test_refit_keeps_ranking_and_class_predictions():
    X, y = make_data(100, 3, seed=8, noise=1.2)
    fit = lum(X, y, a=1000.0, c=1e4, lambda_=0.5, standardize=False)  # heavy shrinkage
    f = fit.predict(type="link").to_numpy()
    r = fit.refit()
    assert r["g1"] > 0
    p = fit.predict(type="prob").iloc[:, 1].to_numpy()
    # monotone increasing in f: the ordering (and AUC) of the first stage is kept
    o = np.argsort(f)
    assert np.all(np.diff(p[o]) >= 0)
    # class predictions remain sign(f1); refitted p > 1/2 exactly when f > -g0/g1
    cls = fit.predict(type="class").to_numpy()
    np.testing.assert_array_equal(cls == fit.classes[1], f > 0)
    np.testing.assert_array_equal(p > 0.5, f > -r["g0"] / r["g1"])
    # shrunken hard fit: method='lum' is 1/2 on the flat region, the refit is not
    p_lum = fit.predict(type="prob", method="lum").iloc[:, 1].to_numpy()
    flat = np.abs(f) <= 1e4 / (1 + 1e4)
    assert flat.any() and np.all(p_lum[flat] == 0.5)
    assert np.ptp(p[flat]) > 0.1


@pytestmark_engine
def test_path_interpolation_and_select():
    X, y = make_data(60, 2, seed=9)
    lams = np.array([1.0, 0.1, 0.01])
    fit = lum(X, y, a=5.0, c=1.0, lambda_=lams, standardize=False)
    k0, k1, t = _interp_weights(lams, 0.055)
    assert (k0, k1) == (1, 2) and abs(t - (0.1 - 0.055) / 0.09) < 1e-12
    mid = fit.select(0.055)
    np.testing.assert_allclose(mid.coef.to_numpy(), (1 - t) * fit._coefs[1] + t * fit._coefs[2], rtol=1e-14)
    F = fit._decision_path(X)
    assert F.shape == (3, 60)
    np.testing.assert_allclose(F[1], fit.predict(type="link", s=0.1).to_numpy(), rtol=1e-12)
    P = fit._proba_path(X)
    np.testing.assert_allclose(P[2], fit.predict(type="prob").iloc[:, 1].to_numpy(), rtol=1e-12)
    pf = fit.path()
    err = [np.mean((F[k] > 0) != (y > 0)) for k in range(3)]
    np.testing.assert_allclose(pf["train_error"], err)
    assert pf.xvar == "lambda" and pf.coef_columns == list(fit.xnames)


@pytestmark_engine
def test_formula_interface_and_summary():
    rng = np.random.default_rng(10)
    df = pd.DataFrame(rng.normal(size=(120, 2)), columns=["x1", "x2"])
    df["g"] = rng.choice(["u", "v"], size=120)
    df["y"] = np.where(df.x1 - df.x2 + (df.g == "v") + rng.normal(size=120) > 0, "yes", "no")
    fit = lum("y ~ x1 + x2 + C(g)", df, a=10.0, c=0.0, lambda_=0.01)
    from cohstats.formula import build_design

    d = build_design("y ~ x1 + x2 + C(g)", df)
    fit2 = lum(d, a=10.0, c=0.0, lambda_=0.01)
    fit3 = lum(d.X, np.asarray(df.y), a=10.0, c=0.0, lambda_=0.01)
    np.testing.assert_allclose(fit.coef.to_numpy(), fit2.coef.to_numpy())
    np.testing.assert_allclose(fit.coef.to_numpy(), fit3.coef.to_numpy(), rtol=1e-12)
    prob = fit.predict(df.head(5), type="prob")
    assert list(prob.columns) == ["no", "yes"]
    np.testing.assert_allclose(prob.sum(axis=1), 1.0)
    s = fit.summary()
    f = fit.predict(type="link").to_numpy()
    yy = np.where(df.y == "yes", 1.0, -1.0)
    assert s.info["training error"] == pytest.approx(np.mean(yy * f <= 0))
    assert s.info["regime"] == "soft"
    assert s.tables["margins"].loc["margin_median", "value"] == pytest.approx(np.median(yy * f))
    import matplotlib

    ax = fit.plot()  # coefficient paths
    assert isinstance(ax, matplotlib.axes.Axes) and ax.get_ylabel() == "coefficient"
    assert fit.plot(kind="loss").get_ylabel() == "loss"
    with pytest.raises(ValueError, match="two predictors"):
        fit.plot(kind="boundary")  # four columns


@pytestmark_engine
def test_refit_on_validation():
    X, y = make_data(200, 2, seed=11, noise=1.0)
    tr, va = slice(0, 100), slice(100, 200)
    fit = lum(
        X[tr], y[tr], a=1000.0, c=0.0, lambda_=0.05, standardize=False, validation=(X[va], y[va]), refit_on="validation"
    )
    r = fit.refit()
    ref = lum_refit(X[va] @ fit.coef.to_numpy() + fit.intercept, y[va], 1000.0)
    assert r["g0"] == pytest.approx(ref["g0"]) and r["g1"] == pytest.approx(ref["g1"])


@pytestmark_engine
def test_tuned_lum_rules():
    X, y = make_data(200, 3, seed=12, noise=0.8)
    tr, va = slice(0, 100), slice(100, 200)
    fit = tune_lum(X[tr], y[tr], validation=(X[va], y[va]), standardize=False)
    tab = fit.tuning
    assert len(tab) == 2 * len(LUM_LAMBDA_GRID)
    best = {}
    for c, g in tab.groupby("c"):
        g = g.sort_values("lambda", ascending=False)
        k = int(np.argmin(g.error.to_numpy()))  # first minimum = largest lambda [D24]
        best[c] = (g.error.iloc[k], g["lambda"].iloc[k])
    c_sel = 0.0 if best[0.0][0] <= best[10000.0][0] else 10000.0  # [D25]
    assert fit.c_selected == c_sel and fit.c == c_sel
    assert fit.s == pytest.approx(best[c_sel][1])
    # the reported validation error is the error of the selected fit on the validation set
    f = fit.predict(X[va], type="link").to_numpy()
    assert np.mean((f > 0) != (y[va] > 0)) == pytest.approx(best[c_sel][0])
    assert f"c = {c_sel:g}" in fit.tuning_note
    # c="tuned" in lum() is the same procedure
    fit2 = lum(X[tr], y[tr], c="tuned", validation=(X[va], y[va]), standardize=False)
    assert fit2.c == fit.c and fit2.s == fit.s


@pytestmark_engine
def test_errors():
    X, y = make_data(30, 2)
    with pytest.raises(ValueError, match="two classes only"):  # K > 2: linear angle-based LUM
        lum(X, np.arange(30) % 3, lambda_=0.1, kernel="rbf")
    with pytest.raises(ValueError, match="two classes only"):
        lum(X, np.arange(30) % 3, lambda_=0.1, c=np.inf)
    with pytest.raises(ValueError, match=r"lum\(a=\.\.\.\) must be"):
        lum(X, y, a=0.0, lambda_=0.1)
    with pytest.raises(ValueError, match=r"lum\(c=\.\.\.\) must be"):
        lum(X, y, c=-1.0, lambda_=0.1)
    with pytest.raises(ValueError, match=r"lum\(c=\.\.\.\) must be"):
        lum(X, y, c="soft", lambda_=0.1)
    with pytest.raises(TypeError, match="alpha"):
        lum(X, y, penalty="l0", lambda_=0.1)
    with pytest.raises(ValueError, match="alpha"):
        lum(X, y, alpha=1.5, lambda_=0.1)
    with pytest.raises(ValueError, match="lambda_"):
        lum(X, y, lambda_=-1.0)
    with pytest.raises(ValueError, match="refit_on"):
        lum(X, y, refit_on="validation", lambda_=0.1)
    fit = lum(X, y, c=np.inf, lambda_=0.1, standardize=False)
    with pytest.raises(NotImplementedError, match="c = inf"):
        fit.predict(type="prob", method="lum")
    with pytest.raises(ValueError, match="method"):
        fit.predict(type="prob", method="platt")


@pytestmark_engine
def test_kernel_lum_hard_limit_is_rbf_svm_and_soft_matches_scipy():
    from sklearn.svm import SVC

    rng = np.random.default_rng(13)
    n = 60
    X = rng.normal(size=(n, 2))
    y = np.where(X[:, 0] ** 2 + X[:, 1] ** 2 + 0.3 * rng.normal(size=n) > 1.2, 1.0, -1.0)
    sigma, lam = 1.5, 0.02
    K = np.exp(-((X[:, None, :] - X[None, :, :]) ** 2).sum(-1) / sigma**2)
    hard = lum(X, y, a=1000.0, c=1e4, kernel="rbf", sigma=sigma, lambda_=lam, tol=1e-10, standardize=False)
    svc = SVC(kernel="rbf", gamma=1 / sigma**2, C=1 / (n * lam), tol=1e-10).fit(X, y)
    f_svm = svc.decision_function(X)
    rel = np.max(np.abs(hard.predict(type="link").to_numpy() - f_svm)) / np.max(np.abs(f_svm))
    assert rel < 1e-2
    # soft kernel LUM: (1/n) sum V(y (b + K beta)) + (lam/2) beta'K beta, by L-BFGS
    a, c = 5.0, 0.0
    soft = lum(X, y, a=a, c=c, kernel="rbf", sigma=sigma, lambda_=lam, tol=1e-12, standardize=False)

    def obj(th):
        f = th[0] + K @ th[1:]
        return np.mean(V(y * f, a, c)) + 0.5 * lam * th[1:] @ K @ th[1:]

    def grad(th):
        f = th[0] + K @ th[1:]
        g = dV(y * f, a, c) * y / n
        return np.r_[g.sum(), K @ g + lam * K @ th[1:]]

    r = minimize(obj, np.zeros(n + 1), jac=grad, method="L-BFGS-B", options=dict(maxiter=50000, ftol=1e-15, gtol=1e-11))
    f_ref = r.x[0] + K @ r.x[1:]
    np.testing.assert_allclose(soft.predict(type="link").to_numpy(), f_ref, atol=1e-4)
    beta = soft._beta()
    assert obj(np.r_[soft.intercept, beta]) <= r.fun + 1e-10
    assert soft.coef is None  # a kernel expansion: no input-space coefficients
    np.testing.assert_array_equal(soft.dual_coef["dual_coef"].to_numpy(), beta[soft.support_])


@pytestmark_engine
def test_vignette_one_replication_example_52(tmp_path):
    # one replication of [LZW] Example 5.2 through the vignette driver; the refit must repair
    # the probabilities of the hard LUMs (paper Table 2: 0.217 -> 0.074 for c = 10000)
    from cohstats.datasets import reference
    from cohstats.vignettes.lum_simulations import mae_table, simulate

    res = simulate(1, seed=3, examples=("5.2",), real=(), n_test=4000)
    assert set(res.c) >= {0.0, 10000.0, "tuned", "PLR"}
    t = mae_table(res, "5.2", reference("lzw2011", "table2"))
    hard = t[t.c == 10000.0]
    lum_ = hard[hard.estimator == "LUM"].ours.to_numpy()
    ref_ = hard[hard.estimator == "refitted LUM"].ours.to_numpy()
    assert np.all(ref_ < lum_ - 0.05)
    # the tuned LUM's test error is the one of the c it selected
    for a in (1.0, 1000.0):
        tu = res[(res.a == a) & (res.c == "tuned")].iloc[0]
        pick = res[(res.a == a) & (res.c == tu.c_selected)].iloc[0]
        assert tu.test_error == pick.test_error
    assert np.all(res.bayes_error.between(0.05, 0.13))


def test_p_greater_than_n_ridge_uses_representer_form_exactly():
    """p > n with the ridge penalty runs over n kernel coefficients; same optimum as the primal
    engine for a soft LUM, and the SVM limit (c = 1e4) agrees with libsvm on the same problem."""
    from sklearn.svm import SVC

    from cohstats.solvers.cd.path import cd_path, standardize_design
    from cohstats.losses.scalar import LOSS_LUM

    rng = np.random.default_rng(7)
    n, p = 50, 200
    X = rng.normal(size=(n, p)) * rng.uniform(0.5, 3, p) + rng.normal(size=p)
    y = np.where(X[:, 0] - X[:, 1] + rng.normal(size=n) > 0, 1.0, -1.0)
    lams = np.array([0.5, 0.1, 0.02])
    fit = lum(X, y, a=1000.0, c=0.0, lambda_=lams, tol=1e-10)
    b0, B, _ = cd_path(X, y, np.ones(n), LOSS_LUM, 1000.0, 0.0, lams, 0.0, standardize=True, tol=1e-10, max_iter=100000)
    for k, lam in enumerate(lams):
        f_ours = fit.predict(X, type="link", s=lam).to_numpy()
        f_primal = X @ B[k] + b0[k]
        assert np.max(np.abs(f_ours - f_primal)) < 1e-4 * np.max(np.abs(f_primal))
    # SVM limit against libsvm on the standardised inputs: C = 1 / (n lambda)
    Zt, center, scale, _ = standardize_design(X, np.ones(n), True, True)
    Z = np.asarray(Zt).T
    lam = 0.05
    hard = lum(X, y, a=1000.0, c=1e4, lambda_=lam, tol=1e-10)
    svc = SVC(kernel="linear", C=1.0 / (n * lam), tol=1e-10).fit(Z, y)
    f_svc = svc.decision_function(Z)
    f_lum = hard.predict(X, type="link").to_numpy()
    assert np.max(np.abs(f_lum - f_svc)) < 1e-2 * np.max(np.abs(f_svc))


def test_hard_lum_reports_convergence_honestly():
    """c = 1e4 (the SVM limit): every lambda reported converged has a small exact KKT violation;
    a lambda whose exact KKT violation is large is reported as not converged."""
    rng = np.random.default_rng(0)
    n, p = 300, 20
    X = rng.standard_normal((n, p))
    y = np.where(X[:, 0] - X[:, 1] + 0.8 * rng.standard_normal(n) > 0, 1.0, -1.0)
    import warnings as _w

    with _w.catch_warnings():
        _w.simplefilter("ignore")
        fit = lum(X, y, a=1000.0, c=1e4, nlambda=20)
    kkt = np.asarray(fit._info["kkt"])
    conv = fit._info_converged
    bound = fit._info["kkt_bound"]
    assert np.all(kkt[conv] <= bound)
    assert fit.converged == bool(conv[-1])
    # the soft LUM reaches the same objective as exact coordinate minimisation
    from cohstats.losses.scalar import LOSS_LUM
    from cohstats.solvers.cd.path import cd_path

    lam = np.asarray(fit.lambda_)[:8]
    soft = lum(X, y, a=1000.0, c=0.0, lambda_=lam, tol=1e-9)
    _, _, ex = cd_path(X, y, np.ones(n), LOSS_LUM, 1000.0, 0.0, lam, 0.0, standardize=True, tol=1e-9, mode="exact")
    np.testing.assert_allclose(np.asarray(soft._info["objective"]), np.asarray(ex["objective"]), rtol=1e-6)
