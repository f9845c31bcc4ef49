"""The documentation site as a reader sees it, in a real browser (issue 47, item 1).

Headless Chromium opens the built pages from ``file://`` (the browser resolves no host name: nothing can leave the
machine) and takes screenshots of the front page, the API reference and a page of mathematics, and dumps each
page's DOM after its scripts ran.  A page fails when it loads a script, a style sheet, a font or an image from
another host (in its HTML or inserted by a script) or when its visible text still shows TeX (``\\(``, ``\\[``,
``\\mathbb``, ...): MathJax is shipped with the pages (docs/_ext/ag_mathjax.py), so mathematics renders offline.

The pages are ``docs/_build/html`` when it is newer than every page source of the site (``make test`` builds it
just before pytest: ``make docs-build``), else the site is built into a temporary directory (about a minute).  Skipped,
saying why, where no Chromium is found, unless ``AG_ATTENTION_REQUIRE_CHROMIUM=1`` (``make test`` sets it when its
set-up installed Chromium, scripts/setup-browser.sh): then a failure.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import struct
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlparse

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
BUILT = DOCS / "_build" / "html"
#: the front page, the API reference and a page of mathematics (Theorem 3.4: \mathcal M \subset \mathbb R^N)
PAGES = ("index.html", "api.html", "math/geometry.html")

# (found, not imported: pydata_sphinx_theme takes half a second, in every pytest-xdist worker while it collects)
for _name in ("sphinx", "pydata_sphinx_theme"):
    if importlib.util.find_spec(_name) is None:
        pytest.skip(f"could not import {_name!r}", allow_module_level=True)


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if found := shutil.which(name):
            return found
    reason = "no Chromium on PATH (Debian: apt-get install chromium; make test's set-up installs it)"
    if os.environ.get("AG_ATTENTION_REQUIRE_CHROMIUM", "") not in ("", "0"):
        pytest.fail(reason + " and AG_ATTENTION_REQUIRE_CHROMIUM=1")
    pytest.skip(reason)


def _browse(chromium: str, url: str, *args: str) -> bytes:
    """Chromium's output for ``url`` after its scripts ran (10 s of virtual time), with no host name resolving: one
    start of the browser can both dump the DOM and take the screenshot."""
    command = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run"]
    command += ["--host-resolver-rules=MAP * ~NOTFOUND", "--virtual-time-budget=10000", "--window-size=1280,900"]
    proc = subprocess.run([*command, *args, url], capture_output=True, timeout=120)
    assert proc.returncode == 0, f"chromium {args} {url}: exit {proc.returncode}\n{proc.stderr.decode()[-2000:]}"
    return proc.stdout


class _Page(HTMLParser):
    """The URLs a page loads (scripts, style sheets, preloads, icons, images, frames) and its visible text: neither
    in code (``pre``, ``code``), nor in scripts and styles, nor in MathJax's rendered output (``mjx-container``)."""

    HIDDEN = {"script", "style", "pre", "code", "mjx-container", "textarea", "noscript", "template"}

    def __init__(self) -> None:
        super().__init__()
        self.loads: list[str] = []
        self.text: list[str] = []
        self.math = 0
        self.inside: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag in ("script", "img", "iframe", "source", "audio", "video") and a.get("src"):
            self.loads.append(a["src"])
        if tag == "link" and a.get("href") and set(a.get("rel", "").split()) & {"stylesheet", "preload", "icon"}:
            self.loads.append(a["href"])
        self.math += tag == "mjx-container"
        if tag in self.HIDDEN:
            self.inside.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in self.inside:
            del self.inside[len(self.inside) - 1 - self.inside[::-1].index(tag) :]

    def handle_data(self, data: str) -> None:
        if not self.inside:
            self.text.append(data)


def read_page(html: str) -> _Page:
    page = _Page()
    page.feed(html)
    page.close()
    return page


def foreign(page: _Page) -> list[str]:
    """The URLs of ``page`` that name a host (``https://...``, ``//cdn...``): every other one is the site's own."""
    return [url for url in page.loads if urlparse(url).scheme not in ("", "file", "data") or url.startswith("//")]


