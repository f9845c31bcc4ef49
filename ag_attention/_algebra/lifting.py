"""From residues modulo several primes to generators over QQ, verified exactly.

The canonical generators of every multidegree (:mod:`ag_attention._algebra.modular`)
are combined by the Chinese remainder theorem and rational reconstruction
(:func:`lift`), and each lifted generator is checked by substituting the
parametrization, a polynomial identity over QQ in the weights
(:func:`verify_on_parametrization`).
"""

from __future__ import annotations

import math
from fractions import Fraction

from .._exact import linalg
from .._models import reduced_coordinates
from .modular import ModularBlock

__all__ = ["MORE_PRIMES", "Generator", "rational_reconstruction", "crt", "lift", "verify_on_parametrization"]

#: primes for the multimodular lift after the first two (all below 2^31)
MORE_PRIMES = (2147483587, 2147483579, 2147483563, 2147483549, 2147483543, 2147483497, 2147483489, 2147483477)
#: a generator over QQ: monomial (sorted indices of the reduced coordinates) -> coefficient
Generator = dict[tuple[int, ...], Fraction]


def rational_reconstruction(a: int, m: int) -> Fraction | None:
    """``r/s = a mod m`` with ``|r|, s <= sqrt(m/2)``, or None."""
    bound = math.isqrt(m // 2)
    r0, r1, s0, s1 = m, a % m, 0, 1
    while r1 > bound:
        q = r0 // r1
        r0, r1, s0, s1 = r1, r0 - q * r1, s1, s0 - q * s1
    if s1 == 0 or abs(s1) > bound:
        return None
    return Fraction(r1, s1) if s1 > 0 else Fraction(-r1, -s1)


def crt(residues: list[int], moduli: list[int]) -> int:
    """The residue modulo ``prod(moduli)`` with the given ``residues``."""
    x, m = 0, 1
    for r, q in zip(residues, moduli):
        # x + m t = r (mod q)
        t = ((r - x) * pow(m, -1, q)) % q
        x, m = x + m * t, m * q
    return x


def lift(
    mods: list[dict[int, dict[tuple[int, ...], ModularBlock]]], primes: list[int]
) -> dict[int, dict[tuple[int, ...], list[Generator]]] | None:
    """CRT of the canonical generators over the primes, then rational reconstruction; None if one fails."""
    M = math.prod(primes)
    out: dict[int, dict[tuple[int, ...], list[Generator]]] = {}
    for D, level in mods[0].items():
        out[D] = {}
        for mu, blk in level.items():
            gens = []
            for gi in range(len(blk.generators)):
                residues = [m[D][mu].generators[gi] for m in mods]
                poly = {}
                for c, mono in enumerate(blk.monomials):
                    vals = [r[c] for r in residues]
                    if not any(vals):
                        continue
                    x = crt(vals, primes)
                    f = rational_reconstruction(x, M)
                    if f is None:
                        return None
                    poly[mono] = f
                gens.append(poly)
            out[D][mu] = gens
    return out


def verify_on_parametrization(d: int, e: int, a: int, gens: list[Generator]) -> bool:
    """Exact: each generator composed with the parametrization is the zero polynomial over QQ."""
    names = [f"a{k}_{i}" for k in range(d) for i in range(d)] + [f"v{m}_{i}" for m in range(e) for i in range(d)]
    if a < d:  # A = B C: the rank-bounded domain
        names = (
            [f"b{k}_{r}" for k in range(d) for r in range(a)]
            + [f"c{r}_{i}" for r in range(a) for i in range(d)]
            + names[d * d :]
        )
    ctx = linalg.rational_polynomial_ring(names, "degrevlex")
    g = dict(zip(names, ctx.gens()))
    if a < d:
        A = [
            [sum((g[f"b{k}_{r}"] * g[f"c{r}_{i}"] for r in range(a)), ctx.constant(0)) for i in range(d)]
            for k in range(d)
        ]
    else:
        A = [[g[f"a{k}_{i}"] for i in range(d)] for k in range(d)]
    V = [[g[f"v{m}_{i}"] for i in range(d)] for m in range(e)]
    coords = reduced_coordinates(A, V)
    for gen in gens:
        total = ctx.constant(0)
        for mono, c in gen.items():
            term = ctx.constant(linalg.rational(c))
            for v in mono:
                term = term * coords[v]
            total += term
        if not total.is_zero():
            return False
    return True
