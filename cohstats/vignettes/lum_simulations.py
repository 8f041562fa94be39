"""[LZW] Liu, Zhang & Wu (2011), *Hard or soft classification? Large-margin unified machines*.

Reproduces Section 5 and the real-data example:

* Examples 5.1 and 5.2: test classification error of linear LUMs for every
  ``a in {1, 5, 10, 100, 1000}``, ``c in {0, 1, 5, 10, 100, 1000, 10000}`` and the tuned LUM
  (figures), and Tables 1-2: MAE of the LUM and refitted-LUM probabilities beside the paper's,
  with Table 2's "Best" row (per replication and ``a``, the ``c`` of the grid with the smallest
  validation error, ties to the softer ``c``), and the calibration of the LUM and refitted-LUM
  probabilities (``a = 1000``, every ``c``) and of PLR on the test sets.
* Examples 5.3 (signal strength ``s``), 5.4 and 5.5 (dimension ``d``): classification-error
  figures of the soft-to-hard transition (the paper gives these only as figures).
* Real data: BUPA liver disorders (10 random three-way splits; tuned LUM with ``a = 1000``
  against the paper's 0.3470). The paper's lung-cancer data (Liu et al. 2008) are not
  available offline; Khan et al.'s SRBCT gene expression (EWS versus the other tumours,
  200 most variable genes) stands in as the high-dimensional, low-sample-size case.

Protocol per replication ([LZW] Section 5): training 100, validation 100 (``lambda`` chosen by
validation error over 25 values ``10^2 .. 10^-4``; see ``ties`` below), test ``n_test``
(paper: 100,000); the whole data set is regenerated in every replication. Linear LUMs on the
raw features (``standardize=False``: the paper's objective). Refitted LUM on the training
sample as in the paper; the refit on the validation sample is shown as an extra column. PLR:
ridge-penalised logistic regression on the same grid, chosen the same way.

Validation ties (``ties=``). With 100 validation points several ``lambda`` often tie; ties go
to the larger ``lambda`` by default, the rule under which the paper's Table 2 (Example 5.2, the
paper's own generator) is reproduced; ``ties="smaller"`` gives the other rule. On Example 5.1
ties to the larger ``lambda`` can send a fit to the top of the grid, ``lambda = 100``, where the
LUM is nearly constant and ``p-hat`` is about 1/2; each report counts the fits that chose it.

Example 5.1's mixture parameters are missing from the paper; ``make_lum51`` reconstructs a
mixture with the published Bayes error, so the report compares that example with [LZW]
Table 1 only in its pattern (and the fidelity table marks its cells as stand-ins).

The report (``lum_simulations.md`` in ``out``, with ``lum_replications.csv``: one row per
replication, setting, ``a`` and ``c``) sets ours beside the paper's tables and figures; every
compared cell goes to ``lum_simulations_comparisons.csv``, and the fidelity table
(:mod:`cohstats.vignettes.fidelity`) gives the measured cause of each cell that stays outside
two standard errors of the paper (``fidelity_notes.json``; the measurements are in
``vignettes/results/lzw/``).

``python -m cohstats.vignettes lum_simulations --reps 20`` or ``python vignettes/lum_simulations.py``.
"""

from __future__ import annotations

import math
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

TITLE = "[LZW] Large-margin unified machines: soft versus hard classification"
DEFAULT_REPS = 2
FULL_REPS = 1000

A_VALUES = (1.0, 5.0, 10.0, 100.0, 1000.0)
C_VALUES = (0.0, 1.0, 5.0, 10.0, 100.0, 1000.0, 10000.0)
TUNED_A = 1000.0
_EXAMPLE_ID = {"5.1": 51, "5.2": 52, "5.3": 53, "5.4": 54, "5.5": 55, "bupa": 91, "khan2": 92}


# ============================================================================ one replication
def _xy(df):
    X = np.ascontiguousarray(df.drop(columns="y").to_numpy(dtype=np.float64))
    y = np.where(df["y"].to_numpy() > 0, 1.0, -1.0)
    return X, y


def _generator(example, setting):
    from cohstats import datasets as ds

    if example == "5.1":
        return lambda n, rs: ds.make_lum51(n, random_state=rs, basis=True, return_prob=True)
    if example == "5.2":
        return lambda n, rs: ds.make_lum52(n, random_state=rs, return_prob=True)
    if example == "5.3":
        return lambda n, rs: ds.make_lum53(n, random_state=rs, s=setting, return_prob=True)
    if example == "5.4":
        return lambda n, rs: ds.make_lum54(n, random_state=rs, d=int(setting), return_prob=True)
    if example == "5.5":
        return lambda n, rs: ds.make_lum55(n, random_state=rs, d=int(setting), return_prob=True)
    raise ValueError(f"unknown example {example!r}")


