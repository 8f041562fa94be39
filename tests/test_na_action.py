"""``na_action``, R's vocabulary, the same for every fit function: ``"omit"`` drops rows with a
missing response or predictor (counted in the summary), ``"exclude"`` drops them and pads
``predict`` back with missing rows (R's ``na.exclude``), ``"fail"`` refuses them by column and rows.

The reference for the dropped rows is the same fit on the data with those rows removed by hand.
"""

import warnings

import numpy as np
import pandas as pd
import pytest

import cohstats as cs

FITS = ["clearn", "lum", "svm", "lamsvm", "gboost_c", "gboost", "cart", "psi_learn"]
RESP_NA = [3, 17]  # index labels of the rows with a missing response
PRED_NA = [10]  # ... and with a missing x2


def _data(n=60, seed=1):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"x1": rng.normal(size=n), "x2": rng.normal(size=n)})
    df["y"] = np.where(df["x1"] - 0.5 * df["x2"] + rng.normal(scale=0.7, size=n) > 0, "yes", "no")
    df.index = 100 + np.arange(n)  # index labels that are not positions
    df.loc[[100 + i for i in RESP_NA], "y"] = None
    df.loc[[100 + i for i in PRED_NA], "x2"] = np.nan
    return df


def _fit(fn, df, **kw):
    if fn == "cart":  # its pruning is cross-validated on random folds
        kw.setdefault("random_state", 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return getattr(cs, fn)("y ~ x1 + x2", df, **kw)


def _complete(df):
    return df.dropna(subset=["y", "x1", "x2"])


@pytest.fixture(scope="module")
def df():
    return _data()


@pytest.mark.parametrize("fn", FITS)
def test_omit_drops_missing_response_rows_and_the_summary_counts_them(fn, df):
    fit = _fit(fn, df)
    ref = _fit(fn, _complete(df))
    assert fit.nobs == len(df) - 3 == ref.nobs
    assert fit.design.dropped == {"missing response (y)": 2, "missing predictor values (x2)": 1}
    assert list(fit.design.row_labels) == list(_complete(df).index)
    new = _complete(df).iloc[:15]
    np.testing.assert_array_equal(fit.predict(new, type="link"), ref.predict(new, type="link"))
    sm = fit.summary()
    assert sm.info["rows dropped (missing values)"] == 3
    assert any("missing response (y): 2" in n for n in sm.notes)
    # predicting incomplete new rows under omit is refused by column and rows
    with pytest.raises(ValueError, match=r"column 'x2' has 1 missing value\(s\) \(rows 110\)"):
        fit.predict(df.iloc[8:12])


@pytest.mark.parametrize("fn", FITS)
def test_fail_names_the_column_and_the_rows(fn, df):
    with pytest.raises(ValueError, match=r"response 'y' has 2 missing value\(s\) \(rows 103, 117\)"):
        _fit(fn, df, na_action="fail")
    with pytest.raises(ValueError, match=r"'x2' have missing values in 1 row\(s\) \(rows 110\)"):
        _fit(fn, df.assign(y=df["y"].fillna("no")), na_action="fail")
    with pytest.warns(FutureWarning, match="use na_action='fail'"):
        with pytest.raises(ValueError, match="response 'y' has 2 missing"):
            getattr(cs, fn)("y ~ x1 + x2", df, na_action="raise")


@pytest.mark.parametrize("fn", FITS)
def test_exclude_pads_predictions_with_missing_rows_in_place(fn, df):
    fit = _fit(fn, df, na_action="exclude")
    omit = _fit(fn, df)
    dropped = [100 + i for i in sorted(RESP_NA + PRED_NA)]
    for type_ in ("link", "prob", "class"):
        full = fit.predict(type=type_)  # the training rows: padded back to every row of data
        assert list(full.index) == list(df.index)
        ref = omit.predict(type=type_)
        miss = full.isna() if full.ndim == 1 else full.isna().all(axis=1)
        assert list(full.index[miss.to_numpy()]) == dropped
        pd.testing.assert_frame_equal(
            pd.DataFrame(full.drop(index=dropped)), pd.DataFrame(ref), check_dtype=type_ != "class"
        )
    new = df.iloc[5:14].copy()  # holds row 110 with a missing x2 (and rows with a missing y)
    new.loc[107, "x1"] = np.nan
    complete = new.dropna(subset=["x1", "x2"])
    for type_ in ("link", "prob", "class"):
        got = fit.predict(new, type=type_)
        assert list(got.index) == list(new.index)
        miss = got.isna() if got.ndim == 1 else got.isna().all(axis=1)
        assert list(got.index[miss.to_numpy()]) == [107, 110]
        want = omit.predict(complete, type=type_)
        kept = got.drop(index=[107, 110])
        np.testing.assert_array_equal(np.asarray(kept), np.asarray(want))
    assert fit.predict(new, type="link").dtype == np.float64
    assert fit.predict(new, type="prob").dtypes.eq(np.float64).all()
    assert fit.predict(new).dtype == omit.predict(complete).dtype  # the labels keep their dtype


def test_exclude_with_matrix_input_pads_array_rows(df):
    X = df[["x1", "x2"]].to_numpy()
    fit = cs.clearn(X, df["y"].to_numpy(dtype=object), na_action="exclude", nlambda=5)
    assert fit.nobs == len(df) - 3
    got = fit.predict(X[8:12], type="prob")
    assert got.index.tolist() == [0, 1, 2, 3] and got.iloc[2].isna().all() and not got.drop(index=2).isna().any().any()
    assert fit.predict(type="link").isna().sum() == 3
