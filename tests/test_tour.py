"""The tour: every public fit function against awkward and bad inputs, as a new user tries them.

A generated product of

* every public fit function (``clearn``, ``lum``, ``svm``, ``lamsvm``, ``psi_learn``,
  ``gboost_c``, ``gboost``, ``cart``),
* awkward inputs (continuous and many-valued responses, one class, one row, NaN / inf / 1e300
  predictors, constant and duplicated columns, odd column names, mixed dtypes, a 2-D response,
  ``y ~ 1``, unseen levels, wrong-type flags, kernel arguments on linear fits, unknown keywords,
  bad ``s``, weights that are zero / negative / NaN / 1e+-300, bad ``nfolds``),
* operations (the fit, ``predict`` with every ``type`` and with bad options, ``cv`` / ``tune``
  / ``gkl`` on a subset, ``save`` / ``load``).

Every outcome is classified as

(a) a clear error: ``ValueError`` / ``TypeError`` (or ``NotImplementedError``) raised by
    cohstats itself (the innermost traceback frame is in the package, not in numpy, pandas,
    numba or scipy) whose message names the argument, column, level or value at fault;
(b) a fit with a warning, which must still be sound; or
(c) a sound fit: finite predictions, probability rows that sum to one, and never
    ``converged=True`` with non-finite decision values.

Inputs that must not give a fit (a continuous response, one class, a flag of the wrong type,
...) are marked so; a fit for them is a silent wrong answer and fails. Run ``pytest -m slow
tests/test_tour.py -s`` for a table of the outcome counts.
"""

from __future__ import annotations

import collections
import math
import os
import traceback
import warnings

import numpy as np
import pandas as pd
import pytest

import cohstats as cs

PKG = os.path.abspath(os.path.dirname(cs.__file__))
N = 30
RNG = np.random.default_rng(20261124)
X1 = RNG.normal(size=N)
X2 = RNG.normal(size=N)
Y2 = np.where(X1 + 0.7 * RNG.normal(size=N) > 0, "yes", "no")
Y2[:2] = ["yes", "no"]
Y3 = np.array(["a", "b", "c"])[np.digitize(X1 + 0.5 * RNG.normal(size=N), [-0.4, 0.4])]
Y3[:3] = ["a", "b", "c"]
BASE = pd.DataFrame({"x1": X1, "x2": X2, "resp": Y2})

# small settings so that every fit takes milliseconds
FITS = {
    "clearn": dict(nlambda=5),
    "lum": dict(nlambda=5, nfolds=2),
    "svm": dict(),
    "lamsvm": dict(),
    # SMO subproblems solved tightly, so that rescaled twins agree to 1e-6 (at the default tol=1e-3
    # psi-learning's DC iterations agree with a rescaled twin only to about 2e-4)
    "psi_learn": dict(max_dc=5, tol=1e-9),
    "gboost_c": dict(n_trees=3, nodes=2, random_state=0),
    "gboost": dict(n_trees=3, nodes=2, random_state=0),
    "cart": dict(nfolds=2, random_state=0),
}
LINEAR_DEFAULT = {"clearn", "lum"}  # kernel=None is their default
PATH_FITS = {"clearn", "lum", "cart", "lamsvm", "svm", "psi_learn"}
BINARY_ONLY = {"psi_learn"}


class Case:
    """One awkward input: how to call the fit, and what a correct outcome is.

    ``expect``: "error" (a fit is a silent wrong answer), "fit" (an error is a failure) or
    "any" (a clear error or a sound fit); ``names``: words of which the error must name one.
    """

    def __init__(
        self, name, expect="any", names=(), formula="resp ~ x1 + x2", data=None, kw=None, newdata=None, xy=None
    ):
        self.name, self.expect, self.names = name, expect, tuple(names)
        self.formula = formula
        self.kw = kw if isinstance(kw, str) else dict(kw or {})  # "kernel": see _kernel_kw
        self.data = BASE if data is None else data
        self.newdata = newdata
        self.xy = xy

    def call(self, fname):
        fn = getattr(cs, fname)
        kw = {**FITS[fname], **self.kw}
        if callable(kw.get("weights")):
            kw["weights"] = kw["weights"](len(self.data))
        if self.xy is not None:
            return fn(*self.xy, **kw)
        return fn(self.formula, self.data, **kw)


def _with(**cols):
    return BASE.assign(**cols)


def _kernel_kw(fname):
    """Kernel arguments that the fit function's *linear* fit does not use."""
    if fname in LINEAR_DEFAULT:
        return dict(sigma=1.0)
    if fname in ("svm", "lamsvm", "psi_learn"):
        return dict(kernel="linear", gamma=1.0)
    return dict(gamma=1.0)  # trees take no kernel: an unknown keyword


