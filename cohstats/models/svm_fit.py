"""The SVM's fitting steps: the design and the solver's inputs prepared once (:func:`_design`,
:func:`_prepare`: shared by :func:`cohstats.svm`, :func:`cohstats.psi_learn` and the low-rank
route of :mod:`cohstats.models.svm_approx`), the SVMs solved (:func:`_solve`: the binary SVM
along ``C`` or ``pi``, or the one-vs-one pairs) and the result built (:func:`_result`).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from cohstats.exceptions import ConvergenceWarning
from cohstats.formula import Design, build_design
from cohstats.kernels import KERNEL_CALLABLE, KERNEL_LINEAR, make_kernel
from cohstats.probability import (
    bracket_grid,
)
from cohstats.solvers.svm.smo import smo_solve
from cohstats.solvers.svm.svmpath import pi_grid_smo, pi_path
from cohstats.models.svm_multi import MulticlassSVMFit
from cohstats.models.svm_result import SVMFit, _resolve_width, _scaling, class_weights

AUTO_EXACT_MAX_N = 300  # path_method="auto": the exact pi path up to this n, the warm grid above


def _run_settings(fit_fn, prob_method, cache_size, path_method, n_jobs, tol, shrinking, max_iter) -> dict:
    """The solver settings a fitted SVM keeps (binary and one-vs-one) for refits and
    probabilities, as keyword arguments of the result constructors; ``fit_fn`` is the fit
    function that refits (:func:`svm`)."""
    # (n_jobs is left out of fit_args: refits run inside tune(), whose own n_jobs parallelises
    # the fits)
    return dict(
        prob_method=prob_method,
        cache_size=cache_size,
        path_method=path_method,
        n_jobs=n_jobs,
        fit_fn=fit_fn,
        fit_args=dict(tol=tol, cache_size=cache_size, shrinking=shrinking, max_iter=max_iter, path_method=path_method),
    )


# ============================================================================ prepare
def _design(formula, data, ctx, *, weights, subset, na_action, binary_only, offset=None) -> Design:
    """The design of a call of :func:`svm` or :func:`psi_learn` (a Design passes through, with
    the rows of ``subset`` and the ``weights`` applied)."""
    maxk = 2 if binary_only else None
    design = (
        formula
        if isinstance(formula, Design)
        else build_design(
            formula,
            data,
            weights=weights,
            subset=subset,
            na_action=na_action,
            context=ctx,
            max_classes=maxk,
            offset=offset,
        )
    )
    if isinstance(formula, Design):
        if weights is not None or subset is not None:
            design = build_design(design, weights=weights, subset=subset, max_classes=maxk)
    return design


@dataclass
class _Problem:
    """What the SVM solvers need, prepared from the settings and the design."""

    lam: float  # the penalty lambda_ = 1/(n C)
    Cval: float  # the cost C
    pi: object  # None, the class weight (a number) or "path"
    path: bool  # pi == "path": the bracketing grid of weighted SVMs
    m: object  # the bracketing grid size (None: the default floor(sqrt(n)))
    prob_method: str  # the default probability method
    tol: float
    kern: object  # the kernel (on the standardised inputs)
    Z: np.ndarray  # the (standardised) inputs
    xc: np.ndarray  # their centres and scales
    xs: np.ndarray
    kernel_arg: object  # the kernel as given (None for a callable)
    path_method: object = None  # svm: "exact" or "warm" ("auto" resolved by n)


def _prepare(design, settings, *, allow_path, binary_only) -> _Problem:
    """The settings of :func:`svm` or :func:`psi_learn` (checked by their front doors) and the
    design -> the cost, the scaling and the kernel (checks across arguments here)."""
    s = settings
    kernel, C, lambda_, pi, m, prob_method, standardize = (
        s.kernel,
        s.C,
        s.lambda_,
        s.pi,
        s.m,
        s.prob_method,
        s.standardize,
    )
    if design.n_classes < 2 or (binary_only and not design.binary):
        raise ValueError(
            f"{'psi_learn' if binary_only else 'svm'} needs a response with "
            f"{'two' if binary_only else 'at least two'} classes; got {design.n_classes}"
        )
    if not design.intercept:
        raise ValueError("svm always fits an unpenalised intercept; remove '- 1' / '+ 0' from the formula")
    n = design.nobs
    present = np.unique(design.y_int)
    if present.size < design.n_classes:
        missing = [design.classes[k] for k in range(design.n_classes) if k not in present]
        raise ValueError(f"svm needs every class in the training data; no rows of class(es) {missing}")
    if C is not None and lambda_ is not None:
        raise ValueError("give C or lambda_, not both (C = 1/(n lambda_))")
    if lambda_ is not None:
        if np.ndim(lambda_) != 0:
            arr = np.asarray(lambda_, dtype=float).ravel()
            if arr.size != 1:
                raise ValueError("svm takes a single lambda_ (tune a grid with cohstats.tune)")
            lambda_ = float(arr[0])
        lam = float(lambda_)
        Cval = 1.0 / (n * lam)
    else:
        Cval = 1.0 if C is None else float(C)
        lam = 1.0 / (n * Cval)
    # the arguments were checked by the front door (svm / psi_learn): here only converted
    path = pi == "path"
    if not path and pi is not None:
        pi = float(pi)
        if not design.binary:
            raise ValueError(
                f"pi weights the two classes of a binary response; with "
                f"{design.n_classes} classes use pi=None (or pi='path' for bracketing)"
            )
    if prob_method is None:
        prob_method = "bracket" if path else "platt"
    if design.offset is not None:
        _check_offset_use(design, binary_only, path, prob_method)
    tol = float(s.tol)
    xc, xs = _scaling(design.X, design.weights, bool(standardize))
    Z = np.ascontiguousarray((design.X - xc) / xs) if standardize else design.X
    g = _resolve_width(kernel, Z, design.y, s.sigma, s.gamma)
    kern = make_kernel("linear" if kernel is None else kernel, Z, design.y, gamma=g, degree=s.degree, coef0=s.coef0)
    if path and not allow_path:
        raise ValueError(
            "pi='path' is the exact path of the weighted SVM; psi-learning is "
            "fitted at each pi of the bracketing grid (give a number for pi)"
        )
    path_method = getattr(s, "path_method", None)
    if path_method == "auto":
        path_method = "exact" if n <= AUTO_EXACT_MAX_N else "warm"
    kernel_arg = kernel if not callable(kernel) else None
    return _Problem(lam, Cval, pi, path, m, prob_method, tol, kern, Z, xc, xs, kernel_arg, path_method)


def _fit_args(prob: _Problem, s, fit_fn, call) -> dict:
    """The arguments of the fitting steps (exact and low-rank) that the result records:
    ``fit_fn`` the fit function that refits, ``call`` the recorded call."""
    return dict(
        fit_fn=fit_fn,
        Cval=prob.Cval,
        pi=prob.pi,
        path=prob.path,
        m=prob.m,
        prob_method=prob.prob_method,
        tol=prob.tol,
        cache_size=s.cache_size,
        shrinking=s.shrinking,
        max_iter=s.max_iter,
        path_method=prob.path_method,
        n_jobs=s.n_jobs,
        standardize=bool(s.standardize),
        call=call,
        kernel_arg=prob.kernel_arg,
    )


def _check_offset_use(design, psi: bool, path: bool, prob_method: str) -> None:
    """An offset enters the C-SVM dual as a linear term; refuse the fits that have no such term."""
    from cohstats.formula import refuse_offset

    if psi:
        refuse_offset(design, "psi_learn (its DC steps solve shifted-bound duals without an offset term)")
    if not design.binary:
        refuse_offset(design, "svm with more than two classes (the one-vs-one pairs have no common offset)")
    if path:
        refuse_offset(design, "svm(pi='path') (the exact pi path has no offset term; give a number pi or None)")
    if prob_method in ("bracket", "platt_tuned"):
        refuse_offset(
            design,
            f"svm(prob_method={prob_method!r}) (it refits the SVM along pi or lambda without the offset; "
            "use 'platt', 'sollich' or 'coherence')",
        )


def _default_m(n):
    return max(2, int(math.floor(math.sqrt(n))))


# ============================================================================ solve
class _Solution(NamedTuple):
    """One binary (weighted) C-SVM solved: the dual, the intercept and what the result keeps."""

    cost: np.ndarray  # the box C w_i S_pi(y_i)
    dual: np.ndarray
    b: float
    n_iter: int
    converged: bool
    fitted: object  # the training decision values (None: computed by the result)
    Kpre: object  # the precomputed kernel matrix (None: rows computed by the solver)
    paths: object  # {m: the bracketing path} for pi="path", else None
    m: int


def _solve(design, prob: _Problem, run: dict):
    """The SVM of the problem: one binary solution, or for K > 2 classes the one-vs-one pairs'
    ``(pairs, Kfull)`` (``run``: :func:`_fit_args`)."""
    names = ("Cval", "pi", "path", "m", "tol", "cache_size", "shrinking", "max_iter", "path_method", "n_jobs")
    kw = {k: run[k] for k in names}
    if design.binary:
        return _solve_binary(design, prob.Z, prob.kern, **kw)
    K, yi = design.n_classes, design.y_int
    # A callable kernel is evaluated once, on all rows, and every pair reads its block. The
    # built-in kernels are computed row by row inside each pair's SMO (LRU cache of
    # cache_size MB, as libsvm's one-vs-one): SMO touches few rows, so the whole kernel
    # matrix up front was slower (benchmarks/log.csv).
    Kfull = prob.kern(prob.Z) if prob.kern.code == KERNEL_CALLABLE else None
    pairs = []
    for i in range(K):
        for j in range(i + 1, K):
            rows = np.flatnonzero((yi == i) | (yi == j))
            dp = _pair_design(design, prob.Z, rows, i, j)
            Kp = None if Kfull is None else np.ascontiguousarray(Kfull[np.ix_(rows, rows)])
            pairs.append((i, j, rows, dp, _solve_binary(dp, dp.X, prob.kern, **kw, Kpre=Kp, warn=False)))
    return pairs, Kfull


def _solve_binary(
    design,
    Z,
    kern,
    *,
    Cval,
    pi,
    path,
    m,
    tol,
    cache_size,
    shrinking,
    max_iter,
    path_method,
    n_jobs,
    Kpre=None,
    warn=True,
) -> _Solution:
    """The binary (weighted) C-SVM on the (standardised) inputs ``Z``; ``Kpre`` an optional
    precomputed kernel matrix of ``Z`` (shared across the pairs of a one-vs-one fit)."""
    n, y = design.nobs, design.y
    pi_fit = 0.5 if path else pi
    cost = design.weights * class_weights(y, pi_fit) * Cval
    if float(np.max(cost)) * n * np.finfo(float).eps > tol:  # the dual gradients lose all digits
        raise ValueError(
            f"svm: the largest cost C * weights is {float(np.max(cost)):.3g}, too large to solve the "
            f"dual to tol={tol:g} in double precision; rescale weights (they multiply C) or lower C"
        )
    code = kern.code
    if Kpre is None and code == KERNEL_CALLABLE:
        Kpre = kern(Z)
    scode = KERNEL_CALLABLE if Kpre is not None else code
    m = _default_m(n) if m is None else int(m)
    paths = fitted = None
    if path:
        # the decision function at pi = 1/2 is read off the path or the warm-started grid (pi =
        # 1/2 is added to the grid when m is odd): one start solve (at pi = 1/2) instead of two
        grid = bracket_grid(m)
        ext = np.union1d(grid, [0.5])
        extra = {} if path_method == "exact" else {"tol": tol}
        res = (pi_path if path_method == "exact" else pi_grid_smo)(
            Z,
            y,
            code=scode,
            kpar=kern.kpar,
            Kpre=Kpre,
            nlam=1.0 / Cval,
            grid=ext,
            weights=design.weights,
            cache_size=cache_size,
            n_jobs=n_jobs,
            **extra,
        )
        g = int(np.flatnonzero(ext == 0.5)[0])
        a = np.clip(res.dual[g] * Cval, 0.0, cost)
        b = float(res.intercept[g] * Cval)
        if path_method != "exact":
            # the training decision values at pi = 1/2 from the cold start's gradient (no pass
            # over the kernel; float32 kernel values at the default tol, as the solves)
            info = dict(res.info)
            G_mid, mid = info.pop("gradient", None), info.pop("mid", None)
            if G_mid is not None and mid == g:
                fitted = y * (G_mid + 1.0) + b
            res = res._replace(info=info)
        if ext.size > grid.size:
            res = res._replace(
                dual=np.delete(res.dual, g, axis=0),
                intercept=np.delete(res.intercept, g),
                info={**res.info, "grid": grid},
            )
        paths = {m: res}
        if path_method == "exact":
            n_iter, converged = int(res.info["n_events"]), True
        else:
            n_iter, converged = int(res.n_iter), bool(res.converged)
            if warn and not converged:
                warnings.warn(
                    f"svm: SMO on the bracketing grid stopped with KKT violation above tol={tol} "
                    f"at some pi ({n_iter} iterations in all); increase tol or use path_method='exact'",
                    ConvergenceWarning,
                    stacklevel=4,
                )
    else:
        # an offset o enters the dual as the linear term p_i = y_i o_i - 1: the constraints
        # y_i (o_i + b + h(x_i)) >= 1 - xi_i give the dual objective sum_i a_i (1 - y_i o_i) - a'Qa/2
        off = design.offset
        r = smo_solve(
            Z,
            y,
            code=scode,
            kpar=kern.kpar,
            Kpre=Kpre,
            C=cost,
            p=None if off is None else y * off - 1.0,
            tol=tol,
            max_iter=max_iter,
            shrinking=shrinking,
            cache_size=cache_size,
        )
        if warn and not r.converged:
            warnings.warn(
                f"svm: SMO stopped after {r.n_iter} iterations with KKT violation above "
                f"tol={tol}; increase max_iter or tol",
                ConvergenceWarning,
                stacklevel=4,
            )
        a, b, n_iter, converged = r.dual, float(r.intercept), r.n_iter, r.converged
        fitted = y * (r.info["gradient"] + 1.0) + r.intercept
    return _Solution(cost, a, b, int(n_iter), bool(converged), fitted, Kpre, paths, m)


# ============================================================================ result
def _kept(run: dict) -> dict:
    """The solver settings a result keeps (:func:`_run_settings`) from the run's arguments."""
    keys = ("fit_fn", "prob_method", "cache_size", "path_method", "n_jobs", "tol", "shrinking", "max_iter")
    return _run_settings(*(run[k] for k in keys))


