"""Benchmark: λ-SVM training time on Pendigits against scikit-learn's libsvm and liblinear.

Pendigits (UCI/Statlog training file, 7494 rows, 16 features, 10 classes; test file 3498 rows),
features standardised with the training means and standard deviations.

* RBF kernel ``exp(-||x - x'||^2 / 16)`` (``gamma = 1/16``): ``sklearn.svm.SVC`` (libsvm,
  one-vs-one) against ``lamsvm`` (all classes at once, ``tol = T_kkt = 5e-2``) for several
  margins at ``C = 1`` and at a larger ``C`` that matches libsvm's test error.
* Linear kernel: ``sklearn.svm.LinearSVC(multi_class="crammer_singer")`` against ``lamsvm`` with
  ``kernel="linear"``. The two do not fit the same model: Crammer-Singer penalises the largest
  wrong-class score (and liblinear adds an intercept feature), the λ-SVM sums the hinge over all
  wrong classes without intercept -- one-vs-rest-like, which a linear model fits poorly on
  Pendigits (about 21 % test error with or without a constant feature, against 8 %).

Compile time is measured separately (a warm-up fit on 60 rows); every time is the best of
``--repeat`` runs (default 2, anchors too), ratios are ours / theirs measured in the same process
(``--equal-error`` also reports medians and the median of the per-repetition paired ratios, see
:func:`equal_error`). Usage::

    python benchmarks/bench_lamsvm.py [--quick]
    python benchmarks/bench_lamsvm.py --equal-error [--C 1 3 10 30 100] [--tol 5e-2] [--path]
        [--scale libsvm|box] [--margin M]
    python benchmarks/bench_lamsvm.py --defaults
    python benchmarks/bench_lamsvm.py --profile [pendigits:1e-3:1 ...]

``--equal-error`` and ``--defaults`` print the load average before and after the run.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
import sys
import time
import warnings

import numpy as np

# this checkout's cohstats, not an installed one (a script's sys.path[0] is its own folder)
ROOT = str(Path(__file__).resolve().parent.parent)
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)


def _data():
    from cohstats.datasets import load_split

    tr, te = load_split("pendigits")
    Xtr, Xte = tr.drop(columns="y").to_numpy(float), te.drop(columns="y").to_numpy(float)
    mu, sd = Xtr.mean(0), Xtr.std(0)
    sd[sd == 0] = 1.0
    return (Xtr - mu) / sd, tr["y"].to_numpy(), (Xte - mu) / sd, te["y"].to_numpy()


def _timed(fn, repeat=1, cpu=False):
    """``(result, best time of `repeat` runs)`` -- best-of on a shared machine; wall time, or with
    ``cpu=True`` the process's CPU time (both libsvm and lamsvm compute on one thread; on a
    loaded machine CPU time is far less noisy than wall time)."""
    clock = time.process_time if cpu else time.perf_counter
    best = float("inf")
    for _ in range(repeat):
        t = clock()
        out = fn()
        best = min(best, clock() - t)
    return out, best


def _split(name):
    from cohstats.datasets import load_split

    tr, te = load_split(name)
    return (
        tr.drop(columns="y").to_numpy(float),
        tr["y"].to_numpy(),
        te.drop(columns="y").to_numpy(float),
        te["y"].to_numpy(),
    )


def _load():
    """``(1-, 5-, 15-minute load averages)`` of the machine (NaN where unavailable)."""
    try:
        return tuple(round(v, 2) for v in os.getloadavg())
    except OSError:
        return (float("nan"),) * 3


def _timed_fit(fn, cpu):
    """``(result, time, system CPU seconds)`` of one fit with the garbage collector off (collected
    before), as ``timeit`` does: a collection triggered by an earlier fit's objects must not land
    in the next method's time. The system time (page faults of fresh memory, mostly) is part of
    the process's CPU time."""
    import gc
    import resource

    clock = time.process_time if cpu else time.perf_counter
    gc.collect()
    was = gc.isenabled()
    gc.disable()
    try:
        r0 = resource.getrusage(resource.RUSAGE_SELF).ru_stime
        t = clock()
        out = fn()
        t = clock() - t
        return out, t, resource.getrusage(resource.RUSAGE_SELF).ru_stime - r0
    finally:
        if was:
            gc.enable()


