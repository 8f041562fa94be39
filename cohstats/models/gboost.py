"""GentleBoost.C and multiclass boosting baselines ([ZJLY]; SPEC 5.4-5.5), and CART.

:func:`gboost_c` fits [ZJLY] Algorithm 1 (multiclass GentleBoost with the coherence loss);
:func:`gboost` runs the same engine with the baselines of the paper's Table 2
(``loss="logit"``: multiclass LogitBoost, ``"exp"``: GentleBoost.E, ``"adaboost_mh"``: real
AdaBoost.MH) and forwards ``loss="cart"`` to :func:`cart`, a single Gini classification tree
pruned by cross-validated cost complexity.
"""
from __future__ import annotations

import math
import numbers
import warnings

import numpy as np
import pandas as pd

from cohstats.formula import Design, build_design, capture_context
from cohstats.results import Fit, PathFrame, Summary
from cohstats.solvers import boost as _b
from cohstats.solvers import trees as _t

__all__ = ["gboost", "gboost_c", "cart", "GBoostFit", "CartFit"]

_LOSSES = {
    "coherence": (_b.LOSS_COH, "GentleBoost.C"),
    "logit": (_b.LOSS_LOGIT, "MulLogitBoost"),
    "exp": (_b.LOSS_EXP, "GentleBoost.E"),
    "adaboost_mh": (_b.LOSS_MH, "AdaBoost.MH"),
}
_T_MIN = 1e-3


# ============================================================================ validation
def _check_int(name, v, lo, hi=None):
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        raise TypeError(f"{name} must be an integer; got {v!r}")
    v = int(v)
    if v < lo or (hi is not None and v > hi):
        rng = f">= {lo}" if hi is None else f"in [{lo}, {hi}]"
        raise ValueError(f"{name} must be {rng}; got {v}")
    return v


def _check_pos(name, v, allow_inf=False):
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise TypeError(f"{name} must be a number; got {v!r}")
    v = float(v)
    if not (v > 0) or (not allow_inf and not math.isfinite(v)):
        raise ValueError(f"{name} must be a positive finite number; got {v}")
    return v


def _schedule(T, anneal, H):
    T = _check_pos("T", T)
    if anneal is None:
        Ts = np.full(H, T)
    elif isinstance(anneal, numbers.Real) and not isinstance(anneal, bool):
        T_end = _check_pos("anneal", anneal)
        Ts = T * (T_end / T) ** (np.arange(H) / max(H - 1, 1))
    else:
        Ts = np.asarray(anneal, dtype=float)
        if Ts.shape != (H,):
            raise ValueError(f"anneal must be None, a final temperature, or an array of H={H} "
                             f"temperatures; got shape {Ts.shape}")
        if not np.all(np.isfinite(Ts)) or np.any(Ts <= 0):
            raise ValueError("anneal temperatures must be positive and finite")
    if Ts.min() < _T_MIN:
        raise ValueError(f"temperatures below {_T_MIN} are refused: the coherence weights are "
                         f"one-hot to machine precision and the Newton steps degenerate "
                         f"([ZJLY] Section 5 warns of this); got min T = {Ts.min():g}")
    return np.ascontiguousarray(Ts)


def _design(formula, data, weights, subset, na_action, context):
    return build_design(formula, data, weights=weights, subset=subset, na_action=na_action,
                        context=context)


