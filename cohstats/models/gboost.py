"""GentleBoost.C and the multiclass boosting baselines of [ZJLY] Table 2.

:func:`gboost_c` fits [ZJLY] Algorithm 1 (multiclass GentleBoost with the coherence loss);
:func:`gboost` runs the same engine with the baselines of the paper's Table 2
(``loss="logit"``: multiclass LogitBoost, ``"exp"``: GentleBoost.E, ``"adaboost_mh"``: real
AdaBoost.MH, ``"adaboost_mh_discrete"``: discrete AdaBoost.MH) and forwards ``loss="cart"``
to :func:`cohstats.models.cart.cart`.
"""

from __future__ import annotations

import numbers
import warnings
from dataclasses import dataclass

import numpy as np

from cohstats.formula import NAAction, build_design, capture_context, refuse_no_intercept, refuse_offset
from cohstats.models.cart import _PARAMS as _CART_PARAMS, _RENAMED as _CART_RENAMED, _cart, cart
from cohstats.solvers.trees import boost as _b
from cohstats.solvers.trees import grow as _t
from cohstats.models.gboost_result import GBoostFit, _check_step, _StepPath  # noqa: F401 - moved there
from cohstats.validation import Anything, Bool, FitSpec, Integer, NoneOr, Options, Real, Reals, fit_function

__all__ = ["gboost", "gboost_c", "GBoostFit"]

_LOSSES = {
    "coherence": (_b.BOOST_COH, "GentleBoost.C"),
    "logit": (_b.BOOST_LOGIT, "MulLogitBoost"),
    "exp": (_b.BOOST_EXP, "GentleBoost.E"),
    "adaboost_mh": (_b.BOOST_MH, "AdaBoost.MH"),
    "adaboost_mh_discrete": (_b.BOOST_MH_DISCRETE, "AdaBoost.MH (discrete)"),
}
_RHO_MIN = 1e-3
# temperatures to choose from by cross-validation when the probabilities matter (see the
# gboost_c docstring; measurements in benchmarks/log.csv, #18)
RHO_GRID = (1.0, 2.0, 4.0, 8.0)
DEFAULT_SHRINKAGE = 0.1

_PARAMS = {
    "rho": Real(0.0, closed="neither"),
    "n_trees": Integer(1),
    "nodes": Integer(2),
    "shrinkage": Real(0.0, 1.0, closed="right"),
    "init": NoneOr(Options("zero", "prior")),
    "init_beta": Options("uniform", "loss"),
    "min_node_size": Integer(1),
    "anneal": NoneOr(Reals(Real(0.0, closed="neither"))),
    "max_depth": NoneOr(Integer(1, 64)),
    "max_bins": Integer(2, 65535),
    "w_floor": Real(0.0, closed="neither"),
    "max_delta_step": NoneOr(Real(0.0, closed="neither")),
    "lambda_l2": Real(0.0),
    "subsample": Real(0.0, 1.0, closed="right"),
    "validation_fraction": NoneOr(Real(0.0, 1.0, closed="neither")),
    "n_iter_no_change": NoneOr(Integer(1)),
    "tol": Real(0.0),
    "standardize": Bool(),
    "na_action": NAAction(),
    "offset": Anything(),
}
_GBOOST_C = FitSpec("gboost_c", staged=True, multiclass=True, probabilities=True, default_measure="deviance")
_GBOOST = FitSpec("gboost", staged=True, multiclass=True, probabilities=True, default_measure="deviance")


_RENAMED = {
    "T": "the temperature is now called 'rho'",
    "H": "the number of boosting rounds is now called 'n_trees'",
    "z_max": "the response cap was removed: the working responses are no longer capped, the "
    "step control keeps every round from raising the training loss",
    "centre": "the centring option was removed: each round's trees are centred (the reading "
    "of Algorithm 1 under which the boosting minimises its loss)",
}


def _schedule(rho, anneal, n_trees):
    rho = float(rho)
    if anneal is None:
        Ts = np.full(n_trees, rho)
    elif np.ndim(anneal) == 0:
        T_end = float(anneal)
        Ts = rho * (T_end / rho) ** (np.arange(n_trees) / max(n_trees - 1, 1))
    else:
        Ts = np.asarray(anneal, dtype=float)
        if Ts.shape != (n_trees,):
            raise ValueError(
                f"anneal must be None, a final temperature, or an array of "
                f"n_trees={n_trees} temperatures; got shape {Ts.shape}"
            )
    if Ts.min() < _RHO_MIN:
        raise ValueError(
            f"temperatures rho below {_RHO_MIN} are refused: the coherence weights "
            f"are one-hot to machine precision and the Newton steps degenerate; "
            f"got min rho = {Ts.min():g}"
        )
    return np.ascontiguousarray(Ts)


