"""The pooled calibration tables of the paper vignettes equal cohstats.calibration.reliability."""

import numpy as np
import pandas as pd
import pytest

from cohstats.calibration import reliability
from cohstats.vignettes.calibration_report import add_calibration, calibration_record, calibration_tables


def _reps(seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for r in range(3):
        p = rng.uniform(size=200 + 50 * r)
        p[:5] = [0.0, 0.1, 0.5, 0.9, 1.0]  # values on the bin edges
        y = np.where(rng.uniform(size=p.size) < p**1.3, 1, -1)
        out.append((p, y))
    return out


def test_pooled_tables_equal_reliability_on_the_concatenated_data():
    reps = _reps()
    recs = [calibration_record({"m": "A"}, p, y) for p, y in reps]
    summ, rel = calibration_tables(recs, ["m"])
    p = np.concatenate([p for p, _ in reps])
    e = np.concatenate([y for _, y in reps]) > 0
    tab, ece = reliability(p, e, bins=10)
    cols = ["bin", "n", "events", "mean_predicted", "observed", "ci_lower", "ci_upper", "gap"]
    pd.testing.assert_frame_equal(rel[cols].reset_index(drop=True), tab[cols], check_dtype=False, rtol=1e-12)
    assert summ.ece.iloc[0] == pytest.approx(ece, rel=1e-12)
    assert summ.brier.iloc[0] == pytest.approx(np.mean((e - p) ** 2), rel=1e-12)
    assert summ.n.iloc[0] == p.size and summ.reps.iloc[0] == 3


def test_degenerate_records_are_counted_not_pooled(tmp_path):
    from cohstats.vignettes.report import Report

    ((p, y),) = _reps()[:1]
    bad = p.copy()
    bad[0] = np.nan
    recs = [calibration_record({"ex": "E", "m": "A"}, p, y), calibration_record({"ex": "E", "m": "A"}, bad, y)]
    summ, _ = calibration_tables(recs, ["ex", "m"])
    assert (summ.reps.iloc[0], summ.degenerate.iloc[0]) == (1, 1)
    rep = Report("t", tmp_path, name="t")
    out = add_calibration(rep, recs, ["ex", "m"], "ex", "m", title="T", name="t")
    assert (tmp_path / "t_calibration.csv").exists() and len(out) == 1
