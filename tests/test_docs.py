"""The documentation builds with no warnings (``sphinx-build -W``) and cites no SPEC decisions."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_sphinx_builds_without_warnings(tmp_path):
    pytest.importorskip("sphinx")
    pytest.importorskip("numpydoc")
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "sphinx",
            "-W",
            "--keep-going",
            "-q",
            "-b",
            "html",
            str(ROOT / "docs"),
            str(tmp_path / "html"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert (tmp_path / "html" / "api.html").exists()
    # the tutorial ran: its figures are on the page and its quoted numbers were substituted
    page = (tmp_path / "html" / "tutorial.html").read_text()
    for fig in ("cv", "path", "calibration", "wine_path", "wine_calibration"):
        assert (tmp_path / "html" / "_images" / f"{fig}.png").exists()
        assert f"_images/{fig}.png" in page
    values = (ROOT / "docs" / "_generated" / "tutorial" / "values.txt").read_text()
    subs = dict(re.findall(r"^\.\. \|(\w+)\| replace:: (.+)$", values, flags=re.M))
    assert {"cv_lmin", "cv_l1se", "cmp_min_padj", "boot_err", "wine_err"} <= set(subs)
    assert not re.search(r"\|[a-z_0-9]+\|", re.sub(r"<[^>]+>", "", page))  # none left unresolved
    assert f"lambda.1se</span></code> =\n{subs['cv_l1se']}" in page or subs["cv_l1se"] in page
    # parameter descriptions are not set as types (numpydoc's italics) by the conf.py hook
    clearn = (tmp_path / "html" / "generated" / "cohstats.clearn.html").read_text()
    assert "<dt><strong>data</strong></dt><dd><p>DataFrame (formula) or labels" in clearn


def test_tutorial_prose_quotes_no_hand_typed_numbers():
    """Every number in the tutorial's text is a substitution written by the run."""
    text = (ROOT / "docs" / "tutorial.rst").read_text()
    for line in text.splitlines():
        if line.startswith("..") or line.startswith("   :"):
            continue
        prose = re.sub(r"``[^`]*``", "", re.sub(r"\|\w+\|", "", line))
        assert not re.search(r"\d", prose), line


def test_parameter_line_splitting():
    sys.path.insert(0, str(ROOT / "docs" / "_scripts"))
    try:
        from param_lines import split_parameter_lines
    finally:
        sys.path.pop(0)
    lines = [
        "Parameters",
        "----------",
        "x : int, default 3",
        "    The count.",
        "s : for path fits, the value of the sequence",
        "    (interpolated).",
        "data : DataFrame (formula) or labels.",
        "kernel : callable",
        "",
        "Notes",
        "-----",
        "a : b. Not a parameter line.",
    ]
    split_parameter_lines(None, "function", "f", None, {}, lines)
    assert lines == [
        "Parameters",
        "----------",
        "x : int, default 3",
        "    The count.",
        "s",
        "    for path fits, the value of the sequence",
        "    (interpolated).",
        "data",
        "    DataFrame (formula) or labels.",
        "kernel : callable",
        "",
        "Notes",
        "-----",
        "a : b. Not a parameter line.",
    ]
