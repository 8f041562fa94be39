"""Run the tutorial's code and write what the page shows: figures, printed results and the numbers
quoted in its prose (reStructuredText substitutions), so that nothing on the page is typed by hand.

``docs/conf.py`` runs :func:`build` at the start of every documentation build; the output goes to
``docs/_generated/tutorial`` (not under version control). Each ``# --- name`` block below is also
shown on the page (``literalinclude`` with ``start-after`` / ``end-before``), so the code on the
page is the code that ran.
"""

from __future__ import annotations

from pathlib import Path


def _fmt(v, digits: int = 3) -> str:
    if isinstance(v, str):
        return v
    if isinstance(v, (int,)) or float(v).is_integer() and abs(v) >= 1:
        return f"{int(v)}"
    return f"{float(v):.{digits}g}"


def build(out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out.mkdir(parents=True, exist_ok=True)
    values: dict = {}
    texts: dict = {}

    def save(ax, name):
        ax.figure.savefig(out / f"{name}.png", dpi=110, bbox_inches="tight")
        plt.close(ax.figure)

    # --- data
    import numpy as np
    from sklearn.datasets import load_breast_cancer

    import cohstats as cs

    df = load_breast_cancer(as_frame=True).frame
    df.columns = [c.replace(" ", "_") for c in df.columns]  # names a formula can use
    df["diagnosis"] = np.where(df.pop("target") == 1, "benign", "malignant")
    rng = np.random.default_rng(0)
    is_test = rng.random(len(df)) < 1 / 3
    train, test = df[~is_test], df[is_test]
    # --- end data
    values.update(
        bc_n=len(df),
        bc_p=df.shape[1] - 1,
        bc_ntrain=len(train),
        bc_ntest=len(test),
        bc_malignant=int((df.diagnosis == "malignant").sum()),
    )

    # --- cv
    res = cs.cv(cs.clearn, "diagnosis ~ .", train, nfolds=5, random_state=1, verbose=False)
    print(res.summary())
    # --- end cv
    texts["cv_summary"] = str(res.summary())
    i1 = res.index_1se
    values.update(
        cv_lmin=res.lambda_min,
        cv_l1se=res.lambda_1se,
        cv_nz_min=int(res.nzero[res.index_min]),
        cv_nz_1se=int(res.nzero[i1]),
        cv_dev_1se=res.cvm[i1],
        cv_se_1se=res.cvsd[i1],
    )
    save(res.plot(), "cv")

    # --- coef
    coef = res.coef_at("lambda.1se")  # the coefficients cv.glmnet's coef() gives
    print(coef[coef != 0])
    both = res.coef_at(["lambda.min", "lambda.1se"])  # one column per value of s
    # --- end coef
    texts["coef"] = coef[coef != 0].to_string()
    texts["coef_both"] = both.loc[(both != 0).any(axis=1)].to_string()
    values["coef_n"] = int((coef.drop("(Intercept)") != 0).sum())

    # --- path
    ax = res.fit.plot()  # the largest curves are named at the right edge
    # --- end path
    save(ax, "path")

    # --- summary
    fit = res.fit_1se
    print(fit.summary())
    # --- end summary
    texts["fit_summary"] = str(fit.summary())

    # --- calibration
    cal = cs.calibration(fit, test, bins=5)
    ax = cal.plot()
    # --- end calibration
    texts["calibration"] = str(cal.summary())
    values.update(cal_brier=cal.brier, cal_ece=cal.ece)
    save(ax, "calibration")

    # --- compare
    logit = cs.cv(
        cs.clearn, "diagnosis ~ .", train, loss="logistic", alpha=0.0, nfolds=5, random_state=1, verbose=False
    )
    lumr = cs.cv(cs.lum, "diagnosis ~ .", train, nfolds=5, random_state=1, verbose=False)
    table = cs.compare({"C-learning": fit, "LUM": lumr.fit_1se, "logistic": logit.fit_1se}, test)
    print(table)
    # --- end compare
    texts["compare"] = str(table)
    perf = table.tables["Test performance"]
    mc = table.tables["McNemar tests"]
    values.update(
        cmp_err_clearn=perf.loc["C-learning", "error"],
        cmp_errors_clearn=int(perf.loc["C-learning", "errors"]),
        cmp_err_logit=perf.loc["logistic", "error"],
        cmp_errors_logit=int(perf.loc["logistic", "errors"]),
        cmp_lo_clearn=perf.loc["C-learning", "ci_lower"],
        cmp_hi_clearn=perf.loc["C-learning", "ci_upper"],
        cmp_min_padj=mc["p_adjusted"].min(),
    )

    # --- confint
    boot = fit.confint(B=100, random_state=0)
    print(boot.test_error)
    # --- end confint
    texts["confint"] = str(boot.summary())
    te = boot.test_error
    values.update(boot_err=te["estimate"], boot_lo=te["lower"], boot_hi=te["upper"])

    # --- wine
    import pandas as pd
    from sklearn.datasets import load_wine

    wine = load_wine(as_frame=True).frame
    wine.columns = [c.replace("/", "_") for c in wine.columns]
    wine["cultivar"] = pd.Categorical(np.array(["A", "B", "C"])[wine.pop("target")])
    w_test = np.random.default_rng(2).random(len(wine)) < 1 / 3
    w_train, w_new = wine[~w_test], wine[w_test]
    wres = cs.cv(cs.clearn, "cultivar ~ .", w_train, nfolds=5, random_state=1, verbose=False)
    ax = wres.fit.plot()  # 13 predictors x 3 classes: no legend, the ten largest named
    wcal = cs.calibration(wres.fit_1se, w_new, bins=5)
    # --- end wine
    save(ax, "wine_path")
    save(wcal.plot(), "wine_calibration")
    texts["wine_by_class"] = wcal.by_class.to_string()
    values.update(
        wine_n=len(wine),
        wine_ntrain=len(w_train),
        wine_ntest=len(w_new),
        wine_p=wine.shape[1] - 1,
        wine_curves=len(wres.fit.path().coef_columns),
        wine_err=float(np.mean(wres.predict(w_new).to_numpy() != w_new["cultivar"].to_numpy())),
        wine_brier=wcal.brier,
    )

    lines = [f".. |{k}| replace:: {_fmt(v)}" for k, v in values.items()]
    (out / "values.txt").write_text("\n".join(lines) + "\n")
    for k, v in texts.items():
        (out / f"{k}.txt").write_text(v.rstrip() + "\n")


if __name__ == "__main__":  # pragma: no cover
    build(Path(__file__).resolve().parents[1] / "_generated" / "tutorial")
