"""The gkl_tracking vignette: runs end to end on a small problem and its tables are right."""

import os
import sys

import matplotlib

matplotlib.use("Agg")
import numpy as np
import pandas as pd
import pytest

sys.path.insert(0, os.path.dirname(__file__))
from _tuning_fits import ridge_logit  # noqa: E402

from cohstats.vignettes import gkl_tracking as V  # noqa: E402

EST = (ridge_logit, {}, None, "ridge logistic (test fit)")


def test_selection_table_on_constructed_curves():
    lam = np.array([10.0, 1.0, 0.1, 0.01])
    curves = pd.DataFrame(
        {
            "example": 1,
            "seed": 0,
            "lambda": lam,
            "true_gkl_c": [0.70, 0.60, 0.55, 0.58],
            "gkl_hat": [0.72, 0.61, 0.61, 0.63],  # tie between 1.0 and 0.1 -> larger lambda 1.0
            "cv_cre": [0.71, 0.62, 0.57, 0.60],
            "egkl": [0.69, 0.58, 0.52, 0.50],
            "test_cre": [0.70, 0.60, 0.55, 0.58],
        }
    )
    sel = V.selection_table(curves).set_index("criterion")
    assert sel.loc["gkl_hat", "median_lambda"] == 1.0
    assert sel.loc["gkl_hat", "mean_excess"] == pytest.approx(0.05)
    assert sel.loc["cv_cre", "median_lambda"] == 0.1 and sel.loc["cv_cre", "mean_excess"] == 0
    assert sel.loc["egkl", "median_lambda"] == 0.01
    assert sel.loc["egkl", "mean_excess"] == pytest.approx(0.03)


def test_one_replication_and_report(tmp_path):
    grid = np.geomspace(10, 1e-3, 6)
    cur = V.one_replication(1, 3, EST, grid, D=3)
    assert cur.shape[0] == 6
    # E[test CRE] = GKL_c: with 900 test points they agree closely along the grid
    assert np.max(np.abs(cur["test_cre"] - cur["true_gkl_c"])) < 0.04
    # the GKL estimate adds a positive covariance penalty to the training cross-entropy
    assert np.all(cur["cov_term"] > 0)
    np.testing.assert_allclose(cur["gkl_hat"], cur["egkl"] + cur["cov_term"] + cur["d_hat"], rtol=1e-12)
    # the Bayes floor of Example 1 is H(0.8) = 0.5004: no estimator beats it on average
    assert cur["true_gkl_c"].min() > 0.5004 - 0.03
    path = V.run(1, tmp_path, seed=1, estimator=EST, D=2)
    text = path.read_text()
    assert path.name == "gkl_tracking.md" and "Example 2" in text
    assert (tmp_path / "gkl_tracking_files" / "example1.png").exists()


def test_plr_estimator_one_replication():
    pytest.importorskip("cohstats.models.clearn")
    cur = V.one_replication(2, 0, V.plr(), np.array([10.0, 0.1, 0.001]), D=3)
    assert np.all(np.abs(cur["test_cre"] - cur["true_gkl_c"]) < 0.05)
    # heavier penalty -> flatter probabilities -> larger true GKL_c on Example 2 (a near-linear boundary)
    assert cur["true_gkl_c"].iloc[0] > cur["true_gkl_c"].iloc[-1]
    with pytest.raises(ValueError, match="estimator must be one of"):
        V.run(1, "unused", estimator="knn")
