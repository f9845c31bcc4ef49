"""The sampling plan of the exact engine (ag_attention._exact.sampling): samples, directions per sample, memory."""

import pytest

from ag_attention import Architecture, dimension
from ag_attention._errors import InsufficientMemoryError, InvalidArgumentError
from ag_attention._exact.dimension import new_directions_per_sample, sampling_plan
from ag_attention._exact.field import MAX_CONTRACTION
from ag_attention._exact.sampling import (
    check_exact_sizes,
    check_run_memory,
    default_samples,
    directions_per_sample,
    first_runs,
    jacobian_pieces,
    planning_bound,
    run_memory,
)
from ag_attention._models.formulas import prove, symmetry_count


def test_sampling_plan():
    arch = Architecture((32, 32, 32), (16, 16), tokens=3)
    assert new_directions_per_sample(arch) == 9  # t^2: Y = W X (S_1^T S_2^T)
    N, k = sampling_plan(arch, 2558)
    assert N * 9 >= 1.1 * 2558 and N * k >= 1.1 * 2558 and k < arch.output_size
    assert sampling_plan(arch, 2558, samples=250)[0] == 250
    assert new_directions_per_sample(Architecture((3, 2), (2,), tokens=3)) == 6  # t d_L < t^2


def test_the_plan_aims_at_the_best_upper_bound():
    arch = Architecture((4, 4, 4), (2, 2), tokens=3)
    assert planning_bound(arch) == arch.parameter_count - symmetry_count(arch) == 38
    one_token = Architecture((3, 1), (3,), tokens=1)  # the symmetries leave 11; the one-token bound is 8
    assert one_token.parameter_count - symmetry_count(one_token) == 11
    assert planning_bound(one_token) == 8 == dimension(one_token).dimension
    assert default_samples(arch) == sampling_plan(arch, 38)[0] == dimension(arch).samples


def test_huge_sizes_are_refused_naming_the_size():
    check_exact_sizes(Architecture((4, 4), (2,), tokens=MAX_CONTRACTION))
    for arch, name in [
        (Architecture((4, 4), (2,), tokens=MAX_CONTRACTION + 1), "tokens"),
        (Architecture((MAX_CONTRACTION + 1, 2), (1,), tokens=2), "widths"),
    ]:
        with pytest.raises(InvalidArgumentError, match=f"^{name}={MAX_CONTRACTION + 1}: exact GF"):
            check_exact_sizes(arch)


def test_run_memory_grows_with_the_run_and_refuses_what_does_not_fit(monkeypatch):
    arch = Architecture((4, 4, 4), (2, 2), tokens=3)
    small, more_samples, more_rows = run_memory(arch, 10, 4), run_memory(arch, 20, 4), run_memory(arch, 10, 12)
    assert 0 < small.peak < more_samples.peak and small.peak < more_rows.peak
    assert any(part.startswith("symmetry tangents") for part in small.parts)
    monkeypatch.setenv("AG_ATTENTION_MEMORY_LIMIT", "1M")
    with pytest.raises(InsufficientMemoryError, match=r"widths 4,4,4 ranks 2,2 t=3 with 100,000 samples x 12 rows"):
        check_run_memory(arch, 100_000, 12)


def test_first_runs_plan_the_effective_architecture_first_and_refuse_before_computing(monkeypatch):
    from ag_attention._exact.sampling import first_runs, sampling_plan
    from ag_attention._models.formulas import prove

    arch = Architecture((2, 3, 3), (2, 2), tokens=2)
    p = prove(arch)
    eff, own = first_runs(p, samples=5)
    assert eff.proven is p.effective and own.proven is p
    # the given samples are the architecture's; the effective architecture's are planned (adaptive)
    assert (own.samples, own.adaptive) == (5, False) and eff.adaptive
    assert (eff.samples, eff.k) == sampling_plan(eff.proven.architecture, eff.proven.planning_bound)
    assert own.k == sampling_plan(arch, p.planning_bound, 5)[1]
    assert [r.k for r in first_runs(p, full_rows=True)] == [p.effective.architecture.output_size, arch.output_size]
    assert len(first_runs(prove(Architecture((4, 4, 4), (2, 2), tokens=3)))) == 1  # its own effective architecture
    monkeypatch.setenv("AG_ATTENTION_MEMORY_LIMIT", "1M")  # the architecture's own run is refused first
    with pytest.raises(InsufficientMemoryError, match=r"widths 2,3,3 ranks 2,2 t=2 with 100,000 samples"):
        first_runs(p, samples=100_000)


