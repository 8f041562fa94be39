"""Report tables with the field's standard intervals and tests (statsmodels).

* :func:`error_ci` -- confidence interval of an error rate (Wilson score interval by default,
  Clopper-Pearson "exact" on request), from ``statsmodels.stats.proportion.proportion_confint``.
* :func:`mcnemar_test` -- McNemar's test of two classifiers on the same test cases, from
  ``statsmodels.stats.contingency_tables.mcnemar`` (exact binomial test for few discordant
  cases, continuity-corrected chi-square otherwise).
* :func:`compare` -- one table of several fitted models on the same test data: error with its
  interval, Brier score, cross-entropy, AUC for two classes, and McNemar tests between every
  pair, as a :class:`~cohstats.results.Summary` (text, Markdown, LaTeX, HTML), their p-values
  adjusted for the number of pairs (Holm by default, statsmodels' ``multipletests``).
"""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd

from . import metrics
from .summary import FitBase, Summary

__all__ = ["error_ci", "mcnemar_test", "compare", "observed_classes", "adjust_pvalues", "P_ADJUST_METHODS"]

#: our method names -> statsmodels' ``proportion_confint`` names
_CI_METHODS = {
    "wilson": "wilson",
    "exact": "beta",
    "clopper-pearson": "beta",
    "beta": "beta",
    "jeffreys": "jeffreys",
    "agresti_coull": "agresti_coull",
    "normal": "normal",
}
_CI_LABELS = {
    "wilson": "Wilson score",
    "beta": "Clopper-Pearson (exact)",
    "jeffreys": "Jeffreys",
    "agresti_coull": "Agresti-Coull",
    "normal": "normal approximation (Wald)",
}

#: ``p_adjust`` names accepted by :func:`compare` (statsmodels' ``multipletests`` methods) -> label
P_ADJUST_METHODS = {
    "bonferroni": "Bonferroni",
    "sidak": "Sidak",
    "holm-sidak": "Holm-Sidak",
    "holm": "Holm",
    "simes-hochberg": "Simes-Hochberg",
    "hommel": "Hommel",
    "fdr_bh": "Benjamini-Hochberg (FDR)",
    "fdr_by": "Benjamini-Yekutieli (FDR)",
    "fdr_tsbh": "two-stage Benjamini-Hochberg (FDR)",
    "fdr_tsbky": "two-stage Benjamini-Krieger-Yekutieli (FDR)",
}

#: below this many discordant pairs McNemar's test is the exact binomial test
EXACT_MCNEMAR_BELOW = 25


def _check_level(level) -> float:
    try:
        lv = float(level)
    except (TypeError, ValueError):
        raise TypeError(f"level must be a number in (0, 1); got {level!r}") from None
    if not 0.0 < lv < 1.0:
        raise ValueError(f"level must be in (0, 1), e.g. 0.95; got {level!r}")
    return lv


def _ci_method(method) -> str:
    key = str(method).strip().lower() if isinstance(method, str) else method
    if key not in _CI_METHODS:
        raise ValueError(f"method must be one of {sorted(_CI_METHODS)}; got {method!r}")
    return _CI_METHODS[key]


def error_ci(errors, n, level: float = 0.95, method: str = "wilson"):
    """Confidence interval of an error rate ``errors / n``.

    Parameters
    ----------
    errors : int or array_like of int
        Number of misclassified test cases (``0 <= errors <= n``).
    n : int or array_like of int
        Number of test cases (positive).
    level : float, default 0.95
        Confidence level.
    method : {"wilson", "exact", "jeffreys", "agresti_coull", "normal"}
        ``"wilson"`` is Wilson's score interval (good coverage also near 0 and 1, the usual choice
        for a test error); ``"exact"`` (also ``"clopper-pearson"`` / ``"beta"``) is the
        Clopper-Pearson interval from the binomial distribution, conservative. Computed by
        ``statsmodels.stats.proportion.proportion_confint``.

    Returns
    -------
    (lower, upper)
        Floats for scalar input, arrays otherwise.

    Examples
    --------
    >>> lo, hi = error_ci(12, 100)
    >>> round(lo, 4), round(hi, 4)
    (0.07, 0.1981)
    """
    from statsmodels.stats.proportion import proportion_confint

    lv = _check_level(level)
    sm_method = _ci_method(method)
    e = np.asarray(errors)
    m = np.asarray(n)
    if not (np.issubdtype(e.dtype, np.number) and np.issubdtype(m.dtype, np.number)):
        raise TypeError("errors and n must be numbers (counts)")
    if np.any(m <= 0) or np.any(m != np.round(m)):
        raise ValueError(f"n must be a positive whole number of test cases; got {n!r}")
    if np.any(e < 0) or np.any(e > m) or np.any(e != np.round(e)):
        raise ValueError(f"errors must be whole numbers between 0 and n; got errors={errors!r}, n={n!r}")
    lo, hi = proportion_confint(e.astype(float), m.astype(float), alpha=1.0 - lv, method=sm_method)
    if np.ndim(lo) == 0:
        return float(lo), float(hi)
    return np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)


