"""Large-margin unified machines (LUM) of Liu, Zhang & Wu (2011): soft to hard classification.

[LZW]. The LUM loss ``V_{a,c}`` (7.1) interpolates between soft classifiers
(``c = 0``: logistic-like, one-to-one link between ``f`` and ``P(Y = +1 | x)``) and hard ones
(``c -> inf``: the SVM hinge). Fits are penalised along a ``lambda`` path by the package's one
coordinate-descent engine (:func:`cohstats.solvers.cd.path.cd_path` for the linear expansion,
:func:`cohstats.solvers.cd.kernel.cd_kernel_path` for kernels). Probabilities come from the LUM
inverse link (7.2) or, by default, from the refitted LUM (7.3). ``c="tuned"`` gives the tuned
LUM of 7.5.

Responses with K > 2 classes are fitted by the angle-based multicategory LUM (C. Zhang and
Y. Liu, *Multicategory angle-based large-margin classification*, Biometrika 101 (2014)
625-640) with the LUM loss, on the same engine (:mod:`cohstats.solvers.cd.angle`); its
probabilities come from the inverse link derived in :mod:`cohstats.losses.angle`.

Public functions: :func:`lum`, :func:`tune_lum`, :func:`lum_link`, :func:`lum_refit`,
:func:`lum_refit_angle`.
"""

from __future__ import annotations

import math
import warnings
from numbers import Real as _Number

import numpy as np
import pandas as pd

from cohstats.losses.binary import lum_link  # the one LUM inverse link (re-exported here)
from cohstats.losses.scalar import LOSS_LUM
from cohstats.solvers.cd.lum_refit import lum_refit_newton
from cohstats.tuning.shared import check_lent, cross_kernel, rows_only_kernel
from cohstats.validation import (
    AnyOf,
    Bool,
    Callable,
    FitSpec,
    Integer,
    NoneOr,
    Options,
    Real,
    Reals,
    check_kernel_args,
    fit_function,
)

__all__ = [
    "lum",
    "tune_lum",
    "lum_link",
    "lum_refit",
    "lum_refit_angle",
    "refit_coef_table",
    "LumFit",
    "LumMultiFit",
    "LUM_LAMBDA_GRID",
]

#: tuned-LUM penalty grid: 25 values 10^2, 10^1.75, ..., 10^-4 (decreasing).
LUM_LAMBDA_GRID = 10.0 ** np.linspace(2.0, -4.0, 25)

_HARD_C = 1000.0  # c at or above which the LUM is indistinguishable from the SVM (7.1)


def _convergence_warning():
    from cohstats.exceptions import ConvergenceWarning

    return ConvergenceWarning


# --------------------------------------------------------------------------- link
# the LUM inverse link is the loss library's (one definition): cohstats.losses.lum_link


def _check_ac(a, c):
    if isinstance(a, bool) or not isinstance(a, _Number) or not (a > 0):
        raise ValueError(f"a must be a positive number (np.inf allowed); got a={a!r}")
    if isinstance(c, bool) or not isinstance(c, _Number) or not (c >= 0):
        raise ValueError(f"c must be a nonnegative number (np.inf allowed) or 'tuned'; got c={c!r}")
    return float(a), float(c)


# --------------------------------------------------------------------------- refit
def _warn_separable_path(nsep: int, nlam: int) -> None:
    """One warning for the lambda values whose refit sample is separated by the first stage."""
    if nsep:
        warnings.warn(
            f"refitted LUM: at {nsep} of {nlam} lambda values the first-stage decision values "
            "separate the refit sample; a 1e-6 ridge was added there",
            _convergence_warning(),
            stacklevel=3,
        )


def _separable_1d(f, y, w) -> bool:
    """True if a threshold on ``f`` separates the classes (weakly), so the refit is unbounded."""
    m = w > 0
    f, y = f[m], y[m]
    fp, fn = f[y > 0], f[y < 0]
    if fp.size == 0 or fn.size == 0:
        return True
    return bool(fn.max() <= fp.min() or fp.max() <= fn.min())


def lum_refit(f1, y, a: float, weights=None, *, tol: float = 1e-10, max_iter: int = 200, warn: bool = True) -> dict:
    """Refitted LUM (eq (9) of [LZW]): ``f2 = g0 + g1 f1`` with ``c = 0``, same ``a``.

    Minimises ``(1/n) sum_i w_i V_{a,0}(y_i (g0 + g1 f1_i))`` without penalty by Newton's method
    with backtracking. If a threshold on ``f1`` separates the two classes the minimum is not
    attained (``|g1| -> inf``); then the penalty ``1e-6 (g0^2 + g1^2)/2`` is added and a
    :class:`cohstats.ConvergenceWarning` is emitted.

    Parameters
    ----------
    f1 : array_like (n,), first-stage decision values.
    y : array_like (n,), labels coded -1/+1.
    a : float, LUM shape of the first stage (``np.inf`` allowed).
    weights : array_like (n,) or None, nonnegative case weights.
    tol, max_iter : Newton tolerance on the gradient and iteration limit.
    warn : bool, emit the separability warning.

    Returns
    -------
    dict with ``g0``, ``g1``, ``converged``, ``n_iter``, ``objective``, ``separable`` and
    ``cov``, the 2 x 2 sandwich covariance of ``(g0, g1)`` (Huber's M-estimation covariance;
    the refit is not a likelihood fit, so a GLM's model-based errors would describe another
    model). :func:`refit_coef_table` turns it into a table with intervals.

    Examples
    --------
    >>> import numpy as np
    >>> from cohstats.models.lum import lum_refit
    >>> rng = np.random.default_rng(0)
    >>> f = rng.normal(size=200)
    >>> y = np.where(rng.random(200) < 1 / (1 + np.exp(-3 * f)), 1.0, -1.0)
    >>> r = lum_refit(0.1 * f, y, a=1e6)   # a first stage shrunk by a factor 30
    >>> bool(r["g1"] > 10)
    True
    """
    f1 = np.ascontiguousarray(f1, dtype=np.float64).ravel()
    y = np.ascontiguousarray(y, dtype=np.float64).ravel()
    if f1.shape != y.shape:
        raise ValueError(f"f1 and y must have the same length; got {f1.size} and {y.size}")
    if not np.all(np.isin(y, (-1.0, 1.0))):
        raise ValueError("y must be coded -1/+1")
    if not np.all(np.isfinite(f1)):
        raise ValueError("f1 contains non-finite decision values")
    a = float(a)
    if not a > 0:
        raise ValueError(f"a must be positive; got a={a!r}")
    w = np.ones_like(f1) if weights is None else np.ascontiguousarray(weights, dtype=np.float64)
    if w.shape != f1.shape or np.any(w < 0) or not np.all(np.isfinite(w)):
        raise ValueError("weights must be nonnegative, finite and of the same length as f1")
    separable = _separable_1d(f1, y, w)
    # constant first-stage values (e.g. every predictor constant) leave g1 unidentified but
    # g0 + g1 f bounded: no separation; the small ridge only picks one minimiser
    flat = bool(np.ptp(f1[w > 0]) == 0) if np.any(w > 0) else True
    ridge = 1e-6 if separable or flat else 0.0
    if separable and not flat and warn:
        warnings.warn(
            "refitted LUM: the first-stage decision values separate the classes, so "
            "the unpenalised refit has no minimiser; added the penalty "
            "1e-6 (g0^2 + g1^2)/2 (probabilities will be close to 0/1). "
            "Use refit_on='validation' or a larger lambda_.",
            _convergence_warning(),
            stacklevel=2,
        )
    g0, g1, it, ok, F = lum_refit_newton(f1, y, w, a, ridge, tol, max_iter)
    if not ok and warn:
        warnings.warn(
            f"refitted LUM: Newton did not reach tol={tol:g} in max_iter={max_iter} iterations; increase max_iter",
            _convergence_warning(),
            stacklevel=2,
        )
    cov = np.full((2, 2), np.nan) if separable else _refit_sandwich(f1, y, w, a, g0, g1)
    return {
        "g0": float(g0),
        "g1": float(g1),
        "converged": bool(ok),
        "n_iter": int(it),
        "objective": float(F),
        "separable": separable,
        "cov": cov,
    }


def _refit_sandwich(f1, y, w, a, g0, g1):
    """Sandwich covariance ``A^-1 B A^-1`` of the refit ``(g0, g1)`` as an M-estimator.

    The refit minimises ``sum_i w_i V(y_i (g0 + g1 f1_i))``, not a likelihood (the LUM loss with
    ``c = 0`` is linear for negative margins), so the model-based covariance of a GLM does not
    apply; the estimating equations ``sum_i w_i psi_i = 0`` with
    ``psi_i = V'(m_i) y_i (1, f1_i)`` give ``A = sum_i w_i V''(m_i) x_i x_i'`` and
    ``B = sum_i w_i^2 V'(m_i)^2 x_i x_i'`` (Huber's sandwich, the ``HC0`` covariance of
    statsmodels). NaN when ``A`` is singular (no margin on the curved piece of the loss) and
    for separable first stages (the refit then has no minimiser).
    """
    from cohstats.losses import get_loss

    loss = get_loss("lum", a=a, c=0.0)
    m = y * (g0 + g1 * f1)
    d1 = loss.d1(m)
    d2 = loss.d2(m)
    Z = np.column_stack([np.ones_like(f1), f1])
    A = (Z * (w * d2)[:, None]).T @ Z
    B = (Z * (w * w * d1 * d1)[:, None]).T @ Z
    try:
        Ai = np.linalg.inv(A)
    except np.linalg.LinAlgError:
        return np.full((2, 2), np.nan)
    if not np.all(np.isfinite(Ai)) or np.linalg.cond(A) > 1e14:
        return np.full((2, 2), np.nan)
    return Ai @ B @ Ai


