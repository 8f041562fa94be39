"""The fidelity table: every published cell beside our number, its z and a verdict.

A vignette run (``python -m cohstats.vignettes ... --out DIR``) leaves, next to every report,
``<report>_comparisons.csv``: one row per compared cell, written by
:meth:`cohstats.vignettes.report.Report.compare`. :func:`fidelity_table` gathers those files
and lays them over the list of published tables (:data:`PUBLISHED`), so that a published cell
no comparison of the run reached is listed too (verdict NOT COMPUTED). Verdicts
(:func:`cohstats.vignettes.report.verdict`): MATCH ``|z| <= 2``, CLOSE ``|z| <= 3``, OFF,
STAND-IN (our number comes from other data than the paper's and is never scored),
NOT COMPUTED, NO DATA (no number of ours because the paper's data set cannot be obtained
offline: :data:`cohstats.datasets.UNAVAILABLE`, with no stand-in; not scored and not counted as
missing work); NO SE when neither side has a standard error and the numbers differ.
``z = (ours - published) / sqrt(SE_pub^2 + SE_ours^2)`` with our SE floored for few
replications as :func:`cohstats.vignettes.report.compare_table` documents.

Command line::

    python -m cohstats.vignettes --fidelity --out DIR      # reads DIR, writes DIR/fidelity.md
    python -m cohstats.vignettes.fidelity DIR [--to FILE]
    python -m cohstats.vignettes.fidelity --sources SOURCES.json --to FILE   # committed runs

Examples
--------
>>> import tempfile, pandas as pd
>>> from cohstats.vignettes.report import Report
>>> d = tempfile.mkdtemp()
>>> rep = Report("Demo", d)
>>> ours = pd.DataFrame({"dataset": ["Liver"], "method": ["PLR"], "cre": [0.66], "se": [0.01]})
>>> _ = rep.compare(ours, pd.DataFrame({"dataset": ["Liver"], "method": ["PLR"],
...                 "cre": [0.665], "cre_se": [0.0049]}), on=["dataset", "method"],
...                 value="cre", se="se", published_se="cre_se", reps=2, published_reps=100,
...                 source="[WSL] Table 4")
>>> _ = rep.write(html_too=False)
>>> tab = fidelity_table(d)
>>> tab.loc[tab.cell == "Liver | PLR", ["quantity", "verdict"]].values.tolist()
[['cre', 'MATCH'], ['te', 'NOT COMPUTED']]
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import platform
import sys
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from .report import VERDICTS, _key_text, markdown_table, verdict

__all__ = [
    "PUBLISHED",
    "CAUSES",
    "FIDELITY_VERDICTS",
    "CAUSE_KINDS",
    "cause_summary",
    "summary_text",
    "fidelity_table",
    "fidelity_summary",
    "write_fidelity",
    "assemble_runs",
    "main",
]

#: The published result tables: ``(source, paper, table, key columns, value columns, vignette)``.
#: ``source`` is the label the vignettes pass to ``Report.compare(source=...)``; the key
#: columns are in the order the vignette compares on.
PUBLISHED = (
    ("[WSL] Table 1", "wsl2008", "table1", ("example", "classifier", "method"), ("gkl", "cre"), "wsl_probability"),
    ("[WSL] Table 2", "wsl2008", "table2", ("example", "method"), ("gkl", "te"), "wsl_probability"),
    ("[WSL] Table 3", "wsl2008", "table3", ("dataset", "classifier", "method"), ("cre",), "wsl_probability"),
    ("[WSL] Table 4", "wsl2008", "table4", ("dataset", "method"), ("cre", "te"), "wsl_probability"),
    ("[WSL] Table 5", "wsl2008", "table5", ("classifier", "method"), ("cre",), "wsl_probability"),
    ("[ZDJ] Table 2", "zdj2012", "table2", ("dataset", "method"), ("mean",), "zdj_svm_probability"),
    ("[ZDJ] Table 3", "zdj2012", "table3", ("dataset", "method"), ("mean",), "zdj_svm_probability"),
    ("[ZDJ] Table 5", "zdj2012", "table5", ("dataset", "method"), ("mean_pct",), "zdj_clearn"),
    ("[ZDJ] Table 6", "zdj2012", "table6", ("dataset", "method"), ("mean_pct",), "zdj_clearn"),
    ("[LZW] Table 1", "lzw2011", "table1", ("estimator", "c", "a"), ("mae",), "lum_simulations"),
    ("[LZW] Table 2", "lzw2011", "table2", ("estimator", "c", "a"), ("mae",), "lum_simulations"),
    ("[ZJLY] Table 2", "zjly2009", "table2", ("dataset", "method"), ("test_error_pct",), "gboost_uci"),
    ("[RH] Table 2", "rh2015", "table2", ("dataset", "lambda"), ("err_pct",), "lamsvm"),
)

#: Measured causes of cells that can stay outside 2 SE: ``(source, quantity, cell regex, note,
#: kind)``. The note is added to a matching cell whose verdict is CLOSE or OFF (an empty note
#: leaves the vignette's own note alone); the measurements behind each note are recorded in the
#: docstring of the module it names or in the evidence directory it names. ``kind`` is one of
#: :data:`CAUSE_KINDS` and becomes the cell's ``cause`` column.
CAUSE_KINDS = {
    "paper": "the paper's numbers contradict each other or another of its tables, or its cell is "
    "another quantity than the one it names: no single implementation can match all of them",
    "data": "the paper's data cannot be had as it used them (one fixed draw of a generator, or "
    "training sizes at which no classifier tried reaches its level)",
    "independent": "independent implementations (scikit-learn, the Bayes rule, a closed form) "
    "agree with ours and not with the paper",
    "protocol": "a step the paper leaves unstated; its readings move the cell, the vignette keeps "
    "one and the others are options",
    "sampling": "more replications or Monte Carlo draws put the cell within 2 SE",
    "open": "partly explained: the note says what was measured and ruled out, the rest is not found",
}

# scikit-learn on the samples of [ZDJ] Data 1 (results/fidelity_evidence_s12)
_SKLEARN_DATA1 = (
    "scikit-learn's Gaussian SVM (the same width), linear SVM and logistic regression on the same "
    "40 samples err 0.241-0.244 at their best fixed C and 0.235-0.241 with each sample's best C "
    "in hindsight, against [ZDJ]'s 0.214-0.219 (results/fidelity_evidence_s12)"
)

# one measurement explains the Data 1 C-learning cells of [ZDJ] Tables 2 and 3
_ZDJ_DATA1_CLEARN = (
    "not the choice of lambda: the best lambda of our C-learning path in hindsight gives GKL_c "
    "0.555 and test error 0.231 on the same samples (paper 0.549, 0.214), CV by misclassification "
    "0.585 and 0.245; the level of our samples: no lambda or width of our SVM reaches [ZDJ]'s SVM "
    "error 0.219 either (best in hindsight 0.232-0.242, Bayes rule 0.200) (zdj_svm_probability "
    "docstring); " + _SKLEARN_DATA1
)
# one measurement explains the Data 1 SVM-level cells of [ZDJ] Tables 2 and 3
_ZDJ_DATA1_SVM = (
    "the level of our SVM on these samples: at the best fixed lambda in hindsight our Gaussian SVM "
    "errs 0.234 (twice and four times the width 0.242, 0.241; linear SVM 0.232; Bayes rule 0.200) "
    "against [ZDJ]'s 0.219, so no tuning of the SVM reaches the paper's outputs "
    "(zdj_svm_probability docstring); " + _SKLEARN_DATA1
)

# one measurement explains the linear Platt cells of [WSL] Table 1, Example 2 (GKL_c and CRE)
_WSL_EX2_LINEAR_PLATT = (
    "ours is below the paper, and where the sigmoid is fitted sets the level: on the training "
    "outputs Platt on our linear SVM gives 0.165-0.173 at every lambda of the grid (0.173 for "
    "lambda >= 1; six samples) against the paper's 0.171-0.172, on cross-validated decision values "
    "0.160 at the CV lambda (four replications; wsl_probability docstring)"
)

CAUSES = (
    (
        "[WSL] Table 1",
        "cre",
        r"^Example 1 \|",
        "[WSL]'s CRE is below its own GKL_c in all 12 Example 1 rows, whereas test labels drawn "
        "from p give E[CRE] = GKL_c; compare the GKL_c cell of the row",
        "paper",
    ),
    (
        "[WSL] Table 1",
        "gkl",
        r"^Example 1 \| ((SVM|psi) [GL] \| (Platt|Tuned Platt)|(SVM|psi) L \| New)$",
        "[WSL]'s GKL_c lies 0.020-0.034 above its own CRE in all 12 Example 1 rows, whereas test "
        "labels drawn from p give E[CRE] = GKL_c; in every row where ours is below the paper, our "
        "GKL_c lies within 0.012 of the paper's CRE (four replications, wsl_probability docstring; also "
        "with twelve, results/fidelity_full_s10)",
        "paper",
    ),
    ("[WSL] Table 1", "gkl", r"^Example 2 \| (SVM|psi) L \| (Platt|Tuned Platt)$", _WSL_EX2_LINEAR_PLATT, "protocol"),
    ("[WSL] Table 1", "cre", r"^Example 2 \| (SVM|psi) L \| (Platt|Tuned Platt)$", _WSL_EX2_LINEAR_PLATT, "protocol"),
    (
        "[WSL] Table 1",
        "cre",
        r"^Example 2 \| (SVM|psi) G \| New$",
        "test labels drawn from p give E[CRE] = GKL_c, and bracketing with m = 10 stays above the "
        "paper's GKL_c even at its grid-best lambda, m = 20 goes below it: the grid size sets the "
        "level (wsl_probability docstring)",
        "protocol",
    ),
    (
        "[WSL] Table 2",
        "te",
        r"^Example 1 \| NN$",
        "30 replications of our NN give a best-k error above the published one, and below it on "
        "Example 2 (no common direction; wsl_probability docstring)",
        "open",
    ),
    (
        "[WSL] Table 2",
        "gkl",
        r"^Example 2 \| New \(psi-learning\)$",
        "bracketing with m = 10 stays above the paper even at the best fixed lambda of the grid "
        "(Gaussian psi-learning, six samples: 0.175, SE 0.006), m = 20 gives 0.156: the grid size "
        "sets the level (wsl_probability docstring)",
        "protocol",
    ),
    (
        "[WSL] Table 3",
        "cre",
        r"^(Liver|Diabetes) \| (SVM|psi) G \| (Platt|Tuned Platt)$",
        "Platt's sigmoid on Gaussian fits depends on where it is fitted: over three samples the "
        "cross-validated sigmoid puts 11 of these 12 cells within 2 SE (Liver SVM G Platt 0.660, "
        "the training sigmoid 0.775 over four samples, the paper 0.724 between); single samples "
        "vary by about 0.05 (wsl_probability docstring)",
        "protocol",
    ),
    (
        "[WSL] Table 3",
        "cre",
        r"^Mushroom \| (SVM|psi) [GL] \| (Platt|Tuned Platt)$",
        "integer level codes (the vignette's default) put every linear and New Mushroom cell within "
        "2 SE (four replications), one-hot codes put every Platt and tuned Platt cell 0.09-0.18 "
        "below the paper; the Gaussian rows stay below with either coding (integer codes 0.157-0.205 "
        "against 0.242-0.305): the published Gaussian Platt is what a kernel 100 times wider gives "
        "(0.306, 0.332 against 0.305, 0.297; six samples) and the published tuned Platt lies between "
        "the grid-best Platt of the two widths (0.165 and 0.284-0.295 against 0.242-0.243; "
        "wsl_probability docstring)",
        "paper",
    ),
    (
        "[WSL] Table 3",
        "cre",
        r"^Ionosphere \| SVM G \| Platt$",
        "the paper's tuned Platt and New of the row agree with ours, its Platt lies above ours at "
        "every lambda of the grid (twelve samples: 0.21 at the CV lambda, at most 0.31 with the "
        "cross-validated and 0.38 with the training sigmoid at any fixed lambda); only a kernel 100 "
        "times wider reaches it (0.44), and then the grid's best Platt is "
        "0.39, not the paper's tuned 0.242: the published Platt and tuned Platt are not one protocol "
        "(wsl_probability docstring)",
        "paper",
    ),
    (
        "[WSL] Table 3",
        "cre",
        r"^Ionosphere \| psi G \| Platt$",
        "the paper's tuned Platt and New of the row agree with ours; its Platt is neither our CV "
        "choice (0.228, SE 0.010, twelve samples) nor a mix of it with the constant fits of lambda "
        ">= 0.1 (0.664; the mix would spread 0.22 per replication against the paper's 0.067); only a "
        "kernel 100 times wider reaches it (0.45), and then the grid's best Platt is 0.42, not the "
        "paper's tuned 0.239: the published Platt and tuned Platt are not one protocol "
        "(wsl_probability docstring)",
        "paper",
    ),
    (
        "[WSL] Table 3",
        "cre",
        r"^Ionosphere \| psi L \| Tuned Platt$",
        "Platt on psi-learning: the grid's best lambda gives the paper's value, the GKL tuning picks "
        "a small lambda (wsl_probability docstring)",
        "open",
    ),
    (
        "[WSL] Table 5",
        "cre",
        r"^(SVM|psi) L \| (Platt|Tuned Platt)$",
        "the 38 training patients are separable, where psi-learning's DC iterations stop at the "
        "SVM they start from: our two rows are identical (0.165 with the cross-validated sigmoid, "
        "0.318 with the training one), the paper's differ twofold (0.343, 0.171), so each sigmoid "
        "matches one published row (wsl_probability docstring)",
        "paper",
    ),
    (
        "[ZDJ] Table 2",
        "mean",
        r"^Data 1 \| Ours for SVM$",
        "the link on our CV-tuned SVM stays above the paper even with rho chosen on the test set "
        "(0.587) and at every fixed lambda of the grid (best 0.581); no lambda or width of our SVM "
        "reaches [ZDJ]'s SVM error (best in hindsight 0.232-0.242 against 0.219) "
        "(zdj_svm_probability docstring); " + _SKLEARN_DATA1,
        "independent",
    ),
    (
        "[ZDJ] Table 2",
        "mean",
        r"^Data 2 \| Ours for SVM$",
        "the link on our CV-tuned SVM stays above the paper even with rho chosen on the test set "
        "(0.176) and at every fixed lambda of the grid (best 0.192), on SVM outputs that "
        "scikit-learn's SVC reproduces (zdj_svm_probability docstring; results/fidelity_evidence_s11)",
        "open",
    ),
    (
        "[ZDJ] Table 3",
        "mean",
        r"^Data 1 \| Ours for SVM$",
        _ZDJ_DATA1_SVM,
        "independent",
    ),
    (
        "[ZDJ] Table 2",
        "mean",
        r"^Data 1 \| PLR$",
        "ours is below (better than) the paper with or without standardised inputs (0.562, 0.5625); "
        "our PLR gives 0.560-0.562 at every lambda <= 3e-2 and [WSL]'s 0.579 only near lambda = "
        "1e-1 (0.575), the heavier penalty that also matches [WSL]'s Data 2 error "
        "(zdj_svm_probability docstring); scikit-learn's logistic regression gives 0.563-0.565 on "
        "200 such samples (results/fidelity_evidence_s11)",
        "independent",
    ),
    (
        "[ZDJ] Table 3",
        "mean",
        r"^Data 2 \| PLR$",
        "ours is below (better than) the paper, near the Bayes rule (0.058 on the same test sets), "
        "with or without standardised inputs; [WSL]'s 0.075 is our PLR's error at lambda = 3e-2 to "
        "1e-1 (0.069-0.078), ours that of lambda <= 3e-3 (zdj_svm_probability docstring)",
        "protocol",
    ),
    (
        "[ZDJ] Table 2",
        "mean",
        r"^Data 1 \| (Platt|Tuned Platt)$",
        "ours is below (better than) the paper: Platt's sigmoid on our SVM gives 0.544-0.546 at "
        "every lambda in [1e-3, 1e-2] and reaches the paper's 0.569-0.582 only at lambda = 1e-4 to "
        "3e-5 (C = 100-300), fits that chase the flipped labels; neither paper states its SVM's "
        "lambda for Platt; fitting the sigmoid on cross-validated instead of training decision "
        "values moves these cells by at most 0.006 (zdj_svm_probability docstring)",
        "protocol",
    ),
    (
        "[ZDJ] Table 2",
        "mean",
        r"^Data 1 \| C-learning$",
        _ZDJ_DATA1_CLEARN,
        "independent",
    ),
    (
        "[ZDJ] Table 3",
        "mean",
        r"^Data 1 \| C-learning$",
        _ZDJ_DATA1_CLEARN,
        "independent",
    ),
    (
        "[ZDJ] Table 3",
        "mean",
        r"\| WSL$",
        "[ZDJ]'s WSL column of Table 3 cites [WSL]'s psi-learning errors; ours is the weighted-SVM "
        "bracketing estimator of the GKL_c column (zdj_svm_probability report)",
        "paper",
    ),
    (
        "[ZDJ] Table 2",
        "mean",
        r"^Data 2 \| WSL$",
        "bracketing with m = 10 stays above the paper even at its grid-best lambda, m = 20 goes "
        "below it: the grid size sets the level (wsl_probability docstring)",
        "protocol",
    ),
    (
        "[WSL] Table 1",
        "gkl",
        r"^Example 2 \| (SVM|psi) G \| New$",
        "bracketing with m = 10 stays above the paper even at its grid-best lambda, m = 20 goes "
        "below it: the grid size sets the level (wsl_probability docstring)",
        "protocol",
    ),
    (
        "[ZDJ] Table 5",
        "mean_pct",
        r"^colon \|",
        "the training size of Table 4 (16 of 62) does not give the paper's level on these data: on the "
        "vignette's 20 stratified partitions scikit-learn's linear SVM, L2 logistic regression, "
        "Gaussian SVM and nearest centroid, each at its best fixed C chosen in hindsight on the test "
        "sets, err 17.9-18.7 % (log10, arrays standardised) and no classifier under any of the five "
        "colon preprocessings goes below 15.6, whereas 31 training points give 13.4-14.4 (partition "
        "sd 3.5-4.0; at 16 points 4.0-5.9 against the paper's 1.5-2.0); "
        "ours on the same 20 partitions, full protocol: 16.6-17.8 (log10, arrays standardised: the "
        "default), as distributed 26.5-27.1, log2 17.5-18.3, log10 16.9-18.6, arrays standardised "
        "without the logarithm 18.6-20.5, CV ties to the larger gamma 18.4-19.0; our partition sd "
        "6.0-6.7 (results/fidelity_evidence_s11)",
        "data",
    ),
    (
        "[ZDJ] Table 5",
        "mean_pct",
        r"^g241c \|",
        "one fixed data set: [ZDJ] partitions one draw of 1,500 points (Chapelle et al.'s file) 20 "
        "times, the vignette draws a fresh set per partition; ten fixed draws partitioned ten times "
        "each (HHSVM, quick grid) give draw means 23.1-26.4 with a between-draw sd of 1.0 point "
        "(binomial sqrt(p(1-p)/1500) = 1.1), an uncertainty of the paper's mean that its sd / sqrt(20) "
        "(0.25-0.29) leaves out; with it HHSVM's z is 2.3. Full protocol (20 partitions, "
        "results/fidelity_full_s10): 23.4-25.1, our partition sd 2.9-3.5 points against the paper's "
        "1.1-1.3; the paper's 6 x 50 tuning grid moves the row by at most 0.1 point and glmnet's path "
        "end by at most 1.2 (zdj_clearn docstring); the solvers agree with scipy on partition 0 "
        "(results/fidelity_evidence_s11)",
        "data",
    ),
    (
        "[ZDJ] Table 5",
        "mean_pct",
        r"^leukemia \| HHSVM$",
        "3 of 52 test points wrong in four of the five partitions and 5 in the fifth, a spread (sd "
        "1.7) below the paper's 2.3 that makes z strict; the paper's tuning grid gives 6.9, the "
        "array standardisation 5.8 (zdj_clearn docstring); cause not found",
        "open",
    ),
    (
        "[ZDJ] Table 6",
        "mean_pct",
        r"^leukemia \| (RLRM|C-learning)$",
        "the Gaussian kernel with the paper's width does not reach the paper's level at Table 4's "
        "training size (20 of 72): on the vignette's 20 stratified partitions scikit-learn's Gaussian "
        "SVM at its best fixed C chosen in hindsight on the test sets errs 4.04 % (partition sd 3.3), "
        "against [ZDJ]'s Gaussian rows 2.55-2.80 (sd 0.92-0.96), and 1.67 with 36 training points; the "
        "linear SVM and L2 logistic regression reach 2.9-3.0 at 20 points, at or below the paper's "
        "linear level (3.2-4.4). "
        "Ours (full protocol, 20 partitions): RLRM 5.5 and C-learning 5.2, HHSVM 3.9; CV ties to the "
        "larger gamma 8.6-8.7 (results/fidelity_evidence_s11)",
        "data",
    ),
    (
        "[ZDJ] Table 6",
        "mean_pct",
        r"^colon \|",
        "the training size of Table 4 (16 of 62) does not give the paper's level on these data: on the "
        "vignette's 20 stratified partitions scikit-learn's linear SVM, L2 logistic regression, "
        "Gaussian SVM and nearest centroid, each at its best fixed C chosen in hindsight on the test "
        "sets, err 17.9-18.7 % (log10, arrays standardised) and no classifier under any of the five "
        "colon preprocessings goes below 15.6, whereas 31 training points give 13.4-14.4 (partition "
        "sd 3.5-4.0; at 16 points 4.0-5.9 against the paper's 2.4-2.8); "
        "the Gaussian SVM with the paper's width alone gives 18.7 at 16 points (16.4-21.5 under the "
        "other preprocessings) and 13.9 at 31; ours on the same 20 partitions, full protocol: "
        "19.1-20.3 (log10, arrays standardised: the default), as distributed 19.6-20.2, log2 and "
        "log10 22.8-23.6, arrays standardised without the logarithm 17.2-18.9, CV ties to the larger "
        "gamma 21.2-23.2; our partition sd 5.6-6.0 (results/fidelity_evidence_s11)",
        "data",
    ),
    (
        "[ZDJ] Table 6",
        "mean_pct",
        r"^g241c \|",
        "one fixed data set: [ZDJ] partitions one draw of 1,500 points (Chapelle et al.'s file) 20 "
        "times, the vignette draws a fresh set per partition; ten fixed draws partitioned ten times "
        "each (C-learning, quick grid) give draw means 18.0-21.4 with a between-draw sd of 1.0 point "
        "(binomial sqrt(p(1-p)/1500) = 1.1), an uncertainty of the paper's mean that its sd / sqrt(20) "
        "(0.30-0.32) leaves out; with it C-learning's z is -1.3. Ours is below (better than) the "
        "paper: full protocol (20 partitions, results/fidelity_full_s10) partitions 0-4 give 21.3-21.9, "
        "partitions 5-19 19.6-20.0; our three losses lie within 0.3 points of each other (20.2-20.4), "
        "as the paper's do (21.4-21.6); the solvers agree with scipy on partition 0 "
        "(results/fidelity_evidence_s11)",
        "data",
    ),
    (
        "[ZDJ] Table 6",
        "mean_pct",
        r"^g241d \| HHSVM$",
        "ours is below (better than) the paper and level with our RLRM and C-learning and the "
        "paper's C-learning; HHSVM's delta (0.1-20), the CV tie rule, early stopping and the "
        "conventional elastic net on raw or standardised kernel columns give 20.5-23.1 against "
        "25.9; the lasso end (omega = 1) gives 26.7 here but 27.8 on g241c against the paper's "
        "21.4, so it is not the protocol either; nor are unstandardised inputs (20.4), the gamma "
        "path ending at 1e-2 to 1e-1 of gamma_max (20.5-20.7), CV by the held-out huberized hinge "
        "loss (21.8), the ridge end omega = 0 (20.6), a kernel 3x wider (21.1) or narrower (sigma / "
        "sqrt 2 and / 2: 20.4 and 21.1, results/fidelity_evidence_s10); the paper's row "
        "is shifted as a whole (its mean and spread, 25.9 and 2.15 against C-learning's 20.4 and "
        "1.20, need 90 % of partitions "
        "higher, not a few failures), while the paper's HHSVM is 3.5 points above its own RLRM "
        "here and the three losses agree within 1 point on g241c (zdj_clearn docstring); full "
        "protocol (20 partitions, results/fidelity_full_s10): 21.0, level with our RLRM (21.0) and "
        "C-learning (21.1), the paper's 6 x 50 grid giving 20.6 on partitions 0-4. Session 11 "
        "(results/fidelity_evidence_s11): not a solver defect (on partition 0 our HHSVM reaches "
        "scipy's optimum of the same objective within 1e-7 relative, same test error), not a "
        "kernel 10 or 30 times wider (20.9, 22.8 on partitions 0-4), and not the one fixed data set "
        "of the paper: ten fixed draws partitioned ten times each give draw means 19.4-23.6 (between-"
        "draw sd 1.2), so even with that uncertainty z is -3.6 and the paper's 25.9 lies 2.3 points "
        "above the highest draw; cause not found",
        "open",
    ),
    (
        "[ZDJ] Table 6",
        "mean_pct",
        r"^g241d \| RLRM$",
        "ours is below (better than) the paper and level with our and the paper's C-learning; the "
        "conventional elastic net on standardised kernel columns, as glmnet fits a design matrix, "
        "gives 21.6 against 22.3 but moves g241c away from the paper (zdj_clearn docstring)",
        "protocol",
    ),
    (
        "[WSL] Table 2",
        "gkl",
        r"^Example 1 \| (NN|PLR)$",
        "ours is below (better than) the paper by 0.017-0.021 with twelve replications, and so are "
        "independent fits: over 200 samples of 100 points scikit-learn's logistic regression gives "
        "GKL_c 0.565 (unpenalised) and 0.563 (C = 1), its k-nearest-neighbour estimate 0.564 "
        "(k = 25) and 0.564 (k = 16), and the linear logistic family's population optimum is 0.550 "
        "(quadrature), so [WSL]'s 0.579 (PLR) and 0.582 (NN) lie 0.015-0.018 above what these "
        "estimators give on this model: the offset of [WSL]'s Example 1 GKL_c that its Table 1 shows "
        "(its GKL_c 0.020-0.034 above its own CRE in all 12 rows, whereas labels drawn from p give "
        "E[CRE] = GKL_c) (results/fidelity_evidence_s11)",
        "independent",
    ),
    (
        "[WSL] Table 2",
        "te",
        r"^Example 2 \| NN$",
        "ours is below (better than) the paper with twelve replications (four gave 0.081, within 2 "
        "SE); the best k by mean test error is 4 (k = 9 gives 0.082, 16 0.100, 25 0.126) "
        "(results/fidelity_full_s10); cause not found",
        "open",
    ),
    (
        "[WSL] Table 2",
        "gkl",
        r"^Example 1 \| New \(psi-learning\)$",
        "[WSL]'s value (0.552) is neither psi-learning 'New' of its Table 1 for Example 1 (0.561 "
        "linear, 0.562 Gaussian); ours is our linear psi-learning 'New', the Table 1 cell "
        "(twelve replications, results/fidelity_full_s10)",
        "paper",
    ),
    (
        "[ZDJ] Table 2",
        "mean",
        r"^Data 2 \| C-learning$",
        "replications 0-9 (the quick run) give 0.132, within 2 SE, replications 10-39 0.147; the "
        "median over the 40 is 0.137 and no replication is degenerate (results/fidelity_full_s10); "
        "cause not found",
        "open",
    ),
    (
        "[ZDJ] Table 3",
        "mean",
        r"^Data 2 \| Platt$",
        "ours is below (better than) the paper: over 40 replications every method of ours errs "
        "0.062-0.070 on Data 2, Platt 0.067 (replications 0-9: 0.065) (results/fidelity_full_s10); "
        "cause not found",
        "open",
    ),
    (
        "[WSL] Table 1",
        "gkl",
        r"^Example 2 \| SVM L \| New$",
        "the bracketing grid size sets the level, as for the other Example 2 'New' rows: over the "
        "twelve replications m = 10 gives GKL_c 0.175 and CRE 0.174, m = 20 gives 0.158 and 0.158 "
        "(paper 0.160 and 0.158) (results/fidelity_evidence_s10)",
        "protocol",
    ),
    (
        "[WSL] Table 1",
        "cre",
        r"^Example 2 \| SVM L \| New$",
        "the bracketing grid size sets the level, as for the other Example 2 'New' rows: over the "
        "twelve replications m = 10 gives GKL_c 0.175 and CRE 0.174, m = 20 gives 0.158 and 0.158 "
        "(paper 0.160 and 0.158) (results/fidelity_evidence_s10)",
        "protocol",
    ),
    (
        "[ZDJ] Table 2",
        "mean",
        r"^Data 2 \| Sollich$",
        "the SVM's tuning sets the level: Sollich's probability is a fixed function of f, and 10-fold "
        "CV misclassification picks lambda >= 1e-3 in 10 of the 40 replications, where Sollich "
        "averages 0.197-0.262; at the best fixed lambda of the grid (3.2e-5) the 40 replications "
        "give 0.157 and at 1e-4 0.158 (paper 0.155); replications 0-9 had 2 such picks, 10-39 had 8. "
        "[ZDJ] does not say how its SVM was tuned. Not a solver defect: scikit-learn's SVC at the "
        "same cost gives the same decision values (within 0.013) and 0.179 "
        "(results/fidelity_evidence_s11)",
        "protocol",
    ),
    (
        "[WSL] Table 1",
        "gkl",
        r"^Example 2 \| psi L \| New$",
        "not the tuning: on the same four samples the best lambda in hindsight gives 0.178 with "
        "m = 10 (GKL-tuned 0.181), and m = 20 gives 0.159, the paper's value: the grid size sets "
        "the level, as for the Gaussian rows (wsl_probability docstring)",
        "protocol",
    ),
    (
        "[WSL] Table 1",
        "cre",
        r"^Example 2 \| psi L \| New$",
        "test labels drawn from p give E[CRE] = GKL_c; on the same four samples the best lambda in "
        "hindsight gives GKL_c 0.178 with m = 10 and 0.159 with m = 20 (paper GKL_c 0.159): the "
        "grid size sets the level (wsl_probability docstring)",
        "protocol",
    ),
    (
        "[WSL] Table 3",
        "cre",
        r"^Ionosphere \| SVM L \| New$",
        "sampling: eight more replications with the same code and seeds give 0.397 (0.323-0.504), "
        "all twelve 0.409 (SE 0.015), within 2 SE; the GKL choice lambda = 0.1 is also the grid's "
        "best on average over the four samples (wsl_probability docstring)",
        "sampling",
    ),
    (
        "[WSL] Table 3",
        "cre",
        r"^Liver \| psi L \| Platt$",
        "sampling: eight more replications with the same code and seeds give 0.669, all twelve "
        "0.661 (SE 0.008), within 2 SE (wsl_probability docstring)",
        "sampling",
    ),
    (
        "[WSL] Table 3",
        "cre",
        r"^Liver \| psi L \| New$",
        "not sampling (twelve replications: 0.659, SE 0.008); the GKL choice costs about 0.02: over "
        "eight samples the best lambda of each in hindsight gives 0.641 (SD 0.017), still 0.013 "
        "above the paper (wsl_probability docstring); the rest not found",
        "open",
    ),
    (
        "[WSL] Table 4",
        "cre",
        r"^Liver \| New \(psi-learning\)$",
        "the linear psi-learning New of Table 3: twelve replications give 0.659 (SE 0.008); the "
        "best lambda of each of eight samples in hindsight 0.641 (SD 0.017), so the GKL choice "
        "costs about 0.02 and 0.013 remains (wsl_probability docstring); the rest not found",
        "open",
    ),
    (
        "[WSL] Table 3",
        "cre",
        r"^Liver \| psi G \| New$",
        "not sampling (twelve replications: 0.684, SE 0.009) and not the tuning: the best lambda of "
        "each of eight samples in hindsight gives 0.677 (SD 0.020), near the constant fit (0.698), "
        "while our Gaussian SVM's bracketing on the run's samples matches the paper (0.653 against "
        "0.648): the gap lies in our Gaussian psi-learning fits on Liver (wsl_probability "
        "docstring). Measured on samples 0-7: the DC steps after the first raise the best fixed "
        "lambda's 0.669 (one step) to 0.680 (fifty; the SVM's bracketing 0.662); the kernel width "
        "sets the level: with sigma twice the median between-class distance the best lambda in "
        "hindsight gives 0.644 and the vignette's GKL-tuned New 0.668 (SE 0.017), with Diabetes' "
        "Gaussian cells moving by at most 0.009, but [WSL] states sigma = the median distance "
        "(results/fidelity_evidence_s10); cause not found",
        "open",
    ),
    (
        "[WSL] Table 2",
        "te",
        r"^Example 2 \| PLR$",
        "ours is below (better than) the paper: the GKL estimate picks the grid's smallest lambda "
        "on all four samples (0.060); our PLR errs 0.071-0.081 only at lambda 0.1-0.32, where its "
        "cross-entropy is 0.33-0.45 against the paper's PLR GKL_c 0.138 (ours 0.132), so no one "
        "lambda of ours gives both published numbers (wsl_probability docstring)",
        "protocol",
    ),
    (
        "[WSL] Table 4",
        "te",
        r"^Ionosphere \| PLR$",
        "ours is below (better than) the paper: the GKL estimate picks lambda = 0.1 on all four "
        "samples (0.147; 0.147-0.156 for lambda in [3e-3, 0.3]); the paper's 0.195 is our least "
        "penalised PLR (0.189-0.193 at lambda <= 3e-5, infinite cross-entropy), the opposite "
        "direction from Example 2, where the paper's error needs a heavier penalty "
        "(wsl_probability docstring)",
        "protocol",
    ),
    (
        "Bayes errors ([WSL], [ZDJ], [LZW] text)",
        "published",
        r"^\[LZW\] Ex\. 5\.5, d = 15$",
        "Monte Carlo noise: the closed-form Bayes error of our generator is 0.2107 (the paper's "
        "0.210), three draws of 200,000 give 0.2085-0.2099; this run's 20,000 draws lie 2.2 SE "
        "from the exact value (data_check docstring)",
        "sampling",
    ),
    (
        "[LZW] Section 5 (PLR)",
        "value",
        r"^5\.2 \| PLR test error$",
        "two replications (0.138, 0.159); the PLR alone over 40 replications of the same generator "
        "and seeds gives 0.115 (SD 0.016, the paper's 0.016), i.e. below (better than) the paper's "
        "0.124, which is our PLR at lambda of about 0.03-0.06, more penalty than the validation "
        "error picks (lum_simulations docstring)",
        "protocol",
    ),
    (
        "[RH] Table 2",
        "err_pct",
        r"^Pendigit \| (1000|10000)$",
        "ours is below (better than) the paper: our lambda-SVM stays at the small-margin level "
        "(0.27-0.55 % on three partitions) at our CV choice, at the paper's own (C, gamma_k) and "
        "with a KKT tolerance 10x looser or scaled with the margin; [RH]'s level is our error once "
        "C falls below about a tenth of the margin (three partitions: margin 10000, gamma_k = 1, "
        "C = 1e3 gives 0.85 % on average against C >= 1e4 0.36 %; margin 1000, gamma_k = 0.43, "
        "C = 100 gives 1.00 % against C >= 1e3 0.46 %), a regime [RH]'s printed costs (3e5, 1e7) "
        "are far above (lamsvm docstring)",
        "protocol",
    ),
    # the vignette's own note says it (the published error is a class share of the data set)
    ("[WSL] Table 4", "te", r"^(Liver|Mushroom|Ionosphere|Diabetes) \| NN$", "", "paper"),
)


#: The verdicts of the fidelity table: the comparison verdicts and NO DATA.
FIDELITY_VERDICTS = VERDICTS + ("NO DATA",)


def _offline_data_set(cell: str) -> str | None:
    """The :data:`cohstats.datasets.UNAVAILABLE` entry naming the data set of ``cell`` (its
    first key, case-insensitive), or None."""
    from cohstats.datasets import UNAVAILABLE

    return UNAVAILABLE.get(str(cell).split(" | ", 1)[0].strip().lower())


def _mark_no_data(tab: pd.DataFrame) -> pd.DataFrame:
    """NOT COMPUTED cells whose data set cannot be obtained offline become NO DATA."""
    verdicts, notes = tab["verdict"].tolist(), tab["note"].astype(str).tolist()
    for i, (v, cell) in enumerate(zip(verdicts, tab["cell"])):
        why = _offline_data_set(cell) if v == "NOT COMPUTED" else None
        if why is not None:
            verdicts[i] = "NO DATA"
            notes[i] = f"data set not available offline: {why}"
    return tab.assign(verdict=verdicts, note=notes)


def _add_causes(tab: pd.DataFrame) -> pd.DataFrame:
    """Append the :data:`CAUSES` note to each matching CLOSE or OFF cell and set its ``cause``
    column to the entry's kind (empty for every other cell and for a cell no entry matches)."""
    import re

    notes = tab["note"].astype(str).tolist()
    kinds = [""] * len(notes)
    for i, (src, q, cell, v) in enumerate(zip(tab.source, tab.quantity, tab.cell, tab.verdict)):
        if v not in ("CLOSE", "OFF"):
            continue
        for csrc, cq, pattern, text, kind in CAUSES:
            if src == csrc and q == cq and re.search(pattern, str(cell)):
                if text:
                    notes[i] = f"{notes[i]}; {text}" if notes[i] else text
                kinds[i] = kind
                break
    return tab.assign(note=notes, cause=kinds)


