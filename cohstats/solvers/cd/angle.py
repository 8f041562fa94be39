"""Angle-based multicategory LUM (Zhang & Liu 2014 coding with the LUM loss of [LZW]) along a
``lambda`` path, with a grouped elastic net.

Model: ``f(x) = b + B'x`` in ``R^{K-1}`` (``B`` is p x (K-1)), class margins
``u_j(x) = <f(x), W_j>`` with the simplex vertices ``W_j`` of :mod:`cohstats.losses.angle`, and
the objective

    (1/n) sum_i w_i L(f(x_i), y_i) + lambda sum_j pf_j ((1-alpha)/2 ||B_j||_2^2 + alpha ||B_j||_2)

with ``B_j`` the row of predictor ``j`` (weights normalised to mean 1) and ``L`` the loss of
``form`` (:func:`cohstats.losses.angle.angle_lum_loss`): ``"pairwise"`` (default),
``(1/(K-1)) sum_{j != y} V_{a,c}(kappa (u_y - u_j))`` with ``kappa = (K-1)/K`` (T. Zhang's
pairwise comparison, JMLR 2004), or ``"angle"``, ``V_{a,c}(u_y)``. The penalty is invariant
under rotations of the simplex coordinates (``||B_j Q|| = ||B_j||`` for orthogonal ``Q``), so it
does not depend on which regular simplex is used, and a predictor is in the model for all
classes or for none (the grouping of multiclass :func:`cohstats.clearn`). The intercept
``b`` is unpenalised and unconstrained.

Binary reduction. With K = 2 the vertices are ``(1, -1)``, ``B_j`` is a scalar, the group norm
its absolute value and either loss is ``V(y f)`` with the first class coded ``y = +1``: the K = 2 fit
at ``(lambda, alpha)`` is the binary LUM fit (:func:`cohstats.solvers.cd.path.cd_path`) at the
same ``(lambda, alpha)`` with ``f`` negated.

Algorithm: block coordinate descent over predictors on the one path driver of
:mod:`cohstats.solvers.cd.path` (loss code ``LOSS_ALUM``, groups of size K-1, strong rules,
warm starts, KKT checks): each block step exactly minimises a majorisation of the objective
with the curvature bound ``(a+1)(1+c)/a`` of the LUM loss (the Hessian of ``V(<f, W_y>)`` in
``f`` is ``V'' W_y W_y'``, at most ``V''`` times the identity; that of the pairwise loss is at
most ``V''`` times ``kappa^2 (K W_y W_y' + K/(K-1) I)/(K-1)``, whose largest eigenvalue is 1), so
the objective never rises.
For ``c > 10`` the problems ``c = 10, 100, ...`` are solved first at each ``lambda`` (each
warm-starting the next).
"""

from __future__ import annotations

import math

import numpy as np

from cohstats.losses.scalar import LOSS_ALUM
from cohstats.solvers.cd.design import (
    _check_alpha,
    _check_lambdas,
    _check_pf,
    _check_tol,
    continuation_grid,
    standardize_design,
    xv_of,
)
from cohstats.solvers.cd.multi import _prep, grouped_output
from cohstats.solvers.cd.path import _lambda_max_std, run_path
from cohstats.solvers.cd.state import MODE_MM, PathSpec, make_data, make_loss, make_penalty

__all__ = ["cd_angle_lum_path", "angle_lum_lambda_max"]


def _check_form(form):
    from cohstats.losses.angle import FORMS

    if form not in FORMS:
        raise ValueError(f"form must be one of {sorted(FORMS)}; got form={form!r}")
    return FORMS[form]


def _check_ac(a, c):
    a = float(a)
    c = float(c)
    if not a > 0:
        raise ValueError(f"a must be positive (np.inf allowed); got a={a!r}")
    if not (c >= 0 and math.isfinite(c)):
        raise ValueError(
            f"c must be a finite number >= 0 for the angle-based LUM (c = inf, the "
            f"hinge, has no curvature bound; use a large finite c such as 1e3); got c={c!r}"
        )
    return a, c


