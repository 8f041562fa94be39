"""Parameter lines for numpydoc: descriptions written on the name line are moved below it."""

from __future__ import annotations

import re

# numpydoc reads ``name : text`` as a parameter and its type, and sets the type in italics. Many
# cohstats docstrings put a short description on the name line instead (``s : for path fits, the
# value ...``). Before numpydoc runs, such a line is split: the name stays, the text becomes the
# first line of the description. A text is taken for a description, not a type, when it ends like
# a sentence (``.``, ``;``, ``:``), is longer than a type declaration (over 60 characters), or
# starts with a lower-case word that is not a type name.
_SECTIONS = {"Parameters", "Other Parameters", "Attributes", "Returns", "Yields", "Receives"}
_TYPE_WORDS = {
    "int", "float", "str", "bool", "dict", "list", "tuple", "set", "callable", "array", "array_like",
    "array-like", "ndarray", "sequence", "object", "scalar", "iterable", "optional", "function",
    "path-like", "bytes", "complex", "number", "numbers", "frozenset", "mapping", "generator",
}  # fmt: skip
_PARAM = re.compile(r"^(\*{0,2}[A-Za-z_][\w, *]*?) : (.+)$")


def _is_description(text: str) -> bool:
    t = text.strip()
    if t.endswith((".", ";", ":")) or len(t) > 60:
        return True
    first = re.split(r"[\s,(]", t, maxsplit=1)[0]
    return first[:1].islower() and first not in _TYPE_WORDS


def split_parameter_lines(app, what, name, obj, options, lines):
    section, new = None, []
    for i, line in enumerate(lines):
        if i + 1 < len(lines) and line.strip() and re.fullmatch(r"-{3,}", lines[i + 1].strip()):
            section = line.strip()
        m = _PARAM.match(line) if section in _SECTIONS and line and not line[0].isspace() else None
        if m and _is_description(m.group(2)):
            nxt = lines[i + 1] if i + 1 < len(lines) else ""
            indent = nxt[: len(nxt) - len(nxt.lstrip())] if nxt.strip() and nxt[0].isspace() else "    "
            new += [m.group(1), indent + m.group(2).strip()]
        else:
            new.append(line)
    lines[:] = new
