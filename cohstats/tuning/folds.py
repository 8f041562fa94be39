from __future__ import annotations

import numbers

import numpy as np

from ._common import _rng


def make_folds(y, nfolds: int = 10, stratified: bool = True, random_state=None) -> np.ndarray:
    """Fold ids ``0..K-1`` for K-fold cross-validation.

    Stratified by class: the members of each class are shuffled and dealt to the folds in
    turn, continuing the rotation from one class to the next, so every fold gets
    ``floor`` or ``ceil`` of its share of every class and the folds differ in size by at
    most one. If the smallest class has fewer than ``nfolds`` members, ``K = max(2, that
    count)`` folds are used (a warning says so).

    Parameters
    ----------
    y : array-like
        Class labels (any hashable values) or coded responses.
    nfolds : int
        Requested number of folds (>= 2).
    stratified : bool
        Stratify by class (default). Otherwise a seeded random split into ``nfolds`` folds.
    random_state : None, int or Generator

    Examples
    --------
    >>> f = make_folds([0] * 6 + [1] * 14, nfolds=10, random_state=1)
    >>> int(f.max()) + 1      # 6 members in the smallest class -> 6 folds
    6
    """
    if not isinstance(nfolds, numbers.Integral) or isinstance(nfolds, bool) or nfolds < 2:
        raise ValueError(f"nfolds must be an integer >= 2; got {nfolds!r}")
    y = np.asarray(y)
    n = y.shape[0]
    if n < 2:
        raise ValueError(f"cross-validation needs at least 2 observations; got {n}")
    rng = _rng(random_state)
    foldid = np.empty(n, dtype=np.int64)
    if not stratified:
        K = min(int(nfolds), n)
        perm = rng.permutation(n)
        foldid[perm] = np.arange(n) % K
        return foldid
    _, codes, counts = np.unique(y, return_inverse=True, return_counts=True)
    K = int(nfolds)
    if counts.min() < K:
        K = max(2, int(counts.min()))
    offset = 0
    for c in range(counts.shape[0]):
        idx = np.flatnonzero(codes == c)
        perm = rng.permutation(idx)
        foldid[perm] = (offset + np.arange(idx.shape[0])) % K
        offset = (offset + idx.shape[0]) % K
    return foldid


def _resolve_foldid(design, nfolds, foldid, stratified, rng):
    n = design.nobs
    if foldid is None:
        f = make_folds(design.y, nfolds, stratified=stratified, random_state=rng)
        used = int(f.max()) + 1
        if used < nfolds:
            import warnings

            from ..exceptions import DataWarning

            why = (
                f"the smallest class has {used} members and stratified folds put each class in every fold"
                if stratified
                else f"there are only {n} observations"
            )
            warnings.warn(
                f"nfolds={nfolds} reduced to {used} folds: {why}; pass a smaller nfolds "
                "(or foldid=) to choose the folds yourself",
                DataWarning,
                stacklevel=4,
            )
        return f
    f = np.asarray(foldid)
    if f.ndim != 1 or f.shape[0] != n:
        raise ValueError(f"foldid must have one entry per observation ({n}); got shape {f.shape}")
    _, f = np.unique(f, return_inverse=True)
    if f.max() < 1:
        raise ValueError("foldid must define at least 2 folds")
    return f.astype(np.int64)