# ============================================================================ gboost
def gboost(formula, data=None, *, loss: str = "coherence", T: float = 1.0, H: int = 100,
           nodes: int = 8, shrinkage: float = 1.0, anneal=None, init_beta: str = "uniform",
           centre: str = "increment", min_node_size: int = 1, max_depth: int | None = None,
           max_bins: int = 255, z_max: float = 4.0, w_floor: float = 1e-10, weights=None,
           subset=None, na_action: str = "omit", random_state=None, **cart_args):
    """Multiclass boosting with 8-leaf regression trees: GentleBoost.C and its baselines.

    Parameters
    ----------
    formula : str, Design, or array
        ``"y ~ x1 + x2"`` / ``"y ~ ."`` with ``data``; a :class:`~cohstats.formula.Design`; or
        a predictor matrix with the labels in ``data``.
    data : DataFrame (formula input) or labels (matrix input).
    loss : ``"coherence"`` (GentleBoost.C, [ZJLY] Algorithm 1), ``"logit"`` (multiclass
        LogitBoost, Friedman, Hastie & Tibshirani 2000), ``"exp"`` (GentleBoost.E, Zou, Zhu &
        Hastie 2008), ``"adaboost_mh"`` (real AdaBoost.MH, Schapire & Singer 1999) or
        ``"cart"`` (forwarded to :func:`cart`; ``cart_args`` go there).
    T : temperature of the coherence loss (``loss="coherence"`` only; [ZJLY] use 1).
    H : number of boosting rounds (paper: 100).
    nodes : terminal nodes of each regression tree (paper: 8), grown best first (SPEC D18).
    shrinkage : factor applied to every tree (1 = the paper's algorithm).
    anneal : ``None`` (constant ``T``), a final temperature (geometric schedule from ``T`` to
        it over the ``H`` rounds) or an array of ``H`` temperatures. Temperatures below 1e-3
        are refused; small temperatures are otherwise handled by the stable log-sum-exp forms,
        the weight floor ``w_floor`` and the response cap ``z_max``.
    init_beta : ``"uniform"`` (paper: ``beta_j = 1/m`` in the first round, i.e. a LogitBoost
        step) or ``"loss"`` (the coherence weights (5) at ``g = 0``). SPEC D17.
    centre : ``"increment"`` (centre and scale by ``(m-1)/m`` each round's trees, SPEC D17) or
        ``"accumulated"`` (the literal reading of the paper's step (b)).
    min_node_size : minimum number of observations in a terminal node (SPEC D18: 1).
    max_depth : optional depth limit of the trees (default: none; ``nodes=8, max_depth=3``
        gives balanced-depth trees).
    max_bins : features are binned into at most this many bins for the split search (a
        feature with fewer distinct values is searched exactly).
    z_max, w_floor : response cap and weight floor of the Newton steps (LogitBoost practice).
    weights : observation weights (array or column name).
    subset, na_action : as :func:`cohstats.formula.build_design`.
    random_state : seed (int, Generator or None) of the order in which each tree searches the
        features: among exactly tied splits (common once weights reach the floor, or with
        integer-valued features) the first feature in that order wins, as in scikit-learn's
        trees. ``None`` draws fresh entropy (fits then differ only in such ties); ``-1``
        searches in column order. ``loss="cart"`` uses it for the CV folds.

    Returns
    -------
    GBoostFit
        A path fit along the boosting steps (``lambda_ = 1..H``, ``s = H``): ``predict(newdata,
        type="class" | "prob" | "link", s=step)``, ``staged_predict``, ``path(newdata)``,
        ``summary()``, ``plot(newdata)``.

    Notes
    -----
    Probabilities: eq (8) of [ZJLY] (Theorem 1) for the coherence loss, the softmax of the
    margins for ``"logit"`` and ``"exp"`` (their population minimisers), and the normalised
    one-versus-rest ``expit(2 F_j)`` for AdaBoost.MH (its per-class population minimiser;
    normalisation makes the rows sum to one).

    AdaBoost.MH is run with one tree per class and round (each tree is the weighted
    least-squares -- equivalently weighted Gini -- tree for the +-1 labels of its class, with
    the real-AdaBoost leaf values ``0.5 log((W+ + eps)/(W- + eps))``, ``eps = 1/(n m)``, SPEC
    D19); the weights ``D_ij`` are normalised jointly over all ``n m`` pairs.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from cohstats.models.gboost import gboost_c
    >>> rng = np.random.default_rng(1)
    >>> df = pd.DataFrame(rng.normal(size=(150, 2)), columns=["x1", "x2"])
    >>> df["y"] = np.select([df.x1 > 0.5, df.x2 > 0], ["a", "b"], "c")
    >>> fit = gboost_c("y ~ x1 + x2", df, H=20)
    >>> p = fit.predict(df, type="prob")
    >>> bool(np.allclose(p.sum(axis=1), 1.0)), bool(fit.path()["train_error"].iloc[-1] < 0.05)
    (True, True)
    """
    context = capture_context(1) if isinstance(formula, str) else None
    return _gboost(formula, data, context, loss=loss, T=T, H=H, nodes=nodes,
                   shrinkage=shrinkage, anneal=anneal, init_beta=init_beta, centre=centre,
                   min_node_size=min_node_size, max_depth=max_depth, max_bins=max_bins,
                   z_max=z_max, w_floor=w_floor, weights=weights, subset=subset,
                   na_action=na_action, random_state=random_state, **cart_args)


