"""Histogram trees: splits, best-first order and pruning against brute-force references."""

import numpy as np
import pytest

from cohstats.solvers.trees.grow import (
    apply_bins,
    cc_prune_sequence,
    fit_class_tree,
    fit_regression_tree,
    make_bins,
    predict_tree,
)


# ----------------------------------------------------------------------------- references
def brute_best_split(X, z, w, rows, min_leaf=1):
    """Exhaustive weighted SSE-reduction search over all features and midpoints."""
    best = (0.0, None, None)
    Xr, zr, wr = X[rows], z[rows], w[rows]
    W, G = wr.sum(), (wr * zr).sum()
    sse0 = (wr * zr**2).sum() - G**2 / W
    for f in range(X.shape[1]):
        u = np.unique(Xr[:, f])
        for a, b in zip(u[:-1], u[1:]):
            t = 0.5 * (a + b)
            L = Xr[:, f] <= t
            if L.sum() < min_leaf or (~L).sum() < min_leaf:
                continue
            sse = 0.0
            for S in (L, ~L):
                ws, zs = wr[S], zr[S]
                sse += (ws * zs**2).sum() - (ws * zs).sum() ** 2 / ws.sum()
            gain = sse0 - sse
            if gain > best[0] + 1e-10 * abs(best[0]):
                best = (gain, f, t)
    return best


def brute_best_first(X, z, w, max_leaves, min_leaf=1):
    """Best-first growth by brute force: list of leaf row sets (sorted) and their means."""
    leaves = [np.arange(len(z))]
    while len(leaves) < max_leaves:
        cands = [brute_best_split(X, z, w, r, min_leaf) for r in leaves]
        k = 0
        for r in range(1, len(cands)):  # earliest leaf among relative ties
            if cands[r][0] > cands[k][0] + 1e-10 * abs(cands[k][0]):
                k = r
        gain, f, t = cands[k]
        if f is None or gain <= 1e-12 * ((w[leaves[k]] * z[leaves[k]]).sum() ** 2 / w[leaves[k]].sum()):
            break
        r = leaves.pop(k)
        leaves += [r[X[r, f] <= t], r[X[r, f] > t]]
    return sorted(leaves, key=lambda r: r[0])


def tree_leaf_sets(t):
    leaves = np.flatnonzero(t["left"] < 0)
    sets = [np.sort(t["rows"][t["start"][v] : t["end"][v]]) for v in leaves]
    return sorted(sets, key=lambda r: r[0]), leaves