def equal_error(
    datasets=("pendigits", "satimage", "optdigits"),
    Cs=(1.0, 10.0, 100.0),
    tols=(1e-3, 5e-2),
    repeat=1,
    err_slack=0.1,
    path=False,
    cpu=False,
    scale="libsvm",
    margin=None,
):
    """lamsvm (standardize=True, gamma="scale", margin ``margin`` or the default) against
    libsvm's one-vs-one ``SVC(gamma="scale")`` on the same standardised inputs, both at the same
    ``tol``, over a grid of ``C``.

    ``scale="libsvm"`` (default): ``C`` and ``tol`` are on libsvm's scale for both, i.e. lamsvm
    runs at ``C s`` and ``tol s`` with ``s = margin_scale(K, margin)`` (half the smallest gap
    ``f_y - max_j f_j`` of a point without loss; the λ-SVM at ``(C s, tol s)`` is the λ-SVM
    with both margins divided by ``s`` at ``(C, tol)``, decision values divided by ``s``).
    ``scale="box"``: lamsvm gets the same numbers as libsvm in [RH]'s units, as the earliest
    logged comparisons did -- ``s`` times tighter in libsvm's units.

    Tolerances: libsvm stops when the maximal violating pair's gap is below ``tol``; lamsvm when
    the largest single-multiplier KKT violation ([RH] eq. 24-26) is below its ``tol``. Both are
    in units of the decision function; at libsvm's reported intercept each of its multipliers
    violates by at most ``tol`` (``tol / 2`` at the midpoint intercept).

    Timing: before the timings of a data set, one untimed fit of each method (the same warm state
    for both: libraries loaded, the process's first large allocation paid). Then ``repeat``
    repetitions, each timing SVC and lamsvm in turn for every setting (SVC first in even
    repetitions, lamsvm first in odd ones), every fit with the garbage collector off. lamsvm's
    time is the whole call on the raw training matrix (front end: formula/array handling,
    standardisation, gamma; the solver; building the result), SVC's the fit on inputs
    standardised beforehand; ``lam_front`` is the median share of lamsvm's time spent outside
    ``solve_lambda_svm`` (CPU or wall, as the timings), ``lam_sys`` the median share of system
    CPU time in it (page faults of the fresh row cache, mostly).

    Returns ``(runs, best)``. ``runs``: every setting, with the minimum (``svc_time``,
    ``lam_time``, ``ratio`` = their quotient, as before) and the median (``svc_med``,
    ``lam_med``) over the repetitions, and ``ratio_med``, the median over repetitions of the
    paired ratio lamsvm / SVC of the same repetition. ``best``: per data set and ``tol`` three
    comparisons with libsvm at its lowest test error on the grid (ties: smaller C): lamsvm at its
    own lowest error (``lam_C`` / ``tuned_ratio``), lamsvm at the smallest ``C`` whose test error
    is at most libsvm's best plus ``err_slack`` percentage points (``eq_C`` / ``equal_ratio``
    from the minima, ``equal_med`` the median over repetitions of the paired ratio of the two
    cells' times in the same repetition; NaN if none), and with ``path=True`` the whole grid
    (libsvm's fits summed against one warm-started lamsvm path over ``Cs``, ``grid_ratio``).
    Times are wall seconds, or CPU seconds with ``cpu=True``."""
    import pandas as pd
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC

    import cohstats.models.lamsvm as lm

    if scale not in ("libsvm", "box"):
        raise ValueError(f"scale must be 'libsvm' or 'box'; got {scale!r}")
    clock = time.process_time if cpu else time.perf_counter
    solve = lm.solve_lambda_svm
    t_solve = []

    def timed_solve(*a, **k):
        t = clock()
        res = solve(*a, **k)
        t_solve.append(clock() - t)
        return res

    rows = []
    grid = {}
    lm.solve_lambda_svm = timed_solve
    try:
        for name in datasets:
            Xtr, ytr, Xte, yte = _split(name)
            K = len(np.unique(ytr))
            m = lm.default_margin(K) if margin is None else float(margin)
            s = lm.margin_scale(K, m) if scale == "libsvm" else 1.0
            sc = StandardScaler().fit(Xtr)
            Ztr, Zte = sc.transform(Xtr), sc.transform(Xte)

            def fit_svc(C, tol):
                return SVC(C=C, gamma="scale", tol=tol, cache_size=200).fit(Ztr, ytr)

            def fit_lam(C, tol):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    return lm.lamsvm(Xtr, ytr, C=C * s, margin=m, tol=tol * s)

            # the same warm state for both before anything is timed
            fit_svc(Cs[0], tols[0])
            fit_lam(Cs[0], tols[0])
            cells = {}
            for r in range(max(1, repeat)):
                for tol in tols:
                    for C in Cs:
                        c = cells.get((tol, C))
                        if c is None:
                            c = cells[(tol, C)] = dict(svc=None, fit=None, t_svc=[], t_lam=[], front=[], sys=[])
                        order = ("svc", "lam") if r % 2 == 0 else ("lam", "svc")
                        for who in order:
                            if who == "svc":
                                c["svc"], t, _ = _timed_fit(lambda: fit_svc(C, tol), cpu)
                                c["t_svc"].append(t)
                            else:
                                del t_solve[:]
                                c["fit"], t, t_sys = _timed_fit(lambda: fit_lam(C, tol), cpu)
                                c["t_lam"].append(t)
                                c["front"].append((t - sum(t_solve)) / t)
                                c["sys"].append(t_sys / t)
                    if path:
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore")
                            _, t_path, _ = _timed_fit(
                                lambda: lm.lamsvm(Xtr, ytr, C=[C * s for C in Cs], margin=m, tol=tol * s), cpu
                            )
                        grid[(name, tol)] = min(grid.get((name, tol), np.inf), t_path)
            for (tol, C), c in cells.items():
                fit = c["fit"]
                st = fit.steps.iloc[-1]
                e_svc = float(np.mean(c["svc"].predict(Zte) != yte))
                e_lam = float(np.mean(fit.predict(Xte).to_numpy() != yte))
                ts, tl = np.array(c["t_svc"]), np.array(c["t_lam"])
                rows.append(
                    dict(
                        data=name,
                        tol=tol,
                        C=C,
                        svc_time=ts.min(),
                        svc_med=float(np.median(ts)),
                        svc_err=100 * e_svc,
                        lam_time=tl.min(),
                        lam_med=float(np.median(tl)),
                        lam_err=100 * e_lam,
                        ratio=tl.min() / ts.min(),
                        ratio_med=float(np.median(tl / ts)),
                        lam_front=float(np.median(c["front"])),
                        lam_sys=float(np.median(c["sys"])),
                        margin=m,
                        lam_Cbox=C * s,
                        lam_tolbox=tol * s,
                        lam_iter=fit.n_iter,
                        lam_rows=int(st["kernel_rows"]),
                        lam_converged=fit.converged,
                        _ts=ts,
                        _tl=tl,
                    )
                )
    finally:
        lm.solve_lambda_svm = solve
    d = pd.DataFrame(rows)
    best = []
    for (name, tol), g in d.groupby(["data", "tol"], sort=False):
        s_ = g.sort_values(["svc_err", "C"]).iloc[0]
        lm_ = g.sort_values(["lam_err", "C"]).iloc[0]
        ok = g[g.lam_err <= s_.svc_err + err_slack + 1e-9].sort_values("C")
        eq = ok.iloc[0] if len(ok) else None
        row = dict(
            data=name,
            tol=tol,
            svc_C=s_.C,
            svc_err=s_.svc_err,
            svc_time=s_.svc_time,
            svc_med=s_.svc_med,
            lam_C=lm_.C,
            lam_err=lm_.lam_err,
            lam_time=lm_.lam_time,
            tuned_ratio=lm_.lam_time / s_.svc_time,
            eq_C=np.nan if eq is None else eq.C,
            eq_err=np.nan if eq is None else eq.lam_err,
            eq_time=np.nan if eq is None else eq.lam_time,
            eq_med=np.nan if eq is None else eq.lam_med,
            eq_front=np.nan if eq is None else eq.lam_front,
            equal_ratio=np.nan if eq is None else eq.lam_time / s_.svc_time,
            equal_med=np.nan if eq is None else float(np.median(eq._tl / s_._ts)),
        )
        if path:
            row["grid_ratio"] = grid[(name, tol)] / g.svc_time.sum()
        best.append(row)
    return d.drop(columns=["_ts", "_tl"]), pd.DataFrame(best)


