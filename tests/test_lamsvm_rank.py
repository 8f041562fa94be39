"""The lambda-SVM's list selection (solvers/svm/smo_lambda_select.py): the hand-written order statistic
and stable order against numpy's np.partition and np.argsort(kind="mergesort")."""

import numpy as np
import pytest

from cohstats._numba_cache import njit
from cohstats.solvers.svm.smo_lambda_select import _kth_smallest as _kth_nb
from cohstats.solvers.svm.smo_lambda_select import _order_desc_stable as _order_nb
from cohstats.solvers.svm.smo_lambda_select import _rank_candidates as _rank_nb

# the three are compiled without a Python entry point (only the solver's jitted code calls
# them): the tests call them from jitted code too


@njit(cache=False)
def _kth_smallest(v, k):
    return _kth_nb(v, k)


@njit(cache=False)
def _order_desc_stable(key, n):
    return _order_nb(key, n)


@njit(cache=False)
def _rank_candidates(pv, cand, nc, B, idx, vals):
    return _rank_nb(pv, cand, nc, B, idx, vals)


def _values(rng, n, kind):
    if kind == "distinct":
        return rng.normal(size=n)
    if kind == "ties":
        return rng.integers(0, 5, n).astype(np.float64)  # many equal values
    if kind == "sorted":
        return np.sort(rng.normal(size=n))
    return np.full(n, 0.25)  # all equal


@pytest.mark.parametrize("kind", ["distinct", "ties", "sorted", "equal"])
@pytest.mark.parametrize("n", [1, 2, 3, 7, 64, 1001])
def test_kth_smallest_is_numpys_partition_value(kind, n):
    rng = np.random.default_rng(n)
    v = _values(rng, n, kind)
    for k in sorted({0, n // 3, n // 2, n - 1}):
        w = v.copy()
        got = _kth_smallest(w, k)
        assert got == np.partition(v, k)[k]
        np.testing.assert_array_equal(np.sort(w), np.sort(v))  # only reordered


@pytest.mark.parametrize("kind", ["distinct", "ties", "sorted", "equal"])
@pytest.mark.parametrize("n", [0, 1, 2, 5, 33, 512])
def test_order_desc_stable_is_numpys_stable_argsort(kind, n):
    v = _values(np.random.default_rng(7 + n), n, kind)
    np.testing.assert_array_equal(_order_desc_stable(v, n), np.argsort(-v, kind="mergesort"))


@pytest.mark.parametrize("B", [1, 3, 10, 40])
def test_rank_candidates_lists_the_largest_ties_to_smaller_positions(B):
    rng = np.random.default_rng(B)
    pv = rng.integers(0, 6, 60).astype(np.float64)
    cand = np.flatnonzero(pv >= 1.0).astype(np.int64)
    nc = cand.size
    idx = np.empty(60, dtype=np.int64)
    m = _rank_candidates(pv, cand, np.int64(nc), np.int64(B), idx, np.empty(nc))
    # reference: sort the candidates by (-pv, position) and keep the first B
    ref = sorted(cand.tolist(), key=lambda q: (-pv[q], q))[:B]
    assert m == min(B, nc)
    assert idx[:m].tolist() == ref
