"""Sphinx configuration of the ag-attention documentation.

Built by ``make docs`` (and ``make test``) with warnings as errors::

    .venv/bin/python -m sphinx -W --keep-going -n -b html docs docs/_build/html
    .venv/bin/python -m sphinx -W --keep-going -b doctest docs docs/_build/doctest

Nothing here touches the network at build time: no intersphinx, no remote
images or themes.  Nor do the pages when read: MathJax is shipped with the HTML
(docs/_ext/ag_mathjax.py, from the locked ``sphinx-mathjax-offline``) and the
theme (PyData) brings its own fonts and scripts; tests/test_docs_browser.py
renders pages in headless Chromium and fails on a script of another host or
on raw TeX.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
# the checkout's package, not an older installed copy; and the local extension
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE / "_ext"))

import ag_attention  # noqa: E402

project = "ag-attention"
author = "the ag-attention developers"
copyright = "the ag-attention developers"  # noqa: A001 - Sphinx's name
release = ag_attention.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.doctest",
    "ag_mathjax",  # docs/_ext/ag_mathjax.py: sphinx.ext.mathjax with MathJax shipped in _static/ (offline)
    "numpydoc",
    "myst_parser",
    "ag_api",  # docs/_ext/ag_api.py: the API reference from ag_attention.__all__
    "ag_cli",  # docs/_ext/ag_cli.py: the command-line page from the argparse parser, a module docstring as a page
    "ag_exec",  # docs/_ext/ag_exec.py: the tutorials' {code-cell} blocks run during the HTML build
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]
language = "en"
today_fmt = "%Y-%m-%d"

# ----------------------------------------------------------------- MyST
myst_enable_extensions = [
    "dollarmath",  # $...$ and $$...$$
    "amsmath",  # \begin{align} ... \end{align} blocks
    "colon_fence",  # ::: fences for admonitions
    "deflist",
]
myst_dmath_double_inline = True
# explicit (label)= targets only: section numbers and anchors cited by the code must not move
myst_heading_anchors = 0

# ----------------------------------------------------------------- autodoc / numpydoc
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_preserve_defaults = True
# the package's docstrings are written with numpydoc sections
numpydoc_show_class_members = False  # members come from autodoc's :members:
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = False
numpydoc_validation_checks: set[str] = set()  # style is reviewed in code review, not by the build
numpydoc_xref_param_type = False

# ----------------------------------------------------------------- doctest
# The examples of these pages are run by the doctest builder.  The examples
# inside docstrings are run by pytest (--doctest-modules), with the Macaulay2
# and msolve set-up of the test suite, so they are not run a second time here.
doctest_test_doctest_blocks = ""
doctest_global_setup = ""

# ----------------------------------------------------------------- nitpicky
nitpicky = True
# Types of third-party libraries (numpy, python-flint) and of the standard
# library's typing modules: there is no intersphinx (no network at build
# time), so references to them cannot resolve.  Everything of ag_attention
# must resolve.
nitpick_ignore = [
    ("py:class", "pathlib.Path"),  # standard library, no intersphinx offline
    ("py:class", "os.PathLike"),
    ("py:class", "numpy.ndarray"),
    ("py:class", "numpy.dtype"),
    ("py:class", "numpy.integer"),
    ("py:class", "numpy.random.Generator"),
    ("py:class", "fractions.Fraction"),
]
nitpick_ignore_regex = [
    (r"py:class", r"flint\..*"),  # python-flint's fmpz_mpoly, fmpq_mpoly, ... (flint.types.*)
    (r"py:class", r"(collections\.abc|typing)\..*"),  # Sequence, Mapping, ... in signatures
]

# ----------------------------------------------------------------- executed tutorials
# {code-cell} blocks (docs/tutorials/) run for these builders only: the doctest builder of `make docs`
# shows them without running them a second time.  A failing cell fails the build.
ag_exec_builders = ["html"]

#: names of ag_attention.__all__ left out of docs/api.rst, with the reason (see docs/_ext/ag_api.py)
ag_api_exclude: dict[str, str] = {}

# ----------------------------------------------------------------- HTML
# The PyData theme, as NumPy, SciPy and pandas: a top bar with the sections, the page's own contents on the right,
# code blocks that scroll sideways instead of being cut, a light and a dark mode, search.  It loads nothing from
# another host (its fonts and scripts are in _static/).
html_theme = "pydata_sphinx_theme"
html_title = f"ag-attention {release}"
html_static_path = ["_static"]
html_css_files = ["ag.css"]
html_theme_options = {
    "navbar_align": "left",
    "header_links_before_dropdown": 6,
    "navbar_end": ["theme-switcher", "navbar-icon-links"],
    "secondary_sidebar_items": ["page-toc"],
    "show_toc_level": 2,
    "navigation_with_keys": False,
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
#: the front page and the pages without sub-pages use the full width (no empty section navigation)
html_sidebars: dict[str, list[str]] = {
    page: [] for page in ("index", "api", "cli", "grid", "m2", "training", "software", "related", "developer")
}
html_show_sourcelink = False
