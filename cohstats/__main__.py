"""Command line: ``python -m cohstats demo`` and ``python -m cohstats warmup``.

``demo``: a two-minute tour on simulated data from Wang, Shen & Liu (2008). Simulates Example 2
of the paper (a sine-shaped boundary, true class probabilities known), fits C-learning with a
Gaussian kernel through a formula, tunes the penalty by 5-fold CV (cross-entropy), prints the
summary and compares predicted with true probabilities.

``warmup``: compiles the numba code of every model family once (or loads it from the cache)
and prints how long each family took, so that later fits start at once.
"""

from __future__ import annotations

import argparse
import sys
import time


def demo(seed: int = 1) -> int:
    import numpy as np
    import pandas as pd

    import cohstats as cs
    from cohstats.datasets import make_wsl2

    t0 = time.perf_counter()
    train = make_wsl2(100, random_state=seed)
    test, p_true = make_wsl2(900, random_state=seed + 1, return_prob=True)
    print("cohstats demo: Wang, Shen & Liu (2008) Example 2, n = 100 training, 900 test points\n")
    print(train.head(), "\n")

    cvfit = cs.cv(
        cs.clearn,
        "y ~ x1 + x2",
        data=train,
        kernel="rbf",
        alpha=0.5,
        nfolds=5,
        measure="ekl",
        random_state=seed,
        verbose=False,
    )
    fit = cvfit.best_fit
    print(fit.summary(), "\n")

    prob = fit.predict(test, type="prob")
    shown = pd.concat(
        [
            test[["x1", "x2", "y"]].head(8).reset_index(drop=True),
            prob.head(8).reset_index(drop=True).add_prefix("P(y=").add_suffix(")"),
            pd.Series(p_true[:8], name="true P(y=1)"),
        ],
        axis=1,
    )
    print("Predicted class probabilities on test points:")
    print(shown.round(3).to_string(index=False), "\n")

    p_hat = prob[fit.classes[1]].to_numpy()
    err = float(np.mean(fit.predict(test).to_numpy() != test["y"].to_numpy()))
    print(
        f"test error {err:.3f} (Bayes error about 0.059); "
        f"mean |p - p_hat| {cs.metrics.mae(p_true, p_hat):.3f}; "
        f"comparative GKL {cs.metrics.gkl_c(p_true, p_hat):.3f} (Bayes floor 0.1005)"
    )
    print(f"done in {time.perf_counter() - t0:.1f} s")
    return 0


