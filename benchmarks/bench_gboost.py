"""Benchmark: GentleBoost.C against gradient-boosting anchors on Pendigits (7494 x 16, K = 10)
and on a synthetic problem (``--synthetic``: n = 200 000, p = 10, K = 5).

100 rounds of 8-leaf trees (one tree per class and round for every method), shrinkage 0.1
(LightGBM's learning rate) for every method. Times come from
one run in one process; the numba compile (or cache-load) time of our first call is reported
separately and excluded. By default every method runs on one thread (ours is single-threaded;
``--threads`` lets the anchors use their default thread pools).

Each time is reported twice: wall clock and CPU time of the process. On a shared machine the
wall clock of a single-threaded fit grows with the load from other jobs, the CPU time much
less; with one thread for every method the CPU-time ratio is the fairer comparison.
``--repeat k`` alternates ours and LightGBM k times and reports the best of each (and the
median of the k paired ratios).

Usage::

    python benchmarks/bench_gboost.py [--skip-gbc] [--threads] [--repeat 1] [--cold] [--synthetic]
                                      [--lgb-only]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # the cohstats of this checkout, not an installed one


def _timeit(fn, repeat):
    """Best wall-clock and best CPU time of ``repeat`` calls, and the last result."""
    best, best_cpu = np.inf, np.inf
    out = None
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        best = min(best, time.perf_counter() - t0)
        best_cpu = min(best_cpu, time.process_time() - c0)
    return (best, best_cpu), out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--skip-gbc", action="store_true", help="skip scikit-learn GradientBoostingClassifier (about 30 s)")
    ap.add_argument("--threads", action="store_true", help="let the anchors use their default number of threads")
    ap.add_argument("--repeat", type=int, default=1, help="best of this many runs")
    ap.add_argument(
        "--cold",
        action="store_true",
        help="compile from scratch (empty numba cache in a temporary directory) "
        "so that the first-call time is the full compile time",
    )
    ap.add_argument(
        "--lgb-only", action="store_true", help="compare gboost_c with LightGBM only (alternating, --repeat times)"
    )
    ap.add_argument(
        "--synthetic",
        action="store_true",
        help="n = 200 000, p = 10, K = 5 synthetic data instead of Pendigits (implies --skip-gbc)",
    )
    args = ap.parse_args(argv)
    if args.cold:
        import os
        import tempfile

        if "numba" in sys.modules:
            raise RuntimeError("--cold must be set before numba is imported")
        os.environ["NUMBA_CACHE_DIR"] = tempfile.mkdtemp(prefix="numba_cold_")

    # import every anchor before limiting threads: threadpoolctl only limits loaded runtimes
    import lightgbm as lgb
    from sklearn.ensemble import GradientBoostingClassifier, HistGradientBoostingClassifier
    from threadpoolctl import threadpool_limits

    from cohstats.datasets import load_split
    from cohstats.formula import build_design
    from cohstats.models.gboost import gboost, gboost_c

    if args.synthetic:
        import pandas as pd

        rng = np.random.default_rng(0)
        n, p, K = 200_000, 10, 5
        Xs = rng.normal(size=(n + 20_000, p))
        score = Xs[:, :K] + 0.5 * Xs[:, K : 2 * K] ** 2 + rng.gumbel(size=(n + 20_000, K))
        df = pd.DataFrame(Xs, columns=[f"x{j}" for j in range(p)])
        df["y"] = np.array(list("ABCDE"))[np.argmax(score, axis=1)]
        train, test = df.iloc[:n], df.iloc[n:]
        args.skip_gbc = True
        name = "synthetic"
    else:
        train, test = load_split("pendigits")
        name = "Pendigits"
    d = build_design("y ~ .", train)
    X, y = d.X, d.y_int
    Xt = d.new_X(test)
    yt = d.code_y(test["y"]).astype(np.int64)
    print(
        f"{name}: n = {X.shape[0]}, p = {X.shape[1]}, K = {d.n_classes}; "
        f"H = 100 rounds, 8 leaves; threads: {'default' if args.threads else 1}"
    )

    H, leaves = 100, 8
    rows = []

    t0 = time.perf_counter()
    gboost_c(d, n_trees=2, nodes=leaves, random_state=0)
    first = time.perf_counter() - t0
    nthreads = None if args.threads else 1

    def ours():
        return gboost_c(d, n_trees=H, nodes=leaves, shrinkage=0.1, random_state=0)

    def light():
        return lgb.LGBMClassifier(
            num_leaves=leaves,
            n_estimators=H,
            learning_rate=0.1,
            min_child_samples=1,
            verbose=-1,
            n_jobs=1 if nthreads else -1,
        ).fit(X, y)

    if args.lgb_only:
        pairs = []
        with threadpool_limits(limits=nthreads):
            for _ in range(args.repeat):
                t_o, fit = _timeit(ours, 1)
                t_l, m = _timeit(light, 1)
                pairs.append((t_o, t_l))
                print(
                    f"  ours {t_o[0]:.2f} s wall / {t_o[1]:.2f} s CPU; LightGBM {t_l[0]:.2f} / "
                    f"{t_l[1]:.2f}; ratios {t_o[0] / t_l[0]:.2f} / {t_o[1] / t_l[1]:.2f}",
                    flush=True,
                )
        t_ours = tuple(min(p[0][k] for p in pairs) for k in (0, 1))
        t_lgb = tuple(min(p[1][k] for p in pairs) for k in (0, 1))
        med = [float(np.median([p[0][k] / p[1][k] for p in pairs])) for k in (0, 1)]
        err = float((np.argmax(fit._decision(Xt), 1) != yt).mean())
        print(
            f"\nbest of {args.repeat}: ours {t_ours[0]:.2f} s wall / {t_ours[1]:.2f} s CPU "
            f"(test error {100 * err:.2f} %), LightGBM {t_lgb[0]:.2f} / {t_lgb[1]:.2f} "
            f"(test error {100 * float((m.predict(Xt) != yt).mean()):.2f} %); "
            f"ratio of the bests {t_ours[0] / t_lgb[0]:.2f} wall / {t_ours[1] / t_lgb[1]:.2f} "
            f"CPU; median paired ratio {med[0]:.2f} wall / {med[1]:.2f} CPU"
        )
        return pairs

    t_ours, fit = _timeit(ours, args.repeat)
    err = float((np.argmax(fit._decision(Xt), 1) != yt).mean())
    rows.append(("cohstats gboost_c (GentleBoost.C)", t_ours, err))
    t_logit, fl = _timeit(
        lambda: gboost(d, loss="logit", n_trees=H, nodes=leaves, shrinkage=0.1, random_state=0), args.repeat
    )
    rows.append(("cohstats gboost(loss='logit')", t_logit, float((np.argmax(fl._decision(Xt), 1) != yt).mean())))

    with threadpool_limits(limits=nthreads):
        t, m = _timeit(light, args.repeat)
        rows.append(("LightGBM (num_leaves=8, 100 rounds)", t, float((m.predict(Xt) != yt).mean())))
        hg = HistGradientBoostingClassifier(max_leaf_nodes=leaves, max_iter=H, early_stopping=False, min_samples_leaf=1)
        t, hg = _timeit(lambda: hg.fit(X, y), args.repeat)
        rows.append(("sklearn HistGradientBoosting", t, float((hg.predict(Xt) != yt).mean())))
        if not args.skip_gbc:
            gb = GradientBoostingClassifier(max_leaf_nodes=leaves, n_estimators=H)
            t, gb = _timeit(lambda: gb.fit(X, y), 1)
            rows.append(("sklearn GradientBoostingClassifier", t, float((gb.predict(Xt) != yt).mean())))

    what = "numba compile, empty cache" if args.cold else "numba compile or cache load"
    print(f"\nfirst call of gboost_c ({what}, n_trees=2): {first:.2f} s\n")
    print(f"{'method':40s} {'wall s':>8s} {'CPU s':>8s} {'ours/theirs (wall, CPU)':>24s} {'test err %':>10s}")
    for name, t, e in rows:
        print(f"{name:40s} {t[0]:8.3f} {t[1]:8.3f} {t_ours[0] / t[0]:12.2f} {t_ours[1] / t[1]:11.2f} {100 * e:10.2f}")
    return rows


if __name__ == "__main__":
    main()
