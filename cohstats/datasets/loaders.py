"""Loaders of the real data sets shipped with cohstats and of the papers' reference tables.

``load(name)`` returns a DataFrame with the response column ``y`` (binary sets: integer labels
``-1``/``+1`` with the positive class documented in :data:`DATASETS`; multiclass sets: the
original class codes); ``load_split(name)`` returns the predefined ``(train, test)`` split where
one exists ([ZJLY] Table 1, ISLP's Khan split); ``reference(paper, table)`` returns one table of
published numbers. Sources, licences and preprocessing: ``data/README.md`` of the repository
(installed as ``cohstats/data/README.md``).

Where the files are: the repository keeps one copy, in its top-level ``data/`` folder; building
the wheel maps that folder into the package as ``cohstats/data``. :func:`data_dir` therefore looks
first inside the installed package (a wheel) and then in ``data/`` next to the package directory
(an editable install or a source checkout).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["load", "load_split", "reference", "list_datasets", "list_reference", "gene_names", "DATASETS", "data_dir"]


@dataclass(frozen=True)
class DatasetInfo:
    """Documented shape of a shipped data set (checked by the tests)."""

    file: str
    n: int
    n_features: int
    classes: tuple
    description: str
    positive: str | None = None  # meaning of y = +1 for binary sets
    split: tuple[int, int] | None = None  # (n_train, n_test) of the predefined split
    aliases: tuple[str, ...] = field(default_factory=tuple)


DATASETS: dict[str, DatasetInfo] = {
    "vowel": DatasetInfo(
        "vowel",
        990,
        10,
        tuple(range(11)),
        "Deterding vowel recognition (UCI/ESL), 10 LPC features, 11 vowels",
        split=(528, 462),
    ),
    "segment": DatasetInfo(
        "segment",
        2310,
        19,
        ("brickface", "cement", "foliage", "grass", "path", "sky", "window"),
        "UCI image segmentation, 19 features, 7 classes",
        split=(210, 2100),
        aliases=("segmentation",),
    ),
    "optdigits": DatasetInfo(
        "optdigits", 5620, 64, tuple(range(10)), "UCI optical digits, 8x8 counts (0-16)", split=(3823, 1797)
    ),
    "pendigits": DatasetInfo(
        "pendigits",
        10992,
        16,
        tuple(range(10)),
        "UCI pen-based digits, 16 features",
        split=(7494, 3498),
        aliases=("pendigit", "penbased"),
    ),
    "satimage": DatasetInfo(
        "satimage",
        6435,
        36,
        (1, 2, 3, 4, 5, 7),
        "Statlog Landsat satellite image, 36 features, 6 classes",
        split=(4435, 2000),
        aliases=("satellite",),
    ),
    "bupa": DatasetInfo(
        "bupa",
        345,
        6,
        (-1, 1),
        "BUPA liver disorders: five blood tests and drinks; y from selector",
        positive="selector == 2",
        aliases=("liver",),
    ),
    "ionosphere": DatasetInfo("ionosphere", 351, 34, (-1, 1), "UCI ionosphere radar returns", positive="good (g)"),
    "pima": DatasetInfo(
        "pima", 768, 8, (-1, 1), "Pima Indians diabetes", positive="tested positive", aliases=("diabetes",)
    ),
    "mushroom": DatasetInfo(
        "mushroom",
        8124,
        22,
        (-1, 1),
        "UCI mushroom (agaricus-lepiota), 22 categorical attributes",
        positive="poisonous (p)",
        aliases=("mushrooms",),
    ),
    "abalone": DatasetInfo(
        "abalone",
        4177,
        8,
        (*range(1, 28), 29),
        "UCI abalone; y = rings (1..29); sex categorical",
    ),
    "abalone6": DatasetInfo(
        "abalone", 4177, 8, tuple(range(6)), "UCI abalone with [RH]'s class floor(rings/5) (6 classes)"
    ),
    "digits": DatasetInfo(
        "digits",
        1797,
        64,
        tuple(range(10)),
        "scikit-learn 8x8 digits (= UCI optdigits test set); USPS stand-in",
        aliases=("usps",),
    ),
    "breast_cancer": DatasetInfo(
        "breast_cancer",
        569,
        30,
        (-1, 1),
        "Wisconsin diagnostic breast cancer (scikit-learn copy)",
        positive="malignant",
        aliases=("wdbc",),
    ),
    "leukemia": DatasetInfo(
        "leukemia",
        72,
        7129,
        (-1, 1),
        "Golub et al. (1999) leukaemia, 7129 raw probe values; [WSL] Table 5",
        positive="AML",
        split=(38, 34),
        aliases=("leukaemia", "golub"),
    ),
    "leukemia3571": DatasetInfo(
        "leukemia",
        72,
        3571,
        (-1, 1),
        "Golub leukaemia after Dudoit et al. (2002) pre-selection: 3571 log10 genes; [ZDJ] Table 4",
        positive="AML",
        split=(38, 34),
    ),
    "colon": DatasetInfo(
        "colon", 62, 2000, (-1, 1), "Alon et al. (1999) colon tissues, 2000 genes", positive="tumour", aliases=("alon",)
    ),
    "khan": DatasetInfo(
        "khan",
        83,
        2308,
        ("BL", "EWS", "NB", "RMS"),
        "Khan et al. (2001) SRBCT gene expression (ISLP), 4 tumour classes",
        split=(63, 20),
    ),
    "khan2": DatasetInfo(
        "khan",
        83,
        2308,
        (-1, 1),
        "Khan gene expression reduced to EWS vs the other three tumours (a further HDLSS set)",
        positive="EWS",
        split=(63, 20),
    ),
}

_ALIASES = {a: k for k, v in DATASETS.items() for a in v.aliases}

#: data sets that exist in the papers but cannot be shipped (no offline source)
UNAVAILABLE = {
    "sensor": "UCI gas sensor array drift ([RH]); not obtainable offline",
    "covtype": "UCI covertype ([RH]); not obtainable offline",
    "lung": "lung cancer ([LZW]); not shipped",
    "usps_full": "USPS 16x16 ([ZDJ]); not shipped, 'digits' (8x8) is the stand-in",
}

_SPLIT_COL = "split"


def list_datasets(details: bool = False):
    """Names accepted by :func:`load` (aliases excluded), or a table describing them.

    Parameters
    ----------
    details : bool
        Return a DataFrame with rows, features, classes, positive class, predefined split,
        aliases and a description of every data set.

    Examples
    --------
    >>> "pima" in list_datasets()
    True
    >>> int(list_datasets(details=True).loc["vowel", "n_train"])
    528
    """
    if not details:
        return sorted(DATASETS)
    rows = []
    for k in sorted(DATASETS):
        v = DATASETS[k]
        rows.append(
            {
                "name": k,
                "n": v.n,
                "n_features": v.n_features,
                "n_classes": len(v.classes),
                "positive": v.positive or "",
                "n_train": v.split[0] if v.split else None,
                "n_test": v.split[1] if v.split else None,
                "aliases": ", ".join(v.aliases),
                "description": v.description,
            }
        )
    return pd.DataFrame(rows).set_index("name")


def _resolve(name) -> str:
    if not isinstance(name, str):
        raise TypeError(f"name must be a string; got {type(name).__name__}")
    key = name.strip().lower().replace("-", "_")
    key = _ALIASES.get(key, key)
    if key in DATASETS:
        return key
    if key in UNAVAILABLE:
        raise ValueError(f"data set {name!r} is not available: {UNAVAILABLE[key]}")
    aliases = ", ".join(f"{a}->{k}" for a, k in sorted(_ALIASES.items()))
    raise ValueError(
        f"unknown data set {name!r}; available: {', '.join(list_datasets())} (aliases: {aliases}); "
        f"simulated sets come from cohstats.datasets.make_<name>"
    )


def data_dir():
    """Folder holding the shipped data files (a path-like ``importlib.resources`` Traversable).

    The installed package's ``cohstats/data`` when it exists (a wheel install), else the
    repository's top-level ``data/`` folder beside the package (editable install, checkout).

    Raises
    ------
    FileNotFoundError
        When neither exists (a broken installation); the message names both places.

    Examples
    --------
    >>> (data_dir() / "pima.csv.xz").is_file()
    True
    """
    packaged = resources.files("cohstats") / "data"
    if packaged.is_dir():
        return packaged
    pkg_dir = Path(str(resources.files("cohstats")))
    repo = pkg_dir.parent / "data"
    if repo.is_dir():
        return repo
    raise FileNotFoundError(
        f"cohstats data files not found: neither {packaged} (installed wheel) nor {repo} "
        "(source checkout) exists; reinstall cohstats (pip install cohstats, or pip install -e . "
        "from a clone)"
    )


@lru_cache(maxsize=None)
def _read_cached(file: str) -> pd.DataFrame:
    path = data_dir() / f"{file}.csv.xz"
    with resources.as_file(path) as p:
        if file == "mushroom":
            return pd.read_csv(p, dtype=str, keep_default_na=False)
        return pd.read_csv(p)


def _read(file: str) -> pd.DataFrame:
    """The shipped file as a fresh DataFrame (parsed once per process, then copied)."""
    return _read_cached(file).copy()


def _pm(cond) -> np.ndarray:
    return np.where(np.asarray(cond), 1, -1).astype(np.int64)


def _build(key: str) -> pd.DataFrame:
    info = DATASETS[key]
    df = _read(info.file)
    if key == "bupa":
        df["y"] = _pm(df.pop("selector") == 2)
    elif key == "ionosphere":
        df["y"] = _pm(df.pop("class") == "g")
    elif key == "pima":
        df["y"] = _pm(df.pop("class") == "tested_positive")
    elif key == "mushroom":
        cls = df.pop("class")
        for c in df.columns:
            df[c] = pd.Categorical(df[c])
        df["y"] = _pm(cls == "p")
    elif key == "breast_cancer":
        df["y"] = _pm(df.pop("diagnosis") == "malignant")
    elif key == "abalone":
        df["sex"] = pd.Categorical(df["sex"], categories=["F", "I", "M"])
        df["y"] = df.pop("rings").astype(np.int64)
    elif key == "abalone6":
        df["sex"] = pd.Categorical(df["sex"], categories=["F", "I", "M"])
        df["y"] = (df.pop("rings") // 5).astype(np.int64)
    elif key == "vowel":
        df = df.drop(columns=["speaker", "sex"])
    elif key in ("leukemia", "leukemia3571"):
        patient = pd.Index(df.pop("patient").astype(int), name="patient")
        genes = [c for c in df.columns if c not in ("split", "y")]
        X = df[genes].to_numpy(dtype=float)
        if key == "leukemia3571":
            X, keep = _dudoit_preselect(X)
            genes = [g for g, k in zip(genes, keep) if k]
        feats = pd.DataFrame(X, columns=[f"g{j + 1}" for j in range(X.shape[1])])
        out = pd.concat([df[["split"]], feats], axis=1)
        out["y"] = _pm(df["y"] == "AML")
        out.index = patient  # Golub's patient numbers ([WSL] names patients 60 and 66)
        # no DataFrame.attrs here: pandas deep-copies attrs in every operation, which makes
        # column-wise work (formula parsing) quadratic; see gene_names()
        df = out
    elif key == "colon":
        df = df.drop(columns="sample")
        df["y"] = _pm(df["y"] == "tumour")
    elif key == "khan2":
        df["y"] = _pm(df["y"] == "EWS")
    return df


def _dudoit_preselect(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Dudoit, Fridlyand & Speed (2002) gene pre-selection of the Golub data.

    Threshold at floor 100 and ceiling 16000, keep genes with ``max/min > 5`` and
    ``max - min > 500`` over the 72 samples, take log10. Gives the 3571 genes of [ZDJ] Table 4.
    """
    Xc = np.clip(X, 100.0, 16000.0)
    mx, mn = Xc.max(axis=0), Xc.min(axis=0)
    keep = (mx / mn > 5) & (mx - mn > 500)
    return np.log10(Xc[:, keep]), keep


