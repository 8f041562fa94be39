"""The front door of every fit function: declared argument constraints, checked once.

A fit function is declared with :func:`fit_function`, which records what it can be tuned
along (:class:`FitSpec`) and checks its arguments against declared constraints *before* the
formula is parsed:

* an unknown keyword is a ``TypeError`` that names the package's spelling when the keyword is
  an old or foreign one (``T`` -> ``rho``, ``lamda`` -> ``lambda_``) or suggests the closest
  accepted names;
* a value of the wrong type is a ``TypeError``, a value out of range a ``ValueError``; both
  name the argument, the value and what is allowed.

Constraints are small objects (:class:`Real`, :class:`Integer`, :class:`Bool`,
:class:`Options`, :class:`Reals`, :class:`Callable`, :class:`AnyOf`, ...) in the spirit of
scikit-learn's parameter validation, so that every fit function states its arguments in one
table instead of hand-written checks.

Examples
--------
>>> spec = FitSpec("demo", path_args=("lambda_",))
>>> @fit_function(spec, params={"alpha": Real(0, 1), "standardize": Bool()},
...               renamed={"omega": "alpha"})
... def demo(formula, data=None, *, alpha=1.0, standardize=True):
...     return alpha
>>> demo("y ~ x", alpha=0.5)
0.5
>>> demo("y ~ x", omega=0.5)
Traceback (most recent call last):
...
TypeError: demo() got an unexpected keyword argument 'omega': it is called 'alpha' in cohstats
>>> demo("y ~ x", standardize="no")
Traceback (most recent call last):
...
TypeError: demo(standardize=...) must be True or False; got 'no' (str)
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import inspect
import math
import numbers
import os
import sys
import threading
import warnings
from dataclasses import dataclass, field

import numpy as np

__all__ = [
    "FitSpec",
    "Settings",
    "DESIGN_ARGS",
    "fit_function",
    "spec_of",
    "check_param",
    "check_options",
    "check_s",
    "check_kernel_args",
    "public_signature",
    "Constraint",
    "Real",
    "Integer",
    "Bool",
    "Options",
    "Reals",
    "Callable",
    "AnyOf",
    "NoneOr",
    "Anything",
    "RENAMED",
]

# Spellings users bring from other packages (or from earlier versions of this one), mapped to
# the package's vocabulary (CONTRIBUTING.md, "Vocabulary").
RENAMED = {
    "lam": "lambda_",
    "lamda": "lambda_",
    "lambda": "lambda_",
    "lambd": "lambda_",
    "Lambda": "lambda_",
    "lambdas": "lambda_",
    "l1_ratio": "alpha",
    "omega": "alpha",
    "T": "rho",
    "temperature": "rho",
    "H": "n_trees",
    "n_estimators": "n_trees",
    "n_iterations": "n_trees",
    "learning_rate": "shrinkage",
    "gamma_k": "gamma",
    "scale": "standardize",
    "standardise": "standardize",
    "normalize": "standardize",
    "class_weight": "weights",
    "sample_weight": "weights",
    "seed": "random_state",
    "cost": "C",
    "epsilon": "tol",
    "maxit": "max_iter",
    "thresh": "tol",
    "penalty.factor": "penalty_factor",
    "pf": "penalty_factor",
    "exclude": "penalty_factor",
    "kernel_width": "gamma",
    "sigma2": "sigma",
}


# ============================================================================ constraints
def _show(v) -> str:
    r = repr(v)
    if len(r) > 60:
        r = r[:57] + "..."
    return f"{r} ({type(v).__name__})"


def _is_real(v) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_))


class Constraint:
    """A declared constraint: ``check(where, value)`` returns the value or raises."""

    def describe(self) -> str:  # pragma: no cover - abstract
        raise NotImplementedError

    def ok(self, v) -> bool:  # pragma: no cover - abstract
        raise NotImplementedError

    def check(self, where: str, v):
        if not self.ok(v):
            self.fail(where, v)
        return v

    def fail(self, where: str, v):
        raise TypeError(f"{where} must be {self.describe()}; got {_show(v)}")


@dataclass(frozen=True)
class Anything(Constraint):
    def describe(self):
        return "any value"

    def ok(self, v):
        return True


@dataclass(frozen=True)
class Bool(Constraint):
    """``True`` or ``False`` (numpy booleans too); strings such as ``"no"`` are refused."""

    def describe(self):
        return "True or False"

    def ok(self, v):
        return isinstance(v, (bool, np.bool_))


@dataclass(frozen=True)
class Real(Constraint):
    """A finite real number in ``[low, high]`` (``closed`` says which ends are included)."""

    low: float | None = None
    high: float | None = None
    closed: str = "both"  # "both", "left", "right", "neither"
    allow_inf: bool = False

    def _interval(self) -> str:
        lo = "-inf" if self.low is None else f"{self.low:g}"
        hi = "inf" if self.high is None else f"{self.high:g}"
        lb = "[" if self.closed in ("both", "left") and self.low is not None else "("
        rb = "]" if self.closed in ("both", "right") and self.high is not None else ")"
        return f"{lb}{lo}, {hi}{rb}"

    def describe(self):
        return f"a real number in {self._interval()}"

    def in_range(self, x: float) -> bool:
        if math.isnan(x) or (math.isinf(x) and not self.allow_inf):
            return False
        if self.low is not None:
            if x < self.low or (x == self.low and self.closed in ("right", "neither")):
                return False
        if self.high is not None:
            if x > self.high or (x == self.high and self.closed in ("left", "neither")):
                return False
        return True

    def ok(self, v):
        return _is_real(v) and self.in_range(float(v))

    def fail(self, where, v):
        if not _is_real(v):
            raise TypeError(f"{where} must be {self.describe()}; got {_show(v)}")
        raise ValueError(f"{where} must be {self.describe()}; got {v!r}")


@dataclass(frozen=True)
class Integer(Constraint):
    """An integer (not a bool; an integral float such as ``10.0`` is accepted) in ``[low, high]``."""

    low: int | None = None
    high: int | None = None

    def describe(self):
        if self.low is not None and self.high is not None:
            return f"an integer in [{self.low}, {self.high}]"
        if self.low is not None:
            return f"an integer >= {self.low}"
        if self.high is not None:
            return f"an integer <= {self.high}"
        return "an integer"

    @staticmethod
    def _integral(v) -> bool:
        if isinstance(v, (bool, np.bool_)):
            return False
        if isinstance(v, numbers.Integral):
            return True
        return isinstance(v, numbers.Real) and math.isfinite(float(v)) and float(v).is_integer()

    def ok(self, v):
        if not self._integral(v):
            return False
        v = int(v)
        return (self.low is None or v >= self.low) and (self.high is None or v <= self.high)

    def fail(self, where, v):
        if not self._integral(v):
            raise TypeError(f"{where} must be {self.describe()}; got {_show(v)}")
        raise ValueError(f"{where} must be {self.describe()}; got {v!r}")


@dataclass(frozen=True)
class Options(Constraint):
    """One of a fixed set of values (strings are compared exactly)."""

    values: tuple = ()

    def __init__(self, *values):
        object.__setattr__(self, "values", tuple(values))

    def describe(self):
        return "one of " + ", ".join(repr(v) for v in self.values)

    def ok(self, v):
        try:
            return any(v is o or (type(v) is type(o) and v == o) for o in self.values)
        except Exception:  # noqa: BLE001 - an array compared with a string, etc.
            return False

    def fail(self, where, v):
        if isinstance(v, str):
            close = difflib.get_close_matches(v, [o for o in self.values if isinstance(o, str)], n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ValueError(f"{where} must be {self.describe()}; got {v!r}{hint}")
        raise TypeError(f"{where} must be {self.describe()}; got {_show(v)}")


@dataclass(frozen=True)
class Reals(Constraint):
    """A real number or a non-empty 1-D sequence of reals, each in the interval of ``each``."""

    each: Real = field(default_factory=Real)
    scalar_only: bool = False
    distinct: bool = False  # a sequence may not repeat a value

    def describe(self):
        what = self.each.describe()
        if self.scalar_only:
            return what
        return f"{what} or a non-empty 1-D sequence of {'distinct ' if self.distinct else ''}such numbers"

    def ok(self, v):
        if _is_real(v):
            return self.each.ok(v)
        if self.scalar_only or isinstance(v, (str, bytes, dict)):
            return False
        try:
            a = np.asarray(v)
        except Exception:  # noqa: BLE001
            return False
        if a.ndim != 1 or a.size == 0 or a.dtype.kind not in "iuf":
            return False
        if self.distinct and np.unique(a).size != a.size:
            return False
        return all(self.each.in_range(float(x)) for x in a)

    def fail(self, where, v):
        if _is_real(v):
            raise ValueError(f"{where} must be {self.describe()}; got {v!r}")
        try:
            a = np.asarray(v)
        except Exception:  # noqa: BLE001
            a = None
        if a is not None and a.ndim == 1 and a.size and a.dtype.kind in "iuf" and not self.scalar_only:
            bad = [float(x) for x in a if not self.each.in_range(float(x))]
            if not bad:  # a repeated value
                vals, counts = np.unique(a, return_counts=True)
                raise ValueError(f"{where} must be {self.describe()}; {float(vals[counts > 1][0])!r} is repeated")
            raise ValueError(f"{where} must be {self.describe()}; {bad[0]!r} is not")
        raise TypeError(f"{where} must be {self.describe()}; got {_show(v)}")


@dataclass(frozen=True)
class Callable(Constraint):
    def describe(self):
        return "a callable"

    def ok(self, v):
        return callable(v)


@dataclass(frozen=True)
class AnyOf(Constraint):
    """Any of several constraints (e.g. a number or one of a few strings)."""

    options: tuple = ()

    def __init__(self, *options):
        object.__setattr__(self, "options", tuple(options))

    def describe(self):
        return " or ".join(o.describe() for o in self.options)

    def ok(self, v):
        return any(o.ok(v) for o in self.options)

    def _flat(self):
        for o in self.options:
            if isinstance(o, AnyOf):
                yield from o._flat()
            else:
                yield o

    def fail(self, where, v):
        # a value of a type some option accepts: report that option's range error
        for o in self._flat():
            if isinstance(o, (Real, Integer, Reals)) and _is_real(v):
                raise ValueError(f"{where} must be {self.describe()}; got {v!r}")
            if isinstance(o, Options) and isinstance(v, str) and any(isinstance(x, str) for x in o.values):
                close = difflib.get_close_matches(v, [x for x in o.values if isinstance(x, str)], n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                raise ValueError(f"{where} must be {self.describe()}; got {v!r}{hint}")
        raise TypeError(f"{where} must be {self.describe()}; got {_show(v)}")


def NoneOr(c: Constraint) -> AnyOf:
    """``None`` or a value satisfying ``c``."""
    return AnyOf(Options(None), c)


def check_param(fn_name: str, name: str, value, constraint: Constraint):
    """Check one argument; the error names ``fn_name(name=...)``."""
    return constraint.check(f"{fn_name}({name}=...)", value)


# ============================================================================ FitSpec
@dataclass(frozen=True)
class FitSpec:
    """What a fit function can be tuned along, declared once (read by ``cv``/``tune``/``gkl``).

    Attributes
    ----------
    name : the fit function's name.
    path_args : arguments that take a *sequence* fitted as one path with warm starts
        (``"lambda_"`` for penalised fits; ``"C"``/``"margin"`` for the lambda-SVM). Cross-
        validation refits every fold along the full-data sequence through this argument, and
        ``tune(grid={arg: values})`` fits one path per combination of the other arguments.
    staged : the fitted sequence is reproduced by refitting with the same arguments (the
        boosting steps): one fit per fold scores every step from its staged predictions.
    multiclass : takes responses with more than two classes.
    probabilities : ``predict(type="prob")`` is available.
    default_measure : the measure ``cv`` and ``tune`` use when none is given: a proper scoring
        rule (``"deviance"``) for models that estimate probabilities, as cv.glmnet does;
        ``"class"`` where probabilities are a post-hoc calibration or can be exactly 0 or 1.
    """

    name: str
    path_args: tuple = ()
    staged: bool = False
    multiclass: bool = True
    probabilities: bool = True
    default_measure: str = "deviance"


def spec_of(fit_fn) -> FitSpec | None:
    """The declared :class:`FitSpec` of a fit function (None for a user's own function)."""
    return getattr(fit_fn, "spec", None)


def _unknown_keyword(fn_name: str, key: str, accepted) -> TypeError:
    accepted = sorted(accepted)
    if key in RENAMED and RENAMED[key] in accepted:
        return TypeError(
            f"{fn_name}() got an unexpected keyword argument {key!r}: it is called {RENAMED[key]!r} in cohstats"
        )
    close = difflib.get_close_matches(key, accepted, n=3, cutoff=0.6)
    hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else f"; accepted: {', '.join(accepted)}"
    return TypeError(f"{fn_name}() got an unexpected keyword argument {key!r}{hint}")


def check_options(where: str, options: dict, accepted) -> None:
    """Refuse keyword options that a method does not take (e.g. ``predict(foo=1)``)."""
    for k in options:
        if k not in accepted:
            if not accepted:
                raise TypeError(f"{where} got an unexpected keyword argument {k!r}: it takes no options")
            raise _unknown_keyword(where.rstrip("()"), k, accepted)


def check_s(where: str, s, what: str = "the fitted sequence"):
    """A path value ``s``: a finite real number (TypeError for strings etc.)."""
    if not _is_real(s):
        raise TypeError(f"{where}: s must be a number (a value of {what}) or None; got {_show(s)}")
    s = float(s)
    if not math.isfinite(s):
        raise ValueError(f"{where}: s must be finite; got {s!r}")
    if s < 0:  # penalties, costs, margins and step counts are never negative
        raise ValueError(f"{where}: s must be a nonnegative value of {what}; got {s!r}")
    return s


# Code objects of the wrappers below: formula.capture_context skips their frames so that a
# formula's transforms resolve in the user's scope, not in the wrapper's.
TRANSPARENT_CODES: set = set()

#: per-thread state of a fit running in a worker thread (the caller's formula context)
from .stopflag import FIT_THREAD, stop_flag  # noqa: E402, F401 - the fit's thread state lives there


class FitInterrupted(KeyboardInterrupt):
    """Raised inside a fit's worker thread when the caller pressed Ctrl-C: the fit stops."""


def stop_requested() -> bool:
    """True in a fit's worker thread once the caller interrupted it (Python-level loops of a
    long fit may check it between solver calls and stop)."""
    ev = getattr(FIT_THREAD, "stop", None)
    return ev is not None and ev.is_set()


def _stop_worker(t: threading.Thread, stop: threading.Event) -> None:
    """Ask the worker ``t`` to stop: the flag for loops that check it (also the array of
    :func:`stop_flag` that compiled solvers poll), and an asynchronous ``FitInterrupted`` that
    CPython raises at the thread's next Python instruction (a numba solver call in progress
    finishes first unless it polls the flag)."""
    import ctypes

    stop.set()
    flag = getattr(stop, "flag", None)
    if flag is not None:
        flag[0] = 1
    if t.is_alive() and t.ident is not None:
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(t.ident), ctypes.py_object(FitInterrupted))


