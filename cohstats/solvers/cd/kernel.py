"""Kernel-expansion C-learning: [ZDJ] Algorithm 1 along a penalty path.

Minimises, for each ``gamma`` of a decreasing sequence (warm starts),

    (1/n) sum_i w_i phi(y_i f(x_i)) + gamma ((1 - alpha)/2 beta'K beta + alpha ||beta||_1),
    f(x) = b + sum_j beta_j K(x_j, x),

with the coordinate updates of [ZDJ] (the engine of :mod:`cohstats.solvers.cd.path` with the
penalty matrix ``K`` in place of the identity). The points with ``beta_j != 0`` are the support
points. The columns of ``K`` are centred (weighted) internally, which leaves the solution
unchanged (the intercept is unpenalised) and decouples the intercept from the coefficients;
the intercept is reported for the uncentred expansion above.

The same loss codes and update modes as the linear engine apply (IRLS with exact curvature and
step halving for the C-/V-/logistic losses, MM for the huberized hinge, exact coordinate
minimisation for LUM).

Pure kernel ridge (``alpha = 0``) with a loss of finite curvature bound (all but the hinge and
LUM with ``c = inf``) is solved by damped Newton steps with a
direct (n+1)-dimensional linear solve instead of coordinate descent: the Gaussian kernel matrix is
severely ill-conditioned (eigenvalues down to 1e-10 are common), and coordinate descent in
``beta`` then needs thousands of passes to reach the optimum although each Newton step costs
only one O(n^3) solve. Without an l1 part there is no sparsity for coordinate descent to exploit.
This is the quadratic approximation of [ZDJ] Algorithm 1 solved exactly (the inner loop of Algorithm 1
run to convergence) with the step-halving safeguard of; ``solver="cd"`` forces Algorithm 1.

The pure kernel ridge LUM with finite ``a`` and ``c`` (soft, intermediate and hard LUMs of [LZW],
including the hard component ``c = 1e4`` of the tuned LUM) on more than 200 observations is
routed by default to dual coordinate ascent (:mod:`cohstats.solvers.cd.lum_kdual`; Hsieh et al.
2008): single-coordinate steps on the LUM's Fenchel dual, each O(n) on one kernel row, with
Newton rounds restricted to the observations on the curved part of the loss where the passes
stall. It reaches the Newton route's KKT gate (``1e-2 sqrt(tol obj0)``, intercept included)
and needs no second n x n array. Up to 200 observations the damped Newton route is as fast and
its system small, and it stays the default there; ``solver="newton"`` or ``solver="dual"``
forces either.

Memory: a fit holds one n x n float64 array. :func:`prepare_kernel` symmetrises and centres the
kernel matrix in place (``overwrite_K=True``) or in one copy (the default, leaving the caller's
matrix unchanged); the centred matrix is the coordinate-descent design, and the penalty matrix
is read from it as a row shift (``K[j, i] = Xt[j, i] + m_j``). A :class:`PreparedKernel` can be
passed to :func:`kernel_gamma_max` and to the path functions, so that one preparation serves
both. The damped Newton route of the pure ridge needs one more (n+1) x (n+1) array while it runs
(its Newton system, factorised in place); the dual route of the ridge LUM reads the prepared
kernel only (plus O(n) per penalty and an |F| x |F| block in its Newton rounds, ``F`` the
observations on the curved part of the loss).
"""

from __future__ import annotations

import math
import warnings
from typing import NamedTuple

import numpy as np
from cohstats._numba_cache import njit

from cohstats.losses.scalar import LOSS_LUM, LOSS_MCOH, loss_curv_bound, loss_eval_sum
from cohstats.solvers.cd.design import (
    _check_alpha,
    _check_lambdas,
    _check_loss,
    _check_tol,
    _check_xyw,
    _resolve_mode,
    _warn_conv,
    continuation_grid,
    default_mode,
    xv_of,
)
from cohstats.solvers.cd.multi import _check_margin, _check_T, _group_mode, grouped_output, _prep as _prep_multi
from cohstats.solvers.cd.path import _lambda_max_std, path_info, run_path
from cohstats.solvers.cd.ridge import SMALL_SYSTEM, _ridge_info, small_lapack
from cohstats.solvers.cd.scalar import _objective
from cohstats.solvers.cd.solve import _null_fit
from cohstats.solvers.cd.state import (
    Control,
    PathSpec,
    Penalty,
    kind_of,
    make_data,
    make_loss,
    make_penalty,
    upd_of,
)

__all__ = [
    "cd_kernel_path",
    "kernel_gamma_max",
    "cd_kernel_multi_path",
    "kernel_multi_gamma_max",
    "prepare_kernel",
    "PreparedKernel",
    "LentKernel",
]

