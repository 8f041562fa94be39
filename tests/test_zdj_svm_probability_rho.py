"""The rho rule of the zdj_svm_probability vignette ("Ours for SVM" with Platt's smoothed targets)."""

import numpy as np
import pytest

from cohstats.losses.binary import coherence_link
from cohstats.probability import coherence_rho
from cohstats.vignettes.zdj_svm_probability import coherence_rho_smoothed


def _brute(f, y, lo=1e-3, hi=1e2, n=4001):
    """Minimise the smoothed-target EKL on a fine log grid with the plain link (no log forms)."""
    npos, nneg = np.sum(y > 0), np.sum(y < 0)
    t = np.where(y > 0, (npos + 1) / (npos + 2), 1 / (nneg + 2))
    grid = np.exp(np.linspace(np.log(lo), np.log(hi), n))
    vals = []
    for r in grid:
        p = np.clip(np.asarray(coherence_link(f, rho=r, u=1.0)), 1e-300, 1 - 1e-16)
        vals.append(-np.mean(t * np.log(p) + (1 - t) * np.log1p(-p)))
    i = int(np.argmin(vals))
    return grid[i], vals[i], grid[1] / grid[0]


def test_smoothed_rho_is_the_minimiser_on_noisy_outputs():
    rng = np.random.default_rng(3)
    f = rng.normal(scale=1.5, size=300)
    y = np.where(rng.uniform(size=300) < 1 / (1 + np.exp(-1.2 * f)), 1, -1)
    r_hat = coherence_rho_smoothed(f, y)
    r_ref, _, step = _brute(f, y)
    assert abs(np.log(r_hat) - np.log(r_ref)) <= 2 * np.log(step)


def test_smoothed_rho_stays_off_the_bound_where_eq13_collapses():
    # SVM-like training outputs: support points at y f = 1, the rest beyond the margin, a few
    # margin violators with -1 < y f < 0 and none with y f < -1
    rng = np.random.default_rng(7)
    y = np.repeat([-1, 1], 50)
    f = y * (1.0 + np.abs(rng.normal(0.0, 0.8, size=100)))
    f[::4] = y[::4]
    f[::10] = -0.4 * y[::10]
    assert coherence_rho(f, y) <= 1.0001e-3  # [ZDJ] eq. (13) with 0/1 targets runs to the bound
    r_hat = coherence_rho_smoothed(f, y)
    r_ref, _, step = _brute(f, y)
    assert r_hat > 0.05 and abs(np.log(r_hat) - np.log(r_ref)) <= 2 * np.log(step)
    p = np.asarray(coherence_link(np.array([-6.0, 6.0]), rho=r_hat, u=1.0))
    assert 0 < p[0] and p[1] < 1  # finite GKL on far-out test points


def test_run_checks_its_options(tmp_path):
    from cohstats.vignettes.zdj_svm_probability import run

    with pytest.raises(ValueError, match="rho_rule"):
        run(1, tmp_path, rho_rule="test")
    with pytest.raises(ValueError, match="svm_convention"):
        run(1, tmp_path, svm_convention="R")
    with pytest.raises(ValueError, match="tuned_platt"):
        run(1, tmp_path, tuned_platt="test")