def refit_coef_table(r: dict, level: float = 0.95) -> pd.DataFrame:
    """The refitted-LUM scale ``(g0, g1)`` as a coefficient table with sandwich standard errors.

    Columns ``coef``, ``std err``, ``z``, ``P>|z|`` and the Wald interval at ``level`` (the
    layout of statsmodels' summaries). The standard errors are the M-estimation (sandwich)
    errors of :func:`lum_refit` (the refit minimises the LUM loss, not a likelihood).
    """
    from scipy import stats

    est = np.array([r["g0"], r["g1"]])
    se = np.sqrt(np.diag(np.asarray(r["cov"], dtype=np.float64)))
    with np.errstate(divide="ignore", invalid="ignore"):
        z = est / se
    q = stats.norm.ppf(0.5 + level / 2)
    lo_name, hi_name = f"[{(1 - level) / 2:g}", f"{(1 + level) / 2:g}]"
    return pd.DataFrame(
        {
            "coef": est,
            "std err": se,
            "z": z,
            "P>|z|": 2 * stats.norm.sf(np.abs(z)),
            lo_name: est - q * se,
            hi_name: est + q * se,
        },
        index=["g0 (intercept)", "g1 (scale of f1)"],
    )


# --------------------------------------------------------------------------- validation
def _penalty_name(alpha: float) -> str:
    """The penalty by its usual name: ridge (alpha = 0, [LZW]), lasso (1) or elastic net."""
    if alpha == 0.0:
        return "ridge (alpha = 0)"
    if alpha == 1.0:
        return "lasso (alpha = 1)"
    return f"elastic net (alpha = {alpha:g})"


def _check_lambda(lambda_):
    lam = np.atleast_1d(np.asarray(lambda_, dtype=np.float64)).ravel()
    if lam.size == 0 or not np.all(np.isfinite(lam)) or np.any(lam <= 0):
        raise ValueError(f"lambda_ must be positive finite number(s); got lambda_={lambda_!r}")
    return np.sort(lam)[::-1].copy()


def _to_design(formula, data, weights, subset, na_action, context=None):
    from cohstats.formula import Design, build_design

    if isinstance(formula, Design):
        if data is not None:
            raise ValueError("data must be None when a Design is passed as formula")
        return build_design(formula, weights=weights, subset=subset)
    if isinstance(formula, str):
        return build_design(formula, data, weights=weights, subset=subset, na_action=na_action, context=context)
    if data is None:
        raise TypeError(
            "lum() needs a formula string with data, a Design, or arrays X, y "
            f"(got formula of type {type(formula).__name__} and data=None)"
        )
    return build_design(formula, data, weights=weights, subset=subset, na_action=na_action)


def _new_xy(design, newdata):
    """(X, y) of a held-out sample: a DataFrame with the response column, or a tuple (X, y)."""
    if isinstance(newdata, tuple) and len(newdata) == 2:
        X = design.new_X(newdata[0])
        y = design.code_y(newdata[1])
    elif isinstance(newdata, pd.DataFrame):
        X = design.new_X(newdata)
        if design.yname not in newdata.columns:
            raise ValueError(f"validation data lack the response column {design.yname!r}")
        y = design.code_y(newdata[design.yname])
    else:
        raise TypeError(
            "validation must be a DataFrame holding the response column or a tuple "
            f"(X, y); got {type(newdata).__name__}"
        )
    return np.ascontiguousarray(X, dtype=np.float64), np.asarray(y, dtype=np.float64)


def _default_lambdas(X, y, w, a, c, alpha, nlambda, lambda_min_ratio, standardize, penalty_factor):
    """glmnet-style path: lambda_max from the engine, ``nlambda`` log-spaced values.

    For the ridge penalty (alpha = 0) ``lambda_max`` is infinite; as glmnet does, the start
    is the value for ``alpha = 1e-3`` and, because the LUM/SVM solutions of interest need
    little shrinkage, the default ratio is ``1e-6`` then (documented in :func:`lum`).
    """
    from cohstats.solvers.cd.path import lambda_max

    n, p = X.shape
    a_eff = max(alpha, 1e-3)
    lmax = float(lambda_max(X, y, w, LOSS_LUM, a, c, a_eff, standardize=standardize, penalty_factor=penalty_factor))
    if not (np.isfinite(lmax) and lmax > 0):
        lmax = 1.0
    if lambda_min_ratio is None:
        lambda_min_ratio = 1e-6 if alpha == 0.0 else (1e-4 if n > p else 1e-2)
    if not (0 < lambda_min_ratio < 1):
        raise ValueError(f"lambda_min_ratio must be in (0, 1); got {lambda_min_ratio!r}")
    return lmax * np.geomspace(1.0, lambda_min_ratio, int(nlambda))


