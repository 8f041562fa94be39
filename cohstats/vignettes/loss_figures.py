"""Loss-function figures: [ZDJ] Figure 1, [LZW] Figures 1-3, and a reliability diagram.

No replication is involved (``reps`` only sets the size of the calibration example:
``reps * 2000`` points of [WSL] Example 2). The report checks numerically what the figures
show: the C-loss tends to the hinge loss as ``rho -> 0``, the LUM loss tends to the hinge as
``c -> inf``, and the LUM minimizer plotted in Figure 3 minimizes the pointwise risk.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

TITLE = "Loss functions and calibration figures"
DEFAULT_REPS = 1
FULL_REPS = 10


def _pointwise_risk_check(
    a_values=(1.0, 10.0), c_values=(0.0, 1.0, 5.0), p_values=(0.1, 0.3, 0.7, 0.9)
) -> pd.DataFrame:
    """Compare the closed-form LUM minimizer with a numerical minimization of the risk."""
    from scipy.optimize import minimize_scalar

    from cohstats.plotting import loss_curve, lum_minimizer

    rows = []
    for a in a_values:
        for c in c_values:
            for p in p_values:
                risk = lambda f: p * loss_curve("lum", [f], a, c)[0] + (1 - p) * loss_curve("lum", [-f], a, c)[0]
                num = minimize_scalar(risk, bounds=(-20, 20), method="bounded", options={"xatol": 1e-10}).x
                rows.append({"a": a, "c": c, "p": p, "closed_form": float(lum_minimizer(p, a, c)), "numerical": num})
    df = pd.DataFrame(rows)
    df["abs_diff"] = (df.closed_form - df.numerical).abs()
    return df


def run(
    reps: int = DEFAULT_REPS,
    out="vignette_reports/loss_figures",
    seed: int = 0,
    n_jobs: int | None = None,
    quick: bool = True,
) -> Path:
    """Write the loss-figure report into ``out`` and return its path.

    Examples
    --------
    >>> import tempfile
    >>> run(1, tempfile.mkdtemp()).name
    'loss_figures.md'
    """
    from cohstats.datasets import make_wsl2
    from cohstats.plotting import (
        calibration_table,
        loss_curve,
        plot_calibration,
        plot_coherence_losses,
        plot_lum_hybrid,
        plot_lum_losses,
        plot_lum_minimizer,
    )

    from .report import Report

    rep = Report(TITLE, out, name="loss_figures")
    rep.settings(
        {"reps": reps, "seed": seed, "quick": quick, "calibration sample": f"[WSL] Example 2, n = {2000 * reps}"}
    )

    rep.section("Coherence functions and the C-loss ([ZDJ] Figure 1)")
    with rep.timed("ZDJ Figure 1"):
        rep.figure(
            plot_coherence_losses(),
            "zdj_figure1",
            "(a) V_{rho,1}, (b) majorizations of the 0-1 loss, (c) C_{rho,1}, (d) L_{1,u} = V_{1,u}/V_{1,u}(0).",
        )
    z = np.linspace(-2, 3, 501)
    hinge = loss_curve("hinge", z)
    rows = [
        {
            "rho": rho,
            "max |C_{rho,1} - hinge|": float(np.max(np.abs(loss_curve("C", z, rho, 1.0) - hinge))),
            "max |V_{rho,1} - hinge|": float(np.max(np.abs(loss_curve("V", z, rho, 1.0) - hinge))),
        }
        for rho in (2.0, 1.0, 0.1, 0.01)
    ]
    rep.table(
        pd.DataFrame(rows),
        caption="Both tend to the hinge loss as rho -> 0 "
        "(V_{rho,1} - hinge is at most rho log 2; [ZDJ] Proposition 3).",
        floatfmt=".4g",
    )

    rep.section("LUM losses ([LZW] Figures 1 and 2)")
    with rep.timed("LZW Figures 1-2"):
        rep.figure(
            plot_lum_losses(),
            "lzw_figure1",
            "LUM loss for a = 1 and c = 0, 1, 10, inf (left) and c = 1 with a = 1, 10, 100, inf (right).",
        )
        rep.figure(
            plot_lum_hybrid(),
            "lzw_figure2",
            "The hybrid LUM (a = inf, c = 0) against hinge/exponential (left) and "
            "between the logistic loss and logistic + 1 (right).",
        )
    zz = np.linspace(-3, 5, 801)
    hyb = loss_curve("lum", zz, math.inf, 0.0)
    lg = loss_curve("logistic", zz)
    rows = [
        {
            "c": c,
            "max |V_{1,c} - hinge|": float(np.max(np.abs(loss_curve("lum", zz, 1.0, c) - loss_curve("hinge", zz)))),
        }
        for c in (1.0, 10.0, 100.0, 1000.0, 10000.0)
    ]
    rep.table(pd.DataFrame(rows), caption="LUM tends to the hinge loss (SVM) as c grows.")
    rep.text(
        f"Hybrid bounds on u in [-3, 5]: min(hybrid - logistic) = {np.min(hyb - lg):.4f} >= 0 and "
        f"max(hybrid - (1 + logistic)) = {np.max(hyb - 1 - lg):.4f} <= 0, as [LZW] state."
    )

    rep.section("LUM population minimizer ([LZW] Figure 3)")
    with rep.timed("LZW Figure 3"):
        rep.figure(
            plot_lum_minimizer(),
            "lzw_figure3",
            "f* against p for a = 1 and c = 0, 1, inf; thick segments: the set of minimizers at p = 1/2.",
        )
        chk = _pointwise_risk_check()
    rep.table(
        chk,
        caption="Closed-form minimizer ([LZW] Section 3) against numerical minimization of p V(f) + (1 - p) V(-f).",
        floatfmt=".6g",
    )

    rep.section("Reliability diagram")
    with rep.timed("calibration"):
        df, p = make_wsl2(2000 * reps, random_state=seed, return_prob=True)
        tab = calibration_table(p, df.y, n_bins=10)
        tab["z"] = (tab.observed - tab.mean_predicted) / tab.se.where(tab.se > 0)
        inside, nbins = _within_bars(tab)
        rep.figure(
            plot_calibration(p, df.y, label="true p(x)"),
            "calibration_true_p",
            f"The true probability of [WSL] Example 2 against the observed frequencies of {len(df)} "
            f"draws: in {inside} of the {nbins} bins the observed frequency lies within the 95 % "
            "binomial bar (observed +- 1.96 SE) of the mean true probability.",
        )
    rep.table(tab, caption="Calibration table of the true probability (z = standardized gap).")
    return rep.write()


def _within_bars(tab):
    """``(k, m)``: in ``k`` of the ``m`` bins of a calibration table (empty bins are not in it)
    the mean predicted probability lies within ``observed +- 1.96 se``, the bars
    :func:`cohstats.calibration.plot_calibration` draws."""
    ok = (tab.observed - tab.mean_predicted).abs() <= 1.96 * tab.se
    return int(ok.sum()), int(len(tab))


def main(argv=None):
    """Command line: ``python -m cohstats.vignettes.loss_figures --out DIR``."""
    from .runner import vignette_main

    return vignette_main(run, argv, "loss_figures", default_reps=DEFAULT_REPS)


if __name__ == "__main__":
    main()
