"""The package's import structure: layers, no import cycles, no private names between models and tuning.

A static check (``ast`` over every module of ``cohstats``, with the imports inside functions and
methods): every ``import`` goes to a module of the same or a lower layer, the module graph has
no cycle, and ``cohstats.models`` and ``cohstats.tuning`` use only each other's public names.

An import of ``a.b.c`` also runs the package ``__init__`` of ``a.b`` (and ``a``), so it counts
as an import of those packages too (except the importer's own enclosing packages, which are
already loaded). Imports under ``if TYPE_CHECKING:`` never run and are not counted.

Layers, lowest first (a module belongs to the layer of the longest prefix listed):

base
    the top-level ``cohstats`` package (its names are resolved lazily, on first access),
    ``exceptions``, ``_numba_cache``.
ground
    the front door and plain data: ``validation`` (argument checks, ``FitSpec``), ``design`` and
    ``formula`` (``Design``, ``build_design``), ``scaling``, ``summary`` (the R-style
    ``Summary``), ``persist`` (class paths are resolved by name when a file is read), ``datasets``.
numerics
    ``losses``, ``kernels``, ``kernel_approx``, ``metrics``, ``probability``, ``coupling``.
solvers
    ``solvers`` (numba only).
reporting
    ``reporting``, ``calibration``, ``plotting``: they take fits as arguments and know them
    through :class:`cohstats.summary.FitBase`.
results
    ``results`` (the ``Fit`` base class and its contract).
tuning
    ``tuning``: cv, tune, gkl and their parts are higher-order functions -- they receive the fit
    function as an argument and read its declared ``FitSpec`` -- so they import no model.
models
    ``models``: the fit functions and their results. A model whose fits use a tuner (the tuned
    LUM ``lum(c="tuned")``, the SVM's tuned Platt probabilities) calls it from here.
applications
    ``sklearn`` (wrappers), ``vignettes``, ``__main__``.

The one reference that goes up is a lazy name, not an import: ``cohstats.tuning.tune_lum`` is
resolved on first access to :func:`cohstats.models.lum.tune_lum` (the tuned LUM is a model, but
``cohstats.tuning`` is where the tuners are documented); :data:`LAZY_UP` lists it and the test
checks that the package's lazy table holds nothing else. (A result that refits, as the
lambda-SVM's cross-validated calibration, calls its fit function through the public namespace
``cohstats.<name>``, the same names saved files use for fit functions.)
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "cohstats"

LAYERS = (
    ("base", ("cohstats", "cohstats.exceptions", "cohstats._numba_cache", "cohstats.stopflag")),
    (
        "ground",
        (
            "cohstats.validation",
            "cohstats.design",
            "cohstats.formula",
            "cohstats.scaling",
            "cohstats.summary",
            "cohstats.svalues",
            "cohstats.persist",
            "cohstats.datasets",
        ),
    ),
    (
        "numerics",
        (
            "cohstats.losses",
            "cohstats.kernels",
            "cohstats.kernel_approx",
            "cohstats.metrics",
            "cohstats.probability",
            "cohstats.coupling",
        ),
    ),
    ("solvers", ("cohstats.solvers",)),
    ("reporting", ("cohstats.reporting", "cohstats.calibration", "cohstats.plotting")),
    ("results", ("cohstats.results", "cohstats.result_intervals")),
    ("tuning", ("cohstats.tuning", "cohstats.inference")),
    ("models", ("cohstats.models",)),
    ("applications", ("cohstats.sklearn", "cohstats.vignettes", "cohstats.__main__")),
)

#: lazy names of a package that resolve to a module of a higher layer: package -> {name: module}
LAZY_UP = {"cohstats.tuning": {"tune_lum": "cohstats.models.lum"}}


def _modules() -> dict:
    mods = {}
    for f in sorted(ROOT.rglob("*.py")):
        parts = list(f.relative_to(ROOT.parent).with_suffix("").parts)
        is_pkg = parts[-1] == "__init__"
        if is_pkg:
            parts = parts[:-1]
        mods[".".join(parts)] = (f, is_pkg)
    return mods


MODULES = _modules()


def layer_of(mod: str) -> int:
    best, level = -1, None
    for i, (_, prefixes) in enumerate(LAYERS):
        for pre in prefixes:
            if (mod == pre or mod.startswith(pre + ".")) and len(pre) > best:
                best, level = len(pre), i
    if level is None:
        raise AssertionError(f"module {mod} is in no layer: add it to LAYERS in tests/test_layers.py")
    return level


def _type_checking_nodes(tree) -> set:
    """ids of the import nodes under ``if TYPE_CHECKING:`` (never executed)."""
    skip = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            t = node.test
            name = t.id if isinstance(t, ast.Name) else (t.attr if isinstance(t, ast.Attribute) else None)
            if name == "TYPE_CHECKING":
                for sub in node.body:
                    skip.update(id(n) for n in ast.walk(sub))
    return skip


def _existing(name: str) -> str:
    while name not in MODULES and "." in name:
        name = name.rsplit(".", 1)[0]
    return name


def imports_of(mod: str):
    """``(target module, imported name or None, line)`` for every import statement of ``mod``."""
    path, is_pkg = MODULES[mod]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = _type_checking_nodes(tree)
    out = []
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == "cohstats" or a.name.startswith("cohstats."):
                    out.append((_existing(a.name), None, node.lineno))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = mod.split(".") if is_pkg else mod.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not (target == "cohstats" or target.startswith("cohstats.")):
                continue
            for a in node.names:
                sub = f"{target}.{a.name}"
                if sub in MODULES:
                    out.append((sub, None, node.lineno))
                else:
                    out.append((_existing(target), a.name, node.lineno))
    return out


def _edges() -> dict:
    """module -> {imported module: first line}, with the packages an import runs."""
    edges = {}
    for mod in MODULES:
        mine = {mod.rsplit(".", k)[0] for k in range(mod.count(".") + 1)}  # mod and its packages
        e = edges.setdefault(mod, {})
        for target, _, line in imports_of(mod):
            parts = target.split(".")
            for k in range(1, len(parts) + 1):
                t = ".".join(parts[:k])
                if t in MODULES and (t == target or t not in mine) and t != mod:
                    e.setdefault(t, line)
    return edges


EDGES = _edges()


def test_every_module_has_a_layer():
    for mod in MODULES:
        layer_of(mod)


def test_no_import_goes_up():
    bad = []
    for mod, targets in EDGES.items():
        for t, line in targets.items():
            if layer_of(t) > layer_of(mod):
                bad.append(
                    f"{mod} (line {line}, layer {LAYERS[layer_of(mod)][0]}) imports {t} "
                    f"(layer {LAYERS[layer_of(t)][0]})"
                )
    assert not bad, "imports from a lower layer to a higher one:\n" + "\n".join(sorted(bad))


def _cycles(edges: dict) -> list:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index, low, on, stack, comps = {}, {}, set(), [], []
    counter = 0
    for root in edges:
        if root in index:
            continue
        work = [(root, iter(edges.get(root, ())))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(edges.get(w, ()))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        comps.append(sorted(comp))
    return comps


def test_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b": 1}, "b": {"c": 1}, "c": {"a": 1}, "d": {"a": 1}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b": 1}, "b": {}}) == []


def test_no_import_cycle():
    cycles = _cycles(EDGES)
    assert not cycles, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in cycles)


def _private(name: str) -> bool:
    return any(part.startswith("_") and not part.startswith("__") for part in name.split("."))


@pytest.mark.parametrize("pair", [("cohstats.models", "cohstats.tuning"), ("cohstats.tuning", "cohstats.models")])
def test_no_private_names_between_models_and_tuning(pair):
    src, dst = pair
    bad = []
    for mod in MODULES:
        if not mod.startswith(src):
            continue
        for target, name, line in imports_of(mod):
            if not target.startswith(dst):
                continue
            if _private(target[len(dst) :]) or (name is not None and _private(name)):
                bad.append(f"{mod} line {line}: {target}{'.' + name if name else ''}")
    assert not bad, f"private names of {dst} used in {src}:\n" + "\n".join(bad)


def test_lazy_names_going_up_are_only_the_listed_ones():
    import importlib

    for pkg, names in LAZY_UP.items():
        module = importlib.import_module(pkg)
        assert dict(module._LAZY_UP) == names
        for name, target in names.items():
            assert layer_of(target) > layer_of(pkg)
            assert getattr(module, name) is getattr(importlib.import_module(target), name)
    for mod, (path, is_pkg) in MODULES.items():
        if is_pkg and mod not in LAZY_UP and mod != "cohstats":
            assert "_LAZY_UP" not in path.read_text(encoding="utf-8"), mod


MAX_LINES = 800


def test_modules_stay_under_the_size_limit():
    sizes = {mod: len(path.read_text(encoding="utf-8").splitlines()) for mod, (path, _) in MODULES.items()}
    too_long = sorted(f"{m} ({n} lines)" for m, n in sizes.items() if n > MAX_LINES)
    assert not too_long, f"split these modules by topic (at most {MAX_LINES} lines): {too_long}"
