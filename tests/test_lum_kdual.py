"""The kernel ridge LUM by dual coordinate ascent (cohstats/solvers/cd/lum_kdual.py).

References: scipy.optimize minimising the primal objective, written here from the LUM loss of
[LZW] (no cohstats code), on small problems; the damped Newton route of ``cd_kernel_path``
(``solver="newton"``) along a path; the augmented dual recorded per pass; a tuned LUM forced
through the Newton route.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy.optimize import minimize

from cohstats.exceptions import ConvergenceWarning
from cohstats.solvers.cd import kernel as kmod
from cohstats.solvers.cd import lum_kdual
from cohstats.solvers.cd.kernel import cd_kernel_path, prepare_kernel
from cohstats.solvers.cd.lum_kdual import lum_kernel_dual_path

LUM = 4  # loss code of the LUM in cohstats.losses.scalar
A = 1000.0


def data(n, seed=0, width=1.0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 2))
    y = np.where(X[:, 0] * X[:, 1] + 0.3 * rng.standard_normal(n) > 0, 1.0, -1.0)
    K = np.exp(-width * ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    return K, y, X


def lum_loss(u, a, c):
    """V(u), V'(u) and V''(u) of [LZW] eq (3), elementwise (log form for the large power a)."""
    ue = c / (1.0 + c)
    right = u >= ue
    s = np.where(right, (1.0 + c) * u - c + a, a)  # > 0 on the right branch
    lr = np.log(a) - np.log(s)
    v = np.where(right, np.exp(a * lr) / (1.0 + c), 1.0 - u)
    d = np.where(right, -np.exp((a + 1.0) * lr), -1.0)
    d2 = np.where(right, (1.0 + c) * (a + 1.0) / a * np.exp((a + 2.0) * lr), 0.0)
    return v, d, d2


def scipy_fit(K, y, a, c, gam, x0=None, intercept=True):
    """Minimise (1/n) sum V(y (b + K beta)) + gam/2 beta'K beta by scipy's trust-region Newton
    (``trust-exact``) with the analytic gradient and Hessian; returns (b, beta, objective)."""
    n = y.size
    k0 = 0 if intercept else 1

    def parts(x):
        b, beta = (x[0], x[1:]) if intercept else (0.0, x)
        Kb = K @ beta
        v, d, d2 = lum_loss(y * (b + Kb), a, c)
        return b, beta, Kb, v, d * y / n, d2 / n

    def fun(x):
        b, beta, Kb, v, r, _ = parts(x)
        return v.sum() / n + 0.5 * gam * beta @ Kb

    def jac(x):
        b, beta, Kb, v, r, _ = parts(x)
        return np.concatenate([[r.sum()], K @ r + gam * Kb])[k0:]

    def hess(x):
        b, beta, Kb, v, r, h = parts(x)
        H = np.empty((n + 1, n + 1))
        H[0, 0] = h.sum()
        H[0, 1:] = H[1:, 0] = K @ h
        H[1:, 1:] = (K * h[None, :]) @ K + gam * K
        return H[k0:, k0:]

    x0 = np.zeros(n + 1 - k0) if x0 is None else x0
    res = minimize(fun, x0, jac=jac, hess=hess, method="trust-exact", options=dict(gtol=1e-13, maxiter=5000))
    x = res.x
    return (x[0], x[1:], res.fun) if intercept else (0.0, x, res.fun)


def objective(K, y, a, c, gam, b, beta):
    Kb = K @ beta
    return lum_loss(y * (b + Kb), a, c)[0].mean() + 0.5 * gam * beta @ Kb


