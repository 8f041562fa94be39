"""Offsets in the binary LUM, ``f(x) = offset + b + x'beta``: every solver route (soft and
intermediate coordinate descent, the majorised hard-LUM steps, the dual ridge route, the
representer route for p > n, kernel expansions) reaches the minimiser of the penalised
objective with the offset that scipy finds; the refitted probabilities use the decision
values including the offset, and ``predict`` adds the offsets of new data."""

import os
import sys

import numpy as np
import pytest
from scipy.optimize import minimize

import cohstats as cs

sys.path.insert(0, os.path.dirname(__file__))
from _offset_data import offset_frame  # noqa: E402
from cohstats.losses.binary import lum_link
from cohstats.losses.scalar import lum_value

V = np.vectorize(lum_value)


@pytest.fixture(scope="module")
def df():
    return offset_frame(120, 0)


def _scipy(df, xs, a, c, lam):
    """argmin_(b, beta) mean V_{a,c}(y (o + b + x'beta)) + lam/2 ||beta||^2 by BFGS."""
    X = df[xs].to_numpy()
    y = np.where(df["y"] == "b", 1.0, -1.0)
    o = df["o"].to_numpy()

    def obj(th):
        return np.mean(V(y * (o + th[0] + X @ th[1:]), a, c)) + 0.5 * lam * th[1:] @ th[1:]

    r = minimize(obj, np.zeros(X.shape[1] + 1), method="BFGS", options=dict(gtol=1e-10, maxiter=5000))
    return r.x, obj


@pytest.mark.parametrize("a,c", [(1000.0, 0.0), (2.0, 5.0), (1.0, 200.0), (10.0, 2000.0)])
def test_linear_routes_minimise_the_objective_with_the_offset(df, a, c):
    lam = 0.05
    fit = cs.lum("y ~ x1 + x2 + offset(o)", df, a=a, c=c, lambda_=lam, standardize=False, tol=1e-12, max_iter=100000)
    ref, obj = _scipy(df, ["x1", "x2"], a, c, lam)
    theta = np.r_[fit._intercept, fit._coef]
    assert obj(theta) <= obj(ref) + 1e-9
    np.testing.assert_allclose(theta, ref, atol=2e-5)
    # without the offset the fit is another one
    plain = cs.lum("y ~ x1 + x2", df, a=a, c=c, lambda_=lam, standardize=False, tol=1e-12, max_iter=100000)
    assert np.max(np.abs(np.r_[plain._intercept, plain._coef] - theta)) > 1e-2


def test_representer_route_for_more_columns_than_rows():
    d = offset_frame(25, 3, p=30)
    xs = [f"x{j + 1}" for j in range(30)]
    lam = 0.2
    fit = cs.lum(
        "y ~ " + " + ".join(xs) + " + offset(o)", d, a=1000.0, c=0.0, lambda_=lam, standardize=False, tol=1e-12
    )
    ref, obj = _scipy(d, xs, 1000.0, 0.0, lam)
    theta = np.r_[fit._intercept, fit._coef]
    assert obj(theta) <= obj(ref) + 1e-9
    np.testing.assert_allclose(theta, ref, atol=1e-4)


def test_linear_kernel_expansion_equals_the_linear_fit(df):
    """With K = X X' the kernel LUM's decision values are those of the linear LUM (beta = X'theta)."""
    kw = dict(a=2.0, c=1.0, lambda_=0.05, standardize=False, tol=1e-12, max_iter=100000)
    lin = cs.lum("y ~ x1 + x2 + offset(o)", df, **kw)
    ker = cs.lum("y ~ x1 + x2 + offset(o)", df, kernel="linear", **kw)
    new = df.iloc[:9].assign(o=np.linspace(-1, 1, 9))
    np.testing.assert_allclose(ker.predict(new, type="link"), lin.predict(new, type="link"), atol=1e-5)


