"""ag-attention reproduce icl: the plateaus of in-context learning (Zhang, Singh, Latham, Saxe 2025) predicted as
critical values on rank strata.

The predictions are exact (rationals, checked against the values their notebook prints and against the large-N
limit), their completeness is counted by real msolve, the trainer is checked against the package's forward pass,
the plateau finder on curves whose plateaus are known, and the quick reproduction end to end through the CLI.
"""

import math
from fractions import Fraction

import numpy as np
import pytest

from ag_attention import InvalidArgumentError
from ag_attention._reproduce.icl import (
    critical_values,
    eigenvalues,
    embedded_fixed_point,
    find_plateaus,
    forward_agreement,
    gains,
    make_task,
    network_of,
    plateau_predictions,
    record_schedule,
    reproduce_icl,
    sampling_error,
    stratum_ed_degree,
    subset_is_critical,
    train,
)


def test_their_spectrum_and_their_notebook_values():
    lam = eigenvalues(4)
    assert lam == (Fraction(2, 5), Fraction(3, 10), Fraction(1, 5), Fraction(1, 10))
    pred = plateau_predictions(lam, 31)
    # the exact values behind loss_at_saddle(D=4, N=31) of their plot_loss.ipynb: 1, 0.64057971, 0.37737216,
    # 0.2098046, 0.13599507
    assert pred == (1, Fraction(221, 345), Fraction(27601, 73140), Fraction(567769, 2706180), Fraction(85873, 631442))
    assert [round(float(p), 8) for p in pred] == [1.0, 0.64057971, 0.37737216, 0.2098046, 0.13599507]


def test_large_context_limit_is_principal_component_regression():
    """N -> infinity: r_i -> lambda_i, the plateau after m components is the variance left, sum_{i > m} lambda_i."""
    lam = eigenvalues(4)
    pred = plateau_predictions(lam, 10**12)
    for m, L in enumerate(pred):
        assert abs(float(L) - float(sum(lam[m:], Fraction(0)))) < 1e-9


def test_critical_values_are_every_subset_and_the_plateaus_the_smallest_per_stratum():
    lam = eigenvalues(3)
    crit = critical_values(lam, 7)
    assert len(crit) == 8
    pred = plateau_predictions(lam, 7)
    for m in range(4):
        assert pred[m] == min(v for S, v in crit.items() if len(S) == m)
    assert all(subset_is_critical(lam, 7, S) for S in crit)
    r = gains(lam, 7)
    assert crit[(0, 2)] == 1 - r[0] - r[2]


def test_the_stratum_ed_degree_is_eckart_young_for_the_loss_metric():
    """Real msolve: rank <= 1 in 3 x 3 with the loss's weights has C(3, 1) = 3 critical points, as rank-one weights
    make it Euclidean; with the subset points all critical, there are no others."""
    r = stratum_ed_degree(eigenvalues(3), 31, 1)
    assert r.value == 3
    assert [c for _, _, c in r.counts] == [3, 3]
    assert stratum_ed_degree(eigenvalues(3), 31, 2).value == 3  # the determinant: C(3, 2)
    with pytest.raises(InvalidArgumentError, match="m=3"):
        stratum_ed_degree(eigenvalues(3), 31, 3)


def test_the_trainer_is_the_packages_network():
    task = make_task(3, 7, 500, 500, seed=3)
    for regime in ("merged", "separate"):
        run = train(task, regime, 2, 0.3, 0.05, 20, seed=1, record_every=5)
        assert forward_agreement(task, run, len(run.steps) - 1) < 1e-9
        net = network_of(run, len(run.steps) - 1, task.N)
        assert net.architecture.heads == 2 and net.architecture.skip
        assert net.architecture.tokens == task.N + 1


def test_gradient_descent_lowers_the_loss_and_one_rank_one_head_stops_on_its_stratum():
    """One rank-one head can only reach rank M <= 1: training ends at L_1 (not below), within the sampling error."""
    task = make_task(3, 15, 4000, 20000, seed=0)
    run = train(task, "separate", 1, 1e-2, 0.5, 20000, seed=0, record_every=20)
    L1 = float(plateau_predictions(eigenvalues(3), 15)[1])
    assert run.losses[-1] < run.losses[0]
    assert abs(run.test_losses[-1] - L1) < 0.05 * L1


