"""The probability options of the boosting engine: the L2 penalty on the leaf values
(``lambda_l2``) and stochastic gradient boosting (``subsample``), each against an independent
reference (brute-force split search, numerical derivatives, scipy.optimize, binomial bounds)."""

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import approx_fprime

from cohstats.models.gboost import gboost, gboost_c
from cohstats.solvers.trees import boost as B

from test_gboost_loss import coh_ref, intercept_only, scipy_minimiser


# ----------------------------------------------------------------------------- lambda_l2
def brute_penalised_stump(x, gz, w, lam):
    """Best split of one feature by the penalised score sum_leaves G^2 / (W + lam), searched
    over every midpoint; returns (threshold, left value, right value)."""
    order = np.argsort(x)
    xs, g, h = x[order], gz[order], w[order]
    best = (-np.inf, None, None, None)
    for k in range(1, len(xs)):
        if xs[k] == xs[k - 1]:
            continue
        GL, WL, GR, WR = g[:k].sum(), h[:k].sum(), g[k:].sum(), h[k:].sum()
        score = GL**2 / (WL + lam) + GR**2 / (WR + lam)
        if score > best[0] + 1e-12:
            best = (score, 0.5 * (xs[k - 1] + xs[k]), GL / (WL + lam), GR / (WR + lam))
    return best[1:]


def stump_data():
    """A small pure group at the left end, a mixed middle and a moderately pure right part:
    the stumps of lambda = 0, 2 and 50 all split at different places."""
    rng = np.random.default_rng(13)
    x = np.sort(rng.uniform(size=60))
    y = np.r_[np.ones(4), (rng.uniform(size=26) < 0.5), (rng.uniform(size=30) < 0.75)]
    return pd.DataFrame({"x": x, "y": np.where(y > 0, "b", "a")}), x, y.astype(float)


@pytest.mark.parametrize("lam", [0.0, 2.0, 50.0])
def test_lambda_l2_first_stump_is_the_penalised_newton_stump(lam):
    # LogitBoost from g = 0 with beta = 1/2: w z = I - 1/2, w = 1/4 for both class trees, and
    # with two classes the binary margin after one round is the class-2 tree's leaf value
    d, x, y = stump_data()
    fit = gboost(
        "y ~ x",
        d,
        loss="logit",
        n_trees=1,
        nodes=2,
        shrinkage=1.0,
        init="zero",
        lambda_l2=lam,
        max_delta_step=None,
        random_state=-1,
    )
    assert fit.step_scale[0] == 1.0
    thr, vl, vr = brute_penalised_stump(x, y - 0.5, np.full(len(x), 0.25), lam)
    f = fit.predict(d, type="link").to_numpy()
    np.testing.assert_allclose(f, np.where(x <= thr, vl, vr), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(fit._trees["thr"][0, 1, 0], thr, rtol=1e-12)


def test_lambda_l2_changes_the_split_it_should():
    d, x, y = stump_data()
    thr = [
        gboost(
            "y ~ x", d, loss="logit", n_trees=1, nodes=2, shrinkage=1.0, init="zero", lambda_l2=lam, random_state=-1
        )._trees["thr"][0, 1, 0]
        for lam in (0, 2, 50)
    ]
    assert thr[0] < 0.1 < thr[1] < thr[2]  # the pure group first, larger leaves later


@pytest.mark.parametrize("rho", [1.0, 0.5])
def test_lambda_l2_coherence_leaf_is_newton_step_with_penalty(rho):
    """Constant predictor (no split): each class tree is one leaf whose value must be the
    penalised Newton step -grad_j / (hess_jj + lambda) of the summed coherence loss at the
    start (numerical derivatives of [ZJLY] eq (6)); the round adds its centred values."""
    counts = (20, 9, 6)
    d = intercept_only(counts)
    yi = d["y"].map({"a": 0, "b": 1, "c": 2}).to_numpy()
    lam = 3.0

    def total(g):
        return sum(coh_ref(g, c, rho) for c in yi)

    g0 = np.zeros(3)
    grad = approx_fprime(g0, total, 1e-6)
    hess = np.array([(total(g0 + 1e-4 * e) - 2 * total(g0) + total(g0 - 1e-4 * e)) / 1e-8 for e in np.eye(3)])
    r = -grad / (hess + lam)
    ref = (2 / 3) * (r - r.mean())
    fit = gboost_c(
        "y ~ c",
        d,
        rho=rho,
        n_trees=1,
        shrinkage=1.0,
        init="zero",
        init_beta="loss",
        lambda_l2=lam,
        max_delta_step=None,
        random_state=0,
    )
    assert fit.step_scale[0] == 1.0
    np.testing.assert_allclose(fit._margins(fit.design.X[:1])[0], ref, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("loss", ["coherence", "logit"])
def test_lambda_l2_keeps_the_minimiser_of_the_loss(loss):
    # the penalty shortens every step but not the fixed point (gradient zero)
    counts = (52, 14, 13)
    d = intercept_only(counts)
    g_ref, f_ref = scipy_minimiser(counts, loss)
    fit = gboost("y ~ c", d, loss=loss, n_trees=300, shrinkage=1.0, lambda_l2=20.0, random_state=0)
    np.testing.assert_allclose(fit._margins(fit.design.X[:1])[0], g_ref, atol=1e-4)
    assert np.all(np.diff(fit.train_loss) <= 1e-14 * fit.train_loss[:-1])
    assert fit.train_loss[-1] == pytest.approx(f_ref, rel=1e-8)
    # and it does shorten them: after 3 rounds the penalised fit is further from the minimum
    f0 = gboost("y ~ c", d, loss=loss, n_trees=3, shrinkage=1.0, random_state=0)
    f1 = gboost("y ~ c", d, loss=loss, n_trees=3, shrinkage=1.0, lambda_l2=20.0, random_state=0)
    assert f1.train_loss[-1] > f0.train_loss[-1] > f_ref


# ----------------------------------------------------------------------------- subsample
def test_row_sampler_draws_exactly_and_uniformly():
    n, ns, reps = 50, 17, 4000
    keys = np.random.default_rng(0).bit_generator.random_raw(reps).astype(np.uint64)
    hits = np.zeros(n)
    bag = np.empty(n, np.int64)
    for key in keys:
        bag[:] = -1
        B._draw_bag(key, n, ns, bag)
        s = bag[:ns]
        assert np.all(np.diff(s) > 0) and s[0] >= 0 and s[-1] < n and np.all(bag[ns:] == -1)
        hits[s] += 1
    # every row is drawn with probability ns / n: binomial 5-sigma band per row
    p = ns / n
    sd = np.sqrt(reps * p * (1 - p))
    assert np.all(np.abs(hits - reps * p) < 5 * sd), np.abs(hits - reps * p).max() / sd


def test_subsample_intercept_only_hovers_at_the_class_shares():
    counts = (60, 30, 10)
    d = intercept_only(counts, seed=2)
    fit = gboost_c("y ~ c", d, n_trees=300, subsample=0.5, random_state=1)
    # each round's half-sample moves the margins: the probabilities hover around the shares
    # (standard deviation about 0.015 across rounds), their mean over rounds sits on them
    S = np.array([p.to_numpy()[0] for p in fit.staged_predict(d.iloc[:1], type="prob")])[100:]
    np.testing.assert_allclose(S.mean(0), np.asarray(counts) / 100, atol=0.01)
    assert np.abs(S - np.asarray(counts) / 100).max() < 0.08
    _, f_ref = scipy_minimiser(counts, "coherence")
    # the full-data loss never goes below its minimum and stays near it
    tl = fit.train_loss[100:]
    assert tl.min() >= f_ref * (1 - 1e-12) and np.median(tl) == pytest.approx(f_ref, rel=1e-3)


def test_subsample_is_seeded_and_one_means_every_row():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(300, 3))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=300) > 0, "u", "v")
    a = gboost_c(X, y, n_trees=20, subsample=0.5, random_state=7)
    b = gboost_c(X, y, n_trees=20, subsample=0.5, random_state=7)
    c = gboost_c(X, y, n_trees=20, subsample=0.5, random_state=8)
    full = gboost_c(X, y, n_trees=20, random_state=7)
    one = gboost_c(X, y, n_trees=20, subsample=1.0, random_state=7)
    la, lb, lc = (f.predict(X, type="link").to_numpy() for f in (a, b, c))
    np.testing.assert_array_equal(la, lb)
    assert not np.allclose(la, lc)
    np.testing.assert_array_equal(full.predict(X, type="link").to_numpy(), one.predict(X, type="link").to_numpy())
    assert a.train_loss[-1] < 0.8 * a.train_loss[0]
    assert a.call["subsample"] == 0.5 and "subsample" not in full.call


