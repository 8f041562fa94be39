"""Every fit function honours the shared protocol: formula, Design and arrays give the same fit,
and weights given with a Design act like weights given with the formula."""

import numpy as np
import pytest

import cohstats as cs
from cohstats.datasets import make_wsl1
from cohstats.formula import build_design

FITS = [
    ("clearn", dict(lambda_=0.01, alpha=0.5)),
    ("lum", dict(lambda_=0.01, c=0.0, a=10.0)),
    ("svm", dict(C=1.0)),
    ("lamsvm", dict(C=1.0, margin=2.0, tol=1e-3)),
    ("gboost_c", dict(n_trees=5)),
]


@pytest.mark.parametrize("name,args", FITS, ids=[f[0] for f in FITS])
def test_formula_design_arrays_and_weights_agree(name, args):
    fn = getattr(cs, name)
    df = make_wsl1(60, random_state=3)
    w = np.random.default_rng(0).integers(1, 4, size=60).astype(float)
    f_formula = fn("y ~ x1 + x2", df, weights=w, **args)
    design = build_design("y ~ x1 + x2", df)
    f_design = fn(design, weights=w, **args)
    f_arrays = fn(df[["x1", "x2"]].to_numpy(), df["y"].to_numpy(), weights=w, **args)
    ref = f_formula.predict(df, type="link").to_numpy()
    np.testing.assert_allclose(f_design.predict(df, type="link").to_numpy(), ref, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(
        f_arrays.predict(df[["x1", "x2"]].to_numpy(), type="link").to_numpy(), ref, rtol=1e-9, atol=1e-9
    )
    unweighted = fn(design, **args).predict(df, type="link").to_numpy()
    assert np.max(np.abs(unweighted - ref)) > 1e-6  # the weights did change the fit
