"""[ZJLY] Table 2: GentleBoost.C beside LightGBM and scikit-learn's HistGradientBoosting.

Runs the three-engine section of the ``gboost_uci`` vignette
(:func:`cohstats.vignettes.gboost_uci.run_engines`) and writes its report
(``gboost_uci_engines.md``), the per-fit rows (``gboost_uci_engines_fits.csv``) and
``run_info.json`` beside this script::

    python vignettes/results/zjly/table2_three_engines/zjly_table2_engines.py [--reps 10] [--seed 0]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[3]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # the cohstats of this checkout


def _version(pkg):
    try:
        return metadata.version(pkg)
    except metadata.PackageNotFoundError:
        return "not installed"


def main(argv=None):
    from cohstats.vignettes.gboost_uci import run_engines

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=10, help="runs per data set (Waveform: draws)")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    load0, c0, w0 = os.getloadavg(), time.process_time(), time.perf_counter()
    path = run_engines(reps=a.reps, out=HERE, seed=a.seed)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    info = {
        "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": commit.stdout.strip() or "unknown",
        "command": f"python {Path(__file__).resolve().relative_to(ROOT).as_posix()} --reps {a.reps} --seed {a.seed}",
        "reps": a.reps,
        "seed": a.seed,
        "machine": f"{platform.system()} {platform.machine()}, {os.cpu_count()} cores (shared)",
        "load_average_start_1_5_15": [round(v, 2) for v in load0],
        "load_average_end_1_5_15": [round(v, 2) for v in os.getloadavg()],
        "wall_seconds": round(time.perf_counter() - w0, 1),
        "cpu_seconds": round(time.process_time() - c0, 1),
        "versions": {p: _version(p) for p in ("cohstats", "lightgbm", "scikit-learn", "numpy")},
    }
    (HERE / "run_info.json").write_text(json.dumps(info, indent=1) + "\n", encoding="utf-8")
    print(path)


if __name__ == "__main__":
    main()
