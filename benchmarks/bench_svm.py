"""SMO vs scikit-learn SVC (libsvm), and all bracketing classifiers via the pi path vs m+1 fits.

Run: ``python benchmarks/bench_svm.py [--n 1000 5000]``. Compile time is measured first and
reported separately; every timing below is one run on warm code, printed with ratios.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

# this checkout's cohstats, not an installed one (a script's sys.path[0] is its own folder)
ROOT = str(Path(__file__).resolve().parent.parent)
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)


def _data(n, d=20, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(X[:, 0] + X[:, 1] ** 2 - 1 + 0.5 * rng.normal(size=n) > 0, 1.0, -1.0)
    return X, y


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, nargs="+", default=[1000, 5000])
    ap.add_argument("--no-path", action="store_true", help="skip the bracketing comparison")
    ap.add_argument("--repeat", type=int, default=3, help="best of this many runs of each")
    ap.add_argument(
        "--max-exact", type=int, default=2000, help="largest n for the exact pi path (it costs O(n |elbow|) per event)"
    )
    args = ap.parse_args(argv)
    from sklearn.svm import SVC

    from cohstats.kernels import KERNEL_RBF
    from cohstats.solvers.svm.smo import smo_solve
    from cohstats.solvers.svm.svmpath import pi_grid_smo, pi_path

    t0 = time.perf_counter()
    Xw, yw = _data(60)
    kw = np.array([1 / 20, 0, 0, 0, 0.0])
    smo_solve(Xw, yw, code=KERNEL_RBF, kpar=kw, C=np.ones(60))
    pi_path(Xw, yw, code=KERNEL_RBF, kpar=kw, nlam=1.0, grid=np.array([0.25, 0.5, 0.75]))
    print(f"compile / cache load: {time.perf_counter() - t0:.2f} s")

    gamma = 1 / 20
    kpar = np.array([gamma, 0, 0, 0, 0.0])
    print(f"{'n':>6} {'libsvm s':>9} {'ours s':>8} {'ratio':>6}")
    rows = []
    for n in args.n:
        X, y = _data(n)
        ts = to = np.inf
        for _ in range(args.repeat):  # alternate the two; best of `repeat` (shared machine)
            t = time.perf_counter()
            s = SVC(C=1.0, kernel="rbf", gamma=gamma, cache_size=200).fit(X, y)
            ts = min(ts, time.perf_counter() - t)
            t = time.perf_counter()
            r = smo_solve(X, y, code=KERNEL_RBF, kpar=kpar, C=np.ones(n), cache_size=200)
            to = min(to, time.perf_counter() - t)
        rows.append((n, ts, to))
        print(
            f"{n:>6} {ts:>9.3f} {to:>8.3f} {to / ts:>6.2f}   (ours: {r.n_iter} iterations, "
            f"{r.info['kernel_rows']} kernel rows computed; libsvm: {s.n_support_.sum()} SV, "
            f"ours {np.sum(r.dual > 0)} SV)"
        )
    if args.no_path:
        return
    print(
        "\nbracketing: m - 1 interior weighted SVMs (pi_j = j/m), C = 1 at pi = 1/2; "
        "times are best of --repeat, ratios to one SMO fit; t2 = the two halves of the grid in "
        "two threads (n_jobs=2)"
    )
    print(
        f"{'n':>6} {'m':>4} {'one SMO s':>9} {'m-1 SMO':>8} {'warm':>6} {'warm t2':>7} "
        f"{'exact':>6} {'exact t2':>8} {'events':>7} {'restarts':>8}"
    )

    def best(fn):
        out = np.inf
        for _ in range(args.repeat):
            t = time.perf_counter()
            res = fn()
            out = min(out, time.perf_counter() - t)
        return out, res

    for n in args.n:
        X, y = _data(n)
        m = int(math.floor(math.sqrt(n)))
        grid = np.arange(1, m) / m
        nlam = 0.5  # C_i = S_i / nlam = 1 at pi = 1/2
        t_one, _ = best(lambda: smo_solve(X, y, code=KERNEL_RBF, kpar=kpar, C=np.full(n, 1.0)))
        t = time.perf_counter()
        for pi in grid:
            smo_solve(X, y, code=KERNEL_RBF, kpar=kpar, C=np.where(y > 0, 1 - pi, pi) / nlam)
        t_sep = time.perf_counter() - t
        warm = [
            best(lambda: pi_grid_smo(X, y, code=KERNEL_RBF, kpar=kpar, nlam=nlam, grid=grid, n_jobs=j))[0]
            for j in (None, 2)
        ]
        if n <= args.max_exact:
            ex = [
                best(lambda: pi_path(X, y, code=KERNEL_RBF, kpar=kpar, nlam=nlam, grid=grid, n_jobs=j))
                for j in (None, 2)
            ]
            t_ex = [e[0] for e in ex]
            ev, rs = ex[0][1].info["n_events"], ex[0][1].info["n_restarts"]
        else:
            t_ex, ev, rs = [float("nan")] * 2, -1, -1
        r = [v / t_one for v in (t_sep, *warm, *t_ex)]
        print(
            f"{n:>6} {m:>4} {t_one:>9.4f} {r[0]:>7.1f}x {r[1]:>5.1f}x {r[2]:>6.1f}x "
            f"{r[3]:>5.1f}x {r[4]:>7.1f}x {ev:>7} {rs:>8}"
        )


if __name__ == "__main__":
    main()
