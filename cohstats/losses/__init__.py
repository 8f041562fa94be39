"""Loss library: binary margin losses (numba scalars + vectorised API), multiclass losses.

* :mod:`cohstats.losses.scalar` -- the one numba definition of every binary margin loss
  (integer codes for the solvers) and their scalar links / population minimisers.
* :mod:`cohstats.losses.binary` -- vectorised API re-exported here: :func:`get_loss`,
  :class:`MarginLoss`, coherence / LUM / hinge-family links and minimisers.
* :mod:`cohstats.losses.multiclass` -- multicategory coherence loss [ZJLY] (import from there;
  its ``coherence_minimizer`` is the multiclass one).
* :mod:`cohstats.losses.lamsvm` -- the lambda-SVM multiclass hinge [RH] and its calibration check.
"""

from cohstats._numba_cache import install as _install_numba_cache

_install_numba_cache()  # before any jitted loss is defined: hash-keyed numba cache

from .binary import *  # noqa: E402,F401,F403
from .binary import __all__ as _binary_all  # noqa: E402
from .scalar import LOSS_CODES  # noqa: E402,F401

__all__ = list(_binary_all) + ["LOSS_CODES", "warmup"]


def warmup():
    """Compile (or load from numba's disk cache) every loss kernel now rather than on first use.

    Benchmarks call this before timing so that compile time is excluded.

    Examples
    --------
    >>> warmup()
    """
    import numpy as np

    from . import binary, lamsvm, multiclass

    z = np.zeros(2)
    for name in binary.loss_names():
        loss = binary.get_loss(name)
        loss.value(z), loss.d1(z), loss.d2(z), loss.minimizer(np.full(2, 0.3))
    binary.coherence_link(z), binary.coherence_log_link(z), binary.lum_link(z), binary.hhinge_link(z)
    G = np.zeros((1, 3))
    y = np.zeros(1, dtype=np.int64)
    multiclass.coherence_loss(G, y), multiclass.coherence_grad(G, y), multiclass.coherence_proba(G)
    multiclass.hinge_loss(G, y), multiclass.coherence_minimizer(np.full(3, 1 / 3))
    lamsvm.calibration_check(1.0, 3, n_draws=1, random_state=0)
