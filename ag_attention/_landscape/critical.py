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

import random
import re
import time
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Sequence

import numpy as np

from .._architecture import Architecture
from .._errors import ComputationError, InvalidArgumentError, MSolveOutputError
from .._exact.field import DEFAULT_PRIME
from .._exact.rational import exact_rank
from .._m2.backend import check_timeout
from .._results import ResultMixin
from .metrics import gram
from .system import check_layer, critical_system, polynomial_text

__all__ = ["CriticalPoint", "CriticalFamily", "CriticalPoints", "critical_points", "parse_real_solutions"]


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

    @property
    def signature(self) -> str:
        if self.undecided:
            return "undecided"
        if self.negative == 0:
            return "minimum"
        if self.positive == 0:
            return "maximum"
        return "saddle"

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "signature": self.signature, "loss": list(self.loss),
                "hessian": {"positive": self.positive, "negative": self.negative, "undecided": self.undecided},
                "rank_A": self.rank_A, "rank_V": self.rank_V, "A": self.A.tolist(), "V": self.V.tolist(),
                "box": {k: [str(lo), str(hi)] for k, (lo, hi) in self.box.items()}}


@dataclass(frozen=True)
class CriticalFamily:
    """Critical points on the critical locus of the parametrization (their images: singular points)."""

    where: str  # "V = 0", "A = 0", "A = p q^T, V = r q^T"
    dimension: int  # V = 0, A = 0: of the linear space of such critical weights (0: the origin alone); else 0
    complex: int | None  # number of points (dimension 0), None otherwise
    real: int | None
    loss: tuple[float, float] | None

    def to_dict(self) -> dict[str, Any]:
        return {"where": self.where, "dimension": self.dimension, "complex": self.complex, "real": self.real,
                "loss": None if self.loss is None else list(self.loss)}


@dataclass(frozen=True)
class CriticalPoints(ResultMixin):
    """Every critical point of the squared loss of one layer on a data set, classified."""

    architecture: Architecture
    samples: int
    conversion: str
    complex_pure: int  # complex solutions of the pure system (modulo the symmetries), counted mod p
    points: tuple[CriticalPoint, ...]  # the real pure ones
    families: tuple[CriticalFamily, ...]
    prime: int
    seed: int
    seconds: float
    notes: tuple[str, ...] = field(default=())

    @property
    def minima(self) -> int:
        return sum(1 for p in self.points if p.signature == "minimum")

    @property
    def saddles(self) -> int:
        return sum(1 for p in self.points if p.signature == "saddle")

    def to_dict(self) -> dict[str, Any]:
        from .._provenance import provenance

        return {"architecture": self.architecture.to_dict(), "samples": self.samples, "conversion": self.conversion,
                "complex_pure": self.complex_pure, "real_pure": len(self.points), "minima": self.minima,
                "saddles": self.saddles, "points": [p.to_dict() for p in self.points],
                "families": [f.to_dict() for f in self.families], "prime": self.prime, "seed": self.seed,
                "seconds": round(self.seconds, 3), "notes": list(self.notes), "provenance": provenance()}

    def table(self) -> list[dict[str, Any]]:
        """One row per real critical point: kind, signature, loss (midpoint), ranks."""
        return [{"kind": p.kind, "signature": p.signature, "loss": (p.loss[0] + p.loss[1]) / 2,
                 "rank A": p.rank_A, "rank V": p.rank_V} for p in sorted(self.points, key=lambda q: q.loss[0])]

    def __repr__(self) -> str:
        return (f"CriticalPoints({self.architecture.describe()}, {self.samples} sequences: {self.complex_pure} "
                f"complex pure, {len(self.points)} real, {self.minima} minima)")

    def __str__(self) -> str:
        lines = [f"Critical points of the squared loss of {self.architecture.describe()} on {self.samples} "
                 f"sequences ({self.conversion})",
                 f"  pure             {self.complex_pure} complex (mod {self.prime}), {len(self.points)} real: "
                 f"{self.minima} minima, {self.saddles} saddles"]
        for row in self.table():
            lines.append(f"    {row['kind']:<22} {row['signature']:<10} loss {row['loss']:.6g}  rank A {row['rank A']}, "
                         f"rank V {row['rank V']}")
        for f in self.families:
            if f.complex is not None:
                what = f"{f.complex} complex, {f.real} real"
            elif f.where in ("V = 0", "A = 0"):
                what = (f"a linear space of dimension {f.dimension} in the weights" if f.dimension
                        else "the origin alone")
            else:
                what = "not zero-dimensional: a family"
            loss = "" if f.loss is None else f", loss {f.loss[0]:.6g}"
            lines.append(f"  critical locus   {f.where}: {what}{loss} (at singular points of the closure)")
        lines += [f"  note             {n}" for n in self.notes]
        lines.append(f"  seed {self.seed}, {self.seconds:.2f} s")
        return "\n".join(lines)


