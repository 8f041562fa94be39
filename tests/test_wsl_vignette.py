"""[WSL] vignette protocol pieces: the random-input correction on left-out inputs (eq. 14) and
Platt's sigmoid on cross-validated decision values (libsvm / R e1071)."""

import os
import sys

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit

sys.path.insert(0, os.path.dirname(__file__))
from _gkl_reference import binary_gkl  # noqa: E402
from _tuning_fits import ridge_logit  # noqa: E402

from cohstats.formula import build_design  # noqa: E402
from cohstats.results import Fit, Summary  # noqa: E402
from cohstats.tuning import _gkl_many, _Perturbation, _seed_seq, gkl, tune  # noqa: E402


@pytest.fixture(scope="module")
def df():
    rng = np.random.default_rng(5)
    n = 70
    X = rng.normal(size=(n, 2))
    y = np.where(rng.random(n) < expit(1.5 * X[:, 0] - 0.5 * X[:, 1]), 1, -1)
    return pd.DataFrame({"x1": X[:, 0], "x2": X[:, 1], "y": y})


def test_left_out_random_input_equals_the_written_out_formula(df):
    """``random_input="left_out"`` evaluates the second Delta of [WSL] eq. (14) on the inputs absent
    from each X*l; the binary formula written out in tests/_gkl_reference.py gives the same numbers,
    for the fit's own initial estimate and for a shared one."""
    d = build_design("y ~ x1 + x2", df)
    lam = np.array([1.0, 0.1, 1e-3])
    full = ridge_logit(d, lambda_=lam)
    q = np.random.default_rng(1).uniform(0.2, 0.8, size=d.nobs)
    for init in (None, np.column_stack([1 - q, q])):
        res = {}
        for ri in ("data", "left_out"):
            pert = _Perturbation(0.5, 4, _seed_seq(2), "within", ri, init, "fit" if init is None else "array")
            a = _gkl_many(ridge_logit, d, [{"lambda_": lam}], [full], pert, None, False, None)[0]
            p0 = None if init is None else q
            est, cov, d_hat = binary_gkl(
                ridge_logit, d, {"lambda_": lam}, full, 0.5, 4, _seed_seq(2), p0=p0, random_input=ri
            )
            np.testing.assert_allclose(a.d_hat, d_hat, rtol=1e-9, atol=1e-15)
            np.testing.assert_allclose(a.estimate, est, rtol=1e-12)
            assert a.random_input == ri
            res[ri] = a
        # only the random-input correction changes, and it does change
        np.testing.assert_allclose(res["data"].cov, res["left_out"].cov, rtol=0, atol=0)
        assert np.all(np.abs(res["data"].d_hat - res["left_out"].d_hat) > 1e-6)


class AnchoredFit(Fit):
    """p_hat(x) = expit(x1) at the training inputs and 1/2 anywhere else; labels are ignored."""

    method = "anchored"

    def _proba(self, X, s=None):
        X = np.asarray(X, float)
        seen = (np.abs(X[:, None, :] - self._Xtr[None]).sum(-1) == 0).any(axis=1)
        return np.where(seen, expit(X[:, 0]), 0.5)

    def _decision(self, X, s=None):
        p = self._proba(X)
        return np.log(p) - np.log1p(-p)

    def _summary(self):
        return Summary("anchored", {"n": self.nobs})


def anchored(formula, data=None):
    d = build_design(formula, data)
    fit = AnchoredFit(d, {})
    fit._coef, fit._intercept = np.zeros(d.p), 0.0
    fit._Xtr = np.asarray(d.X, float).copy()
    return fit


def test_left_out_correction_closed_form_for_a_fit_anchored_at_its_inputs(df):
    """With the initial estimate q(x) = expit(x1) and a fit equal to q at its own inputs and to 1/2
    elsewhere, Delta(q, p*, X*l) = -mean_i H(q(X*l_i)) and Delta(q, p*, left-out inputs) =
    log(1/2), so E[D_hat] = D^2/(D^2 - 1) (log 2 - mean_j H(q(X_j))) for ``"left_out"`` (each X*l_i
    is X_i or a uniform draw); the printed form dilutes it by the inputs the refit saw."""
    d = build_design("y ~ x1 + x2", df)
    q = expit(np.asarray(d.X)[:, 0])
    H = -(q * np.log(q) + (1 - q) * np.log1p(-q))
    D = 4
    target = D * D / (D * D - 1) * (np.log(2.0) - H.mean())
    lo, da = [], []
    for seed in range(40):
        g = {
            ri: gkl(anchored, d, D=D, random_state=seed, random_input=ri, initial=q, verbose=False)
            for ri in ("data", "left_out")
        }
        assert abs(g["left_out"].cov_term) < 1e-12  # the fit ignores the labels
        lo.append(g["left_out"].d_hat)
        da.append(g["data"].d_hat)
    lo, da = np.asarray(lo), np.asarray(da)
    se = lo.std(ddof=1) / np.sqrt(lo.size)
    assert abs(lo.mean() - target) < 4 * se and se < 0.05 * target, (lo.mean(), target, se)
    # an input is absent from X*l with probability about (1/2) exp(-1/2) = 0.30
    assert np.all(da < lo) and 0.2 < da.mean() / lo.mean() < 0.4, (da.mean(), lo.mean())


