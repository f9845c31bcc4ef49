"""Helpers shared by test modules (plain functions and classes; the fixtures are in conftest.py files)."""

from __future__ import annotations

import importlib
import importlib.util
import io
import os
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[1]
#: files the tests read (golden values, recorded Macaulay2 output)
DATA = ROOT / "tests" / "data"


class lazy_import:  # noqa: N801 (it stands for a module)
    """A module imported at its first attribute (``sympy = lazy_import("sympy")``): a test module that needs a heavy
    library (sympy, matplotlib, Dask's distributed: about 0.5 s each) does not import it while pytest collects, in
    every pytest-xdist worker, only in the worker that runs a test using it."""

    def __init__(self, name: str):
        self.module_name = name

    def __getattr__(self, attr: str):
        if attr.startswith("_"):  # pytest's questions while it collects (__test__, pytestmark, ...): not the module's
            raise AttributeError(attr)
        return getattr(importlib.import_module(self.module_name), attr)


def skip_unless_installed(*names: str, reason: str | None = None) -> None:
    """``pytest.importorskip`` for a test module's libraries, at the module's top, without importing them: found is
    enough while pytest collects (each worker of pytest-xdist collects every module); the tests import them."""
    for name in names:
        if importlib.util.find_spec(name) is None:
            pytest.skip(reason or f"could not import {name!r}", allow_module_level=True)


def _test_seed() -> int:
    text = os.environ.get("AG_ATTENTION_TEST_SEED", "").strip()
    if text and not (text.isascii() and text.isdigit()):
        raise ValueError(f"AG_ATTENTION_TEST_SEED={text!r}: must be a non-negative integer (or unset)")
    return int(text) if text else 0


#: AG_ATTENTION_TEST_SEED moves every random point the randomized tests use (the ``rng`` fixture, ``seed()`` and
#: ``generator()`` below), so the suite can run on other points (scripts/numeric-variations.sh); 0 or unset: the
#: usual points.  A test whose expected value depends on the point computes it; it never hard-codes it.
TEST_SEED = _test_seed()


def seed(base: int = 0) -> int:
    """The ``seed=`` a test passes to an engine: ``base``, moved by ``AG_ATTENTION_TEST_SEED``."""
    return base + TEST_SEED


def generator(base: int) -> np.random.Generator:
    """A seeded generator for a test's own random points: ``default_rng(base)``, another one under
    ``AG_ATTENTION_TEST_SEED``."""
    return np.random.default_rng(base if TEST_SEED == 0 else [base, TEST_SEED])


def processes_matching(text: str) -> list[str]:
    out = subprocess.run(["ps", "-ww", "-eo", "pid,args"], capture_output=True, text=True).stdout
    return [ln for ln in out.splitlines()[1:] if text in ln and "ps -ww -eo" not in ln]


class Terminal(io.StringIO):
    """A standard error that says it is a terminal (progress bars show on it)."""

    def isatty(self):
        return True


def _executable(path: Path, text: str) -> str:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path)


#: what a fake ``M2`` answers to the version query (``M2 --script job.m2`` with ``version#`` in job.m2)
FAKE_VERSION = 'if [ "$(head -c 100 "$2" 2>/dev/null)" = \'print version#"VERSION";\' ]; then echo fake; exit 0; fi\n'


def fake_m2(tmp_path: Path, body: str, *, version: bool = True):
    """A LocalBackend whose ``M2`` is a shell script running ``body``, each job a fresh process (no sessions).

    With ``version`` the script answers the version query with ``fake`` (the query is not what these tests
    are about); without it the query runs ``body`` too.
    """
    from ag_attention._m2 import runner

    exe = _executable(tmp_path / "M2", "#!/bin/sh\n" + (FAKE_VERSION if version else "") + body + "\n")
    return runner.LocalBackend(exe, sessions=False)  # a script, not a Macaulay2 that could hold a session


def ok_m2(tmp_path: Path, payload: str = '{"x": 1}'):
    """A fake ``M2`` printing ``payload`` between the result markers."""
    from ag_attention._m2.parse import BEGIN, END

    return fake_m2(tmp_path, f'echo "{BEGIN}"; echo \'{payload}\'; echo "{END}"')


def fake_msolve(tmp_path: Path, body: str) -> str:
    """The path of a fake ``msolve``: a bash script running ``body``."""
    return _executable(tmp_path / "msolve", "#!/bin/bash\n" + body + "\n")