def _validation_split(y, fraction, rng):
    """Stratified hold-out: about ``fraction`` of every class (at least one row of each class
    with two or more rows) goes to the validation part."""
    val = np.zeros(len(y), bool)
    for c in np.unique(y):
        idx = np.flatnonzero(y == c)
        k = int(round(fraction * len(idx)))
        if len(idx) >= 2:
            k = min(max(k, 1), len(idx) - 1)
        else:
            k = 0
        val[rng.choice(idx, size=k, replace=False)] = True
    return val


# ============================================================================ gboost
# ``loss="cart"`` forwards the pruning arguments of :func:`cohstats.models.cart.cart`
_CART_ONLY = ("ccp_alpha", "nfolds", "rule")


@fit_function(
    _GBOOST,
    {**_PARAMS, "loss": Options(*_LOSSES, "cart"), **{k: _CART_PARAMS[k] for k in _CART_ONLY}},
    renamed={**_RENAMED, **_CART_RENAMED},
)
def gboost(
    formula,
    data=None,
    *,
    loss: str = "coherence",
    rho: float = 1.0,
    n_trees: int = 100,
    nodes: int = 8,
    shrinkage: float = DEFAULT_SHRINKAGE,
    anneal=None,
    init: str | None = None,
    init_beta: str = "uniform",
    min_node_size: int = 1,
    max_depth: int | None = None,
    max_bins: int = 255,
    w_floor: float = 1e-10,
    max_delta_step: float | None = 4.0,
    lambda_l2: float = 0.0,
    subsample: float = 1.0,
    validation_fraction: float | None = None,
    n_iter_no_change: int | None = None,
    tol: float = 1e-4,
    standardize: bool = False,
    weights=None,
    subset=None,
    na_action: str = "omit",
    random_state=None,
    offset=None,
    ccp_alpha=None,
    nfolds: int = 10,
    rule: str = "min",
    _settings=None,
):
    """Multiclass boosting with small regression trees: GentleBoost.C and its baselines.

    Parameters
    ----------
    formula : str, Design, or array
        ``"y ~ x1 + x2"`` / ``"y ~ ."`` with ``data``; a :class:`~cohstats.formula.Design`; or
        a predictor matrix with the labels in ``data``.
    data : DataFrame (formula input) or labels (matrix input).
    loss : ``"coherence"`` (GentleBoost.C, [ZJLY] Algorithm 1), ``"logit"`` (multiclass
        LogitBoost, Friedman, Hastie & Tibshirani 2000), ``"exp"`` (GentleBoost.E, Zou, Zhu &
        Hastie 2008), ``"adaboost_mh"`` (real AdaBoost.MH, Schapire & Singer 1999),
        ``"adaboost_mh_discrete"`` (discrete AdaBoost.MH: +-1 leaves and one step size per
        round) or ``"cart"`` (forwarded to :func:`cohstats.models.cart.cart` with
        ``ccp_alpha``, ``nfolds``, ``rule``, ``standardize`` and ``random_state``).
    rho : temperature of the coherence loss (the ``T`` of [ZJLY]; ``loss="coherence"``
        only; the paper uses 1). For probabilities, choose it with the number of steps by
        cross-validation of the deviance (see "Probabilities and the temperature" in
        :func:`gboost_c`).
    n_trees : boosting rounds, each adding one tree per class (paper: 100).
    nodes : terminal nodes of each regression tree (paper: 8), grown best first.
    shrinkage : factor applied to every round (gbm's ``shrinkage``, LightGBM's
        ``learning_rate``). The default 0.1 was chosen by measurement: the probability
        section of the ``gboost_uci`` vignette fits 8-leaf trees at shrinkage 1, 0.3, 0.1
        and 0.03 (number of steps chosen by cross-validation) on three logistic truths and
        reports the paired differences of mean ``|p_hat - p|``: shrinkage 1 is clearly less
        accurate, and 0.03 needs about three times the steps (and time) of 0.1 for a change
        within the noise of the draws.
        ``1`` is the paper's algorithm (use it to reproduce [ZJLY] Table 2).
    anneal : ``None`` (constant ``rho``), a final temperature (geometric schedule from
        ``rho`` to it over the ``n_trees`` rounds) or an array of ``n_trees`` temperatures.
        Temperatures below 1e-3 are refused.
    init : ``"zero"`` (the paper: the margins start at ``g = 0``), ``"prior"`` (they start at
        the minimiser of the intercept-only loss, i.e. at the weighted class shares, as
        LightGBM's ``boost_from_average``; reported as ``intercept``) or None (default:
        ``"zero"`` with ``shrinkage=1``, so that ``shrinkage=1`` is the paper's algorithm,
        and ``"prior"`` otherwise: with small steps, starting from zero spends many trees on
        the intercept, which they fit together with noise).
    init_beta : ``"uniform"`` (paper, Algorithm 1 step 1: ``beta_j = 1/m`` in the first
        round) or ``"loss"`` (the coherence weights (5) at ``g = 0``).
    min_node_size : minimum number of observations in a terminal node.
    max_depth : optional depth limit of the trees (default: none).
    max_bins : features are binned into at most this many bins for the split search (a
        feature with fewer distinct values is searched exactly).
    w_floor : floor of the Newton weights ``beta_j (1 - beta_j)``.
    max_delta_step : cap on the absolute value of every leaf's Newton step (before
        shrinkage), LightGBM's and XGBoost's ``max_delta_step``; None: no cap. The default 4
        is the cap that Friedman, Hastie & Tibshirani (2000) put on LogitBoost's working
        responses (``|z| <= 4``), moved to the leaf values: a capped leaf still moves the
        margins downhill, and the cap is inactive near the minimiser (where the steps are
        small), so the boosting still converges to the minimiser of its loss. Capping the
        responses themselves does not: see :func:`gboost_c`.
    lambda_l2 : L2 penalty on the leaf values (XGBoost's ``lambda``, LightGBM's
        ``lambda_l2``): every leaf takes the penalised Newton step ``-sum g / (sum h +
        lambda_l2)`` (``g``, ``h`` the gradient and Hessian of the loss in the class margin;
        for the coherence loss ``h = beta (1 - beta) / rho``) and the splits maximise the
        matching decrease ``sum_leaves (sum g)^2 / (sum h + lambda_l2)``. It shortens the
        steps of leaves with little weight, not the fixed point: the boosting still
        converges to the minimiser of its loss. With ``weights`` the penalty is relative to
        the weights rescaled (by a power of two) to a geometric mean of about one. Not for
        AdaBoost.MH, whose leaves are log-ratios. Default 0 (no penalty): on simulated
        logistic truths (the ``gboost_uci`` vignette) ``lambda_l2 = 10`` lowered the mean
        absolute error of the 8-leaf probabilities by 2-3 % (1.4-2.2 standard errors of
        the paired difference), too little to make it the default.
    subsample : share of the rows that grow each round's trees (Friedman's stochastic
        gradient boosting; gbm's ``bag.fraction``, LightGBM's ``bagging_fraction``): every
        round ``round(subsample * n)`` rows are drawn without replacement (seeded by
        ``random_state``), the trees and their leaf values come from those rows, the
        margins of all rows are updated, and the step control keeps the loss of the drawn
        rows from rising. Default 1 (every row; the paper's algorithm): in the vignette's
        simulations ``subsample = 0.5`` helped on a linear logit and hurt on a non-linear
        one.
    validation_fraction, n_iter_no_change, tol : early stopping (scikit-learn's names).
        Given ``n_iter_no_change``, a stratified share ``validation_fraction`` (default 0.1)
        of the rows is held out, the trees are fitted to the rest, and boosting stops once
        the weighted validation loss has not fallen below its best value minus ``tol`` for
        ``n_iter_no_change`` rounds; ``s`` is then the step with the smallest validation
        loss. Given only ``validation_fraction``, the rows are held out and the validation
        loss is recorded (and ``s`` chosen) without stopping early.
    standardize : accepted for the package-wide interface; trees are invariant to centring
        and scaling their predictors, so True and False give the same fit.
    weights : observation weights (array or column name).
    subset, na_action : as :func:`cohstats.formula.build_design`.
    offset : known offsets of the binary decision value, ``f(x) = offset + F(x)`` with ``F`` the
        boosted sum of trees (R's ``offset``, gbm's ``offset()``): an array with one value per
        row of ``data``, or a column name; ``offset(col)`` in the formula does the same. Two
        classes and the centred losses (``"coherence"``, ``"logit"``, ``"exp"``): the offset is
        the initial score of every row, the margins start at ``g_i = g0 + (-o_i/2, o_i/2)``
        (so ``g_2 - g_1 = o_i`` plus the ``init`` margin), and the first round's weights come
        from the loss at those margins (``init_beta="uniform"`` belongs to ``g = 0`` and is not
        used). Predictions and probabilities on new data add the offsets of its rows.
    random_state : seed (int, Generator or None) of the order in which each tree searches the
        features (among exactly tied splits the first feature in that order wins, as in
        scikit-learn's trees), of the row subsamples (``subsample < 1``) and of the
        validation split. ``None`` draws fresh entropy (fits then differ only in such ties,
        and in the subsamples); ``-1`` searches in column order (and draws subsamples and
        splits with seed 0). ``loss="cart"`` uses it for the CV folds.
    ccp_alpha, nfolds, rule : the pruning of ``loss="cart"`` (as :func:`cohstats.models.cart.cart`;
        an error with any other loss).

    Returns
    -------
    GBoostFit
        A path fit along the boosting steps (``lambda_ = 1..n_trees``, ``path_var =
        "step"``, ``s`` the selected step): ``predict(newdata, type=..., s=step)``,
        ``staged_predict``, ``path(newdata)``, ``summary()``, ``plot(newdata)``.

    ``fit.settings`` holds the validated arguments of the call (``gboost.Settings``, a frozen
    :class:`~cohstats.validation.Settings`): refits, the tuners and saved files read it.

    Notes
    -----
    Probabilities: the coherence inverse link, eq (8) of [ZJLY] (Theorem 1), at the fitted
    margins for the coherence loss; the softmax of the margins for ``"logit"`` and
    ``"exp"`` (their population minimisers); the normalised one-versus-rest
    ``expit(2 F_j)`` for AdaBoost.MH (its per-class population minimiser, normalised so the
    rows sum to one).

    AdaBoost.MH is run with one tree per class and round, each the weighted least-squares
    (equivalently weighted Gini) tree for the +-1 labels of its class, with weights
    ``D_ij`` normalised jointly over all ``n m`` pairs. The real version uses the leaf values
    ``0.5 log((W+ + eps)/(W- + eps))``, ``eps = 1/(n m)`` (Schapire & Singer 1999, Section
    4.2); the discrete version uses ``sign(W+ - W-)`` leaves and one step
    ``alpha = 0.5 log((1 + r + 2 eps)/(1 - r + 2 eps))``, ``r = sum_ij D_ij Y_ij h_j(x_i)``,
    per round ([ZJLY] Table 2 describes its AdaBoost.MH by "eight-node classification
    trees").

    See :func:`gboost_c` for the reading of Algorithm 1 and the step control.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from cohstats.models.gboost import gboost
    >>> rng = np.random.default_rng(1)
    >>> df = pd.DataFrame(rng.normal(size=(150, 2)), columns=["x1", "x2"])
    >>> df["y"] = np.select([df.x1 > 0.5, df.x2 > 0], ["a", "b"], "c")
    >>> fit = gboost("y ~ x1 + x2", df, loss="logit", n_trees=20, shrinkage=1)
    >>> p = fit.predict(df, type="prob")
    >>> bool(np.allclose(p.sum(axis=1), 1.0)), bool(fit.path()["train_error"].iloc[-1] < 0.05)
    (True, True)
    """
    context = capture_context(1) if isinstance(formula, str) else None
    if loss == "cart":
        if offset is not None:
            raise ValueError(
                "gboost(loss='cart') does not take an offset: a classification tree's leaves are class "
                "frequencies, with no link to add an offset to"
            )
        pruning = cart.settings(
            ccp_alpha=ccp_alpha, nfolds=nfolds, rule=rule, random_state=random_state, standardize=standardize
        )
        return _cart(formula, data, context, pruning, weights=weights, subset=subset, na_action=na_action)
    pruning = [k for k in _CART_ONLY if k in _settings.changed()]
    if pruning:
        raise ValueError(f"gboost: {', '.join(pruning)} apply to loss='cart' only; got loss={loss!r}")
    return _gboost(
        formula, data, context, _settings, loss=loss, weights=weights, subset=subset, na_action=na_action, offset=offset
    )


