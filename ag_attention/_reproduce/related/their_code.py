"""What the Macaulay2 code of Alexandr, Duan and Montúfar computes, against the package (``reproduce related``).

Their repository (``yuliaalexandr/algebraic-invariants-of-lightning-self-attention`` at d57db82) was run on its own
by ``scripts/aldm_golden.py``, which keeps, per case ``(d, at, t)``, their coordinates, the members of each family
as their helpers return them and the implicit ideal their driver eliminates, as gzip'd JSON golden files in
``tests/data/aldm/`` (provenance inside each: commit, blob ids, the driver lines run verbatim, the deviations,
Macaulay2's version).  Nothing is fetched or run of theirs here.  This module compares, in their coordinates:

* **the coordinates**: each of their parametrized coordinates is the package's rebuilt one
  (:func:`~.invariants.their_coordinates`), as polynomials over QQ in the weights: exact;
* **the families, member by member**: for each family and degree, the span of their members against the span of
  the package's rebuilt family (:data:`~.invariants.FAMILIES`): ranks of both and of the union, from the values at
  random points modulo a prime (:func:`compare_spans`; probabilistic: equal ranks everywhere with two primes, the
  primes and seeds recorded);
* **their implicit ideal J against the package's closure**: every generator of J vanishes on the package's
  parametrization with ``rank A <= at`` (exact substitution over QQ: J is inside the closure's ideal); and
  Macaulay2 decides ``J == phi(I) + (the linear forms of J)``, with ``I`` the package's closure ideal
  (``implicitize``, reduced coordinates for t = 2, full ones for t = 1) pushed into their coordinates, and
  compares codimension, degree and Hilbert numerator (:func:`compare_ideal`).

Their t = 1 driver eliminates without ``minors(at+1, A)`` (their t > 1 driver adds it at its line 74): its ideal
is the one of ``a = d`` whatever ``at`` is; the golden files also keep the ideal with the rank constraint (not their
code), and the comparison uses the ideal their code computes, against the package's closure at ``a = d``.
"""

from __future__ import annotations

import gzip
import itertools
import json
import time
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ..._architecture import Architecture
from ..._errors import InvalidArgumentError
from ..._exact import linalg
from ..report import Check, Table
from .invariants import INVARIANTS, Label, family_members, on_image, reduced_form, their_coordinates, their_ring, veronese

__all__ = ["GOLDEN_DIRECTORY", "FAMILY_OF", "MEMBER_CASES", "MULTIDEGREE_CASES", "IDEAL_CASES", "Golden", "load_golden", "golden_available",
           "check_parametrization", "SpanComparison", "compare_spans", "compare_family", "by_multidegree", "IdealComparison",
           "compare_ideal", "their_code_section"]

#: where the golden files are in a checkout (the wheel does not ship the tests)
GOLDEN_DIRECTORY = Path(__file__).resolve().parents[3] / "tests" / "data" / "aldm"
#: their family (their helper, as the golden files name it) -> the package's rebuilt family
FAMILY_OF = {"linear": "linear", "lowRank": "low-rank", "crossColumnCubics": "cubics", "contextSyzygies": "syzygies",
             "veronese2_internal": "veronese-2 (internal)", "veronese2_crossTarget": "veronese-2 (cross-target)",
             "veronese2_blockConcatenated": "veronese-2 (block)", "veronese2_all": "veronese-2",
             "quarticResultants": "resultants", "t1:lowRank": "t1-low-rank", "t1:chow21": "t1-lie"}
#: the parts of the package's Veronese family, by their helper's keys
VERONESE_PARTS = {"veronese2_internal": "internal", "veronese2_crossTarget": "cross-target",
                  "veronese2_blockConcatenated": "block"}
#: the sizes (d, at, t) of issue 29: members, the cubics per torus multidegree, and their implicit ideal
MEMBER_CASES = ((2, 1, 2), (2, 2, 2), (3, 1, 2), (3, 2, 2), (3, 3, 2), (4, 2, 2), (4, 4, 2))
MULTIDEGREE_CASES = ((4, 3, 2), (4, 4, 2))
IDEAL_CASES = ((2, 1, 1), (2, 1, 2), (2, 2, 2), (3, 1, 1), (3, 1, 2), (3, 1, 3), (3, 2, 2), (3, 3, 2))
#: primes of the span comparisons (below 2^31: products of two residues fit in int64)
SPAN_PRIMES = (2147483647, 2147483629)

