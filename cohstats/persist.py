"""Safe saving and loading of fits and tuner results: :func:`save`, :func:`load`.

``fit.save(path)`` (every :class:`~cohstats.results.Fit`, :class:`~cohstats.tuning.CVResult`,
:class:`~cohstats.tuning.TuneResult`, :class:`~cohstats.tuning.GKLResult`) writes a file that
``cohstats.load(path)`` reads back. Loading a file never executes code taken from the file, so a
file received from someone else is as safe to open as a CSV file.

Why not pickle, why not skops
-----------------------------
Unpickling calls whatever callable the file names (a crafted file runs a shell command), and
a damaged pickle either fails with an error from deep inside the unpickler or, worse, loads as
a different model. skops makes pickle-like loading safer with a list of trusted types, but it
restores objects through their ``__reduce__`` protocol: pandas objects (which every fit holds)
and formulaic's model specifications would need their internal reconstruction functions
trusted, which is exactly the kind of trust the format is meant to avoid; it is also a
dependency. A fit is plain data -- arrays, numbers, strings, tables -- so the format below
stores plain data and nothing else.

The format (version 1)
----------------------
A zip archive, every member stored uncompressed:

``meta.json``
    ``{"format": "cohstats-safe", "format_version": 1, "cohstats_version": ...,
    "object_type": "cohstats.models.clearn.CLearnFit", "numpy_version": ...,
    "pandas_version": ...}``.
``graph.json``
    The object graph as JSON: Python scalars and strings as themselves, every other value as a
    tagged node (``{"$": "list" | "dict" | "tuple" | "nd" | "series" | "frame" | "obj" ...}``).
    Objects that occur more than once (a design shared by the fold fits of a cross-validation)
    are stored once and referenced (``{"$": "ref", "@": n}``), so sharing and cycles survive.
``arrays/<k>.npy``
    Numeric, boolean, fixed-width string and datetime arrays in NumPy's ``.npy`` format,
    written and read without pickle. Object arrays (labels of mixed type) are stored
    element by element in the graph.

What is stored. Python ``None``/bool/int/float/complex/str/bytes, lists, tuples, sets, dicts
(any keys, order kept), NumPy arrays and scalars, pandas ``Index`` (range, categorical,
multi-level), ``Series`` and ``DataFrame`` (numeric, bool, object, categorical, string and
nullable dtypes), NumPy random generators and seed sequences (a ``random_state`` kept in a
fit's call), and instances of the classes named in :data:`SAFE_CLASSES` -- cohstats' own result
classes -- or registered in the running process with :func:`register_class` (a Fit subclass
of your own). An instance is stored as its attribute dictionary (and ``__slots__``) and
restored with ``object.__new__`` and a direct update of that dictionary: no constructor,
``__setstate__`` or other method of the class runs. The only functions a file may name are
cohstats' public fit functions (:data:`SAFE_FUNCTIONS`), stored by name; anything else -- a
user's custom kernel function, a lambda -- makes :func:`save` raise
:class:`UnsafeObjectError` ("cannot be saved in the safe format"). Refit such a model after
loading instead.

Formulas. A formula fit keeps formulaic's model specification, which holds the state of
stateful transforms (factor levels, ``center(x)`` means, ``poly`` coefficients). Instead of
serialising formulaic's internal objects, the file stores the formula's right-hand side and
the data columns it read (the training rows); :func:`load` rebuilds the specification with
formulaic from exactly those rows, which reproduces the same state and hence bitwise-identical
design matrices for new data. :func:`save` checks this before writing (the rebuilt
specification must give the saved design bit for bit). Because formulaic evaluates the
formula's Python expressions, the formula is checked first, on save and on load: only data
columns, literals, arithmetic and an explicit list of NumPy and formulaic functions
(``np.log``, ``C``, ``center``, ``poly``, ...) may appear; a formula calling a function from
the user's session cannot be saved.

Loading checks. A file that is not a zip archive, lacks or misreads ``meta.json``, names
another format or a newer format version, fails a CRC check, declares sizes larger than the
file itself, has a malformed array header, names a class or function outside the lists
above, or does not decode to the type it declares, raises :class:`FormatError`
("not a valid cohstats file: ..."). Sizes are checked against the file before anything is
allocated, so the memory a load takes is in proportion to the file's size (a crafted header
cannot make it allocate gigabytes).

Adding a class. A new result class (or one that moved) gets one line in :data:`SAFE_CLASSES`;
attributes need no registration. When a class moves, keep its old name as a key of
:data:`CLASS_ALIASES` so that older files still load.
"""

from __future__ import annotations

import ast
import importlib
import json
import math
import os
import re
import secrets
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = [
    "save",
    "load",
    "read_meta",
    "register_class",
    "FormatError",
    "UnsafeObjectError",
    "Persistable",
    "SAFE_CLASSES",
    "CLASS_ALIASES",
    "SAFE_FUNCTIONS",
    "FORMAT_NAME",
    "FORMAT_VERSION",
]

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


