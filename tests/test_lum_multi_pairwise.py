"""The pairwise-comparison loss of the multicategory LUM: the compiled loss against the formula
written out with the binary LUM, its inverse link and population minimiser against scipy
minimising the population risk (written out independently), Fisher consistency, the objective
along a K = 5 path and the pairwise refit against scipy. (The iris target is tested in
test_lum_multi.py.)
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import minimize

from cohstats.losses.angle import angle_lum_loss, angle_lum_minimizer, angle_lum_proba, simplex_vertices
from cohstats.losses.binary import lum_loss
from cohstats.models.lum import lum_refit_angle
from cohstats.solvers.cd.angle import angle_lum_lambda_max, cd_angle_lum_path


def _risk(f, p, a, c):
    """sum_y p_y (1/(K-1)) sum_{j != y} V(kappa (u_y - u_j)), written with explicit loops."""
    K = p.size
    W = simplex_vertices(K)
    u = W @ f
    kap = (K - 1) / K
    r = 0.0
    for y in range(K):
        for j in range(K):
            if j != y:
                r += p[y] * float(lum_loss(np.array([kap * (u[y] - u[j])]), a, c)[0]) / (K - 1)
    return r


def _scipy_minimiser(p, a, c):
    res = minimize(lambda f: _risk(f, p, a, c), np.zeros(p.size - 1), method="BFGS", options=dict(gtol=1e-11))
    return res.x, res.fun


_PS = [
    np.array([0.5, 0.3, 0.2]),
    np.array([0.05, 0.15, 0.8]),
    np.array([0.34, 0.33, 0.33]),
    np.array([0.1, 0.2, 0.3, 0.4]),
    np.array([0.6, 0.1, 0.1, 0.15, 0.05]),
]


def test_loss_is_the_pairwise_formula():
    rng = np.random.default_rng(0)
    for K in (2, 3, 5):
        F = rng.normal(scale=2.0, size=(40, K - 1))
        y = rng.integers(0, K, 40)
        for a, c in [(1000.0, 0.0), (1.0, 1.0), (math.inf, 0.5)]:
            ref = [_risk(F[i], np.eye(K)[y[i]], a, c) for i in range(40)]
            np.testing.assert_allclose(angle_lum_loss(F, y, a, c), ref, rtol=1e-13, atol=1e-15)
    # K = 2: the binary LUM V(f) with the first class coded +1
    f = np.linspace(-3, 3, 13)[:, None]
    np.testing.assert_allclose(angle_lum_loss(f, np.zeros(13, int), 2.0, 0.5), lum_loss(f[:, 0], 2.0, 0.5))


@pytest.mark.parametrize("a,c", [(1000.0, 0.0), (1.0, 0.0), (3.0, 0.5)])
def test_inverse_link_and_minimiser_against_scipy(a, c):
    for p in _PS:
        fs, rs = _scipy_minimiser(p, a, c)
        fm = angle_lum_minimizer(p, a, c)
        # the Newton minimiser is at least as low as scipy's, and equal to it when unique (c = 0)
        assert _risk(fm, p, a, c) <= rs + 1e-12
        assert _risk(fm, p, a, c) == pytest.approx(rs, rel=1e-9)
        if c == 0.0:
            np.testing.assert_allclose(fm, fs, atol=1e-4)
        # the inverse link maps the minimiser (and scipy's) back to p
        np.testing.assert_allclose(angle_lum_proba(fm, a, c)[0], p, rtol=1e-9)
        np.testing.assert_allclose(angle_lum_proba(fs, a, c)[0], p, atol=1e-5)
        # Fisher consistency: the largest margin is the most likely class
        assert np.argmax(simplex_vertices(p.size) @ fm) == np.argmax(p)


def test_inverse_link_is_positive_and_stable_for_extreme_margins():
    F = np.array([[1e3, -1e3, 5.0], [-4e2, 3.0, 0.0], [0.0, 0.0, 0.0], [1e-300, -1e-300, 0.0]])
    for a, c in [(1e-3, 0.0), (1000.0, 0.0), (math.inf, 0.0), (1000.0, 1e6), (2.0, 1.0)]:
        P = angle_lum_proba(F, a, c)
        assert np.all(np.isfinite(P)) and np.all(P >= 0)
        np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-14)
        np.testing.assert_allclose(P[2], 0.25, rtol=1e-14)  # f = 0: every class equally likely
    # moderate margins: every probability is positive and ordered as the margins
    rng = np.random.default_rng(1)
    F = rng.normal(scale=3.0, size=(200, 4))
    P = angle_lum_proba(F, 1000.0, 0.0)
    U = F @ simplex_vertices(5).T
    assert np.all(P > 0)
    assert np.all(np.argsort(P, axis=1) == np.argsort(U, axis=1))


def test_objective_never_rises_along_the_path_k5():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(120, 4))
    y = np.argmax(X @ rng.normal(size=(4, 5)) + rng.gumbel(size=(120, 5)), axis=1)
    lmax = angle_lum_lambda_max(X, y, None, 1000.0, 0.0, 1e-3)
    lams = lmax * np.geomspace(1, 1e-5, 30)
    _, _, info = cd_angle_lum_path(X, y, None, 1000.0, 0.0, lams, 0.0, tol=1e-10)
    assert np.all(info["converged"])
    assert np.all(np.diff(info["objective"]) <= 1e-12)


def test_refit_pairwise_is_the_scipy_minimiser_k4():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(160, 3))
    y = np.argmax(X @ rng.normal(size=(3, 4)) + rng.gumbel(size=(160, 4)), axis=1)
    b0, B, _ = cd_angle_lum_path(X, y, None, 1000.0, 0.0, [0.3], 0.0)
    F1 = X @ B[0] + b0[0]
    r = lum_refit_angle(F1, y, a=1000.0)

    def obj(t):
        G = t[:3] + t[3] * F1
        return float(np.mean([_risk(G[i], np.eye(4)[y[i]], 1000.0, 0.0) for i in range(len(y))]))

    ref = minimize(obj, np.r_[0.0, 0.0, 0.0, 1.0], method="BFGS", options=dict(gtol=1e-10))
    assert r["converged"] and not r["separable"]
    assert r["objective"] == pytest.approx(ref.fun, rel=1e-8)
    np.testing.assert_allclose(np.r_[r["g0"], r["g1"]], ref.x, atol=1e-4)


def test_saved_fit_keeps_its_loss(tmp_path):
    import cohstats as cs

    rng = np.random.default_rng(4)
    X = rng.normal(size=(90, 2))
    y = np.argmax(X @ rng.normal(size=(2, 3)) + rng.gumbel(size=(90, 3)), axis=1)
    fit = cs.lum(X, y, lambda_=[0.1, 0.01])
    fit.save(tmp_path / "fit.cs")
    back = cs.load(tmp_path / "fit.cs")
    assert back.form == "pairwise"
    np.testing.assert_array_equal(back.predict(X, type="prob", method="lum"), fit.predict(X, type="prob", method="lum"))


@pytest.mark.parametrize("form", ["pairwise", "angle"])
def test_lum_form_argument_fits_that_loss(form):
    """lum(form=...) fits the named K-class loss: its class-margin coefficients are the solver's
    for that form (B W'), and the two forms give different fits on the same data."""
    import pandas as pd

    from cohstats import lum

    rng = np.random.default_rng(3)
    X = rng.standard_normal((90, 2))
    y = np.digitize(X[:, 0] + 0.5 * rng.standard_normal(90), [-0.6, 0.6])
    df = pd.DataFrame({"x1": X[:, 0], "x2": X[:, 1], "y": np.array(["a", "b", "c"])[y]})
    fit = lum("y ~ x1 + x2", data=df, lambda_=[0.05], a=1000.0, c=0.0, standardize=False, form=form)
    assert fit.settings.form == form
    _, B, _ = cd_angle_lum_path(X, y, None, 1000.0, 0.0, [0.05], 0.0, standardize=False, form=form)
    other = "angle" if form == "pairwise" else "pairwise"
    _, B2, _ = cd_angle_lum_path(X, y, None, 1000.0, 0.0, [0.05], 0.0, standardize=False, form=other)
    W = simplex_vertices(3)
    assert np.abs(B[0] @ W.T - B2[0] @ W.T).max() > 1e-3
    np.testing.assert_allclose(np.asarray(fit.coef), B[0] @ W.T, rtol=1e-6, atol=1e-8)
