"""The boosting methods' per-round pieces: row losses, working responses and weights, the
trial pass of the step control, the margin increments (used by the compiled fitting loop of
:mod:`cohstats.solvers.trees.boost`), and the method codes."""

from __future__ import annotations

import math

import numpy as np
from cohstats._numba_cache import internal, njit

from cohstats.losses.multiclass import mc_coh_loss, mc_lmult

#: method codes of the boosting engine (its own: not the scalar loss codes of
#: :mod:`cohstats.losses.scalar`)
BOOST_COH = 0
BOOST_LOGIT = 1
BOOST_EXP = 2
BOOST_MH = 3
BOOST_MH_DISCRETE = 4
BOOST_CODES = (BOOST_COH, BOOST_LOGIT, BOOST_EXP, BOOST_MH, BOOST_MH_DISCRETE)


@internal
def _sum(v):
    """Sum of a vector in index order."""
    s = 0.0
    for i in range(v.shape[0]):
        s += v[i]
    return s


@internal
def _log1p_nonneg(x):
    """``log(1 + x)`` for ``x >= 0`` (or NaN) to within a few ulps, from one ``log`` (Goldberg's
    form ``log(u) x / (u - 1)``, ``u = fl(1 + x)``: the quotient corrects the rounding of ``u``),
    cheaper than libm's ``log1p`` in the boosting loops' per-row loss."""
    u = 1.0 + x
    if u == 1.0:
        return x
    return math.log(u) * (x / (u - 1.0))


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
def _mh_row_loss(g, c):
    """AdaBoost.MH loss of one observation: the mean of ``exp(-Y_j g_j)`` over the m pairs."""
    m = g.shape[0]
    s = 0.0
    for j in range(m):
        s += math.exp(g[j] if j != c else -g[j])
    return s / m


@njit(cache=True, nogil=True)
def row_loss(kind, g, c, T):
    """Training loss of one observation for the method code ``kind`` (MH: mean over the m
    pairs)."""
    if kind == BOOST_COH:
        return mc_coh_loss(g, c, T)
    elif kind == BOOST_LOGIT:
        return mc_lmult(g, c)
    elif kind == BOOST_EXP:
        return math.exp(-g[c])
    return _mh_row_loss(g, c)


def working_response(kind, G, y, sw, T, first, init_uniform, w_floor, GZ, Wt):
    """Products ``GZ = w z`` (n, m) and weights ``Wt = w`` (n, m) of one round (for checks;
    the fit computes them in its compiled loop).

    ``sw`` are observation weights (multiplying both). Returns the weighted mean training
    loss at the current margins ``G`` (for AdaBoost.MH the mean of ``exp(-Y F)`` over the
    ``m`` pairs of an observation). With ``first and init_uniform`` the coherence and
    multinomial responses use ``beta_j = 1/m`` (Algorithm 1, step 1); the returned loss is
    always the loss at ``G``.
    """
    G = np.ascontiguousarray(G, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.int64)
    sw = np.ascontiguousarray(sw, dtype=np.float64)
    n, m = G.shape
    gz, wt, lrow = np.empty((m, n)), np.empty((m, n)), np.empty(n)
    if kind == BOOST_COH or kind == BOOST_LOGIT:
        uniform = bool(first and init_uniform)
        ls = _responses_newton(kind == BOOST_COH, G, y, sw, float(T), uniform, float(w_floor), gz, wt, lrow)
    elif kind == BOOST_EXP:
        ls = _responses_exp(G, y, sw, gz, wt, lrow)
    else:
        ls = _responses_mh(G, y, sw, gz, wt, lrow)
    GZ[:] = gz.T
    Wt[:] = wt.T
    return ls


@njit(cache=True, nogil=True)
def _responses_newton(coh, G, y, sw, T, uniform, w_floor, GZ, Wt, Lrow):
    """Working responses of the coherence (``coh``) or multinomial loss at the margins ``G``
    into ``GZ[j, i] = w z``, ``Wt[j, i] = w`` (class-major (m, n), so that each class tree
    reads its responses contiguously), every row's weighted loss into ``Lrow``; returns the
    weighted mean loss. ``uniform``: ``beta_j = 1/m`` (the loss is still the loss at ``G``)."""
    n, m = G.shape
    swt = _sum(sw)
    b = np.empty(m)
    tz = T if coh else 1.0
    ls = 0.0
    for i in range(n):
        c = y[i]
        swi = sw[i]
        gc = G[i, c]
        # b <- unnormalised weights exp(e_j - mx) (eq (5) / softmax); the loss is
        # tz (mx + log1p(sum over j != argmax)), accurate also for tiny losses
        mx = -np.inf
        jm = 0
        for j in range(m):
            if coh:
                e = 0.0 if j == c else (1.0 + G[i, j] - gc) / T
            else:
                e = G[i, j] - gc
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
        li = swi * tz * (mx + _log1p_nonneg(s_ex))
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
        Lrow[i] = li
        ls += li
    return ls / swt