Terms = list[tuple[Fraction, tuple[tuple[int, int], ...]]]  # coefficient, ((variable, exponent), ...)


@dataclass
class Golden:
    """One golden file: their coordinates (labels in their order), parametrization, members, ideals, provenance."""

    d: int
    at: int
    t: int
    labels: list[Label]
    parametrization: list[Terms]
    families: dict[str, list[Terms]]
    skipped: list[dict[str, str]]
    ideal: dict[str, Any] | None
    rank_ideal: dict[str, Any] | None
    provenance: dict[str, Any]
    path: Path


def _terms(raw: Sequence[Any]) -> Terms:
    return [(Fraction(c), tuple((int(v), int(e)) for v, e in mono)) for c, mono in raw]


def golden_available(directory: Path | None = None) -> bool:
    """Every golden file is there (a checkout; an installed wheel has none, and a stray ``tests`` directory in
    site-packages is not taken for them)."""
    where = directory or GOLDEN_DIRECTORY
    cases = set(MEMBER_CASES) | set(MULTIDEGREE_CASES) | set(IDEAL_CASES)
    return all((where / f"d{d}_at{at}_t{t}.json.gz").is_file() for d, at, t in cases)


def load_golden(d: int, at: int, t: int, directory: Path | None = None) -> Golden:
    """The golden file of ``(d, at, t)`` (an error naming the path when it is missing or malformed)."""
    path = (directory or GOLDEN_DIRECTORY) / f"d{d}_at{at}_t{t}.json.gz"
    try:
        with gzip.open(path, "rt") as fh:
            raw = json.load(fh)
    except FileNotFoundError:
        raise InvalidArgumentError(f"{path}: no golden file for (d, at, t) = ({d}, {at}, {t}) (scripts/aldm_golden.py "
                                   "writes them; they are in the source checkout, not in the wheel)") from None
    except (OSError, ValueError) as exc:
        raise InvalidArgumentError(f"{path}: not a golden file ({exc})") from None
    if raw.get("schema") != "ag-attention/aldm-golden/v1" or raw.get("case", {}).get("d") != d:
        raise InvalidArgumentError(f"{path}: schema {raw.get('schema')!r} or case {raw.get('case')!r} is not the "
                                   f"expected ag-attention/aldm-golden/v1 of ({d}, {at}, {t})")
    if t >= 2:
        labels: list[Label] = [tuple(sorted(tuple(p) for p in lab)) for lab in raw["labels"]]
    else:
        labels = [tuple(sorted(lab)) for lab in raw["labels"]]
    prefix = "t1:" if t == 1 else ""
    families = {prefix + name: [_terms(m) for m in fam["members"]] for name, fam in raw["families"].items()}
    ideals = {k: ({**raw[k], "generators": [_terms(g) for g in raw[k]["generators"]]} if k in raw else None)
              for k in ("ideal", "rank_ideal")}
    return Golden(d, at, t, labels, [_terms(p) for p in raw["parametrization"]], families, raw.get("skipped", []),
                  ideals["ideal"], ideals["rank_ideal"], raw["provenance"], path)


def _to_ring(g: Golden, terms: Terms) -> Any:
    """A polynomial of the golden file (variables in their order) in the package's ring of their coordinates."""
    R, gens = their_ring(g.d, g.t, 1)
    position = {lab: i for i, lab in enumerate(gens)}
    index = [position[lab] for lab in g.labels]
    n = len(gens)
    data = {}
    for c, mono in terms:
        e = [0] * n
        for v, k in mono:
            e[index[v]] += k
        data[tuple(e)] = linalg.rational(c)
    return R.from_dict(data) if data else R.constant(0)