_dup = BASE.copy()
_dup.columns = ["x1", "x1", "resp"]
_odd = pd.DataFrame({"my var": X1, "class": X2, "β": X1 * X2, "if": X2**2, "resp": Y2})
_mixed = _with(
    s=np.where(X2 > 0, "up", "down"),
    b=X1 > 0,
    i=(np.arange(N) % 4).astype(int),
    c=pd.Categorical(np.where(X1 > 0.5, "hi", "lo")),
)
_cat = _with(g=pd.Categorical(np.array(["u", "v", "w"])[np.arange(N) % 3]))
_nan = _with(x1=np.where(np.arange(N) < 3, np.nan, X1))

CASES = [
    Case("binary"),
    Case("three classes", data=_with(resp=Y3)),
    Case("continuous response", "error", ("continuous", "resp", "response"), data=_with(resp=RNG.normal(size=N))),
    Case("many-valued integer response", "error", ("categorical", "resp", "response"), data=_with(resp=np.arange(N))),
    Case("integral float 0/1 response", "any", ("resp", "response"), data=_with(resp=(X1 > 0).astype(float))),
    Case("boolean response", data=_with(resp=X1 > 0)),
    Case("one class", "error", ("class", "resp", "level")),
    Case("one row", "error", ("row", "observation", "class", "resp", "n=", "too few")),
    Case("two rows", "any", ("row", "observation", "class", "fold", "n=", "too few", "nfolds")),
    Case("NaN predictor rows", data=_nan),
    Case(
        "NaN predictor, na_action=fail", "error", ("x1", "missing", "na_action"), data=_nan, kw=dict(na_action="fail")
    ),
    Case("inf predictor", "error", ("x1", "infinite", "inf"), data=_with(x1=np.where(np.arange(N) == 4, np.inf, X1))),
    Case("1e300 predictor", "any", ("x1", "overflow", "scale", "finite", "large"), data=_with(x1=X1 * 1e300)),
    Case("1e-300 predictor", "any", ("x1", "scale", "small"), data=_with(x1=X1 * 1e-300)),
    Case("constant column", "any", ("x3", "constant"), formula="resp ~ x1 + x2 + x3", data=_with(x3=np.full(N, 2.5))),
    Case("duplicated column", formula="resp ~ x1 + x2 + x3", data=_with(x3=X1)),
    Case("duplicated column names", "error", ("duplicated", "x1"), formula="resp ~ x1", data=_dup),
    Case("odd column names", formula="resp ~ `my var` + `class` + `β` + `if`", data=_odd),
    Case("mixed dtypes", formula="resp ~ x1 + s + b + i + c", data=_mixed),
    Case(
        "unseen level at predict", formula="resp ~ x1 + g", data=_cat, newdata=_cat.assign(g=pd.Categorical(["z"] * N))
    ),
    Case("missing column at predict", newdata=BASE.drop(columns="x2")),
    Case("2-D response", "error", ("response", "1-D", "y", "label"), xy=(BASE[["x1", "x2"]].to_numpy(), np.c_[Y2, Y2])),
    Case("X, y arrays", xy=(BASE[["x1", "x2"]].to_numpy(), Y2)),
    Case("y ~ 1", "any", ("no predictors", "has none", "at least one predictor"), formula="resp ~ 1"),
    Case("unknown response column", "error", ("nosuch",), formula="nosuch ~ x1"),
    Case("unknown predictor column", "error", ("nosuch",), formula="resp ~ nosuch"),
    Case("standardize='no'", "error", ("standardize",), kw=dict(standardize="no")),
    Case("standardize=1", "error", ("standardize",), kw=dict(standardize=1)),
    Case("kernel args on a linear fit", "error", ("sigma", "gamma"), kw="kernel"),
    Case("unknown keyword", "error", ("foo",), kw=dict(foo=1)),
    Case("misspelt keyword", "error", ("lamda", "lambda_"), kw=dict(lamda=0.1)),
    Case("weights all zero", "error", ("weights",), kw=dict(weights=lambda n: np.zeros(n))),
    Case("weights negative", "error", ("weights",), kw=dict(weights=lambda n: np.r_[-1.0, np.ones(n - 1)])),
    Case("weights NaN", "any", ("weights",), kw=dict(weights=lambda n: np.r_[np.nan, np.ones(n - 1)])),
    Case("weights inf", "error", ("weights",), kw=dict(weights=lambda n: np.r_[np.inf, np.ones(n - 1)])),
    Case("weights some zero", kw=dict(weights=lambda n: np.r_[np.zeros(3), np.ones(n - 3)])),
    Case("weights 1e300", "any", ("weights",), kw=dict(weights=lambda n: np.full(n, 1e300))),
    Case("weights 1e-300", "any", ("weights",), kw=dict(weights=lambda n: np.full(n, 1e-300))),
    Case("weights wrong length", "error", ("weights",), kw=dict(weights=lambda n: np.ones(n + 1))),
    Case("weights as a string column", "error", ("weights", "nosuch"), kw=dict(weights="nosuch")),
    Case("subset bad expression", "error", ("subset",), kw=dict(subset="x1 >")),
    Case("na_action unknown", "error", ("na_action",), kw=dict(na_action="drop")),
    Case("verbose='yes'", "error", ("verbose",), kw=dict(verbose="yes")),
]
CASES = {c.name: c for c in CASES}
# the "one class" and "one row" data
CASES["one class"].data = _with(resp=np.full(N, "only"))
CASES["one row"].data = BASE.iloc[:1]
CASES["two rows"].data = BASE.iloc[:2]

