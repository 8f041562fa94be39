"""Multiclass boosting with regression trees (numba): GentleBoost.C and its baselines.

One engine runs [ZJLY] Algorithm 1 (GentleBoost.C) and the baselines of the paper's Table 2.
Each round fits, for every class ``j``, a weighted least-squares regression tree
(:mod:`cohstats.solvers.trees.grow`, best first to ``max_leaves`` terminal nodes) to a working
response ``z_ij`` with weights ``w_ij``. The engine hands the tree grower the products
``w_ij z_ij`` and the weights ``w_ij`` (all a least-squares split search and the leaf means
need), never ``z`` itself, so no response has to be divided out and capped:

=====  ====================  ========================================================  =======
code   method                ``w z`` and ``w`` (``I = I[j = c_i]``)                     update
=====  ====================  ========================================================  =======
0      GentleBoost.C         ``w z = rho (I - beta_j)``, ``w = max(beta_j (1 - beta_j),  centred
                             w_floor)``, ``beta = beta^{c_i}(g(x_i))`` of eq (5)
1      MulLogitBoost         as code 0 with ``beta = softmax(g)`` and ``rho = 1``       centred
2      GentleBoost.E         ``w = exp(-g_{c_i}(x_i))``, ``z = I - 1/m``                centred
3      AdaBoost.MH (real)    labels ``Y = 2 I - 1``, ``w = D = exp(-Y F_j)`` (sum 1),   added
                             leaf values ``0.5 log((W+ + eps)/(W- + eps))``, eps=1/(nm)
4      AdaBoost.MH (discr.)  as code 3, leaf values ``sign(W+ - W-)`` and one step     added
                             ``alpha = 0.5 log((W_right + eps)/(W_wrong + eps))`` per round
=====  ====================  ========================================================  =======

For codes 0 and 1 the leaf value ``sum w z / sum w = rho sum (I - beta_j) / sum beta_j (1 -
beta_j)`` is the Newton step of the loss in the coordinate ``g_j`` (the diagonal of the
Hessian of the coherence loss is ``beta_j (1 - beta_j) / rho``, see the proof of Theorem 1),
capped at ``+-max_delta`` (codes 0-2; the cap acts on steps, not on responses, so the
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

Trees are stored as flat arrays indexed ``[round, class, node]``; leaf values are stored
*before* centring, which is linear and is re-applied by the prediction functions.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from cohstats.losses.multiclass import mc_coh_loss, mc_coh_prob, mc_lmult
from cohstats.solvers.trees.grow import _build_hist, build_root_hist, grow_tree

LOSS_COH = 0
LOSS_LOGIT = 1
LOSS_EXP = 2
LOSS_MH = 3
LOSS_MH_DISCRETE = 4

_RTOL_LOSS = 1e-14  # relative rounding allowance of the step control (sums of n terms)
_MAX_HALVINGS = 40


# ------------------------------------------------------------------------------ loss helpers


@njit(cache=True, nogil=True)
def softmax(v, out):
    m = v.shape[0]
    mx = v[0]
    for j in range(1, m):
        if v[j] > mx:
            mx = v[j]
    s = 0.0
    for j in range(m):
        out[j] = math.exp(v[j] - mx)
        s += out[j]
    for j in range(m):
        out[j] /= s


@njit(cache=True, nogil=True)
def row_loss(loss, g, c, T):
    """Training loss of one observation for the loss code (MH: mean over the m pairs)."""
    m = g.shape[0]
    if loss == LOSS_COH:
        return mc_coh_loss(g, c, T)
    elif loss == LOSS_LOGIT:
        return mc_lmult(g, c)
    elif loss == LOSS_EXP:
        return math.exp(-g[c])
    s = 0.0
    for j in range(m):
        s += math.exp(g[j] if j != c else -g[j])
    return s / m


@njit(cache=True, nogil=True)
def working_response(loss, G, y, sw, T, first, init_uniform, w_floor, GZ, Wt):
    """Products ``GZ = w z`` (n, m) and weights ``Wt = w`` (n, m) of one round.

    ``sw`` are observation weights (multiplying both). Returns the weighted mean training
    loss at the current margins ``G`` (for AdaBoost.MH the mean of ``exp(-Y F)`` over the
    ``m`` pairs of an observation). With ``first and init_uniform`` the coherence and
    multinomial responses use ``beta_j = 1/m`` (Algorithm 1, step 1); the returned loss is
    always the loss at ``G``.
    """
    return _working_response(loss, G, y, sw, T, first, init_uniform, w_floor, GZ.T, Wt.T, np.empty(G.shape[0]))


@njit(cache=True, nogil=True)
def _row_response(loss, g, c, swi, T, uniform, w_floor, b, GZ, Wt, i):
    """Working response of row ``i`` (margins ``g``, class ``c``, weight ``swi``) for codes
    0-2 into ``GZ[:, i]``, ``Wt[:, i]``; returns the row's weighted loss (``b`` scratch)."""
    m = g.shape[0]
    if loss == LOSS_EXP:
        wi = math.exp(-g[c]) * swi
        for j in range(m):
            GZ[j, i] = wi * ((1.0 if j == c else 0.0) - 1.0 / m)
            Wt[j, i] = wi
        return wi
    tz = T if loss == LOSS_COH else 1.0
    gc = g[c]
    # b <- unnormalised weights exp(e_j - mx) (eq (5) / softmax); the loss is
    # tz (mx + log1p(sum over j != argmax)), accurate also for tiny losses
    mx = -np.inf
    jm = 0
    for j in range(m):
        if loss == LOSS_COH:
            e = 0.0 if j == c else (1.0 + g[j] - gc) / T
        else:
            e = g[j] - gc
        b[j] = e
        if e > mx:
            mx = e
            jm = j
    s_ex = 0.0
    for j in range(m):
        if j == jm:
            b[j] = 1.0  # exp(0)
        else:
            b[j] = math.exp(b[j] - mx)
            s_ex += b[j]
    s = 1.0 + s_ex
    li = swi * tz * (mx + math.log1p(s_ex))
    if uniform:
        for j in range(m):
            b[j] = 1.0 / m
    else:
        for j in range(m):
            b[j] /= s
    for j in range(m):
        wij = b[j] * (1.0 - b[j])
        if wij < w_floor:
            wij = w_floor
        GZ[j, i] = swi * tz * ((1.0 if j == c else 0.0) - b[j])
        Wt[j, i] = wij * swi
    return li