def test_random_input_is_checked(df):
    with pytest.raises(ValueError, match="random_input must be 'data' or 'left_out'"):
        gkl(ridge_logit, "y ~ x1 + x2", df, D=2, random_input="oob", verbose=False)
    with pytest.raises(ValueError, match="random_input"):
        tune(
            ridge_logit,
            "y ~ x1 + x2",
            df,
            grid={"lambda_": [1.0, 0.1]},
            method="gkl",
            D=2,
            random_input="x",
            verbose=False,
        )


def test_cv_sigmoid_equals_sklearn_calibrated_svc():
    """Platt's sigmoid on 5-fold cross-validated decision values (libsvm's method) equals
    scikit-learn's CalibratedClassifierCV(SVC, method="sigmoid", ensemble=False) on the same
    folds: out-of-fold decision values of SVC refits at the same C and gamma, Platt's targets,
    the full-data SVC's decision values at new inputs."""
    from sklearn.calibration import CalibratedClassifierCV
    from sklearn.model_selection import PredefinedSplit
    from sklearn.svm import SVC

    from cohstats.datasets import make_wsl1
    from cohstats.models.svm import svm
    from cohstats.tuning.folds import make_folds
    from cohstats.vignettes.wsl_probability import PLATT_FOLDS, _with_cv_sigmoid

    df = make_wsl1(400, random_state=3)
    tr, te = df.iloc[:90], df.iloc[90:]
    d = build_design("y ~ x1 + x2", tr)
    kw = {"kernel": "rbf", "gamma": "median", "standardize": False}
    lam = 0.01
    fit = svm(d, lambda_=lam, **kw)
    pf = _with_cv_sigmoid(svm, d, fit, dict(kw, lambda_=lam))
    ours = pf.prob(te[["x1", "x2"]])
    gamma = float(fit.kernel.kpar[0])
    C = 1.0 / (d.nobs * lam)
    fid = make_folds(np.asarray(d.y, float), PLATT_FOLDS, stratified=True, random_state=0)
    sk = CalibratedClassifierCV(
        SVC(C=C, gamma=gamma, tol=1e-8), method="sigmoid", cv=PredefinedSplit(fid), ensemble=False
    ).fit(d.X, d.y)
    ref = sk.predict_proba(te[["x1", "x2"]].to_numpy())[:, list(sk.classes_).index(1.0)]
    np.testing.assert_allclose(ours, ref, rtol=0, atol=2e-3)
    # and it is not the sigmoid on the training decision values
    train = fit.predict(te[["x1", "x2"]], type="prob", method="platt").iloc[:, 1].to_numpy()
    assert np.max(np.abs(train - ref)) > 10 * np.max(np.abs(ours - ref))


def test_platt_option_is_checked(tmp_path):
    from cohstats.vignettes.wsl_probability import run

    with pytest.raises(ValueError, match="platt must be 'cv' or 'training'"):
        run(1, tmp_path, platt="train")
    with pytest.raises(ValueError, match="examples must be a subset"):
        run(1, tmp_path, examples=["Example 3"])


def test_figure1_caption_is_formatted_from_the_path():
    from cohstats.vignettes.wsl_probability import _figure1_caption

    pi = np.linspace(0, 1, 11)
    pf = pd.DataFrame({"pi": pi, "(Intercept)": np.where(pi < 0.5, 1.0, -1.0), "x1": 3 * pi, "x2": 0 * pi})
    text = _figure1_caption(pf)
    # x1 moves by 0.6 over [0, 0.2] and over [0.8, 1]; the intercept by 2 over the whole path, x1 by 3
    assert "0.6 over pi in [0, 0.2] and 0.6 over [0.8, 1], against 3 over the whole path" in text