def cause_summary(tab: pd.DataFrame) -> pd.DataFrame:
    """CLOSE and OFF cells counted by the kind of their cause (:data:`CAUSE_KINDS`; cells
    without a matching :data:`CAUSES` entry under ``"(none)"``), with the tables they are in."""
    bad = tab[tab["verdict"].isin(["CLOSE", "OFF"])]
    cause = bad["cause"].fillna("").astype(str) if "cause" in bad else pd.Series("", index=bad.index)
    cause = cause.where(cause != "", "(none)")
    rows = []
    for kind in list(CAUSE_KINDS) + ["(none)"]:
        d = bad[cause == kind]
        if kind == "(none)" and d.empty:
            continue
        rows.append(
            {
                "cause": kind,
                "CLOSE": int((d["verdict"] == "CLOSE").sum()),
                "OFF": int((d["verdict"] == "OFF").sum()),
                "tables": ", ".join(dict.fromkeys(d["source"])),
                "meaning": CAUSE_KINDS.get(kind, "no entry of CAUSES matches the cell"),
            }
        )
    return pd.DataFrame(rows, columns=["cause", "CLOSE", "OFF", "tables", "meaning"])


_COLUMNS = [
    "source",
    "quantity",
    "cell",
    "reps",
    "ours",
    "ours_se",
    "published",
    "published_se",
    "z",
    "verdict",
    "note",
    "report",
]


