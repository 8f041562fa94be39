"""Calibration of estimated class probabilities: reliability tables, Brier score, ECE, diagrams.

The package is about honest class probabilities; this module measures how honest they are on
test data.

* :func:`calibration` -- for a fitted model and test data: per probability bin the number of
  cases, the mean predicted probability and the observed frequency with a Wilson interval, the
  Brier score and the expected calibration error; one-vs-rest for more than two classes. The
  result (:class:`CalibrationResult`) prints as a :class:`~cohstats.results.Summary` and draws
  the reliability diagram with ``.plot()``. ``fit.calibration(newdata)`` is the same.
* :func:`reliability` -- the same from arrays (predicted probabilities and events).
* :func:`calibration_table` / :func:`plot_calibration` -- the older array helpers (normal-theory
  standard errors, Figure output), kept for the loss-figure vignette.

The module itself is callable: ``cohstats.calibration(fit, newdata, ...)`` is
:func:`calibration` (the documented call), while ``cohstats.calibration.reliability`` and the
other names stay reachable as attributes of the module.

Bins follow scikit-learn's ``calibration_curve``: ``"uniform"`` bins split [0, 1] into equal
widths, ``"quantile"`` bins have (about) equal counts (edges at the sample quantiles); a
probability on an inner edge belongs to the lower bin; empty bins are left out of the table.
"""

from __future__ import annotations

import math
import sys
import types

import numpy as np
import pandas as pd

from .summary import FitBase, Summary

__all__ = ["calibration", "reliability", "CalibrationResult", "calibration_table", "plot_calibration"]

_STRATEGIES = ("uniform", "quantile")


def _plt():
    import matplotlib.pyplot as plt

    return plt


# ----------------------------------------------------------------------------- core
def _check_bins(bins) -> int:
    if isinstance(bins, (bool, np.bool_)) or not isinstance(bins, (int, np.integer)) or bins < 1:
        raise ValueError(f"bins must be a positive integer (number of probability bins); got {bins!r}")
    return int(bins)


def _check_strategy(strategy) -> str:
    if strategy not in _STRATEGIES:
        raise ValueError(f"strategy must be 'uniform' (equal widths) or 'quantile' (equal counts); got {strategy!r}")
    return strategy


def _edges(p: np.ndarray, bins: int, strategy: str) -> np.ndarray:
    if strategy == "uniform":
        return np.linspace(0.0, 1.0, bins + 1)
    return np.percentile(p, np.linspace(0.0, 100.0, bins + 1))


def _bin_index(p: np.ndarray, edges: np.ndarray) -> np.ndarray:
    # bins (lo, hi]; the first also holds its lower edge (scikit-learn's calibration_curve)
    return np.searchsorted(edges[1:-1], p, side="left")


