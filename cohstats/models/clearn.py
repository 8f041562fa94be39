"""``clearn()``: C-learning with the elastic net ([ZDJ] section 4), and its
comparators RLRM (``loss="logistic"``) and HHSVM (``loss="hhinge"``).

Binary responses: linear expansion ``f(x) = b + x'beta`` (pathwise coordinate descent,
:mod:`cohstats.solvers.cd.path`) or kernel expansion ``f(x) = b + sum_j beta_j K(x_j, x)``
(:mod:`cohstats.solvers.cd.kernel`). Responses with K > 2 classes: the multicategory coherence
loss of [ZJLY] with a grouped elastic net and a linear (:mod:`cohstats.solvers.cd.multi`) or
kernel (:func:`cohstats.solvers.cd.kernel.cd_kernel_multi_path`) expansion of each class
margin. All run on the one coordinate-descent path driver of :mod:`cohstats.solvers.cd.path`.
Probabilities come from the coherence inverse link ([ZDJ] eq (10); [ZJLY] eq (8)).

Layout: :mod:`.clearn_result` (:class:`CLearnFit`) and this module (the fit function).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from cohstats.formula import NAAction, build_design, capture_context, refuse_offset
from cohstats.kernels import KERNEL_CALLABLE, make_kernel
from cohstats.losses.binary import get_loss
from cohstats.losses.scalar import closs_kappa
from cohstats.scaling import column_scaling
from cohstats.solvers.cd.path import cd_path, lambda_max, lambda_sequence
from cohstats.solvers.cd.kernel import (
    cd_kernel_multi_path,
    cd_kernel_path,
    kernel_gamma_max,
    kernel_multi_gamma_max,
    prepare_kernel,
)
from cohstats.solvers.cd.multi import cd_multi_path, multi_lambda_max
from cohstats.tuning.shared import check_lent, rows_only_kernel
from cohstats.validation import (
    Anything,
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
from cohstats.models.clearn_result import CLearnFit

__all__ = ["clearn", "CLearnFit"]

_LOSSES = ("C", "V", "logistic", "hhinge", "sqhinge")


_KERNELS = NoneOr(AnyOf(Options("linear", "rbf", "poly"), Callable()))
_WIDTH = NoneOr(AnyOf(Real(0.0, closed="neither"), Options("scale", "auto", "median", "mean")))
_PARAMS = {
    "loss": Options(*_LOSSES),
    "rho": Real(0.0, closed="neither"),
    "u": Real(0.0),
    "alpha": Real(0.0, 1.0),
    "lambda_": NoneOr(Reals(Real(0.0))),
    "nlambda": Integer(1),
    "lambda_min_ratio": NoneOr(Real(0.0, 1.0, closed="right")),
    "kernel": _KERNELS,
    "gamma": _WIDTH,
    "sigma": NoneOr(Real(0.0, closed="neither")),
    "degree": Integer(1),
    "coef0": Real(),
    "delta": Real(0.0, closed="neither"),
    "standardize": Bool(),
    "na_action": NAAction(),
    "offset": Anything(),
    "tol": Real(0.0, closed="neither"),
    "max_iter": Integer(1),
    "mode": NoneOr(Options("irls", "mm", "exact")),
    "kernel_approx": NoneOr(Options("nystroem", "rff")),
    "n_components": Integer(1),
}
_DECLARED = FitSpec("clearn", path_args=("lambda_",), multiclass=True, probabilities=True, default_measure="deviance")


@fit_function(_DECLARED, _PARAMS)
def clearn(
    formula,
    data=None,
    *,
    loss: str = "C",
    rho: float = 1.0,
    u: float = 1.0,
    alpha: float = 1.0,
    lambda_=None,
    nlambda: int = 100,
    lambda_min_ratio=None,
    kernel=None,
    gamma=None,
    sigma=None,
    degree: int = 3,
    coef0: float = 1.0,
    delta: float = 2.0,
    standardize: bool = True,
    weights=None,
    subset=None,
    na_action: str = "omit",
    offset=None,
    penalty_factor=None,
    tol: float = 1e-7,
    max_iter: int = 10000,
    mode=None,
    kernel_approx=None,
    n_components: int = 300,
    random_state=0,
    _gram=None,
    _settings=None,
) -> CLearnFit:
    """C-learning: elastic-net penalised coherence-loss classification with class probabilities.

    Minimises ``(1/n) sum_i w_i phi(y_i f(x_i)) + lambda [(1-alpha)/2 ||beta||^2 + alpha ||beta||_1]``
    ([ZDJ] eq (20); ``beta'K beta`` in place of ``||beta||^2`` for kernel expansions, eq (14))
    along a decreasing ``lambda`` sequence, with ``phi`` the C-loss ``C_{rho,u}`` (default), the
    coherence function ``V_{rho,u}``, the logistic loss (RLRM), the huberized hinge (HHSVM,
    ``delta = 2``) or the squared hinge. Responses with more than two classes use the
    multicategory coherence loss of [ZJLY] (temperature ``T = rho``) with a grouped penalty:

    ``(s/n) sum_i w_i C(g(x_i), c_i) + lambda sum_j [(1-alpha)/2 ||B_j||^2 + alpha ||B_j||_2]``

    with class margins ``g_k(x) = b_k + x'B_{.k}`` and ``B_j`` the row of predictor ``j`` over
    the classes; for kernel expansions ``g_k(x) = b_k + sum_j B_jk K(x_j, x)`` and the penalty is
    ``lambda [(1-alpha)/2 tr(B'KB) + alpha sum_j ||B_j||_2]`` (the squared RKHS norms of the
    class margins plus a group lasso that selects support points for all classes at once).
    Rows of ``B`` and the intercepts sum to zero. ``s = kappa`` for ``loss="C"`` (so that two
    classes give the binary C-loss, [ZDJ]) and 1 for ``loss="V"``.

    Parameters
    ----------
    formula : str, Design or array
        ``"y ~ x1 + x2"`` with ``data``; a :class:`~cohstats.formula.Design`; or a matrix with the
        labels in ``data``.
    data : DataFrame (formula) or labels (matrix input).
    loss : ``"C"`` (default), ``"V"``, ``"logistic"``, ``"hhinge"`` or ``"sqhinge"``.
    rho, u : coherence temperature (> 0) and margin (>= 0; > 0 for ``"C"``); paper defaults 1, 1.
        For K > 2 classes ``rho`` is the temperature ``T`` and ``u`` must be 1.
    alpha : l1 share of the elastic net (the papers' ``omega``), in [0, 1]. Default 1 (lasso, as
        glmnet); [ZDJ] tunes it over {0.1, 0.3, ..., 0.9, 1}.
    lambda_ : None (the default sequence), a number, or a sequence of penalties.
    nlambda, lambda_min_ratio : default sequence: ``nlambda`` values from ``lambda_max`` (the
        smallest value with all coefficients zero; for ``alpha < 1e-3`` the value at
        ``alpha = 1e-3``, glmnet's rule) down to ``lambda_min_ratio * lambda_max``
        (``1e-4`` if n > p else ``1e-2``; kernel expansions: ``1e-3``,).
    kernel : None (the primal linear model in the predictors), ``"linear"``, ``"rbf"``,
        ``"poly"`` or a callable ``k(X, Z)`` (kernel expansion over the training points; any
        number of classes).
    gamma, sigma : kernel width, ``exp(-gamma ||x-x'||^2)`` with ``gamma = 1/sigma^2``; give at
        most one. ``gamma`` is a number or a named heuristic: ``"scale"`` (default,
        ``1/(p Var(X))`` as scikit-learn; ``1/p`` on standardised inputs, e1071's default),
        ``"auto"`` (``1/p``), ``"mean"`` (sigma = the mean pairwise distance, [ZDJ] 5.2's
        choice, used by the [ZDJ] vignette) or ``"median"`` (sigma = the median distance
        between the classes). ``degree``, ``coef0``: polynomial kernel.
    delta : huberized-hinge parameter (default 2,).
    standardize : linear: penalise standardised predictors (glmnet), coefficients reported on
        the original scale; kernel: standardise the inputs before computing the kernel. With
        ``standardize=False`` and a numeric width, :func:`~cohstats.tuning.cv` and
        :func:`~cohstats.tuning.tune` compute one kernel matrix for all their fits (see
        :func:`~cohstats.tuning.cv`, Notes).
    weights, subset, na_action : as :func:`cohstats.formula.build_design`.
    offset : known offsets added to the link, ``f(x) = offset + b + x'beta`` (R's ``offset``):
        an array with one value per row of ``data``, or a column name; ``offset(col)`` in the
        formula does the same. Two classes only (linear and kernel expansions); predictions on
        new data read the offset from its columns (or take ``predict(newdata, offset=...)``).
    penalty_factor : per-predictor penalty factors (linear expansions; 0 = unpenalised).
    tol, max_iter : convergence threshold (relative to the null objective) and maximum
        coordinate passes per ``lambda``.
    mode : coordinate update: None (automatic), ``"irls"``, ``"mm"`` or ``"exact"``.
    kernel_approx : None (default: the exact n x n kernel) or ``"nystroem"`` / ``"rff"``: fit the
        kernel model as a linear one on an n x ``n_components`` feature map whose inner products
        approximate the kernel (:mod:`cohstats.kernel_approx`), in O(n r) memory. The ridge part
        of the penalty then equals the kernel's ``beta'K beta`` (exactly when every training row
        is a landmark); the l1 part acts on the feature coefficients, not on expansion
        coefficients over the training points.
    n_components, random_state : r (landmarks or random features) and the seed that draws them.

    Returns
    -------
    CLearnFit
        ``predict(newdata, type="class"|"prob"|"link", s=)``, ``coef``, ``summary()``,
        ``path()``, ``plot()``, ``select(s)``.

    ``fit.settings`` holds the validated arguments of the call (``clearn.Settings``, a frozen
    :class:`~cohstats.validation.Settings`): refits, the tuners and saved files read it.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from cohstats.models.clearn import clearn
    >>> rng = np.random.default_rng(1)
    >>> df = pd.DataFrame(rng.normal(size=(100, 3)), columns=["x1", "x2", "x3"])
    >>> df["y"] = np.where(df.x1 - df.x2 + rng.normal(size=100) > 0, "yes", "no")
    >>> fit = clearn("y ~ x1 + x2 + x3", df, alpha=0.5)
    >>> fit.predict(df.head(2), type="prob").shape
    (2, 2)
    >>> bool(fit.coef["x1"] > 0)
    True
    """
    _check(_settings, _gram)
    ctx = capture_context(1) if isinstance(formula, str) else None
    # a Design passes through build_design (subset/weights applied, no re-parsing)
    design = build_design(
        formula, data, weights=weights, subset=subset, na_action=na_action, context=ctx, offset=offset
    )
    problem = _prepare(design, _settings, _gram)
    return _result(design, problem, _solve(problem, _settings), _settings)


# ============================================================================ the fit's steps
def _recorded(s) -> dict:
    """The arguments a fit records (``fit.call``: its summary's call line, and what
    ``confint`` refits with)."""
    call = (
        dict(loss=s.loss, rho=s.rho, u=s.u, alpha=s.alpha) if s.loss in ("C", "V") else dict(loss=s.loss, alpha=s.alpha)
    )
    if s.loss == "hhinge":
        call["delta"] = s.delta
    if s.lambda_ is not None:
        call["lambda_"] = s.lambda_
    if s.kernel is not None:
        call["kernel"] = s.kernel if isinstance(s.kernel, str) else getattr(s.kernel, "__name__", "callable")
        if s.sigma is not None:
            call["sigma"] = s.sigma
        if s.gamma is not None:
            call["gamma"] = s.gamma
    if s.standardize is not True:
        call["standardize"] = s.standardize
    if s.kernel_approx is not None:
        call["kernel_approx"] = s.kernel_approx
    return call


def _check(s, gram) -> None:
    """Checks across arguments (each argument alone was checked by the front door)."""
    check_kernel_args(s.kernel, gamma=s.gamma, sigma=s.sigma, degree=s.degree, coef0=s.coef0)
    if gram is not None and (s.kernel is None or s.kernel_approx is not None):
        raise ValueError("clearn: a lent kernel matrix (_gram) needs an exact kernel expansion")
    if s.loss == "C" and float(s.u) <= 0:
        raise ValueError(
            f"clearn(u=...) must be > 0 for the C-loss (u = 0 is the coherence function V, loss='V'); got {s.u!r}"
        )
    if s.kernel_approx is not None and s.kernel is None:
        raise ValueError("clearn: kernel_approx approximates a kernel; give kernel= (e.g. 'rbf')")
    if (s.kernel is not None or s.kernel_approx is not None) and s.penalty_factor is not None:
        raise ValueError("penalty_factor applies to linear expansions only")


@dataclass
class _Problem:
    """What the solver of a C-learning fit needs, prepared from the settings and the design."""

    kind: str  # "kernel", "multi" (linear, K > 2 classes) or "binary" (linear)
    X: np.ndarray  # the linear engine's inputs (the feature map's for kernel_approx)
    y: np.ndarray
    w: np.ndarray
    K: int
    offset: object  # known offsets of the link (None: none)
    intercept: bool
    lossobj: object
    path_lam: np.ndarray  # the penalties to fit (user values preceded by a warm start)
    keep: np.ndarray  # the positions of the values reported
    lmax: float  # the smallest penalty with all coefficients zero
    state: dict  # the result's state known before solving
    standardize: bool = False  # of the linear engine
    pk: object = None  # the prepared kernel matrix (kernel expansions)
    mc: tuple = (1.0, 0.0, 1.0)  # K > 2 classes: temperature, margin and loss scale


def _prepare(design, s, gram) -> _Problem:
    """Settings and design -> the solver's inputs: loss, inputs (standardised, feature-mapped or a
    prepared kernel matrix) and the penalty sequence."""
    rho, u, alpha, delta = float(s.rho), float(s.u), float(s.alpha), float(s.delta)
    n, p = design.nobs, design.p
    off = design.offset
    if off is not None and (design.n_classes > 2 or s.kernel_approx is not None):
        refuse_offset(design, "clearn with more than two classes or kernel_approx")
    K = design.n_classes
    if K < 2:
        raise ValueError("clearn needs a response with at least two classes")
    counts = np.bincount(design.y_int, minlength=K) if hasattr(design, "y_int") else None
    if counts is not None and np.any(counts == 0):
        raise ValueError(
            "every class of the response must occur in the training data; "
            f"counts {dict(zip(design.classes, counts.tolist()))}"
        )
    multiclass = K > 2
    if multiclass:
        if s.loss not in ("C", "V", "logistic"):
            raise ValueError(
                f"for {K} classes clearn fits the multicategory coherence loss (loss 'C' or 'V') or the "
                f"multinomial logistic regression (loss 'logistic'); got {s.loss!r}"
            )
        if s.loss != "logistic" and u != 1.0:
            raise ValueError(f"the multicategory coherence loss has margin u = 1; got u={s.u!r}")
    # K classes: the coherence loss at temperature rho and margin 1, or (loss="logistic") the
    # multinomial deviance, the same loss at temperature 1 and margin 0 (glmnet's multinomial)
    mc_T, mc_margin = (1.0, 0.0) if s.loss == "logistic" else (rho, 1.0)
    # the K-class loss scale (a compiled function: computed only where it is used)
    sc = closs_kappa(rho, 1.0) if multiclass and s.loss == "C" else 1.0
    lossobj = _loss_object(s.loss, rho, u, delta)
    w = np.asarray(design.weights, dtype=np.float64)
    X = design.X
    intercept = bool(design.intercept)
    lam = None
    if s.lambda_ is not None:
        lam = np.sort(np.atleast_1d(np.asarray(s.lambda_, dtype=np.float64)).ravel())[::-1].copy()
    state = dict(
        loss=s.loss, rho=rho, u=u, alpha=alpha, delta=delta, standardize=s.standardize, lossobj=lossobj,
        call=_recorded(s),
    )  # fmt: skip
    if multiclass:
        state["mc_scale"] = sc
    standardize = s.standardize
    kernel = s.kernel
    if s.kernel_approx is not None:
        from cohstats.kernel_approx import feature_map

        xc, xs = column_scaling(X, w, s.standardize)
        Z = (X - xc) / xs
        ker = _make_kernel(s, Z, design.y)
        fmap = feature_map(s.kernel_approx, ker, Z, n_components=s.n_components, random_state=s.random_state)
        state.update(feature_map=fmap, feature_scaling=(xc, xs), kernel=ker)
        X = fmap(Z)  # the linear engine on the feature map, unstandardised
        p = X.shape[1]
        kernel = None
        standardize = False
    common = dict(X=X, y=design.y, w=w, K=K, offset=off, intercept=intercept, lossobj=lossobj, state=state)
    common["mc"] = (mc_T, mc_margin, sc)
    if kernel is not None:
        xc, xs = column_scaling(X, w, s.standardize)
        Z = (X - xc) / xs
        ker = _make_kernel(s, Z, design.y)
        # the one n x n array of the fit: symmetrised (a callable's output is averaged with its
        # transpose there) and centred in place, then shared by lambda_max and the path. A tuner
        # may lend the matrix of these rows (``_gram``, a LentKernel; see cohstats.tuning.shared)
        check_lent(gram, ker, Z, "clearn")
        pk = prepare_kernel(
            ker(Z, Z) if gram is None else gram,
            w,
            intercept=intercept,
            overwrite_K=True,
            check_symmetric=ker.code != KERNEL_CALLABLE,
        )
        if multiclass:
            lmax = kernel_multi_gamma_max(
                pk, design.y, None, mc_T, alpha, n_classes=K, intercept=intercept, loss_scale=sc, margin=mc_margin
            )
        else:
            lmax = kernel_gamma_max(
                pk, design.y, None, lossobj.code, lossobj.p1, lossobj.p2, alpha, intercept=intercept, offset=off
            )
        ratio = 1e-3 if s.lambda_min_ratio is None else s.lambda_min_ratio
        path_lam = _sequence(lam, lmax, int(s.nlambda), ratio, n, p)
        state.update(kernel=ker, Xtrain=Z, scaling=(xc, xs))
        return _Problem("kernel", path_lam=path_lam, keep=_keep(path_lam, lam), lmax=lmax, pk=pk, **common)
    lmax_kw = dict(standardize=standardize, penalty_factor=s.penalty_factor, intercept=intercept)
    if multiclass:
        lmax = multi_lambda_max(X, design.y, w, mc_T, alpha, K=K, loss_scale=sc, margin=mc_margin, **lmax_kw)
    else:
        lmax = lambda_max(X, design.y, w, lossobj.code, lossobj.p1, lossobj.p2, alpha, offset=off, **lmax_kw)
    path_lam = _sequence(lam, lmax, int(s.nlambda), s.lambda_min_ratio, n, p)
    kind = "multi" if multiclass else "binary"
    return _Problem(kind, path_lam=path_lam, keep=_keep(path_lam, lam), lmax=lmax, standardize=standardize, **common)


def _make_kernel(s, Z, y):
    return make_kernel(s.kernel, Z, y, sigma=s.sigma, gamma=s.gamma, degree=s.degree, coef0=s.coef0, width="scale")


def _solve(prob: _Problem, s):
    """The path solver of the problem's kind: ``(intercepts, coefficients, diagnostics)`` along
    ``prob.path_lam``."""
    kw = dict(tol=float(s.tol), max_iter=int(s.max_iter), warn=True, intercept=prob.intercept)
    alpha, lo = float(s.alpha), prob.lossobj
    T, margin, sc = prob.mc
    if prob.kind == "kernel" and prob.K > 2:
        mc = dict(n_classes=prob.K, loss_scale=sc, margin=margin)
        return cd_kernel_multi_path(prob.pk, prob.y, None, T, prob.path_lam, alpha, **mc, **kw)
    if prob.kind == "kernel":
        return cd_kernel_path(
            prob.pk, prob.y, None, lo.code, lo.p1, lo.p2, prob.path_lam, alpha, mode=s.mode, offset=prob.offset, **kw
        )
    lin = dict(standardize=prob.standardize, penalty_factor=s.penalty_factor, **kw)
    if prob.kind == "multi":
        mc = dict(K=prob.K, loss_scale=sc, margin=margin)
        return cd_multi_path(prob.X, prob.y, prob.w, T, prob.path_lam, alpha, **mc, **lin)
    return cd_path(
        prob.X, prob.y, prob.w, lo.code, lo.p1, lo.p2, prob.path_lam, alpha, mode=s.mode, offset=prob.offset, **lin
    )


def _result(design, prob: _Problem, solved, s) -> CLearnFit:
    """The solver's path -> the result: the penalties asked for (not the warm start before
    them), with convergence and passes counted over the whole run."""
    b0, B, info = solved
    keep = prob.keep
    state = dict(prob.state)
    if prob.kind == "kernel":
        state.update(beta_path=B[keep], intercept_path=b0[keep])
    else:
        state.update(coef_path=B[keep], intercept_path=b0[keep])
    L = prob.path_lam.shape
    kept = {k: (v[keep] if isinstance(v, np.ndarray) and v.shape[:1] == L else v) for k, v in info.items()}
    fit = CLearnFit._from_arrays(
        design,
        lambda_=prob.path_lam[keep],
        info=kept,
        lambda_max=prob.lmax,
        converged=bool(np.all(info["converged"])),
        n_iter=int(np.sum(info["n_iter"])),
        **state,
    )
    if prob.kind == "binary":
        _warn_separation(fit, prob.X if s.kernel_approx is None else design.X, design.y, prob.w)
    return fit


def _warn_separation(fit, X, y, w) -> None:
    """Say when the decision values separate the training classes (as glmnet and statsmodels
    do): the loss then keeps falling as the coefficients grow, and the fitted probabilities at
    the end of the path approach 0 and 1. The penalty keeps every fitted value finite."""
    import warnings

    from cohstats.exceptions import DataWarning

    F = fit._decision_path(X)[:, w > 0]
    sep = np.flatnonzero(np.min(F * y[w > 0], axis=1) > 0)
    if sep.size:
        lam = fit.lambda_
        warnings.warn(
            f"clearn: the predictors separate the classes of the training data perfectly at "
            f"{sep.size} of {lam.size} lambda values (lambda <= {lam[sep].max():.4g}); there the fitted "
            "probabilities approach 0 and 1 as lambda falls and the coefficients grow without "
            "a finite unpenalised limit. Choose lambda by cv() rather than the end of the path",
            DataWarning,
            stacklevel=3,
        )


def _fold_kernel(design, args: dict):
    """The kernel of ``clearn(design, **args)`` when it depends on the rows only, else None
    (:func:`cohstats.tuning.shared.rows_only_kernel`); the tuners of :mod:`cohstats.tuning` then
    compute that matrix once for all their fits."""
    return rows_only_kernel(design, args, "clearn")


clearn.fold_kernel = _fold_kernel


def _loss_object(loss, rho, u, delta):
    if loss in ("C", "V"):
        return get_loss(loss, rho=rho, u=u)
    if loss == "hhinge":
        return get_loss("hhinge", delta=delta)
    return get_loss(loss)


def _sequence(lam, lmax, nlambda, ratio, n, p):
    """Penalties to fit. User values below lambda_max are preceded by a short warm-start run
    from lambda_max (glmnet's advice: a path is faster and more accurate than a cold start)."""
    if lam is None:
        if not np.isfinite(lmax):
            why = (
                "the model has no predictors (a formula such as 'y ~ 1')"
                if p == 0
                else "no predictor is penalised (constant columns, or penalty_factor all 0)"
            )
            raise ValueError(
                f"clearn: {why}, so there is no lambda path to compute; give lambda_ "
                f"(e.g. lambda_=0) for the unpenalised fit"
            )
        return lambda_sequence(lmax, nlambda, ratio, n, p)
    top = lam[0]
    if np.isfinite(lmax) and top < lmax and lam.size < 5:
        warm = (
            lmax * np.exp(np.linspace(0.0, math.log(top / lmax), 12))[:-1]
            if top > 0
            else lambda_sequence(lmax, 11, 1e-4)
        )
        return np.concatenate([warm, lam])
    return lam


def _keep(path_lam, lam):
    if lam is None:
        return np.arange(path_lam.size)
    return np.arange(path_lam.size - lam.size, path_lam.size)


# the settings classes by name, for saved files (cohstats.persist resolves classes by path)
ClearnSettings = clearn.Settings
