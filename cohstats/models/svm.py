"""Support vector machines (libsvm's C-SVM, the weighted SVM of [WSL], one-vs-one for K classes)
with honest class probabilities.

:func:`svm` fits libsvm's C-SVM

    minimise  (1/2) ||h||_K^2 + C sum_i w_i S_pi(y_i) [1 - y_i f(x_i)]_+,    f = b + h,

by SMO (:mod:`cohstats.solvers.svm.smo`). ``pi=None`` (the default) is the unweighted SVM
(``S = 1``): the same problem, and the same decision values to the solver tolerance, as
scikit-learn's ``SVC(C=C, gamma=gamma)`` and R e1071's ``svm(cost=C)``. A number ``pi`` gives
the weighted SVM of [WSL] eq. (3) with ``S_pi(+1) = 1 - pi`` and ``S_pi(-1) = pi``;
``pi="path"`` follows its exact solution path in ``pi`` (:mod:`cohstats.solvers.svm.svmpath`)
over the bracketing grid. In the package's penalty convention the same problem reads
``(1/n) sum_i w_i S_pi(y_i) [1 - y_i f_i]_+ + (lambda_/2) ||h||^2`` with
``C = 1 / (n lambda_)``.

More than two classes are fitted one-vs-one, as libsvm: one binary C-SVM per pair of classes
on the rows of those two classes, by the same SMO engine (a callable kernel is evaluated once
and shared by the pairs; predictions evaluate one kernel block against the union of the
support points for all pairs). Classes are predicted by voting, probabilities by pairwise
coupling (:mod:`cohstats.coupling`) of any of the binary probability methods applied pair by
pair.

Probabilities (``predict(type="prob", method=...)``): ``"platt"``, ``"sollich"``,
``"coherence"`` and ``"bracket"`` (see :mod:`cohstats.probability`), and ``"platt_tuned"``
([WSL]'s tuned Platt: ``lambda_`` re-chosen by the GKL estimate, :meth:`SVMFit.platt_tuned`).

Layout: :mod:`.svm_result` (:class:`SVMFit`), :mod:`.svm_multi` (:class:`MulticlassSVMFit`),
:mod:`.svm_fit` (the fitting steps), :mod:`.svm_approx` (the low-rank route) and this module
(the fit functions and :class:`PsiFit`); every public name is importable from here.
"""

from __future__ import annotations

import warnings

import numpy as np

from cohstats.exceptions import ConvergenceWarning
from cohstats.formula import NAAction, capture_context
from cohstats.kernels import KERNEL_CALLABLE, KERNEL_LINEAR
from cohstats.probability import (
    bracket_grid,
)
from cohstats.results import Summary
from cohstats.validation import AnyOf, Bool, Callable, FitSpec, Integer, NoneOr, Options, Real, Reals, fit_function
from cohstats.validation import Anything
from cohstats.models.svm_fit import _default_m, _design, _fit_args, _prepare, _result, _solve
from cohstats.models.svm_multi import MulticlassSVMFit
from cohstats.models.svm_result import SVMFit, _METHODS, class_weights

__all__ = ["svm", "SVMFit", "MulticlassSVMFit", "psi_learn", "PsiFit"]


