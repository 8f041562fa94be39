"""The λ-SVM's result :class:`LamSVMFit` (:func:`cohstats.lamsvm`), its margin helpers and the
fitted path along ``C`` or ``margin``.

Documented, saved and loaded as ``cohstats.models.lamsvm.LamSVMFit`` (and ``_LamSVMPath``).
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np
import pandas as pd

import cohstats
from cohstats.exceptions import CalibrationWarning, ConvergenceWarning
from cohstats.kernels import KERNEL_LINEAR
from cohstats.losses.lamsvm import is_calibrated
from cohstats.results import Fit, PathFrame, Summary, interpolate_path
from cohstats.models.lamsvm_prob import PROB_METHODS, ProbCalibration, _fit_calibration, _full_F

#: the default, chosen by measurement (benchmarks/log.csv, lamsvm probabilities)
DEFAULT_PROB_METHOD = "multinomial"


def default_margin(n_classes: int) -> float:
    """The default positive margin: ``10 (K - 1)``.

    [RH] (section 5, Proposition 3, Figure 4) recommends margins well above ``K - 1``: they are
    classification calibrated (``> (K - 2)/2``), they stay clear of the band
    ``(K - 1 - T_kkt, K - 1 + T_kkt)`` where several KKT patterns coexist and SMO slows down, and
    training gets faster as the margin grows. Larger margins need a correspondingly larger
    ``C`` (with a moderate ``C`` the true-class multipliers saturate at ``C`` and accuracy
    drops), which the default ``C`` of :func:`lamsvm` provides: it grows with the margin (see
    :func:`margin_scale`). At equal cost and tolerance on libsvm's scale, ``10 (K - 1)`` needed
    about half the SMO visits of ``2 (K - 1)`` on Pendigits, Satimage and Optdigits with equal
    or lower test error; larger margins gained little more (``benchmarks/log.csv``).

    Examples
    --------
    >>> default_margin(3), default_margin(10)
    (20.0, 90.0)
    """
    return float(10 * (int(n_classes) - 1))


def margin_scale(n_classes: int, margin: float) -> float:
    """The factor ``s`` that puts the λ-SVM's cost and tolerance on libsvm's scale.

    A training point has zero λ-SVM loss exactly when ``f_y >= margin`` and ``f_j <= -1`` for
    ``j != y`` (with ``sum_j f_j = 0``). The smallest gap ``f_y - max_{j != y} f_j`` such a point
    can have is ``max(K - 1, margin) + 1`` for ``K >= 3`` (one other class at -1,
    ``f_y = max(K - 1, margin)``, the remaining classes absorb the sum) and ``2 max(margin, 1)``
    for ``K = 2`` (the other class is ``-f_y``); ``s`` is half of it,

        s = (max(K - 1, margin) + 1) / 2   (K >= 3),      s = max(margin, 1)   (K = 2),

    the counterpart of libsvm's ``y f >= 1`` (the gap between ``f`` and ``-f`` is 2). Scaling
    both margins by ``1/s`` turns the λ-SVM at cost ``C`` and KKT tolerance ``tol`` into the same
    problem, with decision values divided by ``s``, at cost ``C / s`` and tolerance ``tol / s``
    (substitute ``f = s g`` in the primal: ``1/2 ||f||^2 + C sum [l - y f]_+`` is ``s^2`` times
    ``1/2 ||g||^2 + (C / s) sum [l / s - y g]_+``). So ``C / s`` and ``tol / s`` are the cost and
    tolerance on libsvm's scale. For two classes and ``margin = 1`` (the bias-free binary SVM)
    ``s = 1``; for the default margin ``10 (K - 1)`` it is ``5 K - 4.5`` (10 for ``K = 2``).

    Examples
    --------
    >>> margin_scale(2, 1.0), margin_scale(10, 18.0), margin_scale(3, -5.0)
    (1.0, 9.5, 1.5)
    """
    K = int(n_classes)
    if K < 2:
        raise ValueError(f"margin_scale needs at least two classes; got n_classes={n_classes!r}")
    if K == 2:
        return max(float(margin), 1.0)
    return (max(K - 1.0, float(margin)) + 1.0) / 2.0


# ============================================================================ the fit
class _LamSVMPath(PathFrame):
    """Per-fit statistics along the fitted sequence; ``plot()`` draws coefficient paths for a
    linear kernel and the training error and support-point share otherwise."""

    @property
    def _constructor(self):
        return _LamSVMPath

    def plot(self, columns=None, ax=None, label=True, **kwargs):  # type: ignore[override]
        if columns is not None or list(getattr(self, "coef_columns", []) or []):
            return super().plot(columns=columns, ax=ax, label=label, **kwargs)
        ax = super().plot(columns=["train_error", "sv_share"], ax=ax, label=label, **kwargs)
        ax.set_ylabel("training error / share of support points")
        ax.set_title("lamsvm path")
        return ax


class LamSVMFit(Fit):
    """A fitted λ-SVM (see :func:`lamsvm`).

    Attributes
    ----------
    margin, C : the fitted values (arrays along a path over them).
    kernel : the resolved :class:`cohstats.kernels.Kernel` (acting on the standardised inputs
        when ``standardize=True``).
    gamma : the numeric kernel width used (None for linear and callable kernels).
    coef, intercept : input-space coefficients and intercepts (original scale) for the linear
        kernel; None for other kernels.
    support_ : int positions (training rows) of the support points (any multiplier > 0 at some
        value of the fitted sequence).
    dual_coef : DataFrame (support points by training-row label x classes) of
        ``btilde_ij = alpha_ij y_ij - mean_j``: ``f_j(x) = sum_i btilde_ij K(z_i, z)``.
    alpha_ : (n, K) multipliers of the fit at the selected value.
    steps : DataFrame of per-fit solver statistics (one row per value of the sequence).
    lambda_, path_var, s : the fitted sequence (values of ``C``, ``margin`` or ``lambda_``), its
        name and the selected value.
    converged, n_iter : all SMO runs met the KKT tolerance; total SMO iterations.
    """

    method = "lamsvm"
    title = "Lambda-SVM (multiclass hinge loss with variable positive margin)"
    #: the validated arguments of the call (:class:`cohstats.validation.Settings`); None for a
    #: fit read from a file saved before fits carried them
    settings = None
    _predict_options = ("method", "nfolds", "random_state")
    _PATH_VARS = ("lambda", "C", "margin")

    @classmethod
    def _from_arrays(
        cls,
        design,
        *,
        fitargs,
        kernel,
        gamma,
        standardize,
        scaling,
        path_var,
        lambda_,
        margin,
        C,
        support,
        Xsv,
        bt_path,
        alpha_path,
        Cb_path,
        steps,
        converged,
        n_iter,
        call,
    ) -> "LamSVMFit":
        """Build the result from the SMO runs along the sequence (every piece of state a keyword).

        ``path_var`` names the fitted sequence ``lambda_`` (``"lambda"``, ``"C"`` or
        ``"margin"``); ``margin`` and ``C`` are the fitted values (arrays along a path over
        them). ``support`` holds the training positions of the support points, ``Xsv`` their
        (standardised) inputs, ``bt_path`` (L, n_sv, K) their centred coefficients ``btilde``,
        ``alpha_path`` (L, n, K) and ``Cb_path`` (L, n) the multipliers and box bounds,
        ``steps`` the per-run solver statistics, ``scaling = (center, scale)`` the input
        standardisation. A linear kernel gets its input-space coefficient path here. ``s`` is
        the last value of the sequence.
        """
        if path_var not in cls._PATH_VARS:
            raise ValueError(f"LamSVMFit: path_var must be one of {cls._PATH_VARS}; got {path_var!r}")
        self = cls._blank(design, call)
        self._fitargs = fitargs
        self.kernel = kernel
        self.gamma = gamma
        self.standardize = standardize
        self._center, self._scale = scaling
        self.path_var = path_var
        self.path_arg = "lambda_" if path_var == "lambda" else path_var
        self.margin = margin
        self.C = C
        self.support_ = support
        self._Xsv = Xsv
        self._bt_path = bt_path
        self._alpha_path = alpha_path
        self._Cb_path = Cb_path
        self.steps = steps
        lam = self._checked_lambda(lambda_)
        if len(bt_path) != lam.size or len(steps) != lam.size:
            raise ValueError(
                f"LamSVMFit: bt_path and steps need one entry per lambda_ value "
                f"({lam.size}); got {len(bt_path)} and {len(steps)}"
            )
        self._coef_path = None
        coef = intercept = None
        if kernel.code == KERNEL_LINEAR:
            center, scale = scaling
            cp = np.einsum("ip,sik->spk", Xsv, bt_path) / scale[None, :, None]
            icp = -np.einsum("p,spk->sk", center, cp)
            binary = self.n_classes == 2
            self._coef_path = cp[:, :, 1] if binary else cp
            self._intercept_path = icp[:, 1] if binary else icp
            coef, intercept = self._coef_path[-1], self._intercept_path[-1]
        self._set_contract(
            lambda_=lam, s=float(lam[-1]), converged=converged, n_iter=n_iter, coef=coef, intercept=intercept
        )
        return self

    # ------------------------------------------------------------------ s handling
    @property
    def xvar(self) -> str:
        return self.path_var

    def _s_value(self, s):
        """The value of the path variable to evaluate at (``None``: the selected one); ``s`` was
        validated by :meth:`Fit._check_s` in ``predict``/``select``/``coef_at``."""
        if s is None:
            return float(self.s)
        lam = np.asarray(self.lambda_, dtype=float)
        return float(min(max(float(s), lam.min()), lam.max()))

    # ------------------------------------------------------------------ prediction
    def _btilde(self, s=None):
        s = self._s_value(s)
        if len(self.lambda_) == 1:
            return self._bt_path[0]
        return interpolate_path(self.lambda_, self._bt_path, s)

    def _Z(self, X):
        X = np.ascontiguousarray(X, dtype=np.float64)
        return np.ascontiguousarray((X - self._center) / self._scale)

    def _decision(self, X, s=None):
        bt = self._btilde(s)
        Kx = self.kernel(self._Z(X), self._Xsv)
        F = Kx @ bt
        if not np.all(np.isfinite(F)):
            raise ValueError(
                "lamsvm: non-finite decision values for these inputs (the kernel "
                "overflowed); check newdata for huge values or refit with "
                "standardize=True"
            )
        if self.n_classes == 2:
            return F[:, 1]
        return F

    def _classify(self, X, s=None, **kw):
        if kw:
            raise TypeError(f"predict(type='class') takes no options {sorted(kw)}")
        f = self._decision(X, s)
        if f.ndim == 1:
            return (f > 0).astype(np.int64)
        return np.argmax(f, axis=1)

    def calibration(self, method=None, s=None, nfolds=5, random_state=0) -> ProbCalibration:
        """The post-hoc probability calibration used by ``predict(type="prob")``.

        Decision values of every training row are computed by ``nfolds``-fold cross-validation
        (stratified folds from ``random_state``; each fold refits :func:`lamsvm` with the same
        arguments at the single value ``s`` of the path variable), and a calibration map from
        decision values to class probabilities is fitted to them:

        * ``"multinomial"``: multinomial logistic regression of the class on the decision values
          (the first ``K - 1`` of the sum-to-zero vector, with intercepts) with Platt's smoothed
          targets generalised to ``K`` classes (:func:`smoothed_targets`), so that the fit
          exists when the decision values separate the classes;
        * ``"coupling"``: as libsvm's ``-b 1``: one Platt sigmoid per class pair on the
          differences ``f_a - f_b`` of the rows of those two classes, coupled into ``K``
          probabilities by Wu, Lin & Weng's method 2 (:func:`couple_pairwise`).

        This is a calibration of the classifier, not an estimate from its loss: the λ-SVM
        loss is a hinge loss whose population minimiser identifies only ``argmax P`` ([RH]).
        Results are cached per ``(method, s, nfolds, random_state)``.
        """
        method = DEFAULT_PROB_METHOD if method is None else method
        if method not in PROB_METHODS:
            raise ValueError(f"method must be one of {PROB_METHODS}; got {method!r}")
        if isinstance(nfolds, bool) or not isinstance(nfolds, numbers.Integral) or nfolds < 2:
            raise ValueError(f"nfolds must be an integer >= 2; got {nfolds!r}")
        if random_state is not None and (
            isinstance(random_state, bool) or not isinstance(random_state, numbers.Integral)
        ):
            raise TypeError(f"random_state must be an int or None; got {random_state!r}")
        s = self._s_value(self._check_s(s, "calibration"))
        key = (method, s, int(nfolds), random_state)
        cache = self.__dict__.setdefault("_calib", {})
        if key in cache:
            return cache[key]
        F, foldid = self._cv_decision(s, int(nfolds), random_state)
        yk = np.asarray(self.design.y_int, dtype=np.int64)
        w = np.asarray(self.design.weights, dtype=float)
        coef, it, conv = _fit_calibration(method, F, yk, self.n_classes, w)
        if not conv:
            warnings.warn(
                "lamsvm: the multinomial calibration map did not converge (Newton "
                "stopped); its probabilities may be inaccurate: try method='coupling'",
                ConvergenceWarning,
                stacklevel=3,
            )
        cal = ProbCalibration(method, s, F, foldid, coef, self.n_classes, it, conv)
        cache[key] = cal
        return cal

    def _cv_decision(self, s, nfolds, random_state):
        dkey = (s, nfolds, random_state)
        dcache = self.__dict__.setdefault("_cvdec", {})
        if dkey in dcache:
            return dcache[dkey]
        from cohstats.tuning import make_folds

        d = self.design
        foldid = make_folds(d.y_int, nfolds, stratified=True, random_state=random_state)
        parg = {"lambda": "lambda_"}.get(self.path_var, self.path_var)
        if self.settings is not None:  # the fit's own settings at the value s
            args = {"_settings": self.settings.replace(**{parg: s, "warn_calibration": False})}
        else:  # a fit saved before fits carried their settings
            args = {**self._fitargs, parg: s, "warn_calibration": False}
        F = None
        for k in range(int(foldid.max()) + 1):
            tr, te = np.flatnonzero(foldid != k), np.flatnonzero(foldid == k)
            sub = d.take(tr)
            if len(np.unique(sub.y_int)) < self.n_classes:
                raise ValueError(
                    f"cross-validated probabilities need every class in every "
                    f"training fold; a class has too few rows for nfolds={nfolds}"
                )
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", CalibrationWarning)
                warnings.simplefilter("ignore", ConvergenceWarning)
                ff = cohstats.lamsvm(sub, **args)  # the public fit function
            Fk = ff._decision(d.X[te])
            if F is None:
                F = np.empty((d.nobs,) + Fk.shape[1:])
            F[te] = Fk
        dcache[dkey] = (F, foldid)
        return F, foldid

    def _proba(self, X, s=None, method=None, nfolds=5, random_state=0):
        cal = self.calibration(method=method, s=s, nfolds=nfolds, random_state=random_state)
        P = cal(self._decision(X, s))
        return P[:, 1] if self.n_classes == 2 else P

    @property
    def coef(self):
        """Input-space coefficients on the original scale (linear kernel), else None."""
        if getattr(self, "_coef_path", None) is None:
            return None
        return super().coef

    @property
    def intercept(self):
        if getattr(self, "_coef_path", None) is None:
            return None
        return super().intercept

    def _coef_at(self, s=None):
        cp = getattr(self, "_coef_path", None)
        if cp is None:
            return None, None
        s = self._s_value(s)
        if len(self.lambda_) == 1:
            return cp[0], self._intercept_path[0]
        return interpolate_path(self.lambda_, cp, s), interpolate_path(self.lambda_, self._intercept_path, s)

    @property
    def dual_coef(self) -> pd.DataFrame:
        idx = self.design.row_labels
        rows = self.support_ if idx is None else np.asarray(idx)[self.support_]
        return pd.DataFrame(self._btilde(), index=pd.Index(rows), columns=self.classes)

    # ------------------------------------------------------------------ reporting
    def _repr_extra(self) -> str:
        st = self._step()
        return f"margin={st['margin']:g}, C={st['C']:g}, {int(st['n_sv'])} SV"

    def _k(self) -> int:
        return int(np.argmin(np.abs(np.asarray(self.lambda_) - float(self.s))))

    def _step(self):
        return self.steps.iloc[self._k()]

    @property
    def alpha_(self) -> np.ndarray:
        """(n, K) dual multipliers of the fit nearest to the selected value ``s``."""
        return self._alpha_path[self._k()]

    def _summary(self) -> Summary:
        st = self._step()
        K = self.n_classes
        m = float(st["margin"])
        cal = is_calibrated(m, K)
        band = f"[0, {(K - 2) / 2:g}]"
        info = {
            "Call": self.call_string(),
            "observations": self.nobs,
            "Classes": K,
            "Kernel": self.kernel.describe(),
            "Standardized inputs": bool(self.standardize),
            "Path variable": self.path_var,
            "margin": m,
            "C (box bound)": float(st["C"]),
            "C on libsvm's scale (C / margin scale)": float(st["C"]) / margin_scale(K, m),
            "lambda_ (= 1/(n C))": 1.0 / (self.nobs * float(st["C"])),
            "Calibrated": cal,
            "Calibration domain": f"margin < 0 or margin > (K-2)/2 = {(K - 2) / 2:g} (open)",
            "Support points": int(st["n_sv"]),
            "Multipliers > 0": int(st["n_alpha"]),
            "Multipliers at C": int(st["n_at_C"]),
            "Iterations": int(st["n_iter"]),
            "Kernel rows computed": int(st["kernel_rows"]),
            "Training time (s)": float(st["time"]),
            "Status": st["status"],
            "Max KKT violation": float(st["max_violation"]),
            "T_kkt": float(st["tol"]),
            "T_kkt in libsvm's units (T_kkt / margin scale)": float(st["tol"]) / margin_scale(K, m),
            "Primal objective": float(st["primal"]),
            "Dual objective": float(st["dual"]),
            "Relative duality gap": float(st["gap"]),
            "Training error": float(st["train_error"]),
        }
        if self.gamma is not None:
            info["gamma"] = float(self.gamma)
        tables = {"Support vectors per class": self._sv_table()}
        if len(self.lambda_) > 1:
            tables["Path"] = self.steps.copy()
        notes = []
        if not cal:
            notes.append(
                f"margin = {m:g} lies in the uncalibrated band {band} for K = {K} "
                "classes ([RH] Theorem 2): the risk minimiser need not pick argmax P."
            )
        if not bool(st["converged"]):
            notes.append(
                f"SMO stopped ({st['status']}) before all KKT conditions held within "
                f"T_kkt; increase max_iter / time_limit or tol."
            )
        notes.append("Decision values sum to zero over classes (inhibition mu = 1/K).")
        notes.append(
            "Class probabilities (predict(type='prob')) are a post-hoc calibration of "
            "the classifier -- a map fitted to 5-fold cross-validated decision values "
            f"(default method '{DEFAULT_PROB_METHOD}'; 'coupling' as libsvm) -- not an "
            "estimate from the lambda-SVM loss, whose minimiser identifies only argmax P "
            "([RH])."
        )
        return Summary(self.title, info, tables, notes)

    def _sv_table(self) -> pd.DataFrame:
        a = self.alpha_
        yk = self.design.y_int
        Cb = self._Cb_path[self._k()]
        rows = []
        for j, c in enumerate(self.classes):
            mine = yk == j
            sv = (a > 0).any(axis=1)
            rows.append(
                {
                    "class": c,
                    "n": int(mine.sum()),
                    "support points": int((sv & mine).sum()),
                    "at bound C (any)": int(((a >= Cb[:, None] * (1 - 1e-12)) & (a > 0)).any(axis=1)[mine].sum()),
                    "alpha_j > 0": int((a[:, j] > 0).sum()),
                }
            )
        return pd.DataFrame(rows).set_index("class")

    def path(self) -> PathFrame:
        """Per-fit statistics along the fitted sequence (and the coefficients, linear kernel).

        ``path().plot()`` draws the coefficient paths for a linear kernel, otherwise the
        training error and the share of support points against the path variable."""
        df = self.steps.reset_index(drop=True).copy()
        df["sv_share"] = df["n_sv"] / self.nobs
        coef_cols = []
        cp = getattr(self, "_coef_path", None)
        if cp is not None:
            if cp.ndim == 2:
                names = [str(x) for x in self.xnames]
                for j, nm in enumerate(names):
                    df[nm] = cp[:, j]
            else:
                names = []
                for k, c in enumerate(self.classes):
                    for j, x in enumerate(self.xnames):
                        nm = f"{x}:{c}"
                        df[nm] = cp[:, j, k]
                        names.append(nm)
            coef_cols = names
        return _LamSVMPath.build(df, xvar=self.path_var, coef_columns=coef_cols, log_x=self.path_var in ("C", "lambda"))

    def plot(self, ax=None, **kwargs):
        """Training time and iterations against the fitted sequence (path fits), or the
        histogram of the training rows' true-class decision values (single fit). Returns Axes."""
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots(figsize=(5, 3.5))
        if len(self.lambda_) > 1:
            x = self.steps[self.path_var].to_numpy()
            ax.plot(x, self.steps["time"].to_numpy(), marker="o", label="time (s)", **kwargs)
            ax.set_xlabel(self.path_var)
            ax.set_ylabel("training time (s)")
            if self.path_var in ("C", "lambda") and np.all(x > 0):
                ax.set_xscale("log")
            ax2 = ax.twinx()
            ax2.plot(x, self.steps["n_iter"].to_numpy(), marker="s", color="C1", label="iterations")
            ax2.set_ylabel("SMO iterations")
            ax.set_title("lamsvm path")
        else:
            F = _full_F(self._decision(self.design.X), self.n_classes)
            own = F[np.arange(F.shape[0]), self.design.y_int]
            ax.hist(own, bins=40, **kwargs)
            ax.set_xlabel("f_y(x_i) (decision value of the true class)")
            ax.set_ylabel("count")
            ax.axvline(float(self._step()["margin"]), color="k", ls="--", lw=1)
            ax.set_title("lamsvm training decision values")
        return ax


LamSVMFit.__module__ = "cohstats.models.lamsvm"  # its public home (documentation, saved files)


_LamSVMPath.__module__ = "cohstats.models.lamsvm"  # its public home (documentation, saved files)
