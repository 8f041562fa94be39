"""The k-nearest-neighbour probability estimator of [WSL] section 5 against scikit-learn."""

import numpy as np
import pytest
from sklearn.neighbors import KNeighborsClassifier
from sklearn.preprocessing import StandardScaler

from cohstats.probability import WSL_KNN_K, knn_prob


def _data(n=100, m=300, p=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p)) * np.array([1.0, 10.0, 0.1])[:p]
    y = np.where(X[:, 0] + 0.1 * X[:, 1] + rng.normal(size=n) > 0, 1, -1)
    Z = rng.normal(size=(m, p)) * np.array([1.0, 10.0, 0.1])[:p]
    return X, y, Z


@pytest.mark.parametrize("standardize", [True, False])
def test_knn_prob_equals_sklearn_predict_proba(standardize):
    X, y, Z = _data()
    ours = knn_prob(X, y, Z, k=WSL_KNN_K, standardize=standardize)
    assert ours.shape == (len(WSL_KNN_K), Z.shape[0])
    if standardize:
        sc = StandardScaler().fit(X)  # divisor n, as ours
        Xs, Zs = sc.transform(X), sc.transform(Z)
    else:
        Xs, Zs = X, Z
    for i, k in enumerate(WSL_KNN_K):
        ref = KNeighborsClassifier(n_neighbors=k, metric="euclidean", algorithm="brute")
        ref.fit(Xs, y)
        pk = ref.predict_proba(Zs)[:, list(ref.classes_).index(1)]
        np.testing.assert_allclose(ours[i], pk, rtol=0, atol=1e-15)
        np.testing.assert_allclose(knn_prob(X, y, Z, k=k, standardize=standardize), pk, atol=1e-15)


def test_knn_prob_direct_computation_and_blocks():
    X, y, Z = _data(n=40, m=57, seed=3)
    d = ((Z[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    near = np.argsort(d, axis=1)[:, :9]
    direct = (y[near] > 0).mean(axis=1)
    for bs in (1, 7 * 40 * 3, 2**22):  # one row per block, several, all at once
        np.testing.assert_array_equal(knn_prob(X, y, Z, k=9, standardize=False, block_size=bs), direct)


def test_knn_prob_ties_go_to_the_earlier_row():
    X = np.array([[1.0], [-1.0], [1.0], [5.0]])
    y = np.array([1, -1, -1, 1])
    # from 0 the three nearest are at distance 1 (rows 0, 1, 2): k = 2 takes rows 0 and 1
    assert knn_prob(X, y, np.array([[0.0]]), k=2, standardize=False)[0] == 0.5
    assert knn_prob(X, y, np.array([[0.0]]), k=3, standardize=False)[0] == pytest.approx(1 / 3)


@pytest.mark.parametrize(
    "kw, msg",
    [
        ({"k": 0}, "k must be"),
        ({"k": 101}, "k must be"),
        ({"k": 2.5}, "k must be"),
        ({"k": []}, "k must be"),
    ],
)
def test_knn_prob_bad_k(kw, msg):
    X, y, Z = _data()
    with pytest.raises(ValueError, match=msg):
        knn_prob(X, y, Z, **kw)


def test_knn_prob_bad_input():
    X, y, Z = _data()
    with pytest.raises(ValueError, match="newdata must be a 2-D array with 3 columns"):
        knn_prob(X, y, Z[:, :2])
    with pytest.raises(ValueError, match="-1/\\+1"):
        knn_prob(X, np.where(y > 0, 1, 0), Z)
    with pytest.raises(ValueError, match="one label per row"):
        knn_prob(X, y[:-1], Z)
    Xn = X.copy()
    Xn[0, 0] = np.nan
    with pytest.raises(ValueError, match="finite"):
        knn_prob(Xn, y, Z)
