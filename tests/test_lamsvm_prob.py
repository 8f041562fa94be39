"""lamsvm post-hoc probabilities: the calibration maps against independent references."""

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize

from cohstats.models.lamsvm import couple_pairwise, lamsvm, mnl_fit, smoothed_targets
from cohstats.probability import platt_fit
from cohstats.tuning import make_folds


def _frame(n=120, K=3, seed=0, noise=0.8):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    cls = np.array(["a", "b", "c", "d", "e"][:K])
    score = X[:, 0] + noise * rng.normal(size=n)
    y = cls[np.clip(np.digitize(score, np.linspace(-1, 1, K - 1)), 0, K - 1)]
    df = pd.DataFrame(X, columns=["x1", "x2"])
    df["y"] = y
    return df


def _iris():
    from sklearn.datasets import load_iris

    ir = load_iris(as_frame=True)
    df = ir.frame.drop(columns="target")
    df.columns = ["sl", "sw", "pl", "pw"]
    df["species"] = np.asarray(ir.target_names)[ir.target]
    return df


def test_multinomial_calibration_equals_sklearn_on_the_same_cv_decision_values():
    """scikit-learn's unpenalised LogisticRegression (C=inf, i.e. penalty=None) on the same data."""
    from sklearn.linear_model import LogisticRegression

    df = _frame(n=150, K=3, seed=1)
    fit = lamsvm("y ~ x1 + x2", df, C=2.0)
    cal = fit.calibration(method="multinomial")
    F = cal.decision
    yk = fit.design.y_int
    G = F[:, :2]  # the K decision values sum to zero: K - 1 carry them
    T = smoothed_targets(yk, 3)
    # soft targets = each row repeated once per class with weight T_ik
    n = len(yk)
    Xr, yr, wr = np.repeat(G, 3, axis=0), np.tile(np.arange(3), n), T.ravel()
    lr = LogisticRegression(C=np.inf, tol=1e-12, max_iter=10000).fit(Xr, yr, sample_weight=wr)
    np.testing.assert_allclose(cal(F), lr.predict_proba(G), atol=1e-6)
    P = fit.predict(df, type="prob", method="multinomial")
    np.testing.assert_allclose(
        P.to_numpy(), lr.predict_proba(fit.predict(df, type="link").to_numpy()[:, :2]), atol=1e-6
    )


def test_mnl_fit_with_one_hot_targets_is_statsmodels_mnlogit():
    sm = pytest.importorskip("statsmodels.api")
    rng = np.random.default_rng(3)
    n, K = 300, 4
    G = rng.normal(size=(n, 2))
    E = np.column_stack([np.zeros(n), G @ rng.normal(size=(2, K - 1)) + rng.normal(size=K - 1)])
    P = np.exp(E) / np.exp(E).sum(1, keepdims=True)
    y = np.array([rng.choice(K, p=p) for p in P])
    W, _, conv = mnl_fit(G, np.eye(K)[y], tol=1e-12)
    ref = sm.MNLogit(y, sm.add_constant(G)).fit(method="newton", disp=0, maxiter=200, tol=1e-14)
    assert conv
    np.testing.assert_allclose(W[:, 1:], np.asarray(ref.params), rtol=1e-6, atol=1e-8)


def test_pairwise_coupling_solves_wu_lin_weng_method_two():
    rng = np.random.default_rng(0)
    K = 4
    R = np.full((5, K, K), 0.5)
    for a in range(K):
        for b in range(a + 1, K):
            r = rng.uniform(0.05, 0.95, size=5)
            R[:, a, b], R[:, b, a] = r, 1 - r
    P = couple_pairwise(R)
    for i in range(5):
        r = R[i]

        def obj(p):
            return sum((r[b, a] * p[a] - r[a, b] * p[b]) ** 2 for a in range(K) for b in range(K) if a != b)

        ref = minimize(
            obj,
            np.full(K, 1 / K),
            method="SLSQP",
            bounds=[(0, 1)] * K,
            constraints=[{"type": "eq", "fun": lambda p: p.sum() - 1}],
            options=dict(ftol=1e-15, maxiter=1000),
        ).x
        np.testing.assert_allclose(P[i], ref, atol=1e-6)
    # consistent pairwise probabilities r_ab = p_a / (p_a + p_b) give p back exactly
    p = np.array([0.1, 0.2, 0.3, 0.4])
    Rc = p[:, None] / (p[:, None] + p[None, :])
    np.testing.assert_allclose(couple_pairwise(Rc[None])[0], p, atol=1e-12)


def test_coupling_uses_platt_on_pairwise_differences():
    df = _frame(n=150, K=3, seed=2)
    fit = lamsvm("y ~ x1 + x2", df, C=2.0)
    cal = fit.calibration(method="coupling")
    F, yk = cal.decision, fit.design.y_int
    for (a, b), (A, B) in zip(cal.coef.index, cal.coef.to_numpy()):
        m = (yk == a) | (yk == b)
        s = platt_fit(F[m, a] - F[m, b], np.where(yk[m] == a, 1.0, -1.0))
        assert A == pytest.approx(-s.A) and B == pytest.approx(-s.B)


