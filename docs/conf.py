"""Sphinx configuration of the cohstats documentation (``sphinx-build -W docs docs/_build``).

Every build first runs the tutorial (``_scripts/tutorial.py``), which writes the tutorial's
figures, printed results and quoted numbers to ``_generated/tutorial``.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE / "_scripts"))

import cohstats  # noqa: E402
import tutorial  # noqa: E402
from param_lines import split_parameter_lines  # noqa: E402

project = "cohstats"
author = "cohstats developers"
release = cohstats.__version__
extensions = ["sphinx.ext.autodoc", "sphinx.ext.autosummary", "sphinx.ext.mathjax", "numpydoc"]
autosummary_generate = True
autodoc_default_options = {"members": False}
numpydoc_show_class_members = False
numpydoc_validation_checks: set = set()
numpydoc_xref_param_type = False
exclude_patterns = ["_build", "_generated", "_scripts"]
html_theme = "alabaster"
html_static_path: list = []
nitpicky = False
suppress_warnings = ["autosummary.import_cycle"]

os.environ.setdefault("COHSTATS_QUIET", "1")
with contextlib.redirect_stdout(io.StringIO()):  # the tutorial's print() output is on its page
    tutorial.build(HERE / "_generated" / "tutorial")


def setup(app):
    app.connect("autodoc-process-docstring", split_parameter_lines, priority=400)