#: symmetry tolerance of a kernel matrix (relative; absolute part scaled by max |K_ij|)
_SYM_RTOL = 1e-10
_SYM_ATOL = 1e-12
#: tile size of the in-place symmetrisation (two tiles of float64 stay in cache)
_TILE = 64
#: the kernel ridge LUM takes the dual route by default above this many observations (below it
#: the damped Newton route is as fast, its system is small, and it converges quadratically)
_DUAL_MIN_N = 200


# --------------------------------------------------------------------------- preparation
class PreparedKernel(NamedTuple):
    """A kernel matrix prepared once for the solvers of this module (see :func:`prepare_kernel`).

    One n x n array serves as both the design and the penalty matrix: ``Xt`` holds the centred
    kernel columns, one per row (``Xt[j, i] = K[i, j] - m_j``), and the kernel itself is the row
    shift ``K[j, i] = Xt[j, i] + m_j`` (``K`` symmetric).

    Attributes
    ----------
    Xt : (n, n) float64, C-contiguous
        The centred design (the symmetrised kernel matrix, centred in place).
    m : (n,) float64
        Weighted means of the kernel columns (zeros without an intercept).
    xv : (n,) float64
        Weighted mean squares of the rows of ``Xt``.
    excl : (n,) bool
        Rows of ``Xt`` that are identically zero (kept at zero by the solvers).
    w : (n,) float64
        The observation weights, normalised to mean 1.
    intercept : bool
        Whether the columns were centred for an unpenalised intercept.
    """

    Xt: np.ndarray
    m: np.ndarray
    xv: np.ndarray
    excl: np.ndarray
    w: np.ndarray
    intercept: bool

    @property
    def n(self) -> int:
        return self.Xt.shape[0]

    def matvec(self, v):
        """``K @ v`` (``K`` the symmetrised kernel matrix) from the centred design."""
        return self.Xt @ v + self.m * v.sum()


@njit(cache=True, nogil=True)
def _finite_maxabs(K):
    """(all entries finite, largest |K_ij|) in one pass without temporaries."""
    n0, n1 = K.shape
    mx = 0.0
    for i in range(n0):
        for j in range(n1):
            v = K[i, j]
            if not math.isfinite(v):
                return False, 0.0
            a = abs(v)
            if a > mx:
                mx = a
    return True, mx


@njit(cache=True, nogil=True)
def _symmetrise(K, rtol, atol, tile):
    """Replace ``K_ij`` and ``K_ji`` by their mean in place, tile by tile over ``i < j``.

    Each pair must satisfy numpy's ``allclose`` test in both orders
    (``|K_ij - K_ji| <= atol + rtol |K_ji|`` and ``<= atol + rtol |K_ij|``). Returns -1, or
    ``i n + j`` of the first pair that fails (the pairs before it have been averaged).
    """
    n = K.shape[0]
    for i0 in range(0, n, tile):
        i1 = min(i0 + tile, n)
        for j0 in range(i0, n, tile):
            j1 = min(j0 + tile, n)
            for i in range(i0, i1):
                for j in range(max(j0, i + 1), j1):
                    a = K[i, j]
                    b = K[j, i]
                    if a != b:
                        d = abs(a - b)
                        if d > atol + rtol * abs(b) or d > atol + rtol * abs(a):
                            return i * n + j
                        h = 0.5 * (a + b)
                        K[i, j] = h
                        K[j, i] = h
    return -1


class LentKernel:
    """A kernel matrix lent by its owner for one fit, to be prepared in its own memory.

    The tuners of :mod:`cohstats.tuning` compute one n x n kernel matrix for all the fits of a
    cross-validation and lend each fit the block of its training rows this way (see
    :func:`cohstats.tuning.cv`). :func:`prepare_kernel` symmetrises and centres ``K`` in place,
    also when it is a view into the owner's larger buffer, and records the centring vector in
    ``m``; after the fit the owner restores the kernel values by ``K += m[:, None]``.

    Attributes
    ----------
    K : (n, n) float64, C-contiguous and writeable
        The kernel matrix of the fit's training points.
    kernel : cohstats.kernels.Kernel
        The kernel that produced ``K``; a fit uses ``K`` only for this kernel.
    X : (n, p) float64
        The points ``K`` was evaluated at (a fit uses ``K`` only for these inputs).
    m : (n,) float64 or None
        Set by :func:`prepare_kernel`: the vector subtracted from the rows of ``K``.
    """

    __slots__ = ("K", "kernel", "X", "m")

    def __init__(self, K, kernel, X):
        K = np.asarray(K)
        if not (
            K.ndim == 2
            and K.shape[0] == K.shape[1]
            and K.dtype == np.float64
            and K.flags.c_contiguous
            and K.flags.writeable
        ):
            raise ValueError("LentKernel needs a square, C-contiguous, writeable float64 matrix")
        self.K, self.kernel, self.X, self.m = K, kernel, X, None

    def matches(self, kernel, X) -> bool:
        """Is ``K`` the matrix of ``kernel`` at the rows ``X``?"""
        same_kernel = (
            kernel.code == self.kernel.code
            and kernel.func is self.kernel.func
            and np.array_equal(kernel.kpar, self.kernel.kpar)
        )
        X = np.asarray(X)
        return same_kernel and X.shape == self.X.shape and (X is self.X or np.array_equal(X, self.X))


