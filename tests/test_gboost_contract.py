"""The result contract of the boosting and CART fits: vocabulary, the step path (lambda_,
path_var, s, predict(s=), select, _decision_path), early stopping, plots and summaries."""

import matplotlib
import numpy as np
import pandas as pd
import pytest

from cohstats.models.cart import cart
from cohstats.models.gboost import gboost, gboost_c

matplotlib.use("Agg")


def toy(n=200, seed=0, K=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    eta = np.column_stack([np.zeros(n), 2 * X[:, 0] - X[:, 1], 2 * X[:, 2] - X[:, 0]])[:, :K]
    P = np.exp(eta) / np.exp(eta).sum(1, keepdims=True)
    y = np.array([rng.choice(K, p=p) for p in P])
    d = pd.DataFrame(X, columns=list("abcd"))
    d["y"] = np.array(list("PQR"))[y]
    return d


# ----------------------------------------------------------------------------- vocabulary
@pytest.mark.parametrize("old,new", [("T", "rho"), ("H", "n_trees"), ("z_max", "removed"), ("centre", "removed")])
def test_old_argument_names_raise_and_name_the_new_one(old, new):
    d = toy(40)
    for fn in (gboost_c, gboost):
        with pytest.raises(TypeError, match=f"'{old}'.*{new}"):
            fn("y ~ .", d, **{old: 1})
    with pytest.raises(TypeError, match="'alpha'.*ccp_alpha"):
        cart("y ~ .", d, alpha=0.01)
    with pytest.raises(TypeError, match="'alpha'.*ccp_alpha"):
        gboost("y ~ .", d, loss="cart", alpha=0.01)
    with pytest.raises(TypeError, match="unexpected keyword argument 'foo'"):
        gboost_c("y ~ .", d, foo=1)


def test_standardize_is_accepted_and_changes_nothing():
    d = toy(150, seed=1)
    a = gboost_c("y ~ .", d, n_trees=10, random_state=0)
    b = gboost_c("y ~ .", d, n_trees=10, standardize=True, random_state=0)
    np.testing.assert_array_equal(a.predict(d, type="prob"), b.predict(d, type="prob"))
    # the fit on centred and scaled predictors is the same fit: trees are invariant
    z = d.copy()
    z[list("abcd")] = (d[list("abcd")] - d[list("abcd")].mean()) / d[list("abcd")].std(ddof=0)
    c = gboost_c("y ~ .", z, n_trees=10, random_state=0)
    np.testing.assert_allclose(c.predict(z, type="prob"), a.predict(d, type="prob"), atol=1e-12)
    with pytest.raises(TypeError, match="standardize"):
        gboost_c("y ~ .", d, standardize="yes")
    ca = cart("y ~ .", d, random_state=0)
    cb = cart("y ~ .", d, standardize=True, random_state=0)
    np.testing.assert_array_equal(ca.predict(d), cb.predict(d))


# ----------------------------------------------------------------------------- step path
def test_step_path_attributes_and_staged_predictions():
    d, new = toy(200, seed=2), toy(100, seed=3)
    fit = gboost_c("y ~ .", d, n_trees=12, random_state=0)
    np.testing.assert_array_equal(fit.lambda_, np.arange(1, 13, dtype=float))
    assert fit.lambda_.dtype == np.float64 and fit.path_var == "step" and fit.s == 12
    assert fit.converged is True and isinstance(fit.n_iter, int)
    assert fit.coef is None and fit.dual_coef is None and fit.support_ is None
    D = fit._decision_path(fit.design.new_X(new))
    assert D.shape == (12, 100, 3)
    for k in (1, 5, 12):
        np.testing.assert_allclose(fit.predict(new, type="link", s=k).to_numpy(), D[k - 1], atol=1e-12)
        P = list(fit.staged_predict(new, type="prob"))[k - 1]
        np.testing.assert_allclose(fit.predict(new, type="prob", s=k), P, atol=1e-12)
        np.testing.assert_allclose(fit._proba_path(fit.design.new_X(new))[k - 1], P, atol=1e-12)
    # a fit with fewer trees is the staged prefix of a longer one
    short = gboost_c("y ~ .", d, n_trees=5, random_state=0)
    np.testing.assert_allclose(short.predict(new, type="link"), D[4], atol=1e-12)
    # select(s) gives the same predictions as predict(s=)
    sel = fit.select(5)
    assert sel.s == 5.0 and fit.s == 12
    np.testing.assert_array_equal(sel.predict(new, type="prob"), fit.predict(new, type="prob", s=5))
    assert "s (step used)" in sel.summary().info and sel.summary().info["s (step used)"] == 5
    # binary: the decision path is the binary margin g_2 - g_1
    b = toy(150, seed=4, K=2)
    fb = gboost_c("y ~ .", b, n_trees=6, random_state=0)
    Db = fb._decision_path(fb.design.X)
    assert Db.shape == (6, 150)
    np.testing.assert_allclose(Db[2], fb.predict(type="link", s=3), atol=1e-12)


@pytest.mark.parametrize(
    "bad,err",
    [
        (0, ValueError),
        (13, ValueError),
        (2.5, ValueError),
        (float("nan"), ValueError),
        ("abc", TypeError),
        (True, TypeError),
    ],
)
def test_predict_s_is_validated(bad, err):
    d = toy(80, seed=5)
    fit = gboost_c("y ~ .", d, n_trees=12, random_state=0)
    pat = r"s .boosting step.|s must be|outside the fitted step range"
    with pytest.raises(err, match=pat):
        fit.predict(d, type="prob", s=bad)
    with pytest.raises(err, match=pat):
        fit.select(bad)
    assert fit.predict(d, s=np.int64(3)).shape == (80,)
    assert fit.predict(d, s=3.0).equals(fit.predict(d, s=3))


def test_predict_takes_several_steps_select_one():
    d = toy(80, seed=5)
    fit = gboost_c("y ~ .", d, n_trees=12, random_state=0)
    # a sequence is several values at once for predict (one block of columns each), not for select
    P = fit.predict(d, type="prob", s=[3, 7])
    pd.testing.assert_frame_equal(P[3.0], fit.predict(d, type="prob", s=3), check_names=False)
    pd.testing.assert_frame_equal(P[7.0], fit.predict(d, type="prob", s=7), check_names=False)
    with pytest.raises(TypeError, match=r"s .boosting step. must be a whole number"):
        fit.select([3])


def test_path_plot_and_plot_label_what_they_draw():
    import matplotlib.pyplot as plt

    d, new = toy(150, seed=6), toy(100, seed=7)
    fit = gboost("y ~ .", d, loss="logit", n_trees=8, random_state=0)
    ax = fit.path(new).plot()
    assert ax.get_ylabel() == "loss"
    ys = [ln.get_ydata() for ln in ax.get_lines()]
    np.testing.assert_allclose(ys[0], fit.train_loss)
    np.testing.assert_allclose(ys[1], fit.path(new)["test_loss"])
    ax = fit.path(new).plot(columns=["train_error", "test_error"])
    assert ax.get_ylabel() == "error rate"
    assert fit.plot().get_ylabel() == "error rate"
    plt.close("all")


# ----------------------------------------------------------------------------- early stopping
def test_validation_fraction_and_early_stopping():
    d = toy(400, seed=8)
    full = gboost_c("y ~ .", d, n_trees=300, validation_fraction=0.25, random_state=0)
    assert full.n_trees == 300 and full.val_loss.shape == (300,)
    rows = full.validation_rows
    assert 90 <= len(rows) <= 110
    # stratified: each class keeps about its share in the validation part
    share = d["y"].value_counts(normalize=True).sort_index()
    np.testing.assert_allclose(d["y"].iloc[rows].value_counts(normalize=True).sort_index(), share, atol=0.03)
    # the recorded validation loss is the loss of the staged fit on the held-out rows
    from cohstats.losses.multiclass import coherence_loss

    Xv = full.design.X[rows]
    S = full._staged_margins(Xv)
    yv = full.design.y_int[rows]
    for k in (1, 50, 300):
        assert full.val_loss[k - 1] == pytest.approx(coherence_loss(S[k - 1], yv).mean(), rel=1e-10)
    assert full.s == int(np.argmin(full.val_loss)) + 1
    # with n_iter_no_change the same boosting stops n_iter_no_change steps after its best step
    es = gboost_c("y ~ .", d, n_trees=300, validation_fraction=0.25, n_iter_no_change=15, random_state=0)
    np.testing.assert_array_equal(es.validation_rows, rows)
    assert es.n_trees < 300 and es.stopped_early
    np.testing.assert_allclose(es.val_loss, full.val_loss[: es.n_trees], rtol=1e-12)
    best = np.minimum.accumulate(full.val_loss)
    assert es.s == int(np.argmin(full.val_loss[: es.n_trees])) + 1
    assert np.all(full.val_loss[es.n_trees - 15 : es.n_trees] >= best[es.n_trees - 16] - 1e-4)
    assert "early stopping" in " ".join(es.summary().notes)
    with pytest.raises(ValueError, match="validation_fraction"):
        gboost_c("y ~ .", d, validation_fraction=1.5)


# ----------------------------------------------------------------------------- CART
def test_cart_path_contract():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=300) > 0, "a", "b")
    fit = cart(X, y, random_state=0)
    assert fit.path_var == "ccp_alpha" and fit.lambda_.dtype == np.float64
    assert fit.lambda_[0] == 0.0 and np.all(np.diff(fit.lambda_) > 0)
    assert fit.s in fit.lambda_ and fit.ccp_alpha == fit.s
    assert fit.coef is None and fit.intercept is None and fit.converged is True
    # along the sequence the trees shrink, and the tree at ccp_alpha_k has the smallest
    # cost-complexity R(T) + ccp_alpha_k |T| among the trees of the sequence (R = weighted
    # training misclassification share, computed here from predict(s=))
    size = np.array([fit.select(a).n_leaves for a in fit.lambda_])
    assert np.all(np.diff(size) < 0) and size[-1] == 1
    R = np.array([(fit.predict(X, s=a).to_numpy() != y).mean() for a in fit.lambda_])
    np.testing.assert_allclose(R, fit.cv_table["train_error"], atol=1e-12)
    for k, a in enumerate(fit.lambda_):
        cc = R + a * size
        assert cc[k] <= cc.min() + 1e-12
    np.testing.assert_allclose(fit.cv_table["leaves"], size)
    # predict(s=) is honoured and validated
    assert fit.predict(X, s=fit.lambda_[-1]).nunique() == 1  # the root
    with pytest.raises(TypeError, match="ccp_alpha"):
        fit.predict(X, s="abc")
    with pytest.raises(ValueError, match="ccp_alpha"):
        fit.predict(X, s=-1.0)
    # a fixed ccp_alpha skips the choice
    f2 = cart(X, y, ccp_alpha=float(fit.lambda_[1]), random_state=0)
    assert f2.s == fit.lambda_[1]
    ax = fit.path().plot()
    assert ax.get_ylabel() == "error rate"
    assert fit.plot().get_ylabel().endswith("CV error rate")
    assert fit.summary().info["s (ccp_alpha)"] == fit.s
