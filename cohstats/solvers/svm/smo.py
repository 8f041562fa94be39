"""Sequential minimal optimisation for box-constrained SVM duals ([WSL], [RH]; libsvm's working-set selection).

The solver handles the general problem

    minimise   (1/2) a' Q a + p' a,        Q_ij = y_i y_j K(x_i, x_j)
    subject to lo_i <= a_i <= hi_i,  sum_i y_i a_i = const (the value at the start point)

which covers the C-SVM dual with case- and class-dependent costs (``p = -1``, ``lo = 0``,
``hi = C_i``) and the shifted-bound subproblems of psi-learning (``lo = -d``, ``hi = C - d``).

Algorithm (the libsvm algorithm of Fan, Chen & Lin 2005, written afresh for arrays):

* second-order working-set selection: ``i`` maximises ``-y_t G_t`` over ``I_up``; ``j``
  minimises ``-(b_it)^2 / a_it`` over violating ``t in I_low`` with ``b_it = -y_i G_i + y_t G_t``,
  ``a_it = K_ii + K_tt - 2 K_it`` (``tau = 1e-12`` when ``a_it <= 0``);
* stopping rule ``m(a) - M(a) < tol`` (maximal KKT violation);
* shrinking every ``min(n, 1000)`` iterations with libsvm's rule, one unshrink when the
  violation first falls below ``10 tol``, and gradient reconstruction from the bound part of the
  gradient ``G_bar`` (kept up to date whenever a variable enters or leaves a bound);
* kernel rows from the provider of :mod:`cohstats.solvers.svm.rows` (an LRU cache of rows of
  length ``n`` sized by ``cache_size``, so memory is never ``O(n^2)`` unless the cache is that
  large); a precomputed matrix (code ``-1``) is read in place; a start point's gradient is one
  pass over the rows of its nonzero multipliers;
* ``I_up`` / ``I_low`` membership kept as flags (updated for the two changed variables), and
  the first index of the next working set found inside the gradient-update loop, so one
  iteration makes two passes over the active variables instead of three;
* intercept ``b = -mean(y_i G_i)`` over free variables, else the midpoint of the feasible
  interval.

The kernel is selected by the codes of :mod:`cohstats.kernels`; code ``-1`` means a precomputed
kernel matrix ``Kpre`` (``n x n``).  Every function is a plain ``@njit(cache=True)`` function;
:func:`smo_solve` is the Python entry point that sizes the cache, validates arrays and returns a
:class:`~cohstats.solvers.result.SolverResult`.
"""

from __future__ import annotations

import numpy as np
from cohstats._numba_cache import internal, njit

from cohstats.kernels import KERNEL_CALLABLE, kernel_cross
from cohstats.solvers.result import SolverResult
from cohstats.solvers.svm.rows import get_row, kernel_diagonal, n_cache_rows, rows_provider

TAU = 1e-12


# --------------------------------------------------------------------------- SMO core
@internal
def _in_up(yt, at, lot, hit):
    if yt > 0:
        return at < hit
    return at > lot


@internal
def _in_low(yt, at, lot, hit):
    if yt > 0:
        return at > lot
    return at < hit


@internal
def _bound_value(at, lot, hit):
    """The bound ``a_t`` sits on (0.0 when free or when the bound is zero)."""
    if at <= lot:
        return lot, True
    if at >= hit:
        return hit, True
    return 0.0, False


@internal
def _update_gbar(G_bar, y, at_old, at_new, lot, hit, yt, Kt):
    """Keep ``G_bar`` (the gradient's part from variables at a bound) current when ``a_t``
    moves from ``at_old`` to ``at_new``."""
    bo, ato = _bound_value(at_old, lot, hit)
    bn, atn = _bound_value(at_new, lot, hit)
    if ato != atn or bo != bn:
        c = (bn if atn else 0.0) - (bo if ato else 0.0)
        if c != 0.0:
            c *= yt
            for k in range(y.shape[0]):
                G_bar[k] += y[k] * c * Kt[k]


