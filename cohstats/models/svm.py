"""Weighted binary support vector machine with honest class probabilities (SPEC 2, 4).

:func:`svm` fits

    minimise (1/n) sum_i w_i S_pi(y_i) [1 - y_i f(x_i)]_+ + (lambda/2) ||h||_K^2,   f = b + h

with ``S_pi(+1) = 1 - pi`` and ``S_pi(-1) = pi`` ([WSL] eq. 3), i.e. the C-SVM with costs
``C_i = w_i S_pi(y_i) / (n lambda)`` (SPEC D37), by SMO (:mod:`cohstats.solvers.smo`).
``pi=None`` drops the class weights (``S = 1``: the ordinary SVM of [ZDJ] eq. 4, libsvm's
C-SVM with ``C = 1/(n lambda)``). ``pi="path"`` follows the exact solution path in ``pi``
(:mod:`cohstats.solvers.svmpath`) over the bracketing grid.

Probabilities (``predict(type="prob", method=...)``): ``"platt"``, ``"sollich"``,
``"coherence"`` and ``"bracket"`` (see :mod:`cohstats.probability`), and ``"platt_tuned"``
([WSL]'s tuned Platt: ``lambda`` re-chosen by the GKL estimate, :meth:`SVMFit.platt_tuned`).
"""
from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd

from cohstats import ConvergenceWarning
from cohstats.formula import Design, build_design, capture_context
from cohstats.kernels import KERNEL_CALLABLE, KERNEL_LINEAR, make_kernel
from cohstats.probability import (bracket_grid, bracket_prob, coherence_prob, coherence_rho,
                                  platt_fit, sollich_prob)
from cohstats.results import Fit, PathFrame, Summary
from cohstats.solvers.smo import smo_solve
from cohstats.solvers.svmpath import pi_grid_smo, pi_path

__all__ = ["svm", "SVMFit", "psi_learn", "PsiFit"]

_METHODS = ("platt", "sollich", "coherence", "bracket", "platt_tuned")


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


