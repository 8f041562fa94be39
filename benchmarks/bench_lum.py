"""Benchmark: linear LUM path versus scikit-learn's linear SVMs, timed in one run.

The hard LUM (``c = 1e4``, ``a = 1000``) solves the SVM objective
``(1/n) sum [1 - y f]_+ + (lambda/2)||w||^2`` up to the tiny right tail of the LUM loss, so the
anchors fit the same model at ``C = 1/(n lambda)``:

* ``SVC(kernel="linear")`` (libsvm, exact dual SMO, unpenalised intercept), one fit per lambda;
* ``LinearSVC(loss="hinge")`` (liblinear dual coordinate descent; it penalises the intercept
  through ``intercept_scaling``, so its solution differs slightly), one fit per lambda.

Ours is one warm-started path over the same ``nlambda`` values (plus the soft LUM, ``c = 0``,
for reference). Compile time is measured separately (first call on a tiny problem) and excluded.
Ratios are ours / theirs (below 1: we are faster). Agreement: the largest relative difference
of training decision values at the smallest lambda against SVC.

R's abclass (angle-based LUM) is the natural anchor for the LUM path; it is timed when
``Rscript`` and the abclass package are installed, and skipped with a message otherwise (the
development machines have no R, so that branch has not been exercised here).

Multiclass (``--multiclass``, K = 3 and 5): the angle-based LUM path (``a = 1000``, ``c = 0``,
grouped ridge) is timed against R's abclass on the same data and lambdas when R is available
(coefficients in the simplex coordinates compared at the smallest lambda; abclass's vertex
coding is the same formula of Zhang & Liu 2014, its penalty scaling is assumed to match ours and
is what that comparison would check). Without R the anchor is skipped with the reason printed;
R is not installed on the development machines, so that branch has not been exercised.

``python benchmarks/bench_lum.py [--sizes 1000x100,5000x500,100x2000] [--nlambda 10] [--multiclass]``
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np


def make(n, p, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    beta = np.zeros(p)
    k = min(p, 10)
    beta[:k] = rng.normal(size=k)
    f = X @ beta
    y = np.where(f + 0.8 * np.std(f) * rng.standard_normal(n) > 0, 1.0, -1.0)
    return X, y


_R_ABCLASS = r"""
suppressMessages(library(abclass))
d <- read.csv(file.path(Sys.getenv("BENCH_DIR"), "xy.csv"))
x <- as.matrix(d[, -1]); y <- factor(d[, 1])
lam <- scan(file.path(Sys.getenv("BENCH_DIR"), "lambda.txt"), quiet = TRUE)
t <- system.time(abclass(x, y, loss = "lum", lum_c = as.numeric(Sys.getenv("LUM_C")),
                         lum_a = 1000, lambda = lam, alpha = 0, epsilon = 1e-7))
cat(t[["elapsed"]], "\n")
"""


def abclass_seconds(X, y, lambdas, c):
    """Seconds of R abclass on the same path, or None (with the reason printed once) without R."""
    if shutil.which("Rscript") is None:
        return None, "Rscript not found: the abclass anchor is skipped"
    with tempfile.TemporaryDirectory() as tmp:
        np.savetxt(
            Path(tmp) / "xy.csv",
            np.column_stack([y, X]),
            delimiter=",",
            header=",".join(["y"] + [f"x{j}" for j in range(X.shape[1])]),
            comments="",
        )
        np.savetxt(Path(tmp) / "lambda.txt", lambdas)
        r = subprocess.run(
            ["Rscript", "-e", _R_ABCLASS],
            capture_output=True,
            text=True,
            env={"BENCH_DIR": tmp, "LUM_C": str(c), "PATH": "/usr/bin:/bin"},
        )
        if r.returncode != 0:
            return None, f"abclass skipped: {r.stderr.strip().splitlines()[-1] if r.stderr else 'R failed'}"
        return float(r.stdout.split()[-1]), None


_R_ABCLASS_MULTI = r"""
suppressMessages(library(abclass))
d <- read.csv(file.path(Sys.getenv("BENCH_DIR"), "xy.csv"))
x <- as.matrix(d[, -1]); y <- factor(d[, 1])
lam <- scan(file.path(Sys.getenv("BENCH_DIR"), "lambda.txt"), quiet = TRUE)
t <- system.time(fit <- abclass(x, y, loss = "lum", penalty = "glasso",
                                control = list(lum_a = 1000, lum_c = 0, alpha = 0, lambda = lam,
                                               epsilon = 1e-7, standardize = TRUE)))