def _result(design, prob: _Problem, solved, run: dict):
    """The solution(s) -> :class:`SVMFit` (two classes) or :class:`MulticlassSVMFit`."""
    if design.binary:
        return _binary_result(design, prob.Z, prob.xc, prob.xs, prob.kern, solved, run)
    pairs, Kfull = solved
    n, xs, kern = design.nobs, prob.xs, prob.kern
    pair_run = dict(run, standardize=False)
    ones, zeros = np.ones(design.p), np.zeros(design.p)
    fits = [_binary_result(dp, dp.X, zeros, ones, kern, sol, pair_run, rows=rows) for _, _, rows, dp, sol in pairs]
    names = [(design.classes[i], design.classes[j]) for i, j, *_ in pairs]
    idx = [(i, j) for i, j, *_ in pairs]
    bad = [f"{a} vs {b}" for (a, b), f in zip(names, fits) if not f.converged]
    if bad:
        warnings.warn(
            f"svm: SMO stopped before tol={prob.tol} for pair(s) {bad}; increase max_iter or tol",
            ConvergenceWarning,
            stacklevel=3,
        )
    P = len(fits)
    beta = np.zeros((n, P))
    alpha = np.zeros((n, P))
    cost = np.zeros((n, P))
    for k, f in enumerate(fits):
        beta[f._rows, k] = -f._beta
        alpha[f._rows, k] = f.dual_alpha_
        cost[f._rows, k] = f.cost
    support = np.flatnonzero(np.any(alpha > 0, axis=1))
    bpair = np.array([-f._b for f in fits])
    coef = fitted = None
    if kern.code == KERNEL_LINEAR:
        W = np.column_stack([-f._coef for f in fits])  # slopes in Z
        coef = W / xs[:, None]
    elif Kfull is not None:
        fitted = Kfull[:, support] @ beta[support] + bpair
    r = run
    shared = _ovo_fields(
        kern, r["kernel_arg"], r["Cval"], n, r["pi"], r["m"], r["standardize"], prob.Z, (prob.xc, xs), names, idx, fits
    )
    return MulticlassSVMFit._from_arrays(
        design,
        **shared,
        beta=beta,
        dual_alpha=alpha,
        cost=cost,
        support=support,
        bpair=bpair,
        coef=coef,
        fitted=fitted,
        call=r["call"],
        **_kept(r),
    )