def test_mushroom_codings(tmp_path):
    """Mushroom's attributes: one 0/1 column per level (117), or R's factor codes 1..k in sorted
    level order (as ``data.matrix``), which the benchmark split then standardises."""
    from cohstats.datasets import load
    from cohstats.vignettes.wsl_probability import _bench_xy, _standardise, run

    raw = load("mushroom").drop(columns="y")
    X1, y1, n1 = _bench_xy("mushroom")
    assert X1.shape == (8124, sum(raw[c].nunique() for c in raw.columns)) and n1 == 0
    np.testing.assert_array_equal(X1.sum(axis=1), np.full(8124, raw.shape[1]))  # one level per attribute
    X2, y2, n2 = _bench_xy("mushroom", "integer")
    assert X2.shape == (8124, 22) and n2 == 22
    np.testing.assert_array_equal(y1, y2)
    for j, c in enumerate(raw.columns):
        ref = np.unique(raw[c].astype(str).to_numpy(), return_inverse=True)[1] + 1.0  # sorted levels
        np.testing.assert_array_equal(X2[:, j], ref)
    Xtr, Xte = _standardise(X2[:100], X2[100:], n2)
    sd = X2[:100].std(axis=0)
    np.testing.assert_allclose(Xtr[:, sd > 0].mean(axis=0), 0.0, atol=1e-12)
    np.testing.assert_allclose(Xtr[:, sd > 0].std(axis=0), 1.0, rtol=1e-12)
    np.testing.assert_allclose(Xte[:, sd > 0], (X2[100:, sd > 0] - X2[:100, sd > 0].mean(0)) / sd[sd > 0])
    with pytest.raises(ValueError, match="coding must be one of"):
        _bench_xy("mushroom", "ordinal")
    with pytest.raises(ValueError, match="coding must be one of"):
        run(1, tmp_path / "out", coding="ordinal")  # checked before any output
    assert not (tmp_path / "out").exists()


def test_committed_wsl_runs_have_no_off_cell_without_a_measured_cause(tmp_path):
    """The committed [WSL] quick runs (four replications of every table, and the
    one-replication run of every table): every OFF [WSL] cell carries a measured cause."""
    import shutil
    from pathlib import Path

    from cohstats.vignettes.fidelity import _uncaused, fidelity_table

    res = Path(__file__).resolve().parents[1] / "vignettes" / "results"
    runs = res / "runs"
    parts = [
        "wsl_examples_quick_4reps",
        "wsl_mushroom_integer_quick_4reps",
        "wsl_liver_diabetes_ionosphere_quick_4reps",
    ]
    if not all((runs / p).is_dir() for p in parts):
        pytest.skip("the committed vignette results are not in this checkout")
    for p in parts:
        shutil.copytree(runs / p, tmp_path / "a_reps4" / p)
    shutil.copytree(runs / "wsl_all_quick_1rep" / "wsl_probability", tmp_path / "b_reps1" / "wsl_probability")
    tab = fidelity_table(tmp_path)
    wsl = tab[tab.source.str.startswith("[WSL]")]
    assert (wsl.verdict == "OFF").sum() > 0  # the check below is not vacuous
    unc = _uncaused(wsl)
    assert unc.empty, unc[["source", "quantity", "cell"]].to_string()
    # the four-replication cells are the ones kept where both runs have the cell
    t1 = wsl[(wsl.source == "[WSL] Table 1")]
    assert set(t1.reps.dropna()) == {4.0}


def test_plr_comparator_reports_the_selected_lambda(df):
    """The PLR comparator's parameter is the lambda its probabilities come from (a path fit's
    selected value, not the top of its grid)."""
    from cohstats.models.clearn import clearn
    from cohstats.vignettes.wsl_probability import _comparators

    d = build_design("y ~ x1 + x2", df.iloc[:50])
    Xtr, ytr, Xte = df.iloc[:50][["x1", "x2"]], df.y.iloc[:50].to_numpy(), df.iloc[50:][["x1", "x2"]]
    grid = 10.0 ** np.arange(1.0, -5.5, -1.0)
    p, lam = _comparators(d, Xtr, ytr, Xte, grid, 2, 0)["PLR"]
    assert lam in grid
    ref = clearn(d, loss="logistic", alpha=0.0, lambda_=grid).predict(Xte, type="prob", s=lam).iloc[:, 1]
    np.testing.assert_allclose(p, ref.to_numpy(), atol=1e-6)
