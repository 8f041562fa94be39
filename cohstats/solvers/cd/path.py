"""Pathwise coordinate descent for elastic-net penalised smooth margin losses.

One path driver (:func:`_path_core`: warm starts, sequential strong rule, KKT check of the
discarded coordinates, per-``lambda`` records; :func:`run_path` its entry point returning a
:class:`~cohstats.solvers.result.SolverResult`) serves every problem of the package's
coordinate-descent family, selected by a loss code of :mod:`cohstats.losses.scalar`:

* binary margin losses with the **linear expansion** ``f(x) = b + x'beta`` and the elastic net
  ``lambda * sum_j pf_j ((1 - alpha)/2 beta_j^2 + alpha |beta_j|)`` (:func:`cd_path`);
* binary margin losses with the **kernel expansion** ``f(x) = b + sum_j beta_j K(x_j, x)`` and
  the penalty ``lambda ((1 - alpha)/2 beta'K beta + alpha ||beta||_1)``
  (:mod:`cohstats.solvers.cd.kernel`), which differs only in the quadratic penalty matrix
  (``K`` instead of the identity);
* the multicategory coherence loss of [ZJLY] (code ``LOSS_MCOH``) with K class margins and a
  grouped penalty on the K coefficients of each coordinate, linear
  (:mod:`cohstats.solvers.cd.multi`) or kernel (:func:`cohstats.solvers.cd.kernel.cd_kernel_multi_path`);
* the multicategory LUM on angle-based margins (code ``LOSS_ALUM``): ``f`` in ``R^{K-1}``,
  margins ``u_k = <f, W_k>`` at the simplex vertices ``W`` of :mod:`cohstats.losses.angle`, the
  pairwise-comparison loss ``(1/(K-1)) sum_{j != y} V_{a,c}(kappa (u_y - u_j))`` (T. Zhang 2004)
  or the angle-based ``V_{a,c}(u_y)`` (Zhang & Liu 2014), grouped penalty on the K-1
  coefficients of each coordinate (:mod:`cohstats.solvers.cd.angle`); G = K-1 groups,
  unconstrained intercepts.

Coefficients are held as a (G, p) array: G = 1 for binary problems (whose coordinate updates
work on its single row), G = K for the grouped problem (block updates of one column at a time:
the ``"irls"`` mode below applied to a group -- proximal-Newton passes with the exact per-row
K x K Hessians, the intercepts profiled out, each block the exact minimiser of its quadratic
model, and step halving on the true objective -- or the ``"mm"`` mode, the majorisation with
Boehning's global curvature bound, whose cheap passes stall at small temperatures T).

The minimised objective is

    (1/n) sum_i w_i phi(y_i f_i) + penalty,        weights normalised to mean 1.

Three coordinate-update modes
-----------------------------
``"irls"`` (MODE_IRLS)
    Quadratic approximation with the exact curvature ``w_i phi''(y_i f_i)`` of the selected loss
    (), minimised by inner coordinate descent, then re-expanded (Newton / IRLS outer loop) with
    the step-halving safeguard of that makes the objective monotone. Curvatures are floored at
    ``1e-6`` times the global curvature bound so that the inner problem stays well posed; the
    floor changes the step, not the fixed point. Default for the C-, V- and logistic losses and the
    squared hinge.
``"mm"`` (MODE_MM)
    Coordinate-wise majorisation-minimisation: each coordinate step uses the exact gradient of
    the loss at the current fit and the constant curvature bound ``L = loss_curv_bound`` (for the
    huberized hinge ``1/delta``, [ZDJ] 3.7 /). Monotone without line search. Default for the
    huberized hinge.
``"exact"`` (MODE_EXACT)
    Exact coordinate minimisation (): each one-dimensional convex ``C^1`` problem is
    solved by safeguarded Newton / bisection on its monotone derivative, with the ``l1`` part
    handled by a subgradient test at zero (soft-thresholding). Needed for losses whose curvature is
    zero on a piece and huge elsewhere (LUM with large ``c``); default for LUM, usable for all.

Path strategy (as glmnet): warm starts along a decreasing ``lambda`` sequence; sequential strong
rules screen the coordinates, which are cycled over the strong set, then over the active
(nonzero) set to convergence, then once more over the strong set; finally the KKT conditions
are checked on all coordinates and violators are added. The intercept is never penalised.

Convergence (glmnet's criterion plus a KKT gate): the problem at one ``lambda`` is solved when
a pass over the strong set changes no coordinate by more than ``max_j h_j (delta beta_j)^2 <
tol * obj0`` (``h_j`` the model curvature of coordinate ``j``, ``obj0`` the objective of the
intercept-only fit) and, in the IRLS and MM modes, the KKT residuals seen in that pass are below
``sqrt(tol * obj0)``. The exact KKT violation is returned in ``info["kkt"]`` so that callers (and
tests) can check optimality directly.

Where the pieces live: :mod:`.state` (the state tuples), :mod:`.scalar` (the binary coordinate
updates), :mod:`.group` and :mod:`.group_newton` (the grouped block passes), :mod:`.kkt`
(objectives, gradients, KKT residuals), :mod:`.solve` (one penalised problem),
:mod:`.design` (standardisation, ``lambda_max``, sequences and argument checks) and this module
(the path driver and :func:`cd_path`).
"""

