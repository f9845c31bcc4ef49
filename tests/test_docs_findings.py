"""The cheap findings of docs/manual/findings.md, recomputed: a sentence whose numbers the package no longer computes
fails here (issue 46, item 5).

Each entry is a sentence of the page with its numbers as ``{}`` fields and the function that computes them: the
sentence is filled with what the package computes *now* and must appear on the page (whitespace aside).  A change
of the mathematics or of the page that makes them disagree fails; so does a page edit that drops the sentence.  The
expensive findings (sweeps of thousands of networks, Macaulay2 ideals) are rerun by their commands, named on the
page, and by their reproductions' own tests.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from ag_attention import Architecture, Rotary, dimension, expected_dimension

PAGE = Path(__file__).resolve().parents[1] / "docs" / "manual" / "findings.md"


def _arch(widths: str, ranks: str, tokens: int = 2, **kw: object) -> Architecture:
    return Architecture(
        tuple(map(int, widths.split(","))),
        tuple(map(int, ranks.split(","))),
        tokens=tokens,
        **kw,  # type: ignore[arg-type]
    )


def _dim(widths: str, ranks: str, tokens: int = 2, **kw: object) -> int:
    """The dimension, certified (a finding quotes only proven values as equalities)."""
    r = dimension(_arch(widths, ranks, tokens, **kw))
    assert r.upper_bound == r.dimension, f"{widths} ranks {ranks}: {r.dimension} is not certified"
    return r.dimension


def _formula(widths: str, ranks: str, tokens: int = 2) -> int:
    value = expected_dimension(_arch(widths, ranks, tokens)).value
    assert value is not None
    return value


def _symmetries(widths: str, ranks: str, tokens: int = 2, **kw: object) -> int:
    """What the symmetries give: parameters minus the dimension of the known symmetries' orbits."""
    r = dimension(_arch(widths, ranks, tokens, **kw))
    return r.parameters - r.symmetry_count


def _open(widths: str, ranks: str, **kw: object) -> tuple[int, int]:
    r = dimension(_arch(widths, ranks, **kw))
    assert r.dimension < r.upper_bound, f"{widths} ranks {ranks} is certified now: the page calls it open"
    return r.dimension, r.upper_bound


FINDINGS: list[tuple[str, Callable[[], tuple[object, ...]]]] = [
    (
        "`4,2,4,4` ranks `2,2,2` has dimension {} (exact), formula {}",
        lambda: (_dim("4,2,4,4", "2,2,2"), _formula("4,2,4,4", "2,2,2")),
    ),
    ("`2,3,3` ranks `2,2`: {}, formula {}", lambda: (_dim("2,3,3", "2,2"), _formula("2,3,3", "2,2"))),
    (
        "`4,4,4,4` ranks `1,2,2`: {} (exact, by the parallel-tokens bound), formula {}",
        lambda: (_dim("4,4,4,4", "1,2,2"), _formula("4,4,4,4", "1,2,2")),
    ),
    ("$d=3, d'=1, a=3$: {}, not Cor. 3.3's {}", lambda: (_dim("3,1", "3", 1), _formula("3,1", "3", 1))),
    ("`4,4,4` ranks `2,2`: {}, not {}", lambda: (_dim("4,4,4", "2,2", 1), _formula("4,4,4", "2,2", 1))),
    (
        "`4,2,4` ranks `2,2`: {}, where the symmetries only give {}",
        lambda: (_dim("4,2,4", "2,2", 1), _symmetries("4,2,4", "2,2", 1)),
    ),
    (
        "widths `2,2,1`, ranks `1,2`: {} masked against {}",
        lambda: (_dim("2,2,1", "1,2", causal=True), _dim("2,2,1", "1,2")),
    ),
    (
        "`2,3` rank 2 ($t = 2$) has dimension {} where the symmetries give {}",
        lambda: (_dim("2,3", "2", heads=2), _symmetries("2,3", "2", heads=2)),
    ),
    ("`3,1` rank 2: {} (the values see a plane)", lambda: (_dim("3,1", "2", heads=2),)),
    ("`2,2,3,1` with $t = 1$: {} (the last two layers", lambda: (_dim("2,2,3,1", "2,2,2", 1, heads=2),)),
    ("`2,4,1` ranks `1,2`, $t = 2$: ${} \\le \\dim \\le {}$", lambda: _open("2,4,1", "1,2", heads=2)),
    ("`2,4,2` ranks `1,3`: ${} \\le \\dim \\le {}$", lambda: _open("2,4,2", "1,3", heads=2)),
    (
        "widths 4,4,4,4, ranks 4,4,4, $t = 2$: {} against {}",
        lambda: (_dim("4,4,4,4", "4,4,4", skip=True), _dim("4,4,4,4", "4,4,4")),
    ),
    (
        "$(d, d', a) = (4, 3, 4)$: {} without positions, {} with",
        lambda: (_dim("4,3", "4", 3), _dim("4,3", "4", 3, positions=Rotary())),
    ),
]


def _normalized(text: str) -> str:
    return re.sub(r"\s+", " ", text)


@pytest.mark.parametrize("sentence, compute", FINDINGS, ids=[s[:40] for s, _ in FINDINGS])
def test_a_finding_states_what_the_package_computes_now(sentence: str, compute: Callable[[], tuple[object, ...]]):
    page = _normalized(PAGE.read_text())
    assert _normalized(sentence.split("{}")[0]) in page, f"the page no longer has the sentence {sentence!r}"
    now = _normalized(sentence.format(*compute()))
    assert now in page, f"stale: the package computes {now!r} now"


def test_a_changed_number_is_caught():
    """The check can fail: the first finding with its first number off by one is not on the page."""
    sentence, compute = FINDINGS[0]
    values = list(compute())
    values[0] = int(values[0]) + 1  # type: ignore[call-overload]
    assert _normalized(sentence.format(*values)) not in _normalized(PAGE.read_text())
