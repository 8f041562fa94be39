"""scikit-learn compatible estimators for every cohstats method.

Thin wrappers: each ``fit`` builds a :class:`~cohstats.formula.Design` from ``(X, y,
sample_weight)`` and calls the package's own fit function; ``predict``, ``predict_proba`` and
``decision_function`` call the fitted result's ``predict``. No numerical code lives here, so a
wrapper gives exactly the numbers of the formula interface.

scikit-learn is an optional dependency (``pip install cohstats[sklearn]``).

Examples
--------
>>> from sklearn.pipeline import make_pipeline
>>> from sklearn.preprocessing import StandardScaler
>>> from cohstats.sklearn import WeightedSVMClassifier
>>> from cohstats.datasets import make_wsl2
>>> d = make_wsl2(100, random_state=0)
>>> model = make_pipeline(StandardScaler(), WeightedSVMClassifier(prob_method="platt"))
>>> model.fit(d[["x1", "x2"]], d["y"]).predict_proba(d[["x1", "x2"]]).shape
(100, 2)
"""

from __future__ import annotations

import importlib

import numpy as np

try:
    from sklearn.base import BaseEstimator, ClassifierMixin
    from sklearn.utils.multiclass import check_classification_targets
    from sklearn.utils.validation import check_is_fitted, validate_data
except ImportError as e:  # pragma: no cover - exercised only without scikit-learn
    raise ImportError("cohstats.sklearn needs scikit-learn: pip install 'cohstats[sklearn]'") from e

from .formula import build_design

__all__ = [
    "CLearnClassifier",
    "LUMClassifier",
    "LambdaSVMClassifier",
    "GentleBoostCClassifier",
    "WeightedSVMClassifier",
]


class _CohstatsClassifier(ClassifierMixin, BaseEstimator):
    """Shared plumbing: validation, label encoding, delegation to the fit function."""

    #: scikit-learn checks that are expected to fail, with the reason (see each class's docstring)
    _expected_failed_checks: dict = {}

    _fit_function: tuple[str, str] = ("", "")  # (module, function)
    _prob_params: tuple[str, ...] = ()  # constructor params passed to predict(type="prob")
    _binary_only = False
    _param_map: dict = {}  # constructor name -> fit-function name

    def _fit_kwargs(self) -> dict:
        params = self.get_params(deep=False)
        for name in self._prob_params:
            params.pop(name, None)
        return {self._param_map.get(k, k): v for k, v in params.items()}

    def _prob_kwargs(self) -> dict:
        return {k: v for k, v in ((n, getattr(self, n)) for n in self._prob_params) if v is not None}

    def fit(self, X, y, sample_weight=None):
        """Fit on ``X`` (n, p) and labels ``y``; ``sample_weight`` are observation weights."""
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        self.classes_, y_enc = np.unique(y, return_inverse=True)
        if self.classes_.size < 2:
            raise ValueError(
                f"{type(self).__name__} needs at least two classes; y has only one class ({self.classes_[0]!r})"
            )
        if self._binary_only and self.classes_.size > 2:
            raise ValueError(
                f"Only binary classification is supported by {type(self).__name__}; y has {self.classes_.size} classes"
            )
        if sample_weight is not None:
            sample_weight = np.asarray(sample_weight, dtype=np.float64)
        design = build_design(X, y=y_enc, weights=sample_weight)
        fn = getattr(importlib.import_module(self._fit_function[0]), self._fit_function[1])
        self.fit_ = fn(design, **self._fit_kwargs())
        self.n_iter_ = int(np.max(np.atleast_1d(getattr(self.fit_, "n_iter", 0))))
        return self

    def _check_X(self, X):
        check_is_fitted(self, "fit_")
        return validate_data(self, X, dtype=np.float64, reset=False)

    def predict(self, X):
        X = self._check_X(X)
        codes = self.fit_.predict(X, type="class").to_numpy().astype(np.int64)
        return self.classes_[codes]

    def decision_function(self, X):
        X = self._check_X(X)
        return self.fit_.predict(X, type="link").to_numpy()

    def predict_proba(self, X):
        X = self._check_X(X)
        return self.fit_.predict(X, type="prob", **self._prob_kwargs()).to_numpy()

    def predict_log_proba(self, X):
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = not self._binary_only
        tags.input_tags.allow_nan = False
        return tags