def _gboost(formula, data, context, *, loss, T, H, nodes, shrinkage, anneal, init_beta, centre,
            min_node_size, max_depth, max_bins, z_max, w_floor, weights, subset, na_action,
            random_state, **cart_args):
    if not isinstance(loss, str) or (loss not in _LOSSES and loss != "cart"):
        raise ValueError(f"loss must be one of {sorted([*_LOSSES, 'cart'])}; got {loss!r}")
    if loss == "cart":
        return _cart(formula, data, context, weights=weights, subset=subset,
                     na_action=na_action, random_state=random_state, **cart_args)
    if cart_args:
        raise TypeError(f"unexpected arguments for loss={loss!r}: {sorted(cart_args)}")
    code, label = _LOSSES[loss]
    H = _check_int("H", H, 1)
    nodes = _check_int("nodes", nodes, 2)
    min_node_size = _check_int("min_node_size", min_node_size, 1)
    max_depth = 64 if max_depth is None else _check_int("max_depth", max_depth, 1, 64)
    max_bins = _check_int("max_bins", max_bins, 2, 65535)
    shrinkage = _check_pos("shrinkage", shrinkage)
    z_max = _check_pos("z_max", z_max, allow_inf=True)
    w_floor = _check_pos("w_floor", w_floor)
    if loss != "coherence" and (T != 1.0 or anneal is not None):
        raise ValueError(f"T and anneal apply to loss='coherence' only; got loss={loss!r}")
    Ts = _schedule(T, anneal, H)
    if init_beta not in ("uniform", "loss"):
        raise ValueError(f"init_beta must be 'uniform' or 'loss'; got {init_beta!r}")
    if centre not in ("increment", "accumulated"):
        raise ValueError(f"centre must be 'increment' or 'accumulated'; got {centre!r}")
    d = _design(formula, data, weights, subset, na_action, context)
    call = dict(loss=loss, T=T, H=H, nodes=nodes, shrinkage=shrinkage)
    if anneal is not None:
        call["anneal"] = anneal if np.ndim(anneal) == 0 else "schedule"
    if init_beta != "uniform":
        call["init_beta"] = init_beta
    if centre != "increment":
        call["centre"] = centre
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool) \
            and int(random_state) == -1:
        seed = -1
    else:
        try:
            seed = int(np.random.default_rng(random_state).integers(0, 2 ** 31 - 1))
        except (TypeError, ValueError) as e:
            raise TypeError(f"random_state must be None, an integer or a numpy Generator; "
                            f"got {random_state!r}") from e
    call["random_state"] = random_state
    return _fit_boost(d, code, label, Ts, H, nodes, shrinkage, init_beta == "uniform",
                      centre == "accumulated", min_node_size, max_depth, max_bins, z_max,
                      w_floor, call, seed)


