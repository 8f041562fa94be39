"""svm() for K > 2 classes: one-vs-one against scikit-learn's SVC, pairwise coupling against a
direct scipy solve of its defining problem and against libsvm's probabilities, tuners."""

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize
from sklearn.datasets import load_iris
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from cohstats.coupling import pairwise_coupling, pairwise_matrix
from cohstats.models.svm import MulticlassSVMFit, svm

NAMES = np.array(["setosa", "versicolor", "virginica"])


def _iris():
    X, y = load_iris(return_X_y=True)
    return X, NAMES[y]


def _iris_df():
    X, y = _iris()
    df = pd.DataFrame(X, columns=["sl", "sw", "pl", "pw"])
    df["species"] = y
    return df


def _three_class(n, rng):
    """Three Gaussian classes N(mu_k, I) with equal priors; true posteriors by Bayes' rule."""
    mu = 1.5 * np.array([[1.0, 0.0], [-0.5, np.sqrt(3) / 2], [-0.5, -np.sqrt(3) / 2]])
    y = rng.integers(0, 3, n)
    X = mu[y] + rng.normal(size=(n, 2))
    s = X @ mu.T - 0.5 * np.sum(mu**2, axis=1)
    P = np.exp(s - s.max(axis=1, keepdims=True))
    P /= P.sum(axis=1, keepdims=True)
    df = pd.DataFrame(X, columns=["x1", "x2"]).assign(y=np.array(["a", "b", "c"])[y])
    return df, P


@pytest.mark.parametrize(
    "kernel,kw", [("rbf", {"gamma": 0.3}), ("linear", {}), (None, {}), ("poly", {"gamma": 0.05, "coef0": 1.0})]
)
def test_iris_one_vs_one_equals_svc(kernel, kw):
    X, y = _iris()
    fit = svm(X, y, kernel=kernel, C=2.0, standardize=False, tol=1e-7, **kw)
    s = SVC(kernel=kernel or "linear", C=2.0, decision_function_shape="ovo", tol=1e-7, **kw).fit(X, y)
    assert isinstance(fit, MulticlassSVMFit)
    F = fit.predict(X, type="link")
    assert list(F.columns) == ["setosa vs versicolor", "setosa vs virginica", "versicolor vs virginica"]
    ref = s.decision_function(X)
    np.testing.assert_allclose(F.to_numpy(), ref, atol=1e-4 * max(1.0, np.abs(ref).max()))
    assert list(fit.predict(X)) == list(s.predict(X))
    assert np.array_equal(fit.support_, np.sort(s.support_))
    if fit.coef is not None:
        assert list(fit.coef.columns) == list(F.columns)
        np.testing.assert_allclose(fit.coef.to_numpy().T, s.coef_, atol=1e-4)
        np.testing.assert_allclose(
            fit.intercept.to_numpy(), s.intercept_, atol=1e-4 * max(1.0, np.abs(s.intercept_).max())
        )
        np.testing.assert_allclose(X @ fit.coef.to_numpy() + fit.intercept.to_numpy(), F.to_numpy(), atol=1e-9)
        ca = fit.coef_at()
        assert list(ca.columns) == list(F.columns) and ca.index[0] == "(Intercept)"
        np.testing.assert_allclose(ca.iloc[0].to_numpy(), fit.intercept.to_numpy())
    else:
        # the dual coefficients and intercepts reproduce the decision values
        K = fit.kernel(X, X[fit.support_])
        np.testing.assert_allclose(K @ fit.dual_coef.to_numpy() + fit.intercept.to_numpy(), F.to_numpy(), atol=1e-9)


def test_iris_default_standardised_equals_scaled_svc():
    df = _iris_df()
    fit = svm("species ~ .", df, C=1.0, tol=1e-7)
    X = df.drop(columns="species").to_numpy()
    pipe = make_pipeline(StandardScaler(), SVC(C=1.0, decision_function_shape="ovo", tol=1e-7))
    pipe.fit(X, df.species)
    np.testing.assert_allclose(fit.predict(df, type="link").to_numpy(), pipe.decision_function(X), atol=1e-5)
    assert list(fit.predict(df)) == list(pipe.predict(X))
    dc = fit.dual_coef
    assert list(dc.index) == list(df.index[fit.support_]) and dc.shape[1] == 3


def test_votes_and_ties_follow_libsvm():
    # overlapping classes: many test points get one vote each (a 1-1-1 tie); libsvm then
    # predicts the class listed first
    rng = np.random.default_rng(1)
    df, _ = _three_class(200, rng)
    X = df[["x1", "x2"]].to_numpy()
    fit = svm(X, df.y, gamma=2.0, C=5.0, standardize=False, tol=1e-8)
    s = SVC(gamma=2.0, C=5.0, decision_function_shape="ovo", tol=1e-8).fit(X, df.y)
    Xn = rng.uniform(-3, 3, size=(20000, 2))
    F = fit.predict(Xn, type="link").to_numpy()
    v = np.column_stack(
        [(F[:, 0] > 0) + (F[:, 1] > 0), (F[:, 0] <= 0) + (F[:, 2] > 0), (F[:, 1] <= 0) + (F[:, 2] <= 0)]
    )
    ties = np.all(v == 1, axis=1)
    assert ties.sum() > 5
    pred = fit.predict(Xn).to_numpy()
    assert np.all(pred[ties] == "a")
    # away from the solver's resolution the labels equal libsvm's
    ok = np.min(np.abs(F), axis=1) > 1e-4
    assert np.array_equal(pred[ok], s.predict(Xn)[ok])


