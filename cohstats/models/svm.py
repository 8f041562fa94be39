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
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd

from cohstats.coupling import pairwise_coupling
from cohstats.exceptions import ConvergenceWarning
from cohstats.formula import Design, build_design, capture_context
from cohstats.kernels import KERNEL_CALLABLE, KERNEL_LINEAR, kernel_cross, make_kernel, resolve_gamma
from cohstats.probability import (
    bracket_grid,
    bracket_prob,
    coherence_prob,
    coherence_rho,
    platt_fit,
    platt_glm,
    sollich_prob,
)
from cohstats.results import Fit, PathFrame, Summary
from cohstats.solvers.svm.smo import smo_solve
from cohstats.scaling import column_scaling
from cohstats.solvers.svm.svmpath import pi_grid_smo, pi_path
from cohstats.validation import AnyOf, Bool, Callable, FitSpec, Integer, NoneOr, Options, Real, Reals, fit_function

__all__ = ["svm", "SVMFit", "MulticlassSVMFit", "psi_learn", "PsiFit"]

_METHODS = ("platt", "sollich", "coherence", "bracket", "platt_tuned")
AUTO_EXACT_MAX_N = 300  # path_method="auto": the exact pi path up to this n, the warm grid above


def _check_pos(name, v):
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a number; got {type(v).__name__}")
    if not (math.isfinite(v) and v > 0):
        raise ValueError(f"{name} must be a positive finite number; got {v!r}")
    return float(v)


def class_weights(y: np.ndarray, pi) -> np.ndarray:
    """``S_pi(y_i)``: ``1 - pi`` for ``y = +1``, ``pi`` for ``y = -1`` (ones when ``pi`` is None)."""
    if pi is None:
        return np.ones_like(y, dtype=np.float64)
    return np.where(y > 0, 1.0 - pi, pi)


def _scaling(X: np.ndarray, w: np.ndarray, standardize: bool):
    """Centre and scale (sd with divisor ``sum w``, weighted as the fit) of every column;
    constant columns keep scale 1 (:func:`cohstats.scaling.column_scaling`)."""
    return column_scaling(X, w, standardize)


def _run_settings(prob_method, cache_size, path_method, n_jobs, tol, shrinking, max_iter) -> dict:
    """The solver settings a fitted SVM keeps (binary and one-vs-one) for refits and
    probabilities, as keyword arguments of the result constructors."""
    # (n_jobs is left out of fit_args: refits run inside tune(), whose own n_jobs parallelises
    # the fits)
    return dict(
        prob_method=prob_method,
        cache_size=cache_size,
        path_method=path_method,
        n_jobs=n_jobs,
        fit_fn=svm,
        fit_args=dict(tol=tol, cache_size=cache_size, shrinking=shrinking, max_iter=max_iter, path_method=path_method),
    )


def _resolve_width(kernel, Z: np.ndarray, labels, sigma, gamma):
    """The kernel width ``gamma`` (a float) or None for kernels without one; see :func:`svm`."""
    name = "callable" if callable(kernel) else ("linear" if kernel is None else str(kernel).lower())
    given = sigma is not None or not (isinstance(gamma, str) and gamma == "scale")
    if name in ("linear", "callable"):
        if given:
            what = "sigma" if sigma is not None else "gamma"
            raise ValueError(
                f"{what} is a kernel width, but kernel={kernel!r} has none: drop {what}=, or use kernel='rbf' or 'poly'"
            )
        return None
    if sigma is not None and not (isinstance(gamma, str) and gamma == "scale"):
        raise ValueError("give gamma or sigma, not both (gamma = 1/sigma^2)")
    if sigma is not None:
        if isinstance(sigma, str):
            if sigma != "median":
                raise ValueError(f"sigma must be a positive number or 'median'; got {sigma!r}")
            gamma = "median"
        else:
            return 1.0 / _check_pos("sigma", sigma) ** 2
    if isinstance(gamma, str):
        return resolve_gamma(gamma, Z, labels)
    return _check_pos("gamma", gamma)


def _check_s(fit, s):
    """``s`` reaching the solver-level methods: None or the fitted value (``predict`` has
    validated it already; the tuners pass the fitted value or nothing)."""
    if s is not None:
        fit._check_s(s, "_decision")


