"""The path value ``s`` taken by ``predict``, ``coef_at`` and ``select``: R's names of the values
chosen by cross-validation, and several values at once.

Names. ``"lambda.min"`` and ``"lambda.1se"`` (R's spellings, as ``predict(cvfit, s="lambda.1se")``
in glmnet) and ``"lambda_min"`` / ``"lambda_1se"`` (the attribute names of
:class:`~cohstats.tuning.CVResult`) name the penalty with the best cross-validated mean and the
largest penalty whose mean is within one standard error of it. They are meaningful on a
:class:`~cohstats.tuning.CVResult` and on the fits it hands out (``res.fit``, ``res.best_fit``,
``res.fit_1se``), which carry the selection; any other fit refuses them with an error saying so.

Several values. A sequence ``s`` (list, tuple, 1-D array) gives one block of columns per value,
as glmnet's ``predict(fit, newx, s=c(0.1, 0.01))`` gives one column per value:

* a result that is a Series for one ``s`` (classes, two-class decision values, two-class
  coefficients) becomes a DataFrame with one column per ``s``;
* a result that is a DataFrame for one ``s`` (probabilities, K-class decision values or
  coefficients) becomes a DataFrame whose columns are a two-level MultiIndex
  ``(s, original column)``, so ``out[v]`` is the block at ``s = v`` -- glmnet's
  ``n x K x length(s)`` array laid out as blocks side by side.

The column labels of the ``s`` level are the values as given: a number as a float, a name as
the string (``"lambda.min"``). Repeated values are refused.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["S_NAMES", "is_sequence", "named_s", "per_s"]

#: names of the values chosen by cross-validation -> the CVResult attribute holding the value
S_NAMES = {
    "lambda.min": "lambda_min",
    "lambda_min": "lambda_min",
    "lambda.1se": "lambda_1se",
    "lambda_1se": "lambda_1se",
}


def is_sequence(s) -> bool:
    """True for several path values at once (a list, tuple, Index, Series or 1-D array)."""
    if isinstance(s, (list, tuple, pd.Index, pd.Series)):
        return True
    return isinstance(s, np.ndarray) and s.ndim == 1


def s_key(where: str, s: str, what: str = "the fitted sequence") -> str:
    """The CVResult attribute named by the string ``s``; TypeError for any other string."""
    if s not in S_NAMES:
        raise TypeError(
            f"{where}: s must be a number (a value of {what}), 'lambda.min' or 'lambda.1se' "
            f"(on a cross-validation result), a sequence of these, or None; got {s!r}"
        )
    return S_NAMES[s]


def named_s(where: str, s: str, selection: dict | None, what: str = "the fitted sequence") -> float:
    """The value named ``s`` in ``selection`` (the cross-validated choices a fit carries).

    Raises a ValueError when the fit carries no selection (it was not returned by ``cv``, or
    is not a path) and a TypeError for a string that is not one of :data:`S_NAMES`.
    """
    key = s_key(where, s, what)
    value = None if selection is None else selection.get(key)
    if value is None:
        raise ValueError(
            f"{where}: s={s!r} names a penalty chosen by cross-validation, and this fit carries no "
            "cross-validation (only the path fits of a cv() result do: res.fit, res.best_fit); "
            f"use res.predict(..., s={s!r}) / res.coef_at({s!r}) on the cv() result, or give s as a number"
        )
    return float(value)


def _label(v):
    return v if isinstance(v, str) else float(v)


def per_s(method, s, **kwargs):
    """``method(s=v, **kwargs)`` for every ``v`` in the sequence ``s``, side by side (see the
    module's docstring for the layout)."""
    values = list(s)
    if not values:
        raise ValueError("s is an empty sequence; give at least one value")
    labels = [_label(v) for v in values]
    if len(set(labels)) < len(labels):
        raise ValueError(f"s has repeated values {labels}; give each value once")
    parts = [method(s=v, **kwargs) for v in values]
    if all(isinstance(p, pd.Series) for p in parts):
        out = pd.concat(parts, axis=1, keys=labels)
        out.columns.name = "s"
        return out
    inner = parts[0].columns.name
    return pd.concat(parts, axis=1, keys=labels, names=["s", inner])
