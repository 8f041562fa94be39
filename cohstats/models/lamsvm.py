"""λ-SVM: multiclass hinge loss with a variable positive margin ([RH]).

:func:`lamsvm` fits, for ``K >= 2`` classes, the Inhibitory-SVM formulation with ``mu = 1/K``
(sum-to-zero decision functions) of the loss

    Psi_y(f) = [margin - f_y]_+ + sum_{j != y} [1 + f_j]_+ ,      sum_j f_j = 0,

by solving the dual of [RH] eq. 22-23 (box ``0 <= alpha_ij <= C``, no equality constraint) with
the SMO of :mod:`cohstats.solvers.svm.smo_lambda`. Class probabilities are a post-hoc calibration of
cross-validated decision values (:meth:`LamSVMFit.calibration`), not an estimate from the loss.
"""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np
import pandas as pd

from cohstats.exceptions import CalibrationWarning, ConvergenceWarning
from cohstats.formula import build_design, capture_context, refuse_no_intercept
from cohstats.kernels import KERNEL_CALLABLE, KERNEL_LINEAR, make_kernel, resolve_gamma
from cohstats.losses.lamsvm import is_calibrated
from cohstats.results import Fit, PathFrame, Summary, interpolate_path
from cohstats.scaling import column_scaling
from cohstats.solvers.svm.smo_lambda import solve_lambda_svm
from cohstats.validation import AnyOf, Bool, Callable, FitSpec, Integer, NoneOr, Options, Real, Reals, fit_function

__all__ = ["lamsvm", "LamSVMFit", "default_margin", "margin_scale", "CalibrationWarning", "ProbCalibration"]

#: probability calibrations offered by ``predict(type="prob", method=...)``
PROB_METHODS = ("multinomial", "coupling")
#: the default, chosen by measurement (benchmarks/README.md, lamsvm probabilities)
DEFAULT_PROB_METHOD = "multinomial"


def default_margin(n_classes: int) -> float:
    """The default positive margin: ``10 (K - 1)``.

    [RH] (section 5, Proposition 3, Figure 4) recommends margins well above ``K - 1``: they are
    classification calibrated (``> (K - 2)/2``), they stay clear of the band
    ``(K - 1 - T_kkt, K - 1 + T_kkt)`` where several KKT patterns coexist and SMO slows down, and
    training gets faster as the margin grows. Larger margins need a correspondingly larger
    ``C`` (with a moderate ``C`` the true-class multipliers saturate at ``C`` and accuracy
    drops), which the default ``C`` of :func:`lamsvm` provides: it grows with the margin (see
    :func:`margin_scale`). At equal cost and tolerance on libsvm's scale, ``10 (K - 1)`` needed
    about half the SMO visits of ``2 (K - 1)`` on Pendigits, Satimage and Optdigits with equal
    or lower test error; larger margins gained little more (``benchmarks/README.md``).

    Examples
    --------
    >>> default_margin(3), default_margin(10)
    (20.0, 90.0)
    """
    return float(10 * (int(n_classes) - 1))


#: the default cost on libsvm's scale (``C = DEFAULT_COST * margin_scale(K, margin)``), chosen by
#: measurement against ``SVC(C=1)`` (benchmarks/README.md, λ-SVM defaults on libsvm's scale)
DEFAULT_COST = 2.0
#: the default KKT tolerance in libsvm's units (``tol = DEFAULT_TOL * margin_scale(K, margin)``)
DEFAULT_TOL = 5e-3


def margin_scale(n_classes: int, margin: float) -> float:
    """The factor ``s`` that puts the λ-SVM's cost and tolerance on libsvm's scale.

    A training point has zero λ-SVM loss exactly when ``f_y >= margin`` and ``f_j <= -1`` for
    ``j != y`` (with ``sum_j f_j = 0``). The smallest gap ``f_y - max_{j != y} f_j`` such a point
    can have is ``max(K - 1, margin) + 1`` for ``K >= 3`` (one other class at -1,
    ``f_y = max(K - 1, margin)``, the remaining classes absorb the sum) and ``2 max(margin, 1)``
    for ``K = 2`` (the other class is ``-f_y``); ``s`` is half of it,

        s = (max(K - 1, margin) + 1) / 2   (K >= 3),      s = max(margin, 1)   (K = 2),

    the counterpart of libsvm's ``y f >= 1`` (the gap between ``f`` and ``-f`` is 2). Scaling
    both margins by ``1/s`` turns the λ-SVM at cost ``C`` and KKT tolerance ``tol`` into the same
    problem, with decision values divided by ``s``, at cost ``C / s`` and tolerance ``tol / s``
    (substitute ``f = s g`` in the primal: ``1/2 ||f||^2 + C sum [l - y f]_+`` is ``s^2`` times
    ``1/2 ||g||^2 + (C / s) sum [l / s - y g]_+``). So ``C / s`` and ``tol / s`` are the cost and
    tolerance on libsvm's scale. For two classes and ``margin = 1`` (the bias-free binary SVM)
    ``s = 1``; for the default margin ``10 (K - 1)`` it is ``5 K - 4.5`` (10 for ``K = 2``).

    Examples
    --------
    >>> margin_scale(2, 1.0), margin_scale(10, 18.0), margin_scale(3, -5.0)
    (1.0, 9.5, 1.5)
    """
    K = int(n_classes)
    if K < 2:
        raise ValueError(f"margin_scale needs at least two classes; got n_classes={n_classes!r}")
    if K == 2:
        return max(float(margin), 1.0)
    return (max(K - 1.0, float(margin)) + 1.0) / 2.0


def _real(name, v, *, positive=False, nonneg=False, allow_none=False):
    if v is None and allow_none:
        return None
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real):
        raise TypeError(f"{name} must be a real number; got {v!r}")
    v = float(v)
    if not math.isfinite(v):
        raise ValueError(f"{name} must be finite; got {v!r}")
    if positive and not v > 0:
        raise ValueError(f"{name} must be > 0; got {v!r}")
    if nonneg and v < 0:
        raise ValueError(f"{name} must be >= 0; got {v!r}")
    return v


def _seq(name, v, **kw) -> np.ndarray:
    """A scalar or a 1-D sequence of reals as a 1-D float array."""
    if isinstance(v, str):
        raise TypeError(f"{name} must be a real number or a sequence of them; got {v!r}")
    if np.ndim(v) == 0:
        return np.array([_real(name, v, **kw)])
    arr = list(np.asarray(v, dtype=object).ravel())
    if len(arr) == 0:
        raise ValueError(f"{name} must not be an empty sequence")
    out = np.array([_real(name, a, **kw) for a in arr])
    if len(np.unique(out)) != len(out):
        raise ValueError(f"{name} must not contain repeated values; got {list(out)}")
    return out