def test_option_errors():
    d = intercept_only((10, 10))
    with pytest.raises(ValueError, match="subsample"):
        gboost_c("y ~ c", d, subsample=0.0)
    with pytest.raises(ValueError, match="subsample"):
        gboost_c("y ~ c", d, subsample=1.5)
    with pytest.raises(ValueError, match="lambda_l2"):
        gboost_c("y ~ c", d, lambda_l2=-1.0)
    with pytest.raises(ValueError, match="lambda_l2"):
        gboost("y ~ c", d, loss="adaboost_mh", lambda_l2=1.0)
    with pytest.raises(TypeError, match="lambda_l2"):
        gboost_c("y ~ c", d, lambda_l2="big")


# ----------------------------------------------------------------------------- inverse link
def test_probabilities_use_the_temperature_of_the_step_predicted():
    """predict(type="prob", s=k) is eq (8) at the margins after k steps with that step's rho
    (annealed fit), also inside cv's staged predictions."""
    from test_gboost_loss import prob_coh

    rng = np.random.default_rng(5)
    X = rng.normal(size=(150, 2))
    y = np.array(list("abc"))[np.argmax(X @ rng.normal(size=(2, 3)) + rng.gumbel(size=(150, 3)), 1)]
    fit = gboost_c(X, y, n_trees=8, rho=1.5, anneal=0.5, random_state=0)
    for k in (1, 4, 8):
        G = fit._margins(X[:5], k)
        ref = np.array([prob_coh(g, fit.rhos[k - 1]) for g in G])
        np.testing.assert_allclose(fit.predict(X[:5], type="prob", s=k).to_numpy(), ref, rtol=1e-10)
        np.testing.assert_allclose(fit._proba_path(X[:5])[k - 1], ref, rtol=1e-10)


def test_feature_orders_are_uniform_permutations():
    p, reps = 5, 6000
    keys = np.random.default_rng(1).bit_generator.random_raw(reps).astype(np.uint64)
    first = np.zeros((p, p))
    out = np.empty(p, np.int64)
    for key in keys:
        B._permute(key, out)
        assert sorted(out) == list(range(p))
        first[np.arange(p), out] += 1  # position k holds feature out[k]
    # every feature at every position with probability 1/p: binomial 5-sigma band
    sd = np.sqrt(reps * (1 / p) * (1 - 1 / p))
    assert np.all(np.abs(first - reps / p) < 5 * sd)