# ------------------------------------------------------------------ msolve over QQ
_NUMBER = re.compile(r"(-?\d+)\s*(?:/\s*2\^(\d+))?")


def parse_real_solutions(text: str, nvars: int) -> list[list[tuple[Fraction, Fraction]]] | None:
    """The isolating boxes of msolve's real solutions over QQ (``[0, [1, [[[lo, hi], ...], ...]]]``); None when
    the system is not zero-dimensional, ``[]`` without real solutions."""
    s = text.strip()
    if re.fullmatch(r"\[\s*-1\s*\]\s*:?", s):
        return []
    if re.match(r"\[\s*1\s*,", s):
        return None
    body = s[s.rfind("[1,"):] if "[1," in s else s
    intervals = re.findall(r"\[\s*(-?\d+(?:\s*/\s*2\^\d+)?)\s*,\s*(-?\d+(?:\s*/\s*2\^\d+)?)\s*\]", body)

    def value(t: str) -> Fraction:
        m = _NUMBER.fullmatch(t.replace(" ", ""))
        if m is None:
            raise MSolveOutputError(f"cannot read the number {t!r} in msolve's real solutions", output=text[:2000])
        num, power = int(m.group(1)), m.group(2)
        return Fraction(num, 2 ** int(power)) if power else Fraction(num)

    flat = [(value(a), value(b)) for a, b in intervals]
    if len(flat) % nvars:
        raise MSolveOutputError(f"msolve's real solutions: {len(flat)} intervals for {nvars} unknowns",
                                output=text[:2000])
    return [flat[i:i + nvars] for i in range(0, len(flat), nvars)]


def _solve(variables: Sequence[str], polys: Sequence[str], timeout: float, label: str,
           backend: Any) -> tuple[list[list[tuple[Fraction, Fraction]]] | None, int | None]:
    """Real boxes over QQ and the number of complex solutions (mod p) of an integer system."""
    from .._algebra.msolve import count_solutions, run_msolve
    from .._algebra.msolve_text import format_input

    text = format_input(list(variables), DEFAULT_PRIME, list(polys)).split("\n", 2)
    qq = "\n".join([text[0], "0", text[2]])
    out = run_msolve(qq, timeout=timeout, label=f"{label} (real solutions)", backend=backend)
    boxes = parse_real_solutions(out.output, len(variables))
    count = count_solutions(variables, polys, DEFAULT_PRIME, timeout=timeout, label=f"{label} (count)",
                            backend=backend)
    return boxes, count.count


# ------------------------------------------------------------------ ball arithmetic on a box
def _rank_text(M: list[list[Any]]) -> str:
    """The rank of a ball matrix as far as proven: the largest ``r`` with an ``r x r`` minor whose ball excludes 0
    (every matrix in the balls, the exact one included, has rank ``>= r``); exact when ``r`` is the full rank."""
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
    return str(proven) if proven == min(rows, cols) else f">= {proven}"


