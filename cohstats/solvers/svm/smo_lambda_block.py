"""Block visits of the λ-SVM's lazy SMO loop.

A listed point and the points with a free multiplier most correlated with it are optimised
together on their kernel block by exact single-variable steps, then ``F`` is refreshed once per
moved point (see :mod:`cohstats.solvers.svm.smo_lambda`, "Block visits").
"""

from __future__ import annotations

from numba import njit

from cohstats.solvers.svm.rows import get_row, row_slot
from cohstats.solvers.svm.smo_lambda_kkt import _axpy, _axpy2, _axpy4, _status, _viol_s


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


@njit(cache=True, nogil=True)
def _block_visit(
    st,
    kr,
    i,
    Fi,
    n_act,
    FR,
    nfr,
    margin,
    tol,
    thr_in,
    eps,
    nbk,
    P,
    Pk,
    Fl,
    Kl,
    D,
    stalled,
    PC,
    PCs,
    stamp,
    kmin0,
    slots,
    idx,
    fuse,
    PK,
    Sl,
    Al,
    Vl,
    yl,
    Cl,
    Gl,
    keep=True,
):
    """Point ``i`` and its most correlated partners, optimised together (a block visit).

    Partners: the (at most ``nbk - 1``) points of ``FR[:nfr]`` (points with a free multiplier in
    the class of ``i``'s largest violation, or in any class)
    with the largest ``|K(x_i, x_q)|``, read from ``i``'s kernel row. Exact single-variable steps
    on the block's multipliers (largest violation of the block first; at least one step, then
    while the block's maximal violation is at least ``thr_in``; at most ``8 |block|``) on the
    block's decision values ``Fl``, kept exact with the block's kernel ``Kl`` read from the cached
    rows; then ``F_j += d_j K(x_a, .)`` over the active points for every moved point ``a`` and
    changed class ``j``. A pair of highly correlated multipliers is moved along the direction in
    which their joint curvature is small, which single-variable visits reach only by many
    alternating steps (the second-order working-set idea of libsvm, without its equality
    constraint). ``Fi`` holds ``i``'s centred decision values. The partners of position ``i`` are
    kept in ``PC[i]`` (their number in ``PC[i, 0]``) and reused while ``PCs[i] == stamp`` (the
    caller changes ``stamp`` when positions move and, to follow the free set, every ``N`` visits).
    Partners need ``|K(x_i, x_q)| >= kmin0``. The off-diagonal kernel entries among the block are
    kept with the partners, ``PK[i, a, b] = K(x_P[a], x_P[b])`` (``PK`` has the cached rows'
    dtype, so the entries are bitwise the rows' values), so that a block whose partners are reused
    reads neither the rows nor scattered entries of them (``keep=False``: read again every time);
    a new block reads its kernel from the rows of its first ``|block| - 1`` points, one triangle,
    mirrored (the kernel rows are bitwise symmetric; ``counter[11]`` counts the blocks whose
    kernel was kept). With ``fuse`` and a cache holding the whole block, the refresh adds up to four rows
    per pass over ``F_j`` (:func:`_axpy4`, the rounding of one pass per row); ``slots``, ``idx``
    and ``Sl``, ``Al``, ``Vl``, ``yl``, ``Cl``, ``Gl`` (the block's status bits, multipliers,
    violations, labels, bounds and curvatures) are scratch. Returns the number of moved points (each
    one kernel row and one refresh); ``stalled[0] >= 0`` when the first step could not move."""
    alpha, Ft, S, y, Cb, Kdiag, counter = st.alpha, st.Ft, st.S, st.y, st.Cb, st.Kdiag, st.counter
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
    kmin = -1.0
    if c > 0 and nfr > 0:
        r0 = get_row(kr, perm[i])
    else:
        r0 = kr.rows[0]  # not read
    for k in range(nfr if c > 0 else 0):
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
    n = nb * L
    Ff = Fl.reshape(Fl.size)
    Sf = Sl.reshape(Sl.size)
    for a in range(nb):
        q = P[a]
        yl[a] = y[q]
        Cl[a] = Cb[q]
        Gl[a] = Kdiag[q] * (1.0 - inv_L)
        for j in range(L):
            Sl[a, j] = S[j, q]
            Al[a, j] = alpha[q, j]
    for e in range(n):
        Vl[e] = _viol_s(Ff[e], Sf[e], margin)
    ns = 0
    stalled[0] = -1
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
        a0 = Al[ab, jb]
        if G > 1e-12:
            an = a0 - V / G
        else:
            an = Ci if V < 0.0 else 0.0
        if an < 0.0:
            an = 0.0
        elif an > Ci:
            an = Ci
        d = an - a0
        if d == 0.0:
            if ns == 0:
                stalled[0] = ab
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
        return nm
    # the cache holds every row of the block at once: class by class, the moved points' rows are
    # added in one pass over F_j for up to four rows -- in the same order per entry as one pass per
    # row (bitwise the same F), reading and writing F_j once instead of once per row
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
    return nm
