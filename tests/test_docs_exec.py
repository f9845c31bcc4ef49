"""The documentation's executed tutorials and generated reference pages (docs/_ext/ag_exec.py, ag_cli.py).

`make test` builds the site (`make docs-build`), which runs every ``{code-cell}`` of docs/tutorials/ and fails on
an exception.  These tests check that mechanism on small throw-away projects (a failing cell fails the build,
output is shown, a cell meant to fail must fail), that every tutorial is in the toctree, and that the CLI page
lists every command of the parser.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"

sphinx = pytest.importorskip("sphinx")
pytest.importorskip("myst_parser")


def _build(tmp_path: Path, page: str, builder: str = "html") -> tuple[int, str, str]:
    """Build a one-page project with the extensions (a fresh process, as `make docs` runs Sphinx)."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text(
        "import sys\n"
        f"sys.path.insert(0, {str(DOCS / '_ext')!r})\n"
        "extensions = ['myst_parser', 'ag_exec', 'ag_cli']\n"
        "ag_exec_builders = ['html']\n"
    )
    (src / "index.md").write_text(page)
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "-q", "-E", "-b", builder, str(src), str(out)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    html = (out / "index.html").read_text() if (out / "index.html").exists() else ""
    return proc.returncode, html, proc.stdout + proc.stderr


def test_cells_run_and_show_their_output(tmp_path: Path) -> None:
    page = (
        "# T\n\n```{code-cell} python\nx = 6 * 7\nprint('printed', x)\nx + 1\n```\n\n"
        "```{code-cell} python\nx;\n```\n\n"
        "```{code-cell} bash\necho from bash; pwd > where.txt\n```\n\n"
        "```{code-cell} python\nprint(open('where.txt').read() != '')\n```\n\n"
        "```{code-cell} python\n:raises: ZeroDivisionError\n1 / 0\n```\n\n"
        "```{code-cell} bash\n:returncode: 3\nexit 3\n```\n"
    )
    code, html, warnings = _build(tmp_path, page)
    assert code == 0, warnings
    assert "printed 42" in html and "43" in html and "from bash" in html
    assert "ZeroDivisionError: division by zero" in html
    assert html.count("ag-cell-output") == 4  # nothing for the cell ending in ";" and the silent exit 3


def test_show_puts_a_figure_or_a_png_file_on_the_page(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    page = (
        "# T\n\n```{code-cell} python\nimport matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\n"
        "fig, ax = plt.subplots()\nax.plot([0, 1])\nfig.savefig('drawn.png')\nshow(fig)\nshow('drawn.png')\n```\n"
    )
    code, html, warnings = _build(tmp_path, page)
    assert code == 0, warnings
    assert html.count("data:image/png;base64,") == 2


def test_a_failing_cell_fails_the_build(tmp_path: Path) -> None:
    code, _, message = _build(tmp_path, "# T\n\n```{code-cell} python\nraise ValueError('the tutorial rotted')\n```\n")
    assert code != 0
    assert "index, cell 1" in message and "the tutorial rotted" in message


def test_a_failing_shell_cell_fails_the_build(tmp_path: Path) -> None:
    code, _, message = _build(tmp_path, "# T\n\n```{code-cell} bash\nfalse\n```\n")
    assert code != 0 and "exit status 1" in message


def test_a_cell_meant_to_fail_must_fail(tmp_path: Path) -> None:
    code, _, message = _build(tmp_path, "# T\n\n```{code-cell} python\n:raises: ValueError\n1 + 1\n```\n")
    assert code != 0 and "nothing was raised" in message


def test_other_builders_show_the_code_without_running_it(tmp_path: Path) -> None:
    code, _, warnings = _build(tmp_path, "# T\n\n```{code-cell} python\nraise ValueError\n```\n", builder="text")
    assert code == 0, warnings


def test_every_tutorial_is_in_the_toctree() -> None:
    index = (DOCS / "tutorials" / "index.md").read_text()
    toctree = re.search(r"```\{toctree\}(.*?)```", index, re.S)
    assert toctree is not None
    listed = {line.strip() for line in toctree.group(1).splitlines() if line.strip() and ":" not in line}
    pages = {p.stem for p in (DOCS / "tutorials").glob("*.md")} - {"index"}
    assert pages == listed
    assert "tutorials/index" in (DOCS / "index.md").read_text()
    for page in pages:
        assert "{code-cell}" in (DOCS / "tutorials" / f"{page}.md").read_text(), page


def test_every_gallery_example_is_listed_says_what_it_proves_and_draws_or_says_stored() -> None:
    """docs/gallery/: at least eight examples, each in the toctree and the index's table, each saying what it proves,
    and each drawing its figure at build time (a ``{code-cell}`` calling ``show``) or showing a stored one and
    saying so, with the command that recomputes it."""
    index = (DOCS / "gallery" / "index.md").read_text()
    toctree = re.search(r"```\{toctree\}(.*?)```", index, re.S)
    assert toctree is not None
    listed = {line.strip() for line in toctree.group(1).splitlines() if line.strip() and ":" not in line}
    pages = {p.stem for p in (DOCS / "gallery").glob("*.md")} - {"index"}
    assert pages == listed and len(pages) >= 8
    assert "gallery/index" in (DOCS / "index.md").read_text()
    for page in sorted(pages):
        text = (DOCS / "gallery" / f"{page}.md").read_text()
        label = re.match(r"\((gallery-[\w-]+)\)=", text)
        assert label is not None and f"{{ref}}`{label.group(1)}`" in index, f"{page}: not in the index's table"
        assert "**What it proves.**" in text, f"{page} does not say what it proves"
        draws = re.search(r"```\{code-cell\} python\n(?:(?!```).)*\bshow\(", text, re.S) is not None
        stored = "```{image}" in text and "**stored**" in text and "ag-attention reproduce" in text
        assert draws or stored, f"{page}: no figure drawn by a cell, nor a stored one said to be stored"


def test_every_manual_page_is_in_the_toctree_and_the_readme_links_it() -> None:
    """The manual (docs/manual/) holds what the README used to: every page is in its toctree and the README's map."""
    index = (DOCS / "manual" / "index.md").read_text()
    toctree = re.search(r"```\{toctree\}(.*?)```", index, re.S)
    assert toctree is not None
    listed = {line.strip() for line in toctree.group(1).splitlines() if line.strip() and ":" not in line}
    pages = {p.stem for p in (DOCS / "manual").glob("*.md")} - {"index"}
    assert pages == listed
    assert "manual/index" in (DOCS / "index.md").read_text()
    readme = (ROOT / "README.md").read_text()
    for page in pages:
        assert f"(docs/manual/{page}.md)" in readme, f"the README's map omits docs/manual/{page}.md"


def test_the_cli_page_has_every_command(tmp_path: Path) -> None:
    from ag_attention._cli import build_parser

    code, html, warnings = _build(tmp_path, "# CLI\n\n```{ag-cli}\n```\n")
    assert code == 0, warnings
    commands = re.findall(r"^    (\S+)\s", build_parser().format_help(), re.M)
    assert "point" in commands and "sweep" in commands
    for command in commands:
        assert f'id="cli-{command}"' in html, command
    assert "usage: ag-attention sweep" in html


def test_the_grid_page_is_the_module_docstring(tmp_path: Path) -> None:
    code, html, warnings = _build(tmp_path, "# Grid\n\n```{ag-docstring} ag_attention._sweep.grid\n```\n")
    assert code == 0, warnings
    assert "[product]" in html and "MAX_GRID_BYTES" in html
