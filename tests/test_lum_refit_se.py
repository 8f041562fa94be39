"""Standard errors of the refitted LUM scale ([LZW] eq (9)): the sandwich covariance of an
M-estimator, checked against statsmodels' own HC0 computation (numerical derivatives of the same
objective) and against the sampling spread of (g0, g1) over repeated samples."""

import numpy as np
import pytest
from statsmodels.base.model import GenericLikelihoodModel

import cohstats as cs
from cohstats.losses import get_loss
from cohstats.models.lum import lum_refit, refit_coef_table


def _sample(n, seed, g=(0.3, 1.5)):
    rng = np.random.default_rng(seed)
    f = rng.normal(size=n)
    y = np.where(rng.random(n) < 1 / (1 + np.exp(-(g[0] + g[1] * f))), 1.0, -1.0)
    return f, y


@pytest.mark.filterwarnings("ignore:Maximum Likelihood optimization")
@pytest.mark.parametrize("a", [1.0, 1000.0])
def test_sandwich_equals_statsmodels_hc0(a):
    f, y = _sample(400, 3)
    r = lum_refit(f, y, a)
    loss = get_loss("lum", a=a, c=0.0)

    class Refit(GenericLikelihoodModel):  # statsmodels differentiates numerically
        def loglikeobs(self, params):
            return -loss.value(y * (params[0] + params[1] * f))

    res = Refit(y, np.column_stack([np.ones_like(f), f])).fit(
        start_params=[r["g0"], r["g1"]], method="nm", maxiter=0, disp=0, cov_type="HC0"
    )
    np.testing.assert_allclose(np.sqrt(np.diag(r["cov"])), res.bse, rtol=1e-4)
    np.testing.assert_allclose(r["cov"], res.cov_params(), rtol=1e-3, atol=1e-8)


def test_sandwich_matches_sampling_spread():
    draws, ses = [], []
    for seed in range(300):
        f, y = _sample(300, 100 + seed)
        r = lum_refit(f, y, 1000.0)
        draws.append([r["g0"], r["g1"]])
        ses.append(np.sqrt(np.diag(r["cov"])))
    sd = np.std(draws, axis=0, ddof=1)
    mean_se = np.mean(ses, axis=0)
    # 300 draws: the sample sd is within ~8 % (2 SE) of the truth; allow 15 %
    np.testing.assert_allclose(mean_se, sd, rtol=0.15)


def test_table_layout_and_summary():
    f, y = _sample(300, 5)
    tab = refit_coef_table(lum_refit(f, y, 1000.0))
    assert list(tab.columns) == ["coef", "std err", "z", "P>|z|", "[0.025", "0.975]"]
    np.testing.assert_allclose(tab["z"], tab["coef"] / tab["std err"])
    np.testing.assert_allclose(tab["0.975]"] - tab["coef"], 1.959963985 * tab["std err"], rtol=1e-8)
    df = cs.datasets.make_wsl1(200, random_state=0)
    fit = cs.lum("y ~ x1 + x2", data=df, lambda_=0.1)
    s = fit.summary()
    assert "std err" in s.tables["refit"].columns
    assert "sandwich" in str(s)


def test_separable_first_stage_has_no_standard_errors():
    f = np.r_[-np.arange(1.0, 6.0), np.arange(1.0, 6.0)]
    y = np.sign(f)
    with pytest.warns(cs.ConvergenceWarning):
        r = lum_refit(f, y, 1000.0)
    assert np.all(np.isnan(r["cov"]))
