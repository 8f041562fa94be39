"""Kernel-expansion C-learning (cohstats/solvers/cd/kernel.py) against scipy.optimize, the KKT
conditions of SPEC 3.5 and an exact SVM (scikit-learn's libsvm) in the rho -> 0 limit."""

import numpy as np
import pytest
from scipy.optimize import minimize

from cohstats._numba_cache import njit
from cohstats.kernels import make_kernel
from cohstats.losses.scalar import LOSS_C, LOSS_LOGIT, LOSS_LUM, loss_d1, loss_value
from cohstats.solvers.cd.kernel import cd_kernel_path, kernel_gamma_max


def _data(n=40, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 2))
    y = np.where(X[:, 0] ** 2 + X[:, 1] - 0.8 + 0.5 * rng.standard_normal(n) > 0, 1.0, -1.0)
    K = make_kernel("rbf", X)(X)
    return X, y, K


@njit(cache=False)
def _d1(code, z, p1, p2):  # loss_d1 has no Python entry point
    return loss_d1(code, z, p1, p2)


def _v(fn, code, z, p1, p2):
    return np.array([fn(code, zi, p1, p2) for zi in z])


def _scipy_kernel(K, y, code, p1, p2, gam, alpha):
    n = K.shape[0]

    def fun(v):
        b, bp, bm = v[0], v[1 : n + 1], v[n + 1 :]
        beta = bp - bm
        Kb = K @ beta
        z = y * (b + Kb)
        val = _v(loss_value, code, z, p1, p2).mean() + gam * ((1 - alpha) / 2 * beta @ Kb + alpha * (bp + bm).sum())
        d = y * _v(_d1, code, z, p1, p2) / n
        gbeta = K @ d + gam * (1 - alpha) * Kb
        g = np.concatenate([[d.sum()], gbeta + gam * alpha, -gbeta + gam * alpha])
        return val, g

    res = minimize(
        fun,
        np.zeros(2 * n + 1),
        jac=True,
        method="L-BFGS-B",
        bounds=[(None, None)] + [(0, None)] * (2 * n),
        options=dict(maxiter=50000, ftol=1e-16, gtol=1e-12, maxcor=50),
    )
    v = res.x
    return v[0], v[1 : n + 1] - v[n + 1 :], res.fun


@pytest.mark.parametrize("alpha", [0.0, 0.5])
def test_kernel_objective_matches_scipy_and_kkt(alpha):
    X, y, K = _data(36, seed=1)
    gmax = kernel_gamma_max(K, y, None, LOSS_C, 1.0, 1.0, alpha)
    gams = gmax * np.array([0.3, 0.05, 0.01])
    b0, B, info = cd_kernel_path(K, y, None, LOSS_C, 1.0, 1.0, gams, alpha, tol=1e-10, max_iter=50000)
    assert info["converged"].all()
    n = K.shape[0]
    for k, gam in enumerate(gams):
        f = b0[k] + K @ B[k]
        z = y * f
        ours = _v(loss_value, LOSS_C, z, 1.0, 1.0).mean() + gam * (
            (1 - alpha) / 2 * B[k] @ K @ B[k] + alpha * np.abs(B[k]).sum()
        )
        np.testing.assert_allclose(info["objective"][k], ours, rtol=1e-12)
        # KKT of SPEC 3.5 with P = K, at the SPEC's tolerance 1e-4 (the rbf kernel matrix is
        # ill-conditioned, eigenvalues down to 1e-10, so the coefficients converge slowly in
        # directions that barely change f)
        psi = y * _v(_d1, LOSS_C, z, 1.0, 1.0)
        assert abs(psi.sum() / n) < 1e-7
        g = K @ psi / n + gam * (1 - alpha) * K @ B[k]
        nz = B[k] != 0
        np.testing.assert_allclose(g[nz] + gam * alpha * np.sign(B[k][nz]), 0, atol=1e-4)
        assert np.all(np.abs(g[~nz]) <= gam * alpha + 1e-4)
        assert info["kkt"][k] < 1e-4
    b, beta, fun = _scipy_kernel(K, y, LOSS_C, 1.0, 1.0, gams[1], alpha)
    assert abs(info["objective"][1] - fun) <= 1e-7 * fun
    f_ref = b + K @ beta
    np.testing.assert_allclose(b0[1] + K @ B[1], f_ref, atol=1e-3 * np.abs(f_ref).max())
    if alpha > 0:
        assert info["df"][0] < n  # the l1 part selects support points


