"""The state of the coordinate-descent solvers, as named tuples.

The jitted solvers of :mod:`cohstats.solvers.cd` take their inputs and buffers as a few
``typing.NamedTuple`` values (numba compiles them as heterogeneous tuples whose fields are read
by name) instead of long positional argument lists, so that two arguments cannot be swapped
silently. Every hot function reads the fields it needs into locals once, at its top.

Shapes use ``n`` rows, ``p`` coordinates (predictors, or training points for kernel
expansions) and ``G`` coefficient rows per coordinate (1 for binary problems; K for the
multicategory coherence loss of [ZJLY]; K - 1 for the angle-based LUM).

* :class:`Data` -- the prepared design, responses and weights (read only);
* :class:`Loss` -- the loss code of :mod:`cohstats.losses.scalar`, its parameters and
  curvature constants (read only);
* :class:`Penalty` -- the elastic-net penalty at one ``lambda`` (read only);
* :class:`Control` -- update mode and stopping rule of one solve (read only);
* :class:`Work` -- the coefficients, fits and work buffers, updated in place;
* :class:`NewtonWork` -- the extra buffers of the grouped proximal-Newton passes;
* :class:`PathSpec` -- the ``lambda`` sequence and the stopping rules of a path;
* :class:`PathRecord` -- what the path driver records at every ``lambda``.

The path driver's Python entry point returns :class:`cohstats.solvers.result.SolverResult`.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from cohstats._numba_cache import njit

from cohstats.losses.scalar import LOSS_ALUM, LOSS_LUM, LOSS_MCOH, loss_curv_bound

#: Problem kinds. The jitted solvers take the kind as their first argument, a tuple of zeros
#: whose *length* names the kind. numba rewrites ``len(kind)`` of a tuple argument as a
#: constant before typing and prunes the branches written ``if len(kind) == KIND_MCOH:`` (and the
#: like) for the other kinds, so each kind compiles into its own specialisation of the one
#: driver, holding only its own code: a binary fit compiles no grouped passes, and so on.
KIND_BIN = 1  #: binary problem with a scalar margin loss (linear or kernel expansion)
KIND_LUM = 2  #: binary problem with a LUM loss of ``c > 10``: continuation in ``c`` and the joint
#: Newton steps of the hard LUM (a softer LUM is a plain binary problem)
KIND_MCOH = 3  #: grouped problem of the multicategory coherence loss ([ZJLY])
KIND_ALUM = 4  #: grouped problem of the angle-based LUM (Zhang & Liu 2014)


#: LUMs with ``c`` above this are solved with continuation in ``c`` (and, from ``c = 100``, the
#: hard LUM's joint steps): :data:`KIND_LUM`
LUM_KIND_C = 10.0


def kind_of(code, p2=0.0):
    """The problem kind of a loss code of :mod:`cohstats.losses.scalar` with second parameter
    ``p2``, as the tuple the jitted solvers take (its length is :data:`KIND_BIN`,
    :data:`KIND_LUM`, :data:`KIND_MCOH` or :data:`KIND_ALUM`)."""
    code = int(code)
    if code == LOSS_MCOH:
        n = KIND_MCOH
    elif code == LOSS_ALUM:
        n = KIND_ALUM
    elif code == LOSS_LUM and float(p2) > LUM_KIND_C:
        n = KIND_LUM
    else:
        n = KIND_BIN
    return (0,) * n


#: coordinate-update modes (see :mod:`cohstats.solvers.cd.path`)
MODE_IRLS = 0
MODE_MM = 1
MODE_EXACT = 2
#: The jitted solvers take the update mode as a tuple too (:func:`upd_of`), of length
#: ``mode + 1``, so that a fit compiles the updates of its own mode only.
UPD_IRLS = MODE_IRLS + 1
UPD_MM = MODE_MM + 1
UPD_EXACT = MODE_EXACT + 1


def upd_of(mode):
    """The update mode ``MODE_*`` as the tuple the jitted solvers take (length ``mode + 1``)."""
    return (0,) * (int(mode) + 1)


#: placeholder class codes of binary problems, penalty matrix and row shifts of identity-penalty
#: problems
_NO_YC = np.zeros(1, dtype=np.int64)
_EMPTY_P = np.zeros((1, 1))
_NO_SHIFT = np.zeros(1)
_NO_OFFSET = np.zeros(1)


class Data(NamedTuple):
    """The prepared problem data (never modified by the solvers).

    Attributes
    ----------
    Xt : (p, n) float64, C-contiguous
        One row per coordinate: the standardised column of the design, or the (centred) kernel
        column of a training point.
    y : (n,) float64
        Labels coded -1/+1 for binary problems (zeros for grouped problems).
    yc : (n,) int64
        Class codes 0..K-1 for grouped problems (a length-1 placeholder for binary problems).
    w : (n,) float64
        Observation weights normalised to mean 1.
    sw : float
        Their sum.
    xv : (p,) float64
        Weighted mean squares ``(1/n) sum_i w_i Xt[j, i]^2`` of the rows.
    excl : (p,) bool
        Coordinates kept at zero (constant columns).
    intercept : bool
        Whether an unpenalised intercept (one per coefficient row) is fitted.
    off : (n,) float64
        A known offset added to the fits of a binary problem (``f = offset + b + x'beta``,
        as R's ``offset()``); a length-1 placeholder when there is none.
    """

    Xt: np.ndarray
    y: np.ndarray
    yc: np.ndarray
    w: np.ndarray
    sw: float
    xv: np.ndarray
    excl: np.ndarray
    intercept: bool
    off: np.ndarray


class Loss(NamedTuple):
    """The loss and its curvature constants.

    Attributes
    ----------
    code : int
        Loss code of :mod:`cohstats.losses.scalar`.
    p1, p2 : float
        Its parameters (rho, u of the C-/V-losses; delta of the huberized hinge; a, c of LUM;
        the temperature T and the loss scale s of the multicategory coherence loss).
    Lb : float
        Curvature bound used by the majorise-minimise steps (``inf`` when none exists).
    floor_c : float
        Floor of the IRLS curvatures (``1e-6`` times the bound of the loss when finite).
    u : float
        The margin of the multicategory coherence loss (1 for [ZJLY]'s loss; 0 with ``T = 1``
        and ``s = 1`` is the multinomial logistic loss); unused by the other losses.
    """

    code: int
    p1: float
    p2: float
    Lb: float
    floor_c: float
    u: float


class Penalty(NamedTuple):
    """The elastic-net penalty ``sum_j pf_j (l2/2 ||B_j||_P^2 + l1 ||B_j||_2)`` at one ``lambda``.

    Attributes
    ----------
    pf : (p,) float64
        Penalty factors (0 = unpenalised coordinate).
    l1 : float
        ``lambda * alpha``.
    l2 : float
        ``lambda * (1 - alpha)``.
    use_P : bool
        The quadratic part uses a matrix (a kernel matrix) instead of the identity.
    P : (p, p) float64
        That matrix up to a shift of each row: the matrix is ``P[j, i] + Pshift[j]`` (a (1, 1)
        placeholder when ``use_P`` is False). Kernel problems pass their centred design here
        (``Xt[j, i] = K[i, j] - m_j``, ``K`` symmetric) with ``Pshift = m``, so that one n x n
        array serves as both the design and the penalty matrix.
    Pshift : (p,) float64
        The row shifts (zeros when the matrix is ``P`` itself; a length-1 placeholder when
        ``use_P`` is False).
    """

    pf: np.ndarray
    l1: float
    l2: float
    use_P: bool
    P: np.ndarray
    Pshift: np.ndarray


class Control(NamedTuple):
    """How one penalised problem is solved (the update mode is the solvers' ``upd`` argument).

    Attributes
    ----------
    thr : float
        Convergence threshold on the curvature-weighted coordinate steps (absolute; the KKT gate
        is its square root).
    max_pass : int
        Largest number of coordinate passes.
    """

    thr: float
    max_pass: int


class Work(NamedTuple):
    """The solution and the work buffers of the solvers (updated in place).

    Attributes
    ----------
    B : (G, p) float64
        Coefficients, one row per margin (binary problems use row 0).
    b : (G,) float64
        Intercepts.
    F : (G, n) float64
        Fits ``b + B Xt`` at the training rows.
    PB : (G, p) or (G, 1) float64
        ``B P`` when the penalty has a matrix (its products with the coefficients), else unused.
    W : (n,) float64
        IRLS curvatures of the binary problems.
    R : (G, n) float64
        Negative loss gradients in the fits.
    E : (G, n) float64
        Working residuals of the current quadratic model.
    Gst : (G, p) float64
        Smooth parts of the KKT residuals (used by the strong rule and the KKT checks).
    idxS, idxA : (p,) int64
        Index buffers of the strong and active sets.
    ones : (n,) float64
        A column of ones (the intercept's design column).
    """

    B: np.ndarray
    b: np.ndarray
    F: np.ndarray
    PB: np.ndarray
    W: np.ndarray
    R: np.ndarray
    E: np.ndarray
    Gst: np.ndarray
    idxS: np.ndarray
    idxA: np.ndarray
    ones: np.ndarray


class NewtonWork(NamedTuple):
    """Buffers of the grouped proximal-Newton passes (:func:`cohstats.solvers.cd.group_newton._gpass_newton`).

    Attributes
    ----------
    Pi : (G, n) float64
        Soft class weights of every row at the start of the outer iteration.
    B_old, b_old, F_old, PB_old
        The saved state (shapes as in :class:`Work`) that rising steps are halved back to.
    stamp : (p,) int64
        Outer iteration at which the curvature of each block was last computed.
    Uc : (p, G, G) float64
        Eigenvectors of the blocks' profiled curvatures.
    Lc : (p, G) float64
        Their (clipped) eigenvalues, ascending.
    Cc : (p, G, G) float64
        Cross-curvatures of the blocks with the intercepts.
    A0 : (2 G, G) float64
        Inverse of the regularised intercept curvature (first G rows) and that curvature.
    """

    Pi: np.ndarray
    B_old: np.ndarray
    b_old: np.ndarray
    F_old: np.ndarray
    PB_old: np.ndarray
    stamp: np.ndarray
    Uc: np.ndarray
    Lc: np.ndarray
    Cc: np.ndarray
    A0: np.ndarray


class PathSpec(NamedTuple):
    """The path: ``lambda`` sequence and the stopping rules at each value.

    Attributes
    ----------
    lambdas : (nlam,) float64
        Penalties in the order solved (warm starts follow it).
    alpha : float
        l1 share of the elastic net.
    mode : int
        Coordinate-update mode.
    tol : float
        Convergence threshold relative to the intercept-only objective.
    max_iter : int
        Largest number of coordinate passes per ``lambda``.
    exact_kkt : bool
        Compute every coordinate's gradient after each ``lambda`` to report the KKT violation.
    cont : (ncont,) float64
        Values of the second loss parameter solved first at every ``lambda`` (continuation).
    stop : (1,) int64
        Polled before every ``lambda``: the path stops when another thread sets it to nonzero
        (Ctrl-C on a fit; :func:`cohstats.validation.stop_flag`). The values not reached are
        recorded as zero and not converged.
    """

    lambdas: np.ndarray
    alpha: float
    mode: int
    tol: float
    max_iter: int
    exact_kkt: bool
    cont: np.ndarray
    stop: np.ndarray = np.zeros(1, dtype=np.int64)


class PathRecord(NamedTuple):
    """What the jitted path driver records at every ``lambda`` (on the prepared scale).

    Attributes
    ----------
    intercept : (nlam, G) float64
    coef : (nlam, G, p) float64
    n_iter : (nlam,) int64
        Coordinate passes.
    converged : (nlam,) bool
    objective : (nlam,) float64
    kkt : (nlam,) float64
        Largest KKT violation (NaN without ``exact_kkt``).
    null_objective : float
        Objective of the intercept-only (plus unpenalised coordinates) fit.
    grad_max : float
        ``max_j ||grad_j|| / pf_j`` over the penalised coordinates at that fit (``lambda_max``
        times ``alpha``); -1 when no coordinate is penalised.
    """

    intercept: np.ndarray
    coef: np.ndarray
    n_iter: np.ndarray
    converged: np.ndarray
    objective: np.ndarray
    kkt: np.ndarray
    null_objective: float
    grad_max: float


# --------------------------------------------------------------------------- constructors
@njit(cache=True, nogil=True)
def _wsum(w):
    s = 0.0
    for i in range(w.shape[0]):
        s += w[i]
    return s


def make_data(Xt, y, w, xv, excl, intercept, yc=None, offset=None):
    """:class:`Data` from prepared arrays (``yc`` None for binary problems; ``offset`` None or
    the (n,) offset of a binary problem)."""
    if offset is None:
        off = _NO_OFFSET
    else:
        off = np.ascontiguousarray(offset, dtype=np.float64).ravel()
        if off.shape[0] != w.shape[0] or not np.all(np.isfinite(off)):
            raise ValueError(f"offset must hold {w.shape[0]} finite values; got shape {np.shape(offset)}")
    return Data(
        Xt,
        y,
        _NO_YC if yc is None else yc,
        w,
        float(_wsum(w)),
        xv,
        excl,
        bool(intercept),
        off,
    )


def floor_of(Lb):
    """Floor of the IRLS curvatures for a loss with curvature bound ``Lb``."""
    return 1e-6 * Lb if (Lb < math.inf and Lb > 0.0) else 1e-6


def make_loss(code, p1, p2, u=1.0):
    """:class:`Loss` with the curvature bound and floor of the loss (``u``: the margin of the
    multicategory coherence loss)."""
    Lb = float(loss_curv_bound(int(code), float(p1), float(p2)))
    return Loss(int(code), float(p1), float(p2), Lb, floor_of(Lb), float(u))


def make_penalty(pf, P=None, Pshift=None):
    """:class:`Penalty` without ``lambda`` (l1 = l2 = 0); ``P`` a penalty matrix or None, with
    the row shifts ``Pshift`` (the matrix is ``P[j, i] + Pshift[j]``; None: no shift)."""
    if P is None:
        return Penalty(pf, 0.0, 0.0, False, _EMPTY_P, _NO_SHIFT)
    sh = np.zeros(P.shape[0]) if Pshift is None else np.ascontiguousarray(Pshift, dtype=np.float64)
    return Penalty(pf, 0.0, 0.0, True, P, sh)
