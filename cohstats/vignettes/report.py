"""Markdown (and HTML) reports for the vignettes: settings, tables, ours-vs-published, figures.

A vignette builds one :class:`Report`, adds sections, tables and figures, and calls
:meth:`Report.write`, which writes ``<out_dir>/<slug>.md`` (figures in ``<out_dir>/<slug>_files``),
the same report as HTML, and every ours-versus-published comparison as one long CSV
``<out_dir>/<slug>_comparisons.csv`` (read by :mod:`cohstats.vignettes.fidelity`). Nothing here
depends on the machine: paths in the report are relative to the report file.

Examples
--------
>>> import tempfile, pandas as pd
>>> rep = Report("Demo", tempfile.mkdtemp())
>>> rep.section("Results")
>>> rep.table(pd.DataFrame({"a": [1.0, 2.0]}), caption="A table")
>>> rep.write().suffix
'.md'
"""

from __future__ import annotations

import datetime as _dt
import html
import math
import platform
import re
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

__all__ = ["Report", "compare_table", "markdown_table", "power_text", "tally", "tally_text", "verdict", "VERDICTS"]


def _slug(text: str) -> str:
    s = re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_").lower()
    return s or "report"


def _fmt_cell(v, floatfmt: str) -> str:
    if v is None:
        return ""
    if isinstance(v, (float, np.floating)):
        if math.isnan(v):
            return ""
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return format(float(v), floatfmt)
    if isinstance(v, (bool, np.bool_)):
        return "yes" if v else "no"
    try:
        if pd.isna(v):
            return ""
    except (TypeError, ValueError):
        pass
    return str(v).replace("|", "\\|").replace("\n", " ")


def _key_text(v) -> str:
    """A key value as the comparison CSVs print it (``0.0`` and ``0`` both as ``0``)."""
    if isinstance(v, (float, np.floating)) and np.isfinite(v) and float(v).is_integer():
        return str(int(v))
    return str(v)


def markdown_table(df: pd.DataFrame, floatfmt: str = ".4g", index: bool = False) -> str:
    """Render a DataFrame as a GitHub-flavoured Markdown table (no extra dependency).

    Missing values print as empty cells; numeric columns are right-aligned.

    Examples
    --------
    >>> print(markdown_table(pd.DataFrame({"x": [1.5, None], "n": ["a", "b"]})))
    | x | n |
    |---:|:---|
    | 1.5 | a |
    |  | b |
    """
    if not isinstance(df, pd.DataFrame):
        if isinstance(df, pd.Series):
            df = df.to_frame()
        else:
            raise TypeError(f"df must be a pandas DataFrame; got {type(df).__name__}")
    if index:
        df = df.reset_index()
    cols = [str(c) for c in df.columns]
    num = [pd.api.types.is_numeric_dtype(df[c]) and not pd.api.types.is_bool_dtype(df[c]) for c in df.columns]
    lines = [
        "| " + " | ".join(c.replace("|", "\\|") for c in cols) + " |",
        "|" + "|".join("---:" if k else ":---" for k in num) + "|",
    ]
    for row in df.itertuples(index=False, name=None):
        lines.append("| " + " | ".join(_fmt_cell(v, floatfmt) for v in row) + " |")
    return "\n".join(lines)


#: verdicts of a compared cell, by |z| (see :func:`verdict`)
VERDICTS = ("MATCH", "CLOSE", "OFF", "STAND-IN", "NOT COMPUTED", "NO SE")


def _half_unit(p: float) -> float:
    """Half a unit in the last printed decimal of ``p`` (``89.59`` -> 0.005, ``345`` -> 0.5)."""
    text = repr(float(p))
    if "e" in text or "E" in text:
        return 1e-12 * max(1.0, abs(p))
    dec = text.split(".")[1]
    return 0.5 if dec == "0" else 0.5 * 10.0 ** -len(dec) + 1e-12


