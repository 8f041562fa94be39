"""Weighted least-squares and Gini trees on pre-binned features (numba).

One histogram engine grows every tree of the package:

* **regression trees** for boosting ([ZJLY] Algorithm 1): best-first growth to at
  most ``max_leaves`` terminal nodes, each split the one with the largest weighted
  squared-error reduction over all current leaves, leaf value the weighted mean;
* **classification trees** (CART; Breiman et al. 1984): the same engine with the ``K`` one-hot class
  indicators as a multi-output response. For indicator responses the weighted squared-error
  reduction summed over the outputs *is* the decrease of the weighted Gini impurity
  (``sum_k W_k (1 - W_k/W) = W * Gini``), so no separate Gini code is needed. Trees are grown
  depth first to purity and pruned by minimal cost-complexity (weakest-link) pruning.

Split search is over histograms of pre-binned features (LightGBM style): every feature is
mapped once to at most ``max_bins`` ordered bins (exact when a feature has at most
``max_bins`` distinct values, otherwise cut at midpoints between distinct values so that the
bins hold roughly equal counts); a node's histogram holds, per feature and bin,
``sum w z``, ``sum w`` and the count; the smaller child's histogram is built from its rows and
the larger child's is obtained by subtraction from the parent's. A split "bin <= b" is
equivalent to ``x <= thresholds[f][b]`` on the raw scale, which is how fitted trees predict on
new data.

Conventions (for reproducibility): gains within a relative ``1e-10`` of each other count as
tied (so that round-off in the histogram sums, e.g. from reordering or replicating rows, does
not decide), and among tied gains the first feature in the search order (the identity here;
boosting draws a random order per tree from ``random_state``) and then the smallest
threshold win (and, for the next leaf to split, the earliest created leaf); a split must leave at
least ``min_leaf`` rows in each child and have a
gain larger than ``1e-12`` times the node's score ``sum_k G_k^2 / W``.

Layout of a fitted tree (flat arrays, node 0 is the root; ``left == -1`` marks a leaf):
``feat`` (int32), ``bin`` (int32), ``thr`` (float64), ``left``/``right`` (int32), ``value``
(float64, leaf outputs; for multi-output trees ``(n_nodes, K)``).

Example
-------
>>> import numpy as np
>>> from cohstats.solvers.trees.grow import make_bins, fit_regression_tree, predict_tree
>>> rng = np.random.default_rng(0)
>>> X = rng.normal(size=(200, 3)); z = (X[:, 0] > 0) + 0.1 * rng.normal(size=200)
>>> codes, thr, nb = make_bins(X, 255)
>>> t = fit_regression_tree(codes, nb, thr, z, np.ones(200), max_leaves=2)
>>> int(t["feat"][0]), abs(float(t["thr"][0])) < 0.1, t["n_leaves"]
(0, True, 2)
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir as _ir
from numba import types as _types
from numba.core.extending import intrinsic

from cohstats._numba_cache import internal, njit

from cohstats.solvers.trees.bins import apply_bins, make_bins  # noqa: F401 - binning lived here

GAIN_RTOL = 1e-12
TIE_RTOL = 1e-10

#: rows ahead whose data the gathering loops ask the CPU to fetch: a node's rows are sorted but
#: may be spread over data larger than the caches, and the misses of each row would otherwise
#: stall the loop over its features
PREFETCH_AHEAD = 16


@intrinsic
def _prefetch(typingctx, arr, k):
    """Start loading the cache line holding element ``k`` of the C-contiguous array ``arr``
    (flat offset; for a 2-D ``(n, p)`` array ``arr[i, j]`` is ``k = i * p + j``) -- a hint to
    the CPU (LLVM's ``prefetch``, read, keep in every level): it never faults and changes no
    result. LightGBM's histogram loops prefetch the same way."""
    if not (isinstance(arr, _types.Array) and arr.layout == "C" and isinstance(k, _types.Integer)):
        return None

    def codegen(context, builder, signature, args):
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        off = context.cast(builder, args[1], signature.args[1], _types.intp)
        ptr = builder.gep(ary.data, [off])
        i8p = _ir.IntType(8).as_pointer()
        i32 = _ir.IntType(32)
        fnty = _ir.FunctionType(_ir.VoidType(), [i8p, i32, i32, i32])
        fn = builder.module.declare_intrinsic("llvm.prefetch", [i8p], fnty)
        builder.call(fn, [builder.bitcast(ptr, i8p), i32(0), i32(3), i32(1)])
        return context.get_dummy_value()

    return _types.void(arr, k), codegen


@njit(cache=True, nogil=True)
def _build_hist(codes, rows, start, end, gz, w, hist, slot, counts):
    """hist[slot, f, b, :] = (sum gz[:, k] for k < K, sum w, count) over rows[start:end].

    The count column exists (and is filled) only when ``counts`` is true (it is needed for
    ``min_leaf > 1``; with ``min_leaf = 1`` a child is admissible when its weight is positive):
    without it a feature's histogram of ``K = 1`` response is 255 pairs of doubles, and all
    ``p`` of them stay in the first-level cache while rows are added (see
    :func:`hist_width`).
    """
    p = codes.shape[1]
    K = gz.shape[1]
    h = hist[slot]
    h[:] = 0.0
    if K == 1 and not counts:
        for ii in range(start, end):
            i = rows[ii]
            g0 = gz[i, 0]
            wi = w[i]
            for f in range(p):
                bb = codes[i, f]
                h[f, bb, 0] += g0
                h[f, bb, 1] += wi
    elif K == 1:
        for ii in range(start, end):
            i = rows[ii]
            g0 = gz[i, 0]
            wi = w[i]
            for f in range(p):
                bb = codes[i, f]
                h[f, bb, 0] += g0
                h[f, bb, 1] += wi
                h[f, bb, 2] += 1.0
    else:
        for ii in range(start, end):
            i = rows[ii]
            wi = w[i]
            for f in range(p):
                bb = codes[i, f]
                for k in range(K):
                    h[f, bb, k] += gz[i, k]
                h[f, bb, K] += wi
                if counts:
                    h[f, bb, K + 1] += 1.0


@njit(cache=True, nogil=True)
def build_root_hist(codes, gz, w, hist):
    """``hist[0]`` = the histogram of every row (``K = 1`` response ``gz`` (n,), weights ``w``,
    no count column) in row order: :func:`_build_hist` over ``rows = 0..n-1`` without the
    indirection."""
    n, p = codes.shape
    h = hist[0]
    h[:] = 0.0
    for i in range(n):
        g0 = gz[i]
        wi = w[i]
        for f in range(p):
            bb = codes[i, f]
            h[f, bb, 0] += g0
            h[f, bb, 1] += wi


@internal
def _subtract_hist(hist, slot, other):
    """``hist[slot] -= hist[other]`` (a loop: array arithmetic would compile shape checks)."""
    a = hist[slot]
    b = hist[other]
    for f in range(a.shape[0]):
        for bb in range(a.shape[1]):
            for k in range(a.shape[2]):
                a[f, bb, k] -= b[f, bb, k]


@njit(cache=True, nogil=True)
def _best_split(hist, slot, n_bins, K, min_leaf, tot, cnt, counts, fperm, lam):
    """Best split of the node (``cnt`` rows) whose histogram is in ``slot``.

    ``tot`` (K + 2,) receives the node totals. Returns (gain, feature, bin); gain is -1 when
    no admissible split exists. ``lam >= 0`` is an L2 penalty on the leaf values: a node's
    score is ``sum_k G_k^2 / (W + lam)`` (XGBoost's structure score; ``lam = 0``: the
    weighted squared-error reduction).
    """
    h = hist[slot]
    p = h.shape[0]
    tot[:] = 0.0
    for b in range(n_bins[0]):
        for k in range(K + 1):
            tot[k] += h[0, b, k]
    tot[K + 1] = cnt
    W = tot[K]
    C = cnt
    best_gain = -1.0
    best_f = -1
    best_b = -1
    if C < 2 * min_leaf or W <= 0.0:
        return best_gain, best_f, best_b
    parent = 0.0
    for k in range(K):
        parent += tot[k] * tot[k]
    parent /= W + lam
    tol = GAIN_RTOL * parent
    GL = np.empty(K)
    for fi in range(p):
        f = fperm[fi]
        GL[:] = 0.0
        WL = 0.0
        CL = 0.0
        for b in range(n_bins[f] - 1):
            for k in range(K):
                GL[k] += h[f, b, k]
            WL += h[f, b, K]
            if counts:
                CL += h[f, b, K + 1]
                if CL < min_leaf:
                    continue
                if C - CL < min_leaf:
                    break
            WR = W - WL
            if WL <= 0.0 or WR <= 0.0:
                continue
            sl = 0.0
            sr = 0.0
            for k in range(K):
                gl = GL[k]
                gr = tot[k] - gl
                sl += gl * gl
                sr += gr * gr
            gain = sl / (WL + lam) + sr / (WR + lam) - parent
            if gain > best_gain + TIE_RTOL * abs(best_gain):
                best_gain = gain
                best_f = f
                best_b = b
    if best_gain <= tol:
        return -1.0, -1, -1
    return best_gain, best_f, best_b


@njit(cache=True, nogil=True, inline="always")  # (small: no call, no literal twins)
def _queue(n_slots):
    """Empty queue of pending leaves: ``pend[q] = (node, feature, bin, slot)``, their gains, and
    the stack of free histogram slots (all free; slot 0 on top)."""
    pend = np.empty((n_slots, 4), np.int64)
    gains = np.empty(n_slots)
    free = np.empty(n_slots, np.int64)
    for s in range(n_slots):
        free[s] = n_slots - 1 - s
    return pend, gains, free


@njit(cache=True, nogil=True, inline="always")  # (small: no call, no literal twins)
def _pop(pend, gains, n_pend, best_first):
    """Remove and return ``(node, feature, bin, slot)`` of the next leaf to split: the largest
    gain (the earliest created among ties), or depth first the last one queued; the order of
    the rest is kept."""
    q = n_pend - 1
    if best_first:
        q = 0
        for r in range(1, n_pend):
            if gains[r] > gains[q] + TIE_RTOL * abs(gains[q]):
                q = r
    node = pend[q, 0]
    f = pend[q, 1]
    b = pend[q, 2]
    slot = pend[q, 3]
    for r in range(q, n_pend - 1):
        for k in range(4):
            pend[r, k] = pend[r + 1, k]
        gains[r] = gains[r + 1]
    return node, f, b, slot


@njit(cache=True, nogil=True, inline="always")  # (small: no call, no literal twins)
def _push(pend, gains, n_pend, node, g, f, b, slot):
    pend[n_pend, 0] = node
    pend[n_pend, 1] = f
    pend[n_pend, 2] = b
    pend[n_pend, 3] = slot
    gains[n_pend] = g


@internal
def _partition(rows, buf, s, e, col, b, identity):
    """Stable partition of ``rows[s:e]`` into the rows with ``col[i] <= b`` and the others;
    returns the size of the first part. ``identity``: the rows are ``s..e-1`` (not read)."""
    nl = 0
    nr = 0
    # branch-free (the side is unpredictable): write both, advance one; position s + nl <= ii
    # has already been read
    if identity:
        for i in range(s, e):
            go = np.int64(col[i] <= b)
            rows[s + nl] = i
            buf[nr] = i
            nl += go
            nr += 1 - go
    else:
        for ii in range(s, e):
            i = rows[ii]
            go = np.int64(col[i] <= b)
            rows[s + nl] = i
            buf[nr] = i
            nl += go
            nr += 1 - go
    for r in range(nr):
        rows[s + nl + r] = buf[r]
    return nl


@njit(cache=True, nogil=True, inline="always")  # (small: no call, no literal twins)
def _open_node(c, s, e, dep, feat, split_bin, split_hi, left, right, start, end, depth):
    """Node ``c`` as a leaf owning ``rows[s:e]`` at depth ``dep``."""
    feat[c] = -1
    split_bin[c] = -1
    split_hi[c] = -1
    left[c] = -1
    right[c] = -1
    start[c] = s
    end[c] = e
    depth[c] = dep


@njit(cache=True, nogil=True, inline="always")  # (small: no call, no literal twins)
def _gap_end(hist, slot, f, b, nbf, wcol):
    """Last bin of the empty gap above bin ``b`` of feature ``f`` in the histogram ``slot``
    (``wcol``: its weight column)."""
    hi = b
    while hi + 1 < nbf - 1 and hist[slot, f, hi + 1, wcol] == 0.0:
        hi += 1
    return hi


@njit(cache=True, nogil=True)
def grow_tree(
    codes,
    n_bins,
    gz,
    w,
    rows,
    n_rows,
    max_leaves,
    min_leaf,
    max_depth,
    best_first,
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
    root_ready=False,
    lam=0.0,
):
    """Grow one tree on rows[:n_rows] (partitioned in place so every node owns a segment).

    Parameters
    ----------
    codes : (n, p) uint8/uint16 binned features; n_bins : (p,) int64
    gz : (n, K) float64, ``w_i z_ik``; w : (n,) float64 weights
    rows : (n,) int64 row indices (first n_rows used; reordered in place); buf: scratch (n,)
    max_leaves, min_leaf, max_depth : growth limits
    best_first : True: split the leaf with the largest gain next (to ``max_leaves``);
        False: depth first (used to grow full trees; needs fewer histogram slots)
    hist : (slots, p, max_bin, hist_width(K, min_leaf)) float64 workspace; slots >=
        min(max_leaves, max_depth + 1) + 2
    feat, split_bin, left, right, start, end, depth : (max_nodes,) int arrays (output)
    split_hi : (max_nodes,) int output: the node's rows have no (positive-weight) values in
        bins ``split_bin + 1 .. split_hi``; the raw-scale threshold is placed in the middle
        of that empty gap, ``(thr[split_bin] + thr[split_hi]) / 2`` (as a tree grown on the
        raw values splits midway between the node's neighbouring values)
    node_tot : (max_nodes, K + 2) float64 output: per node sum of gz, sum w, count
    fperm : (p,) int64, the order in which features are searched; among tied gains the first
        feature in this order wins (identity: the smallest index; boosting draws a random
        order per tree from ``random_state``, as scikit-learn's trees do)
    root_ready : the caller has already put the root histogram in ``hist[0]`` (with
        :func:`build_root_hist`, straight from the rows without the index; needs
        ``min_leaf == 1``)
    lam : L2 penalty on the leaf values (boosting's ``lambda_l2``): splits maximise the
        decrease of ``sum_leaves -G^2 / (W + lam)``, whose leaf values are ``G / (W + lam)``
        (0: least squares)

    Returns
    -------
    n_nodes : int
    """
    K = gz.shape[1]
    n_slots = hist.shape[0]
    max_nodes = feat.shape[0]
    pend, gains, free = _queue(n_slots)
    n_free = n_slots - 1
    n_pend = 0
    s0 = free[n_free]
    counts = min_leaf > 1
    if hist.shape[3] != K + 1 + int(counts):
        raise ValueError("grow_tree: hist must have hist_width(K, min_leaf) columns")
    _open_node(0, 0, n_rows, 0, feat, split_bin, split_hi, left, right, start, end, depth)
    if not (root_ready and s0 == 0 and not counts):
        # (start[0], not the constant 0: a constant would compile a second specialisation)
        _build_hist(codes, rows, start[0], n_rows, gz, w, hist, s0, counts)
    g, f, b = _best_split(hist, s0, n_bins, K, min_leaf, node_tot[0], n_rows, counts, fperm, lam)
    n_nodes = 1
    n_leaves = 1
    if g > 0.0 and max_depth > 0 and max_leaves > 1:
        _push(pend, gains, n_pend, 0, g, f, b, s0)
        n_pend += 1
    else:
        n_free += 1

    while n_pend > 0 and n_leaves < max_leaves and n_nodes + 2 <= max_nodes:
        node, f, b, slot = _pop(pend, gains, n_pend, best_first)
        n_pend -= 1
        s = start[node]
        e = end[node]
        nl = _partition(rows, buf, s, e, codes[:, f], b, False)
        lc = n_nodes
        rc = n_nodes + 1
        n_nodes += 2
        n_leaves += 1
        feat[node] = f
        split_bin[node] = b
        # (histogram still the node's own)
        split_hi[node] = _gap_end(hist, slot, f, b, n_bins[f], K)
        left[node] = lc
        right[node] = rc
        _open_node(lc, s, s + nl, depth[node] + 1, feat, split_bin, split_hi, left, right, start, end, depth)
        _open_node(rc, s + nl, e, depth[node] + 1, feat, split_bin, split_hi, left, right, start, end, depth)
        # histograms: smaller child built, larger by subtraction in the parent's slot
        n_free -= 1
        snew = free[n_free]
        small = lc if nl <= e - s - nl else rc
        _build_hist(codes, rows, start[small], end[small], gz, w, hist, snew, counts)
        _subtract_hist(hist, slot, snew)
        for c in (lc, rc):
            sc = snew if c == small else slot
            g, f2, b2 = _best_split(hist, sc, n_bins, K, min_leaf, node_tot[c], end[c] - start[c], counts, fperm, lam)
            if g > 0.0 and depth[c] < max_depth:
                _push(pend, gains, n_pend, c, g, f2, b2, sc)
                n_pend += 1
            else:
                free[n_free] = sc
                n_free += 1
    return n_nodes


def hist_width(K, min_leaf):
    """Columns of a histogram bin: the ``K`` sums of ``w z``, the sum of ``w``, and the row
    count only when ``min_leaf > 1`` needs it."""
    return int(K) + 1 + int(int(min_leaf) > 1)


def _n_slots(max_leaves, max_depth, best_first):
    if best_first:
        return int(min(max_leaves, 2 ** min(max_depth, 30))) + 2
    return int(min(max_leaves, max_depth + 1)) + 2


# ------------------------------------------------------------------------------ prediction


@njit(cache=True, nogil=True)
def tree_leaf_index(X, feat, thr, left, right):
    """Leaf node reached by each row of raw ``X`` (``x[f] <= thr`` goes left)."""
    n = X.shape[0]
    out = np.empty(n, np.int64)
    for i in range(n):
        node = 0
        while left[node] >= 0:
            if X[i, feat[node]] <= thr[node]:
                node = left[node]
            else:
                node = right[node]
        out[i] = node
    return out


def predict_tree(tree, X):
    """Leaf values of a tree returned by :func:`fit_regression_tree` for raw ``X``."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    leaf = tree_leaf_index(X, tree["feat"], tree["thr"], tree["left"], tree["right"])
    return tree["value"][leaf]


def _alloc_nodes(max_nodes, K):
    return dict(
        feat=np.empty(max_nodes, np.int64),
        split_bin=np.empty(max_nodes, np.int64),
        split_hi=np.empty(max_nodes, np.int64),
        left=np.empty(max_nodes, np.int64),
        right=np.empty(max_nodes, np.int64),
        start=np.empty(max_nodes, np.int64),
        end=np.empty(max_nodes, np.int64),
        depth=np.empty(max_nodes, np.int64),
        node_tot=np.zeros((max_nodes, K + 2)),
    )


def _grow(codes, n_bins, gz, w, rows, max_leaves, min_leaf, max_depth, best_first):
    n = codes.shape[0]
    K = gz.shape[1]
    max_leaves = int(min(max_leaves, max(len(rows), 1)))
    max_nodes = 2 * max_leaves - 1
    nd = _alloc_nodes(max_nodes, K)
    hist = np.zeros(
        (_n_slots(max_leaves, max_depth, best_first), codes.shape[1], int(n_bins.max()), hist_width(K, min_leaf))
    )
    r = np.empty(n, np.int64)
    r[: len(rows)] = rows
    buf = np.empty(n, np.int64)
    nn = grow_tree(
        codes,
        n_bins,
        gz,
        w,
        r,
        len(rows),
        max_leaves,
        min_leaf,
        max_depth,
        best_first,
        hist,
        buf,
        nd["feat"],
        nd["split_bin"],
        nd["split_hi"],
        nd["left"],
        nd["right"],
        nd["start"],
        nd["end"],
        nd["depth"],
        nd["node_tot"],
        np.arange(codes.shape[1], dtype=np.int64),
        False,
        0.0,
    )
    out = {k: v[:nn].copy() for k, v in nd.items()}
    out["rows"] = r[: len(rows)].copy()
    return out


def fit_regression_tree(codes, n_bins, thresholds, z, w, *, max_leaves=8, min_leaf=1, max_depth=64, rows=None):
    """Weighted least-squares regression tree, grown best first.

    Parameters
    ----------
    codes, n_bins, thresholds : from :func:`make_bins`
    z : (n,) responses; w : (n,) positive weights
    max_leaves : int, terminal nodes at most
    min_leaf : int, minimum rows per leaf
    max_depth : int
    rows : optional subset of row indices

    Returns
    -------
    dict with ``feat``, ``bin``, ``thr``, ``left``, ``right``, ``value`` (weighted leaf means),
    ``gain`` (weighted SSE reduction of each split, 0 at leaves), ``n_leaves``, ``rows``
    (row order partitioned by leaf) and ``start``/``end`` (segments of ``rows``).

    Examples
    --------
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]]); codes, thr, nb = make_bins(X)
    >>> t = fit_regression_tree(codes, nb, thr, np.array([0., 0., 1., 1.]), np.ones(4))
    >>> [float(v) for v in (t["thr"][0], t["value"][t["left"][0]], t["value"][t["right"][0]])]
    [1.5, 0.0, 1.0]
    """
    z = np.asarray(z, dtype=np.float64)
    w = np.asarray(w, dtype=np.float64)
    gz = np.ascontiguousarray((w * z)[:, None])
    if rows is None:
        rows = np.arange(codes.shape[0])
    t = _grow(codes, n_bins, gz, w, np.asarray(rows, np.int64), max_leaves, min_leaf, max_depth, True)
    return _finish(t, thresholds, 1)


def _finish(t, thresholds, K):
    tot = t["node_tot"]
    W = tot[:, K]
    value = tot[:, :K] / np.where(W > 0, W, 1.0)[:, None]
    t["value"] = value[:, 0] if K == 1 else value
    leaf = t["left"] < 0
    thr = np.full(len(leaf), np.nan)
    f = t["feat"]
    thr[~leaf] = 0.5 * (thresholds[f[~leaf], t["split_bin"][~leaf]] + thresholds[f[~leaf], t.pop("split_hi")[~leaf]])
    t["thr"] = thr
    t["bin"] = t.pop("split_bin")
    # gain of each split = score(children) - score(parent)
    score = (tot[:, :K] ** 2).sum(1) / np.where(W > 0, W, 1.0)
    gain = np.zeros(len(leaf))
    gain[~leaf] = score[t["left"][~leaf]] + score[t["right"][~leaf]] - score[~leaf]
    t["gain"] = gain
    t["n_leaves"] = int(leaf.sum())
    return t


# ------------------------------------------------------------------------------ CART


@njit(cache=True, nogil=True)
def _prunable(t, left, collapsed, parent):
    """Internal node ``t`` is still a candidate: not collapsed and not inside a collapsed subtree."""
    if left[t] < 0 or collapsed[t]:
        return False
    a = parent[t]
    while a >= 0:
        if collapsed[a]:
            return False
        a = parent[a]
    return True


@njit(cache=True, nogil=True)
def cc_prune_sequence(left, right, node_err):
    """Minimal cost-complexity (weakest-link) pruning of a fitted tree.

    Parameters
    ----------
    left, right : child arrays (-1 at leaves)
    node_err : (n_nodes,) resubstitution error R(t) of each node as a leaf

    Returns
    -------
    prune_alpha : (n_nodes,) the complexity at which each internal node is collapsed (inf for
        leaves); the subtree for complexity ``a`` stops at every node with ``prune_alpha <= a``.
    alphas : sorted distinct pruning levels (first entry 0).
    """
    nn = left.shape[0]
    parent = np.full(nn, -1, np.int64)
    for t in range(nn):
        if left[t] >= 0:
            parent[left[t]] = t
            parent[right[t]] = t
    collapsed = np.zeros(nn, np.bool_)
    prune_alpha = np.full(nn, np.inf)
    R_sub = np.zeros(nn)
    n_leaf = np.zeros(nn, np.int64)
    alphas = [0.0]
    # nodes are numbered so that children have larger ids than parents
    while True:
        for t in range(nn - 1, -1, -1):
            if left[t] < 0 or collapsed[t]:
                R_sub[t] = node_err[t]
                n_leaf[t] = 1
            else:
                R_sub[t] = R_sub[left[t]] + R_sub[right[t]]
                n_leaf[t] = n_leaf[left[t]] + n_leaf[right[t]]
        if n_leaf[0] == 1:
            break
        best = np.inf
        for t in range(nn):
            if _prunable(t, left, collapsed, parent):
                gt = (node_err[t] - R_sub[t]) / (n_leaf[t] - 1)
                if gt < best:
                    best = gt
        thr = best * (1.0 + 1e-12) + 1e-15
        for t in range(nn):
            if _prunable(t, left, collapsed, parent):
                gt = (node_err[t] - R_sub[t]) / (n_leaf[t] - 1)
                if gt <= thr:
                    collapsed[t] = True
                    prune_alpha[t] = max(best, 0.0)
        alphas.append(max(best, 0.0))
    out = np.empty(len(alphas))
    for i in range(len(alphas)):
        out[i] = alphas[i]
    return prune_alpha, out


@njit(cache=True, nogil=True)
def cart_leaf_index(X, feat, thr, left, right, prune_alpha, alpha):
    """Terminal node of each row of raw ``X`` in the subtree pruned at complexity ``alpha``."""
    n = X.shape[0]
    out = np.empty(n, np.int64)
    for i in range(n):
        node = 0
        while left[node] >= 0 and prune_alpha[node] > alpha:
            if X[i, feat[node]] <= thr[node]:
                node = left[node]
            else:
                node = right[node]
        out[i] = node
    return out


def fit_class_tree(codes, n_bins, thresholds, y, K, w=None, *, min_leaf=1, max_depth=30, rows=None):
    """Full-grown weighted Gini classification tree with its cost-complexity pruning sequence.

    Parameters
    ----------
    codes, n_bins, thresholds : from :func:`make_bins`
    y : (n,) int class codes 0..K-1; w : optional (n,) weights
    min_leaf, max_depth : growth limits (the tree is grown until nodes are pure or too small)
    rows : optional subset of rows

    Returns
    -------
    dict with the node arrays, ``counts`` (n_nodes, K) weighted class totals, ``value``
    (class proportions), ``node_err`` (weighted misclassification of each node as a leaf,
    divided by the total weight), ``prune_alpha`` and ``alphas`` (see
    :func:`cc_prune_sequence`).
    """
    n = codes.shape[0]
    if codes.ndim != 2 or codes.shape[1] == 0:
        raise ValueError(
            "a classification tree needs at least one predictor, and the model has "
            "none (a formula such as 'y ~ 1'): add predictors to the formula"
        )
    y = np.asarray(y, np.int64)
    w = np.ones(n) if w is None else np.asarray(w, np.float64)
    if rows is None:
        rows = np.arange(n)
    rows = np.asarray(rows, np.int64)
    # the tree depends on the weights only through their ratios: rescale them to mean 1 over the
    # rows so that weights of order 1e+-300 neither overflow nor underflow in the Gini sums
    wmax = float(np.max(w[rows])) if len(rows) else 0.0
    if wmax > 0 and np.isfinite(wmax):
        w = w / wmax
        w = w * (len(rows) / float(np.sum(w[rows])))
    gz = np.zeros((n, K))
    gz[np.arange(n), y] = w
    t = _grow(codes, n_bins, gz, w, rows, len(rows), min_leaf, max_depth, False)
    t = _finish(t, thresholds, K)
    counts = t["node_tot"][:, :K]
    Wtot = counts[0].sum()
    t["counts"] = counts
    t["node_err"] = (counts.sum(1) - counts.max(1)) / Wtot
    t["prune_alpha"], t["alphas"] = cc_prune_sequence(t["left"], t["right"], t["node_err"])
    return t
