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


def test_demo_runs(capsys):
    from cohstats.__main__ import main
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    assert "C-learning" in out and "Predicted class probabilities" in out
    err = float(out.split("test error ")[1].split()[0])
    assert err < 0.12   # Bayes error of the simulation is 0.059


def test_readme_example_runs():
    text = (ROOT / "README.md").read_text()
    code = text.split("```python")[1].split("```")[0]
    ns: dict = {}
    exec(compile(code, "README.md", "exec"), ns)
    best = ns["best"]
    P = best.predict(ns["test"], type="prob")
    assert list(P.columns) == best.classes and abs(P.to_numpy().sum(axis=1) - 1).max() < 1e-12
