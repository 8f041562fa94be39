"""Platt's sigmoid on the [WSL] benchmark data at every lambda of the quick grid.

Per sample (seed ``1000 r``, 100 training cases, the rest test, inputs standardised as the
vignette does) and per lambda: 10-fold stratified CV misclassification (fold refits at the
full fit's cost ``C = 1/(n lambda)``, libsvm's convention), training and test error, and Platt's
test cross-entropy with the sigmoid fitted on the training decision values (``cre_train``) and
on 5-fold cross-validated decision values (``cre_cv``, libsvm's method).

    python evidence_platt.py widths DATASET REPS KINDS WIDTHS OUT.csv
        e.g. widths Ionosphere 0,1,2,3,4,5 psi,svm s2,wide100 out.csv (Gaussian kernel; widths
        s2 = 1/s^2, s = 1/s, p = 1/p, sig = s, wide = 1/(10 s^2), wide100 = 1/(100 s^2), with s the
        median distance between the classes; Mushroom uses integer codes here)
    python evidence_platt.py codings REPS KINDS CODINGS OUT.csv
        e.g. codings 0,1,2,3,4,5 svm:linear,svm:rbf,psi:linear,psi:rbf onehot,integer,treatment out.csv
        (Mushroom; Gaussian width 1/s^2)
"""

import sys

import numpy as np
import pandas as pd

from cohstats.datasets import load
from cohstats.formula import build_design
from cohstats.kernels import median_between
from cohstats.metrics import cre
from cohstats.probability import platt_fit, platt_prob
from cohstats.tuning.folds import make_folds
from cohstats.vignettes import wsl_probability as W

GRID = W._grid(True) / 100


def per_lambda(fn, d, Xtr, ytr, Xte, yte, kw, r):
    """One row per lambda of the quick grid for the fit function ``fn`` with arguments ``kw``."""
    f10 = make_folds(ytr, 10, stratified=True, random_state=r)
    f5 = make_folds(ytr, 5, stratified=True, random_state=0)
    rows = []
    for lam in GRID:
        kw = dict(kw)
        fit = fn(d, lambda_=lam, **kw)
        if kw.get("gamma") == "median":
            kw["gamma"] = float(fit.kernel.kpar[0])
        ftr, fte = fit._decision(Xtr), fit._decision(Xte)
        C = 1.0 / (len(ytr) * lam)
        err = 0
        for k in range(10):
            h = f10 == k
            err += np.sum(np.sign(fn(d.take(~h), C=C, **kw)._decision(Xtr[h])) != ytr[h])
        fcv = np.empty(len(ytr))
        for k in range(5):
            h = f5 == k
            fcv[h] = fn(d.take(~h), C=C, **kw)._decision(Xtr[h])
        st, sc = platt_fit(ftr, ytr), platt_fit(fcv, ytr)
        rows.append(
            {
                "lam": lam,
                "cv_err": err / len(ytr),
                "train_err": np.mean(np.sign(ftr) != ytr),
                "test_err": np.mean(np.sign(fte) != yte),
                "cre_train": cre(yte, platt_prob(fte, st.A, st.B)),
                "cre_cv": cre(yte, platt_prob(fte, sc.A, sc.B)),
            }
        )
    return rows


def split(X, y, n_scaled, r):
    rng = np.random.default_rng(1000 * r)
    idx = rng.permutation(len(y))
    tr, te = idx[:100], idx[100:]
    Xtr, Xte = W._standardise(X[tr], X[te], n_scaled)
    return build_design(Xtr, y[tr]), Xtr, y[tr].astype(float), Xte, y[te]


def widths(ds, reps, kinds, names, out):
    X, y, n_scaled = W._bench_xy(W.BENCH[ds], "integer" if ds == "Mushroom" else "onehot")
    rows = []
    for r in reps:
        d, Xtr, ytr, Xte, yte = split(X, y, n_scaled, r)
        s = median_between(Xtr, ytr)
        gam = {"s2": 1 / s**2, "s": 1 / s, "p": 1.0 / Xtr.shape[1], "sig": s, "wide": 1 / (10 * s**2)}
        gam["wide100"] = 1 / (100 * s**2)
        for kind in kinds:
            for w in names:
                kw = {"kernel": "rbf", "m": 10, "pi": 0.5, "standardize": False, "gamma": gam[w]}
                for row in per_lambda(W._fit_fn(kind), d, Xtr, ytr, Xte, yte, kw, r):
                    rows.append({"dataset": ds, "rep": r, "kind": kind, "width": w, "gamma": gam[w], **row})
        pd.DataFrame(rows).to_csv(out, index=False)


def mushroom(coding):
    df = load("mushroom")
    y, Xdf = df.y.to_numpy(), df.drop(columns="y").astype(str)
    if coding == "onehot":
        return pd.get_dummies(Xdf, dtype=float).to_numpy(), y, 0
    if coding == "treatment":
        return pd.get_dummies(Xdf, dtype=float, drop_first=True).to_numpy(), y, 0
    X = np.column_stack([pd.Categorical(Xdf[c]).codes + 1.0 for c in Xdf.columns])  # sorted levels
    return X, y, X.shape[1]


def codings(reps, kinds, names, out):
    rows = []
    for coding in names:
        X, y, n_scaled = mushroom(coding)
        for r in reps:
            d, Xtr, ytr, Xte, yte = split(X, y, n_scaled, r)
            for kind, kern in (k.split(":") for k in kinds):
                kw = {"kernel": kern, "m": 10, "pi": 0.5, "standardize": False}
                if kern == "rbf":
                    kw["gamma"] = "median"
                for row in per_lambda(W._fit_fn(kind), d, Xtr, ytr, Xte, yte, kw, r):
                    rows.append({"enc": coding, "rep": r, "kind": f"{kind} {kern}", **row})
            pd.DataFrame(rows).to_csv(out, index=False)


if __name__ == "__main__":
    a = sys.argv[1:]
    ints = [int(x) for x in (a[2] if a[0] == "widths" else a[1]).split(",")]
    if a[0] == "widths":
        widths(a[1], ints, a[3].split(","), a[4].split(","), a[5])
    else:
        codings(ints, a[2].split(","), a[3].split(","), a[4])
