"""[ZDJ] Table 2, Data 2, Sollich: per replication (r = 0..39, the vignette's seeds) the lambda
that 10-fold CV misclassification picks for the Gaussian SVM (exactly as
``zdj_svm_probability._rep``: weighted SVM at pi = 1/2, median between-class width, unscaled
inputs, the quick e1071 grid), the Sollich test GKL_c and test error there, and the Sollich GKL_c
of the SVM refitted at every fixed lambda of the grid; plus, at the CV lambda, scikit-learn's SVC
(libsvm, independent of cohstats' solvers) with the same kernel and C = 1/(2 n lambda) (the
weighted SVM's cost at pi = 1/2). Run from the repository's top folder. Writes
``zdj_data2_sollich_by_lambda.csv`` beside itself."""

import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.svm import SVC

from cohstats.datasets import make_wsl2
from cohstats.formula import build_design
from cohstats.kernels import median_between
from cohstats.metrics import error_rate, gkl_c
from cohstats.models.svm import svm
from cohstats.probability import sollich_prob
from cohstats.tuning import tune
from cohstats.vignettes.zdj_svm_probability import _SVM, N_TRAIN, _grid

REPS = int(sys.argv[1]) if len(sys.argv) > 1 else 40
grid = _grid(True, "e1071")
rows = []
warnings.simplefilter("ignore")
for r in range(REPS):
    df, p = make_wsl2(1000, random_state=1000 * r, return_prob=True)
    tr, te, pte = df.iloc[:N_TRAIN], df.iloc[N_TRAIN:], p[N_TRAIN:]
    yte = te.y.to_numpy()
    Xte = te[["x1", "x2"]]
    d = build_design("y ~ x1 + x2", tr)
    cvr = tune(
        svm,
        d,
        grid={"lambda_": grid},
        method="cv",
        measure="class",
        nfolds=10,
        random_state=7919 * r,
        verbose=False,
        m=10,
        **_SVM,
    )
    f = cvr.best_fit
    lam = float(f.lambda_[0])
    fte = f.predict(Xte, type="link").to_numpy()
    row = dict(
        rep=r,
        cv_lambda=lam,
        sollich_gkl=gkl_c(pte, sollich_prob(fte)),
        svm_error=error_rate(yte, np.where(fte > 0, 1, -1)),
        max_abs_f_test=float(np.max(np.abs(fte))),
    )
    # independent fit: libsvm through scikit-learn at the same cost and width
    Xtr = tr[["x1", "x2"]].to_numpy()
    g = 1.0 / median_between(Xtr, tr.y.to_numpy()) ** 2
    sk = SVC(C=1.0 / (2 * N_TRAIN * lam), kernel="rbf", gamma=g, tol=1e-6).fit(Xtr, tr.y.to_numpy())
    fsk = sk.decision_function(Xte.to_numpy())
    row["sklearn_max_abs_diff_f"] = float(np.max(np.abs(fsk - fte)))
    row["sklearn_sollich_gkl"] = gkl_c(pte, sollich_prob(fsk))
    for lm in grid:
        ff = svm(d, lambda_=lm, **_SVM)
        row[f"sollich_gkl_at_{lm:.3g}"] = gkl_c(pte, sollich_prob(ff.predict(Xte, type="link").to_numpy()))
    rows.append(row)
    print(r, round(lam, 7), round(row["sollich_gkl"], 4), round(row["sklearn_max_abs_diff_f"], 6), flush=True)
pd.DataFrame(rows).to_csv(Path(__file__).with_suffix(".csv"), index=False)
