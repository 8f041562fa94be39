"""The README's two set-up commands, and CI running the second one verbatim."""
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _readme_commands():
    text = (ROOT / "README.md").read_text()
    block = text.split("```")[1]
    lines = [ln.strip() for ln in block.splitlines()[1:] if ln.strip() and not ln.strip().startswith("#")]
    return lines


def test_readme_opens_with_two_commands():
    cmds = _readme_commands()
    assert len(cmds) == 2
    assert cmds[0].endswith("-m cohstats demo")
    assert "pytest" in cmds[1]


def test_ci_runs_the_readme_test_command_verbatim():
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert _readme_commands()[1] in [ln.strip() for ln in ci]