def make_data(seed, n=60, p=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    z = np.sin(2 * X[:, 0]) + X[:, 1] * (X[:, 2] > 0) + 0.3 * rng.normal(size=n)
    w = rng.uniform(0.2, 2.0, size=n)
    return X, z, w


# ----------------------------------------------------------------------------- binning
def test_make_bins_exact_and_quantile():
    X = np.array([[3.0, 0.1], [1.0, 0.2], [1.0, 0.3], [2.0, 0.4], [5.0, 0.5]])
    codes, thr, nb = make_bins(X, 255)
    assert codes[:, 0].tolist() == [2, 0, 0, 1, 3]
    assert thr[0, :3].tolist() == [1.5, 2.5, 4.0]
    assert nb.tolist() == [4, 5]
    # quantile mode: at most max_bins bins, order preserved, x <= thr[b] <=> code <= b
    rng = np.random.default_rng(0)
    Xq = rng.normal(size=(1000, 2))
    codes, thr, nb = make_bins(Xq, 16)
    assert nb.max() <= 16 and codes.dtype == np.uint8
    for f in range(2):
        for b in range(nb[f] - 1):
            np.testing.assert_array_equal(codes[:, f] <= b, Xq[:, f] <= thr[f, b])
        counts = np.bincount(codes[:, f])
        assert counts.max() < 2.5 * 1000 / 16
    np.testing.assert_array_equal(apply_bins(Xq, thr, nb), codes)
    c16, _, _ = make_bins(Xq, 1000)
    assert c16.dtype == np.uint16
    with pytest.raises(ValueError, match="max_bins"):
        make_bins(Xq, 1)


# ----------------------------------------------------------------------------- regression
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_stump_matches_brute_force(seed):
    X, z, w = make_data(seed)
    codes, thr, nb = make_bins(X, 255)
    t = fit_regression_tree(codes, nb, thr, z, w, max_leaves=2)
    gain, f, thr_ref = brute_best_split(X, z, w, np.arange(len(z)))
    assert t["feat"][0] == f
    assert t["thr"][0] == pytest.approx(thr_ref, abs=1e-12)
    assert t["gain"][0] == pytest.approx(gain, rel=1e-9)
    L = X[:, f] <= thr_ref
    for child, S in ((t["left"][0], L), (t["right"][0], ~L)):
        assert t["value"][child] == pytest.approx(np.average(z[S], weights=w[S]), rel=1e-12)


@pytest.mark.parametrize("seed,leaves,min_leaf", [(0, 8, 1), (1, 8, 1), (2, 5, 4), (3, 8, 6)])
def test_best_first_matches_brute_force(seed, leaves, min_leaf):
    X, z, w = make_data(seed, n=70)
    codes, thr, nb = make_bins(X, 255)
    t = fit_regression_tree(codes, nb, thr, z, w, max_leaves=leaves, min_leaf=min_leaf)
    ref = brute_best_first(X, z, w, leaves, min_leaf)
    got, leaf_ids = tree_leaf_sets(t)
    assert len(got) == len(ref) == t["n_leaves"]
    for a, b in zip(got, ref):
        np.testing.assert_array_equal(a, b)
    # leaf values are weighted means; raw-scale prediction reproduces them
    pred = predict_tree(t, X)
    for v in leaf_ids:
        r = t["rows"][t["start"][v] : t["end"][v]]
        assert len(r) >= min_leaf
        assert t["value"][v] == pytest.approx(np.average(z[r], weights=w[r]), rel=1e-10)
        np.testing.assert_allclose(pred[r], t["value"][v], rtol=0, atol=0)


def test_best_first_gains_are_decreasing_in_growth_order_and_nested():
    X, z, w = make_data(7, n=200)
    codes, thr, nb = make_bins(X, 255)
    prev = None
    for L in range(2, 9):
        t = fit_regression_tree(codes, nb, thr, z, w, max_leaves=L)
        sse = (w * (z - predict_tree(t, X)) ** 2).sum()
        if prev is not None:
            # each extra leaf adds exactly the best available gain: SSE strictly decreases
            assert sse < prev
        prev = sse
    # total SSE reduction equals the sum of the split gains
    sse0 = (w * (z - np.average(z, weights=w)) ** 2).sum()
    assert sse0 - prev == pytest.approx(t["gain"].sum(), rel=1e-9)


def test_matches_sklearn_best_first_regressor():
    from sklearn.tree import DecisionTreeRegressor

    X, z, w = make_data(11, n=300, p=4)
    codes, thr, nb = make_bins(X, 1000)  # exact
    t = fit_regression_tree(codes, nb, thr, z, w, max_leaves=8)
    sk = DecisionTreeRegressor(max_leaf_nodes=8, random_state=0).fit(X, z, sample_weight=w)
    np.testing.assert_allclose(predict_tree(t, X), sk.predict(X), rtol=1e-10, atol=1e-12)
    # same split features in the same (best-first) node order; thresholds may differ inside
    # the gap between neighbouring values (global bin edges here, node values in sklearn)
    np.testing.assert_array_equal(t["feat"][t["left"] >= 0], sk.tree_.feature[sk.tree_.children_left >= 0])


def test_constant_response_does_not_split():
    X, _, w = make_data(0)
    codes, thr, nb = make_bins(X, 255)
    t = fit_regression_tree(codes, nb, thr, np.full(len(w), 0.7), w, max_leaves=8)
    assert t["n_leaves"] == 1 and t["value"][0] == pytest.approx(0.7)


# ----------------------------------------------------------------------------- CART
def brute_gini_root(X, y, K):
    best = (0.0, None, None)
    N = len(y)
    tot = np.bincount(y, minlength=K).astype(float)
    imp0 = N - (tot**2).sum() / N
    for f in range(X.shape[1]):
        u = np.unique(X[:, f])
        for a, b in zip(u[:-1], u[1:]):
            t = 0.5 * (a + b)
            L = X[:, f] <= t
            imp = 0.0
            for S in (L, ~L):
                c = np.bincount(y[S], minlength=K).astype(float)
                imp += S.sum() - (c**2).sum() / S.sum()
            if imp0 - imp > best[0] + 1e-10 * abs(best[0]):
                best = (imp0 - imp, f, t)
    return best


def test_gini_tree_root_split_and_full_growth():
    from sklearn.tree import DecisionTreeClassifier

    rng = np.random.default_rng(5)
    X = rng.normal(size=(120, 3))
    y = (X[:, 0] > 0.2).astype(int) + (X[:, 1] > -0.4) * (X[:, 2] > 0)
    flip = rng.random(120) < 0.1
    y = np.where(flip, rng.integers(0, 3, 120), y)
    codes, thr, nb = make_bins(X, 1000)
    t = fit_class_tree(codes, nb, thr, y, 3)
    gain, f, tt = brute_gini_root(X, y, 3)
    assert t["feat"][0] == f and t["thr"][0] == pytest.approx(tt)
    assert t["gain"][0] == pytest.approx(gain, rel=1e-9)
    # grown to purity: resubstitution error is zero and every leaf is pure
    leaves = t["left"] < 0
    assert np.all((t["counts"][leaves] > 0).sum(1) == 1)
    # the Gini criterion is the same as scikit-learn's: same root split
    sk = DecisionTreeClassifier(random_state=0).fit(X, y)
    assert sk.tree_.feature[0] == f and sk.tree_.threshold[0] == pytest.approx(tt)


def _subtree_cost(left, right, err, alpha, v=0):
    """min over prunings of the subtree at v of R(T) + alpha |T| (dynamic programming)."""
    if left[v] < 0:
        return err[v] + alpha
    return min(
        err[v] + alpha,
        _subtree_cost(left, right, err, alpha, left[v]) + _subtree_cost(left, right, err, alpha, right[v]),
    )


def _pruned_cost(left, right, err, pa, alpha):
    cost, stack = 0.0, [0]
    while stack:
        v = stack.pop()
        if left[v] < 0 or pa[v] <= alpha:
            cost += err[v] + alpha
        else:
            stack += [left[v], right[v]]
    return cost


def test_cost_complexity_pruning_is_optimal():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(150, 2))
    y = ((X[:, 0] + 0.5 * rng.normal(size=150)) > 0).astype(int)
    codes, thr, nb = make_bins(X, 1000)
    t = fit_class_tree(codes, nb, thr, y, 2)
    left, right, err, pa = t["left"], t["right"], t["node_err"], t["prune_alpha"]
    alphas = t["alphas"]
    assert alphas[0] == 0 and np.all(np.diff(alphas) > 0) and len(alphas) > 3
    grid = np.concatenate([alphas, 0.5 * (alphas[1:] + alphas[:-1]), [alphas[-1] * 2]])
    for a in grid:
        assert _pruned_cost(left, right, err, pa, a) == pytest.approx(_subtree_cost(left, right, err, a), abs=1e-12)
    # the last level collapses the root
    assert pa[0] == pytest.approx(alphas[-1])
    pa2, al2 = cc_prune_sequence(left, right, err)
    np.testing.assert_array_equal(al2, alphas)


