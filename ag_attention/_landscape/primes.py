"""The primes the ED-degree counts are taken modulo (:func:`~ag_attention.ideal_ed_degree`,
:func:`~ag_attention.model_ed_degree`): drawn so that no input can be built for them, and the bound on the error
probability the results state.  docs/math/landscape.md (landscape-counting-primes) gives the argument.

* :func:`draw_primes`: primes of :data:`PRIME_RANGE`, uniform among those that reduce the input well, from a
  SHA-256 stream keyed by the seed and the canonical input (a fresh seed by default: :func:`fresh_seed`);
* :func:`agreeing`: the counts modulo the first two, and the third where they differ (two of three must agree);
* :func:`error_bound`: ``3 (b / N + D / 2^30)^2`` under stated hypotheses on ``b`` (bad primes) and ``D``.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, TypeVar

from .._errors import ComputationError, InvalidArgumentError
from .._exact import is_prime

__all__ = [
    "PRIME_RANGE",
    "BAD_PRIMES",
    "BAD_DEGREE",
    "PrimeDraw",
    "draw_primes",
    "draw_for",
    "draw_keyed",
    "text_coefficients",
    "agreeing",
    "error_bound",
    "fresh_seed",
    "primes_in",
]

#: the counting primes are drawn in this range (docs/math/landscape.md, "The counting primes"): msolve's prime
#: fields take any p < 2^31 (:func:`~ag_attention._algebra.msolve_text.format_input` reduces each coefficient mod p
#: before msolve reads it) and Macaulay2's ZZ/p any prime (its own arithmetic below 2^15, FLINT's above); the old
#: range below 2^15 held 1,612 primes, this one 50,697,537
PRIME_RANGE = (2**30, 2**31)
_PRIME_COUNTS = {(2**30, 2**31): 50_697_537}  # pi(2^31) - pi(2^30) = 105,097,565 - 54,400,028
#: the hypotheses of the error bound a result states (:func:`error_bound`): at most this many primes of the range
#: are bad for the input, and the random choices modulo a good prime are unlucky on a hypersurface of at most
#: this degree
BAD_PRIMES = 1000
BAD_DEGREE = 1000
#: a draw gives up after skipping this many primes (each dividing a coefficient)
_MAX_SKIPPED = 64
_MAX_DRAWS = 100_000

Poly = dict[tuple[int, ...], Fraction]
T = TypeVar("T")
K = TypeVar("K", bound=Hashable)


def _bad_reduction(polys: Sequence[Poly], metric: Any, p: int) -> str | None:
    """Why ``p`` must not be used, or None: a coefficient of a generator (so the reduction has another Newton
    polytope, or another degree) or a nonzero entry of the metric vanishes mod p, or has a denominator p."""
    for g, poly in enumerate(polys):
        for c in poly.values():
            if c.numerator % p == 0 or c.denominator % p == 0:
                return f"{p} divides the coefficient {c} of generator {g}"
    if not isinstance(metric, str):
        for i, row in enumerate(metric):
            for j, q in enumerate(row):
                if q and (q.numerator % p == 0 or q.denominator % p == 0):
                    return f"{p} divides metric[{i}][{j}] = {q}"
    return None


def fresh_seed() -> int:
    """A seed from the operating system's entropy (the default of the counting routes; the result records it)."""
    return secrets.randbits(64)


def _canonical(polys: Sequence[Poly], metric: Any) -> str:
    """The input as one text: each polynomial's terms sorted (exponents: exact coefficient), then the metric."""
    lines = [";".join(f"{','.join(map(str, m))}:{c}" for m, c in sorted(p.items())) for p in polys]
    if isinstance(metric, str):
        lines.append(f"metric {metric}")
    else:
        lines.append("metric " + ";".join(",".join(str(q) for q in row) for row in metric))
    return "\n".join(lines)


def primes_in(lo: int, hi: int) -> int:
    """The number of primes in ``[lo, hi)``: :data:`PRIME_RANGE`'s is known, a smaller range is sieved."""
    if (lo, hi) in _PRIME_COUNTS:
        return _PRIME_COUNTS[(lo, hi)]
    sieve = bytearray([1]) * hi
    sieve[0:2] = b"\x00\x00"
    for i in range(2, int(hi**0.5) + 1):
        if sieve[i]:
            sieve[i * i :: i] = bytearray(len(sieve[i * i :: i]))
    return sum(sieve[lo:hi])


