"""Simulation generators of the five papers, with their true class-probability functions.

Every generator ``make_<name>(n, random_state=None, ..., return_prob=False)`` returns a
DataFrame with numeric feature columns and the response column ``y``: binary examples use the
integer labels ``-1``/``+1``, multiclass examples the integers ``0..K-1``. With
``return_prob=True`` it returns ``(df, p)`` where ``p`` is the true ``P(y = +1 | x)`` (binary,
shape ``(n,)``) or the ``(n, K)`` matrix of class probabilities. The matching ``prob_<name>(X)``
evaluates the true probability function at any feature matrix (array or DataFrame with the
generator's feature columns), and :func:`bayes_error` gives the Bayes error (closed form or
numerical quadrature; the values quoted by the papers are in :data:`PUBLISHED_BAYES_ERROR`).

The references: [WSL] Wang, Shen & Liu (2008), [ZDJ] Zhang, Dai & Jordan (2012),
[LZW] Liu, Zhang & Wu (2011), [ZJLY] Zhang, Jordan, Li & Yeung (2009), [RH] Rodriguez-Lujan &
Huerta (2015), and Chapelle, Schölkopf & Zien (2006) for g241c/g241d.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import pandas as pd
from scipy import integrate, special, stats

__all__ = [
    "make_wsl1",
    "prob_wsl1",
    "make_wsl2",
    "prob_wsl2",
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
    "make_waveform",
    "prob_waveform",
    "make_g241c",
    "prob_g241c",
    "make_g241d",
    "prob_g241d",
    "make_lamsvm_single_point",
    "prob_lamsvm_single_point",
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


# ----------------------------------------------------------------------------- helpers
def _rng(random_state) -> np.random.Generator:
    if isinstance(random_state, np.random.Generator):
        return random_state
    if random_state is None or isinstance(random_state, (int, np.integer)):
        return np.random.default_rng(random_state)
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(0, 2**31 - 1))
    raise TypeError(
        f"random_state must be None, an int, a numpy Generator or RandomState; got {type(random_state).__name__}"
    )


def _check_n(n, name="n", minimum=1) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}; got {n!r}")
    return int(n)


def _as_X(X, columns: Sequence[str], fn: str) -> np.ndarray:
    """Feature matrix from an array or a DataFrame holding the generator's columns."""
    if isinstance(X, pd.DataFrame):
        missing = [c for c in columns if c not in X.columns]
        if missing:
            raise ValueError(f"{fn}: X lacks column(s) {missing}; expected {list(columns)}")
        A = X[list(columns)].to_numpy(dtype=float)
    else:
        A = np.asarray(X, dtype=float)
        if A.ndim == 1 and len(columns) == 1:
            A = A[:, None]
        if A.ndim != 2 or A.shape[1] != len(columns):
            raise ValueError(
                f"{fn}: X must have shape (n, {len(columns)}) (columns {list(columns)[:5]}"
                f"{'...' if len(columns) > 5 else ''}); got shape {A.shape}"
            )
    return A


def _frame(X: np.ndarray, columns, y) -> pd.DataFrame:
    df = pd.DataFrame(X, columns=list(columns))
    df["y"] = np.asarray(y, dtype=np.int64)
    return df


def _labels_from_p(p: np.ndarray, rng) -> np.ndarray:
    return np.where(rng.random(p.shape[0]) < p, 1, -1)


def _finish(df, p, return_prob):
    return (df, p) if return_prob else df


# ----------------------------------------------------------------------------- [WSL] Ex. 1
def prob_wsl1(X) -> np.ndarray:
    """True ``P(y=+1|x)`` of [WSL] Example 1 / [ZDJ] Data 1: 0.8 if ``x1 >= 0`` else 0.2.

    Examples
    --------
    >>> prob_wsl1([[0.5, 0.0], [-0.1, 0.3]])
    array([0.8, 0.2])
    """
    A = _as_X(X, ["x1", "x2"], "prob_wsl1")
    return np.where(A[:, 0] >= 0, 0.8, 0.2)


