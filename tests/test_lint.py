"""ruff (pyflakes + pycodestyle lint, and the formatter, configured in pyproject.toml) passes on the
whole tree."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_ruff_check_passes():
    ruff = shutil.which("ruff") or str(Path(__import__("sys").executable).parent / "ruff")
    if not Path(ruff).exists():
        pytest.skip("ruff is not installed (it is in the test extra)")
    r = subprocess.run(
        [ruff, "check", "cohstats", "tests", "benchmarks", "vignettes", "tools", "docs"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stdout + r.stderr


def test_ruff_format_check_passes():
    ruff = shutil.which("ruff") or str(Path(__import__("sys").executable).parent / "ruff")
    if not Path(ruff).exists():
        pytest.skip("ruff is not installed (it is in the test extra)")
    r = subprocess.run(
        [ruff, "format", "--check", "cohstats", "tests", "benchmarks", "vignettes", "tools", "docs"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, "run `ruff format` on:\n" + r.stdout + r.stderr