@pytest.mark.parametrize("c", [0.0, 10.0, 1e3, 1e4])
def test_dual_route_matches_scipy_and_newton_on_a_small_problem(c):
    K, y, _ = data(40, seed=1, width=1.0)
    gam = np.array([1.0, 0.1, 0.02])
    b, B, info = cd_kernel_path(K, y, None, LUM, A, c, gam, 0.0, tol=1e-10, solver="dual")
    bn, Bn, infon = cd_kernel_path(K, y, None, LUM, A, c, gam, 0.0, tol=1e-10, solver="newton")
    assert info["solver"] == "dual" and info["converged"].all()
    # reported objective is the objective of the reported point (independent formula)
    for k in range(gam.size):
        np.testing.assert_allclose(info["objective"][k], objective(K, y, A, c, gam[k], b[k], B[k]), rtol=1e-10)
    k = gam.size - 1
    sb, sbeta, sobj = scipy_fit(K, y, A, c, gam[k], x0=np.concatenate([[b[k]], B[k]]) * 0.9)
    ours = objective(K, y, A, c, gam[k], b[k], B[k])
    # the dual route is at least as good as BFGS and equals it to 1e-9 relative
    assert ours <= sobj + 1e-12
    assert abs(ours - sobj) <= 1e-9 * (1.0 + sobj)
    # decision values (unique: strictly convex in f) against scipy and Newton
    f = b[k] + K @ B[k]
    np.testing.assert_allclose(f, sb + K @ sbeta, atol=2e-4)
    np.testing.assert_allclose(f, bn[k] + K @ Bn[k], atol=1e-6)
    np.testing.assert_allclose(b, bn, atol=1e-6)
    np.testing.assert_allclose(info["objective"], infon["objective"], rtol=1e-10)


@pytest.mark.parametrize("c", [0.0, 1e4])
def test_dual_route_from_a_cold_scipy_start(c):
    """scipy from zero (no hint from our solution) reaches our objective, not below it."""
    K, y, _ = data(30, seed=7, width=2.0)
    gam = 0.05
    b, B, info = cd_kernel_path(K, y, None, LUM, A, c, [gam], 0.0, tol=1e-10, solver="dual")
    sb, sbeta, sobj = scipy_fit(K, y, A, c, gam)
    ours = objective(K, y, A, c, gam, b[0], B[0])
    assert ours <= sobj + 1e-12
    assert abs(ours - sobj) <= 1e-7 * (1.0 + sobj)


def test_augmented_dual_never_decreases_along_a_pass():
    K, y, _ = data(120, seed=2, width=0.5)
    pk = prepare_kernel(K)
    gam = 10.0 ** np.linspace(0.0, -3.0, 5)
    _, _, info = lum_kernel_dual_path(pk, y, A, 1e4, gam, tol=1e-9, trace_len=40)
    tr = info["trace"]
    used = (tr[:, :, 0] != 0.0) | (tr[:, :, 1] != 0.0)
    assert used.sum() >= 60  # many passes recorded
    before, after = tr[:, :, 0][used], tr[:, :, 1][used]
    assert np.all(after >= before - 1e-13 * (1.0 + np.abs(before)))
    assert np.any(after > before + 1e-8)  # and the passes do move it


@pytest.mark.parametrize("c", [1.0, 100.0, 1e4])
def test_dual_route_agrees_with_newton_along_a_path(c):
    K, y, _ = data(150, seed=3, width=0.5)
    pk = prepare_kernel(K)
    gam = 10.0 ** np.linspace(2.0, -4.0, 10)
    b, B, info = cd_kernel_path(pk, y, None, LUM, A, c, gam, 0.0, tol=1e-11, solver="dual")
    bn, Bn, infon = cd_kernel_path(pk, y, None, LUM, A, c, gam, 0.0, tol=1e-11, solver="newton")
    assert info["converged"].all() and infon["converged"].all()
    gate = 1e-2 * math.sqrt(1e-11 * info["null_objective"])
    assert np.all(info["kkt"] <= gate)  # the Newton route's gate
    np.testing.assert_allclose(info["null_objective"], infon["null_objective"], rtol=1e-12)
    np.testing.assert_allclose(info["objective"], infon["objective"], rtol=1e-10)
    F = b[:, None] + B @ (pk.Xt + pk.m[:, None]).T
    Fn = bn[:, None] + Bn @ (pk.Xt + pk.m[:, None]).T
    np.testing.assert_allclose(F, Fn, atol=1e-4)


