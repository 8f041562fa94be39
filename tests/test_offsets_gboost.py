"""Offsets in binary GentleBoost.C (and MulLogitBoost), ``f(x) = offset + F(x)``: the offset is
the initial score of every row. Boosting from the offset ``o = F_A(x)`` of a first fit ``A``
continues exactly as the longer fit that boosted through ``A``'s rounds; validation losses and
predictions on new data add the offsets of their rows."""

import numpy as np
import pandas as pd
import pytest

import cohstats as cs


@pytest.fixture(scope="module")
def df():
    rng = np.random.default_rng(7)
    n = 300
    d = pd.DataFrame({"x1": rng.normal(size=n), "x2": rng.normal(size=n), "x3": rng.normal(size=n)})
    eta = np.sin(2 * d["x1"]) + d["x2"] * d["x3"]
    d["y"] = np.where(rng.uniform(size=n) < 1 / (1 + np.exp(-2 * eta)), "b", "a")
    return d


KW = dict(nodes=4, shrinkage=0.5, init="zero", init_beta="loss", random_state=-1)


@pytest.mark.parametrize("fn,extra", [(cs.gboost_c, dict(rho=2.0)), (cs.gboost, dict(loss="logit"))])
def test_boosting_from_an_offset_continues_the_boosting_that_produced_it(df, fn, extra):
    A = fn("y ~ x1 + x2 + x3", df, n_trees=6, **KW, **extra)
    C = fn("y ~ x1 + x2 + x3", df, n_trees=14, **KW, **extra)
    d = df.assign(o=A.predict(df, type="link").to_numpy())
    B = fn("y ~ x1 + x2 + x3 + offset(o)", d, n_trees=8, **KW, **extra)
    np.testing.assert_allclose(B.train_loss, C.train_loss[6:], rtol=1e-10)
    np.testing.assert_allclose(B.train_error, C.train_error[6:], atol=1e-12)
    rng = np.random.default_rng(1)
    new = pd.DataFrame(rng.normal(size=(25, 3)), columns=["x1", "x2", "x3"])
    new_o = new.assign(o=A.predict(new, type="link").to_numpy())
    np.testing.assert_allclose(B.predict(new_o, type="link"), C.predict(new, type="link"), atol=1e-10)
    np.testing.assert_allclose(B.predict(new_o, type="prob"), C.predict(new, type="prob"), atol=1e-10)
    assert list(B.predict(new_o)) == list(C.predict(new))
    # an earlier step: the offset plus the first trees of B
    np.testing.assert_allclose(B.predict(new_o, type="prob", s=3), C.predict(new, type="prob", s=9), atol=1e-10)
    staged = list(B.staged_predict(new_o, type="link"))
    np.testing.assert_allclose(staged[2], C.predict(new, type="link", s=9), atol=1e-10)
    # offset= as an array: the same fit, and new data need their offsets
    arr = fn("y ~ x1 + x2 + x3", df, n_trees=8, offset=d["o"].to_numpy(), **KW, **extra)
    np.testing.assert_allclose(
        arr.predict(new, type="link", offset=new_o["o"].to_numpy()), B.predict(new_o, type="link"), atol=1e-12
    )
    with pytest.raises(ValueError, match="needs their offsets"):
        arr.predict(new)


def test_validation_loss_uses_the_offsets_of_the_validation_rows(df):
    rho = 1.5
    d = df.assign(o=np.linspace(-1.5, 1.5, len(df)))
    fit = cs.gboost_c("y ~ x1 + x2 + offset(o)", d, n_trees=5, rho=rho, validation_fraction=0.25, **KW)
    rows = fit.validation_rows
    y = np.where(d["y"].to_numpy()[rows] == "b", 1.0, -1.0)
    for k in range(1, 6):
        f = fit.predict(d.iloc[rows], type="link", s=k).to_numpy()
        # binary coherence loss at margins (-f/2, f/2): rho log(1 + exp((1 - y f)/rho))
        want = np.mean(rho * np.logaddexp(0.0, (1.0 - y * f) / rho))
        assert fit.val_loss[k - 1] == pytest.approx(want, rel=1e-10)


def test_refusals(df):
    d = df.assign(o=0.3, z=np.array(["p", "q", "r"])[np.arange(len(df)) % 3])
    with pytest.raises(ValueError, match="more than two classes"):
        cs.gboost_c("z ~ x1 + offset(o)", d, n_trees=2)
    with pytest.raises(ValueError, match="AdaBoost.MH"):
        cs.gboost("y ~ x1 + offset(o)", d, loss="adaboost_mh", n_trees=2)
    with pytest.raises(ValueError, match="class frequencies"):
        cs.gboost("y ~ x1", d, loss="cart", offset=d["o"].to_numpy())
    fit = cs.gboost_c("y ~ x1 + offset(o)", d, n_trees=2)
    with pytest.raises(ValueError, match="staged_predict"):
        fit.path(d)
