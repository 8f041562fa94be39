"""Tests of the binary margin losses (cohstats.losses.scalar / binary) against SPEC 1, 3.1, 3.7, 7.

Every check compares with an independent reference: the papers' formulas evaluated naively in
80-bit extended precision (numpy longdouble) where they do not overflow, asymptotic forms where
they do, closed-form bounds, finite differences, and scipy root finding / minimisation.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import brentq, minimize_scalar
from scipy.special import expit as sp_expit
from scipy.special import log_expit as sp_log_expit

from cohstats.losses import (
    MarginLoss,
    coherence_C,
    coherence_L,
    coherence_link,
    coherence_log_link,
    coherence_minimizer,
    coherence_V,
    exp_link,
    exp_minimizer,
    get_loss,
    hhinge_link,
    hhinge_minimizer,
    hinge_minimizer,
    logistic_link,
    logistic_minimizer,
    loss_names,
    lum_link,
    lum_loss,
    lum_minimizer,
    sqhinge_link,
    sqhinge_minimizer,
)
from cohstats.losses import scalar as S

SET = settings(max_examples=60, deadline=None)
LD = np.longdouble
LOG2 = math.log(2.0)

rhos = st.floats(1e-3, 1e3)
us = st.floats(0.0, 10.0)
upos = st.floats(1e-3, 10.0)
zs = st.floats(-50.0, 50.0)
etas = st.floats(1e-6, 1 - 1e-6)


# --------------------------------------------------------------------------- independent references
def ref_V(z, rho, u):
    """rho log(1 + exp((u - z)/rho)) in longdouble; asymptotic outside the longdouble range."""
    t = (LD(u) - LD(z)) / LD(rho)
    if t > 11000:
        return float(LD(u) - LD(z))  # correction rho e^{-t} < 1e-4700
    if t < -11000:
        return 0.0
    return float(LD(rho) * np.log1p(np.exp(t)))


def ref_lum(z, a, c):
    """[LZW] eq (2) literally, in longdouble."""
    z, a, c = LD(z), LD(a), LD(c)
    if z < c / (1 + c):
        return float(1 - z)
    if np.isinf(a):  # the a -> inf limit of SPEC 7.1
        return float(np.exp(-((1 + c) * z - c)) / (1 + c))
    return float(np.exp(a * np.log(a / ((1 + c) * z - c + a))) / (1 + c))


def ref_hhinge(t, d):
    if t > 1:
        return 0.0
    if t > 1 - d:
        return (1 - t) ** 2 / (2 * d)
    return 1 - t - d / 2


REF = {
    "logistic": lambda z, p: math.log1p(math.exp(-z)) if z > -30 else -z + math.log1p(math.exp(z)),
    "hinge": lambda z, p: max(1 - z, 0.0),
    "sqhinge": lambda z, p: max(1 - z, 0.0) ** 2,
    "exp": lambda z, p: math.exp(-z),
    "hhinge": lambda z, p: ref_hhinge(z, p["delta"]),
    "lum": lambda z, p: ref_lum(z, p["a"], p["c"]),
    "V": lambda z, p: ref_V(z, p["rho"], p["u"]),
    "C": lambda z, p: p["u"] * ref_V(z, p["rho"], p["u"]) / ref_V(0.0, p["rho"], p["u"]),
    "L": lambda z, p: ref_V(z, p["rho"], p["u"]) / ref_V(0.0, p["rho"], p["u"]),
}

LOSS_CASES = [
    ("C", {}),
    ("C", {"rho": 0.3, "u": 2.0}),
    ("V", {}),
    ("V", {"rho": 2.0, "u": 1.0}),
    ("L", {}),
    ("L", {"rho": 0.5, "u": 0.0}),
    ("logistic", {}),
    ("hinge", {}),
    ("hhinge", {}),
    ("hhinge", {"delta": 0.5}),
    ("hhinge", {"delta": 1.5}),
    ("sqhinge", {}),
    ("lum", {}),
    ("lum", {"a": 1.0, "c": 1.0}),
    ("lum", {"a": 5.0, "c": 10.0}),
    ("lum", {"a": math.inf, "c": 0.5}),
    ("exp", {}),
]


def kinks(loss):
    p = loss.params
    if loss.name == "hhinge":
        return [1.0, 1.0 - p["delta"]]
    if loss.name in ("hinge", "sqhinge"):
        return [1.0]
    if loss.name == "lum":
        return [p["c"] / (1 + p["c"])] if math.isfinite(p["c"]) else [1.0]
    return []


def ref_vec(name, z, p):
    """Vectorised float64 references (naive but overflow-free forms) for grid searches."""
    z = np.asarray(z, dtype=float)
    if name == "logistic":
        return np.logaddexp(0.0, -z)
    if name == "hinge":
        return np.maximum(1 - z, 0.0)
    if name == "sqhinge":
        return np.maximum(1 - z, 0.0) ** 2
    if name == "exp":
        return np.exp(-z)
    if name == "hhinge":
        d = p["delta"]
        return np.where(z > 1, 0.0, np.where(z > 1 - d, (1 - z) ** 2 / (2 * d), 1 - z - d / 2))
    if name == "lum":
        a, c = p["a"], p["c"]
        right = np.maximum((1 + c) * z - c, 0.0)
        tail = np.exp(-right) if math.isinf(a) else (a / (right + a)) ** a
        return np.where(z < c / (1 + c), 1 - z, tail / (1 + c))
    V = p["rho"] * np.logaddexp(0.0, (p["u"] - z) / p["rho"])
    V0 = p["rho"] * np.logaddexp(0.0, p["u"] / p["rho"])
    return {"V": V, "C": p["u"] * V / V0, "L": V / V0}[name]


def risk_ref(loss, f, eta):
    r = REF[loss.name]
    return eta * r(f, loss.params) + (1 - eta) * r(-f, loss.params)


# --------------------------------------------------------------------------- values vs references
@pytest.mark.parametrize("name,params", LOSS_CASES)
def test_values_match_reference(name, params):
    loss = get_loss(name, **params)
    z = np.concatenate([np.linspace(-6, 6, 241), [-30.0, 30.0, 200.0]])
    got = loss.value(z)
    ref = np.array([REF[name](float(t), loss.params) for t in z])
    np.testing.assert_allclose(got, ref, rtol=1e-13, atol=1e-300)


@pytest.mark.parametrize("name,params", LOSS_CASES)
def test_derivatives_match_finite_differences(name, params):
    loss = get_loss(name, **params)
    z = np.linspace(-3.013, 3.017, 173)
    ks = kinks(loss)
    z = z[[all(abs(t - k) > 1e-3 for k in ks) for t in z]]
    h = 1e-5
    fd1 = np.array([(REF[name](t + h, loss.params) - REF[name](t - h, loss.params)) / (2 * h) for t in z])
    np.testing.assert_allclose(loss.d1(z), fd1, rtol=1e-6, atol=1e-8)
    fd2 = (loss.d1(z + h) - loss.d1(z - h)) / (2 * h)
    np.testing.assert_allclose(loss.d2(z), fd2, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name,params", LOSS_CASES)
def test_curvature_bound_is_tight(name, params):
    loss = get_loss(name, **params)
    z = np.linspace(-20, 20, 400001)
    d2 = loss.d2(z)
    assert np.all(d2 >= 0)
    L = loss.curv_bound
    if math.isinf(L):
        assert name in ("hinge", "exp")
        return
    assert d2.max() <= L * (1 + 1e-12)
    assert d2.max() >= L * (1 - 1e-3)  # the bound is attained (up to the grid)


def test_logistic_special_cases():
    z = np.linspace(-40, 40, 801)
    ref = np.logaddexp(0.0, -z)
    np.testing.assert_allclose(coherence_V(z, rho=1.0, u=0.0), ref, rtol=1e-14)
    np.testing.assert_allclose(get_loss("logistic").value(z), ref, rtol=1e-14)
    np.testing.assert_allclose(coherence_V(z, rho=2.5, u=0.0), 2.5 * np.logaddexp(0.0, -z / 2.5), rtol=1e-14)
    np.testing.assert_allclose(coherence_L(z, rho=1.0, u=0.0), ref / LOG2, rtol=1e-14)
    v, lg = get_loss("V"), get_loss("logistic")  # default "V" is u = 0: the logistic loss
    for m in ("value", "d1", "d2"):
        np.testing.assert_allclose(getattr(v, m)(z), getattr(lg, m)(z), rtol=1e-14, atol=1e-300)
    np.testing.assert_allclose(coherence_link(z, 1.0, 0.0), sp_expit(z), rtol=1e-14)
    e = np.linspace(0.01, 0.99, 99)
    np.testing.assert_allclose(
        coherence_minimizer(e, rho=1.7, u=0.0), 1.7 * np.log(e / (1 - e)), rtol=1e-12, atol=1e-13
    )


@SET
@given(z=zs, rho=rhos, u=upos)
def test_C_is_kappa_V_and_u_L(z, rho, u):
    """SPEC 3.1 at the loss level: C = kappa V (value and both derivatives), C = u L, L_{rho,1} = C_{rho,1}."""
    kappa = (
        u / (rho * math.log1p(math.exp(u / rho))) if u / rho < 700 else u / (u + rho * math.log1p(math.exp(-u / rho)))
    )
    C, V, L = get_loss("C", rho=rho, u=u), get_loss("V", rho=rho, u=u), get_loss("L", rho=rho, u=u)
    for m in ("value", "d1", "d2"):
        a, b = getattr(C, m)(z), kappa * getattr(V, m)(z)
        assert math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-300)
    assert math.isclose(C.curv_bound, kappa * V.curv_bound, rel_tol=1e-12)
    assert math.isclose(C.value(z), u * L.value(z), rel_tol=1e-12, abs_tol=1e-300)
    assert math.isclose(coherence_L(z, rho, 1.0), coherence_C(z, rho, 1.0), rel_tol=1e-13, abs_tol=1e-300)


# --------------------------------------------------------------------------- SPEC 1.4 facts
@SET
@given(rho=rhos, u=upos)
def test_fact1_values_at_zero(rho, u):
    assert math.isclose(coherence_C(0.0, rho, u), u, rel_tol=1e-14)
    assert math.isclose(coherence_L(0.0, rho, u), 1.0, rel_tol=1e-14)
    assert math.isclose(coherence_L(0.0, rho, 0.0), 1.0, rel_tol=1e-14)


@SET
@given(z=zs, rho=rhos, u=upos)
def test_fact2_majorization(z, rho, u):
    V, C = coherence_V(z, rho, u), coherence_C(z, rho, u)
    hinge = max(u - z, 0.0)
    zero_one = u * (z <= 0)
    tol = 1e-12 * (1 + abs(z) + rho)
    assert zero_one <= hinge + tol
    assert hinge <= V + tol
    assert V <= rho * LOG2 + hinge + tol
    assert zero_one <= C + tol
    assert C <= V + tol
    assert (u - z) / 2 <= V - rho * LOG2 + tol


@SET
@given(z=zs, u=upos, rho=st.floats(1e-6, 1e-2))
def test_fact3_limit_rho_to_zero(z, u, rho):
    hinge = max(u - z, 0.0)
    V, C = coherence_V(z, rho, u), coherence_C(z, rho, u)
    assert -1e-12 <= V - hinge <= rho * LOG2 * (1 + 1e-12)
    # |C - [u-z]_+| <= rho log 2 (1 + [u-z]_+/u): kappa in [u/(u + rho log 2), 1]
    assert abs(C - hinge) <= rho * LOG2 * (1 + hinge / u) * (1 + 1e-9) + 1e-12


@SET
@given(z=st.floats(-5, 5), u=upos, rho=st.floats(1e2, 1e6))
def test_fact3_limit_rho_to_infinity(z, u, rho):
    V = coherence_V(z, rho, u)
    excess = V - rho * LOG2 - (u - z) / 2  # = rho log cosh((u - z)/(2 rho)) in [0, (u-z)^2/(8 rho)]
    fp = 4e-16 * rho
    assert -fp <= excess <= (u - z) ** 2 / (8 * rho) + fp
    # C - u = u (V(z) - V(0))/V(0), |V(z) - V(0)| <= |z| and V(0) >= rho log 2
    assert abs(coherence_C(z, rho, u) - u) <= u * abs(z) / (rho * LOG2) * (1 + 1e-9) + 1e-13


@SET
@given(z=st.floats(-10, 10), r1=st.floats(0.01, 50), r2=st.floats(0.01, 50), u=st.floats(0.0, 5))
def test_fact4_monotone_in_rho(z, r1, r2, u):
    lo, hi = min(r1, r2), max(r1, r2)
    a, b = coherence_L(z, lo, u), coherence_L(z, hi, u)
    tol = 1e-12 * max(a, b)
    if z < 0:
        assert a >= b - tol
    else:
        assert a <= b + tol


@SET
@given(z=st.floats(-10, 10), u1=st.floats(0.0, 10), u2=st.floats(0.0, 10), rho=st.floats(0.05, 20))
def test_fact4_monotone_in_u(z, u1, u2, rho):
    lo, hi = min(u1, u2), max(u1, u2)
    a, b = coherence_L(z, rho, lo), coherence_L(z, rho, hi)
    tol = 1e-12 * max(a, b)
    if z < 0:
        assert a >= b - tol
    else:
        assert a <= b + tol


@SET
@given(eta=etas, rho=st.floats(1e-2, 1e2), u=us)
def test_fact5_round_trips_and_symmetry(eta, rho, u):
    f = coherence_minimizer(eta, rho, u)
    assert math.isclose(coherence_link(f, rho, u), eta, rel_tol=1e-9, abs_tol=1e-12)
    assert math.isclose(coherence_minimizer(1 - eta, rho, u), -f, rel_tol=1e-8, abs_tol=1e-9 * (1 + u))
    assert (f > 0) == (eta > 0.5) and (f < 0) == (eta < 0.5)
    g = (eta - 0.5) * 20 * (u + rho)  # a decision value of the natural scale
    e = coherence_link(g, rho, u)
    assert math.isclose(coherence_link(-g, rho, u), 1 - e, rel_tol=1e-12, abs_tol=1e-15)
    if 0 < e < 1:
        # f* is ill-conditioned near eta in {0, 1}: a float eta carries a relative error 1.1e-16 in
        # min(eta, 1 - eta), and df*/deta ~ rho / min(eta, 1 - eta) there (Prop. 7 lower bound)
        cond = 8 * rho * 1.12e-16 / min(e, 1 - e)
        assert math.isclose(coherence_minimizer(e, rho, u), g, rel_tol=1e-9, abs_tol=cond + 1e-9 * (1 + rho))
    assert coherence_link(0.0, rho, u) == 0.5


@SET
@given(eta=st.floats(1e-3, 1 - 1e-3).filter(lambda e: abs(e - 0.5) > 1e-3), u=us)
def test_fact6_rho_to_zero_and_slope(eta, u):
    rho = 1e-7
    assert math.isclose(coherence_minimizer(eta, rho, u), u * math.copysign(1, eta - 0.5), abs_tol=1e-4)
    # df*/deta >= rho / (eta (1 - eta)), equality iff u = 0 (Prop. 7), central differences
    for rho in (0.3, 1.0, 3.0):
        h = 1e-6 * min(eta, 1 - eta)
        d = (coherence_minimizer(eta + h, rho, u) - coherence_minimizer(eta - h, rho, u)) / (2 * h)
        lower = rho / (eta * (1 - eta))
        if u == 0:
            assert math.isclose(d, lower, rel_tol=1e-6)
        else:
            assert d >= lower * (1 - 1e-6)


def test_fact6_strict_slope_for_positive_u():
    e = np.linspace(0.05, 0.95, 19)
    h = 1e-6
    for rho, u in [(1.0, 1.0), (0.5, 0.2), (2.0, 3.0)]:
        d = (coherence_minimizer(e + h, rho, u) - coherence_minimizer(e - h, rho, u)) / (2 * h)
        assert np.all(d > rho / (e * (1 - e)) * (1 + 1e-4))


@pytest.mark.parametrize("u", [0.5, 1.0, 3.0])
def test_fact7_limits_of_link(u):
    rho = 1e-4
    cases = [(u + 0.1, 1.0), (u, 2 / 3), (0.5 * u, 0.5), (-0.5 * u, 0.5), (0.0, 0.5), (-u, 1 / 3), (-u - 0.1, 0.0)]
    for f, lim in cases:
        assert abs(coherence_link(f, rho, u) - lim) < 1e-12 + 1e-3 * (lim in (2 / 3, 1 / 3))
    # exact finite-rho values at f = +-u: (1 + 1)/(2 + e^{-2u/rho} + 1) -> 2/3
    assert math.isclose(coherence_link(u, 1e-3, u), 2 / (3 + math.exp(-2 * u / 1e-3)), rel_tol=1e-14)
    for f in (-5.0, 0.3, 7.0):
        assert abs(coherence_link(f, 1e8, u) - 0.5) < 1e-7  # rho -> inf: 1/2


@SET
@given(f=st.floats(-30, 30), rho=st.floats(0.01, 100), u=us)
def test_fact8_link_below_w2(f, rho, u):
    """eta~(f) <= w2(f) = expit((u + f)/rho), equality iff u = 0 (compared in log space)."""
    lw2 = float(sp_log_expit((u + f) / rho))
    le, _ = coherence_log_link(f, rho, u)
    assert le <= lw2 + 1e-13 * (1 + abs(lw2))
    if u == 0:
        assert math.isclose(le, lw2, rel_tol=1e-13, abs_tol=1e-15)
    else:
        w1, w2 = float(sp_expit((u - f) / rho)), math.exp(lw2)
        if u / rho > 1e-6 and min(w1, w2) > 1e-6:  # the gap log(w1 + w2) is representable
            assert coherence_link(f, rho, u) < w2


@SET
@given(eta=st.floats(1e-9, 1 - 1e-9), rho=rhos, u=st.floats(0.0, 20.0))
def test_coherence_minimizer_solves_first_order_condition(eta, rho, u):
    """f* against brentq on the log-form first-order condition (SPEC 1.3), wide parameter range."""
    le, l1e = math.log(eta), math.log1p(-eta)

    def foc(f):
        return (le - l1e) + (sp_log_expit((u - f) / rho) - sp_log_expit((u + f) / rho))

    lg = abs(le - l1e)
    B = u + rho * (lg + 2)
    ref = brentq(foc, -B, B, xtol=1e-300, rtol=8.9e-16, maxiter=500)
    got = coherence_minimizer(eta, rho, u)
    assert math.isfinite(got)
    assert math.isclose(got, ref, rel_tol=1e-10, abs_tol=1e-12 * (u + rho))


@pytest.mark.parametrize("rho,u", [(1.0, 1.0), (0.3, 2.0), (2.0, 0.5)])
def test_coherence_minimizer_minimises_risk(rho, u):
    for eta in (0.03, 0.2, 0.5, 0.61, 0.9):

        def risk(f):
            return eta * ref_V(f, rho, u) + (1 - eta) * ref_V(-f, rho, u)

        res = minimize_scalar(risk, bracket=(-5, 5), tol=1e-12)
        assert math.isclose(coherence_minimizer(eta, rho, u), res.x, abs_tol=2e-6)
        for name in ("C", "L"):  # same minimiser for the C-loss and L
            loss = get_loss(name, rho=rho, u=u)
            assert loss.minimizer(eta) == coherence_minimizer(eta, rho, u)
            assert loss.risk(loss.minimizer(eta), eta) <= loss.risk(res.x, eta) + 1e-12


# --------------------------------------------------------------------------- every loss: minimiser / link
MIN_CASES = [c for c in LOSS_CASES] + [
    ("hhinge", {"delta": 1.0}),
    ("hhinge", {"delta": 3.0}),
    ("lum", {"a": 0.5, "c": 0.0}),
    ("lum", {"a": 100.0, "c": 5.0}),
]


@pytest.mark.parametrize("name,params", MIN_CASES)
def test_minimizer_minimises_pointwise_risk(name, params):
    loss = get_loss(name, **params)
    for eta in (0.02, 0.15, 0.4, 0.5, 0.55, 0.8, 0.97):
        f = loss.minimizer(eta)
        grid = np.linspace(-20, 20, 8001)
        rgrid = eta * ref_vec(name, grid, loss.params) + (1 - eta) * ref_vec(name, -grid, loss.params)
        g0 = grid[np.argmin(rgrid)]
        res = minimize_scalar(
            lambda t: risk_ref(loss, t, eta), bounds=(g0 - 0.01, g0 + 0.01), method="bounded", options={"xatol": 1e-11}
        )
        best = min(res.fun, rgrid.min())
        r = risk_ref(loss, f, eta)
        assert r <= best + 1e-9 * (1 + abs(best)), (eta, f, res.x)
        if name in ("logistic", "exp", "V", "C", "L", "sqhinge") and eta != 0.5:
            assert math.isclose(f, res.x, abs_tol=1e-4)  # strictly convex risk: unique minimiser


@pytest.mark.parametrize("name,params", MIN_CASES)
def test_inverse_link_round_trip(name, params):
    loss = get_loss(name, **params)
    if name == "hinge":
        with pytest.raises(NotImplementedError, match="no inverse link"):
            loss.inverse_link(0.3)
        assert not loss.has_inverse_link
        return
    eta = np.concatenate([np.linspace(0.01, 0.49, 25), np.linspace(0.51, 0.99, 25)])
    np.testing.assert_allclose(loss.inverse_link(loss.minimizer(eta)), eta, rtol=1e-11)
    np.testing.assert_allclose(loss.minimizer(1 - eta), -loss.minimizer(eta), rtol=1e-9, atol=1e-12)
    assert loss.inverse_link(0.0) == 0.5


def test_simple_links_closed_forms():
    f = np.linspace(-30, 30, 121)
    np.testing.assert_allclose(logistic_link(f), sp_expit(f), rtol=1e-14)
    np.testing.assert_allclose(exp_link(f), sp_expit(2 * f), rtol=1e-14)
    np.testing.assert_allclose(sqhinge_link(f), np.clip((f + 1) / 2, 0, 1))
    e = np.linspace(0.01, 0.99, 50)
    np.testing.assert_allclose(logistic_minimizer(e), np.log(e / (1 - e)), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(exp_minimizer(e), 0.5 * np.log(e / (1 - e)), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(sqhinge_minimizer(e), 2 * e - 1)
    np.testing.assert_array_equal(hinge_minimizer([0.2, 0.5, 0.7]), [-1.0, 0.0, 1.0])
    # huberized hinge with delta >= 2 is the squared-hinge link / minimiser
    np.testing.assert_allclose(hhinge_minimizer(e, 2.0), 2 * e - 1, rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(hhinge_link(f, 3.0), np.clip((f + 1) / 2, 0, 1), rtol=1e-14)


def test_hhinge_flat_region_for_small_delta():
    """delta < 1: at eta = 1/2 the risk is flat on [-(1-delta), 1-delta]; link = 1/2 there."""
    d = 0.4
    loss = get_loss("hhinge", delta=d)
    f = np.linspace(-(1 - d), 1 - d, 41)
    np.testing.assert_allclose([risk_ref(loss, t, 0.5) for t in f], 1 - d / 2, rtol=1e-14)
    np.testing.assert_array_equal(hhinge_link(f, d), 0.5)
    # just above 1/2 the minimiser jumps to ~ 1 - delta
    assert math.isclose(hhinge_minimizer(0.5 + 1e-9, d), 1 - d, abs_tol=1e-8)


# --------------------------------------------------------------------------- LUM (SPEC 7.1-7.2)
def test_lum_special_cases():
    z = np.linspace(-3, 5, 801)
    hinge = np.maximum(1 - z, 0)
    np.testing.assert_array_equal(lum_loss(z, a=3.0, c=math.inf), hinge)
    for c in (1e2, 1e3, 1e4):
        diff = np.abs(lum_loss(z, a=2.0, c=c) - hinge)
        assert diff.max() <= 1 / (1 + c) * (1 + 1e-12)  # both lie in [0, 1/(1+c)] past u0
        # at z = 1 the hinge is 0 and the LUM is (1/(1+c)) (a/(a+1))^a (a = 2: 4/9)
        assert math.isclose(lum_loss(1.0, a=2.0, c=c), (4 / 9) / (1 + c), rel_tol=1e-14)
    dwd = np.where(z < 0.5, 1 - z, 1 / (4 * np.where(z < 0.5, 1, z)))
    np.testing.assert_allclose(lum_loss(z, a=1.0, c=1.0), dwd, rtol=1e-14)
    hyb = np.where(z < 0, 1 - z, np.exp(-np.maximum(z, 0)))
    np.testing.assert_allclose(lum_loss(z, a=math.inf, c=0.0), hyb, rtol=1e-14)
    np.testing.assert_allclose(lum_loss(z, a=1e9, c=0.0), hyb, rtol=1e-7)
    c = 3.0
    hyb_c = np.where(z < c / (1 + c), 1 - z, np.exp(-((1 + c) * z - c)) / (1 + c))
    np.testing.assert_allclose(lum_loss(z, a=math.inf, c=c), hyb_c, rtol=1e-14)
    lg = np.logaddexp(0, -z)
    v = lum_loss(z, a=math.inf, c=0.0)
    assert np.all(lg <= v + 1e-15) and np.all(v <= 1 + lg)


@pytest.mark.parametrize("a,c", [(0.5, 0.0), (1.0, 1.0), (10.0, 5.0), (1000.0, 0.0), (math.inf, 2.0)])
def test_lum_continuity_at_connection_point(a, c):
    loss = get_loss("lum", a=a, c=c)
    u0 = c / (1 + c)
    eps = 1e-9
    assert math.isclose(loss.value(u0), 1 / (1 + c), rel_tol=1e-14)
    assert math.isclose(loss.value(u0 - eps), loss.value(u0 + eps), abs_tol=3e-9)
    assert loss.d1(u0) == -1.0 and loss.d1(u0 - eps) == -1.0
    assert math.isclose(loss.d1(u0 + eps), -1.0, abs_tol=1e-6 * (1 + c))


@SET
@given(
    p=st.floats(0.001, 0.999).filter(lambda p: abs(p - 0.5) > 1e-4),
    a=st.sampled_from([0.5, 1.0, 5.0, 10.0, 100.0, 1000.0, 1e4, math.inf]),
    c=st.sampled_from([0.0, 0.5, 1.0, 5.0, 100.0, 1e4]),
)
def test_lum_minimizer_and_link(p, a, c):
    f = lum_minimizer(p, a, c)
    assert math.isclose(lum_link(f, a, c), p, rel_tol=1e-10)
    assert math.isclose(lum_minimizer(1 - p, a, c), -f, rel_tol=1e-9)
    # first-order condition p V'(f) = (1 - p) V'(-f) by brentq on an independent derivative
    loss = get_loss("lum", a=a, c=c)
    u0 = c / (1 + c)

    def dref(t):  # derivative of ref_lum
        if t < u0:
            return -1.0
        if math.isinf(a):
            return -math.exp(-((1 + c) * t - c))
        return -((a / ((1 + c) * t - c + a)) ** (a + 1))

    def foc(t):
        return p * dref(t) - (1 - p) * dref(-t)

    B = abs(f) * 2 + 2
    ref = brentq(foc, -B, B, xtol=1e-14, rtol=1e-14)
    if p > 0.5:
        ref = max(ref, u0)  # flat stretch of foc (both on linear pieces) cannot contain a root for p != 1/2
    assert math.isclose(f, ref, rel_tol=1e-8, abs_tol=1e-10)
    assert loss.risk(f, p) <= loss.risk(ref, p) + 1e-13


def test_lum_flat_region_and_logistic_limit():
    for a, c in [(1.0, 1.0), (10.0, 5.0), (1000.0, 1e4)]:
        u0 = c / (1 + c)
        f = np.linspace(-u0, u0, 51)
        np.testing.assert_array_equal(lum_link(f, a, c), 0.5)
        risk = 0.5 * lum_loss(f, a, c) + 0.5 * lum_loss(-f, a, c)
        np.testing.assert_allclose(risk, 1.0, rtol=1e-14)  # constant = 1 on the flat region
        assert lum_minimizer(0.5, a, c) == 0.0
    f = np.linspace(-10, 10, 201)
    assert np.max(np.abs(lum_link(f, a=1e6, c=0.0) - sp_expit(f))) < 1e-5
    np.testing.assert_allclose(lum_link(f, a=math.inf, c=0.0), sp_expit(f), rtol=1e-14)
    # c = inf: the SVM minimiser and no probability
    assert lum_minimizer(0.7, 10.0, math.inf) == 1.0
    with pytest.raises(ValueError, match="c must be finite"):
        lum_link(0.2, 10.0, math.inf)
    with pytest.raises(NotImplementedError):
        get_loss("lum", c=math.inf).inverse_link(0.0)


# --------------------------------------------------------------------------- numerical stability
@SET
@given(z=st.floats(-1e4, 1e4), rho=st.floats(1e-3, 1e3), u=st.floats(0.0, 10.0))
def test_coherence_stable_over_wide_range(z, rho, u):
    ref = ref_V(z, rho, u)
    for name in ("V", "C", "L"):
        if name == "C" and u == 0:
            continue
        loss = get_loss(name, rho=rho, u=u)
        got = loss.value(z)
        r = REF[name](z, loss.params)
        assert math.isfinite(got) and math.isfinite(loss.d1(z)) and math.isfinite(loss.d2(z))
        assert math.isclose(got, r, rel_tol=1e-13, abs_tol=1e-300)
    assert math.isclose(coherence_V(z, rho, u), ref, rel_tol=1e-13, abs_tol=1e-300)


@SET
@given(f=st.floats(-1e4, 1e4), rho=st.floats(1e-3, 1e3), u=st.floats(0.0, 10.0))
def test_coherence_link_stable_over_wide_range(f, rho, u):
    e = coherence_link(f, rho, u)
    le, l1e = coherence_log_link(f, rho, u)
    assert 0.0 <= e <= 1.0 and math.isfinite(le) and math.isfinite(l1e)
    a, b = (LD(f) - LD(u)) / LD(rho), -(LD(u) + LD(f)) / LD(rho)
    # eq (10) literally, (1 + e^a) / (2 + e^b + e^a), with each sum taken in log space (longdouble)
    l_num1, l_num0 = np.logaddexp(LD(0), a), np.logaddexp(LD(0), b)
    l_den = np.logaddexp(np.log(LD(2)), np.logaddexp(a, b))
    assert math.isclose(e, float(np.exp(l_num1 - l_den)), rel_tol=1e-13, abs_tol=1e-300)
    assert math.isclose(le, float(l_num1 - l_den), rel_tol=1e-13, abs_tol=1e-15)
    assert math.isclose(l1e, float(l_num0 - l_den), rel_tol=1e-13, abs_tol=1e-15)


@SET
@given(z=st.floats(-1e4, 1e4), a=st.floats(0.1, 1e4), c=st.floats(0.0, 1e4))
def test_lum_stable_over_wide_range(z, a, c):
    loss = get_loss("lum", a=a, c=c)
    v, d1, d2 = loss.value(z), loss.d1(z), loss.d2(z)
    assert all(math.isfinite(t) for t in (v, d1, d2))
    ref = ref_lum(z, a, c)
    if ref > 1e-290:
        assert math.isclose(v, ref, rel_tol=1e-11)
    else:
        assert 0.0 <= v <= 1e-280
    assert -1.0 <= d1 <= 0.0 and 0.0 <= d2 <= loss.curv_bound * (1 + 1e-12)


@pytest.mark.parametrize("a,c", [(1e4, 1e4), (1e4, 0.0), (0.1, 1e4), (1.0, 0.0)])
def test_lum_minimizer_link_extreme_parameters(a, c):
    p = np.array([1e-12, 1e-6, 0.01, 0.3, 0.7, 0.99, 1 - 1e-6])
    f = lum_minimizer(p, a, c)
    assert np.all(np.isfinite(f))
    np.testing.assert_allclose(lum_link(f, a, c), p, rtol=1e-9)
    # literal Proposition 1 in longdouble: (a R - a + c)/(1+c), R = (p/(1-p))^(1/(a+1))
    P = p.astype(LD)
    R = (P / (1 - P)) ** (1 / (LD(a) + 1))
    lit = np.where(P > 0.5, (a * R - a + c) / (1 + c), -(a / R - a + c) / (1 + c)).astype(float)
    np.testing.assert_allclose(f, lit, rtol=1e-9)


def test_exp_loss_overflow_is_honest_inf():
    loss = get_loss("exp")
    assert loss.value(-700.0) == pytest.approx(math.exp(700.0), rel=1e-14)
    with np.errstate(over="ignore"):
        assert loss.value(-1e4) == math.inf  # exp(1e4) exceeds float64


def test_extreme_margins_finite_for_all_losses():
    z = np.array([-1e4, -1e3, -1.0, 0.0, 1.0, 1e3, 1e4])
    for name, params in LOSS_CASES:
        loss = get_loss(name, **params)
        for m in ("value", "d1", "d2"):
            with np.errstate(over="ignore"):
                out = getattr(loss, m)(z)
            if name == "exp":
                out = out[2:]
            assert np.all(np.isfinite(out)), (name, m)


# --------------------------------------------------------------------------- API and validation
def test_get_loss_defaults_and_repr():
    assert get_loss("C").params == {"rho": 1.0, "u": 1.0}
    assert get_loss("V").params == {"rho": 1.0, "u": 0.0}
    assert get_loss("hhinge").params == {"delta": 2.0}
    assert get_loss("lum").params == {"a": 1000.0, "c": 0.0}
    assert repr(get_loss("C")) == "MarginLoss('C', rho=1.0, u=1.0)"
    assert set(loss_names()) == set(S.LOSS_CODES)
    for n in loss_names():
        loss = get_loss(n)
        assert isinstance(loss, MarginLoss) and loss.code == S.LOSS_CODES[n]
        assert get_loss(loss) is loss
    # the solver-level dispatch is the same function (compiled separately: equal to rounding)
    l = get_loss("lum", a=5.0, c=2.0)
    assert l.value(0.9) == pytest.approx(S.loss_value(l.code, 0.9, l.p1, l.p2), rel=4e-15, abs=0.0)
    assert get_loss(l, c=3.0).params == {"a": 5.0, "c": 3.0}
    import pickle

    assert pickle.loads(pickle.dumps(l)) == l
    # array shapes are preserved; scalar in, float out
    assert get_loss("C").value(np.zeros((2, 3))).shape == (2, 3)
    assert isinstance(get_loss("C").value(0.5), float)


@pytest.mark.parametrize(
    "name,params,exc,match",
    [
        ("C", {"u": 0.0}, ValueError, "u must be > 0"),
        ("C", {"rho": 0.0}, ValueError, "rho must be > 0"),
        ("V", {"u": -1.0}, ValueError, "u must be >= 0"),
        ("V", {"rho": math.inf}, ValueError, "rho must be a finite"),
        ("L", {"rho": "1"}, TypeError, "rho must be a real number"),
        ("lum", {"a": 0.0}, ValueError, "a must be > 0"),
        ("lum", {"c": -0.5}, ValueError, "c must be >= 0"),
        ("lum", {"a": math.nan}, ValueError, "a must be"),
        ("hhinge", {"delta": 0.0}, ValueError, "delta must be > 0"),
        ("hinge", {"delta": 1.0}, TypeError, "unexpected parameter"),
        ("C", {"a": 1.0}, TypeError, "unexpected parameter"),
        ("svm", {}, ValueError, "unknown loss 'svm'"),
    ],
)
def test_get_loss_validation(name, params, exc, match):
    with pytest.raises(exc, match=match):
        get_loss(name, **params)


def test_function_validation():
    with pytest.raises(ValueError, match="eta must lie in"):
        coherence_minimizer(1.2)
    with pytest.raises(ValueError, match="p must lie in"):
        lum_minimizer([0.2, -0.1])
    with pytest.raises(ValueError, match="u must be > 0"):
        coherence_C(1.0, rho=1.0, u=0.0)
    with pytest.raises(TypeError, match="z must be array-like"):
        coherence_V("abc")
    assert coherence_minimizer(1.0) == math.inf and coherence_minimizer(0.0) == -math.inf


@pytest.mark.parametrize("u", [0.5, 1.0, 2.0])
def test_derivative_limits_rho_to_zero(u):
    """SPEC 1.2: as rho -> 0, V' and C' tend to 0 (z > u), -1/2 (z = u), -1 (z < u)."""
    rho = 1e-6
    for name in ("V", "C"):
        loss = get_loss(name, rho=rho, u=u)
        assert abs(loss.d1(u + 0.01)) < 1e-300 + 1e-12
        assert math.isclose(loss.d1(u), -0.5, rel_tol=1e-5)
        assert math.isclose(loss.d1(u - 0.01), -1.0, rel_tol=1e-5)


def test_warmup_compiles_the_kernels():
    import cohstats.losses as L
    from cohstats.losses import binary, multiclass

    L.warmup()
    assert binary._loss_loop.signatures and binary._link_loop.signatures
    assert multiclass._loss_rows.signatures and multiclass._prob_rows.signatures


def test_scalar_primitives_against_numpy():
    for t in (-1e4, -745.0, -30.0, -1.0, 0.0, 0.5, 30.0, 800.0, 1e4, -math.inf, math.inf):
        assert S.softplus(t) == pytest.approx(float(np.logaddexp(0.0, t)), rel=1e-15, abs=1e-300)
        assert S.expit(t) == pytest.approx(float(sp_expit(t)), rel=1e-15, abs=1e-300)
        assert S.log_expit(t) == pytest.approx(float(sp_log_expit(t)), rel=1e-15, abs=1e-300)
        for b in (-math.inf, -3.0, t, 2.0, math.inf):
            assert S.logaddexp(t, b) == pytest.approx(float(np.logaddexp(t, b)), rel=1e-15, abs=1e-300)
    assert S.logit(0.25) == pytest.approx(-math.log(3.0), rel=1e-15)
