"""[ZDJ] Table 6, g241d, HHSVM: an independent Gaussian-kernel large-margin fit on the same data.

scikit-learn's ``SVC`` (libsvm; the hinge loss that HHSVM huberises) with the vignette's kernel
width (sigma = the mean pairwise distance of the standardised training rows, gamma = 1/sigma^2)
and C chosen by stratified K-fold CV error on each partition's 150 training rows (K as in the
vignette: min(10, smaller class count)), on the vignette's 20 partitions of g241d
(``zdj_clearn.datasets()``, ``stratified_split`` with seed r). Run from the repository's top
folder; writes ``zdj_g241d_svc_independent.csv`` beside itself.
"""

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.svm import SVC

from cohstats.kernels import mean_all
from cohstats.vignettes import zdj_clearn as z

warnings.simplefilter("ignore")
sets = {s[0]: s for s in z.datasets()}
_, loader, ntr, std = sets["g241d"]
rows = []
for r in range(20):
    X, y = loader(r)
    tr, te = z.stratified_split(y, ntr, np.random.default_rng(r))
    mu, sd = X[tr].mean(axis=0), X[tr].std(axis=0)
    sd[sd == 0] = 1.0
    Ztr, Zte = (X[tr] - mu) / sd, (X[te] - mu) / sd
    gamma = 1.0 / mean_all(Ztr) ** 2
    k = max(2, int(min(10, np.bincount((y[tr] > 0).astype(int)).min())))
    grid = GridSearchCV(
        SVC(kernel="rbf", gamma=gamma),
        {"C": np.logspace(-2, 4, 25)},
        cv=StratifiedKFold(k, shuffle=True, random_state=r),
        scoring="accuracy",
    )
    grid.fit(Ztr, y[tr])
    err = float(np.mean(grid.predict(Zte) != y[te]))
    rows.append({"partition": r, "C": grid.best_params_["C"], "error_pct": 100 * err})
    print(r, rows[-1])
out = pd.DataFrame(rows)
out.to_csv(Path(__file__).with_name("zdj_g241d_svc_independent.csv"), index=False)
print("mean", out.error_pct.mean(), "se", out.error_pct.std(ddof=1) / np.sqrt(len(out)))
