"""Formula specifications in saved files: the static check and the bounded rebuild."""

from __future__ import annotations

import ast
import re

import numpy as np
import pandas as pd

from ._common import UnsafeObjectError

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


# Bounds of the static check (see _check_formula). A saved formula whose bounds exceed these is
# refused on save (UnsafeObjectError) and on load (FormatError).
_MAX_RHS = 100_000  # characters of the right-hand side
_MAX_INT = 10**6  # integer literals
_MAX_STR = 1000  # characters of one string literal
_MAX_ITEMS = 10_000  # characters of strings and elements of list/tuple values one expression builds
_MAX_INT_BITS = 4096  # bits of an integer an expression computes (64 ** 64 has 384)
_MAX_TERMS = 4096  # terms of the expanded formula
_MAX_ORDER = 16  # factors in one interaction term
_MAX_POWER_WORK = 4096  # terms ** exponent of a formula power: formulaic expands it in that many products
_DESIGN_FLOOR = 64 << 20  # bytes of rebuilt design always allowed (else: 4 x the file size)
_SECONDS_FLOOR = 30.0  # seconds a rebuild may take (plus one per MB of file)

_SPLINES = frozenset({"bs", "cs", "cr", "cc"})
_NUMERIC_TRANSFORMS = frozenset({"center", "scale", "standardize"})


class _Val:
    """What static analysis knows about a value an expression computes.

    ``kind``: ``"arr"`` (a column-length array), ``"int"``, ``"float"`` (a Python or NumPy
    number), ``"fixed"`` (a NumPy scalar: fixed width), ``"str"``, ``"seq"`` (a list or tuple),
    ``"other"`` (None, a bool, a function or contrast object). ``bits`` bounds an int's bit
    length, ``size`` the characters of a str or elements of a seq, ``numeric`` says an array
    holds numbers, ``distinct`` bounds the distinct values of a non-numeric array.
    """

    __slots__ = ("kind", "bits", "size", "numeric", "distinct")

    def __init__(self, kind, bits=0, size=0, numeric=True, distinct=1):
        self.kind, self.bits, self.size, self.numeric, self.distinct = kind, bits, size, numeric, distinct