class SVMFit(Fit):
    """A fitted binary (weighted) SVM; see :func:`svm`.

    Attributes
    ----------
    coef : Series by term (input-space slopes on the original scale) for ``kernel=None`` or
        ``"linear"``; None for other kernels.
    intercept : the intercept ``b`` (on the original scale for linear kernels).
    dual_coef : DataFrame indexed by the training-row labels of the support points, column
        ``"dual_coef"``: ``beta_i = a_i y_i``, so ``f(x) = sum_i beta_i K(z_i, z) + b`` with
        ``z`` the (standardised) inputs and ``f > 0`` predicting ``classes[1]``.
    support_ : int positions of the support points among the training rows.
    dual_alpha_ : (n,) C-SVM multipliers ``0 <= a_i <= C_i``; ``cost`` the per-row ``C_i``.
    lambda_ : 1-D array holding the one fitted penalty (``path_var = "lambda"``); ``s`` the
        same value; ``C`` = ``1 / (n lambda_)``.
    pi : the class weight (None, a number, or "path"); :meth:`path` gives the pi path.
    objective : dual objective ``(1/2) a'Qa - sum a`` (as libsvm's ``obj``).
    """

    method = "svm"
    title = "Support vector machine"
    path_var = "lambda"
    path_arg = None  # one penalty: the tuners refit it value by value
    _predict_options = ("method", "m")

    _RENAMED = {"alpha": "dual_alpha_ (alpha is the elastic-net l1 share in this package)", "support": "support_"}

    def __getattr__(self, name):
        # only reached when normal lookup fails: name the new spelling of renamed attributes
        if name in SVMFit._RENAMED:
            raise AttributeError(f"svm fits have no attribute {name!r}; use {SVMFit._RENAMED[name]}")
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    # ------------------------------------------------------------------ construction
    @classmethod
    def _from_arrays(
        cls,
        design,
        *,
        kernel,
        kernel_arg,
        C,
        lambda_,
        pi,
        m,
        cost,
        standardize,
        Z,
        scaling,
        dual_alpha,
        support,
        b,
        n_iter,
        converged,
        prob_method,
        cache_size,
        fit_fn,
        fit_args,
        call,
        path_method=None,
        n_jobs=None,
        fitted_decision=None,
        Kpre=None,
        objective=None,
        paths=None,
        rows=None,
    ) -> "SVMFit":
        """Build a binary fit from the solver's output (every piece of state a keyword argument).

        ``dual_alpha`` (n,) the multipliers, ``support`` their nonzero positions, ``b`` the
        intercept in the (standardised) inputs ``Z``, ``scaling = (center, scale)``;
        ``lambda_`` the one fitted penalty (a 1-element array, also ``s``). Linear kernels get
        their input-space coefficients here. ``fitted_decision`` defaults to the decision values
        of the training rows (through ``Kpre``, the kernel matrix of ``Z``, when given);
        ``objective`` to the dual objective ``(1/2) a'Qa - sum(a)``. ``paths`` seeds the cache
        of pi paths (by grid size ``m``), ``rows`` the training rows of a one-vs-one pair.
        """
        self = cls._blank(design, call)
        self._init_svm(
            kernel=kernel,
            kernel_arg=kernel_arg,
            C=C,
            pi=pi,
            m=m,
            cost=cost,
            standardize=standardize,
            Z=Z,
            scaling=scaling,
            prob_method=prob_method,
            cache_size=cache_size,
            fit_fn=fit_fn,
            fit_args=fit_args,
            path_method=path_method,
            n_jobs=n_jobs,
        )
        if paths is not None:
            self.__dict__["_paths"] = dict(paths)
        if rows is not None:
            self._rows = rows
        y = design.y
        self.dual_alpha_ = dual_alpha
        self._beta = dual_alpha * y
        self.support_ = support
        self._b = b
        if kernel.code == KERNEL_LINEAR:
            xc, xs = scaling
            coef = (self._beta @ Z) / xs
            intercept = float(b - coef @ xc)
        else:
            coef, intercept = None, b
        lam = self._checked_lambda(lambda_)
        if lam.size != 1:
            raise ValueError(f"{cls.__name__}: lambda_ holds the one fitted penalty; got {lam.size} values")
        self._set_contract(
            lambda_=lam, s=float(lam[0]), converged=converged, n_iter=n_iter, coef=coef, intercept=intercept
        )
        if fitted_decision is None:
            fitted_decision = (Kpre @ self._beta + b) if Kpre is not None else self._decision(design.X)
        self.fitted_decision = fitted_decision
        if objective is None:
            # dual objective (1/2) a'Qa - sum(a), with (Qa)_i = y_i (f_i - b)
            objective = float(0.5 * dual_alpha @ (y * (fitted_decision - b)) - dual_alpha.sum())
        self.objective = objective
        return self

    def _init_svm(
        self,
        *,
        kernel,
        kernel_arg,
        C,
        pi,
        m,
        cost,
        standardize,
        Z,
        scaling,
        prob_method,
        cache_size,
        fit_fn,
        fit_args,
        path_method=None,
        n_jobs=None,
    ) -> None:
        """The state every SVM result holds: kernel, penalty, class weighting, scaling, settings."""
        self.kernel = kernel
        self._kernel_arg = kernel_arg
        self.C = C
        self.pi = pi
        self.m = m
        self.cost = cost
        self.standardize = bool(standardize)
        self._Z = Z
        self._xcenter, self._xscale = scaling
        self.prob_method = prob_method
        self._cache_size = float(cache_size)
        if path_method is not None:
            self.path_method = path_method
            self.n_jobs = n_jobs
        self._fit_fn = fit_fn
        self._fit_args = fit_args

    # ------------------------------------------------------------------ contract
    @property
    def coef(self):
        """Input-space coefficients (Series by term) of a linear kernel; None otherwise."""
        if self._coef is None:
            return None
        return pd.Series(self._coef, index=self.xnames, name="estimate")

    def _row_labels(self, pos):
        lab = self.design.row_labels
        return pd.Index(np.asarray(lab)[pos]) if lab is not None else pd.Index(pos)

    @property
    def dual_coef(self) -> pd.DataFrame:
        """``beta_i = a_i y_i`` of the support points (rows: training-row labels)."""
        sv = self.support_
        return pd.DataFrame({"dual_coef": self._beta[sv]}, index=self._row_labels(sv))

    # ------------------------------------------------------------------ prediction
    def _std(self, X: np.ndarray) -> np.ndarray:
        X = np.asarray(X, dtype=np.float64)
        if self.standardize:
            X = (X - self._xcenter) / self._xscale
        return np.ascontiguousarray(X)

    def _kernel_to_train(self, Z: np.ndarray, idx) -> np.ndarray:
        return self.kernel(np.ascontiguousarray(Z, dtype=np.float64), self._Z[idx])

    def _decision(self, X: np.ndarray, s=None) -> np.ndarray:
        _check_s(self, s)
        if self._coef is not None:
            return np.asarray(X, dtype=np.float64) @ self._coef + self._intercept
        Z = self._std(X)
        sv = self.support_
        out = np.empty(Z.shape[0])
        for lo in range(0, Z.shape[0], 2048):
            Kb = self._kernel_to_train(Z[lo : lo + 2048], sv)
            out[lo : lo + 2048] = Kb @ self._beta[sv] + self._b
        return out

    def _train_decision(self) -> np.ndarray:
        return self.fitted_decision

    def _grid_fits(self, m: int | None):
        """(grid, B, b): expansion coefficients ``B[j]`` and intercepts ``b[j]`` (in the
        standardised inputs) at the interior bracketing grid ``pi_j = j/m``, from the pi path."""
        res = self._get_path(m)
        return res.info["grid"], res.dual * self.design.y / res.info["nlam"], res.intercept / res.info["nlam"]

    def _path_decision(self, X: np.ndarray, m: int | None) -> np.ndarray:
        """Decision values of the weighted classifiers at the interior bracketing grid (rows)."""
        _, B, b0 = self._grid_fits(m)
        used = np.flatnonzero(np.any(B != 0.0, axis=0))
        Z = self._std(X)
        out = np.empty((B.shape[0], Z.shape[0]))
        code = self.kernel.code
        Zu = np.ascontiguousarray(self._Z[used])
        Bu = B[:, used]
        for lo in range(0, Z.shape[0], 2048):
            if code == KERNEL_CALLABLE:
                Kb = self._kernel_to_train(Z[lo : lo + 2048], used)
            else:  # the solvers' row arithmetic (compiled; about 0.6x numpy's time)
                Kb = kernel_cross(int(code), np.ascontiguousarray(Z[lo : lo + 2048]), Zu, self.kernel.kpar)
            out[:, lo : lo + 2048] = Bu @ Kb.T + b0[:, None]
        return out

    def _check_m(self, m):
        m = self.m if m is None else m
        if isinstance(m, bool) or not (isinstance(m, (int, np.integer)) and m >= 2):
            raise ValueError(f"m (the bracketing grid size) must be an integer >= 2; got {m!r}")
        return int(m)

    def _get_path(self, m: int | None):
        m = self._check_m(m)
        cache = self.__dict__.setdefault("_paths", {})
        if m not in cache:
            grid = bracket_grid(int(m))
            code = self.kernel.code
            Kpre = self.kernel(self._Z) if code == KERNEL_CALLABLE else None
            exact = getattr(self, "path_method", "exact") == "exact"
            fn = pi_path if exact else pi_grid_smo
            tol = (getattr(self, "_fit_args", None) or {}).get("tol")
            extra = {} if exact or tol is None else {"tol": tol}
            cache[m] = fn(
                self._Z,
                self.design.y,
                code=code,
                kpar=self.kernel.kpar,
                Kpre=Kpre,
                nlam=1.0 / self.C,
                grid=grid,
                weights=self.design.weights,
                cache_size=self._cache_size,
                n_jobs=getattr(self, "n_jobs", None),
                **extra,
            )
        return cache[m]

    def _proba(self, X: np.ndarray, s=None, method: str | None = None, m: int | None = None, **kw) -> np.ndarray:
        _check_s(self, s)
        if kw:
            raise TypeError(f"unexpected arguments for svm probabilities: {sorted(kw)} (use method= and m=)")
        method = self.prob_method if method is None else method
        if method == "platt_tuned":
            best = self.platt_tuned().best_fit
            return best.platt(best._decision(X))
        if method not in _METHODS:
            raise ValueError(f"method must be one of {_METHODS}; got {method!r}")
        if method == "bracket":
            return bracket_prob(self._path_decision(X, m), m=self._check_m(m))
        f = self._decision(X)
        if method == "platt":
            return self.platt(f)
        if method == "sollich":
            return sollich_prob(f)
        return coherence_prob(f, self.rho_, 1.0)

    def _refit_args(self) -> dict:
        """Arguments that refit this model (same kernel and width, weights, pi, m, scaling) at
        another ``lambda_``."""
        kern = self.kernel
        args = dict(self._fit_args)
        if kern.code == KERNEL_CALLABLE:
            args["kernel"] = kern.func
        else:
            args["kernel"] = self._kernel_arg
            if kern.name != "linear":
                args["gamma"] = float(kern.kpar[0])
            if kern.name == "poly":
                args["coef0"] = float(kern.kpar[1])
                args["degree"] = int(kern.kpar[2])
        args["pi"] = 0.5 if isinstance(self.pi, str) else self.pi
        args["m"] = self.m
        args["standardize"] = self.standardize
        return args

    def platt_tuned(
        self,
        grid=None,
        *,
        D: int | None = None,
        tau: float = 0.5,
        random_state=0,
        n_jobs: int | None = None,
        refresh: bool = False,
    ):
        """Tuned Platt ([WSL] section 5): lambda re-chosen by the GKL estimate of Platt's probabilities.

        [WSL]'s "tuned Platt" fits Platt's sigmoid to an SVM whose ``lambda`` minimises the
        data-perturbation estimate of the generalised KL loss (eq. 9-14) *of the Platt
        probabilities*, instead of the cross-validated classification error. This refits the
        model (same kernel and kernel width, weights, ``pi``, scaling) at every ``lambda`` of
        ``grid`` for each of the ``D`` perturbed data sets, so it costs ``len(grid) * (D + 1)``
        fits; the result is cached on the fit, and ``predict(type="prob",
        method="platt_tuned")`` uses it (calling this with the defaults on first use).

        Parameters
        ----------
        grid : penalty values ``lambda_`` (default :func:`cohstats.tuning.wsl_grid`, [WSL]'s
            61 values on ``[1e-3, 1e3]``).
        D, tau, random_state, n_jobs : of :func:`cohstats.tuning.tune` with ``method="gkl"``
            (``D`` defaults to ``floor(sqrt(n))``, ``tau = 0.5`` as [WSL]).
        refresh : recompute even when a tuned result is cached.

        Returns
        -------
        TuneResult; ``.best_fit`` is the refitted SVM at the chosen ``lambda_`` and
        ``.best_params["lambda_"]`` the value.
        """
        cached = self.__dict__.get("_platt_tuned")
        if cached is not None and not refresh and grid is None and D is None:
            return cached
        from cohstats.tuning import tune, wsl_grid

        grid = wsl_grid() if grid is None else np.asarray(grid, dtype=float)
        res = tune(
            self._fit_fn,
            self.design,
            grid={"lambda_": grid},
            method="gkl",
            D=D,
            tau=tau,
            prob_args={"method": "platt"},
            random_state=random_state,
            n_jobs=n_jobs,
            verbose=False,
            **self._refit_args(),
        )
        self._platt_tuned = res
        return res

    @property
    def platt(self):
        """Platt sigmoid fitted to the training decision values (Lin, Lin & Weng 2007)."""
        if "_platt" not in self.__dict__:
            self._platt = platt_fit(self.fitted_decision, self.design.y)
        return self._platt

    @property
    def rho_(self) -> float:
        """Coherence temperature minimising the training EKL ([ZDJ] eq. 13)."""
        if "_rho" not in self.__dict__:
            self._rho = coherence_rho(self.fitted_decision, self.design.y, u=1.0)
        return self._rho

    # ------------------------------------------------------------------ reporting
    def _dropped_info(self, info: dict, notes: list):
        d = self.design
        info["rows dropped"] = int(d.n_dropped)
        for why, k in (d.dropped or {}).items():
            notes.append(f"{k} row(s) dropped: {why}")

    def _summary_head(self):
        """The summary facts every SVM fit shares (binary and one-vs-one), and the notes list."""
        info = {
            "kernel": self.kernel.describe(),
            "s (lambda_)": float(self.lambda_[0]),
            "C = 1/(n lambda_)": self.C,
            "pi": self.pi,
            "standardize": self.standardize,
            "observations": self.nobs,
        }
        notes = []
        self._dropped_info(info, notes)
        return info, notes

    def _summary(self) -> Summary:
        y = self.design.y
        a = self.dual_alpha_
        free = (a > 1e-12 * np.maximum(self.cost, 1)) & (a < self.cost * (1 - 1e-12))
        info, notes = self._summary_head()
        info.update(
            {
                "support vectors": int(self.support_.size),
                "free support vectors": int(np.sum(free)),
                "dual objective": self.objective,
                (
                    "pi-path events"
                    if isinstance(self.pi, str) and getattr(self, "path_method", "") == "exact"
                    else "iterations"
                ): self.n_iter,
                "converged": self.converged,
                "training error": float(np.mean((self.fitted_decision > 0) != (y > 0))),
            }
        )
        tables = {}
        sv = pd.DataFrame(
            {
                "class": self.classes,
                "n": [int(np.sum(y < 0)), int(np.sum(y > 0))],
                "support vectors": [int(np.sum((a > 0) & (y < 0))), int(np.sum((a > 0) & (y > 0)))],
                "at bound": [
                    int(np.sum((a >= self.cost) & (self.cost > 0) & (y < 0))),
                    int(np.sum((a >= self.cost) & (self.cost > 0) & (y > 0))),
                ],
            }
        )
        tables["Support vectors by class"] = sv
        if self._coef is not None:
            tables["Coefficients"] = pd.DataFrame(
                {"estimate": np.concatenate([[self._intercept], self._coef])}, index=["(Intercept)"] + self.xnames
            )
        try:
            tables["Platt sigmoid (binomial GLM, statsmodels)"] = platt_glm(self.fitted_decision, y).drop(columns="z")
            notes.append(
                "Platt sigmoid: logit P(y = " + repr(self.classes[1]) + ") = b0 + b1 f, "
                "fitted to the training decision values with Platt's smoothed targets; "
                "standard errors of the binomial quasi-likelihood"
            )
        except Exception as exc:  # pragma: no cover - report, do not fail the summary
            notes.append(f"Platt sigmoid unavailable: {exc}")
        notes.insert(
            0,
            f"f(x) > 0 predicts {self.classes[1]!r}; a single penalty (not a path): "
            "tune lambda_ or C with cohstats.tune.",
        )
        if self.standardize:
            notes.append(
                "inputs standardised (sd with divisor n) before the kernel"
                + ("; coefficients on the original scale" if self._coef is not None else "")
            )
        return Summary(self.title, info, tables, notes, call=self.call_string())

    def _repr_extra(self) -> str:
        return f"{self.kernel.describe()}, lambda_={float(self.lambda_[0]):.4g}, pi={self.pi}, SV={self.support_.size}"

    def path(self, m: int | None = None) -> PathFrame:
        """Coefficients along the bracketing grid in pi (the exact solution path, [WSL] 4.6).

        Linear kernel: intercept and slopes (original scale); other kernels: intercept and the
        expansion coefficients ``beta_i`` (columns ``"beta[i]"``).
        """
        grid, B, b0 = self._grid_fits(m)
        if self.kernel.code == KERNEL_LINEAR:
            W = (B @ self._Z) / self._xscale
            data = {"pi": grid, "(Intercept)": b0 - W @ self._xcenter}
            cols = list(self.xnames)
            for k, c in enumerate(cols):
                data[c] = W[:, k]
        else:
            data = {"pi": grid, "(Intercept)": b0}
            cols = [f"beta[{i}]" for i in range(self.nobs)]
            for i, c in enumerate(cols):
                data[c] = B[:, i]
        return PathFrame.build(pd.DataFrame(data), xvar="pi", coef_columns=["(Intercept)"] + cols, log_x=False)

    def plot(self, *args, **kwargs):
        """The pi path of the coefficients ([WSL] Figure 1); returns the matplotlib Axes."""
        ax = self.path().plot(*args, **kwargs)
        ax.set_title("weighted SVM: coefficients along the pi path")
        return ax


