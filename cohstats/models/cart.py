"""CART: a single Gini classification tree pruned by cross-validated cost complexity.

The baseline "CART" of [ZJLY] Table 2 (Breiman, Friedman, Olshen & Stone 1984; R's rpart).
The weakest-link pruning sequence ``ccp_alpha_0 = 0 < ccp_alpha_1 < ...`` is the fit's path
(``lambda_``, ``path_var = "ccp_alpha"``), and ``s`` is the value chosen by ``nfolds``-fold
cross-validation.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
import pandas as pd

from cohstats.formula import NAAction, build_design, capture_context, refuse_no_intercept, refuse_offset
from cohstats.results import Fit, PathFrame, Summary
from cohstats.solvers.trees import grow as _t
from cohstats.validation import Bool, FitSpec, Integer, NoneOr, Options, Real, fit_function

__all__ = ["cart", "CartFit"]


# ============================================================================ validation
_RENAMED = {"alpha": "the cost-complexity parameter is now called 'ccp_alpha'"}


def _check_alpha_value(s, what="s"):
    if isinstance(s, (bool, np.bool_)) or not isinstance(s, numbers.Real):
        raise TypeError(f"{what} (cost-complexity parameter ccp_alpha) must be a number >= 0; got {s!r}")
    v = float(s)
    if not (v >= 0.0) or not math.isfinite(v):
        raise ValueError(f"{what} (cost-complexity parameter ccp_alpha) must be a finite number >= 0; got {s!r}")
    return v


# ============================================================================ fitting
def _cart_tree(X, y, K, w, rows, max_bins, min_node_size, max_depth):
    codes, thr, nb = _t.make_bins(X[rows], max_bins, w[rows])
    return _t.fit_class_tree(codes, nb, thr, y[rows], K, w[rows], min_leaf=min_node_size, max_depth=max_depth)


def _cart_predict(t, X, alpha):
    return _t.cart_leaf_index(
        np.ascontiguousarray(X, dtype=np.float64),
        t["feat"],
        t["thr"],
        t["left"],
        t["right"],
        t["prune_alpha"],
        float(alpha),
    )


_PARAMS = {
    "ccp_alpha": NoneOr(Real(0.0)),
    "nfolds": Integer(2),
    "rule": Options("min", "1se"),
    "min_node_size": Integer(1),
    "max_depth": Integer(1),
    "max_bins": Integer(2, 65535),
    "standardize": Bool(),
    "na_action": NAAction(),
}
# leaf frequencies can be exactly 0 or 1, so the default CV measure is the error rate (rpart's)
_DECLARED = FitSpec("cart", multiclass=True, probabilities=True, default_measure="class")


@fit_function(_DECLARED, _PARAMS, renamed=_RENAMED)
def cart(
    formula,
    data=None,
    *,
    ccp_alpha=None,
    nfolds: int = 10,
    rule: str = "min",
    min_node_size: int = 1,
    max_depth: int = 30,
    max_bins: int = 65535,
    standardize: bool = False,
    weights=None,
    subset=None,
    na_action: str = "omit",
    random_state=None,
    _settings=None,
):
    """A single classification tree (Gini), cost-complexity pruned by cross-validation.

    The tree is grown to purity (or ``min_node_size`` / ``max_depth``), the weakest-link
    pruning sequence ``ccp_alpha_0 = 0 < ccp_alpha_1 < ...`` is computed (tree ``T_k`` is the
    optimal subtree for ``ccp_alpha`` in ``[ccp_alpha_k, ccp_alpha_{k+1})``), and the pruning
    level is chosen by ``nfolds``-fold stratified cross-validation evaluated at the geometric
    means ``sqrt(ccp_alpha_k ccp_alpha_{k+1})`` (as R's rpart), with the minimum CV error
    (``rule="min"``; ties go to the simpler tree) or the one-standard-error rule (``"1se"``).

    Parameters
    ----------
    formula, data : ``"y ~ x1 + x2"`` with a DataFrame, a Design, or a matrix with labels.
    ccp_alpha : None (default: chosen by cross-validation) or a number >= 0: prune at this
        cost-complexity parameter (the cross-validation table is still computed).
        Cost is the weighted misclassification share of the training rows.
    nfolds : CV folds (at least 2; reduced to the smallest class size if needed)
    rule : ``"min"`` or ``"1se"``
    min_node_size, max_depth : growth limits
    max_bins : bins for the split search (default: exact for up to 65535 distinct values)
    standardize : accepted for the package-wide interface; a tree is invariant to centring
        and scaling its predictors, so True and False give the same fit.
    weights, subset, na_action : as :func:`cohstats.formula.build_design`
    random_state : seed of the CV folds

    Returns
    -------
    CartFit
        A path fit along the pruning sequence: ``lambda_`` the ``ccp_alpha`` values,
        ``path_var = "ccp_alpha"``, ``s`` the selected value; ``predict(newdata, s=a)``
        predicts with the tree pruned at ``a``.

    ``fit.settings`` holds the validated arguments of the call (``cart.Settings``, a frozen
    :class:`~cohstats.validation.Settings`): refits, the tuners and saved files read it.

    Examples
    --------
    >>> import numpy as np
    >>> from cohstats.models.cart import cart
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 2)); y = np.where(X[:, 0] > 0.3, "a", "b")
    >>> fit = cart(X, y, random_state=0)
    >>> fit.n_leaves, float(fit.predict(X).eq(y).mean())
    (2, 1.0)
    """
    context = capture_context(1) if isinstance(formula, str) else None
    return _cart(formula, data, context, _settings, weights=weights, subset=subset, na_action=na_action)


def _cart(formula, data, context, settings, *, weights=None, subset=None, na_action="omit"):
    """The fit of :func:`cart` (also ``gboost(loss="cart")``) from its settings, each argument
    checked by the front door: grow the tree and its pruning sequence, cross-validate the
    sequence, build the result."""
    d = build_design(formula, data, weights=weights, subset=subset, na_action=na_action, context=context)
    refuse_offset(d, "cart (a classification tree's leaves are class frequencies, with no link to add an offset to)")
    refuse_no_intercept(d, "cart", "fits a tree, whose leaves are constants with no intercept to remove")
    grown = _prepare(d, settings)
    return _result(d, grown, _solve(d, grown, settings), settings)


def _grow_args(s) -> tuple:
    return int(s.max_bins), int(s.min_node_size), int(s.max_depth)


def _prepare(d, s) -> dict:
    """The full tree, its pruning sequence ``alphas``, the values cross-validation scores
    (geometric means of neighbours, as rpart) and the stratified folds."""
    from cohstats.tuning import make_folds

    y, w = d.y_int, np.asarray(d.weights, float)
    full = _cart_tree(d.X, y, d.n_classes, w, np.arange(len(y)), *_grow_args(s))
    alphas = full["alphas"]
    cand = np.append(np.sqrt(alphas[:-1] * alphas[1:]), alphas[-1]) if len(alphas) > 1 else alphas.copy()
    folds = make_folds(y, int(s.nfolds), random_state=s.random_state)  # stratified
    return dict(full=full, alphas=alphas, cand=cand, folds=folds, w=w)


def _solve(d, grown, s) -> tuple:
    """The weighted cross-validated misclassification rate (and its standard error) of each
    candidate value: one tree per fold, pruned at every value."""
    X, y, K, w, cand, folds = d.X, d.y_int, d.n_classes, grown["w"], grown["cand"], grown["folds"]
    n = len(y)
    miss = np.zeros((len(cand), n))
    for f in range(int(folds.max()) + 1):
        tr = np.flatnonzero(folds != f)
        te = np.flatnonzero(folds == f)
        t = _cart_tree(X, y, K, w, tr, *_grow_args(s))
        cls = np.argmax(t["counts"], axis=1)
        for a, alpha in enumerate(cand):
            leaf = _cart_predict(t, X[te], alpha)
            miss[a, te] = (cls[leaf] != y[te]) * w[te]
    cv_err = miss.sum(1) / w.sum()
    return cv_err, np.sqrt(np.maximum(cv_err * (1 - cv_err), 0) / n)


def _result(d, grown, cv, s) -> "CartFit":
    """The pruning table and the chosen value (the minimum CV error, ties to the simpler tree, or
    the one-standard-error rule; a given ``ccp_alpha`` overrides) -> the result."""
    full, alphas, cand = grown["full"], grown["alphas"], grown["cand"]
    cv_err, cv_se = cv
    ccp_alpha = None if s.ccp_alpha is None else float(s.ccp_alpha)
    best = len(cand) - 1 - int(np.argmin(cv_err[::-1]))  # ties -> the larger alpha (simpler tree)
    if s.rule == "1se":
        ok = np.flatnonzero(cv_err <= cv_err[best] + cv_se[best])
        best = int(ok.max())
    call = dict(nfolds=int(s.nfolds), rule=s.rule)
    if ccp_alpha is not None:
        call["ccp_alpha"] = ccp_alpha
    size = np.array([_n_leaves_at(full, a) for a in alphas])
    cv_table = pd.DataFrame(
        {
            "ccp_alpha": alphas,
            "ccp_alpha_cv": cand,
            "leaves": size,
            "train_error": [_train_err(full, a) for a in alphas],
            "cv_error": cv_err,
            "cv_se": cv_se,
        }
    )
    return CartFit._from_arrays(
        d,
        tree=full,
        cv_table=cv_table,
        lambda_=np.asarray(alphas, dtype=float).copy(),
        cv_index=int(best),
        s=float(alphas[best]) if ccp_alpha is None else ccp_alpha,
        nfolds=int(grown["folds"].max()) + 1,
        standardize=bool(s.standardize),
        call=call,
    )


def _n_leaves_at(t, alpha):
    left, pa = t["left"], t["prune_alpha"]
    cnt = 0
    stack = [0]
    while stack:
        v = stack.pop()
        if left[v] < 0 or pa[v] <= alpha:
            cnt += 1
        else:
            stack += [left[v], t["right"][v]]
    return cnt


def _train_err(t, alpha):
    left, pa = t["left"], t["prune_alpha"]
    err = 0.0
    stack = [0]
    while stack:
        v = stack.pop()
        if left[v] < 0 or pa[v] <= alpha:
            err += t["node_err"][v]
        else:
            stack += [left[v], t["right"][v]]
    return err


class _PrunePath(PathFrame):
    """The pruning sequence; ``plot()`` draws the error rates against ``ccp_alpha``."""

    @property
    def _constructor(self):
        return _PrunePath

    def plot(self, columns=None, ax=None, label: bool = True, **kwargs):  # type: ignore[override]
        if columns is None:
            columns = [c for c in ("train_error", "cv_error") if c in self.columns]
        ax = PathFrame.plot(self, columns=columns, ax=ax, label=label, **kwargs)
        ax.set_ylabel("error rate")
        return ax


class CartFit(Fit):
    """A pruned classification tree along its pruning sequence.

    Attributes
    ----------
    lambda_ : (k,) the cost-complexity values ``ccp_alpha`` of the pruning sequence
        (increasing; 0 is the full tree); ``path_var = "ccp_alpha"``
    s : the selected ``ccp_alpha`` (by cross-validation unless given to :func:`cart`)
    cv_table : cross-validation results along the sequence
    n_leaves : terminal nodes of the tree pruned at ``s``
    coef, intercept, dual_coef, support_ : None (a tree has none of these)
    """

    method = "cart"
    title = "Classification tree"
    #: the validated arguments of the call (:class:`cohstats.validation.Settings`); None for a
    #: fit read from a file saved before fits carried them
    settings = None
    label = "CART"
    path_var = "ccp_alpha"
    dual_coef = None
    support_ = None

    @classmethod
    def _from_arrays(
        cls, design, *, tree, cv_table, lambda_, cv_index, s, nfolds, standardize, call, converged=True, n_iter=1
    ) -> "CartFit":
        """Build the result from the grown tree (every piece of state a keyword argument).

        ``tree`` the full tree with its pruning sequence, ``lambda_`` that sequence, ``cv_table``
        the cross-validation along it and ``cv_index`` the row chosen, ``s`` the selected
        ``ccp_alpha``. Growing and pruning a tree is exact: ``converged`` is True and
        ``n_iter`` 1.
        """
        self = cls._blank(design, call)
        self.tree = tree
        self.cv_table = cv_table
        self.cv_index = int(cv_index)
        self.nfolds = int(nfolds)
        self.standardize = standardize
        self._set_contract(lambda_=lambda_, s=s, converged=converged, n_iter=n_iter)
        return self

    @property
    def coef(self):
        return None

    @property
    def intercept(self):
        return None

    @property
    def ccp_alpha(self) -> float:
        """The selected cost-complexity parameter (``s``)."""
        return float(self.s)

    @property
    def n_leaves(self) -> int:
        return _n_leaves_at(self.tree, self.s)

    def _alpha(self, s):
        return float(self.s) if s is None else _check_alpha_value(s)

    def _leaf(self, X, s=None):
        return _cart_predict(self.tree, X, self._alpha(s))

    def _decision(self, X, s=None):
        P = self._proba_full(X, s)
        return P[:, 1] - P[:, 0] if self.n_classes == 2 else P

    def _proba_full(self, X, s=None):
        c = self.tree["counts"][self._leaf(X, s)]
        return c / c.sum(1, keepdims=True)

    def _proba(self, X, s=None, **kw):
        """Class proportions of the training observations in the leaf."""
        if kw:
            raise TypeError(f"cart probabilities take no extra arguments; got {sorted(kw)}")
        P = self._proba_full(X, s)
        return P[:, 1] if self.n_classes == 2 else P

    def _classify(self, X, s=None, **kw):
        if kw:
            raise TypeError(f"cart predictions take no extra arguments; got {sorted(kw)}")
        return np.argmax(self.tree["counts"][self._leaf(X, s)], axis=1)

    def select(self, s) -> "CartFit":
        """A copy pruned at ``ccp_alpha = s``."""
        return self._derive(s=_check_alpha_value(s))

    def path(self) -> PathFrame:
        """Training and CV error along the pruning sequence (xvar ``ccp_alpha``)."""
        return _PrunePath.build(self.cv_table.copy(), xvar="ccp_alpha", log_x=False)

    def plot(self, ax=None):
        """Cross-validated error rate against tree size (rpart's ``plotcp``); returns Axes."""
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots(figsize=(6.4, 4.2))
        t = self.cv_table
        ax.errorbar(t["leaves"], t["cv_error"], yerr=t["cv_se"], marker="o", ms=3, lw=1)
        ax.axvline(self.n_leaves, color="0.6", ls="--", lw=0.8)
        ax.set_xscale("log")
        ax.set_xlabel("terminal nodes")
        ax.set_ylabel(f"{self.nfolds}-fold CV error rate")
        return ax

    def _summary(self) -> Summary:
        info = {
            "call": self.call_string(),
            "method": "CART (Gini, cost-complexity pruned)",
            "classes": self.n_classes,
            "observations": self.nobs,
            "predictors": self.design.p,
            "CV folds": self.nfolds,
            "s (ccp_alpha)": float(self.s),
            "terminal nodes": self.n_leaves,
            "full tree leaves": int(self.cv_table["leaves"].iloc[0]),
            "training error": _train_err(self.tree, self.s),
            "rows dropped (missing values)": int(self.design.n_dropped),
        }
        return Summary("CART classification tree", info, {"pruning sequence": self.cv_table})

    def _repr_extra(self) -> str:
        return f"{self.n_leaves} leaves, ccp_alpha={self.s:.4g}"


# the settings classes by name, for saved files (cohstats.persist resolves classes by path)
CartSettings = cart.Settings