def test_shared_callable_kernel_equals_builtin_kernel():
    # a callable kernel is evaluated once and its blocks are shared by the pairs
    X, y = _iris()
    Z = (X - X.mean(0)) / X.std(0)

    def rbf(A, B):
        d2 = np.sum(A**2, 1)[:, None] + np.sum(B**2, 1)[None] - 2 * A @ B.T
        return np.exp(-0.25 * np.maximum(d2, 0.0))

    a = svm(X, y, gamma=0.25, tol=1e-9)
    b = svm(X, y, kernel=rbf, tol=1e-9)
    np.testing.assert_allclose(a.predict(X, type="link"), b.predict(X, type="link"), atol=1e-7)
    s = SVC(kernel="precomputed", C=1.0, decision_function_shape="ovo", tol=1e-9).fit(rbf(Z, Z), y)
    np.testing.assert_allclose(b.predict(X, type="link").to_numpy(), s.decision_function(rbf(Z, Z)), atol=1e-6)


def _coupling_objective(p, R):
    K = len(p)
    return sum((R[j, i] * p[i] - R[i, j] * p[j]) ** 2 for i in range(K) for j in range(K) if j != i)


@pytest.mark.parametrize("K", [3, 4, 6])
def test_coupling_solves_its_defining_problem(K):
    rng = np.random.default_rng(K)
    for _ in range(5):
        r = rng.uniform(0.02, 0.98, K * (K - 1) // 2)
        R = pairwise_matrix(r, K)[0]
        p = pairwise_coupling(R)
        res = minimize(
            _coupling_objective,
            np.full(K, 1.0 / K),
            args=(R,),
            method="SLSQP",
            bounds=[(0, 1)] * K,
            constraints=[{"type": "eq", "fun": lambda q: q.sum() - 1}],
            options={"ftol": 1e-15, "maxiter": 500},
        )
        assert res.success
        np.testing.assert_allclose(p, res.x, atol=1e-6)
        assert _coupling_objective(p, R) <= res.fun + 1e-12
        assert p.min() >= 0 and p.sum() == pytest.approx(1.0, abs=1e-14)
    # K = 2: coupling returns the pairwise probability itself
    np.testing.assert_allclose(pairwise_coupling(pairwise_matrix([0.3], 2)), [[0.3, 0.7]], atol=1e-14)


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_coupling_reproduces_libsvm_probabilities():
    # libsvm's -b 1: pairwise Platt sigmoids (probA_, probB_) on the ovo decision values,
    # coupled by the same method; libsvm stops its fixed-point iteration at 0.005/K
    X, y = _iris()
    rng = np.random.default_rng(0)
    X = X + 0.3 * rng.normal(size=X.shape)
    s = SVC(C=1.0, gamma=0.5, probability=True, random_state=0, decision_function_shape="ovo").fit(X, y)
    F = s.decision_function(X)
    r = 1.0 / (1.0 + np.exp(F * s.probA_ + s.probB_))
    P = pairwise_coupling(pairwise_matrix(r, 3))
    Q = s.predict_proba(X)
    assert np.abs(P - Q).max() < 0.005
    assert np.abs(P - Q).mean() < 5e-4


def test_probabilities_every_method():
    df = _iris_df()
    fit = svm("species ~ .", df, C=1.0)
    X = df.drop(columns="species").to_numpy()
    Z = (X - X.mean(0)) / X.std(0)
    for method in ("platt", "sollich", "coherence", "bracket"):
        P = fit.predict(df, type="prob", method=method)
        assert list(P.columns) == list(NAMES)
        np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-12)
        assert P.to_numpy().min() >= 0
        # the coupled probabilities come from the binary method applied to each pair's SVM
        r = fit.pairwise_prob(X, method=method)
        np.testing.assert_allclose(P.to_numpy(), pairwise_coupling(pairwise_matrix(r, 3)), atol=1e-12)
    # pair "setosa vs virginica" with Platt: an independent binary fit on those rows
    rows = df.species.isin(["setosa", "virginica"]).to_numpy()
    sub = svm(Z[rows], df.species[rows].to_numpy(), C=1.0, gamma=fit.kernel.kpar[0], standardize=False)
    f = sub.predict(Z, type="link").to_numpy()
    pv = 1.0 / (1.0 + np.exp(sub.platt.A * f + sub.platt.B))  # P(virginica)
    np.testing.assert_allclose(fit.pairwise_prob(X, method="platt")[:, 1], 1 - pv, atol=1e-6)


