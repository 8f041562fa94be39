from __future__ import annotations

import numpy as np


def wsl_grid(spacing: str = "linear") -> np.ndarray:
    """The 61-value penalty grid of [WSL] over ``[1e-3, 1e3]``.

    ``spacing="linear"`` reads the paper literally: ``1e-3`` and ten equally spaced points
    in each interval ``(10^j, 10^(j+1)]``, ``j = -3..2``, i.e. ``10^j (1 + 0.9 k)``,
    ``k = 1..10``. ``spacing="log"`` uses ``10^(j + k/10)`` instead.

    Returns
    -------
    ndarray of 61 values in decreasing order (the order of penalty paths, as glmnet).

    Examples
    --------
    >>> g = wsl_grid()
    >>> len(g), float(g[0]), float(g[-1])
    (61, 1000.0, 0.001)
    >>> round(float(wsl_grid("log")[-2]), 8)   # 10^-2.9
    0.00125893
    """
    if spacing not in ("linear", "log"):
        raise ValueError(f"spacing must be 'linear' or 'log'; got {spacing!r}")
    vals = [1e-3]
    for j in range(-3, 3):
        for k in range(1, 11):
            if spacing == "linear":
                vals.append(10.0**j * (1.0 + 0.9 * k))
            else:
                vals.append(10.0 ** (j + k / 10.0))
    return np.array(sorted(vals, reverse=True))


# ============================================================================ helpers
