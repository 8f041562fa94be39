"""``benchmarks/README.md``'s table of latest measurements is the one ``benchmarks/make_table.py``
generates from ``benchmarks/log.csv``."""

import importlib.util
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


def _load(name):
    path = BENCH / f"{name}.py"
    if not path.is_file():
        pytest.skip("benchmarks/ is not in this checkout")
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _make_table():
    return _load("make_table")


def test_committed_table_is_the_generated_one():
    mt = _make_table()
    text = mt.README.read_text(encoding="utf-8")
    assert mt.render(text, mt.read_log()) == text, "run python benchmarks/make_table.py"
    assert mt.main(["--check"]) == 0


def test_table_shows_the_last_group_of_runs(tmp_path):
    mt = _make_table()
    log = tmp_path / "log.csv"
    log.write_text(
        "date,benchmark,case,metric,value,commit\n"
        "2026-01-01,bench_x,a,ratio,5.0,aaa\n"
        "2026-01-02,bench_x,a,ratio,1.0,bbb\n"
        "2026-01-02,bench_x,a,ratio,3.0,bbb\n"
        "2026-01-02,bench_x,a,ratio,2.0,bbb\n",
        encoding="utf-8",
    )
    lines = mt.table(mt.read_log(log)).splitlines()
    assert lines[2] == "| bench_x | a | ratio | 2 (1-3) | 3 | 2026-01-02 | bbb |"
    assert len(lines) == 3


def test_log_errors_name_the_problem(tmp_path):
    mt = _make_table()
    bad = tmp_path / "log.csv"
    bad.write_text("date,benchmark,case,metric,value,commit\n2026-01-01,b,c,m,fast,abc\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"line 2: value 'fast' is not a number"):
        mt.read_log(bad)
    bad.write_text("date,bench,case,metric,value,commit\n", encoding="utf-8")
    with pytest.raises(ValueError, match="header"):
        mt.read_log(bad)
    with pytest.raises(ValueError, match="markers"):
        mt.render("no markers here", [])


def test_readme_gboost_row_is_the_one_the_log_gives():
    """The README's bench_gboost.py speed row is generated from benchmarks/log.csv."""
    assert _load("bench_gboost").main(["--check-readme"]) == 0