_KERNELS = NoneOr(AnyOf(Options("linear", "rbf", "poly"), Callable()))
_PARAMS = {
    "kernel": _KERNELS,
    "C": NoneOr(Real(0.0, closed="neither")),
    "lambda_": NoneOr(Reals(Real(0.0, closed="neither"))),
    "gamma": AnyOf(Real(0.0, closed="neither"), Options("scale", "auto", "median", "mean")),
    "sigma": AnyOf(Real(0.0, closed="neither"), Options(None, "median")),
    "degree": Integer(1),
    "coef0": Real(),
    "standardize": Bool(),
    "pi": AnyOf(Real(0.0, 1.0), Options(None, "path")),
    "m": NoneOr(Integer(2)),
    "tol": Real(0.0, closed="neither"),
    "cache_size": Real(0.0, closed="neither"),
    "shrinking": Bool(),
    "max_iter": NoneOr(Integer(1)),
    "prob_method": NoneOr(Options(*_METHODS)),
    "path_method": Options("exact", "warm", "auto"),
    "na_action": NAAction(),
}
# probabilities of an SVM are a calibration of its decision values: cross-validate the
# classification error by default
_DECLARED = FitSpec("svm", path_args=(), multiclass=True, probabilities=True, default_measure="class")
# svm only (psi_learn shares _PARAMS): the low-rank kernel route (cohstats.models.svm_approx)
_APPROX_PARAMS = {
    "kernel_approx": NoneOr(Options("nystroem", "rff")),
    "n_components": Integer(1),
    "offset": Anything(),
}


