"""Proximal-Newton (IRLS) block passes of the multicategory coherence loss ([ZJLY]): exact
per-row K x K Hessians, profiled intercepts, and the exact minimiser of each block's model, a
group soft-thresholding with an anisotropic curvature (see :mod:`cohstats.solvers.cd.multi`).
"""

from __future__ import annotations

import math

import numpy as np
from cohstats._numba_cache import njit


from cohstats._numba_cache import internal
from cohstats.solvers.cd.group import _block_kkt
from cohstats.solvers.cd.scalar import _FM, _dot


@internal
def _gstate(F, yc, w, T, sc, u, R, Pi):
    """Loss, gradient and curvature state of the grouped problem at the fits F, in one pass.

    ``Pi[:, i]`` receives the soft weights ``beta^c`` of row i (their Hessian
    ``(diag(beta) - beta beta')/T`` is the loss curvature of the row), ``R`` the negative
    gradient ``s w_i (I[k = c_i] - beta_k)``; returns ``(s/n) sum_i w_i C(g_i, c_i)`` (stable
    form: the largest exponent is factored out and the rest summed through ``log1p``).
    """
    K, n = F.shape
    tot = 0.0
    for i in range(n):
        c = yc[i]
        gc = F[c, i]
        m = 0.0
        km = c
        for k in range(K):
            if k != c:
                e = (u + F[k, i] - gc) / T
                if e > m:
                    m = e
                    km = k
        rest = 0.0
        for k in range(K):
            e = 0.0 if k == c else (u + F[k, i] - gc) / T
            t = math.exp(e - m)
            Pi[k, i] = t
            if k != km:
                rest += t
        S = 1.0 + rest
        for k in range(K):
            Pi[k, i] /= S
            R[k, i] = -sc * w[i] * Pi[k, i]
        R[c, i] += sc * w[i]
        if w[i] > 0.0:
            tot += w[i] * T * (m + math.log1p(rest))
    return tot * sc / n


@internal
def _group_prox(lam, U, v, b, r, t, out):
    """Minimiser z of 1/2 (z - b)'S(z - b) - v'z + r/2 ||z||^2 + t ||z||_2, S = U diag(lam) U'.

    With c = v + S b (lam >= 0): z = 0 when ||c|| <= t; otherwise z = (S + (r + mu) I)^-1 c with
    mu = t/||z|| > 0, the root of sum_k ct_k^2 mu^2 / (lam_k + r + mu)^2 = t^2 (ct = U'c), found
    by safeguarded Newton in a bracket that follows from lam_min <= lam_k <= lam_max.
    """
    K = v.shape[0]
    ct = np.empty(K)
    cn = 0.0
    for k in range(K):
        s = 0.0
        q = 0.0
        for l in range(K):
            s += U[l, k] * v[l]
            q += U[l, k] * b[l]
        ct[k] = s + lam[k] * q
        cn += ct[k] * ct[k]
    cn = math.sqrt(cn)
    for k in range(K):
        out[k] = 0.0
    if cn <= t:
        return
    mu = 0.0
    if t > 0.0:
        lmin = math.inf
        lmax = 0.0
        for k in range(K):
            if ct[k] != 0.0:
                q = lam[k] + r
                lmin = min(lmin, q)
                lmax = max(lmax, q)
        lo = t * lmin / (cn - t)
        hi = t * lmax / (cn - t)
        mu = hi
        for it in range(100):
            # g(mu) = sum ct^2 mu^2/(q + mu)^2 - t^2, increasing in mu
            g = -t * t
            dg = 0.0
            for k in range(K):
                q = lam[k] + r
                e = ct[k] * ct[k]
                a = mu / (q + mu)
                g += e * a * a
                dg += 2.0 * e * a * q / ((q + mu) * (q + mu))
            if g > 0.0:
                hi = mu
            else:
                lo = mu
            if abs(g) <= 1e-15 * t * t or hi - lo <= 1e-15 * hi:
                break
            mn = mu - g / dg if dg > 0.0 else 0.5 * (lo + hi)
            if not (mn > lo and mn < hi):
                mn = 0.5 * (lo + hi)
            mu = mn
    for k in range(K):
        q = lam[k] + r + mu
        if ct[k] == 0.0 or not (q > 0.0):
            continue
        zk = ct[k] / q
        for l in range(K):
            out[l] += U[l, k] * zk


@njit(cache=True, nogil=True, fastmath=_FM, inline="always")
def _mean(v):
    """Mean of the entries of ``v`` (the shift that centres a block of class coefficients)."""
    m = 0.0
    for k in range(v.shape[0]):
        m += v[k]
    return m / v.shape[0]


