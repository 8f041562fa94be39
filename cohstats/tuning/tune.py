from __future__ import annotations

import itertools
from typing import Callable

import numpy as np
import pandas as pd

from ..validation import spec_of
from ..persist import Persistable
from ._common import (
    _merge_fit_kwargs,
    _as_design,
    _capture,
    _check_fit_fn,
    _check_n_jobs,
    _default_measure,
    _fit_name,
    _fmt_args,
    _has_path,
    _is_design,
    _rng,
    _summary_cls,
)
from .parallel import _parallel, scheduler_backend
from .folds import _resolve_foldid
from .measures import _Measure, _evaluate, _get_measure
from .cv import _check_share, _cv_many, _full_task, _outputs_at, _shared_full_fits
from .gkl import _gkl_many, _perturbation


class TuneResult(Persistable):
    """Result of :func:`tune`: a table of scores over the grid, the best arguments and model.

    Attributes
    ----------
    table : DataFrame, one row per grid point (and per lambda for path fits) with the
        score (``score``; ``se`` for CV; the GKL parts for ``method="gkl"``).
    best_params : dict of the chosen arguments (including ``lambda_`` when tuned).
    best_score : float
    best_fit : the model refitted to all the training data at ``best_params`` (for path
        fits: the full path fit ``select``-ed at the best lambda).
    results : per grid point, the underlying :class:`CVResult` / :class:`GKLResult` (or the
        hold-out scores).
    """

    def __init__(
        self,
        *,
        table,
        best_index,
        param_names,
        method,
        measure_name,
        fits,
        results,
        greater_is_better,
        fit_name,
        path_col=None,
        path_key=None,
    ):
        self.table = table
        self.best_index = int(best_index)
        self.param_names = list(param_names)
        self.method = method
        self.measure_name = measure_name
        self._fits = fits
        self.results = results
        self.greater_is_better = greater_is_better
        self.fit_name = fit_name
        self.path_col = path_col  # table column of the fitted sequence ("lambda", "step", ...)
        self.path_key = path_key  # its name in best_params ("lambda_", "C", "step", ...)
        row = table.iloc[self.best_index]
        self.best_params = {}
        for k in self.param_names:
            v = row[k]
            self.best_params[k] = v.item() if isinstance(v, np.generic) else v
        self._combo = int(row["_combo"])
        if path_col is not None and np.isfinite(float(row[path_col])):
            self.best_params[path_key] = float(row[path_col])
        self.best_score = float(row["score"])

    @property
    def fits(self) -> list:
        """The full-data fit of every argument combination, in the order of the table."""
        return list(self._fits)

    @property
    def best_fit(self):
        fit = self._fits[self._combo]
        if self.path_key in self.best_params and _has_path(fit):
            return fit.select(self.best_params[self.path_key])
        return fit

    def to_frame(self) -> pd.DataFrame:
        return self.table.drop(columns=["_combo", "_pos"], errors="ignore")

    def summary(self):
        Summary = _summary_cls()
        info = {
            "fit": self.fit_name,
            "method": self.method,
            "measure": self.measure_name,
            "grid points": int(self.table.shape[0]),
            "best score": self.best_score,
        }
        info["best"] = _fmt_args(self.best_params)
        asc = not self.greater_is_better
        top = self.to_frame().sort_values("score", ascending=asc, kind="mergesort").head(10)
        notes = [
            "ties go to the grid value listed first and, within it, to the larger lambda (the more regularised setting)"
        ]
        return Summary(f"Grid search by {self.method}", info, {"Best settings": top}, notes)

    def __repr__(self):
        return (
            f"<TuneResult {self.fit_name} by {self.method}: {self.table.shape[0]} grid points, "
            f"best {_fmt_args(self.best_params)} ({self.measure_name} {self.best_score:.4g})>"
        )

    def plot(self, ax=None):
        """Score against log(lambda) (one line per other-argument combination) or against
        the grid index. Returns the Axes."""
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots(figsize=(6, 4))
        tab = self.table
        lamcol = self.path_col if self.path_col is not None else ("lambda_" if "lambda_" in self.param_names else None)
        if lamcol is not None:
            others = [k for k in self.param_names if k != lamcol]
            groups = tab.groupby(others, sort=False) if others else [((), tab)]
            xv = tab[lamcol].to_numpy(dtype=float)
            logx = lamcol in ("lambda", "lambda_", "C", "gamma", "ccp_alpha") and np.all(xv > 0)
            tr = np.log if logx else (lambda v: v)
            for _, g in groups:
                lab = _fmt_args({k: g[k].iloc[0] for k in others}) or self.fit_name
                x = tr(g[lamcol].to_numpy(dtype=float))
                if "se" in g and np.isfinite(g["se"]).any():
                    ax.errorbar(x, g["score"], yerr=g["se"], fmt="o-", ms=3, capsize=2, label=lab)
                else:
                    ax.plot(x, g["score"], "o-", ms=3, label=lab)
            best = self.best_params.get(self.path_key if self.path_col else "lambda_")
            if best is not None:
                ax.axvline(tr(best), ls=":", color="k")
            name = lamcol.rstrip("_")
            ax.set_xlabel(f"log({name})" if logx else name)
            if others:
                ax.legend(fontsize="small")
        else:
            x = np.arange(tab.shape[0])
            ax.plot(x, tab["score"], "o-")
            ax.set_xticks(x)
            ax.set_xticklabels(
                [_fmt_args({k: r[k] for k in self.param_names}) for _, r in tab.iterrows()],
                rotation=60,
                ha="right",
                fontsize="small",
            )
            ax.axvline(self.best_index, ls=":", color="k")
        ax.set_ylabel(self.measure_name)
        return ax


