"""The paper's dimension formulas (ag_attention._models.formulas): values, hypotheses, what applies and what not."""

import numpy as np
import pytest

from ag_attention import Architecture
from ag_attention._exact import linalg
from ag_attention._exact.field import DEFAULT_PRIME, GFp
from ag_attention._models.formulas import (
    Expectation,
    Hypothesis,
    cor33,
    cor38,
    expected_dimension,
    is_bottleneck,
    new_directions_per_sample,
    symmetry_count,
)
from ag_attention._network import jacobian


def test_cor33_and_its_rank_cap():
    assert cor33(2, 1, 2) == 2 * 2 + 2 - 1 == 5  # a(2d - a) + d d' - 1
    assert cor33(3, 2, 2) == 13 and cor33(4, 3, 2) == 23
    assert cor33(3, 2, 5) == cor33(3, 2, 3) == 14  # a > d counts as a = d


@pytest.mark.parametrize(
    "widths, ranks, value",
    [
        ((4, 4, 4), (2, 2), 38),
        ((4, 4, 4, 4), (2, 2, 2), 49),
        ((4, 2, 4), (2, 2), 26),
        ((4, 3, 2), (2, 2), 27),
        ((12, 12, 12), (6, 6), 2 * (6 * 18 + 144) - 144 - 2),
    ],
)
def test_cor38_is_eq14(widths, ranks, value):
    assert cor38(widths, ranks) == value


def test_cor38_of_one_layer_is_cor33_and_ranks_are_capped():
    assert all(cor38((d, e), (a,)) == cor33(d, e, a) for d in range(1, 5) for e in range(1, 4) for a in range(1, 6))
    assert cor38((3, 3, 3), (5, 7)) == cor38((3, 3, 3), (3, 3))


@pytest.mark.parametrize(
    "widths, bottleneck",
    [
        ((4, 2, 4), True),
        ((4, 4, 4), True),
        ((4, 3, 2), True),
        ((2, 3, 4), True),
        ((5,), True),
        ((2, 3, 2), False),
        ((3, 2, 3, 2), False),
        ((4, 2, 3, 1), False),
    ],
)
def test_bottlenecks_shrink_then_grow(widths, bottleneck):
    assert is_bottleneck(widths) is bottleneck


def test_symmetry_count_by_family():
    # GL_a on (Q, K) of each layer (4 + 4), GL_4 between the layers (16), a rescaling per layer (2)
    assert symmetry_count(Architecture((4, 4, 4), (2, 2), tokens=3)) == 26
    assert symmetry_count(Architecture((4, 2, 4), (2, 2), tokens=3)) == 14  # GL_2 between the layers
    assert symmetry_count(Architecture((4, 4, 4), (2, 2), normalized=True)) == 24  # softmax: no rescaling
    assert symmetry_count(Architecture((3, 3, 3), (2, 1), skip=True)) == 4 + 1 + 2  # skip: no GL_d between layers
    assert symmetry_count(Architecture((3, 3, 3), (2, 1), heads=2)) == 2 * (4 + 1) + 9 + 2 * 2
    assert symmetry_count(Architecture.single_layer(3, 2)) == 1  # AV: only the rescaling


def test_one_lightning_layer_is_cor33_with_its_hypotheses():
    e = expected_dimension(Architecture((3, 2), (2,), tokens=2))
    assert (e.formula, e.value, e.applies, e.conjectural) == ("Cor. 3.3", 13, True, False)
    assert [h.statement for h in e.hypotheses] == ["t >= 2", "a <= d", "d' > 1 or a > 1"]
    assert e.hypotheses_text() == "hypotheses hold" and e.failed_hypotheses == []
    narrow = expected_dimension(Architecture((2, 1), (1,), tokens=2))
    assert narrow.value == cor33(2, 1, 1) and not narrow.applies and narrow.paper_hypotheses_hold is False
    assert narrow.hypotheses_text() == "does not apply, fails: d' > 1 or a > 1"
    one_token = expected_dimension(Architecture((3, 1), (3,), tokens=1))
    assert one_token.value == 11 and one_token.failed_hypotheses == ["t >= 2"]
    assert one_token.note.startswith("t = 1: phi(x) = (x^T A x) V x depends on A only through A + A^T")


