"""implicitize (ag_attention._algebra.implicitize): scripts from validated data, results validated, real ideals."""

import json

import flint
import pytest

from ag_attention import Architecture
from ag_attention._algebra.implicitize import TERMS_OF, check_field, implicitize, parametrization_call
from ag_attention._errors import InvalidArgumentError, M2OutputError
from ag_attention._m2.cache import ResultCache
from ag_attention._m2.jobs import run_json
from ag_attention._models.parametrization import Parametrization
from tests.helpers import lazy_import, ok_m2

sympy = lazy_import("sympy")

SIZES = [
    (Architecture((2, 1), (2,), tokens=2), "reduced", "AV"),
    (Architecture((2, 1), (2,), tokens=2), "full", "AV"),
    (Architecture((3, 2), (3,), tokens=2), "reduced", "AV"),
    (Architecture((2, 2), (2,), tokens=3), "full", "AV"),
    (Architecture((3, 1), (2,), tokens=2), "reduced", "QKV"),
    (Architecture((2, 2), (1,), tokens=2), "full", "QKV"),
]


@pytest.mark.m2
def test_m2_parametrization_equals_python(m2_local):
    """The M2 package and the Python module build the same coordinates, in the same order."""
    calls = [parametrization_call(a, c, "QQ", w) for a, c, w in SIZES]
    body = (
        "result = hashTable apply(#L, i -> toString i => (P := value L#i; hashTable {\n"
        '  "polynomials" => apply(coordinatePolynomials P, termsOf),\n'
        '  "variables" => apply(gens ambient P#"weightRing", toString)}));\n'
    )
    body = TERMS_OF + "L = {" + ", ".join(json.dumps(c) for c in calls) + "};\n" + body
    schema = {str(i): {"polynomials": [[([int], (int, int))]], "variables": [str]} for i in range(len(SIZES))}
    job = run_json(body, schema=schema, backend=m2_local, timeout=120, cache=False)
    for i, (arch, coords, weights) in enumerate(SIZES):
        py = Parametrization(arch, coords, params=weights)
        got = job.payload[str(i)]
        assert tuple(got["variables"]) == py.variables
        assert len(got["polynomials"]) == len(py.polynomials)
        for terms, f in zip(got["polynomials"], py.polynomials):
            assert {tuple(e): flint.fmpq(n, d) for e, (n, d) in terms} == {
                k: flint.fmpq(v) for k, v in f.to_dict().items()
            }


def resultant_of_two_binary_quadrics():
    c = sympy.symbols("c_1:7")
    z = sympy.Symbol("z")
    q1 = c[0] * z**2 + c[1] * z + c[2]
    q2 = c[3] * z**2 + c[4] * z + c[5]
    return sympy.Poly(sympy.resultant(q1, q2, z), *c)


@pytest.mark.m2
def test_smallest_case_is_the_resultant_quartic(m2_local):
    arch = Architecture((2, 1), (2,), tokens=2)
    r = implicitize(arch, backend=m2_local, cache=False)
    assert (len(r.generators), r.generator_degrees, r.dimension, r.degree, r.codimension) == (1, [4], 5, 4, 1)
    res = resultant_of_two_binary_quadrics()
    f = sympy.Poly(sympy.sympify(str(r.generators[0]).replace("^", "**")), *sympy.symbols("c_1:7"))
    assert f == res or f == -res
    full = implicitize(arch, coords="full", backend=m2_local, cache=False)
    assert (full.dimension, full.degree, full.ambient_dimension) == (5, 4, 20)
    assert sorted(full.generator_degrees) == [1] * 14 + [4]
    mod_p = implicitize(arch, field="ZZ/32003", backend=m2_local, cache=False)
    assert (mod_p.dimension, mod_p.degree) == (5, 4)
    # QKV weights (A = Q^T K of degree 2): the same variety, the same degree
    qkv = implicitize(arch, weights="QKV", backend=m2_local, cache=False)
    assert (qkv.generator_strings, qkv.dimension, qkv.degree) == (r.generator_strings, 5, 4)


