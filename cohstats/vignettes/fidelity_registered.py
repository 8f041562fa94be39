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
COLUMNS = (
    "paper table cell ours ours_se published published_se se_used z verdict reps reps_paper excluded cause"
).split()

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
    if n_jobs not in (None, 1) and scheduler is None:
        # reap joblib's reusable workers so that their CPU counts among the finished children
        from joblib.externals.loky import get_reusable_executor

        get_reusable_executor().shutdown(wait=True)
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


def _scored_mask(tab: pd.DataFrame) -> pd.Series:
    """Rows that count: not excluded and with a verdict MATCH, CLOSE or OFF."""
    excluded = tab["excluded"]
    return (excluded.isna() | excluded.astype(str).eq("")) & tab["verdict"].isin(["MATCH", "CLOSE", "OFF"])


def _cause_of(source: str, quantity: str, cell: str) -> tuple[str, str]:
    """``(kind, note)`` of the first :data:`cohstats.vignettes.fidelity.CAUSES` entry matching the
    cell, or ``("open", "")`` when none does."""
    from .fidelity import CAUSES

    for csrc, cq, pattern, text, kind in CAUSES:
        if source == csrc and quantity == cq and re.search(pattern, str(cell)):
            return kind, text
    return "open", ""


def _exclusion(reg: dict, source: str, quantity: str, cell: str) -> str:
    for e in reg.get("excluded", []):
        if source in e["source"] and quantity == e["quantity"] and re.search(e["cell"], str(cell)):
            return f"{e['kind']}: {e['evidence']}"
    return ""


def registered_table(registration=None, results=None) -> pd.DataFrame:
    """One row per registered cell (columns :data:`COLUMNS` and ``quantity``, ``note``).

    The published cells are those of :data:`cohstats.vignettes.fidelity.PUBLISHED` whose source,
    quantity and cell the registration names; ``results`` (default
    ``vignettes/results/registered``) holds one folder per registered table with the run's
    comparison files (``<name>/**/*_comparisons.csv``). ``ours``, ``ours_se`` and ``reps`` are the
    run's, ``se_used`` its ``se_combined``, ``z = (ours - published) / se_used`` recomputed and
    the verdict derived from it. ``excluded`` is empty for a scored cell; otherwise it says why
    (an excluded group of the registration with its evidence, a stand-in, replications below the
    paper's, or no number). ``cause`` is given for CLOSE and OFF cells (kind from
    ``fidelity_notes.json``, ``"open"`` when no entry matches).
    """
    from .fidelity import _published_cells, read_comparisons
    from .report import verdict

    reg = read_registration(registration)
    results = Path(results) if results is not None else _repo_root() / "vignettes" / "results" / "registered"
    pub = _published_cells()
    rows = []
    for t in reg.get("table", []):
        sel = pub[pub.source.isin(t["source"]) & (pub.quantity == t["quantity"])]
        sel = sel[[bool(re.search(t["cells"], str(c))) for c in sel.cell]]
        run_dir = results / t["name"]
        comp = read_comparisons(run_dir) if run_dir.is_dir() else pd.DataFrame()
        if len(comp):
            comp = comp.drop_duplicates(["source", "quantity", "published_cell"], keep="first")
            comp = comp.set_index(["source", "quantity", "published_cell"])
        for r in sel.itertuples(index=False):
            key = (r.source, r.quantity, r.cell)
            c = comp.loc[key] if len(comp) and key in comp.index else None
            ours = float(c["ours"]) if c is not None and pd.notna(c["ours"]) else np.nan
            se_used = float(c["se_combined"]) if c is not None and pd.notna(c.get("se_combined")) else np.nan
            z = (ours - r.published) / se_used if np.isfinite(se_used) and se_used > 0 else np.nan
            stand_in = c is not None and str(c.get("verdict", "")) == "STAND-IN"
            reps = float(c["reps"]) if c is not None and pd.notna(c.get("reps")) else np.nan
            v = verdict(z, ours, float(r.published), stand_in)
            excluded = _exclusion(reg, r.source, r.quantity, r.cell)
            if not excluded and stand_in:
                excluded = "stand-in data"
            if not excluded and v in ("NOT COMPUTED", "NO SE"):
                excluded = "not run" if v == "NOT COMPUTED" else "no standard error on either side"
            if not excluded and not (reps >= t["reps_paper"]):
                excluded = f"replications below the paper's ({reps:g} < {t['reps_paper']})"
            kind, note = _cause_of(r.source, r.quantity, r.cell) if v in ("CLOSE", "OFF") else ("", "")
            paper, table = r.source.strip("[").split("] ", 1)
            rows.append(
                {
                    "paper": paper,
                    "table": table,
                    "cell": r.cell,
                    "quantity": r.quantity,
                    "ours": ours,
                    "ours_se": float(c["ours_se"]) if c is not None and pd.notna(c.get("ours_se")) else np.nan,
                    "published": float(r.published),
                    "published_se": float(c["published_se"])
                    if c is not None and pd.notna(c.get("published_se"))
                    else np.nan,
                    "se_used": se_used,
                    "z": z,
                    "verdict": v,
                    "reps": reps,
                    "reps_paper": int(t["reps_paper"]),
                    "excluded": excluded,
                    "cause": kind,
                    "note": note,
                }
            )
    return pd.DataFrame(rows, columns=COLUMNS + ["quantity", "note"])


