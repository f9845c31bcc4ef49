"""What the paper predicts, as data a check compares with: a :class:`Theory`.

A wrong prediction (say "singular when rank A <= 1") put in place of one
field makes the corresponding check fail and name the counterexample.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..._exact import exact_rank
from .grids import Size

__all__ = ["Features", "features", "Theory", "THEOREM", "stated_rule"]


@dataclass(frozen=True)
class Features:
    """What a prediction may look at: ranks of the weights, and whether the pair is critical."""

    rank_a: int
    rank_v: int
    critical: bool  # A = u v^T, V = w v^T (same v), both nonzero
    zero: bool  # A = 0 or V = 0 (the point 0)


def features(A: Any, V: Any) -> Features:
    ra = exact_rank(np.asarray(A, dtype=object))
    rv = exact_rank(np.asarray(V, dtype=object))
    critical = False
    if ra == 1 and rv == 1:
        critical = exact_rank(np.vstack([np.asarray(A, dtype=object), np.asarray(V, dtype=object)])) == 1
    return Features(ra, rv, critical, ra == 0 or rv == 0)


def theorem_singular(size: Size, f: Features) -> tuple[bool, str]:
    """Theorem 3.4 (3), refined where the computation shows it must be: (singular?, source)."""
    if f.zero:
        return True, "Theorem 3.4 (the vertex: rank A <= 1 and rank V <= 1)"
    if not size.in_hypotheses:
        # d' = 1, a = 1: excluded by the theorem; the computed rule (certified by Macaulay2
        # for d = 2, 3): the closure is the cone over P^(d-1) x {symmetric rank <= 2}
        return f.critical and size.d >= 3, "found here (d' = 1, a = 1: singular exactly on the critical set, d >= 3)"
    if size.rank_bounded and f.rank_a < size.a:
        return True, "found here (rank bound: the domain is singular where rank A < a)"
    return f.rank_a <= 1 and f.rank_v <= 1, "Theorem 3.4 (singular iff rank A <= 1 and rank V <= 1)"


def theorem_fiber_components(size: Size) -> dict[str, list[tuple[int, int]]]:
    """Thm. 3.2 as (dimension, degree) of the minimal primes of the fiber ideal."""
    d, e = size.d, size.d_out
    return {
        "generic": [(1, 2)],  # the rescaling curve {(cA, V/c)}
        "rank-one pair": [(1, 2), (1, 2)],  # pair and swap
        "critical": [(1, 2)],  # pair = swap
        "zero": sorted([(d * e, 1), (d * d, 1)]),  # A' = 0 or V' = 0
    }


def theorem_fiber_counts(size: Size) -> dict[str, int]:
    """Thm. 3.2 as numbers of preimages up to rescaling."""
    return {"generic": 1, "rank A = 1": 1 if min(size.d, size.d_out) >= 2 else 2, "rank-one pair": 2, "critical": 1}


def theorem_dimension(size: Size) -> int:
    return size.dim  # Cor. 3.3


def theorem_rank_drop(size: Size) -> int:
    return size.d - 1  # Lemma A.3


@dataclass(frozen=True)
class Theory:
    """What the paper predicts, one field per kind of check.

    Where the computation shows the statement must be refined (rank bound,
    d' = 1 and a = 1) the singularity rule says so in its second return value.
    Tests replace a field by a wrong prediction to show that the corresponding
    check fails and names the counterexample.
    """

    name: str = "Theorem 3.4"
    singular: Callable[[Size, Features], tuple[bool, str]] = theorem_singular
    dimension: Callable[[Size], int] = theorem_dimension
    rank_drop: Callable[[Size], int] = theorem_rank_drop
    base_locus: str = "A or V"  # Cor. A.1: phi = 0 iff A = 0 or V = 0; "A": a wrong one
    fiber_components: Callable[[Size], dict[str, list[tuple[int, int]]]] = theorem_fiber_components
    fiber_counts: Callable[[Size], dict[str, int]] = theorem_fiber_counts
    conjugate_real_preimage: bool = False  # Cor. A.6


#: The theorem's statements, refined where the computation shows they must be.
THEOREM = Theory()


def stated_rule(f: Features) -> bool:
    """Theorem 3.4 exactly as stated: singular iff rank A <= 1 and rank V <= 1."""
    return f.rank_a <= 1 and f.rank_v <= 1