def defaults(datasets=("pendigits", "satimage", "optdigits"), repeat=3, cpu=False):
    """Each method at its own defaults: ``SVC()`` (C = 1, gamma = "scale", tol = 1e-3) on
    standardised inputs against ``lamsvm(X, y)`` (standardize, gamma = "scale", margin
    ``10 (K - 1)``, C = 2 and tol = 5e-3 on libsvm's scale), interleaved; test error
    and the minimum time over ``repeat`` runs; also lamsvm's former defaults (margin 2 (K - 1),
    C = 1, tol = 5e-2)."""
    import pandas as pd
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC

    from cohstats.models.lamsvm import lamsvm

    rows = []
    for name in datasets:
        Xtr, ytr, Xte, yte = _split(name)
        K = len(np.unique(ytr))
        sc = StandardScaler().fit(Xtr)
        Ztr, Zte = sc.transform(Xtr), sc.transform(Xte)
        runs = {
            "SVC()": lambda: SVC().fit(Ztr, ytr),
            "lamsvm()": lambda: lamsvm(Xtr, ytr),
            "lamsvm(), former defaults": lambda: lamsvm(Xtr, ytr, C=1.0, margin=2.0 * (K - 1), tol=5e-2),
        }
        best, fits = {}, {}
        for _ in range(max(1, repeat)):
            for lab, fn in runs.items():
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    fits[lab], t = _timed(fn, 1, cpu)
                best[lab] = min(best.get(lab, np.inf), t)
        for lab, f in fits.items():
            pred = f.predict(Zte) if lab == "SVC()" else f.predict(Xte).to_numpy()
            rows.append(
                dict(
                    data=name,
                    method=lab,
                    err=100 * float(np.mean(pred != yte)),
                    time=best[lab],
                    ratio=best[lab] / best["SVC()"],
                    visits=getattr(f, "n_iter", np.nan) if lab != "SVC()" else np.nan,
                )
            )
    return pd.DataFrame(rows)