def registered_summary(tab: pd.DataFrame) -> pd.DataFrame:
    """Per registered table and in all: cells, scored cells, MATCH/CLOSE/OFF among the scored,
    the registered share within 2 SE, the unadjusted share (every row with a z, exclusions
    included), replications (ours, the paper's) and the median 2-SE band in % of the published
    value (``2 se_used / |published|``), and OFF cells whose cause is open."""
    out = []
    groups = list(tab.groupby(["paper", "table"], sort=False)) + [(("all", ""), tab)]
    for (paper, table), d in groups:
        sc = d[_scored_mask(d)]
        withz = d[np.isfinite(d["z"].astype(float))]
        band = 200.0 * sc["se_used"] / sc["published"].abs()
        out.append(
            {
                "table": f"[{paper}] {table}" if table else "all",
                "cells": len(d),
                "scored": len(sc),
                "MATCH": int((sc.verdict == "MATCH").sum()),
                "CLOSE": int((sc.verdict == "CLOSE").sum()),
                "OFF": int((sc.verdict == "OFF").sum()),
                "registered share within 2 SE (%)": 100.0 * (sc.verdict == "MATCH").mean() if len(sc) else np.nan,
                "unadjusted share within 2 SE (%)": 100.0 * (withz.z.abs() <= 2).mean() if len(withz) else np.nan,
                "reps": "/".join(f"{v:g}" for v in sorted(set(d["reps"].dropna()))),
                "reps_paper": "/".join(f"{v:g}" for v in sorted(set(d["reps_paper"].dropna()))),
                "2-SE band (% of published, median)": float(band.median()) if len(band) else np.nan,
                "OFF with cause open": int(((sc.verdict == "OFF") & (sc.cause == "open")).sum()),
            }
        )
    return pd.DataFrame(out)


def _mixed_line(tab: pd.DataFrame) -> str:
    """The same cells in the committed mixed-protocol table (``vignettes/fidelity_full.csv``)."""
    path = _repo_root() / "vignettes" / "fidelity_full.csv"
    if not path.is_file():
        return ""
    full = pd.read_csv(path, keep_default_na=False, na_values=[""])
    full = full.assign(
        paper=full.source.str.strip("[").str.split("] ").str[0], table=full.source.str.split("] ").str[1]
    )
    same = full.merge(tab[["paper", "table", "cell", "quantity"]], on=["paper", "table", "cell", "quantity"])
    sc = same[same.verdict.isin(["MATCH", "CLOSE", "OFF"])]
    if sc.empty:
        return ""
    reps = pd.to_numeric(sc["reps"], errors="coerce")
    return (
        f"The same cells in `fidelity_full.md` (mixed protocols, {reps.min():g}-{reps.max():g} replications): "
        f"{100.0 * (sc.verdict == 'MATCH').mean():.1f} % of {len(sc)} scored cells within 2 SE."
    )


