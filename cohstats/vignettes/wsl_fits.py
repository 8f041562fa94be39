"""Per-replication computations of the [WSL] vignette (:mod:`cohstats.vignettes.wsl_probability`).

[WSL] Wang, Shen & Liu (2008). The classifiers (weighted SVM and psi-learning, linear and
Gaussian), the three probability methods of Tables 1-5 (Platt, Tuned Platt, New), the NN and PLR
comparators, and one replication of each example (Tables 1-2), benchmark data set (Tables 3-4)
and the leukaemia split (Table 5), each returning rows of raw results for the report.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

CLASSIFIERS = {"SVM L": ("svm", "linear"), "SVM G": ("svm", "rbf"), "psi L": ("psi", "linear"), "psi G": ("psi", "rbf")}
BENCH = {"Liver": "bupa", "Mushroom": "mushroom", "Ionosphere": "ionosphere", "Diabetes": "pima"}


def _grid(quick: bool) -> np.ndarray:
    from cohstats.tuning import wsl_grid

    if quick:
        return 10.0 ** (-3.0 + 0.5 * np.arange(13))[::-1]
    return wsl_grid()


def _fit_fn(kind):
    from cohstats.models.svm import psi_learn, svm

    return svm if kind == "svm" else psi_learn


PLATT_OUTPUTS = ("cv", "training")
PLATT_FOLDS = 5


class _PlattCVFit:
    """A fitted classifier with Platt's sigmoid fitted on cross-validated decision values.

    ``fit`` is the classifier fitted to all the training data; the sigmoid ``(A, B)`` comes
    from :func:`cohstats.probability.platt_fit` on the decision values of ``PLATT_FOLDS``
    fold refits at the same cost ``C`` and kernel width (libsvm's
    ``svm_binary_svc_probability``, which R e1071's ``svm(probability = TRUE)`` calls). The
    probabilities at new inputs are the sigmoid of the full-data fit's decision values.
    """

    def __init__(self, fit, sigmoid):
        self.fit, self.sigmoid = fit, sigmoid
        self.lambda_ = fit.lambda_

    def _decision(self, X, s=None):
        return self.fit._decision(X)

    def _proba(self, X, s=None, **kw):
        from cohstats.probability import platt_prob

        p = platt_prob(self.fit._decision(X), self.sigmoid.A, self.sigmoid.B)
        return np.column_stack([1.0 - p, p])

    def prob(self, newdata) -> np.ndarray:
        """Probability of the second class at ``newdata`` (as ``predict(type="link")`` takes it)."""
        from cohstats.probability import platt_prob

        f = np.asarray(self.fit.predict(newdata, type="link"), dtype=float).ravel()
        return platt_prob(f, self.sigmoid.A, self.sigmoid.B)


def _with_cv_sigmoid(fn, design, fit, kw, folds=PLATT_FOLDS):
    """``fit`` (``fn`` on ``design`` with arguments ``kw``) with Platt's sigmoid fitted on
    ``folds``-fold cross-validated decision values: stratified folds (fixed seed), each refit
    with the full fit's cost ``C = 1/(n lambda)`` and, for the Gaussian kernel, its width."""
    from cohstats.probability import platt_fit
    from cohstats.tuning.folds import make_folds

    n = design.nobs
    lam = float(np.ravel(fit.lambda_)[0])
    args = {k: v for k, v in kw.items() if k not in ("lambda_", "C")}
    args["C"] = 1.0 / (n * lam)
    if args.get("kernel") == "rbf":
        args["gamma"] = float(fit.kernel.kpar[0])
    y = np.asarray(design.y, dtype=float)
    fid = make_folds(y, folds, stratified=True, random_state=0)
    f = np.empty(n)
    for k in range(folds):
        held = fid == k
        fk = fn(design.take(~held), **args)
        f[held] = fk._decision(design.X[held])
    return _PlattCVFit(fit, platt_fit(f, y))


def _platt_cv_fn(fn):
    """A fit function: ``fn``'s fit with the cross-validated Platt sigmoid (for the GKL tuning)."""

    def fit_platt_cv(design, **kw):
        return _with_cv_sigmoid(fn, design, fn(design, **kw), kw)

    fit_platt_cv.__name__ = f"{fn.__name__}_platt_cv"
    return fit_platt_cv


def _test_prob(fit, Xte, method):
    """Test probabilities of the second class from a fit (a :class:`_PlattCVFit` or a model fit)."""
    if isinstance(fit, _PlattCVFit):
        return fit.prob(Xte)
    return fit.predict(Xte, type="prob", method=method).iloc[:, 1].to_numpy()


def _methods(
    design, Xte, kind, kernel, grid, D, m, seed, centering="within", initial="knn", platt="cv", random_input="data"
):
    """Test probabilities of Platt, Tuned Platt and New for one classifier on one split.

    ``platt="cv"``: Platt's sigmoid on 5-fold cross-validated decision values (libsvm, as R
    e1071's ``svm(probability = TRUE)``); ``"training"``: on the training decision values.
    ``random_input``: where the GKL estimate's random-input correction is evaluated
    (:func:`cohstats.tuning.gkl`)."""
    from cohstats.tuning import tune

    fn = _fit_fn(kind)
    # the paper's protocol: weighted SVM at pi = 1/2 on unscaled inputs, Gaussian width by the
    # median between-class distance
    kw = {"kernel": kernel, "m": m, "pi": 0.5, "standardize": False}
    if kernel == "rbf":
        kw["gamma"] = "median"
    out = {}
    cvr = tune(
        fn,
        design,
        grid={"lambda_": grid},
        method="cv",
        measure="class",
        nfolds=10,
        random_state=seed,
        verbose=False,
        **kw,
    )
    pfit = cvr.best_fit
    if platt == "cv":
        pfit = _with_cv_sigmoid(fn, design, pfit, dict(kw, lambda_=float(np.ravel(pfit.lambda_)[0])))
    out["Platt"] = (_test_prob(pfit, Xte, "platt"), pfit)

    def by_gkl(method, offset, fit_kw, fit_fn=fn):
        """The fit whose lambda minimises the GKL estimate of ``method``'s probabilities."""
        best = tune(
            fit_fn,
            design,
            grid={"lambda_": grid},
            method="gkl",
            D=D,
            tau=0.5,
            centering=centering,
            initial=initial,
            random_input=random_input,
            prob_args=None if method is None else {"method": method},
            random_state=seed + offset,
            verbose=False,
            **fit_kw,
        ).best_fit
        return _test_prob(best, Xte, method), best

    if platt == "cv":
        out["Tuned Platt"] = by_gkl(None, 1, kw, _platt_cv_fn(fn))
    else:
        out["Tuned Platt"] = by_gkl("platt", 1, kw)
    out["New"] = by_gkl("bracket", 2, dict(kw, pi="path") if kind == "svm" else kw)
    return out


def _all_methods(d, Xte, classifiers, grid, D, m_grid, seed, opts):
    """``(classifier, method, test probabilities, fit)`` for every classifier of one split;
    the bracketing grid size is ``m_grid`` or ``floor(sqrt(n))``."""
    m = int(math.floor(math.sqrt(d.nobs))) if m_grid is None else int(m_grid)
    for cname in classifiers:
        kind, kernel = CLASSIFIERS[cname]
        for meth, (ph, fit) in _methods(d, Xte, kind, kernel, grid, D, m, seed, **opts).items():
            yield cname, meth, ph, fit


def _comparators(d, Xtr, ytr, Xte, grid, D, seed):
    """Test probabilities of [WSL]'s comparators on one split: the nearest-neighbour estimate
    for every ``k`` of (4, 9, 16, 25) (:func:`cohstats.probability.knn_prob`, standardised
    Euclidean distance) and PLR (L2-penalised linear logistic regression,
    ``clearn(loss="logistic", alpha=0)``, ``lambda`` by the GKL estimate on the grid of the
    other methods). Returns ``{method: (p_hat, lambda or k)}``."""
    from cohstats.models.clearn import clearn
    from cohstats.probability import WSL_KNN_K, knn_prob
    from cohstats.tuning import tune

    out = {}
    P = knn_prob(np.asarray(Xtr, dtype=float), ytr, np.asarray(Xte, dtype=float), k=WSL_KNN_K)
    for k, pk in zip(WSL_KNN_K, P):
        out[f"NN (k={k})"] = (pk, float(k))
    plr = tune(
        clearn,
        d,
        grid={"lambda_": grid},
        method="gkl",
        D=D,
        tau=0.5,
        loss="logistic",
        alpha=0.0,
        random_state=seed + 3,
        verbose=False,
    )
    # the selected lambda is the path fit's s; its lambda_ is the whole grid (lambda_[0] its top)
    out["PLR"] = (
        plr.best_fit.predict(Xte, type="prob").iloc[:, 1].to_numpy(),
        float(plr.best_fit.s),
    )
    return out


def _sim_rep(example, r, seed, grid, D, classifiers, opts, m_grid=None):
    from cohstats.datasets import make_wsl1, make_wsl2
    from cohstats.formula import build_design
    from cohstats.metrics import cre, error_rate, gkl_c

    from .calibration_report import calibration_record

    gen = make_wsl1 if example == "Example 1" else make_wsl2
    df, p = gen(1000, random_state=seed + 1000 * r, return_prob=True)
    tr, te, pte = df.iloc[:100], df.iloc[100:], p[100:]
    d = build_design("y ~ x1 + x2", tr)
    Xte = te[["x1", "x2"]]
    yte = te.y.to_numpy()
    rows, cmp, recs = [], [], []
    for cname, meth, ph, fit in _all_methods(d, Xte, classifiers, grid, D, m_grid, seed + 7919 * r, opts):
        yhat = np.where(ph > 0.5, 1, -1)
        rows.append(
            {
                "example": example,
                "rep": r,
                "classifier": cname,
                "method": meth,
                "gkl": gkl_c(pte, ph),
                "cre": cre(yte, ph),
                "te": error_rate(yte, yhat),
                "lambda": float(np.ravel(fit.lambda_)[0]),
            }
        )
        recs.append(calibration_record({"example": example, "classifier": cname, "method": meth}, ph, yte))
    for meth, (ph, par) in _comparators(d, tr[["x1", "x2"]], tr.y.to_numpy(), Xte, grid, D, seed + 7919 * r).items():
        cmp.append(
            {
                "example": example,
                "rep": r,
                "method": meth,
                "gkl": gkl_c(pte, ph),
                "cre": cre(yte, ph),
                "te": error_rate(yte, np.where(ph > 0.5, 1, -1)),
                "parameter": par,
            }
        )
        recs.append(calibration_record({"example": example, "classifier": "-", "method": meth}, ph, yte))
    return rows, cmp, recs


CODINGS = ("onehot", "integer")


def _bench_xy(name, coding="onehot"):
    """``(X, y, n_scaled)`` of a benchmark data set: numeric columns first, then the
    categorical ones, either one-hot (``coding="onehot"``: one 0/1 column per level, left
    unscaled, as e1071's formula interface leaves factor columns) or as integer level codes
    (``coding="integer"``: ``1..k`` in sorted level order, as R's ``data.matrix`` codes a
    factor, then standardised like the numeric columns). The first ``n_scaled`` columns are the
    ones :func:`_standardise` centres and scales."""
    from cohstats.datasets import load

    if coding not in CODINGS:
        raise ValueError(f"coding must be one of {list(CODINGS)}; got {coding!r}")
    df = load(name)
    y = df["y"].to_numpy()
    Xdf = df.drop(columns="y")
    cat = [c for c in Xdf.columns if not pd.api.types.is_numeric_dtype(Xdf[c])]
    num = [c for c in Xdf.columns if c not in cat]
    parts = [Xdf[num].astype(float)]
    if cat and coding == "integer":
        codes = {c: pd.Categorical(Xdf[c].astype(str)).codes + 1.0 for c in cat}  # sorted levels
        parts.append(pd.DataFrame(codes, index=Xdf.index))
        return pd.concat(parts, axis=1).to_numpy(), y, len(num) + len(cat)
    if cat:
        parts.append(pd.get_dummies(Xdf[cat].astype(str), dtype=float))  # every level
    X = pd.concat(parts, axis=1)
    return X.to_numpy(), y, len(num)


def _standardise(Xtr, Xte, n_num):
    """Centre and scale the first ``n_num`` columns by the training means and SDs (divisor n;
    constant columns unscaled); the one-hot columns after them are kept."""
    Xtr, Xte = Xtr.copy(), Xte.copy()
    if n_num:
        mu = Xtr[:, :n_num].mean(axis=0)
        sd = Xtr[:, :n_num].std(axis=0)
        sd[sd == 0] = 1.0  # constant columns unscaled
        Xtr[:, :n_num] = (Xtr[:, :n_num] - mu) / sd
        Xte[:, :n_num] = (Xte[:, :n_num] - mu) / sd
    return Xtr, Xte


def _bench_rep(label, r, seed, grid, D, classifiers, opts, m_grid=None):
    from cohstats.formula import build_design
    from cohstats.metrics import cre, error_rate

    from .calibration_report import calibration_record

    opts = dict(opts)
    X, y, n_num = _bench_xy(BENCH[label], opts.pop("coding", "onehot"))
    rng = np.random.default_rng(seed + 1000 * r)
    idx = rng.permutation(len(y))
    tr, te = idx[:100], idx[100:]
    Xtr, Xte = _standardise(X[tr], X[te], n_num)
    d = build_design(Xtr, y[tr])
    rows, cmp, recs = [], [], []
    for cname, meth, ph, fit in _all_methods(d, Xte, classifiers, grid, D, m_grid, seed + 7919 * r, opts):
        rows.append(
            {
                "dataset": label,
                "rep": r,
                "classifier": cname,
                "method": meth,
                "cre": cre(y[te], ph),
                "te": error_rate(y[te], np.where(ph > 0.5, 1, -1)),
                "lambda": float(np.ravel(fit.lambda_)[0]),
            }
        )
        recs.append(calibration_record({"dataset": label, "classifier": cname, "method": meth}, ph, y[te]))
    for meth, (ph, par) in _comparators(d, Xtr, y[tr], Xte, grid, D, seed + 7919 * r).items():
        cmp.append(
            {
                "dataset": label,
                "rep": r,
                "method": meth,
                "cre": cre(y[te], ph),
                "te": error_rate(y[te], np.where(ph > 0.5, 1, -1)),
                "parameter": par,
            }
        )
        recs.append(calibration_record({"dataset": label, "classifier": "-", "method": meth}, ph, y[te]))
    return rows, cmp, recs


def _leukaemia(seed, grid, D, opts, m_grid=19):
    """[WSL] Table 5: Golub's fixed 38/34 split, all 7129 genes standardised with the training
    means and SDs (as e1071's ``svm(scale=TRUE)``), linear SVM and linear psi-learning, Platt /
    Tuned Platt / New with ``m = 19``. Returns (rows, records): test cross-entropy with its
    standard error over the 34 test patients, test misclassifications and the test
    probabilities. The fits run on the projection of the genes onto the span of the training
    rows, which leaves every linear-kernel fit and prediction unchanged (see the code)."""
    from cohstats.datasets import load_split
    from cohstats.formula import build_design
    from cohstats.metrics import cre

    from .calibration_report import calibration_record

    trd, ted = load_split("leukemia")
    Xtr, Xte = _standardise(
        trd.drop(columns="y").to_numpy(float), ted.drop(columns="y").to_numpy(float), trd.shape[1] - 1
    )
    ytr, yte = trd.y.to_numpy(), ted.y.to_numpy()
    # Linear kernels see the data only through inner products with training rows: project
    # every row onto the span of the 38 training rows (X V, V from the SVD of the training
    # matrix), which keeps every training and test inner product, hence every fit, CV fold,
    # perturbed refit and decision value, exactly, with 38 columns instead of 7129.
    vt = np.linalg.svd(Xtr, full_matrices=False)[2]
    Xtr, Xte = Xtr @ vt.T, Xte @ vt.T
    d = build_design(Xtr, ytr)
    rows, recs = [], []
    for cname, meth, ph, fit in _all_methods(d, Xte, ["SVM L", "psi L"], grid, D, m_grid, seed, opts):
        pc = np.clip(ph, 1e-300, 1 - 1e-16)
        per = -np.where(yte > 0, np.log(pc), np.log1p(-pc))  # per-patient cross-entropy
        ce = cre(yte, ph)
        wrong = np.flatnonzero(np.where(ph > 0.5, 1, -1) != yte)
        rows.append(
            {
                "classifier": cname,
                "method": meth,
                "cre": ce,
                "cre_se": float(np.std(per, ddof=1) / np.sqrt(per.size)) if np.isfinite(ce) else np.nan,
                "reps": 1,
                "misclassified": int(wrong.size),
                "patients": ", ".join(str(ted.index[i]) for i in wrong),
                "lambda": float(np.ravel(fit.lambda_)[0]),
            }
        )
        recs.append(calibration_record({"data": "leukaemia", "classifier": cname, "method": meth}, ph, yte))
    out = pd.DataFrame(rows)
    out.attrs.update({"n_test": int(yte.size), "n_genes": int(trd.shape[1] - 1), "m": int(m_grid)})
    return out, recs
