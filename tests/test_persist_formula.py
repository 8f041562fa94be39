"""Loading a saved formula: the static check and the budget of ``cohstats.persist._formula``.

A saved file stores a formula's right-hand side and the training columns; ``load`` rebuilds the
formulaic specification from them. Every formula a file can hold either loads bitwise-identical
to the fit that wrote it or is refused with ``FormatError`` -- within bounded memory, checked
here with ``tracemalloc`` (which sees NumPy's allocations), never with a clock.
"""

from __future__ import annotations

import json
import tracemalloc
import zipfile

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import cohstats as cs
from cohstats.formula import build_design
from cohstats.persist import FormatError, UnsafeObjectError, save
from cohstats.persist import _formula as pf

MB = 1 << 20


def _frame(n=120, seed=3):
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "x1": rng.normal(size=n),
            "x2": rng.normal(size=n),
            "x3": rng.uniform(0.5, 2.0, size=n),
            "g": rng.choice(["a", "b", "c"], n),
            "y": rng.choice(["no", "yes"], n),
        }
    )


DF = _frame()
NEW = _frame(30, seed=4)


def _with_rhs(src, dst, rhs):
    """``src`` copied to ``dst`` with every stored formula right-hand side replaced by ``rhs``."""

    def swap(node):
        if isinstance(node, dict):
            if node.get("$") == "modelspec":
                node["rhs"] = rhs
            return {k: swap(v) for k, v in node.items()}
        return [swap(v) for v in node] if isinstance(node, list) else node

    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_STORED) as zout:
        for info in zin.infolist():
            data = zin.read(info)
            if info.filename == "graph.json":
                data = json.dumps(swap(json.loads(data))).encode()
            zout.writestr(info, data)
    return dst


@pytest.fixture(scope="module")
def base_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("pf") / "base.cohstats"
    save(build_design("y ~ x1 + C(g) + poly(x2, 2) + np.log(x3)", DF), path)
    return path


# ============================================================================ crafted files
CRAFTED = {
    'x1 + I("' + "a" * 1000 + '" * 1000000)': "repeats a string or list",
    "x1 + I([0] * 1000000 * 1000)": "repeats a string or list",
    "x1 + I(((64 ** 64) ** 64) ** 64 ** 64)": "more than 4096 bits",
    "x1 + I(2 << 10 ** 6)": "more than 4096 bits",
    "poly(x1, degree=1000000)": "polynomial of degree 1000000",
    "poly(x1, degree=1e6)": "polynomial of degree 1000000.0",
    "(x1 + x2) ** 64": "raises 2 term(s) to the power 64",
    "(x1 + x2 + x3 + g) ** 7": "raises 4 term(s) to the power 7",
    "bs(x1, df=100000)": "100000 basis functions",
    "poly(x1, degree=--1000000)": "not a literal number",
    "bs(x1, df=x2)": "not a literal number",
    "x1 + I('%0999999d' % 1)": "formats a string",
    "x1 + I('ab' + 'cd' * 3)": "repeats a string or list",
    "x1 + I(g) + np.sin(x2) + {'a' * 99}": "repeats a string or list",
}


