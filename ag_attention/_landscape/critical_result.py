"""The result of :func:`~ag_attention._landscape.critical.critical_points`: each critical point, each family on the
critical locus, the routes tried, and where given weights sit among the points (:class:`Nearest`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from .._architecture import Architecture
from .._errors import InvalidArgumentError
from .._provenance import provenance
from .._results import ResultMixin
from .metrics import reduced_coordinates

__all__ = ["AT", "CriticalFamily", "CriticalPoint", "CriticalPoints", "Nearest", "Route", "hessian_class"]


def hessian_class(positive: int, negative: int, undecided: int) -> str:
    """A critical point's class from the Hessian's eigenvalues proven positive, proven negative and undecided."""
    if undecided:
        return "undecided"
    if negative == 0:
        return "minimum"
    return "maximum" if positive == 0 else "saddle"


@dataclass(frozen=True)
class CriticalPoint:
    """One real critical point: its box, loss, ranks and Hessian signature (each certified or said not to be)."""

    kind: str  # "pure": off the critical locus of the parametrization
    box: dict[str, tuple[Fraction, Fraction]]  # every unknown's isolating interval
    A: np.ndarray  # midpoints (float)
    V: np.ndarray
    loss: tuple[float, float]
    rank_A: str  # "2" (proven, full) or ">= 1" (proven lower bound)
    rank_V: str
    positive: int  # Hessian eigenvalues proven positive / negative, and undecided
    negative: int
    undecided: int
    source: str = "msolve"  # "msolve": an isolating box of msolve's real root isolation over QQ; "krawczyk": a box
    #                         the Krawczyk test proved to hold exactly one solution, and a real one

    @property
    def coordinates(self) -> np.ndarray:
        """The reduced coordinates ``x(A, V)`` of the midpoint (float64): the point of the neuromanifold."""
        return reduced_coordinates(self.A, self.V)

    @property
    def signature(self) -> str:
        return hessian_class(self.positive, self.negative, self.undecided)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "source": self.source,
            "signature": self.signature,
            "loss": list(self.loss),
            "hessian": {"positive": self.positive, "negative": self.negative, "undecided": self.undecided},
            "rank_A": self.rank_A,
            "rank_V": self.rank_V,
            "A": self.A.tolist(),
            "V": self.V.tolist(),
            "box": {k: [str(lo), str(hi)] for k, (lo, hi) in self.box.items()},
        }


@dataclass(frozen=True)
class CriticalFamily:
    """Critical points on the critical locus of the parametrization (their images: singular points)."""

    where: str  # "V = 0", "A = 0", "A = p q^T, V = r q^T"
    dimension: int  # V = 0, A = 0: of the linear space of such critical weights (0: the origin alone); else 0
    complex: int | None  # number of points (dimension 0), None otherwise
    real: int | None
    loss: tuple[float, float] | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "where": self.where,
            "dimension": self.dimension,
            "complex": self.complex,
            "real": self.real,
            "loss": None if self.loss is None else list(self.loss),
        }


@dataclass(frozen=True)
class Route:
    """One route a result tried: its name, seconds, and outcome (``ok``, ``timed out after ...``, ``failed: ...``)."""

    name: str
    seconds: float
    outcome: str

    def to_dict(self) -> dict[str, Any]:
        return {"route": self.name, "seconds": round(self.seconds, 3), "outcome": self.outcome}


@dataclass(frozen=True)
class Nearest:
    """Where given weights sit among the real critical points: the nearest one in the function space, and how the
    weights' loss compares with the least critical loss."""

    index: int  # in ``points`` (sorted by loss)
    point: CriticalPoint
    distance: float  # |x(A, V) - x*| on the reduced coordinates (float64)
    relative: float  # distance / |x*|
    least_loss: bool  # the nearest is the real critical point of least loss
    loss: float  # the loss at the given weights (float64)
    least: float = float("nan")  # the least loss over every real critical point found (the critical locus too)
    complete: bool = False  # every real critical point is known (the result is final): the least is the global one
    at: bool = False  # the weights sit at the nearest critical point (relative distance below AT)

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "signature": self.point.signature,
            "critical_loss": list(self.point.loss),
            "distance": self.distance,
            "relative_distance": self.relative,
            "least_loss": self.least_loss,
            "loss": self.loss,
            "least_critical_loss": self.least,
            "complete": self.complete,
            "at_critical_point": self.at,
            "verdict": self.verdict(),
        }

    def verdict(self) -> str:
        """One line: at the global minimum (certified), or how far above the least critical loss the weights are."""
        where = (
            f"at critical point #{self.index} ({self.point.signature}, relative distance {self.relative:.1g} in "
            "the function space)"
            if self.at
            else f"not at a critical point (the nearest, #{self.index}, a {self.point.signature}, is at relative "
            f"distance {self.relative:.2g})"
        )
        gap = self.loss - self.least
        scale = max(abs(self.least), 1e-300)
        if self.at and self.least_loss and self.point.signature == "minimum":
            if self.complete:
                return (
                    f"{where}: the global minimum among all real critical points (every one found: "
                    f"certified), loss {self.loss:.6g}"
                )
            return (
                f"{where}: the least loss among the real critical points found, {self.loss:.6g} (not certified "
                "global: the set of real critical points is not known to be complete)"
            )
        among = ", among all real critical points: certified" if self.complete else ", among those found"
        return (
            f"{where}; its loss {self.loss:.6g} is {gap:.3g} above the least critical loss {self.least:.6g} "
            f"({100 * gap / scale:.3g}% higher{among})"
        )

    def __str__(self) -> str:
        return self.verdict()


