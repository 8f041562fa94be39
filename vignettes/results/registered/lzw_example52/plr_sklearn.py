"""[LZW] Example 5.2: scikit-learn's ridge logistic regression (an implementation independent of
cohstats) on the registered run's samples, beside the paper's PLR (test error 0.1242, MAE 0.1823).

Replications 0..R-1 draw training, validation and test sets exactly as the lum_simulations
vignette does (SeedSequence([0, 52, 0, rep]) spawned into three streams; test sets of 100,000).
The penalty is chosen on the validation set over C = 1 / (n lambda) for the vignette's 25 lambda
values, ties to the larger penalty (as the vignette); the best C in hindsight on the test set is
reported too. Writes plr_sklearn.csv (one row per replication) and prints the means.

    python plr_sklearn.py [R]
"""

import sys
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.linear_model import LogisticRegression

from cohstats.models.lum import LUM_LAMBDA_GRID

from _samples import samples

R = int(sys.argv[1]) if len(sys.argv) > 1 else 200
rows = []
for rep in range(R):
    (Xtr, ytr), (Xva, yva), (Xte, yte), pte = samples(rep, 100_000)
    val, err, mae = [], [], []
    for lam in LUM_LAMBDA_GRID:  # decreasing lambda: the first index is the largest penalty
        m = LogisticRegression(C=1.0 / (len(ytr) * lam), max_iter=10_000, tol=1e-10).fit(Xtr, ytr)
        val.append(np.mean(m.predict(Xva) != yva))
        err.append(np.mean(m.predict(Xte) != yte))
        mae.append(np.mean(np.abs(m.predict_proba(Xte)[:, 1] - pte)))
    val = np.asarray(val)
    k = int(np.flatnonzero(val <= val.min() + 1e-12)[0])
    h = int(np.argmin(mae))
    rows.append(
        dict(
            rep=rep,
            lambda_=LUM_LAMBDA_GRID[k],
            test_error=err[k],
            mae=mae[k],
            best_mae_hindsight=mae[h],
            bayes_error=float(np.mean((pte > 0.5) != (yte > 0))),
        )
    )
out = pd.DataFrame(rows)
out.to_csv(Path(__file__).with_name("plr_sklearn.csv"), index=False)
sd = out[["test_error", "mae", "best_mae_hindsight"]].std() / np.sqrt(len(out))
print(f"replications {len(out)}; means (SE):")
for c in ("test_error", "mae", "best_mae_hindsight", "bayes_error"):
    print(f"  {c}: {out[c].mean():.4f}" + (f" ({sd[c]:.4f})" if c in sd else ""))