def _select(err, ties="larger"):
    """Index of the smallest validation error on a grid of decreasing ``lambda``; ties go to
    the larger ``lambda`` (the first index) or to the smaller one (the last)."""
    err = np.asarray(err, dtype=float)
    at = np.flatnonzero(err <= np.nanmin(err) + 1e-12)
    return int(at[0] if ties == "larger" else at[-1])


def _fit_grid(Xtr, ytr, Xva, yva, Xte, yte, pte, a_values, c_values, lambdas, ties="larger"):
    """Every (a, c) LUM, the tuned LUM per a and PLR on one data split; one row each."""
    from cohstats.exceptions import ConvergenceWarning
    from cohstats.losses.scalar import LOSS_LOGIT
    from cohstats.models.lum import lum, lum_link, lum_refit
    from cohstats.solvers.cd.path import cd_path

    from .calibration_report import calibration_record

    rows, calib = [], []
    have_p = pte is not None
    for a in a_values:
        per_c = {}
        for c in c_values:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                fit = lum(Xtr, ytr, a=a, c=c, lambda_=lambdas, standardize=False)
                k = _select(np.mean((fit._decision_path(Xva) > 0) != (yva[None] > 0), axis=1), ties)
                lam = float(lambdas[k])
                fit.s = lam
                f_te = fit._decision(Xte)
                row = dict(
                    a=a,
                    c=c,
                    lambda_=lam,
                    converged=bool(fit._info_converged[k]),
                    val_error=float(np.mean((fit._decision(Xva) > 0) != (yva > 0))),
                    test_error=float(np.mean((f_te > 0) != (yte > 0))),
                )
                if have_p:
                    r_tr = fit.refit(lam, warn=False)
                    r_va = lum_refit(fit._decision(Xva), yva, a, warn=False)
                    p_lum = lum_link(f_te, a, c)
                    p_ref = lum_link(r_tr["g0"] + r_tr["g1"] * f_te, a, 0.0)
                    if a == TUNED_A:  # calibration records (a = 1000, every c)
                        calib.append(
                            calibration_record({"_calib": True, "estimator": "LUM", "c": f"{c:g}"}, p_lum, yte)
                        )
                        calib.append(
                            calibration_record({"_calib": True, "estimator": "refitted LUM", "c": f"{c:g}"}, p_ref, yte)
                        )
                    row.update(
                        mae_lum=float(np.mean(np.abs(p_lum - pte))),
                        mae_refit=float(np.mean(np.abs(p_ref - pte))),
                        mae_refit_val=float(np.mean(np.abs(lum_link(r_va["g0"] + r_va["g1"] * f_te, a, 0.0) - pte))),
                        refit_separable=bool(r_tr["separable"]),
                    )
            rows.append(row)
            per_c[c] = row
        if 0.0 in per_c and 10000.0 in per_c:  # tuned LUM for this a
            soft, hard = per_c[0.0], per_c[10000.0]
            win = soft if soft["val_error"] <= hard["val_error"] else hard  # ties: soft
            t = dict(win, c="tuned", c_selected=win["c"])
            rows.append(t)
        if len(per_c) > 1:  # [LZW] Table 2's "Best" row
            best = min(per_c.values(), key=lambda r: (r["val_error"], r["c"]))  # ties: softer c
            rows.append(dict(best, c="best", c_selected=best["c"]))
    # PLR comparator: ridge logistic regression by the same engine, same grid and selection
    b0, B, _info = cd_path(Xtr, ytr, None, LOSS_LOGIT, 0.0, 0.0, lambdas, 0.0, standardize=False, warn=False)
    k = _select(np.mean(((Xva @ B.T + b0) > 0) != (yva[:, None] > 0), axis=0), ties)
    f_te = Xte @ B[k] + b0[k]
    row = dict(
        a=np.nan,
        c="PLR",
        lambda_=float(lambdas[k]),
        val_error=float(np.mean(((Xva @ B[k] + b0[k]) > 0) != (yva > 0))),
        test_error=float(np.mean((f_te > 0) != (yte > 0))),
    )
    if have_p:
        p_plr = 0.5 * (1.0 + np.tanh(0.5 * f_te))  # expit without overflow
        row["mae_lum"] = float(np.mean(np.abs(p_plr - pte)))
        calib.append(calibration_record({"_calib": True, "estimator": "PLR", "c": ""}, p_plr, yte))
    rows.append(row)
    return rows + calib


