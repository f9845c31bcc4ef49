"""How many random inputs a rank run needs, and what it may allocate: the plan of :func:`~ag_attention.dimension`.

docs/math/certificates.md (certificates-sampling): each input sequence adds at
most ``b`` directions to the rank once the shared weights are seen
(``new_directions_per_sample``, shared with the float64 engine in
``ag_attention/_models/sampling.py``), so ``N``
sequences are chosen to exceed the target by 10%, and each contributes ``k``
random combinations of its outputs.  :func:`run_memory` estimates a run's
peak memory from these sizes alone, before anything is allocated.
"""

from __future__ import annotations

import math

from .._architecture import Architecture
from .._errors import InvalidArgumentError
from .._models.formulas import symmetry_count
from .._models.sampling import new_directions_per_sample
from .._models.symmetries import symmetry_generators
from .._network import inputs_memory, jacobian_memory
from .._resources import MemoryEstimate, require_memory
from . import linalg
from .field import MAX_CONTRACTION
from .spans import engine_bound

__all__ = [
    "new_directions_per_sample",
    "sampling_plan",
    "default_samples",
    "planning_bound",
    "check_exact_sizes",
    "run_memory",
    "check_run_memory",
]


def sampling_plan(arch: Architecture, target: int, samples: int | None = None) -> tuple[int, int]:
    """``(N, k)``: input sequences and backward seeds per sequence to reach rank ``target``.

    ``N`` is large enough that ``N b`` exceeds the target by 10% (``b`` from
    :func:`new_directions_per_sample`), and ``k`` makes the ``N k`` rows
    exceed it by 10% too.
    """
    need = 1.1 * target + 10
    if samples is None:
        samples = math.ceil(need / new_directions_per_sample(arch)) + 1
    k = min(arch.output_size, math.ceil(need / samples) + 1)
    return samples, k


def planning_bound(arch: Architecture) -> int:
    """The rank to plan for: ``P`` minus the symmetries, or the proven upper bound where one is smaller."""
    bound = arch.parameter_count - symmetry_count(arch)
    analytic = engine_bound(arch)
    if analytic is not None:
        bound = min(bound, analytic.value)
    return max(bound, 1)


def default_samples(arch: Architecture) -> int:
    """Default number ``N`` of input sequences (see :func:`sampling_plan`)."""
    return sampling_plan(arch, planning_bound(arch))[0]


def check_exact_sizes(arch: Architecture) -> None:
    """Sizes the int64 GF(p) arithmetic can contract exactly (tokens, widths, ranks up to 65,534)."""
    for name, values in (("tokens", (arch.tokens,)), ("widths", arch.widths), ("ranks", arch.ranks)):
        for v in values:
            if v > MAX_CONTRACTION:
                raise InvalidArgumentError(
                    f"{name}={v}: exact GF(p) arithmetic on int64 contracts at most {MAX_CONTRACTION:,} terms at once; "
                    "use a smaller size"
                )


def run_memory(arch: Architecture, samples: int, k: int) -> MemoryEstimate:
    """Peak memory of one rank run: inputs, seeds, Jacobian, its FLINT copy, symmetry tangents.

    Stages: assembling the Jacobian (forward caches and adjoints), its rank
    (FLINT's copy and LU workspace, while the numpy Jacobian is alive), and
    the symmetry tangents (a list of rows, their array, their rank) beside it.
    """
    P = arch.parameter_count
    seeded = None if k >= arch.output_size else k
    rows = samples * (arch.output_size if seeded is None else k)
    jac = jacobian_memory(arch, samples, seeded)
    J = 8 * rows * P
    fixed = inputs_memory(arch, samples, seeded) + MemoryEstimate(8 * P, {"parameters": 8 * P})
    rank_stage = MemoryEstimate(J + linalg.rank_memory(rows, P), {"FLINT copy of the Jacobian": linalg.rank_memory(rows, P)})
    g = symmetry_generators(arch)
    sym_stage = MemoryEstimate(J + 2 * 8 * g * P + linalg.rank_memory(g, P), {f"symmetry tangents {g:,} x {P:,}": 2 * 8 * g * P})
    return fixed + (jac | rank_stage | sym_stage)


def check_run_memory(arch: Architecture, samples: int, k: int) -> None:
    """Refuse a run that does not fit in memory (before allocating anything of it)."""
    require_memory(
        run_memory(arch, samples, k),
        f"{arch.describe()} with {samples:,} samples x {min(k, arch.output_size)} rows",
        "use fewer samples (--samples) or a smaller network",
    )
