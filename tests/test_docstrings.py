"""User-facing text cites the papers, never the internal SPEC decision numbers."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[1] / "cohstats"
BAD = re.compile(r"\bSPEC\b|SPEC\.md|\[D\d+[a-z]?\]|\bD\d{1,2}[a-z]?\b(?=[,;)\]])")


def _docstrings(path: Path):
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node, clean=False)
            if doc:
                yield getattr(node, "name", path.name), doc


@pytest.mark.parametrize("path", sorted(PKG.rglob("*.py")), ids=lambda p: str(p.relative_to(PKG)))
def test_no_spec_decision_numbers_in_docstrings(path):
    bad = [(name, m.group(0)) for name, doc in _docstrings(path) for m in BAD.finditer(doc)]
    assert not bad, f"{path.relative_to(PKG)} cites internal decisions: {bad[:5]}"


def test_no_spec_decision_numbers_in_string_literals_shown_to_users():
    """Summary notes, warnings and errors are string literals: none may cite SPEC numbers."""
    offenders = []
    for path in sorted(PKG.rglob("*.py")):
        tree = ast.parse(path.read_text())
        docs = {
            id(n.body[0].value)
            for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and n.body
            and isinstance(n.body[0], ast.Expr)
            and isinstance(n.body[0].value, ast.Constant)
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
                if re.search(r"\bSPEC\b|\[D\d+[a-z]?\]", node.value):
                    offenders.append((str(path.relative_to(PKG)), node.value[:60]))
    assert not offenders, offenders[:10]
