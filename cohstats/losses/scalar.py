"""Scalar margin losses, jittable by numba: the one definition of every binary margin loss.

Every function here is a plain ``@njit(cache=True)`` function of a scalar margin ``z = y f``
and two loss parameters ``p1, p2`` (see the table below); the few-line primitives are inlined
into their jitted callers (``inline="always"``: one compilation less each, the same code).
Solvers select a loss by the integer code and call :func:`loss_value`, :func:`loss_d1`,
:func:`loss_d2` and :func:`loss_curv_bound`;
the vectorised numpy API in :mod:`cohstats.losses` loops over these same functions, so there is
exactly one definition of each formula.

==========  =====================  ======  ======  =============================================
code        loss                   p1      p2      notes
==========  =====================  ======  ======  =============================================
LOSS_C      C-loss C_{rho,u}       rho     u       u > 0; u * V / V(0)
LOSS_V      coherence V_{rho,u}    rho     u       u >= 0; rho = 1, u = 0 is the logistic loss
LOSS_HHINGE huberized hinge        delta   --      once differentiable, curvature bound 1/delta
LOSS_SQHINGE squared hinge          --      --      [1 - z]_+^2
LOSS_LUM    LUM V_{a,c}            a       c       a, c may be +inf
LOSS_HINGE  hinge                  --      --      [1 - z]_+ (not differentiable at 1)
LOSS_EXP    exponential            --      --      exp(-z)
LOSS_LOGIT  logistic               --      --      log(1 + exp(-z)); same as LOSS_V(1, 0)
LOSS_L      normalised L_{rho,u}   rho     u       u >= 0; V / V(0), so C = u * L
LOSS_MCOH   multicategory          T       s       [ZJLY]'s loss times a constant scale s (the
            coherence (K classes)                  row functions are in :mod:`.multiclass`);
                                                   only :func:`loss_curv_bound` is defined here
LOSS_ALUM   LUM on angle-based     a       c       f in R^{K-1}, margins <f, W_k>; the pairwise-
            margins (K classes)                    comparison loss of V_{a,c} or Zhang & Liu's
                                                   (2014) V(<f, W_y>) (row functions in
                                                   :mod:`.angle`); bound as LOSS_LUM
==========  =====================  ======  ======  =============================================

These codes are the one loss-code namespace of the coordinate-descent solvers: the binary codes
select a scalar margin loss, ``LOSS_MCOH`` and ``LOSS_ALUM`` select grouped (K-class) problems.

All formulas are written in stable forms: they stay finite for rho in [1e-3, 1e3],
|z| up to 1e4 and a, c up to 1e4 (and infinity for LUM). The one exception is the exponential
loss, whose true value exp(-z) exceeds the float64 range for z < -709.78; it returns +inf there.

Subgradient conventions where a loss is not differentiable: the hinge (and LUM with c = inf)
uses -1 for z < 1 and 0 for z >= 1; at the kinks of the huberized hinge, squared hinge and LUM
the second derivative is the value of one of the two adjacent pieces (a one-sided derivative).

Besides the losses, this module holds the scalar inverse links and population minimisers
(:func:`coh_fstar`, :func:`coh_log_eta`, :func:`lum_fstar`, :func:`lum_eta`,
:func:`hhinge_fstar`, :func:`hhinge_eta`) so that solvers and the vectorised API share them.
"""

from __future__ import annotations

import math

from cohstats._numba_cache import internal, njit

LOSS_C = 0
LOSS_V = 1
LOSS_HHINGE = 2
LOSS_SQHINGE = 3
LOSS_LUM = 4
LOSS_HINGE = 5
LOSS_EXP = 6
LOSS_LOGIT = 7
LOSS_L = 8
LOSS_MCOH = 9  # multicategory coherence loss (not a binary margin loss; not in LOSS_CODES)
LOSS_ALUM = 10  # angle-based multicategory LUM (grouped problem; not in LOSS_CODES)

LOSS_CODES = {
    "C": LOSS_C,
    "V": LOSS_V,
    "hhinge": LOSS_HHINGE,
    "sqhinge": LOSS_SQHINGE,
    "lum": LOSS_LUM,
    "hinge": LOSS_HINGE,
    "exp": LOSS_EXP,
    "logistic": LOSS_LOGIT,
    "L": LOSS_L,
}


