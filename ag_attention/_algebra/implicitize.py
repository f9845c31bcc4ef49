"""Implicitization of one lightning layer with Macaulay2 (LightningAttention package).

:func:`implicitize` asks Macaulay2 for the ideal of the Zariski closure of the
neuromanifold of one layer (the kernel of the parametrization ring map), in
reduced or full coordinates, over QQ or a prime field, and returns an
:class:`Implicitization` with the generators in the coordinate variables
``c_1..c_n`` (whose meaning ``coordinate_labels`` states).

Macaulay2 sends each generator twice: as it prints it (for people) and as its
``listForm``, exponent vectors with integer coefficients (numerator and
denominator over QQ, a representative mod p over ``ZZ/p``), from which the
polynomials are built exactly, with no parser of Macaulay2's syntax.  The
closure exports as ``to_dict()`` (the ``--json`` object), ``to_sympy()`` and
``to_m2()``, in variable names every system reads (``c_1`` is a sympy symbol and
a Macaulay2 indexed variable).
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property
from typing import Any

from .._architecture import Architecture, check_architecture
from .._errors import InvalidArgumentError, M2OutputError
from .._exact import ModularPolynomial, RationalPolynomial, is_prime, linalg
from .._m2 import DEFAULT_TIMEOUT, Where, run_json
from .._models import Parametrization, check_one_layer, labels
from .._results import ResultMixin

__all__ = ["Implicitization", "implicitize", "check_field", "parametrization_call", "RESULT_SCHEMA", "TERMS_OF"]

_FIELD = re.compile(r"^ZZ/([0-9]{1,10})$")  # p < 2^31 has at most 10 digits


def check_field(field_: str) -> str:
    """``"QQ"`` or ``"ZZ/p"`` with ``p`` a prime below ``2^31``."""
    if field_ == "QQ":
        return field_
    m = _FIELD.match(str(field_).replace(" ", ""))
    if not m:
        shown = repr(field_) if len(str(field_)) <= 40 else f"{str(field_)[:20]!r}... ({len(str(field_)):,} characters)"
        raise InvalidArgumentError(f"field={shown}: must be QQ or ZZ/p for a prime p below 2^31, e.g. ZZ/32003")
    p = int(m.group(1))
    if not (2 < p < 2**31) or not is_prime(p):
        raise InvalidArgumentError(f"field={field_!r}: {p} is not a prime between 3 and 2^31")
    return f"ZZ/{p}"


def parametrization_call(
    arch: Architecture, coords: str = "reduced", field_: str = "QQ", weights: str | None = None
) -> str:
    """The Macaulay2 expression building the layer's parametrization (validated input only)."""
    check_one_layer(arch, coords, "Macaulay2 implicitization")
    field_ = check_field(field_)
    d, e = arch.widths
    a = arch.ranks[0]
    weights = "AV" if weights is None else weights
    if weights not in ("AV", "QKV"):
        raise InvalidArgumentError(f"weights={weights!r}: must be AV or QKV")
    if weights == "AV":
        rank = "null" if a >= d else str(a)
    else:
        rank = str(a)
    return (
        f"lightningParametrization({d}, {e}, AttentionRank => {rank}, Tokens => {arch.tokens}, "
        f'Coordinates => "{coords}", Weights => "{weights}", CoefficientRing => {field_})'
    )


#: one term of a generator: its exponent vector and its coefficient (numerator, denominator)
Term = tuple[tuple[int, ...], Fraction]


def _terms_match(payload: dict[str, Any]) -> bool:
    """The generators' terms: one list per generator, exponent vectors as long as the variables, denominators > 0."""
    variables = payload["variables"]
    if not variables or len(set(variables)) != len(variables):
        raise ValueError(f"the variables must be distinct names, got {variables[:5]}")
    if len(payload["terms"]) != len(payload["generators"]):
        raise ValueError(f"{len(payload['terms'])} term lists for {len(payload['generators'])} generators")
    for gen in payload["terms"]:
        for exps, (num, den) in gen:
            if len(exps) != len(variables) or min(exps, default=0) < 0 or den <= 0 or num == 0:
                raise ValueError(f"a term {exps} {num}/{den} that is not a monomial in the {len(variables)} variables")
    return True