@fit_function(
    _DECLARED,
    {**_PARAMS, **_APPROX_PARAMS},
    renamed={"alpha": "dual_alpha_ (a fitted attribute; alpha is the elastic-net l1 share)"},
)
def svm(
    formula,
    data=None,
    *,
    kernel="rbf",
    C=None,
    lambda_=None,
    gamma="scale",
    sigma=None,
    degree: int = 3,
    coef0: float = 0.0,
    standardize: bool = True,
    pi=None,
    m=None,
    weights=None,
    subset=None,
    tol: float = 1e-3,
    cache_size: float = 200.0,
    shrinking: bool = True,
    max_iter: int | None = None,
    prob_method: str | None = None,
    path_method: str = "auto",
    n_jobs: int | None = None,
    na_action: str = "omit",
    kernel_approx=None,
    n_components: int = 300,
    random_state=0,
    offset=None,
    _settings=None,
) -> SVMFit:
    """Support vector machine (libsvm's C-SVM; the weighted SVM of [WSL]; one-vs-one for K > 2
    classes) fitted by SMO, with probability outputs.

    ``svm(X, y, C=1, gamma=g, standardize=False)`` solves the problem of scikit-learn's
    ``SVC(C=1, gamma=g)`` and gives its decision values to the solver tolerance;
    ``standardize=True`` (the default, as R e1071's ``svm(scale=TRUE)``) corresponds to
    ``make_pipeline(StandardScaler(), SVC(...))``.

    Parameters
    ----------
    formula : str, Design or array
        ``"y ~ x1 + x2"`` with ``data``; a :class:`~cohstats.formula.Design`; or a matrix with
        labels in ``data``. Two classes: the second is coded ``+1`` (``f > 0`` predicts it).
        K > 2 classes: one-vs-one (see :class:`MulticlassSVMFit`).
    data : DataFrame (or labels for matrix input).
    kernel : ``"rbf"`` (default, ``exp(-gamma ||x - x'||^2)``), ``"poly"``
        (``(gamma <x, x'> + coef0)^degree``), ``None`` or ``"linear"`` (the linear SVM; its
        input-space coefficients are ``coef``), or a callable ``k(X, Z) -> matrix``.
    C, lambda_ : libsvm's cost ``C``, or the penalty ``lambda_ = 1 / (n C)`` (give one; default
        ``C = 1``). The per-row costs are ``C_i = C w_i S_pi(y_i)``. For K > 2 every pair uses
        the same ``C`` (as libsvm), so ``lambda_`` refers to the whole training set.
    gamma, sigma : kernel width, ``gamma = 1 / sigma^2`` (give at most one). ``gamma`` may be a
        number, ``"scale"`` (default: ``1 / (p Var(X))`` over all entries of the (standardised)
        training matrix, scikit-learn's default; ``1/p`` on standardised inputs, e1071's
        default), ``"auto"`` (``1/p``) or ``"median"``: ``sigma`` = the median distance between
        points of different classes, the heuristic of [WSL] section 5.2
        (:func:`cohstats.kernels.median_between`; exact up to 2 000 points per class, a seeded
        subsample of each larger class, so memory and time stay bounded). ``sigma`` may be
        a number or ``"median"``. A width given with a linear or callable kernel is an error.
    degree, coef0 : polynomial kernel (libsvm's defaults 3 and 0).
    standardize : centre and scale every predictor (sd with divisor n, weighted by
        ``weights``) before the kernel; coefficients of linear fits are reported on the
        original scale. Default True, as e1071's ``svm(scale=TRUE)``: a Gaussian kernel on raw
        predictors is dominated by the columns with the largest units (on the raw
        breast-cancer data the 10-fold CV error at the other defaults is 8 % unscaled and
        2.5 % scaled; ``benchmarks/log.csv``).
    pi : None (default: libsvm's C-SVM), a class weight in ``[0, 1]`` (``S(+1) = 1 - pi``,
        ``S(-1) = pi``, [WSL] eq. 3; ``SVC(C=C, class_weight={+1: 1 - pi, -1: pi})`` solves the
        same problem; binary responses only), or ``"path"``: follow the exact pi path over
        the bracketing grid ``(j - 1)/m`` (the decision function is then the weighted SVM at
        ``pi = 1/2``, read off the path: exact, and ``n_iter`` counts the path's events; for
        K > 2 every pair gets its path).
    m : bracketing grid size (default ``floor(sqrt(n))``, [WSL]; for K > 2 the size of each
        pair's rows).
    weights : observation weights ``w_i`` (array or column name).
    subset, na_action : as :func:`cohstats.formula.build_design`.
    tol : SMO stopping tolerance on the maximal KKT violation (libsvm's ``eps``, 1e-3).
    cache_size : kernel-row cache in megabytes (per pair for K > 2 classes, as libsvm; a
        callable kernel is evaluated once on all rows and its blocks shared by the pairs).
    shrinking : libsvm's shrinking heuristic.
    max_iter : SMO iteration cap (default ``max(1e7, 100 n)``).
    prob_method : default of ``predict(type="prob", method=)``: ``"bracket"`` for
        ``pi="path"``, else ``"platt"``.
    path_method : how the weighted SVMs of the bracketing grid are obtained: ``"exact"`` (the
        exact pi path, [WSL] 4.6; cost ``O(n |elbow|)`` per event, about ``1.6 n`` events),
        ``"warm"`` (SMO at each grid value warm-started from its neighbours: the secant through
        the two previous solutions, where the path is close to linear in pi, else the neighbour's
        solution clipped to the new box; accurate to ``tol``) or ``"auto"`` (default: exact up
        to n = 300, warm above, where the warm grid is the faster of the two; the measurements
        are in the repository's ``benchmarks/log.csv``).
    n_jobs : threads for the bracketing grid: 2 (or -1) computes its lower and upper halves
        concurrently. Default one thread.
    kernel_approx : None (default: the exact kernel, by SMO) or ``"nystroem"`` / ``"rff"``: replace
        the kernel by the inner products of a seeded low-rank feature map
        (:mod:`cohstats.kernel_approx`; Nystroem landmarks, or random Fourier features for the
        Gaussian kernel) and solve the same weighted C-SVM on the n x ``n_components`` mapped
        rows by dual coordinate descent (Hsieh et al. 2008; the intercept unpenalised, as
        libsvm's, by the method of multipliers; :mod:`cohstats.solvers.svm.linear`). Memory
        ``O(n r)``, for n beyond what a kernel cache serves (K > 2 classes: one-vs-one, one map
        shared by the pairs). ``tol`` is
        then the projected-gradient tolerance, ``max_iter`` caps the epochs (default 10 000),
        ``cache_size`` is unused, and the bracketing grid (``pi="path"`` or
        ``method="bracket"``) is solved value by value, warm-started. Returns an
        :class:`~cohstats.models.svm_approx.ApproxSVMFit` (K > 2: ``ApproxMulticlassSVMFit``).
    n_components, random_state : r (landmarks or random features; default 300, as
        :func:`cohstats.clearn` and :func:`cohstats.lum`) and the seed that draws them and
        the coordinate order.
    offset : known offsets added to the decision value, ``f(x) = offset + b + h(x)`` (R's
        ``offset``): an array with one value per row of ``data``, or a column name;
        ``offset(col)`` in the formula does the same. The margin constraints become
        ``y_i (o_i + b + h(x_i)) >= 1 - xi_i``, so the offset enters the SMO dual as the linear
        term ``sum_i a_i (1 - y_i o_i)``. Two classes, a number ``pi`` (or None) and the exact
        kernel; probabilities by ``"platt"`` (Platt's sigmoid fitted to the training decision
        values with their offsets), ``"sollich"`` or ``"coherence"`` (``"bracket"`` and
        ``"platt_tuned"`` refit without the offset and are refused). Predictions on new data
        read the offset from its columns (or take ``predict(newdata, offset=...)``).

    Returns
    -------
    SVMFit (two classes) or MulticlassSVMFit (K > 2). Both have one penalty, not a path:
    ``lambda_`` is a 1-D array with that value, ``predict(s=)`` accepts only it and
    ``select()`` refuses; tune ``lambda_`` / ``C`` with :func:`cohstats.tune`.

    ``fit.settings`` holds the validated arguments of the call (``svm.Settings``, a frozen
    :class:`~cohstats.validation.Settings`): refits, the tuners and saved files read it.

    Probabilities
    -------------
    Two classes: ``method="platt"`` (Platt's sigmoid on the training decision values),
    ``"platt_tuned"``, ``"sollich"``, ``"coherence"`` ([ZDJ]) or ``"bracket"`` ([WSL]).
    K > 2: the same method on every pair's SVM gives ``P(a | a or b, x)``, and these are
    coupled into K probabilities by Wu, Lin & Weng's (2004) method 2 as libsvm's ``-b 1``
    (libsvm fits the pairwise Platt sigmoids on 5-fold cross-validated decision values; here
    they use the training decision values, as for two classes). Coupling the bracketing
    estimates of [WSL] is new (not in [WSL] nor in libsvm): each pairwise estimate is accurate
    only to the grid spacing ``1/m``, and coupling propagates that resolution.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from cohstats.models.svm import svm
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame(rng.normal(size=(80, 2)), columns=["x1", "x2"])
    >>> df["y"] = np.where(df.x1 + 0.5 * rng.normal(size=80) > 0, "yes", "no")
    >>> fit = svm("y ~ x1 + x2", df, kernel=None, lambda_=0.05)
    >>> fit.predict(df.head(3), type="prob", method="bracket").shape
    (3, 2)
    """
    ctx = capture_context(1) if isinstance(formula, str) else None
    design = _design(
        formula, data, ctx, weights=weights, subset=subset, na_action=na_action, binary_only=False, offset=offset
    )
    prob = _prepare(design, _settings, allow_path=True, binary_only=False)
    from cohstats.solvers.svm.svmpath import _n_threads

    _n_threads(n_jobs)  # validate before any work
    run = _fit_args(prob, _settings, svm, _recorded(_settings, prob))
    if kernel_approx is not None:
        from cohstats.formula import refuse_offset
        from cohstats.models.svm_approx import fit_approx

        refuse_offset(design, "svm with kernel_approx (its dual coordinate descent has no offset term)")

        return fit_approx(
            design,
            prob.Z,
            prob.xc,
            prob.xs,
            prob.kern,
            kernel_approx=kernel_approx,
            n_components=n_components,
            random_state=random_state,
            **run,
        )
    return _result(design, prob, _solve(design, prob, run), run)


