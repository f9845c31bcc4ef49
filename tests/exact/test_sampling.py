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
    planning_bound,
    run_memory,
)
from ag_attention._models.formulas import symmetry_count


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
    for arch, name in [(Architecture((4, 4), (2,), tokens=MAX_CONTRACTION + 1), "tokens"),
                       (Architecture((MAX_CONTRACTION + 1, 2), (1,), tokens=2), "widths")]:
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
