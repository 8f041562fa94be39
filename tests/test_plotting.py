"""Tests of cohstats.plotting: loss curves against closed forms, LUM minimizer against numerical
minimization, calibration table against scikit-learn."""

from __future__ import annotations

import math

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from scipy.optimize import minimize_scalar  # noqa: E402

from cohstats import plotting as P  # noqa: E402

Z = np.linspace(-3, 4, 141)


def test_loss_curves_match_closed_forms():
    np.testing.assert_allclose(P.loss_curve("hinge", Z), np.maximum(1 - Z, 0))
    np.testing.assert_allclose(P.loss_curve("logistic", Z), np.log1p(np.exp(-Z)), rtol=1e-12)
    rho, u = 0.5, 1.0
    V = rho * np.log1p(np.exp((u - Z) / rho))
    np.testing.assert_allclose(P.loss_curve("V", Z, rho, u), V, rtol=1e-12)
    np.testing.assert_allclose(P.loss_curve("C", Z, rho, u), u * V / (rho * math.log1p(math.exp(u / rho))), rtol=1e-12)
    # [ZDJ]: L_{rho,1} = C_{rho,1}, L_{1,0} = log2(1 + e^-z), L(0) = 1, L >= 0-1 loss
    np.testing.assert_allclose(P.normalized_coherence(Z, 0.3, 1.0), P.loss_curve("C", Z, 0.3, 1.0), rtol=1e-12)
    np.testing.assert_allclose(P.normalized_coherence(Z, 1.0, 0.0), np.log2(1 + np.exp(-Z)), rtol=1e-12)
    for u in (0.0, 0.1, 1.0, 10.0):
        L = P.normalized_coherence(Z, 1.0, u)
        assert np.all(L >= (Z <= 0) - 1e-12)
    # [ZDJ] Proposition 3(ii): L_{1,u} decreasing in u for z < 0, increasing for z >= 0
    Ls = np.array([P.normalized_coherence(Z, 1.0, u) for u in (0.0, 0.1, 1.0, 10.0)])
    assert np.all(np.diff(Ls[:, Z < 0], axis=0) <= 1e-12)
    assert np.all(np.diff(Ls[:, Z >= 0], axis=0) >= -1e-12)
    # LUM a = 1, c = 1 is DWD: 1 - u for u < 1/2, 1/(4u) after
    dwd = np.where(Z < 0.5, 1 - Z, 1 / (4 * np.where(Z < 0.5, 1, Z)))
    np.testing.assert_allclose(P.loss_curve("lum", Z, 1.0, 1.0), dwd, rtol=1e-12)
    with pytest.raises(ValueError, match="unknown loss 'nope'; available"):
        P.loss_curve("nope", Z)


@pytest.mark.parametrize("a", [0.5, 1.0, 10.0, 1000.0, math.inf])
@pytest.mark.parametrize("c", [0.0, 1.0, 10.0])
def test_lum_minimizer_minimizes_pointwise_risk(a, c):
    for p in (0.05, 0.3, 0.45, 0.6, 0.9):
        risk = lambda f: p * P.loss_curve("lum", [f], a, c)[0] + (1 - p) * P.loss_curve("lum", [-f], a, c)[0]
        f_num = minimize_scalar(risk, bounds=(-30, 30), method="bounded", options={"xatol": 1e-11}).x
        f_cf = float(P.lum_minimizer(p, a, c))
        assert abs(f_cf - f_num) < 1e-5 * max(1.0, abs(f_cf))
        assert risk(f_cf) <= risk(f_num) + 1e-12


def test_lum_minimizer_limits_and_errors():
    p = np.array([0.2, 0.5, 0.8])
    np.testing.assert_array_equal(P.lum_minimizer(p, 1.0, math.inf), [-1, 0, 1])
    # a -> inf, c = 0: logistic link f* = logit(p)
    np.testing.assert_allclose(P.lum_minimizer(p, math.inf, 0.0), np.log(p / (1 - p)), atol=1e-15)
    with pytest.raises(ValueError, match="p must lie"):
        P.lum_minimizer([1.5], 1.0, 0.0)


def test_calibration_table_matches_sklearn():
    from sklearn.calibration import calibration_curve

    rng = np.random.default_rng(0)
    p = rng.random(5000)
    y = np.where(rng.random(5000) < p, 1, -1)
    for strategy in ("uniform", "quantile"):
        t = P.calibration_table(p, y, n_bins=8, strategy=strategy)
        frac, mean = calibration_curve((y == 1).astype(int), p, n_bins=8, strategy=strategy)
        np.testing.assert_allclose(t.observed, frac, rtol=1e-12)
        np.testing.assert_allclose(t.mean_predicted, mean, rtol=1e-12)
        assert t.n.sum() == 5000
    with pytest.raises(ValueError, match="p_hat must be probabilities"):
        P.calibration_table([1.2], [1])
    with pytest.raises(ValueError, match="strategy must be"):
        P.calibration_table([0.2], [1], strategy="x")


def test_figures_build():
    import matplotlib.pyplot as plt

    from cohstats.datasets import make_wsl1

    for f, n_axes in (
        (P.plot_coherence_losses, 4),
        (P.plot_lum_losses, 2),
        (P.plot_lum_hybrid, 2),
        (P.plot_lum_minimizer, 1),
    ):
        fig = f()
        assert len(fig.axes) == n_axes and all(ax.lines for ax in fig.axes)
        plt.close(fig)
    df, p = make_wsl1(400, random_state=1, return_prob=True)
    fig = P.plot_calibration(p, df.y, p_true=p)
    assert len(fig.axes) == 2
    plt.close(fig)