def mcnemar_test(correct_a, correct_b, exact: bool | None = None) -> dict:
    """McNemar's test that two classifiers have the same error rate on the same test cases.

    Parameters
    ----------
    correct_a, correct_b : array_like of bool
        Whether each classifier got each test case right (same cases, same order).
    exact : bool, optional
        ``True``: exact binomial test on the discordant pairs; ``False``: chi-square with
        continuity correction (Edwards). Default: exact when there are fewer than
        :data:`EXACT_MCNEMAR_BELOW` (25) discordant pairs, the usual rule of thumb.

    Returns
    -------
    dict
        ``n01`` (A right, B wrong), ``n10`` (A wrong, B right), ``statistic`` (``min(n01, n10)``
        for the exact test, the chi-square statistic otherwise), ``pvalue`` (two-sided) and
        ``test`` (its name), as computed by ``statsmodels.stats.contingency_tables.mcnemar``.

    Examples
    --------
    >>> r = mcnemar_test([1, 1, 1, 0, 1, 1], [0, 0, 1, 0, 1, 0])
    >>> r["n01"], r["n10"], r["pvalue"]
    (3, 0, 0.25)
    """
    from statsmodels.stats.contingency_tables import mcnemar

    a = np.asarray(correct_a).astype(bool).ravel()
    b = np.asarray(correct_b).astype(bool).ravel()
    if a.shape != b.shape:
        raise ValueError(f"correct_a and correct_b must cover the same test cases; got {a.size} and {b.size}")
    n11 = int(np.sum(a & b))
    n01 = int(np.sum(a & ~b))
    n10 = int(np.sum(~a & b))
    n00 = int(np.sum(~a & ~b))
    if exact is None:
        exact = (n01 + n10) < EXACT_MCNEMAR_BELOW
    res = mcnemar(np.array([[n11, n01], [n10, n00]]), exact=bool(exact), correction=True)
    return {
        "n01": n01,
        "n10": n10,
        "statistic": float(res.statistic),
        "pvalue": float(res.pvalue),
        "test": "exact binomial" if exact else "chi-square (continuity corrected)",
    }


def adjust_pvalues(pvalues, method: str | None = "holm", alpha: float = 0.05) -> np.ndarray:
    """P-values adjusted for multiple comparisons by statsmodels' ``multipletests``.

    Parameters
    ----------
    pvalues : array_like
        Raw p-values.
    method : str or None, default "holm"
        One of :data:`P_ADJUST_METHODS` (Holm's step-down method [Holm1979]_ controls the
        family-wise error rate under any dependence between the tests); None returns the raw
        p-values.
    alpha : float, default 0.05
        Family error rate; only the two-stage FDR methods use it in the adjusted values.

    Returns
    -------
    ndarray
        Adjusted p-values in the order given.

    References
    ----------
    .. [Holm1979] S. Holm (1979). A simple sequentially rejective multiple test procedure.
       *Scandinavian Journal of Statistics* 6, 65-70.

    Examples
    --------
    >>> adjust_pvalues([0.01, 0.04, 0.03]).round(3).tolist()
    [0.03, 0.06, 0.06]
    """
    p = np.asarray(pvalues, dtype=float)
    if method is None:
        return p.copy()
    if method not in P_ADJUST_METHODS:
        raise ValueError(
            f"p_adjust must be None or one of statsmodels' multipletests methods {sorted(P_ADJUST_METHODS)}; "
            f"got {method!r}"
        )
    if p.size == 0:
        return p.copy()
    from statsmodels.stats.multitest import multipletests

    return np.asarray(multipletests(p, alpha=alpha, method=method)[1], dtype=float)


# ----------------------------------------------------------------------------- observed classes
def observed_classes(fit: FitBase, newdata, y=None) -> np.ndarray:
    """The observed classes of ``newdata`` as codes ``0..K-1`` in ``fit.classes`` order.

    Parameters
    ----------
    fit : Fit
    newdata : DataFrame or array
        Test data. For a formula fit it holds the response column (``fit.design.yname``).
    y : array_like, optional
        Observed labels when ``newdata`` lacks the response (matrix fits).

    Raises
    ------
    ValueError
        When no response is available, or a label is not one of the training classes.
    """
    if y is None:
        yname = fit.design.yname
        if isinstance(newdata, pd.DataFrame) and yname is not None and yname in newdata.columns:
            y = newdata[yname]
        else:
            raise ValueError(f"newdata has no response column {yname!r}; pass the observed labels as y=")
    codes = np.asarray(fit.design.code_y(y))
    if fit.design.binary:
        return (codes > 0).astype(np.int64)
    return codes.astype(np.int64)


