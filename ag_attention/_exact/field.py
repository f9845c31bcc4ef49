"""Vectorized arithmetic in GF(p) on numpy int64 arrays.

Elements are stored as int64 in ``[0, p)`` with ``p < 2^31``.  A contraction
of length ``k`` would overflow int64 as soon as ``k >= 2`` (products reach
``2^62``), so :meth:`GFp.einsum` splits its second operand into 16-bit halves:
``a . b = (a . b_hi) 2^16 + a . b_lo`` with every partial sum below ``2^63``
for contraction lengths up to ``2^16 - 2``.  Results are exact residues.

The prime bound ``2^31`` is what int64 vectorization allows; the chance that a
random evaluation point hides the generic rank is at most ``deg / p``
(Schwartz-Zippel), about ``1e-5`` for the largest networks benchmarked, and
every rank below its upper bound is re-checked with a second prime.
"""

from __future__ import annotations

import re
from functools import cache

import numpy as np
import numpy.typing as npt

from .._checks import check_int
from .._errors import InvalidArgumentError
from .._positions import Frequencies, circle_modp

__all__ = ["GFp", "DEFAULT_PRIME", "SECOND_PRIME", "MAX_PRIME", "MAX_CONTRACTION", "check_prime", "is_prime"]

MAX_PRIME = 2**31
DEFAULT_PRIME = 2**31 - 1  # 2147483647, a Mersenne prime
SECOND_PRIME = 2147483629  # the largest prime below it
_MAX_INNER = 2**16 - 2
#: the longest contraction :meth:`GFp.einsum` computes exactly
MAX_CONTRACTION = _MAX_INNER
_EINSUM_SPEC = re.compile(r"^([a-zA-Z]+),([a-zA-Z]+)->([a-zA-Z]*)$")


def is_prime(n: int) -> bool:
    """Deterministic primality for ``n < 2^64`` (FLINT's ``n_is_prime``)."""
    import flint

    if n < 2:
        return False
    return bool(flint.fmpz(n).is_prime())


def check_prime(p: object, name: str = "prime") -> int:
    """``p`` as an int if it is a prime in ``(2, 2^31)``; otherwise a clear error."""
    p = check_int(p, name)
    if not (2 < p < MAX_PRIME):
        raise InvalidArgumentError(
            f"{name}={p}: must be a prime between 3 and 2^31-1 = {MAX_PRIME - 1} "
            "(vectorized exact arithmetic uses int64)"
        )
    if not is_prime(p):
        raise InvalidArgumentError(f"{name}={p}: not a prime")
    return p


@cache
def _contracted_length(spec: str, shape_a: tuple[int, ...], shape_b: tuple[int, ...]) -> int:
    m = _EINSUM_SPEC.match(spec.replace(" ", ""))
    if not m:
        raise InvalidArgumentError(f"spec={spec!r}: GFp.einsum takes two operands and no ellipsis, e.g. 'ij,jk->ik'")
    ia, ib, out = m.groups()
    sizes = dict(zip(ia, shape_a))
    sizes.update(zip(ib, shape_b))
    k = 1
    for c in set(ia) | set(ib):
        if c not in out:
            k *= sizes[c]
    return k


class GFp:
    """Arithmetic in the prime field ``GF(p)`` on int64 arrays (``p < 2^31``).

    >>> F = GFp(101)
    >>> int(F.einsum("i,i->", np.array([50, 60]), np.array([2, 3])))  # 100 + 180 = 280 = 78 mod 101
    78
    """

    exact = True

    def __init__(self, p: int = DEFAULT_PRIME):
        self.p = check_prime(p)
        self.dtype = np.int64
        # when even unsplit products cannot overflow, skip the split
        self._direct_limit = (2**63 - 1) // ((self.p - 1) ** 2)

    def __repr__(self) -> str:
        return f"GFp({self.p})"

    def random(self, rng: np.random.Generator, shape: tuple[int, ...] | int) -> np.ndarray:
        return rng.integers(0, self.p, size=shape, dtype=np.int64)

    def circle(self, freqs: Frequencies, tokens: int) -> tuple[np.ndarray, np.ndarray]:
        """Rotary positions: ``cos(p theta_f)``, ``sin(p theta_f)`` at a random point over GF(p) of the torus of the
        frequencies' rational relations, the same for every call with this prime: a rank computed with them is a
        lower bound on the rank at the true frequencies (docs/math/rotary.md, rotary-exact)."""
        return circle_modp(freqs, self.p, tokens)

    def from_ints(self, values: object) -> np.ndarray:
        """Residues of arbitrary Python integers (any size or sign), same shape."""
        arr = np.asarray(values, dtype=object)
        return np.vectorize(lambda v: int(v) % self.p, otypes=[np.int64])(arr) if arr.size else arr.astype(np.int64)

    # (numpy's stubs type most ufunc results as Any: the annotated locals below say what they are)
    def reduce(self, a: np.ndarray) -> np.ndarray:
        out: np.ndarray = np.remainder(a, self.p)
        return out

    def add(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        out: np.ndarray = np.remainder(a + b, self.p)
        return out

    def sub(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        out: np.ndarray = np.remainder(a - b, self.p)
        return out

    def neg(self, a: np.ndarray) -> np.ndarray:
        out: np.ndarray = np.remainder(-a, self.p)
        return out

    def mul(self, a: np.ndarray, b: npt.ArrayLike) -> np.ndarray:
        """Elementwise product (broadcasting)."""
        return self.einsum_elementwise(a, b)

    def einsum_elementwise(self, a: np.ndarray, b: npt.ArrayLike) -> np.ndarray:
        b = np.asarray(b)
        lo = np.bitwise_and(b, 0xFFFF)
        hi = np.right_shift(b, 16)
        r = np.remainder(a * hi, self.p)
        out: np.ndarray = np.remainder(np.left_shift(r, 16) + a * lo, self.p)
        return out

    def scale(self, a: np.ndarray, c: int) -> np.ndarray:
        return self.einsum_elementwise(a, np.int64(c % self.p))

    def einsum(self, spec: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """``np.einsum(spec, a, b)`` reduced mod p, exact (two operands, no ellipsis)."""
        k = _contracted_length(spec, a.shape, b.shape)
        if k <= self._direct_limit:
            direct: np.ndarray = np.remainder(np.einsum(spec, a, b), self.p)
            return direct
        if k > _MAX_INNER:
            raise InvalidArgumentError(
                f"{spec}: a contraction of length {k} exceeds {_MAX_INNER} terms, "
                "the most int64 arithmetic sums exactly"
            )
        lo = np.bitwise_and(b, 0xFFFF)
        hi = np.right_shift(b, 16)
        r = np.remainder(np.einsum(spec, a, hi), self.p)
        r = np.left_shift(r, 16, out=r)
        r += np.einsum(spec, a, lo)
        out: np.ndarray = np.remainder(r, self.p, out=r)
        return out

    def matvec(self, M: np.ndarray, v: np.ndarray) -> np.ndarray:
        """``M @ v`` mod p for a 2-D ``M`` (any number of columns: chunked)."""
        out = np.zeros(M.shape[0], dtype=np.int64)
        for start in range(0, M.shape[1], _MAX_INNER):
            sl = slice(start, start + _MAX_INNER)
            out = np.remainder(out + self.einsum("ij,j->i", M[:, sl], v[sl]), self.p)
        return out
