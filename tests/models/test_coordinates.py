"""One definition of the coordinates (ag_attention._models.coordinates), pinned by tests/data/coordinates.json.

The golden file holds, for a few small sizes, the names and labels of the
coordinates and their values at fixed integer weights ``(A, V)``.  The Python
evaluator (over every arithmetic it takes) and the Macaulay2 package
(``lightningParametrization``, run for real) must both reproduce it.
Regenerate it (after a deliberate change only) with
``.venv/bin/python tests/models/test_coordinates.py``.
"""

import json
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from ag_attention import Architecture, InvalidArgumentError, Parametrization
from ag_attention._exact.field import GFp
from ag_attention._exact.onelayer import reduced_point
from ag_attention._models import coordinates as C
from ag_attention._numeric import Float64

# not tests.helpers.DATA: this file also runs as a script (it regenerates the golden file)
GOLDEN = Path(__file__).resolve().parents[1] / "data" / "coordinates.json"
P = 2**31 - 1


#: (d, d', t, A, V): fixed integer weights, some negative; (1, 10) pins the "x" separator of the names
CASES = [
    (2, 1, 2, [[1, -2], [3, 4]], [[5, -6]]),
    (2, 2, 3, [[2, -1], [0, 3]], [[1, 4], [-3, 2]]),
    (3, 2, 2, [[1, 2, -1], [0, 3, 2], [-2, 1, 4]], [[2, -1, 3], [1, 5, -2]]),
    (2, 1, 1, [[1, 2], [3, 4]], [[1, -1]]),
    (1, 10, 2, [[3]], [[m - 4] for m in range(10)]),
]


def golden_case(d, e, t, A, V):
    case = {"d": d, "d_out": e, "tokens": t, "A": A, "V": V}
    if t >= 2:
        case["reduced"] = {
            "keys": [list(k) for k in C.reduced_keys(d, e)],
            "names": list(C.reduced_names(d, e)),
            "labels": C.labels(d, e, "reduced"),
            "named_labels": C.named_labels(C.reduced_names(d, e), d, e),
            "values": C.reduced_coordinates(A, V),
        }
    keys, _ = C.full_structure(d, e, t)
    case["full"] = {
        "keys": [[i, m, list(mono)] for i, m, mono in keys],
        "labels": C.labels(d, e, "full", t),
        "values": C.full_coordinates(A, V, t),
    }
    return case


def golden():
    return {
        "about": "coordinates of one lightning layer (ag_attention._models.coordinates; "
        "m2scripts/LightningAttention.m2): 0-based keys, labels, values at the integer weights A, V",
        "cases": [golden_case(*c) for c in CASES],
    }


@pytest.fixture(scope="module")
def stored():
    return json.loads(GOLDEN.read_text())


def test_the_evaluator_reproduces_the_golden_file(stored):
    assert golden() == stored


@pytest.mark.parametrize("n", range(len(CASES)))
def test_every_arithmetic_gives_the_golden_values(stored, n):
    case = stored["cases"][n]
    d, e, t, A, V = case["d"], case["d_out"], case["tokens"], case["A"], case["V"]
    want = case["full"]["values"]
    # Fractions, GF(p) on a batch of two points, float64, polynomials
    assert C.full_coordinates([[Fraction(x) for x in r] for r in A], [[Fraction(x) for x in r] for r in V], t) == want
    F = GFp(P)
    batch = lambda M: F.from_ints(np.array([M, M], dtype=object))  # noqa: E731
    got = np.stack(C.full_coordinates(batch(A), batch(V), t, F), axis=1)
    assert got.tolist() == [[w % P for w in want]] * 2
    floats = C.full_coordinates(np.array(A, dtype=float), np.array(V, dtype=float), t, Float64())
    # entries of at most 6 and coordinates of at most 24: every float64 operation on them is exact (far below
    # 2^53), whatever the order of summation, so the floats are compared exactly
    assert [float(x) for x in floats] == [float(w) for w in want]
    if t >= 2:
        red = case["reduced"]["values"]
        assert reduced_point(A, V) == red
        assert (
            Parametrization(Architecture((d, e), (d,), tokens=t), "reduced", "AV").evaluate(
                [x for r in A for x in r] + [x for r in V for x in r]
            )
            == red
        )
        assert C.coordinates(A, V, "reduced", t) == red


def test_golden_full_coordinates_are_the_coefficients_of_phi(stored):
    """Independent of the evaluator: sum of coefficient x monomial is phi(X)_i = sum_j (x_i^T A x_j) V x_j."""
    rng = np.random.default_rng(5)
    for case in stored["cases"]:
        d, e, t = case["d"], case["d_out"], case["tokens"]
        A, V = np.array(case["A"], dtype=object), np.array(case["V"], dtype=object)
        X = rng.integers(-4, 5, size=(t, d)).astype(object)
        want = np.array([sum((X[i] @ A @ X[j]) * (V @ X[j]) for j in range(t)) for i in range(t)], dtype=object)
        got = np.zeros((t, e), dtype=object)
        flat = X.ravel()
        for (i, m, mono), value in zip(case["full"]["keys"], case["full"]["values"]):
            got[i, m] += value * flat[mono[0]] * flat[mono[1]] * flat[mono[2]]
        assert (got == want).all()


