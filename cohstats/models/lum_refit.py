"""The refitted LUM ([LZW] section 7.3): class probabilities from a logistic-type refit of the
LUM's decision values, binary (:func:`lum_refit`, eq. 9) and K-class (:func:`lum_refit_angle`).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd

from cohstats.solvers.cd.lum_refit import lum_refit_newton


def _convergence_warning():
    from cohstats.exceptions import ConvergenceWarning

    return ConvergenceWarning


def _warn_unconverged(converged, lambdas, info, max_iter, tol, stacklevel=4) -> None:
    """One ConvergenceWarning for the lambda values of a LUM path that did not converge."""
    if np.all(converged):
        return
    bad = lambdas[~converged]
    warnings.warn(
        f"lum: {bad.size} of {lambdas.size} lambda values did not reach the optimum "
        f"(iteration cap, or a KKT violation above {info.get('kkt_bound', 0):.2g}; "
        f"smallest such lambda {bad.min():.3g}); increase max_iter (now {max_iter}) "
        f"or loosen tol (now {tol:g})",
        _convergence_warning(),
        stacklevel=stacklevel,
    )


# --------------------------------------------------------------------------- refit
def _warn_separable_path(nsep: int, nlam: int) -> None:
    """One warning for the lambda values whose refit sample is separated by the first stage."""
    if nsep:
        warnings.warn(
            f"refitted LUM: at {nsep} of {nlam} lambda values the first-stage decision values "
            "separate the refit sample; a 1e-6 ridge was added there",
            _convergence_warning(),
            stacklevel=3,
        )


def _separable_1d(f, y, w) -> bool:
    """True if a threshold on ``f`` separates the classes (weakly), so the refit is unbounded."""
    m = w > 0
    f, y = f[m], y[m]
    fp, fn = f[y > 0], f[y < 0]
    if fp.size == 0 or fn.size == 0:
        return True
    return bool(fn.max() <= fp.min() or fp.max() <= fn.min())


def lum_refit(f1, y, a: float, weights=None, *, tol: float = 1e-10, max_iter: int = 200, warn: bool = True) -> dict:
    """Refitted LUM (eq (9) of [LZW]): ``f2 = g0 + g1 f1`` with ``c = 0``, same ``a``.

    Minimises ``(1/n) sum_i w_i V_{a,0}(y_i (g0 + g1 f1_i))`` without penalty by Newton's method
    with backtracking. If a threshold on ``f1`` separates the two classes the minimum is not
    attained (``|g1| -> inf``); then the penalty ``1e-6 (g0^2 + g1^2)/2`` is added and a
    :class:`cohstats.ConvergenceWarning` is emitted.

    Parameters
    ----------
    f1 : array_like (n,), first-stage decision values.
    y : array_like (n,), labels coded -1/+1.
    a : float, LUM shape of the first stage (``np.inf`` allowed).
    weights : array_like (n,) or None, nonnegative case weights.
    tol, max_iter : Newton tolerance on the gradient and iteration limit.
    warn : bool, emit the separability warning.

    Returns
    -------
    dict with ``g0``, ``g1``, ``converged``, ``n_iter``, ``objective``, ``separable`` and
    ``cov``, the 2 x 2 sandwich covariance of ``(g0, g1)`` (Huber's M-estimation covariance;
    the refit is not a likelihood fit, so a GLM's model-based errors would describe another
    model). :func:`refit_coef_table` turns it into a table with intervals.

    Examples
    --------
    >>> import numpy as np
    >>> from cohstats.models.lum import lum_refit
    >>> rng = np.random.default_rng(0)
    >>> f = rng.normal(size=200)
    >>> y = np.where(rng.random(200) < 1 / (1 + np.exp(-3 * f)), 1.0, -1.0)
    >>> r = lum_refit(0.1 * f, y, a=1e6)   # a first stage shrunk by a factor 30
    >>> bool(r["g1"] > 10)
    True
    """
    f1 = np.ascontiguousarray(f1, dtype=np.float64).ravel()
    y = np.ascontiguousarray(y, dtype=np.float64).ravel()
    if f1.shape != y.shape:
        raise ValueError(f"f1 and y must have the same length; got {f1.size} and {y.size}")
    if not np.all(np.isin(y, (-1.0, 1.0))):
        raise ValueError("y must be coded -1/+1")
    if not np.all(np.isfinite(f1)):
        raise ValueError("f1 contains non-finite decision values")
    a = float(a)
    if not a > 0:
        raise ValueError(f"a must be positive; got a={a!r}")
    w = np.ones_like(f1) if weights is None else np.ascontiguousarray(weights, dtype=np.float64)
    if w.shape != f1.shape or np.any(w < 0) or not np.all(np.isfinite(w)):
        raise ValueError("weights must be nonnegative, finite and of the same length as f1")
    separable = _separable_1d(f1, y, w)
    # constant first-stage values (e.g. every predictor constant) leave g1 unidentified but
    # g0 + g1 f bounded: no separation; the small ridge only picks one minimiser
    flat = bool(np.ptp(f1[w > 0]) == 0) if np.any(w > 0) else True
    ridge = 1e-6 if separable or flat else 0.0
    if separable and not flat and warn:
        warnings.warn(
            "refitted LUM: the first-stage decision values separate the classes, so "
            "the unpenalised refit has no minimiser; added the penalty "
            "1e-6 (g0^2 + g1^2)/2 (probabilities will be close to 0/1). "
            "Use refit_on='validation' or a larger lambda_.",
            _convergence_warning(),
            stacklevel=2,
        )
    g0, g1, it, ok, F = lum_refit_newton(f1, y, w, a, ridge, tol, max_iter)
    if not ok and warn:
        warnings.warn(
            f"refitted LUM: Newton did not reach tol={tol:g} in max_iter={max_iter} iterations; increase max_iter",
            _convergence_warning(),
            stacklevel=2,
        )
    cov = np.full((2, 2), np.nan) if separable else _refit_sandwich(f1, y, w, a, g0, g1)
    return {
        "g0": float(g0),
        "g1": float(g1),
        "converged": bool(ok),
        "n_iter": int(it),
        "objective": float(F),
        "separable": separable,
        "cov": cov,
    }


def _refit_sandwich(f1, y, w, a, g0, g1):
    """Sandwich covariance ``A^-1 B A^-1`` of the refit ``(g0, g1)`` as an M-estimator.

    The refit minimises ``sum_i w_i V(y_i (g0 + g1 f1_i))``, not a likelihood (the LUM loss with
    ``c = 0`` is linear for negative margins), so the model-based covariance of a GLM does not
    apply; the estimating equations ``sum_i w_i psi_i = 0`` with
    ``psi_i = V'(m_i) y_i (1, f1_i)`` give ``A = sum_i w_i V''(m_i) x_i x_i'`` and
    ``B = sum_i w_i^2 V'(m_i)^2 x_i x_i'`` (Huber's sandwich, the ``HC0`` covariance of
    statsmodels). NaN when ``A`` is singular (no margin on the curved piece of the loss) and
    for separable first stages (the refit then has no minimiser).
    """
    from cohstats.losses import get_loss

    loss = get_loss("lum", a=a, c=0.0)
    m = y * (g0 + g1 * f1)
    d1 = loss.d1(m)
    d2 = loss.d2(m)
    Z = np.column_stack([np.ones_like(f1), f1])
    A = (Z * (w * d2)[:, None]).T @ Z
    B = (Z * (w * w * d1 * d1)[:, None]).T @ Z
    try:
        Ai = np.linalg.inv(A)
    except np.linalg.LinAlgError:
        return np.full((2, 2), np.nan)
    if not np.all(np.isfinite(Ai)) or np.linalg.cond(A) > 1e14:
        return np.full((2, 2), np.nan)
    return Ai @ B @ Ai


def refit_coef_table(r: dict, level: float = 0.95) -> pd.DataFrame:
    """The refitted-LUM scale ``(g0, g1)`` as a coefficient table with sandwich standard errors.

    Columns ``coef``, ``std err``, ``z``, ``P>|z|`` and the Wald interval at ``level`` (the
    layout of statsmodels' summaries). The standard errors are the M-estimation (sandwich)
    errors of :func:`lum_refit` (the refit minimises the LUM loss, not a likelihood).
    """
    from scipy import stats

    est = np.array([r["g0"], r["g1"]])
    se = np.sqrt(np.diag(np.asarray(r["cov"], dtype=np.float64)))
    with np.errstate(divide="ignore", invalid="ignore"):
        z = est / se
    q = stats.norm.ppf(0.5 + level / 2)
    lo_name, hi_name = f"[{(1 - level) / 2:g}", f"{(1 + level) / 2:g}]"
    return pd.DataFrame(
        {
            "coef": est,
            "std err": se,
            "z": z,
            "P>|z|": 2 * stats.norm.sf(np.abs(z)),
            lo_name: est - q * se,
            hi_name: est + q * se,
        },
        index=["g0 (intercept)", "g1 (scale of f1)"],
    )


# =========================================================================== K > 2 classes
def _angle_separable(Z, w) -> bool:
    """True if some direction ``d != 0`` has ``z_i'd >= 0`` for every row (and > 0 for one), so
    that the unpenalised refit has no minimiser (the loss decreases without bound along d).

    Decided by the linear programme ``max sum_i z_i'd`` over ``|d_k| <= 1``, ``Z d >= 0``."""
    from scipy.optimize import linprog

    Z = Z[w > 0]
    if Z.shape[0] == 0:
        return True
    scale = np.abs(Z).max(axis=0)
    scale[scale == 0] = 1.0
    Zs = Z / scale
    res = linprog(
        -Zs.sum(axis=0), A_ub=-Zs, b_ub=np.zeros(Zs.shape[0]), bounds=[(-1.0, 1.0)] * Zs.shape[1], method="highs"
    )
    if res.status != 0:
        return False
    return bool(-res.fun > 1e-9 * Zs.shape[0])


def _angle_refit_rows(F1, y, w, form):
    """The refit as a binary LUM problem on expanded rows: ``(Z, weights, margins)`` with
    ``Z = [D, m]`` such that the refit margin of each row is ``<g0, D> + g1 m``: one row per
    observation (``D = W_y``, ``m = <f1, W_y>``; angle form) or one per observation and other
    class ``j`` (``D = kappa (W_y - W_j)``, ``m = kappa <f1, W_y - W_j>``, weight ``w / (K-1)``;
    pairwise form)."""
    from cohstats.losses.angle import simplex_vertices

    n, km1 = F1.shape
    K = km1 + 1
    W = simplex_vertices(K)
    if form == "angle":
        D = W[y]
        return D, w, np.einsum("ik,ik->i", F1, D)
    kap = km1 / K
    others = np.array([[j for j in range(K) if j != yi] for yi in y]).ravel()
    rows = np.repeat(np.arange(n), km1)
    D = kap * (W[y[rows]] - W[others])
    return D, w[rows] / km1, np.einsum("ik,ik->i", F1[rows], D)


def lum_refit_angle(
    F1,
    y,
    a: float,
    weights=None,
    *,
    tol: float = 1e-10,
    max_iter: int = 200,
    warn: bool = True,
    form: str = "pairwise",
) -> dict:
    """Refitted angle-based LUM: ``f2 = g0 + g1 f1`` with ``c = 0`` and the same ``a``.

    The K-class analogue of [LZW] eq (9): ``g0`` in ``R^{K-1}`` (a shift of the simplex
    coordinates) and the scalar ``g1`` (a rescaling, which keeps the direction of ``f1`` and so
    the angles that classify) minimise ``sum_i w_i L_{a,0}(g0 + g1 f1_i, y_i) / sum_i w_i``
    without penalty, ``L`` the loss of ``form`` (:func:`cohstats.losses.angle.angle_lum_loss`),
    by Newton's method with backtracking. At K = 2 this is the refit of :func:`lum_refit`
    (with ``g0`` negated: the first class is the vertex ``+1`` here). If the minimum is not
    attained -- some shift and positive-or-zero rescaling of ``f1`` ranks every training
    observation's own class weakly first (pairwise form; angle form: gives every observation a
    nonnegative own-class margin), decided by a linear programme -- the penalty
    ``1e-6 (||g0||^2 + g1^2)/2`` is added and a :class:`cohstats.ConvergenceWarning` is emitted.

    Parameters
    ----------
    F1 : (n, K-1) first-stage angle-based decision values.
    y : (n,) class codes 0..K-1.
    a : LUM shape of the first stage (``np.inf`` allowed).
    weights : (n,) nonnegative case weights or None.
    tol, max_iter : Newton tolerance (infinity norm of the gradient) and iteration limit.
    warn : emit the warnings.
    form : ``"pairwise"`` (default; the loss of :func:`cohstats.lum`) or ``"angle"``.

    Returns
    -------
    dict with ``g0`` ((K-1,) array), ``g1``, ``converged``, ``n_iter``, ``objective``,
    ``separable``.
    """
    from cohstats.losses.binary import get_loss

    if form not in ("pairwise", "angle"):
        raise ValueError(f"form must be 'pairwise' or 'angle'; got form={form!r}")
    F1 = np.atleast_2d(np.asarray(F1, dtype=np.float64))
    n, km1 = F1.shape
    K = km1 + 1
    y = np.asarray(y).astype(np.int64).ravel()
    if y.shape[0] != n or y.min() < 0 or y.max() >= K:
        raise ValueError(f"y must hold {n} class codes in 0..{K - 1}")
    if not np.all(np.isfinite(F1)):
        raise ValueError("F1 contains non-finite decision values")
    a = float(a)
    if not a > 0:
        raise ValueError(f"a must be positive; got a={a!r}")
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=np.float64).ravel()
    if w.shape != (n,) or np.any(w < 0) or not np.all(np.isfinite(w)) or not w.sum() > 0:
        raise ValueError("weights must be nonnegative, finite, not all zero and one per row")
    D, w, h = _angle_refit_rows(F1, y, w, form)  # h: first-stage margins of the rows
    sc = math.sqrt(float(np.sum(w * h * h) / w.sum())) if np.any(h != 0) else 1.0
    Z = np.column_stack([D, h / sc])  # theta = (g0, g1 * sc)
    separable = _angle_separable(Z, w)
    ridge = np.r_[np.full(km1, 1e-6), 1e-6 / sc**2] if separable else np.zeros(K)
    if separable and warn:
        what = (
            "classifies every refit observation correctly"
            if form == "pairwise"
            else "gives every refit observation a nonnegative own-class margin"
        )
        warnings.warn(
            f"refitted LUM: a shift and rescaling of the first-stage decision values {what}, "
            "so the unpenalised refit has no minimiser; added the penalty "
            "1e-6 (||g0||^2 + g1^2)/2 (probabilities will be close to 0/1). "
            "Use refit_on='validation' or a larger lambda_.",
            _convergence_warning(),
            stacklevel=2,
        )
    loss = get_loss("lum", a=a, c=0.0)
    wn = w / w.sum()

    def obj(th):
        return float(wn @ loss.value(Z @ th)) + 0.5 * float(ridge @ (th * th))

    th = np.r_[np.zeros(km1), sc]  # start at the first stage (g1 = 1)
    F = obj(th)
    ok = False
    it = 0
    for it in range(1, max_iter + 1):
        m = Z @ th
        g = Z.T @ (wn * loss.d1(m)) + ridge * th
        if np.max(np.abs(g)) < tol:
            ok = True
            break
        H = (Z * (wn * loss.d2(m))[:, None]).T @ Z + np.diag(ridge)
        mu = 1e-12 * max(np.trace(H), 1e-300)
        d = np.linalg.solve(H + mu * np.eye(K), -g)
        dec = -float(g @ d)
        if dec < tol * tol:
            ok = True
            break
        t = 1.0
        for _ in range(60):
            Fn = obj(th + t * d)
            if Fn <= F - 1e-4 * t * dec:
                break
            t *= 0.5
        else:
            break  # no decrease possible at float precision
        th = th + t * d
        F = Fn
    if not ok:
        m = Z @ th
        g = Z.T @ (wn * loss.d1(m)) + ridge * th
        ok = bool(np.max(np.abs(g)) < max(tol, 1e-8))
    if not ok and warn:
        warnings.warn(
            f"refitted LUM: Newton did not reach tol={tol:g} in max_iter={max_iter} iterations; increase max_iter",
            _convergence_warning(),
            stacklevel=2,
        )
    return {
        "g0": th[:km1].copy(),
        "g1": float(th[km1] / sc),
        "converged": bool(ok),
        "n_iter": int(it),
        "objective": float(F),
        "separable": bool(separable),
    }
