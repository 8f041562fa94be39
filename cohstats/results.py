"""Result protocol shared by every fit function: :class:`Fit`, :class:`Summary`, :class:`PathFrame`.

Labels live only here and in :mod:`cohstats.formula`: solvers return arrays, a ``Fit``
re-attaches the names (coefficients by term, probabilities by class, predictions by row).
"""

from __future__ import annotations

import copy
from typing import Iterable

import numpy as np
import pandas as pd

from .formula import Design
from .summary import FitBase, Summary, _fmt_cell, _fmt_value  # noqa: F401 - Summary's home was here
from .result_intervals import summary_intervals
from .svalues import is_sequence, named_s, per_s
from .validation import check_options, check_s

__all__ = ["Fit", "Summary", "PathFrame", "load", "interpolate_path"]

_TYPES = ("class", "prob", "link", "response")  # "response": R's name for probabilities


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
    def build(
        cls, data: pd.DataFrame | dict, xvar: str, coef_columns: Iterable[str] = (), log_x: bool | None = None
    ) -> "PathFrame":
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

    def plot(
        self,
        columns: Iterable[str] | None = None,
        ax=None,
        label: bool = True,  # type: ignore[override]
        ylabel: str | None = None,
        n_labels: int = 10,
        **kwargs,
    ):
        """Coefficient paths against the sequence (log scale for penalties), glmnet style, the
        ``n_labels`` largest curves named at the right edge (:func:`cohstats.plotting.plot_path`).

        The top axis shows the number of nonzero coefficients when a ``df`` column exists.
        ``columns`` plots other columns (e.g. ``["train_error", "test_error"]``) instead; the
        y axis is then labelled with their names (or ``ylabel``). Returns the Axes.
        """
        from .plotting import plot_path

        return plot_path(self, columns=columns, ax=ax, label=label, ylabel=ylabel, n_labels=n_labels, **kwargs)


def _rows_of(newdata, keep: np.ndarray):
    """The rows ``keep`` (a boolean mask) of new data: a DataFrame, a mapping of columns or an array."""
    if isinstance(newdata, dict):
        newdata = pd.DataFrame(newdata)
    if isinstance(newdata, (pd.DataFrame, pd.Series)):
        return newdata.iloc[np.flatnonzero(keep)]
    X = np.asarray(newdata)
    return (X[None, :] if X.ndim == 1 else X)[keep]


def _pad(values: np.ndarray, keep) -> np.ndarray:
    """Predictions for the kept rows spread back over all rows (``na_action="exclude"``): NaN in
    the other rows (an object array of class labels gets NaN too, pandas' missing label)."""
    if keep is None:
        return values
    out = np.full((keep.shape[0],) + values.shape[1:], np.nan, dtype=object if values.dtype == object else float)
    out[keep] = values
    return out


def path_weights(lambdas, s: float) -> tuple[int, int, float]:
    """The one path interpolation: indices ``(k0, k1)`` into ``lambdas`` (any order) of the
    neighbouring fitted values above and below ``s``, and the weight ``t`` such that the value
    at ``s`` is ``(1 - t) v[k0] + t v[k1]`` (linear in the penalty); outside the fitted range
    the nearest end (glmnet's ``predict(s=)``).

    Examples
    --------
    >>> path_weights([1.0, 0.5, 0.1], 0.3)
    (1, 2, 0.5)
    """
    lam = np.asarray(lambdas, dtype=float).ravel()
    s = float(s)
    if lam.size == 1:
        return 0, 0, 0.0
    order = np.argsort(-lam, kind="stable")  # decreasing penalties
    ls = lam[order]
    if s >= ls[0]:
        return int(order[0]), int(order[0]), 0.0
    if s <= ls[-1]:
        return int(order[-1]), int(order[-1]), 0.0
    k1 = int(np.searchsorted(-ls, -s, side="left"))  # first position with a penalty <= s
    if ls[k1] == s:
        return int(order[k1]), int(order[k1]), 0.0
    k0 = k1 - 1
    t = (ls[k0] - s) / (ls[k0] - ls[k1])
    return int(order[k0]), int(order[k1]), float(t)


