"""The binary SVM's result :class:`SVMFit` (:func:`cohstats.svm`) and the checks its fit shares.

Documented, saved and loaded as ``cohstats.models.svm.SVMFit``.
"""

from __future__ import annotations


import numpy as np
import pandas as pd

from cohstats.kernels import KERNEL_CALLABLE, KERNEL_LINEAR, kernel_cross, resolve_gamma
from cohstats.probability import (
    bracket_grid,
    bracket_prob,
    coherence_prob,
    coherence_rho,
    platt_fit,
    platt_glm,
    sollich_prob,
)
from cohstats.models._offsets import OffsetProbabilities
from cohstats.results import Fit, PathFrame, Summary
from cohstats.scaling import column_scaling
from cohstats.solvers.svm.svmpath import pi_grid_smo, pi_path

_METHODS = ("platt", "sollich", "coherence", "bracket", "platt_tuned")


def class_weights(y: np.ndarray, pi) -> np.ndarray:
    """``S_pi(y_i)``: ``1 - pi`` for ``y = +1``, ``pi`` for ``y = -1`` (ones when ``pi`` is None)."""
    if pi is None:
        return np.ones_like(y, dtype=np.float64)
    return np.where(y > 0, 1.0 - pi, pi)


def _scaling(X: np.ndarray, w: np.ndarray, standardize: bool):
    """Centre and scale (sd with divisor ``sum w``, weighted as the fit) of every column;
    constant columns keep scale 1 (:func:`cohstats.scaling.column_scaling`)."""
    return column_scaling(X, w, standardize)


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
        if isinstance(sigma, str):  # "median", the only name the front door accepts
            gamma = "median"
        else:
            return 1.0 / float(sigma) ** 2
    if isinstance(gamma, str):
        return resolve_gamma(gamma, Z, labels)
    return float(gamma)


def _check_s(fit, s):
    """``s`` reaching the solver-level methods: None or the fitted value (``predict`` has
    validated it already; the tuners pass the fitted value or nothing)."""
    if s is not None:
        fit._check_s(s, "_decision")


class SVMFit(OffsetProbabilities, Fit):
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
    #: the validated arguments of the call (:class:`cohstats.validation.Settings`); None for a
    #: fit read from a file saved before fits carried them
    settings = None
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
            # dual objective (1/2) a'Qa - sum(a), with (Qa)_i = y_i (f_i - b); with offsets o,
            # f_i = o_i + b + h_i and the dual's linear term is -(1 - y_i o_i)
            off = 0.0 if design.offset is None else design.offset
            objective = float(0.5 * dual_alpha @ (y * (fitted_decision - b - off)) - dual_alpha @ (1.0 - y * off))
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
        return self._link_to_prob(self._decision(X), s, method)

    def _link_to_prob(self, f, s=None, method: str | None = None, m: int | None = None):
        """P(Y = classes[1]) from decision values ``f`` (offsets included) by a method that reads
        ``f`` alone; ``"bracket"`` and ``"platt_tuned"`` refit the model and take no offset."""
        _check_s(self, s)
        method = self.prob_method if method is None else method
        if method not in _METHODS:
            raise ValueError(f"method must be one of {_METHODS}; got {method!r}")
        if method in ("bracket", "platt_tuned"):
            raise ValueError(
                f"svm with an offset: method={method!r} refits the SVM along pi or lambda without the "
                "offset; use method='platt', 'sollich' or 'coherence'"
            )
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


SVMFit.__module__ = "cohstats.models.svm"  # its public home (documentation, saved files)
