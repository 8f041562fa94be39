"""One frozen settings object per fit function (``cohstats.validation.Settings``).

The front door validates a call once into a frozen dataclass generated from the fit function's
signature; the result carries it (``fit.settings``), it survives ``save``/``load``, the tuners
refit folds from it, and the scikit-learn wrappers take their parameters from it.
"""

from __future__ import annotations

import dataclasses
import inspect

import numpy as np
import pytest

import cohstats as cs
from cohstats.datasets import make_wsl2
from cohstats.validation import DESIGN_ARGS, Settings

FIT_FUNCTIONS = ["clearn", "lum", "svm", "psi_learn", "lamsvm", "gboost", "gboost_c", "cart"]
SMALL = {"gboost": {"n_trees": 5}, "gboost_c": {"n_trees": 5}}


@pytest.fixture(scope="module")
def data():
    return make_wsl2(80, random_state=3)


@pytest.mark.parametrize("name", FIT_FUNCTIONS)
def test_fields_are_the_signature(name):
    """One field per keyword argument, with its default; data arguments are not fields."""
    fn = getattr(cs, name)
    sig = inspect.signature(fn)
    want = {
        k: p.default
        for k, p in sig.parameters.items()
        if p.kind == p.KEYWORD_ONLY and k not in DESIGN_ARGS and k != "verbose"
    }
    fields = {f.name: f.default for f in dataclasses.fields(fn.Settings)}
    assert list(fields) == list(want)
    for k, v in want.items():
        assert fields[k] is v or fields[k] == v
    assert issubclass(fn.Settings, Settings) and fn.Settings.__name__.endswith("Settings")


@pytest.mark.parametrize("name", FIT_FUNCTIONS)
def test_fit_carries_its_settings_and_they_survive_save_load(name, data, tmp_path):
    fn = getattr(cs, name)
    kw = SMALL.get(name, {})
    fit = fn("y ~ x1 + x2", data, **kw)
    assert isinstance(fit.settings, fn.Settings)
    assert fit.settings == fn.settings(**kw)
    assert fit.settings.changed() == kw
    path = tmp_path / f"{name}.csf"
    fit.save(path)
    back = cs.load(path)
    assert type(back.settings) is fn.Settings and back.settings == fit.settings


def test_settings_are_frozen_and_checked():
    s = cs.clearn.settings(alpha=0.5, lambda_=[0.1, 0.01])
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.alpha = 0.2
    with pytest.raises(ValueError, match=r"clearn\(alpha=\.\.\.\) must be a real number in \[0, 1\]; got 2"):
        s.replace(alpha=2)
    with pytest.raises(TypeError, match="'omega': it is called 'alpha'"):
        cs.clearn.settings(omega=0.5)
    with pytest.raises(TypeError, match="'alpha': the cost-complexity parameter is now called 'ccp_alpha'"):
        cs.cart.settings(alpha=0.01)
    t = s.replace(alpha=0.25)
    assert (s.alpha, t.alpha) == (0.5, 0.25)
    assert s == cs.clearn.settings(alpha=0.5, lambda_=np.array([0.1, 0.01]))
    assert s != t
    assert s.as_dict()["nlambda"] == 100 and repr(s).startswith("ClearnSettings(alpha=0.5")


def test_a_call_with_settings_equals_the_call_with_keywords(data):
    a = cs.clearn("y ~ x1 + x2", data, alpha=0.5, lambda_=[0.1, 0.01])
    b = cs.clearn("y ~ x1 + x2", data, _settings=a.settings)
    np.testing.assert_array_equal(a.predict(data, type="link"), b.predict(data, type="link"))
    c = cs.clearn("y ~ x1 + x2", data, _settings=a.settings, alpha=1.0)
    assert c.settings == a.settings.replace(alpha=1.0)
    with pytest.raises(TypeError, match="must be a ClearnSettings"):
        cs.clearn("y ~ x1 + x2", data, _settings=cs.lum.settings())
    with pytest.raises(ValueError, match=r"clearn\(alpha=\.\.\.\)"):
        cs.clearn("y ~ x1 + x2", data, _settings=a.settings, alpha=-1.0)