def make_wsl1(n: int = 1000, random_state=None, flip: float = 0.2, exact_flip: bool = True, return_prob: bool = False):
    """[WSL] Example 1 = [ZDJ] Data 1: uniform on the unit disk, ``y = sign(x1)``, 20 % flipped.

    Points are uniform on the unit disk; ``y = +1`` iff ``x1 >= 0``; then the labels of exactly
    ``round(flip * n)`` randomly chosen points are flipped (our reading of the papers; with
    ``exact_flip=False`` each label flips independently with probability ``flip``). The true
    probability used in metrics is ``p(x) = 1 - flip`` for ``x1 >= 0`` and ``flip`` otherwise;
    Bayes error ``flip`` (0.2).

    Parameters
    ----------
    n : int
        Sample size (papers: 1000 = 100 training + 900 test).
    random_state : None, int or numpy Generator
    flip : float in [0, 0.5)
        Flip fraction.
    exact_flip : bool
        Flip exactly ``round(flip * n)`` labels (default) or flip independently.
    return_prob : bool
        Also return the true ``P(y=+1|x)``.

    Returns
    -------
    DataFrame with columns ``x1, x2, y`` (``y`` in {-1, +1}), or ``(df, p)``.

    Examples
    --------
    >>> df = make_wsl1(1000, random_state=0)
    >>> int((df.y != np.where(df.x1 >= 0, 1, -1)).sum())
    200
    """
    n = _check_n(n)
    if not 0 <= flip < 0.5:
        raise ValueError(f"flip must lie in [0, 0.5); got {flip!r}")
    rng = _rng(random_state)
    r = np.sqrt(rng.random(n))
    t = rng.uniform(0, 2 * np.pi, n)
    X = np.column_stack([r * np.cos(t), r * np.sin(t)])
    y = np.where(X[:, 0] >= 0, 1, -1)
    if exact_flip:
        idx = rng.choice(n, size=int(round(flip * n)), replace=False)
        y[idx] = -y[idx]
    else:
        y = np.where(rng.random(n) < flip, -y, y)
    p = np.where(X[:, 0] >= 0, 1 - flip, flip)
    return _finish(_frame(X, ["x1", "x2"], y), p, return_prob)


# ----------------------------------------------------------------------------- [WSL] Ex. 2
_WSL2_SD = 0.1


def prob_wsl2(X, sd: float = _WSL2_SD) -> np.ndarray:
    """True ``P(y=+1|x)`` of [WSL] Example 2 / [ZDJ] Data 2.

    With ``s = sin(x1) + 1`` the two class densities of ``x2`` are ``N(+-s, sd^2)``, so
    ``p(x) = expit(2 x2 s / sd^2)`` (the log-space form of the paper's ratio of normal densities).

    Examples
    --------
    >>> prob_wsl2([[np.pi / 2, 2.0], [np.pi / 2, -2.0]]).round(6)
    array([1., 0.])
    """
    A = _as_X(X, ["x1", "x2"], "prob_wsl2")
    s = np.sin(A[:, 0]) + 1.0
    return special.expit(2.0 * A[:, 1] * s / sd**2)


def make_wsl2(n: int = 1000, random_state=None, sd: float = _WSL2_SD, return_prob: bool = False):
    """[WSL] Example 2 = [ZDJ] Data 2: ``x2 = y (sin x1 + 1 + Z)``.

    ``y = +-1`` with probability 1/2, ``x1 ~ U[0, 2 pi]``, ``Z ~ N(0, sd^2)`` with ``sd = 0.1``.
    Bayes error ``E[Phi(-(sin x1 + 1)/sd)] = 0.0590`` (quadrature; [ZDJ] quotes 0.059).

    Examples
    --------
    >>> df, p = make_wsl2(500, random_state=1, return_prob=True)
    >>> list(df.columns), p.shape
    (['x1', 'x2', 'y'], (500,))
    """
    n = _check_n(n)
    rng = _rng(random_state)
    y = np.where(rng.random(n) < 0.5, 1, -1)
    x1 = rng.uniform(0, 2 * np.pi, n)
    x2 = y * (np.sin(x1) + 1 + rng.normal(0, sd, n))
    X = np.column_stack([x1, x2])
    return _finish(_frame(X, ["x1", "x2"], y), prob_wsl2(X, sd), return_prob)


# ----------------------------------------------------------------------------- [LZW] 5.1
# The extraction of [LZW] lost the means, covariances and weights of Example 5.1 .
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

    The paper's mixture parameters are missing from the available text . We use
    equal priors, ``x | y=-1 ~ N((0,0), I)`` and ``x | y=+1 ~ 0.5 N((m,m), I) + 0.5 N((-m,-m), I)``
    with ``m = 1.832749``, which gives the published Bayes error 0.1349 (``bayes_error("lum51")``
    = 0.13490). The Bayes boundary ``|x1 + x2| = c`` is a pair of lines, which the quadratic
    basis ``(x1, x2, x1^2, x2^2, x1 x2)`` of decision D26 can represent up to the
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


def _cols(d):
    return [f"x{j + 1}" for j in range(d)]


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


