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


@pytest.mark.parametrize("rho,y", [(1e-3, Y), (1e3, Y), (1e3, Y3), (1e-3, Y3)])
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


# ---------------------------------------------------------------- K classes near the hinge
def _mc_objective_ref(X, y, T, lam, alpha, K):
    """The grouped objective of cd_multi_path (no standardisation, loss scale 1) in the
    sum-to-zero parametrisation B_j = Q z_j, b = Q z_0 (Q an orthonormal basis of 1-perp), with
    its gradient, for scipy."""
    from scipy.special import logsumexp, softmax

    n, p = X.shape
    Q = np.linalg.qr(np.vstack([np.ones(K), np.eye(K)[:-1]]).T)[0][:, 1:]

    def unpack(th):
        Z = th.reshape(p + 1, K - 1)
        return Z[0] @ Q.T, Z[1:] @ Q.T, Z

    def fun(th):
        b, B, Z = unpack(th)
        G = b + X @ B  # (n, K)
        E = (1.0 + G - G[np.arange(n), y][:, None]) / T
        E[np.arange(n), y] = 0.0
        loss = T * logsumexp(E, axis=1)
        P = softmax(E, axis=1)  # dC/dg_k = P_k - I[k = c]
        P[np.arange(n), y] -= 1.0
        nz = np.linalg.norm(Z[1:], axis=1)
        val = loss.mean() + lam * np.sum((1 - alpha) / 2 * nz**2 + alpha * nz)
        gG = P / n
        gZ = np.vstack([gG.sum(axis=0), X.T @ gG]) @ Q
        gZ[1:] += lam * ((1 - alpha) * Z[1:] + alpha * Z[1:] / np.maximum(nz, 1e-300)[:, None])
        return val, gZ.ravel()

    return fun, unpack


def _mc_data(n=40, seed=3):
    rng = np.random.default_rng(seed)
    Xs = rng.normal(size=(n, 2))
    Xs = (Xs - Xs.mean(0)) / Xs.std(0)
    ys = (Xs[:, 0] > 0).astype(int) + (Xs[:, 1] > 0.3).astype(int)
    flip = rng.random(n) < 0.15
    ys[flip] = rng.integers(0, 3, flip.sum())
    return Xs, ys


@pytest.mark.parametrize("T,mode", [(1e-3, "auto"), (1e-2, "auto"), (1.0, "irls"), (1.0, "mm")])
def test_multiclass_near_hinge_matches_scipy(T, mode):
    """The K-class fit at small rho reaches the optimum found by scipy on the same objective."""
    from scipy.optimize import minimize

    from cohstats.solvers.cd.multi import cd_multi_path

    Xs, ys = _mc_data()
    lam, alpha = 0.02, 0.5
    b, B, info = cd_multi_path(
        Xs, ys, None, T, [lam], alpha, K=3, standardize=False, tol=1e-10, max_iter=100000, mode=mode
    )
    assert info["converged"][0]
    fun, unpack = _mc_objective_ref(Xs, ys, T, lam, alpha, 3)
    best = None
    for start in range(4):  # several starts: the reference must not stop at a kink
        th0 = np.random.default_rng(start).normal(scale=0.1, size=6)
        r = minimize(fun, th0, jac=True, method="BFGS", options=dict(gtol=1e-12, maxiter=20000))
        if best is None or r.fun < best.fun:
            best = r
    ours = info["objective"][0]
    # ours is at least as low as scipy's best, and the solutions agree
    assert ours <= best.fun + 1e-9 * max(1.0, abs(best.fun))
    assert abs(ours - best.fun) <= 1e-6 * abs(best.fun)
    b_ref, B_ref, _ = unpack(best.x)
    scale = max(np.abs(B_ref).max(), 1.0)
    np.testing.assert_allclose(B[0], B_ref, atol=2e-3 * scale)
    np.testing.assert_allclose(b[0], b_ref, atol=2e-3 * scale)


@pytest.mark.parametrize("T,mode", [(1e-3, "auto"), (1.0, "irls"), (1.0, "mm")])
def test_multiclass_objective_never_rises(T, mode):
    """Stopping after k passes, k = 1, 2, ...: the objective of the grouped fit never rises."""
    from cohstats.solvers.cd.multi import cd_multi_path

    Xs, ys = _mc_data(n=60, seed=5)
    objs = []
    for k in range(1, 41):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _, _, info = cd_multi_path(Xs, ys, None, T, [0.01], 0.5, K=3, max_iter=k, tol=1e-12, mode=mode)
        objs.append(info["objective"][0])
    objs = np.array(objs)
    assert np.all(np.diff(objs) <= 1e-12 * np.abs(objs[:-1]))
    assert objs[-1] < objs[0]


@pytest.mark.parametrize("rho", [1e-3, 1e3])
def test_multiclass_kernel_temperature_extremes(rho):
    """The K-class kernel path converges at both ends of the rho range, to an objective no
    higher than that of the Boehning majorise-minimise solver run to its pass limit."""
    from cohstats.losses.scalar import closs_kappa
    from cohstats.solvers.cd.kernel import cd_kernel_multi_path

    with warnings.catch_warnings():
        warnings.simplefilter("error", category=cs.ConvergenceWarning)
        fit = cs.clearn(X, Y3, kernel="rbf", rho=rho, alpha=0.5, lambda_=[0.1, 0.01])
    assert fit.converged
    P = fit.predict(X, type="prob").to_numpy()
    assert np.all(np.isfinite(P))
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    Z = (X - X.mean(0)) / X.std(0)
    Kmat = np.exp(-0.5 * ((Z[:, None, :] - Z[None, :, :]) ** 2).sum(-1))
    yc = np.searchsorted(["a", "b", "c"], Y3)
    sc = closs_kappa(rho, 1.0)
    lam = [0.1, 0.01]
    _, _, newton = cd_kernel_multi_path(Kmat, yc, None, rho, lam, 0.5, loss_scale=sc, mode="irls")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, _, mm = cd_kernel_multi_path(Kmat, yc, None, rho, lam, 0.5, loss_scale=sc, mode="mm", max_iter=5000)
    assert np.all(newton["converged"])
    assert np.max(newton["kkt"]) < 1e-3
    o, m = newton["objective"], mm["objective"]
    assert np.all(o <= m + 1e-7 * np.abs(m))
    if np.all(mm["converged"]):
        np.testing.assert_allclose(o, m, rtol=1e-6)
