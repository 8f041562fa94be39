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

R's abclass (angle-based LUM; with two classes its vertex coding is the binary LUM) is the natural
anchor for the LUM path. ``--abclass`` runs both on the same lambdas (no standardisation, one
thread) and computes the worst KKT residual along each path with one formula here, so that the
times are compared at equal-or-better accuracy: ours at the loosest ``tol`` of a ladder whose
residual is at most abclass's (at its default ``epsilon = 1e-7``; tol from 1e-2 down to 1e-10),
timed with repetitions interleaved with abclass's. Without ``Rscript`` and the abclass package the
anchor is skipped with a message.

Multiclass (``--multiclass``, K = 3 and 5): the angle-based LUM path (``a = 1000``, ``c = 0``,
grouped ridge) is timed against R's abclass on the same data and lambdas when R is available
(both without standardisation; printed: our objective minus abclass's at the smallest lambda,
by one formula -- abclass's vertex coding is the same formula of Zhang & Liu 2014). Without R
the anchor is skipped with the reason printed. abclass's K = 2 vertex is +1 for its first factor
level, which the binary comparison makes class +1.

``python benchmarks/bench_lum.py [--sizes 1000x100,5000x500,100x2000] [--nlambda 10] [--multiclass]``
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import tempfile
import time
import warnings
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


_R_ABCLASS_PATH = r"""
suppressMessages(library(abclass))
d <- read.csv(file.path(Sys.getenv("BENCH_DIR"), "xy.csv"))
x <- as.matrix(d[, -1]); y <- factor(d[, 1], levels = c(1, -1))
lam <- scan(file.path(Sys.getenv("BENCH_DIR"), "lambda.txt"), quiet = TRUE)
ctl <- list(lum_a = as.numeric(Sys.getenv("LUM_A")), lum_c = as.numeric(Sys.getenv("LUM_C")),
            alpha = as.numeric(Sys.getenv("ALPHA")), lambda = lam,
            epsilon = as.numeric(Sys.getenv("EPS")), standardize = FALSE)
t <- system.time(fit <- abclass(x, y, loss = "lum", penalty = "lasso", control = ctl))
cat(t[["elapsed"]], "\n")
cat(as.vector(fit$coefficients), "\n")
"""


def abclass_path(X, y, lambdas, a, c, alpha, eps):
    """(seconds, intercepts (nlam,), slopes (nlam, p)) of R abclass's binary LUM path on the same
    lambdas without standardisation, or (None, reason). Class +1 is abclass's first level, whose
    vertex is +1 when K = 2, so its decision function is ours."""
    if shutil.which("Rscript") is None:
        return None, "Rscript not found: the abclass anchor is skipped"
    n, p = X.shape
    with tempfile.TemporaryDirectory() as tmp:
        np.savetxt(
            Path(tmp) / "xy.csv",
            np.column_stack([y, X]),
            delimiter=",",
            header=",".join(["y"] + [f"x{j}" for j in range(p)]),
            comments="",
        )
        np.savetxt(Path(tmp) / "lambda.txt", lambdas)
        env = {"BENCH_DIR": tmp, "LUM_A": repr(a), "LUM_C": repr(c), "ALPHA": repr(alpha), "EPS": repr(eps)}
        r = subprocess.run(
            ["Rscript", "-e", _R_ABCLASS_PATH],
            capture_output=True,
            text=True,
            env={**env, "PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": "1"},
        )
        if r.returncode != 0:
            last = r.stderr.strip().splitlines()[-1] if r.stderr.strip() else "R failed"
            return None, f"abclass skipped: {last}"
        lines = r.stdout.strip().splitlines()
        coef = np.array(lines[1].split(), dtype=float).reshape(len(lambdas), p + 1)
        return (float(lines[0]), coef[:, 0], coef[:, 1:]), None


def lum_dloss(u, a, c):
    """V'(u) of the LUM loss ([LZW] eq. 3): -1 left of c/(1+c), -(a/((1+c)u - c + a))^(a+1) right."""
    u = np.asarray(u, dtype=float)
    out = -np.ones_like(u)
    right = u >= c / (1.0 + c)
    d = (1.0 + c) * u[right] - c + a
    out[right] = -np.exp((a + 1.0) * (np.log(a) - np.log(d)))
    return out


def lum_loss_np(u, a, c):
    u = np.asarray(u, dtype=float)
    out = 1.0 - u
    right = u >= c / (1.0 + c)
    d = (1.0 + c) * u[right] - c + a
    out[right] = np.exp(a * (np.log(a) - np.log(d))) / (1.0 + c)
    return out


def kkt_and_objective(X, y, b0, beta, lam, a, c, alpha):
    """Worst KKT residual and objective of (1/n) sum V(y f) + lam (alpha |b|_1 + (1-alpha)/2 |b|^2)
    at one (intercept, slopes) pair; the same formula for both programs."""
    n = X.shape[0]
    u = y * (b0 + X @ beta)
    g = y * lum_dloss(u, a, c)
    grad = X.T @ g / n + lam * (1.0 - alpha) * beta
    l1 = lam * alpha
    nz = beta != 0
    res = np.where(nz, np.abs(grad + l1 * np.sign(beta)), np.maximum(np.abs(grad) - l1, 0.0))
    kkt = max(float(np.max(res)), abs(float(np.mean(g))))
    obj = float(np.mean(lum_loss_np(u, a, c)) + lam * (alpha * np.abs(beta).sum() + 0.5 * (1 - alpha) * beta @ beta))
    return kkt, obj


def versus_abclass(sizes, cs, a, alpha, nlambda, tols, reps=3):
    """Binary linear LUM path against R abclass at equal KKT residual.

    For each size and c: abclass's path (its default epsilon 1e-7, no standardisation) and ours
    on the same lambdas at each tol of ``tols`` (loosest first); the worst KKT residual over the
    path of every run is computed here by one formula. Ours runs at the loosest tol whose worst
    residual is at most abclass's (equal-or-better accuracy); then both are timed ``reps`` more
    times, interleaved (abclass, ours, abclass, ours, ...), and the medians are compared.
    Printed: times, residuals, the ratio, the largest objective gap (ours - abclass) over the
    path and how many of our lambdas are flagged converged at that tol, with the load average
    before and after."""
    import os

    from cohstats.models.lum import lum

    Xs, ys = make(40, 5)
    for cc in cs:
        lum(Xs, ys, a=a, c=cc, lambda_=[0.1, 0.01], alpha=alpha, standardize=False)  # compile
    print(f"load average before: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    print(
        f"{'n x p':>10} {'c':>7} {'abclass s':>9} {'kkt ab':>8} {'ours tol':>8} {'ours s':>8} "
        f"{'kkt ours':>8} {'ratio':>6} {'max dobj':>9} {'conv':>5}"
    )
    for size in sizes:
        n, p = (int(v) for v in size.lower().split("x"))
        X, y = make(n, p, seed=n + p)
        for c in cs:
            with warnings.catch_warnings():  # only the sequence is needed: one pass per lambda
                warnings.simplefilter("ignore")
                lambdas = lum(X, y, a=a, c=c, alpha=alpha, nlambda=nlambda, standardize=False, max_iter=1).lambda_
            res, why = abclass_path(X, y, lambdas, a, c, alpha, 1e-7)
            if res is None:
                print(f"{size:>10} {c:>7g}  {why}")
                return
            t_ab, b0_ab, B_ab = res
            ab = [kkt_and_objective(X, y, b0_ab[k], B_ab[k], lambdas[k], a, c, alpha) for k in range(len(lambdas))]
            kkt_ab = max(v[0] for v in ab)
            for tol in tols:
                t = time.perf_counter()
                fit = lum(X, y, a=a, c=c, alpha=alpha, lambda_=lambdas, standardize=False, tol=tol)
                t_ours = time.perf_counter() - t
                ours = [
                    kkt_and_objective(X, y, fit._intercepts[k], fit._coefs[k], lambdas[k], a, c, alpha)
                    for k in range(len(lambdas))
                ]
                kkt_ours = max(v[0] for v in ours)
                nconv = int(np.sum(fit._info_converged))
                if kkt_ours <= kkt_ab or tol == tols[-1]:
                    break
            t_abs, t_ourss = [t_ab], [t_ours]
            for _ in range(reps):
                r2, _ = abclass_path(X, y, lambdas, a, c, alpha, 1e-7)
                t_abs.append(r2[0])
                t = time.perf_counter()
                lum(X, y, a=a, c=c, alpha=alpha, lambda_=lambdas, standardize=False, tol=tol)
                t_ourss.append(time.perf_counter() - t)
            t_ab, t_ours = float(np.median(t_abs)), float(np.median(t_ourss))
            dobj = max(o[1] - b[1] for o, b in zip(ours, ab))
            print(
                f"{size:>10} {c:>7g} {t_ab:>9.3f} {kkt_ab:>8.1e} {tol:>8.0e} {t_ours:>8.3f} "
                f"{kkt_ours:>8.1e} {t_ours / t_ab:>6.2f} {dobj:>9.1e} {nconv:>2}/{len(lambdas)}",
                flush=True,
            )
    print(f"load average after: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")


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
                                               epsilon = 1e-7, standardize = FALSE)))
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
    from cohstats.losses.angle import angle_lum_loss
    from cohstats.solvers.cd.angle import cd_angle_lum_path

    print(f"{'K':>2} {'n x p':>9} {'nlam':>4} {'ours (s)':>9} {'abclass (s)':>11} {'ratio':>6} {'obj - ab':>10}")
    for K in (3, 5):
        for n, p in ((1000, 20), (5000, 100)):
            rng = np.random.default_rng(n + p + K)
            M = rng.normal(size=(K, p)) / np.sqrt(p) * 2.0
            y = rng.integers(0, K, size=n)
            X = M[y] + rng.standard_normal((n, p))
            lum(X[:50], y[:50] % K, lambda_=[0.1], a=1000.0, c=0.0)  # compile
            lambdas = np.geomspace(1.0, 1e-3, nlambda) * 0.1
            t = time.perf_counter()
            b0, B, _ = cd_angle_lum_path(
                X, y, None, 1000.0, 0.0, lambdas, 0.0, tol=1e-7, standardize=False, form="angle"
            )
            t_ours = time.perf_counter() - t
            res, why = abclass_multi(X, y, lambdas)
            if res is None:
                print(f"{K:>2} {f'{n}x{p}':>9} {nlambda:>4} {t_ours:>9.3f} {'--':>11} {'--':>6} {'--':>10}  {why}")
            else:
                t_ab, coef = res
                # objective of each solution at the smallest lambda, by one formula (simplex
                # coordinates are the same: class k gets the vertex W_{k+1} in both programs)
                lam = lambdas[-1]

                def obj(b, Bm, lam=lam, X=X, y=y):
                    return angle_lum_loss(b[None, :] + X @ Bm, y, 1000.0, 0.0, form="angle").mean() + lam / 2 * np.sum(
                        Bm**2
                    )

                d = obj(np.asarray(b0[-1]), np.asarray(B[-1])) - obj(coef[0], coef[1:])
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
    ap.add_argument(
        "--abclass",
        action="store_true",
        help="binary LUM path against R abclass at equal KKT residual (--sizes, --cs, --alpha, --nlambda)",
    )
    ap.add_argument("--cs", default="0,1,10,1e3,1e4", help="LUM c values for --abclass")
    ap.add_argument("--reps", type=int, default=3, help="interleaved timing repetitions for --abclass")
    ap.add_argument("--a", type=float, default=1000.0, help="LUM a for --abclass")
    ap.add_argument("--alpha", type=float, default=1.0, help="elastic-net mixing for --abclass")
    args = ap.parse_args(argv)
    if args.abclass:
        cs = [float(v) for v in args.cs.split(",")]
        tols = tuple(10.0**-k for k in range(2, 11))  # 1e-2 ... 1e-10, loosest first
        versus_abclass(args.sizes.split(","), cs, args.a, args.alpha, args.nlambda, tols, args.reps)
        return
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
