"""Simulation generators of the five papers, with their true class-probability functions.

Every generator ``make_<name>(n, random_state=None, ..., return_prob=False)`` returns a
DataFrame with numeric feature columns and the response column ``y``: binary examples use the
integer labels ``-1``/``+1``, multiclass examples the integers ``0..K-1``. With
``return_prob=True`` it returns ``(df, p)`` where ``p`` is the true ``P(y = +1 | x)`` (binary,
shape ``(n,)``) or the ``(n, K)`` matrix of class probabilities. The matching ``prob_<name>(X)``
evaluates the true probability function at any feature matrix (array or DataFrame with the
generator's feature columns), and :func:`bayes_error` gives the Bayes error (closed form or
numerical quadrature; the values quoted by the papers are in :data:`PUBLISHED_BAYES_ERROR`).

The generators live in one module per source -- :mod:`~cohstats.datasets.sim_wsl` ([WSL]
Examples 1-2), :mod:`~cohstats.datasets.sim_lum` ([LZW] Examples 5.1-5.5),
:mod:`~cohstats.datasets.sim_benchmarks` (waveform, g241c, g241d) and
:mod:`~cohstats.datasets.sim_lamsvm` ([RH]) -- and are all importable from here and from
:mod:`cohstats.datasets`.

The references: [WSL] Wang, Shen & Liu (2008), [ZDJ] Zhang, Dai & Jordan (2012),
[LZW] Liu, Zhang & Wu (2011), [ZJLY] Zhang, Jordan, Li & Yeung (2009), [RH] Rodriguez-Lujan &
Huerta (2015), and Chapelle, Schölkopf & Zien (2006) for g241c/g241d.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import integrate, stats

from . import sim_benchmarks, sim_lamsvm, sim_lum, sim_wsl
from .sim_benchmarks import (  # noqa: F401  (the constants and _waveform_bases stay importable from here)
    G241_DIM,
    G241C_DIRECTION,
    G241D_DIRECTIONS,
    _waveform_bases,
    make_g241c,
    make_g241d,
    make_waveform,
    prob_g241c,
    prob_g241d,
    prob_waveform,
)
from .sim_lamsvm import RH_SINGLE_POINT_PROBS, _rh_probs, make_lamsvm_single_point, prob_lamsvm_single_point
from .sim_lum import (
    LUM51_M,
    LUM55_MU_NEG,
    LUM55_MU_POS,
    LUM55_PRIOR,
    make_lum51,
    make_lum52,
    make_lum53,
    make_lum54,
    make_lum55,
    prob_lum51,
    prob_lum52,
    prob_lum53,
    prob_lum54,
    prob_lum55,
)
from .sim_wsl import _WSL2_SD, make_wsl1, make_wsl2, prob_wsl1, prob_wsl2

__all__ = [
    *sim_wsl.__all__,
    *sim_lum.__all__,
    *sim_benchmarks.__all__,
    *sim_lamsvm.__all__,
    "bayes_error",
    "PUBLISHED_BAYES_ERROR",
    "GENERATORS",
]

#: Bayes errors quoted by the papers (for comparison with :func:`bayes_error`).
PUBLISHED_BAYES_ERROR = {
    "wsl1": 0.2,
    "wsl2": 0.059,
    "lum51": 0.1349,
    "lum52": 0.0875,
    "lum53": {0.2: 0.450, 0.6: 0.358, 0.7: 0.338, 1.5: 0.215},
    "lum54": 0.22,
    "lum55": 0.210,
}


# ----------------------------------------------------------------------------- Bayes errors
def _be_lum51(m=LUM51_M):
    # Bayes error = 0.5 * int min(f+, f-) dx; integrate over (q, r) = rotated coordinates:
    # with q = (x1+x2)/sqrt2, densities factor into N(r;0,1) times 1-D densities in q.
    a = m * math.sqrt(2.0)
    fneg = lambda q: stats.norm.pdf(q)
    fpos = lambda q: 0.5 * (stats.norm.pdf(q - a) + stats.norm.pdf(q + a))
    val, _ = integrate.quad(lambda q: min(fneg(q), fpos(q)), -12, 12, limit=400, points=[-1, 0, 1])
    return 0.5 * val


def bayes_error(name: str, **params) -> float:
    """Bayes error of a generator (closed form or numerical quadrature), given its parameters.

    Parameters
    ----------
    name : str
        Generator name without ``make_``: ``"wsl1"``, ``"wsl2"``, ``"lum51"``, ``"lum52"``,
        ``"lum53"`` (``s=``), ``"lum54"``, ``"lum55"``, ``"g241c"``, ``"g241d"``, ``"waveform"``,
        ``"lamsvm_single_point"``.
    **params
        The generator's parameters (e.g. ``s=1.5`` for ``"lum53"``).

    Examples
    --------
    >>> round(bayes_error("lum52"), 4), round(bayes_error("lum53", s=0.2), 3)
    (0.0875, 0.45)
    """
    if name == "wsl1":
        return float(params.get("flip", 0.2))
    if name == "wsl2":
        sd = params.get("sd", _WSL2_SD)
        v, _ = integrate.quad(lambda t: stats.norm.cdf(-(math.sin(t) + 1) / sd), 0, 2 * math.pi, limit=400)
        return v / (2 * math.pi)
    if name == "lum51":
        return _be_lum51(params.get("m", LUM51_M))
    if name == "lum52":
        return 0.2 * 0.4375
    if name == "lum53":
        s = float(params.get("s", 0.6))
        if s == 0:
            return 0.5
        s = abs(s)
        return float(1.0 - (np.logaddexp(0.0, 2 * s) - math.log(2.0)) / (2 * s))
    if name == "lum54":
        return float(stats.norm.cdf(-stats.norm.ppf(0.78)))
    if name == "lum55":
        delta = float(np.linalg.norm(LUM55_MU_POS - LUM55_MU_NEG))
        k = math.log(LUM55_PRIOR / (1 - LUM55_PRIOR))
        e1 = stats.norm.cdf(-(delta**2 / 2 + k) / delta)
        e0 = stats.norm.cdf((-(delta**2) / 2 + k) / delta)
        return float(LUM55_PRIOR * e1 + (1 - LUM55_PRIOR) * e0)
    if name == "g241c":
        return float(stats.norm.cdf(-1.25))
    if name in ("g241d", "waveform"):
        # no closed form: Monte Carlo with a fixed seed, E[1 - max_k P(k|x)] (se ~ 5e-4)
        rng = np.random.default_rng(12345)
        tot = 0.0
        for _ in range(10):
            if name == "g241d":
                _, p = make_g241d(20_000, random_state=rng, return_prob=True)
                tot += float(np.minimum(p, 1 - p).mean())
            else:
                _, P = make_waveform(20_000, random_state=rng, return_prob=True)
                tot += float((1 - P.max(axis=1)).mean())
        return tot / 10
    if name == "lamsvm_single_point":
        p = _rh_probs(params.get("probs", RH_SINGLE_POINT_PROBS), params.get("renormalize", True))
        return float(1 - p.max())
    raise ValueError(f"unknown generator name {name!r}; available: {sorted(GENERATORS)}")


#: name -> (make function, prob function)
GENERATORS = {
    "wsl1": (make_wsl1, prob_wsl1),
    "wsl2": (make_wsl2, prob_wsl2),
    "lum51": (make_lum51, prob_lum51),
    "lum52": (make_lum52, prob_lum52),
    "lum53": (make_lum53, prob_lum53),
    "lum54": (make_lum54, prob_lum54),
    "lum55": (make_lum55, prob_lum55),
    "waveform": (make_waveform, prob_waveform),
    "g241c": (make_g241c, prob_g241c),
    "g241d": (make_g241d, prob_g241d),
    "lamsvm_single_point": (make_lamsvm_single_point, prob_lamsvm_single_point),
}

for _name, (_make, _prob) in GENERATORS.items():
    _make.bayes_error = (lambda _n: lambda **kw: bayes_error(_n, **kw))(_name)
    _make.prob = _prob