def reliability(
    p_hat, event, bins: int = 10, strategy: str = "uniform", level: float = 0.95, interval: str = "wilson"
) -> tuple[pd.DataFrame, float]:
    """Reliability table and expected calibration error of probabilities of one event.

    Parameters
    ----------
    p_hat : array_like
        Predicted probabilities of the event, in [0, 1].
    event : array_like of bool or 0/1
        Whether the event happened.
    bins : int, default 10
    strategy : {"uniform", "quantile"}
    level : float, default 0.95
        Confidence level of the interval of the observed frequency.
    interval : str, default "wilson"
        Binomial interval (``"wilson"``, ``"exact"``, ... as :func:`cohstats.reporting.error_ci`).

    Returns
    -------
    table : DataFrame
        One row per non-empty bin: ``bin`` (1-based), ``bin_lo``, ``bin_hi``, ``n``,
        ``events``, ``mean_predicted``, ``observed`` (event frequency), ``ci_lower``,
        ``ci_upper`` and ``gap = observed - mean_predicted``.
    ece : float
        Expected calibration error ``sum_b (n_b / n) |observed_b - mean_predicted_b|``
        (Naeini, Cooper & Hauskrecht 2015).

    Examples
    --------
    >>> tab, ece = reliability([0.1, 0.2, 0.8, 0.9], [0, 0, 1, 1], bins=2)
    >>> tab[["n", "observed"]].to_numpy().tolist(), round(ece, 6)
    ([[2.0, 0.0], [2.0, 1.0]], 0.15)
    """
    from .reporting import error_ci

    p = np.asarray(p_hat, dtype=float).ravel()
    e = np.asarray(event).ravel()
    if p.shape != e.shape:
        raise ValueError(f"p_hat and event must have the same length; got {p.size} and {e.size}")
    if p.size == 0:
        raise ValueError("p_hat is empty: no test cases")
    if np.any(~np.isfinite(p)) or np.any((p < 0) | (p > 1)):
        raise ValueError("p_hat must be probabilities in [0, 1] (no NaN)")
    if e.dtype != bool:
        if not np.all(np.isin(e, (0, 1))):
            raise ValueError("event must be boolean or 0/1")
        e = e.astype(bool)
    nb = _check_bins(bins)
    edges = _edges(p, nb, _check_strategy(strategy))
    idx = _bin_index(p, edges)
    n_b = np.bincount(idx, minlength=nb).astype(float)
    s_p = np.bincount(idx, weights=p, minlength=nb)
    s_e = np.bincount(idx, weights=e.astype(float), minlength=nb)
    keep = n_b > 0
    b = np.flatnonzero(keep)
    n_k, ev = n_b[keep], s_e[keep]
    mean_p, obs = s_p[keep] / n_k, ev / n_k
    lo, hi = error_ci(np.round(ev).astype(np.int64), n_k.astype(np.int64), level=level, method=interval)
    table = pd.DataFrame(
        {
            "bin": b + 1,
            "bin_lo": edges[b],
            "bin_hi": edges[b + 1],
            "n": n_k.astype(np.int64),
            "events": np.round(ev).astype(np.int64),
            "mean_predicted": mean_p,
            "observed": obs,
            "ci_lower": np.atleast_1d(lo),
            "ci_upper": np.atleast_1d(hi),
            "gap": obs - mean_p,
        }
    )
    ece = float(np.sum(n_k * np.abs(obs - mean_p)) / p.size)
    return table, ece


