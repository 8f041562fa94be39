"""One kernel matrix for all the fits of a cross-validation.

When a kernel fit's kernel depends on its rows only -- the fit function says so through its
``fold_kernel(design, args)`` attribute (for :func:`cohstats.clearn` and the binary
:func:`cohstats.lum`: an exact kernel expansion with ``standardize=False`` and a width that does
not look at the data; both decide this with :func:`rows_only_kernel`) -- the kernel matrix of a
fold's training rows is the block ``K[train][:, train]`` of the matrix ``K`` of all the rows,
and the held-out rows' kernel is ``K[test, train]``. :func:`cv` and :func:`tune` then compute
``K`` once (:class:`SharedKernel`) and lend it to the full-data fit and to every fold fit in
turn, for every grid point with the same kernel.

Memory stays one n x n float64 array. A fit prepares (symmetrises and centres) its kernel in
place, so each fold's block is gathered *inside* ``K``'s own buffer: the training rows are
packed, row after row, into the buffer's first ``n_train**2`` entries (the held-out rows
``K[test, :]``, 1/``nfolds`` of ``K``, are saved beside it first), the fit prepares and uses that
block as its :class:`~cohstats.solvers.cd.kernel.LentKernel`, and afterwards the centring is
undone (``+ m``) and the rows are moved back. Undoing the centring rounds: the values lent to
later fits differ from the freshly computed kernel by a few units in the last place, as the
block of a fresh full-data evaluation differs from a fresh evaluation on the fold's rows.

The protocol between the tuner and a fit function: the function has a ``fold_kernel``
attribute returning the :class:`~cohstats.kernels.Kernel` it would use (or None), accepts the
private keyword ``_gram`` (a ``LentKernel``; the function checks that it is the kernel of its
inputs with :func:`check_lent` and prepares it in place), and its fits use
``_cross_kernel = (X, K(X, training rows))`` for decision values at exactly that array ``X``
(:func:`cross_kernel`).

The lending is sequential: the shared matrix serves fits run one after another in this
process (``n_jobs`` of 1, no Dask scheduler). With parallel workers every fit computes its own
kernel, as without sharing.
"""

from __future__ import annotations

from contextlib import contextmanager

import numpy as np

from ..kernels import KERNEL_CALLABLE
from ..validation import check_kernel_args


def fold_kernel(fit_fn, design, args: dict):
    """The kernel that ``fit_fn(design subset, **args)`` would compute from its rows alone, or None."""
    plan = getattr(fit_fn, "fold_kernel", None)
    if plan is None:
        return None
    return plan(design, args)


def rows_only_kernel(design, args: dict, fn: str = "clearn"):
    """The kernel of a kernel-expansion fit ``fn(design, **args)`` when it depends on the rows only, else None.

    That is an exact kernel expansion (``kernel`` given, no ``kernel_approx``) on unstandardised
    inputs (``standardize=False``) with a width that does not look at the data: a number
    (``gamma`` or ``sigma``), ``gamma="auto"`` (``1/p``), a linear or polynomial kernel without a
    named width, or a callable. Then every fit on a subset of the rows uses the sub-matrix of one
    kernel matrix of all the rows. With ``standardize=True`` (the default) each fit scales its
    inputs by its own rows, and ``gamma="scale"``, ``"median"`` and ``"mean"`` are computed from
    them, so fits on different rows use different kernels. ``fn`` names the fit function in
    the argument checks (bad arguments give None here; the fit itself reports them).
    """
    from ..kernels import make_kernel

    kernel = args.get("kernel")
    if kernel is None or args.get("kernel_approx") is not None or args.get("standardize", True) is not False:
        return None
    if "_gram" in args:
        return None
    gamma, sigma = args.get("gamma"), args.get("sigma")
    if isinstance(gamma, str) and gamma != "auto":
        return None
    if kernel == "rbf" and gamma is None and sigma is None:  # the default width, gamma="scale"
        return None
    degree, coef0 = args.get("degree", 3), args.get("coef0", 1.0)
    try:
        check_kernel_args(kernel, gamma=gamma, sigma=sigma, degree=degree, coef0=coef0, fn=fn)
        return make_kernel(
            kernel, np.empty((0, design.p)), None, sigma=sigma, gamma=gamma, degree=degree, coef0=coef0, width="scale"
        )
    except (TypeError, ValueError):
        return None


