"""Proven lower bounds on the span of a network's outputs, for the composition bound.

docs/math/bounds.md (bounds-composition): a cut between blocks of layers
subtracts ``dim GL_d`` only where the outputs of the block before it span
``C^d``.  The widths prove that when they do not grow; otherwise the engine
proves it here: the outputs of the block at one random point ``theta`` over
``GF(p)``, on random inputs, stacked as rows, have a rank over ``GF(p)`` that is
at most their rank over ``QQ`` (integer vectors), which is at most the span of
the outputs at ``theta``, which is at most the span for generic weights (the
span can only drop at special weights).  So that rank is a proven lower bound;
if it reaches ``d`` the span is ``C^d``.  (An unlucky point can only make it
smaller: a cut that does not subtract, never a wrong bound.)
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from .._architecture import Architecture
from .._models import UpperBound, best_upper_bound
from .._network import forward, random_inputs, random_parameters
from .field import DEFAULT_PRIME, GFp
from .linalg import rank

__all__ = ["output_span", "engine_bound", "SPAN_SEED", "MAX_SPAN_PARAMETERS", "MAX_SPAN_TOKENS"]

#: the seed of the point at which spans are computed (fixed: a bound must not depend on the run)
SPAN_SEED = 13
#: larger blocks get no computed span (the widths still decide): their forward pass is not worth it here
MAX_SPAN_PARAMETERS = 200_000
#: nor blocks on more tokens (the forward pass holds t x t attention arrays; the span needs few tokens)
MAX_SPAN_TOKENS = 64


@lru_cache(maxsize=4096)
def output_span(arch: Architecture) -> int:
    """A proven lower bound on ``dim span{f(X)_i}`` over all inputs, for generic weights (0 if not computed).

    >>> from ag_attention import Architecture
    >>> output_span(Architecture((2, 3), (1,), tokens=2, heads=2))  # two heads from C^2 reach all of C^3
    3
    >>> output_span(Architecture((1, 3), (1,), tokens=2, heads=2))  # one input feature: one direction
    1
    """
    if arch.normalized or arch.parameter_count > MAX_SPAN_PARAMETERS or arch.tokens > MAX_SPAN_TOKENS:
        return 0
    d = arch.widths[-1]
    ops = GFp(DEFAULT_PRIME)
    rng = np.random.default_rng(SPAN_SEED)
    theta = random_parameters(arch, ops, rng)
    X = random_inputs(arch, ops, rng, d // arch.tokens + 3)
    Y = forward(arch, ops, theta, X).reshape(-1, d)
    return rank(Y, DEFAULT_PRIME)


def engine_bound(arch: Architecture) -> UpperBound | None:
    """The smallest proven upper bound, with the spans proven by :func:`output_span` (the engine's bound)."""
    return best_upper_bound(arch, output_span)