@internal(fastmath=_FM)
def _gpass_newton(idx, m, data, loss, pen, ws, nw, fresh, outer):
    """One block coordinate pass over rows idx[:m] on the grouped proximal-Newton (IRLS) model.

    The quadratic model of the loss at the start of an outer iteration (``fresh``: ``R``, ``Pi``
    from :func:`_gstate` at the current fits) uses the exact per-row Hessians
    ``H_i = s w_i (diag(beta_i) - beta_i beta_i')/T`` plus ``w_i floor_c (I - 11'/K)``, which
    keeps the model well posed where the loss is flat and, like ``H_i``, annihilates the
    constant vector. Later (inner) passes of the same outer iteration continue on that model:
    ``E`` is its negative gradient, kept exact under the updates. As in the binary IRLS pass
    the intercepts are profiled out (kept at the minimiser of the model given the coefficients,
    their pending shift ``db`` applied at the end of the pass), so each block step is the joint
    minimiser over (intercepts, block) of the model: block ``j`` has the curvature
    ``S_j = M_j - C_j M_0^+ C_j`` (``M_j = (1/n) sum x_ij^2 H_i``, ``C_j = (1/n) sum x_ij H_i``,
    ``M_0 = (1/n) sum H_i``), whose eigendecomposition is cached per outer iteration
    (``stamp[j] == outer``) in ``Uc``, ``Lc``, ``Cc`` (and ``A0`` = ``(M_0 + tau 11'/K)^-1``,
    then ``M_0`` in ``A0[K:]``); the block update is the exact minimiser of its model, a group
    soft-thresholding with the anisotropic curvature (:func:`_group_prox`). Unlike Boehning's
    global bound (``s/(2T)`` everywhere, which makes steps up to ``1/T`` times too short where
    the loss is nearly linear, i.e. almost everywhere at small T), these curvatures follow the
    data; the caller halves the step of an outer iteration when the true objective rises.
    The block caches live in ``nw`` (:class:`cohstats.solvers.cd.state.NewtonWork`); ``ws`` is
    updated in place. Returns (max_j h_j ||delta_j||^2, largest KKT violation seen before the
    updates).
    """
    Xt, w, xv, intercept = data.Xt, data.w, data.xv, data.intercept
    T, sc, Lb, floor_c = loss.p1, loss.p2, loss.Lb, loss.floor_c
    pf, l1, l2, use_P, P, Psh = pen.pf, pen.l1, pen.l2, pen.use_P, pen.P, pen.Pshift
    B, b, F, PB, R, E = ws.B, ws.b, ws.F, ws.PB, ws.R, ws.E
    Pi, stamp, Uc, Lc, Cc, A0 = nw.Pi, nw.stamp, nw.Uc, nw.Lc, nw.Cc, nw.A0
    K, n = F.shape
    v = np.empty(K)
    cmv = np.empty(K)
    d = np.empty(K)
    tt = np.empty(K)
    hd = np.empty(K)
    db = np.zeros(K)
    Mj = np.empty((K, K))
    Cj = np.empty((K, K))
    CA = np.empty((K, K))
    fK = 1.0 / K
    if fresh:
        for k in range(K):
            for i in range(n):
                E[k, i] = R[k, i]
    if intercept:
        if fresh:
            # M0 (a Laplacian: M0 1 = 0) + (tau/K) 11' is invertible and its inverse acts as
            # M0^+ on vectors with zero sum (all gradients and curvature products here)
            M0 = np.zeros((K, K))
            for i in range(n):
                if w[i] > 0.0:
                    a = w[i] * sc / T
                    fl = w[i] * floor_c
                    for k in range(K):
                        tt[k] = a * Pi[k, i]
                    for k in range(K):
                        for l in range(K):
                            M0[k, l] += (tt[k] + fl if k == l else 0.0) - tt[k] * Pi[l, i] - fl * fK
            tau = 0.0
            for k in range(K):
                tau += M0[k, k] / n
            tau = tau / K if tau > 0.0 else 1.0
            for k in range(K):
                for l in range(K):
                    M0[k, l] /= n
                    A0[K + k, l] = M0[k, l]
                    M0[k, l] += tau * fK
            Ai = np.linalg.inv(M0)
            for k in range(K):
                for l in range(K):
                    A0[k, l] = Ai[k, l]
        for k in range(K):
            se = 0.0
            for i in range(n):
                se += E[k, i]
            v[k] = se / n
        for k in range(K):
            s = 0.0
            for l in range(K):
                s += A0[k, l] * v[l]
            db[k] = s
    dmax = 0.0
    kk = 0.0
    for q in range(m):
        j = idx[q]
        xj = Xt[j]
        pj = pf[j]
        Pjj = (P[j, j] + Psh[j]) if use_P else 1.0
        for k in range(K):
            v[k] = _dot(xj, E[k]) / n
        if stamp[j] != outer:
            # curvature of the block in this outer iteration: M_j, C_j, the Schur complement
            for k in range(K):
                for l in range(K):
                    Mj[k, l] = 0.0
                    Cj[k, l] = 0.0
            for i in range(n):
                xi = xj[i]
                if xi != 0.0 and w[i] > 0.0:
                    a = w[i] * sc / T
                    fl = w[i] * floor_c
                    x2 = xi * xi
                    for k in range(K):
                        tt[k] = a * Pi[k, i]
                    for k in range(K):
                        for l in range(K):
                            h = (tt[k] + fl if k == l else 0.0) - tt[k] * Pi[l, i] - fl * fK
                            Mj[k, l] += x2 * h
                            Cj[k, l] += xi * h
            for k in range(K):
                for l in range(K):
                    Mj[k, l] /= n
                    Cj[k, l] /= n
            if intercept:
                for k in range(K):
                    for l in range(K):
                        s = 0.0
                        for r in range(K):
                            s += Cj[k, r] * A0[r, l]
                        CA[k, l] = s
                for k in range(K):
                    for l in range(K):
                        s = 0.0
                        for r in range(K):
                            s += CA[k, r] * Cj[r, l]
                        Mj[k, l] -= s
            for k in range(K):
                for l in range(k):
                    s = 0.5 * (Mj[k, l] + Mj[l, k])
                    Mj[k, l] = s
                    Mj[l, k] = s
            lam_s, U = np.linalg.eigh(Mj)
            lo_c = floor_c * xv[j] * 1e-3
            for k in range(K):
                lk = lam_s[k]
                if not (lk >= lo_c):
                    lk = lo_c
                if lk > (Lb + floor_c) * xv[j]:
                    lk = (Lb + floor_c) * xv[j]
                Lc[j, k] = lk
                for l in range(K):
                    Uc[j, l, k] = U[l, k]
                    Cc[j, k, l] = Cj[k, l]
            stamp[j] = outer
        if intercept:
            # profiled gradient: v - C_j db
            for k in range(K):
                s = 0.0
                for l in range(K):
                    s += Cc[j, k, l] * db[l]
                v[k] -= s
        H = Lc[j, K - 1]
        bn = 0.0
        for k in range(K):
            bn += B[k, j] * B[k, j]
        bn = math.sqrt(bn)
        viol = _block_kkt(pen, ws, j, v, cmv, bn)
        if viol > kk:
            kk = viol
        # exact minimiser of the block model: z = B_j + d solves (S + r I + mu I) z = c with
        # mu = l1 pf / ||z|| (group soft-thresholding with an anisotropic curvature)
        for k in range(K):
            tt[k] = v[k] - (l2 * pj * cmv[k] if use_P else 0.0)
            d[k] = B[k, j]
        _group_prox(Lc[j], Uc[j], tt, d, l2 * pj * Pjj, l1 * pj, hd)
        mean = _mean(hd)
        ch = 0.0
        for k in range(K):
            hd[k] -= mean
            d[k] = hd[k] - B[k, j]
            ch += d[k] * d[k]
            B[k, j] = hd[k]
        if ch > 0.0:
            for i in range(n):
                xi = xj[i]
                if xi != 0.0:
                    a = xi * w[i] * sc / T
                    fl = xi * w[i] * floor_c
                    pd = 0.0
                    for k in range(K):
                        pd += Pi[k, i] * d[k]
                    for k in range(K):
                        E[k, i] -= a * Pi[k, i] * (d[k] - pd) + fl * d[k]
                        F[k, i] += xi * d[k]
            if use_P:
                Pj = P[j]  # row j of the penalty matrix is P[j] + Psh[j]
                for k in range(K):
                    dk = d[k]
                    if dk != 0.0:
                        sd = Psh[j] * dk
                        for i in range(PB.shape[1]):
                            PB[k, i] += Pj[i] * dk + sd
            if intercept:
                # the intercepts follow: db -= A^-1 C_j d
                for k in range(K):
                    s = 0.0
                    for l in range(K):
                        s += Cc[j, k, l] * d[l]
                    hd[k] = s
                for k in range(K):
                    s = 0.0
                    for l in range(K):
                        s += A0[k, l] * hd[l]
                    db[k] -= s
            if H * ch > dmax:
                dmax = H * ch
    if intercept:
        mean = _mean(db)
        ch = 0.0
        for k in range(K):
            d[k] = db[k] - mean
            if not math.isfinite(d[k]):
                return dmax, kk
        for k in range(K):
            b[k] += d[k]
            for i in range(n):
                F[k, i] += d[k]
        # the model residual follows the intercepts: E_i -= H_i d
        for i in range(n):
            if w[i] > 0.0:
                a = w[i] * sc / T
                fl = w[i] * floor_c
                pd = 0.0
                for k in range(K):
                    pd += Pi[k, i] * d[k]
                for k in range(K):
                    E[k, i] -= a * Pi[k, i] * (d[k] - pd) + fl * d[k]
        for k in range(K):
            s = 0.0
            for l in range(K):
                s += A0[K + k, l] * d[l]
            ch += d[k] * s
        if ch > dmax:
            dmax = ch
    return dmax, kk
