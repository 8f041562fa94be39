"""Independent references for the lambda-SVM tests: a small multiclass problem and the dual
objective of [RH] computed from the full kernel matrix (no solver code)."""

import numpy as np


def _data(N, L, seed, p=3):
    rng = np.random.default_rng(seed)
    y = np.arange(N) % L
    rng.shuffle(y)
    X = rng.normal(size=(N, p)) + 1.6 * np.eye(L, p)[y]
    return np.ascontiguousarray(X), y.astype(np.int64)


def _centred_b(y, L, a):
    B = np.where(y[:, None] == np.arange(L), a, -a)
    return B - B.mean(axis=1, keepdims=True)


def _dual(K, y, L, margin, a):
    """``W(alpha) = sum alpha l - 1/2 sum_j btilde_j' K btilde_j`` with the full kernel matrix."""
    Bt = _centred_b(y, L, a)
    lv = np.where(y[:, None] == np.arange(L), margin, 1.0)
    return float((a * lv).sum() - 0.5 * (Bt * (K @ Bt)).sum())
