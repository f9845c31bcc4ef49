"""``code-cell``: code that runs while the documentation is built, its output shown below it.

The tutorials (``docs/tutorials/``) are MyST pages whose examples are
``{code-cell}`` blocks, the directive name of MyST-NB and Jupytext, so a page
reads like a notebook and opens as one in Jupytext.  This extension runs them
itself, without a Jupyter kernel:

* ``python`` cells run in the Sphinx process, in one namespace per page, in
  page order, in a fresh temporary working directory per page (removed
  afterwards); what they print to stdout or stderr is shown under the code,
  and so is the ``repr`` of a final expression, as in a notebook (not when the
  cell ends with ``;``).  ``show(fig)``
  in the namespace shows a matplotlib figure (a PNG in the page itself), ``show("file.png")`` a PNG file the
  cell wrote;
* ``bash`` cells (``{code-cell} bash``) run each line of shell through
  ``bash -e`` in the page's working directory, with the virtual environment's
  ``bin`` first on ``PATH`` (so ``ag-attention`` is this checkout's command);
  their standard output and standard error are shown;
* any exception, or a non-zero exit status of a bash cell, **fails the build**
  (:class:`CellError`, with the page, the cell's number and line, the code and
  the traceback or the output): a tutorial that stops working cannot be
  published.  A cell that is *meant* to fail says so: ``:raises: NameOfError``
  (Python: the exception must be of that class, its last line is shown) or
  ``:returncode: N`` (bash).

Options: ``:hide-code:``, ``:hide-output:`` (run, show only one of the two).

Cells run only for the builders in ``ag_exec_builders`` (``html`` by default):
``make docs`` also runs the doctest builder, which shows the code without
running it a second time.  A page with cells is read again on every build
(``env-get-outdated``), so an incremental build still runs its cells against
the package as it is now.  The time each page took is printed at the end of the
build (``ag_exec: ...``, a message, not a warning).

Why a local extension rather than MyST-NB or jupyter-sphinx: both execute
through a Jupyter kernel (``ipykernel``, ``jupyter_client``, ``nbformat``,
``nbclient`` and their dependencies, about 30 packages, into the lock), while
what the tutorials need, running code in order and failing the build on an
exception, is this file.
"""

from __future__ import annotations

import ast
import base64
import contextlib
import io
import os
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.application import Sphinx
from sphinx.errors import SphinxError
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

log = logging.getLogger(__name__)


#: whether this build's builder runs the cells (set when the builder is chosen)
_RUN = {"cells": False}


def _builder_inited(app: Sphinx) -> None:
    _RUN["cells"] = app.builder.name in app.config.ag_exec_builders


class CellError(SphinxError):
    """A ``code-cell`` failed while the documentation was built."""

    category = "code-cell failed"


def _bin() -> str:
    """The directory of the running Python's scripts (``.venv/bin``): ``ag-attention`` is there."""
    return str(Path(sys.executable).parent)


class _Page:
    """The state of one page while it is read: namespace, working directory, cell count, time."""

    def __init__(self) -> None:
        self.dir = tempfile.mkdtemp(prefix="ag-exec-")
        self.cells = 0
        self.seconds = 0.0
        self.figures: list[bytes] = []
        self.namespace: dict[str, Any] = {"__name__": "__main__", "show": self.show}

    def show(self, fig: Any) -> None:
        """Show a matplotlib figure under the cell (PNG, 100 dpi) and close it; or a PNG file the cell wrote (a
        path: what the package's own ``plot(path)`` methods draw)."""
        if isinstance(fig, (str, os.PathLike)):
            self.figures.append(Path(self.dir, fig).read_bytes())
            return
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=100)
        self.figures.append(buf.getvalue())
        try:
            import matplotlib.pyplot as plt

            plt.close(fig)
        except ImportError:  # pragma: no cover - a figure without pyplot
            pass

    def close(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)


@contextlib.contextmanager
def _inside(path: str) -> Any:
    old = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


def _run_python(code: str, page: _Page, filename: str) -> str:
    """Run ``code`` in the page's namespace; the text it printed, then the repr of a final expression."""
    tree = ast.parse(code, filename=filename, mode="exec")
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr) and not code.rstrip().endswith(";"):
        last = ast.Expression(tree.body.pop().value)
    out = io.StringIO()
    with _inside(page.dir), contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        exec(compile(tree, filename, "exec"), page.namespace)
        if last is not None:
            value = eval(compile(last, filename, "eval"), page.namespace)
            if value is not None:
                print(repr(value))
    return out.getvalue()


def _run_bash(code: str, page: _Page) -> tuple[int, str]:
    env = dict(os.environ, PATH=_bin() + os.pathsep + os.environ.get("PATH", ""), COLUMNS="88")
    env.setdefault("MPLBACKEND", "Agg")
    proc = subprocess.run(
        ["bash", "-e", "-c", code], cwd=page.dir, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL
    )
    return proc.returncode, proc.stdout + proc.stderr


