"""First use: what numba compilation costs each fit function from an empty cache.

Every case runs in a fresh Python process with an empty compiled-code cache
(``COHSTATS_NUMBA_CACHE_DIR`` set to a new folder), then once more in another fresh process with
the cache that the first one filled. For each case the table gives

* ``cold CPU``: CPU seconds of the whole first process (interpreter start, ``import cohstats``,
  the fit and, for ``cv(n_jobs=2)`` and ``warmup``, its worker processes);
* ``compiled``: the number of cohstats functions numba compiled in that process (numba's event
  API; for ``cv(n_jobs=2)`` the workers' compilations are not seen, only the parent's);
* ``cached``: the number of functions whose machine code the cache holds afterwards (numba index
  files; functions that only jitted code calls are compiled into their callers and have none);
* ``warm wall``: wall seconds of the second process, start to exit (import plus the first fit);
  the package's bytecode is compiled first and both processes keep bytecode (``__pycache__``,
  also where ``PYTHONDONTWRITEBYTECODE`` is set), as in an installed package;
* the functions that took longest to compile (exclusive CPU seconds, from numba's event API
  ``numba.core.event``: the time of a function's own compilation, less the callees compiled
  meanwhile).

Usage::

    python benchmarks/bench_compile.py                    # every case
    python benchmarks/bench_compile.py --cases clearn svm --top 10
    python benchmarks/bench_compile.py --json out.jsonl   # also append one JSON line per run
    python benchmarks/bench_compile.py --against ../old --pairs 2   # alternate with another version

Run it on an idle machine: compilation is CPU-bound, and a busy machine inflates it. The speed
of a virtual machine can also drift by 20 % within an hour, so compare versions with
``--against``, which alternates them case by case, rather than runs made at different times.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

#: cases: name -> (description, code run in the child after the data are made)
CASES = {
    "clearn": ("binary linear clearn", "cs.clearn('y ~ .', data=df)"),
    "clearn_kernel": ("binary kernel clearn", "cs.clearn('y ~ .', data=df, kernel='rbf')"),
    "clearn_multi": ("3-class linear clearn", "cs.clearn('y3 ~ .', data=df3)"),
    "lum": ("binary linear lum", "cs.lum('y ~ .', data=df)"),
    "svm": ("binary svm (rbf)", "cs.svm('y ~ .', data=df)"),
    "lamsvm": ("3-class lamsvm (rbf)", "cs.lamsvm('y3 ~ .', data=df3)"),
    "gboost_c": ("3-class gboost_c", "cs.gboost_c('y3 ~ .', data=df3)"),
    "cv_clearn": ("cv(clearn, n_jobs=2)", "cs.cv(cs.clearn, 'y ~ .', data=df, n_jobs=2)"),
    "warmup": ("python -m cohstats warmup", None),
}

_DATA = """
import numpy as np, pandas as pd
import cohstats as cs
rng = np.random.default_rng(0)
X = rng.standard_normal((200, 5))
df = pd.DataFrame(X, columns=[f"x{i}" for i in range(5)])
f = X[:, 0] + rng.standard_normal(200)
df3 = df.copy()
df["y"] = np.where(f > 0, "a", "b")
df3["y3"] = np.select([f < -0.4, f < 0.4], ["a", "b"], "c")
"""


def _child(case: str) -> None:
    """Run one case in this process and print one JSON line (see :func:`_run`)."""
    import numba.core.event as ev

    rows: list = []
    stack: list = []

    class Listener(ev.Listener):
        def on_start(self, event):
            stack.append([time.process_time(), 0.0])

        def on_end(self, event):
            t0, child = stack.pop()
            cpu = time.process_time() - t0
            if stack:
                stack[-1][1] += cpu
            d = event.data["dispatcher"]
            rows.append((cpu - child, f"{d.py_func.__module__}.{d.py_func.__qualname__}"))

    ev.register("numba:compile", Listener())
    code = CASES[case][1]
    if code is None:
        from cohstats.__main__ import main

        with open(os.devnull, "w") as null:
            stdout, sys.stdout = sys.stdout, null
            try:
                main(["warmup"])
            finally:
                sys.stdout = stdout
    else:
        exec(_DATA + code, {})
    try:  # reap joblib's worker processes so that their CPU time is counted
        from joblib.externals.loky import get_reusable_executor

        get_reusable_executor().shutdown(wait=True)
    except Exception:  # pragma: no cover - no workers were started
        pass
    top: dict = {}
    for t, name in rows:
        top[name] = top.get(name, 0.0) + t
    ours = {name for _, name in rows if name.startswith("cohstats.")}
    print(json.dumps({"top": sorted(top.items(), key=lambda kv: -kv[1]), "events": len(rows), "compiled": len(ours)}))


def _run(case: str, cache: str, root: str | None = None) -> dict:
    env = dict(os.environ, COHSTATS_NUMBA_CACHE_DIR=cache, COHSTATS_QUIET="1")
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # bytecode is kept, as in an installed package
    if root is not None:  # another version's checkout
        env["PYTHONPATH"] = root
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    res = subprocess.run(
        [sys.executable, __file__, "--child", case], env=env, capture_output=True, text=True, check=False
    )
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if res.returncode != 0:
        raise RuntimeError(f"case {case!r} failed:\n{res.stderr[-3000:]}")
    out = json.loads(res.stdout.strip().splitlines()[-1])
    out["cpu"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    out["wall"] = wall
    out["cached"] = sum(f.endswith(".nbi") for _, _, files in os.walk(cache) for f in files)
    return out


def _this_package() -> str:
    import cohstats

    return cohstats.__file__


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", nargs="+", choices=list(CASES), default=list(CASES))
    parser.add_argument("--top", type=int, default=5, help="slowest functions listed per case")
    parser.add_argument("--json", help="append one JSON line per case to this file")
    parser.add_argument(
        "--against",
        metavar="DIR",
        help="another version's checkout (e.g. `git worktree add DIR REV`): each case runs for both "
        "versions alternately, so that both see the same machine speed",
    )
    parser.add_argument("--pairs", type=int, default=1, help="runs per case and version (means are printed)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        _child(args.child)
        return 0
    versions = [("this", None)]
    if args.against:
        root = os.path.abspath(args.against)
        if not os.path.isfile(os.path.join(root, "cohstats", "__init__.py")):
            parser.error(f"--against {args.against!r} is not a checkout of cohstats (no cohstats/__init__.py)")
        versions.append(("against", root))
    # the package's bytecode, as an installation compiles it (pip install does)
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    for _, root in versions:
        pkg = os.path.join(root, "cohstats") if root else os.path.dirname(_this_package())
        subprocess.run([sys.executable, "-m", "compileall", "-q", pkg], env=env, capture_output=True, check=False)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"load average before the run: {load:.2f} (run on an idle machine)")
    if args.against:
        print(f"this version and {args.against} alternately, {args.pairs} pair(s) per case; means")
    print(f"{'case':<34}{'':>8}{'cold CPU s':>11}{'compiled':>10}{'cached':>8}{'warm wall s':>13}")
    for case in args.cases:
        runs: dict = {name: [] for name, _ in versions}
        for _ in range(args.pairs):
            for name, root in versions:
                with tempfile.TemporaryDirectory(prefix="cohstats-compile-") as cache:
                    cold = _run(case, cache, root)
                    warm = _run(case, cache, root)
                runs[name].append((cold, warm))
        for name, _ in versions:
            pairs = runs[name]
            cpu = sum(c["cpu"] for c, _ in pairs) / len(pairs)
            wall = sum(w["wall"] for _, w in pairs) / len(pairs)
            cold, warm = pairs[-1]
            label = CASES[case][0] if name == "this" else ""
            print(f"{label:<34}{name:>8}{cpu:>11.1f}{cold['compiled']:>10d}{cold['cached']:>8d}{wall:>13.2f}")
            for fn, t in cold["top"][: args.top]:
                print(f"    {t:6.2f} s  {fn}")
            if any(w["events"] for _, w in pairs):
                print(f"    warm process compiled {warm['events']} functions (expected none)")
            if args.json:
                for cold, warm in pairs:
                    row = dict(
                        date=time.strftime("%Y-%m-%d"),
                        case=case,
                        version=name,
                        cold_cpu=round(cold["cpu"], 2),
                        compiled=cold["compiled"],
                        cached=cold["cached"],
                        warm_wall=round(warm["wall"], 3),
                        warm_compiled=warm["events"],
                        load=round(load, 2),
                    )
                    with open(args.json, "a") as fh:
                        fh.write(json.dumps(row) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
