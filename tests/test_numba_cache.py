"""The numba cache guard: compiled code follows source edits, also across modules.

numba's own cache checks only the file of the function it compiled; cohstats keys its cache by
a hash of all jitted sources (``cohstats._numba_cache``). The edit-and-rerun test reproduces
the stale-cache experiment: edit the hinge loss in ``losses/scalar.py`` of a copy of the
package and check that ``get_loss("hinge").value(0.5)`` (compiled in ``losses/binary.py``)
returns the new value in a fresh process.
"""

import os
import shutil
import subprocess
import sys
import warnings

import pytest

import cohstats
from cohstats import _numba_cache as nc

PKG = os.path.dirname(os.path.abspath(cohstats.__file__))
HINGE_OLD = "    elif code == LOSS_HINGE:\n        return max(1.0 - z, 0.0)"
HINGE_NEW = "    elif code == LOSS_HINGE:\n        return max(2.0 - z, 0.0)"


def _copy_package(tmp_path):
    root = tmp_path / "src"
    shutil.copytree(
        PKG, root / "cohstats", ignore=shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc", "data", "datasets")
    )
    return root


def _edit(path, old, new):
    text = path.read_text()
    assert text.count(old) == 1, f"{old!r} not found exactly once in {path}"
    path.write_text(text.replace(old, new))


_PROBE = """
import cohstats
from cohstats.losses import get_loss, scalar
print(cohstats.__file__)
print(repr(get_loss("hinge").value(0.5)), repr(scalar.loss_value(scalar.LOSS_HINGE, 0.5, 0.0, 0.0)))
"""


def _probe(src, cache, quiet=False):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "COHSTATS_"))}
    env.update(PYTHONPATH=str(src), COHSTATS_NUMBA_CACHE_DIR=str(cache), PYTHONDONTWRITEBYTECODE="1")
    if quiet:
        env["COHSTATS_QUIET"] = "1"
    res = subprocess.run(
        [sys.executable, "-c", _PROBE], cwd=str(src), env=env, capture_output=True, text=True, timeout=300, check=False
    )
    assert res.returncode == 0, res.stderr
    path, values = res.stdout.strip().splitlines()[-2:]
    assert path.startswith(str(src)), path  # the copy was imported, not the installed package
    binary, scalar = (float(v) for v in values.split())
    return binary, scalar, res.stderr


def test_edit_in_imported_module_is_seen_by_a_fresh_process(tmp_path):
    src = _copy_package(tmp_path)
    cache = tmp_path / "cache"
    # closed form of the hinge loss [1 - z]_+ at z = 0.5
    binary, scalar, err = _probe(src, cache)
    assert (binary, scalar) == (0.5, 0.5)
    assert err.count("cohstats: compiling") == 1  # the one-line notice on the compiling run
    folders = os.listdir(cache)
    assert len(folders) == 1
    # second run loads from the cache: same value, nothing compiled, nothing printed
    binary, scalar, err = _probe(src, cache)
    assert (binary, scalar) == (0.5, 0.5)
    assert "compiling" not in err
    assert os.listdir(cache) == folders

    # the edit is in scalar.py; the compiled loop that calls it lives in binary.py
    _edit(src / "cohstats" / "losses" / "scalar.py", HINGE_OLD, HINGE_NEW)
    binary, scalar, err = _probe(src, cache, quiet=True)
    assert (binary, scalar) == (1.5, 1.5)  # [2 - z]_+ at z = 0.5
    assert err == ""  # COHSTATS_QUIET silences the notice
    # the new sources compile into a folder of their own hash; the old one stays for other
    # installations of the old sources (pruned by age and count, see the test below)
    new = set(os.listdir(cache))
    assert len(new) == 2 and set(folders) < new


def test_a_clone_in_another_folder_compiles_nothing(tmp_path):
    """Two copies of the same sources, with new modification times, in different folders and
    with the default (per-user) cache location: the second loads what the first compiled."""
    first = _copy_package(tmp_path / "first")
    second = _copy_package(tmp_path / "second")
    later = os.stat(first / "cohstats" / "losses" / "scalar.py").st_mtime + 100.0
    for path in (second / "cohstats").rglob("*.py"):
        os.utime(path, (later, later))  # a fresh clone: same contents, other times
    home = tmp_path / "xdg"

    def run(src):
        env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "COHSTATS_"))}
        env.update(PYTHONPATH=str(src), XDG_CACHE_HOME=str(home), PYTHONDONTWRITEBYTECODE="1")
        code = (
            "import numba.core.event as ev\n"
            "n = []\n"
            "class L(ev.Listener):\n"
            "    def on_start(self, e): n.append(e.data['dispatcher'].py_func.__qualname__)\n"
            "    def on_end(self, e): pass\n"
            "ev.register('numba:compile', L())\n"
            "import cohstats\n"
            "from cohstats.losses import scalar\n"
            "from cohstats import _numba_cache as nc\n"
            "print(cohstats.__file__); print(nc.cache_dir())\n"
            "print(repr(scalar.loss_value(scalar.LOSS_C, 0.5, 1.0, 1.0))); print(len(n))\n"
        )
        res = subprocess.run(
            [sys.executable, "-c", code], cwd=str(src), env=env, capture_output=True, text=True, timeout=300
        )
        assert res.returncode == 0, res.stderr
        path, cache, value, compiled = res.stdout.strip().splitlines()[-4:]
        assert path.startswith(str(src))
        return cache, float(value), int(compiled)

    cache1, v1, n1 = run(first)
    cache2, v2, n2 = run(second)
    assert cache1 == cache2 and cache1.startswith(str(home / "cohstats" / "numba"))
    assert n1 > 0 and n2 == 0  # the clone compiled nothing
    assert v1 == v2 == scalar_c_loss(0.5, 1.0, 1.0)