def test_labels_and_names(stored):
    case = stored["cases"][0]
    assert case["reduced"]["labels"][1] == "q[1,1] coefficient of z1*z2"
    assert case["reduced"]["named_labels"][1] == "q11z12: coefficient of z1*z2 in q[1,1] = (A_1.z)(V_1.z)"
    assert case["full"]["labels"][0] == "(y1)_1 coefficient of x1_1*x1_1*x1_1"
    assert stored["cases"][-1]["reduced"]["names"][-1] == "q1x10z1x1"
    par = Parametrization(Architecture((3, 2), (3,), tokens=2), "full")
    assert [c.label for c in par.coordinates] == C.labels(3, 2, "full", 2)
    assert C.labels(2, 1, "full", 2, sep=": ")[0] == "(y1)_1: coefficient of x1_1*x1_1*x1_1"
    assert C.reduced_label((0, 1, 0, 2), sep=": ") == "q[1,2]: coefficient of z1*z3"


def test_one_layer_validation_names_the_value():
    for arch, coords, text in [
        (Architecture((2, 1), (2,), tokens=1), "reduced", "tokens=1: reduced coordinates need t >= 2"),
        (Architecture((2, 2, 1), (2, 2)), None, "widths=(2, 2, 1): x is for one layer"),
        (Architecture((2, 1), (2,), normalized=True), None, "x is for one plain lightning layer"),
        (Architecture((2, 1), (2,)), "partial", "coords='partial'"),
        ("2,1", None, "arch='2,1'"),
    ]:
        with pytest.raises(InvalidArgumentError, match=text.replace("(", r"\(").replace(")", r"\)")):
            C.check_one_layer(arch, coords, "x")
    assert C.one_layer_problem(Architecture((2, 1), (2,), tokens=1), "full") is None
    with pytest.raises(InvalidArgumentError, match="tokens=1"):
        C.coordinates([[1]], [[1]], "reduced", tokens=1)
    with pytest.raises(InvalidArgumentError, match="coords='x'"):
        C.labels(2, 1, "x")


@pytest.mark.m2
def test_the_macaulay2_package_reproduces_the_golden_file(m2_local, stored):
    """lightningParametrization of m2scripts/LightningAttention.m2 gives the golden names and values."""
    from ag_attention._algebra.implicitize import parametrization_call
    from ag_attention._m2.jobs import run_json

    jobs, schema = [], {}
    for n, case in enumerate(stored["cases"]):
        d, e, t = case["d"], case["d_out"], case["tokens"]
        arch = Architecture((d, e), (d,), tokens=t)
        weights = [x for r in case["A"] + case["V"] for x in r]
        for coords in ("reduced", "full") if t >= 2 else ("full",):
            key = f"{n} {coords}"
            jobs.append(
                f'"{key}" => (P := {parametrization_call(arch, coords, "QQ", "AV")}; '
                f'f := map(QQ, P#"weightRing", matrix {{{{{", ".join(map(str, weights))}}}}}); '
                f'hashTable {{"values" => apply(coordinatePolynomials P, p -> toString f p), '
                f'"names" => coordinateNames({d}, {e})}})'
            )
            schema[key] = {"values": [str], "names": [str]}
    body = "debug LightningAttention;\nresult = hashTable {\n  " + ",\n  ".join(jobs) + "};"
    got = run_json(body, schema=schema, backend=m2_local, timeout=300, cache=False).payload
    for n, case in enumerate(stored["cases"]):
        for coords in ("reduced", "full") if case["tokens"] >= 2 else ("full",):
            out = got[f"{n} {coords}"]
            assert [int(v) for v in out["values"]] == case[coords]["values"], (n, coords)
            if coords == "reduced":
                assert out["names"] == case["reduced"]["names"]


def dump(obj, pad=""):
    """JSON with one line per string and per list of numbers or keys (readable diffs)."""
    inner = pad + "  "
    if isinstance(obj, dict):
        items = [f"{inner}{json.dumps(k)}: {dump(v, inner)}" for k, v in obj.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(obj, list) and any(isinstance(x, (dict, str)) for x in obj):
        return "[\n" + ",\n".join(inner + dump(x, inner) for x in obj) + "\n" + pad + "]"
    return json.dumps(obj)


if __name__ == "__main__":
    GOLDEN.write_text(dump(golden()) + "\n")
    print(f"wrote {GOLDEN}", file=sys.stderr)
