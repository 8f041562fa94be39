"""The committed fidelity tables are rebuilt from the committed run directories their sources
files name (``python -m cohstats.vignettes.fidelity --sources FILE --to FILE``)."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from cohstats.vignettes import fidelity

VIGNETTES = Path(__file__).resolve().parents[1] / "vignettes"


def _committed(name):
    sources, table = VIGNETTES / f"{name}_sources.json", VIGNETTES / f"{name}.csv"
    if not (sources.is_file() and table.is_file()):
        pytest.skip(f"{name} and its sources file are not in this checkout")
    return sources, table


@pytest.mark.parametrize("name", ["fidelity_quick", "fidelity_full"])
def test_committed_table_rebuilds_from_its_sources(name, tmp_path):
    sources, table = _committed(name)
    run_dir = fidelity.assemble_runs(sources, tmp_path / "runs")
    names = json.loads(sources.read_text(encoding="utf-8"))
    assert sorted(p.name for p in run_dir.iterdir()) == sorted(names)
    assert not list(run_dir.rglob("*.html"))  # HTML copies are not copied
    rebuilt = fidelity.fidelity_table(run_dir)
    kept = pd.read_csv(table, keep_default_na=False, na_values=[""])
    assert len(rebuilt) == len(kept)
    key = ["source", "quantity", "cell"]
    a = rebuilt.set_index(key).sort_index()
    b = kept.set_index(key).sort_index()
    assert (a.index == b.index).all()
    assert (a["verdict"] == b["verdict"]).all(), a.loc[a["verdict"] != b["verdict"], "verdict"]
    np.testing.assert_allclose(a["ours"].astype(float), b["ours"].astype(float), rtol=1e-12, equal_nan=True)
    np.testing.assert_allclose(a["z"].astype(float), b["z"].astype(float), rtol=1e-9, equal_nan=True)
    # the committed summary counts are those of the rebuilt table
    summ = fidelity.fidelity_summary(rebuilt).iloc[-1]
    md = table.with_suffix(".md").read_text(encoding="utf-8")
    assert f"{int(summ['MATCH'])} MATCH, {int(summ['CLOSE'])} CLOSE, {int(summ['OFF'])} OFF" in md
    assert f"{summ['within 2 SE (%)']:.1f} % of the" in md


def test_full_table_prefers_its_full_runs(tmp_path):
    """Where a full-protocol (or larger-replication) run has a cell, fidelity_full takes it."""
    sources, table = _committed("fidelity_full")
    names = json.loads(sources.read_text(encoding="utf-8"))
    first = sorted(names)[0]
    assert not first.startswith("run_")  # the new runs sort before the quick ones
    kept = pd.read_csv(table, keep_default_na=False, na_values=[""])
    zdj6 = kept[(kept.source == "[ZDJ] Table 6") & (kept.verdict != "STAND-IN")]
    if "full_zdj_clearn" in names:
        assert (zdj6.reps == 20).all()


def test_assemble_runs_names_what_is_wrong(tmp_path):
    bad = tmp_path / "s.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(ValueError, match="cannot be read as JSON"):
        fidelity.assemble_runs(bad, tmp_path / "out")
    bad.write_text(json.dumps({"run_x": "nowhere"}), encoding="utf-8")
    with pytest.raises(ValueError, match="run 'run_x' names 'nowhere', which is not a directory"):
        fidelity.assemble_runs(bad, tmp_path / "out")
    bad.write_text("[]", encoding="utf-8")
    with pytest.raises(ValueError, match="must map run names"):
        fidelity.assemble_runs(bad, tmp_path / "out")
    # the command line refuses a run directory together with --sources
    assert fidelity.main(["somewhere", "--sources", str(bad), "--to", str(tmp_path / "t.md")]) == 2
    assert fidelity.main(["--sources", str(bad)]) == 2
