"""Discover and run vignette modules; write an index linking every report.

A vignette is any module in :mod:`cohstats.vignettes` (or in a directory passed with
``--path``) that defines ``run(reps, out, seed=0, n_jobs=None, quick=True) -> Path``. Optional
module attributes: ``DEFAULT_REPS`` (used when ``--reps`` is not given; 2 otherwise),
``FULL_REPS`` (used with ``--full`` when ``--reps`` is not given) and ``TITLE``.

Command line (``python -m cohstats.vignettes``)::

    python -m cohstats.vignettes [name ...] --reps N --out DIR [--seed S] [--n-jobs J] [--full]
    python -m cohstats.vignettes --list
    python -m cohstats.vignettes --fidelity --out DIR   # the fidelity table of a finished run

A run also writes ``<out>/run_info.json`` (date, cohstats version and commit when known,
machine, settings), which the fidelity table quotes.

Examples
--------
>>> import tempfile
>>> idx = run_vignettes(["loss_figures"], reps=1, out=tempfile.mkdtemp(), verbose=False)
>>> idx.name
'index.md'
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import inspect
import pkgutil
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Callable, Sequence

import pandas as pd

from cohstats.tuning.parallel import scheduler_backend

__all__ = ["discover", "run_vignettes", "main", "vignette_main"]

_NOT_VIGNETTES = {"report", "runner", "fidelity", "__main__"}


@dataclass
class _Result:
    name: str
    status: str
    seconds: float
    path: Path | None
    error: str = ""


def _is_vignette(mod: ModuleType) -> bool:
    run = getattr(mod, "run", None)
    if not callable(run):
        return False
    params = inspect.signature(run).parameters
    return {"reps", "out"} <= set(params)


def discover(paths: Sequence[str | Path] = (), errors: dict | None = None) -> dict[str, ModuleType]:
    """Vignette modules by name: those of ``cohstats.vignettes`` plus any in ``paths``.

    A module that fails to import is left out; pass a dict as ``errors`` to receive
    ``name -> traceback`` for those (the runner reports them as failed vignettes).

    Examples
    --------
    >>> "loss_figures" in discover()
    True
    """
    import cohstats.vignettes as pkg

    found: dict[str, ModuleType] = {}
    errors = {} if errors is None else errors
    for info in pkgutil.iter_modules(pkg.__path__):
        if info.name in _NOT_VIGNETTES or info.name.startswith("_"):
            continue
        try:
            mod = importlib.import_module(f"{pkg.__name__}.{info.name}")
        except Exception:  # noqa: BLE001 - reported by the runner
            errors[info.name] = traceback.format_exc()
            continue
        if _is_vignette(mod):
            found[info.name] = mod
    for d in paths:
        d = Path(d)
        if not d.is_dir():
            raise ValueError(f"path {str(d)!r} is not a directory")
        for f in sorted(d.glob("*.py")):
            if f.stem.startswith("_"):
                continue
            spec = importlib.util.spec_from_file_location(f"_cohstats_vignette_{f.stem}", f)
            mod = importlib.util.module_from_spec(spec)
            try:
                spec.loader.exec_module(mod)
            except Exception:  # noqa: BLE001
                errors[f.stem] = traceback.format_exc()
                continue
            if _is_vignette(mod):
                found[f.stem] = mod
    return found


def _index(results: list[_Result], out: Path, settings: dict) -> Path:
    rows = []
    for r in results:
        link = f"[{r.path.name}]({r.path.relative_to(out).as_posix()})" if r.path else ""
        rows.append(
            {
                "vignette": r.name,
                "status": r.status,
                "seconds": round(r.seconds, 1),
                "report": link,
                "error": r.error.splitlines()[-1] if r.error else "",
            }
        )
    from .report import markdown_table

    lines = [
        "# cohstats vignette reports",
        "",
        "Each report puts our numbers beside the published ones; see "
        "`vignettes/README.md` for what every vignette reproduces.",
        "",
        "Settings: " + ", ".join(f"{k} = {v}" for k, v in settings.items()),
        "",
        markdown_table(pd.DataFrame(rows), floatfmt=".1f"),
    ]
    for r in results:
        if r.error:
            lines += ["", f"## {r.name}: error", "", "```", r.error.rstrip(), "```"]
    path = out / "index.md"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _git_commit() -> str:
    """The commit of the source tree cohstats is imported from, or "" outside a checkout."""
    import subprocess

    import cohstats

    where = Path(cohstats.__file__).parent
    try:
        res = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=10, cwd=where, check=False
        )
        if res.returncode != 0:
            return ""
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no", "."],
            capture_output=True,
            text=True,
            timeout=10,
            cwd=where,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return res.stdout.strip() + (" (with uncommitted changes)" if dirty.stdout.strip() else "")


def _write_run_info(out: Path, settings: dict, names, commit: str = "") -> Path:
    import datetime as dt
    import json
    import os
    import platform

    import cohstats

    info = {
        "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "cohstats": cohstats.__version__,
        "commit": commit or "unknown",
        "machine": f"{platform.system()} {platform.machine()}, {os.cpu_count()} cores",
        "protocol": "quick" if settings.get("quick") else "full",
        **{k: v for k, v in settings.items() if k != "quick"},
        "vignettes": ", ".join(names),
    }
    path = out / "run_info.json"
    path.write_text(json.dumps(info, indent=1, default=str) + "\n", encoding="utf-8")
    return path


def run_vignettes(
    names: Sequence[str] | None = None,
    reps: int | None = None,
    out="vignette_reports",
    seed: int = 0,
    n_jobs: int | None = None,
    quick: bool = True,
    paths: Sequence[str | Path] = (),
    verbose: bool = True,
    scheduler=None,
) -> Path:
    """Run vignettes (all when ``names`` is empty) and write ``<out>/index.md``.

    Each vignette writes its report into ``<out>/<name>/``. A failing vignette is reported
    in the index with its traceback and does not stop the others.

    ``scheduler``: a ``dask.distributed`` Client or a scheduler address (``"tcp://host:8786"``,
    ``--scheduler`` on the command line). The vignettes' joblib work (replications, and the
    tuners inside them) then runs on that Dask cluster, with ``n_jobs=-1`` unless given; the
    results are those of the serial run (every replication draws from its own seeded stream).

    Returns
    -------
    Path of ``index.md``.
    """
    import_errors: dict[str, str] = {}
    commit = _git_commit()  # the code the vignettes are imported from, at the start
    mods = discover(paths, errors=import_errors)
    if not names:
        names = sorted(set(mods) | set(import_errors))
    unknown = [n for n in names if n not in mods and n not in import_errors]
    if unknown:
        raise ValueError(f"unknown vignette(s) {unknown}; available: {', '.join(sorted(mods)) or 'none'}")
    if reps is not None and (isinstance(reps, bool) or int(reps) != reps or reps < 1):
        raise ValueError(f"reps must be a positive integer; got {reps!r}")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    results = []
    used_reps: dict = {}  # the replications each vignette ran with (recorded in run_info.json)
    for i, name in enumerate(names, 1):
        if name in import_errors:
            results.append(_Result(name, "failed", 0.0, None, import_errors[name]))
            if verbose:
                print(f"[{i}/{len(names)}] {name}: import failed", flush=True)
                print(import_errors[name], file=sys.stderr)
            continue
        mod = mods[name]
        r = reps if reps is not None else getattr(mod, "FULL_REPS" if not quick else "DEFAULT_REPS", 2)
        used_reps[name] = r
        if verbose:
            print(f"[{i}/{len(names)}] {name}: reps={r} seed={seed} quick={quick} ...", flush=True)
        t = time.perf_counter()
        try:
            with scheduler_backend(scheduler):
                path = mod.run(
                    reps=r,
                    out=out / name,
                    seed=seed,
                    n_jobs=-1 if scheduler is not None and n_jobs is None else n_jobs,
                    quick=quick,
                )
            path = Path(path) if path is not None else None
            res = _Result(name, "ok", time.perf_counter() - t, path)
        except Exception:  # noqa: BLE001 - reported in the index, the others go on
            res = _Result(name, "failed", time.perf_counter() - t, None, traceback.format_exc())
        results.append(res)
        if verbose:
            print(f"    {res.status} in {res.seconds:.1f} s" + (f" -> {res.path}" if res.path else ""), flush=True)
            if res.error:
                print(res.error, file=sys.stderr)
    if reps is not None:
        rep_text = reps
    else:  # the module defaults, resolved: e.g. "module default (zdj_clearn: 20)"
        rep_text = "module default (" + ", ".join(f"{k}: {v}" for k, v in used_reps.items()) + ")"
    settings = {"reps": rep_text, "seed": seed, "n_jobs": n_jobs, "quick": quick}
    idx = _index(results, out, settings)
    _write_run_info(out, settings, [r.name for r in results], commit)
    if verbose:
        print(f"index: {idx}")
    return idx


def _parser(prog="python -m cohstats.vignettes", single: str | None = None):
    ap = argparse.ArgumentParser(prog=prog, description="Run cohstats vignettes and write reports.")
    if single is None:
        ap.add_argument("names", nargs="*", help="vignettes to run (default: all)")
        ap.add_argument("--list", action="store_true", help="list the vignettes and exit")
        ap.add_argument(
            "--fidelity", action="store_true", help="build the fidelity table of the run in --out (runs nothing)"
        )
        ap.add_argument(
            "--path", action="append", default=[], help="extra directory with vignette modules (repeatable)"
        )
    ap.add_argument("--reps", type=int, default=None, help="replications (default: per vignette)")
    ap.add_argument("--out", default="vignette_reports", help="output directory")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--n-jobs", type=int, default=None, dest="n_jobs")
    ap.add_argument(
        "--scheduler", default=None, help="Dask scheduler address (tcp://host:port): run the replications there"
    )
    ap.add_argument("--full", action="store_true", help="paper-size settings (quick=False; FULL_REPS unless --reps)")
    return ap


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; returns the exit status (1 if any vignette failed)."""
    a = _parser().parse_args(argv)
    if a.list:
        errs: dict[str, str] = {}
        for name, mod in sorted(discover(a.path, errors=errs).items()):
            doc = (mod.__doc__ or "").strip().splitlines()
            print(f"{name:24s} {doc[0] if doc else ''}")
        for name, tb in sorted(errs.items()):
            print(f"{name:24s} (import failed: {tb.strip().splitlines()[-1]})")
        return 0
    if a.fidelity:
        from .fidelity import main as fidelity_main

        if a.names:
            print("error: --fidelity reads a finished run; give no vignette names", file=sys.stderr)
            return 2
        return fidelity_main([a.out])
    try:
        idx = run_vignettes(
            a.names,
            reps=a.reps,
            out=a.out,
            seed=a.seed,
            n_jobs=a.n_jobs,
            quick=not a.full,
            paths=a.path,
            scheduler=a.scheduler,
        )
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 1 if "| failed |" in idx.read_text() else 0


def vignette_main(
    run: Callable, argv: Sequence[str] | None = None, name: str = "vignette", default_reps: int = 2
) -> Path:
    """``main()`` for one vignette module: parse ``--reps --out --seed --n-jobs --full``, run it.

    A vignette module writes ``def main(argv=None): return vignette_main(run, argv, "name")``.
    """
    a = _parser(prog=name, single=name).parse_args(argv)
    reps = a.reps if a.reps is not None else default_reps
    n_jobs = -1 if a.scheduler is not None and a.n_jobs is None else a.n_jobs
    with scheduler_backend(a.scheduler):
        path = run(reps=reps, out=Path(a.out) / name, seed=a.seed, n_jobs=n_jobs, quick=not a.full)
    print(path)
    return path