def test_auto_picks_the_dual_for_finite_c_above_200_points_and_not_otherwise():
    K, y, _ = data(40, seed=4)
    gam = [1.0, 0.1]
    Kl, yl, _ = data(201, seed=4)
    for c in (0.0, 1e4):
        assert cd_kernel_path(Kl, yl, None, LUM, A, c, gam, 0.0)[2]["solver"] == "dual"
        assert cd_kernel_path(K, y, None, LUM, A, c, gam, 0.0)[2]["solver"] == "newton"  # small n
    assert "solver" not in cd_kernel_path(K, y, None, LUM, A, 1e4, gam, 0.5)[2]  # elastic net: cd
    assert cd_kernel_path(K, y, None, 7, 1.0, 1.0, gam, 0.0)[2]["solver"] == "newton"  # another loss
    with pytest.raises(ValueError, match="solver='dual' needs"):
        cd_kernel_path(K, y, None, LUM, A, 1e4, gam, 0.5, solver="dual")
    with pytest.raises(ValueError, match="solver='dual' needs"):
        cd_kernel_path(K, y, None, LUM, A, math.inf, gam, 0.0, solver="dual")
    with pytest.raises(ValueError, match="'dual'"):
        cd_kernel_path(K, y, None, LUM, A, 1e4, gam, 0.0, solver="smo")


def test_weights_and_no_intercept_against_scipy():
    K, y, _ = data(35, seed=5, width=1.5)
    w = np.random.default_rng(0).uniform(0.2, 2.0, 35)
    w = w / w.mean()
    gam = 0.05
    b, B, info = cd_kernel_path(K, y, w, LUM, A, 10.0, [gam], 0.0, tol=1e-10, solver="dual")
    bn, Bn, _ = cd_kernel_path(K, y, w, LUM, A, 10.0, [gam], 0.0, tol=1e-10, solver="newton")
    np.testing.assert_allclose(b[0] + K @ B[0], bn[0] + K @ Bn[0], atol=1e-6)
    # without an intercept: b = 0 and the objective is scipy's over beta alone
    b0, B0, info0 = cd_kernel_path(K, y, None, LUM, A, 10.0, [gam], 0.0, tol=1e-10, solver="dual", intercept=False)
    assert b0[0] == 0.0 and info0["converged"].all()

    _, _, sobj = scipy_fit(K, y, A, 10.0, gam, intercept=False)
    ours = objective(K, y, A, 10.0, gam, 0.0, B0[0])
    assert ours <= sobj + 1e-12 and abs(ours - sobj) <= 1e-9


@pytest.mark.parametrize("max_iter", [2, 55])  # ends in the passes; ends in a Newton round
def test_non_convergence_is_flagged_and_warned(max_iter):
    K, y, _ = data(100, seed=6, width=0.5)
    gam = 10.0 ** np.linspace(0.0, -4.0, 4)
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        b, B, info = cd_kernel_path(K, y, None, LUM, A, 1e4, gam, 0.0, max_iter=max_iter, solver="dual")
    assert not info["converged"].all()
    bad = ~info["converged"]
    assert np.all(info["kkt"][bad] > 1e-2 * math.sqrt(1e-7 * info["null_objective"]))
    assert np.all(info["n_iter"] <= max_iter)
    if max_iter > 50:
        assert info["newton_steps"][bad].min() > 0
    # the reported objective is that of the returned point, converged or not
    for k in range(gam.size):
        np.testing.assert_allclose(info["objective"][k], objective(K, y, A, 1e4, gam[k], b[k], B[k]), rtol=1e-9)


def _frame(n, seed):
    import pandas as pd

    _, y, X = data(n, seed=seed)
    return pd.DataFrame({"x1": X[:, 0], "x2": X[:, 1], "y": np.where(y > 0, "yes", "no")})


