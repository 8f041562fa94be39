"""[LZW] Example 5.2: LUM and refitted-LUM MAE and test error at every fixed lambda of the
vignette's grid, against the validation choice, on replications 0..R-1 of the registered run's
samples (test sets of 20,000 here), for a = 1000 and c in {0, 10, 10000}.

Question: is the paper's level (LUM MAE 0.205-0.223 at a = 1000, refitted 0.073-0.078, PLR test
error 0.124) what our LUM gives at a heavier penalty than the validation error picks?

    python lum_by_lambda.py [R]
"""

import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from cohstats.models.lum import LUM_LAMBDA_GRID, lum, lum_link
from cohstats.vignettes import lum_simulations as L

from _samples import samples

R = int(sys.argv[1]) if len(sys.argv) > 1 else 100
rows = []
for rep in range(R):
    (Xtr, ytr), (Xva, yva), (Xte, yte), pte = samples(rep, 20_000)
    for c in (0.0, 10.0, 10000.0):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = lum(Xtr, ytr, a=1000.0, c=c, lambda_=LUM_LAMBDA_GRID, standardize=False)
            val = np.mean((fit._decision_path(Xva) > 0) != (yva[None] > 0), axis=1)
            chosen = L._select(val)
            for k, lam in enumerate(LUM_LAMBDA_GRID):
                fit.s = float(lam)
                f = fit._decision(Xte)
                r = fit.refit(float(lam), warn=False)
                rows.append(
                    dict(
                        rep=rep,
                        c=c,
                        k=k,
                        lambda_=float(lam),
                        chosen=k == chosen,
                        test_error=float(np.mean((f > 0) != (yte > 0))),
                        mae_lum=float(np.mean(np.abs(lum_link(f, 1000.0, c) - pte))),
                        mae_refit=float(np.mean(np.abs(lum_link(r["g0"] + r["g1"] * f, 1000.0, 0.0) - pte))),
                    )
                )
out = pd.DataFrame(rows)
out.to_csv(Path(__file__).with_name("lum_by_lambda.csv.gz"), index=False)
by = out.groupby(["c", "lambda_"])[["test_error", "mae_lum", "mae_refit"]].mean().round(4)
print(by.to_string())
print("validation choice:")
print(out[out.chosen].groupby("c")[["test_error", "mae_lum", "mae_refit"]].mean().round(4).to_string())
