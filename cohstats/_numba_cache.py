"""Where numba keeps cohstats' compiled code, and the guard that keeps it from going stale.

numba's on-disk cache (``@njit(cache=True)``) checks only the source file of the function it
compiled. A jitted solver that calls a jitted loss from another module keeps running the old
loss after that module is edited, because the solver's own file did not change. cohstats
therefore keys its whole numba cache by a hash of every source file that jitted code is built
from: any edit to one of them selects a fresh, empty cache folder (numba recompiles once) and
the folders of other hashes are deleted.

Which files are hashed
    Every ``.py`` file under ``cohstats/solvers`` and ``cohstats/losses``, ``cohstats/kernels.py``,
    this module, every other module of the package that imports numba, and, transitively, every
    cohstats module those import. Editing anything else (models, formula, vignettes, docs) keeps
    the cache. The installed numba version is part of the key as well.

Where the cache lives (first usable entry wins)
    1. ``$COHSTATS_NUMBA_CACHE_DIR/<key>`` when that variable is set;
    2. ``$NUMBA_CACHE_DIR/cohstats/<key>`` when numba's own variable is set (the user chose where
       compiled code goes; cohstats keeps its hash-keyed folder there);
    3. the per-user cache directory (``~/.cache/cohstats/numba`` on Linux, or
       ``$XDG_CACHE_HOME/cohstats/numba``; ``~/Library/Caches`` on macOS, ``%LOCALAPPDATA%`` on
       Windows);
    4. a per-user folder in the temporary directory.

    If none is writable, a warning says so and numba's default behaviour applies. ``<key>`` is
    the source hash alone, so compiled code is shared by everything that runs the same sources:
    a second virtual environment, a fresh clone or an installed wheel of the same version loads
    what the first one compiled. numba's own freshness test (the modification time of each
    source file, which every clone or install changes) is replaced by the hash of the file's
    contents. Folders of other keys are deleted once unused for :data:`STALE_DAYS` days, and
    beyond the :data:`KEEP` most recently used ones; names that are not keys are never touched.
    Two processes compiling at once (``cv(n_jobs=2)``, pytest-xdist) are safe: numba writes each
    file under a temporary name and renames it into place, so a reader sees a whole file or
    none; when both add entries to one function's index, one may be lost and is compiled again
    later. A user who sets ``NUMBA_CACHE_LOCATOR_CLASSES`` replaces numba's cache lookup
    altogether and owns the cache (no guard).

The first time a process compiles (rather than loads) cohstats code it prints one line to
stderr; set ``COHSTATS_QUIET=1`` to silence it. ``python -m cohstats warmup`` compiles every
model family ahead of time.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import sys
import tempfile
import threading
import time
import warnings

__all__ = [
    "cache_dir",
    "in_cache",
    "install",
    "internal",
    "internal_jit_options",
    "jitted_functions",
    "njit",
    "quiet",
    "source_files",
    "source_hash",
]

ENV_DIR = "COHSTATS_NUMBA_CACHE_DIR"
ENV_QUIET = "COHSTATS_QUIET"

PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))

#: Sub-packages / modules that hold jitted code (relative to the package directory).
_JIT_TREES = ("solvers", "losses")
_JIT_FILES = ("kernels.py", "_numba_cache.py")

_IMPORTS_NUMBA = re.compile(r"^\s*(?:from\s+numba[\s.]|import\s+numba\b)", re.MULTILINE)
_FROM_IMPORT = re.compile(r"^\s*from\s+(\.+|cohstats\b)([\w.]*)\s+import\b", re.MULTILINE)
_PLAIN_IMPORT = re.compile(r"^\s*import\s+cohstats((?:\.\w+)*)", re.MULTILINE)

_lock = threading.RLock()
_state: dict = {}
_noticed: set = set()


# --------------------------------------------------------------------------------------------
# which sources the compiled code depends on
# --------------------------------------------------------------------------------------------
def _read(path: str) -> str:
    with open(path, encoding="utf-8", errors="replace") as fh:
        return fh.read()


def _module_file(package_dir: str, parts: list[str]) -> list[str]:
    """Files of the cohstats module ``parts`` (relative to the package): a module or a package."""
    base = os.path.join(package_dir, *parts)
    if os.path.isfile(base + ".py"):
        return [base + ".py"]
    if os.path.isdir(base):  # a package: any of its modules may be named in the import list
        return sorted(os.path.join(base, f) for f in os.listdir(base) if f.endswith(".py"))
    return []


def _imported_files(package_dir: str, path: str, text: str) -> list[str]:
    """cohstats files imported by the module at ``path`` (static scan of its import lines)."""
    here = os.path.relpath(os.path.dirname(path), package_dir).split(os.sep)
    here = [p for p in here if p not in ("", ".")]
    out = []
    for dots, rest in _FROM_IMPORT.findall(text):
        if dots == "cohstats":
            parts = []
        else:
            up = len(dots) - 1
            if up > len(here):
                continue
            parts = here[: len(here) - up] if up else list(here)
        parts = parts + [p for p in rest.split(".") if p]
        out += _module_file(package_dir, parts)
    for rest in _PLAIN_IMPORT.findall(text):
        out += _module_file(package_dir, [p for p in rest.split(".") if p])
    return out


def source_files(package_dir: str | None = None) -> list[str]:
    """Sorted paths of the source files that cohstats' compiled code is built from.

    Parameters
    ----------
    package_dir : str, optional
        Directory of a ``cohstats`` package; default the imported one.

    Returns
    -------
    list of str
        Every ``.py`` file under ``solvers/`` and ``losses/``, ``kernels.py``, this module, any
        other module importing numba, and, transitively, every cohstats module these import.
    """
    package_dir = os.path.abspath(package_dir or PACKAGE_DIR)
    seeds = set()
    for root, dirs, files in os.walk(package_dir):
        dirs[:] = [d for d in dirs if not d.startswith((".", "__pycache__"))]
        rel = os.path.relpath(root, package_dir).split(os.sep)[0]
        for f in files:
            if not f.endswith(".py"):
                continue
            path = os.path.join(root, f)
            if rel in _JIT_TREES or (rel == "." and f in _JIT_FILES) or _IMPORTS_NUMBA.search(_read(path)):
                seeds.add(path)
    todo, seen = list(seeds), set(seeds)
    while todo:
        path = todo.pop()
        for dep in _imported_files(package_dir, path, _read(path)):
            if dep not in seen:
                seen.add(dep)
                todo.append(dep)
    return sorted(seen)


def source_hash(package_dir: str | None = None) -> str:
    """Hex digest (16 characters) of the jitted sources' paths and contents and numba's version.

    Any edit of a file listed by :func:`source_files` changes it; edits elsewhere do not.
    """
    package_dir = os.path.abspath(package_dir or PACKAGE_DIR)
    h = hashlib.sha256()
    try:
        import numba

        h.update(numba.__version__.encode())
    except ImportError:  # pragma: no cover - numba is a hard dependency
        pass
    for path in source_files(package_dir):
        h.update(os.path.relpath(path, package_dir).replace(os.sep, "/").encode())
        h.update(b"\0")
        with open(path, "rb") as fh:
            h.update(hashlib.sha256(fh.read()).digest())
    return h.hexdigest()[:16]


# --------------------------------------------------------------------------------------------
# where the cache lives
# --------------------------------------------------------------------------------------------
def _user_cache_root() -> str:
    home = os.path.expanduser("~")
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or os.path.join(home, "AppData", "Local")
        return os.path.join(base, "cohstats", "Cache", "numba")
    if sys.platform == "darwin":
        return os.path.join(home, "Library", "Caches", "cohstats", "numba")
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(home, ".cache")
    return os.path.join(base, "cohstats", "numba")


def _temp_root() -> str:
    user = str(os.getuid()) if hasattr(os, "getuid") else os.environ.get("USERNAME", "user")
    return os.path.join(tempfile.gettempdir(), f"cohstats-numba-{user}")


def _writable(path: str) -> bool:
    try:
        os.makedirs(path, exist_ok=True)
        tempfile.TemporaryFile(dir=path).close()
        return True
    except OSError:
        return False


def _candidate_roots():
    """(root, explicit) pairs in order of preference; ``explicit`` = chosen by the user."""
    mine = os.environ.get(ENV_DIR, "").strip()
    if mine:
        yield os.path.abspath(os.path.expanduser(mine)), True
    try:
        from numba.core import config

        numba_dir = (config.CACHE_DIR or "").strip()
    except ImportError:  # pragma: no cover
        numba_dir = os.environ.get("NUMBA_CACHE_DIR", "").strip()
    if numba_dir:
        yield os.path.join(os.path.abspath(os.path.expanduser(numba_dir)), "cohstats"), True
    yield _user_cache_root(), False
    yield _temp_root(), False


#: Folders of other source hashes are deleted after this many days unused ...
STALE_DAYS = 30
#: ... and beyond this many most recently used ones.
KEEP = 8
#: cache keys: the source hash (and the installation-tagged names of older versions)
_KEY = re.compile(r"^(?:[0-9a-f]{8}-)?[0-9a-f]{16}$")


def _prune(root: str, keep: str) -> None:
    """Delete the key-named folders under ``root`` other than ``keep`` that were unused for
    :data:`STALE_DAYS` days or are not among the :data:`KEEP` most recently used."""
    try:
        names = [n for n in os.listdir(root) if n != keep and _KEY.match(n)]
    except OSError:
        return
    used = []
    for name in names:
        try:
            used.append((os.stat(os.path.join(root, name)).st_mtime, name))
        except OSError:
            continue
    used.sort(reverse=True)
    now = time.time()
    for rank, (mtime, name) in enumerate(used):
        if rank + 1 >= KEEP or now - mtime > STALE_DAYS * 86400.0:
            shutil.rmtree(os.path.join(root, name), ignore_errors=True)


def _resolve(package_dir: str) -> str | None:
    key = source_hash(package_dir)
    for root, explicit in _candidate_roots():
        path = os.path.join(root, key)
        existed = os.path.isdir(path)
        if _writable(path):
            if existed:
                try:
                    os.utime(path)  # marks the folder as in use (see _prune)
                except OSError:
                    pass
            else:
                _prune(root, key)
            return path
        if explicit:
            warnings.warn(
                f"cohstats: the numba cache directory {root!r} is not writable; "
                "using the next available location instead",
                RuntimeWarning,
                stacklevel=4,
            )
    warnings.warn(
        "cohstats: found no writable directory for compiled code; numba's default "
        "cache applies (after editing cohstats' numba code delete its *.nbi/*.nbc files)",
        RuntimeWarning,
        stacklevel=4,
    )
    return None


def cache_dir() -> str | None:
    """The folder cohstats' compiled code is cached in (created on first use), or None."""
    with _lock:
        if "dir" not in _state:
            _state["dir"] = _resolve(PACKAGE_DIR)
        return _state["dir"]