def _check_fits(fits, names):
    if isinstance(fits, FitBase):
        fits = [fits]
    if isinstance(fits, dict):
        if names is not None:
            raise TypeError("give names either as the keys of a dict of fits or as names=, not both")
        names, fits = [str(k) for k in fits], list(fits.values())
    else:
        fits = list(fits)
    if not fits:
        raise ValueError("fits is empty; pass a list (or dict name -> fit) of fitted models")
    for i, f in enumerate(fits):
        if not isinstance(f, FitBase):
            raise TypeError(f"fits[{i}] is a {type(f).__name__}, not a cohstats fit")
    if names is None:
        names = [f.method for f in fits]
        if len(set(names)) < len(names):  # disambiguate: clearn, clearn -> clearn.1, clearn.2
            seen: dict = {}
            for nm in names:
                seen[nm] = seen.get(nm, 0) + 1
            count: dict = {}
            out = []
            for nm in names:
                if seen[nm] > 1:
                    count[nm] = count.get(nm, 0) + 1
                    out.append(f"{nm}.{count[nm]}")
                else:
                    out.append(nm)
            names = out
    names = [str(n) for n in names]
    if len(names) != len(fits):
        raise ValueError(f"names has {len(names)} entries for {len(fits)} fits")
    if len(set(names)) != len(names):
        raise ValueError(f"names must be distinct; got {names}")
    ref = fits[0].classes
    for nm, f in zip(names, fits):
        if list(f.classes) != list(ref):
            raise ValueError(
                f"fit {nm!r} has classes {f.classes}, fit {names[0]!r} has {ref}: "
                "compare needs models of the same response"
            )
    return fits, names


