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
