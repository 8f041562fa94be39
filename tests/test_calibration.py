"""Tests of cohstats.calibration: reliability tables against scikit-learn's calibration_curve
(same bins), intervals against statsmodels, ECE and Brier by hand, for the fit functions that
give probabilities (clearn binary and multiclass, lum, svm with Platt, gboost_c)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from sklearn.calibration import calibration_curve  # noqa: E402
from sklearn.metrics import brier_score_loss  # noqa: E402
from statsmodels.stats.proportion import proportion_confint  # noqa: E402

import cohstats as cs  # noqa: E402
from cohstats.calibration import CalibrationResult, calibration, reliability  # noqa: E402
from cohstats.datasets import make_waveform, make_wsl2, prob_wsl2  # noqa: E402
from cohstats.results import Summary  # noqa: E402


def _hand_table(p, event, bins, strategy):
    """Bins written out: (lo, hi] with the first closed, edges as scikit-learn's."""
    edges = np.linspace(0, 1, bins + 1) if strategy == "uniform" else np.percentile(p, np.linspace(0, 100, bins + 1))
    rows = []
    for b in range(bins):
        lo, hi = edges[b], edges[b + 1]
        m = (p <= hi) if b == 0 else (p > lo) & (p <= hi)
        if b == bins - 1:
            m = (p > lo) if b > 0 else np.ones_like(p, bool)
        if m.sum():
            rows.append((int(m.sum()), int(event[m].sum()), p[m].mean(), event[m].mean()))
    return np.array(rows, dtype=float)


