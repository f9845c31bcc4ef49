"""Reproduce Theorem 3.4 (and Thm. 3.2, Cor. 3.3, Lemma A.3, Cor. A.1, Cor. A.6).

One lightning layer ``(d, d', a)``.  Two kinds of evidence, both exact:

*Macaulay2* (sizes where the closure is computable): the ideal of the
Zariski closure, its dimension; the base locus (Cor. A.1); the singular
locus, decided orbit by orbit: the group ``GL_d x GL_d x GL_{d'}`` acts on the
closure with finitely many orbits (the pairs ``(A, V)`` are representations
of an A_3 quiver), the singular locus and the closure of the rank-one image
are unions of orbits, so they are equal iff every orbit representative is
singular (exact Jacobian rank of the implicit equations below the
codimension) exactly when it satisfies the equations of the rank-one
closure; for ``(2, 1)`` also the literal ``radical singularLocus == ...``;
fibers decomposed into minimal primes (Thm. 3.2).

*Parametrization only* (every size, up to ``d = 8``): exact certificates of
:mod:`ag_attention.exact.onelayer` at every orbit representative and at
random samples of each stratum; the differential's rank drop (Lemma A.3);
the conjugate construction of Cor. A.6; dimensions by the GF(p) engine.

Predictions form a :class:`Theory`, so a wrong one (say "singular when
rank A <= 1") makes the checks fail and name the counterexample.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from ..architecture import Architecture
from ..errors import AgAttentionError, ComputationError, M2Error, M2NotFoundError
from ..exact.dimension import dimension as exact_dimension
from ..exact.onelayer import certify, differential, exact_rank, fiber, rank_mod_p, reduced_point
from ..models.formulas import cor33
from ..models.orbits import Orbit, orbit_representatives
from ..models.parametrization import quadratic_monomials
from .equations34 import EQUATION_GRID, FULL_EQUATION_GRID, QUICK_EQUATION_GRID, equation_checks
from .report import Check, Report, Table

__all__ = [
    "Size",
    "Features",
    "Theory",
    "THEOREM",
    "M2_GRID",
    "M2_CANDIDATES",
    "DEFAULT_MAX_M2_SIZE",
    "Options",
    "POINT_GRID",
    "QUICK_M2_GRID",
    "QUICK_POINT_GRID",
    "m2_result_schema",
    "raise_for_m2_errors",
    "reproduce_theorem_34",
]


# ------------------------------------------------------------------ sizes
@dataclass(frozen=True)
class Size:
    d: int
    d_out: int
    a: int

    @property
    def free(self) -> bool:
        return self.a >= self.d

    @property
    def in_hypotheses(self) -> bool:
        """Theorem 3.4's hypotheses: d' > 1 or a > 1 (and A free for its proof)."""
        return self.d_out > 1 or self.a > 1

    @property
    def rank_bounded(self) -> bool:
        return 2 <= self.a < self.d

    @property
    def coordinates(self) -> int:
        return self.d * self.d_out * self.d * (self.d + 1) // 2

    @property
    def dim(self) -> int:
        """Cor. 3.3 (MATH.md), as a number (whether or not its hypotheses hold)."""
        return cor33(self.d, self.d_out, self.a)

    def __str__(self) -> str:
        bound = "A free" if self.free else f"a={self.a}"
        return f"d={self.d}, d'={self.d_out}, {bound}"


def _sizes(spec: Iterable[tuple[int, int, int]]) -> tuple[Size, ...]:
    return tuple(Size(*s) for s in spec)


#: candidates for the Macaulay2 items, smallest first; ``--max-m2-size N`` runs those with at most
#: N reduced coordinates (the last two, 36 coordinates, do not finish in 300 s here)
M2_CANDIDATES = _sizes(
    [(2, 1, 1), (2, 1, 2), (2, 2, 1), (2, 2, 2), (2, 3, 1), (2, 3, 2), (3, 1, 1), (3, 1, 2), (3, 1, 3),
     (2, 4, 1), (2, 4, 2), (3, 2, 1), (3, 2, 2), (3, 2, 3)]
)
DEFAULT_MAX_M2_SIZE = 24
#: the default: every candidate Macaulay2 finishes (measured: (3,2,1) in about 140 s, the others in
#: at most 40 s each), i.e. up to 24 coordinates and (3, 2, 1) with 36
M2_GRID = tuple(s for s in M2_CANDIDATES if s.coordinates <= DEFAULT_MAX_M2_SIZE) + _sizes([(3, 2, 1)])
POINT_GRID = _sizes(
    [(d, e, d) for d in range(2, 9) for e in (1, 2, 3)]
    + [(3, 2, 2), (4, 1, 3), (4, 2, 2), (4, 2, 3), (5, 2, 3), (6, 3, 4), (8, 2, 5)]
    + [(2, 1, 1), (3, 1, 1), (5, 1, 1), (8, 1, 1), (4, 2, 1), (8, 3, 1)]
)
QUICK_M2_GRID = _sizes([(2, 1, 1), (2, 1, 2), (2, 2, 2), (3, 1, 1)])
QUICK_POINT_GRID = _sizes([(2, 1, 2), (3, 2, 3), (4, 1, 4), (3, 2, 2), (4, 1, 3), (3, 1, 1), (2, 1, 1)])


# ------------------------------------------------------------------ predictions
@dataclass(frozen=True)
class Features:
    """What a prediction may look at: ranks of the weights, and whether the pair is critical."""

    rank_a: int
    rank_v: int
    critical: bool  # A = u v^T, V = w v^T (same v), both nonzero
    zero: bool  # A = 0 or V = 0 (the point 0)


def features(A: Any, V: Any) -> Features:
    ra = exact_rank(np.asarray(A, dtype=object))
    rv = exact_rank(np.asarray(V, dtype=object))
    critical = False
    if ra == 1 and rv == 1:
        critical = exact_rank(np.vstack([np.asarray(A, dtype=object), np.asarray(V, dtype=object)])) == 1
    return Features(ra, rv, critical, ra == 0 or rv == 0)


def _theorem_rule(size: Size, f: Features) -> tuple[bool, str]:
    if f.zero:
        return True, "Theorem 3.4 (the vertex: rank A <= 1 and rank V <= 1)"
    if not size.in_hypotheses:
        # d' = 1, a = 1: excluded by the theorem; the computed rule (certified by Macaulay2
        # for d = 2, 3): the closure is the cone over P^(d-1) x {symmetric rank <= 2}
        return f.critical and size.d >= 3, "found here (d' = 1, a = 1: singular exactly on the critical set, d >= 3)"
    if size.rank_bounded and f.rank_a < size.a:
        return True, "found here (rank bound: the domain is singular where rank A < a)"
    return f.rank_a <= 1 and f.rank_v <= 1, "Theorem 3.4 (singular iff rank A <= 1 and rank V <= 1)"


def _fiber_components(size: Size) -> dict[str, list[tuple[int, int]]]:
    """Thm. 3.2 as (dimension, degree) of the minimal primes of the fiber ideal."""
    d, e = size.d, size.d_out
    return {
        "generic": [(1, 2)],  # the rescaling curve {(cA, V/c)}
        "rank-one pair": [(1, 2), (1, 2)],  # pair and swap
        "critical": [(1, 2)],  # pair = swap
        "zero": sorted([(d * e, 1), (d * d, 1)]),  # A' = 0 or V' = 0
    }


def _fiber_counts(size: Size) -> dict[str, int]:
    """Thm. 3.2 as numbers of preimages up to rescaling."""
    return {"generic": 1, "rank A = 1": 1 if min(size.d, size.d_out) >= 2 else 2, "rank-one pair": 2, "critical": 1}


def _dimension(size: Size) -> int:
    return size.dim  # Cor. 3.3


def _rank_drop(size: Size) -> int:
    return size.d - 1  # Lemma A.3


@dataclass(frozen=True)
class Theory:
    """What the paper predicts, one field per kind of check.

    Where the computation shows the statement must be refined (rank bound,
    d' = 1 and a = 1) the singularity rule says so in its second return value.
    Tests replace a field by a wrong prediction to show that the corresponding
    check fails and names the counterexample.
    """

    name: str = "Theorem 3.4"
    singular: Callable[[Size, Features], tuple[bool, str]] = _theorem_rule
    dimension: Callable[[Size], int] = _dimension
    rank_drop: Callable[[Size], int] = _rank_drop
    base_locus: str = "A or V"  # Cor. A.1: phi = 0 iff A = 0 or V = 0; "A": a wrong one
    fiber_components: Callable[[Size], dict[str, list[tuple[int, int]]]] = _fiber_components
    fiber_counts: Callable[[Size], dict[str, int]] = _fiber_counts
    conjugate_real_preimage: bool = False  # Cor. A.6


#: The theorem's statements, refined where the computation shows they must be.
THEOREM = Theory()


def stated_rule(f: Features) -> bool:
    """Theorem 3.4 exactly as stated: singular iff rank A <= 1 and rank V <= 1."""
    return f.rank_a <= 1 and f.rank_v <= 1


# ------------------------------------------------------------------ samples
def _nonzero(rng: np.random.Generator, *shape: int) -> np.ndarray:
    while True:
        x = rng.integers(-9, 10, size=shape)
        if np.any(x):
            return x


def _full_rank(rng: np.random.Generator, rows: int, cols: int, rank: int) -> np.ndarray:
    while True:
        M = _nonzero(rng, rows, rank) @ _nonzero(rng, rank, cols)
        if exact_rank(M.astype(object)) == rank:
            return M


def strata_samples(size: Size, rng: np.random.Generator, per_stratum: int = 2) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """Random integer weights in each stratum of Theorem 3.4 (and of the rank bound)."""
    d, e, a = size.d, size.d_out, min(size.a, size.d)
    out = []
    for _ in range(per_stratum):
        u, v, z = (_nonzero(rng, d) for _ in range(3))
        while exact_rank(np.array([v, z], dtype=object)) < 2 and d >= 2:
            z = _nonzero(rng, d)
        w = _nonzero(rng, e)
        out.append(("generic", _full_rank(rng, d, d, a), _full_rank(rng, e, d, min(e, d))))
        if a >= 1:
            out.append(("rank A = 1", np.outer(u, v), _full_rank(rng, e, d, min(e, d))))
        out.append(("rank V = 1", _full_rank(rng, d, d, a), np.outer(w, z)))
        out.append(("rank-one pair", np.outer(u, v), np.outer(w, z)))
        out.append(("critical (A = u v^T, V = w v^T)", np.outer(u, v), np.outer(w, v)))
        if size.rank_bounded:
            out.append((f"rank A = {a - 1} < a (domain singular)", _full_rank(rng, d, d, a - 1), _full_rank(rng, e, d, min(e, d))))
    return out


# ------------------------------------------------------------------ Macaulay2 part
def _m2_list(values: Sequence[int]) -> str:
    return "{" + ",".join(str(int(v)) for v in values) + "}"


def m2_job_body(size: Size, points: dict[str, Sequence[int]], fibers: dict[str, Sequence[int]], literal: bool) -> str:
    """The Macaulay2 job for one size (integers and fixed names only)."""
    rank = "null" if size.free else str(size.a)
    pts = ",\n  ".join(f'{{"{name}", {_m2_list(x)}}}' for name, x in points.items())
    fbs = ",\n  ".join(f'{{"{name}", {_m2_list(x)}}}' for name, x in fibers.items())
    return f"""
P = lightningParametrization({size.d}, {size.d_out}, AttentionRank => {rank});
t0 = cpuTime();
I = closureIdeal P;
tClosure = cpuTime() - t0;
Z = restrictedClosureIdeal P;
S = ring I;
ev = pt -> map(QQ, S, matrix {{apply(pt, x -> x_QQ)}});
(IA, IV) = weightIdeals P;
t1 = cpuTime();
rB = radical baseLocusIdeal P;
base = rB == intersect(IA, IV);
baseA = rB == IA;
tBase = cpuTime() - t1;
pts = {{
  {pts}
}};
t3 = cpuTime();
evals = apply(pts, p -> hashTable {{
  "name" => p#0,
  "jacobian_rank" => jacobianRankAt(I, p#1),
  "on_closure" => (ev p#1)(gens I) == 0,
  "in_rank_one_closure" => (ev p#1)(gens Z) == 0
}});
tPoints = cpuTime() - t3;
fbs = {{
  {fbs}
}};
t4 = cpuTime();
fiberResults = apply(fbs, p -> hashTable {{"name" => p#0, "components" => fiberComponents(P, p#1)}});
tFibers = cpuTime() - t4;
literal = {"(t2 = cpuTime(); r := radical singularLocusIdeal P == Z; {r, toString(cpuTime() - t2)})" if literal else "null"};
result = hashTable {{
  "dimension" => dim I,
  "codimension" => codim I,
  "degree" => degree standardGrading I,
  "generators" => numgens I,
  "generator_degrees" => apply(flatten entries gens standardGrading I, f -> first degree f),
  "rank_one_dimension" => dim Z,
  "base_locus_ok" => base,
  "base_locus_is_A" => baseA,
  "points" => evals,
  "fibers" => fiberResults,
  "literal" => literal,
  "closure_seconds" => toString tClosure,
  "base_seconds" => toString tBase,
  "points_seconds" => toString tPoints,
  "fibers_seconds" => toString tFibers
}};
"""


def m2_result_schema(points: Iterable[str], fibers: Iterable[str]) -> Any:
    """What :func:`m2_job_body` returns: checked before the result is cached or used."""
    from ..m2.schema import NUMBER_STRING, OneOf, Where

    point_names, fiber_names = set(points), set(fibers)
    return {
        "dimension": int, "codimension": int, "degree": int, "generators": int, "generator_degrees": [int],
        "rank_one_dimension": int, "base_locus_ok": bool, "base_locus_is_A": bool,
        "points": Where(
            [{"name": str, "jacobian_rank": int, "on_closure": bool, "in_rank_one_closure": bool}],
            lambda v: {p["name"] for p in v} == point_names,
            f"one evaluation for each of the {len(point_names)} points sent",
        ),
        "fibers": Where(
            [{"name": str, "components": [(int, int)]}],
            lambda v: {f["name"] for f in v} == fiber_names,
            f"one fiber for each of the {len(fiber_names)} points sent",
        ),
        "literal": OneOf(None, (bool, NUMBER_STRING)),
        "closure_seconds": NUMBER_STRING, "base_seconds": NUMBER_STRING,
        "points_seconds": NUMBER_STRING, "fibers_seconds": NUMBER_STRING,
    }


def raise_for_m2_errors(report: Report) -> None:
    """Raise an :class:`M2Error` if a Macaulay2 item of ``report`` did not finish (timeout, error).

    Those items are failed checks of the report, and the others were still
    computed; the CLI calls this after writing the report, so such a run ends
    with exit status 3 (a Macaulay2 problem), not 1 (a failed check).
    """
    errors = report.meta.get("m2_errors") or []
    if errors:
        first = errors[0]
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise M2Error(
            f"{len(errors)} Macaulay2 item(s) did not finish: {first['size']}: {first['message']}{more}; "
            "the report has the other items"
        )


# ------------------------------------------------------------------ the reproduction
@dataclass
class Options:
    m2_grid: tuple[Size, ...] = M2_GRID
    point_grid: tuple[Size, ...] = POINT_GRID
    seed: int = 0
    per_stratum: int = 2
    backend: str = "auto"
    m2_timeout: float = 900.0
    use_m2: bool = True
    equation_grid: tuple[tuple[int, int, int, int], ...] = EQUATION_GRID
    theory: Theory = THEOREM
    picture: bool = True
    out: Path | None = None


def _check(report: Report, claim: str, size: Any, method: str, expected: Any, observed: Any, passed: bool, t0: float, **details: Any) -> Check:
    return report.add(Check(claim, str(size), method, expected, observed, bool(passed), time.perf_counter() - t0, details))


def _point_checks(report: Report, size: Size, opts: Options, rng: np.random.Generator, stated_mismatch: list[tuple]) -> None:
    """Item 4 (pointwise) and item 5a (critical points) for one size, from the parametrization."""
    dim = exact_dimension(Architecture((size.d, size.d_out), (size.a,), tokens=2), seed=opts.seed)
    m = dim.dimension
    if not dim.certified:  # every verdict below compares with dim M
        _check(report, "dim M certified (needed by the pointwise certificates)", size, "GF(p) rank + symmetry bound",
               "certified", dim.certificate, False, time.perf_counter())
        return
    a = None if size.free else size.a
    # all orbits: a complete decision of the singular locus
    t0 = time.perf_counter()
    rows, bad = [], []
    for orb in orbit_representatives(size.d, size.d_out, size.a):
        f = features(orb.A, orb.V)
        v = certify(orb.A, orb.V, dimension=m, rank_bound=a)
        pred, source = opts.theory.singular(size, f)
        rows.append({"orbit": orb.label, "singular": v.singular, "predicted": pred, "certificate": v.reason})
        if v.singular is None or v.singular != pred:
            bad.append(f"{orb.label}: certified {v.singular} ({v.reason}), predicted {pred} [{source}]")
        if v.singular is not None and v.singular != stated_rule(f) and not f.zero:
            stated_mismatch.append((str(size), orb.label, v.singular, v.reason.split(";")[0].split(",")[0]))
    n_sing = sum(1 for r in rows if r["singular"])
    _check(
        report, "singular locus = the predicted union of orbits (all orbits)", size,
        "exact certificates from the parametrization at one point per GL-orbit",
        "every orbit as predicted", f"{len(rows)} orbits, {n_sing} singular" + (f"; {len(bad)} differ: {bad[0]}" if bad else ""),
        not bad, t0, orbits=rows, counterexamples=bad, dimension=m,
    )
    # random samples of each stratum
    by_stratum: dict[str, list[dict[str, Any]]] = {}
    for name, A, V in strata_samples(size, rng, opts.per_stratum):
        t1 = time.perf_counter()
        f = features(A, V)
        v = certify(A, V, dimension=m, rank_bound=a)
        pred, source = opts.theory.singular(size, f)
        by_stratum.setdefault(name, []).append(
            {"A": A.tolist(), "V": V.tolist(), "singular": v.singular, "predicted": pred, "source": source,
             "certificate": v.reason, "preimages": v.preimages, "differential_rank": v.differential_rank,
             "span": v.span, "seconds": time.perf_counter() - t1}
        )
    for name, samples in by_stratum.items():
        t1 = time.perf_counter() - sum(s["seconds"] for s in samples)
        bad = [s for s in samples if s["singular"] is None or s["singular"] != s["predicted"]]
        observed = ", ".join(sorted({"singular" if s["singular"] else "smooth" if s["singular"] is False else "undecided" for s in samples}))
        expected = ", ".join(sorted({"singular" if s["predicted"] else "smooth" for s in samples}))
        report.add(Check(
            "singular exactly as predicted (random points of the stratum)", f"{size}: {name}",
            "exact certificate: " + samples[0]["certificate"].split(":")[0],
            expected, observed + (f"; counterexample A={bad[0]['A']}, V={bad[0]['V']}" if bad else ""),
            not bad, sum(s["seconds"] for s in samples), {"samples": samples, "prediction": samples[0]["source"]},
        ))
    # Lemma A.3: the differential drops rank exactly on the critical set, by d - 1 (A free)
    if size.free:
        t1 = time.perf_counter()
        u, v, z = _nonzero(rng, size.d), _nonzero(rng, size.d), _nonzero(rng, size.d)
        w = _nonzero(rng, size.d_out)
        while exact_rank(np.array([v, z], dtype=object)) < 2 and size.d >= 2:
            z = _nonzero(rng, size.d)
        crit = exact_rank(differential(np.outer(u, v), np.outer(w, v)))
        other = rank_mod_p(differential(np.outer(u, v), np.outer(w, z)))
        generic = rank_mod_p(differential(_full_rank(rng, size.d, size.d, size.d), _full_rank(rng, size.d_out, size.d, min(size.d, size.d_out))))
        drop = opts.theory.rank_drop(size)
        ok = generic == m and other == m and m - crit == drop
        _check(
            report, "Lemma A.3: rank drop d - 1 exactly at A = u v^T, V = w v^T", size,
            "exact rank over QQ at the critical point; GF(p) rank (lower bound) elsewhere",
            f"drop {drop} at critical, 0 at (u v^T, w z^T) and generic",
            f"drop {m - crit} at critical, {m - other} at (u v^T, w z^T), {m - generic} generic", ok, t1,
            u=u.tolist(), v=v.tolist(), w=w.tolist(), z=z.tolist(),
        )


def conjugate_data(size: Size, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``u, r, s, w`` (integers, ``r, s`` independent) for ``v = r + i s`` (seeded by size)."""
    rng = np.random.default_rng([seed, size.d, size.d_out, size.a, 6])
    u, r, s, w = _nonzero(rng, size.d), _nonzero(rng, size.d), _nonzero(rng, size.d), _nonzero(rng, size.d_out)
    while exact_rank(np.array([r, s], dtype=object)) < 2:
        s = _nonzero(rng, size.d)
    return u, r, s, w


def conjugate_point(u: Sequence[int], r: Sequence[int], s: Sequence[int], w: Sequence[int], scale: int = 1) -> list[int]:
    """phi at A = u v^T, V = w conj(v)^T, v = r + i*scale*s, exactly (Gaussian integers).

    The reduced coordinates are bilinear in (A, V): with A = A_r + i A_i and
    V = V_r + i V_i, phi(A, V) = phi(A_r, V_r) - phi(A_i, V_i) + i (phi(A_r, V_i) + phi(A_i, V_r)),
    each an integer evaluation.
    """
    u, r, s, w = ([int(x) for x in vec] for vec in (u, r, s, w))
    Ar, Ai = np.outer(u, r).astype(object), (scale * np.outer(u, s)).astype(object)
    Vr, Vi = np.outer(w, r).astype(object), (-scale * np.outer(w, s)).astype(object)
    re = [a - b for a, b in zip(reduced_point(Ar, Vr), reduced_point(Ai, Vi))]
    im = [a + b for a, b in zip(reduced_point(Ar, Vi), reduced_point(Ai, Vr))]
    if any(im):  # pragma: no cover - the construction is real
        raise ComputationError("phi(u v^T, w conj(v)^T) is not real")
    return [int(x) for x in re]


def _conjugate_checks(report: Report, size: Size, seed: int, implicit: dict[str, Any] | None, theory: Theory) -> None:
    """Cor. A.6: real points of the closure with no real preimage; their limits are critical values."""
    d, e = size.d, size.d_out
    t0 = time.perf_counter()
    u, r, s, w = conjugate_data(size, seed)
    x = conjugate_point(u, r, s, w)
    # the same point from the real formula u_k w_m ((r.z)^2 + (s.z)^2)
    Q = [[int(r[i]) * int(r[j]) + int(s[i]) * int(s[j]) for j in range(d)] for i in range(d)]
    formula = []
    for k in range(d):
        for m in range(e):
            for i, j in quadratic_monomials(d):
                formula.append(int(u[k]) * int(w[m]) * (Q[i][i] if i == j else 2 * Q[i][j]))
    same = formula == x
    fb = fiber(x, d, e)
    # no real preimage: every preimage has l'_k m'_m = u_k w_m Q; Q = (r.z)^2 + (s.z)^2 is positive
    # semidefinite of rank 2, while a product of two real linear forms has at most one positive eigenvalue
    gram = np.array(Q, dtype=object)
    rank_q = exact_rank(gram)
    minors = [gram[i, i] * gram[j, j] - gram[i, j] ** 2 for i in range(d) for j in range(i + 1, d)]
    definite_plane = rank_q == 2 and any(mnr > 0 for mnr in minors) and all(gram[i, i] >= 0 for i in range(d))
    no_real = fb.real_count == 0 and definite_plane
    real_as_predicted = (not no_real) == theory.conjugate_real_preimage
    # limit Im v -> 0: the critical value phi(u r^T, w r^T), with rank drop d - 1 when A is free
    limit = conjugate_point(u, r, s, w, scale=0)
    crit = reduced_point(np.outer(u, r).astype(object), np.outer(w, r).astype(object))
    drop = size.d * size.d + size.d * size.d_out - 1 - exact_rank(differential(np.outer(u, r), np.outer(w, r)))
    on_closure = None if implicit is None else implicit.get("conjugate", {}).get("on_closure")
    ok = same and real_as_predicted and limit == crit and drop == theory.rank_drop(size) and on_closure is not False
    _check(
        report, "Cor. A.6: phi(u v^T, w conj(v)^T) is a real point of the closure, not in M; Im v -> 0 gives a critical value",
        size, "Gaussian-integer evaluation; fiber by factorization; Gram signature"
        + ("; implicit equations vanish exactly (Macaulay2)" if on_closure is not None else ""),
        f"real, on the closure, {'a' if theory.conjugate_real_preimage else 'no'} real preimage, "
        f"limit critical with drop {theory.rank_drop(size)}",
        f"real={same}, on closure={on_closure if on_closure is not None else 'by construction'}, "
        f"preimages: {fb.count} non-real, Q rank {rank_q} definite on a plane={definite_plane}, "
        f"limit critical={limit == crit}, drop {drop}", ok, t0,
        u=u.tolist(), r=r.tolist(), s=s.tolist(), w=w.tolist(),
    )


def _m2_checks(report: Report, size: Size, opts: Options, rng: np.random.Generator, backend: Any = None) -> dict[str, Any] | None:
    from ..m2.jobs import run_json

    d, e = size.d, size.d_out
    points: dict[str, list[int]] = {}
    orbit_info: dict[str, tuple[Orbit, Features]] = {}
    for orb in orbit_representatives(d, e, size.a):
        if orb.zero:
            continue
        name = f"orbit {orb.label}"
        points[name] = reduced_point(orb.A, orb.V)
        orbit_info[name] = (orb, features(orb.A, orb.V))
    samples = strata_samples(size, rng, 1)
    for name, A, V in samples:
        points[f"sample {name}"] = reduced_point(A.astype(object), V.astype(object))
    # the Cor. A.6 point (the same as in the pointwise check)
    points["conjugate"] = conjugate_point(*conjugate_data(size, opts.seed))
    fibers: dict[str, list[int]] = {}
    if size.free and size.coordinates <= 24:
        uu, vv, ww, zz = _nonzero(rng, d), _nonzero(rng, d), _nonzero(rng, e), _nonzero(rng, d)
        fibers = {
            "generic": reduced_point(_full_rank(rng, d, d, d), _full_rank(rng, e, d, min(e, d))),
            "rank-one pair": reduced_point(np.outer(uu, vv), np.outer(ww, zz)),
            "critical": reduced_point(np.outer(uu, vv), np.outer(ww, vv)),
            "zero": [0] * size.coordinates,
        }
    literal = (d, e) == (2, 1) and size.free
    t0 = time.perf_counter()
    try:
        job = run_json(
            m2_job_body(size, points, fibers, literal), schema=m2_result_schema(points, fibers),
            backend=opts.backend if backend is None else backend, timeout=opts.m2_timeout,
            label=f"Theorem 3.4 checks for {size}",
        )
    except M2NotFoundError:
        raise  # no Macaulay2 at all: one error for the run, not one failure per item
    except M2Error as exc:  # this item only (a timeout, an error): the others still run, the run ends with exit 3
        _check(report, "Macaulay2 checks", size, "Macaulay2", "finished", f"error: {exc}", False, t0)
        report.meta.setdefault("m2_errors", []).append(
            {"size": str(size), "error": type(exc).__name__, "message": str(exc).splitlines()[0]}
        )
        return None
    res = job.payload
    seconds = time.perf_counter() - t0
    evals = {p["name"]: p for p in res["points"]}
    c = res["codimension"]
    method = f"Macaulay2 {job.m2_version} ({job.backend})"

    # 1. dimension: Macaulay2 = exact Jacobian rank = Cor. 3.3
    eng = exact_dimension(Architecture((d, e), (size.a,), tokens=2), seed=opts.seed)
    formula = opts.theory.dimension(size)
    report.add(Check(
        "dim M: Macaulay2 closure = exact Jacobian rank = Cor. 3.3", str(size),
        f"{method}: dim of the closure ideal; GF(p) rank + symmetry bound",
        formula, f"Macaulay2 {res['dimension']}, rank {eng.dimension} ({'exact' if eng.certified else 'lower bound'})",
        res["dimension"] == eng.dimension == formula and eng.certified, float(res["closure_seconds"]),
        {"degree": res["degree"], "generators": res["generators"], "generator_degrees": res["generator_degrees"],
         "formula_applies": size.in_hypotheses},
    ))
    # 2. closedness: no base points
    found = "A or V" if res["base_locus_ok"] else "A" if res["base_locus_is_A"] else "neither"
    report.add(Check(
        "Cor. A.1: phi = 0 only if A = 0 or V = 0 (no base points)", str(size), f"{method}: radical of the base locus ideal",
        f"rad(B) = ideal of {{{opts.theory.base_locus.replace(' or ', ' = 0} cup {')} = 0}}",
        f"rad(B) = ideal of {{{found.replace(' or ', ' = 0} cup {')} = 0}}", found == opts.theory.base_locus,
        float(res["base_seconds"]),
    ))
    # 3. singular locus: orbit by orbit with the implicit equations
    rows, bad, stated = [], [], []
    for name, (orb, f) in orbit_info.items():
        ev = evals[name]
        singular = ev["jacobian_rank"] < c
        pred, source = opts.theory.singular(size, f)
        rows.append({"orbit": orb.label, "jacobian_rank": ev["jacobian_rank"], "codimension": c,
                     "singular": singular, "in_rank_one_closure": ev["in_rank_one_closure"], "predicted": pred})
        if singular != pred:
            bad.append(f"orbit {orb.label}: Jacobian rank {ev['jacobian_rank']} vs codimension {c} "
                       f"({'singular' if singular else 'smooth'}), predicted {'singular' if pred else 'smooth'} [{source}]")
        if singular != ev["in_rank_one_closure"]:
            stated.append(orb.label)
    claim_eq = "rad(Sing) = I(closure of rank-one image)" if not stated else f"Sing differs from the rank-one closure on {stated}"
    extra = ""
    if res["literal"] is not None:
        extra = f"; literal radical(singularLocus) == rank-one closure: {res['literal'][0]} ({float(res['literal'][1]):.2f} s)"
    report.add(Check(
        "singular locus (symbolic): Sing = predicted union of orbits", str(size),
        f"{method}: exact Jacobian rank of the closure's equations at each GL-orbit representative"
        + (" + literal radical comparison" if res["literal"] is not None else ""),
        "every orbit as predicted", f"{len(rows)} nonzero orbits, {sum(r['singular'] for r in rows)} singular; {claim_eq}{extra}"
        + (f"; differs: {bad[0]}" if bad else ""),
        not bad and (res["literal"] is None or res["literal"][0] == (not stated)), seconds,
        {"orbits": rows, "counterexamples": bad},
    ))
    # 4. pointwise with the implicit equations (random samples)
    bad = []
    for name, A, V in samples:
        ev = evals[f"sample {name}"]
        f = features(A, V)
        pred, source = opts.theory.singular(size, f)
        singular = ev["jacobian_rank"] < c
        if singular != pred or not ev["on_closure"]:
            bad.append(f"{name}: A={A.tolist()}, V={V.tolist()}: Jacobian rank {ev['jacobian_rank']} vs {c}, predicted {pred} [{source}]")
    report.add(Check(
        "implicit equations: Jacobian rank = codim exactly at predicted smooth points", str(size),
        f"{method}: exact rank over QQ at one random sample per stratum",
        "rank = codim iff smooth", f"{len(samples)} samples" + (f"; differs: {bad[0]}" if bad else ", all as predicted"),
        not bad, float(res["points_seconds"]), {"counterexamples": bad},
    ))
    # 6. fibers (Thm. 3.2)
    if res["fibers"]:
        got = {fb["name"]: [tuple(x) for x in fb["components"]] for fb in res["fibers"]}
        expect = opts.theory.fiber_components(size)
        ok = all(k in got and sorted(got[k]) == sorted(v) for k, v in expect.items())
        report.add(Check(
            "Thm. 3.2: fibers (minimal primes: rescaling line; pair and swap; A = 0 or V = 0)", str(size),
            f"{method}: minimal primes of the fiber ideal",
            "; ".join(f"{k}: {v}" for k, v in expect.items()), "; ".join(f"{k}: {v}" for k, v in got.items()),
            ok, float(res["fibers_seconds"]),
        ))
    return {"conjugate": {"on_closure": evals["conjugate"]["on_closure"],
                          "in_rank_one_closure": evals["conjugate"]["in_rank_one_closure"]},
            "degree": res["degree"], "dimension": res["dimension"]}


def _fiber_count_checks(report: Report, size: Size, rng: np.random.Generator, theory: Theory) -> None:
    """Thm. 3.2 on every size, by the factorization fiber (preimages over CC up to rescaling)."""
    if not size.free:
        return
    t0 = time.perf_counter()
    d, e = size.d, size.d_out
    u, v, z = (_nonzero(rng, d) for _ in range(3))
    while exact_rank(np.array([v, z], dtype=object)) < 2:
        z = _nonzero(rng, d)
    w = _nonzero(rng, e)
    cases = {
        "generic": (_full_rank(rng, d, d, d), _full_rank(rng, e, d, min(d, e))),
        "rank A = 1": (np.outer(u, v), _full_rank(rng, e, d, min(d, e))),
        "rank-one pair": (np.outer(u, v), np.outer(w, z)),
        "critical": (np.outer(u, v), np.outer(w, v)),
    }
    got = {k: fiber(reduced_point(A, V), d, e).count for k, (A, V) in cases.items()}
    want = theory.fiber_counts(size)
    _check(report, "Thm. 3.2: number of preimages up to rescaling", size, "factorization of the quadrics (exact, over CC)",
           want, got, got == want, t0)


def reproduce_theorem_34(opts: Options | None = None, progress: Callable[[str], None] | None = None) -> Report:
    opts = opts or Options()
    say = progress or (lambda s: None)
    report = Report(
        "Theorem 3.4: geometry of one lightning self-attention layer",
        summary=(
            "Each row checks one claim on one size. 'Macaulay2' rows use the implicit equations of the closure; "
            "the others are exact certificates from the parametrization (see ag_attention.exact.onelayer). "
            "GF(p) ranks are certified lower bounds; rank drops are exact ranks over QQ. "
            f"Predictions: {opts.theory.name}."
        ),
        meta={"seed": opts.seed, "prime": 2**31 - 1, "m2_sizes": len(opts.m2_grid) if opts.use_m2 else 0,
              "pointwise_sizes": len(opts.point_grid)},
    )
    timing: dict[str, float] = {}
    implicit: dict[Size, dict[str, Any]] = {}
    if opts.use_m2 and opts.m2_grid:
        from ..m2.runner import get_backend

        try:  # once, before any item: a missing Macaulay2 is one error (exit 3), not a failure per item
            backend = get_backend(opts.backend)
        except M2NotFoundError as exc:
            raise M2NotFoundError(f"{exc} (--no-m2, or Options(use_m2=False), skips the Macaulay2 items)") from None
        t0 = time.perf_counter()
        for size in opts.m2_grid:
            say(f"Macaulay2: {size}")
            rng = np.random.default_rng([opts.seed, size.d, size.d_out, size.a, 1])
            info = _m2_checks(report, size, opts, rng, backend)
            if info is not None:
                implicit[size] = info
        timing["macaulay2"] = time.perf_counter() - t0
    if opts.equation_grid:
        t0 = time.perf_counter()
        equation_checks(
            report, opts.equation_grid,
            singular_rule=lambda d, e, a, orbit: opts.theory.singular(Size(d, e, a), features(orbit.A, orbit.V)),
            dimension=lambda d, e, a: opts.theory.dimension(Size(d, e, a)),
            seed=opts.seed, say=say,
        )
        timing["equations"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    stated_mismatch: list[tuple] = []
    for size in opts.point_grid:
        say(f"pointwise: {size}")
        rng = np.random.default_rng([opts.seed, size.d, size.d_out, size.a, 2])
        _point_checks(report, size, opts, rng, stated_mismatch)
        _fiber_count_checks(report, size, rng, opts.theory)
        if size.free and size.in_hypotheses:
            _conjugate_checks(report, size, opts.seed, implicit.get(size), opts.theory)
    timing["pointwise"] = time.perf_counter() - t0
    # dimension (Cor. 3.3) on every size and token count, by the exact engine
    t0 = time.perf_counter()
    rows = []
    one_token = []
    for size in opts.point_grid:
        for t in (1, 2, 3):
            r = exact_dimension(Architecture((size.d, size.d_out), (size.a,), tokens=t), seed=opts.seed)
            rows.append([str(size), t, r.dimension, size.dim, "exact" if r.certified else "lower bound",
                         "yes" if r.formula_applies else "no"])
            if r.formula_applies:
                want = opts.theory.dimension(size)
                report.add(Check("Cor. 3.3: dim M = a(2d - a) + d d' - 1", f"{size}, t={t}", "GF(p) Jacobian rank + symmetry bound",
                                 want, r.dimension, r.dimension == want and r.certified, r.seconds))
            elif t == 1 and r.dimension != size.dim:
                one_token.append(f"{size}: {r.dimension} ({'exact' if r.certified else 'lower bound'}) vs {size.dim}")
            elif not size.in_hypotheses and r.dimension == size.dim and t == 2:
                report.findings.append(f"{size}: Cor. 3.3 holds (dim {r.dimension}) although d' = 1, a = 1 is excluded")
    if one_token:
        report.findings.append(
            f"t = 1 (excluded): the dimension is below Cor. 3.3 on {len(one_token)} of {len(opts.point_grid)} sizes, "
            f"e.g. {one_token[0]}; phi(x) = (x^T A x) V x only sees A + A^T"
        )
    report.tables.append(Table("Dimensions (exact engine)", ["size", "t", "dim", "Cor. 3.3", "certified", "hypotheses hold"], rows))
    timing["dimensions"] = time.perf_counter() - t0
    # findings on the characterization, one per size
    by_size: dict[str, list[tuple]] = {}
    for item in stated_mismatch:
        by_size.setdefault(item[0], []).append(item)
    for name, items in by_size.items():
        sing = [i for i in items if i[2]]
        smooth = [i for i in items if not i[2]]
        parts = []
        if sing:
            parts.append(f"{len(sing)} orbit(s) the rank-one rule calls smooth are singular, e.g. {sing[0][1]} ({sing[0][3]})")
        if smooth:
            parts.append(f"{len(smooth)} orbit(s) it calls singular are smooth, e.g. {smooth[0][1]} ({smooth[0][3]})")
        report.findings.append(f"{name}: 'singular iff rank A <= 1 and rank V <= 1' fails: " + "; ".join(parts))
    for size, info in implicit.items():
        if not size.in_hypotheses:
            report.findings.append(f"{size} (excluded by the theorem): Macaulay2 degree {info['degree']}; see the orbit table")
    if opts.picture and opts.out is not None:
        t0 = time.perf_counter()
        from .figure1 import render_figure1

        say("picture")
        path = render_figure1(Path(opts.out) / "figure1.png", seed=opts.seed)
        report.meta["picture"] = path.name
        timing["picture"] = time.perf_counter() - t0
    report.meta["seconds_by_part"] = {k: round(v, 1) for k, v in timing.items()}
    return report
