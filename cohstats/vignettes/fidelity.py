"""The fidelity table: every published cell beside our number, its z and a verdict.

A vignette run (``python -m cohstats.vignettes ... --out DIR``) leaves, next to every report,
``<report>_comparisons.csv``: one row per compared cell, written by
:meth:`cohstats.vignettes.report.Report.compare`. :func:`fidelity_table` gathers those files
and lays them over the list of published tables (:data:`PUBLISHED`), so that a published cell
no comparison of the run reached is listed too (verdict NOT COMPUTED). Verdicts
(:func:`cohstats.vignettes.report.verdict`): MATCH ``|z| <= 2``, CLOSE ``|z| <= 3``, OFF,
STAND-IN (our number comes from other data than the paper's and is never scored),
NOT COMPUTED, NO DATA (no number of ours because the paper's data set cannot be obtained
offline: :data:`cohstats.datasets.UNAVAILABLE`, with no stand-in; not scored and not counted as
missing work); NO SE when neither side has a standard error and the numbers differ.
``z = (ours - published) / sqrt(SE_pub^2 + SE_ours^2)`` with our SE floored for few
replications as :func:`cohstats.vignettes.report.compare_table` documents.

Command line::

    python -m cohstats.vignettes --fidelity --out DIR      # reads DIR, writes DIR/fidelity.md
    python -m cohstats.vignettes.fidelity DIR [--to FILE]
    python -m cohstats.vignettes.fidelity --sources SOURCES.json --to FILE   # committed runs

Examples
--------
>>> import tempfile, pandas as pd
>>> from cohstats.vignettes.report import Report
>>> d = tempfile.mkdtemp()
>>> rep = Report("Demo", d)
>>> ours = pd.DataFrame({"dataset": ["Liver"], "method": ["PLR"], "cre": [0.66], "se": [0.01]})
>>> _ = rep.compare(ours, pd.DataFrame({"dataset": ["Liver"], "method": ["PLR"],
...                 "cre": [0.665], "cre_se": [0.0049]}), on=["dataset", "method"],
...                 value="cre", se="se", published_se="cre_se", reps=2, published_reps=100,
...                 source="[WSL] Table 4")
>>> _ = rep.write(html_too=False)
>>> tab = fidelity_table(d)
>>> tab.loc[tab.cell == "Liver | PLR", ["quantity", "verdict"]].values.tolist()
[['cre', 'MATCH'], ['te', 'NOT COMPUTED']]
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import platform
import sys
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from .report import VERDICTS, _key_text, markdown_table, verdict

__all__ = [
    "PUBLISHED",
    "CAUSES",
    "FIDELITY_VERDICTS",
    "CAUSE_KINDS",
    "OUTSIDE_KINDS",
    "REPEATS",
    "cause_summary",
    "summary_text",
    "fidelity_table",
    "fidelity_summary",
    "write_fidelity",
    "assemble_runs",
    "main",
]

#: The published result tables: ``(source, paper, table, key columns, value columns, vignette)``.
#: ``source`` is the label the vignettes pass to ``Report.compare(source=...)``; the key
#: columns are in the order the vignette compares on.
PUBLISHED = (
    ("[WSL] Table 1", "wsl2008", "table1", ("example", "classifier", "method"), ("gkl", "cre"), "wsl_probability"),
    ("[WSL] Table 2", "wsl2008", "table2", ("example", "method"), ("gkl", "te"), "wsl_probability"),
    ("[WSL] Table 3", "wsl2008", "table3", ("dataset", "classifier", "method"), ("cre",), "wsl_probability"),
    ("[WSL] Table 4", "wsl2008", "table4", ("dataset", "method"), ("cre", "te"), "wsl_probability"),
    ("[WSL] Table 5", "wsl2008", "table5", ("classifier", "method"), ("cre",), "wsl_probability"),
    ("[ZDJ] Table 2", "zdj2012", "table2", ("dataset", "method"), ("mean",), "zdj_svm_probability"),
    ("[ZDJ] Table 3", "zdj2012", "table3", ("dataset", "method"), ("mean",), "zdj_svm_probability"),
    ("[ZDJ] Table 5", "zdj2012", "table5", ("dataset", "method"), ("mean_pct",), "zdj_clearn"),
    ("[ZDJ] Table 6", "zdj2012", "table6", ("dataset", "method"), ("mean_pct",), "zdj_clearn"),
    ("[LZW] Table 1", "lzw2011", "table1", ("estimator", "c", "a"), ("mae",), "lum_simulations"),
    ("[LZW] Table 2", "lzw2011", "table2", ("estimator", "c", "a"), ("mae",), "lum_simulations"),
    ("[ZJLY] Table 2", "zjly2009", "table2", ("dataset", "method"), ("test_error_pct",), "gboost_uci"),
    ("[RH] Table 2", "rh2015", "table2", ("dataset", "lambda"), ("err_pct",), "lamsvm"),
)

#: Measured causes of cells that can stay outside 2 SE (:data:`CAUSES`, read from
#: ``fidelity_notes.json`` beside this module): ``(source, quantity, cell regex, note, kind)``.
#: The note is added to a matching cell whose verdict is CLOSE or OFF (an empty note leaves the
#: vignette's own note alone); the measurements behind each note are in the evidence folder under
#: ``vignettes/results/`` or the module it names. ``kind`` is one of the keys below and becomes
#: the cell's ``cause`` column.
CAUSE_KINDS = {
    "paper": "the paper's numbers contradict each other or another of its tables, or its cell is "
    "another quantity than the one it names (checkable from the paper's own numbers)",
    "data": "the paper's data cannot be had as it used them: independent implementations "
    "(scikit-learn) on the data as available do not reach the paper's level either",
    "independent": "independent implementations (scikit-learn, the Bayes rule, a closed form) "
    "agree with ours and not with the paper",
    "protocol (hypothesis)": "the package's own explanation, measured with this package only (a "
    "step the paper leaves unstated, a setting that moves the cell, more replications): the cell "
    "stays scored",
    "open": "partly explained: the note says what was measured and ruled out, the rest is not found",
}

#: The kinds whose evidence a reader can check outside the package.
OUTSIDE_KINDS = ("paper", "data", "independent")

#: Published cells that print the same number as a cell of another table, scored only there:
#: ``(source, quantity, cell regex, other source, other cell regex)``. A cell matching the first
#: three is a REPEAT when the other table has a cell of the same first key (the data set) matching
#: the other regex with the same published value. [WSL] Table 4's psi-learning "New"
#: cross-entropies are Table 3's psi-learning "New" cells (Mushroom, Liver, Diabetes: psi L;
#: Ionosphere: psi G).
REPEATS = (("[WSL] Table 4", "cre", r"\| New \(psi-learning\)$", "[WSL] Table 3", r"\| psi [GL] \| New$"),)


def _read_causes() -> tuple:
    """The entries of ``fidelity_notes.json`` (beside this module) as ``(source, quantity,
    cell regex, note, kind)`` tuples, in file order (the first matching entry wins)."""
    path = Path(__file__).with_name("fidelity_notes.json")
    entries = json.loads(path.read_text(encoding="utf-8"))["causes"]
    return tuple((e["source"], e["quantity"], e["cell"], e["note"], e["kind"]) for e in entries)


CAUSES = _read_causes()


#: The verdicts of the fidelity table: the comparison verdicts, NO DATA and REPEAT (a published
#: number that repeats another table's cell, :data:`REPEATS`; scored once, there).
FIDELITY_VERDICTS = VERDICTS + ("NO DATA", "REPEAT")


def _offline_data_set(cell: str) -> str | None:
    """The :data:`cohstats.datasets.UNAVAILABLE` entry naming the data set of ``cell`` (its
    first key, case-insensitive), or None."""
    from cohstats.datasets import UNAVAILABLE

    return UNAVAILABLE.get(str(cell).split(" | ", 1)[0].strip().lower())


def _mark_no_data(tab: pd.DataFrame) -> pd.DataFrame:
    """NOT COMPUTED cells whose data set cannot be obtained offline become NO DATA."""
    verdicts, notes = tab["verdict"].tolist(), tab["note"].astype(str).tolist()
    for i, (v, cell) in enumerate(zip(verdicts, tab["cell"])):
        why = _offline_data_set(cell) if v == "NOT COMPUTED" else None
        if why is not None:
            verdicts[i] = "NO DATA"
            notes[i] = f"data set not available offline: {why}"
    return tab.assign(verdict=verdicts, note=notes)


def _mark_repeats(tab: pd.DataFrame) -> pd.DataFrame:
    """Cells of :data:`REPEATS` become REPEAT (not scored), their note naming the cell scored."""
    import re

    verdicts, notes = tab["verdict"].tolist(), tab["note"].astype(str).tolist()
    for src, q, pattern, other_src, other_pattern in REPEATS:
        other = tab[(tab.source == other_src) & (tab.quantity == q)]
        other = other[other.cell.astype(str).str.contains(other_pattern, regex=True)]
        for i, (s_, q_, cell, pub) in enumerate(zip(tab.source, tab.quantity, tab.cell, tab.published)):
            if s_ != src or q_ != q or not re.search(pattern, str(cell)):
                continue
            first = str(cell).split(" | ", 1)[0]
            same = other[
                (other.cell.astype(str).str.split(" | ", n=1, regex=False).str[0] == first)
                & np.isclose(other.published.astype(float), float(pub), rtol=0, atol=1e-12)
            ]
            if len(same):
                verdicts[i] = "REPEAT"
                notes[i] = f"the published number of {other_src} {same.cell.iloc[0]}, scored there"
    return tab.assign(verdict=verdicts, note=notes)


def _add_causes(tab: pd.DataFrame) -> pd.DataFrame:
    """Append the :data:`CAUSES` note to each matching CLOSE or OFF cell and set its ``cause``
    column to the entry's kind (empty for every other cell and for a cell no entry matches)."""
    import re

    notes = tab["note"].astype(str).tolist()
    kinds = [""] * len(notes)
    for i, (src, q, cell, v) in enumerate(zip(tab.source, tab.quantity, tab.cell, tab.verdict)):
        if v not in ("CLOSE", "OFF"):
            continue
        for csrc, cq, pattern, text, kind in CAUSES:
            if src == csrc and q == cq and re.search(pattern, str(cell)):
                if text:
                    notes[i] = f"{notes[i]}; {text}" if notes[i] else text
                kinds[i] = kind
                break
    return tab.assign(note=notes, cause=kinds)