def gboost_c(formula, data=None, *, T: float = 1.0, H: int = 100, nodes: int = 8,
             shrinkage: float = 1.0, anneal=None, init_beta: str = "uniform",
             centre: str = "increment", min_node_size: int = 1, max_depth: int | None = None,
             max_bins: int = 255, z_max: float = 4.0, w_floor: float = 1e-10, weights=None,
             subset=None, na_action: str = "omit", random_state=None):
    """GentleBoost.C: multiclass boosting with the coherence loss ([ZJLY] Algorithm 1).

    Each round fits, for every class ``j``, an ``nodes``-leaf weighted least-squares
    regression tree to the Newton working response of the coherence loss
    ``C(g, c) = T log(1 + sum_{j != c} exp((1 + g_j - g_c)/T))``:
    ``z_ij = T (I[j = c_i] - beta_j) / (beta_j (1 - beta_j))`` with weights
    ``beta_j (1 - beta_j)`` (``beta`` the soft weights of eq (5)); the trees are centred and
    scaled by ``(m - 1)/m`` and added to the margins ``g``. Probabilities come from Theorem 1,
    eq (8). See :func:`gboost` for every argument (it is ``gboost(loss="coherence")``).

    Examples
    --------
    >>> import numpy as np
    >>> from cohstats.models.gboost import gboost_c
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(120, 3)); y = np.where(X[:, 0] > 0, "up", "down")
    >>> fit = gboost_c(X, y, H=10)
    >>> fit.predict(X[:3], type="prob").round(3).shape
    (3, 2)
    """
    context = capture_context(1) if isinstance(formula, str) else None
    return _gboost(formula, data, context, loss="coherence", T=T, H=H, nodes=nodes,
                   shrinkage=shrinkage, anneal=anneal, init_beta=init_beta, centre=centre,
                   min_node_size=min_node_size, max_depth=max_depth, max_bins=max_bins,
                   z_max=z_max, w_floor=w_floor, weights=weights, subset=subset,
                   na_action=na_action, random_state=random_state)


def _fit_boost(d, code, label, Ts, H, nodes, shrinkage, init_uniform, centre_acc,
               min_node_size, max_depth, max_bins, z_max, w_floor, call, seed=-1):
    y = np.ascontiguousarray(d.y_int)
    m = d.n_classes
    if m < 2:
        raise ValueError(f"the response needs at least two classes; got {d.classes!r}")
    X = d.X
    n, p = X.shape
    if p == 0:
        raise ValueError("the model has no predictors")
    sw = np.ascontiguousarray(d.weights, dtype=np.float64)
    codes, thresholds, n_bins = _t.make_bins(X, max_bins, sw)
    mn = 2 * nodes - 1
    depth = max_depth
    hist = np.zeros((_t._n_slots(nodes, depth, True), p, int(n_bins.max()), 3))
    feat = np.full((H, m, mn), -1, np.int64)
    sbin = np.full((H, m, mn), -1, np.int64)
    shi = np.full((H, m, mn), -1, np.int64)
    left = np.full((H, m, mn), -1, np.int64)
    right = np.full((H, m, mn), -1, np.int64)
    value = np.zeros((H, m, mn))
    n_nodes = np.zeros((H, m), np.int64)
    train_err = np.full(H, np.nan)
    train_loss = np.full(H, np.nan)
    G = np.zeros((n, m))
    rounds, finite = _b.boost_fit(codes, n_bins, y, sw, m, H, code, Ts, shrinkage, nodes,
                                  min_node_size, depth, z_max, w_floor, centre_acc,
                                  init_uniform, seed, hist, feat, sbin, shi, left, right, value, n_nodes,
                                  train_err, train_loss, G)
    thr = np.full((H, m, mn), np.nan)
    internal = left >= 0
    thr[internal] = 0.5 * (thresholds[feat[internal], sbin[internal]]
                           + thresholds[feat[internal], shi[internal]])
    fit = GBoostFit(d, call)
    fit.loss = [k for k, v in _LOSSES.items() if v[0] == code][0]
    fit.method = "gboost_c" if code == _b.LOSS_COH else "gboost"
    fit.label = label
    fit._code = code
    fit._centre_acc = bool(centre_acc)
    fit.Ts = Ts[:rounds].copy()
    fit.T = float(Ts[rounds - 1]) if rounds else float(Ts[0])
    fit.H = int(rounds)
    fit.nodes = nodes
    fit.shrinkage = shrinkage
    fit._trees = dict(feat=feat[:rounds], thr=thr[:rounds], left=left[:rounds],
                      right=right[:rounds], value=value[:rounds], n_nodes=n_nodes[:rounds])
    fit.train_error = train_err[:rounds]
    fit.train_loss = train_loss[:rounds]
    fit.lambda_ = np.arange(1, rounds + 1, dtype=float)
    fit.s = float(rounds)
    fit.n_iter = int(rounds)
    fit.converged = bool(finite)
    if not finite:
        from cohstats import ConvergenceWarning
        warnings.warn(f"{label}: the margins became non-finite in round {rounds + 1}; the fit "
                      f"stops after {rounds} rounds (increase T or w_floor, or decrease z_max "
                      f"or shrinkage)", ConvergenceWarning, stacklevel=3)
    return fit