def _square(K, overwrite_K, check_symmetric=True, lent=False):
    """The symmetrised float64 kernel matrix: in place when ``overwrite_K`` allows, else a copy
    (exactly one n x n array either way). Without ``check_symmetric`` any asymmetry is averaged
    away. ``lent``: ``K`` is a :class:`LentKernel`'s matrix, prepared in place even as a view."""
    K = np.asarray(K)
    if K.ndim != 2 or K.shape[0] != K.shape[1]:
        raise ValueError(f"K must be a square (n, n) kernel matrix; got shape {K.shape}")
    inplace = lent or (
        overwrite_K
        and K.dtype == np.float64
        and K.flags.c_contiguous
        and K.flags.writeable
        and K.flags.aligned
        and K.flags.owndata  # never a view into a larger array the caller may still use
    )
    if not inplace:
        K = np.array(K, dtype=np.float64, order="C", copy=True)
    ok, mx = _finite_maxabs(K)
    if not ok:
        raise ValueError("K contains NaN or infinite values")
    atol = _SYM_ATOL * max(1.0, mx) if check_symmetric else math.inf
    bad = _symmetrise(K, _SYM_RTOL, atol, _TILE)
    if bad >= 0:
        i, j = divmod(int(bad), K.shape[0])
        raise ValueError(
            "K must be symmetric (a kernel matrix of the training points); "
            f"K[{i}, {j}] = {K[i, j]!r} but K[{j}, {i}] = {K[j, i]!r}"
        )
    return K


def prepare_kernel(K, w=None, *, intercept=True, overwrite_K=False, check_symmetric=True):
    """Check, symmetrise and centre a kernel matrix once, for any number of solver calls.

    The symmetrisation ``(K + K')/2`` and the weighted centring of the columns are done in one
    n x n float64 array; nothing else of size n x n is allocated.

    Parameters
    ----------
    K : (n, n) symmetric kernel matrix of the training points (asymmetry up to a relative
        1e-10 is averaged away; more raises ValueError), or a :class:`LentKernel`, whose matrix
        is prepared in place (whatever ``overwrite_K``) and whose ``m`` is set
    w : (n,) nonnegative observation weights or None (normalised to mean 1 here)
    intercept : centre the columns for an unpenalised intercept
    overwrite_K : allow the preparation to reuse ``K``'s memory (scipy's ``overwrite_a``): when
        True and ``K`` is a C-contiguous float64 array that owns its memory, ``K`` is
        overwritten by the centred design and must not be used afterwards (also when a
        ValueError is raised). When False (default) ``K`` is copied once and left unchanged.
    check_symmetric : raise ValueError when ``K`` is asymmetric beyond the tolerance; when False
        ``(K + K')/2`` is used whatever the asymmetry (for kernels given as callables)

    Returns
    -------
    PreparedKernel
        Accepted in place of ``K`` (with ``w=None``) by :func:`cd_kernel_path`,
        :func:`kernel_gamma_max`, :func:`cd_kernel_multi_path` and
        :func:`kernel_multi_gamma_max`.

    Examples
    --------
    >>> import numpy as np
    >>> from cohstats.solvers.cd.kernel import prepare_kernel
    >>> X = np.array([[0.0], [1.0], [2.0]]); K = np.exp(-(X - X.T) ** 2)
    >>> pk = prepare_kernel(K)
    >>> bool(np.allclose(pk.Xt + pk.m[:, None], K)), bool(np.allclose(pk.matvec(np.ones(3)), K.sum(1)))
    (True, True)
    """
    lent = K if isinstance(K, LentKernel) else None
    K = _square(K if lent is None else lent.K, bool(overwrite_K), bool(check_symmetric), lent is not None)
    n = K.shape[0]
    _, _, w = _check_xyw(np.empty((n, 0)), np.ones(n), w)  # validates and normalises w only
    m = (w @ K) / n if intercept else np.zeros(n)
    K -= m[:, None]  # row j = centred column j (K symmetric): the design, in place
    if lent is not None:
        lent.m = m
    xv = np.einsum("ji,ji,i->j", K, K, w) / n
    return PreparedKernel(K, m, xv, xv <= 0.0, w, bool(intercept))


