"""Markdown (and HTML) reports for the vignettes: settings, tables, ours-vs-published, figures.

A vignette builds one :class:`Report`, adds sections, tables and figures, and calls
:meth:`Report.write`, which writes ``<out_dir>/<slug>.md`` (figures in ``<out_dir>/<slug>_files``)
and, when the optional ``markdown`` package is importable, the same report as HTML. Nothing here
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

__all__ = ["Report", "compare_table", "markdown_table"]


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
    num = [pd.api.types.is_numeric_dtype(df[c]) and not pd.api.types.is_bool_dtype(df[c])
           for c in df.columns]
    lines = ["| " + " | ".join(c.replace("|", "\\|") for c in cols) + " |",
             "|" + "|".join("---:" if k else ":---" for k in num) + "|"]
    for row in df.itertuples(index=False, name=None):
        lines.append("| " + " | ".join(_fmt_cell(v, floatfmt) for v in row) + " |")
    return "\n".join(lines)


def compare_table(ours: pd.DataFrame, published: pd.DataFrame, on: Sequence[str] | str,
                  value: str | Sequence[str], se: str | None = None,
                  published_value: str | None = None, published_se: str | None = None
                  ) -> pd.DataFrame:
    """Join our results with the published ones: ``ours | published | difference | ours_se``.

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
        Column of our standard error (then ``z = difference / ours_se`` is added).
    published_value, published_se : str, optional
        Column names in ``published`` when they differ from ``value`` / absent.

    Returns
    -------
    DataFrame with the keys and ``ours``, ``published``, ``difference`` (ours - published),
    ``ours_se`` and ``z`` (when ``se`` is given), ``published_se`` (when given). Rows present in
    only one table are kept with blanks (outer join), so missing cells are visible.

    Examples
    --------
    >>> a = pd.DataFrame({"m": ["x", "y"], "err": [0.10, 0.21], "se": [0.01, 0.01]})
    >>> b = pd.DataFrame({"m": ["x", "y"], "err": [0.12, 0.20]})
    >>> compare_table(a, b, on="m", value="err", se="se")["difference"].round(3).tolist()
    [-0.02, 0.01]
    """
    keys = [on] if isinstance(on, str) else list(on)
    if not isinstance(value, str):
        raise TypeError("value must be a single column name (call compare() once per quantity)")
    pv = published_value or value
    for name, df, cols in (("ours", ours, keys + [value] + ([se] if se else [])),
                           ("published", published, keys + [pv] + ([published_se] if published_se else []))):
        if not isinstance(df, pd.DataFrame):
            raise TypeError(f"{name} must be a pandas DataFrame; got {type(df).__name__}")
        missing = [c for c in cols if c not in df.columns]
        if missing:
            raise ValueError(f"{name} lacks column(s) {missing}; it has {list(df.columns)}")
    a = ours[keys + [value] + ([se] if se else [])].rename(columns={value: "ours"})
    if se:
        a = a.rename(columns={se: "ours_se"})
    b = published[keys + [pv] + ([published_se] if published_se else [])].rename(
        columns={pv: "published"})
    if published_se:
        b = b.rename(columns={published_se: "published_se"})
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
    out["ours"] = pd.to_numeric(out["ours"], errors="coerce")
    out["published"] = pd.to_numeric(out["published"], errors="coerce")
    out["difference"] = out["ours"] - out["published"]
    cols = keys + ["ours", "published", "difference"]
    if se:
        out["z"] = out["difference"] / out["ours_se"]
        cols += ["ours_se", "z"]
    if published_se:
        cols += ["published_se"]
    return out[cols]


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
        df = pd.DataFrame({"setting": list(map(str, settings)),
                           "value": [str(v) for v in settings.values()]})
        self.table(df, caption="Settings")

    def table(self, df: pd.DataFrame, caption: str | None = None, floatfmt: str = ".4g",
              index: bool = False) -> None:
        """Add a table (Markdown; floats printed with ``floatfmt``)."""
        self._n_tables += 1
        cap = f"**Table {self._n_tables}.** {caption}" if caption else None
        md = markdown_table(df, floatfmt=floatfmt, index=index)
        self._blocks.append((cap + "\n\n" if cap else "") + md)
        if isinstance(df, pd.Series):
            df = df.to_frame()
        self._html_blocks.append(
            (f"<p>{html.escape(cap.replace('**', ''))}</p>" if cap else "")
            + df.to_html(index=index, float_format=lambda v: format(v, floatfmt), na_rep="",
                         border=0))

    def compare(self, ours: pd.DataFrame, published: pd.DataFrame, on, value: str,
                se: str | None = None, caption: str | None = None, floatfmt: str = ".4g",
                published_value: str | None = None, published_se: str | None = None
                ) -> pd.DataFrame:
        """Add a table ``keys | ours | published | difference | ours_se | z`` and return it.

        See :func:`compare_table` for the arguments.
        """
        tab = compare_table(ours, published, on=on, value=value, se=se,
                            published_value=published_value, published_se=published_se)
        self.table(tab, caption=caption or f"{value}: ours versus published", floatfmt=floatfmt)
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
            f"<figcaption>{html.escape(cap.replace('**', ''))}</figcaption></figure>")
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
        env = (f"cohstats {cohstats.__version__}, numpy {np.__version__}, pandas {pd.__version__}, "
               f"Python {platform.python_version()}, {self.created}")
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
        if html_too:
            body = "\n".join([f"<h1>{html.escape(self.title)}</h1>", *self._html_blocks])
            foot = self._footer()
            tim = pd.DataFrame(self._timings, columns=["step", "seconds"])
            body += "<h2>Timings</h2>" + tim.to_html(index=False, border=0,
                                                       float_format=lambda v: f"{v:.2f}")
            body += f"<p><em>{html.escape(foot[-1].strip('_'))}</em></p>"
            page = ("<!DOCTYPE html><html><head><meta charset='utf-8'>"
                    f"<title>{html.escape(self.title)}</title><style>"
                    "body{font-family:sans-serif;max-width:60em;margin:auto}"
                    "table{border-collapse:collapse}td,th{padding:2px 8px;border-bottom:1px solid #ddd}"
                    "img{max-width:100%}</style></head><body>" + body + "</body></html>")
            (self.out_dir / f"{self.name}.html").write_text(page, encoding="utf-8")
        return path

