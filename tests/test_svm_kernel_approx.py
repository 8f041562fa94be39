"""svm(kernel_approx=...): the weighted C-SVM on a low-rank feature map, by dual coordinate descent.

References: scikit-learn's SVC(kernel="linear") (libsvm, unpenalised intercept) and
LinearSVC(loss="hinge") (liblinear, intercept as a penalised constant feature) fitted on the
same mapped features; the exact-kernel svm (SMO) when the Nystroem map uses every row.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.optimize import minimize
from sklearn.svm import SVC, LinearSVC

import cohstats as cs
from cohstats.kernel_approx import feature_map
from cohstats.kernels import make_kernel
from cohstats.models.svm_approx import ApproxMulticlassSVMFit, ApproxSVMFit
from cohstats.probability import platt_fit
from cohstats.solvers.svm.linear import linear_svm_dcd


def _data(n=120, seed=0, p=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    y = np.where(X[:, 0] ** 2 + X[:, 1] + 0.6 * rng.normal(size=n) > 0.8, "b", "a")
    return X, y


def _features(n=160, r=12, seed=1):
    X, y = _data(n, seed)
    k = make_kernel("rbf", X, gamma=0.5)
    Phi = feature_map("nystroem", k, X, n_components=r, random_state=0)(X)
    return Phi, np.where(y == "b", 1.0, -1.0)


def _svc_dual_objective(svc, n):
    a = np.zeros(n)
    a[svc.support_] = np.abs(svc.dual_coef_[0])
    w = svc.coef_[0]
    return 0.5 * w @ w - a.sum()


@pytest.mark.parametrize("C", [0.05, 1.0, 10.0])
def test_dual_objective_and_intercept_equal_libsvm_linear(C):
    Phi, y = _features()
    rng = np.random.default_rng(3)
    sw = rng.uniform(0.2, 2.0, size=y.size)  # per-sample costs C_i = C sw_i
    res = linear_svm_dcd(Phi, y, C * sw, tol=1e-10, max_epochs=200_000)
    assert res.converged
    svc = SVC(kernel="linear", C=C, tol=1e-12).fit(Phi, y, sample_weight=sw)
    ref = _svc_dual_objective(svc, y.size)
    assert abs(res.objective - ref) <= 1e-6 * abs(ref)
    # the primal objective at (w, b) equals the dual optimum (strong duality): b is the optimal intercept
    primal = 0.5 * res.coef @ res.coef + np.sum(C * sw * np.maximum(0.0, 1.0 - y * res.info["fitted"]))
    assert abs(primal + res.objective) <= 1e-6 * abs(ref)
    np.testing.assert_allclose(res.info["fitted"], svc.decision_function(Phi), atol=1e-4)
    assert abs(res.info["s"]) < 1e-8 * C * sw.sum()  # sum y_i a_i = 0


def test_no_intercept_with_a_constant_feature_is_liblinears_model():
    """intercept=False plus a constant column B: liblinear's penalised-bias L1-loss SVM."""
    Phi, y = _features(seed=2)
    B, C = 3.0, 0.7
    Xb = np.column_stack([Phi, np.full(y.size, B)])
    res = linear_svm_dcd(Xb, y, C, intercept=False, tol=1e-10, max_epochs=200_000)
    assert res.converged and res.intercept == 0.0

    def primal(w):
        return 0.5 * w @ w + C * np.sum(np.maximum(0.0, 1.0 - y * (Xb @ w)))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lin = LinearSVC(
            loss="hinge", C=C, fit_intercept=True, intercept_scaling=B, tol=1e-12, max_iter=10**6, random_state=0
        )
        lin.fit(Phi, y)
    w_lin = np.concatenate([lin.coef_[0], [lin.intercept_[0] / B]])
    ours = primal(res.coef)
    # liblinear stops early (its iteration rule); ours is no worse and within 1e-5 of it
    assert ours <= primal(w_lin) * (1 + 1e-9) and abs(ours - primal(w_lin)) <= 1e-5 * ours
    # the exact optimum of the same dual (box-constrained QP) by scipy's L-BFGS-B
    Q = (Xb * y[:, None]) @ (Xb * y[:, None]).T
    opt = minimize(
        lambda a: (0.5 * a @ Q @ a - a.sum(), Q @ a - 1.0),
        np.full(y.size, C / 2),
        jac=True,
        method="L-BFGS-B",
        bounds=[(0.0, C)] * y.size,
        options=dict(ftol=1e-15, gtol=1e-12, maxiter=100_000, maxcor=50),
    )
    assert abs(res.objective - opt.fun) <= 1e-6 * abs(opt.fun)
    assert abs(ours + res.objective) <= 1e-6 * ours  # duality gap closed


