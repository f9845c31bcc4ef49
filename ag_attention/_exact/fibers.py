"""Generic fibers of deep lightning networks (Theorem 3.7), exactly over GF(p).

At the random parameter point of the dimension engine, the kernel of the
Jacobian (the tangent space of the fiber) is compared with the span of the
tangent vectors of the three symmetry families (docs/math/symmetries.md (symmetries-families)):

* *lies in the kernel*: ``J T^T = 0`` over GF(p), exactly when the product is
  small enough, otherwise by Freivalds' test with 16 random vectors (a
  violation escapes with probability at most ``p^-16``);
* *fills it*: ``rank J + rank T = P``.  Then ``ker J = span T`` at that point,
  and since ``rank_p J <= generic rank`` and ``rank_p T <= generic rank of T``,
  the generic fiber is exactly the symmetry orbit (its dimension is proven).

Where the kernel is larger (widths growing before the last layer, a rank-one
layer before the last, ``t = 1``), the excess ``P - rank J - rank T`` is an
upper bound on the number of unexplained directions, and it is exact when the
dimension is certified by another route and every family acts freely.

:func:`fibers` is :func:`~ag_attention.dimension` (prove, measure, decide: the
dimension and the point of its main run), then one more measurement at that
point (the symmetry tangents family by family, and ``J T^T``), then the
verdict (:class:`FiberResult`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._architecture import Architecture, check_architecture
from .._errors import ComputationError
from .._models import symmetry_generators, symmetry_tangents
from .._resources import MemoryEstimate, require_memory
from .._results import ResultMixin
from . import linalg
from .dimension import DimensionResult, dimension, evaluate, run_memory

__all__ = ["FiberResult", "fibers"]

_EXACT_LIMIT = 5 * 10**8


@dataclass(frozen=True)
class FamilyRank:
    name: str
    generators: int
    rank_added: int  # rank gained when this family is added to the previous ones

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "generators": self.generators, "rank_added": self.rank_added}


@dataclass(frozen=True)
class FiberResult(ResultMixin):
    """The generic fiber of a network against its symmetry families (Thm. 3.7), exactly over GF(p).

    In a notebook it shows as its summary and a table of its fields
    (``_repr_markdown_``); ``to_frame()`` gives it as a one-row pandas
    ``DataFrame`` (its columns: the flattened ``to_dict()``).
    """

    dimension: DimensionResult
    symmetry_dimension: int
    families: tuple[FamilyRank, ...]
    in_kernel: bool
    kernel_check: str  # "exact" or "Freivalds (16 vectors)"
    seconds: float

    @property
    def architecture(self) -> Architecture:
        return self.dimension.architecture

    @property
    def fiber_dimension(self) -> int:
        return self.dimension.parameters - self.dimension.dimension

    @property
    def excess(self) -> int:
        return self.fiber_dimension - self.symmetry_dimension

    @property
    def explained(self) -> bool:
        return self.in_kernel and self.excess == 0

    @property
    def excess_exact(self) -> bool:
        """The excess is exact when the dimension is certified and every generator is independent."""
        return self.dimension.certified and self.symmetry_dimension == sum(f.generators for f in self.families)

    def to_dict(self) -> dict[str, Any]:
        e = self.dimension.expected
        return {
            "architecture": self.architecture.to_dict(),
            "parameters": self.dimension.parameters,
            "dimension": self.dimension.dimension,
            "dimension_certified": self.dimension.certified,
            "fiber_dimension": self.fiber_dimension,
            "symmetry_dimension": self.symmetry_dimension,
            "symmetry_count": self.dimension.symmetry_count,
            "explained": self.explained,
            "excess": self.excess,
            "excess_exact": self.excess_exact,
            "in_kernel": self.in_kernel,
            "kernel_check": self.kernel_check,
            "families": [f.to_dict() for f in self.families],
            "theorem_hypotheses_hold": e.applies,
            "failed_hypotheses": e.failed_hypotheses,
            "prime": self.dimension.prime,
            "seed": self.dimension.seed,
            "seconds": round(self.seconds, 4),
        }

    def __repr__(self) -> str:
        return (
            f"FiberResult({self.architecture.describe()}: fiber {self.fiber_dimension}, "
            f"symmetries {self.symmetry_dimension}, "
            f"{'explained' if self.explained else f'excess {self.excess}'})"
        )

    def __str__(self) -> str:
        e = self.dimension.expected
        hyp = "hold" if e.applies else "fail: " + "; ".join(e.failed_hypotheses)
        certified = self.dimension.certified
        lines = [
            self.architecture.describe(),
            f"  generic fiber dimension  {'' if certified else 'at most '}{self.fiber_dimension}  "
            f"(P = {self.dimension.parameters}, dim {'=' if certified else '>='} {self.dimension.dimension}"
            f"{', certified' if certified else ', dim a lower bound'})",
            f"  symmetry tangents        rank {self.symmetry_dimension} (count {self.dimension.symmetry_count}), "
            f"{'in the kernel' if self.in_kernel else 'NOT in the kernel'} ({self.kernel_check})",
        ]
        for f in self.families:
            lines.append(f"    {f.name:<36} {f.generators:>5} generators, rank +{f.rank_added}")
        verdict = (
            "explained: the kernel is exactly the span of the symmetries"
            if self.explained
            else f"NOT explained: the kernel is larger by {self.excess}"
            + (" (exact)" if self.excess_exact else " (an upper bound: the dimension is a lower bound)")
        )
        lines += [
            f"  verdict                  {verdict}",
            f"  Thm. 3.7 / Cor. 3.8 hypotheses {hyp}",
            f"  prime {self.dimension.prime}, seed {self.dimension.seed}, {self.seconds:.2f} s",
        ]
        return "\n".join(lines)


def fibers(arch: Architecture, *, prime: int | None = None, seed: int = 0) -> FiberResult:
    """Compare the kernel of the Jacobian with the symmetry tangents (Thm. 3.7)."""
    arch = check_architecture(arch)
    t0 = time.perf_counter()
    kwargs: dict[str, Any] = {"seed": seed}
    if prime is not None:
        kwargs["prime"] = prime
    # prove, measure, decide: the dimension, and the point of the run that reached it
    dim = dimension(arch, **kwargs)
    run = dim.main
    p = run.prime
    # measure at that point again: its Jacobian and symmetry tangents (refused first if they do not fit)
    g = symmetry_generators(arch)
    require_memory(
        run_memory(arch, run.samples, run.seeds_per_sample)
        + MemoryEstimate(8 * run.rows * g, {f"J T^T {run.rows:,} x {g:,}": 8 * run.rows * g}),
        f"the fiber check of {arch.describe()}",
        "use a smaller network",
    )
    ev = evaluate(arch, p, run.seed, run.samples, run.seeds_per_sample)
    T, families = symmetry_tangents(arch, ev.theta, ev.field)
    # the rank each family adds to the ones before it
    ranks = []
    done = 0
    with linalg.threads():  # all CPUs, like dimension() (which restores FLINT's setting when it returns)
        for fam in families:
            r = linalg.rank(T[: fam.rows.stop], p) if fam.rows.stop else 0
            ranks.append(FamilyRank(fam.name, fam.rows.stop - fam.rows.start, r - done))
            done = r
    # J T^T = 0: exactly where the product is small enough, otherwise by Freivalds' test (16 random vectors)
    if T.shape[0] == 0:
        in_kernel, how = True, "exact"
    elif ev.J.shape[0] * ev.J.shape[1] * T.shape[0] <= _EXACT_LIMIT:
        Tt = np.ascontiguousarray(T.T)
        prod = np.zeros((ev.J.shape[0], T.shape[0]), dtype=np.int64)
        for c in range(T.shape[0]):
            prod[:, c] = ev.field.matvec(ev.J, Tt[:, c])
        in_kernel, how = not np.any(prod), "exact"
    else:
        rng = np.random.default_rng([seed, 7])
        in_kernel = True
        for _ in range(16):
            w = ev.field.random(rng, T.shape[0])
            in_kernel &= not np.any(ev.field.matvec(ev.J, ev.field.matvec(np.ascontiguousarray(T.T), w)))
        how = "Freivalds (16 random vectors)"
    # the verdict: a tangent outside the kernel is a bug; FiberResult compares the kernel with their span
    if not in_kernel:
        raise ComputationError("a symmetry tangent is not in the kernel of the Jacobian (bug)", prime=p, seed=seed)
    return FiberResult(dim, done, tuple(ranks), bool(in_kernel), how, time.perf_counter() - t0)
