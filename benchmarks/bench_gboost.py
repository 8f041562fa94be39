"""Benchmark: GentleBoost.C against LightGBM (and other gradient-boosting anchors).

Problems: Pendigits (7494 x 16, K = 10) and synthetic data with p = 20 features and K = 5
classes at several sizes (``--sizes``, default 50 000 and 200 000 training rows; 20 000 test
rows). Every method fits 100 rounds of 8-leaf trees (one tree per class and round) with
shrinkage 0.1 (LightGBM's learning rate) on one thread.

Timing: CPU time of the process (``time.process_time``), which on a shared machine grows much
less with other jobs' load than the wall clock. For each problem ours and LightGBM's fit
alternate ``--repeat`` times (interleaved, so that a change of load hits both alike); the
report gives the median of each method's times, the median of the paired ratios ours/LightGBM
and their range (min-max over the pairs), and both test errors. The numba compile (or cache
load) of our first call happens before the timings.

Usage::

    python benchmarks/bench_gboost.py [--repeat 5] [--sizes 50000 200000 [1000000]]
                                      [--no-pendigits] [--anchors]

``--anchors`` adds scikit-learn's HistGradientBoostingClassifier and ``gboost(loss="logit")``
(one run each).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

for _v in ("OMP_NUM_THREADS", "NUMBA_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # the cohstats of this checkout, not an installed one

H, LEAVES, SHRINKAGE = 100, 8, 0.1


def _cpu(fn):
    c0 = time.process_time()
    out = fn()
    return time.process_time() - c0, out


def synthetic(n, p=20, K=5, n_test=20_000, seed=0):
    """Gumbel-noise multinomial classes from linear and quadratic scores of p normal features."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n + n_test, p))
    score = X[:, :K] + 0.5 * X[:, K : 2 * K] ** 2 + rng.gumbel(size=(n + n_test, K))
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(p)])
    df["y"] = np.array(list("ABCDEFGHIJ"[:K]))[np.argmax(score, axis=1)]
    return df.iloc[:n], df.iloc[n:]


def compare(name, train, test, repeat, anchors):
    import lightgbm as lgb
    from threadpoolctl import threadpool_limits

    from cohstats.formula import build_design
    from cohstats.models.gboost import gboost, gboost_c

    d = build_design("y ~ .", train)
    X, y = d.X, d.y_int
    Xt = d.new_X(test)
    yt = d.code_y(test["y"]).astype(np.int64)
    gboost_c(d, n_trees=2, nodes=LEAVES, random_state=0)  # compile or load from the cache

    def ours():
        return gboost_c(d, n_trees=H, nodes=LEAVES, shrinkage=SHRINKAGE, random_state=0)

    def light():
        return lgb.LGBMClassifier(
            num_leaves=LEAVES,
            n_estimators=H,
            learning_rate=SHRINKAGE,
            min_child_samples=1,
            verbose=-1,
            n_jobs=1,
        ).fit(X, y)

    t_o, t_l = [], []
    with threadpool_limits(limits=1):
        for _ in range(repeat):
            t, fit = _cpu(ours)
            t_o.append(t)
            t, model = _cpu(light)
            t_l.append(t)
        err_o = float((np.argmax(fit._decision(Xt), 1) != yt).mean())
        err_l = float((model.predict(Xt) != yt).mean())
        ratios = np.array(t_o) / np.array(t_l)
        print(
            f"{name:>24s}: n = {X.shape[0]:>7d}, p = {X.shape[1]}, K = {d.n_classes:>2d} | ours "
            f"{np.median(t_o):7.2f} s, LightGBM {np.median(t_l):7.2f} s CPU (medians of {repeat}) | "
            f"ratio median {np.median(ratios):.2f} [{ratios.min():.2f}-{ratios.max():.2f}] | "
            f"test error {100 * err_o:.2f} % / {100 * err_l:.2f} %",
            flush=True,
        )
        if anchors:
            from sklearn.ensemble import HistGradientBoostingClassifier

            hg = HistGradientBoostingClassifier(
                max_leaf_nodes=LEAVES, max_iter=H, learning_rate=SHRINKAGE, early_stopping=False, min_samples_leaf=1
            )
            t, hg = _cpu(lambda: hg.fit(X, y))
            print(
                f"{'':>24s}  sklearn HistGradientBoosting {t:7.2f} s, "
                f"test error {100 * (hg.predict(Xt) != yt).mean():.2f} %"
            )
            t, fl = _cpu(lambda: gboost(d, loss="logit", n_trees=H, nodes=LEAVES, shrinkage=SHRINKAGE, random_state=0))
            e = (np.argmax(fl._decision(Xt), 1) != yt).mean()
            print(f"{'':>24s}  gboost(loss='logit') {t:7.2f} s, test error {100 * e:.2f} %")
    return dict(name=name, ours=t_o, lightgbm=t_l, ratios=ratios, err=(err_o, err_l))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5, help="interleaved runs of each method per problem")
    ap.add_argument("--sizes", type=int, nargs="*", default=[50_000, 200_000], help="synthetic training rows")
    ap.add_argument("--no-pendigits", action="store_true")
    ap.add_argument("--anchors", action="store_true", help="also HistGradientBoosting and gboost(loss='logit')")
    args = ap.parse_args(argv)
    print(f"{H} rounds, {LEAVES} leaves, shrinkage {SHRINKAGE}, one thread; CPU seconds")
    out = []
    if not args.no_pendigits:
        from cohstats.datasets import load_split

        train, test = load_split("pendigits")
        out.append(compare("Pendigits", train, test, args.repeat, args.anchors))
    for n in args.sizes:
        train, test = synthetic(n)
        out.append(compare("synthetic", train, test, args.repeat, args.anchors))
    return out


if __name__ == "__main__":
    main()