def test_gamma_max_gives_zero_and_irls_mm_agree():
    X, y, K = _data(30, seed=2)
    gmax = kernel_gamma_max(K, y, None, LOSS_LOGIT, 0, 0, 1.0)
    b0, B, info = cd_kernel_path(K, y, None, LOSS_LOGIT, 0, 0, [gmax * 1.0001, gmax * 0.5, gmax * 0.05], 1.0, tol=1e-13)
    assert np.all(B[0] == 0)
    assert info["df"][1] >= 1
    b0m, Bm, infom = cd_kernel_path(
        K, y, None, LOSS_LOGIT, 0, 0, [gmax * 1.0001, gmax * 0.5, gmax * 0.05], 1.0, tol=1e-13, mode="mm"
    )
    np.testing.assert_allclose(infom["objective"], info["objective"], rtol=1e-9)
    np.testing.assert_allclose(b0m + K @ Bm.T, b0 + K @ B.T, atol=1e-3)


def test_small_rho_approaches_svm():
    from sklearn.svm import SVC

    X, y, K = _data(40, seed=3)
    n = K.shape[0]
    gam = 0.01
    b0, B, info = cd_kernel_path(K, y, None, LOSS_C, 0.01, 1.0, [gam], 0.0, tol=1e-12, max_iter=200000)
    svc = SVC(kernel="precomputed", C=1.0 / (n * gam), tol=1e-8).fit(K, y)
    f_svm = svc.decision_function(K)
    f_ours = b0[0] + K @ B[0]
    # rho = 0.01: C-loss within rho log 2 of the hinge; decision values agree loosely
    assert np.max(np.abs(f_ours - f_svm)) < 0.1 * np.max(np.abs(f_svm))
    assert np.mean(np.sign(f_ours) == np.sign(f_svm)) >= 0.95


@pytest.mark.parametrize("c", [1.0, 1e4])
def test_kernel_lum_ridge_kkt_and_cd_agree(c):
    X, y, K = _data(30, seed=4)
    gams = [0.05, 0.01]
    b0, B, info = cd_kernel_path(K, y, None, LOSS_LUM, 1.0, c, gams, 0.0, tol=1e-13)
    assert info["converged"].all() and info["solver"] == "newton"  # n <= 200: Newton (dual above)
    n = K.shape[0]
    for k, gam in enumerate(gams):
        z = y * (b0[k] + K @ B[k])
        psi = y * _v(_d1, LOSS_LUM, z, 1.0, c)
        g = K @ psi / n + gam * K @ B[k]
        assert np.abs(g).max() < 1e-6
        assert abs(psi.mean()) < 1e-6
    # Algorithm 1 with exact coordinate minimisation never beats the Newton solution, and gets
    # close to it for the smooth LUM (c = 1); for c = 1e4 (nearly the hinge) coordinate descent
    # stalls about 1-2 % above the optimum, which is why alpha = 0 uses Newton (or, above n = 200, the dual)
    b1, B1, info1 = cd_kernel_path(
        K, y, None, LOSS_LUM, 1.0, c, gams, 0.0, tol=1e-9, solver="cd", max_iter=100000, warn=False
    )
    assert info1["mode"] == 2
    assert np.all(info1["objective"] >= info["objective"] - 1e-12)
    if c == 1.0:
        np.testing.assert_allclose(info1["objective"], info["objective"], rtol=1e-4)