OUTCOMES: collections.Counter = collections.Counter()
_FIT_CACHE: dict = {}


# ================================================================================ checking
def _innermost_in_package(exc: BaseException) -> str | None:
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return "no traceback"
    inner = os.path.abspath(frames[-1].filename)
    if not inner.startswith(PKG):
        return f"raised from {inner}:{frames[-1].lineno} ({frames[-1].name})"
    return None


def _classify(call, expect="any", names=()):
    """Run ``call``; return ("error"|"warning"|"fit", value) after checking a clear error."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = call()
        except (ValueError, TypeError, NotImplementedError) as exc:
            msg = str(exc)
            where = _innermost_in_package(exc)
            assert where is None, f"{type(exc).__name__} not raised by cohstats ({where}): {msg}\n" + "".join(
                traceback.format_tb(exc.__traceback__)[-3:]
            )
            assert len(msg) > 10, f"an error without a message: {exc!r}"
            if names:
                low = msg.lower()
                assert any(n.lower() in low for n in names), f"the error does not name any of {names}: {msg}"
            assert expect != "fit", f"expected a fit, got {type(exc).__name__}: {msg}"
            return "error", exc
    assert expect != "error", f"expected a clear error, got {type(out).__name__}"
    real = [w for w in caught if not issubclass(w.category, (DeprecationWarning, PendingDeprecationWarning))]
    return ("warning" if real else "fit"), out


def _fit_case(fname, cname):
    key = (fname, cname)
    if key not in _FIT_CACHE:
        case = CASES[cname]
        if case.kw == "kernel":
            case = Case(case.name, case.expect, case.names, kw=_kernel_kw(fname))
        expect, names = case.expect, case.names
        if fname in BINARY_ONLY and cname == "three classes":
            expect, names = "error", ("binary", "two classes", "2 classes")
        try:
            _FIT_CACHE[key] = _classify(lambda: case.call(fname), expect, names)
        except AssertionError as e:
            _FIT_CACHE[key] = ("failure", e)
    return _FIT_CACHE[key]


def _sound(fit, newdata):
    """Predictions of a fit that claims success are finite, probabilities are distributions."""
    link = _classify(lambda: fit.predict(newdata, type="link"))
    if link[0] != "error":
        f = np.asarray(link[1], dtype=float)
        assert not (fit.converged is True and not np.all(np.isfinite(f))), (
            "converged=True with non-finite decision values"
        )
    prob = _classify(lambda: fit.predict(newdata, type="prob"))
    if prob[0] != "error":
        P = np.asarray(prob[1], dtype=float)
        assert np.all(np.isfinite(P)), "non-finite probabilities"
        assert np.all(P >= -1e-12)
        np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-8)
    cls = _classify(lambda: fit.predict(newdata, type="class"))
    if cls[0] != "error":
        assert set(pd.unique(np.asarray(cls[1]).ravel())) <= set(fit.classes)


def _newdata(case):
    if case.newdata is not None:
        return case.newdata
    if case.xy is not None:
        return case.xy[0]
    return case.data


FIT_IDS = [(f, c) for f in FITS for c in CASES]


# ================================================================================ the tour
# A fit of an input that is a rescaled (or reweighted) twin of the plain binary data must equal
# the plain fit where the method is invariant: standardised fits and trees under predictor
# scaling; fits whose loss is a weighted mean (not the SVMs, whose weights multiply C) under
# weight scaling; and zero weights drop their rows.
STANDARDISED = {"clearn", "lum", "svm", "lamsvm", "psi_learn", "gboost_c", "gboost", "cart"}
WEIGHTED_MEAN = {"clearn", "lum", "gboost_c", "gboost", "cart"}
TWINS = {
    "1e300 predictor": (STANDARDISED, lambda d: d.assign(x1=d.x1 * 1e300), None),
    "1e-300 predictor": (STANDARDISED, lambda d: d.assign(x1=d.x1 * 1e-300), None),
    "weights 1e300": (WEIGHTED_MEAN, None, None),
    "weights 1e-300": (WEIGHTED_MEAN, None, None),
    "weights some zero": ({"clearn"}, None, slice(3, None)),
    "duplicated column": ({"gboost_c", "gboost", "cart"}, None, None),
}


def _check_twin(fname, cname, fit):
    fits, scale_x, rows = TWINS[cname]
    if fname not in fits:
        return
    if rows is None:
        base = _fit_case(fname, "binary")[1]
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            base = getattr(cs, fname)("resp ~ x1 + x2", BASE.iloc[rows], **FITS[fname])
    nd = BASE if scale_x is None else scale_x(BASE)
    if cname == "duplicated column":
        nd = BASE.assign(x3=BASE.x1)
    a = base.predict(BASE, type="prob").to_numpy()
    b = fit.predict(nd, type="prob").to_numpy()
    np.testing.assert_allclose(
        b, a, rtol=1e-6, atol=1e-9, err_msg=f"{fname} on '{cname}' differs from the fit on the plain data"
    )


@pytest.mark.parametrize("fname,cname", FIT_IDS, ids=[f"{f}-{c}" for f, c in FIT_IDS])
def test_fit(fname, cname):
    kind, out = _fit_case(fname, cname)
    if kind == "failure":
        raise out
    OUTCOMES[kind] += 1
    if kind != "error":
        case = CASES[cname]
        nd = case.data if case.xy is None else case.xy[0]
        _sound(out, nd)
        if cname in TWINS:
            _check_twin(fname, cname, out)


@pytest.mark.parametrize("fname,cname", FIT_IDS, ids=[f"{f}-{c}" for f, c in FIT_IDS])
def test_predict(fname, cname):
    kind, fit = _fit_case(fname, cname)
    if kind in ("error", "failure"):
        pytest.skip("no fit to predict from")
    case = CASES[cname]
    nd = _newdata(case)
    if case.newdata is not None:
        # new data that cannot be scored: a clear error that names the level / column
        r = _classify(lambda: fit.predict(nd, type="class"), "any", ("z", "g", "x2", "level", "column"))
        OUTCOMES[r[0]] += 1
        if r[0] != "error":
            _sound(fit, nd)
        return
    # a prediction that cannot be made names the type, the column with missing values, or the
    # folds that the probability method needs
    why = ("type", "x1", "x2", "newdata", "missing", "nfolds", "rows")
    for t in ("class", "prob", "link", "response"):
        r = _classify(lambda: fit.predict(nd, type=t), "any", (t,) + why)
        OUTCOMES[r[0]] += 1
    for bad, names in (
        (dict(type="bogus"), ("type", "bogus")),
        (dict(foo=1), ("foo",)),
        (dict(s="abc"), ("s",)),
        (dict(s=math.nan), ("s",)),
        (dict(s=-1.0), ("s",)),
    ):
        expect = "any" if bad.get("s") == -1.0 else "error"
        r = _classify(lambda: fit.predict(nd, **bad), expect, names + why[1:])
        OUTCOMES[r[0]] += 1
        if r[0] != "error":
            # an accepted s (a path value below the fitted range) must still give sound output
            _sound(fit, nd)


# tuners: a subset of the inputs, with one fit function of each family
TUNE_FITS = ["clearn", "svm", "gboost_c"]
TUNE_CASES = [
    "binary",
    "three classes",
    "continuous response",
    "one class",
    "NaN predictor rows",
    "inf predictor",
    "constant column",
    "odd column names",
    "mixed dtypes",
    "standardize='no'",
    "unknown keyword",
    "weights negative",
    "weights 1e300",
    "two rows",
]
TUNE_OPS = ["cv", "tune", "gkl", "cv nfolds=1", "cv nfolds=100", "cv nfolds='3'"]
TUNE_IDS = [
    (f, c, o)
    for f in TUNE_FITS
    for c in TUNE_CASES
    for o in TUNE_OPS
    if not (o.startswith("cv nfolds") and c not in ("binary", "three classes"))
]

_TUNE_GRID = {"clearn": {"alpha": [0.5, 1.0]}, "svm": {"C": [0.5, 2.0]}, "gboost_c": {"rho": [0.5, 1.0]}}


def _tune_call(fname, cname, op):
    case = CASES[cname]
    fn = getattr(cs, fname)
    kw = {**FITS[fname], **(case.kw if isinstance(case.kw, dict) else {})}
    if callable(kw.get("weights")):
        kw["weights"] = kw["weights"](len(case.data))
    common = dict(verbose=False)
    kw.setdefault("random_state", 0)
    if op == "cv":
        return lambda: cs.cv(fn, case.formula, case.data, nfolds=3, **common, **kw)
    if op == "tune":
        return lambda: cs.tune(fn, case.formula, case.data, grid=_TUNE_GRID[fname], nfolds=3, **common, **kw)
    if op == "gkl":
        return lambda: cs.gkl(fn, case.formula, case.data, D=3, **common, **kw)
    nf = {"cv nfolds=1": 1, "cv nfolds=100": 100, "cv nfolds='3'": "3"}[op]
    return lambda: cs.cv(fn, case.formula, case.data, nfolds=nf, **common, **kw)


@pytest.mark.parametrize("fname,cname,op", TUNE_IDS, ids=[f"{f}-{c}-{o}" for f, c, o in TUNE_IDS])
def test_tuner(fname, cname, op):
    case = CASES[cname]
    expect = case.expect
    names = case.names
    if op in ("cv nfolds=1", "cv nfolds='3'"):
        expect, names = "error", ("nfolds",)
    elif op == "cv nfolds=100":
        expect, names = "any", ("nfolds",)
    if op == "gkl" and fname == "svm" and expect != "error":
        expect = "any"  # gkl needs probabilities: svm may refuse
    if cname == "two rows":
        expect = "any"
    kind, res = _classify(_tune_call(fname, cname, op), expect, names)
    OUTCOMES[kind] += 1
    if kind != "error":
        if op == "gkl":
            assert np.any(np.isfinite(np.asarray(res.estimate, dtype=float)))
        elif op == "tune":
            assert res.table.shape[0] >= 1 and np.isfinite(res.best_score)
        else:
            cvm = np.asarray(res.cvm, dtype=float)
            assert cvm.size >= 1 and np.any(np.isfinite(cvm))


# save / load: every fit function on the inputs that fit
SAVE_CASES = [
    "binary",
    "three classes",
    "NaN predictor rows",
    "odd column names",
    "mixed dtypes",
    "weights some zero",
    "X, y arrays",
    "duplicated column",
]
SAVE_IDS = [(f, c) for f in FITS for c in SAVE_CASES]


@pytest.mark.parametrize("fname,cname", SAVE_IDS, ids=[f"{f}-{c}" for f, c in SAVE_IDS])
def test_save_load(fname, cname, tmp_path):
    kind, fit = _fit_case(fname, cname)
    if kind in ("error", "failure"):
        pytest.skip("no fit to save")
    path = tmp_path / "fit.cohstats"
    fit.save(path)
    back = cs.load(path)
    nd = _newdata(CASES[cname])
    for t in ("class", "link", "prob"):
        try:
            a = fit.predict(nd, type=t)
        except (ValueError, TypeError, NotImplementedError):
            continue
        b = back.predict(nd, type=t)
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    OUTCOMES["fit"] += 1
    # a damaged copy is refused with the one clear error
    raw = path.read_bytes()
    bad = tmp_path / "bad.cohstats"
    bad.write_bytes(raw[: len(raw) // 2])
    kind, _ = _classify(lambda: cs.load(bad), "error", ("not a valid cohstats file",))
    OUTCOMES[kind] += 1


@pytest.mark.slow
def test_report_outcome_counts():
    """Print the outcome of every fit of the tour by fit function (``pytest -m slow -s``)."""
    table = collections.defaultdict(collections.Counter)
    for fname, cname in FIT_IDS:
        table[fname][_fit_case(fname, cname)[0]] += 1
    kinds = ["error", "warning", "fit", "failure"]
    print(f"\ntour: {len(FIT_IDS)} fits x predict, {len(TUNE_IDS)} tuner calls, {len(SAVE_IDS)} save/load round trips")
    print(f"{'':10s}" + "".join(f"{k:>9s}" for k in kinds))
    for fname in FITS:
        print(f"{fname:10s}" + "".join(f"{table[fname][k]:9d}" for k in kinds))
    assert sum(table[f]["failure"] for f in FITS) == 0
    assert len(FIT_IDS) + len(TUNE_IDS) + len(SAVE_IDS) >= 470
