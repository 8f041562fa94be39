"""The boosting engine minimises its loss: intercept-only models converge to the minimiser found
by scipy.optimize, the training loss never rises, and the [ZJLY] issue reproducers give the
class shares."""

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize
from scipy.special import logsumexp, softmax

from cohstats.models.gboost import gboost, gboost_c


# ----------------------------------------------------------------------------- references
def coh_ref(g, c, rho):
    """[ZJLY] eq (6): rho log(1 + sum_{j != c} exp((1 + g_j - g_c)/rho))."""
    e = [(1 + g[j] - g[c]) / rho for j in range(len(g)) if j != c]
    return rho * logsumexp([0.0, *e])


def lmult_ref(g, c):
    return logsumexp(g) - g[c]


def exp_ref(g, c):
    return np.exp(-g[c])


def mh_ref(F, c):
    Y = -np.ones(len(F))
    Y[c] = 1.0
    return np.mean(np.exp(-Y * F))


def prob_coh(g, rho):
    """[ZJLY] eq (8) through logsumexp."""
    m = len(g)
    M = np.array([logsumexp([(1 + g[l] + g[c] - (l == c)) / rho for l in range(m)]) for c in range(m)])
    return np.exp(M - logsumexp(M))


def scipy_minimiser(counts, loss, rho=1.0):
    """Minimiser of the mean intercept-only loss by BFGS: sum-to-zero margins (K - 1 free
    coordinates) for the coherence, multinomial and exponential losses, K free margins for
    AdaBoost.MH (its per-class losses separate)."""
    counts = np.asarray(counts, float)
    K = len(counts)
    w = counts / counts.sum()
    if loss == "adaboost_mh":

        def obj(F):
            return sum(w[c] * mh_ref(F, c) for c in range(K))

        r = minimize(obj, np.zeros(K), method="BFGS", options={"gtol": 1e-12})
        return r.x, r.fun
    f = {"coherence": lambda g, c: coh_ref(g, c, rho), "logit": lmult_ref, "exp": exp_ref}[loss]

    def obj(v):
        g = np.append(v, -v.sum())
        return sum(w[c] * f(g, c) for c in range(K))

    r = minimize(obj, np.zeros(K - 1), method="BFGS", options={"gtol": 1e-12})
    return np.append(r.x, -r.x.sum()), r.fun


def intercept_only(counts, seed=0):
    y = np.repeat(np.arange(len(counts)), counts)
    rng = np.random.default_rng(seed)
    y = y[rng.permutation(len(y))]
    return pd.DataFrame({"y": np.array(list("abcd"))[y], "c": 1.0})


CASES = [(60, 20), (40, 40), (52, 14, 13), (30, 30, 30)]


# ----------------------------------------------------------------------------- intercept only
@pytest.mark.parametrize("counts", CASES, ids=["2-unbal", "2-bal", "3-unbal", "3-bal"])
@pytest.mark.parametrize("loss", ["coherence", "logit", "exp", "adaboost_mh", "adaboost_mh_discrete"])
def test_intercept_only_converges_to_the_scipy_minimiser(counts, loss):
    d = intercept_only(counts)
    ref_loss = "adaboost_mh" if loss.startswith("adaboost") else loss
    g_ref, f_ref = scipy_minimiser(counts, ref_loss)
    fit = gboost("y ~ c", d, loss=loss, n_trees=200, shrinkage=1.0, random_state=0)
    G = fit._margins(fit.design.X[:1])[0]
    np.testing.assert_allclose(G, g_ref, atol=1e-4)
    assert fit.train_loss[-1] == pytest.approx(f_ref, rel=1e-8)
    # probabilities are the class shares (Theorem 1 for the coherence loss)
    share = np.asarray(counts) / np.sum(counts)
    P = fit.predict(d.iloc[:1], type="prob").to_numpy()[0]
    np.testing.assert_allclose(P, share, atol=1e-3)
    if loss == "coherence":
        np.testing.assert_allclose(P, prob_coh(g_ref, 1.0), atol=1e-6)
    # the training loss never rises beyond rounding, starting from the loss at g = 0
    L = np.r_[f_at_zero(counts, ref_loss), fit.train_loss]
    assert np.all(np.diff(L) <= 1e-14 * np.abs(L[:-1])), np.diff(L).max()


def f_at_zero(counts, loss):
    K = len(counts)
    _, _ = K, loss
    g = np.zeros(K)
    w = np.asarray(counts, float) / np.sum(counts)
    f = {
        "coherence": lambda c: coh_ref(g, c, 1.0),
        "logit": lambda c: lmult_ref(g, c),
        "exp": lambda c: exp_ref(g, c),
        "adaboost_mh": lambda c: mh_ref(g, c),
    }[loss]
    return sum(w[c] * f(c) for c in range(K))


@pytest.mark.parametrize("rho", [0.1, 0.5, 2.0])
def test_intercept_only_other_temperatures_and_default_shrinkage(rho):
    counts = (45, 25, 10)
    d = intercept_only(counts, seed=1)
    g_ref, f_ref = scipy_minimiser(counts, "coherence", rho)
    fit = gboost_c("y ~ c", d, rho=rho, n_trees=400, random_state=0)  # shrinkage 0.1
    G = fit._margins(fit.design.X[:1])[0]
    np.testing.assert_allclose(G, g_ref, atol=1e-4)
    np.testing.assert_allclose(fit.predict(d.iloc[:1], type="prob").to_numpy()[0], np.asarray(counts) / 80, atol=1e-3)
    assert np.all(np.diff(fit.train_loss) <= 1e-14 * fit.train_loss[:-1])
    # init="prior" starts at the minimiser: the intercept is g_ref and nothing moves
    fp = gboost_c("y ~ c", d, rho=rho, n_trees=3, init="prior", random_state=0)
    np.testing.assert_allclose(fp.intercept.to_numpy(), g_ref, atol=1e-6)
    assert fp.train_loss[-1] == pytest.approx(f_ref, rel=1e-10)


