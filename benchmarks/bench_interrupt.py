"""Wall-clock facts the tests check without a clock: ``import cohstats`` time and Ctrl-C latency.

Run: ``python benchmarks/bench_interrupt.py``. Prints the import time of a fresh process and
the time from SIGINT to ``KeyboardInterrupt`` in a long LUM fit (goal: well under 1 s and 2 s).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LONG_FIT = """
import signal, time
signal.signal(signal.SIGINT, signal.default_int_handler)
import numpy as np, cohstats as cs
rng = np.random.default_rng(0)
X = rng.normal(size=(40, 3)); y = np.where(X[:, 0] > 0, "a", "b")
cs.lum(X, y, kernel="rbf", lambda_=[0.1])
X = rng.normal(size=(3000, 20)); y = np.where(X[:, 0] + rng.normal(size=3000) > 0, "a", "b")
print("start", flush=True)
try:
    cs.lum(X, y, a=1000.0, c=1e4, kernel="rbf", lambda_=np.geomspace(1, 1e-6, 40), tol=1e-12)
    print("finished", flush=True)
except KeyboardInterrupt:
    print("interrupted", flush=True)
"""


def main():
    env = dict(os.environ, PYTHONPATH=ROOT)
    code = "import time; t = time.perf_counter(); import cohstats; print(time.perf_counter() - t)"
    runs = [
        float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env).stdout)
        for _ in range(5)
    ]
    print(f"import cohstats: min {min(runs):.3f} s, max {max(runs):.3f} s over 5 fresh processes")
    p = subprocess.Popen([sys.executable, "-c", LONG_FIT], stdout=subprocess.PIPE, text=True, env=env)
    assert p.stdout.readline().strip() == "start"
    time.sleep(1.5)
    sent = time.perf_counter()
    p.send_signal(signal.SIGINT)
    out = p.stdout.readline().strip()
    print(f"Ctrl-C during a long lum fit: {out} after {time.perf_counter() - sent:.3f} s")
    p.kill()
    p.wait()


if __name__ == "__main__":
    main()
