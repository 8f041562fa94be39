"""The :class:`Design`: solver-ready arrays (``X``, coded ``y``, ``weights``) with what a result needs
to speak the user's language again (``classes``, ``xnames``, the formulaic ``ModelSpec`` that
rebuilds ``X`` for new data); :func:`cohstats.formula.build_design` makes it.

Documented, saved and loaded as ``cohstats.formula.Design``; the conventions are those of
:mod:`cohstats.formula`.
"""

from __future__ import annotations

import copy
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd


def _fmt_list(values, limit=8) -> str:
    values = list(values)
    shown = ", ".join(repr(v) for v in values[:limit])
    if len(values) > limit:
        shown += f", ... ({len(values)} in all)"
    return shown


def _rows_desc(labels, limit=5) -> str:
    labels = list(labels)
    s = ", ".join(str(v) for v in labels[:limit])
    if len(labels) > limit:
        s += f", ... ({len(labels)} rows)"
    return s


@dataclass
class Design:
    """Solver-ready design built from a formula and a DataFrame, or from arrays.

    Attributes
    ----------
    X : ndarray (n, p) float64, no intercept column.
    y : ndarray (n,) -- float64 +-1 for two classes, int64 0..K-1 for K classes.
    classes : list of the original labels, in coding order.
    xnames : list of column names of X.
    yname : name of the response.
    weights : ndarray (n,) float64 observation weights (ones when none were given).
    formula : the formula string, or None for matrix input.
    intercept : whether the model has an intercept (False after ``- 1`` / ``+ 0``).
    n_dropped : rows removed before fitting; ``dropped`` says why (reason -> count).
    row_labels : index labels (of the caller's data) of the rows used.
    na_action : how rows with missing values were handled (:data:`cohstats.formula.NA_ACTIONS`).
    na_padding : under ``na_action="exclude"``, ``(labels, kept)``: the index labels of the rows
        considered (after ``subset``) and which of them were fitted, so that ``predict()`` pads
        the training predictions back to those rows; None otherwise.
    offset, offset_cols, offset_given : the offsets of the rows (added to the link; None when
        there are none), the data columns they were read from (``offset(col)`` terms or
        ``offset="col"``) and whether an array was given (``offset=``), which prediction on new
        data then needs again.
    rhs, frame : the formula's right-hand side and the data columns (rows used) the formulaic
        ``spec`` was built on; :mod:`cohstats.persist` rebuilds ``spec`` from them on load.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"y": ["a", "b", "a", "b"], "x": [0.1, 0.9, 0.2, 0.7]})
    >>> d = build_design("y ~ x", df)
    >>> d.y, d.classes
    (array([-1.,  1., -1.,  1.]), ['a', 'b'])
    """

    X: np.ndarray
    y: np.ndarray
    classes: list
    xnames: list
    yname: str | None
    weights: np.ndarray
    formula: str | None = None
    intercept: bool = True
    n_dropped: int = 0
    dropped: dict = field(default_factory=dict)
    row_labels: Any = None
    spec: Any = None  # formulaic ModelSpec (formula input) or None
    variables: tuple = ()  # data columns the right-hand side needs
    categorical_levels: dict = field(default_factory=dict)  # data column -> allowed levels
    weights_given: bool = False
    rhs: str | None = None  # right-hand side as given to formulaic (after ``.`` expansion)
    frame: Any = field(default=None, repr=False, compare=False)  # the data columns ``spec`` was built on
    na_action: str = "omit"
    na_padding: Any = field(default=None, repr=False, compare=False)
    offset: Any = None  # (n,) float64 offsets of the rows, or None
    offset_cols: tuple = ()  # data columns summed into the offset (read from newdata at prediction)
    offset_given: bool = False  # an offset= array was given (prediction on new data needs offset=)

    # ------------------------------------------------------------------ basic facts
    @property
    def n_classes(self) -> int:
        return len(self.classes)

    @property
    def binary(self) -> bool:
        return len(self.classes) == 2

    @property
    def nobs(self) -> int:
        return int(self.X.shape[0])

    @property
    def p(self) -> int:
        return int(self.X.shape[1])

    @property
    def y_int(self) -> np.ndarray:
        """Response as class indices 0..K-1 (also for two classes)."""
        if self.binary:
            return (self.y > 0).astype(np.int64)
        return self.y.astype(np.int64)

    @property
    def y_labels(self) -> np.ndarray:
        """Response as the original labels."""
        return np.asarray(self.classes, dtype=object)[self.y_int]

    def __repr__(self) -> str:
        src = f"formula={self.formula!r}" if self.formula else "matrix input"
        return (
            f"<Design {src}: n={self.nobs}, p={self.p}, classes={self.classes!r}"
            + (f", dropped={self.n_dropped}" if self.n_dropped else "")
            + ">"
        )

    # ------------------------------------------------------------------ derived designs
    def take(self, rows) -> "Design":
        """A design restricted to ``rows`` (positions or a boolean mask).

        Classes and their coding are kept, even if a class is absent from the subset, so
        predictions of fits on folds line up with the full-data coding.
        """
        rows = np.asarray(rows)
        if rows.dtype == bool:
            if rows.shape[0] != self.nobs:
                raise ValueError(f"boolean rows mask has length {rows.shape[0]}, expected {self.nobs}")
            rows = np.flatnonzero(rows)
        d = copy.copy(self)
        d.X = np.ascontiguousarray(self.X[rows])
        d.y = np.ascontiguousarray(self.y[rows])
        d.weights = np.ascontiguousarray(self.weights[rows])
        if self.row_labels is not None:
            d.row_labels = np.asarray(self.row_labels)[rows]
        d.na_padding = None  # the padding belongs to the full training rows
        if self.offset is not None:
            d.offset = np.ascontiguousarray(self.offset[rows])
        return d

    def replace(self, X=None, y=None, weights=None) -> "Design":
        """A copy with ``X``, ``y`` (already coded) or ``weights`` replaced (perturbation, bootstrap)."""
        d = copy.copy(self)
        if X is not None:
            X = np.ascontiguousarray(X, dtype=np.float64)
            if X.ndim != 2 or X.shape[1] != self.p:
                raise ValueError(f"replacement X must have shape (n, {self.p}); got {X.shape}")
            d.X = X
        if y is not None:
            y = np.asarray(y)
            d.y = np.ascontiguousarray(y, dtype=np.float64 if self.binary else np.int64)
        if weights is not None:
            d.weights = _check_weights(weights, d.X.shape[0])
        n = d.X.shape[0]
        if d.y.shape[0] != n or d.weights.shape[0] != n:
            if weights is None and d.weights.shape[0] != n and self.weights_given is False:
                d.weights = np.ones(n)
            if d.y.shape[0] != n or d.weights.shape[0] != n:
                raise ValueError(
                    f"replacement has {n} rows of X but {d.y.shape[0]} responses and {d.weights.shape[0]} weights"
                )
        if n != self.nobs:
            if self.offset is not None:
                raise ValueError("a design with an offset cannot take a replacement with another number of rows")
            d.row_labels = None
            d.na_padding = None
        return d

    def new_offset(self, newdata, offset=None):
        """Offsets of the rows of ``newdata`` (None when the model has none): the sum of its
        ``offset_cols`` plus ``offset`` (an array, required when the fit was given ``offset=``
        as an array; 0 for the training data's own rows is never assumed)."""
        if self.offset is None:
            if offset is not None:
                raise ValueError("offset= was given to predict, but the model was fitted without an offset")
            return None
        if newdata is None:
            if offset is not None:
                raise ValueError("offset= at predict goes with newdata; the training rows keep their own offsets")
            return self.offset
        n = len(newdata) if isinstance(newdata, (pd.DataFrame, dict)) else np.atleast_2d(np.asarray(newdata)).shape[0]
        if isinstance(newdata, dict):
            newdata = pd.DataFrame(newdata)
        out = np.zeros(n)
        for c in self.offset_cols:
            if not isinstance(newdata, pd.DataFrame) or c not in newdata.columns:
                raise ValueError(f"newdata lacks the offset column {c!r} of the formula {self.formula!r}")
            col = pd.to_numeric(newdata[c]).to_numpy(dtype=np.float64, na_value=np.nan)
            if np.isnan(col).any():
                na = np.isnan(col)
                raise ValueError(
                    f"newdata column {c!r} (an offset) has {int(na.sum())} missing value(s) "
                    f"(rows {_rows_desc(newdata.index[na])}); predictions need complete rows"
                )
            out += col
        if self.offset_given:
            if offset is None:
                raise ValueError(
                    "this fit was given offset= as an array, so predicting new data needs their offsets: "
                    "predict(newdata, offset=...)"
                )
            o = np.asarray(offset, dtype=np.float64)
            if o.shape != (n,) or not np.all(np.isfinite(o)):
                raise ValueError(f"offset must hold {n} finite values, one per row of newdata; got shape {o.shape}")
            out += o
        elif offset is not None:
            raise ValueError(
                f"this fit reads its offset from column(s) {_fmt_list(self.offset_cols)} of newdata, not offset="
            )
        return out

    # ------------------------------------------------------------------ coding
    def code_y(self, labels) -> np.ndarray:
        """Code response labels like ``self.y`` (+-1 or 0..K-1); unseen labels are an error."""
        lab = pd.Series(np.asarray(labels, dtype=object) if not isinstance(labels, pd.Series) else labels)
        if lab.isna().any():
            raise ValueError(f"response has {int(lab.isna().sum())} missing values")
        lookup = {c: k for k, c in enumerate(self.classes)}
        codes = np.empty(len(lab), dtype=np.int64)
        for i, v in enumerate(lab.to_numpy(dtype=object)):
            k = lookup.get(v)
            if k is None:
                # allow 1 == 1.0 == np.int64(1) style matches
                k = next((kk for c, kk in lookup.items() if _same_label(c, v)), None)
            if k is None:
                raise ValueError(f"response value {v!r} is not one of the training classes {self.classes!r}")
            codes[i] = k
        if self.binary:
            return np.where(codes == 1, 1.0, -1.0)
        return codes

    # ------------------------------------------------------------------ new data
    def complete_rows(self, newdata):
        """Under ``na_action="exclude"``: the boolean mask of the rows of ``newdata`` with every
        value the model needs, or None when all rows are complete (or under another
        ``na_action``, where :meth:`new_X` refuses incomplete rows by column and rows)."""
        if self.na_action != "exclude" or newdata is None:
            return None
        if self.spec is None:
            if isinstance(newdata, pd.DataFrame) and all(c in newdata.columns for c in self.xnames):
                vals = newdata[self.xnames]
            else:
                vals = newdata
            try:
                X = np.asarray(vals, dtype=np.float64)
            except (TypeError, ValueError):
                return None  # new_X says what is wrong
            if X.ndim == 1:
                X = X[None, :]
            if X.ndim != 2:
                return None
            keep = ~np.isnan(X).any(axis=1)
        else:
            if isinstance(newdata, dict):
                newdata = pd.DataFrame(newdata)
            if not isinstance(newdata, pd.DataFrame):
                return None
            cols = [v for v in (*self.variables, *self.offset_cols) if v in newdata.columns]
            keep = ~newdata[cols].isna().any(axis=1).to_numpy() if cols else np.ones(len(newdata), dtype=bool)
        return None if keep.all() else keep

    def new_X(self, newdata) -> np.ndarray:
        """Rebuild the design matrix for ``newdata`` exactly as in training.

        Raises
        ------
        ValueError
            if a needed column is missing, a factor has a level not seen in training, or a
            value is missing or not finite.
        """
        if self.spec is None:
            return self._new_X_matrix(newdata)
        if isinstance(newdata, dict):
            newdata = pd.DataFrame(newdata)
        if not isinstance(newdata, pd.DataFrame):
            raise TypeError(f"newdata must be a pandas DataFrame for a formula fit; got {type(newdata).__name__}")
        missing = [v for v in self.variables if v not in newdata.columns]
        if missing:
            raise ValueError(f"newdata lacks column(s) {_fmt_list(missing)} needed by the formula {self.formula!r}")
        nd = _strings_as_objects(newdata.reset_index(drop=True), self.variables)
        for col in self.variables:
            na = nd[col].isna().to_numpy()
            if na.any():
                raise ValueError(
                    f"newdata column {col!r} has {int(na.sum())} missing value(s) "
                    f"(rows {_rows_desc(newdata.index[na])}); predictions need complete rows"
                )
        for col, levels in self.categorical_levels.items():
            vals = pd.unique(nd[col].to_numpy(dtype=object))
            allowed = set(levels)
            unseen = [v for v in vals if v not in allowed and not any(_same_label(v, a) for a in levels)]
            if unseen:
                raise ValueError(
                    f"column {col!r} has level(s) {_fmt_list(unseen)} not seen in training; "
                    f"training levels: {_fmt_list(levels)}"
                )
        frame = self.frame if isinstance(self.frame, pd.DataFrame) else None
        for col in self.variables:
            if (
                frame is not None
                and col in frame.columns
                and col not in self.categorical_levels
                and pd.api.types.is_numeric_dtype(frame[col])
                and not pd.api.types.is_numeric_dtype(nd[col])
            ):
                raise ValueError(
                    f"newdata column {col!r} is not numeric (dtype {nd[col].dtype}, e.g. "
                    f"{nd[col].iloc[0]!r}); it held numbers in training -- convert it, e.g. "
                    f"pd.to_numeric(newdata[{col!r}])"
                )
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                mm = self.spec.get_model_matrix(nd)
            except Exception as e:  # noqa: BLE001 - formulaic's own errors, said in our words
                raise ValueError(f"newdata does not give the training design of {self.formula!r}: {e}") from None
        for w in caught:
            msg = str(w.message)
            if "categories outside" in msg or "not seen in original" in msg:
                raise ValueError(f"newdata has a factor level not seen in training: {msg}")
        X = _to_float_matrix(mm, drop_intercept=True)
        bad = ~np.isfinite(X)
        if bad.any():
            j = int(np.flatnonzero(bad.any(axis=0))[0])
            raise ValueError(f"newdata gives non-finite values in column {self.xnames[j]!r}")
        if X.shape[1] != self.p:
            raise ValueError(f"newdata produced {X.shape[1]} columns, training had {self.p}")
        return X

    def _new_X_matrix(self, newdata) -> np.ndarray:
        if isinstance(newdata, pd.DataFrame):
            missing = [c for c in self.xnames if c not in newdata.columns]
            if missing:
                if newdata.shape[1] == self.p and all(isinstance(c, (int, np.integer)) for c in newdata.columns):
                    X = newdata.to_numpy()
                else:
                    raise ValueError(f"newdata lacks column(s) {_fmt_list(missing)}")
            else:
                X = newdata[self.xnames].to_numpy()
        else:
            X = np.asarray(newdata)
            if X.ndim == 1 and self.p == X.shape[0]:
                X = X[None, :]
        try:
            X = np.asarray(X, dtype=np.float64)
        except (TypeError, ValueError) as e:
            raise TypeError(f"newdata must be numeric: {e}") from None
        if X.ndim != 2 or X.shape[1] != self.p:
            raise ValueError(f"newdata must have {self.p} columns ({_fmt_list(self.xnames)}); got shape {X.shape}")
        bad = ~np.isfinite(X)
        if bad.any():
            j = int(np.flatnonzero(bad.any(axis=0))[0])
            raise ValueError(f"newdata column {self.xnames[j]!r} has missing or non-finite values")
        return np.ascontiguousarray(X)