class _Analyzer:
    """Static bound of one Python expression of a formula factor (nothing is evaluated)."""

    def __init__(self, expr, frame_info):
        self.expr = expr
        self.cols, self.nrows = frame_info
        self.items = 0

    def fail(self, what):
        expr = self.expr if len(self.expr) <= 80 else self.expr[:60] + "..." + self.expr[-15:]
        raise ValueError(f"expression {expr!r} {what}")

    def grow(self, n):
        self.items += n
        if self.items > _MAX_ITEMS:
            self.fail(f"builds strings or lists of more than {_MAX_ITEMS} elements in all")

    def column(self, name):
        numeric, distinct = self.cols[name]
        return _Val("arr", numeric=numeric, distinct=distinct)

    def visit(self, node) -> _Val:
        if not isinstance(node, _SAFE_AST):
            self.fail(f"uses {type(node).__name__}, which a saved formula may not contain")
        fn = getattr(self, "v_" + type(node).__name__, None)
        if fn is None:
            self.fail(f"uses {type(node).__name__}, which a saved formula may not contain")
        return fn(node)

    def v_Expression(self, node):
        return self.visit(node.body)

    def v_Constant(self, node):
        v = node.value
        if v is None or isinstance(v, bool):
            return _Val("other")
        if isinstance(v, int):
            if abs(v) > _MAX_INT:
                self.fail(f"holds the integer {v}, larger than {_MAX_INT}")
            return _Val("int", bits=v.bit_length())
        if isinstance(v, (float, complex)):
            return _Val("float")
        if isinstance(v, str):
            if len(v) > _MAX_STR:
                self.fail(f"holds a string longer than {_MAX_STR} characters")
            self.grow(len(v))
            return _Val("str", size=len(v))
        self.fail(f"holds a constant of type {type(v).__name__}")

    def v_Name(self, node):
        if node.id in self.cols:
            return self.column(node.id)
        if node.id not in _FORMULA_NAMES:
            self.fail(f"uses {node.id!r}, which is neither a data column nor a NumPy or formulaic transform")
        return _Val("other")

    def v_Attribute(self, node):
        base = node.value
        ok = isinstance(base, ast.Name) and (
            (base.id in ("np", "numpy") and node.attr in _NUMPY_NAMES)
            or (base.id == "contr" and node.attr in _CONTR_NAMES)
        )
        if not ok:
            self.fail(
                f"uses the attribute {node.attr!r}; only np.<function> "
                f"({', '.join(sorted(_NUMPY_NAMES)[:6])}, ...) and contr.<contrast> may appear"
            )
        return _Val("other")

    def v_List(self, node):
        vals = [self.visit(e) for e in node.elts]
        size = sum(v.size if v.kind == "seq" else 1 for v in vals)
        self.grow(len(vals))
        return _Val("seq", size=size)

    v_Tuple = v_List

    def v_UnaryOp(self, node):
        v = self.visit(node.operand)
        if isinstance(node.op, ast.Not):
            return _Val("other")
        if v.kind in ("str", "seq"):
            self.fail("applies a unary operator to a string or list")
        return v

    def v_BoolOp(self, node):
        vals = [self.visit(v) for v in node.values]
        return self._join(vals)

    def v_Compare(self, node):
        vals = [self.visit(node.left)] + [self.visit(c) for c in node.comparators]
        if any(v.kind == "arr" for v in vals):
            return _Val("arr", numeric=False, distinct=2)
        return _Val("other")

    def v_IfExp(self, node):
        self.visit(node.test)
        return self._join([self.visit(node.body), self.visit(node.orelse)])

    def _join(self, vals):
        kinds = {v.kind for v in vals}
        kind = kinds.pop() if len(kinds) == 1 else "mixed"
        return _Val(
            kind,
            bits=max(v.bits for v in vals),
            size=max(v.size for v in vals),
            numeric=all(v.numeric for v in vals),
            distinct=sum(v.distinct for v in vals),
        )

    def v_BinOp(self, node):
        a, b = self.visit(node.left), self.visit(node.right)
        op = node.op
        seqs = ("str", "seq", "mixed")
        if isinstance(op, ast.Mult) and (a.kind in seqs or b.kind in seqs):
            self.fail("repeats a string or list (sequence * number), which a saved formula may not do")
        if isinstance(op, ast.Mod) and a.kind in seqs:
            self.fail("formats a string with %, which a saved formula may not do")
        if a.kind == "arr" or b.kind == "arr":
            other = b if a.kind == "arr" else a
            arr = a if a.kind == "arr" else b
            if other.kind == "arr":
                numeric = a.numeric and b.numeric
                distinct = a.distinct * b.distinct
            else:
                numeric = arr.numeric and other.kind != "str"
                distinct = arr.distinct
            return _Val("arr", numeric=numeric, distinct=min(distinct, max(self.nrows, 1)))
        if a.kind in ("str", "seq") or b.kind in ("str", "seq"):
            if isinstance(op, ast.Add) and a.kind == b.kind:
                self.grow(a.size + b.size)
                return _Val(a.kind, size=a.size + b.size)
            self.fail(f"applies {type(op).__name__} to a string or list")
        if a.kind == "fixed" or b.kind == "fixed":
            return _Val("fixed")
        if a.kind == "float" or b.kind == "float" or isinstance(op, ast.Div):
            return _Val("float")
        # Python integers (bools, None and friends count as small integers): bound the bit length
        ab, bb = max(a.bits, 1), max(b.bits, 1)
        if isinstance(op, ast.Pow):
            bits = ab * (1 << min(bb, 64)) if bb < 64 else None
        elif isinstance(op, ast.LShift):
            bits = ab + (1 << bb) if bb < 64 else None
        elif isinstance(op, ast.Mult):
            bits = ab + bb
        elif isinstance(op, (ast.Add, ast.Sub)):
            bits = max(ab, bb) + 1
        else:  # floor division, modulo, right shift, bitwise operators
            bits = max(ab, bb)
        if bits is None or bits > _MAX_INT_BITS:
            self.fail(f"computes an integer of more than {_MAX_INT_BITS} bits (powers or shifts of integers)")
        return _Val("int", bits=bits)

    def v_Call(self, node):
        func = node.func
        if not isinstance(func, (ast.Name, ast.Attribute)) or (isinstance(func, ast.Name) and func.id in self.cols):
            self.fail("calls something that is not a NumPy or formulaic function")
        self.visit(func)
        if any(k.arg is None for k in node.keywords):
            self.fail("passes **keyword arguments")
        args = [self.visit(a) for a in node.args]
        kwargs = {k.arg: self.visit(k.value) for k in node.keywords}
        name = func.id if isinstance(func, ast.Name) else func.attr
        if isinstance(func, ast.Name) and name == "Q":
            if len(node.args) != 1 or not isinstance(node.args[0], ast.Constant) or node.args[0].value not in self.cols:
                self.fail("uses Q() with something other than the name of a data column")
            return self.column(node.args[0].value)
        arrs = [v for v in list(args) + list(kwargs.values()) if v.kind == "arr"]
        if isinstance(func, ast.Attribute):
            if func.value.id == "contr":
                return _Val("other")
            if not arrs:
                return _Val("fixed")
            if name == "where" and len(args) == 3:
                return self._join([args[1], args[2]]) if args[1].kind == args[2].kind == "arr" else _Val("arr")
            return _Val("arr")
        if name in ("I", "C", "lag") and args:
            return args[0]
        if name in _NUMERIC_TRANSFORMS or name in _SPLINES or name == "poly":
            return _Val("arr")
        return _Val("other") if not arrs else arrs[0]

    # -- the factor's number of design columns
    def width(self, tree) -> int:
        """An upper bound of the columns the factor contributes (before interactions)."""
        body = tree.body
        val = self.visit(tree)
        if isinstance(body, ast.Call) and isinstance(body.func, ast.Name):
            name = body.func.id
            if name == "poly" or name in _SPLINES:
                return self._basis_width(body, name)
        if val.kind != "arr":
            return 1
        return 1 if val.numeric else max(1, min(val.distinct, self.nrows))

    def _basis_width(self, call, name) -> int:
        """``poly(x, degree)`` and splines: their further arguments are literals (numbers are
        column counts, lists are knots), each count at most the number of rows."""
        width = 1
        for node in list(call.args[1:]) + [k.value for k in call.keywords]:
            if isinstance(node, (ast.List, ast.Tuple)) and all(isinstance(e, ast.Constant) for e in node.elts):
                width += len(node.elts)
                continue
            if not isinstance(node, ast.Constant):
                self.fail(f"passes {name}() an argument that is not a literal number, string or list")
            v = node.value
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                if name == "poly" and (not float(v).is_integer() or not 1 <= v <= self.nrows):
                    self.fail(f"asks for a polynomial of degree {v!r}; the data has {self.nrows} rows")
                if not 0 <= v <= self.nrows + 3:
                    self.fail(f"asks for {v!r} basis functions; the data has {self.nrows} rows")
                width += int(v)
        return width


