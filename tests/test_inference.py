"""Bootstrap percentile intervals (fit.confint): against refits by scikit-learn on the same
bootstrap samples, and exact checks (estimate inside its interval, seed, n_jobs)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression

import cohstats as cs
from cohstats.datasets import make_waveform, make_wsl2

N, LAM, SEED, B = 100, 0.02, 7, 40


@pytest.fixture(scope="module")
def df():
    return make_wsl2(N, random_state=0)


@pytest.fixture(scope="module")
def ridge(df):
    return cs.clearn("y ~ x1 + x2", df, loss="logistic", alpha=0.0, lambda_=LAM, standardize=False, tol=1e-13)


def _samples(y, n, b, seed):
    """The documented draw: rng.integers(0, n, n) in turn, redrawn when a class is missing."""
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < b:
        idx = rng.integers(0, n, size=n)
        if np.unique(y[idx]).size == np.unique(y).size:
            out.append(idx)
    return out


def test_ridge_logistic_intervals_equal_sklearn_refits(df, ridge):
    ci = ridge.confint(B=B, random_state=SEED, fit_args={"tol": 1e-13})
    X, y = df[["x1", "x2"]].to_numpy(), (df["y"] > 0).to_numpy().astype(int)
    reps, errs = [], []
    for idx in _samples(y, N, B, SEED):
        # clearn's objective mean(loss) + lambda/2 |b|^2 is LogisticRegression's with C = 1/(n lambda)
        clf = LogisticRegression(C=1.0 / (N * LAM), solver="newton-cholesky", tol=1e-12, max_iter=1000).fit(
            X[idx], y[idx]
        )
        reps.append(np.concatenate([clf.intercept_, clf.coef_.ravel()]))
        oob = np.setdiff1d(np.arange(N), idx)
        errs.append(np.mean(clf.predict(X[oob]) != y[oob]))
    R = np.array(reps)
    np.testing.assert_allclose(ci.replicates, R, rtol=1e-5, atol=1e-7)
    lo, hi = np.quantile(R, [0.025, 0.975], axis=0)
    np.testing.assert_allclose(ci.coef["lower"], lo, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(ci.coef["upper"], hi, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(ci.coef["se"], R.std(axis=0, ddof=1), rtol=1e-4)
    np.testing.assert_allclose(ci.oob_error, errs, atol=1e-12)
    assert ci.test_error["estimate"] == pytest.approx(np.mean(errs), abs=1e-12)
    assert (ci.test_error["lower"], ci.test_error["upper"]) == pytest.approx(
        tuple(np.quantile(errs, [0.025, 0.975])), abs=1e-12
    )
    assert list(ci.coef.index) == ["(Intercept)", "x1", "x2"]
    np.testing.assert_array_equal(ci.coef["estimate"], ridge.coef_at().to_numpy())


def test_reproducible_with_a_seed_and_the_same_in_parallel(df, ridge):
    a = ridge.confint(B=12, random_state=3)
    b = ridge.confint(B=12, random_state=3)
    c = ridge.confint(B=12, random_state=3, n_jobs=2)
    np.testing.assert_array_equal(a.replicates, b.replicates)
    # worker processes may sum with another BLAS thread count: equal to rounding
    np.testing.assert_allclose(a.replicates, c.replicates, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(a.oob_error, c.oob_error)
    pd.testing.assert_frame_equal(a.coef, c.coef, rtol=1e-10, atol=1e-12)
    assert not np.array_equal(a.replicates, ridge.confint(B=12, random_state=4).replicates)


@pytest.mark.parametrize(
    "make",
    [
        lambda d: cs.clearn("y ~ x1 + x2", d, loss="logistic", alpha=0.0, lambda_=0.05),
        lambda d: cs.lum("y ~ x1 + x2", d, lambda_=0.05),
        lambda d: cs.svm("y ~ x1 + x2", d, kernel="linear", lambda_=0.1),
    ],
    ids=["clearn", "lum", "svm"],
)
def test_interval_holds_the_estimate_and_shows_in_summary(df, make):
    fit = make(df)
    ci = fit.confint(B=60, level=0.9, random_state=0)
    t = ci.coef
    assert np.all(t["lower"] <= t["estimate"]) and np.all(t["estimate"] <= t["upper"])
    assert 0.0 <= ci.test_error["lower"] <= ci.test_error["estimate"] <= ci.test_error["upper"] <= 1.0
    sm = fit.summary()
    pd.testing.assert_frame_equal(sm.tables["Bootstrap 90% percentile intervals"], t)
    assert sm.info["test error (out-of-bag bootstrap, B=60)"] == ci.test_error["estimate"]


def test_path_fit_is_bootstrapped_at_its_s_and_k_classes(df):
    path = cs.clearn("y ~ x1 + x2", df, loss="logistic", alpha=0.0, nlambda=15)
    fit = path.select(path.lambda_[5])
    ci = fit.confint(B=6, random_state=0)
    assert ci.s == fit.s
    # replicate 1 by hand: the same arguments along the same sequence, at s
    idx = _samples((df["y"] > 0).to_numpy(), N, 1, 0)[0]
    rep = cs.clearn("y ~ x1 + x2", df.iloc[idx], loss="logistic", alpha=0.0, lambda_=path.lambda_)
    np.testing.assert_allclose(ci.replicates[0], rep.coef_at(fit.s).to_numpy(), rtol=1e-10, atol=1e-12)
    # the summary of another s does not show these intervals
    assert not any(k.startswith("Bootstrap") for k in fit.select(path.lambda_[9]).summary().tables)
    wf = make_waveform(90, random_state=1)
    k = cs.clearn("y ~ x1 + x2 + x3", wf, lambda_=0.05).confint(B=4, random_state=0)
    assert k.coef.shape[0] == 4 * 3 and k.coef.index.nlevels == 2


def test_refusals(df):
    with pytest.raises(ValueError, match="no.*coefficients|has none"):
        cs.clearn("y ~ x1 + x2", df, kernel="rbf", lambda_=0.1).confint(B=5)
    fit = cs.clearn("y ~ x1 + x2", df, lambda_=0.1)
    with pytest.raises(ValueError, match="B must be"):
        fit.confint(B=1)
    with pytest.raises(ValueError, match="level"):
        fit.confint(B=5, level=95)


def test_arguments_the_fit_does_not_record_are_asked_for(df):
    pf = [1.0, 5.0]
    fit = cs.clearn("y ~ x1 + x2", df, alpha=0.0, lambda_=0.05, penalty_factor=pf)
    with pytest.raises(ValueError, match="does not reproduce its coefficients.*fit_args"):
        fit.confint(B=5, random_state=0)
    ci = fit.confint(B=5, random_state=0, fit_args={"penalty_factor": pf})
    np.testing.assert_array_equal(ci.coef["estimate"], fit.coef_at().to_numpy())
