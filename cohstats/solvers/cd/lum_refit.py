"""Refitted LUM: the two-parameter unpenalised rescaling of a first-stage decision function.

The refitted LUM (eq (9) of [LZW]): given first-stage decision values ``f1``, solve

    (g0, g1) = argmin (1/n) sum_i w_i V_{a, c=0}( y_i (g0 + g1 f1_i) ) + (ridge/2) (g0^2 + g1^2)

by Newton's method with Armijo backtracking. The LUM loss with ``c = 0`` is convex and ``C^1``
with a one-sided second derivative (0 on the linear piece ``u < 0``); ``1e-12`` is added to the
Hessian diagonal. Internally ``f1`` is divided by its scale ``s`` (root mean square) so
that the two coordinates are comparably conditioned; the returned ``g1`` is on the original
scale.

Plain ``@njit(cache=True, nogil=True)`` functions; the problem travels as a :class:`RefitData`
and the solve returns a :class:`RefitResult` (both named tuples).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from cohstats._numba_cache import njit

from cohstats.losses.scalar import lum_d1, lum_d2, lum_value


class RefitData(NamedTuple):
    """The refit problem in scaled coordinates.

    Attributes
    ----------
    h : (n,) float64
        First-stage decision values divided by their scale ``s``.
    y : (n,) float64
        Labels in {-1, +1}.
    w : (n,) float64
        Nonnegative case weights.
    a : float
        LUM shape (``c = 0``).
    ridge : float
        Penalty ``ridge/2 (g0^2 + g1^2)``.
    inv_s2 : float
        ``1/s^2`` (the penalty of ``g1 = h1/s`` in the scaled coordinate ``h1``).
    n : float
        Sum of the weights (the loss is their weighted mean).
    """

    h: np.ndarray
    y: np.ndarray
    w: np.ndarray
    a: float
    ridge: float
    inv_s2: float
    n: float


class RefitResult(NamedTuple):
    """Result of :func:`lum_refit_newton`: ``g0``, ``g1`` (original scale), Newton iterations
    ``n_iter``, ``converged`` and the ``objective`` at the solution."""

    g0: float
    g1: float
    n_iter: int
    converged: bool
    objective: float


@njit(cache=True, nogil=True)
def _refit_eval(rd, g0, h1):
    """Objective, gradient (2,) and Hessian entries in the scaled coordinates (g0, h1)."""
    h, y, w, a, ridge, inv_s2, n = rd.h, rd.y, rd.w, rd.a, rd.ridge, rd.inv_s2, rd.n
    F = 0.0
    G0 = 0.0
    G1 = 0.0
    H00 = 0.0
    H01 = 0.0
    H11 = 0.0
    for i in range(h.shape[0]):
        wi = w[i]
        if wi == 0.0:
            continue
        m = y[i] * (g0 + h1 * h[i])
        F += wi * lum_value(m, a, 0.0)
        d1 = wi * lum_d1(m, a, 0.0) * y[i]
        G0 += d1
        G1 += d1 * h[i]
        d2 = wi * lum_d2(m, a, 0.0)  # y_i^2 = 1
        H00 += d2
        H01 += d2 * h[i]
        H11 += d2 * h[i] * h[i]
    F = F / n + 0.5 * ridge * (g0 * g0 + h1 * h1 * inv_s2)
    G0 = G0 / n + ridge * g0
    G1 = G1 / n + ridge * h1 * inv_s2
    H00 = H00 / n + ridge + 1e-12
    H01 = H01 / n
    H11 = H11 / n + ridge * inv_s2 + 1e-12
    return F, G0, G1, H00, H01, H11


@njit(cache=True, nogil=True)
def _refit_obj(rd, g0, h1):
    h, y, w, a, ridge, inv_s2, n = rd.h, rd.y, rd.w, rd.a, rd.ridge, rd.inv_s2, rd.n
    F = 0.0
    for i in range(h.shape[0]):
        if w[i] != 0.0:
            F += w[i] * lum_value(y[i] * (g0 + h1 * h[i]), a, 0.0)
    return F / n + 0.5 * ridge * (g0 * g0 + h1 * h1 * inv_s2)


@njit(cache=True, nogil=True)
def lum_refit_newton(f1, y, w, a, ridge=0.0, tol=1e-10, max_iter=200):
    """Newton's method with backtracking for the refitted LUM ([LZW] eq (9)).

    Parameters
    ----------
    f1 : (n,) float64 first-stage decision values.
    y : (n,) float64 labels in {-1, +1}.
    w : (n,) float64 nonnegative case weights.
    a : float, LUM shape (``np.inf`` allowed); the refit always uses ``c = 0``.
    ridge : float, penalty ``ridge/2 (g0^2 + g1^2)`` (0 unless the data are separable).
    tol : float, stop when the infinity norm of the scaled gradient is below ``tol``
        or the Newton decrement squared is below ``tol**2``.
    max_iter : int.

    Returns
    -------
    RefitResult
        ``(g0, g1, n_iter, converged, objective)``.
    """
    # weighted scale and weighted mean loss, so that integer weights equal replicated rows
    n = 0.0
    ss = 0.0
    for i in range(f1.shape[0]):
        n += w[i]
        ss += w[i] * f1[i] * f1[i]
    if not n > 0.0:
        n = 1.0
    s = math.sqrt(ss / n) if ss > 0.0 else 1.0
    if not s > 0.0 or not math.isfinite(s):
        s = 1.0
    h = f1 / s
    inv_s2 = 1.0 / (s * s)
    g0 = 0.0
    h1 = s  # start at the first-stage fit itself (g1 = 1)
    converged = False
    it = 0
    rd = RefitData(h, y, w, a, ridge, inv_s2, float(n))
    F = _refit_obj(rd, g0, h1)
    for it in range(1, max_iter + 1):
        F, G0, G1, H00, H01, H11 = _refit_eval(rd, g0, h1)
        if max(abs(G0), abs(G1)) < tol:
            converged = True
            break
        det = H00 * H11 - H01 * H01
        if det > 1e-300 and math.isfinite(det):
            d0 = -(H11 * G0 - H01 * G1) / det
            d1 = -(-H01 * G0 + H00 * G1) / det
        else:
            d0 = -G0
            d1 = -G1
        slope = G0 * d0 + G1 * d1
        if not slope < 0.0:  # not a descent direction: use the gradient
            d0 = -G0
            d1 = -G1
            slope = -(G0 * G0 + G1 * G1)
        if -slope < tol * tol:
            converged = True
            break
        t = 1.0
        accepted = False
        for _k in range(80):
            Fn = _refit_obj(rd, g0 + t * d0, h1 + t * d1)
            if Fn <= F + 1e-4 * t * slope:
                accepted = True
                break
            t *= 0.5
        if not accepted:
            # no decrease representable in floating point: we are at the minimum to precision
            converged = max(abs(G0), abs(G1)) < math.sqrt(tol)
            break
        g0 += t * d0
        h1 += t * d1
        if abs(t * d0) + abs(t * d1) < 1e-15 * (1.0 + abs(g0) + abs(h1)):
            converged = True
            break
    F = _refit_obj(rd, g0, h1)
    return RefitResult(g0, h1 / s, it, converged, F)


@njit(cache=True, nogil=True)
def lum_refit_path(F1, y, w, a, ridge, tol=1e-10, max_iter=200):
    """:func:`lum_refit_newton` for every row of ``F1`` (nlam, n); ``ridge`` is (nlam,)."""
    nlam = F1.shape[0]
    out = np.empty((nlam, 2))
    conv = np.zeros(nlam, dtype=np.bool_)
    for k in range(nlam):
        g0, g1, _it, ok, _F = lum_refit_newton(np.ascontiguousarray(F1[k]), y, w, a, ridge[k], tol, max_iter)
        out[k, 0] = g0
        out[k, 1] = g1
        conv[k] = ok
    return out, conv