def check_lent(gram, ker, Z, fn: str) -> None:
    """A lent kernel matrix (``_gram``) must be the matrix of ``ker`` at the fit's inputs ``Z``."""
    if gram is not None and not gram.matches(ker, Z):
        raise ValueError(f"{fn}: the lent kernel matrix (_gram) is not the kernel of these inputs")


def cross_kernel(fit, X):
    """The kernel of the rows ``X`` against ``fit``'s training rows, when a tuner lent it for
    exactly this array (``fit._cross_kernel = (X, K(X, training rows))``, matched by identity);
    else None."""
    lent = fit.__dict__.get("_cross_kernel")
    if lent is not None and lent[0] is X:
        return lent[1]
    return None


def kernel_key(ker) -> tuple:
    """Fits with equal keys use the same kernel matrix."""
    if ker.code == KERNEL_CALLABLE:
        return ("callable", id(ker.func))
    return (int(ker.code), tuple(float(v) for v in ker.kpar))


def sequential(n_jobs) -> bool:
    """Do joblib's settings run the tuner's fits one after another in this process?"""
    from joblib import effective_n_jobs
    from joblib.parallel import get_active_backend

    try:
        if "Dask" in type(get_active_backend()[0]).__name__:  # the user asked for the cluster
            return False
        return effective_n_jobs(n_jobs) == 1
    except Exception:  # pragma: no cover - a backend that cannot say
        return False


class SharedKernel:
    """The kernel matrix of all the rows of a design, lent to one fit at a time.

    Parameters
    ----------
    ker : cohstats.kernels.Kernel
    X : (n, p) inputs (the design's predictor matrix; the fits use it unscaled)
    """

    def __init__(self, ker, X):
        from ..solvers.cd.kernel import _square

        self.ker = ker
        self.X = np.ascontiguousarray(X, dtype=np.float64)
        K = np.ascontiguousarray(ker(self.X, self.X), dtype=np.float64)
        # symmetrised once, as each fit would symmetrise its own matrix: its blocks are then
        # exactly symmetric and a held-out row is also its column
        self.K = _square(K, True, ker.code != KERNEL_CALLABLE)
        self.n = self.K.shape[0]

    @contextmanager
    def lend(self):
        """The whole matrix (the full-data fit), restored afterwards."""
        from ..solvers.cd.kernel import LentKernel

        lent = LentKernel(self.K, self.ker, self.X)
        try:
            yield lent
        finally:
            if lent.m is not None:
                self.K += lent.m[:, None]

    @contextmanager
    def lend_rows(self, train, test):
        """The block ``K[train][:, train]`` packed in place at the front of the buffer.

        ``train`` and ``test`` are sorted, disjoint and cover the rows.
        """
        from ..solvers.cd.kernel import LentKernel

        K = self.K
        tr = np.asarray(train, dtype=np.intp)
        te = np.asarray(test, dtype=np.intp)
        nt = tr.shape[0]
        flat = K.reshape(-1)
        saved = K[te]  # (n_test, n): the entries the packing overwrites and the test columns
        # row r of the block goes to flat[r nt : (r+1) nt]; it is read from row tr[r] >= r,
        # which no earlier write has reached (r nt <= tr[r] n), and gathered before it is written
        for r in range(nt):
            flat[r * nt : (r + 1) * nt] = K[tr[r], tr]
        block = flat[: nt * nt].reshape(nt, nt)
        lent = LentKernel(block, self.ker, self.X[tr])
        try:
            yield lent
        finally:
            if lent.m is not None:
                block += lent.m[:, None]
            # back in reverse order: row r returns to row tr[r] >= r, above every packed row
            # still to be moved
            for r in range(nt - 1, -1, -1):
                K[tr[r], tr] = flat[r * nt : (r + 1) * nt].copy()
            K[te] = saved
            K[:, te] = saved.T
            del saved

    def cross(self, test, train):
        """``K[test][:, train]``: the held-out rows' kernel against a fold's training rows."""
        return self.K[np.ix_(np.asarray(test, dtype=np.intp), np.asarray(train, dtype=np.intp))]
