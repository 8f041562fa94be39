"""Test-suite settings: deterministic property tests and a headless matplotlib."""

import os

import matplotlib
from hypothesis import HealthCheck, settings

matplotlib.use("Agg")

# Property tests are derandomized so that CI runs are reproducible; the "dev" profile
# (HYPOTHESIS_PROFILE=dev) explores new examples on every run.
settings.register_profile(
    "ci", derandomize=True, deadline=None, print_blob=True, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("dev", deadline=None, max_examples=200)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


# numba compilation in this run, reported at the end (part of the suite's time that a warm cache
# would save): the outermost compilations only, so that nested ones are not counted twice
class _CompileClock:
    def __init__(self):
        self.depth = 0
        self.start = 0.0
        self.seconds = 0.0
        self.functions = 0

    def on_start(self, event):
        import time

        if self.depth == 0:
            self.start = time.perf_counter()
        self.depth += 1
        self.functions += 1

    def on_end(self, event):
        import time

        self.depth -= 1
        if self.depth == 0:
            self.seconds += time.perf_counter() - self.start


_COMPILE = _CompileClock()


def pytest_configure(config):
    import numba.core.event as ev

    class _Listener(ev.Listener):
        def on_start(self, event):
            _COMPILE.on_start(event)

        def on_end(self, event):
            _COMPILE.on_end(event)

    ev.register("numba:compile", _Listener())


def pytest_terminal_summary(terminalreporter):
    terminalreporter.write_line(
        f"numba compilation in this process: {_COMPILE.seconds:.0f} s wall for {_COMPILE.functions} "
        "functions (the rest loaded from the cache; subprocess tests not counted)"
    )
