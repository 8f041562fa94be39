"""cv/tune (and the tuned LUM) lend one kernel matrix to the full-data and fold fits of the
kernel LUM when the kernel depends on the rows only (cohstats/tuning/shared.py), and a kernel
LUM fit holds one n x n matrix.

References: the same cross-validation with ``share_kernel=False``, where every fit computes its
own kernel matrix from its rows (the code path of an ordinary fit); the kernel matrix evaluated
afresh and multiplied by the fitted coefficients for the training decision values;
``tracemalloc`` for the memory held.
"""

from __future__ import annotations

import tracemalloc
import warnings

import numpy as np
import pytest

from cohstats.exceptions import ConvergenceWarning
from cohstats.formula import build_design
from cohstats.kernels import make_kernel
from cohstats.models.lum import lum, lum_link, lum_refit, tune_lum
from cohstats.solvers.cd.kernel import LentKernel
from cohstats.tuning import cv, tune
from cohstats.tuning.cv import _shared_groups
from cohstats.tuning.shared import SharedKernel
import test_cv_shared_kernel as _clearn_shared

BASE = dict(kernel="rbf", gamma=0.5, standardize=False, verbose=False, random_state=1)
kernel_calls = _clearn_shared.kernel_calls  # the fixture counting kernel evaluations
_both = _clearn_shared._both  # a tuner run with share_kernel=False, then True
LAMS = np.geomspace(10.0, 1e-3, 10)


@pytest.fixture(autouse=True)
def _quiet():
    # small separable folds: the refitted LUM adds its ridge and says so, in both routes alike
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        yield


