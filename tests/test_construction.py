"""Results are built through their constructors, not by setting attributes from outside.

Every result class has one classmethod constructor ``_from_arrays(design, *, ..., call)`` that
takes every piece of state as a keyword argument and checks the contract fields in one place
(:meth:`cohstats.results.Fit._set_contract`); a result derived from another is made by a method
of the class (``select``, ``_derive``). Two checks:

* a static scan of the fit and tuning modules finds no ``name.attr = ...`` (nor ``setattr``,
  ``name.__dict__[...] = ...``) outside class bodies where ``name`` holds a result object;
* each constructor, given the arrays of a real fit but a 2-D ``lambda_`` or a non-bool
  ``converged``, raises an error naming the field.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import cohstats as cs
import cohstats.models
import cohstats.tuning
from cohstats.results import Fit

PKG = Path(cs.__file__).parent
SCANNED = sorted([*PKG.glob("models/*.py"), *PKG.glob("tuning/*.py")])

# public fit functions: their return value is a result object
FIT_FUNCTIONS = {"clearn", "lum", "svm", "psi_learn", "lamsvm", "gboost", "gboost_c", "cart", "tune_lum"}
# calls whose value is a (new) result object
RESULT_METHODS = {"_from_arrays", "_blank", "_derive", "select"}


def _fit_class_names() -> set:
    for pkg in (cohstats.models, cohstats.tuning):
        for mod in pkgutil.iter_modules(pkg.__path__):
            importlib.import_module(f"{pkg.__name__}.{mod.name}")
    out, todo = set(), [Fit]
    while todo:
        c = todo.pop()
        out.add(c.__name__)
        todo.extend(c.__subclasses__())
    return out


FIT_CLASSES = _fit_class_names()


def _callee(node) -> str | None:
    """The last name of a call's function (``a.b.c(...)`` -> ``"c"``)."""
    f = node.func
    if isinstance(f, ast.Name):
        return f.id
    if isinstance(f, ast.Attribute):
        return f.attr
    return None


def _mentions(node, names) -> bool:
    return any(
        isinstance(n, ast.Name) and n.id in names or isinstance(n, ast.Attribute) and n.attr in names
        for n in ast.walk(node)
    )


class _Scanner:
    """Find assignments to attributes of result objects outside class bodies.

    A name holds a result when it is bound (flow-insensitively, per function) to: a call of a
    result class, of its constructor or a method that returns a result (``_from_arrays``,
    ``_blank``, ``_derive``, ``select``), of a public fit function or of a module function that
    returns a result (found by a fixpoint over the scanned modules); ``copy.copy`` of a result;
    an attribute ``.best_fit``; or a parameter called ``fit`` or annotated with a result class.
    """

    def __init__(self, trees: dict):
        self.trees = trees
        self.returning = set(FIT_FUNCTIONS)  # module functions returning a result
        changed = True
        while changed:  # fixpoint: helpers returning a helper's result
            changed = False
            for fn in self._functions():
                if fn.name in self.returning:
                    continue
                res = self._result_names(fn)
                ann = fn.returns is not None and _mentions(fn.returns, FIT_CLASSES)
                rets = [n.value for n in ast.walk(fn) if isinstance(n, ast.Return) and n.value is not None]
                if ann or any(self._is_result(v, res) for v in rets):
                    self.returning.add(fn.name)
                    changed = True

    def _functions(self):
        """Function definitions outside class bodies (module level and nested in functions)."""
        for path, tree in self.trees.items():
            stack = [tree]
            while stack:
                node = stack.pop()
                for child in ast.iter_child_nodes(node):
                    if isinstance(child, ast.ClassDef):
                        continue  # class bodies may set their own state
                    if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        yield child
                    stack.append(child)

    def _is_result(self, value, names) -> bool:
        if isinstance(value, ast.Name):
            return value.id in names
        if isinstance(value, ast.Attribute):
            return value.attr == "best_fit"
        if isinstance(value, ast.Call):
            c = _callee(value)
            if c in FIT_CLASSES or c in RESULT_METHODS or c in self.returning:
                return True
            if c in ("copy", "deepcopy") and value.args and self._is_result(value.args[0], names):
                return True
        if isinstance(value, ast.IfExp):
            return self._is_result(value.body, names) or self._is_result(value.orelse, names)
        return False

    def _result_names(self, fn) -> set:
        names = {
            a.arg
            for a in [*fn.args.args, *fn.args.kwonlyargs, *fn.args.posonlyargs]
            if a.arg == "fit" or (a.annotation is not None and _mentions(a.annotation, FIT_CLASSES))
        }
        changed = True
        while changed:
            changed = False
            for node in ast.walk(fn):
                if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    if self._is_result(node.value, names):
                        for t in targets:
                            if isinstance(t, ast.Name) and t.id not in names:
                                names.add(t.id)
                                changed = True
        return names

    def violations(self) -> list:
        out = []
        for fn in self._functions():
            names = self._result_names(fn)
            path = getattr(fn, "_path", "?")
            for node in ast.walk(fn):
                targets = []
                if isinstance(node, ast.Assign):
                    targets = node.targets
                elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
                    targets = [node.target]
                flat = []
                for t in targets:
                    flat.extend(t.elts if isinstance(t, (ast.Tuple, ast.List)) else [t])
                for t in flat:
                    base = t
                    if isinstance(t, ast.Subscript):  # fit.__dict__["x"] = ...
                        base = t.value
                    if isinstance(base, ast.Attribute) and isinstance(base.value, ast.Name) and base.value.id in names:
                        out.append(f"{path}:{node.lineno} in {fn.name}(): {ast.unparse(t)} = ...")
                if isinstance(node, ast.Call):
                    c = _callee(node)
                    if (
                        c in ("setattr", "__setattr__")
                        and node.args
                        and isinstance(node.args[0], ast.Name)
                        and node.args[0].id in names
                    ):
                        out.append(f"{path}:{node.lineno} in {fn.name}(): {ast.unparse(node)}")
                    f = node.func
                    if (
                        c in ("update", "setdefault")
                        and isinstance(f, ast.Attribute)
                        and isinstance(f.value, ast.Attribute)
                        and f.value.attr == "__dict__"
                        and isinstance(f.value.value, ast.Name)
                        and f.value.value.id in names
                    ):
                        out.append(f"{path}:{node.lineno} in {fn.name}(): {ast.unparse(node)}")
        return out


