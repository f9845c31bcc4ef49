"""Rank runs (ag_attention._exact.runs): the exact Jacobian rank at a point, its drop at the special points
of Lemma A.3."""

import numpy as np

from ag_attention import Architecture
from ag_attention._exact.dimension import jacobian_rank


def _nonzero(rng, n):
    """``n`` integers in -9..9 without 0: Lemma A.3's vectors u, v, w are nonzero (a zero w makes V = 0)."""
    return rng.integers(1, 10, size=n) * rng.choice([-1, 1], size=n)


def test_rank_drop_at_critical_points_lemma_a3(rng):
    """(A, V) = (u v^T, w v^T) is critical with a drop of d - 1; (u v^T, w z^T) is not."""
    for d, e in [(2, 1), (3, 2), (4, 1), (4, 3), (5, 4)]:
        arch = Architecture.single_layer(d, e, tokens=2)
        dim = d * d + d * e - 1
        u, v, w = _nonzero(rng, d), _nonzero(rng, d), _nonzero(rng, e)
        z = _nonzero(rng, d)
        while not np.any(np.outer(v, z) - np.outer(z, v)):  # z parallel to v: every 2 x 2 minor of (v, z) is 0
            z = _nonzero(rng, d)
        crit = np.concatenate([np.outer(u, v).ravel(), np.outer(w, v).ravel()])
        other = np.concatenate([np.outer(u, v).ravel(), np.outer(w, z).ravel()])
        # a generic point: the rank drops only on a proper subvariety, which a wide range of integers avoids
        generic = rng.integers(-999, 1000, size=arch.parameter_count)
        assert jacobian_rank(arch, generic) == dim
        assert jacobian_rank(arch, crit) == dim - (d - 1)
        assert jacobian_rank(arch, other) == dim


def test_rank_drop_at_zero():
    arch = Architecture((3, 2), (2,), tokens=2)
    assert jacobian_rank(arch, np.zeros(arch.parameter_count, dtype=int)) == 0


def test_measure_doubles_while_short_and_confirms_below_the_formula():
    from ag_attention._exact.field import DEFAULT_PRIME, SECOND_PRIME
    from ag_attention._exact.runs import Stages, known_bounds, measure
    from ag_attention._exact.sampling import Plan, first_runs
    from ag_attention._models.formulas import prove

    arch = Architecture((4, 4, 4, 4), (1, 2, 2), tokens=2)  # rank 40 below Cor. 3.8's 44: a confirmation
    (plan,) = first_runs(prove(arch))
    runs = measure(plan, None, prime=DEFAULT_PRIME, seed=0, max_doublings=4, recheck=True, stages=Stages())
    assert runs[0].samples == plan.samples and runs[-1].prime == SECOND_PRIME and runs[-1].seed == 1
    lower, upper = known_bounds(plan.proven, runs)
    assert lower == max(r.rank for r in runs) == 40 <= upper
    assert [
        r.prime
        for r in measure(plan, None, prime=DEFAULT_PRIME, seed=0, max_doublings=4, recheck=False, stages=Stages())
    ] == [DEFAULT_PRIME] * (len(runs) - 1)
    # one sample is short of dim 13: doubled; a prior (the effective architecture's bounds) that meets: not
    short = Plan(prove(Architecture((3, 3), (1,), tokens=3)), samples=1, k=9, adaptive=True)
    assert len(measure(short, None, prime=DEFAULT_PRIME, seed=0, max_doublings=4, recheck=False, stages=Stages())) > 1
    assert (
        len(measure(short, (13, 13), prime=DEFAULT_PRIME, seed=0, max_doublings=4, recheck=True, stages=Stages())) == 1
    )
    assert known_bounds(short.proven, [], (13, 13)) == (13, 13)


def test_a_jacobian_assembled_in_pieces_is_the_same_jacobian(monkeypatch):
    """Pieces of samples, and pieces of one sample's rows (seeded combinations, or every output: rows of the
    identity), give the rows of the Jacobian assembled at once."""
    from ag_attention._exact import sampling
    from ag_attention._exact.field import DEFAULT_PRIME
    from ag_attention._exact.runs import evaluate
    from ag_attention._network import jacobian_memory

    arch = Architecture((3, 2), (2,), tokens=9)
    at_once = {k: evaluate(arch, DEFAULT_PRIME, 3, 4, k).J for k in (5, arch.output_size)}
    for budget, pieces in [(1, 4 * 5), (jacobian_memory(arch, 2, 5).peak, 2)]:
        monkeypatch.setattr(sampling, "PIECE_BYTES", budget)
        assert len(sampling.jacobian_pieces(arch, 4, 5)) == pieces
        for k, J in at_once.items():
            np.testing.assert_array_equal(evaluate(arch, DEFAULT_PRIME, 3, 4, k).J, J)