def verdict(z: float, ours: float = np.nan, published: float = np.nan, stand_in: bool = False) -> str:
    """Verdict of one published cell.

    ``"STAND-IN"`` when our number comes from other data than the paper's; ``"NOT COMPUTED"``
    when we have no number for a published one (an infinite number of ours counts as computed
    and scores OFF); otherwise by ``|z|``: ``"MATCH"`` (at most 2),
    ``"CLOSE"`` (at most 3) or ``"OFF"``. Without any standard error (``z`` undefined) our
    number is a ``"MATCH"`` when it rounds to the published one at the published number's
    printed decimals (data sizes, base errors) and ``"NO SE"`` otherwise. A row without a
    published number gets ``""``.

    Examples
    --------
    >>> [verdict(z, ours=0.3, published=0.2) for z in (0.5, -2.5, 4.0)]
    ['MATCH', 'CLOSE', 'OFF']
    >>> verdict(np.nan, ours=np.nan, published=0.2), verdict(1.0, stand_in=True)
    ('NOT COMPUTED', 'STAND-IN')
    >>> verdict(np.nan, ours=89.5924, published=89.59), verdict(np.nan, ours=89.6, published=89.59)
    ('MATCH', 'NO SE')
    """
    if stand_in:
        return "STAND-IN"
    if not np.isfinite(published):
        return ""
    if np.isnan(ours):
        return "NOT COMPUTED"
    if np.isnan(z):
        return "MATCH" if abs(ours - published) <= _half_unit(published) else "NO SE"
    az = abs(z)
    return "MATCH" if az <= 2 else ("CLOSE" if az <= 3 else "OFF")


def _column_or_value(df: pd.DataFrame, spec, name: str, arg: str) -> pd.Series:
    """``spec`` is a column of ``df``, a number (the same for every row) or None (NaN)."""
    if spec is None:
        return pd.Series(np.nan, index=df.index, dtype=float)
    if isinstance(spec, str):
        if spec not in df.columns:
            raise ValueError(f"{arg}={spec!r} is not a column of {name}; it has {list(df.columns)}")
        return pd.to_numeric(df[spec], errors="coerce").astype(float)
    if isinstance(spec, (bool, np.bool_)) or not isinstance(spec, (int, float, np.integer, np.floating)):
        raise TypeError(f"{arg} must be a column name or a number; got {spec!r}")
    return pd.Series(float(spec), index=df.index, dtype=float)