def _prepared(K, w, intercept, overwrite_K):
    """A :class:`PreparedKernel` from ``K`` (prepared here) or ``K`` itself if already prepared."""
    if isinstance(K, PreparedKernel):
        if w is not None:
            raise ValueError("w must be None when K is a PreparedKernel (its weights were fixed by prepare_kernel)")
        if bool(intercept) != K.intercept:
            raise ValueError(
                f"intercept={bool(intercept)} but the PreparedKernel was centred with intercept={K.intercept}; "
                "call prepare_kernel with the same intercept"
            )
        return K
    return prepare_kernel(K, w, intercept=intercept, overwrite_K=overwrite_K)


def _kernel_penalty(pk):
    """The penalty matrix of a prepared kernel: its design with the row shifts ``m``."""
    return make_penalty(np.ones(pk.n), pk.Xt, pk.m)


def kernel_gamma_max(K, y, w, loss_code, p1, p2, alpha, intercept=True, *, overwrite_K=False, offset=None):
    """Smallest ``gamma`` with ``beta = 0``: ``max_j |(1/n) sum_i K_ij g_i^0| / alpha``.

    ``g^0`` is the negative gradient at the intercept-only fit. For ``alpha < 1e-3`` (no finite
    value exists for the pure ridge) the value at ``alpha = 1e-3`` is returned (glmnet's rule).
    ``K`` is the kernel matrix or a :class:`PreparedKernel` (then ``w`` must be None);
    ``overwrite_K`` as in :func:`prepare_kernel`.

    Examples
    --------
    >>> import numpy as np
    >>> from cohstats.solvers.cd.kernel import kernel_gamma_max
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]]); y = np.array([-1.0, -1.0, 1.0, 1.0])
    >>> K = np.exp(-(X - X.T) ** 2)
    >>> kernel_gamma_max(K, y, None, 7, 0.0, 0.0, 1.0) > 0
    True
    """
    loss_code, p1, p2 = _check_loss(loss_code, p1, p2)
    pk = _prepared(K, w, intercept, overwrite_K)
    _, y, _ = _check_xyw(np.empty((pk.n, 0)), y, None)
    alpha = _check_alpha(alpha)
    data = make_data(pk.Xt, y, pk.w, xv_of(pk.Xt, pk.w), pk.excl, pk.intercept, offset=offset)
    return _lambda_max_std(data, make_loss(loss_code, p1, p2), _kernel_penalty(pk), default_mode(loss_code), alpha)


@njit(cache=True, nogil=True)
def _fill_newton(Xt, m, Wn, gam, KW, A):
    """The Newton system of :func:`_newton_ridge` in place: ``A[j, i] = Wn_j K_ji + gam [i = j]``
    for ``i, j < n`` (``K = Xt + m 1'``) and, when ``A`` has the intercept's row and column
    (``KW = K Wn``), ``A[j, n] = Wn_j``, ``A[n, i] = KW_i``, ``A[n, n] = sum(Wn) + 1e-12``."""
    n = Xt.shape[0]
    for j in range(n):
        wj = Wn[j]
        mj = m[j]
        for i in range(n):
            A[j, i] = wj * (Xt[j, i] + mj)
        A[j, j] += gam
    if A.shape[0] > n:
        tot = 0.0
        for j in range(n):
            A[j, n] = Wn[j]
            A[n, j] = KW[j]
            tot += Wn[j]
        A[n, n] = tot + 1e-12


