"""cv(), tune(), gkl(): against independent references (scikit-learn, closed forms, direct
Monte Carlo, brute-force selection rules)."""

import os
import sys

import matplotlib

matplotlib.use("Agg")
import numpy as np
import pandas as pd
import pytest
from scipy.special import expit
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import log_loss, roc_auc_score

sys.path.insert(0, os.path.dirname(__file__))
from _tuning_fits import (
    ridge_logit,
    ridge_logit_fixed,
    ridge_softmax,
    shrunk_mean,  # noqa: E402
    shrunk_softmax,
)

from cohstats import metrics as M  # noqa: E402
from cohstats.formula import build_design  # noqa: E402
from cohstats.tuning import (
    CVResult,
    GKLResult,
    TuneResult,
    _MEASURES,
    cv,
    gkl,  # noqa: E402
    make_folds,
    tune,
    wsl_grid,
)


@pytest.fixture(scope="module")
def df():
    rng = np.random.default_rng(0)
    n = 90
    X = rng.normal(size=(n, 2))
    p = expit(1.2 * X[:, 0] - 0.6 * X[:, 1] + 0.3)
    y = np.where(rng.random(n) < p, "yes", "no")
    return pd.DataFrame({"x1": X[:, 0], "x2": X[:, 1], "y": y})


# ------------------------------------------------------------------ grid and folds
def test_wsl_grid():
    g = wsl_grid()
    assert g.shape == (61,) and np.all(np.diff(g) < 0)
    assert g[-1] == 1e-3 and g[0] == pytest.approx(1e3)
    dec = np.sort(g[(g > 0.01) & (g <= 0.1 + 1e-15)])  # ten equally spaced points in (0.01, 0.1]
    np.testing.assert_allclose(dec, 0.01 * (1 + 0.9 * np.arange(1, 11)), rtol=1e-14)
    gl = wsl_grid("log")
    np.testing.assert_allclose(np.sort(gl), np.r_[1e-3, 10 ** (np.arange(1, 61) / 10 - 3)], rtol=1e-12)
    with pytest.raises(ValueError, match="spacing"):
        wsl_grid("cubic")


def test_folds_stratified_and_reproducible():
    y = np.array(["a"] * 37 + ["b"] * 23 + ["c"] * 14)
    f = make_folds(y, 10, random_state=3)
    assert f.max() == 9
    for c in "abc":
        counts = np.bincount(f[y == c], minlength=10)
        assert counts.max() - counts.min() <= 1 and counts.sum() == (y == c).sum()
    sizes = np.bincount(f)
    assert sizes.max() - sizes.min() <= 1
    np.testing.assert_array_equal(f, make_folds(y, 10, random_state=3))
    assert not np.array_equal(f, make_folds(y, 10, random_state=4))
    # SPEC D8: smallest class below K -> max(2, that count) folds
    assert make_folds([0] * 6 + [1] * 6, 10, random_state=0).max() + 1 == 6
    assert make_folds([0] * 1 + [1] * 20, 10, random_state=0).max() + 1 == 2
    fu = make_folds(y, 5, stratified=False, random_state=1)
    assert np.bincount(fu).tolist() == [15, 15, 15, 15, 14]
    with pytest.raises(ValueError, match="nfolds"):
        make_folds(y, 1)


# ------------------------------------------------------------------ cv against scikit-learn
def _sk_fold_outputs(df, foldid, lam):
    """Held-out probabilities of L2 logistic regression fitted by scikit-learn per fold."""
    X = df[["x1", "x2"]].to_numpy()
    y = (df["y"] == "yes").to_numpy().astype(int)
    P = np.empty((len(lam), len(y)))
    for k in np.unique(foldid):
        tr, te = foldid != k, foldid == k
        for j, l in enumerate(lam):
            lr = LogisticRegression(C=1.0 / (tr.sum() * l), tol=1e-12, max_iter=10000)
            lr.fit(X[tr], y[tr])
            P[j, te] = lr.predict_proba(X[te])[:, 1]
    return y, P


def _glmnet_cvm(F, W):
    cvm = (W[:, None] * F).sum(0) / W.sum()
    cvsd = np.sqrt((W[:, None] * (F - cvm) ** 2).sum(0) / W.sum() / (F.shape[0] - 1))
    return cvm, cvsd


