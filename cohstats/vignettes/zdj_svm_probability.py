"""[ZDJ] Zhang, Dai & Jordan (2012), section 5.1: class probabilities for SVM outputs.

Tables 2 (test ``GKL_c``) and 3 (test error) on Data 1 and Data 2 (= [WSL] Examples 1 and 2;
100 training / 900 test points) for

* **PLR**: L2-penalised linear logistic regression (``clearn(loss="logistic", alpha=0)``),
  ``lambda`` by the GKL estimate (9.3);
* **Platt** / **Tuned Platt**: Platt's sigmoid on the Gaussian SVM, ``lambda`` by 10-fold CV
  misclassification / by the GKL estimate; Platt's sigmoid is fitted on the training decision
  values ([ZDJ] section 2), Tuned Platt's on 5-fold cross-validated ones (the [WSL] vignette's
  reading, ``tuned_platt="cv"``);
* **WSL**: bracketing with the weighted Gaussian SVM (``m = 10``), exact pi path, ``lambda`` by
  the GKL estimate;
* **Sollich** and **Ours for SVM** (coherence link with ``u = 1``, ``rho`` by the
  training EKL, see below) on the CV-tuned SVM;
* **C-learning**: kernel expansion on the unscaled inputs (``sigma`` = the median distance
  between the classes, as for the SVM), ``rho = u = 1``, ``lambda`` and ``alpha`` by 10-fold CV
  cross-entropy, probabilities by the coherence link.

Penalty grids: [ZDJ] cites PLR, Tuned Platt and WSL from [WSL], so those three follow [WSL]'s
protocol as :mod:`cohstats.vignettes.wsl_probability` reads it (``lambda_convention="e1071"``,
default): [WSL] trained with R's e1071 ``svm(cost=)`` and ``stepPlr``, whose objectives sum the
loss over the observations, so their ``lambda`` is ``n`` times ours (``lambda = lambda_WSL / n``,
i.e. e1071 costs ``C = 1/lambda_WSL`` in ``[1e-3, 1e3]``); ``"spec"`` takes the grid as
``lambda`` itself. [ZDJ] does not state how its own SVM (Platt, Sollich, Ours for SVM) was
tuned; it is tuned here by 10-fold CV misclassification over the same grid
(``svm_convention``, default ``lambda_convention``).

Options of :func:`run` and the reasons for their defaults:

* ``lambda_convention`` (default ``"e1071"``) and ``svm_convention`` (default: the same): how
  the penalty grid is read, as above. Read as ``lambda`` itself (``"spec"``), the grid of the
  CV-tuned SVM stops at ``lambda = 1e-3`` (``C = 10``), and on Data 2 the CV then picks one of
  its two smallest values: the end of the grid, not the data, would set that SVM.
* ``rho_rule`` (default ``"smoothed"``): how Ours for SVM fits ``rho`` on the training
  decision values. With the 0/1 targets of [ZDJ] eq. (13) (``"training"``) the training EKL
  decreases all the way to the lower end ``rho = 1e-3`` of the search whenever no training
  point has ``y f < -1``; the link then returns probabilities of exactly 0 or 1 beyond
  ``|f| > 1`` and GKL_c is infinite. ``"smoothed"`` fits ``rho`` against Platt's smoothed
  targets ``(N_+ + 1)/(N_+ + 2)`` and ``1/(N_- + 2)`` (:func:`coherence_rho_smoothed`), which
  keeps it away from that end. The report shows both rules on the same SVMs.
* ``tuned_platt`` (default ``"cv"``): Tuned Platt is cited from [WSL], so its sigmoid is fitted
  as :mod:`cohstats.vignettes.wsl_probability` reads [WSL], on 5-fold cross-validated decision
  values (libsvm's method, which e1071 uses); ``"training"`` fits it on the training decision
  values, as the Platt column does ([ZDJ] section 2).

C-learning's Gaussian kernel is computed on the unscaled inputs (``standardize=False``), the
inputs its width (the median distance between the classes) is measured on.

Also Figure 2: the fitted ``rho`` per replication (the paper reports ranges
[0.3402, 0.8773] for Data 1 and [0.1077, 1.3166] for Data 2). ``quick=True`` (default): a
13-value penalty grid, ``D = 4``, C-learning ``alpha in {0.1, 0.5, 1}`` with 30 path values;
``--full``: the 61-value grid, ``D = 10``, ``alpha in {0.1, 0.3, 0.5, 0.7, 0.9, 1}``.

The report (``zdj_svm_probability.md`` in ``out``, with ``zdj_svm_probability_raw.csv``, one
row per replication and method) sets ours beside [ZDJ] Tables 2 and 3, draws Figure 2 and the
calibration of every method; an infinite GKL_c marks a degenerate estimate, counted and left out
of the averages. Every compared cell goes to ``zdj_svm_probability_comparisons.csv``; the
fidelity table (:mod:`cohstats.vignettes.fidelity`) gives the measured cause of each cell that
stays outside two standard errors of the paper (``fidelity_notes.json``; the measurements are in
``vignettes/results/zdj/``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

TITLE = "[ZDJ] probabilities for SVM outputs (Tables 2-3, Figure 2)"
DEFAULT_REPS = 2
FULL_REPS = 100


N_TRAIN = 100
# the papers' SVM: weighted at pi = 1/2 on unscaled inputs, Gaussian width by the median
# distance between the classes ([WSL] 5.2)
_SVM = {"pi": 0.5, "gamma": "median", "standardize": False}


def _grid(quick, lambda_convention="e1071", name="lambda_convention"):
    from cohstats.tuning import wsl_grid

    if lambda_convention not in ("e1071", "spec"):
        raise ValueError(f"{name} must be 'e1071' or 'spec'; got {lambda_convention!r}")
    g = 10.0 ** (-3.0 + 0.5 * np.arange(13))[::-1] if quick else wsl_grid()
    return g / N_TRAIN if lambda_convention == "e1071" else g


#: how "Ours for SVM" fits rho on the training decision values (see the module docstring)
RHO_RULES = ("smoothed", "training")
#: which decision values the sigmoid of the Tuned Platt column is fitted on
TUNED_PLATT = ("cv", "training")


def coherence_rho_smoothed(f, y, bounds=(1e-3, 1e2), xtol=1e-8) -> float:
    """``rho`` minimising the training EKL of ``eta~(f; rho, u = 1)`` against Platt's smoothed
    targets ``t_i = (N_+ + 1)/(N_+ + 2)`` (``y_i = +1``) and ``1/(N_- + 2)`` (``y_i = -1``).

    The same bounded Brent search over ``log rho`` as
    :func:`cohstats.probability.coherence_rho`, which uses the 0/1 targets of [ZDJ] eq. (13).
    A target below 1 makes an estimate of exactly 0 or 1 infinitely costly, so ``rho`` cannot
    run to the lower bound when the training outputs are separated (the guard this vignette
    uses by default; Platt 1999 smooths his targets for the same reason).

    Examples
    --------
    >>> import numpy as np
    >>> f = np.array([-3.0, -1.0, -1.0, 1.0, 1.0, 2.5]); y = np.sign(f)
    >>> from cohstats.probability import coherence_rho
    >>> bool(coherence_rho(f, y) <= 1.001e-3 < coherence_rho_smoothed(f, y))
    True
    """
    import math

    from scipy.optimize import minimize_scalar

    from cohstats.losses.binary import coherence_log_link

    f = np.asarray(f, dtype=np.float64)
    y = np.asarray(y)
    npos, nneg = int(np.sum(y > 0)), int(np.sum(y < 0))
    t = np.where(y > 0, (npos + 1.0) / (npos + 2.0), 1.0 / (nneg + 2.0))

    def ekl(log_rho):
        lp, lq = coherence_log_link(f, rho=math.exp(log_rho), u=1.0)
        return -float(np.mean(t * lp + (1.0 - t) * lq))

    lo, hi = math.log(bounds[0]), math.log(bounds[1])
    res = minimize_scalar(ekl, bounds=(lo, hi), method="bounded", options={"xatol": xtol})
    return float(math.exp(min([(res.fun, res.x), (ekl(lo), lo), (ekl(hi), hi)])[1]))


def _rep(data, r, seed, quick, lambda_convention="e1071", svm_convention=None, rho_rule="smoothed", tuned_platt="cv"):
    from cohstats.datasets import make_wsl1, make_wsl2
    from cohstats.formula import build_design
    from cohstats.metrics import error_rate, gkl_c
    from cohstats.models.clearn import clearn
    from cohstats.models.svm import svm
    from cohstats.tuning import tune

    grid = _grid(quick, lambda_convention)
    D = 4 if quick else 10
    gen = make_wsl1 if data == "Data 1" else make_wsl2
    df, p = gen(1000, random_state=seed + 1000 * r, return_prob=True)
    tr, te, pte = df.iloc[:N_TRAIN], df.iloc[N_TRAIN:], p[N_TRAIN:]
    yte = te.y.to_numpy()
    d = build_design("y ~ x1 + x2", tr)
    Xte = te[["x1", "x2"]]
    s0 = seed + 7919 * r
    probs, errs, extra = {}, {}, {}

    # SVM tuned by CV misclassification: Platt, Sollich, Ours for SVM
    cvr = tune(
        svm,
        d,
        grid={"lambda_": _grid(quick, svm_convention or lambda_convention)},
        method="cv",
        measure="class",
        nfolds=10,
        random_state=s0,
        verbose=False,
        m=10,
        **_SVM,
    )
    f = cvr.best_fit
    svm_err = error_rate(yte, np.where(f.predict(Xte, type="link").to_numpy() > 0, 1, -1))
    for name, meth in (("Platt", "platt"), ("Sollich", "sollich")):
        probs[name] = f.predict(Xte, type="prob", method=meth).iloc[:, 1].to_numpy()
    from cohstats.probability import coherence_prob

    fte = f.predict(Xte, type="link").to_numpy()
    rhos = {"training": f.rho_, "smoothed": coherence_rho_smoothed(f.fitted_decision, f.design.y)}
    probs["Ours for SVM"] = coherence_prob(fte, rhos[rho_rule], 1.0)
    other = "training" if rho_rule == "smoothed" else "smoothed"
    # the other rule on the same SVM, reported beside the compared one
    probs[f"Ours for SVM (rho: {other})"] = coherence_prob(fte, rhos[other], 1.0)
    extra["rho"] = rhos[rho_rule]
    extra[f"rho_{other}"] = rhos[other]
    extra["svm_lambda"] = float(f.lambda_[0])
    errs["Ours for SVM"] = errs[f"Ours for SVM (rho: {other})"] = svm_err  # = the SVM's error
    # Tuned Platt is cited from [WSL]: its sigmoid follows the [WSL] vignette's reading
    # (cross-validated decision values by default, the training ones with tuned_platt="training")
    from .wsl_probability import _platt_cv_fn, _test_prob

    tp = tune(
        _platt_cv_fn(svm) if tuned_platt == "cv" else svm,
        d,
        grid={"lambda_": grid},
        method="gkl",
        D=D,
        tau=0.5,
        m=10,
        **_SVM,
        prob_args=None if tuned_platt == "cv" else {"method": "platt"},
        random_state=s0 + 1,
        verbose=False,
    )
    probs["Tuned Platt"] = _test_prob(tp.best_fit, Xte, "platt")
    wsl = tune(
        svm,
        d,
        grid={"lambda_": grid},
        method="gkl",
        D=D,
        tau=0.5,
        m=10,
        **{**_SVM, "pi": "path"},
        prob_args={"method": "bracket"},
        random_state=s0 + 2,
        verbose=False,
    )
    probs["WSL"] = wsl.best_fit.predict(Xte, type="prob").iloc[:, 1].to_numpy()
    # PLR: linear L2-penalised logistic regression, lambda by the GKL estimate
    plr = tune(
        clearn,
        d,
        grid={"lambda_": grid},
        method="gkl",
        D=D,
        tau=0.5,
        loss="logistic",
        alpha=0.0,
        random_state=s0 + 3,
        verbose=False,
    )
    probs["PLR"] = plr.best_fit.predict(Xte, type="prob").iloc[:, 1].to_numpy()
    # C-learning, kernel expansion with the Gaussian of median_between width, CV cross-entropy
    from cohstats.kernels import median_between

    sig = median_between(d.X, d.y)
    alphas = [0.1, 0.5, 1.0] if quick else [0.1, 0.3, 0.5, 0.7, 0.9, 1.0]
    best = None
    for a in alphas:
        from cohstats.tuning import cv

        c = cv(
            clearn,
            d,
            nfolds=10,
            measure="cre",
            random_state=s0 + 4,
            verbose=False,
            kernel="rbf",
            sigma=sig,
            # sigma is the median distance of the unscaled inputs, so the kernel must see them
            # unscaled too (clearn standardises by default)
            standardize=False,
            rho=1.0,
            u=1.0,
            alpha=a,
            nlambda=30 if quick else 50,
        )
        if best is None or c.score < best.score:
            best = c
    probs["C-learning"] = best.predict(Xte, type="prob").iloc[:, 1].to_numpy()
    from .calibration_report import calibration_record

    rows, recs = [], []
    for name, ph in probs.items():
        err = errs.get(name, error_rate(yte, np.where(ph > 0.5, 1, -1)))
        rows.append({"dataset": data, "rep": r, "method": name, "gkl": gkl_c(pte, ph), "cer": err})
        recs.append(calibration_record({"dataset": data, "method": name}, ph, yte))
    return rows, {"dataset": data, "rep": r, **extra}, recs


def run(
    reps: int = DEFAULT_REPS,
    out="vignette_reports/zdj_svm_probability",
    seed: int = 0,
    n_jobs: int | None = None,
    quick: bool = True,
    lambda_convention: str = "e1071",
    svm_convention: str | None = None,
    rho_rule: str = "smoothed",
    tuned_platt: str = "cv",
) -> Path:
    """Run [ZDJ] Tables 2-3 and Figure 2; returns the report path.

    ``lambda_convention``: ``"e1071"`` (default, ``lambda = lambda_WSL / n``) or ``"spec"``
    (the grid read as ``lambda`` itself); see the module docstring.
    ``svm_convention``: the same choice for the grid of the CV-tuned SVM behind Platt, Sollich
    and Ours for SVM (default: ``lambda_convention``; with ``"spec"`` the grid stops at ``lambda = 1e-3``).
    ``rho_rule``: ``"smoothed"`` (default; ``rho`` against Platt's smoothed targets,
    :func:`coherence_rho_smoothed`) or ``"training"`` ([ZDJ] eq. 13 with 0/1 targets,
    ``SVMFit.rho_``). The report shows both; the chosen one is compared with the paper.
    ``tuned_platt``: ``"cv"`` (default; Platt's sigmoid of the Tuned Platt column on 5-fold
    cross-validated decision values, as :mod:`cohstats.vignettes.wsl_probability` reads [WSL])
    or ``"training"`` (on the training decision values).

    Examples
    --------
    >>> import tempfile                                   # doctest: +SKIP
    >>> run(1, tempfile.mkdtemp()).name                   # doctest: +SKIP
    'zdj_svm_probability.md'
    """
    import matplotlib.pyplot as plt
    from joblib import Parallel, delayed

    from cohstats.datasets import reference

    from .report import Report

    grid = _grid(quick, lambda_convention)
    svm_convention = svm_convention or lambda_convention
    svm_grid = _grid(quick, svm_convention, "svm_convention")
    if rho_rule not in RHO_RULES:
        raise ValueError(f"rho_rule must be one of {RHO_RULES}; got {rho_rule!r}")
    if tuned_platt not in TUNED_PLATT:
        raise ValueError(f"tuned_platt must be one of {TUNED_PLATT}; got {tuned_platt!r}")
    other_rule = "training" if rho_rule == "smoothed" else "smoothed"
    alt = f"Ours for SVM (rho: {other_rule})"
    rep = Report(TITLE, out, name="zdj_svm_probability")
    rep.settings(
        {
            "reps": reps,
            "seed": seed,
            "quick": quick,
            "lambda grid": f"{grid.size} values in [{grid.min():g}, {grid.max():g}] "
            f"for PLR, Tuned Platt, WSL (lambda_convention={lambda_convention!r})",
            "lambda grid of the CV-tuned SVM (Platt, Sollich, Ours)": f"{svm_grid.size} values in "
            f"[{svm_grid.min():g}, {svm_grid.max():g}] (svm_convention={svm_convention!r})",
            "rho of Ours for SVM": {
                "smoothed": "training EKL against Platt's smoothed targets",
                "training": "training EKL against the 0/1 labels ([ZDJ] eq. 13)",
            }[rho_rule],
            "GKL estimate D": 4 if quick else 10,
            "kernel": "Gaussian, sigma = median_between",
            "SVM for Platt/Sollich/Ours": "lambda by 10-fold CV misclassification",
            "Platt's sigmoid": "training decision values ([ZDJ] section 2)",
            "Tuned Platt's sigmoid": {
                "cv": "5-fold cross-validated decision values (the [WSL] vignette's reading)",
                "training": "training decision values",
            }[tuned_platt],
        }
    )
    rep.text(
        "Class probabilities from SVM outputs compared on [ZDJ]'s two simulations. 'Ours for "
        "SVM' is the coherence inverse link (u = 1) with rho fitted by minimising the training "
        "EKL; its error is the SVM's. The WSL column of [ZDJ] Table 3 cites [WSL]'s "
        "psi-learning errors; ours is the weighted-SVM bracketing estimator. "
        "With 0/1 targets ([ZDJ] eq. 13), when the CV-tuned SVM fits the training data closely "
        "(no training point with y f < -1) the training EKL decreases all the way to the "
        "lower end rho = 1e-3 of the search and the link returns probabilities 0/1 beyond "
        "|f| > 1 (an infinite GKL_c); Platt's smoothed targets keep rho away from that end. "
        f"The compared rule is '{rho_rule}'; the row '{alt}' gives the other rule on the same "
        "SVMs. Degenerate (infinite) GKL_c values are counted, not averaged."
    )
    with rep.timed("replications"):
        res = Parallel(n_jobs=n_jobs or 1)(
            delayed(_rep)(dname, r, seed, quick, lambda_convention, svm_convention, rho_rule, tuned_platt)
            for dname in ("Data 1", "Data 2")
            for r in range(reps)
        )
    raw = pd.DataFrame([x for rr, _, _ in res for x in rr])
    rhos = pd.DataFrame([e for _, e, _ in res])
    recs = [x for _, _, rc in res for x in rc]
    # an infinite GKL_c marks a degenerate estimate (p_hat in {0, 1} contradicting p);
    # averages are over the non-degenerate replications, whose number is reported
    raw["degenerate"] = (~np.isfinite(raw["gkl"].to_numpy(dtype=float))).astype(int)
    cl = raw.replace([np.inf, -np.inf], np.nan)
    g = cl.groupby(["dataset", "method"], sort=False)
    summ = g[["gkl", "cer"]].mean()
    summ["gkl_se"] = g["gkl"].std(ddof=1) / np.sqrt(g["gkl"].count())
    summ["cer_se"] = g["cer"].std(ddof=1) / np.sqrt(g["cer"].count())
    summ["reps"] = g["cer"].count()
    summ["gkl_reps"] = g["gkl"].count()  # the non-degenerate replications
    summ["degenerate"] = g["degenerate"].sum()
    summ = summ.reset_index()
    summ_alt = summ[summ.method == alt]
    summ = summ[summ.method != alt]
    rep.section("Table 2: test GKL_c")
    rep.compare(
        summ,
        reference("zdj2012", "table2"),
        on=["dataset", "method"],
        value="gkl",
        se="gkl_se",
        published_value="mean",
        published_se="sd_reported",
        reps="gkl_reps",
        published_reps=100,
        source="[ZDJ] Table 2",
        caption="Test GKL_c: ours (non-degenerate replications) versus [ZDJ] Table 2 "
        "(100 replications; the paper's spread is its SE x 10).",
    )
    rep.table(
        pd.concat([summ, summ_alt])[["dataset", "method", "reps", "degenerate"]],
        caption="Replications and degenerate GKL_c estimates per method.",
    )
    rep.table(
        pd.concat([summ[summ.method == "Ours for SVM"], summ_alt])[
            ["dataset", "method", "gkl", "gkl_se", "gkl_reps", "degenerate"]
        ],
        caption=f"Ours for SVM with rho by the compared rule ('{rho_rule}') and by the other "
        f"rule ('{other_rule}') on the same SVMs: mean test GKL_c over the non-degenerate "
        "replications, their number and the degenerate ones. Not compared with the paper.",
        floatfmt=".4g",
    )
    rep.section("Table 3: test error")
    rep.compare(
        summ,
        reference("zdj2012", "table3"),
        on=["dataset", "method"],
        value="cer",
        se="cer_se",
        published_value="mean",
        published_se="sd_reported",
        reps="reps",
        published_reps=100,
        source="[ZDJ] Table 3",
        caption="Test error: ours versus [ZDJ] Table 3 (100 replications).",
    )
    rep.section("Figure 2: fitted rho per replication")
    fig, ax = plt.subplots(figsize=(6, 3.5))
    for dname, mk in (("Data 1", "o"), ("Data 2", "s")):
        sub = rhos[rhos.dataset == dname]
        ax.plot(sub.rep, sub.rho, mk + "-", label=dname)
    ax.set_yscale("log")
    ax.set_xlabel("replication")
    ax.set_ylabel("fitted rho")
    ax.legend()
    rep.figure(fig, "zdj_figure2", f"Fitted rho of the coherence link per replication (rule '{rho_rule}').")
    rng_tab = pd.concat(
        [
            rhos.groupby("dataset")[col].agg(["min", "median", "max"]).reset_index().assign(rule=rule)
            for col, rule in (("rho", rho_rule), (f"rho_{other_rule}", other_rule))
        ]
    )
    rng_tab["paper range"] = rng_tab["dataset"].map({"Data 1": "[0.3402, 0.8773]", "Data 2": "[0.1077, 1.3166]"})
    rep.table(
        rng_tab[["dataset", "rule", "min", "median", "max", "paper range"]],
        caption="Range of the fitted rho over the replications, under both rules.",
    )
    rep.section("Calibration per method")
    rep.text(
        "How well each method's test probabilities match the observed frequencies (not in "
        "the paper). Degenerate estimates are those with non-finite probabilities; "
        "probabilities of exactly 0 or 1 are finite and stay in."
    )
    from .calibration_report import add_calibration

    add_calibration(rep, recs, ["dataset", "method"], "dataset", "method", title="Data 1-2", name="zdj_svm_probability")
    rep.out_dir.mkdir(parents=True, exist_ok=True)
    raw.to_csv(rep.out_dir / "zdj_svm_probability_raw.csv", index=False)
    return rep.write()


def main(argv=None):
    """Command line: ``python -m cohstats.vignettes.zdj_svm_probability --reps N --out DIR``."""
    from .runner import vignette_main

    return vignette_main(run, argv, "zdj_svm_probability", default_reps=DEFAULT_REPS)


if __name__ == "__main__":
    main()
