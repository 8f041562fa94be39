"""Angle-based multicategory large-margin losses (Zhang & Liu 2014) with the LUM loss of [LZW].

Angle-based classification (C. Zhang and Y. Liu, *Multicategory angle-based large-margin
classification*, Biometrika 101 (2014) 625-640; [ZL]) maps a K-class problem to a function
``f(x)`` in ``R^{K-1}`` and the K classes to the vertices ``W_1..W_K`` of a regular simplex
centred at the origin:

    W_1 = (K-1)^{-1/2} 1,
    W_j = -(1 + sqrt(K)) / (K-1)^{3/2} 1 + sqrt(K/(K-1)) e_{j-1},   j = 2..K,

unit vectors with ``sum_j W_j = 0`` and ``<W_j, W_k> = -1/(K-1)`` for ``j != k``. The class
margins are ``u_j = <f, W_j>`` (they sum to zero) and the prediction is ``argmax_j u_j`` (the
vertex with the smallest angle to ``f``). For K = 2 the vertices are ``W = (1, -1)``:
``u_1 = f``, ``u_2 = -f``, the binary margin problem with the first class coded ``+1``.

Two losses of an observation of class ``y`` are offered, for a binary margin loss ``V`` (here
the LUM ``V_{a,c}``):

* ``form="pairwise"`` (the loss :func:`cohstats.lum` fits): the pairwise-comparison loss of
  T. Zhang (*Statistical analysis of some multi-category large margin classification methods*,
  JMLR 5 (2004) 1225-1251; [Zh04]) on the angle-based margins,

      L(f, y) = (1/(K-1)) sum_{j != y} V(kappa (u_y - u_j)),   kappa = (K-1)/K.

  It depends on the margins only through their differences, so a class far from the others
  does not shift the comparison of two close classes (the plain angle loss below lets the sum
  constraint of the margins couple them: on iris it misclassifies 20 % of the test rows). With
  ``kappa = (K-1)/K`` the curvature of ``L`` in ``f`` is at most that of ``V``
  (``sum_{j != y} (W_y - W_j)(W_y - W_j)' = K W_y W_y' + K/(K-1) I``), and at K = 2 ``L`` is
  the binary LUM ``V(f)``. Fisher consistency (the order of the minimising margins is that
  of the class probabilities) holds for every strictly decreasing differentiable ``V``, so for
  the LUM with finite ``c``: if ``p_a > p_b`` and ``u_a < u_b``, swapping ``u_a`` and ``u_b``
  changes the risk by ``(p_a - p_b)`` times a sum of differences ``V(s) - V(t)``, ``s > t``, all
  negative, so it lowers the risk; and ``u_a = u_b`` would make the stationarity equations of
  ``a`` and ``b`` (below) differ by ``(p_a - p_b)(sum_{j != a} q_aj + q_ab) != 0``.
* ``form="angle"``: ``L(f, y) = V(u_y)`` ([ZL]).

Inverse link of the pairwise form (derived here). The population risk
``sum_y p_y L(f, y)`` is invariant to a common shift of the margins, so it is stationary
where its derivative in every ``u_k`` vanishes:

    p_k sum_{j != k} q_kj = sum_{j != k} p_j q_jk,   q_kj = |V'(kappa (u_k - u_j))| > 0,

the balance equations of the K-state Markov chain with rates ``q_kj`` from ``k`` to ``j``.
Every ``f`` therefore minimises the risk of exactly one ``p`` in the open simplex, the chain's
stationary distribution, computed by the elimination of Grassmann, Taksar & Heyman (1985) in
the order of increasing margin (every divisor is a sum of rates ``|V'(t)| = 1``, ``t <= 0``, so
no subtraction and no division by a small number). At K = 2 it is [LZW]'s LUM link. The
population minimiser for a given ``p`` has no closed form; :func:`angle_lum_minimizer`
minimises the (convex) risk by Newton's method. For ``c > 0`` the rates are 1 for every pair
within ``c/((1+c) kappa)`` of each other, so the link is flat there (many ``f``, one ``p``).

Inverse link of the angle form. Stationarity ``sum_j p_j V'(u_j) W_j = 0`` and
``sum_j W_j = 0`` being the vertices' only linear relation give ``p_j`` proportional to
``1/|V'(u_j)|``; for the LUM ``log(1/|V'(u)|) = (a+1) log1p(max((1+c) u - c, 0)/a)``
(``max((1+c) u - c, 0)`` for ``a = inf``), normalised in log space. At the minimiser the
common value ``p_j |V'(u_j)|`` equals ``min_j p_j``, which gives the closed form

    u_j = (a ((p_j / p_min)^{1/(a+1)} - 1) + c) / (1 + c)   for every j but the least likely
    class, whose margin is minus the sum of the others.

With ``c = inf`` (the hinge) neither link exists.
"""

