"""The screened KKT check of the path driver adds every violator the full check would.

Along a 60-value logistic elastic-net path with p >> n, most coordinates are skipped by the
drift bound; at every lambda the zero coordinates must still satisfy the KKT condition
|x_j' r / n| <= lambda alpha (on the standardised scale), checked here in numpy from the
returned coefficients alone, and the nonzero ones the stationarity condition.
"""

import numpy as np
from scipy.special import expit

from cohstats.losses.scalar import LOSS_LOGIT
from cohstats.solvers.cd.path import cd_path, lambda_max, lambda_sequence


def test_screened_kkt_check_misses_no_violator():
    rng = np.random.default_rng(3)
    n, p, alpha = 120, 1500, 0.7
    X = rng.standard_normal((n, p)) * rng.uniform(0.5, 3.0, p)
    beta = np.zeros(p)
    beta[:8] = 1.5 * rng.standard_normal(8)
    y = np.where(X @ beta / 3 + rng.logistic(size=n) > 0, 1.0, -1.0)
    lams = lambda_sequence(lambda_max(X, y, None, LOSS_LOGIT, 0.0, 0.0, alpha), 60, 1e-2)
    b0, B, info = cd_path(X, y, None, LOSS_LOGIT, 0.0, 0.0, lams, alpha, tol=1e-12)
    sd = X.std(0)
    worst_zero = worst_active = 0.0
    for k, lam in enumerate(lams):
        f = b0[k] + X @ B[k]
        r = y * expit(-y * f)  # minus the derivative of log(1 + exp(-y f)) in f
        g = (X.T @ r / n) / sd  # minus the gradient in the standardised coefficients
        bs = B[k] * sd
        zero = bs == 0.0
        worst_zero = max(worst_zero, np.max(np.abs(g[zero]) - lam * alpha))
        act = ~zero
        if act.any():
            stat = g[act] - lam * (1 - alpha) * bs[act] - lam * alpha * np.sign(bs[act])
            worst_active = max(worst_active, np.max(np.abs(stat)))
        assert abs(np.mean(r)) < 1e-6  # the intercept is optimal
    assert worst_zero < 1e-6
    assert worst_active < 1e-5
    assert 5 < np.count_nonzero(B[-1]) < p  # the path reaches a sparse model with real support


def test_drift_bound_recomputes_every_possible_violator():
    # the screened gradient against the full one over a sequence of residuals: every coordinate
    # whose exact |x_j'R/n| reaches its threshold is recomputed (exact value), and the bound
    # skips a real share of the others
    from cohstats._numba_cache import njit
    from cohstats.solvers.cd.path import _grad_screened as _gs_nb
    from cohstats.solvers.cd.path import _rdiff as _rdiff_nb

    # both are compiled without a Python entry point: called here from jitted code
    @njit(cache=False)
    def _rdiff(R, Rref):
        return _rdiff_nb(R, Rref)

    @njit(cache=False)
    def _grad_screened(Xt, R, Gst, pf, l1, sel, excl, xnorm, gref, dref, drift):
        _gs_nb(Xt, R, Gst, pf, l1, sel, excl, xnorm, gref, dref, drift)

    rng = np.random.default_rng(0)
    n, p, G = 200, 3000, 1
    Xt = rng.standard_normal((p, n)) * rng.uniform(0.2, 2.0, (p, 1))
    R = rng.standard_normal((G, n))
    pf = rng.uniform(0.5, 1.5, p)
    sel = np.zeros(p, dtype=bool)
    sel[:20] = True  # a strong set, never touched
    excl = np.zeros(p, dtype=bool)
    xnorm = np.sqrt((Xt**2).sum(1)) / n
    Gst = (R @ Xt.T) / n
    gref = np.abs(Gst[0]).copy()
    dref = np.zeros(p)
    Rref = R.copy()
    drift = 0.0
    skipped = 0
    for step in range(15):
        R = R + 0.02 * rng.standard_normal((G, n))
        l1 = 0.12 - 0.004 * step
        before = Gst.copy()
        drift += _rdiff(R, Rref)
        assert np.array_equal(Rref, R)
        _grad_screened(Xt, R, Gst, pf, l1, sel, excl, xnorm, gref, dref, drift)
        exact = (R @ Xt.T) / n
        out = ~sel
        must = out & (np.abs(exact[0]) >= l1 * pf)
        assert must.any()
        np.testing.assert_allclose(Gst[0, must], exact[0, must], rtol=1e-12, atol=1e-15)
        assert np.array_equal(Gst[0, sel], before[0, sel])
        skipped += int(np.sum(out & (Gst[0] == before[0]) & (exact[0] != before[0])))
    assert skipped > 0.3 * 15 * (p - 20)  # the bound skips a real share of the work
