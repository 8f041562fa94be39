"""psi-learning by difference-of-convex programming ([WSL] section 4.3).

``psi(z) = psi1(z) - psi2(z)`` with ``psi1 = 2 (1 - z)_+`` and ``psi2 = 2 (-z)_+``. At the
iterate ``f^(k)`` the concave part is linearised (subgradient ``-2 I[z < 0]``, 0 at ``z = 0``);
the convex subproblem with ``C_i = 2 w_i S(y_i) / (n lambda)``, ``d_i = C_i I[y_i f^(k)_i < 0]``

    min (1/2)||h||^2 + sum_i C_i (1 - y_i f_i)_+ + sum_i d_i y_i f_i

has the SMO dual with shifted bounds ``-d_i <= theta_i <= C_i - d_i`` (linear term ``-1``),
``f = sum_i theta_i y_i K(x_i, .) + b``, solved by :func:`cohstats.solvers.svm.smo.smo_solve`.
"""

from __future__ import annotations

import numpy as np

from cohstats.kernels import KERNEL_CALLABLE
from cohstats.solvers.result import SolverResult
from cohstats.solvers.svm.smo import smo_solve


def psi_loss(z) -> np.ndarray:
    """``psi(z) = 2`` for ``z < 0``, ``2 (1 - z)`` for ``0 <= z < 1``, ``0`` for ``z >= 1``."""
    z = np.asarray(z, dtype=np.float64)
    return np.where(z < 0, 2.0, np.where(z < 1, 2.0 * (1.0 - z), 0.0))


def _fitted(K_or_none, X, y, theta, b, kernel):
    beta = theta * y
    nz = np.flatnonzero(beta)
    if nz.size == 0:
        return np.full(y.shape[0], b)
    if K_or_none is not None:
        return K_or_none[:, nz] @ beta[nz] + b
    return kernel(X, X[nz]) @ beta[nz] + b


def psi_dc(
    X,
    y,
    *,
    kernel,
    lam: float,
    cw: np.ndarray,
    tol: float = 1e-3,
    max_dc: int = 50,
    rel_tol: float = 1e-6,
    cache_size: float = 200.0,
    max_iter=None,
) -> SolverResult:
    """psi-learning at penalty ``lam`` with per-observation weights ``cw = w_i S(y_i)``.

    Starts from the weighted SVM (same ``cw``, ``lam``); stops when the sign pattern
    ``delta`` repeats a previous one, when the relative decrease of the psi objective is below
    ``rel_tol``, or after ``max_dc`` iterations; returns the iterate with the smallest psi
    objective.

    Parameters
    ----------
    X, y : inputs and +-1 labels.
    kernel : a :class:`cohstats.kernels.Kernel`.
    lam : penalty ``lambda``; ``cw`` : ``w_i S(y_i)`` (the loss weights).

    Returns
    -------
    SolverResult
        ``dual`` the expansion multipliers ``theta`` (``beta = theta * y``), ``intercept`` ``b``,
        ``objective`` the psi objective ``(1/n) sum w S psi(y f) + (lambda/2) beta'K beta`` of the
        returned iterate, ``n_iter`` DC steps; ``info["fitted"]`` the training decision values,
        ``info["history"]`` the psi objective per DC iterate (the first is the weighted SVM).

    Examples
    --------
    >>> import numpy as np
    >>> from cohstats.kernels import make_kernel
    >>> X = np.linspace(-2, 2, 9)[:, None]; y = np.array([-1, -1, -1, 1, -1, 1, 1, -1, 1.0])
    >>> r = psi_dc(X, y, kernel=make_kernel("linear"), lam=0.05, cw=np.full(9, 0.5))
    >>> h = r.info["history"]      # psi objective of the weighted SVM, then of each DC step
    >>> bool(r.objective == h.min() < h[0]), r.n_iter
    (True, 2)
    """
    y = np.asarray(y, dtype=np.float64)
    n = y.shape[0]
    code = kernel.code
    Kfull = kernel(X) if (code == KERNEL_CALLABLE or n <= 3000) else None
    Kpre = Kfull if code == KERNEL_CALLABLE else None
    C = 2.0 * cw / (n * lam)

    def objective(theta, b):
        f = _fitted(Kfull, X, y, theta, b, kernel)
        beta = theta * y
        nz = np.flatnonzero(beta)
        if Kfull is not None:
            quad = beta[nz] @ Kfull[np.ix_(nz, nz)] @ beta[nz]
        else:
            quad = beta[nz] @ kernel(X[nz]) @ beta[nz]
        return float(np.sum(cw * psi_loss(y * f)) / n + 0.5 * lam * quad), f

    # start: the weighted SVM at the same (pi, lambda): hinge costs cw / (n lam)
    r = smo_solve(
        X,
        y,
        code=code,
        kpar=kernel.kpar,
        Kpre=Kpre,
        C=cw / (n * lam),
        tol=tol,
        cache_size=cache_size,
        max_iter=max_iter,
    )
    theta, b = r.dual.copy(), r.intercept
    obj, f = objective(theta, b)
    best = (obj, theta, b, f)
    hist = [obj]
    seen = set()
    converged = False
    k = 0
    for k in range(1, max_dc + 1):
        delta = y * f < 0
        key = np.packbits(delta).tobytes()
        if key in seen:
            converged = True
            break
        seen.add(key)
        d = C * delta
        r = smo_solve(
            X,
            y,
            code=code,
            kpar=kernel.kpar,
            Kpre=Kpre,
            lo=-d,
            hi=C - d,
            a0=np.zeros(n),
            tol=tol,
            cache_size=cache_size,
            max_iter=max_iter,
        )
        theta, b = r.dual.copy(), r.intercept
        new, f = objective(theta, b)
        hist.append(new)
        if new < best[0]:
            best = (new, theta, b, f)
        if obj - new <= rel_tol * max(abs(obj), 1e-300):
            converged = True
            break
        obj = new
    obj, theta, b, f = best
    return SolverResult(
        coef=None,
        dual=theta,
        intercept=float(b),
        n_iter=k,
        converged=converged,
        objective=float(obj),
        info={"fitted": f, "history": np.asarray(hist)},
    )
