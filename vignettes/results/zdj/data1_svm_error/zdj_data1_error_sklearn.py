"""[ZDJ] Data 1 (= [WSL] Example 1): the test error that scikit-learn's classifiers (independent
of cohstats' solvers) reach on the samples of ``zdj_svm_probability`` (seeds ``1000 r``, the
first 100 points for training, the other 900 for testing), against [ZDJ] Table 3's errors
(SVM 0.219 for "Ours for SVM", C-learning 0.214) and the Bayes rule. Gaussian SVM with
[WSL]'s width (sigma = the median distance between the classes, ``gamma = 1 / sigma^2``),
linear SVM and L2 logistic regression, each at every C of a grid; reported: the best fixed C
(chosen in hindsight on the test sets) and the mean of each sample's best C in hindsight. Run
from the repository's top folder:
``python vignettes/results/zdj/data1_svm_error/zdj_data1_error_sklearn.py``.
Writes ``zdj_data1_error_sklearn.csv`` (one row per replication, classifier and C) beside it."""

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.linear_model import LogisticRegression
from sklearn.svm import SVC

from cohstats.datasets import make_wsl1
from cohstats.kernels import median_between

REPS = 40
CS = (0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0, 300.0, 1000.0)

rows = []
for r in range(REPS):
    df, p = make_wsl1(1000, random_state=1000 * r, return_prob=True)
    X, y = df[["x1", "x2"]].to_numpy(), df["y"].to_numpy()
    Xtr, ytr, Xte, yte = X[:100], y[:100], X[100:], y[100:]
    sigma = median_between(Xtr, ytr)
    bayes = np.where(p[100:] > 0.5, 1, -1)
    rows.append(dict(rep=r, classifier="Bayes rule", C=np.nan, test_error=np.mean(bayes != yte)))
    for C in CS:
        for name, est in (
            ("Gaussian SVM", SVC(C=C, gamma=1.0 / sigma**2)),
            ("linear SVM", SVC(C=C, kernel="linear")),
            ("logistic regression", LogisticRegression(C=C, max_iter=2000)),
        ):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                err = np.mean(est.fit(Xtr, ytr).predict(Xte) != yte)
            rows.append(dict(rep=r, classifier=name, C=C, test_error=err))
d = pd.DataFrame(rows)
d.to_csv(Path(__file__).with_suffix(".csv"), index=False)
m = d.dropna(subset=["C"]).groupby(["classifier", "C"]).test_error.agg(["mean", "std"])
best = m["mean"].groupby(level=0).idxmin()
per = d.dropna(subset=["C"]).groupby(["classifier", "rep"]).test_error.min().groupby(level=0).mean()
for c, key in best.items():
    mean, sd = m.loc[key]
    print(
        f"{c}: best fixed C = {key[1]:g}: {mean:.4f} (SE {sd / np.sqrt(REPS):.4f}); "
        f"each sample's best C in hindsight: {per[c]:.4f}"
    )
print(f"Bayes rule: {d[d.classifier == 'Bayes rule'].test_error.mean():.4f}")