#: the worker thread of the last interrupted fit (for tests and diagnostics)
last_interrupted: threading.Thread | None = None


def _interruptible() -> bool:
    return os.environ.get("COHSTATS_INTERRUPTIBLE", "1") != "0"


def run_interruptibly(fn, args, kwargs, name: str, verbose: bool = False):
    """Run a fit in a worker thread so that Ctrl-C returns control at once.

    The numba solvers release the GIL, so the main thread keeps waiting in short slices and
    takes a ``KeyboardInterrupt`` within about 0.1 s, however long the solver runs. The
    interrupted fit is then stopped: its flag (:func:`stop_requested`) is set and a
    ``FitInterrupted`` is raised in its thread at the next Python instruction, i.e. when the
    running numba call returns (a solver's path over lambda values stops at the next value);
    it only builds its own result object, so no state is left half-changed.
    Only calls from the main thread are moved (nested calls run directly); set the
    environment variable ``COHSTATS_INTERRUPTIBLE=0`` to run every fit in the calling thread.
    With ``verbose=True`` a ``tqdm.auto`` line (a terminal or a notebook) shows the fit's
    elapsed time while it runs; the numba solvers report no fraction done, so it is a clock,
    not a percentage.
    """
    if not _interruptible() or threading.current_thread() is not threading.main_thread():
        return fn(*args, **kwargs)
    frame = sys._getframe(2)  # the caller of the fit function's wrapper
    while frame is not None and frame.f_code in TRANSPARENT_CODES:
        frame = frame.f_back
    context = None
    if frame is not None:
        context = dict(frame.f_globals)
        context.update(frame.f_locals)
    box: dict = {}
    stop = threading.Event()

    def work():
        FIT_THREAD.context = context
        FIT_THREAD.stop = stop
        # warnings are recorded here and issued again in the caller's thread, at the caller's
        # line, so that the user's filters and the reported location are the usual ones
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                box["out"] = fn(*args, **kwargs)
            except BaseException as e:  # noqa: BLE001 - handed to the caller as it is
                box["err"] = e
        box["warnings"] = caught

    t = threading.Thread(target=work, name=f"cohstats-{name}", daemon=True)
    global last_interrupted
    bar = None
    try:
        t.start()
        if verbose:
            bar = progress_bar(None, f"{name}: fitting", True, bar_format="{desc} ({elapsed} elapsed)")
        while t.is_alive():
            t.join(0.05)
            if bar is not None:
                bar.refresh()
    except BaseException:
        last_interrupted = t
        _stop_worker(t, stop)
        raise
    finally:
        if bar is not None:
            bar.close()
    filename = frame.f_code.co_filename if frame is not None else "<cohstats>"
    lineno = frame.f_lineno if frame is not None else 0
    module = frame.f_globals.get("__name__", "cohstats") if frame is not None else "cohstats"
    registry = frame.f_globals.setdefault("__warningregistry__", {}) if frame is not None else None
    for w in box.get("warnings", ()):
        warnings.warn_explicit(w.message, w.category, filename, lineno, module=module, registry=registry)
    if "err" in box:
        err = box.pop("err")
        raise err.with_traceback(err.__traceback__)
    return box["out"]


