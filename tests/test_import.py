"""The public API imports quickly in a fresh process (numba kernels compile lazily, on first use)."""

import subprocess
import sys
import time


def test_import_is_fast_and_lazy():
    code = (
        "import time, sys; t=time.perf_counter(); import cohstats; "
        "print(time.perf_counter()-t); print(int('numba' in sys.modules))"
    )
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert float(out[0]) < 1.0, f"import cohstats took {out[0]} s"
    assert out[1] == "0", "import cohstats must not import numba (lazy submodules)"
    assert time.perf_counter() - t0 < 30
