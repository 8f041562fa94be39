"""svm(): libsvm's C-SVM by default, the package vocabulary and the result contract.

References: scikit-learn's SVC (libsvm) on the same problem, with and without a StandardScaler;
scipy's cdist for the median heuristic.
"""

import numpy as np
import pandas as pd
import pytest
from scipy.spatial.distance import cdist
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from cohstats.kernels import median_between
from cohstats.models.svm import psi_learn, svm


def _data(n=150, seed=0):
    rng = np.random.default_rng(seed)
    # unequal scales and offsets, so that scaling matters
    X = rng.normal(size=(n, 3)) * np.array([1.0, 10.0, 0.1]) + np.array([0.0, 50.0, -3.0])
    y = np.where(
        X[:, 0] + 0.1 * (X[:, 1] - 50) - 5 * (X[:, 2] + 3) ** 2 + 0.05 + 0.5 * rng.normal(size=n) > 0, "yes", "no"
    )
    return X, y


@pytest.mark.parametrize("kernel", ["rbf", "linear"])
def test_unweighted_default_is_libsvm_c_svm(kernel):
    X, y = _data()
    Xn, _ = _data(60, seed=5)
    kw = {"gamma": 0.02} if kernel == "rbf" else {}
    fit = svm(X, y, kernel=kernel, C=1, standardize=False, tol=1e-8, **kw)
    s = SVC(kernel=kernel, C=1, tol=1e-8, **kw).fit(X, y)
    ref = s.decision_function(Xn)
    got = fit.predict(Xn, type="link").to_numpy()
    # libsvm keeps its kernel cache in single precision (relative 6e-8 of entries up to 2 500
    # for the raw linear kernel here): agreement to ~1e-5 relative (rbf), 1e-4 (linear)
    rel = 1e-5 if kernel == "rbf" else 1e-4
    np.testing.assert_allclose(got, ref, atol=rel * max(1.0, np.abs(ref).max()))
    assert list(fit.predict(Xn)) == list(s.predict(Xn))
    # the same support points, and dual_coef with libsvm's sign convention (> 0 for classes[1])
    assert np.array_equal(fit.support_, np.sort(s.support_))
    order = np.argsort(s.support_)
    np.testing.assert_allclose(
        fit.dual_coef["dual_coef"].to_numpy(), s.dual_coef_[0][order], atol=rel * max(1.0, np.abs(s.dual_coef_).max())
    )
    # lambda_ = 1/(n C) gives the same fit
    lam = svm(X, y, kernel=kernel, lambda_=1 / (len(y) * 1.0), standardize=False, tol=1e-8, **kw)
    np.testing.assert_allclose(lam.predict(Xn, type="link"), got, atol=1e-10)


@pytest.mark.parametrize("kernel", ["rbf", "linear"])
def test_standardize_equals_standard_scaler_pipeline(kernel):
    X, y = _data()
    Xn, _ = _data(60, seed=6)
    fit = svm(X, y, kernel=kernel, C=2.0, tol=1e-8)  # standardize=True, gamma="scale"
    pipe = make_pipeline(StandardScaler(), SVC(kernel=kernel, C=2.0, tol=1e-8)).fit(X, y)
    ref = pipe.decision_function(Xn)
    np.testing.assert_allclose(fit.predict(Xn, type="link").to_numpy(), ref, atol=1e-5 * max(1.0, np.abs(ref).max()))
    if kernel == "rbf":
        # gamma="scale" = 1/(p Var(Z)) = 1/p on standardised columns
        assert fit.kernel.kpar[0] == pytest.approx(1 / 3, rel=1e-12)
        assert fit.coef is None
    else:
        # coefficients on the original scale: f(x) = x'coef + intercept
        f = Xn @ fit.coef.to_numpy() + fit.intercept
        np.testing.assert_allclose(f, ref, atol=1e-5 * np.abs(ref).max())
        sc = pipe[0]
        np.testing.assert_allclose(fit.coef.to_numpy(), pipe[1].coef_[0] / sc.scale_, rtol=1e-4, atol=1e-8)


def test_default_call_is_svc_defaults_after_scaling():
    X, y = _data(120, seed=2)
    fit = svm(X, y)
    ref = make_pipeline(StandardScaler(), SVC()).fit(X, y).decision_function(X)
    # both stop at the default KKT tolerance 1e-3
    np.testing.assert_allclose(fit.predict(X, type="link").to_numpy(), ref, atol=2e-3)
    assert fit.pi is None and fit.C == 1.0


def test_gamma_scale_sigma_and_width_errors():
    X, y = _data(80, seed=3)
    a = svm(X, y, standardize=False)
    assert a.kernel.kpar[0] == pytest.approx(1.0 / (X.shape[1] * X.var()), rel=1e-12)
    b = svm(X, y, sigma=2.0)
    c = svm(X, y, gamma=0.25)
    np.testing.assert_allclose(b.predict(X, type="link"), c.predict(X, type="link"), atol=1e-12)
    med = svm(X, y, gamma="median", standardize=False)
    D = cdist(X[y == "yes"], X[y == "no"])
    assert med.kernel.kpar[0] == pytest.approx(1 / np.median(D) ** 2, rel=1e-12)
    assert svm(X, y, sigma="median").kernel.kpar[0] == svm(X, y, gamma="median").kernel.kpar[0]
    with pytest.raises(ValueError, match="not both"):
        svm(X, y, sigma=1.0, gamma=0.5)
    for k in ("linear", None):
        with pytest.raises(ValueError, match="gamma.*kernel width"):
            svm(X, y, kernel=k, gamma=0.5)
        with pytest.raises(ValueError, match="sigma.*kernel width"):
            svm(X, y, kernel=k, sigma=1.0)
    with pytest.raises(ValueError, match="gamma"):
        svm(X, y, gamma="silverman")
    with pytest.raises(TypeError, match="standardize"):
        svm(X, y, standardize="yes")


