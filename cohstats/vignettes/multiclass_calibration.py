"""Class probabilities for K = 3 and 5 classes from every fit function, against the truth.

Data: K Gaussian classes in four dimensions with a common covariance (means on a circle of
radius 1.5 in the first two coordinates, two noise coordinates) and equal priors, so the true
class probabilities ``p(x)`` are a softmax of linear functions and known exactly. Every
estimator is fitted to the same training sample and scored on a fresh test sample by

* the probability error ``mean |p_hat - p|`` over test points and classes,
* the K-class Kullback-Leibler error ``mean_i sum_k p_k log(p_k / p_hat_k)`` (the GKL of
  [WSL] extended to K classes; ``p_hat`` floored at 1e-10),
* the test error of ``argmax p_hat``,

and shown in a pooled one-versus-rest reliability diagram. Estimators: multiclass C-learning
(the multicategory coherence loss of [ZJLY], lambda by 5-fold CV of the deviance), GentleBoost.C
(shrinkage 0.1, number of trees by 5-fold CV), the one-versus-one SVM with pairwise coupling of
Platt and of coherence-rho probabilities (Wu, Lin & Weng 2004), the lambda-SVM with its post-hoc
multinomial calibration ([RH]'s loss identifies only the argmax; the probabilities calibrate
the classifier on cross-validated decision values), the angle-based multicategory LUM (Zhang &
Liu 2014 with the LUM loss of [LZW], ``a = 1000``, ``c = 0``, ridge penalty, lambda by 5-fold CV
of the deviance of each probability method) with its refitted probabilities and with the
inverse link of the fitted LUM,
and, as the correctly specified reference,
unpenalised multinomial logistic regression (statsmodels ``MNLogit``). Every number in the
report is computed by the run that wrote it.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd

TITLE = "Multiclass class probabilities against the truth (K = 3 and 5)"
DEFAULT_REPS = 1
FULL_REPS = 20


def simulate(n: int, K: int, rng) -> tuple[pd.DataFrame, np.ndarray]:
    """``n`` points of the K-class Gaussian simulation and their true class probabilities."""
    ang = 2 * np.pi * np.arange(K) / K
    M = np.zeros((K, 4))
    M[:, 0], M[:, 1] = 1.5 * np.cos(ang), 1.5 * np.sin(ang)
    y = rng.integers(0, K, size=n)
    X = M[y] + rng.normal(size=(n, 4))
    eta = X @ M.T - 0.5 * np.sum(M**2, axis=1)[None, :]
    eta -= eta.max(axis=1, keepdims=True)
    P = np.exp(eta)
    P /= P.sum(axis=1, keepdims=True)
    labels = np.array([f"c{k + 1}" for k in range(K)])
    df = pd.DataFrame(X, columns=["x1", "x2", "x3", "x4"])
    df["y"] = pd.Categorical(labels[y], categories=labels)
    return df, P


def _mnlogit(train, test):
    import statsmodels.api as sm

    Xtr = sm.add_constant(train[["x1", "x2", "x3", "x4"]].to_numpy())
    Xte = sm.add_constant(test[["x1", "x2", "x3", "x4"]].to_numpy())
    res = sm.MNLogit(train["y"].cat.codes.to_numpy(), Xtr).fit(disp=0, maxiter=200)
    return np.asarray(res.predict(Xte))


def estimators(quick: bool):
    """name -> function(train, test) returning the (n_test, K) probability matrix."""
    import cohstats as cs

    f = "y ~ x1 + x2 + x3 + x4"
    n_trees = 100 if quick else 300

    def clearn(train, test):
        res = cs.cv(cs.clearn, f, train, nfolds=5, random_state=0, verbose=False, nlambda=30)
        return res.best_fit.predict(test, type="prob").to_numpy()

    def gboost(train, test):
        res = cs.cv(
            cs.gboost_c,
            f,
            train,
            nfolds=5,
            random_state=0,
            verbose=False,
            n_trees=n_trees,
            nodes=4,
            fit_kwargs={"random_state": 0},
        )
        return res.best_fit.predict(test, type="prob").to_numpy()

    def svm(method):
        def fit(train, test):
            s = cs.svm(f, train)
            return s.predict(test, type="prob", method=method).to_numpy()

        return fit

    def lamsvm(train, test):
        return cs.lamsvm(f, train).predict(test, type="prob").to_numpy()

    def lum(method):
        # lambda chosen by the CV deviance of the probabilities of this method
        def fit(train, test):
            res = cs.cv(
                cs.lum, f, train, nfolds=5, random_state=0, verbose=False, nlambda=30, prob_args={"method": method}
            )
            return res.best_fit.predict(test, type="prob", method=method).to_numpy()

        return fit

    return {
        "C-learning (CV)": clearn,
        "GentleBoost.C (CV steps)": gboost,
        "SVM one-vs-one + coupled Platt": svm("platt"),
        "SVM one-vs-one + coupled coherence": svm("coherence"),
        "lambda-SVM + post-hoc multinomial": lamsvm,
        "angle-based LUM (CV, refitted)": lum("refit"),
        "angle-based LUM (CV, inverse link)": lum("lum"),
        "multinomial logistic (MNLogit, reference)": _mnlogit,
    }


def scores(P_hat: np.ndarray, P: np.ndarray, y: np.ndarray) -> dict:
    Q = np.maximum(P_hat, 1e-10)
    Q = Q / Q.sum(axis=1, keepdims=True)
    return {
        "mae": float(np.mean(np.abs(P_hat - P))),
        "gkl": float(np.mean(np.sum(P * (np.log(P) - np.log(Q)), axis=1))),
        "error": float(np.mean(np.argmax(P_hat, axis=1) != y)),
    }


def one_replication(
    K: int, seed: int, quick: bool = True, n_train: int = 600, n_test: int = 2000
) -> tuple[pd.DataFrame, dict]:
    rng = np.random.default_rng([seed, K])
    train, _ = simulate(n_train, K, rng)
    test, P = simulate(n_test, K, rng)
    y = test["y"].cat.codes.to_numpy()
    rows, probs = [], {}
    for name, fn in estimators(quick).items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            Ph = fn(train, test)
        probs[name] = (Ph, P, y)
        rows.append({"K": K, "rep": seed, "method": name, **scores(Ph, P, y)})
    return pd.DataFrame(rows), probs


def _reliability_figure(probs: dict, K: int):
    import matplotlib.pyplot as plt

    from cohstats.calibration import reliability

    fig, ax = plt.subplots(figsize=(6.4, 5.0))
    ax.plot([0, 1], [0, 1], color="0.6", lw=0.8)
    for name, (Ph, P, y) in probs.items():
        E = np.zeros_like(Ph, dtype=bool)
        E[np.arange(y.size), y] = True
        tab, ece = reliability(Ph.ravel(), E.ravel(), bins=10)
        ax.plot(tab["mean_predicted"], tab["observed"], "o-", ms=3, label=f"{name} (ECE {ece:.3f})")
    ax.set(
        xlabel="predicted probability (one versus rest, all classes pooled)",
        ylabel="observed frequency",
        title=f"Reliability, K = {K}",
    )
    ax.legend(fontsize=7)
    return fig


def run(
    reps: int = DEFAULT_REPS,
    out="vignette_reports/multiclass_calibration",
    seed: int = 0,
    n_jobs: int | None = None,
    quick: bool = True,
) -> Path:
    """Write the report into ``out`` and return its path."""
    from .report import Report

    if not isinstance(reps, (int, np.integer)) or reps < 1:
        raise ValueError(f"reps must be a positive integer; got {reps!r}")
    rep = Report(TITLE, out, name="multiclass_calibration")
    rep.settings(
        {
            "replications": reps,
            "seed": seed,
            "training points": 600,
            "test points": 2000,
            "classes": "3 and 5",
            "protocol": "quick" if quick else "full",
        }
    )
    rep.text(__doc__.split("\n\n", 1)[1])
    allrows = []
    for K in (3, 5):
        rep.section(f"K = {K}")
        last = None
        with rep.timed(f"K = {K}"):
            for r in range(reps):
                df, probs = one_replication(K, seed + r, quick=quick)
                allrows.append(df)
                last = probs
        tab = pd.concat([d for d in allrows if d["K"].iloc[0] == K])
        summ = (
            tab.groupby("method", sort=False)
            .agg(
                mae=("mae", "mean"),
                mae_se=("mae", lambda v: v.std(ddof=1) / np.sqrt(len(v)) if len(v) > 1 else np.nan),
                gkl=("gkl", "mean"),
                error=("error", "mean"),
                reps=("mae", "size"),
            )
            .reset_index()
        )
        ref = float(summ.loc[summ.method == "C-learning (CV)", "mae"].iloc[0])
        summ["mae / C-learning"] = summ["mae"] / ref
        rep.table(
            summ,
            caption=f"K = {K}: mean over {reps} replication(s); mae_se is the standard "
            "error over replications (blank for one).",
        )
        within = summ.loc[summ["mae / C-learning"] <= 1.5, "method"].tolist()
        rep.text(
            f"Within 1.5 times the probability error of C-learning at K = {K}: "
            + (", ".join(within) if within else "none")
            + "."
        )
        rep.figure(
            _reliability_figure(last, K),
            f"reliability_K{K}",
            f"Pooled one-versus-rest reliability at K = {K} (last replication).",
        )
    return rep.write()


def main(argv=None):
    """Command line: ``python -m cohstats.vignettes.multiclass_calibration --reps N --out DIR``."""
    from .runner import vignette_main

    return vignette_main(run, argv, "multiclass_calibration", default_reps=DEFAULT_REPS)


if __name__ == "__main__":
    main()