def compare_table(
    ours: pd.DataFrame,
    published: pd.DataFrame,
    on: Sequence[str] | str,
    value: str | Sequence[str],
    se: str | None = None,
    published_value: str | None = None,
    published_se: str | None = None,
    *,
    reps=None,
    published_sd: str | None = None,
    published_reps=None,
    min_se: float = 0.0,
    stand_ins: dict | None = None,
) -> pd.DataFrame:
    """Join our results with the published ones and score every cell by a two-sample z.

    ``z = (ours - published) / sqrt(SE_pub^2 + SE_ours^2)``, where our standard error is
    floored for few replications at ``max(min_se, s_pub / sqrt(reps))`` with ``s_pub`` the
    paper's per-replication spread (``published_sd``, or ``published_se * sqrt(published_reps)``):
    an SE estimated from two replications can be arbitrarily small, the paper's spread over
    its replications cannot. Without ``reps`` or a published spread the floor is ``min_se``.

    Parameters
    ----------
    ours, published : DataFrame
        Long tables with the key columns ``on``.
    on : str or list of str
        Key columns present in both tables.
    value : str
        Column of the compared quantity in ``ours`` (and in ``published`` unless
        ``published_value`` names another column).
    se : str, optional
        Column of our standard error (over replications).
    published_value : str, optional
        Column name in ``published`` when it differs from ``value``.
    published_se, published_sd : str, optional
        Column of the paper's standard error / per-replication standard deviation (give at
        most one; with ``published_reps`` the other one is derived).
    reps : str or int, optional
        Our replications per cell (a column of ``ours`` or one number); shown in the table.
    published_reps : str or int, optional
        The paper's replications per cell (a column of ``published`` or one number).
    min_se : float
        A stated minimum of our standard error (default 0).
    stand_ins : dict or True, optional
        ``{published key value: our label}`` for rows computed on other data than the paper's
        (e.g. ``{"USPS (1 vs 7)": "digits 8x8 (1 vs 7) [USPS stand-in]"}``): the published row is
        shown under our label, and its difference and z are left blank (verdict STAND-IN), so
        such rows never enter a tally against the paper. ``True``: every row is on stand-in
        data (e.g. a simulation reconstructed because the paper omits its parameters).

    Returns
    -------
    DataFrame with the keys and ``reps``, ``ours``, ``ours_se``, ``published``,
    ``published_se``, ``difference`` (ours - published), ``se_combined`` (the denominator of
    z, with our floored SE), ``z`` and ``verdict`` (:func:`verdict`). Rows present in only one
    table are kept (outer join), so missing cells are visible (verdict NOT COMPUTED).

    Examples
    --------
    >>> a = pd.DataFrame({"m": ["x", "y"], "err": [0.10, 0.21], "se": [0.01, 0.01]})
    >>> b = pd.DataFrame({"m": ["x", "y"], "err": [0.12, 0.20], "err_se": [0.005, 0.005]})
    >>> t = compare_table(a, b, on="m", value="err", se="se", published_se="err_se",
    ...                   reps=4, published_reps=100)
    >>> t[["difference", "z", "verdict"]].round(3).values.tolist()
    [[-0.02, -0.784, 'MATCH'], [0.01, 0.392, 'MATCH']]
    """
    keys = [on] if isinstance(on, str) else list(on)
    if not isinstance(value, str):
        raise TypeError("value must be a single column name (call compare() once per quantity)")
    if published_se is not None and published_sd is not None:
        raise ValueError("give at most one of published_se and published_sd")
    if not (isinstance(min_se, (int, float, np.integer, np.floating)) and min_se >= 0):
        raise ValueError(f"min_se must be a non-negative number; got {min_se!r}")
    pv = published_value or value
    for name, df, cols in (
        ("ours", ours, keys + [value] + ([se] if se else [])),
        ("published", published, keys + [pv] + [c for c in (published_se, published_sd) if c]),
    ):
        if not isinstance(df, pd.DataFrame):
            raise TypeError(f"{name} must be a pandas DataFrame; got {type(df).__name__}")
        missing = [c for c in cols if c not in df.columns]
        if missing:
            raise ValueError(f"{name} lacks column(s) {missing}; it has {list(df.columns)}")
    a = pd.DataFrame({k: ours[k] for k in keys})
    a["reps"] = _column_or_value(ours, reps, "ours", "reps")
    a["ours"] = pd.to_numeric(ours[value], errors="coerce")
    a["ours_se"] = _column_or_value(ours, se, "ours", "se")
    b = pd.DataFrame({k: published[k] for k in keys})
    b["published"] = pd.to_numeric(published[pv], errors="coerce")
    n_pub = _column_or_value(published, published_reps, "published", "published_reps")
    if published_sd is not None:
        sd_pub = _column_or_value(published, published_sd, "published", "published_sd")
        b["published_se"] = sd_pub / np.sqrt(n_pub)
        b["_spread"] = sd_pub
    else:
        b["published_se"] = _column_or_value(published, published_se, "published", "published_se")
        b["_spread"] = b["published_se"] * np.sqrt(n_pub)
    b["_stand_in"] = stand_ins is True
    if stand_ins is True:
        pass
    elif stand_ins:
        if not isinstance(stand_ins, dict):
            raise TypeError(f"stand_ins must be a dict {{published label: our label}}; got {type(stand_ins).__name__}")
        for k in keys:
            hit = b[k].isin(list(stand_ins))
            b.loc[hit, "_stand_in"] = True
            b[k] = b[k].map(lambda v: stand_ins.get(v, v) if isinstance(v, str) else v)
    # align key dtypes (e.g. numbers read from CSV vs strings) through strings when they differ
    for k in keys:
        if a[k].dtype != b[k].dtype:
            a[k] = a[k].astype(str)
            b[k] = b[k].astype(str)
    a["_order_ours"] = np.arange(len(a), dtype=float)
    b["_order_pub"] = np.arange(len(b), dtype=float)
    out = a.merge(b, on=keys, how="outer", sort=False)
    # rows in the order of `ours`, then published-only rows in their own order
    out = out.sort_values(["_order_ours", "_order_pub"], na_position="last", kind="stable")
    out = out.reset_index(drop=True)
    stand = out["_stand_in"].eq(True)
    if stand_ins is True:
        stand[:] = True
    elif stand_ins:
        stand |= out[keys].isin(list(stand_ins.values())).any(axis=1)
    n_ours = out["reps"].where(out["reps"] > 0)  # no replication: no floor
    floor = np.fmax(out["_spread"] / np.sqrt(n_ours), float(min_se))
    se_ours = np.fmax(out["ours_se"].to_numpy(dtype=float), floor.to_numpy(dtype=float))
    se_pub = out["published_se"].to_numpy(dtype=float, copy=True)
    se_comb = np.sqrt(np.nan_to_num(se_pub) ** 2 + np.nan_to_num(se_ours) ** 2)
    se_comb[~(np.isfinite(se_pub) | np.isfinite(se_ours))] = np.nan
    diff = (out["ours"] - out["published"]).to_numpy(dtype=float, copy=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(se_comb > 0, diff / se_comb, np.nan)
    blank = stand.to_numpy() | np.isnan(diff)
    diff[blank] = np.nan
    z[blank] = np.nan
    se_comb[blank] = np.nan
    out["difference"] = diff
    out["se_combined"] = se_comb
    out["z"] = z
    out["verdict"] = [verdict(zz, o, p, st) for zz, o, p, st in zip(z, out["ours"], out["published"], stand)]
    reps_v = out["reps"].to_numpy(dtype=float)
    if np.all(np.isnan(reps_v) | (reps_v == np.round(reps_v))):
        out["reps"] = out["reps"].round().astype("Int64")
    cols = keys + ["reps", "ours", "ours_se", "published", "published_se", "difference", "se_combined", "z", "verdict"]
    return out[cols]


def tally(table: pd.DataFrame) -> dict:
    """Counts of the verdicts of a comparison table (stand-ins counted apart, never as
    matches): ``{"MATCH": k, ...}`` over the rows that have a published number.

    Examples
    --------
    >>> tally(pd.DataFrame({"verdict": ["MATCH", "OFF", "STAND-IN", "", "MATCH"]}))
    {'MATCH': 2, 'CLOSE': 0, 'OFF': 1, 'STAND-IN': 1, 'NOT COMPUTED': 0, 'NO SE': 0}
    """
    v = table["verdict"]
    return {k: int((v == k).sum()) for k in VERDICTS}


def power_text(table: pd.DataFrame, published_reps=None) -> str:
    """One sentence with the power of a comparison table: our replications (median over the
    scored cells), the paper's when known, and the median 2-SE band (``2 se_combined``) in % of
    the published value -- the smallest difference the table can call OFF.

    Examples
    --------
    >>> t = pd.DataFrame({"reps": [10, 10], "published": [0.2, 0.4], "se_combined": [0.01, 0.01],
    ...                   "verdict": ["MATCH", "OFF"]})
    >>> power_text(t, published_reps=100)
    'Power: 10 replications (paper: 100); median 2-SE band 7.5 % of the published value.'
    """
    scored = table[table["verdict"].isin(["MATCH", "CLOSE", "OFF"])]
    if scored.empty:
        return ""
    reps = pd.to_numeric(scored["reps"], errors="coerce").dropna()
    what = f"{reps.median():g} replications" if len(reps) else "replications not recorded"
    if isinstance(published_reps, (int, float, np.integer, np.floating)) and not isinstance(published_reps, bool):
        what += f" (paper: {published_reps:g})"
    pub = pd.to_numeric(scored["published"], errors="coerce").abs()
    se = pd.to_numeric(scored["se_combined"], errors="coerce")
    band = (200.0 * se / pub)[(pub > 0) & se.notna()]
    tail = f"; median 2-SE band {band.median():.2g} % of the published value" if len(band) else ""
    return f"Power: {what}{tail}."


def tally_text(table: pd.DataFrame) -> str:
    """One sentence with the verdict counts of a comparison table (computed, not typed)."""
    t = tally(table)
    real = t["MATCH"] + t["CLOSE"] + t["OFF"]
    parts = [
        (
            f"{t['MATCH']} of {real} compared cells within 2 SE (MATCH), {t['CLOSE']} within "
            f"3 SE (CLOSE), {t['OFF']} further (OFF)"
        )
    ]
    if t["NO SE"]:
        parts.append(f"{t['NO SE']} without any standard error")
    if t["STAND-IN"]:
        parts.append(f"{t['STAND-IN']} on stand-in data (not compared)")
    if t["NOT COMPUTED"]:
        parts.append(f"{t['NOT COMPUTED']} published cells not computed")
    return "; ".join(parts) + "."


class Report:
    """A Markdown report of one vignette run.

    Parameters
    ----------
    title : str
        Report title (also gives the file name, e.g. ``"WSL Table 1"`` -> ``wsl_table_1.md``).
    out_dir : str or Path
        Directory for the report and its figures (created if needed).
    name : str, optional
        File stem instead of the slug of ``title``.

    Examples
    --------
    >>> import tempfile
    >>> rep = Report("Example", tempfile.mkdtemp())
    >>> rep.settings({"reps": 2, "seed": 0})
    >>> rep.text("Two replications.")
    >>> with rep.timed("fit"):
    ...     _ = sum(range(10))
    >>> path = rep.write()
    >>> path.read_text().startswith("# Example")
    True
    """

    def __init__(self, title: str, out_dir, name: str | None = None):
        if not isinstance(title, str) or not title.strip():
            raise ValueError(f"title must be a non-empty string; got {title!r}")
        self.title = title
        self.out_dir = Path(out_dir)
        self.name = _slug(name or title)
        self._blocks: list[str] = []
        self._html_blocks: list[str] = []
        self._timings: list[tuple[str, float]] = []
        self._n_tables = 0
        self._n_figures = 0
        self._comparisons: list[pd.DataFrame] = []
        self._t0 = time.perf_counter()
        self.created = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")

    # ------------------------------------------------------------------ content
    @property
    def files_dir(self) -> Path:
        return self.out_dir / f"{self.name}_files"

    def section(self, title: str, level: int = 2) -> None:
        """Start a section (``##`` heading; ``level=3`` for a subsection)."""
        if level not in (2, 3, 4):
            raise ValueError(f"level must be 2, 3 or 4; got {level!r}")
        self._blocks.append("#" * level + " " + str(title))
        self._html_blocks.append(f"<h{level}>{html.escape(str(title))}</h{level}>")

    def text(self, md: str) -> None:
        """Add a paragraph of Markdown text."""
        self._blocks.append(str(md).strip())
        self._html_blocks.append(f"<p>{html.escape(str(md).strip())}</p>")

    def settings(self, settings: dict) -> None:
        """Record the run settings as a two-column table (setting | value)."""
        if not isinstance(settings, dict):
            raise TypeError(f"settings must be a dict; got {type(settings).__name__}")
        df = pd.DataFrame({"setting": list(map(str, settings)), "value": [str(v) for v in settings.values()]})
        self.table(df, caption="Settings")

    def table(self, df: pd.DataFrame, caption: str | None = None, floatfmt: str = ".4g", index: bool = False) -> None:
        """Add a table (Markdown; floats printed with ``floatfmt``)."""
        self._n_tables += 1
        cap = f"**Table {self._n_tables}.** {caption}" if caption else None
        md = markdown_table(df, floatfmt=floatfmt, index=index)
        self._blocks.append((cap + "\n\n" if cap else "") + md)
        if isinstance(df, pd.Series):
            df = df.to_frame()
        self._html_blocks.append(
            (f"<p>{html.escape(cap.replace('**', ''))}</p>" if cap else "")
            + df.to_html(index=index, float_format=lambda v: format(v, floatfmt), na_rep="", border=0)
        )

    def compare(
        self,
        ours: pd.DataFrame,
        published: pd.DataFrame,
        on,
        value: str,
        se: str | None = None,
        caption: str | None = None,
        floatfmt: str = ".4g",
        published_value: str | None = None,
        published_se: str | None = None,
        *,
        reps=None,
        published_sd: str | None = None,
        published_reps=None,
        min_se: float = 0.0,
        stand_ins: dict | None = None,
        source: str | None = None,
        note: str = "",
        display: bool = True,
    ) -> pd.DataFrame:
        """Add a comparison table (see :func:`compare_table`) with its verdict tally; return it.

        Every comparison is also recorded for ``<name>_comparisons.csv`` (written by
        :meth:`write`, one row per cell), which :mod:`cohstats.vignettes.fidelity` gathers.

        Parameters
        ----------
        source : str, optional
            The published table, e.g. ``"[WSL] Table 1"`` (default: the caption).
        note : str
            A note carried into the CSV for every row of this comparison.
        display : bool
            ``False`` records the comparison for the CSV without printing it (for cells shown
            otherwise, e.g. as a pattern).
        """
        tab = compare_table(
            ours,
            published,
            on=on,
            value=value,
            se=se,
            published_value=published_value,
            published_se=published_se,
            reps=reps,
            published_sd=published_sd,
            published_reps=published_reps,
            min_se=min_se,
            stand_ins=stand_ins,
        )
        keys = [on] if isinstance(on, str) else list(on)
        cap = caption or f"{value}: ours versus published"
        floor = (
            "our SE floored at the paper's per-replication spread / sqrt(reps)"
            if (published_reps is not None or published_sd is not None) and reps is not None
            else "our SE as estimated"
        )
        if min_se:
            floor += f" and at least {min_se:g}"
        if display:
            self.table(
                tab,
                caption=(
                    f"{cap} z = difference / sqrt(published_se^2 + our_se^2), {floor}. {tally_text(tab)} "
                    f"{power_text(tab, published_reps)}"
                ).rstrip(),
                floatfmt=floatfmt,
            )
        back = {v: k for k, v in stand_ins.items()} if isinstance(stand_ins, dict) else {}
        rows = list(tab[keys].itertuples(index=False, name=None))
        rec = pd.DataFrame(
            {
                "report": self.name,
                "source": source or cap,
                "quantity": published_value or value,
                "cell": [" | ".join(_key_text(v) for v in row) for row in rows],
                "published_cell": [
                    " | ".join(_key_text(back.get(v, v) if isinstance(v, str) else v) for v in row) for row in rows
                ],
            }
        )
        for c in ("reps", "ours", "ours_se", "published", "published_se", "difference", "se_combined", "z", "verdict"):
            rec[c] = tab[c].to_numpy()

        def _note(v, n):
            if v == "STAND-IN":
                return "stand-in data" + (f"; {note}" if note else "")
            if v == "NOT COMPUTED" and not pd.isna(n) and n == 0:
                return "no usable replication (every one degenerate)" + (f"; {note}" if note else "")
            return note

        rec["note"] = [_note(v, n) for v, n in zip(tab["verdict"], tab["reps"])]
        self._comparisons.append(rec)
        return tab

    def figure(self, fig, name: str, caption: str | None = None, dpi: int = 110) -> Path:
        """Save a matplotlib figure as PNG next to the report and embed it."""
        import matplotlib.pyplot as plt

        if not hasattr(fig, "savefig"):
            raise TypeError(f"fig must be a matplotlib Figure; got {type(fig).__name__}")
        self._n_figures += 1
        self.files_dir.mkdir(parents=True, exist_ok=True)
        fname = f"{_slug(name)}.png"
        path = self.files_dir / fname
        fig.savefig(path, dpi=dpi, bbox_inches="tight")
        plt.close(fig)
        rel = f"{self.files_dir.name}/{fname}"
        cap = f"**Figure {self._n_figures}.** {caption}" if caption else ""
        self._blocks.append(f"![{caption or name}]({rel})" + (f"\n\n{cap}" if cap else ""))
        self._html_blocks.append(
            f'<figure><img src="{html.escape(rel)}" alt="{html.escape(name)}"/>'
            f"<figcaption>{html.escape(cap.replace('**', ''))}</figcaption></figure>"
        )
        return path

    def timing(self, label: str, seconds: float) -> None:
        """Record a timing (listed at the end of the report)."""
        self._timings.append((str(label), float(seconds)))

    @contextmanager
    def timed(self, label: str):
        """Context manager recording the wall time of its block with :meth:`timing`."""
        t = time.perf_counter()
        try:
            yield
        finally:
            self.timing(label, time.perf_counter() - t)

    # ------------------------------------------------------------------ output
    def _footer(self) -> list[str]:
        import cohstats

        total = time.perf_counter() - self._t0
        rows = self._timings + [("total (report lifetime)", total)]
        tim = pd.DataFrame(rows, columns=["step", "seconds"])
        env = (
            f"cohstats {cohstats.__version__}, numpy {np.__version__}, pandas {pd.__version__}, "
            f"Python {platform.python_version()}, {self.created}"
        )
        return ["## Timings", markdown_table(tim, floatfmt=".2f"), f"_Generated by {env}._"]

    def to_markdown(self) -> str:
        """The whole report as one Markdown string."""
        return "\n\n".join([f"# {self.title}", *self._blocks, *self._footer()]) + "\n"

    def write(self, html_too: bool = True) -> Path:
        """Write ``<out_dir>/<name>.md`` (and ``.html``) and return the Markdown path."""
        self.out_dir.mkdir(parents=True, exist_ok=True)
        path = self.out_dir / f"{self.name}.md"
        md = self.to_markdown()
        path.write_text(md, encoding="utf-8")
        if self._comparisons:
            pd.concat(self._comparisons, ignore_index=True).to_csv(
                self.out_dir / f"{self.name}_comparisons.csv", index=False
            )
        if html_too:
            body = "\n".join([f"<h1>{html.escape(self.title)}</h1>", *self._html_blocks])
            foot = self._footer()
            tim = pd.DataFrame(self._timings, columns=["step", "seconds"])
            body += "<h2>Timings</h2>" + tim.to_html(index=False, border=0, float_format=lambda v: f"{v:.2f}")
            body += f"<p><em>{html.escape(foot[-1].strip('_'))}</em></p>"
            page = (
                "<!DOCTYPE html><html><head><meta charset='utf-8'>"
                f"<title>{html.escape(self.title)}</title><style>"
                "body{font-family:sans-serif;max-width:60em;margin:auto}"
                "table{border-collapse:collapse}td,th{padding:2px 8px;border-bottom:1px solid #ddd}"
                "img{max-width:100%}</style></head><body>" + body + "</body></html>"
            )
            (self.out_dir / f"{self.name}.html").write_text(page, encoding="utf-8")
        return path
