"""Sphinx configuration of vcut's API reference (``docs/api``).

Build: ``python -m sphinx -W -b html docs/api build/api`` from the repository
root (tests/test_docs.py builds it with warnings as errors).
"""

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

project = "vcut"
author = "the vcut authors"
extensions = ["sphinx.ext.autodoc", "sphinx.ext.napoleon", "sphinx.ext.viewcode"]
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_rtype = False
# parameters as a definition list: the words of a type ("int array of length p") are
# text, not cross-references that could name several objects
napoleon_use_param = False
napoleon_use_ivar = True
autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"members": True, "show-inheritance": False}

html_theme = "alabaster"
html_title = "vcut API reference"
exclude_patterns = ["_build"]
nitpicky = False