def check_parametrization(g: Golden) -> dict[str, Any]:
    """Each of their coordinates (as their code parametrizes it, generic ``A``) against the package's
    :func:`~.invariants.their_coordinates`: equal polynomials over QQ in the weights ``a_r_c``, ``v_c``."""
    th = their_coordinates(g.d, g.t, 1, None)
    if set(g.labels) != set(th.values):
        return {"labels": len(g.labels), "agree": 0, "disagree": ["the label sets differ"]}
    P = th.ring
    bad = []
    for lab, terms in zip(g.labels, g.parametrization):
        data = {}
        for c, mono in terms:
            e = [0] * P.nvars()
            for v, k in mono:
                e[v] += k
            data[tuple(e)] = linalg.rational(c)
        if P.from_dict(data) != th.values[lab]:
            bad.append(str(lab))
    return {"labels": len(g.labels), "agree": len(g.labels) - len(bad), "disagree": bad}


# ---------------------------------------------------------------------------------------------- spans
@dataclass
class SpanComparison:
    """Two lists of polynomials of one degree: the dimensions of their spans and of the span of both."""

    degree: int
    theirs: int  # members
    ours: int
    rank_theirs: int
    rank_ours: int
    rank_union: int
    primes: tuple[int, ...]
    seed: int

    @property
    def equal(self) -> bool:
        return self.rank_theirs == self.rank_ours == self.rank_union

    def to_dict(self) -> dict[str, Any]:
        return {"degree": self.degree, "members_theirs": self.theirs, "members_ours": self.ours,
                "span_theirs": self.rank_theirs, "span_ours": self.rank_ours, "span_union": self.rank_union,
                "equal": self.equal, "primes": list(self.primes), "seed": self.seed}


def _sparse_terms(p: Any) -> list[tuple[Fraction, tuple[tuple[int, int], ...]]]:
    out = []
    for exps, c in p.to_dict().items():
        out.append((Fraction(int(c.p), int(c.q)), tuple((i, int(e)) for i, e in enumerate(exps) if int(e))))
    return out


def _values(polys: Sequence[Terms], points: np.ndarray, p: int) -> np.ndarray:
    """``polys`` at the points (rows: polynomials, columns: points), modulo ``p``."""
    n_points, n_vars = points.shape
    powers: dict[tuple[int, int], np.ndarray] = {}
    out = np.zeros((len(polys), n_points), dtype=np.int64)
    for row, terms in enumerate(polys):
        acc = np.zeros(n_points, dtype=np.int64)
        for c, mono in terms:
            if c.denominator % p == 0:
                raise InvalidArgumentError(f"a coefficient {c} has a denominator divisible by {p}")
            v = np.full(n_points, c.numerator % p * pow(c.denominator % p, -1, p) % p, dtype=np.int64)
            for var, e in mono:
                key = (var, e)
                if key not in powers:
                    x = points[:, var] % p
                    pw = np.ones(n_points, dtype=np.int64)
                    for _ in range(e):
                        pw = pw * x % p
                    powers[key] = pw
                v = v * powers[key] % p
            acc = (acc + v) % p
        out[row] = acc
    return out


def compare_spans(theirs: Sequence[Terms], ours: Sequence[Terms], nvars: int, seed: int = 0,
                  primes: Sequence[int] = SPAN_PRIMES) -> tuple[int, int, int]:
    """Dimensions of span(theirs), span(ours), span(both), as ranks of their values at ``#theirs + #ours + 8``
    random points modulo each prime (probabilistic: a rank can only come out too low, by a bad choice of points;
    the primes must agree, else an error)."""
    results = set()
    for k, p in enumerate(primes):
        rng = np.random.default_rng([seed, k])
        points = rng.integers(1, p, size=(len(theirs) + len(ours) + 8, nvars), dtype=np.int64)
        A = _values(theirs, points, p) if theirs else np.zeros((0, len(points)), dtype=np.int64)
        B = _values(ours, points, p) if ours else np.zeros((0, len(points)), dtype=np.int64)
        ra = linalg.rank(A, p) if len(A) else 0
        rb = linalg.rank(B, p) if len(B) else 0
        ru = linalg.rank(np.vstack([A, B]), p) if len(A) + len(B) else 0
        results.add((ra, rb, ru))
    if len(results) != 1:
        raise ArithmeticError(f"the primes {list(primes)} disagree on the span dimensions: {sorted(results)}")
    return results.pop()