# ============================================================================ formulas
# Names a formula's Python expressions may use besides its data columns: formulaic's
# transforms (resolved by formulaic itself) and, under ``np.``/``numpy.``, these functions.
_FORMULA_NAMES = frozenset(
    {
        "C",
        "I",
        "Q",
        "center",
        "scale",
        "standardize",
        "poly",
        "bs",
        "cs",
        "cr",
        "cc",
        "lag",
        "log",
        "log2",
        "log10",
        "exp",
        "exp2",
        "exp10",
        "contr",
        "Treatment",
        "Sum",
        "Helmert",
        "Diff",
        "Poly",
        "np",
        "numpy",
        "True",
        "False",
        "None",
    }
)
_NUMPY_NAMES = frozenset(
    {
        "log",
        "log1p",
        "log2",
        "log10",
        "exp",
        "expm1",
        "exp2",
        "sqrt",
        "cbrt",
        "square",
        "abs",
        "absolute",
        "fabs",
        "sign",
        "floor",
        "ceil",
        "round",
        "rint",
        "trunc",
        "clip",
        "maximum",
        "minimum",
        "power",
        "sin",
        "cos",
        "tan",
        "arcsin",
        "arccos",
        "arctan",
        "arctan2",
        "sinh",
        "cosh",
        "tanh",
        "arcsinh",
        "arccosh",
        "arctanh",
        "where",
        "isnan",
        "isfinite",
        "logical_and",
        "logical_or",
        "logical_not",
        "pi",
        "e",
        "inf",
        "nan",
        "float64",
        "int64",
        "reciprocal",
        "hypot",
        "logaddexp",
        "heaviside",
        "deg2rad",
        "rad2deg",
    }
)
_CONTR_NAMES = frozenset(
    {
        "treatment",
        "sum",
        "helmert",
        "diff",
        "poly",
        "custom",
        "TreatmentContrasts",
        "SumContrasts",
        "HelmertContrasts",
        "DiffContrasts",
        "PolyContrasts",
    }
)
_SAFE_AST = (
    ast.Expression,
    ast.Call,
    ast.Name,
    ast.Load,
    ast.Constant,
    ast.Attribute,
    ast.keyword,
    ast.BinOp,
    ast.UnaryOp,
    ast.BoolOp,
    ast.Compare,
    ast.IfExp,
    ast.List,
    ast.Tuple,
    ast.operator,
    ast.unaryop,
    ast.boolop,
    ast.cmpop,
)


def _check_expression(expr: str, columns) -> None:
    """Refuse a formula expression that could do more than transform data columns."""
    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError as e:
        raise ValueError(f"expression {expr!r} is not valid Python: {e.msg}") from None
    for node in ast.walk(tree):
        if not isinstance(node, _SAFE_AST):
            raise ValueError(f"expression {expr!r} uses {type(node).__name__}, which a saved formula may not contain")
        if isinstance(node, ast.Name):
            if node.id not in columns and node.id not in _FORMULA_NAMES:
                raise ValueError(
                    f"expression {expr!r} uses {node.id!r}, which is neither a data "
                    "column nor a NumPy or formulaic transform"
                )
        elif isinstance(node, ast.Attribute):
            base = node.value
            ok = isinstance(base, ast.Name) and (
                (base.id in ("np", "numpy") and node.attr in _NUMPY_NAMES)
                or (base.id == "contr" and node.attr in _CONTR_NAMES)
            )
            if not ok:
                raise ValueError(
                    f"expression {expr!r} uses the attribute {node.attr!r}; only "
                    f"np.<function> ({', '.join(sorted(_NUMPY_NAMES)[:6])}, ...) "
                    "and contr.<contrast> may appear"
                )
        elif isinstance(node, ast.Call):
            if not isinstance(node.func, (ast.Name, ast.Attribute)) or (
                isinstance(node.func, ast.Name) and node.func.id in columns
            ):
                raise ValueError(f"expression {expr!r} calls something that is not a NumPy or formulaic function")
        elif isinstance(node, ast.Constant):
            v = node.value
            if not (v is None or isinstance(v, (bool, int, float, complex, str))):
                raise ValueError(f"expression {expr!r} holds a constant of type {type(v).__name__}")
            if isinstance(v, int) and not isinstance(v, bool) and abs(v) > 10**6:
                raise ValueError(f"expression {expr!r} holds the integer {v}, larger than 10**6")
            if isinstance(v, str) and len(v) > 1000:
                raise ValueError(f"expression {expr!r} holds a string longer than 1000 characters")
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
            r = node.right
            if isinstance(r, ast.UnaryOp) and isinstance(r.op, (ast.USub, ast.UAdd)):
                r = r.operand
            if not (
                isinstance(r, ast.Name)
                or (
                    isinstance(r, ast.Constant)
                    and isinstance(r.value, (int, float))
                    and not isinstance(r.value, bool)
                    and abs(r.value) <= 64
                )
            ):
                raise ValueError(f"expression {expr!r} raises to a power other than a column or a number of at most 64")


def _check_formula(rhs: str, columns) -> None:
    """Parse ``rhs`` (no evaluation) and check every factor it would evaluate."""
    from formulaic import Formula
    from formulaic.parser.types.factor import Factor

    if not isinstance(rhs, str) or len(rhs) > 100_000:
        raise ValueError("the formula must be a string of at most 100000 characters")
    columns = set(columns)
    try:
        formula = Formula(rhs)
    except Exception as e:
        msg = re.sub(r"\x1b\[[0-9;]*m", "", str(e)).split("\n")[0]
        raise ValueError(f"formula {rhs!r} does not parse: {msg}") from None
    if type(formula).__name__ != "SimpleFormula":
        raise ValueError(f"formula {rhs!r} has several parts ('~' or '|'); a saved right-hand side has one")
    for term in formula:
        for factor in term.factors:
            method = factor.eval_method
            if method == Factor.EvalMethod.LITERAL:
                continue
            if method == Factor.EvalMethod.LOOKUP:
                if factor.expr not in columns:
                    raise ValueError(f"formula term {factor.expr!r} is not a data column")
                continue
            if method != Factor.EvalMethod.PYTHON:
                raise ValueError(f"formula factor {factor.expr!r} has an unknown kind {method!r}")
            _check_expression(factor.expr, columns)