# ----------------------------------------------------------------------------- waveform
def _waveform_bases():
    m = np.arange(1, 22)
    h1 = np.maximum(6 - np.abs(m - 11), 0).astype(float)
    h2 = np.maximum(6 - np.abs(m - 15), 0).astype(float)  # h1 shifted right by 4
    h3 = np.maximum(6 - np.abs(m - 7), 0).astype(float)  # h1 shifted left by 4
    # class k mixes (a_k, b_k): x = u a + (1 - u) b + eps, u ~ U(0, 1)
    return [(h1, h2), (h1, h3), (h2, h3)]


def _log_ndtr_diff(hi, lo):
    """log(Phi(hi) - Phi(lo)) for hi > lo, stable in both tails."""
    hi = np.asarray(hi, float)
    lo = np.asarray(lo, float)
    out = np.empty(np.broadcast(hi, lo).shape)
    right = lo > 0
    # right tail: Phi(hi) - Phi(lo) = Phi(-lo) - Phi(-hi)
    a = special.log_ndtr(-lo[right])
    b = special.log_ndtr(-hi[right])
    out[right] = a + np.log1p(-np.exp(b - a))
    a = special.log_ndtr(hi[~right])
    b = special.log_ndtr(lo[~right])
    out[~right] = a + np.log1p(-np.exp(b - a))
    return out


def _waveform_loglik(A, noise_sd=1.0):
    """log p(x | k) up to a common constant, integrating the mixing weight u ~ U(0,1) exactly."""
    out = np.empty((A.shape[0], 3))
    for k, (a, b) in enumerate(_waveform_bases()):
        dlt = (a - b) / noise_sd
        r = (A - b) / noise_sd
        alpha = dlt @ dlt
        beta = r @ dlt
        mhat = beta / alpha
        sa = math.sqrt(alpha)
        out[:, k] = (
            -0.5 * np.einsum("ij,ij->i", r, r)
            + beta**2 / (2 * alpha)
            - 0.5 * math.log(alpha)
            + _log_ndtr_diff(sa * (1 - mhat), -sa * mhat)
        )
    return out


def prob_waveform(X, noise: bool = True) -> np.ndarray:
    """True class probabilities (n, 3) of Breiman's waveform data (with unit Gaussian noise).

    ``p(x | k) = int_0^1 N(x; u a_k + (1-u) b_k, I) du`` is a one-dimensional Gaussian integral
    in ``u`` with a closed form through the normal CDF (computed in log space); the classes are
    equiprobable, so ``P(k | x)`` is the normalised likelihood.

    Examples
    --------
    >>> P = prob_waveform(np.zeros((1, 21)))
    >>> P.shape, bool(np.isclose(P.sum(), 1.0))
    ((1, 3), True)
    """
    if not noise:
        raise ValueError("prob_waveform: noise=False has degenerate class densities; use noise=True")
    A = _as_X(X, _cols(21), "prob_waveform")
    L = _waveform_loglik(A)
    L -= L.max(axis=1, keepdims=True)
    P = np.exp(L)
    return P / P.sum(axis=1, keepdims=True)


def make_waveform(n: int = 300, random_state=None, noise: bool = True, return_prob: bool = False):
    """Breiman's waveform data (CART book, 1984): 21 features, 3 equiprobable classes.

    With the triangular waves ``h1(m) = max(6 - |m - 11|, 0)``, ``h2(m) = h1(m - 4)``,
    ``h3(m) = h1(m + 4)`` (``m = 1..21``) and ``u ~ U(0, 1)``: class 0 is ``u h1 + (1-u) h2``,
    class 1 is ``u h1 + (1-u) h3``, class 2 is ``u h2 + (1-u) h3``, each plus ``N(0, I_21)``
    noise (``noise=False`` drops it). The true class probabilities (``return_prob=True``,
    :func:`prob_waveform`) integrate ``u`` out exactly; Bayes error 0.133 (Monte Carlo; Breiman quotes
    14 %). [ZJLY] uses 300 training and 4700 test points.

    Examples
    --------
    >>> df, P = make_waveform(10, random_state=0, return_prob=True)
    >>> df.shape, P.shape, sorted(df.y.unique()) == sorted(set(df.y))
    ((10, 22), (10, 3), True)
    """
    n = _check_n(n)
    if return_prob and not noise:
        raise ValueError("return_prob=True needs noise=True (without noise the class densities are degenerate)")
    rng = _rng(random_state)
    y = rng.integers(0, 3, n)
    u = rng.random(n)[:, None]
    bases = _waveform_bases()
    a = np.stack([bases[k][0] for k in y])
    b = np.stack([bases[k][1] for k in y])
    X = u * a + (1 - u) * b
    if noise:
        X = X + rng.standard_normal((n, 21))
    df = _frame(X, _cols(21), y)
    return _finish(df, prob_waveform(X) if return_prob else None, return_prob)