from __future__ import annotations

import math

import numpy as np
from cohstats._numba_cache import njit

from .scalar import lum_d1, lum_value

__all__ = [
    "simplex_vertices",
    "angle_lum_loss",
    "angle_lum_margins",
    "angle_lum_proba",
    "angle_lum_log_weights",
    "angle_lum_minimizer",
    "angle_lum_risk",
]


@njit(cache=True)
def simplex_vertices_nb(K):
    """The (K, K-1) matrix whose rows are the simplex vertices W_1..W_K (module docstring)."""
    km1 = K - 1
    W = np.empty((K, km1))
    if K == 2:  # (1, -1) exactly (the general formula rounds the second)
        W[0, 0] = 1.0
        W[1, 0] = -1.0
        return W
    r = 1.0 / math.sqrt(km1)
    a = -(1.0 + math.sqrt(K)) / (km1 * math.sqrt(km1))
    b = math.sqrt(K / km1)
    for k in range(km1):
        W[0, k] = r
    for j in range(1, K):
        for k in range(km1):
            W[j, k] = a
        W[j, j - 1] += b
    return W


def simplex_vertices(K):
    """Vertices ``W_1..W_K`` of the angle-based coding (rows of a (K, K-1) array).

    Unit vectors summing to zero with pairwise inner products ``-1/(K-1)`` (Zhang & Liu 2014).

    Examples
    --------
    >>> import numpy as np
    >>> W = simplex_vertices(3)
    >>> bool(np.allclose(W @ W.T, [[1, -.5, -.5], [-.5, 1, -.5], [-.5, -.5, 1]]))
    True
    >>> simplex_vertices(2).ravel().tolist()
    [1.0, -1.0]
    """
    K = int(K)
    if K < 2:
        raise ValueError(f"K (number of classes) must be at least 2; got K={K}")
    return simplex_vertices_nb(K)


@njit(cache=True)
def alum_logw(u, a, c):
    """log(1/|V'(u)|) for the LUM loss V_{a,c} (0 on the linear piece u < c/(1+c))."""
    s = (1.0 + c) * u - c
    if not s > 0.0:
        return 0.0
    if a == math.inf:
        return s
    return (a + 1.0) * math.log1p(s / a)


@njit(cache=True)
def _logw_rows(U, a, c, out):
    n, K = U.shape
    for i in range(n):
        for j in range(K):
            out[i, j] = alum_logw(U[i, j], a, c)


@njit(cache=True)
def _loss_rows(Ft, y, a, c, form, W, out):
    for i in range(Ft.shape[1]):
        out[i] = alum_obs_value(Ft, i, y[i], a, c, form, W)


@njit(cache=True)
def _risk(f, P, a, c, W):
    """Population risk sum_j p_j V(<f, W_j>) and its gradient in f."""
    K = W.shape[0]
    r = 0.0
    g = np.zeros(W.shape[1])
    for j in range(K):
        u = 0.0
        for k in range(W.shape[1]):
            u += f[k] * W[j, k]
        r += P[j] * lum_value(u, a, c)
        d = P[j] * lum_d1(u, a, c)
        for k in range(W.shape[1]):
            g[k] += d * W[j, k]
    return r, g


#: loss forms of the angle-based LUM, as the float the solvers carry (``Loss.u``)
FORM_ANGLE = 0.0  #: ``V(<f, W_y>)`` ([ZL])
FORM_PAIRWISE = 1.0  #: ``(1/(K-1)) sum_{j != y} V(kappa (u_y - u_j))`` ([Zh04]; the default)
FORMS = {"angle": FORM_ANGLE, "pairwise": FORM_PAIRWISE}


