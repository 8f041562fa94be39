"""Bad and awkward input for every fit function: a clear error or a sound fit, nothing between.

Hypothesis builds data frames with missing, infinite, huge and tiny values, constant and
duplicated columns, odd column names, mixed dtypes, one row, one class, continuous responses,
and calls every public fit function with them, then ``predict``, the tuners and save/load.
Every outcome must be either

* a ``ValueError`` / ``TypeError`` raised by cohstats itself (the innermost frame of the
  traceback is in the package, not in numpy, pandas, numba or formulaic) with a message, or
* a fit whose predictions are finite and whose probability rows sum to one.

The number of examples is bounded and derandomised so the default run stays short. The named
regression tests at the end are the cases of the audit that found silent wrong answers.
"""

from __future__ import annotations

import math
import os
import traceback
import warnings

import numpy as np
import pandas as pd
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import cohstats as cs  # noqa: E402

PKG = os.path.dirname(cs.__file__)
SETTINGS = settings(
    max_examples=int(os.environ.get("COHSTATS_BAD_INPUT_EXAMPLES", 12)),
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)

FIT_FUNCTIONS = {
    "clearn": dict(nlambda=5),
    "lum": dict(nlambda=5),
    "svm": dict(),
    "lamsvm": dict(),
    "gboost_c": dict(n_trees=3, nodes=2),
    "cart": dict(nfolds=2),
}

ODD_NAMES = ["x", "my var", "class", "lambda", "β", "x.1", "1st", "if", "a-b"]


def _raised_by_cohstats(exc: BaseException) -> bool:
    frames = traceback.extract_tb(exc.__traceback__)
    return bool(frames) and os.path.abspath(frames[-1].filename).startswith(os.path.abspath(PKG))