def test_issue_reproducer_binary_75_25():
    """80 rows, 75/25 classes, intercept-only: P(majority) -> 0.75 (was 1.000 and the loss
    climbed to 6.2 after 30 rounds)."""
    d = pd.DataFrame({"y": np.r_[["a"] * 60, ["b"] * 20], "c": np.ones(80)})
    for kw in (
        {"shrinkage": 1.0, "n_trees": 30},
        {"n_trees": 300},
        {"nodes": 2, "n_trees": 300},
        {"rho": 0.1, "n_trees": 300},
    ):
        fit = gboost_c("y ~ c", d, **kw, random_state=0)
        p = fit.predict(d.iloc[:1], type="prob")["a"].iloc[0]
        assert p == pytest.approx(0.75, abs=1e-3), kw
        assert np.all(np.diff(fit.train_loss) <= 1e-14 * fit.train_loss[:-1]), kw


def test_issue_reproducer_three_classes_unrelated_predictors():
    """Shares 65/18/16 % with predictors unrelated to the class: the fitted probabilities
    average to the class shares (were 0.94, 0.04, 0.03)."""
    rng = np.random.default_rng(0)
    n = 600
    y = rng.choice(3, size=n, p=[0.65, 0.18, 0.17])
    d = pd.DataFrame(rng.normal(size=(n, 4)), columns=list("abcd"))
    d["y"] = np.array(list("PQR"))[y]
    share = np.bincount(y) / n
    fit = gboost_c("y ~ .", d, shrinkage=1.0, random_state=0)  # the paper's protocol
    np.testing.assert_allclose(fit.predict(d, type="prob").mean().to_numpy(), share, atol=0.01)
    assert np.all(np.diff(fit.train_loss) <= 1e-14 * fit.train_loss[:-1])
    # early stopping on a validation fraction: fresh-data probabilities average to the shares
    es = gboost_c("y ~ .", d, n_trees=300, n_iter_no_change=10, random_state=0)
    new = pd.DataFrame(rng.normal(size=(4000, 4)), columns=list("abcd"))
    np.testing.assert_allclose(es.predict(new, type="prob").mean().to_numpy(), share, atol=0.03)


# ----------------------------------------------------------------------------- real data
def _noisy(n, seed, K=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    eta = np.column_stack([np.zeros(n), X[:, 0] - X[:, 1], X[:, 2] - 0.5 * X[:, 0]])[:, :K]
    P = softmax(eta, axis=1)
    y = np.array([rng.choice(K, p=p) for p in P])
    d = pd.DataFrame(X, columns=list("abcd"))
    d["y"] = np.array(list("PQR"))[y]
    return d


@pytest.mark.parametrize("loss", ["coherence", "logit", "exp", "adaboost_mh", "adaboost_mh_discrete"])
def test_training_loss_never_rises_on_real_data(loss):
    d = _noisy(300, 3)
    for sh in (1.0, 0.1):
        fit = gboost("y ~ .", d, loss=loss, n_trees=40, shrinkage=sh, random_state=0)
        L = fit.train_loss
        assert np.all(np.diff(L) <= 1e-14 * np.abs(L[:-1])), (sh, np.diff(L).max())
        assert L[-1] < 0.8 * L[0]


def test_two_classes_equal_the_binary_losses():
    """K = 2: the multiclass coherence loss of g = (-f/2, f/2) is the binary coherence loss
    V_{rho,1}(y f) of [ZDJ]; the multinomial deviance is the logistic deviance log(1 + e^{-yf})."""
    from cohstats.losses.scalar import coh_V

    d = _noisy(250, 4, K=2)
    yb = np.where(d["y"] == "Q", 1.0, -1.0)
    for rho in (1.0, 0.5):
        fit = gboost_c("y ~ .", d, rho=rho, n_trees=15, random_state=0)
        for s in (1, 7, 15):
            f = fit.predict(type="link", s=s).to_numpy()
            ref = np.mean([coh_V(v, rho, 1.0) for v in yb * f])
            assert fit.train_loss[s - 1] == pytest.approx(ref, rel=1e-10)
    fit = gboost("y ~ .", d, loss="logit", n_trees=15, random_state=0)
    for s in (1, 15):
        f = fit.predict(type="link", s=s).to_numpy()
        assert fit.train_loss[s - 1] == pytest.approx(np.mean(np.logaddexp(0, -yb * f)), rel=1e-10)
        np.testing.assert_allclose(fit.predict(type="prob", s=s)["Q"], 1 / (1 + np.exp(-f)), rtol=1e-12)


def test_step_control_shortens_only_overshooting_rounds():
    """The accepted step of every round is the largest halving that does not raise the
    loss: check against the loss evaluated directly at t and 2t."""
    d = _noisy(200, 5)
    fit = gboost_c("y ~ .", d, n_trees=25, rho=0.2, shrinkage=1.0, random_state=0)
    S = fit._staged_margins(fit.design.X)
    y = fit.design.y_int
    loss = [np.mean([coh_ref(g, c, 0.2) for g, c in zip(G, y)]) for G in S]
    np.testing.assert_allclose(fit.train_loss, loss, rtol=1e-10)
    assert np.all(fit.step_scale > 0) and np.all(fit.step_scale <= 1)
    assert set(np.log2(fit.step_scale)) <= set(np.arange(-40.0, 1.0))
