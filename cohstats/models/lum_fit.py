"""The binary LUM fit's steps: the solver's inputs prepared from the settings and the design
(:func:`_prepare`), the penalty path solved (:func:`_solve`) and the result built
(:func:`_result`); used by :func:`cohstats.models.lum.lum`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from cohstats.losses.scalar import LOSS_LUM
from cohstats.tuning.shared import check_lent
from cohstats.models.lum_refit import _warn_unconverged
from cohstats.models.lum_result import LumFit, _HARD_C, _check_lambda, _kkt_gate

#: tuned-LUM penalty grid: 25 values 10^2, 10^1.75, ..., 10^-4 (decreasing).
LUM_LAMBDA_GRID = 10.0 ** np.linspace(2.0, -4.0, 25)


def _default_lambdas(X, y, w, a, c, alpha, nlambda, lambda_min_ratio, standardize, penalty_factor, offset=None):
    """glmnet-style path: lambda_max from the engine, ``nlambda`` log-spaced values.

    For the ridge penalty (alpha = 0) ``lambda_max`` is infinite; as glmnet does, the start
    is the value for ``alpha = 1e-3`` and, because the LUM/SVM solutions of interest need
    little shrinkage, the default ratio is ``1e-6`` then (documented in :func:`lum`).
    """
    from cohstats.solvers.cd.path import lambda_max

    n, p = X.shape
    a_eff = max(alpha, 1e-3)
    # computed by the path driver of the update mode the path will use (see _fit_path)
    mode = "irls" if math.isfinite(c) else None
    lmax = float(
        lambda_max(
            X,
            y,
            w,
            LOSS_LUM,
            a,
            c,
            a_eff,
            standardize=standardize,
            penalty_factor=penalty_factor,
            offset=offset,
            mode=mode,
        )
    )
    if not (np.isfinite(lmax) and lmax > 0):
        lmax = 1.0
    if lambda_min_ratio is None:
        lambda_min_ratio = 1e-6 if alpha == 0.0 else (1e-4 if n > p else 1e-2)
    if not (0 < lambda_min_ratio < 1):
        raise ValueError(f"lambda_min_ratio must be in (0, 1); got {lambda_min_ratio!r}")
    return lmax * np.geomspace(1.0, lambda_min_ratio, int(nlambda))


# --------------------------------------------------------------------------- fitting
def _fit_path(X, y, w, a, c, lambdas, alpha, kern, standardize, tol, max_iter, penalty_factor, gram=None, offset=None):
    """Run the engine; returns intercepts (nlam,), coefficients (nlam, p or n), info dict.

    Kernel expansions: ``gram`` is a kernel matrix lent by a tuner (see :func:`_kernel_path`).
    ``offset``: (n,) known offsets of the rows (``f = offset + b + x'beta``) or None; every
    route takes them (:func:`cohstats.solvers.cd.kernel.cd_kernel_path`).
    """
    c_eng = c
    n, p = X.shape
    pf_plain = penalty_factor is None or np.all(np.asarray(penalty_factor, dtype=float) == 1.0)
    if kern is None and alpha == 0.0 and p > n and pf_plain:
        # p > n with the ridge penalty: the same problem in its n-dimensional representer form.
        # With standardised inputs Z, w_std = Z' beta minimises
        # (1/n) sum w_i V(y_i (b + z_i' w_std)) + lambda/2 ||w_std||^2 exactly when beta
        # minimises the kernel problem with K = Z Z' (the solution lies in the row space of Z),
        # so coordinate descent runs over n kernel coefficients instead of p >> n slopes.
        from cohstats.solvers.cd.path import standardize_design
        from cohstats.solvers.cd.kernel import cd_kernel_path

        wn = np.ascontiguousarray(w / np.mean(w), dtype=np.float64)
        Zt, center, scale, excl = standardize_design(X, wn, standardize=standardize, intercept=True)
        Zt = np.asarray(Zt)
        Zt[np.asarray(excl, dtype=bool)] = 0.0
        K = np.ascontiguousarray(Zt.T @ Zt)
        b0, Bk, info = cd_kernel_path(
            K, y, w, LOSS_LUM, a, c_eng, lambdas, 0.0, tol, max_iter, overwrite_K=True, offset=offset
        )
        B = (np.asarray(Bk) @ Zt.T) / np.asarray(scale)[None, :]
        b0 = np.asarray(b0) - B @ np.asarray(center)
        info = {k: np.asarray(v) for k, v in dict(info).items()}
        _kkt_gate(info, tol)
        return np.asarray(b0, dtype=np.float64), np.ascontiguousarray(B), info
    if kern is None:
        from cohstats.solvers.cd.path import cd_path

        # IRLS coordinate steps with the engine's KKT gate reach the optimum of exact coordinate
        # minimisation about 100x faster for soft and intermediate LUMs; for hard LUMs (c >= 100)
        # the engine's quadratic models use majorising curvatures (solvers/cd/lum_hard.py), which
        # are fast at every tolerance where exact minimisation stalls (bench_lum rows of
        # benchmarks/log.csv); the hinge limit c = inf has no curvature and stays exact. The
        # pure ridge at c >= 1000 (finite a, c; positive penalty factors) is solved in the dual by
        # coordinate ascent (solvers/cd/lum_dual.py), where single coordinates do not zigzag
        # along the hinge valley (bench_lum rows of benchmarks/log.csv)
        hard_ridge = alpha == 0.0 and c_eng >= _HARD_C
        pf_pos = penalty_factor is None or bool(np.all(np.asarray(penalty_factor, dtype=float) > 0.0))
        if hard_ridge and math.isfinite(c_eng) and math.isfinite(a) and pf_pos:
            from cohstats.solvers.cd.lum_dual import lum_ridge_dual_path

            b0, B, info = lum_ridge_dual_path(
                X,
                y,
                w,
                a,
                c_eng,
                lambdas,
                standardize=standardize,
                tol=tol,
                max_iter=max_iter,
                penalty_factor=penalty_factor,
                offset=offset,
            )
        else:
            mode = "irls" if (math.isfinite(c_eng) and not hard_ridge) else "exact"
            b0, B, info = cd_path(
                X,
                y,
                w,
                LOSS_LUM,
                a,
                c_eng,
                lambdas,
                alpha,
                standardize=standardize,
                tol=tol,
                max_iter=max_iter,
                penalty_factor=penalty_factor,
                intercept=True,
                mode=mode,
                offset=offset,
            )
    else:
        b0, B, info = _kernel_path(X, y, w, a, c_eng, lambdas, alpha, kern, tol, max_iter, gram, offset)
    info = {k: np.asarray(v) for k, v in dict(info).items()}
    _kkt_gate(info, tol)
    return np.asarray(b0, dtype=np.float64), np.asarray(B, dtype=np.float64), info


def _kernel_path(X, y, w, a, c, lambdas, alpha, kern, tol, max_iter, gram=None, offset=None):
    """The kernel LUM path on the one n x n kernel matrix of the training rows ``X``.

    The matrix is computed here (or lent by a tuner: ``gram``, a
    :class:`~cohstats.solvers.cd.kernel.LentKernel` checked by the caller), prepared once in
    place (symmetrised and centred; never copied) and used by the whole ``lambda`` path. Before
    it is released, the training decision values of every ``lambda`` are read from it
    (``info["train_decision"]``, nlam x n), so that the refitted-LUM probabilities, ``path()``
    and ``margin_stats()`` need no second n x n kernel evaluation of the training rows.
    """
    from cohstats.solvers.cd.kernel import LentKernel, cd_kernel_path

    lent = gram if gram is not None else LentKernel(np.ascontiguousarray(kern(X), dtype=np.float64), kern, X)
    b0, B, info = cd_kernel_path(lent, y, w, LOSS_LUM, a, c, lambdas, alpha, tol, max_iter, offset=offset)
    # K[j, i] = Xt[j, i] + m_j (K symmetric; lent.K holds the centred design Xt), so
    # f_l(x_j) = b0_l + sum_i K[j, i] B[l, i] = b0_l + (Xt B')_jl + m_j sum_i B[l, i]
    B = np.asarray(B, dtype=np.float64)
    F = (lent.K @ B.T).T
    F += np.asarray(b0, dtype=np.float64)[:, None]
    F += B.sum(axis=1)[:, None] * lent.m[None, :]
    info = dict(info, train_decision=F)
    return b0, B, info


# ============================================================================ the fit's steps
@dataclass
class _Problem:
    """What the path solver of a binary LUM fit needs, prepared from the settings and the design."""

    X: np.ndarray  # the engine's inputs: standardised rows, or their feature map (kernel_approx)
    y: np.ndarray
    w: np.ndarray
    a: float
    c: float
    alpha: float
    lambdas: np.ndarray  # the penalties of the path (decreasing)
    kern: object  # the kernel of an exact kernel expansion (None: linear engine)
    standardize: bool  # of the linear engine
    pf: object  # penalty factors (None: all one)
    gram: object  # a kernel matrix lent by a tuner (None: computed here)
    offset: object  # known offsets of the decision values (None: none)
    kernel: object  # the kernel of the result (also for kernel_approx)
    scaling: tuple  # (centres, scales) of the kernel's inputs, or (None, None)
    fmap: object = None  # the feature map of kernel_approx


def _prepare(design, s, gram) -> _Problem:
    """Settings and the two-class design -> the solver's inputs: the (standardised or
    feature-mapped) rows, the kernel, the penalty factors and the ``lambda`` sequence."""
    a, c, alpha = float(s.a), float(s.c), float(s.alpha)
    X = np.ascontiguousarray(design.X, dtype=np.float64)
    y = np.ascontiguousarray(design.y, dtype=np.float64)
    w = np.ascontiguousarray(design.weights, dtype=np.float64)
    n, p = X.shape
    kern = fmap = None
    xc = xs = None
    Xfit = X
    if s.kernel_approx is not None and s.kernel is None:
        raise ValueError("lum: kernel_approx approximates a kernel; give kernel= (e.g. 'rbf')")
    if s.kernel is not None:
        from cohstats.kernels import make_kernel
        from cohstats.scaling import column_scaling

        xc, xs = column_scaling(X, w, s.standardize)
        Xfit = (X - xc) / xs
        kern = make_kernel(
            s.kernel, Xfit, y, sigma=s.sigma, gamma=s.gamma, degree=s.degree, coef0=s.coef0, width="scale"
        )
        # a tuner may lend the kernel matrix of these rows (see cohstats.tuning.shared)
        check_lent(gram, kern, Xfit, "lum")
        if s.kernel_approx is not None:
            from cohstats.kernel_approx import feature_map

            fmap = feature_map(s.kernel_approx, kern, Xfit, n_components=s.n_components, random_state=s.random_state)
    pf = None
    if s.penalty_factor is not None:
        if kern is not None:
            raise ValueError("penalty_factor applies to the linear expansion only")
        pf = np.ascontiguousarray(s.penalty_factor, dtype=np.float64).ravel()
        if pf.shape != (p,) or np.any(pf < 0) or not np.all(np.isfinite(pf)):
            raise ValueError(f"penalty_factor must be {p} nonnegative finite numbers")
    Phi = fmap(Xfit) if fmap is not None else None
    if s.lambda_ is None:
        if kern is None:
            lambdas = _default_lambdas(
                X, y, w, a, c, alpha, int(s.nlambda), s.lambda_min_ratio, s.standardize, pf, design.offset
            )
        else:
            lambdas = LUM_LAMBDA_GRID.copy()
    else:
        lambdas = _check_lambda(s.lambda_)
    common = dict(y=y, w=w, a=a, c=c, alpha=alpha, lambdas=lambdas, offset=design.offset, kernel=kern)
    common.update(scaling=(xc, xs), fmap=fmap)
    if Phi is not None:  # the kernel LUM as a linear LUM on the feature map
        return _Problem(Phi, kern=None, standardize=False, pf=None, gram=None, **common)
    return _Problem(Xfit, kern=kern, standardize=s.standardize, pf=pf, gram=gram, **common)


def _solve(prob: _Problem, s):
    """The LUM path of the problem: ``(intercepts, coefficients, info)`` along ``prob.lambdas``."""
    return _fit_path(
        prob.X, prob.y, prob.w, prob.a, prob.c, prob.lambdas, prob.alpha, prob.kern, prob.standardize,
        float(s.tol), int(s.max_iter), prob.pf, prob.gram, prob.offset,
    )  # fmt: skip


def _recorded(s) -> dict:
    """The arguments a fit records (``fit.call``: its summary's call line)."""
    call = dict(a=float(s.a), c=float(s.c), alpha=float(s.alpha))
    if s.lambda_ is not None:
        call["lambda_"] = s.lambda_
    if s.kernel is not None:
        call["kernel"] = s.kernel if isinstance(s.kernel, str) else "callable"
    if s.standardize is not True:
        call["standardize"] = s.standardize
    if s.refit_on != "train":
        call["refit_on"] = s.refit_on
    if s.kernel_approx is not None:
        call["kernel_approx"] = s.kernel_approx
        call["n_components"] = s.n_components
    return call


def _result(design, prob: _Problem, solved, s) -> LumFit:
    """The solver's path -> the result; a warning names the ``lambda`` values that did not
    reach the optimum."""
    B0, B, info = solved
    info = dict(info)
    train_decision = info.pop("train_decision", None)
    lambdas, tol, max_iter = prob.lambdas, float(s.tol), int(s.max_iter)
    fit = LumFit._from_arrays(
        design,
        a=prob.a,
        c=prob.c,
        alpha=prob.alpha,
        kernel=prob.kernel,
        lambdas=lambdas,
        intercepts=B0,
        coefs=B,
        info=info,
        standardize=s.standardize,
        tol=tol,
        max_iter=max_iter,
        refit_on=s.refit_on,
        validation=s.validation,
        call=_recorded(s),
        scaling=prob.scaling,
        feature_map=prob.fmap,
        train_decision=train_decision,
    )
    _warn_unconverged(fit._info_converged, lambdas, info, max_iter, tol, stacklevel=5)
    return fit
