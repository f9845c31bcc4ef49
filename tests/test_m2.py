"""The Macaulay2 bridge with the real Macaulay2 (local) and the real image (container)."""

import json
import signal
import subprocess
import sys
import tempfile
import time

import flint
import pytest
import sympy

from ag_attention import Architecture
from ag_attention._errors import M2ExecutionError, M2TimeoutError
from ag_attention._m2.implicitize import TERMS_OF, implicitize, parametrization_call
from ag_attention._m2.jobs import run_json
from ag_attention._m2.runner import MEMORY_ENV, ContainerBackend, LocalBackend, M2MemoryError, package_file
from ag_attention._models.parametrization import Parametrization

from tests.helpers import processes_matching

pytestmark = pytest.mark.m2


def test_package_check_passes(m2_local):
    job = run_json('check "LightningAttention";\nresult = hashTable {"ok" => true};', schema={"ok": bool}, backend=m2_local, timeout=300, cache=False)
    assert job.payload == {"ok": True}


def test_loading_the_package_keeps_core_weights(m2_local):
    """needsPackage "LightningAttention" must not shadow Core's option Weights (weighted rings)."""
    body = (
        "R = QQ[x, y, Weights => {3, 1}];\n"
        "P = lightningParametrization(2, 1, Weights => \"QKV\", AttentionRank => 1);\n"
        'result = hashTable {"lead" => toString leadTerm(x + y^2), "core" => package Weights === Core, '
        '"weights" => P#"weights"};'
    )
    job = run_json(body, backend=m2_local, timeout=120, cache=False, schema={"lead": str, "core": bool, "weights": str})
    assert job.payload == {"lead": "x", "core": True, "weights": "QKV"}


def test_package_header_and_install_instructions():
    text = package_file().read_text()
    assert "github.com/ag-attention" not in text
    assert 'installPackage("LightningAttention", FileName => "/path/to/LightningAttention.m2")' in text
    assert 'needsPackage("LightningAttention", FileName => "/path/to/LightningAttention.m2")' in text


LIST = 'L = toList(1..100000000);\nresult = hashTable {"n" => #L};'  # 800 MB in one allocation


def test_memory_limit_reaches_macaulay2(m2_local, monkeypatch):
    monkeypatch.delenv(MEMORY_ENV, raising=False)
    body = 'result = hashTable {"limits" => get "/proc/self/limits"};'
    for backend, want in [(LocalBackend(m2_local.executable), 4 * 2**30),
                          (LocalBackend(m2_local.executable, memory="1g"), 2**30)]:
        job = run_json(body, schema={"limits": str}, backend=backend, timeout=120, cache=False)
        (line,) = [ln for ln in job.payload["limits"].splitlines() if ln.startswith("Max address space")]
        assert line.split()[3:5] == [str(want)] * 2


def test_a_real_job_beyond_the_memory_limit_is_a_clear_error(m2_local, monkeypatch):
    monkeypatch.delenv(MEMORY_ENV, raising=False)
    b = LocalBackend(m2_local.executable, memory="400m")
    with pytest.raises(M2MemoryError) as err:
        run_json(LIST, schema={"n": int}, backend=b, timeout=300, cache=False, label="a long list")
    text = str(err.value)
    assert "a long list ran out of memory" in text and "400 MiB of address space" in text
    assert "AG_ATTENTION_M2_MEMORY=800m" in text and "out of memory trying to allocate" in text
    monkeypatch.setenv(MEMORY_ENV, "400m")  # the same through the environment
    with pytest.raises(M2MemoryError, match="from AG_ATTENTION_M2_MEMORY"):
        run_json(LIST, schema={"n": int}, backend=LocalBackend(m2_local.executable), timeout=300, cache=False)


@pytest.mark.container
def test_container_memory_limit_is_a_clear_error(m2_container):
    b = ContainerBackend(image=m2_container.image, engine=m2_container.engine, memory="300m")
    with pytest.raises(M2MemoryError, match=r"300 MiB \(--memory\)"):
        run_json(LIST, schema={"n": int}, backend=b, timeout=300, cache=False)