@pytest.mark.m2
def test_closure_vanishes_on_the_image(m2_local, rng):
    arch = Architecture((3, 1), (1,), tokens=2)
    r = implicitize(arch, backend=m2_local, cache=False)
    assert r.dimension == 7  # Cor. 3.3: 1 * 5 + 3 - 1
    par = Parametrization(arch, "reduced", params="AV")
    for _ in range(3):
        u, v, w = (rng.integers(-9, 10, size=3) for _ in range(3))
        import numpy as np

        point = par.weights_vector(A=np.outer(u, v), V=w.reshape(1, 3))
        values = [flint.fmpq(x) for x in par.evaluate(point)]
        assert all(g(*values) == 0 for g in r.generators)


@pytest.mark.m2
def test_generators_are_polynomials_over_their_field_and_export(m2_local):
    """Exponent vectors, not a parser: QQ and GF(p) polynomials, sympy, Macaulay2 code that M2 reads back."""
    arch = Architecture((2, 2), (1,), tokens=2)
    q = implicitize(arch, backend=m2_local, cache=False)
    p = implicitize(arch, field="ZZ/32003", backend=m2_local, cache=False)
    assert type(q.generators[0]).__name__ == "fmpq_mpoly" and type(p.generators[0]).__name__ == "nmod_mpoly"
    assert sorted(q.generator_degrees) == sorted(p.generator_degrees)
    for f in p.generators:
        assert all(0 <= int(c) < 32003 for c in f.coeffs())
    polys = q.to_sympy()
    assert all(isinstance(f, sympy.Poly) and f.gens == sympy.symbols(q.variables) for f in polys)
    assert [
        sympy.expand(f.as_expr() - sympy.sympify(str(g).replace("^", "**"))) for f, g in zip(polys, q.generators)
    ] == [0] * len(q.generators)
    assert all(f.get_domain() == sympy.GF(32003) for f in p.to_sympy())
    assert [f.as_expr() for f in p.to_sympy()] == [
        sympy.Poly(sympy.sympify(str(g).replace("^", "**")), *sympy.symbols(p.variables), modulus=32003).as_expr()
        for g in p.generators
    ]
    labels = q.to_dict()["coordinate_labels"]
    assert len(labels) == q.ambient_dimension and labels[1] == "c_2 = q[1,1]: coefficient of z1*z2"
    code = q.to_m2() + 'result = hashTable {"dim" => dim I, "degree" => degree I, "n" => numgens I};'
    job = run_json(code, schema={"dim": int, "degree": int, "n": int}, backend=m2_local, timeout=60, cache=False)
    assert job.payload == {"dim": q.dimension, "degree": q.degree, "n": len(q.generators)}


def test_to_sympy_gives_polys_over_the_naturally_ordered_coordinates():
    """sympy sorts c_12 before c_3; to_sympy() does not: every Poly has gens (c_1, ..., c_12), also one that
    omits most of them, so an exponent vector means the same coordinates in every generator."""
    from fractions import Fraction

    from ag_attention._algebra.implicitize import Implicitization

    names = tuple(f"c_{i}" for i in range(1, 13))
    unit = [tuple(int(j == i) for j in range(12)) for i in range(12)]
    terms = (((unit[11], Fraction(1, 2)), (unit[2], Fraction(3))), ((unit[9], Fraction(-1)),))
    fields = dict(
        architecture=Architecture((2, 1), (2,), tokens=2),
        coordinates="reduced",
        weights="AV",
        variables=names,
        generator_strings=("3*c_3+(1/2)*c_12", "-c_10"),
        generator_terms=terms,
        dimension=10,
        codimension=2,
        degree=1,
        backend="local",
        m2_version="1.21",
        seconds=0.0,
        cached=False,
    )
    first, second = Implicitization(field="QQ", **fields).to_sympy()
    c = sympy.symbols(names)
    assert first.gens == second.gens == c and str(first.gens[2]) == "c_3" and str(first.gens[11]) == "c_12"
    assert first.get_domain() == sympy.QQ and first.as_expr() == 3 * c[2] + c[11] / 2
    assert first.monoms() == [unit[2], unit[11]] and second.monoms() == [unit[9]]
    assert first.coeff_monomial(c[11]) == sympy.Rational(1, 2)
    modular = Implicitization(field="ZZ/7", **fields).to_sympy()[0]
    assert (
        modular.gens == c and modular.get_domain() == sympy.GF(7) and modular.coeff_monomial(c[11]) % 7 == 4
    )  # 1/2, printed -3