@njit(cache=True, nogil=True)
def alum_obs_value(F, i, y, a, c, form, W):
    """Loss of observation ``i`` (column ``i`` of the (K-1, n) fits ``F``) of class ``y`` for the
    loss form ``form`` (:data:`FORM_ANGLE` or :data:`FORM_PAIRWISE`; module docstring)."""
    G = F.shape[0]
    uy = 0.0
    for k in range(G):
        uy += F[k, i] * W[y, k]
    if form == FORM_ANGLE:
        return lum_value(uy, a, c)
    kap = G / (G + 1.0)
    s = 0.0
    for j in range(G + 1):
        if j != y:
            u = 0.0
            for k in range(G):
                u += F[k, i] * W[j, k]
            s += lum_value(kap * (uy - u), a, c)
    return s / G


@njit(cache=True, nogil=True)
def alum_obs_neg_grad(F, i, y, a, c, form, W, wi, R):
    """``R[:, i] = -wi`` times the gradient in ``f`` of :func:`alum_obs_value`: ``V'(u_y) W_y``
    (angle form) or ``(kappa/(K-1)) sum_{j != y} V'(kappa (u_y - u_j)) (W_y - W_j)`` (pairwise)."""
    G = F.shape[0]
    uy = 0.0
    for k in range(G):
        uy += F[k, i] * W[y, k]
    if form == FORM_ANGLE:
        d = -wi * lum_d1(uy, a, c)
        for k in range(G):
            R[k, i] = d * W[y, k]
        return
    kap = G / (G + 1.0)
    for k in range(G):
        R[k, i] = 0.0
    for j in range(G + 1):
        if j != y:
            u = 0.0
            for k in range(G):
                u += F[k, i] * W[j, k]
            d = -wi * kap * lum_d1(kap * (uy - u), a, c) / G
            for k in range(G):
                R[k, i] += d * (W[y, k] - W[j, k])


@njit(cache=True)
def _pair_proba_rows(U, a, c, out):
    """Inverse link of the pairwise form, row by row: the stationary distribution of the
    Markov chain with rates ``q_kj = |V'(kappa (u_k - u_j))|`` (module docstring), by the
    elimination of Grassmann, Taksar & Heyman (1985), lowest margin first: every divisor is a
    sum of rates towards higher margins, each 1, so nothing cancels and nothing divides by 0."""
    n, K = U.shape
    kap = (K - 1.0) / K
    Q = np.empty((K, K))
    pi = np.empty(K)
    for i in range(n):
        order = np.argsort(U[i])
        for r in range(K):
            for t in range(K):
                Q[r, t] = 0.0 if r == t else -lum_d1(kap * (U[i, order[r]] - U[i, order[t]]), a, c)
        for m in range(K - 1):
            s = 0.0
            for t in range(m + 1, K):
                s += Q[m, t]
            Q[m, m] = s
            for r in range(m + 1, K):
                q = Q[r, m]
                if q != 0.0:
                    for t in range(m + 1, K):
                        if t != r:
                            Q[r, t] += q * Q[m, t] / s
        pi[K - 1] = 1.0
        tot = 1.0
        for m in range(K - 2, -1, -1):
            v = 0.0
            for r in range(m + 1, K):
                v += pi[r] * Q[r, m]
            pi[m] = v / Q[m, m]
            tot += pi[m]
        for m in range(K):
            out[i, order[m]] = pi[m] / tot


def _ac(a, c, allow_inf_c=False):
    a = float(a)
    c = float(c)
    if not a > 0:
        raise ValueError(f"a must be positive (np.inf allowed); got a={a!r}")
    if not c >= 0 or (math.isinf(c) and not allow_inf_c):
        raise ValueError(
            f"c must be a finite number >= 0 here (c = inf is the hinge, which has no inverse link); got c={c!r}"
        )
    return a, c


def _F(F, name="F"):
    F = np.asarray(F, dtype=np.float64)
    if F.ndim == 1:
        F = F[None, :]
    if F.ndim != 2 or F.shape[1] < 1:
        raise ValueError(f"{name} must be an (n, K-1) array of angle-based decision values; got shape {np.shape(F)}")
    return np.ascontiguousarray(F)


def angle_lum_margins(F):
    """Class margins ``u_ij = <f_i, W_j>`` (rows sum to zero) of (n, K-1) decision values."""
    F = _F(F)
    return F @ simplex_vertices(F.shape[1] + 1).T


