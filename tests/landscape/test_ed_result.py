"""The result of an ED degree: what it says when decided and when not, as text and as JSON."""

import json

from ag_attention import Architecture
from ag_attention._landscape.critical import Route
from ag_attention._landscape.ed_result import EDCount, EDDegree

LAYER = Architecture.single_layer(2, 1, None, tokens=2)


def test_a_decided_count_says_its_value_and_certificate():
    counts = (EDCount(2147483647, 0, 6, 0.1), EDCount(2147483629, 1, 6, 0.2))
    r = EDDegree(LAYER, "euclidean", "identity", "count", 6, 1, counts, 2147483647, 0, 0.5, upper_bound=34)
    assert r.final and r.headline().endswith(": 6") and r.certificate.startswith("probabilistic")
    d = json.loads(json.dumps(r.to_dict()))
    assert d["ed_degree"] == 6 and d["counts"][1] == {"prime": 2147483629, "seed": 1, "solutions": 6, "seconds": 0.2}
    assert "  metric           euclidean: identity" in str(r) and repr(r).endswith("metric euclidean: 6, count)")


def test_an_undecided_result_says_what_is_proven():
    r = EDDegree(
        LAYER,
        "generic",
        "a random symmetric form (seed 0)",
        "undecided",
        None,
        1,
        (),
        None,
        0,
        1.0,
        routes=(Route("count (msolve, two primes)", 1.0, "timed out"),),
        lower_bound=5,
        upper_bound=34,
        bounds=(("upper", "Bezout", 34),),
        prediction={"value": 14, "status": "conjecture"},
        status="the msolve counts did not finish",
    )
    assert not r.final and r.to_dict()["ed_degree"] is None
    head = r.headline()
    assert "NOT DECIDED (the msolve counts did not finish)" in head and ">= 5 (proven lower bound)" in head
    assert "the Segre formula predicts 14 (a conjecture)" in head and r.certificate.startswith("not decided")
    assert "  upper bound      34 (Bezout)" in str(r) and "  prediction       14 (conjecture)" in str(r)