def _check_expression(expr: str, frame_info) -> int:
    """Refuse a formula expression that could do more than transform data columns, or whose
    evaluation is not bounded by the data's size; return its bound on design columns."""
    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError as e:
        raise ValueError(f"expression {expr!r} is not valid Python: {e.msg}") from None
    return _Analyzer(expr, frame_info).width(tree)


class _Bound:
    """Bounds of a formula (sub)expression's expanded terms: their number, their largest
    order (factors in one term), the sum and largest of their widths, the product of every
    factor's width and the number of factors."""

    __slots__ = ("terms", "order", "width", "widest", "prod", "factors")

    def __init__(self, terms, order, width, widest, prod, factors):
        self.terms, self.order, self.width = terms, order, width
        self.widest, self.prod, self.factors = widest, prod, factors


def _frame_info(frame: pd.DataFrame):
    """Per column: (numeric?, distinct values) -- what the static check needs of the data."""
    cols = {}
    for c in frame.columns:
        if not isinstance(c, str):
            continue
        s = frame[c]
        if isinstance(s.dtype, pd.CategoricalDtype):
            cols[c] = (False, max(1, len(s.cat.categories)))
        elif pd.api.types.is_numeric_dtype(s.dtype) and not pd.api.types.is_bool_dtype(s.dtype):
            cols[c] = (True, 1)
        else:
            cols[c] = (False, max(1, int(s.nunique(dropna=False))))
    return cols, len(frame)