def compare_family(g: Golden, name: str, seed: int = 0) -> list[SpanComparison]:
    """Their family ``name`` (a key of the golden file) against the package's rebuilt one, degree by degree."""
    if name not in FAMILY_OF:
        raise InvalidArgumentError(f"family={name!r}: must be one of {', '.join(FAMILY_OF)}")
    theirs = [_sparse_terms(_to_ring(g, m)) for m in g.families[name]]
    at = min(g.at, g.d)
    if name in VERONESE_PARTS:
        y = their_ring(g.d, g.t, 1)[1].__getitem__
        built = veronese(g.d, g.t, 1, at, y, 2)[VERONESE_PARTS[name]]
    else:
        built = family_members(FAMILY_OF[name], g.d, g.t, at, 1, "theirs")
    ours = [_sparse_terms(p) for p in built if not p.is_zero()]
    nvars = len(g.labels)

    def degree(terms: Terms) -> int:
        return max(sum(e for _, e in mono) for _, mono in terms)
    out = []
    for D in sorted({degree(m) for m in theirs} | {degree(m) for m in ours}):
        a = [m for m in theirs if degree(m) == D]
        b = [m for m in ours if degree(m) == D]
        ra, rb, ru = compare_spans(a, b, nvars, seed)
        out.append(SpanComparison(D, len(a), len(b), ra, rb, ru, SPAN_PRIMES, seed))
    return out


def by_multidegree(g: Golden, degree: int = 3, names: Sequence[str] | None = None, seed: int = 0) -> dict[str, Any]:
    """Their members of ``degree`` (of the families ``names``, default all) pulled back to the package's reduced
    coordinates, against the degree-``degree`` part of the closure ideal (``low_degree_equations``), torus
    multidegree by torus multidegree: ``dim I_mu``, the span of their members in ``mu`` (exact ranks over QQ), and
    whether the members lie in ``I_mu``.  Rows per orbit of multidegrees under index permutations."""
    from ..._algebra.interpolation import low_degree_equations
    from ..._algebra.multidegrees import torus_weights
    from .invariants import _Space, _sparse, _weight, reduced_ring, their_labels

    R, value = reduced_ring(g.d)
    images = [value(lab) for lab in their_labels(g.d, g.t, 1)]
    polys = []
    for name, members in g.families.items():
        if names is not None and name not in names or name in VERONESE_PARTS:
            continue
        for m in members:
            if max(sum(e for _, e in mono) for _, mono in m) != degree:
                continue
            q = _to_ring(g, m).compose(*images, ctx=R)
            if not q.is_zero():
                polys.append(_sparse(q))
    weights = torus_weights(g.d, 1)
    parts: dict[tuple[int, ...], list[dict[tuple[int, ...], Fraction]]] = {}
    for q in polys:
        split: dict[tuple[int, ...], dict[tuple[int, ...], Fraction]] = {}
        for mono, c in q.items():
            split.setdefault(_weight(mono, weights), {})[mono] = c
        for mu, part in split.items():
            parts.setdefault(mu, []).append(part)
    eqs = low_degree_equations(Architecture.single_layer(g.d, 1, g.at if g.at < g.d else None, tokens=2),
                               max_degree=degree, seed=seed)
    rows: dict[Any, dict[str, Any]] = {}
    inside = True
    lower: dict[tuple[int, ...], list[Any]] = {}
    for D in range(1, degree + 1):
        blocks = {tuple(x for part in b.multidegree for x in part): b for b in eqs.blocks.get(D, [])}
        if D < degree:
            continue
        for mu, blk in blocks.items():
            space = _Space()
            basis = blk.generators
            dim = blk.ideal_dimension
            found = parts.get(mu, [])
            span = space.rank(found)
            joint = space.rank(found, _products_basis(eqs, D, mu, weights), basis)
            inside &= joint == dim
            key = tuple(map(tuple, blk.representative))
            row = rows.setdefault(key, {"representative": [list(x) for x in blk.representative], "multidegrees": 0,
                                        "ideal": 0, "generators": 0, "their_span": 0})
            row["multidegrees"] += 1
            row["ideal"] += dim
            row["generators"] += len(blk.generators)
            row["their_span"] += span
    outside = [mu for mu in parts if mu not in {tuple(x for part in b.multidegree for x in part)
                                                 for b in eqs.blocks.get(degree, [])}]
    table = sorted(rows.values(), key=lambda r: (-r["ideal"], r["representative"]))
    return {"d": g.d, "at": g.at, "degree": degree, "members": len(polys),
            "ideal": sum(r["ideal"] for r in table), "their_span": sum(r["their_span"] for r in table),
            "members_in_ideal": inside and not outside, "rows": table}


