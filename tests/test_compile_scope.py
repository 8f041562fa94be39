"""A fit compiles only the numba code it reaches, once.

Each case runs a small fit in a fresh process with an empty compiled-code cache and records,
through numba's event API, every function that numba compiles. A binary linear C-learning fit
must compile none of the grouped (K-class), hard-LUM or kernel code of the coordinate-descent
family, and a K-class fit none of the binary coordinate passes; no function may be compiled for
two argument types (a duplicate specialisation such as an int32/int64, C/F-order or literal-
argument twin) or for a constant argument value. Deterministic: what is compiled does not depend on timing.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys

import pytest

_CHILD = r"""
import json, sys
import numba.core.event as ev
seen = []
class L(ev.Listener):
    def on_start(self, e):
        d = e.data["dispatcher"]
        seen.append((d.py_func.__module__, d.py_func.__qualname__, str(e.data["args"])))
    def on_end(self, e):
        pass
ev.register("numba:compile", L())
import numpy as np, pandas as pd
import cohstats as cs
rng = np.random.default_rng(0)
X = rng.standard_normal((120, 3))
df = pd.DataFrame(X, columns=["x1", "x2", "x3"])
f = X[:, 0] + rng.standard_normal(120)
df["y"] = np.where(f > 0, "a", "b")
df["y3"] = np.select([f < -0.4, f < 0.4], ["a", "b"], "c")
exec(sys.argv[1])
print(json.dumps(seen))
"""

#: modules of the coordinate-descent family that only grouped, LUM or kernel problems reach
_GROUPED = ("cohstats.solvers.cd.group", "cohstats.solvers.cd.group_newton", "cohstats.losses.multiclass")
_NOT_BINARY_LINEAR = _GROUPED + (
    "cohstats.solvers.cd.lum_hard",
    "cohstats.solvers.cd.kernel",
    "cohstats.solvers.cd.lum_kdual",
    "cohstats.solvers.cd.lum_dual",
    "cohstats.losses.angle",
    "cohstats.kernels",
)
_BINARY_PASSES = {("cohstats.solvers.cd.scalar", "_cycle"), ("cohstats.solvers.cd.scalar", "_intercept_step")}

CASES = {
    "binary linear clearn": ("cs.clearn('y ~ x1 + x2 + x3', data=df)", _NOT_BINARY_LINEAR, ()),
    "3-class linear clearn": (
        "cs.clearn('y3 ~ x1 + x2 + x3', data=df.drop(columns='y'))",
        ("cohstats.solvers.cd.lum_hard", "cohstats.kernels", "cohstats.losses.angle"),
        _BINARY_PASSES,
    ),
    # the bracketing grid calls the SMO solver from jitted code, with constant arguments: no
    # specialisation for their values (the grid's solves run on the precomputed float32 kernel
    # matrix, another problem kind of the solver than the fit's rows, so twins are allowed here)
    "svm with a warm-started bracketing grid": (
        "cs.svm('y ~ x1 + x2 + x3', data=df.drop(columns='y3'), prob_method='bracket', path_method='warm')"
        ".predict(df, type='prob')",
        _GROUPED + ("cohstats.solvers.cd.path",),
        (),
    ),
}


def _compiled(code, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "COHSTATS_"))}
    env.update(COHSTATS_NUMBA_CACHE_DIR=str(tmp_path / "cache"), COHSTATS_QUIET="1")
    res = subprocess.run(
        [sys.executable, "-c", _CHILD, code], env=env, capture_output=True, text=True, timeout=600, check=False
    )
    assert res.returncode == 0, res.stderr[-3000:]
    return [tuple(r) for r in json.loads(res.stdout.strip().splitlines()[-1])]


@pytest.mark.parametrize("case", list(CASES))
def test_a_fit_compiles_only_the_code_it_reaches(case, tmp_path):
    code, forbidden_modules, forbidden_functions = CASES[case]
    seen = _compiled(code, tmp_path)
    ours = [(m, q, a) for m, q, a in seen if m.startswith("cohstats.")]
    assert ours, "nothing of cohstats was compiled"
    reached = {m for m, _, _ in ours}
    assert not reached & set(forbidden_modules), sorted(reached & set(forbidden_modules))
    assert not {(m, q) for m, q, _ in ours} & set(forbidden_functions)
    # each function once: no twin specialisations for other argument types
    names = [(m, q) for m, q, _ in ours]
    twins = sorted({n for n in names if names.count(n) > 1})
    assert not twins or case.startswith("svm"), [(n, [a for m, q, a in ours if (m, q) == n]) for n in twins]
    # no specialisation for a constant argument value
    literal = [(m, q, a) for m, q, a in ours if "Literal[" in a]
    assert not literal, literal
    # every solver entry of the coordinate-descent family was specialised for one problem kind
    kinds = {a.split(",")[0] for m, q, a in ours if q in ("_path_core", "_solve_set", "_null_fit")}
    assert len(kinds) == (1 if "clearn" in case else 0), kinds
    if case == "binary linear clearn":
        assert len(set(names)) <= 30, sorted(set(names))
        # functions that only jitted code calls are linked into their callers: no cache files
        files = sum(f.endswith(".nbi") for _, _, fs in os.walk(tmp_path / "cache") for f in fs)
        assert 0 < files < len(set(names)), files


def test_jitted_code_uses_the_package_decorators():
    """Every jitted function of cohstats is made by ``cohstats._numba_cache.njit`` or
    ``internal`` (one specialisation per argument types), none by numba's own ``njit``."""
    import cohstats
    from cohstats import _numba_cache

    root = os.path.dirname(cohstats.__file__)
    direct = []
    for dirpath, _, files in os.walk(root):
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(dirpath, name)
                with open(path, encoding="utf-8") as fh:
                    text = fh.read()
                if re.search(r"^\s*from numba import[^\n]*\bn?jit\b", text, re.MULTILINE):
                    direct.append(os.path.relpath(path, root))
    assert not direct, direct
    funcs = _numba_cache.jitted_functions()
    assert len(funcs) > 200
    wrong = [name for name, d in funcs if type(d).__module__ != _numba_cache.__name__]
    assert not wrong, wrong[:10]


