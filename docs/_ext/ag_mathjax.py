"""MathJax shipped with the HTML: the pages render their mathematics offline, with no script from another host.

``sphinx.ext.mathjax`` points the pages at a CDN by default, so a reader without the network (or a saved copy of
the site) sees raw TeX such as ``\\(\\mathcal M \\subset \\mathbb R^N\\)``.  This extension takes MathJax 3 from the
locked PyPI package ``sphinx-mathjax-offline`` (MathJax 3.2.2, Apache License 2.0; the package ships all of MathJax,
24 MB) and copies only what the pages load into ``_static/mathjax/`` of the HTML output:

* ``tex-chtml-full.js`` (1.3 MB): the TeX input with every TeX extension built in (``\\operatorname``,
  ``\\mathbb``, ``align``, ...: nothing is loaded on demand) and the CommonHTML output;
* ``output/chtml/fonts/woff-v2/`` (0.4 MB): MathJax's TeX fonts, which the CommonHTML output loads relative to
  the script.

``mathjax_path`` is set to the local script.  A missing package is a build error naming it (the ``docs`` extra of
pyproject.toml installs it).

It also keeps the mathematics of a section title in the links to it: ``{ref}`model-full-from-reduced``` links
with the title's text, and Sphinx's text of a title drops the math's delimiters, so the link showed
``for t \\ge 2`` as raw TeX.  Such links get a copy of the title's own nodes (its math rendered).
"""

from __future__ import annotations

import shutil
from importlib import metadata
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.errors import ExtensionError

PACKAGE = "sphinx-mathjax-offline"
SCRIPT = "tex-chtml-full.js"
#: what the pages load, relative to the package's MathJax directory (a file or a directory)
SHIPPED = (SCRIPT, "output/chtml/fonts/woff-v2")


def mathjax_source() -> Path:
    """The MathJax directory of the installed ``sphinx-mathjax-offline`` package."""
    try:
        dist = metadata.distribution(PACKAGE)
    except metadata.PackageNotFoundError as exc:
        raise ExtensionError(
            f"ag_mathjax: the package {PACKAGE!r} is not installed (pip install '.[docs]'; it ships MathJax so that "
            "the pages need no CDN)"
        ) from exc
    source = Path(str(dist.locate_file("sphinx-mathjax-offline/static/mathjax")))
    if not (source / SCRIPT).is_file():
        raise ExtensionError(f"ag_mathjax: {source / SCRIPT} is missing from the package {PACKAGE!r}")
    return source


def _copy(source: Path, target: Path) -> None:
    """Copy a file or a directory tree, skipping files already there with the same size."""
    files = [source] if source.is_file() else sorted(p for p in source.rglob("*") if p.is_file())
    for path in files:
        dest = target if source.is_file() else target / path.relative_to(source)
        if dest.is_file() and dest.stat().st_size == path.stat().st_size:
            continue
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, dest)


def _local_path(app: Sphinx, config: Any) -> None:
    config.mathjax_path = f"mathjax/{SCRIPT}"  # relative: Sphinx serves it from _static/


def _ship(app: Sphinx, exc: BaseException | None) -> None:
    if exc is not None or app.builder.format != "html":
        return
    source = mathjax_source()
    target = Path(app.outdir) / "_static" / "mathjax"
    for part in SHIPPED:
        _copy(source / part, target / part)


def _math_titles(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """Links whose text is a section title with mathematics: the title's nodes instead of its bare text."""
    titles = {
        name: (doc, label) for doc, label, name in app.env.domaindata["std"]["labels"].values() if name and "\\" in name
    }
    if not titles:
        return
    for inline in list(doctree.findall(nodes.inline)):
        if "std-ref" not in inline["classes"] or inline.astext() not in titles:
            continue
        doc, label = titles[inline.astext()]
        source = app.env.get_doctree(doc) if doc != docname else doctree
        section = next((s for s in source.findall(nodes.section) if label in s["ids"]), None)
        if section is None or not isinstance(section[0], nodes.title):
            continue
        inline.children = []
        inline.extend(child.deepcopy() for child in section[0].children)
        app.env.get_domain("math").data["has_equations"][docname] = True  # the page loads MathJax


def setup(app: Sphinx) -> dict[str, Any]:
    mathjax_source()  # fail at start-up, not after the whole build, when the package is missing
    app.setup_extension("sphinx.ext.mathjax")
    app.connect("config-inited", _local_path)
    app.connect("doctree-resolved", _math_titles)
    app.connect("build-finished", _ship)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
