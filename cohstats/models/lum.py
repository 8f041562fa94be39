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

Layout: :mod:`.lum_fit` (the binary fit's steps: prepare, solve, result), :mod:`.lum_refit`
(the refitted probabilities), :mod:`.lum_result` (:class:`LumFit`), :mod:`.lum_multi` (the
angle-based K-class LUM) and this module (the fit functions); every public name is importable
from here.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd

from cohstats.losses.binary import lum_link  # the one LUM inverse link (re-exported here)
from cohstats.tuning.shared import rows_only_kernel
from cohstats.validation import (
    AnyOf,
    Anything,
    Bool,
    Callable,
    FitSpec,
    Integer,
    NoneOr,
    Options,
    Real,
    Reals,
    check_kernel_args,
    check_param,
    fit_function,
    public_signature,
)
from cohstats.formula import NAAction
from cohstats.models.lum_multi import LumMultiFit, _lum_angle
from cohstats.models.lum_refit import _convergence_warning, lum_refit, lum_refit_angle, refit_coef_table
from cohstats.models.lum_result import _interp_weights  # noqa: F401 - kept importable from here
from cohstats.models.lum_result import LumFit, _HARD_C, _check_lambda, _validation_sample
from cohstats.models.lum_fit import LUM_LAMBDA_GRID, _prepare, _result, _solve

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


def _to_design(formula, data, weights, subset, na_action, context=None, offset=None):
    from cohstats.formula import Design, build_design

    if isinstance(formula, Design):
        if data is not None:
            raise ValueError("data must be None when a Design is passed as formula")
        return build_design(formula, weights=weights, subset=subset, offset=offset)
    if isinstance(formula, str):
        return build_design(
            formula, data, weights=weights, subset=subset, na_action=na_action, context=context, offset=offset
        )
    if data is None:
        raise TypeError(
            "lum() needs a formula string with data, a Design, or arrays X, y "
            f"(got formula of type {type(formula).__name__} and data=None)"
        )
    return build_design(formula, data, weights=weights, subset=subset, na_action=na_action, offset=offset)


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
    "na_action": NAAction(),
    "offset": Anything(),
    "refit_on": Options("train", "validation"),
    "form": Options("pairwise", "angle"),
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
    offset=None,
    penalty_factor=None,
    validation=None,
    refit_on: str = "train",
    form: str = "pairwise",
    tol: float = 1e-7,
    max_iter: int = 10000,
    nfolds: int = 10,
    random_state=0,
    kernel_approx=None,
    n_components: int = 300,
    _gram=None,
    _context=None,
    _settings=None,
) -> "LumFit":
    """Large-margin unified machine (LUM) along a penalty path ([LZW]).

    Minimises ``(1/n) sum_i w_i V_{a,c}(y_i f(x_i)) + lambda * J(f)`` over a decreasing
    ``lambda`` sequence (warm starts), with ``f(x) = offset + b + x'beta`` and
    ``J = sum_j pf_j ((1-alpha)/2 beta_j^2 + alpha |beta_j|)`` (the default ``alpha = 0`` is the
    paper's ridge ``(lambda/2)||beta||^2``), or ``f(x) = b + sum_j beta_j K(x_j, x)`` and
    ``J = (lambda/2) beta'K beta`` for a kernel. The intercept is never penalised.

    More than two classes (angle-based multicategory LUM): the K classes are coded by the
    vertices ``W_1..W_K`` of a regular simplex in ``R^{K-1}`` (C. Zhang and Y. Liu,
    Biometrika 2014; unit vectors summing to zero,
    :func:`cohstats.losses.angle.simplex_vertices`; ``classes[k]`` is ``W_{k+1}``),
    ``f(x) = b + B'x`` in ``R^{K-1}``, the class margins are ``u_k = <f, W_k>`` and the objective
    is ``(1/n) sum_i w_i L(f(x_i), y_i) + lambda sum_j pf_j ((1-alpha)/2 ||B_j||^2 +
    alpha ||B_j||)`` with ``B_j`` the row of predictor ``j`` (a grouped penalty, invariant under
    rotations of the simplex, so a predictor enters for all classes at once). [LZW] define the
    LUM for two classes only; the K-class loss used here is T. Zhang's pairwise comparison
    (JMLR 2004) of the margins, ``L(f, y) = (1/(K-1)) sum_{j != y} V_{a,c}(kappa (u_y - u_j))``
    with ``kappa = (K-1)/K``: Fisher consistent, equal to the binary LUM at K = 2, and, as it
    depends on margin differences only, not misled by one class lying far from the others (the
    plain angle loss ``V(u_y)`` of Zhang & Liu is, and misclassifies a fifth of iris). The
    predicted class maximises ``u_k``; ``coef`` and ``intercept`` are those of the class
    margins (terms x classes, rows summing to zero; ``fit.coef_simplex`` gives ``B`` itself).
    The default ``lambda`` sequence and the default ``s`` (its smallest value, a lightly
    penalised fit) are those of two classes; choose ``lambda`` with :func:`cohstats.cv`.
    Linear expansion only; ``c`` must be finite, and for large ``c`` (100 and more) the block
    steps, majorised with the LUM's curvature bound ``(a+1)(1+c)/a``, converge slowly (raise
    ``max_iter``; unconverged lambdas are reported by a warning). Probabilities
    (``predict(type="prob", method=)``): ``"refit"`` (default, as for two classes:
    ``f2 = g0 + g1 f`` refitted with ``c = 0``, :func:`lum_refit_angle`, the K-class form of
    [LZW] eq (9)) or ``"lum"``, the inverse link of the fitted LUM: the ``p`` whose population
    risk ``f`` minimises, the stationary distribution of a K-state Markov chain with rates
    ``|V'(kappa (u_k - u_j))|`` (:func:`cohstats.losses.angle.angle_lum_proba`); for ``c > 0`` it
    is flat wherever margins lie within ``c/((1+c) kappa)`` of each other. ``c="tuned"`` is for two
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
    offset : known offsets added to the decision value, ``f(x) = offset + b + x'beta`` (or
        ``offset + b + sum_j beta_j K(x_j, x)``; R's ``offset``): an array with one value per
        row of ``data``, or a column name; ``offset(col)`` in the formula does the same. Two
        classes; every solver route takes it. The refitted-LUM scale is fitted to the decision
        values including the offset, ``f2 = g0 + g1 (offset + b + x'beta)``; predictions on new
        data read the offset from its columns (or take ``predict(newdata, offset=...)``).
        ``validation=`` then needs a DataFrame with the offset columns.
    penalty_factor : per-column penalty multipliers (linear expansion).
    validation : DataFrame (with the response) or tuple ``(X, y)``, optional. Used by
        ``refit_on="validation"`` and by ``c="tuned"``.
    refit_on : {"train", "validation"}. Sample on which the refitted-LUM scale ``(g0, g1)`` is
        estimated (the paper refits on the training sample).
    form : {"pairwise", "angle"}, the loss for K > 2 classes (above): the pairwise-comparison
        loss on the angle-based margins (default) or Zhang & Liu's angle-based loss ``V(u_y)``
        (R abclass's). With two classes both are the binary LUM.
    tol, max_iter : engine tolerance and sweep limit.
    nfolds, random_state : cross-validation for ``c="tuned"`` without ``validation``.

    Returns
    -------
    LumFit (two classes) or LumMultiFit (K > 2 classes)

    ``fit.settings`` holds the validated arguments of the call (``lum.Settings``, a frozen
    :class:`~cohstats.validation.Settings`): refits, the tuners and saved files read it.

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
        # the tuned LUM: every setting but c (and the path arguments tune_lum sets itself)
        untuned = ("c", "nlambda", "lambda_min_ratio", "kernel_approx", "n_components", "form")
        args = {k: v for k, v in _settings.as_dict().items() if k not in untuned}
        return tune_lum(
            formula, data, weights=weights, subset=subset, na_action=na_action, offset=offset, _context=_context, **args
        )
    a, c = float(a), float(c)  # checked by the front door (c="tuned" went to tune_lum above)
    alpha, tol, nlambda, max_iter = float(alpha), float(tol), int(nlambda), int(max_iter)
    if refit_on == "validation" and validation is None:
        raise ValueError("lum(refit_on='validation') needs the validation= sample")
    design = _to_design(formula, data, weights, subset, na_action, _context, offset)
    from cohstats.formula import refuse_no_intercept, refuse_offset

    if not design.binary:
        refuse_offset(design, "lum with more than two classes (the angle-based LUM)")

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
            form=form,
        )
    problem = _prepare(design, _settings, _gram)
    return _result(design, problem, _solve(problem, _settings), _settings)


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

    a = float(check_param("tune_lum", "a", a, _PARAMS["a"]))
    for c in np.atleast_1d(cs).tolist():
        check_param("tune_lum", "cs", c, Real(0.0, allow_inf=True))
    cs_ = sorted(float(c) for c in np.atleast_1d(cs))
    if len(cs_) == 0:
        raise ValueError("cs must contain at least one value of c")
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
        kwargs.pop("offset", None),
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
        refit = dict(_validation=_validation_sample(design, validation), refit_on="validation", _refit_cache={})
    # the tuned result is derived from the winning fit (a copy with the tuning record)
    return fit._derive(
        **refit,
        tuning=pd.DataFrame(rows),
        c_selected=c_sel,
        tuning_best=pd.DataFrame([{"c": c, "lambda": best[c][1], "error": best[c][0]} for c in cs_]),
        tuning_note=note,
        call=dict(getattr(fit, "call", {}) or {}, c="tuned"),
    )


tune_lum.__signature__ = public_signature(tune_lum, verbose=False)  # _context is the wrappers' protocol


# the settings classes by name, for saved files (cohstats.persist resolves classes by path)
LumSettings = lum.Settings
