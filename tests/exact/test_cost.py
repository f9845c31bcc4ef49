"""Estimates from sizes alone: the rank's route, the Jacobian's timing, dimension()'s first runs."""

from __future__ import annotations

from ag_attention import Architecture
from ag_attention._exact.cost import (
    assembly_seconds,
    duration,
    estimate_dimension,
    jacobian_seconds,
    long_sequences,
    matrix_product_rate,
    rank_seconds,
)
from ag_attention._exact.dimension import BLAS_FROM_PARAMETERS, default_prime, dimension
from ag_attention._exact.modular_lu import BLAS_PRIMES
from tests.cli import run_in_process


def test_rank_cost_grows_with_the_work_and_the_route_matters():
    assert matrix_product_rate() > 1e8
    small, large = rank_seconds(500, 500, 500, BLAS_PRIMES[0]), rank_seconds(4000, 4000, 4000, BLAS_PRIMES[0])
    assert 0 < small < large
    # the same large matrix through FLINT (a word-size prime) is estimated slower than through BLAS
    assert rank_seconds(4000, 4000, 4000, 2147483647) > large
    assert jacobian_seconds(Architecture((3, 3), (2,), tokens=2), 2147483647, 10, 6) > 0
    assert duration(4.24) == "4.2 s" and duration(42.4) == "42 s" and duration(185) == "3 min 05 s"


def test_the_default_prime_takes_the_blas_route_from_1024_parameters():
    small = Architecture((4, 4), (2,), tokens=2)
    deep = Architecture((2,) * 131, (1,) * 130, tokens=2)  # 1,040 parameters
    assert small.parameter_count < BLAS_FROM_PARAMETERS <= deep.parameter_count
    assert default_prime(small) == 2147483647 and default_prime(deep) == BLAS_PRIMES[0]
    r = dimension(deep)
    assert r.certified and r.dimension == 2 * 130 + 4  # Cor. 3.8's value, as with the word-size prime


def test_the_dimension_estimate_names_its_runs():
    est = estimate_dimension(Architecture((2,) * 131, (1,) * 130, tokens=2), BLAS_PRIMES[0])
    text = est.describe()
    assert est.seconds > 0 and est.bytes > 0 and text.startswith("estimated ") and "Jacobian of" in text
    assert "over GF(2097143)" in text


def test_long_sequences_are_estimated_from_a_timed_row_and_said():
    """The t-driven cost (t x t adjoints a row) is estimated without running the Jacobian at t: one row timed at
    512 and 1,024 tokens, extrapolated (t = 5,000 here: estimated 1 min 42 s, measured 81 s)."""
    arch = Architecture((3, 3), (2,), tokens=3000)
    assert long_sequences(arch) and not long_sequences(arch.with_(tokens=500))
    assert not long_sequences(arch.with_(tokens=2))
    assert long_sequences(arch.with_(tokens=500), samples=1000)  # many samples: as much work
    longer = assembly_seconds(arch.with_(tokens=6000), 2147483647, 5, 7)
    shorter = assembly_seconds(arch.with_(tokens=800), 2147483647, 5, 7)
    assert 0 < shorter < assembly_seconds(arch, 2147483647, 5, 7) < longer
    text = estimate_dimension(arch, 2147483647).describe()
    assert text.startswith("estimated ") and "Jacobian of 5 samples x 7 rows at t = 3,000 in 35 pieces" in text


def test_dim_of_a_deep_network_says_its_estimate_first_off_a_terminal(capsys):
    """Issue 30, T1: `dim` with many layers printed nothing off a terminal for minutes; now one estimate line
    on stderr before the work (here 130 layers: 1,040 parameters)."""
    widths = ",".join(["2"] * 131)
    ranks = ",".join(["1"] * 130)
    r = run_in_process(capsys, "dim", "--widths", widths, "--ranks", ranks, "--tokens", "2")
    assert r.returncode == 0, r.stderr
    assert r.stderr.startswith("ag-attention: dim: 130 layers, 1,040 parameters: estimated ")
    assert "dimension        264" in r.stdout


def test_shapes_are_built_once():
    arch = Architecture((2,) * 501, (1,) * 500, tokens=2)
    assert arch.layers is arch.layers and arch.parameter_count == 500 * 8
    assert Architecture((2,) * 501, (1,) * 500, tokens=2) == arch  # caching changes no equality