def compare(
    fits,
    newdata,
    names=None,
    *,
    y=None,
    level: float = 0.95,
    interval: str = "wilson",
    exact: bool | None = None,
    options: dict | None = None,
    p_adjust: str | None = "holm",
) -> Summary:
    """Compare several fitted models on the same test data: the table a report needs.

    Parameters
    ----------
    fits : list of Fit, or dict name -> Fit
        Fitted models of the same response (same classes). Path fits are evaluated at their
        selected value ``s``.
    newdata : DataFrame or array
        Test data (with the response column for formula fits).
    names : list of str, optional
        Row labels (default: the fit functions' names, numbered when repeated).
    y : array_like, optional
        Observed labels when ``newdata`` has no response column.
    level : float, default 0.95
        Confidence level of the error intervals.
    interval : {"wilson", "exact", ...}
        Interval of the error rate, see :func:`error_ci`.
    exact : bool, optional
        McNemar's test exact (binomial) or chi-square; default exact below 25 discordant pairs
        (:func:`mcnemar_test`).
    options : dict name -> dict, optional
        Extra arguments of ``predict(type="prob")`` per model, e.g.
        ``{"svm": {"method": "platt"}}``.
    p_adjust : str or None, default "holm"
        Adjustment of the pairwise McNemar p-values for the number of pairs, by statsmodels'
        ``multipletests`` (:func:`adjust_pvalues`): ``"holm"`` (family-wise error rate),
        ``"bonferroni"``, ``"fdr_bh"``, ... (:data:`P_ADJUST_METHODS`); None leaves them raw.

    Returns
    -------
    Summary
        Table ``"Test performance"``: per model ``n``, ``errors``, ``error``, the interval
        ``ci_lower`` / ``ci_upper``, ``brier`` (two classes: ``mean (y - p)^2`` with ``p`` the
        probability of the second class; K classes: ``mean sum_k (1[y = k] - p_k)^2``),
        ``cross_entropy`` (``-mean log p_y``, the CRE/EKL of [WSL] and [ZDJ]) and for two classes
        ``auc`` (from the probability, or from the decision value for a model without
        probabilities; Brier and cross-entropy are then missing). Table ``"McNemar tests"``: per
        pair ``n01`` (first right, second wrong), ``n10``, ``statistic``, ``pvalue`` (raw),
        ``p_adjusted`` (unless ``p_adjust=None``), ``test``.
        Classes are each model's own ``predict(type="class")``.

    Examples
    --------
    >>> import cohstats as cs
    >>> from cohstats.datasets import make_wsl2
    >>> train, test = make_wsl2(100, random_state=1), make_wsl2(300, random_state=2)
    >>> a = cs.clearn("y ~ x1 + x2", data=train, lambda_=0.01)
    >>> b = cs.clearn("y ~ x1 + x2", data=train, lambda_=0.01, kernel="rbf")
    >>> tab = compare({"linear": a, "rbf": b}, test)
    >>> list(tab.tables)
    ['Test performance', 'McNemar tests']
    """
    lv = _check_level(level)
    sm_method = _ci_method(interval)
    adjust_pvalues([], p_adjust)  # check the name before any work
    fits, names = _check_fits(fits, names)
    options = dict(options or {})
    unknown = set(options) - set(names)
    if unknown:
        raise ValueError(f"options names unknown models {sorted(unknown)}; models: {names}")
    yk = observed_classes(fits[0], newdata, y)
    n = int(yk.size)
    K = fits[0].n_classes
    rows, correct = [], {}
    notes = []
    for nm, f in zip(names, fits):
        cls = f.predict(newdata, type="class")
        pred = np.asarray(f.design.code_y(cls))
        pred = (pred > 0).astype(np.int64) if f.design.binary else pred.astype(np.int64)
        if pred.size != n:
            raise ValueError(
                f"model {nm!r} predicted {pred.size} rows for {n} observed labels "
                "(rows with missing values?); drop them from newdata first"
            )
        ok = pred == yk
        correct[nm] = ok
        errs = int(n - ok.sum())
        lo, hi = error_ci(errs, n, level=lv, method=sm_method)
        row = {
            "model": nm,
            "n": n,
            "errors": errs,
            "error": errs / n,
            "ci_lower": lo,
            "ci_upper": hi,
            "brier": np.nan,
            "cross_entropy": np.nan,
        }
        try:
            P = np.asarray(f.predict(newdata, type="prob", **options.get(nm, {})), dtype=float)
        except NotImplementedError:
            P = None
            notes.append(
                f"{nm} gives no class probabilities: Brier and cross-entropy are missing"
                + ("; its AUC uses the decision value" if K == 2 else "")
            )
        if P is not None:
            if K == 2:
                row["brier"] = metrics.brier(yk, P[:, 1])
            else:
                row["brier"] = metrics.brier_multi(yk, P)
            row["cross_entropy"] = metrics.cross_entropy(yk, P)
            if np.isinf(row["cross_entropy"]):
                notes.append(
                    f"{nm}: cross_entropy is inf because some test case got probability 0 for its observed class"
                )
        if K == 2:
            score = P[:, 1] if P is not None else np.asarray(f.predict(newdata, type="link"), dtype=float)
            row["auc"] = metrics.auc(yk, score) if 0 < yk.sum() < n else np.nan
        rows.append(row)
    perf = pd.DataFrame(rows).set_index("model")
    pairs = []
    for a, b in combinations(names, 2):
        r = mcnemar_test(correct[a], correct[b], exact=exact)
        pairs.append({"models": f"{a} vs {b}", **r})
    tables = {"Test performance": perf}
    if pairs:
        mc = pd.DataFrame(pairs).set_index("models")
        if p_adjust is not None:
            mc.insert(mc.columns.get_loc("pvalue") + 1, "p_adjusted", adjust_pvalues(mc["pvalue"], p_adjust))
        tables["McNemar tests"] = mc
    label = _CI_LABELS[sm_method]
    info = {
        "test observations": n,
        "classes": ", ".join(map(str, fits[0].classes)),
        "error interval": f"{label}, {100 * lv:g} %",
    }
    notes = (
        [
            f"ci_lower/ci_upper: {label} {100 * lv:g} % interval of the error rate.",
            "brier: "
            + ("mean (1[y = " + str(fits[0].classes[1]) + "] - p)^2" if K == 2 else "mean sum_k (1[y = k] - p_k)^2")
            + "; cross_entropy: -mean log p(y).",
        ]
        + (
            [
                f"McNemar: exact binomial test below {EXACT_MCNEMAR_BELOW} discordant pairs, "
                "otherwise chi-square with continuity correction; n01 = first model right and "
                "second wrong."
            ]
            if pairs and exact is None
            else []
        )
        + (
            [
                f"p_adjusted: the McNemar p-values adjusted for the {len(pairs)} pairwise tests by the "
                f"{P_ADJUST_METHODS[p_adjust]} method (statsmodels multipletests, method={p_adjust!r})."
            ]
            if pairs and p_adjust is not None
            else []
        )
        + notes
    )
    return Summary("Comparison on test data", info, tables, notes)
