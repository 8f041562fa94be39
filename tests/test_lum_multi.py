"""Angle-based multicategory LUM (Zhang & Liu 2014 with the LUM loss of [LZW]).

References: scipy.optimize on the same objective (small problems), the binary LUM of the
package at K = 2 (coefficients and probabilities), the closed-form population minimiser checked
against a direct scipy minimisation of the population risk, and the simplex geometry.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize

import cohstats as cs
from cohstats.formula import build_design
from cohstats.losses.angle import angle_lum_minimizer, angle_lum_proba, angle_lum_risk, simplex_vertices
from cohstats.losses.binary import lum_link, lum_loss, lum_minimizer
from cohstats.models.lum import LumMultiFit, _lum_angle, lum_refit_angle
from cohstats.solvers.cd.angle import angle_lum_lambda_max, cd_angle_lum_path


def _three_class(n, seed, p=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    eta = np.column_stack([X[:, 0], -X[:, 0] + X[:, 1], np.zeros(n)])
    P = np.exp(eta - eta.max(1, keepdims=True))
    P /= P.sum(1, keepdims=True)
    y = (rng.random(n)[:, None] > P.cumsum(1)).sum(1)
    return X, y


def _pairwise_loss(F, y, a, c):
    """The pairwise loss written out with the binary LUM (independent of the compiled code)."""
    K = F.shape[1] + 1
    U = F @ simplex_vertices(K).T
    kap = (K - 1) / K
    L = lum_loss(kap * (U[np.arange(len(y)), y][:, None] - U), a, c)
    L[np.arange(len(y)), y] = 0.0
    return L.sum(axis=1) / (K - 1)


def _objective(theta, X, y, a, c, lam, alpha, K):
    p = X.shape[1]
    b, B = theta[: K - 1], theta[K - 1 :].reshape(p, K - 1)
    nrm = np.sqrt((B**2).sum(axis=1))
    pen = lam * np.sum((1 - alpha) / 2 * nrm**2 + alpha * nrm)
    return float(np.mean(_pairwise_loss(X @ B + b, y, a, c)) + pen)


# ============================================================================ geometry
@pytest.mark.parametrize("K", [2, 3, 4, 7])
def test_simplex_vertices(K):
    W = simplex_vertices(K)
    assert W.shape == (K, K - 1)
    G = W @ W.T
    np.testing.assert_allclose(np.diag(G), 1.0, atol=1e-14)
    np.testing.assert_allclose(G[~np.eye(K, dtype=bool)], -1.0 / (K - 1), atol=1e-14)
    np.testing.assert_allclose(W.sum(axis=0), 0.0, atol=1e-14)
    np.testing.assert_allclose(W.T @ W, K / (K - 1) * np.eye(K - 1), atol=1e-13)


# ============================================================================ solver vs scipy
@pytest.mark.parametrize("a,c", [(1000.0, 0.0), (1.0, 1.0), (2.0, 0.5)])
def test_ridge_fit_is_the_scipy_minimiser(a, c):
    X, y = _three_class(30, 0)
    lam = 0.05
    b0, B, info = cd_angle_lum_path(X, y, None, a, c, [lam], 0.0, standardize=False, tol=1e-14, max_iter=200000)
    theta = np.r_[b0[0], B[0].ravel()]
    f = lambda t: _objective(t, X, y, a, c, lam, 0.0, 3)  # noqa: E731
    ref = minimize(f, np.zeros(theta.size), method="BFGS", options=dict(gtol=1e-11, maxiter=10000))
    assert info["objective"][0] == pytest.approx(f(theta), rel=1e-12)
    assert f(theta) <= ref.fun + 1e-11
    assert f(theta) == pytest.approx(ref.fun, rel=1e-9)
    np.testing.assert_allclose(theta, ref.x, atol=2e-4)


def test_grouped_lasso_fit_is_the_scipy_minimiser():
    X, y = _three_class(40, 1, p=4)
    a, c, alpha = 1000.0, 0.0, 0.6
    lmax = angle_lum_lambda_max(X, y, None, a, c, alpha, standardize=False)
    lam = 0.3 * lmax
    b0, B, info = cd_angle_lum_path(X, y, None, a, c, [lmax, lam], alpha, standardize=False, tol=1e-14, max_iter=200000)
    assert np.all(B[0] == 0) and np.any(B[1] != 0)
    theta = np.r_[b0[1], B[1].ravel()]
    f = lambda t: _objective(t, X, y, a, c, lam, alpha, 3)  # noqa: E731
    # scipy on the smooth problem restricted to the groups the fit keeps (zero groups fixed)
    keep = np.any(B[1] != 0, axis=1)
    assert keep.sum() > 0
    mask = np.r_[np.ones(2, bool), np.repeat(keep, 2)]

    def fr(t):
        full = np.zeros(theta.size)
        full[mask] = t
        return f(full)

    ref = minimize(fr, theta[mask] + 0.05, method="BFGS", options=dict(gtol=1e-11, maxiter=10000))
    assert f(theta) <= ref.fun + 1e-11
    np.testing.assert_allclose(theta[mask], ref.x, atol=2e-4)
    # optimality of the zero groups: the KKT violation the engine reports is tiny
    assert info["kkt"][1] < 1e-6
    # and no random perturbation improves the objective
    rng = np.random.default_rng(0)
    for _ in range(50):
        assert f(theta + 1e-4 * rng.normal(size=theta.size)) >= f(theta) - 1e-13


def test_objective_never_rises():
    X, y = _three_class(60, 2, p=5)
    a, c = 2.0, 0.5
    lmax = angle_lum_lambda_max(X, y, None, a, c, 0.5)
    lams = lmax * np.geomspace(1, 1e-3, 25)
    _, _, info = cd_angle_lum_path(X, y, None, a, c, lams, 0.5, tol=1e-10)
    assert np.all(info["converged"])
    assert np.all(np.diff(info["objective"]) <= 1e-12)  # optimal value falls with lambda
    # along the iterations at one lambda: the objective after m passes never rises in m
    objs = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for m in range(1, 30):
            objs.append(
                cd_angle_lum_path(X, y, None, a, c, [0.05 * lmax], 0.5, tol=1e-14, max_iter=m, warn=False)[2][
                    "objective"
                ][0]
            )
    assert np.all(np.diff(objs) <= 1e-13)
    assert objs[-1] < objs[0]


# ============================================================================ K = 2
@pytest.mark.parametrize("a,c,alpha", [(1000.0, 0.0, 0.0), (1.0, 1.0, 0.5), (5.0, 0.0, 1.0)])
def test_two_classes_equal_the_binary_lum(a, c, alpha):
    rng = np.random.default_rng(3)
    df = pd.DataFrame(rng.normal(size=(80, 3)), columns=["x1", "x2", "x3"])
    df["y"] = np.where(df.x1 - 0.5 * df.x2 + rng.normal(size=80) > 0, "yes", "no")
    lams = [0.2, 0.05, 0.01]
    kw = dict(a=a, c=c, alpha=alpha, lambda_=lams, tol=1e-13, max_iter=200000)
    fb = cs.lum("y ~ x1 + x2 + x3", df, **kw)
    design = build_design("y ~ x1 + x2 + x3", df)
    fm = _lum_angle(
        design,
        a=a,
        c=c,
        lambda_=lams,
        nlambda=3,
        lambda_min_ratio=None,
        alpha=alpha,
        standardize=True,
        penalty_factor=None,
        validation=None,
        refit_on="train",
        tol=1e-13,
        max_iter=200000,
    )
    assert isinstance(fm, LumMultiFit)
    np.testing.assert_allclose(fm.vertices.to_numpy().ravel(), [1.0, -1.0])
    # the same objective values (two different engines' modes, each to tol = 1e-13)
    np.testing.assert_allclose(fm._info_objective, fb._info_objective, rtol=1e-10)
    for s in lams:
        cb, cm = fb.coef_at(s), fm.coef_at(s)
        # class "yes" (second level, +1 in the binary fit) has margin -f = the binary f
        np.testing.assert_allclose(cm["yes"].to_numpy(), cb.to_numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(cm["no"].to_numpy(), -cb.to_numpy(), rtol=1e-5, atol=1e-6)
        for method in ("refit", "lum"):
            pb = fb.predict(df, type="prob", s=s, method=method)
            pm = fm.predict(df, type="prob", s=s, method=method)
            np.testing.assert_allclose(pm.to_numpy(), pb.to_numpy(), atol=1e-5)
        assert (fm.predict(df, s=s) == fb.predict(df, s=s)).all()


def test_refit_equals_binary_refit_at_two_classes():
    rng = np.random.default_rng(4)
    f1 = rng.normal(size=200)
    yb = np.where(rng.random(200) < 1 / (1 + np.exp(-2 * f1)), 1.0, -1.0)
    rb = cs.models.lum.lum_refit(0.3 * f1, yb, a=3.0)
    # angle coding: class 0 (binary -1) is the vertex +1, so f = -f_binary
    rm = lum_refit_angle(-0.3 * f1[:, None], (yb > 0).astype(int), a=3.0)
    assert rm["converged"] and not rm["separable"]
    assert rm["g1"] == pytest.approx(rb["g1"], rel=1e-7)
    assert -rm["g0"][0] == pytest.approx(rb["g0"], abs=1e-8)


def test_refit_is_the_scipy_minimiser_k3():
    X, y = _three_class(150, 5)
    b0, B, _ = cd_angle_lum_path(X, y, None, 1000.0, 0.0, [0.5], 0.0)
    F1 = X @ B[0] + b0[0]
    r = lum_refit_angle(F1, y, a=1000.0)
    W = simplex_vertices(3)

    def obj(t):
        return float(np.mean(_pairwise_loss(t[:2] + t[2] * F1, y, 1000.0, 0.0)))

    ref = minimize(obj, np.r_[0.0, 0.0, 1.0], method="BFGS", options=dict(gtol=1e-12))
    assert r["objective"] == pytest.approx(ref.fun, rel=1e-9)
    np.testing.assert_allclose(np.r_[r["g0"], r["g1"]], ref.x, atol=1e-4)
    assert W.shape == (3, 2)


# ============================================================================ probabilities
_GRID = [
    np.array(p) / np.sum(p)
    for p in (
        [1, 1, 1],
        [5, 3, 2],
        [0.7, 0.2, 0.1],
        [1, 2, 7],
        [98, 1, 1],
        [4, 4, 2],
        [1, 2, 3, 4],
        [0.05, 0.9, 0.03, 0.02],
        [3, 1, 1, 1, 2],
    )
]


@pytest.mark.parametrize("form", ["pairwise", "angle"])
@pytest.mark.parametrize("a,c", [(1000.0, 0.0), (1.0, 0.0), (2.0, 1.0), (math.inf, 0.0), (0.5, 5.0)])
def test_inverse_link_recovers_p_at_the_population_minimiser(a, c, form):
    for p in _GRID:
        fstar = angle_lum_minimizer(p, a, c, form)
        # the minimiser (angle: closed form; pairwise: Newton) minimises the risk: scipy finds nothing lower
        r0, g0 = angle_lum_risk(fstar, p, a, c, form)
        np.testing.assert_allclose(g0, 0.0, atol=1e-9)
        ref = minimize(
            lambda f: angle_lum_risk(f, p, a, c, form)[0],
            np.zeros(p.size - 1),
            jac=lambda f: angle_lum_risk(f, p, a, c, form)[1],
            method="BFGS",
            options=dict(gtol=1e-12),
        )
        assert r0 <= ref.fun + 1e-12
        # and the inverse link maps it back to p
        np.testing.assert_allclose(angle_lum_proba(fstar, a, c, form)[0], p, rtol=1e-9, atol=1e-12)
        if c == 0.0 and np.unique(p).size == p.size:  # unique minimiser: scipy's is f*
            np.testing.assert_allclose(ref.x, fstar, atol=1e-4)


def test_inverse_link_is_the_binary_lum_link_at_two_classes():
    f = np.linspace(-5, 5, 41)
    for a, c in [(1000.0, 0.0), (1.0, 1.0), (0.3, 2.0), (math.inf, 0.5)]:
        for form in ("pairwise", "angle"):
            P = angle_lum_proba(-f[:, None], a, c, form)  # class 2 is the vertex -1
            np.testing.assert_allclose(P[:, 1], lum_link(f, a, c), rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(
            angle_lum_minimizer([0.3, 0.7], a, c, "angle"), -lum_minimizer(0.7, a, c), rtol=1e-10
        )
        if c == 0.0:  # unique minimiser
            np.testing.assert_allclose(angle_lum_minimizer([0.3, 0.7], a, c), -lum_minimizer(0.7, a, c), rtol=1e-8)


def test_inverse_link_is_stable_for_extreme_values():
    F = np.array([[1e4, -1e4], [-1e6, 3.0], [0.0, 0.0], [1e-300, -1e-300]])
    for a, c in [(1e-3, 0.0), (1e4, 1e4), (math.inf, 0.0), (1000.0, 1e6), (1e-6, 1e-6)]:
        P = angle_lum_proba(F, a, c)
        assert np.all(np.isfinite(P)) and np.all(P >= 0)
        np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-14)
    with pytest.raises(ValueError, match="c"):
        angle_lum_proba(F, 1.0, math.inf)


# ============================================================================ the fit function
def _iris():
    pytest.importorskip("sklearn")
    from sklearn.datasets import load_iris

    d = load_iris(as_frame=True)
    df = d.frame.drop(columns="target")
    df.columns = ["Sepal.Length", "Sepal.Width", "Petal.Length", "Petal.Width"]
    df["Species"] = pd.Categorical(np.asarray(d.target_names)[d.target])
    return df


def test_iris_fit_with_class_named_columns():
    df = _iris()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = cs.lum("Species ~ .", data=df)
        P = fit.predict(df, type="prob")
        P2 = fit.predict(df, type="prob", method="refit")
    classes = ["setosa", "versicolor", "virginica"]
    assert isinstance(fit, LumMultiFit) and fit.converged
    # the default is the refitted LUM (as for two classes); method="lum" the fitted LUM's link
    F = df.iloc[:, :4].to_numpy() @ fit.coef_simplex.to_numpy()[1:] + fit.coef_simplex.to_numpy()[0]
    np.testing.assert_allclose(P.to_numpy(), P2.to_numpy(), atol=0)
    P3 = fit.predict(df, type="prob", method="lum")
    np.testing.assert_allclose(P3.to_numpy(), angle_lum_proba(F, 1000.0, 0.0), atol=1e-12)
    for Q in (P, P2):
        assert list(Q.columns) == classes
        np.testing.assert_allclose(Q.sum(axis=1), 1.0, atol=1e-12)
    assert list(fit.coef.columns) == classes and list(fit.intercept.index) == classes
    np.testing.assert_allclose(fit.coef.sum(axis=1), 0.0, atol=1e-10)  # margins sum to zero
    link = fit.predict(df, type="link")
    assert list(link.columns) == classes
    # the class is the largest margin, and the coefficients by class reproduce the margins
    U = df.iloc[:, :4].to_numpy() @ fit.coef.to_numpy() + fit.intercept.to_numpy()
    np.testing.assert_allclose(link.to_numpy(), U, atol=1e-10)
    assert (fit.predict(df) == np.asarray(classes)[U.argmax(1)]).all()
    # coef_simplex: B in simplex coordinates, B W' = coef by class
    Bs = fit.coef_simplex.to_numpy()
    np.testing.assert_allclose(Bs[1:] @ fit.vertices.to_numpy().T, fit.coef.to_numpy(), atol=1e-12)
    # setosa is separated from the other two species at every lambda of the path
    assert (fit.predict(df)[df.Species == "setosa"] == "setosa").all()


# ============================================================================ iris 70/30
def _iris_split():
    """The fixed stratified 70/30 split of iris (scikit-learn, random_state=0)."""
    from sklearn.model_selection import train_test_split

    df = _iris()
    df.columns = ["sl", "sw", "pl", "pw", "y"]
    return train_test_split(df, test_size=0.3, random_state=0, stratify=df["y"])


def test_iris_defaults_classify_and_calibrate():
    tr, te = _iris_split()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = cs.lum("y ~ sl + sw + pl + pw", tr)
        P = fit.predict(te, type="prob").to_numpy()
    y = te["y"].cat.codes.to_numpy()
    err = float(np.mean(P.argmax(1) != y))
    assert err <= 0.07  # the target (this split: 0 errors in 45)
    logloss = -float(np.mean(np.log(P[np.arange(y.size), y])))
    assert logloss < 0.1  # scikit-learn's LogisticRegression() on this split: 0.16
    assert fit.form == "pairwise"
    # the plain angle loss, which only rewards the own-class margin, is what misclassified iris
    b0, B, _ = cd_angle_lum_path(
        tr.iloc[:, :4].to_numpy(), tr["y"].cat.codes.to_numpy(), None, 1000.0, 0.0, fit.lambda_, 0.0, form="angle"
    )
    U = (te.iloc[:, :4].to_numpy() @ B[-1] + b0[-1]) @ simplex_vertices(3).T
    assert np.mean(U.argmax(1) != y) > 0.15


def test_summary_says_how_s_was_chosen():
    tr, _ = _iris_split()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = cs.lum("y ~ sl + sw + pl + pw", tr)
    notes = " ".join(fit.summary().notes)
    assert "not chosen by validation" in notes
    assert "separates the sample" not in notes
    assert "method='refit' by default" in notes
    notes = " ".join(fit.select(fit.lambda_[10]).summary().notes)
    assert "not chosen by validation" not in notes


def test_penalty_is_rotation_invariant_and_grouped():
    X, y = _three_class(80, 6, p=6)
    lmax = angle_lum_lambda_max(X, y, None, 1000.0, 0.0, 1.0)
    b0, B, info = cd_angle_lum_path(X, y, None, 1000.0, 0.0, lmax * np.geomspace(1, 0.05, 12), 1.0)
    # a predictor enters for both simplex coordinates at once
    nz = B != 0
    assert np.all(nz[..., 0] == nz[..., 1])
    assert info["df"][0] == 0 and info["df"][-1] > 0


def test_bad_input_is_named():
    X, y = _three_class(30, 7)
    with pytest.raises(ValueError, match="two classes only"):
        cs.lum(X, y, kernel="rbf", lambda_=0.1)
    with pytest.raises(ValueError, match="c = inf"):
        cs.lum(X, y, c=np.inf, lambda_=0.1)
    with pytest.raises(ValueError, match="two classes"):
        cs.lum(X, y, c="tuned")
    fit = cs.lum(X, y, lambda_=[0.1, 0.01])
    with pytest.raises(ValueError, match="method"):
        fit.predict(X, type="prob", method="platt")
    with pytest.raises(ValueError, match="c must be"):
        angle_lum_minimizer([0.5, 0.5], 1.0, math.inf)
    with pytest.raises(ValueError, match="P must"):
        angle_lum_minimizer([0.5, 0.6, -0.1])