def _products_basis(eqs: Any, D: int, mu: tuple[int, ...], weights: Any) -> list[Any]:
    """``S_1 I_{D-1}`` in multidegree ``mu``: every variable times every generator of degree ``D - 1`` (and of the
    lower degrees, recursively through their products), as sparse polynomials."""
    from .invariants import _weight
    out = []
    nvars = len(weights)
    for E in range(1, D):
        for b in eqs.blocks.get(E, []):
            for gen in b.generators:
                for mono_extra in itertools.combinations_with_replacement(range(nvars), D - E):
                    shifted = {tuple(sorted(m + mono_extra)): c for m, c in gen.items()}
                    if _weight(next(iter(shifted)), weights) == mu:
                        out.append(shifted)
    return out


# ---------------------------------------------------------------------------------------------- ideals
@dataclass
class IdealComparison:
    """Their implicit ideal J (as their code computes it) against the package's closure ideal."""

    d: int
    at: int
    t: int
    package_rank: int  # the rank bound of the package's closure compared with (t = 1: d, as their elimination)
    generators: int
    vanishing: int  # generators of J that vanish on the package's parametrization (exact)
    equal: bool | None  # Macaulay2: J == phi(I) + linear(J); None when not asked
    theirs: dict[str, Any]  # codim, degree, dim, Hilbert numerator of J (their file)
    ours: dict[str, Any] = field(default_factory=dict)  # the same of phi(I) + linear(J) (Macaulay2)
    seconds: float = 0.0

    @property
    def agrees(self) -> bool:
        return (self.vanishing == self.generators and self.equal is not False
                and all(self.ours.get(k) == self.theirs.get(k) for k in ("codim", "degree", "hilbert_numerator")
                        if k in self.ours))

    def to_dict(self) -> dict[str, Any]:
        return {"d": self.d, "at": self.at, "t": self.t, "package_rank": self.package_rank,
                "generators": self.generators, "vanishing": self.vanishing, "equal": self.equal,
                "theirs": self.theirs, "ours": self.ours, "agrees": self.agrees, "seconds": round(self.seconds, 2)}


def _m2_poly(terms: Terms, names: Sequence[str]) -> str:
    parts = []
    for c, mono in terms:
        m = "*".join(f"{names[v]}^{e}" for v, e in mono)
        parts.append(f"({c.numerator}/{c.denominator})" + (f"*{m}" if m else ""))
    return " + ".join(parts) if parts else "0"


def _package_ideal_in_their_ring(g: Golden, rank: int, timeout: float) -> tuple[list[Terms], Any]:
    """The package's closure ideal of one layer ``(d, 1, rank)`` at ``t`` tokens, its generators pushed into their
    coordinates: reduced coordinate ``c[l,(u,v)] = w(u,v) y[(u,2),(v,2),(l,1)]`` (t = 2), full coordinate
    ``full_K = |S_3 K| y_K`` (t = 1)."""
    from ..._m2.implicitize import implicitize
    from ..._models.coordinates import full_structure, reduced_keys
    from .invariants import _orbit3

    arch = Architecture((g.d, 1), (rank,), tokens=g.t)
    imp = implicitize(arch, coords="reduced" if g.t >= 2 else "full", field="QQ", timeout=timeout)
    position = {lab: i for i, lab in enumerate(g.labels)}
    if g.t >= 2:
        images: list[tuple[int, Fraction]] = []
        for (row, _, u, v) in reduced_keys(g.d, 1):
            lab = tuple(sorted(((u + 1, 2), (v + 1, 2), (row + 1, 1))))
            form = reduced_form(lab, g.d)
            (_, q), = form.items()
            images.append((position[lab], 1 / q))
        order = images
    else:
        keys, _ = full_structure(g.d, 1, 1)
        order = []
        for full_key in keys:
            features = tuple(sorted(int(f) + 1 for f in full_key[2]))
            order.append((position[features], Fraction(_orbit3(features))))
    out = []
    for gen in imp.generator_terms:
        terms: dict[tuple[tuple[int, int], ...], Fraction] = {}
        for exps, coefficient in gen:
            c = Fraction(coefficient)
            mono: dict[int, int] = {}
            for i, e in enumerate(exps):
                if e:
                    var, scale = order[i]
                    c *= scale ** e
                    mono[var] = mono.get(var, 0) + e
            mono_key = tuple(sorted(mono.items()))
            terms[mono_key] = terms.get(mono_key, Fraction(0)) + c
        out.append([(q, k) for k, q in terms.items() if q])
    return out, imp