class GBoostFit(Fit):
    """A boosted sum of regression trees, fitted along the boosting steps.

    Attributes
    ----------
    loss, label : the loss name and the method's name in [ZJLY] Table 2
    T, Ts : final temperature and the temperature of every round
    H, nodes, shrinkage : rounds run, leaves per tree, shrinkage
    train_error, train_loss : (H,) training error rate and mean loss after each round
    lambda_, s : the step sequence ``1..H`` and the step used for prediction (default ``H``)
    """

    title = "Multiclass boosting"

    @property
    def coef(self):
        raise AttributeError("a boosted sum of trees has no linear coefficients; see "
                             "split_counts(), tree_sizes() and path()")

    # ------------------------------------------------------------------ internals
    def _step(self, s):
        s = self.s if s is None else s
        if isinstance(s, bool) or not isinstance(s, numbers.Real) or not (1 <= s <= self.H):
            raise ValueError(f"s (boosting step) must be a number in [1, {self.H}]; got {s!r}")
        return float(s)

    def _margins(self, X, s=None):
        s = self._step(s)
        t = self._trees
        lo = int(math.floor(s))
        G = _b.boost_decision(np.ascontiguousarray(X, dtype=np.float64), lo, self.n_classes,
                              self._code, self._centre_acc, t["feat"], t["thr"], t["left"],
                              t["right"], t["value"])
        if s > lo:  # linear interpolation between steps (path-fit contract)
            G1 = _b.boost_decision(np.ascontiguousarray(X, dtype=np.float64), lo + 1,
                                   self.n_classes, self._code, self._centre_acc, t["feat"],
                                   t["thr"], t["left"], t["right"], t["value"])
            G = G + (s - lo) * (G1 - G)
        return G

    def _T_at(self, s):
        return float(self.Ts[int(math.ceil(self._step(s))) - 1])

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
        G = self._margins(X, s)
        P = _b.margins_to_proba(G, self._code, self._T_at(s))
        return P[:, 1] if self.n_classes == 2 else P

    def _staged_margins(self, X):
        t = self._trees
        return _b.boost_staged_decision(np.ascontiguousarray(X, dtype=np.float64), self.H,
                                        self.n_classes, self._code, self._centre_acc,
                                        t["feat"], t["thr"], t["left"], t["right"], t["value"])

    def _decision_path(self, X):
        return self._to_decision(self._staged_margins(X))

    def _proba_path(self, X, **kw):
        S = self._staged_margins(X)
        out = np.stack([_b.margins_to_proba(S[h], self._code, float(self.Ts[h]))
                        for h in range(self.H)])
        return out[..., 1] if self.n_classes == 2 else out

    # ------------------------------------------------------------------ public
    def staged_predict(self, newdata=None, type: str = "class"):
        """Yield the prediction after every boosting step (like scikit-learn's).

        Parameters
        ----------
        newdata : data to predict (default: the training data)
        type : ``"class"``, ``"prob"`` or ``"link"``, as :meth:`predict`
        """
        if type not in ("class", "prob", "link"):
            raise ValueError(f"type must be 'class', 'prob' or 'link'; got {type!r}")
        X = self._X(newdata)
        idx = self._index(newdata, X.shape[0])
        S = self._staged_margins(X)
        labels = np.asarray(self.classes, dtype=object)
        for h in range(self.H):
            G = S[h]
            if type == "class":
                yield pd.Series(labels[np.argmax(G, axis=1)], index=idx, name=self.design.yname)
            elif type == "prob":
                P = _b.margins_to_proba(G, self._code, float(self.Ts[h]))
                yield pd.DataFrame(P, index=idx, columns=self.classes)
            else:
                f = self._to_decision(G)
                if f.ndim == 1:
                    yield pd.Series(f, index=idx, name="link")
                else:
                    yield pd.DataFrame(f, index=idx, columns=self.classes)

    def _test_curves(self, newdata):
        X = self._X(newdata)
        if isinstance(newdata, Design):
            yt = newdata.y_int
        elif isinstance(newdata, pd.DataFrame) and self.design.yname in newdata.columns:
            yt = self.design.code_y(newdata[self.design.yname])
            yt = (yt > 0).astype(np.int64) if self.design.binary else yt.astype(np.int64)
        else:
            raise ValueError(f"newdata must contain the response column "
                             f"{self.design.yname!r} to compute test error curves")
        t = self._trees
        err, ls = _b.boost_staged_error(np.ascontiguousarray(X, dtype=np.float64),
                                        np.ascontiguousarray(yt, dtype=np.int64), self.H,
                                        self.n_classes, self._code, self._centre_acc,
                                        np.ascontiguousarray(self.Ts), t["feat"], t["thr"],
                                        t["left"], t["right"], t["value"])
        return err, ls

    def path(self, newdata=None) -> PathFrame:
        """Error and loss after every boosting step (PathFrame with ``xvar = "step"``).

        Columns ``step``, ``T``, ``train_error``, ``train_loss`` and, when ``newdata`` (with
        the response) is given, ``test_error``, ``test_loss``.
        """
        df = pd.DataFrame({"step": np.arange(1, self.H + 1), "T": self.Ts,
                           "train_error": self.train_error, "train_loss": self.train_loss})
        if newdata is not None:
            df["test_error"], df["test_loss"] = self._test_curves(newdata)
        return PathFrame.build(df, xvar="step", coef_columns=[], log_x=False)

    def plot(self, newdata=None, ax=None, **kwargs):
        """Error rate against boosting step ([ZJLY] Figure 3); test curve given ``newdata``."""
        import matplotlib.pyplot as plt

        pf = self.path(newdata)
        if ax is None:
            _, ax = plt.subplots(figsize=(6.4, 4.2))
        ax.plot(pf["step"], pf["train_error"], lw=1.2, label=f"{self.label} (train)", **kwargs)
        if "test_error" in pf.columns:
            ax.plot(pf["step"], pf["test_error"], lw=1.2, label=f"{self.label} (test)", **kwargs)
        ax.set_xlabel("Boosting steps")
        ax.set_ylabel("Error rate")
        ax.legend(frameon=False)
        return ax

    def tree_sizes(self) -> np.ndarray:
        """Terminal nodes of every tree, array (H, K)."""
        return (self._trees["n_nodes"] + 1) // 2

    def split_counts(self) -> pd.Series:
        """How often each predictor is used to split, over all trees."""
        f = self._trees["feat"][self._trees["left"] >= 0]
        return pd.Series(np.bincount(f, minlength=self.design.p), index=self.xnames,
                         name="splits")

    def _summary(self) -> Summary:
        H = self.H
        steps = sorted(set([1, *range(10, H + 1, 10), H]))
        err = pd.DataFrame({"step": steps, "T": self.Ts[np.array(steps) - 1],
                            "train_error": self.train_error[np.array(steps) - 1],
                            "train_loss": self.train_loss[np.array(steps) - 1]})
        sizes = self.tree_sizes().ravel()
        sz = pd.Series(sizes).value_counts().sort_index()
        sizes_df = pd.DataFrame({"leaves": sz.index, "trees": sz.values})
        sc = self.split_counts().sort_values(ascending=False)
        info = {"method": self.label, "loss": self.loss, "classes": self.n_classes,
                "n": self.nobs, "predictors": self.design.p, "rounds (H)": H,
                "leaves per tree": self.nodes, "shrinkage": self.shrinkage,
                "T": (self.T if np.all(self.Ts == self.Ts[0])
                      else f"{self.Ts[0]:g} -> {self.Ts[-1]:g}") if self.loss == "coherence"
                else "-", "training error": float(self.train_error[-1]),
                "training loss": float(self.train_loss[-1])}
        notes = []
        if not self.converged:
            notes.append("the margins became non-finite; the fit stopped early")
        return Summary(f"{self.label}: multiclass boosting with {self.nodes}-leaf trees", info,
                       {"error by step": err, "tree sizes": sizes_df,
                        "splits by predictor": sc.head(20).rename_axis("predictor")
                        .reset_index()}, notes)

    def _repr_extra(self) -> str:
        return f"{self.label}, H={self.H}, train error={self.train_error[-1]:.4g}"


