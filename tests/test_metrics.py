"""Metrics against closed forms and scikit-learn."""

import numpy as np
import pytest
from sklearn import metrics as skm

from cohstats import metrics as M


@pytest.fixture
def data():
    rng = np.random.default_rng(1)
    n = 300
    p = rng.uniform(0.05, 0.95, n)
    y = np.where(rng.uniform(size=n) < p, 1, -1)
    q = np.clip(p + rng.normal(0, 0.1, n), 0.01, 0.99)
    w = rng.uniform(0.2, 2.0, n)
    return p, y, q, w


def test_error_rate(data):
    p, y, q, w = data
    yhat = np.where(q > 0.5, 1, -1)
    assert M.error_rate(y, yhat) == pytest.approx(1 - skm.accuracy_score(y, yhat), abs=1e-15)
    assert M.error_rate(y, yhat, weights=w) == pytest.approx(
        1 - skm.accuracy_score(y, yhat, sample_weight=w), rel=1e-12
    )
    assert M.error_rate(np.array(["a", "b"]), np.array(["a", "a"])) == 0.5


def test_cre_matches_log_loss(data):
    p, y, q, w = data
    assert M.cre(y, q) == pytest.approx(skm.log_loss(y, q), rel=1e-12)
    assert M.cre((y + 1) // 2, q) == pytest.approx(skm.log_loss(y, q), rel=1e-12)
    assert M.cre(y > 0, q, weights=w) == pytest.approx(skm.log_loss(y, q, sample_weight=w), rel=1e-12)


def test_gkl_closed_forms(data):
    p, y, q, w = data
    direct = np.mean(p * np.log(p / q) + (1 - p) * np.log((1 - p) / (1 - q)))
    assert M.gkl(p, q) == pytest.approx(direct, rel=1e-12)
    ent = -np.mean(p * np.log(p) + (1 - p) * np.log(1 - p))
    # GKL_c = GKL + entropy of p
    assert M.gkl_c(p, q) == pytest.approx(M.gkl(p, q) + ent, rel=1e-12)
    # [WSL] Example 1 anchors (SPEC 9.1, 8.1): Bayes GKL_c = H(0.8), constant 1/2 has GKL 0.193
    pp = np.array([0.8, 0.2])
    assert M.gkl_c(pp, pp) == pytest.approx(-(0.8 * np.log(0.8) + 0.2 * np.log(0.2)), rel=1e-14)
    assert M.gkl(pp, [0.5, 0.5]) == pytest.approx(np.log(2) + 0.8 * np.log(0.8) + 0.2 * np.log(0.2))
    assert M.gkl(pp, [0.5, 0.5]) == pytest.approx(0.1927, abs=1e-4)


def test_no_clipping_inf_on_contradiction():
    # D33: 0 log 0 = 0, contradiction -> inf
    assert M.gkl([1.0, 0.0], [1.0, 0.0]) == 0.0
    assert M.gkl_c([1.0, 0.0], [1.0, 0.0]) == 0.0
    assert M.gkl([0.5], [1.0]) == np.inf
    assert M.gkl_c([0.5], [0.0]) == np.inf
    assert M.cre([1, -1], [0.0, 0.3]) == np.inf
    assert M.cre([1, -1], [1.0, 0.0]) == 0.0
    assert M.cross_entropy([0, 1], [[0.0, 1.0], [0.0, 1.0]]) == np.inf


def test_mae_brier(data):
    p, y, q, w = data
    assert M.mae(p, q) == pytest.approx(np.mean(np.abs(p - q)), rel=1e-13)
    assert M.mae(p, q, weights=w) == pytest.approx(np.average(np.abs(p - q), weights=w), rel=1e-13)
    assert M.brier(y, q) == pytest.approx(skm.brier_score_loss(y, q), rel=1e-12)
    assert M.brier(y, q, weights=w) == pytest.approx(skm.brier_score_loss(y, q, sample_weight=w), rel=1e-12)
    # multiclass forms reduce to the binary ones at K = 2
    P2, Q2 = np.c_[1 - p, p], np.c_[1 - q, q]
    assert M.mae(P2, Q2) == pytest.approx(M.mae(p, q), rel=1e-13)
    assert M.gkl(P2, Q2) == pytest.approx(M.gkl(p, q), rel=1e-12)
    assert M.gkl_c(P2, Q2) == pytest.approx(M.gkl_c(p, q), rel=1e-12)
    assert M.brier_multi((y > 0).astype(int), Q2) == pytest.approx(2 * M.brier(y, q), rel=1e-12)


def test_auc_matches_sklearn(data):
    p, y, q, w = data
    assert M.auc(y, q) == pytest.approx(skm.roc_auc_score(y, q), rel=1e-12)
    assert M.auc(y, q, weights=w) == pytest.approx(skm.roc_auc_score(y, q, sample_weight=w), rel=1e-12)
    qr = np.round(q, 1)  # many ties
    assert M.auc(y, qr) == pytest.approx(skm.roc_auc_score(y, qr), rel=1e-12)
    assert M.auc(y, qr, weights=w) == pytest.approx(skm.roc_auc_score(y, qr, sample_weight=w), rel=1e-12)
    # brute-force Mann-Whitney
    pos, neg = qr[y > 0], qr[y < 0]
    mw = np.mean((pos[:, None] > neg[None, :]) + 0.5 * (pos[:, None] == neg[None, :]))
    assert M.auc(y, qr) == pytest.approx(mw, rel=1e-12)


def test_multiclass_vs_sklearn():
    rng = np.random.default_rng(3)
    n, K = 200, 4
    P = rng.dirichlet(np.ones(K), size=n)
    y = np.array([rng.choice(K, p=row) for row in P])
    w = rng.uniform(0.5, 2, n)
    assert M.cross_entropy(y, P) == pytest.approx(skm.log_loss(y, P, labels=range(K)), rel=1e-12)
    assert M.cross_entropy(y, P, weights=w) == pytest.approx(
        skm.log_loss(y, P, labels=range(K), sample_weight=w), rel=1e-12
    )
    E = np.eye(K)[y]
    assert M.brier_multi(y, P) == pytest.approx(np.mean(np.sum((E - P) ** 2, axis=1)), rel=1e-12)


def test_errors_name_arguments():
    with pytest.raises(ValueError, match="p_hat"):
        M.cre([1, -1], [0.5, 1.2])
    with pytest.raises(ValueError, match="y must be coded"):
        M.cre([1, 2], [0.5, 0.5])
    with pytest.raises(ValueError, match="length"):
        M.brier([1, -1, 1], [0.5, 0.5])
    with pytest.raises(ValueError, match="both classes"):
        M.auc([1, 1], [0.2, 0.3])
    with pytest.raises(ValueError, match="y_int"):
        M.cross_entropy([0, 3], [[0.5, 0.5], [0.5, 0.5]])
    with pytest.raises(ValueError, match="weights"):
        M.gkl([0.5], [0.5], weights=[-1.0])