# --------------------------------------------------------------------------------------------
# the one-line compile notice
# --------------------------------------------------------------------------------------------
def quiet() -> bool:
    """True when ``COHSTATS_QUIET`` is set to anything but ``""``/``0``/``false``/``no``."""
    return os.environ.get(ENV_QUIET, "").strip().lower() not in ("", "0", "false", "no")


def _fit_name() -> str | None:
    """Name of the outermost cohstats model function on the call stack (e.g. ``clearn``)."""
    models = os.path.normcase(os.path.join(PACKAGE_DIR, "models") + os.sep)
    name = None
    frame = sys._getframe(1)
    while frame is not None:
        fname = os.path.normcase(os.path.abspath(frame.f_code.co_filename))
        code = frame.f_code.co_name
        if fname.startswith(models) and not code.startswith(("_", "<")):
            name = code
        frame = frame.f_back
    return name


#: CPU seconds of a first small fit from an empty cache (import included), measured with
#: ``benchmarks/bench_compile.py`` on an idle 2-core machine while it ran at the slower end of
#: its speed (the same code measured a third less at other times); the compile notice quotes
#: them. Other arguments (a kernel, K classes) may compile a little more.
FIRST_USE_SECONDS = {"clearn": 11, "lum": 11, "svm": 6, "lamsvm": 11, "gboost_c": 8}


