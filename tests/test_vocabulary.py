"""One meaning per name across the fit functions: ``n_iter``, the summary's ``observations``,
the public signatures (no private keywords, ``verbose`` shown) -- CONTRIBUTING.md, Vocabulary and
Result contract."""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pandas as pd
import pytest

import cohstats as cs

FIT_FUNCTIONS = ["clearn", "lum", "svm", "psi_learn", "lamsvm", "gboost_c", "gboost", "cart"]


def _data(n, k, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    labels = np.array(["a", "b", "c"])[:k]
    score = np.column_stack([X[:, 0], X[:, 1], -X.sum(1)])[:, :k] + rng.normal(size=(n, k))
    return pd.DataFrame({"x1": X[:, 0], "x2": X[:, 1], "y": labels[np.argmax(score, axis=1)]})


BIN, MULTI = _data(60, 2, 0), _data(60, 3, 1)

CASES = [
    ("clearn", BIN, dict(nlambda=5)),
    ("lum", BIN, dict(nlambda=5)),
    ("lum", MULTI, dict(nlambda=5)),
    ("svm", BIN, dict(kernel=None)),
    ("svm", MULTI, dict()),
    ("psi_learn", BIN, dict(kernel=None, lambda_=0.05)),
    ("lamsvm", MULTI, dict(kernel=None)),
    ("cart", MULTI, dict(nfolds=3, random_state=0)),
    ("gboost_c", MULTI, dict(n_trees=3, nodes=2)),
]


def _fit(fn, df, kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return getattr(cs, fn)("y ~ x1 + x2", df, **kw)


@pytest.mark.parametrize("fn, df, kw", CASES)
def test_summary_names_the_training_rows_observations(fn, df, kw):
    fit = _fit(fn, df, kw)
    info = fit.summary().info
    assert info["observations"] == fit.nobs == len(df)
    assert not {"Observations", "n"} & set(info)


@pytest.mark.parametrize("df", [BIN, MULTI], ids=["binary", "angle"])
def test_lum_n_iter_counts_the_whole_path(df):
    """``n_iter`` is the solver's work for the whole fit, as for every fit (clearn, svm, lamsvm sum
    theirs over the path and the class pairs): the sum of the per-lambda counts of ``path()``,
    the same for every selected ``s``."""
    fit = _fit("lum", df, dict(nlambda=6))
    per_lambda = np.asarray(fit.path()["n_iter"], dtype=np.int64)
    assert per_lambda.shape == fit.lambda_.shape and np.all(per_lambda >= 0)
    assert fit.n_iter == int(per_lambda.sum()) > 0
    assert fit.select(float(fit.lambda_[1])).n_iter == fit.n_iter


@pytest.mark.parametrize("name", FIT_FUNCTIONS + ["tune_lum"])
def test_public_signature_has_no_private_keywords(name):
    params = inspect.signature(getattr(cs, name)).parameters
    assert not [p for p in params if p.startswith("_")]
    if name != "tune_lum":  # the tuned LUM passes its keywords on to tune()
        assert params["verbose"].default is False
        assert params["verbose"].kind is inspect.Parameter.KEYWORD_ONLY


def test_private_keywords_stay_accepted():
    """The tuners' protocol (``_gram``) still reaches the function body."""
    with pytest.raises(ValueError, match="lent kernel matrix"):
        cs.clearn("y ~ x1 + x2", BIN, _gram=object())