#: what the implicitization job returns
RESULT_SCHEMA = Where(
    {
        "generators": [str],
        "terms": [[([int], (int, int))]],
        "variables": [str],
        "dimension": int,
        "codimension": int,
        "degree": int,
        "m2_version": str,
    },
    _terms_match,
    "generators given by their terms in the variables",
)

#: Macaulay2: the terms of a polynomial as {exponents, {numerator, denominator}} (a representative mod p)
TERMS_OF = (
    "termsOf = g -> apply(listForm g, t -> {t#0, if instance(t#1, QQ) then {numerator t#1, denominator t#1} "
    "else {lift(t#1, ZZ), 1}});\n"
)


def _terms(raw: list[Any]) -> tuple[tuple[Term, ...], ...]:
    return tuple(tuple((tuple(e), Fraction(n, d)) for e, (n, d) in g) for g in raw)


@dataclass(frozen=True)
class Implicitization(ResultMixin):
    """The Zariski closure of a one-layer neuromanifold, computed by Macaulay2."""

    architecture: Architecture
    coordinates: str
    field: str
    weights: str
    variables: tuple[str, ...]
    generator_strings: tuple[str, ...]  # as Macaulay2 prints them
    generator_terms: tuple[tuple[Term, ...], ...]  # the same generators as exponent vectors and coefficients
    dimension: int  # affine dimension of the cone (Krull dimension of S/I)
    codimension: int
    degree: int
    backend: str  # the backend that computed it (for a cached result: the one that computed the entry)
    m2_version: str
    seconds: float
    cached: bool
    requested_backend: str = ""  # the backend asked for; differs from ``backend`` for a cache hit of another
    extra: dict[str, Any] = dataclasses.field(default_factory=dict)

    @property
    def ambient_dimension(self) -> int:
        return len(self.variables)

    @property
    def prime(self) -> int | None:
        """``p`` for a field ``ZZ/p``, None over QQ."""
        return None if self.field == "QQ" else int(self.field[3:])

    @cached_property
    def ring(self) -> Any:
        """The coordinate ring: QQ or GF(p) polynomials in ``variables`` (degrevlex)."""
        if self.prime is None:
            return linalg.rational_polynomial_ring(self.variables, "degrevlex")
        return linalg.modular_polynomial_ring(self.variables, self.prime, "degrevlex")

    @cached_property
    def generators(self) -> list[RationalPolynomial | ModularPolynomial]:
        """The generators as polynomials over the field: QQ, or integers mod p for ``ZZ/p``."""
        if self.prime is None:
            return [linalg.rational_polynomial(self.ring, g) for g in self.generator_terms]
        p = self.prime
        return [
            linalg.modular_polynomial(self.ring, [(e, c.numerator * pow(c.denominator, -1, p)) for e, c in g])
            for g in self.generator_terms
        ]

    @property
    def generator_degrees(self) -> list[int]:
        return [max(sum(e) for e, _ in g) for g in self.generator_terms]

    @cached_property
    def coordinate_labels(self) -> tuple[str, ...]:
        """What each variable is, e.g. ``c_2 = q[1,1]: coefficient of z1*z2``."""
        d, e = self.architecture.widths
        meaning = labels(d, e, self.coordinates, self.architecture.tokens, sep=": ")
        return tuple(f"{v} = {m}" for v, m in zip(self.variables, meaning))

    def to_sympy(self) -> list[Any]:
        """The generators as ``sympy.Poly`` s over one fixed generator tuple (needs sympy).

        Every polynomial has ``gens == (c_1, c_2, ..., c_n)``: the symbols of
        ``variables`` in the ring's order, which is the natural one (``c_10``
        comes after ``c_9``, where sympy's own sorting of an expression's
        symbols puts ``c_10`` after ``c_1``), also for a generator that omits
        some variables; so ``coeff_monomial``, ``monoms()`` and exponent
        vectors mean the same coordinates in every generator and in
        ``coordinate_labels``.  The domain is ``QQ`` over QQ and ``GF(p)``
        over ``ZZ/p`` (sympy prints its elements symmetrically, in
        ``-p/2..p/2``).  ``f.as_expr()`` gives a plain expression.
        """
        try:
            import sympy
        except ImportError:
            raise InvalidArgumentError("to_sympy() needs sympy: pip install sympy") from None
        gens = tuple(sympy.Symbol(v) for v in self.variables)
        domain = sympy.QQ if self.prime is None else sympy.GF(self.prime)
        out = []
        for g in self.generator_terms:
            terms = {
                tuple(e): (
                    sympy.Rational(c.numerator, c.denominator)
                    if self.prime is None
                    else c.numerator * pow(c.denominator, -1, self.prime)
                )
                for e, c in g
            }
            out.append(sympy.Poly.from_dict(terms, *gens, domain=domain))
        return out

    def to_m2(self) -> str:
        """Macaulay2 code defining ``R`` and ``I`` (this closure's ideal), ready for ``load`` or a session."""
        ring = "QQ" if self.prime is None else f"ZZ/{self.prime}"
        gens = ",\n  ".join(self.generator_strings) or "0_R"
        return (
            f"-- {self.architecture.describe()}, {self.coordinates} coordinates (ag-attention)\n"
            f"R = {ring}[{', '.join(self.variables)}];\nI = ideal(\n  {gens});\n"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "architecture": self.architecture.to_dict(),
            "coordinates": self.coordinates,
            "field": self.field,
            "weights": self.weights,
            "generators": list(self.generator_strings),
            "generator_degrees": self.generator_degrees,
            "variables": list(self.variables),
            "coordinate_labels": list(self.coordinate_labels),
            "dimension": self.dimension,
            "codimension": self.codimension,
            "degree": self.degree,
            "ambient_dimension": self.ambient_dimension,
            "backend": self.backend,
            "requested_backend": self.requested_backend or self.backend,
            "m2_version": self.m2_version,
            "seconds": round(self.seconds, 3),
            "cached": self.cached,
            **self.extra,
        }

    def __repr__(self) -> str:
        return (
            f"Implicitization({self.architecture.describe()}, {self.coordinates} coordinates over {self.field}: "
            f"{len(self.generator_strings)} generators, dim {self.dimension}, degree {self.degree}, "
            f"{self.backend} M2 {self.m2_version})"
        )

    def __str__(self) -> str:
        degs: dict[int, int] = {}
        for d in self.generator_degrees:
            degs[d] = degs.get(d, 0) + 1
        deg_text = ", ".join(f"{n} of degree {d}" for d, n in sorted(degs.items())) or "none (the whole space)"
        lines = [
            f"Zariski closure of the neuromanifold of {self.architecture.describe()}",
            f"  coordinates      {self.coordinates}, {self.ambient_dimension} "
            f"({self.weights} weights, over {self.field})",
            f"  dimension        {self.dimension} (affine cone), codimension {self.codimension}",
            f"  degree           {self.degree}",
            f"  generators       {len(self.generator_strings)}: {deg_text}",
        ]
        for s in self.generator_strings[:3]:
            lines.append(f"    {s if len(s) <= 110 else s[:107] + '...'}")
        if len(self.generator_strings) > 3:
            lines.append(f"    ... ({len(self.generator_strings) - 3} more)")
        lines.append(f"  Macaulay2 {self.m2_version} ({self.backend}), {self.seconds:.2f} s{self.cache_note()}")
        return "\n".join(lines)

    def cache_note(self) -> str:
        """`` (cached)``, and which backend computed the entry when another one was asked for."""
        if not self.cached:
            return ""
        if self.requested_backend and self.requested_backend != self.backend:
            return (
                f" (from the cache: computed by the {self.backend} backend, not by the {self.requested_backend} "
                "backend asked for; --no-cache recomputes)"
            )
        return " (cached)"


