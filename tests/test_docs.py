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


def test_docs_pages_cite_no_spec_decisions():
    for page in (ROOT / "docs").glob("*.rst"):
        text = page.read_text()
        assert not re.search(r"SPEC|\[D\d", text), page.name