@pytest.mark.parametrize("rhs", list(CRAFTED))
def test_crafted_formula_files_are_refused_in_bounded_memory(rhs, base_file, tmp_path):
    path = _with_rhs(base_file, tmp_path / "crafted.cohstats", rhs)
    tracemalloc.start()
    try:
        with pytest.raises(FormatError, match="not a valid cohstats file") as err:
            cs.load(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert CRAFTED[rhs] in str(err.value)
    assert peak < 20 * MB


def test_the_base_file_loads_and_the_harmless_swap_is_caught(base_file, tmp_path):
    d = cs.load(base_file)
    ref = build_design("y ~ x1 + C(g) + poly(x2, 2) + np.log(x3)", DF)
    assert d.xnames == ref.xnames
    assert d.new_X(NEW).tobytes() == ref.new_X(NEW).tobytes()
    # a harmless formula that is not the one the design was built with is refused too
    with pytest.raises(FormatError, match="differ from the saved design"):
        cs.load(_with_rhs(base_file, tmp_path / "other.cohstats", "x1 + x2"))


def test_the_design_budget_counts_levels_and_interactions():
    rng = np.random.default_rng(0)
    wide = pd.DataFrame({"a": rng.integers(0, 300, 400).astype(str), "b": rng.integers(0, 300, 400).astype(str)})
    la, lb = wide.a.nunique(), wide.b.nunique()
    # an upper bound: rows x (1 + a's levels) x 8 bytes for C(a); interactions multiply
    assert pf._check_formula("C(a)", wide) == 400 * (la + 1) * 8
    assert pf._check_formula("C(a):C(b)", wide) == 400 * (la * lb + 1) * 8
    assert pf._check_formula("a * b", wide) == 400 * (la + lb + la * lb + 1) * 8
    with pytest.raises(ValueError, match=r"400 rows x \d+ columns .* more than the 64 MB"):
        pf._check_formula("C(a):C(b)", wide, pf._design_budget(0))
    pf._check_formula("C(a) + C(b)", wide, pf._design_budget(0))


def test_formula_powers_are_bounded_by_their_expansion_work():
    assert pf._check_formula("(x1 + x2 + x3) ** 3", DF) == 120 * 8 * (1 + 3 + 3 + 1)
    pf._check_formula("(x1 + x2) ** 12", DF)  # 2 ** 12 products
    with pytest.raises(ValueError, match="power 13"):
        pf._check_formula("(x1 + x2) ** 13", DF)
    with pytest.raises(ValueError, match="small whole number"):
        pf._check_formula("(x1 + x2) ** x3", DF)
    with pytest.raises(ValueError, match="4096 terms"):
        pf._check_formula("(x1 + x2 + x3 + g) : (x1 + x2 + x3 + g) : (x1 + x2 + x3 + g) : "
                          "(x1 + x2 + x3 + g) : (x1 + x2 + x3 + g) : (x1 + x2 + x3 + g) : (x1 + x2)", DF)  # fmt: skip


def test_a_fit_with_an_unbounded_formula_cannot_be_saved(tmp_path):
    fit = cs.clearn("y ~ (x1 + x2) ** 13", DF, nlambda=2)
    with pytest.raises(UnsafeObjectError, match="power 13"):
        fit.save(tmp_path / "f")


def test_the_time_limit_stops_python_code():
    def work():
        return sum(range(10))

    with pytest.raises(TimeoutError, match="more than 0 s"), pf._TimeLimit(0.0):
        work()
    with pf._TimeLimit(1e9):
        assert work() == 45


# ============================================================================ property
_ATOMS = st.sampled_from(
    [
        "x1",
        "x2",
        "g",
        "C(g)",
        "np.log(x3)",
        "center(x1)",
        "scale(x2)",
        "I(x1 * 2 - x2)",
        "I(x1 > 0)",
        "I(g + 'z')",
        "Q('x1')",
        "np.where(x1 > 0, x2, 0)",
    ]
)
_HOSTILE = st.one_of(
    st.builds("poly(x1, {})".format, st.sampled_from([1, 2, 3, 119, 120, 121, 10**6, "1e6", 0, -2, "2.5"])),
    st.builds("I(x1 ** {})".format, st.sampled_from([2, 64, 65, "0.5", "x2", "10 ** 10"])),
    st.builds("I({} ** {} ** {})".format, *[st.sampled_from([2, 10, 64, 10**6])] * 3),
    st.builds('I("ab" * {})'.format, st.sampled_from([1, 10**6])),
    st.builds("I([0] * {})".format, st.sampled_from([1, 3, 10**6])),
    st.builds("I(1 << {})".format, st.sampled_from([3, 5000, 10**6])),
    st.builds("bs(x1, df={})".format, st.sampled_from([3, 5, 10**5])),
    st.sampled_from(["open(x1)", "x1.__class__", "np.load(x1)", "lambda: 1", "{x1 for _ in x2}"]),
)


def _formulas():
    leaf = st.one_of(_ATOMS, _ATOMS, _ATOMS, _ATOMS, _HOSTILE)
    return st.recursive(
        leaf,
        lambda sub: st.one_of(
            st.builds("{} + {}".format, sub, sub),
            st.builds("{}:{}".format, sub, sub),
            st.builds("{} * {}".format, sub, sub),
            st.builds("({}) ** {}".format, sub, st.sampled_from([1, 2, 3, 2, 13, 64])),
            st.builds("{} - 1".format, sub),
            st.builds("0 + {}".format, sub),
        ),
        max_leaves=4,
    )


@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(rhs=_formulas())
def test_saved_formulas_load_bitwise_or_are_refused(rhs, base_file, tmp_path_factory):
    """Any right-hand side over the stored columns: refused statically (and then by ``load``),
    or built, saved and loaded bitwise-identical; always within 60 MB of traced memory."""
    tmp = tmp_path_factory.mktemp("prop")
    tracemalloc.start()
    try:
        try:
            pf._check_formula(rhs, DF[["x1", "x2", "x3", "g"]], pf._design_budget(0))
            accepted = True
        except ValueError:
            accepted = False
        design = None
        if accepted:
            try:
                design = build_design("y ~ " + rhs, DF)
            except ValueError:
                pass  # formulaic refuses it (e.g. a polynomial degree above the distinct values)
        event("loaded" if design is not None else "refused")
        if design is not None:
            save(design, tmp / "f.cohstats")
            back = cs.load(tmp / "f.cohstats")
            assert back.xnames == design.xnames
            assert back.X.tobytes() == design.X.tobytes()
            assert back.new_X(NEW).tobytes() == design.new_X(NEW).tobytes()
        else:
            with pytest.raises(FormatError, match="not a valid cohstats file"):
                cs.load(_with_rhs(base_file, tmp / "c.cohstats", rhs))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 60 * MB
