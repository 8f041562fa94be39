"""The coordinate-descent state types: the path driver driven through its named tuples returns a
SolverResult whose solution is the optimum found by scipy.optimize, and the LUM refit returns
its named result at the scipy optimum."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize

from cohstats.losses.scalar import LOSS_LOGIT, LOSS_LUM, loss_value
from cohstats.solvers.cd.design import standardize_design, xv_of
from cohstats.solvers.cd.lum_refit import RefitResult, lum_refit_newton
from cohstats.solvers.cd.path import run_path
from cohstats.solvers.cd.state import MODE_EXACT, MODE_IRLS, PathSpec, make_data, make_loss, make_penalty
from cohstats.solvers.result import SolverResult


def _phi(code, z, p1, p2):
    return np.array([loss_value(code, float(v), p1, p2) for v in z])


def _problem(n=60, p=4, seed=3):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    y = np.where(X[:, 0] - 0.5 * X[:, 1] + rng.standard_normal(n) > 0, 1.0, -1.0)
    w = rng.uniform(0.5, 1.5, n)
    return X, y, w * (n / w.sum())


def _scipy_ridge(Xt, y, w, code, p1, p2, lam):
    """Minimise (1/n) sum w phi(y (b + x'beta)) + lam/2 ||beta||^2 on the prepared design."""
    n = y.shape[0]
    X = Xt.T

    def obj(t):
        f = t[0] + X @ t[1:]
        return np.sum(w * _phi(code, y * f, p1, p2)) / n + 0.5 * lam * t[1:] @ t[1:]

    r = minimize(obj, np.zeros(X.shape[1] + 1), method="BFGS", options=dict(gtol=1e-11))
    return r.x, r.fun


@pytest.mark.parametrize("code,p1,p2,mode", [(LOSS_LOGIT, 0.0, 0.0, MODE_IRLS), (LOSS_LUM, 1.0, 0.0, MODE_EXACT)])
def test_run_path_through_the_state_tuples_reaches_the_scipy_optimum(code, p1, p2, mode):
    X, y, w = _problem()
    Xt, center, scale, excl = standardize_design(X, w)
    data = make_data(Xt, y, w, xv_of(Xt, w), excl, True)
    lams = np.array([0.2, 0.05])
    spec = PathSpec(lams, 0.0, mode, 1e-12, 100000, True, np.zeros(0))
    res = run_path(data, make_loss(code, p1, p2), make_penalty(np.ones(X.shape[1])), spec, 1)
    assert isinstance(res, SolverResult)
    assert res.coef.shape == (2, 1, X.shape[1]) and res.intercept.shape == (2, 1) and res.dual is None
    assert res.converged and res.n_iter == int(res.info["n_iter"].sum()) > 0
    for k, lam in enumerate(lams):
        t, fun = _scipy_ridge(Xt, y, w, code, p1, p2, lam)
        assert res.intercept[k, 0] == pytest.approx(t[0], abs=2e-5)
        np.testing.assert_allclose(res.coef[k, 0], t[1:], atol=2e-5)
        assert res.objective[k] <= fun + 1e-10  # the path optimum is at least as good as BFGS's
    assert res.info["kkt"].max() < 1e-5
    # the null objective is the intercept-only optimum: the first lambda cannot do worse than it
    assert res.objective[0] <= res.info["null_objective"] + 1e-12


def test_lum_refit_returns_its_named_result_at_the_scipy_optimum():
    rng = np.random.default_rng(0)
    n = 200
    f1 = rng.standard_normal(n) * 3.0
    y = np.where(f1 + rng.standard_normal(n) * 2.0 > 0.5, 1.0, -1.0)
    w = rng.uniform(0.5, 2.0, n)
    a = 2.0
    res = lum_refit_newton(f1, y, w, a, 0.0, 1e-12, 200)
    assert isinstance(res, RefitResult) and res.converged

    def obj(t):
        return np.sum(w * _phi(LOSS_LUM, y * (t[0] + t[1] * f1), a, 0.0)) / w.sum()

    r = minimize(obj, np.array([0.0, 1.0]), method="Nelder-Mead", options=dict(xatol=1e-10, fatol=1e-14))
    assert res.g0 == pytest.approx(r.x[0], abs=1e-5)
    assert res.g1 == pytest.approx(r.x[1], abs=1e-5)
    assert res.objective == pytest.approx(obj([res.g0, res.g1]), rel=1e-12)
    assert res.objective <= r.fun + 1e-12
