"""Class probabilities of the λ-SVM: a post-hoc calibration of cross-validated decision values,
multinomial (a ridge-penalised softmax on the decision values, :func:`mnl_fit`) or pairwise
coupling of Platt sigmoids (:func:`couple_pairwise`), kept as :class:`ProbCalibration`.

:class:`ProbCalibration` is documented, saved and loaded as ``cohstats.models.lamsvm.ProbCalibration``.
"""

from __future__ import annotations

import numbers

import numpy as np
import pandas as pd

from cohstats.coupling import pairwise_coupling


#: probability calibrations offered by ``predict(type="prob", method=...)``
PROB_METHODS = ("multinomial", "coupling")


# ============================================================================ probabilities
def _softmax(E):
    E = E - E.max(axis=1, keepdims=True)
    P = np.exp(E)
    return P / P.sum(axis=1, keepdims=True)


def _mnl_features(F, K):
    """The K decision values sum to zero: the first K - 1 carry all of them (the binary
    decision value is a single column)."""
    F = np.asarray(F, dtype=float)
    if K == 2:
        return F.reshape(-1, 1)
    return F[:, : K - 1]


def smoothed_targets(yk, K, w=None):
    """Platt's smoothed targets generalised to ``K`` classes.

    A row of class ``k`` (``n_k`` rows, weighted counts when ``w`` is given) gets target
    ``(n_k + 1)/(n_k + K)`` for its own class and ``1/(n_k + K)`` for each other class; for
    ``K = 2`` these are Platt's ``(N_+ + 1)/(N_+ + 2)`` and ``1/(N_- + 2)``.
    """
    yk = np.asarray(yk, dtype=np.int64)
    w = np.ones(len(yk)) if w is None else np.asarray(w, dtype=float)
    nk = np.bincount(yk, weights=w, minlength=K)
    T = np.repeat((1.0 / (nk[yk] + K))[:, None], K, axis=1)
    T[np.arange(len(yk)), yk] = (nk[yk] + 1.0) / (nk[yk] + K)
    return T


def mnl_fit(G, T, w=None, *, tol=1e-10, max_iter=200):
    """Multinomial logistic regression of (soft) targets ``T`` (n, K) on features ``G`` (n, d).

    Minimises ``sum_i w_i [logsumexp(eta_i) - sum_k T_ik eta_ik]`` with ``eta_i0 = 0`` (class 0
    is the reference) and ``eta_ik = a_k + G_i . B_k`` by Newton's method with backtracking,
    stopping when the largest gradient entry is below ``tol * sum(w)`` or the Newton decrement
    is below the float64 resolution of the objective.
    With one-hot ``T`` this is the maximum-likelihood multinomial logit (statsmodels ``MNLogit``);
    with smoothed targets (:func:`smoothed_targets`) the minimum exists even for separable data.

    Returns ``(W, n_iter, converged)`` with ``W`` of shape ``(d + 1, K)`` (first row the
    intercepts, first column zeros).
    """
    G = np.asarray(G, dtype=float)
    T = np.asarray(T, dtype=float)
    n, K = T.shape
    w = np.ones(n) if w is None else np.asarray(w, dtype=float)
    Z = np.column_stack([np.ones(n), G])
    d1 = Z.shape[1]
    m = K - 1
    # start from the intercept-only fit (class shares), a well-scaled point
    share = np.maximum(w @ T, 1e-300)
    theta = np.zeros((d1, m))
    theta[0] = np.log(share[1:] / share[0])

    def obj(th):
        E = np.column_stack([np.zeros(n), Z @ th])
        mx = E.max(axis=1, keepdims=True)
        lse = mx[:, 0] + np.log(np.exp(E - mx).sum(axis=1))
        return float(w @ (lse - (T * E).sum(axis=1))), E

    fval, E = obj(theta)
    converged = False
    it = 0
    scale = max(float(w.sum()), 1.0)
    for it in range(1, max_iter + 1):
        P = _softmax(E)
        R = (P - T)[:, 1:] * w[:, None]
        g = (Z.T @ R).ravel(order="F")  # blocks by class
        if np.max(np.abs(g)) < tol * scale:
            converged = True
            break
        H = np.empty((d1 * m, d1 * m))
        Pm = P[:, 1:]
        for a in range(m):
            for b in range(a, m):
                v = w * (Pm[:, a] * ((a == b) - Pm[:, b]))
                blk = (Z * v[:, None]).T @ Z
                H[a * d1 : (a + 1) * d1, b * d1 : (b + 1) * d1] = blk
                H[b * d1 : (b + 1) * d1, a * d1 : (a + 1) * d1] = blk.T
        H[np.diag_indices_from(H)] += 1e-12 * scale
        try:
            step = np.linalg.solve(H, g)
        except np.linalg.LinAlgError:
            step = np.linalg.lstsq(H, g, rcond=None)[0]
        dth = -step.reshape((d1, m), order="F")
        gd = float(g @ -step)
        if -gd < 1e-16 * max(1.0, abs(fval)):
            # the Newton decrement is below the resolution of the objective: at the optimum
            converged = True
            break
        t = 1.0
        while t > 1e-12:
            cand = theta + t * dth
            fc, Ec = obj(cand)
            if fc <= fval + 1e-4 * t * gd:
                theta, fval, E = cand, fc, Ec
                break
            t *= 0.5
        else:
            converged = np.max(np.abs(g)) < 1e-6 * scale
            break
    W = np.column_stack([np.zeros(d1), theta])
    return W, it, bool(converged)