#: TeX left for the reader: MathJax's delimiters, or a control word (a backslash and letters) outside code
RAW_TEX = re.compile(r"\\[(\[]|\\[A-Za-z]{2,}")


def raw_tex(page: _Page) -> list[str]:
    text = " ".join(page.text)
    return [text[max(0, m.start() - 40) : m.end() + 40] for m in RAW_TEX.finditer(text)]


def _stale(site: Path) -> bool:
    """True when a page source of the site (docs/**/*.md, *.rst, *.py outside _build) is newer than every page:
    Sphinx rewrites the pages of a changed source, so a site built after the last edit has a newer page."""
    pages = list(site.rglob("*.html"))
    if not pages:
        return True
    sources = [p for p in DOCS.rglob("*") if p.suffix in (".md", ".rst", ".py") and "_build" not in p.parts]
    return max(p.stat().st_mtime for p in sources) > max(p.stat().st_mtime for p in pages)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The built HTML: docs/_build/html when up to date, else a fresh build (the HTML builder of make docs-build)."""
    if not _stale(BUILT):
        return BUILT
    out = tmp_path_factory.mktemp("site") / "html"
    proc = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-n", "-q", "-b", "html", str(DOCS), str(out)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def test_the_site_renders_offline_in_a_browser(site: Path, tmp_path: Path) -> None:
    """Screenshots of the three pages (1280 x 900, not blank) and their DOM after the scripts ran: every load is
    the site's own, the mathematics is MathJax's output, and no TeX is left in the visible text."""
    chromium = _chromium()
    shots = tmp_path / "screenshots"
    shots.mkdir()

    def visit(page: str) -> tuple[str, str, Path]:
        url = (site / page).as_uri()
        png = shots / (page.replace("/", "-").removesuffix(".html") + ".png")
        return page, _browse(chromium, url, "--dump-dom", f"--screenshot={png}").decode(), png

    with ThreadPoolExecutor(max_workers=2) as pool:
        visited = list(pool.map(visit, PAGES))
    for page, dom, png in visited:
        built = read_page((site / page).read_text())
        rendered = read_page(dom)
        assert foreign(built) == [], f"{page} loads from another host: {foreign(built)}"
        assert foreign(rendered) == [], f"{page}, once its scripts ran, loads from another host: {foreign(rendered)}"
        assert raw_tex(rendered) == [], f"{page} shows raw TeX: {raw_tex(rendered)}"
        assert png.is_file() and _png_size(png.read_bytes()) == (1280, 900), f"{png}: no 1280 x 900 screenshot"
        assert png.stat().st_size > 20_000, f"{png}: {png.stat().st_size} bytes, a blank page?"
    math = dict((page, read_page(dom).math) for page, dom, _ in visited)
    assert math["math/geometry.html"] > 50 and math["index.html"] > 5, f"MathJax's output (mjx-container): {math}"
    loads = read_page((site / "math/geometry.html").read_text()).loads
    assert any("_static/mathjax/tex-chtml-full.js" in url for url in loads), f"no shipped MathJax in {loads}"
    assert (site / "_static/mathjax/output/chtml/fonts/woff-v2/MathJax_Main-Regular.woff").is_file()


def test_a_cdn_and_unrendered_tex_are_caught(tmp_path: Path) -> None:
    """The checks above can fail: a page of plain sphinx.ext.mathjax (MathJax from a CDN, which the browser cannot
    reach here) names the CDN and, opened in the browser, still shows its TeX."""
    chromium = _chromium()
    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text("extensions = ['sphinx.ext.mathjax']\n")
    (src / "index.rst").write_text("T\n=\n\nThe neuromanifold :math:`\\mathcal M \\subset \\mathbb R^N`.\n")
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "sphinx", "-q", "-b", "html", str(src), str(out)], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    built = read_page((out / "index.html").read_text())
    assert any("mathjax" in url.lower() for url in foreign(built)), built.loads
    rendered = read_page(_browse(chromium, (out / "index.html").as_uri(), "--dump-dom").decode())
    assert rendered.math == 0
    assert any("\\mathcal M" in hit for hit in raw_tex(rendered)), rendered.text
