"""The C-SVM on a low-rank kernel feature map: :func:`cohstats.svm` with ``kernel_approx=``.

The kernel ``k`` is replaced by the inner products of a seeded feature map
``Phi: R^p -> R^r`` (Nystroem landmarks or random Fourier features, :mod:`cohstats.kernel_approx`),
and libsvm's C-SVM

    minimise  (1/2) ||w||^2 + sum_i C_i [1 - y_i (w'Phi(z_i) + b)]_+,    C_i = C w_i S_pi(y_i),

is solved in the primal feature space by dual coordinate descent
(:mod:`cohstats.solvers.svm.linear`; Hsieh et al. 2008, with the intercept unpenalised as in
libsvm). With ``Phi Phi' = K`` (Nystroem with every training row a landmark) the problem *is*
the kernel C-SVM; with ``r < n`` it is the C-SVM with the approximate kernel
``Phi(x)'Phi(x')``. Memory is ``O(n r)`` (the mapped training rows, during the fit) instead of
libsvm's kernel cache, and one epoch costs ``O(n r)``. For K > 2 classes one map, fitted on all
training rows, serves the one-vs-one pairs (:class:`ApproxMulticlassSVMFit`).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from cohstats.exceptions import ConvergenceWarning
from cohstats.kernels import KERNEL_LINEAR
from cohstats.models.svm_fit import _default_m, _ovo_fields, _pair_design, _run_settings
from cohstats.models.svm_multi import MulticlassSVMFit
from cohstats.models.svm_result import SVMFit, class_weights
from cohstats.probability import bracket_grid
from cohstats.results import PathFrame
from cohstats.solvers.svm.linear import linear_svm_dcd

__all__ = ["ApproxSVMFit", "ApproxMulticlassSVMFit", "fit_approx"]

_BLOCK = 8192  # rows mapped at a time when predicting: memory O(block x r)


class _FeatureMapFit:
    """What the low-rank results add to their exact-kernel bases: refits redraw the same feature
    map (its settings in ``_approx``) and the summary names the map instead of the kernel."""

    _approx_note = "kernel replaced by a low-rank feature map (kernel_approx)"

    def _refit_args(self) -> dict:
        args = super()._refit_args()
        args.update(self._approx)
        return args

    def _summary_head(self):
        info, notes = super()._summary_head()
        info["kernel"] = self.feature_map.describe()
        notes.append(self._approx_note)
        return info, notes


class ApproxSVMFit(_FeatureMapFit, SVMFit):
    """A binary C-SVM fitted on a low-rank kernel feature map; see :func:`cohstats.svm`.

    The attributes of :class:`cohstats.models.svm.SVMFit`, where the kernel is the approximate
    kernel ``Phi(x)'Phi(x')``: ``dual_alpha_`` and ``dual_coef`` are the multipliers of the
    C-SVM on the mapped rows (so ``f(x) = sum_i beta_i Phi(z_i)'Phi(z) + b``), ``coef`` is None
    (no input-space coefficients). In addition:

    feature_map : the fitted :class:`cohstats.kernel_approx.FeatureMap` (applied to the
        standardised inputs).
    feature_coef : (r,) the weights ``w`` of the features, ``f(x) = Phi(z)'w + b``.
    """

    title = "Support vector machine (low-rank kernel approximation)"
    _approx_note = (
        "kernel replaced by a low-rank feature map (kernel_approx); the C-SVM is solved on the "
        "mapped rows by dual coordinate descent"
    )

    @classmethod
    def _from_arrays(cls, design, *, feature_map, feature_coef, kernel_approx, n_components, random_state, **svm_state):
        """Build the fit: the state of :meth:`SVMFit._from_arrays` plus the feature map, the
        feature weights ``w`` and the settings that redraw the map in refits."""
        self = super()._from_arrays(design, **svm_state)
        self.feature_map = feature_map
        self.feature_coef = np.asarray(feature_coef, dtype=np.float64)
        self._approx = dict(kernel_approx=kernel_approx, n_components=int(n_components), random_state=random_state)
        return self

    # ------------------------------------------------------------------ prediction
    def _decision(self, X: np.ndarray, s=None) -> np.ndarray:
        if s is not None:
            self._check_s(s, "_decision")
        Z = self._std(X)
        out = np.empty(Z.shape[0])
        for lo in range(0, Z.shape[0], _BLOCK):
            out[lo : lo + _BLOCK] = self.feature_map(Z[lo : lo + _BLOCK]) @ self.feature_coef + self._b
        return out

    def _grid_fits(self, m: int | None):
        """(grid, W, b): feature weights ``W[j]`` (r,) and intercepts ``b[j]`` of the weighted
        C-SVMs at the interior bracketing grid ``pi_j = j/m``, each solved by dual coordinate
        descent warm-started from its neighbour (outward from ``pi = 1/2``)."""
        m = self._check_m(m)
        cache = self.__dict__.setdefault("_paths", {})
        if m not in cache:
            grid = bracket_grid(m)
            y = self.design.y
            Phi = self.feature_map(self._Z)
            fa = self._fit_args
            W = np.empty((grid.size, Phi.shape[1]))
            b0 = np.empty(grid.size)
            conv = True
            mid = int(np.searchsorted(grid, 0.5))
            for order in (range(mid, grid.size), range(mid - 1, -1, -1)):
                a0, bb = self.dual_alpha_, self._b
                for j in order:
                    cost = self.design.weights * class_weights(y, grid[j]) * self.C
                    r = linear_svm_dcd(
                        Phi,
                        y,
                        cost,
                        tol=fa["tol"],
                        max_epochs=fa["max_iter"],
                        shrinking=fa["shrinking"],
                        random_state=self._approx["random_state"],
                        a0=a0,
                        b0=bb,
                    )
                    W[j], b0[j] = r.coef, r.intercept
                    a0, bb = r.dual, r.intercept
                    conv = conv and r.converged
            if not conv:
                warnings.warn(
                    "svm: coordinate descent stopped before tol at some bracketing grid values; "
                    "increase max_iter or tol",
                    ConvergenceWarning,
                    stacklevel=3,
                )
            cache[m] = (grid, W, b0)
        return cache[m]

    def _path_decision(self, X: np.ndarray, m: int | None) -> np.ndarray:
        _, W, b0 = self._grid_fits(m)
        Z = self._std(X)
        out = np.empty((W.shape[0], Z.shape[0]))
        for lo in range(0, Z.shape[0], _BLOCK):
            out[:, lo : lo + _BLOCK] = W @ self.feature_map(Z[lo : lo + _BLOCK]).T + b0[:, None]
        return out

    def _get_path(self, m: int | None):
        raise ValueError(
            "a kernel_approx svm has no exact pi path; the bracketing grid is solved value by value "
            "(predict(type='prob', method='bracket') and path() use it)"
        )

    def path(self, m: int | None = None) -> PathFrame:
        """Intercept and feature weights (columns ``"phi[j]"``) along the bracketing grid in pi."""
        grid, W, b0 = self._grid_fits(m)
        data = {"pi": grid, "(Intercept)": b0}
        cols = [f"phi[{j}]" for j in range(W.shape[1])]
        for j, c in enumerate(cols):
            data[c] = W[:, j]
        return PathFrame.build(pd.DataFrame(data), xvar="pi", coef_columns=["(Intercept)"] + cols, log_x=False)

    def _repr_extra(self) -> str:
        return f"{self.feature_map.describe()}, lambda_={float(self.lambda_[0]):.4g}, pi={self.pi}"


class ApproxMulticlassSVMFit(_FeatureMapFit, MulticlassSVMFit):
    """A one-vs-one SVM for K > 2 classes on a low-rank kernel feature map; see :func:`cohstats.svm`.

    One feature map (fitted on all training rows) serves every pair; each pair's C-SVM is
    solved on the mapped rows of its two classes (pair fits are
    :class:`ApproxSVMFit`). ``feature_coef`` is (r, pairs): the decision value of pair
    ``(a, b)`` is ``Phi(z)'W[:, k] + intercept[k]``, positive favouring ``a``.
    """

    title = "Support vector machine (one-vs-one, low-rank kernel approximation)"
    _approx_note = "kernel replaced by a low-rank feature map (kernel_approx), shared by the pairs"

    @classmethod
    def _from_arrays(cls, design, *, feature_map, feature_coef, approx, **state) -> "ApproxMulticlassSVMFit":
        """The state of :meth:`MulticlassSVMFit._from_arrays` plus the shared feature map, the
        (r, pairs) feature weights and the settings that redraw the map in refits."""
        self = super()._from_arrays(design, **state)
        self.feature_map = feature_map
        self.feature_coef = np.asarray(feature_coef, dtype=np.float64)
        self._approx = dict(approx)
        return self

    def _decision(self, X: np.ndarray, s=None) -> np.ndarray:
        if s is not None:
            self._check_s(s, "_decision")
        Z = self._std(X)
        out = np.empty((Z.shape[0], self.feature_coef.shape[1]))
        for lo in range(0, Z.shape[0], _BLOCK):
            out[lo : lo + _BLOCK] = self.feature_map(Z[lo : lo + _BLOCK]) @ self.feature_coef + self._bpair
        return out

    def _repr_extra(self) -> str:
        return f"{self.feature_map.describe()}, lambda_={float(self.lambda_[0]):.4g}, {len(self.pairs)} pairs"


def _binary(
    design,
    Z,
    xc,
    xs,
    kern,
    fmap,
    Phi,
    *,
    fit_fn,
    approx,
    Cval,
    pi,
    path,
    m,
    prob_method,
    tol,
    cache_size,
    shrinking,
    max_iter,
    n_jobs,
    standardize,
    call,
    kernel_arg,
    warn=True,
    rows=None,
) -> ApproxSVMFit:
    """The binary (weighted) C-SVM on the mapped rows ``Phi = fmap(Z)``."""
    n, y = design.nobs, design.y
    pi_fit = 0.5 if path else pi
    cost = design.weights * class_weights(y, pi_fit) * Cval
    if float(np.max(cost)) * n * np.finfo(float).eps > tol:  # the dual gradients lose all digits
        raise ValueError(
            f"svm: the largest cost C * weights is {float(np.max(cost)):.3g}, too large to solve the "
            f"dual to tol={tol:g} in double precision; rescale weights (they multiply C) or lower C"
        )
    r = linear_svm_dcd(
        Phi, y, cost, tol=tol, max_epochs=max_iter, shrinking=shrinking, random_state=approx["random_state"]
    )
    if warn and not r.converged:
        warnings.warn(
            f"svm: coordinate descent stopped after {r.n_iter} epochs with the projected-gradient gap "
            f"{r.info['gap']:.3g} or the intercept change above tol={tol}; increase max_iter or tol",
            ConvergenceWarning,
            stacklevel=4,
        )
    fit = ApproxSVMFit._from_arrays(
        design,
        feature_map=fmap,
        feature_coef=r.coef,
        **approx,
        kernel=kern,
        kernel_arg=kernel_arg,
        C=float(Cval),
        lambda_=np.array([1.0 / (n * Cval)]),
        pi=pi,
        m=_default_m(n) if m is None else int(m),
        cost=cost,
        standardize=standardize,
        Z=Z,
        scaling=(xc, xs),
        dual_alpha=r.dual,
        support=np.flatnonzero(r.dual > 0),
        b=float(r.intercept),
        n_iter=int(r.n_iter),
        converged=bool(r.converged),
        fitted_decision=r.info["fitted"],
        objective=float(r.objective),
        rows=rows,
        call=call,
        **_run_settings(fit_fn, prob_method, cache_size, "warm", n_jobs, tol, shrinking, max_iter),
    )
    return fit


def fit_approx(
    design,
    Z,
    xc,
    xs,
    kern,
    *,
    fit_fn,
    kernel_approx,
    n_components,
    random_state,
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
    """The (weighted) C-SVM on the feature map of ``kern`` fitted on ``Z`` (the standardised
    inputs): binary, or one-vs-one for K > 2 classes with one map shared by the pairs; the
    arguments are :func:`cohstats.svm`'s."""
    from cohstats.kernel_approx import feature_map

    if kern.code == KERNEL_LINEAR:
        raise ValueError(
            "svm: kernel_approx approximates a nonlinear kernel; the linear SVM (kernel=None or "
            "'linear') needs no approximation -- drop kernel_approx or give kernel='rbf'"
        )
    if max_iter is None:
        max_iter = 10_000
    fmap = feature_map(kernel_approx, kern, Z, n_components=n_components, random_state=random_state)
    Phi = fmap(Z)
    approx = dict(kernel_approx=kernel_approx, n_components=int(n_components), random_state=random_state)
    call = {**call, "kernel_approx": kernel_approx, "n_components": int(n_components)}
    common = dict(
        fit_fn=fit_fn,
        approx=approx,
        Cval=Cval,
        pi=pi,
        path=path,
        m=m,
        prob_method=prob_method,
        tol=tol,
        cache_size=cache_size,
        shrinking=shrinking,
        max_iter=max_iter,
        n_jobs=n_jobs,
        call=call,
        kernel_arg=kernel_arg,
    )
    if design.binary:
        return _binary(design, Z, xc, xs, kern, fmap, Phi, standardize=standardize, **common)
    n, K = design.nobs, design.n_classes
    yi = design.y_int
    fits, pairs, idx = [], [], []
    for i in range(K):
        for j in range(i + 1, K):
            rows = np.flatnonzero((yi == i) | (yi == j))
            dp = _pair_design(design, Z, rows, i, j)
            fits.append(
                _binary(
                    dp,
                    dp.X,
                    np.zeros(design.p),
                    np.ones(design.p),
                    kern,
                    fmap,
                    np.ascontiguousarray(Phi[rows]),
                    standardize=False,
                    warn=False,
                    rows=rows,
                    **common,
                )
            )
            pairs.append((design.classes[i], design.classes[j]))
            idx.append((i, j))
    del Phi
    bad = [f"{a} vs {b}" for (a, b), f in zip(pairs, fits) if not f.converged]
    if bad:
        warnings.warn(
            f"svm: coordinate descent stopped before tol={tol} for pair(s) {bad}; increase max_iter or tol",
            ConvergenceWarning,
            stacklevel=3,
        )
    P = len(fits)
    beta, alpha, cost = np.zeros((n, P)), np.zeros((n, P)), np.zeros((n, P))
    for k, f in enumerate(fits):
        beta[f._rows, k] = -f._beta
        alpha[f._rows, k] = f.dual_alpha_
        cost[f._rows, k] = f.cost
    return ApproxMulticlassSVMFit._from_arrays(
        design,
        feature_map=fmap,
        feature_coef=-np.column_stack([f.feature_coef for f in fits]),
        approx=approx,
        **_ovo_fields(kern, kernel_arg, Cval, n, pi, m, standardize, Z, (xc, xs), pairs, idx, fits),
        beta=beta,
        dual_alpha=alpha,
        cost=cost,
        support=np.flatnonzero(np.any(alpha > 0, axis=1)),
        bpair=np.array([-f._b for f in fits]),
        call=call,
        **_run_settings(fit_fn, prob_method, cache_size, "warm", n_jobs, tol, shrinking, max_iter),
    )
