"""Conformance suite: one result contract for every fit function (in the spirit of
scikit-learn's ``check_estimator``).

For every fit function x {binary, multiclass where allowed} x {linear, kernel where allowed}:
attribute names and types, probability rows summing to one with class-named columns,
``predict(s=)`` behaviour, ``select``, ``summary()`` in every renderer, ``path()`` and
``plot()``, a save/load round trip with identical predictions, and every tuner (``cv``,
``tune``, ``gkl``). The named regression tests at the end reproduce the defects this suite was
written against.
"""

from __future__ import annotations

import sys
import warnings

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

import cohstats as cs  # noqa: E402
from cohstats.results import PathFrame, Summary  # noqa: E402


def _data(n, K, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    if K == 2:
        eta = 1.5 * X[:, 0] - X[:, 1]
        y = np.where(rng.random(n) < 1 / (1 + np.exp(-eta)), "yes", "no")
    else:
        eta = np.column_stack([1.5 * X[:, 0], -1.5 * X[:, 0] + X[:, 1], np.zeros(n)])
        P = np.exp(eta - eta.max(1, keepdims=True))
        P /= P.sum(1, keepdims=True)
        y = np.array(["a", "b", "c"])[(rng.random(n)[:, None] > P.cumsum(1)).sum(1)]
    df = pd.DataFrame(X, columns=["x1", "x2", "x3"])
    df["g"] = pd.Categorical(rng.choice(["u", "v"], size=n))
    df["y"] = y
    return df


BIN = _data(90, 2, 1)
MULTI = _data(120, 3, 2)
NEW_BIN = _data(15, 2, 3)
NEW_MULTI = _data(15, 3, 4)

# (id, fit function name, kwargs, K)
CASES = [
    ("clearn-linear-2", "clearn", dict(nlambda=15), 2),
    ("clearn-rbf-2", "clearn", dict(kernel="rbf", nlambda=10), 2),
    ("clearn-linear-3", "clearn", dict(nlambda=10), 3),
    ("clearn-rbf-3", "clearn", dict(kernel="rbf", nlambda=8), 3),
    ("lum-linear-2", "lum", dict(nlambda=12), 2),
    ("lum-rbf-2", "lum", dict(kernel="rbf", lambda_=[1.0, 0.1, 0.01]), 2),
    ("lum-linear-3", "lum", dict(nlambda=12), 3),
    ("svm-rbf-2", "svm", dict(), 2),
    ("svm-linear-2", "svm", dict(kernel=None), 2),
    ("svm-rbf-3", "svm", dict(), 3),
    ("lamsvm-rbf-3", "lamsvm", dict(), 3),
    ("lamsvm-rbf-2", "lamsvm", dict(), 2),
    ("lamsvm-Cpath-3", "lamsvm", dict(C=[0.1, 1.0, 10.0]), 3),
    ("gboost_c-2", "gboost_c", dict(n_trees=8, nodes=4), 2),
    ("gboost_c-3", "gboost_c", dict(n_trees=8, nodes=4), 3),
    ("gboost-logit-3", "gboost", dict(loss="logit", n_trees=6, nodes=4), 3),
    ("cart-2", "cart", dict(random_state=0), 2),
    ("cart-3", "cart", dict(random_state=0), 3),
]
IDS = [c[0] for c in CASES]
FORMULA = "y ~ x1 + x2 + x3 + g"

_FITS: dict = {}


def _fit(case):
    cid, name, kw, K = case
    if cid not in _FITS:
        df = BIN if K == 2 else MULTI
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _FITS[cid] = getattr(cs, name)(FORMULA, df, **kw)
    return _FITS[cid]


def _new(case):
    return NEW_BIN if case[3] == 2 else NEW_MULTI


@pytest.fixture(params=CASES, ids=IDS)
def case(request):
    return request.param


# ============================================================================ attributes
def test_attributes_have_one_type(case):
    fit = _fit(case)
    K = case[3]
    assert isinstance(fit, cs.Fit)
    assert fit.classes == (["no", "yes"] if K == 2 else ["a", "b", "c"])
    assert isinstance(fit.converged, bool), "converged must be set by the fit (a bool)"
    assert isinstance(fit.n_iter, (int, np.integer)) and fit.n_iter >= 0
    lam = fit.lambda_
    assert isinstance(lam, np.ndarray) and lam.ndim == 1 and lam.dtype == np.float64 and lam.size >= 1
    assert isinstance(fit.path_var, str)
    if fit.is_path:
        assert np.any(np.isclose(fit.s, lam)) or lam.min() <= fit.s <= lam.max()
    c = fit.coef
    if c is not None:
        if K == 2:
            assert isinstance(c, pd.Series) and list(c.index) == fit.xnames
        else:
            assert isinstance(c, pd.DataFrame) and list(c.columns) == fit.classes
    b = fit.intercept
    assert b is None or isinstance(b, (float, pd.Series))
    if c is not None:
        assert b is not None, "a model with coefficients has an intercept"
    dc, sup = fit.dual_coef, fit.support_
    assert (dc is None) == (sup is None)
    if dc is not None:
        assert isinstance(dc, pd.DataFrame) and dc.shape[0] == sup.size
        assert isinstance(sup, np.ndarray) and sup.dtype.kind == "i"
        assert sup.size == 0 or (sup.min() >= 0 and sup.max() < fit.nobs)


def test_kernel_fits_report_their_intercept():
    fit = _fit(CASES[1])  # clearn rbf: summary prints an intercept, so must .intercept
    assert isinstance(fit.intercept, float)
    assert fit.coef is None
    assert fit.summary().info["intercept"] == pytest.approx(fit.intercept)


# ============================================================================ predict
def test_predict_types(case):
    fit = _fit(case)
    new = _new(case)
    cls = fit.predict(new)
    assert isinstance(cls, pd.Series) and len(cls) == len(new)
    assert set(cls.unique()) <= set(fit.classes)
    link = fit.predict(new, type="link")
    assert isinstance(link, (pd.Series, pd.DataFrame)) and np.all(np.isfinite(np.asarray(link)))
    try:
        P = fit.predict(new, type="prob")
    except NotImplementedError:
        pytest.fail("every fit function gives probabilities")
    assert list(P.columns) == fit.classes
    assert np.all(np.isfinite(P.to_numpy())) and np.all(P.to_numpy() >= 0)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-10)
    R = fit.predict(new, type="response")  # R's name for probabilities
    pd.testing.assert_frame_equal(P, R)