def _sim_rep(example, setting, rep, seed, a_values, c_values, n_train, n_val, n_test, ties="larger"):
    from cohstats.models.lum import LUM_LAMBDA_GRID

    gen = _generator(example, setting)
    ss = np.random.SeedSequence([seed, _EXAMPLE_ID[example], int(1000 * float(setting)), rep])
    s_tr, s_va, s_te = ss.spawn(3)
    dtr, _ = gen(n_train, np.random.default_rng(s_tr))
    dva, _ = gen(n_val, np.random.default_rng(s_va))
    dte, pte = gen(n_test, np.random.default_rng(s_te))
    Xtr, ytr = _xy(dtr)
    Xva, yva = _xy(dva)
    Xte, yte = _xy(dte)
    rows = _fit_grid(
        Xtr, ytr, Xva, yva, Xte, yte, np.asarray(pte, dtype=np.float64), a_values, c_values, LUM_LAMBDA_GRID, ties
    )
    for r in rows:
        r.update(example=example, setting=setting, rep=rep)
        if "_calib" not in r:
            r["bayes_error"] = float(np.mean((pte > 0.5) != (yte > 0)))
    return rows


def _real_rep(name, rep, seed, a_values, c_values, ties="larger"):
    """One random three-way split (equal thirds) of a real data set."""
    from cohstats.models.lum import LUM_LAMBDA_GRID

    df = _real_data(name)
    X, y = _xy(df)
    rng = np.random.default_rng([seed, _EXAMPLE_ID[name], rep])
    idx = rng.permutation(len(y))
    t1, t2 = len(y) // 3, 2 * len(y) // 3
    tr, va, te = idx[:t1], idx[t1:t2], idx[t2:]
    # standardise with the training part's means and standard deviations
    mu, sd = X[tr].mean(0), X[tr].std(0)
    sd[sd == 0] = 1.0
    Z = (X - mu) / sd
    rows = _fit_grid(Z[tr], y[tr], Z[va], y[va], Z[te], y[te], None, a_values, c_values, LUM_LAMBDA_GRID, ties)
    for r in rows:
        r.update(example=name, setting=0, rep=rep)
    return rows


_REAL_CACHE: dict = {}


def _real_data(name):
    if name not in _REAL_CACHE:
        from cohstats.datasets import load

        if name == "bupa":
            df = load("bupa")
        elif name == "khan2":
            df = load("khan2")
            feats = df.drop(columns="y")
            # the 200 genes with the largest variance (unsupervised, as [LZW] for lung cancer)
            keep = feats.var().sort_values(ascending=False).index[:200]
            df = pd.concat([feats[keep], df["y"]], axis=1)
        else:
            raise ValueError(name)
        _REAL_CACHE[name] = df
    return _REAL_CACHE[name]


# ============================================================================ driver
def _parallel(tasks, n_jobs, desc):
    from joblib import Parallel, delayed

    try:
        from tqdm.auto import tqdm
        import sys

        it = tqdm(tasks, desc=desc, disable=not sys.stderr.isatty())
    except ImportError:  # pragma: no cover
        it = tasks
    if n_jobs in (None, 1):
        out = [f(*args) for f, args in it]
    else:
        out = Parallel(n_jobs=n_jobs)(delayed(f)(*args) for f, args in it)
    return [r for rows in out for r in rows]


