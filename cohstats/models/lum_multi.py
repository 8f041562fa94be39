"""The angle-based K-class LUM ([ZL]; :func:`cohstats.lum` with K > 2 classes): its fit along
``lambda`` and its result :class:`LumMultiFit`.

Documented, saved and loaded as ``cohstats.models.lum.LumMultiFit``.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd

from cohstats.results import Fit, interpolate_path
from cohstats.models.lum_refit import _warn_separable_path, _warn_unconverged, lum_refit_angle
from cohstats.models.lum_result import (
    _HARD_C,
    _check_lambda,
    _interp_weights,
    _kkt_gate,
    _new_xy,
    _penalty_name,
)


def _class_codes(y, binary):
    """Class codes 0..K-1 (a binary design codes its classes -1/+1)."""
    y = np.asarray(y)
    if binary:
        return (y > 0).astype(np.int64)
    return np.ascontiguousarray(y).astype(np.int64)


def _lum_angle(
    design,
    *,
    a,
    c,
    lambda_,
    nlambda,
    lambda_min_ratio,
    alpha,
    standardize,
    penalty_factor,
    validation,
    refit_on,
    tol,
    max_iter,
    form="pairwise",
):
    """The angle-based multicategory LUM for a response with K > 2 levels (see :func:`lum`)."""
    from cohstats.solvers.cd.angle import angle_lum_lambda_max, cd_angle_lum_path

    if not math.isfinite(c):
        raise ValueError(
            f"lum: c = inf (the hinge) is available for two classes only; the "
            f"response {design.yname!r} has {design.n_classes} levels: use a large "
            f"finite c (e.g. c=1000) for a hard multicategory LUM"
        )
    X = np.ascontiguousarray(design.X, dtype=np.float64)
    y = _class_codes(design.y, design.binary)
    w = np.ascontiguousarray(design.weights, dtype=np.float64)
    K = int(design.n_classes)
    if np.unique(y).size < K:
        missing = [design.classes[k] for k in range(K) if not np.any(y == k)]
        raise ValueError(
            f"lum: every level of the response must occur in the training data; "
            f"no rows of {missing} (drop unused levels first)"
        )
    n, p = X.shape
    pf = None
    if penalty_factor is not None:
        pf = np.ascontiguousarray(penalty_factor, dtype=np.float64).ravel()
        if pf.shape != (p,) or np.any(pf < 0) or not np.all(np.isfinite(pf)):
            raise ValueError(f"penalty_factor must be {p} nonnegative finite numbers")
    if lambda_ is None:
        lmax = float(
            angle_lum_lambda_max(
                X, y, w, a, c, max(alpha, 1e-3), K=K, form=form, standardize=standardize, penalty_factor=pf
            )
        )
        if not (np.isfinite(lmax) and lmax > 0):
            lmax = 1.0
        ratio = lambda_min_ratio
        if ratio is None:
            ratio = 1e-6 if alpha == 0.0 else (1e-4 if n > p else 1e-2)
        if not (0 < ratio < 1):
            raise ValueError(f"lambda_min_ratio must be in (0, 1); got {ratio!r}")
        lambdas = lmax * np.geomspace(1.0, ratio, int(nlambda))
    else:
        lambdas = _check_lambda(lambda_)
    b0, B, info = cd_angle_lum_path(
        X,
        y,
        w,
        a,
        c,
        lambdas,
        alpha,
        K=K,
        form=form,
        standardize=standardize,
        tol=tol,
        max_iter=max_iter,
        penalty_factor=pf,
        warn=False,
    )
    info = {k: np.asarray(v) for k, v in dict(info).items()}
    _kkt_gate(info, tol)
    call = dict(a=a, c=c, alpha=alpha)
    if lambda_ is not None:
        call["lambda_"] = lambda_
    if standardize is not True:
        call["standardize"] = standardize
    if refit_on != "train":
        call["refit_on"] = refit_on
    fit = LumMultiFit._from_arrays(
        design,
        a=a,
        c=c,
        alpha=alpha,
        lambdas=lambdas,
        intercepts=b0,
        coefs=B,
        info=info,
        standardize=standardize,
        tol=tol,
        max_iter=max_iter,
        refit_on=refit_on,
        validation=validation,
        call=call,
        form=form,
    )
    _warn_unconverged(fit._info_converged, lambdas, info, max_iter, tol, stacklevel=5)
    return fit


class LumMultiFit(Fit):
    """Result of :func:`lum` for K > 2 classes: the angle-based multicategory LUM path.

    The model is ``f(x) = b + B'x`` in ``R^{K-1}`` with class ``k`` (``classes[k]``) at the
    simplex vertex ``W_{k+1}`` (:func:`cohstats.losses.angle.simplex_vertices`); the class
    margins are ``u_k(x) = <f(x), W_{k+1}>`` (they sum to zero) and the predicted class is the
    largest margin. The loss (``form``) is the pairwise comparison of the margins,
    ``(1/(K-1)) sum_{j != y} V_{a,c}(kappa (u_y - u_j))`` (:mod:`cohstats.losses.angle`).

    Attributes
    ----------
    coef : DataFrame terms x classes, the coefficients of the class margins
        (``B W'``; rows sum to zero) at ``s``. ``coef_simplex`` gives ``B`` itself (terms x
        simplex coordinates ``f1..f{K-1}``) and ``vertices`` the coding.
    intercept : Series by class, the intercepts of the class margins (``W b``).
    a, c, alpha : loss and penalty parameters; lambda_ : fitted sequence (decreasing); s :
        selected lambda; converged : engine diagnostic at ``s``; n_iter : solver passes over the
        whole path (as every fit's). form : ``"pairwise"`` (``"angle"``, ``V(u_y)``, for fits
        saved before the pairwise loss).

    ``predict(type="link")`` gives the class margins; ``type="prob"`` the probabilities of the
    refitted LUM (``method="refit"``, the default, as for two classes) or of the fitted LUM's
    inverse link (``method="lum"``); see :func:`lum`.
    """

    settings = None  # files saved before fits carried their settings load with None

    method = "lum"
    title = "Angle-based multicategory LUM"
    #: the loss: ``"pairwise"`` for every fit made now; files saved before the pairwise loss
    #: hold fits of the plain angle loss, which load with this class default
    form = "angle"
    path_var = "lambda"
    path_arg = "lambda_"
    _predict_options = ("method",)

    @classmethod
    def _from_arrays(
        cls,
        design,
        *,
        a,
        c,
        alpha,
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
        form="pairwise",
    ):
        from cohstats.losses.angle import simplex_vertices

        self = cls.__new__(cls)
        Fit.__init__(self, design, call=call)
        self.a, self.c, self.alpha = float(a), float(c), float(alpha)
        self.form = str(form)
        self.lambda_ = self._checked_lambda(lambdas)
        K = design.n_classes
        self._W = simplex_vertices(K)
        self._b_path = np.asarray(intercepts, dtype=np.float64).reshape(self.lambda_.size, K - 1)
        self._B_path = np.asarray(coefs, dtype=np.float64).reshape(self.lambda_.size, -1, K - 1)
        # by-class margins: coefficients B W' and intercepts W b (what coef/intercept report)
        self._coef_path = self._B_path @ self._W.T
        self._intercept_path = self._b_path @ self._W.T
        nl = self.lambda_.size
        self.info = info
        self._info_n_iter = np.asarray(info.get("n_iter", np.zeros(nl)), dtype=np.int64)
        self._info_converged = np.asarray(info.get("converged", np.ones(nl)), dtype=bool)
        self._info_objective = np.asarray(info.get("objective", np.full(nl, np.nan)), dtype=np.float64)
        self.standardize, self.tol, self.max_iter = standardize, tol, max_iter
        self.refit_on = refit_on
        self._validation = None if validation is None else _new_xy(design, validation)
        if self._validation is not None:
            self._validation = (self._validation[0], _class_codes(self._validation[1], design.binary))
        self._ycodes = _class_codes(design.y, design.binary)
        self._refit_cache = {}
        self.s = float(self.lambda_[-1])
        return self

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
        k0, k1, t = _interp_weights(self.lambda_, value)
        self.converged = bool(self._info_converged[k0] and self._info_converged[k1])
        self.n_iter = int(self._info_n_iter.sum())  # the whole path's, as every fit's n_iter

    def select(self, s):
        """A copy of this fit with the selected ``lambda`` set to ``s`` (the refit cache is shared)."""
        new = super().select(s)
        new._refit_cache = self._refit_cache
        return new

    def _simplex_at(self, s=None):
        s = self._s if s is None else float(s)
        return interpolate_path(self.lambda_, self._B_path, s), interpolate_path(self.lambda_, self._b_path, s)

    def _coef_at(self, s=None):
        B, b = self._simplex_at(s)
        return B @ self._W.T, b @ self._W.T

    @property
    def vertices(self) -> pd.DataFrame:
        """The simplex coding: one row per class (unit vectors summing to zero)."""
        return pd.DataFrame(self._W, index=self.classes, columns=[f"f{k + 1}" for k in range(self._W.shape[1])])

    @property
    def coef_simplex(self) -> pd.DataFrame:
        """Coefficients ``B`` of ``f`` in the simplex coordinates at ``s``, with the intercept
        first (terms x ``f1..f{K-1}``)."""
        B, b = self._simplex_at()
        return pd.DataFrame(
            np.vstack([b[None], B]),
            index=["(Intercept)", *self.xnames],
            columns=[f"f{k + 1}" for k in range(B.shape[1])],
        )

    # ----------------------------------------------------------------- decision values
    def _f(self, X, s=None):
        B, b = self._simplex_at(s)
        return np.ascontiguousarray(X, dtype=np.float64) @ B + b

    def _decision(self, X, s=None):
        return self._f(X, s) @ self._W.T

    def _decision_path(self, X):
        X = np.ascontiguousarray(X, dtype=np.float64)
        return np.einsum("np,lpk->lnk", X, self._coef_path) + self._intercept_path[:, None, :]

    # ----------------------------------------------------------------- refit and probabilities
    def _refit_sample(self):
        if self.refit_on == "validation":
            Xr, yr = self._validation
            return Xr, yr, np.ones(yr.shape[0])
        d = self.design
        return d.X, self._ycodes, np.asarray(d.weights, dtype=np.float64)

    def refit(self, s=None, warn: bool = True) -> dict:
        """The refitted-LUM map ``f2 = g0 + g1 f`` at ``lambda = s`` (:func:`lum_refit_angle`)."""
        s = self._s if s is None else float(s)
        key = (s, self.refit_on)
        if key not in self._refit_cache:
            Xr, yr, wr = self._refit_sample()
            self._refit_cache[key] = lum_refit_angle(self._f(Xr, s), yr, self.a, wr, warn=warn, form=self.form)
        return self._refit_cache[key]

    @property
    def default_method(self) -> str:
        """The default probability method: ``"refit"`` (the refitted LUM), as for two classes."""
        return "refit"

    def _proba(self, X, s=None, method: str | None = None):
        from cohstats.losses.angle import angle_lum_proba

        if method is None:
            method = self.default_method
        if method not in ("refit", "lum"):
            raise ValueError(
                f"method must be 'refit' (refitted LUM; the default) or 'lum' (the inverse "
                f"link of the fitted LUM); got method={method!r}"
            )
        f = self._f(self._X_checked(X), s)
        if method == "lum":
            return angle_lum_proba(f, self.a, self.c, form=self.form)
        r = self.refit(s)
        return angle_lum_proba(r["g0"] + r["g1"] * f, self.a, 0.0, form=self.form)

    @staticmethod
    def _X_checked(X):
        return np.ascontiguousarray(X, dtype=np.float64)

    def _proba_path(self, X, method: str | None = None):
        X = self._X_checked(X)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = np.stack([self._proba(X, s=float(v), method=method) for v in self.lambda_])
        nsep = sum("refit has no minimiser" in str(m.message) for m in caught)
        _warn_separable_path(nsep, self.lambda_.size)
        return out

    # ----------------------------------------------------------------- reports
    @property
    def regime(self) -> str:
        """'soft' (c = 0), 'hard' (c >= 1000) or 'intermediate'."""
        if self.c == 0:
            return "soft"
        return "hard" if self.c >= _HARD_C else "intermediate"

    def _train_error(self, U):
        d = self.design
        w = np.asarray(d.weights, dtype=np.float64)
        return np.average(np.argmax(U, axis=-1) != self._ycodes, axis=-1, weights=w)

    def path(self):
        """PathFrame: one row per lambda with df, objective, training error, iterations and the
        class-margin coefficients (columns ``term:class``)."""
        from cohstats.results import PathFrame

        U = self._decision_path(self.design.X)
        data = {
            "lambda": self.lambda_,
            "df": np.asarray(self.info["df"]),
            "objective": self._info_objective,
            "train_error": self._train_error(U),
            "n_iter": self._info_n_iter,
            "converged": self._info_converged,
        }
        cols = []
        for j, name in enumerate(self.xnames):
            for k, cl in enumerate(self.classes):
                key = f"{name}:{cl}"
                data[key] = self._coef_path[:, j, k] + 0.0
                cols.append(key)
        return PathFrame.build(pd.DataFrame(data), xvar="lambda", coef_columns=cols)

    def plot(self, kind: str = "path", ax=None):
        """Coefficient paths of the class margins against log(lambda); returns the Axes."""
        if kind != "path":
            raise ValueError(f"kind must be 'path' for a multicategory LUM; got {kind!r}")
        return self.path().plot(ax=ax)

    def _repr_extra(self) -> str:
        return f"angle-based, a={self.a:g}, c={self.c:g}, lambda={self._s:.4g}"

    def _summary(self):
        from cohstats.results import Summary

        d = self.design
        U = self._decision(d.X)
        c, b = self._coef_at()
        keep = np.any(c != 0, axis=1)
        info = {
            "a": self.a,
            "c": self.c,
            "regime": self.regime,
            "coding": f"angle-based (simplex vertices in R^{self.n_classes - 1})",
            "loss": (
                "pairwise: mean over other classes j of V(kappa (u_y - u_j))"
                if self.form == "pairwise"
                else "angle: V(u_y) (Zhang & Liu 2014)"
            ),
            "penalty": _penalty_name(self.alpha) + ", grouped by predictor",
            "n lambda fitted": int(self.lambda_.size),
            "observations": int(d.nobs),
            "classes": ", ".join(map(str, self.classes)),
            "training error": float(self._train_error(U)),
            "predictors in model": f"{int(keep.sum())} of {d.p}",
            "converged": self.converged,
            "iterations": self.n_iter,
        }
        tab = pd.DataFrame(
            np.vstack([b[None], c[keep]]),
            columns=self.classes,
            index=["(Intercept)"] + [nm for nm, k in zip(self.xnames, keep) if k],
        )
        tables = {"Class-margin coefficients (rows sum to zero)": tab}
        notes = []
        try:
            r = self.refit(warn=False)
            tables["refit"] = pd.DataFrame(
                {"estimate": np.r_[r["g0"], r["g1"]]}, index=[f"g0[f{k + 1}]" for k in range(len(r["g0"]))] + ["g1"]
            )
            notes.append(
                f"refitted LUM (c = 0, a = {self.a:g}) on the {self.refit_on} sample: "
                f"f2 = g0 + {r['g1']:.4g} f"
                + (
                    "; a shift and rescaling of f classifies every refit row correctly, so the "
                    "unpenalised refit has no minimiser (1e-6 ridge added)"
                    if r["separable"]
                    else ""
                )
            )
        except Exception as exc:  # pragma: no cover - report, do not fail the summary
            notes.append(f"refit unavailable: {exc}")
        if self.standardize:
            notes.append("penalty applied to standardised predictors; coefficients on the original scale")
        if np.isclose(self._s, self.lambda_[-1], rtol=1e-9, atol=0) and "lambda_" not in self.call:
            notes.append(
                "s is the smallest lambda of the default sequence (lambda_max down to "
                f"{self.lambda_[-1] / self.lambda_[0]:.2g} times it), the lightly penalised fit used "
                "by default as for two classes; it was not chosen by validation "
                "(cs.cv(cs.lum, ...) chooses lambda)"
            )
        notes.append(
            "probabilities: method='refit' by default (the inverse link of the refitted LUM); "
            "method='lum' gives the inverse link of the fitted LUM"
            + (", flat wherever margins lie within c/((1+c) kappa) of each other" if self.c > 0 else "")
        )
        return Summary(f"Angle-based multicategory LUM (a = {self.a:g}, c = {self.c:g})", info, tables, notes)


LumMultiFit.__module__ = "cohstats.models.lum"  # its public home (documentation, saved files)