def test_two_classes_both_methods_are_platt_on_the_cv_decision_values():
    df = _frame(n=120, K=2, seed=4, noise=1.0)
    fit = lamsvm("y ~ x1 + x2", df, C=1.0)
    cal = fit.calibration()
    f = cal.decision
    assert f.ndim == 1
    s = platt_fit(f, fit.design.y)
    link = fit.predict(df, type="link").to_numpy()
    ref = 1.0 / (1.0 + np.exp(s.A * link + s.B))
    for method in ("multinomial", "coupling"):
        P = fit.predict(df, type="prob", method=method)
        assert list(P.columns) == fit.classes
        np.testing.assert_allclose(P.iloc[:, 1].to_numpy(), ref, atol=1e-6)


def test_cv_decision_values_are_the_fold_fits_and_reproducible():
    df = _frame(n=90, K=3, seed=5)
    fit = lamsvm("y ~ x1 + x2", df, C=3.0, margin=6.0)
    cal = fit.calibration(nfolds=3, random_state=7)
    folds = make_folds(fit.design.y_int, 3, stratified=True, random_state=7)
    np.testing.assert_array_equal(cal.foldid, folds)
    for k in range(3):
        tr = df[folds != k]
        ff = lamsvm("y ~ x1 + x2", tr, C=3.0, margin=6.0)
        np.testing.assert_allclose(
            cal.decision[folds == k], ff.predict(df[folds == k], type="link").to_numpy(), atol=1e-12
        )
    again = lamsvm("y ~ x1 + x2", df, C=3.0, margin=6.0)
    p1 = fit.predict(df, type="prob", nfolds=3, random_state=7).to_numpy()
    np.testing.assert_array_equal(again.predict(df, type="prob", nfolds=3, random_state=7).to_numpy(), p1)
    p2 = fit.predict(df, type="prob", nfolds=3, random_state=8).to_numpy()
    assert np.abs(p2 - p1).max() > 1e-6


def test_path_fit_probabilities_at_s_equal_the_single_fit():
    df = _frame(n=90, K=3, seed=6)
    path = lamsvm("y ~ x1 + x2", df, C=[0.5, 4.0])
    one = lamsvm("y ~ x1 + x2", df, C=0.5)
    np.testing.assert_allclose(
        path.predict(df, type="prob", s=0.5).to_numpy(), one.predict(df, type="prob").to_numpy(), atol=1e-10
    )
    np.testing.assert_allclose(
        path.select(0.5).predict(df, type="prob").to_numpy(), one.predict(df, type="prob").to_numpy(), atol=1e-10
    )


def test_iris_probabilities_sum_to_one_with_class_columns():
    df = _iris()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fit = lamsvm("species ~ .", df)
    for method in ("multinomial", "coupling"):
        P = fit.predict(df, type="prob", method=method)
        assert list(P.columns) == ["setosa", "versicolor", "virginica"]
        np.testing.assert_allclose(P.sum(axis=1).to_numpy(), 1.0, atol=1e-12)
        assert (P.to_numpy() >= 0).all()
        # the calibrated probabilities classify about as well as the machine (CV-fitted map)
        acc = float((P.idxmax(axis=1) == df.species).mean())
        assert acc > 0.93, (method, acc)
    np.testing.assert_array_equal(fit.predict(df, type="response").to_numpy(), fit.predict(df, type="prob").to_numpy())
    notes = " ".join(fit.summary().notes)
    assert "post-hoc calibration" in notes and "not an estimate from the lambda-SVM loss" in notes
    with pytest.raises(ValueError, match="method"):
        fit.predict(df, type="prob", method="platt")


def test_multinomial_map_converges_when_the_gradient_hits_float_resolution():
    """Regression: a C = 10 fit whose Newton iterations stalled at a gradient of 1e-7 (the
    objective's float64 resolution) ran 200 iterations and warned; the decrement rule stops."""
    from cohstats import ConvergenceWarning

    rng = np.random.default_rng(2)
    n = 120
    X = rng.normal(size=(n, 3))
    eta = np.column_stack([1.5 * X[:, 0], -1.5 * X[:, 0] + X[:, 1], np.zeros(n)])
    P = np.exp(eta - eta.max(1, keepdims=True))
    P /= P.sum(1, keepdims=True)
    y = np.array(["a", "b", "c"])[(rng.random(n)[:, None] > P.cumsum(1)).sum(1)]
    df = pd.DataFrame(X, columns=["x1", "x2", "x3"])
    df["g"] = pd.Categorical(rng.choice(["u", "v"], size=n))
    df["y"] = y
    fit = lamsvm("y ~ x1 + x2 + x3 + g", df, C=[0.1, 1.0, 10.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        cal = fit.calibration()
    assert cal.converged and cal.n_iter < 30
    G = cal.decision[:, :2]
    Z = np.column_stack([np.ones(n), G])
    Ph = cal(cal.decision)
    grad = Z.T @ (Ph - smoothed_targets(fit.design.y_int, 3))
    assert np.abs(grad).max() < 1e-6