# ----------------------------------------------------------------------------- progress bars
def in_notebook() -> bool:
    """True inside a Jupyter/IPython kernel (where stderr is not a terminal but bars render)."""
    if "ipykernel" not in sys.modules:
        return False
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover
        return False
    shell = get_ipython()
    return shell is not None and hasattr(shell, "kernel")


def progress_bar(total, desc: str, verbose: bool, **tqdm_kw):
    """A ``tqdm.auto`` bar (a widget in notebooks), or None when ``verbose`` is off or nobody is
    watching (stderr is neither a terminal nor a notebook)."""
    if not verbose or (total is not None and total <= 1):
        return None
    interactive = in_notebook() or (hasattr(sys.stderr, "isatty") and sys.stderr.isatty())
    if not interactive:
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:  # pragma: no cover
        return None
    kw = {} if in_notebook() else {"file": sys.stderr}
    return tqdm(total=total, desc=desc, leave=False, **kw, **tqdm_kw)


# ----------------------------------------------------------------------------- kernels
def check_kernel_args(kernel, *, gamma=None, sigma=None, degree=3, coef0=1.0, fn="clearn"):
    """Kernel arguments that the chosen kernel does not use are an error, not ignored.

    ``fn`` names the fit function in the message. Shared by the kernel fits and by the tuners'
    check of a kernel that depends on the rows only (:mod:`cohstats.tuning.shared`).
    """
    if gamma is not None and sigma is not None:
        raise ValueError(f"{fn}: give gamma or sigma (gamma = 1/sigma^2), not both")
    width = [k for k, v in (("gamma", gamma), ("sigma", sigma)) if v is not None]
    poly = [k for k, v, d in (("degree", degree, 3), ("coef0", coef0, 1.0)) if v != d]
    name = kernel if isinstance(kernel, str) or kernel is None else "callable"
    unused = []
    if name in (None, "linear", "callable"):
        unused = width + poly
    elif name == "rbf":
        unused = poly
    elif name == "poly":
        unused = [k for k in width if k == "sigma"]
    if unused:
        what = "the primal linear model (kernel=None)" if name is None else f"kernel={name!r}"
        raise ValueError(
            f"{fn}: {', '.join(unused)} given, but {what} does not use "
            f"{'it' if len(unused) == 1 else 'them'}; remove "
            f"{'it' if len(unused) == 1 else 'them'} or choose a kernel that does"
        )


