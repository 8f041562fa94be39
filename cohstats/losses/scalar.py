"""Scalar margin losses, jittable by numba: the one definition of every binary margin loss.

Every function here is a plain ``@njit(cache=True)`` function of a scalar margin ``z = y f``
and two loss parameters ``p1, p2`` (see the table below). Solvers select a loss by the integer
code and call :func:`loss_value`, :func:`loss_d1`, :func:`loss_d2` and :func:`loss_curv_bound`;
the vectorised numpy API in :mod:`cohstats.losses` loops over these same functions, so there is
exactly one definition of each formula.

==========  =====================  ======  ======  =============================================
code        loss                   p1      p2      notes (SPEC.md section)
==========  =====================  ======  ======  =============================================
LOSS_C      C-loss C_{rho,u}       rho     u       u > 0 (1.1); u * V / V(0)
LOSS_V      coherence V_{rho,u}    rho     u       u >= 0; rho = 1, u = 0 is the logistic loss
LOSS_HHINGE huberized hinge        delta   --      once differentiable, curvature bound 1/delta
LOSS_SQHINGE squared hinge          --      --      [1 - z]_+^2
LOSS_LUM    LUM V_{a,c}            a       c       a, c may be +inf (7.1)
LOSS_HINGE  hinge                  --      --      [1 - z]_+ (not differentiable at 1)
LOSS_EXP    exponential            --      --      exp(-z)
LOSS_LOGIT  logistic               --      --      log(1 + exp(-z)); same as LOSS_V(1, 0)
==========  =====================  ======  ======  =============================================

All formulas are the stable forms of SPEC.md: they stay finite for rho in [1e-3, 1e3],
|z| up to 1e4 and a, c up to 1e4 (and infinity for LUM).
"""
from __future__ import annotations

import math

from numba import njit

LOSS_C = 0
LOSS_V = 1
LOSS_HHINGE = 2
LOSS_SQHINGE = 3
LOSS_LUM = 4
LOSS_HINGE = 5
LOSS_EXP = 6
LOSS_LOGIT = 7

LOSS_CODES = {
    "C": LOSS_C,
    "V": LOSS_V,
    "hhinge": LOSS_HHINGE,
    "sqhinge": LOSS_SQHINGE,
    "lum": LOSS_LUM,
    "hinge": LOSS_HINGE,
    "exp": LOSS_EXP,
    "logistic": LOSS_LOGIT,
}


# --------------------------------------------------------------------------- primitives
@njit(cache=True)
def softplus(t):
    """log(1 + exp(t)) without overflow."""
    if t > 0.0:
        return t + math.log1p(math.exp(-t))
    return math.log1p(math.exp(t))


@njit(cache=True)
def expit(t):
    """1 / (1 + exp(-t)) without overflow."""
    if t >= 0.0:
        return 1.0 / (1.0 + math.exp(-t))
    e = math.exp(t)
    return e / (1.0 + e)


@njit(cache=True)
def log_expit(t):
    """log(expit(t)) = -softplus(-t)."""
    return -softplus(-t)


@njit(cache=True)
def logaddexp(a, b):
    if a == -math.inf and b == -math.inf:
        return -math.inf
    m = a if a > b else b
    return m + math.log1p(math.exp(-abs(a - b)))


# --------------------------------------------------------------------------- coherence
@njit(cache=True)
def coh_V(z, rho, u):
    """Coherence function V_{rho,u}(z) = rho log(1 + exp((u - z)/rho)), stable form."""
    d = u - z
    return max(d, 0.0) + rho * math.log1p(math.exp(-abs(d) / rho))


@njit(cache=True)
def coh_V0(rho, u):
    """V_{rho,u}(0) = u + rho log1p(exp(-u/rho))."""
    return u + rho * math.log1p(math.exp(-u / rho))


@njit(cache=True)
def coh_q(z, rho, u):
    """Maximum-entropy weight q(z) = expit((u - z)/rho) = -V'(z)."""
    return expit((u - z) / rho)


@njit(cache=True)
def coh_qq(z, rho, u):
    """q (1 - q) computed stably as expit(t) expit(-t)."""
    t = (u - z) / rho
    return expit(t) * expit(-t)


@njit(cache=True)
def closs_kappa(rho, u):
    """kappa = u / (rho log(1 + e^{u/rho})) so that C = kappa V."""
    return u / coh_V0(rho, u)


# --------------------------------------------------------------------------- LUM
@njit(cache=True)
def lum_value(z, a, c):
    if c == math.inf:
        return max(1.0 - z, 0.0)
    u0 = c / (1.0 + c)
    if z < u0:
        return 1.0 - z
    if a == math.inf:
        return math.exp(-math.log1p(c) - ((1.0 + c) * z - c))
    t = ((1.0 + c) * z - c) / a
    return math.exp(-math.log1p(c) - a * math.log1p(t))


