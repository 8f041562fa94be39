"""Vectorised binary margin losses, inverse links and population minimisers.

Everything here is a thin numpy layer over the numba scalars of :mod:`cohstats.losses.scalar`
(two njit loops call the same scalar functions the solvers call), so each formula has exactly
one definition. Inputs are anything array-like; outputs are float64 arrays of the input's
shape, or a Python float for a scalar input (loss parameters are scalars).

The entry point is :func:`get_loss`, which returns a :class:`MarginLoss` holding the loss code
and its parameters:

==========  ==========================================  ===========================
name        loss                                        parameters (defaults)
==========  ==========================================  ===========================
"C"         C-loss ``C_{rho,u}`` [ZDJ] eq (8)            rho=1, u=1 (u > 0)
"V"         coherence function ``V_{rho,u}`` eq (7)      rho=1, u=0 (logistic loss)
"L"         normalised coherence ``L_{rho,u} = V/V(0)``  rho=1, u=1 (u >= 0)
"logistic"  ``log(1 + exp(-z))``                        --
"hinge"     ``[1 - z]_+``                               --
"hhinge"    huberized hinge                  delta=2
"sqhinge"   ``[1 - z]_+^2``                             --
"lum"       LUM ``V_{a,c}`` [LZW] eq (2)                 a=1000, c=0 (a, c may be inf)
"exp"       ``exp(-z)``                                 --
==========  ==========================================  ===========================

The default of ``"V"`` is ``u = 0`` so that ``get_loss("V")`` is the logistic loss (the RLRM of
[ZDJ]); pass ``u=1`` for the paper's C-learning loss without the C-normalisation.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
from cohstats._numba_cache import njit

from . import scalar as _s
from .scalar import (
    LOSS_C,
    LOSS_CODES,
    LOSS_EXP,
    LOSS_HHINGE,
    LOSS_HINGE,
    LOSS_L,
    LOSS_LOGIT,
    LOSS_LUM,
    LOSS_SQHINGE,
    LOSS_V,
)

__all__ = [
    "MarginLoss",
    "get_loss",
    "loss_names",
    "coherence_V",
    "coherence_C",
    "coherence_L",
    "coherence_link",
    "coherence_log_link",
    "coherence_minimizer",
    "lum_loss",
    "lum_link",
    "lum_minimizer",
    "logistic_link",
    "logistic_minimizer",
    "exp_link",
    "exp_minimizer",
    "sqhinge_link",
    "sqhinge_minimizer",
    "hinge_minimizer",
    "hhinge_link",
    "hhinge_minimizer",
]


# --------------------------------------------------------------------------- numba loops
# Two njit loops over a flat array call the scalars of ``scalar.py`` (the single definition).
# They compile (or load from the disk cache) on first use, so importing this module is cheap.
_VALUE, _D1, _D2 = 0, 1, 2
_COH_ETA, _COH_LOG_ETA, _COH_LOG_1M_ETA, _COH_FSTAR = 0, 1, 2, 3
_LUM_ETA, _LUM_FSTAR, _HH_ETA, _HH_FSTAR = 4, 5, 6, 7


@njit(cache=True, nogil=True)
def _loss_loop(kind, code, z, p1, p2, out):
    for i in range(z.shape[0]):
        if kind == 0:
            out[i] = _s.loss_value(code, z[i], p1, p2)
        elif kind == 1:
            out[i] = _s.loss_d1(code, z[i], p1, p2)
        else:
            out[i] = _s.loss_d2(code, z[i], p1, p2)
    return out


@njit(cache=True, nogil=True)
def _link_loop(kind, x, a, b, out):
    for i in range(x.shape[0]):
        t = x[i]
        if kind == 0:
            out[i] = _s.coh_eta(t, a, b)
        elif kind == 1:
            out[i] = _s.coh_log_eta(t, a, b)[0]
        elif kind == 2:
            out[i] = _s.coh_log_eta(t, a, b)[1]
        elif kind == 3:
            out[i] = _s.coh_fstar(t, a, b)
        elif kind == 4:
            out[i] = _s.lum_eta(t, a, b)
        elif kind == 5:
            out[i] = _s.lum_fstar(t, a, b)
        elif kind == 6:
            out[i] = _s.hhinge_eta(t, a)
        else:
            out[i] = _s.hhinge_fstar(t, a)
    return out


def _run_loss(kind, code, z, p1, p2):
    flat = np.ascontiguousarray(z, dtype=np.float64).ravel()
    out = np.empty_like(flat)
    _loss_loop(kind, int(code), flat, float(p1), float(p2), out)
    return out.reshape(np.shape(z))


def _run_link(kind, x, a, b=0.0):
    flat = np.ascontiguousarray(x, dtype=np.float64).ravel()
    out = np.empty_like(flat)
    _link_loop(kind, flat, float(a), float(b), out)
    return out.reshape(np.shape(x))


# --------------------------------------------------------------------------- validation helpers
def _num(name, value, *, low=None, low_open=False, allow_inf=False):
    """Validate one real scalar parameter and return it as float."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {value!r} of type {type(value).__name__}")
    v = float(value)
    if math.isnan(v) or (math.isinf(v) and not (allow_inf and v > 0)):
        allowed = "a finite number or +inf" if allow_inf else "a finite number"
        raise ValueError(f"{name} must be {allowed}, got {value!r}")
    if low is not None and (v <= low if low_open else v < low):
        rel = ">" if low_open else ">="
        raise ValueError(f"{name} must be {rel} {low:g}, got {value!r}")
    return v