# --------------------------------------------------------------------------- primitives
@njit(cache=True, inline="always")
def softplus(t):
    """log(1 + exp(t)) without overflow."""
    if t > 0.0:
        return t + math.log1p(math.exp(-t))
    return math.log1p(math.exp(t))


@njit(cache=True, inline="always")
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
    """log(exp(a) + exp(b)) without overflow (exact for infinite arguments)."""
    if a == b:  # also covers a = b = +-inf, where a - b would be nan
        return a + math.log(2.0)
    m = a if a > b else b
    return m + math.log1p(math.exp(-abs(a - b)))


# --------------------------------------------------------------------------- coherence
@njit(cache=True, inline="always")
def coh_V(z, rho, u):
    """Coherence function V_{rho,u}(z) = rho log(1 + exp((u - z)/rho)), stable form."""
    d = u - z
    return max(d, 0.0) + rho * math.log1p(math.exp(-abs(d) / rho))


@njit(cache=True, inline="always")
def coh_V0(rho, u):
    """V_{rho,u}(0) = u + rho log1p(exp(-u/rho))."""
    return u + rho * math.log1p(math.exp(-u / rho))


@njit(cache=True, inline="always")
def coh_q(z, rho, u):
    """Maximum-entropy weight q(z) = expit((u - z)/rho) = -V'(z)."""
    return expit((u - z) / rho)


@njit(cache=True, inline="always")
def coh_qq(z, rho, u):
    """q (1 - q) computed stably as expit(t) expit(-t)."""
    t = (u - z) / rho
    return expit(t) * expit(-t)


@njit(cache=True, inline="always")
def closs_kappa(rho, u):
    """kappa = u / (rho log(1 + e^{u/rho})) so that C = kappa V."""
    return u / coh_V0(rho, u)


# --------------------------------------------------------------------------- LUM
@njit(cache=True, inline="always")
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


@njit(cache=True, inline="always")
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


@njit(cache=True, inline="always")
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
@njit(cache=True, inline="always")
def coh_scale(code, p1, p2):
    """``(rho, u, k)`` with ``phi = k V_{rho,u}`` for the coherence family (C, V, L, logistic)."""
    if code == LOSS_LOGIT:
        return 1.0, 0.0, 1.0
    if code == LOSS_V:
        return p1, p2, 1.0
    k = 1.0 / coh_V0(p1, p2)
    return p1, p2, (p2 * k if code == LOSS_C else k)


@njit(cache=True)
def loss_value(code, z, p1, p2):
    """Value of loss ``code`` at margin z."""
    if code == LOSS_C or code == LOSS_V or code == LOSS_L or code == LOSS_LOGIT:
        rho, u, k = coh_scale(code, p1, p2)
        return k * coh_V(z, rho, u)
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
    return math.nan


@internal
def loss_d1(code, z, p1, p2):
    """First derivative d phi / dz at margin z (hinge and LUM with c = inf: -1 for z < 1, 0 for z >= 1)."""
    if code == LOSS_C or code == LOSS_V or code == LOSS_L or code == LOSS_LOGIT:
        rho, u, k = coh_scale(code, p1, p2)
        return -k * coh_q(z, rho, u)
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
    return math.nan


@internal
def loss_d2(code, z, p1, p2):
    """Second derivative d^2 phi / dz^2 at z (one-sided where the loss is only C^1)."""
    if code == LOSS_C or code == LOSS_V or code == LOSS_L or code == LOSS_LOGIT:
        rho, u, k = coh_scale(code, p1, p2)
        return k * coh_qq(z, rho, u) / rho
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
    elif code == LOSS_LUM or code == LOSS_ALUM:
        # ALUM: the Hessian of V(<f, W>) in f is V'' W W' <= V'' I (unit vertices)
        if p2 == math.inf:
            return math.inf
        if p1 == math.inf:
            return 1.0 + p2
        return (p1 + 1.0) * (1.0 + p2) / p1
    elif code == LOSS_LOGIT:
        return 0.25
    elif code == LOSS_L:
        return 1.0 / (4.0 * p1 * coh_V0(p1, p2))
    elif code == LOSS_MCOH:
        # Boehning's bound: the Hessian of s C(g, c) in g is s (diag(beta) - beta beta')/T,
        # whose largest eigenvalue is at most s/(2T)
        return p2 / (2.0 * p1)
    return math.inf


