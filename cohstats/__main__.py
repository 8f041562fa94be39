"""``python -m cohstats demo``: a two-minute tour on simulated data from Wang, Shen & Liu (2008).

Simulates Example 2 of the paper (a sine-shaped boundary, true class probabilities known),
fits C-learning with a Gaussian kernel through a formula, tunes the penalty by 5-fold CV
(cross-entropy), prints the summary and compares predicted with true probabilities.
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

    cvfit = cs.cv(cs.clearn, "y ~ x1 + x2", data=train, kernel="rbf", alpha=0.5,
                  nfolds=5, measure="ekl", random_state=seed, verbose=False)
    fit = cvfit.best_fit
    print(fit.summary(), "\n")

    prob = fit.predict(test, type="prob")
    shown = pd.concat([test[["x1", "x2", "y"]].head(8).reset_index(drop=True),
                       prob.head(8).reset_index(drop=True).add_prefix("P(y=").add_suffix(")"),
                       pd.Series(p_true[:8], name="true P(y=1)")], axis=1)
    print("Predicted class probabilities on test points:")
    print(shown.round(3).to_string(index=False), "\n")

    p_hat = prob[fit.classes[1]].to_numpy()
    err = float(np.mean(fit.predict(test).to_numpy() != test["y"].to_numpy()))
    print(f"test error {err:.3f} (Bayes error about 0.059); "
          f"mean |p - p_hat| {cs.metrics.mae(p_true, p_hat):.3f}; "
          f"comparative GKL {cs.metrics.gkl_c(p_true, p_hat):.3f} (Bayes floor 0.1005)")
    print(f"done in {time.perf_counter() - t0:.1f} s")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m cohstats", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=["demo"], help="what to run")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    if args.command == "demo":
        return demo(args.seed)
    return 1  # pragma: no cover


if __name__ == "__main__":
    sys.exit(main())