def _notice_compile() -> None:
    """Print, once per model per process, that numba is compiling (called when numba saves)."""
    name = _fit_name()
    key = name or ""
    with _lock:
        if key in _noticed or (not name and _noticed):
            return
        _noticed.add(key)
    if quiet():
        return
    what = f"the numerical code behind {name}()" if name else "numerical code"
    cost = FIRST_USE_SECONDS.get(name or "")
    about = f"about {cost} s of CPU" if cost else "seconds to a minute"
    print(
        f"cohstats: compiling {what} once ({about}); later runs reuse the cache -- "
        "`python -m cohstats warmup` does it ahead of time (COHSTATS_QUIET=1 silences this)",
        file=sys.stderr,
        flush=True,
    )


def jitted_functions() -> list:
    """``(qualified name, dispatcher)`` of every numba function defined in cohstats.

    Imports ``cohstats.kernels`` and every module of ``cohstats.losses`` and ``cohstats.solvers``.
    """
    import importlib
    import pkgutil

    from numba.core.dispatcher import Dispatcher

    names = ["cohstats.kernels"]
    for pkg in ("cohstats.losses", "cohstats.solvers"):
        mod = importlib.import_module(pkg)
        names += [m.name for m in pkgutil.walk_packages(mod.__path__, prefix=f"{pkg}.")]
    out = []
    for name in names:
        for attr, obj in vars(importlib.import_module(name)).items():
            if isinstance(obj, Dispatcher) and obj.__module__ == name:
                out.append((f"{name}.{attr}", obj))
    return out


