"""The implicit route of :func:`~.ed.ed_degree`: Macaulay2's closure ideal over GF(p) and its Lagrange conditions,
counted by msolve (:func:`implicit_count`), also for one token (the full coordinates of ``t = 1``)."""

from __future__ import annotations

import math
import random
import time
from fractions import Fraction
from typing import Any

import numpy as np

from .._algebra import count_solutions, msolve_version
from .._architecture import Architecture
from .._errors import AgAttentionError, ComputationError, InvalidArgumentError
from .._m2 import Where, get_backend, run_json
from .._models import check_one_layer
from .metrics import METRICS, Space, metric
from .system import check_layer

__all__ = ["M2_PRIME", "implicit_count"]

#: the prime field of the Macaulay2 route
M2_PRIME = 32003


def _layer(arch: Architecture) -> tuple[int, int, int, int]:
    """``(d, d', a, t)`` of one plain layer, ``t = 1`` allowed (the implicit route, full coordinates)."""
    if isinstance(arch, Architecture) and arch.tokens == 1:
        one = check_one_layer(arch, what="ed_degree")
        return one.widths[0], one.widths[1], min(one.ranks[0], one.widths[0]), 1
    return check_layer(arch)


def _one_token_form(kind: str, d: int, e: int, seed: int) -> tuple[np.ndarray, str]:
    """The form of ``t = 1`` on the full coordinates (the coefficients of the cubics ``(x^T A x) V_m x``)."""
    entry = METRICS[kind]
    if entry.data:
        plain = " and ".join(name for name, other in METRICS.items() if not other.data)
        raise InvalidArgumentError(
            f"metric={kind!r} with tokens=1: only {plain} are computed for one "
            f"token (the {kind} form of t = 1 is not implemented)"
        )
    space = Space(e * math.comb(d + 2, 3), seed, coordinates="the full coordinates of t = 1", monomial="cubic monomial")
    return entry.build(space, random.Random(seed))


def implicit_count(
    arch: Architecture, kind: str, samples: int | None, seed: int, timeout: float, backend: Any, cache: bool
) -> tuple[int, str, dict[str, int]]:
    """The implicit route: Macaulay2's closure ideal over GF(p) and its Lagrange conditions (``edSystem``),
    counted by msolve; also the closure's dimension, codimension and degree."""

    d, e, a, t = _layer(arch)
    if t == 1:
        G, description = _one_token_form(kind, d, e, seed)
    else:
        G, description = metric(kind, d, e, t, seed=seed, samples=samples, causal=arch.causal)
    n = G.shape[0]
    p = M2_PRIME
    rng = random.Random(seed + 7919)

    def mod(v: Any) -> int:
        q = Fraction(v)
        return q.numerator % p * pow(q.denominator % p, -1, p) % p

    Q = "matrix(kk, {" + ", ".join("{" + ", ".join(str(mod(G[i, j])) for j in range(n)) + "}" for i in range(n)) + "})"
    u = "matrix(kk, {" + ", ".join("{" + str(rng.randrange(p)) + "}" for _ in range(n)) + "})"
    rank = "null" if a >= d else str(a)
    body = (
        f"kk = ZZ/{p};\nsetRandomSeed {int(seed)};\n"
        f"P = lightningParametrization({d}, {e}, AttentionRank => {rank}, CoefficientRing => kk"
        + (', Coordinates => "full", Tokens => 1' if t == 1 else "")
        + ");\n"
        "I = standardGrading closureIdeal P;\n"
        f"Q = {Q};\nu = {u};\n"
        # codimension 0: the closure is the whole space, the only critical point is u itself
        "(xs, es) = if codim I == 0 then ({}, {}) else (E = edSystem(I, Q, u); "
        "(apply(gens ring E, toString), apply(flatten entries gens E, toString)));\n"
        'result = hashTable {"unknowns" => xs, '
        '"equations" => es, "closure_dimension" => dim I, '
        '"closure_codimension" => codim I, "closure_degree" => degree I};\n'
    )
    schema = {
        "unknowns": [str],
        "equations": [str],
        "closure_dimension": Where(int, lambda v: v >= 0, "a dimension"),
        "closure_codimension": Where(int, lambda v: v >= 0, "a codimension"),
        "closure_degree": Where(int, lambda v: v >= 1, "a degree"),
    }
    t0 = time.perf_counter()
    job = run_json(
        body,
        schema=schema,
        backend=backend,
        timeout=timeout,
        label=f"Lagrange conditions of {arch.describe()} ({kind})",
        cache=cache,
    )
    closure = {k: int(job.payload[f"closure_{k}"]) for k in ("dimension", "codimension", "degree")}
    if closure["codimension"] == 0:
        return 1, description, closure
    left = max(1.0, timeout - (time.perf_counter() - t0))
    sol = count_solutions(
        job.payload["unknowns"],
        job.payload["equations"],
        p,
        timeout=left,
        label=f"ED count of {arch.describe()} ({kind}) on the implicit side",
        backend="auto",
    )
    if sol.count is None:
        raise ComputationError(
            f"the Lagrange conditions of {arch.describe()} ({kind}) are not zero-dimensional "
            "(unlucky data: rerun with another seed)",
            seed=seed,
        )
    return sol.count, description, closure


def msolve_version_or_none() -> str | None:
    """msolve's version (cached after the first query), or None where it cannot be asked."""
    try:
        return msolve_version()
    except AgAttentionError:
        return None


def m2_version_or_none(backend: Any) -> str | None:
    """Macaulay2's version on ``backend`` (cached), or None where it cannot be asked."""
    try:
        return get_backend(backend).version()
    except AgAttentionError:
        return None
