"""The registered fidelity table (``vignettes/fidelity_registered.csv``) against its registration
(``vignettes/registered.toml``): every number recomputed from the CSV's own columns."""

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from cohstats.vignettes import fidelity, fidelity_registered as fr
from cohstats.vignettes.report import Report

ROOT = Path(__file__).resolve().parents[1]
CSV = ROOT / "vignettes" / "fidelity_registered.csv"


@pytest.fixture(scope="module")
def tab():
    if not CSV.is_file():
        pytest.skip("fidelity_registered.csv is not in this checkout")
    return pd.read_csv(CSV, keep_default_na=False, na_values=[""])


def _scored(t):
    return t[fr._scored_mask(t)]


def test_columns_are_the_registered_ones(tab):
    assert list(tab.columns) == fr.COLUMNS


def test_z_is_the_difference_over_se_used(tab):
    has = tab["se_used"].notna()
    assert has.sum() > 0
    z = (tab.loc[has, "ours"] - tab.loc[has, "published"]) / tab.loc[has, "se_used"]
    np.testing.assert_allclose(tab.loc[has, "z"], z, rtol=1e-9, atol=0)
    assert tab.loc[~has, "z"].isna().all()


def test_verdicts_follow_from_z(tab):
    for z, v in zip(tab["z"], tab["verdict"]):
        if np.isfinite(z):
            assert v == ("MATCH" if abs(z) <= 2 else "CLOSE" if abs(z) <= 3 else "OFF"), (z, v)


def test_se_used_is_at_least_the_published_and_our_se(tab):
    d = tab[tab["se_used"].notna()]
    assert (d["se_used"] >= d["published_se"].fillna(0) - 1e-15).all()
    assert (d["se_used"] >= d["ours_se"].fillna(0) - 1e-15).all()


def test_every_scored_cell_has_the_papers_replications(tab):
    sc = _scored(tab)
    assert (sc["reps"] >= sc["reps_paper"]).all(), sc.loc[sc["reps"] < sc["reps_paper"], ["table", "cell"]]


def test_no_scored_cell_is_counted_twice(tab):
    sc = _scored(tab)
    assert not sc.duplicated(["paper", "table", "cell"]).any()
    # nor a published number another registered table prints for the same cell (fidelity.REPEATS)
    for src, q, pattern, other_src, other_pattern in fidelity.REPEATS:
        p, t = src.strip("[").split("] ", 1)
        op, ot = other_src.strip("[").split("] ", 1)
        a = sc[(sc.paper == p) & (sc.table == t) & sc.cell.str.contains(pattern, regex=True)]
        b = sc[(sc.paper == op) & (sc.table == ot) & sc.cell.str.contains(other_pattern, regex=True)]
        assert a.empty or b.empty


def test_close_and_off_cells_carry_a_known_cause_kind(tab):
    bad = tab[tab["verdict"].isin(["CLOSE", "OFF"])]
    assert bad["cause"].isin(list(fidelity.CAUSE_KINDS)).all()
    assert tab.loc[~tab["verdict"].isin(["CLOSE", "OFF"]), "cause"].fillna("").eq("").all()


def test_registration_parses_and_every_registered_cell_is_in_the_csv(tab):
    reg = fr.read_registration()
    assert {t["name"] for t in reg["table"]} and reg["rules"]["min_reps"] == "reps_paper"
    pub = fidelity._published_cells()
    have = set(zip(tab["paper"], tab["table"], tab["cell"]))
    for t in reg["table"]:
        sel = pub[pub.source.isin(t["source"]) & (pub.quantity == t["quantity"])]
        cells = [
            (s.strip("[").split("] ", 1)[0], s.strip("[").split("] ", 1)[1], c)
            for s, c in zip(sel.source, sel.cell)
            if re.search(t["cells"], c)
        ]
        assert len(cells) == t["expected_cells"], t["name"]
        assert set(cells) <= have, set(cells) - have
    assert len(tab) == sum(t["expected_cells"] for t in reg["table"])


def test_markdown_prints_both_shares_from_the_csv(tab):
    md = CSV.with_suffix(".md").read_text(encoding="utf-8")
    sc = _scored(tab)
    withz = tab[np.isfinite(tab["z"])]
    share = 100.0 * (sc.verdict == "MATCH").mean()
    unadj = 100.0 * (withz.z.abs() <= 2).mean()
    assert f"Registered share: {share:.1f} % of {len(sc)} scored cells" in md
    assert f"unadjusted share (every cell with a z, exclusions included): {unadj:.1f} %" in md


def test_registered_table_from_a_run(tmp_path):
    """A synthetic run: z recomputed, a cell below the paper's replications not scored, an
    excluded group named, an OFF cell without an entry in fidelity_notes.json 'open'."""
    reg = tmp_path / "reg.toml"
    reg.write_text(
        """
[rules]
min_reps = "reps_paper"
seed = 0
[[table]]
name = "t5"
source = "[ZDJ] Table 5"
quantity = "mean_pct"
cells = "^(g241d|leukemia) \\\\| "
expected_cells = 6
reps_paper = 20
reps = 20
vignette = "zdj_clearn"
kwargs = { quick = false }
[[excluded]]
source = "[ZDJ] Table 5"
quantity = "mean_pct"
cell = "^leukemia \\\\| RLRM$"
kind = "paper"
evidence = "synthetic"
""",
        encoding="utf-8",
    )
    ref = fidelity._published_cells()
    ref = ref[(ref.source == "[ZDJ] Table 5") & ref.cell.str.match(r"^(g241d|leukemia) \| ")]
    ours = pd.DataFrame(
        {
            "dataset": [c.split(" | ")[0] for c in ref.cell],
            "method": [c.split(" | ")[1] for c in ref.cell],
            "mean_pct": ref.published.to_numpy() + np.array([0.1, 0.1, 30.0, 0.1, 0.1, 0.1]),
            "se": 0.5,
            "reps": [20, 20, 20, 20, 20, 5],
        }
    )
    pub = ours[["dataset", "method"]].assign(mean_pct=ref.published.to_numpy(), sd=1.0)
    rep = Report("t", tmp_path / "runs" / "t5" / "zdj_clearn", name="zdj_clearn")
    rep.compare(
        ours,
        pub,
        on=["dataset", "method"],
        value="mean_pct",
        se="se",
        reps="reps",
        published_sd="sd",
        published_reps=20,
        source="[ZDJ] Table 5",
    )
    rep.write(html_too=False)
    t = fr.registered_table(reg, tmp_path / "runs").set_index("cell")
    assert len(t) == 6
    np.testing.assert_allclose(t["z"], (t["ours"] - t["published"]) / t["se_used"])
    third = ref.cell.iloc[2]
    assert t.loc[third, "verdict"] == "OFF"
    assert t.loc[third, "cause"] in fidelity.CAUSE_KINDS
    assert t.loc["leukemia | RLRM", "excluded"].startswith("paper: synthetic")
    assert t.loc[ref.cell.iloc[5], "excluded"].startswith("replications below the paper's")
    scored = t[t["excluded"].eq("")]
    assert len(scored) == 4 and (scored["reps"] >= 20).all()
