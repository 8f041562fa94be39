"""The path value ``s``: R's names of the cross-validated choices ("lambda.min", "lambda.1se") and
several values at once, on a cv() result and on the fits it hands out."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import cohstats as cs
from cohstats.datasets import make_waveform, make_wsl2


@pytest.fixture(scope="module")
def data():
    return make_wsl2(120, random_state=0), make_wsl2(40, random_state=3)


@pytest.fixture(scope="module")
def res(data):
    return cs.cv(cs.clearn, "y ~ x1 + x2", data[0], nfolds=5, random_state=1, verbose=False)


def _path_coef(fit, i):
    """Coefficients at the i-th fitted lambda straight from the stored path (intercept first)."""
    return np.concatenate([[fit._intercept_path[i]], fit._coef_path[i]])


def test_names_on_a_cv_result_and_its_fits(res, data):
    _, new = data
    assert res.index_min != res.index_1se  # the two choices differ on this problem
    for names, i in ((("lambda.min", "lambda_min"), res.index_min), (("lambda.1se", "lambda_1se"), res.index_1se)):
        ref = _path_coef(res.fit, i)
        for nm in names:
            np.testing.assert_array_equal(res.coef_at(nm).to_numpy(), ref)
            np.testing.assert_array_equal(res.fit.coef_at(nm).to_numpy(), ref)
            np.testing.assert_array_equal(res.best_fit.coef_at(nm).to_numpy(), ref)
            pd.testing.assert_frame_equal(
                res.predict(new, type="prob", s=nm), res.fit.predict(new, type="prob", s=float(res.lambda_[i]))
            )
    # defaults: lambda.1se, as cv.glmnet's coef and predict
    np.testing.assert_array_equal(res.coef_at().to_numpy(), _path_coef(res.fit, res.index_1se))
    pd.testing.assert_series_equal(res.predict(new), res.predict(new, s="lambda.1se"))
    assert not res.predict(new, type="prob").equals(res.predict(new, type="prob", s="lambda.min"))
    # best_fit is at lambda.min; its own coef_at(None) is there too
    np.testing.assert_array_equal(res.best_fit.coef_at().to_numpy(), _path_coef(res.fit, res.index_min))


def test_names_refused_where_there_is_no_cross_validation(res, data):
    train, new = data
    plain = cs.clearn("y ~ x1 + x2", train)
    with pytest.raises(ValueError, match="chosen by cross-validation.*res.coef_at"):
        plain.coef_at("lambda.min")
    with pytest.raises(ValueError, match="carries no cross-validation"):
        plain.predict(new, s="lambda.1se")
    with pytest.raises(TypeError, match="s must be a number.*'lambda.min' or 'lambda.1se'.*'lambda.mn'"):
        res.coef_at("lambda.mn")
    with pytest.raises(TypeError, match="s must be a number"):
        res.fit.predict(new, s="lambda")
    # a cv of a fit that is not a path: s is ignored by predict, names give its coefficients
    lin = cs.cv(cs.svm, "y ~ x1 + x2", train, kernel="linear", lambda_=0.1, nfolds=4, random_state=0, verbose=False)
    pd.testing.assert_series_equal(lin.coef_at("lambda.min"), lin.fit.coef_at())
    with pytest.raises(ValueError, match="carries no cross-validation"):
        lin.fit.coef_at("lambda.min")


def test_several_values_give_one_block_per_value(res, data):
    _, new = data
    lam = res.lambda_
    vals = [float(lam[10]), "lambda.min", float(lam[40])]
    single = {v: res.fit.coef_at(v) for v in vals}
    C = res.fit.coef_at(vals)
    assert list(C.columns) == vals and C.columns.name == "s"
    for v in vals:
        pd.testing.assert_series_equal(C[v], single[v], check_names=False)
    pd.testing.assert_frame_equal(res.coef_at(vals), C)
    # classes and two-class links: one column per value
    L = res.predict(new, type="link", s=np.array([lam[5], lam[50]]))
    assert L.shape == (len(new), 2)
    np.testing.assert_array_equal(L[float(lam[50])].to_numpy(), res.fit.predict(new, type="link", s=lam[50]).to_numpy())
    # probabilities: (s, class) column blocks
    P = res.predict(new, type="prob", s=("lambda.min", "lambda.1se"))
    assert P.columns.nlevels == 2 and list(P.columns.get_level_values(0).unique()) == ["lambda.min", "lambda.1se"]
    pd.testing.assert_frame_equal(P["lambda.1se"], res.predict(new, type="prob"))
    with pytest.raises(ValueError, match="repeated"):
        res.predict(new, s=[lam[3], float(lam[3])])
    with pytest.raises(ValueError, match="empty"):
        res.fit.coef_at([])


def test_several_values_for_k_classes():
    df = make_waveform(150, random_state=0)
    fit = cs.clearn("y ~ .", df, nlambda=20)
    lam = fit.lambda_
    C = fit.coef_at([lam[4], lam[12]])
    assert C.columns.nlevels == 2 and C.shape == (fit.design.p + 1, 2 * fit.n_classes)
    pd.testing.assert_frame_equal(C[float(lam[12])], fit.coef_at(lam[12]), check_names=False)
    P = fit.predict(df.head(5), type="prob", s=[lam[4], lam[12]])
    pd.testing.assert_frame_equal(P[float(lam[4])], fit.predict(df.head(5), type="prob", s=lam[4]), check_names=False)


def test_cv_fit_summary_shows_the_cross_validated_measure(res):
    sm = res.best_fit.summary()
    key = next(k for k in sm.info if k.startswith("cross-validated"))
    assert sm.info[key] == res.cvm[res.index_min]
    assert sm.info["  its standard error"] == res.cvsd[res.index_min]
    assert not any("Wilson" in k for k in sm.info)
    sm1 = res.fit_1se.summary()
    assert sm1.info[key] == res.cvm[res.index_1se]
