"""Reading the safe format: every size checked before allocating; :func:`load`, :func:`read_meta`."""

from __future__ import annotations

import importlib
import json
import math
import os
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd

from ._common import (
    CLASS_ALIASES,
    FORMAT_NAME,
    FORMAT_VERSION,
    FormatError,
    SAFE_CLASSES,
    SAFE_FUNCTIONS,
    _BIT_GENERATORS,
    _MAX_DEPTH,
    _MAX_MEMBERS,
    _MAX_META,
    _MAX_NDIM,
    _MEMBER_RE,
    _NPY_HEADER_MAX,
    _NP_SCALAR_KINDS,
    _PD_EXT_DTYPES,
    _REGISTERED,
    _qualname,
    _safe_dtype,
    _slot_names,
)
from ._formula import _LOAD_HOOKS, _rebuild_spec


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
    def __init__(self, zf: zipfile.ZipFile, infos: dict, size: int = 0):
        self.size = size
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
        _, spec = _rebuild_spec(rhs, frame, self.size)
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
                obj = _Decoder(zf, infos, size).dec(graph)
            if _qualname(type(obj)) != CLASS_ALIASES.get(meta["object_type"], meta["object_type"]):
                raise ValueError(f"it declares a {meta['object_type']!r} but holds a {_qualname(type(obj))}")
        except FormatError:
            raise
        except (Exception, RecursionError) as e:
            raise FormatError(f"not a valid cohstats file: {path_s}: {_reason(e)}") from None
    if expected is not None and not isinstance(obj, expected):
        raise TypeError(f"{path_s} holds a {type(obj).__name__}, not a {expected.__name__}")
    return obj
