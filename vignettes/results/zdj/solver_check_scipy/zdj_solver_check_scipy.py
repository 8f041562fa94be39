"""[ZDJ] Tables 5-6 solvers against an independent fit: on partition 0 of a data set (the
zdj_clearn vignette's draw, split and full 6 x 50 grid), tune (omega, gamma) for HHSVM, RLRM and
C-learning exactly as ``zdj_clearn.tuned_error`` does (ties to the smaller gamma), refit
cohstats' ``clearn`` at the selected pair, and minimise the same objective,
``(1/n) sum phi(y_i f_i) + gamma [(1-omega)/2 beta'K beta + omega ||beta||_1]`` (Gaussian
expansion, [ZDJ] eq. 14) or ``... [(1-omega)/2 ||beta||^2 + omega ||beta||_1]`` on standardised
predictors (linear expansion), with scipy's L-BFGS-B on the split ``beta = beta+ - beta-``
(losses written here from their definitions: huberized hinge with delta = 2, logistic, C-loss
with rho = u = 1). Reports both objective values, the largest difference of the test decision
values and both test errors. Run from the repository's top folder:
``python vignettes/results/zdj/solver_check_scipy/zdj_solver_check_scipy.py g241d rbf``.
Appends to ``zdj_solver_check_scipy.csv`` beside itself."""

import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.optimize import minimize

from cohstats.kernels import mean_all
from cohstats.models.clearn import clearn
from cohstats.vignettes import zdj_clearn as z

name, expansion = sys.argv[1], sys.argv[2]
rep = int(sys.argv[3]) if len(sys.argv) > 3 else 0
warnings.simplefilter("ignore")
sets = {s[0]: s for s in z.datasets(quick=False)}
_, loader, ntr, std = sets[name]
X, y = loader(rep)
tr, te = z.stratified_split(y, ntr, np.random.default_rng(rep))
Xtr, Xte, ytr, yte = X[tr], X[te], y[tr], y[te]
n = len(tr)


def loss(kind, m):
    """value and derivative of the loss at margins m"""
    if kind == "hhinge":
        d = 2.0
        v = np.where(m > 1, 0.0, np.where(m > 1 - d, (1 - m) ** 2 / (2 * d), 1 - m - d / 2))
        g = np.where(m > 1, 0.0, np.where(m > 1 - d, -(1 - m) / d, -1.0))
        return v, g
    if kind == "logistic":
        return np.logaddexp(0.0, -m), -1.0 / (1.0 + np.exp(m))
    # C-loss, rho = u = 1: log(1 + exp(1 - m)) / log(1 + e)
    c = np.log1p(np.e)
    return np.logaddexp(0.0, 1.0 - m) / c, -1.0 / (1.0 + np.exp(m - 1.0)) / c


if expansion == "rbf":
    Ztr, Zte = Xtr, Xte
    if std:
        mu, sd = Xtr.mean(0), Xtr.std(0)
        sd = np.where(sd > 0, sd, 1.0)
        Ztr, Zte = (Xtr - mu) / sd, (Xte - mu) / sd
    g = 1.0 / mean_all(Ztr) ** 2

    def gram(A, B):
        return np.exp(-g * np.maximum((A * A).sum(1)[:, None] + (B * B).sum(1)[None, :] - 2 * A @ B.T, 0.0))

    F, Fte, R = gram(Ztr, Ztr), gram(Zte, Ztr), gram(Ztr, Ztr)
else:
    mu, sd = Xtr.mean(0), Xtr.std(0)
    sd = np.where(sd > 0, sd, 1.0)
    F, Fte = (Xtr - mu) / sd if std else Xtr, (Xte - mu) / sd if std else Xte
    R = None
q = F.shape[1]
rows = []
for mname, margs in z.METHODS.items():
    kind = {"HHSVM": "hhinge", "RLRM": "logistic", "C-learning": "C"}[mname]
    kern = "rbf" if expansion == "rbf" else None
    _, om, _, err_s, _, lam = z.tuned_error(Xtr, ytr, Xte, yte, margs, kern, z.OMEGA_FULL, 50, rep, 1, std, 1e-3)
    fit = clearn(
        Xtr,
        ytr,
        kernel=kern,
        alpha=om,
        lambda_=lam,
        max_iter=100000,
        tol=1e-10,
        standardize=std,
        **margs,
        **({"gamma": "mean"} if kern else {}),
    )
    f_ours = fit.predict(Xte, type="link").to_numpy().ravel()

    def obj(v):
        b, bp, bm = v[0], v[1 : q + 1], v[q + 1 :]
        beta = bp - bm
        m = ytr * (b + F @ beta)
        lv, lg = loss(kind, m)
        quad = beta @ (R @ beta) if R is not None else beta @ beta
        val = lv.mean() + lam * ((1 - om) / 2 * quad + om * (bp.sum() + bm.sum()))
        gm = ytr * lg / n
        gb = F.T @ gm + lam * (1 - om) * (R @ beta if R is not None else beta)
        return val, np.concatenate([[gm.sum()], gb + lam * om, -gb + lam * om])

    bounds = [(None, None)] + [(0, None)] * (2 * q)
    res = minimize(
        obj,
        np.zeros(2 * q + 1),
        jac=True,
        method="L-BFGS-B",
        bounds=bounds,
        options={"maxiter": 100000, "maxfun": 200000, "ftol": 1e-15, "gtol": 1e-10},
    )
    bs = res.x[1 : q + 1] - res.x[q + 1 :]
    f_sp = res.x[0] + Fte @ bs
    # our objective at our own solution, read from the fit
    ours_obj = float(fit.info["objective"][0])
    rows.append(
        dict(
            data=name,
            expansion=expansion,
            partition=rep,
            method=mname,
            omega=om,
            gamma=lam,
            objective_cohstats=ours_obj,
            objective_scipy=float(res.fun),
            max_abs_diff_test_f=float(np.max(np.abs(f_ours - f_sp))),
            error_pct_cohstats=100 * np.mean(np.sign(f_ours) != yte),
            error_pct_scipy=100 * np.mean(np.sign(f_sp) != yte),
            error_pct_vignette=100 * err_s,
            scipy_converged=bool(res.success),
        )
    )
    print(rows[-1], flush=True)
out = Path(__file__).with_suffix(".csv")
d = pd.DataFrame(rows)
d.to_csv(out, mode="a", header=not out.exists(), index=False)
