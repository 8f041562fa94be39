"""Pieces shared by the pure-ridge kernel routes: the damped Newton path (:mod:`.kernel`) and the
LUM's kernel dual (:mod:`.lum_kdual`), which :mod:`.kernel` dispatches to."""

from __future__ import annotations

import contextlib

import numpy as np


def _ridge_info(B, n_iter, conv, objs, kkts, obj0, mode, solver):
    """The ``info`` dict of the pure-ridge routes (Newton and the LUM's dual)."""
    return dict(
        n_iter=n_iter,
        converged=conv,
        objective=objs,
        df=np.count_nonzero(B, axis=1),
        kkt=kkts,
        null_objective=float(obj0),
        mode=mode,
        solver=solver,
    )


#: dense systems up to this order are factorised with one BLAS thread (see :func:`small_lapack`)
SMALL_SYSTEM = 512


def small_lapack(order: int, small: int | None = None):
    """Context for the dense factorisation of a system of ``order`` unknowns: one BLAS thread
    when ``order <= small`` (default :data:`SMALL_SYSTEM`), the caller's setting otherwise. A
    multi-threaded LU of a small matrix gains nothing on an idle machine and its threads spin
    when the cores are busy (measured in benchmarks/log.csv)."""
    global _CONTROLLER
    if order > (SMALL_SYSTEM if small is None else small):
        return contextlib.nullcontext()
    if _CONTROLLER is None:  # finding the loaded BLAS libraries is the costly part: once per process
        from threadpoolctl import ThreadpoolController

        _CONTROLLER = ThreadpoolController()
    return _CONTROLLER.limit(limits=1, user_api="blas")


_CONTROLLER = None
