"""Shared helpers of the simulation generators: random state, argument checks, feature matrices."""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd


def _rng(random_state) -> np.random.Generator:
    if isinstance(random_state, np.random.Generator):
        return random_state
    if random_state is None or isinstance(random_state, (int, np.integer)):
        return np.random.default_rng(random_state)
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(0, 2**31 - 1))
    raise TypeError(
        f"random_state must be None, an int, a numpy Generator or RandomState; got {type(random_state).__name__}"
    )


def _check_n(n, name="n", minimum=1) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}; got {n!r}")
    return int(n)


def _as_X(X, columns: Sequence[str], fn: str) -> np.ndarray:
    """Feature matrix from an array or a DataFrame holding the generator's columns."""
    if isinstance(X, pd.DataFrame):
        missing = [c for c in columns if c not in X.columns]
        if missing:
            raise ValueError(f"{fn}: X lacks column(s) {missing}; expected {list(columns)}")
        A = X[list(columns)].to_numpy(dtype=float)
    else:
        A = np.asarray(X, dtype=float)
        if A.ndim == 1 and len(columns) == 1:
            A = A[:, None]
        if A.ndim != 2 or A.shape[1] != len(columns):
            raise ValueError(
                f"{fn}: X must have shape (n, {len(columns)}) (columns {list(columns)[:5]}"
                f"{'...' if len(columns) > 5 else ''}); got shape {A.shape}"
            )
    return A


def _frame(X: np.ndarray, columns, y) -> pd.DataFrame:
    df = pd.DataFrame(X, columns=list(columns))
    df["y"] = np.asarray(y, dtype=np.int64)
    return df


def _labels_from_p(p: np.ndarray, rng) -> np.ndarray:
    return np.where(rng.random(p.shape[0]) < p, 1, -1)


def _finish(df, p, return_prob):
    return (df, p) if return_prob else df


def _cols(d):
    return [f"x{j + 1}" for j in range(d)]
