"""The ED degree of one layer's decision boundary: :func:`boundary_ed_degree` (issue 24, item 3).

docs/related.md (related-boundaries).  A binary linear readout ``r`` (a ``t x d'`` matrix) on one lightning
layer with weights ``(A, V)`` gives the score ``F(X) = <r, f_{A,V}(X)>``, a homogeneous cubic in the
``n = t d`` entries of the input ``X``; the decision boundary is the cubic hypersurface ``{F = 0}`` in input
space, and certifying the robustness of an input ``U`` is the nearest-boundary problem
``min |X - U|^2`` on it (Alexandr et al., *A numerical study of robustness verification for lightning
self-attention*, arXiv:2602.06105).  Its number of complex critical points for generic ``U`` is the ED degree
of the boundary; here it is counted with the Lagrange conditions

    X - U = lambda grad F(X),        F(X) = 0,

in ``n + 1`` unknowns, by msolve (the count of standard monomials of a Groebner basis over GF(p)).

**Two independent draws.** The count at one draw of the weights is the generic value only if the draw is generic,
and a random integer draw is not always: the seed-0 weights of ``(d, d', a, t) = (3, 1, 2, 2)`` give 25 where the
generic value is 28 (seeds 1 to 7 give 28, and Macaulay2 over QQ 25 and 28; the symmetric part of that seed's ``A``
is singular, ``det(A + A^T) = 0``, which a rank-2 ``A`` generically avoids; docs/related.md). So every value rests
on two independent draws that agree: draw ``k = 0, 1, ...`` takes the weights ``(Q, K, V)`` and the readout ``r``
from the seed ``seed + k``, its own random data point ``U``, and alternates the two primes (draw 0 over
GF(DEFAULT_PRIME), draw 1 over GF(SECOND_PRIME), ...): no two draws share weights or data point, and two
consecutive draws not even the prime.
Drawing stops at the first value counted by two draws; a draw whose count is another value, or whose boundary is
degenerate (the readout vanishes, the conditions are not zero-dimensional), is a *special* draw, reported by seed
and value. No two agreeing draws within ``max_draws`` raises :class:`ComputationError` naming every draw. No
solution lies at a singular point of the boundary (``grad F = 0`` there forces ``X = U``, on the boundary's singular
locus, which a generic ``U`` is not), so nothing is removed. A general cubic cone in ``C^n`` has ED degree
``3 (2^(n-1) - 1)`` (Draisma et al., Cor. 2.9), printed beside it.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from typing import Any

from .. import _clock
from .._algebra import count_solutions, msolve_version
from .._architecture import Architecture, check_architecture
from .._checks import check_int, check_seconds
from .._errors import AgAttentionError, ComputationError, InvalidArgumentError
from .._exact import DEFAULT_PRIME, SECOND_PRIME, linalg
from .._models import check_one_layer
from .._provenance import provenance
from .._resources import MemoryEstimate, require_memory
from .._results import ResultMixin
from .system import polynomial_text

__all__ = ["BoundaryED", "boundary_ed_degree", "general_cubic_ed_degree", "boundary_polynomial"]


def general_cubic_ed_degree(n: int) -> int:
    """The ED degree of a general cubic cone in ``C^n`` (a general cubic hypersurface of ``P^(n-1)``)."""
    degree: int = 3 * (2 ** (n - 1) - 1)  # an int for n >= 1 (typeshed types int ** int as Any: a negative power)
    return degree


@dataclass(frozen=True)
class BoundaryED(ResultMixin):
    """The ED degree of a decision boundary ``{<r, f(X)> = 0}`` of one layer, with its certificate.

    ``draws``: every draw made, in order (seeds ``seed``, ``seed + 1``, ...); ``ed_degree`` is the value of
    exactly two of them (:attr:`agreeing`), and the others are :attr:`special` (their value differs, or their
    boundary is degenerate)."""

    @dataclass(frozen=True)
    class Draw:
        """One draw of :func:`boundary_ed_degree`: weights, readout and data point from ``seed``, counted mod
        ``prime``."""

        seed: int
        prime: int
        solutions: int | None  # None: a degenerate boundary (the readout vanishes, or not zero-dimensional)
        seconds: float
        note: str = ""  # why a draw is degenerate

        def to_dict(self) -> dict[str, Any]:
            return {
                "seed": self.seed,
                "prime": self.prime,
                "solutions": self.solutions,
                "seconds": round(self.seconds, 3),
                **({"note": self.note} if self.note else {}),
            }

        def describe(self) -> str:
            return (
                f"seed {self.seed}: {self.solutions} over GF({self.prime})"
                if self.solutions is not None
                else f"seed {self.seed}: degenerate ({self.note})"
            )

    architecture: Architecture
    ed_degree: int
    general_cubic: int
    unknowns: int  # t d
    draws: tuple[BoundaryED.Draw, ...]
    seed: int
    seconds: float

    @property
    def agreeing(self) -> tuple[BoundaryED.Draw, ...]:
        """The two independent draws whose counts are :attr:`ed_degree`."""
        return tuple(w for w in self.draws if w.solutions == self.ed_degree)

    @property
    def special(self) -> tuple[BoundaryED.Draw, ...]:
        """The draws whose count is not the generic value (or whose boundary is degenerate)."""
        return tuple(w for w in self.draws if w.solutions != self.ed_degree)

    @property
    def counts(self) -> tuple[tuple[int, int | None], ...]:
        """``(prime, solutions)`` of each draw, in order."""
        return tuple((w.prime, w.solutions) for w in self.draws)

    @property
    def certificate(self) -> str:
        a, b = self.agreeing
        text = (
            f"probabilistic: two independent draws agree, seed {a.seed} ({a.solutions} solutions over "
            f"GF({a.prime})) and seed {b.seed} ({b.solutions} over GF({b.prime})) (msolve; each draw its own "
            "weights, readout and data point)"
        )
        if self.special:
            text += "; special draws: " + ", ".join(w.describe() for w in self.special)
        return text

    def to_dict(self) -> dict[str, Any]:
        return {
            "architecture": self.architecture.to_dict(),
            "ed_degree": self.ed_degree,
            "general_cubic": self.general_cubic,
            "unknowns": self.unknowns,
            "draws": [w.to_dict() for w in self.draws],
            "agreeing_seeds": [w.seed for w in self.agreeing],
            "special_seeds": [w.seed for w in self.special],
            "certificate": self.certificate,
            "seed": self.seed,
            "seconds": round(self.seconds, 3),
            "provenance": provenance(msolve=_msolve_version()),
        }

    def __str__(self) -> str:
        lines = [
            f"ED degree of a decision boundary of {self.architecture.describe()}: {self.ed_degree} (a general "
            f"cubic in {self.unknowns} unknowns: {self.general_cubic})",
            f"  draws            {len(self.draws)}: "
            + ", ".join(w.describe() + (" (special)" if w.solutions != self.ed_degree else "") for w in self.draws),
        ]
        if self.special:
            lines.append(
                f"  special          {len(self.special)} draw(s) not generic, not used: "
                + ", ".join(f"seed {w.seed}" for w in self.special)
            )
        lines.append(f"  certificate      {self.certificate}")
        return "\n".join(lines)


def boundary_polynomial(arch: Architecture, A: Any, V: Any, r: Any, ring: Any) -> Any:
    """``F(X) = sum_{i,m} r[i][m] f(X)_{i,m}`` in ``ring`` (generators ``x{i}_{k}``, token i, entry k)."""
    d, e = arch.widths
    t = arch.tokens
    g = ring.gens()
    X = [[g[i * d + k] for k in range(d)] for i in range(t)]
    zero = ring.constant(0)
    out = zero
    for i in range(t):
        js = range(i + 1) if arch.causal else range(t)
        for j in js:
            s = sum((X[i][k] * A[k][l] * X[j][l] for k in range(d) for l in range(d) if A[k][l]), zero)
            for m in range(e):
                if r[i][m]:
                    vx = sum((V[m][l] * X[j][l] for l in range(d) if V[m][l]), zero)
                    out += r[i][m] * s * vx
    return out


def _msolve_version() -> str | None:
    try:
        return msolve_version()
    except AgAttentionError:
        return None


#: the default bound on the number of draws of :func:`boundary_ed_degree`
MAX_DRAWS = 5


def _weights(arch: Architecture, seed: int) -> tuple[list[list[int]], list[list[int]], list[list[int]]]:
    """``A = Q K`` (rank ``<= a``), ``V`` and the readout ``r``: random integers in [-5, 5] from ``seed``."""
    d, e = arch.widths
    t = arch.tokens
    a = min(arch.ranks[0], d)
    rng = random.Random(seed)
    Q = [[rng.randint(-5, 5) for _ in range(a)] for _ in range(d)]
    K = [[rng.randint(-5, 5) for _ in range(d)] for _ in range(a)]
    A = [[sum(Q[k][c] * K[c][l] for c in range(a)) for l in range(d)] for k in range(d)]
    V = [[rng.randint(-5, 5) for _ in range(d)] for _ in range(e)]
    r = [[rng.randint(-5, 5) for _ in range(e)] for _ in range(t)]
    return A, V, r


def _count(
    arch: Architecture, A: Any, V: Any, r: Any, prime: int, data_seed: int, *, timeout: float, backend: str
) -> tuple[int | None, str]:
    """The number of solutions of the Lagrange conditions mod ``prime`` at the data point drawn from
    ``data_seed``, or ``(None, why)`` for a degenerate boundary."""
    n = arch.tokens * arch.widths[0]
    names = [f"x{i}_{k}" for i in range(1, arch.tokens + 1) for k in range(1, arch.widths[0] + 1)] + ["lam"]
    ring = linalg.modular_polynomial_ring(names, prime, "degrevlex")
    F = boundary_polynomial(arch, A, V, r, ring)
    if F.is_zero():
        return None, "the readout vanishes identically"
    urng = random.Random(data_seed)
    g = ring.gens()
    lam = g[-1]
    eqs = [g[k] - ring.constant(urng.randrange(prime)) - lam * F.derivative(names[k]) for k in range(n)] + [F]
    texts = [polynomial_text(f, names) for f in eqs]
    sol = count_solutions(
        names,
        texts,
        prime,
        timeout=timeout,
        label=f"ED degree of a decision boundary of {arch.describe()} mod {prime}",
        backend=backend,
    )
    if sol.count is None:
        return None, "the Lagrange conditions are not zero-dimensional"
    return sol.count, ""


#: seconds per product term when the boundary polynomial is built (measured: (d, t) = (3, 30) in 0.42 s, (6, 20)
#: in 0.54 s, for t^2 d^2 d' products)
SECONDS_PER_PRODUCT = 5e-5


def check_size(arch: Architecture, timeout: float) -> None:
    """Refuse, before anything is built, a boundary whose polynomial would not fit in memory or could not even be
    built within ``timeout``: about ``t^2 d^2 (d + 1) / 2`` terms in ``n = t d`` variables, each term an exponent
    vector of ``n + 1`` bytes or more in FLINT (``tokens=10**6`` aborted the process in FLINT's allocator;
    ``tokens=1000`` at width 200 ran past 100 s with ``timeout=20``)."""
    d, e = arch.widths
    t = arch.tokens
    n = t * d
    terms = t * t * d * d * (d + 1) // 2
    per_term = 8 * (-(-(n + 1) * 8 // 64)) + 8  # packed 8-bit exponents in words, and the coefficient
    # F, and one derivative of it alive at a time while the equations are made (each at most as large)
    require_memory(
        MemoryEstimate(
            2 * terms * per_term,
            {f"boundary polynomial, about {terms:,} terms in {n:,} variables": 2 * terms * per_term},
        ),
        f"the decision boundary of {arch.describe()}",
        "fewer tokens or a smaller width",
    )
    build = SECONDS_PER_PRODUCT * t * t * d * d * e
    if build > timeout:
        raise InvalidArgumentError(
            f"tokens={t}, widths {d},{e}: building the boundary polynomial alone takes about "
            f"{build:,.0f} s ({t * t * d * d * e:,} products), above timeout={timeout:g} s; "
            "its ED degree over n = t d variables is out of reach anyway (a general cubic "
            f"in {n:,} variables has one of about 2^{n:,})"
        )


@_clock.interruptible()
def boundary_ed_degree(
    arch: Architecture, *, seed: int = 0, timeout: float = 300.0, backend: str = "auto", max_draws: int = MAX_DRAWS
) -> BoundaryED:
    """The ED degree of a random decision boundary of the one-layer ``arch`` (see the module docstring).

    The value rests on two independent draws that agree: draw ``k`` takes weights, readout and data point from
    the seed ``seed + k`` and counts over a prime alternating between two; draws continue until two of them
    give the same count, and at most ``max_draws`` (>= 2) are made.  The draws that give another count (or a
    degenerate boundary) are kept in the result as *special* draws (``result.special``; ``str(result)`` and
    ``to_dict()["special_seeds"]`` name them), never silently dropped.  With no two agreeing draws
    within ``max_draws``: :class:`ComputationError` naming every draw's seed and value.  ``timeout``: seconds
    for each draw's count.

    >>> from ag_attention import Architecture
    >>> r = boundary_ed_degree(Architecture.single_layer(2, 1, None, tokens=2))
    >>> r.ed_degree, r.general_cubic, [w.seed for w in r.agreeing]
    (12, 21, [0, 1])
    """
    arch = check_architecture(arch)
    arch = check_one_layer(arch, what="boundary_ed_degree")
    if arch.heads != 1 or arch.skip or arch.normalized or not arch.is_linear_attention:
        raise InvalidArgumentError(
            "boundary_ed_degree: one plain lightning layer "
            "(one head, no skip connection, no softmax, no biases, no rotary positions)"
        )
    seed = check_int(seed, "seed", minimum=0)
    max_draws = check_int(max_draws, "max_draws", minimum=2)  # two draws must agree
    timeout = check_seconds(timeout)
    n = arch.tokens * arch.widths[0]
    check_size(arch, timeout)
    t0 = time.perf_counter()
    draws: list[BoundaryED.Draw] = []
    for k in range(max_draws):
        s = seed + k
        prime, offset = ((DEFAULT_PRIME, 0), (SECOND_PRIME, 1))[k % 2]
        A, V, r = _weights(arch, s)
        t1 = time.perf_counter()
        count, note = _count(arch, A, V, r, prime, s * 1000 + 17 + offset, timeout=timeout, backend=backend)
        draws.append(BoundaryED.Draw(s, prime, count, time.perf_counter() - t1, note))
        if count is not None and sum(w.solutions == count for w in draws) == 2:
            return BoundaryED(arch, count, general_cubic_ed_degree(n), n, tuple(draws), seed, time.perf_counter() - t0)
    raise ComputationError(
        f"the ED degree of a decision boundary of {arch.describe()}: no two of {max_draws} independent draws "
        "agree (" + ", ".join(w.describe() for w in draws) + "): raise max_draws or use another seed",
        seed=seed,
    )
