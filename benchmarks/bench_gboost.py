"""Benchmark: GentleBoost.C against LightGBM (and other gradient-boosting anchors).

Problems: Pendigits (7 494 x 16, K = 10) and synthetic data with p = 20 features and K = 5
classes at several sizes (``--sizes``, default 50 000, 200 000 and 1 000 000 training rows;
20 000 test rows). Every method fits 100 rounds of 8-leaf trees (one tree per class and round)
with shrinkage 0.1 (LightGBM's learning rate) on one thread.

Timing: CPU time of the process (``time.process_time``), which on a shared machine grows much
less with other jobs' load than the wall clock. For each problem ours and LightGBM's fit
alternate ``--repeat`` times (interleaved, so that a change of load hits both alike); the
report gives the median of each method's times, the median of the paired ratios ours/LightGBM
and their range (min-max over the pairs), and both test errors. The numba compile (or cache
load) of our first call happens before the timings.

``--log`` appends the measurements to ``benchmarks/log.csv`` (one ``cpu_ratio_to_lightgbm`` row
per interleaved pair, so that ``make_table.py`` shows their median and range; the two test
errors; the 1-minute load average when the case started). ``--readme`` rewrites the
``bench_gboost.py`` row of the top-level README's speed table from the latest of those rows
(``--readme-only`` does only that; ``--check-readme`` exits 1 if the row is not the generated
one).

Usage::

    python benchmarks/bench_gboost.py [--repeat 5] [--sizes 50000 200000 1000000]
                                      [--no-pendigits] [--anchors] [--log] [--readme]

``--anchors`` adds scikit-learn's HistGradientBoostingClassifier and ``gboost(loss="logit")``
(one run each).
"""

from __future__ import annotations

import argparse
import os
import statistics
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
BENCH = "bench_gboost"
README = ROOT / "README.md"
ROW_START = "| `bench_gboost.py`"


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


def compare(name, train, test, repeat, anchors, case=None):
    import lightgbm as lgb
    from threadpoolctl import threadpool_limits

    from cohstats.formula import build_design
    from cohstats.models.gboost import gboost, gboost_c

    load = os.getloadavg()[0]
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
            f"{np.median(t_o):7.2f} s, LightGBM {lgb.__version__} {np.median(t_l):7.2f} s CPU (medians of {repeat}) | "
            f"ratio median {np.median(ratios):.2f} [{ratios.min():.2f}-{ratios.max():.2f}] | "
            f"test error {100 * err_o:.2f} % / {100 * err_l:.2f} % | load average at start {load:.2f}",
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
    return dict(
        name=name,
        case=case or name.lower(),
        ours=t_o,
        lightgbm=t_l,
        ratios=ratios,
        err=(err_o, err_l),
        load=load,
    )


def log_rows(results, date, commit) -> list[dict]:
    """The log rows of ``results`` (from :func:`compare`): one ``cpu_ratio_to_lightgbm`` per
    interleaved pair, both test errors (%) and the load average at the start of the case."""
    rows = []
    for r in results:
        base = dict(date=date, benchmark=BENCH, case=r["case"], commit=commit)
        rows += [dict(base, metric="cpu_ratio_to_lightgbm", value=f"{v:.3f}") for v in r["ratios"]]
        rows.append(dict(base, metric="test_error_pct_ours", value=f"{100 * r['err'][0]:.2f}"))
        rows.append(dict(base, metric="test_error_pct_lightgbm", value=f"{100 * r['err'][1]:.2f}"))
        rows.append(dict(base, metric="load_average_1min", value=f"{r['load']:.2f}"))
    return rows


def append_log(rows, path=None) -> None:
    """Append ``rows`` to ``benchmarks/log.csv`` (its header checked by make_table's reader)."""
    import csv

    mt = _make_table()
    path = mt.LOG if path is None else path
    mt.read_log(path)
    with open(path, "a", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=mt.COLUMNS, lineterminator="\n")
        w.writerows(rows)


def _make_table():
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_table", Path(__file__).with_name("make_table.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _case_label(case: str) -> tuple[int, str]:
    """Sort key (rows) and description of a case name of the log."""
    if case == "pendigits":
        return 7494, "Pendigits (7 494 x 16, 10 classes)"
    if case.startswith("synthetic_"):
        n, rest = case[len("synthetic_") :].split("x", 1)
        p, k = rest.split("_K")
        return int(n), f"synthetic {format(int(n), ',').replace(',', ' ')} x {p}, {k} classes"
    return 0, case


