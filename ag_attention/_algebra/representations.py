"""The generators of each degree as a representation of ``GL_d x GL_{d'} x GL_d``.

The closure of one layer is invariant under ``A -> S A W^T``, ``V -> U V W^T``
(``S, W`` in ``GL_d``, ``U`` in ``GL_{d'}``), so the space of minimal
generators of degree ``D``, ``I_D / (x) I_{D-1}``, is a polynomial
representation of ``GL_d (rows of A) x GL_{d'} (rows of V) x GL_d (the
variable z)``. Its character is what interpolation already measures: the
number of generators in each torus multidegree ``(alpha, beta, gamma)``. A
character determines the representation, so the decomposition into
irreducibles ``S_lambda (x) S_mu (x) S_nu`` follows from the counts alone.
Take the dominant weight that is highest in the lexicographic order, read off
its multiplicity, subtract that many copies of the irreducible's weight
multiplicities (Kostka numbers ``K_{lambda, alpha}``), and repeat. Each
irreducible summand is one GL-orbit family of equations, named by its highest
weight, as Alexandr et al. name invariant families. Dozens of irreducibles
replace hundreds of polynomials.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import cache

from .._errors import ComputationError

__all__ = ["kostka", "schur_dimension", "decompose", "Irreducible"]

Weight = tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]
#: ``((lambda, mu, nu), multiplicity, dimension of one copy)``
Irreducible = tuple[Weight, int, int]


def _strip(shape: tuple[int, ...], k: int) -> Iterable[tuple[int, ...]]:
    """Shapes ``nu`` with ``shape / nu`` a horizontal strip of ``k`` boxes."""
    n = len(shape)

    def rec(i: int, left: int, acc: list[int]) -> Iterable[tuple[int, ...]]:
        if i == n:
            if left == 0:
                yield tuple(x for x in acc if x)
            return
        low = shape[i + 1] if i + 1 < n else 0  # interlacing: shape[i+1] <= nu[i] <= shape[i]
        for nu_i in range(max(low, shape[i] - left), shape[i] + 1):
            yield from rec(i + 1, left - (shape[i] - nu_i), acc + [nu_i])

    yield from rec(0, k, [])


@cache
def kostka(shape: tuple[int, ...], content: tuple[int, ...]) -> int:
    """Semistandard tableaux of ``shape`` with ``content`` (the weight multiplicity of ``S_shape``).

    >>> kostka((2, 1), (1, 1, 1)), kostka((2, 2), (2, 1, 1)), kostka((3,), (1, 1, 1)), kostka((2, 1), (3,))
    (2, 1, 1, 0)
    """
    shape = tuple(x for x in shape if x)
    if sum(shape) != sum(content):
        return 0
    if not content:
        return 1 if not shape else 0
    if len(shape) > len(content):
        return 0
    *rest, last = content
    return sum(kostka(nu, tuple(rest)) for nu in _strip(shape, last))


def schur_dimension(shape: tuple[int, ...], n: int) -> int:
    """``dim S_shape(C^n)`` by the hook-content formula.

    >>> schur_dimension((2,), 3), schur_dimension((1, 1), 3), schur_dimension((2, 2), 3)
    (6, 3, 6)
    """
    shape = tuple(x for x in shape if x)
    if len(shape) > n:
        return 0
    num = den = 1
    for i, row in enumerate(shape):
        for j in range(row):
            num *= n + j - i
            arm = row - j - 1
            leg = sum(1 for r in shape[i + 1 :] if r > j)
            den *= arm + leg + 1
    return num // den


def _weights_of(shape: tuple[int, ...], n: int) -> dict[tuple[int, ...], int]:
    """All weights (compositions of ``|shape|`` into ``n`` parts) of ``S_shape(C^n)`` with multiplicities."""
    total = sum(shape)
    out: dict[tuple[int, ...], int] = {}

    def rec(prefix: tuple[int, ...], left: int) -> None:
        if len(prefix) == n - 1:
            w = prefix + (left,)
            k = kostka(tuple(sorted(shape, reverse=True)), w)
            if k:
                out[w] = k
            return
        for x in range(left + 1):
            rec(prefix + (x,), left - x)

    if n == 0:
        return {(): 1} if total == 0 else {}
    rec((), total)
    return out


def _dominant(w: tuple[int, ...]) -> bool:
    return all(a >= b for a, b in zip(w, w[1:]))


def decompose(character: Mapping[Weight, int], sizes: tuple[int, int, int]) -> list[Irreducible]:
    """Irreducible summands of a polynomial representation of ``GL_n1 x GL_n2 x GL_n3`` given by its weights.

    ``character``: multiplicity of each weight ``(alpha, beta, gamma)``.
    Raises ComputationError if the weights are not a character (a bug
    upstream: negative remainders).

    >>> weights = {(a, (1,), c): 1 for a in [(1, 0), (0, 1)] for c in [(2, 0), (1, 1), (0, 2)]}
    >>> decompose(weights, (2, 1, 2))   # C^2 (x) C^1 (x) Sym^2 C^2
    [(((1,), (1,), (2,)), 1, 6)]
    """
    left = {w: m for w, m in character.items() if m}
    out: list[Irreducible] = []
    while left:
        top = max(w for w in left if all(_dominant(part) for part in w))
        m = left[top]
        if m < 0:
            raise ComputationError(f"weights {dict(list(left.items())[:3])}...: not the character of a representation")
        factors = [_weights_of(tuple(x for x in part if x) or (), n) for part, n in zip(top, sizes)]
        for wa, ka in factors[0].items():
            for wb, kb in factors[1].items():
                for wc, kc in factors[2].items():
                    key = (wa, wb, wc)
                    left[key] = left.get(key, 0) - m * ka * kb * kc
                    if left[key] == 0:
                        del left[key]
        dim = 1
        for part, n in zip(top, sizes):
            dim *= schur_dimension(part, n)
        shape = tuple(tuple(x for x in part if x) for part in top)
        out.append((shape, m, dim))  # type: ignore[arg-type]
        if any(v < 0 for v in left.values()):
            raise ComputationError(f"the weights are not the character of a representation (after {shape})")
    return out
