"""Result protocol shared by every fit function: :class:`Fit`, :class:`Summary`, :class:`PathFrame`.

Labels live only here and in :mod:`cohstats.formula`: solvers return arrays, a ``Fit``
re-attaches the names (coefficients by term, probabilities by class, predictions by row).
"""
from __future__ import annotations

import copy
import html
import pickle
from pathlib import Path
from typing import Iterable

import numpy as np
import pandas as pd

from .formula import Design

__all__ = ["Fit", "Summary", "PathFrame", "load", "interpolate_path"]

_TYPES = ("class", "prob", "link")


# ============================================================================ Summary
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

    def __init__(self, title: str, info: dict | None = None, tables: dict | None = None,
                 notes: Iterable[str] | None = None, call: str | None = None):
        self.title = title
        self.info = dict(info or {})
        self.tables = {k: v for k, v in (tables or {}).items()}
        self.notes = list(notes or [])
        self.call = call

    # -- access
    def to_frame(self, name: str | None = None) -> pd.DataFrame:
        """The main table (the first, or the one called ``name``) as a DataFrame."""
        if not self.tables:
            return pd.DataFrame({"value": [_fmt_value(v) for v in self.info.values()]},
                                index=list(self.info))
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
            with pd.option_context("display.width", 120, "display.max_rows", 60,
                                   "display.max_columns", 20, "display.float_format", "{:.6g}".format):
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
        for a, b in (("\\", r"\textbackslash{}"), ("&", r"\&"), ("%", r"\%"), ("$", r"\$"), ("#", r"\#"),
                     ("_", r"\_"), ("{", r"\{"), ("}", r"\}"), ("~", r"\textasciitilde{}"), ("^", r"\^{}")):
            s = s.replace(a, b)
        return s

    def _tex_table(self, df: pd.DataFrame, caption: str, floatfmt) -> str:
        e = self._tex_escape
        lines = [r"\begin{table}[ht]", r"\centering", r"\begin{tabular}{l" + "r" * df.shape[1] + "}",
                 r"\hline", " & ".join([""] + [e(str(c)) for c in df.columns]) + r" \\", r"\hline"]
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


# ============================================================================ PathFrame
class PathFrame(pd.DataFrame):
    """One row per step of a fitted sequence (lambda, pi, boosting step, C ...).

    ``xvar`` names the sequence column and ``coef_columns`` the coefficient columns;
    :meth:`plot` draws the glmnet-style coefficient paths and :meth:`to_long` gives the tidy form.
    """

    _metadata = ["xvar", "coef_columns", "log_x"]

    @property
    def _constructor(self):
        return PathFrame

    @classmethod
    def build(cls, data: pd.DataFrame | dict, xvar: str, coef_columns: Iterable[str] = (),
              log_x: bool | None = None) -> "PathFrame":
        pf = cls(data)
        pf.xvar = xvar
        pf.coef_columns = list(coef_columns)
        pf.log_x = (xvar in ("lambda", "gamma", "C")) if log_x is None else bool(log_x)
        return pf

    def to_long(self) -> pd.DataFrame:
        """Tidy form: one row per (step, term) with the estimate."""
        cols = list(getattr(self, "coef_columns", []) or [])
        xv = getattr(self, "xvar", None) or self.columns[0]
        base = pd.DataFrame(self).reset_index(drop=True)
        base["step"] = np.arange(len(base))
        long = base.melt(id_vars=["step", xv], value_vars=cols, var_name="term", value_name="estimate")
        return long.sort_values(["step", "term"], kind="stable").reset_index(drop=True)

    def plot(self, columns: Iterable[str] | None = None, ax=None, label: bool = True, **kwargs):  # type: ignore[override]
        """Coefficient paths against the sequence (log scale for penalties), glmnet style.

        The top axis shows the number of nonzero coefficients when a ``df`` column exists.
        ``columns`` plots other columns (e.g. ``["train_error", "test_error"]``) instead.
        """
        import matplotlib.pyplot as plt

        xv = getattr(self, "xvar", None) or self.columns[0]
        cols = list(columns) if columns is not None else list(getattr(self, "coef_columns", []) or [])
        if not cols:
            cols = [c for c in self.columns if c != xv]
        if ax is None:
            _, ax = plt.subplots(figsize=(6.4, 4.2))
        x = np.asarray(self[xv], dtype=float)
        logx = bool(getattr(self, "log_x", False)) and np.all(x > 0)
        xp = np.log(x) if logx else x
        for c in cols:
            ax.plot(xp, np.asarray(self[c], dtype=float), lw=1.2, label=str(c), **kwargs)
        ax.set_xlabel(f"log({xv})" if logx else xv)
        ax.set_ylabel("coefficient" if columns is None else "value")
        if columns is None:
            ax.axhline(0.0, color="0.6", lw=0.6)
        if "df" in self.columns and columns is None and len(x) > 1:
            top = ax.twiny()
            top.set_xlim(ax.get_xlim())
            idx = np.unique(np.linspace(0, len(x) - 1, min(6, len(x))).round().astype(int))
            top.set_xticks(xp[idx])
            top.set_xticklabels([str(int(v)) for v in np.asarray(self["df"])[idx]])
            top.set_xlabel("nonzero coefficients")
        if label and len(cols) <= 12:
            ax.legend(fontsize=7, frameon=False)
        return ax