SIZES = [
    (Architecture((2, 1), (2,), tokens=2), "reduced", "AV"),
    (Architecture((2, 1), (2,), tokens=2), "full", "AV"),
    (Architecture((3, 2), (3,), tokens=2), "reduced", "AV"),
    (Architecture((2, 2), (2,), tokens=3), "full", "AV"),
    (Architecture((3, 1), (2,), tokens=2), "reduced", "QKV"),
    (Architecture((2, 2), (1,), tokens=2), "full", "QKV"),
]


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
            assert {tuple(e): flint.fmpq(n, d) for e, (n, d) in terms} == {k: flint.fmpq(v) for k, v in f.to_dict().items()}


def resultant_of_two_binary_quadrics():
    c = sympy.symbols("c_1:7")
    z = sympy.Symbol("z")
    q1 = c[0] * z**2 + c[1] * z + c[2]
    q2 = c[3] * z**2 + c[4] * z + c[5]
    return sympy.Poly(sympy.resultant(q1, q2, z), *c)


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


def test_m2_errors_surface_with_message_and_location(m2_local):
    with pytest.raises(M2ExecutionError) as err:
        run_json("P = lightningParametrization(0, 1);\nresult = hashTable {};", schema={}, backend=m2_local, timeout=60, cache=False)
    assert err.value.m2_message == "lightningParametrization: d must be positive, got 0"
    assert err.value.location.startswith("job.m2:3:")
    with pytest.raises(M2ExecutionError, match="syntax error"):
        run_json("result = (1 + ;", schema={}, backend=m2_local, timeout=60, cache=False)


def test_real_m2_timeout_leaves_nothing_running(m2_local, tmp_path, monkeypatch):
    # this job's directory lives under tmp_path, so other M2 jobs on the machine do not interfere
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    t0 = time.perf_counter()
    with pytest.raises(M2TimeoutError, match="after 2 s"):
        run_json("while true do null;\nresult = hashTable {};", schema={}, backend=m2_local, timeout=2, cache=False, label="endless loop")
    assert time.perf_counter() - t0 < 30
    # checked at once: the error is raised only after the whole group is gone
    assert processes_matching(str(tmp_path)) == []


def test_cache_hit_and_corrupt_entry_recovery(m2_local, cache_dir):
    arch = Architecture((2, 1), (1,), tokens=2)
    first = implicitize(arch, backend=m2_local)
    second = implicitize(arch, backend=m2_local)
    assert not first.cached and second.cached and second.generator_strings == first.generator_strings
    entries = list(cache_dir.rglob("*.json"))
    assert len(entries) == 1
    entries[0].write_text('{"format": 1, "key": "x", "payload": {"result": {"generators": []}}}')
    third = implicitize(arch, backend=m2_local)
    assert not third.cached and third.generator_strings == first.generator_strings
    assert implicitize(arch, backend=m2_local).cached  # rewritten, valid again
    assert not implicitize(arch, backend=m2_local, cache=False).cached


@pytest.mark.container
def test_local_and_container_give_the_same_ideal(m2_local, m2_container):
    for arch, coords in [(Architecture((2, 1), (2,), tokens=2), "reduced"),
                         (Architecture((2, 1), (2,), tokens=2), "full"),
                         (Architecture((2, 2), (1,), tokens=2), "reduced")]:
        a = implicitize(arch, coords=coords, backend=m2_local, cache=False)
        b = implicitize(arch, coords=coords, backend=m2_container, cache=False)
        assert (a.backend, b.backend) == ("local", "container")
        assert a.generator_strings == b.generator_strings
        assert (a.dimension, a.degree, a.m2_version) == (b.dimension, b.degree, b.m2_version)


