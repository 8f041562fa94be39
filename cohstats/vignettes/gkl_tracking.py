"""Does the estimated GKL track the true GKL? [WSL] Examples 1 and 2 across the lambda grid.

[WSL] (Section 3) tunes its probability estimators by minimising an estimate of the comparative
GKL loss, ``GKL_c_hat`` (eq. 9, data perturbation), and on real data reports the test
cross-entropy (CRE) in place of the unknown GKL. Here the true probability is known, so along the
whole [WSL] penalty grid we compare, averaged over replications:

* the true ``GKL_c`` of the estimate on the 900 test points (known ``p``),
* the test CRE (labels only; its expectation is ``GKL_c``, which is why it can stand in for it),
* ``GKL_c_hat`` computed from the 100 training points only (:func:`cohstats.tuning.gkl`),
* the 10-fold cross-validated CRE (:func:`cohstats.tuning.cv`),
* the training CRE (``EGKL``, the optimistic starting point of eq. 9),

and the true ``GKL_c`` of the model each criterion selects, against the oracle (the best grid
value for that data set).

The estimator is [WSL]'s own, the bracketing estimator over the pi path of a Gaussian-kernel
weighted SVM (``svm(pi="path")``, ``predict(type="prob", method="bracket")``); ``estimator="plr"``
uses L2-penalised logistic regression (``clearn(loss="logistic")``) instead.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

TITLE = "GKL tracking: estimated against true GKL across the penalty grid ([WSL] Examples 1-2)"
DEFAULT_REPS = 1
FULL_REPS = 100

_CRITERIA = {
    "gkl_hat": "GKL_c estimate (data perturbation)",
    "cv_cre": "10-fold CV cross-entropy",
    "train_cre": "training cross-entropy (EGKL)",
    "test_cre": "test cross-entropy",
    "true_gkl_c": "true GKL_c (oracle)",
}


def svm_bracketing():
    """[WSL]'s "New": Gaussian-kernel weighted SVM, bracketing probabilities over the pi path,
    ``sigma = median_between`` of the training split, ``m = floor(sqrt(n)) = 10``."""
    from cohstats.kernels import median_between
    from cohstats.models.svm import svm

    def args(design):
        return {"kernel": "rbf", "pi": "path", "sigma": median_between(design.X, design.y), "standardize": False}

    return (
        svm,
        args,
        {"method": "bracket"},
        "weighted SVM + bracketing ([WSL] 'New'), Gaussian kernel, sigma = median_between, m = 10",
    )


def plr():
    """L2-penalised linear logistic regression (the PLR of [WSL] Table 2)."""
    try:
        from cohstats.models.clearn import clearn
    except ImportError as exc:  # pragma: no cover - depends on the clearn branch being merged
        raise ImportError(
            "estimator='plr' uses cohstats.models.clearn (loss='logistic'), which is not available in this installation"
        ) from exc
    return (
        clearn,
        {"loss": "logistic", "alpha": 0.0},
        None,
        "L2-penalised linear logistic regression, clearn(loss='logistic', alpha=0)",
    )


ESTIMATORS = {"svm": svm_bracketing, "plr": plr}


def _resolve(estimator):
    if estimator is None:
        estimator = "svm"
    if isinstance(estimator, str):
        if estimator not in ESTIMATORS:
            raise ValueError(
                f"estimator must be one of {sorted(ESTIMATORS)} or a tuple "
                f"(fit_fn, fit_args, prob_args, description); got {estimator!r}"
            )
        return ESTIMATORS[estimator]()
    if not (isinstance(estimator, tuple) and len(estimator) == 4 and callable(estimator[0])):
        raise TypeError("estimator must be a name or a tuple (fit_fn, fit_args, prob_args, description)")
    return estimator


def one_replication(
    example: int, seed: int, estimator, grid, D: int, n_jobs=None, n_total: int = 1000, n_train: int = 100
) -> pd.DataFrame:
    """All criteria along ``grid`` for one simulated data set of [WSL] Example 1 or 2.

    ``estimator`` is ``(fit_fn, fit_args, prob_args, description)``; ``fit_args`` may be a
    function of the training design (e.g. a kernel width computed on the training split).
    Returns one row per grid value with columns ``lambda``, ``true_gkl_c``, ``test_cre``,
    ``gkl_hat``, ``egkl``, ``cov_term``, ``d_hat``, ``cv_cre``, ``cv_se``.
    """
    from cohstats.datasets import make_wsl1, make_wsl2
    from cohstats.formula import build_design
    from cohstats.metrics import cre, gkl_c
    from cohstats.tuning import tune

    fit_fn, fit_args, prob_args, _ = estimator
    make = {1: make_wsl1, 2: make_wsl2}[example]
    df, p = make(n_total, random_state=seed, return_prob=True)
    idx = np.random.default_rng(seed).permutation(n_total)
    tr, te = idx[:n_train], idx[n_train:]
    design = build_design("y ~ x1 + x2", df.iloc[tr].reset_index(drop=True))
    fa = fit_args(design) if callable(fit_args) else dict(fit_args)
    pa = prob_args or {}
    common = dict(grid={"lambda_": grid}, random_state=seed, n_jobs=n_jobs, verbose=False, prob_args=prob_args)
    tg = tune(fit_fn, design, method="gkl", D=D, **common, **fa)
    tc = tune(fit_fn, design, method="cv", measure="cre", **common, **fa)
    g, c = tg.to_frame(), tc.to_frame()
    lamcol = "lambda" if "lambda" in g.columns else "lambda_"
    lam = g[lamcol].to_numpy(dtype=float)
    Xte = design.new_X(df.iloc[te])
    yte = design.code_y(df["y"].iloc[te])
    if lamcol == "lambda":  # a path fit: one fit holds the whole grid
        P = np.asarray(tg.fits[0]._proba_path(Xte, **pa))
    else:
        P = np.stack([np.asarray(f._proba(Xte, **pa)) for f in tg.fits])
    return pd.DataFrame(
        {
            "example": example,
            "seed": seed,
            "lambda": lam,
            "true_gkl_c": [gkl_c(p[te], P[j]) for j in range(lam.size)],
            "test_cre": [cre(yte, P[j]) for j in range(lam.size)],
            "gkl_hat": g["score"].to_numpy(),
            "egkl": g["egkl"].to_numpy(),
            "cov_term": g["cov_term"].to_numpy(),
            "d_hat": g["d_hat"].to_numpy(),
            "cv_cre": c["score"].to_numpy(),
            "cv_se": c["se"].to_numpy(),
        }
    )


def selection_table(curves: pd.DataFrame) -> pd.DataFrame:
    """True GKL_c of the lambda each criterion selects (ties: larger lambda), per example."""
    rows = []
    for (ex, seed), g in curves.groupby(["example", "seed"], sort=True):
        g = g.sort_values("lambda", ascending=False)
        truth = g["true_gkl_c"].to_numpy()
        for crit in ("gkl_hat", "cv_cre", "egkl", "test_cre", "true_gkl_c"):
            v = g[crit].to_numpy()
            j = int(np.flatnonzero(v == np.nanmin(v))[0])  # first = largest lambda
            rows.append(
                {
                    "example": ex,
                    "seed": seed,
                    "criterion": crit,
                    "lambda": g["lambda"].iloc[j],
                    "true_gkl_c": truth[j],
                    "excess": truth[j] - truth.min(),
                }
            )
    sel = pd.DataFrame(rows)
    out = (
        sel.groupby(["example", "criterion"], sort=False)
        .agg(
            mean_true_gkl_c=("true_gkl_c", "mean"),
            se=("true_gkl_c", lambda s: s.std(ddof=1) / np.sqrt(len(s)) if len(s) > 1 else np.nan),
            mean_excess=("excess", "mean"),
            median_lambda=("lambda", "median"),
        )
        .reset_index()
    )
    return out


def tracking_table(curves: pd.DataFrame) -> pd.DataFrame:
    """How closely each curve follows the true GKL_c along the grid (per example)."""
    rows = []
    for ex, g in curves.groupby("example", sort=True):
        t = g["true_gkl_c"].to_numpy()
        for crit in ("gkl_hat", "cv_cre", "egkl", "test_cre"):
            v = g[crit].to_numpy()
            ok = np.isfinite(v)
            rows.append(
                {
                    "example": ex,
                    "criterion": crit,
                    "mean |criterion - true|": float(np.mean(np.abs(v[ok] - t[ok]))),
                    "mean (criterion - true)": float(np.mean(v[ok] - t[ok])),
                    "corr across grid": float(
                        np.mean(
                            [
                                np.corrcoef(gg[crit], gg["true_gkl_c"])[0, 1]
                                for _, gg in g.groupby("seed")
                                if np.all(np.isfinite(gg[crit]))
                            ]
                        )
                    ),
                }
            )
    return pd.DataFrame(rows)


def _figure(curves: pd.DataFrame, example: int):
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    g = curves[curves["example"] == example]
    m = g.groupby("lambda", sort=True).mean(numeric_only=True)
    x = np.log10(m.index.to_numpy())
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    ax.plot(x, m["true_gkl_c"], "k-", lw=2.2, label="true GKL_c (test, p known)")
    ax.plot(x, m["test_cre"], "k:", lw=1.2, label="test cross-entropy")
    ax.plot(x, m["gkl_hat"], "o-", color="tab:red", ms=3, label="GKL_c estimate (training only)")
    ax.plot(x, m["cv_cre"], "s-", color="tab:blue", ms=3, label="10-fold CV cross-entropy")
    ax.plot(x, m["egkl"], "--", color="grey", label="training cross-entropy (EGKL)")
    ax.set_xlabel("log10(lambda)")
    ax.set_ylabel("comparative GKL / cross-entropy")
    ax.set_title(f"[WSL] Example {example}: mean over {g['seed'].nunique()} replications")
    lo = np.nanmin(m[["true_gkl_c", "gkl_hat", "egkl"]].to_numpy())
    hi = np.nanmax(m["true_gkl_c"].to_numpy())
    ax.set_ylim(lo - 0.05, hi + 0.1)
    ax.legend(fontsize="small")
    fig.tight_layout()
    return fig


def run(
    reps: int = DEFAULT_REPS,
    out="vignette_reports/gkl_tracking",
    seed: int = 0,
    n_jobs: int | None = None,
    quick: bool = True,
    estimator=None,
    D: int | None = None,
) -> Path:
    """Write the GKL-tracking report into ``out`` and return its path.

    Parameters
    ----------
    reps : replications per example (the paper uses 100).
    out : output directory.
    seed : base seed; replication ``r`` uses ``seed + r`` for data, split, folds and perturbations.
    n_jobs : joblib workers for the perturbation refits and CV folds.
    quick : every sixth value of the 61-point [WSL] grid (11 values) instead of all 61.
    estimator : ``"svm"`` (default: :func:`svm_bracketing`), ``"plr"`` (:func:`plr`) or a tuple
        ``(fit_fn, fit_args, prob_args, description)``.
    D : Monte Carlo size of the GKL estimate (default ``floor(sqrt(100)) = 10``, as [WSL]).

    Examples
    --------
    >>> run(1, "reports/gkl_tracking")                       # doctest: +SKIP
    """
    from cohstats.tuning import wsl_grid

    from .report import Report

    if not isinstance(reps, (int, np.integer)) or reps < 1:
        raise ValueError(f"reps must be a positive integer; got {reps!r}")
    est = _resolve(estimator)
    grid = wsl_grid()[::6] if quick else wsl_grid()
    D = 10 if D is None else int(D)
    rep = Report(TITLE, out, name="gkl_tracking")
    rep.settings(
        {
            "replications per example": reps,
            "seed": seed,
            "estimator": est[3],
            "grid": f"[WSL] 61-point grid{', every sixth value' if quick else ''}: {grid.size} values in [1e-3, 1e3]",
            "GKL estimate": f"tau = 0.5, D = {D} ({D * D} refits per lambda), common random numbers",
            "data": "n = 1000 per replication: 100 training, 900 test points",
        }
    )
    rep.text(__doc__.split("\n\n", 1)[1].rsplit("\n\nThe estimator", 1)[0])
    frames = []
    for example in (1, 2):
        with rep.timed(f"Example {example}"):
            for r in range(reps):
                frames.append(one_replication(example, seed + r, est, grid, D, n_jobs=n_jobs))
    curves = pd.concat(frames, ignore_index=True)
    for example in (1, 2):
        rep.section(f"[WSL] Example {example}")
        rep.figure(
            _figure(curves, example),
            f"example{example}",
            "Criteria along the penalty grid, averaged over replications. The GKL estimate "
            "uses only the training data; the true GKL_c uses the known probability.",
        )
        m = (
            curves[curves.example == example]
            .groupby("lambda", sort=False)
            .mean(numeric_only=True)
            .drop(columns=["example", "seed"])
            .reset_index()
        )
        rep.table(m.iloc[:: max(1, len(m) // 12)], caption="Mean curves (every few grid values).")
    rep.section("Selection")
    rep.table(
        selection_table(curves),
        caption="True GKL_c of the model selected by each criterion "
        "(mean over replications, its standard error, and the mean excess over the oracle).",
    )
    rep.table(
        tracking_table(curves),
        caption="Distance from the true GKL_c along the grid "
        "(mean absolute and mean signed difference; mean correlation across the grid).",
    )
    track = tracking_table(curves).set_index(["example", "criterion"])
    sel = selection_table(curves).set_index(["example", "criterion"])
    lines = []
    for ex in (1, 2):
        lines.append(
            f"Example {ex}: along the grid the GKL estimate is on average "
            f"{track.loc[(ex, 'gkl_hat'), 'mean (criterion - true)']:+.4f} from the true GKL_c "
            f"(training cross-entropy: {track.loc[(ex, 'egkl'), 'mean (criterion - true)']:+.4f}; "
            f"CV cross-entropy: {track.loc[(ex, 'cv_cre'), 'mean (criterion - true)']:+.4f}); the lambda it "
            f"selects has true GKL_c {sel.loc[(ex, 'gkl_hat'), 'mean_true_gkl_c']:.4f}, "
            f"{sel.loc[(ex, 'gkl_hat'), 'mean_excess']:.4f} above the oracle's "
            f"(CV: {sel.loc[(ex, 'cv_cre'), 'mean_excess']:.4f})."
        )
    rep.text(
        "Reading (computed from the tables above). " + " ".join(lines) + " The training "
        "cross-entropy is optimistic by construction; eq. (9) adds the covariance penalty and the "
        "input correction, estimated from the training data alone."
    )
    return rep.write()


def main(argv=None):
    """Command line: ``python -m cohstats.vignettes.gkl_tracking --reps N --out DIR``."""
    from .runner import vignette_main

    return vignette_main(run, argv, "gkl_tracking", default_reps=DEFAULT_REPS)


if __name__ == "__main__":
    main()