def in_cache(dispatcher) -> bool:
    """True when numba's cache holds compiled code of ``dispatcher`` (a cached numba function),
    or, for a function without a cache of its own (:func:`internal`: compiled into its callers),
    when this process compiled it.

    A cached function compiled in an earlier process counts, also when this process only loaded
    the function that calls it.
    """
    try:
        return os.path.exists(dispatcher._cache._cache_file._index_path)
    except AttributeError:  # no disk cache, or numba internals moved
        return bool(dispatcher.signatures)


_digests: dict = {}


def _file_digest(path: str) -> str:
    """SHA-256 of a file's contents (once per process and file)."""
    with _lock:
        d = _digests.get(path)
        if d is None:
            with open(path, "rb") as fh:
                d = _digests[path] = hashlib.sha256(fh.read()).hexdigest()
        return d


# --------------------------------------------------------------------------------------------
# the hook into numba
# --------------------------------------------------------------------------------------------
def _make_locator_class():
    from numba.core import caching

    class CohstatsCacheLocator(caching._SourceFileBackedLocatorMixin, caching._CacheLocator):
        """numba cache locator for functions defined in cohstats: the source-hash-keyed folder."""

        def __init__(self, py_func, py_file):
            self._py_file = py_file
            self._lineno = py_func.__code__.co_firstlineno
            rel = os.path.relpath(os.path.dirname(os.path.abspath(py_file)), PACKAGE_DIR)
            sub = "_" if rel in ("", ".") else rel.replace(os.sep, "_")
            self._cache_path = os.path.join(cache_dir(), sub)

        def get_cache_path(self):
            return self._cache_path

        def get_source_stamp(self):
            # the file's contents, not its modification time: a fresh clone or another
            # installation of the same sources loads the cache instead of compiling
            return _file_digest(self._py_file)

        def ensure_cache_path(self):
            super().ensure_cache_path()
            # numba calls this right before saving a freshly compiled function
            _notice_compile()

        @classmethod
        def from_function(cls, py_func, py_file):
            path = os.path.normcase(os.path.abspath(py_file))
            if not path.startswith(os.path.normcase(PACKAGE_DIR + os.sep)) or not os.path.isfile(path):
                return None
            if cache_dir() is None:
                return None
            self = cls(py_func, py_file)
            try:
                os.makedirs(self._cache_path, exist_ok=True)
            except OSError:
                return None
            return self

    CohstatsCacheLocator.__module__ = __name__
    return CohstatsCacheLocator


