"""Their code's coordinates and families against the package's rebuilt ones
(ag_attention._reproduce.related.spans).

Coordinates are compared exactly, families by the span of their members per degree (probabilistic ranks modulo two
primes), cubics per torus multidegree exactly.  A changed member makes them fail.
"""

import gzip
import json
from fractions import Fraction

import pytest

from ag_attention import InvalidArgumentError
from ag_attention._reproduce.related.golden import (
    GOLDEN_DIRECTORY,
    MANIFEST,
    MEMBER_CASES,
    MULTIDEGREE_CASES,
    golden_manifest,
    load_golden,
)
from ag_attention._reproduce.related.spans import by_multidegree, check_parametrization, compare_family, compare_spans


def _rewritten(tmp_path, name, raw):
    """``raw`` as golden file ``name`` in ``tmp_path``, with a manifest that records it (else the loader refuses
    the changed bytes before comparing anything)."""
    with gzip.open(tmp_path / name, "wt") as fh:
        json.dump(raw, fh)
    (tmp_path / MANIFEST).write_text(json.dumps(golden_manifest(tmp_path)))


def test_their_coordinates_are_the_rebuilt_ones():
    for case in MEMBER_CASES + ((2, 1, 1), (3, 1, 1), (3, 1, 3)):
        r = check_parametrization(load_golden(*case))
        assert r["disagree"] == [] and r["agree"] == r["labels"] > 0, case


#: counts their code gives, (members, span of theirs, span of the package's): degree d syzygies (cubics at d = 3,
#: quartics at d = 4), and their 320 cubics at d = 4 spanning 200
SPANS = {
    ((3, 1, 2), "lowRank", 2): (45, 45, 45),
    ((3, 1, 2), "contextSyzygies", 3): (10, 10, 10),
    ((3, 3, 2), "veronese2_all", 4): (45, 45, 45),
    ((3, 3, 2), "quarticResultants", 4): (72, 72, 72),
    ((4, 4, 2), "contextSyzygies", 4): (175, 175, 175),
    ((4, 4, 2), "crossColumnCubics", 3): (320, 200, 200),
}


@pytest.mark.parametrize("case", MEMBER_CASES)
def test_every_family_spans_what_the_rebuilt_one_spans(case):
    g = load_golden(*case)
    assert g.families
    for name in g.families:
        comps = compare_family(g, name)
        assert all(c.equal for c in comps), (case, name, [c.to_dict() for c in comps])
        for c in comps:
            if (case, name, c.degree) in SPANS:
                assert (c.theirs, c.rank_theirs, c.rank_ours) == SPANS[case, name, c.degree]
    assert sum((case, n, D) in SPANS for n in g.families for D in range(1, 9)) == sum(k[0] == case for k in SPANS)


def test_three_tokens_copy_the_context_relations():
    """t = 3: their linear relations add the copies between the two contexts (38 members spanning 28), and every
    family spans what the rebuilt one spans."""
    g = load_golden(3, 1, 3)
    spans = {name: [(c.theirs, c.rank_theirs, c.equal) for c in compare_family(g, name)] for name in g.families}
    assert spans["linear"] == [(38, 28, True)] and spans["lowRank"] == [(90, 90, True)]
    assert all(eq for v in spans.values() for _, _, eq in v)


def test_their_t1_lie_cubics_at_d2_are_spanned_alike():
    g = load_golden(2, 1, 1)
    (c,) = compare_family(g, "t1:chow21")
    assert (c.degree, c.rank_theirs, c.equal) == (3, 4, True)


@pytest.mark.parametrize("case", MULTIDEGREE_CASES)
def test_their_cubics_at_d4_span_200_of_the_400(case):
    r = by_multidegree(load_golden(*case), 3)
    assert (r["ideal"], r["their_span"], r["members_in_ideal"]) == (400, 200, True)
    assert sum(row["multidegrees"] for row in r["rows"] if row["ideal"]) > 0
    assert all(row["their_span"] <= row["ideal"] for row in r["rows"])


def test_a_changed_member_makes_the_spans_differ(tmp_path):
    path = GOLDEN_DIRECTORY / "d3_at1_t2.json.gz"
    raw = json.loads(gzip.decompress(path.read_bytes()))
    member = raw["families"]["lowRank"]["members"][0]
    member[0][0] = str(Fraction(member[0][0]) + 1)
    _rewritten(tmp_path, path.name, raw)
    g = load_golden(3, 1, 2, directory=tmp_path)
    (c,) = compare_family(g, "lowRank")
    assert not c.equal and c.rank_union > c.rank_ours


def test_spans_by_values_are_spans():
    x, y = [(Fraction(1), ((0, 1),))], [(Fraction(1), ((1, 1),))]
    xy = [(Fraction(1), ((0, 1),)), (Fraction(1), ((1, 1),))]
    assert compare_spans([x, y], [xy], 2) == (2, 1, 2)
    assert compare_spans([x, y], [xy, x], 2) == (2, 2, 2)


def test_an_unknown_family_is_named():
    with pytest.raises(InvalidArgumentError, match="family='nonsense'"):
        compare_family(load_golden(2, 1, 2), "nonsense")
