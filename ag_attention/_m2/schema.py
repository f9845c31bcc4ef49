"""The shape of a Macaulay2 job's JSON result, checked before it is cached or used.

Every caller of :func:`ag_attention._m2.jobs.run_json` states what its job
returns; a result that does not match raises :class:`M2OutputError` (naming
the place, the expectation and what came) and is never cached, and a cache
entry that does not match is recomputed.  A schema is

* ``int``, ``str``, ``bool``, ``float`` (an integer is a float too; ``true`` is
  not an integer), ``None`` (JSON null), ``object`` (anything);
* ``[spec]``: a list of items matching ``spec``;
* ``(spec1, spec2, ...)``: a list of exactly these items;
* ``{"key": spec, ...}``: an object with at least these keys;
* :class:`OneOf` ``(spec, ...)``: any of them;
* :class:`Where` ``(spec, predicate, description)``: ``spec`` and ``predicate(value)``.

A result must also make sense, whichever job returned it: the names of an
object's keys say what its numbers are, and :func:`validate` checks, on every
object whose schema has these keys (a fresh result and a cache entry alike),

* ``dimension``: ``0 <= dimension`` (the ideals of these jobs are proper), at
  most the number of ``variables`` when they are given;
* ``codimension``: ``0 <= codimension``, and ``= len(variables) - dimension``
  when both are given; codimension 0 is the zero ideal (degree 1, no generators);
* ``degree``: ``>= 1``;
* ``generators`` (a list, or their number): at least ``codimension`` of them
  (Krull's height theorem), as many as ``generator_degrees`` and ``terms``;
  ``generator_degrees``: each ``>= 1`` (a constant generator is the unit ideal), and ``degree`` at most the
  product of the ``codimension`` largest of them (Bezout: a forged cache entry giving degree 5 to the single
  quartic of ``(2,1,2)`` is refused);
  ``terms``: every generator has a term of positive degree;
* ``rank_one_dimension``: between 0 and ``dimension``; ``jacobian_rank``,
  ``count``, ``seconds``: ``>= 0``.

>>> validate({"dim": 5, "gens": ["c_1"]}, {"dim": int, "gens": [str]})
>>> validate({"dim": "5"}, {"dim": int})  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
ag_attention._errors.M2OutputError: Macaulay2's result does not have ...: expected an integer, got '5'
>>> validate({"dimension": 100, "codimension": -94, "variables": ["c_1"] * 6}, {"dimension": int, "codimension": int,
...          "variables": [str]})  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
ag_attention._errors.M2OutputError: Macaulay2's result ...: dimension 100 is more than the 6 variables
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from .._errors import M2OutputError

__all__ = ["OneOf", "Where", "NUMBER_STRING", "SENSE_KEYS", "validate", "describe", "sense"]


class OneOf:
    """Any of the given specs."""

    def __init__(self, *options: Any):
        self.options = options


class Where:
    """``spec`` and ``predicate(value)`` (false or an exception: invalid)."""

    def __init__(self, spec: Any, predicate: Callable[[Any], Any], description: str):
        self.spec = spec
        self.predicate = predicate
        self.description = description


def _is_number_string(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


#: a decimal number as Macaulay2's ``toString`` of a real prints it
NUMBER_STRING = Where(str, _is_number_string, "a decimal number")

_NAMES = {
    int: "an integer",
    str: "a string",
    bool: "a boolean",
    float: "a number",
    type(None): "null",
    object: "anything",
}


def describe(spec: Any) -> str:
    """What ``spec`` asks for, in words."""
    if spec is None:
        return "null"
    if isinstance(spec, type):
        return _NAMES.get(spec, spec.__name__)
    if isinstance(spec, list):
        return f"a list of {describe(spec[0])}" if spec else "a list"
    if isinstance(spec, tuple):
        return f"a list of {len(spec)} items ({', '.join(describe(s) for s in spec)})"
    if isinstance(spec, dict):
        return "an object with keys " + ", ".join(repr(k) for k in spec)
    if isinstance(spec, OneOf):
        return " or ".join(describe(s) for s in spec.options)
    if isinstance(spec, Where):
        return spec.description
    raise TypeError(f"not a schema: {spec!r}")


def _got(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


#: the keys whose numbers :func:`sense` checks
SENSE_KEYS = (
    "dimension",
    "codimension",
    "degree",
    "generators",
    "generator_degrees",
    "terms",
    "rank_one_dimension",
    "jacobian_rank",
    "count",
    "seconds",
)

#: _check's answers that are about sense (the form was right): validate says so
_SENSE = "\x00sense\x00"


def _integer(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str) and _is_number_string(value):
        return float(value)
    return None


def sense(value: dict[str, Any], keys: Any = None) -> str | None:
    """None if the numbers of ``value`` under ``keys`` (default: all of :data:`SENSE_KEYS`) make sense, else why not.

    >>> sense({"dimension": 4, "codimension": 2, "degree": 3, "variables": list("abcdef")}) is None
    True
    >>> sense({"dimension": 4, "codimension": 3, "variables": list("abcdef")})
    'codimension 3 is not the 6 variables minus the dimension 4'
    """
    keys = set(SENSE_KEYS if keys is None else keys) & set(SENSE_KEYS)
    got = {k: value.get(k) for k in keys}
    variables = value.get("variables")
    n = len(variables) if isinstance(variables, list) else None
    dim, codim = _integer(got.get("dimension")), _integer(got.get("codimension"))
    degree = _integer(got.get("degree"))
    gens = got.get("generators")
    count = len(gens) if isinstance(gens, list) else _integer(gens)
    return (
        _dimensions_sense(n, dim, codim)
        or _degree_sense(degree, codim)
        or _count_sense(count, codim)
        or _generator_degrees_sense(got, count, degree, codim)
        or _terms_sense(got.get("terms"), count)
        or _others_sense(got, dim)
    )


def _dimensions_sense(n: int | None, dim: int | None, codim: int | None) -> str | None:
    if dim is not None:
        if dim < 0:
            return f"dimension {dim} is negative (the ideal of a job is proper)"
        if n is not None and dim > n:
            return f"dimension {dim} is more than the {n} variables"
    if codim is not None:
        if codim < 0:
            return f"codimension {codim} is negative"
        if n is not None and dim is not None and codim != n - dim:
            return f"codimension {codim} is not the {n} variables minus the dimension {dim}"
        if n is not None and codim > n:
            return f"codimension {codim} is more than the {n} variables"
    return None


def _degree_sense(degree: int | None, codim: int | None) -> str | None:
    if degree is not None:
        if degree < 1:
            return f"degree {degree} is below 1"
        if codim == 0 and degree != 1:
            return f"degree {degree} of an ideal of codimension 0 (the zero ideal, degree 1)"
    return None


def _count_sense(count: int | None, codim: int | None) -> str | None:
    if count is not None:
        if count < 0:
            return f"{count} generators"
        if codim is not None and count < codim:
            return f"{count} generators cannot cut out codimension {codim} (Krull: at most one per generator)"
        if codim == 0 and count > 0:
            return f"{count} generators of an ideal of codimension 0 (the zero ideal has none)"
    return None


def _degrees_from_terms(terms_list: list[Any]) -> list[int] | None:
    """The degrees of the generators, from their terms (None if a generator is constant or zero: said elsewhere)."""
    degrees = [
        max(
            (
                sum(ex)
                for ex in (t[0] for t in gen if isinstance(t, (list, tuple)) and t and isinstance(t[0], list))
                if all(_integer(e) is not None for e in ex)
            ),
            default=0,
        )
        for gen in terms_list
        if isinstance(gen, list)
    ]
    if len(degrees) != len(terms_list):
        return None
    positive = [d for d in degrees if d >= 1]
    return positive if len(positive) == len(terms_list) else None


def _generator_degrees_sense(
    got: dict[str, Any], count: int | None, degree: int | None, codim: int | None
) -> str | None:
    degrees = got.get("generator_degrees")
    terms_list = got.get("terms")
    if degrees is None and isinstance(terms_list, list):
        degrees = _degrees_from_terms(terms_list)
    if not isinstance(degrees, list):
        return None
    if count is not None and len(degrees) != count:
        return f"{len(degrees)} generator degrees for {count} generators"
    low = [d for d in degrees if _integer(d) is not None and d < 1]
    if low:
        return f"a generator of degree {low[0]} (a constant: the unit ideal)"
    ints = sorted((d for d in degrees if _integer(d) is not None), reverse=True)
    if degree is not None and codim is not None and codim >= 1 and len(ints) == len(degrees) >= codim:
        bound = math.prod(ints[:codim])
        if degree > bound:
            return (
                f"degree {degree} is above {bound}, the product of the {codim} largest generator degrees "
                f"{ints[:codim]} (Bezout: the top-dimensional part of an ideal of codimension {codim} lies "
                "in a complete intersection of those degrees)"
            )
    return None


def _terms_sense(terms: Any, count: int | None) -> str | None:
    if isinstance(terms, list):
        if count is not None and len(terms) != count:
            return f"{len(terms)} term lists for {count} generators"
        for i, gen in enumerate(terms):
            exponents = [t[0] for t in gen if isinstance(t, (list, tuple)) and t and isinstance(t[0], list)]
            if not any(sum(e for e in ex if _integer(e) is not None) > 0 for ex in exponents):
                return f"generator {i + 1} is {'zero' if not gen else 'a constant'} (no term of positive degree)"
    return None


def _others_sense(got: dict[str, Any], dim: int | None) -> str | None:
    rank_one = _integer(got.get("rank_one_dimension"))
    if rank_one is not None and (rank_one < 0 or (dim is not None and rank_one > dim)):
        return f"rank_one_dimension {rank_one} is not between 0 and the dimension {dim}"
    for key in ("jacobian_rank", "count"):
        k = _integer(got.get(key))
        if k is not None and k < 0:
            return f"{key} {k} is negative"
    seconds = _number(got.get("seconds"))
    if seconds is not None and seconds < 0:
        return f"seconds {got['seconds']!r} is negative"
    return None


def _check(value: Any, spec: Any, where: str) -> str | None:
    """None if ``value`` matches ``spec``, else what is wrong (with its place)."""
    if spec is object:
        return None
    if spec is None or spec is type(None):
        return None if value is None else f"{where}: expected null, got {_got(value)}"
    if spec is bool:
        return None if isinstance(value, bool) else f"{where}: expected a boolean, got {_got(value)}"
    if spec is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
        return None if ok else f"{where}: expected an integer, got {_got(value)}"
    if spec is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
        return None if ok else f"{where}: expected a number, got {_got(value)}"
    if isinstance(spec, type):
        return None if isinstance(value, spec) else f"{where}: expected {describe(spec)}, got {_got(value)}"
    if isinstance(spec, list):
        if not isinstance(value, list):
            return f"{where}: expected {describe(spec)}, got {_got(value)}"
        for i, item in enumerate(value):
            bad = _check(item, spec[0], f"{where}[{i}]") if spec else None
            if bad:
                return bad
        return None
    if isinstance(spec, tuple):
        if not isinstance(value, list) or len(value) != len(spec):
            return f"{where}: expected {describe(spec)}, got {_got(value)}"
        for i, (item, s) in enumerate(zip(value, spec)):
            bad = _check(item, s, f"{where}[{i}]")
            if bad:
                return bad
        return None
    if isinstance(spec, dict):
        if not isinstance(value, dict):
            return f"{where}: expected an object, got {_got(value)}"
        for key, s in spec.items():
            if key not in value:
                return f"{where}: the key {key!r} is missing (keys: {', '.join(map(repr, sorted(value))) or 'none'})"
            bad = _check(value[key], s, f'{where}["{key}"]')
            if bad:
                return bad
        why = sense(value, spec.keys())
        return None if why is None else f"{_SENSE}{where}: {why}"
    if isinstance(spec, OneOf):
        if any(_check(value, s, where) is None for s in spec.options):
            return None
        return f"{where}: expected {describe(spec)}, got {_got(value)}"
    if isinstance(spec, Where):
        bad = _check(value, spec.spec, where)
        if bad:
            return bad
        try:
            ok = spec.predicate(value)
            reason = ""
        except Exception as exc:  # the predicate's complaint is the reason (e.g. a polynomial that does not parse)
            ok, reason = False, f" ({exc})"
        return None if ok else f"{where}: expected {spec.description}, got {_got(value)}{reason}"
    raise TypeError(f"not a schema: {spec!r}")


def validate(value: Any, spec: Any, *, label: str = "") -> None:
    """Raise :class:`M2OutputError` unless ``value`` matches ``spec``."""
    bad = _check(value, spec, "result")
    if bad:
        what = f" for {label}" if label else ""
        if bad.startswith(_SENSE):
            raise M2OutputError(f"Macaulay2's result{what} does not make sense: {bad[len(_SENSE) :]}")
        raise M2OutputError(f"Macaulay2's result{what} does not have the expected form: {bad}")
