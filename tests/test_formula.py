"""Formula front end: coding, formula features, and the bad-input tour."""

import numpy as np
import pandas as pd
import pytest

from cohstats.formula import build_design


@pytest.fixture
def df():
    rng = np.random.default_rng(1)
    n = 40
    return pd.DataFrame(
        {
            "y": rng.choice(["no", "yes"], n),
            "x1": rng.normal(size=n),
            "x2": rng.uniform(1, 3, size=n),
            "g": pd.Categorical(rng.choice(["a", "b", "c"], n), categories=["a", "b", "c"]),
            "h": rng.choice(["u", "v"], n),
        }
    )


def test_binary_coding_second_level_is_plus_one(df):
    d = build_design("y ~ x1", df)
    assert d.classes == ["no", "yes"]
    np.testing.assert_array_equal(d.y, np.where(df["y"] == "yes", 1.0, -1.0))
    assert d.X.dtype == np.float64 and d.X.flags.c_contiguous
    assert d.intercept and d.xnames == ["x1"]


def test_categorical_response_order_is_kept(df):
    df = df.assign(y=pd.Categorical(df["y"], categories=["yes", "no"]))
    d = build_design("y ~ x1", df)
    assert d.classes == ["yes", "no"]
    np.testing.assert_array_equal(d.y, np.where(df["y"] == "no", 1.0, -1.0))


def test_multiclass_codes(df):
    d = build_design("g ~ x1 + x2", df)
    assert d.classes == ["a", "b", "c"]
    np.testing.assert_array_equal(d.y, df["g"].cat.codes.to_numpy())
    assert d.y.dtype == np.int64


def test_dot_interactions_transforms_and_no_intercept(df):
    d = build_design("y ~ .", df)
    assert set(d.xnames) == {"x1", "x2", "g[T.b]", "g[T.c]", "h[T.v]"}
    d = build_design("y ~ x1 * h + np.log(x2) + I(x1 ** 2)", df)
    X = pd.DataFrame(d.X, columns=d.xnames)
    np.testing.assert_allclose(X["np.log(x2)"], np.log(df["x2"]))
    np.testing.assert_allclose(X["I(x1 ** 2)"], df["x1"] ** 2)
    np.testing.assert_allclose(X["x1:h[T.v]"], df["x1"] * (df["h"] == "v"))
    d0 = build_design("y ~ C(h) - 1", df)
    assert not d0.intercept
    # without an intercept the factor gets full-rank coding
    np.testing.assert_allclose(d0.X.sum(axis=1), 1.0)
    d0b = build_design("y ~ C(h) + 0", df)
    np.testing.assert_array_equal(d0.X, d0b.X)


def test_user_function_through_context(df):
    def twice(t):
        return 2 * t

    d = build_design("y ~ twice(x1)", df, context={"twice": twice})
    np.testing.assert_allclose(d.X[:, 0], 2 * df["x1"])


def test_missing_predictors_are_dropped_and_counted(df):
    df.loc[[2, 5], "x1"] = np.nan
    d = build_design("y ~ x1 + x2", df)
    assert d.nobs == len(df) - 2 and d.n_dropped == 2
    assert "x1" in next(iter(d.dropped))
    assert 2 not in list(d.row_labels) and 5 not in list(d.row_labels)
    with pytest.raises(ValueError, match=r"'x1' have missing values in 2 row\(s\) \(rows 2, 5\)"):
        build_design("y ~ x1 + x2", df, na_action="fail")
    with pytest.warns(FutureWarning, match="na_action='raise' is deprecated"):
        with pytest.raises(ValueError, match="x1.*missing"):
            build_design("y ~ x1 + x2", df, na_action="raise")


def test_duplicate_index_labels_drop_the_right_rows(df):
    df.index = [0] * len(df)
    df.iloc[3, df.columns.get_loc("x2")] = np.nan
    d = build_design("y ~ x2", df)
    np.testing.assert_allclose(d.X[:, 0], np.delete(df["x2"].to_numpy(), 3))


def test_new_X_reordered_columns_and_level_subset(df):
    d = build_design("y ~ x1 + g + h", df)
    nd = df.loc[df["g"] != "c", ["h", "g", "x1"]].copy()  # reordered, fewer levels
    nd["g"] = nd["g"].astype(str)  # plain strings, not categorical
    np.testing.assert_array_equal(d.new_X(nd), d.X[(df["g"] != "c").to_numpy()])


def test_weights_by_name_and_array(df):
    w = np.arange(len(df), dtype=float) + 1
    d1 = build_design("y ~ x1", df.assign(w=w), weights="w")
    d2 = build_design("y ~ x1", df, weights=w)
    np.testing.assert_array_equal(d1.weights, w)
    np.testing.assert_array_equal(d2.weights, w)
    assert "w" not in build_design("y ~ .", df.assign(w=w), weights="w").xnames


def test_subset(df):
    d = build_design("y ~ x1", df, subset=df["x2"] > 2)
    assert d.nobs == int((df["x2"] > 2).sum())
    d2 = build_design("y ~ x1", df, subset="x2 > 2")
    np.testing.assert_array_equal(d.X, d2.X)


def test_matrix_input(df):
    X = df[["x1", "x2"]].to_numpy()
    d = build_design(X, df["y"].to_numpy())
    assert d.xnames == ["x1", "x2"]
    np.testing.assert_array_equal(d.X, X)
    d2 = build_design(df[["x1", "x2"]], y=df["y"])
    assert d2.xnames == ["x1", "x2"] and d2.yname == "y"
    np.testing.assert_array_equal(d2.new_X(df[["x2", "x1"]]), X)