def _scan(sources: dict) -> list:
    trees = {}
    for path, src in sources.items():
        tree = ast.parse(src)
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                node._path = path
        trees[path] = tree
    return _Scanner(trees).violations()


def test_scanner_finds_outside_assignments():
    """The scan catches the patterns it forbids (this is what the package did before)."""
    src = """
class CLearnFit(Fit):
    def select(self, s):
        new = copy.copy(self)
        new.s = s                      # inside the class: allowed
        return new

def _settings(fit, tol):
    fit._tol = tol

def _fit_helper(design):
    fit = CLearnFit(design, {})
    fit.lambda_, fit.s = np.ones(3), 1.0
    fit.__dict__["_paths"] = {}
    return fit

def clearn_like(design):
    f = _fit_helper(design)
    setattr(f, "converged", True)
    g = f.select(0.1)
    g.s = 0.2
    h = copy.copy(g)
    h.__dict__.update(a=1)
    tab = pd.DataFrame()
    tab.index = ["x"]                  # not a result: allowed
    return f

def tuner(design):
    res = tune(clearn_like, design)
    best = res.best_fit
    best.tuning = 1
"""
    found = _scan({"snippet.py": src})
    text = "\n".join(found)
    for bad in (
        "fit._tol",
        "fit.lambda_",
        "fit.s",
        "fit.__dict__['_paths']",
        "setattr(f,",
        "g.s",
        "h.__dict__.update",
        "best.tuning",
    ):
        assert bad in text, (bad, found)
    assert "new.s" not in text and "tab.index" not in text
    assert len(found) == 8, found


def test_no_attribute_assignment_on_results_outside_their_classes():
    assert len(SCANNED) > 10
    found = _scan({str(p.relative_to(PKG.parent)): p.read_text() for p in SCANNED})
    assert not found, "results set from outside their class (use the constructor or a method):\n" + "\n".join(found)


