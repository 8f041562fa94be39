"""[WSL] Example 1 or 2, linear SVM / psi-learning: Platt's test GKL_c at every lambda of the quick grid with
the sigmoid on the training outputs and on 5-fold cross-validated decision values (samples with seeds ``1000 r``).

    python evidence_platt_linear_examples.py 2 6 svm,psi out.csv   # example, samples, classifiers, output
"""

import sys
import numpy as np
import pandas as pd
from cohstats.datasets import make_wsl2, make_wsl1
from cohstats.formula import build_design
from cohstats.metrics import gkl_c
from cohstats.probability import platt_fit, platt_prob
from cohstats.tuning.folds import make_folds
from cohstats.vignettes import wsl_probability as W

gen = make_wsl2 if sys.argv[1] == "2" else make_wsl1
rows = []
for r in range(int(sys.argv[2])):
    df, p = gen(1000, random_state=1000 * r, return_prob=True)
    tr, te = df.iloc[:100], df.iloc[100:]
    d = build_design("y ~ x1 + x2", tr)
    Xte = te[["x1", "x2"]].to_numpy()
    pte = p[100:]
    Xtr = d.X
    ytr = np.asarray(d.y, float)
    f5 = make_folds(ytr, 5, stratified=True, random_state=0)
    for kind in sys.argv[3].split(","):
        fn = W._fit_fn(kind)
        for lam in W._grid(True) / 100:
            kw = dict(kernel="linear", m=10, pi=0.5, standardize=False)
            fit = fn(d, lambda_=lam, **kw)
            ftr, fte = fit._decision(Xtr), fit._decision(Xte)
            fcv = np.empty(100)
            for k in range(5):
                h = f5 == k
                fcv[h] = fn(d.take(~h), C=1 / (100 * lam), **kw)._decision(Xtr[h])
            st, sc = platt_fit(ftr, ytr), platt_fit(fcv, ytr)
            rows.append(
                dict(
                    rep=r,
                    kind=kind,
                    lam=lam,
                    gkl_train=gkl_c(pte, platt_prob(fte, st.A, st.B)),
                    gkl_cv=gkl_c(pte, platt_prob(fte, sc.A, sc.B)),
                    te=np.mean(np.sign(fte) != te.y.to_numpy()),
                )
            )
pd.DataFrame(rows).to_csv(sys.argv[4], index=False)
d = pd.DataFrame(rows)
print(d.groupby(["kind", "lam"])[["gkl_train", "gkl_cv", "te"]].mean().unstack("kind").round(4).to_string())
