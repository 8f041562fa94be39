"""[ZDJ] Tables 5-6, colon: the vignette's full protocol (20 partitions, the paper's 6 x 50 grid)
under one colon preprocessing of ``zdj_clearn.COLON_TRANSFORMS``. Run from the repository's top
folder, once per reading:
``python vignettes/results/zdj/colon_preprocessing/zdj_colon_preprocessing.py log10_arrays 20 full out.csv``;
the five outputs (``log10_arrays``, ``none``, ``log2``, ``log10``, ``arrays``) are concatenated in
``zdj_colon_preprocessing_20_partitions.csv`` (columns of ``zdj_clearn.replications`` plus
``colon`` and ``grid``). ``log10_arrays`` reproduces the committed full run's colon rows."""

import sys
import time

from cohstats.vignettes import zdj_clearn as z

colon = sys.argv[1]
reps = int(sys.argv[2])
quick = sys.argv[3] == "quick"
out = sys.argv[4]
t = time.time()
c = time.process_time()
d = z.replications(reps, quick=quick, only=["colon"], colon=colon, n_jobs=1)
d["colon"] = colon
d["grid"] = "quick" if quick else "full"
d.to_csv(out, index=False)
print(colon, quick, time.time() - t, time.process_time() - c, flush=True)
print(d.groupby(["expansion", "method"]).error_pct.agg(["mean", "std"]).round(2))