class WeightedSVMClassifier(_CohstatsClassifier):
    """Support vector machine (:func:`cohstats.svm`) with the package's probability methods.

    Parameters mirror :func:`cohstats.svm` (libsvm's C-SVM by default, ``pi`` for the weighted
    SVM of [WSL]; K > 2 classes one-vs-one, ``decision_function`` then has one column per pair
    with ``decision_function_shape="ovo"``, or, by default, ``"ovr"``: the votes plus the
    pairwise decision values squashed into ``(-1/3, 1/3)``, as ``SVC``); ``prob_method`` ("platt", "sollich",
    "coherence", "bracket", ...) selects the probability method used by ``predict_proba``.

    Expected failure of ``check_estimator``: ``check_sample_weight_equivalence_on_dense_data``
    -- weights enter the dual exactly as replicated rows (``C_i = C w_i``), but SMO stops at the
    KKT tolerance ``tol`` and the iterates for replicated and weighted data differ below it, so
    outputs agree to about ``tol``, not to the check's 1e-7 (libsvm's ``SVC`` fails it too).
    """

    _expected_failed_checks = {
        "check_sample_weight_equivalence_on_dense_data": "SMO solutions agree only to the KKT tolerance, not to 1e-7",
    }

    _fit_function = ("cohstats.models.svm", "svm")

    def __init__(
        self,
        kernel="rbf",
        C=1.0,
        gamma="scale",
        sigma=None,
        degree=3,
        coef0=0.0,
        standardize=True,
        pi=None,
        tol=1e-3,
        max_iter=None,
        prob_method="platt",
        decision_function_shape="ovr",
    ):
        self.kernel = kernel
        self.decision_function_shape = decision_function_shape
        self.C = C
        self.gamma = gamma
        self.sigma = sigma
        self.degree = degree
        self.coef0 = coef0
        self.standardize = standardize
        self.pi = pi
        self.tol = tol
        self.max_iter = max_iter
        self.prob_method = prob_method

    _prob_params = ("prob_method", "decision_function_shape")

    def _prob_kwargs(self):
        return {"method": self.prob_method} if self.prob_method is not None else {}

    def decision_function(self, X):
        if self.decision_function_shape not in ("ovr", "ovo"):
            raise ValueError(f"decision_function_shape must be 'ovr' or 'ovo'; got {self.decision_function_shape!r}")
        F = super().decision_function(X)
        K = self.classes_.size
        if K <= 2 or self.decision_function_shape == "ovo":
            return F
        # one-vs-rest shape from the pairwise values: votes plus the summed pairwise values
        # mapped into (-1/3, 1/3), so that only ties in the votes are decided by them
        votes = np.zeros((F.shape[0], K))
        conf = np.zeros((F.shape[0], K))
        k = 0
        for i in range(K):
            for j in range(i + 1, K):
                conf[:, i] += F[:, k]
                conf[:, j] -= F[:, k]
                votes[:, i] += F[:, k] > 0
                votes[:, j] += F[:, k] <= 0
                k += 1
        return votes + conf / (3.0 * (np.abs(conf) + 1.0))


class GentleBoostCClassifier(_CohstatsClassifier):
    """GentleBoost.C (:func:`cohstats.gboost_c`): multiclass boosting with the coherence loss.

    Observation weights act exactly as replicated rows (histogram bin edges are computed from
    the positive-weight rows, with weights), so all of ``check_estimator`` passes.
    """

    _fit_function = ("cohstats.models.gboost", "gboost_c")

    def __init__(
        self,
        rho=1.0,
        n_trees=100,
        nodes=8,
        shrinkage=0.1,
        anneal=None,
        init_beta="uniform",
        min_node_size=1,
        max_bins=255,
        random_state=None,
    ):
        self.rho = rho
        self.n_trees = n_trees
        self.nodes = nodes
        self.shrinkage = shrinkage
        self.anneal = anneal
        self.init_beta = init_beta
        self.min_node_size = min_node_size
        self.max_bins = max_bins
        self.random_state = random_state


