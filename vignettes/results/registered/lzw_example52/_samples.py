"""The registered run's [LZW] Example 5.2 samples, drawn exactly as the lum_simulations vignette
draws them: ``SeedSequence([0, 52, 0, rep])`` spawned into training, validation and test streams."""

import numpy as np

from cohstats.vignettes import lum_simulations as L

_GEN = L._generator("5.2", 0)


def samples(rep: int, n_test: int):
    """``(Xtr, ytr), (Xva, yva), (Xte, yte), p_te`` of replication ``rep`` (100 / 100 / n_test)."""
    ss = np.random.SeedSequence([0, L._EXAMPLE_ID["5.2"], 0, rep])
    s_tr, s_va, s_te = ss.spawn(3)
    (dtr, _), (dva, _), (dte, pte) = (
        _GEN(n, np.random.default_rng(s)) for n, s in ((100, s_tr), (100, s_va), (n_test, s_te))
    )
    return L._xy(dtr), L._xy(dva), L._xy(dte), np.asarray(pte, dtype=float)