def _published_cells() -> pd.DataFrame:
    from cohstats.datasets import reference

    rows = []
    for source, paper, table, keys, values, vignette in PUBLISHED:
        try:
            ref = reference(paper, table)
        except ValueError:  # a reference table this installation does not ship
            continue
        for rd in ref.to_dict("records"):
            cell = " | ".join(_key_text(rd[k]) for k in keys)
            for q in values:
                v = pd.to_numeric(pd.Series([rd.get(q)]), errors="coerce").iloc[0]
                if pd.isna(v):
                    continue
                rows.append(
                    {"source": source, "quantity": q, "cell": cell, "published": float(v), "vignette": vignette}
                )
    return pd.DataFrame(rows, columns=["source", "quantity", "cell", "published", "vignette"])


def read_comparisons(run_dir) -> pd.DataFrame:
    """Every ``*_comparisons.csv`` under ``run_dir`` as one DataFrame (empty if none)."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise ValueError(
            f"run directory {str(run_dir)!r} does not exist; run the vignettes "
            "first (python -m cohstats.vignettes --out DIR)"
        )
    parts = []
    for f in sorted(run_dir.rglob("*_comparisons.csv")):
        d = pd.read_csv(f, dtype={"cell": str, "published_cell": str, "note": str, "verdict": str})
        parts.append(d)
    if not parts:
        return pd.DataFrame(columns=_COLUMNS + ["published_cell"])
    out = pd.concat(parts, ignore_index=True)
    for c in ("note", "verdict"):
        out[c] = out[c].fillna("")
    if "published_cell" not in out:
        out["published_cell"] = out["cell"]
    out["published_cell"] = out["published_cell"].fillna(out["cell"])
    return out


def fidelity_table(run_dir) -> pd.DataFrame:
    """One row per published cell (and per compared cell of tables not in :data:`PUBLISHED`).

    Columns: ``source`` (the published table), ``quantity``, ``cell`` (our label: stand-in
    rows carry the stand-in data's name), ``reps``, ``ours``, ``ours_se``, ``published``,
    ``published_se``, ``z``, ``verdict``, ``cause`` (for a CLOSE or OFF cell the kind of its
    measured cause, :data:`CAUSE_KINDS`), ``note`` and ``report`` (the report that computed it).
    A published cell reached by several comparisons keeps the first one that has our number.
    """
    comp = read_comparisons(run_dir)
    pub = _published_cells()
    comp = comp[comp["published"].notna() | comp["ours"].notna()].copy()
    # a comparison recorded without a known source (an older vignette passing only a caption)
    # is attributed to the published table whose cell it matches, when exactly one does
    owners: dict = {}
    for src, q, c in zip(pub.source, pub.quantity, pub.cell):
        owners.setdefault((q, c), set()).add(src)
    known_src = set(pub.source)
    comp["source"] = [
        s_ if s_ in known_src or len(owners.get((q, c), ())) != 1 else next(iter(owners[(q, c)]))
        for s_, q, c in zip(comp.source, comp.quantity, comp.published_cell)
    ]
    comp["_has"] = comp["ours"].notna()
    comp = comp.sort_values("_has", ascending=False, kind="stable").drop_duplicates(
        ["source", "quantity", "published_cell"], keep="first"
    )
    known = set(zip(pub.source, pub.quantity, pub.cell))
    seen_sources = set(comp.source)
    rows = []
    idx = comp.set_index(["source", "quantity", "published_cell"])
    for r in pub.itertuples(index=False):
        key = (r.source, r.quantity, r.cell)
        if key in idx.index:
            c = idx.loc[key]
            if isinstance(c, pd.DataFrame):
                c = c.iloc[0]
            rows.append(
                {k: c.get(k, np.nan) for k in _COLUMNS if k not in ("source", "quantity")}
                | {"source": r.source, "quantity": r.quantity}
            )
        else:
            why = (
                "no comparison of this cell in the run"
                if r.source in seen_sources
                else f"no comparison with this table in the run (vignette `{r.vignette}`)"
            )
            rows.append(
                {
                    "source": r.source,
                    "quantity": r.quantity,
                    "cell": r.cell,
                    "reps": np.nan,
                    "ours": np.nan,
                    "ours_se": np.nan,
                    "published": r.published,
                    "published_se": np.nan,
                    "z": np.nan,
                    "verdict": "NOT COMPUTED",
                    "note": why,
                    "report": "",
                }
            )
    extra = comp[[(s, q, c) not in known for s, q, c in zip(comp.source, comp.quantity, comp.published_cell)]]
    extra = extra[extra["published"].notna()]
    for _, c in extra.iterrows():
        rows.append({k: c.get(k, np.nan) for k in _COLUMNS})
    out = pd.DataFrame(rows, columns=_COLUMNS)
    # verdicts from the recorded numbers (the CSV's verdict is kept for stand-ins)
    stand = out["verdict"].eq("STAND-IN")
    out["verdict"] = [
        verdict(float(z), float(o), float(p), bool(s))
        for z, o, p, s in zip(out["z"], out["ours"], out["published"], stand)
    ]
    out["note"] = out["note"].fillna("")
    out = _mark_no_data(out)
    out = _add_causes(out)
    out["report"] = out["report"].fillna("")
    cols = list(_COLUMNS)
    cols.insert(cols.index("note"), "cause")
    return out[cols].reset_index(drop=True)


def fidelity_summary(tab: pd.DataFrame) -> pd.DataFrame:
    """Verdict counts per published table, with a total row and the share of the scored
    (non-stand-in, computed) cells within 2 SE."""
    rows = []
    for src, d in list(tab.groupby("source", sort=False)) + [("all", tab)]:
        row = {"source": src, "cells": len(d)}
        for v in FIDELITY_VERDICTS:
            row[v] = int((d["verdict"] == v).sum())
        scored = row["MATCH"] + row["CLOSE"] + row["OFF"]
        row["within 2 SE (%)"] = 100.0 * row["MATCH"] / scored if scored else np.nan
        rows.append(row)
    return pd.DataFrame(rows)


def _uncaused(tab: pd.DataFrame) -> pd.DataFrame:
    """OFF cells whose note gives no measured cause (empty, or "cause not found")."""
    off = tab[tab["verdict"] == "OFF"]
    note = off["note"].astype(str)
    causeless = note.str.strip().eq("") | note.str.contains("cause not found", regex=False)
    # a note that only restates the protocol is not a cause
    causeless |= note.str.match(r"^quick protocol: [^;]*$")
    return off[causeless]


def summary_text(tab: pd.DataFrame) -> str:
    """One paragraph of counts, generated from the table (no number typed by hand)."""
    summ = fidelity_summary(tab).iloc[-1]
    scored = int(summ["MATCH"] + summ["CLOSE"] + summ["OFF"])
    unc = _uncaused(tab)
    text = (
        f"Of {int(summ['cells'])} published cells: {int(summ['MATCH'])} MATCH, {int(summ['CLOSE'])} CLOSE, "
        f"{int(summ['OFF'])} OFF, {int(summ['STAND-IN'])} STAND-IN, {int(summ['NOT COMPUTED'])} NOT COMPUTED, "
        f"{int(summ['NO DATA'])} NO DATA (data set not available offline), {int(summ['NO SE'])} NO SE; "
        f"{summ['within 2 SE (%)']:.1f} % of the {scored} scored cells are "
        f"within 2 SE. OFF cells without a measured cause in their note: {len(unc)}"
    )
    if len(unc):
        text += " (" + "; ".join(f"{s} {q} {c}" for s, q, c in zip(unc.source, unc.quantity, unc.cell)) + ")"
    return text + "."


def _run_infos(run_dir: Path) -> list[tuple[str, dict]]:
    """``(relative directory, run_info)`` of every runner invocation under ``run_dir``."""
    out = []
    for f in sorted(run_dir.rglob("run_info.json")):
        try:
            info = json.loads(f.read_text(encoding="utf-8"))
        except ValueError:
            continue
        out.append((f.parent.relative_to(run_dir).as_posix() or ".", info))
    return out


def write_fidelity(run_dir, to=None) -> Path:
    """Write ``fidelity.md`` and ``fidelity.csv`` (into ``run_dir`` unless ``to`` names the
    Markdown file) and return the Markdown path."""
    run_dir = Path(run_dir)
    tab = fidelity_table(run_dir)
    summ = fidelity_summary(tab)
    md_path = Path(to) if to is not None else run_dir / "fidelity.md"
    md_path.parent.mkdir(parents=True, exist_ok=True)
    tab.to_csv(md_path.with_suffix(".csv"), index=False)
    made = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = ["# Reproduction fidelity", ""]
    for where, info in _run_infos(run_dir):
        lines += [f"Run (`{where}`): " + ", ".join(f"{k} = {v}" for k, v in info.items()) + ".", ""]
    made_line = (
        f"Table made {made} on {platform.system()} {platform.machine()}, Python "
        f"{platform.python_version()}, from the comparison files of the run."
    )
    legend = (
        "z = (ours - published) / sqrt(SE_pub^2 + SE_ours^2), our SE floored at the "
        "paper's per-replication spread / sqrt(our replications) where the paper gives a "
        "spread. MATCH |z| <= 2, CLOSE |z| <= 3, OFF otherwise; STAND-IN: our number is "
        "computed on other data than the paper's and is not scored; NOT COMPUTED: the run "
        "has no number for the published cell; NO DATA: the paper's data set cannot be obtained "
        "offline (not scored, not missing work); NO SE: no standard error on either side "
        "and the numbers differ at the published precision."
    )
    lines += [
        made_line,
        "",
        legend,
        "",
        "## Summary",
        "",
        summary_text(tab),
        "",
        markdown_table(summ, floatfmt=".1f"),
        "",
        "## CLOSE and OFF cells by kind of cause",
        "",
        "The `cause` column of every CLOSE or OFF cell names the kind of its measured cause "
        "(`cohstats.vignettes.fidelity.CAUSE_KINDS`); the note of the cell gives the measurement.",
        "",
        markdown_table(cause_summary(tab)),
        "",
        "## Every published cell",
        "",
        markdown_table(tab, floatfmt=".4g"),
        "",
    ]
    md_path.write_text("\n".join(lines), encoding="utf-8")
    return md_path


def assemble_runs(sources, to) -> Path:
    """Copy the run directories named by a sources file under one directory; return it.

    ``sources`` is a JSON file mapping a name to a run directory (a path relative to the
    file's folder), e.g. ``{"full_zdj_clearn": "results/fidelity_full_s10/full_zdj_clearn"}``.
    Each directory is copied to ``to/<name>`` (HTML copies of reports are skipped). The
    fidelity table keeps, for a published cell, the first comparison in sorted path order
    that has a number of ours, so the names set the precedence between runs.
    """
    import shutil

    sources = Path(sources)
    try:
        names = json.loads(sources.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ValueError(f"sources file {str(sources)!r} cannot be read as JSON: {e}") from None
    if not isinstance(names, dict) or not names:
        raise ValueError(f"sources file {str(sources)!r} must map run names to directories")
    to = Path(to)
    for name, rel in names.items():
        src = sources.parent / str(rel)
        if not src.is_dir():
            raise ValueError(
                f"sources file {str(sources)!r}: run {name!r} names {str(rel)!r}, which is not a directory"
            )
        shutil.copytree(src, to / name, ignore=shutil.ignore_patterns("*.html"), dirs_exist_ok=False)
    return to


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m cohstats.vignettes.fidelity DIR [--to FILE]`` or ``--sources FILE --to FILE``."""
    import tempfile

    ap = argparse.ArgumentParser(
        prog="python -m cohstats.vignettes.fidelity", description="Build the fidelity table of a vignette run."
    )
    ap.add_argument("run_dir", nargs="?", default=None)
    ap.add_argument("--to", default=None, help="Markdown file to write (default RUN_DIR/fidelity.md)")
    ap.add_argument(
        "--sources",
        default=None,
        help="JSON file naming committed run directories (see assemble_runs); needs --to, no RUN_DIR",
    )
    a = ap.parse_args(argv)
    try:
        if a.sources is not None:
            if a.run_dir is not None or a.to is None:
                raise ValueError("--sources takes no run directory and needs --to FILE")
            with tempfile.TemporaryDirectory() as tmp:
                path = write_fidelity(assemble_runs(a.sources, Path(tmp) / "runs"), a.to)
        else:
            path = write_fidelity(a.run_dir or "vignette_reports", a.to)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    summ = fidelity_summary(
        pd.read_csv(path.with_suffix(".csv"), keep_default_na=False, na_values=[""]).fillna({"verdict": ""})
    )
    print(markdown_table(summ.tail(1), floatfmt=".1f"))
    print(path)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