@njit(cache=True, nogil=True)
def _err_finite(G, y, sw):
    """Weighted count of rows whose largest margin (first on ties) is not their class, and
    whether every margin is finite."""
    n, m = G.shape
    err = 0.0
    finite = True
    for i in range(n):
        am = 0
        for j in range(m):
            if not math.isfinite(G[i, j]):
                finite = False
            if j > 0 and G[i, j] > G[i, am]:
                am = j
        if am != y[i]:
            err += sw[i]
    return err, finite


@njit(cache=True, nogil=True)
def _trial_newton(loss, Gc, R, fac, tstep, y, sw, T, w_floor, Gt, GZ, Wt, Lrow):
    """:func:`_trial` for the coherence and multinomial losses (codes 0 and 1) in one fused
    pass per row, with the arithmetic of :func:`_increment` and :func:`_row_response` in the
    same order (so the results are identical to the last bit, only without the per-row calls
    and row views)."""
    n, m = Gc.shape
    r = np.empty(m)
    b = np.empty(m)
    swt = 0.0
    for i in range(n):
        swt += sw[i]
    coh = loss == LOSS_COH
    t_one = T == 1.0  # x / 1.0 == x exactly: skip the divisions
    tz = T if coh else 1.0
    cen = (m - 1.0) / m
    ls = 0.0
    err = 0.0
    finite = True
    for i in range(n):
        mr = 0.0
        for j in range(m):
            rj = fac * R[j, i]
            r[j] = rj
            mr += rj
        mr /= m
        am = 0
        for j in range(m):
            v = Gc[i, j] + tstep * (cen * (r[j] - mr))
            Gt[i, j] = v
            b[j] = v
            if not math.isfinite(v):
                finite = False
            if j > 0 and v > b[am]:
                am = j
        c = y[i]
        swi = sw[i]
        if am != c:
            err += swi
        gc = b[c]
        mx = -np.inf
        jm = 0
        for j in range(m):
            if coh:
                e = 0.0 if j == c else (1.0 + b[j] - gc if t_one else (1.0 + b[j] - gc) / T)
            else:
                e = b[j] - gc
            b[j] = e
            if e > mx:
                mx = e
                jm = j
        s_ex = 0.0
        for j in range(m):
            if j == jm:
                b[j] = 1.0
            else:
                b[j] = math.exp(b[j] - mx)
                s_ex += b[j]
        s = 1.0 + s_ex
        li = swi * tz * (mx + math.log1p(s_ex))
        Lrow[i] = li
        ls += li
        for j in range(m):
            bj = b[j] / s
            wij = bj * (1.0 - bj)
            if wij < w_floor:
                wij = w_floor
            GZ[j, i] = swi * tz * ((1.0 if j == c else 0.0) - bj)
            Wt[j, i] = wij * swi
    return ls / swt, err, finite


