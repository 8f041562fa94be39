"""Coefficient path plots: the largest curves named at the right edge, no legend over the curves."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import cohstats as cs  # noqa: E402
from cohstats.datasets import make_waveform, make_wsl2  # noqa: E402
from cohstats.plotting import _spread  # noqa: E402


def _names(ax):
    return [t.get_text() for t in ax.texts]


def _largest_at_least_regularised_end(pf, k):
    Y = pf[pf.coef_columns].to_numpy()
    end = Y[-1] if np.abs(Y[-1]).sum() >= np.abs(Y[0]).sum() else Y[0]
    nz = [j for j in range(len(end)) if end[j] != 0]
    order = sorted(nz, key=lambda j: -abs(end[j]))[:k]
    return [pf.coef_columns[j] for j in order]


def test_binary_path_names_its_largest_curves_at_the_right():
    df = make_wsl2(150, random_state=0)
    rng = np.random.default_rng(0)
    for j in range(3, 15):
        df[f"z{j}"] = rng.normal(size=len(df))
    fit = cs.clearn("y ~ .", df, alpha=1.0, nlambda=30)
    pf = fit.path()
    ax = fit.plot()
    assert ax.get_legend() is None
    assert _names(ax) == _largest_at_least_regularised_end(pf, 10)
    lo, hi = ax.get_xlim()
    assert lo > hi  # log(lambda) decreases to the right: the least regularised end is on the right
    for t in ax.texts:
        assert t.xyann[0] == 1.0 and t.xy[0] == 1.0  # at the right edge of the axes
    # the curves are the path's columns, in order, before any other line
    np.testing.assert_array_equal(ax.get_lines()[1].get_ydata(), pf[pf.coef_columns[1]].to_numpy())
    assert _names(fit.plot(n_labels=3)) == _largest_at_least_regularised_end(pf, 3)
    assert _names(fit.plot(label=False)) == []
    with pytest.raises(ValueError, match="n_labels"):
        fit.plot(n_labels=-1)
    plt.close("all")


def test_k_class_path_has_no_legend_and_ten_names():
    df = make_waveform(150, random_state=0)
    fit = cs.clearn("y ~ .", df, nlambda=20)
    pf = fit.path()
    assert len(pf.coef_columns) > 12
    ax = fit.plot()
    assert ax.get_legend() is None
    assert _names(ax) == _largest_at_least_regularised_end(pf, 10)
    plt.close("all")


def test_other_columns_get_a_legend_beside_the_axes():
    fit = cs.clearn("y ~ x1 + x2", make_wsl2(80, random_state=1), kernel="rbf", nlambda=10)
    ax = fit.plot()
    leg = ax.get_legend()
    assert [t.get_text() for t in leg.get_texts()] == ["train_loss", "train_error"]
    assert leg.get_bbox_to_anchor().transformed(ax.transAxes.inverted()).x0 >= 1.0
    plt.close("all")


def test_spread_keeps_order_and_gap():
    y = np.array([0.0, 0.01, 0.02, 5.0, -1.0])
    v = _spread(y, 0.5, -2.0, 6.0)
    order = np.argsort(y, kind="stable")
    assert np.all(np.diff(v[order]) >= 0.5 - 1e-12)
    assert v[3] == 5.0 and v[4] == -1.0 and v[0] == 0.0  # well separated values stay put
