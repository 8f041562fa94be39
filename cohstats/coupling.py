"""Pairwise coupling: K-class probabilities from the K(K-1)/2 pairwise ones.

A one-vs-one classifier gives, for every pair of classes ``i < j``, an estimate
``r_ij ~ P(Y = i | Y in {i, j}, x)`` (and ``r_ji = 1 - r_ij``). :func:`pairwise_coupling`
turns them into one probability vector by the second method of Wu, Lin & Weng (2004,
"Probability estimates for multi-class classification by pairwise coupling", JMLR 5), the
method of libsvm's ``-b 1`` and of scikit-learn's ``SVC(probability=True)``:

    minimise_p   sum_i sum_{j != i} (r_ji p_i - r_ij p_j)^2     subject to  sum_i p_i = 1.

The objective is ``2 p'Qp`` with ``Q_ii = sum_{j != i} r_ji^2`` and ``Q_ij = -r_ji r_ij``; the
minimiser solves the bordered linear system ``[Q 1; 1' 0] [p; b] = [0; 1]`` and is
nonnegative when every ``r_ij`` lies in ``(0, 1)`` (Wu, Lin & Weng 2004, Theorem 2), so the
constraint ``p >= 0`` is inactive. libsvm reaches the same minimiser by a fixed-point
iteration stopped at a tolerance of ``0.005 / K``; here the system is solved directly (exact
to rounding), one small dense solve per observation, vectorised over observations.
"""

from __future__ import annotations

import numpy as np

__all__ = ["pairwise_coupling", "pairwise_matrix"]

MIN_PROB = 1e-7  # libsvm clips the pairwise probabilities to [1e-7, 1 - 1e-7]


def pairwise_matrix(r, K: int) -> np.ndarray:
    """``(N, K, K)`` matrix ``R[:, i, j] = r_ij`` from the pairwise columns ``r`` (N, K(K-1)/2)
    ordered as ``(0, 1), (0, 2), ..., (0, K-1), (1, 2), ...`` (libsvm's order); each column
    holds ``P(Y = i | Y in {i, j})`` of its pair ``(i, j)``, ``i < j``. The diagonal is 0."""
    r = np.asarray(r, dtype=np.float64)
    if r.ndim == 1:
        r = r[None, :]
    npair = K * (K - 1) // 2
    if r.ndim != 2 or r.shape[1] != npair:
        raise ValueError(f"r must have K(K-1)/2 = {npair} columns for K = {K}; got shape {r.shape}")
    R = np.zeros((r.shape[0], K, K))
    k = 0
    for i in range(K):
        for j in range(i + 1, K):
            R[:, i, j] = r[:, k]
            R[:, j, i] = 1.0 - r[:, k]
            k += 1
    return R


def pairwise_coupling(R, *, min_prob: float = MIN_PROB) -> np.ndarray:
    """Class probabilities ``(N, K)`` from pairwise probabilities by Wu, Lin & Weng's method 2.

    Parameters
    ----------
    R : (N, K, K) or (K, K) array with ``R[..., i, j] = P(Y = i | Y in {i, j}, x)`` for
        ``i != j``; only the upper triangle is read (``r_ji = 1 - r_ij``, as libsvm). Build it
        from pairwise columns with :func:`pairwise_matrix`.
    min_prob : the pairwise values are clipped to ``[min_prob, 1 - min_prob]`` first (libsvm's
        1e-7), which keeps ``Q`` positive definite.

    Returns
    -------
    (N, K) array (or (K,) for a single (K, K) input); rows are nonnegative and sum to one.

    Examples
    --------
    >>> import numpy as np
    >>> p = np.array([0.5, 0.3, 0.2])                       # consistent pairwise values
    >>> R = p[:, None] / (p[:, None] + p[None, :])
    >>> pairwise_coupling(R).round(12).tolist()
    [0.5, 0.3, 0.2]
    """
    R = np.asarray(R, dtype=np.float64)
    single = R.ndim == 2
    if single:
        R = R[None]
    if R.ndim != 3 or R.shape[1] != R.shape[2] or R.shape[1] < 2:
        raise ValueError(f"R must have shape (N, K, K) with K >= 2; got {R.shape}")
    if not np.all(np.isfinite(R)):
        raise ValueError("R must be finite")
    if not (0.0 <= min_prob < 0.5):
        raise ValueError(f"min_prob must lie in [0, 0.5); got {min_prob!r}")
    N, K, _ = R.shape
    iu = np.triu_indices(K, 1)
    up = np.clip(R[:, iu[0], iu[1]], min_prob, 1.0 - min_prob)
    r = np.zeros((N, K, K))
    r[:, iu[0], iu[1]] = up
    r[:, iu[1], iu[0]] = 1.0 - up
    # Q_tt = sum_{j != t} r_jt^2, Q_tj = -r_jt r_tj
    A = np.zeros((N, K + 1, K + 1))
    rt = np.swapaxes(r, 1, 2)  # rt[:, t, j] = r_jt
    A[:, :K, :K] = -rt * r
    diag = np.sum(rt * rt, axis=2)  # sum_j r_jt^2 (r_tt = 0)
    A[:, np.arange(K), np.arange(K)] = diag
    A[:, :K, K] = 1.0
    A[:, K, :K] = 1.0
    rhs = np.zeros((N, K + 1))
    rhs[:, K] = 1.0
    sol = np.linalg.solve(A, rhs[..., None])[..., 0]
    P = np.maximum(sol[:, :K], 0.0)  # nonnegative in exact arithmetic
    P /= P.sum(axis=1, keepdims=True)
    return P[0] if single else P