def test_refit_and_predict_on_new_data_use_the_offset(df, tmp_path):
    a = 1000.0
    fit = cs.lum("y ~ x1 + x2 + offset(o)", df, a=a, c=5.0, lambda_=0.05, standardize=False, tol=1e-12)
    X = df[["x1", "x2"]].to_numpy()
    y = np.where(df["y"] == "b", 1.0, -1.0)
    f_train = df["o"].to_numpy() + fit._intercept + X @ fit._coef
    np.testing.assert_allclose(fit.predict(type="link"), f_train, atol=1e-12)
    r = fit.refit()
    ref = cs.lum_refit(f_train, y, a)
    assert (r["g0"], r["g1"]) == pytest.approx((ref["g0"], ref["g1"]), abs=1e-10)
    new = df.iloc[:6].assign(o=[-2.0, -1.0, 0.0, 0.5, 1.0, 3.0])
    f_new = new["o"].to_numpy() + fit._intercept + new[["x1", "x2"]].to_numpy() @ fit._coef
    np.testing.assert_allclose(fit.predict(new, type="link"), f_new, atol=1e-12)
    p = fit.predict(new, type="prob")
    np.testing.assert_allclose(p["b"], lum_link(r["g0"] + r["g1"] * f_new, a, 0.0), atol=1e-12)
    np.testing.assert_allclose(fit.predict(new, type="prob", method="lum")["b"], lum_link(f_new, a, 5.0), atol=1e-12)
    assert list(fit.predict(new)) == list(np.where(f_new > 0, "b", "a"))
    # offset= as an array: the same fit, and predict needs the new rows' offsets
    arr = cs.lum("y ~ x1 + x2", df, offset=df["o"].to_numpy(), a=a, c=5.0, lambda_=0.05, standardize=False, tol=1e-12)
    np.testing.assert_allclose(arr.predict(new, type="link", offset=new["o"].to_numpy()), f_new, atol=1e-9)
    with pytest.raises(ValueError, match="needs their offsets"):
        arr.predict(new)
    fit.save(tmp_path / "lum.csf")
    back = cs.load(tmp_path / "lum.csf")
    np.testing.assert_array_equal(back.predict(new, type="prob"), p)


def test_more_than_two_classes_refuse_an_offset(df):
    d = df.assign(z=np.array(["p", "q", "r"])[np.arange(len(df)) % 3])
    with pytest.raises(ValueError, match="lum with more than two classes"):
        cs.lum("z ~ x1 + x2 + offset(o)", d)


@pytest.mark.parametrize("a,c", [(1000.0, 0.0), (10.0, 1e3), (10.0, 1e4)])
def test_kernel_dual_route_takes_the_offset_as_a_linear_term(df, a, c):
    """The kernel dual (coordinate ascent and its Newton rounds) with offsets, on the linear
    kernel K = X X' (so that f = o + b + x'w, w = X'beta, and beta'K beta = ||w||^2), reaches
    scipy's minimiser of the linear problem with the same offsets."""
    from cohstats.solvers.cd.kernel import prepare_kernel
    from cohstats.solvers.cd.lum_kdual import lum_kernel_dual_path

    X, o = df[["x1", "x2"]].to_numpy(), df["o"].to_numpy()
    y = np.where(df["y"] == "b", 1.0, -1.0)
    K = X @ X.T
    gam = np.array([0.5, 0.05])
    b, B, info = lum_kernel_dual_path(prepare_kernel(K), y, a, c, gam, tol=1e-12, offset=o, trace_len=30)
    assert info["converged"].all()
    ref, obj = _scipy(df, ["x1", "x2"], a, c, gam[-1])
    theta = np.r_[b[-1], X.T @ B[-1]]
    assert info["objective"][-1] == pytest.approx(obj(theta), rel=1e-10)
    assert obj(theta) <= obj(ref) + 1e-9
    np.testing.assert_allclose(theta, ref, atol=2e-5)
    # the augmented dual (offset term included) never decreases along a pass
    tr = info["trace"]
    used = (tr[:, :, 0] != 0.0) | (tr[:, :, 1] != 0.0)
    assert used.sum() >= 2
    assert np.all(tr[:, :, 1][used] >= tr[:, :, 0][used] - 1e-12 * np.abs(tr[:, :, 0][used]))
    plain, _, _ = lum_kernel_dual_path(prepare_kernel(K), y, a, c, gam, tol=1e-12)
    assert np.max(np.abs(plain - b)) > 1e-3
