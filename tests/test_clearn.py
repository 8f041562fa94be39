"""clearn(): the formula front end of C-learning, checked against scikit-learn, the solver layer
and closed-form properties (inverse link, interpolation along the path, weights)."""

import numpy as np
import pandas as pd
import pytest

from cohstats.formula import build_design
from cohstats.losses.binary import coherence_link
from cohstats.models.clearn import clearn
import cohstats as cs


@pytest.fixture(scope="module")
def df():
    rng = np.random.default_rng(0)
    d = pd.DataFrame(rng.normal(size=(120, 4)) * [1, 2, 0.5, 1], columns=["x1", "x2", "x3", "x4"])
    d["y"] = np.where(d.x1 - 0.5 * d.x2 + rng.normal(size=120) > 0, "yes", "no")
    d["g"] = np.select([d.x1 + 0.5 * rng.normal(size=120) < -0.5, d.x3 > 0.2], ["a", "b"], "c")
    return d


def test_rlrm_matches_sklearn_logistic(df):
    from sklearn.linear_model import LogisticRegression

    n = len(df)
    lam = 0.01
    fit = clearn(
        "y ~ x1 + x2 + x3 + x4", df, loss="V", rho=1.0, u=0.0, alpha=0.0, lambda_=lam, standardize=False, tol=1e-13
    )
    X = df[["x1", "x2", "x3", "x4"]].to_numpy()
    yb = (df.y == "yes").to_numpy()
    clf = LogisticRegression(C=1 / (n * lam), tol=1e-12, max_iter=10000).fit(X, yb)
    np.testing.assert_allclose(fit.coef.to_numpy(), clf.coef_.ravel(), rtol=1e-5)
    np.testing.assert_allclose(fit.intercept, clf.intercept_[0], rtol=1e-5)
    # loss="logistic" is the same model; probabilities are the logistic ones
    fit2 = clearn("y ~ x1 + x2 + x3 + x4", df, loss="logistic", alpha=0.0, lambda_=lam, standardize=False, tol=1e-13)
    np.testing.assert_allclose(fit2.coef.to_numpy(), fit.coef.to_numpy(), atol=1e-9)
    p = fit2.predict(type="prob")["yes"].to_numpy()
    np.testing.assert_allclose(p, clf.predict_proba(X)[:, 1], rtol=1e-5)


def test_probabilities_follow_coherence_link(df):
    fit = clearn("y ~ x1 + x2 + x3 + x4", df, rho=0.5, u=1.0, alpha=0.5)
    f = fit.predict(type="link").to_numpy()
    P = fit.predict(type="prob")
    assert list(P.columns) == ["no", "yes"]
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    np.testing.assert_allclose(P["yes"], coherence_link(f, 0.5, 1.0), rtol=1e-12)
    o = np.argsort(f)
    assert np.all(np.diff(P["yes"].to_numpy()[o]) >= 0)
    assert P.to_numpy().min() >= 0 and P.to_numpy().max() <= 1
    cls = fit.predict()
    assert np.all((cls == "yes").to_numpy() == (f > 0))


