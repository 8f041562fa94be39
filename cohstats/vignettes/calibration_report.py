"""Calibration per probability method for the paper vignettes (shared helper, not a vignette).

The vignettes reproducing [WSL], [ZDJ] and [LZW] collect, per replication, the test-set
probabilities of every method; :func:`add_calibration` pools them over the replications per
method and adds to a report

* a table per method: test cases, Brier score ``mean (1[y = +1] - p_hat)^2``, expected
  calibration error (10 equal-width bins) and the largest bin gap ``|observed - predicted|``
  among bins with at least 20 cases, as :func:`cohstats.calibration.reliability` (the function
  behind ``fit.calibration(newdata)``) computes them, here from per-bin sums pooled over the
  replications (pooling is exact because equal-width bins have fixed edges);
* a reliability diagram (observed frequency against mean predicted probability per bin, with
  Wilson intervals), one panel per data set or example;
* the full reliability tables as ``<name>_calibration.csv`` next to the report.

This module defines no ``run()``, so the vignette runner does not list it.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

__all__ = ["calibration_record", "calibration_tables", "add_calibration"]


BINS = 10


def calibration_record(keys: dict, p_hat, y, bins: int = BINS) -> dict:
    """One method's test probabilities of ``y = +1`` on one replication, reduced to the sums
    per equal-width bin that a reliability table needs (so that thousands of replications of
    large test sets pool in little memory): counts, sums of ``p_hat``, events and squared
    errors. Non-finite probabilities (a degenerate estimate) make the record ``finite=False``.
    """
    from cohstats.calibration import _bin_index, _edges

    p = np.asarray(p_hat, dtype=float).ravel()
    e = (np.asarray(y).ravel() > 0).astype(float)
    if p.shape != e.shape:
        raise ValueError(f"p_hat and y must have the same length; got {p.size} and {e.size}")
    if not np.all(np.isfinite(p)):
        return dict(keys, finite=False)
    p = np.clip(p, 0.0, 1.0)
    idx = _bin_index(p, _edges(p, bins, "uniform"))
    return dict(
        keys,
        finite=True,
        bins=bins,
        n=np.bincount(idx, minlength=bins).astype(float),
        sp=np.bincount(idx, weights=p, minlength=bins),
        se=np.bincount(idx, weights=e, minlength=bins),
        sq=np.bincount(idx, weights=(e - p) ** 2, minlength=bins),
    )


def _reliability_from_sums(n, sp, se, bins):
    """The table of :func:`cohstats.calibration.reliability` (uniform bins) from bin sums."""
    from cohstats.reporting import error_ci

    edges = np.linspace(0.0, 1.0, bins + 1)
    keep = n > 0
    b = np.flatnonzero(keep)
    nk, ev = n[keep], se[keep]
    mp, ob = sp[keep] / nk, ev / nk
    lo, hi = error_ci(np.round(ev).astype(np.int64), nk.astype(np.int64), level=0.95, method="wilson")
    tab = pd.DataFrame(
        {
            "bin": b + 1,
            "bin_lo": edges[b],
            "bin_hi": edges[b + 1],
            "n": nk.astype(np.int64),
            "events": np.round(ev).astype(np.int64),
            "mean_predicted": mp,
            "observed": ob,
            "ci_lower": np.atleast_1d(lo),
            "ci_upper": np.atleast_1d(hi),
            "gap": ob - mp,
        }
    )
    ece = float(np.sum(nk * np.abs(ob - mp)) / n.sum())
    return tab, ece


def calibration_tables(records, keys, min_bin: int = 20):
    """Pool the records by ``keys``; return ``(summary, reliability)`` DataFrames.

    ``summary``: per key combination ``reps`` (records pooled), ``degenerate`` (records with
    non-finite probabilities, left out), ``n`` (test cases), ``brier``, ``ece`` and
    ``max_gap`` (largest ``|observed - mean_predicted|`` over bins with at least ``min_bin``
    cases). ``reliability``: the reliability tables (as
    :func:`cohstats.calibration.reliability` gives them) with the keys in front.
    """
    keys = list(keys)
    groups: dict = {}
    for r in records:
        groups.setdefault(tuple(r[k] for k in keys), []).append(r)
    rows, rels = [], []
    for kv, rs in groups.items():
        ok = [r for r in rs if r["finite"]]
        row = dict(zip(keys, kv), reps=len(ok), degenerate=len(rs) - len(ok))
        if ok:
            n = sum(r["n"] for r in ok)
            tab, ece = _reliability_from_sums(n, sum(r["sp"] for r in ok), sum(r["se"] for r in ok), ok[0]["bins"])
            big = tab[tab.n >= min_bin]
            row.update(
                n=int(n.sum()),
                brier=float(sum(r["sq"].sum() for r in ok) / n.sum()),
                ece=ece,
                max_gap=float(np.abs(big.gap).max()) if len(big) else np.nan,
            )
            for k, v in zip(reversed(keys), reversed(kv)):
                tab.insert(0, k, v)
            rels.append(tab)
        rows.append(row)
    summ = pd.DataFrame(rows, columns=keys + ["reps", "degenerate", "n", "brier", "ece", "max_gap"])
    rel = pd.concat(rels, ignore_index=True) if rels else pd.DataFrame(columns=keys + ["bin"])
    return summ, rel


def add_calibration(rep, records, keys, panel: str, line, *, title: str, name: str, lines=None) -> pd.DataFrame:
    """Add the calibration table and the reliability diagram of ``records`` to ``rep``.

    Parameters
    ----------
    rep : :class:`cohstats.vignettes.report.Report`
    records : list of :func:`calibration_record` dicts.
    keys : key columns of a method (e.g. ``["example", "classifier", "method"]``).
    panel : the key whose values get one panel each (e.g. ``"example"``).
    line : the key (or a list of keys, whose values are joined by a space) drawn as one curve
        per value within a panel.
    title, name : caption prefix and figure file name.
    lines : optional list of ``line`` values to draw (default all); the table lists all.

    Returns the summary table.
    """
    import matplotlib.pyplot as plt

    summ, rel = calibration_tables(records, keys)
    bins = next((r["bins"] for r in records if r["finite"]), BINS)
    if rel.empty:
        rep.text(f"{title}: no finite test probabilities to calibrate.")
        return summ
    rep.out_dir.mkdir(parents=True, exist_ok=True)
    if not isinstance(line, str):
        cols = list(line)
        line = "curve"
        for d in (summ, rel):
            d[line] = [" ".join(str(v) for v in row) for row in d[cols].itertuples(index=False)]
    rel.to_csv(rep.out_dir / f"{name}_calibration.csv", index=False)
    reps = sorted(set(summ.reps))
    rep.table(
        summ.drop(columns=["curve"], errors="ignore"),
        caption=f"{title}: calibration per method on the test sets, pooled over "
        f"{', '.join(map(str, reps))} replication(s) per method (degenerate estimates, with "
        "probabilities that are not finite, left out and counted): Brier score, expected "
        f"calibration error (ECE, {bins} equal-width bins) and the largest bin gap "
        "|observed - predicted| among bins with at least 20 cases. Full reliability tables: "
        f"`{name}_calibration.csv`.",
        floatfmt=".4f",
    )
    panels = list(dict.fromkeys(summ[panel]))
    ncol = min(4, len(panels))
    nrow = math.ceil(len(panels) / ncol)
    fig, axes = plt.subplots(nrow, ncol, figsize=(3.6 * ncol, 3.6 * nrow), squeeze=False)
    for ax, pv in zip(axes.ravel(), panels):
        ax.plot([0, 1], [0, 1], color="0.6", ls="--", lw=1)
        sub = rel[rel[panel] == pv]
        want = list(dict.fromkeys(sub[line])) if lines is None else [v for v in lines if v in set(sub[line])]
        for lv in want:
            t = sub[sub[line] == lv]
            s = summ[(summ[panel] == pv) & (summ[line] == lv)]
            ece = float(s.ece.iloc[0]) if len(s) == 1 else float("nan")
            yerr = np.clip(np.vstack([t.observed - t.ci_lower, t.ci_upper - t.observed]), 0, None)
            ax.errorbar(
                t.mean_predicted,
                t.observed,
                yerr=yerr,
                fmt="o-",
                ms=3,
                capsize=2,
                lw=1,
                label=f"{lv} (ECE {ece:.3f})" if np.isfinite(ece) else str(lv),
            )
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.set_title(str(pv), fontsize=9)
        ax.set_xlabel("mean predicted P(y = +1)", fontsize=8)
        ax.set_ylabel("observed frequency", fontsize=8)
        ax.legend(fontsize=6, loc="upper left")
    for ax in axes.ravel()[len(panels) :]:
        ax.set_visible(False)
    fig.tight_layout()
    rep.figure(
        fig,
        f"{name}_reliability",
        f"{title}: reliability diagrams ({bins} equal-width bins, Wilson 95 % intervals), "
        "test probabilities pooled over the replications; the dashed line is perfect "
        "calibration.",
    )
    plt.close(fig)
    return summ