@njit(cache=True)
def lum_d1(z, a, c):
    if c == math.inf:
        return -1.0 if z < 1.0 else 0.0
    u0 = c / (1.0 + c)
    if z < u0:
        return -1.0
    if a == math.inf:
        return -math.exp(-((1.0 + c) * z - c))
    t = ((1.0 + c) * z - c) / a
    return -math.exp(-(a + 1.0) * math.log1p(t))


@njit(cache=True)
def lum_d2(z, a, c):
    if c == math.inf:
        return 0.0
    u0 = c / (1.0 + c)
    if z < u0:
        return 0.0
    if a == math.inf:
        return (1.0 + c) * math.exp(-((1.0 + c) * z - c))
    t = ((1.0 + c) * z - c) / a
    return ((a + 1.0) * (1.0 + c) / a) * math.exp(-(a + 2.0) * math.log1p(t))


# --------------------------------------------------------------------------- dispatch
@njit(cache=True)
def loss_value(code, z, p1, p2):
    """Value of loss ``code`` at margin z."""
    if code == LOSS_C:
        return p2 * coh_V(z, p1, p2) / coh_V0(p1, p2)
    elif code == LOSS_V:
        return coh_V(z, p1, p2)
    elif code == LOSS_HHINGE:
        if z > 1.0:
            return 0.0
        elif z > 1.0 - p1:
            return (1.0 - z) * (1.0 - z) / (2.0 * p1)
        return 1.0 - z - 0.5 * p1
    elif code == LOSS_SQHINGE:
        d = max(1.0 - z, 0.0)
        return d * d
    elif code == LOSS_LUM:
        return lum_value(z, p1, p2)
    elif code == LOSS_HINGE:
        return max(1.0 - z, 0.0)
    elif code == LOSS_EXP:
        return math.exp(-z)
    elif code == LOSS_LOGIT:
        return softplus(-z)
    return math.nan


@njit(cache=True)
def loss_d1(code, z, p1, p2):
    """First derivative d phi / dz at margin z (for the hinge: the left derivative at 1)."""
    if code == LOSS_C:
        return -closs_kappa(p1, p2) * coh_q(z, p1, p2)
    elif code == LOSS_V:
        return -coh_q(z, p1, p2)
    elif code == LOSS_HHINGE:
        if z > 1.0:
            return 0.0
        elif z > 1.0 - p1:
            return -(1.0 - z) / p1
        return -1.0
    elif code == LOSS_SQHINGE:
        return -2.0 * max(1.0 - z, 0.0)
    elif code == LOSS_LUM:
        return lum_d1(z, p1, p2)
    elif code == LOSS_HINGE:
        return -1.0 if z < 1.0 else 0.0
    elif code == LOSS_EXP:
        return -math.exp(-z)
    elif code == LOSS_LOGIT:
        return -expit(-z)
    return math.nan


@njit(cache=True)
def loss_d2(code, z, p1, p2):
    """Second derivative d^2 phi / dz^2 at z (one-sided where the loss is only C^1)."""
    if code == LOSS_C:
        return closs_kappa(p1, p2) * coh_qq(z, p1, p2) / p1
    elif code == LOSS_V:
        return coh_qq(z, p1, p2) / p1
    elif code == LOSS_HHINGE:
        if z > 1.0:
            return 0.0
        elif z > 1.0 - p1:
            return 1.0 / p1
        return 0.0
    elif code == LOSS_SQHINGE:
        return 2.0 if z < 1.0 else 0.0
    elif code == LOSS_LUM:
        return lum_d2(z, p1, p2)
    elif code == LOSS_HINGE:
        return 0.0
    elif code == LOSS_EXP:
        return math.exp(-z)
    elif code == LOSS_LOGIT:
        return expit(z) * expit(-z)
    return math.nan


@njit(cache=True)
def loss_curv_bound(code, p1, p2):
    """Global bound L with 0 <= phi'' <= L (Lipschitz constant of phi'); inf if none."""
    if code == LOSS_C:
        return closs_kappa(p1, p2) / (4.0 * p1)
    elif code == LOSS_V:
        return 1.0 / (4.0 * p1)
    elif code == LOSS_HHINGE:
        return 1.0 / p1
    elif code == LOSS_SQHINGE:
        return 2.0
    elif code == LOSS_LUM:
        if p2 == math.inf:
            return math.inf
        if p1 == math.inf:
            return 1.0 + p2
        return (p1 + 1.0) * (1.0 + p2) / p1
    elif code == LOSS_LOGIT:
        return 0.25
    return math.inf
