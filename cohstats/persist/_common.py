"""Shared pieces of :mod:`cohstats.persist`: the format's names, limits, allow-lists and errors."""

from __future__ import annotations

import re

import numpy as np

FORMAT_NAME = "cohstats-safe"
FORMAT_VERSION = 1

#: Qualified names of the classes a file may contain (one line per class).
SAFE_CLASSES = frozenset(
    {
        "cohstats.formula.Design",
        "cohstats.results.Summary",
        "cohstats.results.PathFrame",
        "cohstats.kernels.Kernel",
        "cohstats.losses.binary.MarginLoss",
        "cohstats.probability.PlattSigmoid",
        "cohstats.solvers.result.SolverResult",
        "cohstats.models.clearn.CLearnFit",
        "cohstats.models.lum.LumFit",
        "cohstats.models.lum.LumMultiFit",
        "cohstats.models.svm.SVMFit",
        "cohstats.models.svm.PsiFit",
        "cohstats.models.svm.MulticlassSVMFit",
        "cohstats.models.svm_approx.ApproxSVMFit",
        "cohstats.models.svm_approx.ApproxMulticlassSVMFit",
        "cohstats.models.lamsvm.ProbCalibration",
        "cohstats.models.lamsvm._LamSVMPath",
        "cohstats.models.gboost._StepPath",
        "cohstats.models.cart._PrunePath",
        "cohstats.models.lamsvm.LamSVMFit",
        "cohstats.models.gboost.GBoostFit",
        "cohstats.models.cart.CartFit",
        "cohstats.tuning.cv.CVResult",
        "cohstats.tuning.tune.TuneResult",
        "cohstats.tuning.gkl.GKLResult",
        "cohstats.tuning.measures._Measure",
        "cohstats.kernel_approx.FeatureMap",
        "cohstats.models.clearn.ClearnSettings",
        "cohstats.models.lum.LumSettings",
        "cohstats.models.svm.SvmSettings",
        "cohstats.models.svm.PsiLearnSettings",
        "cohstats.models.lamsvm.LamsvmSettings",
        "cohstats.models.gboost.GboostSettings",
        "cohstats.models.gboost.GboostCSettings",
        "cohstats.models.cart.CartSettings",
    }
)

#: Old qualified name -> current qualified name, for classes that moved.
CLASS_ALIASES: dict = {"cohstats.models.gboost.CartFit": "cohstats.models.cart.CartFit"}

_REGISTERED: dict = {}  # qualified name -> class, added by register_class() in this process


def register_class(cls: type) -> type:
    """Allow instances of ``cls`` (e.g. a Fit subclass of your own) in saved files.

    Only the running process is affected: a file can name a registered class but can never
    register one. Instances are stored as their attribute dictionaries and restored without
    calling any of the class's methods, as for cohstats' own classes. Usable as a decorator.
    """
    if not isinstance(cls, type):
        raise TypeError(f"register_class takes a class; got {type(cls).__name__}")
    _REGISTERED[_qualname(cls)] = cls
    return cls


def _is_safe_class(name: str) -> bool:
    return name in SAFE_CLASSES or name in _REGISTERED


#: Public functions of the ``cohstats`` namespace a file may name (stored as ``cohstats.<name>``).
SAFE_FUNCTIONS = frozenset({"clearn", "lum", "tune_lum", "svm", "psi_learn", "lamsvm", "gboost_c", "gboost", "cart"})

# ---------------------------------------------------------------------------- limits
_MAX_MEMBERS = 1_000_000
_BIG_INT = 10**4000  # JSON integers stay below Python's 4300-digit conversion limit
_MAX_META = 1 << 16
_MAX_DEPTH = 200
_MAX_NDIM = 32
_NPY_HEADER_MAX = 10_000
_ARRAY_KINDS = set("biufcUSMm")
_NP_SCALAR_KINDS = set("biuf")
_PD_EXT_DTYPES = frozenset(
    {
        "str",
        "string",
        "string[python]",
        "string[pyarrow]",
        "boolean",
        "Int8",
        "Int16",
        "Int32",
        "Int64",
        "UInt8",
        "UInt16",
        "UInt32",
        "UInt64",
        "Float32",
        "Float64",
    }
)
_BIT_GENERATORS = frozenset({"PCG64", "PCG64DXSM", "MT19937", "Philox", "SFC64"})
_MEMBER_RE = re.compile(r"meta\.json|graph\.json|arrays/(0|[1-9][0-9]{0,8})\.npy")
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)


class FormatError(ValueError):
    """The file is not a valid cohstats file (foreign, damaged, newer format, or unsafe)."""


class UnsafeObjectError(TypeError):
    """The object holds something the safe format cannot store (e.g. a user's function)."""


def _qualname(cls) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _slot_names(cls):
    names = []
    for k in cls.__mro__:
        s = k.__dict__.get("__slots__", ())
        if isinstance(s, str):
            s = (s,)
        names.extend(n for n in s if n not in ("__dict__", "__weakref__") and n not in names)
    return names


def _safe_dtype(dt) -> np.dtype:
    """``dt`` as a NumPy dtype if it is plain data (no objects, fields or sub-arrays)."""
    dt = np.dtype(dt)
    if dt.kind not in _ARRAY_KINDS or dt.fields is not None or dt.subdtype is not None or dt.hasobject:
        raise ValueError(f"dtype {dt!s} is not plain data")
    return dt