def _point(box: list[tuple[Fraction, Fraction]], variables: Sequence[str], loss: Any, names: list[str], ring: Any,
           cut: Sequence[int], d: int, e: int, a: int) -> CriticalPoint:
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
    H = [[evaluate(loss.derivative(i).derivative(j).to_dict(), vals) for j in names] for i in names]
    direction = [float(v.mid()) if n[0] in "ab" else -float(v.mid()) if n[0] == "v" else 0.0
                 for n, v in zip(names, vals)]
    drop = int(np.argmax(np.abs(direction)))  # the coordinate plane without it is transversal to the orbit
    keep = [k for k in range(len(names)) if k != drop]
    pos, neg, und = signature([[H[i][j] for j in keep] for i in keep])
    vdict = dict(zip(names, vals))
    if a < d:
        B = [[vdict[f"b{k}_{cc}"] for cc in range(1, a + 1)] for k in range(1, d + 1)]
        Cm = [[ball(1 if cc == l else 0) if l <= a else vdict[f"k{cc}_{l}"] for l in range(1, d + 1)]
              for cc in range(1, a + 1)]
        Am = [[sum((B[k][cc] * Cm[cc][l] for cc in range(a)), ball(0)) for l in range(d)] for k in range(d)]
    else:
        Am = [[vdict[f"a{k}_{l}"] for l in range(1, d + 1)] for k in range(1, d + 1)]
    Vm = [[vdict[f"v{m}_{l}"] for l in range(1, d + 1)] for m in range(1, e + 1)]
    ra, rv = _rank_text(Am), _rank_text(Vm)
    kind = "pure"  # the system's s * h1 * h2 = 1 keeps it off the critical locus of the parametrization
    del cut, ring

    def mid(M: list[list[Any]]) -> np.ndarray:
        return np.array([[float(x.mid()) for x in row] for row in M])

    return CriticalPoint(kind, named, mid(Am), mid(Vm), (float(value.lower()), float(value.upper())), ra, rv,
                         pos, neg, und)


def _families(arch: Architecture, G: np.ndarray, w: np.ndarray, c: Any, d: int, e: int, seed: int, timeout: float,
              backend: Any) -> list[CriticalFamily]:
    """The critical points on the critical locus (A free): V = 0, A = 0 (linear families), rank [A; V] = 1."""
    from .._exact import linalg
    from .._models.parametrization import Parametrization
    from .system import _compose

    P = Parametrization(Architecture.single_layer(d, e, None, tokens=2), coords="reduced", params="AV")
    names = list(P.variables)  # a_(k,l), v_(m,l)
    n_a = d * d
    ring = linalg.rational_polynomial_ring(names, "degrevlex")
    x = [ring.from_dict({k: linalg.rational(Fraction(int(v))) for k, v in f.to_dict().items()}) for f in P.polynomials]
    loss_c = float(c)
    out = []
    # V = 0: the gradient in V is -2 sum_i w_i dx_i/dV (linear in A); the gradient in A vanishes
    for where, fixed, free in (("V = 0", range(n_a, len(names)), range(n_a)), ("A = 0", range(n_a), range(n_a, len(names)))):
        rows = []
        for v in fixed:  # d/d(fixed variable) of -2 w^T x at fixed = 0: linear in the free variables
            grad = sum((x[i].derivative(names[v]) * ring.constant(linalg.rational(Fraction(w[i]))) for i in range(len(x))),
                       ring.constant(0))
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
    # A = p q^T, V = r q^T (A, V nonzero): gauges q_1 = 1, l(r) = 1
    pn = [f"p{k}" for k in range(1, d + 1)] + [f"q{k}" for k in range(2, d + 1)] + [f"r{m}" for m in range(1, e + 1)]
    ring2 = linalg.rational_polynomial_ring(pn, "degrevlex")
    gg = dict(zip(pn, ring2.gens()))
    one, zero = ring2.constant(1), ring2.constant(0)
    q = [one] + [gg[f"q{k}"] for k in range(2, d + 1)]
    subs = [gg[f"p{k + 1}"] * q[l] for k in range(d) for l in range(d)] + [gg[f"r{m + 1}"] * q[l] for m in range(e) for l in range(d)]

    def scalar(v: Any) -> Any:
        return ring2.constant(linalg.rational(Fraction(v)))

    # the full gradient J^T (G x - w) at the point, J the derivatives in (A, V)
    n = len(x)
    xs = [_compose(f, subs, zero, scalar) for f in P.polynomials]
    resid = [sum((scalar(G[i, j]) * xs[j] for j in range(n) if G[i, j] != 0), zero) - scalar(w[i]) for i in range(n)]
    eqs = []
    for name in names:
        dxs = [_compose(f.derivative(name), subs, zero, scalar) if f.derivative(name) != 0 else zero for f in P.polynomials]
        eqs.append(sum((dxs[i] * resid[i] for i in range(n)), zero))
    rng = random.Random(seed + 31)
    eqs.append(sum((scalar(rng.randrange(1, 1 << 30)) * gg[f"r{m}"] for m in range(1, e + 1)), zero) - one)
    texts = [polynomial_text(f, pn) for f in eqs if not f.is_zero()]
    boxes, count = _solve(pn, texts, timeout, f"critical points of {arch.describe()} on rank [A; V] = 1", backend)
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
            raise InvalidArgumentError(f"{what}[{idx}]: shape {arr.shape}, expected {rows} x {cols} "
                                       "(tokens as rows)")
        out.append(np.array([[to_fraction(v, f"{what}[{idx}][{i}][{j}]", denominator) for j, v in enumerate(row)]
                             for i, row in enumerate(arr)], dtype=object))
    return out