class MulticlassSVMFit(SVMFit):
    """A one-vs-one SVM for K > 2 classes; see :func:`svm`.

    One binary C-SVM per pair of classes ``a < b`` (class order), fitted on the rows of the two
    classes. Decision values ``predict(type="link")`` have one column per pair, named
    ``"a vs b"``, positive favouring ``a`` (libsvm's and scikit-learn's
    ``decision_function_shape="ovo"`` convention); classes are predicted by their votes (ties
    to the class listed first, as libsvm). Probabilities couple the pairwise estimates of any
    binary method (Wu, Lin & Weng 2004, method 2; :mod:`cohstats.coupling`).

    Attributes
    ----------
    coef : DataFrame terms x pairs (linear kernels; original scale), else None.
    intercept : Series by pair.
    dual_coef : DataFrame, rows the training-row labels of the support points, one column per
        pair (the expansion coefficient of the point in that pair's decision value; 0 when the
        point is not a support vector of that pair).
    support_ : sorted positions of the rows that are support vectors of at least one pair.
    pairs : list of ``(a, b)`` class labels.
    """

    title = "Support vector machine (one-vs-one)"

    @classmethod
    def _from_arrays(
        cls,
        design,
        *,
        kernel,
        kernel_arg,
        C,
        lambda_,
        pi,
        m,
        standardize,
        Z,
        scaling,
        pairs,
        pair_idx,
        pair_fits,
        beta,
        dual_alpha,
        cost,
        support,
        n_iter,
        converged,
        objective,
        bpair,
        prob_method,
        cache_size,
        path_method,
        n_jobs,
        fit_fn,
        fit_args,
        call,
        coef=None,
        fitted=None,
    ) -> "MulticlassSVMFit":
        """Build a one-vs-one fit from its binary pair fits (every piece of state a keyword).

        ``beta``, ``dual_alpha``, ``cost`` are (n, P) with one column per pair (zero off the
        pair's rows), ``bpair`` the P intercepts of the pairwise decision values, ``coef`` the
        (p, P) input-space slopes of a linear kernel (original scale) and ``fitted`` the
        training decision values when already known (else computed on first use).
        """
        self = cls._blank(design, call)
        self._init_svm(
            kernel=kernel,
            kernel_arg=kernel_arg,
            C=C,
            pi=pi,
            m=m,
            cost=cost,
            standardize=standardize,
            Z=Z,
            scaling=scaling,
            prob_method=prob_method,
            cache_size=cache_size,
            fit_fn=fit_fn,
            fit_args=fit_args,
            path_method=path_method,
            n_jobs=n_jobs,
        )
        self.pairs, self._pair_idx, self._pair_fits = pairs, pair_idx, pair_fits
        self._beta, self.dual_alpha_ = beta, dual_alpha
        self.support_ = support
        self.objective = objective
        self._bpair = bpair
        intercept = np.array(bpair) if coef is None else bpair - scaling[0] @ coef
        lam = self._checked_lambda(lambda_)
        if lam.size != 1:
            raise ValueError(f"{cls.__name__}: lambda_ holds the one fitted penalty; got {lam.size} values")
        self._set_contract(
            lambda_=lam, s=float(lam[0]), converged=converged, n_iter=n_iter, coef=coef, intercept=intercept
        )
        if fitted is not None:
            self._fitted = fitted
        return self

    @property
    def fitted_decision(self) -> np.ndarray:
        """Pairwise decision values of the training rows (computed on first use)."""
        if self.__dict__.get("_fitted") is None:
            self._fitted = self._decision(self.design.X)
        return self._fitted

    @property
    def pair_names(self) -> list:
        return [f"{a} vs {b}" for a, b in self.pairs]

    @property
    def coef(self):
        if self._coef is None:
            return None
        return pd.DataFrame(self._coef, index=self.xnames, columns=self.pair_names)

    @property
    def intercept(self):
        return pd.Series(self._intercept, index=self.pair_names, name="intercept")

    def coef_at(self, s=None):
        """Intercepts and coefficients (rows) by pair (columns) of a linear one-vs-one fit."""
        self._check_s(s, "coef_at")
        if self._coef is None:
            raise ValueError("a kernel svm has no input-space coefficients; see dual_coef or predict(type='link')")
        return pd.DataFrame(
            np.vstack([self._intercept[None], self._coef]), index=["(Intercept)"] + self.xnames, columns=self.pair_names
        )

    @property
    def dual_coef(self) -> pd.DataFrame:
        sv = self.support_
        return pd.DataFrame(self._beta[sv], index=self._row_labels(sv), columns=self.pair_names)

    def _decision(self, X: np.ndarray, s=None) -> np.ndarray:
        _check_s(self, s)
        if self._coef is not None:
            return np.asarray(X, dtype=np.float64) @ self._coef + self._intercept
        # one kernel block against the union of the support points serves every pair
        Z = self._std(X)
        sv = self.support_
        B = self._beta[sv]
        out = np.empty((Z.shape[0], B.shape[1]))
        for lo in range(0, Z.shape[0], 2048):
            out[lo : lo + 2048] = self._kernel_to_train(Z[lo : lo + 2048], sv) @ B + self._bpair
        return out

    def _class_scores(self, X: np.ndarray, s=None) -> np.ndarray:
        """Votes ``(N, K)``: pair ``(a, b)`` votes for ``a`` when its decision value is > 0."""
        F = self._decision(X, s=s)
        K = self.n_classes
        votes = np.zeros((F.shape[0], K))
        rows = np.arange(F.shape[0])
        for k, (i, j) in enumerate(self._pair_idx):
            win = np.where(F[:, k] > 0, i, j)
            np.add.at(votes, (rows, win), 1.0)
        return votes

    def _classify(self, X: np.ndarray, s=None, **kw) -> np.ndarray:
        # the first maximum of the votes: libsvm's tie rule
        return np.argmax(self._class_scores(X, s=s), axis=1)

    def _link_columns(self, k: int) -> list:
        return self.pair_names

    def pairwise_prob(self, X: np.ndarray, method: str | None = None, m: int | None = None) -> np.ndarray:
        """``(N, n_pairs)`` estimates of ``P(Y = a | Y in {a, b}, x)`` for every pair ``(a, b)``,
        each from the binary method ``method`` applied to that pair's SVM."""
        method = self.prob_method if method is None else method
        if method not in _METHODS:
            raise ValueError(f"method must be one of {_METHODS}; got {method!r}")
        Z = self._std(X)
        return np.column_stack(
            [1.0 - np.asarray(f._proba(Z, method=method, m=m), dtype=float) for f in self._pair_fits]
        )

    def _proba(self, X: np.ndarray, s=None, method: str | None = None, m: int | None = None, **kw) -> np.ndarray:
        _check_s(self, s)
        if kw:
            raise TypeError(f"unexpected arguments for svm probabilities: {sorted(kw)} (use method= and m=)")
        r = self.pairwise_prob(X, method=method, m=m)
        K = self.n_classes
        R = np.zeros((r.shape[0], K, K))
        for k, (i, j) in enumerate(self._pair_idx):
            R[:, i, j] = r[:, k]
            R[:, j, i] = 1.0 - r[:, k]
        return pairwise_coupling(R)

    def platt_tuned(self, *args, **kwargs):
        """Tuned Platt of every pair (:meth:`SVMFit.platt_tuned` on each pairwise SVM, with the
        same arguments); returns the list of results in pair order."""
        return [f.platt_tuned(*args, **kwargs) for f in self._pair_fits]

    @property
    def platt(self):
        raise AttributeError(
            "a one-vs-one fit has one Platt sigmoid per pair: use predict(type='prob', method='platt')"
        )

    @property
    def rho_(self):
        return np.array([f.rho_ for f in self._pair_fits])

    def path(self, m: int | None = None):
        raise NotImplementedError(
            "the pi path belongs to a binary SVM; for K > 2 classes each pair has its own (used by method='bracket')"
        )

    def plot(self, ax=None, **kwargs):
        """Training decision values of every pair, by the true class (one panel of boxes);
        returns the matplotlib Axes."""
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots(figsize=(max(6.4, 1.2 * len(self.pairs)), 4.2))
        F = self.fitted_decision
        yi = self.design.y_int
        pos, data, ticks = [], [], []
        for k, (i, j) in enumerate(self._pair_idx):
            for off, c in ((-0.2, i), (0.2, j)):
                data.append(F[yi == c, k])
                pos.append(k + off)
            ticks.append(self.pair_names[k])
        ax.boxplot(data, positions=pos, widths=0.3, **kwargs)
        ax.set_xticks(range(len(ticks)))
        ax.set_xticklabels(ticks, rotation=30, ha="right")
        ax.axhline(0.0, color="0.6", lw=0.6)
        ax.set_ylabel("pairwise decision value (> 0 favours the first class)")
        ax.set_title("one-vs-one SVM: training decision values (left box: first class)")
        return ax

    def _summary(self) -> Summary:
        info, notes = self._summary_head()
        yi = self.design.y_int
        info.update(
            {
                "classes": self.n_classes,
                "pairs (one-vs-one)": len(self.pairs),
                "support vectors": int(self.support_.size),
                "iterations (all pairs)": self.n_iter,
                "converged": self.converged,
                "training error": float(np.mean(self._classify(self.design.X) != yi)),
            }
        )
        rows = []
        for (a, b), f in zip(self.pairs, self._pair_fits):
            rows.append(
                {
                    "pair": f"{a} vs {b}",
                    "n": f.nobs,
                    "support vectors": int(f.support_.size),
                    "at bound": int(np.sum((f.dual_alpha_ >= f.cost) & (f.cost > 0))),
                    "intercept": -f._b,
                    "converged": f.converged,
                }
            )
        tables = {"Pairs": pd.DataFrame(rows).set_index("pair")}
        if self._coef is not None:
            tables["Coefficients"] = pd.DataFrame(
                np.vstack([self._intercept[None], self._coef]),
                index=["(Intercept)"] + self.xnames,
                columns=self.pair_names,
            )
        notes.insert(
            0,
            "one binary SVM per pair of classes; 'a vs b' > 0 votes for a; classes by "
            "votes (ties to the class listed first), probabilities by pairwise coupling "
            "(Wu, Lin & Weng 2004)",
        )
        if self.standardize:
            notes.append("inputs standardised (sd with divisor n) before the kernel")
        return Summary(self.title, info, tables, notes, call=self.call_string())

    def _repr_extra(self) -> str:
        return (
            f"{self.kernel.describe()}, lambda_={float(self.lambda_[0]):.4g}, "
            f"{len(self.pairs)} pairs, SV={self.support_.size}"
        )


