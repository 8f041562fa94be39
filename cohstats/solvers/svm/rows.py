"""Kernel rows for the SVM-dual solvers: one row provider with one LRU cache.

:mod:`.smo`, :mod:`.smo_lambda` and :mod:`.svmpath` read the training kernel matrix one row at a
time through a :class:`KernelRows` provider:

* rows are computed with the arithmetic of :func:`cohstats.kernels.kernel_row_into` (norm
  expansion of the squared distance, exactly 0 on the diagonal, vectorised exponential), which
  :func:`cohstats.kernels.kernel_cross` uses for prediction; a provider's numba type carries its
  kernel code, so a solver compiles the row code of its kernel only;
* the cache keeps ``n_slots`` rows (float64, or float32 for the lambda-SVM's default
  tolerance: the float64 values rounded once; Gaussian rows are then computed and rounded in
  one fused pass by :func:`cohstats.kernels.rbf_row32_into`, bitwise the same values) and evicts
  the least recently used row; its size follows libsvm's ``cache_size``
  in megabytes (:func:`n_cache_rows`), so memory is ``O(n_slots n)``, never ``O(n^2)`` unless
  the cache is that large;
* a precomputed kernel matrix (code ``-1``) can serve as a cache that holds every row
  (:func:`rows_provider` with ``in_place=True``): rows are then views into it, no copy;
* cached rows can be kept in a solver's *position* order (``perm``, permuted at shrink events by
  :func:`permute_rows`), as the lambda-SVM solver needs.

The provider is a NamedTuple of arrays, passed to the numba solvers as one argument.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import types

from cohstats._numba_cache import njit
from numba.core.extending import overload

from cohstats._numba_cache import internal, internal_jit_options
from cohstats.kernels import (
    KERNEL_CALLABLE,
    KERNEL_LINEAR,
    KERNEL_POLY,
    KERNEL_RBF,
    dist_row_into,
    dot_row_into,
    kernel_pair,
    kernel_row_into,
    rbf_row32_into,
    sq_norms,
)


class KernelRows(NamedTuple):
    """Training kernel rows ``K(x_i, x_.)`` with an LRU cache (build with :func:`rows_provider`).

    ``rows[s]`` is the row stored in slot ``s``; ``slot_of[i]`` the slot of row ``i`` (-1 when
    not cached) and ``row_of[s]`` the inverse; ``link`` a doubly linked list over the slots
    (``link[0]`` previous, ``link[1]`` next; node ``n_slots`` is the sentinel, most recently used
    first); ``state = [slots used, rows computed, hits, perm is the identity]``; cached rows hold
    ``row[q] = K(x_i, x_perm[q])``; ``work`` and ``buf`` are scratch for one row.
    """

    code: int
    X: np.ndarray
    XT: np.ndarray
    xx: np.ndarray
    kpar: np.ndarray
    Kpre: np.ndarray
    rows: np.ndarray
    slot_of: np.ndarray
    row_of: np.ndarray
    link: np.ndarray
    state: np.ndarray
    perm: np.ndarray
    work: np.ndarray
    buf: np.ndarray
    kind: np.ndarray


def n_cache_rows(n: int, cache_size: float, itemsize: int = 8) -> int:
    """Number of kernel rows of length ``n`` (``itemsize`` bytes per value) that fit in
    ``cache_size`` megabytes, as libsvm's ``cache_size``; at least 2 and at most ``n``."""
    if isinstance(cache_size, bool) or not (np.isfinite(cache_size) and cache_size > 0):
        raise ValueError(f"cache_size must be a positive number of megabytes; got {cache_size!r}")
    rows = int(cache_size * 2.0**20 // (itemsize * max(n, 1)))
    return int(min(max(rows, 2), max(n, 2)))


_EMPTY2 = np.empty((1, 1))


@njit(cache=True, nogil=True)
def _empty64(n_slots, n):
    return np.empty((n_slots, n))


@njit(cache=True, nogil=True)
def _empty32(n_slots, n):
    return np.empty((n_slots, n), dtype=np.float32)


def _empty_rows(n_slots, n, f32, huge_pages=False):
    """The cache's row storage: allocated by numba's allocator, or with ``huge_pages`` by numpy
    (which asks the kernel for transparent huge pages on arrays of 4 MB and more). Which is
    faster depends on the solver's access pattern: the lambda-SVM's float32 cache, filled
    through a scratch row, gains with huge pages; SMO's float64 rows, computed in place, lose
    (measured; benchmarks/log.csv)."""
    if huge_pages:
        return np.empty((n_slots, n), dtype=np.float32 if f32 else np.float64)
    return _empty32(n_slots, n) if f32 else _empty64(n_slots, n)


def rows_provider(
    code: int, X, kpar, Kpre=None, *, n_slots: int, dtype=np.float64, in_place: bool = False, huge_pages: bool = False
) -> KernelRows:
    """A :class:`KernelRows` provider for the training inputs ``X`` (n, p).

    Parameters
    ----------
    code, kpar : kernel code and parameter vector of :mod:`cohstats.kernels`; ``code=-1`` reads
        the precomputed matrix ``Kpre`` (n, n) (``X`` may then be None).
    n_slots : rows the cache holds (:func:`n_cache_rows`).
    dtype : float64, or float32 to store the cached rows in single precision.
    in_place : with ``code=-1``, use ``Kpre`` itself as a cache holding every row (rows are views,
        nothing is copied; ``n_slots`` and ``dtype`` are ignored; a float32 ``Kpre`` stays
        float32). The provider must then not be permuted.
    huge_pages : allocate the cache with numpy (transparent huge pages) instead of numba.
    """
    kpar = np.zeros(5) if kpar is None else np.ascontiguousarray(kpar, dtype=np.float64)
    if code == KERNEL_CALLABLE:
        keep32 = in_place and isinstance(Kpre, np.ndarray) and Kpre.dtype == np.float32
        Kpre = np.ascontiguousarray(Kpre, dtype=np.float32 if keep32 else np.float64)
        n = Kpre.shape[0]
        X = np.zeros((n, 1))
    else:
        X = np.ascontiguousarray(X, dtype=np.float64)
        n = X.shape[0]
        Kpre = _EMPTY2
    XT = np.ascontiguousarray(X.T)
    xx = sq_norms(X)
    if in_place and code == KERNEL_CALLABLE:
        n_slots = n
        rows = Kpre
        slot_of = np.arange(n, dtype=np.int64)
        row_of = np.arange(n, dtype=np.int64)
        link = np.empty((2, n + 1), dtype=np.int64)
        order = np.arange(n + 1)
        link[0] = np.roll(order, 1)  # a ring over the sentinel n and the slots 0..n-1
        link[1] = np.roll(order, -1)
        state = np.array([n, 0, 0, 1], dtype=np.int64)
    else:
        n_slots = int(max(n_slots, 1))
        rows = _empty_rows(n_slots, n, np.dtype(dtype) == np.float32, huge_pages)
        slot_of = np.full(n, -1, dtype=np.int64)
        row_of = np.full(n_slots, -1, dtype=np.int64)
        link = np.empty((2, n_slots + 1), dtype=np.int64)
        link[:, n_slots] = n_slots
        state = np.array([0, 0, 0, 1], dtype=np.int64)
    return KernelRows(
        int(code),
        X,
        XT,
        xx,
        kpar,
        Kpre,
        rows,
        slot_of,
        row_of,
        link,
        state,
        np.arange(n, dtype=np.int64),
        np.empty((3, n)),
        np.empty(n),
        np.empty((0,) * (int(code) + 2)),
    )


@internal
def _lru_unlink(link, s):
    p = link[0, s]
    q = link[1, s]
    link[1, p] = q
    link[0, q] = p


@internal
def _lru_push_front(link, s, sentinel):
    first = link[1, sentinel]
    link[1, sentinel] = s
    link[0, s] = sentinel
    link[1, s] = first
    link[0, first] = s


@internal
def _fill_pre(kr, i, out):
    """``out[t] = K(x_i, x_t)`` from the precomputed matrix (a loop: a slice assignment compiles a
    shape check)."""
    Ki = kr.Kpre[i]
    for t in range(out.shape[0]):
        out[t] = Ki[t]


@internal
def _fill_dot(kr, i, out):
    """``out[t] = K(x_i, x_t)`` for the linear and polynomial kernels."""
    dot_row_into(kr.code, kr.X[i], kr.XT, kr.kpar, out, kr.work)


@internal
def _fill_dist(kr, i, out):
    """``out[t] = K(x_i, x_t)`` for the Gaussian and compact kernels (exactly 1 at ``t = i``)."""
    dist_row_into(kr.code, kr.X[i], kr.xx[i], kr.XT, kr.xx, kr.kpar, i, out, kr.work)


def _compute_row(kr, i, row):
    """Write row ``i``, ``row[q] = K(x_i, x_perm[q])``, into the cache slot ``row`` (jitted code
    only: the implementation is chosen by :func:`_ol_compute_row` from the provider's type)."""
    raise NotImplementedError("_compute_row is called from jitted code only")


@overload(_compute_row, jit_options=internal_jit_options())
def _ol_compute_row(kr, i, row):
    """The implementation of :func:`_compute_row` for the provider's kernel code (the ``kind``
    field's dimensions less 2) and row dtype: a solver compiles the row code of its kernel only.

    float64 rows in the original order are computed in place; otherwise into the float64
    scratch ``buf`` and copied (float32 rows are rounded once, from the float64 values) in
    position order. Gaussian float32 rows are rounded entry by entry as computed by
    :func:`cohstats.kernels.rbf_row32_into` (bitwise the rounding of the float64 row), into the
    slot or, in position order, through float32 scratch."""
    code = kr.types[kr.fields.index("kind")].ndim - 2
    f32 = row.dtype == types.float32
    if code == KERNEL_RBF and f32:

        def impl_rbf32(kr, i, row):
            if kr.state[3]:
                rbf_row32_into(kr.X[i], kr.xx[i], kr.XT, kr.xx, kr.kpar[0], i, row, kr.work[0])
            else:
                e32 = kr.buf.view(np.float32)
                rbf_row32_into(kr.X[i], kr.xx[i], kr.XT, kr.xx, kr.kpar[0], i, e32, kr.work[0])
                perm = kr.perm
                for q in range(row.shape[0]):
                    row[q] = e32[perm[q]]

        return impl_rbf32
    if code == KERNEL_CALLABLE:
        fill = _fill_pre
    elif code == KERNEL_LINEAR or code == KERNEL_POLY:
        fill = _fill_dot
    else:
        fill = _fill_dist

    def impl(kr, i, row):
        if kr.state[3] and not f32:
            fill(kr, i, row)
            return
        e = kr.buf
        fill(kr, i, e)
        if kr.state[3]:
            for q in range(row.shape[0]):
                row[q] = e[q]
        else:
            perm = kr.perm
            for q in range(row.shape[0]):
                row[q] = e[perm[q]]

    return impl


@internal
def _miss(kr, i):
    """Compute row ``i`` into the free slot, else the least recently used one; returns the slot."""
    state = kr.state
    link = kr.link
    sentinel = kr.rows.shape[0]
    state[1] += 1
    if state[0] < sentinel:
        s = state[0]
        state[0] += 1
    else:
        s = link[0, sentinel]  # least recently used
        _lru_unlink(link, s)
        kr.slot_of[kr.row_of[s]] = -1
    _compute_row(kr, i, kr.rows[s])
    kr.row_of[s] = i
    kr.slot_of[i] = s
    _lru_push_front(link, s, sentinel)
    return s


@njit(cache=True, nogil=True, inline="always")
def row_slot(kr, i):
    """The cache slot holding row ``K(x_i, .)`` (``i`` an original index), computing it on a miss.

    Inlined into the solvers, so that a hit (the common case) costs a few integer operations and
    no call with the whole provider as argument."""
    s = kr.slot_of[i]
    if s >= 0:
        kr.state[2] += 1
        link = kr.link
        _lru_unlink(link, s)
        _lru_push_front(link, s, kr.rows.shape[0])
        return s
    return _miss(kr, np.int64(i))  # typed int64: no second compilation for a literal index


@njit(cache=True, nogil=True, inline="always")
def get_row(kr, i):
    """Kernel row ``K(x_i, .)`` (a view into the cache: valid until ``n_slots - 1`` other rows
    have been requested since)."""
    return kr.rows[row_slot(kr, i)]


@internal
def permute_rows(kr, swa, swb, nsw):
    """Replay the position swaps ``(swa[k], swb[k])``, ``k < nsw``, on every cached row (O(swaps)
    per row instead of a gather of n), in order. The caller has applied the same swaps to
    ``kr.perm``. Four rows take each swap in turn (independent rows interleaved: the scattered
    loads and stores of one row no longer wait for each other)."""
    if nsw > 0:
        kr.state[3] = 0
    rows = kr.rows
    used = np.empty(rows.shape[0], dtype=np.int64)
    m = 0
    for s in range(rows.shape[0]):
        if kr.row_of[s] >= 0:
            used[m] = s
            m += 1
    u = 0
    while u + 4 <= m:
        r0 = rows[used[u]]
        r1 = rows[used[u + 1]]
        r2 = rows[used[u + 2]]
        r3 = rows[used[u + 3]]
        for k in range(nsw):
            a = swa[k]
            b = swb[k]
            t0 = r0[a]
            r0[a] = r0[b]
            r0[b] = t0
            t1 = r1[a]
            r1[a] = r1[b]
            r1[b] = t1
            t2 = r2[a]
            r2[a] = r2[b]
            r2[b] = t2
            t3 = r3[a]
            r3[a] = r3[b]
            r3[b] = t3
        u += 4
    while u < m:
        row = rows[used[u]]
        for k in range(nsw):
            a = swa[k]
            b = swb[k]
            t = row[a]
            row[a] = row[b]
            row[b] = t
        u += 1


@njit(cache=True, nogil=True)
def kernel_diagonal(code, X, kpar, Kpre):
    """``K(x_i, x_i)`` for every training point (the diagonal of ``Kpre`` for code -1)."""
    n = X.shape[0] if code != KERNEL_CALLABLE else Kpre.shape[0]
    d = np.empty(n)
    for i in range(n):
        if code == KERNEL_CALLABLE:
            d[i] = Kpre[i, i]
        else:
            d[i] = kernel_pair(code, X[i], X[i], kpar)
    return d


@njit(cache=True, nogil=True)
def _gram_into(code, X, kpar, K):
    n = X.shape[0]
    XT = np.ascontiguousarray(X.T)
    xx = sq_norms(X)
    work = np.empty((3, n))
    buf = np.empty(n)
    for i in range(n):
        kernel_row_into(code, X[i], xx[i], XT, xx, kpar, i, buf, work)
        Ki = K[i]
        for t in range(n):
            Ki[t] = buf[t]
    return K


def gram_matrix(code, X, kpar, dtype=np.float64):
    """The whole training kernel matrix, row by row with the provider's arithmetic (its entries
    are exactly the rows a solver computes; with ``dtype=np.float32`` rounded once from them, as
    the float32 row cache stores them). Allocated by numba (see :func:`_empty_rows`)."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    n = X.shape[0]
    K = _empty_rows(n, n, np.dtype(dtype) == np.float32)
    return _gram_into(int(code), X, np.ascontiguousarray(kpar, dtype=np.float64), K)


@njit(cache=True, nogil=True)
def expansion(kr, coef, b):
    """``f_t = b + sum_i coef_i K(x_i, x_t)`` at every training point (zero ``coef`` skipped)."""
    n = kr.slot_of.shape[0]
    f = np.full(n, b)
    for i in range(n):
        if coef[i] != 0.0:
            Ki = get_row(kr, i)
            c = coef[i]
            for t in range(n):
                f[t] += c * Ki[t]
    return f
