"""Multiclass boosting with regression trees (numba): GentleBoost.C and its baselines.

One engine runs [ZJLY] Algorithm 1 (GentleBoost.C) and the baselines of the paper's Table 2.
Each round fits, for every class ``j``, a weighted least-squares regression tree
(:mod:`cohstats.solvers.trees.grow`, best first to ``max_leaves`` terminal nodes) to a working
response ``z_ij`` with weights ``w_ij``. The engine hands the tree grower the products
``w_ij z_ij`` and the weights ``w_ij`` (all a least-squares split search and the leaf means
need), never ``z`` itself, so no response has to be divided out and capped.

The methods have their own codes (``BOOST_*``; they are not the scalar loss codes of
:mod:`cohstats.losses.scalar`):

=================== ===================== ==================================================== =======
code                method                ``w z`` and ``w`` (``I = I[j = c_i]``)                update
=================== ===================== ==================================================== =======
BOOST_COH (0)       GentleBoost.C         ``w z = rho (I - beta_j)``, ``w = max(beta_j (1 -     centred
                                          beta_j), w_floor)``, ``beta = beta^{c_i}(g(x_i))``
                                          of eq (5)
BOOST_LOGIT (1)     MulLogitBoost         as BOOST_COH with ``beta = softmax(g)``, ``rho = 1``  centred
BOOST_EXP (2)       GentleBoost.E         ``w = exp(-g_{c_i}(x_i))``, ``z = I - 1/m``           centred
BOOST_MH (3)        AdaBoost.MH (real)    labels ``Y = 2 I - 1``, ``w = D = exp(-Y F_j)`` (sum  added
                                          1), leaf values ``0.5 log((W+ + eps)/(W- + eps))``,
                                          eps=1/(nm)
BOOST_MH_DISCRETE   AdaBoost.MH (discr.)  as BOOST_MH, leaf values ``sign(W+ - W-)`` and one    added
(4)                                       step ``alpha = 0.5 log((W_right + eps)/(W_wrong +
                                          eps))`` per round
=================== ===================== ==================================================== =======

For BOOST_COH and BOOST_LOGIT the leaf value ``sum w z / sum w = rho sum (I - beta_j) / sum
beta_j (1 - beta_j)`` is the Newton step of the loss in the coordinate ``g_j`` (the diagonal of
the Hessian of the coherence loss is ``beta_j (1 - beta_j) / rho``, see the proof of Theorem
1), capped at ``+-max_delta`` (codes 0-2; the cap acts on steps, not on responses, so the
iteration keeps the minimiser of the loss as its fixed point).
"centred" means the increments ``r`` of a round become ``((m-1)/m) (r_j - mean_l r_l)``
(step (b) of Algorithm 1 applied to the round's fits, as in Friedman, Hastie & Tibshirani's
multiclass LogitBoost); with two classes this is exactly the Newton step of the binary loss.

**Step control.** Leaf values are multiplied by the shrinkage factor, and then the whole
round (all ``m`` trees) by the largest ``t`` in ``1, 1/2, 1/4, ...`` for which the weighted
training loss does not rise (beyond ``1e-14`` relative rounding); ``t = 1`` is the algorithm
as published. The round's direction is a descent direction for every loss here (the
centring is orthogonal to the gradient, whose rows sum to zero, and each class tree's
contribution is ``-rho sum_leaves (sum grad)^2 / sum w``), so such a ``t > 0`` exists. The
chosen ``t`` is folded into the stored leaf values.

**Randomness.** The feature search order of every tree (which of exactly tied splits wins)
and the row subsamples come from 64-bit keys drawn in Python from a numpy ``Generator``
(:func:`draw_keys`); inside the compiled code each key seeds a SplitMix64 stream (Steele,
Lea & Flood 2014), so a fit depends on its seed only through those keys.

**Compilation.** The fitting loop is compiled once per method code (:func:`boost_fitter`):
the code is a constant of the compiled function, so numba removes the branches of the other
methods before typing them, and a fit compiles only what its method reaches. Inputs, outputs
and buffers travel in the named tuples :class:`BoostData`, :class:`BoostSpec`,
:class:`BoostDraws`, :class:`BoostTrees` and :class:`BoostState`.

Trees are stored as flat arrays indexed ``[round, class, node]``; leaf values are stored
*before* centring, which is linear and is re-applied by the prediction functions.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from cohstats._numba_cache import internal, njit

from cohstats.losses.multiclass import mc_coh_loss, mc_lmult
from cohstats.solvers.trees.grow import _n_slots, build_root_hist, hist_width
from cohstats.solvers.trees.grow_boost import grow_boost_tree

from cohstats.solvers.trees.boost_predict import (  # noqa: F401 - the prediction lived here
    boost_decision,
    boost_staged_decision,
    boost_staged_error,
    margins_to_proba,
)
from cohstats.solvers.trees.boost_steps import (  # noqa: F401 - method codes and round pieces
    BOOST_CODES,
    BOOST_COH,
    BOOST_EXP,
    BOOST_LOGIT,
    BOOST_MH,
    BOOST_MH_DISCRETE,
    _copy_into,
    _increment,
    _mh_row_loss,
    _predict_round,
    _responses_exp,
    _responses_mh,
    _responses_newton,
    _sum,
    _trial_margins,
    _trial_newton,
    row_loss,
    softmax,
    working_response,
)

_RTOL_LOSS = 1e-14  # relative rounding allowance of the step control (sums of n terms)
_MAX_HALVINGS = 40

# SplitMix64 (Steele, Lea & Flood 2014): state increment and output mixing constants
_GAMMA = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_S11 = np.uint64(11)
_TWO_M53 = 1.0 / 9007199254740992.0


# ------------------------------------------------------------------------------ state


class BoostData(NamedTuple):
    """The training and validation data (read only).

    codes : (n, p) uint8/uint16 bins of the training rows; codes_t : (p, n) the same,
    feature-major (for the partitions of the tree grower); n_bins : (p,) int64 bins per feature;
    thresholds : (p, nb - 1) bin edges of :func:`cohstats.solvers.trees.grow.make_bins`;
    y : (n,) int64 class codes 0..m-1; sw : (n,) observation weights; Xv, yv, swv : raw
    validation rows (nv, p), their classes and weights (nv may be 0).
    """

    codes: np.ndarray
    codes_t: np.ndarray
    n_bins: np.ndarray
    thresholds: np.ndarray
    y: np.ndarray
    sw: np.ndarray
    Xv: np.ndarray
    yv: np.ndarray
    swv: np.ndarray


class BoostSpec(NamedTuple):
    """The settings of a fit (read only).

    m : classes; Ts : (H,) temperature of each round (its length is the number of rounds);
    shrinkage : leaf values are multiplied by this factor; max_delta : cap on the absolute
    Newton leaf values (codes 0-2), applied before shrinkage; max_leaves, min_leaf, max_depth :
    tree growth limits; w_floor : floor of the Newton weights ``beta (1 - beta)``;
    init_uniform : first round with ``beta = 1/m`` (Algorithm 1, step 1) instead of eq (5);
    lam : L2 penalty on the leaf values of codes 0-2 (the penalised Newton step ``sum g / (sum
    h + lam)`` of XGBoost and LightGBM; for the coherence loss ``h = beta (1 - beta) / rho``,
    so the tree sees ``rho lam`` beside its weights ``beta (1 - beta)``); n_sub : rows drawn
    without replacement every round to grow its trees (Friedman's stochastic gradient boosting;
    ``n``: every row): the leaf values come from those rows, the margins of all rows are
    updated, and the step control uses the loss of the drawn rows (for which the round's trees
    are a descent direction); n_iter_no_change, es_tol : stop when the weighted validation loss
    has not fallen below ``best - es_tol`` for this many rounds (``<= 0`` or no validation
    rows: never).
    """

    m: int
    Ts: np.ndarray
    shrinkage: float
    max_delta: float
    max_leaves: int
    min_leaf: int
    max_depth: int
    w_floor: float
    init_uniform: bool
    lam: float
    n_sub: int
    n_iter_no_change: int
    es_tol: float


class BoostDraws(NamedTuple):
    """Random keys (:func:`draw_keys`). permute : search the features of every tree in a
    random order (False: natural order); tree_keys : (H, m) uint64 keys of those orders;
    bag_keys : (H,) uint64 keys of the row subsamples."""

    permute: bool
    tree_keys: np.ndarray
    bag_keys: np.ndarray


class BoostTrees(NamedTuple):
    """The fitted trees (outputs), ``(H, m, max_nodes)``: feat, sbin, shi, left, right int64
    (``shi``: end of the empty bin gap above the split bin, see
    :func:`cohstats.solvers.trees.grow.grow_tree`); thr, value float64 raw-scale thresholds
    and leaf values (shrinkage and step size included); n_nodes : (H, m) int64."""

    feat: np.ndarray
    sbin: np.ndarray
    shi: np.ndarray
    left: np.ndarray
    right: np.ndarray
    thr: np.ndarray
    value: np.ndarray
    n_nodes: np.ndarray


class BoostState(NamedTuple):
    """Margins, per-round records and the histogram workspace.

    G, Gv : (n, m), (nv, m) in/out, the margin vectors of the training and validation rows
    (start at the initial margins); step_scale : (H,) the accepted step size of each round;
    train_err, train_loss, val_loss : (H,) weighted means after each round; hist : histogram
    workspace (slots, p, max_bin, ``hist_width(1, min_leaf)``) of the tree grower.
    """

    G: np.ndarray
    Gv: np.ndarray
    step_scale: np.ndarray
    train_err: np.ndarray
    train_loss: np.ndarray
    val_loss: np.ndarray
    hist: np.ndarray


# ------------------------------------------------------------------------------ random keys


def draw_keys(rng, H, m):
    """``(tree_keys (H, m), bag_keys (H,))`` uint64 from the numpy Generator ``rng``."""
    raw = rng.bit_generator.random_raw(H * (m + 1))
    raw = np.asarray(raw, dtype=np.uint64).reshape(H, m + 1)
    return np.ascontiguousarray(raw[:, :m]), np.ascontiguousarray(raw[:, m])


@internal
def _next_uniform(state):
    """SplitMix64: (new state, uniform double in [0, 1) from its top 53 bits)."""
    state = state + _GAMMA
    z = state
    z = (z ^ (z >> _S30)) * _MIX1
    z = (z ^ (z >> _S27)) * _MIX2
    z = z ^ (z >> _S31)
    return state, float(z >> _S11) * _TWO_M53


@njit(cache=True, nogil=True)
def _permute(key, out):
    """``out`` <- a uniformly random permutation of ``0..len(out)-1`` (Fisher-Yates) from the
    stream of ``key``."""
    p = out.shape[0]
    for i in range(p):
        out[i] = i
    s = key
    for i in range(p - 1, 0, -1):
        s, u = _next_uniform(s)
        k = int(u * (i + 1))
        t = out[i]
        out[i] = out[k]
        out[k] = t


@njit(cache=True, nogil=True)
def _draw_bag(key, n, ns, bag):
    """``ns`` of the ``n`` row indices, uniformly without replacement, in increasing order
    (selection sampling, Knuth's Algorithm S) into ``bag[:ns]``, from the stream of ``key``."""
    need = ns
    k = 0
    s = key
    for i in range(n):
        s, u = _next_uniform(s)
        if u * (n - i) < need:
            bag[k] = i
            k += 1
            need -= 1
            if need == 0:
                break


# ------------------------------------------------------------------------------ fitting


def _make_fit(KIND, BAG, VAL):
    """The compiled fitting loop of the method code ``KIND``, with row subsamples (``BAG``)
    and validation rows (``VAL``) or without (plain ints and bools: the closure captures
    nothing else, so numba's cache key is stable across processes)."""
    NEWTON = KIND == BOOST_COH or KIND == BOOST_LOGIT

    @njit(cache=True, nogil=True)
    def boost_fit(data, spec, draws, trees, state):
        """Run up to ``H`` rounds of boosting on binned training data (see the named tuples
        for the inputs). Returns (n_rounds, finite, best): rounds run; False if the margins
        became non-finite (the fit stops at the last finite round); the round (1-based) with
        the smallest validation loss (``n_rounds`` without validation rows)."""
        codes = data.codes
        n_bins = data.n_bins
        thresholds = data.thresholds
        y = data.y
        sw = data.sw
        Xv = data.Xv
        yv = data.yv
        swv = data.swv
        m = spec.m
        Ts = spec.Ts
        H = Ts.shape[0]
        w_floor = spec.w_floor
        lam = spec.lam
        ns = spec.n_sub
        feat = trees.feat
        sbin = trees.sbin
        shi = trees.shi
        left = trees.left
        right = trees.right
        thr = trees.thr
        value = trees.value
        n_nodes = trees.n_nodes
        G = state.G
        Gv = state.Gv
        hist = state.hist
        n, p = codes.shape
        nv = Xv.shape[0]
        max_nodes = feat.shape[2]
        # typed bools (not literals, which would compile twins of the helpers they are passed to)
        coh = KIND == BOOST_COH
        added = KIND == BOOST_MH or KIND == BOOST_MH_DISCRETE
        # class-major responses: the tree of class j reads GZ[j] and Wt[j] in place
        GZ = np.empty((m, n))
        Wt = np.empty((m, n))
        Lrow = np.empty(n)
        rows = np.empty(n, np.int32)
        buf = np.empty(n, np.int32)
        start = np.empty(max_nodes, np.int64)
        end = np.empty(max_nodes, np.int64)
        depth = np.empty(max_nodes, np.int64)
        node_tot = np.zeros((max_nodes, 3))
        R = np.empty((m, n))
        r = np.empty(m)
        inc = np.empty(m)
        fperm = np.arange(p)
        use_bag = BAG
        if use_bag != (ns < n) or VAL != (nv > 0):
            raise ValueError("boost_fit: compiled for other subsample or validation settings")
        # the root histogram straight from the row index when every row grows the tree
        direct_root = spec.min_leaf == 1 and not use_bag
        bag = np.arange(n)
        eps_mh = 1.0 / (n * m)
        swt = _sum(sw)
        swvt = _sum(swv)
        best = 0
        best_v = np.inf
        since = 0
        lfull = 0.0
        # current and trial margins; an accepted trial becomes current by swapping the buffers
        Gc = G
        Gt = np.empty((n, m))
        swapped = False
        for h in range(H):
            T = Ts[h]
            lam_t = lam * T if coh else lam
            if h == 0 or Ts[h] != Ts[h - 1]:
                # responses and loss at the current margins (later rounds reuse those computed
                # at the accepted trial of the step control; annealing: at this round's rho)
                if NEWTON:
                    uniform = h == 0 and spec.init_uniform
                    lt = _responses_newton(coh, Gc, y, sw, T, uniform, w_floor, GZ, Wt, Lrow)
                elif KIND == BOOST_EXP:
                    lt = _responses_exp(Gc, y, sw, GZ, Wt, Lrow)
                else:
                    lt = _responses_mh(Gc, y, sw, GZ, Wt, Lrow)
                lfull = swt * lt
            base = lfull
            if use_bag:
                _draw_bag(draws.bag_keys[h], n, ns, bag)
                base = 0.0
                for k in range(ns):
                    base += Lrow[bag[k]]
            rsum = 0.0  # discrete AdaBoost.MH: weighted agreement sum D Y h
            for j in range(m):
                if draws.permute:
                    _permute(draws.tree_keys[h, j], fperm)
                w = Wt[j]
                gz = GZ[j]
                if direct_root:
                    build_root_hist(codes, gz, w, hist)  # (the grower then sets ``rows`` itself)
                else:
                    for k in range(ns):
                        rows[k] = bag[k]
                nn = grow_boost_tree(
                    codes,
                    data.codes_t,
                    n_bins,
                    gz,
                    w,
                    rows,
                    ns,
                    spec.max_leaves,
                    spec.min_leaf,
                    spec.max_depth,
                    hist,
                    buf,
                    feat[h, j],
                    sbin[h, j],
                    shi[h, j],
                    left[h, j],
                    right[h, j],
                    start,
                    end,
                    depth,
                    node_tot,
                    fperm,
                    direct_root,
                    lam_t,
                )
                n_nodes[h, j] = nn
                for t in range(nn):
                    if left[h, j, t] >= 0:
                        value[h, j, t] = 0.0
                        f = feat[h, j, t]
                        thr[h, j, t] = 0.5 * (thresholds[f, sbin[h, j, t]] + thresholds[f, shi[h, j, t]])
                        continue
                    Gs = node_tot[t, 0]
                    Ws = node_tot[t, 1]
                    if KIND == BOOST_MH:
                        wp = 0.5 * (Ws + Gs)
                        wm = 0.5 * (Ws - Gs)
                        if wp < 0.0:
                            wp = 0.0
                        if wm < 0.0:
                            wm = 0.0
                        v = 0.5 * math.log((wp + eps_mh) / (wm + eps_mh))
                    elif KIND == BOOST_MH_DISCRETE:
                        v = 1.0 if Gs > 0.0 else (-1.0 if Gs < 0.0 else 0.0)
                        rsum += abs(Gs)
                    else:
                        v = Gs / (Ws + lam_t) if Ws > 0.0 else 0.0
                        if v > spec.max_delta:
                            v = spec.max_delta
                        elif v < -spec.max_delta:
                            v = -spec.max_delta
                    value[h, j, t] = v
                    if not use_bag:
                        for ii in range(start[t], end[t]):
                            R[j, rows[ii]] = v
                if use_bag:
                    # every row (drawn or not) through the tree, on the training bins
                    for i in range(n):
                        t = 0
                        while left[h, j, t] >= 0:
                            if codes[i, feat[h, j, t]] <= sbin[h, j, t]:
                                t = left[h, j, t]
                            else:
                                t = right[h, j, t]
                        R[j, i] = value[h, j, t]
            fac = spec.shrinkage
            if KIND == BOOST_MH_DISCRETE:
                if use_bag:
                    # the agreement of the drawn rows, relative to their share of D
                    wb = 0.0
                    for k in range(ns):
                        for j in range(m):
                            wb += Wt[j, bag[k]]
                    if wb > 0.0:
                        rsum /= wb
                if rsum > 1.0:
                    rsum = 1.0
                fac *= 0.5 * math.log((0.5 * (1.0 + rsum) + eps_mh) / (0.5 * (1.0 - rsum) + eps_mh))
            # the step control: trial margins G + t D (D the round's increments); their working
            # responses (for the next round) come with the loss, so an accepted full step costs
            # one pass, as the unguarded algorithm does
            tstep = 1.0
            k = 0
            while True:
                if NEWTON:
                    lt, err, finite = _trial_newton(coh, Gc, R, fac, tstep, y, sw, T, w_floor, Gt, GZ, Wt, Lrow)
                else:
                    err, finite = _trial_margins(added, Gc, R, fac, tstep, y, sw, Gt)
                    if KIND == BOOST_EXP:
                        lt = _responses_exp(Gt, y, sw, GZ, Wt, Lrow)
                    else:
                        lt = _responses_mh(Gt, y, sw, GZ, Wt, Lrow)
                lfull = swt * lt
                lnew = lfull
                if use_bag:
                    lnew = 0.0
                    for kk in range(ns):
                        lnew += Lrow[bag[kk]]
                if lnew <= base + _RTOL_LOSS * abs(base) or tstep == 0.0:
                    break
                if k >= _MAX_HALVINGS:
                    # no decrease above rounding level: the loss is at its minimum; a trial
                    # with step 0 gives the responses, loss and error at the current margins
                    tstep = 0.0
                    continue
                tstep *= 0.5
                k += 1
            state.step_scale[h] = tstep
            fac *= tstep
            for j in range(m):
                for t in range(n_nodes[h, j]):
                    if left[h, j, t] < 0:
                        value[h, j, t] *= fac
            if tstep > 0.0:
                Gc, Gt = Gt, Gc
                swapped = not swapped
            if not finite:
                if swapped:
                    _copy_into(G, Gc)
                return h, False, max(best, 1) if h > 0 else 0
            state.train_loss[h] = lfull / swt
            state.train_err[h] = err / swt
            if VAL:
                lv = 0.0
                for i in range(nv):
                    _predict_round(Xv, i, h, m, feat, thr, left, right, value, r)
                    _increment(added, r, m, inc)
                    g = Gv[i]
                    for j in range(m):
                        g[j] += inc[j]
                    c = yv[i]
                    if KIND == BOOST_COH:
                        li = mc_coh_loss(g, c, T)
                    elif KIND == BOOST_LOGIT:
                        li = mc_lmult(g, c)
                    elif KIND == BOOST_EXP:
                        li = math.exp(-g[c])
                    else:
                        li = _mh_row_loss(g, c)
                    lv += swv[i] * li
                lv /= swvt
                state.val_loss[h] = lv
                if lv < best_v - spec.es_tol:
                    since = 0
                else:
                    since += 1
                if lv < best_v:
                    best_v = lv
                    best = h + 1
                if spec.n_iter_no_change > 0 and since >= spec.n_iter_no_change:
                    if swapped:
                        _copy_into(G, Gc)
                    return h + 1, True, best
            else:
                best = h + 1
        if swapped:
            _copy_into(G, Gc)
        return H, True, best

    return boost_fit


_FITTERS: dict = {}


def boost_fitter(kind, subsample, validation):
    """The compiled fitting loop of method code ``kind`` with (``subsample``) or without row
    subsamples and with (``validation``) or without validation rows (made once per process and
    settings; a fit compiles only the code its settings reach)."""
    key = (int(kind), bool(subsample), bool(validation))
    if key[0] not in BOOST_CODES:
        raise ValueError(f"unknown boosting method code {kind}; expected one of {BOOST_CODES}")
    fit = _FITTERS.get(key)
    if fit is None:
        fit = _FITTERS[key] = _make_fit(*key)
    return fit


def fit_boost(
    kind,
    codes,
    n_bins,
    thresholds,
    y,
    sw,
    Xv,
    yv,
    swv,
    g0,
    *,
    Ts,
    shrinkage,
    max_delta,
    max_leaves,
    min_leaf,
    max_depth,
    w_floor,
    init_uniform,
    lam,
    subsample,
    n_iter_no_change,
    es_tol,
    rng,
    permute,
    G0=None,
    Gv0=None,
):
    """Allocate the outputs, run :func:`boost_fitter` ``(kind)`` and return ``(n_rounds, finite,
    best, trees, state)`` (:class:`BoostTrees`, :class:`BoostState` with the full ``H`` rounds).

    ``codes, n_bins, thresholds`` come from :func:`cohstats.solvers.trees.grow.make_bins`;
    ``g0`` (m,) are the initial margins of every row; ``rng`` (a numpy Generator) draws the
    random keys; ``permute``: random feature search order per tree (else natural order);
    ``subsample``: share of the rows drawn every round (``round(subsample n)``, at least 1).
    ``G0`` (n, m) and ``Gv0`` (nv, m), optional: per-row margins added to ``g0`` at the start
    (offsets: the initial score of every training and validation row).
    The other arguments are the fields of :class:`BoostSpec`.
    """
    n, p = codes.shape
    if n >= 2**31:
        raise ValueError(f"boosting takes fewer than 2**31 training rows; got {n}")
    m = int(g0.shape[0])
    Ts = np.ascontiguousarray(Ts, dtype=np.float64)
    H = Ts.shape[0]
    mn = 2 * int(max_leaves) - 1
    ns = min(max(int(subsample * n + 0.5), 1), n)
    codes = np.ascontiguousarray(codes)
    data = BoostData(
        codes,
        np.ascontiguousarray(codes.T),
        np.ascontiguousarray(n_bins, dtype=np.int64),
        np.ascontiguousarray(thresholds, dtype=np.float64),
        np.ascontiguousarray(y, dtype=np.int64),
        np.ascontiguousarray(sw, dtype=np.float64),
        np.ascontiguousarray(Xv, dtype=np.float64).reshape(-1, p),
        np.ascontiguousarray(yv, dtype=np.int64),
        np.ascontiguousarray(swv, dtype=np.float64),
    )
    spec = BoostSpec(
        m,
        Ts,
        float(shrinkage),
        float(max_delta),
        int(max_leaves),
        int(min_leaf),
        int(max_depth),
        float(w_floor),
        bool(init_uniform),
        float(lam),
        int(ns),
        int(n_iter_no_change),
        float(es_tol),
    )
    tree_keys, bag_keys = draw_keys(rng, H, m)
    draws = BoostDraws(bool(permute), tree_keys, bag_keys)
    trees = BoostTrees(
        *(np.full((H, m, mn), -1, np.int64) for _ in range(5)),
        np.full((H, m, mn), np.nan),
        np.zeros((H, m, mn)),
        np.zeros((H, m), np.int64),
    )
    g0 = np.asarray(g0, dtype=np.float64)
    G = np.tile(g0, (n, 1))
    Gv = np.tile(g0, (data.Xv.shape[0], 1))
    for name, M, add in (("G0", G, G0), ("Gv0", Gv, Gv0)):
        if add is not None:
            add = np.asarray(add, dtype=np.float64)
            if add.shape != M.shape or not np.all(np.isfinite(add)):
                raise ValueError(f"{name} must be a finite array of shape {M.shape}; got shape {add.shape}")
            M += add
    state = BoostState(
        G,
        Gv,
        np.full(H, np.nan),
        np.full(H, np.nan),
        np.full(H, np.nan),
        np.full(H, np.nan),
        np.zeros((_n_slots(max_leaves, max_depth, True), p, int(n_bins.max()), hist_width(1, min_leaf))),
    )
    fit = boost_fitter(kind, ns < n, data.Xv.shape[0] > 0)
    rounds, finite, best = fit(data, spec, draws, trees, state)
    return int(rounds), bool(finite), int(best), trees, state