def _data(n, seed=0, p=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    y = np.where(X[:, 0] * X[:, 1] + 0.3 * rng.normal(size=n) > 0, "a", "b")
    return X, y


@pytest.mark.parametrize(
    "extra",
    [
        dict(),  # soft LUM, ridge: damped Newton, the default lambda grid
        dict(c=1e4, alpha=0.5, lambda_=LAMS),  # hard LUM, elastic net: coordinate descent
        dict(c=1.0, a=1.0, kernel="poly", gamma=None, degree=2, lambda_=LAMS),  # DWD, polynomial kernel
    ],
)
def test_cv_of_the_kernel_lum_with_a_shared_kernel_equals_cv_with_a_kernel_per_fit(kernel_calls, extra):
    X, y = _data(70, seed=2)
    kw = {**BASE, "measure": "class", **extra}
    a, b, n_plain, n_shared = _both(kernel_calls, cv, lum, X, y, nfolds=5, **kw)
    assert n_plain == 1 + 2 * 5  # the full fit, and a training and a held-out matrix per fold
    assert n_shared == 1  # one matrix for everything
    np.testing.assert_array_equal(a.lambda_, b.lambda_)
    np.testing.assert_array_equal(a.fit._coefs, b.fit._coefs)  # the full-data fit is bitwise the same
    np.testing.assert_allclose(b.fold_values, a.fold_values, rtol=0, atol=1e-10)
    np.testing.assert_allclose(b.cvm, a.cvm, rtol=0, atol=1e-10)
    assert (a.index_min, a.index_1se) == (b.index_min, b.index_1se)
    Xn = _data(25, seed=3)[0]
    np.testing.assert_array_equal(b.predict(Xn, type="prob"), a.predict(Xn, type="prob"))


@pytest.mark.parametrize("c, alpha", [(0.0, 0.0), (0.0, 0.5), (1e4, 0.5)])
def test_fold_fits_on_lent_blocks_match_fits_on_their_own_rows(c, alpha):
    """Decision values of every fold fit on the held-out rows, along the path, to 1e-10."""
    X, y = _data(60, seed=4)
    design = build_design(X, y)
    kw = dict(kernel="rbf", gamma=0.5, standardize=False, c=c, alpha=alpha, lambda_=LAMS)
    sk = SharedKernel(make_kernel("rbf", X, gamma=0.5), design.X)
    foldid = np.arange(60) % 4
    for k in range(4):
        tr, te = np.flatnonzero(foldid != k), np.flatnonzero(foldid == k)
        with sk.lend_rows(tr, te) as lent:
            shared = lum(design.take(tr), _gram=lent, **kw)
        Xte = design.X[te]
        shared._cross_kernel = (Xte, sk.cross(te, tr))
        own = lum(design.take(tr), **kw)
        np.testing.assert_allclose(shared._decision_path(Xte), own._decision_path(Xte), rtol=0, atol=1e-10)
        # the refitted-LUM probabilities: the refit is solved to its own tolerance (1e-10 in the
        # gradient), so they agree to that tolerance, amplified where a fold is nearly separable
        np.testing.assert_allclose(shared._proba_path(Xte), own._proba_path(Xte), rtol=0, atol=1e-6)


def test_a_kernel_lum_fit_keeps_its_training_decision_values():
    """The training decision values read from the prepared kernel equal K beta + b with K
    evaluated afresh, and the refitted-LUM probabilities built on them are those of the refit
    of the fresh decision values."""
    X, y = _data(80, seed=5)
    fit = lum(X, y, kernel="rbf", gamma=0.4, standardize=False, lambda_=LAMS)
    K = make_kernel("rbf", X, gamma=0.4)(X, X)
    ref = fit._coefs @ K + fit._intercepts[:, None]
    np.testing.assert_allclose(fit._decision_path(fit._Xtr), ref, rtol=0, atol=1e-12)
    s = float(np.sqrt(LAMS[3] * LAMS[4]))  # between two fitted lambdas: interpolated
    beta, b0 = fit._coef_at(s)
    np.testing.assert_allclose(fit._decision(fit._Xtr, s), K @ beta + b0, rtol=0, atol=1e-12)
    Xn = _data(20, seed=6)[0]
    r = lum_refit(K @ beta + b0, fit._ytr, fit.a, fit._wtr, warn=False)
    f_new = make_kernel("rbf", X, gamma=0.4)(Xn, X) @ beta + b0
    expected = lum_link(r["g0"] + r["g1"] * f_new, fit.a, 0.0)
    np.testing.assert_allclose(fit.predict(Xn, type="prob", s=s).iloc[:, 1], expected, rtol=0, atol=1e-9)


def test_a_kernel_lum_fit_evaluates_and_holds_one_n_by_n_matrix(kernel_calls):
    n = 400
    X, y = _data(n, seed=7)
    kw = dict(kernel="rbf", gamma=0.5, standardize=False, c=0.0, alpha=0.5, lambda_=LAMS[:4], tol=1e-5)
    warm = lum(X[:40], y[:40], **kw)  # compiled and imported before measuring
    warm.predict(X[:5], type="prob"), warm.path(), warm.margin_stats()
    kernel_calls.clear()
    tracemalloc.start()
    fit = lum(X, y, **kw)
    fit_peak = tracemalloc.get_traced_memory()[1] / (8.0 * n * n)
    tracemalloc.reset_peak()
    fit.predict(X[:50], type="prob")  # refitted LUM: needs the training decision values
    fit.path()
    fit.margin_stats()
    pred_peak = tracemalloc.get_traced_memory()[1] / (8.0 * n * n)
    tracemalloc.stop()
    assert kernel_calls == [(n, None), (50, n)]  # the training matrix once; the new rows' kernel
    assert fit_peak < 1.15  # one n x n matrix, prepared in place, plus O(n) per lambda
    assert pred_peak < 0.5  # no training matrix again (it would be 1.0)
    held = [v for v in vars(fit).values() if isinstance(v, np.ndarray) and v.size >= n * n]
    assert held == []


def test_shared_cv_of_the_kernel_lum_holds_no_second_matrix():
    n, nfolds = 400, 10
    X, y = _data(n, seed=8)
    kw = {**BASE, "lambda_": LAMS[:4], "nfolds": nfolds, "tol": 1e-5}
    cv(lum, X[:50], y[:50], **kw)  # compiled and imported before measuring
    cv(lum, X[:250], y[:250], **kw)  # and the dual route of the ridge LUM (fits above 200 points)
    peaks = {}
    for share in (False, True):
        tracemalloc.start()
        cv(lum, X, y, share_kernel=share, **kw)
        peaks[share] = tracemalloc.get_traced_memory()[1] / (8.0 * n * n)
        tracemalloc.stop()
    # the pure ridge LUM (fold fits of 360 points) runs dual coordinate ascent, whose Newton
    # rounds form at most an (|F|+1) x (|F|+1) system beside the kernel (below 2 n^2 per fit,
    # as the damped Newton route needed); sharing adds the held-out rows of one fold
    # (1/nfolds of the matrix), never a second matrix (a copied training block would add 0.81)
    assert peaks[False] < 2.3
    assert peaks[True] < peaks[False] + 1.0 / nfolds + 0.1


def test_full_fit_of_a_shared_kernel_cv_round_trips(tmp_path):
    from cohstats.persist import load, save

    X, y = _data(70, seed=9)
    kw = {**BASE, "lambda_": LAMS}
    a = cv(lum, X, y, nfolds=4, share_kernel=False, **kw)
    b = cv(lum, X, y, nfolds=4, share_kernel=True, **kw)
    Xn = _data(30, seed=10)[0]
    pb = b.fit.predict(Xn, type="prob")
    np.testing.assert_array_equal(pb, a.fit.predict(Xn, type="prob"))
    n = X.shape[0]
    assert [v for v in vars(b.fit).values() if isinstance(v, np.ndarray) and v.shape == (n, n)] == []
    path = tmp_path / "shared_lum.cohstats"
    save(b.fit, path)
    back = load(path)
    np.testing.assert_array_equal(back.predict(Xn, type="prob"), pb)
    np.testing.assert_array_equal(back.predict(Xn, type="prob", s=LAMS[2]), b.fit.predict(Xn, type="prob", s=LAMS[2]))


def test_the_tuned_lum_uses_one_matrix_for_every_c_and_every_fold(kernel_calls):
    X, y = _data(60, seed=11)
    kw = dict(kernel="rbf", gamma=0.5, standardize=False)
    kernel_calls.clear()
    fit = tune_lum(X, y, lambda_=LAMS, nfolds=4, random_state=3, **kw)
    assert len(kernel_calls) == 1  # c in {0, 1e4} x 4 folds + 2 full fits: one matrix
    kernel_calls.clear()
    ref = tune(
        lum,
        X,
        y,
        grid={"c": [0.0, 1e4], "lambda_": LAMS},
        method="cv",
        nfolds=4,
        random_state=3,
        measure="class",
        verbose=False,
        a=1000.0,
        share_kernel=False,
        **kw,
    )
    assert len(kernel_calls) == 2 * (1 + 2 * 4)
    np.testing.assert_allclose(fit.tuning["error"], ref.table["score"], rtol=0, atol=1e-10)
    assert fit.c_selected == ref.best_params["c"]
    assert fit.s == ref.best_fit.s
    # and through lum(c="tuned")
    again = lum(X, y, c="tuned", lambda_=LAMS, nfolds=4, random_state=3, **kw)
    assert (again.c_selected, again.s) == (fit.c_selected, fit.s)
    np.testing.assert_array_equal(again.tuning["error"], fit.tuning["error"])


def test_the_tuned_lum_with_a_validation_sample_shares_one_matrix_for_every_c(kernel_calls):
    X, y = _data(70, seed=14)
    Xv, yv = _data(40, seed=15)
    kw = dict(kernel="rbf", gamma=0.5, standardize=False)
    kernel_calls.clear()
    fit = tune_lum(X, y, lambda_=LAMS, validation=(Xv, yv), **kw)
    assert sorted(kernel_calls, key=str) == [(40, 70), (40, 70), (70, 70)]  # one training matrix
    kernel_calls.clear()
    grid = {"c": [0.0, 1e4], "lambda_": LAMS}
    common = dict(grid=grid, method="holdout", validation=(Xv, yv), measure="class", verbose=False, a=1000.0, **kw)
    ref = tune(lum, X, y, share_kernel=False, **common)
    assert len(kernel_calls) == 4  # a training matrix and a validation matrix per c
    np.testing.assert_allclose(fit.tuning["error"], ref.table["score"], rtol=0, atol=1e-10)
    assert (fit.c_selected, fit.s) == (ref.best_params["c"], ref.best_fit.s)
    shared = tune(lum, X, y, **common)
    np.testing.assert_array_equal(ref.fits[0]._coefs, shared.fits[0]._coefs)  # c = 0: the fresh matrix
    # c = 1e4 gets the matrix restored after the first fit (a unit in the last place off); its
    # ridge is solved by damped Newton steps to the solver's tolerance, which bounds the difference
    Xv = np.asarray(Xv, dtype=np.float64)
    np.testing.assert_allclose(shared.fits[1]._decision_path(Xv), ref.fits[1]._decision_path(Xv), rtol=0, atol=1e-6)


@pytest.mark.parametrize(
    "refused",
    [dict(standardize=True), dict(gamma="scale"), dict(gamma="median"), dict(gamma=None)],
)
def test_sharing_is_refused_where_the_folds_use_different_kernels(kernel_calls, refused):
    X, y = _data(60, seed=12)
    kw = {**BASE, "lambda_": LAMS[:6], **refused}
    design = build_design(X, y)
    assert _shared_groups(lum, design, [kw], None, True) == {}
    a, b, n_plain, n_shared = _both(kernel_calls, cv, lum, X, y, nfolds=3, **kw)
    assert n_plain == n_shared == 1 + 2 * 3  # silently the per-fold route
    np.testing.assert_array_equal(b.fold_values, a.fold_values)
    np.testing.assert_array_equal(b.fit._coefs, a.fit._coefs)


def test_other_refusals_and_a_wrong_lent_matrix():
    X, y = _data(40, seed=13)
    design = build_design(X, y)
    groups = lambda args, n_jobs=None: _shared_groups(lum, design, [args], n_jobs, True)  # noqa: E731
    assert (
        groups(dict(BASE)) and groups({**BASE, "gamma": "auto"}) and groups({**BASE, "kernel": "linear", "gamma": None})
    )
    assert not groups({**BASE, "c": "tuned"})  # the tuned LUM runs its own tuner
    assert not groups({**BASE, "kernel_approx": "nystroem"})
    assert not groups({"standardize": False})  # linear model
    assert not groups(dict(BASE), n_jobs=2)  # parallel workers: each fit its own kernel
    y3 = np.array(["a", "b", "c"])[np.arange(40) % 3]
    assert not _shared_groups(lum, build_design(X, y3), [dict(BASE)], None, True)  # K = 3: no kernel LUM
    ker = make_kernel("rbf", X, gamma=0.5)
    K = ker(X, X)
    with pytest.raises(ValueError, match="not the kernel of these inputs"):
        lum(X, y, kernel="rbf", gamma=0.25, standardize=False, _gram=LentKernel(K.copy(), ker, X), lambda_=1.0)
    with pytest.raises(ValueError, match="not the kernel of these inputs"):
        lum(X, y, kernel="rbf", gamma=0.5, _gram=LentKernel(K.copy(), ker, X), lambda_=1.0)
    with pytest.raises(ValueError, match="exact kernel expansion"):
        lum(X, y, _gram=LentKernel(K.copy(), ker, X), lambda_=1.0)