def _platt_pair(d, pos, w):
    """Platt's sigmoid P(pos | d) with smoothed targets (weighted), by Newton's method."""
    from cohstats.probability import platt_fit

    if np.allclose(w, 1.0):
        s = platt_fit(d, np.where(pos, 1.0, -1.0))
        return -s.A, -s.B
    T = smoothed_targets(pos.astype(np.int64), 2, w)
    W, _, _ = mnl_fit(d.reshape(-1, 1), T, w)
    return W[1, 1], W[0, 1]


def couple_pairwise(R):
    """Class probabilities from pairwise probabilities (Wu, Lin & Weng 2004, method 2; libsvm):
    :func:`cohstats.coupling.pairwise_coupling` without clipping the pairwise values.

    ``R`` is (n, K, K) with ``R[:, a, b] = P(a | a or b)`` (``R[:, b, a] = 1 - R[:, a, b]``).
    """
    return pairwise_coupling(R, min_prob=0.0)


class ProbCalibration:
    """A post-hoc probability calibration of a λ-SVM (see :meth:`LamSVMFit.calibration`).

    Attributes
    ----------
    method : "multinomial" or "coupling".
    s : the value of the path variable it was fitted at.
    decision : (n, K) (or (n,) binary) cross-validated decision values of the training rows.
    foldid : (n,) fold ids used.
    coef : multinomial: (K, K) array (rows: intercept then the first ``K - 1`` decision values,
        or the single binary one; columns: classes, the first a zero reference); coupling: a
        DataFrame of Platt's ``(A, B)`` per class pair, ``P(a | a or b) = 1/(1 + exp(-(A d + B)))``
        with ``d = f_a - f_b``.
    """

    def __init__(self, method, s, decision, foldid, coef, K, n_iter=0, converged=True):
        if method not in PROB_METHODS:
            raise ValueError(f"ProbCalibration: method must be one of {PROB_METHODS}; got {method!r}")
        if not isinstance(converged, (bool, np.bool_)):
            raise TypeError(f"ProbCalibration: converged must be a bool; got {type(converged).__name__}")
        if isinstance(n_iter, (bool, np.bool_)) or not isinstance(n_iter, numbers.Integral):
            raise TypeError(f"ProbCalibration: n_iter must be an int; got {type(n_iter).__name__}")
        if method == "multinomial" and np.shape(coef) != (K, K):
            raise ValueError(
                f"ProbCalibration: the multinomial map needs a ({K}, {K}) coef; got shape {np.shape(coef)}"
            )
        self.method, self.s, self.decision, self.foldid = method, s, decision, foldid
        self.coef, self.K, self.n_iter, self.converged = coef, int(K), int(n_iter), bool(converged)

    def __call__(self, F) -> np.ndarray:
        """(n, K) probabilities from decision values ``F`` ((n,) binary or (n, K))."""
        K = self.K
        if self.method == "multinomial":
            G = _mnl_features(F, K)
            return _softmax(np.column_stack([np.ones(G.shape[0]), G]) @ self.coef)
        Fk = _full_F(F, K)
        n = Fk.shape[0]
        R = np.full((n, K, K), 0.5)
        for (a, b), (A, B) in zip(self.coef.index, self.coef.to_numpy()):
            z = A * (Fk[:, a] - Fk[:, b]) + B
            r = np.where(z >= 0, 1.0 / (1.0 + np.exp(-np.abs(z))), np.exp(-np.abs(z)) / (1.0 + np.exp(-np.abs(z))))
            r = np.clip(r, 1e-7, 1 - 1e-7)  # as libsvm's min_prob
            R[:, a, b], R[:, b, a] = r, 1.0 - r
        return couple_pairwise(R)


def _full_F(F, K):
    F = np.asarray(F, dtype=float)
    if F.ndim == 1:
        return np.column_stack([-F, F])
    return F


def _fit_calibration(method, F, yk, K, w):
    if method == "multinomial":
        W, it, conv = mnl_fit(_mnl_features(F, K), smoothed_targets(yk, K, w), w)
        return W, it, conv
    Fk = _full_F(F, K)
    rows, idx = [], []
    for a in range(K):
        for b in range(a + 1, K):
            m = (yk == a) | (yk == b)
            A, B = _platt_pair(Fk[m, a] - Fk[m, b], yk[m] == a, w[m])
            rows.append((A, B))
            idx.append((a, b))
    coef = pd.DataFrame(rows, index=pd.MultiIndex.from_tuples(idx, names=["a", "b"]), columns=["A", "B"])
    return coef, 0, True


ProbCalibration.__module__ = "cohstats.models.lamsvm"  # its public home (documentation, saved files)
