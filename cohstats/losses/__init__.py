"""Loss library: binary margin losses (numba scalars + vectorised API), multiclass losses.

* :mod:`cohstats.losses.scalar` -- the one numba definition of every binary margin loss
  (integer codes for the solvers) and their scalar links / population minimisers.
* :mod:`cohstats.losses.binary` -- vectorised API re-exported here: :func:`get_loss`,
  :class:`MarginLoss`, coherence / LUM / hinge-family links and minimisers.
* :mod:`cohstats.losses.multiclass` -- multicategory coherence loss [ZJLY] (import from there;
  its ``coherence_minimizer`` is the multiclass one).
* :mod:`cohstats.losses.lamsvm` -- the lambda-SVM multiclass hinge [RH] and its calibration check.
"""
from .binary import *  # noqa: F401,F403
from .binary import __all__ as _binary_all
from .scalar import LOSS_CODES  # noqa: F401

__all__ = list(_binary_all) + ["LOSS_CODES"]
