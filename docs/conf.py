"""Sphinx configuration of the cohstats documentation (``sphinx-build -W docs docs/_build``)."""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.abspath(".."))

import cohstats  # noqa: E402

project = "cohstats"
author = "cohstats developers"
release = cohstats.__version__
extensions = ["sphinx.ext.autodoc", "sphinx.ext.autosummary", "sphinx.ext.mathjax", "numpydoc"]
autosummary_generate = True
autodoc_default_options = {"members": False}
numpydoc_show_class_members = False
numpydoc_validation_checks: set = set()
numpydoc_xref_param_type = False
exclude_patterns = ["_build"]
html_theme = "alabaster"
html_static_path: list = []
nitpicky = False
suppress_warnings = ["autosummary.import_cycle"]