@fit_function(_GBOOST_C, _PARAMS, renamed=_RENAMED)
def gboost_c(
    formula,
    data=None,
    *,
    rho: float = 1.0,
    n_trees: int = 100,
    nodes: int = 8,
    shrinkage: float = DEFAULT_SHRINKAGE,
    anneal=None,
    init: str | None = None,
    init_beta: str = "uniform",
    min_node_size: int = 1,
    max_depth: int | None = None,
    max_bins: int = 255,
    w_floor: float = 1e-10,
    max_delta_step: float | None = 4.0,
    lambda_l2: float = 0.0,
    subsample: float = 1.0,
    validation_fraction: float | None = None,
    n_iter_no_change: int | None = None,
    tol: float = 1e-4,
    standardize: bool = False,
    weights=None,
    subset=None,
    na_action: str = "omit",
    random_state=None,
    offset=None,
    _settings=None,
):
    """GentleBoost.C: multiclass boosting with the coherence loss ([ZJLY] Algorithm 1).

    Each round fits, for every class ``j``, an ``nodes``-leaf weighted least-squares
    regression tree to the Newton working response of the coherence loss
    ``C(g, c) = rho log(1 + sum_{j != c} exp((1 + g_j - g_c)/rho))`` (eq (6)):
    ``z_ij = rho (I[j = c_i] - beta_j) / (beta_j (1 - beta_j))`` with weights
    ``beta_j (1 - beta_j)`` (``beta`` the soft weights of eq (5) at the current margins);
    the round's trees are centred, scaled by ``(m - 1)/m`` and ``shrinkage`` and added to
    the margins ``g``. Probabilities come from Theorem 1, eq (8). Arguments as
    :func:`gboost` (this is ``gboost(loss="coherence")``).

    The result's ``settings`` holds the validated arguments of the call (``gboost_c.Settings``,
    a frozen :class:`~cohstats.validation.Settings`): refits, the tuners and saved files read it.

    Notes
    -----
    How the text of Algorithm 1 is read, and why (each choice makes the boosting a descent
    method for the empirical coherence risk, whose minimiser Theorem 1 makes a probability
    estimate):

    * **Working responses.** ``z_ij`` and ``w_ij`` of step 2(a)(i) make the weighted
      least-squares leaf value ``sum (I - beta_j) / sum beta_j (1 - beta_j)``, the Newton
      step of the loss in ``g_j`` with the diagonal of the Hessian of the proof of Theorem 1
      (``sum_c P_c beta^c_j (1 - beta^c_j)``), up to the factor ``rho``: the algorithm's
      ``z`` omits the temperature, and the Newton step of ``C`` (whose Hessian is that
      diagonal divided by ``rho``) carries it; we multiply by ``rho`` (no change at the
      paper's ``rho = 1``). The trees are fitted to ``w z = rho (I - beta)`` and ``w``
      directly, so no response is ever capped. Capping ``z`` (``|z| <= 4``, a device of
      LogitBoost practice) moves the fixed point of the iteration away from the minimiser:
      at the minimiser of an unbalanced problem the minority rows need
      ``|z| = 1 + exp((1 + g_j - g_c)/rho)``, beyond the cap, and the capped iteration drove
      the majority probability to 1 while the training loss rose. The cap is kept where it
      does no such harm, on the leaf values (``max_delta_step``, default 4): it bounds the
      steps on nearly pure leaves, whose regularising effect on the test error [ZJLY]
      Table 2 reflects, and vanishes near the minimiser.
    * **Centring, step 2(b).** "``g_j <- (m-1)/m (g_j - (1/m) sum_l g_l)``" is applied to the
      round's fits, as in the multiclass LogitBoost of Friedman, Hastie & Tibshirani (2000)
      from which Algorithm 1 is built. Applied to the accumulated ``g`` it would shrink the
      margins by ``(m-1)/m`` every round, and the boosting would stop short of the
      minimiser. With two classes the centred step equals the Newton step of the binary
      coherence loss.
    * **Step 1.** ``beta_j = 1/m`` in the first round, as written (``init_beta="loss"``
      takes eq (5) at ``g = 0``); both give a descent direction.
    * **Step control.** The paper takes every step in full. A Newton step can overshoot
      where the loss is far from quadratic, so each round is scaled by the largest
      ``t in {1, 1/2, 1/4, ...}`` that does not raise the weighted training loss (beyond
      relative rounding of 1e-14); ``t = 1`` in the paper's regime, and the intercept-only
      model converges to the minimiser of its loss (the class shares as probabilities).

    **Probabilities and the temperature.** With its inverse link (8), the coherence loss is a
    proper composite loss at every ``rho``: its population minimiser gives the true class
    probabilities (Theorem 1 of [ZJLY]). It is not the likelihood, though. At the paper's
    ``rho = 1`` it is a smoothed hinge, and on simulated logistic truths (the probability
    section of the ``gboost_uci`` vignette) its probabilities are a few per cent less
    accurate than those of MulLogitBoost, the multinomial likelihood with the same trees:
    also at the best number of steps in hindsight, so the gap comes from the loss, not from
    the choice of the number of steps. As ``rho`` grows,
    ``rho log(1 + sum_{j != c} exp((1 + g_j - g_c)/rho))`` tends to the multinomial negative
    log-likelihood of ``g / rho`` and eq (8) to its softmax: GentleBoost.C becomes
    MulLogitBoost on the scale ``g / rho``. One difference remains: ``max_delta_step`` caps
    the leaves on the scale of ``g``, so on the likelihood's scale the cap is
    ``max_delta_step / rho``, tighter as ``rho`` grows, which regularises large trees. For
    probabilities, choose ``rho`` together with the number of steps by cross-validation of
    the deviance (gbm's and LightGBM's practice for the number of trees)::

        tune(gboost_c, "y ~ .", data, grid={"rho": RHO_GRID}, measure="deviance", n_trees=300)

    with ``RHO_GRID = (1, 2, 4, 8)`` from :mod:`cohstats.models.gboost`; larger ``rho``
    needs more steps (its leaves are capped more tightly), so offer enough of them that the
    chosen step is not the last. On the simulations this choice is as accurate as
    MulLogitBoost. ``rho = 1`` stays the default, the temperature of [ZJLY].

    Examples
    --------
    >>> import numpy as np
    >>> from cohstats.models.gboost import gboost_c
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(120, 3)); y = np.where(X[:, 0] > 0, "up", "down")
    >>> fit = gboost_c(X, y, n_trees=10)
    >>> fit.predict(X[:3], type="prob").round(3).shape
    (3, 2)
    """
    context = capture_context(1) if isinstance(formula, str) else None
    return _gboost(
        formula,
        data,
        context,
        _settings,
        loss="coherence",
        weights=weights,
        subset=subset,
        na_action=na_action,
        offset=offset,
    )