def test_cv_path_matches_sklearn(df):
    foldid = make_folds(df["y"], 5, random_state=7)
    res = cv(ridge_logit, "y ~ x1 + x2", df, measure="cre", foldid=foldid, verbose=False)
    lam = res.lambda_
    assert isinstance(res, CVResult) and lam.shape == (12,)
    y, P = _sk_fold_outputs(df, foldid, lam)
    K = 5
    F = np.array(
        [[log_loss(y[foldid == k], P[j, foldid == k], labels=[0, 1]) for j in range(len(lam))] for k in range(K)]
    )
    W = np.array([(foldid == k).sum() for k in range(K)], float)
    cvm, cvsd = _glmnet_cvm(F, W)
    np.testing.assert_allclose(res.cvm, cvm, rtol=1e-6)
    np.testing.assert_allclose(res.cvsd, cvsd, rtol=1e-5)
    # class measure from the same fits
    resc = cv(ridge_logit, "y ~ x1 + x2", df, measure="class", foldid=foldid, verbose=False)
    Fc = np.array([[np.mean((P[j, foldid == k] > 0.5) != y[foldid == k]) for j in range(len(lam))] for k in range(K)])
    np.testing.assert_allclose(resc.cvm, _glmnet_cvm(Fc, W)[0], atol=1e-12)
    # AUC is a per-fold statistic (maximised)
    resa = cv(ridge_logit, "y ~ x1 + x2", df, measure="auc", foldid=foldid, verbose=False)
    Fa = np.array([[roc_auc_score(y[foldid == k], P[j, foldid == k]) for j in range(len(lam))] for k in range(K)])
    np.testing.assert_allclose(resa.cvm, _glmnet_cvm(Fa, W)[0], rtol=1e-6)
    assert resa.lambda_min == pytest.approx(lam[np.argmax(resa.cvm)])
    # best_fit is the full fit selected at lambda_min
    assert res.best_fit.s == res.lambda_min
    np.testing.assert_allclose(
        res.predict(df, type="prob", s="lambda.min")["yes"], res.fit.predict(df, type="prob", s=res.lambda_min)["yes"]
    )
    # predict defaults to lambda.1se, as cv.glmnet's predict
    np.testing.assert_allclose(
        res.predict(df, type="prob")["yes"], res.fit.predict(df, type="prob", s=res.lambda_1se)["yes"]
    )


def test_cv_nonpath_single_score(df):
    foldid = make_folds(df["y"], 6, random_state=2)
    res = cv(ridge_logit_fixed, "y ~ x1 + x2", df, measure="brier", foldid=foldid, lam=0.05, verbose=False)
    assert res.lambda_ is None and res.cvm.shape == (1,)
    y, P = _sk_fold_outputs(df, foldid, [0.05])
    F = np.array([[np.mean((y[foldid == k] - P[0, foldid == k]) ** 2)] for k in range(6)])
    W = np.bincount(foldid).astype(float)
    np.testing.assert_allclose(res.score, _glmnet_cvm(F, W)[0][0], rtol=1e-6)
    assert res.best_fit is res.fit


def test_cv_seeded_folds_and_d8(df):
    a = cv(ridge_logit, "y ~ x1 + x2", df, random_state=11, verbose=False)
    b = cv(ridge_logit, "y ~ x1 + x2", df, random_state=11, verbose=False)
    np.testing.assert_array_equal(a.foldid, b.foldid)
    np.testing.assert_array_equal(a.cvm, b.cvm)
    np.testing.assert_array_equal(a.foldid, make_folds(build_design("y ~ x1 + x2", df).y, 10, random_state=11))
    small = df.iloc[np.r_[np.flatnonzero(df["y"] == "no")[:4], np.flatnonzero(df["y"] == "yes")[:30]]]
    r = cv(ridge_logit, "y ~ x1 + x2", small, random_state=0, verbose=False)
    assert r.nfolds == 4


# ------------------------------------------------------------------ selection rules
def _brute_select(lam, cvm, cvsd):
    order = np.argsort(-lam)  # from most to least regularised
    best = min(cvm)
    i_min = next(i for i in order if cvm[i] == best)
    thr = cvm[i_min] + cvsd[i_min]
    i_1se = next(i for i in order if cvm[i] <= thr)
    return lam[i_min], lam[i_1se]


def test_lambda_min_and_1se_on_constructed_curve():
    from cohstats.tuning import _MEASURES

    lam = np.geomspace(10, 0.01, 9)
    rng = np.random.default_rng(0)
    center = np.array([0.50, 0.40, 0.31, 0.27, 0.25, 0.24, 0.26, 0.30, 0.35])
    F = center[None] + rng.normal(0, 0.03, size=(5, 9))
    F -= F.mean(0) - center  # fold means average exactly to `center`
    r = CVResult(
        measure=_MEASURES["cre"],
        lambda_=lam,
        fold_values=F,
        fold_weights=np.ones(5),
        foldid=np.arange(5),
        fit=None,
        call={},
        fit_name="constructed",
    )
    np.testing.assert_allclose(r.cvm, center, atol=1e-14)
    np.testing.assert_allclose(r.cvsd, F.std(0, ddof=1) / np.sqrt(5), rtol=1e-12)
    lmin, l1se = _brute_select(lam, r.cvm, r.cvsd)
    assert r.lambda_min == lmin == lam[5]
    assert r.lambda_1se == l1se
    assert r.lambda_1se > r.lambda_min
    assert r.cvm[r.index_1se] <= r.cvm[5] + r.cvsd[5] and r.cvm[r.index_1se - 1] > r.cvm[5] + r.cvsd[5]
    # ties go to the larger (more regularised) lambda
    F2 = np.tile([0.3, 0.2, 0.25, 0.2, 0.4], (4, 1))
    lam2 = np.array([5.0, 4.0, 3.0, 2.0, 1.0])
    r2 = CVResult(
        measure=_MEASURES["class"],
        lambda_=lam2,
        fold_values=F2,
        fold_weights=np.ones(4),
        foldid=np.arange(4),
        fit=None,
        call={},
        fit_name="ties",
    )
    assert r2.lambda_min == 4.0 and r2.lambda_1se == 4.0  # sd = 0
    # AUC: larger is better
    r3 = CVResult(
        measure=_MEASURES["auc"],
        lambda_=lam2,
        fold_values=1 - F2,
        fold_weights=np.ones(4),
        foldid=np.arange(4),
        fit=None,
        call={},
        fit_name="auc",
    )
    assert r3.lambda_min == 4.0