def _form(form):
    if form not in FORMS:
        raise ValueError(f"form must be one of {sorted(FORMS)}; got form={form!r}")
    return form


def angle_lum_loss(F, y, a=1000.0, c=0.0, form="pairwise"):
    """Angle-based LUM loss per row (module docstring); ``y`` class codes 0..K-1.

    ``form="pairwise"`` (default, the loss :func:`cohstats.lum` fits):
    ``(1/(K-1)) sum_{j != y} V_{a,c}(kappa (u_y - u_j))``; ``form="angle"``: ``V_{a,c}(u_y)``.

    Examples
    --------
    >>> import numpy as np
    >>> from cohstats.losses.binary import lum_loss
    >>> f = np.array([[0.7], [-0.2]])                       # K = 2: W = (1, -1)
    >>> bool(np.allclose(angle_lum_loss(f, [0, 1], a=2.0, c=1.0), lum_loss([0.7, 0.2], 2.0, 1.0)))
    True
    """
    F = _F(F)
    a, c = _ac(a, c, allow_inf_c=True)
    y = np.ascontiguousarray(y, dtype=np.int64).ravel()
    K = F.shape[1] + 1
    if y.shape[0] != F.shape[0] or y.min() < 0 or y.max() >= K:
        raise ValueError(f"y must hold {F.shape[0]} class codes in 0..{K - 1}")
    out = np.empty(F.shape[0])
    _loss_rows(np.ascontiguousarray(F.T), y, a, c, FORMS[_form(form)], simplex_vertices(K), out)
    return out


def _by_margins(rows, F, a, c):
    """``rows(U, a, c, out)`` applied to the class margins ``U`` of ``F``; returns ``out``."""
    F = _F(F)
    a, c = _ac(a, c)
    U = np.ascontiguousarray(angle_lum_margins(F))
    out = np.empty_like(U)
    rows(U, a, c, out)
    return out


def angle_lum_log_weights(F, a=1000.0, c=0.0):
    """``log(1/|V'(u_ij)|)`` for every row and class: the unnormalised log-probabilities of the
    angle form (``p_j`` proportional to ``1/|V'(u_j)|``)."""
    return _by_margins(_logw_rows, F, a, c)


def angle_lum_proba(F, a=1000.0, c=0.0, form="pairwise"):
    """Class probabilities from angle-based LUM decision values: the inverse link of the loss
    ``form`` (module docstring).

    Pairwise form: the stationary distribution of the K-state Markov chain with rates
    ``|V'(kappa (u_k - u_j))|`` from ``k`` to ``j``, by a subtraction-free elimination (every
    entry positive for finite margins; rows sum to one). Angle form: ``p_ij`` proportional to
    ``1/|V'(<f_i, W_j>)|``, normalised in log space. For K = 2 both are [LZW]'s LUM link.

    Examples
    --------
    >>> import numpy as np
    >>> P = angle_lum_proba(np.array([[0.0, 0.0], [3.0, -1.0]]))
    >>> bool(np.allclose(P[0], 1 / 3)), bool(np.allclose(P.sum(axis=1), 1.0))
    (True, True)
    """
    if _form(form) == "pairwise":
        return _by_margins(_pair_proba_rows, F, a, c)
    L = angle_lum_log_weights(F, a, c)
    L -= L.max(axis=1, keepdims=True)
    E = np.exp(L)
    return E / E.sum(axis=1, keepdims=True)


def _check_P(P):
    P = np.asarray(P, dtype=np.float64)
    one = P.ndim == 1
    P = np.atleast_2d(P)
    if P.shape[1] < 2 or np.any(~(P > 0)) or not np.allclose(P.sum(axis=1), 1.0, atol=1e-10):
        raise ValueError("P must hold positive class probabilities summing to one per row")
    return P, one