# ----------------------------------------------------------------- long sequences (the issue: t = 5,000 gave dim >= 14)
#: networks on more tokens than input features, where Lemma 3.6's t d_L directions a sample overstated what a
#: sample adds: the first run had 2 or 3 samples and fell short (rank before the fix in the comment)
_LONG = [
    Architecture((3, 3), (2,), tokens=10),  # 14 of 16: the issue's network, at the smallest t whose plan fell short
    Architecture((4, 4, 4), (2, 2), tokens=20),  # 20 of 38
    Architecture((3, 3), (2,), tokens=12, heads=2),  # 27 of 32
    Architecture((3, 3), (2,), tokens=12, skip=True),  # 14 of 16
    Architecture.single_layer(3, 3, tokens=12),  # 15 of 17 (A free)
    Architecture((2, 3, 3), (2, 2), tokens=12),  # 9 of 12 (effective widths 2,2,3)
    Architecture((4, 3, 2), (2, 2), tokens=16),  # 16 of 27
    Architecture((3, 3), (2,), tokens=12, causal=True),  # 16 of 16: a causal mask keeps Lemma 3.6's bound
]


@pytest.mark.parametrize("arch", _LONG, ids=str)
def test_the_first_run_reaches_the_dimension_on_long_sequences(arch):
    """Without a causal mask phi(X) = X C(theta, X^T X): a sample adds at most d_0 d_L directions, whatever t
    (docs/math/dimension.md (dimension-one-sample)), and the plan now counts with that; the first run alone (no
    doubling, no second prime) reaches the dimension computed on t = d_0 tokens."""
    r = dimension(arch, max_doublings=0, recheck=False)
    assert r.certified and r.dimension == dimension(arch.with_(tokens=arch.widths[0])).dimension


def test_a_refused_doubling_no_longer_leaves_the_issues_rank_short(monkeypatch):
    """The issue's run, at t = 10 instead of 5,000: the old plan (2 samples x 15 combinations) reached 14 of 16,
    its doubling did not fit in memory and the second prime repeated the same plan: "dim >= 14 ... 2 kernel
    direction(s) are not explained".  With as much memory, the new plan's first run reaches 16."""
    import ag_attention._resources as resources

    arch = Architecture((3, 3), (2,), tokens=10)
    room = int(1.1 * max(run_memory(arch, 2, 15).peak, run_memory(arch, 5, 7).peak)) + 1  # old and new plans fit
    assert 1.1 * run_memory(arch, 4, 15).peak > room  # the old plan's doubling does not
    monkeypatch.setattr(resources, "memory_limit", lambda: resources.MemoryLimit(room, "the test"))
    r = dimension(arch)
    assert (r.dimension, r.certified, len(r.runs)) == (16, True, 1), r.certificate
    assert (r.runs[0].samples, r.runs[0].seeds_per_sample) == (5, 7)
    assert [(p.samples, p.k) for p in first_runs(prove(arch))] == [(5, 7)]


@pytest.mark.parametrize(
    "arch",
    [
        Architecture((3, 3), (2,), tokens=7),
        Architecture.single_layer(3, 2, tokens=8),
        Architecture((3, 3, 3), (2, 2), tokens=6, heads=2, skip=True),
    ],
    ids=str,
)
def test_a_sample_adds_at_most_d0_dL_directions_without_a_causal_mask(arch, rng):
    from ag_attention._exact import linalg
    from ag_attention._exact.field import DEFAULT_PRIME, GFp
    from ag_attention._network import jacobian

    F = GFp(DEFAULT_PRIME)
    b = arch.widths[0] * arch.widths[-1]
    assert directions_per_sample(arch) == b < arch.tokens * arch.widths[-1]
    theta = F.random(rng, arch.parameter_count)
    X = F.random(rng, (8, arch.tokens, arch.widths[0]))
    J = jacobian(arch, F, theta, X)  # every output of every sample
    rows = arch.output_size
    ranks = [0] + [linalg.rank(J[: n * rows], DEFAULT_PRIME) for n in range(1, 9)]
    assert all(0 <= later - earlier <= b for earlier, later in zip(ranks, ranks[1:]))


def test_two_samples_reach_14_of_16_on_any_number_of_tokens_from_3():
    """docs/math/dimension.md (dimension-one-sample): phi = X A G V^T with G = X^T X; two samples leave the
    centralizer of G_1^-1 G_2 (3-dimensional) in the fiber besides GL_2, so rank <= 21 - 4 - 3 = 14."""
    for t in (3, 10, 100):
        arch = Architecture((3, 3), (2,), tokens=t)
        assert dimension(arch, samples=2, full_rows=True, recheck=False).dimension == 14
        assert dimension(arch, samples=3, full_rows=True, recheck=False).dimension == 16


def test_long_sequences_are_assembled_in_pieces_within_memory():
    arch = Architecture((3, 3), (2,), tokens=5000)
    whole, pieced = run_memory(arch, 2, 15), run_memory(arch, 2, 15, pieced=True)
    assert pieced.peak < 2**30 < 16 * 2**30 < whole.peak  # the old plan's run: 17 GiB at once, 0.75 GiB in pieces
    assert "1 row of one sample at a time" in pieced.parts
    assert jacobian_pieces(arch, 2, 15) == [(n, n + 1, r, r + 1) for n in range(2) for r in range(15)]
    small = Architecture((3, 3), (2,), tokens=10)  # short sequences: at once, as before
    assert jacobian_pieces(small, 5, 7) == [(0, 5, 0, 7)]
    assert run_memory(small, 5, 7, pieced=True) == run_memory(small, 5, 7)