def public_signature(fn, verbose: bool = True) -> inspect.Signature:
    """The signature a user sees (``help``, ``inspect.signature``): without the private keywords
    (``_gram``, ``_context``: the tuners' protocol, accepted but not part of the interface) and,
    with ``verbose``, showing the ``verbose`` keyword that every fit function's wrapper takes (a
    progress line)."""
    sig = inspect.signature(fn)
    params = [p for p in sig.parameters.values() if not p.name.startswith("_")]
    if verbose and "verbose" not in sig.parameters:
        verbose = inspect.Parameter("verbose", inspect.Parameter.KEYWORD_ONLY, default=False, annotation="bool")
        at = len(params) - (1 if params and params[-1].kind == inspect.Parameter.VAR_KEYWORD else 0)
        params.insert(at, verbose)
    return sig.replace(parameters=params)


# ============================================================================ settings
#: Arguments of a fit function that describe the data rather than the model: they go to the
#: :class:`~cohstats.formula.Design` (rows, their weights and offsets, the missing-value rule)
#: and are not part of its settings, so that one settings object refits any rows.
DESIGN_ARGS = ("weights", "subset", "na_action", "offset")


def _same(a, b) -> bool:
    if a is b:
        return True
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        return a.shape == b.shape and a.dtype.kind == b.dtype.kind and bool(np.array_equal(a, b, equal_nan=True))
    try:
        return bool(type(a) is type(b) and a == b)
    except Exception:  # noqa: BLE001 - values that do not compare (e.g. generators)
        return False