# ============================================================================ fitting
def _prepare(
    formula,
    data,
    ctx,
    *,
    kernel,
    C,
    lambda_,
    pi,
    m,
    sigma,
    gamma,
    degree,
    coef0,
    weights,
    subset,
    tol,
    prob_method,
    na_action,
    allow_path,
    standardize,
    binary_only,
):
    """Validate the arguments shared by :func:`svm` and :func:`psi_learn`; build the design,
    the scaling and the kernel."""
    maxk = 2 if binary_only else None
    design = (
        formula
        if isinstance(formula, Design)
        else build_design(
            formula, data, weights=weights, subset=subset, na_action=na_action, context=ctx, max_classes=maxk
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
        lam = _check_pos("lambda_", lambda_)
        Cval = 1.0 / (n * lam)
    else:
        Cval = _check_pos("C", 1.0 if C is None else C)
        lam = 1.0 / (n * Cval)
    path = isinstance(pi, str)
    if path and pi != "path":
        raise ValueError(f"pi must be a number in [0, 1], None, or 'path'; got {pi!r}")
    if not path and pi is not None:
        if isinstance(pi, bool) or not isinstance(pi, (int, float, np.integer, np.floating)) or not (0.0 <= pi <= 1.0):
            raise ValueError(f"pi must be a number in [0, 1], None, or 'path'; got {pi!r}")
        pi = float(pi)
        if not design.binary:
            raise ValueError(
                f"pi weights the two classes of a binary response; with "
                f"{design.n_classes} classes use pi=None (or pi='path' for bracketing)"
            )
    if m is not None and not (isinstance(m, (int, np.integer)) and not isinstance(m, bool) and m >= 2):
        raise ValueError(f"m (the bracketing grid size) must be an integer >= 2; got {m!r}")
    if prob_method is None:
        prob_method = "bracket" if path else "platt"
    elif prob_method not in _METHODS:
        raise ValueError(f"prob_method must be one of {_METHODS}; got {prob_method!r}")
    tol = _check_pos("tol", tol)
    if not isinstance(standardize, (bool, np.bool_)):
        raise TypeError(f"standardize must be True or False; got {standardize!r}")
    if kernel is not None and not callable(kernel) and not isinstance(kernel, str):
        raise ValueError(f"kernel must be None (linear), 'linear', 'rbf', 'poly' or a callable; got {kernel!r}")
    if isinstance(kernel, str) and kernel.lower() == "compact":
        raise ValueError("kernel='compact' belongs to lamsvm; svm takes None, 'linear', 'rbf', 'poly' or a callable")
    xc, xs = _scaling(design.X, design.weights, bool(standardize))
    Z = np.ascontiguousarray((design.X - xc) / xs) if standardize else design.X
    g = _resolve_width(kernel, Z, design.y, sigma, gamma)
    kern = make_kernel("linear" if kernel is None else kernel, Z, design.y, gamma=g, degree=degree, coef0=coef0)
    if path and not allow_path:
        raise ValueError(
            "pi='path' is the exact path of the weighted SVM; psi-learning is "
            "fitted at each pi of the bracketing grid (give a number for pi)"
        )
    return design, lam, Cval, pi, path, m, prob_method, tol, kern, Z, xc, xs


def _default_m(n):
    return max(2, int(math.floor(math.sqrt(n))))


def _fit_binary(
    design,
    Z,
    xc,
    xs,
    kern,
    *,
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
        r = smo_solve(
            Z,
            y,
            code=scode,
            kpar=kern.kpar,
            Kpre=Kpre,
            C=cost,
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
        **_run_settings(prob_method, cache_size, path_method, n_jobs, tol, shrinking, max_iter),
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
    # matrix up front was slower (benchmarks/README.md).
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
        **_run_settings(prob_method, cache_size, path_method, n_jobs, tol, shrinking, max_iter),
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
    "na_action": Options("omit", "raise"),
}
# probabilities of an SVM are a calibration of its decision values: cross-validate the
# classification error by default
_DECLARED = FitSpec("svm", path_args=(), multiclass=True, probabilities=True, default_measure="class")
# svm only (psi_learn shares _PARAMS): the low-rank kernel route (cohstats.models.svm_approx)
_APPROX_PARAMS = {"kernel_approx": NoneOr(Options("nystroem", "rff")), "n_components": Integer(1)}


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
        2.5 % scaled; ``benchmarks/README.md``).
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
        are in the repository's ``benchmarks/README.md``).
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

    Returns
    -------
    SVMFit (two classes) or MulticlassSVMFit (K > 2). Both have one penalty, not a path:
    ``lambda_`` is a 1-D array with that value, ``predict(s=)`` accepts only it and
    ``select()`` refuses; tune ``lambda_`` / ``C`` with :func:`cohstats.tune`.

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
    design, lam, Cval, pi, path, m, prob_method, tol, kern, Z, xc, xs = _prepare(
        formula,
        data,
        ctx,
        kernel=kernel,
        C=C,
        lambda_=lambda_,
        pi=pi,
        m=m,
        sigma=sigma,
        gamma=gamma,
        degree=degree,
        coef0=coef0,
        weights=weights,
        subset=subset,
        tol=tol,
        prob_method=prob_method,
        na_action=na_action,
        allow_path=True,
        standardize=standardize,
        binary_only=False,
    )
    n = design.nobs
    if path_method not in ("exact", "warm", "auto"):
        raise ValueError(f"path_method must be 'exact', 'warm' or 'auto'; got {path_method!r}")
    from cohstats.solvers.svm.svmpath import _n_threads

    _n_threads(n_jobs)  # validate before any work
    if path_method == "auto":
        path_method = "exact" if n <= AUTO_EXACT_MAX_N else "warm"
    kname = None if kernel is None else (kernel if isinstance(kernel, str) else "callable")
    call = {"kernel": kname, **({"lambda_": lam} if lambda_ is not None else {"C": Cval})}
    if kern.code not in (KERNEL_LINEAR, KERNEL_CALLABLE):
        call["gamma"] = float(kern.kpar[0])
    if pi is not None:
        call["pi"] = pi
    if not standardize:
        call["standardize"] = False
    kernel_arg = kernel if not callable(kernel) else None
    common = dict(
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
        standardize=bool(standardize),
        call=call,
        kernel_arg=kernel_arg,
    )
    if kernel_approx is not None:
        from cohstats.models.svm_approx import fit_approx

        return fit_approx(
            design,
            Z,
            xc,
            xs,
            kern,
            kernel_approx=kernel_approx,
            n_components=n_components,
            random_state=random_state,
            **common,
        )
    if design.binary:
        fit = _fit_binary(design, Z, xc, xs, kern, **common)
    else:
        fit = _fit_ovo(design, Z, xc, xs, kern, **common)
    return fit


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
    ``"bracket"`` (psi-learning refitted on the grid ``j/m``).

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
    from cohstats.solvers.svm.psi import psi_dc

    ctx = capture_context(1) if isinstance(formula, str) else None
    design, lam, Cval, pi, path, m, prob_method, tol, kern, Z, xc, xs = _prepare(
        formula,
        data,
        ctx,
        kernel=kernel,
        C=C,
        lambda_=lambda_,
        pi=pi,
        m=m,
        sigma=sigma,
        gamma=gamma,
        degree=degree,
        coef0=coef0,
        weights=weights,
        subset=subset,
        tol=tol,
        prob_method=prob_method,
        na_action=na_action,
        allow_path=False,
        standardize=standardize,
        binary_only=True,
    )
    if isinstance(max_dc, bool) or not isinstance(max_dc, (int, np.integer)) or max_dc < 1:
        raise ValueError(f"max_dc must be a positive integer; got {max_dc!r}")
    y = design.y
    n = design.nobs
    cw = design.weights * class_weights(y, pi)
    r = psi_dc(Z, y, kernel=kern, lam=lam, cw=cw, tol=tol, max_dc=int(max_dc), cache_size=cache_size, max_iter=max_iter)
    if not r.converged:
        warnings.warn(
            f"psi_learn: the DC iteration stopped after {r.n_iter} steps without a "
            "repeated sign pattern or a relative decrease below 1e-6; increase max_dc",
            ConvergenceWarning,
            stacklevel=2,
        )
    kname = None if kernel is None else (kernel if isinstance(kernel, str) else "callable")
    call = {"kernel": kname, "C": Cval}
    if kern.code not in (KERNEL_LINEAR, KERNEL_CALLABLE):
        call["gamma"] = float(kern.kpar[0])
    if pi is not None:
        call["pi"] = pi
    if not standardize:
        call["standardize"] = False
    return PsiFit._from_arrays(
        design,
        kernel=kern,
        kernel_arg=kernel if not callable(kernel) else None,
        C=Cval,
        lambda_=np.array([lam]),
        pi=pi,
        m=_default_m(n) if m is None else int(m),
        cost=2.0 * cw * Cval,
        standardize=standardize,
        Z=Z,
        scaling=(xc, xs),
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
        tol=tol,
        max_dc=int(max_dc),
        prob_method=prob_method,
        cache_size=cache_size,
        fit_fn=psi_learn,
        fit_args=dict(tol=tol, max_dc=int(max_dc), cache_size=cache_size, max_iter=max_iter),
        call=call,
    )
