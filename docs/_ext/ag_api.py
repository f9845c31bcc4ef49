"""``ag-autoapi``: autodoc entries for the public names of :mod:`ag_attention`.

The API reference documents exactly the names in ``ag_attention.__all__``,
grouped by subject, without a hand-kept list going stale:

* ``.. ag-autoapi::`` with one name per content line renders those names that
  the package exports (names not exported yet are skipped, so a page can list
  a name before it becomes public);
* ``.. ag-autoapi-rest::`` renders every exported name no ``ag-autoapi``
  directive of the project lists (a new export lands there until it is
  filed under a subject).

``ag_api_exclude`` in ``conf.py`` maps a name to the reason it is left out
(a docstring that makes Sphinx warn, waiting for its fix); excluded names
are reported at the end of the build with their reason, as a message
(``-W`` does not turn it into an error).

Each name becomes ``autoclass`` (with ``:members:``), ``autoexception``,
``autofunction`` or ``autodata`` according to the object, always under its
public path ``ag_attention.<name>``.
"""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path
from typing import Any

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.application import Sphinx
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

log = logging.getLogger(__name__)

PACKAGE = "ag_attention"


def _public() -> list[str]:
    return list(importlib.import_module(PACKAGE).__all__)


def _listed(app: Sphinx) -> set[str]:
    """Names every ``ag-autoapi`` directive of the project lists (read from the sources)."""
    names: set[str] = set()
    for path in sorted(p for p in Path(app.srcdir).rglob("*.rst") if "_build" not in p.parts):
        lines = path.read_text(encoding="utf-8").splitlines()
        inside = False
        for line in lines:
            if line.strip().startswith(".. ag-autoapi::"):
                inside = True
                continue
            if inside:
                if line.strip() and not line.startswith((" ", "\t")):
                    inside = False
                elif line.strip() and not line.strip().startswith(":"):
                    names.add(line.strip())
    return names


def _entry(name: str) -> list[str]:
    obj = getattr(importlib.import_module(PACKAGE), name)
    path = f"{PACKAGE}.{name}"
    if inspect.isclass(obj) and issubclass(obj, BaseException):
        return [f".. autoexception:: {path}", "   :show-inheritance:", ""]
    if inspect.isclass(obj):
        return [f".. autoclass:: {path}", "   :members:", ""]
    if callable(obj):
        return [f".. autofunction:: {path}", ""]
    return [f".. autodata:: {path}", "   :no-value:", ""]


class _Base(SphinxDirective):
    has_content = True

    def _render(self, names: list[str]) -> list[nodes.Node]:
        # the page depends on ag_attention.__all__, not only on its source: rebuilt every time
        self.env.ag_api_docs = getattr(self.env, "ag_api_docs", set()) | {self.env.docname}
        excluded: dict[str, str] = self.config.ag_api_exclude
        lines: list[str] = []
        for name in names:
            if name in excluded:
                continue
            lines += _entry(name)
        if not lines:
            return []
        node = nodes.container()
        self.state.nested_parse(StringList(lines, source=self.get_source_info()[0]), self.content_offset, node)
        return node.children


class AutoAPI(_Base):
    def run(self) -> list[nodes.Node]:
        public = set(_public())
        names = [line.strip() for line in self.content if line.strip()]
        return self._render([n for n in names if n in public])


class AutoAPIRest(_Base):
    has_content = False

    def run(self) -> list[nodes.Node]:
        listed = _listed(self.env.app)
        return self._render([n for n in _public() if n not in listed])


def _outdated(app: Sphinx, env: Any, added: set[str], changed: set[str], removed: set[str]) -> list[str]:
    return sorted(getattr(env, "ag_api_docs", set()) - removed)


def _purge(app: Sphinx, env: Any, docname: str) -> None:
    getattr(env, "ag_api_docs", set()).discard(docname)


def _merge(app: Sphinx, env: Any, docnames: set[str], other: Any) -> None:
    env.ag_api_docs = getattr(env, "ag_api_docs", set()) | getattr(other, "ag_api_docs", set())


def _report(app: Sphinx, exception: Exception | None) -> None:
    if exception is None:
        for name, why in app.config.ag_api_exclude.items():
            log.info("ag-autoapi: %s left out of the API reference: %s", name, why)


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_config_value("ag_api_exclude", {}, "env", types=(dict,))
    app.add_directive("ag-autoapi", AutoAPI)
    app.add_directive("ag-autoapi-rest", AutoAPIRest)
    app.connect("env-get-outdated", _outdated)
    app.connect("env-purge-doc", _purge)
    app.connect("env-merge-info", _merge)
    app.connect("build-finished", _report)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