def test_a_warm_process_loads_without_the_compiler_registries(tmp_path):
    """A process that only loads compiled code skips numba's registry refresh (its imports of
    every implementation module), and fits the same numbers as the process that compiled."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "COHSTATS_"))}
    env.update(COHSTATS_NUMBA_CACHE_DIR=str(tmp_path / "cache"), COHSTATS_QUIET="1")
    code = (
        "import sys, numpy as np, pandas as pd\n"
        "import cohstats as cs\n"
        "rng = np.random.default_rng(1)\n"
        "X = rng.standard_normal((80, 3))\n"
        "df = pd.DataFrame(X, columns=['a', 'b', 'c'])\n"
        "df['y'] = np.where(X[:, 0] + rng.standard_normal(80) > 0, 'u', 'v')\n"
        "p = cs.clearn('y ~ .', data=df).predict(df, type='prob')\n"
        "print(repr(float(np.asarray(p, dtype=float).sum())))\n"
        "print('numba.np.linalg' in sys.modules)\n"
    )

    def run():
        res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
        assert res.returncode == 0, res.stderr[-3000:]
        total, registries = res.stdout.strip().splitlines()[-2:]
        return float(total), registries == "True"

    cold, cold_registries = run()
    warm, warm_registries = run()
    assert cold_registries and not warm_registries
    assert warm == pytest.approx(cold, rel=1e-12)


def scalar_c_loss(z, rho, u):
    """The C-loss u V(z)/V(0) of [ZDJ] in closed form, V(z) = rho log(1 + exp((u - z)/rho))."""
    import math

    return u * rho * math.log1p(math.exp((u - z) / rho)) / (rho * math.log1p(math.exp(u / rho)))


# ------------------------------------------------------------------ hashing and placement
@pytest.fixture
def pkg_copy(tmp_path):
    return _copy_package(tmp_path) / "cohstats"


def test_hash_follows_jitted_sources_only(pkg_copy):
    base = nc.source_hash(str(pkg_copy))
    assert base == nc.source_hash(str(pkg_copy))  # deterministic
    files = {os.path.relpath(f, pkg_copy).replace(os.sep, "/") for f in nc.source_files(str(pkg_copy))}
    assert {
        "losses/scalar.py",
        "losses/binary.py",
        "solvers/cd/path.py",
        "kernels.py",
        "exceptions.py",
    } <= files  # exceptions.py: imported by a jitted module
    assert not any(f.startswith(("models/", "vignettes/")) for f in files)

    # unrelated edits keep the hash
    vignette = next(pkg_copy.joinpath("vignettes").rglob("*.py"))
    vignette.write_text(vignette.read_text() + "\n# edited\n")
    (pkg_copy / "models" / "clearn.py").write_text((pkg_copy / "models" / "clearn.py").read_text() + "\n")
    assert nc.source_hash(str(pkg_copy)) == base

    # an edit of a jitted source changes it
    _edit(pkg_copy / "losses" / "scalar.py", HINGE_OLD, HINGE_NEW)
    edited = nc.source_hash(str(pkg_copy))
    assert edited != base
    # so does an edit of a plain module that a jitted module imports
    (pkg_copy / "exceptions.py").write_text((pkg_copy / "exceptions.py").read_text() + "\n# x\n")
    assert nc.source_hash(str(pkg_copy)) != edited


def test_a_new_module_importing_numba_is_hashed_with_its_imports(pkg_copy):
    (pkg_copy / "models" / "fastpart.py").write_text("from numba import njit\nfrom ..formula import build_design\n")
    files = {os.path.relpath(f, pkg_copy).replace(os.sep, "/") for f in nc.source_files(str(pkg_copy))}
    assert {"models/fastpart.py", "formula.py"} <= files


def test_every_cached_cohstats_function_uses_the_guarded_folder():
    from numba.core.caching import NullCache

    funcs = nc.jitted_functions()
    cached = [(name, d) for name, d in funcs if not isinstance(d._cache, NullCache)]
    assert len(cached) > 100
    for name, disp in cached:
        locator = disp._cache._impl.locator
        assert type(locator).__name__ == "CohstatsCacheLocator", name
        assert locator.get_cache_path().startswith(nc.cache_dir()), name


def test_numba_functions_of_other_packages_are_left_alone(tmp_path):
    import importlib.util

    from numba import njit

    src = tmp_path / "userfunc.py"
    src.write_text("def f(x):\n    return x + 1\n")
    spec = importlib.util.spec_from_file_location("userfunc", src)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    disp = njit(cache=True)(mod.f)
    assert type(disp._cache._impl.locator).__name__ != "CohstatsCacheLocator"


def test_unwritable_choice_falls_back_with_a_warning(pkg_copy, tmp_path, monkeypatch):
    from numba.core import config

    blocker = tmp_path / "a_file"
    blocker.write_text("not a directory")
    monkeypatch.setenv(nc.ENV_DIR, str(blocker))
    monkeypatch.setattr(config, "CACHE_DIR", "")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    with pytest.warns(RuntimeWarning, match="not writable"):
        path = nc._resolve(str(pkg_copy))
    assert path == str(tmp_path / "xdg" / "cohstats" / "numba" / nc.source_hash(str(pkg_copy)))
    assert os.path.isdir(path)


def test_numba_cache_dir_is_respected_and_other_hashes_pruned(pkg_copy, tmp_path, monkeypatch):
    from numba.core import config

    user = tmp_path / "numba_cache"
    monkeypatch.delenv(nc.ENV_DIR, raising=False)
    monkeypatch.setattr(config, "CACHE_DIR", str(user))
    first = nc._resolve(str(pkg_copy))
    assert first == str(user / "cohstats" / nc.source_hash(str(pkg_copy)))
    root = user / "cohstats"
    now = os.stat(first).st_mtime
    # other keys: recently used ones (newest first), an abandoned one, an older version's name
    recent = []
    for i in range(nc.KEEP + 1):
        d = root / f"{i:016x}"
        d.mkdir()
        os.utime(d, (now - 60.0 * (i + 1), now - 60.0 * (i + 1)))
        recent.append(d)
    abandoned = root / "abcdefabcdefabcd"
    abandoned.mkdir()
    old = now - (nc.STALE_DAYS + 1) * 86400.0
    os.utime(abandoned, (old, old))
    tagged = root / "eeeeeeee-0123456789abcdef"
    tagged.mkdir()
    os.utime(tagged, (old, old))
    foreign = root / "not-ours"
    foreign.mkdir()

    _edit(pkg_copy / "losses" / "scalar.py", HINGE_OLD, HINGE_NEW)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        second = nc._resolve(str(pkg_copy))
    assert second != first and os.path.dirname(second) == str(root)
    # the new folder, the first one and the next most recently used make KEEP folders in all
    assert os.path.isdir(first)
    assert [d.is_dir() for d in recent] == [True] * (nc.KEEP - 2) + [False] * 3
    assert not abandoned.exists() and not tagged.exists()  # unused for STALE_DAYS
    assert foreign.is_dir()  # names that are not cache keys are never touched


def test_quiet_switch(monkeypatch):
    for value, expected in [("1", True), ("yes", True), ("0", False), ("", False)]:
        monkeypatch.setenv(nc.ENV_QUIET, value)
        assert nc.quiet() is expected
    monkeypatch.delenv(nc.ENV_QUIET)
    assert nc.quiet() is False


# ------------------------------------------------------------------ python -m cohstats warmup
def test_warmup_reports_each_family_and_failures(monkeypatch, capsys):
    from cohstats import __main__ as cli

    def boom():
        raise ValueError("bad argument x")

    seen = []
    runs = [("first family", [("ok", lambda: seen.append(nc.quiet()))]), ("broken family", [("boom", boom)])]
    monkeypatch.setattr(cli, "_warmup_runs", lambda: runs)
    monkeypatch.setenv(nc.ENV_QUIET, "0")
    assert cli.main(["warmup"]) == 1  # a failing fit is reported, not swallowed
    assert seen == [True]  # the compile notice is off while warmup runs ...
    assert os.environ[nc.ENV_QUIET] == "0"  # ... and the caller's setting is restored
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert lines[0] == f"cohstats warmup: numba cache in {nc.cache_dir()}"
    assert any(ln.split()[:2] == ["first", "family"] and ln.endswith(" s") for ln in lines)
    assert "failed -- boom: ValueError: bad argument x" in err
    assert "numba functions are in the cache" in lines[-1]


@pytest.mark.slow
def test_warmup_compiles_every_family(capsys):
    from cohstats.__main__ import main

    assert main(["warmup", "-v"]) == 0
    out = capsys.readouterr().out
    for family in ("coordinate descent", "SVM", "trees and boosting"):
        assert family in out
    done = out.split("done in ")[1].split(":")[1].split()
    reached, total = int(done[0]), int(done[2])
    assert reached >= 0.85 * total