def _newton_ridge(data, loss, pk, gam, b, beta, tol, max_iter, obj0):
    """Damped Newton for (1/n) sum w phi(y (b + K beta)) + gam/2 beta'K beta (see module doc).

    ``K`` is applied as ``pk.matvec``; each step forms the (n+1) x (n+1) Newton system (the
    equations divided by ``K``) in Fortran order and factorises it in place: one n x n float64
    array besides the kernel while the route runs.
    """
    from scipy.linalg import lu_factor, lu_solve

    y, w, intercept = data.y, data.w, data.intercept
    code, p1, p2, Lb = loss.code, loss.p1, loss.p2, loss.Lb
    Xt, m = pk.Xt, pk.m
    n = Xt.shape[0]
    floor_c = 1e-10 * Lb if (np.isfinite(Lb) and Lb > 0) else 1e-10
    W = np.empty(n)
    r = np.empty(n)
    pen = Penalty(np.ones(n), 0.0, gam, True, Xt, m)
    Kb = pk.matvec(beta)
    f = b + Kb
    obj = _objective(data, loss, pen, f, beta, Kb)
    gate = 1e-2 * np.sqrt(tol * max(obj0, 1e-10))
    it = 0
    converged = False
    for it in range(1, max_iter + 1):
        loss_eval_sum(code, p1, p2, y, w, f, W, r, floor_c)
        res_beta = r / n - gam * beta  # K times this is minus the beta-gradient
        res_b = r.sum() / n
        kkt = max(np.abs(pk.matvec(res_beta)).max(), abs(res_b) if intercept else 0.0)
        if kkt <= gate:
            converged = True
            break
        # the (n+1) x (n+1) system in Fortran order, factorised in place (no second copy)
        kk = n + 1 if intercept else n
        A = np.empty((kk, kk), order="F")
        Wn = W / n
        KW = pk.matvec(Wn) if intercept else Wn  # (W'K)' / n (K symmetric); unread without intercept
        _fill_newton(Xt, m, Wn, gam, KW, A)
        rhs = np.append(res_beta, res_b) if intercept else res_beta
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            step = lu_solve(lu_factor(A, overwrite_a=True, check_finite=False), rhs, check_finite=False)
        if not np.all(np.isfinite(step)):  # singular system: rebuild it and take least squares
            _fill_newton(Xt, m, Wn, gam, KW, A)
            step = np.linalg.lstsq(A, rhs, rcond=None)[0]
        del A
        dbeta = step[:n]
        db = step[n] if intercept else 0.0
        Kd = pk.matvec(dbeta)
        t = 1.0
        for _ in range(40):
            nb = beta + t * dbeta
            nKb = Kb + t * Kd
            nbb = b + t * db
            nf = nbb + nKb
            nobj = _objective(data, loss, pen, nf, nb, nKb)
            if nobj <= obj:
                break
            t *= 0.5
        else:
            converged = True  # no decrease possible at machine precision
            break
        done = obj - nobj <= 1e-16 * max(abs(obj), 1.0)
        beta, Kb, b, f, obj = nb, nKb, nbb, nf, nobj
        if done:
            converged = True
            break
    return b, beta, it, converged, obj, Kb