def _same_label(a, b) -> bool:
    try:
        return bool(a == b) and type(a) is not type(b) and not isinstance(a, str) and not isinstance(b, str)
    except Exception:
        return False


def _to_float_matrix(mm, drop_intercept: bool) -> np.ndarray:
    cols = list(mm.columns)
    if drop_intercept and "Intercept" in cols:
        mm = mm.drop(columns="Intercept")
    try:
        X = np.asarray(mm.to_numpy(dtype=np.float64) if hasattr(mm, "to_numpy") else mm, dtype=np.float64)
    except (TypeError, ValueError) as e:
        bad = [c for c in getattr(mm, "columns", []) if not pd.api.types.is_numeric_dtype(mm[c])]
        which = f" (column(s) {_fmt_list(bad)})" if bad else ""
        raise TypeError(f"the design matrix is not numeric{which}: {e}") from None
    return np.ascontiguousarray(X)


def _check_weights(weights, n) -> np.ndarray:
    try:
        w = np.asarray(weights, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError("weights must be numeric") from None
    if w.ndim != 1 or w.shape[0] != n:
        raise ValueError(f"weights must be a 1-D array of length {n}; got shape {w.shape}")
    if not np.all(np.isfinite(w)):
        i = int(np.flatnonzero(~np.isfinite(w))[0])
        raise ValueError(f"weights must be finite; weight {i} is {float(w[i])!r}")
    if np.any(w < 0):
        i = int(np.flatnonzero(w < 0)[0])
        raise ValueError(f"weights must be non-negative; weight {i} is {float(w[i])!r}")
    if not np.any(w > 0):
        raise ValueError("weights are all zero")
    return np.ascontiguousarray(w)


def _strings_as_objects(df: pd.DataFrame, columns) -> pd.DataFrame:
    """pandas ``string`` columns as ``object`` columns: formulaic takes the latter for factors
    (an ``object`` column with the same values) but not the former."""
    strs = [c for c in columns if c in df.columns and isinstance(df[c].dtype, pd.StringDtype)]
    if not strs:
        return df
    df = df.copy()
    for c in strs:
        df[c] = df[c].astype(object)
    return df


Design.__module__ = "cohstats.formula"  # its public home (documentation, saved files)