def _arr(name, x):
    """Convert to a float64 array, rejecting non-numeric input with a clear message."""
    try:
        a = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be array-like of real numbers, got {type(x).__name__}") from exc
    return a


def _out(result, *inputs):
    """Return a Python float when every input was a scalar, else the array."""
    if all(np.ndim(x) == 0 for x in inputs):
        return float(result)
    return result


def _prob(name, p):
    a = _arr(name, p)
    bad = ~((a >= 0.0) & (a <= 1.0))
    if np.any(bad):
        raise ValueError(f"{name} must lie in [0, 1]; got {a[bad].ravel()[0]!r}")
    return a


def _coh_params(rho, u, *, u_positive=False):
    rho = _num("rho", rho, low=0.0, low_open=True)
    u = _num("u", u, low=0.0, low_open=u_positive)
    return rho, u


# --------------------------------------------------------------------------- coherence family
def coherence_V(z, rho=1.0, u=1.0):
    """Coherence function ``V_{rho,u}(z) = rho log(1 + exp((u - z)/rho))`` ([ZDJ] eq (7)).

    Evaluated as ``[u - z]_+ + rho log1p(exp(-|u - z|/rho))`` (exact for every rho > 0).

    Parameters
    ----------
    z : array_like
        Margins ``y f(x)``.
    rho : float, default 1
        Temperature, ``rho > 0``.
    u : float, default 1
        Margin parameter, ``u >= 0``; ``rho = 1, u = 0`` is the logistic loss.

    Returns
    -------
    ndarray or float

    Examples
    --------
    >>> round(coherence_V(0.0, rho=1.0, u=0.0), 6)  # log 2
    0.693147
    """
    rho, u = _coh_params(rho, u)
    z_ = _arr("z", z)
    return _out(_run_loss(_VALUE, LOSS_V, z_, rho, u), z)


def coherence_C(z, rho=1.0, u=1.0):
    """C-loss ``C_{rho,u}(z) = u V_{rho,u}(z) / V_{rho,u}(0)`` ([ZDJ] eq (8)), ``u > 0``.

    Examples
    --------
    >>> coherence_C(0.0, rho=0.5, u=2.0)  # C(0) = u
    2.0
    """
    rho, u = _coh_params(rho, u, u_positive=True)
    z_ = _arr("z", z)
    return _out(_run_loss(_VALUE, LOSS_C, z_, rho, u), z)


def coherence_L(z, rho=1.0, u=1.0):
    """Normalised coherence ``L_{rho,u}(z) = V_{rho,u}(z) / V_{rho,u}(0)``, ``u >= 0``.

    ``L_{rho,u}(0) = 1`` and ``C_{rho,u} = u L_{rho,u}``.

    Examples
    --------
    >>> coherence_L(0.0, rho=2.0, u=0.0)
    1.0
    """
    rho, u = _coh_params(rho, u)
    z_ = _arr("z", z)
    return _out(_run_loss(_VALUE, LOSS_L, z_, rho, u), z)