def simulate(
    reps: int,
    seed: int = 0,
    n_jobs: int | None = None,
    quick: bool = True,
    examples=("5.1", "5.2", "5.3", "5.4", "5.5"),
    real=("bupa", "khan2"),
    n_test: int | None = None,
    ties: str = "larger",
) -> pd.DataFrame:
    """All replications as one long DataFrame (one row per replication, setting, a, c).

    ``ties``: where validation-error ties in ``lambda`` go (``"larger"`` or ``"smaller"``)."""
    if ties not in ("larger", "smaller"):
        raise ValueError(f"ties must be 'larger' or 'smaller'; got {ties!r}")
    n_test = (10_000 if quick else 100_000) if n_test is None else int(n_test)
    settings = {
        "5.1": [0],
        "5.2": [0],
        "5.3": [0.2, 1.5] if quick else [0.2, 0.6, 0.7, 1.5],
        "5.4": [10, 400] if quick else [10, 50, 100, 200, 400],
        "5.5": [15, 400] if quick else [15, 50, 100, 200, 400],
    }
    tasks = []
    for ex in examples:
        # Examples 5.3-5.5 are figure-only; quick mode thins a (the paper: "effects of a ... small")
        a_vals = A_VALUES if (ex in ("5.1", "5.2") or not quick) else (1.0, 1000.0)
        for st in settings[ex]:
            for r in range(reps):
                tasks.append((_sim_rep, (ex, st, r, seed, a_vals, C_VALUES, 100, 100, n_test, ties)))
    for name in real:
        for r in range(10 if not quick else min(10, max(reps, 3))):
            tasks.append((_real_rep, (name, r, seed, A_VALUES, C_VALUES, ties)))
    out = _parallel(tasks, n_jobs, "LUM replications")
    res = pd.DataFrame([r for r in out if "_calib" not in r])
    # calibration records (per-bin sums of the test probabilities; see calibration_report)
    res.attrs["calibration"] = [r for r in out if "_calib" in r]
    return res


def _mean_se(x):
    x = np.asarray(x, dtype=float)
    x = x[np.isfinite(x)]
    if x.size == 0:
        return np.nan, np.nan
    return float(x.mean()), float(x.std(ddof=1) / math.sqrt(x.size)) if x.size > 1 else np.nan


def error_table(res: pd.DataFrame, example, setting=0) -> pd.DataFrame:
    """Mean (SE) test error by a (rows) and c (columns, plus Tuned and PLR)."""
    d = res[(res.example == example) & (res.setting == setting)]
    out = {}
    for a in sorted(d.a.dropna().unique()):
        row = {}
        for c in list(C_VALUES) + ["tuned"]:
            m, se = _mean_se(d[(d.a == a) & (d.c == c)].test_error)
            row[_clabel(c)] = _fmt(m, se)
        out[f"a = {a:g}"] = row
    m, se = _mean_se(d[d.c == "PLR"].test_error)
    out["PLR"] = {_clabel(0.0): _fmt(m, se)}
    return pd.DataFrame(out).T


def _clabel(c):
    return "Tuned" if c == "tuned" else f"c = {c:g}"


def _fmt(m, se):
    if not np.isfinite(m):
        return ""
    return f"{m:.4f} ({se:.4f})" if np.isfinite(se) else f"{m:.4f}"


def mae_table(res: pd.DataFrame, example: str, paper: pd.DataFrame | None) -> pd.DataFrame:
    """Tables 1-2: MAE of LUM and refitted LUM by (c, a), ours with SE and replications beside
    the paper's."""
    d = res[(res.example == example) & res.c.isin(C_VALUES)]
    dbest = res[(res.example == example) & (res.c == "best")]
    rows = []
    for est, col in (
        ("LUM", "mae_lum"),
        ("refitted LUM", "mae_refit"),
        ("refitted LUM (validation refit)", "mae_refit_val"),
    ):
        for c in list(C_VALUES) + (["best"] if est == "LUM" else []):
            for a in A_VALUES:
                vals = dbest[(dbest.c == c) & (dbest.a == a)][col] if c == "best" else d[(d.c == c) & (d.a == a)][col]
                m, se = _mean_se(vals)
                ref = np.nan
                if paper is not None and est in ("LUM", "refitted LUM"):
                    clab = "Best" if c == "best" else f"{c:g}"
                    hit = paper[(paper.estimator == est) & (paper.c.astype(str) == clab) & (paper.a.astype(float) == a)]
                    if len(hit):
                        ref = float(hit.mae.iloc[0])
                rows.append(
                    dict(
                        estimator=est,
                        c="Best" if c == "best" else c,
                        a=a,
                        ours=m,
                        se=se,
                        paper=ref,
                        reps=int(np.isfinite(vals.to_numpy(dtype=float)).sum()),
                    )
                )
    return pd.DataFrame(rows)


def _num_key(v) -> str:
    """A grid value as a join key: ``0``, ``0.0`` and ``"0"`` alike; other labels as given."""
    try:
        return f"{float(v):g}"
    except (TypeError, ValueError):
        return str(v)