def test_weighted_bins_equal_replicated_bins():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(400, 3))
    w = rng.integers(0, 4, 400)
    codes_w, thr_w, nb_w = make_bins(X, 16, sample_weight=w)
    Xr = np.repeat(X, w, axis=0)
    codes_r, thr_r, nb_r = make_bins(Xr, 16)
    np.testing.assert_array_equal(nb_w, nb_r)
    np.testing.assert_array_equal(thr_w, thr_r)
    np.testing.assert_array_equal(np.repeat(codes_w, w, axis=0), codes_r)
    with pytest.raises(ValueError, match="sample_weight"):
        make_bins(X, 16, sample_weight=-np.ones(400))


def test_threshold_in_the_middle_of_the_node_gap():
    X, z, w = make_data(21, n=120)
    codes, thr, nb = make_bins(X, 255)
    t = fit_regression_tree(codes, nb, thr, z, w, max_leaves=8)
    for v in np.flatnonzero(t["left"] >= 0):
        f = t["feat"][v]
        u = np.unique(X[:, f])
        L = t["rows"][t["start"][t["left"][v]] : t["end"][t["left"][v]]]
        R = t["rows"][t["start"][t["right"][v]] : t["end"][t["right"][v]]]
        a, b = X[L, f].max(), X[R, f].min()
        # global bin edges just above the node's largest left value and below its smallest
        # right value; the threshold is their midpoint
        ia, ib = np.searchsorted(u, a), np.searchsorted(u, b)
        lo, hi = 0.5 * (u[ia] + u[ia + 1]), 0.5 * (u[ib - 1] + u[ib])
        assert a < t["thr"][v] < b
        assert t["thr"][v] == pytest.approx(0.5 * (lo + hi), abs=1e-12)