def cd_kernel_path(
    K,
    y,
    w,
    loss_code,
    p1,
    p2,
    gammas,
    alpha,
    tol=1e-7,
    max_iter=10000,
    *,
    mode=None,
    intercept=True,
    warn=True,
    exact_kkt=True,
    solver="auto",
    overwrite_K=False,
    offset=None,
):
    """Kernel C-learning (or RLRM / HHSVM / LUM) along a decreasing ``gamma`` path.

    Parameters
    ----------
    K : (n, n) symmetric kernel matrix of the training points, or a :class:`PreparedKernel`
        (then ``w`` must be None and ``intercept`` as prepared)
    y : (n,) labels coded -1/+1
    w : (n,) nonnegative observation weights (normalised to mean 1) or None
    loss_code, p1, p2 : loss code of :mod:`cohstats.losses.scalar` and its parameters
    gammas : penalties, best given decreasing (warm starts follow the given order)
    alpha : l1 share ``omega`` of the penalty, in [0, 1]
    tol : convergence threshold relative to the intercept-only objective
    max_iter : maximum coordinate passes per ``gamma``
    mode : None/"auto", "irls", "mm" or "exact" (see :mod:`cohstats.solvers.cd.path`)
    solver : "auto" (dual coordinate ascent for the LUM loss with finite ``a`` and ``c``,
        ``alpha = 0`` and more than 200 observations; damped Newton for ``alpha = 0`` and
        another such problem or loss with finite curvature bound; coordinate descent
        otherwise), "cd" ([ZDJ] Algorithm 1 always), "newton" or "dual"
        (:func:`cohstats.solvers.cd.lum_kdual.lum_kernel_dual_path`; ``info["solver"]`` is
        ``"dual"`` and ``info["n_iter"]`` counts its passes and Newton steps)
    intercept : fit an unpenalised intercept
    exact_kkt : report the exact KKT violation in ``info["kkt"]``
    overwrite_K : let the preparation reuse ``K``'s memory (see :func:`prepare_kernel`); by
        default ``K`` is copied once and left unchanged
    offset : (n,) known offsets added to the fits (R's ``offset()``); solved by coordinate
        descent or the LUM dual (the Newton route takes no offset)

    Notes
    -----
    Memory: coordinate descent needs the one n x n array of the prepared kernel plus O(n) per
    penalty value, and so does the dual route of the ridge LUM. The damped Newton route of the
    pure ridge forms an (n+1) x (n+1) system at each step and factorises it in place: one more
    n x n float64 array while it runs.

    Returns
    -------
    intercepts : (ngam,) array
    betas : (ngam, n) array of expansion coefficients (support points: nonzero entries)
    info : dict with ``n_iter``, ``converged``, ``objective``, ``df`` (number of support
        points), ``kkt``, ``null_objective``, ``mode``

    Examples
    --------
    >>> import numpy as np
    >>> from cohstats.solvers.cd.kernel import cd_kernel_path, kernel_gamma_max
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((40, 2)); y = np.where(X[:, 0] * X[:, 1] > 0, 1.0, -1.0)
    >>> K = np.exp(-((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    >>> gmax = kernel_gamma_max(K, y, None, 0, 1.0, 1.0, 0.5)
    >>> b, B, info = cd_kernel_path(K, y, None, 0, 1.0, 1.0, gmax * np.array([1.0, 0.01]), 0.5)
    >>> int(info["df"][0]), bool(info["df"][1] > 0)
    (0, True)
    """
    loss_code, p1, p2 = _check_loss(loss_code, p1, p2)
    pk = _prepared(K, w, intercept, overwrite_K)
    _, y, _ = _check_xyw(np.empty((pk.n, 0)), y, None)
    alpha = _check_alpha(alpha)
    gam = _check_lambdas(gammas)
    tol, max_iter = _check_tol(tol, max_iter)
    m_ = _resolve_mode(mode, loss_code, p1, p2)
    if solver not in ("auto", "cd", "newton", "dual"):
        raise ValueError(f"solver must be 'auto', 'cd', 'newton' or 'dual'; got {solver!r}")
    smooth = bool(np.isfinite(loss_curv_bound(loss_code, p1, p2)))
    if solver == "newton" and (alpha != 0.0 or not smooth):
        raise ValueError("solver='newton' needs alpha=0 and a loss with a finite curvature bound")
    dual_ok = loss_code == LOSS_LUM and alpha == 0.0 and math.isfinite(p1) and math.isfinite(p2)
    if solver == "dual" and not dual_ok:
        raise ValueError("solver='dual' needs the LUM loss with finite a and c and alpha=0")
    if offset is not None and solver == "newton":
        raise ValueError("solver='newton' takes no offset; use solver='cd', 'dual' or 'auto'")
    if solver == "dual" or (solver == "auto" and dual_ok and pk.n > _DUAL_MIN_N):
        from cohstats.solvers.cd.lum_kdual import lum_kernel_dual_path

        b0, B, info = lum_kernel_dual_path(pk, y, p1, p2, gam, tol, max_iter, offset=offset)
        if warn and not np.all(info["converged"]):
            _warn_conv(gam, info["converged"], max_iter, name="gamma")
        return b0, B, info
    if solver == "newton" or (solver == "auto" and alpha == 0.0 and smooth and offset is None):
        return _ridge_path(pk, y, loss_code, p1, p2, gam, tol, max_iter, warn, m_)
    data = make_data(pk.Xt, y, pk.w, pk.xv, pk.excl, pk.intercept, offset=offset)
    spec = PathSpec(gam, alpha, m_, tol, max_iter, bool(exact_kkt), continuation_grid(loss_code, p1, p2, m_))
    res = run_path(data, make_loss(loss_code, p1, p2), _kernel_penalty(pk), spec, 1)
    B = res.coef[:, 0, :]
    intercepts = res.intercept[:, 0] - B @ pk.m
    info = path_info(res, np.count_nonzero(B, axis=1), mode=m_)
    if warn and not res.converged:
        _warn_conv(gam, res.info["converged"], max_iter, name="gamma")
    return intercepts, B, info


def _ridge_path(pk, y, code, p1, p2, gam, tol, max_iter, warn, mode):
    """The damped Newton route along the path, its (n+1) x (n+1) systems under :func:`small_lapack`."""
    with small_lapack(pk.n + 1, SMALL_SYSTEM):
        return _ridge_newton_path(pk, y, code, p1, p2, gam, tol, max_iter, warn, mode)


