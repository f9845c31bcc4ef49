"""Every ```python block of the documentation runs as printed, or says why not (issue 47, item 5).

The ``{doctest}`` blocks are run by the doctest builder (``make docs-build``) and the tutorials' ``{code-cell}``
blocks by the HTML build (tests/test_docs_exec.py).  A plain ```python block of docs/*.md, docs/manual/*.md or
docs/math/*.md is run here, on its own (its imports in the block), in a temporary directory, unless the line
before its fence says otherwise (docs/developer.md, "Examples in the documentation"):

* ``<!-- not run: REASON -->``: shown only; the reason is required;
* ``<!-- run: needs Macaulay2 -->``: run where Macaulay2 is found (``backend="auto"``), else skipped with the
  reason (a failure with ``AG_ATTENTION_REQUIRE_M2=1``, as ``make test`` sets).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.glob("*.md")) + sorted((DOCS / "manual").glob("*.md")) + sorted((DOCS / "math").glob("*.md"))

FENCE = re.compile(r"^```(?:python3?|py|pycon)[ \t]*\n(.*?)^```[ \t]*$", re.M | re.S)
MARKER = re.compile(r"^<!--\s*(not run|run):\s*(.*?)\s*-->$")
#: what a ``<!-- run: ... -->`` block may need
NEEDS = {"needs Macaulay2"}


@dataclass(frozen=True)
class Block:
    page: str
    line: int
    code: str
    marker: str  # "", "not run" or "run"
    reason: str

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


def blocks() -> list[Block]:
    found = []
    for page in PAGES:
        text = page.read_text()
        for m in FENCE.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            before = text[: m.start()].rstrip("\n").rsplit("\n", 1)[-1].strip()
            mark = MARKER.match(before)
            kind, reason = (mark.group(1), mark.group(2)) if mark else ("", "")
            found.append(Block(str(page.relative_to(ROOT)), line, m.group(1), kind, reason))
    return found


RUN = [b for b in blocks() if b.marker != "not run"]


def test_every_block_is_run_or_says_why_not() -> None:
    assert blocks(), "no ```python block found: the pattern is broken"
    for b in blocks():
        if b.marker == "not run":
            assert b.reason, f"{b.where}: <!-- not run: REASON --> needs its reason"
        elif b.marker == "run":
            assert b.reason in NEEDS, f"{b.where}: <!-- run: {b.reason} -->: the test knows {sorted(NEEDS)}"


def test_the_markers_are_read() -> None:
    """A marker separated from its fence, or misspelt, is no marker: the block runs (and the test sees it)."""
    assert MARKER.match("<!-- not run: needs a Dask cluster -->")
    assert MARKER.match("<!-- run: needs Macaulay2 -->")
    assert not MARKER.match("<!-- not-run -->")


def _macaulay2() -> None:
    from ag_attention._errors import M2NotFoundError
    from ag_attention._m2.runner import get_backend

    try:
        get_backend("auto")
    except M2NotFoundError as e:
        if os.environ.get("AG_ATTENTION_REQUIRE_M2", "") not in ("", "0"):
            pytest.fail(f"Macaulay2 required but unavailable: {e}")
        pytest.skip(f"no Macaulay2: {e}")


@pytest.mark.parametrize("block", RUN, ids=[b.where for b in RUN])
def test_the_block_runs(block: Block, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if block.reason == "needs Macaulay2":
        _macaulay2()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AG_ATTENTION_CACHE_DIR", str(tmp_path / "cache"))
    code = compile(block.code, block.where, "exec")
    exec(code, {"__name__": "__docs__"})  # the documentation's own example, as a reader pastes it