from __future__ import annotations

import math

import numpy as np
from cohstats._numba_cache import njit


from cohstats._numba_cache import internal
from cohstats.losses.scalar import loss_curv_bound
from cohstats.solvers.cd.design import (
    _check_alpha,
    _check_lambdas,
    _check_loss,
    _check_pf,
    _check_tol,
    _check_xyw,
    _resolve_mode,
    _warn_conv,
    _xv,
    continuation_grid,
    default_mode,
    lambda_sequence,
    xv_of,
    standardize_design,
)
from cohstats.solvers.cd.scalar import _dot
from cohstats.solvers.cd.kkt import _grad_into, _gnorm, _kkt_violation, _nz, _objective_any, _resid_any
from cohstats.solvers.cd.solve import _null_fit, _solve_set
from cohstats.solvers.cd.state import (
    KIND_ALUM,
    KIND_LUM,
    UPD_MM,
    MODE_EXACT,
    MODE_IRLS,
    MODE_MM,
    Control,
    Loss,
    PathRecord,
    PathSpec,
    Penalty,
    make_data,
    make_loss,
    kind_of,
    make_penalty,
    upd_of,
)
from cohstats.solvers.result import SolverResult
from cohstats.stopflag import stop_flag

__all__ = [
    "cd_path",
    "run_path",
    "lambda_max",
    "lambda_sequence",
    "default_mode",
    "MODE_IRLS",
    "MODE_MM",
    "MODE_EXACT",
    "standardize_design",
]


