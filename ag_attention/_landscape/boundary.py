"""The ED degree of one layer's decision boundary: :func:`boundary_ed_degree` (issue 24, item 3).

docs/related.md (related-boundaries).  A binary linear readout ``r`` (a ``t x d'`` matrix) on one lightning
layer with weights ``(A, V)`` gives the score ``F(X) = <r, f_{A,V}(X)>``, a homogeneous cubic in the
``n = t d`` entries of the input ``X``; the decision boundary is the cubic hypersurface ``{F = 0}`` in input
space, and certifying the robustness of an input ``U`` is the nearest-boundary problem
``min |X - U|^2`` on it (Alexandr et al., *A numerical study of robustness verification for lightning
self-attention*, arXiv:2602.06105).  Its number of complex critical points for generic ``U`` is the ED degree
of the boundary; here it is counted with the Lagrange conditions

    X - U = lambda grad F(X),        F(X) = 0,

in ``n + 1`` unknowns, by msolve over two primes (each with its own random ``U``), for weights and readout
drawn from ``seed`` (random integers: a generic boundary of the architecture).  No solution lies at a singular
point of the boundary (``grad F = 0`` there forces ``X = U``, on the boundary's singular locus, which a generic
``U`` is not), so nothing is removed.  A general cubic cone in ``C^n`` has ED degree ``3 (2^(n-1) - 1)``
(Draisma et al., Cor. 2.9), printed beside it.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from typing import Any

from .._architecture import Architecture
from .._errors import ComputationError, InvalidArgumentError
from .._exact import linalg
from .._exact.field import DEFAULT_PRIME, SECOND_PRIME
from .._m2.backend import check_timeout
from .._models.coordinates import check_one_layer
from .._results import ResultMixin
from .system import polynomial_text

__all__ = ["BoundaryED", "boundary_ed_degree", "general_cubic_ed_degree", "boundary_polynomial"]


def general_cubic_ed_degree(n: int) -> int:
    """The ED degree of a general cubic cone in ``C^n`` (a general cubic hypersurface of ``P^(n-1)``)."""
    return 3 * (2 ** (n - 1) - 1)


@dataclass(frozen=True)
class BoundaryED(ResultMixin):
    """The ED degree of a decision boundary ``{<r, f(X)> = 0}`` of one layer, with its certificate."""

    architecture: Architecture
    ed_degree: int
    general_cubic: int
    unknowns: int  # t d
    counts: tuple[tuple[int, int], ...]  # (prime, solutions)
    seed: int
    seconds: float

    @property
    def certificate(self) -> str:
        runs = ", ".join(f"{n} over GF({p})" for p, n in self.counts)
        return (f"probabilistic: the Lagrange conditions have {runs} solutions (msolve; random data point per "
                "prime, weights and readout from the seed)")

    def to_dict(self) -> dict[str, Any]:
        from .._provenance import provenance

        return {"architecture": self.architecture.to_dict(), "ed_degree": self.ed_degree,
                "general_cubic": self.general_cubic, "unknowns": self.unknowns,
                "counts": [list(c) for c in self.counts], "certificate": self.certificate, "seed": self.seed,
                "seconds": round(self.seconds, 3), "provenance": provenance()}

    def __str__(self) -> str:
        return (f"ED degree of a decision boundary of {self.architecture.describe()}: {self.ed_degree} (a general "
                f"cubic in {self.unknowns} unknowns: {self.general_cubic})\n  certificate      {self.certificate}")


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


def boundary_ed_degree(arch: Architecture, *, seed: int = 0, timeout: float = 300.0,
                       backend: str = "auto") -> BoundaryED:
    """The ED degree of a random decision boundary of the one-layer ``arch`` (see the module docstring).

    >>> from ag_attention import Architecture
    >>> r = boundary_ed_degree(Architecture.single_layer(2, 1, None, tokens=2))
    >>> r.ed_degree, r.general_cubic
    (12, 21)
    """
    from .._algebra.msolve import count_solutions

    arch = check_one_layer(arch, what="boundary_ed_degree")
    if arch.heads != 1 or arch.skip or arch.normalized:
        raise InvalidArgumentError("boundary_ed_degree: one plain lightning layer (one head, no skip connection, "
                                   "no softmax)")
    timeout = check_timeout(timeout)
    d, e = arch.widths
    t = arch.tokens
    a = min(arch.ranks[0], d)
    rng = random.Random(seed)
    Q = [[rng.randint(-5, 5) for _ in range(a)] for _ in range(d)]
    K = [[rng.randint(-5, 5) for _ in range(d)] for _ in range(a)]
    A = [[sum(Q[k][c] * K[c][l] for c in range(a)) for l in range(d)] for k in range(d)]
    V = [[rng.randint(-5, 5) for _ in range(d)] for _ in range(e)]
    r = [[rng.randint(-5, 5) for _ in range(e)] for _ in range(t)]
    n = t * d
    names = [f"x{i}_{k}" for i in range(1, t + 1) for k in range(1, d + 1)] + ["lam"]
    t0 = time.perf_counter()
    counts = []
    for prime, offset in ((DEFAULT_PRIME, 0), (SECOND_PRIME, 1)):
        ring = linalg.modular_polynomial_ring(names, prime, "degrevlex")
        F = boundary_polynomial(arch, A, V, r, ring)
        if F.is_zero():
            raise ComputationError(f"the readout of {arch.describe()} vanishes identically (seed {seed}): "
                                   "use another seed", seed=seed)
        urng = random.Random(seed * 1000 + 17 + offset)
        g = ring.gens()
        lam = g[-1]
        eqs = [g[k] - ring.constant(urng.randrange(prime)) - lam * F.derivative(names[k]) for k in range(n)] + [F]
        texts = [polynomial_text(f, names) for f in eqs]
        sol = count_solutions(names, texts, prime, timeout=timeout,
                              label=f"ED degree of a decision boundary of {arch.describe()} mod {prime}",
                              backend=backend)
        if sol.count is None:
            raise ComputationError(f"the Lagrange conditions of the boundary of {arch.describe()} are not "
                                   "zero-dimensional (a degenerate boundary: use another seed)", seed=seed)
        counts.append((prime, sol.count))
    if counts[0][1] != counts[1][1]:
        raise ComputationError(f"the counts disagree: {counts[0][1]} and {counts[1][1]}: rerun with another seed",
                               seed=seed)
    return BoundaryED(arch, counts[0][1], general_cubic_ed_degree(n), n, tuple(counts), seed,
                      time.perf_counter() - t0)