def test_median_between_is_exact_below_the_threshold_and_bounded_above(monkeypatch):
    import cohstats.kernels as ck

    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 2))
    y = np.repeat([0, 1, 2], 200)  # three classes: every between-class pair
    X[y == 1] += 1.0
    full = np.concatenate([cdist(X[y == b], X[y == a]).ravel() for a in range(3) for b in range(a + 1, 3)])
    exact = median_between(X, y)
    assert exact == np.median(full)
    # binary labels: the pairs of the two classes
    assert median_between(X[y < 2], y[y < 2]) == np.median(cdist(X[y == 1], X[y == 0]))
    # above the subsample size every class is represented by a seeded subsample
    monkeypatch.setattr(ck, "WIDTH_SUBSAMPLE", 120)
    sub = median_between(X, y)
    assert sub == median_between(X, y) and sub != exact
    assert abs(sub - exact) < 0.05 * exact


def test_linear_kernel_none_and_coef():
    X, y = _data(100, seed=4)
    a = svm(X, y, kernel=None, C=0.5)
    b = svm(X, y, kernel="linear", C=0.5)
    np.testing.assert_allclose(a.coef.to_numpy(), b.coef.to_numpy(), atol=1e-12)
    assert isinstance(a.coef, pd.Series) and isinstance(a.intercept, float)
    r = svm(X, y, kernel="rbf")
    assert r.coef is None and isinstance(r.intercept, float)


def test_result_contract_attributes_and_s():
    X, y = _data(90, seed=7)
    df = pd.DataFrame(X, columns=["x1", "x2", "x3"], index=[f"r{i}" for i in range(len(y))])
    df["y"] = y
    df.loc["r3", "x2"] = np.nan
    fit = svm("y ~ x1 + x2 + x3", df, C=3.0)
    n = fit.nobs
    assert n == len(df) - 1
    assert isinstance(fit.lambda_, np.ndarray) and fit.lambda_.shape == (1,)
    assert fit.lambda_[0] == pytest.approx(1 / (n * 3.0)) and fit.s == fit.lambda_[0]
    assert fit.path_var == "lambda"
    dc = fit.dual_coef
    assert isinstance(dc, pd.DataFrame) and list(dc.columns) == ["dual_coef"]
    assert fit.support_.dtype.kind == "i"
    kept = df.index.drop("r3")
    assert list(dc.index) == list(kept[fit.support_])
    assert not hasattr(fit, "support") and not hasattr(fit, "alpha")
    with pytest.raises(AttributeError, match="dual_alpha_"):
        fit.alpha
    assert fit.dual_alpha_.shape == (n,)
    # s: the fitted value is accepted, anything else refused
    df = df.drop(index="r3")
    base = fit.predict(df, type="link")
    np.testing.assert_array_equal(fit.predict(df, type="link", s=fit.lambda_[0]), base)
    with pytest.raises(ValueError, match="not a path"):
        fit.predict(df, type="link", s=0.1)
    with pytest.raises(ValueError, match="not a path"):
        fit.predict(df, type="prob", s=0.1)
    with pytest.raises(TypeError, match="s must be a number"):
        fit.predict(df, s="abc")
    with pytest.raises(ValueError, match="not a path"):
        fit.select(0.1)
    with pytest.raises(TypeError, match="bogus"):
        fit.predict(df, type="prob", bogus=1)
    pd.testing.assert_frame_equal(fit.predict(df, type="response"), fit.predict(df, type="prob"))
    sm = fit.summary()
    assert sm.call.startswith("svm('y ~ x1 + x2 + x3'") and "C=3.0" in sm.call
    assert sm["rows dropped"] == 1
    assert any("missing" in n for n in sm.notes)
    text = str(sm)
    assert "rows dropped" in text and "Call:" in text
    import matplotlib.axes

    assert isinstance(fit.plot(), matplotlib.axes.Axes)
    import matplotlib.pyplot as plt

    plt.close("all")


def test_psi_learn_shares_the_vocabulary():
    X, y = _data(60, seed=8)
    p = psi_learn(X, y, kernel=None, C=1.0)
    assert p.pi is None and p.lambda_.shape == (1,) and isinstance(p.coef, pd.Series)
    with pytest.raises(ValueError, match="kernel width"):
        psi_learn(X, y, kernel="linear", gamma=1.0)
    q = psi_learn(X, y, gamma="median", standardize=False)
    D = cdist(X[y == "yes"], X[y == "no"])
    assert q.kernel.kpar[0] == pytest.approx(1 / np.median(D) ** 2, rel=1e-12)