def interpolate_path(lambdas: np.ndarray, values: np.ndarray, s: float) -> np.ndarray:
    """Values (first axis = sequence) at ``s``, linear between neighbouring fitted values.

    As glmnet's ``predict(s=)``: values outside the fitted range take the nearest end.
    """
    lam = np.asarray(lambdas, dtype=float)
    vals = np.asarray(values)
    s = float(s)
    if lam.size == 1:
        return vals[0]
    order = np.argsort(lam)
    ls, vs = lam[order], vals[order]
    if s <= ls[0]:
        return vs[0]
    if s >= ls[-1]:
        return vs[-1]
    k = int(np.searchsorted(ls, s))
    if ls[k] == s:
        return vs[k]
    t = (s - ls[k - 1]) / (ls[k] - ls[k - 1])
    return (1 - t) * vs[k - 1] + t * vs[k]


# ============================================================================ Fit
class Fit:
    """Base class of every fitted model.

    Subclasses implement ``_decision(X, s=None)``, ``_proba(X, s=None, **kw)``,
    ``_summary()`` and usually ``path()`` and ``plot()``; they set ``converged``, ``n_iter``,
    ``_coef`` ((p,) or (p, K)) and ``_intercept`` (float or (K,)).
    Path fits also set ``lambda_`` (the fitted sequence) and ``s`` (the selected value).
    """

    method: str = "fit"
    title: str = "Fitted model"

    def __init__(self, design: Design, call: dict | None = None):
        self.design = design
        self.call = dict(call or {})
        self.converged = True
        self.n_iter = 0
        self._coef = None
        self._intercept = None

    # ------------------------------------------------------------------ facts
    @property
    def classes(self) -> list:
        return list(self.design.classes)

    @property
    def n_classes(self) -> int:
        return self.design.n_classes

    @property
    def nobs(self) -> int:
        return self.design.nobs

    @property
    def formula(self) -> str | None:
        return self.design.formula

    @property
    def xnames(self) -> list:
        return list(self.design.xnames)

    @property
    def is_path(self) -> bool:
        lam = getattr(self, "lambda_", None)
        return lam is not None and np.ndim(lam) == 1 and len(lam) > 1

    def _coef_at(self, s=None):
        """(coef, intercept) arrays at ``s`` for path fits that store ``_coef_path``."""
        cp = getattr(self, "_coef_path", None)
        if cp is None:
            return self._coef, self._intercept
        s = getattr(self, "s", None) if s is None else s
        if s is None:
            s = float(np.asarray(self.lambda_)[-1])
        return interpolate_path(self.lambda_, cp, s), interpolate_path(self.lambda_, self._intercept_path, s)

    @property
    def coef(self):
        """Coefficients by term (Series), or terms x classes (DataFrame) for K > 2."""
        c, _ = self._coef_at(None)
        if c is None:
            raise AttributeError(f"a {type(self).__name__} has no linear coefficients "
                                 "(kernel fits are expansions over training points; see .dual_coef)")
        c = np.asarray(c)
        if c.ndim == 1:
            return pd.Series(c, index=self.xnames, name="estimate")
        return pd.DataFrame(c, index=self.xnames, columns=self.classes)

    @property
    def intercept(self):
        _, b = self._coef_at(None)
        if b is None:
            return None
        b = np.asarray(b)
        if b.ndim == 0:
            return float(b)
        return pd.Series(b, index=self.classes, name="intercept")

    # ------------------------------------------------------------------ prediction
    def _X(self, newdata) -> np.ndarray:
        if newdata is None:
            return self.design.X
        return self.design.new_X(newdata)

    def _index(self, newdata, n):
        if isinstance(newdata, (pd.DataFrame, pd.Series)):
            return newdata.index
        if newdata is None and self.design.row_labels is not None and len(self.design.row_labels) == n:
            return pd.Index(self.design.row_labels)
        return pd.RangeIndex(n)

    def _decision(self, X: np.ndarray, s=None) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def _proba(self, X: np.ndarray, s=None, **kw) -> np.ndarray:
        raise NotImplementedError(f"{type(self).__name__} has no probability estimates")

    def _classify(self, X: np.ndarray, s=None, **kw) -> np.ndarray:
        """Class indices 0..K-1 from the decision values (SPEC D1: f = 0 goes to classes[0])."""
        f = self._decision(X, **({} if s is None else {"s": s}))
        if f.ndim == 1:
            return (f > 0).astype(np.int64)
        return np.argmax(f, axis=1)

    def predict(self, newdata=None, type: str = "class", s=None, **kw):
        """Predict for ``newdata`` (default: the training data).

        Parameters
        ----------
        newdata : DataFrame (formula fits) or array (matrix fits), optional.
        type : ``"class"`` (labels, a Series), ``"prob"`` (DataFrame with one column per
            class, rows sum to one) or ``"link"`` (decision values: Series for two classes,
            DataFrame by class otherwise).
        s : for path fits, the penalty value to predict at (default ``self.s``).
        **kw : passed to the probability method (e.g. ``method="platt"``).
        """
        if type not in _TYPES:
            raise ValueError(f"type must be one of {_TYPES}; got {type!r}")
        X = self._X(newdata)
        sk = {} if s is None else {"s": s}
        idx = self._index(newdata, X.shape[0])
        if type == "link":
            if kw:
                raise TypeError(f"type='link' takes no extra arguments; got {sorted(kw)}")
            f = np.asarray(self._decision(X, **sk))
            if f.ndim == 1:
                return pd.Series(f, index=idx, name="link")
            return pd.DataFrame(f, index=idx, columns=self.classes)
        if type == "prob":
            p = np.asarray(self._proba(X, **sk, **kw), dtype=float)
            if p.ndim == 1:
                p = np.column_stack([1.0 - p, p])
            return pd.DataFrame(p, index=idx, columns=self.classes)
        codes = np.asarray(self._classify(X, **sk, **kw))
        return pd.Series(np.asarray(self.classes, dtype=object)[codes], index=idx, name=self.design.yname)

    def _decision_path(self, X: np.ndarray) -> np.ndarray:
        """Decision values at every fitted value of the sequence (first axis)."""
        if not self.is_path:
            return np.asarray(self._decision(X))[None]
        return np.stack([np.asarray(self._decision(X, s=v)) for v in self.lambda_])

    def _proba_path(self, X: np.ndarray, **kw) -> np.ndarray:
        if not self.is_path:
            return np.asarray(self._proba(X, **kw))[None]
        return np.stack([np.asarray(self._proba(X, s=v, **kw)) for v in self.lambda_])

    def select(self, s) -> "Fit":
        """A copy of a path fit with the selected value ``s`` (used by predict/coef/summary)."""
        if getattr(self, "lambda_", None) is None:
            raise ValueError(f"{type(self).__name__} is not a path fit; nothing to select")
        new = copy.copy(self)
        new.s = float(s)
        return new

    # ------------------------------------------------------------------ reporting
    def _summary(self) -> Summary:  # pragma: no cover - abstract
        raise NotImplementedError

    def summary(self) -> Summary:
        """An R-style summary (print it, or render with ``to_markdown()`` etc.)."""
        return self._summary()

    def calibration(self, newdata, **kw):
        """Calibration on test data: reliability table, Brier, ECE, ``.plot()``
        (:func:`cohstats.calibration.calibration`; ``kw`` as there)."""
        from .calibration import calibration
        return calibration(self, newdata, **kw)

    def path(self) -> PathFrame:
        raise NotImplementedError(f"{type(self).__name__} was not fitted along a sequence")

    def plot(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} has no default plot")

    def call_string(self) -> str:
        args = []
        if self.formula:
            args.append(repr(self.formula))
        for k, v in self.call.items():
            if isinstance(v, np.ndarray):
                v = f"<array of {v.size}>"
            args.append(f"{k}={v!r}")
        return f"{self.method}({', '.join(args)})"

    def _repr_extra(self) -> str:
        return ""

    def __repr__(self) -> str:
        src = self.formula if self.formula else f"{self.design.p} predictors"
        conv = "" if self.converged else ", NOT converged"
        extra = self._repr_extra()
        return (f"<{type(self).__name__} {self.method}({src}): n={self.nobs}, "
                f"{self.n_classes} classes{', ' + extra if extra else ''}{conv}>")

    # ------------------------------------------------------------------ persistence
    def save(self, path) -> None:
        """Save the fit (pickle); :func:`cohstats.results.load` or ``Fit.load`` reads it back."""
        with open(Path(path), "wb") as fh:
            pickle.dump(self, fh, protocol=pickle.HIGHEST_PROTOCOL)

    @classmethod
    def load(cls, path) -> "Fit":
        return load(path, expected=cls)


def load(path, expected: type | None = None) -> Fit:
    """Load a fit saved with :meth:`Fit.save` (only load files you trust: this is pickle)."""
    with open(Path(path), "rb") as fh:
        obj = pickle.load(fh)
    if expected is not None and not isinstance(obj, expected):
        raise TypeError(f"{path} holds a {type(obj).__name__}, not a {expected.__name__}")
    return obj
