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
specification must give the saved design bit for bit).

Rebuilding, not storing transform states, is a measured choice: for a typical formula
(``x1 + x2 + C(g) + poly(x3, 3) + center(x2):x1`` on 200 rows) the rebuild is about 10 ms of
a 13 ms load (``benchmarks/bench_load.py``), while storing the column names and every
transform's state as data would tie the format to formulaic's internal classes, one per
transform, and still need an evaluator for ``np.log(x)`` or ``I(...)``.

Because formulaic evaluates the formula's Python expressions and expands its products, the
formula is checked first, on save and on load, without evaluating or expanding anything
(``cohstats.persist._formula``): its syntax tree (formulaic's, before term expansion; Python's
for each factor) may name only the stored data columns, literals, arithmetic and an explicit
list of NumPy and formulaic functions (``np.log``, ``C``, ``center``, ``poly``, ...), and every
quantity whose evaluation could grow is bounded: literals (integers up to 10**6, strings up to
1000 characters), strings and lists built (no repetition ``"a" * n``, no ``%`` formatting, at
most 10000 elements in all), integers computed by powers and shifts (at most 4096 bits), the
work of a formula power (``terms ** k`` at most 4096, so ``(a + b) ** 12`` at most), ``poly``
degrees and spline sizes (literals, at most the number of stored rows), the expanded terms (at
most 4096, of at most 16 factors) and the design's size, rows x columns x 8 bytes, with the
columns bounded from the stored columns (1 for a number, its distinct values for a category,
products for interactions), at most ``max(64 MB, 4 x the file's size)``. The rebuild then runs
under a time limit (30 s plus 1 s per MB of file, checked on every Python call). A formula
calling a function from the user's session, or exceeding a bound, cannot be saved.

Loading checks. A file that is not a zip archive, lacks or misreads ``meta.json``, names
another format or a newer format version, fails a CRC check, declares sizes larger than the
file itself, has a malformed array header, names a class or function outside the lists
above, or does not decode to the type it declares, raises :class:`FormatError`
("not a valid cohstats file: ..."). Sizes are checked against the file before anything is
allocated, and a formula's design against the bound above, so the memory a load takes is in
proportion to the file's size (a crafted header or formula cannot make it allocate gigabytes).

Adding a class. A new result class (or one that moved) gets one line in :data:`SAFE_CLASSES`;
attributes need no registration. When a class moves, keep its old name as a key of
:data:`CLASS_ALIASES` so that older files still load.
"""

from __future__ import annotations

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


from ._common import (
    CLASS_ALIASES,
    FORMAT_NAME,
    FORMAT_VERSION,
    SAFE_CLASSES,
    SAFE_FUNCTIONS,
    FormatError,
    UnsafeObjectError,
    register_class,
)
from ._decode import _resolve_class, load, read_meta  # noqa: F401
from ._encode import save


class Persistable:
    """Mixin giving result classes ``save(path)`` and ``load(path)`` in the safe format."""

    def save(self, path) -> None:
        """Save to ``path`` in cohstats' safe format; :func:`cohstats.load` reads it back."""
        save(self, path)

    @classmethod
    def load(cls, path):
        """Load a file saved with :meth:`save`; it must hold an instance of this class."""
        return load(path, expected=cls)
