"""C-learning's result :class:`CLearnFit` (:func:`cohstats.clearn`): linear, kernel and
feature-map expansions, two or K classes, along ``lambda``.

Documented, saved and loaded as ``cohstats.models.clearn.CLearnFit``.
"""

from __future__ import annotations


import numpy as np
import pandas as pd

from cohstats.losses.multiclass import coherence_loss, coherence_proba, multinomial_proba
from cohstats.results import Fit, PathFrame, Summary, interpolate_path
from cohstats.tuning.shared import cross_kernel

_LOSS_TITLE = {
    "C": "C-learning",
    "V": "C-learning (coherence loss V)",
    "logistic": "RLRM (penalised logistic regression)",
    "hhinge": "HHSVM (huberized hinge)",
    "sqhinge": "squared-hinge SVM",
}


class CLearnFit(Fit):
    """Result of :func:`clearn`: a path of fits over ``lambda_`` with the selected value ``s``.

    Attributes
    ----------
    lambda_ : fitted penalty sequence (decreasing); ``s`` : selected value (default: the last).
    coef, intercept : at ``s`` (linear expansions; K > 2: a terms x classes DataFrame).
    dual_coef : kernel expansions: the coefficients ``beta_j`` of the support points at ``s``
        (one column, or one per class for K > 2).
    support_ : kernel expansions: positions of the support points (``beta_j != 0``) at ``s``.
    info : solver output (iterations, convergence, objective, KKT violation per ``lambda``).
    """

    method = "clearn"
    title = "C-learning"
    #: the validated arguments of the call (:class:`cohstats.validation.Settings`); None for a
    #: fit read from a file saved before fits carried them
    settings = None
    path_var = "lambda"
    path_arg = "lambda_"

    # ------------------------------------------------------------------ construction
    @classmethod
    def _from_arrays(
        cls,
        design,
        *,
        loss,
        rho,
        u,
        alpha,
        delta,
        standardize,
        lossobj,
        lambda_,
        intercept_path,
        info,
        lambda_max,
        converged,
        n_iter,
        call,
        coef_path=None,
        beta_path=None,
        mc_scale=1.0,
        kernel=None,
        Xtrain=None,
        scaling=None,
        feature_map=None,
        feature_scaling=None,
    ) -> "CLearnFit":
        """Build a fit from the engine's output (every piece of state a keyword argument).

        ``coef_path`` ((L, p) or (L, p, K)) for linear expansions, or ``beta_path`` ((L, n) or
        (L, n, K)) with ``kernel``, ``Xtrain`` (the standardised training inputs) and
        ``scaling = (center, scale)`` for kernel expansions; ``intercept_path`` (L,) or (L, K);
        ``info`` the solver's per-``lambda`` diagnostics (already restricted to ``lambda_``).
        ``feature_map`` with ``feature_scaling = (center, scale)`` and ``kernel`` (the kernel it
        approximates) for a linear fit on a low-rank kernel feature map. ``s`` is the last
        ``lambda``.
        """
        self = cls._blank(design, call)
        self.loss, self.rho, self.u, self.alpha, self.delta = loss, rho, u, alpha, delta
        self.standardize = bool(standardize)
        self._lossobj = lossobj
        self._mc_scale = mc_scale
        self._fmap = feature_map
        if feature_map is not None:
            self._fxc, self._fxs = feature_scaling
        if kernel is not None:
            self._kernel = kernel
        self._beta_path = beta_path
        self._coef_path = coef_path
        self._intercept_path = intercept_path
        if beta_path is not None:
            self._Xtrain = Xtrain
            self._xcenter, self._xscale = scaling
        self.info = info
        self.lambda_max = float(lambda_max)
        lam = self._checked_lambda(lambda_)
        if len(intercept_path) != lam.size:
            raise ValueError(f"CLearnFit: intercept_path has {len(intercept_path)} rows for {lam.size} lambda_ values")
        last = (coef_path[-1], intercept_path[-1]) if coef_path is not None else (None, None)
        self._set_contract(
            lambda_=lam, s=float(lam[-1]), converged=converged, n_iter=n_iter, coef=last[0], intercept=last[1]
        )
        return self

    # ------------------------------------------------------------------ coefficients
    def _beta_at(self, s=None):
        s = self.s if s is None else s
        return (
            interpolate_path(self.lambda_, self._beta_path, s),
            interpolate_path(self.lambda_, self._intercept_path, s),
        )

    def _coef_at(self, s=None):
        if self.is_kernel:
            return None, self._beta_at(s)[1]
        return super()._coef_at(s)

    @property
    def dual_coef(self) -> pd.DataFrame | None:
        """Kernel expansions: ``beta_j`` of the support points at ``s`` (rows: training-row
        labels); None for linear expansions."""
        if self._beta_path is None:
            return None
        beta, _ = self._beta_at()
        sup = self._support(beta)
        idx = self._index(None, len(beta))[sup]
        if beta.ndim == 2:
            return pd.DataFrame(beta[sup], index=idx, columns=self.classes)
        return pd.DataFrame({"dual_coef": beta[sup]}, index=idx)

    @staticmethod
    def _support(beta):
        return np.flatnonzero(np.any(beta != 0, axis=1) if beta.ndim == 2 else beta)

    @property
    def support_(self) -> np.ndarray | None:
        """Kernel expansions: positions of the support points (``beta_j != 0``) at ``s``."""
        if self._beta_path is None:
            return None
        return self._support(self._beta_at()[0])

    @property
    def is_kernel(self) -> bool:
        return self._beta_path is not None

    @property
    def coef(self):
        """Input-space coefficients at ``s``; None for kernel expansions and feature maps."""
        if getattr(self, "_fmap", None) is not None:
            return None
        return super().coef

    # ------------------------------------------------------------------ decision values
    def _kmat(self, X):
        # a tuner that holds the kernel matrix of these rows lends their block (see
        # cohstats.tuning.shared): ``_cross_kernel = (X, K(X, training rows))``, matched by identity
        lent = cross_kernel(self, X)
        if lent is not None:
            return lent
        Z = (np.asarray(X, dtype=np.float64) - self._xcenter) / self._xscale
        return self._kernel(Z, self._Xtrain)

    def _features(self, X):
        """The inputs of the linear engine: X, or its low-rank kernel feature map."""
        X = np.asarray(X, dtype=np.float64)
        if getattr(self, "_fmap", None) is not None:
            return self._fmap((X - self._fxc) / self._fxs)
        return X

    def _decision(self, X, s=None):
        if self.is_kernel:
            beta, b = self._beta_at(s)
            return self._kmat(X) @ beta + b
        c, b = self._coef_at(s)
        return self._features(X) @ c + b

    def _decision_path(self, X):
        X = np.asarray(X, dtype=np.float64)
        if not self.is_kernel:
            X = self._features(X)
        if self.is_kernel:
            if self._beta_path.ndim == 3:
                return np.einsum("mj,ljk->lmk", self._kmat(X), self._beta_path) + self._intercept_path[:, None, :]
            return self._intercept_path[:, None] + self._beta_path @ self._kmat(X).T
        if self._coef_path.ndim == 3:
            return np.einsum("np,lpk->lnk", X, self._coef_path) + self._intercept_path[:, None, :]
        return self._coef_path @ X.T + self._intercept_path[:, None]

    @property
    def _mc_loss(self):
        """(temperature, margin) of the K-class loss: [ZJLY]'s coherence loss at ``rho`` and
        margin 1, or the multinomial deviance (temperature 1, margin 0) for ``loss="logistic"``."""
        return (1.0, 0.0) if self.loss == "logistic" else (self.rho, 1.0)

    def _link_to_prob(self, f):
        if self.n_classes > 2:
            shp = f.shape
            if self.loss == "logistic":  # multinomial logistic regression: softmax of the margins
                return multinomial_proba(f.reshape(-1, shp[-1])).reshape(shp)
            return coherence_proba(f.reshape(-1, shp[-1]), self.rho).reshape(shp)
        return np.asarray(self._lossobj.inverse_link(f), dtype=float)

    def _proba(self, X, s=None, **kw):
        if kw:
            raise TypeError(f"clearn probabilities take no options; got {sorted(kw)}")
        return self._link_to_prob(self._decision(X, s))

    def _proba_path(self, X, **kw):
        if kw:
            raise TypeError(f"clearn probabilities take no options; got {sorted(kw)}")
        return self._link_to_prob(self._decision_path(X))

    # ------------------------------------------------------------------ training facts
    def _train_loss(self, F):
        """Weighted mean training loss for decision values F (..., n) or (..., n, K)."""
        d = self.design
        w = d.weights * (d.nobs / d.weights.sum())
        if self.n_classes > 2:
            F = np.asarray(F)
            out = [
                float(np.mean(w * coherence_loss(Fi, d.y, *self._mc_loss)) * self._mc_scale)
                for Fi in F.reshape(-1, *F.shape[-2:])
            ]
            return np.array(out).reshape(F.shape[:-2])
        F = np.asarray(F) if d.offset is None else np.asarray(F) + d.offset  # f = offset + b + x'beta
        z = F * d.y
        return np.mean(w * self._lossobj.value(z), axis=-1)

    def _train_error(self, F):
        d = self.design
        F = np.asarray(F)
        if self.n_classes > 2:
            pred = np.argmax(F, axis=-1)
            return np.mean(pred != d.y, axis=-1)
        if d.offset is not None:
            F = F + d.offset
        return np.mean(np.where(F > 0, 1.0, -1.0) != d.y, axis=-1)

    def path(self) -> PathFrame:
        """The fitted sequence: lambda, nonzero count, training loss and error, coefficients."""
        F = self._decision_path(self.design.X)
        data = {
            "lambda": self.lambda_,
            "df": self.info["df"],
            "train_loss": self._train_loss(F),
            "train_error": self._train_error(F),
        }
        cols = []
        names = (
            self.xnames
            if getattr(self, "_fmap", None) is None
            else [f"phi[{j}]" for j in range(self._coef_path.shape[1])]
        )
        if not self.is_kernel:
            if self._coef_path.ndim == 2:
                for j, name in enumerate(names):
                    data[name] = self._coef_path[:, j]
                    cols.append(name)
            else:
                for j, name in enumerate(names):
                    for k, c in enumerate(self.classes):
                        key = f"{name}:{c}"
                        data[key] = self._coef_path[:, j, k] + 0.0
                        cols.append(key)
        return PathFrame.build(pd.DataFrame(data), xvar="lambda", coef_columns=cols)

    def plot(self, ax=None, **kw):
        """glmnet-style coefficient paths (linear) or training loss/error (kernel) vs log lambda.

        Returns the matplotlib Axes."""
        pf = self.path()
        if self.is_kernel:
            return pf.plot(columns=["train_loss", "train_error"], ax=ax, **kw)
        return pf.plot(ax=ax, **kw)

    def _summary(self) -> Summary:
        d = self.design
        F = self._decision(d.X)
        s = self.s
        info = {"loss": self.loss}
        if self.loss in ("C", "V"):
            info["rho"] = self.rho
            info["u"] = self.u
        elif self.loss == "hhinge":
            info["delta"] = self.delta
        info.update(
            {
                "expansion": ("linear" if not self.is_kernel else f"kernel {self._kernel.describe()}")
                if getattr(self, "_fmap", None) is None
                else self._fmap.describe(),
                "alpha (l1 share)": self.alpha,
                "lambda range": f"{self.lambda_.max():.4g} .. {self.lambda_.min():.4g} ({len(self.lambda_)} values)",
                "observations": d.nobs,
                "classes": ", ".join(map(str, self.classes)),
                "training error": float(self._train_error(F)),
                "mean training loss": float(self._train_loss(F)),
                "converged": bool(self.converged),
                "coordinate passes": int(self.n_iter),
                "max KKT violation": float(np.nanmax(self.info["kkt"])),
            }
        )
        tables = {}
        notes = []
        if self.is_kernel:
            beta, b = self._beta_at()
            sup = self._support(beta)
            info["support points"] = f"{sup.size} of {d.nobs}"
            rows = pd.Index(self._index(None, d.nobs)[sup], name="row")
            if beta.ndim == 2:
                info["intercept"] = ", ".join(f"{c}: {v:.4g}" for c, v in zip(self.classes, b))
                tab = pd.DataFrame(beta[sup], index=rows, columns=self.classes)
                size = np.linalg.norm(beta[sup], axis=1)
                title = "Support points (largest ||beta_j||; rows sum to zero)"
            else:
                info["intercept"] = float(b)
                tab = pd.DataFrame({"beta": beta[sup]}, index=rows)
                size = np.abs(beta[sup])
                title = "Support points (largest |beta|)"
            tables[title] = tab.iloc[np.argsort(-size, kind="stable")].head(15)
        elif getattr(self, "_fmap", None) is not None:
            c, b = self._coef_at()
            nz = int(np.count_nonzero(np.any(c.reshape(c.shape[0], -1) != 0, axis=1)))
            info["nonzero feature coefficients"] = f"{nz} of {c.shape[0]}"
            info["intercept"] = float(b) if np.ndim(b) == 0 else ", ".join(f"{v:.4g}" for v in b)
        elif self.n_classes > 2:
            c, b = self._coef_at()
            keep = np.any(c != 0, axis=1)
            tab = pd.DataFrame(
                np.vstack([b[None], c[keep]]),
                columns=self.classes,
                index=["(Intercept)"] + [n for n, k in zip(self.xnames, keep) if k],
            )
            tables["Nonzero coefficients (rows sum to zero)"] = tab
            info["predictors in model"] = f"{int(keep.sum())} of {d.p}"
        else:
            c, b = self._coef_at()
            keep = c != 0
            tab = pd.DataFrame(
                {"estimate": np.concatenate([[b], c[keep]])},
                index=["(Intercept)"] + [n for n, k in zip(self.xnames, keep) if k],
            )
            tables["Nonzero coefficients"] = tab
            info["nonzero coefficients"] = f"{int(keep.sum())} of {d.p}"
        if not np.any(np.isclose(self.lambda_, s, rtol=1e-12, atol=0)):
            notes.append("s lies between fitted lambda values: coefficients interpolated linearly")
        if self.standardize:
            notes.append(
                "penalty applied to standardised predictors; coefficients on the original scale"
                if not self.is_kernel
                else "inputs standardised before the kernel"
            )
        if not self.converged:
            notes.append("some lambda values did not converge: increase max_iter")
        return Summary(
            (
                "Multinomial logistic regression (grouped penalty)"
                if self.n_classes > 2 and self.loss == "logistic"
                else f"{_LOSS_TITLE[self.loss]}" + (" (multiclass, grouped penalty)" if self.n_classes > 2 else "")
            ),
            info,
            tables,
            notes,
            call=self.call_string(),
        )

    def _repr_extra(self):
        return f"loss={self.loss}, alpha={self.alpha:g}, {len(self.lambda_)} lambdas, s={self.s:.4g}"


CLearnFit.__module__ = "cohstats.models.clearn"  # its public home (documentation, saved files)
