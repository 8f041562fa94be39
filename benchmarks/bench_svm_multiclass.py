"""One-vs-one svm() against scikit-learn's SVC, coupled probabilities on a 3-class simulation
with known posteriors, and the effect of standardize= on raw breast-cancer data.

Run: ``python benchmarks/bench_svm_multiclass.py [--reps 10] [--quick]``. Results are recorded
in ``benchmarks/log.csv``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd


def three_class(n, rng):
    """Three Gaussian classes N(mu_k, I_2), equal priors, means on a triangle of radius 1.5;
    true posteriors by Bayes' rule (softmax of x'mu_k - |mu_k|^2/2)."""
    mu = 1.5 * np.array([[1.0, 0.0], [-0.5, np.sqrt(3) / 2], [-0.5, -np.sqrt(3) / 2]])
    y = rng.integers(0, 3, n)
    X = mu[y] + rng.normal(size=(n, 2))
    s = X @ mu.T - 0.5 * np.sum(mu**2, axis=1)
    P = np.exp(s - s.max(axis=1, keepdims=True))
    P /= P.sum(axis=1, keepdims=True)
    return pd.DataFrame(X, columns=["x1", "x2"]).assign(y=np.array(["a", "b", "c"])[y]), P


def bench_ovo(quick):
    from sklearn.svm import SVC
    from cohstats.datasets import load
    from cohstats.models.svm import svm

    print("one-vs-one vs SVC(decision_function_shape='ovo'), rbf, gamma='scale', C=1, standardised")
    names = ["segment"] if quick else ["segment", "pendigits"]
    for name in names:
        df = load(name)
        ycol = df.columns[-1]
        X = df.drop(columns=ycol).to_numpy(dtype=float)
        X = X[:, X.std(0) > 0]
        y = df[ycol].to_numpy()
        if quick:
            X, y = X[:1000], y[:1000]
        Z = (X - X.mean(0)) / X.std(0)
        svm(Z[:50], y[:50], standardize=False)  # compile
        t = time.perf_counter()
        fit = svm(Z, y, standardize=False)
        t_ours = time.perf_counter() - t
        t = time.perf_counter()
        s = SVC(decision_function_shape="ovo").fit(Z, y)
        t_sk = time.perf_counter() - t
        F = fit.predict(Z, type="link").to_numpy()
        dif = np.abs(F - s.decision_function(Z)).max()
        agree = np.mean(fit.predict(Z).to_numpy() == s.predict(Z))
        print(
            f"  {name}: n={len(y)}, K={len(np.unique(y))}, ours {t_ours:.2f} s, SVC {t_sk:.2f} s, "
            f"max |f - f_SVC| = {dif:.1e}, labels agree {100 * agree:.2f} %"
        )


def bench_coupling(reps, quick):
    from sklearn.linear_model import LogisticRegression
    from cohstats.models.svm import svm

    methods = ["platt", "sollich", "coherence", "bracket"]
    Cs = [0.1, 1.0, 10.0]
    res = {}
    for n in [300] if quick else [300, 1000]:
        for rep in range(reps):
            rng = np.random.default_rng(1000 + rep)
            tr, _ = three_class(n, rng)
            te, P = three_class(2000, rng)
            lr = LogisticRegression(C=1e6, max_iter=1000).fit(tr[["x1", "x2"]], tr.y)
            res.setdefault((n, "multinomial logistic (true model)", ""), []).append(
                np.mean(np.abs(lr.predict_proba(te[["x1", "x2"]]) - P))
            )
            for C in Cs:
                fit = svm("y ~ x1 + x2", tr, C=C)
                for mth in methods:
                    ph = fit.predict(te, type="prob", method=mth).to_numpy()
                    res.setdefault((n, mth, C), []).append(np.mean(np.abs(ph - P)))
    print(
        f"3-class simulation, mean |p_hat - p| over 2000 test points, {reps} replications "
        "(svm rbf, gamma='scale', standardised; m = floor(sqrt(n_pair)))"
    )
    for (n, mth, C), v in res.items():
        print(f"  n={n:5d} {mth:34s} C={C!s:5s} {np.mean(v):.4f} (se {np.std(v, ddof=1) / np.sqrt(len(v)):.4f})")


def bench_standardize(quick):
    from cohstats.datasets import load
    from cohstats.models.svm import svm
    from cohstats.tuning import cv

    df = load("breast_cancer")
    y = df.columns[-1]
    print("raw breast-cancer data, 10-fold CV misclassification (mean over 3 fold seeds)")
    for label, kw in [
        ("svm() defaults (standardize=True, gamma='scale')", {}),
        ("standardize=False, gamma='scale'", dict(standardize=False)),
        (
            "standardize=False, gamma='median', pi=0.5 (former defaults)",
            dict(standardize=False, gamma="median", pi=0.5),
        ),
        ("kernel=None, standardize=True", dict(kernel=None)),
    ]:
        t = time.perf_counter()
        e = [
            cv(svm, f"{y} ~ .", df, nfolds=10, random_state=s, verbose=False, **kw).cvm[0]
            for s in range(1 if quick else 3)
        ]
        print(f"  {label}: {100 * np.mean(e):.1f} %  ({time.perf_counter() - t:.1f} s)")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args(argv)
    bench_ovo(a.quick)
    bench_coupling(2 if a.quick else a.reps, a.quick)
    bench_standardize(a.quick)


if __name__ == "__main__":
    main()
