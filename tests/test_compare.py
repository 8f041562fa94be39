"""Tests of cohstats.reporting: error intervals and McNemar tests against statsmodels (and closed
forms), the comparison table against statsmodels / scikit-learn on the same predictions."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.proportion import proportion_confint

import cohstats as cs
from cohstats.datasets import make_waveform, make_wsl2
from cohstats.reporting import compare, error_ci, mcnemar_test
from cohstats.results import Summary


# ----------------------------------------------------------------------------- error_ci
@pytest.mark.parametrize("errors,n", [(0, 20), (3, 20), (12, 100), (48, 900), (900, 900)])
def test_error_ci_equals_statsmodels_and_closed_forms(errors, n):
    for level in (0.9, 0.95):
        lo, hi = error_ci(errors, n, level=level)
        slo, shi = proportion_confint(errors, n, alpha=1 - level, method="wilson")
        assert (lo, hi) == pytest.approx((slo, shi), abs=1e-14)
        # Wilson's score interval in closed form
        z = stats.norm.ppf(0.5 + level / 2)
        p = errors / n
        centre = (p + z * z / (2 * n)) / (1 + z * z / n)
        half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
        assert lo == pytest.approx(max(centre - half, 0.0), abs=1e-12)
        assert hi == pytest.approx(min(centre + half, 1.0), abs=1e-12)
        # Clopper-Pearson from beta quantiles
        elo, ehi = error_ci(errors, n, level=level, method="exact")
        blo = 0.0 if errors == 0 else stats.beta.ppf((1 - level) / 2, errors, n - errors + 1)
        bhi = 1.0 if errors == n else stats.beta.ppf(0.5 + level / 2, errors + 1, n - errors)
        assert (elo, ehi) == pytest.approx((blo, bhi), abs=1e-10)


def test_error_ci_vectorised_and_bad_input():
    lo, hi = error_ci([1, 5], [10, 50])
    slo, shi = proportion_confint(np.array([1, 5]), np.array([10, 50]), method="wilson")
    np.testing.assert_allclose(lo, slo, rtol=1e-14)
    np.testing.assert_allclose(hi, shi, rtol=1e-14)
    with pytest.raises(ValueError, match="errors"):
        error_ci(11, 10)
    with pytest.raises(ValueError, match="n must be"):
        error_ci(0, 0)
    with pytest.raises(ValueError, match="level"):
        error_ci(1, 10, level=95)
    with pytest.raises(ValueError, match="method"):
        error_ci(1, 10, method="bootstrap")


# ----------------------------------------------------------------------------- McNemar
def test_mcnemar_equals_statsmodels_and_binomial():
    rng = np.random.default_rng(0)
    a = rng.random(200) < 0.8
    b = np.where(rng.random(200) < 0.1, ~a, a)  # few discordant pairs -> exact
    r = mcnemar_test(a, b)
    n01, n10 = int(np.sum(a & ~b)), int(np.sum(~a & b))
    assert (r["n01"], r["n10"]) == (n01, n10) and n01 + n10 < 25
    table = [[np.sum(a & b), n01], [n10, np.sum(~a & ~b)]]
    assert r["pvalue"] == pytest.approx(mcnemar(table, exact=True).pvalue, rel=1e-12)
    assert r["pvalue"] == pytest.approx(stats.binomtest(n01, n01 + n10, 0.5).pvalue, rel=1e-10)
    assert r["test"] == "exact binomial"
    # many discordant pairs -> chi-square with continuity correction
    c = np.where(rng.random(200) < 0.4, ~a, a)
    r = mcnemar_test(a, c)
    m01, m10 = int(np.sum(a & ~c)), int(np.sum(~a & c))
    assert m01 + m10 >= 25
    chi2 = (abs(m01 - m10) - 1) ** 2 / (m01 + m10)
    assert r["statistic"] == pytest.approx(chi2, rel=1e-12)
    assert r["pvalue"] == pytest.approx(stats.chi2.sf(chi2, 1), rel=1e-10)
    assert mcnemar_test(a, c, exact=True)["pvalue"] == pytest.approx(
        stats.binomtest(m01, m01 + m10, 0.5).pvalue, rel=1e-10
    )
    with pytest.raises(ValueError, match="same test cases"):
        mcnemar_test(a, c[:-1])


# ----------------------------------------------------------------------------- compare
@pytest.fixture(scope="module")
def readme_fits():
    # the README example: WSL model 2, 100 training and 900 test points
    train, test = make_wsl2(100, random_state=1), make_wsl2(900, random_state=2)
    fits = {
        "clearn linear": cs.clearn("y ~ x1 + x2", data=train, lambda_=0.01),
        "clearn rbf": cs.clearn("y ~ x1 + x2", data=train, kernel="rbf", alpha=0.5, lambda_=0.01),
        "lum": cs.lum("y ~ x1 + x2", data=train, lambda_=0.01),
    }
    return fits, test


def test_compare_binary_matches_statsmodels_and_sklearn(readme_fits):
    from sklearn.metrics import brier_score_loss, log_loss, roc_auc_score

    fits, test = readme_fits
    s = compare(fits, test)
    assert isinstance(s, Summary)
    perf, mc = s.tables["Test performance"], s.tables["McNemar tests"]
    assert list(perf.index) == list(fits)
    y = test["y"].to_numpy()
    correct = {}
    for nm, f in fits.items():
        pred = f.predict(test, type="class").to_numpy()
        correct[nm] = pred == y
        errs = int(np.sum(pred != y))
        row = perf.loc[nm]
        assert row["errors"] == errs and row["n"] == len(y)
        assert row["error"] == pytest.approx(errs / len(y), abs=1e-15)
        lo, hi = proportion_confint(errs, len(y), alpha=0.05, method="wilson")
        assert (row["ci_lower"], row["ci_upper"]) == pytest.approx((lo, hi), abs=1e-14)
        p1 = f.predict(test, type="prob")[1].to_numpy()
        assert row["brier"] == pytest.approx(brier_score_loss(y == 1, p1), rel=1e-12)
        assert row["cross_entropy"] == pytest.approx(log_loss(y == 1, p1), rel=1e-9)
        assert row["auc"] == pytest.approx(roc_auc_score(y == 1, p1), rel=1e-12)
    assert len(mc) == 3
    for a, b in [("clearn linear", "clearn rbf"), ("clearn linear", "lum"), ("clearn rbf", "lum")]:
        ca, cb = correct[a], correct[b]
        table = [[np.sum(ca & cb), np.sum(ca & ~cb)], [np.sum(~ca & cb), np.sum(~ca & ~cb)]]
        disc = table[0][1] + table[1][0]
        ref = mcnemar(table, exact=disc < 25, correction=True)
        row = mc.loc[f"{a} vs {b}"]
        assert (row["n01"], row["n10"]) == (table[0][1], table[1][0])
        assert row["pvalue"] == pytest.approx(ref.pvalue, rel=1e-12)
        assert row["statistic"] == pytest.approx(ref.statistic, rel=1e-12)
    # the renderings carry the numbers
    md, tex, html = s.to_markdown(), s.to_latex(), s.to_html()
    for nm in fits:
        assert nm in md and nm in html and nm in tex
    assert "McNemar" in str(s)
    # exact interval on request
    e = compare(fits, test, interval="exact", level=0.9).tables["Test performance"]
    errs = int(e.loc["lum", "errors"])
    assert (e.loc["lum", "ci_lower"], e.loc["lum", "ci_upper"]) == pytest.approx(
        proportion_confint(errs, len(y), alpha=0.1, method="beta"), abs=1e-14
    )


def test_compare_multiclass_and_probability_options():
    from sklearn.metrics import log_loss

    train, test = make_waveform(150, random_state=3), make_waveform(400, random_state=4)
    f1 = cs.clearn("y ~ .", data=train, lambda_=0.05)
    f2 = cs.clearn("y ~ .", data=train, lambda_=0.005)
    s = compare([f1, f2], test)
    perf = s.tables["Test performance"]
    assert list(perf.index) == ["clearn.1", "clearn.2"] and "auc" not in perf.columns
    y = test["y"].to_numpy()
    classes = f1.classes
    yk = np.array([classes.index(v) for v in y])
    for nm, f in zip(perf.index, (f1, f2)):
        P = f.predict(test, type="prob").to_numpy()
        E = np.eye(len(classes))[yk]
        assert perf.loc[nm, "brier"] == pytest.approx(np.mean(np.sum((E - P) ** 2, axis=1)), rel=1e-12)
        assert perf.loc[nm, "cross_entropy"] == pytest.approx(log_loss(yk, P, labels=range(len(classes))), rel=1e-9)


def test_compare_svm_probability_options_and_errors(readme_fits):
    fits, test = readme_fits
    train = make_wsl2(100, random_state=1)
    sv = cs.svm("y ~ x1 + x2", data=train, lambda_=1e-2)
    s = compare({"svm": sv, "lum": fits["lum"]}, test, options={"svm": {"method": "platt"}})
    p1 = sv.predict(test, type="prob", method="platt")[1].to_numpy()
    from sklearn.metrics import brier_score_loss

    assert s.tables["Test performance"].loc["svm", "brier"] == pytest.approx(
        brier_score_loss(test.y == 1, p1), rel=1e-12
    )
    with pytest.raises(ValueError, match="options"):
        compare({"svm": sv}, test, options={"sv": {"method": "platt"}})
    with pytest.raises(ValueError, match="response column"):
        compare([sv], test.drop(columns="y"))
    with pytest.raises(TypeError, match="not a cohstats fit"):
        compare([sv, "lum"], test)
    with pytest.raises(ValueError, match="distinct"):
        compare([sv, sv], test, names=["a", "a"])
    other = make_wsl2(60, random_state=5)
    other["y"] = np.where(other.y > 0, "yes", "no")
    g = cs.clearn("y ~ x1 + x2", data=other, lambda_=0.01)
    with pytest.raises(ValueError, match="same response"):
        compare([sv, g], test)
    # labels for a matrix fit come through y=
    X = train[["x1", "x2"]].to_numpy()
    m = cs.clearn(X, train["y"].to_numpy(), lambda_=0.01)
    t = compare([m], test[["x1", "x2"]].to_numpy(), y=test["y"].to_numpy())
    errs = int(np.sum(m.predict(test[["x1", "x2"]].to_numpy()).to_numpy() != test.y.to_numpy()))
    assert t.tables["Test performance"].iloc[0]["errors"] == errs
    assert "McNemar tests" not in t.tables
    # a tree's leaf proportions can put probability 0 on the observed class: inf, with a note
    tree = cs.cart("y ~ x1 + x2", data=train)
    r = compare({"cart": tree}, test)
    P = tree.predict(test, type="prob").to_numpy()
    p_obs = np.where(test.y.to_numpy() == 1, P[:, 1], P[:, 0])
    assert np.isinf(r.tables["Test performance"].loc["cart", "cross_entropy"]) == bool(np.any(p_obs == 0))
    assert any("inf" in n for n in r.notes) == bool(np.any(p_obs == 0))


def test_compare_is_exported_lazily():
    assert cs.compare is compare
    assert isinstance(
        cs.compare(
            [cs.clearn("y ~ x1 + x2", data=make_wsl2(50, random_state=0), lambda_=0.01)], make_wsl2(50, random_state=9)
        ),
        Summary,
    )


@pytest.mark.parametrize("method", ["holm", "bonferroni", "fdr_bh", "hommel", None])
def test_compare_adjusts_mcnemar_pvalues_as_statsmodels_multipletests(readme_fits, method):
    from statsmodels.stats.multitest import multipletests

    fits, test = readme_fits
    kw = {} if method == "holm" else {"p_adjust": method}  # Holm is the default
    mc = compare(fits, test, **kw).tables["McNemar tests"]
    raw = compare(fits, test, p_adjust=None).tables["McNemar tests"]
    np.testing.assert_array_equal(mc["pvalue"].to_numpy(), raw["pvalue"].to_numpy())
    if method is None:
        assert "p_adjusted" not in mc.columns
        return
    ref = multipletests(mc["pvalue"].to_numpy(), alpha=0.05, method=method)[1]
    np.testing.assert_allclose(mc["p_adjusted"].to_numpy(), ref, rtol=1e-15, atol=0)
    assert np.all(mc["p_adjusted"] >= mc["pvalue"])


def test_adjust_pvalues_holm_by_hand_and_bad_method():
    from cohstats.reporting import adjust_pvalues

    p = np.array([0.04, 0.001, 0.03, 0.2])
    # Holm by hand: sorted p times (m - i), running maximum, capped at 1, back in input order
    order = np.argsort(p)
    adj = np.minimum(1.0, np.maximum.accumulate(p[order] * (len(p) - np.arange(len(p)))))
    hand = np.empty_like(p)
    hand[order] = adj
    np.testing.assert_allclose(adjust_pvalues(p), hand, rtol=1e-15)
    np.testing.assert_array_equal(adjust_pvalues(p, None), p)
    with pytest.raises(ValueError, match="p_adjust must be None or one of"):
        adjust_pvalues(p, "bogus")
    fits = cs.clearn("y ~ x1 + x2", data=make_wsl2(40, random_state=1), lambda_=0.1)
    with pytest.raises(ValueError, match="p_adjust"):
        compare([fits], make_wsl2(40, random_state=2), p_adjust="holms")
