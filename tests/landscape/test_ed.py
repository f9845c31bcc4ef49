"""ED degrees of one layer's closure: counted in the weights with the real msolve, and on the implicit side
with the real Macaulay2; a count with the critical locus left in is caught."""

import functools
import json

import pytest

from ag_attention import Architecture
from ag_attention._errors import InvalidArgumentError
from ag_attention._landscape import ed as ed_module
from ag_attention._landscape.ed import EDDegree, ed_degree
from ag_attention._landscape.system import critical_system

LAYER = Architecture.single_layer(2, 1, None, tokens=2)


@pytest.mark.parametrize("metric, expected", [("euclidean", 6), ("generic", 14), ("data", 14)])
def test_counts_of_the_quartic_hypersurface(msolve, metric, expected):
    r = ed_degree(LAYER, metric=metric, method="count", seed=0)
    assert isinstance(r, EDDegree) and r.method == "count" and r.ed_degree == expected
    assert [c.prime for c in r.counts] == [2147483647, 2147483629] and r.fiber == 1
    assert r.counts[0].solutions == r.counts[1].solutions == expected
    d = json.loads(json.dumps(r.to_dict()))
    for key in ("ed_degree", "metric", "method", "certificate", "prime", "seed", "seconds", "provenance"):
        assert key in d
    assert d["certificate"].startswith("probabilistic") and "reduced" in d["coordinates"]


def test_the_fiber_of_a_rank_one_layer_is_divided_out(msolve):
    # d = 2, d' = 1, a = 1: phi is 2:1 (Cor. A.2), so the weights carry each critical point twice
    r = ed_degree(Architecture.single_layer(2, 1, 1, tokens=2), metric="euclidean", method="count")
    assert (r.ed_degree, r.fiber, r.counts[0].solutions) == (2, 2, 4)


def test_a_count_with_the_critical_locus_left_in_is_wrong(msolve, monkeypatch):
    # a = 1 < d = 2: without the Rabinowitsch variable, the critical points of the loss on the critical locus
    # of phi (rank [A; V] <= 1) are counted too: 12 solutions, not 4, so the test above would fail
    monkeypatch.setattr(ed_module, "critical_system", functools.partial(critical_system, remove_critical=False))
    r = ed_degree(Architecture.single_layer(2, 1, 1, tokens=2), metric="euclidean", method="count")
    assert (r.counts[0].solutions, r.ed_degree) == (12, 6)


@pytest.mark.parametrize(
    "kwargs, text",
    [
        ({"metric": "cosine"}, "metric='cosine'"),
        ({"method": "homotopy"}, "method='homotopy'"),
        ({"metric": "generic", "samples": 5}, "samples=5: only for metric='data'"),
        ({"timeout": -1}, "timeout"),
    ],
)
def test_bad_arguments_are_refused_by_name(kwargs, text):
    with pytest.raises(InvalidArgumentError, match=text):
        ed_degree(LAYER, **kwargs)


@pytest.mark.parametrize(
    "arch, kwargs, text",
    [
        (Architecture.single_layer(2, 1, None, tokens=1), {"method": "count"}, "tokens=1 with method='count'"),
        (Architecture.single_layer(2, 1, None, tokens=1), {"metric": "data"}, "metric='data' with tokens=1"),
        (Architecture((2, 1), (2,), heads=2, tokens=2), {}, "one head"),
        (Architecture((2, 2, 1), (2, 2), tokens=2), {}, "one layer"),
    ],
)
def test_other_architectures_are_refused(arch, kwargs, text):
    with pytest.raises(InvalidArgumentError, match=text):
        ed_degree(arch, **kwargs)


def test_auto_runs_both_routes_side_by_side_and_names_them(msolve):
    r = ed_degree(LAYER, metric="generic")
    assert (r.method, r.ed_degree, r.lower_bound) == ("count", 14, 14)
    assert [x.name for x in r.routes] == ["monodromy (certified)", "count (msolve, two primes)"]
    assert all(x.outcome.startswith("ok") for x in r.routes)
    d = r.to_dict()
    assert d["provenance"]["msolve"] and d["lower_bound"] == 14 and d["final"] and d["upper_bound"] == 34
    assert d["monodromy"]["stop"] in ("trace test", "known count")  # msolve's first count may stop it
    assert "route            monodromy (certified): ok" in str(r)
    m = ed_degree(Architecture.single_layer(2, 1, 1, tokens=2), metric="generic", method="monodromy")
    # two solutions in the weights per critical point: 20 found and certified, 10 distinct images
    assert (m.method, m.ed_degree, m.lower_bound, m.fiber, m.monodromy["found"]) == ("monodromy", 10, 10, 2, 20)
    assert m.certificate.startswith("numerical, with a proven lower bound") and "ED degree >= 10" in m.certificate


def test_a_rank_above_the_width_is_said_to_be_capped(msolve):
    r = ed_degree(Architecture.single_layer(2, 1, 3, tokens=2), metric="euclidean", method="count")
    assert r.ed_degree == 6 and any("a = 3 > d = 2" in n for n in r.notes)


def test_a_count_that_times_out_names_every_route(msolve, monkeypatch):
    from ag_attention._errors import MSolveTimeoutError

    def slow(*args, **kwargs):
        raise MSolveTimeoutError("msolve ED count (local backend)", 1.0)

    monkeypatch.setattr(ed_module, "_count", slow)
    # the count alone, at its limit: no value, but what is proven (the Bezout bound), said in the first line
    r = ed_degree(LAYER, metric="euclidean", method="count", timeout=1)
    assert (r.final, r.ed_degree, r.method, r.upper_bound, r.lower_bound) == (False, None, "undecided", 34, 0)
    assert str(r).splitlines()[0].startswith("ED degree of widths 2,1 ranks 2 t=2 (AV) (euclidean): NOT DECIDED")
    assert "msolve counts did not finish" in r.status and r.to_dict()["ed_degree"] is None
    assert [x.outcome.split(" ")[0] for x in r.routes] == ["timed"]
    # auto keeps the monodromy's answer and says the count timed out; Macaulay2 is not started
    r = ed_degree(LAYER, metric="euclidean", timeout=5)
    assert r.method == "monodromy" and r.ed_degree == 6 and r.lower_bound == 6 and r.final
    assert [x.outcome.split(" ")[0] for x in r.routes] == ["ok", "timed"]
