"""Block visits of the λ-SVM's lazy SMO loop.

A listed point and the points with a free multiplier most correlated with it are optimised
together on their kernel block by exact single-variable steps, then ``F`` is refreshed once per
moved point (see :mod:`cohstats.solvers.svm.smo_lambda`, "Block visits"). A visit
(:func:`_block_visit`) forms the block (partners, the block's kernel and local copies of its
state), takes the exact steps on the block's copies only and refreshes ``F`` over the active
points; its scratch is one :class:`BlockScratch`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from cohstats._numba_cache import internal, njit
from cohstats.solvers.svm.rows import get_row, row_slot
from cohstats.solvers.svm.smo_lambda_kkt import _axpy, _axpy2, _axpy4, _box_step, _status, _viol_s


@njit(cache=True, nogil=True, inline="always")
def _flat_max(V, n):
    """``max(0, V[0], ..., V[n - 1])`` with four running maxima (exact: a maximum does not round)."""
    m0 = 0.0
    m1 = 0.0
    m2 = 0.0
    m3 = 0.0
    e = 0
    while e + 4 <= n:
        m0 = max(m0, V[e])
        m1 = max(m1, V[e + 1])
        m2 = max(m2, V[e + 2])
        m3 = max(m3, V[e + 3])
        e += 4
    while e < n:
        m0 = max(m0, V[e])
        e += 1
    return max(max(m0, m1), max(m2, m3))


class BlockScratch(NamedTuple):
    """Scratch of the block visits of the lazy loop (``nbk`` points per block, ``L`` classes).

    The block: ``P`` (nbk,) the positions of its points (``P[0]`` the visited point), ``Pk``
    (nbk,) the ``|K|`` of the partners found (decreasing), ``Kl`` (nbk, nbk) the kernel among
    them; per point and class ``Fl`` the centred decision values, ``D`` the changes of
    ``alpha_ij y_ij``, ``Al`` the multipliers and ``Sl`` the status bits (all (nbk, L)); ``Vl``
    (nbk L,) the violations (point-major); per point ``yl``, ``Cl``, ``Gl`` the label, bound and
    curvature ``K_ii (1 - 1/L)``; ``slots``, ``idx`` (nbk,) refresh scratch. Kept across visits:
    ``PC`` (N, nbk) the partner list of each position (its length in ``PC[q, 0]``), valid while
    ``PCs[q]`` equals the caller's stamp, and ``PK`` (N, nbk, nbk) the kernel among that block, in
    the cached rows' dtype (bitwise the rows' values).
    """

    P: np.ndarray
    Pk: np.ndarray
    Kl: np.ndarray
    Fl: np.ndarray
    D: np.ndarray
    Al: np.ndarray
    Sl: np.ndarray
    Vl: np.ndarray
    yl: np.ndarray
    Cl: np.ndarray
    Gl: np.ndarray
    slots: np.ndarray
    idx: np.ndarray
    PC: np.ndarray
    PCs: np.ndarray
    PK: np.ndarray


def block_scratch(N, L, n_block, row_dtype):
    """A :class:`BlockScratch` for blocks of ``n_block`` points (the partner cache only with
    ``n_block > 1``)."""
    nbk = max(1, n_block)
    nq = N if nbk > 1 else 1
    return BlockScratch(
        np.empty(nbk, dtype=np.int64),
        np.empty(nbk),
        np.zeros((nbk, nbk)),
        np.zeros((nbk, L)),
        np.zeros((nbk, L)),
        np.zeros((nbk, L)),
        np.zeros((nbk, L), dtype=np.uint8),
        np.zeros(nbk * L),
        np.zeros(nbk, dtype=np.int64),
        np.zeros(nbk),
        np.zeros(nbk),
        np.empty(nbk, dtype=np.int64),
        np.empty(nbk, dtype=np.int64),
        np.zeros((nq, nbk), dtype=np.int64),
        np.full(nq, -1, dtype=np.int64),
        np.zeros((nq, nbk, nbk), dtype=row_dtype),
    )


@internal(_nrt=False)
def _block_visit(st, kr, bs, i, Fi, FR, nfr, n_act, margin, thr_in, eps, nbk, stamp, kmin0, fuse, keep):
    """A block visit of point ``i``; returns ``(moved points, block index of a point whose first
    step could not move, or -1)``.

    *The block.* Partners: the (at most ``nbk - 1``) points of ``FR[:nfr]`` (points with a free
    multiplier in the class of ``i``'s largest violation, or in any class) with the largest
    ``|K(x_i, x_q)|``, read from ``i``'s kernel row, and ``|K(x_i, x_q)| >= kmin0``. The partners
    of position ``i`` are kept in ``bs.PC[i]`` and reused while ``bs.PCs[i] == stamp`` (the
    caller changes ``stamp`` when positions move and, to follow the free set, every ``N``
    visits), together with the kernel among the block, ``bs.PK[i]``, so that a block whose
    partners are reused reads neither the rows nor scattered entries of them (``keep=False``:
    read again every time; ``counter[11]`` counts the blocks whose kernel was kept); a new block
    reads its kernel from the rows of its first ``nb - 1`` points, one triangle, mirrored (the
    kernel rows are bitwise symmetric). ``Fi`` holds ``i``'s centred decision values; the
    others are centred here. The block's multipliers, status bits, labels, bounds, curvatures
    and violations are copied into ``bs``.

    *The steps.* Exact single-variable steps on the block's multipliers: largest violation of
    the block first; at least one step, then while the block's maximal violation is at least
    ``thr_in``; at most ``8 nb``. The steps move the block's decision values ``bs.Fl`` (kept
    exact with the block's kernel ``bs.Kl``), accumulate the changes of ``alpha_ij y_ij`` in
    ``bs.D`` and write the multipliers and status bits through to ``st``. A pair of highly
    correlated multipliers is moved along the direction in which their joint curvature is small,
    which single-variable visits reach only by many alternating steps (the second-order
    working-set idea of libsvm, without its equality constraint). A point whose first step
    cannot move (a floating-point stall) is returned as the second value.

    *The refresh.* ``F_j += D[a, j] K(x_P[a], .)`` over the active points for every moved point
    ``a`` of the block and changed class ``j``: each moved point costs one kernel row and one
    refresh. With ``fuse`` and a cache holding the whole block, up to four rows are added per
    pass over ``F_j`` (:func:`_axpy4`, the rounding of one pass per row).

    One function, not three inlined ones: numba's inlining copies the callee's IR per call site,
    which cost more compilation than the body itself.
    """
    # ---- the block: partners, its kernel and local copies of its state
    Ft, S, alpha, y, Cb, Kdiag, counter = st.Ft, st.S, st.alpha, st.y, st.Cb, st.Kdiag, st.counter
    P, Pk, PC, PCs, PK, Kl, Fl, D = bs.P, bs.Pk, bs.PC, bs.PCs, bs.PK, bs.Kl, bs.Fl, bs.D
    perm = kr.perm
    L = Ft.shape[0]
    inv_L = 1.0 / L
    P[0] = i
    c = nbk - 1
    m = 0
    reuse = PCs[i] == stamp and PC[i, 0] <= c
    if reuse:
        m = PC[i, 0]
        for t in range(m):
            P[t + 1] = PC[i, t + 1]
        c = 0  # no scan
    else:
        PCs[i] = stamp
    # the nbk - 1 largest |K(x_i, x_q)| over the free points (a short sorted buffer)
    if c > 0 and nfr > 0:
        r0 = get_row(kr, perm[i])
        kmin = -1.0
        for k in range(nfr):
            q = FR[k]
            a = abs(r0[q])
            if q == i or a < kmin0 or (m == c and a <= kmin):
                continue
            t = m if m < c else c - 1
            while t > 0 and Pk[t - 1] < a:
                Pk[t] = Pk[t - 1]
                P[t + 1] = P[t]
                t -= 1
            Pk[t] = a
            P[t + 1] = q
            if m < c:
                m += 1
            kmin = Pk[m - 1]
    if c > 0:
        PC[i, 0] = m
        for t in range(m):
            PC[i, t + 1] = P[t + 1]
    nb = m + 1
    counter[9] += 1
    counter[10] += nb
    for j in range(L):
        Fl[0, j] = Fi[j]
        D[0, j] = 0.0
    for a in range(1, nb):
        q = P[a]
        fm = 0.0
        for j in range(L):
            fm += Ft[j, q]
        fm *= inv_L
        for j in range(L):
            Fl[a, j] = Ft[j, q] - fm
            D[a, j] = 0.0
    # the block's kernel: kept with reused partners; otherwise one triangle from the rows of the
    # first nb - 1 points, mirrored (rows are fetched again for the refresh: with a cache smaller
    # than the block they are recomputed, bitwise the same)
    if reuse and keep:
        counter[11] += 1
        PKi = PK[i]
        for a in range(nb):
            for b in range(a + 1, nb):
                v = PKi[a, b]
                Kl[a, b] = v
                Kl[b, a] = v
    else:
        for a in range(nb - 1):
            ra = get_row(kr, perm[P[a]])
            for b in range(a + 1, nb):
                v = ra[P[b]]
                Kl[a, b] = v
                Kl[b, a] = v
                PK[i, a, b] = v
    for a in range(nb):
        Kl[a, a] = Kdiag[P[a]]
    # the block's multipliers, status bits, bounds and curvatures copied next to its decision
    # values (the steps then touch only these and write the multipliers through), and the
    # violations of its multipliers, kept in Vl (flat, point-major) after every step
    Sl, Al, Vl = bs.Sl, bs.Al, bs.Vl
    for a in range(nb):
        q = P[a]
        bs.yl[a] = y[q]
        bs.Cl[a] = Cb[q]
        bs.Gl[a] = Kdiag[q] * (1.0 - inv_L)
        for j in range(L):
            Sl[a, j] = S[j, q]
            Al[a, j] = alpha[q, j]
            Vl[a * L + j] = _viol_s(Fl[a, j], Sl[a, j], margin)
    # ---- exact single-variable steps on the block's copies (multipliers written through)
    stalled = -1
    yl, Cl, Gl = bs.yl, bs.Cl, bs.Gl
    n = nb * L
    Ff = Fl.reshape(Fl.size)
    Sf = Sl.reshape(Sl.size)
    ns = 0
    max_in = 8 * nb
    while ns < max_in:
        # the largest violation of the block and its first (point, class) in point-major order:
        # the multiplier a scan with ``v > vb`` would pick (a maximum of four running maxima, then
        # the first entry equal to it; the violations are never NaN)
        vb = _flat_max(Vl, n)
        if not vb > 0.0 or (ns > 0 and vb < thr_in):
            break
        e = 0
        while Vl[e] != vb:
            e += 1
        ab = e // L
        jb = e - ab * L
        q = P[ab]
        yi = yl[ab]
        Ci = Cl[ab]
        G = Gl[ab]
        ysgn = 1.0 if yi == jb else -1.0
        V = ysgn * Fl[ab, jb] - (margin if yi == jb else 1.0)
        aold = Al[ab, jb]
        an = _box_step(aold, V, G, Ci)
        d = an - aold
        if d == 0.0:
            stalled = ab if ns == 0 else -1
            break
        Al[ab, jb] = an
        alpha[q, jb] = an
        sn = _status(an, yi == jb, Ci, eps)
        S[jb, q] = sn
        Sl[ab, jb] = sn
        db = d * ysgn
        D[ab, jb] += db
        counter[1] += 1
        ns += 1
        # F_l += K_l[:, ab] db, centred: (F - kb / L) + kb in the moved class, as before
        for b in range(nb):
            kb = Kl[b, ab] * db
            sh = kb * inv_L
            for jj in range(L):
                f = Fl[b, jj] - sh
                Fl[b, jj] = f + kb if jj == jb else f
        for e in range(n):
            Vl[e] = _viol_s(Ff[e], Sf[e], margin)
    # ---- F_j += D[a, j] K(x_P[a], .) over the active points for the moved points
    slots, idx = bs.slots, bs.idx
    nm = 0
    if kr.rows.shape[0] <= nb or not fuse:
        for a in range(nb):
            ch = False
            for j in range(L):
                if D[a, j] != 0.0:
                    ch = True
            if not ch:
                continue
            nm += 1
            counter[0] += 1
            counter[4] += n_act
            row = get_row(kr, perm[P[a]])
            for j in range(L):
                if D[a, j] != 0.0:
                    _axpy(Ft[j, :n_act], row[:n_act], D[a, j])
    else:
        # the cache holds every row of the block at once: class by class, the moved points' rows
        # are added in one pass over F_j for up to four rows -- in the same order per entry as one
        # pass per row (bitwise the same F), reading and writing F_j once instead of once per row
        for a in range(nb):
            ch = False
            for j in range(L):
                if D[a, j] != 0.0:
                    ch = True
            if not ch:
                slots[a] = -1
                continue
            nm += 1
            counter[0] += 1
            counter[4] += n_act
            slots[a] = row_slot(kr, perm[P[a]])
        rows = kr.rows
        for j in range(L):
            c = 0
            for a in range(nb):
                if slots[a] >= 0 and D[a, j] != 0.0:
                    idx[c] = a
                    c += 1
            Fj = Ft[j, :n_act]
            t = 0
            while t < c:
                r = c - t
                a0 = idx[t]
                if r >= 4:
                    a1, a2, a3 = idx[t + 1], idx[t + 2], idx[t + 3]
                    _axpy4(
                        Fj,
                        rows[slots[a0], :n_act],
                        D[a0, j],
                        rows[slots[a1], :n_act],
                        D[a1, j],
                        rows[slots[a2], :n_act],
                        D[a2, j],
                        rows[slots[a3], :n_act],
                        D[a3, j],
                    )
                    t += 4
                elif r >= 2:
                    a1 = idx[t + 1]
                    _axpy2(Fj, rows[slots[a0], :n_act], D[a0, j], rows[slots[a1], :n_act], D[a1, j])
                    t += 2
                else:
                    _axpy(Fj, rows[slots[a0], :n_act], D[a0, j])
                    t += 1
    return nm, stalled
