"""λ-SVM: multiclass hinge loss with a variable positive margin ([RH]).

:func:`lamsvm` fits, for ``K >= 2`` classes, the Inhibitory-SVM formulation with ``mu = 1/K``
(sum-to-zero decision functions) of the loss

    Psi_y(f) = [margin - f_y]_+ + sum_{j != y} [1 + f_j]_+ ,      sum_j f_j = 0,

by solving the dual of [RH] eq. 22-23 (box ``0 <= alpha_ij <= C``, no equality constraint) with
the SMO of :mod:`cohstats.solvers.svm.smo_lambda`. Class probabilities are a post-hoc calibration of
cross-validated decision values (:meth:`LamSVMFit.calibration`), not an estimate from the loss.

Layout: :mod:`.lamsvm_prob` (the probability calibrations), :mod:`.lamsvm_result`
(:class:`LamSVMFit`) and this module (the fit function); every public name is importable from here.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from cohstats.exceptions import CalibrationWarning, ConvergenceWarning
from cohstats.formula import NAAction, build_design, capture_context, refuse_no_intercept, refuse_offset
from cohstats.kernels import KERNEL_CALLABLE, make_kernel, resolve_gamma
from cohstats.losses.lamsvm import is_calibrated
from cohstats.scaling import column_scaling
from cohstats.solvers.svm.smo_lambda import solve_lambda_svm
from cohstats.validation import AnyOf, Bool, Callable, FitSpec, Integer, NoneOr, Options, Real, Reals, fit_function
from cohstats.models.lamsvm_prob import PROB_METHODS, couple_pairwise, mnl_fit, smoothed_targets  # noqa: F401
from cohstats.models.lamsvm_prob import ProbCalibration
from cohstats.models.lamsvm_result import DEFAULT_PROB_METHOD, _LamSVMPath  # noqa: F401
from cohstats.models.lamsvm_result import LamSVMFit, default_margin, margin_scale

__all__ = ["lamsvm", "LamSVMFit", "default_margin", "margin_scale", "CalibrationWarning", "ProbCalibration"]


#: the default cost on libsvm's scale (``C = DEFAULT_COST * margin_scale(K, margin)``), chosen by
#: measurement against ``SVC(C=1)`` (benchmarks/log.csv, λ-SVM defaults on libsvm's scale)
DEFAULT_COST = 2.0
#: the default KKT tolerance in libsvm's units (``tol = DEFAULT_TOL * margin_scale(K, margin)``)
DEFAULT_TOL = 5e-3


def _values(v) -> np.ndarray:
    """A number or a 1-D sequence (checked by the declared constraints) as a 1-D float array."""
    return np.atleast_1d(np.asarray(v, dtype=np.float64)).ravel()


def _width(gamma, sigma, Z, y):
    """Resolve ``gamma`` / ``sigma`` into the numeric ``gamma`` of ``exp(-gamma ||x - x'||^2)``."""
    if sigma is not None:
        if not (isinstance(gamma, str) and gamma == "scale"):
            raise ValueError("give at most one of gamma and sigma (gamma = 1/sigma^2)")
        return 1.0 / float(sigma) ** 2
    return resolve_gamma(gamma, Z, y)


def _standardize(X, w, standardize):
    """Weighted centre and scale (sd with divisor sum(w)); see :mod:`cohstats.scaling`."""
    return column_scaling(X, w, standardize)


_PARAMS = {
    "margin": NoneOr(Reals(Real(), distinct=True)),
    "C": NoneOr(Reals(Real(0.0, closed="neither"), distinct=True)),
    "lambda_": NoneOr(Reals(Real(0.0, closed="neither"), distinct=True)),
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
    "na_action": NAAction(),
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
    _settings=None,
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
        (``benchmarks/log.csv``). With
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
        visits (``benchmarks/log.csv``). (Earlier versions defaulted to ``tol = 5e-2``.)
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

    ``fit.settings`` holds the validated arguments of the call (``lamsvm.Settings``, a frozen
    :class:`~cohstats.validation.Settings`): refits, the tuners and saved files read it.

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
    ctx = capture_context(1) if isinstance(formula, str) else None
    # a Design passes through build_design (subset/weights applied, no re-parsing)
    design = build_design(formula, data, weights=weights, subset=subset, na_action=na_action, context=ctx)
    refuse_offset(design, "lamsvm (its K-class SMO dual couples the classes' margins, with no one offset per row)")
    problem = _prepare(design, _settings)
    return _result(design, problem, _solve(problem, _settings), _settings)


# ============================================================================ the fit's steps
@dataclass
class _Problem:
    """What the SMO solver of a λ-SVM fit needs, prepared from the settings and the design."""

    K: int
    n: int
    yk: np.ndarray  # class codes 0..K-1
    w: np.ndarray
    Z: np.ndarray  # the (standardised) inputs
    scaling: tuple  # (center, scale)
    kern: object
    gam: object  # the numeric kernel width (None for kernels without one)
    Kfull: object  # a callable kernel's matrix (None otherwise)
    margins: np.ndarray
    Cs: np.ndarray
    default_C: bool
    path_var: str  # the fitted sequence: "C", "lambda" or "margin"
    seq: np.ndarray


def _prepare(design, s) -> _Problem:
    """Settings and design -> the solver's inputs: class codes, the (standardised) inputs, the
    kernel and the sequence of costs or margins."""
    margin, C, lambda_, kernel, gamma, sigma = s.margin, s.C, s.lambda_, s.kernel, s.gamma, s.sigma
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
    # the arguments were checked by the front door: here only converted
    margins = _values(default_margin(K) if margin is None else margin)
    if C is not None and lambda_ is not None:
        raise ValueError("give one of C and lambda_ (C = 1/(n lambda_)), not both")
    default_C = C is None and lambda_ is None
    if lambda_ is not None:
        lams = _values(lambda_)
        Cs = 1.0 / (n * lams)
    elif default_C:
        # libsvm's scale: C = DEFAULT_COST * s(K, margin), one value per margin
        lams = None
        Cs = np.array([DEFAULT_COST * margin_scale(K, m) for m in margins])
    else:
        lams = None
        Cs = _values(C)
    if len(margins) > 1 and len(Cs) > 1 and not default_C:
        raise ValueError("margin and C (or lambda_) cannot both be sequences; fit a grid with cohstats.tune")
    if float(s.eps) >= Cs.min():
        raise ValueError(f"eps must be smaller than C; got eps={s.eps!r}, C={Cs.min()!r}")
    w = np.asarray(design.weights, dtype=np.float64)
    if np.any(w < 0) or not np.all(np.isfinite(w)):
        raise ValueError("weights must be finite and non-negative")

    # ---------------------------------------------------------------- kernel
    kname = "linear" if kernel is None else (None if callable(kernel) else kernel)  # a declared name
    width_given = sigma is not None or not (isinstance(gamma, str) and gamma == "scale")
    if kname in ("linear",) or kname is None:
        if width_given:
            raise ValueError(
                f"gamma/sigma set the width of a kernel; kernel={kernel!r} has none: "
                "drop gamma and sigma or choose kernel='rbf'"
            )
    if (s.D is not None or s.nu is not None) and kname != "compact":
        raise ValueError(f"D and nu belong to the compact kernel; kernel={kernel!r}: drop them or use kernel='compact'")
    X = np.ascontiguousarray(design.X, dtype=np.float64)
    if not np.all(np.isfinite(X)):
        raise ValueError("predictors contain infinite values; remove or recode those rows")
    center, scale = _standardize(X, w, bool(s.standardize))
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
    kw = dict(gamma=gam, degree=s.degree, coef0=s.coef0, D=s.D, nu=s.nu)
    kern = make_kernel("linear" if kernel is None else kernel, Z, **kw)
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
    if s.warn_calibration:
        bad = [m for m in (seq if path_var == "margin" else margins) if not is_calibrated(m, K)]
        if bad:
            warnings.warn(
                f"margin={bad[0]:g} is not classification calibrated for K={K} classes: "
                f"[RH] Theorem 2 needs margin < 0 or margin > (K-2)/2 = {(K - 2) / 2:g}; choose "
                f"the margin outside [0, {(K - 2) / 2:g}] (the default is {default_margin(K):g})",
                CalibrationWarning,
                stacklevel=2,
            )
    return _Problem(K, n, yk, w, Z, (center, scale), kern, gam, Kfull, margins, Cs, default_C, path_var, seq)


def _solve(prob: _Problem, s):
    """One SMO solve per value of the sequence, each warm-started from the previous solution:
    the per-value diagnostics, centred dual coefficients, duals and box bounds."""
    K, n, yk, w, Z, kern, Kfull = prob.K, prob.n, prob.yk, prob.w, prob.Z, prob.kern, prob.Kfull
    margins, Cs, default_C, path_var = prob.margins, prob.Cs, prob.default_C, prob.path_var
    default_tol = s.tol is None
    tol = None if default_tol else float(s.tol)
    eps = float(s.eps)
    time_limit = None if s.time_limit is None else float(s.time_limit)
    solver = dict(
        max_iter=s.max_iter, time_limit=time_limit, cache_size=float(s.cache_size), shrinking=bool(s.shrinking)
    )

    alpha = None
    bt_list, rows, alphas, Cbs = [], [], [], []
    for v in prob.seq:
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
            alpha0=alpha,
            **solver,
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
    return rows, bt_list, alphas, Cbs


def _result(design, prob: _Problem, solved, s) -> LamSVMFit:
    """The solutions along the sequence -> the result (support vectors, dual paths, steps)."""
    rows, bt_list, alphas, Cbs = solved
    seq, path_var, Z = prob.seq, prob.path_var, prob.Z
    steps = pd.DataFrame(rows)
    sv = np.flatnonzero(np.any([(a > 0).any(axis=1) for a in alphas], axis=0)).astype(np.int64)
    call = {k: getattr(s, k) for k in ("margin", "C", "lambda_") if getattr(s, k) is not None}
    call["kernel"] = s.kernel if not callable(s.kernel) else prob.kern.name
    if prob.gam is not None:
        if s.sigma is not None:
            call["sigma"] = s.sigma
        else:
            call["gamma"] = s.gamma
    call["standardize"] = bool(s.standardize)
    if s.tol is not None:
        call["tol"] = float(s.tol)
    if s.time_limit is not None:
        call["time_limit"] = float(s.time_limit)
    return LamSVMFit._from_arrays(
        design,
        fitargs=None,  # refits read the settings (fit.settings)
        kernel=prob.kern,
        gamma=prob.gam,
        standardize=bool(s.standardize),
        scaling=prob.scaling,
        path_var=path_var,
        lambda_=np.asarray(seq, dtype=float),
        margin=seq.copy() if path_var == "margin" else float(prob.margins[0]),
        C=np.asarray(steps["C"], dtype=float)
        if len(seq) > 1 and (path_var in ("C", "lambda") or prob.default_C)
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


# the settings classes by name, for saved files (cohstats.persist resolves classes by path)
LamsvmSettings = lamsvm.Settings
