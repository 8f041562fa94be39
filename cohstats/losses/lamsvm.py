"""The lambda-SVM multiclass hinge loss of [RH] and its classification calibration.

For K classes, a sum-to-zero decision vector ``f`` and true class ``y`` (0-based), with the
positive margin ``margin`` (the paper's lambda):

    Psi_y(f) = [margin - f_y]_+ + sum_{j != y} [1 + f_j]_+                          (4)-(5)

Pointwise risk (eq (6)): ``R(f; P) = sum_l P_l [margin - f_l]_+ + (1 - P_l) [1 + f_l]_+``.
Theorem 2: calibrated iff ``margin < 0`` or ``margin > (K - 2)/2`` (open interval).
Special cases: ``margin < -1`` is Lee, Lin & Wahba's loss at the optimum; ``margin = 1`` the
ISVM loss; ``margin = K - 1`` twice Liu & Yuan's reinforced hinge with ``gamma = 1/2``.

The risk is separable apart from ``sum f = 0``, so its whole minimiser set is available exactly:
it is ``{f : lo <= f <= hi, sum f = 0}`` for the box of subgradient-optimal coordinates at the
optimal multiplier (:func:`lamsvm_optimal_set`). :func:`lamsvm_minimizer` solves the LP with
``scipy.optimize.linprog`` instead (one vertex of that set).
"""

from __future__ import annotations

import math
import numbers

import numpy as np
from cohstats._numba_cache import njit

from cohstats._numba_cache import internal

from .multiclass import _P  # shared validation of class-probability vectors

__all__ = [
    "lamsvm_loss",
    "lamsvm_pointwise_risk",
    "lamsvm_minimizer",
    "lamsvm_optimal_set",
    "is_calibrated",
    "calibration_check",
]


# --------------------------------------------------------------------------- validation
def _margin(margin):
    if isinstance(margin, (bool, np.bool_)) or not isinstance(margin, numbers.Real):
        raise TypeError(f"margin must be a real number, got {margin!r}")
    m = float(margin)
    if not math.isfinite(m):
        raise ValueError(f"margin must be finite, got {margin!r}")
    return m


def _K(K):
    if isinstance(K, (bool, np.bool_)) or not isinstance(K, numbers.Integral):
        raise TypeError(f"K (number of classes) must be an integer, got {K!r}")
    if K < 2:
        raise ValueError(f"K (number of classes) must be >= 2, got {K}")
    return int(K)


# --------------------------------------------------------------------------- loss and risk
def lamsvm_loss(F, y, margin):
    """lambda-SVM loss ``[margin - f_y]_+ + sum_{j != y} [1 + f_j]_+`` for each row of F.

    Parameters
    ----------
    F : array_like, shape (n, K)
        Decision vectors (sum to zero in the lambda-SVM).
    y : array_like of int, shape (n,)
        Classes 0..K-1.
    margin : float
        The positive margin (lambda of [RH]).

    Returns
    -------
    ndarray, shape (n,)

    Examples
    --------
    >>> lamsvm_loss([[1.0, -0.5, -0.5]], [0], margin=2.0)
    array([2.])
    """
    m = _margin(margin)
    F = np.asarray(F, dtype=np.float64)
    if F.ndim != 2 or F.shape[1] < 2:
        raise ValueError(f"F must have shape (n, K) with K >= 2, got shape {F.shape}")
    y = np.asarray(y)
    if y.shape != (F.shape[0],):
        raise ValueError(f"y must have shape ({F.shape[0]},), got {y.shape}")
    if y.size and (not np.issubdtype(y.dtype, np.integer) or y.min() < 0 or y.max() >= F.shape[1]):
        raise ValueError(f"y must hold integer class codes 0..{F.shape[1] - 1}")
    rows = np.arange(F.shape[0])
    fy = F[rows, y]
    neg = np.maximum(1.0 + F, 0.0).sum(axis=1) - np.maximum(1.0 + fy, 0.0)
    return np.maximum(m - fy, 0.0) + neg