def test_a_rank_above_the_width_is_capped_and_said_so():
    e = expected_dimension(Architecture((3, 2), (5,), tokens=2))
    assert e.value == 14 and e.failed_hypotheses == ["a <= d"] and "a_i capped at d_{i-1}" in e.note


def test_one_normalized_layer_is_theorem_39():
    e = expected_dimension(Architecture((4, 3), (2,), tokens=3, normalized=True))
    assert (e.formula, e.value, e.applies) == ("Thm. 3.9", 2 * 6 + 12, True)
    assert "no rescaling" in e.note and [h.statement for h in e.hypotheses] == ["t >= 2", "a <= d"]


def test_deep_lightning_is_cor38_and_the_hypotheses_found_by_computation():
    e = expected_dimension(Architecture((4, 4, 4), (2, 2), tokens=3))
    assert (e.formula, e.value, e.applies) == ("Cor. 3.8", 38, True)
    assert {h.source for h in e.hypotheses} == {"paper", "ag-attention"}
    growing = expected_dimension(Architecture((2, 3, 3), (2, 2), tokens=3))
    assert growing.value == 16 and growing.paper_hypotheses_hold and not growing.applies
    assert growing.failed_hypotheses == ["no hidden layer wider than an earlier one (d_0 >= ... >= d_{L-1})"]
    assert "same neuromanifold as widths 2,2,3 ranks 2,2, where Cor. 3.8 gives 12" in growing.note
    parallel = expected_dimension(Architecture((4, 4, 4, 4), (1, 2, 2), tokens=3))
    assert parallel.failed_hypotheses == ["a_i >= 2 for i < L"] and parallel.paper_hypotheses_hold
    not_bottleneck = expected_dimension(Architecture((2, 4, 2), (2, 2), tokens=3))
    assert "widths shrink then grow (bottleneck)" in not_bottleneck.failed_hypotheses
    assert not not_bottleneck.paper_hypotheses_hold


def test_deep_normalized_is_the_conjectured_eq16():
    e = expected_dimension(Architecture((3, 3, 3), (2, 2), tokens=3, normalized=True))
    assert (e.formula, e.value, e.conjectural, e.applies) == ("Eq. 16", cor38((3, 3, 3), (2, 2)) + 2, True, True)
    assert e.note.startswith("Conjecture 3.10")


def test_variants_have_no_formula():
    e = expected_dimension(Architecture((3, 3, 3), (2, 2), tokens=2, heads=2, skip=True, causal=True))
    assert (e.formula, e.value, e.applies, e.paper_hypotheses_hold) == (None, None, False, False)
    assert e.note == (
        "the paper states no dimension formula for 2 heads and skip connections and a causal mask (Section 4: open)"
    )
    assert e.failed_hypotheses == ["one head", "no skip connections", "no causal mask"]
    # only the hypotheses that fail are named: two heads without skip or mask break "one head" alone
    two_heads = expected_dimension(Architecture((3, 3), (2,), tokens=2, heads=2))
    assert two_heads.failed_hypotheses == ["one head"] and not two_heads.applies
    assert two_heads.hypotheses_text() == "does not apply, fails: one head"
    assert expected_dimension(Architecture((3, 3), (2,), tokens=2, skip=True)).failed_hypotheses == [
        "no skip connections"
    ]
    assert expected_dimension(Architecture((3, 3), (2,), tokens=2, causal=True)).failed_hypotheses == ["no causal mask"]
    # one token attends only to itself: a causal mask changes nothing
    assert expected_dimension(Architecture((3, 2), (2,), tokens=1, causal=True)) == expected_dimension(
        Architecture((3, 2), (2,), tokens=1)
    )