@pytest.mark.m2
@pytest.mark.container
def test_a_cache_hit_from_another_backend_says_so(m2_local, m2_container, cache_dir):
    arch = Architecture((2, 1), (1,), tokens=2)
    local = implicitize(arch, backend=m2_local)
    hit = implicitize(arch, backend=m2_container)
    assert not local.cached and hit.cached and hit.generator_strings == local.generator_strings
    assert (hit.backend, hit.requested_backend) == ("local", "container")
    assert "computed by the local backend, not by the container backend asked for" in str(hit)
    assert hit.to_dict()["requested_backend"] == "container" and hit.to_dict()["backend"] == "local"
    assert str(implicitize(arch, backend=m2_local)).endswith("(cached)")


def test_scripts_only_from_validated_data():
    arch = Architecture((2, 1), (2,), tokens=2)
    assert parametrization_call(arch) == (
        'lightningParametrization(2, 1, AttentionRank => null, Tokens => 2, Coordinates => "reduced", '
        'Weights => "AV", CoefficientRing => QQ)'
    )
    assert "AttentionRank => 1" in parametrization_call(Architecture((3, 1), (1,)), field_="ZZ/32003")
    for bad in ["ZZ/32004", "ZZ/1", "RR", "QQ; run rm", "ZZ/2147483659"]:
        with pytest.raises(InvalidArgumentError, match="field"):
            check_field(bad)
    with pytest.raises(InvalidArgumentError, match="coords"):
        parametrization_call(arch, coords="partial")
    with pytest.raises(InvalidArgumentError, match="t >= 2"):
        parametrization_call(arch.with_(tokens=1))
    with pytest.raises(InvalidArgumentError, match="one plain lightning layer"):
        parametrization_call(Architecture((2, 2, 1), (2, 2)))


#: a result of the right form and sense for the 6 reduced coordinates of (2, 1) (not its true closure: these tests
#: are about form; a fake M2 prints it)
_GOOD = {
    "generators": ["c_1*c_2-c_3"],
    "terms": [[[[1, 1, 0, 0, 0, 0], [1, 1]], [[0, 0, 1, 0, 0, 0], [-1, 1]]]],
    "variables": ["c_1", "c_2", "c_3", "c_4", "c_5", "c_6"],
    "dimension": 5,
    "codimension": 1,
    "degree": 2,
    "m2_version": "fake",
}


@pytest.mark.parametrize(
    "change, complaint",
    [
        ({"dimension": "2"}, 'result["dimension"]: expected an integer'),
        ({"dimension": True}, 'result["dimension"]: expected an integer'),
        ({"generators": "c_1"}, 'result["generators"]: expected a list of a string'),
        ({"terms": [[[[1, 1], [1, 1]]]]}, "generators given by their terms in the variables"),
        (
            {
                "variables": ["c_1", "c_2", "c_3"],
                "dimension": 2,
                "terms": [[[[1, 1, 0], [1, 1]], [[0, 0, 1], [-1, 1]]]],
            },
            "a closure in the coordinates of widths 2,1 ranks 2",
        ),
        ({"terms": []}, "1 generators"),
        ({"degree": None}, 'result["degree"]: expected an integer'),
        ({"variables": None}, 'result["variables"]'),
        ("missing", "the key 'codimension' is missing"),
    ],
)
def test_results_of_the_wrong_form_are_output_errors_and_not_cached(tmp_path, cache_dir, change, complaint):
    from ag_attention._algebra.implicitize import implicitize

    payload = {k: v for k, v in _GOOD.items() if k != "codimension"} if change == "missing" else {**_GOOD, **change}
    b = ok_m2(tmp_path, json.dumps(payload))
    with pytest.raises(M2OutputError) as err:
        implicitize(Architecture((2, 1), (2,), tokens=2), backend=b)
    assert complaint in str(err.value)
    assert not list(cache_dir.rglob("*.json"))  # nothing unvalidated is cached