@njit(cache=True, nogil=True)
def loss_eval_sum(code, p1, p2, y, w, f, W, r, floor_c):
    """Weighted curvatures, negative gradients and mean loss at the fit ``f``, in one loop.

    For every observation with ``w_i > 0`` (``z_i = y_i f_i``):
    ``W_i = max(w_i phi''(z_i), w_i floor_c)``, ``r_i = -w_i y_i phi'(z_i)``; returns
    ``(1/n) sum_i w_i phi(z_i)``. Observations with ``w_i = 0`` get ``W_i = r_i = 0``.
    The coherence family (C, V, L, logistic: ``phi = kappa V_{rho,u}``, see :func:`coh_scale`)
    shares one exp and one log1p per observation: with ``t = (u - z)/rho``,
    ``phi = kappa rho softplus(t)``, ``-phi' = kappa expit(t)`` and
    ``phi'' = kappa expit(t) expit(-t) / rho``.
    """
    n = y.shape[0]
    tot = 0.0
    if code == LOSS_C or code == LOSS_V or code == LOSS_L or code == LOSS_LOGIT:
        rho, u, kap = coh_scale(code, p1, p2)
        vs = kap * rho  # loss = vs * softplus(t)
        for i in range(n):
            wi = w[i]
            if wi > 0.0:
                t = (u - y[i] * f[i]) / rho
                e = math.exp(-abs(t))
                if t >= 0.0:
                    q = 1.0 / (1.0 + e)
                    sp = t + math.log1p(e)
                else:
                    q = e / (1.0 + e)
                    sp = math.log1p(e)
                qq = e / ((1.0 + e) * (1.0 + e))
                W[i] = max(wi * kap * qq / rho, wi * floor_c)
                r[i] = wi * y[i] * kap * q
                tot += wi * vs * sp
            else:
                W[i] = 0.0
                r[i] = 0.0
        return tot / n
    for i in range(n):
        if w[i] > 0.0:
            z = y[i] * f[i]
            W[i] = max(w[i] * loss_d2(code, z, p1, p2), w[i] * floor_c)
            r[i] = -w[i] * y[i] * loss_d1(code, z, p1, p2)
            tot += w[i] * loss_value(code, z, p1, p2)
        else:
            W[i] = 0.0
            r[i] = 0.0
    return tot / n


# --------------------------------------------------------------------------- links and minimisers
# Population minimiser f*(eta) = argmin_f eta phi(f) + (1 - eta) phi(-f) and the inverse link
# eta(f) with eta(f*(eta)) = eta. Arguments outside [0, 1] give nan (the vectorised API raises).


@njit(cache=True)
def logit(p):
    """log(p / (1 - p)) = log(p) - log1p(-p); +-inf at p = 1, 0."""
    if p == 0.0:
        return -math.inf
    if p == 1.0:
        return math.inf
    return math.log(p) - math.log1p(-p)


@njit(cache=True)
def coh_log_eta(f, rho, u):
    """(log eta~(f), log(1 - eta~(f))) of the coherence inverse link, eq (10), in a stable form.

    eta~ = w2 / (w1 + w2) with w1 = expit((u - f)/rho), w2 = expit((u + f)/rho), in log space.
    """
    l1 = log_expit((u - f) / rho)
    l2 = log_expit((u + f) / rho)
    den = logaddexp(l1, l2)
    return l2 - den, l1 - den


@njit(cache=True)
def coh_eta(f, rho, u):
    """Coherence inverse link eta~(f; rho, u) (eq (10)), accurate to relative precision."""
    w1 = expit((u - f) / rho)
    w2 = expit((u + f) / rho)
    return w2 / (w1 + w2)