def test_find_plateaus_on_a_known_staircase():
    steps = np.arange(0, 100001, 10)
    # plateaus 1.0 until 1e3, 0.5 until 1e4, then 0.25: sharp logistic steps in log time
    u = np.log10(np.maximum(steps, 1))
    L = 0.25 + 0.25 / (1 + np.exp((u - 4) * 80)) + 0.5 / (1 + np.exp((u - 3) * 80))
    found = find_plateaus(steps, L)
    assert [round(p["loss"], 3) for p in found] == [1.0, 0.5, 0.25]
    assert found[1]["first_step"] > 1000 and found[1]["last_step"] < 10000
    smooth = 1 / (1 + steps / 100.0)  # a power law: no plateau after the start
    assert all(p["last_step"] < 200 for p in find_plateaus(steps, smooth))


@pytest.mark.parametrize("bad", [dict(D=0), dict(D=True), dict(train=0), dict(test=10**9)])
def test_bad_task_sizes_are_refused(bad):
    args = dict(D=3, N=7, train=10, test=10, seed=0) | bad
    with pytest.raises(InvalidArgumentError):
        make_task(**args)


def test_bad_training_arguments_are_refused():
    task = make_task(2, 3, 10, 10, seed=0)
    with pytest.raises(InvalidArgumentError, match="regime"):
        train(task, "tied", 1, 0.1, 0.1, 10, seed=0)
    with pytest.raises(InvalidArgumentError, match="lr"):
        train(task, "merged", 1, 0.1, float("nan"), 10, seed=0)
    with pytest.raises(InvalidArgumentError, match="quick"):
        reproduce_icl(quick="yes")


def test_the_saddles_are_fixed_points_with_zero_heads_added():
    """arXiv:2512.20607, Theorem 1 (type III): the m-head fixed point plus zero heads is a fixed point of the H-head
    network, exactly; one more head lowers the loss cubically, by -2 lambda_j^2 eps^3, while a head and a direction
    are left."""
    lam = eigenvalues(4)
    for m in range(5):
        grad, descent = embedded_fixed_point(lam, 31, tuple(range(m)), 5)
        assert grad == 0
        assert descent == (None if m == 4 else -2 * lam[m] ** 2)
    assert embedded_fixed_point(lam, 31, (0, 1), 2) == (0, None)  # every head used: the stratum's minimum
    with pytest.raises(InvalidArgumentError, match="S="):
        embedded_fixed_point(lam, 31, (0, 0), 3)


def test_records_are_uniform_and_logarithmic():
    grid = record_schedule(60_000, 10)
    assert {0, 1, 2, 3, 10, 60_000} <= grid and 6_000 < len(grid) < 7_000
    assert len(record_schedule(10_000_000, 10)) < 7_000


def test_find_plateaus_through_the_jitter_of_a_finite_step():
    """A final plateau whose records alternate by 3e-4 (relative) step to step: found (the review's L_4)."""
    steps = np.arange(0, 60001, 10)
    u = np.log10(np.maximum(steps, 1))
    L = 0.2 + 0.8 / (1 + np.exp((u - 3) * 40)) + 3e-5 * (-1.0) ** (steps // 10)
    found = find_plateaus(steps, L)
    assert [round(p["loss"], 3) for p in found] == [1.0, 0.2]
    assert found[-1]["last_step"] == 60_000


def test_sampling_error_is_the_spread_of_the_squared_error():
    """At Theta = 0 the squared error is y_q^2, E y^4 = 3 (T^2 + 2 tr Lambda^2): sd = sqrt(3.8) at D = 4."""
    task = make_task(4, 7, 100, 400, seed=1)
    e = sampling_error(task, np.zeros(125), 40_000, seed=2)
    assert abs(e["sd"] - math.sqrt(3.8)) < 0.15 and abs(e["population_estimate"] - 1) < 0.05
    assert e["se_train"] == pytest.approx(e["sd"] / 10) and e["se_test"] == pytest.approx(e["sd"] / 20)
