"""Benchmark: low-rank kernel LUM (Nystroem, random Fourier features) against the exact kernel LUM.

Data: a two-class problem with a curved Bayes boundary (``x1^2 + x2^2 + 0.5 x3`` against a
threshold, plus noise, in p = 5 dimensions; the true class probabilities are known), so the
probability error ``mean |p_hat - p|`` of each fit can be measured on fresh test data.

1. At sizes where the exact kernel fit runs (default n = 2000, 4000), the exact soft kernel LUM
   (``c = 0``, Gaussian kernel, ``gamma = "scale"``, one lambda) against ``kernel_approx`` =
   ``"nystroem"`` and ``"rff"`` at r = 100, 300, 1000: time, peak traced memory, test error,
   probability MAE and the MAE between the approximate and exact probabilities.
2. A large fit (default n = 200 000, r = 300, Nystroem) that the exact kernel cannot hold
   (its kernel alone would take 8 n^2 bytes = 320 GB): time, peak memory, test error and MAE.

Compile time is excluded (a warm-up fit first). Peak memory is ``tracemalloc``'s (numpy
allocations), the ratios are printed in one run.

``python benchmarks/bench_kernel_approx.py [--sizes 2000,4000] [--ranks 100,300,1000] [--big 200000]``

``--model svm`` runs the same comparison for the C-SVM (``svm`` at its defaults: C = 1,
``gamma="scale"``, standardised inputs; Platt probabilities) on the 10-dimensional XOR
Gaussian mixture of ``bench_memory.py`` (known class probabilities): the exact-kernel SVM
(SMO) against ``kernel_approx`` = ``"nystroem"`` / ``"rff"`` at each r (default sizes
5000, 10000), then the large Nystroem fit (default n = 200 000, r = 300) in a fresh process
whose peak resident memory (``VmHWM``) is reported.

``python benchmarks/bench_kernel_approx.py --model svm [--sizes 5000,10000] [--big 200000]``
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import tracemalloc

import numpy as np
from scipy.special import expit

import cohstats as cs


def make(n, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    eta = 2.0 * (X[:, 0] ** 2 + X[:, 1] ** 2 + 0.5 * X[:, 2] - 1.6)
    p = expit(eta)
    y = np.where(rng.random(n) < p, "b", "a")
    return X, y, p


def run(n, kind, r, lam, Xt, yt, pt, seed=0):
    X, y, _ = make(n, seed)
    tracemalloc.start()
    t0 = time.perf_counter()
    kw = dict(a=1000.0, c=0.0, kernel="rbf", lambda_=lam)
    if kind != "exact":
        kw.update(kernel_approx=kind, n_components=r, random_state=0)
    fit = cs.lum(X, y, **kw)
    P = fit.predict(Xt, type="prob").to_numpy()[:, 1]
    secs = time.perf_counter() - t0
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    err = float(np.mean(fit.predict(Xt).to_numpy() != yt))
    return dict(
        n=n,
        method=kind,
        r=r if kind != "exact" else n,
        seconds=secs,
        peak_mb=peak,
        test_error=err,
        prob_mae=float(np.mean(np.abs(P - pt))),
    ), P


def run_svm(n, kind, r, Xt, yt, pt, seed=0):
    from bench_memory import mixture

    X, y, _ = mixture(n, seed=seed)
    kw = {} if kind == "exact" else dict(kernel_approx=kind, n_components=r, random_state=0)
    t0 = time.perf_counter()
    fit = cs.svm(X, y, **kw)
    secs = time.perf_counter() - t0
    P = fit.predict(Xt, type="prob").to_numpy()[:, 1]
    err = float(np.mean((fit.predict(Xt).to_numpy().ravel() == 1.0) != (yt > 0)))
    return dict(
        n=n,
        method=kind,
        r=r if kind != "exact" else n,
        seconds=secs,
        test_error=err,
        prob_mae=float(np.mean(np.abs(P - pt))),
    ), P


def main_svm(args):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from bench_memory import mixture, run_case

    Xt, yt, pt = mixture(20_000, seed=99)
    Xw, yw, _ = mixture(300, seed=3)
    cs.svm(Xw, yw)
    cs.svm(Xw, yw, kernel_approx="nystroem", n_components=50)
    print(f"load average {os.getloadavg()[0]:.2f}; Bayes error {np.mean(np.minimum(pt, 1 - pt)):.4f}")
    print(
        f"{'n':>7} {'method':>9} {'r':>6} {'seconds':>8} {'test err':>8} {'MAE(p)':>7} {'MAE vs exact':>12} "
        f"{'time ratio':>10}"
    )
    for n in (int(v) for v in args.sizes.split(",")):
        ex, Pe = run_svm(n, "exact", None, Xt, yt, pt)
        rows = [dict(ex, mae_vs_exact=0.0, time_ratio=1.0)]
        for kind in ("nystroem", "rff"):
            for r in (int(v) for v in args.ranks.split(",")):
                res, P = run_svm(n, kind, r, Xt, yt, pt)
                rows.append(
                    dict(res, mae_vs_exact=float(np.mean(np.abs(P - Pe))), time_ratio=res["seconds"] / ex["seconds"])
                )
        for q in rows:
            print(
                f"{q['n']:>7} {q['method']:>9} {q['r']:>6} {q['seconds']:>8.2f} {q['test_error']:>8.4f} "
                f"{q['prob_mae']:>7.4f} {q['mae_vs_exact']:>12.4f} {q['time_ratio']:>10.3f}"
            )
    if args.big:
        q = run_case("svm_approx", args.big, 1)
        if "error" in q:
            print(f"large fit failed: {q['error']}")
        else:
            big, _ = run_svm(args.big, "nystroem", args.big_rank, Xt, yt, pt)
            print(
                f"{args.big:>7} {'nystroem':>9} {args.big_rank:>6} {big['seconds']:>8.2f} {big['test_error']:>8.4f} "
                f"{big['prob_mae']:>7.4f} {'(no exact)':>12}"
            )
            print(
                f"fresh process: fit {q['seconds']:.1f} s, peak RSS {q['peak_mb']:.0f} MB "
                f"(after imports and warm-up {q['baseline_mb']:.0f} MB); exact kernel would need "
                f"{8 * args.big**2 / 2**30:.0f} GiB for K alone"
            )
    print(f"load average {os.getloadavg()[0]:.2f}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", choices=("lum", "svm"), default="lum")
    ap.add_argument("--sizes", default="2000,4000")
    ap.add_argument("--ranks", default="100,300,1000")
    ap.add_argument("--big", type=int, default=200_000)
    ap.add_argument("--big-rank", type=int, default=300)
    ap.add_argument("--lam", type=float, default=1e-3)
    args = ap.parse_args(argv)
    from threadpoolctl import threadpool_limits

    # one BLAS thread (as the same-run benchmarks): on the shared 2-core machine a
    # threaded BLAS oversubscribes and small LAPACK calls (the r x r eigendecomposition) take seconds
    with threadpool_limits(limits=1):
        _main(args)


def _main(args):
    if args.model == "svm":
        if args.sizes == "2000,4000":
            args.sizes = "5000,10000"
        return main_svm(args)
    Xt, yt, pt = make(20_000, seed=99)
    Xw, yw, _ = make(200, 1)  # warm-up: compile outside the timings
    cs.lum(Xw, yw, kernel="rbf", lambda_=args.lam)
    cs.lum(Xw, yw, kernel="rbf", lambda_=args.lam, kernel_approx="nystroem", n_components=50)
    rows = []
    print(
        f"{'n':>7} {'method':>9} {'r':>6} {'seconds':>8} {'peak MB':>9} {'test err':>8} "
        f"{'MAE(p)':>7} {'MAE vs exact':>12} {'time ratio':>10}"
    )
    for n in (int(v) for v in args.sizes.split(",")):
        ex, Pe = run(n, "exact", None, args.lam, Xt, yt, pt)
        ex["mae_vs_exact"] = 0.0
        ex["time_ratio"] = 1.0
        rows.append(ex)
        for kind in ("nystroem", "rff"):
            for r in (int(v) for v in args.ranks.split(",")):
                if kind == "nystroem" and r > n:
                    continue
                res, P = run(n, kind, r, args.lam, Xt, yt, pt)
                res["mae_vs_exact"] = float(np.mean(np.abs(P - Pe)))
                res["time_ratio"] = res["seconds"] / ex["seconds"]
                rows.append(res)
        for r in rows[-(len(rows) - [i for i, x in enumerate(rows) if x["method"] == "exact"][-1]) :]:
            print(
                f"{r['n']:>7} {r['method']:>9} {r['r']:>6} {r['seconds']:>8.2f} {r['peak_mb']:>9.1f} "
                f"{r['test_error']:>8.4f} {r['prob_mae']:>7.4f} {r['mae_vs_exact']:>12.4f} "
                f"{r['time_ratio']:>10.3f}"
            )
    if args.big:
        res, _ = run(args.big, "nystroem", args.big_rank, args.lam, Xt, yt, pt)
        print(
            f"{res['n']:>7} {res['method']:>9} {res['r']:>6} {res['seconds']:>8.2f} "
            f"{res['peak_mb']:>9.1f} {res['test_error']:>8.4f} {res['prob_mae']:>7.4f} "
            f"{'(no exact)':>12} {'':>10}"
        )
        print(f"exact kernel at n = {args.big} would need {8 * args.big**2 / 2**30:.0f} GiB for K alone")


if __name__ == "__main__":
    main()
