"""scikit-learn compatibility of the wrappers: check_estimator, Pipeline + GridSearchCV, and
equality with the formula interface (the wrappers add no numerics of their own)."""

import numpy as np
import pytest

pytest.importorskip("sklearn")
from sklearn.model_selection import GridSearchCV  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

import cohstats  # noqa: E402
from cohstats import sklearn as cks  # noqa: E402
from cohstats.datasets import make_wsl2  # noqa: E402

ESTIMATORS = [
    cks.WeightedSVMClassifier(),
    cks.GentleBoostCClassifier(n_trees=20),
    cks.CLearnClassifier(),
    cks.LambdaSVMClassifier(),
    cks.LUMClassifier(),
]


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=lambda est: est._expected_failed_checks)
def test_check_estimator(estimator, check):
    check(estimator)


@pytest.mark.parametrize(
    "est,grid",
    [
        (cks.WeightedSVMClassifier(prob_method="platt"), {"est__C": [0.1, 10.0]}),
        (cks.GentleBoostCClassifier(n_trees=10), {"est__rho": [0.5, 1.0]}),
        (cks.CLearnClassifier(kernel="rbf", alpha=0.5), {"est__lambda_": [1e-3, 1e-2]}),
        (cks.LUMClassifier(kernel="rbf", c=0.0), {"est__lambda_": [1e-3, 1e-2]}),
        (cks.LambdaSVMClassifier(C=10.0), {"est__margin": [2.0, 10.0]}),
    ],
)
def test_pipeline_and_grid_search(est, grid):
    d = make_wsl2(120, random_state=4)
    X, y = d[["x1", "x2"]].to_numpy(), d["y"].to_numpy()
    from sklearn.pipeline import Pipeline

    pipe = Pipeline([("scale", StandardScaler()), ("est", est)])
    gs = GridSearchCV(pipe, grid, cv=3).fit(X, y)
    if hasattr(gs.best_estimator_, "predict_proba"):
        P = gs.predict_proba(X)
        np.testing.assert_allclose(P.sum(axis=1), 1.0)
    assert gs.best_score_ > 0.8  # Bayes accuracy on this problem is 0.94


def test_clearn_wrapper_equals_formula_interface():
    d = make_wsl2(80, random_state=6)
    w = cks.CLearnClassifier(lambda_=0.01, alpha=0.5).fit(d[["x1", "x2"]], d["y"])
    fit = cohstats.clearn("y ~ x1 + x2", d, lambda_=0.01, alpha=0.5)
    np.testing.assert_allclose(w.predict_proba(d[["x1", "x2"]]), fit.predict(d, type="prob").to_numpy(), rtol=1e-12)


def test_wrapper_equals_formula_interface():
    d = make_wsl2(80, random_state=5)
    X, y = d[["x1", "x2"]], d["y"]
    w = cks.WeightedSVMClassifier(C=2.0, prob_method="sollich").fit(X, y)
    fit = cohstats.svm("y ~ x1 + x2", d, C=2.0)
    np.testing.assert_allclose(w.decision_function(X), fit.predict(d, type="link"), rtol=1e-12)
    np.testing.assert_allclose(w.predict_proba(X)[:, 1], fit.predict(d, type="prob", method="sollich")[1], rtol=1e-12)


def test_readme_sklearn_example():
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    code = text.split("## scikit-learn")[1].split("```")[1]
    ns = {"train": make_wsl2(100, random_state=1), "test": make_wsl2(50, random_state=2)}
    exec(compile(code, "README.md", "exec"), ns)
    P = ns["search"].predict_proba(ns["test"][["x1", "x2"]])
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
