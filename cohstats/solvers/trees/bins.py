"""Binning of the tree growers: every column mapped to ordered integer bins (the codes the
histogram growers of :mod:`cohstats.solvers.trees.grow` and :mod:`.grow_boost` split on)."""

from __future__ import annotations

import numpy as np

__all__ = ["make_bins", "apply_bins"]


def make_bins(X, max_bins=255, sample_weight=None):
    """Map every column of ``X`` to ordered integer bins.

    Parameters
    ----------
    X : ndarray (n, p) float64
    max_bins : int
        At most this many bins per feature (2..65535). A feature with at most ``max_bins``
        distinct values gets one bin per value (exact split search).
    sample_weight : optional (n,) non-negative weights. The cut points are computed from
        the rows with positive weight, with weighted counts, so that integer weights and
        replicated rows give the same bins (and rows of weight zero do not move them).

    Returns
    -------
    codes : ndarray (n, p) uint8 (``max_bins <= 256``) or uint16, C-contiguous
    thresholds : ndarray (p, max_bins - 1) float64; ``thresholds[f, b]`` separates bin ``b``
        from ``b + 1`` (``x <= thr`` goes to bins ``<= b``); unused entries are ``+inf``
    n_bins : ndarray (p,) int64, bins used per feature

    Examples
    --------
    >>> codes, thr, nb = make_bins(np.array([[0.0], [1.0], [1.0], [3.0]]))
    >>> codes.ravel().tolist(), thr[0, :2].tolist(), nb.tolist()
    ([0, 1, 1, 2], [0.5, 2.0], [3])
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-dimensional, got shape {X.shape}")
    max_bins = int(max_bins)
    if not 2 <= max_bins <= 65535:
        raise ValueError(f"max_bins must be in [2, 65535], got {max_bins}")
    n, p = X.shape
    thr = np.full((p, max_bins - 1), np.inf)
    nb = np.ones(p, dtype=np.int64)
    dtype = np.uint8 if max_bins <= 256 else np.uint16
    codes = np.zeros((n, p), dtype=dtype)
    if sample_weight is None:
        sw = np.ones(n)
    else:
        sw = np.asarray(sample_weight, dtype=np.float64)
        if sw.shape != (n,) or np.any(~np.isfinite(sw)) or np.any(sw < 0):
            raise ValueError("sample_weight must be n finite non-negative numbers")
    pos = sw > 0 if np.any(sw > 0) else np.ones(n, bool)
    # unit weights (the common case): distinct values and their counts from one sort, without
    # the inverse index (the same values and counts as np.unique and np.bincount give)
    unit = bool(np.all(sw[pos] == 1.0))
    for f in range(p):
        col = X[:, f]
        if not np.all(np.isfinite(col)):
            raise ValueError(f"column {f} of X has missing or infinite values")
        if unit:
            sv = np.sort(col[pos])
            new = np.empty(sv.size, bool)
            new[:1] = True
            np.not_equal(sv[1:], sv[:-1], out=new[1:])
            u = sv[new]
        else:
            u, inv = np.unique(col[pos], return_inverse=True)
        if u.size <= max_bins:
            cuts = 0.5 * (u[:-1] + u[1:])
        else:
            # equal-weight cuts at midpoints between distinct values
            if unit:
                cnt = np.diff(np.append(np.flatnonzero(new), sv.size)).astype(np.float64)
            else:
                cnt = np.bincount(inv, weights=sw[pos], minlength=u.size)
            cum = np.cumsum(cnt)
            targets = cum[-1] * np.arange(1, max_bins) / max_bins
            idx = np.unique(np.searchsorted(cum, targets, side="left"))
            idx = idx[idx < u.size - 1]
            cuts = 0.5 * (u[idx] + u[idx + 1])
        cuts = np.unique(cuts)
        thr[f, : cuts.size] = cuts
        nb[f] = cuts.size + 1
        codes[:, f] = _count_below(cuts, col)
    return codes, thr, nb


def _count_below(cuts, x):
    """``np.searchsorted(cuts, x, side="left")`` (how many cuts lie below each ``x``) for sorted
    finite ``cuts`` and finite ``x``.

    On long columns the binary search's unpredictable branches cost most of the binning
    time, so the cuts' range is divided into ``4 len(cuts)`` equal buckets: each ``x`` starts
    at the count below the edge one bucket under its own (a bucket of slack for rounding) and
    advances over the few cuts in between in vectorised steps. Falls back on the binary search
    when a stretch of three buckets holds more than 8 cuts (strongly uneven cuts).
    """
    k = cuts.size
    if k < 32 or x.size < 8192:
        return np.searchsorted(cuts, x, side="left")
    lo, hi = float(cuts[0]), float(cuts[-1])
    nbk = 4 * k
    width = (hi - lo) / nbk
    if not width > 1e-9 * max(abs(lo), abs(hi)):
        return np.searchsorted(cuts, x, side="left")
    # F[j + 1] = number of cuts below the edge lo + j width, j = -1..nbk+1
    F = np.searchsorted(cuts, lo + width * np.arange(-1, nbk + 2), side="left")
    steps = int((F[3:] - F[:-3]).max())  # cuts from one bucket below to one above
    if steps > 8:
        return np.searchsorted(cuts, x, side="left")
    idx = F[np.clip(np.floor((x - lo) / width), 0, nbk - 1).astype(np.intp)]
    ext = np.append(cuts, np.inf)
    for _ in range(steps):
        idx += ext[idx] < x
    return idx


def apply_bins(X, thresholds, n_bins, dtype=np.uint8):
    """Bin new data with thresholds from :func:`make_bins` (same convention ``x <= thr``)."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    codes = np.empty(X.shape, dtype=dtype)
    for f in range(X.shape[1]):
        codes[:, f] = np.searchsorted(thresholds[f, : n_bins[f] - 1], X[:, f], side="left")
    return codes


# ------------------------------------------------------------------------------ histograms
