"""Ball arithmetic with python-flint's ``arb`` and ``arb_mat``: rigorous enclosures of real numbers.

An ``arb`` is a ball ``[m +/- r]`` guaranteed to contain the exact real it
stands for: every operation (``+``, ``*``, ``/``, ``exp``) rounds outward.
:class:`Balls` is the :class:`ag_attention._network.Arithmetic` protocol on
numpy object arrays of balls, with its own softmax (``exp`` of balls, no
row maximum: balls have no order), so :func:`ag_attention._network.jacobian`
evaluates softmax networks rigorously.  Inputs given as float64 numbers
(or rationals) are converted exactly (a dyadic float is an exact ball).

:func:`determinant` encloses the determinant of a square matrix of balls; if
the ball excludes 0, the exact matrix it encloses is invertible.  The
working precision (``bits``) is python-flint's global ``flint.ctx.prec``,
set only inside :func:`precision`.

With :mod:`ag_attention._exact.linalg` and :mod:`ag_attention._exact.field`,
the only module that imports python-flint (tests/exact/test_linalg.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import flint
import numpy as np

from .._network import OperatorArithmetic
from .._positions import Frequencies

__all__ = [
    "Ball",
    "Balls",
    "DeterminantBall",
    "balls",
    "determinant",
    "precision",
    "contains_zero",
    "top_eigenvalue",
    "ball",
    "interval",
    "evaluate",
    "power",
    "signature",
    "ComplexBall",
    "ComplexBallMatrix",
    "complex_ball",
    "complex_box",
    "complex_matrix",
    "some_minor_excludes_zero",
    "strictly_inside",
    "ball_bounds",
    "boxes_disjoint",
    "midpoints",
    "around",
]

#: a real ball (python-flint's ``arb``)
Ball = flint.arb
#: a complex ball, a rectangle ``[re +/- r1] + [im +/- r2] i`` (python-flint's ``acb``), and its matrices
ComplexBall = flint.acb
ComplexBallMatrix = flint.acb_mat


@contextmanager
def precision(bits: int) -> Iterator[int]:
    """Work at ``bits`` bits of precision inside the block (python-flint's global ``ctx.prec``), then restore."""
    old = flint.ctx.prec
    flint.ctx.prec = int(bits)
    try:
        yield int(bits)
    finally:
        flint.ctx.prec = old


def _ball(x: Any) -> Any:
    if isinstance(x, flint.arb):
        return x
    if isinstance(x, flint.fmpq):
        return flint.arb(x)
    if isinstance(x, Fraction):
        return flint.arb(flint.fmpq(x.numerator, x.denominator))
    if isinstance(x, (int, np.integer)):
        return flint.arb(int(x))
    return flint.arb(float(x))  # a float64 is a dyadic rational: an exact ball


_to_ball = np.frompyfunc(_ball, 1, 1)
_exp = np.frompyfunc(lambda x: x.exp(), 1, 1)


def balls(a: Any) -> np.ndarray:
    """An object array of exact balls from numbers (float64, int, Fraction) or balls, of the same shape."""
    out: np.ndarray = np.asarray(_to_ball(np.asarray(a, dtype=object)), dtype=object)
    return out


def contains_zero(x: Any) -> bool:
    """Whether the ball ``x`` contains 0 (then its sign is not proven)."""
    return bool(x.contains(0))


class Balls(OperatorArithmetic):
    """Ball arithmetic on numpy object arrays of ``arb``: :class:`ag_attention._network.Arithmetic`, with a softmax.

    ``exact`` is False (balls enclose reals; they are not a field of residues), so the network code accepts
    the softmax; use inside :func:`precision`.
    """

    exact = False
    dtype: type[np.generic] = np.object_

    def random(self, rng: np.random.Generator, shape: int | tuple[int, ...]) -> np.ndarray:
        return balls(rng.standard_normal(shape))

    def einsum(self, spec: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        out: np.ndarray = np.asarray(np.einsum(spec, a, b, optimize=True), dtype=object)
        return out

    def circle(self, freqs: Frequencies, tokens: int) -> tuple[np.ndarray, np.ndarray]:
        """Rotary positions: balls around ``cos(p theta_f)``, ``sin(p theta_f)`` at the true frequencies
        ``theta_f = base^(-f/F) / scale`` (python-flint's ``arb`` power, cosine and sine: rigorous)."""
        base = flint.arb(flint.fmpq(freqs.base.numerator, freqs.base.denominator))
        scale = flint.arb(flint.fmpq(freqs.scale.numerator, freqs.scale.denominator))
        C = np.empty((tokens, freqs.pairs), dtype=object)
        S = np.empty((tokens, freqs.pairs), dtype=object)
        for f in range(freqs.pairs):
            theta = base ** flint.arb(flint.fmpq(-f, freqs.pairs)) / scale
            for p in range(tokens):
                C[p, f], S[p, f] = (p * theta).cos(), (p * theta).sin()
        return C, S

    def softmax(self, S: np.ndarray, tau: float, mask: np.ndarray | None = None) -> np.ndarray:
        """Row softmax of ``S / tau`` on balls; masked entries (``mask`` False) are exactly 0."""
        E = _exp(S / flint.arb(float(tau)))
        if mask is not None:
            E = np.where(mask, E, balls(0))
        out: np.ndarray = np.asarray(E / E.sum(axis=-1, keepdims=True), dtype=object)
        return out


@dataclass(frozen=True)
class DeterminantBall:
    """An enclosure of the determinant of a square matrix of balls."""

    size: int
    bits: int
    midpoint: float
    radius: float
    text: str  # python-flint's str of the ball
    excludes_zero: bool


def determinant(M: np.ndarray, bits: int) -> DeterminantBall:
    """The determinant ball of the square object array ``M`` of balls, at ``bits`` bits (``arb_mat.det``).

    ``excludes_zero``: every real matrix in the entrywise balls is invertible (in particular the exact one).
    """
    M = np.asarray(M, dtype=object)
    if M.ndim != 2 or M.shape[0] != M.shape[1]:
        raise ValueError(f"determinant: needs a square matrix, got shape {M.shape}")
    n = M.shape[0]
    with precision(bits):
        if n == 0:
            d = flint.arb(1)
        else:
            d = flint.arb_mat([[_ball(x) for x in row] for row in M]).det()
        return DeterminantBall(n, int(bits), float(d.mid()), float(d.rad()), str(d), not bool(d.contains(0)))


def top_eigenvalue(M: Any, bits: tuple[int, ...] = (200, 1000)) -> Any | None:
    """A ball holding the largest eigenvalue of the real symmetric matrix ``M`` (exact entries), or None.

    Certified enclosures of every eigenvalue (``acb_mat.eig(multiple=True)``, so multiple eigenvalues of a
    low-rank matrix are allowed) at each precision in ``bits`` until one succeeds; the largest by midpoint
    (the enclosures of a symmetric matrix's eigenvalues are real up to their radius).  None when no precision
    isolates them.
    """
    rows = [[_ball(x) for x in row] for row in np.asarray(M, dtype=object)]
    for b in bits:
        with precision(b):
            mat = flint.acb_mat([[flint.acb(x) for x in row] for row in rows])
            try:
                eigs = mat.eig(multiple=True)
            except ValueError:
                continue
            return max(eigs, key=lambda z: z.real.mid()).real
    return None


def ball(x: Any) -> Any:
    """The exact ball of a number (int, Fraction, float64, python-flint's fmpq) or the ball itself."""
    return _ball(x)


def interval(lo: Fraction, hi: Fraction) -> Any:
    """A ball holding the closed interval ``[lo, hi]`` (rationals, ``lo <= hi``); its radius rounded outward."""
    if lo > hi:
        raise ValueError(f"interval: lo={lo} > hi={hi}")
    mid, rad = (lo + hi) / 2, (hi - lo) / 2
    out = _ball(mid)
    if rad:
        out += flint.arb(0, float(rad) * (1 + 1e-12) + 1e-300)  # float(rad) rounds: widen by a relative margin
    return out


def evaluate(terms: Any, values: list[Any]) -> Any:
    """``sum c * prod v_i^k_i`` over ``terms`` (a mapping ``exponents -> coefficient``, e.g. python-flint's
    ``fmpq_mpoly.to_dict()``) at balls ``values``: a ball holding the exact value for every point in them."""
    total = flint.arb(0)
    for exps, c in terms.items():
        term = _ball(c)
        for v, k in zip(values, exps):
            if k:
                term *= power(v, int(k))
        total += term
    return total


def power(v: Any, k: int) -> Any:
    """``v ** k`` for a ball and an integer ``k >= 0`` by repeated squaring: python-flint's ``arb ** int`` is
    ``nan`` for a ball that contains 0 (``arb(0, 1e-38) ** 2``), which an exact zero coordinate of a solution is
    (msolve isolates it in a box around 0)."""
    out, base = flint.arb(1), v
    while k:
        if k & 1:
            out = out * base
        k >>= 1
        if k:
            base = base * base
    return out


def signature(H: list[list[Any]], bits: tuple[int, ...] = (200, 1000)) -> tuple[int, int, int]:
    """Eigenvalues of the symmetric ball matrix ``H`` proven positive, proven negative, and undecided.

    Certified enclosures of the eigenvalues of every real symmetric matrix in the entrywise balls
    (``acb_mat.eig(multiple=True)``: clusters allowed); an enclosure whose real part contains 0 is
    undecided.  With no enclosure at any precision in ``bits``, all ``n`` are undecided.
    """
    n = len(H)
    if n == 0:
        return 0, 0, 0
    for b in bits:
        with precision(b):
            mat = flint.acb_mat([[flint.acb(_ball(x)) for x in row] for row in H])
            try:
                eigs = mat.eig(multiple=True)
            except ValueError:
                continue
            pos = sum(1 for z in eigs if z.real > 0)
            neg = sum(1 for z in eigs if z.real < 0)
            return pos, neg, n - pos - neg
    return 0, 0, n


# ------------------------------------------------------------------ complex balls (the Krawczyk test)
def complex_ball(x: Any) -> Any:
    """The exact complex ball of a number (int, Fraction, float64, complex128, python-flint's fmpq, arb or acb):
    a float is its dyadic value, a Fraction a ball holding it at the working precision."""
    if isinstance(x, flint.acb):
        return x
    if isinstance(x, (complex, np.complexfloating)):
        return flint.acb(float(x.real), float(x.imag))
    return flint.acb(_ball(x))


def complex_box(center: Any, radius: Any) -> np.ndarray:
    """The box ``center_i + [-r_i, r_i] + [-r_i, r_i] i`` around each coordinate (an object array of ``acb``);
    ``center`` complex128 (a dyadic point: exact), ``radius`` one float or one per coordinate."""
    center = np.asarray(center, dtype=complex)
    radii = np.broadcast_to(np.asarray(radius, dtype=float), center.shape)
    return np.array(
        [
            flint.acb(
                flint.arb(float(z.real)) + flint.arb(0, float(r)), flint.arb(float(z.imag)) + flint.arb(0, float(r))
            )
            for z, r in zip(center, radii)
        ],
        dtype=object,
    )


def midpoints(values: Any) -> np.ndarray:
    """The exact midpoints of complex balls (radius 0): a high-precision point, e.g. a Newton iterate."""
    return np.array([flint.acb(z.real.mid(), z.imag.mid()) for z in values], dtype=object)


def around(center: Any, radius: Any) -> np.ndarray:
    """The box ``c_i + [-r_i, r_i] + [-r_i, r_i] i`` around exact complex balls ``c_i`` (their midpoints)."""
    radii = np.broadcast_to(np.asarray(radius, dtype=float), (len(center),))
    return np.array(
        [
            flint.acb(z.real.mid() + flint.arb(0, float(r)), z.imag.mid() + flint.arb(0, float(r)))
            for z, r in zip(center, radii)
        ],
        dtype=object,
    )


def complex_matrix(rows: Any) -> Any:
    """An ``acb_mat`` from a 2-d array of numbers or balls (each by :func:`complex_ball`)."""
    rows = np.asarray(rows, dtype=object)
    if rows.ndim != 2:
        raise ValueError(f"complex_matrix: a 2-d array is needed, got shape {rows.shape}")
    return flint.acb_mat([[complex_ball(v) for v in row] for row in rows])


def strictly_inside(inner: Any, outer: Any) -> bool:
    """Whether the ball ``inner`` lies in the interior of the ball ``outer`` (real or complex)."""
    return bool(outer.contains_interior(inner))


def ball_bounds(z: Any) -> tuple[float, float, float, float]:
    """``(re_lo, re_hi, im_lo, im_hi)`` of a complex ball, rounded outward to floats."""
    re, im = z.real, z.imag
    return (float(re.lower()), float(re.upper()), float(im.lower()), float(im.upper()))


def ball_parts(values: Any) -> list[tuple[tuple[int, int], ...]]:
    """Complex balls as exact integers (each real and imaginary part's midpoint and radius as ``(m, e)``, the
    number ``m 2^e``): picklable, to send a certified box to another process and back (:func:`balls_from_parts`:
    the midpoints exactly, each radius rounded up by at most a relative 2^-29, Arb's radius conversion: a ball
    holding the original, so every disjointness and enclosure read from it stays proven)."""
    out = []
    for z in values:
        parts = []
        for x in (z.real, z.imag):
            m, e = x.mid().man_exp()
            rm, re_ = x.rad().man_exp()
            parts += [(int(m), int(e)), (int(rm), int(re_))]
        out.append(tuple(parts))
    return out


def balls_from_parts(parts: Any) -> np.ndarray:
    """The complex balls of :func:`ball_parts` (an object array of ``acb``), each holding the original."""
    parts = list(parts)
    bits = max([53] + [abs(m).bit_length() + 2 for p in parts for m, _ in p])
    with precision(bits):  # the midpoints are set exactly (an arb is rounded to the working precision)
        return np.array([flint.acb(flint.arb(a, b), flint.arb(c, d)) for a, b, c, d in parts], dtype=object)


def boxes_disjoint(a: Any, b: Any) -> bool:
    """Whether two boxes (sequences of complex balls) are disjoint: some coordinate's balls do not overlap."""
    return any(not x.overlaps(y) for x, y in zip(a, b))


def some_minor_excludes_zero(M: list[list[Any]], size: int, bits: int = 128) -> bool:
    """Whether some ``size x size`` minor of the matrix of (complex) balls ``M`` is a ball without 0: then every
    matrix in the balls, the exact one included, has rank ``>= size``."""
    import itertools

    rows, cols = len(M), len(M[0]) if M else 0
    if size == 0:
        return True
    if size > min(rows, cols):
        return False
    with precision(bits):
        for I in itertools.combinations(range(rows), size):
            for J in itertools.combinations(range(cols), size):
                sub = flint.acb_mat([[complex_ball(M[i][j]) for j in J] for i in I])
                if not sub.det().contains(0):
                    return True
    return False