def test_formula_fit_predict_and_save_load_through_the_dual_route(tmp_path, monkeypatch):
    import pandas as pd

    from cohstats.models.lum import lum
    from cohstats.persist import load, save

    calls = []
    orig = lum_kdual.lum_kernel_dual_path

    def spy(*a, **k):
        calls.append(1)
        return orig(*a, **k)

    monkeypatch.setattr(lum_kdual, "lum_kernel_dual_path", spy)
    df = _frame(230, seed=8)  # above 200 points: the dual route by default
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        fit = lum("y ~ x1 + x2", df, kernel="rbf", c=1e4, standardize=False)
    assert calls and fit._info["solver"] == "dual"
    assert fit.converged
    p = fit.predict(df.iloc[:15], type="prob")
    assert np.all((p.to_numpy() >= 0) & (p.to_numpy() <= 1))
    np.testing.assert_allclose(p.sum(axis=1), 1.0, rtol=1e-12)
    save(fit, tmp_path / "k.cohstats")
    back = load(tmp_path / "k.cohstats")
    pd.testing.assert_frame_equal(back.predict(df.iloc[:15], type="prob"), p, check_exact=True)
    # the same fit through the Newton route: the same decision values
    monkeypatch.setattr(lum_kdual, "lum_kernel_dual_path", orig)
    real = kmod.cd_kernel_path

    def newton(*a, **k):
        return real(*a, **{**k, "solver": "newton"})

    monkeypatch.setattr(kmod, "cd_kernel_path", newton)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        fitn = lum("y ~ x1 + x2", df, kernel="rbf", c=1e4, standardize=False)
    assert fitn._info["solver"] == "newton"
    np.testing.assert_allclose(
        fit.predict(df.iloc[:15], type="link"), fitn.predict(df.iloc[:15], type="link"), atol=1e-4
    )


def test_tuned_lum_with_a_kernel_runs_through_the_dual_route(monkeypatch):
    from cohstats.models.lum import lum

    calls = []
    orig = lum_kdual.lum_kernel_dual_path

    def spy(*a, **k):
        calls.append(a[3])  # c
        return orig(*a, **k)

    monkeypatch.setattr(lum_kdual, "lum_kernel_dual_path", spy)
    df = _frame(210, seed=9)  # every fit above 200 points: the dual route by default
    lams = np.geomspace(10.0, 1e-3, 8)
    kw = dict(kernel="rbf", gamma=0.5, standardize=False, lambda_=lams, validation=_frame(60, seed=10))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        fit = lum("y ~ x1 + x2", df, c="tuned", **kw)
    assert 0.0 in calls and 1e4 in calls  # the soft and the hard component
    monkeypatch.setattr(lum_kdual, "lum_kernel_dual_path", orig)
    real = kmod.cd_kernel_path
    monkeypatch.setattr(kmod, "cd_kernel_path", lambda *a, **k: real(*a, **{**k, "solver": "newton"}))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        ref = lum("y ~ x1 + x2", df, c="tuned", **kw)
    assert (fit.c_selected, fit.s) == (ref.c_selected, ref.s)
    np.testing.assert_allclose(fit.tuning["error"], ref.tuning["error"], atol=1e-12)
    np.testing.assert_allclose(
        fit.predict(df.iloc[:20], type="prob"), ref.predict(df.iloc[:20], type="prob"), atol=1e-4
    )