def install() -> None:
    """Route the numba cache of every cohstats function to :func:`cache_dir`.

    Called by the modules holding jitted code (``cohstats.solvers``, ``cohstats.losses``,
    ``cohstats.kernels``) before any function is decorated; idempotent. Other packages' numba
    functions are not affected.
    """
    with _lock:
        if _state.get("installed"):
            return
        try:
            from numba.core import caching

            impl = getattr(caching, "CacheImpl", None) or caching._CacheImpl  # older numba
            classes = impl._locator_classes
            classes.insert(0, _make_locator_class())
        except (ImportError, AttributeError):  # pragma: no cover - numba internals moved
            # fall back to numba's public switch: every cached function of the process goes
            # to the hash-keyed folder (unless the user chose a folder himself)
            from numba.core import config

            if not config.CACHE_DIR and cache_dir() is not None:
                config.CACHE_DIR = cache_dir()
        _state["installed"] = True


# --------------------------------------------------------------------------------------------
# the decorators of cohstats' jitted code
# --------------------------------------------------------------------------------------------
_classes: dict = {}


def _dispatcher_class(entry: bool):
    """numba's CPU dispatcher, compiling one specialisation per argument *types* (see :func:`njit`);
    ``entry=False``: without a Python entry point (see :func:`internal`)."""
    cls = _classes.get(entry)
    if cls is None:
        from numba.core import types
        from numba.core.caching import FunctionCache
        from numba.core.registry import CPUDispatcher
        from numba.core.runtime import rtsys

        # the load below uses two of numba's private methods: without them, numba's own load
        light = all(hasattr(FunctionCache, m) for m in ("_load_overload", "_guard_against_spurious_io_errors"))

        class Cache(FunctionCache):
            """numba's cache of one function, loading without refreshing the target context."""

            def load_overload(self, sig, target_context):
                # numba refreshes the target context before every load: it imports and registers
                # every implementation module (about 0.2 s, once per process), which compiling
                # needs and loading does not; loading needs the runtime (NRT) alone. A cache miss
                # compiles, and compiling refreshes the context itself.
                rtsys.initialize(target_context)
                with self._guard_against_spurious_io_errors():
                    return self._load_overload(sig, target_context)

        class Dispatcher(CPUDispatcher):
            """A numba dispatcher whose calls from jitted code ignore constant values (see :func:`njit`)."""

            def enable_caching(self):
                self._cache = (Cache if light else FunctionCache)(self.py_func)

            def add_overload(self, cres):
                # ``_nrt=False``: the function takes no references, so a returned array would be
                # freed by its caller while still owned elsewhere
                if not self.targetoptions.get("_nrt", True):
                    rt = cres.signature.return_type
                    if cres.target_context.data_model_manager[rt].contains_nrt_meminfo():
                        raise TypeError(
                            f"{self.py_func.__qualname__} is compiled without reference counting "
                            f"(_nrt=False) and must not return arrays; it returns {rt}"
                        )
                super().add_overload(cres)

            def get_call_template(self, args, kws):
                args = tuple(types.unliteral(a) for a in args)
                kws = {k: types.unliteral(v) for k, v in kws.items()}
                return super().get_call_template(args, kws)

        class InternalDispatcher(Dispatcher):
            """A dispatcher compiled without Python entry points, to be linked into its callers
            (see :func:`internal`)."""

            def enable_caching(self):
                if _link_only_compiler() is None:  # compiled as numba does it: cached
                    super().enable_caching()
                # link-only code has no machine code of its own to save

            def __call__(self, *args, **kwargs):
                raise TypeError(
                    f"{self.py_func.__module__}.{self.py_func.__qualname__} is compiled code without a "
                    "Python entry point: call it from jitted code"
                )

        for c in (Dispatcher, InternalDispatcher, Cache):  # picklable by reference
            c.__module__ = __name__
            c.__qualname__ = c.__name__
            globals()[c.__name__] = c
        _classes[True], _classes[False] = Dispatcher, InternalDispatcher
        cls = _classes[entry]
    return cls


