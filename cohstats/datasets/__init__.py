"""Data for cohstats: simulation generators of the papers, shipped real data, reference tables.

* ``make_<name>(n, random_state=None, ..., return_prob=False)`` and ``prob_<name>(X)``:
  simulations with known class probabilities (:mod:`cohstats.datasets.simulations`);
  :func:`bayes_error` gives their Bayes errors.
* :func:`load` / :func:`load_split`: real data shipped in ``cohstats/data``
  (:mod:`cohstats.datasets.loaders`).
* :func:`reference`: the published tables of the five papers.

Examples
--------
>>> from cohstats.datasets import make_wsl2, load, reference
>>> make_wsl2(100, random_state=0).shape
(100, 3)
"""

from .loaders import DATASETS, UNAVAILABLE, gene_names, list_datasets, list_reference, load, load_split, reference
from .simulations import (
    GENERATORS,
    PUBLISHED_BAYES_ERROR,
    bayes_error,
    make_g241c,
    make_g241d,
    make_lamsvm_single_point,
    make_lum51,
    make_lum52,
    make_lum53,
    make_lum54,
    make_lum55,
    make_waveform,
    make_wsl1,
    make_wsl2,
    prob_g241c,
    prob_g241d,
    prob_lamsvm_single_point,
    prob_lum51,
    prob_lum52,
    prob_lum53,
    prob_lum54,
    prob_lum55,
    prob_waveform,
    prob_wsl1,
    prob_wsl2,
)

__all__ = [
    "load",
    "load_split",
    "reference",
    "list_datasets",
    "list_reference",
    "gene_names",
    "DATASETS",
    "UNAVAILABLE",
    "GENERATORS",
    "PUBLISHED_BAYES_ERROR",
    "bayes_error",
    "make_wsl1",
    "make_wsl2",
    "make_lum51",
    "make_lum52",
    "make_lum53",
    "make_lum54",
    "make_lum55",
    "make_waveform",
    "make_g241c",
    "make_g241d",
    "make_lamsvm_single_point",
    "prob_wsl1",
    "prob_wsl2",
    "prob_lum51",
    "prob_lum52",
    "prob_lum53",
    "prob_lum54",
    "prob_lum55",
    "prob_waveform",
    "prob_g241c",
    "prob_g241d",
    "prob_lamsvm_single_point",
]
