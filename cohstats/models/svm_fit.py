"""The SVM's fitting steps: the inputs prepared once (:func:`_prepare`), the binary fit along
``C`` or ``pi`` (:func:`_fit_binary`) and the one-vs-one pairs (:func:`_fit_ovo`); shared by
:func:`cohstats.svm`, :func:`cohstats.psi_learn` and the low-rank route of
:mod:`cohstats.models.svm_approx`.
"""

from __future__ import annotations

import math
import warnings

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


# ============================================================================ fitting
def _prepare(formula, data, ctx, settings, *, weights, subset, na_action, allow_path, binary_only, offset=None):
    """The settings of :func:`svm` or :func:`psi_learn` (checked by their front doors) and the
    data -> the design, the cost, the scaling and the kernel (checks across arguments here)."""
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
    return design, lam, Cval, pi, path, m, prob_method, tol, kern, Z, xc, xs


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


def _fit_binary(
    design,
    Z,
    xc,
    xs,
    kern,
    *,
    fit_fn,
    Cval,
    pi,
    path,
    m,
    prob_method,
    tol,
    cache_size,
    shrinking,
    max_iter,
    path_method,
    n_jobs,
    standardize,
    call,
    kernel_arg,
    Kpre=None,
    warn=True,
    rows=None,
) -> SVMFit:
    """The binary (weighted) C-SVM on the (standardised) inputs ``Z``; ``Kpre`` an optional
    precomputed kernel matrix of ``Z`` (shared across the pairs of a one-vs-one fit), ``rows``
    the training rows of such a pair."""
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
                    stacklevel=3,
                )
        r = None
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
                stacklevel=3,
            )
        a, b, n_iter, converged = r.dual, float(r.intercept), r.n_iter, r.converged
    fit = SVMFit._from_arrays(
        design,
        kernel=kern,
        kernel_arg=kernel_arg,
        C=float(Cval),
        lambda_=np.array([1.0 / (n * Cval)]),
        pi=pi,
        m=m,
        cost=cost,
        standardize=standardize,
        Z=Z,
        scaling=(xc, xs),
        dual_alpha=a,
        support=np.flatnonzero(a > 0),
        b=b,
        n_iter=int(n_iter),
        converged=bool(converged),
        fitted_decision=fitted if r is None else y * (r.info["gradient"] + 1.0) + r.intercept,
        Kpre=Kpre,
        paths=paths,
        rows=rows,
        call=call,
        **_run_settings(fit_fn, prob_method, cache_size, path_method, n_jobs, tol, shrinking, max_iter),
    )
    if path:
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


def _fit_ovo(
    design,
    Z,
    xc,
    xs,
    kern,
    *,
    fit_fn,
    Cval,
    pi,
    path,
    m,
    prob_method,
    tol,
    cache_size,
    shrinking,
    max_iter,
    path_method,
    n_jobs,
    standardize,
    call,
    kernel_arg,
):
    n, K = design.nobs, design.n_classes
    yi = design.y_int
    # A callable kernel is evaluated once, on all rows, and every pair reads its block. The
    # built-in kernels are computed row by row inside each pair's SMO (LRU cache of
    # cache_size MB, as libsvm's one-vs-one): SMO touches few rows, so the whole kernel
    # matrix up front was slower (benchmarks/log.csv).
    Kfull = kern(Z) if kern.code == KERNEL_CALLABLE else None
    fits, pairs, idx = [], [], []
    for i in range(K):
        for j in range(i + 1, K):
            rows = np.flatnonzero((yi == i) | (yi == j))
            dp = _pair_design(design, Z, rows, i, j)
            Kp = None if Kfull is None else np.ascontiguousarray(Kfull[np.ix_(rows, rows)])
            f = _fit_binary(
                dp,
                dp.X,
                np.zeros(design.p),
                np.ones(design.p),
                kern,
                fit_fn=fit_fn,
                Cval=Cval,
                pi=pi,
                path=path,
                m=m,
                prob_method=prob_method,
                tol=tol,
                cache_size=cache_size,
                shrinking=shrinking,
                max_iter=max_iter,
                path_method=path_method,
                n_jobs=n_jobs,
                standardize=False,
                call=call,
                kernel_arg=kernel_arg,
                Kpre=Kp,
                warn=False,
                rows=rows,
            )
            fits.append(f)
            pairs.append((design.classes[i], design.classes[j]))
            idx.append((i, j))
    bad = [f"{a} vs {b}" for (a, b), f in zip(pairs, fits) if not f.converged]
    if bad:
        warnings.warn(
            f"svm: SMO stopped before tol={tol} for pair(s) {bad}; increase max_iter or tol",
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
    return MulticlassSVMFit._from_arrays(
        design,
        **_ovo_fields(kern, kernel_arg, Cval, n, pi, m, standardize, Z, (xc, xs), pairs, idx, fits),
        beta=beta,
        dual_alpha=alpha,
        cost=cost,
        support=support,
        bpair=bpair,
        coef=coef,
        fitted=fitted,
        call=call,
        **_run_settings(fit_fn, prob_method, cache_size, path_method, n_jobs, tol, shrinking, max_iter),
    )


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