def compare_ideal(g: Golden, timeout: float = 900.0, m2: bool = True) -> IdealComparison:
    """Their J against the package's closure ideal (see the module docstring): the exact vanishing of J on the
    package's parametrization, and (``m2``) Macaulay2's equality and Hilbert data."""
    from ..._m2.jobs import run_json

    if g.ideal is None:
        raise InvalidArgumentError(f"{g.path}: the golden file has no implicit ideal")
    t0 = time.perf_counter()
    rank = g.at if g.t >= 2 else g.d  # their t = 1 elimination has no rank constraint
    gens = [_to_ring(g, terms) for terms in g.ideal["generators"]]
    vanish = sum(on_image(gens, g.d, g.t, rank, 1)) if gens else 0
    theirs = {k: g.ideal[k] for k in ("codim", "degree", "dim", "hilbert_numerator")}
    result = IdealComparison(g.d, g.at, g.t, rank, len(gens), vanish, None, theirs)
    if m2:
        pushed, imp = _package_ideal_in_their_ring(g, rank, timeout)
        names = [f"y{i}" for i in range(len(g.labels))]
        J = [_m2_poly(t, names) for t in g.ideal["generators"]]
        linear = [_m2_poly(t, names) for t in g.ideal["generators"] if max(sum(e for _, e in m) for _, m in t) == 1]
        I = [_m2_poly(t, names) for t in pushed]
        body = (f"L = QQ[{', '.join(names)}];\n"
                f"J = ideal({{{', '.join(J) or '0_L'}}});\n"
                f"K = ideal({{{', '.join(I + linear) or '0_L'}}});\n"
                "h = numerator reduceHilbert hilbertSeries K;\n"
                "result = hashTable {\"equal\" => J == K, \"codim\" => codim K, \"degree\" => degree K, "
                "\"dim\" => dim K, \"hilbert\" => apply(listForm h, t -> {first t#0, t#1})};\n")
        job = run_json(body, schema={"equal": bool, "codim": int, "degree": int, "dim": int, "hilbert": list},
                       timeout=timeout, label=f"their J at ({g.d},{g.at},{g.t}) against the closure")
        r = job.payload
        num: dict[int, int] = {int(e): int(c) for e, c in r["hilbert"]}
        result.equal = bool(r["equal"])
        result.ours = {"codim": r["codim"], "degree": r["degree"], "dim": r["dim"],
                       "hilbert_numerator": [num.get(k, 0) for k in range(max(num) + 1)] if num else [0],
                       "implicitize_seconds": round(imp.seconds, 1), "cached": imp.cached}
    result.seconds = time.perf_counter() - t0
    return result


# ---------------------------------------------------------------------------------------------- the report
#: the quick run: the member comparisons at d <= 3 and the ideals without Macaulay2's equality
QUICK_MEMBER_CASES = ((2, 1, 2), (2, 2, 2), (3, 1, 2), (3, 3, 2))


