"""Multicategory coherence loss of [ZJLY] and related multiclass margin losses.

A margin vector ``g = (g_1..g_K)`` (rows of ``G``; sum-to-zero is the identifiability
convention -- every function here is invariant to adding a constant to a row) and a class
``c in 0..K-1`` (0-based, unlike the papers). For temperature ``T > 0``:

* ``C(g, c) = T log(1 + sum_{j != c} exp((1 + g_j - g_c)/T))``  (eq (6)),
* ``beta^c_j = softmax_j(e(c))`` with ``e_j(c) = (1 + g_j - g_c)/T`` (j != c), ``e_c(c) = 0``
  (eq (5)); ``dC/dg_j = beta^c_j - I[j = c]``,
* ``P_c = sum_l exp((1 + g_l + g_c - I[l = c])/T) / (sum over c too)`` (eq (8)), the class
  probabilities at the population minimiser (Theorem 1),
* Crammer-Singer hinge ``H``, lower bound ``S`` and multinomial deviance ``Lmult``
  (eq (3), Theorem 2, eq (2)).

The njit row functions (``mc_*``) take one row ``g`` (1-D float64 array) and are what solvers
(e.g. GentleBoost.C) call; the vectorised functions validate and loop over rows.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
from cohstats._numba_cache import njit

from cohstats._numba_cache import internal


__all__ = [
    "mc_coh_loss",
    "mc_coh_loss_u",
    "mc_coh_beta",
    "mc_coh_beta_u",
    "mc_coh_prob",
    "mc_hinge",
    "mc_S",
    "mc_lmult",
    "coherence_loss",
    "coherence_weights",
    "coherence_grad",
    "coherence_hessian",
    "coherence_proba",
    "coherence_minimizer",
    "coherence_risk",
    "hinge_loss",
    "S_loss",
    "lmult_loss",
    "multinomial_proba",
]


# --------------------------------------------------------------------------- row kernels
@internal
def mc_coh_loss_u(g, c, T, u):
    """Coherence loss with margin ``u``: ``T log(1 + sum_{j != c} exp((u + g_j - g_c)/T))``.

    ``u = 1`` is [ZJLY]'s loss C(g, c) of eq (6); ``u = 0, T = 1`` is the multinomial logistic
    loss ``-log softmax_c(g)``. Stable: with m = max_{j != c} e_j, ``T log1p(sum exp(e_j))`` if
    m <= 0, else ``T (m + log1p(exp(-m) + sum_{j != c, j != argmax} exp(e_j - m)))``.
    """
    K = g.shape[0]
    gc = g[c]
    m = -math.inf
    jm = -1
    for j in range(K):
        if j != c:
            e = (u + g[j] - gc) / T
            if e > m:
                m = e
                jm = j
    if jm < 0:  # K == 1
        return 0.0
    if m <= 0.0:
        s = 0.0
        for j in range(K):
            if j != c:
                s += math.exp((u + g[j] - gc) / T)
        return T * math.log1p(s)
    s = math.exp(-m)
    for j in range(K):
        if j != c and j != jm:
            s += math.exp((u + g[j] - gc) / T - m)
    return T * (m + math.log1p(s))


@njit(cache=True, nogil=True, inline="always")
def mc_coh_loss(g, c, T):
    """Coherence loss C(g, c) of eq (6) for one row g, true class c (0-based), temperature T
    (:func:`mc_coh_loss_u` with margin 1)."""
    return mc_coh_loss_u(g, c, T, 1.0)


@internal
def mc_coh_beta_u(g, c, T, u, out):
    """Soft weights beta^c with margin ``u``: stable softmax of ``e(c)``, ``e_j(c) = (u + g_j -
    g_c)/T`` (j != c), ``e_c(c) = 0``, written into ``out`` (length K); ``dC/dg_j = beta^c_j -
    I[j = c]``."""
    K = g.shape[0]
    gc = g[c]
    m = 0.0  # e_c = 0
    for j in range(K):
        if j != c:
            e = (u + g[j] - gc) / T
            if e > m:
                m = e
    s = 0.0
    for j in range(K):
        if j == c:
            v = math.exp(-m)
        else:
            v = math.exp((u + g[j] - gc) / T - m)
        out[j] = v
        s += v
    for j in range(K):
        out[j] /= s
    return out


@njit(cache=True, nogil=True, inline="always")
def mc_coh_beta(g, c, T, out):
    """Soft weights beta^c (eq (5)) into ``out`` (:func:`mc_coh_beta_u` with margin 1)."""
    return mc_coh_beta_u(g, c, T, 1.0, out)


@njit(cache=True, nogil=True)
def mc_coh_prob(g, T, out):
    """Class probabilities of eq (8) for one row g (in a stable form), into ``out``.

    ``M_c = logsumexp_l (1 + g_l + g_c - I[l = c])/T``, ``P_c = exp(M_c - logsumexp_j M_j)``.
    """
    K = g.shape[0]
    for c in range(K):
        mm = -math.inf
        for l in range(K):
            v = (1.0 + g[l] + g[c] - (1.0 if l == c else 0.0)) / T
            if v > mm:
                mm = v
        s = 0.0
        for l in range(K):
            s += math.exp((1.0 + g[l] + g[c] - (1.0 if l == c else 0.0)) / T - mm)
        out[c] = mm + math.log(s)
    mM = -math.inf
    for c in range(K):
        if out[c] > mM:
            mM = out[c]
    s = 0.0
    for c in range(K):
        out[c] = math.exp(out[c] - mM)
        s += out[c]
    for c in range(K):
        out[c] /= s
    return out


@njit(cache=True, nogil=True)
def mc_hinge(g, c):
    """Crammer-Singer hinge H(g, c) = max_j {g_j + 1 - I[j = c]} - g_c (eq (3))."""
    K = g.shape[0]
    m = -math.inf
    for j in range(K):
        v = g[j] + (0.0 if j == c else 1.0)
        if v > m:
            m = v
    return m - g[c]


@njit(cache=True, nogil=True)
def mc_S(g, c):
    """Lower bound S(g, c) = (1/K) sum_{j != c} (1 + g_j - g_c) (Theorem 2)."""
    K = g.shape[0]
    s = 0.0
    for j in range(K):
        if j != c:
            s += 1.0 + g[j] - g[c]
    return s / K


@njit(cache=True, nogil=True)
def mc_lmult(g, c):
    """Multinomial deviance Lmult(g, c) = log sum_j exp(g_j - g_c) (eq (2)), stable.

    ``log1p(sum_{j != c} exp(g_j - g_c))`` when every g_j <= g_c (accurate for tiny values),
    else ``m + log1p(exp(-m) + ...)`` with m the largest ``g_j - g_c``.
    """
    K = g.shape[0]
    m = -math.inf
    jm = -1
    for j in range(K):
        if j != c and g[j] - g[c] > m:
            m = g[j] - g[c]
            jm = j
    if jm < 0:
        return 0.0
    if m <= 0.0:
        s = 0.0
        for j in range(K):
            if j != c:
                s += math.exp(g[j] - g[c])
        return math.log1p(s)
    s = math.exp(-m)
    for j in range(K):
        if j != c and j != jm:
            s += math.exp(g[j] - g[c] - m)
    return m + math.log1p(s)


# --------------------------------------------------------------------------- row loops
@njit(cache=True, nogil=True)
def _loss_rows(G, y, T, kind, u):
    n = G.shape[0]
    out = np.empty(n)
    for i in range(n):
        if kind == 0:
            out[i] = mc_coh_loss_u(G[i], y[i], T, u)
        elif kind == 1:
            out[i] = mc_hinge(G[i], y[i])
        elif kind == 2:
            out[i] = mc_S(G[i], y[i])
        else:
            out[i] = mc_lmult(G[i], y[i])
    return out


@njit(cache=True, nogil=True)
def _beta_rows(G, y, T, grad):
    n, K = G.shape
    out = np.empty((n, K))
    for i in range(n):
        mc_coh_beta(G[i], y[i], T, out[i])
        if grad:
            out[i, y[i]] -= 1.0
    return out


@njit(cache=True, nogil=True)
def _prob_rows(G, T):
    n, K = G.shape
    out = np.empty((n, K))
    for i in range(n):
        mc_coh_prob(G[i], T, out[i])
    return out


@internal
def _pop_risk_grad_hess(g, P, T, beta, grad, hess):
    """Population risk sum_c P_c C(g, c) with its gradient and Hessian (in place)."""
    K = g.shape[0]
    r = 0.0
    for j in range(K):
        grad[j] = 0.0
        for k in range(K):
            hess[j, k] = 0.0
    for c in range(K):
        pc = P[c]
        if pc == 0.0:
            continue
        r += pc * mc_coh_loss(g, c, T)
        mc_coh_beta(g, c, T, beta)
        for j in range(K):
            grad[j] += pc * beta[j]
            hess[j, j] += pc * beta[j] / T
            for k in range(K):
                hess[j, k] -= pc * beta[j] * beta[k] / T
        grad[c] -= pc
    return r


@internal
def _pop_risk(g, P, T):
    r = 0.0
    for c in range(g.shape[0]):
        if P[c] != 0.0:
            r += P[c] * mc_coh_loss(g, c, T)
    return r


@internal
def _newton_dir(hess, grad, delta, A, rhs):
    """Solve the KKT system [[H + delta I, 1], [1', 0]] [d; nu] = [-grad; 0]."""
    K = grad.shape[0]
    for j in range(K):
        for k in range(K):
            A[j, k] = hess[j, k]
        A[j, j] += delta
        A[j, K] = 1.0
        A[K, j] = 1.0
        rhs[j] = -grad[j]
    A[K, K] = 0.0
    rhs[K] = 0.0
    _gauss_solve(A, rhs)
    return rhs[:K].copy()


@internal
def _gauss_solve(A, b):
    """Solve ``A x = b`` in place (``b`` receives ``x``; ``A`` is overwritten) by Gaussian
    elimination with partial pivoting: a small dense system, without a LAPACK call to compile."""
    m = b.shape[0]
    for c in range(m):
        piv = c
        best = abs(A[c, c])
        for r in range(c + 1, m):
            if abs(A[r, c]) > best:
                best = abs(A[r, c])
                piv = r
        if piv != c:
            for k in range(m):
                t = A[c, k]
                A[c, k] = A[piv, k]
                A[piv, k] = t
            t = b[c]
            b[c] = b[piv]
            b[piv] = t
        d = A[c, c]
        for r in range(c + 1, m):
            f = A[r, c] / d
            if f != 0.0:
                for k in range(c, m):
                    A[r, k] -= f * A[c, k]
                b[r] -= f * b[c]
    for c in range(m - 1, -1, -1):
        t = b[c]
        for k in range(c + 1, m):
            t -= A[c, k] * b[k]
        b[c] = t / A[c, c]


@njit(cache=True, nogil=True)
def _minimize_pop_risk(P, T, tol, max_iter):
    """Regularised, damped Newton on the sum-to-zero subspace (KKT system with one multiplier).

    The ridge starts at (projected-gradient size) x (mean Hessian diagonal), so it vanishes
    near the optimum (quadratic convergence) and keeps the system nonsingular where the soft
    weights saturate; steps are capped by a trust radius in max-norm (start 1 + T, grown after
    full capped steps, shrunk after backtracking), which stops the first Newton steps from
    overshooting into the flat region where the Hessian underflows; when Armijo backtracking
    fails the ridge grows (a Levenberg-Marquardt safeguard). Every accepted step decreases the
    risk.
    """
    K = P.shape[0]
    g = np.zeros(K)
    beta = np.empty(K)
    grad = np.empty(K)
    hess = np.empty((K, K))
    A = np.zeros((K + 1, K + 1))
    rhs = np.zeros(K + 1)
    gnew = np.empty(K)
    converged = False
    it = 0
    r = _pop_risk_grad_hess(g, P, T, beta, grad, hess)
    radius = 1.0 + T  # trust radius (max-norm) on the step: the natural scale of margins
    for it in range(1, max_iter + 1):
        gm = 0.0
        for j in range(K):
            gm += grad[j]
        gm /= K
        pg = 0.0
        for j in range(K):
            pg = max(pg, abs(grad[j] - gm))
        if pg <= tol:
            converged = True
            break
        hscale = 0.0
        for j in range(K):
            hscale += hess[j, j]
        hscale = max(hscale / K, 1e-300)
        delta = max(min(pg, 1.0) * hscale, 1e-13 * hscale)
        accepted = False
        small = False
        for attempt in range(40):
            d = _newton_dir(hess, grad, delta, A, rhs)
            slope = 0.0
            for j in range(K):
                slope += grad[j] * d[j]
            if not (slope < 0.0):
                delta = max(10.0 * delta, pg)
                continue
            if -slope <= 1e-30 * (1.0 + abs(r)):
                small = True  # Newton decrement below rounding: no further decrease possible
                break
            dn = 0.0
            for j in range(K):
                dn = max(dn, abs(d[j]))
            clipped = dn > radius
            if clipped:  # stay in the trust region (saturated weights make H nearly singular)
                for j in range(K):
                    d[j] *= radius / dn
                slope *= radius / dn
            step = 1.0
            for half in range(60):
                for j in range(K):
                    gnew[j] = g[j] + step * d[j]
                rnew = _pop_risk(gnew, P, T)
                if rnew <= r + 1e-4 * step * slope + 4e-16 * abs(r):
                    accepted = True
                    break
                step *= 0.5
            if accepted:
                if clipped and step == 1.0:
                    radius *= 4.0
                elif step < 1.0:
                    radius = max(step * min(dn, radius), 1e-12)
                break
            delta = max(100.0 * delta, pg)
        if small:
            converged = True
            break
        if not accepted:
            break  # stalled: reported as not converged
        mu = 0.0
        for j in range(K):
            mu += gnew[j]
        mu /= K  # re-centre to remove drift from rounding
        for j in range(K):
            g[j] = gnew[j] - mu
        r = _pop_risk_grad_hess(g, P, T, beta, grad, hess)
    return g, it, converged


# --------------------------------------------------------------------------- validation
def _T(T):
    if isinstance(T, (bool, np.bool_)) or not isinstance(T, numbers.Real):
        raise TypeError(f"T must be a real number, got {T!r}")
    T = float(T)
    if not (T > 0.0 and math.isfinite(T)):
        raise ValueError(f"T (temperature) must be a finite number > 0, got {T!r}")
    return T


def _G(G, name="G"):
    try:
        a = np.ascontiguousarray(G, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be a numeric array of shape (n, K)") from exc
    if a.ndim != 2 or a.shape[1] < 2:
        raise ValueError(f"{name} must have shape (n, K) with K >= 2 classes, got shape {a.shape}")
    return a


def _y(y, n, K):
    a = np.asarray(y)
    if a.ndim != 1 or a.shape[0] != n:
        raise ValueError(f"y must be a 1-D array of length {n} (rows of G), got shape {a.shape}")
    if a.size and not np.issubdtype(a.dtype, np.integer):
        if not np.all(np.isfinite(a)) or np.any(a != np.round(a)):
            raise TypeError("y must hold integer class codes 0..K-1")
    a = a.astype(np.int64)
    if a.size and (a.min() < 0 or a.max() >= K):
        bad = a[(a < 0) | (a >= K)][0]
        raise ValueError(f"y must hold class codes in 0..{K - 1}, got {bad}")
    return np.ascontiguousarray(a)


# --------------------------------------------------------------------------- vectorised API
def coherence_loss(G, y, T=1.0, margin=1.0):
    """Multicategory coherence loss C(g_i, y_i) of [ZJLY] eq (6) for every row.

    Parameters
    ----------
    G : array_like, shape (n, K)
        Margin vectors (rows conventionally sum to zero).
    y : array_like of int, shape (n,)
        True classes coded 0..K-1.
    T : float, default 1
        Temperature ``T > 0``.
    margin : float, default 1
        The margin ``u`` of :func:`mc_coh_loss_u` (``margin=0, T=1``: the multinomial logistic
        loss ``-log softmax``).

    Returns
    -------
    ndarray, shape (n,)

    Examples
    --------
    >>> import numpy as np
    >>> bool(np.isclose(coherence_loss(np.zeros((1, 3)), [0], T=1.0)[0], np.log(1 + 2 * np.e)))
    True
    """
    T = _T(T)
    G = _G(G)
    y = _y(y, G.shape[0], G.shape[1])
    return _loss_rows(G, y, T, 0, float(margin))


def coherence_weights(G, y, T=1.0):
    """Soft weights beta^{y_i}(g_i) of eq (5), shape (n, K); rows sum to one.

    Examples
    --------
    >>> import numpy as np
    >>> coherence_weights(np.zeros((1, 2)), [0], T=1.0).round(4)  # (1, e)/(1+e)
    array([[0.2689, 0.7311]])
    """
    T = _T(T)
    G = _G(G)
    y = _y(y, G.shape[0], G.shape[1])
    return _beta_rows(G, y, T, False)


def coherence_grad(G, y, T=1.0):
    """Gradient of C(g_i, y_i) with respect to g_i: ``beta^{y_i} - onehot(y_i)``, shape (n, K).

    Examples
    --------
    >>> import numpy as np
    >>> float(coherence_grad(np.zeros((1, 3)), [1]).sum())  # rows sum to zero
    0.0
    """
    T = _T(T)
    G = _G(G)
    y = _y(y, G.shape[0], G.shape[1])
    return _beta_rows(G, y, T, True)


def coherence_hessian(g, c, T=1.0):
    """Hessian of C(g, c) in g for one row: ``(diag(beta) - beta beta') / T``, shape (K, K).

    Examples
    --------
    >>> import numpy as np
    >>> H = coherence_hessian(np.zeros(3), 0, T=2.0)
    >>> bool(np.allclose(H.sum(axis=1), 0.0))
    True
    """
    T = _T(T)
    g = _G(np.atleast_2d(g), "g")
    if g.shape[0] != 1:
        raise ValueError(f"g must be one margin vector of shape (K,), got shape {np.shape(g)}")
    cc = _y(np.array([c]), 1, g.shape[1])
    b = _beta_rows(g, cc, T, False)[0]
    return (np.diag(b) - np.outer(b, b)) / T


def coherence_proba(G, T=1.0):
    """Class probabilities of [ZJLY] eq (8) for every row of G, shape (n, K); rows sum to 1.

    Exact at the population minimiser (Theorem 1); for K = 2 and ``g = (f/2, -f/2)`` it equals
    the binary coherence link ``eta~(f; rho = T, u = 1)``.

    Examples
    --------
    >>> import numpy as np
    >>> coherence_proba(np.zeros((1, 4))).round(3)
    array([[0.25, 0.25, 0.25, 0.25]])
    """
    T = _T(T)
    G = _G(G)
    return _prob_rows(G, T)


def _P(P):
    try:
        a = np.asarray(P, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError("P must be a numeric array of class probabilities") from exc
    if a.ndim not in (1, 2) or a.shape[-1] < 2:
        raise ValueError(f"P must have shape (K,) or (n, K) with K >= 2, got shape {a.shape}")
    if not np.all(np.isfinite(a)) or np.any(a < 0):
        raise ValueError("P must hold finite nonnegative probabilities")
    if np.any(np.abs(a.sum(axis=-1) - 1.0) > 1e-8):
        raise ValueError("each row of P must sum to 1 (within 1e-8)")
    return a


def coherence_risk(g, P, T=1.0):
    """Population (pointwise) risk ``sum_c P_c C(g, c)`` for one g (K,) or rows of g (n, K).

    Examples
    --------
    >>> import numpy as np
    >>> bool(np.isclose(coherence_risk(np.zeros(2), [0.5, 0.5]), np.log(1 + np.e)))
    True
    """
    T = _T(T)
    P = _P(P)
    G = _G(np.atleast_2d(g), "g")
    Pm = np.broadcast_to(np.atleast_2d(P), G.shape)
    n, K = G.shape
    out = np.zeros(n)
    for c in range(K):
        out += Pm[:, c] * _loss_rows(G, np.full(n, c, dtype=np.int64), T, 0, 1.0)
    return float(out[0]) if np.ndim(g) == 1 else out


def coherence_minimizer(P, T=1.0, tol=1e-13, max_iter=500):
    """Population minimiser of ``sum_c P_c C(g, c)`` over sum-to-zero g (a convex solve).

    Regularised Newton with Armijo backtracking on the sum-to-zero subspace (strictly convex
    there); stops when the projected gradient ``sum_c P_c beta^c - P`` is below ``tol`` in
    max-norm (so eq (8) then recovers P to about ``tol`` in absolute terms) or when the Newton
    decrement falls below rounding level. Requires ``P_c > 0`` for every class
    (otherwise the infimum is approached as some g_c -> -inf and is not attained).

    Parameters
    ----------
    P : array_like, shape (K,) or (n, K)
    T : float, default 1
    tol : float, default 1e-13
    max_iter : int, default 500

    Returns
    -------
    ndarray, shape like P
        The minimiser(s) ``g_hat``; ``coherence_proba(g_hat, T)`` recovers P (Theorem 1).

    Examples
    --------
    >>> import numpy as np
    >>> g = coherence_minimizer([0.2, 0.3, 0.5], T=1.0)
    >>> coherence_proba(g[None], T=1.0).round(8)
    array([[0.2, 0.3, 0.5]])
    """
    T = _T(T)
    P = _P(P)
    if np.any(P <= 0):
        raise ValueError("P must be strictly positive: with some P_c = 0 the population risk has no minimiser")
    rows = np.atleast_2d(P)
    out = np.empty_like(rows)
    for i in range(rows.shape[0]):
        g, it, conv = _minimize_pop_risk(np.ascontiguousarray(rows[i]), T, float(tol), int(max_iter))
        if not conv:
            raise RuntimeError(
                f"coherence_minimizer did not converge for P = {rows[i]} in {max_iter} iterations; "
                "increase max_iter or tol"
            )
        out[i] = g
    return out[0] if P.ndim == 1 else out


def hinge_loss(G, y):
    """Crammer-Singer hinge H(g_i, y_i) (eq (3)) for every row.

    Examples
    --------
    >>> hinge_loss([[0.5, -0.5]], [0])
    array([0.])
    """
    G = _G(G)
    y = _y(y, G.shape[0], G.shape[1])
    return _loss_rows(G, y, 1.0, 1, 1.0)


def S_loss(G, y):
    """Lower bound S(g_i, y_i) of Theorem 2 for every row.

    Examples
    --------
    >>> S_loss([[0.0, 0.0]], [0])
    array([0.5])
    """
    G = _G(G)
    y = _y(y, G.shape[0], G.shape[1])
    return _loss_rows(G, y, 1.0, 2, 1.0)


def lmult_loss(G, y):
    """Multinomial deviance Lmult(g_i, y_i) = log sum_j exp(g_ij - g_{i y_i}) (eq (2)).

    Examples
    --------
    >>> lmult_loss([[0.0, 0.0]], [0]).round(6)
    array([0.693147])
    """
    G = _G(G)
    y = _y(y, G.shape[0], G.shape[1])
    return _loss_rows(G, y, 1.0, 3, 1.0)


def multinomial_proba(G):
    """Class probabilities ``softmax(g_i)`` of the multinomial logistic model, shape (n, K).

    The population minimiser of the margin-0, ``T = 1`` coherence loss (the multinomial
    deviance) gives these probabilities; computed stably (largest margin subtracted).

    Examples
    --------
    >>> import numpy as np
    >>> multinomial_proba(np.array([[0.0, np.log(3.0)]])).round(3)
    array([[0.25, 0.75]])
    """
    G = _G(G)
    E = np.exp(G - G.max(axis=1, keepdims=True))
    return E / E.sum(axis=1, keepdims=True)
