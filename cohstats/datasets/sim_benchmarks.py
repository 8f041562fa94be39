"""Classic benchmark data re-created with known class probabilities: waveform, g241c, g241d.

Breiman's waveform data (Breiman, Friedman, Olshen & Stone 1984, *Classification and
Regression Trees*), used by [ZJLY] Zhang, Jordan, Li & Yeung (2009); g241c and g241d of
Chapelle, Schölkopf & Zien (2006, *Semi-Supervised Learning*, ch. 21), used by [ZDJ] Zhang, Dai &
Jordan (2012). Re-exported by :mod:`cohstats.datasets.simulations`.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from ._simbase import _as_X, _check_n, _cols, _finish, _frame, _rng


__all__ = ["make_waveform", "prob_waveform", "make_g241c", "prob_g241c", "make_g241d", "prob_g241d"]


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
