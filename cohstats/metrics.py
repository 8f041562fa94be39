"""Accuracy measures for classifiers and class-probability estimates.

All functions take array-likes and return a Python ``float``. They never clip
probabilities: an estimate of exactly 0 or 1 that contradicts the true
probability or the observed label gives ``inf``, and the caller decides how to report
such degenerate cases (the papers average over the non-degenerate replications).

Binary functions accept labels coded ``-1/+1`` or ``0/1`` (or booleans); the positive
class is ``+1`` / ``1`` / ``True`` and probabilities refer to it. Multiclass functions
take integer labels ``0..K-1`` and an ``(n, K)`` matrix of probabilities.

Every function takes optional observation ``weights`` (non-negative; the result is the
weighted mean); ``None`` means equal weights.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "error_rate",
    "gkl",
    "gkl_c",
    "cre",
    "mae",
    "brier",
    "auc",
    "cross_entropy",
    "brier_multi",
]


# --------------------------------------------------------------------------- validation
def _vector(x, name, dtype=float):
    a = np.asarray(x)
    if a.ndim == 0:
        a = a.reshape(1)
    if a.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {a.shape}")
    if a.size == 0:
        raise ValueError(f"{name} is empty")
    if dtype is float:
        try:
            a = a.astype(np.float64)
        except (TypeError, ValueError):
            raise TypeError(f"{name} must be numeric, got dtype {a.dtype}") from None
    return a


def _prob_pair(p_true, p_hat):
    """Validated (p_true, p_hat) of one shape: vectors (binary) or (n, K) matrices."""
    ndim = 2 if np.ndim(p_true) == 2 else 1
    p = _prob(p_true, "p_true", ndim)
    q = _prob(p_hat, "p_hat", ndim)
    if p.shape != q.shape:
        raise ValueError(f"p_true has shape {p.shape} but p_hat has shape {q.shape}")
    return p, q, ndim


def _prob(x, name, ndim=1):
    a = np.asarray(x, dtype=np.float64) if not isinstance(x, np.ndarray) else x.astype(np.float64)
    if a.ndim == 0:
        a = a.reshape(1)
    if a.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-dimensional, got shape {a.shape}")
    if a.size == 0:
        raise ValueError(f"{name} is empty")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} contains NaN or infinite values")
    if a.min() < 0.0 or a.max() > 1.0:
        bad = a[(a < 0) | (a > 1)].ravel()[0]
        raise ValueError(f"{name} must lie in [0, 1]; found {bad!r}")
    return a


def _weights(weights, n, name="weights"):
    if weights is None:
        return None
    w = _vector(weights, name)
    if w.shape[0] != n:
        raise ValueError(f"{name} has length {w.shape[0]}, expected {n}")
    if not np.all(np.isfinite(w)) or w.min() < 0:
        raise ValueError(f"{name} must be finite and non-negative")
    if w.sum() <= 0:
        raise ValueError(f"{name} must not all be zero")
    return w


def _same_length(a, b, na, nb):
    if a.shape[0] != b.shape[0]:
        raise ValueError(f"{na} has length {a.shape[0]} but {nb} has length {b.shape[0]}")


def _mean(terms, w):
    if w is None:
        return float(np.mean(terms))
    # 0 * inf would be nan: a zero-weight observation does not count at all
    terms = np.where(w > 0, terms, 0.0)
    return float(np.sum(w * terms) / np.sum(w))


def _binary01(y, name="y"):
    """Code binary labels (+-1, 0/1 or bool) as float 0/1."""
    a = np.asarray(y)
    if a.ndim == 0:
        a = a.reshape(1)
    if a.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {a.shape}")
    if a.size == 0:
        raise ValueError(f"{name} is empty")
    if a.dtype == bool:
        return a.astype(np.float64)
    try:
        v = a.astype(np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be coded -1/+1 or 0/1 (numeric or bool), got dtype {a.dtype}") from None
    vals = np.unique(v)
    if np.all(np.isin(vals, (-1.0, 1.0))):
        return (v + 1.0) / 2.0
    if np.all(np.isin(vals, (0.0, 1.0))):
        return v
    raise ValueError(f"{name} must be coded -1/+1 or 0/1; found values {vals[:5].tolist()}")


def _labels_int(y, K, name="y"):
    a = np.asarray(y)
    if a.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {a.shape}")
    if not (np.issubdtype(a.dtype, np.integer) or (np.issubdtype(a.dtype, np.floating) and np.all(a == np.round(a)))):
        raise TypeError(f"{name} must hold integer class codes 0..K-1, got dtype {a.dtype}")
    a = a.astype(np.int64)
    if a.size and (a.min() < 0 or a.max() >= K):
        bad = a[(a < 0) | (a >= K)][0]
        raise ValueError(f"{name} must hold class codes in 0..{K - 1}; found {bad}")
    return a


# --------------------------------------------------------------------------- pointwise terms
def _cre_terms(y01, p):
    """-(y log p + (1-y) log(1-p)) per observation; inf on contradiction."""
    from scipy.special import xlogy  # imported on use: scipy.special is slow to import

    return -(xlogy(y01, p) + xlogy(1.0 - y01, 1.0 - p))


def _ce_terms(y_int, P):
    """-log P[i, y_i] per observation; inf when that probability is 0."""
    with np.errstate(divide="ignore"):
        return -np.log(P[np.arange(P.shape[0]), y_int])


def _brier_multi_terms(y_int, P):
    E = np.zeros_like(P)
    E[np.arange(P.shape[0]), y_int] = 1.0
    return np.sum((E - P) ** 2, axis=1)


# --------------------------------------------------------------------------- public metrics
def error_rate(y, yhat, weights=None) -> float:
    """Misclassification rate ``mean(y != yhat)`` (the papers' CER / TE).

    Parameters
    ----------
    y, yhat : array-like of labels
        Observed and predicted labels, compared elementwise (any comparable labels).
    weights : array-like, optional
        Observation weights.

    Returns
    -------
    float

    Examples
    --------
    >>> error_rate([1, -1, 1, 1], [1, 1, 1, -1])
    0.5
    """
    a, b = np.asarray(y), np.asarray(yhat)
    if a.ndim != 1 or b.ndim != 1:
        raise ValueError("y and yhat must be one-dimensional")
    _same_length(a, b, "y", "yhat")
    if a.size == 0:
        raise ValueError("y is empty")
    return _mean((a != b).astype(np.float64), _weights(weights, a.size))


def gkl(p_true, p_hat, weights=None) -> float:
    """Generalized Kullback-Leibler loss ``mean[p log(p/p_hat) + (1-p) log((1-p)/(1-p_hat))]``.

    With ``(n, K)`` matrices the multiclass form ``mean_i sum_k p_ik log(p_ik / p_hat_ik)``
    is returned. ``0 log 0 = 0``; ``p_hat`` equal to 0 or 1 where ``p`` is not gives ``inf``.

    Parameters
    ----------
    p_true : array-like, shape (n,) or (n, K)
        True probabilities of the positive class (or of every class).
    p_hat : array-like, same shape
        Estimated probabilities.
    weights : array-like, optional
        Observation weights.

    Examples
    --------
    >>> round(gkl([0.8, 0.2], [0.5, 0.5]), 4)
    0.1927
    """
    from scipy.special import rel_entr  # imported on use: scipy.special is slow to import

    p, q, ndim = _prob_pair(p_true, p_hat)
    if ndim == 1:
        terms = rel_entr(p, q) + rel_entr(1.0 - p, 1.0 - q)
    else:
        terms = rel_entr(p, q).sum(axis=1)
    return _mean(terms, _weights(weights, p.shape[0]))


def gkl_c(p_true, p_hat, weights=None) -> float:
    """Comparative GKL loss ``-mean[p log p_hat + (1-p) log(1-p_hat)]`` ([WSL] section 4).

    This is GKL plus the (estimator-free) entropy of ``p``; it is what the "GKL" columns of
    [WSL] Tables 1-2 and [ZDJ] Table 2 report. With ``(n, K)`` matrices the multiclass form
    ``-mean_i sum_k p_ik log p_hat_ik``.

    Parameters
    ----------
    p_true, p_hat : array-like, shape (n,) or (n, K)
    weights : array-like, optional

    Examples
    --------
    >>> round(gkl_c([0.8, 0.2], [0.8, 0.2]), 4)   # the entropy H(0.8)
    0.5004
    """
    from scipy.special import xlogy  # imported on use: scipy.special is slow to import

    p, q, ndim = _prob_pair(p_true, p_hat)
    if ndim == 1:
        terms = _cre_terms(p, q)
    else:
        terms = -xlogy(p, q).sum(axis=1)
    return _mean(terms, _weights(weights, p.shape[0]))


def cre(y, p_hat, weights=None) -> float:
    """Cross-entropy (EKL, log loss) of binary labels: ``-mean[y log p + (1-y) log(1-p)]``.

    Parameters
    ----------
    y : array-like
        Labels coded -1/+1 or 0/1 (or bool); positive = +1 / 1 / True.
    p_hat : array-like
        Estimated probability of the positive class.
    weights : array-like, optional

    Examples
    --------
    >>> round(cre([1, -1], [0.9, 0.2]), 6)
    0.164252
    """
    y01 = _binary01(y, "y")
    p = _prob(p_hat, "p_hat")
    _same_length(y01, p, "y", "p_hat")
    return _mean(_cre_terms(y01, p), _weights(weights, p.shape[0]))


def mae(p_true, p_hat, weights=None) -> float:
    """Mean absolute error of probabilities ``mean |p - p_hat|`` ([LZW]).

    For ``(n, K)`` matrices: ``mean_i (1/2) sum_k |p_ik - p_hat_ik|`` (total variation
    distance), which equals the binary value for ``K = 2``.

    Examples
    --------
    >>> round(mae([0.8, 0.2], [0.7, 0.4]), 10)
    0.15
    """
    p, q, ndim = _prob_pair(p_true, p_hat)
    terms = np.abs(p - q) if ndim == 1 else 0.5 * np.abs(p - q).sum(axis=1)
    return _mean(terms, _weights(weights, p.shape[0]))


def brier(y, p_hat, weights=None) -> float:
    """Brier score of binary labels: ``mean (y - p_hat)^2`` with ``y`` in {0, 1}.

    Parameters
    ----------
    y : array-like
        Labels coded -1/+1 or 0/1 (or bool).
    p_hat : array-like
        Estimated probability of the positive class.

    Examples
    --------
    >>> brier([1, -1], [0.9, 0.2])
    0.025
    """
    y01 = _binary01(y, "y")
    p = _prob(p_hat, "p_hat")
    _same_length(y01, p, "y", "p_hat")
    return _mean((y01 - p) ** 2, _weights(weights, p.shape[0]))


def auc(y, score, weights=None) -> float:
    """Area under the ROC curve: ``P(score+ > score-) + P(tie)/2`` (Mann-Whitney).

    With weights, each pair counts with the product of its two weights.

    Parameters
    ----------
    y : array-like
        Labels coded -1/+1 or 0/1 (or bool); both classes must be present.
    score : array-like
        Any score increasing in the probability of the positive class (decision value,
        probability).

    Examples
    --------
    >>> auc([1, 1, -1, -1], [0.9, 0.4, 0.5, 0.1])
    0.75
    """
    y01 = _binary01(y, "y")
    s = _vector(score, "score")
    _same_length(y01, s, "y", "score")
    if np.any(np.isnan(s)):
        raise ValueError("score contains NaN")
    w = _weights(weights, s.shape[0])
    if w is None:
        w = np.ones_like(s)
    wp = w * y01
    wn = w * (1.0 - y01)
    if wp.sum() <= 0 or wn.sum() <= 0:
        raise ValueError("auc needs observations of both classes in y")
    order = np.argsort(s, kind="mergesort")
    s_sorted = s[order]
    # group tied scores
    starts = np.flatnonzero(np.r_[True, s_sorted[1:] != s_sorted[:-1]])
    gp = np.add.reduceat(wp[order], starts)
    gn = np.add.reduceat(wn[order], starts)
    neg_below = np.cumsum(gn) - gn  # negative weight strictly below each group
    num = np.sum(gp * (neg_below + 0.5 * gn))
    return float(num / (wp.sum() * wn.sum()))


def cross_entropy(y_int, P, weights=None) -> float:
    """Multiclass cross-entropy ``-mean log P[i, y_i]``.

    Parameters
    ----------
    y_int : array-like of int
        Class codes ``0..K-1``.
    P : array-like, shape (n, K)
        Estimated class probabilities (rows should sum to one).

    Examples
    --------
    >>> round(cross_entropy([0, 2], [[0.5, 0.25, 0.25], [0.1, 0.1, 0.8]]), 6)
    0.458145
    """
    Pm = _prob(P, "P", ndim=2)
    y = _labels_int(y_int, Pm.shape[1], "y_int")
    _same_length(y, Pm, "y_int", "P")
    return _mean(_ce_terms(y, Pm), _weights(weights, y.shape[0]))


def brier_multi(y_int, P, weights=None) -> float:
    """Multiclass Brier score ``mean_i sum_k (1[y_i = k] - P_ik)^2`` (Brier's original form).

    For ``K = 2`` it is twice the binary :func:`brier`.

    Examples
    --------
    >>> round(brier_multi([0, 1], [[0.75, 0.25], [0.5, 0.5]]), 6)
    0.3125
    """
    Pm = _prob(P, "P", ndim=2)
    y = _labels_int(y_int, Pm.shape[1], "y_int")
    _same_length(y, Pm, "y_int", "P")
    return _mean(_brier_multi_terms(y, Pm), _weights(weights, y.shape[0]))