@internal
def _reconstruct_gradient(active, G, gbp, gbn, p, a, y, lo, hi, n, kr):
    """The gradient of the shrunk (inactive) variables from the bound parts ``gbp``/``gbn`` and
    the rows of the free variables, over a gathered list of the inactive indices (a test per
    entry of a pass over all n is mispredicted on an irregular active pattern)."""
    inact = np.empty(n, dtype=np.int64)
    n_inactive = 0
    for k in range(n):
        if not active[k]:
            G[k] = gbp[k] + gbn[k] + p[k]
            inact[n_inactive] = k
            n_inactive += 1
    if n_inactive == 0:
        return
    for i in range(n):
        if a[i] > lo[i] and a[i] < hi[i]:
            Ki = get_row(kr, i)
            ai = a[i] * y[i]
            for q in range(n_inactive):
                k = inact[q]
                G[k] += y[k] * ai * Ki[k]


@internal
def _set_flags(t, y, a, lo, hi, up, low):
    """Refresh the membership of ``t`` in ``I_up`` / ``I_low`` after ``a_t`` changed."""
    up[t] = _in_up(y[t], a[t], lo[t], hi[t])
    low[t] = _in_low(y[t], a[t], lo[t], hi[t])


@internal
def _select_i(act, n_act, y, up, G):
    """First index of the working set: ``argmax_{t in I_up} -y_t G_t`` (and the maximum)."""
    gmax = -np.inf
    i = -1
    for q in range(n_act):
        t = act[q]
        v = -y[t] * G[t]
        c = up[t] & (v >= gmax)  # selects, not branches (see _select_j)
        gmax = v if c else gmax
        i = t if c else i
    return i, gmax


@internal
def _select_j(act, n_act, y, low, G, Kd, Ki, i, gmax):
    """Second index (second-order rule of Fan, Chen & Lin 2005) and ``max_{I_low} y_t G_t``."""
    j = -1
    gmax2 = -np.inf
    obj_min = np.inf
    thr = -np.inf  # -obj_min less a margin far above rounding: a division-free pre-test
    kdi = Kd[i]
    for q in range(n_act):
        # the flags are tested by selects, not branches: they follow no pattern, and the
        # mispredicted branches made this loop several times slower than its arithmetic; the
        # one branch left (a new minimum) is rarely taken, and the division runs only there
        t = act[q]
        lw = low[t]
        v = y[t] * G[t]
        gmax2 = v if lw & (v >= gmax2) else gmax2
        gd = gmax + v
        quad = kdi + Kd[t] - 2.0 * Ki[t]
        quad = quad if quad > 0.0 else TAU
        if lw & (gd > 0.0) & (gd * gd >= thr * quad):
            od = -gd * gd / quad
            if od <= obj_min:
                obj_min = od
                j = t
                thr = -od * (1.0 - 1e-10)
    return j, gmax2


@internal
def _select(act, n_act, y, up, low, G, Kd, kr):
    """Second-order working set (Fan, Chen & Lin 2005); returns ``(i, j, m(a) - M(a))``."""
    i, gmax = _select_i(act, n_act, y, up, G)
    if i < 0:
        return -1, -1, -np.inf
    Ki = get_row(kr, i)
    j, gmax2 = _select_j(act, n_act, y, low, G, Kd, Ki, i, gmax)
    return i, j, gmax + gmax2


@njit(cache=True, nogil=True)
def _start_gradient(kr, y, p, lo, hi, a):
    """``G = Q a + p`` and its bound part (from the multipliers at a bound) split by class:
    ``(G, G_bar_pos, G_bar_neg)``."""
    n = y.shape[0]
    g = np.zeros(n)
    gbp = np.zeros(n)
    gbn = np.zeros(n)
    for i in range(n):
        if a[i] != 0.0:
            Ki = get_row(kr, i)
            ai = a[i] * y[i]
            bv, atb = _bound_value(a[i], lo[i], hi[i])
            if atb:
                gb = gbp if y[i] > 0 else gbn
                for k in range(n):
                    v = ai * Ki[k]
                    g[k] += v
                    gb[k] += v
            else:
                for k in range(n):
                    g[k] += ai * Ki[k]
    for k in range(n):
        g[k] = p[k] + y[k] * g[k]
        gbp[k] = y[k] * gbp[k]
        gbn[k] = y[k] * gbn[k]
    return g, gbp, gbn