# ------------------------------------------------------------------ GKL estimator
def test_gkl_linear_smoother_closed_form():
    """p_hat = expit(a + b * mean(y01)) ignores x: cov(Y01_i, logit p_hat) = (b/n) p(1-p) exactly,
    and E[sum_i cov_hat_i] = b p0 (1 - p0) for both centerings; D_hat is exactly 0."""
    rng = np.random.default_rng(1)
    n, a, b = 30, -0.4, 3.0
    X = rng.normal(size=(n, 1))
    y = np.where(rng.random(n) < 0.4, 1, -1)
    d = build_design(X, y)
    p0 = expit(a + b * np.mean((y + 1) / 2))
    within, pooled = [], []
    for seed in range(30):
        g = gkl(shrunk_mean, d, D=8, random_state=seed, a=a, b=b, verbose=False, initial="fit")
        assert isinstance(g, GKLResult)
        assert abs(g.d_hat) < 1e-12
        within.append(g.cov_term_within * n)
        pooled.append(g.cov_term_pooled * n)
        assert g.egkl == pytest.approx(M.cre(y, np.full(n, p0)), rel=1e-12)
        assert g.estimate == pytest.approx(g.egkl + g.cov_term + g.d_hat, rel=1e-14)
    target = b * p0 * (1 - p0)
    for v in (within, pooled):
        v = np.asarray(v)
        se = v.std(ddof=1) / np.sqrt(len(v))
        assert abs(v.mean() - target) < 4 * se, (v.mean(), target, se)
        assert se < 0.1 * target


def test_gkl_covariance_vs_direct_monte_carlo():
    """Near-unpenalised logistic regression (3 parameters): the true covariance penalty
    sum_i cov(Y01_i, logit p_hat(X_i) | X) by direct simulation from the true p, against the
    data-perturbation estimate averaged over datasets."""
    rng = np.random.default_rng(5)
    n = 60
    X = rng.normal(size=(n, 2))
    p = expit(X[:, 0] - 0.5 * X[:, 1])
    L, Y = [], []
    for _ in range(600):
        yy = np.where(rng.random(n) < p, 1, -1)
        L.append(ridge_logit_fixed(build_design(X, yy), lam=1e-3)._decision(X))
        Y.append((yy + 1) / 2)
    L, Y = np.array(L), np.array(Y)
    true = np.sum(np.mean((L - L.mean(0)) * (Y - Y.mean(0)), axis=0)) * 600 / 599
    est, est_pooled = [], []
    for r in range(6):
        yy = np.where(rng.random(n) < p, 1, -1)
        g = gkl(ridge_logit_fixed, X, yy, D=8, random_state=r, lam=1e-3, verbose=False, initial="fit")
        est.append(g.cov_term * n)
        est_pooled.append(g.cov_term_pooled * n)
    assert 2.6 < true < 3.9  # ~ trace of the hat matrix = 3
    assert abs(np.mean(est) - true) < 0.25 * true, (np.mean(est), true)
    assert np.mean(est_pooled) > 1.8 * true  # the literal pooled centring is biased


def test_gkl_common_random_numbers_and_path_grouping(df):
    lam = np.array([1.0, 0.3, 0.1, 0.03, 0.01])
    g = gkl(ridge_logit, "y ~ x1 + x2", df, D=5, random_state=3, lambda_=lam, verbose=False)
    assert g.estimate.shape == (5,)
    # the same seed gives the same perturbations for every value: a one-value path at lam[2]
    # and a non-path fit at lam[2] reproduce the grid's entry
    g2 = gkl(ridge_logit, "y ~ x1 + x2", df, D=5, random_state=3, lambda_=lam[2:3], verbose=False)
    g3 = gkl(ridge_logit_fixed, "y ~ x1 + x2", df, D=5, random_state=3, lam=lam[2], verbose=False)
    assert g2.estimate == pytest.approx(g.estimate[2], rel=1e-8)  # one value: not a path
    assert g3.estimate == pytest.approx(g.estimate[2], rel=1e-8)
    np.testing.assert_allclose(g3.cov, g.cov[2], rtol=1e-6, atol=1e-12)
    assert g.lambda_min == lam[np.argmin(g.estimate)]
    assert g.best_fit.s == g.lambda_min
    # tune(method="gkl") over the lambda grid is the same computation
    t = tune(ridge_logit, "y ~ x1 + x2", df, grid={"lambda_": lam}, method="gkl", D=5, random_state=3, verbose=False)
    np.testing.assert_allclose(t.to_frame()["score"], g.estimate, rtol=1e-12)
    assert t.best_params["lambda_"] == g.lambda_min


