"""The three-engine table of the ``gboost_uci`` vignette ([ZJLY] Table 2): GentleBoost.C beside
LightGBM and scikit-learn's HistGradientBoostingClassifier.

A tiny run (Vowel, one run, 5 rounds of 4-leaf trees) checks that the table has the three engine
columns, that every cell is the error of that engine's fit in the run (HistGradientBoosting and
LightGBM refitted here directly from their own packages on the vignette's split; GentleBoost.C
against the Table 2 cell's own path), that a missing library shows as "not installed", and that
the prose is formatted from the table.
"""

import sys

import numpy as np
import pandas as pd
import pytest

from cohstats.datasets import load_split, reference
from cohstats.vignettes import gboost_uci as V

H, LEAVES = 5, 4
VOWEL = [("Vowel", "vowel")]


@pytest.fixture(scope="module")
def tiny():
    df = V.engine_runs(VOWEL, reps=1, seed=0, H=H, leaves=LEAVES)
    wide, summary = V.engine_tables(df, reference("zjly2009", "table2"))
    return df, wide, summary


def _xy():
    train, test = load_split("vowel")
    xs = [c for c in train.columns if c != "y"]
    return train[xs].to_numpy(float), train["y"].to_numpy(), test[xs].to_numpy(float), test["y"].to_numpy()


def test_table_has_the_three_engines_and_the_paper(tiny):
    df, wide, summary = tiny
    assert list(wide["dataset"]) == ["Vowel"]
    for e in V.ENGINES:
        assert e in wide.columns
    assert "LightGBM (default leaf rules)" in wide.columns
    assert "HistGradientBoosting (default leaf rules)" in wide.columns
    assert wide["paper GentleBoost.C"].iloc[0] == pytest.approx(47.62)
    # one fit per engine and leaf rules; every installed cell is that fit's error
    assert "GentleBoost.C (shrinkage 0.1)" in wide.columns
    assert len(df) == 8 and set(df["status"]) <= {"ok", V.NOT_INSTALLED}
    for r in df.itertuples():
        col = r.engine + ("" if r.variant == V.PAPER_PROTOCOL else f" ({r.variant})")
        cell = wide[col].iloc[0]
        if r.status == "ok":
            assert cell == pytest.approx(r.test_error_pct, abs=1e-12)
            assert 0 <= cell <= 100
        else:
            assert cell == V.NOT_INSTALLED
    assert (summary["runs"] <= 1).all()


def test_histgradientboosting_cell_is_sklearns_own_fit(tiny):
    from sklearn.ensemble import HistGradientBoostingClassifier

    _, wide, _ = tiny
    X, y, Xt, yt = _xy()
    for matched, col in ((True, "HistGradientBoosting"), (False, "HistGradientBoosting (default leaf rules)")):
        m = HistGradientBoostingClassifier(
            max_iter=H,
            max_leaf_nodes=LEAVES,
            learning_rate=1.0,
            early_stopping=False,
            **({"min_samples_leaf": 1} if matched else {}),
        ).fit(X, y)
        assert wide[col].iloc[0] == pytest.approx(100 * np.mean(m.predict(Xt) != yt), abs=1e-12)


def test_lightgbm_cell_is_lightgbms_own_fit(tiny):
    lgb = pytest.importorskip("lightgbm")
    _, wide, _ = tiny
    X, y, Xt, yt = _xy()
    m = lgb.LGBMClassifier(
        n_estimators=H,
        num_leaves=LEAVES,
        learning_rate=1.0,
        min_child_samples=1,
        max_delta_step=4.0,
        min_data_in_bin=1,
        n_jobs=1,
        verbose=-1,
    ).fit(X, y)
    assert wide["LightGBM"].iloc[0] == pytest.approx(100 * np.mean(m.predict(Xt) != yt), abs=1e-12)


def test_gentleboost_cell_is_the_table2_fit(tiny):
    # the Table 2 cell reads the error off the fit's path after H steps; the engine table
    # predicts the labels: the same fit, two routes
    _, wide, _ = tiny
    from cohstats.models.gboost import gboost

    train, test = load_split("vowel")
    pf = gboost("y ~ .", train, loss="coherence", n_trees=H, nodes=LEAVES, shrinkage=1.0, random_state=0).path(test)
    assert wide["GentleBoost.C"].iloc[0] == pytest.approx(100 * pf["test_error"].iloc[-1], abs=1e-9)


def test_missing_library_shows_not_installed(monkeypatch):
    monkeypatch.setitem(sys.modules, "lightgbm", None)  # import lightgbm -> ImportError
    df = V.engine_runs(VOWEL, reps=1, seed=0, H=2, leaves=LEAVES)
    wide, _ = V.engine_tables(df)
    assert wide["LightGBM"].iloc[0] == V.NOT_INSTALLED
    assert wide["LightGBM (default leaf rules)"].iloc[0] == V.NOT_INSTALLED
    assert isinstance(wide["GentleBoost.C"].iloc[0], float)
    text = V.engines_text(wide)
    assert "LightGBM is not installed" in text
    assert "LightGBM " + "0" not in text  # no number for it


def test_prose_is_formatted_from_the_table():
    wide = pd.DataFrame(
        {
            "dataset": ["A", "B", "C"],
            "paper GentleBoost.C": [10.0, 20.0, 30.0],
            "GentleBoost.C": [11.0, 19.5, 40.0],
            "LightGBM": [12.0, 21.0, 35.25],
            "HistGradientBoosting": [13.0, 18.0, 36.0],
        }
    )
    text = V.engines_text(wide)
    assert text.startswith(
        "Mean test error over the 3 data sets: GentleBoost.C 23.50 %, LightGBM 22.75 %, "
        "HistGradientBoosting 22.33 % (paper's GentleBoost.C 20.00 %)."
    )
    assert "GentleBoost.C has the lowest error on 1 of 3 (A)." in text
    assert "LightGBM has the lowest error on 1 of 3 (C)." in text
    assert "HistGradientBoosting has the lowest error on 1 of 3 (B)." in text
    assert (
        "within one point of the better library (or better) on 1 of 3; its largest gap is on C (+4.75 points)." in text
    )
    wide["LightGBM (shrinkage 0.1)"] = [11.0, 21.0, 31.0]
    assert "Mean with shrinkage 0.1: LightGBM 21.00 % (-1.75) (in brackets: minus the paper's protocol)." in (
        V.engines_text(wide)
    )
    wide.loc[2, "GentleBoost.C"] = 30.0
    assert "GentleBoost.C 20.17 %" in V.engines_text(wide)


def test_run_engines_writes_the_report(tmp_path, monkeypatch):
    # the report's table and prose come from the same run (shrunk to the tiny protocol)
    monkeypatch.setattr(V, "DATASETS", VOWEL)
    orig = V.engine_runs
    monkeypatch.setattr(V, "engine_runs", lambda d, reps, seed, **kw: orig(d, reps, seed, H=H, leaves=LEAVES))
    path = V.run_engines(reps=1, out=tmp_path, seed=0)
    md = path.read_text()
    fits = pd.read_csv(tmp_path / "gboost_uci_engines_fits.csv")
    wide, _ = V.engine_tables(fits, reference("zjly2009", "table2"))
    assert V.engines_text(wide) in md
    g = fits[(fits["engine"] == "GentleBoost.C")]["test_error_pct"].iloc[0]
    assert f"| Vowel | 47.62 | {g:.2f} |" in md