def _coordinates_wrong(payload: Any, arch: Architecture, coords: str) -> str | None:
    """Whether the closure's ring has the coordinates of ``arch`` (part of the job's schema: checked before a
    result is cached or used, a cached one included)."""

    expected = len(Parametrization(arch, coords=coords).polynomials)
    if len(payload["variables"]) != expected:
        return f"{len(payload['variables'])} coordinates, where {arch.describe()} has {expected} ({coords})"
    return None


def _inconsistent(job: Any, arch: Architecture, coords: str) -> str | None:
    """What in ``job``'s result contradicts the job itself (None: nothing): the coordinates of the closure's
    ring, Macaulay2's version.  The schema checks each result's own sense; this checks it is this job's (a cache
    entry could be another's, consistent in itself)."""
    wrong = _coordinates_wrong(job.payload, arch, coords)
    if wrong:
        return wrong
    if str(job.payload["m2_version"]) != job.m2_version:
        return f"computed by Macaulay2 {job.payload['m2_version']}, not {job.m2_version}"
    return None


def implicitize(
    arch: Architecture,
    *,
    coords: str = "reduced",
    field: str = "QQ",
    weights: str | None = None,
    backend: str = "auto",
    timeout: float = DEFAULT_TIMEOUT,
    cache: bool = True,
) -> Implicitization:
    """Ideal of the Zariski closure of the neuromanifold of one lightning layer.

    ``weights`` is ``"AV"`` (default; with ``a < d`` the weight ring is cut
    by the ``(a+1)``-minors of ``A``) or ``"QKV"``; both have the same image.
    """
    arch = check_architecture(arch)
    call = parametrization_call(arch, coords, field, weights)
    body = (
        TERMS_OF + f"P = {call};\n"
        "I = closureIdeal P;\n"
        "result = hashTable {\n"
        '  "generators" => apply(flatten entries gens I, toString),\n'
        '  "terms" => apply(flatten entries gens I, termsOf),\n'
        '  "variables" => apply(gens ring I, toString),\n'
        '  "dimension" => dim I,\n'
        '  "codimension" => codim I,\n'
        '  "degree" => degree standardGrading I,\n'
        '  "m2_version" => version#"VERSION"\n'
        "};\n"
    )
    label = f"implicitize {arch.describe()} ({coords}, {field})"
    schema = Where(
        RESULT_SCHEMA,
        lambda v: _coordinates_wrong(v, arch, coords) is None,
        f"a closure in the coordinates of {arch.describe()} ({coords})",
    )
    job = run_json(body, schema=schema, backend=backend, timeout=timeout, label=label, cache=cache)
    wrong = _inconsistent(job, arch, coords)
    if wrong and job.cached:  # a cache entry consistent in itself but not with this job: recompute it
        job = run_json(body, schema=schema, backend=backend, timeout=timeout, label=label, cache=False)
        wrong = _inconsistent(job, arch, coords)
    if wrong:
        raise M2OutputError(f"Macaulay2's result for {label}: {wrong}", output=str(job.payload)[:500])
    p = job.payload
    return Implicitization(
        architecture=arch,
        coordinates=coords,
        field=check_field(field),
        weights="AV" if weights is None else weights,
        variables=tuple(p["variables"]),
        generator_strings=tuple(p["generators"]),
        generator_terms=_terms(p["terms"]),
        dimension=int(p["dimension"]),
        codimension=int(p["codimension"]),
        degree=int(p["degree"]),
        backend=job.backend,
        m2_version=job.m2_version,
        seconds=job.seconds,
        cached=job.cached,
        requested_backend=job.requested_backend,
    )
