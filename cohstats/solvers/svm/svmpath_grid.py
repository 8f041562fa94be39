"""Weighted SVMs on a pi grid by warm-started SMO (the alternative to the exact path).

:func:`pi_grid_smo` solves the middle grid value cold and walks outwards; each step starts from
the secant through the two previous solutions or from the clipped neighbour
(:func:`_secant_start`, :func:`_clip_start`), restores ``sum_i y_i a_i = 0``
(:func:`_repair_greedy`) and continues by SMO with the far-bounded multipliers shrunk from the
start (:func:`_grid_chain`).
"""

from __future__ import annotations

import numpy as np
from cohstats._numba_cache import njit


from cohstats._numba_cache import internal
from cohstats.kernels import KERNEL_CALLABLE, gram_symmetric
from cohstats.solvers.result import SolverResult
from cohstats.solvers.svm.rows import get_row, kernel_diagonal, n_cache_rows, rows_provider
from cohstats.solvers.svm.smo import _bound_value, _start_gradient, _update_gbar, smo_core, smo_core_active
from cohstats.solvers.svm.svmpath_core import _common_args, _path_result, _two_halves

SHRINK_FIRST = 10  # shrinking schedule of the warm-started grid solves (see pi_grid_smo)
SHRINK_EVERY = 30
ACTIVE_MARGIN = 0.1  # warm grid solves start with the bounded multipliers beyond this KKT slack shrunk
SECANT_RATIO = 0.9  # secant starts while the shrinking box keeps at least this ratio per grid step


@njit(cache=True, nogil=True)
def _repair_equality(a, C, pos):
    """Restore ``sum_i y_i a_i = 0`` inside the box ``0 <= a <= C`` (a repaired copy of ``a``),
    moving free multipliers first.

    With ``d = sum_{y=+1} a - sum_{y=-1} a > 0`` positives are lowered and negatives raised (the
    reverse for ``d < 0``), each in proportion to its room; multipliers at a bound are used only
    when the free ones cannot absorb ``d`` (keeping the bounded ones, whose rescaling is exact
    along the path, where the rescaling put them saves SMO iterations).
    """
    a = a.copy()
    n = a.shape[0]
    csum = 0.0
    for i in range(n):
        csum += C[i]
    eps = 1e-13 * (1.0 + csum)
    for use_bounded in (False, True):
        d = 0.0
        for i in range(n):
            d += a[i] if pos[i] else -a[i]
        if abs(d) <= eps:
            break
        tot = 0.0
        for i in range(n):
            if use_bounded or (a[i] > 0.0 and a[i] < C[i]):
                tot += a[i] if pos[i] == (d > 0) else C[i] - a[i]  # lower to 0 / raise to C
        if tot <= 0.0:
            continue
        t = min(1.0, abs(d) / tot)
        for i in range(n):
            if use_bounded or (a[i] > 0.0 and a[i] < C[i]):
                if pos[i] == (d > 0):
                    v = a[i] - t * a[i]
                else:
                    v = a[i] + t * (C[i] - a[i])
                a[i] = min(max(v, 0.0), C[i])
    return a


@internal
def _repair_greedy(a, C, pos, dist):
    """Restore ``sum_i y_i a_i = 0`` inside the box ``0 <= a <= C`` in place: the free
    multipliers first, in proportion to their room (as :func:`_repair_equality`); what they
    cannot absorb by whole moves of the fewest multipliers, those with the smallest ``dist``
    (the previous solution's distance to the margin, ``|y_i f_i - 1|``) first."""
    n = a.shape[0]
    csum = 0.0
    d = 0.0
    for i in range(n):
        csum += C[i]
        d += a[i] if pos[i] else -a[i]
    eps = 1e-13 * (1.0 + csum)
    if abs(d) <= eps:
        return
    down_pos = d > 0  # lower the positives / raise the negatives when d > 0, the reverse else
    tot = 0.0
    for i in range(n):
        if a[i] > 0.0 and a[i] < C[i]:
            tot += a[i] if pos[i] == down_pos else C[i] - a[i]
    if tot > 0.0:
        t = min(1.0, abs(d) / tot)
        for i in range(n):
            if a[i] > 0.0 and a[i] < C[i]:
                v = a[i] - t * a[i] if pos[i] == down_pos else a[i] + t * (C[i] - a[i])
                a[i] = min(max(v, 0.0), C[i])
        d = 0.0
        for i in range(n):
            d += a[i] if pos[i] else -a[i]
        if abs(d) <= eps:
            return
    down_pos = d > 0
    need = abs(d)
    key = np.full(n, np.inf)
    for i in range(n):
        room = a[i] if pos[i] == down_pos else C[i] - a[i]
        if room > 0.0:
            key[i] = dist[i]
    for i in np.argsort(key, kind="mergesort"):
        if need <= 0.0 or key[i] == np.inf:
            break
        room = a[i] if pos[i] == down_pos else C[i] - a[i]
        mv = min(room, need)
        a[i] = a[i] - mv if pos[i] == down_pos else a[i] + mv
        need -= mv