def test_gkl_multiclass_equals_binary_for_two_classes(df):
    """The package's one (K-class) estimator reduces exactly to [WSL] eq. (13) for K = 2: the
    binary formula, written out in tests/_gkl_reference.py, gives the same numbers."""
    from _gkl_reference import binary_gkl

    from cohstats.tuning import _gkl_many, _Perturbation, _seed_seq

    d = build_design("y ~ x1 + x2", df)
    lam = np.array([1.0, 0.1, 0.01])
    full = ridge_logit(d, lambda_=lam)
    for centering in ("within", "pooled"):
        pert = _Perturbation(0.5, 4, _seed_seq(1), centering, "data", None, "fit")
        a = _gkl_many(ridge_logit, d, [{"lambda_": lam}], [full], pert, None, False, None)[0]
        est, cov, d_hat = binary_gkl(ridge_logit, d, {"lambda_": lam}, full, 0.5, 4, _seed_seq(1), centering=centering)
        np.testing.assert_allclose(a.estimate, est, rtol=1e-12)
        np.testing.assert_allclose(a.cov, cov, rtol=1e-9, atol=1e-15)
        np.testing.assert_allclose(a.d_hat, d_hat, rtol=1e-9, atol=1e-15)


def test_gkl_multiclass_linear_smoother_closed_form():
    """p_hat = softmax(a + b * class frequencies) ignores x; linearised, the covariance penalty is
    sum_i sum_k cov(1[Y_i = k], log p_hat_k) = b sum_k p_k (1 - p_k), the estimator's target at p0."""
    rng = np.random.default_rng(4)
    n, K, b = 40, 3, 4.0
    X = rng.normal(size=(n, 1))
    y = rng.choice(K, size=n, p=[0.5, 0.3, 0.2])
    est = []
    for seed in range(30):
        g = gkl(shrunk_softmax, X, y, D=8, random_state=seed, b=b, verbose=False, initial="fit")
        assert g.d_hat == 0.0 and g.cov.shape == (n,) and g.p0.shape == (n, K)
        est.append(g.cov_term * n)
    p0 = g.p0[0]
    assert g.egkl == pytest.approx(M.cross_entropy(y, g.p0), rel=1e-12)
    target = b * np.sum(p0 * (1 - p0))
    est = np.asarray(est)
    se = est.std(ddof=1) / np.sqrt(len(est))
    assert abs(est.mean() - target) < 4 * se and se < 0.05 * target, (est.mean(), target, se)


@pytest.mark.slow
def test_gkl_multiclass_softmax_vs_direct_monte_carlo():
    """Multinomial logistic regression (6 free parameters): direct Monte Carlo penalty ~ 6.4; the
    perturbation estimate is lower (the input perturbation shrinks it, as in the binary case)
    but of the right size."""
    rng = np.random.default_rng(3)
    n, K = 90, 3
    X = rng.normal(size=(n, 2))
    F = X @ np.array([[1.0, -0.5, 0.0], [0.0, 0.8, -0.8]])
    P = np.exp(F) / np.exp(F).sum(1, keepdims=True)
    draw = lambda: np.array([rng.choice(K, p=r) for r in P])  # noqa: E731
    L, E = [], []
    for _ in range(400):
        yy = draw()
        L.append(np.log(ridge_softmax(X, yy, lam=1e-3)._proba(X)))
        E.append(np.eye(K)[yy])
    L, E = np.array(L), np.array(E)
    true = np.sum(np.mean((L - L.mean(0)) * (E - E.mean(0)), axis=0)) * 400 / 399
    est = np.mean(
        [
            gkl(ridge_softmax, X, draw(), D=8, random_state=r, lam=1e-3, verbose=False, initial="fit").cov_term * n
            for r in range(5)
        ]
    )
    assert 5.5 < true < 7.5
    assert 0.5 * true < est < 1.1 * true, (est, true)


