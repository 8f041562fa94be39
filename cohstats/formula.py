"""Formula front end: from ``(formula, data)`` or ``(X, y)`` to solver-ready arrays.

A :class:`Design` holds everything a solver needs (``X``, coded ``y``, ``weights``) and
everything a result needs to speak the user's language again (``classes``, ``xnames``,
the formulaic ``ModelSpec`` to rebuild ``X`` for new data).

Conventions:

* ``X`` is float64, C-contiguous, **without** an intercept column. The intercept is fitted
  (unpenalised) by the solvers unless the formula removes it (``- 1`` or ``+ 0``), in which case
  ``design.intercept`` is ``False`` and categorical predictors get full-rank coding.
* Two classes are coded ``-1 / +1`` (float64), the second level in ``classes`` being ``+1``
  (R's convention for ``glm``). ``K > 2`` classes are coded ``0..K-1`` (int64).
* Missing values follow ``na_action``, R's vocabulary (:data:`NA_ACTIONS`): ``"omit"`` (the
  default) drops the rows with a missing response or a missing value in any predictor the formula
  uses, and counts them by reason in ``design.dropped`` (shown by ``summary()``); ``"exclude"``
  drops them the same way but ``predict`` pads its output back with missing rows, as R's
  ``na.exclude`` (the training rows for ``predict()``, the incomplete rows of ``newdata`` for
  ``predict(newdata)``); ``"fail"`` refuses them, naming the column and the rows. ``"raise"``,
  the name of earlier releases, is a deprecated alias of ``"fail"``. A missing response is
  dropped, never guessed.
* ``new_X(newdata)`` rebuilds the training columns exactly and refuses unseen factor levels
  and missing columns, where formulaic alone would silently map an unseen level to the
  reference level.

Layout: the :class:`Design` class lives in :mod:`cohstats.design`; this module builds it.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
from cohstats.validation import Options
from cohstats.design import Design, _check_weights, _fmt_list, _rows_desc, _strings_as_objects, _to_float_matrix

__all__ = ["Design", "build_design", "NA_ACTIONS"]

#: The values of ``na_action`` every fit function accepts (R's ``na.omit``, ``na.exclude``,
#: ``na.fail``); ``"raise"`` is still taken as a deprecated alias of ``"fail"``.
NA_ACTIONS = ("omit", "exclude", "fail")


class NAAction(Options):
    """The ``na_action`` argument of every fit function: one of :data:`NA_ACTIONS` (the
    deprecated ``"raise"`` is accepted too, and not listed)."""

    def __init__(self):
        Options.__init__(self, *NA_ACTIONS)

    def ok(self, v):
        return (isinstance(v, str) and v == "raise") or Options.ok(self, v)

    def __eq__(self, other):
        return type(other) is type(self)

    def __hash__(self):
        return hash(type(self))


def check_na_action(na_action) -> str:
    """``na_action`` as one of :data:`NA_ACTIONS`; ``"raise"`` warns (FutureWarning) and is ``"fail"``."""
    if isinstance(na_action, str) and na_action == "raise":
        warnings.warn(
            "na_action='raise' is deprecated; use na_action='fail' (R's na.fail), which it now means",
            FutureWarning,
            stacklevel=3,
        )
        return "fail"
    if not (isinstance(na_action, str) and na_action in NA_ACTIONS):
        raise ValueError(f"na_action must be one of {', '.join(map(repr, NA_ACTIONS))}; got {na_action!r}")
    return na_action


_DOT = re.compile(r"(?<![\w.\]\)])\.(?![\w.(])")


def _quote(name: str) -> str:
    return name if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) else f"`{name}`"


def _classes_of(y: pd.Series, name: str):
    """Ordered classes of a response: categorical order, else sorted unique values."""
    if isinstance(y.dtype, pd.CategoricalDtype):
        present = set(y.dropna().unique())
        classes = [c for c in y.cat.categories if c in present]
    else:
        vals = pd.unique(y.dropna())
        try:
            classes = sorted(vals.tolist())
        except TypeError:
            classes = list(vals)
    classes = [c.item() if isinstance(c, np.generic) else c for c in classes]
    _check_categorical_like(y, name, classes)
    if len(classes) < 2:
        raise ValueError(
            f"response {name!r} has only one class ({_fmt_list(classes)}); classification needs at least two"
        )
    return classes


# A numeric response with more distinct values than this is taken for a continuous variable.
MAX_NUMERIC_LEVELS = 30


def _check_categorical_like(y: pd.Series, name: str, classes) -> None:
    """Refuse a response that looks continuous: a classification response is categorical-like.

    Strings, booleans and categoricals are always class labels. A numeric response is
    accepted when its values are integral and few: at most ``MAX_NUMERIC_LEVELS`` distinct
    values, and at most half as many as there are rows (a numeric column with a distinct value
    in almost every row -- an index, a count, a measurement -- is not a set of class labels). A
    float response with a non-integral value, or a numeric one with too many values, is refused
    with a message that says how to declare it as categorical.
    """
    if isinstance(y.dtype, pd.CategoricalDtype) or y.dtype.kind not in "iuf":
        return
    how = (
        f"if it really holds class labels, declare it categorical, e.g. "
        f"data[{name!r}] = data[{name!r}].astype('category')"
    )
    if y.dtype.kind == "f":
        v = np.asarray(classes, dtype=float)
        frac = v[np.abs(v - np.round(v)) > 0]
        if frac.size:
            raise ValueError(
                f"response {name!r} is continuous (float values such as {float(frac[0])!r}); "
                f"cohstats fits classifiers, whose response holds class labels -- {how}"
            )
    n = int(y.notna().sum())
    if len(classes) > MAX_NUMERIC_LEVELS:
        raise ValueError(
            f"response {name!r} is numeric with {len(classes)} distinct values "
            f"({_fmt_list(classes)}), which looks like a continuous variable rather than "
            f"class labels (at most {MAX_NUMERIC_LEVELS} numeric levels are taken as "
            f"classes) -- {how}"
        )
    if len(classes) > 2 and 2 * len(classes) > n:
        raise ValueError(
            f"response {name!r} is numeric with {len(classes)} distinct values in {n} "
            f"rows ({_fmt_list(classes)}): fewer than two rows per value looks like a "
            f"count or an index rather than class labels -- {how}"
        )


def _code_response(y: pd.Series, classes) -> np.ndarray:
    codes = None
    yv = y.to_numpy()
    cl = np.asarray(classes)
    if yv.dtype.kind in "iufb" and cl.dtype.kind in "iufb":  # numeric labels: a sorted search
        order = np.argsort(cl, kind="stable")
        pos = np.minimum(np.searchsorted(cl[order], yv), cl.size - 1)
        if np.array_equal(cl[order][pos], yv):
            codes = order[pos].astype(np.int64)
    if codes is None:
        try:  # pandas' hash lookup of every value among the classes
            codes = np.asarray(pd.Categorical(y, categories=classes).codes, dtype=np.int64)
        except (TypeError, ValueError):
            pass
    if codes is None or (codes < 0).any():  # labels pandas cannot hash together: one by one
        lookup = {c: k for k, c in enumerate(classes)}
        codes = np.array(
            [lookup[v.item() if isinstance(v, np.generic) else v] for v in y.to_numpy(dtype=object)], dtype=np.int64
        )
    if len(classes) == 2:
        return np.where(codes == 1, 1.0, -1.0)
    return codes


def _response_na(y: pd.Series, name: str, labels, na_action: str) -> np.ndarray:
    """Rows whose response is missing; under ``"fail"`` they are refused, by column and rows."""
    na = y.isna().to_numpy()
    if na.any() and na_action == "fail":
        rows = _rows_desc(np.asarray(labels)[na])
        raise ValueError(
            f"response {name!r} has {int(na.sum())} missing value(s) (rows {rows}); "
            "drop or impute them, or use na_action='omit' to drop those rows -- cohstats never guesses a class"
        )
    return na


def _na_reasons(resp_na, pred_na, yname, cols) -> dict:
    """Counts of the rows dropped for missing values, by reason (a row counts once, response first)."""
    out = {}
    if resp_na.any():
        out[f"missing response ({yname})"] = int(resp_na.sum())
    rest = pred_na & ~resp_na
    if rest.any():
        out["missing predictor values (" + ", ".join(map(str, cols)) + ")"] = int(rest.sum())
    return out


def build_design(
    formula,
    data=None,
    *,
    y=None,
    subset=None,
    weights=None,
    na_action: str = "omit",
    context: dict | None = None,
    max_classes: int | None = None,
    offset=None,
) -> Design:
    """Build a :class:`Design` from a formula and data, or from a matrix and labels.

    Parameters
    ----------
    formula : str, Design, or array-like
        ``"y ~ x1 + C(g) + np.log(z)"`` (formulaic syntax; ``y ~ .`` means every other
        column; ``- 1`` removes the intercept). A :class:`Design` is returned as is (after
        ``subset``). A matrix (ndarray or DataFrame of predictors) is matrix input, with the
        labels in ``data`` (positional) or ``y``.
    data : DataFrame (formula input) or labels (matrix input).
    y : labels for matrix input, as keyword.
    subset : boolean mask, integer positions, or a query string evaluated with
        ``DataFrame.query`` -- rows to use.
    weights : observation weights: array of length ``len(data)`` or the name of a column.
    na_action : ``"omit"`` drops the rows with a missing response or a missing value of a
        predictor the formula uses (counted by reason in ``design.dropped``); ``"exclude"``
        drops them too and has ``predict`` pad its output back with missing rows (R's
        ``na.exclude``); ``"fail"`` refuses them, naming the column and the rows (``"raise"``:
        its deprecated name).
    offset : known offsets added to the link, ``f(x) = offset + b + x'beta`` (R's ``offset``): an
        array with one value per row of ``data`` (or of ``X``), or the name of a column. An
        ``offset(col)`` term on the right-hand side of a formula does the same (the column is not
        a predictor; several terms add up). A missing offset is a missing value (``na_action``).
        The design keeps the offsets of its rows in ``design.offset`` and their columns in
        ``design.offset_cols``, read from ``newdata`` at prediction.
    context : names for transforms in the formula (default: the caller's frame is not
        searched; public fit functions capture their caller's context once).
    max_classes : reject responses with more classes (e.g. 2 for binary-only methods).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame({"x1": rng.normal(size=20), "g": ["a", "b"] * 10,
    ...                    "y": rng.choice(["no", "yes"], 20)})
    >>> d = build_design("y ~ x1 + C(g)", df)
    >>> d.xnames
    ['x1', 'C(g)[T.b]']
    """
    na_action = check_na_action(na_action)
    if isinstance(formula, Design):
        d = formula
        if subset is not None:
            d = d.take(_subset_positions(subset, d.nobs, None))
        if weights is not None:
            d = d.replace(weights=weights)
        if offset is not None:
            raise TypeError("give offset= when the design is built, not with a Design")
        if max_classes is not None and d.n_classes > max_classes:
            raise ValueError(f"this method handles at most {max_classes} classes; the response has {d.n_classes}")
        return d
    if isinstance(formula, str):
        if y is not None:
            raise TypeError("give the response in the formula (y ~ ...), not as y=")
        design = _design_from_formula(formula, data, subset, weights, na_action, context, offset)
    else:
        if np.ndim(formula) == 0 and not isinstance(formula, pd.DataFrame):
            raise TypeError(
                "the first argument must be a formula string such as 'y ~ x1 + x2' or a matrix of "
                f"predictors; got {formula!r} ({type(formula).__name__})"
            )
        labels = data if y is None else y
        if data is not None and y is not None:
            raise TypeError("matrix input takes the labels once: build_design(X, y) or build_design(X, y=y)")
        if labels is None:
            raise TypeError("matrix input needs the labels: build_design(X, y)")
        if isinstance(offset, str):
            raise TypeError("offset= names a column only with formula input; give matrix input an array")
        design = _design_from_arrays(formula, labels, subset, weights, na_action, offset=offset)
        if offset is not None:
            design.offset_given = True
    if max_classes is not None and design.n_classes > max_classes:
        raise ValueError(
            f"this method handles at most {max_classes} classes; response {design.yname!r} has "
            f"{design.n_classes}: {_fmt_list(design.classes)}"
        )
    return design


def refuse_no_intercept(design: Design, fn: str, why: str) -> None:
    """Refuse a formula that removes the intercept (``- 1``, ``+ 0``) for a method that cannot
    honour it (``why`` says what it fits instead), rather than fitting one silently."""
    if not design.intercept:
        raise ValueError(
            f"{fn} {why}, so a formula without an intercept cannot be honoured; remove "
            f"'- 1' / '+ 0' from {design.formula!r}"
        )


def _subset_positions(subset, n, frame) -> np.ndarray:
    if isinstance(subset, str):
        if frame is None:
            raise TypeError("a subset query string needs formula input with a DataFrame")
        try:
            mask = frame.eval(subset)
        except Exception as e:
            raise ValueError(f"subset {subset!r} could not be evaluated: {e}") from None
        mask = np.asarray(mask)
        if mask.dtype != bool or mask.shape != (n,):
            raise ValueError(f"subset {subset!r} must evaluate to a boolean per row")
        return np.flatnonzero(mask)
    s = np.asarray(subset)
    if s.dtype == bool:
        if s.shape != (n,):
            raise ValueError(f"boolean subset must have length {n}; got {s.shape}")
        return np.flatnonzero(s)
    if not np.issubdtype(s.dtype, np.integer):
        raise TypeError("subset must be a boolean mask, integer positions or a query string")
    if s.size and (s.min() < -n or s.max() >= n):
        raise ValueError(f"subset positions must lie in [0, {n}); got range [{s.min()}, {s.max()}]")
    return s


def _split_formula(formula: str):
    if formula.count("~") != 1:
        raise ValueError(f"formula must have exactly one '~' with the response on the left; got {formula!r}")
    lhs, rhs = (part.strip() for part in formula.split("~"))
    if not lhs:
        raise ValueError(f"formula {formula!r} has no response on the left of '~'")
    if not rhs:
        raise ValueError(f"formula {formula!r} has nothing on the right of '~' (use '~ 1' for no predictors)")
    m = re.fullmatch(r"`([^`]+)`|([A-Za-z_][A-Za-z0-9_.]*)", lhs)
    if not m:
        raise ValueError(
            f"the response must be a single column name; got {lhs!r} (transform the response in the data frame first)"
        )
    return m.group(1) or m.group(2), rhs


_OFFSET_TERM = re.compile(r"offset\(\s*(`[^`]+`|[A-Za-z_][A-Za-z0-9_.]*)\s*\)")


def _split_offset(rhs: str, formula: str):
    """The right-hand side without its ``offset(col)`` terms, and the columns they name."""
    cols = []
    while True:
        m = _OFFSET_TERM.search(rhs)
        if m is None:
            break
        before, after = rhs[: m.start()].rstrip(), rhs[m.end() :].lstrip()
        if (before and before[-1] != "+") or (after and after[0] not in "+-"):
            raise ValueError(
                f"offset(...) must be a term of its own, added to the others, in {formula!r} "
                "(e.g. 'y ~ x1 + offset(o)')"
            )
        cols.append(m.group(1).strip("`"))
        rhs = (before[:-1].rstrip() if before else "") + (" " + after if before else after.lstrip("+ "))
    rhs = rhs.strip()
    if not rhs or rhs[0] == "-":
        rhs = ("1 " + rhs).strip()
    return rhs, tuple(cols)


def _offset_values(frame: pd.DataFrame, cols, labels) -> np.ndarray:
    """The sum of the offset columns as float64 (missing values as NaN)."""
    out = np.zeros(len(frame))
    for c in cols:
        try:
            out = out + pd.to_numeric(frame[c]).to_numpy(dtype=np.float64, na_value=np.nan)
        except (TypeError, ValueError):
            raise TypeError(f"offset column {c!r} must be numeric; got dtype {frame[c].dtype}") from None
    bad = np.isinf(out)
    if bad.any():
        raise ValueError(
            f"offset column(s) {_fmt_list(cols)} have infinite values in rows {_rows_desc(np.asarray(labels)[bad])}"
        )
    return out


def _design_from_formula(formula, data, subset, weights, na_action, context, offset=None) -> Design:
    if data is None:
        raise TypeError(f"formula {formula!r} needs data: a pandas DataFrame")
    if isinstance(data, dict):
        data = pd.DataFrame(data)
    if not isinstance(data, pd.DataFrame):
        raise TypeError(f"data must be a pandas DataFrame; got {type(data).__name__}")
    _check_unique_columns(data.columns, "data")
    yname, rhs = _split_formula(formula)
    rhs, offset_cols = _split_offset(rhs, formula)
    if isinstance(offset, str):
        offset_cols, offset = offset_cols + (offset,), None
    for c in offset_cols:
        if c not in data.columns:
            raise ValueError(f"offset column {c!r} is not a column of data; columns: {_fmt_list(data.columns)}")
    if yname not in data.columns:
        raise ValueError(f"response {yname!r} is not a column of data; columns: {_fmt_list(data.columns)}")
    wcol = weights if isinstance(weights, str) else None
    if wcol is not None and wcol not in data.columns:
        raise ValueError(f"weights column {wcol!r} is not a column of data")
    off_all = None
    if offset_cols or offset is not None:
        off_all = _offset_values(data, offset_cols, data.index.to_numpy())
        if offset is not None:
            off_all = off_all + _offset_array(offset, len(data))
    fast = _fast_dot_design(formula, rhs, data, yname, (wcol, *offset_cols), subset, weights, na_action, off_all)
    if fast is not None:
        fast.offset_cols = offset_cols
        fast.offset_given = offset is not None
        return fast
    from formulaic import Formula, model_matrix  # (imported here: the fast path above needs none of it)

    if _DOT.search(rhs):
        others = [c for c in data.columns if c != yname and c != wcol and c not in offset_cols]
        if not others:
            raise ValueError("'y ~ .' needs at least one predictor column besides the response")
        rhs = _DOT.sub("(" + " + ".join(_quote(str(c)) for c in others) + ")", rhs)
    try:
        required = set(Formula(rhs).required_variables)
    except Exception as e:
        raise ValueError(f"could not parse formula {formula!r}: {e}") from None
    ctx = dict(context or {})
    missing = sorted(
        v
        for v in required
        if v not in data.columns
        and v not in ctx
        and v.split(".")[0] not in ctx
        and v not in ("np", "numpy", "C", "I", "Q")
    )
    if missing:
        raise ValueError(
            f"column(s) {_fmt_list(missing)} in formula {formula!r} are not in data; columns: {_fmt_list(data.columns)}"
        )
    variables = tuple(sorted(v for v in required if v in data.columns))
    if yname in variables:
        raise ValueError(f"the response {yname!r} also appears on the right-hand side of {formula!r}")

    labels = data.index.to_numpy()
    df = data.reset_index(drop=True)
    n0 = len(df)
    dropped: dict = {}
    keep = np.arange(n0)
    if subset is not None:
        keep = _subset_positions(subset, n0, df)
        dropped["not in subset"] = n0 - len(keep)
    w_all = None
    if weights is not None:
        w_all = df[wcol].to_numpy() if wcol is not None else weights
        w_all = np.asarray(w_all)
        if w_all.ndim != 1 or w_all.shape[0] != n0:
            raise ValueError(f"weights must have one value per row of data ({n0}); got shape {w_all.shape}")
    df = df.iloc[keep]
    lab = labels[keep]
    if w_all is not None:
        w_all = w_all[keep]
    if off_all is not None:
        off_all = off_all[keep]
    resp_na = _response_na(df[yname], yname, lab, na_action)
    pred_na = np.zeros(len(df), dtype=bool)
    cols = []
    if variables:
        na = df[list(variables)].isna()
        pred_na = na.any(axis=1).to_numpy()
        cols = [c for c in variables if na[c].any()]
    if off_all is not None and np.isnan(off_all).any():
        pred_na = pred_na | np.isnan(off_all)
        cols = cols + ["offset"]
    if pred_na.any():
        if na_action == "fail":
            raise ValueError(
                f"predictor column(s) {_fmt_list(cols)} have missing values in "
                f"{int(pred_na.sum())} row(s) (rows {_rows_desc(lab[pred_na])}); "
                "use na_action='omit' to drop them"
            )
    drop = resp_na | pred_na
    na_padding = None
    if drop.any():
        dropped.update(_na_reasons(resp_na, pred_na, yname, cols))
        if na_action == "exclude":
            na_padding = (lab.copy(), ~drop)
        df, lab = df[~drop], lab[~drop]
        if w_all is not None:
            w_all = w_all[~drop]
        if off_all is not None:
            off_all = off_all[~drop]
    if len(df) == 0:
        raise ValueError(
            "no rows left after dropping rows with missing values"
            + (f" ({'; '.join(f'{k}: {v}' for k, v in dropped.items())})" if dropped else "")
        )
    for c in variables:
        col = df[c]
        if pd.api.types.is_numeric_dtype(col) and not pd.api.types.is_bool_dtype(col):
            vals = col.to_numpy(dtype=np.float64)
            bad = ~np.isfinite(vals)
            if bad.any():
                shown = _fmt_list([float(v) for v in pd.unique(vals[bad])])
                raise ValueError(
                    f"predictor column {c!r} has non-finite value(s) {shown} in rows {_rows_desc(lab[bad])}"
                )
    classes = _classes_of(df[yname], yname)
    ycode = _code_response(df[yname], classes)
    dfr = _strings_as_objects(df.reset_index(drop=True), variables)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            mm = model_matrix(rhs, dfr, context=ctx or None, na_action="ignore")
    except Exception as e:
        raise ValueError(f"could not build the design for {formula!r}: {e}") from None
    spec = mm.model_spec
    intercept = "Intercept" in list(mm.columns)
    X = _to_float_matrix(mm, drop_intercept=True)
    xnames = [c for c in mm.columns if c != "Intercept"]
    bad = ~np.isfinite(X)
    if bad.any():
        j = int(np.flatnonzero(bad.any(axis=0))[0])
        rows = np.flatnonzero(bad[:, j])
        raise ValueError(
            f"design column {xnames[j]!r} has non-finite values in rows {_rows_desc(lab[rows])} "
            "(a transform produced NaN or inf)"
        )
    # remember the levels of categorical data columns so new data can be checked
    cat_levels = {}
    for c in variables:
        col = dfr[c]
        if (
            not pd.api.types.is_numeric_dtype(col)
            or isinstance(col.dtype, pd.CategoricalDtype)
            or pd.api.types.is_bool_dtype(col)
        ):
            if isinstance(col.dtype, pd.CategoricalDtype):
                cat_levels[c] = list(col.cat.categories)
            else:
                levels = list(pd.unique(col.to_numpy(dtype=object)))
                try:
                    levels = sorted(levels)
                except TypeError:
                    pass
                cat_levels[c] = levels
    if weights is not None:
        w = _check_weights(w_all, len(dfr))
    else:
        w = np.ones(len(dfr))
    n_dropped = int(sum(dropped.values()))
    return Design(
        X=X,
        y=ycode,
        classes=classes,
        xnames=xnames,
        yname=yname,
        weights=w,
        formula=formula,
        intercept=intercept,
        n_dropped=n_dropped,
        dropped={k: v for k, v in dropped.items() if v},
        row_labels=lab,
        spec=spec,
        variables=variables,
        categorical_levels=cat_levels,
        weights_given=weights is not None,
        rhs=rhs,
        frame=dfr[_formula_columns(rhs, [c for c in dfr.columns if c != yname])],
        na_action=na_action,
        na_padding=na_padding,
        offset=off_all,
        offset_cols=offset_cols,
        offset_given=offset is not None,
    )


def _offset_array(offset, n) -> np.ndarray:
    try:
        o = np.asarray(offset, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError("offset must be numeric: an array with one value per row, or a column name") from None
    if o.ndim != 1 or o.shape[0] != n:
        raise ValueError(f"offset must have one value per row of the data ({n}); got shape {o.shape}")
    if np.isinf(o).any():
        raise ValueError(f"offset has infinite values at positions {_rows_desc(np.flatnonzero(np.isinf(o)))}")
    return o


def _formula_columns(rhs: str, columns) -> list:
    """Data columns the right-hand side reads, in data order (formulaic's
    ``required_variables`` misses those inside stateful transforms such as ``poly(z, 2)``)."""
    import ast

    from formulaic import Formula

    cols = set(columns)
    used = set()
    try:
        terms = list(Formula(rhs))
    except Exception:  # pragma: no cover - the design was built from this rhs
        return list(columns)
    for term in terms:
        for factor in term.factors:
            if factor.expr in cols:
                used.add(factor.expr)
                continue
            try:
                tree = ast.parse(factor.expr, mode="eval")
            except SyntaxError:
                continue
            for node in ast.walk(tree):
                if isinstance(node, ast.Name) and node.id in cols:
                    used.add(node.id)
                elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in cols:
                    used.add(node.value)  # Q("odd name")
    return [c for c in columns if c in used]


def _fast_dot_design(formula, rhs, data, yname, skip, subset, weights, na_action, offset=None):
    """``y ~ .`` (or ``y ~ . - 1``) on all-numeric predictors: the design is the columns
    themselves, so skip formulaic's per-column machinery (seconds for thousands of genes)."""
    compact = rhs.replace(" ", "")
    if compact not in (".", ".-1", ".+0", "0+.", "-1+."):
        return None
    wcol = skip[0]
    others = [c for c in data.columns if c != yname and c not in skip]
    if not others or not all(isinstance(c, str) for c in others):
        return None
    cols = data[others]
    if not all(pd.api.types.is_numeric_dtype(t) and not pd.api.types.is_bool_dtype(t) for t in cols.dtypes):
        return None
    if isinstance(subset, str):
        subset = _subset_positions(subset, len(data), data.reset_index(drop=True))
    w = data[wcol].to_numpy() if wcol is not None else weights
    d = _design_from_arrays(cols, data[yname], subset, w, na_action, offset=offset)
    d.formula = formula
    d.yname = yname
    d.intercept = compact in (".",)
    d.variables = tuple(others)
    return d


def _check_unique_columns(columns, what: str) -> None:
    dup = pd.Index(columns)[pd.Index(columns).duplicated()].unique().tolist()
    if dup:
        raise ValueError(
            f"{what} has duplicated column name(s) {_fmt_list(dup)}; every column needs "
            "its own name (rename them, e.g. df.columns = [...])"
        )


def _response_series(labels) -> pd.Series:
    """The labels of matrix input as a Series; a 2-D response is refused by name."""
    if isinstance(labels, pd.DataFrame):
        if labels.shape[1] != 1:
            raise ValueError(
                f"the response must be one column of labels; got a DataFrame with "
                f"{labels.shape[1]} columns {_fmt_list(list(labels.columns))}"
            )
        labels = labels.iloc[:, 0]
    if isinstance(labels, pd.Series):
        return labels
    if isinstance(labels, pd.Categorical):
        return pd.Series(labels)
    arr = labels if isinstance(labels, np.ndarray) and labels.dtype.kind in "iufb" else np.asarray(labels, dtype=object)
    if arr.ndim == 2 and 1 in arr.shape:
        arr = arr.ravel()
    if arr.ndim != 1:
        raise ValueError(
            f"the response must be a 1-D sequence of labels; got an array of shape "
            f"{arr.shape} (for one-hot labels pass the class of each row instead)"
        )
    return pd.Series(arr)


def _design_from_arrays(X, labels, subset, weights, na_action, offset=None) -> Design:
    if isinstance(X, pd.DataFrame):
        _check_unique_columns(X.columns, "X")
        nonnum = [c for c in X.columns if not pd.api.types.is_numeric_dtype(X[c]) or pd.api.types.is_bool_dtype(X[c])]
        if nonnum:
            raise TypeError(
                f"matrix input must be numeric; column(s) {_fmt_list(nonnum)} are not "
                "(use the formula interface to expand factors)"
            )
        xnames = [str(c) for c in X.columns]
        row_labels = X.index.to_numpy()
        Xa = X.to_numpy(dtype=np.float64)
    else:
        try:
            Xa = np.asarray(X, dtype=np.float64)
        except (TypeError, ValueError):
            raise TypeError("X must be a numeric array or DataFrame (or give a formula string)") from None
        if Xa.ndim == 1:
            Xa = Xa[:, None]
        if Xa.ndim != 2:
            raise ValueError(f"X must be 2-D; got {Xa.ndim} dimensions")
        xnames = [f"x{j + 1}" for j in range(Xa.shape[1])]
        row_labels = np.arange(Xa.shape[0])
    n0 = Xa.shape[0]
    if isinstance(labels, np.ndarray) and labels.dtype != object and labels.ndim == 1:
        yser = pd.Series(labels)  # a plain 1-D array of labels keeps its dtype
    else:
        yser = _response_series(labels).reset_index(drop=True)
    yname = str(yser.name) if yser.name is not None else "y"
    if len(yser) != n0:
        raise ValueError(f"X has {n0} rows but y has {len(yser)} labels")
    dropped = {}
    w_all = None if weights is None else np.asarray(weights)
    if w_all is not None and (w_all.ndim != 1 or w_all.shape[0] != n0):
        raise ValueError(f"weights must have one value per row of X ({n0}); got shape {w_all.shape}")
    off = None if offset is None else _offset_array(offset, n0)
    if subset is not None:
        keep = _subset_positions(subset, n0, None)
        dropped["not in subset"] = n0 - len(keep)
        Xa, yser, row_labels = Xa[keep], yser.iloc[keep].reset_index(drop=True), row_labels[keep]
        if w_all is not None:
            w_all = w_all[keep]
        if off is not None:
            off = off[keep]
    else:
        Xa = np.array(Xa, dtype=np.float64, order="C")  # the design never aliases the caller's array
    resp_na = _response_na(yser, yname, row_labels, na_action)
    nan_rows = np.isnan(Xa).any(axis=1)
    cols = [xnames[j] for j in np.flatnonzero(np.isnan(Xa).any(axis=0))] if nan_rows.any() else []
    if off is not None and np.isnan(off).any():
        nan_rows = nan_rows | np.isnan(off)
        cols = cols + ["offset"]
    if nan_rows.any() and na_action == "fail":
        raise ValueError(
            f"X column(s) {_fmt_list(cols)} have missing values in {int(nan_rows.sum())} row(s) "
            f"(rows {_rows_desc(row_labels[nan_rows])}); use na_action='omit' to drop them"
        )
    drop = resp_na | nan_rows
    na_padding = None
    if drop.any():
        dropped.update(_na_reasons(resp_na, nan_rows, yname, cols))
        if na_action == "exclude":
            na_padding = (np.asarray(row_labels).copy(), ~drop)
        Xa, yser, row_labels = Xa[~drop], yser[~drop].reset_index(drop=True), row_labels[~drop]
        if w_all is not None:
            w_all = w_all[~drop]
        if off is not None:
            off = off[~drop]
    if Xa.shape[0] == 0:
        raise ValueError("no rows left after dropping rows with missing values")
    inf = ~np.isfinite(Xa)
    if inf.any():
        j = int(np.flatnonzero(inf.any(axis=0))[0])
        raise ValueError(f"X column {xnames[j]!r} has non-finite values (e.g. {Xa[inf[:, j], j][0]!r})")
    classes = _classes_of(yser, yname)
    ycode = _code_response(yser, classes)
    w = _check_weights(w_all, Xa.shape[0]) if w_all is not None else np.ones(Xa.shape[0])
    return Design(
        X=np.ascontiguousarray(Xa),
        y=ycode,
        classes=classes,
        xnames=xnames,
        yname=yname,
        weights=w,
        formula=None,
        intercept=True,
        n_dropped=int(sum(dropped.values())),
        dropped={k: v for k, v in dropped.items() if v},
        row_labels=row_labels,
        weights_given=weights is not None,
        na_action=na_action,
        na_padding=na_padding,
        offset=off,
    )


def refuse_offset(design: Design, fn: str) -> None:
    """Refuse an offset (``offset(col)`` or ``offset=``) for a fit that cannot add one to its link."""
    if getattr(design, "offset", None) is not None:
        raise ValueError(
            f"{fn} does not take an offset: offsets (offset(col) in the formula or offset=) are "
            "supported for two classes by clearn, lum, svm and gboost_c"
        )


def capture_context(level: int = 1) -> dict:
    """Capture the caller's variables (``level`` frames up) for formula transforms.

    Public fit functions call this once at their entry so that ``np.log(x)`` or a user
    function ``f(x)`` in a formula resolves as in the caller's scope. Frames of the argument
    checking wrapper (:func:`cohstats.validation.fit_function`) are skipped. The context is
    used to build the design and never stored on the result.
    """
    import sys

    from cohstats.validation import FIT_THREAD, TRANSPARENT_CODES

    ctx = getattr(FIT_THREAD, "context", None)
    if ctx is not None:  # a fit running in its worker thread: the caller's context
        return dict(ctx)
    frame = sys._getframe(level + 1)
    while frame is not None and frame.f_code in TRANSPARENT_CODES:
        frame = frame.f_back
    if frame is None:  # pragma: no cover - called from the top of the stack
        return {}
    ctx = dict(frame.f_globals)
    ctx.update(frame.f_locals)
    return ctx
