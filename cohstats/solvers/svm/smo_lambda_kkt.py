"""KKT quantities, exact single-variable steps and shrinking of the λ-SVM SMO.

The pieces shared by the loops of :mod:`cohstats.solvers.svm.smo_lambda` (exact greedy),
:mod:`cohstats.solvers.svm.smo_lambda_lazy` (lazy selection) and the linear loop: the status
bits of a multiplier and its KKT violation ([RH] eq. 24-26), the decision values and objectives
of a set of multipliers, the exact steps on the multipliers of one point, the vectorised row
updates of ``F`` and the libsvm-style shrinking of points (events and exact rebuilds). The
state arrays are those of :class:`cohstats.solvers.svm.smo_lambda.LambdaState`.
"""

from __future__ import annotations

import numpy as np
from cohstats._numba_cache import njit


from cohstats._numba_cache import internal
from cohstats.solvers.svm.rows import get_row, permute_rows, row_slot

# ---------------------------------------------------------------------------------------------
# KKT violation
# ---------------------------------------------------------------------------------------------

# status bits of a multiplier: may increase (not at C), may decrease (not at 0), true class
_INC = 1
_DEC = 2
_TRUE = 4


@internal
def _status(a, is_true, Ci, eps):
    """Status bits of a multiplier (``a <= eps`` lower, ``a >= C - eps`` upper)."""
    s = _TRUE if is_true else 0
    if Ci <= 0.0:
        return s
    if a <= eps:
        return s | _INC
    if a >= Ci - eps:
        return s | _DEC
    return s | _INC | _DEC


@internal
def _viol_s(f, s, margin):
    """KKT violation from the decision value ``f`` and the status bits ``s``.

    ``g = -V = l - y f``: ``margin - f`` for the true class, ``f + 1`` otherwise; the violation
    is ``max(g, 0)`` at the lower bound, ``max(-g, 0)`` at the upper bound, ``|g|`` in between.
    """
    g = (margin - f) if (s & _TRUE) else (f + 1.0)
    return max(g * (s & _INC), -g * ((s >> 1) & 1))


@internal
def _centre_point(Ft, S, q, margin, inv_L):
    """Centre point ``q``'s decision values over the classes in place; its maximal violation."""
    L = Ft.shape[0]
    mf = 0.0
    for j in range(L):
        mf += Ft[j, q]
    mf *= inv_L
    m = 0.0
    for j in range(L):
        f = Ft[j, q] - mf
        Ft[j, q] = f
        m = max(m, _viol_s(f, S[j, q], margin))
    return m


@njit(cache=True, nogil=True)
def _init_status(alpha, y, Cb, eps):
    N, L = alpha.shape
    S = np.empty((L, N), dtype=np.uint8)
    for i in range(N):
        for j in range(L):
            S[j, i] = _status(alpha[i, j], y[i] == j, Cb[i], eps)
    return S


@njit(cache=True, nogil=True)
def kkt_violations(Ft, alpha, y, margin, Cb, eps):
    """(N, L) KKT violations ([RH] eq. 24-26) from decision values ``Ft`` (L, N) and multipliers."""
    N, L = alpha.shape
    out = np.empty((N, L))
    for i in range(N):
        for j in range(L):
            out[i, j] = _viol_s(Ft[j, i], _status(alpha[i, j], y[i] == j, Cb[i], eps), margin)
    return out


# ---------------------------------------------------------------------------------------------
# decision values from multipliers
# ---------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def decision_from_alpha(alpha, y, kr):
    """``Ft[j, t] = sum_i K(x_i, x_t) btilde_ij`` (shape (L, N)), with ``btilde_ij = b_ij -
    mean_j b_ij`` and ``b_ij = alpha_ij y_ij`` (rows from the provider ``kr``, not permuted)."""
    N, L = alpha.shape
    Ft = np.zeros((L, N))
    c = np.empty(L)
    for i in range(N):
        nz = False
        for j in range(L):
            if alpha[i, j] != 0.0:
                nz = True
                break
        if not nz:
            continue
        mb = 0.0
        for j in range(L):
            b = alpha[i, j] if y[i] == j else -alpha[i, j]
            c[j] = b
            mb += b
        mb /= L
        row = get_row(kr, i)
        for j in range(L):
            cj = c[j] - mb
            Fj = Ft[j]
            for t in range(N):
                Fj[t] += row[t] * cj
    return Ft