def _gboost(formula, data, context, settings, *, loss, weights, subset, na_action, offset=None):
    """The boosting fit of :func:`gboost` and :func:`gboost_c` from their settings (each argument
    checked by the front door; checked across arguments here) -> prepare -> solve -> result;
    ``offset`` (n,) known starting scores or None."""
    Ts = _check(settings, loss)
    d = build_design(formula, data, weights=weights, subset=subset, na_action=na_action, context=context, offset=offset)
    prob = _prepare(d, settings, loss, Ts)
    return _result(d, prob, _solve(prob))


def _check(s, loss):
    """Checks across arguments, before the data are read; returns the temperature schedule."""
    if float(s.lambda_l2) > 0 and loss.startswith("adaboost_mh"):
        raise ValueError(
            f"lambda_l2 applies to the Newton leaves of 'coherence', 'logit' and "
            f"'exp'; AdaBoost.MH's leaves are log-ratios; got loss={loss!r}"
        )
    if loss != "coherence" and (s.rho != 1.0 or s.anneal is not None):
        raise ValueError(f"rho and anneal apply to loss='coherence' only; got loss={loss!r}")
    return _schedule(s.rho, s.anneal, int(s.n_trees))


def _recorded(s, loss, init, validation_fraction, n_iter_no_change) -> dict:
    """The arguments a fit records (``fit.call``: its summary's call line)."""
    call = dict(loss=loss, rho=s.rho, n_trees=int(s.n_trees), nodes=int(s.nodes), shrinkage=float(s.shrinkage))
    if s.anneal is not None:
        call["anneal"] = s.anneal if np.ndim(s.anneal) == 0 else "schedule"
    if s.init_beta != "uniform":
        call["init_beta"] = s.init_beta
    if float(s.lambda_l2) != 0.0:
        call["lambda_l2"] = float(s.lambda_l2)
    if float(s.subsample) != 1.0:
        call["subsample"] = float(s.subsample)
    call["init"] = init
    if validation_fraction is not None:
        call["validation_fraction"] = validation_fraction
    if n_iter_no_change is not None:
        call["n_iter_no_change"] = n_iter_no_change
    call["random_state"] = s.random_state
    return call


