"""[ZDJ] Tables 5-6, colon and leukemia: the level these data allow with the paper's training
sizes (16 and 20 points), measured with scikit-learn classifiers (independent of cohstats) on
the zdj_clearn vignette's 20 stratified partitions (partition r: seed r), each at every value
of a fixed grid, so the best fixed value is chosen in hindsight on the test sets (an optimistic
bound for any tuned method): L2 logistic regression and linear SVM (C in 1e-3..1e3), Gaussian
SVM with sigma = the mean pairwise distance of the training inputs (C in 1e-3..1e3), nearest
centroid and 1-, 3-nearest neighbours; for colon under each preprocessing of
``zdj_clearn.COLON_TRANSFORMS``. Also the training sizes of [ZDJ] Table 4 against larger ones
(colon 16, 31, 46; leukemia 20, 36, 54). Run from the repository's top folder. Writes
``zdj_colon_leukemia_sklearn_hindsight.csv`` (one row per data set, preprocessing, training size,
classifier, parameter and partition) beside itself."""

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.linear_model import LogisticRegression
from sklearn.neighbors import KNeighborsClassifier, NearestCentroid
from sklearn.svm import SVC, LinearSVC

from cohstats.datasets import load
from cohstats.kernels import mean_all
from cohstats.vignettes import zdj_clearn as z

warnings.simplefilter("ignore")
CS = 10.0 ** np.arange(-3, 4)
rows = []


def run(name, prep, X, y, ntrs):
    for ntr in ntrs:
        for r in range(20):
            tr, te = z.stratified_split(y, ntr, np.random.default_rng(r))
            Xtr, Xte, ytr, yte = X[tr], X[te], y[tr], y[te]
            g = 1.0 / mean_all(Xtr) ** 2
            models = [("nearest centroid", np.nan, NearestCentroid())]
            models += [(f"{k}-NN", np.nan, KNeighborsClassifier(k)) for k in (1, 3)]
            for C in CS:
                models += [
                    ("logistic L2", C, LogisticRegression(C=C, max_iter=5000)),
                    ("linear SVM", C, LinearSVC(C=C, max_iter=20000)),
                    ("Gaussian SVM", C, SVC(C=C, kernel="rbf", gamma=g)),
                ]
            for m, C, est in models:
                err = float(np.mean(est.fit(Xtr, ytr).predict(Xte) != yte))
                rows.append(
                    dict(data=name, prep=prep, n_train=len(tr), classifier=m, C=C, partition=r, error_pct=100 * err)
                )


raw = load("colon")
Xc, yc = raw.drop(columns=["y"]).to_numpy(dtype=float), raw["y"].to_numpy(dtype=float)
for prep in z.COLON_TRANSFORMS:
    run("colon", prep, z._colon_transform(Xc, prep), yc, (16, 31, 46) if prep == "log10_arrays" else (16,))
lk = load("leukemia3571")
run("leukemia", "as shipped", lk.drop(columns=["y"]).to_numpy(dtype=float), lk["y"].to_numpy(dtype=float), (20, 36, 54))
d = pd.DataFrame(rows)
d.to_csv(Path(__file__).with_suffix(".csv"), index=False)
m = d.groupby(["data", "prep", "n_train", "classifier", "C"], dropna=False).error_pct.agg(["mean", "std"]).reset_index()
best = m.loc[m.groupby(["data", "prep", "n_train", "classifier"])["mean"].idxmin()]
print(best.round(2).to_string(index=False))