def coherence_link(f, rho=1.0, u=1.0):
    """Coherence inverse link ``eta~(f)`` of [ZDJ] eq (10).

    ``eta~(f) = w2 / (w1 + w2)`` with ``w1 = expit((u - f)/rho)``, ``w2 = expit((u + f)/rho)``;
    it is the class probability whose population minimiser (:func:`coherence_minimizer`) is f.
    ``u = 0`` gives ``expit(f / rho)``.

    Parameters
    ----------
    f : array_like
        Decision values.
    rho : float, default 1
        Temperature, ``rho > 0``.
    u : float, default 1
        ``u >= 0``.

    Returns
    -------
    ndarray or float
        ``P(Y = +1 | f)`` in [0, 1].

    Examples
    --------
    >>> coherence_link(0.0)
    0.5
    >>> round(coherence_link(1.0, rho=1e-4, u=1.0), 6)  # the rho -> 0 limit at f = u is 2/3
    0.666667
    """
    rho, u = _coh_params(rho, u)
    f_ = _arr("f", f)
    return _out(_run_link(_COH_ETA, f_, rho, u), f)


def coherence_log_link(f, rho=1.0, u=1.0):
    """``(log eta~(f), log(1 - eta~(f)))`` of the coherence link, stable in log space.

    Use this for log-likelihoods (e.g. the EKL criterion of [ZDJ] eq. 13) where ``eta~`` may round
    to 0 or 1.

    Examples
    --------
    >>> lp, lq = coherence_log_link(-800.0, rho=1.0, u=1.0)
    >>> round(lp, 3), abs(lq)
    (-799.0, 0.0)
    """
    rho, u = _coh_params(rho, u)
    f_ = _arr("f", f)
    return _out(_run_link(_COH_LOG_ETA, f_, rho, u), f), _out(_run_link(_COH_LOG_1M_ETA, f_, rho, u), f)


def coherence_minimizer(eta, rho=1.0, u=1.0):
    """Population minimiser ``f*(eta)`` of the coherence loss ([ZDJ] eq (9), in a stable form).

    Minimises ``eta V(f) + (1 - eta) V(-f)`` (the same f for the C-loss). ``f*(0) = -inf``,
    ``f*(1) = +inf``; ``u = 0`` gives ``rho logit(eta)``.

    Examples
    --------
    >>> coherence_minimizer(0.5)
    0.0
    >>> import math
    >>> math.isclose(coherence_minimizer(0.8, rho=1.0, u=0.0), math.log(4.0))
    True
    """
    rho, u = _coh_params(rho, u)
    e = _prob("eta", eta)
    return _out(_run_link(_COH_FSTAR, e, rho, u), eta)


# --------------------------------------------------------------------------- LUM
def _lum_params(a, c):
    a = _num("a", a, low=0.0, low_open=True, allow_inf=True)
    c = _num("c", c, low=0.0, allow_inf=True)
    return a, c


def lum_loss(z, a=1000.0, c=0.0):
    """LUM loss ``V_{a,c}(z)`` of [LZW] eq (2); ``a > 0``, ``c >= 0`` (inf allowed).

    ``1 - z`` for ``z < c/(1+c)``, else ``(1/(1+c)) (a / ((1+c) z - c + a))^a``;
    ``c = inf`` is the hinge, ``a = c = 1`` is DWD.

    Examples
    --------
    >>> round(lum_loss(2.0, a=1.0, c=1.0), 12)  # DWD: 1/(4z)
    0.125
    """
    a, c = _lum_params(a, c)
    z_ = _arr("z", z)
    return _out(_run_loss(_VALUE, LOSS_LUM, z_, a, c), z)


def lum_link(f, a=1000.0, c=0.0):
    """LUM inverse link ``p(f)`` of [LZW] eq (8).

    Flat at 1/2 on ``|f| <= c/(1+c)``; ``expit((a+1) log1p(((1+c)|f| - c)/a))`` (signed)
    outside. Undefined for ``c = inf`` (the hinge has no inverse link): raises ValueError.

    Examples
    --------
    >>> lum_link(0.3, a=1.0, c=1.0)  # inside the flat region |f| <= 1/2
    0.5
    """
    a, c = _lum_params(a, c)
    if math.isinf(c):
        raise ValueError("c must be finite for lum_link: c = inf is the hinge loss, which has no inverse link")
    f_ = _arr("f", f)
    return _out(_run_link(_LUM_ETA, f_, a, c), f)