def _seed(random_state):
    """``(seed, rng)``: the seed of the trees' feature order (-1: column order) and the
    generator of the validation split."""
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool) and int(random_state) == -1:
        return -1, np.random.default_rng(0)
    try:
        rng = np.random.default_rng(random_state)
    except (TypeError, ValueError) as e:
        raise TypeError(f"random_state must be None, an integer or a numpy Generator; got {random_state!r}") from e
    return int(rng.integers(0, 2**31 - 1)), rng


@dataclass
class _Problem:
    """What the boosting engine (:func:`cohstats.solvers.trees.boost.fit_boost`) needs, prepared
    from the settings and the design, and what the result records."""

    code: int  # the loss
    label: str
    binned: tuple  # (codes, n_bins, thresholds) of the training rows' features
    y: np.ndarray  # training classes and weights (rescaled by a power of two)
    sw: np.ndarray
    valid: tuple  # (Xv, yv, swv): the validation rows (empty without validation)
    g0: np.ndarray  # the initial margins
    start: tuple  # (G0, Gv0): the offsets' initial margins of the training and validation rows
    Ts: np.ndarray  # the temperature of every round
    H: int  # rounds
    nodes: int
    shrinkage: float
    init_uniform: bool  # beta = 1/m in the first round
    init_prior: bool
    min_node_size: int
    max_depth: int
    w_floor: float
    max_delta_step: float
    lambda_l2: float
    subsample: float
    n_iter_no_change: int
    tol: float
    seed: int
    val: object  # the validation rows (boolean mask) or None
    standardize: bool
    call: dict