def test_a_result_computed_by_another_macaulay2_is_an_output_error(tmp_path, cache_dir):
    from ag_attention._algebra.implicitize import implicitize

    b = ok_m2(tmp_path, json.dumps({**_GOOD, "m2_version": "1.20"}))
    with pytest.raises(M2OutputError, match="computed by Macaulay2 1.20, not fake"):
        implicitize(Architecture((2, 1), (2,), tokens=2), backend=b, cache=False)


def test_cache_hits_are_validated_too(tmp_path, cache_dir):
    from ag_attention._algebra.implicitize import implicitize

    arch = Architecture((2, 1), (2,), tokens=2)
    b = ok_m2(tmp_path, json.dumps(_GOOD))
    assert not implicitize(arch, backend=b).cached
    assert implicitize(arch, backend=b).cached
    (entry,) = cache_dir.rglob("*.json")
    cache = ResultCache(cache_dir)
    key = entry.stem
    # a valid checksum, but no "result" / a result of the wrong form: recomputed, not a KeyError
    for stored in (
        {"seconds": 1.0, "backend": "local"},
        {"result": {**_GOOD, "degree": "two"}, "seconds": 1.0, "backend": "local"},
        {"result": _GOOD, "seconds": "1", "backend": "local"},
    ):
        cache.put(key, stored)
        r = implicitize(arch, backend=b)
        assert not r.cached and r.degree == 2
        assert implicitize(arch, backend=b).cached  # rewritten, valid again


@pytest.mark.parametrize(
    "kwargs, named",
    [
        (dict(cache="no"), "cache"),
        (dict(timeout=True), "timeout"),
        (dict(timeout=float("nan")), "timeout"),
        (dict(weights=""), "weights"),
    ],
)
def test_implicitize_refuses_odd_arguments_before_any_job(kwargs, named, monkeypatch):
    # no backend is consulted: the arguments are refused first
    from ag_attention._algebra.implicitize import implicitize
    from ag_attention._m2 import jobs

    monkeypatch.setattr(jobs, "get_backend", lambda *a, **k: pytest.fail("a backend was consulted"))

    with pytest.raises(InvalidArgumentError, match=named):
        implicitize(Architecture((2, 1), (2,), tokens=2), **kwargs)


@pytest.mark.m2
def test_a_cached_result_of_another_job_is_recomputed(m2_local, cache_dir):
    """A cache entry consistent in itself (its sense checks pass) but with another ring than this job's: the
    closure is computed again, not served."""
    import hashlib
    import json

    from ag_attention import Architecture, implicitize

    arch = Architecture((2, 1), (1,), tokens=2)
    first = implicitize(arch, field="ZZ/101", backend=m2_local)
    (entry,) = [p for p in cache_dir.rglob("*.json")]
    data = json.loads(entry.read_text())
    result = data["payload"]["result"]
    result["variables"] = result["variables"] + ["c_extra"]  # 7 coordinates, where (2, 1) has 6
    result["terms"] = [[[exps + [0], frac] for exps, frac in gen] for gen in result["terms"]]
    result["codimension"] += 1  # consistent in itself: codimension = variables - dimension
    canonical = json.dumps(data["payload"], sort_keys=True, separators=(",", ":"))
    data["sha256"] = hashlib.sha256(canonical.encode()).hexdigest()
    entry.write_text(json.dumps(data))
    again = implicitize(arch, field="ZZ/101", backend=m2_local)
    assert not again.cached and again.variables == first.variables and again.degree == first.degree