def _wsl_example1(rng, n_total=1000, n_train=100):
    """[WSL] Example 1 (SPEC 9.1, D31): uniform on the unit disk, y = +1 iff x1 >= 0, exactly 20 % flipped."""
    r = np.sqrt(rng.random(n_total))
    t = rng.uniform(0, 2 * np.pi, n_total)
    X = np.c_[r * np.cos(t), r * np.sin(t)]
    y = np.where(X[:, 0] >= 0, 1, -1)
    flip = rng.choice(n_total, size=n_total // 5, replace=False)
    y[flip] *= -1
    p = np.where(X[:, 0] >= 0, 0.8, 0.2)
    idx = rng.permutation(n_total)
    return X[idx[:n_train]], y[idx[:n_train]], X[idx[n_train:]], p[idx[n_train:]]


@pytest.mark.parametrize("reps,step", [(4, 2), pytest.param(10, 1, marks=pytest.mark.slow)])
def test_gkl_tuning_on_wsl_example1_close_to_oracle(reps, step):
    """Minimising the GKL estimate over the [WSL] grid picks a lambda whose true GKL_c (on the
    900 test points, true p known) is close to the oracle's (the best lambda of the grid)."""
    rng = np.random.default_rng(2008)
    grid = wsl_grid()[::step]
    gaps, gaps_max = [], []
    for rep in range(reps):
        X, y, Xt, pt = _wsl_example1(rng)
        t = tune(ridge_logit, X, y, grid={"lambda_": grid}, method="gkl", random_state=rep, verbose=False)
        full = t.results[0].fit
        true = np.array([M.gkl_c(pt, full._proba(Xt, s=l)) for l in full.lambda_])
        chosen = true[np.flatnonzero(full.lambda_ == t.best_params["lambda_"])[0]]
        gaps.append(chosen - true.min())
        gaps_max.append(true[0] - true.min())  # the most regularised grid value
    assert np.mean(gaps) < 0.02, gaps
    assert np.mean(gaps) < np.mean(gaps_max) / 4


# ------------------------------------------------------------------ tune
def test_tune_holdout_lum_style(df):
    train, valid = df.iloc[:50], df.iloc[50:]
    lam = 10 ** np.linspace(-3, 1, 9)
    t = tune(
        ridge_logit,
        "y ~ x1 + x2",
        train,
        grid={"lambda_": lam},
        method="holdout",
        validation=valid,
        verbose=False,
        measure="class",
    )
    assert isinstance(t, TuneResult)
    X, y = train[["x1", "x2"]].to_numpy(), (train["y"] == "yes").astype(int).to_numpy()
    Xv, yv = valid[["x1", "x2"]].to_numpy(), (valid["y"] == "yes").astype(int).to_numpy()
    errs = {}
    for l in lam:
        lr = LogisticRegression(C=1.0 / (len(y) * l), tol=1e-12, max_iter=10000).fit(X, y)
        errs[l] = np.mean((lr.decision_function(Xv) > 0) != yv)
    tab = t.to_frame().set_index("lambda")
    for l in lam:
        assert tab.loc[l, "score"] == pytest.approx(errs[l], abs=1e-12)
    best = min(errs.values())
    assert t.best_params["lambda_"] == max(l for l in lam if errs[l] == best)  # ties: larger lambda
    assert t.best_fit.s == t.best_params["lambda_"]


def test_tune_cv_grid_and_ties(df):
    foldid = make_folds(df["y"], 5, random_state=1)
    grid = {"lam": [0.5, 0.05, 0.005]}
    t = tune(ridge_logit_fixed, "y ~ x1 + x2", df, grid=grid, method="cv", measure="cre", foldid=foldid, verbose=False)
    for j, l in enumerate(grid["lam"]):
        r = cv(ridge_logit_fixed, "y ~ x1 + x2", df, measure="cre", foldid=foldid, lam=l, verbose=False)
        assert t.table["score"].iloc[j] == r.score and t.table["se"].iloc[j] == r.cvsd[0]
    assert t.best_params == {"lam": grid["lam"][int(np.argmin(t.table["score"]))]}
    assert t.best_fit.call["lam"] == t.best_params["lam"]
    # exact ties (a grid argument that the fit ignores): the value listed first wins
    t2 = tune(
        ridge_logit_fixed,
        "y ~ x1",
        df,
        grid={"tag": ["c", "a", "b"]},
        method="cv",
        measure="class",
        foldid=foldid,
        lam=0.1,
        verbose=False,
    )
    assert t2.table["score"].nunique() == 1 and t2.best_params == {"tag": "c"}
    # a path fit's lambda_ handed as a sequence: one path per combination, scored along it
    t3 = tune(
        ridge_logit,
        "y ~ x1 + x2",
        df,
        grid={"lambda_": [0.1, 0.01, 1.0]},
        method="cv",
        foldid=foldid,
        measure="cre",
        verbose=False,
    )
    r3 = cv(ridge_logit, "y ~ x1 + x2", df, foldid=foldid, measure="cre", lambda_=[1.0, 0.1, 0.01], verbose=False)
    np.testing.assert_allclose(t3.to_frame()["score"], r3.cvm, rtol=1e-12)
    assert t3.best_params["lambda_"] == r3.lambda_min


def test_reporting(df):
    r = cv(ridge_logit, "y ~ x1 + x2", df, measure="cre", random_state=0, verbose=False)
    fr = r.to_frame()
    assert list(fr.columns[:5]) == ["lambda", "measure", "se", "lower", "upper"]
    np.testing.assert_allclose(fr["upper"] - fr["lower"], 2 * fr["se"])
    s = r.summary()
    tab = s.to_frame()
    assert tab.loc["min", "lambda"] == r.lambda_min and tab.loc["1se", "lambda"] == r.lambda_1se
    ax = r.plot()
    xs = sorted(l.get_xdata()[0] for l in ax.get_lines() if len(l.get_xdata()) == 2)
    np.testing.assert_allclose(xs, sorted(np.log([r.lambda_min, r.lambda_1se])))
    assert "lambda_min" in repr(r)
    g = gkl(ridge_logit_fixed, "y ~ x1 + x2", df, D=3, random_state=0, lam=0.1, verbose=False)
    assert g.summary().to_frame()["gkl_c_hat"].iloc[0] == g.estimate
    t = tune(ridge_logit_fixed, "y ~ x1 + x2", df, grid={"lam": [0.1, 1.0]}, random_state=0, verbose=False)
    assert t.summary().info["best"] == f"lam={t.best_params['lam']!r}"
    t.plot()


def test_errors(df):
    with pytest.raises(ValueError, match="measure must be one of"):
        cv(ridge_logit, "y ~ x1", df, measure="accuracy")
    with pytest.raises(ValueError, match="nfolds"):
        cv(ridge_logit, "y ~ x1", df, nfolds=1)
    with pytest.raises(TypeError, match="fit_fn"):
        cv("clearn", "y ~ x1", df)
    with pytest.raises(ValueError, match="tau"):
        gkl(ridge_logit, "y ~ x1", df, tau=1.5)
    with pytest.raises(ValueError, match="D must be"):
        gkl(ridge_logit, "y ~ x1", df, D=1)
    with pytest.raises(ValueError, match="both in grid"):
        tune(ridge_logit_fixed, "y ~ x1", df, grid={"lam": [1.0]}, lam=0.1)
    with pytest.raises(ValueError, match="method must be"):
        tune(ridge_logit_fixed, "y ~ x1", df, grid={"lam": [1.0]}, method="aic")
    with pytest.raises(TypeError, match="validation"):
        tune(ridge_logit_fixed, "y ~ x1", df, grid={"lam": [1.0]}, method="holdout")
    with pytest.raises(ValueError, match="n_jobs"):
        cv(ridge_logit, "y ~ x1", df, n_jobs=0)
    d3 = df.assign(k=np.resize(["a", "b", "c"], len(df)))
    with pytest.raises(ValueError, match=r"\(n, 3\) matrix"):
        gkl(ridge_logit_fixed, "k ~ x1", d3)
    with pytest.raises(ValueError, match="auc"):
        cv(ridge_logit, "k ~ x1", d3, measure="auc")


# ------------------------------------------------------------------ parallel == serial == dask
def test_parallel_and_dask_identical(df):
    import joblib

    kw = dict(random_state=42, verbose=False)
    lam = np.array([1.0, 0.1, 0.01])
    r1 = cv(ridge_logit, "y ~ x1 + x2", df, measure="cre", nfolds=4, lambda_=lam, **kw)
    g1 = gkl(ridge_logit, "y ~ x1 + x2", df, D=3, lambda_=lam, **kw)
    r2 = cv(ridge_logit, "y ~ x1 + x2", df, measure="cre", nfolds=4, lambda_=lam, n_jobs=2, **kw)
    g2 = gkl(ridge_logit, "y ~ x1 + x2", df, D=3, lambda_=lam, n_jobs=2, **kw)
    np.testing.assert_array_equal(r1.cvm, r2.cvm)
    np.testing.assert_array_equal(g1.estimate, g2.estimate)
    np.testing.assert_array_equal(g1.cov, g2.cov)
    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(processes=False, n_workers=1, threads_per_worker=2, dashboard_address=None) as cluster,
        distributed.Client(cluster) as client,
    ):
        with joblib.parallel_backend("dask"), distributed.get_task_stream(client) as ts:
            r3 = cv(ridge_logit, "y ~ x1 + x2", df, measure="cre", nfolds=4, lambda_=lam, **kw)
            g3 = gkl(ridge_logit, "y ~ x1 + x2", df, D=3, lambda_=lam, **kw)
        assert len(ts.data) > 0  # the work ran on the dask cluster (joblib batches tasks)
    np.testing.assert_array_equal(r1.cvm, r3.cvm)
    np.testing.assert_array_equal(g1.estimate, g3.estimate)


