"""Tests of the vignette report writer and runner."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from cohstats.vignettes.report import Report, compare_table, markdown_table  # noqa: E402
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

BROKEN = textwrap.dedent('''
    def run(reps, out, seed=0, n_jobs=None, quick=True):
        raise RuntimeError("deliberate failure")
''')


def test_markdown_table_formats_and_blanks():
    df = pd.DataFrame({"m": ["a|b", "c"], "v": [0.123456, np.nan], "n": [1, 2]})
    md = markdown_table(df, floatfmt=".3f").splitlines()
    assert md[0] == "| m | v | n |"
    assert md[1] == "|:---|---:|---:|"
    assert md[2] == "| a\\|b | 0.123 | 1 |"
    assert md[3] == "| c |  | 2 |"


def test_compare_table_values_and_outer_join():
    ours = pd.DataFrame({"data": ["d1", "d2", "d3"], "method": ["A"] * 3,
                         "gkl": [0.30, 0.25, 0.5], "se": [0.01, 0.02, 0.1]})
    pub = pd.DataFrame({"data": ["d1", "d2", "d4"], "method": ["A"] * 3, "mean": [0.31, 0.20, 0.4]})
    t = compare_table(ours, pub, on=["data", "method"], value="gkl", se="se", published_value="mean")
    t = t.set_index("data")
    assert list(t.columns) == ["method", "ours", "published", "difference", "ours_se", "z"]
    np.testing.assert_allclose(t.loc["d1", "difference"], -0.01)
    np.testing.assert_allclose(t.loc["d2", "z"], 0.05 / 0.02)
    assert np.isnan(t.loc["d3", "published"]) and np.isnan(t.loc["d4", "ours"])
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
    assert "| k | ours | published | difference | ours_se | z |" in md
    assert "| a | 1 | 1.5 | -0.5 | 0.1 | -5 |" in md
    assert "![A line.](test_report_zdj_table_2_files/diag_line.png)" in md
    assert "| fit | 1.25 |" in md
    assert png.exists() and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    html = path.with_suffix(".html").read_text()
    assert "<h1>Test report: ZDJ Table 2</h1>" in html and "diag_line.png" in html
    assert str(tmp_path) not in md  # relative paths only


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
    idx = run_vignettes(["dummy", "broken"], out=tmp_path / "out", seed=4, paths=[mods],
                        verbose=False)
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


def test_loss_figures_vignette_from_command_line(tmp_path):
    out = tmp_path / "vr"
    res = subprocess.run([sys.executable, "-m", "cohstats.vignettes", "loss_figures", "--reps", "1",
                          "--out", str(out)], capture_output=True, text=True, timeout=240)
    assert res.returncode == 0, res.stderr
    assert "[1/1] loss_figures" in res.stdout
    md = (out / "loss_figures" / "loss_figures.md").read_text()
    for fig in ("zdj_figure1", "lzw_figure1", "lzw_figure2", "lzw_figure3", "calibration_true_p"):
        assert (out / "loss_figures" / "loss_figures_files" / f"{fig}.png").exists()
        assert f"{fig}.png" in md
    assert "| loss_figures | ok |" in (out / "index.md").read_text()