def _check_outcome(call):
    """Run ``call``; return the fit, or None after checking the error is a clear cohstats one."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return call()
        except (ValueError, TypeError) as exc:
            msg = str(exc)
            assert msg and len(msg) > 10, f"an error without a message: {exc!r}"
            assert _raised_by_cohstats(exc), f"{type(exc).__name__} from outside cohstats: {msg}\n" + "".join(
                traceback.format_tb(exc.__traceback__)[-3:]
            )
            return None
        except NotImplementedError as exc:
            assert _raised_by_cohstats(exc) and str(exc)
            return None


def _check_fit(fit, newdata):
    for t in ("class", "link", "prob"):
        out = _check_outcome(lambda: fit.predict(newdata, type=t))
        if out is None:
            continue
        if t == "class":
            assert set(pd.unique(out)) <= set(fit.classes)
            continue
        a = np.asarray(out, dtype=float)
        assert np.all(np.isfinite(a)), f"non-finite {t} values from a fit that reported success"
        if t == "prob":
            np.testing.assert_allclose(a.sum(axis=1), 1.0, atol=1e-8)
            assert np.all(a >= 0)
    if fit.converged:
        link = np.asarray(fit.predict(type="link"), dtype=float)
        assert np.all(np.isfinite(link)), "converged=True with non-finite decision values"


@st.composite
def frames(draw):
    n = draw(st.sampled_from([1, 2, 5, 12, 30]))
    ncol = draw(st.integers(1, 3))
    names = draw(st.lists(st.sampled_from(ODD_NAMES), min_size=ncol, max_size=ncol))
    finite = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)
    special = st.sampled_from([np.nan, np.inf, -np.inf, 1e300, -1e300, 1e-300, 0.0])
    kind = draw(st.sampled_from(["plain", "special", "constant", "huge", "tiny", "int", "str", "bool"]))
    cols = {}
    for j, name in enumerate(names):
        if kind == "special" and j == 0:
            vals = draw(st.lists(st.one_of(finite, special), min_size=n, max_size=n))
        elif kind == "constant" and j == 0:
            vals = [draw(finite)] * n
        elif kind == "str" and j == 0:
            vals = draw(st.lists(st.sampled_from(["u", "v", "ü w"]), min_size=n, max_size=n))
        elif kind == "bool" and j == 0:
            vals = draw(st.lists(st.booleans(), min_size=n, max_size=n))
        elif kind == "int" and j == 0:
            vals = draw(st.lists(st.integers(-5, 5), min_size=n, max_size=n))
        else:
            vals = draw(st.lists(finite, min_size=n, max_size=n))
            if kind == "huge":
                vals = [v * 1e150 for v in vals]
            elif kind == "tiny":
                vals = [v * 1e-150 for v in vals]
        key = name if name not in cols else f"{name}_{j}"
        cols[key] = vals
    df = pd.DataFrame(cols)
    ykind = draw(st.sampled_from(["two", "three", "one", "float", "intmany", "bool", "nan"]))
    if ykind == "two":
        y = draw(st.lists(st.sampled_from(["no", "yes"]), min_size=n, max_size=n))
    elif ykind == "three":
        y = draw(st.lists(st.sampled_from(["a", "b", "c"]), min_size=n, max_size=n))
    elif ykind == "one":
        y = ["only"] * n
    elif ykind == "float":
        y = draw(st.lists(finite, min_size=n, max_size=n))
    elif ykind == "intmany":
        y = list(range(n))
    elif ykind == "bool":
        y = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    else:
        y = draw(st.lists(st.sampled_from(["no", "yes", None]), min_size=n, max_size=n))
    df["resp"] = y
    return df


def _formula(df):
    return "resp ~ " + " + ".join(f"`{c}`" for c in df.columns if c != "resp")


@pytest.mark.parametrize("name", sorted(FIT_FUNCTIONS))
@SETTINGS
@given(df=frames())
def test_every_fit_function_errors_clearly_or_fits_soundly(name, df):
    fn = getattr(cs, name)
    kw = FIT_FUNCTIONS[name]
    fit = _check_outcome(lambda: fn(_formula(df), df, **kw))
    if fit is not None:
        _check_fit(fit, df.drop(columns="resp"))


@pytest.mark.parametrize("name", ["clearn", "gboost_c", "svm"])
@SETTINGS
@given(df=frames())
def test_tuners_error_clearly_or_run(name, df):
    fn = getattr(cs, name)
    kw = FIT_FUNCTIONS[name]
    res = _check_outcome(lambda: cs.cv(fn, _formula(df), df, nfolds=2, verbose=False, random_state=0, **kw))
    if res is not None:
        assert res.cvm.shape[0] >= 1


@SETTINGS
@given(
    bad=st.sampled_from(
        [
            {"lambda_": -1.0},
            {"lambda_": "abc"},
            {"lambda_": [0.1, np.nan]},
            {"alpha": 2.0},
            {"alpha": "l1"},
            {"standardize": "no"},
            {"standardize": 1},
            {"nlambda": 0},
            {"nlambda": 2.5},
            {"kernel": "gauss"},
            {"gamma": -1.0},
            {"gamma": "wide"},
            {"tol": 0.0},
            {"max_iter": -3},
            {"weights": "nosuchcolumn"},
            {"subset": "x >"},
            {"na_action": "drop"},
            {"lamda": 0.1},
            {"rho": 0.0},
            {"loss": "hinge"},
            {"sigma": 1.0},
        ]
    )
)
def test_bad_arguments_name_themselves(bad):
    df = pd.DataFrame({"x": np.arange(20.0), "z": np.sin(np.arange(20.0)), "resp": ["a", "b"] * 10})
    with pytest.raises((ValueError, TypeError)) as info:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cs.clearn("resp ~ x + z", df, **bad)
    key = next(iter(bad))
    assert key in str(info.value) or key.rstrip("_") in str(info.value)
    if key == "na_action":  # the accepted values themselves, not just the argument's name
        from cohstats.formula import NA_ACTIONS

        assert f"must be one of {', '.join(map(repr, NA_ACTIONS))}; got 'drop'" in str(info.value)
    assert _raised_by_cohstats(info.value)


# ============================================================================ named regressions
def _df(n=80, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"x1": rng.normal(size=n), "x2": rng.normal(size=n), "y": rng.choice(["a", "b"], size=n)})


@pytest.mark.parametrize("name", ["clearn", "lamsvm", "gboost_c", "lum", "svm"])
def test_continuous_response_is_refused(name):
    df = _df()
    df["y"] = np.random.default_rng(1).normal(size=len(df))
    with pytest.raises(ValueError, match="continuous"):
        getattr(cs, name)("y ~ x1 + x2", df)


def test_many_valued_integer_response_is_refused():
    df = _df().assign(y=np.arange(80))
    with pytest.raises(ValueError, match="declare it categorical"):
        cs.clearn("y ~ x1 + x2", df)
    # a few integer codes are class labels
    assert cs.clearn("y ~ x1 + x2", df.assign(y=np.arange(80) % 3), nlambda=5).n_classes == 3


def test_non_bool_flag_is_refused():
    with pytest.raises(TypeError, match="standardize"):
        cs.clearn("y ~ x1 + x2", _df(), standardize="no")


@pytest.mark.parametrize(
    "call",
    [
        lambda df: cs.clearn("y ~ x1 + x2", df, sigma=1.0),
        lambda df: cs.svm("y ~ x1 + x2", df, kernel="linear", sigma=1.0),
        lambda df: cs.lamsvm("y ~ x1 + x2", df, kernel="linear", gamma=1.0),
        lambda df: cs.lum("y ~ x1 + x2", df, gamma=1.0),
    ],
)
def test_kernel_arguments_on_a_linear_fit_are_refused(call):
    with pytest.raises(ValueError, match="gamma|sigma"):
        call(_df())


def test_predict_refuses_unknown_keywords():
    fit = cs.clearn("y ~ x1 + x2", _df(), nlambda=5)
    with pytest.raises(TypeError, match="foo"):
        fit.predict(_df(5), foo=1)


def test_cv_says_when_it_uses_fewer_folds():
    with pytest.warns(UserWarning, match="nfolds=30 reduced"):
        cs.cv(cs.clearn, "y ~ x1 + x2", _df(30), nfolds=30, verbose=False, nlambda=5)


def test_dropped_rows_are_reported():
    df = _df()
    df.loc[:4, "x1"] = np.nan
    fit = cs.clearn("y ~ x1 + x2", df, nlambda=5)
    sm = fit.summary()
    assert sm.info["rows dropped (missing values)"] == 5
    assert any("5 row(s) with missing values" in n for n in sm.notes)


def test_lamsvm_intercept_only_is_a_clear_error():
    with pytest.raises(ValueError):
        cs.lamsvm("y ~ 1", _df())


def test_huge_inputs_never_report_converged_with_nan():
    df = _df().assign(x1=lambda d: d.x1 * 1e300)
    for fn in (cs.lamsvm, cs.svm):
        fit = _check_outcome(lambda: fn("y ~ x1 + x2", df))
        if fit is not None:
            f = np.asarray(fit.predict(type="link"), dtype=float)
            assert not (fit.converged and not np.all(np.isfinite(f)))


def test_duplicated_columns_and_two_dimensional_response():
    df = _df()
    dup = df.copy()
    dup.columns = ["x1", "x1", "y"]
    with pytest.raises(ValueError, match="duplicated column"):
        cs.clearn("y ~ x1", dup)
    with pytest.raises(ValueError, match="1-D sequence of labels"):
        cs.clearn(df[["x1", "x2"]].to_numpy(), np.c_[df.y, df.y])


def test_misspelt_argument_gets_the_right_name():
    with pytest.raises(TypeError, match="lambda_"):
        cs.lum("y ~ x1 + x2", _df(), lamda=0.1)


def test_s_must_be_a_number():
    fit = cs.clearn("y ~ x1 + x2", _df(), nlambda=5)
    with pytest.raises(TypeError, match="s must be a number"):
        fit.predict(_df(3), s="abc")
    assert math.isfinite(fit.s)


def test_column_vector_labels_are_read_as_labels():
    """A numeric (n, 1) label array is the same response as its 1-D form (same fit to the digit);
    a continuous column vector is refused as continuous, not taken for labels."""
    df = _df()
    X = df[["x1", "x2"]].to_numpy()
    y = np.where(df.y.to_numpy() == df.y.iloc[0], 1, 0)
    a = cs.clearn(X, y, lambda_=0.05)
    b = cs.clearn(X, y[:, None], lambda_=0.05)
    assert a.classes == b.classes
    np.testing.assert_array_equal(a.predict(X, type="prob").to_numpy(), b.predict(X, type="prob").to_numpy())
    with pytest.raises(ValueError, match="continuous"):
        cs.clearn(X, X[:, :1] + 0.5)


def test_array_fit_leaves_the_callers_matrix_alone():
    df = _df()
    X = df[["x1", "x2"]].to_numpy()
    X0 = X.copy()
    fit = cs.lum(X, df.y.to_numpy(), lambda_=0.05)
    fit.predict(X)
    np.testing.assert_array_equal(X, X0)