def test_objective_never_rises_within_a_stage():
    Phi, y = _features(n=300, r=20, seed=4)
    for intercept in (True, False):
        res = linear_svm_dcd(Phi, y, 2.0, intercept=intercept, tol=1e-8, max_epochs=100_000)
        h = res.info["history"]
        assert h.shape[0] == res.n_iter > 5
        for st in np.unique(h[:, 0]):
            vals = h[h[:, 0] == st, 1]
            assert np.all(np.diff(vals) <= 1e-12 * np.abs(vals[:-1]).max())
        if intercept:
            assert res.info["stages"] >= 2  # the multiplier really moved
        else:
            assert res.info["stages"] == 1


def test_shrinking_and_seed_do_not_change_the_solution():
    Phi, y = _features(n=300, r=20, seed=5)
    ref = linear_svm_dcd(Phi, y, 1.0, tol=1e-10, shrinking=False, max_epochs=200_000)
    for sh, seed in ((True, 0), (True, 7), (False, 3)):
        r = linear_svm_dcd(Phi, y, 1.0, tol=1e-10, shrinking=sh, random_state=seed, max_epochs=200_000)
        assert abs(r.objective - ref.objective) <= 1e-9 * abs(ref.objective)
        np.testing.assert_allclose(r.info["fitted"], ref.info["fitted"], atol=1e-5)
    # the same seed gives the same numbers
    a = linear_svm_dcd(Phi, y, 1.0, tol=1e-4, random_state=11)
    b = linear_svm_dcd(Phi, y, 1.0, tol=1e-4, random_state=11)
    assert np.array_equal(a.dual, b.dual) and a.intercept == b.intercept


def test_weights_equal_duplicated_rows():
    Phi, y = _features(n=100, r=15, seed=6)
    w = np.ones(y.size)
    w[::3] = 2.0
    dup = np.concatenate([np.arange(y.size), np.arange(y.size)[::3]])
    rw = linear_svm_dcd(Phi, y, 1.5 * w, tol=1e-10, max_epochs=200_000)
    rd = linear_svm_dcd(Phi[dup], y[dup], 1.5, tol=1e-10, max_epochs=200_000)
    assert abs(rw.objective - rd.objective) <= 1e-7 * abs(rd.objective)
    np.testing.assert_allclose(rw.coef, rd.coef, atol=1e-5)
    assert abs(rw.intercept - rd.intercept) < 1e-5
    # through svm(): weights vs duplicated rows, every row a landmark (the map is then exact)
    X, yl = _data(60, seed=7)
    wt = np.where(np.arange(60) % 4 == 0, 2.0, 1.0)
    d2 = np.concatenate([np.arange(60), np.arange(60)[::4]])
    kw = dict(kernel="rbf", gamma=0.4, C=2.0, tol=1e-9, kernel_approx="nystroem")
    fw = cs.svm(X, yl, weights=wt, n_components=60, **kw)
    fd = cs.svm(X[d2], yl[d2], n_components=d2.size, **kw)
    Xn = np.random.default_rng(1).normal(size=(25, 3))
    np.testing.assert_allclose(
        fw.predict(Xn, type="link").to_numpy(), fd.predict(Xn, type="link").to_numpy(), atol=1e-5
    )