def critical_points(arch: Architecture, inputs: Any, targets: Any, *, seed: int = 0, timeout: float = 300.0,
                    denominator: int | None = None, backend: str = "auto") -> CriticalPoints:
    """Every critical point of ``L(A, V) = sum_n |f(X_n) - Y_n|^2`` for one layer, classified (module docstring).

    ``inputs``: ``N`` sequences ``X_n`` (``t x d``, tokens as rows); ``targets``: ``N`` outputs ``Y_n``
    (``t x d'``); numbers as exact rationals, or floats by their exact binary value (rounded to
    ``1/denominator`` with ``denominator``), as :class:`~ag_attention.Network` takes weights.  ``seed``
    chooses the slice of the rescaling and the removal of the critical locus; ``timeout`` bounds each msolve
    run.

    >>> from ag_attention import Architecture
    >>> X = [[[1, 0], [0, 1]], [[1, 1], [2, -1]], [[0, 1], [1, 3]], [[2, 1], [1, 1]], [[1, -2], [1, 0]]]
    >>> Y = [[[1], [0]], [[0], [2]], [[1], [1]], [[-1], [0]], [[0], [1]]]
    >>> r = critical_points(Architecture.single_layer(2, 1, None, tokens=2), X, Y)
    >>> r.complex_pure, len(r.points), r.minima
    (14, 6, 3)
    """
    d, e, a, t = check_layer(arch, "critical_points")
    if arch.heads != 1 or arch.skip or arch.normalized:
        raise InvalidArgumentError("critical_points: one plain lightning layer (one head, no skip connection, "
                                   "no softmax)")
    timeout = check_timeout(timeout)
    if denominator is not None and (isinstance(denominator, bool) or not isinstance(denominator, int)
                                    or denominator < 1):
        raise InvalidArgumentError(f"denominator={denominator!r}: must be a positive integer")
    X = _sequences(inputs, "inputs", t, d, denominator)
    Y = _sequences(targets, "targets", t, e, denominator)
    if len(X) != len(Y):
        raise InvalidArgumentError(f"{len(X)} input sequences but {len(Y)} targets")
    if not X:
        raise InvalidArgumentError("inputs: no sequence (the loss is constant)")
    t0 = time.perf_counter()
    G, w, c = gram(X, Y, d, e, arch.causal)
    assert w is not None
    system = critical_system(arch, G, list(w), prime=0, seed=seed)
    boxes, count = _solve(system.variables, system.polynomials, timeout, f"critical points of {arch.describe()}",
                          backend)
    if boxes is None or count is None:
        raise ComputationError(f"the critical equations of {arch.describe()} on these data are not "
                               "zero-dimensional (the data are not generic enough: add sequences, or change them)",
                               seed=seed)
    from .system import loss_polynomial

    names, loss = loss_polynomial(arch, G, list(w), c)
    points = tuple(sorted((_point(box, system.variables, loss, names, None, system.slice_coefficients, d, e, a)
                           for box in boxes), key=lambda p: p.loss[0]))
    notes = []
    if a < d:
        families: tuple[CriticalFamily, ...] = ()
        notes.append(f"a = {a} < d = {d}: the critical points on the critical locus of the chart (rank A < a, "
                     "rank [A; V] <= 1) are not enumerated")
    else:
        families = tuple(_families(arch, G, np.asarray(w), c, d, e, seed, timeout, backend))
    conversion = ("exact rationals" if denominator is None else f"rounded to multiples of 1/{denominator}")
    return CriticalPoints(arch, len(X), conversion, count, points, families, DEFAULT_PRIME, seed,
                          time.perf_counter() - t0, tuple(notes))
