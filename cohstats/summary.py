"""The R-style :class:`Summary` (a header of key facts, named tables, notes) and :class:`FitBase`.

Both sit below :mod:`cohstats.results`: the reporting modules (:mod:`cohstats.reporting`,
:mod:`cohstats.calibration`) build summaries and take fits without importing the ``Fit`` class
that uses them. ``Summary`` is documented, saved and loaded as ``cohstats.results.Summary``.
"""

from __future__ import annotations

import html
from typing import Iterable

import numpy as np
import pandas as pd

__all__ = ["Summary", "FitBase"]


class FitBase:
    """The root of every fitted model, :class:`cohstats.results.Fit` (its only direct subclass).

    ``isinstance(obj, FitBase)`` is ``isinstance(obj, Fit)`` for the modules below
    :mod:`cohstats.results`, which may not import it.
    """

    __slots__ = ()


def _fmt_value(v) -> str:
    if isinstance(v, (bool, np.bool_)):
        return "yes" if v else "no"
    if isinstance(v, (float, np.floating)):
        v = float(v)
        if v == 0 or (1e-4 <= abs(v) < 1e6):
            return f"{v:.6g}"
        return f"{v:.4e}"
    if isinstance(v, (list, tuple)):
        return ", ".join(_fmt_value(x) for x in v)
    return str(v)


def _fmt_cell(v, floatfmt="{:.6g}") -> str:
    if isinstance(v, (float, np.floating)):
        if np.isnan(v):
            return ""
        return floatfmt.format(float(v))
    return str(v)


class Summary:
    """An R-style summary: a header of key facts, named tables and notes.

    Printing gives the text report; :meth:`to_frame`, :meth:`to_markdown`, :meth:`to_latex`
    and :meth:`to_html` render it for reports.

    Examples
    --------
    >>> s = Summary("Demo fit", {"n": 10, "lambda": 0.1},
    ...             {"Coefficients": pd.DataFrame({"estimate": [1.0, -2.0]}, index=["a", "b"])})
    >>> print(s.to_markdown().splitlines()[0])
    ### Demo fit
    """

    def __init__(
        self,
        title: str,
        info: dict | None = None,
        tables: dict | None = None,
        notes: Iterable[str] | None = None,
        call: str | None = None,
    ):
        self.title = title
        self.info = dict(info or {})
        self.tables = {k: v for k, v in (tables or {}).items()}
        self.notes = list(notes or [])
        self.call = call

    # -- access
    def to_frame(self, name: str | None = None) -> pd.DataFrame:
        """The main table (the first, or the one called ``name``) as a DataFrame."""
        if not self.tables:
            return pd.DataFrame({"value": [_fmt_value(v) for v in self.info.values()]}, index=list(self.info))
        if name is None:
            return next(iter(self.tables.values())).copy()
        if name not in self.tables:
            raise KeyError(f"no table {name!r}; tables: {list(self.tables)}")
        return self.tables[name].copy()

    def info_frame(self) -> pd.DataFrame:
        return pd.DataFrame({"value": [_fmt_value(v) for v in self.info.values()]}, index=list(self.info))

    def __getitem__(self, key):
        if key in self.tables:
            return self.tables[key]
        return self.info[key]

    # -- text
    def __str__(self) -> str:
        lines = [self.title, "=" * len(self.title)]
        if self.call:
            lines.append(f"Call: {self.call}")
        if self.info:
            keys = list(self.info)
            width = max(len(k) for k in keys)
            items = [f"{k:<{width}} : {_fmt_value(self.info[k])}" for k in keys]
            lines.append("")
            lines.extend(items)
        for name, tab in self.tables.items():
            lines.append("")
            lines.append(f"{name}:")
            with pd.option_context(
                "display.width",
                120,
                "display.max_rows",
                60,
                "display.max_columns",
                20,
                "display.float_format",
                "{:.6g}".format,
            ):
                lines.append(tab.to_string())
        if self.notes:
            lines.append("")
            lines.extend(f"Note: {n}" for n in self.notes)
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.__str__()

    def _repr_html_(self) -> str:
        return self.to_html()

    # -- renderers
    @staticmethod
    def _md_table(df: pd.DataFrame, floatfmt="{:.6g}") -> str:
        cols = [""] + [str(c) for c in df.columns]
        rows = [[str(i)] + [_fmt_cell(v, floatfmt) for v in r] for i, r in zip(df.index, df.itertuples(index=False))]
        out = ["| " + " | ".join(cols) + " |", "|" + "|".join(["---"] + ["---:"] * len(df.columns)) + "|"]
        out += ["| " + " | ".join(r) + " |" for r in rows]
        return "\n".join(out)

    def to_markdown(self, floatfmt: str = "{:.6g}") -> str:
        out = [f"### {self.title}", ""]
        if self.call:
            out += [f"`{self.call}`", ""]
        if self.info:
            out.append(self._md_table(self.info_frame()))
            out.append("")
        for name, tab in self.tables.items():
            out += [f"**{name}**", "", self._md_table(tab, floatfmt), ""]
        out += [f"*Note:* {n}" for n in self.notes]
        return "\n".join(out).rstrip() + "\n"

    @staticmethod
    def _tex_escape(s: str) -> str:
        for a, b in (
            ("\\", r"\textbackslash{}"),
            ("&", r"\&"),
            ("%", r"\%"),
            ("$", r"\$"),
            ("#", r"\#"),
            ("_", r"\_"),
            ("{", r"\{"),
            ("}", r"\}"),
            ("~", r"\textasciitilde{}"),
            ("^", r"\^{}"),
        ):
            s = s.replace(a, b)
        return s

    def _tex_table(self, df: pd.DataFrame, caption: str, floatfmt) -> str:
        e = self._tex_escape
        lines = [
            r"\begin{table}[ht]",
            r"\centering",
            r"\begin{tabular}{l" + "r" * df.shape[1] + "}",
            r"\hline",
            " & ".join([""] + [e(str(c)) for c in df.columns]) + r" \\",
            r"\hline",
        ]
        for i, r in zip(df.index, df.itertuples(index=False)):
            lines.append(" & ".join([e(str(i))] + [e(_fmt_cell(v, floatfmt)) for v in r]) + r" \\")
        lines += [r"\hline", r"\end{tabular}", rf"\caption{{{e(caption)}}}", r"\end{table}"]
        return "\n".join(lines)

    def to_latex(self, floatfmt: str = "{:.4g}") -> str:
        parts = []
        if self.info:
            parts.append(self._tex_table(self.info_frame(), self.title, floatfmt))
        for name, tab in self.tables.items():
            parts.append(self._tex_table(tab, f"{self.title}: {name}", floatfmt))
        return "\n\n".join(parts) + "\n"

    def to_html(self) -> str:
        out = [f"<h3>{html.escape(self.title)}</h3>"]
        if self.call:
            out.append(f"<p><code>{html.escape(self.call)}</code></p>")
        if self.info:
            out.append(self.info_frame().to_html(header=False))
        for name, tab in self.tables.items():
            out.append(f"<h4>{html.escape(name)}</h4>")
            out.append(tab.to_html(float_format=lambda v: f"{v:.6g}", na_rep=""))
        out += [f"<p><em>Note:</em> {html.escape(n)}</p>" for n in self.notes]
        return "\n".join(out)


Summary.__module__ = "cohstats.results"  # its public home (documentation, saved files)