def _ridge_newton_path(pk, y, code, p1, p2, gam, tol, max_iter, warn, mode):
    n = pk.n
    w, intercept = pk.w, pk.intercept
    ng = gam.shape[0]
    # intercept-only start
    loss = make_loss(code, p1, p2)
    data = make_data(pk.Xt, y, w, pk.xv, pk.excl, intercept)._replace(sw=float(w.sum()))
    pen0 = _kernel_penalty(pk)
    ws = _null_fit(kind_of(code, p2), upd_of(mode), data, loss, pen0, Control(1e-14, 1000), 1)
    b = float(ws.b[0])
    obj0 = _objective(data, loss, pen0, ws.F[0], ws.B[0], ws.PB[0])
    beta = np.zeros(n)
    B = np.zeros((ng, n))
    b0 = np.zeros(ng)
    n_iter = np.zeros(ng, dtype=np.int64)
    conv = np.zeros(ng, dtype=bool)
    objs = np.zeros(ng)
    kkts = np.zeros(ng)
    for k, g in enumerate(gam):
        b, beta, it, ok, obj, Kb = _newton_ridge(data, loss, pk, float(g), b, beta, tol, max_iter, obj0)
        B[k], b0[k], n_iter[k], conv[k], objs[k] = beta, b, it, ok, obj
        W = np.empty(n)
        r = np.empty(n)
        loss_eval_sum(code, p1, p2, y, w, b + Kb, W, r, 0.0)
        kkts[k] = max(np.abs(pk.matvec(r / n) - g * Kb).max(), abs(r.sum() / n) if intercept else 0.0)
    info = _ridge_info(B, n_iter, conv, objs, kkts, obj0, mode, "newton")
    if warn and not np.all(conv):
        _warn_conv(gam, conv, max_iter, name="gamma")
    return b0, B, info


# =========================================================================== K classes
def _prep_mc(K, y, w, n_classes, T, loss_scale, intercept, overwrite_K):
    pk = _prepared(K, w, intercept, overwrite_K)
    _, yc, _, G = _prep_multi(np.empty((pk.n, 0)), y, None, n_classes)
    T = _check_T(T)
    sc = float(loss_scale)
    if not (sc > 0 and np.isfinite(sc)):
        raise ValueError(f"loss_scale must be positive; got {loss_scale!r}")
    return pk, yc, G, T, sc


def kernel_multi_gamma_max(
    K, y, w, T, alpha, *, n_classes=None, intercept=True, loss_scale=1.0, mode=None, overwrite_K=False, margin=1.0
):
    """Smallest penalty at which every row of the expansion coefficients is zero, for the
    K-class kernel problem of :func:`cd_kernel_multi_path`:
    ``max_j ||(1/n) sum_i K_ij r_i||_2 / alpha`` with ``r_i`` the negative gradient (in the K
    margins) at the intercept-only fit (``alpha`` replaced by 1e-3 when smaller). ``K`` is the
    kernel matrix or a :class:`PreparedKernel` (then ``w`` must be None); ``overwrite_K`` as in
    :func:`prepare_kernel`.

    Examples
    --------
    >>> import numpy as np
    >>> from cohstats.solvers.cd.kernel import kernel_multi_gamma_max
    >>> X = np.arange(6.0)[:, None]; y = np.array([0, 0, 1, 1, 2, 2])
    >>> kernel_multi_gamma_max(np.exp(-(X - X.T) ** 2), y, None, 1.0, 1.0) > 0
    True
    """
    pk, yc, G, T, sc = _prep_mc(K, y, w, n_classes, T, loss_scale, intercept, overwrite_K)
    alpha = _check_alpha(alpha)
    data = make_data(pk.Xt, np.zeros(pk.n), pk.w, xv_of(pk.Xt, pk.w), pk.excl, pk.intercept, yc=yc)
    pen = _kernel_penalty(pk)
    loss = make_loss(LOSS_MCOH, T, sc, _check_margin(margin))
    return _lambda_max_std(data, loss, pen, _group_mode(mode, T), alpha, G=G)