@njit(cache=True)
def coh_fstar(eta, rho, u):
    """Population minimiser f*(eta) of the coherence loss (eq (9)) in a stable form.

    With s = |2 eta - 1| and r = sqrt(s^2 + 4 eta (1 - eta) exp(-2u/rho)), one finds
    f* = u + rho (log(s + r) - log(2(1 - eta))) for eta >= 1/2 and
    f* = -u + rho (log(2 eta) - log(s + r)) for eta < 1/2. Writing log(s + r) = -u/rho + D with
    x = s e^{u/rho} and D = log(x + sqrt(x^2 + 4 eta (1 - eta))) (evaluated in log space from
    log x = log s + u/rho) removes the cancellation of u: f* = rho (D - log(2(1 - eta))) or
    rho (log(2 eta) - D). Hence f*(1/2) = 0 and f*(1 - eta) = -f*(eta) exactly.
    """
    if not (eta >= 0.0 and eta <= 1.0):
        return math.nan
    if eta == 1.0:
        return math.inf
    if eta == 0.0:
        return -math.inf
    s = abs(2.0 * eta - 1.0)
    log_c = math.log(4.0 * eta * (1.0 - eta))  # = log(1 - s^2)
    if s > 0.0:
        lx = math.log(s) + u / rho
        D = logaddexp(lx, 0.5 * logaddexp(2.0 * lx, log_c))
    else:
        D = 0.5 * log_c
    if eta >= 0.5:
        return rho * (D - math.log(2.0 * (1.0 - eta)))
    return rho * (math.log(2.0 * eta) - D)


@njit(cache=True)
def lum_eta(f, a, c):
    """LUM inverse link p(f) (eq (8)): 1/2 on |f| <= c/(1+c), stable elsewhere.

    Not defined for c = inf (hinge); returns nan there.
    """
    if c == math.inf or f != f:
        return math.nan
    s = (1.0 + c) * abs(f) - c  # > 0 iff |f| > c/(1+c)
    if s <= 0.0:
        return 0.5
    if a == math.inf:
        t = s
    else:
        t = (a + 1.0) * math.log1p(s / a)
    if f > 0.0:
        return expit(t)
    return expit(-t)


@njit(cache=True)
def lum_fstar(p, a, c):
    """LUM population minimiser f*(p) (Proposition 1); 0 at p = 1/2.

    f* = sign(l) (a expm1(|l|/(a+1)) + c)/(1+c) with l = logit(p) (the stable form of
    (a R - a + c)/(1+c), R = (p/(1-p))^(1/(a+1))); a = inf gives (|l| + c)/(1+c) in sign(l);
    c = inf gives sign(p - 1/2) (the hinge).
    """
    if not (p >= 0.0 and p <= 1.0):
        return math.nan
    if p == 0.5:
        return 0.0
    sg = 1.0 if p > 0.5 else -1.0
    if c == math.inf:
        return sg
    al = abs(logit(p))
    if al == math.inf:
        return sg * math.inf
    if a == math.inf:
        m = al
    else:
        m = a * math.expm1(al / (a + 1.0))
    return sg * (m + c) / (1.0 + c)


@njit(cache=True)
def hhinge_fstar(eta, delta):
    """Population minimiser of the huberized hinge phi_delta (derived for cohstats).

    The first-order condition eta g(f) = (1 - eta) g(-f), g(t) = -phi'(t) = clip((1-t)/delta, 0, 1),
    gives for eta >= 1/2: f* = 2 eta - 1 if eta <= delta/2, else f* = 1 - delta (1 - eta)/eta
    (mirror image for eta < 1/2). For delta >= 2 this is the squared-hinge minimiser 2 eta - 1.
    For delta < 1 the minimiser jumps at eta = 1/2 (any f in [-(1-delta), 1-delta] is optimal
    there; 0 is returned).
    """
    if not (eta >= 0.0 and eta <= 1.0):
        return math.nan
    if eta == 0.5:
        return 0.0
    e = eta if eta > 0.5 else 1.0 - eta
    sg = 1.0 if eta > 0.5 else -1.0
    if e <= 0.5 * delta:
        f = 2.0 * e - 1.0
    else:
        f = 1.0 - delta * (1.0 - e) / e
    return sg * f


@njit(cache=True)
def hhinge_eta(f, delta):
    """Inverse link of the huberized hinge: the eta whose minimiser is f (see hhinge_fstar).

    For t = |f|: 1 if t >= 1; (1 + t)/2 if t <= delta - 1; 1/2 if t <= 1 - delta (flat region,
    delta < 1); delta / (delta + 1 - t) otherwise; mirrored for f < 0.
    """
    if f != f:
        return math.nan
    t = abs(f)
    if t >= 1.0:
        e, em = 1.0, 0.0
    elif t <= delta - 1.0:
        e, em = 0.5 * (1.0 + t), 0.5 * (1.0 - t)
    elif t <= 1.0 - delta:
        e, em = 0.5, 0.5
    else:
        e, em = delta / (delta + 1.0 - t), (1.0 - t) / (delta + 1.0 - t)
    if f >= 0.0:
        return e
    return em