@pytest.mark.container
def test_container_timeout_kills_the_container(m2_container):
    with pytest.raises(M2TimeoutError):
        run_json("while true do null;\nresult = hashTable {};", schema={}, backend=m2_container, timeout=3, cache=False)
    time.sleep(0.5)
    names = subprocess.run([m2_container.engine, "ps", "-a", "--format", "{{.Names}}"], capture_output=True, text=True).stdout
    assert not [n for n in names.split() if n.startswith("ag-attention-")]
    assert processes_matching("/job/job.m2") == []


_CHILD = """
import sys
from ag_attention._m2 import runner
from ag_attention._m2.jobs import run_json
b = runner.ContainerBackend(grace=float(sys.argv[2]))
run_json("while true do null;\\nresult = hashTable {};", schema={}, backend=b, timeout=float(sys.argv[1]), cache=False)
"""


def _containers(engine):
    out = subprocess.run([engine, "ps", "-a", "--format", "{{.Names}}"], capture_output=True, text=True).stdout
    return [n for n in out.split() if n.startswith("ag-attention-")]


@pytest.mark.container
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_killed_client_leaves_no_container(m2_container, sig):
    # SIGTERM: Python kills the container before exiting; SIGKILL: nothing in Python runs,
    # the container ends by its own limit (job timeout 5 s + grace 2 s)
    before = set(_containers(m2_container.engine))
    child = subprocess.Popen([sys.executable, "-c", _CHILD, "5", "2"], stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not set(_containers(m2_container.engine)) - before and time.monotonic() < deadline:
        time.sleep(0.2)
    assert set(_containers(m2_container.engine)) - before, "the container did not start"
    time.sleep(1.0)
    child.send_signal(sig)
    child.wait(timeout=60)
    deadline = time.monotonic() + 40
    while set(_containers(m2_container.engine)) - before and time.monotonic() < deadline:
        time.sleep(0.5)
    assert set(_containers(m2_container.engine)) - before == set()
    assert processes_matching("/job/job.m2") == []


@pytest.mark.container
def test_container_is_locked_down(m2_container):
    body = (
        'f = try (openOut "/usr/x"; "writable") else "read-only";\n'
        'n = try (openInOut "$localhost:80"; "network") else "no network";\n'
        'result = hashTable {"root" => f, "net" => n, "user" => first lines get "!id -u"};\n'
    )
    job = run_json(body, schema={"root": str, "net": str, "user": str}, backend=m2_container, timeout=60, cache=False)
    assert job.payload == {"root": "read-only", "net": "no network", "user": "1000"}


def test_generators_are_polynomials_over_their_field_and_export(m2_local):
    """Exponent vectors, not a parser: QQ and GF(p) polynomials, sympy, Macaulay2 code that M2 reads back."""
    arch = Architecture((2, 2), (1,), tokens=2)
    q = implicitize(arch, backend=m2_local, cache=False)
    p = implicitize(arch, field="ZZ/32003", backend=m2_local, cache=False)
    assert type(q.generators[0]).__name__ == "fmpq_mpoly" and type(p.generators[0]).__name__ == "nmod_mpoly"
    assert sorted(q.generator_degrees) == sorted(p.generator_degrees)
    for f in p.generators:
        assert all(0 <= int(c) < 32003 for c in f.coeffs())
    assert [sympy.expand(e - sympy.sympify(str(g).replace("^", "**"))) for e, g in zip(q.to_sympy(), q.generators)] == [0] * len(q.generators)
    labels = q.to_dict()["coordinate_labels"]
    assert len(labels) == q.ambient_dimension and labels[1] == "c_2 = q[1,1]: coefficient of z1*z2"
    code = q.to_m2() + 'result = hashTable {"dim" => dim I, "degree" => degree I, "n" => numgens I};'
    job = run_json(code, schema={"dim": int, "degree": int, "n": int}, backend=m2_local, timeout=60, cache=False)
    assert job.payload == {"dim": q.dimension, "degree": q.degree, "n": len(q.generators)}


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
