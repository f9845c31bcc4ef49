"""Every critical point of the squared loss of one layer on a given data set: :func:`critical_points`.

docs/math/landscape.md (landscape-critical-points).  Data: input sequences
``X_n`` and targets ``Y_n`` (exact rationals; floats by the rule of
:class:`~ag_attention.Network`); the loss ``L(A, V) = sum_n |f(X_n) - Y_n|^2``
in the weights, modulo the rescaling ``(c A, V / c)`` (a slice ``l(V) = 1``)
and, for ``a < d``, ``GL_a`` (the chart ``A = B [I | K]``).  Its critical
points are

* **pure**: outside the critical locus of the parametrization, solved
  exactly (:mod:`.system`, over QQ): msolve isolates the real ones in boxes
  with dyadic endpoints, and counts all complex ones modulo a prime.  For each
  real one, ball arithmetic (python-flint's ``arb``) on its box gives the
  loss (an interval), the ranks of ``A`` and ``V`` as far as proven (an
  ``r x r`` minor whose ball excludes 0 proves rank >= r) and the Hessian of
  the loss on the slice, whose eigenvalues are enclosed (python-flint's
  certified ``acb_mat.eig`` on the ball matrix): a *minimum* when all are
  proven positive, a *saddle* when proven of both signs, otherwise
  undecided.  Every solution of the system satisfies ``s h_1 h_2 = 1``, so
  the differential of the parametrization has full rank there (Lemma A.3):
  its image is critical on the neuromanifold;
* **at a singular point, the critical locus** (``A`` free): the parametrization
  is critical exactly on ``A = 0``, ``V = 0`` and ``rank [A; V] <= 1``
  (Lemma A.3), whose images are singular points of the closure; critical
  points of the loss there are solved separately: ``V = 0`` and ``A = 0`` give
  linear families (their dimensions, exactly; loss ``|Y|^2``), and
  ``A = p q^T, V = r q^T`` a system in ``(p, q, r)`` (gauges ``q_1 = 1`` and
  ``l(r) = 1``) solved like the pure one.

For ``a < d`` only the pure points are computed (the critical locus of the
chart is not enumerated).
"""

from __future__ import annotations

import functools
import math
import random
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from .._architecture import Architecture
from .._errors import AgAttentionError, ComputationError, InvalidArgumentError, MSolveOutputError, MSolveTimeoutError
from .._exact.field import DEFAULT_PRIME
from .._exact.rational import exact_rank
from .._m2.backend import check_timeout
from .._results import ResultMixin
from .beside import Beside, Outcome
from .metrics import gram
from .system import check_layer, critical_system, polynomial_text

__all__ = ["CriticalPoint", "CriticalFamily", "CriticalPoints", "critical_points", "parse_real_solutions"]


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
        from .metrics import reduced_coordinates

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


