"""cv, tune and gkl with offsets: every fold fit takes the offsets of its training rows and the
held-out rows are scored on ``offset + b + x'beta``; the fold values equal folds run by hand
with the public fit functions and ``predict(newdata)``."""

import os
import sys

import numpy as np
import pytest

import cohstats as cs

sys.path.insert(0, os.path.dirname(__file__))
from _offset_data import offset_frame  # noqa: E402
from cohstats.tuning.gkl import _perturbed


@pytest.fixture(scope="module")
def df():
    return offset_frame(150, 11, o_scale=1.0)


FOLDID = np.arange(150) % 4


def _deviance(y, p):
    y01 = (y == "b").astype(float)
    return -2.0 * np.mean(y01 * np.log(p) + (1 - y01) * np.log(1 - p))


def _by_hand(fn, df, svals, kw, measure="deviance", pred=None):
    """Fold values (K, L) from fits of the training rows and predictions of the held-out rows."""
    out = np.empty((4, len(svals)))
    for k in range(4):
        tr, te = df[FOLDID != k], df[FOLDID == k]
        fit = fn("y ~ x1 + x2 + offset(o)", tr, **kw)
        for j, s in enumerate(svals):
            sk = {} if s is None else {"s": s}
            if measure == "deviance":
                p = fit.predict(te, type="prob", **sk, **(pred or {}))["b"].to_numpy()
                out[k, j] = _deviance(te["y"].to_numpy(), p)
            else:
                out[k, j] = np.mean(fit.predict(te, **sk).to_numpy() != te["y"].to_numpy())
    return out


@pytest.mark.parametrize(
    "fn,kw",
    [
        (cs.clearn, dict(loss="logistic", alpha=0.5)),
        (cs.lum, dict(a=1000.0, c=1.0)),
    ],
)
def test_cv_of_a_path_fit_with_offsets_equals_hand_run_folds(df, fn, kw):
    lam = [0.2, 0.05, 0.01]
    res = cs.cv(fn, "y ~ x1 + x2 + offset(o)", df, foldid=FOLDID, measure="deviance", lambda_=lam, verbose=False, **kw)
    np.testing.assert_allclose(res.lambda_, lam)
    want = _by_hand(fn, df, lam, dict(lambda_=lam, **kw))
    np.testing.assert_allclose(res.fold_values, want, rtol=1e-7)
    err = cs.cv(fn, "y ~ x1 + x2 + offset(o)", df, foldid=FOLDID, measure="class", lambda_=lam, verbose=False, **kw)
    np.testing.assert_allclose(err.fold_values, _by_hand(fn, df, lam, dict(lambda_=lam, **kw), "class"), atol=1e-12)
    # the same folds without the offset score differently
    plain = cs.cv(fn, "y ~ x1 + x2", df, foldid=FOLDID, measure="deviance", lambda_=lam, verbose=False, **kw)
    assert np.max(np.abs(plain.fold_values - res.fold_values)) > 1e-3


def test_cv_of_svm_and_boosting_with_offsets_equals_hand_run_folds(df):
    kw = dict(kernel=None, lambda_=0.05, tol=1e-8)
    res = cs.cv(cs.svm, "y ~ x1 + x2 + offset(o)", df, foldid=FOLDID, measure="deviance", verbose=False, **kw)
    np.testing.assert_allclose(res.fold_values, _by_hand(cs.svm, df, [None], kw), rtol=1e-7)
    kw = dict(n_trees=5, nodes=4, random_state=-1)
    res = cs.cv(
        cs.gboost_c,
        "y ~ x1 + x2 + offset(o)",
        df,
        foldid=FOLDID,
        measure="deviance",
        verbose=False,
        fit_kwargs=dict(random_state=-1),
        n_trees=5,
        nodes=4,
    )
    np.testing.assert_allclose(res.lambda_, np.arange(1, 6))
    np.testing.assert_allclose(res.fold_values, _by_hand(cs.gboost_c, df, [1, 2, 3, 4, 5], kw), rtol=1e-7)


def test_offset_argument_and_offset_term_give_the_same_cv(df):
    kw = dict(loss="logistic", lambda_=[0.1, 0.01], foldid=FOLDID, verbose=False)
    a = cs.cv(cs.clearn, "y ~ x1 + x2 + offset(o)", df, **kw)
    b = cs.cv(cs.clearn, "y ~ x1 + x2", df, offset=df["o"].to_numpy(), **kw)
    np.testing.assert_array_equal(a.fold_values, b.fold_values)


def test_tune_holdout_scores_the_validation_rows_with_their_offsets(df):
    train, valid = df.iloc[:100], df.iloc[100:]
    res = cs.tune(
        cs.lum,
        "y ~ x1 + x2 + offset(o)",
        train,
        grid={"c": [0.0, 10.0]},
        method="holdout",
        validation=valid,
        measure="deviance",
        lambda_=[0.1, 0.01],
        verbose=False,
    )
    tab = res.to_frame()
    for c in (0.0, 10.0):
        fit = cs.lum("y ~ x1 + x2 + offset(o)", train, c=c, lambda_=[0.1, 0.01])
        for lam in (0.1, 0.01):
            p = fit.predict(valid, type="prob", s=lam)["b"].to_numpy()
            got = tab[(tab["c"] == c) & np.isclose(tab["lambda"], lam)]["score"].item()
            assert got == pytest.approx(_deviance(valid["y"].to_numpy(), p), rel=1e-8)


def test_gkl_perturbations_carry_the_offsets_of_their_inputs(df):
    d = cs.build_design("y ~ x1 + x2 + offset(o)", df)
    src = np.r_[np.arange(1, 150), 0]
    p = _perturbed(d, d.X[src], d.y, src)
    np.testing.assert_array_equal(p.offset, d.offset[src])
    np.testing.assert_array_equal(d.offset, df["o"].to_numpy())  # the original is untouched
    # a zero offset is no offset; a real one changes the estimate
    kw = dict(loss="logistic", lambda_=[0.1, 0.01], D=3, random_state=0, verbose=False)
    zero = cs.gkl(cs.clearn, "y ~ x1 + x2 + offset(z)", df.assign(z=0.0), **kw)
    none = cs.gkl(cs.clearn, "y ~ x1 + x2", df, **kw)
    np.testing.assert_allclose(zero.estimate, none.estimate, rtol=1e-12)
    withoff = cs.gkl(cs.clearn, "y ~ x1 + x2 + offset(o)", df, **kw)
    assert np.max(np.abs(withoff.estimate - none.estimate)) > 1e-3
