"""Offsets in the binary weighted SVM, ``f(x) = offset + b + h(x)``: the constraints
``y_i (o_i + b + h(x_i)) >= 1 - xi_i`` put the offset into the SMO dual as the linear term
``sum_i a_i (1 - y_i o_i)``. The fit equals scipy's solution of the primal (linear kernel) and
of the dual QP (Gaussian kernel); Platt's sigmoid is fitted to the decision values with their
offsets, and ``predict`` adds the offsets of new data."""

import os
import sys

import numpy as np
import pytest
from scipy.optimize import minimize

import cohstats as cs

sys.path.insert(0, os.path.dirname(__file__))
from _offset_data import offset_frame  # noqa: E402
from cohstats.probability import platt_fit, sollich_prob


@pytest.fixture(scope="module")
def df():
    return offset_frame(60, 4, o_scale=1.0, slope=2.0)


def _y(df):
    return np.where(df["y"] == "b", 1.0, -1.0)


def _primal(df, C, w_plus=1.0, w_minus=1.0):
    """min 1/2 ||beta||^2 + sum_i C_i xi_i, xi_i >= 1 - y_i (o_i + b + x_i'beta), xi_i >= 0 (SLSQP)."""
    X, y, o = df[["x1", "x2"]].to_numpy(), _y(df), df["o"].to_numpy()
    n = len(y)
    Ci = C * np.where(y > 0, w_plus, w_minus)

    def obj(v):
        return 0.5 * v[1:3] @ v[1:3] + Ci @ v[3:]

    def jac(v):
        return np.r_[0.0, v[1:3], Ci]

    cons = [
        {
            "type": "ineq",
            "fun": lambda v: v[3:] - 1.0 + y * (o + v[0] + X @ v[1:3]),
            "jac": lambda v: np.column_stack([y, y[:, None] * X, np.eye(n)]),
        },
        {"type": "ineq", "fun": lambda v: v[3:], "jac": lambda v: np.column_stack([np.zeros((n, 3)), np.eye(n)])},
    ]
    r = minimize(
        obj,
        np.r_[0.0, 0.0, 0.0, np.ones(n) * 2],
        jac=jac,
        constraints=cons,
        method="SLSQP",
        options=dict(ftol=1e-12, maxiter=1000),
    )
    assert r.success, r.message
    return r.x[0], r.x[1:3], r.fun


@pytest.mark.parametrize("pi", [None, 0.3])
def test_linear_svm_with_offset_equals_the_primal_solution(df, pi):
    C = 0.7
    fit = cs.svm("y ~ x1 + x2 + offset(o)", df, kernel=None, C=C, pi=pi, standardize=False, tol=1e-9)
    wp, wm = (1.0, 1.0) if pi is None else (1 - pi, pi)
    b, beta, val = _primal(df, C, wp, wm)
    np.testing.assert_allclose(fit.coef.to_numpy(), beta, atol=1e-5)
    assert fit.intercept == pytest.approx(b, abs=1e-5)
    # the dual objective is minus the primal optimum (strong duality), offset term included
    assert fit.objective == pytest.approx(-val, rel=1e-7, abs=1e-7)
    plain = cs.svm("y ~ x1 + x2", df, kernel=None, C=C, pi=pi, standardize=False, tol=1e-9)
    assert np.max(np.abs(plain.coef.to_numpy() - beta)) > 1e-2


