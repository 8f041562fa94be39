"""[ZDJ] Tables 5-6, g241c / g241d: how much of the paper's mean is the one fixed data set.
[ZDJ] (after Chapelle et al.) partitions ONE data set of 1,500 points 20 times, so its 20 test
sets (1,350 points each) overlap in most of their points; the vignette draws a fresh data set per
partition. Here: D fixed draws (``make_g241c/d(1500, random_state=100 + d)``), each partitioned P
times exactly as the vignette partitions (stratified 150 training points, partition seed r),
one method per expansion tuned as the vignette does (quick grid, ties to the smaller gamma).
The spread of the per-draw means over the draws is the uncertainty a single fixed data set adds
to a mean over its partitions, which the paper's sd / sqrt(20) does not contain. Run from the
repository's top folder: ``python .../zdj_g241_fixed_draw.py g241c rbf C-learning 6 5``.
Appends to ``zdj_g241_fixed_draw.csv`` beside itself."""

import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from cohstats.datasets import make_g241c, make_g241d
from cohstats.vignettes import zdj_clearn as z

name, expansion, method = sys.argv[1], sys.argv[2], sys.argv[3]
D, P = int(sys.argv[4]), int(sys.argv[5])
warnings.simplefilter("ignore")
gen = make_g241c if name == "g241c" else make_g241d
rows = []
for d in range(D):
    df = gen(1500, random_state=100 + d)
    X, y = df.drop(columns=["y"]).to_numpy(dtype=float), df["y"].to_numpy(dtype=float)
    for r in range(P):
        tr, te = z.stratified_split(y, 150, np.random.default_rng(r))
        out = z.tuned_error(
            X[tr],
            y[tr],
            X[te],
            y[te],
            z.METHODS[method],
            "rbf" if expansion == "rbf" else None,
            z.OMEGA_QUICK,
            30,
            r,
            1,
            True,
            1e-3,
        )
        rows.append(dict(data=name, expansion=expansion, method=method, draw=d, partition=r, error_pct=100 * out[3]))
        print(rows[-1], flush=True)
out = Path(__file__).with_suffix(".csv")
pd.DataFrame(rows).to_csv(out, mode="a", header=not out.exists(), index=False)