def _load_with_split(key: str) -> pd.DataFrame:
    return _build(key)


def gene_names(name: str) -> list[str]:
    """Probe accessions of the columns ``g1, g2, ...`` of ``load("leukemia")`` /
    ``load("leukemia3571")`` (Golub et al.'s "Gene Accession Number").

    Examples
    --------
    >>> gene_names("leukemia")[0]
    'AFFX-BioB-5_at'
    >>> len(gene_names("leukemia3571"))
    3571
    """
    key = _resolve(name)
    if key not in ("leukemia", "leukemia3571"):
        raise ValueError(f"gene_names is available for 'leukemia' and 'leukemia3571'; got {name!r}")
    raw = _read("leukemia")
    genes = [c for c in raw.columns if c not in ("patient", "split", "y")]
    if key == "leukemia3571":
        _, keep = _dudoit_preselect(raw[genes].to_numpy(dtype=float))
        genes = [g for g, k in zip(genes, keep) if k]
    return genes


def load(name: str) -> pd.DataFrame:
    """Load a shipped real data set as a DataFrame with the response column ``y``.

    Parameters
    ----------
    name : str
        One of :func:`list_datasets` or an alias ("liver" = "bupa", "diabetes" = "pima",
        "segmentation" = "segment", "pendigit" = "pendigits", "usps" = "digits", "wdbc" =
        "breast_cancer", "leukaemia" = "leukemia", "alon" = "colon"). Binary sets code ``y``
        as -1/+1 (the positive class is
        ``DATASETS[name].positive``); ``"abalone"`` has ``y = rings``, ``"abalone6"`` has
        ``y = floor(rings / 5)``; ``"khan"`` keeps the four tumour labels, ``"khan2"`` is EWS
        (+1) vs the rest; ``"leukemia"`` (7129 raw probes, index = patient number) and
        ``"leukemia3571"`` (Dudoit et al.'s pre-selection, log10) code AML as +1, ``"colon"``
        tumour as +1. Categorical attributes (mushroom, abalone's sex) are pandas
        categoricals, so a formula such as ``"y ~ ."`` one-hot encodes them.

    Returns
    -------
    pandas.DataFrame
        Features and ``y``; no missing values (mushroom's ``?`` in ``stalk_root`` is a level).

    Examples
    --------
    >>> df = load("pima")
    >>> df.shape, sorted(df.y.unique().tolist())
    ((768, 9), [-1, 1])
    """
    key = _resolve(name)
    df = _load_with_split(key)
    return df.drop(columns=[_SPLIT_COL], errors="ignore")