# ----------------------------------------------------------------------------- result
class CalibrationResult:
    """Calibration of a fit's class probabilities on test data (see :func:`calibration`).

    Attributes
    ----------
    table : DataFrame
        Reliability table: for two classes of the event ``y = classes[1]``; for K classes one
        block per class (one-vs-rest) with a leading ``class`` column.
    by_class : DataFrame
        Per event class: ``n_events``, ``brier`` (``mean (1[y = k] - p_k)^2``) and ``ece``.
    brier : float
        Two classes: ``mean (1[y = classes[1]] - p)^2``; K classes:
        ``mean_i sum_k (1[y_i = k] - p_ik)^2`` (Brier's original form).
    ece : float
        Expected calibration error; for K classes the mean of the one-vs-rest values
        (class-wise ECE, Kull et al. 2019).
    classes, n, bins, strategy, level, interval, method
        What was measured and how.
    """

    def __init__(self, *, method, classes, n, bins, strategy, level, interval, table, by_class, brier, ece, options):
        self.method = method
        self.classes = list(classes)
        self.n = int(n)
        self.bins = bins
        self.strategy = strategy
        self.level = level
        self.interval = interval
        self.table = table
        self.by_class = by_class
        self.brier = float(brier)
        self.ece = float(ece)
        self.options = dict(options)

    @property
    def binary(self) -> bool:
        return len(self.classes) == 2

    def summary(self) -> Summary:
        """Header (n, bins, Brier, ECE) and the reliability table as a :class:`Summary`."""
        pm = ", ".join(f"{k}={v!r}" for k, v in self.options.items())
        info = {
            "model": self.method + (f" ({pm})" if pm else ""),
            "test observations": self.n,
            "classes": ", ".join(map(str, self.classes)),
            "bins": f"{self.bins} {self.strategy}",
            "Brier score": self.brier,
            "expected calibration error": self.ece,
        }
        tables = {}
        if self.binary:
            tables[f"Reliability (event y = {self.classes[1]})"] = self.table.set_index("bin")
        else:
            tables["By class (one-vs-rest)"] = self.by_class
            tables["Reliability (one-vs-rest)"] = self.table.set_index(["class", "bin"])
        from .reporting import _CI_LABELS, _ci_method

        notes = [
            f"observed: event frequency in the bin, with the {_CI_LABELS[_ci_method(self.interval)]} "
            f"{100 * self.level:g} % interval (ci_lower, ci_upper); gap = observed - mean_predicted.",
            "expected calibration error: sum over bins of n_b / n |observed - mean_predicted|"
            + ("" if self.binary else ", averaged over the classes (one-vs-rest)")
            + ".",
        ]
        return Summary("Calibration on test data", info, tables, notes)

    def to_frame(self) -> pd.DataFrame:
        return self.table.copy()

    def __repr__(self) -> str:
        return str(self.summary())

    def _repr_html_(self) -> str:
        return self.summary().to_html()

    def plot(self, ax=None, classes=None, intervals: bool = True, **kwargs):
        """Reliability diagram: observed frequency against mean predicted probability per bin.

        Parameters
        ----------
        ax : matplotlib Axes, optional
        classes : list, optional
            For K classes, which one-vs-rest curves to draw (default all).
        intervals : bool, default True
            Draw the bins' intervals as error bars.
        **kwargs
            Passed to ``Axes.errorbar`` (e.g. ``color``, ``marker``).

        Returns
        -------
        matplotlib.axes.Axes
        """
        if ax is None:
            _, ax = _plt().subplots(figsize=(5, 5))
        ax.plot([0, 1], [0, 1], color="0.6", ls="--", lw=1, label="perfect calibration")
        if self.binary:
            blocks = [(None, self.table)]
        else:
            want = self.classes if classes is None else list(classes)
            bad = [c for c in want if c not in self.classes]
            if bad:
                raise ValueError(f"classes {bad} are not among the fitted classes {self.classes}")
            blocks = [(c, self.table[self.table["class"] == c]) for c in want]
        style = {"fmt": "o-", "ms": 4, "capsize": 2, **kwargs}
        for c, t in blocks:
            yerr = (
                np.clip(np.vstack([t.observed - t.ci_lower, t.ci_upper - t.observed]), 0, None) if intervals else None
            )
            label = (
                f"{self.method} (ECE {self.ece:.3f})"
                if c is None
                else f"class {c} (ECE {self.by_class.loc[c, 'ece']:.3f})"
            )
            ax.errorbar(t.mean_predicted, t.observed, yerr=yerr, label=label, **style)
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.set_xlabel("mean predicted probability" if self.binary else "mean predicted probability (one-vs-rest)")
        ax.set_ylabel("observed frequency" + ("" if not self.binary else f" of y = {self.classes[1]}"))
        ax.set_title(f"Reliability diagram, {self.bins} {self.strategy} bins")
        ax.legend(fontsize=8, loc="upper left")
        return ax


