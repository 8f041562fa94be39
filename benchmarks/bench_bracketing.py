"""Benchmark: the bracketing probability estimator of [WSL] against libsvm's ``probability=True``.

Both estimators start from the same Gaussian-kernel C-SVM (``C = 1``, the same ``gamma``, the
same raw inputs) and turn it into class probabilities:

* ours, ``cs.svm(..., pi="path")``: the weighted SVMs at ``pi_j = j/m`` (``m = floor(sqrt(n))``),
  read off the exact solution path in ``pi`` (``path_method="exact"``) or solved by warm-started
  SMO (``"warm"``); ``predict(type="prob")`` brackets ``p(x)`` between the last ``pi`` that
  classifies ``x`` as +1 and the first that does not ([WSL] section 3);
* scikit-learn's ``SVC(probability=True)``: libsvm's Platt scaling fitted on 5-fold internal
  cross-validation decision values (five extra SVM fits and a sigmoid).

The data have known class probabilities ([WSL] Example 1 and Example 2, the papers' own
simulations), so the printout gives, in one run, the time of each estimator (fit plus
``predict_proba`` on a test set of 2000 rows), the time ratio, and the mean absolute error
``mean |p_hat - p|`` of each against the truth.

Timings are interleaved (SVC, exact, warm, SVC, ...) and each is the best of ``--repeat``, in
wall time and in CPU time (process time). Set ``OPENBLAS_NUM_THREADS=1`` on a busy machine:
libsvm is single-threaded, and idle-spinning BLAS threads (the prediction's matrix products)
then count against us.

``python benchmarks/bench_bracketing.py [--n 500 1000 2000] [--repeat 3] [--reps 3] [--exact-max-n 2000]``
"""

from __future__ import annotations

import argparse
from pathlib import Path
import os
import warnings
import sys
import time

import numpy as np

# this checkout's cohstats, not an installed one (a script's sys.path[0] is its own folder)
ROOT = str(Path(__file__).resolve().parent.parent)
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

import cohstats as cs  # noqa: E402
from cohstats.datasets import make_wsl1, make_wsl2  # noqa: E402


def _split(maker, n, seed):
    df, p = maker(n + 2000, random_state=seed, return_prob=True)
    X = df[["x1", "x2"]].to_numpy()
    y = df["y"].to_numpy()
    return X[:n], y[:n], X[n:], p[n:]


def _best(fn, repeat):
    """``(wall s, CPU s, result)`` of the fastest of ``repeat`` runs (CPU = process time, all
    threads: on a busy machine the fairer measure, since wall time depends on the scheduler)."""
    best, cpu, out = np.inf, np.inf, None
    for _ in range(repeat):
        t, c = time.perf_counter(), time.process_time()
        out = fn()
        best = min(best, time.perf_counter() - t)
        cpu = min(cpu, time.process_time() - c)
    return best, cpu, out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="+", default=[500, 1000, 2000])
    ap.add_argument("--repeat", type=int, default=3, help="best of this many timings")
    ap.add_argument("--reps", type=int, default=3, help="data sets (seeds) per size for the MAE")
    ap.add_argument(
        "--exact-max-n", type=int, default=2000, help="time the exact pi path only up to this n (slow on noisy data)"
    )
    args = ap.parse_args(argv)
    from sklearn.svm import SVC

    # scikit-learn >= 1.9 deprecates probability=True (in favour of CalibratedClassifierCV); it
    # is still libsvm's estimator that users know, and the one this benchmark anchors on.
    warnings.filterwarnings("ignore", message=".*probability.*", category=FutureWarning)

    X, y, Xt, _ = _split(make_wsl2, 100, 0)  # compile / cache load, not timed
    for method in ("exact", "warm"):
        cs.svm(X, y, kernel="rbf", gamma=0.5, standardize=False, pi="path", path_method=method).predict(Xt, type="prob")

    print(
        "bracketing ([WSL]) vs SVC(probability=True): C = 1, Gaussian kernel gamma = 1/(p Var X), "
        "raw inputs; time = fit + probabilities on 2000 test rows (best of --repeat); "
        "MAE = mean |p_hat - p| over --reps data sets (mean +- SE)"
    )
    print(f"load average before the run: {os.getloadavg()[0]:.2f}")
    head = (
        f"{'data':>5} {'n':>5} {'m':>3} {'SVC s':>7} {'exact s':>8} {'ratio':>6} {'warm s':>7} "
        f"{'ratio':>6} {'MAE SVC':>14} {'MAE exact':>14} {'MAE warm':>14}"
    )
    print(head)
    for name, maker in (("WSL1", make_wsl1), ("WSL2", make_wsl2)):
        for n in args.n:
            maes = {"svc": [], "exact": [], "warm": []}
            times = {"svc": [], "exact": [], "warm": []}
            cpus = {"svc": [], "exact": [], "warm": []}
            for rep in range(args.reps):
                X, y, Xt, pt = _split(maker, n, 1000 + rep)
                gamma = 1.0 / (X.shape[1] * X.var())
                pos = np.max(y)

                def svc():
                    f = SVC(C=1.0, kernel="rbf", gamma=gamma, probability=True, random_state=rep)
                    f.fit(X, y)
                    return f.predict_proba(Xt)[:, list(f.classes_).index(pos)]

                def ours(method):
                    f = cs.svm(X, y, kernel="rbf", gamma=gamma, C=1.0, standardize=False, pi="path", path_method=method)
                    P = f.predict(Xt, type="prob")
                    return P[pos].to_numpy()

                # interleaved: SVC, exact, warm, SVC, exact, warm, ... (best of --repeat each)
                fns = {"svc": svc, "exact": lambda: ours("exact"), "warm": lambda: ours("warm")}
                if n > args.exact_max_n:
                    del fns["exact"]
                best = {k: (np.inf, np.inf, None) for k in fns}
                for _ in range(args.repeat if rep == 0 else 1):
                    for key, fn in fns.items():
                        t, c, P = _best(fn, 1)
                        best[key] = (min(t, best[key][0]), min(c, best[key][1]), P)
                for key, (t, c, P) in best.items():
                    times[key].append(t)
                    cpus[key].append(c)
                    maes[key].append(float(np.mean(np.abs(P - pt))))
            t = {k: float(np.min(v)) if v else np.nan for k, v in times.items()}
            c = {k: float(np.min(v)) if v else np.nan for k, v in cpus.items()}
            ms = {
                k: f"{np.mean(v):.4f}+-{np.std(v, ddof=1) / np.sqrt(len(v)) if len(v) > 1 else 0:.4f}" if v else "-"
                for k, v in maes.items()
            }
            m = int(np.floor(np.sqrt(n)))
            print(
                f"{name:>5} {n:>5} {m:>3} {t['svc']:>7.3f} {t['exact']:>8.3f} "
                f"{t['exact'] / t['svc']:>6.2f} {t['warm']:>7.3f} {t['warm'] / t['svc']:>6.2f} "
                f"{ms['svc']:>14} {ms['exact']:>14} {ms['warm']:>14}   CPU s: SVC {c['svc']:.3f} "
                f"exact {c['exact']:.3f} ({c['exact'] / c['svc']:.2f}) "
                f"warm {c['warm']:.3f} ({c['warm'] / c['svc']:.2f})"
            )


if __name__ == "__main__":
    main()
