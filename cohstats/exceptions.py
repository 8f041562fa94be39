"""Warnings and errors raised by cohstats.

Every module imports them from here (solvers included), so no module needs the package root.
"""

from __future__ import annotations

__all__ = ["ConvergenceWarning", "CalibrationWarning", "DataWarning"]


class ConvergenceWarning(UserWarning):
    """A solver stopped before reaching its tolerance; the message names the argument to change."""


class CalibrationWarning(UserWarning):
    """A lambda-SVM margin in [RH]'s uncalibrated band ``[0, (K - 2)/2]`` (their Theorem 2): the
    classifier need not be consistent there."""


class DataWarning(UserWarning):
    """The data were changed on the way in (rows dropped, columns constant); the message says how."""
