"""The boosting tree grower: one response per tree (GentleBoost.C and the other boosting methods
of :mod:`cohstats.solvers.trees.boost` grow one tree per class), histograms and split search for
that one response, partitions on feature-major bins, int32 row index; the same trees as the
general grower :func:`cohstats.solvers.trees.grow.grow_tree` (tested)."""

from __future__ import annotations

import numpy as np
from cohstats._numba_cache import internal

from cohstats.solvers.trees.grow import (
    GAIN_RTOL,
    PREFETCH_AHEAD,
    TIE_RTOL,
    _gap_end,
    _open_node,
    _partition,
    _pop,
    _prefetch,
    _push,
    _queue,
    _subtract_hist,
)

__all__ = ["grow_boost_tree"]


@internal
def _prefetch_row(codes, k, gz, w):
    """Ask for row ``k``'s bins (every cache line of ``codes[k]``) and its ``gz``, ``w``."""
    p = codes.shape[1]
    for off in range(0, p, 64):
        _prefetch(codes, k * p + off)
    _prefetch(gz, k)
    _prefetch(w, k)


@internal
def _build_hist1(codes, rows, start, end, gz, w, hist, slot, counts):
    """:func:`_build_hist` for one response ``gz`` (n,): ``hist[slot, f, b] = (sum gz, sum w[,
    count])`` over ``rows[start:end]`` (the same sums in the same order)."""
    p = codes.shape[1]
    h = hist[slot]
    h[:] = 0.0
    if counts:
        for ii in range(start, end):
            if ii + PREFETCH_AHEAD < end:
                _prefetch_row(codes, rows[ii + PREFETCH_AHEAD], gz, w)
            i = rows[ii]
            g0 = gz[i]
            wi = w[i]
            for f in range(p):
                bb = codes[i, f]
                h[f, bb, 0] += g0
                h[f, bb, 1] += wi
                h[f, bb, 2] += 1.0
    else:
        for ii in range(start, end):
            if ii + PREFETCH_AHEAD < end:
                _prefetch_row(codes, rows[ii + PREFETCH_AHEAD], gz, w)
            i = rows[ii]
            g0 = gz[i]
            wi = w[i]
            for f in range(p):
                bb = codes[i, f]
                h[f, bb, 0] += g0
                h[f, bb, 1] += wi


@internal
def _best_split1(hist, slot, n_bins, min_leaf, tot, cnt, counts, fperm, lam):
    """:func:`_best_split` for one response (``K = 1``; the same arithmetic)."""
    h = hist[slot]
    p = h.shape[0]
    t0 = 0.0
    t1 = 0.0
    for b in range(n_bins[0]):
        t0 += h[0, b, 0]
        t1 += h[0, b, 1]
    tot[0] = t0
    tot[1] = t1
    tot[2] = cnt
    W = t1
    C = cnt
    best_gain = -1.0
    best_f = -1
    best_b = -1
    if C < 2 * min_leaf or W <= 0.0:
        return best_gain, best_f, best_b
    parent = t0 * t0 / (W + lam)
    tol = GAIN_RTOL * parent
    for fi in range(p):
        f = fperm[fi]
        GL = 0.0
        WL = 0.0
        CL = 0.0
        for b in range(n_bins[f] - 1):
            GL += h[f, b, 0]
            WL += h[f, b, 1]
            if counts:
                CL += h[f, b, 2]
                if CL < min_leaf:
                    continue
                if C - CL < min_leaf:
                    break
            WR = W - WL
            if WL <= 0.0 or WR <= 0.0:
                continue
            gr = t0 - GL
            gain = GL * GL / (WL + lam) + gr * gr / (WR + lam) - parent
            if gain > best_gain + TIE_RTOL * abs(best_gain):
                best_gain = gain
                best_f = f
                best_b = b
    if best_gain <= tol:
        return -1.0, -1, -1
    return best_gain, best_f, best_b


@internal
def _leaf_totals(codes, rows, start, end, gz, w, hist, slot, nb0, tot_small, tot_large):
    """Totals ``(sum gz, sum w)`` of a split's smaller child (``rows[start:end]``) and of the
    larger one (the parent's histogram in ``slot`` minus the smaller's), summed over the bins
    of feature 0 as :func:`_best_split1` sums them; ``hist[slot]`` is left unchanged."""
    sg = np.zeros(nb0)
    sv = np.zeros(nb0)
    for ii in range(start, end):
        if ii + PREFETCH_AHEAD < end:
            _prefetch_row(codes, rows[ii + PREFETCH_AHEAD], gz, w)
        i = rows[ii]
        bb = codes[i, 0]
        sg[bb] += gz[i]
        sv[bb] += w[i]
    h = hist[slot]
    a0 = 0.0
    a1 = 0.0
    b0 = 0.0
    b1 = 0.0
    for b in range(nb0):
        a0 += sg[b]
        a1 += sv[b]
        b0 += h[0, b, 0] - sg[b]
        b1 += h[0, b, 1] - sv[b]
    tot_small[0] = a0
    tot_small[1] = a1
    tot_large[0] = b0
    tot_large[1] = b1