class Settings:
    """The validated arguments of one fit function call, frozen.

    :func:`fit_function` generates one subclass per fit function (``clearn.Settings``, a frozen
    dataclass named ``ClearnSettings``) from the function's signature: one field per keyword
    argument (same name, same default) except the data arguments of :data:`DESIGN_ARGS`, the
    formula and ``data``, ``verbose`` and private ``_``-keywords. The front door checks a call
    once against the declared constraints and builds the settings; the fit body, the fitted
    result (``fit.settings``), the tuners' refits, ``save``/``load`` and the scikit-learn
    wrappers read this one object.

    ``replace(**changes)`` is a new settings object with the changes checked like a call;
    ``as_dict()`` the fields as keyword arguments (``fit_fn(design, **s.as_dict())`` refits).
    Two settings are equal when they are of the same fit function and every field is equal
    (arrays element by element).
    """

    #: the fit function's name and its declared constraints (set on each generated class)
    fit_name: str = ""
    constraints: dict = {}
    renamed: dict = {}

    @classmethod
    def field_names(cls) -> tuple:  # in the order of the signature
        return cls.__dict__.get("_names") or tuple(f.name for f in dataclasses.fields(cls))

    @classmethod
    def build(cls, base=None, **given) -> "Settings":
        """Settings from keyword arguments (checked; unknown names refused as in a call),
        starting from ``base`` (default: the declared defaults)."""
        names = set(cls.field_names())
        for k in given:
            if k not in names:
                raise _refused(cls.fit_name, k, names, cls.renamed)
        for k, v in given.items():
            c = cls.constraints.get(k)
            if c is not None:
                c.check(f"{cls.fit_name}({k}=...)", v)
        if base is None:
            return cls(**given)
        if type(base) is not cls:
            raise TypeError(
                f"{cls.fit_name}(): the settings must be a {cls.__name__} (e.g. a {cls.fit_name} fit's "
                f".settings); got {_show(base)}"
            )
        return dataclasses.replace(base, **given) if given else base

    def replace(self, **changes) -> "Settings":
        """A copy with ``changes`` (checked against the declared constraints)."""
        return type(self).build(self, **changes)

    def as_dict(self) -> dict:  # the fields as keyword arguments
        return {k: getattr(self, k) for k in self.field_names()}

    def changed(self) -> dict:
        """The fields that differ from the declared defaults."""
        fields = dataclasses.fields(self)
        return {f.name: getattr(self, f.name) for f in fields if not _same(getattr(self, f.name), f.default)}

    def __eq__(self, other):
        if type(other) is not type(self):
            return NotImplemented
        return all(_same(getattr(self, k), getattr(other, k)) for k in self.field_names())

    __hash__ = None  # fields may be arrays

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={_show(v).rsplit(' (', 1)[0]}" for k, v in self.changed().items())
        return f"{type(self).__name__}({inner})"


