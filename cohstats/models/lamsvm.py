"""λ-SVM: multiclass hinge loss with a variable positive margin ([RH]; SPEC.md section 6).

:func:`lamsvm` fits, for ``K >= 2`` classes, the Inhibitory-SVM formulation with ``mu = 1/K``
(sum-to-zero decision functions) of the loss

    Psi_y(f) = [margin - f_y]_+ + sum_{j != y} [1 + f_j]_+ ,      sum_j f_j = 0,

by solving the dual of [RH] eq. 22-23 (box ``0 <= alpha_ij <= C``, no equality constraint) with
the SMO of :mod:`cohstats.solvers.smo_lambda`.
"""
from __future__ import annotations

import math
import numbers
import warnings

import numpy as np
import pandas as pd

from cohstats import ConvergenceWarning
from cohstats.formula import build_design, capture_context
from cohstats.kernels import KERNEL_CALLABLE, KERNEL_LINEAR, make_kernel
from cohstats.losses.lamsvm import is_calibrated
from cohstats.results import Fit, PathFrame, Summary, interpolate_path
from cohstats.solvers.smo_lambda import solve_lambda_svm

__all__ = ["lamsvm", "LamSVMFit", "default_margin", "CalibrationWarning"]


class CalibrationWarning(UserWarning):
    """The chosen margin lies in [RH]'s uncalibrated band ``[0, (K - 2)/2]`` (Theorem 2)."""


def default_margin(n_classes: int) -> float:
    """The default positive margin: ``2 (K - 1)``.

    [RH] (section 5, Proposition 3, Figure 4) recommends margins well above ``K - 1``: they are
    classification calibrated (``> (K - 2)/2``), they stay clear of the band
    ``(K - 1 - T_kkt, K - 1 + T_kkt)`` where several KKT patterns coexist and SMO slows down, and
    training gets faster as the margin grows. Much larger margins (100 and more, the paper's
    fastest) need a correspondingly large ``C``: with a moderate ``C`` the true-class
    multipliers saturate at ``C`` and accuracy drops. Measured on Pendigits (7494 training rows,
    RBF ``gamma = 1/16``, ``T_kkt = 0.05``; benchmarks/bench_lamsvm.py): at ``C = 1`` the test
    error was 4.2 % (margin ``K - 1 = 9``), 5.1 % (18), 11.5 % (100); at ``C = 10`` 1.9 % (18)
    and 3.1 % (100), with margin 18 training 1.7x faster than 9 at ``C = 1``. ``2 (K - 1)`` is
    the compromise: calibrated, fast, and as accurate as the reinforced hinge ``K - 1``.

    Examples
    --------
    >>> default_margin(3), default_margin(10)
    (4.0, 18.0)
    """
    return float(2 * (int(n_classes) - 1))


def _real(name, v, *, positive=False, nonneg=False, allow_none=False):
    if v is None and allow_none:
        return None
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real):
        raise TypeError(f"{name} must be a real number; got {v!r}")
    v = float(v)
    if not math.isfinite(v):
        raise ValueError(f"{name} must be finite; got {v!r}")
    if positive and not v > 0:
        raise ValueError(f"{name} must be > 0; got {v!r}")
    if nonneg and v < 0:
        raise ValueError(f"{name} must be >= 0; got {v!r}")
    return v


def _seq(name, v, **kw) -> np.ndarray:
    """A scalar or a 1-D sequence of reals as a 1-D float array."""
    if np.ndim(v) == 0:
        return np.array([_real(name, v, **kw)])
    arr = list(np.asarray(v, dtype=object).ravel())
    if len(arr) == 0:
        raise ValueError(f"{name} must not be an empty sequence")
    out = np.array([_real(name, a, **kw) for a in arr])
    if len(np.unique(out)) != len(out):
        raise ValueError(f"{name} must not contain repeated values; got {list(out)}")
    return out


