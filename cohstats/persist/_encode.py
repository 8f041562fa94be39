"""Writing the safe format: the object graph encoder and :func:`save`."""

from __future__ import annotations

import json
import os
import secrets
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd

from ._common import (
    FORMAT_NAME,
    FORMAT_VERSION,
    SAFE_FUNCTIONS,
    UnsafeObjectError,
    _BIG_INT,
    _BIT_GENERATORS,
    _MAX_DEPTH,
    _MAX_NDIM,
    _NP_SCALAR_KINDS,
    _PD_EXT_DTYPES,
    _ZIP_TIME,
    _is_safe_class,
    _qualname,
    _safe_dtype,
    _slot_names,
)
from ._formula import _SAVE_HOOKS, _SpecBox, _verify_spec_box


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
