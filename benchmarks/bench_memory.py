"""Benchmark: peak resident memory of the large fits of issue #19, each in a fresh process.

``tracemalloc`` sees only allocations made through Python's allocator hooks; BLAS work
buffers, numba's and LLVM's memory and the interpreter itself are invisible to it. Each case
therefore runs in its own child process (``python bench_memory.py --child CASE N``) and reports
its own peak resident set size (``VmHWM``, else ``ru_maxrss``: the whole process) right after
the fit (the number judged against the targets) and again after predicting the training rows,
together with the peak reached after the imports and a small warm-up fit (``baseline``:
interpreter, numpy, pandas, numba and the compiled code), the seconds of the measured fit and
its training error.

Cases (data: a two-class, 10-dimensional Gaussian mixture with an XOR pattern in the first two
coordinates and 8 noise coordinates; class probabilities known):

* ``clearn_kernel`` -- kernel C-learning (Gaussian kernel, default width, ``nlambda`` values),
  target n = 8 000 under 1 GB;
* ``svm_default`` -- ``svm`` with the default width (``gamma="scale"``), n = 30 000, under 1 GB;
* ``svm_median`` -- ``svm`` with ``gamma="median"`` (the [WSL] heuristic), n = 30 000;
* ``svm_approx`` -- ``svm(kernel_approx="nystroem")`` (r = 300), n = 200 000;
* ``cv_per_fit`` / ``cv_shared`` -- 5-fold ``cv`` of kernel C-learning (``gamma=0.1``,
  ``standardize=False``) with a kernel matrix per fit (``share_kernel=False``) or one matrix
  lent to every fit (``share_kernel=True``), n = 3 000: the shared matrix should cost the
  held-out rows of one fold (1/5 of an n x n matrix) beyond the per-fit run, not a second matrix.

``python benchmarks/bench_memory.py [--cases clearn_kernel,svm_default,svm_median,svm_approx]
[--n-clearn 8000] [--n-svm 30000] [--n-approx 200000] [--n-cv 3000] [--nlambda 10]``
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

import numpy as np

TARGET_MB = {
    "clearn_kernel": 1024,
    "svm_default": 1024,
    "svm_median": 1024,
    "svm_approx": None,
    "cv_per_fit": None,
    "cv_shared": None,
}


def mixture(n, seed=0, p=10, a=1.0):
    """XOR mixture: class +1 around (a, a) and (-a, -a), class -1 around (a, -a) and (-a, a)
    in the first two coordinates, unit covariance, equal priors. Returns X, y (+-1), P(y=+1|x)."""
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    comp = rng.random(n) < 0.5
    s = np.where(comp, 1.0, -1.0)
    X = rng.normal(size=(n, p))
    X[:, 0] += a * s
    X[:, 1] += a * s * y
    return X, y, mixture_prob(X, a)


def mixture_prob(X, a=1.0):
    x1, x2 = X[:, 0], X[:, 1]
    # log densities up to the common factor: sum over the two components of each class
    lp = np.logaddexp(-0.5 * ((x1 - a) ** 2 + (x2 - a) ** 2), -0.5 * ((x1 + a) ** 2 + (x2 + a) ** 2))
    lm = np.logaddexp(-0.5 * ((x1 - a) ** 2 + (x2 + a) ** 2), -0.5 * ((x1 + a) ** 2 + (x2 - a) ** 2))
    return 1.0 / (1.0 + np.exp(lm - lp))


def _rss_mb() -> float:
    """Peak resident set size of this process in MB: ``VmHWM`` of the process's own address
    space where Linux reports it (``ru_maxrss`` can carry the parent's size across fork + exec),
    else ``ru_maxrss``."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # Linux: kilobytes


def child(case: str, n: int, nlambda: int) -> dict:
    import cohstats as cs

    Xw, yw, _ = mixture(300, seed=5)
    X, y, _ = mixture(n, seed=1)

    def fit(X, y):
        if case == "clearn_kernel":
            return cs.clearn(X, y, kernel="rbf", nlambda=nlambda)
        if case == "svm_default":
            return cs.svm(X, y)
        if case == "svm_median":
            return cs.svm(X, y, gamma="median")
        if case == "svm_approx":
            return cs.svm(X, y, kernel_approx="nystroem")
        if case in ("cv_per_fit", "cv_shared"):
            from cohstats.tuning import cv

            return cv(
                cs.clearn,
                X,
                y,
                kernel="rbf",
                gamma=0.1,
                standardize=False,
                nlambda=nlambda,
                nfolds=5,
                verbose=False,
                share_kernel=case == "cv_shared",
            )
        raise ValueError(f"unknown case {case!r}")

    fit(Xw, yw)  # warm-up: numba code loaded (or compiled) outside the measurement
    base = _rss_mb()
    t0 = time.perf_counter()
    f = fit(X, y)
    secs = time.perf_counter() - t0
    fit_peak = _rss_mb()
    err = float(np.mean((f.predict(X, type="class").to_numpy().ravel() == 1.0) != (y > 0)))
    return dict(
        case=case, n=n, seconds=secs, baseline_mb=base, peak_mb=fit_peak, predict_peak_mb=_rss_mb(), train_error=err
    )


def run_case(case: str, n: int, nlambda: int) -> dict:
    # one BLAS thread (as the same-run benchmarks): on the shared 2-core machine a
    # threaded BLAS oversubscribes and small LAPACK calls take seconds
    env = dict(os.environ, COHSTATS_QUIET="1", OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    out = subprocess.run(
        [sys.executable, os.path.abspath(__file__), "--child", case, str(n), "--nlambda", str(nlambda)],
        capture_output=True,
        text=True,
        env=env,
    )
    if out.returncode != 0:
        return dict(case=case, n=n, error=out.stderr.strip().splitlines()[-1] if out.stderr else "failed")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--child", nargs=2, metavar=("CASE", "N"))
    ap.add_argument("--cases", default="clearn_kernel,svm_default,svm_median,svm_approx")
    ap.add_argument("--n-clearn", type=int, default=8000)
    ap.add_argument("--n-svm", type=int, default=30000)
    ap.add_argument("--n-approx", type=int, default=200_000)
    ap.add_argument("--n-cv", type=int, default=3000)
    ap.add_argument("--nlambda", type=int, default=10)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child[0], int(args.child[1]), args.nlambda)))
        return
    sizes = {
        "clearn_kernel": args.n_clearn,
        "svm_default": args.n_svm,
        "svm_median": args.n_svm,
        "svm_approx": args.n_approx,
        "cv_per_fit": args.n_cv,
        "cv_shared": args.n_cv,
    }
    print(f"load average {os.getloadavg()[0]:.2f}")
    print(
        f"{'case':>14} {'n':>7} {'seconds':>8} {'baseline MB':>11} {'fit peak MB':>11} {'target MB':>9} "
        f"{'+predict MB':>11} {'train err':>9}"
    )
    for case in args.cases.split(","):
        r = run_case(case, sizes[case], args.nlambda)
        if "error" in r:
            print(f"{case:>14} {r['n']:>7} failed: {r['error']}")
            continue
        tgt = TARGET_MB[case]
        mark = "" if tgt is None else ("  ok" if r["peak_mb"] < tgt else "  MISSED")
        print(
            f"{case:>14} {r['n']:>7} {r['seconds']:>8.1f} {r['baseline_mb']:>11.0f} {r['peak_mb']:>11.0f} "
            f"{tgt if tgt else '-':>9} {r['predict_peak_mb']:>11.0f} {r['train_error']:>9.4f}{mark}"
        )
    print(f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