# ----------------------------------------------------------------------------- boosting's grower
@pytest.mark.parametrize("seed", range(6))
def test_boosting_grower_equals_the_general_grower(seed):
    """The one-response grower of boosting (feature-major partitions, totals of the last split
    from one feature) builds the same trees, bit for bit, as the general grower with K = 1."""
    from cohstats.solvers.trees.grow import _n_slots, build_root_hist, grow_tree, hist_width
    from cohstats._numba_cache import njit
    from cohstats.solvers.trees.grow_boost import grow_boost_tree as _grow

    @njit(cache=False)
    def grow_boost_tree(*args):  # the grower has no Python entry point
        return _grow(*args)

    rng = np.random.default_rng(seed)
    n, p = 400, 4
    X = rng.normal(size=(n, p))
    X[:, 3] = np.round(X[:, 3])  # ties and few bins
    z = np.sin(2 * X[:, 0]) + X[:, 1] * (X[:, 2] > 0) + 0.3 * rng.normal(size=n)
    w = rng.uniform(0.2, 2.0, size=n)
    gz = w * z
    codes, thr, nb = make_bins(X, 32)
    codes_t = np.ascontiguousarray(codes.T)
    for leaves, min_leaf, depth, lam in [(8, 1, 64, 0.0), (6, 5, 64, 1.5), (16, 1, 2, 0.0), (2, 3, 1, 0.3)]:
        fperm = rng.permutation(p).astype(np.int64)
        mn = 2 * leaves - 1
        out = []
        # the general grower; boosting's, from the rows; and, with min_leaf 1, from a root
        # histogram built beforehand (then ``rows`` is not read: filled with junk here)
        for general, ready in ((True, False), (False, False), (False, min_leaf == 1)):
            nodes = [np.full(mn, -9, np.int64) for _ in range(8)]
            tot = np.zeros((mn, 3))
            hist = np.zeros((_n_slots(leaves, depth, True), p, int(nb.max()), hist_width(1, min_leaf)))
            rows = np.arange(n, dtype=np.int64 if general else np.int32)
            buf = np.empty(n, rows.dtype)
            if ready:
                build_root_hist(codes, gz, w, hist)
                rows[:] = -1
            if general:
                nn = grow_tree(
                    codes,
                    nb,
                    gz[:, None],
                    w,
                    rows,
                    n,
                    leaves,
                    min_leaf,
                    depth,
                    True,
                    hist,
                    buf,
                    *nodes,
                    tot,
                    fperm,
                    False,
                    lam,
                )
            else:
                nn = grow_boost_tree(
                    codes,
                    codes_t,
                    nb,
                    gz,
                    w,
                    rows,
                    n,
                    leaves,
                    min_leaf,
                    depth,
                    hist,
                    buf,
                    *nodes,
                    tot,
                    fperm,
                    ready,
                    lam,
                )
            out.append((nn, [v[:nn] for v in nodes], tot[:nn, :2], rows.astype(np.int64)))
        n1, a1, t1, r1 = out[0]
        for n2, a2, t2, r2 in out[1:]:
            assert n1 == n2 and n1 > 1
            for u, v in zip(a1, a2):
                np.testing.assert_array_equal(u, v)
            np.testing.assert_array_equal(t1, t2)  # leaf totals: identical sums
            np.testing.assert_array_equal(r1, r2)


def test_unit_weight_bins_equal_the_weighted_path():
    """Bins from unit weights (one sort) equal those of the general weighted path (np.unique
    and weighted counts), here with every weight 2 (the same cuts: all counts doubled)."""
    rng = np.random.default_rng(3)
    X = np.column_stack([rng.normal(size=3000), np.round(rng.normal(size=3000), 1), rng.integers(0, 3, 3000)])
    X[::7, 0] = -0.0
    for mb in (2, 16, 255, 400):
        a = make_bins(X, mb)
        b = make_bins(X, mb, sample_weight=np.full(3000, 2.0))
        for u, v in zip(a, b):
            np.testing.assert_array_equal(u, v)


@pytest.mark.parametrize("dist", ["normal", "uniform", "exponential", "cauchy", "rounded", "offset"])
def test_bucketed_bin_search_equals_binary_search(dist):
    from cohstats.solvers.trees.bins import _count_below

    rng = np.random.default_rng(7)
    n = 30_000
    x = {
        "normal": rng.normal(size=n),
        "uniform": rng.uniform(-1, 1, n),
        "exponential": rng.exponential(size=n),
        "cauchy": rng.standard_cauchy(n),  # uneven cuts: the binary search itself
        "rounded": np.round(rng.normal(size=n), 2),
        "offset": 1e6 + rng.normal(size=n),
    }[dist]
    for k in (32, 100, 254):
        cuts = np.unique(np.quantile(x, np.linspace(0, 1, k + 2)[1:-1]))
        # the cuts themselves and their neighbouring doubles are the hardest values
        xs = np.concatenate([x, cuts, np.nextafter(cuts, np.inf), np.nextafter(cuts, -np.inf), [-1e300, 1e300]])
        np.testing.assert_array_equal(_count_below(cuts, xs), np.searchsorted(cuts, xs, side="left"))
