from __future__ import annotations

from typing import Callable

import numpy as np
import pandas as pd

from ..persist import Persistable
from ..svalues import is_sequence, per_s, s_key
from ._common import (
    _merge_fit_kwargs,
    _along,
    _refit_args,
    _as_design,
    _capture,
    _check_fit_fn,
    _check_n_jobs,
    _default_measure,
    _fit_name,
    _fmt_args,
    _has_path,
    _rng,
    _summary_cls,
)
from .parallel import _parallel, progress_bar, scheduler_backend
from .folds import _resolve_foldid
from .shared import SharedKernel, fold_kernel, kernel_key, sequential
from .measures import _Measure, _evaluate, _get_measure, _nzero_of, _outputs, _select


class CVResult(Persistable):
    """Result of :func:`cv`: the cross-validation curve and the selected model.

    Attributes
    ----------
    lambda_ : ndarray or None
        The penalty sequence (path fits) -- the full-data fit's sequence.
    cvm, cvsd : ndarray
        Mean cross-validated measure and its standard error at every sequence value
        (length 1 for non-path fits). ``cvup = cvm + cvsd``, ``cvlo = cvm - cvsd``.
    fold_values : ndarray (K, L)
        The measure on every held-out fold.
    lambda_min, lambda_1se : float or None
        Value with the best mean, and the most regularised value whose mean is within one
        standard error of the best. Ties go to the more regularised value: the
        earlier one in the fitted sequence, i.e. the larger lambda of a decreasing penalty
        path (the fewer steps of a boosting path).
    fit : the full-data fit (all of its sequence). For path fits it carries the cross-validated
        choices, so ``fit.coef_at("lambda.min")`` and ``fit.predict(s="lambda.1se")`` work on it
        and its summary shows the cross-validated measure at its ``s``.
    best_fit : ``fit.select(lambda_min)`` for path fits, else ``fit``.
    foldid : ndarray of fold ids, ``nfolds`` the number of folds used.
    nzero : nonzero coefficients along the path (when the fit reports them) or None.
    """

    def __init__(
        self, *, measure: _Measure, lambda_, fold_values, fold_weights, foldid, fit, call: dict, fit_name: str
    ):
        self.measure = measure.key
        self.measure_name = measure.name
        self._meas = measure
        self.lambda_ = None if lambda_ is None else np.asarray(lambda_, float)
        self.fold_values = np.asarray(fold_values, float)
        self.fold_weights = np.asarray(fold_weights, float)
        self.foldid = foldid
        self.nfolds = int(self.fold_values.shape[0])
        self.fit = fit
        self.call = call
        self.fit_name = fit_name
        F, W = self.fold_values, self.fold_weights
        ok = ~np.isnan(F)
        Wm = np.where(ok, W[:, None], 0.0)
        Fz = np.where(ok, F, 0.0)
        with np.errstate(invalid="ignore", divide="ignore"):
            self.cvm = np.sum(Wm * Fz, axis=0) / np.sum(Wm, axis=0)
            # cv.glmnet: weighted variance of the fold values about the mean, / (K - 1)
            dev = np.where(ok, (F - self.cvm[None]) ** 2, 0.0)
            kk = ok.sum(axis=0)
            self.cvsd = np.sqrt(np.sum(Wm * dev, axis=0) / np.sum(Wm, axis=0) / np.maximum(kk - 1, 1))
        self.cvsd = np.where(kk > 1, self.cvsd, np.nan)
        self.cvup = self.cvm + self.cvsd
        self.cvlo = self.cvm - self.cvsd
        self.index_min, self.index_1se = _select(None, self.lambda_, self.cvm, self.cvsd, measure.greater_is_better)
        L = self.cvm.shape[0]
        self.nzero = _nzero_of(fit, L) if self.lambda_ is not None else None
        if self.lambda_ is not None and self.index_min is not None and hasattr(fit, "_derive"):
            self.fit = fit._derive(
                _cv_selection={
                    "lambda_min": self.lambda_min,
                    "lambda_1se": self.lambda_1se,
                    "measure": self.measure_name,
                    "nfolds": self.nfolds,
                    "lambda": self.lambda_,
                    "cvm": self.cvm,
                    "cvsd": self.cvsd,
                }
            )

    # ------------------------------------------------------------------ selection
    @property
    def lambda_min(self):
        if self.lambda_ is None or self.index_min is None:
            return None
        return float(self.lambda_[self.index_min])

    @property
    def lambda_1se(self):
        if self.lambda_ is None or self.index_1se is None:
            return None
        return float(self.lambda_[self.index_1se])

    @property
    def score(self) -> float:
        """The cross-validated measure of a non-path fit (at ``lambda_min`` for a path)."""
        return float(self.cvm[self.index_min if self.index_min is not None else 0])

    @property
    def best_fit(self):
        if self.lambda_ is None:
            return self.fit
        return self.fit.select(self.lambda_min)

    @property
    def fit_1se(self):
        if self.lambda_ is None:
            return self.fit
        return self.fit.select(self.lambda_1se)

    def _s(self, s, where: str):
        """The penalty named or given by ``s`` (R's ``"lambda.min"`` / ``"lambda.1se"``, the
        attribute names ``"lambda_min"`` / ``"lambda_1se"``, or a number)."""
        if isinstance(s, str):
            return getattr(self, s_key(f"CVResult.{where}()", s, "the fitted lambda sequence"))
        return s

    def predict(self, newdata=None, type: str = "class", s="lambda.1se", **kw):
        """Predict with the full-data fit at ``s``, as cv.glmnet's ``predict``.

        ``s`` is ``"lambda.1se"`` (the default, as in cv.glmnet), ``"lambda.min"`` (also spelled
        ``"lambda_1se"`` / ``"lambda_min"``), a value of the penalty, or a sequence of these (one
        block of columns per value, :mod:`cohstats.svalues`). A fit that is not a path ignores ``s``.
        """
        if self.lambda_ is None:
            return self.fit.predict(newdata, type=type, **kw)
        if is_sequence(s):
            return per_s(self.predict, s, newdata=newdata, type=type, **kw)
        return self.fit.predict(newdata, type=type, s=self._s(s, "predict"), **kw)

    def coef_at(self, s="lambda.1se"):
        """Coefficients with the intercept first at ``s`` (cv.glmnet's ``coef``, whose default is
        also ``"lambda.1se"``); ``s`` as in :meth:`predict`. Raises for fits without
        input-space coefficients."""
        if self.lambda_ is None:
            if isinstance(s, str):
                s_key("CVResult.coef_at()", s)
                return self.fit.coef_at()
            return self.fit.coef_at(s)
        if is_sequence(s):
            return per_s(self.coef_at, s)
        return self.fit.coef_at(self._s(s, "coef_at"))

    # ------------------------------------------------------------------ reporting
    def to_frame(self) -> pd.DataFrame:
        """The CV curve: one row per sequence value (lambda, measure, se, lower, upper, nzero)."""
        d = {}
        if self.lambda_ is not None:
            d["lambda"] = self.lambda_
        d.update({"measure": self.cvm, "se": self.cvsd, "lower": self.cvlo, "upper": self.cvup})
        if self.nzero is not None:
            d["nzero"] = self.nzero
        return pd.DataFrame(d)

    def _table(self) -> pd.DataFrame:
        rows = {}
        if self.lambda_ is None:
            rows["fit"] = {"measure": self.cvm[0], "se": self.cvsd[0]}
        else:
            for lab, i in (("min", self.index_min), ("1se", self.index_1se)):
                if i is None:
                    continue
                r = {"lambda": self.lambda_[i], "index": i + 1, "measure": self.cvm[i], "se": self.cvsd[i]}
                if self.nzero is not None:
                    r["nonzero"] = int(self.nzero[i])
                rows[lab] = r
        return pd.DataFrame.from_dict(rows, orient="index")

    def summary(self):
        """An R-style summary (like ``print(cv.glmnet)``)."""
        Summary = _summary_cls()
        info = {
            "fit": self.fit_name,
            "measure": self.measure_name,
            "folds": self.nfolds,
            "n": int(self.foldid.shape[0]),
        }
        if self.call:
            info["arguments"] = _fmt_args(self.call)
        notes = []
        if self.lambda_ is not None:
            notes.append(
                "folds reuse the full-data lambda sequence; lambda_1se is the largest lambda "
                "whose mean is within one standard error of the best"
            )
        return Summary(f"{self.nfolds}-fold cross-validation", info, {"Selected": self._table()}, notes)

    def __repr__(self) -> str:
        if self.lambda_ is None:
            return (
                f"<CVResult {self.fit_name}: {self.measure_name} = {self.cvm[0]:.4g} "
                f"(se {self.cvsd[0]:.3g}), {self.nfolds} folds>"
            )
        return (
            f"<CVResult {self.fit_name}: {self.measure_name}, {self.nfolds} folds, "
            f"{self.lambda_.shape[0]} lambdas, lambda_min={self.lambda_min:.4g}, "
            f"lambda_1se={self.lambda_1se:.4g}>"
        )

    def plot(self, ax=None, sign_lambda: int = 1):
        """The cv.glmnet picture: mean +- SE against log(lambda), number of nonzero
        coefficients on the top axis (when known), dotted lines at ``lambda_min`` and
        ``lambda_1se``. Returns the matplotlib Axes."""
        import matplotlib.pyplot as plt

        if self.lambda_ is None:
            raise ValueError("plot() needs a path fit (a lambda sequence); this CV has one score")
        if ax is None:
            _, ax = plt.subplots(figsize=(6, 4))
        x = np.log(self.lambda_) * sign_lambda
        ax.errorbar(
            x, self.cvm, yerr=self.cvsd, fmt="o", color="tab:red", ms=3.5, ecolor="darkgrey", elinewidth=1, capsize=2
        )
        ax.axvline(np.log(self.lambda_min) * sign_lambda, ls=":", color="k")
        ax.axvline(np.log(self.lambda_1se) * sign_lambda, ls=":", color="k")
        ax.set_xlabel("log(lambda)" if sign_lambda == 1 else "-log(lambda)")
        ax.set_ylabel(self.measure_name)
        if self.nzero is not None:
            top = ax.twiny()
            top.set_xlim(ax.get_xlim())
            k = max(1, len(x) // 8)
            top.set_xticks(x[::k])
            top.set_xticklabels([str(int(v)) for v in self.nzero[::k]])
            top.set_xlabel("nonzero coefficients")
        return ax


def _outputs_at(fit, X, off, kind, lam, prob_args):
    """:func:`~cohstats.tuning.measures._outputs` of rows ``X`` whose offsets are ``off`` (None:
    a fit without offsets): the decision values ``offset + b + x'beta`` along the sequence, and
    the probabilities the fit gives them at each value."""
    if off is None:
        return _outputs(fit, X, kind, lam, prob_args)
    F = np.asarray(_outputs(fit, X, "decision", lam, None), dtype=np.float64) + off[None]
    if kind == "decision":
        return F
    prob_args = prob_args or {}
    proba = getattr(fit, "_offset_proba", None)  # probabilities that depend on s or take options
    if proba is None:  # C-learning: the loss's inverse link, the same at every s
        if prob_args:
            raise TypeError(f"{type(fit).__name__} probabilities take no options; got {sorted(prob_args)}")
        return np.asarray(fit._link_to_prob(F))
    s = [None] if lam is None else lam
    return np.stack([np.asarray(proba(F[i], s[i], **prob_args)) for i in range(F.shape[0])])


def _rows_offset(design, rows):
    """The offsets of some rows of the design (None without offsets)."""
    return None if getattr(design, "offset", None) is None else design.offset[rows]


def _fold_task(fit_fn, design, train, test, args, kind, lam, prob_args):
    fit = fit_fn(design.take(train), **args)
    X = design.X[test]
    return _outputs_at(fit, X, _rows_offset(design, test), kind, lam, prob_args)


def _full_task(fit_fn, design, args):
    return fit_fn(design, **args)


def _shared_groups(fit_fn, design, arg_list, n_jobs, share_kernel):
    """``{kernel key: (kernel, [argument-set indices])}`` for the fits that share one kernel matrix."""
    groups = {}
    if not share_kernel or not sequential(n_jobs):
        return groups
    for j, args in enumerate(arg_list):
        ker = fold_kernel(fit_fn, design, args)
        if ker is not None:
            groups.setdefault(kernel_key(ker), (ker, []))[1].append(j)
    return groups


def _lend_full(fit_fn, design, sk, idx, arg_list, full_fits):
    """The full-data fits of the argument sets ``idx`` not fitted yet, each on the lent matrix of ``sk``."""
    for j in idx:
        if full_fits[j] is None:
            with sk.lend() as lent:
                full_fits[j] = fit_fn(design, **arg_list[j], _gram=lent)


def _shared_full_fits(fit_fn, design, arg_list, n_jobs, share_kernel):
    """Full-data fits (a list, None where not shared) of the argument sets whose kernel depends on
    the rows only: one kernel matrix per distinct kernel, lent to each fit in turn (``tune``'s
    hold-out method, e.g. the tuned LUM's grid over ``c`` with a validation sample)."""
    fits = [None] * len(arg_list)
    for ker, idx in _shared_groups(fit_fn, design, arg_list, n_jobs, share_kernel).values():
        _lend_full(fit_fn, design, SharedKernel(ker, design.X), idx, arg_list, fits)
    return fits


def _shared_run(fit_fn, design, ker, idx, arg_list, full_fits, foldid, meas, prob_args, verbose, folds_of):
    """Full-data and fold fits of the argument sets ``idx`` on one lent kernel matrix, one at a time."""
    sk = SharedKernel(ker, design.X)
    K = int(foldid.max()) + 1
    _lend_full(fit_fn, design, sk, idx, arg_list, full_fits)
    outs = {}
    bar = progress_bar(len(idx) * K, "cv folds (shared kernel)", verbose)
    for j in idx:
        lam, fargs = folds_of(j)
        for k in range(K):
            tr, te = np.flatnonzero(foldid != k), np.flatnonzero(foldid == k)
            with sk.lend_rows(tr, te) as lent:
                fit = fit_fn(design.take(tr), **fargs, _gram=lent)
            X = design.X[te]
            fit._cross_kernel = (X, sk.cross(te, tr))
            outs[(j, k)] = _outputs_at(fit, X, _rows_offset(design, te), meas.output, lam, prob_args)
            del fit
            if bar is not None:
                bar.update(1)
    if bar is not None:
        bar.close()
    return outs


def _cv_many(
    fit_fn, design, arg_list, foldid, meas, n_jobs, verbose, prob_args, fit_name, full_fits=None, share_kernel=True
):
    """CV of several argument sets on the same folds; all fold fits in one parallel batch.

    Argument sets whose kernel depends on the rows only share one kernel matrix (see
    :mod:`cohstats.tuning.shared`) when the fits run one at a time in this process.
    """
    groups = _shared_groups(fit_fn, design, arg_list, n_jobs, share_kernel)
    in_group = {j for _, idx in groups.values() for j in idx}
    if full_fits is None:
        full_fits = [None] * len(arg_list)
        plain = [j for j in range(len(arg_list)) if j not in in_group]
        done = _parallel(_full_task, [(fit_fn, design, arg_list[j]) for j in plain], n_jobs, verbose, "full fits")
        for j, f in zip(plain, done):
            full_fits[j] = f
    else:
        full_fits = list(full_fits)
    K = int(foldid.max()) + 1
    lams = [None] * len(arg_list)

    def folds_of(j):
        full = full_fits[j]
        lam = np.asarray(full.lambda_, float) if _has_path(full) else None
        lams[j] = lam
        fargs = _refit_args(full, arg_list[j])
        if lam is not None:
            fargs = _along(getattr(full, "path_arg", None), fargs, lam)
        return lam, fargs

    outs = {}
    for ker, idx in groups.values():
        outs.update(
            _shared_run(fit_fn, design, ker, idx, arg_list, full_fits, foldid, meas, prob_args, verbose, folds_of)
        )
    tasks, keys = [], []
    for j in range(len(arg_list)):
        if j in in_group:
            continue
        lam, fargs = folds_of(j)
        for k in range(K):
            tr, te = np.flatnonzero(foldid != k), np.flatnonzero(foldid == k)
            tasks.append((fit_fn, design, tr, te, fargs, meas.output, lam, prob_args))
            keys.append((j, k))
    outs.update(zip(keys, _parallel(_fold_task, tasks, n_jobs, verbose, "cv folds")))
    results = []
    for j, (args, full) in enumerate(zip(arg_list, full_fits)):
        L = 1 if lams[j] is None else lams[j].shape[0]
        F = np.full((K, L), np.nan)
        W = np.zeros(K)
        for k in range(K):
            te = foldid == k
            y, w = design.y[te], design.weights[te]
            F[k] = _evaluate(meas, y, w, np.asarray(outs[(j, k)]), design.binary)
            W[k] = w.sum()
        results.append(
            CVResult(
                measure=meas,
                lambda_=lams[j],
                fold_values=F,
                fold_weights=W,
                foldid=foldid,
                fit=full,
                call=args,
                fit_name=fit_name,
            )
        )
    return results


def cv(
    fit_fn: Callable,
    formula,
    data=None,
    nfolds: int = 10,
    measure: str | None = None,
    foldid=None,
    stratified: bool = True,
    n_jobs: int | None = None,
    random_state=None,
    verbose: bool = True,
    prob_args: dict | None = None,
    scheduler=None,
    fit_kwargs: dict | None = None,
    share_kernel: bool = True,
    **fit_args,
) -> CVResult:
    """K-fold cross-validation of any fit function (cv.glmnet for every cohstats model).

    The design is built once. For path fits (a fitted ``lambda_`` sequence) the full data are
    fitted first and every fold refits the same sequence (``lambda_=fit.lambda_``), as
    cv.glmnet does; the held-out folds are scored along the whole path. Folds are stratified
    by class and seeded.

    Parameters
    ----------
    fit_fn : callable
        A cohstats fit function (``clearn``, ``svm``, ``lum``, ...) or any function
        ``fit_fn(design, **fit_args)`` returning a :class:`cohstats.results.Fit`.
    formula : str, Design or array
        Model formula with ``data``, a prebuilt Design, or a predictor matrix with the labels
        in ``data``.
    data : DataFrame or labels
    nfolds : int, default 10
        Number of folds; reduced to ``max(2, smallest class size)`` when a class is smaller.
    measure : str, optional
        Default: the fit function's declared measure -- the deviance (a proper scoring rule,
        as cv.glmnet for binomial and multinomial fits) for models that estimate class
        probabilities, misclassification error for the others (``lamsvm``, whose
        probabilities are a post-hoc calibration, and ``cart``, whose leaf frequencies can be
        exactly 0 or 1). ``"class"`` (misclassification error, from the decision values), ``"cre"`` / ``"ekl"``
        (cross-entropy), ``"deviance"`` (2 x cross-entropy), ``"brier"`` / ``"mse"``, ``"mae"``
        (``|y - p|``) or ``"auc"`` (binary; maximised; computed per fold). Probability measures
        use ``predict(type="prob", **prob_args)``; they are not clipped, so an
        estimate of 0 or 1 on the wrong side gives ``inf``.
    foldid : array-like, optional
        User fold assignment (any labels; one per observation of the design).
    stratified : bool, default True
    n_jobs : int, optional
        Parallel workers for the fold fits (joblib; honours ``joblib.parallel_backend``).
    random_state : None, int or Generator
        Seed of the fold assignment.
    verbose : bool
        Progress bar on a terminal.
    prob_args : dict, optional
        Extra arguments of the probability method (``predict(type="prob", **prob_args)``).
    fit_kwargs : dict, optional
        Fit arguments whose names the tuner itself uses (``random_state``, ``nfolds``,
        ``n_jobs``, ``verbose``), e.g. ``fit_kwargs={"random_state": 0}`` for a fit function
        with its own seed; everything else can be given directly as ``**fit_args``.
    scheduler : dask.distributed ``Client`` or scheduler address, optional
        Run the independent fits on that Dask cluster (joblib's dask backend). Without it,
        ``with joblib.parallel_config(backend="dask"):`` around the call does the same.
    share_kernel : bool, default True
        Compute the kernel matrix of all the rows once and give every fit its block, when the
        folds allow it (see Notes); False makes every fit compute its own kernel. The result is
        the same either way (to rounding).
    **fit_args
        Passed to every fit (``weights``, ``subset``, ``na_action`` and ``offset`` go to the
        design). A model with offsets (``offset(col)`` in the formula or ``offset=``; binary
        ``clearn``, ``lum``, ``svm``, ``gboost_c``) is fitted to every fold's training rows with
        their offsets, and the held-out rows are scored on ``offset + b + x'beta``.

    Returns
    -------
    CVResult

    Notes
    -----
    Shared kernel. A fold fit of a kernel expansion needs the kernel matrix of its training
    rows, and its predictions need the held-out rows' kernel against them. When the fit's kernel
    depends on the rows only, both are blocks of the one n x n matrix of all the rows, which is
    then computed once and lent to the full-data fit and to each fold fit in turn (held in one
    n x n float64 array plus the held-out rows of one fold; :mod:`cohstats.tuning.shared`).
    This happens when all of these hold:

    * the fit function supports it: kernel :func:`~cohstats.clearn` and the two-class kernel
      :func:`~cohstats.lum` (``kernel`` given, no ``kernel_approx``; for ``lum`` a number ``c``);
      other fit functions compute their kernel in every fit;
    * ``standardize=False``: with the default ``standardize=True`` each fit scales the inputs
      by the means and standard deviations of its own rows, so the folds' kernels differ;
    * a width that does not look at the data: a number (``gamma=`` or ``sigma=``),
      ``gamma="auto"``, a linear or polynomial kernel without a named width, or a callable
      kernel. The default ``gamma="scale"`` and ``"median"`` / ``"mean"`` are computed from each
      fit's rows;
    * the fits run one at a time in this process (``n_jobs`` of 1 and no Dask scheduler);
    * ``share_kernel=True``.

    To share the kernel of standardised inputs, standardise the data once before the call and
    pass ``standardize=False`` with a numeric width: the held-out rows then take part in the
    scaling, which the default per-fit scaling avoids.

    Examples
    --------
    >>> from cohstats.tuning import cv
    >>> from cohstats.models.svm import svm
    >>> from cohstats.datasets import make_wsl2
    >>> df = make_wsl2(60, random_state=0)
    >>> res = cv(svm, "y ~ x1 + x2", df, kernel="linear", lambda_=0.1, nfolds=5, random_state=1,
    ...          verbose=False)
    >>> res.nfolds, round(res.score, 3)          # misclassification error, one score
    (5, 0.083)

    For a path fit (``clearn``, ``lum``) the result holds the whole curve::

        res = cv(clearn, "y ~ x1 + x2", df, measure="cre", random_state=1)
        res.lambda_min, res.lambda_1se, res.plot(), res.summary()
    """
    _check_fit_fn(fit_fn)
    _check_n_jobs(n_jobs)
    ctx = _capture(1) if isinstance(formula, str) else None
    fit_args = _merge_fit_kwargs(fit_kwargs, fit_args)
    design, fit_args = _as_design(formula, data, dict(fit_args), context=ctx)
    meas = _get_measure(_default_measure(fit_fn) if measure is None else measure, design)
    rng = _rng(random_state)
    _check_class_sizes(design)
    foldid = _resolve_foldid(design, nfolds, foldid, stratified, rng)
    _check_fold_classes(design, foldid)
    with scheduler_backend(scheduler):
        return _cv_many(
            fit_fn,
            design,
            [fit_args],
            foldid,
            meas,
            n_jobs,
            verbose,
            prob_args,
            _fit_name(fit_fn),
            share_kernel=_check_share(share_kernel),
        )[0]


def _check_class_sizes(design) -> None:
    """Every class needs two members: the fold holding a class's only member trains without it."""
    counts = np.bincount(design.y_int, minlength=design.n_classes)
    small = [(c, int(k)) for c, k in zip(design.classes, counts) if k < 2]
    if small:
        shown = ", ".join(f"{c!r} ({k} member{'s' if k != 1 else ''})" for c, k in small)
        raise ValueError(
            f"cv: class {shown} of the response is too small for cross-validation: the fold that "
            "holds a class's only member would train without that class, so every class needs at "
            "least 2 members (drop or merge the class's rows first)"
        )


def _check_fold_classes(design, foldid) -> None:
    """Every fold's training rows (the other folds) must hold every class."""
    y = design.y_int
    for k in range(int(foldid.max()) + 1):
        missing = [design.classes[c] for c in np.setdiff1d(np.arange(design.n_classes), y[foldid != k])]
        if missing:
            raise ValueError(
                f"cv: the training rows of fold {k + 1} (every other fold) hold no member of class(es) "
                f"{', '.join(map(repr, missing))}; give folds (foldid=) that leave every class in "
                "every fold's training rows, or use stratified folds"
            )


def _check_share(share_kernel) -> bool:
    if not isinstance(share_kernel, (bool, np.bool_)):
        raise TypeError(f"share_kernel must be True or False; got {share_kernel!r}")
    return bool(share_kernel)


# ============================================================================ GKL estimator