@njit(cache=True, nogil=True)
def _path_core(kind, upd, data, loss, pen0, spec, G):
    """The one path driver: warm starts, sequential strong rule, KKT check, per-lambda records.

    Serves the binary problems (``G = 1``, any scalar loss code, identity or kernel penalty
    matrix) and the grouped K-class problems (``code = LOSS_MCOH``, ``G = K``; ``code = LOSS_ALUM``,
    ``G = K - 1``), compiled separately per problem kind ``kind`` and update mode ``upd``
    (:func:`~cohstats.solvers.cd.state.kind_of`, :func:`~cohstats.solvers.cd.state.upd_of`; ``upd``
    is ``spec.mode``). ``pen0`` carries the penalty factors and matrix
    (its l1 and l2 are unused); returns a :class:`~cohstats.solvers.cd.state.PathRecord`.

    Penalties at or above ``lambda_max`` (the smallest ``lambda`` whose solution is the null fit:
    ``max_j ||grad_j|| / (alpha pf_j)`` at the null fit, within a relative ``1e-9``) that come
    before any smaller one get the null fit itself, exactly, without iterating (as glmnet).
    """
    Xt, excl = data.Xt, data.excl
    pf = pen0.pf
    code, p1, Lb = loss.code, loss.p1, loss.Lb
    lambdas, alpha, tol, max_iter = spec.lambdas, spec.alpha, spec.tol, spec.max_iter
    exact_kkt, cont, stop = spec.exact_kkt, spec.cont, spec.stop
    p = Xt.shape[0]
    nlam = lambdas.shape[0]
    Bs = np.zeros((nlam, G, p))
    b0 = np.zeros((nlam, G))
    n_iter = np.zeros(nlam, dtype=np.int64)
    conv = np.zeros(nlam, dtype=np.bool_)
    objs = np.zeros(nlam)
    kkts = np.zeros(nlam)
    # intercept-only (plus unpenalised coordinates) fit sets the scale of the tolerance
    pen = Penalty(pf, 0.0, 0.0, pen0.use_P, pen0.P, pen0.Pshift)
    # (its buffers serve the path: every one is written before it is read)
    # (the same tight tolerance as for lambda_max, which is this driver run with no lambdas)
    if len(kind) > KIND_LUM:
        ws = _null_fit(kind, upd, data, loss, pen, Control(1e-16, 100000), G)
    else:
        ws = _null_fit(kind, upd, data, loss, pen, Control(1e-12, 100000), G)
    B, b, Gst = ws.B, ws.b, ws.Gst
    obj0 = _objective_any(kind, data, loss, pen, ws)
    thr = tol * max(obj0, 1e-10)
    inS = np.zeros(p, dtype=np.bool_)
    outS = np.ones(p, dtype=np.bool_)  # not inS (the coordinates whose KKT conditions are checked)
    ever = np.zeros(p, dtype=np.bool_)
    for j in range(p):
        if pf[j] == 0.0 and not excl[j]:
            ever[j] = True
    _resid_any(kind, data, loss, ws)
    _grad_into(data, pen, ws, outS)
    # lambda_max from the null fit's gradients (inS is all False: Gst holds every coordinate's)
    gmax = -1.0  # stays -1 when no coordinate is penalised
    for j in range(p):
        if pf[j] > 0.0 and not excl[j]:
            v = _gnorm(Gst, j) / pf[j]
            if v > gmax:
                gmax = v
    if nlam == 0:  # lambda_max alone (see _lambda_max_std)
        return PathRecord(b0, Bs, n_iter, conv, objs, kkts, obj0, gmax)
    lam_null = max(gmax, 0.0)
    lam_null = lam_null / alpha if alpha > 0.0 else math.inf
    at_null = True
    # Screened KKT check (identity penalty only, where the smooth gradient of a zero coordinate
    # outside the strong set is x_j'R / n): by Cauchy-Schwarz |x_j'R| moves by at most
    # ||x_j|| ||R - R'|| between two residuals, and the distance from the residual at which
    # x_j'R was last computed is at most the summed distances between the residuals of the
    # checks since then. A coordinate whose last |gradient| plus that drift stays below its
    # threshold l1 pf_j cannot violate the KKT conditions, and its gradient is not recomputed
    # (its stale value only feeds the heuristic strong rule). Exact: the same coordinates are
    # added as with the full check.
    screen = not pen0.use_P
    n = ws.R.shape[1]
    Rref = ws.R.copy()
    drift = 0.0
    xnorm = np.zeros(p)
    gref = np.zeros(p)
    dref = np.zeros(p)
    if screen:
        for j in range(p):
            xnorm[j] = math.sqrt(_sqnorm(Xt[j])) / n
            gref[j] = _gnorm(Gst, j)
    lam_prev = -1.0
    for k in range(nlam):
        if stop[0] != 0:  # the caller interrupted the fit
            break
        lam = lambdas[k]
        pen = Penalty(pf, lam * alpha, lam * (1.0 - alpha), pen0.use_P, pen0.P, pen0.Pshift)
        l1 = pen.l1
        if lam_prev < 0.0:
            lam_prev = lam
        if at_null and lam >= lam_null * (1.0 - 1e-9):
            # the null fit solves this lambda: record it as it is
            _record(Bs[k], b0[k], B, b)
            n_iter[k] = 0
            conv[k] = True
            objs[k] = _objective_any(kind, data, loss, pen, ws)
            kkts[k] = _kkt_violation(data, pen, ws) if exact_kkt else math.nan
            lam_prev = lam
            continue
        at_null = False
        # sequential strong rule (Gst holds the smooth KKT residuals at the previous solution)
        cut = alpha * (2.0 * lam - lam_prev)
        if len(kind) <= KIND_LUM:
            beta = B[0]
            gst = Gst[0]
            for j in range(p):
                inS[j] = (not excl[j]) and (ever[j] or beta[j] != 0.0 or abs(gst[j]) >= cut * pf[j])
        else:
            for j in range(p):
                inS[j] = (not excl[j]) and (ever[j] or _nz(B, j) or _gnorm(Gst, j) >= cut * pf[j])
        total = 0
        ok = False
        # continuation in the second loss parameter (LUM's c): solve a sequence of smoother
        # problems first, each warm-starting the next (see continuation_grid)
        if len(kind) == KIND_LUM or len(kind) == KIND_ALUM:
            for q in range(cont.shape[0]):
                Lq = Lb if len(upd) != UPD_MM else loss_curv_bound(code, p1, cont[q])
                loss_q = Loss(code, p1, cont[q], Lq, loss.floor_c, loss.u)
                ctl_q = Control(thr * 100.0, max_iter - total)
                passes, ok = _solve_set(kind, upd, data, loss_q, pen, ctl_q, inS, ws)
                total += passes
        while True:
            passes, ok = _solve_set(kind, upd, data, loss, pen, Control(thr, max_iter - total), inS, ws)
            total += passes
            # KKT check on the coordinates outside the strong set
            _resid_any(kind, data, loss, ws)
            if screen:
                drift += _rdiff(ws.R, Rref)
                _grad_screened(Xt, ws.R, Gst, pf, l1, inS, excl, xnorm, gref, dref, drift)
            else:
                for j in range(p):
                    outS[j] = not inS[j]
                _grad_into(data, pen, ws, outS)
            added = 0
            gst = Gst[0]
            for j in range(p):
                if not inS[j] and not excl[j]:
                    gn = _gnorm(Gst, j)
                    if gn > l1 * pf[j] * (1.0 + 1e-12) + 1e-300:
                        inS[j] = True
                        added += 1
            if added == 0 or total >= max_iter:
                break
        if exact_kkt:
            _grad_into(data, pen, ws, inS)
        if len(kind) <= KIND_LUM:
            beta = B[0]
            Bk = Bs[k, 0]
            for j in range(p):
                bj = beta[j]
                Bk[j] = bj
                if bj != 0.0:
                    ever[j] = True
            b0[k, 0] = b[0]
        else:
            for j in range(p):
                if _nz(B, j):
                    ever[j] = True
            _record(Bs[k], b0[k], B, b)
        n_iter[k] = total
        conv[k] = ok
        objs[k] = _objective_any(kind, data, loss, pen, ws)
        kkts[k] = _kkt_violation(data, pen, ws) if exact_kkt else math.nan
        lam_prev = lam
    return PathRecord(b0, Bs, n_iter, conv, objs, kkts, obj0, gmax)


