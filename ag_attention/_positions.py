"""Positions in the attention scores: rotary position embeddings (RoPE), as one entry of a table.

A rotary layer rotates each query and key by an angle proportional to its token's position before the score is
taken (Su et al., RoFormer; LLaMA, Mistral, Qwen2, Phi-3, GPT-NeoX):

    q_i = R_i (W_q x_i + b_q),   k_j = R_j (W_k x_j + b_k),   q_i^T k_j = (W_q x_i + b_q)^T R_{j-i} (W_k x_j + b_k)

with ``R_p`` block-diagonal: the coordinate pairs of a head turned by ``p theta_f`` (docs/math/rotary.md). The
score is still polynomial in the weights, with constant rotations, so every exact engine of the package applies
once the rotations are numbers of its arithmetic:

* float64 and balls: ``cos(p theta_f)`` and ``sin(p theta_f)`` at the true frequencies;
* GF(p): the frequencies ``theta_f = base^(-2f/D) / scale`` are real algebraic numbers, so (Lindemann-Weierstrass)
  ``exp(i beta_1), ..., exp(i beta_n)`` are algebraically independent for any basis ``beta`` of their span over
  ``Q``: the true rotations are a *generic* point of the torus cut out by the frequencies' rational relations
  (:meth:`Frequencies.lattice`). A random point of that torus over GF(p) then gives a rank that is a proven lower
  bound on the rank at the true frequencies (docs/math/rotary.md, rotary-exact).

:data:`POSITIONS` is the table of position encodings the package models; :data:`REFUSED_POSITIONS` names those it
does not, each with the reason and what would make it work.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from ._errors import InvalidArchitectureError

__all__ = [
    "Rotary",
    "Frequencies",
    "PAIRINGS",
    "POSITIONS",
    "REFUSED_POSITIONS",
    "rotary_from_dict",
    "circle_modp",
    "circle_float",
]

#: how a head's coordinates are paired: ``half`` pairs ``c`` with ``c + D/2`` (LLaMA's ``rotate_half``: LLaMA,
#: Mistral, Qwen2, Phi-3, GPT-NeoX), ``interleaved`` pairs ``2f`` with ``2f + 1`` (GPT-J, the RoFormer paper)
PAIRINGS = ("half", "interleaved")


def _integer_root(n: int, k: int) -> int | None:
    """The integer ``r`` with ``r^k = n`` (``n >= 0``), or None."""
    if n < 2:
        return n
    r = 1 << ((n.bit_length() + k - 1) // k)  # above the root
    while True:  # Newton's method on integers, decreasing to floor(n^(1/k))
        s = ((k - 1) * r + n // r ** (k - 1)) // k
        if s >= r:
            break
        r = s
    return r if r**k == n else None


def perfect_power(b: Fraction) -> tuple[Fraction, int]:
    """``(c, k)`` with ``b = c^k`` and ``k`` largest (``c`` not a perfect power), for a positive rational ``b != 1``.

    >>> perfect_power(Fraction(10000))
    (Fraction(10, 1), 4)
    >>> perfect_power(Fraction(500000))
    (Fraction(500000, 1), 1)
    """
    u, v = b.numerator, b.denominator
    for k in range(max(u.bit_length(), v.bit_length()), 1, -1):
        ru, rv = _integer_root(u, k), _integer_root(v, k)
        if ru is not None and rv is not None:
            return Fraction(ru, rv), k
    return b, 1


@dataclass(frozen=True)
class Frequencies:
    """The rotation frequencies of one head: ``theta_f = base^(-f/F) / scale``, ``f = 0..F-1`` (``F = D/2`` pairs)."""

    base: Fraction
    pairs: int
    scale: Fraction = Fraction(1)

    def floats(self) -> np.ndarray:
        """``theta_f`` in float64 (each within a few units in the last place)."""
        log_b = math.log(self.base.numerator) - math.log(self.base.denominator)
        return np.array([math.exp(-f * log_b / self.pairs) / float(self.scale) for f in range(self.pairs)])

    def lattice(self) -> tuple[int, tuple[tuple[int, int], ...]]:
        """``(n, ((e_f, m_f), ...))``: a basis ``beta_0..beta_{n-1}`` of the ``Q``-span of the frequencies, linearly
        independent over ``Q``, and positive integers with ``theta_f = m_f beta_{e_f}``.

        ``base = c^k`` with ``c`` no perfect power, so ``x^F' - c`` is irreducible over ``Q`` (Capelli) and the
        ``c^(-e/F')``, ``e < F'``, are independent over ``Q``; ``theta_f = c^(-k f / F) / scale`` is a rational
        multiple of one of them, made an integer multiple by the common factor of the basis (docs/math/rotary.md,
        rotary-exact).

        >>> Frequencies(Fraction(10000), 2).lattice()  # theta_0 = 1 = 100 * theta_1
        (1, ((0, 100), (0, 1)))
        >>> Frequencies(Fraction(500000), 3).lattice()[0]  # three independent frequencies
        3
        """
        c, k = perfect_power(self.base)
        g = math.gcd(k, self.pairs)
        kk, FF = k // g, self.pairs // g
        q = [kk * f // FF for f in range(self.pairs)]
        e = [kk * f % FF for f in range(self.pairs)]
        top = max(q)
        u, v = c.numerator, c.denominator
        multiples = [v**qf * u ** (top - qf) for qf in q]
        used = sorted(set(e))
        index = {x: i for i, x in enumerate(used)}
        return len(used), tuple((index[ef], m) for ef, m in zip(e, multiples))


@dataclass(frozen=True)
class Rotary:
    """Rotary position embeddings of a layer's heads (the entry ``rope`` of ``POSITIONS``, docs/math/rotary.md).

    ``base``: ``rope_theta`` (an exact rational: a float is its binary value); ``dims``: the rotated coordinates of
    each head (``None``: all of them; fewer: partial rotary, GPT-NeoX's ``rotary_pct``, Phi's
    ``partial_rotary_factor``; the first ``dims`` coordinates of the head are rotated, the others pass); ``pairing``:
    ``"half"`` (LLaMA's ``rotate_half``) or ``"interleaved"`` (GPT-J); ``scale``: linear position scaling
    (``rope_scaling`` ``linear``: positions divided by it). Positions are ``0..t-1``.
    """

    base: Fraction = Fraction(10000)
    dims: int | None = None
    pairing: str = "half"
    scale: Fraction = Fraction(1)

    def __post_init__(self) -> None:
        for name in ("base", "scale"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float, Fraction)):
                raise InvalidArchitectureError(f"positions.{name}", value, "must be a positive number")
            if isinstance(value, float) and not math.isfinite(value):
                raise InvalidArchitectureError(f"positions.{name}", value, "must be a positive finite number")
            exact = Fraction(value)
            if exact <= 0:
                raise InvalidArchitectureError(f"positions.{name}", value, "must be a positive number")
            object.__setattr__(self, name, exact)
        if self.base == 1:
            raise InvalidArchitectureError(
                "positions.base", 1, "every pair would turn at the same frequency 1/scale: not a rotary embedding"
            )
        if self.dims is not None and (
            isinstance(self.dims, bool) or not isinstance(self.dims, int) or self.dims < 2 or self.dims % 2
        ):
            raise InvalidArchitectureError("positions.dims", self.dims, "must be a positive even integer (or None)")
        if self.pairing not in PAIRINGS:
            raise InvalidArchitectureError("positions.pairing", self.pairing, f"must be one of {', '.join(PAIRINGS)}")

    kind = "rope"

    def rotated(self, a: int) -> int:
        """The rotated coordinates of a head of size ``a``."""
        return a if self.dims is None else self.dims

    def check(self, a: int, where: str) -> None:
        D = self.rotated(a)
        if D > a or D % 2:
            raise InvalidArchitectureError(
                where, a, f"rotary embeddings turn {D} coordinates of each head in pairs: needs an even number <= {a}"
            )

    def pairs(self, a: int) -> list[tuple[int, int, int]]:
        """``(c1, c2, f)``: coordinates ``c1, c2`` of a head of size ``a`` turn together at frequency ``f``."""
        D = self.rotated(a)
        if self.pairing == "half":
            return [(f, f + D // 2, f) for f in range(D // 2)]
        return [(2 * f, 2 * f + 1, f) for f in range(D // 2)]

    def frequencies(self, a: int) -> Frequencies:
        return Frequencies(self.base, self.rotated(a) // 2, self.scale)

    def distinct(self, a: int) -> bool:
        """The frequencies of a head of size ``a`` separate its planes: ``2 theta_f != +-2 theta_g`` and
        ``4 theta_f != 0`` modulo ``2 pi`` (the hypothesis of docs/math/rotary.md, rotary-dimension). Decided in
        float64 with a margin of ``1e-9``, far above the ``1e-15`` error of the angles: a proof, not a guess."""
        theta = self.frequencies(a).floats()

        def apart(x: float) -> bool:  # x not a multiple of 2 pi
            r = math.remainder(x, 2 * math.pi)
            return abs(r) > 1e-9

        for f, x in enumerate(theta):
            if not apart(4 * x):
                return False
            if any(not apart(2 * x - 2 * y) or not apart(2 * x + 2 * y) for y in theta[f + 1 :]):
                return False
        return True

    def describe(self) -> str:
        parts = [f"base {_number(self.base)}"]
        if self.dims is not None:
            parts.append(f"{self.dims} dims")
        if self.pairing != "half":
            parts.append(self.pairing)
        if self.scale != 1:
            parts.append(f"scale {_number(self.scale)}")
        return "rope(" + ", ".join(parts) + ")"

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "rope",
            "base": _number(self.base),
            "dims": self.dims,
            "pairing": self.pairing,
            "scale": _number(self.scale),
        }


def _number(x: Fraction) -> str:
    return str(x.numerator) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"


def rotary_from_dict(data: Any) -> Rotary | None:
    """The inverse of :meth:`Rotary.to_dict` (also ``None``, ``"none"``, ``"rope"`` with the defaults)."""
    if data is None or data == "none":
        return None
    if isinstance(data, Rotary):
        return data
    if data == "rope":
        return Rotary()
    if not isinstance(data, dict) or data.get("kind") != "rope":
        known = ", ".join(POSITIONS)
        raise InvalidArchitectureError("positions", data, f"must be one of {known}, or a rope entry (kind: rope)")
    unknown = set(data) - {"kind", "base", "dims", "pairing", "scale"}
    if unknown:
        raise InvalidArchitectureError("positions", data, f"unknown field {sorted(unknown)[0]!r}")

    def number(name: str, default: Fraction | int) -> Any:
        value = data.get(name, default)
        if isinstance(value, str):
            try:
                return Fraction(value)
            except (ValueError, ZeroDivisionError):
                raise InvalidArchitectureError(f"positions.{name}", value, "must be a number") from None
        return value

    return Rotary(number("base", Fraction(10000)), data.get("dims"), data.get("pairing", "half"), number("scale", 1))


#: the position encodings modelled in the scores (name -> what it is); absolute position embeddings are added to
#: the inputs before the first layer, so they are part of the input, not of the attention analysed
POSITIONS: dict[str, str] = {
    "none": "no position in the scores (absolute position embeddings, if any, are part of the input)",
    "rope": "rotary position embeddings: q_i^T R_{j-i} k_j (docs/math/rotary.md)",
}

#: position encodings not modelled: name -> why, and what would make them work
REFUSED_POSITIONS: dict[str, str] = {
    "alibi": "ALiBi adds m_h (j - i) to each score of head h: an additive position bias, not modelled (it is "
    "polynomial, a constant term per relative position: a future model); the weights without it are another model",
    "t5-relative": "T5's relative_attention_bias adds a learned bias b_h(bucket(j - i)) to each score: an additive "
    "position bias, not modelled (a future model); the weights without it are another model",
    "relative_key": "BERT's relative_key adds q_i^T E(j - i) to each score (distance_embedding): a learned "
    "position-dependent term, not modelled (a future model); position_embedding_type absolute is modelled",
    "relative_key_query": "BERT's relative_key_query adds q_i^T E(j - i) + k_j^T E(j - i) to each score: not "
    "modelled (a future model); position_embedding_type absolute is modelled",
}


def _circle_point(u: int, p: int) -> tuple[int, int]:
    """``((1 - u^2)/(1 + u^2), 2u/(1 + u^2))`` mod ``p``: a point of the circle ``c^2 + s^2 = 1``."""
    w = pow((1 + u * u) % p, p - 2, p)
    return (1 - u * u) * w % p, 2 * u * w % p


def _circle_mul(a: tuple[int, int], b: tuple[int, int], p: int) -> tuple[int, int]:
    return (a[0] * b[0] - a[1] * b[1]) % p, (a[0] * b[1] + a[1] * b[0]) % p


def _circle_pow(a: tuple[int, int], n: int, p: int) -> tuple[int, int]:
    out = (1, 0)
    while n:
        if n & 1:
            out = _circle_mul(out, a, p)
        a = _circle_mul(a, a, p)
        n >>= 1
    return out


def circle_modp(freqs: Frequencies, p: int, tokens: int) -> tuple[np.ndarray, np.ndarray]:
    """``(C, S)`` of shape ``(tokens, F)``: ``cos(pos theta_f)``, ``sin(pos theta_f)`` at a random point over
    GF(p) of the torus of :meth:`Frequencies.lattice` (each basis frequency a random circle point, drawn from a
    generator seeded by ``p`` and the lattice: the same point for every Jacobian of one computation)."""
    n, lattice = freqs.lattice()
    rng = np.random.default_rng([p, n, len(lattice), 0x524F5045])
    basis: list[tuple[int, int]] = []
    while len(basis) < n:
        u = int(rng.integers(1, p))
        if (1 + u * u) % p:
            basis.append(_circle_point(u, p))
    C = np.zeros((tokens, freqs.pairs), dtype=np.int64)
    S = np.zeros((tokens, freqs.pairs), dtype=np.int64)
    for f, (e, m) in enumerate(lattice):
        step = _circle_pow(basis[e], m, p)
        point = (1, 0)
        for pos in range(tokens):
            C[pos, f], S[pos, f] = point
            point = _circle_mul(point, step, p)
    return C, S


def circle_float(freqs: Frequencies, tokens: int) -> tuple[np.ndarray, np.ndarray]:
    """``(C, S)`` of shape ``(tokens, F)`` in float64 at the true frequencies."""
    angles = np.arange(tokens, dtype=np.float64)[:, None] * freqs.floats()[None, :]
    return np.cos(angles), np.sin(angles)
