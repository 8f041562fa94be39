"""Benchmark: cross-validation of kernel C-learning with one kernel matrix shared by all the fits
(``share_kernel=True``, the default where the folds allow it) against a kernel matrix per fit
(``share_kernel=False``), in the same run, interleaved (off, on, off, on, ...).

Each case runs ``cv(clearn, ...)`` (or ``tune`` over a grid) with ``standardize=False`` and a
numeric width, so that the kernel depends on the rows only. Reported per case: the median
seconds of each variant, the ratio shared / per-fit of every interleaved pair (median and
range), the number of kernel matrices computed per variant, the largest difference of the CV
curves, and the load average before and after.

Cases (two-class XOR mixture, ``benchmarks/bench_memory.py``'s data):

* ``rbf`` -- Gaussian kernel, n x p = N x 10, alpha = 0.5, ``--nlambda`` values;
* ``wide`` -- Gaussian kernel on N x 2000 inputs (the kernel costs n^2 p);
* ``callable`` -- a Laplacian kernel given as a Python callable (scipy's cdist);
* ``tune`` -- ``tune`` over alpha in {0.2, 0.5, 1} at one width on the N x 2000 inputs of ``wide``
  (one matrix for 3 x (folds + 1) fits).

``python benchmarks/bench_cv_kernel.py [--n 1000] [--nfolds 5] [--nlambda 10] [--repeat 3]
[--cases rbf,wide,callable,tune]``
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.bench_memory import mixture  # noqa: E402


def laplacian(A, B):
    from scipy.spatial.distance import cdist

    return np.exp(-0.1 * cdist(A, B, "cityblock"))


def case_args(case, n, nlambda, seed=1):
    p = 2000 if case in ("wide", "tune") else 10
    X, y, _ = mixture(n, seed=seed, p=p)
    kw = dict(standardize=False, nlambda=nlambda, verbose=False, random_state=0)
    if case == "callable":
        kw.update(kernel=laplacian, alpha=0.5)
    else:
        kw.update(kernel="rbf", gamma=1.0 / p, alpha=0.5)
    if case == "tune":
        kw.pop("alpha")
        kw["grid"] = {"alpha": [0.2, 0.5, 1.0]}
    return X, y, kw


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--nfolds", type=int, default=5)
    ap.add_argument("--nlambda", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--cases", default="rbf,wide,callable,tune")
    a = ap.parse_args(argv)

    import cohstats.kernels as ks
    from cohstats.models.clearn import clearn
    from cohstats.tuning import cv, tune

    calls = [0]
    orig = ks.Kernel.__call__

    def counting(self, A, B=None):
        calls[0] += 1
        return orig(self, A, B)

    ks.Kernel.__call__ = counting
    load0 = os.getloadavg()
    print(f"load average at start: {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f}")
    Xw, yw, _ = mixture(80, seed=5)
    cv(clearn, Xw, yw, kernel="rbf", gamma=0.1, standardize=False, nlambda=3, nfolds=3, verbose=False)  # warm-up
    for case in a.cases.split(","):
        X, y, kw = case_args(case, a.n, a.nlambda)
        fn = tune if case == "tune" else cv
        times = {False: [], True: []}
        ncalls = {}
        res = {}
        for _ in range(a.repeat):
            for share in (False, True):
                calls[0] = 0
                t = time.perf_counter()
                r = fn(clearn, X, y, nfolds=a.nfolds, share_kernel=share, **kw)
                times[share].append(time.perf_counter() - t)
                ncalls[share] = calls[0]
                res[share] = r
        if case == "tune":
            diff = float(np.max(np.abs(res[True].table["score"].to_numpy() - res[False].table["score"].to_numpy())))
        else:
            diff = float(np.max(np.abs(res[True].cvm - res[False].cvm)))
        ratios = [s / o for o, s in zip(times[False], times[True])]
        p = X.shape[1]
        print(
            f"{case:9s} n={a.n} p={p} folds={a.nfolds} nlambda={a.nlambda}: "
            f"per-fit {statistics.median(times[False]):7.2f} s ({ncalls[False]} kernels), "
            f"shared {statistics.median(times[True]):7.2f} s ({ncalls[True]}); "
            f"ratio {statistics.median(ratios):.3f} [{min(ratios):.3f}, {max(ratios):.3f}]; "
            f"max |cvm diff| {diff:.1e}",
            flush=True,
        )
    load1 = os.getloadavg()
    print(f"load average at end: {load1[0]:.2f} {load1[1]:.2f} {load1[2]:.2f}")


if __name__ == "__main__":
    main()