# ============================================================================ constructors
def _data(n, K, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    if K == 2:
        y = np.where(X[:, 0] - X[:, 1] + rng.normal(size=n) > 0, "yes", "no")
    else:
        y = np.array(["a", "b", "c"])[
            np.argmax(np.column_stack([X[:, 0], X[:, 1], -X.sum(1)]) + rng.normal(size=(n, 3)), axis=1)
        ]
    return pd.DataFrame({"x1": X[:, 0], "x2": X[:, 1], "y": y})


BIN, MULTI = _data(60, 2, 0), _data(60, 3, 1)

# (result class, fit function, data, kwargs)
CONSTRUCTED = [
    ("clearn.CLearnFit", "clearn", BIN, dict(nlambda=5)),
    ("clearn.CLearnFit", "clearn", MULTI, dict(kernel="rbf", nlambda=4)),
    ("svm.SVMFit", "svm", BIN, dict(kernel=None)),
    ("svm.MulticlassSVMFit", "svm", MULTI, dict()),
    ("svm.PsiFit", "psi_learn", BIN, dict(kernel=None, lambda_=0.05)),
    ("lamsvm.LamSVMFit", "lamsvm", MULTI, dict(kernel=None)),
    ("gboost.GBoostFit", "gboost_c", MULTI, dict(n_trees=3, nodes=2)),
    ("cart.CartFit", "cart", MULTI, dict(nfolds=3, random_state=0)),
]
CIDS = [f"{c[0].split('.')[1]}-{c[1]}-{'multi' if c[2] is MULTI else 'bin'}" for c in CONSTRUCTED]


def _class(dotted):
    mod, name = dotted.split(".")
    return getattr(importlib.import_module(f"cohstats.models.{mod}"), name)


def _with_bad(monkeypatch, cls, **bad):
    """Make ``cls._from_arrays`` receive the fit function's arguments with ``bad`` replacing some."""
    orig = cls.__dict__["_from_arrays"].__func__

    def patched(klass, *args, **kwargs):
        if klass is cls:
            kwargs.update(bad)
        return orig(klass, *args, **kwargs)

    monkeypatch.setattr(cls, "_from_arrays", classmethod(patched))


def _fit(fn, df, kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return getattr(cs, fn)("y ~ x1 + x2", df, **kw)


@pytest.mark.parametrize("case", CONSTRUCTED, ids=CIDS)
def test_constructor_builds_the_fit(case):
    dotted, fn, df, kw = case
    fit = _fit(fn, df, kw)
    assert type(fit) is _class(dotted)
    assert isinstance(fit.lambda_, np.ndarray) and fit.lambda_.ndim == 1 and fit.lambda_.dtype == np.float64
    assert type(fit.converged) is bool and type(fit.n_iter) is int
    assert isinstance(fit.s, float) and np.isfinite(fit.s)


@pytest.mark.parametrize("case", CONSTRUCTED, ids=CIDS)
def test_constructor_rejects_a_2d_lambda(case, monkeypatch):
    dotted, fn, df, kw = case
    cls = _class(dotted)
    _with_bad(monkeypatch, cls, lambda_=np.ones((2, 2)))
    with pytest.raises(ValueError, match=rf"{cls.__name__}: lambda_ must be a non-empty 1-D array"):
        _fit(fn, df, kw)


@pytest.mark.parametrize("bad", [None, 1, np.array([True, False]), "yes"])
@pytest.mark.parametrize("case", CONSTRUCTED, ids=CIDS)
def test_constructor_rejects_a_non_bool_converged(case, bad, monkeypatch):
    dotted, fn, df, kw = case
    cls = _class(dotted)
    _with_bad(monkeypatch, cls, converged=bad)
    with pytest.raises(TypeError, match=rf"{cls.__name__}: converged must be a bool"):
        _fit(fn, df, kw)


def test_derived_results_are_checked_copies():
    fit = _fit("clearn", BIN, dict(nlambda=5))
    sel = fit.select(float(fit.lambda_[2]))
    assert sel is not fit and sel.s == fit.lambda_[2] and fit.s == fit.lambda_[-1]
    with pytest.raises(TypeError, match="CLearnFit: converged must be a bool"):
        fit._derive(converged=None)
    with pytest.raises(ValueError, match="CLearnFit: lambda_ must be a non-empty 1-D array"):
        fit._derive(lambda_=np.array(0.1))
    with pytest.raises(TypeError, match="CLearnFit: n_iter must be a nonnegative int"):
        fit._derive(n_iter=2.5)


@pytest.mark.parametrize("dotted,df", [("lum.LumFit", BIN), ("lum.LumMultiFit", MULTI)], ids=["binary", "multi"])
def test_lum_constructors_check_the_fitted_sequence(dotted, df, monkeypatch):
    cls = _class(dotted)
    fit = _fit("lum", df, dict(nlambda=4))
    assert type(fit) is cls and fit.lambda_.dtype == np.float64 and type(fit.converged) is bool
    _with_bad(monkeypatch, cls, lambdas=np.ones((2, 2)))
    with pytest.raises(ValueError, match=rf"{cls.__name__}: lambda_ must be a non-empty 1-D array"):
        _fit("lum", df, dict(nlambda=4))