def smo_core(kr, y, p, lo, hi, a, tol, max_iter, shrinking, shrink_first, shrink_every):
    """Solve the box-constrained dual in place from the feasible start ``a``.

    Returns ``(a, G, b, n_iter, converged, objective, misses)`` where ``G = Q a + p`` is the
    gradient, ``b`` the intercept (decision function ``sum_i a_i y_i K(x_i, x) + b``) and
    ``objective = (1/2) a' Q a + p' a``. (A Python function calling the jitted pieces: a jitted
    wrapper would compile, and optimise, the whole solver once more.)
    """
    # gradient and bound part of the gradient from the start point: one pass over the row of
    # each nonzero multiplier (a precomputed matrix is read in place). No BLAS call: OpenBLAS's
    # threads cost 10-30 ms per matrix-vector product on a busy two-core machine, far more than
    # the product itself, and a warm start (the bracketing grid) makes one per solve
    G, gbp, gbn = start_gradient(kr, y, p, lo, hi, a)
    a, G, gbp, gbn, b, n_iter, converged, obj, misses = smo_core_from(
        kr, y, p, lo, hi, a, G, gbp, gbn, tol, max_iter, shrinking, shrink_first, shrink_every
    )
    return a, G, b, n_iter, converged, obj, misses


def smo_core_from(kr, y, p, lo, hi, a, G, gbp, gbn, tol, max_iter, shrinking, shrink_first, shrink_every):
    """:func:`smo_core` from a start whose gradient ``G = Q a + p`` and class-split bound part
    ``gbp``/``gbn`` (sum over the positives / negatives at a bound of ``a_t y_t y_k K_tk``) are
    given (and kept current in place). Returns ``(a, G, gbp, gbn, b, n_iter, converged,
    objective, misses)``; ``G`` is exact at every point on return."""
    active = np.ones(y.shape[0], dtype=np.bool_)
    Kd = kernel_diagonal(kr.code, kr.X, kr.kpar, kr.Kpre)
    return smo_core_active(
        kr, y, p, lo, hi, a, G, gbp, gbn, tol, max_iter, shrinking, shrink_first, shrink_every, active, Kd
    )


def start_gradient(kr, y, p, lo, hi, a):
    """:func:`_start_gradient`; at the zero start (a cold solve) without kernel rows, in numpy
    (the same values bit for bit: ``G = p + y 0``, ``G_bar = y 0``), so that a cold fit does not
    compile the jitted pass."""
    if a.any():
        return _start_gradient(kr, y, p, lo, hi, a)
    z = np.zeros(y.shape[0])
    return p + y * z, y * z, y * z


