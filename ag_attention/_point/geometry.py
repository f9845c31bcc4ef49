"""Geometry at a given point: the local rank of the parametrization at a network's own weights.

The differential ``d phi_theta`` of ``parameters -> function`` at the
network's weights ``theta`` (exact rationals, :class:`~ag_attention._point.weights.Network`):

* a **lower bound** on its rank: the rank over GF(p) of the Jacobian of
  ``theta -> outputs`` on random inputs, at the reduction of ``theta`` mod p
  (every denominator invertible mod p).  The Jacobian is a polynomial in
  ``theta`` and the inputs with integer coefficients, so its reduction is the
  Jacobian of the reduction, and a nonzero minor mod p is a nonzero rational
  minor: rank over GF(p) <= rank over QQ on those inputs <= rank of
  ``d phi_theta`` (evaluation at inputs can only lose rank);
* an **upper bound**: ``P - rank`` of the symmetry tangents at ``theta``
  (docs/math/symmetries.md): each is in the kernel of ``d phi_theta`` at every
  ``theta`` (a symmetry leaves ``phi`` unchanged), and their rank over GF(p)
  is at most their rank over QQ;
* for one plain lightning layer (one head, no mask, no skip, ``t >= 2``) the
  **exact rank over QQ**: the reduced coordinates are the whole function, so
  ``d phi_theta`` is the exact matrix of :func:`~ag_attention._exact.onelayer.differential`
  (composed with ``(Q, K) -> Q^T K`` in the QKV parametrization).

The rank is exact when the bounds meet (or by the one-layer matrix); else
the gap is reported: the point has kernel directions that are not symmetry
tangents (a critical point) or the samples were unlucky (a second prime and
more samples are tried first).  Softmax attention is not polynomial: its rank
is float64 with the singular-value gap, never a proof.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import _progress as progress
from .._architecture import Architecture
from .._errors import ComputationError
from .._exact import (
    BLAS_PRIMES,
    DEFAULT_PRIME,
    SECOND_PRIME,
    GFp,
    check_run_memory,
    differential,
    exact_rank,
    linalg,
    sampling_plan,
)
from .._models import symmetry_tangents
from .._network import forward, jacobian, random_inputs, random_seeds
from .._resources import Deadline
from .weights import Network

__all__ = [
    "LocalRank",
    "SymmetryShare",
    "local_rank",
    "exact_one_layer_rank",
    "output_span_at",
    "composition_at_point",
    "PRIMES",
    "MAX_DOUBLINGS",
    "BLAS_FROM_PARAMETERS",
    "primes_for",
    "samples_for",
]

#: primes tried in turn: the first that divides no denominator of the point is used, the next confirms
PRIMES = (DEFAULT_PRIME, SECOND_PRIME, 2147483587, 2147483579, 2147483563, 2147483549)
#: from this many parameters on, primes below 2^21: the rank takes the float64 BLAS route
#: (:func:`ag_attention._exact.linalg.rank`), 6 times faster than FLINT at 6,144 parameters (bench/point.py);
#: a smaller prime only weakens the chance that the proven lower bound is sharp, and a lower bound below the
#: upper one is re-checked with a second prime anyway
BLAS_FROM_PARAMETERS = 1024
#: at most this many doublings of the samples while the lower bound grows and stays below the upper one
MAX_DOUBLINGS = 3


def primes_for(arch: Architecture) -> tuple[int, ...]:
    """The primes :func:`local_rank` tries for this architecture (by size: FLINT's word-size primes or the BLAS
    route's primes below 2^21)."""
    return BLAS_PRIMES if arch.parameter_count >= BLAS_FROM_PARAMETERS else PRIMES


def samples_for(arch: Architecture, upper: int, samples: int | None = None) -> tuple[int, int]:
    """``(N, k)``: input sequences and output combinations of each for a rank up to ``upper``
    (:func:`ag_attention._exact.sampling.sampling_plan`: ``N`` sequences add enough new directions, ``N k``
    rows exceed ``upper`` by 10%); ``samples`` given: that ``N``, with all its outputs."""
    if samples is not None:
        return samples, arch.output_size
    return sampling_plan(arch, upper)


@dataclass(frozen=True)
class SymmetryShare:
    """One family of symmetry tangents at the point: its generators and the rank it adds."""

    name: str
    kind: str  # "attention" (GL_a), "interlayer" (GL_d between layers), "scaling"
    generators: int
    rank: int  # the rank of this family's tangents alone, over GF(p)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "generators": self.generators, "rank": self.rank}


@dataclass(frozen=True)
class LocalRank:
    """Bounds on the rank of ``d phi_theta`` at the point, and how they were obtained."""

    lower: int
    upper: int
    parameters: int
    method: str  # how ``lower`` was computed
    primes: tuple[int, ...]
    samples: int
    symmetry_rank: int  # rank of all symmetry tangents at the point (GF(p): a lower bound over QQ)
    families: tuple[SymmetryShare, ...] = ()
    seconds: float = 0.0
    exact_qq: bool = False  # ``lower`` is the exact rank over QQ of the whole differential (one layer)
    notes: tuple[str, ...] = field(default=())
    #: verified kernel vectors over QQ (:class:`~ag_attention._point.certificate.KernelCertificate`) when they
    #: gave the upper bound
    certificate: Any = None

    @property
    def exact(self) -> bool:
        """The rank is proven: the bounds meet (or it was computed over QQ on the whole function)."""
        return self.exact_qq or self.lower == self.upper

    @property
    def value(self) -> int:
        """The rank when exact, else the proven lower bound."""
        return self.lower

    @property
    def kernel(self) -> tuple[int, int]:
        """``(min, max)`` of ``dim ker d phi_theta`` (the tangent space of the fiber through the point)."""
        return self.parameters - self.upper, self.parameters - self.lower

    def to_dict(self) -> dict[str, Any]:
        return {
            "lower": self.lower,
            "upper": self.upper,
            "exact": self.exact,
            "exact_over_QQ": self.exact_qq,
            "method": self.method,
            "primes": list(self.primes),
            "samples": self.samples,
            "symmetry_rank": self.symmetry_rank,
            "families": [f.to_dict() for f in self.families],
            "seconds": round(self.seconds, 3),
            "notes": list(self.notes),
            "kernel_certificate": None if self.certificate is None else self.certificate.to_dict(),
        }


def _reduction(net: Network, avoid: tuple[int, ...] = ()) -> tuple[int, np.ndarray]:
    """The first prime of :func:`primes_for` (not in ``avoid``) dividing no denominator, and the reduced point."""
    for p in primes_for(net.architecture):
        if p in avoid:
            continue
        theta = net.theta_mod(p)
        if theta is not None:
            return p, theta
    raise ComputationError(
        "every prime of the list divides a denominator of the weights: give them with "
        "denominator= (rounded), or as other rationals"
    )


def _rank_at(
    arch: Architecture,
    F: GFp,
    theta: np.ndarray,
    samples: int,
    k: int,
    seed: int,
    progress: Callable[[int], None] | None = None,
) -> int:
    """The rank over GF(p) of ``k`` random combinations of each sample's outputs' gradients (all when ``k`` is
    the output size): a lower bound on the rank of ``d phi_theta``, as the full Jacobian's is."""
    check_run_memory(arch, samples, k, F.p)
    rng = np.random.default_rng([seed, F.p, samples])
    X = random_inputs(arch, F, rng, samples)
    seeds = random_seeds(arch, F, rng, samples, k)
    return linalg.rank(jacobian(arch, F, theta, X, seeds), F.p, progress)


def _families(arch: Architecture, F: GFp, theta: np.ndarray) -> tuple[int, tuple[SymmetryShare, ...]]:
    T, families = symmetry_tangents(arch, theta, F)
    total = linalg.rank(T, F.p) if T.shape[0] else 0
    shares = []
    for fam in families:
        block = T[fam.rows]
        shares.append(
            SymmetryShare(fam.name, fam.kind, block.shape[0], linalg.rank(block, F.p) if block.shape[0] else 0)
        )
    return total, tuple(shares)


def exact_one_layer_rank(net: Network) -> int | None:
    """The exact rank over QQ of ``d phi_theta`` for one plain lightning layer (None for other networks).

    In reduced coordinates ``phi`` is the array of quadrics ``(Az)_k (Vz)_m``:
    its differential in ``(A, V)`` is exact (:func:`~ag_attention._exact.onelayer.differential`);
    in the QKV parametrization it is composed with the differential of
    ``(Q, K) -> Q^T K``, ``(dQ, dK) -> dQ^T K + Q^T dK``.
    """
    arch = net.architecture
    if not (
        arch.depth == 1
        and arch.heads == 1
        and not arch.skip
        and not arch.causal
        and not arch.normalized
        and arch.tokens >= 2
        and arch.is_linear_attention
    ):
        return None

    w = net.weights[0][0]
    V = w["V"]
    if "A" in w:
        A = w["A"]
        D = differential(A.tolist(), V.tolist())
        return int(exact_rank(D))
    Q, K = w["Q"], w["K"]
    A = Q.T.dot(K)
    D = np.asarray(differential(A.tolist(), V.tolist()), dtype=object)  # columns: A entries (row-major), then V
    d = A.shape[0]
    a = Q.shape[0]
    # dA = dQ^T K + Q^T dK: column (i, j) of dA from dQ[c, i] (times K[c, j]) and dK[c, j] (times Q[c, i])
    n_a = d * d
    cols = []
    for c in range(a):  # dQ[c, i]: dA[i, j] += K[c, j]
        for i in range(d):
            cols.append(sum((D[:, i * d + j] * K[c, j] for j in range(d)), np.zeros(D.shape[0], dtype=object)))
    for c in range(a):  # dK[c, j]: dA[i, j] += Q[c, i]
        for j in range(d):
            cols.append(sum((D[:, i * d + j] * Q[c, i] for i in range(d)), np.zeros(D.shape[0], dtype=object)))
    M = np.column_stack(cols + [D[:, n_a + k] for k in range(D.shape[1] - n_a)])
    return int(exact_rank(M))


def _rank_bar(desc: str, total: int, deadline: Deadline | None) -> Any:
    """A bar over the columns of one rank, and the callback that moves it (and checks the deadline)."""
    b = progress.bar(total=total, desc=desc, unit="col")

    def moved(k: int) -> None:
        b.update(k)
        if deadline is not None:
            deadline.check(desc)

    return b, moved


def local_rank(
    net: Network,
    *,
    seed: int = 0,
    samples: int | None = None,
    dimension_bound: int | None = None,
    deadline: Deadline | None = None,
) -> LocalRank:
    """Proven bounds on the rank of the differential at the network's weights (see the module docstring).

    ``samples``: input sequences for the Jacobian (default :func:`samples_for`:
    about ``1.05`` times the upper bound in rows, doubled at most
    :data:`MAX_DOUBLINGS` times while the lower bound grows below the upper
    one).  ``dimension_bound``: a proven upper bound on ``dim M``
    (:attr:`ag_attention.DimensionResult.upper_bound`), which bounds the rank
    at every point (the generic rank is the largest).  ``deadline``: checked
    between steps and inside the rank (raises
    :class:`~ag_attention.ComputationTimeoutError`).  A progress bar shows
    after 2 s, and one inside each large rank.
    """
    arch = net.architecture
    if arch.normalized:
        raise ComputationError(
            "softmax attention has no exact local rank: use the float64 rank (PointGeometry.numerical)"
        )
    t0 = time.perf_counter()
    P = arch.parameter_count
    p, theta = _reduction(net)
    F = GFp(p)

    def ranked(field: GFp, point: np.ndarray, n: int, s: int, what: str) -> int:
        if deadline is not None:
            deadline.check(what)
        rows = n * k
        b, moved = _rank_bar(f"{what}: rank of {rows:,} x {P:,} over GF({field.p})", min(rows, P), deadline)
        with b:
            return _rank_at(arch, field, point, n, k, s, moved)

    with progress.bar(total=3, desc=f"local rank of {arch.describe()}", unit="step") as b:
        steps = progress.Steps(b)
        steps.begin("symmetry tangents at the point")
        symmetry_rank, shares = _families(arch, F, theta)
        upper = P - symmetry_rank
        notes = []
        if dimension_bound is not None and dimension_bound < upper:
            upper = dimension_bound
            notes.append(f"upper bound {upper}: dim M's proven upper bound (the rank is at most the generic rank)")
        steps.end()
        n, k = samples_for(arch, upper, samples)
        steps.begin(f"rank of the Jacobian on {n:,} samples over GF({p})")
        lower = ranked(F, theta, n, seed, "local rank")
        steps.end()
        primes = [p]
        doublings = 0
        while lower < upper and samples is None and doublings < MAX_DOUBLINGS:
            steps.add(1)
            n *= 2
            doublings += 1
            steps.begin(f"rank on {n:,} samples")
            more = ranked(F, theta, n, seed, f"local rank, {n:,} samples")
            steps.end()
            if more <= lower:
                break
            lower = more
        if lower < upper:  # confirm with a second prime (and its own inputs)
            q, theta_q = _reduction(net, avoid=(p,))
            steps.begin(f"rank over GF({q})")
            lower = max(lower, ranked(GFp(q), theta_q, n, seed + 1, "confirmation"))
            steps.end()
            primes.append(q)
        steps.begin("exact rank over QQ (one layer)")
        exact = exact_one_layer_rank(net) if lower < upper else None
        steps.end()
    bounds = _Bounds(lower, upper, exact, tuple(primes), n, k, symmetry_rank, shares, tuple(notes))
    return _local_result(arch, bounds, seed, time.perf_counter() - t0)


@dataclass(frozen=True)
class _Bounds:
    """What :func:`local_rank` found: the proven bounds, the exact one-layer rank (or None), how."""

    lower: int
    upper: int
    exact: int | None
    primes: tuple[int, ...]
    samples: int
    combinations: int
    symmetry_rank: int
    shares: tuple[SymmetryShare, ...]
    notes: tuple[str, ...]


def _local_result(arch: Architecture, b: _Bounds, seed: int, seconds: float) -> LocalRank:
    """The :class:`LocalRank` of the bounds found (exact when one layer's rank over QQ was computed), every
    bound checked against the others and the method and notes said."""
    P, p, notes = arch.parameter_count, b.primes[0], list(b.notes)
    if b.exact is not None:
        if not b.lower <= b.exact <= b.upper:  # pragma: no cover - each bound is proven
            raise ComputationError(
                f"the exact rank {b.exact} lies outside the proven bounds [{b.lower}, {b.upper}] (bug)",
                prime=p,
                seed=seed,
            )
        notes.append(
            f"the one-layer differential in reduced coordinates has rank {b.exact} over QQ (the whole function: exact)"
        )
        method = "exact rank over QQ of the differential in reduced coordinates"
        return LocalRank(
            b.exact, b.exact, P, method, b.primes, b.samples, b.symmetry_rank, b.shares, seconds, True, tuple(notes)
        )
    if b.lower > b.upper:  # pragma: no cover - a rank above a proven bound is a bug
        raise ComputationError(f"the rank {b.lower} exceeds the proven upper bound {b.upper} (bug)", prime=p, seed=seed)
    if b.lower < b.upper:
        notes.append(
            f"the lower bound {b.lower} (primes {', '.join(map(str, b.primes))}, up to {b.samples:,} samples) stays "
            f"below the upper bound {b.upper}: kernel directions beyond the symmetries, or too few samples"
        )
    k = b.combinations
    combos = "" if k >= arch.output_size else f", {k} random combinations of each one's {arch.output_size} outputs"
    method = f"rank over GF({p}) of the Jacobian on {b.samples:,} random input sequences{combos}"
    if arch.positions is not None:
        method += (
            ", the rotations at a random point of the torus of the frequencies' rational relations (a lower bound at "
            "the true frequencies: docs/math/rotary.md, rotary-exact)"
        )
    return LocalRank(
        b.lower, b.upper, P, method, b.primes, b.samples, b.symmetry_rank, b.shares, seconds, False, tuple(notes)
    )


def output_span_at(net: Network, seed: int = 0) -> int:
    """A proven lower bound on ``dim span{f(X)_i}`` over all inputs, at the network's own weights: the rank over
    GF(p) of its outputs on random inputs (a rank over GF(p) of the reduction is at most the rank over QQ)."""

    arch = net.architecture
    p, theta = _reduction(net)
    F = GFp(p)
    d = arch.widths[-1]
    rng = np.random.default_rng([seed, 17])
    X = random_inputs(arch, F, rng, d // arch.tokens + 3)
    return linalg.rank(forward(arch, F, theta, X).reshape(-1, d), p)


def composition_at_point(net: Network, layer_upper: list[int], spans: list[int]) -> tuple[int, str] | None:
    """An upper bound on the local rank of a deep network from its layers' own local ranks (None: one layer).

    docs/math/point.md (point-composition): ``phi = f_L o ... o f_1`` and
    ``d phi_theta`` factors through the images of the layers' own
    differentials (of ranks at most ``layer_upper``), then the differential
    of the composition, which kills ``(E f_i, -f_{i+1} o E)`` for ``E`` in
    ``gl_{d_i}``; those directions are independent (going left to right) at
    every cut whose layer's outputs span ``C^{d_i}`` (``spans[i] >= d_i``, a
    proven lower bound).  So the rank is at most ``sum r_i - sum d_i^2`` over
    those cuts (with skip connections no ``GL`` acts: no cut subtracts).
    """
    arch = net.architecture
    if arch.depth < 2:
        return None
    total = sum(layer_upper)
    parts = [f"layer {i + 1}: {r}" for i, r in enumerate(layer_upper)]
    for i in range(arch.depth - 1):
        d = arch.widths[i + 1]
        if not arch.skip and spans[i] >= d:
            total -= d * d
            parts.append(f"- GL_{d} after layer {i + 1} ({d * d}; its outputs span C^{d})")
        elif not arch.skip:
            parts.append(f"(no GL_{d} after layer {i + 1}: its outputs span only >= {spans[i]} dimensions)")
    return total, " ".join(parts)