def interpolate_path(lambdas: np.ndarray, values: np.ndarray, s: float) -> np.ndarray:
    """Values (first axis = sequence) at ``s``, linear between neighbouring fitted values
    (:func:`path_weights`; outside the fitted range the nearest end, as glmnet's ``predict(s=)``)."""
    vals = np.asarray(values)
    k0, k1, t = path_weights(lambdas, s)
    if k0 == k1:
        return vals[k0]
    return (1 - t) * vals[k0] + t * vals[k1]


# ============================================================================ Fit
class Fit(FitBase):
    """Base class of every fitted model: one result contract for every fit function.

    Every fit has the same attributes with the same types and meanings:

    ``coef``
        Coefficients of the input-space linear predictor at ``s``: a Series by term (two
        classes) or a terms x classes DataFrame; ``None`` when the model has none (kernel
        expansions, trees).
    ``intercept``
        A float (two classes) or a Series by class; ``None`` only when the model has no
        intercept.
    ``dual_coef``, ``support_``
        Expansion coefficients over the support points (a DataFrame indexed by the training-row
        labels of the points, one column ``"dual_coef"`` for two classes or one per class /
        pair) and their positions in the training rows; ``None`` for models without an
        expansion.
    ``lambda_``, ``path_var``, ``s``
        The fitted sequence as a 1-D float array, the name of what it holds (``"lambda"``,
        ``"C"``, ``"margin"``, ``"step"``, ``"ccp_alpha"``) and the selected value. A fit is a
        *path* when the sequence has more than one value.
    ``converged``, ``n_iter``
        Set by every fit: a bool and an int.
    ``classes``, ``nobs``, ``formula``, ``call``
        The class labels in order, the number of training rows, the formula and the arguments.

    ``predict(newdata, type=, s=, **options)`` takes the options listed in
    ``_predict_options`` (for ``type="prob"``) and nothing else; ``s`` is validated and
    honoured on path fits and refused on fits that are not paths. ``coef_at(s)`` gives the
    coefficients with the intercept at any ``s`` (glmnet's ``coef(fit, s=)``); ``select(s)``
    a copy of a path fit at ``s``.

    Subclasses implement ``_decision(X, s=None)``, ``_proba(X, s=None, **options)``,
    ``_summary()`` and usually ``path()`` and ``plot()``.

    Construction. A fit function computes arrays and hands them to its result class's
    constructor, the classmethod ``_from_arrays(design, *, ..., call)``, which takes every
    piece of state as a keyword argument: it starts from :meth:`_blank`, sets the class's own
    state and ends with :meth:`_set_contract`, which checks and sets the contract fields
    (``lambda_``, ``s``, ``converged``, ``n_iter``, ``_coef``, ``_intercept``) in one place.
    A result derived from another (``select(s)``, a tuned fit) is made by :meth:`_derive`.
    Nothing outside the class sets attributes on a fit (``tests/test_construction.py``).
    """

    method: str = "fit"
    title: str = "Fitted model"
    #: what ``lambda_`` holds
    path_var: str = "lambda"
    #: the fit argument that takes the fitted sequence back (cross-validation refits folds
    #: along the full-data sequence through it); None when the sequence is reproduced by the
    #: same arguments (boosting steps) or depends on the data (pruning sequences)
    path_arg: str | None = None
    #: keyword options of ``predict(type="prob")``
    _predict_options: tuple = ()
    lambda_ = None
    dual_coef = None
    support_ = None
    #: the cross-validated choices of a path fit handed out by ``cv`` (names ``lambda_min``,
    #: ``lambda_1se`` and the curve), so that ``s="lambda.min"`` works on it; None otherwise
    _cv_selection = None
    #: the bootstrap of :meth:`confint` (a dict of arrays and tables) once computed
    _bootstrap = None

    def __init__(self, design: Design, call: dict | None = None):
        self.design = design
        self.call = dict(call or {})
        self.converged = None  # every fit function sets it: no optimistic default
        self.n_iter = 0
        self._coef = None
        self._intercept = None

    # ------------------------------------------------------------------ construction
    @classmethod
    def _blank(cls, design: Design, call: dict | None = None) -> "Fit":
        """A new instance holding only the design and the call: the first step of a
        ``_from_arrays`` constructor, which then sets its state and calls :meth:`_set_contract`."""
        self = cls.__new__(cls)
        Fit.__init__(self, design, call)
        return self

    def _set_contract(self, *, lambda_, converged, n_iter, s=None, coef=None, intercept=None) -> None:
        """Set the contract fields of a new fit and check them.

        ``lambda_`` is the fitted sequence (a non-empty 1-D array of numbers, stored as float64),
        ``s`` the selected value (None: leave ``s`` as the class defines it), ``converged`` a
        bool, ``n_iter`` a nonnegative int, ``coef`` / ``intercept`` the arrays behind
        :attr:`coef` and :attr:`intercept` at ``s`` (None for models without them).
        """
        self.lambda_ = self._checked_lambda(lambda_)
        if s is not None:
            self.s = self._checked_s(s)
        self.converged = self._checked_converged(converged)
        self.n_iter = self._checked_n_iter(n_iter)
        self._coef = coef
        self._intercept = intercept

    def _checked_lambda(self, lambda_) -> np.ndarray:
        name = type(self).__name__
        lam = np.asarray(lambda_)
        if lam.ndim != 1 or lam.size == 0 or lam.dtype.kind not in "fiu":
            raise ValueError(
                f"{name}: lambda_ must be a non-empty 1-D array of numbers (the fitted "
                f"{self.path_var} sequence); got an array of shape {lam.shape} and dtype "
                f"{lam.dtype}"
            )
        return np.asarray(lam, dtype=np.float64)

    def _checked_converged(self, converged) -> bool:
        if not isinstance(converged, (bool, np.bool_)):
            raise TypeError(
                f"{type(self).__name__}: converged must be a bool (whether the solver met "
                f"its tolerance); got {type(converged).__name__} {converged!r}"
            )
        return bool(converged)

    def _checked_n_iter(self, n_iter) -> int:
        if isinstance(n_iter, (bool, np.bool_)) or not isinstance(n_iter, (int, np.integer)) or n_iter < 0:
            raise TypeError(
                f"{type(self).__name__}: n_iter must be a nonnegative int; got {type(n_iter).__name__} {n_iter!r}"
            )
        return int(n_iter)

    def _checked_s(self, s) -> float:
        if (
            isinstance(s, (bool, np.bool_))
            or not isinstance(s, (int, float, np.integer, np.floating))
            or not np.isfinite(s)
        ):
            raise TypeError(
                f"{type(self).__name__}: s must be a finite number (the selected "
                f"{self.path_var}); got {type(s).__name__} {s!r}"
            )
        return float(s)

    def _derive(self, **changes) -> "Fit":
        """A shallow copy of this fit with some state replaced: how a result derived from another
        is built (``select(s)``, a tuned fit with its tuning table). Contract fields among the
        changes (``lambda_``, ``s``, ``converged``, ``n_iter``) are checked as in
        :meth:`_set_contract`."""
        check = {
            "lambda_": self._checked_lambda,
            "s": self._checked_s,
            "converged": self._checked_converged,
            "n_iter": self._checked_n_iter,
        }
        for k, v in changes.items():
            if k in check:
                check[k](v)
        new = copy.copy(self)
        for k, v in changes.items():
            setattr(new, k, v)
        return new

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

    def _coef_frame(self, c):
        c = np.asarray(c)
        if c.ndim == 1:
            return pd.Series(c, index=self.xnames, name="estimate")
        return pd.DataFrame(c, index=self.xnames, columns=self.classes)

    @property
    def coef(self):
        """Coefficients by term (Series), terms x classes (DataFrame) for K > 2, or None when
        the model has no input-space coefficients (kernel expansions, trees)."""
        c, _ = self._coef_at(None)
        return None if c is None else self._coef_frame(c)

    @property
    def intercept(self):
        """Intercept at ``s``: a float (two classes) or a Series by class."""
        _, b = self._coef_at(None)
        if b is None:
            return None
        b = np.asarray(b)
        if b.ndim == 0:
            return float(b)
        return pd.Series(b, index=self.classes, name="intercept")

    def coef_at(self, s=None):
        """Coefficients with the intercept first at ``s`` (glmnet's ``coef(fit, s=)``).

        Returns a Series (two classes) or a DataFrame (terms x classes) whose first row is
        ``"(Intercept)"``; raises for models without input-space coefficients. ``s`` as in
        :meth:`predict`: a sequence gives one column (block) per value (:mod:`cohstats.svalues`).
        """
        if is_sequence(s):
            return per_s(self.coef_at, s)
        s = self._check_s(s, "coef_at")
        c, b = self._coef_at(s)
        if c is None or self.coef is None:
            raise ValueError(
                f"a {type(self).__name__} has no input-space coefficients "
                "(kernel expansions and trees); see dual_coef or predict(type='link')"
            )
        c = np.asarray(c)
        b = np.zeros(c.shape[1:]) if b is None else np.asarray(b, dtype=float)
        names = ["(Intercept)"] + self.xnames
        if c.ndim == 1:
            return pd.Series(np.concatenate([[float(b)], c]), index=names, name="estimate")
        return pd.DataFrame(np.vstack([b[None], c]), index=names, columns=self.classes)

    # ------------------------------------------------------------------ the path value s
    def _validate_s(self, s: float) -> float:
        """Check ``s`` against the fitted sequence (path fits): inside its range."""
        lam = np.asarray(self.lambda_, dtype=float)
        lo, hi = float(lam.min()), float(lam.max())
        tol = 1e-10 * max(1.0, abs(hi))
        if s < lo - tol or s > hi + tol:
            raise ValueError(
                f"s={s!r} lies outside the fitted {self.path_var} range [{lo:.6g}, {hi:.6g}]; "
                f"refit with a {self._arg_name()} sequence that covers it"
            )
        return s

    def _arg_name(self) -> str:
        """The fit function's argument for the path value (glmnet's ``lambda`` is ``lambda_``)."""
        return self.path_arg or ("lambda_" if self.path_var == "lambda" else self.path_var)

    def _check_s(self, s, where: str = "predict"):
        """Validate a requested path value: None, or a number on the fitted path."""
        if s is None:
            return None
        where = f"{type(self).__name__}.{where}()"
        if isinstance(s, str):  # "lambda.min" / "lambda.1se": the choices of cv(), when known
            s = named_s(where, s, self._cv_selection, f"the fitted {self.path_var} sequence")
        s = check_s(where, s, f"the fitted {self.path_var} sequence")
        if not self.is_path:
            lam = getattr(self, "lambda_", None)
            if lam is not None and np.size(lam) == 1 and np.isclose(s, float(np.ravel(lam)[0]), rtol=1e-9, atol=0):
                return None
            fitted = "" if lam is None or np.size(lam) != 1 else f" at {self.path_var} = {float(np.ravel(lam)[0]):.6g}"
            raise ValueError(
                f"{where}: this fit is not a path (it was fitted{fitted}), so s cannot "
                f"select another value; refit with {self._arg_name()}={s!r}"
            )
        return self._validate_s(s)

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
        """Class indices 0..K-1 from the decision values (f = 0 goes to classes[0])."""
        f = self._decision(X, **({} if s is None else {"s": s}))
        if f.ndim == 1:
            return (f > 0).astype(np.int64)
        return np.argmax(f, axis=1)

    def predict(self, newdata=None, type: str = "class", s=None, offset=None, **options):
        """Predict for ``newdata`` (default: the training data).

        Parameters
        ----------
        newdata : DataFrame (formula fits) or array (matrix fits), optional.
        type : ``"class"`` (labels, a Series), ``"prob"`` or its R name ``"response"``
            (DataFrame with one column per class, rows sum to one) or ``"link"`` (decision
            values: Series for two classes, DataFrame by class otherwise).
        s : for path fits, the value of the fitted sequence to predict at (default ``self.s``;
            between fitted values the coefficients are interpolated, as glmnet does);
            ``"lambda.min"`` / ``"lambda.1se"`` on the fits of a ``cv()`` result; a sequence
            of values gives one block of columns per value (:mod:`cohstats.svalues`). A fit
            that is not a path refuses any other value than the one it was fitted at.
        offset : for a fit given ``offset=`` as an array, the offsets of the rows of ``newdata``
            (offsets from ``offset(col)`` terms are read from ``newdata``'s columns).
        **options : options of the probability method (``type="prob"`` only), e.g.
            ``method="platt"``; each fit lists them in its docstring. Unknown options raise.
        """
        if type not in _TYPES:
            raise ValueError(f"type must be one of {_TYPES}; got {type!r}")
        if type == "response":
            type = "prob"
        if is_sequence(s):
            return per_s(self.predict, s, newdata=newdata, type=type, offset=offset, **options)
        s = self._check_s(s)
        if options:
            check_options(f"{self.__class__.__name__}.predict()", options, self._predict_options)
            if type != "prob":
                raise TypeError(
                    f"{self.__class__.__name__}.predict(type={type!r}) takes no options; "
                    f"got {sorted(options)} (they belong to type='prob')"
                )
        keep, idx = self._rows_kept(newdata)
        if keep is None:
            X = self._X(newdata)
            idx = self._index(newdata, X.shape[0])
        else:
            X = self._X(_rows_of(newdata, keep)) if newdata is not None else self._X(None)
        sk = {} if s is None else {"s": s}
        if getattr(self.design, "offset", None) is not None:
            rows = newdata if keep is None or newdata is None else _rows_of(newdata, keep)
            off = self.design.new_offset(rows, offset if offset is None or keep is None else np.asarray(offset)[keep])
            f = np.asarray(self._decision(X, **sk), dtype=float) + off  # f(x) = offset + b + x'beta
            if type == "link":
                return pd.Series(_pad(f, keep), index=idx, name="link")
            if type == "prob":
                p = np.asarray(self._link_to_prob(f), dtype=float)
                return pd.DataFrame(_pad(np.column_stack([1.0 - p, p]), keep), index=idx, columns=self.classes)
            labels = _pad(np.asarray(self.classes, dtype=object)[(f > 0).astype(np.int64)], keep)
            return pd.Series(labels, index=idx, name=self.design.yname)
        if offset is not None:
            raise ValueError("offset= was given to predict, but the model was fitted without an offset")
        if type == "link":
            f = _pad(np.asarray(self._decision(X, **sk), dtype=float), keep)
            if f.ndim == 1:
                return pd.Series(f, index=idx, name="link")
            return pd.DataFrame(f, index=idx, columns=self._link_columns(f.shape[1]))
        if type == "prob":
            p = np.asarray(self._proba(X, **sk, **options), dtype=float)
            if p.ndim == 1:
                p = np.column_stack([1.0 - p, p])
            return pd.DataFrame(_pad(p, keep), index=idx, columns=self.classes)
        codes = np.asarray(self._classify(X, **sk))
        labels = _pad(np.asarray(self.classes, dtype=object)[codes], keep)
        return pd.Series(labels, index=idx, name=self.design.yname)

    def _rows_kept(self, newdata):
        """Under ``na_action="exclude"``: (which output rows get predictions, the full index), or
        (None, None) when every row is predicted. For the training data (``newdata=None``) the
        rows dropped for missing values come back as missing rows, in the data's order."""
        d = self.design
        if getattr(d, "na_action", "omit") != "exclude":
            return None, None
        if newdata is None:
            pad = getattr(d, "na_padding", None)
            if pad is None or int(np.count_nonzero(pad[1])) != d.nobs:
                return None, None
            return np.asarray(pad[1], dtype=bool), pd.Index(pad[0])
        keep = d.complete_rows(newdata)
        if keep is None:
            return None, None
        n = keep.shape[0]
        return keep, (newdata.index if isinstance(newdata, (pd.DataFrame, pd.Series)) else pd.RangeIndex(n))

    def _link_columns(self, k: int) -> list:
        """Column names of multi-column decision values (classes; pairs for one-vs-one)."""
        return self.classes

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
        if not self.is_path:
            raise ValueError(
                f"{type(self).__name__}.select(): this fit is not a path (a single "
                f"{self.path_var}), so there is nothing to select"
            )
        s = self._check_s(s, "select")
        return self._derive(s=float(s))

    # ------------------------------------------------------------------ reporting
    def _summary(self) -> Summary:  # pragma: no cover - abstract
        raise NotImplementedError

    def summary(self) -> Summary:
        """An R-style summary (print it, or render with ``to_markdown()`` etc.).

        Every summary shows the call, the value ``s`` in use on a path, the rows dropped for
        missing values and, when ``s`` is an end of the fitted path, a note that the optimum
        may lie beyond it.
        """
        sm = self._summary()
        if sm.call is None:
            sm.call = self.call_string()
        d = self.design
        if self.is_path:
            key = f"s ({self.path_var} in use)"
            sm.info = {key: float(self.s), **sm.info}
            lam = np.asarray(self.lambda_, dtype=float)
            ends = {"first": lam[0], "last": lam[-1]}
            for which, v in ends.items():
                if np.isclose(float(self.s), v, rtol=1e-9, atol=0):
                    sm.notes.append(
                        f"s is the {which} value of the fitted {self.path_var} sequence: if it was "
                        f"chosen (e.g. by cross-validation), the best value may lie beyond the path; "
                        f"extend the sequence ({self._extend_hint(which)}) and check"
                    )
                    break
        self._add_error_intervals(sm)
        n_drop = int(getattr(d, "n_dropped", 0) or 0)
        sm.info["rows dropped (missing values)"] = n_drop
        if n_drop:
            why = getattr(d, "dropped", {}) or {}
            detail = ", ".join(f"{k}: {v}" for k, v in why.items()) if isinstance(why, dict) else ""
            sm.notes.append(
                f"{n_drop} row(s) with missing values were dropped before fitting" + (f" ({detail})" if detail else "")
            )
        return sm

    def _add_error_intervals(self, sm: Summary, level: float = 0.95) -> None:
        """The error lines of the summary (:func:`cohstats.result_intervals.summary_intervals`)."""
        summary_intervals(self, sm, level)

    def confint(self, B: int = 200, level: float = 0.95, *, n_jobs=None, scheduler=None, random_state=None, **kw):
        """Bootstrap percentile intervals of the coefficients and of the test error at ``s``
        (:func:`cohstats.inference.bootstrap_confint` documents the arguments); once computed,
        :meth:`summary` shows them."""
        import cohstats  # the refits run through the tuning layer, above the results

        res = cohstats.bootstrap_confint(
            self, B, level, n_jobs=n_jobs, scheduler=scheduler, random_state=random_state, **kw
        )
        self._bootstrap = res.to_dict()
        return res

    def _extend_hint(self, which: str) -> str:
        if self.path_var == "lambda":
            return "a smaller lambda_min_ratio or more lambda_ values" if which == "last" else "larger lambda_ values"
        if self.path_var == "step":
            return "more trees (n_trees)"
        return f"more {self.path_arg or self.path_var} values"

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
        return (
            f"<{type(self).__name__} {self.method}({src}): n={self.nobs}, "
            f"{self.n_classes} classes{', ' + extra if extra else ''}{conv}>"
        )

    # ------------------------------------------------------------------ persistence
    def save(self, path) -> None:
        """Save the fit in cohstats' safe format (no pickle; see :mod:`cohstats.persist`).

        :func:`cohstats.load` or ``Fit.load`` reads it back; predictions are bitwise identical.
        A fit holding a user's Python function (a custom kernel) raises
        :class:`cohstats.persist.UnsafeObjectError`.
        """
        from .persist import save

        save(self, path)

    @classmethod
    def load(cls, path) -> "Fit":
        """Load a fit saved with :meth:`save`; it must be an instance of this class."""
        return load(path, expected=cls)


def load(path, expected: type | None = None):
    """Load a fit or tuner result saved with ``save()``; never runs code from the file.

    Raises :class:`cohstats.persist.FormatError` (a ValueError) for a file that is not a valid
    cohstats file. See :func:`cohstats.persist.load`.
    """
    from .persist import load as _load

    return _load(path, expected=expected)
