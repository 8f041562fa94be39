"""Class probabilities of binary fits with offsets, ``f(x) = offset + b + x'beta``.

:meth:`cohstats.results.Fit.predict` adds the offsets of the rows to the decision values; a fit
whose probabilities depend on the selected ``s`` or on options (the refitted LUM, Platt's
sigmoid, ...) maps those decision values through its ``_link_to_prob(f, s=None, **options)``
by the :class:`OffsetProbabilities` mixin.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from cohstats.results import Fit
from cohstats.svalues import is_sequence
from cohstats.validation import check_options


class OffsetProbabilities:
    """Mixin (before :class:`~cohstats.results.Fit`): ``predict(type="prob")`` of a fit with
    offsets is ``_link_to_prob(offset + b + x'beta, s, **options)``."""

    def predict(self, newdata=None, type: str = "class", s=None, offset=None, **options):
        if getattr(self.design, "offset", None) is None or type not in ("prob", "response") or is_sequence(s):
            return super().predict(newdata, type, s, offset, **options)
        check_options(f"{self.__class__.__name__}.predict()", options, self._predict_options)
        link = super().predict(newdata, "link", s, offset)
        p = np.asarray(self._link_to_prob(link.to_numpy(), s, **options), dtype=float)
        return pd.DataFrame(np.column_stack([1.0 - p, p]), index=link.index, columns=self.classes)

    predict.__doc__ = Fit.predict.__doc__

    def _offset_proba(self, f, s=None, **options):
        """P(Y = classes[1]) from decision values ``f`` that include the offsets, at ``s`` (the
        held-out scores of :mod:`cohstats.tuning`, which import no model and call this by name)."""
        return self._link_to_prob(f, s, **options)