def test_scheduler_argument_runs_on_a_two_worker_cluster(df):
    """cv / tune / gkl take a Dask client (or a scheduler address) and give the serial numbers."""
    distributed = pytest.importorskip("distributed")
    kw = dict(random_state=7, verbose=False)
    lam = np.array([1.0, 0.1, 0.01])
    serial = (
        cv(ridge_logit, "y ~ x1 + x2", df, measure="cre", nfolds=3, lambda_=lam, **kw),
        tune(ridge_logit_fixed, "y ~ x1 + x2", df, grid={"lam": [0.5, 0.05]}, nfolds=3, measure="cre", **kw),
        gkl(ridge_logit, "y ~ x1 + x2", df, D=2, lambda_=lam, **kw),
    )
    with (
        distributed.LocalCluster(processes=False, n_workers=2, threads_per_worker=1, dashboard_address=None) as cluster,
        distributed.Client(cluster) as client,
    ):
        with distributed.get_task_stream(client) as ts:
            r = cv(ridge_logit, "y ~ x1 + x2", df, measure="cre", nfolds=3, lambda_=lam, scheduler=client, **kw)
            t = tune(
                ridge_logit_fixed,
                "y ~ x1 + x2",
                df,
                grid={"lam": [0.5, 0.05]},
                nfolds=3,
                measure="cre",
                scheduler=cluster.scheduler_address,
                **kw,
            )
            g = gkl(ridge_logit, "y ~ x1 + x2", df, D=2, lambda_=lam, scheduler=client, **kw)
        assert len(ts.data) > 0
    np.testing.assert_array_equal(serial[0].cvm, r.cvm)
    np.testing.assert_array_equal(serial[1].table["score"], t.table["score"])
    np.testing.assert_array_equal(serial[2].estimate, g.estimate)
    with pytest.raises(TypeError, match="scheduler"):
        cv(ridge_logit, "y ~ x1 + x2", df, scheduler=3, **kw)