def _link_only_compiler():
    """numba's nopython compiler whose lowering leaves the function's LLVM module for linking
    only (see :func:`internal`), or None when numba's internals differ from what it relies on.
    """
    if "link_only" in _state:
        return _state["link_only"]
    compiler_cls = None
    try:
        from numba import _dynfunc
        from numba.core.codegen import JITCodeLibrary
        from numba.core.compiler import CompilerBase, DefaultPassBuilder, _LowerResult
        from numba.core.compiler_machinery import register_pass
        from numba.core.typed_passes import NativeLowering

        class LinkOnlyLibrary(JITCodeLibrary):
            """An LLVM module that only other libraries link in: neither optimised as a whole nor
            turned into machine code here (each caller optimises the linked code with its own
            module and compiles it once, into its own machine code)."""

            def _optimize_final_module(self):
                pass

            def _finalize_final_module(self):
                self._finalize_dynamic_globals()
                self._verify_declare_only_symbols()
                self._finalized = True

            def get_pointer_to_function(self, name):
                return 0  # no machine code of its own

            def serialize_using_object_code(self):
                raise TypeError("link-only code is not cached")

            serialize_using_bitcode = serialize_using_object_code

        @register_pass(mutates_CFG=True, analysis_only=False)
        class LinkOnlyLowering(NativeLowering):
            """numba's lowering, ending with the library registered for linking into callers
            instead of compiled to machine code."""

            _name = "cohstats_link_only_lowering"

            def run_pass(self, state):
                if state.library is None:
                    state.library = LinkOnlyLibrary(state.targetctx.codegen(), state.func_id.func_qualname)
                flags = state.flags
                saved = flags.no_compile
                flags.no_compile = True  # lower only: no machine code, no Python function
                try:
                    super().run_pass(state)
                finally:
                    flags.no_compile = saved
                lowered = state["cr"]
                library = state.library
                library.finalize()
                fndesc = lowered.fndesc
                # the key callers' lowering finds this function and its library by (numba makes
                # the same object, with the address of the Python wrapper, here 0)
                key = _dynfunc.make_function(
                    fndesc.lookup_module(),
                    fndesc.qualname.split(".")[-1],
                    f"link-only code of {fndesc.qualname!r}",
                    0,
                    lowered.env,
                    (library,),
                )
                state.targetctx.insert_user_function(key, fndesc, [library])
                state.reload_init.extend(library._reload_init)
                state["cr"] = _LowerResult(fndesc, lowered.call_helper, cfunc=key, env=lowered.env)
                return True

        class LinkOnlyCompiler(CompilerBase):
            """numba's nopython pipeline with :class:`LinkOnlyLowering` for its lowering."""

            def define_pipelines(self):
                pm = DefaultPassBuilder.define_nopython_pipeline(self.state)
                pm.passes = [(LinkOnlyLowering if p is NativeLowering else p, d) for p, d in pm.passes]
                return [pm]

        needed = ("_finalize_dynamic_globals", "_verify_declare_only_symbols")
        if all(hasattr(JITCodeLibrary, m) for m in needed):
            for c in (LinkOnlyLibrary, LinkOnlyLowering, LinkOnlyCompiler):
                c.__module__ = __name__
                c.__qualname__ = c.__name__
                globals()[c.__name__] = c
            compiler_cls = LinkOnlyCompiler
    except (ImportError, AttributeError):  # pragma: no cover - numba internals moved
        compiler_cls = None
    _state["link_only"] = compiler_cls
    return compiler_cls