class CodeCell(SphinxDirective):
    """``{code-cell} [python|bash]``: run the content, show it and its output."""

    has_content = True
    optional_arguments = 1
    option_spec = {
        "raises": directives.unchanged_required,
        "returncode": directives.nonnegative_int,
        "hide-code": directives.flag,
        "hide-output": directives.flag,
    }

    def run(self) -> list[nodes.Node]:
        language = (self.arguments[0] if self.arguments else "python").lower()
        if language not in ("python", "python3", "ipython3", "bash", "sh", "console"):
            raise self.error(f"code-cell: language {language!r}: python or bash")
        shell = language in ("bash", "sh", "console")
        code = "\n".join(self.content)
        docname = self.env.docname
        self.env.ag_exec_docs = getattr(self.env, "ag_exec_docs", set()) | {docname}
        source, line = self.get_source_info()
        shown: list[nodes.Node] = []
        if "hide-code" not in self.options:
            block = nodes.literal_block(code, code, language="bash" if shell else "python")
            block["classes"].append("ag-cell-input")
            shown.append(block)
        if not _RUN["cells"]:
            return shown
        page = self.env.temp_data.get("ag_exec_page")
        if page is None:
            page = self.env.temp_data["ag_exec_page"] = _Page()
        page.cells += 1
        where = f"{docname}, cell {page.cells} (line {line})"
        t0 = time.perf_counter()
        output = self._execute(code, shell, page, where)
        page.seconds += time.perf_counter() - t0
        if output.strip() and "hide-output" not in self.options:
            block = nodes.literal_block(output.rstrip("\n"), output.rstrip("\n"), language="none")
            block["classes"].append("ag-cell-output")
            shown.append(block)
        for png in page.figures:
            uri = "data:image/png;base64," + base64.b64encode(png).decode("ascii")
            shown.append(nodes.image(uri=uri, alt=f"figure of {where}", classes=["ag-cell-figure"]))
        page.figures.clear()
        return shown

    def _execute(self, code: str, shell: bool, page: _Page, where: str) -> str:
        if shell:
            status, output = _run_bash(code, page)
            expected = self.options.get("returncode", 0)
            if status != expected:
                raise CellError(f"{where}: exit status {status} (expected {expected})\n$ {code}\n{output}")
            return output
        raises = self.options.get("raises")
        try:
            output = _run_python(code, page, f"<{where}>")
        except Exception as exc:
            if raises and type(exc).__name__ == raises:
                return f"{type(exc).__name__}: {exc}\n"
            detail = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
            raise CellError(f"{where} raised {type(exc).__name__}\n{code}\n{detail}") from exc
        if raises:
            raise CellError(f"{where}: expected {raises}, nothing was raised\n{code}")
        return output


def _doctree_read(app: Sphinx, doctree: nodes.document) -> None:
    page = app.env.temp_data.pop("ag_exec_page", None)
    if page is None:
        return
    page.close()
    times = getattr(app.env, "ag_exec_times", {})
    times[app.env.docname] = (page.cells, page.seconds)
    app.env.ag_exec_times = times


def _outdated(app: Sphinx, env: Any, added: set[str], changed: set[str], removed: set[str]) -> list[str]:
    # pages with cells run against the package as it is now: read them again on every build
    return sorted(d for d in getattr(env, "ag_exec_docs", set()) if d in env.found_docs and d not in removed)


def _purge(app: Sphinx, env: Any, docname: str) -> None:
    getattr(env, "ag_exec_docs", set()).discard(docname)


def _finished(app: Sphinx, exception: BaseException | None) -> None:
    times = getattr(app.env, "ag_exec_times", {})
    if exception is None and times:
        total = sum(s for _, s in times.values())
        for doc, (cells, seconds) in sorted(times.items()):
            log.info(f"ag_exec: {doc}: {cells} cells in {seconds:.1f} s")
        log.info(f"ag_exec: {len(times)} pages, {total:.1f} s in all")
    app.env.ag_exec_times = {}


def setup(app: Sphinx) -> dict[str, Any]:
    os.environ.setdefault("MPLBACKEND", "Agg")
    app.add_config_value("ag_exec_builders", ["html", "dirhtml", "singlehtml"], "env")
    app.add_directive("code-cell", CodeCell)
    app.connect("builder-inited", _builder_inited)
    app.connect("doctree-read", _doctree_read)
    app.connect("env-get-outdated", _outdated)
    app.connect("env-purge-doc", _purge)
    app.connect("build-finished", _finished)
    return {"version": "1", "parallel_read_safe": False, "parallel_write_safe": True}
