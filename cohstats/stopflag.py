"""Per-thread state of a fit running in a worker thread, and the stop flag compiled solvers poll.

:func:`cohstats.validation.run_interruptibly` runs a fit in a worker thread and keeps its state
in :data:`FIT_THREAD` (the caller's formula context, the stop event); on Ctrl-C it sets the
event and the array of :func:`stop_flag`, which the coordinate-descent path driver reads before
every penalty value. A module of its own, importing nothing of the package, so that the solvers
can read the flag without depending on the validation layer.
"""

from __future__ import annotations

import threading

import numpy as np

__all__ = ["FIT_THREAD", "stop_flag"]

#: per-thread state of a fit running in a worker thread (the caller's formula context, the
#: stop event)
FIT_THREAD = threading.local()


def stop_flag():
    """The stop flag that compiled solvers poll: a length-1 int64 array, set to 1 when the
    caller interrupts the fit running in this worker thread (a fresh, never-set array outside a
    fit's worker). The coordinate-descent path driver checks it before every penalty value."""
    ev = getattr(FIT_THREAD, "stop", None)
    if ev is None:
        return np.zeros(1, dtype=np.int64)
    flag = getattr(ev, "flag", None)
    if flag is None:
        flag = ev.flag = np.zeros(1, dtype=np.int64)
        if ev.is_set():
            flag[0] = 1
    return flag