def _decorate(fn, options, entry):
    def deco(f):
        from numba.core import config

        if config.DISABLE_JIT:  # NUMBA_DISABLE_JIT=1: plain Python, as numba's decorators do
            return f
        install()  # the hash-keyed cache, before numba looks up where to cache ``f``
        # no C-callable wrapper: cohstats calls its functions from Python or from jitted code
        targetoptions = dict(nopython=True, error_model="numpy", _nrt=True, no_cfunc_wrapper=True)
        if not entry:
            targetoptions.update(nogil=True, no_cpython_wrapper=True)
        targetoptions.update(options)
        cache = targetoptions.pop("cache", True)
        kwargs = {}
        if not entry and _link_only_compiler() is not None:
            kwargs["pipeline_class"] = _link_only_compiler()
        disp = _dispatcher_class(entry)(py_func=f, locals={}, targetoptions=targetoptions, **kwargs)
        if cache:
            disp.enable_caching()
        return disp

    return deco if fn is None else deco(fn)


def internal_jit_options() -> dict:
    """``jit_options`` of an ``@overload`` implementation that only jitted code calls: compiled
    as :func:`internal` functions are (no Python entry point, linked into its callers, numpy's
    division)."""
    options = dict(nogil=True, no_cpython_wrapper=True, no_cfunc_wrapper=True, error_model="numpy")
    if _link_only_compiler() is not None:
        options["pipeline_class"] = _link_only_compiler()
    return options


def njit(fn=None, **options):
    """``numba.njit`` for cohstats' code: the same options (``cache`` defaults to True), one
    specialisation per argument types, and a lighter load from the cache.

    numba compiles a jitted function called from other jitted code once for every *constant*
    argument value it sees (``f(x, -1)`` and ``f(x, True)`` are typed ``Literal[int](-1)`` and
    ``Literal[bool](True)``), besides the specialisation a call from Python makes; the same body
    is then compiled two or three times. Functions made by this decorator type such calls by the
    arguments' types alone, so each function is compiled once per argument types.

    numba refreshes its compiler's registries before it loads a function from the cache, which
    imports and registers every implementation module (about 0.2 s of a warm process's second);
    these functions load without it (only numba's runtime is initialised), and compile with it.

    Division follows numpy's error model (``error_model="numpy"``): ``x / 0`` is ``inf`` or
    ``nan``, never ``ZeroDivisionError``, so no zero test and raise path is compiled before every
    division (less code to compile; callers guard the divisions that matter).

    No C-callable wrapper is compiled (``no_cfunc_wrapper=True``): cohstats calls its functions
    from Python or from jitted code, never through a C function pointer.

    Reference counting is on (``_nrt=True``) unless a function sets ``_nrt=False``: then no
    reference-count updates are compiled for the arrays it reads, slices and passes on (a large
    loop over NamedTuples of arrays compiles noticeably faster). Such a function must not
    allocate (numba refuses to compile it) nor return an array (``TypeError`` when compiled);
    the functions it calls keep their own reference counting.
    """
    return _decorate(fn, options, entry=True)


def internal(fn=None, **options):
    """``@njit(nogil=True)`` for a function that only jitted code calls: compiled for linking
    into its callers only.

    numba builds two wrappers around every function it compiles, one that Python calls (it
    unboxes every array of the arguments' NamedTuples) and one C-callable, then optimises the
    function's module as a whole and turns it into machine code -- and every caller links the
    function's module into its own, optimises it again with its own code and compiles it again.
    A function made by this decorator gets no wrappers, and its module stops after numba's
    per-function optimisation: its only machine code is the one inside its callers (in their
    cache files), so it has no cache of its own (``cache`` is ignored) and a process that loads
    its callers from the cache never compiles it. Together about a fifth of the compilation of
    a first fit. Calling such a function from Python raises ``TypeError`` (it has no Python
    entry point). ``options`` are numba's (``inline``, ``fastmath``, ...); like :func:`njit`,
    one specialisation per argument types. Should numba's compiler internals differ from what
    this relies on, the function is compiled as numba does it, without the wrappers.
    """
    return _decorate(fn, options, entry=False)