CRITICAL_METHODS = ("auto", "msolve", "homotopy")


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
        return (
            f"{where}; its loss {self.loss:.6g} is {gap:.3g} above the least critical loss {self.least:.6g} "
            f"({100 * gap / scale:.3g}% higher{', among all real critical points: certified' if self.complete else ', among those found'})"
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
    two primes that agree (probabilistic), or None when msolve did not run or finish.  ``complex_certified``:
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
        from .metrics import reduced_coordinates

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
        from .._provenance import provenance

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
        lines += [f"  note             {n}" for n in self.notes]
        lines.append(f"  seed {self.seed}, {self.seconds:.2f} s")
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


# ------------------------------------------------------------------ msolve over QQ
_NUMBER = re.compile(r"(-?\d+)\s*(?:/\s*(?:2\^(\d+)|(\d+)))?")


def parse_real_solutions(text: str, nvars: int) -> list[list[tuple[Fraction, Fraction]]] | None:
    """The isolating boxes of msolve's real solutions over QQ (``[0, [1, [[[lo, hi], ...], ...]]]``); None when
    the system is not zero-dimensional, ``[]`` without real solutions."""
    s = text.strip()
    if re.fullmatch(r"\[\s*-1\s*\]\s*:?", s):
        return []
    if re.match(r"\[\s*1\s*,", s):
        return None
    body = s[s.rfind("[1,") :] if "[1," in s else s
    num = r"-?\d+(?:\s*/\s*(?:2\^\d+|\d+))?"  # an integer, a dyadic a / 2^k, or an exact rational a / b
    intervals = re.findall(rf"\[\s*({num})\s*,\s*({num})\s*\]", body)

    def value(t: str) -> Fraction:
        m = _NUMBER.fullmatch(t.replace(" ", ""))
        if m is None:
            raise MSolveOutputError(f"cannot read the number {t!r} in msolve's real solutions", output=text[:2000])
        num, power, den = int(m.group(1)), m.group(2), m.group(3)
        return Fraction(num, 2 ** int(power)) if power else Fraction(num, int(den)) if den else Fraction(num)

    flat = [(value(a), value(b)) for a, b in intervals]
    if len(flat) % nvars:
        raise MSolveOutputError(
            f"msolve's real solutions: {len(flat)} intervals for {nvars} unknowns", output=text[:2000]
        )
    return [flat[i : i + nvars] for i in range(0, len(flat), nvars)]


def _real_boxes(
    variables: Sequence[str], polys: Sequence[str], timeout: float, label: str, backend: Any
) -> list[list[tuple[Fraction, Fraction]]] | None:
    """msolve's real root isolation over QQ of an integer system: boxes with dyadic endpoints, each holding exactly
    one real solution (None: not zero-dimensional over QQ)."""
    from .._algebra.msolve import run_msolve
    from .._algebra.msolve_text import format_input

    out = run_msolve(
        format_input(list(variables), 0, list(polys)),
        timeout=timeout,
        label=f"{label} (real solutions)",
        backend=backend,
    )
    return parse_real_solutions(out.output, len(variables))


def _count(
    variables: Sequence[str],
    polys: Sequence[str],
    timeout: float,
    label: str,
    backend: Any,
    deadline: float | None = None,
) -> tuple[int | None, str]:
    """The number of complex solutions of an integer system, counted by msolve modulo two primes (each text
    reduced modulo its prime); the two counts must agree.  ``(count, msolve's version)``.  Each job gets at most
    ``timeout`` seconds and ends by ``deadline`` (``time.monotonic()``)."""
    from .._exact.field import SECOND_PRIME

    counts = []
    version = ""
    for prime in (DEFAULT_PRIME, SECOND_PRIME):
        n, version = _count_mod(variables, polys, prime, _left(timeout, deadline, label), label, backend)
        counts.append(n)
    if counts[0] != counts[1]:
        raise ComputationError(
            f"{label}: msolve counts {counts[0]} solutions modulo {DEFAULT_PRIME} and "
            f"{counts[1]} modulo {SECOND_PRIME}: one prime is unlucky (a bad reduction); no "
            "count is reported"
        )
    return counts[0], version


def _left(timeout: float, deadline: float | None, label: str) -> float:
    """``timeout``, or less when ``deadline`` comes first; a timeout error when nothing is left."""
    if deadline is None:
        return timeout
    left = min(timeout, deadline - time.monotonic())
    if left < 1.0:
        raise MSolveTimeoutError(label, max(0.0, left))
    return left


def _solve(
    variables: Sequence[str],
    polys: Sequence[str],
    timeout: float,
    label: str,
    backend: Any,
    deadline: float | None = None,
) -> tuple[list[list[tuple[Fraction, Fraction]]] | None, int | None]:
    """Real boxes over QQ and the number of complex solutions (two primes) of an integer system."""
    boxes = _real_boxes(variables, polys, _left(timeout, deadline, label), label, backend)
    count, _ = _count(variables, polys, timeout, label, backend, deadline)
    if boxes is not None and count is not None and len(boxes) > count:
        raise ComputationError(
            f"{label}: msolve isolates {len(boxes)} real solutions but counts {count} complex "
            "ones: a contradiction (no result is reported)"
        )
    return boxes, count


# ------------------------------------------------------------------ ball arithmetic on a box
def _rank_text(M: list[list[Any]], at_most: int | None = None) -> str:
    """The rank of a ball matrix as far as proven: the largest ``r`` with an ``r x r`` minor whose ball excludes 0
    (every matrix in the balls, the exact one included, has rank ``>= r``); exact when ``r`` is the full rank or
    reaches ``at_most``, a bound the matrix has by construction (``A = B [I | K] R`` has rank at most ``a``)."""
    import itertools

    from .._exact.balls import determinant

    rows, cols = len(M), len(M[0]) if M else 0
    proven = 0
    for r in range(min(rows, cols), 0, -1):
        for I in itertools.combinations(range(rows), r):
            for J in itertools.combinations(range(cols), r):
                if determinant(np.array([[M[i][j] for j in J] for i in I], dtype=object), 200).excludes_zero:
                    proven = r
                    break
            if proven:
                break
        if proven:
            break
    top = min(rows, cols) if at_most is None else min(rows, cols, at_most)
    return str(proven) if proven == top else f">= {proven}"


_HESSIANS: dict[int, tuple[Any, tuple[str, ...], list[list[Any]]]] = {}


def _hessian_terms(loss: Any, names: tuple[str, ...]) -> list[list[Any]]:
    """The second derivatives of ``loss`` as term dictionaries (computed once per loss polynomial)."""
    hit = _HESSIANS.get(id(loss))
    if hit is not None and hit[0] is loss and hit[1] == names:
        return hit[2]
    terms = [[loss.derivative(i).derivative(j).to_dict() for j in names] for i in names]
    _HESSIANS.clear()
    _HESSIANS[id(loss)] = (loss, names, terms)
    return terms


def _point(
    box: list[tuple[Fraction, Fraction]],
    variables: Sequence[str],
    loss: Any,
    names: list[str],
    ring: Any,
    cut: Sequence[int],
    d: int,
    e: int,
    a: int,
) -> CriticalPoint:
    """One real solution: ball arithmetic on its box (see the module docstring).

    The Hessian is taken at the balanced point of the same rescaling orbit (``|A| = |V|``: the loss is
    invariant, so the point stays critical; the slice's scale would make it ill-conditioned) on the
    coordinate hyperplane transversal to the orbit (its signature is that of the quotient's Hessian)."""
    from .._exact.balls import ball, evaluate, interval, signature

    named = dict(zip(variables, box))
    mids = {n: (lo + hi) / 2 for n, (lo, hi) in named.items()}
    norm_a = sum(float(mids[n]) ** 2 for n in names if n[0] in "ab")
    norm_v = sum(float(mids[n]) ** 2 for n in names if n[0] == "v")
    c = Fraction((norm_v / norm_a) ** 0.25 if norm_a > 0 else 1.0).limit_denominator(10**12)

    def scaled(n: str) -> Any:
        lo, hi = named[n]
        f = c if n[0] in "ab" else (1 / c if n[0] == "v" else Fraction(1))
        return interval(min(lo * f, hi * f), max(lo * f, hi * f))

    vals = [scaled(n) for n in names]
    value = evaluate(loss.to_dict(), vals)
    H = [[evaluate(t, vals) for t in row] for row in _hessian_terms(loss, tuple(names))]
    direction = [
        float(v.mid()) if n[0] in "ab" else -float(v.mid()) if n[0] == "v" else 0.0 for n, v in zip(names, vals)
    ]
    drop = int(np.argmax(np.abs(direction)))  # the coordinate plane without it is transversal to the orbit
    keep = [k for k in range(len(names)) if k != drop]
    pos, neg, und = signature([[H[i][j] for j in keep] for i in keep])
    vdict = dict(zip(names, vals))
    if a < d:
        B = [[vdict[f"b{k}_{cc}"] for cc in range(1, a + 1)] for k in range(1, d + 1)]
        Cm = [
            [ball(1 if cc == l else 0) if l <= a else vdict[f"k{cc}_{l}"] for l in range(1, d + 1)]
            for cc in range(1, a + 1)
        ]
        Am = [[sum((B[k][cc] * Cm[cc][l] for cc in range(a)), ball(0)) for l in range(d)] for k in range(d)]
    else:
        Am = [[vdict[f"a{k}_{l}"] for l in range(1, d + 1)] for k in range(1, d + 1)]
    Vm = [[vdict[f"v{m}_{l}"] for l in range(1, d + 1)] for m in range(1, e + 1)]
    ra, rv = _rank_text(Am, a), _rank_text(Vm)
    kind = "pure"  # the system's s * h1 * h2 = 1 keeps it off the critical locus of the parametrization
    del cut, ring

    def mid(M: list[list[Any]]) -> np.ndarray:
        return np.array([[float(x.mid()) for x in row] for row in M])

    return CriticalPoint(
        kind, named, mid(Am), mid(Vm), (float(value.lower()), float(value.upper())), ra, rv, pos, neg, und
    )


def _linear_families(d: int, e: int, w: np.ndarray, c: Any) -> list[CriticalFamily]:
    """The critical points with ``V = 0`` or ``A = 0`` (``A`` free): linear spaces of critical weights, their
    dimensions exact (loss ``|Y|^2``).  Quick: exact ranks of small matrices."""
    from .._exact import linalg
    from .._models.parametrization import Parametrization

    P = Parametrization(Architecture.single_layer(d, e, None, tokens=2), coords="reduced", params="AV")
    names = list(P.variables)  # a_(k,l), v_(m,l)
    n_a = d * d
    ring = linalg.rational_polynomial_ring(names, "degrevlex")
    x = [ring.from_dict({k: linalg.rational(Fraction(int(v))) for k, v in f.to_dict().items()}) for f in P.polynomials]
    loss_c = float(c)
    out = []
    # V = 0: the gradient in V is -2 sum_i w_i dx_i/dV (linear in A); the gradient in A vanishes
    for where, fixed, free in (
        ("V = 0", range(n_a, len(names)), range(n_a)),
        ("A = 0", range(n_a), range(n_a, len(names))),
    ):
        rows = []
        for v in fixed:  # d/d(fixed variable) of -2 w^T x at fixed = 0: linear in the free variables
            grad = sum(
                (x[i].derivative(names[v]) * ring.constant(linalg.rational(Fraction(w[i]))) for i in range(len(x))),
                ring.constant(0),
            )
            coeff = grad.to_dict()
            row = [Fraction(0)] * len(free)
            for exps, cc in coeff.items():
                if sum(exps[k] for k in fixed) == 0:
                    var = next((k for k in free if exps[k] == 1), None)
                    if var is not None and sum(exps) == 1:
                        row[list(free).index(var)] = Fraction(int(cc.p), int(cc.q))
            rows.append(row)
        rank = exact_rank(np.array(rows, dtype=object)) if rows else 0
        out.append(CriticalFamily(where, len(free) - rank, None, None, (loss_c, loss_c)))
    return out


def _rank_one_family(
    arch: Any,
    G: Any,
    w: np.ndarray,
    d: int,
    e: int,
    seed: int,
    timeout: float,
    backend: Any,
    deadline: float | None = None,
) -> list[CriticalFamily]:
    """The critical points with ``A = p q^T, V = r q^T`` (``A``, ``V`` nonzero), solved by msolve."""
    from .._exact import linalg
    from .._models.parametrization import Parametrization
    from .system import _compose

    P = Parametrization(Architecture.single_layer(d, e, None, tokens=2), coords="reduced", params="AV")
    names = list(P.variables)
    out: list[CriticalFamily] = []
    # A = p q^T, V = r q^T (A, V nonzero): gauges q_1 = 1, l(r) = 1
    pn = [f"p{k}" for k in range(1, d + 1)] + [f"q{k}" for k in range(2, d + 1)] + [f"r{m}" for m in range(1, e + 1)]
    ring2 = linalg.rational_polynomial_ring(pn, "degrevlex")
    gg = dict(zip(pn, ring2.gens()))
    one, zero = ring2.constant(1), ring2.constant(0)
    q = [one] + [gg[f"q{k}"] for k in range(2, d + 1)]
    subs = [gg[f"p{k + 1}"] * q[l] for k in range(d) for l in range(d)] + [
        gg[f"r{m + 1}"] * q[l] for m in range(e) for l in range(d)
    ]

    def scalar(v: Any) -> Any:
        return ring2.constant(linalg.rational(Fraction(v)))

    # the full gradient J^T (G x - w) at the point, J the derivatives in (A, V)
    n = len(P.polynomials)
    xs = [_compose(f, subs, zero, scalar) for f in P.polynomials]
    resid = [sum((scalar(G[i, j]) * xs[j] for j in range(n) if G[i, j] != 0), zero) - scalar(w[i]) for i in range(n)]
    eqs = []
    for name in names:
        dxs = [
            _compose(f.derivative(name), subs, zero, scalar) if f.derivative(name) != 0 else zero for f in P.polynomials
        ]
        eqs.append(sum((dxs[i] * resid[i] for i in range(n)), zero))
    rng = random.Random(seed + 31)
    eqs.append(sum((scalar(rng.randrange(1, 1 << 30)) * gg[f"r{m}"] for m in range(1, e + 1)), zero) - one)
    texts = [polynomial_text(f, pn) for f in eqs if not f.is_zero()]
    try:
        boxes, count = _solve(
            pn, texts, timeout, f"critical points of {arch.describe()} on rank [A; V] = 1", backend, deadline
        )
    except MSolveTimeoutError:
        out.append(CriticalFamily("A = p q^T, V = r q^T", -1, None, None, None))
        return out
    if boxes is None or count is None:
        out.append(CriticalFamily("A = p q^T, V = r q^T", 1, None, None, None))
    else:
        out.append(CriticalFamily("A = p q^T, V = r q^T", 0, count, len(boxes), None))
    return out


# ------------------------------------------------------------------ the data and the entry point
def _sequences(values: Any, what: str, rows: int, cols: int, denominator: int | None) -> list[np.ndarray]:
    """A list of ``rows x cols`` exact matrices from arrays of numbers (floats by their exact binary value, or
    rounded to ``1/denominator``), each bad entry or shape refused naming it."""
    from .._point.weights import to_fraction

    if isinstance(values, (str, bytes)) or not hasattr(values, "__len__"):
        raise InvalidArgumentError(f"{what}: a list of {rows} x {cols} arrays, got {type(values).__name__}")
    out = []
    for idx, M in enumerate(values):
        arr = np.asarray(M, dtype=object)
        if arr.ndim == 1 and cols == 1 and arr.shape[0] == rows:
            arr = arr.reshape(rows, 1)
        if arr.shape != (rows, cols):
            raise InvalidArgumentError(f"{what}[{idx}]: shape {arr.shape}, expected {rows} x {cols} (tokens as rows)")
        entries = [
            [to_fraction(v, f"{what}[{idx}][{i}][{j}]", denominator) for j, v in enumerate(row)]
            for i, row in enumerate(arr)
        ]
        for i, row in enumerate(entries):
            for j, q in enumerate(row):
                if q and not (-DATA_EXPONENT < _log2(q) < DATA_EXPONENT):
                    shown = f"about 2^{_log2(q):.0f}"
                    raise InvalidArgumentError(
                        f"{what}[{idx}][{i}][{j}]: {shown} is outside the range of the data handled here (2^-"
                        f"{DATA_EXPONENT} < |entry| < 2^{DATA_EXPONENT}, so that the loss's coefficients, of degree "
                        "6 in the data, stay within float64); rescale the data: (cX, c^3 Y) has the same critical "
                        "points as (X, Y)"
                    )
        out.append(np.array(entries, dtype=object))
    return out


#: data entries must lie between 2^-DATA_EXPONENT and 2^DATA_EXPONENT in absolute value (or be 0)
DATA_EXPONENT = 150


def _log2(q: Fraction) -> float:
    """``log2 |q|`` of a nonzero rational, without converting it to a float (it may not fit one)."""

    def bits(n: int) -> float:
        b = n.bit_length()
        return math.log2(n) if b <= 1000 else (b - 60) + math.log2(n >> (b - 60))

    return bits(abs(q.numerator)) - bits(q.denominator)


def critical_points(
    arch: Architecture,
    inputs: Any,
    targets: Any,
    *,
    method: str = "auto",
    seed: int = 0,
    timeout: float = 300.0,
    msolve_timeout: float | None = None,
    denominator: int | None = None,
    backend: str = "auto",
    workers: int | None = None,
    scheduler: str | None = None,
    save: Any = None,
    resume: Any = None,
) -> CriticalPoints:
    """Every critical point of ``L(A, V) = sum_n |f(X_n) - Y_n|^2`` for one layer, classified (module docstring).

    ``inputs``: ``N`` sequences ``X_n`` (``t x d``, tokens as rows); ``targets``: ``N`` outputs ``Y_n``
    (``t x d'``); numbers as exact rationals, or floats by their exact binary value (rounded to
    ``1/denominator`` with ``denominator``), as :class:`~ag_attention.Network` takes weights.  Any scale: the data
    ``(cX, c^3 Y)`` have the same critical points in the weights as ``(X, Y)``.

    ``method``: ``"homotopy"`` (monodromy, a parameter homotopy to the data, every solution certified by the
    Krawczyk test: a proven lower bound, the real points proven real), ``"msolve"`` (the exact route: real root
    isolation over QQ, all real points; the complex count modulo two primes, probabilistic), or ``"auto"``
    (default): both, msolve's jobs beside the homotopy (its count, once known, lets the homotopy stop as soon as it
    has certified that many), checked against each other.  Every route tried is named in ``routes`` with its
    time and outcome.  ``seed`` chooses the slice, the random base of the monodromy and the removal of the critical
    locus.  ``timeout`` bounds the whole call; ``msolve_timeout`` caps each msolve job (default: 60 s with
    ``"auto"``, the whole ``timeout`` with ``"msolve"``).  A run that ends at a limit returns what it has, said
    in its first line and ``final`` (False).  ``workers`` / ``scheduler``: where the homotopy's paths and
    certifications run (by default as for :func:`~ag_attention.ed_degree`); ``save`` / ``resume``: the monodromy's
    state file.

    >>> from ag_attention import Architecture
    >>> X = [[[1, 0], [0, 1]], [[1, 1], [2, -1]], [[0, 1], [1, 3]], [[2, 1], [1, 1]], [[1, -2], [1, 0]]]
    >>> Y = [[[1], [0]], [[0], [2]], [[1], [1]], [[-1], [0]], [[0], [1]]]
    >>> r = critical_points(Architecture.single_layer(2, 1, None, tokens=2), X, Y)
    >>> r.complex_pure, r.complex_certified, len(r.points), r.minima, r.final
    (14, 14, 6, 3, True)
    """
    d, e, a, t = check_layer(arch, "critical_points")
    if arch.heads != 1 or arch.skip or arch.normalized:
        raise InvalidArgumentError(
            "critical_points: one plain lightning layer (one head, no skip connection, no softmax)"
        )
    if method not in CRITICAL_METHODS:
        raise InvalidArgumentError(f"method={method!r}: must be one of {', '.join(CRITICAL_METHODS)}")
    timeout = check_timeout(timeout)
    if msolve_timeout is not None:
        msolve_timeout = check_timeout(msolve_timeout)
    cap = msolve_timeout if msolve_timeout is not None else (None if method == "msolve" else 60.0)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise InvalidArgumentError(f"seed={seed!r}: must be a non-negative integer")
    if denominator is not None and (
        isinstance(denominator, bool) or not isinstance(denominator, int) or denominator < 1
    ):
        raise InvalidArgumentError(f"denominator={denominator!r}: must be a positive integer")
    if method == "msolve" and (
        save is not None or resume is not None or scheduler is not None or workers not in (None, 1)
    ):
        raise InvalidArgumentError(
            "workers, scheduler, save and resume belong to the homotopy: not with method='msolve'"
        )
    X = _sequences(inputs, "inputs", t, d, denominator)
    Y = _sequences(targets, "targets", t, e, denominator)
    if len(X) != len(Y):
        raise InvalidArgumentError(f"{len(X)} input sequences but {len(Y)} targets")
    if not X:
        raise InvalidArgumentError("inputs: no sequence (the loss is constant)")
    from .._resources import require_memory
    from .square import square_memory

    require_memory(square_memory(d, e, a), f"critical_points of {arch.describe()}", "use a smaller layer")
    t0 = time.perf_counter()
    end = time.monotonic() + timeout
    G, w, c = gram(X, Y, d, e, arch.causal)
    assert w is not None
    if all(v == 0 for v in w):
        raise InvalidArgumentError(
            "targets: every target is 0 (or the inputs see none of them): the only critical "
            "value is the loss at A = 0 or V = 0"
        )
    from .numerical import homotopy_solutions
    from .system import loss_polynomial

    routes: list[Route] = []
    notes: list[str] = []
    hom = None
    exact = method in ("auto", "msolve")
    label = f"critical points of {arch.describe()}"
    system = critical_system(arch, G, list(w), prime=0, seed=seed) if exact else None
    from .._exact.field import SECOND_PRIME

    with Beside(end) as beside:
        # in this order: the counts (they may stop the monodromy), the critical locus (a small system), then the real
        # root isolation (often the longest); alone (method msolve), the real points first
        jobs: list[tuple[str, Any]] = []
        if system is not None:
            jobs = [
                (
                    f"count {prime}",
                    functools.partial(_count_job, system.variables, system.polynomials, prime, label, backend),
                )
                for prime in (DEFAULT_PRIME, SECOND_PRIME)
            ]
        if a >= d:  # its msolve jobs each within the cap, all by the deadline (building its system takes time too)
            jobs.append(
                (
                    "families",
                    lambda left: _rank_one_family(
                        arch, G, np.asarray(w), d, e, seed, timeout if cap is None else cap, backend, end
                    ),
                )
            )
        if system is not None:
            isolation = (
                "isolation",
                functools.partial(_isolation_job, system.variables, system.polynomials, label, backend),
            )
            jobs = [isolation] + jobs if method == "msolve" else jobs + [isolation]
        for name, job in jobs:
            beside.submit(name, job, None if name == "families" else cap)
        if method in ("auto", "homotopy"):
            t1 = time.perf_counter()

            def known() -> int | None:
                got = beside.value(f"count {DEFAULT_PRIME}") if system is not None else None
                return None if got is None else got[0]

            from .estimate import choose_workers

            try:
                hom = homotopy_solutions(
                    arch,
                    G,
                    list(w),
                    seed=seed,
                    deadline=end,
                    known=known,
                    workers=choose_workers(arch, workers, scheduler),
                    scheduler=scheduler,
                    save=save,
                    resume=resume,
                )
            except AgAttentionError as exc:
                if method == "homotopy":
                    raise
                routes.append(
                    Route(
                        "homotopy (monodromy, parameter homotopy, Krawczyk)", time.perf_counter() - t1, f"failed: {exc}"
                    )
                )
            else:
                stop = hom.monodromy["stop"]
                routes.append(
                    Route(
                        "homotopy (monodromy, parameter homotopy, Krawczyk)",
                        time.perf_counter() - t1,
                        f"{'ok' if hom.final else 'stopped at a limit'}: {hom.base_count} over a random "
                        f"target (monodromy stopped: {stop}), {hom.arrived} carried to the data, "
                        f"{hom.certified} certified, {len(hom.real)} of them real"
                        + (
                            f", {hom.certification.unchecked} not certified for lack of time"
                            if hom.certification.unchecked
                            else ""
                        ),
                    )
                )
                if not hom.final:
                    notes.append(
                        f"the homotopy stopped at {stop!r} (trace deviation "
                        f"{hom.monodromy.get('trace_deviation')}): more critical points may exist than were "
                        f"found; rerun with a larger --timeout (this one: {timeout:g} s)"
                    )
        boxes = count = version = None
        isolated = False
        if hom is not None and hom.monodromy.get("stop") == "interrupted":  # Ctrl-C: nothing more is waited for
            for name in ("families", "isolation", f"count {DEFAULT_PRIME}", f"count {SECOND_PRIME}"):
                if name in beside.names():
                    beside.abandon(name, "interrupted (Ctrl-C)")
        if system is not None and hom is not None and hom.final:
            # every critical point certified, as many as msolve counts, each proven real or not: the isolation
            # would only repeat the real ones (a cross-check); it is not waited for
            first = beside.wait(f"count {DEFAULT_PRIME}")
            if (
                first.ok
                and first.value[0] is not None
                and hom.certified >= first.value[0]
                and all(p.real is not None for p in hom.certification.solutions)
                and beside.wait("isolation", max(2.0, 0.25 * (time.perf_counter() - t0))).state == "running"
            ):
                beside.abandon(
                    "isolation",
                    f"not needed: the {hom.certified} certified critical points are all "
                    "of msolve's count, each proven real or not real",
                )
        if system is not None:
            outcomes = {
                name: beside.wait(name) for name in (f"count {DEFAULT_PRIME}", f"count {SECOND_PRIME}", "isolation")
            }
            o = outcomes["isolation"]
            isolated = o.ok
            boxes = o.value if o.ok else None
            _route(
                routes,
                "msolve real root isolation over QQ",
                o,
                cap,
                timeout,
                lambda b: "positive-dimensional over QQ" if b is None else f"ok: {len(b)} real",
            )
            if isolated and boxes is None:
                notes.append(
                    "msolve over QQ finds the critical equations (critical locus removed, on a random "
                    "slice) positive-dimensional: the loss has a family of critical points off the "
                    "critical locus of the parametrization on these data, or the random slice and removal "
                    f"(seed {seed}) are special; rerun with another seed to tell"
                )
            c1, c2 = outcomes[f"count {DEFAULT_PRIME}"], outcomes[f"count {SECOND_PRIME}"]
            both = _Both(c1, c2)
            _route(
                routes,
                "msolve count modulo two primes",
                both.outcome,
                cap,
                timeout,
                lambda v: "not zero-dimensional modulo p" if v[0] is None else f"ok: {v[0]} complex",
            )
            if both.outcome.ok:
                if c1.value[0] != c2.value[0]:
                    raise ComputationError(
                        f"{label}: msolve counts {c1.value[0]} solutions modulo {DEFAULT_PRIME} "
                        f"and {c2.value[0]} modulo {SECOND_PRIME}: one prime is unlucky (a bad "
                        "reduction); no count is reported"
                    )
                count, version = c1.value
            for name, out in outcomes.items():
                if out.state == "failed" and out.error is not None:
                    raise out.error
        families: tuple[CriticalFamily, ...] = ()
        if a >= d:
            f = beside.wait("families")
            if f.state == "failed" and f.error is not None:
                raise f.error
            rank_one = tuple(f.value) if f.ok else (CriticalFamily("A = p q^T, V = r q^T", -1, None, None, None),)
            if not f.ok:
                notes.append("the critical points on rank [A; V] = 1 were not computed within the time limit")
            families = tuple(_linear_families(d, e, np.asarray(w), c)) + rank_one
    _check(arch, hom, boxes, count, method, seed)
    names, loss = loss_polynomial(arch, G, list(w), c)
    points: list[CriticalPoint] = []
    if boxes is not None and system is not None:
        points = [_point(box, system.variables, loss, names, None, system.slice_coefficients, d, e, a) for box in boxes]
    elif hom is not None:
        points = [_certified_point(hom.system, s, G, np.asarray(w), c) for s in hom.real]
    if boxes is not None and hom is not None:
        _match(arch, hom, points, G, np.asarray(w), c)
    points.sort(key=lambda p: p.loss[0])
    if boxes is None and count is None and hom is None:
        why = "; ".join(f"{r.name}: {r.outcome}" for r in routes)
        notes.append(f"no route finished within {timeout:g} s ({why})")
    real_complete = boxes is not None
    if boxes is None and hom is not None:
        decided = all(s.real is not None for s in hom.certification.solutions)
        everything = hom.final and (count is None or hom.certified >= count)
        real_complete = decided and everything and hom.certification.unchecked == 0
        if system is not None and not isolated:
            notes.append(
                "msolve's real root isolation did not finish: the real points are the certified ones"
                + (
                    " (all of them: every critical point certified, realness decided for each)"
                    if real_complete
                    else " (a lower bound)"
                )
                + (
                    ""
                    if real_complete
                    else f"; rerun with a larger --msolve-timeout (this one: "
                    f"{cap if cap is not None else timeout:g} s) or --timeout"
                )
            )
    if a < d:
        notes.append(
            f"a = {a} < d = {d}: the critical points on the critical locus of the chart (rank A < a, "
            "rank [A; V] <= 1) are not enumerated"
        )
    if a == 1 and e == 1 and points:  # the generic fiber is 2 (Cor. A.2): weights in pairs with one function
        functions = _distinct_functions(points)
        notes.append(
            f"d' = a = 1: each critical point of the neuromanifold has 2 preimages in the weights (the "
            f"generic fiber, Cor. A.2): the {len(points)} real points in the weights are {functions} points "
            f"of the function space ({sum(1 for p in _first_of_each(points) if p.signature == 'minimum')} "
            "of them minima)"
        )
    conversion = "exact rationals" if denominator is None else f"rounded to multiples of 1/{denominator}"
    if hom is not None and count is not None and hom.base_count != count:
        notes.append(
            f"monodromy found {hom.base_count} solutions for a random target with these inputs and msolve "
            f"counts {count} at the data's target: "
            + (
                "the data's target is special (fewer critical points)"
                if count < hom.base_count
                else "the monodromy stopped early"
            )
        )
    complete_count = count is not None or (hom is not None and hom.final)
    final = complete_count and real_complete and all(f.dimension >= 0 for f in families)
    status = "" if final else _unfinished(count, hom, real_complete, families)
    return CriticalPoints(
        arch,
        len(X),
        conversion,
        count,
        tuple(points),
        families,
        DEFAULT_PRIME,
        seed,
        time.perf_counter() - t0,
        tuple(notes),
        method,
        hom.certified if hom is not None else None,
        hom.base_count if hom is not None else None,
        real_complete,
        tuple(routes),
        version,
        hom.monodromy if hom is not None else None,
        hom.certification.to_dict() if hom is not None else None,
        c,
        (G, w),
        final,
        status,
        hom.base_final if hom is not None else None,
    )


def _first_of_each(points: Sequence[CriticalPoint]) -> list[CriticalPoint]:
    """One point per image ``x(A, V)`` (to 1e-7 relative): the critical points of the function space."""
    kept: list[CriticalPoint] = []
    for p in points:
        x = p.coordinates
        if all(np.max(np.abs(x - q.coordinates)) > 1e-7 * (1 + np.max(np.abs(x))) for q in kept):
            kept.append(p)
    return kept


def _distinct_functions(points: Sequence[CriticalPoint]) -> int:
    return len(_first_of_each(points))


def _unfinished(count: int | None, hom: Any, real_complete: bool, families: Sequence[CriticalFamily]) -> str:
    """Why a result is not final, in a few words."""
    why = []
    if count is None and (hom is None or not hom.final):
        why.append(
            "the complex critical points are not all known ("
            + ("the homotopy stopped at a limit, " if hom is not None else "")
            + "msolve's count did not finish)"
        )
    if not real_complete:
        why.append("the real ones found are a lower bound")
    if any(f.dimension < 0 for f in families):
        why.append("the critical locus was not computed")
    return "; ".join(why)


@dataclass(frozen=True)
class _Both:
    """Two msolve counts (one per prime) as one outcome: ok when both are, else the first problem."""

    first: Outcome
    second: Outcome

    @property
    def outcome(self) -> Outcome:
        if self.first.ok and self.second.ok:
            return Outcome("ok", (self.first.value[0], self.first.value[1]), self.first.seconds + self.second.seconds)
        bad = self.first if not self.first.ok else self.second
        return Outcome(bad.state, None, self.first.seconds + self.second.seconds, bad.error)


def _route(routes: list[Route], name: str, o: Outcome, cap: float | None, timeout: float, describe: Any) -> None:
    """A route of the exact side from its outcome (ok, timed out, not started)."""
    if o.ok:
        routes.append(Route(name, o.seconds, describe(o.value)))
    elif o.state in ("timed out", "not started"):
        limit = f"{cap:g} s per job (--msolve-timeout)" if cap is not None and cap < timeout else f"{timeout:g} s"
        what = "timed out" if o.state == "timed out" else "not started (no time left)"
        routes.append(Route(name, o.seconds, f"{what} within {limit}"))
    elif o.state == "abandoned":
        routes.append(Route(name, o.seconds, f"stopped, {o.value}"))
    elif o.state == "failed":
        routes.append(Route(name, o.seconds, f"failed: {o.error}"))


def _isolation_job(
    variables: Sequence[str], polys: Sequence[str], label: str, backend: Any, timeout: float
) -> list[list[tuple[Fraction, Fraction]]] | None:
    """:func:`_real_boxes` with the time limit last (a job of :class:`~.beside.Beside`)."""
    return _real_boxes(variables, polys, timeout, label, backend)


def _count_job(
    variables: Sequence[str], polys: Sequence[str], prime: int, label: str, backend: Any, timeout: float
) -> tuple[int | None, str]:
    """:func:`_count_mod` with the time limit last (a job of :class:`~.beside.Beside`)."""
    return _count_mod(variables, polys, prime, timeout, label, backend)


def _count_mod(
    variables: Sequence[str], polys: Sequence[str], prime: int, timeout: float, label: str, backend: Any
) -> tuple[int | None, str]:
    """msolve's count of the complex solutions of an integer system modulo ``prime`` (the text reduced modulo it):
    ``(count, msolve's version)``."""
    from .._algebra.msolve import count_solutions

    sol = count_solutions(
        variables, polys, prime, timeout=timeout, label=f"{label} (count mod {prime})", backend=backend
    )
    return sol.count, sol.msolve


def _check(arch: Architecture, hom: Any, boxes: Any, count: int | None, method: str, seed: int) -> None:
    """The routes' numbers must not contradict each other (module docstring); a contradiction is refused."""
    where = f"critical_points of {arch.describe()}"
    if boxes is not None and count is not None and len(boxes) > count:
        raise ComputationError(
            f"{where}: msolve isolates {len(boxes)} real solutions but counts {count} complex "
            "ones (real <= complex fails): no result is reported",
            seed=seed,
        )
    if hom is None:
        return
    if count is not None and hom.certified > count:
        raise ComputationError(
            f"{where}: {hom.certified} distinct solutions are certified (proven) but msolve "
            f"counts {count}: msolve's count is wrong (an unlucky prime); no result is reported",
            seed=seed,
        )
    if boxes is not None and len(hom.real) > len(boxes):
        raise ComputationError(
            f"{where}: {len(hom.real)} real solutions are certified (proven) but msolve isolates "
            f"{len(boxes)}: a contradiction; no result is reported",
            seed=seed,
        )
    if hom.certified - hom.certification.conjugates > hom.arrived:
        raise ComputationError(
            f"{where}: {hom.certified} certified from {hom.arrived} candidates and "
            f"{hom.certification.conjugates} conjugates (a bug)"
        )


def _certified_point(S: Any, cert: Any, G: np.ndarray, w: np.ndarray, c: Any) -> CriticalPoint:
    """A real critical point from a certified box (:mod:`ag_attention._numeric.certify`) of the square system
    (:mod:`.square`), all in ball arithmetic on the box: the loss, the ranks of ``A`` and ``V`` as far as proven,
    and the Hessian's signature on the slice, from the bordered Jacobian of the square system (its inertia is
    that of the Hessian on the slice plus one positive and one negative eigenvalue)."""
    from .._exact import balls
    from .._numeric.certify import BITS

    with balls.precision(BITS):
        A, V, _ = S.ball_weights(cert.box, cert.chart)
        sx = balls.complex_ball(Fraction(S.scale_x))
        A = [[v.real * sx.real for v in row] for row in A]
        V = [[v.real for v in row] for row in V]
        x = [v.real * sx.real for v in S.ball_coordinates(cert.box, cert.chart)]
        n = len(x)
        Gb = [[balls.ball(G[i, j]) for j in range(n)] for i in range(n)]
        loss = balls.ball(c)
        for i in range(n):
            loss += x[i] * (sum((Gb[i][j] * x[j] for j in range(n)), balls.ball(0)) - 2 * balls.ball(w[i]))
        _, JF = S.ball_evaluate(cert.box, list(_target_of(S, w)), jacobian=True, chart=cert.chart)
        H = [[JF[i, j].real for j in range(S.n)] for i in range(S.n)]
    pos, neg, und = balls.signature(H)
    pos, neg = max(pos - 1, 0), max(neg - 1, 0)  # the border's own pair of eigenvalues
    d, e = S.d, S.e
    box: dict[str, tuple[Fraction, Fraction]] = {}
    for name, ball in [(f"a{k + 1}_{l + 1}", A[k][l]) for k in range(d) for l in range(d)] + [
        (f"v{m + 1}_{l + 1}", V[m][l]) for m in range(e) for l in range(d)
    ]:
        box[name] = (Fraction(float(ball.lower())), Fraction(float(ball.upper())))

    def mid(M: list[list[Any]]) -> np.ndarray:
        return np.array([[float(v.mid()) for v in row] for row in M])

    return CriticalPoint(
        "pure",
        box,
        mid(A),
        mid(V),
        (float(loss.lower()), float(loss.upper())),
        _rank_text(A, S.a),
        _rank_text(V),
        pos,
        neg,
        und,
        "krawczyk",
    )


def _target_of(S: Any, w: np.ndarray) -> np.ndarray:
    return S.target(list(w))


def _match(arch: Architecture, hom: Any, points: list[CriticalPoint], G: np.ndarray, w: np.ndarray, c: Any) -> None:
    """Each certified real solution is one of msolve's real points (compared in the function space)."""
    if not points:
        return
    xs = [p.coordinates for p in points]
    for s in hom.real:
        q = _certified_point(hom.system, s, G, w, c)
        x = q.coordinates
        scale = 1 + float(np.max(np.abs(x)))
        if min(float(np.max(np.abs(x - y))) for y in xs) > 1e-6 * scale:
            raise ComputationError(
                f"critical_points of {arch.describe()}: a certified real critical point (loss "
                f"{sum(q.loss) / 2:.6g}) is none of msolve's real points: a contradiction; no "
                "result is reported"
            )
