"""Class probabilities for binary large-margin classifiers by post-processing decision values.

All methods are binary ([ZDJ], [WSL]) and work on plain arrays of decision values, so any fitted
binary classifier (SVM, psi-learning, LUM, C-learning) can use them:

===============  ============================================================  ==============
method           estimate                                                      source
===============  ============================================================  ==============
``"platt"``      ``1 / (1 + exp(A f + B))``, (A, B) by Platt's regularised      Platt 1999
                 cross-entropy (Newton with backtracking, Lin, Lin & Weng 2007)
``"sollich"``    ``expit(2 f)`` for ``|f| <= 1``, else ``expit(f + sign f)``     Sollich 2002
``"coherence"``  ``eta~(f; rho, u = 1)`` of [ZDJ] eq. (10); rho minimises the    [ZDJ]
                 training EKL (Brent on ``log rho`` in ``[log 1e-3, log 1e2]``)
``"bracket"``    ``(pi_lo + pi_hi) / 2`` from the signs of ``m + 1`` weighted    [WSL]
                 classifiers on the grid ``pi_j = (j - 1)/m`` ([WSL] Alg. 1)
===============  ============================================================  ==============

One comparator of [WSL] section 5 estimates ``p(x)`` without a classifier:
:func:`knn_prob`, the share of class ``+1`` among the ``k`` nearest training points
(Euclidean distance on standardised inputs; [WSL] examines ``k in {4, 9, 16, 25}``).

"Tuned Platt" is the Platt sigmoid on an SVM whose ``lambda`` minimises the GKL estimate
([WSL]): a tuning choice, not a different transform. ``svm`` fits offer it as
``predict(type="prob", method="platt_tuned")``, which runs :meth:`SVMFit.platt_tuned
<cohstats.models.svm.SVMFit.platt_tuned>` (a GKL search with :func:`cohstats.tuning.tune`,
``method="gkl", prob_args={"method": "platt"}``) once and caches the refitted SVM.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from cohstats.losses.binary import coherence_link, coherence_log_link

__all__ = [
    "platt_fit",
    "platt_prob",
    "sollich_prob",
    "coherence_rho",
    "coherence_prob",
    "bracket_prob",
    "bracket_grid",
    "PlattSigmoid",
    "knn_prob",
    "WSL_KNN_K",
]


def _as_f(f, name="f") -> np.ndarray:
    a = np.asarray(f, dtype=np.float64)
    if a.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array of decision values; got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must be finite")
    return a


def _as_y(y, n) -> np.ndarray:
    yy = np.asarray(y, dtype=np.float64)
    if yy.shape != (n,):
        raise ValueError(f"y must have the length of the decision values ({n}); got shape {yy.shape}")
    if not np.all((yy == 1.0) | (yy == -1.0)):
        raise ValueError("y must be coded -1/+1 (use design.y)")
    return yy


# ============================================================================ Platt
@dataclass(frozen=True)
class PlattSigmoid:
    """Fitted Platt sigmoid ``P(Y = +1 | f) = 1 / (1 + exp(A f + B))``."""

    A: float
    B: float
    n_iter: int
    converged: bool

    def __call__(self, f) -> np.ndarray:
        return platt_prob(f, self.A, self.B)


def _platt_obj(A, B, f, t):
    z = A * f + B
    pos = z >= 0
    out = np.empty_like(z)
    out[pos] = t[pos] * z[pos] + np.log1p(np.exp(-z[pos]))
    zn = z[~pos]
    out[~pos] = (t[~pos] - 1.0) * zn + np.log1p(np.exp(zn))
    return float(out.sum())


def _platt_targets(f, y):
    """Decision values, Platt's smoothed targets and the class counts."""
    f = _as_f(f)
    y = _as_y(y, f.size)
    npos = float(np.sum(y > 0))
    nneg = float(f.size - npos)
    t = np.where(y > 0, (npos + 1.0) / (npos + 2.0), 1.0 / (nneg + 2.0))
    return f, t, npos, nneg