def their_code_section(report: Any, quick: bool, seed: int, timeout: float = 900.0) -> dict[str, Any]:
    """The report's part: coordinates, families member by member, ideals (see the module docstring)."""
    out: dict[str, Any] = {"directory": str(GOLDEN_DIRECTORY)}
    if not golden_available():
        out["skipped"] = (f"{GOLDEN_DIRECTORY} is missing or incomplete: the golden files are in the source "
                          "checkout (tests/data/aldm), not in the wheel")
        report.findings.append(f"{INVARIANTS} their code's outputs were not compared: {out['skipped']}.")
        return out
    rows = []
    members: list[dict[str, Any]] = []
    for d, at, t in (QUICK_MEMBER_CASES + ((2, 1, 1),) if quick else MEMBER_CASES + ((3, 1, 3), (2, 1, 1), (3, 1, 1))):
        g = load_golden(d, at, t)
        t0 = time.perf_counter()
        par = check_parametrization(g)
        report.add(Check(f"{INVARIANTS} their code's coordinates are the package's rebuilt ones",
                         f"(d, at, t) = ({d}, {at}, {t})", "their parametrization (golden file, their Macaulay2) "
                         "against their_coordinates, polynomials over QQ", par["labels"], par["agree"],
                         not par["disagree"] and par["labels"] > 0, time.perf_counter() - t0, par, size=(d, 1, at)))
        for name in g.families:
            t0 = time.perf_counter()
            comps = compare_family(g, name, seed)
            equal = all(c.equal for c in comps)
            members.append({"case": [d, at, t], "family": name, "ours": FAMILY_OF[name],
                            "degrees": [c.to_dict() for c in comps]})
            for c in comps:
                rows.append([f"({d},{at},{t})", name, FAMILY_OF[name], c.degree, c.theirs, c.ours, c.rank_theirs,
                             c.rank_ours, c.rank_union, "equal" if c.equal else "differ"])
            report.add(Check(f"{INVARIANTS} their family '{name}' spans, degree by degree, what the package's "
                             f"'{FAMILY_OF[name]}' spans", f"(d, at, t) = ({d}, {at}, {t})",
                             "ranks of the values at random points modulo 2 primes (probabilistic; seed "
                             f"{seed}): theirs, ours, both",
                             "equal spans", "; ".join(f"degree {c.degree}: {c.rank_theirs}, {c.rank_ours}, "
                                                      f"{c.rank_union}" for c in comps) or "no members",
                             equal, time.perf_counter() - t0, size=(d, 1, at)))
        for s in g.skipped:
            report.findings.append(f"{INVARIANTS} their code at ({d},{at},{t}): {s['family']} not computed: "
                                   f"{s['reason']}.")
    out["members"] = members
    report.tables.append(Table(
        "Their code's families against the package's, member by member (span per degree)",
        ["(d,at,t)", "their family", "package's family", "degree", "their members", "our members",
         "their span", "our span", "span of both", "spans"], rows,
        note="Their members: as their helpers return them (trimmed ideals for veronese2 and quarticResultants); "
             "ours: rebuilt from the definitions. Span dimensions from the values at random points modulo "
             f"{' and '.join(map(str, SPAN_PRIMES))} (probabilistic; both primes agree)."))
    multi = []
    mrows = []
    for d, at, t in (MULTIDEGREE_CASES[-1:] if quick else MULTIDEGREE_CASES):
        g = load_golden(d, at, t)
        t0 = time.perf_counter()
        r = by_multidegree(g, 3, seed=seed)
        multi.append(r)
        report.add(Check(f"{INVARIANTS} their cubic members lie in the closure ideal, multidegree by multidegree, and "
                         "span part of its cubics", f"(d, at, t) = ({d}, {at}, {t}), degree 3",
                         "their members pulled back to reduced coordinates; exact ranks over QQ per torus multidegree "
                         "against low_degree_equations", "inside the ideal",
                         f"{r['their_span']} of {r['ideal']} cubics spanned; inside: {r['members_in_ideal']}",
                         r["members_in_ideal"] and r["their_span"] > 0, time.perf_counter() - t0, size=(d, 1, at)))
        for row in r["rows"]:
            if row["ideal"] or row["their_span"]:
                mrows.append([f"({d},{at},{t})", "; ".join(",".join(map(str, p)) for p in row["representative"]),
                              row["multidegrees"], row["ideal"], row["their_span"], row["ideal"] - row["their_span"]])
        report.findings.append(f"{INVARIANTS} d = {d}, at = {at}: their cubic members ({r['members']} nonzero after "
                               f"the pull-back) span {r['their_span']} of the {r['ideal']} cubics of the closure "
                               "ideal; the others are new to their list (per multidegree in the table).")
    out["multidegrees"] = multi
    report.tables.append(Table(
        "Their cubics per torus multidegree against the closure's (d = 4)",
        ["(d,at,t)", "multidegree (A rows; V rows; z)", "multidegrees", "cubics of the ideal", "their span",
         "not theirs"], mrows,
        note="Per orbit of multidegrees under index permutations; exact ranks over QQ. The ideal: "
             "low_degree_equations of one layer (d, 1, at), t = 2."))
    ideals = []
    irows = []
    for d, at, t in IDEAL_CASES:
        if quick and (d, at, t) not in ((2, 1, 1), (2, 1, 2), (3, 1, 2)):
            continue
        g = load_golden(d, at, t)
        ic = compare_ideal(g, timeout=timeout, m2=not quick)
        ideals.append(ic.to_dict())
        th = ic.theirs
        irows.append([f"({d},{at},{t})", ic.package_rank, ic.generators, ic.vanishing, th["codim"], th["degree"],
                      " ".join(map(str, th["hilbert_numerator"])),
                      "-" if ic.equal is None else ("equal" if ic.equal else "differ"),
                      ic.ours.get("degree", "-"), " ".join(map(str, ic.ours.get("hilbert_numerator", []))) or "-"])
        report.add(Check(f"{INVARIANTS} their implicit ideal J is the package's closure ideal"
                         + (" (their t = 1 elimination has no rank constraint: compared at a = d)" if t == 1 else ""),
                         f"(d, at, t) = ({d}, {at}, {t}); package (d, d', a) = ({d}, 1, {ic.package_rank})",
                         "J's generators substituted with the package's parametrization (exact)"
                         + ("" if ic.equal is None else "; Macaulay2: J == phi(I) + linear(J), codim, degree, "
                            "Hilbert numerator"),
                         f"{ic.generators} vanish" + ("" if ic.equal is None else ", equal"),
                         f"{ic.vanishing} vanish" + ("" if ic.equal is None else (", equal" if ic.equal else ", differ")),
                         ic.agrees, ic.seconds, ic.to_dict(), size=(d, 1, ic.package_rank)))
        if t == 1 and g.rank_ideal is not None and at < d and g.rank_ideal["codim"] != th["codim"]:
            from .invariants import T1_VALUES

            ri = g.rank_ideal
            expected = T1_VALUES.get((d, 1, at))
            if expected is not None:
                report.add(Check(f"{INVARIANTS} with minors(at+1, A) added to their t = 1 elimination (not their code) "
                                 "the ideal has the package's dimension and degree of rank <= at",
                                 f"(d, at, t) = ({d}, {at}, 1)", "golden file's rank_ideal against T1_VALUES",
                                 f"dim {expected[0]}, degree {expected[1]}", f"dim {ri['dim']}, degree {ri['degree']}",
                                 (ri["dim"], ri["degree"]) == expected, size=(d, 1, at)))
            report.findings.append(
                f"{INVARIANTS} t = 1, d = {d}, at = {at}: their driver's ideal J (no rank constraint) has codim "
                f"{th['codim']}, degree {th['degree']}; with minors(at+1, A) added (not their code) the ideal has "
                f"codim {ri['codim']}, degree {ri['degree']}, {len(ri['generators'])} generators: their check "
                "'allI == J' at at < d compares with the full-rank ideal.")
    out["ideals"] = ideals
    report.tables.append(Table(
        "Their implicit ideal J against the package's closure ideal",
        ["(d,at,t)", "package a", "generators of J", "vanish on the package's image", "codim J", "degree J",
         "Hilbert numerator of J", "J == phi(I) + linear(J)", "degree (package)", "Hilbert numerator (package)"],
        irows, note="J: their elimination (golden file). I: the package's closure ideal (implicitize, Macaulay2), "
                    "pushed into their coordinates (t = 2: c[l,(u,v)] = w(u,v) y[(u,2),(v,2),(l,1)]; t = 1: "
                    "full_K = |S_3 K| y_K), plus the linear forms of J (their coordinates have linear relations). "
                    "Vanishing: exact substitution over QQ."))
    return out