def test_take_keeps_classes_and_coding(df):
    d = build_design("g ~ x1", df)
    rows = np.flatnonzero(df["g"].to_numpy() != "b")
    t = d.take(rows)
    assert t.classes == ["a", "b", "c"]
    np.testing.assert_array_equal(t.y, d.y[rows])
    np.testing.assert_array_equal(d.code_y(["c", "a"]), [2, 0])


# ---------------------------------------------------------------- the bad-input tour
@pytest.mark.parametrize(
    "formula,match",
    [
        ("y ~ x1 + nope", "'nope'.*not in data"),
        ("nope ~ x1", "response 'nope' is not a column"),
        ("y ~ x1 ~ x2", "exactly one '~'"),
        ("y ~ y + x1", "also appears on the right"),
    ],
)
def test_bad_formulas(df, formula, match):
    with pytest.raises(ValueError, match=match):
        build_design(formula, df)


def test_one_class_response(df):
    with pytest.raises(ValueError, match="only one class"):
        build_design("y ~ x1", df.assign(y="yes"))


def test_missing_response(df):
    df.loc[[4, 7], "y"] = None
    with pytest.raises(ValueError, match=r"response 'y' has 2 missing value.*rows 4, 7"):
        build_design("y ~ x1", df, na_action="fail")
    d = build_design("y ~ x1", df)  # omit: the rows are dropped and counted
    assert d.nobs == len(df) - 2 and d.dropped == {"missing response (y)": 2}
    assert 4 not in list(d.row_labels) and 7 not in list(d.row_labels)
    dm = build_design(df[["x1"]], df["y"])  # matrix input alike
    assert dm.nobs == len(df) - 2 and dm.dropped == {"missing response (y)": 2}


def test_non_finite_predictor(df):
    df.loc[6, "x2"] = np.inf
    with pytest.raises(ValueError, match=r"'x2' has non-finite value.*inf.*rows 6"):
        build_design("y ~ x2", df)
    with pytest.raises(ValueError, match="non-finite"):
        build_design(df[["x1", "x2"]].to_numpy(), df["y"])


def test_transform_producing_nan(df):
    df.loc[3, "x1"] = -1.0
    with pytest.raises(ValueError, match=r"np.log\(x1\).*non-finite"):
        build_design(
            "y ~ np.log(x1)", df.assign(x1=df["x1"].abs() + 0.1).assign(x1=lambda d: d["x1"].where(d.index != 3, -1.0))
        )


def test_empty_after_dropping_na(df):
    with pytest.raises(ValueError, match="no rows left"):
        build_design("y ~ x1", df.assign(x1=np.nan))


def test_unseen_level_and_missing_column_at_predict(df):
    d = build_design("y ~ x1 + C(h)", df)
    with pytest.raises(ValueError, match=r"column 'h' has level\(s\) 'w' not seen in training"):
        d.new_X(pd.DataFrame({"x1": [0.0], "h": ["w"]}))
    with pytest.raises(ValueError, match=r"lacks column\(s\) 'h'"):
        d.new_X(pd.DataFrame({"x1": [0.0]}))
    with pytest.raises(ValueError, match="missing value"):
        d.new_X(pd.DataFrame({"x1": [np.nan], "h": ["u"]}))


@pytest.mark.parametrize(
    "w,match",
    [
        (-1.0, "non-negative.*-1.0"),
        (np.nan, "finite"),
        (np.inf, "finite"),
    ],
)
def test_bad_weights(df, w, match):
    weights = np.ones(len(df))
    weights[3] = w
    with pytest.raises(ValueError, match=match):
        build_design("y ~ x1", df, weights=weights)
    with pytest.raises(ValueError, match="length|one value per row"):
        build_design("y ~ x1", df, weights=np.ones(3))


def test_type_errors(df):
    with pytest.raises(TypeError, match="DataFrame"):
        build_design("y ~ x1", [1, 2, 3])
    with pytest.raises(TypeError, match="labels"):
        build_design(np.ones((3, 2)))
    with pytest.raises(TypeError, match="numeric"):
        build_design(df[["x1", "h"]], df["y"])
    with pytest.raises(ValueError, match="na_action"):
        build_design("y ~ x1", df, na_action="drop")
    with pytest.raises(ValueError, match="at most 2 classes"):
        build_design("g ~ x1", df, max_classes=2)


def test_dot_on_numeric_columns_equals_explicit_formula(df):
    num = df[["y", "x1", "x2"]].copy()
    num.loc[4, "x2"] = np.nan
    fast = build_design("y ~ .", num)
    slow = build_design("y ~ x1 + x2", num)
    np.testing.assert_array_equal(fast.X, slow.X)
    np.testing.assert_array_equal(fast.y, slow.y)
    assert fast.xnames == slow.xnames and fast.n_dropped == slow.n_dropped == 1
    assert list(fast.row_labels) == list(slow.row_labels)
    np.testing.assert_array_equal(fast.new_X(num.iloc[:3][["x2", "x1"]]), slow.new_X(num.iloc[:3]))
    assert not build_design("y ~ . - 1", num).intercept
    with pytest.raises(ValueError, match="lacks column"):
        fast.new_X(num[["x1"]])
