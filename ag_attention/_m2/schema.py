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

>>> validate({"dim": 5, "gens": ["c_1"]}, {"dim": int, "gens": [str]})
>>> validate({"dim": "5"}, {"dim": int})
Traceback (most recent call last):
...
ag_attention._errors.M2OutputError: Macaulay2's result does not have the expected form: result["dim"]: expected an integer, got '5'
"""

from __future__ import annotations

import math
from typing import Any, Callable

from .._errors import M2OutputError

__all__ = ["OneOf", "Where", "NUMBER_STRING", "validate", "describe"]


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

_NAMES = {int: "an integer", str: "a string", bool: "a boolean", float: "a number", type(None): "null", object: "anything"}


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
        return None
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
        raise M2OutputError(f"Macaulay2's result{what} does not have the expected form: {bad}")
