"""The conjectures of ``reproduce open-questions`` (ag_attention._reproduce.conjectures): row helpers, predictions,
and the comparison that counts only certified rows as evidence."""

import pytest

from ag_attention._reproduce.conjectures import (
    CONJECTURES,
    ambient_bound,
    certification,
    compare,
    describe,
    partner_key,
)

BY_KEY = {c.key: c for c in CONJECTURES}


def row(
    widths=(3, 2),
    ranks=(2,),
    tokens=2,
    heads=1,
    skip=False,
    causal=False,
    normalized=False,
    dimension=13,
    certified=True,
    kind="symmetry-bound",
    upper=None,
    error=None,
    parameters=None,
):
    return {
        "widths": list(widths),
        "ranks": list(ranks),
        "tokens": tokens,
        "heads": heads,
        "skip": skip,
        "causal": causal,
        "normalized": normalized,
        "depth": len(ranks),
        "dimension": dimension,
        "certified": certified,
        "certificate_kind": kind,
        "upper_bound": dimension if upper is None else upper,
        "error": error,
        "parameters": parameters,
    }


def test_describe():
    assert describe(row()) == "widths 3,2 ranks 2 t=2"
    assert describe(row((2, 2, 2), (1, 2), tokens=3, heads=2, skip=True, causal=True)) == (
        "widths 2,2,2 ranks 1,2 t=3 heads=2 skip causal"
    )


def test_the_ambient_bound_of_one_layer():
    assert ambient_bound(row((3, 2), (2,))) == 3 * 2 * 6 and ambient_bound(row((2, 1), (1,), heads=3)) == 6
    for other in (row((3, 3, 2), (2, 2)), row(tokens=1), row(normalized=True), row(skip=True), row(causal=True)):
        assert ambient_bound(other) is None


def test_only_certified_rows_are_evidence():
    assert certification(row()) == "sweep: symmetry-bound"
    assert certification(row(certified=False, dimension=12, upper=13)) is None
    assert certification(row(error="MemoryError", dimension=None)) is None
    # not certified by the sweep, but the rank reaches the N reduced coordinates of one layer
    full = row((2, 1), (2,), heads=2, certified=False, dimension=6, upper=7)
    assert certification(full) == "ambient bound N = 6"


def test_partner_key():
    r = row(skip=True, heads=2)
    assert partner_key(r) == ((3, 2), (2,), 2, 2, True, False)
    assert partner_key(r, skip=False) == ((3, 2), (2,), 2, 2, False, False)


def test_the_symmetry_and_mixing_predictions():
    symmetry, mixing = BY_KEY["heads-symmetry"].predict, BY_KEY["heads-mixing"].predict
    # P = 2 (2 * 2 * 3 + 6) = 36, symmetries 2 GL_2 + 2 rescalings = 10
    assert symmetry(row(heads=2), {}) == (26, None, "")
    assert symmetry(row(tokens=1), {}) == (None, None, "t = 1")
    # heads mix by GL_H: H (d^2 + d' d) - H^2 = 2 (4 + 6) - 4
    assert mixing(row((2, 3), (2,), heads=2), {}) == (16, None, "")
    assert mixing(row((3, 2), (2,), heads=2), {})[2] == "some a_i < d_{i-1}"
    assert mixing(row((1, 1), (1,), heads=2), {})[2] == "H > min(d_{i-1}^2, d_i d_{i-1}) for some i"
    assert mixing(row((2, 3), (2,), tokens=1, heads=2), {})[2] == "t = 1"


def test_partner_predictions_copy_a_certified_row():
    translate = BY_KEY["skip-translate"].predict
    skip = row((3, 3), (2,), skip=True, dimension=14)
    plain = row((3, 3), (2,), dimension=16)
    ctx = {partner_key(plain): plain}
    assert translate(skip, ctx) == (16, plain, "")
    assert translate(skip, {}) == (None, None, "no row without skip in the grid")
    unproven = row((3, 3), (2,), dimension=15, certified=False, upper=16)
    assert translate(skip, {partner_key(unproven): unproven}) == (
        None,
        unproven,
        "the row without skip is not certified",
    )
    # the README's exception: a rank-one first layer makes a causal mask matter
    causal = BY_KEY["causal-unmasked"].predict
    deep = row((2, 2, 2), (1, 2), causal=True)
    assert causal(deep, {})[2] == "L >= 2, a_1 = 1, a_2 >= 2, d_0 >= 2 (the README's exception)"
    assert BY_KEY["heads-causal-unmasked"].predict(deep, {})[2] == "no row without causal in the grid"


def test_every_conjecture_has_a_variant_and_a_unique_key():
    assert len(BY_KEY) == len(CONJECTURES)
    assert {c.variant for c in CONJECTURES} == {"heads", "skip", "causal", "heads-causal"}
    assert all(c.statement and c.hypotheses for c in CONJECTURES)


def test_compare_sorts_the_rows():
    conjecture = BY_KEY["skip-translate"]
    plain = row((3, 3), (2,), dimension=16)
    plain_unproven = row((2, 2), (2,), dimension=6, certified=False, upper=7)
    ctx = {partner_key(r): r for r in (plain, plain_unproven)}
    rows = [
        row((3, 3), (2,), skip=True, dimension=16),  # holds
        row((3, 3), (2,), skip=True, dimension=15),  # certified and different: a counterexample
        row((3, 3), (2,), skip=True, dimension=15, certified=False, upper=17),  # open: 16 within [15, 17]
        row((3, 3), (2,), skip=True, dimension=10, certified=False, upper=12),  # refuted by its bounds
        row((2, 2), (2,), skip=True, dimension=6),  # open: its partner is not certified
        row((4, 4), (2,), skip=True, dimension=20),  # not applicable: no partner
    ]
    out = compare(conjecture, rows, ctx)
    assert out["key"] == "skip-translate" and out["variant"] == "skip"
    assert out["supported"] == len(out["holds"]) == 1 and len(out["counterexamples"]) == 1
    assert out["certified_applicable"] == 2
    (counter,) = out["counterexamples"]
    assert (counter["computed"], counter["predicted"], counter["compared_with"]) == (15, 16, "widths 3,3 ranks 2 t=2")
    assert [e["reason"] for e in out["open"]] == [
        "not certified: lower bound below the upper bound",
        "the row without skip is not certified",
    ]
    assert out["open"][0]["within_bounds"] is True and out["open"][1]["partner_upper"] == 7
    (refuted,) = out["refuted_by_bounds"]
    assert refuted["within_bounds"] is False and (refuted["lower"], refuted["upper"]) == (10, 12)
    (na,) = out["not_applicable"]
    assert na["reason"] == "no row without skip in the grid" and na["architecture"] == "widths 4,4 ranks 2 t=2 skip"


@pytest.mark.parametrize("key", ["heads-symmetry", "skip-symmetry", "causal-symmetry", "heads-causal-symmetry"])
def test_symmetry_conjectures_without_rows(key):
    assert compare(BY_KEY[key], [], {})["certified_applicable"] == 0