# ============================================================================ CART
def _cart_tree(X, y, K, w, rows, max_bins, min_node_size, max_depth):
    codes, thr, nb = _t.make_bins(X[rows], max_bins, w[rows])
    t = _t.fit_class_tree(codes, nb, thr, y[rows], K, w[rows], min_leaf=min_node_size,
                          max_depth=max_depth)
    return t


def _cart_predict(t, X, alpha):
    leaf = _t.cart_leaf_index(np.ascontiguousarray(X, dtype=np.float64), t["feat"], t["thr"],
                              t["left"], t["right"], t["prune_alpha"], float(alpha))
    return leaf


def cart(formula, data=None, *, nfolds: int = 10, rule: str = "min", min_node_size: int = 1,
         max_depth: int = 30, max_bins: int = 65535, weights=None, subset=None,
         na_action: str = "omit", random_state=None):
    """A single classification tree (Gini), cost-complexity pruned by cross-validation.

    The tree is grown to purity (or ``min_node_size`` / ``max_depth``), the weakest-link
    pruning sequence ``alpha_0 = 0 < alpha_1 < ...`` is computed, and the pruning level is
    chosen by ``nfolds``-fold stratified cross-validation at the geometric means
    ``sqrt(alpha_k alpha_{k+1})`` (as R's rpart), with the minimum CV error (``rule="min"``,
    SPEC D19; ties go to the simpler tree) or the one-standard-error rule (``"1se"``).

    Parameters
    ----------
    formula, data, weights, subset, na_action : as :func:`gboost`
    nfolds : CV folds (at least 2; reduced to the smallest class size if needed, SPEC D8)
    rule : ``"min"`` or ``"1se"``
    min_node_size, max_depth : growth limits
    max_bins : bins for the split search (default: exact for up to 65535 distinct values)
    random_state : seed of the CV folds

    Returns
    -------
    CartFit

    Examples
    --------
    >>> import numpy as np
    >>> from cohstats.models.gboost import cart
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 2)); y = np.where(X[:, 0] > 0.3, "a", "b")
    >>> fit = cart(X, y, random_state=0)
    >>> fit.n_leaves, float(fit.predict(X).eq(y).mean())
    (2, 1.0)
    """
    context = capture_context(1) if isinstance(formula, str) else None
    return _cart(formula, data, context, nfolds=nfolds, rule=rule, min_node_size=min_node_size,
                 max_depth=max_depth, max_bins=max_bins, weights=weights, subset=subset,
                 na_action=na_action, random_state=random_state)