def settings_class(name: str, sig: inspect.Signature, params: dict, module: str, renamed=None) -> type:
    """The frozen :class:`Settings` dataclass of a fit function with signature ``sig``."""
    fields = []
    for k, p in sig.parameters.items():
        if p.kind not in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD) or p.default is p.empty:
            continue
        if k in ("data", "verbose") or k in DESIGN_ARGS or k.startswith("_"):
            continue
        fields.append((k, object, dataclasses.field(default=p.default)))
    camel = "".join(part[:1].upper() + part[1:] for part in name.split("_"))
    cls = dataclasses.make_dataclass(f"{camel}Settings", fields, bases=(Settings,), frozen=True, eq=False, repr=False)
    cls.__module__ = module
    cls.fit_name = name
    cls._names = tuple(f.name for f in dataclasses.fields(cls))
    cls.constraints = {k: c for k, c in params.items() if k in cls.field_names()}
    cls.renamed = dict(renamed or {})
    cls.__doc__ = f"The frozen settings of one :func:`{name}` call (see :class:`cohstats.validation.Settings`)."
    return cls


def _refused(name: str, key: str, accepted, extra_renamed: dict) -> TypeError:
    if key in extra_renamed:
        v = extra_renamed[key]
        hint = (v if v.startswith(("the ", "it ")) else f"it is {v}") if " " in v else f"it is called {v!r} in cohstats"
        return TypeError(f"{name}() got an unexpected keyword argument {key!r}: {hint}")
    return _unknown_keyword(name, key, accepted)