def lum_minimizer(p, a=1000.0, c=0.0):
    """LUM population minimiser ``f*(p)`` ([LZW] Proposition 1); 0 at ``p = 1/2``.

    At ``p = 1/2`` every ``f`` in ``[-c/(1+c), c/(1+c)]`` is optimal and 0 is returned;
    ``c = inf`` gives ``sign(p - 1/2)``.

    Examples
    --------
    >>> import math
    >>> math.isclose(lum_minimizer(0.8, a=math.inf, c=0.0), math.log(4.0))  # logistic limit
    True
    """
    a, c = _lum_params(a, c)
    p_ = _prob("p", p)
    return _out(_run_link(_LUM_FSTAR, p_, a, c), p)


# --------------------------------------------------------------------------- simple links
def logistic_link(f):
    """Inverse link of the logistic loss: ``expit(f)``.

    Examples
    --------
    >>> logistic_link(0.0)
    0.5
    """
    f_ = _arr("f", f)
    with np.errstate(over="ignore"):
        out = np.where(f_ >= 0, 1.0 / (1.0 + np.exp(-np.abs(f_))), np.exp(-np.abs(f_)) / (1.0 + np.exp(-np.abs(f_))))
    return _out(out, f)


def logistic_minimizer(eta):
    """Population minimiser of the logistic loss: ``logit(eta)``.

    Examples
    --------
    >>> logistic_minimizer(0.5)
    0.0
    """
    e = _prob("eta", eta)
    with np.errstate(divide="ignore"):
        out = np.log(e) - np.log1p(-e)
    return _out(out, eta)


def exp_link(f):
    """Inverse link of the exponential loss: ``expit(2 f)``.

    Examples
    --------
    >>> round(exp_link(0.5 * math.log(4.0)), 12)
    0.8
    """
    f_ = _arr("f", f)
    return _out(logistic_link(2.0 * f_), f)


def exp_minimizer(eta):
    """Population minimiser of the exponential loss: ``logit(eta) / 2``.

    Examples
    --------
    >>> exp_minimizer(0.5)
    0.0
    """
    e = _prob("eta", eta)
    return _out(0.5 * logistic_minimizer(e), eta)


def sqhinge_link(f):
    """Inverse link of the squared hinge: ``clip((f + 1)/2, 0, 1)``.

    Examples
    --------
    >>> sqhinge_link(0.6)
    0.8
    """
    f_ = _arr("f", f)
    return _out(np.clip(0.5 * (f_ + 1.0), 0.0, 1.0), f)


def sqhinge_minimizer(eta):
    """Population minimiser of the squared hinge: ``2 eta - 1``.

    Examples
    --------
    >>> sqhinge_minimizer(0.75)
    0.5
    """
    e = _prob("eta", eta)
    return _out(2.0 * e - 1.0, eta)


def hinge_minimizer(eta):
    """Population minimiser of the hinge: ``sign(2 eta - 1)`` (0 at ``eta = 1/2``, where any
    value in [-1, 1] is optimal). The hinge has no inverse link.

    Examples
    --------
    >>> hinge_minimizer(0.7)
    1.0
    """
    e = _prob("eta", eta)
    return _out(np.sign(2.0 * e - 1.0), eta)


def _delta(delta):
    return _num("delta", delta, low=0.0, low_open=True)


def hhinge_link(f, delta=2.0):
    """Inverse link of the huberized hinge ``phi_delta`` (derived for cohstats).

    With ``t = |f|``: 1 for ``t >= 1``; ``(1 + t)/2`` for ``t <= delta - 1``; 1/2 for
    ``t <= 1 - delta`` (flat region when ``delta < 1``); ``delta/(delta + 1 - t)`` otherwise;
    mirrored (``1 - .``) for ``f < 0``. For the default ``delta = 2`` it equals the squared-hinge
    link ``clip((f + 1)/2, 0, 1)``.

    Examples
    --------
    >>> hhinge_link(0.8, delta=0.5)
    0.7142857142857143
    """
    d = _delta(delta)
    f_ = _arr("f", f)
    return _out(_run_link(_HH_ETA, f_, d), f)


