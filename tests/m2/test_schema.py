"""The schema language of Macaulay2 results (ag_attention._m2.schema)."""

import re

import pytest

from ag_attention._errors import M2OutputError


def test_schema_language():
    from ag_attention._m2.schema import NUMBER_STRING, OneOf, Where, validate

    spec = {"a": [int], "b": OneOf(None, (bool, NUMBER_STRING)), "c": Where(int, lambda v: v > 0, "a positive integer")}
    validate({"a": [1, 2], "b": None, "c": 1, "extra": "ok"}, spec)
    validate({"a": [], "b": [True, "1.5e-3"], "c": 3}, spec)
    for bad, where in [
        ({"a": [1, "2"], "b": None, "c": 1}, 'result["a"][1]'),
        ({"a": [1], "b": [True, "x"], "c": 1}, 'result["b"]'),
        ({"a": [1], "b": [True], "c": 1}, 'result["b"]'),
        ({"a": [1], "b": None, "c": 0}, "a positive integer"),
        ([], "expected an object"),
    ]:
        with pytest.raises(M2OutputError, match=re.escape(where)):
            validate(bad, spec)


IDEAL = {"generators": [str], "variables": [str], "dimension": int, "codimension": int, "degree": int}


@pytest.mark.parametrize(
    "change, why",
    [
        ({"dimension": 100, "codimension": -94, "degree": -5}, "dimension 100 is more than the 6 variables"),
        ({"dimension": -1, "codimension": 7}, "dimension -1 is negative"),
        ({"dimension": 5, "codimension": 2}, "codimension 2 is not the 6 variables minus the dimension 5"),
        ({"degree": 0}, "degree 0 is below 1"),
        ({"generators": ["c_1"]}, "1 generators cannot cut out codimension 2"),
        ({"dimension": 6, "codimension": 0, "degree": 1}, "3 generators of an ideal of codimension 0"),
        ({"dimension": 6, "codimension": 0, "generators": [], "degree": 2}, "degree 2 of an ideal of codimension 0"),
    ],
)
def test_a_result_must_make_sense(change, why):
    """An ideal's numbers that contradict each other: impossible, whether fresh or from the cache."""
    from ag_attention._m2.schema import validate

    ideal = {
        "generators": ["c_3*c_5-c_2*c_6", "c_3*c_4-c_1*c_6", "c_2*c_4-c_1*c_5"],
        "variables": [f"c_{i}" for i in range(1, 7)],
        "dimension": 4,
        "codimension": 2,
        "degree": 3,
    }
    validate(ideal, IDEAL)
    validate({"dimension": 6, "codimension": 0, "generators": [], "degree": 1, "variables": ideal["variables"]}, IDEAL)
    with pytest.raises(
        M2OutputError, match=r"^Macaulay2's result for job does not make sense: result: " + re.escape(why)
    ):
        validate({**ideal, **change}, IDEAL, label="job")


def test_the_sense_of_every_cached_job():
    """The schemas of the jobs that are cached: implicitize, the Theorem 3.4 checks, an entry, an msolve count."""
    from ag_attention._algebra.implicitize import RESULT_SCHEMA
    from ag_attention._m2.schema import validate
    from ag_attention._reproduce.theorem34.symbolic import m2_result_schema

    quadric = [[[[0, 0, 1, 0, 1, 0], [1, 1]], [[0, 1, 0, 0, 0, 1], [-1, 1]]]]
    implicit = {
        "generators": ["c_3*c_5-c_2*c_6"],
        "terms": quadric,
        "variables": [f"c_{i}" for i in range(1, 7)],
        "dimension": 5,
        "codimension": 1,
        "degree": 2,
        "m2_version": "1.21",
    }
    validate(implicit, RESULT_SCHEMA)
    for bad, why in [
        ({"terms": [[[[0] * 6, [3, 1]]]]}, "generator 1 is a constant"),
        ({"terms": [[]]}, "generator 1 is zero"),
        ({"degree": -5}, "degree -5"),
        ({"degree": 3}, "degree 3 is above 2, the product of the 1 largest generator degrees"),
    ]:
        with pytest.raises(M2OutputError, match=re.escape(why)):
            validate({**implicit, **bad}, RESULT_SCHEMA)
    theorem34 = {
        "dimension": 5,
        "codimension": 1,
        "degree": 4,
        "generators": 1,
        "generator_degrees": [4],
        "rank_one_dimension": 3,
        "base_locus": "A or V",
        "points": [{"name": "p", "jacobian_rank": 1, "on_closure": True, "in_rank_one_closure": False}],
        "fibers": [],
        "literal": None,
        "closure_seconds": "0.1",
        "base_seconds": "0.1",
        "points_seconds": "0.1",
        "fibers_seconds": "0",
    }
    spec = m2_result_schema(["p"], [])
    validate(theorem34, spec)
    for bad, why in [
        ({"rank_one_dimension": 6}, "rank_one_dimension 6 is not between 0 and the dimension 5"),
        ({"generator_degrees": [4, 2]}, "2 generator degrees for 1 generators"),
        ({"generators": 0}, "0 generators cannot cut out codimension 1"),
        ({"generator_degrees": [0]}, "a generator of degree 0"),
        # plausible but impossible: degree 5 for the single quartic of (2,1,2) (Bezout: at most 4)
        ({"degree": 5}, "degree 5 is above 4, the product of the 1 largest generator degrees"),
        ({"points": [{**theorem34["points"][0], "jacobian_rank": -1}]}, "jacobian_rank -1 is negative"),
        ({"closure_seconds": "-3"}, "seconds"),
    ]:
        if bad.get("closure_seconds"):  # *_seconds are not the key "seconds": only their form is checked
            validate({**theorem34, **bad}, spec)
            continue
        with pytest.raises(M2OutputError, match=re.escape(why)):
            validate({**theorem34, **bad}, spec)
    entry = {"result": {"ok": True}, "seconds": 0.5, "backend": "local"}
    validate(entry, {"result": {"ok": bool}, "seconds": float, "backend": str})
    with pytest.raises(M2OutputError, match="seconds -1 is negative"):
        validate({**entry, "seconds": -1}, {"result": {"ok": bool}, "seconds": float, "backend": str})
    with pytest.raises(M2OutputError, match="count -2 is negative"):
        validate({"count": -2, "seconds": 1.0}, {"count": int, "seconds": float})
