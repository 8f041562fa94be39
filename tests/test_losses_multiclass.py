"""Multicategory coherence loss [ZJLY] (SPEC 5.1-5.3) against independent references."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize
from scipy.special import logsumexp, softmax

from cohstats.losses import coherence_link, coherence_V
from cohstats.losses import multiclass as mc

SET = settings(max_examples=40, deadline=None)
Ts = st.sampled_from([0.3, 1.0, 2.0])


def sum_zero(rng, n, K, scale=2.0):
    G = rng.normal(scale=scale, size=(n, K))
    return G - G.mean(axis=1, keepdims=True)


def ref_loss(g, c, T):
    """Eq (6) literally: T log(1 + sum_{j != c} exp((1 + g_j - g_c)/T)) (via logsumexp with e_c = 0)."""
    e = np.array([(1 + g[j] - g[c]) / T if j != c else 0.0 for j in range(len(g))])
    return T * logsumexp(e)


def ref_prob(g, T):
    """Eq (8) literally."""
    K = len(g)
    A = np.array([[np.exp((1 + g[l] + g[c] - (l == c)) / T) for l in range(K)] for c in range(K)])
    num = A.sum(axis=1)
    return num / num.sum()


def pop_risk(g, P, T):
    return sum(P[c] * ref_loss(g, c, T) for c in range(len(P)))


def basis(K):
    """Orthonormal basis of the sum-to-zero subspace (K x (K-1))."""
    Q, _ = np.linalg.qr(np.eye(K)[:, :-1] - 1.0 / K)
    return Q


@SET
@given(seed=st.integers(0, 10**6), K=st.integers(2, 6), T=st.floats(0.05, 20.0))
def test_loss_weights_prob_match_literal_formulas(seed, K, T):
    rng = np.random.default_rng(seed)
    G = sum_zero(rng, 5, K)
    y = rng.integers(0, K, size=5)
    L = mc.coherence_loss(G, y, T)
    B = mc.coherence_weights(G, y, T)
    P = mc.coherence_proba(G, T)
    for i in range(5):
        assert math.isclose(L[i], ref_loss(G[i], y[i], T), rel_tol=1e-12, abs_tol=1e-300)
        e = np.array([(1 + G[i, j] - G[i, y[i]]) / T if j != y[i] else 0.0 for j in range(K)])
        np.testing.assert_allclose(B[i], softmax(e), rtol=1e-12, atol=1e-300)
        if np.abs(G[i]).max() / T < 300:
            np.testing.assert_allclose(P[i], ref_prob(G[i], T), rtol=1e-11, atol=1e-300)
    np.testing.assert_allclose(B.sum(axis=1), 1.0, rtol=1e-14)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-14)
    # every quantity is invariant to adding a constant to a row
    G2 = G + rng.normal(size=(5, 1))
    np.testing.assert_allclose(mc.coherence_loss(G2, y, T), L, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(mc.coherence_proba(G2, T), P, rtol=1e-9, atol=1e-300)


@SET
@given(seed=st.integers(0, 10**6), K=st.integers(2, 5), T=st.floats(0.2, 5.0))
def test_gradient_and_hessian_match_finite_differences(seed, K, T):
    rng = np.random.default_rng(seed)
    g = sum_zero(rng, 1, K, 1.0)[0]
    c = int(rng.integers(0, K))
    grad = mc.coherence_grad(g[None], [c], T)[0]
    H = mc.coherence_hessian(g, c, T)
    h = 1e-6
    for j in range(K):
        d = np.zeros(K)
        d[j] = h
        fd = (ref_loss(g + d, c, T) - ref_loss(g - d, c, T)) / (2 * h)
        assert math.isclose(grad[j], fd, rel_tol=1e-6, abs_tol=1e-8)
        fdg = (mc.coherence_grad((g + d)[None], [c], T)[0] - mc.coherence_grad((g - d)[None], [c], T)[0]) / (2 * h)
        np.testing.assert_allclose(H[:, j], fdg, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(H, H.T, atol=1e-15)
    assert np.all(np.diag(H) <= 1 / (4 * T) * (1 + 1e-12))
    assert np.linalg.eigvalsh(H).min() >= -1e-14  # PSD
    Q = basis(K)
    assert np.linalg.eigvalsh(Q.T @ H @ Q).min() > 0  # strictly convex on the sum-to-zero subspace


@pytest.mark.parametrize("K", [2, 3, 4, 5])
@pytest.mark.parametrize("T", [0.3, 1.0, 2.0])
def test_eq8_recovers_P_from_numerically_minimised_risk(K, T):
    """SPEC 5.2: minimise sum_c P_c C(g, c) by BFGS over sum-to-zero g; eq (8) gives back P."""
    rng = np.random.default_rng(100 * K + int(10 * T))
    Q = basis(K)
    for _ in range(4):
        P = rng.dirichlet(np.ones(K))
        res = minimize(
            lambda z: pop_risk(Q @ z, P, T),
            np.zeros(K - 1),
            method="BFGS",
            jac=lambda z: Q.T @ sum(P[c] * mc.coherence_grad((Q @ z)[None], [c], T)[0] for c in range(K)),
            options={"gtol": 1e-12},
        )
        g_ref = Q @ res.x
        np.testing.assert_allclose(mc.coherence_proba(g_ref[None], T)[0], P, rtol=1e-6, atol=1e-8)
        g = mc.coherence_minimizer(P, T)
        assert abs(g.sum()) < 1e-12
        np.testing.assert_allclose(g, g_ref, atol=1e-6)
        np.testing.assert_allclose(mc.coherence_proba(g[None], T)[0], P, rtol=1e-9, atol=1e-12)
        assert pop_risk(g, P, T) <= res.fun + 1e-13
        # property 4: ordering of P is the ordering of g
        order = np.argsort(P)
        assert np.all(np.diff(g[order]) > 0)
    # rows at once
    Ps = rng.dirichlet(np.ones(K), size=3)
    np.testing.assert_allclose(mc.coherence_proba(mc.coherence_minimizer(Ps, T), T), Ps, rtol=1e-9, atol=1e-12)


@SET
@given(f=st.floats(-30, 30), T=st.floats(0.05, 10.0))
def test_two_classes_reduce_to_binary_coherence(f, T):
    """SPEC 5.3 (1): g = (f/2, -f/2): C(g, 1) = V_{T,1}(f), C(g, 2) = V_{T,1}(-f), eq (8) = eta~(f; T, 1)."""
    g = np.array([[f / 2, -f / 2]])
    assert math.isclose(mc.coherence_loss(g, [0], T)[0], coherence_V(f, rho=T, u=1.0), rel_tol=1e-13, abs_tol=1e-300)
    assert math.isclose(mc.coherence_loss(g, [1], T)[0], coherence_V(-f, rho=T, u=1.0), rel_tol=1e-13, abs_tol=1e-300)
    p = mc.coherence_proba(g, T)[0]
    assert math.isclose(p[0], coherence_link(f, rho=T, u=1.0), rel_tol=1e-12, abs_tol=1e-300)


@SET
@given(seed=st.integers(0, 10**6), K=st.integers(2, 6), T=st.floats(0.01, 50.0))
def test_theorem2_bounds(seed, K, T):
    """SPEC 5.3 (2): S <= C - T log m <= H and C >= I[argmax g != c]."""
    rng = np.random.default_rng(seed)
    G = sum_zero(rng, 8, K, 3.0)
    y = rng.integers(0, K, size=8)
    C = mc.coherence_loss(G, y, T)
    S = np.array([sum(1 + G[i, j] - G[i, y[i]] for j in range(K) if j != y[i]) / K for i in range(8)])
    H = np.array([max(G[i, j] + 1 - (j == y[i]) for j in range(K)) - G[i, y[i]] for i in range(8)])
    np.testing.assert_allclose(mc.S_loss(G, y), S, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(mc.hinge_loss(G, y), H, rtol=1e-13, atol=1e-14)
    tol = 1e-10 * (1 + T * math.log(K) + np.abs(G).max())
    assert np.all(S <= C - T * math.log(K) + tol)
    assert np.all(C - T * math.log(K) <= H + tol)
    wrong = np.argmax(G, axis=1) != y
    assert np.all(C >= wrong - 1e-12)


@SET
@given(seed=st.integers(0, 10**6), K=st.integers(2, 6))
def test_theorem3_temperature_limits(seed, K):
    """SPEC 5.3 (3): 0 <= C - H <= T log m (T -> 0); 0 <= C - T log m - S <= range^2/(8T) (T -> inf)."""
    rng = np.random.default_rng(seed)
    G = sum_zero(rng, 6, K, 2.0)
    y = rng.integers(0, K, size=6)
    H = mc.hinge_loss(G, y)
    for T in (1e-2, 1e-4):
        C = mc.coherence_loss(G, y, T)
        assert np.all(C - H >= -1e-12) and np.all(C - H <= T * math.log(K) * (1 + 1e-12) + 1e-15)
        B = mc.coherence_weights(G, y, T)
        for i in range(6):
            x = np.array([G[i, j] + 1 - (j == y[i]) for j in range(K)])
            top = np.sort(x)[::-1]
            gap = top[0] - top[1]
            # beta -> one-hot at argmax_l {g_l + 1 - I[l = c]}: 1 - beta_top <= (K - 1) exp(-gap/T)
            assert 1 - B[i, np.argmax(x)] <= (K - 1) * math.exp(-gap / T) * (1 + 1e-9) + 1e-15
    S = mc.S_loss(G, y)
    for T in (1e3, 1e6):
        C = mc.coherence_loss(G, y, T)
        rng_e = np.array(
            [np.ptp([(1 + G[i, j] - G[i, y[i]]) if j != y[i] else 0.0 for j in range(K)]) for i in range(6)]
        )
        excess = C - T * math.log(K) - S
        fp = 1e-15 * T * 10
        assert np.all(excess >= -fp) and np.all(excess <= rng_e**2 / (8 * T) + fp)
        B = mc.coherence_weights(G, y, T)
        assert np.abs(B - 1 / K).max() <= 1.01 * rng_e.max() / T  # |softmax - 1/m| <= range/T


@SET
@given(seed=st.integers(0, 10**6), K=st.integers(2, 6))
def test_T1_dominates_multinomial_deviance(seed, K):
    """SPEC 5.3 (5): at T = 1, C(g, c) >= Lmult(g, c) = log sum_j exp(g_j - g_c)."""
    rng = np.random.default_rng(seed)
    G = sum_zero(rng, 10, K, 3.0)
    y = rng.integers(0, K, size=10)
    Lm = mc.lmult_loss(G, y)
    np.testing.assert_allclose(Lm, [logsumexp(G[i] - G[i, y[i]]) for i in range(10)], rtol=1e-13)
    assert np.all(mc.coherence_loss(G, y, 1.0) >= Lm - 1e-13)


def test_stability_extreme_margins():
    G = np.array([[1e4, -5e3, -5e3], [-1e4, 5e3, 5e3], [0.0, 0.0, 0.0]])
    y = np.array([0, 0, 2])
    for T in (1e-3, 1.0, 1e3):
        L = mc.coherence_loss(G, y, T)
        B = mc.coherence_weights(G, y, T)
        P = mc.coherence_proba(G, T)
        assert np.all(np.isfinite(L)) and np.all(np.isfinite(B)) and np.all(np.isfinite(P))
        # asymptotic: correct with a huge margin -> T log(1 + (K-1) e^{(1 - 1.5e4)/T}) ~ tiny but >= 0
        assert 0.0 <= L[0] <= 2 * T * math.exp((1 - 1.5e4) / T) + 1e-300
        # wrong with a huge margin: C = T log(1 + 2 e^x), x = (1 + 1.5e4)/T, = T (x + log 2 + log1p(e^{-x}/2))
        x = (1 + 1.5e4) / T
        assert math.isclose(L[1], T * (x + math.log(2) + math.log1p(math.exp(-x) / 2)), rel_tol=1e-13)
        np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-14)
    assert math.isclose(mc.coherence_loss(G, y, 1.0)[2], math.log(1 + 2 * math.e), rel_tol=1e-14)


def test_row_kernels_match_vectorised():
    """The one-row kernels and the vectorised functions agree to rounding.

    They are compiled separately (the row kernel on its own, the vectorised one with the kernel
    inlined in a loop), so the machine code may differ in the last bits of an ``exp`` or ``log``;
    those are compared to rounding (rtol 4e-15), the others bit for bit.
    """
    rng = np.random.default_rng(3)
    G = sum_zero(rng, 4, 4)
    y = np.array([0, 1, 2, 3])
    out = np.empty(4)

    def close(a, b):
        np.testing.assert_allclose(a, b, rtol=4e-15, atol=0.0)

    for i in range(4):
        close(mc.mc_coh_loss(G[i], y[i], 0.7), mc.coherence_loss(G, y, 0.7)[i])
        close(mc.mc_coh_beta(G[i], y[i], 0.7, out), mc.coherence_weights(G, y, 0.7)[i])
        close(mc.mc_coh_prob(G[i], 0.7, out), mc.coherence_proba(G, 0.7)[i])
        # sums, maxima and one division only: exact
        assert mc.mc_hinge(G[i], y[i]) == mc.hinge_loss(G, y)[i]
        assert mc.mc_S(G[i], y[i]) == mc.S_loss(G, y)[i]
        close(mc.mc_lmult(G[i], y[i]), mc.lmult_loss(G, y)[i])


def test_validation():
    G = np.zeros((2, 3))
    with pytest.raises(ValueError, match="T \\(temperature\\) must be"):
        mc.coherence_loss(G, [0, 1], T=0.0)
    with pytest.raises(ValueError, match="class codes in 0..2"):
        mc.coherence_loss(G, [0, 3])
    with pytest.raises(ValueError, match="length 2"):
        mc.coherence_loss(G, [0])
    with pytest.raises(ValueError, match="shape \\(n, K\\)"):
        mc.coherence_proba(np.zeros(3))
    with pytest.raises(ValueError, match="strictly positive"):
        mc.coherence_minimizer([0.5, 0.5, 0.0])
    with pytest.raises(ValueError, match="sum to 1"):
        mc.coherence_minimizer([0.5, 0.6])
    with pytest.raises(TypeError, match="integer class codes"):
        mc.coherence_loss(G, [0.5, 1.0])


@pytest.mark.parametrize("T", [0.01, 0.3, 10.0])
def test_minimizer_two_classes_is_half_the_binary_minimiser(T):
    """K = 2: g_hat = (f*/2, -f*/2) with f* the closed-form coherence minimiser (rho = T, u = 1)."""
    from cohstats.losses import coherence_minimizer as binary_fstar

    for eta in (1e-9, 0.02, 0.3, 0.5, 0.77, 1 - 1e-6):
        g = mc.coherence_minimizer([eta, 1 - eta], T)
        f = binary_fstar(eta, rho=T, u=1.0)
        # the solver stops at |projected gradient| <= 1e-13, an error in P of that size; the
        # minimiser moves by about T dP / P, so small classes pin g down less tightly
        tol = 10 * max(T, 1.0) * 1e-13 / min(eta, 1 - eta) + 1e-12
        assert math.isclose(g[0], f / 2, rel_tol=1e-9, abs_tol=tol)
        assert math.isclose(g[1], -f / 2, rel_tol=1e-9, abs_tol=tol)


@pytest.mark.parametrize("T", [0.02, 50.0])
def test_minimizer_robust_for_extreme_P(T):
    rng = np.random.default_rng(int(T * 100))
    Ps = np.clip(rng.dirichlet(np.full(6, 0.05), size=10), 1e-9, None)
    Ps /= Ps.sum(axis=1, keepdims=True)
    G = mc.coherence_minimizer(Ps, T)
    np.testing.assert_allclose(G.sum(axis=1), 0.0, atol=1e-9 * (1 + np.abs(G).max()))
    np.testing.assert_allclose(mc.coherence_proba(G, T), Ps, rtol=1e-3, atol=1e-12)
