"""The schema language of Macaulay2 results (ag_attention._m2.schema)."""

import re

import pytest

from ag_attention._errors import M2OutputError


def test_schema_language():
    from ag_attention._m2.schema import NUMBER_STRING, OneOf, Where, validate

    spec = {"a": [int], "b": OneOf(None, (bool, NUMBER_STRING)), "c": Where(int, lambda v: v > 0, "a positive integer")}
    validate({"a": [1, 2], "b": None, "c": 1, "extra": "ok"}, spec)
    validate({"a": [], "b": [True, "1.5e-3"], "c": 3}, spec)
    for bad, where in [({"a": [1, "2"], "b": None, "c": 1}, 'result["a"][1]'),
                       ({"a": [1], "b": [True, "x"], "c": 1}, 'result["b"]'),
                       ({"a": [1], "b": [True], "c": 1}, 'result["b"]'),
                       ({"a": [1], "b": None, "c": 0}, "a positive integer"),
                       ([], "expected an object")]:
        with pytest.raises(M2OutputError, match=re.escape(where)):
            validate(bad, spec)
