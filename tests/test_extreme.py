"""Extreme but legal inputs give finite, converged fits equal to their rescaled twins.

Predictors scaled by 1e150 and 1e-150 (standardised fits are invariant to the scale of a
predictor; trees to any monotone map), observation weights scaled by 1e300 and 1e-300 (fits
whose objective is a weighted mean are invariant to the scale of the weights), and the loss
parameters at the ends of their ranges (rho in [1e-3, 1e3], LUM a and c up to 1e4, lambda-SVM
margins up to 1e4).
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import cohstats as cs

RNG = np.random.default_rng(0)
N = 80
X = RNG.normal(size=(N, 2))
Y = np.where(X[:, 0] - X[:, 1] + 0.5 * RNG.normal(size=N) > 0, "a", "b")
Y3 = np.array(["a", "b", "c"])[(X[:, 0] > 0).astype(int) + (X[:, 1] > 0.5).astype(int)]

FITS = {
    "clearn": (cs.clearn, dict(lambda_=[0.1, 0.01])),
    "clearn-rbf": (cs.clearn, dict(kernel="rbf", lambda_=[0.1, 0.01])),
    "lum": (cs.lum, dict(lambda_=[0.1, 0.01])),
    "lum-rbf": (cs.lum, dict(kernel="rbf", lambda_=[0.1, 0.01])),
    "svm": (cs.svm, {}),
    "lamsvm": (cs.lamsvm, {}),
    "gboost_c": (cs.gboost_c, dict(n_trees=5, random_state=0)),
    "cart": (cs.cart, dict(random_state=0)),
}


def _link(fit, Xn):
    return np.asarray(fit.predict(Xn, type="link"), dtype=float)


def _rel(a, b):
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(a)), 1e-300))


@pytest.mark.parametrize("scale", [1e150, 1e-150])
@pytest.mark.parametrize("name", sorted(FITS))
def test_predictor_scale_leaves_the_fit_unchanged(name, scale):
    fn, kw = FITS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        base = fn(X, Y, **kw)
        twin = fn(X * scale, Y, **kw)
    assert twin.converged
    b, t = _link(base, X), _link(twin, X * scale)
    assert np.all(np.isfinite(t))
    assert _rel(b, t) < 1e-6
    np.testing.assert_allclose(twin.predict(X * scale, type="prob").sum(axis=1), 1.0)


@pytest.mark.parametrize("wscale", [1e300, 1e-300])
@pytest.mark.parametrize("name", ["clearn", "clearn-rbf", "lum", "gboost_c"])
def test_weight_scale_leaves_the_fit_unchanged(name, wscale):
    fn, kw = FITS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        base = fn(X, Y, **kw)
        twin = fn(X, Y, weights=np.full(N, wscale), **kw)
    assert twin.converged
    assert _rel(_link(base, X), _link(twin, X)) < 1e-6


@pytest.mark.parametrize("rho,y", [
    (1e-3, Y), (1e3, Y), (1e3, Y3),
    pytest.param(1e-3, Y3, marks=pytest.mark.xfail(
        strict=True, reason="known gap: the multiclass coordinate descent does not reach its "
                            "tolerance at rho = 1e-3 (nearly the multiclass hinge) within max_iter")),
])
def test_coherence_temperature_extremes(rho, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = cs.clearn(X, y, rho=rho, lambda_=[0.1, 0.01])
    P = fit.predict(X, type="prob").to_numpy()
    assert np.all(np.isfinite(P))
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    g = cs.gboost_c(X, Y3, rho=rho, n_trees=5, random_state=0)
    assert np.all(np.isfinite(g.predict(X, type="prob").to_numpy()))
    assert fit.converged
    assert np.all(np.isfinite(g.predict(X, type="prob").to_numpy()))


@pytest.mark.parametrize("a,c", [(1e4, 0.0), (1e4, 1e4), (1.0, 1e4), (1e-2, 1.0)])
def test_lum_shape_extremes(a, c):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = cs.lum(X, Y, a=a, c=c, lambda_=[0.1, 0.01])
    f = _link(fit, X)
    P = fit.predict(X, type="prob").to_numpy()
    assert np.all(np.isfinite(f)) and np.all(np.isfinite(P))
    assert np.mean((f > 0) == (Y == "b")) > 0.7


@pytest.mark.parametrize("margin", [1e-3, 1e4])
def test_lamsvm_margin_extremes(margin):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = cs.lamsvm(X, Y3, margin=margin)
    f = _link(fit, X)
    assert fit.converged and np.all(np.isfinite(f))
    assert np.mean(fit.predict(X).to_numpy() == Y3) > 0.6
