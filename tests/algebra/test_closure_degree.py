"""``degree``: formula, msolve count and Macaulay2's kernel agree wherever more than one applies."""

import pytest

from ag_attention import Architecture
from ag_attention._algebra.closure_degree import degree
from ag_attention._errors import InvalidArgumentError


@pytest.mark.parametrize(
    "widths, ranks, tokens, value, fiber",
    [
        ((2, 1), (2,), 2, 4, 1),  # the resultant quartic
        ((2, 1), (1,), 2, 3, 2),  # d' = 1, a = 1: 2:1
        ((3, 1), (1,), 2, 45, 2),
        ((3, 1), (2,), 2, 108, 1),
        ((2, 2), (2,), 2, 20, 1),
        ((3, 1), (1,), 1, 15, 3),  # one token: the Chow variety of triangles, 3:1
        ((2, 2), (1,), 1, 10, 1),
    ],
)
def test_formula_and_count_agree(widths, ranks, tokens, value, fiber):
    r = degree(Architecture(widths, ranks, tokens=tokens), method="count", cache=False)
    assert r.degree == value == r.formula.degree and r.fiber_size == fiber
    assert [c.count for c in r.counts] == [value * fiber] * 2  # two primes, two sections
    assert len({c.prime for c in r.counts}) == 2 and len({c.seed for c in r.counts}) == 2
    assert "probabilistic" in r.certificate


@pytest.mark.m2
@pytest.mark.parametrize(
    "widths, ranks, tokens",
    [((2, 1), (2,), 2), ((2, 1), (1,), 2), ((2, 2), (2,), 2), ((3, 1), (1,), 2), ((2, 1), (1,), 1), ((2, 2), (1,), 1)],
)
def test_formula_and_macaulay2_agree(m2_local, widths, ranks, tokens):
    r = degree(Architecture(widths, ranks, tokens=tokens), method="m2", backend=m2_local, cache=False, timeout=300)
    assert r.degree == r.formula.degree and r.m2["degree"] == r.degree


def test_auto_is_the_formula_confirmed_by_a_count_where_that_is_fast():
    small = degree(Architecture((3, 1), (2,), tokens=2))
    assert small.method == "formula" and small.confirmed_by == ["count"] and "confirmed" in small.certificate
    large = degree(Architecture((5, 3), (3,), tokens=2))
    assert large.degree == 69598782000 and large.counts == () and "not counted" in large.certificate


def test_counts_are_cached(cache_dir):
    arch = Architecture((2, 2), (2,), tokens=2)
    first = degree(arch, method="count")
    again = degree(arch, method="count")
    assert not any(c.cached for c in first.counts) and all(c.cached for c in again.counts)
    assert again.degree == first.degree


def test_bad_arguments_are_named():
    arch = Architecture((2, 1), (2,), tokens=2)
    for kwargs, name in [
        (dict(method="x"), "method"),
        (dict(timeout=0), "timeout"),
        (dict(cache="no"), "cache"),
        (dict(count_limit=-1), "count_limit"),
    ]:
        with pytest.raises(InvalidArgumentError, match=name):
            degree(arch, **kwargs)
    with pytest.raises(InvalidArgumentError, match="one plain lightning layer"):
        degree(Architecture((2, 2, 2), (2, 2), tokens=2))


@pytest.mark.container
@pytest.mark.parametrize("widths, rank, tokens", [((2, 1), 1, 2), ((3, 1), 2, 2), ((2, 2), 1, 1)])
def test_count_in_the_container_equals_the_local_count(m2_container, msolve, widths, rank, tokens):
    """The image's msolve counts what the local one counts, including the 2:1 case and t = 1."""
    arch = Architecture(widths, (rank,), tokens=tokens)
    local = degree(arch, method="count", backend="local", cache=False)
    inside = degree(arch, method="count", backend=m2_container, cache=False)
    assert [c.count for c in inside.counts] == [c.count for c in local.counts]
    assert inside.degree == local.degree == degree(arch, method="formula").degree
    assert inside.msolve.endswith("(container)") and local.msolve.endswith("(local)")


@pytest.mark.container
@pytest.mark.parametrize("widths, rank, tokens", [((2, 1), 1, 2), ((2, 2), 1, 1)])
def test_macaulay2_degree_in_the_container(m2_container, widths, rank, tokens):
    """The image's Macaulay2 kernel gives the formula's degree (the 2:1 case and t = 1)."""
    arch = Architecture(widths, (rank,), tokens=tokens)
    r = degree(arch, method="m2", backend=m2_container, cache=False)
    assert r.degree == degree(arch, method="formula").degree and r.m2["backend"] == "container"


def test_a_forged_count_in_the_cache_is_recomputed(cache_dir):
    """A cached count edited to 0 (its checksum recomputed) must not become a degree: validated in sense."""
    import hashlib
    import json

    arch = Architecture((2, 1), (1,), tokens=2)
    first = degree(arch, method="count")
    forged = 0
    for entry in cache_dir.rglob("*.json"):
        data = json.loads(entry.read_text())
        if "count" in data.get("payload", {}):
            data["payload"]["count"] = 0
            canonical = json.dumps(data["payload"], sort_keys=True, separators=(",", ":"))
            data["sha256"] = hashlib.sha256(canonical.encode()).hexdigest()
            entry.write_text(json.dumps(data))
            forged += 1
    assert forged == 2
    again = degree(arch, method="count")
    assert again.degree == first.degree == 3 and not any(c.cached for c in again.counts)
