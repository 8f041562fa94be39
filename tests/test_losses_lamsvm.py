"""lambda-SVM loss [RH] (SPEC 6.1): special cases, LP minimisers, Theorem 2 calibration shares."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cohstats.losses.lamsvm import (
    calibration_check,
    is_calibrated,
    lamsvm_loss,
    lamsvm_minimizer,
    lamsvm_optimal_set,
    lamsvm_pointwise_risk,
)

SET = settings(max_examples=30, deadline=None)


def ref_loss(f, y, lam):
    return max(lam - f[y], 0.0) + sum(max(1 + f[j], 0.0) for j in range(len(f)) if j != y)


@SET
@given(seed=st.integers(0, 10**6), K=st.integers(2, 6), lam=st.floats(-20, 20))
def test_loss_matches_definition_and_special_cases(seed, K, lam):
    rng = np.random.default_rng(seed)
    F = rng.normal(scale=2, size=(7, K))
    F -= F.mean(axis=1, keepdims=True)
    y = rng.integers(0, K, size=7)
    got = lamsvm_loss(F, y, lam)
    np.testing.assert_allclose(got, [ref_loss(F[i], y[i], lam) for i in range(7)], rtol=1e-14, atol=1e-14)
    # margin = K - 1 is twice Liu & Yuan's reinforced hinge with gamma = 1/2
    g = 0.5
    rml = np.array(
        [
            g * max((K - 1) - F[i, y[i]], 0) + (1 - g) * sum(max(1 + F[i, j], 0) for j in range(K) if j != y[i])
            for i in range(7)
        ]
    )
    np.testing.assert_allclose(lamsvm_loss(F, y, K - 1), 2 * rml, rtol=1e-14, atol=1e-14)
    # pointwise risk = expected loss under P
    P = rng.dirichlet(np.ones(K))
    exp_loss = sum(P[c] * ref_loss(F[0], c, lam) for c in range(K))
    assert math.isclose(lamsvm_pointwise_risk(F[0], P, lam), exp_loss, rel_tol=1e-12, abs_tol=1e-12)


def test_binary_case_matches_binary_form_and_grid():
    """K = 2, f = (t, -t): risk = P1([lam - t]_+ + [1 - t]_+) + P2([lam + t]_+ + [1 + t]_+)."""
    t = np.linspace(-6, 6, 120001)
    for lam in (-3.0, -0.5, 0.3, 1.0, 4.0):
        for p1 in (0.1, 0.45, 0.7, 0.95):
            P = np.array([p1, 1 - p1])
            r_bin = p1 * (np.maximum(lam - t, 0) + np.maximum(1 - t, 0)) + (1 - p1) * (
                np.maximum(lam + t, 0) + np.maximum(1 + t, 0)
            )
            np.testing.assert_allclose(lamsvm_pointwise_risk(np.stack([t, -t], 1), P, lam), r_bin, rtol=1e-13)
            f, unique = lamsvm_minimizer(P, lam)
            assert lamsvm_pointwise_risk(f, P, lam) <= r_bin.min() + 1e-12
            assert unique and np.argmax(f) == np.argmax(P)  # calibrated for every lam != 0


@pytest.mark.parametrize("K", [3, 4, 5])
def test_lee_case_closed_form(K):
    """margin < -1: minimiser (K-1) at argmax P, -1 elsewhere; risk K (1 - P_max); positive term inactive."""
    rng = np.random.default_rng(K)
    for lam in (-1.5, -5.0, -1e4):
        for P in rng.dirichlet(np.ones(K), size=5):
            f, unique = lamsvm_minimizer(P, lam)
            k = np.argmax(P)
            expect = -np.ones(K)
            expect[k] = K - 1
            np.testing.assert_allclose(f, expect, atol=1e-9)
            assert unique
            assert math.isclose(lamsvm_pointwise_risk(f, P, lam), K * (1 - P[k]), rel_tol=1e-10)
            assert np.all(P * np.maximum(lam - f, 0) == 0)  # Lee et al.'s loss at the optimum
            lee = ((1 - P) * np.maximum(1 + f, 0)).sum()
            assert math.isclose(lee, K * (1 - P[k]), rel_tol=1e-10)
            lo, hi = lamsvm_optimal_set(P, lam)
            np.testing.assert_allclose(lo, expect, atol=1e-12)
            np.testing.assert_allclose(hi, expect, atol=1e-12)


@pytest.mark.parametrize("K", [2, 3, 4, 5])
@pytest.mark.parametrize("lam", [-2.0, -1.0, -0.5, 0.0, 0.3, 1.0, 1.5, 3.0, 8.0])
def test_lp_minimiser_lies_in_exact_optimal_set(K, lam):
    """linprog vertex inside {lo <= f <= hi, sum f = 0}; moving inside the set keeps the risk,
    moving out of it raises it; random sum-to-zero points never beat the LP."""
    rng = np.random.default_rng(K * 100 + int(10 * lam) + 7)
    for P in rng.dirichlet(np.ones(K), size=6):
        f, _ = lamsvm_minimizer(P, lam)
        r0 = lamsvm_pointwise_risk(f, P, lam)
        assert abs(f.sum()) < 1e-9
        lo, hi = lamsvm_optimal_set(P, lam)
        assert np.all(f >= lo - 1e-8) and np.all(f <= hi + 1e-8)
        for j in range(K):
            for k in range(K):
                if j == k:
                    continue
                d = np.zeros(K)
                d[j], d[k] = 1.0, -1.0
                tmax = min(hi[j] - f[j], f[k] - lo[k])
                if tmax > 1e-7:
                    inside = f + min(tmax, 1.0) * d
                    assert math.isclose(lamsvm_pointwise_risk(inside, P, lam), r0, rel_tol=1e-9, abs_tol=1e-9)
                out = f + (max(tmax, 0) + 1e-3) * d
                assert lamsvm_pointwise_risk(out, P, lam) > r0 + 1e-7
        Z = rng.normal(scale=3, size=(2000, K))
        Z -= Z.mean(axis=1, keepdims=True)
        assert lamsvm_pointwise_risk(Z, P, lam).min() >= r0 - 1e-9


def test_is_calibrated_theorem2():
    assert is_calibrated(-0.01, 3) and not is_calibrated(0.0, 3)
    assert not is_calibrated(0.5, 3) and is_calibrated(0.5000001, 3)  # open at (K-2)/2
    assert is_calibrated(1.0, 3) and not is_calibrated(1.0, 4) and not is_calibrated(1.0, 5)  # ISVM
    assert all(is_calibrated(m, 2) for m in (-1.0, 1e-6, 1.0)) and not is_calibrated(0.0, 2)
    assert is_calibrated(-1e4, 10) and is_calibrated(9.0, 10)  # Lee, RML


@pytest.mark.parametrize("K", [3, 4, 5])
def test_calibration_shares_match_theorem2(K):
    half = (K - 2) / 2
    for lam in (-10.0, -1.0, -0.3, -1e-3, half + 1e-3, half + 0.5, K - 1.0, 100.0):
        assert calibration_check(lam, K, n_draws=3000, random_state=1) == 0.0, lam
    inside = [0.0, half / 2 if half > 0 else 0.0, half]
    for lam in inside:
        share = calibration_check(lam, K, n_draws=3000, random_state=1)
        assert 0.005 <= share <= 0.95, (lam, share)
    # at the boundary the minimiser is not unique for a large share of P (SPEC 6.1: about half)
    assert 0.3 < calibration_check(half, K, n_draws=3000, random_state=2) < 0.8
    # ISVM (margin 1) is calibrated for K = 3 only
    assert (calibration_check(1.0, K, n_draws=3000, random_state=3) == 0.0) == (K == 3)


def test_binary_zero_margin_share_closed_form():
    """K = 2, margin 0: the minimiser is f = 0 (a tie) iff P1 in [1/3, 2/3]: share 1/3."""
    n = 20000
    share = calibration_check(0.0, 2, n_draws=n, random_state=5)
    assert abs(share - 1 / 3) < 4 * math.sqrt(2 / 9 / n)
    for lam in (-3.0, -0.5, 0.2, 1.0, 5.0):
        assert calibration_check(lam, 2, n_draws=2000, random_state=0) == 0.0


@pytest.mark.parametrize("K,lam", [(3, 0.2), (4, 0.5), (4, 1.0), (5, 1.2), (4, 3.0)])
def test_exact_share_bounds_linprog_vertex_share(K, lam):
    """Same draws: the vertex LP check never finds more failures than the exact set check."""
    ex = calibration_check(lam, K, n_draws=150, random_state=11)
    lp = calibration_check(lam, K, n_draws=150, random_state=11, method="linprog")
    assert lp <= ex
    if is_calibrated(lam, K):
        assert ex == 0.0 == lp
    else:
        assert ex > 0


def test_validation():
    with pytest.raises(ValueError, match="K \\(number of classes\\) must be >= 2"):
        calibration_check(1.0, 1)
    with pytest.raises(TypeError, match="margin must be a real number"):
        is_calibrated("1", 3)
    with pytest.raises(ValueError, match="margin must be finite"):
        lamsvm_minimizer([0.5, 0.5], math.inf)
    with pytest.raises(ValueError, match="sum to 1"):
        lamsvm_minimizer([0.5, 0.6], 1.0)
    with pytest.raises(ValueError, match="method must be"):
        calibration_check(1.0, 3, method="simplex")
    with pytest.raises(ValueError, match="n_draws must be a positive integer"):
        calibration_check(1.0, 3, n_draws=0)
    with pytest.raises(ValueError, match="class codes 0..2"):
        lamsvm_loss(np.zeros((1, 3)), [3], 1.0)


def test_two_class_margin_one_is_twice_the_hinge():
    """SPEC 6.5: K = 2, margin 1, f = (t, -t): Psi_y = 2 [1 - y t]_+ (and ISVM = margin 1 in general)."""
    t = np.linspace(-4, 4, 81)
    F = np.stack([t, -t], axis=1)
    np.testing.assert_allclose(lamsvm_loss(F, np.zeros(81, dtype=int), 1.0), 2 * np.maximum(1 - t, 0), rtol=1e-15)
    np.testing.assert_allclose(lamsvm_loss(F, np.ones(81, dtype=int), 1.0), 2 * np.maximum(1 + t, 0), rtol=1e-15)


@pytest.mark.parametrize("K", [3, 4])
@pytest.mark.parametrize("lam", [-1.0, 0.0, 0.5, 1.0, 3.0])
def test_optimal_set_box_equals_lp_coordinate_ranges(K, lam):
    """min / max of each f_l over {risk <= optimum + 1e-10, sum f = 0}, by linprog, equal lo / hi."""
    from scipy.optimize import linprog

    rng = np.random.default_rng(K + int(10 * lam) + 50)
    I, Z = np.eye(K), np.zeros((K, K))
    for P in rng.dirichlet(np.ones(K), size=3):
        f, _ = lamsvm_minimizer(P, lam)
        r0 = lamsvm_pointwise_risk(f, P, lam)
        cost = np.concatenate([np.zeros(K), P, 1 - P])
        A_ub = np.vstack([np.block([[-I, -I, Z], [I, Z, -I]]), cost])
        b_ub = np.concatenate([np.full(K, -lam), np.full(K, -1.0), [r0 + 1e-10]])
        A_eq = np.concatenate([np.ones(K), np.zeros(2 * K)])[None]
        bounds = [(None, None)] * K + [(0, None)] * (2 * K)
        lo, hi = lamsvm_optimal_set(P, lam)
        for l in range(K):
            for sgn, ref in ((1, lo[l]), (-1, hi[l])):
                c = np.zeros(3 * K)
                c[l] = sgn
                res = linprog(c, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=[0.0], bounds=bounds, method="highs")
                assert res.status == 0
                assert abs(sgn * res.fun - ref) < 1e-6