def _recorded(s, prob, with_lambda: bool = True) -> dict:
    """The arguments an SVM fit records (``fit.call``: its summary's call line)."""
    kname = None if s.kernel is None else (s.kernel if isinstance(s.kernel, str) else "callable")
    call = {"kernel": kname, **({"lambda_": prob.lam} if with_lambda and s.lambda_ is not None else {"C": prob.Cval})}
    if prob.kern.code not in (KERNEL_LINEAR, KERNEL_CALLABLE):
        call["gamma"] = float(prob.kern.kpar[0])
    if prob.pi is not None:
        call["pi"] = prob.pi
    if not s.standardize:
        call["standardize"] = False
    return call


class PsiFit(SVMFit):
    """A fitted psi-learning classifier ([WSL] 4.3); see :func:`psi_learn`.

    Bracketing probabilities refit psi-learning at every interior grid value ``pi_j = j/m``
    (there is no exact path for the non-convex psi loss).
    """

    method = "psi_learn"
    title = "Weighted psi-learning (DC programming)"

    @classmethod
    def _from_arrays(cls, design, *, psi_objective, history, n_dc, tol, max_dc, **svm_state) -> "PsiFit":
        """Build the result of the DC iteration: the state of :meth:`SVMFit._from_arrays`
        (``dual_alpha`` the multipliers theta) plus the psi objective, its ``history``, the
        number ``n_dc`` of DC steps and the ``tol``/``max_dc`` the bracketing refits reuse."""
        self = super()._from_arrays(design, **svm_state)
        self.psi_objective = psi_objective
        self.history = history
        self.n_dc = n_dc
        self._tol = tol
        self._max_dc = int(max_dc)
        return self

    def _grid_fits(self, m: int | None):
        m = self._check_m(m)
        cache = self.__dict__.setdefault("_psi_grid", {})
        if m not in cache:
            from cohstats.solvers.svm.psi import psi_dc

            grid = bracket_grid(m)
            y = self.design.y
            B = np.empty((grid.size, self.nobs))
            b0 = np.empty(grid.size)
            for j, pj in enumerate(grid):
                cw = self.design.weights * class_weights(y, pj)
                r = psi_dc(
                    self._Z,
                    y,
                    kernel=self.kernel,
                    lam=float(self.lambda_[0]),
                    cw=cw,
                    tol=self._tol,
                    max_dc=self._max_dc,
                    cache_size=self._cache_size,
                )
                B[j] = r.dual * y
                b0[j] = r.intercept
            cache[m] = (grid, B, b0)
        return cache[m]

    def _summary(self) -> Summary:
        sm = super()._summary()
        sm.info["psi objective"] = self.psi_objective
        sm.info["DC iterations"] = self.n_dc
        sm.info.pop("dual objective", None)
        return sm