def test_expectations_as_dicts():
    e = Expectation("Cor. 3.3", 5, (Hypothesis("t >= 2", True), Hypothesis("found", False, "ag-attention")), note="n")
    assert e.to_dict() == {
        "formula": "Cor. 3.3",
        "value": 5,
        "applies": False,
        "paper_hypotheses_hold": True,
        "conjectural": False,
        "hypotheses": [
            {"statement": "t >= 2", "holds": True, "source": "paper"},
            {"statement": "found", "holds": False, "source": "ag-attention"},
        ],
        "note": "n",
    }
    assert e.fields() == {
        "expected": 5,
        "formula": "Cor. 3.3",
        "formula_applies": False,
        "failed_hypotheses": ["found"],
        "conjectural": False,
    }
    assert not Expectation(None, None).applies and not Expectation(None, None).paper_hypotheses_hold


def test_prove_gathers_what_the_architecture_alone_gives():
    from ag_attention._exact.spans import output_span
    from ag_attention._models.bounds import best_upper_bound, effective_architecture
    from ag_attention._models.formulas import prove

    arch = Architecture((2, 3, 3), (2, 2), tokens=2)  # a hidden layer wider than the input: an effective architecture
    p = prove(arch)
    assert p.architecture == arch and p.parameters == arch.parameter_count == 35
    assert p.expected == expected_dimension(arch) and p.symmetry_count == symmetry_count(arch)
    assert p.bound == best_upper_bound(arch) and p.directions_per_sample == new_directions_per_sample(arch)
    eff = p.effective
    assert eff is not None and eff.architecture == effective_architecture(arch) and eff.effective is None
    assert eff.expected == expected_dimension(eff.architecture) and eff.bound == best_upper_bound(eff.architecture)
    # the rank to plan for: P minus the symmetries, or the proven bound where smaller (never below 1)
    assert p.planning_bound == min(35 - symmetry_count(arch), p.bound.value) == 12
    assert prove(Architecture((1, 1), (1,), tokens=1)).planning_bound == 1
    # with the engine's spans, the composition cut the widths cannot prove subtracts GL_3
    grows = Architecture((2, 3, 1), (1, 2), tokens=2, heads=2)
    assert prove(grows).bound.value == 33 and prove(grows, output_span).bound.value == 24
    # a network that is its own effective architecture (its composition bound is P minus the symmetries, 38)
    plain = prove(Architecture((4, 4, 4), (2, 2), tokens=3))
    assert plain.effective is None and plain.planning_bound == 38


# ----------------------------------------------------------------- Lemma 3.6: what one more sample can add
@pytest.mark.parametrize(
    "arch, b",
    [
        (Architecture((32, 32, 32), (16, 16), tokens=3), 9),  # t^2
        (Architecture((3, 2), (2,), tokens=3), 6),  # t d_L < t^2
        (Architecture((4, 4, 4), (2, 2), tokens=2, heads=2), 2 * 4),  # t d_L = 8 < t^2 (H)^L = 16
        (Architecture((8, 8, 8), (2, 2), tokens=2, heads=2), 16),  # t^2 H^L
        (Architecture((8, 8, 8), (2, 2), tokens=2, skip=True), 16),  # t^2 (1 + skip)^L
        (Architecture((3, 3), (2,), tokens=3, normalized=True), 6),  # t (t - 1): softmax rows sum to one
        (Architecture((3, 3), (2,), tokens=1, normalized=True), 1),  # at least one
        (Architecture((3, 3, 3), (2, 2), tokens=3, heads=2, normalized=True), 9),  # capped by the outputs t d_L
    ],
)
def test_the_bound_by_architecture(arch, b):
    assert new_directions_per_sample(arch) == b


