"""Binary data with an offset for the offset tests: predictors ``x1..xp``, an offset column
``o`` and labels ``"a"``/``"b"`` drawn from the logistic model
``logit P(b) = slope (0.3 + x1 - 0.7 x2 + o)``."""

import numpy as np
import pandas as pd


def offset_frame(n, seed, p=2, o_scale=0.8, slope=1.0):
    rng = np.random.default_rng(seed)
    d = pd.DataFrame(rng.normal(size=(n, p)), columns=[f"x{j + 1}" for j in range(p)])
    d["o"] = rng.normal(scale=o_scale, size=n)
    eta = slope * (0.3 + d["x1"] - 0.7 * d["x2"] + d["o"])
    d["y"] = np.where(rng.uniform(size=n) < 1 / (1 + np.exp(-eta)), "b", "a")
    return d