def angle_lum_lambda_max(
    X, y, w, a, c, alpha, *, K=None, form="pairwise", standardize=True, penalty_factor=None, intercept=True
):
    """Smallest ``lambda`` at which every penalised coefficient row is zero:
    ``max_j ||(1/n) sum_i x_ij r_i||_2 / (alpha pf_j)`` with ``r_i`` the negative gradient (in
    ``R^{K-1}``) at the intercept-only fit (``alpha`` replaced by 1e-3 when smaller, glmnet's
    rule for the ridge).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.arange(6.0)[:, None]; y = np.array([0, 0, 1, 1, 2, 2])
    >>> angle_lum_lambda_max(X, y, None, 1000.0, 0.0, 1.0) > 0
    True
    """
    X, yc, w, K = _prep(X, y, w, K)
    a, c = _check_ac(a, c)
    code = _check_form(form)
    alpha = _check_alpha(alpha)
    pf = _check_pf(penalty_factor, X.shape[1])
    Xt, center, scale, excl = standardize_design(X, w, standardize, intercept)
    data = make_data(Xt, np.zeros(X.shape[0]), w, xv_of(Xt, w), excl, intercept, yc=yc)
    return _lambda_max_std(data, make_loss(LOSS_ALUM, a, c, code), make_penalty(pf), MODE_MM, alpha, G=K - 1)


def cd_angle_lum_path(
    X,
    y,
    w,
    a,
    c,
    lambdas,
    alpha,
    *,
    K=None,
    form="pairwise",
    standardize=True,
    tol=1e-7,
    max_iter=10000,
    penalty_factor=None,
    intercept=True,
    warn=True,
):
    """Grouped elastic-net angle-based LUM fit along a ``lambda`` path (module docstring).

    Parameters
    ----------
    X : (n, p) array
    y : (n,) integer class codes 0..K-1 (class ``k`` gets the vertex ``W_{k+1}``)
    w : (n,) nonnegative observation weights (normalised to mean 1) or None
    a, c : LUM parameters (``a > 0`` may be inf; ``c >= 0`` finite)
    lambdas : penalties, best decreasing
    alpha : l1 (group-lasso) share in [0, 1]
    K : number of classes (default ``max(y) + 1``)
    form : ``"pairwise"`` (default) or ``"angle"``, the loss (module docstring)
    standardize, tol, max_iter, penalty_factor, intercept : as :func:`cohstats.solvers.cd.path.cd_path`

    Returns
    -------
    intercepts : (nlam, K-1) array (simplex coordinates)
    coefs : (nlam, p, K-1) array on the original scale
    info : dict ``n_iter``, ``converged``, ``objective``, ``df`` (predictors in the model),
        ``kkt`` (largest KKT violation, Euclidean norm per predictor), ``null_objective``

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((90, 3)); y = np.digitize(X[:, 0], [-0.5, 0.5])
    >>> b, B, info = cd_angle_lum_path(X, y, None, 1000.0, 0.0, [0.05], 0.5)
    >>> B.shape, b.shape, bool(info["converged"][0])
    ((1, 3, 2), (1, 2), True)
    """
    X, yc, w, K = _prep(X, y, w, K)
    a, c = _check_ac(a, c)
    code = _check_form(form)
    alpha = _check_alpha(alpha)
    lam = _check_lambdas(lambdas)
    tol, max_iter = _check_tol(tol, max_iter)
    n, p = X.shape
    pf = _check_pf(penalty_factor, p)
    Xt, center, scale, excl = standardize_design(X, w, standardize, intercept)
    data = make_data(Xt, np.zeros(n), w, xv_of(Xt, w), excl, intercept, yc=yc)
    spec = PathSpec(lam, alpha, MODE_MM, tol, max_iter, True, continuation_grid(LOSS_ALUM, a, c, MODE_MM))
    res = run_path(data, make_loss(LOSS_ALUM, a, c, code), make_penalty(pf), spec, K - 1)
    return grouped_output(res, center, scale, intercept, lam, max_iter, warn)
