"""The README's two set-up commands, and CI running the second one verbatim."""

from pathlib import Path

import numpy as np

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
    assert err < 0.12  # Bayes error of the simulation is 0.059


def test_readme_example_runs():
    text = (ROOT / "README.md").read_text()
    blocks = [b.split("```")[0] for b in text.split("```python")[1:]]
    assert len(blocks) >= 2
    ns: dict = {}
    for code in blocks:  # later blocks continue the first one's session
        exec(compile(code, "README.md", "exec"), ns)
    best = ns["best"]
    P = best.predict(ns["test"], type="prob")
    assert list(P.columns) == best.classes and abs(P.to_numpy().sum(axis=1) - 1).max() < 1e-12
    svmfit = ns["svmfit"]
    for method in ("bracket", "coherence", "platt", "sollich", "platt_tuned"):
        Q = svmfit.predict(ns["test"], type="prob", method=method).to_numpy()
        assert np.all((Q >= 0) & (Q <= 1)) and abs(Q.sum(axis=1) - 1).max() < 1e-12
    assert svmfit.platt_tuned().best_params["lambda_"] in (1e-2, 1e-3, 1e-4)