def test_kernel_errors():
    X, y, K = _data(20, seed=5)
    with pytest.raises(ValueError, match="square"):
        cd_kernel_path(K[:, :5], y, None, LOSS_C, 1.0, 1.0, [0.1], 0.5)
    K2 = K.copy()
    K2[0, 1] += 1.0
    with pytest.raises(ValueError, match="symmetric"):
        cd_kernel_path(K2, y, None, LOSS_C, 1.0, 1.0, [0.1], 0.5)


# --------------------------------------------------------------------------- K classes
def _mc_data(n=30, K=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 2))
    W = rng.standard_normal((2, K)) * 2.0
    y = np.argmax(X @ W + np.sin(2 * X[:, :1]) + rng.gumbel(size=(n, K)), axis=1)
    Kmat = make_kernel("rbf", X)(X)
    return X, y, Kmat


def _mc_objective(Kmat, y, T, sc, lam, alpha, b, B):
    from cohstats.losses.multiclass import coherence_loss

    G = b + Kmat @ B
    return sc * coherence_loss(G, y, T).mean() + lam * (
        (1 - alpha) / 2 * np.trace(B.T @ Kmat @ B) + alpha * np.linalg.norm(B, axis=1).sum()
    )


def _scipy_mc_kernel(Kmat, y, T, sc, lam, alpha):
    """Direct minimisation of the same objective by L-BFGS-B on (b, B). The row norms are
    smoothed as sqrt(||B_j||^2 + eps^2) (which moves the objective by at most n eps lam alpha),
    with eps decreased over warm-started stages down to n eps lam alpha = 1e-9.
    Returns the minimiser (b, B)."""
    from cohstats.losses.multiclass import coherence_grad, coherence_loss

    n = Kmat.shape[0]
    K = int(y.max()) + 1
    eps_last = 1e-9 / (n * lam * max(alpha, 1e-3))

    def fun(v, eps):
        b, B = v[:K], v[K:].reshape(n, K)
        G = b + Kmat @ B
        nr = np.sqrt((B**2).sum(1) + eps**2)
        KB = Kmat @ B
        val = sc * coherence_loss(G, y, T).mean() + lam * ((1 - alpha) / 2 * np.sum(B * KB) + alpha * nr.sum())
        gG = sc * coherence_grad(G, y, T) / n
        gB = Kmat @ gG + lam * ((1 - alpha) * KB + alpha * B / nr[:, None])
        return val, np.concatenate([gG.sum(0), gB.ravel()])

    v = np.zeros(K + n * K)
    for eps in (1e-2, 1e-4, 1e-6, eps_last):
        v = minimize(
            fun,
            v,
            args=(max(eps, eps_last),),
            jac=True,
            method="L-BFGS-B",
            options=dict(maxiter=100000, maxfun=200000, ftol=1e-16, gtol=1e-12, maxcor=50),
        ).x
    return v[:K], v[K:].reshape(n, K)


@pytest.mark.parametrize("alpha", [0.0, pytest.param(0.5, marks=pytest.mark.slow), 1.0])
def test_multiclass_kernel_matches_scipy(alpha):
    from cohstats.solvers.cd.kernel import cd_kernel_multi_path, kernel_multi_gamma_max

    X, y, Kmat = _mc_data(30, 3, seed=4)
    T, sc = 1.0, 1.0
    gmax = kernel_multi_gamma_max(Kmat, y, None, T, alpha)
    lams = gmax * np.array([0.5, 0.1, 0.03])
    b, B, info = cd_kernel_multi_path(Kmat, y, None, T, lams, alpha, tol=1e-13, max_iter=200000)
    assert info["converged"].all()
    assert np.all(np.diff(info["df"]) >= 0) and info["df"][-1] > 0
    np.testing.assert_allclose(B.sum(axis=2), 0, atol=1e-10)
    np.testing.assert_allclose(b.sum(axis=1), 0, atol=1e-10)
    if alpha > 0:
        nz = B != 0  # support points enter for all classes or for none
        assert np.all(nz.all(axis=2) == nz.any(axis=2))
    lam = lams[-1]
    ours = _mc_objective(Kmat, y, T, sc, lam, alpha, b[-1], B[-1])
    np.testing.assert_allclose(info["objective"][-1], ours, rtol=1e-10)
    ref = _mc_objective(Kmat, y, T, sc, lam, alpha, *_scipy_mc_kernel(Kmat, y, T, sc, lam, alpha))
    assert abs(ours - ref) < 1e-6
    assert ours <= ref + 1e-8
    assert info["kkt"][-1] < 1e-5


