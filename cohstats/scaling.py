"""Column standardisation shared by every fit function that standardises its inputs.

``standardize=True`` centres each predictor at its weighted mean and divides it by its
weighted standard deviation (divisor ``sum w``, as glmnet and e1071). The computation is
scale-safe: columns are first divided by their largest absolute value, so that predictors of
order 1e150 or 1e-150 give the same standardised inputs as their rescaled twins (no overflow or
underflow in the squares). A column that is constant (relative spread below 1e-12) keeps scale 1.
"""

from __future__ import annotations

import numpy as np

__all__ = ["column_scaling"]


def column_scaling(X, w=None, standardize: bool = True):
    """Centres and scales ``(c, s)`` of the columns of ``X``; ``(X - c) / s`` is standardised.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 5.0], [3.0, 5.0]])
    >>> c, s = column_scaling(X)
    >>> c.tolist(), s.tolist()
    ([2.0, 5.0], [1.0, 1.0])
    """
    X = np.asarray(X, dtype=np.float64)
    p = X.shape[1]
    if not standardize:
        return np.zeros(p), np.ones(p)
    w = np.ones(X.shape[0]) if w is None else np.asarray(w, dtype=np.float64)
    ws = w / w.sum()
    big = np.max(np.abs(X), axis=0) if X.shape[0] else np.ones(p)
    big = np.where((big > 0) & np.isfinite(big), big, 1.0)
    Xs = X / big  # |Xs| <= 1: no overflow in the squares below
    c = ws @ Xs
    sd = np.sqrt(ws @ (Xs - c) ** 2)
    scale = np.where(sd > 1e-12 * np.maximum(np.abs(c), 1e-300), sd * big, 1.0)
    scale = np.where(np.isfinite(scale) & (scale > 0), scale, 1.0)
    return c * big, scale
