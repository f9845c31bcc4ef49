"""How many random inputs a rank run needs, and what it may allocate: the plan of :func:`~ag_attention.dimension`.

docs/math/certificates.md (certificates-sampling): each input sequence adds at
most ``b`` directions to the rank once the shared weights are seen
(:func:`directions_per_sample`: ``new_directions_per_sample``, shared with the
float64 engine in ``ag_attention/_models/formulas.py``, and at most
``d_0 d_L`` without a causal mask, docs/math/dimension.md
(dimension-one-sample)), so ``N`` sequences are chosen to exceed the target
by 10%, and each contributes ``k`` random combinations of its outputs.
:func:`run_memory` estimates a run's peak memory from these sizes alone,
before anything is allocated; :func:`jacobian_pieces` cuts a run whose one
sample needs more than :data:`PIECE_BYTES` (long sequences: ``t x t``
adjoints per row) into pieces assembled one after the other.
:func:`first_runs` plans the first runs of :func:`~ag_attention.dimension` from
what is proven of the architecture (:class:`ag_attention._models.formulas.Proven`)
and refuses them here if they cannot be done.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .._architecture import Architecture
from .._errors import InvalidArgumentError
from .._models import Proven, new_directions_per_sample, prove, symmetry_generators
from .._network import inputs_memory, jacobian_memory
from .._resources import MemoryEstimate, require_memory
from . import linalg
from .field import MAX_CONTRACTION
from .spans import output_span

__all__ = [
    "new_directions_per_sample",
    "directions_per_sample",
    "sampling_plan",
    "default_samples",
    "planning_bound",
    "check_exact_sizes",
    "run_memory",
    "check_run_memory",
    "first_runs",
    "Plan",
    "jacobian_pieces",
    "PIECE_BYTES",
]


def directions_per_sample(arch: Architecture, bound: int | None = None) -> int:
    """The bound ``b`` of the plan on what one more input sequence adds to the rank.

    ``bound``: the architecture's :func:`new_directions_per_sample` (Lemma
    3.6: ``t^2`` per path, at most the ``t d_L`` outputs), computed when not
    given.  Without a causal mask a lightning network computes
    ``phi(X) = X C(theta, X^T X)`` with ``C`` a ``d_0 x d_L`` matrix
    (docs/math/dimension.md (dimension-one-sample)), so a sample's outputs
    move in a space of dimension at most ``d_0 d_L`` whatever ``t``: the
    bound is at most that.  (For ``t > d_0`` Lemma 3.6's ``t d_L`` overstates
    it: at ``t = 5,000`` widths ``3,3`` rank 2 it promised 15,000 directions
    a sample, the plan took 2 samples, and 2 samples reach rank 14 of 16.)

    >>> directions_per_sample(Architecture((3, 3), (2,), tokens=5000))
    9
    >>> directions_per_sample(Architecture((3, 3), (2,), tokens=5000, causal=True))
    15000
    >>> directions_per_sample(Architecture((3, 3), (2,), tokens=2))
    4
    """
    b = new_directions_per_sample(arch) if bound is None else bound
    if not arch.causal and not arch.normalized and arch.is_linear_attention:  # biases, rotations: not X C(X^T X)
        b = min(b, arch.widths[0] * arch.widths[-1])
    return b


def sampling_plan(arch: Architecture, target: int, samples: int | None = None) -> tuple[int, int]:
    """``(N, k)``: input sequences and backward seeds per sequence to reach rank ``target``.

    ``N`` is large enough that ``N b`` exceeds the target by 10% (``b`` from
    :func:`directions_per_sample`), and ``k`` makes the ``N k`` rows
    exceed it by 10% too.
    """
    return _plan(directions_per_sample(arch), arch.output_size, target, samples)


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
    (``b`` from :func:`directions_per_sample` of ``Proven.directions_per_sample``)
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
        n, k = _plan(
            directions_per_sample(arch, step.directions_per_sample), arch.output_size, step.planning_bound, samples
        )
        if full_rows:
            k = arch.output_size
        check_exact_sizes(arch)
        check_run_memory(arch, n, k, pieced=True)
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


#: a run one of whose samples needs more than this for its Jacobian (forward caches, adjoints, its rows) is
#: assembled in pieces of rows of one sample, each below it: long sequences, whose ``t x t`` adjoints take ``8 t^2``
#: bytes per row (200 MB at ``t = 5,000``).  Otherwise a run is assembled at once, or in groups of samples below it
#: (memory as at once or less).  About 2 s of work at ~70 ns per ``t^2`` entry (bench: ``t = 5,000``, one row 2.7 s).
PIECE_BYTES = 256 * 2**20


def _rows_per_sample(arch: Architecture, k: int) -> int:
    return arch.output_size if k >= arch.output_size else k


def _piece_memory(arch: Architecture, samples: int, rows: int, seeded: bool) -> int:
    """Peak bytes of :func:`~ag_attention._network.jacobian` on ``samples`` samples of ``rows`` rows each."""
    return jacobian_memory(arch, samples, rows if seeded else None).peak


def _rows_per_piece(arch: Architecture, k: int) -> int | None:
    """Rows of one sample per piece when one sample's Jacobian needs more than :data:`PIECE_BYTES`, else None."""
    R = _rows_per_sample(arch, k)
    if _piece_memory(arch, 1, R, k < arch.output_size) <= PIECE_BYTES:
        return None
    one, two = _piece_memory(arch, 1, 1, True), _piece_memory(arch, 1, 2, True)  # affine in the rows
    per_row = max(1, two - one)
    return max(1, min(R, (PIECE_BYTES - (one - per_row)) // per_row))


def jacobian_pieces(arch: Architecture, samples: int, k: int) -> list[tuple[int, int, int, int]]:
    """How a run of ``samples`` samples with ``k`` output combinations each is assembled: ``(n0, n1, r0, r1)``,
    samples ``n0:n1``, rows ``r0:r1`` of each (``k`` at least the outputs ``t d_L``: all of them).

    One piece when the whole Jacobian's working memory is at most
    :data:`PIECE_BYTES`; otherwise groups of whole samples below it; when one
    sample alone needs more (long sequences), each sample's rows in groups
    below it.  The pieces cover the rows in order; each is a deadline check
    and a step of the bar apart from the next.

    >>> jacobian_pieces(Architecture((3, 3), (2,), tokens=2), 8, 5)
    [(0, 8, 0, 5)]
    >>> jacobian_pieces(Architecture((3, 3), (2,), tokens=5000), 2, 3)
    [(0, 1, 0, 1), (0, 1, 1, 2), (0, 1, 2, 3), (1, 2, 0, 1), (1, 2, 1, 2), (1, 2, 2, 3)]
    """
    N, R = int(samples), _rows_per_sample(arch, k)
    seeded = k < arch.output_size
    if N <= 0 or _piece_memory(arch, N, R, seeded) <= PIECE_BYTES:
        return [(0, N, 0, R)]
    rows = _rows_per_piece(arch, k)
    if rows is None:
        n = max(1, PIECE_BYTES // _piece_memory(arch, 1, R, seeded))
        return [(n0, min(N, n0 + n), 0, R) for n0 in range(0, N, n)]
    return [(n0, n0 + 1, r0, min(R, r0 + rows)) for n0 in range(N) for r0 in range(0, R, rows)]


def run_memory(
    arch: Architecture, samples: int, k: int, prime: int | None = None, pieced: bool = False
) -> MemoryEstimate:
    """Peak memory of one rank run: inputs, seeds, Jacobian, its FLINT copy, symmetry tangents.

    Stages: assembling the Jacobian (forward caches and adjoints), its rank
    (FLINT's copy and LU workspace, while the numpy Jacobian is alive), and
    the symmetry tangents (a list of rows, their array, their rank) beside it.
    ``pieced``: the Jacobian is assembled as :func:`jacobian_pieces` says (as
    :func:`~ag_attention.dimension`'s runs do): when one sample is cut into
    pieces of its rows, the assembly holds the Jacobian and one piece's
    working memory; otherwise (and without ``pieced``) it is counted as
    assembled at once, which bounds groups of samples too.
    """
    P = arch.parameter_count
    seeded = None if k >= arch.output_size else k
    rows = samples * (arch.output_size if seeded is None else k)
    J = 8 * rows * P
    rows_per_piece = _rows_per_piece(arch, k) if pieced else None
    if rows_per_piece is None:
        jac = jacobian_memory(arch, samples, seeded)
    else:
        piece = jacobian_memory(arch, 1, rows_per_piece)
        what = f"{rows_per_piece:,} row{'s' if rows_per_piece > 1 else ''} of one sample at a time"
        jac = MemoryEstimate(J + piece.peak, {f"Jacobian {rows:,} x {P:,}": J, what: piece.peak})
    fixed = inputs_memory(arch, samples, seeded) + MemoryEstimate(8 * P, {"parameters": 8 * P})
    copy = linalg.rank_memory(rows, P, prime)
    what = (
        "float64 copy of the Jacobian and products"
        if linalg.uses_blas(rows, P, prime)
        else "FLINT copy of the Jacobian"
    )
    rank_stage = MemoryEstimate(J + copy, {what: copy})
    g = symmetry_generators(arch)
    sym_stage = MemoryEstimate(
        J + 2 * 8 * g * P + linalg.rank_memory(g, P), {f"symmetry tangents {g:,} x {P:,}": 2 * 8 * g * P}
    )
    return fixed + (jac | rank_stage | sym_stage)


def check_run_memory(arch: Architecture, samples: int, k: int, prime: int | None = None, pieced: bool = False) -> None:
    """Refuse a run that does not fit in memory (before allocating anything of it); ``prime``: the rank's prime
    (below 2^21 a large rank takes the BLAS route, with its own memory); ``pieced``: see :func:`run_memory`."""
    require_memory(
        run_memory(arch, samples, k, prime, pieced),
        f"{arch.describe()} with {samples:,} samples x {min(k, arch.output_size)} rows",
        "use fewer samples (--samples) or a smaller network",
    )