@njit(cache=True, nogil=True)
def _trial(loss, Gc, R, fac, tstep, y, sw, T, init_uniform, w_floor, Gt, GZ, Wt, Lrow):
    """Trial margins ``Gt = Gc + tstep * D`` (``D`` the centred or added increments of the
    tree outputs ``fac R``, R class-major (m, n)) with the working responses at ``Gt`` and
    the error count, in one pass over the rows.

    Returns (weighted mean loss at ``Gt`` as :func:`working_response`, weighted error count,
    all margins finite). AdaBoost.MH normalises its weights over all rows, so for it the
    responses take a second pass.
    """
    n, m = Gc.shape
    r = np.empty(m)
    inc = np.empty(m)
    b = np.empty(m)
    mh = loss == LOSS_MH or loss == LOSS_MH_DISCRETE
    swt = 0.0
    for i in range(n):
        swt += sw[i]
    ls = 0.0
    err = 0.0
    finite = True
    for i in range(n):
        for j in range(m):
            r[j] = fac * R[j, i]
        _increment(loss, r, m, inc)
        am = 0
        for j in range(m):
            v = Gc[i, j] + tstep * inc[j]
            Gt[i, j] = v
            if not math.isfinite(v):
                finite = False
            if j > 0 and v > Gt[i, am]:
                am = j
        if am != y[i]:
            err += sw[i]
        if not mh:
            li = _row_response(loss, Gt[i], y[i], sw[i], T, False, w_floor, b, GZ, Wt, i)
            Lrow[i] = li
            ls += li
    if mh:
        return _working_response(loss, Gt, y, sw, T, False, init_uniform, w_floor, GZ, Wt, Lrow), err, finite
    return ls / swt, err, finite


@njit(cache=True, nogil=True)
def _working_response(loss, G, y, sw, T, first, init_uniform, w_floor, GZ, Wt, Lrow):
    """:func:`working_response` with the outputs class-major, ``GZ[j, i]`` and ``Wt[j, i]``
    (m, n) (so that each class tree reads its responses contiguously), also writing every
    row's weighted loss into ``Lrow`` (n,) (AdaBoost.MH: ``sum_j exp(-Y_ij F_ij) sw_i / m``,
    before the normalisation of ``D``)."""
    n, m = G.shape
    swt = 0.0
    for i in range(n):
        swt += sw[i]
    b = np.empty(m)
    ls = 0.0
    if loss != LOSS_MH and loss != LOSS_MH_DISCRETE:
        uniform = first and init_uniform
        for i in range(n):
            li = _row_response(loss, G[i], y[i], sw[i], T, uniform, w_floor, b, GZ, Wt, i)
            Lrow[i] = li
            ls += li
    else:
        for i in range(n):
            c = y[i]
            li = 0.0
            for j in range(m):
                yy = 1.0 if j == c else -1.0
                Wt[j, i] = math.exp(-yy * G[i, j]) * sw[i]
                ls += Wt[j, i]
                li += Wt[j, i]
            Lrow[i] = li / m
        for i in range(n):
            c = y[i]
            for j in range(m):
                Wt[j, i] /= ls
                GZ[j, i] = Wt[j, i] if j == c else -Wt[j, i]
        ls /= m
    return ls / swt


@njit(cache=True, nogil=True)
def _increment(loss, r, m, out):
    """The margin increment of a round from the class-tree outputs ``r`` (centred or added)."""
    if loss == LOSS_MH or loss == LOSS_MH_DISCRETE:
        for j in range(m):
            out[j] = r[j]
        return
    fac = (m - 1.0) / m
    mr = 0.0
    for j in range(m):
        mr += r[j]
    mr /= m
    for j in range(m):
        out[j] = fac * (r[j] - mr)