# ---------------------------------------------------------------------------------------------
# the SMO loop
# ---------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True, inline="always")
def _swap(p, q, st, perm):
    """Exchange the points at positions ``p`` and ``q`` in every position-indexed array."""
    alpha, Ft, S, pv, y, Cb, Kdiag, pos_of = st.alpha, st.Ft, st.S, st.pv, st.y, st.Cb, st.Kdiag, st.pos_of
    L = alpha.shape[1]
    for j in range(L):
        alpha[p, j], alpha[q, j] = alpha[q, j], alpha[p, j]
        Ft[j, p], Ft[j, q] = Ft[j, q], Ft[j, p]
        S[j, p], S[j, q] = S[j, q], S[j, p]
    for arr in (pv, Cb, Kdiag):
        arr[p], arr[q] = arr[q], arr[p]
    y[p], y[q] = y[q], y[p]
    perm[p], perm[q] = perm[q], perm[p]
    pos_of[perm[p]] = p
    pos_of[perm[q]] = q


@internal
def _shrink_event(st, kr, n_act, swa, swb, margin, bv):
    """One shrinking event: snapshot ``alpha`` (for the rebuild), move every shrinkable active
    point behind the active block (replaying the swaps on the row cache) and record the event
    in ``sstate`` / ``counter``. Returns the new number of active points."""
    alpha, Ft, S, snap, sstate, counter = st.alpha, st.Ft, st.S, st.snap, st.sstate, st.counter
    perm = kr.perm
    N, L = alpha.shape
    e = sstate[1]
    for q in range(N):
        for j in range(L):
            snap[e, perm[q], j] = alpha[q, j]
    q = np.int64(0)  # typed ints: a literal 0 passed on compiles the callee once more
    nsw = np.int64(0)
    while q < n_act:
        if _shrinkable(Ft, S, q, margin, bv):
            n_act -= 1
            _swap(q, n_act, st, perm)
            swa[nsw] = q
            swb[nsw] = n_act
            nsw += 1
        else:
            q += 1
    permute_rows(kr, swa, swb, nsw)
    st.ev_bound[e] = n_act  # event e shrank the positions ev_bound[e] .. ev_bound[e - 1] - 1
    sstate[0] = n_act
    sstate[1] = e + 1
    sstate[2] = counter[0]
    counter[2] += 1
    return n_act


@internal
def _shrinkable(Ft, S, q, margin, thr):
    """Every multiplier of the point at position ``q`` sits at a bound with KKT slack > ``thr``."""
    L = Ft.shape[0]
    for j in range(L):
        st = S[j, q]
        f = Ft[j, q]
        g = (margin - f) if (st & _TRUE) else (f + 1.0)  # g = -V
        inc = st & _INC
        dec = st & _DEC
        if inc and dec:
            return False
        if inc and not g < -thr:
            return False
        if dec and not g > thr:
            return False
    return True


@internal
def _count_shrinkable(Ft, S, n_act, margin, thr):
    """Number of active points that :func:`_shrinkable` would shrink at threshold ``thr``."""
    c = 0
    for q in range(n_act):
        if _shrinkable(Ft, S, q, margin, thr):
            c += 1
    return c


@internal
def _rebuild(st, kr, margin, n_events, n_act):
    """Make ``Ft`` exact (and centred) for the shrunk points (positions ``n_act..N-1``).

    The points shrunk at event ``e`` occupy the positions ``ev_bound[e] .. ev_bound[e - 1] - 1``
    (``N`` for ``e = 0``) and had exact, centred ``Ft`` at that event; since then only the
    multipliers of active points moved, so ``F_j += sum_i K(x_i, .) (b_ij - b_ij at event e)``
    on that range (uncentred changes, one vectorised update per changed class, each changed
    point's row fetched once for all events), and the shift common to the classes is removed at
    the end (exact ``F`` rows sum to zero). ``snap[e]`` holds the multipliers (original order) at
    event ``e``.
    """
    alpha, Ft, S, pv, y, pos_of, snap, bound = st.alpha, st.Ft, st.S, st.pv, st.y, st.pos_of, st.snap, st.ev_bound
    N, L = alpha.shape
    d = np.empty(L)
    for i in range(N):
        pi = pos_of[i]
        yi = y[pi]
        s = -1
        for e in range(n_events):
            lo = bound[e]
            hi = N if e == 0 else bound[e - 1]
            if lo >= hi:
                continue
            nz = False
            for j in range(L):
                dd = alpha[pi, j] - snap[e, i, j]
                d[j] = dd if yi == j else -dd
                if dd != 0.0:
                    nz = True
            if not nz:
                continue
            if s < 0:
                s = row_slot(kr, i)
            row = kr.rows[s]
            for j in range(L):
                if d[j] != 0.0:
                    _axpy(Ft[j, lo:hi], row[lo:hi], d[j])
    inv_L = 1.0 / L
    for q in range(n_act, N):
        pv[q] = _centre_point(Ft, S, q, margin, inv_L)


