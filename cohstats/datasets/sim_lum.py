"""[LZW] Examples 5.1-5.5: the simulations of the LUM paper, with their true class probabilities.

[LZW] Liu, Zhang & Wu (2011), Hard or soft classification? Large-margin unified machines,
JASA 106(493). Where the available text of the paper lacks a parameter, the generator's
docstring states our reconstruction. Re-exported by :mod:`cohstats.datasets.simulations`.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import special, stats

from ._simbase import _as_X, _check_n, _cols, _finish, _frame, _labels_from_p, _rng


__all__ = [
    "make_lum51",
    "prob_lum51",
    "make_lum52",
    "prob_lum52",
    "make_lum53",
    "prob_lum53",
    "make_lum54",
    "prob_lum54",
    "make_lum55",
    "prob_lum55",
]


# ----------------------------------------------------------------------------- [LZW] 5.1
# The extraction of [LZW] lost the means, covariances and weights of Example 5.1.
# Our choice (documented, not the paper's): equal class priors; class -1 ~ N((0, 0), I);
# class +1 ~ 0.5 N((m, m), I) + 0.5 N((-m, -m), I), with m chosen so that the Bayes error equals
# the published 0.1349 (m = LUM51_M below, found by root finding on the 2-D quadrature).
LUM51_M = 1.832749


def _lum51_logit(A, m):
    q = A[:, 0] + A[:, 1]
    # log f+(x) - log f-(x) = log(0.5 e^{m q - m^2} + 0.5 e^{-m q - m^2})
    return np.logaddexp(m * q, -m * q) - np.log(2.0) - m * m


def prob_lum51(X, m: float = LUM51_M) -> np.ndarray:
    """True ``P(y=+1|x)`` of our reconstruction of [LZW] Example 5.1 (see :func:`make_lum51`).

    Examples
    --------
    >>> float(prob_lum51([[0.0, 0.0]])[0]) < 0.5
    True
    """
    A = _as_X(X, ["x1", "x2"], "prob_lum51")
    return special.expit(_lum51_logit(A, m))


def make_lum51(n: int = 100, random_state=None, m: float = LUM51_M, basis: bool = False, return_prob: bool = False):
    """[LZW] Example 5.1 (reconstructed): class +1 a two-normal mixture, class -1 one normal.

    The paper's mixture parameters are missing from the available text. We use
    equal priors, ``x | y=-1 ~ N((0,0), I)`` and ``x | y=+1 ~ 0.5 N((m,m), I) + 0.5 N((-m,-m), I)``
    with ``m = 1.832749``, which gives the published Bayes error 0.1349 (``bayes_error("lum51")``
    = 0.13490). The Bayes boundary ``|x1 + x2| = c`` is a pair of lines, which the quadratic
    basis ``(x1, x2, x1^2, x2^2, x1 x2)`` can represent up to the
    ``log cosh`` curvature. With ``basis=True`` the columns ``x1sq, x2sq, x1x2`` are added.

    Examples
    --------
    >>> df = make_lum51(200, random_state=0, basis=True)
    >>> list(df.columns)
    ['x1', 'x2', 'x1sq', 'x2sq', 'x1x2', 'y']
    """
    n = _check_n(n)
    rng = _rng(random_state)
    y = np.where(rng.random(n) < 0.5, 1, -1)
    centre = np.where(rng.random(n) < 0.5, m, -m) * (y == 1)
    X = rng.standard_normal((n, 2)) + centre[:, None]
    p = prob_lum51(X, m)
    cols = ["x1", "x2"]
    if basis:
        X = np.column_stack([X, X[:, 0] ** 2, X[:, 1] ** 2, X[:, 0] * X[:, 1]])
        cols += ["x1sq", "x2sq", "x1x2"]
    return _finish(_frame(X, cols, y), p, return_prob)


# ----------------------------------------------------------------------------- [LZW] 5.2
def prob_lum52(X) -> np.ndarray:
    """True ``P(y=+1|x)`` of [LZW] Example 5.2: 1/0 outside the band ``|x1+x2| < 0.5``, 0.8/0.2 in it.

    Examples
    --------
    >>> prob_lum52([[0.5, 0.5], [0.1, 0.0], [-0.1, 0.0], [-0.5, -0.5]])
    array([1. , 0.8, 0.2, 0. ])
    """
    A = _as_X(X, ["x1", "x2"], "prob_lum52")
    s = A[:, 0] + A[:, 1]
    sign_pos = s >= 0
    inside = np.abs(s) < 0.5
    return np.where(inside, np.where(sign_pos, 0.8, 0.2), np.where(sign_pos, 1.0, 0.0))


def make_lum52(n: int = 100, random_state=None, return_prob: bool = False):
    """[LZW] Example 5.2: ``x ~ U[-1,1]^2``; ``y = sign(x1+x2)``, flipped w.p. 0.2 inside the band.

    ``y = sign(x1 + x2)`` if ``|x1 + x2| >= 0.5``; otherwise ``sign(x1 + x2)`` with probability 0.8
    and its opposite with probability 0.2 (``sign(0) = +1``). Bayes error ``0.2 * 0.4375 = 0.0875``.

    Examples
    --------
    >>> make_lum52(5, random_state=0).shape
    (5, 3)
    """
    n = _check_n(n)
    rng = _rng(random_state)
    X = rng.uniform(-1, 1, (n, 2))
    p = prob_lum52(X)
    return _finish(_frame(X, ["x1", "x2"], _labels_from_p(p, rng)), p, return_prob)


# ----------------------------------------------------------------------------- [LZW] 5.3
def prob_lum53(X, s: float = 0.6) -> np.ndarray:
    """True ``P(y=+1|x) = expit(s (x1 + x2))`` of [LZW] Example 5.3.

    Examples
    --------
    >>> float(prob_lum53([[1.0, 1.0]], s=0.5)[0]) == float(special.expit(1.0))
    True
    """
    A = _as_X(X, ["x1", "x2"], "prob_lum53")
    return special.expit(s * (A[:, 0] + A[:, 1]))


def make_lum53(n: int = 100, random_state=None, s: float = 0.6, return_prob: bool = False):
    """[LZW] Example 5.3: uniform on the diamond ``|x1| + |x2| <= 2``, ``P(y=1|x) = expit(s(x1+x2))``.

    The diamond is sampled exactly: ``u = x1 + x2`` and ``v = x1 - x2`` are independent
    ``U[-2, 2]``. Bayes error ``1 - (log(1 + e^{2s}) - log 2) / (2 s)``: 0.450, 0.358, 0.338,
    0.215 for ``s = 0.2, 0.6, 0.7, 1.5``.

    Examples
    --------
    >>> df = make_lum53(1000, random_state=0, s=1.5)
    >>> bool((df.x1.abs() + df.x2.abs()).max() <= 2)
    True
    """
    n = _check_n(n)
    if not np.isfinite(s):
        raise ValueError(f"s must be a finite number; got {s!r}")
    rng = _rng(random_state)
    u = rng.uniform(-2, 2, n)
    v = rng.uniform(-2, 2, n)
    X = np.column_stack([(u + v) / 2, (u - v) / 2])
    p = prob_lum53(X, s)
    return _finish(_frame(X, ["x1", "x2"], _labels_from_p(p, rng)), p, return_prob)


# ----------------------------------------------------------------------------- [LZW] 5.4
def _lum54_mu(d):
    return stats.norm.ppf(0.78) / math.sqrt(d)


def _infer_d(X) -> int:
    """Dimension of a feature matrix; for a DataFrame, the number of ``x<j>`` columns."""
    if isinstance(X, pd.DataFrame):
        return sum(1 for c in X.columns if isinstance(c, str) and c[:1] == "x" and c[1:].isdigit())
    return np.shape(X)[1]


def prob_lum54(X, d: int | None = None) -> np.ndarray:
    """True ``P(y=+1|x) = expit(2 mu sum(x))`` of [LZW] Example 5.4 (``mu = Phi^-1(0.78)/sqrt(d)``).

    Examples
    --------
    >>> prob_lum54(np.zeros((2, 10)))
    array([0.5, 0.5])
    """
    d = _infer_d(X) if d is None else d
    A = _as_X(X, _cols(d), "prob_lum54")
    return special.expit(2 * _lum54_mu(d) * A.sum(axis=1))


def make_lum54(n: int = 100, random_state=None, d: int = 10, return_prob: bool = False):
    """[LZW] Example 5.4: ``N(mu 1_d, I_d)`` vs ``N(-mu 1_d, I_d)``, equal priors, Bayes error 0.22.

    ``mu = Phi^{-1}(0.78) / sqrt(d) = 0.77219 / sqrt(d)`` (our reconstruction), so the Bayes
    error ``Phi(-mu sqrt(d)) = 0.22`` for every ``d`` (paper: ``d`` in {10, 50, 100, 200, 400}).

    Examples
    --------
    >>> make_lum54(4, random_state=0, d=50).shape
    (4, 51)
    """
    n = _check_n(n)
    d = _check_n(d, "d")
    rng = _rng(random_state)
    y = np.where(rng.random(n) < 0.5, 1, -1)
    X = rng.standard_normal((n, d)) + (y * _lum54_mu(d))[:, None]
    return _finish(_frame(X, _cols(d), y), prob_lum54(X, d), return_prob)


# ----------------------------------------------------------------------------- [LZW] 5.5
LUM55_MU_POS = np.array([0.7, 0.2, -0.7, 0.6, 0.3, 0.5, 0.5, -0.6, -0.6, 0.3])
LUM55_MU_NEG = np.array([0.2, 0.7, -0.7, 0.1, 0.8, -0.2, 1.3, -0.2, -0.8, 0.6])
LUM55_PRIOR = 0.4


def _lum55_means(d):
    if d < 10:
        raise ValueError(f"d must be >= 10 for Example 5.5 (ten informative coordinates); got {d!r}")
    m1 = np.zeros(d)
    m0 = np.zeros(d)
    m1[:10] = LUM55_MU_POS
    m0[:10] = LUM55_MU_NEG
    return m1, m0


def prob_lum55(X, d: int | None = None) -> np.ndarray:
    """True ``P(y=+1|x)`` of [LZW] Example 5.5 (two normals, prior 0.4 for ``y = +1``).

    Examples
    --------
    >>> round(float(prob_lum55(np.zeros((1, 15)))[0]), 4)
    0.6046
    """
    d = _infer_d(X) if d is None else d
    m1, m0 = _lum55_means(d)
    A = _as_X(X, _cols(d), "prob_lum55")
    eta = math.log(LUM55_PRIOR / (1 - LUM55_PRIOR)) + A @ (m1 - m0) - 0.5 * (m1 @ m1 - m0 @ m0)
    return special.expit(eta)


def make_lum55(n: int = 100, random_state=None, d: int = 15, return_prob: bool = False):
    """[LZW] Example 5.5: ``P(y=1) = 0.4``, ``x | y ~ N(mu_y, I_d)``, ten informative coordinates.

    ``mu_1 = (0.7, 0.2, -0.7, 0.6, 0.3, 0.5, 0.5, -0.6, -0.6, 0.3, 0, ...)``,
    ``mu_-1 = (0.2, 0.7, -0.7, 0.1, 0.8, -0.2, 1.3, -0.2, -0.8, 0.6, 0, ...)``; Bayes error 0.2107
    (paper: 0.210). Paper: ``d`` in {15, 50, 100, 200, 400}.

    Examples
    --------
    >>> make_lum55(3, random_state=0, d=20).shape
    (3, 21)
    """
    n = _check_n(n)
    d = _check_n(d, "d")
    m1, m0 = _lum55_means(d)
    rng = _rng(random_state)
    y = np.where(rng.random(n) < LUM55_PRIOR, 1, -1)
    X = rng.standard_normal((n, d)) + np.where((y == 1)[:, None], m1, m0)
    return _finish(_frame(X, _cols(d), y), prob_lum55(X, d), return_prob)
