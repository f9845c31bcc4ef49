"""The counting primes of the ED-degree routes (issue 46): keyed by the seed and the input, reproducible, from
``[2^30, 2^31)``, and the error bound the results state (the routes: test_ideal_ed.py, test_models.py)."""

from ag_attention import ideal_ed_degree
from ag_attention._landscape import primes as drawn
from ag_attention._landscape.ideal_ed import parse_polynomial

XY = ["x", "y"]


def test_the_primes_are_keyed_by_the_seed_and_the_input():
    """The same seed and input (however written) give the same primes; another input, or another seed, others."""

    def draw(text, seed=7, metric="euclidean"):
        return drawn.draw_primes([parse_polynomial(text, XY)], metric, seed, [], "generators").primes

    first = draw("x^2 + 4*y^2 - 4")
    assert first == draw("x^2 + 4*y^2 - 4") == draw("4*y^2 + x**2 - 2*2") and len(set(first)) == 3
    assert all(2**30 <= p < 2**31 and all(p % d for d in range(2, 46341)) for p in first)
    others = {draw(f"x^2 + {k}*y^2 - 4") for k in range(5, 45)} | {draw("x^2 + 4*y^2 - 4", s) for s in range(8, 48)}
    others |= {draw("x^2 + 4*y^2 - 4", 7, [[1, 0], [0, k]]) for k in range(2, 42)}
    assert len(others) == 120 and first not in others
    assert len({p for primes in others for p in primes[:2]}) > 235  # (repeats: a birthday among 50 million)
    r = ideal_ed_degree(XY, ["x^2 + 4*y^2 - 4"], seed=7, cache=False)
    assert [c[0] for c in r.counts] == list(first[:2]) and [c[1] for c in r.counts] == [7, 8]
    assert ideal_ed_degree(XY, ["x^2 + 4*y^2 - 4"], seed=7, cache=False).counts == r.counts


def test_the_stated_bound_and_its_hypotheses():
    N = 50_697_537
    assert drawn.primes_in(2**30, 2**31) == N and drawn.primes_in(2**14, 2**15) == 1612
    assert drawn.error_bound(N) == 3 * (1000 / N + 1000 / 2**30) ** 2 < 1.3e-9
    assert drawn.error_bound(N, bad_primes=2, degree=10) < 1e-12 and drawn.error_bound(N, bad_primes=N) == 1.0
    d = drawn.draw_primes([parse_polynomial("x^2 + 777444842*y^2 - 1", XY)], "euclidean", 0, [], "generators")
    assert d.pool == N - 1  # (777444842 has 30 bits: at most one prime of the range divides it)
    assert "error probability <= 1.3e-09 if at most 1,000 of them are bad" in d.certificate(d.primes[:2])


def test_a_prime_dividing_a_value_of_the_data_is_skipped(monkeypatch):
    """draw_for (the critical-point counts): in a small range, a value that is a multiple of the first prime the
    key draws makes the draw skip it, say so, and take the next."""
    monkeypatch.setattr(drawn, "PRIME_RANGE", (2**14, 2**14 + 400))
    first = drawn.draw_for("some data", [3, 5], 1, [], "count").primes
    notes = []
    skipped = drawn.draw_for("some data", [3, 5 * first[0]], 1, notes, "count").primes
    assert skipped[:2] == first[1:] and first[0] not in skipped
    assert notes == [f"prime {first[0]} skipped: {first[0]} divides the coefficient {5 * first[0]}"]
    assert drawn.text_coefficients(["3*a1_1^2*v2_1-17*a1_1*s+5", "x12^31-2147483647"]) == [3, 17, 5, 2147483647]