def profile(cells=("pendigits:1e-3:1", "pendigits:5e-2:1", "satimage:1e-3:4", "satimage:5e-2:32", "optdigits:1e-3:1")):
    """Work counters of both solvers at ``data:tol:C`` cells (C and tol on libsvm's scale, lamsvm at
    ``C s`` and ``tol s`` as in :func:`equal_error`): libsvm's iterations over its ``K (K - 1) / 2``
    pairwise problems (sum, largest pair), the sum of iterations times the pair's size (the
    gradient work of its two-variable updates, before shrinking) and its support vectors, against
    the λ-SVM's visits, single-variable steps, kernel rows computed, refreshed length (sum over
    visits), full passes, watched passes, points recomputed by the passes and listed, shrink
    events, block visits and the points they held, and support points. One fit each, CPU seconds."""
    import itertools

    import pandas as pd
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC

    import cohstats.models.lamsvm as lm

    rows = []
    for cell in cells:
        name, tol, C = cell.split(":")
        tol, C = float(tol), float(C)
        Xtr, ytr, Xte, yte = _split(name)
        K = len(np.unique(ytr))
        m = lm.default_margin(K)
        s = lm.margin_scale(K, m)
        Ztr = StandardScaler().fit(Xtr).transform(Xtr)
        svc, t_svc = _timed(lambda: SVC(C=C, gamma="scale", tol=tol, cache_size=200).fit(Ztr, ytr), 1, True)
        size = {c: int(np.sum(ytr == c)) for c in svc.classes_}
        pairs = list(itertools.combinations(svc.classes_, 2))
        work = sum(int(it) * (size[a] + size[b]) for it, (a, b) in zip(svc.n_iter_, pairs))
        seen = []
        solve = lm.solve_lambda_svm

        def spy(*a, **k):
            res = solve(*a, **k)
            seen.append(res)
            return res

        lm.solve_lambda_svm = spy
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fit, t_lam = _timed(lambda: lm.lamsvm(Xtr, ytr, C=C * s, margin=m, tol=tol * s), 1, True)
        finally:
            lm.solve_lambda_svm = solve
        r = seen[-1]
        i = r.info
        rows.append(
            dict(
                data=name,
                tol=tol,
                C=C,
                svc_s=t_svc,
                svc_iter=int(np.sum(svc.n_iter_)),
                svc_iter_max=int(np.max(svc.n_iter_)),
                svc_work_M=work / 1e6,
                svc_nSV=int(np.sum(svc.n_support_)),
                lam_s=t_lam,
                visits=r.n_iter,
                steps=i["n_steps"],
                rows=i["kernel_rows"],
                refresh_M=i["refresh_work"] / 1e6,
                per_visit=i["refresh_work"] / max(r.n_iter, 1),
                full_passes=i["n_fold"],
                watch_passes=i.get("n_watch", 0),
                pass_work_M=i.get("pass_work", 0) / 1e6,
                listed=i["n_listed"],
                shrink=i["n_shrink"],
                blocks=i.get("n_blocks", 0),
                block_points=i.get("block_points", 0),
                lam_nSV=int(np.sum(np.asarray(r.dual).max(axis=1) > 0)),
            )
        )
    return pd.DataFrame(rows)