def _binary_result(design, Z, xc, xs, kern, sol: _Solution, run: dict, rows=None) -> SVMFit:
    """One binary solution -> :class:`SVMFit` (``rows``: the training rows of a one-vs-one pair)."""
    r, n = run, design.nobs
    fit = SVMFit._from_arrays(
        design,
        kernel=kern,
        kernel_arg=r["kernel_arg"],
        C=float(r["Cval"]),
        lambda_=np.array([1.0 / (n * r["Cval"])]),
        pi=r["pi"],
        m=sol.m,
        cost=sol.cost,
        standardize=r["standardize"],
        Z=Z,
        scaling=(xc, xs),
        dual_alpha=sol.dual,
        support=np.flatnonzero(sol.dual > 0),
        b=sol.b,
        n_iter=sol.n_iter,
        converged=sol.converged,
        fitted_decision=sol.fitted,
        Kpre=sol.Kpre,
        paths=sol.paths,
        rows=rows,
        call=r["call"],
        **_kept(r),
    )
    if r["path"]:
        fit._get_path(fit.m)
    return fit


def _pair_design(design: Design, Z: np.ndarray, rows: np.ndarray, i: int, j: int) -> Design:
    """The binary design of classes ``i < j`` on the standardised inputs (``j`` coded +1)."""
    d = design.take(rows)
    d.X = np.ascontiguousarray(Z[rows])
    d.y = np.where(design.y_int[rows] == j, 1.0, -1.0)
    d.classes = [design.classes[i], design.classes[j]]
    d.formula, d.spec, d.variables, d.categorical_levels = None, None, (), {}
    d.n_dropped, d.dropped = 0, {}
    return d


def _ovo_fields(kern, kernel_arg, Cval, n, pi, m, standardize, Z, scaling, pairs, idx, fits):
    """The constructor fields every one-vs-one SVM result shares (exact or low-rank kernel)."""
    return dict(
        kernel=kern,
        kernel_arg=kernel_arg,
        C=float(Cval),
        lambda_=np.array([1.0 / (n * Cval)]),
        pi=pi,
        m=m,
        standardize=standardize,
        Z=Z,
        scaling=scaling,
        pairs=pairs,
        pair_idx=idx,
        pair_fits=fits,
        n_iter=int(sum(f.n_iter for f in fits)),
        converged=all(f.converged for f in fits),
        objective=np.array([f.objective for f in fits]),
    )