def _cart(formula, data, context, *, nfolds=10, rule="min", min_node_size=1, max_depth=30,
          max_bins=65535, weights=None, subset=None, na_action="omit", random_state=None):
    nfolds = _check_int("nfolds", nfolds, 2)
    min_node_size = _check_int("min_node_size", min_node_size, 1)
    max_depth = _check_int("max_depth", max_depth, 1)
    max_bins = _check_int("max_bins", max_bins, 2, 65535)
    if rule not in ("min", "1se"):
        raise ValueError(f"rule must be 'min' or '1se'; got {rule!r}")
    d = _design(formula, data, weights, subset, na_action, context)
    X, y, w, K = d.X, d.y_int, np.asarray(d.weights, float), d.n_classes
    n = len(y)
    rows = np.arange(n)
    full = _cart_tree(X, y, K, w, rows, max_bins, min_node_size, max_depth)
    alphas = full["alphas"]
    cand = np.append(np.sqrt(alphas[:-1] * alphas[1:]), alphas[-1]) if len(alphas) > 1 \
        else alphas.copy()
    from cohstats.tuning import make_folds

    folds = make_folds(y, nfolds, random_state=random_state)   # stratified, SPEC D8
    k = int(folds.max()) + 1
    miss = np.zeros((len(cand), n))
    for f in range(k):
        tr = np.flatnonzero(folds != f)
        te = np.flatnonzero(folds == f)
        t = _cart_tree(X, y, K, w, tr, max_bins, min_node_size, max_depth)
        cls = np.argmax(t["counts"], axis=1)
        for a, alpha in enumerate(cand):
            leaf = _cart_predict(t, X[te], alpha)
            miss[a, te] = (cls[leaf] != y[te]) * w[te]
    cv_err = miss.sum(1) / w.sum()
    cv_se = np.sqrt(np.maximum(cv_err * (1 - cv_err), 0) / n)
    # ties -> the larger alpha (simpler tree)
    best = len(cand) - 1 - int(np.argmin(cv_err[::-1]))
    if rule == "1se":
        ok = np.flatnonzero(cv_err <= cv_err[best] + cv_se[best])
        best = int(ok.max())
    fit = CartFit(d, dict(nfolds=nfolds, rule=rule))
    fit.tree = full
    fit.alpha = float(cand[best])
    size = np.array([_n_leaves_at(full, a) for a in cand])
    fit.cv_table = pd.DataFrame({"alpha": alphas, "alpha_cv": cand, "leaves": size,
                                 "train_error": [_train_err(full, a) for a in cand],
                                 "cv_error": cv_err, "cv_se": cv_se})
    fit.n_leaves = int(size[best])
    fit.nfolds = k
    fit.n_iter = 1
    return fit


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