def _prepare(d, s, loss, Ts) -> _Problem:
    """Settings and design -> the engine's inputs: the checks on the design, the random
    generator and validation split, the binned features, the rescaled weights and the initial
    margins."""
    code, label = _LOSSES[loss]
    n_trees, nodes, min_node_size, max_bins = int(s.n_trees), int(s.nodes), int(s.min_node_size), int(s.max_bins)
    shrinkage = float(s.shrinkage)
    validation_fraction, n_iter_no_change = s.validation_fraction, s.n_iter_no_change
    if n_iter_no_change is not None:
        n_iter_no_change = int(n_iter_no_change)
        if validation_fraction is None:
            validation_fraction = 0.1
    if validation_fraction is not None:
        validation_fraction = float(validation_fraction)
    init = s.init
    if init is None:
        init = "zero" if shrinkage == 1.0 else "prior"
    if d.offset is not None:
        if not d.binary:
            refuse_offset(d, "gboost with more than two classes (the offset is one binary score per row)")
        if loss.startswith("adaboost_mh"):
            refuse_offset(d, f"gboost(loss={loss!r}) (AdaBoost.MH scores each class on its own, uncentred)")
    refuse_no_intercept(d, "gboost_c", "boosts trees from a constant margin (init), which has no intercept to remove")
    call = _recorded(s, loss, init, validation_fraction, n_iter_no_change)
    seed, rng = _seed(s.random_state)
    val = None
    if validation_fraction is not None:
        val = _validation_split(d.y_int, validation_fraction, rng)
        if not val.any() or val.all():
            raise ValueError(
                f"validation_fraction={validation_fraction} leaves no rows for "
                f"validation or for training ({d.nobs} rows)"
            )
    m = d.n_classes
    if m < 2:
        raise ValueError(f"the response needs at least two classes; got {d.classes!r}")
    X = d.X
    n, p = X.shape
    if p == 0:
        raise ValueError("the model has no predictors")
    y_all = np.ascontiguousarray(d.y_int, dtype=np.int64)
    sw_all = np.ascontiguousarray(d.weights, dtype=np.float64)
    # the fit is invariant to the scale of the weights: divide them by the power of two nearest
    # their geometric mean (exact in floating point, and no change for weights of order one),
    # so that weights of order 1e300 or 1e-300 neither overflow nor underflow the Newton sums
    pos = sw_all[sw_all > 0]
    if pos.size:
        sw_all = np.ldexp(sw_all, -int(np.round(np.mean(np.log2(pos)))))
    if val is None:
        Xt, y, sw = X, y_all, sw_all
        Xv, yv, swv = np.empty((0, p)), np.empty(0, np.int64), np.empty(0)
    else:
        Xt, y, sw = X[~val], y_all[~val], sw_all[~val]
        Xv = np.ascontiguousarray(X[val], dtype=np.float64)
        yv, swv = np.ascontiguousarray(y_all[val]), np.ascontiguousarray(sw_all[val])
    y = np.ascontiguousarray(y)
    sw = np.ascontiguousarray(sw)
    codes, thresholds, n_bins = _t.make_bins(Xt, max_bins, sw)
    init_prior = init == "prior"
    init_uniform = s.init_beta == "uniform"
    g0 = _initial_margins(code, y, sw, m, float(Ts[0])) if init_prior else np.zeros(m)
    if init_prior:
        init_uniform = False  # beta = 1/m belongs to g = 0 (Algorithm 1, step 1)
    G0 = Gv0 = None
    if d.offset is not None:  # binary: the offset o_i as the initial score, margins (-o_i/2, o_i/2)
        om = 0.5 * np.column_stack([-d.offset, d.offset])
        init_uniform = False  # the first weights at the offset margins (beta = 1/m belongs to g = 0)
        G0, Gv0 = (om, None) if val is None else (om[~val], om[val])
    return _Problem(
        code=code,
        label=label,
        binned=(codes, n_bins, thresholds),
        y=y,
        sw=sw,
        valid=(Xv, yv, swv),
        g0=g0,
        start=(G0, Gv0),
        Ts=Ts,
        H=n_trees,
        nodes=nodes,
        shrinkage=shrinkage,
        init_uniform=init_uniform,
        init_prior=init_prior,
        min_node_size=min_node_size,
        max_depth=64 if s.max_depth is None else int(s.max_depth),
        w_floor=float(s.w_floor),
        max_delta_step=np.inf if s.max_delta_step is None else float(s.max_delta_step),
        lambda_l2=float(s.lambda_l2),
        subsample=float(s.subsample),
        n_iter_no_change=n_iter_no_change or 0,
        tol=float(s.tol),
        seed=seed,
        val=val,
        standardize=bool(s.standardize),
        call=call,
    )