@internal
def _apply_moves(kr, y, pos, a_old, a, C, G, gbp, gbn, moved):
    """Update the gradient ``G`` and its class-split bound parts for the multipliers that moved
    from ``a_old`` to ``a`` (box ``0 <= a <= C``): four kernel rows per pass over ``G`` (the
    repair moves hundreds of free multipliers on noisy data) when the provider holds them all at
    once; ``moved`` is integer scratch of length n."""
    n = y.shape[0]
    nm = 0
    for i in range(n):
        if a[i] != a_old[i]:
            moved[nm] = i
            nm += 1
    q = 0
    if kr.rows.shape[0] >= 8:
        while q + 4 <= nm:
            i0, i1, i2, i3 = moved[q], moved[q + 1], moved[q + 2], moved[q + 3]
            K0, K1, K2, K3 = get_row(kr, i0), get_row(kr, i1), get_row(kr, i2), get_row(kr, i3)
            d0 = (a[i0] - a_old[i0]) * y[i0]
            d1 = (a[i1] - a_old[i1]) * y[i1]
            d2 = (a[i2] - a_old[i2]) * y[i2]
            d3 = (a[i3] - a_old[i3]) * y[i3]
            for k in range(n):
                G[k] += y[k] * (((d0 * K0[k] + d1 * K1[k]) + d2 * K2[k]) + d3 * K3[k])
            q += 4
    for r in range(q, nm):
        i = moved[r]
        Ki = get_row(kr, i)
        da = (a[i] - a_old[i]) * y[i]
        for k in range(n):
            G[k] += y[k] * da * Ki[k]
    for r in range(nm):
        i = moved[r]
        _, b_old = _bound_value(a_old[i], 0.0, C[i])
        _, b_new = _bound_value(a[i], 0.0, C[i])
        if b_old or b_new:
            _update_gbar(gbp if pos[i] else gbn, y, a_old[i], a[i], 0.0, C[i], y[i], get_row(kr, i))


@internal
def _clip_start(kr, y, pos, a, G, gbp, gbn, C, Cn, rp, rn):
    """The neighbour's solution (box ``C``) clipped to the box ``Cn`` in place, gradient and
    class-split bound parts kept current: the class whose box shrinks keeps its multipliers
    at the upper bound there (all scaled by the same ratio ``r``, so the gradient moves by
    ``(r - 1)`` times that class's bound part), its free multipliers above the new bound are
    clipped (by their rows); the other class's bounded multipliers become free (its bound
    part is 0)."""
    n = y.shape[0]
    shrink_pos = rp < 1.0
    r = rp if shrink_pos else rn
    gs = gbp if shrink_pos else gbn
    go = gbn if shrink_pos else gbp
    for k in range(n):
        G[k] += (r - 1.0) * gs[k]
        gs[k] *= r
        go[k] = 0.0
    for i in range(n):
        if pos[i] == shrink_pos and a[i] > 0.0:
            if a[i] >= C[i]:
                a[i] = Cn[i]
            elif a[i] > Cn[i]:
                Ki = get_row(kr, i)
                da = (Cn[i] - a[i]) * y[i]
                ca = Cn[i] * y[i]
                for k in range(n):
                    G[k] += y[k] * da * Ki[k]
                    gs[k] += y[k] * ca * Ki[k]
                a[i] = Cn[i]