def test_cv_multiclass_matches_sklearn():
    rng = np.random.default_rng(8)
    n, K = 75, 3
    X = rng.normal(size=(n, 2))
    F = X @ np.array([[1.0, -0.5, 0.0], [0.0, 0.8, -0.8]])
    P = np.exp(F) / np.exp(F).sum(1, keepdims=True)
    y = np.array([rng.choice(K, p=r) for r in P])
    foldid = make_folds(y, 5, random_state=0)
    res = cv(ridge_softmax, X, y, measure="cre", foldid=foldid, lam=0.01, verbose=False)
    resb = cv(ridge_softmax, X, y, measure="brier", foldid=foldid, lam=0.01, verbose=False)
    Fce, Fb = [], []
    for k in range(5):
        tr, te = foldid != k, foldid == k
        lr = LogisticRegression(C=1.0 / (tr.sum() * 0.01), tol=1e-12, max_iter=10000).fit(X[tr], y[tr])
        Pk = lr.predict_proba(X[te])
        Fce.append([log_loss(y[te], Pk, labels=range(K))])
        Fb.append([np.mean(np.sum((np.eye(K)[y[te]] - Pk) ** 2, axis=1))])
    W = np.bincount(foldid).astype(float)
    assert res.score == pytest.approx(_glmnet_cvm(np.array(Fce), W)[0][0], rel=1e-6)
    assert resb.score == pytest.approx(_glmnet_cvm(np.array(Fb), W)[0][0], rel=1e-6)


def test_progress_bar_silent_off_terminal(df, capfd):
    cv(ridge_logit, "y ~ x1 + x2", df, nfolds=3, random_state=0, verbose=True)
    gkl(ridge_logit_fixed, "y ~ x1 + x2", df, D=2, random_state=0, verbose=True)
    out, err = capfd.readouterr()
    assert out == "" and err == ""


def test_cv_weighted_matches_sklearn(df):
    w = np.random.default_rng(9).uniform(0.3, 3.0, len(df))
    foldid = make_folds(df["y"], 4, random_state=5)
    res = cv(ridge_logit_fixed, "y ~ x1 + x2", df, measure="cre", foldid=foldid, weights=w, lam=0.02, verbose=False)
    X = df[["x1", "x2"]].to_numpy()
    y = (df["y"] == "yes").to_numpy().astype(int)
    F, W = [], []
    for k in range(4):
        tr, te = foldid != k, foldid == k
        lr = LogisticRegression(C=1.0 / (tr.sum() * 0.02), tol=1e-12, max_iter=10000)
        lr.fit(X[tr], y[tr], sample_weight=w[tr])
        F.append([log_loss(y[te], lr.predict_proba(X[te])[:, 1], sample_weight=w[te], labels=[0, 1])])
        W.append(w[te].sum())
    cvm, cvsd = _glmnet_cvm(np.array(F), np.array(W))
    assert res.score == pytest.approx(cvm[0], rel=1e-6)
    assert res.cvsd[0] == pytest.approx(cvsd[0], rel=1e-5)


def test_formula_context_is_the_callers(df):
    def sq(x):
        return x**2

    r = cv(ridge_logit_fixed, "y ~ sq(x1)", df, nfolds=3, random_state=0, verbose=False)
    np.testing.assert_allclose(r.fit.design.X[:, 0], df["x1"].to_numpy() ** 2)
    g = gkl(ridge_logit_fixed, "y ~ sq(x1)", df, D=2, random_state=0, verbose=False)
    assert g.fit.xnames == ["sq(x1)"]


def test_tune_rule_1se_matches_cv_lambda_1se(df):
    foldid = make_folds(df["y"], 5, random_state=3)
    lam = np.geomspace(3, 1e-3, 10)
    t = tune(
        ridge_logit,
        "y ~ x1 + x2",
        df,
        grid={"lambda_": lam},
        method="cv",
        measure="cre",
        foldid=foldid,
        rule="1se",
        verbose=False,
    )
    r = cv(ridge_logit, "y ~ x1 + x2", df, measure="cre", foldid=foldid, lambda_=lam, verbose=False)
    assert t.best_params["lambda_"] == r.lambda_1se
    assert r.lambda_1se > r.lambda_min
    with pytest.raises(ValueError, match="1se"):
        tune(ridge_logit, "y ~ x1 + x2", df, grid={"lambda_": lam}, method="gkl", rule="1se")


