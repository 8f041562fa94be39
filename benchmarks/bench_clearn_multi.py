"""Benchmark: the K-class C-learning path (grouped elastic net, alpha = 0.5, 100 lambdas) at
several temperatures rho, on synthetic data (5 informative predictors, Gumbel noise).

Times are the best of two runs after a warm-up (compile time excluded); ``passes`` is the total
number of coordinate passes over the path, ``obj_last`` the objective at the smallest lambda.
Run it on two checkouts in one session to compare (``PYTHONPATH=<checkout>``).

Usage: python benchmarks/bench_clearn_multi.py
"""

from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from cohstats.solvers.cd.multi import cd_multi_path, multi_lambda_max  # noqa: E402
from cohstats.solvers.cd.path import lambda_sequence  # noqa: E402


def data(n, p, K, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    W = np.zeros((p, K))
    W[:5] = rng.standard_normal((5, K))
    y = np.argmax(X @ W + rng.gumbel(size=(n, K)), axis=1)
    return X, y


def best(fn, repeat=2):
    ts, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        ts.append(time.perf_counter() - t)
    return min(ts), out


def main():
    warnings.simplefilter("ignore")
    for n, p, K in [(500, 50, 3), (1000, 50, 5)]:
        X, y = data(n, p, K)
        for T in [1.0, 0.1, 0.01]:
            lm = multi_lambda_max(X, y, None, T, 0.5, K=K)
            lams = lambda_sequence(lm, 100, None, n, p)
            cd_multi_path(X, y, None, T, lams[:3], 0.5, K=K)
            t, (_, _, info) = best(lambda: cd_multi_path(X, y, None, T, lams, 0.5, K=K))
            print(
                f"n={n} p={p} K={K} rho={T}: {t:.3f}s passes={info['n_iter'].sum()} "
                f"converged={bool(info['converged'].all())} obj_last={info['objective'][-1]:.8f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