@njit(cache=True, nogil=True)
def _secant_start(kr, y, pos, a, G, gbp, gbn, C, Cn, a_pp, G_pp, C_pp, t, rp, rn):
    """The secant start ``a + t (a - a_pp)`` (``t`` the ratio of the grid steps) clipped to
    the box ``Cn``, in place, with the gradient ``G + t (G - G_pp)`` (exact: ``G`` is linear in
    ``a``) and the class-split bound parts kept current. Between events of the solution path
    the multipliers are linear in pi, so this is the next solution there; it keeps
    ``sum_i y_i a_i = 0`` up to the clipped multipliers (whose rows correct the gradient)."""
    n = y.shape[0]
    for k in range(n):
        G[k] += t * (G[k] - G_pp[k])
        gbp[k] *= rp  # multipliers at the upper bound follow it (the box is linear in pi)
        gbn[k] *= rn
    for i in range(n):
        ai = a[i]
        was_up = ai > 0.0 and ai >= C[i]
        if was_up and a_pp[i] > 0.0 and a_pp[i] >= C_pp[i]:
            v = Cn[i]  # on the bound at both earlier grid values: on the new bound
        else:
            v = ai + t * (ai - a_pp[i])
        vc = min(max(v, 0.0), Cn[i])
        now_up = vc > 0.0 and vc >= Cn[i]
        a[i] = vc
        dz = (vc - v) * y[i]
        c = ((Cn[i] if now_up else 0.0) - (Cn[i] if was_up else 0.0)) * y[i]
        if dz != 0.0 or c != 0.0:
            Ki = get_row(kr, i)
            gb = gbp if pos[i] else gbn
            for k in range(n):
                G[k] += y[k] * dz * Ki[k]
                gb[k] += y[k] * c * Ki[k]


@njit(cache=True, nogil=True)
def _grid_chain(
    kr,
    y,
    w,
    nlam,
    grid,
    order,
    pi0,
    a0,
    b0,
    tol,
    max_iter,
    shrink_first,
    shrink_every,
    carry,
    margin,
    secant_ratio,
    A,
    A0,
    obj,
    its,
    conv,
):
    """SMO at ``grid[g]`` for ``g`` in ``order``, each started from the solutions before it (the
    first from ``a0``, intercept ``b0``, the solution at ``pi0``) and results stored in row
    ``g`` of ``A``, ``A0``, ``obj``, ``its``, ``conv``. One compiled call per chain.

    The start: from the second grid value on, while the shrinking class's box shrinks by a
    ratio of at least ``secant_ratio`` in the step, the secant through the two previous
    solutions (:func:`_secant_start`); otherwise, and for the first step, the previous
    solution clipped to the new box (:func:`_clip_start`). Then the equality is repaired
    (:func:`_repair_greedy`). The gradient is carried from one grid value to the next
    (kernel rows are read only for the multipliers clipped, changing bound or moved by the
    repair); with ``carry`` False (tight tolerances) it is recomputed at every grid value.
    SMO starts with the bounded multipliers whose KKT condition holds with slack ``margin`` or
    more shrunk (:func:`smo_core_active`; its final check is over all variables).
    """
    n = y.shape[0]
    pos = y > 0
    a = a0.copy()
    lo = np.zeros(n)
    p = -np.ones(n)
    C = np.empty(n)
    Cn = np.empty(n)
    for i in range(n):
        C[i] = w[i] * ((1.0 - pi0) if pos[i] else pi0) / nlam
    G, gbp, gbn = _start_gradient(kr, y, p, lo, C, a)
    b = b0
    prev = pi0
    dist = np.empty(n)
    a_in = np.empty(n)
    active = np.empty(n, dtype=np.bool_)
    moved = np.empty(n, dtype=np.int64)
    Kd = kernel_diagonal(kr.code, kr.X, kr.kpar, kr.Kpre)
    # the solution one grid value back (multipliers, gradient, box, intercept), for the secant
    a_pp = np.empty(n)
    G_pp = np.empty(n)
    C_pp = np.empty(n)
    a_k = np.empty(n)
    G_k = np.empty(n)
    b_pp = 0.0
    pi_pp = 0.0
    have_pp = False
    for g in order:
        pi = grid[g]
        rp = (1.0 - pi) / (1.0 - prev)
        rn = pi / prev
        for i in range(n):
            Cn[i] = w[i] * ((1.0 - pi) if pos[i] else pi) / nlam
            a_k[i] = a[i]
            G_k[i] = G[i]
        b_k = b
        if have_pp and min(rp, rn) >= secant_ratio:
            t = (pi - prev) / (prev - pi_pp)
            _secant_start(kr, y, pos, a, G, gbp, gbn, C, Cn, a_pp, G_pp, C_pp, t, rp, rn)
            b = b + t * (b - b_pp)
        else:
            _clip_start(kr, y, pos, a, G, gbp, gbn, C, Cn, rp, rn)
        for i in range(n):
            a_in[i] = a[i]
            dist[i] = abs(G[i] + y[i] * b)
        _repair_greedy(a, Cn, pos, dist)
        _apply_moves(kr, y, pos, a_in, a, Cn, G, gbp, gbn, moved)
        for i in range(n):
            a_pp[i] = a_k[i]
            G_pp[i] = G_k[i]
            C_pp[i] = C[i]
            C[i] = Cn[i]
        b_pp = b_k
        pi_pp = prev
        have_pp = True
        if not carry:
            # tight tolerances: the carried gradient's rounding (a few ulps of |Q a| per grid
            # value) would be of the order of tol; start from the exact gradient instead
            G, gbp, gbn = _start_gradient(kr, y, p, lo, C, a)
        # shrunk from the start: multipliers at a bound whose KKT condition holds with slack
        # ``margin`` or more (y f - 1 = G + y b at the start's intercept); violators stay active
        for i in range(n):
            s = G[i] + y[i] * b
            active[i] = not ((a[i] <= 0.0 and s >= margin) or (a[i] >= C[i] and s <= -margin))
        a, G, gbp, gbn, b, it, cv, ob, _ = smo_core_active(
            kr, y, p, lo, C.copy(), a, G, gbp, gbn, tol, max_iter, True, shrink_first, shrink_every, active, Kd
        )
        for i in range(n):
            A[g, i] = a[i] * nlam
        A0[g] = b * nlam
        obj[g] = ob
        its[g] = it
        conv[g] = cv
        prev = pi