def calibration(
    fit,
    newdata,
    bins: int = 10,
    strategy: str = "uniform",
    *,
    y=None,
    s=None,
    level: float = 0.95,
    interval: str = "wilson",
    **options,
) -> CalibrationResult:
    """Calibration of a fit's class probabilities on test data.

    Works for every fit that gives class probabilities (``clearn``, ``lum``, ``gboost_c`` and
    the trees, ``svm`` with a probability ``method=``, ...).

    Parameters
    ----------
    fit : Fit
        A fitted model.
    newdata : DataFrame or array
        Test data; for a formula fit it holds the response column.
    bins : int, default 10
        Number of probability bins.
    strategy : {"uniform", "quantile"}
        Equal-width bins on [0, 1], or bins with equal numbers of test cases.
    y : array_like, optional
        Observed labels when ``newdata`` has no response column (matrix fits).
    s : float, optional
        For path fits, the penalty value to predict at (default the fit's selected value).
    level : float, default 0.95
        Confidence level of the bins' intervals.
    interval : str, default "wilson"
        Wilson score interval of the observed frequency (``"exact"``: Clopper-Pearson), computed
        by statsmodels' ``proportion_confint``.
    **options
        Passed to ``fit.predict(newdata, type="prob", ...)``, e.g. ``method="platt"`` for svm.

    Returns
    -------
    CalibrationResult
        ``.table`` (reliability table), ``.by_class``, ``.brier``, ``.ece``, ``.summary()``,
        ``.plot()``. Two classes: the event is ``y = classes[1]`` (``+1`` for -1/+1 labels)
        with ``p = P(classes[1])``; K > 2 classes: one-vs-rest, class ``k`` against the rest
        with ``p = P(k)``.

    Examples
    --------
    >>> import cohstats as cs
    >>> from cohstats.datasets import make_wsl2
    >>> fit = cs.clearn("y ~ x1 + x2", data=make_wsl2(100, random_state=1), lambda_=0.01)
    >>> cal = calibration(fit, make_wsl2(500, random_state=2), bins=5)
    >>> int(cal.table.n.sum()), 0 <= cal.ece <= 1
    (500, True)
    """
    from .reporting import _check_level, _ci_method, observed_classes

    if not isinstance(fit, FitBase):
        raise TypeError(f"fit must be a cohstats fit; got {type(fit).__name__}")
    nb = _check_bins(bins)
    strategy = _check_strategy(strategy)
    lv = _check_level(level)
    _ci_method(interval)
    yk = observed_classes(fit, newdata, y)
    P = fit.predict(newdata, type="prob", **({} if s is None else {"s": s}), **options)
    P = np.asarray(P, dtype=float)
    if P.shape[0] != yk.size:
        raise ValueError(
            f"the fit predicted {P.shape[0]} rows for {yk.size} observed labels "
            "(rows with missing values?); drop them from newdata first"
        )
    if not np.all(np.isfinite(P)):
        raise ValueError("the fit returned non-finite probabilities for newdata")
    classes = fit.classes
    K = len(classes)
    E = np.zeros_like(P)
    E[np.arange(yk.size), yk] = 1.0
    events = [1] if K == 2 else list(range(K))
    blocks, rows = [], []
    for k in events:
        tab, ece_k = reliability(P[:, k], E[:, k] > 0, bins=nb, strategy=strategy, level=lv, interval=interval)
        if K > 2:
            tab.insert(0, "class", classes[k])
        blocks.append(tab)
        rows.append(
            {
                "class": classes[k],
                "n_events": int(E[:, k].sum()),
                "brier": float(np.mean((E[:, k] - P[:, k]) ** 2)),
                "ece": ece_k,
            }
        )
    by_class = pd.DataFrame(rows).set_index("class")
    table = pd.concat(blocks, ignore_index=True)
    if K == 2:
        brier, ece = float(by_class["brier"].iloc[0]), float(by_class["ece"].iloc[0])
    else:
        brier = float(np.mean(np.sum((E - P) ** 2, axis=1)))
        ece = float(by_class["ece"].mean())
    opts = dict(options, **({} if s is None else {"s": s}))
    return CalibrationResult(
        method=fit.method,
        classes=classes,
        n=yk.size,
        bins=nb,
        strategy=strategy,
        level=lv,
        interval=interval,
        table=table,
        by_class=by_class,
        brier=brier,
        ece=ece,
        options=opts,
    )


# ----------------------------------------------------------------------------- array helpers
def calibration_table(p_hat, y, n_bins: int = 10, strategy: str = "uniform", positive=1) -> pd.DataFrame:
    """Reliability table: per bin of predicted probability, mean prediction and observed frequency.

    Parameters
    ----------
    p_hat : array_like
        Predicted ``P(y = positive)``.
    y : array_like
        Observed labels (``positive`` marks the event; e.g. +1 with -1/+1 labels) or 0/1.
    n_bins : int
        Number of bins.
    strategy : {"uniform", "quantile"}
        Equal-width bins on [0, 1] or bins with equal counts.

    Returns
    -------
    DataFrame with ``bin_lo, bin_hi, n, mean_predicted, observed, se`` (binomial standard error
    of the observed frequency, ``sqrt(mean_predicted (1 - mean_predicted) / n)``); empty bins
    are dropped. Bins are ``[lo, hi)`` (the last closed). :func:`reliability` gives Wilson
    intervals and the ECE, :func:`calibration` works on a fit directly.

    Examples
    --------
    >>> t = calibration_table([0.1, 0.2, 0.8, 0.9], [-1, -1, 1, 1], n_bins=2)
    >>> t[["n", "observed"]].to_numpy().tolist()
    [[2.0, 0.0], [2.0, 1.0]]
    """
    p = np.asarray(p_hat, dtype=float).ravel()
    yy = np.asarray(y).ravel()
    if p.shape != yy.shape:
        raise ValueError(f"p_hat and y must have the same length; got {p.size} and {yy.size}")
    if np.any(~np.isfinite(p)) or np.any((p < 0) | (p > 1)):
        raise ValueError("p_hat must be probabilities in [0, 1]")
    if not isinstance(n_bins, (int, np.integer)) or n_bins < 1:
        raise ValueError(f"n_bins must be a positive integer; got {n_bins!r}")
    if strategy == "uniform":
        edges = np.linspace(0, 1, n_bins + 1)
    elif strategy == "quantile":
        edges = np.unique(np.quantile(p, np.linspace(0, 1, n_bins + 1)))
        edges[0], edges[-1] = min(edges[0], 0.0), max(edges[-1], 1.0)
    else:
        raise ValueError(f"strategy must be 'uniform' or 'quantile'; got {strategy!r}")
    event = (yy == positive).astype(float)
    idx = np.clip(np.searchsorted(edges, p, side="right") - 1, 0, len(edges) - 2)
    rows = []
    for b in range(len(edges) - 1):
        m = idx == b
        k = int(m.sum())
        if k == 0:
            continue
        mp = float(p[m].mean())
        rows.append(
            (edges[b], edges[b + 1], float(k), mp, float(event[m].mean()), math.sqrt(max(mp * (1 - mp), 0.0) / k))
        )
    return pd.DataFrame(rows, columns=["bin_lo", "bin_hi", "n", "mean_predicted", "observed", "se"])