def write_registered(to=None, registration=None, results=None) -> Path:
    """Write the registered table as CSV (``to``, default ``vignettes/fidelity_registered.csv``)
    with its Markdown beside it (same name, ``.md``); return the CSV path."""
    from .report import markdown_table

    reg = read_registration(registration)
    tab = registered_table(registration, results)
    to = Path(to) if to is not None else _repo_root() / "vignettes" / "fidelity_registered.csv"
    to.parent.mkdir(parents=True, exist_ok=True)
    tab[COLUMNS].to_csv(to, index=False)
    summ = registered_summary(tab)
    tot = summ.iloc[-1]
    results = Path(results) if results is not None else _repo_root() / "vignettes" / "results" / "registered"
    lines = [
        "# Registered reproduction fidelity",
        "",
        "<!-- generated by `python -m cohstats.vignettes.fidelity_registered table`; do not edit -->",
        "",
        "The cells below were registered in `registered.toml` before their runs: the tables, the "
        "cells, the paper's replication count for each, and the whole groups excluded with "
        "evidence checkable outside the package. z = (ours - published) / se_used, se_used = "
        "sqrt(published_se^2 + max(ours_se, s_pub / sqrt(reps))^2) with s_pub the paper's "
        "per-replication spread; MATCH |z| <= 2, CLOSE |z| <= 3, OFF otherwise. A cell is scored "
        "when `excluded` is empty.",
        "",
        f"**Registered share: {tot['registered share within 2 SE (%)']:.1f} % of {int(tot['scored'])} "
        f"scored cells within 2 SE; unadjusted share (every cell with a z, exclusions included): "
        f"{tot['unadjusted share within 2 SE (%)']:.1f} %.** OFF cells whose cause is open: "
        f"{int(tot['OFF with cause open'])}.",
        "",
        _mixed_line(tab),
        "",
        "## Power and verdicts per table",
        "",
        markdown_table(summ, floatfmt=".1f"),
        "",
        "## Runs",
        "",
    ]
    for t in reg.get("table", []):
        f = results / t["name"] / "run_info.json"
        if f.is_file():
            info = json.loads(f.read_text(encoding="utf-8"))
            lines.append(f"* `{t['name']}`: " + ", ".join(f"{k} = {v}" for k, v in info.items()) + ".")
        else:
            lines.append(f"* `{t['name']}`: not run (no `run_info.json` under `results/registered/{t['name']}`).")
    lines += ["", "## Not registered (cost or no z)", ""]
    for e in reg.get("not_registered", []):
        lines.append(f"* {', '.join(e['source'])} (paper: {e['reps_paper']} replications): {e['reason']}.")
    lines += ["", "## Excluded groups", ""]
    for e in reg.get("excluded", []):
        n = int(tab["excluded"].str.startswith(f"{e['kind']}: {e['evidence']}").sum())
        lines.append(
            f"* {', '.join(e['source'])} {e['quantity']} `{e['cell']}` ({e['kind']}; "
            f"{n} registered cells): {e['evidence']}."
        )
    bad = tab[tab.verdict.isin(["CLOSE", "OFF"]) & tab.excluded.eq("")]
    lines += ["", "## CLOSE and OFF cells and their causes", ""]
    if len(bad):
        lines.append(
            markdown_table(
                bad[["paper", "table", "cell", "ours", "published", "z", "verdict", "cause", "note"]], floatfmt=".4g"
            )
        )
    else:
        lines.append("None.")
    lines += ["", "## Every registered cell", "", markdown_table(tab[COLUMNS], floatfmt=".4g"), ""]
    to.with_suffix(".md").write_text("\n".join(lines), encoding="utf-8")
    return to


def main(argv: Sequence[str] | None = None) -> int:
    """``run NAME --out DIR`` or ``table [--registration FILE] [--results DIR] [--to CSV]``."""
    from .report import markdown_table

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
    tb = sub.add_parser("table", help="build vignettes/fidelity_registered.csv and .md from the runs")
    tb.add_argument("--registration", default=None)
    tb.add_argument("--results", default=None, help="folder of the registered runs (one folder per table)")
    tb.add_argument("--to", default=None, help="CSV to write (the Markdown goes beside it)")
    a = ap.parse_args(argv)
    try:
        if a.cmd == "table":
            path = write_registered(a.to, a.registration, a.results)
            print(
                markdown_table(
                    registered_summary(pd.read_csv(path, keep_default_na=False, na_values=[""]).assign(note="")).tail(
                        1
                    ),
                    floatfmt=".1f",
                )
            )
            print(path)
        if a.cmd == "run":
            print(run_registered(a.name, a.out, n_jobs=a.n_jobs, scheduler=a.scheduler, registration=a.registration))
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
