"""The result of :func:`cohstats.gboost_c` and :func:`cohstats.gboost`: predictions at any step,
staged predictions and errors, summaries (its class path stays ``cohstats.models.gboost``)."""

from __future__ import annotations

import math
import numbers

import numpy as np
import pandas as pd

from cohstats.formula import Design
from cohstats.models._offsets import OffsetProbabilities
from cohstats.results import Fit, PathFrame, Summary
from cohstats.solvers.trees import boost as _b


class _StepPath(PathFrame):
    """Losses and error rates by boosting step; ``plot()`` draws the losses."""

    @property
    def _constructor(self):
        return _StepPath

    def plot(self, columns=None, ax=None, label: bool = True, **kwargs):  # type: ignore[override]
        """Loss by boosting step (training, and validation/test when present); ``columns``
        chooses other columns (e.g. ``["train_error", "test_error"]``). Returns the Axes."""
        if columns is None:
            columns = [c for c in ("train_loss", "val_loss", "test_loss") if c in self.columns]
        columns = list(columns)
        ax = PathFrame.plot(self, columns=columns, ax=ax, label=label, **kwargs)
        kinds = {"loss" if c.endswith("loss") else "error rate" if c.endswith("error") else c for c in columns}
        ax.set_ylabel(" / ".join(sorted(kinds)))
        ax.set_xlabel("boosting step")
        return ax


def _check_step(s, n):
    if isinstance(s, (bool, np.bool_)) or not isinstance(s, numbers.Real):
        raise TypeError(f"s (boosting step) must be a whole number in [1, {n}]; got {s!r}")
    v = float(s)
    if not math.isfinite(v) or v != math.floor(v) or not (1 <= v <= n):
        raise ValueError(f"s (boosting step) must be a whole number in [1, {n}] (the steps fitted); got {s!r}")
    return int(v)