def test_full_rank_nystroem_svm_equals_the_exact_kernel_svm():
    X, y = _data(150, seed=8)
    kw = dict(kernel="rbf", gamma=0.5, C=3.0, tol=1e-9)
    exact = cs.svm(X, y, **kw)
    approx = cs.svm(X, y, kernel_approx="nystroem", n_components=150, **kw)
    assert isinstance(approx, ApproxSVMFit) and approx.converged
    assert abs(approx.objective - exact.objective) <= 1e-6 * abs(exact.objective)
    assert abs(approx.intercept - exact.intercept) < 1e-5
    Xn = np.random.default_rng(2).normal(size=(40, 3))
    np.testing.assert_allclose(
        approx.predict(Xn, type="link").to_numpy(), exact.predict(Xn, type="link").to_numpy(), atol=1e-5
    )
    np.testing.assert_allclose(
        approx.predict(Xn, type="prob").to_numpy(), exact.predict(Xn, type="prob").to_numpy(), atol=1e-5
    )
    # Platt on the training decision values, as the exact fit
    f = approx.predict(Xn, type="link").to_numpy().ravel()
    np.testing.assert_allclose(
        approx.predict(Xn, type="prob").to_numpy()[:, 1], platt_fit(approx.fitted_decision, approx.design.y)(f)
    )
    # bracketing: the weighted SVMs of the grid solved by coordinate descent equal the exact pi path
    pb_a = approx.predict(Xn, type="prob", method="bracket", m=8).to_numpy()
    pb_e = exact.predict(Xn, type="prob", method="bracket", m=8).to_numpy()
    assert np.mean(np.abs(pb_a - pb_e)) < 0.01
    assert approx.coef is None and approx.dual_coef.shape[1] == 1
    assert approx.feature_coef.shape == (approx.feature_map.dim,)
    assert "nystroem" in str(approx.summary())


def test_pi_weights_and_pi_path():
    X, y = _data(120, seed=9)
    kw = dict(kernel="rbf", gamma=0.5, C=1.0, tol=1e-9)
    for pi in (0.3, 0.8):
        ex = cs.svm(X, y, pi=pi, **kw)
        ap = cs.svm(X, y, pi=pi, kernel_approx="nystroem", n_components=120, **kw)
        assert abs(ap.objective - ex.objective) <= 1e-6 * abs(ex.objective)
    ap = cs.svm(X, y, pi="path", m=6, kernel_approx="nystroem", n_components=40, **kw)
    P = ap.predict(X[:10], type="prob").to_numpy()  # bracketing by default with pi="path"
    assert np.allclose(P.sum(axis=1), 1.0) and np.allclose(P[:, 1] * 12, np.round(P[:, 1] * 12))
    assert ap.path().shape[0] == 5


def test_moderate_rank_is_close_to_the_exact_fit():
    X, y = _data(500, seed=10)
    Xt, yt = _data(3000, seed=11)
    exact = cs.svm(X, y)
    err_e = np.mean(exact.predict(Xt).to_numpy() != yt)
    pe = exact.predict(Xt, type="prob").to_numpy()[:, 1]
    for kind in ("nystroem", "rff"):
        ap = cs.svm(X, y, kernel_approx=kind, n_components=150)
        err_a = np.mean(ap.predict(Xt).to_numpy() != yt)
        assert err_a < err_e + 0.03
        assert np.mean(np.abs(ap.predict(Xt, type="prob").to_numpy()[:, 1] - pe)) < 0.05