def load_split(
    name: str, random_state=None, n_train: int | None = None, n_test: int | None = None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Predefined ``(train, test)`` split ([ZJLY] Table 1; ISLP's Khan split).

    ``"vowel"`` 528/462, ``"segment"`` 210/2100, ``"optdigits"`` 3823/1797, ``"pendigits"``
    7494/3498, ``"satimage"`` 4435/2000 (the UCI/Statlog train and test files), ``"khan"`` and
    ``"khan2"`` 63/20, ``"leukemia"``/``"leukemia3571"`` 38/34 (Golub et al.; [WSL] Table 5),
    and ``"waveform"`` 300/4700 drawn from :func:`make_waveform` with
    ``random_state`` (``n_train``/``n_test`` change the sizes of the waveform draw only).

    Examples
    --------
    >>> tr, te = load_split("vowel")
    >>> len(tr), len(te)
    (528, 462)
    """
    if isinstance(name, str) and name.strip().lower() == "waveform":
        from .simulations import make_waveform

        ntr = 300 if n_train is None else n_train
        nte = 4700 if n_test is None else n_test
        rng = np.random.default_rng(random_state) if not isinstance(random_state, np.random.Generator) else random_state
        return (make_waveform(ntr, random_state=rng), make_waveform(nte, random_state=rng))
    key = _resolve(name)
    if DATASETS[key].split is None:
        have = sorted(k for k, v in DATASETS.items() if v.split is not None) + ["waveform"]
        raise ValueError(
            f"data set {name!r} has no predefined train/test split; available: {', '.join(have)}. "
            "Draw random partitions yourself (e.g. [WSL]: 100 random training cases)."
        )
    if n_train is not None or n_test is not None:
        raise ValueError("n_train/n_test apply only to the generated 'waveform' split")
    df = _load_with_split(key)
    s = df.pop(_SPLIT_COL)
    tr = df[s.to_numpy() == "train"]
    te = df[s.to_numpy() == "test"]
    if df.index.name is None:  # keep meaningful indexes (leukaemia patient numbers)
        tr, te = tr.reset_index(drop=True), te.reset_index(drop=True)
    return tr, te


# ----------------------------------------------------------------------------- reference tables
def _reference_files() -> list[str]:
    d = data_dir() / "reference"
    return sorted(p.name for p in d.iterdir() if p.name.endswith(".csv"))


def list_reference() -> list[tuple[str, str]]:
    """All ``(paper, table)`` pairs accepted by :func:`reference`.

    Examples
    --------
    >>> ("zdj2012", "table5") in list_reference()
    True
    """
    out = []
    for f in _reference_files():
        paper, table = f.split("_")[:2]
        out.append((paper, table))
    return out


def reference(paper: str, table: str) -> pd.DataFrame:
    """Published numbers of one table (``data/reference/<paper>_<table>_*.csv``).

    Parameters
    ----------
    paper : str
        ``"zdj2012"``, ``"zjly2009"``, ``"wsl2008"``, ``"rh2015"`` or ``"lzw2011"``.
    table : str
        ``"table1"`` ... or ``"text"`` (values quoted in the text); an integer ``5`` means
        ``"table5"``.

    Examples
    --------
    >>> reference("zdj2012", "table5").columns[0]
    'dataset'
    """
    if isinstance(table, (int, np.integer)):
        table = f"table{int(table)}"
    paper_s, table_s = str(paper).strip().lower(), str(table).strip().lower()
    prefix = f"{paper_s}_{table_s}_"
    hits = [f for f in _reference_files() if f.startswith(prefix)]
    if len(hits) != 1:
        avail = ", ".join(f"({p!r}, {t!r})" for p, t in list_reference())
        raise ValueError(f"no reference table for paper={paper!r}, table={table!r}; available: {avail}")
    path = data_dir() / "reference" / hits[0]
    with resources.as_file(path) as p:
        return pd.read_csv(p)