def _rebuild_spec(rhs: str, frame: pd.DataFrame):
    """formulaic's ModelSpec for ``rhs`` built on ``frame`` (after :func:`_check_formula`)."""
    import warnings

    from formulaic import model_matrix

    _check_formula(rhs, [c for c in frame.columns if isinstance(c, str)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        mm = model_matrix(rhs, frame.reset_index(drop=True), na_action="ignore")
    return mm, mm.model_spec


class _SpecBox:
    """A design's ModelSpec together with what rebuilds it (internal to the encoder)."""

    __slots__ = ("spec", "rhs", "frame", "design")

    def __init__(self, spec, rhs, frame, design):
        self.spec, self.rhs, self.frame, self.design = spec, rhs, frame, design


def _matrix_equal(a, b) -> bool:
    a = np.asarray(a)
    b = np.asarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


def _verify_spec_box(box: _SpecBox, where: str) -> None:
    """Before saving: the rebuilt specification must give the saved one's matrix bit for bit."""
    from .formula import _to_float_matrix

    d = box.design
    if not isinstance(box.rhs, str) or not isinstance(box.frame, pd.DataFrame):
        raise UnsafeObjectError(
            f"cannot be saved in the safe format: {where} is a formula design without the data "
            "its formula was evaluated on (built by an older cohstats?); refit it with this version"
        )
    try:
        mm_new, spec_new = _rebuild_spec(box.rhs, box.frame)
    except ValueError as e:
        raise UnsafeObjectError(
            f"cannot be saved in the safe format: the formula {d.formula!r} of {where}: {e}"
        ) from None
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mm_old = box.spec.get_model_matrix(box.frame.reset_index(drop=True))
    if list(mm_new.columns) != list(mm_old.columns) or not _matrix_equal(
        _to_float_matrix(mm_new, True), _to_float_matrix(mm_old, True)
    ):
        raise UnsafeObjectError(
            f"cannot be saved in the safe format: the formula {d.formula!r} of {where} does not "
            "rebuild the same design from its data (does it use a function from your session?)"
        )


# ============================================================================ encoding
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


class _Encoder:
    def __init__(self):
        self.arrays: list = []
        self.memo: dict = {}
        self.keep: list = []  # keeps encoded objects alive so that ids stay unique

    def fail(self, where, what):
        raise UnsafeObjectError(f"cannot be saved in the safe format: {where} is {what}")

    def _memo(self, obj, node: dict) -> dict:
        n = len(self.keep)
        self.memo[id(obj)] = n
        self.keep.append(obj)
        node["@"] = n
        return node

    def enc(self, obj, where: str, depth: int = 0):
        if depth > _MAX_DEPTH:
            self.fail(where, f"nested more than {_MAX_DEPTH} levels deep (a cycle through tuples?)")
        t = type(obj)
        if obj is None or t is bool or t is str:
            return obj
        if t is int:
            if abs(obj) >= _BIG_INT:
                self.fail(where, "an integer too large to store")
            return obj
        if t is float:
            return obj
        if isinstance(obj, str) and _qualname(t) == "formulaic.utils.variables.Variable":
            return str(obj)  # formulaic's variable names (a str subclass) are stored as strings
        ref = self.memo.get(id(obj))
        if ref is not None:
            return {"$": "ref", "@": ref}
        d = depth + 1
        if t is complex:
            return {"$": "complex", "v": [obj.real, obj.imag]}
        if t is bytes:
            return {"$": "bytes", "v": obj.hex()}
        if t is list:
            node = self._memo(obj, {"$": "list"})
            node["v"] = [self.enc(v, f"{where}[{i}]", d) for i, v in enumerate(obj)]
            return node
        if t is tuple:
            return {"$": "tuple", "v": [self.enc(v, f"{where}[{i}]", d) for i, v in enumerate(obj)]}
        if t is dict:
            node = self._memo(obj, {"$": "dict"})
            items = list(obj.items())
            node["k"] = [self.enc(k, f"{where} key {k!r}", d) for k, _ in items]
            node["v"] = [self.enc(v, f"{where}[{k!r}]", d) for k, v in items]
            return node
        if t in (set, frozenset):
            vals = list(obj)
            try:
                vals = sorted(vals)
            except TypeError:
                pass
            return {"$": t.__name__, "v": [self.enc(v, f"{where} element", d) for v in vals]}
        if t is range:
            return {"$": "range1", "v": [obj.start, obj.stop, obj.step]}
        if isinstance(obj, np.generic):
            return self.enc_npscalar(obj, where)
        if t is np.dtype or isinstance(obj, np.dtype):
            try:
                return {"$": "dtype", "v": _safe_dtype(obj).str}
            except (TypeError, ValueError):
                self.fail(where, f"the dtype {obj}")
        if t is np.ndarray:
            return self.enc_array(obj, where, d)
        if isinstance(obj, pd.Index):
            return self.enc_index(obj, where, d)
        if t is pd.Series:
            node = self._memo(obj, {"$": "series"})
            node["c"] = self.enc_column(obj.array, obj.dtype, where, d)
            node["index"] = self.enc(obj.index, f"{where}.index", d)
            node["name"] = self.enc(obj.name, f"{where}.name", d)
            if obj.attrs:
                node["attrs"] = self.enc(dict(obj.attrs), f"{where}.attrs", d)
            return node
        if isinstance(obj, pd.DataFrame):
            return self.enc_frame(obj, where, d)
        if t is pd.Categorical:
            node = self._memo(obj, {"$": "categorical"})
            node["c"] = self.enc_column(obj, obj.dtype, where, d)
            return node
        if isinstance(obj, _SpecBox):
            return self.enc_spec(obj, where, d)
        if t is np.random.Generator or t is np.random.RandomState:
            bg = obj.bit_generator if t is np.random.Generator else obj._bit_generator
            if type(bg).__name__ not in _BIT_GENERATORS or type(bg) is not getattr(np.random, type(bg).__name__):
                self.fail(where, f"a random generator driven by {type(bg).__name__}")
            node = self._memo(obj, {"$": "rng", "kind": t.__name__, "bitgen": type(bg).__name__})
            node["state"] = self.enc(bg.state, f"{where}.state", d)
            return node
        if t is np.random.SeedSequence:
            return {
                "$": "seedseq",
                "v": self.enc([obj.entropy, list(obj.spawn_key), obj.pool_size, obj.n_children_spawned], where, d),
            }
        name = _qualname(t)
        if _is_safe_class(name):
            return self.enc_object(obj, t, name, where, d)
        if callable(obj):
            return self.enc_function(obj, where)
        self.fail(where, f"a {name}, which is not plain data nor one of cohstats' result classes")

    def enc_npscalar(self, obj, where):
        dt = obj.dtype
        if dt.kind in _NP_SCALAR_KINDS:
            v = obj.item()
            if dt.kind == "f" and dt.itemsize > 8:
                self.fail(where, f"a NumPy scalar of dtype {dt}")
            return {"$": "np", "t": dt.str, "v": v}
        try:
            _safe_dtype(dt)
        except ValueError:
            self.fail(where, f"a NumPy scalar of dtype {dt}")
        k = len(self.arrays)
        self.arrays.append(np.asarray(obj))
        return {"$": "np0", "a": k}

    def enc_array(self, obj, where, d):
        if obj.dtype.hasobject:
            if obj.dtype != object:
                self.fail(where, f"an array of structured dtype {obj.dtype}")
            node = self._memo(obj, {"$": "ndo", "shape": list(obj.shape)})
            flat = obj.ravel(order="C")
            node["v"] = [self.enc(v, f"{where}[{i}]", d) for i, v in enumerate(flat)]
            return node
        try:
            _safe_dtype(obj.dtype)
        except ValueError:
            self.fail(where, f"an array of dtype {obj.dtype}")
        if obj.ndim > _MAX_NDIM:
            self.fail(where, f"an array with {obj.ndim} dimensions")
        node = self._memo(obj, {"$": "nd", "a": len(self.arrays)})
        self.arrays.append(obj)
        return node

    def enc_column(self, values, dtype, where, d):
        """The values of a 1-D pandas object (Index, Series, DataFrame column)."""
        if isinstance(dtype, pd.CategoricalDtype):
            cat = pd.Categorical(values)
            return {
                "$": "cat",
                "categories": self.enc(cat.categories, f"{where} categories", d),
                "codes": self.enc(np.asarray(cat.codes), f"{where} codes", d),
                "ordered": bool(cat.ordered),
            }
        if isinstance(dtype, np.dtype):
            arr = np.asarray(values, dtype=dtype)
            return {"$": "col", "v": self.enc(arr, where, d)}
        if str(dtype) in _PD_EXT_DTYPES:
            arr = np.asarray(pd.array(values, dtype=dtype).to_numpy(dtype=object, na_value=None), dtype=object)
            na = np.asarray(pd.isna(pd.array(values, dtype=dtype)))
            return {
                "$": "ext",
                "dtype": str(dtype),
                "v": self.enc(arr, where, d),
                "na": self.enc(na, f"{where} missing", d),
            }
        self.fail(where, f"a pandas column of dtype {dtype}")

    def enc_index(self, obj, where, d):
        t = type(obj)
        node = self._memo(obj, {"$": "index"})
        node["name"] = self.enc(obj.name, f"{where}.name", d) if t is not pd.MultiIndex else None
        if t is pd.RangeIndex:
            node["range"] = [int(obj.start), int(obj.stop), int(obj.step)]
        elif t is pd.MultiIndex:
            node["levels"] = [self.enc(lv, f"{where}.levels[{i}]", d) for i, lv in enumerate(obj.levels)]
            node["codes"] = [self.enc(np.asarray(c), f"{where}.codes[{i}]", d) for i, c in enumerate(obj.codes)]
            node["names"] = self.enc(list(obj.names), f"{where}.names", d)
        elif t in (pd.Index, pd.CategoricalIndex, pd.DatetimeIndex, pd.TimedeltaIndex):
            if t is pd.DatetimeIndex and obj.tz is not None:
                self.fail(where, "an index of time-zone aware dates")
            node["c"] = self.enc_column(obj.array, obj.dtype, where, d)
        else:
            self.fail(where, f"a pandas {t.__name__}")
        return node

    def enc_frame(self, obj, where, d):
        t = type(obj)
        if t is not pd.DataFrame and not _is_safe_class(_qualname(t)):
            self.fail(where, f"a {_qualname(t)} (a DataFrame subclass outside cohstats)")
        node = self._memo(obj, {"$": "frame"})
        if t is not pd.DataFrame:
            node["cls"] = _qualname(t)
            node["meta"] = {m: self.enc(getattr(obj, m, None), f"{where}.{m}", d) for m in getattr(t, "_metadata", [])}
        node["index"] = self.enc(obj.index, f"{where}.index", d)
        node["columns"] = self.enc(obj.columns, f"{where}.columns", d)
        node["cols"] = [
            self.enc_column(obj.iloc[:, j].array, obj.dtypes.iloc[j], f"{where} column {j}", d)
            for j in range(obj.shape[1])
        ]
        if obj.attrs:
            node["attrs"] = self.enc(dict(obj.attrs), f"{where}.attrs", d)
        return node

    def enc_object(self, obj, t, name, where, d):
        if issubclass(t, tuple):
            if not hasattr(t, "_fields"):
                self.fail(where, f"a tuple subclass {name}")
            return {"$": "nt", "cls": name, "v": [self.enc(v, f"{where}.{f}", d) for f, v in zip(t._fields, obj)]}
        node = self._memo(obj, {"$": "obj", "cls": name})
        state = dict(vars(obj)) if hasattr(obj, "__dict__") else {}
        hook = _SAVE_HOOKS.get(name)
        if hook is not None:
            state = hook(obj, state)
        node["d"] = {k: self.enc(v, f"{where}.{k}", d) for k, v in state.items() if type(k) is str}
        slots = {s: getattr(obj, s) for s in _slot_names(t) if hasattr(obj, s)}
        if slots:
            node["s"] = {k: self.enc(v, f"{where}.{k}", d) for k, v in slots.items()}
        return node

    def enc_function(self, obj, where):
        import cohstats

        name = getattr(obj, "__name__", None)
        if name in SAFE_FUNCTIONS and getattr(cohstats, name, None) is obj:
            return {"$": "fn", "name": name}
        self.fail(
            where,
            f"a Python callable ({obj!r}); only cohstats' own fit functions are "
            "saved (by name). Save the numbers you need, or refit after loading",
        )

    def enc_spec(self, box: _SpecBox, where, d):
        ref = self.memo.get(id(box.spec))
        if ref is not None:
            return {"$": "ref", "@": ref}
        _verify_spec_box(box, where)
        node = self._memo(box.spec, {"$": "modelspec", "rhs": box.rhs})
        node["frame"] = self.enc(box.frame, f"{where}.frame", d)
        return node


def _design_save(design, state: dict) -> dict:
    spec = state.get("spec")
    if spec is not None:
        state["spec"] = _SpecBox(spec, state.get("rhs"), state.get("frame"), design)
    return state


def _design_load(design) -> None:
    spec = design.__dict__.get("spec")
    if spec is None:
        return
    names = [c for c in spec.column_names if c != "Intercept"]
    if names != list(design.__dict__.get("xnames", [])):
        raise ValueError("the rebuilt formula gives columns that differ from the saved design's")


_SAVE_HOOKS = {"cohstats.formula.Design": _design_save}
_LOAD_HOOKS = {"cohstats.formula.Design": _design_load}


# ============================================================================ writing
def _write_npy(zf: zipfile.ZipFile, name: str, arr: np.ndarray) -> None:
    info = zipfile.ZipInfo(name, date_time=_ZIP_TIME)
    info.compress_type = zipfile.ZIP_STORED
    with zf.open(info, "w", force_zip64=arr.nbytes > (1 << 30)) as fh:
        np.lib.format.write_array(fh, arr, allow_pickle=False)


def _writestr(zf: zipfile.ZipFile, name: str, data: bytes) -> None:
    info = zipfile.ZipInfo(name, date_time=_ZIP_TIME)
    info.compress_type = zipfile.ZIP_STORED
    zf.writestr(info, data)


def save(obj, path) -> None:
    """Save a fit or tuner result to ``path`` in the safe format (see the module docstring).

    Parameters
    ----------
    obj : a :class:`~cohstats.results.Fit`, :class:`~cohstats.tuning.CVResult`,
        :class:`~cohstats.tuning.TuneResult` or :class:`~cohstats.tuning.GKLResult`.
    path : str or path-like. The file is written to a temporary name next to it and renamed,
        so an existing file is never left half-written.

    Raises
    ------
    UnsafeObjectError
        (a TypeError) if the object holds something that cannot be stored safely, such as a
        custom kernel function; the message names the attribute.
    """
    import cohstats

    if not _is_safe_class(_qualname(type(obj))):
        raise UnsafeObjectError(
            f"cannot be saved in the safe format: a {_qualname(type(obj))} is not a cohstats fit or tuner result"
        )
    enc = _Encoder()
    graph = enc.enc(obj, type(obj).__name__)
    meta = {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "cohstats_version": cohstats.__version__,
        "object_type": _qualname(type(obj)),
        "numpy_version": np.__version__,
        "pandas_version": pd.__version__,
        "n_arrays": len(enc.arrays),
    }
    path = Path(os.fspath(path))
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        with open(tmp, "xb") as fh, zipfile.ZipFile(fh, "w", zipfile.ZIP_STORED, allowZip64=True) as zf:
            _writestr(zf, "meta.json", json.dumps(meta, indent=1).encode("utf-8"))
            _writestr(zf, "graph.json", json.dumps(graph, separators=(",", ":"), allow_nan=True).encode("utf-8"))
            for k, arr in enumerate(enc.arrays):
                _write_npy(zf, f"arrays/{k}.npy", arr)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


# ============================================================================ reading
def _resolve_class(name):
    if not isinstance(name, str):
        raise ValueError("a class name is not a string")
    name = CLASS_ALIASES.get(name, name)
    if name in _REGISTERED:
        return _REGISTERED[name]
    if name not in SAFE_CLASSES:
        raise ValueError(f"it names the class {name[:200]!r}, which cohstats does not load")
    module, _, attr = name.rpartition(".")
    cls = getattr(importlib.import_module(module), attr, None)
    if not isinstance(cls, type):
        raise ValueError(f"the class {name!r} does not exist in this cohstats version")
    return cls


class _Decoder:
    def __init__(self, zf: zipfile.ZipFile, infos: dict):
        self.zf = zf
        self.infos = infos
        self.memo: dict = {}

    def array(self, k) -> np.ndarray:
        if type(k) is not int:
            raise ValueError("an array reference is not an integer")
        info = self.infos.get(f"arrays/{k}.npy")
        if info is None:
            raise ValueError(f"array {k} is missing")
        return _read_npy(self.zf, info)

    def register(self, node, obj):
        n = node.get("@")
        if n is not None:
            if type(n) is not int or n in self.memo:
                raise ValueError(f"bad or repeated object number {n!r}")
            self.memo[n] = obj
        return obj

    def dec(self, node, depth=0):
        if depth > _MAX_DEPTH:
            raise ValueError(f"the object graph is nested more than {_MAX_DEPTH} levels deep")
        if node is None or type(node) in (bool, int, float, str):
            return node
        if type(node) is not dict:
            raise ValueError(f"unexpected JSON value of type {type(node).__name__} in the graph")
        tag = node.get("$")
        fn = _DECODERS.get(tag) if isinstance(tag, str) else None
        if fn is None:
            raise ValueError(f"unknown node type {str(tag)[:80]!r}")
        return fn(self, node, depth + 1)

    def items(self, node, key="v"):
        v = node.get(key)
        if type(v) is not list:
            raise ValueError(f"node {node.get('$')!r} lacks its list {key!r}")
        return v

    # -- nodes
    def d_ref(self, node, depth):
        n = node.get("@")
        if type(n) is not int or n not in self.memo:
            raise ValueError(f"reference to unknown object {n!r}")
        return self.memo[n]

    def d_list(self, node, depth):
        out = self.register(node, [])
        out.extend(self.dec(v, depth) for v in self.items(node))
        return out

    def d_tuple(self, node, depth):
        return tuple(self.dec(v, depth) for v in self.items(node))

    def d_set(self, node, depth):
        return set(self.dec(v, depth) for v in self.items(node))

    def d_frozenset(self, node, depth):
        return frozenset(self.dec(v, depth) for v in self.items(node))

    def d_dict(self, node, depth):
        out = self.register(node, {})
        keys, vals = self.items(node, "k"), self.items(node, "v")
        if len(keys) != len(vals):
            raise ValueError("a dict has unequal numbers of keys and values")
        for k, v in zip(keys, vals):
            out[self.dec(k, depth)] = self.dec(v, depth)
        return out

    def d_complex(self, node, depth):
        v = self.items(node)
        if len(v) != 2 or not all(type(x) in (int, float) for x in v):
            raise ValueError("a complex number is malformed")
        return complex(v[0], v[1])

    def d_bytes(self, node, depth):
        v = node.get("v")
        if not isinstance(v, str):
            raise ValueError("a bytes value is malformed")
        return bytes.fromhex(v)

    def d_range1(self, node, depth):
        v = self.items(node)
        if len(v) != 3 or not all(type(x) is int for x in v):
            raise ValueError("a range is malformed")
        return range(*v)

    def d_np(self, node, depth):
        dt = _safe_dtype(_dtype_str(node.get("t")))
        v = node.get("v")
        if dt.kind not in _NP_SCALAR_KINDS or type(v) not in (bool, int, float):
            raise ValueError("a NumPy scalar is malformed")
        if dt.kind in "iu":
            info = np.iinfo(dt)
            if type(v) is not int or not (info.min <= v <= info.max):
                raise ValueError(f"integer {v!r} does not fit dtype {dt}")
        return np.array(v, dtype=dt)[()]

    def d_np0(self, node, depth):
        a = self.array(node.get("a"))
        if a.ndim != 0:
            raise ValueError("a NumPy scalar is stored as a non-scalar array")
        return a[()]

    def d_dtype(self, node, depth):
        return _safe_dtype(_dtype_str(node.get("v")))

    def d_nd(self, node, depth):
        return self.register(node, self.array(node.get("a")))

    def d_ndo(self, node, depth):
        shape = node.get("shape")
        if type(shape) is not list or len(shape) > _MAX_NDIM or not all(type(s) is int and s >= 0 for s in shape):
            raise ValueError("an object array has a malformed shape")
        vals = self.items(node)
        if math.prod(shape) != len(vals):
            raise ValueError("an object array's shape does not match its values")
        out = np.empty(shape, dtype=object)
        self.register(node, out)
        flat = out.reshape(-1)  # a view: out is C-contiguous
        for i, v in enumerate(vals):
            flat[i] = self.dec(v, depth)
        return out

    def column(self, node, depth):
        """(values, dtype) of a 1-D pandas object."""
        if type(node) is not dict:
            raise ValueError("a pandas column is malformed")
        tag = node.get("$")
        if tag == "col":
            v = self.dec(node.get("v"), depth)
            if not isinstance(v, np.ndarray) or v.ndim != 1:
                raise ValueError("a pandas column is not a 1-D array")
            return v, v.dtype
        if tag == "cat":
            cats = self.dec(node.get("categories"), depth)
            codes = self.dec(node.get("codes"), depth)
            if (
                not isinstance(cats, pd.Index)
                or not isinstance(codes, np.ndarray)
                or codes.ndim != 1
                or codes.dtype.kind not in "iu"
            ):
                raise ValueError("a categorical column is malformed")
            cat = pd.Categorical.from_codes(codes, categories=cats, ordered=bool(node.get("ordered")))
            return cat, cat.dtype
        if tag == "ext":
            name = node.get("dtype")
            if name not in _PD_EXT_DTYPES:
                raise ValueError(f"pandas dtype {str(name)[:40]!r} is not loadable")
            vals = self.dec(node.get("v"), depth)
            na = self.dec(node.get("na"), depth)
            if (
                not isinstance(vals, np.ndarray)
                or vals.ndim != 1
                or not isinstance(na, np.ndarray)
                or na.shape != vals.shape
                or na.dtype != bool
            ):
                raise ValueError("an extension column is malformed")
            dtype = pd.api.types.pandas_dtype(name)
            vals = vals.copy()
            vals[na] = dtype.na_value
            return pd.array(vals, dtype=dtype), dtype
        raise ValueError(f"unknown column node {str(tag)[:40]!r}")

    def d_index(self, node, depth):
        if "range" in node:
            r = node["range"]
            if type(r) is not list or len(r) != 3 or not all(type(x) is int for x in r) or r[2] == 0:
                raise ValueError("a range index is malformed")
            out = pd.RangeIndex(r[0], r[1], r[2], name=self.dec(node.get("name"), depth))
        elif "levels" in node:
            levels = [self.dec(v, depth) for v in self.items(node, "levels")]
            codes = [self.dec(v, depth) for v in self.items(node, "codes")]
            names = self.dec(node.get("names"), depth)
            out = pd.MultiIndex(levels=levels, codes=codes, names=names, verify_integrity=True)
        else:
            values, dtype = self.column(node.get("c"), depth)
            out = pd.Index(values, dtype=dtype, name=self.dec(node.get("name"), depth), copy=False)
        return self.register(node, out)

    def d_series(self, node, depth):
        values, dtype = self.column(node.get("c"), depth)
        index = self.dec(node.get("index"), depth)
        if not isinstance(index, pd.Index) or len(index) != len(values):
            raise ValueError("a Series' index does not match its values")
        out = pd.Series(values, index=index, dtype=dtype, name=self.dec(node.get("name"), depth), copy=False)
        if "attrs" in node:
            out.attrs = self.dec(node["attrs"], depth)
        return self.register(node, out)

    def d_categorical(self, node, depth):
        values, _ = self.column(node.get("c"), depth)
        return self.register(node, pd.Categorical(values))

    def d_frame(self, node, depth):
        index = self.dec(node.get("index"), depth)
        columns = self.dec(node.get("columns"), depth)
        cols = [self.column(c, depth) for c in self.items(node, "cols")]
        if not isinstance(index, pd.Index) or not isinstance(columns, pd.Index) or len(columns) != len(cols):
            raise ValueError("a DataFrame's columns do not match its data")
        if any(len(v) != len(index) for v, _ in cols):
            raise ValueError("a DataFrame column's length differs from its index")
        if cols:
            parts = [pd.Series(v, dtype=dt, copy=False) for v, dt in cols]
            out = pd.concat(parts, axis=1, ignore_index=True)
            out.index = index
            out.columns = columns
        else:
            out = pd.DataFrame(index=index, columns=columns)
        name = node.get("cls")
        if name is not None:
            cls = _resolve_class(name)
            if not issubclass(cls, pd.DataFrame):
                raise ValueError(f"{name!r} is not a DataFrame class")
            out = cls(out)
            meta = node.get("meta")
            if type(meta) is not dict:
                raise ValueError("a DataFrame subclass lacks its metadata")
            for m in getattr(cls, "_metadata", []):
                if m in meta:
                    object.__setattr__(out, m, self.dec(meta[m], depth))
        if "attrs" in node:
            out.attrs = self.dec(node["attrs"], depth)
        return self.register(node, out)

    def d_nt(self, node, depth):
        cls = _resolve_class(node.get("cls"))
        if not (issubclass(cls, tuple) and hasattr(cls, "_fields")):
            raise ValueError(f"{node.get('cls')!r} is not a named tuple")
        vals = [self.dec(v, depth) for v in self.items(node)]
        if len(vals) != len(cls._fields):
            raise ValueError(f"{node.get('cls')!r} needs {len(cls._fields)} fields; the file has {len(vals)}")
        return tuple.__new__(cls, vals)

    def d_obj(self, node, depth):
        name = node.get("cls")
        cls = _resolve_class(name)
        if issubclass(cls, (tuple, pd.DataFrame)):
            raise ValueError(f"{name!r} is stored as a plain object")
        obj = object.__new__(cls)
        self.register(node, obj)
        state = node.get("d")
        if type(state) is not dict:
            raise ValueError(f"the {name!r} object lacks its attributes")
        values = {k: self.dec(v, depth) for k, v in state.items()}
        if values:
            if not hasattr(obj, "__dict__"):
                raise ValueError(f"{name!r} objects have no attribute dictionary")
            obj.__dict__.update(values)
        slots = node.get("s", {})
        if type(slots) is not dict:
            raise ValueError(f"the {name!r} object's slots are malformed")
        allowed = set(_slot_names(cls))
        for k, v in slots.items():
            if k not in allowed:
                raise ValueError(f"{name!r} has no slot {k!r}")
            object.__setattr__(obj, k, self.dec(v, depth))
        hook = _LOAD_HOOKS.get(name)
        if hook is not None:
            hook(obj)
        return obj

    def d_fn(self, node, depth):
        name = node.get("name")
        if name not in SAFE_FUNCTIONS:
            raise ValueError(f"it names the function {str(name)[:200]!r}, which cohstats does not load")
        import cohstats

        return getattr(cohstats, name)

    def d_rng(self, node, depth):
        kind, name = node.get("kind"), node.get("bitgen")
        if kind not in ("Generator", "RandomState") or name not in _BIT_GENERATORS:
            raise ValueError("a random generator node is malformed")
        bg = getattr(np.random, name)()
        self.register(node, None)
        bg.state = self.dec(node.get("state"), depth)  # numpy validates the state
        out = np.random.Generator(bg) if kind == "Generator" else np.random.RandomState(bg)
        if "@" in node:
            self.memo[node["@"]] = out
        return out

    def d_seedseq(self, node, depth):
        v = self.dec(node.get("v"), depth)
        if (
            type(v) is not list
            or len(v) != 4
            or not all(type(x) is int for x in v[2:])
            or type(v[1]) is not list
            or not all(type(x) is int for x in v[1])
        ):
            raise ValueError("a seed sequence is malformed")
        entropy = v[0]
        if not (
            entropy is None or type(entropy) is int or (type(entropy) is list and all(type(x) is int for x in entropy))
        ):
            raise ValueError("a seed sequence's entropy is malformed")
        return np.random.SeedSequence(entropy, spawn_key=tuple(v[1]), pool_size=v[2], n_children_spawned=v[3])

    def d_modelspec(self, node, depth):
        rhs = node.get("rhs")
        frame = self.dec(node.get("frame"), depth)
        if not isinstance(rhs, str) or not isinstance(frame, pd.DataFrame):
            raise ValueError("a formula specification is malformed")
        _, spec = _rebuild_spec(rhs, frame)
        return self.register(node, spec)


_DECODERS = {name[2:]: fn for name, fn in vars(_Decoder).items() if name.startswith("d_")}


def _dtype_str(v) -> str:
    if not isinstance(v, str) or len(v) > 40:
        raise ValueError("a dtype is malformed")
    return v


def _read_npy(zf: zipfile.ZipFile, info: zipfile.ZipInfo) -> np.ndarray:
    """Read one ``.npy`` member with every size checked before allocating."""
    fmt = np.lib.format
    with zf.open(info) as fh:
        version = fmt.read_magic(fh)
        if version == (1, 0):
            shape, fortran, dtype = fmt.read_array_header_1_0(fh, max_header_size=_NPY_HEADER_MAX)
        elif version == (2, 0):
            shape, fortran, dtype = fmt.read_array_header_2_0(fh, max_header_size=_NPY_HEADER_MAX)
        else:
            raise ValueError(f"array {info.filename} has .npy version {version}")
        dtype = _safe_dtype(dtype)
        if type(shape) is not tuple or len(shape) > _MAX_NDIM or not all(type(s) is int and s >= 0 for s in shape):
            raise ValueError(f"array {info.filename} has a malformed shape")
        nbytes = math.prod(shape) * dtype.itemsize
        remaining = info.file_size - fh.tell()
        if nbytes != remaining:
            raise ValueError(f"array {info.filename} declares {nbytes} bytes of data but holds {remaining}")
        data = fh.read(nbytes)
        if len(data) != nbytes or fh.read(1):
            raise ValueError(f"array {info.filename} is truncated")
    arr = np.frombuffer(data, dtype=dtype) if nbytes else np.empty(0, dtype=dtype)
    arr = arr.reshape(shape, order="F" if fortran else "C")
    return arr.copy(order="F" if fortran else "C")


def _open_checked(fh, size: int):
    zf = zipfile.ZipFile(fh, "r")
    infos = {}
    entries = zf.infolist()
    if len(entries) > _MAX_MEMBERS:
        raise ValueError(f"the archive has {len(entries)} members")
    for info in entries:
        if not _MEMBER_RE.fullmatch(info.filename):
            raise ValueError(f"the archive holds an unexpected member {info.filename[:100]!r}")
        if info.filename in infos:
            raise ValueError(f"the archive holds {info.filename!r} twice")
        if info.compress_type != zipfile.ZIP_STORED or info.flag_bits & 0x1:
            raise ValueError(f"member {info.filename!r} is compressed or encrypted")
        if info.file_size != info.compress_size or info.header_offset + info.file_size > size:
            raise ValueError(f"member {info.filename!r} declares a size larger than the file")
        infos[info.filename] = info
    return zf, infos


def _read_member(zf, info, limit) -> bytes:
    if info.file_size > limit:
        raise ValueError(f"member {info.filename!r} is too large ({info.file_size} bytes)")
    with zf.open(info) as fh:
        data = fh.read(info.file_size)
        if len(data) != info.file_size or fh.read(1):
            raise ValueError(f"member {info.filename!r} is truncated")
    return data


def read_meta(path) -> dict:
    """The metadata of a saved file (format, versions, object type) without loading it."""
    with open(Path(os.fspath(path)), "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        try:
            _sniff(fh)
            zf, infos = _open_checked(fh, size)
            with zf:
                return _check_meta(zf, infos)
        except FormatError:
            raise
        except Exception as e:
            raise FormatError(f"not a valid cohstats file: {path}: {_reason(e)}") from None


def _sniff(fh) -> None:
    head = fh.read(4)
    fh.seek(0)
    if head == b"PK\x03\x04":
        return
    if head[:1] == b"\x80":
        raise ValueError(
            "it looks like a pickle file (older cohstats versions saved fits with "
            "pickle, which can run code when loaded). If you trust its source, load it "
            "with pickle.load and save it again with fit.save()"
        )
    raise ValueError("it is not a zip archive" + (" (the file is empty)" if not head else ""))


def _check_meta(zf, infos) -> dict:
    info = infos.get("meta.json")
    if info is None:
        raise ValueError("the archive has no meta.json")
    meta = json.loads(_read_member(zf, info, _MAX_META).decode("utf-8"))
    if type(meta) is not dict or meta.get("format") != FORMAT_NAME:
        raise ValueError(f"meta.json does not name the {FORMAT_NAME!r} format")
    version = meta.get("format_version")
    if type(version) is not int or version < 1:
        raise ValueError(f"meta.json has an invalid format_version {version!r}")
    if version > FORMAT_VERSION:
        import cohstats

        raise FormatError(
            f"not a valid cohstats file for this version: it has format version {version} "
            f"(written by cohstats {meta.get('cohstats_version')!s}); cohstats "
            f"{cohstats.__version__} reads format versions up to {FORMAT_VERSION}. "
            "Upgrade cohstats to load it"
        )
    if not isinstance(meta.get("object_type"), str):
        raise ValueError("meta.json does not name the object type")
    return meta


def _reason(e: BaseException) -> str:
    if isinstance(e, ValueError) and type(e) is ValueError:
        return str(e)
    return f"{type(e).__name__}: {e}"[:500]


def load(path, expected: type | None = None):
    """Load a fit or tuner result saved with ``save()``; never runs code from the file.

    Parameters
    ----------
    path : str or path-like.
    expected : class, optional. The loaded object must be an instance of it (``Fit.load``
        passes its class).

    Raises
    ------
    FormatError
        (a ValueError) "not a valid cohstats file: ..." for a foreign, truncated, damaged or
        unsafe file, or one written in a newer format version.
    TypeError
        if the file holds a different kind of object than ``expected``.
    OSError
        if the file cannot be opened.
    """
    path_s = os.fspath(path)
    with open(Path(path_s), "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        try:
            _sniff(fh)
            zf, infos = _open_checked(fh, size)
            with zf:
                meta = _check_meta(zf, infos)
                ginfo = infos.get("graph.json")
                if ginfo is None:
                    raise ValueError("the archive has no graph.json")
                graph = json.loads(_read_member(zf, ginfo, size).decode("utf-8"))
                obj = _Decoder(zf, infos).dec(graph)
            if _qualname(type(obj)) != CLASS_ALIASES.get(meta["object_type"], meta["object_type"]):
                raise ValueError(f"it declares a {meta['object_type']!r} but holds a {_qualname(type(obj))}")
        except FormatError:
            raise
        except (Exception, RecursionError) as e:
            raise FormatError(f"not a valid cohstats file: {path_s}: {_reason(e)}") from None
    if expected is not None and not isinstance(obj, expected):
        raise TypeError(f"{path_s} holds a {type(obj).__name__}, not a {expected.__name__}")
    return obj


class Persistable:
    """Mixin giving result classes ``save(path)`` and ``load(path)`` in the safe format."""

    def save(self, path) -> None:
        """Save to ``path`` in cohstats' safe format; :func:`cohstats.load` reads it back."""
        save(self, path)

    @classmethod
    def load(cls, path):
        """Load a file saved with :meth:`save`; it must hold an instance of this class."""
        return load(path, expected=cls)