def no_backends(monkeypatch) -> None:
    """No Macaulay2 anywhere: local and wheel backends without M2 and a container backend without an engine."""
    from ag_attention._m2 import runner

    monkeypatch.setattr(
        runner,
        "default_backends",
        {
            "local": runner.LocalBackend("/nonexistent/M2"),
            "wheel": runner.WheelBackend("/nonexistent/sage_wheels/bin/M2"),
            "container": runner.ContainerBackend(engine=""),
        },
    )


def run_cli(*args):
    """``python -m ag_attention._cli ARGS`` in a subprocess (exit status, standard output and error)."""
    return subprocess.run([sys.executable, "-m", "ag_attention._cli", *args], capture_output=True, text=True)


#: any value a user might pass where a size, a flag or a number is expected (property tests)
ANY_VALUE = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 10),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=4),
    st.lists(st.integers(-2, 6), max_size=4),
    st.tuples(st.integers(-2, 6), st.integers(-2, 6)),
    st.frozensets(st.integers(1, 5), max_size=3),
    st.dictionaries(st.text(max_size=2), st.integers(), max_size=2),
)


#: AG_ATTENTION_SLOW_TESTS=1 asks for the tests marked by :func:`slow_unless_asked`
SLOW_TESTS_ASKED = os.environ.get("AG_ATTENTION_SLOW_TESTS", "") not in ("", "0")


def slow_unless_asked(test):
    """Marked ``slow`` and skipped unless ``AG_ATTENTION_SLOW_TESTS=1``: the full sizes of a reproduction, whose
    command (``ag-attention reproduce ...``) makes the same checks."""
    skip = pytest.mark.skipif(
        not SLOW_TESTS_ASKED,
        reason="slow: AG_ATTENTION_SLOW_TESTS=1 runs it (the reproduction's command makes the same check)",
    )
    return pytest.mark.slow(skip(test))


def square_point(S, rng, real=False):
    """A random point of the square system ``S`` and a random chart it is expressed in: (theta, chart, A, V)."""
    d, e = S.d, S.e
    A = rng.standard_normal((1, d, d)) + (0 if real else 1j * rng.standard_normal((1, d, d)))
    if S.charted:
        A = np.matmul(A[:, :, : S.a], A[:, : S.a, :])
    V = rng.standard_normal((1, e, d)) + (0 if real else 1j * rng.standard_normal((1, e, d)))
    chart = S.random_chart(rng, real=real)[None, :]
    theta = S.pack(A, V, chart)
    theta[:, -1] = 0.3 * (rng.standard_normal() + 1j * rng.standard_normal())
    return theta, chart, A, V


def deep_weights(zero_row: bool) -> dict[str, np.ndarray]:
    """Integer weights of a two-layer network (d = 3, d' = 2); ``zero_row``: the second layer's Q loses a row."""
    rng = generator(1)
    w = {}
    for layer in range(2):
        w[f"layers.{layer}.heads.0.Q"] = rng.integers(-3, 4, (2, 3))
        w[f"layers.{layer}.heads.0.K"] = rng.integers(-3, 4, (2, 3))
        w[f"layers.{layer}.heads.0.V"] = rng.integers(-3, 4, (3, 3))
    if zero_row:
        w["layers.1.heads.0.Q"][1] = 0
    return w


def old_counting_primes(seed: int) -> tuple[int, int]:
    """The two primes the ED-degree counts drew before issue 46 (the same for every input that no prime of the
    range divides a coefficient of): popped from the primes in ``[2^14, 2^15)`` by ``random.Random(seed)``."""
    import random

    lo, hi = 2**14, 2**15
    sieve = bytearray([1]) * hi
    for i in range(2, int(hi**0.5) + 1):
        if sieve[i]:
            sieve[i * i :: i] = bytearray(len(sieve[i * i :: i]))
    candidates = [q for q in range(lo, hi) if sieve[q]]
    rng = random.Random(seed)
    p = candidates.pop(rng.randrange(len(candidates)))
    return p, candidates.pop(rng.randrange(len(candidates)))


def small_primes(lo: int, hi: int) -> list[int]:
    """The primes in ``[lo, hi)`` (a small range), by trial division."""
    return [q for q in range(max(lo, 2), hi) if all(q % d for d in range(2, int(q**0.5) + 1))]


# ------------------------------------------------------------------ figures fit for papers and talks (issue 47, 6)
#: the smallest figure the package draws, inches, and the smallest PNG it writes, pixels
MIN_FIGURE_INCHES = (4.0, 3.0)
MIN_PNG_PIXELS = (400, 300)


