"""[WSL] Example 1 (= [ZDJ] Data 1): the GKL_c of logistic regression and of k-nearest neighbours
fitted by scikit-learn (independent of cohstats' solvers) on 100 training points, evaluated
against the true p on 900 test points, and the population optimum of the linear logistic family
(scipy quadrature). Run from the repository's top folder:
``python vignettes/results/wsl/example1_plr_nn_independent/wsl_ex1_plr_nn_sklearn.py``.
Writes ``wsl_ex1_plr_nn_sklearn.csv`` (one row per replication and estimator) beside itself."""

from pathlib import Path

import numpy as np
import pandas as pd
from scipy import integrate, optimize
from scipy.special import log_expit
from sklearn.linear_model import LogisticRegression
from sklearn.neighbors import KNeighborsClassifier

from cohstats.datasets import make_wsl1
from cohstats.metrics import gkl_c

REPS = 200


def population_logistic():
    """min over w of E[-p log s(w x1) - (1-p) log s(-w x1)], x uniform on the unit disk."""

    def risk(w):
        def f(x):
            p = 0.8 if x >= 0 else 0.2
            return (2 / np.pi) * np.sqrt(1 - x * x) * (-p * log_expit(w * x) - (1 - p) * log_expit(-w * x))

        return integrate.quad(f, -1, 0)[0] + integrate.quad(f, 0, 1)[0]

    r = optimize.minimize_scalar(risk, bounds=(0, 100), method="bounded")
    return float(r.x), float(r.fun)


rows = []
for r in range(REPS):
    df, p = make_wsl1(1000, random_state=1000 * r, return_prob=True)
    X, y = df[["x1", "x2"]].to_numpy(), df["y"].to_numpy()
    tr, te = np.arange(100), np.arange(100, 1000)
    mu, sd = X[tr].mean(0), X[tr].std(0)
    Z = (X - mu) / sd
    for name, est in (
        ("logistic, no penalty", LogisticRegression(C=np.inf, max_iter=1000)),
        ("logistic, C=1", LogisticRegression(C=1.0, max_iter=1000)),
    ):
        q = est.fit(Z[tr], y[tr]).predict_proba(Z[te])[:, 1]
        rows.append(
            dict(rep=r, estimator=name, k=np.nan, gkl_c=gkl_c(p[te], q), test_error=np.mean((q > 0.5) != (y[te] > 0)))
        )
    for k in (4, 9, 16, 25):
        q = KNeighborsClassifier(k).fit(Z[tr], y[tr]).predict_proba(Z[te])[:, 1]
        g = gkl_c(p[te], q) if np.all((q > 0) & (q < 1)) else np.inf
        rows.append(dict(rep=r, estimator="knn", k=k, gkl_c=g, test_error=np.mean((q > 0.5) != (y[te] > 0))))
d = pd.DataFrame(rows)
w, opt = population_logistic()
d["population_logistic_optimum"] = opt
d.to_csv(Path(__file__).with_suffix(".csv"), index=False)
print(f"population optimum of the linear logistic family: GKL_c {opt:.4f} at w = {w:.3f}")
fin = d[np.isfinite(d.gkl_c)]
s = fin.groupby(["estimator", "k"], dropna=False).gkl_c.agg(["mean", "count", "std"])
s["se"] = s["std"] / np.sqrt(s["count"])
print(s.round(4))