def cause_summary(tab: pd.DataFrame) -> pd.DataFrame:
    """CLOSE and OFF cells counted by the kind of their cause (:data:`CAUSE_KINDS`; cells
    without a matching :data:`CAUSES` entry under ``"(none)"``), with the tables they are in."""
    bad = tab[tab["verdict"].isin(["CLOSE", "OFF"])]
    cause = bad["cause"].fillna("").astype(str) if "cause" in bad else pd.Series("", index=bad.index)
    cause = cause.where(cause != "", "(none)")
    rows = []
    for kind in list(CAUSE_KINDS) + ["(none)"]:
        d = bad[cause == kind]
        if kind == "(none)" and d.empty:
            continue
        rows.append(
            {
                "cause": kind,
                "CLOSE": int((d["verdict"] == "CLOSE").sum()),
                "OFF": int((d["verdict"] == "OFF").sum()),
                "tables": ", ".join(dict.fromkeys(d["source"])),
                "meaning": CAUSE_KINDS.get(kind, "no entry of CAUSES matches the cell"),
            }
        )
    return pd.DataFrame(rows, columns=["cause", "CLOSE", "OFF", "tables", "meaning"])


_COLUMNS = [
    "source",
    "quantity",
    "cell",
    "reps",
    "ours",
    "ours_se",
    "published",
    "published_se",
    "se_used",
    "z",
    "verdict",
    "note",
    "report",
]


