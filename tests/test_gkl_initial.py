"""The initial estimate of the GKL estimator ([WSL] eq. 10): the k-nearest-neighbour default,
a user-supplied array, and closed forms of the covariance penalty it implies."""

import os
import sys

import numpy as np
import pytest
from scipy.special import expit

sys.path.insert(0, os.path.dirname(__file__))
from _tuning_fits import FixedFit, shrunk_mean  # noqa: E402

from cohstats.formula import build_design  # noqa: E402
from cohstats.tuning import gkl, tune  # noqa: E402


def ols_logit(formula, data=None, b=1.0):
    """logit p_hat(x) = b * (least-squares fit of the 0/1 labels on [1, x]) evaluated at x: a
    linear smoother in the labels whose hat matrix has trace p + 1 at every design of rank p + 1."""
    d = build_design(formula, data)
    X1 = np.column_stack([np.ones(d.nobs), d.X])
    beta = np.linalg.lstsq(X1, (d.y + 1.0) / 2.0, rcond=None)[0]
    fit = FixedFit(d, {"b": b})
    fit._coef, fit._intercept = b * beta[1:], float(b * beta[0])
    return fit


def _knn_reference(X, y01, k):
    """Class shares among the k nearest rows (itself included), standardised Euclidean distance,
    written out directly; (n_1 + 1/2) / (k + 1)."""
    Z = (X - X.mean(0)) / X.std(0)
    D2 = ((Z[:, None, :] - Z[None, :, :]) ** 2).sum(-1)
    nn = np.argsort(D2, axis=1, kind="stable")[:, :k]
    return (y01[nn].sum(1) + 0.5) / (k + 1.0)


def test_knn_initial_equals_direct_computation():
    rng = np.random.default_rng(0)
    n = 50
    X = rng.normal(size=(n, 3)) * [1.0, 10.0, 0.1]
    y = np.where(rng.random(n) < expit(X[:, 0]), 1, -1)
    g = gkl(shrunk_mean, X, y, D=2, random_state=0, verbose=False)
    assert g.initial == "knn"
    ref = _knn_reference(X, (y + 1) / 2, int(np.sqrt(n)))
    np.testing.assert_allclose(g.p_initial, ref, rtol=0, atol=1e-14)
    assert 0 < g.p_initial.min() and g.p_initial.max() < 1


def test_shared_initial_closed_form_for_x_free_smoother():
    """p_hat = expit(a + b mean(y01)) ignores x, so the label perturbation drawn from a shared
    initial estimate q gives E[sum_i cov_hat_i] = (b / n) sum_i E q(X*_i)(1 - q(X*_i))
    = b mean_j q_j (1 - q_j) exactly (each X*_i is X_i or a uniform draw)."""
    rng = np.random.default_rng(2)
    n, a, b = 30, -0.4, 3.0
    X = rng.normal(size=(n, 1))
    y = np.where(rng.random(n) < 0.4, 1, -1)
    q = rng.uniform(0.1, 0.9, size=n)  # any initial estimate
    for initial in ("knn", q):
        est = []
        for seed in range(30):
            g = gkl(shrunk_mean, X, y, D=8, random_state=seed, a=a, b=b, initial=initial, verbose=False)
            est.append(g.cov_term * n)
        p = g.p_initial
        target = b * np.mean(p * (1 - p))
        est = np.asarray(est)
        se = est.std(ddof=1) / np.sqrt(len(est))
        assert abs(est.mean() - target) < 4 * se and se < 0.1 * target, (est.mean(), target, se)


def test_hat_matrix_trace_with_constant_initial():
    """logit p_hat = b * H(X*) y01 with H the least-squares hat matrix of [1, x]: conditionally
    on the perturbed inputs, sum_i cov*(Y*_i, logit p_hat_i) / K_i = b c (1 - c) tr H = b c (1 - c)
    (p + 1) for the constant initial estimate c, exactly (the smoother is linear)."""
    rng = np.random.default_rng(3)
    n, p, b, c = 60, 2, 0.8, 0.3
    X = rng.normal(size=(n, p))
    y = np.where(rng.random(n) < 0.5, 1, -1)
    est = [
        gkl(ols_logit, X, y, D=8, random_state=s, b=b, initial=np.full(n, c), verbose=False).cov_term_within * n
        for s in range(25)
    ]
    target = b * c * (1 - c) * (p + 1)
    est = np.asarray(est)
    se = est.std(ddof=1) / np.sqrt(len(est))
    assert abs(est.mean() - target) < 4 * se and se < 0.1 * target, (est.mean(), target, se)