def hhinge_minimizer(eta, delta=2.0):
    """Population minimiser of the huberized hinge: ``2 eta - 1`` if ``|2 eta - 1| <= delta - 1``,
    else ``sign(2 eta - 1) (1 - delta (1 - e)/e)`` with ``e = max(eta, 1 - eta)``.

    Derivation: ``g(t) = -phi'(t) = clip((1 - t)/delta, 0, 1)`` is nonincreasing and the risk's
    derivative ``(1 - eta) g(-f) - eta g(f)`` is piecewise linear; solving it on each piece gives
    the two branches (0 at ``eta = 1/2``).

    Examples
    --------
    >>> hhinge_minimizer(0.8, delta=2.0)
    0.6000000000000001
    """
    d = _delta(delta)
    e = _prob("eta", eta)
    return _out(_run_link(_HH_FSTAR, e, d), eta)


# --------------------------------------------------------------------------- MarginLoss
_DEFAULTS = {
    "C": {"rho": 1.0, "u": 1.0},
    "V": {"rho": 1.0, "u": 0.0},
    "L": {"rho": 1.0, "u": 1.0},
    "logistic": {},
    "hinge": {},
    "hhinge": {"delta": 2.0},
    "sqhinge": {},
    "lum": {"a": 1000.0, "c": 0.0},
    "exp": {},
}


def loss_names():
    """Names accepted by :func:`get_loss`.

    Examples
    --------
    >>> "C" in loss_names()
    True
    """
    return tuple(_DEFAULTS)


class MarginLoss:
    """A binary margin loss ``phi(z)``, ``z = y f(x)``, with its parameters.

    Built by :func:`get_loss`. Solvers read ``code``, ``p1``, ``p2`` (the integer code and the
    two parameters of :mod:`cohstats.losses.scalar`); users call the vectorised methods.

    Attributes
    ----------
    name : str
    code : int
    params : dict
        Named parameters (e.g. ``{"rho": 1.0, "u": 1.0}``).
    p1, p2 : float
        The parameters in the order the scalar kernels take them (0 if unused).

    Examples
    --------
    >>> loss = get_loss("C", rho=1.0, u=1.0)
    >>> loss
    MarginLoss('C', rho=1.0, u=1.0)
    >>> loss.value(0.0)
    1.0
    """

    __slots__ = ("name", "code", "params", "p1", "p2")

    def __init__(self, name, code, params, p1=0.0, p2=0.0):
        self.name = name
        self.code = int(code)
        self.params = dict(params)
        self.p1 = float(p1)
        self.p2 = float(p2)

    def __repr__(self):
        args = "".join(f", {k}={v!r}" for k, v in self.params.items())
        return f"MarginLoss({self.name!r}{args})"

    def __eq__(self, other):
        return isinstance(other, MarginLoss) and (self.name, self.params) == (other.name, other.params)

    def __hash__(self):
        return hash((self.name, tuple(sorted(self.params.items()))))

    def __getstate__(self):
        return (self.name, self.code, self.params, self.p1, self.p2)

    def __setstate__(self, state):
        self.name, self.code, self.params, self.p1, self.p2 = state

    # ---- values
    def value(self, z):
        """Loss ``phi(z)`` at margins z (array-like)."""
        z_ = _arr("z", z)
        return _out(_run_loss(_VALUE, self.code, z_, self.p1, self.p2), z)

    __call__ = value

    def d1(self, z):
        """First derivative ``phi'(z)`` (a subgradient where phi has a kink)."""
        z_ = _arr("z", z)
        return _out(_run_loss(_D1, self.code, z_, self.p1, self.p2), z)

    def d2(self, z):
        """Second derivative ``phi''(z)`` (one-sided at kinks)."""
        z_ = _arr("z", z)
        return _out(_run_loss(_D2, self.code, z_, self.p1, self.p2), z)

    @property
    def curv_bound(self):
        """Global bound L with ``0 <= phi'' <= L`` (inf if phi' is not Lipschitz)."""
        return float(_s.loss_curv_bound(self.code, self.p1, self.p2))

    @property
    def has_inverse_link(self):
        """Whether class probabilities can be read off the decision value."""
        return not (self.code == LOSS_HINGE or (self.code == LOSS_LUM and math.isinf(self.p2)))

    # ---- links
    def inverse_link(self, f):
        """Class probability ``P(Y = +1 | f)`` whose population minimiser is f.

        Raises
        ------
        NotImplementedError
            For the hinge (and LUM with ``c = inf``), which have no inverse link.
        """
        c = self.code
        if c in (LOSS_C, LOSS_V, LOSS_L):
            return coherence_link(f, rho=self.p1, u=self.p2)
        if c == LOSS_LOGIT:
            return logistic_link(f)
        if c == LOSS_EXP:
            return exp_link(f)
        if c == LOSS_SQHINGE:
            return sqhinge_link(f)
        if c == LOSS_HHINGE:
            return hhinge_link(f, delta=self.p1)
        if c == LOSS_LUM and not math.isinf(self.p2):
            return lum_link(f, a=self.p1, c=self.p2)
        raise NotImplementedError(
            f"{self!r} has no inverse link: its population minimiser sign(2 eta - 1) does not "
            "determine eta; use a post-processing probability method instead"
        )

    def minimizer(self, eta):
        """Population minimiser ``argmin_f eta phi(f) + (1 - eta) phi(-f)``."""
        c = self.code
        if c in (LOSS_C, LOSS_V, LOSS_L):
            return coherence_minimizer(eta, rho=self.p1, u=self.p2)
        if c == LOSS_LOGIT:
            return logistic_minimizer(eta)
        if c == LOSS_EXP:
            return exp_minimizer(eta)
        if c == LOSS_SQHINGE:
            return sqhinge_minimizer(eta)
        if c == LOSS_HHINGE:
            return hhinge_minimizer(eta, delta=self.p1)
        if c == LOSS_LUM:
            return lum_minimizer(eta, a=self.p1, c=self.p2)
        return hinge_minimizer(eta)

    def risk(self, f, eta):
        """Pointwise (conditional) risk ``eta phi(f) + (1 - eta) phi(-f)``."""
        e = _prob("eta", eta)
        f_ = _arr("f", f)
        out = e * _run_loss(_VALUE, self.code, f_, self.p1, self.p2) + (1.0 - e) * _run_loss(
            _VALUE, self.code, -f_, self.p1, self.p2
        )
        return _out(out, f, eta)


