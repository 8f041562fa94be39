"""One scale-safe standardisation: predictors on the scales 1e150 and 1e-150 fit as their rescaled twins.

``standardize=True`` makes a fit invariant to the units of a predictor: multiplying column j by
``s_j`` divides its input-space coefficient by ``s_j`` and leaves the decision values unchanged.
The references are the fits on the unscaled columns and, for the moments themselves, numpy's
weighted mean and standard deviation of the unscaled columns (where nothing overflows).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import cohstats as cs
from cohstats.scaling import column_scaling
from cohstats.solvers.cd.design import standardize_design


def _twin_scales(s):
    """Column multipliers of the twin: one column on the scale ``s``, one on ``1/s``, one unchanged."""
    return np.array([s, 1.0 / s, 1.0])


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(7)
    n = 80
    X = rng.normal(size=(n, 3)) + np.array([3.0, -1.0, 0.5])
    y = np.where(X[:, 0] - 0.8 * X[:, 1] + 0.5 * rng.normal(size=n) > 2.5, "b", "a")
    w = rng.uniform(0.5, 2.0, size=n)
    return X, y, w


def _reference_moments(X, w):
    ws = w / w.sum()
    c = ws @ X
    return c, np.sqrt(ws @ (X - c) ** 2)


@pytest.mark.parametrize("s", [1e150, 1e-150, 1e300, 1e-300])
def test_column_scaling_of_a_rescaled_column(data, s):
    X, _, w = data
    c0, s0 = _reference_moments(X, w)
    c, sd = column_scaling(X * s, w)
    np.testing.assert_allclose(c / s, c0, rtol=1e-13)
    np.testing.assert_allclose(sd / s, s0, rtol=1e-13)
    assert np.all(np.isfinite(sd)) and np.all(sd > 0)


@pytest.mark.parametrize("s", [1e150, 1e160, 1e300])
def test_standardize_design_of_a_rescaled_column(data, s):
    X, _, w = data
    wn = w * (len(w) / w.sum())
    c0, s0 = _reference_moments(X, w)
    D = _twin_scales(s)
    Xt, center, scale, excl = standardize_design(X * D, wn)
    np.testing.assert_allclose(center / D, c0, rtol=1e-13)
    np.testing.assert_allclose(scale / D, s0, rtol=1e-13)
    assert not excl.any()
    np.testing.assert_allclose(Xt, ((X - c0) / s0).T, rtol=1e-11, atol=1e-12)


def _fit_twins(data, fn, kw, s):
    """The fit on the data, the fit on its twin and the twin's column multipliers."""
    X, y, w = data
    D = _twin_scales(s)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return getattr(cs, fn)(X, y, weights=w, **kw), getattr(cs, fn)(X * D, y, weights=w, **kw), D


LINEAR = [
    ("clearn", dict(lambda_=0.01)),
    ("lum", dict(lambda_=0.01)),
    ("svm", dict(kernel=None, C=1.0, tol=1e-9)),  # SMO agrees with itself only to its tolerance
]
KERNEL = [
    ("clearn", dict(kernel="rbf", lambda_=0.01)),
    ("lum", dict(kernel="rbf", lambda_=0.01)),
    ("svm", dict(kernel="rbf", C=1.0)),
]


@pytest.mark.parametrize("fn, kw", LINEAR, ids=[f[0] for f in LINEAR])
@pytest.mark.parametrize("s", [1e150, 1e160])
def test_linear_fit_of_the_rescaled_twin(data, fn, kw, s):
    ref, twin, D = _fit_twins(data, fn, kw, s)
    b_ref = np.asarray(ref.coef, dtype=float)
    b_twin = np.asarray(twin.coef, dtype=float) * D
    assert np.all(np.abs(b_ref) > 1e-8)  # every predictor takes part
    np.testing.assert_allclose(b_twin, b_ref, rtol=1e-6, atol=1e-9 * np.abs(b_ref).max())
    np.testing.assert_allclose(float(twin.intercept), float(ref.intercept), rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("fn, kw", KERNEL, ids=[f[0] for f in KERNEL])
@pytest.mark.parametrize("s", [1e150, 1e160])
def test_kernel_fit_of_the_rescaled_twin(data, fn, kw, s):
    X = data[0]
    ref, twin, D = _fit_twins(data, fn, kw, s)
    f_ref = np.asarray(ref.predict(X, type="link"), dtype=float)
    f_twin = np.asarray(twin.predict(X * D, type="link"), dtype=float)
    np.testing.assert_allclose(f_twin, f_ref, rtol=1e-6, atol=1e-8 * np.abs(f_ref).max())
    # the predictor on the largest scale still moves the decision (it did not drop out)
    Xm = X.copy()
    Xm[:, 0] += 1.0
    moved = np.asarray(twin.predict(Xm * D, type="link"), dtype=float)
    assert np.max(np.abs(moved - f_twin)) > 1e-3 * np.abs(f_twin).max()