def pi_grid_smo(
    X,
    y,
    *,
    code: int,
    kpar=None,
    Kpre=None,
    nlam: float,
    grid,
    weights=None,
    tol: float = 1e-3,
    cache_size: float = 200.0,
    n_jobs: int | None = None,
    secant_ratio: float = SECANT_RATIO,
) -> SolverResult:
    """Weighted SVMs on the pi grid by SMO, each warm-started from its neighbours' solutions.

    An alternative to :func:`pi_path` for problems whose elbow is large (the exact path costs
    ``O(n |E|)`` per event): a cold SMO solve at the grid value nearest ``1/2``, then two
    chains outwards (upwards and downwards; in two threads with ``n_jobs=2``).

    Each step starts where the path is heading. Between events the solution path of [WSL] is
    linear in pi (multipliers, gradient and intercept; the box ``C_i(pi)`` is linear too), so
    from the second step of a chain on the start is the secant through the two previous
    solutions, ``a_k + t (a_k - a_{k-1})`` clipped to the new box, while the shrinking class's
    box keeps at least ``secant_ratio`` of its size in the step (near the ends of the grid a
    step crosses many events and the secant overshoots). Otherwise, and for the first step, the
    start is the neighbour's multipliers clipped to the next box (the class whose box shrinks
    is clipped, the other kept where it was). Either start is then made to satisfy
    ``sum_i y_i a_i = 0`` by moving the free multipliers first (:func:`_repair_greedy`); the
    gradient is carried over (the secant's is exact, ``G`` being linear in ``a``; kernel rows
    are read only for multipliers that are clipped, change bound or are moved by the repair).
    SMO then continues to ``tol`` with the bounded multipliers whose KKT condition holds with a
    slack of 0.1 or more shrunk from the start, shrinking after 10 iterations and then every
    30 (a warm start needs a few hundred iterations, which libsvm's first shrink at 1 000
    would leave scanning every variable); every solve ends with libsvm's check over all
    variables. ``secant_ratio=1`` gives the clipped start at every step, ``0`` the secant at
    every step after the first.
    When the kernel matrix fits in ``cache_size`` it is computed once for all grid values,
    in float32 when ``tol >= 1e-3`` (as libsvm's kernel cache; the solves then solve the
    problem with the rounded kernel, relative error ``2^-24`` per entry, far below ``tol``).
    The result has SMO's accuracy (maximal KKT violation below ``tol``), not the path's
    exactness. The start rule and the shrinking schedule are defaults (measured; benchmarks/log.csv).
    Returns a :class:`~cohstats.solvers.result.SolverResult` in the scaled parametrisation of
    :func:`pi_path`, with ``n_iter`` the SMO iterations of all grid fits, ``converged`` whether
    every fit met ``tol`` and ``objective`` the C-SVM dual objective of each fit;
    ``info["iterations"]`` the SMO iterations of each grid fit,
    ``info["mid"]`` is the index of the grid value nearest ``1/2`` (the cold start) and
    ``info["gradient"]`` the C-SVM dual gradient ``G = Q a - 1`` there (the training decision
    values are ``y (G + 1) + b``, in the solver's kernel arithmetic).

    Examples
    --------
    >>> import numpy as np
    >>> from cohstats.kernels import KERNEL_LINEAR
    >>> rng = np.random.default_rng(1); X = rng.normal(size=(40, 2))
    >>> y = np.where(X[:, 0] + 0.5 * rng.normal(size=40) > 0, 1.0, -1.0)
    >>> pi_grid_smo(X, y, code=KERNEL_LINEAR, nlam=4.0, grid=np.linspace(0.1, 0.9, 9)).dual.shape
    (9, 40)
    """
    y, n, grid, w, threads = _common_args(y, grid, nlam, weights, n_jobs)
    A = np.zeros((grid.size, n))
    A0 = np.zeros(grid.size)
    obj = np.zeros(grid.size)
    its = np.zeros(grid.size, dtype=np.int64)
    conv = np.zeros(grid.size, dtype=bool)
    kpar = np.zeros(5) if kpar is None else np.ascontiguousarray(kpar, dtype=np.float64)
    f32 = tol >= 1e-3  # float32 kernel values, as libsvm's (and the lambda-SVM's) row cache
    if code != KERNEL_CALLABLE and (4.0 if f32 else 8.0) * n * n <= cache_size * 1024.0 * 1024.0:
        # the whole kernel matrix fits in the cache budget: compute it once for all grid fits
        Kpre = gram_symmetric(int(code), X, kpar, dtype=np.float32 if f32 else np.float64)
        code = KERNEL_CALLABLE
    elif code == KERNEL_CALLABLE:
        Kpre = np.ascontiguousarray(Kpre, dtype=np.float64)
        if Kpre.shape != (n, n):
            raise ValueError(f"Kpre must have shape {(n, n)}; got {Kpre.shape}")
    nc = n_cache_rows(n, cache_size)
    Xn = np.zeros((n, 1)) if code == KERNEL_CALLABLE else np.ascontiguousarray(X, dtype=np.float64)
    max_iter = max(10_000_000, 100 * n)
    mid = int(np.argmin(np.abs(grid - 0.5)))
    C = w * np.where(y > 0, 1.0 - grid[mid], grid[mid]) / nlam
    kr = rows_provider(int(code), Xn, kpar, Kpre, n_slots=nc, in_place=True)
    every = min(n, 1000)  # libsvm's shrinking schedule for the cold start
    a_mid, G_mid, b, it, cv, ob, _ = smo_core(
        kr, y, -np.ones(n), np.zeros(n), C, np.zeros(n), float(tol), max_iter, True, every + 1, every
    )
    A[mid] = a_mid * nlam
    A0[mid] = b * nlam
    obj[mid] = ob
    its[mid] = it
    conv[mid] = cv

    def chain(order):
        # a provider per chain (the two chains may run in two threads); a precomputed matrix is
        # shared by both, read in place
        krc = rows_provider(int(code), Xn, kpar, Kpre, n_slots=nc, in_place=True)
        order = np.asarray(order, dtype=np.int64)
        _grid_chain(
            krc,
            y,
            w,
            float(nlam),
            grid,
            order,
            grid[mid],
            a_mid,
            b,
            float(tol),
            max_iter,
            SHRINK_FIRST,
            SHRINK_EVERY,
            f32,
            float(ACTIVE_MARGIN),
            float(secant_ratio),
            A,
            A0,
            obj,
            its,
            conv,
        )

    _two_halves(lambda: chain(range(mid - 1, -1, -1)), lambda: chain(range(mid + 1, grid.size)), threads)
    out = _path_result(grid, A, A0, nlam, 0, 0, 0, n_iter=its.sum(), converged=conv.all(), objective=obj)
    out.info["mid"] = mid
    out.info["gradient"] = G_mid
    out.info["iterations"] = its
    return out
