"""Benchmark: cross-validation of kernel C-learning or the kernel LUM with one kernel matrix shared
by all the fits (``share_kernel=True``, the default where the folds allow it) against a kernel
matrix per fit (``share_kernel=False``), in the same run, interleaved (off, on, off, on, ...).

Each case runs ``cv(clearn, ...)`` (or ``tune`` over a grid) with ``standardize=False`` and a
numeric width, so that the kernel depends on the rows only. Reported per case: the median
seconds of each variant, the ratio shared / per-fit of every interleaved pair (median and
range), the number of kernel matrices computed per variant, the largest tracemalloc peak of each
variant in units of one n x n float64 matrix (``tracemalloc`` sees numpy's arrays, not LAPACK's
or BLAS's work buffers), the largest difference of the CV curves (infinite deviances, a held-out
probability of exactly 0 or 1, compared as equal), and the load average before and after.

Cases (two-class XOR mixture, ``benchmarks/bench_memory.py``'s data), ``--model clearn``:

* ``rbf`` -- Gaussian kernel, n x p = N x 10, alpha = 0.5, ``--nlambda`` values;
* ``wide`` -- Gaussian kernel on N x 2000 inputs (the kernel costs n^2 p);
* ``callable`` -- a Laplacian kernel given as a Python callable (scipy's cdist);
* ``tune`` -- ``tune`` over alpha in {0.2, 0.5, 1} at one width on the N x 2000 inputs of ``wide``
  (one matrix for 3 x (folds + 1) fits).

``--model lum`` (the binary kernel LUM, ``a = 1000``, ridge penalty, damped Newton steps; the
default ``measure="deviance"`` through the refitted-LUM probabilities):

* ``rbf`` -- ``c = 0``, Gaussian kernel, N x 10, ``--nlambda`` values from 10 down to 1e-3;
* ``wide`` -- the same on N x 2000 inputs;
* ``callable`` -- the Laplacian callable, N x 10;
* ``tune`` -- the tuned LUM of [LZW] as ``tune_lum`` runs it (``c`` in {0, 1e4} x lambda,
  misclassification error) on ``--n-tune`` x 2000 inputs: one matrix for 2 x (folds + 1) fits.

``python benchmarks/bench_cv_kernel.py [--model clearn|lum] [--n 1000] [--n-tune 300]
[--nfolds 5] [--nlambda 10] [--repeat 3] [--cases rbf,wide,callable,tune]``
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import tracemalloc
import warnings
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


def case_args(case, n, nlambda, seed=1, model="clearn"):
    p = 2000 if case in ("wide", "tune") else 10
    X, y, _ = mixture(n, seed=seed, p=p)
    kw = dict(standardize=False, verbose=False, random_state=0)
    if model == "lum":
        kw["lambda_"] = np.geomspace(10.0, 1e-3, nlambda)
        kw.update(kernel=laplacian) if case == "callable" else kw.update(kernel="rbf", gamma=1.0 / p)
        if case == "tune":  # tune_lum's grid and measure
            kw.update(grid={"c": [0.0, 1e4], "lambda_": kw.pop("lambda_")}, measure="class", a=1000.0)
        return X, y, kw
    kw["nlambda"] = nlambda
    if case == "callable":
        kw.update(kernel=laplacian, alpha=0.5)
    else:
        kw.update(kernel="rbf", gamma=1.0 / p, alpha=0.5)
    if case == "tune":
        kw.pop("alpha")
        kw["grid"] = {"alpha": [0.2, 0.5, 1.0]}
    return X, y, kw


def _max_diff(a, b):
    """Largest |a - b|, equal infinities counted as equal (NaN if they differ)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    same_inf = np.isinf(a) & (a == b)
    if np.any(np.isinf(a) ^ np.isinf(b)):
        return float("nan")
    return float(np.max(np.abs(np.where(same_inf, 0.0, a - b)), initial=0.0))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", choices=("clearn", "lum"), default="clearn")
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--n-tune", type=int, default=None, help="n of the tune case (default --n)")
    ap.add_argument("--nfolds", type=int, default=5)
    ap.add_argument("--nlambda", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--cases", default="rbf,wide,callable,tune")
    a = ap.parse_args(argv)

    import cohstats.kernels as ks
    from cohstats.exceptions import ConvergenceWarning
    from cohstats.models.clearn import clearn
    from cohstats.models.lum import lum
    from cohstats.tuning import cv, tune

    warnings.simplefilter("ignore", ConvergenceWarning)  # small separable folds warn alike in both routes
    fit_fn = lum if a.model == "lum" else clearn

    calls = [0]
    orig = ks.Kernel.__call__

    def counting(self, A, B=None):
        calls[0] += 1
        return orig(self, A, B)

    ks.Kernel.__call__ = counting
    load0 = os.getloadavg()
    print(f"load average at start: {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f}")
    Xw, yw, _ = mixture(80, seed=5)
    warm = dict(kernel="rbf", gamma=0.1, standardize=False, nfolds=3, verbose=False)
    cv(fit_fn, Xw, yw, **warm, **({"lambda_": [1.0, 0.1]} if a.model == "lum" else {"nlambda": 3}))  # warm-up
    for case in a.cases.split(","):
        n = a.n_tune if (case == "tune" and a.n_tune) else a.n
        X, y, kw = case_args(case, n, a.nlambda, model=a.model)
        fn = tune if case == "tune" else cv
        times = {False: [], True: []}
        peaks = {False: 0.0, True: 0.0}
        ncalls = {}
        res = {}
        for _ in range(a.repeat):
            for share in (False, True):
                calls[0] = 0
                tracemalloc.start()
                t = time.perf_counter()
                r = fn(fit_fn, X, y, nfolds=a.nfolds, share_kernel=share, **kw)
                times[share].append(time.perf_counter() - t)
                peaks[share] = max(peaks[share], tracemalloc.get_traced_memory()[1] / (8.0 * n * n))
                tracemalloc.stop()
                ncalls[share] = calls[0]
                res[share] = r
        if case == "tune":
            diff = _max_diff(res[True].table["score"], res[False].table["score"])
            same = res[True].best_params == res[False].best_params
        else:
            diff = _max_diff(res[True].cvm, res[False].cvm)
            same = res[True].index_min == res[False].index_min
        ratios = [s / o for o, s in zip(times[False], times[True])]
        p = X.shape[1]
        print(
            f"{a.model} {case:9s} n={n} p={p} folds={a.nfolds} nlambda={a.nlambda}: "
            f"per-fit {statistics.median(times[False]):7.2f} s ({ncalls[False]} kernels, peak "
            f"{peaks[False]:.2f} n^2), shared {statistics.median(times[True]):7.2f} s ({ncalls[True]}, "
            f"{peaks[True]:.2f} n^2); ratio {statistics.median(ratios):.3f} [{min(ratios):.3f}, "
            f"{max(ratios):.3f}]; max |cv diff| {diff:.1e}; same choice {same}; "
            f"load {os.getloadavg()[0]:.1f}",
            flush=True,
        )
    load1 = os.getloadavg()
    print(f"load average at end: {load1[0]:.2f} {load1[1]:.2f} {load1[2]:.2f}")


if __name__ == "__main__":
    main()