# --------------------------------------------------------------------------- fitting
def _fit_path(X, y, w, a, c, lambdas, alpha, kern, standardize, tol, max_iter, penalty_factor, gram=None):
    """Run the engine; returns intercepts (nlam,), coefficients (nlam, p or n), info dict.

    Kernel expansions: ``gram`` is a kernel matrix lent by a tuner (see :func:`_kernel_path`).
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
        b0, Bk, info = cd_kernel_path(K, y, w, LOSS_LUM, a, c_eng, lambdas, 0.0, tol, max_iter, overwrite_K=True)
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
        # are fast at every tolerance where exact minimisation stalls (benchmarks/README.md,
        # "Hard LUM (session 8)"); the hinge limit c = inf has no curvature and stays exact. The
        # pure ridge at c >= 1000 (finite a, c; positive penalty factors) is solved in the dual by
        # coordinate ascent (solvers/cd/lum_dual.py), where single coordinates do not zigzag
        # along the hinge valley (benchmarks/README.md, "Ridge LUM at c >= 1000 (session 9)")
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
            )
    else:
        b0, B, info = _kernel_path(X, y, w, a, c_eng, lambdas, alpha, kern, tol, max_iter, gram)
    info = {k: np.asarray(v) for k, v in dict(info).items()}
    _kkt_gate(info, tol)
    return np.asarray(b0, dtype=np.float64), np.asarray(B, dtype=np.float64), info


def _kernel_path(X, y, w, a, c, lambdas, alpha, kern, tol, max_iter, gram=None):
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
    b0, B, info = cd_kernel_path(lent, y, w, LOSS_LUM, a, c, lambdas, alpha, tol, max_iter)
    # K[j, i] = Xt[j, i] + m_j (K symmetric; lent.K holds the centred design Xt), so
    # f_l(x_j) = b0_l + sum_i K[j, i] B[l, i] = b0_l + (Xt B')_jl + m_j sum_i B[l, i]
    B = np.asarray(B, dtype=np.float64)
    F = (lent.K @ B.T).T
    F += np.asarray(b0, dtype=np.float64)[:, None]
    F += B.sum(axis=1)[:, None] * lent.m[None, :]
    info = dict(info, train_decision=F)
    return b0, B, info


def _kkt_gate(info: dict, tol: float) -> None:
    """A lambda counts as converged only if its exact KKT violation is small as well.

    The engine stops on coordinate changes; near the hinge limit (large ``c``) those can stall
    far from the optimum. The bound is ten times the engine's own in-pass KKT gate,
    ``sqrt(tol * obj0)`` with ``obj0`` the intercept-only objective.
    """
    kkt = np.asarray(info.get("kkt", np.full(np.size(info.get("converged", 0)), np.nan)), dtype=float)
    obj = np.asarray(info.get("objective", np.nan), dtype=float)
    obj0 = float(info.get("null_objective", np.nanmax(obj) if obj.size else 1.0))
    bound = 10.0 * math.sqrt(tol * max(obj0, 1e-12))
    ok = ~(kkt > bound)  # NaN (not computed) does not veto
    info["converged"] = np.asarray(info["converged"], dtype=bool) & ok
    info["kkt_bound"] = bound


_PARAMS = {
    "a": Real(0.0, closed="neither", allow_inf=True),
    "c": AnyOf(Real(0.0, allow_inf=True), Options("tuned")),
    "lambda_": NoneOr(Reals(Real(0.0, closed="neither"))),
    "nlambda": Integer(1),
    "lambda_min_ratio": NoneOr(Real(0.0, 1.0, closed="right")),
    "alpha": Real(0.0, 1.0),
    "kernel": NoneOr(AnyOf(Options("linear", "rbf", "poly"), Callable())),
    "gamma": NoneOr(AnyOf(Real(0.0, closed="neither"), Options("scale", "auto", "median", "mean"))),
    "sigma": NoneOr(Real(0.0, closed="neither")),
    "degree": Integer(1),
    "coef0": Real(),
    "standardize": Bool(),
    "na_action": Options("omit", "raise"),
    "refit_on": Options("train", "validation"),
    "tol": Real(0.0, closed="neither"),
    "max_iter": Integer(1),
    "nfolds": Integer(2),
    "kernel_approx": NoneOr(Options("nystroem", "rff")),
    "n_components": Integer(1),
}
_DECLARED = FitSpec("lum", path_args=("lambda_",), multiclass=True, probabilities=True, default_measure="deviance")


@fit_function(
    _DECLARED,
    _PARAMS,
    renamed={
        "penalty": "'alpha' in cohstats (the l1 share: penalty='l2' is alpha=0, 'l1' is alpha=1)",
        "s": "chosen after fitting in cohstats: fit.select(s) or predict(..., s=)",
    },
)
def lum(
    formula,
    data=None,
    *,
    a: float = 1000.0,
    c=0.0,
    lambda_=None,
    nlambda: int = 100,
    lambda_min_ratio: float | None = None,
    alpha: float = 0.0,
    kernel=None,
    gamma=None,
    sigma: float | None = None,
    degree: int = 3,
    coef0: float = 1.0,
    standardize: bool = True,
    weights=None,
    subset=None,
    na_action: str = "omit",
    penalty_factor=None,
    validation=None,
    refit_on: str = "train",
    tol: float = 1e-7,
    max_iter: int = 10000,
    nfolds: int = 10,
    random_state=0,
    kernel_approx=None,
    n_components: int = 300,
    _gram=None,
    _context=None,
) -> "LumFit":
    """Large-margin unified machine (LUM) along a penalty path ([LZW]).

    Minimises ``(1/n) sum_i w_i V_{a,c}(y_i f(x_i)) + lambda * J(f)`` over a decreasing
    ``lambda`` sequence (warm starts), with ``f(x) = b + x'beta`` and
    ``J = sum_j pf_j ((1-alpha)/2 beta_j^2 + alpha |beta_j|)`` (the default ``alpha = 0`` is the
    paper's ridge ``(lambda/2)||beta||^2``), or ``f(x) = b + sum_j beta_j K(x_j, x)`` and
    ``J = (lambda/2) beta'K beta`` for a kernel. The intercept is never penalised.

    More than two classes (angle-based multicategory LUM; Zhang & Liu 2014): the K classes
    are coded by the vertices ``W_1..W_K`` of a regular simplex in ``R^{K-1}`` (unit vectors
    summing to zero, :func:`cohstats.losses.angle.simplex_vertices`; ``classes[k]`` is
    ``W_{k+1}``), ``f(x) = b + B'x`` in ``R^{K-1}`` and the objective is
    ``(1/n) sum_i w_i V_{a,c}(<f(x_i), W_{y_i}>) + lambda sum_j pf_j ((1-alpha)/2 ||B_j||^2 +
    alpha ||B_j||)`` with ``B_j`` the row of predictor ``j`` (a grouped penalty, invariant under
    rotations of the simplex, so a predictor enters for all classes at once). The predicted
    class maximises the class margin ``u_k = <f, W_k>``; ``coef`` and ``intercept`` are those
    of the class margins (terms x classes, rows summing to zero; ``fit.coef_simplex`` gives
    ``B`` itself). With K = 2 the coding is ``W = (1, -1)`` and the model is the binary LUM.
    Linear expansion only; ``c`` must be finite, and for large ``c`` (100 and more) the block
    steps, majorised with the LUM's curvature bound ``(a+1)(1+c)/a``, converge slowly (raise
    ``max_iter``; unconverged lambdas are reported by a warning). Probabilities: from the stationarity of the
    population risk, ``sum_j p_j V'(u_j) W_j = 0``, and ``sum_j W_j = 0`` being the vertices'
    only linear relation, ``p_j`` is proportional to ``1/|V'(u_j)|``
    (:func:`cohstats.losses.angle.angle_lum_proba`, computed in log space). This inverse link
    recovers ``p`` at the population minimiser for every finite ``c``; for ``c > 0`` it is
    flat wherever several margins lie below ``c/(1+c)``, so, as for two classes, the soft LUM
    (``c = 0``) is the one for probabilities. ``predict(type="prob", method=)``: ``"lum"``
    (the inverse link; default for ``c = 0``, where it measured more accurate than the refit)
    or ``"refit"`` (default for ``c > 0``: ``f2 = g0 + g1 f`` refitted with ``c = 0``,
    :func:`lum_refit_angle`, the K-class form of [LZW] eq (9)). ``c="tuned"`` is for two
    classes; choose ``c`` for K > 2 with :func:`cohstats.tune`.

    Special cases: ``c = 0`` soft (``a -> inf``: the hinge/exponential hybrid, logistic link);
    ``a = c = 1`` distance-weighted discrimination (DWD); ``c -> inf`` (``c = np.inf``; in
    practice ``c >= 1000``) the SVM with ``C = 1/(n lambda)``.

    Solver: the coordinate-descent engine of :mod:`cohstats.solvers.cd.path`, linear expansion:
    IRLS coordinate steps (proximal Newton with step halving, objective monotone) for every finite
    ``c`` except the pure ridge (``alpha = 0``) at ``c >= 1000``; for hard LUMs (``c >= 100``)
    the quadratic models use the majorising curvatures of SVM-Maj (Groenen, Nalbantov and Bioch
    2008) and the passes over the active set are replaced by joint Newton steps with a line
    search (:mod:`cohstats.solvers.cd.lum_hard`), which follow the valley of the near-hinge
    objective that single coordinates cannot; ``c = inf`` uses exact coordinate minimisation.
    The pure ridge at finite ``c >= 1000`` (finite ``a``, positive penalty factors) is solved in
    its Fenchel dual by exact coordinate ascent (the dual coordinate method of Hsieh et al. 2008
    for linear SVMs, with the intercept's equality constraint by an augmented Lagrangian;
    :mod:`cohstats.solvers.cd.lum_dual`): the dual objective never decreases along a pass, and
    the primal iterates are judged by their exact KKT residual (intercept included). A
    ``lambda`` is reported converged only when its exact KKT
    violation is within ``10 sqrt(tol * obj0)`` (``obj0`` the intercept-only objective). With the
    ridge penalty and more columns than rows
    (``p > n``), the same problem is solved in its n-dimensional representer form
    (``beta = Z' theta`` for standardised inputs ``Z``, kernel ``Z Z'``), which is exact and much
    faster there.

    Parameters
    ----------
    formula : str, Design, or array X
        ``"y ~ x1 + x2"`` with ``data``; a :class:`cohstats.formula.Design`; or ``X`` with the
        labels passed as ``data``. Two levels: the second level (in the order of ``classes``) is
        coded +1. More levels: the angle-based multicategory LUM (above).
    data : DataFrame or labels.
    a : float > 0, default 1000. LUM shape (``np.inf`` allowed).
    c : float >= 0 or "tuned", default 0. ``c = 0`` soft, large ``c`` hard; ``"tuned"`` chooses
        ``c in {0, 10000}`` and ``lambda`` (see :func:`tune_lum`).
    lambda_ : float or sequence, optional. Default: ``nlambda`` values from the engine's
        ``lambda_max`` (for ``alpha = 0``: its value at ``alpha = 1e-3``, as glmnet) down to
        ``lambda_min_ratio`` times it (default ``1e-6`` for the ridge penalty, so that the
        path reaches the lightly penalised SVM-like fits; glmnet's ``1e-4``/``1e-2`` otherwise).
    alpha : l1 share of the elastic net in [0, 1] (glmnet's ``alpha``); default 0, the ridge
        penalty of [LZW]; 1 is the lasso.
    kernel : None (default: the primal linear model, coefficients on x), or ``"linear"``,
        ``"rbf"``, ``"poly"`` or a callable ``k(X, Z)`` (kernel expansion over the training
        points).
    gamma, sigma : kernel width ``exp(-gamma ||x-x'||^2)``, ``gamma = 1/sigma^2``; ``gamma`` a
        number or ``"scale"`` (default, ``1/(p Var X)`` as scikit-learn), ``"auto"``, ``"mean"``,
        ``"median"`` (see :func:`cohstats.kernels.resolve_gamma`). ``degree``, ``coef0``:
        polynomial kernel.
    kernel_approx : None (default: the exact n x n kernel), ``"nystroem"`` or ``"rff"``: fit the
        kernel LUM as a linear LUM on an n x ``n_components`` feature map whose inner products
        approximate the kernel (:mod:`cohstats.kernel_approx`), in O(n r) memory -- for n
        beyond about 10^4. With the ridge penalty and every training row a landmark the
        Nystroem fit equals the exact kernel fit.
    n_components : r, landmarks (Nystroem) or random features (rff); default 300. The
        landmarks are drawn with ``random_state``.
    standardize : bool, default True. Kernel expansions: the inputs are standardised before
        the kernel (as e1071). Linear expansion: penalise the coefficients of
        standardised columns (glmnet); coefficients are reported on the original scale. Use
        ``False`` for the literal [LZW] objective on the raw features.
    weights, subset, na_action : passed to the design.
    penalty_factor : per-column penalty multipliers (linear expansion).
    validation : DataFrame (with the response) or tuple ``(X, y)``, optional. Used by
        ``refit_on="validation"`` and by ``c="tuned"``.
    refit_on : {"train", "validation"}. Sample on which the refitted-LUM scale ``(g0, g1)`` is
        estimated (the paper refits on the training sample).
    tol, max_iter : engine tolerance and sweep limit.
    nfolds, random_state : cross-validation for ``c="tuned"`` without ``validation``.

    Returns
    -------
    LumFit (two classes) or LumMultiFit (K > 2 classes)

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> import cohstats as cs
    >>> rng = np.random.default_rng(1)
    >>> df = pd.DataFrame(rng.normal(size=(200, 2)), columns=["x1", "x2"])
    >>> df["y"] = np.where(df.x1 + df.x2 + rng.normal(size=200) > 0, "yes", "no")
    >>> fit = cs.lum("y ~ x1 + x2", df, a=1000, c=0, lambda_=0.01)
    >>> p = fit.predict(df.head(3), type="prob")          # refitted-LUM probabilities
    >>> bool(np.allclose(p.sum(axis=1), 1.0))
    True
    >>> df["z"] = pd.cut(df.x1 - df.x2 + rng.normal(size=200), [-9, -0.7, 0.7, 9],
    ...                  labels=["low", "mid", "high"])
    >>> mfit = cs.lum("z ~ x1 + x2", df)                  # K = 3: angle-based LUM
    >>> list(mfit.predict(df.head(2), type="prob").columns)
    ['low', 'mid', 'high']
    """
    if isinstance(formula, str) and _context is None:
        from cohstats.formula import capture_context

        _context = capture_context(1)
    check_kernel_args(kernel, gamma=gamma, sigma=sigma, degree=degree, coef0=coef0, fn="lum")
    if _gram is not None and (kernel is None or kernel_approx is not None or isinstance(c, str)):
        raise ValueError("lum: a lent kernel matrix (_gram) needs an exact kernel expansion and a number c")
    if isinstance(c, str):
        return tune_lum(
            formula,
            data,
            a=a,
            lambda_=lambda_,
            alpha=alpha,
            kernel=kernel,
            sigma=sigma,
            gamma=gamma,
            degree=degree,
            coef0=coef0,
            standardize=standardize,
            weights=weights,
            subset=subset,
            na_action=na_action,
            penalty_factor=penalty_factor,
            validation=validation,
            refit_on=refit_on,
            tol=tol,
            max_iter=max_iter,
            nfolds=nfolds,
            random_state=random_state,
            _context=_context,
        )
    a, c = _check_ac(a, c)
    alpha, tol, nlambda, max_iter = float(alpha), float(tol), int(nlambda), int(max_iter)
    if refit_on == "validation" and validation is None:
        raise ValueError("lum(refit_on='validation') needs the validation= sample")
    design = _to_design(formula, data, weights, subset, na_action, _context)
    from cohstats.formula import refuse_no_intercept

    refuse_no_intercept(design, "lum", "fits decision values with an intercept (and refits g0 + g1 f)")
    if not design.binary:
        if kernel is not None or kernel_approx is not None:
            raise ValueError(
                f"lum: kernel expansions are available for two classes only; the "
                f"response {design.yname!r} has {design.n_classes} levels "
                f"{list(design.classes)}: use kernel=None (the linear angle-based LUM)"
            )
        return _lum_angle(
            design,
            a=a,
            c=c,
            lambda_=lambda_,
            nlambda=nlambda,
            lambda_min_ratio=lambda_min_ratio,
            alpha=alpha,
            standardize=standardize,
            penalty_factor=penalty_factor,
            validation=validation,
            refit_on=refit_on,
            tol=tol,
            max_iter=max_iter,
        )
    X = np.ascontiguousarray(design.X, dtype=np.float64)
    y = np.ascontiguousarray(design.y, dtype=np.float64)
    w = np.ascontiguousarray(design.weights, dtype=np.float64)
    n, p = X.shape
    kern = fmap = None
    xc = xs = None
    Xfit = X
    if kernel_approx is not None and kernel is None:
        raise ValueError("lum: kernel_approx approximates a kernel; give kernel= (e.g. 'rbf')")
    if kernel is not None:
        from cohstats.kernels import make_kernel
        from cohstats.scaling import column_scaling

        xc, xs = column_scaling(X, w, standardize)
        Xfit = (X - xc) / xs
        kern = make_kernel(kernel, Xfit, y, sigma=sigma, gamma=gamma, degree=degree, coef0=coef0, width="scale")
        # a tuner may lend the kernel matrix of these rows (see cohstats.tuning.shared)
        check_lent(_gram, kern, Xfit, "lum")
        if kernel_approx is not None:
            from cohstats.kernel_approx import feature_map

            fmap = feature_map(kernel_approx, kern, Xfit, n_components=n_components, random_state=random_state)
    pf = None
    if penalty_factor is not None:
        if kern is not None:
            raise ValueError("penalty_factor applies to the linear expansion only")
        pf = np.ascontiguousarray(penalty_factor, dtype=np.float64).ravel()
        if pf.shape != (p,) or np.any(pf < 0) or not np.all(np.isfinite(pf)):
            raise ValueError(f"penalty_factor must be {p} nonnegative finite numbers")
    Phi = fmap(Xfit) if fmap is not None else None
    if lambda_ is None:
        if kern is None:
            lambdas = _default_lambdas(X, y, w, a, c, alpha, nlambda, lambda_min_ratio, standardize, pf)
        else:
            lambdas = LUM_LAMBDA_GRID.copy()
    else:
        lambdas = _check_lambda(lambda_)
    if Phi is not None:  # the kernel LUM as a linear LUM on the feature map
        B0, B, info = _fit_path(Phi, y, w, a, c, lambdas, alpha, None, False, tol, max_iter, None)
    else:
        B0, B, info = _fit_path(Xfit, y, w, a, c, lambdas, alpha, kern, standardize, tol, max_iter, pf, _gram)
    train_decision = info.pop("train_decision", None)
    call = dict(a=a, c=c, alpha=alpha)
    if lambda_ is not None:
        call["lambda_"] = lambda_
    if kernel is not None:
        call["kernel"] = kernel if isinstance(kernel, str) else "callable"
    if standardize is not True:
        call["standardize"] = standardize
    if refit_on != "train":
        call["refit_on"] = refit_on
    if kernel_approx is not None:
        call["kernel_approx"] = kernel_approx
        call["n_components"] = n_components
    fit = LumFit._from_arrays(
        design,
        a=a,
        c=c,
        alpha=alpha,
        kernel=kern,
        lambdas=lambdas,
        intercepts=B0,
        coefs=B,
        info=info,
        standardize=standardize,
        tol=tol,
        max_iter=max_iter,
        refit_on=refit_on,
        validation=validation,
        call=call,
        scaling=(xc, xs),
        feature_map=fmap,
        train_decision=train_decision,
    )
    if not np.all(fit._info_converged):
        bad = lambdas[~fit._info_converged]
        warnings.warn(
            f"lum: {bad.size} of {lambdas.size} lambda values did not reach the optimum "
            f"(iteration cap, or a KKT violation above {info.get('kkt_bound', 0):.2g}; "
            f"smallest such lambda {bad.min():.3g}); increase max_iter (now {max_iter}) "
            f"or loosen tol (now {tol:g})",
            _convergence_warning(),
            stacklevel=3,
        )
    return fit


def _fold_kernel(design, args: dict):
    """The kernel of ``lum(design, **args)`` when it depends on the rows only, else None.

    Two classes, a number ``c``, and an exact kernel expansion on unstandardised inputs with a
    width that does not look at the data (:func:`cohstats.tuning.shared.rows_only_kernel`); the
    tuners of :mod:`cohstats.tuning` then compute that matrix once for all their fits (also for
    every ``c`` of the tuned LUM).
    """
    if isinstance(args.get("c", 0.0), str) or not design.binary:
        return None
    return rows_only_kernel(design, args, "lum")


lum.fold_kernel = _fold_kernel


# --------------------------------------------------------------------------- result
def _interp_weights(lambdas, s):
    """Indices (k0, k1) and weight t such that coef(s) = (1-t) coef[k0] + t coef[k1].

    ``lambdas`` is decreasing; ``s`` outside the fitted range is clamped to its ends.
    """
    nl = lambdas.size
    if nl == 1 or s >= lambdas[0]:
        return 0, 0, 0.0
    if s <= lambdas[-1]:
        return nl - 1, nl - 1, 0.0
    k1 = int(np.searchsorted(-lambdas, -s, side="left"))  # first index with lambda <= s
    if lambdas[k1] == s:
        return k1, k1, 0.0
    k0 = k1 - 1
    t = (lambdas[k0] - s) / (lambdas[k0] - lambdas[k1])
    return k0, k1, float(t)


def _fit_base():
    from cohstats.results import Fit

    return Fit


class LumFit(_fit_base()):
    """Result of :func:`lum`: a LUM path with refitted-LUM probabilities.

    Attributes
    ----------
    a, c : loss parameters. lambda_ : fitted penalty sequence (decreasing). s : selected lambda.
    alpha, penalty, kernel : penalty and expansion. converged, n_iter : engine diagnostics at s.
    tuning : DataFrame of validation/CV errors when built by :func:`tune_lum` (else None).
    """

    method = "lum"
    title = "Large-margin unified machine"
    path_var = "lambda"
    path_arg = "lambda_"
    _predict_options = ("method",)

    def _beta(self):
        return self._coef_at(None)[0]

    @property
    def coef(self):
        """Coefficients by term at ``s`` (linear model); None for kernel expansions."""
        if self.kernel is not None:
            return None
        return super().coef

    @property
    def dual_coef(self):
        """Kernel expansions: ``beta`` of the support points at ``s`` (rows: training-row labels);
        None for the linear model and for feature-map approximations."""
        if self.kernel is None or self._fmap is not None:
            return None
        beta = self._beta()
        sup = np.flatnonzero(beta)
        return pd.DataFrame({"dual_coef": beta[sup]}, index=self._index(None, beta.size)[sup])

    @property
    def support_(self):
        """Kernel expansions: positions of the training rows with ``beta != 0`` at ``s``."""
        if self.kernel is None or self._fmap is not None:
            return None
        return np.flatnonzero(self._beta())

    def _repr_extra(self) -> str:
        return f"a={self.a:g}, c={self.c:g}, lambda={self._s:.4g}"

    # ----------------------------------------------------------------- construction
    @classmethod
    def _from_arrays(
        cls,
        design,
        *,
        a,
        c,
        alpha,
        kernel,
        lambdas,
        intercepts,
        coefs,
        info,
        standardize,
        tol,
        max_iter,
        refit_on,
        validation,
        call,
        scaling=(None, None),
        feature_map=None,
        train_decision=None,
    ):
        self = cls.__new__(cls)
        cls._init_base(self, design, call)
        self.a, self.c, self.alpha = a, c, alpha
        self.kernel = kernel
        self._fmap = feature_map
        self._xcenter, self._xscale = scaling
        self._Ztr = None if kernel is None else (design.X - scaling[0]) / scaling[1]
        # kernel expansions: the training rows' decision values along the path (see _kernel_path)
        self._Ftr = None if train_decision is None else np.asarray(train_decision, dtype=np.float64)
        self.lambda_ = self._checked_lambda(lambdas)
        self._intercepts = np.asarray(intercepts, dtype=np.float64).reshape(-1)
        self._coefs = np.asarray(coefs, dtype=np.float64).reshape(self.lambda_.size, -1)
        self._Xtr = np.ascontiguousarray(design.X, dtype=np.float64)
        self._ytr = np.ascontiguousarray(design.y, dtype=np.float64)
        self._wtr = np.ascontiguousarray(design.weights, dtype=np.float64)
        nl = self.lambda_.size
        self._info = info
        self._info_n_iter = np.asarray(info.get("n_iter", np.zeros(nl)), dtype=np.int64)
        self._info_converged = np.asarray(info.get("converged", np.ones(nl)), dtype=bool)
        self._info_objective = np.asarray(info.get("objective", np.full(nl, np.nan)), dtype=np.float64)
        self.standardize, self.tol, self.max_iter = standardize, tol, max_iter
        self.refit_on = refit_on
        self._validation = None
        if validation is not None:
            self._validation = _new_xy(design, validation)
        self._refit_cache = {}
        self.tuning = None
        self.s = float(self.lambda_[-1])
        return self

    @staticmethod
    def _init_base(self, design, call):
        _fit_base().__init__(self, design, call=call)

    # ----------------------------------------------------------------- selection
    @property
    def s(self):
        return self._s

    @s.setter
    def s(self, value):
        value = float(value)
        if not (np.isfinite(value) and value > 0):
            raise ValueError(f"s must be a positive lambda; got s={value!r}")
        self._s = value
        b, b0 = self._coef_at(value)
        k0, k1, t = _interp_weights(self.lambda_, value)
        k = k0 if t < 0.5 else k1
        self.converged = bool(self._info_converged[k0] and self._info_converged[k1])
        self.n_iter = int(self._info_n_iter[k])
        self._intercept = float(b0)
        self._coef = b

    def select(self, s):
        """A copy of this fit with the selected ``lambda`` set to ``s`` (the refit cache is shared)."""
        new = super().select(s)
        new._refit_cache = self._refit_cache
        return new

    def _coef_at(self, s=None):
        s = self._s if s is None else float(s)
        k0, k1, t = _interp_weights(self.lambda_, s)
        b0 = (1 - t) * self._intercepts[k0] + t * self._intercepts[k1]
        b = (1 - t) * self._coefs[k0] + t * self._coefs[k1]
        return b, float(b0)

    # ----------------------------------------------------------------- decision values
    def _basis(self, X):
        lent = cross_kernel(self, X)  # lent by a tuner for exactly these rows
        if lent is not None:
            return lent
        X = np.ascontiguousarray(X, dtype=np.float64)
        if self.kernel is None:
            return X
        Z = (X - self._xcenter) / self._xscale
        if self._fmap is not None:
            return self._fmap(Z)
        return self.kernel(Z, self._Ztr)

    def _decision(self, X, s=None):
        F = self._train_decision(X)
        if F is not None:  # linear in the coefficients: interpolated as they are
            k0, k1, t = _interp_weights(self.lambda_, self._s if s is None else float(s))
            return (1 - t) * F[k0] + t * F[k1]
        b, b0 = self._coef_at(s)
        return self._basis(X) @ b + b0

    def _decision_path(self, X):
        F = self._train_decision(X)
        if F is not None:
            return F.copy()
        return self._coefs @ self._basis(X).T + self._intercepts[:, None]

    def _train_decision(self, X):
        """Kernel expansions: the decision values of the training rows along the path, kept by
        the fit (``X`` is the fit's own training matrix), else None."""
        F = self.__dict__.get("_Ftr")
        return F if F is not None and X is self._Xtr else None

    # ----------------------------------------------------------------- refit
    def _refit_sample(self):
        if self.refit_on == "validation":
            Xr, yr = self._validation
            return Xr, yr, np.ones_like(yr)
        return self._Xtr, self._ytr, self._wtr

    def refit(self, s=None, warn: bool = True) -> dict:
        """The refitted-LUM scale ``(g0, g1)`` at ``lambda = s`` ([LZW] eq (9)).

        Returns the dict of :func:`lum_refit` (``g0``, ``g1``, ``converged``, ``separable``...).
        """
        s = self._s if s is None else float(s)
        key = (s, self.refit_on)
        if key not in self._refit_cache:
            Xr, yr, wr = self._refit_sample()
            self._refit_cache[key] = lum_refit(self._decision(Xr, s), yr, self.a, wr, warn=warn)
        return self._refit_cache[key]

    # ----------------------------------------------------------------- probabilities
    def _check_method(self, method):
        if method not in ("refit", "lum"):
            raise ValueError(
                f"method must be 'refit' (refitted LUM, default) or 'lum' (the "
                f"inverse link of the fitted LUM); got method={method!r}"
            )
        if method == "lum" and not math.isfinite(self.c):
            raise NotImplementedError(
                "c = inf is the SVM: its decision values carry no probability; use method='refit'"
            )

    def _proba(self, X, s=None, method: str = "refit"):
        self._check_method(method)
        f = self._decision(X, s)
        if method == "lum":
            return lum_link(f, self.a, self.c)
        r = self.refit(s)
        return lum_link(r["g0"] + r["g1"] * f, self.a, 0.0)

    def _proba_path(self, X, method: str = "refit"):
        self._check_method(method)
        F = self._decision_path(X)
        if method == "lum":
            return lum_link(F, self.a, self.c)
        out = np.empty_like(F)
        nsep = 0
        for k, lam in enumerate(self.lambda_):
            r = self.refit(lam, warn=False)
            nsep += r["separable"]
            out[k] = lum_link(r["g0"] + r["g1"] * F[k], self.a, 0.0)
        _warn_separable_path(nsep, self.lambda_.size)
        return out

    # ----------------------------------------------------------------- reports
    @property
    def regime(self) -> str:
        """'soft' (c = 0), 'hard' (c >= 1000, SVM-like) or 'intermediate'."""
        if self.c == 0:
            return "soft"
        if self.c >= _HARD_C:
            return "hard"
        return "intermediate"

    def _df_path(self):
        if "df" in self._info:
            return np.asarray(self._info["df"])
        return np.count_nonzero(np.abs(self._coefs) > 0, axis=1)

    def path(self):
        """PathFrame: one row per lambda with df, objective, training error, iterations and
        the coefficients (linear expansion)."""
        from cohstats.results import PathFrame

        F = self._decision_path(self._Xtr)
        err = np.average((F > 0) != (self._ytr[None, :] > 0), axis=1, weights=self._wtr)
        df = pd.DataFrame(
            {
                "lambda": self.lambda_,
                "df": self._df_path(),
                "objective": self._info_objective,
                "train_error": err,
                "n_iter": self._info_n_iter,
                "converged": self._info_converged,
                "intercept": self._intercepts,
            }
        )
        if self.kernel is None:
            names = list(self.design.xnames)
        elif self._fmap is not None:
            names = [f"phi[{j}]" for j in range(self._coefs.shape[1])]
        else:
            names = [f"beta[{i}]" for i in range(self._coefs.shape[1])]
        coefs = pd.DataFrame(self._coefs, columns=names)
        out = pd.concat([df, coefs], axis=1)
        return PathFrame.build(out, xvar="lambda", coef_columns=names)

    def margin_stats(self) -> pd.Series:
        """Training-margin statistics at the selected lambda."""
        f = self._decision(self._Xtr)
        m = self._ytr * f
        u0 = self.c / (1.0 + self.c) if math.isfinite(self.c) else 1.0
        q = np.quantile(m, [0.0, 0.25, 0.5, 0.75, 1.0])
        return pd.Series(
            {
                "train_error": float(np.average(m <= 0, weights=self._wtr)),
                "margin_min": q[0],
                "margin_q1": q[1],
                "margin_median": q[2],
                "margin_q3": q[3],
                "margin_max": q[4],
                "share_linear_piece (y f < c/(1+c))": float(np.mean(m < u0)),
                "share_margin_violators (y f < 1)": float(np.mean(m < 1.0)),
                "share_flat_link (|f| <= c/(1+c))": float(np.mean(np.abs(f) <= u0))
                if math.isfinite(self.c)
                else float("nan"),
            }
        )

    def _summary(self):
        from cohstats.results import Summary

        ms = self.margin_stats()
        info = {
            "a": self.a,
            "c": self.c,
            "regime": self.regime,
            "penalty": _penalty_name(self.alpha),
            "expansion": "linear"
            if self.kernel is None
            else (self._fmap.describe() if self._fmap is not None else self.kernel.describe()),
            "n lambda fitted": int(self.lambda_.size),
            "observations": int(self._Xtr.shape[0]),
            "training error": ms["train_error"],
            "converged": self.converged,
            "iterations": self.n_iter,
        }
        tables = {}
        if self.kernel is None:
            tables["coefficients"] = pd.DataFrame(
                {"estimate": np.r_[self._intercept, self._coef]}, index=["(Intercept)", *self.design.xnames]
            )
        tables["margins"] = ms.to_frame("value")
        notes = []
        try:
            r = self.refit(warn=False)
            tables["refit"] = refit_coef_table(r)
            notes.append(
                f"refitted LUM (c = 0, a = {self.a:g}) on the {self.refit_on} sample: "
                f"f2 = {r['g0']:.4g} + {r['g1']:.4g} f"
                + (
                    "; first stage separates the sample (1e-6 ridge added)"
                    if r["separable"]
                    else "; standard errors: sandwich (M-estimation), the refit minimises "
                    "the LUM loss, not a likelihood"
                )
            )
        except Exception as exc:  # pragma: no cover - report, do not fail the summary
            notes.append(f"refit unavailable: {exc}")
        if self.tuning is not None:
            tables["tuning"] = self.tuning
            notes.append(self.tuning_note)
        if self.regime == "hard":
            notes.append(
                "c >= 1000: the LUM is an SVM; method='lum' probabilities are 1/2 on "
                "|f| <= c/(1+c) — use the default method='refit'"
            )
        return Summary(f"Large-margin unified machine (a = {self.a:g}, c = {self.c:g})", info, tables, notes)

    def plot(self, kind: str = "path", ax=None):
        """The fit as a picture; returns the matplotlib Axes.

        ``kind="path"`` (default): coefficient paths against log(lambda) (linear model) or the
        training error along the path (kernel expansion); ``"loss"``: the LUM loss beside the
        hinge and logistic losses; ``"boundary"`` (two predictors): the data, the boundary
        ``f = 0`` and the refitted-probability contours at ``s``.
        """
        import matplotlib.pyplot as plt

        if kind not in ("path", "loss", "boundary"):
            raise ValueError(f"kind must be 'path', 'loss' or 'boundary'; got {kind!r}")
        if kind == "path":
            pf = self.path()
            if self.kernel is not None:
                return pf.plot(columns=["train_error"], ax=ax, ylabel="training error")
            return pf.plot(ax=ax)
        if ax is None:
            _, ax = plt.subplots(figsize=(5.5, 4.2))
        if kind == "loss":
            from cohstats.losses.scalar import lum_value

            u = np.linspace(-2, 3, 400)
            ax.plot(u, [lum_value(t, self.a, self.c) for t in u], label=f"LUM a={self.a:g}, c={self.c:g}")
            ax.plot(u, np.maximum(1 - u, 0), "--", lw=1, label="hinge (SVM)")
            ax.plot(u, np.logaddexp(0, -u), ":", lw=1, label="logistic")
            ax.set(xlabel="margin y f(x)", ylabel="loss", ylim=(0, 3), title="LUM loss")
            ax.legend(fontsize=8)
            return ax
        X = self._Xtr
        if X.shape[1] != 2:
            raise ValueError(f"kind='boundary' needs exactly two predictors; this fit has {X.shape[1]}")
        pad = 0.05 * (X.max(0) - X.min(0))
        g1 = np.linspace(X[:, 0].min() - pad[0], X[:, 0].max() + pad[0], 150)
        g2 = np.linspace(X[:, 1].min() - pad[1], X[:, 1].max() + pad[1], 150)
        G1, G2 = np.meshgrid(g1, g2)
        grid = np.c_[G1.ravel(), G2.ravel()]
        F = self._decision(grid).reshape(G1.shape)
        P = self._proba(grid).reshape(G1.shape)
        cs_ = ax.contourf(G1, G2, P, levels=np.linspace(0, 1, 11), cmap="RdBu_r", alpha=0.35)
        ax.figure.colorbar(cs_, ax=ax, label=f"P({self.classes[1]}) (refitted)")
        ax.contour(G1, G2, F, levels=[0.0], colors="k")
        for lab, mk in ((-1.0, "o"), (1.0, "^")):
            m = self._ytr == lab
            ax.scatter(
                X[m, 0], X[m, 1], s=12, marker=mk, edgecolors="k", linewidths=0.3, label=str(self.classes[int(lab > 0)])
            )
        names = list(self.design.xnames)
        ax.set(xlabel=names[0], ylabel=names[1], title=f"boundary f = 0 (lambda = {self._s:.3g})")
        ax.legend(fontsize=8)
        return ax


# =========================================================================== K > 2 classes
def _angle_separable(Z, w) -> bool:
    """True if some direction ``d != 0`` has ``z_i'd >= 0`` for every row (and > 0 for one), so
    that the unpenalised refit has no minimiser (the loss decreases without bound along d).

    Decided by the linear programme ``max sum_i z_i'd`` over ``|d_k| <= 1``, ``Z d >= 0``."""
    from scipy.optimize import linprog

    Z = Z[w > 0]
    if Z.shape[0] == 0:
        return True
    scale = np.abs(Z).max(axis=0)
    scale[scale == 0] = 1.0
    Zs = Z / scale
    res = linprog(
        -Zs.sum(axis=0), A_ub=-Zs, b_ub=np.zeros(Zs.shape[0]), bounds=[(-1.0, 1.0)] * Zs.shape[1], method="highs"
    )
    if res.status != 0:
        return False
    return bool(-res.fun > 1e-9 * Zs.shape[0])


def lum_refit_angle(
    F1, y, a: float, weights=None, *, tol: float = 1e-10, max_iter: int = 200, warn: bool = True
) -> dict:
    """Refitted angle-based LUM: ``f2 = g0 + g1 f1`` with ``c = 0`` and the same ``a``.

    The K-class analogue of [LZW] eq (9): ``g0`` in ``R^{K-1}`` (a shift of the simplex
    coordinates) and the scalar ``g1`` (a rescaling, which keeps the direction of ``f1`` and so
    the angles that classify) minimise ``sum_i w_i V_{a,0}(<g0 + g1 f1_i, W_{y_i}>) / sum_i w_i``
    without penalty, by Newton's method with backtracking. At K = 2 this is the refit of
    :func:`lum_refit` (with ``g0`` negated: the first class is the vertex ``+1`` here). If the
    minimum is not attained (a direction of ``(g0, g1)`` makes every refit margin non-decreasing,
    decided by a linear programme), the penalty ``1e-6 (||g0||^2 + g1^2)/2`` is added and a
    :class:`cohstats.ConvergenceWarning` is emitted.

    Parameters
    ----------
    F1 : (n, K-1) first-stage angle-based decision values.
    y : (n,) class codes 0..K-1.
    a : LUM shape of the first stage (``np.inf`` allowed).
    weights : (n,) nonnegative case weights or None.
    tol, max_iter : Newton tolerance (infinity norm of the gradient) and iteration limit.
    warn : emit the warnings.

    Returns
    -------
    dict with ``g0`` ((K-1,) array), ``g1``, ``converged``, ``n_iter``, ``objective``,
    ``separable``.
    """
    from cohstats.losses.angle import simplex_vertices
    from cohstats.losses.binary import get_loss

    F1 = np.atleast_2d(np.asarray(F1, dtype=np.float64))
    n, km1 = F1.shape
    K = km1 + 1
    y = np.asarray(y).astype(np.int64).ravel()
    if y.shape[0] != n or y.min() < 0 or y.max() >= K:
        raise ValueError(f"y must hold {n} class codes in 0..{K - 1}")
    if not np.all(np.isfinite(F1)):
        raise ValueError("F1 contains non-finite decision values")
    a = float(a)
    if not a > 0:
        raise ValueError(f"a must be positive; got a={a!r}")
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=np.float64).ravel()
    if w.shape != (n,) or np.any(w < 0) or not np.all(np.isfinite(w)) or not w.sum() > 0:
        raise ValueError("weights must be nonnegative, finite, not all zero and one per row")
    Wy = simplex_vertices(K)[y]
    h = np.einsum("ik,ik->i", F1, Wy)  # first-stage margins <f1_i, W_{y_i}>
    sc = math.sqrt(float(np.sum(w * h * h) / w.sum())) if np.any(h != 0) else 1.0
    Z = np.column_stack([Wy, h / sc])  # theta = (g0, g1 * sc)
    separable = _angle_separable(Z, w)
    ridge = np.r_[np.full(km1, 1e-6), 1e-6 / sc**2] if separable else np.zeros(K)
    if separable and warn:
        warnings.warn(
            "refitted LUM: the first-stage decision values separate the classes, so the "
            "unpenalised refit has no minimiser; added the penalty "
            "1e-6 (||g0||^2 + g1^2)/2 (probabilities will be close to 0/1). "
            "Use refit_on='validation' or a larger lambda_.",
            _convergence_warning(),
            stacklevel=2,
        )
    loss = get_loss("lum", a=a, c=0.0)
    wn = w / w.sum()

    def obj(th):
        return float(wn @ loss.value(Z @ th)) + 0.5 * float(ridge @ (th * th))

    th = np.r_[np.zeros(km1), sc]  # start at the first stage (g1 = 1)
    F = obj(th)
    ok = False
    it = 0
    for it in range(1, max_iter + 1):
        m = Z @ th
        g = Z.T @ (wn * loss.d1(m)) + ridge * th
        if np.max(np.abs(g)) < tol:
            ok = True
            break
        H = (Z * (wn * loss.d2(m))[:, None]).T @ Z + np.diag(ridge)
        mu = 1e-12 * max(np.trace(H), 1e-300)
        d = np.linalg.solve(H + mu * np.eye(K), -g)
        dec = -float(g @ d)
        if dec < tol * tol:
            ok = True
            break
        t = 1.0
        for _ in range(60):
            Fn = obj(th + t * d)
            if Fn <= F - 1e-4 * t * dec:
                break
            t *= 0.5
        else:
            break  # no decrease possible at float precision
        th = th + t * d
        F = Fn
    if not ok:
        m = Z @ th
        g = Z.T @ (wn * loss.d1(m)) + ridge * th
        ok = bool(np.max(np.abs(g)) < max(tol, 1e-8))
    if not ok and warn:
        warnings.warn(
            f"refitted LUM: Newton did not reach tol={tol:g} in max_iter={max_iter} iterations; increase max_iter",
            _convergence_warning(),
            stacklevel=2,
        )
    return {
        "g0": th[:km1].copy(),
        "g1": float(th[km1] / sc),
        "converged": bool(ok),
        "n_iter": int(it),
        "objective": float(F),
        "separable": bool(separable),
    }


def _class_codes(y, binary):
    """Class codes 0..K-1 (a binary design codes its classes -1/+1)."""
    y = np.asarray(y)
    if binary:
        return (y > 0).astype(np.int64)
    return np.ascontiguousarray(y).astype(np.int64)


def _lum_angle(
    design,
    *,
    a,
    c,
    lambda_,
    nlambda,
    lambda_min_ratio,
    alpha,
    standardize,
    penalty_factor,
    validation,
    refit_on,
    tol,
    max_iter,
):
    """The angle-based multicategory LUM for a response with K > 2 levels (see :func:`lum`)."""
    from cohstats.solvers.cd.angle import angle_lum_lambda_max, cd_angle_lum_path

    if not math.isfinite(c):
        raise ValueError(
            f"lum: c = inf (the hinge) is available for two classes only; the "
            f"response {design.yname!r} has {design.n_classes} levels: use a large "
            f"finite c (e.g. c=1000) for a hard multicategory LUM"
        )
    X = np.ascontiguousarray(design.X, dtype=np.float64)
    y = _class_codes(design.y, design.binary)
    w = np.ascontiguousarray(design.weights, dtype=np.float64)
    K = int(design.n_classes)
    if np.unique(y).size < K:
        missing = [design.classes[k] for k in range(K) if not np.any(y == k)]
        raise ValueError(
            f"lum: every level of the response must occur in the training data; "
            f"no rows of {missing} (drop unused levels first)"
        )
    n, p = X.shape
    pf = None
    if penalty_factor is not None:
        pf = np.ascontiguousarray(penalty_factor, dtype=np.float64).ravel()
        if pf.shape != (p,) or np.any(pf < 0) or not np.all(np.isfinite(pf)):
            raise ValueError(f"penalty_factor must be {p} nonnegative finite numbers")
    if lambda_ is None:
        lmax = float(
            angle_lum_lambda_max(X, y, w, a, c, max(alpha, 1e-3), K=K, standardize=standardize, penalty_factor=pf)
        )
        if not (np.isfinite(lmax) and lmax > 0):
            lmax = 1.0
        ratio = lambda_min_ratio
        if ratio is None:
            ratio = 1e-6 if alpha == 0.0 else (1e-4 if n > p else 1e-2)
        if not (0 < ratio < 1):
            raise ValueError(f"lambda_min_ratio must be in (0, 1); got {ratio!r}")
        lambdas = lmax * np.geomspace(1.0, ratio, int(nlambda))
    else:
        lambdas = _check_lambda(lambda_)
    b0, B, info = cd_angle_lum_path(
        X,
        y,
        w,
        a,
        c,
        lambdas,
        alpha,
        K=K,
        standardize=standardize,
        tol=tol,
        max_iter=max_iter,
        penalty_factor=pf,
        warn=False,
    )
    info = {k: np.asarray(v) for k, v in dict(info).items()}
    _kkt_gate(info, tol)
    call = dict(a=a, c=c, alpha=alpha)
    if lambda_ is not None:
        call["lambda_"] = lambda_
    if standardize is not True:
        call["standardize"] = standardize
    if refit_on != "train":
        call["refit_on"] = refit_on
    fit = LumMultiFit._from_arrays(
        design,
        a=a,
        c=c,
        alpha=alpha,
        lambdas=lambdas,
        intercepts=b0,
        coefs=B,
        info=info,
        standardize=standardize,
        tol=tol,
        max_iter=max_iter,
        refit_on=refit_on,
        validation=validation,
        call=call,
    )
    if not np.all(fit._info_converged):
        bad = lambdas[~fit._info_converged]
        warnings.warn(
            f"lum: {bad.size} of {lambdas.size} lambda values did not reach the optimum "
            f"(iteration cap, or a KKT violation above {info.get('kkt_bound', 0):.2g}; "
            f"smallest such lambda {bad.min():.3g}); increase max_iter (now {max_iter}) "
            f"or loosen tol (now {tol:g})",
            _convergence_warning(),
            stacklevel=4,
        )
    return fit


class LumMultiFit(_fit_base()):
    """Result of :func:`lum` for K > 2 classes: the angle-based multicategory LUM path.

    The model is ``f(x) = b + B'x`` in ``R^{K-1}`` with class ``k`` (``classes[k]``) at the
    simplex vertex ``W_{k+1}`` (:func:`cohstats.losses.angle.simplex_vertices`); the class
    margins are ``u_k(x) = <f(x), W_{k+1}>`` (they sum to zero) and the predicted class is the
    largest margin.

    Attributes
    ----------
    coef : DataFrame terms x classes, the coefficients of the class margins
        (``B W'``; rows sum to zero) at ``s``. ``coef_simplex`` gives ``B`` itself (terms x
        simplex coordinates ``f1..f{K-1}``) and ``vertices`` the coding.
    intercept : Series by class, the intercepts of the class margins (``W b``).
    a, c, alpha : loss and penalty parameters; lambda_ : fitted sequence (decreasing); s :
        selected lambda; converged, n_iter : engine diagnostics at ``s``.

    ``predict(type="link")`` gives the class margins; ``type="prob"`` the probabilities of the
    fitted LUM's inverse link (``method="lum"``, the default for the soft LUM ``c = 0``) or of
    the refitted LUM (``method="refit"``, the default for ``c > 0``); see :func:`lum`.
    """

    method = "lum"
    title = "Angle-based multicategory LUM"
    path_var = "lambda"
    path_arg = "lambda_"
    _predict_options = ("method",)

    @classmethod
    def _from_arrays(
        cls,
        design,
        *,
        a,
        c,
        alpha,
        lambdas,
        intercepts,
        coefs,
        info,
        standardize,
        tol,
        max_iter,
        refit_on,
        validation,
        call,
    ):
        from cohstats.losses.angle import simplex_vertices

        self = cls.__new__(cls)
        _fit_base().__init__(self, design, call=call)
        self.a, self.c, self.alpha = float(a), float(c), float(alpha)
        self.lambda_ = self._checked_lambda(lambdas)
        K = design.n_classes
        self._W = simplex_vertices(K)
        self._b_path = np.asarray(intercepts, dtype=np.float64).reshape(self.lambda_.size, K - 1)
        self._B_path = np.asarray(coefs, dtype=np.float64).reshape(self.lambda_.size, -1, K - 1)
        # by-class margins: coefficients B W' and intercepts W b (what coef/intercept report)
        self._coef_path = self._B_path @ self._W.T
        self._intercept_path = self._b_path @ self._W.T
        nl = self.lambda_.size
        self.info = info
        self._info_n_iter = np.asarray(info.get("n_iter", np.zeros(nl)), dtype=np.int64)
        self._info_converged = np.asarray(info.get("converged", np.ones(nl)), dtype=bool)
        self._info_objective = np.asarray(info.get("objective", np.full(nl, np.nan)), dtype=np.float64)
        self.standardize, self.tol, self.max_iter = standardize, tol, max_iter
        self.refit_on = refit_on
        self._validation = None if validation is None else _new_xy(design, validation)
        if self._validation is not None:
            self._validation = (self._validation[0], _class_codes(self._validation[1], design.binary))
        self._ycodes = _class_codes(design.y, design.binary)
        self._refit_cache = {}
        self.s = float(self.lambda_[-1])
        return self

    # ----------------------------------------------------------------- selection
    @property
    def s(self):
        return self._s

    @s.setter
    def s(self, value):
        value = float(value)
        if not (np.isfinite(value) and value > 0):
            raise ValueError(f"s must be a positive lambda; got s={value!r}")
        self._s = value
        k0, k1, t = _interp_weights(self.lambda_, value)
        self.converged = bool(self._info_converged[k0] and self._info_converged[k1])
        self.n_iter = int(self._info_n_iter[k0 if t < 0.5 else k1])

    def select(self, s):
        """A copy of this fit with the selected ``lambda`` set to ``s`` (the refit cache is shared)."""
        new = super().select(s)
        new._refit_cache = self._refit_cache
        return new

    def _simplex_at(self, s=None):
        s = self._s if s is None else float(s)
        k0, k1, t = _interp_weights(self.lambda_, s)
        B = (1 - t) * self._B_path[k0] + t * self._B_path[k1]
        b = (1 - t) * self._b_path[k0] + t * self._b_path[k1]
        return B, b

    def _coef_at(self, s=None):
        B, b = self._simplex_at(s)
        return B @ self._W.T, b @ self._W.T

    @property
    def vertices(self) -> pd.DataFrame:
        """The simplex coding: one row per class (unit vectors summing to zero)."""
        return pd.DataFrame(self._W, index=self.classes, columns=[f"f{k + 1}" for k in range(self._W.shape[1])])

    @property
    def coef_simplex(self) -> pd.DataFrame:
        """Coefficients ``B`` of ``f`` in the simplex coordinates at ``s``, with the intercept
        first (terms x ``f1..f{K-1}``)."""
        B, b = self._simplex_at()
        return pd.DataFrame(
            np.vstack([b[None], B]),
            index=["(Intercept)", *self.xnames],
            columns=[f"f{k + 1}" for k in range(B.shape[1])],
        )

    # ----------------------------------------------------------------- decision values
    def _f(self, X, s=None):
        B, b = self._simplex_at(s)
        return np.ascontiguousarray(X, dtype=np.float64) @ B + b

    def _decision(self, X, s=None):
        return self._f(X, s) @ self._W.T

    def _decision_path(self, X):
        X = np.ascontiguousarray(X, dtype=np.float64)
        return np.einsum("np,lpk->lnk", X, self._coef_path) + self._intercept_path[:, None, :]

    # ----------------------------------------------------------------- refit and probabilities
    def _refit_sample(self):
        if self.refit_on == "validation":
            Xr, yr = self._validation
            return Xr, yr, np.ones(yr.shape[0])
        d = self.design
        return d.X, self._ycodes, np.asarray(d.weights, dtype=np.float64)

    def refit(self, s=None, warn: bool = True) -> dict:
        """The refitted-LUM map ``f2 = g0 + g1 f`` at ``lambda = s`` (:func:`lum_refit_angle`)."""
        s = self._s if s is None else float(s)
        key = (s, self.refit_on)
        if key not in self._refit_cache:
            Xr, yr, wr = self._refit_sample()
            self._refit_cache[key] = lum_refit_angle(self._f(Xr, s), yr, self.a, wr, warn=warn)
        return self._refit_cache[key]

    @property
    def default_method(self) -> str:
        """The default probability method: ``"lum"`` (inverse link) for the soft LUM
        (``c = 0``), ``"refit"`` (refitted LUM) for ``c > 0``."""
        return "lum" if self.c == 0 else "refit"

    def _proba(self, X, s=None, method: str | None = None):
        from cohstats.losses.angle import angle_lum_proba

        if method is None:
            method = self.default_method
        if method not in ("refit", "lum"):
            raise ValueError(
                f"method must be 'lum' (the inverse link of the fitted LUM; default "
                f"for c = 0) or 'refit' (refitted LUM; default for c > 0); got "
                f"method={method!r}"
            )
        f = self._f(self._X_checked(X), s)
        if method == "lum":
            return angle_lum_proba(f, self.a, self.c)
        r = self.refit(s)
        return angle_lum_proba(r["g0"] + r["g1"] * f, self.a, 0.0)

    @staticmethod
    def _X_checked(X):
        return np.ascontiguousarray(X, dtype=np.float64)

    def _proba_path(self, X, method: str | None = None):
        X = self._X_checked(X)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = np.stack([self._proba(X, s=float(v), method=method) for v in self.lambda_])
        nsep = sum("separate the classes" in str(m.message) for m in caught)
        _warn_separable_path(nsep, self.lambda_.size)
        return out

    # ----------------------------------------------------------------- reports
    @property
    def regime(self) -> str:
        """'soft' (c = 0), 'hard' (c >= 1000) or 'intermediate'."""
        if self.c == 0:
            return "soft"
        return "hard" if self.c >= _HARD_C else "intermediate"

    def _train_error(self, U):
        d = self.design
        w = np.asarray(d.weights, dtype=np.float64)
        return np.average(np.argmax(U, axis=-1) != self._ycodes, axis=-1, weights=w)

    def path(self):
        """PathFrame: one row per lambda with df, objective, training error, iterations and the
        class-margin coefficients (columns ``term:class``)."""
        from cohstats.results import PathFrame

        U = self._decision_path(self.design.X)
        data = {
            "lambda": self.lambda_,
            "df": np.asarray(self.info["df"]),
            "objective": self._info_objective,
            "train_error": self._train_error(U),
            "n_iter": self._info_n_iter,
            "converged": self._info_converged,
        }
        cols = []
        for j, name in enumerate(self.xnames):
            for k, cl in enumerate(self.classes):
                key = f"{name}:{cl}"
                data[key] = self._coef_path[:, j, k] + 0.0
                cols.append(key)
        return PathFrame.build(pd.DataFrame(data), xvar="lambda", coef_columns=cols)

    def plot(self, kind: str = "path", ax=None):
        """Coefficient paths of the class margins against log(lambda); returns the Axes."""
        if kind != "path":
            raise ValueError(f"kind must be 'path' for a multicategory LUM; got {kind!r}")
        return self.path().plot(ax=ax)

    def _repr_extra(self) -> str:
        return f"angle-based, a={self.a:g}, c={self.c:g}, lambda={self._s:.4g}"

    def _summary(self):
        from cohstats.results import Summary

        d = self.design
        U = self._decision(d.X)
        c, b = self._coef_at()
        keep = np.any(c != 0, axis=1)
        info = {
            "a": self.a,
            "c": self.c,
            "regime": self.regime,
            "coding": f"angle-based (simplex vertices in R^{self.n_classes - 1})",
            "penalty": _penalty_name(self.alpha) + ", grouped by predictor",
            "n lambda fitted": int(self.lambda_.size),
            "observations": int(d.nobs),
            "classes": ", ".join(map(str, self.classes)),
            "training error": float(self._train_error(U)),
            "predictors in model": f"{int(keep.sum())} of {d.p}",
            "converged": self.converged,
            "iterations": self.n_iter,
        }
        tab = pd.DataFrame(
            np.vstack([b[None], c[keep]]),
            columns=self.classes,
            index=["(Intercept)"] + [nm for nm, k in zip(self.xnames, keep) if k],
        )
        tables = {"Class-margin coefficients (rows sum to zero)": tab}
        notes = []
        try:
            r = self.refit(warn=False)
            tables["refit"] = pd.DataFrame(
                {"estimate": np.r_[r["g0"], r["g1"]]}, index=[f"g0[f{k + 1}]" for k in range(len(r["g0"]))] + ["g1"]
            )
            notes.append(
                f"refitted LUM (c = 0, a = {self.a:g}) on the {self.refit_on} sample: "
                f"f2 = g0 + {r['g1']:.4g} f"
                + ("; first stage separates the sample (1e-6 ridge added)" if r["separable"] else "")
            )
        except Exception as exc:  # pragma: no cover - report, do not fail the summary
            notes.append(f"refit unavailable: {exc}")
        if self.standardize:
            notes.append("penalty applied to standardised predictors; coefficients on the original scale")
        notes.append(
            f"probabilities: method={self.default_method!r} by default ("
            + (
                "the inverse link of the soft LUM"
                if self.c == 0
                else "c > 0: the inverse link is flat wherever several class margins lie below "
                "c/(1+c), so the default refits with c = 0"
            )
            + ")"
        )
        return Summary(f"Angle-based multicategory LUM (a = {self.a:g}, c = {self.c:g})", info, tables, notes)


def tune_lum(
    formula,
    data=None,
    *,
    a: float = 1000.0,
    cs=(0.0, 10000.0),
    lambda_=None,
    validation=None,
    nfolds: int = 10,
    random_state=0,
    refit_on: str = "train",
    _context=None,
    **kwargs,
) -> LumFit:
    """Tuned LUM ([LZW] section 5): fix ``a``, choose ``c`` in ``cs`` and ``lambda`` by validation error.

    For each ``c`` the LUM path is fitted on the training sample over the ``lambda`` grid
    (25 values ``10^2 .. 10^-4``) and the misclassification error is computed on the
    ``validation`` sample (or, without one, by stratified ``nfolds``-fold cross-validation);
    the best ``lambda`` per ``c`` is kept (ties: larger ``lambda``), then the ``c`` with the
    smaller error (ties: the smaller ``c``, i.e. the soft classifier).

    Parameters
    ----------
    formula, data : as :func:`lum`.
    a : float, default 1000 (the paper's choice).
    cs : candidate values of ``c``, default ``(0, 10000)`` (soft versus hard).
    lambda_ : grid, default :data:`LUM_LAMBDA_GRID`.
    validation : DataFrame with the response, or tuple ``(X, y)``; if None, cross-validation.
    nfolds, random_state : cross-validation folds and their seed.
    refit_on : passed to :func:`lum` (``"validation"`` needs ``validation``).
    **kwargs : other arguments of :func:`lum` (alpha, kernel, standardize, weights, ...).

    Returns
    -------
    LumFit at the winning ``c`` with ``s`` = the winning ``lambda``; ``fit.tuning`` holds the
    error of every ``(c, lambda)``, ``fit.c_selected`` the winner and ``fit.tuning_note`` says
    which regime won.

    Notes
    -----
    A model-specific tuner (``lum(c="tuned")`` calls it), built on :func:`cohstats.tuning.tune`
    (``method="holdout"`` with ``validation``, else ``method="cv"``) with the grid
    ``{"c": cs, "lambda_": lambda_}``; one path fit per ``c``.

    Kernel expansions whose kernel depends on the rows only (``standardize=False`` and a width
    that does not look at the data: a number, ``gamma="auto"``, a linear or polynomial kernel, or
    a callable) compute one kernel matrix of the training rows, shared by the fits of every
    ``c`` and, with cross-validation, of every fold (see :func:`cohstats.tuning.cv`, Notes); the
    results are those of a kernel matrix per fit.

    Examples
    --------
    >>> import numpy as np
    >>> import cohstats as cs
    >>> rng = np.random.default_rng(2)
    >>> X = rng.normal(size=(200, 3)); y = np.where(X[:, 0] + 0.5 * rng.normal(size=200) > 0, 1, -1)
    >>> fit = cs.tune_lum(X[:100], y[:100], validation=(X[100:], y[100:]))
    >>> fit.c_selected in (0.0, 10000.0)
    True
    """
    from cohstats.tuning.tune import tune

    a = float(a)
    cs_ = sorted(float(c) for c in np.atleast_1d(cs))
    if len(cs_) == 0:
        raise ValueError("cs must contain at least one value of c")
    for c in cs_:
        _check_ac(a, c)
    lambdas = LUM_LAMBDA_GRID.copy() if lambda_ is None else _check_lambda(lambda_)
    if isinstance(formula, str) and _context is None:
        from cohstats.formula import capture_context

        _context = capture_context(1)
    design = _to_design(
        formula,
        data,
        kwargs.pop("weights", None),
        kwargs.pop("subset", None),
        kwargs.pop("na_action", "omit"),
        _context,
    )
    if not design.binary:
        raise ValueError(
            f"the tuned LUM of [LZW] (c='tuned') is defined for two classes; the "
            f"response {design.yname!r} has {design.n_classes} levels: fit the "
            f"angle-based LUM with a number c and choose it with "
            f"cs.tune(cs.lum, ..., grid={{'c': [...]}})"
        )
    if refit_on not in ("train", "validation"):
        raise ValueError(f"refit_on must be 'train' or 'validation'; got refit_on={refit_on!r}")
    if refit_on == "validation" and validation is None:
        raise ValueError("refit_on='validation' needs the validation= sample")
    # tune(): ties go to the grid value listed first (c ascending: the soft c = 0) and,
    # within it, to the larger lambda; measure = misclassification error.
    grid = {"c": cs_, "lambda_": lambdas}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", _convergence_warning())
        if validation is not None:
            res = tune(
                lum,
                design,
                grid=grid,
                method="holdout",
                validation=validation,
                measure="class",
                verbose=False,
                a=a,
                **kwargs,
            )
            how = "validation"
        else:
            res = tune(
                lum,
                design,
                grid=grid,
                method="cv",
                nfolds=nfolds,
                measure="class",
                random_state=random_state,
                verbose=False,
                a=a,
                **kwargs,
            )
            how = f"{nfolds}-fold CV"
    tab = res.to_frame().rename(columns={"score": "error"})
    rows = tab.to_dict("records")
    best = {}
    for c in cs_:
        g = tab[tab["c"] == c].sort_values("lambda", ascending=False, kind="stable")
        k = int(np.argmin(g["error"].to_numpy()))
        best[c] = (float(g["error"].iloc[k]), float(g["lambda"].iloc[k]))
    fit = res.best_fit
    c_sel = float(res.best_params["c"])
    err_sel, lam_sel = best[c_sel]
    if not (fit.c == c_sel and math.isclose(fit.s, lam_sel)):  # pragma: no cover - guard
        raise RuntimeError("tune() and the tuned-LUM table disagree; please report")
    regime = "soft" if c_sel == 0 else ("hard" if c_sel >= _HARD_C else "intermediate")
    note = (
        f"tuned LUM (a = {a:g}): c = {c_sel:g} ({regime}) won by {how} error "
        f"{err_sel:.4f} at lambda = {lam_sel:.4g}; " + ", ".join(f"c = {c:g}: {best[c][0]:.4f}" for c in cs_)
    )
    refit = {}
    if refit_on == "validation":
        refit = dict(_validation=_new_xy(design, validation), refit_on="validation", _refit_cache={})
    # the tuned result is derived from the winning fit (a copy with the tuning record)
    return fit._derive(
        **refit,
        tuning=pd.DataFrame(rows),
        c_selected=c_sel,
        tuning_best=pd.DataFrame([{"c": c, "lambda": best[c][1], "error": best[c][0]} for c in cs_]),
        tuning_note=note,
        call=dict(getattr(fit, "call", {}) or {}, c="tuned"),
    )