def test_path_interpolation_select_and_pathframe(df):
    fit = clearn("y ~ x1 + x2 + x3 + x4", df, alpha=1.0, nlambda=30)
    lam = fit.lambda_
    assert np.all(np.diff(lam) < 0) and len(lam) == 30
    assert np.all(fit._coef_path[0] == 0)
    s = np.sqrt(lam[10] * lam[11])
    t = (s - lam[11]) / (lam[10] - lam[11])
    expect = t * fit._coef_path[10] + (1 - t) * fit._coef_path[11]
    np.testing.assert_allclose(fit.select(s).coef.to_numpy(), expect, rtol=1e-12)
    X = fit.design.X
    np.testing.assert_allclose(
        fit.predict(type="link", s=s).to_numpy(),
        X @ expect + (t * fit._intercept_path[10] + (1 - t) * fit._intercept_path[11]),
    )
    dp = fit._decision_path(X)
    np.testing.assert_allclose(dp[7], fit.predict(type="link", s=lam[7]).to_numpy(), atol=1e-12)
    pp = fit._proba_path(X)
    assert pp.shape == (30, len(df))
    pf = fit.path()
    assert pf.xvar == "lambda" and pf.coef_columns == ["x1", "x2", "x3", "x4"]
    np.testing.assert_array_equal(pf["df"], np.count_nonzero(fit._coef_path, axis=1))
    assert pf["train_loss"].iloc[-1] < pf["train_loss"].iloc[0]
    # at lambda_max only the intercept is fitted: its loss is the 1-D minimum over b
    from scipy.optimize import minimize_scalar
    from cohstats.losses.binary import coherence_C

    yb = fit.design.y
    ref = minimize_scalar(
        lambda b: np.mean(coherence_C(yb * b, 1.0, 1.0)), bounds=(-5, 5), method="bounded", options=dict(xatol=1e-10)
    ).fun
    assert pf["train_loss"].iloc[0] == pytest.approx(ref, rel=1e-9)
    s_ = fit.summary()
    assert "Nonzero coefficients" in s_.tables and s_.info["alpha (l1 share)"] == 1.0


def test_design_and_matrix_input_give_the_same_fit(df):
    d = build_design("y ~ x1 + x2 + x3 + x4", df)
    f1 = clearn(d, alpha=0.5, nlambda=10)
    f2 = clearn(df[["x1", "x2", "x3", "x4"]].to_numpy(), df.y.to_numpy(), alpha=0.5, nlambda=10)
    np.testing.assert_allclose(f1._coef_path, f2._coef_path, atol=1e-12)
    f3 = clearn(d.take(np.arange(60)), alpha=0.5, nlambda=10)
    assert f3.nobs == 60


def test_integer_weights_equal_replicated_rows(df):
    k = np.random.default_rng(1).integers(1, 4, len(df))
    rep = df.loc[df.index.repeat(k)].reset_index(drop=True)
    f1 = clearn("y ~ x1 + x2", df, weights=k.astype(float), alpha=0.5, lambda_=0.01, tol=1e-12)
    f2 = clearn("y ~ x1 + x2", rep, alpha=0.5, lambda_=0.01, tol=1e-12)
    np.testing.assert_allclose(f1.coef.to_numpy(), f2.coef.to_numpy(), atol=1e-7)


def test_linear_kernel_equals_linear_expansion(df):
    lam = 0.02
    fl = clearn("y ~ x1 + x2 + x3", df, alpha=0.0, lambda_=lam, standardize=False, tol=1e-12)
    fk = clearn("y ~ x1 + x2 + x3", df, alpha=0.0, lambda_=lam, kernel="linear", standardize=False, tol=1e-12)
    np.testing.assert_allclose(fk.predict(type="link").to_numpy(), fl.predict(type="link").to_numpy(), atol=1e-5)
    new = df.head(5)
    np.testing.assert_allclose(
        fk.predict(new, type="prob").to_numpy(), fl.predict(new, type="prob").to_numpy(), atol=1e-5
    )
    assert fk.coef is None  # kernel expansions: no input-space coefficients
    assert isinstance(fk.intercept, float)