def plot_calibration(
    p_hat, y, n_bins: int = 10, strategy: str = "uniform", positive=1, label: str | None = None, ax=None, p_true=None
):
    """Reliability diagram: observed frequency against mean predicted probability per bin.

    Points carry 95 % binomial intervals; a histogram of ``p_hat`` sits underneath. With
    ``p_true`` (true probabilities, e.g. from a generator's ``return_prob``) a second set of
    points shows the mean true probability per bin, an error-free reference. Returns the
    ``Figure`` (``CalibrationResult.plot`` returns an Axes).

    Examples
    --------
    >>> from cohstats.datasets import make_wsl2
    >>> df, p = make_wsl2(500, random_state=0, return_prob=True)
    >>> fig = plot_calibration(p, df.y, label="true p")
    >>> len(fig.axes)
    2
    """
    plt = _plt()
    tab = calibration_table(p_hat, y, n_bins=n_bins, strategy=strategy, positive=positive)
    if ax is None:
        fig, (ax, axh) = plt.subplots(2, 1, figsize=(5, 6), sharex=True, gridspec_kw={"height_ratios": [3, 1]})
    else:
        fig, axh = ax.figure, None
    ax.plot([0, 1], [0, 1], color="0.6", ls="--", lw=1, label="perfect calibration")
    ax.errorbar(
        tab.mean_predicted, tab.observed, yerr=1.96 * tab.se, fmt="o-", ms=4, capsize=2, label=label or "estimate"
    )
    if p_true is not None:
        pt = np.asarray(p_true, float).ravel()
        ph = np.asarray(p_hat, float).ravel()
        edges = np.concatenate([tab.bin_lo.to_numpy(), tab.bin_hi.to_numpy()[-1:]])
        idx = np.clip(np.searchsorted(edges, ph, side="right") - 1, 0, len(edges) - 2)
        tp = [pt[idx == b].mean() for b in range(len(edges) - 1)]
        ax.plot(tab.mean_predicted, tp, "s", ms=4, mfc="none", label="mean true p in bin")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_ylabel("observed frequency")
    ax.set_title("Reliability diagram")
    ax.legend(fontsize=8, loc="upper left")
    if axh is not None:
        axh.hist(np.asarray(p_hat, float).ravel(), bins=np.linspace(0, 1, 41), color="0.5")
        axh.set_xlabel("predicted probability")
        axh.set_ylabel("count")
        fig.tight_layout()
    return fig


class _CallableModule(types.ModuleType):
    """This module's type: calling the module calls :func:`calibration`, so that
    ``cohstats.calibration(fit, newdata)`` works as documented while the module's other names
    (``cohstats.calibration.reliability``, ...) remain its attributes."""

    def __call__(self, fit, newdata, *args, **kwargs) -> CalibrationResult:
        return calibration(fit, newdata, *args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