def _paper_mae_with_se(paper: pd.DataFrame, tv: dict, example: str) -> pd.DataFrame:
    """[LZW] Tables 1-2 with a standard error per cell: the paper prints one SE range per
    estimator and table (e.g. "0.0027-0.0033"); its middle is used for every cell."""
    out = paper.copy()
    se = np.full(len(out), np.nan)
    for est, key in (("LUM", "LUM_MAE_se_range"), ("refitted LUM", "refitted_LUM_MAE_se_range")):
        r = tv.get((example, key))
        if r is not None:
            lo, hi = (float(v) for v in str(r.value).split("-"))
            se[(out.estimator == est).to_numpy()] = 0.5 * (lo + hi)
    out["mae_se"] = se
    return out


def _mae_pattern(t: pd.DataFrame) -> pd.DataFrame:
    """The qualitative content of [LZW] Tables 1-2, ours and the paper's: MAE averaged over a
    at the softest and the hardest c, the c with the smallest mean MAE, and the refitting gain."""
    rows = {}
    t = t[t.c.map(lambda v: not isinstance(v, str))]  # the c grid (no "Best" row)
    for who, col in (("ours", "ours"), ("paper", "paper")):
        row = {}
        for est in ("LUM", "refitted LUM"):
            d = t[t.estimator == est].groupby("c")[col].mean()
            if d.isna().all():
                continue
            row[f"{est}: c = 0"] = d.loc[0.0]
            row[f"{est}: c = 10000"] = d.loc[10000.0]
            row[f"{est}: best c"] = f"{d.idxmin():g}"
        lum = t[t.estimator == "LUM"].set_index(["c", "a"])[col]
        ref = t[t.estimator == "refitted LUM"].set_index(["c", "a"])[col]
        gain = (lum - ref).dropna()
        if len(gain):
            row["refitting lowers the MAE in (cells)"] = f"{int((gain > 0).sum())} of {len(gain)}"
        rows[who] = row
    return pd.DataFrame(rows)


def _mae_wide(t: pd.DataFrame, est: str) -> pd.DataFrame:
    d = t[t.estimator == est]
    wide = {}
    for c in C_VALUES:
        row = {}
        for a in A_VALUES:
            r = d[(d.c == c) & (d.a == a)].iloc[0]
            cell = f"{r.ours:.4f} ({r.se:.4f})" if np.isfinite(r.se) else f"{r.ours:.4f}"
            if np.isfinite(r.paper):
                cell += f" / {r.paper:.4f}"
            row[f"a = {a:g}"] = cell
        wide[f"c = {c:g}"] = row
    return pd.DataFrame(wide).T


def _error_figure(res, example, settings, title):
    import matplotlib.pyplot as plt

    k = len(settings)
    fig, axes = plt.subplots(1, k, figsize=(4.6 * k, 3.8), squeeze=False)
    xs = np.arange(len(C_VALUES) + 1)
    for ax, st in zip(axes[0], settings):
        d = res[(res.example == example) & (res.setting == st)]
        for a in sorted(d.a.dropna().unique()):
            m = [_mean_se(d[(d.a == a) & (d.c == c)].test_error) for c in list(C_VALUES) + ["tuned"]]
            mu = np.array([v[0] for v in m])
            se = np.array([v[1] for v in m])
            ax.errorbar(xs, mu, yerr=np.nan_to_num(se), marker="o", ms=3, capsize=2, lw=1, label=f"a={a:g}")
        plr = _mean_se(d[d.c == "PLR"].test_error)[0]
        if np.isfinite(plr):
            ax.axhline(plr, color="0.4", ls="--", lw=1, label="PLR")
        if "bayes_error" in d and d.bayes_error.notna().any():
            ax.axhline(d.bayes_error.mean(), color="k", ls=":", lw=1, label="Bayes (test)")
        ax.set_xticks(xs)
        ax.set_xticklabels([f"{c:g}" for c in C_VALUES] + ["Tuned"], rotation=45, fontsize=8)
        ax.set_xlabel("c")
        ax.set_ylabel("test error")
        ax.set_title(title if k == 1 else f"{title}: {'s' if example == '5.3' else 'd'} = {st:g}", fontsize=9)
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    return fig


