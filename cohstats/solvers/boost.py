"""Multiclass boosting with regression trees (numba): GentleBoost.C and its baselines.

One engine runs [ZJLY] Algorithm 1 (GentleBoost.C, SPEC 5.4) and the baselines of SPEC 5.5
(D19). Each round fits, for every class ``j``, a weighted least-squares regression tree
(:mod:`cohstats.solvers.trees`, best first to ``max_leaves`` terminal nodes) to a working
response ``z_ij`` with weights ``w_ij``:

=====  ===================  ==========================================================  ========
code   method               responses and weights                                        update
=====  ===================  ==========================================================  ========
0      GentleBoost.C        ``beta = beta^{c_i}(g(x_i))`` (eq 5),                        centred
                            ``w = max(beta_j (1-beta_j), w_floor)``,
                            ``z = T (I[j=c_i] - beta_j) / w`` clipped to ``+-z_max``
1      MulLogitBoost        as code 0 with ``p = softmax(g)`` and ``T = 1``              centred
2      GentleBoost.E        ``w_i = exp(-g_{c_i}(x_i))``, ``z = I[j=c_i] - 1/m``         centred
3      AdaBoost.MH (real)   labels ``Y = 2 I[j=c_i] - 1``, ``D = exp(-Y F_j)`` (sum 1),  added
                            leaf values ``0.5 log((W+ + eps)/(W- + eps))``, eps=1/(nm)
=====  ===================  ==========================================================  ========

"centred" means the increments of a round are replaced by
``((m-1)/m) (r_j - mean_l r_l)`` before they are added (SPEC D17); with ``centre_acc`` the
literal reading of the paper is used instead: ``g <- ((m-1)/m) centre(g + r)``.
Leaf values are multiplied by the shrinkage factor. Trees are stored as flat arrays
indexed ``[round, class, node]``; leaf values are stored *before* centring, which is linear
and is re-applied by the prediction functions.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from cohstats.losses.multiclass import mc_coh_loss, mc_coh_prob, mc_lmult
from cohstats.solvers.trees import grow_tree

LOSS_COH = 0
LOSS_LOGIT = 1
LOSS_EXP = 2
LOSS_MH = 3


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
def working_response(loss, G, y, sw, T, first, init_uniform, z_max, w_floor, Z, Wt):
    """Working responses Z (n, m) and weights Wt (n, m) of one round for the loss code.

    ``sw`` are observation weights (multiplying the working weights). Returns the weighted
    mean training loss at the current margins ``G`` (a by-product of the weights; for
    AdaBoost.MH the mean of ``exp(-Y F)`` over the ``m`` pairs of an observation).
    """
    n, m = G.shape
    swt = 0.0
    for i in range(n):
        swt += sw[i]
    b = np.empty(m)
    ls = 0.0
    if loss == LOSS_COH or loss == LOSS_LOGIT:
        tz = T if loss == LOSS_COH else 1.0
        for i in range(n):
            c = y[i]
            gc = G[i, c]
            # b <- unnormalised weights exp(e_j - mx) (eq (5) / softmax); the loss is
            # tz (mx + log1p(sum over j != argmax)), accurate also for tiny losses
            mx = -np.inf
            jm = 0
            for j in range(m):
                if loss == LOSS_COH:
                    e = 0.0 if j == c else (1.0 + G[i, j] - gc) / T
                else:
                    e = G[i, j] - gc
                b[j] = e
                if e > mx:
                    mx = e
                    jm = j
            s_ex = 0.0
            for j in range(m):
                b[j] = math.exp(b[j] - mx)
                if j != jm:
                    s_ex += b[j]
            s = 1.0 + s_ex
            ls += sw[i] * tz * (mx + math.log1p(s_ex))
            if first and init_uniform:
                for j in range(m):
                    b[j] = 1.0 / m
            else:
                for j in range(m):
                    b[j] /= s
            for j in range(m):
                wij = b[j] * (1.0 - b[j])
                if wij < w_floor:
                    wij = w_floor
                zij = tz * ((1.0 if j == c else 0.0) - b[j]) / wij
                if zij > z_max:
                    zij = z_max
                elif zij < -z_max:
                    zij = -z_max
                Z[i, j] = zij
                Wt[i, j] = wij * sw[i]
    elif loss == LOSS_EXP:
        for i in range(n):
            c = y[i]
            wi = math.exp(-G[i, c]) * sw[i]
            ls += wi
            for j in range(m):
                Z[i, j] = (1.0 if j == c else 0.0) - 1.0 / m
                Wt[i, j] = wi
    else:
        for i in range(n):
            c = y[i]
            for j in range(m):
                yy = 1.0 if j == c else -1.0
                Z[i, j] = yy
                Wt[i, j] = math.exp(-yy * G[i, j]) * sw[i]
                ls += Wt[i, j]
        for i in range(n):
            for j in range(m):
                Wt[i, j] /= ls
        ls /= m
    return ls / swt


# ------------------------------------------------------------------------------ fitting


@njit(cache=True, nogil=True)
def boost_fit(codes, n_bins, y, sw, m, H, loss, Ts, shrinkage, max_leaves, min_leaf, max_depth,
              z_max, w_floor, centre_acc, init_uniform, seed, hist,
              feat, sbin, shi, left, right, value, n_nodes, train_err, train_loss, G):
    """Run ``H`` rounds of boosting on binned training data.

    Parameters
    ----------
    codes : (n, p) binned features; n_bins : (p,) bins per feature
    y : (n,) int64 class codes 0..m-1; sw : (n,) observation weights
    loss : method code (module docstring); Ts : (H,) temperature of each round
    shrinkage : leaf values are multiplied by this factor
    max_leaves, min_leaf, max_depth : tree growth limits
    z_max, w_floor : response cap and weight floor (SPEC D17)
    centre_acc : literal centring of the accumulated g (paper's step (b)) instead of the
        increments; init_uniform : first round with beta = 1/m (paper) instead of eq (5)
    seed : seed of the feature search order of every tree (ties between equally good splits
        go to the first feature in that order); ``seed < 0``: natural order (smallest index)
    hist : histogram workspace (slots, p, max_bin, 3)
    feat, sbin, shi, left, right : (H, m, max_nodes) int64 outputs (``shi``: end of the empty
        bin gap above the split bin, see :func:`grow_tree`); value : (H, m, max_nodes)
    n_nodes : (H, m) int64 output
    train_err, train_loss : (H,) outputs, training error and mean loss after each round
    G : (n, m) in/out, the margin vectors of the training rows (start at zero)

    Returns
    -------
    (n_rounds, finite) : rounds run, and False if the margins became non-finite (the fit
    stops at the last finite round).
    """
    n, p = codes.shape
    max_nodes = feat.shape[2]
    Z = np.empty((n, m))
    Wt = np.empty((n, m))
    gz = np.empty((n, 1))
    w = np.empty(n)
    rows = np.empty(n, np.int64)
    buf = np.empty(n, np.int64)
    start = np.empty(max_nodes, np.int64)
    end = np.empty(max_nodes, np.int64)
    depth = np.empty(max_nodes, np.int64)
    node_tot = np.zeros((max_nodes, 3))
    R = np.empty((n, m))
    nbmax = hist.shape[2]
    shared_root = min_leaf == 1
    root = np.zeros((p, nbmax, m, 2)) if shared_root else np.zeros((1, 1, 1, 2))
    GZ = np.empty((n, m))
    fperm = np.arange(p)
    if seed >= 0:
        np.random.seed(seed)
    eps_mh = 1.0 / (n * m)
    swt = 0.0
    for i in range(n):
        swt += sw[i]
    fac = (m - 1.0) / m
    for h in range(H):
        T = Ts[h]
        ls = working_response(loss, G, y, sw, T, h == 0, init_uniform, z_max, w_floor, Z, Wt)
        if h > 0:
            if Ts[h] == Ts[h - 1]:
                train_loss[h - 1] = ls
            else:  # annealing: the loss of round h - 1 uses that round's temperature
                ls = 0.0
                for i in range(n):
                    ls += sw[i] * row_loss(loss, G[i], y[i], Ts[h - 1])
                train_loss[h - 1] = ls / swt
        for i in range(n):
            for j in range(m):
                GZ[i, j] = Wt[i, j] * Z[i, j]
        if shared_root:
            # root histograms of all m trees in one pass over the binned data
            root[:] = 0.0
            for i in range(n):
                for f in range(p):
                    bb = codes[i, f]
                    for j in range(m):
                        root[f, bb, j, 0] += GZ[i, j]
                        root[f, bb, j, 1] += Wt[i, j]
        for j in range(m):
            if seed >= 0:
                fperm = np.random.permutation(p)
            for i in range(n):
                w[i] = Wt[i, j]
                gz[i, 0] = GZ[i, j]
                rows[i] = i
            if shared_root:
                for f in range(p):
                    for bb in range(nbmax):
                        hist[0, f, bb, 0] = root[f, bb, j, 0]
                        hist[0, f, bb, 1] = root[f, bb, j, 1]
                        hist[0, f, bb, 2] = 0.0
            nn = grow_tree(codes, n_bins, gz, w, rows, n, max_leaves, min_leaf, max_depth, True,
                           hist, buf, feat[h, j], sbin[h, j], shi[h, j], left[h, j], right[h, j],
                           start, end, depth, node_tot, fperm, shared_root)
            n_nodes[h, j] = nn
            for t in range(nn):
                if left[h, j, t] >= 0:
                    value[h, j, t] = 0.0
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
                else:
                    v = Gs / Ws if Ws > 0.0 else 0.0
                v *= shrinkage
                value[h, j, t] = v
                for ii in range(start[t], end[t]):
                    R[rows[ii], j] = v
        # update the margins
        finite = True
        for i in range(n):
            if loss == LOSS_MH:
                for j in range(m):
                    G[i, j] += R[i, j]
            else:
                mr = 0.0
                for j in range(m):
                    mr += R[i, j]
                mr /= m
                for j in range(m):
                    inc = fac * (R[i, j] - mr)
                    if centre_acc:
                        G[i, j] = fac * (G[i, j] + inc / fac)
                    else:
                        G[i, j] += inc
                if centre_acc:
                    # exact re-centring of the accumulated margins
                    mg = 0.0
                    for j in range(m):
                        mg += G[i, j]
                    mg /= m
                    for j in range(m):
                        G[i, j] -= mg
            for j in range(m):
                if not math.isfinite(G[i, j]):
                    finite = False
        if not finite:
            return h, False
        err = 0.0
        for i in range(n):
            am = 0
            for j in range(1, m):
                if G[i, j] > G[i, am]:
                    am = j
            if am != y[i]:
                err += sw[i]
        train_err[h] = err / swt
    ls = 0.0
    for i in range(n):
        ls += sw[i] * row_loss(loss, G[i], y[i], Ts[H - 1])
    train_loss[H - 1] = ls / swt
    return H, True


# ------------------------------------------------------------------------------ prediction


@njit(cache=True, nogil=True)
def _round_increment(X, i, h, m, feat, thr, left, right, value, r):
    for j in range(m):
        node = 0
        while left[h, j, node] >= 0:
            if X[i, feat[h, j, node]] <= thr[h, j, node]:
                node = left[h, j, node]
            else:
                node = right[h, j, node]
        r[j] = value[h, j, node]


@njit(cache=True, nogil=True)
def _apply_round(g, r, m, loss, centre_acc):
    if loss == LOSS_MH:
        for j in range(m):
            g[j] += r[j]
        return
    fac = (m - 1.0) / m
    mr = 0.0
    for j in range(m):
        mr += r[j]
    mr /= m
    for j in range(m):
        inc = fac * (r[j] - mr)
        if centre_acc:
            g[j] = fac * (g[j] + inc / fac)
        else:
            g[j] += inc
    if centre_acc:
        mg = 0.0
        for j in range(m):
            mg += g[j]
        mg /= m
        for j in range(m):
            g[j] -= mg


@njit(cache=True, nogil=True)
def boost_decision(X, n_rounds, m, loss, centre_acc, feat, thr, left, right, value):
    """Margin vectors g(x) (n, m) after ``n_rounds`` rounds for raw ``X``."""
    n = X.shape[0]
    G = np.zeros((n, m))
    r = np.empty(m)
    for i in range(n):
        for h in range(n_rounds):
            _round_increment(X, i, h, m, feat, thr, left, right, value, r)
            _apply_round(G[i], r, m, loss, centre_acc)
    return G


@njit(cache=True, nogil=True)
def boost_staged_decision(X, n_rounds, m, loss, centre_acc, feat, thr, left, right, value):
    """Margins after every round: array (n_rounds, n, m)."""
    n = X.shape[0]
    out = np.empty((n_rounds, n, m))
    g = np.empty(m)
    r = np.empty(m)
    for i in range(n):
        g[:] = 0.0
        for h in range(n_rounds):
            _round_increment(X, i, h, m, feat, thr, left, right, value, r)
            _apply_round(g, r, m, loss, centre_acc)
            out[h, i] = g
    return out


@njit(cache=True, nogil=True)
def boost_staged_error(X, y, n_rounds, m, loss, centre_acc, Ts, feat, thr, left, right,
                       value):
    """Error rate and mean loss (with the round's temperature) after every round."""
    n = X.shape[0]
    err = np.zeros(n_rounds)
    ls = np.zeros(n_rounds)
    g = np.empty(m)
    r = np.empty(m)
    for i in range(n):
        g[:] = 0.0
        for h in range(n_rounds):
            _round_increment(X, i, h, m, feat, thr, left, right, value, r)
            _apply_round(g, r, m, loss, centre_acc)
            am = 0
            for j in range(1, m):
                if g[j] > g[am]:
                    am = j
            if am != y[i]:
                err[h] += 1.0
            ls[h] += row_loss(loss, g, y[i], Ts[h])
    return err / n, ls / n


@njit(cache=True, nogil=True)
def margins_to_proba(G, loss, T):
    """Class probabilities from margins: eq (8) for the coherence loss, softmax for the
    multinomial and exponential losses, normalised expit(2 F_j) for AdaBoost.MH."""
    n, m = G.shape
    P = np.empty((n, m))
    for i in range(n):
        if loss == LOSS_COH:
            mc_coh_prob(G[i], T, P[i])
        elif loss == LOSS_MH:
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