def test_predict_refuses_unknown_options(case):
    fit = _fit(case)
    with pytest.raises(TypeError, match="foo"):
        fit.predict(_new(case), type="prob", foo=1)
    with pytest.raises(TypeError, match="foo"):
        fit.predict(_new(case), foo=1)
    with pytest.raises(ValueError, match="type"):
        fit.predict(_new(case), type="probability")


def test_predict_s(case):
    fit = _fit(case)
    new = _new(case)
    with pytest.raises(TypeError, match="s must be a number"):
        fit.predict(new, s="abc")
    lam = fit.lambda_
    if fit.is_path:
        v = float(lam[len(lam) // 2])
        a = fit.predict(new, type="prob", s=v)
        b = fit.select(v).predict(new, type="prob")
        pd.testing.assert_frame_equal(a, b)
        # s is honoured: the two ends of the path give different predictions
        e0 = fit.predict(new, type="link", s=float(lam[0]))
        e1 = fit.predict(new, type="link", s=float(lam[-1]))
        assert not np.allclose(np.asarray(e0), np.asarray(e1))
        with pytest.raises(ValueError, match="outside"):
            fit.predict(new, s=float(lam.max()) * 10 + 10)
    else:
        # the value it was fitted at is accepted, any other refused
        pd.testing.assert_frame_equal(fit.predict(new, type="prob", s=float(lam[0])), fit.predict(new, type="prob"))
        with pytest.raises(ValueError, match="not a path"):
            fit.predict(new, s=float(lam[0]) * 3 + 1)
        with pytest.raises(ValueError, match="not a path"):
            fit.select(float(lam[0]) * 3 + 1)


def test_coef_at(case):
    fit = _fit(case)
    if fit.coef is None:
        with pytest.raises(ValueError, match="coefficients"):
            fit.coef_at()
        return
    c = fit.coef_at()
    assert c.index[0] == "(Intercept)"
    np.testing.assert_allclose(np.asarray(c.iloc[1:]), np.asarray(fit.coef))
    if fit.is_path:
        v = float(fit.lambda_[1])
        np.testing.assert_allclose(np.asarray(fit.coef_at(v).iloc[1:]), np.asarray(fit.select(v).coef))


# ============================================================================ reporting
def test_summary_renderers(case):
    fit = _fit(case)
    sm = fit.summary()
    assert isinstance(sm, Summary)
    text = str(sm)
    assert "Call:" in text and fit.method in text
    assert "rows dropped" in text
    if fit.is_path:
        assert any(k.startswith("s (") for k in sm.info)
    for out in (sm.to_markdown(), sm.to_latex(), sm.to_html()):
        assert isinstance(out, str) and len(out) > 50
    for bad in ("SPEC", "[D"):
        assert bad not in text, f"user-facing summary cites {bad!r}"


def test_path_and_plot_return_axes(case):
    fit = _fit(case)
    ax = fit.plot()
    assert isinstance(ax, matplotlib.axes.Axes), "plot() returns a matplotlib Axes"
    assert ax.get_ylabel() != ""
    plt.close("all")
    if fit.is_path:
        pf = fit.path()
        assert isinstance(pf, PathFrame) and len(pf) == len(fit.lambda_)
        ax = pf.plot()
        assert isinstance(ax, matplotlib.axes.Axes)
        if not pf.coef_columns:  # no coefficient paths: the label says what is drawn
            assert ax.get_ylabel() != "coefficient"
        plt.close("all")


def test_save_load_round_trip(case, tmp_path):
    fit = _fit(case)
    path = tmp_path / "fit.cohstats"
    fit.save(path)
    back = cs.load(path)
    new = _new(case)
    for t in ("class", "link", "prob"):
        a, b = fit.predict(new, type=t), back.predict(new, type=t)
        if isinstance(a, pd.DataFrame):
            pd.testing.assert_frame_equal(a, b, check_exact=True)
        else:
            pd.testing.assert_series_equal(a, b, check_exact=True)
    assert str(back.summary()) == str(fit.summary())


# ============================================================================ tuners
def _tuner_case_args(case):
    """Fit function, data and fit arguments; a fit's own seed goes through fit_kwargs."""
    cid, name, kw, K = case
    df = BIN if K == 2 else MULTI
    kw = dict(kw)
    if name in ("cart", "gboost_c", "gboost"):
        kw["fit_kwargs"] = {"random_state": kw.pop("random_state", 0)}
    return getattr(cs, name), df, kw


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_cv_runs_on_every_model(case):
    fn, df, kw = _tuner_case_args(case)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = cs.cv(fn, FORMULA, df, nfolds=3, random_state=0, verbose=False, **kw)
    assert np.all(np.isfinite(res.cvm)) or res.measure == "deviance"
    full = res.fit
    if full.is_path:
        assert res.lambda_ is not None and res.lambda_.shape == full.lambda_.shape
        assert res.lambda_min in full.lambda_
        res.best_fit.predict(_new(case), type="prob")
    else:
        assert res.lambda_ is None and res.cvm.shape == (1,)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_tune_runs_on_every_model(case):
    fn, df, kw = _tuner_case_args(case)
    name = case[1]
    grid = {
        "clearn": {"alpha": [0.5, 1.0]},
        "lum": {"c": [0.0, 1e4]},
        "svm": {"C": [0.5, 2.0]},
        "lamsvm": {"margin": [0.5, 1.0]} if "C" in kw else {"C": [0.5, 2.0]},
        "gboost_c": {"nodes": [2, 4]},
        "gboost": {"nodes": [2, 4]},
        "cart": {"min_node_size": [1, 5]},
    }[name]
    kw = {k: v for k, v in kw.items() if k not in grid}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = cs.tune(fn, FORMULA, df, grid=grid, nfolds=3, random_state=0, verbose=False, measure="class", **kw)
    assert set(grid) <= set(res.best_params)
    assert np.isfinite(res.best_score) and 0 <= res.best_score <= 1
    res.best_fit.predict(_new(case))


@pytest.mark.parametrize("case", [c for c in CASES if c[1] != "cart"], ids=[c[0] for c in CASES if c[1] != "cart"])
def test_gkl_runs_on_every_model(case):
    fn, df, kw = _tuner_case_args(case)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = cs.gkl(fn, FORMULA, df.iloc[:60], D=2, random_state=0, verbose=False, **kw)
    est = np.atleast_1d(res.estimate)
    assert np.all(np.isfinite(est))
    # the estimate is the training cross-entropy plus the two corrections
    np.testing.assert_allclose(
        est, np.atleast_1d(res.egkl) + np.atleast_1d(res.cov_term) + np.atleast_1d(res.d_hat), rtol=1e-12
    )


def test_tuners_in_parallel_equal_serial():
    kw = dict(nfolds=3, random_state=0, verbose=False)
    for fn, extra in (
        (cs.clearn, dict(nlambda=10)),
        (cs.gboost_c, dict(n_trees=5, nodes=4, fit_kwargs={"random_state": 0})),
    ):
        a = cs.cv(fn, FORMULA, MULTI, **kw, **extra)
        b = cs.cv(fn, FORMULA, MULTI, n_jobs=2, **kw, **extra)
        np.testing.assert_array_equal(a.cvm, b.cvm)


# ============================================================================ named regressions
def test_cv_gboost_c_chooses_the_number_of_steps():
    res = cs.cv(
        cs.gboost_c,
        "y ~ .",
        MULTI.drop(columns="g"),
        nfolds=3,
        random_state=0,
        verbose=False,
        n_trees=10,
        nodes=4,
        fit_kwargs={"random_state": 1},
    )
    assert res.fit.path_var == "step"
    np.testing.assert_array_equal(res.lambda_, np.arange(1, 11))
    assert res.lambda_min in set(range(1, 11))
    # the selected fit predicts at that step
    k = int(res.lambda_min)
    pd.testing.assert_frame_equal(
        res.best_fit.predict(NEW_MULTI, type="prob"), res.fit.predict(NEW_MULTI, type="prob", s=k)
    )


def test_default_cv_measure_is_a_proper_scoring_rule():
    res = cs.cv(cs.clearn, FORMULA, MULTI, nfolds=3, random_state=0, verbose=False, nlambda=5)
    assert res.measure == "deviance"
    assert "Deviance" in str(res.summary())


def test_renamed_arguments_name_the_new_spelling():
    cases = [
        (cs.gboost_c, {"T": 1.0}, "rho"),
        (cs.gboost_c, {"H": 5}, "n_trees"),
        (cs.lamsvm, {"gamma_k": 1.0}, "gamma"),
        (cs.clearn, {"lam": 0.1}, "lambda_"),
        (cs.lum, {"lamda": 0.1}, "lambda_"),
        (cs.lum, {"penalty": "l1"}, "alpha"),
        (cs.svm, {"cost": 1.0}, "C"),
        (cs.cart, {"alpha": 0.01}, "ccp_alpha"),
    ]
    for fn, kw, new in cases:
        with pytest.raises(TypeError, match=new):
            fn(FORMULA, BIN, **kw)


def test_one_vocabulary_runs_everywhere():
    """A newcomer's script with the package's names runs unchanged on every fit function."""
    new = NEW_BIN
    common = dict(standardize=True)
    fits = [
        cs.clearn(FORMULA, BIN, lambda_=[0.1, 0.01], alpha=0.5, kernel="rbf", gamma=0.5, **common),
        cs.lum(FORMULA, BIN, lambda_=[0.1, 0.01], alpha=0.5, **common),
        cs.svm(FORMULA, BIN, lambda_=0.01, kernel="rbf", gamma=0.5, **common),
        cs.lamsvm(FORMULA, BIN, lambda_=0.01, kernel="rbf", gamma=0.5, **common),
        cs.gboost_c(FORMULA, BIN, n_trees=5, **common),
    ]
    for f in fits:
        s = float(f.lambda_[-1])
        P = f.predict(new, type="response", s=s)
        np.testing.assert_allclose(P.sum(axis=1), 1.0)


def test_svm_and_lamsvm_standardize_by_default():
    for fn in (cs.svm, cs.lamsvm):
        a = fn(FORMULA, BIN)
        X = BIN[["x1", "x2", "x3"]].copy()
        b = fn("y ~ x1 + x2 + x3 + g", BIN.assign(x1=1000 * BIN.x1))
        # standardised inputs: rescaling a predictor leaves the classifier unchanged
        np.testing.assert_array_equal(
            a.predict(NEW_BIN).to_numpy(), b.predict(NEW_BIN.assign(x1=1000 * NEW_BIN.x1)).to_numpy()
        )
        assert X.shape[0] == a.nobs


def test_unweighted_svm_is_libsvm_c_svm():
    SVC = pytest.importorskip("sklearn.svm").SVC
    X = BIN[["x1", "x2", "x3"]].to_numpy()
    y = BIN["y"].to_numpy()
    fit = cs.svm(X, y, C=1.0, gamma=0.3, standardize=False, tol=1e-8)
    ref = SVC(C=1.0, gamma=0.3, tol=1e-8).fit(X, y)
    np.testing.assert_allclose(fit.predict(X, type="link").to_numpy(), ref.decision_function(X), atol=1e-5)


def test_summary_error_rates_carry_wilson_intervals():
    from statsmodels.stats.proportion import proportion_confint

    fit = _fit(CASES[3])  # lum: reports its training error
    sm = fit.summary()
    err = sm.info["training error"]
    lo, hi = proportion_confint(int(round(err * fit.nobs)), fit.nobs, alpha=0.05, method="wilson")
    assert sm.info["training error: 95% Wilson interval on the training rows"] == f"{lo:.4g} .. {hi:.4g}"
    assert any("not the test error" in note for note in sm.notes)


def test_progress_bars_show_in_notebooks_and_terminals_only(monkeypatch):
    from cohstats import validation
    from cohstats.tuning import parallel

    assert (
        parallel.progress_bar(10, "x", verbose=True) is None or parallel.in_notebook() or sys.stderr.isatty()
    )  # under pytest stderr is captured: no bar
    monkeypatch.setattr(validation, "in_notebook", lambda: True)  # the bars' home (parallel re-exports them)
    bar = parallel.progress_bar(10, "x", verbose=True)
    assert bar is not None
    bar.close()
    assert parallel.progress_bar(10, "x", verbose=False) is None


@pytest.mark.parametrize("name", ["clearn", "lum", "svm", "lamsvm", "gboost_c", "gboost", "cart"])
def test_every_fit_function_takes_verbose(name, monkeypatch, capsys):
    from cohstats import validation

    fn = getattr(cs, name)
    df = BIN if name == "lum" else MULTI
    with pytest.raises(TypeError, match="verbose"):
        fn(FORMULA, df, verbose="yes")
    monkeypatch.setattr(validation, "in_notebook", lambda: True)  # where a bar is shown
    fit = fn(FORMULA, df, verbose=True)
    out = capsys.readouterr()
    assert f"{name}: fitting" in out.out + out.err
    assert isinstance(fit, cs.Fit)