def lamsvm_pointwise_risk(f, P, margin):
    """Pointwise risk ``sum_l P_l [margin - f_l]_+ + (1 - P_l) [1 + f_l]_+`` ([RH] eq (6)).

    ``f`` and ``P`` broadcast over leading axes; the last axis is the class axis.

    Examples
    --------
    >>> float(lamsvm_pointwise_risk([2.0, -1.0, -1.0], [0.5, 0.3, 0.2], margin=-5.0))
    1.5
    """
    m = _margin(margin)
    P = _P(P)
    f = np.asarray(f, dtype=np.float64)
    r = (P * np.maximum(m - f, 0.0) + (1.0 - P) * np.maximum(1.0 + f, 0.0)).sum(axis=-1)
    return float(r) if np.ndim(r) == 0 else r


# --------------------------------------------------------------------------- LP minimiser
def _lp_one(P, m):
    K = P.shape[0]
    # x = [f (K), s (K), t (K)]; s_l >= m - f_l, t_l >= 1 + f_l, s, t >= 0, sum f = 0.
    cost = np.concatenate([np.zeros(K), P, 1.0 - P])
    I = np.eye(K)
    Z = np.zeros((K, K))
    A_ub = np.block([[-I, -I, Z], [I, Z, -I]])
    b_ub = np.concatenate([np.full(K, -m), np.full(K, -1.0)])
    A_eq = np.concatenate([np.ones(K), np.zeros(2 * K)])[None, :]
    bounds = [(None, None)] * K + [(0, None)] * (2 * K)
    from scipy.optimize import linprog  # (imported on use: scipy.optimize takes 0.3 s to import)

    res = linprog(cost, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=[0.0], bounds=bounds, method="highs")
    if res.status != 0:
        raise RuntimeError(f"linprog failed for P = {P}, margin = {m}: {res.message}")
    return res.x[:K]


def _unique_argmax(f, tol):
    s = np.sort(f)
    return bool(s[-1] - s[-2] > tol)


def lamsvm_minimizer(P, margin):
    """Minimiser of the pointwise risk over sum-to-zero f, by linear programming.

    Solves ``min sum_l P_l s_l + (1 - P_l) t_l`` subject to ``s_l >= margin - f_l``,
    ``t_l >= 1 + f_l``, ``s, t >= 0``, ``sum_l f_l = 0`` with ``scipy.optimize.linprog``
    (HiGHS). When the minimiser is not unique this is one vertex of the minimiser set; see
    :func:`lamsvm_optimal_set` for the whole set.

    Parameters
    ----------
    P : array_like, shape (K,) or (n, K)
        Class probabilities.
    margin : float

    Returns
    -------
    f : ndarray, shape like P
    unique : bool or ndarray of bool
        Whether the argmax of the returned f is unique (top value exceeds the runner-up by more
        than ``1e-9 (1 + |margin|)``).

    Examples
    --------
    >>> f, unique = lamsvm_minimizer([0.5, 0.3, 0.2], margin=-5.0)  # Lee et al.: (K-1, -1, -1)
    >>> f.round(8).tolist(), unique
    ([2.0, -1.0, -1.0], True)
    """
    m = _margin(margin)
    P = _P(P)
    tol = 1e-9 * (1.0 + abs(m))
    rows = np.atleast_2d(P)
    F = np.array([_lp_one(p, m) for p in rows])
    U = np.array([_unique_argmax(f, tol) for f in F])
    if P.ndim == 1:
        return F[0], bool(U[0])
    return F, U


# --------------------------------------------------------------------------- exact minimiser set
@internal
def _piece(P_l, m):
    """Breakpoints b1 <= b2 and slopes s0 < s1 < s2 of phi_l(t) = P_l[m - t]_+ + (1-P_l)[1 + t]_+."""
    s0 = -P_l
    s2 = 1.0 - P_l
    if m > -1.0:
        return -1.0, m, s0, 1.0 - 2.0 * P_l, s2
    if m < -1.0:
        return m, -1.0, s0, 0.0, s2
    return -1.0, -1.0, s0, 0.5 * (s0 + s2), s2


@njit(cache=True)
def _interval(P_l, m, mu):
    """{t : mu in subdifferential of phi_l at t} as (lo, hi); lo > hi if empty."""
    b1, b2, s0, s1, s2 = _piece(P_l, m)
    if mu < s0 or mu > s2:
        return math.inf, -math.inf
    if mu == s0:
        return -math.inf, b1
    if mu < s1:
        return b1, b1
    if mu == s1:
        return b1, b2
    if mu < s2:
        return b2, b2
    return b2, math.inf