def readme_row(rows) -> str:
    """The README speed-table row of this benchmark from the log's rows: per case (the
    pre-size ``synthetic`` rows left out) the latest (date, commit) group's median paired CPU
    ratio with its range and number of pairs, both test errors, the date and the load."""
    latest: dict[str, tuple] = {}
    groups: dict[str, dict] = {}
    for r in rows:
        if r["benchmark"] != BENCH or r["case"] == "synthetic":
            continue
        when = (r["date"], r["commit"])
        if latest.get(r["case"]) != when:
            latest[r["case"]], groups[r["case"]] = when, {}
        groups[r["case"]].setdefault(r["metric"], []).append(r["value"])
    parts, dates, loads = [], set(), []
    for case in sorted(groups, key=lambda c: _case_label(c)[0]):
        g = groups[case]
        ratios = g.get("cpu_ratio_to_lightgbm")
        if not ratios:
            continue
        txt = (
            f"{_case_label(case)[1]} {statistics.median(ratios):.2f}x "
            f"[{min(ratios):.2f}-{max(ratios):.2f}, {len(ratios)} pair{'s' if len(ratios) > 1 else ''}]"
        )
        if "test_error_pct_ours" in g and "test_error_pct_lightgbm" in g:
            txt += f", test error {g['test_error_pct_ours'][-1]:.2f} % / {g['test_error_pct_lightgbm'][-1]:.2f} %"
        parts.append(txt)
        dates.add(latest[case])
        loads += g.get("load_average_1min", [])
    when = "; ".join(f"{d}, commit {c}" for d, c in sorted(dates))
    load = f", 1-minute load average {min(loads):.2f}-{max(loads):.2f} at the start of the cases" if loads else ""
    return (
        f"{ROW_START}: 100 rounds, 8 leaves, shrinkage 0.1, one thread each; median of the paired "
        f"CPU-time ratios of interleaved runs [range] | ours / LightGBM's CPU time: "
        + "; ".join(parts)
        + f" (test errors ours / LightGBM; {when}{load}) |"
    )


def render_readme(text: str, rows) -> str:
    """``text`` (the README) with its ``bench_gboost.py`` speed row replaced by :func:`readme_row`."""
    lines = text.split("\n")
    hits = [i for i, line in enumerate(lines) if line.startswith(ROW_START)]
    if len(hits) != 1:
        raise ValueError(f"README.md must have exactly one line starting with {ROW_START!r}; found {len(hits)}")
    lines[hits[0]] = readme_row(rows)
    return "\n".join(lines)


def _git_commit() -> str:
    import subprocess

    out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    return out.stdout.strip() or "unknown"


def main(argv=None):
    import datetime as dt

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5, help="interleaved runs of each method per problem")
    ap.add_argument(
        "--sizes", type=int, nargs="*", default=[50_000, 200_000, 1_000_000], help="synthetic training rows"
    )
    ap.add_argument("--no-pendigits", action="store_true")
    ap.add_argument("--anchors", action="store_true", help="also HistGradientBoosting and gboost(loss='logit')")
    ap.add_argument("--log", action="store_true", help="append the measurements to benchmarks/log.csv")
    ap.add_argument("--date", default=None, help="date of the log rows (default: today, UTC)")
    ap.add_argument("--commit", default=None, help="commit of the log rows (default: git HEAD)")
    ap.add_argument("--readme", action="store_true", help="rewrite the README speed row from the log afterwards")
    ap.add_argument("--readme-only", action="store_true", help="only rewrite the README speed row from the log")
    ap.add_argument("--check-readme", action="store_true", help="exit 1 if the README row is not the generated one")
    args = ap.parse_args(argv)
    if args.readme_only or args.check_readme:
        text = README.read_text(encoding="utf-8")
        new = render_readme(text, _make_table().read_log())
        if args.check_readme:
            if new != text:
                print("README.md's bench_gboost.py row is not the one log.csv gives; run with --readme-only")
                return 1
            return 0
        README.write_text(new, encoding="utf-8")
        return 0
    if args.repeat < 1:
        raise SystemExit(f"--repeat must be >= 1; got {args.repeat}")
    print(f"{H} rounds, {LEAVES} leaves, shrinkage {SHRINKAGE}, one thread; CPU seconds")
    out = []
    if not args.no_pendigits:
        from cohstats.datasets import load_split

        train, test = load_split("pendigits")
        out.append(compare("Pendigits", train, test, args.repeat, args.anchors, case="pendigits"))
    for n in args.sizes:
        train, test = synthetic(n)
        out.append(compare("synthetic", train, test, args.repeat, args.anchors, case=f"synthetic_{n}x20_K5"))
    if args.log:
        date = args.date or dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d")
        append_log(log_rows(out, date, args.commit or _git_commit()))
    if args.readme:
        README.write_text(render_readme(README.read_text(encoding="utf-8"), _make_table().read_log()), encoding="utf-8")
    return out


if __name__ == "__main__":
    main()