@njit(cache=True, nogil=True)
def _responses_exp(G, y, sw, GZ, Wt, Lrow):
    """:func:`_responses_newton` for GentleBoost.E: ``w = exp(-g_c)``, ``z = I - 1/m``."""
    n, m = G.shape
    swt = _sum(sw)
    ls = 0.0
    for i in range(n):
        c = y[i]
        wi = math.exp(-G[i, c]) * sw[i]
        for j in range(m):
            GZ[j, i] = wi * ((1.0 if j == c else 0.0) - 1.0 / m)
            Wt[j, i] = wi
        Lrow[i] = wi
        ls += wi
    return ls / swt


@njit(cache=True, nogil=True)
def _responses_mh(G, y, sw, GZ, Wt, Lrow):
    """:func:`_responses_newton` for AdaBoost.MH: ``Wt = D`` normalised to sum 1, ``GZ = Y D``;
    ``Lrow[i] = sum_j exp(-Y_ij F_ij) sw_i / m`` (before the normalisation of ``D``)."""
    n, m = G.shape
    swt = _sum(sw)
    ls = 0.0
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


@internal
def _trial_newton(coh, Gc, R, fac, tstep, y, sw, T, w_floor, Gt, GZ, Wt, Lrow):
    """Trial margins ``Gt = Gc + tstep * D`` (``D`` the centred increments of the tree outputs
    ``fac R``, R class-major (m, n)) with the working responses of the coherence (``coh``) or
    multinomial loss at ``Gt`` and the error count, in one pass over the rows (the arithmetic
    of :func:`_increment` and :func:`_responses_newton`, in the same order).

    Returns (weighted mean loss at ``Gt``, weighted error count, all margins finite).
    """
    n, m = Gc.shape
    r = np.empty(m)
    b = np.empty(m)
    swt = _sum(sw)
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
        # argmax (first on ties), error count and the largest exponent as selects, not
        # branches: which class wins is unpredictable from row to row
        am = 0
        vam = -np.inf
        for j in range(m):
            v = Gc[i, j] + tstep * (cen * (r[j] - mr))
            Gt[i, j] = v
            b[j] = v
            if not math.isfinite(v):
                finite = False
            better = v > vam or j == 0
            am = j if better else am
            vam = v if better else vam
        c = y[i]
        swi = sw[i]
        err += swi if am != c else 0.0
        gc = b[c]
        mx = -np.inf
        jm = 0
        for j in range(m):
            if coh:
                e = 0.0 if j == c else (1.0 + b[j] - gc if t_one else (1.0 + b[j] - gc) / T)
            else:
                e = b[j] - gc
            b[j] = e
            up = e > mx
            mx = e if up else mx
            jm = j if up else jm
        s_ex = 0.0
        for j in range(m):
            if j == jm:
                b[j] = 1.0
            else:
                b[j] = math.exp(b[j] - mx)
                s_ex += b[j]
        s = 1.0 + s_ex
        li = swi * tz * (mx + _log1p_nonneg(s_ex))
        Lrow[i] = li
        ls += li
        for j in range(m):
            bj = b[j] / s
            wij = bj * (1.0 - bj)
            wij = w_floor if wij < w_floor else wij
            GZ[j, i] = swi * tz * ((1.0 if j == c else 0.0) - bj)
            Wt[j, i] = wij * swi
    return ls / swt, err, finite


@njit(cache=True, nogil=True)
def _trial_margins(added, Gc, R, fac, tstep, y, sw, Gt):
    """Trial margins ``Gt = Gc + tstep * D`` (``D`` the centred, or with ``added`` the added,
    increments of the tree outputs ``fac R``, R class-major (m, n)); returns (weighted error
    count, all margins finite)."""
    n, m = Gc.shape
    r = np.empty(m)
    inc = np.empty(m)
    err = 0.0
    finite = True
    for i in range(n):
        for j in range(m):
            r[j] = fac * R[j, i]
        _increment(added, r, m, inc)
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
    return err, finite


@njit(cache=True, nogil=True)
def _increment(added, r, m, out):
    """The margin increment of a round from the class-tree outputs ``r``: centred, or as they
    are (``added``, AdaBoost.MH)."""
    if added:
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


@internal
def _copy_into(dst, src):
    """``dst[:, :] = src`` for two arrays of one shape (a loop: no broadcasting checks)."""
    for i in range(dst.shape[0]):
        for j in range(dst.shape[1]):
            dst[i, j] = src[i, j]