#: weights whose image is this close (relative) to a critical point's are said to sit at it
AT = 1e-3


def _noun(n: int, one: str, many: str) -> str:
    """``1 minimum``, ``3 minima``: a count with its noun in the right number."""
    return f"{n} {one if n == 1 else many}"


@dataclass(frozen=True)
class CriticalPoints(ResultMixin):
    """Every critical point of the squared loss of one layer on a data set, classified, with what each route proves.

    ``complex_pure``: msolve's count of the complex critical points in the weights (modulo the symmetries), over
    two primes that agree (probabilistic: ``primes``, drawn from ``prime_seed`` and the data's SHA-256, a third
    where two counts differed; ``certificate`` states them and the bound ``error_bound`` on the error probability
    with its hypotheses), or None when msolve did not run or finish.  ``prime``: the first of ``primes`` (0 when
    nothing was counted modulo a prime).  ``complex_certified``:
    distinct complex critical points the Krawczyk test proved (a *proven lower bound*), or None.
    ``complex_generic``: the count monodromy found over a random complex target with the same Gram form (what
    generic targets give; numerical, its stopping rule stated).  ``points``: the real ones, from msolve's isolation
    when it finished (then all of them: ``real_complete``) else the certified real ones (a lower bound).
    """

    architecture: Architecture
    samples: int
    conversion: str
    complex_pure: int | None
    points: tuple[CriticalPoint, ...]  # the real pure ones
    families: tuple[CriticalFamily, ...]
    prime: int
    seed: int
    seconds: float
    notes: tuple[str, ...] = field(default=())
    method: str = "msolve"
    complex_certified: int | None = None
    complex_generic: int | None = None
    real_complete: bool = True
    routes: tuple[Route, ...] = field(default=())
    msolve: str | None = None  # msolve's version, when it ran
    monodromy: dict[str, Any] | None = None
    certification: dict[str, Any] | None = None
    loss_constant: Any = None  # c in L = x^T G x - 2 w^T x + c
    gram: Any = field(default=None, repr=False)  # (G, w) exact
    final: bool = True  # every critical point found (as far as the routes tell) and classified; else a limit stopped it
    status: str = ""  # why it is not final
    generic_final: bool | None = None  # the monodromy met its rule: complex_generic is its value, not a limit's
    primes: tuple[int, ...] = ()  # the primes msolve's count rests on (two that agree), drawn for the data
    prime_seed: int | None = None  # the seed of the counting primes (fresh entropy unless given)
    counting: str = ""  # the primes, their seed and the error bound (PrimeDraw.certificate); "" without a count
    error_bound: float | None = None  # on the probability that complex_pure is wrong, under ``counting``'s hypotheses

    @property
    def certificate(self) -> str:
        """What each number rests on: the complex count probabilistic (its primes and error bound), the real points
        proven (msolve's isolation) or certified (Krawczyk), the losses and Hessian signs proven (ball arithmetic)."""
        count = (
            f"complex count: probabilistic: {self.counting}"
            if self.complex_pure is not None and self.counting
            else "complex count: none modulo primes"
        )
        return (
            f"{count}; real points: proven (msolve's real root isolation over QQ, one per box, or the Krawczyk "
            "test); loss and Hessian signs: proven (ball arithmetic)"
        )

    @property
    def minima(self) -> int:
        return sum(1 for p in self.points if p.signature == "minimum")

    @property
    def saddles(self) -> int:
        return sum(1 for p in self.points if p.signature == "saddle")

    def nearest(self, weights: Any, V: Any = None) -> Nearest:
        """The real critical point nearest to given weights (``A, V`` arrays, or a one-layer
        :class:`~ag_attention.Network`) in the function space (the reduced coordinates ``x(A, V)``, so every
        symmetry of the weights is quotiented out): which critical point did training reach.

        Its class, its distance, and whether it is the real critical point of least loss.
        """
        A, V = _weights_of(weights, V, self.architecture)
        if not self.points:
            raise InvalidArgumentError("no real critical point was found: nothing to compare the weights with")
        x = reduced_coordinates(A, V)
        dist = [float(np.linalg.norm(x - p.coordinates)) for p in self.points]
        k = int(np.argmin(dist))
        norm = float(np.linalg.norm(self.points[k].coordinates)) or 1.0
        least = min(range(len(self.points)), key=lambda i: self.points[i].loss[0])
        loss = float("nan")
        if self.gram is not None:
            G, w = self.gram
            Gf = np.array(G, dtype=float)
            wf = np.array(w, dtype=float)
            loss = float(x @ Gf @ x - 2 * wf @ x + float(self.loss_constant))
        losses = [sum(p.loss) / 2 for p in self.points] + [f.loss[0] for f in self.families if f.loss is not None]
        lowest = min(losses)
        least_here = sum(self.points[least].loss) / 2 <= lowest  # (a family of the critical locus may be lower)
        complete = self.final and self.real_complete and all(f.dimension >= 0 for f in self.families)
        return Nearest(
            k,
            self.points[k],
            dist[k],
            dist[k] / norm,
            k == least and least_here,
            loss,
            lowest,
            complete,
            dist[k] / norm < AT,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "architecture": self.architecture.to_dict(),
            "final": self.final,
            "status": self.status or None,
            "samples": self.samples,
            "conversion": self.conversion,
            "method": self.method,
            "complex_pure": self.complex_pure,
            "complex_certified": self.complex_certified,
            "complex_generic": self.complex_generic,
            "complex_generic_final": self.generic_final,
            "real_pure": len(self.points),
            "real_complete": self.real_complete,
            "minima": self.minima,
            "saddles": self.saddles,
            "points": [p.to_dict() for p in self.points],
            "families": [f.to_dict() for f in self.families],
            "prime": self.prime,
            "primes": list(self.primes),
            "prime_seed": self.prime_seed,
            "error_bound": self.error_bound,
            "certificate": self.certificate,
            "seed": self.seed,
            "seconds": round(self.seconds, 3),
            "routes": [r.to_dict() for r in self.routes],
            "monodromy": self.monodromy,
            "certification": self.certification,
            "notes": list(self.notes),
            "provenance": provenance(msolve=self.msolve),
        }

    def table(self) -> list[dict[str, Any]]:
        """One row per real critical point: kind, signature, loss (midpoint), ranks."""
        return [
            {
                "kind": p.kind,
                "signature": p.signature,
                "loss": (p.loss[0] + p.loss[1]) / 2,
                "rank A": p.rank_A,
                "rank V": p.rank_V,
                "source": p.source,
            }
            for p in sorted(self.points, key=lambda q: q.loss[0])
        ]

    def _classes(self) -> str:
        text = f"{_noun(self.minima, 'minimum', 'minima')}, {_noun(self.saddles, 'saddle', 'saddles')}"
        undecided = len(self.points) - self.minima - self.saddles
        return text + (f", {undecided} undecided" if undecided else "")

    def __repr__(self) -> str:
        return (
            f"CriticalPoints({self.architecture.describe()}, {self.samples} sequences: {self.complex_pure} "
            f"complex pure, {len(self.points)} real, {_noun(self.minima, 'minimum', 'minima')})"
        )

    def __str__(self) -> str:
        head = (
            f"Critical points of the squared loss of {self.architecture.describe()} on {self.samples} "
            f"sequences ({self.conversion})"
        )
        if not self.final:
            head += f": NOT FINAL ({self.status}; what was found is below)"
        lines = [head]
        real = f"{len(self.points)} real" if self.real_complete else f"at least {len(self.points)} real (certified)"
        if self.complex_pure is not None:
            lines.append(
                f"  pure             {self.complex_pure} complex (msolve, two primes), {real}: {self._classes()}"
            )
        if self.complex_certified is not None:
            generic = (
                f"{self.complex_generic}"
                if self.generic_final or self.generic_final is None
                else f">= {self.complex_generic} (the monodromy stopped at "
                + ("msolve's count of these data" if (self.monodromy or {}).get("stop") == "known count" else "a limit")
                + ")"
            )
            lines.append(
                f"  certified        {self.complex_certified} distinct complex solutions proven (Krawczyk: a "
                f"lower bound), {generic} for a generic target (monodromy)"
            )
            if self.complex_pure is None:
                lines.append(f"  pure             {real}: {self._classes()}")
        for row in self.table():
            lines.append(
                f"    {row['kind']:<22} {row['signature']:<10} loss {row['loss']:.6g}  rank A {row['rank A']}, "
                f"rank V {row['rank V']}"
            )
        for f in self.families:
            if f.complex is not None:
                what = f"{f.complex} complex, {f.real} real"
            elif f.dimension < 0:
                what = "not computed (did not finish within the time limit)"
            elif f.where in ("V = 0", "A = 0"):
                what = (
                    f"a linear space of dimension {f.dimension} in the weights" if f.dimension else "the origin alone"
                )
            elif f.dimension < 0:
                what = "not computed (did not finish within the time limit)"
            else:
                what = "not zero-dimensional: a family"
            loss = "" if f.loss is None else f", loss {f.loss[0]:.6g}"
            lines.append(f"  critical locus   {f.where}: {what}{loss} (at singular points of the closure)")
        for r in self.routes:
            lines.append(f"  route            {r.name}: {r.outcome} ({r.seconds:.1f} s)")
        if self.complex_pure is not None and self.counting:
            lines.append(f"  certificate      complex count probabilistic: {self.counting}")
        lines += [f"  note             {n}" for n in self.notes]
        lines.append(f"  seed {self.seed}, prime seed {self.prime_seed}, {self.seconds:.2f} s")
        return "\n".join(lines)