@njit(cache=True, nogil=True, inline="always")
def _record(Bk, bk, B, b):
    """``Bk[:] = B; bk[:] = b`` (shapes equal by construction)."""
    G, p = B.shape
    for g in range(G):
        bk[g] = b[g]
        for j in range(p):
            Bk[g, j] = B[g, j]


@internal(fastmath=True)
def _sqnorm(x):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i] * x[i]
    return s


@internal
def _rdiff(R, Rref):
    """Frobenius norm of ``R - Rref``; then copies ``R`` into ``Rref``."""
    s = 0.0
    G, n = R.shape
    for k in range(G):
        for i in range(n):
            d = R[k, i] - Rref[k, i]
            s += d * d
            Rref[k, i] = R[k, i]
    return math.sqrt(s)


@internal
def _grad_screened(Xt, R, Gst, pf, l1, sel, excl, xnorm, gref, dref, drift):
    """``Gst[:, j] = X_j'R / n`` for the coordinates outside ``sel`` whose bound on that norm,
    ``gref[j] + xnorm[j] (drift - dref[j])`` (``xnorm = ||x_j|| / n``), can reach ``l1 pf_j``;
    the others keep their last values (zero coordinates, identity penalty only)."""
    G, n = R.shape
    for j in range(Xt.shape[0]):
        if sel[j] or excl[j]:
            continue
        if gref[j] + xnorm[j] * (drift - dref[j]) < l1 * pf[j]:
            continue
        if G == 1:
            g = _dot(Xt[j], R[0]) / n
            Gst[0, j] = g
            gref[j] = abs(g)
        else:
            s = 0.0
            for k in range(G):
                g = _dot(Xt[j], R[k]) / n
                Gst[k, j] = g
                s += g * g
            gref[j] = math.sqrt(s)
        dref[j] = drift


