"""An exact upper bound on the local rank: kernel vectors found over GF(p), lifted to QQ, verified exactly.

The rank of ``d phi_theta`` over GF(p) on random inputs is a proven *lower*
bound (:mod:`ag_attention._point.geometry`); the symmetry tangents give an
upper bound, which a critical point of a deep network leaves open.  Here the
gap is closed from above (docs/math/point.md, point-kernel-certificate):

1. over several primes ``p`` (none dividing a denominator of ``theta``), the
   kernel of the Jacobian on random inputs, in reduced row echelon form (a
   basis determined by the kernel alone, so the same rational basis reduced
   mod each prime when the rank mod p is the rank over QQ);
2. the residues combined by the Chinese remainder theorem and lifted to QQ
   by rational reconstruction, accepted only when the next prime's basis
   agrees with the lift;
3. each lifted vector ``v`` **verified exactly**: the directional derivative
   ``d/de phi_{theta + e v}(X)`` is computed at ``e = 0`` as a polynomial in
   symbolic inputs ``X`` (dual numbers over ``QQ[X]``: exact rationals, every
   monomial kept) and must be the zero polynomial.

``k`` verified vectors in echelon form are linearly independent kernel
vectors of ``d phi_theta`` over QQ, so ``rank <= P - k``: an exact upper
bound (a proof, not a probability).  With ``k = P - lower`` the rank is exact.
The size of step 3 is the number of monomials of degree ``3^L`` in
``t d_0`` variables; above :data:`MAX_MONOMIALS` (or :data:`MAX_PARAMETERS`
parameters) the certificate is not attempted and the reason is given.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from .._algebra import crt, rational_reconstruction
from .._errors import ComputationError
from .._exact import GFp, linalg
from .._models import symmetry_tangents
from .._network import ObjectArithmetic, forward, jacobian, random_inputs
from .._resources import Deadline
from .geometry import PRIMES, samples_for
from .weights import Network

__all__ = [
    "KernelCertificate",
    "KernelDirection",
    "kernel_certificate",
    "verification_size",
    "MAX_MONOMIALS",
    "MAX_PARAMETERS",
    "MAX_LIFT_PRIMES",
]

#: the symbolic verification is refused above this many monomials per output (C(t d_0 + 3^L, 3^L))
MAX_MONOMIALS = 60_000
#: and above this many parameters (a kernel basis of P - rank vectors, each verified)
MAX_PARAMETERS = 600
#: at most this many primes in the lift (the last one checks it)
MAX_LIFT_PRIMES = len(PRIMES)


@dataclass(frozen=True)
class KernelDirection:
    """A kernel direction of ``d phi_theta`` beyond the symmetry tangents, and the parameter blocks it moves.

    ``blocks``: ``(layer, head, matrix, entries)`` (1-based layer and head) of
    the direction reduced against the symmetry tangents (one basis of the
    quotient, in the parameters' order: the blocks are where the drop sits).
    """

    index: int
    blocks: tuple[tuple[int, int, str, int], ...]

    def describe(self) -> str:
        return ", ".join(
            f"layer {l} head {h} {m} ({n} {'entry' if n == 1 else 'entries'})" for l, h, m, n in self.blocks
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "blocks": [{"layer": l, "head": h, "matrix": m, "entries": n} for l, h, m, n in self.blocks],
        }


@dataclass(frozen=True)
class KernelCertificate:
    """Verified kernel vectors of ``d phi_theta`` over QQ: ``rank <= P - len(vectors)``, proven."""

    vectors: tuple[tuple[Fraction, ...], ...]
    primes: tuple[int, ...]
    upper: int
    parameters: int
    beyond_symmetries: tuple[KernelDirection, ...]
    monomials: int
    seconds: float

    @property
    def method(self) -> str:
        return (
            f"{len(self.vectors)} kernel vectors of d phi over GF(p) for {len(self.primes)} primes, lifted to QQ "
            f"(CRT and rational reconstruction) and verified exactly: the directional derivative along each is "
            f"the zero polynomial in the inputs (up to {self.monomials:,} monomials)"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "upper": self.upper,
            "verified_kernel_vectors": len(self.vectors),
            "primes": list(self.primes),
            "beyond_symmetries": [d.to_dict() for d in self.beyond_symmetries],
            "monomials": self.monomials,
            "seconds": round(self.seconds, 3),
            "method": self.method,
            "vectors": [[str(x) for x in v] for v in self.vectors],
        }


def verification_size(net: Network) -> int:
    """Monomials of degree at most ``3^L`` in the ``t d_0`` inputs: the size of one symbolic output (a bound)."""
    arch = net.architecture
    n, D = arch.tokens * arch.widths[0], 3**arch.depth
    return math.comb(n + D, D)


def refusal(net: Network) -> str | None:
    """Why the certificate is not attempted at this size (None: it is)."""
    arch = net.architecture
    if arch.normalized:
        return "softmax attention is not polynomial"
    if arch.positions is not None:
        return "rotary positions: the verification over QQ needs the rotations, whose cosines are not rational"
    if arch.parameter_count > MAX_PARAMETERS:
        return f"{arch.parameter_count:,} parameters (the kernel certificate is tried up to {MAX_PARAMETERS:,})"
    size = verification_size(net)
    if size > MAX_MONOMIALS:
        return (
            f"the exact verification expands outputs of degree {3**arch.depth} in {arch.tokens * arch.widths[0]} "
            f"inputs: up to {size:,} monomials each (tried up to {MAX_MONOMIALS:,})"
        )
    return None


# ------------------------------------------------------------------ step 1: kernels mod p
def _kernel_mod_p(net: Network, p: int, theta: np.ndarray, rows_for: int, seed: int) -> tuple[int, list[list[int]]]:
    """The rank of the Jacobian over GF(p) on random inputs and its kernel in reduced row echelon form."""
    arch = net.architecture
    F = GFp(p)
    n, _ = samples_for(arch, rows_for)
    rng = np.random.default_rng([seed, p, n, 7])
    J = jacobian(arch, F, theta, random_inputs(arch, F, rng, n))  # all outputs of each sample
    basis = linalg.nullspace_mod_p(J, p)
    rref = linalg.rref_mod_p(basis, p, arch.parameter_count)
    return arch.parameter_count - len(rref), rref


def _pivots(rows: list[list[int]]) -> tuple[int, ...]:
    return tuple(next(j for j, x in enumerate(r) if x) for r in rows)


def _lift(residues: list[list[list[int]]], primes: list[int]) -> list[list[Fraction]] | None:
    """CRT and rational reconstruction of echelon bases (same shape); None where an entry does not lift."""
    M = math.prod(primes)
    out = []
    for i in range(len(residues[0])):
        row = []
        for j in range(len(residues[0][i])):
            q = rational_reconstruction(crt([r[i][j] for r in residues], primes), M)
            if q is None:
                return None
            row.append(q)
        out.append(row)
    return out


def _agrees(vectors: list[list[Fraction]], rows: list[list[int]], p: int) -> bool:
    for v, r in zip(vectors, rows):
        for q, x in zip(v, r):
            if q.denominator % p == 0 or q.numerator * pow(q.denominator, -1, p) % p != x:
                return False
    return True


# ------------------------------------------------------------------ step 3: exact verification
class _Dual:
    """``a + b e`` with ``e^2 = 0`` over polynomials (or rationals): ``b`` carries the directional derivative."""

    __slots__ = ("a", "b")

    def __init__(self, a: Any, b: Any) -> None:
        self.a, self.b = a, b

    @staticmethod
    def of(x: Any) -> _Dual:
        return x if isinstance(x, _Dual) else _Dual(x, 0)

    def __add__(self, o: Any) -> _Dual:
        o = _Dual.of(o)
        return _Dual(self.a + o.a, self.b + o.b)

    __radd__ = __add__

    def __sub__(self, o: Any) -> _Dual:
        o = _Dual.of(o)
        return _Dual(self.a - o.a, self.b - o.b)

    def __rsub__(self, o: Any) -> _Dual:
        return _Dual.of(o) - self

    def __neg__(self) -> _Dual:
        return _Dual(-self.a, -self.b)

    def __mul__(self, o: Any) -> _Dual:
        o = _Dual.of(o)
        return _Dual(self.a * o.a, self.a * o.b + self.b * o.a)

    __rmul__ = __mul__


def derivative_vanishes(net: Network, v: list[Fraction]) -> bool:
    """Whether ``d/de phi_{theta + e v}(X)`` at ``e = 0`` is the zero polynomial in symbolic inputs ``X`` (exact)."""
    arch = net.architecture
    t, d = arch.tokens, arch.widths[0]
    ring = linalg.rational_polynomial_ring([f"x{i}_{k}" for i in range(t) for k in range(d)])
    gens = ring.gens()
    X = np.empty((1, t, d), dtype=object)
    for i in range(t):
        for k in range(d):
            X[0, i, k] = _Dual(gens[i * d + k], 0)
    theta = np.empty(arch.parameter_count, dtype=object)
    for i, (c, dv) in enumerate(zip(net.theta(), v)):
        theta[i] = _Dual(linalg.rational(c), linalg.rational(dv))
    Y = forward(arch, ObjectArithmetic(), theta, X)
    return all(_Dual.of(y).b == 0 for y in Y.flat)


# ------------------------------------------------------------------ the certificate
def _blocks(net: Network, w: np.ndarray) -> tuple[tuple[int, int, str, int], ...]:
    out = []
    for b in net.architecture.blocks:
        n = int(np.count_nonzero(w[b.slice]))
        if n:
            out.append((b.layer, b.head + 1, b.name, n))
    return tuple(out)


def _beyond_symmetries(
    net: Network, vectors: list[list[Fraction]], p: int, theta: np.ndarray
) -> tuple[KernelDirection, ...]:
    """Kernel vectors independent of the symmetry tangents (mod p), each reduced against the span so far."""
    arch = net.architecture
    F = GFp(p)
    T, _ = symmetry_tangents(arch, theta, F)
    span = linalg.rref_mod_p([list(map(int, r)) for r in T], p, arch.parameter_count) if T.shape[0] else []
    out: list[KernelDirection] = []
    for v in vectors:
        w = [q.numerator * pow(q.denominator, -1, p) % p for q in v]
        grown = linalg.rref_mod_p(span + [w], p, arch.parameter_count)
        if len(grown) == len(span):
            continue
        reduced = np.array(w, dtype=object)
        for row in span:  # reduce against the span's echelon rows: the remainder is the new direction
            piv = next(j for j, x in enumerate(row) if x)
            if reduced[piv] % p:
                c = reduced[piv] * pow(row[piv], -1, p) % p
                reduced = (reduced - c * np.array(row, dtype=object)) % p
        span = grown
        out.append(KernelDirection(len(out) + 1, _blocks(net, reduced.astype(np.int64))))
    return tuple(out)


def kernel_certificate(
    net: Network, lower: int, *, seed: int = 0, deadline: Deadline | None = None
) -> KernelCertificate | str:
    """Verified kernel vectors at ``net``'s weights (see the module docstring), or the reason there are none.

    ``lower``: the proven lower bound on the rank (the kernel searched has
    dimension ``P - lower`` over GF(p)).  Returns a :class:`KernelCertificate`
    whose ``upper`` is a proven upper bound on the local rank, or a string
    saying why no certificate was made (size, no stable lift, a lifted vector
    that is not a kernel vector over QQ: the lower bound was not sharp).
    """
    why = refusal(net)
    if why is not None:
        return why
    t0 = time.perf_counter()
    arch = net.architecture
    P = arch.parameter_count
    primes: list[int] = []
    bases: list[list[list[int]]] = []
    pivots: tuple[int, ...] | None = None
    lifted: list[list[Fraction]] | None = None
    short = 0
    for p in PRIMES:
        if deadline is not None:
            deadline.check("kernel certificate (kernels mod p)")
        theta = net.theta_mod(p)
        if theta is None:
            continue
        r, rows = _kernel_mod_p(net, p, theta, P, seed)
        if r < lower:  # these inputs did not reach the proven rank: a bad evaluation, not the kernel
            short += 1
            continue
        if r > lower:
            lower = r  # a better lower bound (only possible with more rows than the first run)
            primes, bases, pivots, lifted = [], [], None, None
        if pivots is not None and _pivots(rows) != pivots:
            continue
        pivots = _pivots(rows)
        if lifted is not None and _agrees(lifted, rows, p):
            primes.append(p)
            break
        primes.append(p)
        bases.append(rows)
        lifted = _lift(bases, primes) if rows else []
    else:
        if short and not primes:
            return (
                f"the Jacobian on the certificate's inputs stayed below the proven rank {lower} for {short} "
                "primes: no kernel of the right dimension to lift"
            )
        return (
            f"the kernel over GF(p) did not lift to QQ with {len(primes)} primes (its entries are too large "
            "for rational reconstruction)"
        )
    assert lifted is not None
    monomials = verification_size(net)
    for i, v in enumerate(lifted):
        if deadline is not None:
            deadline.check(f"kernel certificate (exact verification, vector {i + 1} of {len(lifted)})")
        if not derivative_vanishes(net, v):
            return (
                f"lifted kernel vector {i + 1} of {len(lifted)} is not a kernel vector over QQ: the rank over "
                "GF(p) on these inputs was below the true rank"
            )
    p0 = primes[0]
    theta0 = net.theta_mod(p0)
    if theta0 is None:  # pragma: no cover - p0 was usable above
        raise ComputationError("the first prime of the lift divides a denominator (bug)", prime=p0)
    beyond = _beyond_symmetries(net, lifted, p0, theta0)
    vectors = tuple(tuple(v) for v in lifted)
    return KernelCertificate(vectors, tuple(primes), P - len(vectors), P, beyond, monomials, time.perf_counter() - t0)