def platt_fit(
    f, y, *, max_iter: int = 100, min_step: float = 1e-10, sigma: float = 1e-12, eps: float = 1e-5
) -> PlattSigmoid:
    """Fit Platt's sigmoid to decision values ``f`` and labels ``y`` (+-1).

    Minimises ``sum_i -[t_i log p_i + (1 - t_i) log(1 - p_i)]`` with ``p_i = 1/(1 + exp(A f_i + B))``
    and Platt's smoothed targets ``t_i = (N_+ + 1)/(N_+ + 2)`` (``y = +1``), ``1/(N_- + 2)``
    (``y = -1``), by Newton's method with backtracking from ``A = 0``,
    ``B = log((N_- + 1)/(N_+ + 1))`` (Lin, Lin & Weng 2007: ridge ``sigma`` on the Hessian,
    minimum step ``min_step``, at most ``max_iter`` iterations, stop when the gradient is below
    ``eps``).

    Returns
    -------
    PlattSigmoid

    Examples
    --------
    >>> import numpy as np
    >>> f = np.array([-2.0, -1.0, -0.5, 0.3, 1.0, 2.0]); y = np.array([-1, -1, 1, -1, 1, 1])
    >>> s = platt_fit(f, y); bool(s.A < 0)
    True
    """
    f, t, npos, nneg = _platt_targets(f, y)
    A, B = 0.0, math.log((nneg + 1.0) / (npos + 1.0))
    fval = _platt_obj(A, B, f, t)
    converged = False
    it = 0
    for it in range(1, max_iter + 1):
        z = A * f + B
        # p = 1/(1+exp(z)), q = 1 - p, computed stably
        p = np.where(z >= 0, np.exp(-np.abs(z)) / (1.0 + np.exp(-np.abs(z))), 1.0 / (1.0 + np.exp(-np.abs(z))))
        q = 1.0 - p
        d2 = p * q
        h11 = sigma + float(np.sum(f * f * d2))
        h22 = sigma + float(np.sum(d2))
        h21 = float(np.sum(f * d2))
        d1 = t - p
        g1 = float(np.sum(f * d1))
        g2 = float(np.sum(d1))
        if abs(g1) < eps and abs(g2) < eps:
            converged = True
            break
        det = h11 * h22 - h21 * h21
        dA = -(h22 * g1 - h21 * g2) / det
        dB = -(-h21 * g1 + h11 * g2) / det
        gd = g1 * dA + g2 * dB
        step = 1.0
        while step >= min_step:
            nA, nB = A + step * dA, B + step * dB
            nf = _platt_obj(nA, nB, f, t)
            if nf < fval + 1e-4 * step * gd:
                A, B, fval = nA, nB, nf
                break
            step /= 2.0
        else:
            break  # line search failed: (A, B) is as good as it gets in float64
    return PlattSigmoid(float(A), float(B), it, converged)


def platt_glm(f, y, level: float = 0.95):
    """Platt's sigmoid as a binomial GLM (statsmodels): coefficients, standard errors, intervals.

    The same fit as :func:`platt_fit` -- the logistic regression of Platt's smoothed targets
    ``t_i`` on the decision values (``logit P(Y = +1) = b0 + b1 f``, so ``b0 = -B``,
    ``b1 = -A``) -- done by ``statsmodels.api.GLM`` with a binomial family, which reports
    the usual Wald standard errors and confidence intervals. The targets are fractional, so the
    standard errors are those of the binomial quasi-likelihood: a statement about how precisely
    the calibration is determined by these decision values, conditional on the classifier.

    Returns
    -------
    DataFrame indexed ``("(Intercept)", "f")`` with ``estimate``, ``std_error``, ``z``,
    ``p_value``, ``lower``, ``upper``; ``.attrs["result"]`` holds the statsmodels result.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> f = rng.normal(size=200); y = np.where(rng.random(200) < 1 / (1 + np.exp(-2 * f)), 1, -1)
    >>> tab = platt_glm(f, y); s = platt_fit(f, y)
    >>> bool(abs(tab.loc["f", "estimate"] + s.A) < 1e-6)
    True
    """
    import pandas as pd
    import statsmodels.api as sm

    f, t, _, _ = _platt_targets(f, y)
    X = np.column_stack([np.ones_like(f), f])
    res = sm.GLM(t, X, family=sm.families.Binomial()).fit(tol=1e-12, maxiter=100)
    ci = np.asarray(res.conf_int(alpha=1.0 - level))
    tab = pd.DataFrame(
        {
            "estimate": res.params,
            "std_error": res.bse,
            "z": res.tvalues,
            "p_value": res.pvalues,
            "lower": ci[:, 0],
            "upper": ci[:, 1],
        },
        index=["(Intercept)", "f"],
    )
    tab.attrs["result"] = res
    return tab


def platt_prob(f, A: float, B: float) -> np.ndarray:
    """``1 / (1 + exp(A f + B))`` evaluated without overflow."""
    z = A * _as_f(f) + B
    e = np.exp(-np.abs(z))
    return np.where(z >= 0, e / (1.0 + e), 1.0 / (1.0 + e))


