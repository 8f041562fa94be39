"""Reliability regressions: small classes in cv, string predictors, constant predictors,
separable data, formulas without intercept, ``na_action`` values and clearer messages."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import cohstats as cs
from cohstats.formula import NA_ACTIONS
from cohstats.validation import Options

pytestmark = pytest.mark.filterwarnings("ignore::cohstats.exceptions.ConvergenceWarning")


def _df(n=40, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"x1": rng.normal(size=n), "x2": rng.normal(size=n)})
    df["y"] = np.where(df.x1 + rng.normal(size=n) > 0, "a", "b")
    return df


@pytest.mark.parametrize("fn", ["lum", "clearn", "gboost_c"])
def test_cv_refuses_a_class_of_one_member(fn):
    df = _df()
    df.loc[0, "y"] = "c"
    with pytest.raises(ValueError, match=r"class 'c' \(1 member\) .* too small for cross-validation"):
        cs.cv(getattr(cs, fn), "y ~ x1 + x2", df, nfolds=5, verbose=False)


def test_cv_refuses_folds_that_train_without_a_class():
    df = _df()
    foldid = np.where(df.y == "a", 0, 1)  # fold 1 trains on class 'a' only
    with pytest.raises(ValueError, match="training rows of fold 1 .* class"):
        cs.cv(cs.clearn, "y ~ x1 + x2", df, foldid=foldid, verbose=False, nlambda=3)


def test_string_dtype_predictor_is_a_factor_like_object():
    df = _df()
    g = np.random.default_rng(1).choice(["u", "v", "w"], len(df))
    a = cs.clearn("y ~ x1 + g", df.assign(g=pd.array(g, dtype="string")), nlambda=3)
    b = cs.clearn("y ~ x1 + g", df.assign(g=g.astype(object)), nlambda=3)
    assert a.design.xnames == b.design.xnames == ["x1", "g[T.v]", "g[T.w]"]
    assert a.design.X.tobytes() == b.design.X.tobytes()
    new = df.head(6).assign(g=pd.array(g[:6], dtype="string"))
    assert np.array_equal(a.predict(new, type="prob"), b.predict(new.assign(g=g[:6].astype(object)), type="prob"))


def test_lum_on_constant_predictors_does_not_claim_separation():
    y = np.array(["a"] * 10 + ["b"] * 20)
    df = pd.DataFrame({"x1": np.zeros(30), "x2": np.full(30, 3.0), "y": y})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit = cs.lum("y ~ x1 + x2", df)
    assert not [w for w in caught if "separate" in str(w.message)]
    # the intercept-only fit: probabilities are the class shares (up to the 1e-6 ridge)
    p = np.asarray(fit.predict(df.head(3), type="prob"), dtype=float)
    np.testing.assert_allclose(p, [[1 / 3, 2 / 3]] * 3, atol=1e-5)


def test_clearn_warns_on_separable_data_and_stays_finite():
    df = _df()
    df["y"] = np.where(df.x1 > 0, "a", "b")
    with pytest.warns(cs.exceptions.DataWarning, match="separate the classes of the training data perfectly"):
        fit = cs.clearn("y ~ x1 + x2", df)
    assert np.all(np.isfinite(fit.coef_path if hasattr(fit, "coef_path") else fit._coef_path))
    # not separable: no such warning
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cs.clearn("y ~ x1 + x2", _df(seed=2))
    assert not [w for w in caught if "separate the classes" in str(w.message)]


@pytest.mark.parametrize(
    "fn, formula",
    [
        ("lamsvm", "y ~ 0 + x1"),
        ("gboost_c", "y ~ x1 - 1"),
        ("cart", "y ~ x1 - 1"),
        ("svm", "y ~ x1 - 1"),
        ("lum", "y ~ x1 - 1"),
    ],
)
def test_no_intercept_formula_is_refused_where_it_cannot_be_honoured(fn, formula):
    with pytest.raises(ValueError, match="'- 1' / '\\+ 0'"):
        getattr(cs, fn)(formula, _df())


def test_no_intercept_formula_is_honoured_by_clearn():
    for kernel in (None, "rbf"):
        fit = cs.clearn("y ~ x1 - 1", _df(), kernel=kernel, nlambda=3)
        assert fit.design.intercept is False
        assert np.all(fit._intercept_path == 0)
    lin = cs.clearn("y ~ x1 - 1", _df(), nlambda=3)  # so the link at x1 = 0 is exactly 0
    assert np.asarray(lin.predict(pd.DataFrame({"x1": [0.0]}), type="link"), dtype=float).tolist() == [0.0]


FITS = ["clearn", "lum", "svm", "lamsvm", "gboost_c", "gboost", "cart", "psi_learn"]


@pytest.mark.parametrize("fn", FITS)
def test_every_fit_accepts_the_same_na_actions_and_lists_them(fn):
    assert NA_ACTIONS == ("omit", "exclude", "fail")  # R's na.omit, na.exclude, na.fail
    constraint = getattr(cs, fn).params["na_action"]
    assert isinstance(constraint, Options) and constraint.values == NA_ACTIONS
    with pytest.raises(ValueError) as err:
        getattr(cs, fn)("y ~ x1 + x2", _df(), na_action="drop")
    assert f"na_action=...) must be one of {', '.join(map(repr, NA_ACTIONS))}; got 'drop'" in str(err.value)


def test_scalar_first_argument_is_refused_as_such():
    with pytest.raises(TypeError, match=r"first argument must be a formula string .* got 42 \(int\)"):
        cs.svm(42, data=_df())


def test_numeric_column_given_as_strings_at_predict_is_named():
    df = _df()
    fit = cs.clearn("y ~ x1 + x2", df, nlambda=3)
    with pytest.raises(ValueError, match="newdata column 'x2' is not numeric"):
        fit.predict(df.assign(x2=df.x2.astype(str)))


def test_a_negative_s_is_refused_and_a_refit_names_the_argument():
    df = _df()
    fit = cs.svm("y ~ x1 + x2", df)
    with pytest.raises(ValueError, match=r"s must be a nonnegative value .* got -1\.0"):
        fit.predict(df, s=-1)
    with pytest.raises(ValueError, match=r"refit with lambda_=0\.5$"):
        fit.predict(df, s=0.5)