def _grid_combos(grid: dict, fit_args: dict, skip=None):
    if not isinstance(grid, dict) or not grid:
        raise TypeError("grid must be a non-empty dict {argument name: sequence of values}")
    clash = sorted(set(grid) & set(fit_args))
    if clash:
        raise ValueError(f"argument(s) {clash} given both in grid and as fixed fit arguments")
    names, values = [], []
    for k, v in grid.items():
        if not isinstance(k, str):
            raise TypeError(f"grid keys must be argument names; got {k!r}")
        if k == skip:
            continue
        if isinstance(v, (str, bytes)) or not hasattr(v, "__iter__"):
            raise TypeError(f"grid[{k!r}] must be a sequence of values; got {v!r}")
        v = list(v)
        if not v:
            raise ValueError(f"grid[{k!r}] is empty")
        if k == "lambda_":  # an ordinary grid of penalties: the more regularised first
            v = sorted(v, reverse=True)
        names.append(k)
        values.append(v)
    combos = [dict(zip(names, c)) for c in itertools.product(*values)] if names else [{}]
    return names, combos


def _holdout_task(fit_fn, design, args, Xv, yv, wv, meas, prob_args, fitted, ov=None):
    fit = fit_fn(design, **args) if fitted is None else fitted
    lam = np.asarray(fit.lambda_, float) if _has_path(fit) else None
    out = _outputs_at(fit, Xv, ov, meas.output, lam, prob_args)
    return fit, lam, _evaluate(meas, yv, wv, out, design.binary)


def _validation_offset(design, validation):
    """The offsets of the validation rows (None for a model without offsets): a Design's own,
    else read from the DataFrame's offset columns (``offset(col)``, ``offset="col"``); a model
    given ``offset=`` as an array needs a validation Design that carries its offsets."""
    if getattr(design, "offset", None) is None:
        return None
    if _is_design(validation):
        if getattr(validation, "offset", None) is None:
            raise ValueError("the model has offsets, so the validation Design needs its rows' offsets (offset=)")
        return np.asarray(validation.offset, dtype=np.float64)
    return design.new_offset(validation[0] if isinstance(validation, tuple) else validation)


