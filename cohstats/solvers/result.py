"""The one result type of the solvers' Python entry points."""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np


class SolverResult(NamedTuple):
    """What a solver returns: the solution, how it was reached, and solver-specific extras.

    Attributes
    ----------
    coef : ndarray or None
        Primal coefficients, when the solver works in the primal (None for dual solvers).
    dual : ndarray or None
        Dual multipliers, when the solver works in the dual: ``a`` of an SVM dual (n,), the
        multipliers ``alpha`` (N, L) of the lambda-SVM, one row per grid value on a path
        ``(n_grid, n)``; None for primal solvers.
    intercept : float or ndarray
        The intercept (one per grid value on a path; per class where the model has one per
        class; 0.0 when the model has none).
    n_iter : int
        Iterations (SMO pair updates, point visits, path events, DC steps -- see ``info``).
    converged : bool
        The solver's stopping rule was met (on a path: at every grid value).
    objective : float, ndarray or None
        The objective the solver minimises at the solution (one per grid value on a grid of
        solves; None when the solver does not compute it).
    info : dict
        Solver-specific quantities (gradients, decision values, counters, status), documented by
        each solver.
    """

    coef: np.ndarray | None
    dual: np.ndarray | None
    intercept: Any
    n_iter: int
    converged: bool
    objective: Any
    info: dict