def _check_against_references(res_table, p, event, bins, strategy):
    frac, mean = calibration_curve(event.astype(int), p, n_bins=bins, strategy=strategy)
    np.testing.assert_allclose(res_table["observed"], frac, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(res_table["mean_predicted"], mean, rtol=1e-12, atol=1e-15)
    hand = _hand_table(p, event, bins, strategy)
    np.testing.assert_array_equal(res_table["n"], hand[:, 0])
    np.testing.assert_array_equal(res_table["events"], hand[:, 1])
    lo, hi = proportion_confint(hand[:, 1], hand[:, 0], alpha=0.05, method="wilson")
    np.testing.assert_allclose(res_table["ci_lower"], lo, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(res_table["ci_upper"], hi, rtol=1e-12, atol=1e-15)
    ece = float(np.sum(hand[:, 0] * np.abs(hand[:, 3] - hand[:, 2])) / p.size)
    return ece


@pytest.fixture(scope="module")
def wsl():
    return make_wsl2(150, random_state=1), make_wsl2(1000, random_state=2)


BINARY_FITS = {
    "clearn": lambda tr: cs.clearn("y ~ x1 + x2", data=tr, kernel="rbf", alpha=0.5, lambda_=0.01),
    "lum": lambda tr: cs.lum("y ~ x1 + x2", data=tr, lambda_=0.01),
    "svm": lambda tr: cs.svm("y ~ x1 + x2", data=tr, lambda_=1e-2),
    "gboost_c": lambda tr: cs.gboost_c("y ~ x1 + x2", data=tr, random_state=0),
}
OPTIONS = {"svm": {"method": "platt"}}


@pytest.mark.parametrize("name", list(BINARY_FITS))
@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
def test_binary_fit_calibration_matches_sklearn_and_hand(wsl, name, strategy):
    train, test = wsl
    fit = BINARY_FITS[name](train)
    opts = OPTIONS.get(name, {})
    res = calibration(fit, test, bins=8, strategy=strategy, **opts)
    assert isinstance(res, CalibrationResult)
    p = fit.predict(test, type="prob", **opts)[1].to_numpy()
    event = test["y"].to_numpy() == 1
    ece = _check_against_references(res.table, p, event, 8, strategy)
    assert res.ece == pytest.approx(ece, rel=1e-12, abs=1e-15)
    assert res.brier == pytest.approx(brier_score_loss(event, p), rel=1e-12)
    assert int(res.table["n"].sum()) == len(test)
    # the Fit method is the same computation
    res2 = fit.calibration(test, bins=8, strategy=strategy, **opts)
    assert res2.ece == res.ece and res2.table.equals(res.table)
    ax = res.plot()
    assert isinstance(ax, matplotlib.axes.Axes)
    assert len(ax.lines) >= 2  # diagonal + reliability curve
    matplotlib.pyplot.close("all")


def test_multiclass_one_vs_rest():
    train, test = make_waveform(150, random_state=3), make_waveform(500, random_state=4)
    fit = cs.clearn("y ~ .", data=train, lambda_=0.01)
    res = fit.calibration(test, bins=6, strategy="quantile")
    P = fit.predict(test, type="prob")
    y = test["y"].to_numpy()
    eces = []
    for c in fit.classes:
        event = y == c
        p = P[c].to_numpy()
        block = res.table[res.table["class"] == c]
        ece = _check_against_references(block, p, event, 6, "quantile")
        assert res.by_class.loc[c, "ece"] == pytest.approx(ece, rel=1e-12)
        assert res.by_class.loc[c, "brier"] == pytest.approx(brier_score_loss(event, p), rel=1e-12)
        assert res.by_class.loc[c, "n_events"] == event.sum()
        eces.append(ece)
    assert res.ece == pytest.approx(np.mean(eces), rel=1e-12)
    E = (y[:, None] == np.asarray(fit.classes)[None, :]).astype(float)
    assert res.brier == pytest.approx(np.mean(np.sum((E - P.to_numpy()) ** 2, axis=1)), rel=1e-12)
    s = res.summary()
    assert isinstance(s, Summary) and "By class (one-vs-rest)" in s.tables
    assert "expected calibration error" in s.to_markdown() and "tabular" in s.to_latex()
    ax = res.plot(classes=fit.classes[:2])
    assert len(ax.lines) >= 3
    with pytest.raises(ValueError, match="not among the fitted classes"):
        res.plot(classes=["z"])
    matplotlib.pyplot.close("all")


def test_true_probabilities_are_calibrated_and_distorted_ones_are_not():
    df = make_wsl2(100_000, random_state=11)
    X = df[["x1", "x2"]]
    p = prob_wsl2(X)
    event = df["y"].to_numpy() == 1
    _, ece_true = reliability(p, event, bins=10)
    q = p**2  # distorted: too small everywhere in (0, 1)
    _, ece_bad = reliability(q, event, bins=10)
    # population ECE of q: in each bin of q the event frequency is the mean true probability
    idx = np.minimum((np.ceil(q * 10) - 1).clip(0), 9).astype(int)
    pop = (
        sum(np.sum(idx == b) * abs(p[idx == b].mean() - q[idx == b].mean()) for b in range(10) if np.any(idx == b))
        / p.size
    )
    assert ece_true < 0.005 and pop > 0.03
    assert ece_bad == pytest.approx(pop, abs=0.005)
    tab, _ = reliability(p, event, bins=10)
    # each bin's interval covers its mean true probability at least nearly always (10 bins)
    assert np.mean((tab.ci_lower <= tab.mean_predicted) & (tab.mean_predicted <= tab.ci_upper)) >= 0.8


def test_exact_interval_and_path_value(wsl):
    train, test = wsl
    fit = cs.clearn("y ~ x1 + x2", data=train, nlambda=10)
    s = float(fit.lambda_[3])
    res = calibration(fit, test, bins=5, s=s, interval="exact", level=0.9)
    p = fit.predict(test, type="prob", s=s)[1].to_numpy()
    event = test["y"].to_numpy() == 1
    hand = _hand_table(p, event, 5, "uniform")
    lo, hi = proportion_confint(hand[:, 1], hand[:, 0], alpha=0.1, method="beta")
    np.testing.assert_allclose(res.table["ci_lower"], lo, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(res.table["ci_upper"], hi, rtol=1e-12, atol=1e-15)


def test_bad_input(wsl):
    train, test = wsl
    fit = cs.clearn("y ~ x1 + x2", data=train, lambda_=0.01)
    with pytest.raises(ValueError, match="bins"):
        calibration(fit, test, bins=0)
    with pytest.raises(ValueError, match="strategy"):
        calibration(fit, test, strategy="equal")
    with pytest.raises(ValueError, match="response column"):
        calibration(fit, test.drop(columns="y"))
    with pytest.raises(TypeError, match="cohstats fit"):
        calibration("fit", test)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        reliability([0.2, 1.5], [0, 1])
    with pytest.raises(ValueError, match="event"):
        reliability([0.2, 0.5], [0, 2])
    sv = cs.svm("y ~ x1 + x2", data=train, lambda_=1e-2)
    with pytest.raises(ValueError, match="method"):
        calibration(sv, test, method="isotonic")


def test_package_level_calibration_is_callable_and_keeps_the_module(wsl):
    """``cs.calibration(fit, newdata)`` is the function; ``cs.calibration.<name>`` the module's names."""
    import importlib

    train, test = wsl
    fit = BINARY_FITS["lum"](train)
    a = cs.calibration(fit, test, bins=5)
    b = calibration(fit, test, bins=5)
    assert isinstance(a, CalibrationResult)
    assert a.table.equals(b.table) and a.brier == b.brier and a.ece == b.ece
    mod = importlib.import_module("cohstats.calibration")
    assert cs.calibration is mod and cs.calibration.reliability is reliability
    assert cs.calibration.calibration is calibration
    with pytest.raises(TypeError, match="fit must be a cohstats fit"):
        cs.calibration("not a fit", test)