@njit(cache=True, nogil=True)
def smo_core_active(kr, y, p, lo, hi, a, G, gbp, gbn, tol, max_iter, shrinking, shrink_first, shrink_every, active, Kd):
    """:func:`smo_core_from` with the variables outside ``active`` (a boolean mask, overwritten)
    shrunk from the start: a warm start that knows which bounded variables will stay at their
    bound. The usual check over all variables (after reconstructing the gradient from
    ``gbp``/``gbn``) decides convergence, so the mask changes the work, not the result's
    accuracy; libsvm's one unshrink at ``10 tol`` is skipped when the mask is partial. ``Kd`` is
    the kernel diagonal (:func:`~cohstats.solvers.svm.rows.kernel_diagonal`), computed once by
    a caller that solves many problems on one kernel."""
    n = y.shape[0]

    act = np.empty(n, dtype=np.int64)
    n_act = np.int64(0)  # typed: a literal 0 would compile _select once more for it
    for t in range(n):
        if active[t]:
            act[n_act] = t
            n_act += 1
    upf = np.empty(n, dtype=np.bool_)  # membership flags of I_up / I_low, kept current
    lowf = np.empty(n, dtype=np.bool_)
    for t in range(n):
        _set_flags(t, y, a, lo, hi, upf, lowf)
    i_next = np.int64(-1)  # first index found during the gradient update (typed, as n_act)
    g_next = -np.inf
    have_next = False
    unshrink = n_act < n
    counter = shrink_first
    n_iter = 0
    stall = 0
    obj_run = 0.0
    for t in range(n):
        obj_run += 0.5 * a[t] * (G[t] + p[t])
    window = max(1000, n)
    obj_window = obj_run
    converged = False
    while n_iter < max_iter:
        if shrinking:
            counter -= 1
            if counter == 0:
                counter = shrink_every
                have_next = False
                # ---- shrinking (libsvm's rule, written for general bounds)
                gmax1 = -np.inf
                gmax2 = -np.inf
                for q in range(n_act):
                    t = act[q]
                    if _in_up(y[t], a[t], lo[t], hi[t]):
                        v = -y[t] * G[t]
                        if v > gmax1:
                            gmax1 = v
                    if _in_low(y[t], a[t], lo[t], hi[t]):
                        v = y[t] * G[t]
                        if v > gmax2:
                            gmax2 = v
                if (not unshrink) and gmax1 + gmax2 <= tol * 10.0:
                    unshrink = True
                    _reconstruct_gradient(active, G, gbp, gbn, p, a, y, lo, hi, n, kr)
                    for k in range(n):
                        active[k] = True
                        act[k] = k
                    n_act = n
                m = 0
                for q in range(n_act):
                    t = act[q]
                    up = _in_up(y[t], a[t], lo[t], hi[t])
                    low = _in_low(y[t], a[t], lo[t], hi[t])
                    shrink = False
                    if up and low:
                        shrink = False
                    elif up:
                        shrink = y[t] * G[t] > gmax2
                    elif low:
                        shrink = -y[t] * G[t] > gmax1
                    else:
                        shrink = True  # fixed variable (lo == hi)
                    if shrink:
                        active[t] = False
                    else:
                        act[m] = t
                        m += 1
                n_act = m

        # ---- working-set selection (second order); the first index usually comes from the
        # gradient-update loop of the previous iteration (the same argmax, one pass fewer)
        if have_next:
            i = i_next
            j = -1
            viol = -np.inf
            if i >= 0:
                Ki = get_row(kr, i)
                j, gmax2 = _select_j(act, n_act, y, lowf, G, Kd, Ki, i, g_next)
                viol = g_next + gmax2
        else:
            i, j, viol = _select(act, n_act, y, upf, lowf, G, Kd, kr)
        if i < 0 or j < 0 or viol < tol:
            if n_act < n:
                _reconstruct_gradient(active, G, gbp, gbn, p, a, y, lo, hi, n, kr)
                for k in range(n):
                    active[k] = True
                    act[k] = k
                n_act = n
                i, j, viol = _select(act, n_act, y, upf, lowf, G, Kd, kr)
                if i < 0 or j < 0 or viol < tol:
                    converged = True
                    break
                counter = 1  # shrink at the next iteration, as libsvm
            else:
                converged = True
                break

        # ---- two-variable update: a_i += y_i t, a_j -= y_j t, t > 0
        n_iter += 1
        Ki = get_row(kr, i)
        Kj = get_row(kr, j)
        quad = Kd[i] + Kd[j] - 2.0 * Ki[j]
        if quad <= 0.0:
            quad = TAU
        gd = -y[i] * G[i] + y[j] * G[j]
        step = gd / quad
        ai_old = a[i]
        aj_old = a[j]
        lim_i = hi[i] - ai_old if y[i] > 0 else ai_old - lo[i]
        lim_j = aj_old - lo[j] if y[j] > 0 else hi[j] - aj_old
        hit_i = False
        hit_j = False
        if step >= lim_i:
            step = lim_i
            hit_i = True
        if step >= lim_j:
            step = lim_j
            hit_j = True
            hit_i = hit_i and lim_i <= lim_j
        ai_new = ai_old + y[i] * step
        aj_new = aj_old - y[j] * step
        if hit_i:
            ai_new = hi[i] if y[i] > 0 else lo[i]
        if hit_j:
            aj_new = lo[j] if y[j] > 0 else hi[j]
        if ai_new == ai_old and aj_new == aj_old:
            # the step is below the resolution of float64 (a degenerate, nearly flat dual):
            # no further progress is possible at this tolerance
            stall += 1
            if stall >= 50:
                break
            continue
        stall = 0
        a[i] = ai_new
        a[j] = aj_new
        _set_flags(i, y, a, lo, hi, upf, lowf)
        _set_flags(j, y, a, lo, hi, upf, lowf)
        # objective change along the pair direction (exact quadratic in the step)
        qtrue = Kd[i] + Kd[j] - 2.0 * Ki[j]
        st = (ai_new - ai_old) * y[i]
        obj_run += -gd * st + 0.5 * qtrue * st * st
        if n_iter % window == 0:
            if obj_window - obj_run <= 1e-13 * max(1.0, abs(obj_run)):
                break  # no measurable progress over a whole window: float64 limit
            obj_window = obj_run
        dai = (ai_new - ai_old) * y[i]
        daj = (aj_new - aj_old) * y[j]
        g_next = -np.inf
        i_next = -1
        for q in range(n_act):
            t = act[q]
            gt = G[t] + y[t] * (dai * Ki[t] + daj * Kj[t])
            G[t] = gt
            v = -y[t] * gt
            c = upf[t] & (v >= g_next)  # selects, not branches (see _select_j)
            g_next = v if c else g_next
            i_next = t if c else i_next
        have_next = True
        # ---- bound part of the gradient
        _update_gbar(gbp if y[i] > 0 else gbn, y, ai_old, ai_new, lo[i], hi[i], y[i], Ki)
        _update_gbar(gbp if y[j] > 0 else gbn, y, aj_old, aj_new, lo[j], hi[j], y[j], Kj)

    if n_act < n:
        _reconstruct_gradient(active, G, gbp, gbn, p, a, y, lo, hi, n, kr)

    # ---- intercept
    ub = np.inf
    lb = -np.inf
    nfree = 0
    sfree = 0.0
    for t in range(n):
        up = _in_up(y[t], a[t], lo[t], hi[t])
        low = _in_low(y[t], a[t], lo[t], hi[t])
        yg = y[t] * G[t]
        if up and low:
            nfree += 1
            sfree += yg
        elif up:
            if yg < ub:
                ub = yg
        elif low:
            if yg > lb:
                lb = yg
    if nfree > 0:
        r = sfree / nfree
    elif np.isfinite(ub) and np.isfinite(lb):
        r = 0.5 * (ub + lb)
    elif np.isfinite(ub):
        r = ub
    elif np.isfinite(lb):
        r = lb
    else:
        r = 0.0
    obj = 0.0
    for t in range(n):
        obj += a[t] * (G[t] + p[t])
    obj *= 0.5
    return a, G, gbp, gbn, -r, n_iter, converged, obj, kr.state[1]