@pytest.mark.parametrize(
    "arch",
    [
        Architecture((4, 4, 4), (2, 2), tokens=3),
        Architecture((3, 2), (2,), tokens=3),
        Architecture((3, 3, 3), (2, 2), tokens=2, heads=2),
    ],
    ids=str,
)
def test_one_more_sample_adds_at_most_the_bound(arch, rng):
    """The bound is a bound: the exact rank grows by at most b with each sample, once the values are seen."""
    F = GFp(DEFAULT_PRIME)
    theta = F.random(rng, arch.parameter_count)
    X = F.random(rng, (12, arch.tokens, arch.widths[0]))
    J = jacobian(arch, F, theta, X)
    rows = arch.output_size
    ranks = [linalg.rank(J[: n * rows], DEFAULT_PRIME) for n in range(1, 13)]
    b = new_directions_per_sample(arch)
    assert all(0 <= later - earlier <= max(b, rows) for earlier, later in zip(ranks, ranks[1:]))
    assert all(later - earlier <= b for earlier, later in zip(ranks[4:], ranks[5:]))
    assert np.all(np.diff(ranks) >= 0)


# ------------------------------------------------------------------ affine and rotary layers
@pytest.mark.parametrize("bias", ["", "q", "k", "v", "o", "qk", "qkv", "qkvo"])
@pytest.mark.parametrize("positions", [None, "rope", {"kind": "rope", "dims": 2}])
@pytest.mark.parametrize("d, d_out, a, t", [(2, 2, 2, 2), (3, 1, 2, 3), (4, 3, 4, 2), (5, 2, 4, 3)])
def test_one_lightning_variant_is_its_proposition(bias, positions, d, d_out, a, t):
    """docs/math/affine.md (affine-dimension), docs/math/rotary.md (rotary-dimension): P minus the queries' and
    keys' group and the rescaling, certified by the exact engine (a GF(p) rank meeting the symmetry bound)."""
    from ag_attention import dimension

    if not bias and positions is None:
        return  # the paper's layer: Cor. 3.3, tested above
    arch = Architecture((d, d_out), (a,), tokens=t, bias=bias, positions=positions)
    e = expected_dimension(arch)
    assert e.applies and not e.conjectural and e.formula in ("Prop. affine", "Prop. rotary")
    r = dimension(arch)
    assert r.certified and r.dimension == e.value


@pytest.mark.parametrize("bias", ["", "k", "v", "qv", "vo", "qkvo"])
@pytest.mark.parametrize("positions", [None, "rope"])
@pytest.mark.parametrize("d, d_out, a", [(2, 2, 2), (4, 3, 4), (3, 2, 2)])
def test_one_softmax_variant_meets_its_formula_by_balls(bias, positions, d, d_out, a):
    """Softmax: the formula is the proven symmetry bound; a ball-certified minor reaches it on these sizes."""
    from ag_attention._numeric.certified import certify_dimension

    if not bias and positions is None:
        return
    arch = Architecture((d, d_out), (a,), tokens=3, bias=bias, positions=positions, normalized=True)
    e = expected_dimension(arch)
    assert e.applies and e.conjectural
    c = certify_dimension(arch)
    assert c.lower == c.upper == e.value


def test_variant_hypotheses_and_what_has_no_formula():
    deep = expected_dimension(Architecture((3, 3, 2), (2, 2), bias="qkvo"))
    assert deep.value is None and "one layer" in deep.failed_hypotheses
    heads = expected_dimension(Architecture((3, 2), (2,), heads=2, positions="rope"))
    assert not heads.applies and heads.failed_hypotheses == ["one head"]
    one = expected_dimension(Architecture((3, 2), (2,), tokens=1, positions="rope"))
    assert one == expected_dimension(Architecture((3, 2), (2,), tokens=1))  # position 0 turns nothing
    wide = expected_dimension(Architecture((2, 2), (4,), positions="rope"))
    assert wide.failed_hypotheses == ["a <= d"]
    crafted = expected_dimension(Architecture((3, 2), (2,), positions={"kind": "rope", "scale": 2 / 3.141592653589793}))
    assert not crafted.applies and "separate the planes" in crafted.failed_hypotheses[0]
