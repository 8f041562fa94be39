"""The ridge LUM's dual coordinate ascent (cohstats.solvers.cd.lum_dual) piece by piece: the exact
coordinate step against a bracketing root finder, the full check against numpy formulas written
from [LZW]'s loss, and a whole path (working sets carried from one lambda to the next) against
scipy.optimize at every lambda."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import brentq, minimize

from cohstats.solvers.cd import lum_dual

A = 1000.0


def V(u, a, c):
    """LUM loss of [LZW] eq. 3: 1 - u left of c/(1+c), (1/(1+c)) (a/((1+c)u - c + a))^a right."""
    u = np.asarray(u, dtype=float)
    right = u >= c / (1.0 + c)
    s = np.where(right, (1.0 + c) * u - c + a, a)
    return np.where(right, np.exp(a * (np.log(a) - np.log(s))) / (1.0 + c), 1.0 - u)


def dV(u, a, c):
    u = np.asarray(u, dtype=float)
    right = u >= c / (1.0 + c)
    s = np.where(right, (1.0 + c) * u - c + a, a)
    return np.where(right, -np.exp((a + 1.0) * (np.log(a) - np.log(s))), -1.0)


@pytest.mark.parametrize("c", [1e3, 1e4])
def test_coordinate_step_is_the_root_from_either_side(c):
    """The new alpha solves m = z + q (alpha - a0), alpha = -w V'(m) (the exact maximiser of the
    augmented dual in one coordinate), whether the current margin lies left or right of the root."""
    ue = c / (1.0 + c)
    rng = np.random.default_rng(int(c))
    checked = 0
    for _ in range(400):
        wi = rng.uniform(0.2, 2.0)
        q = 10.0 ** rng.uniform(-4, 1)
        a0 = wi * rng.uniform(0, 1) if rng.random() < 0.8 else rng.choice([0.0, wi])
        z = ue + rng.normal(0, 2e-3) * rng.choice([1.0, 10.0, 100.0])
        got = lum_dual._coord(z, q, wi, a0, A, c, ue)
        base = z - q * a0
        if base + q * wi <= ue:
            assert got == wi
            continue

        def F(m, base=base, q=q, wi=wi):
            return m - base + q * wi * float(dV(m, A, c))

        lo = max(base, ue)
        hi = lo + 1.0
        while F(hi) < 0:
            hi += 1.0
        m = brentq(F, lo, hi, xtol=1e-15, rtol=1e-15, maxiter=500)
        want = -wi * float(dV(m, A, c))
        assert abs(got - want) <= 1e-9 * wi + 1e-7 * abs(want), (z, q, wi, a0, got, want)
        checked += 1
    assert checked > 200


def test_full_check_matches_numpy_formulas():
    """Objective, exact KKT residual (intercept included) and working set of one full check,
    with offsets in the margins."""
    rng = np.random.default_rng(5)
    n, p, c, lam = 200, 6, 1e3, 0.01
    X = rng.standard_normal((n, p))
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    w = rng.uniform(0.5, 1.5, n)
    beta = rng.normal(0, 0.3, p)
    b = 0.4
    off = rng.normal(0, 0.5, n)
    ue = c / (1 + c)
    u = y * (off + b + X @ beta)
    # a dual point: at the bound left of the window, zero far right, something inside
    alpha = np.where(u < ue, w, 0.0)
    alpha[::7] = 0.5 * w[::7]
    z, g, act = np.empty(n), np.empty(p), np.empty(n, dtype=np.int64)
    obj, kk, nact = lum_dual._check(X, y, off, w, A, c, lam, b, beta, alpha, z, g, act)
    np.testing.assert_allclose(z, u, rtol=1e-13, atol=1e-13)
    want_obj = np.mean(w * V(u, A, c)) + 0.5 * lam * beta @ beta
    assert abs(obj - want_obj) <= 1e-12 * want_obj
    ah = -w * dV(u, A, c)
    grad = X.T @ (y * (alpha - ah)) / n  # lambda beta = (1/n) sum alpha_i y_i x_i on a dual point
    want_kk = max(np.abs(grad).max(), abs(np.sum(y * ah)) / n)
    assert abs(kk - want_kk) <= 1e-12 * (1 + want_kk)
    fixed = ((alpha == w) & (u <= ue)) | ((alpha <= 1e-20 * w) & (u > ue) & (ah <= 1e-20 * w))
    assert set(act[:nact].tolist()) == set(np.flatnonzero(~fixed).tolist())


def scipy_ridge(X, y, lam, c):
    n, p = X.shape

    def fg(th):
        b0, beta = th[0], th[1:]
        m = y * (b0 + X @ beta)
        g = y * dV(m, A, c) / n
        return np.mean(V(m, A, c)) + 0.5 * lam * beta @ beta, np.r_[g.sum(), X.T @ g + lam * beta]

    r = minimize(fg, np.zeros(p + 1), jac=True, method="L-BFGS-B", options=dict(maxiter=20000, ftol=1e-15, gtol=1e-12))
    return r.fun


@pytest.mark.parametrize("c", [1e3, 1e4])
def test_path_with_carried_working_sets_reaches_scipy_at_every_lambda(c):
    """Each lambda starts from the previous lambda's working set; the full-check schedule (first
    pass, then by work) keeps every lambda exact: the objective equals scipy's optimum (never
    above it beyond 1e-9), and the path's objectives fall with lambda."""
    rng = np.random.default_rng(11)
    n, p = 150, 5
    X = rng.standard_normal((n, p))
    y = np.where(X[:, 0] - 0.5 * X[:, 1] + 0.7 * rng.standard_normal(n) > 0, 1.0, -1.0)
    lams = np.geomspace(0.5, 2e-3, 9)
    b0, B, info = lum_dual.lum_ridge_dual_path(X, y, None, A, c, lams, standardize=False, tol=1e-12)
    assert info["converged"].all()
    objs = np.array([np.mean(V(y * (b0[k] + X @ B[k]), A, c)) + 0.5 * lams[k] * B[k] @ B[k] for k in range(lams.size)])
    np.testing.assert_allclose(objs, info["objective"], rtol=1e-10)
    for k in range(lams.size):
        ref = scipy_ridge(X, y, lams[k], c)
        assert objs[k] <= ref + 1e-9, (k, objs[k], ref)
        assert abs(objs[k] - ref) <= 1e-6 * (1 + ref), (k, objs[k], ref)
    assert np.all(np.diff(objs) < 0)