# ============================================================================ Sollich
def sollich_prob(f) -> np.ndarray:
    """Sollich's SVM probability ([ZDJ] 2.3), continuous at ``|f| = 1``.

    ``expit(2 f)`` for ``|f| <= 1`` and ``expit(f + sign(f))`` otherwise.

    Examples
    --------
    >>> import numpy as np
    >>> sollich_prob(np.array([0.0, 1.0, -3.0])).round(4).tolist()
    [0.5, 0.8808, 0.018]
    """
    f = _as_f(f)
    t = np.where(np.abs(f) <= 1.0, 2.0 * f, f + np.sign(f))
    e = np.exp(-np.abs(t))
    return np.where(t >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


# ============================================================================ coherence
def _ekl(log_rho, f, y, u):
    lp, lq = coherence_log_link(f, rho=math.exp(log_rho), u=u)
    return -float(np.mean(np.where(y > 0, lp, lq)))


def coherence_rho(f, y, *, u: float = 1.0, bounds=(1e-3, 1e2), xtol: float = 1e-8) -> float:
    """Temperature minimising the empirical KL loss of ``eta~(f; rho, u)`` ([ZDJ] eq. 13).

    ``EKL(rho) = -(1/n) sum_i [(1+y_i)/2 log eta~(f_i) + (1-y_i)/2 log(1 - eta~(f_i))]`` is
    minimised over ``log rho`` in ``[log 1e-3, log 1e2]`` by bounded Brent (tolerance ``xtol``)
    on stable log forms, using the training decision values.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0); f = rng.normal(size=200)
    >>> y = np.where(rng.uniform(size=200) < 1 / (1 + np.exp(-2 * f)), 1, -1)
    >>> bool(0.1 < coherence_rho(f, y) < 10)
    True
    """
    f = _as_f(f)
    y = _as_y(y, f.size)
    lo, hi = bounds
    if not (0 < lo < hi):
        raise ValueError(f"bounds must satisfy 0 < low < high; got {bounds!r}")
    from scipy.optimize import minimize_scalar  # (imported on use: scipy.optimize takes 0.3 s to import)

    res = minimize_scalar(
        _ekl, bounds=(math.log(lo), math.log(hi)), args=(f, y, u), method="bounded", options={"xatol": xtol}
    )
    # the bounded Brent never evaluates the end points: compare with them explicitly
    cands = [(res.fun, res.x), (_ekl(math.log(lo), f, y, u), math.log(lo)), (_ekl(math.log(hi), f, y, u), math.log(hi))]
    return float(math.exp(min(cands)[1]))


def coherence_prob(f, rho: float, u: float = 1.0) -> np.ndarray:
    """``eta~(f; rho, u)`` of [ZDJ] eq. (10): ``> 1/2`` exactly when ``f > 0``."""
    return np.asarray(coherence_link(_as_f(f), rho=rho, u=u), dtype=np.float64)


# ============================================================================ bracketing
def bracket_grid(m: int) -> np.ndarray:
    """The interior grid ``pi_j = (j - 1)/m``, ``j = 2..m`` of [WSL] Algorithm 1 (``m - 1`` values)."""
    if not (isinstance(m, (int, np.integer)) and m >= 2):
        raise ValueError(f"m (the bracketing grid size) must be an integer >= 2; got {m!r}")
    return np.arange(1, m) / float(m)


def bracket_prob(F, m: int | None = None, grid=None) -> np.ndarray:
    """Bracketing estimate ``(pi_lo + pi_hi)/2`` of [WSL] Algorithm 1.

    Parameters
    ----------
    F : (m - 1, N) decision values of the weighted classifiers at the interior grid
        ``pi_j = (j - 1)/m``, ``j = 2..m`` (increasing ``pi``).
    m : grid size (default ``F.shape[0] + 1``), or give the interior ``grid`` explicitly.

    The end classifiers are set by convention: ``s(pi = 0) = +1``, ``s(pi = 1) = -1``;
    ``f = 0`` counts as ``-1``. ``pi_lo = max{pi_j : s_j = +1}``,
    ``pi_hi = min{pi_j : s_j = -1}`` also for non-monotone sign sequences.

    Examples
    --------
    >>> import numpy as np
    >>> F = np.array([[1.0, 1.0], [0.5, -1.0], [-1.0, -2.0]])    # m = 4, two points
    >>> bracket_prob(F).tolist()
    [0.625, 0.375]
    """
    F = np.asarray(F, dtype=np.float64)
    if F.ndim == 1:
        F = F[:, None]
    if grid is None:
        m = F.shape[0] + 1 if m is None else int(m)
        grid = bracket_grid(m)
    grid = np.asarray(grid, dtype=np.float64)
    if grid.shape[0] != F.shape[0]:
        raise ValueError(f"F has {F.shape[0]} rows but the grid has {grid.shape[0]} values")
    full = np.concatenate([[0.0], grid, [1.0]])
    pos = np.vstack([np.ones((1, F.shape[1]), bool), F > 0, np.zeros((1, F.shape[1]), bool)])
    gcol = full[:, None]
    pi_lo = np.max(np.where(pos, gcol, -np.inf), axis=0)
    pi_hi = np.min(np.where(~pos, gcol, np.inf), axis=0)
    return 0.5 * (pi_lo + pi_hi)


# ============================================================================ nearest neighbours
#: The neighbourhood sizes [WSL] section 5.2 examines for its nearest-neighbour comparator.
WSL_KNN_K = (4, 9, 16, 25)


def knn_prob(X, y, newdata, k=WSL_KNN_K, *, standardize: bool = True, block_size: int = 2**22) -> np.ndarray:
    """k-nearest-neighbour estimate of ``p(x) = P(Y = +1 | x)``: the share of ``+1`` labels
    among the ``k`` training points nearest to ``x``.

    This is the nearest-neighbour comparator of [WSL] section 5 (Tables 2 and 4), which
    examines ``k in {4, 9, 16, 25}`` and reports the best ``k``. Our reading of what the paper
    leaves open: Euclidean distance on inputs standardised with the training means and standard
    deviations (divisor ``n``; constant columns left unscaled), and the plain vote share as the
    estimate (no smoothing, so ``p_hat`` can be exactly 0 or 1 -- [WSL] reports such
    estimates as degenerate). Which ``k`` is "best" is a decision of the experiment that uses
    the estimates; this function returns the estimate for every ``k`` asked for from one
    neighbour search.

    Parameters
    ----------
    X : (n, p) array of training inputs (numeric; one-hot encode factors first).
    y : (n,) labels coded -1/+1.
    newdata : (m, p) array of inputs at which to estimate ``p``.
    k : int or sequence of ints, each in ``1..n`` (default [WSL]'s ``(4, 9, 16, 25)``).
    standardize : centre and scale each column by the training mean and standard deviation
        (divisor ``n``) before measuring distances (default True).
    block_size : the number of float64 differences held at once (memory bound; the distances
        are computed block-wise over the rows of ``newdata``).

    Returns
    -------
    (m,) array for an int ``k``; (len(k), m) array, one row per ``k``, for a sequence.

    Notes
    -----
    Distances are the exact sums of squared differences (no ``|a|^2 - 2ab + |b|^2``
    cancellation). Ties in distance go to the earlier training row (a stable sort), so the
    result is deterministic; scikit-learn's ``KNeighborsClassifier`` leaves the order of tied
    neighbours to its search algorithm.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [1.0], [2.0], [10.0]]); y = np.array([1, 1, -1, 1])
    >>> knn_prob(X, y, np.array([[0.4], [9.0]]), k=2, standardize=False).tolist()
    [1.0, 0.5]
    """
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"X must be a 2-D array of training inputs; got shape {X.shape}")
    n, p = X.shape
    yy = np.asarray(y, dtype=np.float64).ravel()
    if yy.shape != (n,):
        raise ValueError(f"y must have one label per row of X ({n}); got {yy.size}")
    if not np.all((yy == 1.0) | (yy == -1.0)):
        raise ValueError("y must be coded -1/+1 (use design.y)")
    Z = np.asarray(newdata, dtype=np.float64)
    if Z.ndim == 1 and p == 1:
        Z = Z[:, None]
    if Z.ndim != 2 or Z.shape[1] != p:
        raise ValueError(f"newdata must be a 2-D array with {p} columns (as X); got shape {Z.shape}")
    if not (np.all(np.isfinite(X)) and np.all(np.isfinite(Z))):
        raise ValueError("X and newdata must be finite (remove or impute missing values first)")
    scalar = np.ndim(k) == 0
    ks = np.atleast_1d(np.asarray(k))
    if ks.size == 0 or not np.issubdtype(ks.dtype, np.integer) or np.any(ks < 1) or np.any(ks > n):
        raise ValueError(
            f"k must be an integer (or integers) between 1 and the number of training rows ({n}); got {k!r}"
        )
    if standardize:
        mu = X.mean(axis=0)
        sd = X.std(axis=0)
        sd[sd == 0] = 1.0
        X = (X - mu) / sd
        Z = (Z - mu) / sd
    kmax = int(ks.max())
    pos = (yy > 0).astype(np.float64)
    out = np.empty((ks.size, Z.shape[0]))
    rows = max(1, int(block_size) // max(1, n * p))
    for s0 in range(0, Z.shape[0], rows):
        blk = Z[s0 : s0 + rows]
        diff = blk[:, None, :] - X[None, :, :]
        d2 = np.einsum("ijk,ijk->ij", diff, diff)
        order = np.argsort(d2, axis=1, kind="stable")[:, :kmax]
        csum = np.cumsum(pos[order], axis=1)
        for i, kk in enumerate(ks):
            out[i, s0 : s0 + blk.shape[0]] = csum[:, int(kk) - 1] / float(kk)
    return out[0] if scalar else out