# ============================================================================ report
def run(
    reps: int = DEFAULT_REPS,
    out: Path = Path("lum_report"),
    seed: int = 0,
    n_jobs: int | None = None,
    quick: bool = True,
    examples=("5.1", "5.2", "5.3", "5.4", "5.5"),
    real=("bupa", "khan2"),
    n_test: int | None = None,
    ties: str = "larger",
) -> Path:
    """Run the [LZW] reproduction and write a Markdown report; returns its path.

    Parameters
    ----------
    reps : replications per simulation setting (paper: 1000).
    out : output directory (created).
    seed : master seed; every replication draws from ``SeedSequence([seed, example, setting, rep])``.
    n_jobs : joblib workers over replications (None/1: sequential).
    quick : smaller test sets (10,000 instead of 100,000) and, for the figure-only Examples
        5.3-5.5, ``a in {1, 1000}`` and the two extreme settings each (``s`` 0.2/1.5,
        ``d`` 10 or 15/400); real data: ``max(reps, 3)`` splits instead of 10.
        ``quick=False`` is the full protocol.
    ties : ``"larger"`` or ``"smaller"``: where validation-error ties in ``lambda`` go (the
        module docstring gives the reason for the default).
    """
    from cohstats.datasets import reference
    from cohstats.models.lum import LUM_LAMBDA_GRID
    from cohstats.vignettes.report import Report

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    res = simulate(reps, seed=seed, n_jobs=n_jobs, quick=quick, examples=examples, real=real, n_test=n_test, ties=ties)
    elapsed = time.time() - t0
    calib = res.attrs.pop("calibration", [])
    res.to_csv(out / "lum_replications.csv", index=False)
    text = reference("lzw2011", "text")
    tv = {(str(r.example), r.quantity): r for r in text.itertuples()}

    rep = Report(TITLE, out, name="lum_simulations")
    rep.settings(
        {
            "replications per setting": f"{reps} (paper: 1000)",
            "test set": f"{(10_000 if quick else 100_000) if n_test is None else n_test} (paper: 100,000)",
            "seed": seed,
            "quick": quick,
            "a": list(A_VALUES),
            "c": list(C_VALUES),
            "validation ties in lambda": f"to the {ties} lambda",
        }
    )
    rep.timing("all replications", elapsed)
    rep.text(
        f"Replications: {reps} per setting (paper: 1000); test set "
        f"{(10_000 if quick else 100_000) if n_test is None else n_test} (paper: 100,000); "
        f"seed {seed}; {elapsed / 60:.1f} min. Linear LUMs on the raw features, lambda chosen on "
        f"a validation sample of 100 over {len(LUM_LAMBDA_GRID)} values "
        f"{LUM_LAMBDA_GRID.max():g}..{LUM_LAMBDA_GRID.min():g} (ties to the {ties} lambda); "
        "refitted LUM on the training sample as in the paper (a separate table shows the refit "
        "on the validation sample). Parentheses are standard errors over replications."
    )
    sims = res[res.example.isin(["5.1", "5.2", "5.3", "5.4", "5.5"]) & res.c.map(lambda v: not isinstance(v, str))]
    if len(sims):
        top = np.isclose(sims.lambda_.astype(float), LUM_LAMBDA_GRID.max())
        rep.text(
            f"Fits that chose the largest lambda ({LUM_LAMBDA_GRID.max():g}, where the "
            f"LUM is nearly constant and p-hat is near 1/2): {int(top.sum())} of "
            f"{len(sims)} simulated fits."
        )
    for ex, pname, ref_key in (("5.1", "table1", "5.1"), ("5.2", "table2", "5.2")):
        if ex not in examples:
            continue
        reconstructed = ex == "5.1"
        rep.section(f"Example {ex}")
        if reconstructed:
            rep.text(
                "The mixture parameters of Example 5.1 are missing from the paper's text; "
                "`make_lum51` reconstructs a two-normal mixture with the published Bayes "
                "error (class -1 ~ N(0, I), class +1 ~ half N((m, m), I) + half "
                "N((-m, -m), I)) on the basis (x1, x2, x1^2, x2^2, x1 x2). This example is "
                "therefore compared with the paper only in its pattern (how the error and "
                "the MAE move with c and with refitting), not cell by cell."
            )
        plr_e, plr_m = tv.get((ref_key, "PLR_test_error")), tv.get((ref_key, "PLR_MAE"))
        t_err = error_table(res, ex)
        cap = f"Example {ex}: test error, mean (SE) over {reps} replication(s)."
        if plr_e is not None:
            cap += f" Paper's PLR: {plr_e.value} ({plr_e.se})" + (
                " on the paper's (unknown) mixture." if reconstructed else "."
            )
        rep.table(t_err, index=True, caption=cap)
        rep.figure(
            _error_figure(res, ex, [0], f"Example {ex}"),
            f"ex{ex}_error",
            caption=f"Example {ex}: test error by c and a (Tuned: c in {{0, 10000}} by "
            "validation error); dashed PLR, dotted Bayes error of the test sets",
        )
        paper = reference("lzw2011", pname)
        t_mae = mae_table(res, ex, paper)
        t_mae.to_csv(out / f"lum_ex{ex.replace('.', '')}_mae.csv", index=False)
        pub = _paper_mae_with_se(paper, tv, ref_key)
        ours = (
            t_mae[t_mae.estimator.isin(["LUM", "refitted LUM"])]
            .rename(columns={"ours": "mae"})
            .assign(c=lambda d: d.c.map(_num_key), a=lambda d: d.a.map(_num_key))
        )
        pub = pub.assign(c=pub.c.map(_num_key), a=pub.a.map(_num_key))
        for est in ("LUM", "refitted LUM"):
            tab = rep.compare(
                ours[ours.estimator == est],
                pub[pub.estimator == est],
                on=["estimator", "c", "a"],
                value="mae",
                se="se",
                reps="reps",
                published_se="mae_se",
                published_reps=1000,
                source=f"[LZW] Table {pname[-1]}",
                stand_ins=True if reconstructed else None,
                note="reconstructed mixture: pattern only" if reconstructed else "",
                display=not reconstructed,
                caption=f"[LZW] Table {pname[-1]} (Example {ex}), {est}: MAE ours versus the "
                "paper (published SE: the middle of the range the paper quotes for "
                "the table, over 1000 replications).",
            )
        bst = res[(res.example == ex) & (res.c == "best")]
        if len(bst):
            cnt = bst.c_selected.value_counts().sort_index()
            rep.text(
                f"Example {ex}, the 'Best' row: per replication and a, the c of the grid with "
                "the smallest validation error (ties to the softer c); its LUM MAE is in "
                "the MAE table above"
                + (", beside [LZW] Table 2's row" if ex == "5.2" else " ([LZW] prints the row for Example 5.2 only)")
                + ". c chosen over "
                f"{len(bst)} (replication, a) pairs: " + ", ".join(f"c = {k:g}: {v}" for k, v in cnt.items()) + "."
            )
        rep.table(
            _mae_wide(t_mae, "refitted LUM (validation refit)"),
            index=True,
            caption=f"Example {ex}, refitted LUM with the refit on the validation sample "
            "(not in the paper): MAE ours (SE).",
        )
        rep.table(
            _mae_pattern(t_mae),
            index=True,
            caption=f"Example {ex}: the pattern of [LZW] Table {pname[-1]}, ours beside "
            "the paper's (MAE averaged over a).",
        )
        plr_ours = _mean_se(res[(res.example == ex) & (res.c == "PLR")].mae_lum)
        if plr_m is not None:
            rep.text(
                f"PLR MAE: ours {_fmt(*plr_ours)}, paper {plr_m.value} ({plr_m.se})"
                + (" (reconstructed data)." if reconstructed else ".")
            )
        if plr_m is not None and plr_e is not None:
            dp = res[(res.example == ex) & (res.c == "PLR")]
            ours_p = pd.DataFrame(
                [
                    {
                        "example": ex,
                        "quantity": q,
                        "value": m_,
                        "se": s_,
                        "reps": int(np.isfinite(dp[col].to_numpy(dtype=float)).sum()),
                    }
                    for q, col in (("PLR test error", "test_error"), ("PLR MAE", "mae_lum"))
                    for m_, s_ in [_mean_se(dp[col])]
                ]
            )
            pub_p = pd.DataFrame(
                [
                    {"example": ex, "quantity": "PLR test error", "value": float(plr_e.value), "se": float(plr_e.se)},
                    {"example": ex, "quantity": "PLR MAE", "value": float(plr_m.value), "se": float(plr_m.se)},
                ]
            )
            rep.compare(
                ours_p,
                pub_p,
                on=["example", "quantity"],
                value="value",
                se="se",
                published_se="se",
                reps="reps",
                published_reps=1000,
                source="[LZW] Section 5 (PLR)",
                stand_ins=True if reconstructed else None,
                note="reconstructed mixture" if reconstructed else "",
                caption=f"Example {ex}, PLR (ridge logistic regression, lambda by "
                "validation error as the LUMs): test error and MAE, ours versus "
                "the values [LZW] quotes in the text (1000 replications)"
                + (" -- the reconstructed mixture, not scored." if reconstructed else "."),
            )
        recs = [r for r in calib if r["example"] == ex]
        if recs:
            from .calibration_report import add_calibration

            add_calibration(
                rep,
                recs,
                ["example", "estimator", "c"],
                "example",
                ["estimator", "c"],
                title=f"Example {ex} (a = {TUNED_A:g}; "
                + ("reconstructed mixture" if reconstructed else "the paper's generator")
                + ")",
                name=f"lum_ex{ex.replace('.', '')}",
                lines=["LUM 0", "LUM 10000", "refitted LUM 0", "refitted LUM 10000", "PLR "],
            )
    for ex, settings in (("5.3", None), ("5.4", None), ("5.5", None)):
        if ex not in examples:
            continue
        d = res[res.example == ex]
        sts = sorted(d.setting.unique())
        rep.section(f"Example {ex}")
        rep.figure(
            _error_figure(res, ex, sts, f"Example {ex}"),
            f"ex{ex}_error",
            caption=f"Example {ex}: test error by c and a (figure-only in the paper)",
        )
        tab = {}
        for st in sts:
            dd = d[d.setting == st]
            row = {}
            for c in list(C_VALUES) + ["tuned", "PLR"]:
                sel = dd[(dd.c == c) & ((dd.a == TUNED_A) | (c == "PLR"))]
                row[_clabel(c) if c != "PLR" else "PLR"] = _fmt(*_mean_se(sel.test_error))
            row["Bayes (test)"] = f"{dd.bayes_error.mean():.4f}"
            tab[f"{'s' if ex == '5.3' else 'd'} = {st:g}"] = row
        rep.table(pd.DataFrame(tab).T, index=True, caption=f"Example {ex}: test error with a = 1000")
    for name in real:
        d = res[res.example == name]
        if d.empty:
            continue
        label = {
            "bupa": "Liver disorders (BUPA)",
            "khan2": "Khan SRBCT (EWS vs rest, 200 genes) [lung-cancer stand-in]",
        }[name]
        rep.section(label)
        rep.table(
            error_table(res, name),
            index=True,
            caption=f"{label}: test error over {d.rep.nunique()} random thirds, mean (SE)",
        )
        tuned = _mean_se(d[(d.c == "tuned") & (d.a == TUNED_A)].test_error)
        key = "liver_tuned_LUM_test_error_a1000" if name == "bupa" else "lung_tuned_LUM_test_error_a1000"
        paper = tv.get(("real", key))
        won = d[(d.c == "tuned") & (d.a == TUNED_A)].c_selected.value_counts().to_dict()
        if name == "khan2":
            rep.text(
                f"Tuned LUM (a = 1000): ours {_fmt(*tuned)} on the stand-in data, not "
                "compared with the paper's lung-cancer value. c chosen: "
                f"{', '.join(f'{k:g}: {v}' for k, v in won.items())}."
            )
        else:
            rep.text(
                f"Tuned LUM (a = 1000): ours {_fmt(*tuned)}. c chosen: "
                f"{', '.join(f'{k:g}: {v}' for k, v in won.items())}."
            )
        if paper is not None:
            ours_t = pd.DataFrame(
                {
                    "data": [label],
                    "quantity": ["tuned LUM test error, a = 1000"],
                    "error": [tuned[0]],
                    "se": [tuned[1]],
                    "reps": [int(d[(d.c == "tuned") & (d.a == TUNED_A)].rep.nunique())],
                }
            )
            pub_t = pd.DataFrame(
                {
                    "data": ["Liver disorders (BUPA)" if name == "bupa" else "lung cancer"],
                    "quantity": ["tuned LUM test error, a = 1000"],
                    "error": [float(paper.value)],
                }
            )
            rep.compare(
                ours_t,
                pub_t,
                on=["data", "quantity"],
                value="error",
                se="se",
                reps="reps",
                source="[LZW] Section 6",
                stand_ins={"lung cancer": label} if name == "khan2" else None,
                display=name != "khan2",
                caption=f"{label}: tuned LUM against the paper's (the paper: 10 splits, no SE; z uses ours).",
            )
    return rep.write()


def main(argv=None):
    """Command line: ``--reps N --out DIR [--seed S] [--n-jobs J] [--full]``."""
    from cohstats.vignettes.runner import vignette_main

    return vignette_main(run, argv, "lum_simulations", default_reps=DEFAULT_REPS)


if __name__ == "__main__":  # pragma: no cover
    main()