@njit(cache=True, nogil=True)
def _predict_round(X, i, h, m, feat, thr, left, right, value, r):
    for j in range(m):
        node = 0
        while left[h, j, node] >= 0:
            if X[i, feat[h, j, node]] <= thr[h, j, node]:
                node = left[h, j, node]
            else:
                node = right[h, j, node]
        r[j] = value[h, j, node]


# ------------------------------------------------------------------------------ fitting


@njit(cache=True, nogil=True)
def _draw_bag(n, ns, bag):
    """``ns`` of the ``n`` row indices, uniformly without replacement, in increasing order
    (selection sampling, Knuth's Algorithm S) into ``bag[:ns]``."""
    need = ns
    k = 0
    for i in range(n):
        if np.random.random() * (n - i) < need:
            bag[k] = i
            k += 1
            need -= 1
            if need == 0:
                break


@njit(cache=True, nogil=True)
def boost_fit(
    codes,
    n_bins,
    thresholds,
    y,
    sw,
    m,
    H,
    loss,
    Ts,
    shrinkage,
    max_delta,
    max_leaves,
    min_leaf,
    max_depth,
    w_floor,
    init_uniform,
    seed,
    hist,
    Xv,
    yv,
    swv,
    n_iter_no_change,
    es_tol,
    feat,
    sbin,
    shi,
    thr,
    left,
    right,
    value,
    n_nodes,
    step_scale,
    train_err,
    train_loss,
    val_loss,
    G,
    Gv,
    lam=0.0,
    subsample=1.0,
):
    """Run up to ``H`` rounds of boosting on binned training data.

    Parameters
    ----------
    codes : (n, p) binned features; n_bins : (p,) bins per feature; thresholds : (p, nb - 1)
        bin edges of :func:`cohstats.solvers.trees.grow.make_bins`
    y : (n,) int64 class codes 0..m-1; sw : (n,) observation weights
    loss : method code (module docstring); Ts : (H,) temperature of each round
    shrinkage : leaf values are multiplied by this factor
    max_delta : cap on the absolute Newton leaf values (codes 0-2), applied before shrinkage
    max_leaves, min_leaf, max_depth : tree growth limits
    w_floor : floor of the Newton weights ``beta (1 - beta)``
    init_uniform : first round with ``beta = 1/m`` (Algorithm 1, step 1) instead of eq (5)
    seed : seed of the feature search order of every tree (ties between equally good splits
        go to the first feature in that order) and of the row subsamples; ``seed < 0``:
        natural order (smallest index), subsamples drawn with seed 0
    hist : histogram workspace (slots, p, max_bin, ``hist_width(1, min_leaf)``) of
        :func:`cohstats.solvers.trees.grow.grow_tree`
    Xv, yv, swv : raw validation rows (nv, p), their classes and weights (nv may be 0)
    n_iter_no_change, es_tol : stop when the weighted validation loss has not fallen below
        ``best - es_tol`` for this many rounds (``n_iter_no_change <= 0`` or ``nv == 0``:
        never)
    feat, sbin, shi, left, right : (H, m, max_nodes) int64 outputs (``shi``: end of the empty
        bin gap above the split bin, see :func:`grow_tree`); thr, value : (H, m, max_nodes)
        raw-scale thresholds and leaf values (shrinkage and step size included)
    n_nodes : (H, m) int64 output; step_scale : (H,) the accepted step size of each round
    train_err, train_loss, val_loss : (H,) outputs after each round (weighted means)
    G, Gv : (n, m), (nv, m) in/out, the margin vectors of the training and validation rows
        (start at the initial margins)
    lam : L2 penalty on the leaf values of codes 0-2 (the penalised Newton step
        ``sum g / (sum h + lam)`` of XGBoost and LightGBM, with ``g``, ``h`` the gradient
        and Hessian of the loss; for the coherence loss ``h = beta (1 - beta) / rho``, so
        the tree sees ``rho lam`` beside its weights ``beta (1 - beta)``)
    subsample : share of the rows that grow each round's trees (Friedman's stochastic
        gradient boosting): ``round(subsample n)`` rows drawn without replacement every
        round; the leaf values come from those rows, the margins of all rows are updated,
        and the step control uses the loss of the drawn rows (for which the round's trees
        are a descent direction). 1: every row, every round.

    Returns
    -------
    (n_rounds, finite, best) : rounds run; False if the margins became non-finite (the fit
    stops at the last finite round); the round (1-based) with the smallest validation loss
    (``n_rounds`` without validation rows).
    """
    n, p = codes.shape
    nv = Xv.shape[0]
    max_nodes = feat.shape[2]
    # class-major responses: the tree of class j reads GZ[j] and Wt[j] in place
    GZ = np.empty((m, n))
    Wt = np.empty((m, n))
    Lrow = np.empty(n)
    rows = np.empty(n, np.int64)
    buf = np.empty(n, np.int64)
    start = np.empty(max_nodes, np.int64)
    end = np.empty(max_nodes, np.int64)
    depth = np.empty(max_nodes, np.int64)
    node_tot = np.zeros((max_nodes, 3))
    R = np.empty((m, n))
    r = np.empty(m)
    inc = np.empty(m)
    direct_root = min_leaf == 1
    fperm = np.arange(p)
    if seed >= 0:
        np.random.seed(seed)
    ns = int(subsample * n + 0.5)
    if ns < 1:
        ns = 1
    if ns > n:
        ns = n
    use_bag = ns < n
    bag = np.arange(n)
    if use_bag and seed < 0:
        np.random.seed(0)
    eps_mh = 1.0 / (n * m)
    swt = 0.0
    for i in range(n):
        swt += sw[i]
    swvt = 0.0
    for i in range(nv):
        swvt += swv[i]
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
        lam_t = lam * T if loss == LOSS_COH else lam
        if h == 0 or Ts[h] != Ts[h - 1]:
            # responses and loss at the current margins (later rounds reuse those computed
            # at the accepted trial of the step control; annealing: at this round's rho)
            lfull = swt * _working_response(loss, Gc, y, sw, T, h == 0, init_uniform, w_floor, GZ, Wt, Lrow)
        base = lfull
        if use_bag:
            _draw_bag(n, ns, bag)
            base = 0.0
            for k in range(ns):
                base += Lrow[bag[k]]
        rsum = 0.0  # discrete AdaBoost.MH: weighted agreement sum D Y h
        for j in range(m):
            if seed >= 0:
                fperm = np.random.permutation(p)
            w = Wt[j]
            gz = GZ[j].reshape((n, 1))
            for k in range(ns):
                rows[k] = bag[k]
            if direct_root:
                # the root histogram straight from the row index when every row grows the tree
                # (same sums in the same order as through ``rows``)
                if use_bag:
                    _build_hist(codes, rows, 0, ns, gz, w, hist, 0, False)
                else:
                    build_root_hist(codes, GZ[j], w, hist)
            nn = grow_tree(
                codes,
                n_bins,
                gz,
                w,
                rows,
                ns,
                max_leaves,
                min_leaf,
                max_depth,
                True,
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
                if loss == LOSS_MH:
                    wp = 0.5 * (Ws + Gs)
                    wm = 0.5 * (Ws - Gs)
                    if wp < 0.0:
                        wp = 0.0
                    if wm < 0.0:
                        wm = 0.0
                    v = 0.5 * math.log((wp + eps_mh) / (wm + eps_mh))
                elif loss == LOSS_MH_DISCRETE:
                    v = 1.0 if Gs > 0.0 else (-1.0 if Gs < 0.0 else 0.0)
                    rsum += abs(Gs)
                else:
                    v = Gs / (Ws + lam_t) if Ws > 0.0 else 0.0
                    if v > max_delta:
                        v = max_delta
                    elif v < -max_delta:
                        v = -max_delta
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
        fac = shrinkage
        if loss == LOSS_MH_DISCRETE:
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
            if loss == LOSS_COH or loss == LOSS_LOGIT:
                lt, err, finite = _trial_newton(loss, Gc, R, fac, tstep, y, sw, T, w_floor, Gt, GZ, Wt, Lrow)
            else:
                lt, err, finite = _trial(loss, Gc, R, fac, tstep, y, sw, T, init_uniform, w_floor, Gt, GZ, Wt, Lrow)
            lfull = swt * lt
            lnew = lfull
            if use_bag:
                lnew = 0.0
                for kk in range(ns):
                    lnew += Lrow[bag[kk]]
            if lnew <= base + _RTOL_LOSS * abs(base):
                break
            if k >= _MAX_HALVINGS:
                # no decrease above rounding level: the loss is at its minimum
                tstep = 0.0
                lfull = swt * _working_response(loss, Gc, y, sw, T, False, init_uniform, w_floor, GZ, Wt, Lrow)
                err, finite = _err_finite(Gc, y, sw)
                break
            tstep *= 0.5
            k += 1
        step_scale[h] = tstep
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
                G[:, :] = Gc
            return h, False, max(best, 1) if h > 0 else 0
        train_loss[h] = lfull / swt
        train_err[h] = err / swt
        if nv > 0:
            lv = 0.0
            for i in range(nv):
                _predict_round(Xv, i, h, m, feat, thr, left, right, value, r)
                _increment(loss, r, m, inc)
                for j in range(m):
                    Gv[i, j] += inc[j]
                lv += swv[i] * row_loss(loss, Gv[i], yv[i], T)
            lv /= swvt
            val_loss[h] = lv
            if lv < best_v - es_tol:
                since = 0
            else:
                since += 1
            if lv < best_v:
                best_v = lv
                best = h + 1
            if n_iter_no_change > 0 and since >= n_iter_no_change:
                if swapped:
                    G[:, :] = Gc
                return h + 1, True, best
        else:
            best = h + 1
    if swapped:
        G[:, :] = Gc
    return H, True, best


# ------------------------------------------------------------------------------ prediction


@njit(cache=True, nogil=True)
def boost_decision(X, n_rounds, m, loss, feat, thr, left, right, value, g0):
    """Margin vectors g(x) (n, m) after ``n_rounds`` rounds for raw ``X`` from the initial
    margins ``g0`` (m,)."""
    n = X.shape[0]
    G = np.empty((n, m))
    r = np.empty(m)
    inc = np.empty(m)
    for i in range(n):
        G[i] = g0
        for h in range(n_rounds):
            _predict_round(X, i, h, m, feat, thr, left, right, value, r)
            _increment(loss, r, m, inc)
            for j in range(m):
                G[i, j] += inc[j]
    return G


@njit(cache=True, nogil=True)
def boost_staged_decision(X, n_rounds, m, loss, feat, thr, left, right, value, g0):
    """Margins after every round: array (n_rounds, n, m)."""
    n = X.shape[0]
    out = np.empty((n_rounds, n, m))
    g = np.empty(m)
    r = np.empty(m)
    inc = np.empty(m)
    for i in range(n):
        g[:] = g0
        for h in range(n_rounds):
            _predict_round(X, i, h, m, feat, thr, left, right, value, r)
            _increment(loss, r, m, inc)
            for j in range(m):
                g[j] += inc[j]
            out[h, i] = g
    return out


@njit(cache=True, nogil=True)
def boost_staged_error(X, y, sw, n_rounds, m, loss, Ts, feat, thr, left, right, value, g0):
    """Weighted error rate and mean loss (with the round's temperature) after every round."""
    n = X.shape[0]
    err = np.zeros(n_rounds)
    ls = np.zeros(n_rounds)
    g = np.empty(m)
    r = np.empty(m)
    inc = np.empty(m)
    swt = 0.0
    for i in range(n):
        swt += sw[i]
        g[:] = g0
        for h in range(n_rounds):
            _predict_round(X, i, h, m, feat, thr, left, right, value, r)
            _increment(loss, r, m, inc)
            for j in range(m):
                g[j] += inc[j]
            am = 0
            for j in range(1, m):
                if g[j] > g[am]:
                    am = j
            if am != y[i]:
                err[h] += sw[i]
            ls[h] += sw[i] * row_loss(loss, g, y[i], Ts[h])
    return err / swt, ls / swt


@njit(cache=True, nogil=True)
def margins_to_proba(G, loss, T):
    """Class probabilities from margins: eq (8) for the coherence loss, softmax for the
    multinomial and exponential losses, normalised expit(2 F_j) for AdaBoost.MH."""
    n, m = G.shape
    P = np.empty((n, m))
    for i in range(n):
        if loss == LOSS_COH:
            mc_coh_prob(G[i], T, P[i])
        elif loss == LOSS_MH or loss == LOSS_MH_DISCRETE:
            s = 0.0
            for j in range(m):
                v = 2.0 * G[i, j]
                if v >= 0:
                    e = 1.0 / (1.0 + math.exp(-v))
                else:
                    e = math.exp(v) / (1.0 + math.exp(v))
                P[i, j] = e
                s += e
            for j in range(m):
                P[i, j] /= s
        else:
            softmax(G[i], P[i])
    return P
