"""lamsvm(): the package vocabulary and result contract, and the bad-input regressions."""

import warnings

import numpy as np
import pandas as pd
import pytest

from cohstats.models.lamsvm import lamsvm


def _frame(n=90, K=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    cls = np.array(["a", "b", "c", "d", "e"][:K])
    score = X[:, 0] + 0.4 * rng.normal(size=n)
    y = cls[np.clip(np.digitize(score, np.linspace(-1, 1, K - 1)), 0, K - 1)]
    df = pd.DataFrame(X, columns=["x1", "x2"])
    df["y"] = y
    return df


def _link(fit, df):
    return fit.predict(df, type="link").to_numpy()


def test_lambda_is_one_over_n_C_and_a_lambda_path_runs_decreasing():
    df = _frame(n=80, seed=1)
    n, C = 80, 4.0
    f_c = lamsvm("y ~ x1 + x2", df, C=C, tol=1e-6)
    f_l = lamsvm("y ~ x1 + x2", df, lambda_=1.0 / (n * C), tol=1e-6)
    assert f_l.path_var == "lambda" and f_c.path_var == "C"
    np.testing.assert_allclose(_link(f_l, df), _link(f_c, df), atol=1e-10)
    lams = [1e-3, 1e-1, 1e-2]
    path = lamsvm("y ~ x1 + x2", df, lambda_=lams, tol=1e-6)
    assert list(path.lambda_) == sorted(lams, reverse=True) and path.s == 1e-3
    single = lamsvm("y ~ x1 + x2", df, C=1.0 / (n * 1e-2), tol=1e-6)
    a, b = path.predict(df, type="link", s=1e-2).to_numpy(), _link(single, df)
    assert np.abs(a - b).max() < 1e-3 * max(1.0, np.abs(b).max())


def test_sequence_of_margin_is_a_margin_path_with_s_honoured():
    df = _frame(n=70, seed=2)
    mp = lamsvm("y ~ x1 + x2", df, C=2, margin=[20, 4, 8], tol=1e-5)
    assert mp.path_var == "margin" and list(mp.lambda_) == [4, 8, 20] and mp.s == 20
    one = lamsvm("y ~ x1 + x2", df, C=2, margin=8, tol=1e-5)
    a, b = mp.predict(df, type="link", s=8).to_numpy(), _link(one, df)
    assert np.abs(a - b).max() < 1e-3 * max(1.0, np.abs(b).max())
    sel = mp.select(8)
    np.testing.assert_allclose(_link(sel, df), a)
    assert sel.summary().info["s (margin in use)"] == 8


def test_predict_s_validated_and_refused_on_non_path_fits():
    df = _frame(n=60)
    one = lamsvm("y ~ x1 + x2", df, C=2.0)
    with pytest.raises(TypeError, match="s must be a number"):
        one.predict(df, s="abc")
    with pytest.raises(ValueError, match="not a path"):
        one.predict(df, type="link", s=3.0)
    np.testing.assert_array_equal(one.predict(df, type="link", s=2.0).to_numpy(), _link(one, df))
    with pytest.raises(ValueError, match="not a path"):
        one.select(2.0)
    path = lamsvm("y ~ x1 + x2", df, C=[0.5, 5.0])
    with pytest.raises(ValueError, match="outside the fitted C range"):
        path.predict(df, s=50.0)
    with pytest.raises(TypeError, match="s must be a number"):
        path.select("abc")
    with pytest.raises(TypeError, match="foo"):
        one.predict(df, foo=1)
    with pytest.raises(TypeError, match="foo"):
        one.predict(df, type="prob", foo=1)


def test_contract_attribute_types():
    df = _frame(n=60, K=3)
    fit = lamsvm("y ~ x1 + x2", df)
    assert isinstance(fit.converged, bool) and fit.converged
    assert isinstance(fit.n_iter, int) and fit.n_iter > 0
    assert isinstance(fit.lambda_, np.ndarray) and fit.lambda_.ndim == 1
    # the default cost: 2 on libsvm's scale, C = 2 margin_scale(K, margin) = max(K - 1, 20) + 1 = 21
    assert fit.s == fit.lambda_[-1] == 21.0
    assert fit.support_.dtype.kind == "i"
    assert isinstance(fit.dual_coef, pd.DataFrame) and list(fit.dual_coef.columns) == fit.classes
    bi = lamsvm("y ~ x1 + x2", _frame(n=60, K=2))
    assert bi.predict(type="link").ndim == 1 and list(bi.dual_coef.columns) == bi.classes


def test_plots_return_labelled_axes():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    df = _frame(n=60)
    for fit in (
        lamsvm("y ~ x1 + x2", df, C=[0.5, 5.0]),
        lamsvm("y ~ x1 + x2", df, kernel=None, C=[0.5, 5.0]),
        lamsvm("y ~ x1 + x2", df, margin=[4, 10]),
    ):
        for ax in (fit.path().plot(), fit.plot()):
            assert isinstance(ax, matplotlib.axes.Axes)
            assert ax.get_xlabel() and ax.get_ylabel()
            assert ax.lines
        plt.close("all")
    ax = lamsvm("y ~ x1 + x2", df).path().plot()
    assert ax.get_ylabel().startswith("training error")
    plt.close("all")


def test_width_vocabulary():
    df = _frame(n=60, seed=3)
    ref = _link(lamsvm("y ~ x1 + x2", df, gamma=0.25, tol=1e-6), df)
    np.testing.assert_allclose(_link(lamsvm("y ~ x1 + x2", df, sigma=2.0, tol=1e-6), df), ref, atol=1e-10)
    # on standardised inputs "scale" = 1/(p Var Z) = 1/p = "auto"
    f_scale = lamsvm("y ~ x1 + x2", df, tol=1e-6)
    f_auto = lamsvm("y ~ x1 + x2", df, gamma="auto", tol=1e-6)
    assert f_scale.gamma == pytest.approx(0.5) and f_auto.gamma == 0.5
    # without standardising, "scale" follows scikit-learn's 1/(p X.var())
    X = df[["x1", "x2"]].to_numpy() * 3.0 + 1.0
    raw = lamsvm(X, df["y"].to_numpy(), standardize=False)
    assert raw.gamma == pytest.approx(1.0 / (2 * X.var()))
    with pytest.raises(TypeError, match="called 'gamma'"):
        lamsvm("y ~ x1 + x2", df, gamma_k=1.0)


def test_standardize_makes_the_fit_scale_invariant_and_linear_coef_on_original_scale():
    df = _frame(n=70, seed=4)
    big = df.copy()
    big["x1"] = big["x1"] * 1e4 + 7.0
    f = lamsvm("y ~ x1 + x2", df, tol=1e-6)
    g = lamsvm("y ~ x1 + x2", big, tol=1e-6)
    np.testing.assert_allclose(_link(g, big), _link(f, df), atol=1e-8)
    # linear: the fit equals the unstandardised fit on hand-standardised columns, mapped back
    lin = lamsvm("y ~ x1 + x2", big, kernel=None, tol=1e-7)
    Xb = big[["x1", "x2"]].to_numpy()
    mu, sd = Xb.mean(0), Xb.std(0)
    Z = (Xb - mu) / sd
    ref = lamsvm(Z, big["y"].to_numpy(), kernel=None, tol=1e-7, standardize=False)
    np.testing.assert_allclose(lin.coef.to_numpy(), ref.coef.to_numpy() / sd[:, None], rtol=1e-8)
    np.testing.assert_allclose(lin.intercept.to_numpy(), -(mu / sd) @ ref.coef.to_numpy(), rtol=1e-8, atol=1e-10)


def test_y_tilde_one_is_a_clear_error():
    df = _frame(n=30)
    with pytest.raises(ValueError, match="at least one predictor"):
        lamsvm("y ~ 1", df)


def test_huge_inputs_never_report_converged_with_nan():
    df = _frame(n=60, seed=5)
    X = df[["x1", "x2"]].to_numpy()
    y = df["y"].to_numpy()
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        huge = lamsvm(X * 1e300, y, tol=1e-6)
    small = lamsvm(X, y, tol=1e-6)
    assert huge.converged
    Fh = huge.predict(X * 1e300, type="link").to_numpy()
    assert np.all(np.isfinite(Fh))
    np.testing.assert_allclose(Fh, small.predict(X, type="link").to_numpy(), rtol=1e-6, atol=1e-9)
    with pytest.raises(ValueError, match="standardize=True"):
        lamsvm(X * 1e300, y, standardize=False)
    with pytest.raises(ValueError, match="standardize=True"):
        lamsvm(X * 1e300, y, kernel=None, standardize=False)


def test_continuous_response_is_refused():
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x": rng.normal(size=80), "y": rng.normal(size=80)})
    with pytest.raises(ValueError, match="is continuous"):
        lamsvm("y ~ x", df)
    df["y"] = np.arange(80).astype(float)  # integral but one value per row
    with pytest.raises(ValueError, match="looks like a continuous"):
        lamsvm("y ~ x", df)
    df["y"] = (np.arange(80) % 3).astype(float)  # few integral values: classes
    assert lamsvm("y ~ x", df).classes == [0.0, 1.0, 2.0]


def test_cv_refits_lambda_and_margin_paths_by_name():
    from cohstats.tuning import cv

    df = _frame(n=60, seed=9)
    folds = np.arange(60) % 3
    res = cv(lamsvm, "y ~ x1 + x2", df, margin=[2.0, 8.0], C=2.0, foldid=folds, verbose=False)
    assert list(res.lambda_) == [2.0, 8.0]
    wrong = 0
    for f in range(3):
        fit = lamsvm("y ~ x1 + x2", df[folds != f], margin=8.0, C=2.0)
        wrong += int(np.sum(fit.predict(df[folds == f]).to_numpy() != df.y.to_numpy()[folds == f]))
    assert res.cvm[1] == pytest.approx(wrong / 60, abs=1e-12)


def test_tune_over_margin_keeps_a_fixed_C_path():
    """Regression: tune(lamsvm, C=[...], grid={"margin": ...}) made margin a second path."""
    from cohstats.tuning import cv, tune

    df = _frame(n=60, seed=10)
    folds = np.arange(60) % 3
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = tune(
            lamsvm,
            "y ~ x1 + x2",
            df,
            grid={"margin": [2.0, 8.0]},
            C=[0.5, 2.0],
            foldid=folds,
            measure="class",
            verbose=False,
        )
        ref = cv(
            lamsvm,
            "y ~ x1 + x2",
            df,
            margin=res.best_params["margin"],
            C=[0.5, 2.0],
            foldid=folds,
            measure="class",
            verbose=False,
        )
    assert "margin" in res.best_params
    assert res.best_score == pytest.approx(float(np.min(ref.cvm)), abs=1e-12)


def test_weights_that_make_the_box_bound_vanish_are_refused():
    df = _frame(n=40, seed=11)
    with pytest.raises(ValueError, match="rescale the weights"):
        lamsvm("y ~ x1 + x2", df, weights=np.full(40, 1e-300))
    # weights act through C * w only: weights 4 with C = 0.5 equal weights 1 with C = 2
    a = lamsvm("y ~ x1 + x2", df, C=0.5, weights=np.full(40, 4.0), tol=1e-8)
    b = lamsvm("y ~ x1 + x2", df, C=2.0, tol=1e-8)
    np.testing.assert_allclose(_link(a, df), _link(b, df), atol=1e-8)