@njit(cache=True)
def _optimal_box(P, m, lo, hi):
    """Fill lo, hi with the box whose intersection with {sum f = 0} is the minimiser set.

    mu = -nu is the common subgradient at the optimum (nu the multiplier of sum f = 0): any
    mu with 0 in [sum lo(mu), sum hi(mu)] is dual optimal, and then the primal optimal set is
    {f in box(mu) : sum f = 0}. Candidates are the slopes of all pieces and the midpoints
    between consecutive slopes (where every interval is a single point).
    """
    K = P.shape[0]
    cand = np.empty(3 * K)
    mu_lo = -math.inf
    mu_hi = math.inf
    for l in range(K):
        b1, b2, s0, s1, s2 = _piece(P[l], m)
        cand[3 * l] = s0
        cand[3 * l + 1] = s1
        cand[3 * l + 2] = s2
        mu_lo = max(mu_lo, s0)
        mu_hi = min(mu_hi, s2)
    cand = np.sort(cand)
    vals = np.empty(2 * cand.shape[0])
    nv = 0
    for i in range(cand.shape[0]):
        v = cand[i]
        if v < mu_lo or v > mu_hi:
            continue
        vals[nv] = v
        nv += 1
        if i + 1 < cand.shape[0]:
            w = 0.5 * (v + cand[i + 1])
            if w >= mu_lo and w <= mu_hi and w != v:
                vals[nv] = w
                nv += 1
    for q in range(nv):
        mu = vals[q]
        slo = 0.0
        shi = 0.0
        ok = True
        for l in range(K):
            a, b = _interval(P[l], m, mu)
            if a > b:
                ok = False
                break
            lo[l] = a
            hi[l] = b
            slo += a
            shi += b
        if ok and slo <= 0.0 and shi >= 0.0:
            return mu
    return math.nan


@njit(cache=True)
def _max_diff(lo, hi, j, k):
    """max (f_j - f_k) over {lo <= f <= hi, sum f = 0} (box assumed finite)."""
    K = lo.shape[0]
    lo_r = 0.0
    hi_r = 0.0
    for l in range(K):
        if l != j and l != k:
            lo_r += lo[l]
            hi_r += hi[l]
    s_lo = max(-hi_r, lo[j] + lo[k])
    s_hi = min(-lo_r, hi[j] + hi[k])
    if s_lo > s_hi:
        return -math.inf
    s = min(max(hi[j] + lo[k], s_lo), s_hi)
    return min(2.0 * hi[j] - s, s - 2.0 * lo[k])


@njit(cache=True)
def _uncalibrated_exact(Ps, m, tol):
    """For each row P: 1 if some minimiser's argmax is not the unique argmax of P, else 0."""
    n, K = Ps.shape
    out = np.zeros(n, dtype=np.int64)
    lo = np.empty(K)
    hi = np.empty(K)
    big = 4.0 * K * (1.0 + abs(m)) + 10.0
    for i in range(n):
        P = Ps[i]
        mu = _optimal_box(P, m, lo, hi)
        if mu != mu:
            out[i] = -1
            continue
        for l in range(K):
            lo[l] = max(lo[l], -big)
            hi[l] = min(hi[l], big)
        k = 0
        for l in range(1, K):
            if P[l] > P[k]:
                k = l
        bad = 0
        for j in range(K):
            if j != k and P[j] == P[k]:
                bad = 1  # tie in P: no unique argmax to recover
        for j in range(K):
            if j != k and _max_diff(lo, hi, j, k) >= -tol:
                bad = 1
        out[i] = bad
    return out


