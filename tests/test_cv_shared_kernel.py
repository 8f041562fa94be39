"""cv/tune lend one kernel matrix to the full-data and fold fits of kernel clearn when the kernel
depends on the rows only (cohstats/tuning/shared.py).

References: the same cross-validation with ``share_kernel=False``, where every fit computes its
own kernel matrix from its rows (the code path of an ordinary fit); numpy's fancy indexing for
the blocks of the matrix; ``tracemalloc`` for the memory held.
"""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from cohstats.kernels import Kernel, make_kernel
from cohstats.models.clearn import clearn
from cohstats.solvers.cd.kernel import LentKernel, prepare_kernel
from cohstats.tuning import cv, tune
from cohstats.tuning.cv import _shared_groups
from cohstats.tuning.shared import SharedKernel

BASE = dict(kernel="rbf", gamma=0.5, standardize=False, verbose=False, random_state=1)


def _data(n, seed=0, p=3, classes=2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    if classes == 2:
        y = np.where(X[:, 0] * X[:, 1] + 0.3 * rng.normal(size=n) > 0, "a", "b")
    else:
        y = np.array(["a", "b", "c"])[np.digitize(X[:, 0] + 0.3 * rng.normal(size=n), [-0.5, 0.5])]
    return X, y


@pytest.fixture
def kernel_calls(monkeypatch):
    """Counts the kernel matrices computed (every kernel evaluation goes through Kernel.__call__)."""
    calls = []
    orig = Kernel.__call__

    def counting(self, A, B=None):
        calls.append((np.shape(A)[0], None if B is None else np.shape(B)[0]))
        return orig(self, A, B)

    monkeypatch.setattr(Kernel, "__call__", counting)
    return calls


def _both(kernel_calls, fn, *args, **kw):
    kernel_calls.clear()
    plain = fn(*args, share_kernel=False, **kw)
    n_plain = len(kernel_calls)
    kernel_calls.clear()
    shared = fn(*args, share_kernel=True, **kw)
    return plain, shared, n_plain, len(kernel_calls)


@pytest.mark.parametrize(
    "extra",
    [
        dict(alpha=0.5, nlambda=15),  # C-loss, coordinate descent
        dict(alpha=0.0, nlambda=6),  # pure ridge: damped Newton
        dict(loss="logistic", alpha=1.0, nlambda=15, measure="class"),
        dict(kernel="poly", gamma=None, degree=2, alpha=0.5, nlambda=10, measure="brier"),
    ],
)
def test_cv_with_a_shared_kernel_equals_cv_with_a_kernel_per_fit(kernel_calls, extra):
    X, y = _data(90, seed=2)
    kw = {**BASE, **extra}
    a, b, n_plain, n_shared = _both(kernel_calls, cv, clearn, X, y, nfolds=5, **kw)
    assert n_plain == 1 + 2 * 5  # the full fit, and a training and a held-out matrix per fold
    assert n_shared == 1  # one matrix for everything
    np.testing.assert_array_equal(a.lambda_, b.lambda_)  # the full-data fit is bitwise the same
    np.testing.assert_array_equal(a.fit._beta_path, b.fit._beta_path)
    np.testing.assert_allclose(b.fold_values, a.fold_values, rtol=0, atol=1e-10)
    np.testing.assert_allclose(b.cvm, a.cvm, rtol=0, atol=1e-10)
    assert a.index_min == b.index_min


def test_weights_multiclass_and_a_callable_kernel_share_too(kernel_calls):
    X, y = _data(75, seed=3, classes=3)
    w = np.random.default_rng(4).uniform(0.5, 2.0, size=75)
    kw = {**BASE, "alpha": 0.5, "nlambda": 8, "weights": w}
    a, b, n_plain, n_shared = _both(kernel_calls, cv, clearn, X, y, nfolds=4, **kw)
    assert (n_plain, n_shared) == (9, 1)
    np.testing.assert_allclose(b.fold_values, a.fold_values, rtol=0, atol=1e-10)

    calls = []

    def lap(A, B):  # a user kernel: Laplacian, evaluated only through the callable
        calls.append(1)
        return np.exp(-np.abs(A[:, None, :] - B[None, :, :]).sum(-1))

    X2, y2 = _data(70, seed=5)
    kw2 = {**BASE, "kernel": lap, "gamma": None, "alpha": 0.5, "nlambda": 8}
    c = cv(clearn, X2, y2, nfolds=5, share_kernel=False, **kw2)
    n_c = len(calls)
    calls.clear()
    d = cv(clearn, X2, y2, nfolds=5, share_kernel=True, **kw2)
    assert (n_c, len(calls)) == (11, 1)
    np.testing.assert_allclose(d.fold_values, c.fold_values, rtol=0, atol=1e-10)


def test_tune_shares_one_matrix_across_grid_points_with_the_same_kernel(kernel_calls):
    X, y = _data(80, seed=6)
    grid = {"alpha": [0.3, 1.0], "gamma": [0.2, 1.0]}
    kw = dict(
        kernel="rbf", standardize=False, verbose=False, random_state=2, nfolds=4, nlambda=8, lambda_min_ratio=1e-2
    )
    a, b, n_plain, n_shared = _both(kernel_calls, tune, clearn, X, y, grid=grid, **kw)
    assert n_plain == 4 * (1 + 2 * 4)
    assert n_shared == 2  # one per width
    np.testing.assert_allclose(b.table["score"], a.table["score"], rtol=0, atol=1e-10)
    # later fits see the restored matrix (a unit in the last place off): lambda sequences agree
    # to rounding
    assert a.best_params.keys() == b.best_params.keys()
    for k, v in a.best_params.items():
        assert b.best_params[k] == pytest.approx(v, rel=1e-12)


def test_no_sharing_where_the_folds_use_different_kernels(kernel_calls):
    X, y = _data(60, seed=7)
    d = {"kernel": "rbf", "standardize": False}
    from cohstats.formula import build_design

    design = build_design(X, y)
    groups = lambda args, n_jobs=None: _shared_groups(clearn, design, [args], n_jobs, True)  # noqa: E731
    assert groups({**d, "gamma": 0.5})  # fixed width, raw inputs: shared
    assert groups({**d, "sigma": 2.0}) and groups({**d, "gamma": "auto"}) and groups({**d, "kernel": "linear"})
    assert not groups({**d, "gamma": 0.5, "standardize": True})  # per-fit scaling
    assert not groups({"kernel": "rbf", "gamma": 0.5})  # standardize defaults to True
    assert not groups(d)  # gamma="scale" from each fit's rows
    for g in ("scale", "median", "mean"):
        assert not groups({**d, "gamma": g})
    assert not groups({**d, "gamma": 0.5, "kernel_approx": "nystroem"})
    assert not groups({"standardize": False})  # linear model, no kernel
    assert not groups({**d, "gamma": 0.5}, n_jobs=2)  # parallel workers: each fit its own kernel
    import joblib

    with joblib.parallel_config(backend="threading", n_jobs=2):
        assert not groups({**d, "gamma": 0.5})
    # and cv falls back to a kernel per fit
    kernel_calls.clear()
    cv(clearn, X, y, nfolds=3, kernel="rbf", gamma=0.5, nlambda=5, verbose=False, random_state=0)
    assert len(kernel_calls) == 1 + 2 * 3


def test_lent_blocks_are_the_submatrices_and_the_matrix_is_restored():
    rng = np.random.default_rng(8)
    n = 53
    X = rng.normal(size=(n, 4))
    ker = make_kernel("rbf", X, gamma=0.3)
    sk = SharedKernel(ker, X)
    K0 = sk.K.copy()
    np.testing.assert_array_equal(K0, K0.T)  # symmetrised once
    np.testing.assert_allclose(K0, ker(X, X), rtol=0, atol=1e-15)
    foldid = rng.integers(0, 4, size=n)
    w = rng.uniform(0.5, 2.0, size=n)
    for k in range(4):
        tr, te = np.flatnonzero(foldid != k), np.flatnonzero(foldid == k)
        before = sk.K.copy()
        with sk.lend_rows(tr, te) as lent:
            np.testing.assert_array_equal(lent.K, before[np.ix_(tr, tr)])
            assert np.shares_memory(lent.K, sk.K)  # packed inside the one buffer
            pk = prepare_kernel(lent, w[tr])
            assert np.shares_memory(pk.Xt, sk.K)  # prepared in place
            ref = prepare_kernel(before[np.ix_(tr, tr)], w[tr])
            np.testing.assert_array_equal(pk.Xt, ref.Xt)
            np.testing.assert_array_equal(lent.m, ref.m)
        # restored up to the rounding of undoing the centring (a unit in the last place per fit)
        np.testing.assert_allclose(sk.K, before, rtol=0, atol=2.3e-16)
        np.testing.assert_allclose(sk.K, K0, rtol=0, atol=2.3e-16 * (k + 1))
        np.testing.assert_array_equal(sk.cross(te, tr), sk.K[te][:, tr])
    # an error inside the fit still restores the matrix
    tr, te = np.flatnonzero(foldid != 0), np.flatnonzero(foldid == 0)
    with pytest.raises(RuntimeError):
        with sk.lend_rows(tr, te) as lent:
            prepare_kernel(lent)
            raise RuntimeError("fit failed")
    np.testing.assert_allclose(sk.K, K0, rtol=0, atol=2.3e-16 * 5)


def test_a_lent_matrix_of_other_inputs_or_another_kernel_is_refused():
    X, y = _data(30, seed=9)
    ker = make_kernel("rbf", X, gamma=0.5)
    K = ker(X, X)
    with pytest.raises(ValueError, match="not the kernel of these inputs"):
        clearn(X, y, kernel="rbf", gamma=0.25, standardize=False, _gram=LentKernel(K.copy(), ker, X), nlambda=3)
    with pytest.raises(ValueError, match="not the kernel of these inputs"):
        clearn(X, y, kernel="rbf", gamma=0.5, standardize=True, _gram=LentKernel(K.copy(), ker, X), nlambda=3)
    with pytest.raises(ValueError, match="exact kernel expansion"):
        clearn(X, y, _gram=LentKernel(K.copy(), ker, X), nlambda=3)
    with pytest.raises(TypeError, match="share_kernel"):
        cv(clearn, X, y, share_kernel="yes", verbose=False)


def test_shared_cv_holds_one_kernel_matrix_plus_one_held_out_fold():
    n, nfolds = 500, 10
    X, y = _data(n, seed=10)
    kw = {**BASE, "alpha": 0.5, "nlambda": 4, "tol": 1e-4, "nfolds": nfolds}
    cv(clearn, X[:50], y[:50], **kw)  # compiled and imported before measuring
    peaks = {}
    for share in (False, True):
        tracemalloc.start()
        cv(clearn, X, y, share_kernel=share, **kw)
        peaks[share] = tracemalloc.get_traced_memory()[1] / (8.0 * n * n)
        tracemalloc.stop()
    # a kernel per fit: the full fit's n x n matrix; shared: that matrix and the held-out rows of
    # one fold (1/nfolds of it) beside it, never a second matrix (a copied training block would
    # add 0.81). The rest is the fits' O(n) working memory: 0.05-0.15 n^2 at n = 500.
    assert peaks[False] < 1.1
    assert peaks[True] < 1.0 + 1.0 / nfolds + 0.2


def test_full_fit_of_a_shared_kernel_cv_keeps_no_lent_matrix_and_round_trips(tmp_path):
    """The full-data fit of a shared-kernel CV is an ordinary fit: it predicts as the fit of a
    CV without sharing, holds no array of the n x n buffer, and survives save/load."""
    from cohstats.persist import load, save

    X, y = _data(80, seed=5)
    kw = {**BASE, "alpha": 0.5, "nlambda": 8}
    a = cv(clearn, X, y, nfolds=4, share_kernel=False, **kw)
    b = cv(clearn, X, y, nfolds=4, share_kernel=True, **kw)
    Xn = _data(30, seed=6)[0]
    pa = a.fit.predict(Xn, type="prob")
    pb = b.fit.predict(Xn, type="prob")
    np.testing.assert_allclose(pb, pa, rtol=0, atol=1e-12)
    n = X.shape[0]
    held = [v for v in vars(b.fit).values() if isinstance(v, np.ndarray) and v.shape == (n, n)]
    assert held == []
    path = tmp_path / "shared_full_fit.cohstats"
    save(b.fit, path)
    np.testing.assert_array_equal(load(path).predict(Xn, type="prob"), pb)