@pytest.mark.parametrize("alpha", [0.5, 1.0])
@pytest.mark.parametrize("loss", ["V", "C"])
def test_multiclass_kernel_k2_equals_binary_kernel_fit(alpha, loss):
    from cohstats.losses.scalar import LOSS_V, closs_kappa
    from cohstats.solvers.cd.kernel import cd_kernel_multi_path
    from cohstats.solvers.cd.multi import binary_equivalent

    X, y, Kmat = _mc_data(36, 2, seed=5)
    T = 0.8
    sc = 1.0 if loss == "V" else closs_kappa(T, 1.0)
    lams = np.array([0.05, 0.01, 0.003])
    bm, Bm, im = cd_kernel_multi_path(Kmat, y, None, T, lams, alpha, tol=1e-14, max_iter=200000, loss_scale=sc)
    eq = [binary_equivalent(lam, alpha) for lam in lams]
    yb = np.where(y == 1, 1.0, -1.0)
    code = LOSS_V if loss == "V" else LOSS_C
    bb, Bb, ib = cd_kernel_path(Kmat, yb, None, code, T, 1.0, [e[0] for e in eq], eq[0][1], tol=1e-14, max_iter=200000)
    np.testing.assert_allclose(im["objective"], ib["objective"], rtol=1e-8)
    # decision values f = g_1 - g_0 on the training points (the coefficients of an
    # ill-conditioned kernel are determined far less sharply than the fit)
    fm = (bm[:, 1] - bm[:, 0])[:, None] + (Bm[:, :, 1] - Bm[:, :, 0]) @ Kmat
    fb = bb[:, None] + Bb @ Kmat
    np.testing.assert_allclose(fm, fb, atol=1e-4 * np.abs(fb).max())
    np.testing.assert_allclose(Bm[:, :, 1] - Bm[:, :, 0], Bb, atol=1e-2 * np.abs(Bb).max())


def test_small_newton_systems_use_one_blas_thread(monkeypatch):
    """The damped Newton route factorises small systems with one BLAS thread (threads spin on a
    busy machine) and restores the caller's setting afterwards; large systems are left alone."""
    from threadpoolctl import threadpool_info

    import cohstats.solvers.cd.kernel as kmod
    from cohstats.losses.scalar import LOSS_LUM

    def blas_threads():
        return [d["num_threads"] for d in threadpool_info() if d["user_api"] == "blas"]

    before = blas_threads()
    if not before or max(before) < 2:
        pytest.skip("BLAS runs one thread here: nothing to limit")
    seen = []
    inner = kmod._ridge_newton_path

    def spy(*args, **kwargs):
        seen.append(max(blas_threads()))
        return inner(*args, **kwargs)

    monkeypatch.setattr(kmod, "_ridge_newton_path", spy)
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 2))
    y = np.where(X[:, 0] * X[:, 1] > 0, 1.0, -1.0)
    K = np.exp(-((X[:, None] - X[None]) ** 2).sum(-1))
    b_small, B_small, _ = kmod.cd_kernel_path(K, y, None, LOSS_LUM, 1000.0, 10.0, [0.1, 0.01], 0.0, solver="newton")
    assert seen == [1]
    assert blas_threads() == before
    monkeypatch.setattr(kmod, "SMALL_SYSTEM", 10)  # the same problem counted as large
    b_big, B_big, _ = kmod.cd_kernel_path(K, y, None, LOSS_LUM, 1000.0, 10.0, [0.1, 0.01], 0.0, solver="newton")
    assert seen[1] == max(before)
    np.testing.assert_allclose(B_big, B_small, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(b_big, b_small, rtol=1e-9, atol=1e-12)
