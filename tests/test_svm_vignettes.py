"""Smoke runs of the SVM probability vignettes (slow: tuning by the GKL estimate)."""

import numpy as np
import pytest


@pytest.mark.slow
def test_wsl_probability_vignette(tmp_path):
    from cohstats.vignettes.wsl_probability import run

    path = run(1, tmp_path, classifiers=["SVM L"], datasets=["Liver"], leukaemia=False)
    text = path.read_text()
    assert "Table 1, test GKL_c" in text and "Table 3, test cross-entropy" in text
    assert (tmp_path / "wsl_probability_simulations_raw.csv").exists()


@pytest.mark.slow
def test_zdj_svm_probability_vignette(tmp_path):
    from cohstats.vignettes.zdj_svm_probability import run

    path = run(1, tmp_path)
    text = path.read_text()
    assert "Ours for SVM" in text and "fitted rho" in text


def test_wsl_probability_lambda_convention_is_checked(tmp_path):
    from cohstats.vignettes.wsl_probability import run

    with pytest.raises(ValueError, match="lambda_convention"):
        run(1, tmp_path, lambda_convention="R")


def test_zdj_grids_follow_the_lambda_convention():
    from cohstats.tuning import wsl_grid
    from cohstats.vignettes.zdj_svm_probability import _grid

    np.testing.assert_allclose(_grid(False, "e1071"), wsl_grid() / 100)  # lambda_WSL / n
    np.testing.assert_allclose(_grid(False, "spec"), wsl_grid())
    with pytest.raises(ValueError, match="lambda_convention"):
        _grid(True, "R")