class LamSVMFit(Fit):
    """A fitted λ-SVM (see :func:`lamsvm`).

    Attributes
    ----------
    margin, C : the fitted values (arrays along a path).
    kernel : the resolved :class:`cohstats.kernels.Kernel`.
    support_ : indices (training rows) of the support points (any multiplier > 0).
    dual_coef : DataFrame (support points x classes) of ``btilde_ij = alpha_ij y_ij - mean_j``;
        ``f_j(x) = sum_i btilde_ij K(x_i, x)``.
    alpha_ : (n, K) multipliers of the selected fit (the last one of a path).
    steps : DataFrame of per-fit solver statistics (one row per value of the sequence).
    lambda_, s, xvar : the fitted sequence (C or margin), the selected value and its name.
    """

    method = "lamsvm"
    title = "Lambda-SVM (multiclass hinge loss with variable positive margin)"

    # ------------------------------------------------------------------ prediction
    def _btilde(self, s=None):
        if len(self.lambda_) == 1:
            return self._bt_path[0]
        s = self.s if s is None else s
        return interpolate_path(self.lambda_, self._bt_path, float(s))

    def _decision(self, X, s=None):
        bt = self._btilde(s)
        Kx = self.kernel(np.ascontiguousarray(X, dtype=np.float64), self._Xsv)
        F = Kx @ bt
        if self.n_classes == 2:
            return F[:, 1]
        return F

    def _proba(self, X, s=None, **kw):
        raise NotImplementedError(
            "lamsvm has no class probabilities: the lambda-SVM loss is a hinge loss whose "
            "population minimiser is piecewise constant in P ([RH] Figure 3: it only identifies "
            "argmax P), so no inverse link maps decision values to probabilities. Use "
            "predict(type='class') or type='link'; for probabilities use cohstats.svm "
            "(bracketing, K = 2) or a probability model (clearn, gboost_c, lum).")

    @property
    def dual_coef(self) -> pd.DataFrame:
        idx = self.design.row_labels
        rows = self.support_ if idx is None else np.asarray(idx)[self.support_]
        return pd.DataFrame(self._btilde(), index=rows, columns=self.classes)

    @property
    def xvar(self) -> str:
        return self._xvar

    # ------------------------------------------------------------------ reporting
    def _repr_extra(self) -> str:
        st = self._step()
        return f"margin={st['margin']:g}, C={st['C']:g}, {int(st['n_sv'])} SV"

    def _k(self) -> int:
        return int(np.argmin(np.abs(self.lambda_ - (self.lambda_[-1] if self.s is None else self.s))))

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
            "Observations": self.nobs,
            "Classes": K,
            "Kernel": self.kernel.describe(),
            "margin": m,
            "C (box bound)": float(st["C"]),
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
            "T_kkt": float(self.call.get("tol", np.nan)),
            "Primal objective": float(st["primal"]),
            "Dual objective": float(st["dual"]),
            "Relative duality gap": float(st["gap"]),
            "Training error": float(st["train_error"]),
        }
        tables = {"Support vectors per class": self._sv_table()}
        if len(self.lambda_) > 1:
            tables["Path"] = self.steps.copy()
        notes = []
        if not cal:
            notes.append(f"margin = {m:g} lies in the uncalibrated band {band} for K = {K} "
                         "classes ([RH] Theorem 2): the risk minimiser need not pick argmax P.")
        if not bool(st["converged"]):
            notes.append(f"SMO stopped ({st['status']}) before all KKT conditions held within "
                         f"T_kkt; increase max_iter / time_limit or tol.")
        notes.append("Decision values sum to zero over classes (inhibition mu = 1/K); no "
                     "probability output (hinge loss).")
        return Summary(self.title, info, tables, notes)

    def _sv_table(self) -> pd.DataFrame:
        a = self.alpha_
        yk = self.design.y_int
        Cb = self._Cb_path[self._k()]
        rows = []
        for j, c in enumerate(self.classes):
            mine = yk == j
            sv = (a > 0).any(axis=1)
            rows.append({
                "class": c, "n": int(mine.sum()), "support points": int((sv & mine).sum()),
                "at bound C (any)": int(((a >= Cb[:, None] * (1 - 1e-12)) & (a > 0)).any(axis=1)[mine].sum()),
                "alpha_j > 0": int((a[:, j] > 0).sum()),
            })
        return pd.DataFrame(rows).set_index("class")

    def path(self) -> PathFrame:
        """Per-fit statistics along the fitted sequence of ``C`` or ``margin``."""
        return PathFrame.build(self.steps.reset_index(drop=True), xvar=self._xvar,
                               log_x=self._xvar == "C")

    def plot(self, ax=None, **kwargs):
        """Training time and iterations against the fitted sequence (or the decision-value
        histogram by class for a single fit)."""
        import matplotlib.pyplot as plt
        if ax is None:
            _, ax = plt.subplots(figsize=(5, 3.5))
        if len(self.lambda_) > 1:
            x = self.steps[self._xvar].to_numpy()
            ax.plot(x, self.steps["time"].to_numpy(), marker="o", label="time (s)", **kwargs)
            ax.set_xlabel(self._xvar)
            ax.set_ylabel("training time (s)")
            if self._xvar == "C" or np.all(x > 0):
                ax.set_xscale("log")
            ax2 = ax.twinx()
            ax2.plot(x, self.steps["n_iter"].to_numpy(), marker="s", color="C1", label="iterations")
            ax2.set_ylabel("SMO iterations")
            ax.set_title("lamsvm path")
        else:
            F = self.predict(type="link").to_numpy()
            if F.ndim == 1:
                F = np.column_stack([-F, F])
            own = F[np.arange(F.shape[0]), self.design.y_int]
            ax.hist(own, bins=40, **kwargs)
            ax.set_xlabel("f_y(x_i) (decision value of the true class)")
            ax.set_ylabel("count")
            ax.axvline(float(self._step()["margin"]), color="k", ls="--", lw=1)
            ax.set_title("lamsvm training decision values")
        return ax