def _excluded_at_most(polys: Sequence[Poly], metric: Any, lo: int) -> int:
    """At most how many primes ``>= lo`` divide a numerator or denominator of a coefficient or a metric entry."""
    k = lo.bit_length() - 1  # every such prime is >= 2^k: an integer of b bits has at most b // k of them
    values = [c for p in polys for c in p.values()]
    if not isinstance(metric, str):
        values += [q for row in metric for q in row if q]
    return sum(abs(c.numerator).bit_length() // k + c.denominator.bit_length() // k for c in values)


@dataclass(frozen=True)
class PrimeDraw:
    """The counting primes of one call (:func:`draw_primes`): uniform among the primes of :data:`PRIME_RANGE`
    that reduce the input well, chosen by ``seed`` and the input's SHA-256; the first two are counted, the third
    only where their counts disagree."""

    primes: tuple[int, ...]
    seed: int
    pool: int  # the draw is uniform over at least this many primes

    @property
    def error_bound(self) -> float:
        """The probability that two counts agree on a wrong value, under the hypotheses of :func:`error_bound`."""
        return error_bound(self.pool)

    def certificate(self, used: Sequence[int]) -> str:
        """``primes p, q (seed s), error probability <= bound (its hypotheses)``."""
        lo, hi = PRIME_RANGE
        return (
            f"primes {', '.join(map(str, used))} (seed {self.seed}; drawn from the {self.pool:,} primes in "
            f"[2^{lo.bit_length() - 1}, 2^{hi.bit_length() - 1}) keyed by the input's SHA-256), error "
            f"probability <= {self.error_bound:.1e} if at most {BAD_PRIMES:,} of them are bad for this input and "
            f"unlucky random choices lie on a hypersurface of degree <= {BAD_DEGREE:,} (docs/math/landscape.md)"
        )


def error_bound(pool: int, bad_primes: int | None = None, degree: int | None = None) -> float:
    """``3 (b / N + D / p_min)^2``: the probability that two of at most three counts agree on a wrong value when
    the primes are drawn uniformly (without replacement) from ``N = pool`` primes of which at most ``b`` are bad
    for the input, and the random choices modulo a good prime are unlucky on a hypersurface of degree at most
    ``D`` (Schwartz–Zippel: ``D / p``).  ``b`` and ``D`` default to :data:`BAD_PRIMES` and :data:`BAD_DEGREE`;
    docs/math/landscape.md gives the argument."""
    b = BAD_PRIMES if bad_primes is None else bad_primes
    D = BAD_DEGREE if degree is None else degree
    eps = b / pool + D / PRIME_RANGE[0]
    return min(1.0, 3 * eps * eps)


def draw_primes(
    polys: Sequence[Poly], metric: Any, seed: int, notes: list[str], what: str, count: int = 3
) -> PrimeDraw:
    """``count`` distinct primes of :data:`PRIME_RANGE`, uniform among those that reduce the input well, from a
    stream keyed by SHA-256 of the seed and the canonical input (``polys`` and ``metric``, a matrix of Fractions
    or a kind): a fixed seed gives the same primes for the same input, and no input can be built for its own
    primes.  A prime dividing a coefficient of ``polys`` or an entry of ``metric`` (its reduction would be
    another variety, or another form) is skipped and noted."""
    return draw_keyed(
        _canonical(polys, metric),
        lambda p: _bad_reduction(polys, metric, p),
        _excluded_at_most(polys, metric, PRIME_RANGE[0]),
        seed,
        notes,
        what,
        count,
    )


def draw_for(
    key: str, values: Iterable[Fraction | int], seed: int, notes: list[str], what: str, count: int = 3
) -> PrimeDraw:
    """:func:`draw_primes` for an input given as its canonical text ``key`` (the caller's exact data) and the
    exact numbers it must reduce well: a prime dividing a numerator or a denominator of one of ``values`` (a
    coefficient of the system counted, an entry of the data) is skipped and noted."""
    nonzero = [Fraction(v) for v in values if v]
    as_poly: list[Poly] = [{(i,): v for i, v in enumerate(nonzero)}]

    def bad(p: int) -> str | None:
        for v in nonzero:
            if v.numerator % p == 0 or v.denominator % p == 0:
                return f"{p} divides the coefficient {v}"
        return None

    return draw_keyed(key, bad, _excluded_at_most(as_poly, "none", PRIME_RANGE[0]), seed, notes, what, count)


def text_coefficients(polynomials: Iterable[str]) -> list[int]:
    """The integers written in polynomial texts (``3*x^2-17*x*y+5``: 3, 17, 5; not the exponents, nor the digits
    of the variables' names): a prime dividing none of them reduces each coefficient to a nonzero residue."""
    return [int(k) for f in polynomials for k in _INTEGER.findall(f.replace(" ", ""))]


_INTEGER = re.compile(r"(?<![\w^])\d+")


def draw_keyed(
    key: str, bad: Callable[[int], str | None], excluded: int, seed: int, notes: list[str], what: str, count: int = 3
) -> PrimeDraw:
    """``count`` distinct primes of :data:`PRIME_RANGE` from the SHA-256 stream keyed by ``what``, ``seed`` and
    ``key`` (the canonical input), each prime for which ``bad`` gives a reason skipped and noted; ``excluded``:
    at most how many primes of the range ``bad`` refuses (the draw is uniform over the others)."""
    lo, hi = PRIME_RANGE
    text = f"ag-attention counting primes\n{what}\nseed {seed}\n{key}"
    digest = hashlib.sha256(text.encode()).digest()
    primes: list[int] = []
    skipped: set[int] = set()
    block = 0
    while len(primes) < count:
        block += 1
        if block > _MAX_DRAWS:  # (about 21 draws per prime of [2^30, 2^31): never, but for a tiny range)
            raise ComputationError(f"{what}: {count} primes of {PRIME_RANGE} not found in {_MAX_DRAWS} draws")
        x = int.from_bytes(hashlib.sha256(digest + block.to_bytes(8, "big")).digest()[:16], "big")
        p = lo + x % (hi - lo)  # (128 random bits: exactly uniform on [2^30, 2^31), up to 2^-97 on others)
        if p in primes or p in skipped or not is_prime(p):
            continue
        why = bad(p)
        if why is None:
            primes.append(p)
        elif len(skipped) >= _MAX_SKIPPED:
            raise InvalidArgumentError(
                f"{what}: {len(skipped)} primes of the range divide a coefficient ({why}); scale the coefficients"
            )
        else:
            skipped.add(p)
            notes.append(f"prime {p} skipped: {why}")
    pool = max(1, primes_in(lo, hi) - excluded)
    return PrimeDraw(tuple(primes), seed, pool)


def agreeing(
    run: Callable[[int, int], tuple[K, str, T]], draw: PrimeDraw, notes: list[str], what: str
) -> tuple[K, list[T], list[int]]:
    """``(key, records, primes agreeing)`` of counts ``run(prime, i)`` (each ``(key, shown, record)``) modulo the
    first two primes of ``draw``; where their keys differ, modulo the third too, and the key two of the three
    share (noted), or a :class:`ComputationError` when no two agree."""
    done = [run(draw.primes[i], i) for i in range(2)]
    if done[0][0] == done[1][0]:
        return done[0][0], [r for _, _, r in done], list(draw.primes[:2])
    done.append(run(draw.primes[2], 2))
    p = draw.primes
    shown = f"{done[0][1]} modulo {p[0]}, {done[1][1]} modulo {p[1]}, {done[2][1]} modulo {p[2]}"
    for i, j in ((0, 2), (1, 2)):
        if done[i][0] == done[j][0]:
            notes.append(
                f"{what}: the counts modulo {p[0]} and {p[1]} differ, a third decides ({shown}): "
                f"modulo {p[1 - i]} a prime or a random choice was unlucky"
            )
            return done[i][0], [r for _, _, r in done], [p[i], p[j]]
    raise ComputationError(
        f"{what}: no two counts agree ({shown}): unlucky primes or choices; no value is reported "
        "(another seed draws other primes)",
        seed=draw.seed,
    )