def test_rbf_kernel_fit_support_and_summary(df):
    fk = clearn("y ~ x1 + x2 + x3 + x4", df, kernel="rbf", alpha=0.5, nlambda=15)
    beta = fk._beta_at()[0]
    assert 0 < fk.support_.size <= len(df)
    np.testing.assert_array_equal(fk.support_, np.flatnonzero(beta))
    np.testing.assert_array_equal(fk.dual_coef["dual_coef"].to_numpy(), beta[fk.support_])
    # decision values are the kernel expansion over the (standardised) training inputs
    Z = (fk.design.X - fk._xcenter) / fk._xscale
    sig = fk._kernel.sigma
    D2 = ((Z[:, None, :] - Z[None, :, :]) ** 2).sum(-1)
    # default width gamma = "scale": 1 / (p Var(Z)) as scikit-learn (1/p on standardised inputs)
    assert 1.0 / sig**2 == pytest.approx(1.0 / (Z.shape[1] * Z.var()), rel=1e-12)
    iu = np.triu_indices(len(Z), 1)
    fm = clearn("y ~ x1 + x2 + x3 + x4", df, kernel="rbf", alpha=0.5, nlambda=15, gamma="mean")
    assert fm._kernel.sigma == pytest.approx(np.sqrt(D2[iu]).mean(), rel=1e-10)  # [ZDJ] 5.2
    f = np.exp(-D2 / sig**2) @ beta + fk._intercept_path[-1]
    np.testing.assert_allclose(fk.predict(type="link").to_numpy(), f, atol=1e-8)
    assert fk.converged
    assert "support points" in fk.summary().info


def test_multiclass_probabilities_and_grouping(df):
    fm = clearn("g ~ x1 + x2 + x3 + x4", df, alpha=0.5, nlambda=20)
    P = fm.predict(type="prob")
    assert list(P.columns) == ["a", "b", "c"]
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    G = fm.predict(type="link").to_numpy()
    np.testing.assert_allclose(G.sum(axis=1), 0, atol=1e-10)
    assert np.all(fm.predict().to_numpy() == np.array(["a", "b", "c"])[np.argmax(G, axis=1)])
    # training error well below the majority rate on this separable-ish problem
    err = np.mean(fm.predict().to_numpy() != df.g.to_numpy())
    assert err < 1 - df.g.value_counts(normalize=True).max() - 0.1
    assert fm.coef.shape == (4, 3)


def test_multiclass_kernel_fit(df):
    from cohstats.losses.multiclass import coherence_loss, coherence_proba
    from cohstats.losses.scalar import closs_kappa

    fm = clearn("g ~ x1 + x2 + x3 + x4", df, kernel="rbf", alpha=0.5, nlambda=12)
    assert fm.converged and fm.coef is None
    B, b = fm._beta_at()
    assert B.shape == (len(df), 3)
    np.testing.assert_allclose(B.sum(axis=1), 0, atol=1e-10)
    assert list(fm.intercept.index) == ["a", "b", "c"]
    assert fm.intercept.sum() == pytest.approx(0.0, abs=1e-10)
    # support points: rows of B that are nonzero (for all classes at once)
    sup = np.flatnonzero(np.any(B != 0, axis=1))
    assert 0 < sup.size < len(df)
    np.testing.assert_array_equal(fm.support_, sup)
    assert list(fm.dual_coef.columns) == ["a", "b", "c"]
    np.testing.assert_array_equal(fm.dual_coef.to_numpy(), B[sup])
    assert np.all(B[np.setdiff1d(np.arange(len(df)), sup)] == 0)
    # decision values: kernel expansion over the standardised training inputs, by hand
    X = df[["x1", "x2", "x3", "x4"]].to_numpy()
    Z = (X - X.mean(0)) / X.std(0)
    D2 = ((Z[:, None, :] - Z[None, :, :]) ** 2).sum(-1)
    Kmat = np.exp(-D2 / (Z.shape[1] * Z.var()))
    G = Kmat @ B + b
    np.testing.assert_allclose(fm.predict(type="link").to_numpy(), G, atol=1e-8)
    np.testing.assert_allclose(fm.predict(type="prob").to_numpy(), coherence_proba(G, 1.0), atol=1e-10)
    # the reported objective is the documented one ([ZJLY] loss times kappa + group penalty)
    y = pd.Categorical(df.g).codes
    lam = fm.s
    obj = closs_kappa(1.0, 1.0) * coherence_loss(G, y, 1.0).mean() + lam * (
        0.25 * np.trace(B.T @ Kmat @ B) + 0.5 * np.linalg.norm(B, axis=1).sum()
    )
    assert fm.info["objective"][-1] == pytest.approx(obj, rel=1e-9)
    assert fm.info["kkt"][-1] < 1e-4
    err = np.mean(fm.predict().to_numpy() != df.g.to_numpy())
    assert err < 1 - df.g.value_counts(normalize=True).max() - 0.1
    new = df.head(4).copy()
    np.testing.assert_allclose(fm.predict(new, type="prob").sum(axis=1), 1.0)
    assert "support points" in fm.summary().info
    assert len(fm.path()) == len(fm.lambda_)