class CartFit(Fit):
    """A pruned classification tree. ``alpha`` is the selected complexity, ``cv_table`` the
    cross-validation results along the pruning sequence, ``n_leaves`` the pruned tree's size."""

    method = "cart"
    title = "Classification tree"
    label = "CART"

    def _leaf(self, X):
        return _cart_predict(self.tree, X, self.alpha)

    def _decision(self, X, s=None):
        P = self._proba_full(X)
        return P[:, 1] - P[:, 0] if self.n_classes == 2 else P

    def _proba_full(self, X):
        c = self.tree["counts"][self._leaf(X)]
        return c / c.sum(1, keepdims=True)

    def _proba(self, X, s=None, **kw):
        """Class proportions of the training observations in the leaf."""
        P = self._proba_full(X)
        return P[:, 1] if self.n_classes == 2 else P

    def _classify(self, X, s=None, **kw):
        return np.argmax(self.tree["counts"][self._leaf(X)], axis=1)

    def path(self) -> PathFrame:
        """CV error along the pruning sequence (xvar ``alpha``)."""
        return PathFrame.build(self.cv_table.copy(), xvar="alpha", coef_columns=[], log_x=False)

    def plot(self, ax=None):
        """Cross-validated error against tree size (rpart's ``plotcp``)."""
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots(figsize=(6.4, 4.2))
        t = self.cv_table
        ax.errorbar(t["leaves"], t["cv_error"], yerr=t["cv_se"], marker="o", ms=3, lw=1)
        ax.axvline(self.n_leaves, color="0.6", ls="--", lw=0.8)
        ax.set_xscale("log")
        ax.set_xlabel("terminal nodes")
        ax.set_ylabel(f"{self.nfolds}-fold CV error")
        return ax

    def _summary(self) -> Summary:
        info = {"method": "CART (Gini, cost-complexity pruned)", "classes": self.n_classes,
                "n": self.nobs, "predictors": self.design.p, "CV folds": self.nfolds,
                "selected alpha": self.alpha, "terminal nodes": self.n_leaves,
                "full tree leaves": int(self.cv_table["leaves"].iloc[0]),
                "training error": _train_err(self.tree, self.alpha)}
        return Summary("CART classification tree", info, {"pruning sequence": self.cv_table})

    def _repr_extra(self) -> str:
        return f"{self.n_leaves} leaves, alpha={self.alpha:.4g}"