def test_gaussian_kernel_svm_with_offset_solves_the_dual_qp(df):
    C, g = 2.0, 0.5
    fit = cs.svm("y ~ x1 + x2 + offset(o)", df, kernel="rbf", gamma=g, C=C, standardize=False, tol=1e-10)
    X, y, o = df[["x1", "x2"]].to_numpy(), _y(df), df["o"].to_numpy()
    K = np.exp(-g * ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    Q = (y[:, None] * y[None, :]) * K
    q = 1.0 - y * o

    r = minimize(
        lambda a: 0.5 * a @ Q @ a - q @ a,
        np.zeros(len(y)),
        jac=lambda a: Q @ a - q,
        bounds=[(0.0, C)] * len(y),
        constraints=[{"type": "eq", "fun": lambda a: a @ y, "jac": lambda a: y}],
        method="SLSQP",
        options=dict(ftol=1e-14, maxiter=2000),
    )
    assert r.success, r.message
    assert fit.objective == pytest.approx(r.fun, rel=1e-6)
    np.testing.assert_allclose(fit.dual_alpha_, r.x, atol=2e-4)
    # training decision values: f = o + b + sum_j a_j y_j K(x_j, x)
    h = K @ (fit.dual_alpha_ * y)
    np.testing.assert_allclose(fit.fitted_decision, o + fit.intercept + h, atol=1e-8)
    np.testing.assert_allclose(fit.predict(type="link"), o + fit.intercept + h, atol=1e-8)
    free = (r.x > 1e-3) & (r.x < C - 1e-3)
    assert free.any()
    # free support vectors sit on the margin, offsets included
    np.testing.assert_allclose(y[free] * fit.fitted_decision[free], 1.0, atol=1e-6)


def test_probabilities_and_new_data_use_the_offset(df, tmp_path):
    fit = cs.svm("y ~ x1 + x2 + offset(o)", df, kernel=None, C=0.7, standardize=False, tol=1e-9)
    X, y, o = df[["x1", "x2"]].to_numpy(), _y(df), df["o"].to_numpy()
    f_train = o + fit.intercept + X @ fit.coef.to_numpy()
    np.testing.assert_allclose(fit.fitted_decision, f_train, atol=1e-8)
    sig = platt_fit(f_train, y)
    new = df.iloc[:5].assign(o=[-3.0, -1.0, 0.0, 1.0, 3.0])
    f_new = new["o"].to_numpy() + fit.intercept + new[["x1", "x2"]].to_numpy() @ fit.coef.to_numpy()
    np.testing.assert_allclose(fit.predict(new, type="link"), f_new, atol=1e-10)
    np.testing.assert_allclose(fit.predict(new, type="prob")["b"], sig(f_new), atol=1e-8)
    np.testing.assert_allclose(fit.predict(new, type="prob", method="sollich")["b"], sollich_prob(f_new), atol=1e-12)
    arr = cs.svm("y ~ x1 + x2", df, offset=o, kernel=None, C=0.7, standardize=False, tol=1e-9)
    np.testing.assert_allclose(arr.predict(new, type="link", offset=new["o"].to_numpy()), f_new, atol=1e-8)
    with pytest.raises(ValueError, match="method='bracket' refits"):
        fit.predict(new, type="prob", method="bracket")
    fit.save(tmp_path / "svm.csf")
    np.testing.assert_array_equal(
        cs.load(tmp_path / "svm.csf").predict(new, type="prob"), fit.predict(new, type="prob")
    )


@pytest.mark.parametrize(
    "kw,match",
    [
        (dict(pi="path"), "exact pi path has no offset term"),
        (dict(prob_method="bracket"), "prob_method='bracket'"),
        (dict(kernel_approx="nystroem", n_components=20), "kernel_approx"),
    ],
)
def test_svm_routes_without_an_offset_term_refuse_it(df, kw, match):
    with pytest.raises(ValueError, match=match):
        cs.svm("y ~ x1 + x2 + offset(o)", df, **kw)


def test_multiclass_svm_and_psi_learning_refuse_an_offset(df):
    d = df.assign(z=np.array(["p", "q", "r"])[np.arange(len(df)) % 3])
    with pytest.raises(ValueError, match="more than two classes"):
        cs.svm("z ~ x1 + x2 + offset(o)", d)
    with pytest.raises(ValueError, match="psi_learn"):
        cs.psi_learn("y ~ x1 + x2 + offset(o)", df)