def test_errors(df):
    with pytest.raises(ValueError, match="loss"):
        clearn("y ~ x1", df, loss="hinge")
    with pytest.raises(ValueError, match="alpha"):
        clearn("y ~ x1", df, alpha=2.0)
    with pytest.raises(ValueError, match="u"):
        clearn("y ~ x1", df, loss="C", u=0.0)
    with pytest.raises(ValueError, match="margin u = 1"):
        clearn("g ~ x1", df, u=2.0)
    with pytest.raises(ValueError, match="lambda_"):
        clearn("y ~ x1", df, lambda_=-1.0)
    with pytest.raises(ValueError, match="nlambda"):
        clearn("y ~ x1", df, nlambda=0)


# ------------------------------------------------------------------ multinomial logistic regression
def _three_class_frame(n=210, seed=4):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3))
    eta = X @ np.array([[1.5, -1.0, 0.0], [0.0, 1.0, -1.0], [0.5, 0.0, 0.0]])
    P = np.exp(eta - eta.max(1, keepdims=True))
    P /= P.sum(1, keepdims=True)
    y = np.array([rng.choice(3, p=row) for row in P])
    df = pd.DataFrame(X, columns=["x1", "x2", "x3"])
    df["y"] = np.array(["a", "b", "c"])[y]
    return df


def test_multinomial_logistic_equals_scikit_learn_at_a_matched_penalty():
    """clearn(loss="logistic") with K = 3: glmnet's grouped multinomial; at alpha = 0 without
    standardisation it is scikit-learn's LogisticRegression with C = 1/(n lambda)."""
    from sklearn.linear_model import LogisticRegression

    df = _three_class_frame()
    n, lam = len(df), 0.02
    fit = cs.clearn("y ~ x1 + x2 + x3", df, loss="logistic", alpha=0.0, lambda_=lam, standardize=False, tol=1e-12)
    ref = LogisticRegression(C=1.0 / (n * lam), tol=1e-12, max_iter=100000).fit(df[["x1", "x2", "x3"]], df["y"])
    P = fit.predict(df, type="prob")
    assert list(P.columns) == list(ref.classes_)
    np.testing.assert_allclose(P.to_numpy(), ref.predict_proba(df[["x1", "x2", "x3"]]), atol=1e-5)
    assert "Multinomial logistic regression" in str(fit.summary())


def test_multinomial_logistic_on_iris_is_as_good_as_scikit_learns_default():
    """The issue's check: a fixed 70/30 split of iris, cv(clearn, loss="logistic") against
    scikit-learn's LogisticRegression() -- test log-loss within 1.25 times."""
    from sklearn.datasets import load_iris
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import train_test_split

    d = load_iris(as_frame=True)
    df = d.frame.drop(columns="target")
    df.columns = ["sl", "sw", "pl", "pw"]
    df["y"] = np.asarray(d.target_names)[d.target]
    tr, te = train_test_split(df, test_size=0.3, random_state=0, stratify=df.y)
    res = cs.cv(cs.clearn, "y ~ .", data=tr, loss="logistic", random_state=0)
    P = res.predict(te, type="prob")
    yi = np.array([list(P.columns).index(v) for v in te.y])
    ours = -np.mean(np.log(P.to_numpy()[np.arange(len(te)), yi]))
    ref = LogisticRegression(max_iter=5000).fit(tr.drop(columns="y"), tr.y)
    theirs = -np.mean(np.log(ref.predict_proba(te.drop(columns="y"))[np.arange(len(te)), yi]))
    assert ours <= 1.25 * theirs, (ours, theirs)
