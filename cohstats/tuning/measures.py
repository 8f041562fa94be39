from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import metrics as _m


@dataclass(frozen=True)
class _Measure:
    key: str
    name: str
    output: str  # "decision" or "prob"
    greater_is_better: bool
    per_fold_only: bool = False  # AUC: a fold statistic, not a mean of pointwise terms


_MEASURES = {
    "class": _Measure("class", "Misclassification error", "decision", False),
    "cre": _Measure("cre", "Cross-entropy (EKL)", "prob", False),
    "deviance": _Measure("deviance", "Deviance (2 x cross-entropy)", "prob", False),
    "brier": _Measure("brier", "Brier score", "prob", False),
    "mae": _Measure("mae", "Mean absolute error |y - p|", "prob", False),
    "auc": _Measure("auc", "AUC", "decision", True, per_fold_only=True),
}
_ALIASES = {"ekl": "cre", "logloss": "cre", "mse": "brier", "error": "class", "misclass": "class"}


def _get_measure(measure, design) -> _Measure:
    if not isinstance(measure, str):
        raise TypeError(f"measure must be a string; got {type(measure).__name__}")
    key = _ALIASES.get(measure.lower(), measure.lower())
    if key not in _MEASURES:
        allowed = sorted(set(_MEASURES) | set(_ALIASES))
        raise ValueError(f"measure must be one of {allowed}; got {measure!r}")
    if key == "auc" and not design.binary:
        raise ValueError(f"measure='auc' needs a binary response; this one has {design.n_classes} classes")
    return _MEASURES[key]


def _pointwise(meas: _Measure, y, out, binary: bool) -> np.ndarray:
    """Per-observation loss; ``out`` has the sequence on its first axis: (L, n) or (L, n, K)."""
    if meas.key == "class":
        if binary:
            pred = np.where(out > 0, 1.0, -1.0)  # a tie f = 0 goes to the class coded -1
        else:
            pred = np.argmax(out, axis=-1)
        return (pred != y[None]).astype(np.float64)
    if binary:
        p = np.asarray(out, dtype=np.float64)
        if p.ndim == 3:  # (L, n, 2) -> probability of classes[1]
            p = p[..., 1]
        y01 = (y + 1.0) / 2.0
        if meas.key in ("cre", "deviance"):
            t = _m._cre_terms(y01[None], p)
            return 2.0 * t if meas.key == "deviance" else t
        if meas.key == "brier":
            return (y01[None] - p) ** 2
        if meas.key == "mae":
            return np.abs(y01[None] - p)
    P = np.asarray(out, dtype=np.float64)
    yi = y.astype(np.int64)
    rows = np.arange(yi.shape[0])
    if meas.key in ("cre", "deviance"):
        with np.errstate(divide="ignore"):
            t = -np.log(P[:, rows, yi])
        return 2.0 * t if meas.key == "deviance" else t
    E = np.zeros(P.shape[1:])
    E[rows, yi] = 1.0
    if meas.key == "brier":
        return np.sum((E[None] - P) ** 2, axis=-1)
    if meas.key == "mae":
        return 0.5 * np.sum(np.abs(E[None] - P), axis=-1)
    raise AssertionError(meas.key)  # pragma: no cover


def _evaluate(meas: _Measure, y, w, out, binary) -> np.ndarray:
    """The measure on one evaluation set, one value per sequence point: shape (L,)."""
    if meas.per_fold_only:
        vals = np.empty(out.shape[0])
        y01 = (y + 1.0) / 2.0
        for j in range(out.shape[0]):
            if y01.min() == y01.max():
                vals[j] = np.nan
            else:
                vals[j] = _m.auc(y01, out[j], weights=w)
        return vals
    t = _pointwise(meas, y, out, binary)
    t = np.where(w[None] > 0, t, 0.0)
    return np.sum(w[None] * t, axis=1) / np.sum(w)


def _outputs(fit, X, kind, lam, prob_args):
    """Decision values or probabilities of a fitted model, sequence on the first axis."""
    prob_args = prob_args or {}
    if lam is None:
        if kind == "decision" and hasattr(fit, "_class_scores"):
            # decision values that are not one per class (one-vs-one svm): per-class scores
            # whose argmax is the fit's own class prediction
            return np.asarray(fit._class_scores(X))[None]
        if kind == "decision":
            return np.asarray(fit._decision(X))[None]
        return np.asarray(fit._proba(X, **prob_args))[None]
    flam = np.asarray(getattr(fit, "lambda_", np.empty(0)), dtype=float)
    if flam.shape == lam.shape and np.allclose(flam, lam, rtol=1e-12, atol=0):
        if kind == "decision":
            return np.asarray(fit._decision_path(X))
        return np.asarray(fit._proba_path(X, **prob_args))
    # the fold fit did not reproduce the sequence (e.g. stopped early): evaluate at each value
    if kind == "decision":
        return np.stack([np.asarray(fit._decision(X, s=float(v))) for v in lam])
    return np.stack([np.asarray(fit._proba(X, s=float(v), **prob_args)) for v in lam])


def _select(values, lam, scores, se, greater_is_better):
    """Indices of the best value and of the one-standard-error choice (ties: the earlier value of the sequence)."""
    sc = -np.asarray(scores, float) if greater_is_better else np.asarray(scores, float)
    ok = ~np.isnan(sc)
    if not ok.any():
        return None, None
    best = np.min(sc[ok])
    tol = 1e-12 * max(1.0, abs(best)) if np.isfinite(best) else 0.0
    cand = np.flatnonzero(ok & (sc <= best + tol))
    # ties: the more regularised setting, i.e. the earlier value of the fitted sequence (paths
    # start from the most regularised end: the largest lambda of a decreasing penalty path, the
    # fewest steps of a boosting path)
    i_min = int(cand[0])
    if lam is None:
        return i_min, i_min
    s_min = se[i_min]
    if not np.isfinite(s_min):
        s_min = 0.0
    thr = sc[i_min] + s_min
    cand1 = np.flatnonzero(ok & (sc <= thr + tol))
    i_1se = int(cand1[0])
    return i_min, i_1se


def _nzero_of(fit, L):
    """Number of nonzero coefficients along the path, if the fit reports it."""
    for attr in ("df_", "nzero_", "df"):
        v = getattr(fit, attr, None)
        if v is not None and np.ndim(v) == 1 and len(v) == L:
            return np.asarray(v)
    cp = getattr(fit, "_coef_path", None)
    if cp is not None:
        cp = np.asarray(cp)
        if cp.shape[0] == L:
            return (
                np.count_nonzero(cp.reshape(L, -1) != 0, axis=1)
                if cp.ndim == 2
                else np.count_nonzero(np.any(cp != 0, axis=2), axis=1)
            )
    return None