def _initial_margins(code, y, sw, m, rho):
    """Minimiser of the weighted intercept-only loss (the margins of the class shares)."""
    P = np.bincount(y, weights=sw, minlength=m) / sw.sum()
    if np.any(P <= 0):
        raise ValueError(
            "init='prior' needs every class among the training rows (with positive weight); use init='zero'"
        )
    if code == _b.BOOST_COH:
        from cohstats.losses.multiclass import coherence_minimizer

        return coherence_minimizer(P, rho)
    if code in (_b.BOOST_MH, _b.BOOST_MH_DISCRETE):
        return 0.5 * np.log(P / (1.0 - P))
    lp = np.log(P)
    return lp - lp.mean()


def _solve(prob: _Problem):
    """The boosting rounds: ``(rounds, finite, best, trees, statistics)`` of the engine."""
    codes, n_bins, thresholds = prob.binned
    Xv, yv, swv = prob.valid
    G0, Gv0 = prob.start
    seed = prob.seed
    return _b.fit_boost(
        prob.code,
        codes,
        n_bins,
        thresholds,
        prob.y,
        prob.sw,
        Xv,
        yv,
        swv,
        prob.g0,
        Ts=prob.Ts,
        shrinkage=prob.shrinkage,
        max_delta=prob.max_delta_step,
        max_leaves=prob.nodes,
        min_leaf=prob.min_node_size,
        max_depth=prob.max_depth,
        w_floor=prob.w_floor,
        init_uniform=prob.init_uniform,
        lam=prob.lambda_l2,
        subsample=prob.subsample,
        n_iter_no_change=prob.n_iter_no_change,
        es_tol=prob.tol,
        # seed < 0: natural feature order, subsamples drawn with seed 0
        rng=np.random.default_rng(seed if seed >= 0 else 0),
        permute=seed >= 0,
        G0=G0,
        Gv0=Gv0,
    )


