"""Their implicit ideals against the package's closure ideals (ag_attention._reproduce.related.ideals).

By exact substitution and, with real Macaulay2, by ideal equality and Hilbert data; a changed generator makes them
fail.
"""

import gzip
import json
from fractions import Fraction

import pytest

from ag_attention._reproduce.related.golden import GOLDEN_DIRECTORY, MANIFEST, golden_manifest, load_golden
from ag_attention._reproduce.related.ideals import compare_ideal
from tests.helpers import slow_unless_asked


def _rewritten(tmp_path, name, raw):
    """``raw`` as golden file ``name`` in ``tmp_path``, with a manifest that records it (else the loader refuses
    the changed bytes before comparing anything)."""
    with gzip.open(tmp_path / name, "wt") as fh:
        json.dump(raw, fh)
    (tmp_path / MANIFEST).write_text(json.dumps(golden_manifest(tmp_path)))


def test_a_changed_generator_of_J_does_not_vanish(tmp_path):
    path = GOLDEN_DIRECTORY / "d2_at1_t2.json.gz"
    raw = json.loads(gzip.decompress(path.read_bytes()))
    gen = next(g for g in raw["ideal"]["generators"] if len(g) > 1)
    gen[0][0] = str(Fraction(gen[0][0]) * 2)
    _rewritten(tmp_path, path.name, raw)
    c = compare_ideal(load_golden(2, 1, 2, directory=tmp_path), m2=False)
    assert c.vanishing == c.generators - 1 and not c.agrees


@pytest.mark.parametrize("case", [(2, 1, 2), (2, 2, 2), (3, 1, 2), (2, 1, 1)])
def test_their_ideal_vanishes_on_the_package_image(case):
    c = compare_ideal(load_golden(*case), m2=False)
    assert c.vanishing == c.generators and c.equal is None and c.agrees


@pytest.mark.m2
@pytest.mark.parametrize(
    "case, numerator",
    [
        ((2, 1, 2), [1, 2]),
        ((2, 2, 2), [1, 1, 1, 1]),
        ((3, 1, 2), [1, 11, 21, 11, 1]),
        ((2, 1, 1), [1]),
        ((3, 1, 3), [1, 11, 21, 11, 1]),
    ],
)
def test_their_ideal_is_the_closure_ideal(m2_local, case, numerator):
    c = compare_ideal(load_golden(*case))
    assert c.equal and c.agrees
    assert c.theirs["hilbert_numerator"] == c.ours["hilbert_numerator"] == numerator
    assert c.theirs["degree"] == c.ours["degree"]


@pytest.mark.m2
@slow_unless_asked
@pytest.mark.parametrize("case", [(3, 2, 2), (3, 3, 2), (3, 1, 1)])
def test_their_larger_ideals_are_the_closure_ideals(m2_local, case):
    c = compare_ideal(load_golden(*case), timeout=1800)
    assert c.equal and c.agrees, c.to_dict()


def test_their_t1_elimination_has_no_rank_constraint():
    g = load_golden(3, 1, 1)
    assert (g.ideal["codim"], g.ideal["degree"]) == (2, 21)  # the full-rank closure (a = 3), whatever at is
    assert (g.rank_ideal["codim"], g.rank_ideal["degree"]) == (3, 15)  # with minors(2, A): not their code
    assert {max(sum(e for _, e in m) for _, m in t) for t in g.ideal["generators"]} == {8}
    assert {max(sum(e for _, e in m) for _, m in t) for t in g.rank_ideal["generators"]} == {4}
