"""The committed fidelity tables' summary agrees with their cause column, their SE column is the
denominator of z, and [WSL] Table 4's repeats of Table 3 are scored once."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from cohstats.vignettes import fidelity

ROOT = Path(__file__).resolve().parents[1]


def _table(name):
    path = ROOT / "vignettes" / f"{name}.csv"
    if not path.is_file():
        pytest.skip(f"{name}.csv is not in this checkout")
    return pd.read_csv(path, keep_default_na=False, na_values=[""])


@pytest.mark.parametrize("name", ["fidelity_quick", "fidelity_full"])
def test_summary_count_of_uncaused_off_cells_is_the_cause_columns(name):
    tab = _table(name)
    cs = fidelity.cause_summary(tab).set_index("cause")
    off_open = int(cs["OFF"].reindex(["open", "(none)"]).fillna(0).sum())
    text = fidelity.summary_text(tab)
    assert f"OFF cells without a measured cause (cause empty or open): {off_open}" in text
    md = (ROOT / "vignettes" / f"{name}.md").read_text(encoding="utf-8")
    assert text in md


@pytest.mark.parametrize("name", ["fidelity_quick", "fidelity_full"])
def test_se_used_is_the_denominator_of_z(name):
    tab = _table(name)
    d = tab[np.isfinite(tab["z"])]
    assert len(d) > 100
    np.testing.assert_allclose(d["z"], (d["ours"] - d["published"]) / d["se_used"], rtol=1e-9)
    # it is the floored, combined SE: never below the published one
    assert (d["se_used"] >= d["published_se"].fillna(0) - 1e-15).all()


@pytest.mark.parametrize("name", ["fidelity_quick", "fidelity_full"])
def test_wsl_table4_new_cross_entropies_repeat_table3_and_are_scored_once(name):
    tab = _table(name)
    t4 = tab[(tab.source == "[WSL] Table 4") & (tab.quantity == "cre") & tab.cell.str.contains("New")]
    assert len(t4) == 4 and (t4.verdict == "REPEAT").all()
    t3 = tab[(tab.source == "[WSL] Table 3") & (tab.quantity == "cre")].set_index("cell")
    for cell, pub, note in zip(t4.cell, t4.published, t4.note):
        other = note.split("[WSL] Table 3 ", 1)[1].split(", scored there")[0]
        assert other.startswith(cell.split(" | ")[0]) and t3.loc[other, "published"] == pub
        assert t3.loc[other, "verdict"] in ("MATCH", "CLOSE", "OFF")
    s = fidelity.fidelity_summary(tab).iloc[-1]
    assert s["REPEAT"] == 4
    assert s["MATCH"] + s["CLOSE"] + s["OFF"] == tab.verdict.isin(["MATCH", "CLOSE", "OFF"]).sum()