def get_loss(name, **params):
    """Build a :class:`MarginLoss` by name with validated parameters.

    Parameters
    ----------
    name : str or MarginLoss
        One of ``"C"``, ``"V"``, ``"L"``, ``"logistic"``, ``"hinge"``, ``"hhinge"``,
        ``"sqhinge"``, ``"lum"``, ``"exp"`` (a MarginLoss is returned unchanged when no
        parameters are given).
    **params
        ``rho`` (> 0) and ``u`` (>= 0; > 0 for ``"C"``) for the coherence losses; ``delta`` (> 0)
        for ``"hhinge"``; ``a`` (> 0) and ``c`` (>= 0), either may be ``inf``, for ``"lum"``.
        Defaults: see the module table (``"V"`` defaults to ``u = 0``, the logistic loss).

    Returns
    -------
    MarginLoss

    Examples
    --------
    >>> get_loss("lum", c=1.0)
    MarginLoss('lum', a=1000.0, c=1.0)
    >>> get_loss("hhinge").curv_bound
    0.5
    """
    if isinstance(name, MarginLoss):
        if params:
            return get_loss(name.name, **{**name.params, **params})
        return name
    if not isinstance(name, str):
        raise TypeError(f"loss name must be a string, got {type(name).__name__}")
    if name not in _DEFAULTS:
        raise ValueError(f"unknown loss {name!r}; choose one of {', '.join(map(repr, _DEFAULTS))}")
    allowed = _DEFAULTS[name]
    unknown = sorted(set(params) - set(allowed))
    if unknown:
        what = ", ".join(allowed) if allowed else "no parameters"
        raise TypeError(f"loss {name!r} got unexpected parameter(s) {', '.join(unknown)}; it takes {what}")
    p = {**allowed, **params}
    code = LOSS_CODES[name]
    if name in ("C", "V", "L"):
        rho, u = _coh_params(p["rho"], p["u"], u_positive=(name == "C"))
        return MarginLoss(name, code, {"rho": rho, "u": u}, rho, u)
    if name == "hhinge":
        d = _delta(p["delta"])
        return MarginLoss(name, code, {"delta": d}, d, 0.0)
    if name == "lum":
        a, c = _lum_params(p["a"], p["c"])
        return MarginLoss(name, code, {"a": a, "c": c}, a, c)
    return MarginLoss(name, code, {}, 0.0, 0.0)