def _gauss_ring(n, K, rng, radius=1.6):
    """K equiprobable classes, ``x | k ~ N(mu_k, I_2)`` with the means on a circle; the true
    class probabilities are ``softmax(mu_k . x - ||mu_k||^2 / 2)``."""
    ang = 2 * np.pi * np.arange(K) / K
    mu = radius * np.column_stack([np.cos(ang), np.sin(ang)])
    y = rng.integers(0, K, n)
    X = mu[y] + rng.standard_normal((n, 2))
    E = X @ mu.T - 0.5 * (mu**2).sum(1)
    E -= E.max(1, keepdims=True)
    P = np.exp(E)
    return X, y, P / P.sum(1, keepdims=True)


def prob_study(reps=3, n_train=600, n_test=2000, seed=0):
    """Mean |p-hat - p| (over test rows and classes) of the two post-hoc calibrations.

    Simulations with known class probabilities: Breiman's waveform (K = 3, 21 features) and the
    Gaussian ring (K = 3 and K = 5, 2 features); lamsvm at the defaults under which the
    calibration default was chosen (C = 1, margin 2 (K - 1), gamma = "scale",
    standardize=True) and at C = 10."""
    from cohstats.datasets import make_waveform
    from cohstats.models.lamsvm import lamsvm

    rows = []
    for r in range(reps):
        rng = np.random.default_rng(seed + r)
        sims = []
        df, P = make_waveform(n_train + n_test, random_state=seed + r, return_prob=True)
        X, y = df.drop(columns="y").to_numpy(float), df["y"].to_numpy()
        sims.append(("waveform K=3", X, y, P))
        for K in (3, 5):
            X, y, P = _gauss_ring(n_train + n_test, K, rng)
            sims.append((f"gauss ring K={K}", X, y, P))
        for name, X, y, P in sims:
            tr, te = slice(0, n_train), slice(n_train, None)
            for C in (1.0, 10.0):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    fit = lamsvm(X[tr], y[tr], C=C, margin=2.0 * (len(np.unique(y)) - 1))
                for method in ("multinomial", "coupling"):
                    t = time.perf_counter()
                    ph = fit.predict(X[te], type="prob", method=method).to_numpy()
                    dt = time.perf_counter() - t
                    rows.append(
                        dict(
                            sim=name,
                            C=C,
                            method=method,
                            rep=r,
                            mae=float(np.mean(np.abs(ph - P[te]))),
                            gkl=float(
                                np.mean(
                                    np.sum(
                                        P[te]
                                        * (np.log(np.clip(P[te], 1e-300, None)) - np.log(np.clip(ph, 1e-15, None))),
                                        1,
                                    )
                                )
                            ),
                            err=float(np.mean(ph.argmax(1) != y[te])),
                            time=dt,
                        )
                    )
    import pandas as pd

    d = pd.DataFrame(rows)
    return d.groupby(["sim", "C", "method"])[["mae", "gkl", "err", "time"]].mean()


