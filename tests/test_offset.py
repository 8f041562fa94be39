"""Offsets, ``f(x) = offset + b + x'beta`` (R's ``offset``): ``offset(col)`` in a formula or
``offset=``; the unpenalised logistic fit equals statsmodels' GLM(Binomial, offset=)."""

import os
import sys

import numpy as np
import pandas as pd
import pytest

import cohstats as cs

sys.path.insert(0, os.path.dirname(__file__))
from _offset_data import offset_frame  # noqa: E402

sm = pytest.importorskip("statsmodels.api")


@pytest.fixture(scope="module")
def df():
    return offset_frame(300, 0)


def _glm(df):
    X = sm.add_constant(df[["x1", "x2"]])
    return sm.GLM((df["y"] == "b").astype(float), X, family=sm.families.Binomial(), offset=df["o"]).fit()


KW = dict(loss="logistic", alpha=0, lambda_=1e-8, standardize=False, tol=1e-12)


def test_offset_term_equals_statsmodels_glm_and_predicts_with_new_offsets(df, tmp_path):
    ref = _glm(df)
    fit = cs.clearn("y ~ x1 + x2 + offset(o)", df, **KW)
    assert fit.xnames == ["x1", "x2"]
    np.testing.assert_allclose(fit.coef_at().to_numpy(), ref.params.to_numpy(), atol=2e-6)
    new = df.iloc[:7].assign(o=np.linspace(-2, 2, 7))
    Xn = sm.add_constant(new[["x1", "x2"]], has_constant="add")
    np.testing.assert_allclose(
        fit.predict(new, type="link"), ref.predict(Xn, offset=new["o"], which="linear"), atol=2e-6
    )
    np.testing.assert_allclose(fit.predict(new, type="prob")["b"], ref.predict(Xn, offset=new["o"]), atol=1e-6)
    arg = cs.clearn("y ~ x1 + x2", df, offset=df["o"].to_numpy(), **KW)
    np.testing.assert_array_equal(arg.coef_at(), fit.coef_at())
    np.testing.assert_array_equal(
        arg.predict(new, type="link", offset=new["o"].to_numpy()), fit.predict(new, type="link")
    )
    with pytest.raises(ValueError, match="needs their offsets"):
        arg.predict(new)
    byname = cs.clearn("y ~ x1 + x2", df, offset="o", **KW)
    np.testing.assert_array_equal(byname.predict(new, type="link"), fit.predict(new, type="link"))
    fit.save(tmp_path / "f.csf")
    back = cs.load(tmp_path / "f.csf")
    np.testing.assert_array_equal(back.predict(new, type="link"), fit.predict(new, type="link"))
    with pytest.raises(ValueError, match="lacks the offset column 'o'"):
        fit.predict(new.drop(columns="o"))


@pytest.mark.parametrize("fn,why", [("lamsvm", "K-class SMO dual"), ("cart", "leaves are class frequencies")])
def test_fits_without_offsets_refuse_them(fn, why, df):
    with pytest.raises(ValueError, match=why):
        getattr(cs, fn)("y ~ x1 + offset(o)", df)


def test_offset_must_be_a_term_of_its_own(df):
    with pytest.raises(ValueError, match="a term of its own"):
        cs.clearn("y ~ x1:offset(o)", df)


def test_tuners_take_an_offset_from_a_term_or_an_argument():
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"x1": rng.normal(size=60), "o": rng.normal(size=60)})
    df["y"] = np.where(df.x1 + df.o + rng.normal(size=60) > 0, "a", "b")
    a = cs.cv(cs.clearn, "y ~ x1 + offset(o)", data=df, random_state=0, verbose=False)
    b = cs.cv(cs.clearn, "y ~ x1", data=df, offset=df.o.to_numpy(), random_state=0, verbose=False)
    np.testing.assert_array_equal(a.cvm, b.cvm)
