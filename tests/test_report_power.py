"""A vignette comparison table states its power (replications, the paper's, the 2-SE band)."""

import numpy as np
import pandas as pd

from cohstats.vignettes.report import Report


def test_compare_caption_states_the_power(tmp_path):
    ours = pd.DataFrame({"cell": ["a", "b", "c"], "err": [0.21, 0.30, 0.12], "se": [0.01, 0.02, 0.004]})
    pub = pd.DataFrame({"cell": ["a", "b", "c"], "err": [0.20, 0.25, 0.10], "sd": [0.05, 0.10, 0.02]})
    rep = Report("t", tmp_path, name="t")
    tab = rep.compare(ours, pub, on="cell", value="err", se="se", reps=25, published_sd="sd", published_reps=100)
    caption = " ".join(rep._blocks)
    band = np.median(200.0 * tab["se_combined"].to_numpy() / tab["published"].to_numpy())
    assert "Power: 25 replications (paper: 100)" in caption
    assert f"median 2-SE band {band:.2g} % of the published value" in caption
