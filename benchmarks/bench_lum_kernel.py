"""Benchmark: kernel ridge LUM path, dual coordinate ascent versus damped Newton, in one run.

Both routes of :func:`cohstats.solvers.cd.kernel.cd_kernel_path` (``solver="dual"`` and
``solver="newton"``) fit the same path on the same prepared Gaussian kernel (an XOR-like
two-dimensional problem with label noise, ``exp(-||x - x'||^2 / 2)``), over ``nlambda`` values
of lum's kernel penalty sequence ``10^2 ... 10^-4`` (log-spaced), ``a = 1000`` and each ``c``.
Repetitions are interleaved (dual, Newton, dual, Newton, ...); the best time of each is printed
with the worst exact KKT residual along the path (one formula for both routes: the largest
absolute primal gradient, intercept included) and the largest objective difference.
Compile time is excluded (a first call on a tiny problem).

``--newton-max-n`` skips the Newton route above that size for ``c >= --newton-skip-c`` (it grows
about as n^2.6 at large c); ``--memory N`` prints the process peak (``ru_maxrss``) of one
lum fit (``--memory-lambda``, one lambda by default) at n = N for each ``--c``, in a fresh
interpreter per route, with the Newton steps the fit took.

``python benchmarks/bench_lum_kernel.py [--sizes 200,400,800,2000] [--nlambda 10,50] [--c 0,1,10,100,1e3,1e4]``
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
import warnings

import numpy as np


def make_xy(n, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 2))
    y = np.where(X[:, 0] * X[:, 1] + 0.3 * rng.standard_normal(n) > 0, 1.0, -1.0)
    return X, y


def make(n, seed=0):
    X, y = make_xy(n, seed)
    sq = (X**2).sum(1)
    D = sq[:, None] + sq[None, :] - 2.0 * X @ X.T
    np.maximum(D, 0.0, out=D)
    np.exp(-0.5 * D, out=D)
    return D, y, X


def run(pk, y, c, gam, solver, tol):
    from cohstats.solvers.cd.kernel import cd_kernel_path

    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        b, B, info = cd_kernel_path(pk, y, None, 4, 1000.0, c, gam, 0.0, tol, 10000, solver=solver)
    return time.perf_counter() - t0, info


_MEM = """
import resource, sys, numpy as np, pandas as pd, warnings
sys.path.insert(0, {root!r})
from bench_lum_kernel import make_xy
import cohstats
from cohstats.solvers.cd import kernel as kmod
n, solver, c = {n}, {solver!r}, {c!r}
X, y = make_xy(n)  # no n x n array before the fit
df = pd.DataFrame({{"x1": X[:, 0], "x2": X[:, 1], "y": np.where(y > 0, "a", "b")}})
orig = kmod.cd_kernel_path
steps = []
def patched(*a, **k):
    k["solver"] = solver
    out = orig(*a, **k)
    steps.append(int(np.sum(out[2].get("newton_steps", 0))))
    return out
kmod.cd_kernel_path = patched
small = df.iloc[:50]
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    cohstats.lum("y ~ x1 + x2", small, kernel="rbf", c=c, lambda_=[1e-2], standardize=False)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    cohstats.lum("y ~ x1 + x2", df, kernel="rbf", c=c, lambda_={lams!r}, standardize=False)
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(f"{{(after - before) * 1024 / (8.0 * n * n):.2f}} {{after / 1024:.0f}} {{steps[-1]}}")
"""


def memory(n, c, lams=(1e-2,)):
    from pathlib import Path

    root = str(Path(__file__).resolve().parent)
    for solver in ("dual", "newton"):
        out = subprocess.run(
            [sys.executable, "-c", _MEM.format(root=root, n=n, solver=solver, c=c, lams=list(lams))],
            capture_output=True,
            text=True,
        )
        if out.returncode:
            print(solver, "failed:", out.stderr[-500:])
            continue
        ratio, mb, steps = out.stdout.split()
        head = f"memory n={n} c={c:g} lambda={','.join(f'{v:g}' for v in lams)} solver={solver}"
        print(f"{head}: peak above the process before the fit = {ratio} n^2 x 8 bytes ({mb} MB), Newton steps {steps}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="200,400,800,2000")
    ap.add_argument("--nlambda", default="10,50")
    ap.add_argument("--c", default="0,1,10,100,1e3,1e4")
    ap.add_argument("--tol", type=float, default=1e-7)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--newton-max-n", type=int, default=800)
    ap.add_argument("--newton-skip-c", type=float, default=1e3)
    ap.add_argument("--memory", type=int, default=0)
    ap.add_argument("--memory-lambda", default="1e-2", help="lambda sequence of the --memory fit")
    args = ap.parse_args()
    from cohstats.solvers.cd.kernel import prepare_kernel

    if args.memory:
        for c in (float(v) for v in args.c.split(",")):
            memory(args.memory, c, tuple(float(v) for v in args.memory_lambda.split(",")))
        return
    Ks, ys, _ = make(40)
    for s in ("dual", "newton"):
        run(prepare_kernel(Ks), ys, 1e4, np.array([1.0, 1e-3]), s, args.tol)
    print("n nlambda c | dual s | newton s | ratio | kkt dual | kkt newton | max |obj diff| | Newton steps in dual")
    for n in (int(v) for v in args.sizes.split(",")):
        K, y, _ = make(n)
        pk = prepare_kernel(K, overwrite_K=True)
        for nl in (int(v) for v in args.nlambda.split(",")):
            gam = 10.0 ** np.linspace(2.0, -4.0, nl)
            for c in (float(v) for v in args.c.split(",")):
                skip_newton = n > args.newton_max_n and c >= args.newton_skip_c
                td, tn = [], []
                idn = inn = None
                for _ in range(args.repeat if not skip_newton else 1):
                    t, idn = run(pk, y, c, gam, "dual", args.tol)
                    td.append(t)
                    if not skip_newton:
                        t, inn = run(pk, y, c, gam, "newton", args.tol)
                        tn.append(t)
                kd = idn["kkt"].max()
                if skip_newton:
                    print(
                        f"{n} {nl} {c:g} | {min(td):.3f} | skipped | - | {kd:.1e} | - | - | {idn['newton_steps'].sum()}"
                    )
                else:
                    dobj = np.abs(idn["objective"] - inn["objective"]).max()
                    print(
                        f"{n} {nl} {c:g} | {min(td):.3f} | {min(tn):.3f} | {min(td) / min(tn):.3f} | {kd:.1e} | "
                        f"{inn['kkt'].max():.1e} | {dobj:.1e} | {idn['newton_steps'].sum()}",
                        flush=True,
                    )


if __name__ == "__main__":
    main()