@internal
def grow_boost_tree(
    codes,
    codes_t,
    n_bins,
    gz,
    w,
    rows,
    n_rows,
    max_leaves,
    min_leaf,
    max_depth,
    hist,
    buf,
    feat,
    split_bin,
    split_hi,
    left,
    right,
    start,
    end,
    depth,
    node_tot,
    fperm,
    root_ready,
    lam,
):
    """:func:`grow_tree` best first for one response ``gz`` (n,) (boosting's class trees): the
    same tree, from ``K = 1`` histograms and split search; ``codes_t`` (p, n) are the bins
    feature-major (the partitions read one feature of many rows); ``hist`` has
    ``hist_width(1, min_leaf)`` columns. With ``root_ready`` (the root histogram of every row
    in ``hist[0]``) ``rows`` is not read: the rows are ``0..n_rows-1``."""
    n_slots = hist.shape[0]
    max_nodes = feat.shape[0]
    pend, gains, free = _queue(n_slots)
    n_free = n_slots - 1
    n_pend = 0
    s0 = free[n_free]
    counts = min_leaf > 1
    if hist.shape[3] != 2 + int(counts):
        raise ValueError("grow_boost_tree: hist must have hist_width(1, min_leaf) columns")
    _open_node(0, 0, n_rows, 0, feat, split_bin, split_hi, left, right, start, end, depth)
    if not (root_ready and s0 == 0 and not counts):
        _build_hist1(codes, rows, start[0], n_rows, gz, w, hist, s0, counts)
    g, f, b = _best_split1(hist, s0, n_bins, min_leaf, node_tot[0], n_rows, counts, fperm, lam)
    n_nodes = 1
    n_leaves = 1
    if g > 0.0 and max_depth > 0 and max_leaves > 1:
        _push(pend, gains, n_pend, 0, g, f, b, s0)
        n_pend += 1
    else:
        n_free += 1

    while n_pend > 0 and n_leaves < max_leaves and n_nodes + 2 <= max_nodes:
        node, f, b, slot = _pop(pend, gains, n_pend, max_leaves > 0)
        n_pend -= 1
        s = start[node]
        e = end[node]
        nl = _partition(rows, buf, s, e, codes_t[f], b, node == 0 and root_ready)
        lc = n_nodes
        rc = n_nodes + 1
        n_nodes += 2
        n_leaves += 1
        feat[node] = f
        split_bin[node] = b
        split_hi[node] = _gap_end(hist, slot, f, b, n_bins[f], 1)
        left[node] = lc
        right[node] = rc
        _open_node(lc, s, s + nl, depth[node] + 1, feat, split_bin, split_hi, left, right, start, end, depth)
        _open_node(rc, s + nl, e, depth[node] + 1, feat, split_bin, split_hi, left, right, start, end, depth)
        small = lc if nl <= e - s - nl else rc
        if n_leaves == max_leaves or depth[lc] >= max_depth:
            # neither child will be split: only their totals are needed, which the split
            # search sums over the first feature's bins -- the same sums from that feature alone
            _leaf_totals(
                codes,
                rows,
                start[small],
                end[small],
                gz,
                w,
                hist,
                slot,
                n_bins[0],
                node_tot[small],
                node_tot[lc + rc - small],
            )
            node_tot[lc, 2] = end[lc] - start[lc]
            node_tot[rc, 2] = end[rc] - start[rc]
            free[n_free] = slot
            n_free += 1
            continue
        # histograms: smaller child built, larger by subtraction in the parent's slot
        n_free -= 1
        snew = free[n_free]
        _build_hist1(codes, rows, start[small], end[small], gz, w, hist, snew, counts)
        _subtract_hist(hist, slot, snew)
        for c in (lc, rc):
            sc = snew if c == small else slot
            g, f2, b2 = _best_split1(hist, sc, n_bins, min_leaf, node_tot[c], end[c] - start[c], counts, fperm, lam)
            if g > 0.0 and depth[c] < max_depth:
                _push(pend, gains, n_pend, c, g, f2, b2, sc)
                n_pend += 1
            else:
                free[n_free] = sc
                n_free += 1
    if root_ready and n_nodes == 1:
        for i in range(n_rows):
            rows[i] = i
    return n_nodes