def _weights_of(weights: Any, V: Any, arch: Architecture) -> tuple[np.ndarray, np.ndarray]:
    """``(A, V)`` float64 of a one-layer network or of two arrays, checked against the architecture's widths."""
    d, e = arch.widths
    if V is None and hasattr(weights, "weights") and hasattr(weights, "architecture"):
        net = weights
        if net.architecture.depth != 1 or net.architecture.heads != 1:
            raise InvalidArgumentError(
                f"nearest: a one-layer one-head network is needed, got {net.architecture.describe()}"
            )
        head = net.weights[0][0]
        A = (
            np.array(head["A"], dtype=float)
            if "A" in head
            else np.array(head["Q"], dtype=float).T @ np.array(head["K"], dtype=float)
        )
        Vm = np.array(head["V"], dtype=float)
    else:
        try:
            A, Vm = np.asarray(weights, dtype=float), np.asarray(V, dtype=float)
        except (TypeError, ValueError) as exc:
            raise InvalidArgumentError(f"nearest: A and V must be numeric matrices ({exc})") from None
    if A.shape != (d, d) or Vm.shape != (e, d):
        raise InvalidArgumentError(f"nearest: A must be {d} x {d} and V {e} x {d}, got {A.shape} and {Vm.shape}")
    if not (np.isfinite(A).all() and np.isfinite(Vm).all()):
        raise InvalidArgumentError("nearest: the weights hold inf or nan")
    return A, Vm
