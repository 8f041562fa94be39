"""The error lines of a fit's summary: cross-validated error, training-error intervals, and the
bootstrap intervals of :meth:`cohstats.results.Fit.confint` once computed
(:func:`cohstats.inference.bootstrap_confint`)."""

from __future__ import annotations

import numpy as np

__all__ = ["summary_intervals"]

BOOTSTRAP_NOTE = (
    "percentile intervals of the penalised estimates over bootstrap refits at the same s (they do "
    "not account for s having been chosen on these data); test error: out-of-bag misclassification"
)


def bootstrap_info(d: dict) -> dict:
    info = {"bootstrap samples": int(d["B"]), "level": float(d["level"])}
    if d.get("s") is not None:
        info["s"] = float(d["s"])
    info["seed"] = "none given" if d.get("random_state") is None else str(d["random_state"])
    return info


def summary_intervals(fit, sm, level: float = 0.95) -> None:
    """The error lines of ``fit.summary()``.

    A fit handed out by ``cv`` at a value of its cross-validated curve shows the cross-validated
    measure and its standard error there (an estimate of the test performance). Otherwise every
    training error rate gets its Wilson interval, labelled as an interval of the error on the
    training rows: the count is ``round(rate * n)`` over the ``n`` training rows, and the interval
    says only how precisely the rate on these rows is known (a training error is optimistic as an
    estimate of the test error). Bootstrap intervals (``fit.confint()``) at the fit's ``s`` are
    added as a table.
    """
    from .reporting import error_ci

    cvsel = fit._cv_selection
    at = _cv_index(fit, cvsel)
    if at is not None:
        sm.info[f"cross-validated {cvsel['measure']} at s ({cvsel['nfolds']} folds)"] = float(cvsel["cvm"][at])
        sm.info["  its standard error"] = float(cvsel["cvsd"][at])
    else:
        n = int(fit.nobs)
        pct = int(round(100 * level))
        keys = [k for k in sm.info if "error" in k and "interval" not in k and "cross-validated" not in k]
        for key in keys:
            v = sm.info[key]
            if isinstance(v, (float, np.floating)) and 0.0 <= float(v) <= 1.0 and n > 0:
                lo, hi = error_ci(int(round(float(v) * n)), n, level=level, method="wilson")
                sm.info[f"{key}: {pct}% Wilson interval on the training rows"] = f"{float(lo):.4g} .. {float(hi):.4g}"
                if not any("training rows" in note for note in sm.notes):
                    sm.notes.append(
                        "the Wilson interval of the training error covers the error on the training rows, "
                        "not the test error; cross-validation (cv) or fit.confint() estimate that"
                    )
    boot = fit._bootstrap
    s_now = float(fit.s) if fit.is_path else None
    if boot is not None and (boot["s"] is None) == (s_now is None):
        if boot["s"] is None or np.isclose(boot["s"], s_now, rtol=1e-9, atol=0):
            lv = float(boot["level"])
            sm.tables[f"Bootstrap {100 * lv:g}% percentile intervals"] = boot["coef"]
            te = boot["test_error"]
            sm.info[f"test error (out-of-bag bootstrap, B={int(boot['B'])})"] = float(te["estimate"])
            sm.info[f"  its {100 * lv:g}% percentile interval"] = f"{te['lower']:.4g} .. {te['upper']:.4g}"
            sm.notes.append(BOOTSTRAP_NOTE)


def _cv_index(fit, cvsel):
    """Position of the fit's ``s`` on the cross-validated curve it carries, or None."""
    if cvsel is None or not fit.is_path:
        return None
    lam = np.asarray(cvsel["lambda"], dtype=float)
    hit = np.flatnonzero(np.isclose(lam, float(fit.s), rtol=1e-9, atol=0))
    return int(hit[0]) if hit.size else None