def _formula_bound(node, rhs, frame_info) -> _Bound:
    """Bound the expansion of formulaic's syntax tree ``node`` without expanding it."""
    from formulaic.parser.types import ASTNode, Token

    if isinstance(node, Token):
        kind = node.kind.value
        if kind == "value":
            return _Bound(1, 0, 1, 1, 1, 0)
        if kind == "name":
            if node.token not in frame_info[0]:
                raise ValueError(f"formula term {node.token!r} is not a data column")
            w = 1 if frame_info[0][node.token][0] else frame_info[0][node.token][1]
        elif kind == "python":
            w = _check_expression(node.token, frame_info)
        else:
            raise ValueError(f"formula {rhs!r} holds a token {node.token!r} of kind {kind!r}")
        return _Bound(1, 1, w, w, w, 1)
    if not isinstance(node, ASTNode):
        raise ValueError(f"formula {rhs!r} does not parse into terms")
    sym = node.operator.symbol
    if sym in ("~", "|"):
        raise ValueError(f"formula {rhs!r} has several parts ('~' or '|'); a saved right-hand side has one")
    if sym == ".":
        raise ValueError(f"formula {rhs!r} uses '.'; a saved right-hand side names its columns")
    if sym in ("**", "^"):
        return _power_bound(node, rhs, frame_info)
    args = [_formula_bound(a, rhs, frame_info) for a in node.args]
    if len(args) == 1 or sym == "-":  # unary + and -, and subtraction, only remove terms
        return args[0]
    a, b = args
    if sym == "+":
        return _Bound(a.terms + b.terms, max(a.order, b.order), a.width + b.width, max(a.widest, b.widest),
                      a.prod * b.prod, a.factors + b.factors)  # fmt: skip
    inter = _Bound(a.terms * b.terms, a.order + b.order, a.width * b.width, a.widest * b.widest,
                   a.prod * b.prod, a.factors + b.factors)  # fmt: skip
    if sym == ":":
        return inter
    if sym == "*":
        return _Bound(a.terms + b.terms + inter.terms, inter.order, a.width + b.width + inter.width,
                      inter.widest, inter.prod, inter.factors)  # fmt: skip
    if sym in ("/", "in"):  # a / b: a's terms, then every factor of a with each term of b
        return _Bound(a.terms + b.terms, a.factors + b.order, a.width + a.prod * b.width,
                      max(a.widest, a.prod * b.widest), inter.prod, inter.factors)  # fmt: skip
    raise ValueError(f"formula {rhs!r} uses the operator {sym!r}, which a saved formula may not contain")


def _power_bound(node, rhs, frame_info) -> _Bound:
    from math import comb

    from formulaic.parser.types import Token

    base, exp = node.args
    b = _formula_bound(base, rhs, frame_info)
    e = exp.token if isinstance(exp, Token) else None
    if e is None or not re.fullmatch(r"[0-9]{1,3}", e.strip()):
        raise ValueError(f"formula {rhs!r} raises terms to a power that is not a small whole number")
    e = int(e)
    if e < 1 or b.terms**e > _MAX_POWER_WORK:
        raise ValueError(
            f"formula {rhs!r} raises {b.terms} term(s) to the power {e}: formulaic's expansion takes "
            f"{b.terms}**{e} products, and a saved formula allows at most {_MAX_POWER_WORK} "
            "(a power above the number of terms adds no terms: lower it)"
        )
    terms = sum(comb(b.terms, j) for j in range(1, e + 1))
    width = min(  # two upper bounds of the widths of every product of j distinct terms
        sum(b.width**j for j in range(1, e + 1)),
        sum(comb(b.terms, j) * b.widest**j for j in range(1, e + 1)),
    )
    return _Bound(terms, min(e * b.order, b.factors), width, min(b.widest**e, b.prod), b.prod, b.factors)


