"""``ag-cli``: the command-line reference, generated from the parser when the documentation is built.

``{ag-cli}`` renders :func:`ag_attention._cli.build_parser`: the top-level
``--help``, then one section per command (and per sub-command of a command
that has them), each with its one-line summary and its ``--help`` text exactly
as ``ag-attention COMMAND --help`` prints it at 88 columns.  Nothing is copied
by hand, so the page says what the installed command does.  Each section has
the label ``cli-COMMAND`` (``cli-reproduce``, ``cli-m2-doctor``) for
``{ref}`` links.

``{ag-docstring} MODULE`` renders a module's docstring (reStructuredText) in
place, with roles such as ``:class:`X``` shown as the literal ``X``: the grid
format page is ``ag_attention._sweep.grid``'s docstring, the format's single
source.
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

WIDTH = "88"


def _help(parser: argparse.ArgumentParser) -> str:
    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = WIDTH
    try:
        return parser.format_help().rstrip("\n")
    finally:
        if old is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = old


def _commands(parser: argparse.ArgumentParser) -> list[tuple[str, str, argparse.ArgumentParser]]:
    """(name, one-line help, parser) of each sub-command, in the order of the parser."""
    out = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            summaries = {a.dest: a.help or "" for a in action._choices_actions}
            for name, sub in action.choices.items():
                out.append((name, summaries.get(name, ""), sub))
    return out


class CliReference(SphinxDirective):
    has_content = False

    def _section(
        self, title: str, label: str, summary: str, parser: argparse.ArgumentParser, path: list[str]
    ) -> nodes.section:
        section = nodes.section(ids=[label], names=[label])
        section += nodes.title(title, "", nodes.literal(title, title))
        self.state.document.note_explicit_target(section)
        if summary:
            section += nodes.paragraph(summary, summary[:1].upper() + summary[1:] + ".")
        text = _help(parser)
        section += nodes.literal_block(text, text, language="none")
        for name, help_, sub in _commands(parser):
            section += self._section(
                " ".join([*path, name]), "cli-" + "-".join([*path[1:], name]), help_, sub, [*path, name]
            )
        return section

    def run(self) -> list[nodes.Node]:
        from ag_attention._cli import build_parser

        parser = build_parser()
        text = _help(parser)
        out: list[nodes.Node] = [nodes.literal_block(text, text, language="none")]
        for name, help_, sub in _commands(parser):
            out.append(self._section(f"ag-attention {name}", f"cli-{name}", help_, sub, ["ag-attention", name]))
        return out


_ROLE = re.compile(r":(?:py:)?(?:class|func|meth|attr|data|mod|exc|obj):`~?([^`]+)`")


class Docstring(SphinxDirective):
    required_arguments = 1
    has_content = False

    def run(self) -> list[nodes.Node]:
        module = importlib.import_module(self.arguments[0])
        self.env.note_dependency(module.__file__ or "")
        text = _ROLE.sub(lambda m: f"``{m.group(1)}``", module.__doc__ or "")
        container = nodes.container(classes=["ag-docstring"])
        from docutils.parsers.rst import Parser
        from docutils.utils import new_document

        doc = new_document(f"<docstring of {self.arguments[0]}>", self.state.document.settings)
        Parser().parse(text, doc)
        container.extend(doc.children)
        return [container]


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_directive("ag-cli", CliReference)
    app.add_directive("ag-docstring", Docstring)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