def _result(d, prob: _Problem, solved) -> GBoostFit:
    """The engine's rounds -> the result (the trees and statistics of the rounds run); a warning
    when the margins became non-finite."""
    rounds, finite, best, tr, st = solved
    code, label, val = prob.code, prob.label, prob.val
    feat, thr, left, right, value, n_nodes = tr.feat, tr.thr, tr.left, tr.right, tr.value, tr.n_nodes
    step_scale, train_err, train_loss, val_loss = st.step_scale, st.train_err, st.train_loss, st.val_loss
    if rounds == 0:
        raise FloatingPointError(
            f"{label}: the margins became non-finite in the first round; "
            f"check the weights and predictors for extreme values"
        )
    fit = GBoostFit._from_arrays(
        d,
        method="gboost_c" if code == _b.BOOST_COH else "gboost",
        loss=[k for k, v in _LOSSES.items() if v[0] == code][0],
        label=label,
        code=code,
        g0=prob.g0,
        init="prior" if prob.init_prior else "zero",
        rhos=prob.Ts[:rounds].copy(),
        nodes=prob.nodes,
        shrinkage=prob.shrinkage,
        standardize=prob.standardize,
        trees=dict(
            feat=feat[:rounds],
            thr=thr[:rounds],
            left=left[:rounds],
            right=right[:rounds],
            value=value[:rounds],
            n_nodes=n_nodes[:rounds],
        ),
        step_scale=step_scale[:rounds],
        train_error=train_err[:rounds],
        train_loss=train_loss[:rounds],
        val_loss=val_loss[:rounds] if val is not None else None,
        validation_rows=np.flatnonzero(val) if val is not None else None,
        lambda_=np.arange(1, rounds + 1, dtype=float),
        s=float(best if val is not None else rounds),
        n_iter=int(rounds),
        converged=bool(finite),
        stopped_early=bool(val is not None and prob.n_iter_no_change > 0 and rounds < prob.H),
        call=prob.call,
    )
    if not finite:
        from cohstats.exceptions import ConvergenceWarning

        warnings.warn(
            f"{label}: the margins became non-finite in round {rounds + 1}; the fit "
            f"stops after {rounds} rounds (increase rho or w_floor, or decrease "
            f"shrinkage)",
            ConvergenceWarning,
            stacklevel=3,
        )
    return fit


# the settings classes by name, for saved files (cohstats.persist resolves classes by path)
GboostSettings = gboost.Settings
GboostCSettings = gboost_c.Settings