def _check_formula(rhs: str, frame: pd.DataFrame, budget: int | None = None) -> int:
    """Check the saved right-hand side ``rhs`` against the stored training ``frame`` without
    evaluating or expanding it; return a bound of the bytes of its design matrix.

    The check parses ``rhs`` into formulaic's syntax tree (no term expansion) and bounds every
    literal, string and list built, integer power and shift, formula power, ``poly`` degree and
    spline size, the number of expanded terms and their order, and the design's width from the
    stored columns (a factor's columns: 1 for numbers, its distinct values for categories).
    The design bound (rows x columns x 8 bytes) must not exceed ``budget``.
    """
    from formulaic.parser import DefaultFormulaParser

    if not isinstance(rhs, str) or len(rhs) > _MAX_RHS:
        raise ValueError(f"the formula must be a string of at most {_MAX_RHS} characters")
    info = _frame_info(frame)
    try:
        tree = DefaultFormulaParser().get_ast(rhs)
    except Exception as e:
        msg = re.sub(r"\x1b\[[0-9;]*m", "", str(e)).split("\n")[0]
        raise ValueError(f"formula {rhs!r} does not parse: {msg}") from None
    if tree is None:
        raise ValueError(f"formula {rhs!r} is empty")
    b = _formula_bound(tree, rhs, info)
    if b.terms > _MAX_TERMS or b.order > _MAX_ORDER:
        raise ValueError(
            f"formula {rhs!r} expands to up to {b.terms} terms of up to {b.order} factors; a saved "
            f"formula has at most {_MAX_TERMS} terms of at most {_MAX_ORDER} factors"
        )
    nbytes = max(info[1], 1) * max(b.width, 1) * 8  # the tree holds the intercept
    if budget is not None and nbytes > budget:
        raise ValueError(
            f"formula {rhs!r} may build a design of {info[1]} rows x {b.width} columns "
            f"({nbytes / 2**20:.0f} MB), more than the {budget / 2**20:.0f} MB this file allows"
        )
    return nbytes


def _design_budget(file_bytes: int) -> int:
    return max(_DESIGN_FLOOR, 4 * int(file_bytes))


class _TimeLimit:
    """Raise ``TimeoutError`` in this thread's Python code once ``seconds`` have passed.

    A ``sys.settrace`` hook that looks at the clock on every Python call (not on every line);
    it stands aside when a tracer (a debugger, coverage) is already installed.
    """

    def __init__(self, seconds: float):
        self.seconds = seconds

    def _trace(self, frame, event, arg):
        import time

        if time.perf_counter() > self.deadline:
            raise TimeoutError(f"rebuilding the formula took more than {self.seconds:.0f} s")
        return None

    def __enter__(self):
        import sys
        import time

        self.deadline = time.perf_counter() + self.seconds
        self.active = sys.gettrace() is None
        if self.active:
            sys.settrace(self._trace)
        return self

    def __exit__(self, *exc):
        import sys

        if self.active:
            sys.settrace(None)
        return False


def _rebuild_spec(rhs: str, frame: pd.DataFrame, file_bytes: int = 0):
    """formulaic's ModelSpec for ``rhs`` built on ``frame``, after :func:`_check_formula`.

    The budget grows with ``file_bytes`` (the saved file's size; on save, the saved design's):
    the design bound may take ``max(64 MB, 4 * file_bytes)`` and the rebuild
    ``30 s + 1 s per MB``.
    """
    import warnings

    from formulaic import model_matrix

    _check_formula(rhs, frame, _design_budget(file_bytes))
    try:
        with _TimeLimit(_SECONDS_FLOOR + file_bytes / 2**20), warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            mm = model_matrix(rhs, frame.reset_index(drop=True), na_action="ignore")
    except TimeoutError as e:
        raise ValueError(str(e)) from None
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
    from ..formula import _to_float_matrix

    d = box.design
    if not isinstance(box.rhs, str) or not isinstance(box.frame, pd.DataFrame):
        raise UnsafeObjectError(
            f"cannot be saved in the safe format: {where} is a formula design without the data "
            "its formula was evaluated on (built by an older cohstats?); refit it with this version"
        )
    try:
        X = getattr(d, "X", None)
        mm_new, spec_new = _rebuild_spec(box.rhs, box.frame, X.nbytes if isinstance(X, np.ndarray) else 0)
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
