"""How much one input sequence can add to the Jacobian of a network (Lemma 3.6), for both engines.

The exact engine (:mod:`ag_attention._exact.dimension`) and the float64 one
(:mod:`ag_attention._numeric`) size their samples with the same bound.
"""

from __future__ import annotations

from .._architecture import Architecture

__all__ = ["new_directions_per_sample"]


def new_directions_per_sample(arch: Architecture) -> int:
    """Bound ``b`` on the rank one more input sequence can add, once shared weights are seen.

    A plain lightning network computes ``Y = (V_L ... V_1) X (S_1^T ... S_L^T)``
    with ``t x t`` attention matrices ``S_i`` (Lemma 3.6), so beyond the
    ``d_L x d_0`` product of the values a sample carries at most ``t^2`` new
    directions; several heads or skip connections give ``(H + skip)^L`` such
    products.  Never more than the ``t d_L`` outputs.  With softmax rows
    summing to one, a plain network's ``S`` has only ``t (t - 1)`` free
    entries (and at least one direction is assumed).

    >>> new_directions_per_sample(Architecture((3, 2), (2,), tokens=3))
    6
    >>> new_directions_per_sample(Architecture((3, 3), (2,), tokens=3, normalized=True))
    6
    """
    t = arch.tokens
    paths: int = (arch.heads + int(arch.skip)) ** arch.depth  # int ** int is typed Any (a negative power is a float)
    if not arch.normalized:
        return min(t * arch.widths[-1], t * t * paths)
    per = t * (t - 1) if arch.is_plain else t * t * paths
    return max(1, min(arch.output_size, per))