def _warmup_runs():
    """(family, [(label, thunk), ...]) for every model family, on tiny simulated data.

    Only default settings and a few stable arguments are used, so that each call goes through
    the same compiled functions as a user's fit on float64 data.
    """
    import numpy as np
    import pandas as pd

    import cohstats as cs

    rng = np.random.default_rng(0)
    n = 60
    X = rng.normal(size=(n, 2))
    f = X[:, 0] + 0.5 * X[:, 1] + 0.5 * rng.normal(size=n)
    df = pd.DataFrame(
        {
            "x1": X[:, 0],
            "x2": X[:, 1],
            "y": np.where(f > 0, "a", "b"),
            "y3": np.select([f < -0.4, f < 0.4], ["a", "b"], "c"),
        }
    )
    two, three = "y ~ x1 + x2", "y3 ~ x1 + x2"

    def fit_predict(fn, formula, types=("class", "prob"), **kw):
        def run():
            fit = fn(formula, df, **kw)
            for type_ in types:
                fit.predict(df, type=type_)
            return fit

        return run

    def svm_methods():
        for method in ("bracket", "platt", "sollich", "coherence"):
            cs.svm(two, df, kernel="rbf", prob_method=method).predict(df, type="prob")

    def lum_refit():
        fit_predict(cs.lum, two, kernel="linear")().refit(warn=False)

    def boost_stages():
        fit = fit_predict(cs.gboost_c, three)()
        list(fit.staged_predict(df))
        fit.path(df)

    return [
        ("losses and links", [("losses.warmup", cs.losses.warmup)]),
        (
            "coordinate descent (clearn, lum)",
            [
                ("clearn linear", fit_predict(cs.clearn, two)),
                ("clearn elastic net", fit_predict(cs.clearn, two, alpha=0.5)),
                ("clearn kernel", fit_predict(cs.clearn, two, kernel="rbf")),
                ("clearn multiclass", fit_predict(cs.clearn, three)),
                ("lum linear + refit", lum_refit),
                ("lum kernel", fit_predict(cs.lum, two, kernel="rbf")),
            ],
        ),
        (
            "SVM (svm, psi_learn, lamsvm)",
            [
                ("svm rbf", svm_methods),
                ("svm linear", fit_predict(cs.svm, two, kernel="linear", prob_method="bracket")),
                (
                    "svm warm-started grid",
                    fit_predict(cs.svm, two, kernel="rbf", prob_method="bracket", path_method="warm"),
                ),
                ("psi_learn", fit_predict(cs.psi_learn, two, kernel="rbf")),
                ("lamsvm", fit_predict(cs.lamsvm, three, types=("class", "link"))),
                ("lamsvm linear", fit_predict(cs.lamsvm, three, types=("class", "link"), kernel="linear")),
            ],
        ),
        (
            "trees and boosting (gboost_c, gboost, cart)",
            [
                ("gboost_c", boost_stages),
                ("gboost", fit_predict(cs.gboost, three)),
                ("cart", fit_predict(cs.cart, three)),
            ],
        ),
    ]


def warmup(verbose: bool = False) -> int:
    """Compile (or load from the cache) every model family's numba code; print the times."""
    import os

    from cohstats import _numba_cache

    before = os.environ.get(_numba_cache.ENV_QUIET)
    os.environ[_numba_cache.ENV_QUIET] = "1"  # this command reports for itself
    try:
        return _warmup(verbose)
    finally:
        if before is None:
            del os.environ[_numba_cache.ENV_QUIET]
        else:
            os.environ[_numba_cache.ENV_QUIET] = before


def _warmup(verbose: bool) -> int:
    import warnings

    from cohstats import _numba_cache

    t_all = time.perf_counter()
    print(f"cohstats warmup: numba cache in {_numba_cache.cache_dir()}", flush=True)
    failed = 0
    for family, runs in _warmup_runs():
        t0 = time.perf_counter()
        errors = []
        for label, thunk in runs:
            t1 = time.perf_counter()
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    thunk()
            except Exception as exc:  # noqa: BLE001 -- report it, go on with the other families
                errors.append(f"{label}: {type(exc).__name__}: {exc}")
            if verbose:
                print(f"    {label:<24s} {time.perf_counter() - t1:6.1f} s", flush=True)
        print(f"  {family:<46s} {time.perf_counter() - t0:6.1f} s", flush=True)
        for err in errors:
            print(f"    failed -- {err}", file=sys.stderr, flush=True)
        failed += len(errors)
    funcs = _numba_cache.jitted_functions()
    unused = [name for name, d in funcs if not _numba_cache.in_cache(d)]
    print(
        f"done in {time.perf_counter() - t_all:.1f} s: {len(funcs) - len(unused)} of {len(funcs)} "
        "numba functions are in the cache or compiled into their callers",
        flush=True,
    )
    if verbose and unused:
        print("  neither (no fit above reaches them): " + ", ".join(unused), flush=True)
    return 1 if failed else 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m cohstats", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("command", choices=["demo", "warmup"], help="what to run")
    parser.add_argument("--seed", type=int, default=1, help="random seed of the demo")
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="warmup: time every fit and list functions no fit reached"
    )
    args = parser.parse_args(argv)
    if args.command == "demo":
        return demo(args.seed)
    if args.command == "warmup":
        return warmup(args.verbose)
    return 1  # pragma: no cover


if __name__ == "__main__":
    sys.exit(main())
