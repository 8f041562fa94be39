"""The installed package carries the shipped data.

The repository keeps one copy of the data, in its top-level ``data/`` folder; the build maps it
into the wheel as ``cohstats/data``. These tests build the wheel (and the editable wheel) from
this checkout, install it into a fresh virtual environment and load every data set and every
reference table there, comparing each with the same table read from the checkout.

The fresh environment is created without pip and without packages; a ``.pth`` file appends this
interpreter's site directories (numpy, pandas, ...) *after* its own site-packages, so the
installed ``cohstats`` is the one imported and nothing large is reinstalled. The build uses the
hatchling of this environment when it is installed (the test extra lists it), otherwise pip's
isolated build fetches it from PyPI.
"""

from __future__ import annotations

import importlib.util
import json
import os
import site
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import pandas as pd
import pytest

from cohstats.datasets import DATASETS, list_datasets, list_reference, load, reference

REPO = Path(__file__).resolve().parents[1]


def _pip_version() -> tuple[int, ...]:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return tuple(int(x) for x in version("pip").split(".")[:2])
    except (PackageNotFoundError, ValueError):
        return (0,)


pytestmark = [
    pytest.mark.skipif(
        not (REPO / "pyproject.toml").is_file() or not (REPO / "data").is_dir(),
        reason="needs a source checkout (pyproject.toml and data/)",
    ),
    # `pip --python` installs into the fresh environment without putting pip there
    pytest.mark.skipif(_pip_version() < (22, 3), reason="needs pip >= 22.3 (pip --python)"),
]

# runs inside the fresh environment: where cohstats and its data come from, and a fingerprint of
# every data set and reference table
_PROBE = textwrap.dedent("""
    import json, sys
    import pandas as pd
    import cohstats
    from cohstats.datasets import list_datasets, list_reference, load, reference
    from cohstats.datasets.loaders import data_dir

    def fp(df):
        return [int(df.shape[0]), int(df.shape[1]), list(map(str, df.columns[:3])),
                int(pd.util.hash_pandas_object(df, index=True).sum() % (2**61 - 1))]

    out = {"cohstats": cohstats.__file__, "data_dir": str(data_dir()),
           "datasets": {n: fp(load(n)) for n in list_datasets()},
           "reference": {f"{p}/{t}": fp(reference(p, t)) for p, t in list_reference()}}
    json.dump(out, sys.stdout)
""")


def _fingerprint(df: pd.DataFrame) -> list:
    return [
        int(df.shape[0]),
        int(df.shape[1]),
        list(map(str, df.columns[:3])),
        int(pd.util.hash_pandas_object(df, index=True).sum() % (2**61 - 1)),
    ]


def _run(cmd, cwd, timeout=300):
    res = subprocess.run(
        cmd,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
    )
    assert res.returncode == 0, f"{' '.join(map(str, cmd))} failed:\n{res.stdout}\n{res.stderr}"
    return res.stdout


def _fresh_env(root: Path) -> Path:
    """A virtual environment with no packages whose sys.path ends with this interpreter's."""
    env = root / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(env)], cwd=root)
    py = env / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    purelib = Path(_run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], cwd=root).strip())
    host = [
        p
        for p in dict.fromkeys(
            [*site.getsitepackages(), sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]]
        )
        if Path(p).is_dir()
    ]
    purelib.mkdir(parents=True, exist_ok=True)
    (purelib / "zz_host_site.pth").write_text("\n".join(host) + "\n")
    return py


def _pip_install(py: Path, *args, cwd: Path):
    no_iso = ["--no-build-isolation"] if importlib.util.find_spec("hatchling") else []
    _run([sys.executable, "-m", "pip", "--python", str(py), "install", "--no-deps", *no_iso, *args], cwd=cwd)


def _probe(py: Path, cwd: Path) -> dict:
    script = cwd / "probe.py"
    script.write_text(_PROBE)
    return json.loads(_run([str(py), str(script)], cwd=cwd))


@pytest.fixture(scope="module")
def expected():
    return {
        "datasets": {n: _fingerprint(load(n)) for n in list_datasets()},
        "reference": {f"{p}/{t}": _fingerprint(reference(p, t)) for p, t in list_reference()},
    }


def test_wheel_carries_every_data_set(tmp_path, expected):
    dist = tmp_path / "dist"
    no_iso = ["--no-build-isolation"] if importlib.util.find_spec("hatchling") else []
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", *no_iso, "-w", str(dist), str(REPO)], cwd=tmp_path)
    wheels = sorted(dist.glob("cohstats-*.whl"))
    assert len(wheels) == 1, wheels
    import zipfile

    names = set(zipfile.ZipFile(wheels[0]).namelist())
    shipped = {
        p.relative_to(REPO).as_posix()
        for p in (REPO / "data").rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    assert {f"cohstats/{p}" for p in shipped} <= names  # every file, mapped into the package
    assert not any(n.startswith("data/") for n in names)  # and no second, top-level copy

    py = _fresh_env(tmp_path)
    _pip_install(py, "--no-index", str(wheels[0]), cwd=tmp_path)
    work = tmp_path / "elsewhere"
    work.mkdir()
    got = _probe(py, work)
    env_root = (tmp_path / "venv").resolve()
    pkg = Path(got["cohstats"]).resolve()
    assert env_root in pkg.parents, f"imported {pkg}, not the installed wheel"
    assert Path(got["data_dir"]).resolve() == pkg.parent / "data"
    assert sorted(got["datasets"]) == sorted(DATASETS)
    assert got["datasets"] == expected["datasets"]
    assert got["reference"] == expected["reference"]
    for name, (n, *_rest) in got["datasets"].items():
        assert n == DATASETS[name].n, name


def test_editable_install_reads_repository_data(tmp_path, expected):
    py = _fresh_env(tmp_path)
    _pip_install(py, "-e", str(REPO), cwd=tmp_path)
    work = tmp_path / "elsewhere"
    work.mkdir()
    got = _probe(py, work)
    assert Path(got["cohstats"]).resolve() == (REPO / "cohstats" / "__init__.py").resolve()
    assert Path(got["data_dir"]).resolve() == (REPO / "data").resolve()
    assert got["datasets"] == expected["datasets"]
    assert got["reference"] == expected["reference"]