def test_svm_integration_nonpath_lambda_grid(df):
    """svm() takes one lambda_: tune() hands the grid over value by value; probabilities via
    prob_args reach predict(type='prob', method=...)."""
    svm = pytest.importorskip("cohstats.models.svm").svm
    foldid = make_folds(df["y"], 3, random_state=0)
    t = tune(
        svm,
        "y ~ x1 + x2",
        df,
        grid={"lambda_": [1.0, 0.01]},
        method="cv",
        measure="cre",
        foldid=foldid,
        kernel="linear",
        pi=None,
        prob_args={"method": "sollich"},
        verbose=False,
    )
    assert list(t.to_frame()["lambda_"]) == [1.0, 0.01]
    xs = [l.get_xdata() for l in t.plot().get_lines() if len(l.get_xdata()) == 2]
    np.testing.assert_allclose(sorted(xs[0]), np.log([0.01, 1.0]))
    for j, lam in enumerate([1.0, 0.01]):
        r = cv(
            svm,
            "y ~ x1 + x2",
            df,
            measure="cre",
            foldid=foldid,
            kernel="linear",
            pi=None,
            lambda_=lam,
            prob_args={"method": "sollich"},
            verbose=False,
        )
        assert t.to_frame()["score"].iloc[j] == r.score
        # independent check of the fold scores: Sollich probabilities of the fold fits
        y = (df["y"] == "yes").to_numpy()
        F = []
        for k in range(3):
            fk = svm("y ~ x1 + x2", df[foldid != k], kernel="linear", pi=None, lambda_=lam)
            pk = fk.predict(df[foldid == k], type="prob", method="sollich")["yes"].to_numpy()
            F.append([log_loss(y[foldid == k], pk, labels=[False, True])])
        assert r.score == pytest.approx(_glmnet_cvm(np.array(F), np.bincount(foldid).astype(float))[0][0], rel=1e-10)
    g = gkl(
        svm,
        "y ~ x1 + x2",
        df,
        D=2,
        random_state=0,
        kernel="linear",
        pi=None,
        lambda_=0.1,
        prob_args={"method": "platt"},
        verbose=False,
    )
    assert np.isfinite(g.estimate) and g.cov.shape == (len(df),)


def test_selection_follows_sequence_order_for_increasing_paths():
    """A path whose sequence increases (boosting steps, C): the earlier, more regularised value wins."""
    steps = np.array([10.0, 20.0, 30.0, 40.0])
    F = np.tile([0.30, 0.25, 0.25, 0.26], (3, 1)) + np.array([[0.0], [0.01], [-0.01]])
    r = CVResult(
        measure=_MEASURES["class"],
        lambda_=steps,
        fold_values=F,
        fold_weights=np.ones(3),
        foldid=np.arange(3),
        fit=None,
        call={},
        fit_name="steps",
    )
    assert r.lambda_min == 20.0
    assert r.lambda_1se == 20.0  # 0.30 > 0.25 + se (se = 0.0058)


def test_tuned_lum_one_liner_matches_tune_lum():
    """[LZW] tuned LUM as a tune() one-liner (a = 1000, c in {0, 1e4}, lambda by validation error)
    selects what the LUM module's own loop (tune_lum) selects."""
    lum_mod = pytest.importorskip("cohstats.models.lum")
    from cohstats.datasets import make_lum52

    train, valid = make_lum52(100, random_state=11), make_lum52(100, random_state=12)
    grid = {"c": [0.0, 1e4], "lambda_": lum_mod.LUM_LAMBDA_GRID}
    t = tune(
        lum_mod.lum,
        "y ~ x1 + x2",
        train,
        grid=grid,
        method="holdout",
        validation=valid,
        a=1000,
        verbose=False,
        measure="class",
    )
    ref = lum_mod.tune_lum("y ~ x1 + x2", train, validation=valid, a=1000)
    assert t.best_params["c"] == ref.c_selected
    assert t.best_params["lambda_"] == pytest.approx(ref.s)
    # the validation errors themselves, recomputed from the selected path fits
    f = t.best_fit
    err = M.error_rate(valid["y"].to_numpy(), f.predict(valid).to_numpy())
    assert t.best_score == pytest.approx(err, abs=1e-12)


def test_cv_clearn_path_integration():
    """cv() on clearn (a glmnet-style path fit): the folds refit the full-data lambda sequence and
    the curve equals the held-out cross-entropy of fold fits made directly with clearn."""
    clearn = pytest.importorskip("cohstats.models.clearn").clearn
    from cohstats.datasets import make_wsl1

    df = make_wsl1(120, random_state=4)
    foldid = make_folds(df["y"], 4, random_state=0)
    r = cv(
        clearn, "y ~ x1 + x2", df, loss="logistic", alpha=0.0, nlambda=15, measure="cre", foldid=foldid, verbose=False
    )
    assert r.lambda_.shape == (15,) and r.lambda_min is not None and r.lambda_1se >= r.lambda_min
    yy = df["y"].to_numpy()
    F = []
    for k in range(4):
        fk = clearn("y ~ x1 + x2", df[foldid != k], loss="logistic", alpha=0.0, lambda_=r.lambda_)
        F.append(
            [
                M.cre(yy[foldid == k], fk.predict(df[foldid == k], type="prob", s=l).iloc[:, 1].to_numpy())
                for l in r.lambda_
            ]
        )
    np.testing.assert_allclose(r.cvm, _glmnet_cvm(np.array(F), np.bincount(foldid).astype(float))[0], rtol=1e-9)
    assert r.best_fit.s == r.lambda_min


def test_tune_plot_draws_every_grid_point(df):
    lam = [1.0, 0.1, 0.01]
    t = tune(
        ridge_logit,
        "y ~ x1 + x2",
        df.iloc[:60],
        grid={"lambda_": lam},
        method="holdout",
        validation=df.iloc[60:],
        measure="brier",
        verbose=False,
    )
    ax = t.plot()
    line = [l for l in ax.get_lines() if len(l.get_xdata()) == 3][0]
    np.testing.assert_allclose(np.sort(line.get_xdata()), np.sort(np.log(lam)))
    np.testing.assert_allclose(line.get_ydata(), t.to_frame()["score"])