def lambda_max(
    X, y, w, loss_code, p1, p2, alpha, standardize=True, penalty_factor=None, intercept=True, offset=None, mode=None
):
    """Smallest ``lambda`` at which every penalised coefficient is zero.

    ``lambda_max = max_j |(1/n) sum_i x_ij r_i| / (alpha pf_j)`` with ``r_i`` the negative
    gradient at the intercept-only fit (plus the unpenalised coordinates) and ``x_ij`` the
    standardised column. For ``alpha < 1e-3`` (including the pure ridge ``alpha = 0``, where no
    finite value zeroes the coefficients) glmnet's convention is used: the value computed with
    ``alpha = 1e-3``, a penalty at which the ridge fit is essentially the null model. ``offset``
    (n,) is a known term added to the fits, as in :func:`cohstats.solvers.cd.path.cd_path`;
    ``mode`` is the update mode of the path that follows (its compiled driver computes the value).

    Examples
    --------
    >>> import numpy as np
    >>> from cohstats.solvers.cd.path import lambda_max
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]]); y = np.array([-1.0, -1.0, 1.0, 1.0])
    >>> round(lambda_max(X, y, None, 7, 0.0, 0.0, 1.0), 6)   # logistic: |mean(x_std * y/2)|
    0.447214
    """
    loss_code, p1, p2 = _check_loss(loss_code, p1, p2)
    X, y, w = _check_xyw(X, y, w)
    alpha = _check_alpha(alpha)
    pf = _check_pf(penalty_factor, X.shape[1])
    Xt, center, scale, excl = standardize_design(X, w, standardize, intercept)
    data = make_data(Xt, y, w, xv_of(Xt, w), excl, intercept, offset=offset)
    return _lambda_max_std(
        data, make_loss(loss_code, p1, p2), make_penalty(pf), _resolve_mode(mode, loss_code, p1, p2), alpha
    )


def _lambda_max_std(data, loss, pen, mode, alpha, G=1):
    """lambda_max on the prepared problem (see :func:`lambda_max`); grouped problems use the
    Euclidean norm of each coordinate's G gradient entries.

    It is the path driver run with no ``lambda``: the same compiled code and the same null fit
    as the path of update mode ``mode`` that follows, so nothing else is compiled for it.
    """
    data = data._replace(sw=float(data.w.sum()))
    spec = PathSpec(np.empty(0), 1.0, int(mode), 1e-7, 100000, False, np.empty(0), stop_flag())
    rec = _path_core(kind_of(loss.code, loss.p2), upd_of(mode), data, loss, pen, spec, G)
    gmax = float(rec.grad_max)
    if gmax < 0.0:  # no penalised coordinate
        return math.inf
    val = gmax / max(alpha, 1e-3)
    return val if val > 0 else 1e-10


def run_path(data, loss, pen, spec, G):
    """Run the path driver; the solution on the prepared scale as a
    :class:`~cohstats.solvers.result.SolverResult`.

    ``coef`` is (nlam, G, p), ``intercept`` (nlam, G), ``objective`` (nlam,), ``n_iter`` the
    total number of coordinate passes and ``converged`` whether every ``lambda`` converged;
    ``info`` holds the per-``lambda`` arrays ``n_iter`` and ``converged``, ``kkt`` (largest KKT
    violation, NaN without ``spec.exact_kkt``) and the scalar ``null_objective``.
    """
    spec = spec._replace(stop=stop_flag())
    rec = _path_core(kind_of(loss.code, loss.p2), upd_of(spec.mode), data, loss, pen, spec, G)
    return SolverResult(
        coef=rec.coef,
        dual=None,
        intercept=rec.intercept,
        n_iter=int(rec.n_iter.sum()),
        converged=bool(np.all(rec.converged)),
        objective=rec.objective,
        info=dict(n_iter=rec.n_iter, converged=rec.converged, kkt=rec.kkt, null_objective=rec.null_objective),
    )


def path_info(res, df, **extra):
    """The ``info`` dict of the public path functions from a :func:`run_path` result."""
    i = res.info
    out = dict(
        n_iter=i["n_iter"],
        converged=i["converged"],
        objective=res.objective,
        df=df,
        kkt=i["kkt"],
        null_objective=i["null_objective"],
    )
    out.update(extra)
    return out