def _bool(name, v):
    if not isinstance(v, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False; got {v!r}")
    return bool(v)


def _width(gamma, sigma, Z, y):
    """Resolve ``gamma`` / ``sigma`` into the numeric ``gamma`` of ``exp(-gamma ||x - x'||^2)``."""
    if sigma is not None:
        if not (isinstance(gamma, str) and gamma == "scale"):
            raise ValueError("give at most one of gamma and sigma (gamma = 1/sigma^2)")
        return 1.0 / _real("sigma", sigma, positive=True) ** 2
    return resolve_gamma(gamma, Z, y)


def _standardize(X, w, standardize):
    """Weighted centre and scale (sd with divisor sum(w)); see :mod:`cohstats.scaling`."""
    return column_scaling(X, w, standardize)


# ============================================================================ probabilities
def _softmax(E):
    E = E - E.max(axis=1, keepdims=True)
    P = np.exp(E)
    return P / P.sum(axis=1, keepdims=True)


def _mnl_features(F, K):
    """The K decision values sum to zero: the first K - 1 carry all of them (the binary
    decision value is a single column)."""
    F = np.asarray(F, dtype=float)
    if K == 2:
        return F.reshape(-1, 1)
    return F[:, : K - 1]


def smoothed_targets(yk, K, w=None):
    """Platt's smoothed targets generalised to ``K`` classes.

    A row of class ``k`` (``n_k`` rows, weighted counts when ``w`` is given) gets target
    ``(n_k + 1)/(n_k + K)`` for its own class and ``1/(n_k + K)`` for each other class; for
    ``K = 2`` these are Platt's ``(N_+ + 1)/(N_+ + 2)`` and ``1/(N_- + 2)``.
    """
    yk = np.asarray(yk, dtype=np.int64)
    w = np.ones(len(yk)) if w is None else np.asarray(w, dtype=float)
    nk = np.bincount(yk, weights=w, minlength=K)
    T = np.repeat((1.0 / (nk[yk] + K))[:, None], K, axis=1)
    T[np.arange(len(yk)), yk] = (nk[yk] + 1.0) / (nk[yk] + K)
    return T


def mnl_fit(G, T, w=None, *, tol=1e-10, max_iter=200):
    """Multinomial logistic regression of (soft) targets ``T`` (n, K) on features ``G`` (n, d).

    Minimises ``sum_i w_i [logsumexp(eta_i) - sum_k T_ik eta_ik]`` with ``eta_i0 = 0`` (class 0
    is the reference) and ``eta_ik = a_k + G_i . B_k`` by Newton's method with backtracking,
    stopping when the largest gradient entry is below ``tol * sum(w)`` or the Newton decrement
    is below the float64 resolution of the objective.
    With one-hot ``T`` this is the maximum-likelihood multinomial logit (statsmodels ``MNLogit``);
    with smoothed targets (:func:`smoothed_targets`) the minimum exists even for separable data.

    Returns ``(W, n_iter, converged)`` with ``W`` of shape ``(d + 1, K)`` (first row the
    intercepts, first column zeros).
    """
    G = np.asarray(G, dtype=float)
    T = np.asarray(T, dtype=float)
    n, K = T.shape
    w = np.ones(n) if w is None else np.asarray(w, dtype=float)
    Z = np.column_stack([np.ones(n), G])
    d1 = Z.shape[1]
    m = K - 1
    # start from the intercept-only fit (class shares), a well-scaled point
    share = np.maximum(w @ T, 1e-300)
    theta = np.zeros((d1, m))
    theta[0] = np.log(share[1:] / share[0])

    def obj(th):
        E = np.column_stack([np.zeros(n), Z @ th])
        mx = E.max(axis=1, keepdims=True)
        lse = mx[:, 0] + np.log(np.exp(E - mx).sum(axis=1))
        return float(w @ (lse - (T * E).sum(axis=1))), E

    fval, E = obj(theta)
    converged = False
    it = 0
    scale = max(float(w.sum()), 1.0)
    for it in range(1, max_iter + 1):
        P = _softmax(E)
        R = (P - T)[:, 1:] * w[:, None]
        g = (Z.T @ R).ravel(order="F")  # blocks by class
        if np.max(np.abs(g)) < tol * scale:
            converged = True
            break
        H = np.empty((d1 * m, d1 * m))
        Pm = P[:, 1:]
        for a in range(m):
            for b in range(a, m):
                v = w * (Pm[:, a] * ((a == b) - Pm[:, b]))
                blk = (Z * v[:, None]).T @ Z
                H[a * d1 : (a + 1) * d1, b * d1 : (b + 1) * d1] = blk
                H[b * d1 : (b + 1) * d1, a * d1 : (a + 1) * d1] = blk.T
        H[np.diag_indices_from(H)] += 1e-12 * scale
        try:
            step = np.linalg.solve(H, g)
        except np.linalg.LinAlgError:
            step = np.linalg.lstsq(H, g, rcond=None)[0]
        dth = -step.reshape((d1, m), order="F")
        gd = float(g @ -step)
        if -gd < 1e-16 * max(1.0, abs(fval)):
            # the Newton decrement is below the resolution of the objective: at the optimum
            converged = True
            break
        t = 1.0
        while t > 1e-12:
            cand = theta + t * dth
            fc, Ec = obj(cand)
            if fc <= fval + 1e-4 * t * gd:
                theta, fval, E = cand, fc, Ec
                break
            t *= 0.5
        else:
            converged = np.max(np.abs(g)) < 1e-6 * scale
            break
    W = np.column_stack([np.zeros(d1), theta])
    return W, it, bool(converged)


def _platt_pair(d, pos, w):
    """Platt's sigmoid P(pos | d) with smoothed targets (weighted), by Newton's method."""
    from cohstats.probability import platt_fit

    if np.allclose(w, 1.0):
        s = platt_fit(d, np.where(pos, 1.0, -1.0))
        return -s.A, -s.B
    T = smoothed_targets(pos.astype(np.int64), 2, w)
    W, _, _ = mnl_fit(d.reshape(-1, 1), T, w)
    return W[1, 1], W[0, 1]


def couple_pairwise(R):
    """Class probabilities from pairwise probabilities (Wu, Lin & Weng 2004, method 2; libsvm).

    ``R`` is (n, K, K) with ``R[:, a, b] = P(a | a or b)`` (``R[:, b, a] = 1 - R[:, a, b]``).
    Minimises ``sum_a sum_{b != a} (R_ba p_a - R_ab p_b)^2`` subject to ``sum p = 1``; the
    solution of the equality-constrained problem is non-negative (their Theorem), solved here
    directly from its (K + 1) x (K + 1) linear system.
    """
    n, K, _ = R.shape
    Q = -R.transpose(0, 2, 1) * R
    off = ~np.eye(K, dtype=bool)
    diag = np.where(off[None], R.transpose(0, 2, 1) ** 2, 0.0).sum(axis=2)
    Q[:, np.arange(K), np.arange(K)] = diag
    A = np.zeros((n, K + 1, K + 1))
    A[:, :K, :K] = Q
    A[:, :K, K] = 1.0
    A[:, K, :K] = 1.0
    rhs = np.zeros((n, K + 1))
    rhs[:, K] = 1.0
    p = np.linalg.solve(A, rhs[..., None])[..., 0][:, :K]
    p = np.clip(p, 0.0, None)
    return p / p.sum(axis=1, keepdims=True)


class ProbCalibration:
    """A post-hoc probability calibration of a λ-SVM (see :meth:`LamSVMFit.calibration`).

    Attributes
    ----------
    method : "multinomial" or "coupling".
    s : the value of the path variable it was fitted at.
    decision : (n, K) (or (n,) binary) cross-validated decision values of the training rows.
    foldid : (n,) fold ids used.
    coef : multinomial: (K, K) array (rows: intercept then the first ``K - 1`` decision values,
        or the single binary one; columns: classes, the first a zero reference); coupling: a
        DataFrame of Platt's ``(A, B)`` per class pair, ``P(a | a or b) = 1/(1 + exp(-(A d + B)))``
        with ``d = f_a - f_b``.
    """

    def __init__(self, method, s, decision, foldid, coef, K, n_iter=0, converged=True):
        if method not in PROB_METHODS:
            raise ValueError(f"ProbCalibration: method must be one of {PROB_METHODS}; got {method!r}")
        if not isinstance(converged, (bool, np.bool_)):
            raise TypeError(f"ProbCalibration: converged must be a bool; got {type(converged).__name__}")
        if isinstance(n_iter, (bool, np.bool_)) or not isinstance(n_iter, numbers.Integral):
            raise TypeError(f"ProbCalibration: n_iter must be an int; got {type(n_iter).__name__}")
        if method == "multinomial" and np.shape(coef) != (K, K):
            raise ValueError(
                f"ProbCalibration: the multinomial map needs a ({K}, {K}) coef; got shape {np.shape(coef)}"
            )
        self.method, self.s, self.decision, self.foldid = method, s, decision, foldid
        self.coef, self.K, self.n_iter, self.converged = coef, int(K), int(n_iter), bool(converged)

    def __call__(self, F) -> np.ndarray:
        """(n, K) probabilities from decision values ``F`` ((n,) binary or (n, K))."""
        K = self.K
        if self.method == "multinomial":
            G = _mnl_features(F, K)
            return _softmax(np.column_stack([np.ones(G.shape[0]), G]) @ self.coef)
        Fk = _full_F(F, K)
        n = Fk.shape[0]
        R = np.full((n, K, K), 0.5)
        for (a, b), (A, B) in zip(self.coef.index, self.coef.to_numpy()):
            z = A * (Fk[:, a] - Fk[:, b]) + B
            r = np.where(z >= 0, 1.0 / (1.0 + np.exp(-np.abs(z))), np.exp(-np.abs(z)) / (1.0 + np.exp(-np.abs(z))))
            r = np.clip(r, 1e-7, 1 - 1e-7)  # as libsvm's min_prob
            R[:, a, b], R[:, b, a] = r, 1.0 - r
        return couple_pairwise(R)


def _full_F(F, K):
    F = np.asarray(F, dtype=float)
    if F.ndim == 1:
        return np.column_stack([-F, F])
    return F


def _fit_calibration(method, F, yk, K, w):
    if method == "multinomial":
        W, it, conv = mnl_fit(_mnl_features(F, K), smoothed_targets(yk, K, w), w)
        return W, it, conv
    Fk = _full_F(F, K)
    rows, idx = [], []
    for a in range(K):
        for b in range(a + 1, K):
            m = (yk == a) | (yk == b)
            A, B = _platt_pair(Fk[m, a] - Fk[m, b], yk[m] == a, w[m])
            rows.append((A, B))
            idx.append((a, b))
    coef = pd.DataFrame(rows, index=pd.MultiIndex.from_tuples(idx, names=["a", "b"]), columns=["A", "B"])
    return coef, 0, True


# ============================================================================ the fit
class _LamSVMPath(PathFrame):
    """Per-fit statistics along the fitted sequence; ``plot()`` draws coefficient paths for a
    linear kernel and the training error and support-point share otherwise."""

    @property
    def _constructor(self):
        return _LamSVMPath

    def plot(self, columns=None, ax=None, label=True, **kwargs):  # type: ignore[override]
        if columns is not None or list(getattr(self, "coef_columns", []) or []):
            return super().plot(columns=columns, ax=ax, label=label, **kwargs)
        ax = super().plot(columns=["train_error", "sv_share"], ax=ax, label=label, **kwargs)
        ax.set_ylabel("training error / share of support points")
        ax.set_title("lamsvm path")
        return ax


class LamSVMFit(Fit):
    """A fitted λ-SVM (see :func:`lamsvm`).

    Attributes
    ----------
    margin, C : the fitted values (arrays along a path over them).
    kernel : the resolved :class:`cohstats.kernels.Kernel` (acting on the standardised inputs
        when ``standardize=True``).
    gamma : the numeric kernel width used (None for linear and callable kernels).
    coef, intercept : input-space coefficients and intercepts (original scale) for the linear
        kernel; None for other kernels.
    support_ : int positions (training rows) of the support points (any multiplier > 0 at some
        value of the fitted sequence).
    dual_coef : DataFrame (support points by training-row label x classes) of
        ``btilde_ij = alpha_ij y_ij - mean_j``: ``f_j(x) = sum_i btilde_ij K(z_i, z)``.
    alpha_ : (n, K) multipliers of the fit at the selected value.
    steps : DataFrame of per-fit solver statistics (one row per value of the sequence).
    lambda_, path_var, s : the fitted sequence (values of ``C``, ``margin`` or ``lambda_``), its
        name and the selected value.
    converged, n_iter : all SMO runs met the KKT tolerance; total SMO iterations.
    """

    method = "lamsvm"
    title = "Lambda-SVM (multiclass hinge loss with variable positive margin)"
    _predict_options = ("method", "nfolds", "random_state")
    _PATH_VARS = ("lambda", "C", "margin")

    @classmethod
    def _from_arrays(
        cls,
        design,
        *,
        fitargs,
        kernel,
        gamma,
        standardize,
        scaling,
        path_var,
        lambda_,
        margin,
        C,
        support,
        Xsv,
        bt_path,
        alpha_path,
        Cb_path,
        steps,
        converged,
        n_iter,
        call,
    ) -> "LamSVMFit":
        """Build the result from the SMO runs along the sequence (every piece of state a keyword).

        ``path_var`` names the fitted sequence ``lambda_`` (``"lambda"``, ``"C"`` or
        ``"margin"``); ``margin`` and ``C`` are the fitted values (arrays along a path over
        them). ``support`` holds the training positions of the support points, ``Xsv`` their
        (standardised) inputs, ``bt_path`` (L, n_sv, K) their centred coefficients ``btilde``,
        ``alpha_path`` (L, n, K) and ``Cb_path`` (L, n) the multipliers and box bounds,
        ``steps`` the per-run solver statistics, ``scaling = (center, scale)`` the input
        standardisation. A linear kernel gets its input-space coefficient path here. ``s`` is
        the last value of the sequence.
        """
        if path_var not in cls._PATH_VARS:
            raise ValueError(f"LamSVMFit: path_var must be one of {cls._PATH_VARS}; got {path_var!r}")
        self = cls._blank(design, call)
        self._fitargs = fitargs
        self.kernel = kernel
        self.gamma = gamma
        self.standardize = standardize
        self._center, self._scale = scaling
        self.path_var = path_var
        self.path_arg = "lambda_" if path_var == "lambda" else path_var
        self.margin = margin
        self.C = C
        self.support_ = support
        self._Xsv = Xsv
        self._bt_path = bt_path
        self._alpha_path = alpha_path
        self._Cb_path = Cb_path
        self.steps = steps
        lam = self._checked_lambda(lambda_)
        if len(bt_path) != lam.size or len(steps) != lam.size:
            raise ValueError(
                f"LamSVMFit: bt_path and steps need one entry per lambda_ value "
                f"({lam.size}); got {len(bt_path)} and {len(steps)}"
            )
        self._coef_path = None
        coef = intercept = None
        if kernel.code == KERNEL_LINEAR:
            center, scale = scaling
            cp = np.einsum("ip,sik->spk", Xsv, bt_path) / scale[None, :, None]
            icp = -np.einsum("p,spk->sk", center, cp)
            binary = self.n_classes == 2
            self._coef_path = cp[:, :, 1] if binary else cp
            self._intercept_path = icp[:, 1] if binary else icp
            coef, intercept = self._coef_path[-1], self._intercept_path[-1]
        self._set_contract(
            lambda_=lam, s=float(lam[-1]), converged=converged, n_iter=n_iter, coef=coef, intercept=intercept
        )
        return self

    # ------------------------------------------------------------------ s handling
    @property
    def xvar(self) -> str:
        return self.path_var

    def _s_value(self, s):
        """The value of the path variable to evaluate at (``None``: the selected one); ``s`` was
        validated by :meth:`Fit._check_s` in ``predict``/``select``/``coef_at``."""
        if s is None:
            return float(self.s)
        lam = np.asarray(self.lambda_, dtype=float)
        return float(min(max(float(s), lam.min()), lam.max()))

    # ------------------------------------------------------------------ prediction
    def _btilde(self, s=None):
        s = self._s_value(s)
        if len(self.lambda_) == 1:
            return self._bt_path[0]
        return interpolate_path(self.lambda_, self._bt_path, s)

    def _Z(self, X):
        X = np.ascontiguousarray(X, dtype=np.float64)
        return np.ascontiguousarray((X - self._center) / self._scale)

    def _decision(self, X, s=None):
        bt = self._btilde(s)
        Kx = self.kernel(self._Z(X), self._Xsv)
        F = Kx @ bt
        if not np.all(np.isfinite(F)):
            raise ValueError(
                "lamsvm: non-finite decision values for these inputs (the kernel "
                "overflowed); check newdata for huge values or refit with "
                "standardize=True"
            )
        if self.n_classes == 2:
            return F[:, 1]
        return F

    def _classify(self, X, s=None, **kw):
        if kw:
            raise TypeError(f"predict(type='class') takes no options {sorted(kw)}")
        f = self._decision(X, s)
        if f.ndim == 1:
            return (f > 0).astype(np.int64)
        return np.argmax(f, axis=1)

    def calibration(self, method=None, s=None, nfolds=5, random_state=0) -> ProbCalibration:
        """The post-hoc probability calibration used by ``predict(type="prob")``.

        Decision values of every training row are computed by ``nfolds``-fold cross-validation
        (stratified folds from ``random_state``; each fold refits :func:`lamsvm` with the same
        arguments at the single value ``s`` of the path variable), and a calibration map from
        decision values to class probabilities is fitted to them:

        * ``"multinomial"``: multinomial logistic regression of the class on the decision values
          (the first ``K - 1`` of the sum-to-zero vector, with intercepts) with Platt's smoothed
          targets generalised to ``K`` classes (:func:`smoothed_targets`), so that the fit
          exists when the decision values separate the classes;
        * ``"coupling"``: as libsvm's ``-b 1``: one Platt sigmoid per class pair on the
          differences ``f_a - f_b`` of the rows of those two classes, coupled into ``K``
          probabilities by Wu, Lin & Weng's method 2 (:func:`couple_pairwise`).

        This is a calibration of the classifier, not an estimate from its loss: the λ-SVM
        loss is a hinge loss whose population minimiser identifies only ``argmax P`` ([RH]).
        Results are cached per ``(method, s, nfolds, random_state)``.
        """
        method = DEFAULT_PROB_METHOD if method is None else method
        if method not in PROB_METHODS:
            raise ValueError(f"method must be one of {PROB_METHODS}; got {method!r}")
        if isinstance(nfolds, bool) or not isinstance(nfolds, numbers.Integral) or nfolds < 2:
            raise ValueError(f"nfolds must be an integer >= 2; got {nfolds!r}")
        if random_state is not None and (
            isinstance(random_state, bool) or not isinstance(random_state, numbers.Integral)
        ):
            raise TypeError(f"random_state must be an int or None; got {random_state!r}")
        s = self._s_value(self._check_s(s, "calibration"))
        key = (method, s, int(nfolds), random_state)
        cache = self.__dict__.setdefault("_calib", {})
        if key in cache:
            return cache[key]
        F, foldid = self._cv_decision(s, int(nfolds), random_state)
        yk = np.asarray(self.design.y_int, dtype=np.int64)
        w = np.asarray(self.design.weights, dtype=float)
        coef, it, conv = _fit_calibration(method, F, yk, self.n_classes, w)
        if not conv:
            warnings.warn(
                "lamsvm: the multinomial calibration map did not converge (Newton "
                "stopped); its probabilities may be inaccurate: try method='coupling'",
                ConvergenceWarning,
                stacklevel=3,
            )
        cal = ProbCalibration(method, s, F, foldid, coef, self.n_classes, it, conv)
        cache[key] = cal
        return cal

    def _cv_decision(self, s, nfolds, random_state):
        dkey = (s, nfolds, random_state)
        dcache = self.__dict__.setdefault("_cvdec", {})
        if dkey in dcache:
            return dcache[dkey]
        from cohstats.tuning import make_folds

        d = self.design
        foldid = make_folds(d.y_int, nfolds, stratified=True, random_state=random_state)
        args = dict(self._fitargs)
        args[{"lambda": "lambda_"}.get(self.path_var, self.path_var)] = s
        F = None
        for k in range(int(foldid.max()) + 1):
            tr, te = np.flatnonzero(foldid != k), np.flatnonzero(foldid == k)
            sub = d.take(tr)
            if len(np.unique(sub.y_int)) < self.n_classes:
                raise ValueError(
                    f"cross-validated probabilities need every class in every "
                    f"training fold; a class has too few rows for nfolds={nfolds}"
                )
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", CalibrationWarning)
                warnings.simplefilter("ignore", ConvergenceWarning)
                ff = lamsvm(sub, warn_calibration=False, **args)
            Fk = ff._decision(d.X[te])
            if F is None:
                F = np.empty((d.nobs,) + Fk.shape[1:])
            F[te] = Fk
        dcache[dkey] = (F, foldid)
        return F, foldid

    def _proba(self, X, s=None, method=None, nfolds=5, random_state=0):
        cal = self.calibration(method=method, s=s, nfolds=nfolds, random_state=random_state)
        P = cal(self._decision(X, s))
        return P[:, 1] if self.n_classes == 2 else P

    @property
    def coef(self):
        """Input-space coefficients on the original scale (linear kernel), else None."""
        if getattr(self, "_coef_path", None) is None:
            return None
        return super().coef

    @property
    def intercept(self):
        if getattr(self, "_coef_path", None) is None:
            return None
        return super().intercept

    def _coef_at(self, s=None):
        cp = getattr(self, "_coef_path", None)
        if cp is None:
            return None, None
        s = self._s_value(s)
        if len(self.lambda_) == 1:
            return cp[0], self._intercept_path[0]
        return interpolate_path(self.lambda_, cp, s), interpolate_path(self.lambda_, self._intercept_path, s)

    @property
    def dual_coef(self) -> pd.DataFrame:
        idx = self.design.row_labels
        rows = self.support_ if idx is None else np.asarray(idx)[self.support_]
        return pd.DataFrame(self._btilde(), index=pd.Index(rows), columns=self.classes)

    # ------------------------------------------------------------------ reporting
    def _repr_extra(self) -> str:
        st = self._step()
        return f"margin={st['margin']:g}, C={st['C']:g}, {int(st['n_sv'])} SV"

    def _k(self) -> int:
        return int(np.argmin(np.abs(np.asarray(self.lambda_) - float(self.s))))

    def _step(self):
        return self.steps.iloc[self._k()]

    @property
    def alpha_(self) -> np.ndarray:
        """(n, K) dual multipliers of the fit nearest to the selected value ``s``."""
        return self._alpha_path[self._k()]

    def _summary(self) -> Summary:
        st = self._step()
        K = self.n_classes
        m = float(st["margin"])
        cal = is_calibrated(m, K)
        band = f"[0, {(K - 2) / 2:g}]"
        info = {
            "Call": self.call_string(),
            "Observations": self.nobs,
            "Classes": K,
            "Kernel": self.kernel.describe(),
            "Standardized inputs": bool(self.standardize),
            "Path variable": self.path_var,
            "margin": m,
            "C (box bound)": float(st["C"]),
            "C on libsvm's scale (C / margin scale)": float(st["C"]) / margin_scale(K, m),
            "lambda_ (= 1/(n C))": 1.0 / (self.nobs * float(st["C"])),
            "Calibrated": cal,
            "Calibration domain": f"margin < 0 or margin > (K-2)/2 = {(K - 2) / 2:g} (open)",
            "Support points": int(st["n_sv"]),
            "Multipliers > 0": int(st["n_alpha"]),
            "Multipliers at C": int(st["n_at_C"]),
            "Iterations": int(st["n_iter"]),
            "Kernel rows computed": int(st["kernel_rows"]),
            "Training time (s)": float(st["time"]),
            "Status": st["status"],
            "Max KKT violation": float(st["max_violation"]),
            "T_kkt": float(st["tol"]),
            "T_kkt in libsvm's units (T_kkt / margin scale)": float(st["tol"]) / margin_scale(K, m),
            "Primal objective": float(st["primal"]),
            "Dual objective": float(st["dual"]),
            "Relative duality gap": float(st["gap"]),
            "Training error": float(st["train_error"]),
        }
        if self.gamma is not None:
            info["gamma"] = float(self.gamma)
        tables = {"Support vectors per class": self._sv_table()}
        if len(self.lambda_) > 1:
            tables["Path"] = self.steps.copy()
        notes = []
        if not cal:
            notes.append(
                f"margin = {m:g} lies in the uncalibrated band {band} for K = {K} "
                "classes ([RH] Theorem 2): the risk minimiser need not pick argmax P."
            )
        if not bool(st["converged"]):
            notes.append(
                f"SMO stopped ({st['status']}) before all KKT conditions held within "
                f"T_kkt; increase max_iter / time_limit or tol."
            )
        notes.append("Decision values sum to zero over classes (inhibition mu = 1/K).")
        notes.append(
            "Class probabilities (predict(type='prob')) are a post-hoc calibration of "
            "the classifier -- a map fitted to 5-fold cross-validated decision values "
            f"(default method '{DEFAULT_PROB_METHOD}'; 'coupling' as libsvm) -- not an "
            "estimate from the lambda-SVM loss, whose minimiser identifies only argmax P "
            "([RH])."
        )
        return Summary(self.title, info, tables, notes)

    def _sv_table(self) -> pd.DataFrame:
        a = self.alpha_
        yk = self.design.y_int
        Cb = self._Cb_path[self._k()]
        rows = []
        for j, c in enumerate(self.classes):
            mine = yk == j
            sv = (a > 0).any(axis=1)
            rows.append(
                {
                    "class": c,
                    "n": int(mine.sum()),
                    "support points": int((sv & mine).sum()),
                    "at bound C (any)": int(((a >= Cb[:, None] * (1 - 1e-12)) & (a > 0)).any(axis=1)[mine].sum()),
                    "alpha_j > 0": int((a[:, j] > 0).sum()),
                }
            )
        return pd.DataFrame(rows).set_index("class")

    def path(self) -> PathFrame:
        """Per-fit statistics along the fitted sequence (and the coefficients, linear kernel).

        ``path().plot()`` draws the coefficient paths for a linear kernel, otherwise the
        training error and the share of support points against the path variable."""
        df = self.steps.reset_index(drop=True).copy()
        df["sv_share"] = df["n_sv"] / self.nobs
        coef_cols = []
        cp = getattr(self, "_coef_path", None)
        if cp is not None:
            if cp.ndim == 2:
                names = [str(x) for x in self.xnames]
                for j, nm in enumerate(names):
                    df[nm] = cp[:, j]
            else:
                names = []
                for k, c in enumerate(self.classes):
                    for j, x in enumerate(self.xnames):
                        nm = f"{x}:{c}"
                        df[nm] = cp[:, j, k]
                        names.append(nm)
            coef_cols = names
        return _LamSVMPath.build(df, xvar=self.path_var, coef_columns=coef_cols, log_x=self.path_var in ("C", "lambda"))

    def plot(self, ax=None, **kwargs):
        """Training time and iterations against the fitted sequence (path fits), or the
        histogram of the training rows' true-class decision values (single fit). Returns Axes."""
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots(figsize=(5, 3.5))
        if len(self.lambda_) > 1:
            x = self.steps[self.path_var].to_numpy()
            ax.plot(x, self.steps["time"].to_numpy(), marker="o", label="time (s)", **kwargs)
            ax.set_xlabel(self.path_var)
            ax.set_ylabel("training time (s)")
            if self.path_var in ("C", "lambda") and np.all(x > 0):
                ax.set_xscale("log")
            ax2 = ax.twinx()
            ax2.plot(x, self.steps["n_iter"].to_numpy(), marker="s", color="C1", label="iterations")
            ax2.set_ylabel("SMO iterations")
            ax.set_title("lamsvm path")
        else:
            F = _full_F(self._decision(self.design.X), self.n_classes)
            own = F[np.arange(F.shape[0]), self.design.y_int]
            ax.hist(own, bins=40, **kwargs)
            ax.set_xlabel("f_y(x_i) (decision value of the true class)")
            ax.set_ylabel("count")
            ax.axvline(float(self._step()["margin"]), color="k", ls="--", lw=1)
            ax.set_title("lamsvm training decision values")
        return ax


_PARAMS = {
    "margin": NoneOr(Reals(Real())),
    "C": NoneOr(Reals(Real(0.0, closed="neither"))),
    "lambda_": NoneOr(Reals(Real(0.0, closed="neither"))),
    "kernel": NoneOr(AnyOf(Options("linear", "rbf", "compact", "poly"), Callable())),
    "gamma": AnyOf(Real(0.0, closed="neither"), Options("scale", "auto", "median", "mean")),
    "sigma": NoneOr(Real(0.0, closed="neither")),
    "degree": Integer(1),
    "coef0": Real(),
    "D": NoneOr(Real(0.0, closed="neither")),
    "nu": NoneOr(Real(0.0, closed="neither")),
    "standardize": Bool(),
    "tol": NoneOr(Real(0.0, closed="neither")),
    "eps": Real(0.0),
    "max_iter": NoneOr(Integer(1)),
    "time_limit": NoneOr(Real(0.0, closed="neither")),
    "cache_size": Real(0.0, closed="neither"),
    "shrinking": Bool(),
    "na_action": Options("omit", "raise"),
    "warn_calibration": Bool(),
}
_DECLARED = FitSpec(
    "lamsvm", path_args=("C", "margin", "lambda_"), multiclass=True, probabilities=True, default_measure="class"
)


@fit_function(_DECLARED, _PARAMS)
def lamsvm(
    formula,
    data=None,
    *,
    margin=None,
    C=None,
    lambda_=None,
    kernel="rbf",
    gamma="scale",
    sigma=None,
    degree=3,
    coef0=1.0,
    D=None,
    nu=None,
    standardize=True,
    tol=None,
    eps=1e-6,
    max_iter=None,
    time_limit=None,
    cache_size=200.0,
    shrinking=True,
    weights=None,
    subset=None,
    na_action="omit",
    warn_calibration=True,
) -> LamSVMFit:
    """Fit a λ-SVM: multiclass hinge loss with variable positive margin ([RH]).

    The fitted problem is [RH]'s Inhibitory-SVM primal (eq. 14-16)

        minimise 1/2 sum_j ||w_j||^2 + C sum_i w_i sum_j eta_ij

    (``eta_ij`` the slacks, ``w_i`` observation weights), i.e. ``1/2 ||w||^2 + C sum_i w_i
    Psi_{y_i}(f(x_i))``: ``C`` is the cost of [RH], the box bound of their dual (eq. 23). [RH]
    write ``C/(N L)`` in their eq. 8 and then use a cost "already normalised by N and L"; that
    normalised cost is this ``C`` (their un-normalised cost is ``C N L``). Equivalently, in
    glmnet's form ``(1/n) sum_i w_i Psi_i + lambda_ (1/2) ||w||^2``, ``lambda_ = 1/(n C)``.

    **Cost and tolerance on libsvm's scale.** The margins of the λ-SVM are ``margin`` for the
    true class and 1 for the others, so a point without loss has ``f_y - max_{j != y} f_j`` of
    at least ``2 s``, ``s = margin_scale(K, margin) = (max(K - 1, margin) + 1) / 2`` for
    ``K >= 3`` (``5 K - 4.5`` at the default margin; ``max(margin, 1)`` for two classes),
    where libsvm's ``y f >= 1`` asks for a gap of 2 between ``f`` and ``-f``. Dividing both
    margins by ``s`` gives the same classifier with decision values divided by ``s``, cost
    ``C / s`` and tolerance ``tol / s`` (:func:`margin_scale`): ``C / s`` is the cost on
    libsvm's scale and ``tol / s`` the KKT tolerance in libsvm's units. ``C`` and ``tol``
    themselves keep [RH]'s meaning (the paper's grids and ``T_kkt`` apply unchanged); the
    defaults are ``C = 2 s`` and ``tol = 5e-3 s``, i.e. cost 2 and tolerance 5e-3 on libsvm's
    scale. (Earlier versions defaulted to margin ``2 (K - 1)``, ``C = 1`` and ``tol = 5e-2``;
    that ``C`` is ``1 / s`` on libsvm's scale, about a tenth of libsvm's default cost for ten
    classes, and was much less accurate than ``SVC(C=1)``.)

    Parameters
    ----------
    formula : str, Design, or array
        ``"y ~ x1 + x2"`` with ``data``; a :class:`cohstats.formula.Design` (used as is); or
        a matrix with the labels in ``data``. The response may have ``K >= 2`` classes.
    data : DataFrame (formula input) or labels (matrix input).
    margin : float or 1-D sequence, optional
        The positive margin λ of [RH] (``lambda`` in the paper). Default
        :func:`default_margin` = ``10 (K - 1)``. ``margin = 1`` is the ISVM loss,
        ``margin = K - 1`` twice Liu & Yuan's reinforced hinge, ``margin < -1`` Lee, Lin &
        Wahba's loss. Margins in the uncalibrated band ``[0, (K - 2)/2]`` trigger a
        :class:`CalibrationWarning`. A sequence fits a path over the margin (increasing,
        warm-started; ``path_var = "margin"``).
    C : float or 1-D sequence, optional
        [RH]'s cost, the box bound of the dual (see above). Default (neither ``C`` nor
        ``lambda_`` given): ``2 margin_scale(K, margin)``, cost 2 on libsvm's scale
        (``10 K - 9`` at the default margin, 20 for two classes; with a sequence of margins
        one such value per margin). Chosen by measurement: with cost 1 on libsvm's scale the
        test error on Satimage was about 1 percentage point above ``SVC(C=1)``'s; with 2 it is
        at or below ``SVC(C=1)``'s on Pendigits, Satimage and Optdigits
        (``benchmarks/README.md``). With
        observation weights the box bound of row ``i`` is ``C w_i`` (weights are not normalised,
        as scikit-learn's ``sample_weight`` for ``SVC``). A sequence fits a path over
        ``C`` (increasing; each fit starts from the previous multipliers; ``path_var = "C"``).
    lambda_ : float or 1-D sequence, optional
        The penalty in glmnet's normalisation, ``C = 1/(n lambda_)``; give ``C`` or ``lambda_``,
        not both. A sequence fits a path (decreasing; ``path_var = "lambda"``). At most one of
        ``margin``, ``C`` and ``lambda_`` may be a sequence.
    kernel : None, {"linear", "rbf", "compact", "poly"} or callable ``k(A, B) -> matrix``
        ``None`` and ``"linear"`` both fit the linear model (input-space coefficients in
        ``coef``). ``"compact"`` is [RH]'s compactly supported kernel
        ``(1 - ||x - x'|| / D)_+^nu exp(-gamma ||x - x'||^2)`` with ``nu = (M + 1)/2`` and
        ``D = 1/sqrt(gamma)`` by default. A callable is evaluated once into the full ``n x n``
        matrix (O(n^2) memory), on the standardised inputs when ``standardize=True``.
    gamma : float, "scale" or "auto", default "scale"
        Width of ``exp(-gamma ||x - x'||^2)`` (and the poly kernel's scale). ``"scale"`` is
        scikit-learn's ``1/(p Var(X))`` over all entries of the (standardised) inputs -- ``1/p``
        when ``standardize=True``, e1071's default. ``"auto"`` is ``1/M`` (``M`` predictors),
        which is [RH]'s normalised width ``gamma_k = 1``: [RH] parametrise the width as
        ``gamma = gamma_k / M``, so their grid ``gamma_k = 10^-3..10^3`` is
        ``gamma = 10^k / M``.
    sigma : float, optional
        The papers' width, ``gamma = 1/sigma^2``; give ``gamma`` or ``sigma``, not both.
    degree, coef0 : polynomial kernel. D, nu : compact-kernel truncation and power.
    standardize : bool, default True
        Centre and scale every predictor (weighted mean and sd with divisor ``sum(w)``;
        constant columns are only centred) before the kernel; linear-kernel coefficients are
        reported on the original scale. e1071's ``svm()`` scales by default too. On the raw
        breast-cancer data (30 predictors with standard deviations from 0.003 to 569) the
        10-fold CV error at ``C = 1`` is 10.5 % unstandardised with ``gamma = 1/M`` (8.8 % with
        ``"scale"``) and 2.5 % standardised; with the linear kernel 29.0 % against 2.1 %.
    tol : float, optional
        KKT tolerance ``T_kkt`` of [RH] eq. 24-26 in the units of the decision values (the paper
        uses 5e-2 at every margin); ``tol / margin_scale(K, margin)`` is the same tolerance in
        libsvm's units. Default: ``5e-3 margin_scale(K, margin)``, i.e. 5e-3 in libsvm's units
        at every margin (0.2275 for ten classes at the default margin; with a sequence of
        margins one value per margin). On Pendigits, Satimage and Optdigits the test errors at
        5e-3 and at libsvm's default 1e-3 were within 0.05 percentage points with half the SMO
        visits (``benchmarks/README.md``). (Earlier versions defaulted to ``tol = 5e-2``.)
    eps : float, default 1e-6
        Resolution deciding when a multiplier is at a bound.
    max_iter : int, optional
        Maximal SMO iterations (default ``max(10^7, 100 n)``).
    time_limit : float, optional
        Seconds per fit; SMO stops with a :class:`cohstats.ConvergenceWarning` when exceeded.
    cache_size : float, default 200
        Kernel-row cache in megabytes; rows are stored in float32 when ``tol >= 1e-3`` (as
        libsvm does) and in float64 for tighter tolerances.
    shrinking : bool, default True
        libsvm-style shrinking of points whose multipliers all sit at a bound (exact rebuild
        before stopping).
    weights, subset, na_action : as :func:`cohstats.formula.build_design`.
    warn_calibration : bool, default True
        Emit :class:`CalibrationWarning` for margins in the uncalibrated band.

    Returns
    -------
    LamSVMFit
        ``predict(type="class" | "link" | "prob", s=)``, ``summary()``, ``path()``, ``plot()``,
        ``select(s)`` (path fits), ``calibration()``.

    Notes
    -----
    ``predict(type="prob", method="multinomial" | "coupling", nfolds=5, random_state=0)``
    returns post-hoc probabilities: a calibration map fitted to cross-validated decision
    values (:meth:`LamSVMFit.calibration`). They are a calibration of the classifier, not an
    estimate from its loss: the λ-SVM loss is a hinge loss whose population minimiser is
    piecewise constant in ``P`` and identifies only ``argmax P`` ([RH]). The default method
    ``"multinomial"`` was chosen by measured probability error on simulations with known class
    probabilities (600 training rows, the former defaults and ``C = 10``, three replications): at
    ``K = 3`` the two methods were within 3 % of each other in mean ``|p_hat - p|`` (coupling
    slightly lower: 0.034 vs 0.034 on Gaussian classes, 0.056 vs 0.057 on the waveform data),
    at ``K = 5`` the multinomial map was clearly better (0.032 vs 0.044; half the
    Kullback-Leibler error).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from cohstats.models.lamsvm import lamsvm
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame(rng.normal(size=(90, 2)), columns=["x1", "x2"])
    >>> df["y"] = np.array(["a", "b", "c"])[np.digitize(df.x1 + 0.3 * rng.normal(size=90), [-0.4, 0.4])]
    >>> fit = lamsvm("y ~ x1 + x2", df, C=10, margin=10, tol=1e-3)
    >>> bool(np.allclose(fit.predict(type="link").sum(axis=1), 0))
    True
    >>> float((fit.predict() == df.y).mean()) > 0.8
    True
    >>> P = fit.predict(type="prob")
    >>> list(P.columns), bool(np.allclose(P.sum(axis=1), 1))
    (['a', 'b', 'c'], True)
    """
    fitargs = dict(
        margin=margin,
        C=C,
        lambda_=lambda_,
        kernel=kernel,
        gamma=gamma,
        sigma=sigma,
        degree=degree,
        coef0=coef0,
        D=D,
        nu=nu,
        standardize=standardize,
        tol=tol,
        eps=eps,
        max_iter=max_iter,
        time_limit=time_limit,
        cache_size=cache_size,
        shrinking=shrinking,
    )
    ctx = capture_context(1) if isinstance(formula, str) else None
    # a Design passes through build_design (subset/weights applied, no re-parsing)
    design = build_design(formula, data, weights=weights, subset=subset, na_action=na_action, context=ctx)
    refuse_no_intercept(design, "lamsvm", "always fits unpenalised offsets (the intercepts b_k)")
    K = design.n_classes
    if K < 2:
        raise ValueError(f"lamsvm needs a response with at least two classes; got {K}")
    n = design.nobs
    if n < 2:
        raise ValueError(f"lamsvm needs at least two observations; got {n}")
    if design.X.shape[1] == 0:
        raise ValueError(
            "lamsvm needs at least one predictor; the model has none (e.g. 'y ~ 1'): "
            "add predictors to the formula ('y ~ x1 + x2' or 'y ~ .')"
        )
    yk = np.ascontiguousarray(design.y_int, dtype=np.int64)
    if len(np.unique(yk)) < 2:
        raise ValueError("lamsvm needs at least two classes present in the training data")
    standardize = _bool("standardize", standardize)
    shrinking = _bool("shrinking", shrinking)
    warn_calibration = _bool("warn_calibration", warn_calibration)

    margins = _seq("margin", default_margin(K) if margin is None else margin)
    if C is not None and lambda_ is not None:
        raise ValueError("give one of C and lambda_ (C = 1/(n lambda_)), not both")
    default_C = C is None and lambda_ is None
    if lambda_ is not None:
        lams = _seq("lambda_", lambda_, positive=True)
        Cs = 1.0 / (n * lams)
    elif default_C:
        # libsvm's scale: C = DEFAULT_COST * s(K, margin), one value per margin
        lams = None
        Cs = np.array([DEFAULT_COST * margin_scale(K, m) for m in margins])
    else:
        lams = None
        Cs = _seq("C", C, positive=True)
    if len(margins) > 1 and len(Cs) > 1 and not default_C:
        raise ValueError("margin and C (or lambda_) cannot both be sequences; fit a grid with cohstats.tune")
    default_tol = tol is None
    if not default_tol:
        tol = _real("tol", tol, positive=True)
    eps = _real("eps", eps, nonneg=True)
    if eps >= Cs.min():
        raise ValueError(f"eps must be smaller than C; got eps={eps!r}, C={Cs.min()!r}")
    if max_iter is not None and (
        isinstance(max_iter, bool) or not isinstance(max_iter, numbers.Integral) or max_iter < 1
    ):
        raise ValueError(f"max_iter must be a positive integer; got {max_iter!r}")
    time_limit = _real("time_limit", time_limit, positive=True, allow_none=True)
    cache_size = _real("cache_size", cache_size, positive=True)
    w = np.asarray(design.weights, dtype=np.float64)
    if np.any(w < 0) or not np.all(np.isfinite(w)):
        raise ValueError("weights must be finite and non-negative")

    # ---------------------------------------------------------------- kernel
    if kernel is None:
        kname = "linear"
    elif callable(kernel):
        kname = None
    elif isinstance(kernel, str):
        kname = kernel.lower()
    else:
        raise ValueError(f"kernel must be None, 'linear', 'rbf', 'compact', 'poly' or a callable; got {kernel!r}")
    width_given = sigma is not None or not (isinstance(gamma, str) and gamma == "scale")
    if kname in ("linear",) or kname is None:
        if width_given:
            raise ValueError(
                f"gamma/sigma set the width of a kernel; kernel={kernel!r} has none: "
                "drop gamma and sigma or choose kernel='rbf'"
            )
    if (D is not None or nu is not None) and kname != "compact":
        raise ValueError(f"D and nu belong to the compact kernel; kernel={kernel!r}: drop them or use kernel='compact'")
    X = np.ascontiguousarray(design.X, dtype=np.float64)
    if not np.all(np.isfinite(X)):
        raise ValueError("predictors contain infinite values; remove or recode those rows")
    center, scale = _standardize(X, w, standardize)
    Z = np.ascontiguousarray((X - center) / scale)
    sq = np.einsum("ij,ij->i", Z, Z)
    if not np.all(np.isfinite(sq)) or not math.isfinite(4.0 * float(sq.max(initial=0.0))):
        raise ValueError(
            "predictor values are too large for the kernel (squared norms overflow "
            "float64); use standardize=True or rescale the predictors"
        )
    gam = None
    if kname in ("rbf", "gaussian", "compact", "poly", "polynomial"):
        gam = _width(gamma, sigma, Z, yk)
        if not math.isfinite(gam * 4.0 * float(sq.max(initial=0.0)) + 1.0):
            raise ValueError(
                "gamma times the squared distances overflows float64; use "
                "standardize=True, rescale the predictors or choose a smaller gamma"
            )
    kern = make_kernel("linear" if kernel is None else kernel, Z, gamma=gam, degree=degree, coef0=coef0, D=D, nu=nu)
    Kfull = kern(Z) if kern.code == KERNEL_CALLABLE else None
    if Kfull is not None and not np.all(np.isfinite(Kfull)):
        raise ValueError("the kernel callable returned non-finite values on the training inputs")

    if lams is not None and len(lams) > 1:
        path_var, seq = "lambda", np.sort(lams)[::-1]
    elif len(margins) > 1:
        path_var, seq = "margin", np.sort(margins)
    elif lams is not None:
        path_var, seq = "lambda", lams
    elif default_C:
        path_var, seq = "C", Cs
    else:
        path_var, seq = "C", np.sort(Cs)
    if warn_calibration:
        bad = [m for m in (seq if path_var == "margin" else margins) if not is_calibrated(m, K)]
        if bad:
            warnings.warn(
                f"margin={bad[0]:g} is not classification calibrated for K={K} classes: "
                f"[RH] Theorem 2 needs margin < 0 or margin > (K-2)/2 = {(K - 2) / 2:g}; choose "
                f"the margin outside [0, {(K - 2) / 2:g}] (the default is {default_margin(K):g})",
                CalibrationWarning,
                stacklevel=2,
            )

    alpha = None
    bt_list, rows, alphas, Cbs = [], [], [], []
    for v in seq:
        m = float(v) if path_var == "margin" else float(margins[0])
        if path_var == "C":
            c = float(v)
        elif path_var == "lambda":
            c = 1.0 / (n * float(v))
        elif default_C:
            c = DEFAULT_COST * margin_scale(K, m)
        else:
            c = float(Cs[0])
        tol_m = DEFAULT_TOL * margin_scale(K, m) if default_tol else tol
        Cb = c * w
        pos = Cb[Cb > 0]
        if pos.size == 0 or not np.all(np.isfinite(Cb)) or pos.min() <= eps:
            raise ValueError(
                f"the box bounds C * weights range over [{pos.min() if pos.size else 0:.3g}, "
                f"{Cb.max():.3g}] at {path_var}={v:g}; they must be finite and above eps={eps:g}: "
                "rescale the weights (the fit depends on C * weights only) or change C / eps"
            )
        res = solve_lambda_svm(
            Z,
            yk,
            K,
            m,
            Cb,
            kern.code,
            kern.kpar,
            Kfull,
            tol=tol_m,
            eps=eps,
            max_iter=max_iter,
            time_limit=time_limit,
            cache_size=cache_size,
            shrinking=shrinking,
            alpha0=alpha,
        )
        alpha = res.dual
        F = res.info["F"]
        if not (
            np.all(np.isfinite(F))
            and np.all(np.isfinite(alpha))
            and math.isfinite(res.info["primal"])
            and math.isfinite(res.info["dual"])
        ):
            raise ValueError(
                f"lamsvm: non-finite decision values at {path_var}={v:g} (the kernel or the "
                "objective overflowed float64); use standardize=True or rescale the predictors, "
                "and check the weights and C"
            )
        if not res.converged:
            what = {"time_limit": "time_limit", "max_iter": "max_iter"}.get(res.info["status"], "tol")
            warnings.warn(
                f"lamsvm: SMO stopped ({res.info['status']}) at {path_var}={v:g} after {res.n_iter} "
                f"iterations with maximal KKT violation {res.info['max_violation']:.3g} > tol={tol_m:g}; "
                f"increase {what}" + (" or tol" if what != "tol" else ""),
                ConvergenceWarning,
                stacklevel=2,
            )
        b = np.where(yk[:, None] == np.arange(K), alpha, -alpha)
        bt = b - b.mean(axis=1, keepdims=True)
        pred = np.argmax(F, axis=1)
        gap = (res.info["primal"] - res.info["dual"]) / max(abs(res.info["primal"]), 1e-300)
        rows.append(
            {
                path_var: float(v),
                "margin": m,
                "C": c,
                "tol": tol_m,
                "n_iter": res.n_iter,
                "n_steps": res.info["n_steps"],
                "time": res.info["time"],
                "converged": res.converged,
                "status": res.info["status"],
                "max_violation": res.info["max_violation"],
                "primal": res.info["primal"],
                "dual": res.info["dual"],
                "gap": gap,
                "n_sv": int((alpha > 0).any(axis=1).sum()),
                "n_alpha": int((alpha > 0).sum()),
                "n_at_C": int(((alpha >= Cb[:, None] - eps) & (Cb[:, None] > 0)).sum()),
                "kernel_rows": res.info["kernel_rows"],
                "train_error": float(np.mean(pred != yk)),
            }
        )
        bt_list.append(bt)
        alphas.append(alpha.copy())
        Cbs.append(Cb)
    steps = pd.DataFrame(rows)
    sv = np.flatnonzero(np.any([(a > 0).any(axis=1) for a in alphas], axis=0)).astype(np.int64)
    call = {}
    for k_, v_ in (("margin", margin), ("C", C), ("lambda_", lambda_)):
        if v_ is not None:
            call[k_] = v_
    call["kernel"] = kernel if not callable(kernel) else kern.name
    if gam is not None:
        if sigma is not None:
            call["sigma"] = sigma
        else:
            call["gamma"] = gamma
    call["standardize"] = standardize
    if not default_tol:
        call["tol"] = tol
    if time_limit is not None:
        call["time_limit"] = time_limit
    return LamSVMFit._from_arrays(
        design,
        fitargs=fitargs,
        kernel=kern,
        gamma=gam,
        standardize=standardize,
        scaling=(center, scale),
        path_var=path_var,
        lambda_=np.asarray(seq, dtype=float),
        margin=seq.copy() if path_var == "margin" else float(margins[0]),
        C=np.asarray(steps["C"], dtype=float)
        if len(seq) > 1 and (path_var in ("C", "lambda") or default_C)
        else float(steps["C"].iloc[0]),
        support=sv,
        Xsv=np.ascontiguousarray(Z[sv]),
        bt_path=np.stack([bt[sv] for bt in bt_list]),
        alpha_path=np.stack(alphas),
        Cb_path=np.stack(Cbs),
        steps=steps,
        converged=bool(steps["converged"].all()),
        n_iter=int(steps["n_iter"].sum()),
        call=call,
    )
