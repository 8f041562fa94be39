"""Loading crafted files: each hostile formula is refused quickly and in little memory.

A saved file stores a formula's right-hand side, which ``cohstats.load`` rebuilds with
formulaic after a static check (``cohstats.persist._formula``). This script writes a small
legitimate file, replaces its formula by each hostile one, and loads it in a fresh process,
reporting the CPU time to the refusal and the process's peak resident memory (the goal:
``FormatError`` in under 5 s and under 600 MB each). It also reports the cost of a normal load
(the rebuild of a typical formula), which is what storing transform states as data would save.

Run: ``python benchmarks/bench_load.py``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import zipfile

HOSTILE = {
    "string repetition": 'x1 + I("' + "a" * 1000 + '" * 1000000)',
    "list repetition": "x1 + I([0] * 1000000 * 1000)",
    "nested powers": "x1 + I(((64 ** 64) ** 64) ** 64 ** 64)",
    "poly(degree=1e6)": "poly(x1, degree=1000000)",
    "(x1 + x2) ** 64": "(x1 + x2) ** 64",
}

CHILD = r"""
import resource, sys, time
import cohstats as cs
from cohstats.persist import FormatError
t = time.process_time()
try:
    cs.load(sys.argv[1])
    out = "loaded"
except FormatError as e:
    out = "FormatError: " + str(e).split(": ", 2)[-1][:90]
cpu = time.process_time() - t
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(f"{cpu:.3f}\t{peak:.0f}\t{out}")
"""


def write_design(path, n=200, rhs="x1 + x2 + C(g) + poly(x3, 3) + center(x2):x1"):
    import numpy as np
    import pandas as pd

    from cohstats.formula import build_design
    from cohstats.persist import save

    rng = np.random.default_rng(0)
    df = pd.DataFrame(
        {
            "x1": rng.normal(size=n),
            "x2": rng.normal(size=n),
            "x3": rng.normal(size=n),
            "g": rng.choice(["a", "b", "c"], n),
            "y": rng.choice(["no", "yes"], n),
        }
    )
    save(build_design("y ~ " + rhs, df), path)


def craft(src, dst, rhs):
    """Copy the saved file ``src`` to ``dst`` with the formula's right-hand side replaced."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_STORED) as zout:
        for info in zin.infolist():
            data = zin.read(info)
            if info.filename == "graph.json":
                graph = json.loads(data)

                def walk(node):
                    if isinstance(node, dict):
                        if node.get("$") == "modelspec":
                            node["rhs"] = rhs
                        for v in node.values():
                            walk(v)
                    elif isinstance(node, list):
                        for v in node:
                            walk(v)

                walk(graph)
                data = json.dumps(graph).encode()
            zout.writestr(info, data)


def main():
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    with tempfile.TemporaryDirectory() as tmp:
        base = os.path.join(tmp, "base.cohstats")
        write_design(base)
        print("case\tCPU s\tpeak RSS MB\toutcome")
        cases = {"normal file (typical formula)": None, **HOSTILE}
        for name, rhs in cases.items():
            path = base
            if rhs is not None:
                path = os.path.join(tmp, "crafted.cohstats")
                craft(base, path, rhs)
            out = subprocess.run(
                [sys.executable, "-c", CHILD, path], capture_output=True, text=True, env=env, timeout=600
            )
            print(f"{name}\t{out.stdout.strip() or out.stderr.strip()[-300:]}")
        # the rebuild itself, in this process, for a typical formula
        import time

        from cohstats.persist import _formula, load

        d = load(base)
        frame, rhs = d.frame, d.rhs
        t = time.process_time()
        for _ in range(20):
            _formula._rebuild_spec(rhs, frame)
        rebuild = (time.process_time() - t) / 20
        t = time.process_time()
        for _ in range(20):
            load(base)
        whole = (time.process_time() - t) / 20
        print(f"typical formula {rhs!r} on {len(frame)} rows: rebuild {rebuild * 1e3:.1f} ms CPU", end="")
        print(f" of a {whole * 1e3:.1f} ms load")


if __name__ == "__main__":
    main()