def cd_kernel_multi_path(
    K,
    y,
    w,
    T,
    gammas,
    alpha,
    *,
    n_classes=None,
    tol=1e-7,
    max_iter=10000,
    intercept=True,
    loss_scale=1.0,
    warn=True,
    mode=None,
    overwrite_K=False,
    margin=1.0,
):
    """Multicategory kernel C-learning along a decreasing penalty path.

    Minimises, for each penalty ``lambda`` of ``gammas`` in turn (warm starts),

        (s/n) sum_i w_i C(g(x_i), c_i)
            + lambda [(1 - alpha)/2 tr(B'KB) + alpha sum_j ||B_j.||_2],
        g_k(x) = b_k + sum_j B_jk K(x_j, x),  k = 0..K-1,

    with ``C`` the multicategory coherence loss of [ZJLY] (eq (6), temperature ``T``; its
    margin ``margin`` is 1 there, and ``margin=0, T=1`` gives the multinomial logistic loss), ``s`` a
    constant loss scale (``kappa`` of the C-loss makes K = 2 the binary C-loss, [ZDJ]),
    ``B`` the (n, K) matrix of expansion coefficients and ``B_j.`` its row for training point
    ``j``. The ridge part is the squared RKHS norm ``sum_k ||f_k||^2_H`` of the class functions;
    the group-lasso part selects support points for all classes at once (a point with
    ``B_j. != 0`` is a support point). This is the kernel form of the grouped penalty of
    :func:`cohstats.solvers.cd.multi.cd_multi_path` (identity replaced by ``K``).

    Sum-to-zero: the loss depends on ``g`` only through differences, so it is unchanged by
    ``B_j. -> B_j. + t_j 1``; both penalty terms are minimised over such shifts at centred rows
    (for positive definite ``K``), so solutions satisfy ``sum_k B_jk = 0`` and
    ``sum_k b_k = 0``.

    Binary reduction: for K = 2 the fit equals the binary kernel fit
    (:func:`cd_kernel_path`, loss V with ``rho = T, u = 1`` or loss C with ``s = kappa``) at
    ``binary_equivalent(lambda, alpha)`` with ``beta = B_.1 - B_.0`` (see
    :mod:`cohstats.solvers.cd.multi`).

    Algorithm: block coordinate descent over the rows of ``B``, by proximal-Newton passes (exact
    per-row Hessians of the loss, profiled intercepts, step halving) for ``T < 0.1`` and with
    Böhning's bound otherwise (see :mod:`cohstats.solvers.cd.multi`), on the shared path driver of
    :mod:`cohstats.solvers.cd.path` (strong rules, KKT checks, warm starts); the columns of ``K``
    are centred internally as in
    :func:`cd_kernel_path`. Pure ridge (``alpha = 0``) runs the same coordinate descent, which
    is slow for ill-conditioned kernels; small positive ``alpha`` is faster.

    Parameters
    ----------
    K : (n, n) symmetric kernel matrix of the training points, or a :class:`PreparedKernel`
        (then ``w`` must be None and ``intercept`` as prepared)
    y : (n,) integer class codes 0..K-1
    w : (n,) nonnegative observation weights (normalised to mean 1) or None
    T : temperature (``rho``) of the coherence loss
    gammas : penalties, best decreasing
    alpha : group-lasso share in [0, 1]
    n_classes : number of classes (default ``max(y) + 1``)
    tol, max_iter, intercept, warn : as :func:`cd_kernel_path`
    loss_scale : the constant ``s``
    mode : ``"auto"`` (default), ``"irls"`` or ``"mm"``, as
        :func:`cohstats.solvers.cd.multi.cd_multi_path`
    overwrite_K : let the preparation reuse ``K``'s memory (see :func:`prepare_kernel`); by
        default ``K`` is copied once and left unchanged

    Returns
    -------
    intercepts : (ngam, K) array (rows sum to zero), for the uncentred expansion
    betas : (ngam, n, K) array of expansion coefficients (rows sum to zero)
    info : dict ``n_iter``, ``converged``, ``objective``, ``df`` (support points), ``kkt``,
        ``null_objective``

    Examples
    --------
    >>> import numpy as np
    >>> from cohstats.solvers.cd.kernel import cd_kernel_multi_path, kernel_multi_gamma_max
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((45, 2)); y = np.digitize(X[:, 0], [-0.5, 0.5])
    >>> K = np.exp(-((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    >>> gmax = kernel_multi_gamma_max(K, y, None, 1.0, 0.5)
    >>> b, B, info = cd_kernel_multi_path(K, y, None, 1.0, gmax * np.array([1.0, 0.05]), 0.5)
    >>> B.shape, int(info["df"][0]), bool(abs(B[1].sum(axis=1)).max() < 1e-12)
    ((2, 45, 3), 0, True)
    """
    pk, yc, G, T, sc = _prep_mc(K, y, w, n_classes, T, loss_scale, intercept, overwrite_K)
    gmode = _group_mode(mode, T)
    alpha = _check_alpha(alpha)
    gam = _check_lambdas(gammas)
    tol, max_iter = _check_tol(tol, max_iter)
    n = pk.n
    data = make_data(pk.Xt, np.zeros(n), yc=yc, w=pk.w, xv=pk.xv, excl=pk.excl, intercept=pk.intercept)
    spec = PathSpec(gam, alpha, gmode, tol, max_iter, True, np.zeros(0))
    res = run_path(data, make_loss(LOSS_MCOH, T, sc, _check_margin(margin)), _kernel_penalty(pk), spec, G)
    # expansion coefficients are reported as fitted (no scale); intercepts for the uncentred K
    return grouped_output(res, pk.m, np.ones(n), True, gam, max_iter, warn)