def kernel_decision(code, Xtr, kpar, coef, b, Xnew, Kpre_new):
    """``f(x) = sum_i coef_i K(x_i, x) + b`` for each row of ``Xnew`` (zero coefficients skipped).

    The kernel values come from :func:`cohstats.kernels.kernel_cross`, the arithmetic of the
    solver's training rows; with ``code == -1`` the kernel is the precomputed ``Kpre_new`` of
    shape ``(m, n)``.
    """
    coef = np.asarray(coef, dtype=np.float64)
    nz = np.flatnonzero(coef)
    if code == KERNEL_CALLABLE:
        Kn = np.asarray(Kpre_new, dtype=np.float64)[:, nz]
    else:
        Kn = kernel_cross(
            int(code),
            np.ascontiguousarray(Xnew, dtype=np.float64),
            np.ascontiguousarray(np.asarray(Xtr, dtype=np.float64)[nz]),
            np.ascontiguousarray(kpar, dtype=np.float64),
        )
    return Kn @ coef[nz] + b


# --------------------------------------------------------------------------- Python entry
def smo_solve(
    X,
    y,
    *,
    code: int,
    kpar=None,
    Kpre=None,
    C=None,
    lo=None,
    hi=None,
    p=None,
    a0=None,
    tol: float = 1e-3,
    max_iter: int | None = None,
    shrinking: bool = True,
    cache_size: float = 200.0,
    shrink_first: int | None = None,
    shrink_every: int | None = None,
) -> SolverResult:
    """Solve ``min (1/2) a'Qa + p'a``, ``lo <= a <= hi``, ``y'a = y'a0`` by SMO.

    Parameters
    ----------
    X : (n, d) float64 array (ignored when ``code == -1``)
    y : (n,) array of +-1
    code, kpar : kernel code and parameter vector of :mod:`cohstats.kernels`; ``code=-1`` uses
        the precomputed ``Kpre`` (n, n).
    C : (n,) upper bounds (with ``lo = 0``), or give ``lo`` and ``hi`` explicitly.
    p : linear term (default ``-1``, the C-SVM dual).
    a0 : feasible start (default zeros, which must then lie in the box).
    tol : stop when the maximal KKT violation ``m(a) - M(a)`` is below ``tol`` (libsvm's eps).
    max_iter : iteration cap (default ``max(10_000_000, 100 n)``, libsvm's). Singular duals -- a
        linear kernel on inputs with repeated rows (integer-coded factors) and a large cost --
        can need millions of pair updates in libsvm as here; when the cap is reached the result
        has ``converged=False`` and the fit functions warn, naming ``max_iter`` and ``tol``
        (or give a smaller ``C``, i.e. a larger ``lambda_``).
    shrinking : use libsvm's shrinking heuristic.
    shrink_every, shrink_first : shrink every ``shrink_every`` iterations (default
        ``min(n, 1000)``, libsvm's) and first after ``shrink_first`` (default
        ``shrink_every + 1``). A warm start close to the solution gains from shrinking early
        (:func:`cohstats.solvers.svm.svmpath.pi_grid_smo` uses 100 and 200): its few hundred
        iterations would otherwise all scan every variable.
    cache_size : kernel-row cache in megabytes.

    Returns
    -------
    SolverResult
        ``dual`` the multipliers ``a``, ``intercept`` ``b`` (decision function
        ``sum_i a_i y_i K(x_i, x) + b``), ``n_iter`` pair updates, ``objective``
        ``(1/2) a'Qa + p'a``; ``info["gradient"]`` is ``G = Qa + p`` and ``info["kernel_rows"]``
        the number of kernel rows computed.

    Examples
    --------
    >>> import numpy as np
    >>> from cohstats.kernels import KERNEL_LINEAR
    >>> X = np.array([[0.0], [1.0], [3.0], [4.0]]); y = np.array([-1.0, -1.0, 1.0, 1.0])
    >>> r = smo_solve(X, y, code=KERNEL_LINEAR, kpar=np.zeros(5), C=np.full(4, 10.0), tol=1e-10)
    >>> round(float((r.dual * y) @ X[:, 0]), 6), round(r.intercept, 6)     # f(x) = x - 2
    (1.0, -2.0)
    """
    y = np.ascontiguousarray(y, dtype=np.float64)
    n = y.shape[0]
    if code == KERNEL_CALLABLE:
        if Kpre is None:
            raise ValueError("code=-1 needs the precomputed kernel matrix Kpre")
        Kpre = np.ascontiguousarray(Kpre, dtype=np.float64)
        if Kpre.shape != (n, n):
            raise ValueError(f"Kpre must have shape {(n, n)}; got {Kpre.shape}")
    kpar = np.zeros(5) if kpar is None else np.ascontiguousarray(kpar, dtype=np.float64)
    if lo is None and hi is None:
        if C is None:
            raise ValueError("give the upper bounds C (or lo and hi)")
        hi = np.broadcast_to(np.asarray(C, dtype=np.float64), (n,)).copy()
        lo = np.zeros(n)
    else:
        lo = np.broadcast_to(np.asarray(lo, dtype=np.float64), (n,)).copy()
        hi = np.broadcast_to(np.asarray(hi, dtype=np.float64), (n,)).copy()
    if np.any(hi < lo):
        raise ValueError("the bounds must satisfy lo <= hi for every observation")
    p = -np.ones(n) if p is None else np.broadcast_to(np.asarray(p, dtype=np.float64), (n,)).copy()
    a = np.zeros(n) if a0 is None else np.array(a0, dtype=np.float64, copy=True)
    if np.any(a < lo - 1e-12) or np.any(a > hi + 1e-12):
        raise ValueError("the start point a0 must lie inside the box lo <= a <= hi")
    np.clip(a, lo, hi, out=a)
    if not (np.isfinite(tol) and tol > 0):
        raise ValueError(f"tol must be a positive number; got {tol!r}")
    if max_iter is None:
        max_iter = max(10_000_000, 100 * n)
    nc = n_cache_rows(n, cache_size)
    if shrink_every is None:
        shrink_every = min(n, 1000)
    if shrink_first is None:
        shrink_first = shrink_every + 1
    for name, v in (("shrink_every", shrink_every), ("shrink_first", shrink_first)):
        if isinstance(v, bool) or not (isinstance(v, (int, np.integer)) and v >= 1):
            raise ValueError(f"{name} must be a positive integer; got {v!r}")
    # a precomputed matrix is its own cache (rows are read in place)
    kr = rows_provider(int(code), X, kpar, Kpre, n_slots=nc, in_place=True)
    a, G, b, it, conv, obj, miss = smo_core(
        kr, y, p, lo, hi, a, float(tol), int(max_iter), bool(shrinking), int(shrink_first), int(shrink_every)
    )
    return SolverResult(
        coef=None,
        dual=a,
        intercept=float(b),
        n_iter=int(it),
        converged=bool(conv),
        objective=float(obj),
        info={"gradient": G, "kernel_rows": int(miss)},
    )
