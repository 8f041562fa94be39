"""Warnings and errors raised by cohstats.

Every module imports them from here (solvers included), so no module needs the package root.
"""
from __future__ import annotations

__all__ = ["ConvergenceWarning", "CalibrationWarning", "DataWarning"]


class ConvergenceWarning(UserWarning):
    """A solver stopped before reaching its tolerance; the message names the argument to change."""


class CalibrationWarning(UserWarning):
    """Probabilities were requested from a model whose loss does not estimate them."""


class DataWarning(UserWarning):
    """The data were changed on the way in (rows dropped, columns constant); the message says how."""