def lamsvm_optimal_set(P, margin):
    """The exact minimiser set of the pointwise risk: ``{f : lo <= f <= hi, sum f = 0}``.

    The risk is a sum of convex piecewise-linear functions of single coordinates, so f is
    optimal iff all coordinates share a subgradient ``mu`` (minus the multiplier of
    ``sum f = 0``); the box is ``{t : mu in d phi_l(t)}`` at a dual-optimal ``mu``. The box may
    be unbounded in a coordinate (``+-inf``) while its intersection with the hyperplane is
    bounded.

    Parameters
    ----------
    P : array_like, shape (K,)
    margin : float

    Returns
    -------
    lo, hi : ndarray, shape (K,)

    Examples
    --------
    >>> lo, hi = lamsvm_optimal_set([0.5, 0.3, 0.2], margin=-5.0)
    >>> lo.tolist(), hi.tolist()
    ([2.0, -1.0, -1.0], [2.0, -1.0, -1.0])
    """
    m = _margin(margin)
    P = _P(P)
    if P.ndim != 1:
        raise ValueError(f"P must have shape (K,), got {P.shape}")
    lo = np.empty(P.shape[0])
    hi = np.empty(P.shape[0])
    mu = _optimal_box(np.ascontiguousarray(P), m, lo, hi)
    if mu != mu:  # pragma: no cover - cannot happen for a valid P (strong duality)
        raise RuntimeError(f"no dual-optimal multiplier found for P = {P}, margin = {m}")
    # tighten each coordinate by the others' bounds (leaves the intersection unchanged)
    lo_t = lo.copy()
    hi_t = hi.copy()
    for l in range(P.shape[0]):
        lo_t[l] = max(lo[l], -np.sum(np.delete(hi, l)))
        hi_t[l] = min(hi[l], -np.sum(np.delete(lo, l)))
    return lo_t, hi_t


# --------------------------------------------------------------------------- calibration
def is_calibrated(margin, K):
    """Theorem 2 of [RH]: calibrated iff ``margin < 0`` or ``margin > (K - 2)/2`` (open).

    Examples
    --------
    >>> is_calibrated(1.0, 3), is_calibrated(1.0, 4), is_calibrated(-0.5, 10)
    (True, False, True)
    """
    m = _margin(margin)
    K = _K(K)
    return bool(m < 0.0 or m > (K - 2) / 2.0)


def calibration_check(margin, K, n_draws=10000, random_state=None, method="exact"):
    """Share of random class-probability vectors where the risk minimiser fails to classify.

    Reproduces the Monte Carlo experiment of [RH] Figure 2: draw ``n_draws`` vectors P uniformly
    on the simplex (Dirichlet(1, ..., 1)), minimise the pointwise risk (eq (6)) over sum-to-zero
    f, and count the P for which the minimiser's argmax is not the unique argmax of P.

    Parameters
    ----------
    margin : float
    K : int
        Number of classes (>= 2).
    n_draws : int, default 10000
    random_state : None, int or numpy.random.Generator
    method : {"exact", "linprog"}, default "exact"
        ``"exact"`` counts P as a failure when *some* minimiser (the whole set of
        :func:`lamsvm_optimal_set`) has an argmax other than the unique argmax of P -- the
        pointwise definition of calibration (Tewari & Bartlett), deterministic and fast.
        ``"linprog"`` checks only the vertex returned by :func:`lamsvm_minimizer` (what a
        generic LP experiment sees; slower, and never larger than the exact share).

    Returns
    -------
    float
        The failure share in [0, 1]; 0 for calibrated margins (Theorem 2).

    Examples
    --------
    >>> calibration_check(2.0, 4, n_draws=500, random_state=0)
    0.0
    >>> calibration_check(0.5, 4, n_draws=500, random_state=0) > 0
    True
    """
    m = _margin(margin)
    K = _K(K)
    if isinstance(n_draws, (bool, np.bool_)) or not isinstance(n_draws, numbers.Integral) or n_draws < 1:
        raise ValueError(f"n_draws must be a positive integer, got {n_draws!r}")
    if method not in ("exact", "linprog"):
        raise ValueError(f"method must be 'exact' or 'linprog', got {method!r}")
    rng = np.random.default_rng(random_state)
    Ps = np.ascontiguousarray(rng.dirichlet(np.ones(K), size=int(n_draws)))
    tol = 1e-9 * (1.0 + abs(m))
    if method == "exact":
        bad = _uncalibrated_exact(Ps, m, tol)
        if np.any(bad < 0):  # pragma: no cover
            raise RuntimeError("exact minimiser-set computation failed")
        return float(bad.mean())
    fails = 0
    for P in Ps:
        f = _lp_one(P, m)
        if not (_unique_argmax(f, tol) and int(np.argmax(f)) == int(np.argmax(P))):
            fails += 1
    return fails / float(n_draws)
