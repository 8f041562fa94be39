"""The binary LUM's result :class:`LumFit` (:func:`cohstats.lum`) and the checks the LUM modules
share.

Documented, saved and loaded as ``cohstats.models.lum.LumFit``.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from cohstats.losses.binary import lum_link
from cohstats.models._offsets import OffsetProbabilities
from cohstats.results import Fit, interpolate_path, path_weights
from cohstats.tuning.shared import cross_kernel
from cohstats.models.lum_refit import _warn_separable_path, lum_refit, refit_coef_table

_HARD_C = 1000.0  # c at or above which the LUM is indistinguishable from the SVM (7.1)


# --------------------------------------------------------------------------- validation
def _penalty_name(alpha: float) -> str:
    """The penalty by its usual name: ridge (alpha = 0, [LZW]), lasso (1) or elastic net."""
    if alpha == 0.0:
        return "ridge (alpha = 0)"
    if alpha == 1.0:
        return "lasso (alpha = 1)"
    return f"elastic net (alpha = {alpha:g})"


def _check_lambda(lambda_):
    lam = np.atleast_1d(np.asarray(lambda_, dtype=np.float64)).ravel()
    if lam.size == 0 or not np.all(np.isfinite(lam)) or np.any(lam <= 0):
        raise ValueError(f"lambda_ must be positive finite number(s); got lambda_={lambda_!r}")
    return np.sort(lam)[::-1].copy()


def _new_xy(design, newdata):
    """(X, y) of a held-out sample: a DataFrame with the response column, or a tuple (X, y)."""
    if isinstance(newdata, tuple) and len(newdata) == 2:
        X = design.new_X(newdata[0])
        y = design.code_y(newdata[1])
    elif isinstance(newdata, pd.DataFrame):
        X = design.new_X(newdata)
        if design.yname not in newdata.columns:
            raise ValueError(f"validation data lack the response column {design.yname!r}")
        y = design.code_y(newdata[design.yname])
    else:
        raise TypeError(
            "validation must be a DataFrame holding the response column or a tuple "
            f"(X, y); got {type(newdata).__name__}"
        )
    return np.ascontiguousarray(X, dtype=np.float64), np.asarray(y, dtype=np.float64)


def _validation_sample(design, newdata):
    """``(X, y)`` of a validation sample (:func:`_new_xy`), and for a model with offsets their
    offsets third (read from a DataFrame holding the offset columns)."""
    xy = _new_xy(design, newdata)
    if design.offset is None:
        return xy
    if not isinstance(newdata, pd.DataFrame) or design.offset_given:
        raise ValueError(
            "lum: with an offset, validation= must be a DataFrame holding the offset column(s) "
            "(offset(col) in the formula or offset='col'), so that its rows carry their offsets"
        )
    return (*xy, design.new_offset(newdata))


def _kkt_gate(info: dict, tol: float) -> None:
    """A lambda counts as converged only if its exact KKT violation is small as well.

    The engine stops on coordinate changes; near the hinge limit (large ``c``) those can stall
    far from the optimum. The bound is ten times the engine's own in-pass KKT gate,
    ``sqrt(tol * obj0)`` with ``obj0`` the intercept-only objective.
    """
    kkt = np.asarray(info.get("kkt", np.full(np.size(info.get("converged", 0)), np.nan)), dtype=float)
    obj = np.asarray(info.get("objective", np.nan), dtype=float)
    obj0 = float(info.get("null_objective", np.nanmax(obj) if obj.size else 1.0))
    bound = 10.0 * math.sqrt(tol * max(obj0, 1e-12))
    ok = ~(kkt > bound)  # NaN (not computed) does not veto
    info["converged"] = np.asarray(info["converged"], dtype=bool) & ok
    info["kkt_bound"] = bound


# --------------------------------------------------------------------------- result
#: the one path interpolation of :mod:`cohstats.results` (kept under its old name here)
_interp_weights = path_weights


class LumFit(OffsetProbabilities, Fit):
    """Result of :func:`lum`: a LUM path with refitted-LUM probabilities.

    Attributes
    ----------
    a, c : loss parameters. lambda_ : fitted penalty sequence (decreasing). s : selected lambda.
    alpha, penalty, kernel : penalty and expansion. converged : engine diagnostic at s.
    n_iter : solver passes over the whole path (as every fit's).
    tuning : DataFrame of validation/CV errors when built by :func:`tune_lum` (else None).
    """

    method = "lum"
    title = "Large-margin unified machine"
    #: the validated arguments of the call (:class:`cohstats.validation.Settings`); None for a
    #: fit read from a file saved before fits carried them
    settings = None
    path_var = "lambda"
    path_arg = "lambda_"
    _predict_options = ("method",)

    def _beta(self):
        return self._coef_at(None)[0]

    @property
    def coef(self):
        """Coefficients by term at ``s`` (linear model); None for kernel expansions."""
        if self.kernel is not None:
            return None
        return super().coef

    @property
    def dual_coef(self):
        """Kernel expansions: ``beta`` of the support points at ``s`` (rows: training-row labels);
        None for the linear model and for feature-map approximations."""
        if self.kernel is None or self._fmap is not None:
            return None
        beta = self._beta()
        sup = np.flatnonzero(beta)
        return pd.DataFrame({"dual_coef": beta[sup]}, index=self._index(None, beta.size)[sup])

    @property
    def support_(self):
        """Kernel expansions: positions of the training rows with ``beta != 0`` at ``s``."""
        if self.kernel is None or self._fmap is not None:
            return None
        return np.flatnonzero(self._beta())

    def _repr_extra(self) -> str:
        return f"a={self.a:g}, c={self.c:g}, lambda={self._s:.4g}"

    # ----------------------------------------------------------------- construction
    @classmethod
    def _from_arrays(
        cls,
        design,
        *,
        a,
        c,
        alpha,
        kernel,
        lambdas,
        intercepts,
        coefs,
        info,
        standardize,
        tol,
        max_iter,
        refit_on,
        validation,
        call,
        scaling=(None, None),
        feature_map=None,
        train_decision=None,
    ):
        self = cls.__new__(cls)
        cls._init_base(self, design, call)
        self.a, self.c, self.alpha = a, c, alpha
        self.kernel = kernel
        self._fmap = feature_map
        self._xcenter, self._xscale = scaling
        self._Ztr = None if kernel is None else (design.X - scaling[0]) / scaling[1]
        # kernel expansions: the training rows' decision values along the path (see _kernel_path)
        self._Ftr = None if train_decision is None else np.asarray(train_decision, dtype=np.float64)
        self.lambda_ = self._checked_lambda(lambdas)
        self._intercepts = np.asarray(intercepts, dtype=np.float64).reshape(-1)
        self._coefs = np.asarray(coefs, dtype=np.float64).reshape(self.lambda_.size, -1)
        self._Xtr = np.ascontiguousarray(design.X, dtype=np.float64)
        self._ytr = np.ascontiguousarray(design.y, dtype=np.float64)
        self._wtr = np.ascontiguousarray(design.weights, dtype=np.float64)
        nl = self.lambda_.size
        self._info = info
        self._info_n_iter = np.asarray(info.get("n_iter", np.zeros(nl)), dtype=np.int64)
        self._info_converged = np.asarray(info.get("converged", np.ones(nl)), dtype=bool)
        self._info_objective = np.asarray(info.get("objective", np.full(nl, np.nan)), dtype=np.float64)
        self.standardize, self.tol, self.max_iter = standardize, tol, max_iter
        self.refit_on = refit_on
        self._validation = None if validation is None else _validation_sample(design, validation)
        self._refit_cache = {}
        self.tuning = None
        self.s = float(self.lambda_[-1])
        return self

    @staticmethod
    def _init_base(self, design, call):
        Fit.__init__(self, design, call=call)

    # ----------------------------------------------------------------- selection
    @property
    def s(self):
        return self._s

    @s.setter
    def s(self, value):
        value = float(value)
        if not (np.isfinite(value) and value > 0):
            raise ValueError(f"s must be a positive lambda; got s={value!r}")
        self._s = value
        b, b0 = self._coef_at(value)
        k0, k1, t = _interp_weights(self.lambda_, value)
        self.converged = bool(self._info_converged[k0] and self._info_converged[k1])
        self.n_iter = int(self._info_n_iter.sum())  # the whole path's, as every fit's n_iter
        self._intercept = float(b0)
        self._coef = b

    def select(self, s):
        """A copy of this fit with the selected ``lambda`` set to ``s`` (the refit cache is shared)."""
        new = super().select(s)
        new._refit_cache = self._refit_cache
        return new

    def _coef_at(self, s=None):
        s = self._s if s is None else float(s)
        return interpolate_path(self.lambda_, self._coefs, s), float(
            interpolate_path(self.lambda_, self._intercepts, s)
        )

    # ----------------------------------------------------------------- decision values
    def _basis(self, X):
        lent = cross_kernel(self, X)  # lent by a tuner for exactly these rows
        if lent is not None:
            return lent
        X = np.ascontiguousarray(X, dtype=np.float64)
        if self.kernel is None:
            return X
        Z = (X - self._xcenter) / self._xscale
        if self._fmap is not None:
            return self._fmap(Z)
        return self.kernel(Z, self._Ztr)

    def _decision(self, X, s=None):
        F = self._train_decision(X)
        if F is not None:  # linear in the coefficients: interpolated as they are
            k0, k1, t = _interp_weights(self.lambda_, self._s if s is None else float(s))
            return (1 - t) * F[k0] + t * F[k1]
        b, b0 = self._coef_at(s)
        return self._basis(X) @ b + b0

    def _decision_path(self, X):
        F = self._train_decision(X)
        if F is not None:
            return F.copy()
        return self._coefs @ self._basis(X).T + self._intercepts[:, None]

    def _train_decision(self, X):
        """Kernel expansions: the decision values of the training rows along the path, kept by
        the fit (``X`` is the fit's own training matrix), else None."""
        F = self.__dict__.get("_Ftr")
        return F if F is not None and X is self._Xtr else None

    # ----------------------------------------------------------------- refit
    def _refit_sample(self):
        """(X, y, w, offset) of the sample the refitted scale is estimated on (offset 0 without one)."""
        if self.refit_on == "validation":
            Xr, yr = self._validation[:2]
            return Xr, yr, np.ones_like(yr), (self._validation[2] if len(self._validation) > 2 else 0.0)
        return self._Xtr, self._ytr, self._wtr, self._train_offset()

    def _train_offset(self):
        """The offsets of the training rows (0.0 for a fit without offsets)."""
        off = getattr(self.design, "offset", None)
        return 0.0 if off is None else off

    def refit(self, s=None, warn: bool = True) -> dict:
        """The refitted-LUM scale ``(g0, g1)`` at ``lambda = s`` ([LZW] eq (9)).

        Returns the dict of :func:`lum_refit` (``g0``, ``g1``, ``converged``, ``separable``...).
        """
        s = self._s if s is None else float(s)
        key = (s, self.refit_on)
        if key not in self._refit_cache:
            Xr, yr, wr, off = self._refit_sample()
            self._refit_cache[key] = lum_refit(self._decision(Xr, s) + off, yr, self.a, wr, warn=warn)
        return self._refit_cache[key]

    # ----------------------------------------------------------------- probabilities
    def _check_method(self, method):
        if method not in ("refit", "lum"):
            raise ValueError(
                f"method must be 'refit' (refitted LUM, default) or 'lum' (the "
                f"inverse link of the fitted LUM); got method={method!r}"
            )
        if method == "lum" and not math.isfinite(self.c):
            raise NotImplementedError(
                "c = inf is the SVM: its decision values carry no probability; use method='refit'"
            )

    def _proba(self, X, s=None, method: str = "refit"):
        return self._link_to_prob(self._decision(X, s), s, method)

    def _link_to_prob(self, f, s=None, method: str = "refit"):
        """P(Y = classes[1]) from decision values ``f`` (offsets included) at ``lambda = s``."""
        self._check_method(method)
        if method == "lum":
            return lum_link(f, self.a, self.c)
        r = self.refit(s)
        return lum_link(r["g0"] + r["g1"] * f, self.a, 0.0)

    def _proba_path(self, X, method: str = "refit"):
        self._check_method(method)
        F = self._decision_path(X)
        if method == "lum":
            return lum_link(F, self.a, self.c)
        out = np.empty_like(F)
        nsep = 0
        for k, lam in enumerate(self.lambda_):
            r = self.refit(lam, warn=False)
            nsep += r["separable"]
            out[k] = lum_link(r["g0"] + r["g1"] * F[k], self.a, 0.0)
        _warn_separable_path(nsep, self.lambda_.size)
        return out

    # ----------------------------------------------------------------- reports
    @property
    def regime(self) -> str:
        """'soft' (c = 0), 'hard' (c >= 1000, SVM-like) or 'intermediate'."""
        if self.c == 0:
            return "soft"
        if self.c >= _HARD_C:
            return "hard"
        return "intermediate"

    def _df_path(self):
        if "df" in self._info:
            return np.asarray(self._info["df"])
        return np.count_nonzero(np.abs(self._coefs) > 0, axis=1)

    def path(self):
        """PathFrame: one row per lambda with df, objective, training error, iterations and
        the coefficients (linear expansion)."""
        from cohstats.results import PathFrame

        F = self._decision_path(self._Xtr) + self._train_offset()
        err = np.average((F > 0) != (self._ytr[None, :] > 0), axis=1, weights=self._wtr)
        df = pd.DataFrame(
            {
                "lambda": self.lambda_,
                "df": self._df_path(),
                "objective": self._info_objective,
                "train_error": err,
                "n_iter": self._info_n_iter,
                "converged": self._info_converged,
                "intercept": self._intercepts,
            }
        )
        if self.kernel is None:
            names = list(self.design.xnames)
        elif self._fmap is not None:
            names = [f"phi[{j}]" for j in range(self._coefs.shape[1])]
        else:
            names = [f"beta[{i}]" for i in range(self._coefs.shape[1])]
        coefs = pd.DataFrame(self._coefs, columns=names)
        out = pd.concat([df, coefs], axis=1)
        return PathFrame.build(out, xvar="lambda", coef_columns=names)

    def margin_stats(self) -> pd.Series:
        """Training-margin statistics at the selected lambda."""
        f = self._decision(self._Xtr) + self._train_offset()
        m = self._ytr * f
        u0 = self.c / (1.0 + self.c) if math.isfinite(self.c) else 1.0
        q = np.quantile(m, [0.0, 0.25, 0.5, 0.75, 1.0])
        return pd.Series(
            {
                "train_error": float(np.average(m <= 0, weights=self._wtr)),
                "margin_min": q[0],
                "margin_q1": q[1],
                "margin_median": q[2],
                "margin_q3": q[3],
                "margin_max": q[4],
                "share_linear_piece (y f < c/(1+c))": float(np.mean(m < u0)),
                "share_margin_violators (y f < 1)": float(np.mean(m < 1.0)),
                "share_flat_link (|f| <= c/(1+c))": float(np.mean(np.abs(f) <= u0))
                if math.isfinite(self.c)
                else float("nan"),
            }
        )

    def _summary(self):
        from cohstats.results import Summary

        ms = self.margin_stats()
        info = {
            "a": self.a,
            "c": self.c,
            "regime": self.regime,
            "penalty": _penalty_name(self.alpha),
            "expansion": "linear"
            if self.kernel is None
            else (self._fmap.describe() if self._fmap is not None else self.kernel.describe()),
            "n lambda fitted": int(self.lambda_.size),
            "observations": int(self._Xtr.shape[0]),
            "training error": ms["train_error"],
            "converged": self.converged,
            "iterations": self.n_iter,
        }
        tables = {}
        if self.kernel is None:
            tables["coefficients"] = pd.DataFrame(
                {"estimate": np.r_[self._intercept, self._coef]}, index=["(Intercept)", *self.design.xnames]
            )
        tables["margins"] = ms.to_frame("value")
        notes = []
        try:
            r = self.refit(warn=False)
            tables["refit"] = refit_coef_table(r)
            notes.append(
                f"refitted LUM (c = 0, a = {self.a:g}) on the {self.refit_on} sample: "
                f"f2 = {r['g0']:.4g} + {r['g1']:.4g} f"
                + (
                    "; first stage separates the sample (1e-6 ridge added)"
                    if r["separable"]
                    else "; standard errors: sandwich (M-estimation), the refit minimises "
                    "the LUM loss, not a likelihood"
                )
            )
        except Exception as exc:  # pragma: no cover - report, do not fail the summary
            notes.append(f"refit unavailable: {exc}")
        if self.tuning is not None:
            tables["tuning"] = self.tuning
            notes.append(self.tuning_note)
        if self.regime == "hard":
            notes.append(
                "c >= 1000: the LUM is an SVM; method='lum' probabilities are 1/2 on "
                "|f| <= c/(1+c) — use the default method='refit'"
            )
        return Summary(f"Large-margin unified machine (a = {self.a:g}, c = {self.c:g})", info, tables, notes)

    def plot(self, kind: str = "path", ax=None):
        """The fit as a picture; returns the matplotlib Axes.

        ``kind="path"`` (default): coefficient paths against log(lambda) (linear model) or the
        training error along the path (kernel expansion); ``"loss"``: the LUM loss beside the
        hinge and logistic losses; ``"boundary"`` (two predictors): the data, the boundary
        ``f = 0`` and the refitted-probability contours at ``s``.
        """
        import matplotlib.pyplot as plt

        if kind not in ("path", "loss", "boundary"):
            raise ValueError(f"kind must be 'path', 'loss' or 'boundary'; got {kind!r}")
        if kind == "path":
            pf = self.path()
            if self.kernel is not None:
                return pf.plot(columns=["train_error"], ax=ax, ylabel="training error")
            return pf.plot(ax=ax)
        if ax is None:
            _, ax = plt.subplots(figsize=(5.5, 4.2))
        if kind == "loss":
            from cohstats.losses.scalar import lum_value

            u = np.linspace(-2, 3, 400)
            ax.plot(u, [lum_value(t, self.a, self.c) for t in u], label=f"LUM a={self.a:g}, c={self.c:g}")
            ax.plot(u, np.maximum(1 - u, 0), "--", lw=1, label="hinge (SVM)")
            ax.plot(u, np.logaddexp(0, -u), ":", lw=1, label="logistic")
            ax.set(xlabel="margin y f(x)", ylabel="loss", ylim=(0, 3), title="LUM loss")
            ax.legend(fontsize=8)
            return ax
        X = self._Xtr
        if getattr(self.design, "offset", None) is not None:
            raise ValueError(
                "kind='boundary' needs a fit without offsets (with one, f = 0 is no line in the predictors)"
            )
        if X.shape[1] != 2:
            raise ValueError(f"kind='boundary' needs exactly two predictors; this fit has {X.shape[1]}")
        pad = 0.05 * (X.max(0) - X.min(0))
        g1 = np.linspace(X[:, 0].min() - pad[0], X[:, 0].max() + pad[0], 150)
        g2 = np.linspace(X[:, 1].min() - pad[1], X[:, 1].max() + pad[1], 150)
        G1, G2 = np.meshgrid(g1, g2)
        grid = np.c_[G1.ravel(), G2.ravel()]
        F = self._decision(grid).reshape(G1.shape)
        P = self._proba(grid).reshape(G1.shape)
        cs_ = ax.contourf(G1, G2, P, levels=np.linspace(0, 1, 11), cmap="RdBu_r", alpha=0.35)
        ax.figure.colorbar(cs_, ax=ax, label=f"P({self.classes[1]}) (refitted)")
        ax.contour(G1, G2, F, levels=[0.0], colors="k")
        for lab, mk in ((-1.0, "o"), (1.0, "^")):
            m = self._ytr == lab
            ax.scatter(
                X[m, 0], X[m, 1], s=12, marker=mk, edgecolors="k", linewidths=0.3, label=str(self.classes[int(lab > 0)])
            )
        names = list(self.design.xnames)
        ax.set(xlabel=names[0], ylabel=names[1], title=f"boundary f = 0 (lambda = {self._s:.3g})")
        ax.legend(fontsize=8)
        return ax


LumFit.__module__ = "cohstats.models.lum"  # its public home (documentation, saved files)
