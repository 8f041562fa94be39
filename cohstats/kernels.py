"""Kernels shared by every kernel method.

Numba functions take a kernel *code* and a float64 parameter vector
``kpar = [gamma, coef0, degree, D, nu]`` so that solvers stay free of Python objects:

=============  ================================================================
KERNEL_LINEAR  <x, x'>
KERNEL_RBF     exp(-gamma ||x - x'||^2)          (gamma = 1 / sigma^2)
KERNEL_POLY    (gamma <x, x'> + coef0)^degree
KERNEL_COMPACT (1 - ||x - x'|| / D)_+^nu exp(-gamma ||x - x'||^2)   ([RH] section 6.4)
=============  ================================================================

:func:`make_kernel` turns the user-facing arguments (``kernel="rbf"``, ``sigma=``, ``gamma=``,
width heuristics) into ``(code, kpar)``; callables are evaluated in Python into a full matrix.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from cohstats._numba_cache import install as _install_numba_cache
from cohstats._numba_cache import internal, njit

_install_numba_cache()  # before any jitted function is defined: hash-keyed numba cache

from llvmlite import ir as _ir  # noqa: E402
from numba import prange, types  # noqa: E402
from numba.core.extending import intrinsic  # noqa: E402

KERNEL_LINEAR = 0
KERNEL_RBF = 1
KERNEL_POLY = 2
KERNEL_COMPACT = 3
KERNEL_CALLABLE = -1

_KERNEL_NAMES = {
    "linear": KERNEL_LINEAR,
    "rbf": KERNEL_RBF,
    "gaussian": KERNEL_RBF,
    "poly": KERNEL_POLY,
    "polynomial": KERNEL_POLY,
    "compact": KERNEL_COMPACT,
}


@internal
def kernel_pair(code, x, z, kpar):
    """K(x, z) for two 1-D float64 vectors."""
    p = x.shape[0]
    if code == KERNEL_LINEAR or code == KERNEL_POLY:
        s = 0.0
        for k in range(p):
            s += x[k] * z[k]
        if code == KERNEL_LINEAR:
            return s
        return (kpar[0] * s + kpar[1]) ** kpar[2]
    d2 = 0.0
    for k in range(p):
        t = x[k] - z[k]
        d2 += t * t
    v = math.exp(-kpar[0] * d2)
    if code == KERNEL_COMPACT:
        r = 1.0 - math.sqrt(d2) / kpar[3]
        if r <= 0.0:
            return 0.0
        v *= r ** kpar[4]
    return v


@njit(cache=True, nogil=True)
def kernel_row(code, X, i, Z, kpar, out):
    """out[j] = K(X[i], Z[j]) for all rows j of Z."""
    xi = X[i]
    for j in range(Z.shape[0]):
        out[j] = kernel_pair(code, xi, Z[j], kpar)


@njit(cache=True, nogil=True, parallel=False)
def kernel_matrix_nb(code, X, Z, kpar):
    n, m = X.shape[0], Z.shape[0]
    K = np.empty((n, m))
    for i in prange(n):
        for j in range(m):
            K[i, j] = kernel_pair(code, X[i], Z[j], kpar)
    return K


@njit(cache=True, nogil=True)
def kernel_diag(code, X, kpar):
    n = X.shape[0]
    d = np.empty(n)
    for i in range(n):
        d[i] = kernel_pair(code, X[i], X[i], kpar)
    return d


def _sqdist(X: np.ndarray, Z: np.ndarray) -> np.ndarray:
    """Squared Euclidean distances ``||x_i - z_j||^2`` in one (n, m) array (no temporaries)."""
    xx = np.einsum("ij,ij->i", X, X)
    zz = np.einsum("ij,ij->i", Z, Z)
    d2 = X @ Z.T
    d2 *= -2.0
    d2 += xx[:, None]
    d2 += zz[None, :]
    np.maximum(d2, 0.0, out=d2)
    return d2


#: above this many rows (per class for ``median_between``) the width heuristics use a seeded
#: random subsample of this size, so that their memory and time stay O(n) (as kernlab's
#: ``sigest`` does); below it they use every point and are exact.
WIDTH_SUBSAMPLE = 2000


def _subsample(X: np.ndarray, size: int, seed: int = 0) -> np.ndarray:
    if X.shape[0] <= size:
        return X
    idx = np.sort(np.random.default_rng(seed).choice(X.shape[0], size=size, replace=False))
    return X[idx]


def median_between(X: np.ndarray, y: np.ndarray) -> float:
    """Median Euclidean distance between points of different classes (Jaakkola's heuristic, [WSL]).

    ``y`` holds any labels with at least two distinct values (+-1 for a binary response); every
    pair of points whose labels differ counts once. A class with more than ``WIDTH_SUBSAMPLE``
    points is represented by a seeded random subsample of that size, so memory and time stay
    bounded; below that size the median is exact.
    """
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y)
    labels = np.unique(y)
    if labels.size < 2:
        raise ValueError("median_between needs a response with at least two classes")
    # seeds 2, 1 for the two classes of a binary response (as before), k + 1 beyond
    groups = [
        _subsample(X[y == lab], WIDTH_SUBSAMPLE, seed=(2 if k == 0 else k if k == 1 else k + 1))
        for k, lab in enumerate(labels)
    ]
    parts = [
        np.sqrt(_sqdist(groups[b], groups[a])).ravel() for a in range(len(groups)) for b in range(a + 1, len(groups))
    ]
    med = float(np.median(np.concatenate(parts)))
    if not (med > 0 and np.isfinite(med)):
        raise ValueError(
            f"the median distance between the classes is {med!r} (the inputs are "
            "constant, or so large that squared distances overflow); give gamma or "
            "sigma explicitly, or standardize=True"
        )
    return med


def mean_all(X: np.ndarray) -> float:
    """Mean Euclidean distance over all unordered pairs i < j ([ZDJ] section 5.2).

    Above ``WIDTH_SUBSAMPLE`` rows, the mean over a seeded random subsample of that size.
    """
    X = _subsample(np.asarray(X, dtype=np.float64), WIDTH_SUBSAMPLE)
    n = X.shape[0]
    if n < 2:
        raise ValueError("mean_all needs at least two rows")
    d = np.sqrt(_sqdist(X, X))
    iu = np.triu_indices(n, 1)
    m = float(d[iu].mean())
    if not (m > 0 and np.isfinite(m)):
        raise ValueError(
            f"the mean pairwise distance is {m!r} (the inputs are constant, or so large "
            "that squared distances overflow); give gamma or sigma explicitly"
        )
    return m


def scale_gamma(X: np.ndarray) -> float:
    """scikit-learn's ``gamma="scale"``: ``1 / (p Var(X))`` over all entries of X.

    On standardised inputs this is ``1/p``, e1071's default.
    """
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[1] == 0:
        raise ValueError(
            "a kernel needs at least one predictor, and the model has none (a formula "
            "such as 'y ~ 1'): add predictors to the formula"
        )
    v = float(X.var()) * X.shape[1]
    if not (v > 0 and np.isfinite(v)):
        raise ValueError(
            f"gamma='scale' needs inputs with a positive finite variance; got Var(X) = "
            f"{float(X.var())!r}; give gamma or sigma explicitly"
        )
    return 1.0 / v


#: named kernel widths accepted as ``gamma=`` strings, and the heuristics behind them
WIDTHS = {
    "scale": "1 / (p Var(X)) (scikit-learn's default; 1/p on standardised inputs, e1071's)",
    "auto": "1 / p",
    "median": "1 / sigma^2 with sigma the median distance between the classes ([WSL], Jaakkola)",
    "mean": "1 / sigma^2 with sigma the mean pairwise distance ([ZDJ] section 5.2)",
}
_WIDTH_ALIASES = {"median_between": "median", "mean_all": "mean"}


def resolve_gamma(gamma, X=None, y=None) -> float:
    """A kernel width ``gamma`` from a number or a named heuristic (see :data:`WIDTHS`)."""
    if isinstance(gamma, str):
        name = _WIDTH_ALIASES.get(gamma, gamma)
        if name not in WIDTHS:
            raise ValueError(f"gamma must be a positive number or one of {sorted(WIDTHS)}; got {gamma!r}")
        if X is None:
            raise ValueError(f"gamma={gamma!r} needs the training inputs")
        X = np.asarray(X, dtype=np.float64)
        if name == "scale":
            return scale_gamma(X)
        if name == "auto":
            return 1.0 / X.shape[1]
        if name == "median":
            if y is None:
                raise ValueError("gamma='median' needs the labels y")
            return 1.0 / median_between(X, y) ** 2
        return 1.0 / mean_all(X) ** 2
    g = float(gamma)
    if not (np.isfinite(g) and g > 0):
        raise ValueError(f"gamma must be a positive finite number; got {gamma!r}")
    return g


# exp(x) for x <= 0 in a loop that LLVM vectorises (``math.exp`` is a scalar call): Cody-Waite
# reduction ``x = n ln2 + r``, ``|r| <= ln2 / 2``, Taylor polynomial of degree 13 (truncation
# below 1e-17), ``2^n`` built in the exponent bits. Agrees with ``numpy.exp`` to 1 ulp on
# [-708, 0]; 0 below -708. 3.3x faster than ``math.exp`` on 7 494-long rows.
# Used for the Gaussian / compact kernel rows of both SMO solvers.
_EXP_SHIFT = 6755399441055744.0 + 1023.0  # 1.5 * 2^52 + exponent bias: rounds to an integer
_LOG2E = 1.4426950408889634
_LN2_HI = 6.93147180369123816490e-01  # 32 significant bits: n * _LN2_HI is exact
_LN2_LO = 1.90821492927058770002e-10


@njit(cache=True, nogil=True, inline="always")
def _exp_reduced(v):
    """``(p, kd)`` with ``exp(v) = p * 2^n`` for ``v >= -708``: ``n`` in the low bits of ``kd``
    (``v log2(e)`` rounded by the shift constant), ``p = exp(r)`` by its degree-13 Taylor
    polynomial on the reduced argument ``r = v - n ln 2`` (``|r| <= ln(2) / 2``). Inlined into
    :func:`exp_nonpos` and :func:`rbf_row32_into`, so both compute the same operations."""
    kd = v * _LOG2E + _EXP_SHIFT
    kf = kd - _EXP_SHIFT
    r = (v - kf * _LN2_HI) - kf * _LN2_LO
    p = 1.0 / 6227020800.0
    p = p * r + 1.0 / 479001600.0
    p = p * r + 1.0 / 39916800.0
    p = p * r + 1.0 / 3628800.0
    p = p * r + 1.0 / 362880.0
    p = p * r + 1.0 / 40320.0
    p = p * r + 1.0 / 5040.0
    p = p * r + 1.0 / 720.0
    p = p * r + 1.0 / 120.0
    p = p * r + 1.0 / 24.0
    p = p * r + 1.0 / 6.0
    p = p * r + 0.5
    p = p * r + 1.0
    p = p * r + 1.0
    return p, kd


@njit(cache=True, nogil=True)
def exp_nonpos(out, x, kbuf):
    """``out[t] = exp(x[t])`` for ``x[t] <= 0``; ``kbuf`` is float64 scratch of the same length.

    Never compile this, nor a function that calls it, with ``fastmath``: once inlined into a
    fastmath caller LLVM folds ``(v * log2e + shift) - shift`` and the result is wrong (seen
    with numba 0.68: the reduction ``r`` became 0)."""
    n = x.shape[0]
    for t in range(n):
        p, kd = _exp_reduced(max(x[t], -708.0))
        out[t] = p
        kbuf[t] = kd
    kb = kbuf.view(np.int64)
    for t in range(n):
        kb[t] = kb[t] << 52  # the low bits of kd hold n + 1023: the bits of 2^n
    for t in range(n):
        out[t] = out[t] * kbuf[t] if x[t] > -708.0 else 0.0


# Kernel rows by the norm expansion ``||x - z||^2 = ||x||^2 + ||z||^2 - 2 <x, z>`` (clipped at 0),
# computed in blocks of 512 columns vectorised over the columns, with the inner products
# accumulated in the order of the features (so that ``K(x, z)`` and ``K(z, x)`` are bitwise equal
# and the linear / polynomial rows equal :func:`kernel_pair`). The SVM-dual solvers build their
# training rows with :func:`kernel_row_into` (cohstats.solvers.svm.rows) and predict with
# :func:`kernel_cross`, so training and prediction share one arithmetic.
ROW_BLOCK = 512


@internal
def _add_features(d, c, ZT, lo, hi):
    """``d[t] += sum_k c[k] z_tk`` for ``lo <= t < hi`` (``ZT`` is the (p, m) transpose of Z),
    the terms added in the order of the features, four features per pass over the block (the
    block stays in L1). The slices are taken here, as ``ZT[k, lo:hi]``: a 2-D slice passed in
    has layout 'A' and its loop does not vectorise."""
    p = ZT.shape[0]
    db = d[lo:hi]
    m = hi - lo
    k = 0
    while k + 4 <= p:
        c0 = c[k]
        c1 = c[k + 1]
        c2 = c[k + 2]
        c3 = c[k + 3]
        x0 = ZT[k, lo:hi]
        x1 = ZT[k + 1, lo:hi]
        x2 = ZT[k + 2, lo:hi]
        x3 = ZT[k + 3, lo:hi]
        for t in range(m):
            db[t] = (((db[t] + c0 * x0[t]) + c1 * x1[t]) + c2 * x2[t]) + c3 * x3[t]
        k += 4
    while k < p:
        ck = c[k]
        xk = ZT[k, lo:hi]
        for t in range(m):
            db[t] += ck * xk[t]
        k += 1


@internal
def _sqdist_block(db, x, xx, ZT, zb, lo, hi):
    """``db[t] = ||x||^2 + ||z_t||^2 - 2 sum_k x_k z_tk`` for the block ``lo <= t < hi`` (``db`` and
    ``zb`` are the block's slices of the output and of the squared norms), the ``-2 x_k z_tk``
    terms added in the order of the features, four per pass: the same sums as
    :func:`_add_features` with ``c = -2 x``, without the temporary ``c`` and with the start
    values written in the same pass structure (about 3 us less per row of 6 000 points than
    the row-wide start loop and a ``-2 x`` array per row)."""
    p = ZT.shape[0]
    m = hi - lo
    for t in range(m):
        db[t] = xx + zb[t]
    k = 0
    while k + 4 <= p:
        c0 = -2.0 * x[k]
        c1 = -2.0 * x[k + 1]
        c2 = -2.0 * x[k + 2]
        c3 = -2.0 * x[k + 3]
        x0 = ZT[k, lo:hi]
        x1 = ZT[k + 1, lo:hi]
        x2 = ZT[k + 2, lo:hi]
        x3 = ZT[k + 3, lo:hi]
        for t in range(m):
            db[t] = (((db[t] + c0 * x0[t]) + c1 * x1[t]) + c2 * x2[t]) + c3 * x3[t]
        k += 4
    while k < p:
        ck = -2.0 * x[k]
        xk = ZT[k, lo:hi]
        for t in range(m):
            db[t] += ck * xk[t]
        k += 1


@njit(cache=True, nogil=True)
def sq_norms(X):
    """``||x_i||^2`` for every row of X (summed in the order of the features)."""
    n = X.shape[0]
    out = np.empty(n)
    for i in range(n):
        s = 0.0
        for k in range(X.shape[1]):
            s += X[i, k] * X[i, k]
        out[i] = s
    return out


@njit(cache=True, nogil=True)
def kernel_row_into(code, x, xx, ZT, zz, kpar, diag, out, work):
    """``out[t] = K(x, z_t)`` for every column ``t`` of ``ZT`` (the (p, m) C-contiguous transpose
    of Z), for the numba kernel codes.

    ``xx = ||x||^2`` and ``zz[t] = ||z_t||^2`` (:func:`sq_norms`); ``diag >= 0`` names the column
    equal to ``x`` (a training row), whose squared distance is then exactly 0; ``work`` is float64
    scratch of shape (3, m). Distances are clipped at 0; the Gaussian's exponential is
    :func:`exp_nonpos` (1 ulp of ``numpy.exp``). The inner-product kernels are
    :func:`dot_row_into`, the distance kernels :func:`dist_row_into` (a caller that knows its
    kernel calls one of them and compiles only it).
    """
    if code == KERNEL_LINEAR or code == KERNEL_POLY:
        dot_row_into(code, x, ZT, kpar, out, work)
    else:
        dist_row_into(code, x, xx, ZT, zz, kpar, diag, out, work)


@njit(cache=True, nogil=True)
def dot_row_into(code, x, ZT, kpar, out, work):
    """:func:`kernel_row_into` for the linear and polynomial kernels."""
    m = ZT.shape[1]
    d = work[0]
    # <x, z_t> summed from 0 (bitwise kernel_pair's sum)
    for lo in range(0, m, ROW_BLOCK):
        hi = min(m, lo + ROW_BLOCK)
        d[lo:hi] = 0.0
        _add_features(d, x, ZT, lo, hi)
    if code == KERNEL_LINEAR:
        for t in range(m):
            out[t] = d[t]
    else:
        for t in range(m):
            out[t] = (kpar[0] * d[t] + kpar[1]) ** kpar[2]


@internal
def dist_row_into(code, x, xx, ZT, zz, kpar, diag, out, work):
    """:func:`kernel_row_into` for the Gaussian and compact kernels."""
    m = ZT.shape[1]
    d = work[0]
    xs = work[1]
    for lo in range(0, m, ROW_BLOCK):
        hi = min(m, lo + ROW_BLOCK)
        _sqdist_block(d[lo:hi], x, xx, ZT, zz[lo:hi], lo, hi)
    if diag >= 0:
        d[diag] = 0.0
    g = kpar[0]
    for t in range(m):
        v = max(d[t], 0.0)
        d[t] = v
        xs[t] = -g * v
    exp_nonpos(out, xs, work[2])
    if code == KERNEL_COMPACT:
        for t in range(m):
            r = 1.0 - math.sqrt(d[t]) / kpar[3]
            out[t] = out[t] * r ** kpar[4] if r > 0.0 else 0.0


@intrinsic
def _f64_bits(typingctx, x):
    """The bits of a float64 as an int64 (a bitcast, vectorisable)."""

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], _ir.IntType(64))

    return types.int64(types.float64), codegen


@intrinsic
def _bits_f64(typingctx, n):
    """The float64 whose bits are the int64 ``n`` (a bitcast, vectorisable)."""

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], _ir.DoubleType())

    return types.float64(types.int64), codegen


@internal
def rbf_row32_into(x, xx, ZT, zz, gamma, diag, out, work):
    """``out[t] = float32(K(x, z_t))`` for the Gaussian kernel ``exp(-gamma ||x - z_t||^2)``, a
    float32 ``out``: bitwise the float32 rounding of the row of :func:`kernel_row_into` (code
    ``KERNEL_RBF``, ``kpar[0] = gamma``), computed with the same operations entry by entry -- the
    squared distances of :func:`_sqdist_block`, clipped at 0 (exactly 0 at column ``diag >= 0``),
    and the exponential of :func:`exp_nonpos` -- fused in one pass per block of columns, without a
    float64 row. ``work`` is float64 scratch of length at least ``m``."""
    m = ZT.shape[1]
    for lo in range(0, m, ROW_BLOCK):
        hi = min(m, lo + ROW_BLOCK)
        d = work[lo:hi]
        _sqdist_block(d, x, xx, ZT, zz[lo:hi], lo, hi)
        if lo <= diag < hi:
            d[diag - lo] = 0.0
        ob = out[lo:hi]
        for t in range(hi - lo):
            xt = -gamma * max(d[t], 0.0)
            p, kd = _exp_reduced(max(xt, -708.0))
            e = p * _bits_f64(_f64_bits(kd) << 52)  # 2^n from the low bits of kd, as exp_nonpos
            ob[t] = np.float32(e if xt > -708.0 else 0.0)


@njit(cache=True, nogil=True)
def kernel_cross(code, X, Z, kpar):
    """The matrix ``K(X, Z)`` row by row with :func:`kernel_row_into` -- the arithmetic of the
    SVM solvers' training rows, so that decision values at training points reproduce them."""
    n, m = X.shape[0], Z.shape[0]
    ZT = np.ascontiguousarray(Z.T)
    zz = sq_norms(Z)
    xx = sq_norms(X)
    K = np.empty((n, m))
    work = np.empty((3, m))
    for i in range(n):
        kernel_row_into(code, X[i], xx[i], ZT, zz, kpar, -1, K[i], work)
    return K


#: rows per block of :func:`gram_symmetric`: each block computes its rows from its first row's
#: column on, so the work above the diagonal is ``n * GRAM_BLOCK / 2`` entries in all
GRAM_BLOCK = 64


@njit(cache=True, nogil=True)
def _gram_sym_into(code, X, kpar, K):
    """Fill ``K`` (n, n) with ``K(x_i, x_j)``: each block of rows computed from its diagonal on
    by :func:`kernel_row_into`, then copied into its rows and mirrored into the rows below."""
    n = X.shape[0]
    xx = sq_norms(X)
    XT = np.ascontiguousarray(X.T)
    for r0 in range(0, n, GRAM_BLOCK):
        r1 = min(n, r0 + GRAM_BLOCK)
        m = n - r0
        ZT = np.ascontiguousarray(XT[:, r0:])
        zz = np.ascontiguousarray(xx[r0:])
        work = np.empty((3, m))
        blk = np.empty((r1 - r0, m))
        for i in range(r0, r1):
            kernel_row_into(code, X[i], xx[i], ZT, zz, kpar, i - r0, blk[i - r0], work)
        for i in range(r0, r1):
            src = blk[i - r0]
            Ki = K[i]
            for t in range(i, n):
                Ki[t] = src[t - r0]
        for j in range(r0 + 1, n):
            Kj = K[j]
            for i in range(r0, min(j, r1)):
                Kj[i] = blk[i - r0, j - r0]
    return K


def gram_symmetric(code, X, kpar, dtype=np.float64):
    """The training kernel matrix ``K(x_i, x_j)`` (n, n) from its upper triangle (about half the
    kernel evaluations of a row-by-row build).

    Entries are those of :func:`kernel_row_into` (the solvers' row arithmetic, exactly symmetric:
    the squared distance sums the same products in the same order either way), so the matrix is
    bitwise the one built row by row; with ``dtype=np.float32`` each entry is rounded once from
    its float64 value. The matrix is allocated by numpy, which asks the operating system for
    transparent huge pages on large arrays: fewer page faults while it is filled and fewer TLB
    misses when a solver reads its rows in place (measured; benchmarks/log.csv).
    """
    if code not in (KERNEL_LINEAR, KERNEL_RBF, KERNEL_POLY, KERNEL_COMPACT):
        raise ValueError(f"gram_symmetric needs a numba kernel code; got {code!r}")
    X = np.ascontiguousarray(X, dtype=np.float64)
    n = X.shape[0]
    K = np.empty((n, n), dtype=np.float32 if np.dtype(dtype) == np.float32 else np.float64)
    return _gram_sym_into(int(code), X, np.ascontiguousarray(kpar, dtype=np.float64), K)


@dataclass
class Kernel:
    """A resolved kernel: a numba code with its parameter vector, or a Python callable."""

    name: str
    code: int
    kpar: np.ndarray = field(default_factory=lambda: np.zeros(5))
    func: Callable | None = None

    @property
    def sigma(self) -> float | None:
        if self.code in (KERNEL_RBF, KERNEL_COMPACT) and self.kpar[0] > 0:
            return 1.0 / math.sqrt(self.kpar[0])
        return None

    def __call__(self, X: np.ndarray, Z: np.ndarray | None = None) -> np.ndarray:
        """The kernel matrix K(X, Z) (Z defaults to X)."""
        X = np.ascontiguousarray(X, dtype=np.float64)
        Z = X if Z is None else np.ascontiguousarray(Z, dtype=np.float64)
        if self.code == KERNEL_CALLABLE:
            K = np.asarray(self.func(X, Z), dtype=np.float64)
            if K.shape != (X.shape[0], Z.shape[0]):
                raise ValueError(f"kernel callable returned shape {K.shape}, expected {(X.shape[0], Z.shape[0])}")
            return K
        # every kernel is built in the one (n, m) array it returns: memory 8 n m bytes
        if self.code == KERNEL_LINEAR:
            return X @ Z.T
        if self.code == KERNEL_POLY:
            K = X @ Z.T
            K *= self.kpar[0]
            K += self.kpar[1]
            np.power(K, self.kpar[2], out=K)
            return K
        K = _sqdist(X, Z)
        if Z is X:
            np.fill_diagonal(K, 0.0)
        if self.code == KERNEL_COMPACT:
            r = np.sqrt(K)
            r /= -self.kpar[3]
            r += 1.0
            np.maximum(r, 0.0, out=r)
            np.power(r, self.kpar[4], out=r)
            K *= -self.kpar[0]
            np.exp(K, out=K)
            K *= r
            return K
        K *= -self.kpar[0]
        np.exp(K, out=K)
        return K

    def describe(self) -> str:
        if self.code == KERNEL_RBF:
            return f"rbf(sigma={self.sigma:.4g})"
        if self.code == KERNEL_POLY:
            return f"poly(degree={self.kpar[2]:g}, gamma={self.kpar[0]:.4g}, coef0={self.kpar[1]:g})"
        if self.code == KERNEL_COMPACT:
            return f"compact(gamma={self.kpar[0]:.4g}, D={self.kpar[3]:.4g}, nu={self.kpar[4]:g})"
        return self.name


def make_kernel(
    kernel="rbf",
    X=None,
    y=None,
    *,
    sigma=None,
    gamma=None,
    degree=3,
    coef0=1.0,
    width="mean_all",
    gamma_k=None,
    D=None,
    nu=None,
) -> Kernel:
    """Resolve user kernel arguments into a :class:`Kernel`.

    Parameters
    ----------
    kernel : {"linear", "rbf", "poly", "compact"} or callable ``k(X, Z) -> matrix``
    X, y : training inputs (and +-1 labels), used only by the width heuristics.
    sigma : Gaussian width for ``exp(-||x-x'||^2 / sigma^2)`` (the papers' convention).
    gamma : libsvm's ``exp(-gamma ||x-x'||^2)``, a number or a named heuristic of
        :data:`WIDTHS` (``"scale"``, ``"auto"``, ``"median"``, ``"mean"``); give ``sigma`` or
        ``gamma``, not both.
    width : the named heuristic used when neither is given (the caller's default).
    gamma_k : [RH]'s normalised width, ``gamma = gamma_k / M`` with M features.
    D, nu : compact-kernel truncation and power; defaults ``D = sqrt(M / gamma_k)``, ``nu = (M+1)/2``.
    """
    if callable(kernel):
        return Kernel(name=getattr(kernel, "__name__", "callable"), code=KERNEL_CALLABLE, func=kernel)
    if not isinstance(kernel, str) or kernel.lower() not in _KERNEL_NAMES:
        raise ValueError(f"kernel must be one of {sorted(set(_KERNEL_NAMES))} or a callable; got {kernel!r}")
    code = _KERNEL_NAMES[kernel.lower()]
    kpar = np.zeros(5)
    given = sum(v is not None for v in (sigma, gamma, gamma_k))
    if given > 1:
        raise ValueError("give at most one of sigma, gamma and gamma_k")
    M = None if X is None else np.asarray(X).shape[1]
    if gamma_k is not None:
        if M is None:
            raise ValueError("gamma_k needs the training X to know the number of features M")
        gamma = float(gamma_k) / M
    if sigma is not None:
        if not (np.isfinite(sigma) and sigma > 0):
            raise ValueError(f"sigma must be a positive finite number; got {sigma!r}")
        gamma = 1.0 / float(sigma) ** 2
    if code in (KERNEL_RBF, KERNEL_COMPACT) and gamma is None:
        gamma = width
    if gamma is not None:
        if code in (KERNEL_RBF, KERNEL_COMPACT, KERNEL_POLY):
            gamma = resolve_gamma(gamma, X, y)
        elif not isinstance(gamma, str):
            gamma = resolve_gamma(gamma)
    if code == KERNEL_POLY:
        kpar[0] = 1.0 if gamma is None else gamma
        kpar[1] = float(coef0)
        kpar[2] = float(degree)
    elif code in (KERNEL_RBF, KERNEL_COMPACT):
        kpar[0] = gamma
    if code == KERNEL_COMPACT:
        Mf = float(M if M is not None else 1)
        kpar[3] = float(D) if D is not None else math.sqrt(1.0 / gamma)  # sqrt(M / gamma_k)
        kpar[4] = float(nu) if nu is not None else (Mf + 1.0) / 2.0
    return Kernel(name=kernel.lower(), code=code, kpar=kpar)
