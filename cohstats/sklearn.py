"""scikit-learn compatible estimators for every cohstats method.

Thin wrappers: each ``fit`` builds a :class:`~cohstats.formula.Design` from ``(X, y,
sample_weight)`` and calls the package's own fit function; ``predict``, ``predict_proba`` and
``decision_function`` call the fitted result's ``predict``. No numerical code lives here, so a
wrapper gives exactly the numbers of the formula interface.

A wrapper's constructor parameters are generated from its fit function's settings
(:class:`cohstats.validation.Settings`): the same names (``lambda_``, ``rho``, ``n_trees``, ...)
and the same defaults, except where a class states otherwise (``lambda_=1e-3`` for the
penalised fits: an estimator is one model, not a path), plus the few options of its own
(``prob_method``, ``decision_function_shape``). The fitted result, with its ``settings``, is
``estimator.fit_``.

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

import dataclasses
import inspect

import numpy as np

try:
    from sklearn.base import BaseEstimator, ClassifierMixin
    from sklearn.utils.multiclass import check_classification_targets
    from sklearn.utils.validation import check_is_fitted, validate_data
except ImportError as e:  # pragma: no cover - exercised only without scikit-learn
    raise ImportError("cohstats.sklearn needs scikit-learn: pip install 'cohstats[sklearn]'") from e

from .formula import build_design
from .models.clearn import clearn
from .models.gboost import gboost_c
from .models.lamsvm import lamsvm
from .models.lum import lum
from .models.svm import svm
from .validation import Options, check_options, check_param

__all__ = [
    "CLearnClassifier",
    "LUMClassifier",
    "LambdaSVMClassifier",
    "GentleBoostCClassifier",
    "WeightedSVMClassifier",
]


def _generated_init(params: dict):
    """An ``__init__`` taking exactly the keyword arguments ``params`` (name -> default) and
    storing each unchanged, as scikit-learn requires; its signature lists them."""

    def __init__(self, **kwargs):
        check_options(f"{type(self).__name__}()", kwargs, params)
        for k, default in params.items():
            setattr(self, k, kwargs.get(k, default))

    __init__.__signature__ = inspect.Signature(
        [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
        + [inspect.Parameter(k, inspect.Parameter.KEYWORD_ONLY, default=v) for k, v in params.items()]
    )
    return __init__


class _CohstatsClassifier(ClassifierMixin, BaseEstimator):
    """Shared plumbing: validation, label encoding, delegation to the fit function."""

    #: scikit-learn checks that are expected to fail, with the reason (see each class's docstring)
    _expected_failed_checks: dict = {}

    _fit_function = None  # the package's fit function
    _exclude: tuple[str, ...] = ()  # settings fields that are not parameters of the estimator
    _defaults: dict = {}  # defaults that differ from the fit function's (each class says why)
    _own_params: dict = {}  # options of the wrapper itself (name -> default), not fit arguments
    _binary_only = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        fields = {f.name: f.default for f in dataclasses.fields(cls._fit_function.Settings)}
        cls._fit_params = tuple(k for k in fields if k not in cls._exclude)
        params = {k: cls._defaults.get(k, fields[k]) for k in cls._fit_params}
        cls.__init__ = _generated_init({**params, **cls._own_params})

    def __sklearn_is_fitted__(self):
        return hasattr(self, "fit_")

    def _fit_kwargs(self) -> dict:
        return {k: getattr(self, k) for k in self._fit_params}

    def _prob_kwargs(self) -> dict:
        return {}

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
        self.fit_ = type(self)._fit_function(design, **self._fit_kwargs())
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

    Parameters are those of :func:`cohstats.svm`, with its defaults (libsvm's C-SVM, ``pi`` for
    the weighted SVM of [WSL]; K > 2 classes one-vs-one, ``decision_function`` then has one
    column per pair with ``decision_function_shape="ovo"``, or, by default, ``"ovr"``: the
    votes plus the pairwise decision values squashed into ``(-1/3, 1/3)``, as ``SVC``);
    ``prob_method`` ("platt", "sollich", "coherence", "bracket", ...; default as
    :func:`cohstats.svm`) selects the probability method used by ``predict_proba``.

    Expected failure of ``check_estimator``: ``check_sample_weight_equivalence_on_dense_data``
    -- weights enter the dual exactly as replicated rows (``C_i = C w_i``), but SMO stops at the
    KKT tolerance ``tol`` and the iterates for replicated and weighted data differ below it, so
    outputs agree to about ``tol``, not to the check's 1e-7 (libsvm's ``SVC`` fails it too).
    """

    _expected_failed_checks = {
        "check_sample_weight_equivalence_on_dense_data": "SMO solutions agree only to the KKT tolerance, not to 1e-7",
    }

    _fit_function = svm
    _own_params = {"decision_function_shape": "ovr"}

    def decision_function(self, X):
        check_param(type(self).__name__, "decision_function_shape", self.decision_function_shape, Options("ovr", "ovo"))
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

    _fit_function = gboost_c


class CLearnClassifier(_CohstatsClassifier):
    """C-learning (:func:`cohstats.clearn`) at a single penalty ``lambda_``.

    Parameters are those of :func:`cohstats.clearn` with its defaults, except ``lambda_``
    (default ``1e-3``: one model, not a path; ``nlambda`` and ``lambda_min_ratio`` are not
    parameters). Binary fits use the coherence C-loss (or ``loss="logistic"``/``"hhinge"`` for RLRM/HHSVM);
    K > 2 classes use the multicategory coherence loss. Probabilities come from the coherence
    inverse link. Tune ``lambda_`` with ``GridSearchCV`` (or use :func:`cohstats.cv`, which
    reuses one path for all folds).
    """

    _fit_function = clearn
    _exclude = ("nlambda", "lambda_min_ratio")
    _defaults = {"lambda_": 1e-3}


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

    _fit_function = lamsvm
    _expected_failed_checks = {
        "check_sample_weight_equivalence_on_dense_data": "SMO solutions agree only to the KKT tolerance, not to 1e-7",
    }

    def __getattribute__(self, name):
        if name in ("predict_proba", "predict_log_proba"):
            raise AttributeError(
                f"LambdaSVMClassifier has no {name}: the λ-SVM loss gives no "
                "class probabilities (cohstats.lamsvm(...).predict(type='prob') "
                "offers a post-hoc calibration)"
            )
        return super().__getattribute__(name)


class LUMClassifier(_CohstatsClassifier):
    """Large-margin unified machine (:func:`cohstats.lum`) at a single penalty ``lambda_``.

    Parameters are those of :func:`cohstats.lum` with its defaults, except ``lambda_`` (default
    ``1e-3``: one model, not a path; ``nlambda`` and ``lambda_min_ratio`` are not parameters).
    ``prob_method="refit"`` (default) gives the refitted-LUM probabilities, ``"lum"`` the LUM
    inverse link.
    """

    _fit_function = lum
    _exclude = ("nlambda", "lambda_min_ratio")
    _defaults = {"lambda_": 1e-3}
    _own_params = {"prob_method": "refit"}
    _binary_only = True

    def _prob_kwargs(self):
        return {"method": self.prob_method} if self.prob_method is not None else {}
