"""Predictions of a boosted model: decision values (final and staged), staged errors, and
class probabilities from the margins of each boosting method."""

from __future__ import annotations

import math

import numpy as np
from cohstats._numba_cache import njit

from cohstats.losses.multiclass import mc_coh_prob
from cohstats.solvers.trees.boost_steps import (
    BOOST_COH,
    BOOST_MH,
    BOOST_MH_DISCRETE,
    _increment,
    _predict_round,
    _sum,
    row_loss,
    softmax,
)


@njit(cache=True, nogil=True)
def boost_decision(X, n_rounds, m, kind, feat, thr, left, right, value, g0):
    """Margin vectors g(x) (n, m) after ``n_rounds`` rounds for raw ``X`` from the initial
    margins ``g0`` (m,)."""
    n = X.shape[0]
    added = kind == BOOST_MH or kind == BOOST_MH_DISCRETE
    G = np.empty((n, m))
    r = np.empty(m)
    inc = np.empty(m)
    for i in range(n):
        for j in range(m):
            G[i, j] = g0[j]
        for h in range(n_rounds):
            _predict_round(X, i, h, m, feat, thr, left, right, value, r)
            _increment(added, r, m, inc)
            for j in range(m):
                G[i, j] += inc[j]
    return G


@njit(cache=True, nogil=True)
def boost_staged_decision(X, n_rounds, m, kind, feat, thr, left, right, value, g0):
    """Margins after every round: array (n_rounds, n, m)."""
    n = X.shape[0]
    added = kind == BOOST_MH or kind == BOOST_MH_DISCRETE
    out = np.empty((n_rounds, n, m))
    g = np.empty(m)
    r = np.empty(m)
    inc = np.empty(m)
    for i in range(n):
        for j in range(m):
            g[j] = g0[j]
        for h in range(n_rounds):
            _predict_round(X, i, h, m, feat, thr, left, right, value, r)
            _increment(added, r, m, inc)
            for j in range(m):
                g[j] += inc[j]
                out[h, i, j] = g[j]
    return out


@njit(cache=True, nogil=True)
def boost_staged_error(X, y, sw, n_rounds, m, kind, Ts, feat, thr, left, right, value, g0):
    """Weighted error rate and mean loss (with the round's temperature) after every round."""
    n = X.shape[0]
    added = kind == BOOST_MH or kind == BOOST_MH_DISCRETE
    err = np.zeros(n_rounds)
    ls = np.zeros(n_rounds)
    g = np.empty(m)
    r = np.empty(m)
    inc = np.empty(m)
    swt = _sum(sw)
    for i in range(n):
        for j in range(m):
            g[j] = g0[j]
        for h in range(n_rounds):
            _predict_round(X, i, h, m, feat, thr, left, right, value, r)
            _increment(added, r, m, inc)
            for j in range(m):
                g[j] += inc[j]
            am = 0
            for j in range(1, m):
                if g[j] > g[am]:
                    am = j
            if am != y[i]:
                err[h] += sw[i]
            ls[h] += sw[i] * row_loss(kind, g, y[i], Ts[h])
    return err / swt, ls / swt


@njit(cache=True, nogil=True)
def margins_to_proba(G, kind, T):
    """Class probabilities from margins: eq (8) for the coherence loss, softmax for the
    multinomial and exponential losses, normalised expit(2 F_j) for AdaBoost.MH."""
    n, m = G.shape
    P = np.empty((n, m))
    for i in range(n):
        if kind == BOOST_COH:
            mc_coh_prob(G[i], T, P[i])
        elif kind == BOOST_MH or kind == BOOST_MH_DISCRETE:
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
