"""The [ZDJ] Tables 5-6 vignette: partition protocol and a one-data-set run (slow)."""

import numpy as np
import pytest

from cohstats.vignettes.zdj_clearn import STAND_INS, datasets, stratified_split


def test_stratified_split_keeps_class_shares_and_both_classes():
    y = np.array([1.0] * 40 + [-1.0] * 22)  # colon's class sizes
    tr, te = stratified_split(y, 16, np.random.default_rng(0))
    assert len(np.intersect1d(tr, te)) == 0 and len(tr) + len(te) == 62
    assert np.sum(y[tr] > 0) == round(16 * 40 / 62) and np.sum(y[tr] < 0) == round(16 * 22 / 62)
    y2 = np.array([1.0] * 180 + [-1.0] * 182)
    tr2, _ = stratified_split(y2, 11, np.random.default_rng(1))
    assert set(np.unique(y2[tr2])) == {-1.0, 1.0}


def test_datasets_follow_table4_sizes():
    ds = {d[0]: d for d in datasets()}
    assert len(ds) == 11
    odd = STAND_INS["USPS (Odd vs Even)"]
    assert odd == "digits 8x8 (Odd vs Even) [USPS stand-in]"
    X, y = ds[odd][1](0)
    assert X.shape == (800, 64) and ds[odd][2] == 24
    # scaling: pixels and genes on their own scale by default, g241 standardised
    assert [ds[k][3] for k in (odd, "g241c", "colon", "leukemia")] == [False, True, False, False]
    assert all(d[3] for d in datasets(standardize=True))
    # colon: log10 and each array standardised by default; the file as distributed and log2 on request
    from cohstats.datasets import load

    raw = load("colon").drop(columns=["y"]).to_numpy(dtype=float)
    Xc, _ = ds["colon"][1](0)
    ref = (np.log10(raw) - np.log10(raw).mean(axis=1)[:, None]) / np.log10(raw).std(axis=1)[:, None]
    np.testing.assert_allclose(Xc, ref, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(Xc.mean(axis=1), 0.0, atol=1e-12)
    np.testing.assert_allclose(Xc.std(axis=1), 1.0, rtol=1e-12)
    Xn, _ = {d[0]: d for d in datasets(colon="none")}["colon"][1](0)
    np.testing.assert_array_equal(Xn, raw)
    Xl, _ = {d[0]: d for d in datasets(colon="log2")}["colon"][1](0)
    np.testing.assert_allclose(Xl, np.log2(raw))
    X10, _ = {d[0]: d for d in datasets(colon="log10")}["colon"][1](0)
    np.testing.assert_allclose(X10, np.log10(raw))
    Xa, _ = {d[0]: d for d in datasets(colon="arrays")}["colon"][1](0)
    np.testing.assert_allclose(Xa, (raw - raw.mean(axis=1)[:, None]) / raw.std(axis=1)[:, None], rtol=1e-12)
    with pytest.raises(ValueError, match="colon must be one of"):
        datasets(colon="log")
    with pytest.raises(ValueError, match="standardize must be"):
        datasets(standardize="yes")
    X, _ = ds["colon"][1](0)
    assert X.shape == (62, 2000) and ds["colon"][2] == 16


@pytest.mark.slow
def test_vignette_runs_on_colon(tmp_path):
    from cohstats.vignettes.zdj_clearn import run

    path = run(1, tmp_path, only=["colon", "USPS (1 vs 7)"])
    text = path.read_text()
    assert "colon" in text and "Table 5" in text
    assert "| digits 8x8 (1 vs 7) [USPS stand-in] | HHSVM | 1 |" in text
    assert "is easier" not in text


def test_kernel_columns_are_the_gaussian_gram_with_the_mean_distance_width():
    from scipy.spatial.distance import pdist
    from sklearn.metrics.pairwise import rbf_kernel

    from cohstats.vignettes.zdj_clearn import kernel_columns, replications

    rng = np.random.default_rng(3)
    Xtr, Xte = rng.normal(size=(20, 5)) * [1, 2, 3, 4, 5], rng.normal(size=(7, 5))
    for std in (True, False):
        A, B = Xtr, Xte
        if std:
            mu, sd = Xtr.mean(axis=0), Xtr.std(axis=0)
            A, B = (Xtr - mu) / sd, (Xte - mu) / sd
        g = 1.0 / pdist(A).mean() ** 2
        Ktr, Kte = kernel_columns(Xtr, Xte, std)
        np.testing.assert_allclose(Ktr, rbf_kernel(A, A, gamma=g), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(Kte, rbf_kernel(B, A, gamma=g), rtol=1e-10, atol=1e-12)
    with pytest.raises(ValueError, match="competitor_kernel must be one of"):
        replications(1, only=["colon"], competitor_kernel="glmnet")