def _warm(path=False):
    """Compile (or load) the numba code outside the timings (with ``path``: the warm-started
    path over several C as well)."""
    from cohstats.models.lamsvm import lamsvm

    Xw, yw = np.random.default_rng(0).normal(size=(60, 3)), np.arange(60) % 3
    lamsvm(Xw, yw)
    if path:
        lamsvm(Xw, yw, C=[1.0, 2.0])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer lamsvm settings")
    ap.add_argument("--repeat", type=int, default=2, help="best of this many runs for every timing, anchors included")
    ap.add_argument(
        "--prob", action="store_true", help="only the probability study (multinomial vs coupling calibration)"
    )
    ap.add_argument(
        "--equal-error",
        action="store_true",
        help="only the three-data-set comparison with SVC(gamma='scale') at equal tol",
    )
    ap.add_argument("--data", nargs="+", default=["pendigits", "satimage", "optdigits"], help="--equal-error data sets")
    ap.add_argument("--C", nargs="+", type=float, default=[1.0, 10.0, 100.0], help="--equal-error grid of C")
    ap.add_argument("--tol", nargs="+", type=float, default=[1e-3, 5e-2], help="--equal-error tolerances")
    ap.add_argument(
        "--path", action="store_true", help="--equal-error: also time the whole C grid (lamsvm as one warm path)"
    )
    ap.add_argument("--cpu", action="store_true", help="--equal-error/--defaults: CPU time instead of wall time")
    ap.add_argument(
        "--scale",
        choices=("libsvm", "box"),
        default="libsvm",
        help="--equal-error: C and tol on libsvm's scale for both (lamsvm at C s, tol s) or the same raw numbers",
    )
    ap.add_argument("--margin", type=float, default=None, help="--equal-error: lamsvm's margin (default: its default)")
    ap.add_argument("--defaults", action="store_true", help="only each method at its own defaults (interleaved)")
    ap.add_argument(
        "--profile",
        nargs="*",
        metavar="DATA:TOL:C",
        default=None,
        help="only the work counters of both solvers at these cells (default: the equal-error cells)",
    )
    args = ap.parse_args(argv)
    if args.profile is not None:
        import pandas as pd

        _warm()
        print("load average before:", _load())
        d = profile(*([tuple(args.profile)] if args.profile else []))
        print("load average after:", _load())
        with pd.option_context("display.width", 250, "display.float_format", "{:.3f}".format):
            print(d.to_string(index=False))
        return
    if args.defaults:
        import pandas as pd

        _warm()
        print("load average before:", _load())
        d = defaults(datasets=tuple(args.data), repeat=max(1, args.repeat), cpu=args.cpu)
        print("load average after:", _load())
        with pd.option_context("display.width", 160, "display.float_format", "{:.3f}".format):
            print(d.to_string(index=False))
        return
    if args.equal_error:
        import pandas as pd

        _warm(path=True)
        print("load average before:", _load())
        allruns, best = equal_error(
            datasets=tuple(args.data),
            Cs=tuple(args.C),
            tols=tuple(args.tol),
            repeat=max(1, args.repeat),
            path=args.path,
            cpu=args.cpu,
            scale=args.scale,
            margin=args.margin,
        )
        print("load average after:", _load())
        with pd.option_context("display.width", 250, "display.float_format", "{:.3f}".format):
            print(allruns.to_string(index=False))
            print()
            print(best.to_string(index=False))
        return
    if args.prob:
        import pandas as pd

        with pd.option_context("display.width", 120, "display.float_format", "{:.4f}".format):
            print(prob_study())
        return
    from sklearn.svm import SVC, LinearSVC

    from cohstats.models.lamsvm import lamsvm

    Xtr, ytr, Xte, yte = _data()
    print(
        f"Pendigits: {Xtr.shape[0]} training rows, {Xte.shape[0]} test rows, "
        f"{Xtr.shape[1]} features, {len(np.unique(ytr))} classes"
    )

    _, t_compile = _timed(lambda: lamsvm(Xtr[:60], ytr[:60], C=1, margin=100, gamma=1 / 16))
    _, t_compile_lin = _timed(lambda: lamsvm(Xtr[:60], ytr[:60], C=1, margin=100, kernel="linear"))
    print(f"numba warm-up (compile or cache load): rbf {t_compile:.2f} s, linear {t_compile_lin:.2f} s")

    rows = []
    rp = max(1, args.repeat)
    svc, t_svc = _timed(lambda: SVC(C=1.0, gamma=1 / 16, cache_size=200).fit(Xtr, ytr), rp)
    e_svc = float(np.mean(svc.predict(Xte) != yte))
    rows.append(("libsvm SVC one-vs-one, rbf, C=1", t_svc, e_svc, None))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lin, t_lin = _timed(lambda: LinearSVC(multi_class="crammer_singer", C=1.0).fit(Xtr, ytr), rp)
    e_lin = float(np.mean(lin.predict(Xte) != yte))
    rows.append(("LinearSVC crammer_singer, C=1", t_lin, e_lin, None))

    # margin 18 = 2 (K - 1) was lamsvm's earlier default; C = 10 matches libsvm's test error
    settings = [
        ("rbf", 1.0, 1.0),
        ("rbf", 1.0, 9.0),
        ("rbf", 1.0, 18.0),
        ("rbf", 1.0, 100.0),
        ("rbf", 1.0, 10000.0),
        ("rbf", 10.0, 18.0),
        ("rbf", 10.0, 100.0),
        ("linear", 1.0, 18.0),
    ]
    if args.quick:
        settings = [("rbf", 1.0, 1.0), ("rbf", 1.0, 100.0), ("rbf", 10.0, 18.0)]
    for kern, C, m in settings:
        kw = dict(gamma=1 / 16) if kern == "rbf" else dict(kernel="linear")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit, t = _timed(lambda: lamsvm(Xtr, ytr, C=C, margin=m, **kw), rp)
        e = float(np.mean(fit.predict(Xte).to_numpy() != yte))
        st = fit.steps.iloc[-1]
        ref = t_svc if kern == "rbf" else t_lin
        rows.append(
            (
                f"lamsvm {kern}, C={C:g}, margin={m:g}",
                t,
                e,
                f"{t / ref:7.1f}x  ({int(st['n_iter'])} it, {int(st['n_sv'])} SV, {st['status']})",
            )
        )

    print(f"\n{'method':44s} {'time (s)':>9s} {'test err':>9s}  ratio vs anchor (rbf: SVC, linear: LinearSVC)")
    for name, t, e, extra in rows:
        print(f"{name:44s} {t:9.3f} {100 * e:8.2f}%  {extra or ''}")
    print("\nReference measured on this machine type: libsvm OvO 0.10 s, LinearSVC(crammer_singer) 0.81 s.")


if __name__ == "__main__":
    main()
