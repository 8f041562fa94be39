"""The registered fidelity subset: tables scored at the papers' replication counts, fixed before
their runs.

``vignettes/registered.toml`` names the registered tables (published source, quantity, a regular
expression on the cells, the paper's replication count, the vignette and the keyword arguments of
its full-protocol run), the tables left out for their cost, and whole groups excluded with
evidence checkable outside the package. This module runs a registered table
(:func:`run_registered`), and builds the registered fidelity table from the runs
(:func:`registered_table`, :func:`write_registered`): one row per registered cell with the columns
:data:`COLUMNS`.

Scoring is :func:`cohstats.vignettes.report.compare_table`'s: ``se_used`` is the denominator of
``z`` (the published SE and our SE floored at the paper's per-replication spread over
``sqrt(reps)``), ``z = (ours - published) / se_used``, MATCH ``|z| <= 2``, CLOSE ``|z| <= 3``,
OFF otherwise. A cell is scored when it is registered, not in an excluded group and computed
with ``reps >= reps_paper``. The cause of a CLOSE or OFF cell comes from
``fidelity_notes.json`` (:data:`cohstats.vignettes.fidelity.CAUSES`); a cell no entry explains
is ``"open"``.

Command line::

    python -m cohstats.vignettes.fidelity_registered run NAME --out DIR [--n-jobs J] [--scheduler ADDR]
    python -m cohstats.vignettes.fidelity_registered table [--registration FILE] [--results DIR] [--to CSV]

Examples
--------
>>> reg = read_registration()
>>> sorted(t["name"] for t in reg["table"])[:2]
['lzw_table2', 'wsl_table5']
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

__all__ = [
    "COLUMNS",
    "REGISTRATION",
    "read_registration",
    "run_registered",
    "registered_table",
    "registered_summary",
    "write_registered",
    "main",
]

#: Columns of ``vignettes/fidelity_registered.csv``, in order.
COLUMNS = [
    "paper",
    "table",
    "cell",
    "ours",
    "ours_se",
    "published",
    "published_se",
    "se_used",
    "z",
    "verdict",
    "reps",
    "reps_paper",
    "excluded",
    "cause",
]

#: The registration file of the repository (``vignettes/registered.toml``), relative to the
#: repository's top folder.
REGISTRATION = Path("vignettes") / "registered.toml"


def _repo_root() -> Path:
    return Path(__file__).resolve().parents[2]


def _as_list(v) -> list:
    return list(v) if isinstance(v, (list, tuple)) else [v]


def read_registration(path=None) -> dict:
    """The registration file parsed, with each entry's ``source`` made a list.

    Raises ValueError naming the file and the entry when a registered table lacks a key the
    runs and the table need."""
    try:
        import tomllib
    except ImportError:  # pragma: no cover - Python 3.10
        import tomli as tomllib

    path = Path(path) if path is not None else _repo_root() / REGISTRATION
    try:
        reg = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ValueError(f"registration file {str(path)!r} cannot be read as TOML: {e}") from None
    need = ("name", "source", "quantity", "cells", "reps_paper", "reps", "vignette", "kwargs")
    names = set()
    for t in reg.get("table", []):
        missing = [k for k in need if k not in t]
        if missing:
            raise ValueError(f"registration file {str(path)!r}: table {t.get('name', t)!r} lacks {missing}")
        if t["name"] in names:
            raise ValueError(f"registration file {str(path)!r}: table name {t['name']!r} appears twice")
        names.add(t["name"])
        t["source"] = _as_list(t["source"])
    for key in ("excluded", "not_registered"):
        for e in reg.get(key, []):
            e["source"] = _as_list(e["source"])
    return reg


def _table_entry(reg: dict, name: str) -> dict:
    for t in reg.get("table", []):
        if t["name"] == name:
            return t
    known = ", ".join(t["name"] for t in reg.get("table", []))
    raise ValueError(f"no registered table named {name!r}; registered: {known}")


def run_registered(name: str, out, n_jobs: int | None = None, scheduler=None, registration=None) -> Path:
    """Run the registered table ``name`` at its registered protocol into ``out``; return ``out``.

    Calls the vignette's ``run(reps, out / vignette, seed, n_jobs, **kwargs)`` with the
    registration's replications, seed and keyword arguments (under
    :func:`cohstats.tuning.parallel.scheduler_backend` when ``scheduler`` is given) and writes
    ``out/run_info.json``: the runner's fields plus the registered table, the keyword arguments,
    and the wall-clock and CPU seconds of this process (joblib workers' CPU is not included when
    ``n_jobs > 1``; ``cpu_seconds_children`` adds what finished child processes used).
    """
    import importlib
    import os

    from cohstats.tuning.parallel import scheduler_backend

    from .runner import _git_commit, _write_run_info

    reg = read_registration(registration)
    t = _table_entry(reg, name)
    seed = int(reg.get("rules", {}).get("seed", 0))
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    commit = _git_commit()
    mod = importlib.import_module(f"cohstats.vignettes.{t['vignette']}")
    kwargs = dict(t["kwargs"])
    quick = bool(kwargs.pop("quick", True))
    w0, c0, ch0 = time.time(), time.process_time(), os.times()
    with scheduler_backend(scheduler):
        mod.run(
            reps=int(t["reps"]),
            out=out / t["vignette"],
            seed=seed,
            n_jobs=-1 if scheduler is not None and n_jobs is None else n_jobs,
            quick=quick,
            **kwargs,
        )
    ch1 = os.times()
    settings = {
        "reps": int(t["reps"]),
        "reps_paper": int(t["reps_paper"]),
        "seed": seed,
        "n_jobs": n_jobs,
        "scheduler": scheduler or "none (joblib)",
        "quick": quick,
        "registered table": name,
        "kwargs": json.dumps(t["kwargs"], sort_keys=True),
        "seconds": round(time.time() - w0, 1),
        "cpu_seconds": round(time.process_time() - c0, 1),
        "cpu_seconds_children": round(
            (ch1.children_user - ch0.children_user) + (ch1.children_system - ch0.children_system), 1
        ),
    }
    _write_run_info(out, settings, [t["vignette"]], commit)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """``run NAME --out DIR`` or ``table [--registration FILE] [--results DIR] [--to CSV]``."""
    ap = argparse.ArgumentParser(
        prog="python -m cohstats.vignettes.fidelity_registered",
        description="Run a registered table, or build the registered fidelity table.",
    )
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="run one registered table at its registered protocol")
    r.add_argument("name")
    r.add_argument("--out", required=True)
    r.add_argument("--n-jobs", type=int, default=None, dest="n_jobs")
    r.add_argument("--scheduler", default=None, help="Dask scheduler address (tcp://host:port)")
    r.add_argument("--registration", default=None)
    a = ap.parse_args(argv)
    try:
        if a.cmd == "run":
            print(run_registered(a.name, a.out, n_jobs=a.n_jobs, scheduler=a.scheduler, registration=a.registration))
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