def test_a_file_saved_without_settings_loads(data, tmp_path):
    """Files written before fits carried their settings load with ``settings`` None."""
    fit = cs.svm.__wrapped__("y ~ x1 + x2", data, _settings=cs.svm.settings())  # the body alone: none attached
    assert "settings" not in vars(fit)
    fit.save(tmp_path / "old.csf")
    back = cs.load(tmp_path / "old.csf")
    assert back.settings is None
    np.testing.assert_array_equal(back.predict(data, type="link"), fit.predict(data, type="link"))


def test_cv_refits_folds_from_the_settings(data):
    """The fold fits of cv() rerun the full fit's settings with its lambda sequence: the same
    curve as a user's own fit function that receives the keywords."""

    def by_keywords(design, **kw):  # no declared settings: the tuner passes keywords
        fit = cs.clearn(design, **kw)
        return fit._derive(settings=None)

    a = cs.cv(
        cs.clearn, "y ~ x1 + x2", data, nfolds=4, foldid=np.arange(80) % 4, measure="deviance", alpha=0.5, nlambda=20
    )
    b = cs.cv(
        by_keywords, "y ~ x1 + x2", data, nfolds=4, foldid=np.arange(80) % 4, measure="deviance", alpha=0.5, nlambda=20
    )
    np.testing.assert_allclose(a.cvm, b.cvm, rtol=1e-12)
    assert a.fit.settings == cs.clearn.settings(alpha=0.5, nlambda=20)
    calls = []

    def recording(design, **kw):
        calls.append(kw)
        return cs.clearn(design, **kw)

    c = cs.cv(recording, "y ~ x1 + x2", data, nfolds=4, foldid=np.arange(80) % 4, measure="deviance", alpha=0.5)
    np.testing.assert_allclose(c.cvm, cs.cv(cs.clearn, "y ~ x1 + x2", data, foldid=np.arange(80) % 4, alpha=0.5).cvm)
    assert calls[0] == {"alpha": 0.5}  # the full fit: the caller's keywords
    for kw in calls[1:]:  # the folds: the full fit's settings along its lambda sequence
        assert list(kw) == ["_settings"]
        assert kw["_settings"] == c.fit.settings.replace(lambda_=c.fit.lambda_)
    assert len(calls) == 5


def test_sklearn_parameters_are_the_settings():
    from cohstats import sklearn as cks

    for cls, fn in [
        (cks.CLearnClassifier, cs.clearn),
        (cks.LUMClassifier, cs.lum),
        (cks.WeightedSVMClassifier, cs.svm),
        (cks.LambdaSVMClassifier, cs.lamsvm),
        (cks.GentleBoostCClassifier, cs.gboost_c),
    ]:
        params = cls().get_params()
        fields = {f.name: f.default for f in dataclasses.fields(fn.Settings)}
        for k in cls._fit_params:
            want = cls._defaults.get(k, fields[k])
            assert params[k] is want or params[k] == want, (cls.__name__, k)
        assert set(params) == set(cls._fit_params) | set(cls._own_params)
    est = cks.CLearnClassifier(lambda_=0.01, alpha=0.5)
    d = make_wsl2(60, random_state=1)
    est.fit(d[["x1", "x2"]], d["y"])
    assert est.fit_.settings.lambda_ == 0.01 and est.fit_.settings.alpha == 0.5
    with pytest.raises(TypeError, match="'lam': it is called 'lambda_'"):
        cks.CLearnClassifier(lam=0.1)


def test_gboost_declares_the_pruning_arguments_it_forwards_to_cart(data):
    fit = cs.gboost("y ~ x1 + x2", data, loss="cart", nfolds=4, random_state=0)
    assert fit.settings == cs.gboost.settings(loss="cart", nfolds=4, random_state=0)
    same = cs.cart("y ~ x1 + x2", data, nfolds=4, random_state=0)
    assert fit.s == same.s and fit.n_leaves == same.n_leaves
    with pytest.raises(ValueError, match=r"gboost\(nfolds=\.\.\.\) must be an integer >= 2; got 1"):
        cs.gboost("y ~ x1 + x2", data, loss="cart", nfolds=1)
    with pytest.raises(ValueError, match="ccp_alpha apply to loss='cart' only"):
        cs.gboost("y ~ x1 + x2", data, ccp_alpha=0.01, n_trees=3)