# ----------------------------------------------------------------------------- g241c / g241d
G241_DIM = 241


def _unit(seed):
    v = np.random.default_rng(seed).standard_normal(G241_DIM)
    return v / np.linalg.norm(v)


#: Fixed random unit directions (seeds 241, 2411, 2412) defining the g241 centres.
G241C_DIRECTION = _unit(241)
G241D_DIRECTIONS = (_unit(2411), _unit(2412))


def _g241c_centres():
    u = G241C_DIRECTION
    return np.stack([1.25 * u, -1.25 * u])  # class +1, class -1 (distance 2.5)


def _g241d_centres():
    v, w = G241D_DIRECTIONS
    # class +1: centres c and c + 6 v; class -1: the same pair shifted by 2.5 w; centred at 0
    cp = np.stack([np.zeros(G241_DIM), 6 * v])
    cn = cp + 2.5 * w
    mean = np.concatenate([cp, cn]).mean(axis=0)
    return cp - mean, cn - mean


def _g241_scale(centres_all):
    """Population standard deviation of each coordinate of the equal-weight mixture (mean 0)."""
    return np.sqrt(1.0 + (centres_all**2).mean(axis=0))


def _mix_logpdf(A, centres):
    # log of the average of N(x; c, I) over centres, up to the common Gaussian constant
    d2 = (A**2).sum(1)[:, None] - 2 * A @ centres.T + (centres**2).sum(1)[None, :]
    return special.logsumexp(-0.5 * d2, axis=1) - math.log(len(centres))


def prob_g241c(X) -> np.ndarray:
    """True ``P(y=+1|x)`` of our g241c construction (inputs on the standardized scale).

    Examples
    --------
    >>> prob_g241c(np.zeros((1, 241)))
    array([0.5])
    """
    A = _as_X(X, _cols(G241_DIM), "prob_g241c")
    c = _g241c_centres()
    Z = A * _g241_scale(c)
    return special.expit(_mix_logpdf(Z, c[:1]) - _mix_logpdf(Z, c[1:]))