cat(t[["elapsed"]], "\n")
cat(as.vector(coef(fit, s = length(lam))), "\n")
"""


def abclass_multi(X, y, lambdas):
    """(seconds, simplex coefficients (p+1, K-1) at the last lambda) of R abclass, or
    (None, reason) without R."""
    if shutil.which("Rscript") is None:
        return None, "Rscript not found: the abclass anchor is skipped (R is not installed)"
    K = int(y.max()) + 1
    with tempfile.TemporaryDirectory() as tmp:
        np.savetxt(
            Path(tmp) / "xy.csv",
            np.column_stack([y, X]),
            delimiter=",",
            header=",".join(["y"] + [f"x{j}" for j in range(X.shape[1])]),
            comments="",
        )
        np.savetxt(Path(tmp) / "lambda.txt", lambdas)
        r = subprocess.run(
            ["Rscript", "-e", _R_ABCLASS_MULTI],
            capture_output=True,
            text=True,
            env={"BENCH_DIR": tmp, "PATH": "/usr/bin:/bin"},
        )
        if r.returncode != 0:
            return None, f"abclass skipped: {r.stderr.strip().splitlines()[-1] if r.stderr else 'R failed'}"
        lines = r.stdout.strip().splitlines()
        coef = np.array(lines[1].split(), dtype=float).reshape(K - 1, -1).T
        return (float(lines[0]), coef), None


def multiclass(nlambda):
    """Angle-based LUM path, K = 3 and 5, against R abclass when available."""
    from cohstats.models.lum import lum
    from cohstats.solvers.cd.angle import cd_angle_lum_path

    print(f"{'K':>2} {'n x p':>9} {'nlam':>4} {'ours (s)':>9} {'abclass (s)':>11} {'ratio':>6} {'max|dcoef|':>10}")
    for K in (3, 5):
        for n, p in ((1000, 20), (5000, 100)):
            rng = np.random.default_rng(n + p + K)
            M = rng.normal(size=(K, p)) / np.sqrt(p) * 2.0
            y = rng.integers(0, K, size=n)
            X = M[y] + rng.standard_normal((n, p))
            lum(X[:50], y[:50] % K, lambda_=[0.1], a=1000.0, c=0.0)  # compile
            lambdas = np.geomspace(1.0, 1e-3, nlambda) * 0.1
            t = time.perf_counter()
            b0, B, _ = cd_angle_lum_path(X, y, None, 1000.0, 0.0, lambdas, 0.0, tol=1e-7)
            t_ours = time.perf_counter() - t
            res, why = abclass_multi(X, y, lambdas)
            if res is None:
                print(f"{K:>2} {f'{n}x{p}':>9} {nlambda:>4} {t_ours:>9.3f} {'--':>11} {'--':>6} {'--':>10}  {why}")
            else:
                t_ab, coef = res
                d = np.max(np.abs(np.vstack([b0[-1][None], B[-1]]) - coef))
                print(
                    f"{K:>2} {f'{n}x{p}':>9} {nlambda:>4} {t_ours:>9.3f} {t_ab:>11.3f} {t_ours / t_ab:>6.2f} {d:>10.2e}"
                )


def main(argv=None):
    ap = argparse.ArgumentParser(description="linear LUM path vs scikit-learn linear SVMs")
    ap.add_argument("--sizes", default="1000x100,5000x500,100x2000")
    ap.add_argument("--nlambda", type=int, default=10)
    ap.add_argument(
        "--multiclass", action="store_true", help="time the angle-based multicategory LUM (K = 3, 5) instead"
    )
    ap.add_argument(
        "--skip-svc-above",
        type=int,
        default=2_500_000,
        help="skip SVC(kernel='linear') when n*p exceeds this (libsvm is O(n^2))",
    )
    args = ap.parse_args(argv)
    if args.multiclass:
        multiclass(args.nlambda)
        return

    from sklearn.svm import SVC, LinearSVC

    from cohstats.models.lum import lum

    t = time.perf_counter()
    Xs, ys = make(40, 5)
    lum(Xs, ys, a=1000.0, c=1e4, lambda_=[0.1, 0.01], standardize=False)
    lum(Xs, ys, a=1000.0, c=0.0, lambda_=[0.1, 0.01], standardize=False)
    compile_s = time.perf_counter() - t
    print(f"numba compile + first call (tiny problem): {compile_s:.2f} s (excluded below)")
    print(
        f"{'n x p':>11} {'nlam':>4} {'LUM c=1e4':>10} {'LUM c=0':>9} {'SVC lin':>9} "
        f"{'LinearSVC':>9} {'r/SVC':>7} {'r/LinSVC':>8} {'maxrel(f)':>9}"
    )
    for size in args.sizes.split(","):
        n, p = (int(v) for v in size.lower().split("x"))
        X, y = make(n, p, seed=n + p)
        lambdas = np.geomspace(1.0, 1e-3, args.nlambda) * 10.0 / n  # C from 0.1 to 100
        t = time.perf_counter()
        hard = lum(X, y, a=1000.0, c=1e4, lambda_=lambdas, standardize=False)
        t_hard = time.perf_counter() - t
        t = time.perf_counter()
        lum(X, y, a=1000.0, c=0.0, lambda_=lambdas, standardize=False)
        t_soft = time.perf_counter() - t
        t_svc = np.nan
        rel = np.nan
        if n * p <= args.skip_svc_above:
            t = time.perf_counter()
            for lam in lambdas:
                svc = SVC(kernel="linear", C=1.0 / (n * lam), tol=1e-3).fit(X, y)
            t_svc = time.perf_counter() - t
            f_svc = svc.decision_function(X)
            f_lum = hard._decision(X, s=lambdas[-1])
            rel = np.max(np.abs(f_lum - f_svc)) / np.max(np.abs(f_svc))
        t = time.perf_counter()
        for lam in lambdas:
            LinearSVC(loss="hinge", C=1.0 / (n * lam), dual=True, tol=1e-4, max_iter=100_000).fit(X, y)
        t_lsvc = time.perf_counter() - t
        print(
            f"{size:>11} {args.nlambda:>4} {t_hard:>10.3f} {t_soft:>9.3f} {t_svc:>9.3f} "
            f"{t_lsvc:>9.3f} {t_hard / t_svc:>7.2f} {t_hard / t_lsvc:>8.2f} {rel:>9.2e}"
        )
        t_ab, why = abclass_seconds(X, y, lambdas, 1e4)
        if t_ab is None:
            print(f"{'':>11} {why}")
        else:
            print(f"{'':>11} R abclass (c = 1e4): {t_ab:.3f} s, ours / abclass = {t_hard / t_ab:.2f}")


if __name__ == "__main__":
    main()