@njit(cache=True, nogil=True)
def rebuild_shrunk(st, kr, margin):
    """:func:`_rebuild` of the points shrunk so far (``st.sstate``), counted in ``st.counter``:
    the driver's last step when a run stops (budget or time limit) with shrunk points. (An
    entry of its own, compiled only when such a run occurs.)"""
    _rebuild(st, kr, margin, st.sstate[1], st.sstate[0])
    st.counter[3] += 1


@njit(cache=True, nogil=True, inline="always")
def _box_step(a, V, G, Ci):
    """One multiplier's Newton step on the dual, ``a - V / G``, clipped to ``[0, Ci]``; with no
    curvature (``G`` = 0: the variable does not move F, the dual is linear in it) the bound
    that the gradient points to."""
    if G > 1e-12:
        an = a - V / G
    else:
        an = Ci if V < 0.0 else 0.0
    if an < 0.0:
        return 0.0
    if an > Ci:
        return Ci
    return an


@internal
def _point_steps(i, Fi, delta, alpha, S, yi, Ci, Kii, G, inv_L, margin, tol, eps, inner_max, counter):
    """Exact single-variable steps on the multipliers of point ``i`` (largest violation first;
    after the first, only while the violation exceeds ``tol``; at most ``inner_max``), sharing
    one kernel row. ``Fi`` (the point's decision values) and ``delta`` (the changes of
    ``alpha_ij y_ij``) are updated in place; ``counter[1]`` counts the steps. Returns whether a
    multiplier moved."""
    L = Fi.shape[0]
    moved = False
    for t in range(inner_max):
        jb = -1
        vb = 0.0
        for j in range(L):
            v = _viol_s(Fi[j], S[j, i], margin)
            if v > vb:
                vb = v
                jb = j
        if jb < 0 or (t > 0 and vb < tol):
            break
        j = jb
        ysgn = 1.0 if yi == j else -1.0
        V = ysgn * Fi[j] - (margin if yi == j else 1.0)
        a = alpha[i, j]
        an = _box_step(a, V, G, Ci)
        d = an - a
        if d == 0.0:
            break
        alpha[i, j] = an
        S[j, i] = _status(an, yi == j, Ci, eps)
        moved = True
        db = d * ysgn
        delta[j] += db
        counter[1] += 1
        sh = Kii * db * inv_L
        for jj in range(L):
            Fi[jj] -= sh
        Fi[j] += Kii * db
    return moved


@internal
def _axpy(yv, xv, a):
    """``yv += a xv`` -- a separate function on contiguous slices so that LLVM vectorises it."""
    for q in range(yv.shape[0]):
        yv[q] += a * xv[q]


@internal
def _axpy2(yv, x1, a1, x2, a2):
    """``yv += a1 x1``, then ``yv += a2 x2``, entry by entry (the rounding of two :func:`_axpy`)."""
    for q in range(yv.shape[0]):
        f = yv[q] + a1 * x1[q]
        yv[q] = f + a2 * x2[q]


@internal
def _axpy4(yv, x1, a1, x2, a2, x3, a3, x4, a4):
    """Four :func:`_axpy` in one pass, in order, entry by entry (the same rounding)."""
    for q in range(yv.shape[0]):
        f = yv[q] + a1 * x1[q]
        f = f + a2 * x2[q]
        f = f + a3 * x3[q]
        yv[q] = f + a4 * x4[q]


# ---------------------------------------------------------------------------------------------
# objectives
# ---------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def objectives(alpha, Ft, y, margin, Cb):
    """(primal, dual) objectives of (14)-(16) and (22) at multipliers ``alpha`` with exact ``Ft``.

    ``sum_j ||w_j||^2 = sum_ij b_ij F_ij``; primal slack ``eta_ij = [l_ij - y_ij F_ij]_+``.
    """
    N, L = alpha.shape
    quad = 0.0
    lin = 0.0
    hinge = 0.0
    for i in range(N):
        for j in range(L):
            f = Ft[j, i]
            if y[i] == j:
                b = alpha[i, j]
                lk = margin
                r = margin - f
            else:
                b = -alpha[i, j]
                lk = 1.0
                r = 1.0 + f
            quad += b * f
            lin += alpha[i, j] * lk
            if r > 0.0:
                hinge += Cb[i] * r
    return 0.5 * quad + hinge, lin - 0.5 * quad