_PSI_PARAMS = {k: v for k, v in _PARAMS.items() if k not in ("shrinking", "path_method")}
_PSI_PARAMS["max_dc"] = Integer(1)
_PSI_DECLARED = FitSpec("psi_learn", path_args=(), multiclass=False, probabilities=True, default_measure="class")


@fit_function(_PSI_DECLARED, _PSI_PARAMS)
def psi_learn(
    formula,
    data=None,
    *,
    kernel="rbf",
    C=None,
    lambda_=None,
    gamma="scale",
    sigma=None,
    degree: int = 3,
    coef0: float = 0.0,
    standardize: bool = True,
    pi=None,
    m=None,
    weights=None,
    subset=None,
    tol: float = 1e-3,
    max_dc: int = 50,
    cache_size: float = 200.0,
    max_iter: int | None = None,
    prob_method: str | None = None,
    na_action: str = "omit",
    _settings=None,
) -> PsiFit:
    """Weighted psi-learning ([WSL] eq. 3 with the psi loss) by DC programming ([WSL] 4.3).

    Minimises ``(1/n) sum_i w_i S_pi(y_i) psi(y_i f(x_i)) + (lambda/2) ||h||_K^2`` with
    ``psi(z) = 2`` (z < 0), ``2 (1 - z)`` (0 <= z < 1), ``0`` (z >= 1). Each DC step solves the
    SVM dual with shifted bounds by SMO, starting from the weighted SVM at the same
    ``(pi, lambda)``; the iterate with the smallest psi objective is returned (a local solution:
    the problem is non-convex). Binary responses only.

    Parameters are those of :func:`~cohstats.models.svm.svm` (``pi`` must be a number or None;
    default None, unweighted; ``gamma``/``sigma``, ``standardize`` as there), plus ``max_dc``
    (DC iterations). Probabilities: ``"platt"`` (default), ``"sollich"``, ``"coherence"``,
    ``"bracket"`` (psi-learning refitted on the grid ``j/m``). The fit's ``settings`` holds the
    validated arguments (``psi_learn.Settings``, a frozen :class:`~cohstats.validation.Settings`).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame(rng.normal(size=(60, 2)), columns=["x1", "x2"])
    >>> df["y"] = np.where(df.x1 + 0.4 * rng.normal(size=60) > 0, 1, -1)
    >>> fit = psi_learn("y ~ x1 + x2", df, kernel=None, lambda_=0.05)
    >>> bool(fit.psi_objective <= fit.history[0])
    True
    """
    ctx = capture_context(1) if isinstance(formula, str) else None
    design = _design(formula, data, ctx, weights=weights, subset=subset, na_action=na_action, binary_only=True)
    prob = _prepare(design, _settings, allow_path=False, binary_only=True)
    if isinstance(max_dc, bool) or not isinstance(max_dc, (int, np.integer)) or max_dc < 1:
        raise ValueError(f"max_dc must be a positive integer; got {max_dc!r}")
    return _psi_result(design, prob, _psi_solve(design, prob, _settings), _settings)