class GBoostFit(OffsetProbabilities, Fit):
    """A boosted sum of regression trees, fitted along the boosting steps.

    Attributes
    ----------
    loss, label : the loss name and the method's name in [ZJLY] Table 2
    rho, rhos : final temperature and the temperature of every round
    n_trees, nodes, shrinkage : rounds run, leaves per tree, shrinkage
    lambda_ : ``1.0, 2.0, ..., n_trees``, the steps fitted (``path_var = "step"``)
    s : the step used for prediction (default: the last; with a validation split, the step
        with the smallest validation loss)
    train_error, train_loss : (n_trees,) weighted training error rate and mean loss after
        each step
    val_loss : (n_trees,) weighted mean validation loss, or None without validation rows
    step_scale : (n_trees,) the step size ``t`` the step control accepted in every round
    converged : False if the margins became non-finite and the fit stopped early
    intercept : the initial margins with ``init="prior"`` (None when boosting starts at
        zero, the paper's algorithm)
    coef, dual_coef, support_ : None (trees have no coefficients)
    """

    title = "Multiclass boosting"
    #: the validated arguments of the call (:class:`cohstats.validation.Settings`); None for a
    #: fit read from a file saved before fits carried them
    settings = None
    path_var = "step"
    dual_coef = None
    support_ = None

    @classmethod
    def _from_arrays(
        cls,
        design,
        *,
        method,
        loss,
        label,
        code,
        g0,
        init,
        rhos,
        nodes,
        shrinkage,
        standardize,
        trees,
        step_scale,
        train_error,
        train_loss,
        val_loss,
        validation_rows,
        lambda_,
        s,
        n_iter,
        converged,
        stopped_early,
        call,
    ) -> "GBoostFit":
        """Build the result from the boosting engine's arrays (every piece of state a keyword).

        ``trees`` holds the node arrays of the ``n_trees`` rounds run (first axis: round),
        ``rhos`` the temperature of every round, ``g0`` the initial margins, ``lambda_`` the
        steps ``1.0 .. n_trees`` and ``s`` the step used for prediction.
        """
        self = cls._blank(design, call)
        self.method = method
        self.loss, self.label, self._code = loss, label, code
        self._g0 = np.ascontiguousarray(g0, dtype=np.float64)
        self.init = init
        self.rhos = rhos
        self.rho = float(rhos[-1])
        self.n_trees = int(len(rhos))
        self.nodes, self.shrinkage, self.standardize = nodes, shrinkage, standardize
        self._trees = trees
        self.step_scale, self.train_error, self.train_loss = step_scale, train_error, train_loss
        self.val_loss = val_loss
        self.validation_rows = validation_rows
        lam = self._checked_lambda(lambda_)
        if lam.size != self.n_trees or any(len(v) != self.n_trees for v in trees.values()):
            raise ValueError(
                f"GBoostFit: lambda_, rhos and trees must all have one entry per round; "
                f"got {lam.size}, {self.n_trees} and "
                f"{sorted({len(v) for v in trees.values()})}"
            )
        self._set_contract(lambda_=lam, s=s, converged=converged, n_iter=n_iter)
        self.stopped_early = bool(stopped_early)
        return self

    @property
    def coef(self):
        return None

    @property
    def intercept(self):
        """The initial margins (``init="prior"``): a Series by class, or for two classes
        the binary margin ``g_2 - g_1``; None when boosting starts at zero."""
        if self.init != "prior":
            return None
        if self.n_classes == 2:
            return float(self._g0[1] - self._g0[0])
        return pd.Series(self._g0, index=self.classes, name="intercept")

    # ------------------------------------------------------------------ internals
    def _step(self, s):
        return int(self.s) if s is None else _check_step(s, self.n_trees)

    def _tree_args(self) -> tuple:
        """The fitted trees and initial margins, in the order the compiled predictors take them."""
        t = self._trees
        return t["feat"], t["thr"], t["left"], t["right"], t["value"], self._g0

    def _margins(self, X, s=None):
        k = self._step(s)
        X = np.ascontiguousarray(X, dtype=np.float64)
        return _b.boost_decision(X, k, self.n_classes, self._code, *self._tree_args())

    def _to_decision(self, G):
        if self.n_classes == 2:
            return G[..., 1] - G[..., 0]
        return G

    def _decision(self, X, s=None):
        """Margins g(x) (n, K); for two classes the binary margin ``g_2 - g_1``."""
        return self._to_decision(self._margins(X, s))

    def _proba(self, X, s=None, **kw):
        if kw:
            raise TypeError(f"gboost probabilities take no extra arguments; got {sorted(kw)}")
        k = self._step(s)
        P = _b.margins_to_proba(self._margins(X, k), self._code, float(self.rhos[k - 1]))
        return P[:, 1] if self.n_classes == 2 else P

    def _link_to_prob(self, f, s=None):
        """P(Y = classes[1]) from binary decision values ``f`` (offsets included) at step ``s``:
        the probabilities of the centred margins ``(-f/2, f/2)``."""
        k = self._step(s)
        f = np.asarray(f, dtype=np.float64)
        G = 0.5 * np.column_stack([-f, f])
        return _b.margins_to_proba(G, self._code, float(self.rhos[k - 1]))[:, 1]

    def _offset_margins(self, newdata, offset):
        """Per-row margins ``(-o/2, o/2)`` of the offsets of ``newdata`` (0.0 without offsets)."""
        off = self.design.new_offset(newdata, offset)
        return 0.0 if off is None else 0.5 * np.column_stack([-off, off])

    def _classify(self, X, s=None, **kw):
        if kw:
            raise TypeError(f"gboost predictions take no extra arguments; got {sorted(kw)}")
        return np.argmax(self._margins(X, s), axis=1)

    def _staged_margins(self, X):
        X = np.ascontiguousarray(X, dtype=np.float64)
        return _b.boost_staged_decision(X, self.n_trees, self.n_classes, self._code, *self._tree_args())

    def _decision_path(self, X):
        """Decision values after every step, steps on the first axis (one pass over the
        trees): (n_trees, n) for two classes, (n_trees, n, K) otherwise."""
        return self._to_decision(self._staged_margins(X))

    def _proba_path(self, X, **kw):
        if kw:
            raise TypeError(f"gboost probabilities take no extra arguments; got {sorted(kw)}")
        S = self._staged_margins(X)
        out = np.stack([_b.margins_to_proba(S[h], self._code, float(self.rhos[h])) for h in range(self.n_trees)])
        return out[..., 1] if self.n_classes == 2 else out

    # ------------------------------------------------------------------ public
    def select(self, s) -> "GBoostFit":
        """A copy that predicts at boosting step ``s`` (a whole number in 1..n_trees)."""
        return self._derive(s=float(_check_step(s, self.n_trees)))

    def staged_predict(self, newdata=None, type: str = "class", offset=None):
        """Yield the prediction after every boosting step (like scikit-learn's).

        Parameters
        ----------
        newdata : data to predict (default: the training data)
        type : ``"class"``, ``"prob"`` or ``"link"``, as :meth:`predict`
        offset : the offsets of the rows of ``newdata`` for a fit given ``offset=`` as an array
        """
        if type not in ("class", "prob", "link"):
            raise ValueError(f"type must be 'class', 'prob' or 'link'; got {type!r}")
        X = self._X(newdata)
        idx = self._index(newdata, X.shape[0])
        S = self._staged_margins(X) + self._offset_margins(newdata, offset)
        labels = np.asarray(self.classes, dtype=object)
        for h in range(self.n_trees):
            G = S[h]
            if type == "class":
                yield pd.Series(labels[np.argmax(G, axis=1)], index=idx, name=self.design.yname)
            elif type == "prob":
                P = _b.margins_to_proba(G, self._code, float(self.rhos[h]))
                yield pd.DataFrame(P, index=idx, columns=self.classes)
            else:
                f = self._to_decision(G)
                if f.ndim == 1:
                    yield pd.Series(f, index=idx, name="link")
                else:
                    yield pd.DataFrame(f, index=idx, columns=self.classes)

    def _test_curves(self, newdata):
        if self.design.offset is not None:
            raise ValueError(
                "test error curves of a fit with offsets are not computed (the compiled curves take no "
                "offsets); use staged_predict(newdata) and score its predictions"
            )
        X = self._X(newdata)
        if isinstance(newdata, Design):
            yt = newdata.y_int
            wt = np.asarray(newdata.weights, float)
        elif isinstance(newdata, pd.DataFrame) and self.design.yname in newdata.columns:
            yt = self.design.code_y(newdata[self.design.yname])
            yt = (yt > 0).astype(np.int64) if self.design.binary else yt.astype(np.int64)
            wt = np.ones(len(yt))
        else:
            raise ValueError(
                f"newdata must contain the response column {self.design.yname!r} to compute test error curves"
            )
        return _b.boost_staged_error(
            np.ascontiguousarray(X, dtype=np.float64),
            np.ascontiguousarray(yt, dtype=np.int64),
            np.ascontiguousarray(wt),
            self.n_trees,
            self.n_classes,
            self._code,
            np.ascontiguousarray(self.rhos),
            *self._tree_args(),
        )

    def path(self, newdata=None) -> PathFrame:
        """Loss and error after every boosting step (a PathFrame with ``xvar = "step"``).

        Columns ``step``, ``rho``, ``train_error``, ``train_loss``, ``val_loss`` (with a
        validation split) and, when ``newdata`` (with the response) is given,
        ``test_error``, ``test_loss``. Its ``plot()`` draws the losses.
        """
        df = pd.DataFrame(
            {
                "step": np.arange(1, self.n_trees + 1),
                "rho": self.rhos,
                "train_error": self.train_error,
                "train_loss": self.train_loss,
            }
        )
        if self.val_loss is not None:
            df["val_loss"] = self.val_loss
        if newdata is not None:
            df["test_error"], df["test_loss"] = self._test_curves(newdata)
        return _StepPath.build(df, xvar="step", log_x=False)

    def plot(self, newdata=None, ax=None, **kwargs):
        """Error rate against boosting step ([ZJLY] Figure 3); the test curve given
        ``newdata`` (with the response). Returns the matplotlib Axes."""
        import matplotlib.pyplot as plt

        pf = self.path(newdata)
        if ax is None:
            _, ax = plt.subplots(figsize=(6.4, 4.2))
        ax.plot(pf["step"], pf["train_error"], lw=1.2, label=f"{self.label} (train)", **kwargs)
        if "test_error" in pf.columns:
            ax.plot(pf["step"], pf["test_error"], lw=1.2, label=f"{self.label} (test)", **kwargs)
        ax.axvline(self.s, color="0.6", ls=":", lw=0.8)
        ax.set_xlabel("boosting step")
        ax.set_ylabel("error rate")
        ax.legend(frameon=False)
        return ax

    def tree_sizes(self) -> np.ndarray:
        """Terminal nodes of every tree, array (n_trees, K)."""
        return (self._trees["n_nodes"] + 1) // 2

    def split_counts(self) -> pd.Series:
        """How often each predictor is used to split, over all trees."""
        f = self._trees["feat"][self._trees["left"] >= 0]
        return pd.Series(np.bincount(f, minlength=self.design.p), index=self.xnames, name="splits")

    def _summary(self) -> Summary:
        H = self.n_trees
        steps = sorted(set([1, *range(10, H + 1, 10), H, int(self.s)]))
        idx = np.array(steps) - 1
        err = pd.DataFrame(
            {
                "step": steps,
                "rho": self.rhos[idx],
                "train_error": self.train_error[idx],
                "train_loss": self.train_loss[idx],
            }
        )
        if self.val_loss is not None:
            err["val_loss"] = self.val_loss[idx]
        sizes = self.tree_sizes().ravel()
        sz = pd.Series(sizes).value_counts().sort_index()
        sizes_df = pd.DataFrame({"leaves": sz.index, "trees": sz.values})
        sc = self.split_counts().sort_values(ascending=False)
        k = int(self.s) - 1
        info = {
            "call": self.call_string(),
            "method": self.label,
            "loss": self.loss,
            "classes": self.n_classes,
            "observations": self.nobs,
            "rows dropped (missing values)": int(self.design.n_dropped),
            "predictors": self.design.p,
            "steps fitted (n_trees)": H,
            "s (step used)": int(self.s),
            "leaves per tree": self.nodes,
            "shrinkage": self.shrinkage,
            "rho": (self.rho if np.all(self.rhos == self.rhos[0]) else f"{self.rhos[0]:g} -> {self.rhos[-1]:g}")
            if self.loss == "coherence"
            else "-",
            "training error at s": float(self.train_error[k]),
            "training loss at s": float(self.train_loss[k]),
            "rounds with a shortened step": int(np.sum(self.step_scale < 1.0)),
        }
        notes = []
        if self.validation_rows is not None:
            notes.append(
                f"{len(self.validation_rows)} rows were held out for validation; the "
                f"trees were fitted to the other {self.nobs - len(self.validation_rows)}"
            )
            if self.stopped_early:
                notes.append(
                    f"early stopping after {H} steps (validation loss did not improve "
                    f"for {self.call.get('n_iter_no_change')} steps)"
                )
        if int(self.s) == H and H > 1 and self.validation_rows is not None:
            notes.append("the selected step is the last one fitted: more steps may help")
        if not self.converged:
            notes.append("the margins became non-finite; the fit stopped early")
        return Summary(
            f"{self.label}: multiclass boosting with {self.nodes}-leaf trees",
            info,
            {
                "loss and error by step": err,
                "tree sizes": sizes_df,
                "splits by predictor": sc.head(20).rename_axis("predictor").reset_index(),
            },
            notes,
        )

    def _repr_extra(self) -> str:
        k = int(self.s) - 1
        return f"{self.label}, n_trees={self.n_trees}, s={int(self.s)}, train error={self.train_error[k]:.4g}"


# saved files name the classes by their old home
GBoostFit.__module__ = _StepPath.__module__ = "cohstats.models.gboost"