class SVMFit(Fit):
    """A fitted (weighted) binary SVM; see :func:`svm`.

    Attributes
    ----------
    dual_coef : (n,) expansion coefficients ``beta_i = a_i y_i`` (``f = sum_i beta_i K(x_i, x) + b``).
    alpha : (n,) C-SVM multipliers ``0 <= a_i <= C_i``.
    support : indices of the support vectors (``a_i > 0``).
    lambda_ : the penalty (a single value), ``cost`` the per-observation ``C_i``.
    pi : the class weight (None, a number, or "path"); ``pi_grid`` for path fits.
    objective : dual objective ``(1/2) a'Qa - sum a`` (as libsvm's ``obj``).
    """

    method = "svm"
    title = "Weighted support vector machine"
    _predict_options = ("method", "m")

    # ------------------------------------------------------------------ prediction
    def _kernel_to_train(self, X: np.ndarray, idx) -> np.ndarray:
        X = np.ascontiguousarray(X, dtype=np.float64)
        return self.kernel(X, self.design.X[idx])

    def _decision(self, X: np.ndarray, s=None) -> np.ndarray:
        if s is not None:
            raise TypeError("svm fits are not penalty paths; s= is not used (the pi path is "
                            "read with path() and method='bracket')")
        if self._coef is not None:
            return np.asarray(X, dtype=np.float64) @ self._coef + self._intercept
        sv = self.support
        out = np.empty(X.shape[0])
        for lo in range(0, X.shape[0], 2048):
            Kb = self._kernel_to_train(X[lo:lo + 2048], sv)
            out[lo:lo + 2048] = Kb @ self.dual_coef[sv] + self._intercept
        return out

    def _train_decision(self) -> np.ndarray:
        return self.fitted_decision

    def _grid_fits(self, m: int | None):
        """(grid, B, b): expansion coefficients ``B[j]`` and intercepts ``b[j]`` at the interior
        bracketing grid ``pi_j = j/m``, from the exact pi path."""
        res = self._get_path(m)
        return res.grid, res.A * self.design.y / res.nlam, res.A0 / res.nlam

    def _path_decision(self, X: np.ndarray, m: int | None) -> np.ndarray:
        """Decision values of the weighted classifiers at the interior bracketing grid (rows)."""
        _, B, b0 = self._grid_fits(m)
        used = np.flatnonzero(np.any(B != 0.0, axis=0))
        X = np.asarray(X, dtype=np.float64)
        out = np.empty((B.shape[0], X.shape[0]))
        for lo in range(0, X.shape[0], 2048):
            Kb = self._kernel_to_train(X[lo:lo + 2048], used)
            out[:, lo:lo + 2048] = B[:, used] @ Kb.T + b0[:, None]
        return out

    def _check_m(self, m):
        m = self.m if m is None else m
        if isinstance(m, bool) or not (isinstance(m, (int, np.integer)) and m >= 2):
            raise ValueError(f"m (the bracketing grid size) must be an integer >= 2; got {m!r}")
        return int(m)

    def _get_path(self, m: int | None):
        n = self.nobs
        m = self._check_m(m)
        cache = self.__dict__.setdefault("_paths", {})
        if m not in cache:
            grid = bracket_grid(int(m))
            code = self.kernel.code
            Kpre = self.kernel(self.design.X) if code == KERNEL_CALLABLE else None
            fn = pi_path if getattr(self, "path_method", "exact") == "exact" else pi_grid_smo
            cache[m] = fn(self.design.X, self.design.y, code=code, kpar=self.kernel.kpar,
                          Kpre=Kpre, nlam=n * self.lambda_, grid=grid,
                          weights=self.design.weights, cache_size=self._cache_size,
                          n_jobs=getattr(self, "n_jobs", None))
        return cache[m]

    def _proba(self, X: np.ndarray, s=None, method: str | None = None, m: int | None = None,
               **kw) -> np.ndarray:
        if s is not None:
            raise TypeError("svm fits are not penalty paths; s= is not used")
        if kw:
            raise TypeError(f"unexpected arguments for svm probabilities: {sorted(kw)}")
        method = self.prob_method if method is None else method
        if method == "platt_tuned":
            best = self.platt_tuned().best_fit
            return best.platt(best._decision(X))
        if method not in _METHODS:
            raise ValueError(f"method must be one of {_METHODS}; got {method!r}")
        if method == "bracket":
            return bracket_prob(self._path_decision(X, m), m=(self.m if m is None else m))
        f = self._decision(X)
        if method == "platt":
            return self.platt(f)
        if method == "sollich":
            return sollich_prob(f)
        return coherence_prob(f, self.rho_, 1.0)

    def _refit_args(self) -> dict:
        """Arguments that refit this model (same kernel, weights, pi, m) at another lambda."""
        kern = self.kernel
        args = dict(self._fit_args)
        if kern.code == KERNEL_CALLABLE:
            args["kernel"] = kern.func
        else:
            args["kernel"] = kern.name
            if kern.name != "linear":
                args["gamma"] = float(kern.kpar[0])
            if kern.name == "poly":
                args["coef0"] = float(kern.kpar[1])
                args["degree"] = int(kern.kpar[2])
        args["pi"] = 0.5 if isinstance(self.pi, str) else self.pi
        args["m"] = self.m
        return args

    def platt_tuned(self, grid=None, *, D: int | None = None, tau: float = 0.5,
                    random_state=0, n_jobs: int | None = None, refresh: bool = False):
        """Tuned Platt ([WSL] section 5): lambda re-chosen by the GKL estimate of Platt's probabilities.

        [WSL]'s "tuned Platt" fits Platt's sigmoid to an SVM whose ``lambda`` minimises the
        data-perturbation estimate of the generalised KL loss (eq. 9-14) *of the Platt
        probabilities*, instead of the cross-validated classification error. This refits the
        model (same kernel and kernel width, weights, ``pi``) at every ``lambda`` of ``grid``
        for each of the ``D`` perturbed data sets, so it costs ``len(grid) * (D + 1)`` fits; the
        result is cached on the fit, and ``predict(type="prob", method="platt_tuned")`` uses it
        (calling this with the defaults on first use).

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
        res = tune(self._fit_fn, self.design, grid={"lambda_": grid}, method="gkl", D=D, tau=tau,
                   prob_args={"method": "platt"}, random_state=random_state, n_jobs=n_jobs,
                   verbose=False, **self._refit_args())
        self._platt_tuned = res
        return res

    @property
    def platt(self):
        """Platt sigmoid fitted to the training decision values (SPEC 2.3, D38)."""
        if "_platt" not in self.__dict__:
            self._platt = platt_fit(self.fitted_decision, self.design.y)
        return self._platt

    @property
    def rho_(self) -> float:
        """Coherence temperature minimising the training EKL ([ZDJ] eq. 13, D9)."""
        if "_rho" not in self.__dict__:
            self._rho = coherence_rho(self.fitted_decision, self.design.y, u=1.0)
        return self._rho

    # ------------------------------------------------------------------ reporting
    def _summary(self) -> Summary:
        y = self.design.y
        a = self.alpha
        free = (a > 1e-12 * np.maximum(self.cost, 1)) & (a < self.cost * (1 - 1e-12))
        info = {
            "call": self.call_string(),
            "kernel": self.kernel.describe(),
            "lambda": self.lambda_,
            "C = 1/(n lambda)": 1.0 / (self.nobs * self.lambda_),
            "pi": self.pi,
            "observations": self.nobs,
            "support vectors": int(self.support.size),
            "free support vectors": int(np.sum(free)),
            "dual objective": self.objective,
            ("pi-path events" if isinstance(self.pi, str) and getattr(self, "path_method", "")
             == "exact" else "iterations"): self.n_iter,
            "converged": self.converged,
            "training error": float(np.mean((self.fitted_decision > 0) != (y > 0))),
        }
        tables = {}
        sv = pd.DataFrame({"class": self.classes,
                           "n": [int(np.sum(y < 0)), int(np.sum(y > 0))],
                           "support vectors": [int(np.sum((a > 0) & (y < 0))), int(np.sum((a > 0) & (y > 0)))],
                           "at bound": [int(np.sum((a >= self.cost) & (self.cost > 0) & (y < 0))),
                                        int(np.sum((a >= self.cost) & (self.cost > 0) & (y > 0)))]})
        tables["Support vectors by class"] = sv
        if self._coef is not None:
            tables["Coefficients"] = pd.DataFrame(
                {"estimate": np.concatenate([[self._intercept], self._coef])},
                index=["(Intercept)"] + self.xnames)
        notes = [f"f(x) > 0 predicts {self.classes[1]!r} (SPEC D1, D39)."]
        return Summary(self.title, info, tables, notes)

    def _repr_extra(self) -> str:
        return f"{self.kernel.describe()}, lambda={self.lambda_:.4g}, pi={self.pi}, SV={self.support.size}"

    def path(self, m: int | None = None) -> PathFrame:
        """Coefficients along the bracketing grid in pi (the exact solution path, SPEC 4.6).

        Linear kernel: intercept and slopes; other kernels: intercept and the expansion
        coefficients ``beta_i`` (columns ``"beta[i]"``).
        """
        grid, B, b0 = self._grid_fits(m)
        data = {"pi": grid, "(Intercept)": b0}
        if self.kernel.code == KERNEL_LINEAR:
            W = B @ self.design.X
            cols = list(self.xnames)
            for k, c in enumerate(cols):
                data[c] = W[:, k]
        else:
            cols = [f"beta[{i}]" for i in range(self.nobs)]
            for i, c in enumerate(cols):
                data[c] = B[:, i]
        return PathFrame.build(pd.DataFrame(data), xvar="pi", coef_columns=["(Intercept)"] + cols,
                               log_x=False)

    def plot(self, *args, **kwargs):
        """The pi path of the coefficients ([WSL] Figure 1) for ``pi="path"`` fits."""
        return self.path().plot(*args, **kwargs)


def _prepare(formula, data, ctx, *, kernel, C, lambda_, pi, m, sigma, gamma, degree, coef0,
             weights, subset, tol, prob_method, na_action, allow_path):
    """Validate the arguments shared by :func:`svm` and :func:`psi_learn`; build design and kernel."""
    design = formula if isinstance(formula, Design) else build_design(
        formula, data, weights=weights, subset=subset, na_action=na_action, context=ctx, max_classes=2)
    if isinstance(formula, Design):
        if weights is not None or subset is not None:
            design = build_design(design, weights=weights, subset=subset, max_classes=2)
    if not design.binary:
        raise ValueError(f"svm needs a response with two classes; got {design.n_classes}")
    if not design.intercept:
        raise ValueError("svm always fits an unpenalised intercept; remove '- 1' / '+ 0' from the formula")
    n = design.nobs
    y = design.y
    if np.all(y > 0) or np.all(y < 0):
        raise ValueError("svm needs both classes in the training data")
    if C is not None and lambda_ is not None:
        raise ValueError("give C or lambda_, not both (C = 1/(n lambda_))")
    if lambda_ is not None:
        if np.ndim(lambda_) != 0:
            raise ValueError("svm takes a single lambda_ (tune a grid with cohstats.tune)")
        lam = _check_pos("lambda_", lambda_)
    else:
        lam = 1.0 / (n * _check_pos("C", 1.0 if C is None else C))
    path = isinstance(pi, str)
    if path and pi != "path":
        raise ValueError(f"pi must be a number in [0, 1], None, or 'path'; got {pi!r}")
    if not path and pi is not None:
        if isinstance(pi, bool) or not isinstance(pi, (int, float, np.integer, np.floating)) \
                or not (0.0 <= pi <= 1.0):
            raise ValueError(f"pi must be a number in [0, 1], None, or 'path'; got {pi!r}")
        pi = float(pi)
    if m is None:
        m = max(2, int(math.floor(math.sqrt(n))))
    elif not (isinstance(m, (int, np.integer)) and not isinstance(m, bool) and m >= 2):
        raise ValueError(f"m (the bracketing grid size) must be an integer >= 2; got {m!r}")
    if prob_method is None:
        prob_method = "bracket" if path else "platt"
    elif prob_method not in _METHODS:
        raise ValueError(f"prob_method must be one of {_METHODS}; got {prob_method!r}")
    tol = _check_pos("tol", tol)
    kern = make_kernel(kernel, design.X, y, sigma=sigma, gamma=gamma, degree=degree,
                       coef0=coef0, width="median_between")
    if path and not allow_path:
        raise ValueError("pi='path' is the exact path of the weighted SVM; psi-learning is "
                         "fitted at each pi of the bracketing grid (give a number for pi)")
    return design, lam, pi, path, m, prob_method, tol, kern


def svm(formula, data=None, *, kernel="rbf", C=None, lambda_=None, pi=0.5, m=None, sigma=None,
        gamma=None, degree: int = 3, coef0: float = 1.0, weights=None, subset=None,
        tol: float = 1e-3, cache_size: float = 200.0, shrinking: bool = True,
        max_iter: int | None = None, prob_method: str | None = None,
        path_method: str = "auto", n_jobs: int | None = None, na_action: str = "omit") -> SVMFit:
    """Weighted binary SVM (SPEC 2.1, 4.1) fitted by SMO, with probability outputs.

    Parameters
    ----------
    formula : str, Design or array
        ``"y ~ x1 + x2"`` with ``data``; a :class:`~cohstats.formula.Design`; or a matrix with
        labels in ``data``. The response must have two classes; the second is ``+1`` (D39).
    data : DataFrame (or labels for matrix input).
    kernel : ``"rbf"`` (default), ``"linear"``, ``"poly"``, or a callable ``k(X, Z)``.
    C, lambda_ : cost or penalty, ``C = 1/(n lambda)`` (give one; default ``C = 1``). The
        per-observation costs are ``C_i = C w_i S_pi(y_i)`` (SPEC D37).
    pi : class weight in ``[0, 1]`` (``S(+1) = 1 - pi``, ``S(-1) = pi``); ``None`` for the
        unweighted SVM (``S = 1``: libsvm's C-SVM); ``"path"`` to follow the exact pi path over
        the bracketing grid ``(j - 1)/m`` (the decision function is then the one at
        ``pi = 1/2``, read off the path: exact, and ``n_iter`` counts the path's events).
        ``SVC(C=C, class_weight={+1: 1 - pi, -1: pi})`` of scikit-learn solves the same problem
        as ``svm(..., C=C, pi=pi)``.
    m : bracketing grid size (default ``floor(sqrt(n))``, [WSL]).
    sigma, gamma : Gaussian width, ``exp(-||x - x'||^2 / sigma^2)``; or libsvm's ``gamma``.
        Default ``sigma = median_between`` (median distance between the classes, SPEC 0.4).
    degree, coef0 : polynomial kernel.
    weights : observation weights ``w_i`` (array or column name).
    subset, na_action : as :func:`cohstats.formula.build_design`.
    tol : SMO stopping tolerance on the maximal KKT violation (libsvm's ``eps``, 1e-3).
    cache_size : kernel-row cache in megabytes.
    shrinking : libsvm's shrinking heuristic.
    max_iter : SMO iteration cap (default ``max(1e7, 100 n)``).
    prob_method : default of ``predict(type="prob", method=)``: ``"bracket"`` for
        ``pi="path"``, else ``"platt"``.
    path_method : how the weighted SVMs of the bracketing grid are obtained: ``"exact"`` (the
        exact pi path, SPEC 4.6; cost ``O(n |elbow|)`` per event, about ``1.6 n`` events),
        ``"warm"`` (SMO at each grid value warm-started from its neighbour, accurate to
        ``tol``: 2x faster at n = 100, 4x at n = 1000 in ``benchmarks/bench_svm.py``) or
        ``"auto"`` (default: exact up to n = 2000, warm above, where the exact path's cost
        grows as ``n^2 |elbow|``).
    n_jobs : threads for the bracketing grid: 2 (or -1) computes its lower and upper halves
        concurrently (1.4x faster at n = 1000; the halves and the label-flip symmetry are
        described in :func:`cohstats.solvers.svmpath.pi_path`). Default one thread.

    Returns
    -------
    SVMFit

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from cohstats.models.svm import svm
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame(rng.normal(size=(80, 2)), columns=["x1", "x2"])
    >>> df["y"] = np.where(df.x1 + 0.5 * rng.normal(size=80) > 0, "yes", "no")
    >>> fit = svm("y ~ x1 + x2", df, kernel="linear", lambda_=0.05)
    >>> fit.predict(df.head(3), type="prob", method="bracket").shape
    (3, 2)
    """
    ctx = capture_context(1) if isinstance(formula, str) else None
    design, lam, pi, path, m, prob_method, tol, kern = _prepare(
        formula, data, ctx, kernel=kernel, C=C, lambda_=lambda_, pi=pi, m=m, sigma=sigma,
        gamma=gamma, degree=degree, coef0=coef0, weights=weights, subset=subset, tol=tol,
        prob_method=prob_method, na_action=na_action, allow_path=True)
    n, y = design.nobs, design.y
    if path_method not in ("exact", "warm", "auto"):
        raise ValueError(f"path_method must be 'exact', 'warm' or 'auto'; got {path_method!r}")
    from cohstats.solvers.svmpath import _n_threads
    _n_threads(n_jobs)                                    # validate before any work
    if path_method == "auto":
        path_method = "exact" if n <= 2000 else "warm"
    pi_fit = 0.5 if path else pi
    cost = design.weights * class_weights(y, pi_fit) / (n * lam)
    Kpre = kern(design.X) if kern.code == KERNEL_CALLABLE else None
    call = {"kernel": kernel if isinstance(kernel, str) else "callable", "lambda_": lam, "pi": pi}
    fit = SVMFit(design, call)
    fit.kernel = kern
    fit.lambda_ = lam
    fit.pi = pi
    fit.m = int(m)
    fit.cost = cost
    if path and path_method == "exact":
        # the decision function at pi = 1/2 is read off the exact path (pi = 1/2 is added to
        # the grid when m is odd): exact, and one SMO solve (the path's start) instead of two
        grid = bracket_grid(int(m))
        ext = np.union1d(grid, [0.5])
        res = pi_path(design.X, y, code=kern.code, kpar=kern.kpar, Kpre=Kpre, nlam=n * lam,
                      grid=ext, weights=design.weights, cache_size=cache_size, n_jobs=n_jobs)
        g = int(np.flatnonzero(ext == 0.5)[0])
        a = np.clip(res.A[g] / (n * lam), 0.0, cost)
        b = float(res.A0[g] / (n * lam))
        if ext.size > grid.size:
            res = res._replace(grid=grid, A=np.delete(res.A, g, axis=0), A0=np.delete(res.A0, g))
        fit.__dict__["_paths"] = {int(m): res}
        n_iter, converged = int(res.n_events), True
    else:
        r = smo_solve(design.X, y, code=kern.code, kpar=kern.kpar, Kpre=Kpre, C=cost, tol=tol,
                      max_iter=max_iter, shrinking=shrinking, cache_size=cache_size)
        if not r.converged:
            warnings.warn(f"svm: SMO stopped after {r.n_iter} iterations with KKT violation above "
                          f"tol={tol}; increase max_iter or tol", ConvergenceWarning, stacklevel=2)
        a, b, n_iter, converged = r.a, float(r.b), r.n_iter, r.converged
    fit.alpha = a
    fit.dual_coef = a * y
    fit.support = np.flatnonzero(a > 0)
    fit._intercept = b
    fit.n_iter = n_iter
    fit.converged = converged
    fit.prob_method = prob_method
    fit._cache_size = float(cache_size)
    fit.path_method = path_method
    fit.n_jobs = n_jobs
    fit._fit_fn = svm
    # (n_jobs is left out: refits run inside tune(), whose own n_jobs parallelises the fits)
    fit._fit_args = dict(tol=tol, cache_size=cache_size, shrinking=shrinking, max_iter=max_iter,
                         path_method=path_method)
    fit._coef = (fit.dual_coef @ design.X) if kern.code == KERNEL_LINEAR else None
    if path and path_method == "exact":
        fit.fitted_decision = fit._decision(design.X) if Kpre is None else Kpre @ fit.dual_coef + b
    else:
        fit.fitted_decision = y * (r.G + 1.0) + r.b
    # dual objective (1/2) a'Qa - sum(a), with (Qa)_i = y_i (f_i - b)
    fit.objective = float(0.5 * a @ (y * (fit.fitted_decision - b)) - a.sum())
    if path:
        fit._get_path(fit.m)
    return fit


class PsiFit(SVMFit):
    """A fitted psi-learning classifier ([WSL] 4.3, SPEC D16); see :func:`psi_learn`.

    Bracketing probabilities refit psi-learning at every interior grid value ``pi_j = j/m``
    (there is no exact path for the non-convex psi loss).
    """

    method = "psi_learn"
    title = "Weighted psi-learning (DC programming)"

    def _grid_fits(self, m: int | None):
        m = self._check_m(m)
        cache = self.__dict__.setdefault("_psi_grid", {})
        if m not in cache:
            from cohstats.solvers.psi import psi_dc
            grid = bracket_grid(m)
            y = self.design.y
            B = np.empty((grid.size, self.nobs))
            b0 = np.empty(grid.size)
            for j, pj in enumerate(grid):
                cw = self.design.weights * class_weights(y, pj)
                r = psi_dc(self.design.X, y, kernel=self.kernel, lam=self.lambda_, cw=cw,
                           tol=self._tol, max_dc=self._max_dc, cache_size=self._cache_size)
                B[j] = r.theta * y
                b0[j] = r.b
            cache[m] = (grid, B, b0)
        return cache[m]

    def _summary(self) -> Summary:
        sm = super()._summary()
        sm.info["psi objective"] = self.psi_objective
        sm.info["DC iterations"] = self.n_dc
        sm.info.pop("dual objective", None)
        return sm


def psi_learn(formula, data=None, *, kernel="rbf", C=None, lambda_=None, pi=0.5, m=None,
              sigma=None, gamma=None, degree: int = 3, coef0: float = 1.0, weights=None,
              subset=None, tol: float = 1e-3, max_dc: int = 50, cache_size: float = 200.0,
              max_iter: int | None = None, prob_method: str | None = None,
              na_action: str = "omit") -> PsiFit:
    """Weighted psi-learning ([WSL] eq. 3 with the psi loss) by DC programming (SPEC 4.3, D16).

    Minimises ``(1/n) sum_i w_i S_pi(y_i) psi(y_i f(x_i)) + (lambda/2) ||h||_K^2`` with
    ``psi(z) = 2`` (z < 0), ``2 (1 - z)`` (0 <= z < 1), ``0`` (z >= 1). Each DC step solves the
    SVM dual with shifted bounds by SMO, starting from the weighted SVM at the same
    ``(pi, lambda)``; the iterate with the smallest psi objective is returned (a local solution:
    the problem is non-convex).

    Parameters are those of :func:`~cohstats.models.svm.svm` (``pi`` must be a number or None),
    plus ``max_dc`` (DC iterations). Probabilities: ``"platt"`` (default), ``"sollich"``,
    ``"coherence"``, ``"bracket"`` (psi-learning refitted on the grid ``j/m``).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame(rng.normal(size=(60, 2)), columns=["x1", "x2"])
    >>> df["y"] = np.where(df.x1 + 0.4 * rng.normal(size=60) > 0, 1, -1)
    >>> fit = psi_learn("y ~ x1 + x2", df, kernel="linear", lambda_=0.05)
    >>> bool(fit.psi_objective <= fit.history[0])
    True
    """
    from cohstats.solvers.psi import psi_dc
    ctx = capture_context(1) if isinstance(formula, str) else None
    design, lam, pi, path, m, prob_method, tol, kern = _prepare(
        formula, data, ctx, kernel=kernel, C=C, lambda_=lambda_, pi=pi, m=m, sigma=sigma,
        gamma=gamma, degree=degree, coef0=coef0, weights=weights, subset=subset, tol=tol,
        prob_method=prob_method, na_action=na_action, allow_path=False)
    if isinstance(max_dc, bool) or not isinstance(max_dc, (int, np.integer)) or max_dc < 1:
        raise ValueError(f"max_dc must be a positive integer; got {max_dc!r}")
    y = design.y
    cw = design.weights * class_weights(y, pi)
    r = psi_dc(design.X, y, kernel=kern, lam=lam, cw=cw, tol=tol, max_dc=int(max_dc),
               cache_size=cache_size, max_iter=max_iter)
    if not r.converged:
        warnings.warn(f"psi_learn: the DC iteration stopped after {r.n_dc} steps without a "
                      "repeated sign pattern or a relative decrease below 1e-6; increase max_dc",
                      ConvergenceWarning, stacklevel=2)
    call = {"kernel": kernel if isinstance(kernel, str) else "callable", "lambda_": lam, "pi": pi}
    fit = PsiFit(design, call)
    fit.kernel = kern
    fit.lambda_ = lam
    fit.pi = pi
    fit.m = int(m)
    fit.cost = 2.0 * cw / (design.nobs * lam)
    fit.alpha = r.theta
    fit.dual_coef = r.theta * y
    fit.support = np.flatnonzero(r.theta != 0)
    fit._intercept = float(r.b)
    fit.objective = float("nan")
    fit.psi_objective = r.objective
    fit.history = r.history
    fit.n_dc = r.n_dc
    fit.n_iter = r.n_dc
    fit.converged = r.converged
    fit.prob_method = prob_method
    fit._cache_size = float(cache_size)
    fit._tol = tol
    fit._max_dc = int(max_dc)
    fit._fit_fn = psi_learn
    fit._fit_args = dict(tol=tol, max_dc=int(max_dc), cache_size=cache_size, max_iter=max_iter)
    fit.fitted_decision = r.fitted
    fit._coef = (fit.dual_coef @ design.X) if kern.code == KERNEL_LINEAR else None
    return fit