def test_save_load_round_trip(tmp_path):
    X, y = _data(80, seed=12)
    fit = cs.svm(X, y, kernel_approx="rff", n_components=30, random_state=4)
    Xn = np.random.default_rng(5).normal(size=(20, 3))
    before = {t: fit.predict(Xn, type=t) for t in ("link", "prob", "class")}
    before["bracket"] = fit.predict(Xn, type="prob", method="bracket", m=4)  # the cached grid is saved too
    path = tmp_path / "svm.cohstats"
    fit.save(path)
    back = cs.load(path)
    assert type(back) is ApproxSVMFit
    for t in ("link", "prob", "class"):
        assert back.predict(Xn, type=t).equals(before[t])
    assert back.predict(Xn, type="prob", method="bracket", m=4).equals(before["bracket"])
    assert str(back.summary()) == str(fit.summary()) and repr(back) == repr(fit)
    back.save(tmp_path / "again.cohstats")
    assert (tmp_path / "again.cohstats").read_bytes() == path.read_bytes()


def test_cv_and_tune_accept_kernel_approx():
    X, y = _data(150, seed=13)
    kw = dict(kernel="rbf", kernel_approx="nystroem", n_components=40, random_state=1)
    res = cs.tune(cs.svm, X, y, grid={"C": [0.1, 1.0, 10.0]}, nfolds=3, random_state=0, fit_kwargs=kw)
    best = res.best_fit
    assert isinstance(best, ApproxSVMFit) and best._approx["n_components"] == 40
    direct = cs.svm(X, y, C=res.best_params["C"], **kw)
    np.testing.assert_allclose(best.predict(X, type="link").to_numpy(), direct.predict(X, type="link").to_numpy())
    cvr = cs.cv(cs.svm, X, y, nfolds=3, random_state=0, fit_kwargs=kw)
    assert 0.0 <= float(np.ravel(cvr.cvm)[0]) <= 0.5
    # the refit arguments redraw the same map
    assert best._refit_args()["kernel_approx"] == "nystroem"


def test_bad_input_is_refused_with_a_clear_message():
    X, y = _data(40)
    with pytest.raises(ValueError, match="kernel_approx"):
        cs.svm(X, y, kernel=None, kernel_approx="nystroem")
    with pytest.raises(ValueError, match="kernel_approx"):
        cs.svm(X, y, kernel="rbf", kernel_approx="random")
    with pytest.raises(ValueError, match="Gaussian"):
        cs.svm(X, y, kernel="poly", kernel_approx="rff")
    with pytest.raises(ValueError, match="n_components"):
        cs.svm(X, y, kernel_approx="nystroem", n_components=0)
    with pytest.raises(ValueError, match="y must be"):
        linear_svm_dcd(np.ones((3, 2)), np.array([1.0, 0.0, -1.0]), 1.0)


def test_one_vs_one_on_a_full_nystroem_map_equals_the_exact_multiclass_svm(tmp_path):
    rng = np.random.default_rng(14)
    n = 150
    X = rng.normal(size=(n, 3))
    y = np.array(["a", "b", "c"])[(X[:, 0] > 0).astype(int) + (X[:, 1] ** 2 > 0.7).astype(int)]
    kw = dict(kernel="rbf", gamma=0.5, C=2.0, tol=1e-9)
    exact = cs.svm(X, y, **kw)
    approx = cs.svm(X, y, kernel_approx="nystroem", n_components=n, **kw)
    assert isinstance(approx, ApproxMulticlassSVMFit) and approx.converged
    np.testing.assert_allclose(approx.objective, exact.objective, rtol=1e-6)
    Xn = rng.normal(size=(30, 3))
    np.testing.assert_allclose(
        approx.predict(Xn, type="link").to_numpy(), exact.predict(Xn, type="link").to_numpy(), atol=1e-5
    )
    np.testing.assert_allclose(
        approx.predict(Xn, type="prob").to_numpy(), exact.predict(Xn, type="prob").to_numpy(), atol=1e-5
    )
    assert approx.feature_coef.shape == (approx.feature_map.dim, 3)
    before = approx.predict(Xn, type="prob")
    approx.save(tmp_path / "ovo.cohstats")
    back = cs.load(tmp_path / "ovo.cohstats")
    assert type(back) is ApproxMulticlassSVMFit and back.predict(Xn, type="prob").equals(before)
