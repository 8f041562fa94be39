"""The evidence behind the [WSL] Example 1 and [ZDJ] fidelity notes agrees with the committed runs it
explains and with the notes that cite it (``vignettes/results/wsl/`` and ``vignettes/results/zdj/``)."""

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from cohstats.vignettes import fidelity

RESULTS = Path(__file__).resolve().parents[1] / "vignettes" / "results"
ZDJ = RESULTS / "zdj"
RUNS = RESULTS / "runs"


def _csv(path):
    if not path.is_file():
        pytest.skip(f"{path.name} is not in this checkout")
    return pd.read_csv(path)


def _note(source, quantity, cell):
    for src, q, pattern, text, _kind in fidelity.CAUSES:
        if src == source and q == quantity and re.search(pattern, cell):
            return text
    raise AssertionError(f"no CAUSES entry for {source} {quantity} {cell}")


def test_sollich_evidence_reproduces_the_forty_replication_run():
    ev = _csv(ZDJ / "data2_sollich_tuning" / "zdj_data2_sollich_by_lambda.csv")
    raw = _csv(RUNS / "zdj_svm_probability_quick_40reps" / "zdj_svm_probability" / "zdj_svm_probability_raw.csv")
    run = raw[(raw.dataset == "Data 2") & (raw.method == "Sollich")].sort_values("rep")
    np.testing.assert_allclose(ev.sort_values("rep").sollich_gkl.to_numpy(), run.gkl.to_numpy(), rtol=1e-10)
    # the note's counts: CV picks lambda >= 1e-3 in 10 of 40, 2 of them among replications 0-9
    big = ev.cv_lambda >= 1e-3 - 1e-12
    assert int(big.sum()) == 10 and int(big[ev.rep < 10].sum()) == 2
    best = ev.filter(like="sollich_gkl_at_").mean().min()
    assert abs(best - 0.157) < 5e-4
    assert "10 of the 40" in _note("[ZDJ] Table 2", "mean", "Data 2 | Sollich")
    # libsvm (scikit-learn) gives the same decision values at the CV cost
    assert ev.sklearn_max_abs_diff_f.max() < 0.013


def test_colon_evidence_reproduces_the_full_run_and_the_hindsight_bound():
    pre = _csv(ZDJ / "colon_preprocessing" / "zdj_colon_preprocessing_20_partitions.csv")
    full = _csv(RUNS / "zdj_clearn_full" / "zdj_clearn" / "zdj_clearn_partitions.csv")
    key = ["expansion", "method", "rep"]
    a = pre[pre.colon == "log10_arrays"].sort_values(key)
    b = full[full.dataset == "colon"].sort_values(key)
    np.testing.assert_allclose(a.error_pct.to_numpy(), b.error_pct.to_numpy(), rtol=0, atol=1e-9)
    sk = _csv(ZDJ / "colon_leukemia_training_size" / "zdj_colon_leukemia_sklearn_hindsight.csv")
    m = sk.groupby(["data", "prep", "n_train", "classifier", "C"], dropna=False).error_pct.mean()
    best16 = m.loc["colon"].xs(16, level="n_train").min()
    assert best16 > 15.6  # no classifier, preprocessing or fixed C reaches the paper's 12.3-14.8
    assert "goes below 15.6" in _note("[ZDJ] Table 5", "mean_pct", "colon | C-learning")
    g = m.loc[("leukemia", "as shipped", 20, "Gaussian SVM")].min()
    assert round(g, 2) == 4.04


def test_solver_check_agrees_with_scipy():
    d = _csv(ZDJ / "solver_check_scipy" / "zdj_solver_check_scipy.csv")
    rel = (d.objective_cohstats - d.objective_scipy).abs() / d.objective_scipy
    assert rel.max() < 1e-6 and d.scipy_converged.all()
    assert (d.error_pct_cohstats - d.error_pct_scipy).abs().max() < 0.1  # at most one of 1,350 points


def test_wsl_example1_independent_fits():
    d = _csv(RESULTS / "wsl" / "example1_plr_nn_independent" / "wsl_ex1_plr_nn_sklearn.csv")
    fin = d[np.isfinite(d.gkl_c)]
    plr = fin[fin.estimator == "logistic, no penalty"].gkl_c.mean()
    knn = fin[(fin.estimator == "knn") & (fin.k == 25)].gkl_c.mean()
    assert abs(plr - 0.565) < 5e-4 and abs(knn - 0.564) < 5e-4
    assert abs(d.population_logistic_optimum.iloc[0] - 0.550) < 5e-4
    # the published values (0.579 PLR, 0.582 NN) lie above both
    assert 0.579 - plr > 0.013 and 0.582 - knn > 0.017


def test_fixed_draw_spread_matches_the_binomial_and_the_notes():
    d = _csv(ZDJ / "g241_fixed_draw" / "zdj_g241_fixed_draw.csv")
    for (data, method), g in d.groupby(["data", "method"]):
        p = g.partition.nunique()
        means = g.groupby("draw").error_pct.mean()
        within = g.groupby("draw").error_pct.var().mean()
        between = np.sqrt(max(means.var() - within / p, 0.0))
        binom = 100 * np.sqrt(g.error_pct.mean() / 100 * (1 - g.error_pct.mean() / 100) / 1500)
        assert g.draw.nunique() == 10 and p == 10
        assert 0.5 * binom < between < 2.0 * binom, (data, method, between, binom)
    assert "between-draw sd of 1.0 point" in _note("[ZDJ] Table 6", "mean_pct", "g241c | C-learning")