def test_package_decorators_use_numpy_division():
    """Division follows numpy's error model: no zero test (and raise path) before each division;
    ``x / 0`` is inf or nan, as numpy gives it, and integer division by zero gives 0."""
    from cohstats._numba_cache import internal, njit

    @internal(cache=False)
    def _ratio(a, b):
        return a / b

    @njit(cache=False)
    def ratio(a, b, i, j):
        return _ratio(a, b), i // j

    r, q = ratio(1.0, 0.0, 7, 0)
    assert r == math.inf and q == 0
    assert math.isnan(ratio(0.0, 0.0, 1, 1)[0])
    assert ratio(-3.0, 0.0, 1, 1)[0] == -math.inf
    assert ratio.targetoptions["error_model"] == "numpy"


def test_internal_functions_are_compiled_into_their_callers_only():
    """A function that only jitted code calls (``internal``) is lowered and linked into its
    callers, never turned into machine code or cached on its own; its callers compute with it
    as with any other jitted function, also through two levels and for arrays."""
    import numpy as np

    from cohstats import _numba_cache
    from cohstats._numba_cache import internal, njit

    assert _numba_cache._link_only_compiler() is not None, "numba's compiler internals moved"

    @internal
    def _dot(x, y):
        s = 0.0
        for i in range(x.shape[0]):
            s += x[i] * y[i]
        return s

    @internal
    def _norm2(x):
        return _dot(x, x)

    @njit(cache=False)
    def both(x, y):
        return _norm2(x), _dot(x, y)

    rng = np.random.default_rng(3)
    x, y = rng.standard_normal(17), rng.standard_normal(17)
    n2, d = both(x, y)
    assert n2 == pytest.approx(x @ x, rel=1e-14) and d == pytest.approx(x @ y, rel=1e-14)
    for disp in (_dot, _norm2):
        (cres,) = disp.overloads.values()
        assert type(cres.library).__name__ == "LinkOnlyLibrary"
        assert cres.library._finalized and cres.library.get_pointer_to_function("anything") == 0
        assert type(disp._cache).__name__ == "NullCache"  # nothing of its own to cache
    with pytest.raises(TypeError, match="without a Python entry point"):
        _dot(x, y)


def test_functions_without_reference_counting_may_not_return_arrays():
    """``_nrt=False`` compiles no reference-count updates: reading and slicing arrays (also
    through NamedTuples and into counted callees) gives the same numbers, and returning an
    array, which its caller would free while still owned elsewhere, is refused."""
    from collections import namedtuple

    import numpy as np

    from cohstats._numba_cache import internal, njit

    Pair = namedtuple("Pair", "a b")

    @internal
    def _sum(x):  # reference counted, allocates
        t = np.zeros(1)
        for v in x:
            t[0] += v
        return t[0]

    @njit(cache=False, _nrt=False)
    def uncounted(p, n):
        return _sum(p.a[:n]) + _sum(p.b[n:])

    rng = np.random.default_rng(5)
    p = Pair(rng.standard_normal(9), rng.standard_normal(9))
    assert uncounted(p, 4) == pytest.approx(p.a[:4].sum() + p.b[4:].sum(), rel=1e-14)
    assert uncounted.targetoptions["_nrt"] is False and _sum.targetoptions["_nrt"] is True

    @njit(cache=False, _nrt=False)
    def returns_its_argument(x):  # numba itself refuses new arrays and views
        return x

    with pytest.raises(TypeError, match="must not return arrays"):
        returns_its_argument(p.a)