def _pair_risk_newton(p, a, c, W, tol=1e-13, max_iter=500):
    """Minimiser of the pairwise population risk for one probability vector ``p``: Newton's
    method in ``f`` with a backtracking line search (the risk is convex; a tiny Levenberg
    shift keeps the step defined where ``c > 0`` leaves it flat)."""
    f = np.zeros(W.shape[1])
    r, g, H = _pair_risk(f, p, a, c, W, True)
    for _ in range(max_iter):
        if np.max(np.abs(g)) < tol:
            break
        d = np.linalg.solve(H + 1e-12 * (1.0 + np.trace(H)) * np.eye(H.shape[0]), -g)
        dec = -float(g @ d)
        if not dec > 0:
            break
        t = 1.0
        for _ in range(60):
            rn, gn, Hn = _pair_risk(f + t * d, p, a, c, W, True)
            if rn <= r - 1e-4 * t * dec:
                break
            t *= 0.5
        else:
            break  # no decrease at float precision
        f, r, g, H = f + t * d, rn, gn, Hn
    return f


def _pair_risk(f, p, a, c, W, hess=False):
    """Pairwise population risk, its gradient and (optionally) Hessian in ``f``."""
    from cohstats.losses.binary import get_loss

    K = W.shape[0]
    kap = (K - 1.0) / K
    loss = get_loss("lum", a=a, c=c)
    u = W @ f
    T = kap * (u[:, None] - u[None, :])
    off = ~np.eye(K, dtype=bool)
    A0 = np.where(off, p[:, None] * loss.value(T), 0.0)
    A1 = np.where(off, p[:, None] * loss.d1(T), 0.0)
    r = A0.sum() / (K - 1)
    gu = kap * (A1.sum(axis=1) - A1.sum(axis=0)) / (K - 1)
    g = W.T @ gu
    if not hess:
        return float(r), g
    A2 = np.where(off, p[:, None] * loss.d2(T), 0.0)
    S = A2 + A2.T
    Hu = kap * kap * (np.diag(S.sum(axis=1)) - S) / (K - 1)
    return float(r), g, W.T @ Hu @ W


def angle_lum_minimizer(P, a=1000.0, c=0.0, form="pairwise"):
    """Population minimiser ``f*(p)`` in ``R^{K-1}`` for class probabilities ``P`` ((K,) or
    (n, K), positive rows summing to one).

    Pairwise form: a numerical minimisation of the convex risk (Newton's method; for ``c > 0``
    the minimiser need not be unique and one of them is returned). Angle form: the closed form
    of the module docstring (when several classes share the smallest probability, the minimiser
    splitting their negative total margin equally).

    Examples
    --------
    >>> import numpy as np
    >>> f = angle_lum_minimizer([0.5, 0.3, 0.2], a=1.0, c=0.0)
    >>> bool(np.allclose(angle_lum_proba(f, a=1.0, c=0.0), [0.5, 0.3, 0.2]))
    True
    """
    a, c = _ac(a, c)
    P, one = _check_P(P)
    K = P.shape[1]
    if _form(form) == "pairwise":
        W = simplex_vertices(K)
        Fs = np.array([_pair_risk_newton(p, a, c, W) for p in P])
        return Fs[0] if one else Fs
    lr = np.log(P) - np.log(P.min(axis=1, keepdims=True))  # log(p_j / p_min) >= 0
    if math.isinf(a):
        U = (lr + c) / (1.0 + c)
    else:
        U = (a * np.expm1(lr / (a + 1.0)) + c) / (1.0 + c)
    low = lr <= 1e-15  # the least likely classes
    U[low] = 0.0
    tot = U.sum(axis=1, keepdims=True)
    m = low.sum(axis=1, keepdims=True)
    U = np.where(low, -tot / m, U)
    Fs = U @ simplex_vertices(K) * ((K - 1.0) / K)  # W'W = K/(K-1) I
    return Fs[0] if one else Fs


def angle_lum_risk(f, P, a=1000.0, c=0.0, form="pairwise"):
    """Population risk ``sum_j p_j L(f, j)`` of the loss ``form`` and its gradient in ``f`` (K-1,)."""
    a, c = _ac(a, c, allow_inf_c=True)
    f = np.ascontiguousarray(f, dtype=np.float64).ravel()
    P = np.ascontiguousarray(P, dtype=np.float64).ravel()
    if P.shape[0] != f.shape[0] + 1:
        raise ValueError(f"P must have K = {f.shape[0] + 1} entries for f of length {f.shape[0]}")
    W = simplex_vertices(P.shape[0])
    if _form(form) == "pairwise":
        return _pair_risk(f, P, a, c, W)
    r, g = _risk(f, P, a, c, W)
    return float(r), g
