"""The estimate printed before a landscape computation (ag_attention._landscape.estimate)."""

from ag_attention import Architecture
from ag_attention._landscape.estimate import (
    certify_seconds,
    landscape_estimate,
    paths_per_second,
    predicted_solutions,
)


def test_the_estimate_names_the_size_the_proven_bounds_and_the_limit():
    text = landscape_estimate(Architecture.single_layer(4, 1, 4, tokens=2), 30.0, 1)
    assert "a square system of 21 unknowns" in text and ">= 816 (degree, proven)" in text
    assert "<= 167,172 (Bezout, proven)" in text and "predicts 35,964 (a conjecture)" in text
    assert "in this process" in text and text.endswith("limit 30 s (what is found by then is kept)")
    # D_r singular: the Chern-Mather prediction; two workers: a local cluster
    text = landscape_estimate(Architecture.single_layer(3, 1, 2, tokens=3), None, 2)
    assert "predicts 7,965" in text and ">= 108 (degree, proven)" in text and text.endswith("limit none")
    assert "a local Dask cluster of 2 worker processes" in text
    # the 2:1 size (3,1,1) has no prediction: the bounds only
    text = landscape_estimate(Architecture.single_layer(3, 1, 1, tokens=2), 60.0, 1)
    assert "predicts" not in text and "<= 10,921 (Bezout, proven)" in text and "in this process" in text
    assert paths_per_second(9) > paths_per_second(21) > 0 and certify_seconds(21) > certify_seconds(9) > 0
    assert paths_per_second(21, 4) == 2 * paths_per_second(21, 2)


def test_by_default_a_long_problem_goes_to_a_local_cluster():
    from ag_attention._landscape.estimate import choose_workers
    from ag_attention._numeric.executors import default_workers

    cores = default_workers()
    assert choose_workers(Architecture.single_layer(2, 1, 2, tokens=2), None) == 1  # 14 solutions: here
    assert choose_workers(Architecture.single_layer(4, 1, 4, tokens=2), None) == (cores if cores > 1 else 1)
    assert choose_workers(Architecture.single_layer(4, 1, 4, tokens=2), 1) == 1  # asked for: as asked
    assert choose_workers(Architecture.single_layer(4, 1, 4, tokens=2), None, "tcp://127.0.0.1:1") == 1


def test_the_monodromy_counts_towards_the_solutions_the_estimate_names():
    """The progress bar's total: the Segre prediction times the fiber, as in the estimate; none without one."""
    arch = Architecture.single_layer(4, 1, 4, tokens=2)
    n = predicted_solutions(arch)
    assert n is not None and n % 35_964 == 0 and f"for {n:,} solutions" in landscape_estimate(arch, 30.0, 1)
    assert predicted_solutions(Architecture.single_layer(3, 1, 1, tokens=2)) is None
