"""svm(): the formula front end against libsvm, cost mapping, probabilities, pi path, errors."""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.svm import SVC

from cohstats import ConvergenceWarning
from cohstats.datasets import make_wsl1
from cohstats.formula import build_design
from cohstats.kernels import median_between
from cohstats.models.svm import psi_learn, svm


def _df(n=120, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(rng.normal(size=(n, 3)), columns=["x1", "x2", "x3"])
    df["y"] = np.where(df.x1 - df.x2**2 + 0.5 + 0.6 * rng.normal(size=n) > 0, "yes", "no")
    return df


@pytest.mark.parametrize("pi", [None, 0.5, 0.25])
def test_formula_fit_matches_svc_with_class_weights(pi):
    df = _df()
    new = _df(40, seed=9)
    fit = svm("y ~ x1 + x2 + x3", df, kernel="rbf", gamma=0.4, C=3.0, pi=pi, tol=1e-9, standardize=False)
    X = df[["x1", "x2", "x3"]].to_numpy()
    yy = np.where(df.y == "yes", 1, -1)
    cw = None if pi is None else {1: 1 - pi, -1: pi}
    s = SVC(C=3.0, gamma=0.4, class_weight=cw, tol=1e-9).fit(X, yy)
    f = fit.predict(new, type="link").to_numpy()
    np.testing.assert_allclose(f, s.decision_function(new[["x1", "x2", "x3"]].to_numpy()), atol=2e-5)
    lab = fit.predict(new)
    assert list(lab) == list(np.where(f > 0, "yes", "no"))


def test_lambda_cost_mapping_linear_coefficients_and_default_width():
    df = _df(100, seed=2)
    n = len(df)
    a = svm("y ~ x1 + x2", df, kernel="linear", lambda_=0.02, pi=0.4, tol=1e-10, standardize=False)
    b = svm("y ~ x1 + x2", df, kernel="linear", C=1 / (n * 0.02), pi=0.4, tol=1e-10, standardize=False)
    np.testing.assert_allclose(a.coef.to_numpy(), b.coef.to_numpy(), atol=1e-9)
    s = SVC(kernel="linear", C=1 / (n * 0.02), class_weight={1: 0.6, -1: 0.4}, tol=1e-10).fit(
        df[["x1", "x2"]].to_numpy(), np.where(df.y == "yes", 1, -1)
    )
    np.testing.assert_allclose(a.coef.to_numpy(), s.coef_[0], atol=1e-5)
    assert a.intercept == pytest.approx(s.intercept_[0], abs=1e-5)
    d = build_design("y ~ x1 + x2", df)
    g = svm(d, lambda_=0.02, gamma="median", standardize=False)
    assert g.kernel.sigma == pytest.approx(median_between(d.X, d.y), rel=1e-12)
    assert "Coefficients" in a.summary().tables


def test_path_fit_equals_single_fits_and_bracketing():
    df = make_wsl1(100, random_state=3)
    p = svm("y ~ x1 + x2", df, lambda_=0.01, pi="path", m=10, tol=1e-10)
    single = svm("y ~ x1 + x2", df, lambda_=0.01, pi=0.5, tol=1e-10)
    np.testing.assert_allclose(p.predict(type="link"), single.predict(type="link"), atol=1e-6)
    pf = p.path()
    assert pf.xvar == "pi" and np.allclose(pf["pi"], np.arange(1, 10) / 10)
    for j in (0, 4, 8):
        fj = svm("y ~ x1 + x2", df, lambda_=0.01, pi=float(pf["pi"][j]), tol=1e-10)
        np.testing.assert_allclose(pf["(Intercept)"][j], fj.intercept, atol=1e-6)
    pb = p.predict(type="prob")["1"].to_numpy() if "1" in p.classes else p.predict(type="prob").iloc[:, 1].to_numpy()
    pb2 = single.predict(type="prob", method="bracket", m=10).iloc[:, 1].to_numpy()
    np.testing.assert_array_equal(pb, pb2)
    assert pb.min() >= 0.05 and pb.max() <= 0.95


def test_bracketing_population_behaviour_example1():
    # SPEC 4.2: with large n, p_hat -> {0.2, 0.8} within 1/(2m). A flexible (Gaussian) weighted
    # SVM with a small penalty is needed (the linear hinge fit is not pointwise Fisher
    # consistent); away from the discontinuity at x1 = 0 the estimate is within 1/(2m) = 0.05.
    df, p = make_wsl1(1000, random_state=11, return_prob=True)
    tr, te = df.iloc[:600], df.iloc[600:]
    fit = svm("y ~ x1 + x2", tr, lambda_=1e-3, pi="path", m=10, gamma="median", standardize=False)
    ph = fit.predict(te, type="prob").iloc[:, 1].to_numpy()
    far = np.abs(te.x1.to_numpy()) > 0.3
    assert np.mean(np.abs(ph - p[600:])[far] <= 0.05 + 1e-12) > 0.95


def test_probability_methods_and_consistency():
    df = _df(120, seed=4)
    fit = svm("y ~ x1 + x2 + x3", df, lambda_=0.1)
    f = fit.predict(type="link").to_numpy()
    assert 1e-3 < fit.rho_ < 1e2  # an interior EKL minimiser (checked in test_probability)
    for method in ("sollich", "coherence"):
        p = fit.predict(type="prob", method=method)
        np.testing.assert_allclose(p.sum(axis=1), 1.0)
        assert np.array_equal(p["yes"].to_numpy() > 0.5, f > 0)
    pl = fit.predict(type="prob", method="platt")["yes"].to_numpy()
    np.testing.assert_allclose(pl, 1 / (1 + np.exp(fit.platt.A * f + fit.platt.B)), rtol=1e-12)
    with pytest.raises(ValueError, match="method"):
        fit.predict(type="prob", method="isotonic")


def test_platt_tuned_is_platt_at_the_gkl_minimising_lambda():
    # [WSL] 5.2: tuned Platt = Platt's sigmoid on the SVM whose lambda minimises the GKL estimate
    # of the Platt probabilities. Reference: gkl() evaluated at each lambda on its own, the
    # argmin taken here, and an independent svm() refit with the original kernel width.
    from cohstats.tuning import gkl

    df = _df(60, seed=4)
    new = _df(15, seed=5)
    fit = svm("y ~ x1 + x2", df, kernel="rbf", lambda_=0.1)
    grid = np.array([1.0, 0.1, 0.01, 0.001])
    res = fit.platt_tuned(grid, D=3, random_state=7)
    gamma = float(fit.kernel.kpar[0])
    est = [
        float(
            gkl(
                svm,
                "y ~ x1 + x2",
                df,
                D=3,
                random_state=7,
                verbose=False,
                prob_args={"method": "platt"},
                kernel="rbf",
                gamma=gamma,
                lambda_=lam,
            ).estimate
        )
        for lam in grid
    ]
    lam_best = grid[int(np.argmin(est))]
    assert res.best_params["lambda_"] == pytest.approx(lam_best)
    np.testing.assert_allclose(np.sort(res.table["score"].to_numpy()), np.sort(est), rtol=1e-10)
    ref = svm("y ~ x1 + x2", df, kernel="rbf", gamma=gamma, lambda_=lam_best)
    f = ref.predict(new, type="link").to_numpy()
    expect = 1 / (1 + np.exp(ref.platt.A * f + ref.platt.B))
    got = fit.predict(new, type="prob", method="platt_tuned")["yes"].to_numpy()
    np.testing.assert_allclose(got, expect, rtol=1e-10)
    assert fit.platt_tuned() is res  # cached: predict reuses it
    assert fit.predict(new, type="prob", method="platt")["yes"].to_numpy() == pytest.approx(
        1 / (1 + np.exp(fit.platt.A * fit.predict(new, type="link").to_numpy() + fit.platt.B))
    )


def test_errors_and_warnings():
    df = _df(60)
    with pytest.raises(ValueError, match="C or lambda_"):
        svm("y ~ x1", df, C=1.0, lambda_=0.1)
    with pytest.raises(ValueError, match="pi"):
        svm("y ~ x1", df, pi=1.5)
    with pytest.raises(ValueError, match="lambda_"):
        svm("y ~ x1", df, lambda_=-1.0)
    df3 = df.assign(y=np.random.default_rng(0).choice(["a", "b", "c"], len(df)))
    with pytest.raises(ValueError, match="classes"):
        psi_learn("y ~ x1", df3)
    with pytest.raises(ValueError, match="pi"):
        svm("y ~ x1", df3, pi=0.3)
    with pytest.raises(ValueError, match="m"):
        svm("y ~ x1", df, pi="path", m=1)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        fit = svm("y ~ x1 + x2", df, max_iter=2)
    assert not fit.converged
    assert any(issubclass(r.category, ConvergenceWarning) and "max_iter" in str(r.message) for r in rec)


@pytest.mark.parametrize("m", [6, 7])  # pi = 1/2 on the bracketing grid, or added
def test_path_fit_reads_pi_half_off_the_exact_path(m):
    df = _df(90, seed=11)
    new = _df(30, seed=12)
    fit = svm("y ~ x1 + x2 + x3", df, kernel="rbf", gamma=0.5, C=2.0, pi="path", m=m, standardize=False)
    X = df[["x1", "x2", "x3"]].to_numpy()
    yy = np.where(df.y == "yes", 1, -1)
    s = SVC(C=2.0, gamma=0.5, class_weight={1: 0.5, -1: 0.5}, tol=1e-10).fit(X, yy)
    np.testing.assert_allclose(
        fit.predict(new, type="link").to_numpy(), s.decision_function(new[["x1", "x2", "x3"]].to_numpy()), atol=1e-6
    )
    assert fit.objective == pytest.approx(_svc_objective(s, X, yy, 0.5), rel=1e-7)
    np.testing.assert_allclose(fit.fitted_decision, s.decision_function(X), atol=1e-6)
    assert fit.path().shape[0] == m - 1 and fit.converged


def _svc_objective(s, X, y, gamma):
    from sklearn.metrics.pairwise import rbf_kernel

    beta = np.zeros(len(y))
    beta[s.support_] = s.dual_coef_[0]
    return 0.5 * beta @ rbf_kernel(X, X, gamma=gamma) @ beta - np.abs(beta).sum()


def test_path_methods_and_threads_give_the_same_bracketing():
    df = make_wsl1(150, random_state=8)
    new = make_wsl1(200, random_state=9)
    ex = svm("y ~ x1 + x2", df, lambda_=0.005, pi="path", m=12)
    assert ex.path_method == "exact"  # "auto" at n <= 2000
    pe = ex.predict(new, type="prob", method="bracket").to_numpy()
    for kw in (dict(n_jobs=2), dict(path_method="warm", tol=1e-8), dict(path_method="warm", tol=1e-8, n_jobs=2)):
        other = svm("y ~ x1 + x2", df, lambda_=0.005, pi="path", m=12, **kw)
        po = other.predict(new, type="prob", method="bracket").to_numpy()
        # bracketing reads signs of f: only points with |f| at the solver's accuracy may move
        np.testing.assert_allclose(po, pe, atol=1e-12)
        np.testing.assert_allclose(other.predict(new, type="link"), ex.predict(new, type="link"), atol=1e-5)
    with pytest.raises(ValueError, match="path_method"):
        svm("y ~ x1 + x2", df, pi="path", path_method="fast")
    with pytest.raises(ValueError, match="n_jobs"):
        svm("y ~ x1 + x2", df, pi="path", n_jobs=0)


def test_platt_sigmoid_as_a_statsmodels_glm():
    """Platt's sigmoid is a binomial GLM of the smoothed targets: the same coefficients as our
    Newton fit and as statsmodels' own GLM, with its standard errors in the summary."""
    import statsmodels.api as sm

    from cohstats.probability import platt_fit, platt_glm

    rng = np.random.default_rng(3)
    df = pd.DataFrame(rng.normal(size=(150, 2)), columns=["x1", "x2"])
    df["y"] = np.where(df.x1 - df.x2 + rng.normal(size=150) > 0, "yes", "no")
    fit = svm("y ~ x1 + x2", df)
    f, yy = fit.fitted_decision, fit.design.y
    tab = platt_glm(f, yy)
    s = platt_fit(f, yy, eps=1e-12)
    np.testing.assert_allclose(tab["estimate"].to_numpy(), [-s.B, -s.A], atol=1e-6)
    npos, nneg = np.sum(yy > 0), np.sum(yy < 0)
    t = np.where(yy > 0, (npos + 1) / (npos + 2), 1 / (nneg + 2))
    ref = sm.GLM(t, sm.add_constant(f), family=sm.families.Binomial()).fit()
    np.testing.assert_allclose(tab["estimate"].to_numpy(), ref.params, atol=1e-6)
    np.testing.assert_allclose(tab["std_error"].to_numpy(), ref.bse, rtol=1e-6)
    shown = fit.summary().tables["Platt sigmoid (binomial GLM, statsmodels)"]
    np.testing.assert_allclose(shown["estimate"].to_numpy(), tab["estimate"].to_numpy())