def lamsvm(formula, data=None, *, margin=None, C=1.0, kernel="rbf", gamma=None, gamma_k=None,
           sigma=None, degree=3, coef0=1.0, D=None, nu=None, tol=5e-2, eps=1e-6, max_iter=None,
           time_limit=None, cache_size=200.0, shrinking=True, weights=None, subset=None,
           na_action="omit", warn_calibration=True, lambda_=None) -> LamSVMFit:
    """Fit a λ-SVM: multiclass hinge loss with variable positive margin ([RH], SPEC 6).

    Parameters
    ----------
    formula : str, Design, or array
        ``"y ~ x1 + x2"`` with ``data``; a :class:`cohstats.formula.Design` (used as is); or
        a matrix with the labels in ``data``. The response may have ``K >= 2`` classes.
    data : DataFrame (formula input) or labels (matrix input).
    margin : float or 1-D sequence, optional
        The positive margin λ of [RH] (``lambda`` in the paper). Default
        :func:`default_margin` = ``2 (K - 1)`` (see there). Special cases:
        ``margin = 1`` is the ISVM loss, ``margin = K - 1`` twice Liu & Yuan's reinforced hinge
        (``gamma = 1/2``), ``margin < -1`` Lee, Lin & Wahba's loss. Margins in the uncalibrated
        band ``[0, (K - 2)/2]`` trigger a :class:`CalibrationWarning`. A sequence fits a path
        over the margin (sorted increasingly, warm-started).
    C : float or 1-D sequence, default 1.0
        Box bound of the dual (23), [RH]'s cost "already normalised by N and L" ([D20]); with
        observation weights ``C_i = C w_i``. A sequence fits a path over ``C`` (sorted
        increasingly; each fit starts from the previous multipliers, which stay feasible).
        ``margin`` and ``C`` cannot both be sequences.
    kernel : {"rbf", "compact", "linear", "poly"} or callable ``k(X, Z) -> matrix``
        ``"compact"`` is [RH]'s compactly supported kernel
        ``(1 - ||x - x'|| / D)_+^nu exp(-gamma ||x - x'||^2)`` with ``nu = (M + 1)/2`` and
        ``D = sqrt(M / gamma_k)`` by default (SPEC 6.4, [D20]). A callable is evaluated once into
        the full ``n x n`` matrix (O(n^2) memory).
    gamma, gamma_k, sigma : kernel width; give at most one. ``gamma_k`` is [RH]'s normalised
        width (``gamma = gamma_k / M``); default ``gamma_k = 1`` (libsvm's ``1/M``).
    degree, coef0 : polynomial kernel. D, nu : compact-kernel truncation and power.
    tol : float, default 5e-2
        KKT tolerance ``T_kkt`` of [RH] eq. 24-26 (the paper's value).
    eps : float, default 1e-6
        Resolution deciding when a multiplier is at a bound.
    max_iter : int, optional
        Maximal SMO iterations (default ``max(10^7, 100 n)``).
    time_limit : float, optional
        Seconds per fit; SMO stops with a :class:`cohstats.ConvergenceWarning` when exceeded.
    cache_size : float, default 200
        Kernel-row cache in megabytes (memory ``O(rows * n)``); the rows are stored in float32
        when ``tol >= 1e-3`` (as libsvm does) and in float64 for tighter tolerances.
    shrinking : bool, default True
        libsvm-style shrinking of points whose multipliers all sit at a bound (exact rebuild
        before stopping; see :mod:`cohstats.solvers.smo_lambda` for the measured effect).
    weights, subset, na_action : as :func:`cohstats.formula.build_design`.
    warn_calibration : bool, default True
        Emit :class:`CalibrationWarning` for margins in the uncalibrated band.
    lambda_ : 1-D sequence, optional
        The path protocol's name for the fitted sequence (``fit.lambda_``), used by
        :func:`cohstats.cv` / :func:`cohstats.tune` to refit a path on every fold: values of
        ``margin`` when ``margin`` is a sequence, otherwise values of ``C``. It replaces that
        argument. (It is not the [RH] margin λ, which is ``margin``.)

    Returns
    -------
    LamSVMFit
        ``predict(type="class" | "link")``, ``summary()`` (support vectors per class, iterations,
        time, calibration status), ``path()``, ``plot()``. ``predict(type="prob")`` raises
        ``NotImplementedError``: the hinge loss identifies only ``argmax P`` (its minimiser is
        piecewise constant in ``P``), so there is no principled inverse link.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from cohstats.models.lamsvm import lamsvm
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame(rng.normal(size=(90, 2)), columns=["x1", "x2"])
    >>> df["y"] = np.array(["a", "b", "c"])[np.digitize(df.x1 + 0.3 * rng.normal(size=90), [-0.4, 0.4])]
    >>> fit = lamsvm("y ~ x1 + x2", df, C=10, margin=10, tol=1e-3)
    >>> bool(np.allclose(fit.predict(type="link").sum(axis=1), 0))
    True
    >>> float((fit.predict() == df.y).mean()) > 0.8
    True
    """
    ctx = capture_context(1) if isinstance(formula, str) else None
    # a Design passes through build_design (subset/weights applied, no re-parsing)
    design = build_design(formula, data, weights=weights, subset=subset, na_action=na_action,
                          context=ctx)
    K = design.n_classes
    if K < 2:
        raise ValueError(f"lamsvm needs a response with at least two classes; got {K}")
    n = design.nobs
    if n < 2:
        raise ValueError(f"lamsvm needs at least two observations; got {n}")
    yk = np.ascontiguousarray(design.y_int, dtype=np.int64)
    if len(np.unique(yk)) < 2:
        raise ValueError("lamsvm needs at least two classes present in the training data")
    if lambda_ is not None:
        if np.ndim(margin) == 1 and len(margin) > 1:
            margin = lambda_
        else:
            C = lambda_
    margins = _seq("margin", default_margin(K) if margin is None else margin)
    Cs = _seq("C", C, positive=True)
    if len(margins) > 1 and len(Cs) > 1:
        raise ValueError("margin and C cannot both be sequences; fit a grid with cohstats.tune")
    tol = _real("tol", tol, positive=True)
    eps = _real("eps", eps, nonneg=True)
    if eps >= Cs.min():
        raise ValueError(f"eps must be smaller than C; got eps={eps!r}, C={Cs.min()!r}")
    if max_iter is not None and (isinstance(max_iter, bool) or not isinstance(max_iter, numbers.Integral)
                                 or max_iter < 1):
        raise ValueError(f"max_iter must be a positive integer; got {max_iter!r}")
    time_limit = _real("time_limit", time_limit, positive=True, allow_none=True)
    if not isinstance(shrinking, (bool, np.bool_)):
        raise TypeError(f"shrinking must be True or False; got {shrinking!r}")
    cache_size = _real("cache_size", cache_size, positive=True)
    w = np.asarray(design.weights, dtype=np.float64)
    if np.any(w < 0) or not np.all(np.isfinite(w)):
        raise ValueError("weights must be finite and non-negative")
    if gamma is None and gamma_k is None and sigma is None and not callable(kernel) \
            and str(kernel).lower() in ("rbf", "gaussian", "compact", "poly", "polynomial"):
        gamma_k = 1.0
    X = np.ascontiguousarray(design.X, dtype=np.float64)
    kern = make_kernel(kernel, X, sigma=sigma, gamma=gamma, gamma_k=gamma_k, degree=degree,
                       coef0=coef0, D=D, nu=nu)
    Kfull = kern(X) if kern.code == KERNEL_CALLABLE else None

    if len(margins) > 1:
        xvar, seq = "margin", np.sort(margins)
    else:
        xvar, seq = "C", np.sort(Cs)
    if warn_calibration:
        bad = [m for m in (seq if xvar == "margin" else margins) if not is_calibrated(m, K)]
        if bad:
            warnings.warn(
                f"margin={bad[0]:g} is not classification calibrated for K={K} classes: "
                f"[RH] Theorem 2 needs margin < 0 or margin > (K-2)/2 = {(K - 2) / 2:g}; choose "
                f"the margin outside [0, {(K - 2) / 2:g}] (the default is {default_margin(K):g})",
                CalibrationWarning, stacklevel=2)

    alpha = None
    bt_list, rows, alphas, Cbs = [], [], [], []
    for v in seq:
        m = float(v) if xvar == "margin" else float(margins[0])
        c = float(v) if xvar == "C" else float(Cs[0])
        Cb = c * w
        res = solve_lambda_svm(X, yk, K, m, Cb, kern.code, kern.kpar, Kfull, tol=tol, eps=eps,
                               max_iter=max_iter, time_limit=time_limit, cache_size=cache_size,
                               shrinking=bool(shrinking), alpha0=alpha)
        alpha = res["alpha"]
        if not res["converged"]:
            what = {"time_limit": "time_limit", "max_iter": "max_iter"}.get(res["status"], "tol")
            warnings.warn(
                f"lamsvm: SMO stopped ({res['status']}) at {xvar}={v:g} after {res['n_iter']} "
                f"iterations with maximal KKT violation {res['max_violation']:.3g} > tol={tol:g}; "
                f"increase {what}" + (" or tol" if what != "tol" else ""),
                ConvergenceWarning, stacklevel=2)
        b = np.where(yk[:, None] == np.arange(K), alpha, -alpha)
        bt = b - b.mean(axis=1, keepdims=True)
        F = res["F"]
        pred = np.argmax(F, axis=1)
        gap = (res["primal"] - res["dual"]) / max(abs(res["primal"]), 1e-300)
        rows.append({xvar: float(v), "margin": m, "C": c, "n_iter": res["n_iter"],
                     "n_steps": res["n_steps"], "time": res["time"], "converged": res["converged"],
                     "status": res["status"], "max_violation": res["max_violation"],
                     "primal": res["primal"], "dual": res["dual"], "gap": gap,
                     "n_sv": int((alpha > 0).any(axis=1).sum()), "n_alpha": int((alpha > 0).sum()),
                     "n_at_C": int(((alpha >= Cb[:, None] - eps) & (Cb[:, None] > 0)).sum()),
                     "kernel_rows": res["kernel_rows"],
                     "train_error": float(np.mean(pred != yk))})
        bt_list.append(bt)
        alphas.append(alpha.copy())
        Cbs.append(Cb)
    steps = pd.DataFrame(rows)
    sv = np.flatnonzero(np.any([(a > 0).any(axis=1) for a in alphas], axis=0))
    call = {"margin": margin if margin is not None else float(margins[0]), "C": C,
            "kernel": kernel if not callable(kernel) else kern.name, "tol": tol}
    for k_, v_ in (("gamma", gamma), ("gamma_k", gamma_k), ("sigma", sigma), ("time_limit", time_limit)):
        if v_ is not None:
            call[k_] = v_
    fit = LamSVMFit(design, call)
    fit.kernel = kern
    fit._xvar = xvar
    fit.lambda_ = np.asarray(seq, dtype=float)
    fit.s = float(seq[-1])
    fit.margin = seq.copy() if xvar == "margin" else float(margins[0])
    fit.C = seq.copy() if xvar == "C" else float(Cs[0])
    fit.support_ = sv
    fit._Xsv = np.ascontiguousarray(X[sv])
    fit._bt_path = np.stack([bt[sv] for bt in bt_list])
    fit._alpha_path = np.stack(alphas)
    fit._Cb_path = np.stack(Cbs)
    fit.steps = steps
    fit.converged = bool(steps["converged"].all())
    fit.n_iter = int(steps["n_iter"].sum())
    if kern.code == KERNEL_LINEAR:
        cp = np.einsum("ip,sik->spk", fit._Xsv, fit._bt_path)
        fit._coef_path = cp[:, :, 1] if K == 2 else cp
        fit._intercept_path = np.zeros((len(seq),) if K == 2 else (len(seq), K))
        fit._coef, fit._intercept = fit._coef_path[-1], fit._intercept_path[-1]
    return fit