def test_fit_initial_penalty_vanishes_for_an_interpolating_fit():
    """A fit whose probabilities copy the labels (logit = +-b at the training rows) declares
    itself noise-free under initial="fit": the perturbed labels barely change and the penalty
    is far below the truth b * sum_i p_i (1 - p_i) * 2 / n; the shared knn estimate is not."""
    rng = np.random.default_rng(4)
    n, b = 64, 6.0
    X = rng.normal(size=(n, 2))
    p = np.full(n, 0.5)
    y = np.where(rng.random(n) < p, 1, -1)

    def memorise(formula, data=None):
        d = build_design(formula, data)
        fit = FixedFit(d, {})
        # logit p_hat(x) = b (2 y01(nearest training row) - 1): interpolates the labels
        Xt, yt = d.X.copy(), d.y.copy()

        def dec(Xn, s=None):
            j = np.argmin(((Xn[:, None, :] - Xt[None]) ** 2).sum(-1), axis=1)
            return b * yt[j]

        fit._decision = dec
        return fit

    true = 2 * b * np.mean(p * (1 - p))  # d logit / d y01 = 2b at each point, var = p (1 - p)
    g_fit = gkl(memorise, X, y, D=6, random_state=1, initial="fit", verbose=False)
    g_knn = gkl(memorise, X, y, D=6, random_state=1, verbose=False)
    assert g_fit.cov_term < 0.05 * true
    assert g_knn.cov_term > 0.3 * true


def test_initial_validation():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(20, 2))
    y = np.where(rng.random(20) < 0.5, 1, -1)
    with pytest.raises(ValueError, match="initial must be 'knn', 'fit'"):
        gkl(shrunk_mean, X, y, D=2, initial="oracle", verbose=False)
    with pytest.raises(ValueError, match=r"initial has shape \(19,\)"):
        gkl(shrunk_mean, X, y, D=2, initial=np.full(19, 0.5), verbose=False)
    with pytest.raises(ValueError, match="rows sum to 1"):
        gkl(shrunk_mean, X, y, D=2, initial=np.full((20, 2), 0.7), verbose=False)
    with pytest.raises(ValueError, match="initial must be 'knn', 'fit'"):
        tune(shrunk_mean, X, y, grid={"a": [0.0, 1.0]}, method="gkl", D=2, initial="x", verbose=False)


@pytest.mark.slow
def test_liver_gaussian_svm_initial_estimate():
    """[WSL] Table 3's failure mode, one training sample of Liver: with the per-value initial
    estimate the GKL tuning of the bracketing estimator (Gaussian SVM) picks the smallest
    lambda of the grid; with the knn initial estimate it picks one whose test cross-entropy is
    near [WSL]'s 0.648."""
    from cohstats.metrics import cre
    from cohstats.models.svm import svm
    from cohstats.vignettes.wsl_probability import BENCH, _bench_xy, _standardise

    X, y, n_num = _bench_xy(BENCH["Liver"])
    idx = np.random.default_rng(0).permutation(len(y))
    tr, te = idx[:100], idx[100:]
    Xtr, Xte = _standardise(X[tr], X[te], n_num)
    grid = 10.0 ** (-3.0 + 0.5 * np.arange(13))[::-1] / 100
    kw = dict(kernel="rbf", gamma="median", m=10, pi="path", standardize=False)
    out = {}
    for initial in ("fit", "knn"):
        t = tune(
            svm,
            Xtr,
            y[tr],
            grid={"lambda_": grid},
            method="gkl",
            D=4,
            initial=initial,
            prob_args={"method": "bracket"},
            random_state=1,
            verbose=False,
            **kw,
        )
        lam = t.best_params["lambda_"]
        out[initial] = (lam, cre(y[te], t.best_fit.predict(Xte, type="prob", method="bracket").iloc[:, 1].to_numpy()))
    assert out["fit"][0] == grid.min() and out["fit"][1] > 0.9, out
    assert out["knn"][0] > 10 * grid.min() and out["knn"][1] < 0.7, out