def _psi_solve(design, prob, s):
    """The DC iteration of psi-learning ([WSL] 4.3) from the weighted SVM at the same ``(pi, lambda)``:
    its result and the class-weighted observation weights."""
    from cohstats.solvers.svm.psi import psi_dc

    cw = design.weights * class_weights(design.y, prob.pi)
    r = psi_dc(
        prob.Z, design.y, kernel=prob.kern, lam=prob.lam, cw=cw, tol=prob.tol, max_dc=int(s.max_dc),
        cache_size=s.cache_size, max_iter=s.max_iter,
    )  # fmt: skip
    if not r.converged:
        warnings.warn(
            f"psi_learn: the DC iteration stopped after {r.n_iter} steps without a "
            "repeated sign pattern or a relative decrease below 1e-6; increase max_dc",
            ConvergenceWarning,
            stacklevel=3,
        )
    return r, cw


def _psi_result(design, prob, solved, s) -> PsiFit:
    """The DC iterate with the smallest psi objective -> :class:`PsiFit`."""
    r, cw = solved
    n, Cval, max_dc = design.nobs, prob.Cval, int(s.max_dc)
    return PsiFit._from_arrays(
        design,
        kernel=prob.kern,
        kernel_arg=prob.kernel_arg,
        C=Cval,
        lambda_=np.array([prob.lam]),
        pi=prob.pi,
        m=_default_m(n) if prob.m is None else int(prob.m),
        cost=2.0 * cw * Cval,
        standardize=s.standardize,
        Z=prob.Z,
        scaling=(prob.xc, prob.xs),
        dual_alpha=r.dual,
        support=np.flatnonzero(r.dual != 0),
        b=float(r.intercept),
        n_iter=r.n_iter,
        converged=r.converged,
        fitted_decision=r.info["fitted"],
        objective=float("nan"),
        psi_objective=r.objective,
        history=r.info["history"],
        n_dc=r.n_iter,
        tol=prob.tol,
        max_dc=max_dc,
        prob_method=prob.prob_method,
        cache_size=s.cache_size,
        fit_fn=psi_learn,
        fit_args=dict(tol=prob.tol, max_dc=max_dc, cache_size=s.cache_size, max_iter=s.max_iter),
        call=_recorded(s, prob, with_lambda=False),
    )


# the settings classes by name, for saved files (cohstats.persist resolves classes by path)
SvmSettings = svm.Settings
PsiLearnSettings = psi_learn.Settings