def cd_path(
    X,
    y,
    w,
    loss_code,
    p1,
    p2,
    lambdas,
    alpha,
    standardize=True,
    tol=1e-7,
    max_iter=10000,
    penalty_factor=None,
    intercept=True,
    mode=None,
    warn=True,
    exact_kkt=True,
    offset=None,
):
    """Elastic-net penalised margin-loss fit along a sequence of ``lambda`` values.

    Minimises, for each ``lambda`` in turn (warm started from the previous solution),

    ``(1/n) sum_i w_i phi(y_i (o_i + b + x_i'beta)) + lambda sum_j pf_j ((1-alpha)/2 beta_j^2 + alpha |beta_j|)``

    where ``phi`` is the loss ``loss_code`` with parameters ``(p1, p2)``
    (:mod:`cohstats.losses.scalar`), ``w`` is normalised to mean 1, and with ``standardize=True``
    the penalty applies to the coefficients of the weighted-standardised columns (glmnet's
    convention); coefficients are returned on the original scale.

    Parameters
    ----------
    X : (n, p) array
    y : (n,) array of -1/+1
    w : (n,) nonnegative observation weights or None
    loss_code : int, a code of :mod:`cohstats.losses.scalar`
    p1, p2 : loss parameters (rho, u for the C-/V-losses; delta for hhinge; a, c for LUM)
    lambdas : 1-D array of penalties, best given decreasing (warm starts follow the order)
    alpha : float in [0, 1], the l1 share of the elastic net (the papers' omega)
    standardize : bool
    tol : float, convergence threshold relative to the intercept-only objective (glmnet's thr)
    max_iter : int, maximum number of coordinate passes per ``lambda``
    penalty_factor : (p,) nonnegative factors ``pf_j`` (0 = unpenalised); used as given
        (glmnet rescales them to sum to p; we do not, so the objective is exactly the one above)
    intercept : bool, fit an unpenalised intercept
    mode : None/"auto", "irls", "mm" or "exact" (see the module docstring)
    warn : emit :class:`cohstats.ConvergenceWarning` when some ``lambda`` did not converge
    exact_kkt : compute the exact gradient of every coordinate after each ``lambda`` to report
        ``info["kkt"]`` (one extra pass over X per ``lambda``; NaN is reported when False)
    offset : (n,) known offsets ``o_i`` added to the fits (R's ``offset()``; default none); the
        returned intercepts and coefficients exclude them

    Returns
    -------
    intercepts : (nlam,) array
    coefs : (nlam, p) array on the original scale
    info : dict with arrays ``n_iter`` (coordinate passes), ``converged``, ``objective``,
        ``df`` (nonzero coefficients), ``kkt`` (largest KKT violation on the standardised scale)
        and scalars ``null_objective``, ``mode``.

    Examples
    --------
    >>> import numpy as np
    >>> from cohstats.solvers.cd.path import cd_path, lambda_max
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((50, 3)); y = np.where(X[:, 0] + rng.standard_normal(50) > 0, 1.0, -1.0)
    >>> lm = lambda_max(X, y, None, 7, 0.0, 0.0, 1.0)
    >>> b0, B, info = cd_path(X, y, None, 7, 0.0, 0.0, [lm, lm / 10], 1.0)
    >>> bool(np.all(B[0] == 0)), bool(B[1, 0] > 0)
    (True, True)
    """
    loss_code, p1, p2 = _check_loss(loss_code, p1, p2)
    X, y, w = _check_xyw(X, y, w)
    alpha = _check_alpha(alpha)
    lam = _check_lambdas(lambdas)
    n, p = X.shape
    pf = _check_pf(penalty_factor, p)
    m = _resolve_mode(mode, loss_code, p1, p2)
    tol, max_iter = _check_tol(tol, max_iter)
    Xt, center, scale, excl = standardize_design(X, w, standardize, intercept)
    data = make_data(Xt, y, w, _xv(Xt, w), excl, intercept, offset=offset)
    spec = PathSpec(lam, alpha, m, tol, max_iter, bool(exact_kkt), continuation_grid(loss_code, p1, p2, m))
    res = run_path(data, make_loss(loss_code, p1, p2), make_penalty(pf), spec, 1)
    b0 = res.intercept[:, 0]
    B = res.coef[:, 0, :]
    coefs = B / scale
    intercepts = b0 - coefs @ center if intercept else b0.copy()
    info = path_info(res, np.count_nonzero(B, axis=1), mode=m)
    if warn and not res.converged:
        _warn_conv(lam, res.info["converged"], max_iter)
    return intercepts, coefs, info
