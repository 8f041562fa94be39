"""Ctrl-C during a fit: control returns to the caller and the fit's worker thread stops.

No clock is read: the interrupt is simulated with ``_thread.interrupt_main`` from inside the
fit, and the test checks that the worker stopped long before its loop's end (the time it takes
is measured by ``benchmarks/bench_load.py``'s sibling scripts, not here).
"""

from __future__ import annotations

import _thread
import sys
import threading

import pytest

from cohstats import validation


@pytest.mark.skipif(threading.current_thread() is not threading.main_thread(), reason="needs the main thread")
def test_interrupted_fit_stops_its_worker(monkeypatch):
    monkeypatch.setenv("COHSTATS_INTERRUPTIBLE", "1")
    progress = {"i": 0, "flag_seen": False}
    end = 10**9  # never reached unless the worker ignores the interrupt

    def long_fit():
        for i in range(end):
            progress["i"] = i
            if i == 100:
                _thread.interrupt_main()  # Ctrl-C, as the main thread sees it
            if validation.stop_requested():
                progress["flag_seen"] = True
        return "finished"

    with pytest.raises(KeyboardInterrupt):
        validation.run_interruptibly(long_fit, (), {}, "demo")
    worker = validation.last_interrupted
    assert worker is not None and worker.name == "cohstats-demo"
    worker.join()  # returns once the worker stopped
    assert not worker.is_alive()
    assert 100 <= progress["i"] < end - 1


def test_stop_flag_is_false_outside_an_interrupted_fit():
    assert validation.stop_requested() is False
    seen = []
    validation.run_interruptibly(lambda: seen.append(validation.stop_requested()), (), {}, "demo")
    assert seen == [False]


def test_nested_and_background_calls_run_in_the_calling_thread():
    out = []
    t = threading.Thread(target=lambda: out.append(validation.run_interruptibly(threading.get_ident, (), {}, "x")))
    t.start()
    t.join()
    assert out == [t.ident]
    assert sys.modules["cohstats.validation"] is validation


def test_the_path_driver_stops_at_the_flag_of_an_interrupted_fit():
    """An interrupted fit's stop event reaches the compiled path driver through the flag it
    polls before every lambda: a set flag leaves every value unsolved (no clock involved)."""
    import threading

    import numpy as np

    from cohstats.solvers.cd.path import cd_path
    from cohstats.stopflag import FIT_THREAD, stop_flag
    from cohstats.validation import _stop_worker

    rng = np.random.default_rng(0)
    X = rng.standard_normal((80, 4))
    y = np.where(X[:, 0] + rng.standard_normal(80) > 0, 1.0, -1.0)
    lams = np.array([0.1, 0.05, 0.01])
    out = {}

    def worker(interrupted):
        FIT_THREAD.stop = threading.Event()
        try:
            flag = stop_flag()
            assert flag[0] == 0
            if interrupted:  # what Ctrl-C does to a running fit (no async exception: not alive yet)
                _stop_worker(threading.Thread(target=lambda: None), FIT_THREAD.stop)
                assert flag[0] == 1
            out[interrupted] = cd_path(X, y, None, 7, 0.0, 0.0, lams, 1.0, warn=False)
        finally:
            del FIT_THREAD.stop

    for interrupted in (False, True):
        t = threading.Thread(target=worker, args=(interrupted,))
        t.start()
        t.join()
    assert out[False][2]["converged"].all() and (out[False][2]["n_iter"] > 0).all()
    assert not out[True][2]["converged"].any() and (out[True][2]["n_iter"] == 0).all()
    assert stop_flag()[0] == 0  # outside a fit's worker: a fresh flag, never set