def test_platt_tuned_per_pair():
    df = _iris_df()
    fit = svm("species ~ .", df, C=1.0)
    res = fit.platt_tuned(grid=[1.0, 0.1, 0.01], D=2, random_state=3)
    assert len(res) == 3
    P = fit.predict(df.head(10), type="prob", method="platt_tuned")
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-12)
    best = [r.best_fit for r in res]
    X = df.drop(columns="species").to_numpy()[:10]
    Z = (X - fit._xcenter) / fit._xscale
    r = np.column_stack([1 - b.platt(b._decision(Z)) for b in best])
    np.testing.assert_allclose(P.to_numpy(), pairwise_coupling(pairwise_matrix(r, 3)), atol=1e-12)


def test_coupled_bracketing_on_a_three_class_simulation():
    # Known posteriors; coupling the bracketing estimates (new) is about as accurate as coupling
    # Platt's (libsvm's choice) at C = 1; both far better than the uniform guess.
    errs = {"platt": [], "bracket": []}
    for rep in range(2):
        rng = np.random.default_rng(100 + rep)
        tr, _ = _three_class(300, rng)
        te, P = _three_class(1000, rng)
        fit = svm("y ~ x1 + x2", tr, C=1.0)
        for m in errs:
            errs[m].append(np.mean(np.abs(fit.predict(te, type="prob", method=m).to_numpy() - P)))
    uniform = np.mean(np.abs(1 / 3 - P))
    assert np.mean(errs["bracket"]) < 0.06 and np.mean(errs["platt"]) < 0.06
    assert np.mean(errs["bracket"]) < 0.3 * uniform


def test_errors_and_contract_for_multiclass(tmp_path):
    df = _iris_df()
    with pytest.raises(ValueError, match="pi"):
        svm("species ~ .", df, pi=0.4)
    fit = svm("species ~ .", df)
    with pytest.raises(ValueError, match="not a path"):
        fit.predict(df, s=0.5)
    with pytest.raises(ValueError, match="not a path"):
        fit.select(0.5)
    assert fit.lambda_.shape == (1,) and fit.coef is None
    assert isinstance(fit.intercept, pd.Series) and len(fit.intercept) == 3
    text = str(fit.summary())
    assert "versicolor vs virginica" in text and "rows dropped" in text
    import matplotlib.axes
    import matplotlib.pyplot as plt

    assert isinstance(fit.plot(), matplotlib.axes.Axes)
    plt.close("all")
    fit.save(tmp_path / "svm.pkl")
    back = MulticlassSVMFit.load(tmp_path / "svm.pkl")
    pd.testing.assert_frame_equal(back.predict(df, type="prob"), fit.predict(df, type="prob"))
    # a class without rows (a Design keeps its classes when rows are taken) is an error naming it
    from cohstats.formula import build_design

    d = build_design("species ~ .", df)
    with pytest.raises(ValueError, match="setosa"):
        svm(d.take(np.flatnonzero(df.species != "setosa")))


def test_pi_path_per_pair():
    rng = np.random.default_rng(4)
    df, _ = _three_class(120, rng)
    fit = svm("y ~ x1 + x2", df, pi="path", m=6)
    P = fit.predict(df.head(20), type="prob")
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-12)
    # each pair's path gives the bracketing estimate on the grid j/6
    r = fit.pairwise_prob(df[["x1", "x2"]].to_numpy()[:20], method="bracket")
    assert np.all(np.isin(np.round(r * 12), np.arange(1, 12)))


def test_cv_tune_gkl_run_on_multiclass_svm():
    from cohstats.tuning import cv, gkl, tune

    df = _iris_df()
    foldid = np.tile(np.arange(5), 30)
    res = cv(svm, "species ~ .", df, foldid=foldid, measure="class", C=0.5, verbose=False)
    err = []
    for k in range(5):
        tr, te = df[foldid != k], df[foldid == k]
        f = svm("species ~ .", tr, C=0.5)
        err.append(np.mean(f.predict(te).to_numpy() != te.species.to_numpy()))
    assert res.cvm[0] == pytest.approx(np.mean(err), abs=1e-12)
    t = tune(svm, "species ~ .", df, grid={"C": [0.1, 1.0, 10.0]}, foldid=foldid, verbose=False)
    assert t.best_params["C"] in (0.1, 1.0, 10.0)
    assert isinstance(t.best_fit, MulticlassSVMFit)
    t2 = tune(svm, "species ~ .", df, grid={"lambda_": [0.1, 0.01]}, foldid=foldid, measure="cre", verbose=False)
    assert np.all(np.isfinite(t2.table["score"]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g = gkl(svm, "species ~ .", df, D=2, random_state=0, verbose=False, C=1.0)
    assert np.isfinite(g.estimate)