def test_cv_gkl_and_summary_through_the_dual_route(monkeypatch):
    """cv (one shared kernel, training folds above 200 points), gkl (perturbed refits) and
    summary() on the kernel dual route: every fit of both tuners goes through it, cv's full-data
    fit equals a direct fit, and the gkl estimate is finite and the sum of its parts."""
    import cohstats as cs
    from cohstats.models.lum import lum

    calls = []
    orig = lum_kdual.lum_kernel_dual_path

    def spy(*a, **k):
        calls.append(a[0].n)
        return orig(*a, **k)

    monkeypatch.setattr(lum_kdual, "lum_kernel_dual_path", spy)
    df = _frame(330, seed=4)
    kw = dict(kernel="rbf", c=1e4, nlambda=5, standardize=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        direct = lum("y ~ x1 + x2", df, **kw)
        calls.clear()
        res = cs.cv(lum, "y ~ x1 + x2", df, nfolds=3, random_state=0, verbose=False, **kw)
        assert len(calls) == 4 and min(calls) > 200  # three folds and the full-data fit
        calls.clear()
        g = cs.gkl(lum, "y ~ x1 + x2", df.iloc[:230], D=2, random_state=0, verbose=False, **kw)
    assert len(calls) >= 3 and min(calls) > 200  # the fit and its D perturbed refits
    assert res.fit._info["solver"] == "dual"
    np.testing.assert_allclose(res.fit._coefs, direct._coefs, rtol=0, atol=1e-10)
    assert "lambda" in str(res.best_fit.summary()).lower()
    est = np.atleast_1d(g.estimate)
    assert np.all(np.isfinite(est))
    np.testing.assert_allclose(
        est, np.atleast_1d(g.egkl) + np.atleast_1d(g.cov_term) + np.atleast_1d(g.d_hat), rtol=1e-12
    )


@pytest.mark.parametrize("c", [0.0, 100.0, 1e4])
def test_capped_newton_rounds_reach_the_same_optimum(c, monkeypatch):
    """With at most 8 observations in a dense Newton factorisation (larger systems by GMRES,
    preconditioned by that factorisation), the rounds stay bounded and the path reaches the same
    optimum as the uncapped rounds and the damped Newton route, under the same KKT gate."""
    K, y, _ = data(150, seed=3, width=0.5)
    pk = prepare_kernel(K)
    gam = 10.0 ** np.linspace(2.0, -4.0, 8)
    tol = 1e-11
    b0, B0, info0 = cd_kernel_path(pk, y, None, LUM, A, c, gam, 0.0, tol=tol, solver="dual")
    bn, Bn, infon = cd_kernel_path(pk, y, None, LUM, A, c, gam, 0.0, tol=tol, solver="newton")
    dense, capped = [], []
    fill, solve = lum_kdual._fill_reduced, lum_kdual._solve_capped

    def record_fill(Xt, m, F, *args):
        dense.append(F.shape[0])
        return fill(Xt, m, F, *args)

    def record_capped(Xt, m, F, *args):
        capped.append(F.shape[0])
        return solve(Xt, m, F, *args)

    monkeypatch.setattr(lum_kdual, "_NEWTON_CAP", 8)
    monkeypatch.setattr(lum_kdual, "_fill_reduced", record_fill)
    monkeypatch.setattr(lum_kdual, "_solve_capped", record_capped)
    b, B, info = cd_kernel_path(pk, y, None, LUM, A, c, gam, 0.0, tol=tol, solver="dual")
    assert capped and max(capped) > 8  # larger systems were met ...
    assert max(dense) <= 8  # ... and no dense factorisation exceeded the cap
    assert info["converged"].all()
    assert np.all(info["kkt"] <= 1e-2 * math.sqrt(tol * info["null_objective"]))
    for k in range(gam.size):
        np.testing.assert_allclose(info["objective"][k], objective(K, y, A, c, gam[k], b[k], B[k]), rtol=1e-10)
    np.testing.assert_allclose(info["objective"], info0["objective"], rtol=1e-10)
    np.testing.assert_allclose(info["objective"], infon["objective"], rtol=1e-10)
    Kf = pk.Xt + pk.m[:, None]
    f, fn, f0 = (bb[:, None] + BB @ Kf.T for bb, BB in ((b, B), (bn, Bn), (b0, B0)))
    np.testing.assert_allclose(f, fn, atol=1e-4)
    np.testing.assert_allclose(f, f0, atol=1e-4)


def test_capped_newton_steps_never_raise_the_objective_and_reach_scipy():
    """Damped Newton steps with a 5-observation cap from a point far from the optimum: the
    objective never rises from one step to the next, and the steps end at scipy's optimum."""
    K, y, _ = data(60, seed=4, width=1.0)
    pk = prepare_kernel(K)
    c, gam = 0.0, 0.01
    # a start: the dual route's solution at a larger penalty
    b1, B1, _ = lum_kernel_dual_path(pk, y, A, c, np.array([0.1]), tol=1e-4)
    Kf = pk.Xt + pk.m[:, None]
    beta = np.ascontiguousarray(B1[0])
    Kb = np.ascontiguousarray(Kf @ beta)
    objs = []
    for steps in range(0, 25, 3):
        ob, obeta, oKb, used, ok, obj, kk = lum_kdual._newton_polish(
            pk, y, A, c, gam, b1[0], beta.copy(), Kb.copy(), 1e-13, steps, cap=5
        )
        objs.append(objective(Kf, y, A, c, gam, ob, obeta))
        np.testing.assert_allclose(obj, objs[-1], rtol=1e-10)
    assert np.all(np.diff(objs) <= 1e-13 * np.abs(objs[:-1]))
    assert objs[-1] < objs[0] - 1e-3
    sb, sbeta, sobj = scipy_fit(Kf, y, A, c, gam)
    assert objs[-1] <= sobj + 1e-12
    assert abs(objs[-1] - sobj) <= 1e-9 * (1.0 + sobj)
