"""[RH] Figures 3-4: the single-point experiment of the lambda-SVM paper (K classes at one input).

[RH] Rodriguez-Lujan & Huerta (2015), A Fisher consistent multiclass loss function with
variable margin on positive examples, EJS 9. Re-exported by :mod:`cohstats.datasets.simulations`.
"""

from __future__ import annotations

import numpy as np

from ._simbase import _as_X, _check_n, _finish, _frame, _rng


__all__ = ["make_lamsvm_single_point", "prob_lamsvm_single_point"]


# ----------------------------------------------------------------------------- [RH] single point
RH_SINGLE_POINT_PROBS = (0.375, 0.34, 0.28)


def _rh_probs(probs, renormalize):
    p = np.asarray(probs, dtype=float)
    if p.ndim != 1 or p.size < 2 or np.any(p < 0):
        raise ValueError(f"probs must be a sequence of >= 2 nonnegative numbers; got {probs!r}")
    if renormalize:
        return p / p.sum()
    if not np.isclose(p.sum(), 1.0):
        raise ValueError(
            f"probs sum to {p.sum():.6g}, not 1; pass renormalize=True (the [RH] Figure 3/4 values "
            "0.375, 0.34, 0.28 sum to 0.995)"
        )
    return p


def prob_lamsvm_single_point(X, probs=RH_SINGLE_POINT_PROBS, renormalize: bool = True) -> np.ndarray:
    """Class probabilities (n, K) of the [RH] single-point experiment (constant in ``x``).

    Examples
    --------
    >>> prob_lamsvm_single_point(np.zeros((1, 1))).round(4)
    array([[0.3769, 0.3417, 0.2814]])
    """
    A = _as_X(X, ["x"], "prob_lamsvm_single_point")
    return np.tile(_rh_probs(probs, renormalize), (A.shape[0], 1))


def make_lamsvm_single_point(
    N: int = 264,
    random_state=None,
    probs=RH_SINGLE_POINT_PROBS,
    renormalize: bool = True,
    exact: bool = True,
    x: float = 0.0,
    return_prob: bool = False,
):
    """[RH] Figures 3/4: ``N`` copies of one input point with class probabilities ``probs``.

    The paper gives (0.375, 0.34, 0.28), which sum to 0.995; by default they are
    renormalised to (0.3769, 0.3417, 0.2814). With ``exact=True`` the label counts are
    ``N * p`` rounded by largest remainders (for N = 264: 100, 90, 74) in random order; with
    ``exact=False`` labels are drawn independently. The single feature column ``x`` is
    constant.

    Examples
    --------
    >>> df = make_lamsvm_single_point(random_state=0)
    >>> df.y.value_counts().sort_index().tolist()
    [100, 90, 74]
    """
    N = _check_n(N, "N")
    p = _rh_probs(probs, renormalize)
    rng = _rng(random_state)
    if exact:
        raw = N * p
        counts = np.floor(raw).astype(int)
        order = np.argsort(-(raw - counts), kind="stable")
        counts[order[: N - counts.sum()]] += 1
        y = rng.permutation(np.repeat(np.arange(p.size), counts))
    else:
        y = rng.choice(p.size, size=N, p=p)
    df = _frame(np.full((N, 1), float(x)), ["x"], y)
    return _finish(df, np.tile(p, (N, 1)), return_prob)
