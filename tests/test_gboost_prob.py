"""Probabilities of the cross-validated GentleBoost.C on an additive logistic truth.

The truth is the ``"additive"`` simulation of the ``gboost_uci`` vignette: four standard normal
predictors, ``logit P(b | x) = 1.2 sin(1.5 x1) + 0.5 (x2^2 - 1) + 0.8 tanh(2 x3)`` (x4
unrelated). Every model is fitted as a user would: C-learning on the raw predictors with lambda
chosen by 5-fold CV; GentleBoost.C and MulLogitBoost (the multinomial likelihood in the same
engine, with the same stumps, shrinkage and folds) with the number of steps chosen by 5-fold CV.
The error is the mean |p_hat - p| against the true probabilities on 5000 fresh rows.

The fixed setting is stumps (the truth is additive) and rho = 2. GentleBoost.C is not better
than MulLogitBoost here: at rho = 1 the coherence loss is a smoothed hinge whose probability
estimates are 3-5 % less accurate than the likelihood's (the vignette's 8 draws at n = 2000),
and rho = 2 halves that gap without closing it on average (about 1 % behind with stumps; of
the seeds 0-5 it is ahead on four and behind on two). So the last test asserts what holds
on every draw tried -- within 5 % of MulLogitBoost -- not that it is no worse. As rho grows,
GentleBoost.C becomes MulLogitBoost on the scale g / rho.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import cohstats as cs
from cohstats.vignettes.gboost_uci import _truth

N_TRAIN, N_TEST, DRAWS = 800, 5000, (0, 1)


def _mae(fit, test, p):
    return float(np.mean(np.abs(fit.predict(test, type="prob")["b"].to_numpy() - p)))


@pytest.fixture(scope="module")
def errors():
    out = {"clearn": [], "gboost_c": [], "logitboost": []}
    steps = []
    for seed in DRAWS:
        rng = np.random.default_rng([18, seed])
        train, _ = _truth("additive", N_TRAIN, rng)
        test, p = _truth("additive", N_TEST, rng)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cl = cs.cv(cs.clearn, "y ~ .", train, nfolds=5, random_state=seed, verbose=False).best_fit
            fits = {
                name: cs.cv(
                    cs.gboost,
                    "y ~ .",
                    train,
                    nfolds=5,
                    random_state=seed,
                    verbose=False,
                    fit_kwargs={"random_state": seed},
                    loss=loss,
                    nodes=2,
                    n_trees=400,
                    **kw,
                ).best_fit
                for name, loss, kw in (("gboost_c", "coherence", {"rho": 2.0}), ("logitboost", "logit", {}))
            }
        out["clearn"].append(_mae(cl, test, p))
        for name, fit in fits.items():
            out[name].append(_mae(fit, test, p))
            steps.append(fit.s)
    return {k: float(np.mean(v)) for k, v in out.items()}, steps


def test_cv_steps_inside_the_range(errors):
    # the CV choice is an interior step, so the comparison is not decided by the cap of 400
    _, steps = errors
    assert all(10 < s < 400 for s in steps)


def test_gboost_c_within_1_5_times_clearn(errors):
    e, _ = errors
    assert e["gboost_c"] <= 1.5 * e["clearn"]


def test_gboost_c_within_5_percent_of_logitboost(errors):
    e, _ = errors
    assert e["gboost_c"] <= 1.05 * e["logitboost"]