def figure_defects(fig) -> list[str]:
    """What keeps ``fig`` (a matplotlib Figure) from a paper or a talk, as sentences (``[]``: none).

    Draws it on its Agg canvas, recording every text artist actually drawn (tick labels of ticks outside the view
    are not), then checks: the size is at least :data:`MIN_FIGURE_INCHES`; every drawn text's window extent lies
    within the canvas (nothing clipped: titles, labels, colour-bar labels, legends, notes); every axes has an x and
    a y label (3-D: a z label too; colour bars and pie-like axes without ticks aside); and every line with a
    dashed or dotted style has an entry of the same style and colour in a legend of the figure.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.colors import to_rgba
    from matplotlib.text import Text

    problems: list[str] = []
    w, h = fig.get_size_inches()
    if w < MIN_FIGURE_INCHES[0] - 1e-9 or h < MIN_FIGURE_INCHES[1] - 1e-9:
        problems.append(f"size {w:.2f} x {h:.2f} in, below {MIN_FIGURE_INCHES[0]} x {MIN_FIGURE_INCHES[1]}")
    drawn: list[Text] = []
    draw = Text.draw

    def spy(self, renderer):  # the real drawing, noting which texts it draws
        drawn.append(self)
        return draw(self, renderer)

    if not hasattr(fig.canvas, "get_renderer"):  # a pyplot figure closed already: drawn on a canvas of its own
        FigureCanvasAgg(fig)
    Text.draw = spy
    try:
        fig.canvas.draw()
    finally:
        Text.draw = draw
    renderer = fig.canvas.get_renderer()
    width, height = fig.canvas.get_width_height()
    for text in drawn:
        if not text.get_visible() or not text.get_text().strip():
            continue
        box = text.get_window_extent(renderer)
        if box.x0 < -1 or box.y0 < -1 or box.x1 > width + 1 or box.y1 > height + 1:
            problems.append(
                f"text {text.get_text()[:60]!r} at ({box.x0:.0f}, {box.y0:.0f})-({box.x1:.0f}, {box.y1:.0f}) "
                f"outside the {width} x {height} canvas"
            )
    for ax in fig.axes:
        if ax.get_label() == "<colorbar>" or not ax.get_visible():
            continue
        for name in ("x", "y", "z") if hasattr(ax, "get_zlabel") else ("x", "y"):
            labels = [t for t in getattr(ax, f"get_{name}ticklabels")() if t.get_text()]
            shown = any(t.get_visible() for t in labels)  # a shared axis without its tick labels needs no label
            if shown and not getattr(ax, f"get_{name}label")().strip():
                problems.append(f"axes {ax.get_title()[:40]!r}: no {name} label")
    legends = [a.get_legend() for a in fig.axes if a.get_legend() is not None] + list(fig.legends)
    entries = {
        (str(handle.get_linestyle()), to_rgba(handle.get_color()))
        for legend in legends
        for handle in legend.legend_handles
        if hasattr(handle, "get_linestyle") and hasattr(handle, "get_color")
    }
    for ax in fig.axes:
        for line in ax.get_lines():
            style = line.get_linestyle()
            if style in ("-", "None", "none", "", " ") or not line.get_visible():
                continue
            if (str(style), to_rgba(line.get_color())) not in entries:
                problems.append(
                    f"axes {ax.get_title()[:40]!r}: a {style} line of colour {line.get_color()} ({line.get_label()!r}) "
                    "has no legend entry"
                )
    return problems


def png_pixels(path) -> tuple[int, int]:
    """The width and height of a PNG file (its IHDR chunk)."""
    data = Path(path).read_bytes()[:24]
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR", path
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


def assert_vector_files(*paths) -> None:
    """Each path exists, is not empty, and parses: an SVG as XML with an ``svg`` root, a PDF from ``%PDF-`` to its
    ``%%EOF``."""
    import xml.etree.ElementTree as ET

    for path in map(Path, paths):
        data = path.read_bytes()
        assert data, f"{path} is empty"
        if path.suffix == ".svg":
            assert ET.fromstring(data).tag.endswith("svg"), path
        elif path.suffix == ".pdf":
            assert data.startswith(b"%PDF-") and data.rstrip().endswith(b"%%EOF"), path
        else:
            raise AssertionError(f"{path}: not a vector format")
