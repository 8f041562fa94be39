"""Post-processing probability methods against independent references (SPEC 2.2-2.4, 4.2)."""

import math

import numpy as np
import pytest
from scipy.optimize import minimize

from cohstats.losses.binary import coherence_log_link
from cohstats.probability import (
    bracket_grid,
    bracket_prob,
    coherence_prob,
    coherence_rho,
    platt_fit,
    platt_prob,
    sollich_prob,
)


def _scores(n=300, seed=0, scale=2.0):
    rng = np.random.default_rng(seed)
    f = rng.normal(size=n) * scale
    y = np.where(rng.uniform(size=n) < 1 / (1 + np.exp(-1.3 * f + 0.4)), 1.0, -1.0)
    return f, y


def test_platt_matches_scipy_on_the_same_cross_entropy():
    f, y = _scores()
    s = platt_fit(f, y)
    npos, nneg = np.sum(y > 0), np.sum(y < 0)
    t = np.where(y > 0, (npos + 1) / (npos + 2), 1 / (nneg + 2))

    def ce(ab):
        p = 1 / (1 + np.exp(ab[0] * f + ab[1]))
        return -np.sum(t * np.log(p) + (1 - t) * np.log(1 - p))

    ref = minimize(ce, [0.0, 0.0], method="BFGS", options={"gtol": 1e-10})
    assert s.converged
    assert s.A == pytest.approx(ref.x[0], abs=1e-5)
    assert s.B == pytest.approx(ref.x[1], abs=1e-5)
    p = platt_prob(f, s.A, s.B)
    np.testing.assert_allclose(p, 1 / (1 + np.exp(s.A * f + s.B)), rtol=1e-12)
    # no overflow for huge decision values
    assert np.all(np.isfinite(platt_prob(np.array([-1e6, 1e6]), s.A, s.B)))


def test_sollich_closed_form_and_sign_consistency():
    f = np.array([-3.0, -1.0, -0.2, 0.0, 0.5, 1.0, 2.5])
    expit = lambda t: 1 / (1 + np.exp(-t))
    expected = [expit(-4.0), expit(-2.0), expit(-0.4), 0.5, expit(1.0), expit(2.0), expit(3.5)]
    np.testing.assert_allclose(sollich_prob(f), expected, rtol=1e-14)
    eps = 1e-9  # continuity at |f| = 1
    assert sollich_prob(np.array([1 + eps]))[0] == pytest.approx(sollich_prob(np.array([1 - eps]))[0], abs=1e-8)
    g = np.linspace(-5, 5, 1001)
    assert np.array_equal(sollich_prob(g) > 0.5, g > 0)


def test_coherence_rho_is_the_brute_force_minimiser():
    f, y = _scores(seed=3)
    rho = coherence_rho(f, y)

    def ekl(r):
        lp, lq = coherence_log_link(f, rho=r, u=1.0)
        return -np.mean(np.where(y > 0, lp, lq))

    grid = np.exp(np.linspace(math.log(1e-3), math.log(1e2), 4001))
    vals = np.array([ekl(r) for r in grid])
    r_bf = grid[np.argmin(vals)]
    assert rho == pytest.approx(r_bf, rel=5e-3)
    assert ekl(rho) <= vals.min() + 1e-10
    p = coherence_prob(f, rho)
    assert np.array_equal(p > 0.5, f > 0)


def test_bracket_facts():
    m = 10
    rng = np.random.default_rng(0)
    # monotone (nonincreasing in pi) sign sequences: exactly one bracket
    thresholds = rng.integers(0, m, size=500)  # number of leading positives
    F = np.where(np.arange(m - 1)[:, None] < thresholds[None, :], 1.0, -1.0)
    p = bracket_prob(F)
    grid = np.concatenate([[0], bracket_grid(m), [1]])
    np.testing.assert_allclose(p, (grid[thresholds] + grid[thresholds + 1]) / 2)
    assert set(np.round(p * 2 * m).astype(int)) <= set(range(1, 2 * m, 2))
    # arbitrary (non-monotone) sequences stay in [1/(2m), 1 - 1/(2m)]
    G = rng.normal(size=(m - 1, 1000))
    q = bracket_prob(G)
    assert q.min() >= 1 / (2 * m) - 1e-15 and q.max() <= 1 - 1 / (2 * m) + 1e-15
    # non-monotone by hand: signs + - + - at pi = .2 .4 .6 .8 (m = 5): pi_lo = .6, pi_hi = .4
    assert bracket_prob(np.array([[1.0], [-1.0], [1.0], [-1.0]]))[0] == pytest.approx(0.5)
    # f = 0 counts as -1 (D1)
    assert bracket_prob(np.zeros((4, 1)))[0] == pytest.approx(0.1)
    with pytest.raises(ValueError, match="m"):
        bracket_grid(1)