def fit_function(spec: FitSpec, params: dict | None = None, renamed: dict | None = None):
    """Declare a fit function: its :class:`FitSpec` and the constraints of its arguments.

    The wrapper refuses unknown keywords (naming the package's spelling of an old or foreign
    one) and checks every argument given explicitly against ``params`` before the function
    body -- and so before the formula is parsed -- runs. Defaults are not re-checked.

    It generates the function's :class:`Settings` class (``fn.Settings``; ``fn.settings(**kw)``
    builds a checked instance) from the signature. Every call is validated into one settings
    object, which the returned result carries as ``fit.settings``; a function that declares the
    private keyword ``_settings`` receives it there (its other keywords carry the same values).
    A caller that already holds settings -- a tuner refitting a fit's ``fit.settings`` on other
    rows -- passes them as ``_settings=``, and only the keywords it changes are checked again.
    """
    params = dict(params or {})
    extra_renamed = dict(renamed or {})

    def deco(fn):
        sig = inspect.signature(fn)
        accepted = {
            k
            for k, p in sig.parameters.items()
            if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD) and not k.startswith("_")
        }
        own_verbose = "verbose" in sig.parameters
        accepted.add("verbose")  # every fit function takes verbose= (a progress line)
        # a function with **kwargs checks its extra keywords itself (e.g. gboost(loss="cart"))
        open_kw = any(p.kind == p.VAR_KEYWORD for p in sig.parameters.values())
        private = {k for k in sig.parameters if k.startswith("_")}
        takes_settings = "_settings" in sig.parameters
        unknown_params = set(params) - set(sig.parameters)
        if unknown_params:  # pragma: no cover - a declaration error
            raise AssertionError(f"{fn.__name__}: constraints for unknown arguments {unknown_params}")
        name = spec.name
        cls = settings_class(name, sig, params, fn.__module__, extra_renamed)
        fields = cls.field_names()

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            base = kwargs.pop("_settings", None)
            for k in kwargs:
                if k not in accepted and k not in private:
                    if open_kw and k not in extra_renamed and k not in RENAMED:
                        continue
                    raise _refused(name, k, accepted, extra_renamed)
            for k, v in kwargs.items():
                c = params.get(k)
                if c is not None:
                    c.check(f"{name}({k}=...)", v)
            verbose = kwargs.get("verbose", False) if own_verbose else kwargs.pop("verbose", False)
            Bool().check(f"{name}(verbose=...)", verbose)
            given = {k: kwargs[k] for k in fields if k in kwargs}
            settings = cls(**given) if base is None else cls.build(base, **given)
            kwargs.update(settings.as_dict())
            if takes_settings:
                kwargs["_settings"] = settings
            out = run_interruptibly(fn, args, kwargs, name, verbose=bool(verbose))
            # the result carries its settings; a result is only ever changed through its own
            # ``_derive`` (a copy with the given state), as everywhere else
            derive = getattr(out, "_derive", None)
            return out if derive is None else derive(settings=settings)

        TRANSPARENT_CODES.add(wrapper.__code__)
        wrapper.__signature__ = public_signature(fn)
        wrapper.spec = spec
        wrapper.params = params
        wrapper.Settings = cls
        wrapper.settings = cls.build
        return wrapper

    return deco