def _balanced_labels(n, rng, balanced):
    if balanced:  # [ZDJ]: "each class of these two datasets consisted of 750 samples"
        return rng.permutation(np.repeat([1, -1], [n // 2, n - n // 2]))
    return np.where(rng.random(n) < 0.5, 1, -1)


def make_g241c(n: int = 1500, random_state=None, balanced: bool = True, return_prob: bool = False):
    """g241c of Chapelle, Schölkopf & Zien (2006, ch. 21): two unit Gaussians 2.5 apart in R^241.

    As the book describes: each class (equal size, here equal prior) is an isotropic
    unit-variance Gaussian in 241 dimensions, the two means are at distance 2.5 in a random
    direction, and every coordinate is then shifted and rescaled to zero mean and unit
    variance. Our construction fixes the random direction (:data:`G241C_DIRECTION`, seed 241)
    so that the true probability is known, centres the means at ``+-1.25 u`` and standardizes
    with the *population* standard deviations ``sqrt(1 + 1.25^2 u_j^2)`` instead of the sample
    ones. With ``balanced=True`` (default) exactly ``n/2`` points belong to each class, as in
    [ZDJ] ("each class ... consisted of 750 samples"); ``balanced=False`` draws the labels with
    probability 1/2. The true ``p(x)`` is that of equal priors either way. Bayes error
    ``Phi(-1.25) = 0.1056``. [ZDJ] use 1500 points, 10 % for training.

    Examples
    --------
    >>> make_g241c(20, random_state=0).shape
    (20, 242)
    """
    n = _check_n(n)
    rng = _rng(random_state)
    c = _g241c_centres()
    y = _balanced_labels(n, rng, balanced)
    Z = rng.standard_normal((n, G241_DIM)) + np.where((y == 1)[:, None], c[0], c[1])
    X = Z / _g241_scale(c)
    p = special.expit(_mix_logpdf(Z, c[:1]) - _mix_logpdf(Z, c[1:]))
    return _finish(_frame(X, _cols(G241_DIM), y), p, return_prob)


def prob_g241d(X) -> np.ndarray:
    """True ``P(y=+1|x)`` of our g241d construction (inputs on the standardized scale).

    Examples
    --------
    >>> prob_g241d(np.zeros((1, 241))).shape
    (1,)
    """
    A = _as_X(X, _cols(G241_DIM), "prob_g241d")
    cp, cn = _g241d_centres()
    Z = A * _g241_scale(np.concatenate([cp, cn]))
    return special.expit(_mix_logpdf(Z, cp) - _mix_logpdf(Z, cn))


def make_g241d(n: int = 1500, random_state=None, balanced: bool = True, return_prob: bool = False):
    """g241d of Chapelle, Schölkopf & Zien (2006): each class a pair of Gaussians, pairs overlapping.

    The book builds a set where the cluster assumption fails: each class is a mixture of two
    unit-variance Gaussians in R^241 whose centres are 6 apart, and the centre pair of class
    -1 is the pair of class +1 shifted by 2.5 in another random direction, so every cluster of
    one class overlaps a cluster of the other; then coordinates are standardized. Our
    construction fixes the two random directions (:data:`G241D_DIRECTIONS`), uses equal
    class sizes (``balanced``, as :func:`make_g241c`) and equal component weights, centres the four
    means at the origin and
    standardizes with population standard deviations. Bayes error ``= Phi(-1.25)`` up to the
    negligible cross-cluster overlap (``bayes_error("g241d")`` computes it).

    Examples
    --------
    >>> make_g241d(20, random_state=0).shape
    (20, 242)
    """
    n = _check_n(n)
    rng = _rng(random_state)
    cp, cn = _g241d_centres()
    y = _balanced_labels(n, rng, balanced)
    comp = rng.integers(0, 2, n)
    C = np.where((y == 1)[:, None], cp[comp], cn[comp])
    Z = rng.standard_normal((n, G241_DIM)) + C
    X = Z / _g241_scale(np.concatenate([cp, cn]))
    p = special.expit(_mix_logpdf(Z, cp) - _mix_logpdf(Z, cn))
    return _finish(_frame(X, _cols(G241_DIM), y), p, return_prob)


# ----------------------------------------------------------------------------- [RH] single point
RH_SINGLE_POINT_PROBS = (0.375, 0.34, 0.28)


def _rh_probs(probs, renormalize):
    p = np.asarray(probs, dtype=float)
    if p.ndim != 1 or p.size < 2 or np.any(p < 0):
        raise ValueError(f"probs must be a sequence of >= 2 nonnegative numbers; got {probs!r}")
    if renormalize:
        return p / p.sum()
    if not np.isclose(p.sum(), 1.0):
        raise ValueError(
            f"probs sum to {p.sum():.6g}, not 1; pass renormalize=True (the [RH] Figure 3/4 values "
            "0.375, 0.34, 0.28 sum to 0.995)"
        )
    return p


def prob_lamsvm_single_point(X, probs=RH_SINGLE_POINT_PROBS, renormalize: bool = True) -> np.ndarray:
    """Class probabilities (n, K) of the [RH] single-point experiment (constant in ``x``).

    Examples
    --------
    >>> prob_lamsvm_single_point(np.zeros((1, 1))).round(4)
    array([[0.3769, 0.3417, 0.2814]])
    """
    A = _as_X(X, ["x"], "prob_lamsvm_single_point")
    return np.tile(_rh_probs(probs, renormalize), (A.shape[0], 1))


def make_lamsvm_single_point(
    N: int = 264,
    random_state=None,
    probs=RH_SINGLE_POINT_PROBS,
    renormalize: bool = True,
    exact: bool = True,
    x: float = 0.0,
    return_prob: bool = False,
):
    """[RH] Figures 3/4: ``N`` copies of one input point with class probabilities ``probs``.

    The paper gives (0.375, 0.34, 0.28), which sum to 0.995; by default they are
    renormalised to (0.3769, 0.3417, 0.2814). With ``exact=True`` the label counts are
    ``N * p`` rounded by largest remainders (for N = 264: 100, 90, 74) in random order; with
    ``exact=False`` labels are drawn independently. The single feature column ``x`` is
    constant.

    Examples
    --------
    >>> df = make_lamsvm_single_point(random_state=0)
    >>> df.y.value_counts().sort_index().tolist()
    [100, 90, 74]
    """
    N = _check_n(N, "N")
    p = _rh_probs(probs, renormalize)
    rng = _rng(random_state)
    if exact:
        raw = N * p
        counts = np.floor(raw).astype(int)
        order = np.argsort(-(raw - counts), kind="stable")
        counts[order[: N - counts.sum()]] += 1
        y = rng.permutation(np.repeat(np.arange(p.size), counts))
    else:
        y = rng.choice(p.size, size=N, p=p)
    df = _frame(np.full((N, 1), float(x)), ["x"], y)
    return _finish(df, np.tile(p, (N, 1)), return_prob)


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
