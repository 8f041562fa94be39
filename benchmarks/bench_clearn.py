"""Benchmark: full elastic-net logistic path (alpha = 0.5, 100 lambdas) of cohstats' coordinate
descent against R glmnet (if Rscript with glmnet is installed), skglm (ProxNewton with warm
starts over the same grid) and scikit-learn (saga, elasticnet, warm starts, over 20 of the 100
grid values because saga is slow).

All fits solve the same problem: ``(1/n) sum log(1 + exp(-y f)) + lambda (0.25 ||b||^2 + 0.5 |b|_1)``
on the standardised predictors with an unpenalised intercept, over our lambda grid (glmnet's
default: 100 values down to 1e-4 lambda_max if n > p else 1e-2). Times are the best of
``--repeat`` runs in this one process, after a warm-up run (compile time excluded and reported
separately); ratios are ours / theirs.

Usage: python benchmarks/bench_clearn.py [--repeat 3] [--sizes 1000x100,5000x500,100x2000]
[--interleave] (``--interleave``: ours and glmnet alternately, a ratio per round)
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from cohstats.losses.scalar import LOSS_LOGIT  # noqa: E402
from cohstats.solvers.cd.path import cd_path, lambda_max, lambda_sequence  # noqa: E402

ALPHA = 0.5


def make_data(n, p, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    beta = np.zeros(p)
    beta[:10] = rng.standard_normal(10)
    y = np.where(X @ beta + rng.standard_normal(n) > 0, 1.0, -1.0)
    return X, y


def best_of(fn, repeat):
    ts = []
    out = None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        ts.append(time.perf_counter() - t)
    return min(ts), out


def ours(X, y, lams):
    return cd_path(X, y, None, LOSS_LOGIT, 0.0, 0.0, lams, ALPHA, tol=1e-7, exact_kkt=False)


def run_glmnet(X, y, lams, repeat):
    """Time glmnet in R on the same data and grid; None if R/glmnet is unavailable."""
    rs = shutil.which("Rscript")
    if rs is None:
        return None, "Rscript not found"
    chk = subprocess.run([rs, "-e", "suppressMessages(library(glmnet))"], capture_output=True)
    if chk.returncode != 0:
        return None, "R package glmnet not installed"
    with tempfile.TemporaryDirectory() as td:
        td = Path(td)
        np.asfortranarray(X).T.tofile(td / "X.bin")  # column-major for R
        ((y + 1) / 2).tofile(td / "y.bin")
        lams.tofile(td / "lam.bin")
        n, p = X.shape
        script = textwrap.dedent(f"""
            suppressMessages(library(glmnet))
            X <- matrix(readBin("{td / "X.bin"}", "double", {n * p}), {n}, {p})
            y <- readBin("{td / "y.bin"}", "double", {n})
            lam <- readBin("{td / "lam.bin"}", "double", {len(lams)})
            fit <- glmnet(X, y, family = "binomial", alpha = {ALPHA}, lambda = lam)
            best <- Inf
            for (r in 1:{repeat}) {{
              t <- system.time(fit <- glmnet(X, y, family = "binomial", alpha = {ALPHA}, lambda = lam))[["elapsed"]]
              best <- min(best, t)
            }}
            cat(best, length(fit$lambda), "\\n")
            writeBin(as.vector(as.matrix(coef(fit))), "{td / "coef.bin"}")
        """)
        (td / "b.R").write_text(script)
        res = subprocess.run([rs, str(td / "b.R")], capture_output=True, text=True)
        if res.returncode != 0:
            return None, "glmnet run failed: " + res.stderr.strip()[-200:]
        t, nl = res.stdout.split()
        coef = np.fromfile(td / "coef.bin").reshape(int(nl), p + 1)
        return (float(t), int(nl), coef), ""


def run_skglm(Z, y, lams, repeat):
    try:
        from skglm.datafits import Logistic
        from skglm.penalties import L1_plus_L2
        from skglm.solvers import ProxNewton
        from skglm import GeneralizedLinearEstimator
    except Exception as e:  # pragma: no cover
        return None, f"skglm unavailable: {e}"

    def path():
        est = GeneralizedLinearEstimator(
            Logistic(), L1_plus_L2(lams[0], ALPHA), ProxNewton(fit_intercept=True, warm_start=True, tol=1e-7)
        )
        coefs = []
        for lam in lams:
            est.penalty = L1_plus_L2(float(lam), ALPHA)
            est.fit(Z, y)
            coefs.append(est.coef_.ravel().copy())
        return np.array(coefs)

    path()  # compile
    return best_of(path, repeat), ""


def run_saga(Z, y, lams, repeat):
    import warnings

    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression

    n = Z.shape[0]
    sub = lams[::5]

    def path():
        clf = LogisticRegression(solver="saga", l1_ratio=ALPHA, warm_start=True, tol=1e-4, max_iter=1000)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            for lam in sub:
                clf.set_params(C=1.0 / (n * lam))
                clf.fit(Z, y)
        return clf

    return best_of(path, repeat), len(sub)


def fresh_process_times():
    """Fresh-process timings: compile with an empty numba cache, and first call with a warm one.

    Each returns ``(total, import of the cohstats.losses package, import of cd.py after it,
    first lambda_max + 10-lambda path)``: the losses package (another module of cohstats)
    is imported by ``cohstats.losses.scalar`` and is timed separately.
    """
    code = textwrap.dedent(
        """
        import time, sys
        t0 = time.perf_counter()
        import numpy as np
        sys.path.insert(0, %r)
        import cohstats.losses
        t1 = time.perf_counter()
        from cohstats.solvers.cd.path import cd_path, lambda_max, lambda_sequence
        t2 = time.perf_counter()
        rng = np.random.default_rng(0)
        X = rng.standard_normal((200, 20)); y = np.where(X[:, 0] > 0, 1.0, -1.0)
        lm = lambda_max(X, y, None, 7, 0.0, 0.0, 0.5)
        cd_path(X, y, None, 7, 0.0, 0.0, lambda_sequence(lm, 10, 1e-2), 0.5)
        t3 = time.perf_counter()
        print(t3 - t0, t1 - t0, t2 - t1, t3 - t2)
    """
        % str(ROOT)
    )

    def parse(r):
        if r.returncode != 0:
            return (float("nan"),) * 4
        return tuple(float(v) for v in r.stdout.strip().splitlines()[-1].split())

    out = {}
    with tempfile.TemporaryDirectory() as td:
        env = dict(os.environ, NUMBA_CACHE_DIR=td)
        out["cold"] = parse(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env))
    subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)  # fill cache
    out["warm"] = parse(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True))
    return out


def interleaved(sizes, repeat):
    """Ours and glmnet alternately, ``repeat`` rounds per size (each glmnet round one R process:
    a warm-up fit, then one timed fit inside R); prints the ratio of every round."""
    import statistics

    la = os.getloadavg()
    print(f"interleaved ours / glmnet, load average at start {la[0]:.2f} {la[1]:.2f} {la[2]:.2f}")
    for n, p in sizes:
        X, y = make_data(n, p, seed=n + p)
        lm = lambda_max(X, y, None, LOSS_LOGIT, 0, 0, ALPHA)
        lams = lambda_sequence(lm, 100, None, n, p)
        ours(X, y, lams)  # warm-up
        ratios, t_o, t_g = [], [], []
        for _ in range(repeat):
            t = time.perf_counter()
            ours(X, y, lams)
            t_o.append(time.perf_counter() - t)
            g, why = run_glmnet(X, y, lams, 1)
            if g is None:
                print(f"{n}x{p}: glmnet unavailable ({why})")
                break
            t_g.append(g[0])
            ratios.append(t_o[-1] / t_g[-1])
        if ratios:
            print(
                f"{n:>6}x{p:<6} ours {statistics.median(t_o):7.3f} s, glmnet {statistics.median(t_g):7.3f} s; "
                f"ours/glmnet median {statistics.median(ratios):.3f} "
                f"[{', '.join(f'{r:.3f}' for r in ratios)}]",
                flush=True,
            )
    la = os.getloadavg()
    print(f"load average at end {la[0]:.2f} {la[1]:.2f} {la[2]:.2f}")


def main(argv=None):
    import warnings

    warnings.filterwarnings("ignore", category=FutureWarning)
    try:
        from numba.core.errors import NumbaPerformanceWarning

        warnings.filterwarnings("ignore", category=NumbaPerformanceWarning)
    except ImportError:  # pragma: no cover
        pass
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--sizes", default="1000x100,5000x500,100x2000")
    ap.add_argument("--no-fresh", action="store_true", help="skip the fresh-process timings")
    ap.add_argument(
        "--anchors",
        default="glmnet,skglm,saga",
        help="comma-separated anchors to time (skglm and saga are slow at 2000x20000)",
    )
    ap.add_argument(
        "--interleave",
        action="store_true",
        help="only ours against glmnet, alternating run by run (ratios per round; for loaded machines)",
    )
    args = ap.parse_args(argv)
    sizes = [tuple(int(v) for v in s.split("x")) for s in args.sizes.split(",")]
    if args.interleave:
        interleaved(sizes, args.repeat)
        return

    t = time.perf_counter()
    X, y = make_data(200, 20)
    ours(X, y, lambda_sequence(lambda_max(X, y, None, LOSS_LOGIT, 0, 0, ALPHA), 10, 1e-2))
    first = time.perf_counter() - t
    print(f"first call in this process (numba cache load or compile): {first:.2f} s")
    if not args.no_fresh:
        fp = fresh_process_times()
        for key, label in (("cold", "empty numba cache (compile)"), ("warm", "warm numba cache")):
            tot, tl, tc, tf = fp[key]
            print(
                f"fresh process, {label:28s}: total {tot:6.2f} s = import cohstats.losses "
                f"{tl:5.2f} s + import cd {tc:5.2f} s + first fit {tf:5.2f} s"
            )
    print()
    hdr = (
        f"{'n x p':>11} {'ours s':>8} {'glmnet s':>9} {'ours/glmnet':>12} {'skglm s':>8} "
        f"{'ours/skglm':>11} {'saga(20) s':>11} {'ours/saga':>10} {'max|db| vs glmnet':>18}"
    )
    print(hdr)
    print("-" * len(hdr))
    notes = set()
    for n, p in sizes:
        X, y = make_data(n, p, seed=n + p)
        lm = lambda_max(X, y, None, LOSS_LOGIT, 0, 0, ALPHA)
        lams = lambda_sequence(lm, 100, None, n, p)
        ours(X, y, lams)  # warm-up
        t_ours, (b0, B, info) = best_of(lambda: ours(X, y, lams), args.repeat)
        Z = (X - X.mean(0)) / X.std(0)
        g, why = run_glmnet(X, y, lams, args.repeat) if "glmnet" in args.anchors else (None, "glmnet not requested")
        if g is None:
            notes.add(why)
            t_g, diff = float("nan"), float("nan")
        else:
            t_g, nl, coef = g
            if nl < len(lams):
                notes.add(f"glmnet stopped early at {nl} of {len(lams)} lambdas for {n}x{p}")
            diff = float(np.max(np.abs(coef[:, 1:] - B[:nl])) / max(np.abs(B[:nl]).max(), 1e-300))
        anchors = set(args.anchors.split(","))
        sk, why = run_skglm(Z, y, lams, args.repeat) if "skglm" in anchors else (None, "skglm not requested")
        t_sk = sk[0] if sk is not None else float("nan")
        if sk is None:
            notes.add(why)
        t_saga = float("nan")
        if "saga" in anchors:
            (t_saga, _), _ = run_saga(Z, y, lams, 1 if n * p > 1e6 else args.repeat)
        print(
            f"{n:>5}x{p:<5} {t_ours:8.3f} {t_g:9.3f} {t_ours / t_g:12.2f} {t_sk:8.3f} "
            f"{t_ours / t_sk:11.2f} {t_saga:11.2f} {t_ours / t_saga:10.3f} {diff:18.2e}"
        )
        sys.stdout.flush()
    print()
    print("ours: cohstats.solvers.cd.path.cd_path (IRLS mode, tol=1e-7, no exact-KKT pass), 100 lambdas;")
    print("glmnet: same lambdas passed to glmnet(family='binomial', alpha=0.5) in R (time inside R);")
    print("skglm: ProxNewton(tol=1e-7, warm starts) on standardised X over the same 100 lambdas;")
    print("saga: LogisticRegression(elasticnet, saga, warm starts, tol=1e-4) over every 5th lambda")
    print("      (20 values; standardised X) -- the ratio favours saga.")
    print("max|db| vs glmnet: largest coefficient difference relative to max |coef| (tol effects).")
    for s in sorted(notes):
        print("note:", s)


if __name__ == "__main__":
    main()
