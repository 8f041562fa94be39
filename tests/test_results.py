"""Result protocol: predict types and shapes, path interpolation, Summary renderers, save/load."""

import numpy as np
import pandas as pd
import pytest

from cohstats.formula import build_design
from cohstats.persist import register_class
from cohstats.results import Fit, PathFrame, Summary, interpolate_path, load


class LinearLogitFit(Fit):
    """A fixed linear-logistic model (p = expit(b0 + x'b)), a path over a scale factor."""

    method = "testfit"

    def __init__(self, design, b0, b, scales):
        super().__init__(design, {"scales": len(scales)})
        self.lambda_ = np.asarray(scales, dtype=float)
        self.s = float(self.lambda_[-1])
        self._coef_path = np.outer(self.lambda_, b)
        self._intercept_path = self.lambda_ * b0

    def _decision(self, X, s=None):
        c, b0 = self._coef_at(s)
        return X @ c + b0

    def _proba(self, X, s=None):
        return 1 / (1 + np.exp(-self._decision(X, s)))


register_class(LinearLogitFit)  # a test class: allowed in saved files in this process


class SoftmaxFit(Fit):
    method = "softmax"

    def __init__(self, design, W):
        super().__init__(design)
        self._coef = W
        self._intercept = np.zeros(W.shape[1])

    def _decision(self, X, s=None):
        return X @ self._coef

    def _proba(self, X, s=None):
        f = self._decision(X)
        e = np.exp(f - f.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)


@pytest.fixture
def df():
    rng = np.random.default_rng(3)
    return pd.DataFrame(
        {
            "y": rng.choice(["neg", "pos"], 25),
            "x1": rng.normal(size=25),
            "x2": rng.normal(size=25),
            "k": rng.choice(["a", "b", "c"], 25),
        }
    )


def test_predict_types_binary(df):
    d = build_design("y ~ x1 + x2", df)
    fit = LinearLogitFit(d, 0.5, np.array([1.0, -2.0]), [0.0, 0.5, 1.0])
    f = 0.5 + df["x1"] - 2 * df["x2"]
    np.testing.assert_allclose(fit.predict(type="link"), f)
    P = fit.predict(df, type="prob")
    assert list(P.columns) == ["neg", "pos"]
    np.testing.assert_allclose(P["pos"], 1 / (1 + np.exp(-f)))
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    cls = fit.predict(df)
    np.testing.assert_array_equal(cls.to_numpy(), np.where(f > 0, "pos", "neg"))
    # path: s interpolates linearly in the coefficients
    np.testing.assert_allclose(fit.predict(df, type="link", s=0.25), 0.25 * f)
    assert fit.coef.index.tolist() == ["x1", "x2"]
    assert fit.select(0.5).intercept == pytest.approx(0.25)
    paths = fit._decision_path(d.X)
    assert paths.shape == (3, 25)
    np.testing.assert_allclose(paths[1], 0.5 * f)
    with pytest.raises(ValueError, match="type must be one of"):
        fit.predict(type="probability")
    # "response" is R's name for the probabilities
    np.testing.assert_array_equal(fit.predict(df, type="response").to_numpy(), P.to_numpy())


def test_predict_multiclass_argmax_and_ties(df):
    d = build_design("k ~ x1 + x2 - 1", df)
    W = np.array([[1.0, 0.0, -1.0], [0.0, 1.0, 0.0]])
    fit = SoftmaxFit(d, W)
    F = fit.predict(type="link")
    assert list(F.columns) == ["a", "b", "c"]
    np.testing.assert_array_equal(fit.predict().to_numpy(), np.array(["a", "b", "c"])[np.argmax(d.X @ W, 1)])
    np.testing.assert_allclose(fit.predict(type="prob").sum(axis=1), 1.0)
    # a tie goes to the first class (SPEC D1)
    tie = SoftmaxFit(d, np.zeros((2, 3)))
    assert set(tie.predict()) == {"a"}
    assert fit.coef.shape == (2, 3)


def test_interpolate_path_matches_linear_interpolation():
    lam = np.array([1.0, 0.5, 0.1])
    vals = np.array([[0.0, 1.0], [1.0, 3.0], [5.0, 4.0]])
    np.testing.assert_allclose(interpolate_path(lam, vals, 0.75), [0.5, 2.0])
    np.testing.assert_allclose(interpolate_path(lam, vals, 0.3), [3.0, 3.5])
    np.testing.assert_allclose(interpolate_path(lam, vals, 5.0), vals[0])
    np.testing.assert_allclose(interpolate_path(lam, vals, 0.01), vals[2])


def test_summary_renderers():
    tab = pd.DataFrame({"estimate": [1.5, -0.25]}, index=["x_1", "x2"])
    s = Summary("My fit", {"lambda": 0.01, "converged": True}, {"Coefficients": tab}, ["a note"])
    text = str(s)
    assert "lambda" in text and "1.5" in text and "Note: a note" in text
    md = s.to_markdown()
    assert "| x_1 | 1.5 |" in md and "| converged | yes |" in md
    tex = s.to_latex()
    assert r"x\_1 & 1.5 \\" in tex and r"\begin{tabular}{lr}" in tex
    htm = s.to_html()
    assert "<h3>My fit</h3>" in htm and "-0.25" in htm
    pd.testing.assert_frame_equal(s.to_frame(), tab)


def test_pathframe_long_and_plot():
    import matplotlib

    matplotlib.use("Agg")
    pf = PathFrame.build(
        {"lambda": [1.0, 0.1], "df": [0, 2], "a": [0.0, 1.0], "b": [0.0, -2.0]}, xvar="lambda", coef_columns=["a", "b"]
    )
    long = pf.to_long()
    assert long.shape == (4, 4)
    assert long.loc[(long.step == 1) & (long.term == "b"), "estimate"].item() == -2.0
    sub = pf.iloc[:1]
    assert isinstance(sub, PathFrame) and sub.xvar == "lambda"
    ax = pf.plot()
    assert len(ax.get_lines()) >= 2


def test_save_load_roundtrip(df, tmp_path):
    d = build_design("y ~ x1 + x2", df)
    fit = LinearLogitFit(d, 0.5, np.array([1.0, -2.0]), [1.0])
    fit.save(tmp_path / "f.pkl")
    back = load(tmp_path / "f.pkl")
    pd.testing.assert_frame_equal(back.predict(df, type="prob"), fit.predict(df, type="prob"))
    with pytest.raises(TypeError, match="not a SoftmaxFit"):
        SoftmaxFit.load(tmp_path / "f.pkl")
    assert "testfit(y ~ x1 + x2)" in repr(fit)
