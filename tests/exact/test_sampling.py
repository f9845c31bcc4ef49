"""The sampling plan of the exact engine (ag_attention._exact.sampling): samples, directions per sample, memory."""

from ag_attention import Architecture
from ag_attention._exact.dimension import new_directions_per_sample, sampling_plan


def test_sampling_plan():
    arch = Architecture((32, 32, 32), (16, 16), tokens=3)
    assert new_directions_per_sample(arch) == 9  # t^2: Y = W X (S_1^T S_2^T)
    N, k = sampling_plan(arch, 2558)
    assert N * 9 >= 1.1 * 2558 and N * k >= 1.1 * 2558 and k < arch.output_size
    assert sampling_plan(arch, 2558, samples=250)[0] == 250
    assert new_directions_per_sample(Architecture((3, 2), (2,), tokens=3)) == 6  # t d_L < t^2
