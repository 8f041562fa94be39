"""[WSL] Examples 1-2 (= [ZDJ] Data 1-2): the two-dimensional simulations with known probabilities.

[WSL] Wang, Shen & Liu (2008), Probability estimation for large-margin classifiers,
Biometrika 95(1); [ZDJ] Zhang, Dai & Jordan (2012), Coherence functions with applications in
large-margin classification methods, JMLR 13. Re-exported by :mod:`cohstats.datasets.simulations`.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from ._simbase import _as_X, _check_n, _finish, _frame, _rng


__all__ = ["make_wsl1", "prob_wsl1", "make_wsl2", "prob_wsl2"]


# ----------------------------------------------------------------------------- [WSL] Ex. 1
def prob_wsl1(X) -> np.ndarray:
    """True ``P(y=+1|x)`` of [WSL] Example 1 / [ZDJ] Data 1: 0.8 if ``x1 >= 0`` else 0.2.

    Examples
    --------
    >>> prob_wsl1([[0.5, 0.0], [-0.1, 0.3]])
    array([0.8, 0.2])
    """
    A = _as_X(X, ["x1", "x2"], "prob_wsl1")
    return np.where(A[:, 0] >= 0, 0.8, 0.2)


def make_wsl1(n: int = 1000, random_state=None, flip: float = 0.2, exact_flip: bool = True, return_prob: bool = False):
    """[WSL] Example 1 = [ZDJ] Data 1: uniform on the unit disk, ``y = sign(x1)``, 20 % flipped.

    Points are uniform on the unit disk; ``y = +1`` iff ``x1 >= 0``; then the labels of exactly
    ``round(flip * n)`` randomly chosen points are flipped (our reading of the papers; with
    ``exact_flip=False`` each label flips independently with probability ``flip``). The true
    probability used in metrics is ``p(x) = 1 - flip`` for ``x1 >= 0`` and ``flip`` otherwise;
    Bayes error ``flip`` (0.2).

    Parameters
    ----------
    n : int
        Sample size (papers: 1000 = 100 training + 900 test).
    random_state : None, int or numpy Generator
    flip : float in [0, 0.5)
        Flip fraction.
    exact_flip : bool
        Flip exactly ``round(flip * n)`` labels (default) or flip independently.
    return_prob : bool
        Also return the true ``P(y=+1|x)``.

    Returns
    -------
    DataFrame with columns ``x1, x2, y`` (``y`` in {-1, +1}), or ``(df, p)``.

    Examples
    --------
    >>> df = make_wsl1(1000, random_state=0)
    >>> int((df.y != np.where(df.x1 >= 0, 1, -1)).sum())
    200
    """
    n = _check_n(n)
    if not 0 <= flip < 0.5:
        raise ValueError(f"flip must lie in [0, 0.5); got {flip!r}")
    rng = _rng(random_state)
    r = np.sqrt(rng.random(n))
    t = rng.uniform(0, 2 * np.pi, n)
    X = np.column_stack([r * np.cos(t), r * np.sin(t)])
    y = np.where(X[:, 0] >= 0, 1, -1)
    if exact_flip:
        idx = rng.choice(n, size=int(round(flip * n)), replace=False)
        y[idx] = -y[idx]
    else:
        y = np.where(rng.random(n) < flip, -y, y)
    p = np.where(X[:, 0] >= 0, 1 - flip, flip)
    return _finish(_frame(X, ["x1", "x2"], y), p, return_prob)


# ----------------------------------------------------------------------------- [WSL] Ex. 2
_WSL2_SD = 0.1


def prob_wsl2(X, sd: float = _WSL2_SD) -> np.ndarray:
    """True ``P(y=+1|x)`` of [WSL] Example 2 / [ZDJ] Data 2.

    With ``s = sin(x1) + 1`` the two class densities of ``x2`` are ``N(+-s, sd^2)``, so
    ``p(x) = expit(2 x2 s / sd^2)`` (the log-space form of the paper's ratio of normal densities).

    Examples
    --------
    >>> prob_wsl2([[np.pi / 2, 2.0], [np.pi / 2, -2.0]]).round(6)
    array([1., 0.])
    """
    A = _as_X(X, ["x1", "x2"], "prob_wsl2")
    s = np.sin(A[:, 0]) + 1.0
    return special.expit(2.0 * A[:, 1] * s / sd**2)


def make_wsl2(n: int = 1000, random_state=None, sd: float = _WSL2_SD, return_prob: bool = False):
    """[WSL] Example 2 = [ZDJ] Data 2: ``x2 = y (sin x1 + 1 + Z)``.

    ``y = +-1`` with probability 1/2, ``x1 ~ U[0, 2 pi]``, ``Z ~ N(0, sd^2)`` with ``sd = 0.1``.
    Bayes error ``E[Phi(-(sin x1 + 1)/sd)] = 0.0590`` (quadrature; [ZDJ] quotes 0.059).

    Examples
    --------
    >>> df, p = make_wsl2(500, random_state=1, return_prob=True)
    >>> list(df.columns), p.shape
    (['x1', 'x2', 'y'], (500,))
    """
    n = _check_n(n)
    rng = _rng(random_state)
    y = np.where(rng.random(n) < 0.5, 1, -1)
    x1 = rng.uniform(0, 2 * np.pi, n)
    x2 = y * (np.sin(x1) + 1 + rng.normal(0, sd, n))
    X = np.column_stack([x1, x2])
    return _finish(_frame(X, ["x1", "x2"], y), prob_wsl2(X, sd), return_prob)
