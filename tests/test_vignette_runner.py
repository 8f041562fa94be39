"""Tests of the vignette report writer and runner."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import textwrap

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from cohstats.vignettes.report import (
    Report,
    compare_table,
    markdown_table,
    tally,  # noqa: E402
    tally_text,
)
from cohstats.vignettes.runner import discover, main, run_vignettes  # noqa: E402

DUMMY = textwrap.dedent('''
    """A dummy vignette for the runner tests."""
    import numpy as np
    import pandas as pd
    from cohstats.vignettes.report import Report

    DEFAULT_REPS = 3

    def run(reps, out, seed=0, n_jobs=None, quick=True):
        rng = np.random.default_rng(seed)
        x = rng.normal(size=reps)
        rep = Report("Dummy vignette", out)
        rep.settings({"reps": reps, "seed": seed})
        rep.table(pd.DataFrame({"rep": range(reps), "x": x}), caption="draws")
        return rep.write()
''')

BROKEN = textwrap.dedent("""
    def run(reps, out, seed=0, n_jobs=None, quick=True):
        raise RuntimeError("deliberate failure")
""")


def test_markdown_table_formats_and_blanks():
    df = pd.DataFrame({"m": ["a|b", "c"], "v": [0.123456, np.nan], "n": [1, 2]})
    md = markdown_table(df, floatfmt=".3f").splitlines()
    assert md[0] == "| m | v | n |"
    assert md[1] == "|:---|---:|---:|"
    assert md[2] == "| a\\|b | 0.123 | 1 |"
    assert md[3] == "| c |  | 2 |"


def test_compare_table_values_and_outer_join():
    ours = pd.DataFrame(
        {"data": ["d1", "d2", "d3"], "method": ["A"] * 3, "gkl": [0.30, 0.25, 0.5], "se": [0.01, 0.02, 0.1]}
    )
    pub = pd.DataFrame({"data": ["d1", "d2", "d4"], "method": ["A"] * 3, "mean": [0.31, 0.20, 0.4]})
    t = compare_table(ours, pub, on=["data", "method"], value="gkl", se="se", published_value="mean")
    t = t.set_index("data")
    assert list(t.columns) == [
        "method",
        "reps",
        "ours",
        "ours_se",
        "published",
        "published_se",
        "difference",
        "se_combined",
        "z",
        "verdict",
    ]
    np.testing.assert_allclose(t.loc["d1", "difference"], -0.01)
    # no published SE, no replication count: z from our SE alone
    np.testing.assert_allclose(t.loc["d2", "z"], 0.05 / 0.02)
    assert np.isnan(t.loc["d3", "published"]) and np.isnan(t.loc["d4", "ours"])
    assert t.loc["d4", "verdict"] == "NOT COMPUTED" and t.loc["d3", "verdict"] == ""
    assert t.loc["d2", "verdict"] == "CLOSE" and t.loc["d1", "verdict"] == "MATCH"
    with pytest.raises(ValueError, match=r"published lacks column\(s\) \['gkl'\]"):
        compare_table(ours, pub, on=["data", "method"], value="gkl")


def test_report_writes_markdown_html_and_figures(tmp_path):
    rep = Report("Test report: ZDJ Table 2", tmp_path / "r")
    rep.section("Setup")
    rep.settings({"reps": 2, "kernel": "rbf"})
    rep.text("Some *text*.")
    ours = pd.DataFrame({"k": ["a", "b"], "v": [1.0, 2.0], "se": [0.1, 0.1]})
    pub = pd.DataFrame({"k": ["a", "b"], "v": [1.5, 2.0]})
    tab = rep.compare(ours, pub, on="k", value="v", se="se", caption="v compared")
    np.testing.assert_allclose(tab["z"], [-5.0, 0.0])
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    png = rep.figure(fig, "diag line", caption="A line.")
    rep.timing("fit", 1.25)
    path = rep.write()
    assert path == tmp_path / "r" / "test_report_zdj_table_2.md"
    md = path.read_text()
    assert md.startswith("# Test report: ZDJ Table 2")
    assert ("| k | reps | ours | ours_se | published | published_se | difference | se_combined | z | verdict |") in md
    assert "| a |  | 1 | 0.1 | 1.5 |  | -0.5 | 0.1 | -5 | OFF |" in md
    csv = pd.read_csv(tmp_path / "r" / "test_report_zdj_table_2_comparisons.csv")
    assert csv["cell"].tolist() == ["a", "b"] and csv["verdict"].tolist() == ["OFF", "MATCH"]
    assert "![A line.](test_report_zdj_table_2_files/diag_line.png)" in md
    assert "| fit | 1.25 |" in md
    assert png.exists() and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    html = path.with_suffix(".html").read_text()
    assert "<h1>Test report: ZDJ Table 2</h1>" in html and "diag_line.png" in html
    assert str(tmp_path) not in md  # relative paths only


def test_compare_table_z_uses_combined_and_floored_se():
    # hand computation. Cell x: published 0.30 with SE 0.002 over 100 replications, so the
    # paper's per-replication sd is 0.02; ours 0.31 with SE 0.001 from 4 replications: our SE
    # is floored at 0.02 / sqrt(4) = 0.01, z = 0.01 / sqrt(0.002^2 + 0.01^2) = 0.980581.
    # Cell y: ours from 400 replications, SE 0.004 above the floor 0.001: z = -0.02 /
    # sqrt(0.002^2 + 0.004^2) = -4.472136.
    ours = pd.DataFrame({"m": ["x", "y"], "v": [0.31, 0.28], "se": [0.001, 0.004], "n": [4, 400]})
    pub = pd.DataFrame({"m": ["x", "y"], "v": [0.30, 0.30], "v_se": [0.002, 0.002]})
    t = compare_table(
        ours, pub, on="m", value="v", se="se", published_se="v_se", reps="n", published_reps=100
    ).set_index("m")
    np.testing.assert_allclose(t["se_combined"], [math.sqrt(0.002**2 + 0.01**2), math.sqrt(0.002**2 + 0.004**2)])
    np.testing.assert_allclose(t["z"], [0.980581, -4.472136], rtol=1e-6)
    assert t["verdict"].tolist() == ["MATCH", "OFF"] and t["reps"].tolist() == [4, 400]
    # a published sd (here over 20 partitions) instead of an SE: SE_pub = 2 / sqrt(20); one
    # replication of ours without an SE is floored at the paper's sd itself
    ours1 = pd.DataFrame({"d": ["c"], "err": [19.0]})
    pub1 = pd.DataFrame({"d": ["c"], "err": [14.0], "sd": [2.0]})
    t1 = compare_table(ours1, pub1, on="d", value="err", reps=1, published_sd="sd", published_reps=20)
    np.testing.assert_allclose(t1["published_se"], 2 / math.sqrt(20))
    np.testing.assert_allclose(t1["z"], 5.0 / math.sqrt(4 / 20 + 4.0))
    assert t1["verdict"].iloc[0] == "CLOSE"
    # a stated minimum SE
    t2 = compare_table(ours1, pub1.drop(columns="sd"), on="d", value="err", min_se=2.5)
    np.testing.assert_allclose(t2["z"], 2.0)
    # no replication of ours (all degenerate): no floor, no overflow, not computed; an infinite
    # mean of ours is computed and far off
    ours3 = pd.DataFrame({"m": ["x", "y"], "v": [np.nan, np.inf], "n": [0, 3]})
    with np.errstate(all="raise"):
        t3 = compare_table(ours3, pub, on="m", value="v", published_se="v_se", reps="n", published_reps=100)
    assert t3["verdict"].tolist() == ["NOT COMPUTED", "OFF"]
    with pytest.raises(ValueError, match="at most one of published_se and published_sd"):
        compare_table(ours, pub, on="m", value="v", published_se="v_se", published_sd="v_se")


def test_compare_table_excludes_stand_ins_from_differences_and_tallies(tmp_path):
    ours = pd.DataFrame(
        {"dataset": ["digits 8x8 (1 vs 7) [USPS stand-in]", "colon"], "err": [1.0, 14.0], "se": [0.5, 1.0]}
    )
    pub = pd.DataFrame({"dataset": ["USPS (1 vs 7)", "colon"], "err": [2.3, 14.5], "sd": [1.2, 1.9]})
    st = {"USPS (1 vs 7)": "digits 8x8 (1 vs 7) [USPS stand-in]"}
    t = compare_table(
        ours, pub, on="dataset", value="err", se="se", reps=2, published_sd="sd", published_reps=20, stand_ins=st
    )
    assert len(t) == 2  # the published USPS row joins the stand-in row
    row = t.iloc[0]
    assert row["dataset"] == "digits 8x8 (1 vs 7) [USPS stand-in]"
    assert row["published"] == 2.3 and row["verdict"] == "STAND-IN"
    assert np.isnan(row["difference"]) and np.isnan(row["z"])
    assert tally(t) == {"MATCH": 1, "CLOSE": 0, "OFF": 0, "STAND-IN": 1, "NOT COMPUTED": 0, "NO SE": 0}
    assert tally_text(t).startswith("1 of 1 compared cells within 2 SE")
    rep = Report("Stand-in", tmp_path)
    rep.compare(
        ours,
        pub,
        on="dataset",
        value="err",
        se="se",
        reps=2,
        published_sd="sd",
        published_reps=20,
        stand_ins=st,
        source="[ZDJ] Table 5",
    )
    rep.write(html_too=False)
    rep.compare(
        pd.DataFrame({"dataset": ["colon"], "err": [np.nan], "n": [0]}),
        pub,
        on="dataset",
        value="err",
        reps="n",
        source="degenerate",
    )
    rep.write(html_too=False)
    csv = pd.read_csv(tmp_path / "stand_in_comparisons.csv")
    assert csv["published_cell"].tolist()[:2] == ["USPS (1 vs 7)", "colon"]
    assert csv["note"].iloc[0] == "stand-in data"
    deg = csv[(csv.source == "degenerate") & (csv.cell == "colon")].iloc[0]
    assert deg["verdict"] == "NOT COMPUTED" and deg["note"].startswith("no usable replication")


def test_fidelity_table_on_a_synthetic_run(tmp_path):
    from cohstats.datasets import reference
    from cohstats.vignettes import fidelity

    run_dir = tmp_path / "run"
    t6 = reference("zdj2012", "table6")
    # a fake zdj_clearn report: leukemia computed (one cell 3 SE off), the USPS rows stand-ins
    ours = t6[t6.dataset.isin(["leukemia", "USPS (1 vs 7)"])].copy()
    ours["reps"] = 20
    sd = ours["sd_pct"].to_numpy()
    ours["se"] = sd / math.sqrt(20)
    shift = np.where(ours["method"] == "RLRM", 5.0, 0.5) * math.sqrt(2) * ours["se"]
    ours["mean_pct"] = ours["mean_pct"] + shift
    st = {"USPS (1 vs 7)": "digits 8x8 (1 vs 7) [USPS stand-in]"}
    ours["dataset"] = ours["dataset"].replace(st)
    rep = Report("fake zdj", run_dir / "zdj_clearn", name="zdj_clearn")
    rep.compare(
        ours,
        t6,
        on=["dataset", "method"],
        value="mean_pct",
        se="se",
        reps="reps",
        published_sd="sd_pct",
        published_reps=20,
        stand_ins=st,
        source="[ZDJ] Table 6",
    )
    rep.write(html_too=False)
    tab = fidelity.fidelity_table(run_dir)
    z6 = tab[tab.source == "[ZDJ] Table 6"].set_index("cell")
    assert len(z6) == len(t6)  # every published cell listed once
    np.testing.assert_allclose(z6.loc["leukemia | RLRM", "z"], 5.0)
    np.testing.assert_allclose(z6.loc["leukemia | HHSVM", "z"], 0.5)
    assert z6.loc["leukemia | RLRM", "verdict"] == "OFF"
    assert z6.loc["leukemia | C-learning", "verdict"] == "MATCH"
    assert z6.loc["digits 8x8 (1 vs 7) [USPS stand-in] | HHSVM", "verdict"] == "STAND-IN"
    assert z6.loc["colon | HHSVM", "verdict"] == "NOT COMPUTED"
    # tables no comparison of the run reached are listed as not computed, with the vignette
    t5 = tab[tab.source == "[ZDJ] Table 5"]
    assert len(t5) == len(reference("zdj2012", "table5"))
    assert (t5.verdict == "NOT COMPUTED").all() and "zdj_clearn" in t5.note.iloc[0]
    summ = fidelity.fidelity_summary(tab).set_index("source")
    assert summ.loc["[ZDJ] Table 6", "MATCH"] == 2 and summ.loc["[ZDJ] Table 6", "OFF"] == 1
    assert summ.loc["[ZDJ] Table 6", "STAND-IN"] == 3
    np.testing.assert_allclose(summ.loc["[ZDJ] Table 6", "within 2 SE (%)"], 100 * 2 / 3)
    assert summ.loc["all", "cells"] == len(tab)
    # a comparison recorded with a caption only is attributed to the table whose cells it
    # matches ([ZJLY] Table 2 here), not listed twice
    z2 = reference("zjly2009", "table2").iloc[:2]
    rep2 = Report("fake gboost", run_dir / "gboost_uci", name="gboost_uci")
    rep2.compare(
        z2.assign(test_error_pct=z2.test_error_pct + 0.1),
        z2,
        on=["dataset", "method"],
        value="test_error_pct",
        caption="Test error (%) beside [ZJLY] Table 2",
    )
    rep2.write(html_too=False)
    tab = fidelity.fidelity_table(run_dir)
    zj = tab[tab.source == "[ZJLY] Table 2"].set_index("cell")
    assert len(zj) == len(reference("zjly2009", "table2"))
    assert zj.loc["Vowel | CART", "report"] == "gboost_uci"
    assert zj.loc["Vowel | CART", "verdict"] == "NO SE"  # no SE on either side
    assert not tab.source.str.startswith("Test error").any()
    # the command line: python -m cohstats.vignettes --fidelity --out DIR
    assert main(["--fidelity", "--out", str(run_dir)]) == 0
    md = (run_dir / "fidelity.md").read_text()
    assert "| [ZDJ] Table 6 | mean_pct | leukemia \\| RLRM |" in md
    assert pd.read_csv(run_dir / "fidelity.csv").shape[0] == len(tab)
    assert main(["--fidelity", "--out", str(tmp_path / "nothing")]) == 2


def test_runner_runs_dummy_and_reports_failures(tmp_path):
    mods = tmp_path / "mods"
    mods.mkdir()
    (mods / "dummy.py").write_text(DUMMY)
    (mods / "broken.py").write_text(BROKEN)
    (mods / "not_a_vignette.py").write_text("x = 1\n")
    (mods / "unimportable.py").write_text("import no_such_module_xyz\n")
    errs = {}
    found = discover([mods], errors=errs)
    assert {"dummy", "broken", "loss_figures"} <= set(found) and "not_a_vignette" not in found
    assert "No module named 'no_such_module_xyz'" in errs["unimportable"]
    idx = run_vignettes(["unimportable"], out=tmp_path / "o0", paths=[mods], verbose=False)
    assert "| unimportable | failed |" in idx.read_text()
    idx = run_vignettes(["dummy", "broken"], out=tmp_path / "out", seed=4, paths=[mods], verbose=False)
    text = idx.read_text()
    assert "| dummy | ok |" in text and "[dummy_vignette.md](dummy/dummy_vignette.md)" in text
    assert "| broken | failed |" in text and "RuntimeError: deliberate failure" in text
    rep = (tmp_path / "out" / "dummy" / "dummy_vignette.md").read_text()
    assert "| reps | 3 |" in rep  # DEFAULT_REPS used when reps is not given
    # the seed reaches the vignette: same draws as a direct call
    x = np.random.default_rng(4).normal(size=3)
    assert f"{x[0]:.4g}" in rep
    with pytest.raises(ValueError, match="unknown vignette.*available: .*dummy"):
        run_vignettes(["nope"], out=tmp_path / "o2", paths=[mods], verbose=False)
    assert main(["dummy", "--reps", "2", "--out", str(tmp_path / "o3"), "--path", str(mods)]) == 0
    assert "| reps | 2 |" in (tmp_path / "o3" / "dummy" / "dummy_vignette.md").read_text()
    assert main(["broken", "--out", str(tmp_path / "o4"), "--path", str(mods)]) == 1
    assert main(["nope", "--out", str(tmp_path / "o5")]) == 2
    info = json.loads((tmp_path / "o3" / "run_info.json").read_text())
    assert info["protocol"] == "quick" and info["reps"] == 2 and info["vignettes"] == "dummy"
    # without --reps the record names the replications each vignette resolved to
    info = json.loads((tmp_path / "out" / "run_info.json").read_text())
    assert info["reps"] == "module default (dummy: 3, broken: 2)", info["reps"]


def test_loss_figures_vignette_from_command_line(tmp_path):
    out = tmp_path / "vr"
    res = subprocess.run(
        [sys.executable, "-m", "cohstats.vignettes", "loss_figures", "--reps", "1", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert res.returncode == 0, res.stderr
    assert "[1/1] loss_figures" in res.stdout
    md = (out / "loss_figures" / "loss_figures.md").read_text()
    for fig in ("zdj_figure1", "lzw_figure1", "lzw_figure2", "lzw_figure3", "calibration_true_p"):
        assert (out / "loss_figures" / "loss_figures_files" / f"{fig}.png").exists()
        assert f"{fig}.png" in md
    assert "| loss_figures | ok |" in (out / "index.md").read_text()


def test_loss_figures_calibration_caption_counts_the_bins_it_shows(tmp_path):
    """The caption of the true-probability reliability figure states how many bins lie within
    their 95 % bars, computed from the run's table (formerly a fixed sentence)."""
    import re

    import pandas as pd

    from cohstats.vignettes import loss_figures

    tab = pd.DataFrame({"observed": [0.10, 0.50, 0.93], "mean_predicted": [0.11, 0.40, 0.90], "se": [0.01, 0.02, 0.02]})
    # |gaps| 0.01, 0.10, 0.03 against bars 0.0196, 0.0392, 0.0392: bins 1 and 3 inside
    assert loss_figures._within_bars(tab) == (2, 3)
    path = loss_figures.run(1, tmp_path / "lf")
    md = path.read_text()
    m = re.search(r"draws: in (\d+) of the (\d+) bins", md)
    assert m is not None
    k, n = int(m.group(1)), int(m.group(2))
    assert 0 < n <= 10 and 0 <= k <= n
    assert "observed frequencies match within" not in md