def _validation_arrays(design, validation):
    if validation is None:
        raise TypeError("method='holdout' needs validation= (a DataFrame, a Design, or a tuple (X, y))")
    if _is_design(validation):
        return np.asarray(validation.X), np.asarray(validation.y)
    if isinstance(validation, tuple) and len(validation) == 2:
        Xv = (
            design.new_X(validation[0])
            if isinstance(validation[0], pd.DataFrame) and design.formula
            else np.ascontiguousarray(np.asarray(validation[0], dtype=np.float64))
        )
        if Xv.ndim != 2 or Xv.shape[1] != design.p:
            raise ValueError(f"validation X must have {design.p} columns; got shape {Xv.shape}")
        return Xv, design.code_y(validation[1])
    if isinstance(validation, pd.DataFrame):
        if design.yname is None or design.yname not in validation.columns:
            raise ValueError(f"validation DataFrame must contain the response column {design.yname!r}")
        return design.new_X(validation), design.code_y(validation[design.yname])
    raise TypeError(f"validation must be a DataFrame, a Design or a tuple (X, y); got {type(validation).__name__}")


def tune(
    fit_fn: Callable,
    formula,
    data=None,
    grid: dict | None = None,
    method: str = "cv",
    measure: str | None = None,
    n_jobs: int | None = None,
    random_state=None,
    verbose: bool = True,
    nfolds: int = 10,
    foldid=None,
    validation=None,
    tau: float = 0.5,
    D: int | None = None,
    prob_args: dict | None = None,
    centering: str = "within",
    initial="knn",
    rule: str = "min",
    scheduler=None,
    fit_kwargs: dict | None = None,
    random_input: str = "data",
    share_kernel: bool = True,
    **fit_args,
) -> TuneResult:
    """Grid search over any fit arguments by cross-validation, a hold-out set, or the GKL estimate.

    Every combination of the non-``lambda_`` grid entries is evaluated. A ``lambda_`` entry is
    handed to the fit as a sequence when the fit function supports the path protocol (one
    path fit per combination, scored along the path); otherwise it is an ordinary grid
    argument. All combinations share the same folds (``method="cv"``) or the same
    perturbations (``method="gkl"``, common random numbers).

    Parameters
    ----------
    fit_fn : callable
    formula, data : as in :func:`cv`.
    grid : dict
        ``{argument: sequence}``, e.g. ``{"c": [0, 1e4], "lambda_": 10 ** np.linspace(-4, 2, 25)}``.
    method : ``"cv"`` (K-fold), ``"holdout"`` (fit on the data, score on ``validation``) or
        ``"gkl"`` (minimise the estimated GKL_c of [WSL]; binary probability estimators).
    measure : str, optional
        As in :func:`cv`; default ``"class"`` for cv/holdout. Not used by ``"gkl"``.
    n_jobs, random_state, verbose : as in :func:`cv`.
    nfolds, foldid : for ``method="cv"``.
    validation : DataFrame (formula fits), Design, or tuple ``(X, y)`` for ``method="holdout"``.
        For a model with offsets its rows are scored with their own offsets: a DataFrame holding
        the offset columns, or a Design built with ``offset=``.
    rule : ``"min"`` (default) or ``"1se"`` (``method="cv"`` only): the first setting in the tie
        order below whose CV mean is within one standard error of the best (cv.glmnet's
        ``lambda.1se`` generalised to a grid).
    tau, D, prob_args, centering, initial, random_input : for ``method="gkl"`` (see :func:`gkl`); ``prob_args`` also
        for probability measures.
    fit_kwargs, scheduler : as in :func:`cv` (fit arguments named like the tuner's own; a Dask
        client or scheduler address).
    share_kernel : bool, default True
        ``method="cv"``: compute the kernel matrix of all the rows once and give every fit its
        block, when the folds allow it (see :func:`cv`, Notes); the grid points with the same
        kernel (e.g. a grid over ``alpha`` or ``rho`` at a numeric width, or over ``c`` of the
        kernel LUM) share one matrix. ``method="holdout"``: the fits of the grid points with
        the same kernel share one matrix of the training rows, under the same conditions.
    **fit_args : fixed arguments of every fit (``weights``, ``subset``, ``na_action`` and
        ``offset`` go to the design; offsets are carried into every fit and held-out score as
        in :func:`cv`).

    Ties go to the grid value listed first (list the more regularised values first, e.g.
    ``C`` ascending, ``c=[0, 1e4]`` for the tuned LUM of [LZW]) and, within one
    combination, to the larger ``lambda_``.

    Returns
    -------
    TuneResult

    Examples
    --------
    Tuned LUM of [LZW] (a = 1000, c in {0, 1e4}, lambda by validation error)::

        tune(lum, "y ~ .", train, grid={"c": [0, 1e4], "lambda_": 10 ** np.linspace(-4, 2, 25)},
             method="holdout", validation=valid, a=1000)

    [WSL] lambda by the GKL estimate::

        tune(svm, "y ~ x1 + x2", df, grid={"lambda_": wsl_grid()}, method="gkl",
             prob_args={"method": "bracket"})
    """
    _check_fit_fn(fit_fn)
    _check_n_jobs(n_jobs)
    if method not in ("cv", "holdout", "gkl"):
        raise ValueError(f"method must be 'cv', 'holdout' or 'gkl'; got {method!r}")
    if rule not in ("min", "1se"):
        raise ValueError(f"rule must be 'min' or '1se'; got {rule!r}")
    if rule == "1se" and method != "cv":
        raise ValueError(f"rule='1se' needs standard errors, i.e. method='cv'; got method={method!r}")
    if grid is None:
        raise TypeError("tune() needs grid={argument: values}")
    ctx = _capture(1) if isinstance(formula, str) else None
    fit_args = _merge_fit_kwargs(fit_kwargs, fit_args)
    design, fit_args = _as_design(formula, data, dict(fit_args), context=ctx)
    with scheduler_backend(scheduler):
        spec = spec_of(fit_fn)
        path_args = spec.path_args if spec is not None else ()
        # a path already requested through the fixed arguments (lamsvm(C=[...]) tuned over
        # margin) stays the fitted path; the grid's own path argument is then an ordinary one
        fixed_path = any(np.ndim(fit_args.get(k)) == 1 and np.size(fit_args.get(k)) > 1 for k in path_args)
        path_key = None if fixed_path else next((k for k in path_args if k in grid), None)
        names, combos = _grid_combos(grid, fit_args, skip=path_key)
        path_vals = None
        if path_key is not None:
            path_vals = np.asarray(grid[path_key], dtype=float).ravel()
            if path_vals.size == 0 or not np.all(np.isfinite(path_vals)) or path_vals.min() < 0:
                raise ValueError(f"grid[{path_key!r}] must hold finite non-negative values")
            # a path runs from its most regularised end: penalties decrease, costs increase
            path_vals = np.sort(path_vals)
            if path_key == "lambda_":
                path_vals = path_vals[::-1].copy()
        fit_name = _fit_name(fit_fn)
        arg_list = [{**fit_args, **c, **({path_key: path_vals} if path_key else {})} for c in combos]
        if method == "gkl":
            pert = _perturbation(design, tau, D, random_state, centering, random_input, initial)
            if measure not in (None, "gkl"):
                raise ValueError("method='gkl' minimises the GKL estimate; leave measure=None")
            meas = _Measure("gkl", "Estimated GKL_c", "prob", False)
        else:
            meas = _get_measure(measure or _default_measure(fit_fn), design)

        share_kernel = _check_share(share_kernel)
        full_fits = None
        if method == "gkl":  # method="cv": the full-data fits run with the fold fits
            full_fits = _parallel(_full_task, [(fit_fn, design, a) for a in arg_list], n_jobs, verbose, "full fits")

        rows, results, fits = [], [], []

        def add_rows(j, fit, seq, values: dict):
            """One table row per value of the combination's fitted sequence (one if none)."""
            L = len(next(iter(values.values())))
            for i in range(L):
                row = {k: combos[j][k] for k in names}
                if seq is not None:
                    row[fit.path_var] = float(seq[i])
                row.update({k: v[i] for k, v in values.items()})
                row.update(_combo=j, _pos=i)
                rows.append(row)

        if method == "cv":
            rng = _rng(random_state)
            fid = _resolve_foldid(design, nfolds, foldid, True, rng)
            cvs = _cv_many(
                fit_fn, design, arg_list, fid, meas, n_jobs, verbose, prob_args, fit_name, share_kernel=share_kernel
            )
            for j, r in enumerate(cvs):
                results.append(r)
                fits.append(r.fit)
                add_rows(j, r.fit, r.lambda_, {"score": r.cvm, "se": r.cvsd})
        elif method == "holdout":
            Xv, yv = _validation_arrays(design, validation)
            ov = _validation_offset(design, validation)
            wv = np.ones(Xv.shape[0])
            shared = _shared_full_fits(fit_fn, design, arg_list, n_jobs, share_kernel)
            outs = _parallel(
                _holdout_task,
                [(fit_fn, design, a, Xv, yv, wv, meas, prob_args, f, ov) for a, f in zip(arg_list, shared)],
                n_jobs,
                verbose,
                "holdout fits",
            )
            for j, (fit, lam, vals) in enumerate(outs):
                fits.append(fit)
                results.append(
                    pd.DataFrame({fit.path_var: lam, "score": vals})
                    if lam is not None
                    else pd.DataFrame({"score": vals})
                )
                add_rows(j, fit, lam, {"score": vals})
        else:
            gks = _gkl_many(fit_fn, design, arg_list, full_fits, pert, n_jobs, verbose, prob_args)
            for j, g in enumerate(gks):
                results.append(g)
                fits.append(g.fit)
                add_rows(
                    j,
                    g.fit,
                    g.lambda_,
                    {
                        "score": np.atleast_1d(g.estimate),
                        "egkl": np.atleast_1d(g.egkl),
                        "cov_term": np.atleast_1d(g.cov_term),
                        "d_hat": np.atleast_1d(g.d_hat),
                    },
                )

        table = pd.DataFrame(rows)
        seq_fits = [
            f
            for f, r in zip(fits, results)
            if getattr(r, "lambda_", None) is not None
            or (isinstance(r, pd.DataFrame) and getattr(f, "path_var", None) in r.columns)
        ]
        path_col = seq_fits[0].path_var if seq_fits else None
        path_key = None
        if path_col is not None:
            path_key = getattr(seq_fits[0], "path_arg", None) or path_col
        # best: minimal score; ties -> the grid value listed first, then the earlier value of the
        # fitted sequence (its more regularised end: the larger lambda, the fewer boosting steps)
        sc = table["score"].to_numpy(dtype=float)
        sc = -sc if meas.greater_is_better else sc
        ok = ~np.isnan(sc)
        if not ok.any():
            raise ValueError("every grid point scored NaN; nothing to choose")
        combo_of = table["_combo"].to_numpy()
        pos_of = table["_pos"].to_numpy()

        def order(i):
            return (int(combo_of[i]), int(pos_of[i]))

        best = sc[ok].min()
        tol = 1e-12 * max(1.0, abs(best)) if np.isfinite(best) else 0.0
        cand = np.flatnonzero(ok & (sc <= best + tol))
        best_index = int(min(cand, key=order))
        if rule == "1se":
            se = float(table["se"].iloc[best_index])
            thr = sc[best_index] + (se if np.isfinite(se) else 0.0)
            cand = np.flatnonzero(ok & (sc <= thr + tol))
            best_index = int(min(cand, key=order))
        return TuneResult(
            table=table,
            best_index=best_index,
            param_names=names,
            method=method,
            measure_name=meas.name,
            fits=fits,
            results=results,
            greater_is_better=meas.greater_is_better,
            fit_name=fit_name,
            path_col=path_col,
            path_key=path_key,
        )
