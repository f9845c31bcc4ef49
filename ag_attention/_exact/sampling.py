"""How many random inputs a rank run needs, and what it may allocate: the plan of :func:`~ag_attention.dimension`.

docs/math/certificates.md (certificates-sampling): each input sequence adds at
most ``b`` directions to the rank once the shared weights are seen
(``new_directions_per_sample``, shared with the float64 engine in
``ag_attention/_models/formulas.py``), so ``N``
sequences are chosen to exceed the target by 10%, and each contributes ``k``
random combinations of its outputs.  :func:`run_memory` estimates a run's
peak memory from these sizes alone, before anything is allocated.
:func:`first_runs` plans the first runs of :func:`~ag_attention.dimension` from
what is proven of the architecture (:class:`ag_attention._models.formulas.Proven`)
and refuses them here if they cannot be done.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .._architecture import Architecture
from .._errors import InvalidArgumentError
from .._models.formulas import Proven, prove
from .._models.formulas import new_directions_per_sample
from .._models.symmetries import symmetry_generators
from .._network import inputs_memory, jacobian_memory
from .._resources import MemoryEstimate, require_memory
from . import linalg
from .field import MAX_CONTRACTION
from .spans import output_span

__all__ = [
    "new_directions_per_sample",
    "sampling_plan",
    "default_samples",
    "planning_bound",
    "check_exact_sizes",
    "run_memory",
    "check_run_memory",
    "first_runs",
    "Plan",
]


def sampling_plan(arch: Architecture, target: int, samples: int | None = None) -> tuple[int, int]:
    """``(N, k)``: input sequences and backward seeds per sequence to reach rank ``target``.

    ``N`` is large enough that ``N b`` exceeds the target by 10% (``b`` from
    :func:`new_directions_per_sample`), and ``k`` makes the ``N k`` rows
    exceed it by 10% too.
    """
    return _plan(new_directions_per_sample(arch), arch.output_size, target, samples)


def _plan(directions: int, outputs: int, target: int, samples: int | None) -> tuple[int, int]:
    """:func:`sampling_plan` from ``b`` (``directions``) and the ``t d_L`` outputs of one sample."""
    need = 1.1 * target + 10
    if samples is None:
        samples = math.ceil(need / directions) + 1
    k = min(outputs, math.ceil(need / samples) + 1)
    return samples, k


def planning_bound(arch: Architecture) -> int:
    """The rank to plan for: ``P`` minus the symmetries, or the proven upper bound where one is smaller.

    That is :attr:`Proven.planning_bound <ag_attention._models.formulas.Proven.planning_bound>`
    with the engine's spans.
    """
    return prove(arch, output_span).planning_bound


def default_samples(arch: Architecture) -> int:
    """Default number ``N`` of input sequences (see :func:`sampling_plan`)."""
    return sampling_plan(arch, planning_bound(arch))[0]


@dataclass(frozen=True)
class Plan:
    """The first rank run of one architecture: ``samples`` input sequences, ``k`` output combinations of each.

    ``adaptive``: the samples were planned here (not given), so the runs may
    double them while the rank is short of the upper bound.
    """

    proven: Proven
    samples: int
    k: int
    adaptive: bool


def first_runs(proven: Proven, samples: int | None = None, full_rows: bool = False) -> list[Plan]:
    """The first rank run of ``proven.architecture`` and of its effective architecture, the effective one first.

    Each is :func:`sampling_plan` aimed at ``Proven.planning_bound``
    (``samples`` as given for the architecture, always adaptive for its
    effective one; ``full_rows``: all ``t d_L`` outputs of every sample), and
    each is refused here, before anything is computed, if its sizes exceed the
    exact arithmetic (:func:`check_exact_sizes`) or it does not fit in memory
    (:func:`check_run_memory`): the architecture's first, as the user sees them.
    """
    plans = []
    step: Proven | None = proven
    while step is not None:
        arch = step.architecture
        n, k = _plan(step.directions_per_sample, arch.output_size, step.planning_bound, samples)
        if full_rows:
            k = arch.output_size
        check_exact_sizes(arch)
        check_run_memory(arch, n, k)
        plans.append(Plan(step, n, k, adaptive=samples is None))
        step, samples = step.effective, None
    return plans[::-1]


def check_exact_sizes(arch: Architecture) -> None:
    """Sizes the int64 GF(p) arithmetic can contract exactly (tokens, widths, ranks up to 65,534)."""
    for name, values in (("tokens", (arch.tokens,)), ("widths", arch.widths), ("ranks", arch.ranks)):
        for v in values:
            if v > MAX_CONTRACTION:
                raise InvalidArgumentError(
                    f"{name}={v}: exact GF(p) arithmetic on int64 contracts at most {MAX_CONTRACTION:,} terms at once; "
                    "use a smaller size"
                )


def run_memory(arch: Architecture, samples: int, k: int, prime: int | None = None) -> MemoryEstimate:
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
    copy = linalg.rank_memory(rows, P, prime)
    what = "float64 copy of the Jacobian and products" if linalg.uses_blas(rows, P, prime) else "FLINT copy of the Jacobian"
    rank_stage = MemoryEstimate(J + copy, {what: copy})
    g = symmetry_generators(arch)
    sym_stage = MemoryEstimate(J + 2 * 8 * g * P + linalg.rank_memory(g, P), {f"symmetry tangents {g:,} x {P:,}": 2 * 8 * g * P})
    return fixed + (jac | rank_stage | sym_stage)


def check_run_memory(arch: Architecture, samples: int, k: int, prime: int | None = None) -> None:
    """Refuse a run that does not fit in memory (before allocating anything of it); ``prime``: the rank's prime
    (below 2^21 a large rank takes the BLAS route, with its own memory)."""
    require_memory(
        run_memory(arch, samples, k, prime),
        f"{arch.describe()} with {samples:,} samples x {min(k, arch.output_size)} rows",
        "use fewer samples (--samples) or a smaller network",
    )
