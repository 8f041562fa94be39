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