class CLearnClassifier(_CohstatsClassifier):
    """C-learning (:func:`cohstats.clearn`) at a single penalty ``lam``.

    ``lam`` is the ``lambda_`` of :func:`cohstats.clearn` -- the one place the package's
    vocabulary bends: scikit-learn treats attributes with a trailing underscore as fitted state
    (``check_is_fitted``), so an estimator parameter cannot be called ``lambda_``.

    Binary fits use the coherence C-loss (or ``loss="logistic"``/``"hhinge"`` for RLRM/HHSVM);
    K > 2 classes use the multicategory coherence loss. Probabilities come from the coherence
    inverse link. Tune ``lam`` with ``GridSearchCV`` (or use :func:`cohstats.cv`, which
    reuses one path for all folds).
    """

    _fit_function = ("cohstats.models.clearn", "clearn")
    _param_map = {"lam": "lambda_"}

    def __init__(
        self,
        loss="C",
        rho=1.0,
        u=1.0,
        alpha=1.0,
        lam=1e-3,
        kernel=None,
        gamma=None,
        sigma=None,
        degree=3,
        coef0=1.0,
        delta=2.0,
        standardize=True,
        tol=1e-7,
        max_iter=10000,
    ):
        self.loss = loss
        self.rho = rho
        self.u = u
        self.alpha = alpha
        self.lam = lam
        self.kernel = kernel
        self.gamma = gamma
        self.sigma = sigma
        self.degree = degree
        self.coef0 = coef0
        self.delta = delta
        self.standardize = standardize
        self.tol = tol
        self.max_iter = max_iter


class LambdaSVMClassifier(_CohstatsClassifier):
    """λ-SVM (:func:`cohstats.lamsvm`): multiclass hinge loss with variable positive margin.

    ``predict_proba`` is not offered: the λ-SVM loss identifies only the most likely class, and
    its probabilities are a post-hoc calibration fitted by internal cross-validation
    (``cohstats.lamsvm(...).predict(type="prob")``), which this wrapper leaves to the formula
    interface (or to scikit-learn's ``CalibratedClassifierCV``). ``C=None`` and ``tol=None`` are
    :func:`cohstats.lamsvm`'s defaults (cost 2 and tolerance 5e-3 on libsvm's scale, see
    ``cohstats.models.lamsvm.margin_scale``).

    Expected failure of ``check_estimator``: ``check_sample_weight_equivalence_on_dense_data``
    -- weights scale the box bounds exactly as replicated rows would (``C_i = C w_i``), but SMO
    stops at the KKT tolerance ``tol``, so replicated and weighted fits agree to that tolerance,
    not to 1e-7.
    """

    _fit_function = ("cohstats.models.lamsvm", "lamsvm")
    _expected_failed_checks = {
        "check_sample_weight_equivalence_on_dense_data": "SMO solutions agree only to the KKT tolerance, not to 1e-7",
    }

    def __init__(
        self,
        margin=None,
        C=None,
        kernel="rbf",
        gamma="scale",
        sigma=None,
        degree=3,
        coef0=1.0,
        standardize=True,
        tol=None,
        eps=1e-6,
        max_iter=None,
        time_limit=None,
        cache_size=200.0,
        shrinking=True,
        warn_calibration=True,
    ):
        self.margin = margin
        self.C = C
        self.kernel = kernel
        self.gamma = gamma
        self.sigma = sigma
        self.degree = degree
        self.coef0 = coef0
        self.standardize = standardize
        self.tol = tol
        self.eps = eps
        self.max_iter = max_iter
        self.time_limit = time_limit
        self.cache_size = cache_size
        self.shrinking = shrinking
        self.warn_calibration = warn_calibration

    def __getattribute__(self, name):
        if name in ("predict_proba", "predict_log_proba"):
            raise AttributeError(
                f"LambdaSVMClassifier has no {name}: the λ-SVM loss gives no "
                "class probabilities (cohstats.lamsvm(...).predict(type='prob') "
                "offers a post-hoc calibration)"
            )
        return super().__getattribute__(name)


class LUMClassifier(_CohstatsClassifier):
    """Large-margin unified machine (:func:`cohstats.lum`) at a single penalty ``lam``.

    ``prob_method="refit"`` (default) gives the refitted-LUM probabilities, ``"lum"`` the LUM
    inverse link.
    """

    _fit_function = ("cohstats.models.lum", "lum")
    _param_map = {"lam": "lambda_"}
    _prob_params = ("prob_method",)
    _binary_only = True

    def __init__(
        self,
        a=1000.0,
        c=0.0,
        lam=1e-3,
        alpha=0.0,
        kernel=None,
        sigma=None,
        gamma=None,
        standardize=True,
        tol=1e-7,
        max_iter=10000,
        prob_method="refit",
    ):
        self.a = a
        self.c = c
        self.lam = lam
        self.alpha = alpha
        self.kernel = kernel
        self.sigma = sigma
        self.gamma = gamma
        self.standardize = standardize
        self.tol = tol
        self.max_iter = max_iter
        self.prob_method = prob_method

    def _prob_kwargs(self):
        return {"method": self.prob_method} if self.prob_method is not None else {}