def _published_cells() -> pd.DataFrame:
    from cohstats.datasets import reference

    rows = []
    for source, paper, table, keys, values, vignette in PUBLISHED:
        try:
            ref = reference(paper, table)
        except ValueError:  # a reference table this installation does not ship
            continue
        for rd in ref.to_dict("records"):
            cell = " | ".join(_key_text(rd[k]) for k in keys)
            for q in values:
                v = pd.to_numeric(pd.Series([rd.get(q)]), errors="coerce").iloc[0]
                if pd.isna(v):
                    continue
                rows.append(
                    {"source": source, "quantity": q, "cell": cell, "published": float(v), "vignette": vignette}
                )
    return pd.DataFrame(rows, columns=["source", "quantity", "cell", "published", "vignette"])


def read_comparisons(run_dir) -> pd.DataFrame:
    """Every ``*_comparisons.csv`` under ``run_dir`` as one DataFrame (empty if none)."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise ValueError(
            f"run directory {str(run_dir)!r} does not exist; run the vignettes "
            "first (python -m cohstats.vignettes --out DIR)"
        )
    parts = []
    for f in sorted(run_dir.rglob("*_comparisons.csv")):
        d = pd.read_csv(f, dtype={"cell": str, "published_cell": str, "note": str, "verdict": str})
        parts.append(d)
    if not parts:
        return pd.DataFrame(columns=_COLUMNS + ["published_cell"])
    out = pd.concat(parts, ignore_index=True)
    for c in ("note", "verdict"):
        out[c] = out[c].fillna("")
    if "published_cell" not in out:
        out["published_cell"] = out["cell"]
    out["published_cell"] = out["published_cell"].fillna(out["cell"])
    return out


def fidelity_table(run_dir) -> pd.DataFrame:
    """One row per published cell (and per compared cell of tables not in :data:`PUBLISHED`).

    Columns: ``source`` (the published table), ``quantity``, ``cell`` (our label: stand-in
    rows carry the stand-in data's name), ``reps``, ``ours``, ``ours_se`` (as computed),
    ``published``, ``published_se``, ``se_used`` (the denominator of ``z``: the published SE
    and our SE floored for few replications, combined), ``z``, ``verdict``, ``cause`` (for a
    CLOSE or OFF cell the kind of its measured cause, :data:`CAUSE_KINDS`), ``note`` and
    ``report`` (the report that computed it).
    A published cell reached by several comparisons keeps the first one that has our number.
    """
    comp = read_comparisons(run_dir)
    pub = _published_cells()
    comp = comp[comp["published"].notna() | comp["ours"].notna()].copy()
    # the denominator of z (published SE and our floored SE combined), under the table's name
    comp["se_used"] = comp["se_combined"] if "se_combined" in comp else np.nan
    # a comparison recorded without a known source (an older vignette passing only a caption)
    # is attributed to the published table whose cell it matches, when exactly one does
    owners: dict = {}
    for src, q, c in zip(pub.source, pub.quantity, pub.cell):
        owners.setdefault((q, c), set()).add(src)
    known_src = set(pub.source)
    comp["source"] = [
        s_ if s_ in known_src or len(owners.get((q, c), ())) != 1 else next(iter(owners[(q, c)]))
        for s_, q, c in zip(comp.source, comp.quantity, comp.published_cell)
    ]
    comp["_has"] = comp["ours"].notna()
    comp = comp.sort_values("_has", ascending=False, kind="stable").drop_duplicates(
        ["source", "quantity", "published_cell"], keep="first"
    )
    known = set(zip(pub.source, pub.quantity, pub.cell))
    seen_sources = set(comp.source)
    rows = []
    idx = comp.set_index(["source", "quantity", "published_cell"])
    for r in pub.itertuples(index=False):
        key = (r.source, r.quantity, r.cell)
        if key in idx.index:
            c = idx.loc[key]
            if isinstance(c, pd.DataFrame):
                c = c.iloc[0]
            rows.append(
                {k: c.get(k, np.nan) for k in _COLUMNS if k not in ("source", "quantity")}
                | {"source": r.source, "quantity": r.quantity}
            )
        else:
            why = (
                "no comparison of this cell in the run"
                if r.source in seen_sources
                else f"no comparison with this table in the run (vignette `{r.vignette}`)"
            )
            rows.append(
                {
                    "source": r.source,
                    "quantity": r.quantity,
                    "cell": r.cell,
                    "reps": np.nan,
                    "ours": np.nan,
                    "ours_se": np.nan,
                    "published": r.published,
                    "published_se": np.nan,
                    "se_used": np.nan,
                    "z": np.nan,
                    "verdict": "NOT COMPUTED",
                    "note": why,
                    "report": "",
                }
            )
    extra = comp[[(s, q, c) not in known for s, q, c in zip(comp.source, comp.quantity, comp.published_cell)]]
    extra = extra[extra["published"].notna()]
    for _, c in extra.iterrows():
        rows.append({k: c.get(k, np.nan) for k in _COLUMNS})
    out = pd.DataFrame(rows, columns=_COLUMNS)
    # verdicts from the recorded numbers (the CSV's verdict is kept for stand-ins)
    stand = out["verdict"].eq("STAND-IN")
    out["verdict"] = [
        verdict(float(z), float(o), float(p), bool(s))
        for z, o, p, s in zip(out["z"], out["ours"], out["published"], stand)
    ]
    out["note"] = out["note"].fillna("")
    out = _mark_no_data(out)
    out = _mark_repeats(out)
    out = _add_causes(out)
    out["report"] = out["report"].fillna("")
    cols = list(_COLUMNS)
    cols.insert(cols.index("note"), "cause")
    return out[cols].reset_index(drop=True)


def fidelity_summary(tab: pd.DataFrame) -> pd.DataFrame:
    """Verdict counts per published table, with a total row, the share of the scored
    (MATCH, CLOSE, OFF) cells within 2 SE, and the table's power: the median replications of
    its scored cells and the median 2-SE band (``2 se_used``) in % of the published value."""
    rows = []
    for src, d in list(tab.groupby("source", sort=False)) + [("all", tab)]:
        row = {"source": src, "cells": len(d)}
        for v in FIDELITY_VERDICTS:
            row[v] = int((d["verdict"] == v).sum())
        scored = row["MATCH"] + row["CLOSE"] + row["OFF"]
        row["within 2 SE (%)"] = 100.0 * row["MATCH"] / scored if scored else np.nan
        sc = d[d["verdict"].isin(["MATCH", "CLOSE", "OFF"])]
        reps = pd.to_numeric(sc["reps"], errors="coerce") if "reps" in sc else pd.Series(dtype=float)
        row["reps (median)"] = float(reps.median()) if reps.notna().any() else np.nan
        band = _band_pct(sc)
        row["2-SE band (% of published, median)"] = float(band.median()) if band.notna().any() else np.nan
        rows.append(row)
    return pd.DataFrame(rows)


def _band_pct(tab: pd.DataFrame) -> pd.Series:
    """``2 se_used`` in % of ``|published|`` per row (NaN without ``se_used`` or a zero value)."""
    if "se_used" not in tab or tab.empty:
        return pd.Series(np.nan, index=tab.index, dtype=float)
    pub = pd.to_numeric(tab["published"], errors="coerce").abs()
    se = pd.to_numeric(tab["se_used"], errors="coerce")
    return (200.0 * se / pub.where(pub > 0)).astype(float)


def _uncaused(tab: pd.DataFrame) -> pd.DataFrame:
    """OFF cells without a measured cause: their ``cause`` is empty (no entry of
    :data:`CAUSES` matches) or ``"open"`` -- the same count the cause table shows."""
    off = tab[tab["verdict"] == "OFF"]
    cause = off["cause"].fillna("").astype(str) if "cause" in off else pd.Series("", index=off.index)
    return off[cause.isin(["", "open"])]


def summary_text(tab: pd.DataFrame) -> str:
    """One paragraph of counts, generated from the table (no number typed by hand)."""
    summ = fidelity_summary(tab).iloc[-1]
    scored = int(summ["MATCH"] + summ["CLOSE"] + summ["OFF"])
    unc = _uncaused(tab)
    text = (
        f"Of {int(summ['cells'])} published cells: {int(summ['MATCH'])} MATCH, {int(summ['CLOSE'])} CLOSE, "
        f"{int(summ['OFF'])} OFF, {int(summ['STAND-IN'])} STAND-IN, {int(summ['NOT COMPUTED'])} NOT COMPUTED, "
        f"{int(summ['NO DATA'])} NO DATA (data set not available offline), {int(summ['NO SE'])} NO SE, "
        f"{int(summ['REPEAT'])} REPEAT (scored in the table they repeat); "
        f"{summ['within 2 SE (%)']:.1f} % of the {scored} scored cells are "
        f"within 2 SE. OFF cells without a measured cause (cause empty or open): {len(unc)}"
    )
    if len(unc):
        text += " (" + "; ".join(f"{s} {q} {c}" for s, q, c in zip(unc.source, unc.quantity, unc.cell)) + ")"
    return text + "."


def _run_infos(run_dir: Path) -> list[tuple[str, dict]]:
    """``(relative directory, run_info)`` of every runner invocation under ``run_dir``."""
    out = []
    for f in sorted(run_dir.rglob("run_info.json")):
        try:
            info = json.loads(f.read_text(encoding="utf-8"))
        except ValueError:
            continue
        out.append((f.parent.relative_to(run_dir).as_posix() or ".", info))
    return out


def write_fidelity(run_dir, to=None) -> Path:
    """Write ``fidelity.md`` and ``fidelity.csv`` (into ``run_dir`` unless ``to`` names the
    Markdown file) and return the Markdown path."""
    run_dir = Path(run_dir)
    tab = fidelity_table(run_dir)
    summ = fidelity_summary(tab)
    md_path = Path(to) if to is not None else run_dir / "fidelity.md"
    md_path.parent.mkdir(parents=True, exist_ok=True)
    tab.to_csv(md_path.with_suffix(".csv"), index=False)
    made = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = ["# Reproduction fidelity", ""]
    for where, info in _run_infos(run_dir):
        lines += [f"Run (`{where}`): " + ", ".join(f"{k} = {v}" for k, v in info.items()) + ".", ""]
    made_line = (
        f"Table made {made} on {platform.system()} {platform.machine()}, Python "
        f"{platform.python_version()}, from the comparison files of the run."
    )
    legend = (
        "z = (ours - published) / se_used, se_used = sqrt(SE_pub^2 + SE_ours^2) with our SE floored "
        "at the paper's per-replication spread / sqrt(our replications) where the paper gives a "
        "spread (ours_se is our SE as computed). The summary's power columns: the median "
        "replications of a table's scored cells and its median 2-SE band (2 se_used) in % of the "
        "published value. REPEAT: a published number repeating another table's cell, scored "
        "there. MATCH |z| <= 2, CLOSE |z| <= 3, OFF otherwise; STAND-IN: our number is "
        "computed on other data than the paper's and is not scored; NOT COMPUTED: the run "
        "has no number for the published cell; NO DATA: the paper's data set cannot be obtained "
        "offline (not scored, not missing work); NO SE: no standard error on either side "
        "and the numbers differ at the published precision."
    )
    lines += [
        made_line,
        "",
        legend,
        "",
        "## Summary",
        "",
        summary_text(tab),
        "",
        markdown_table(summ, floatfmt=".1f"),
        "",
        "## CLOSE and OFF cells by kind of cause",
        "",
        "The `cause` column of every CLOSE or OFF cell names the kind of its measured cause "
        "(`cohstats.vignettes.fidelity.CAUSE_KINDS`); the note of the cell gives the measurement.",
        "",
        markdown_table(cause_summary(tab)),
        "",
        "## Every published cell",
        "",
        markdown_table(tab, floatfmt=".4g"),
        "",
    ]
    md_path.write_text("\n".join(lines), encoding="utf-8")
    return md_path


def assemble_runs(sources, to) -> Path:
    """Copy the run directories named by a sources file under one directory; return it.

    ``sources`` is a JSON file mapping a name to a run directory (a path relative to the
    file's folder), e.g. ``{"full_zdj_clearn": "results/runs/zdj_clearn_full"}``.
    Each directory is copied to ``to/<name>`` (HTML copies of reports are skipped). The
    fidelity table keeps, for a published cell, the first comparison in sorted path order
    that has a number of ours, so the names set the precedence between runs.
    """
    import shutil

    sources = Path(sources)
    try:
        names = json.loads(sources.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ValueError(f"sources file {str(sources)!r} cannot be read as JSON: {e}") from None
    if not isinstance(names, dict) or not names:
        raise ValueError(f"sources file {str(sources)!r} must map run names to directories")
    to = Path(to)
    for name, rel in names.items():
        src = sources.parent / str(rel)
        if not src.is_dir():
            raise ValueError(
                f"sources file {str(sources)!r}: run {name!r} names {str(rel)!r}, which is not a directory"
            )
        shutil.copytree(src, to / name, ignore=shutil.ignore_patterns("*.html"), dirs_exist_ok=False)
    return to


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m cohstats.vignettes.fidelity DIR [--to FILE]`` or ``--sources FILE --to FILE``."""
    import tempfile

    ap = argparse.ArgumentParser(
        prog="python -m cohstats.vignettes.fidelity", description="Build the fidelity table of a vignette run."
    )
    ap.add_argument("run_dir", nargs="?", default=None)
    ap.add_argument("--to", default=None, help="Markdown file to write (default RUN_DIR/fidelity.md)")
    ap.add_argument(
        "--sources",
        default=None,
        help="JSON file naming committed run directories (see assemble_runs); needs --to, no RUN_DIR",
    )
    a = ap.parse_args(argv)
    try:
        if a.sources is not None:
            if a.run_dir is not None or a.to is None:
                raise ValueError("--sources takes no run directory and needs --to FILE")
            with tempfile.TemporaryDirectory() as tmp:
                path = write_fidelity(assemble_runs(a.sources, Path(tmp) / "runs"), a.to)
        else:
            path = write_fidelity(a.run_dir or "vignette_reports", a.to)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    summ = fidelity_summary(
        pd.read_csv(path.with_suffix(".csv"), keep_default_na=False, na_values=[""]).fillna({"verdict": ""})
    )
    print(markdown_table(summ.tail(1), floatfmt=".1f"))
    print(path)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
