"""Jobs returning JSON (ag_attention._m2.jobs): cache hits, malformed output, the version query in budget."""

import time

import pytest

from ag_attention._errors import M2OutputError, M2TimeoutError
from ag_attention._m2.cache import ResultCache
from ag_attention._m2.jobs import run_json
from ag_attention._m2.parse import BEGIN, END
from tests.helpers import fake_m2


def test_a_cache_hit_names_the_backend_that_computed_it(tmp_path):
    cache = ResultCache(tmp_path / "cache")
    computed = fake_m2(tmp_path, f'echo "{BEGIN}"; echo \'{{"x": 1}}\'; echo "{END}"')
    first = run_json("result = 1;", schema={"x": int}, backend=computed, timeout=10, cache=cache)
    other = fake_m2(tmp_path / "..", "exit 1")  # never runs: the result is cached
    other.name = "container"
    second = run_json("result = 1;", schema={"x": int}, backend=other, timeout=10, cache=cache)
    assert (first.cached, second.cached) == (False, True)
    assert second.payload == {"x": 1} and second.backend == "local"


def test_malformed_output_from_a_fake_m2(tmp_path, cache_dir):
    b = fake_m2(tmp_path, f'echo "{BEGIN}"; echo "{{not json"; echo "{END}"')
    with pytest.raises(M2OutputError, match="not valid JSON"):
        run_json("result = 1;", schema={"x": int}, backend=b, timeout=10, cache=False)
    b = fake_m2(tmp_path, 'echo "hello"')
    with pytest.raises(M2OutputError, match="no result marker"):
        run_json("result = 1;", schema={"x": int}, backend=b, timeout=10, cache=False)


def _recording(b):
    calls = []
    run = b.run

    def recorded(script, **kw):
        t0 = time.monotonic()
        try:
            return run(script, **kw)
        finally:
            calls.append((kw["label"], kw["timeout"], time.monotonic() - t0))

    b.run = recorded
    return calls


def test_a_hanging_version_query_takes_the_jobs_timeout_not_60_s(tmp_path):
    b = fake_m2(tmp_path, "exec sleep 1000", version=False)
    calls = _recording(b)
    with pytest.raises(M2TimeoutError, match="version query"):
        run_json("result = 1;", schema={}, backend=b, timeout=2, cache=False, label="quick job")
    assert [(label, limit) for label, limit, _ in calls] == [("version query", 2.0)]


def test_version_query_and_job_share_one_budget(tmp_path):
    # the version query answers after a while, the job at once: the job is given what the query left
    answer = f'echo "{BEGIN}"; echo \'{{"x": 1}}\'; echo "{END}"'
    b = fake_m2(tmp_path, f'if grep -q "version#" "$2"; then sleep 1; echo 1.21; exit 0; fi; {answer}', version=False)
    calls = _recording(b)
    assert run_json("result = 1;", schema={"x": int}, backend=b, timeout=30, cache=False, label="the job").payload == {
        "x": 1
    }
    (v_label, v_limit, v_took), (j_label, j_limit, _) = calls
    assert (v_label, v_limit, j_label) == ("version query", 30.0, "the job")
    assert j_limit <= 30.0 - v_took and v_took >= 1.0  # the query's second came off the job's limit
    # a job that times out names its whole limit, not what was left of it
    hanging = fake_m2(tmp_path, "exec sleep 1000")
    hanging.version()  # known: nothing comes off the limit but the time to get to the job
    with pytest.raises(M2TimeoutError, match="the job .*after 2 s"):
        run_json("result = 1;", schema={}, backend=hanging, timeout=2, cache=False, label="the job")


@pytest.mark.m2
def test_package_check_passes(m2_local):
    job = run_json(
        'check "LightningAttention";\nresult = hashTable {"ok" => true};',
        schema={"ok": bool},
        backend=m2_local,
        timeout=300,
        cache=False,
    )
    assert job.payload == {"ok": True}


@pytest.mark.slow
@pytest.mark.m2
def test_the_package_checks_at_their_larger_sizes(m2_local):
    """The sizes the package's TEST blocks leave out (check takes seconds, these a minute), the same assertions:
    lowDegreeEquations against the kernel at (d, d', a, k) = (2, 3, 2, 4) (the TEST: five smaller sizes), and the
    counts of Python's low_degree_equations at the next degree, (3, 2, 3) to 3 and (3, 1, 3) to 4 (the TEST: one
    degree fewer; tests/algebra/test_interpolation.py: Python's)."""
    body = (
        "kk = ZZ/32003;\n"
        "I = lowDegreeEquations(2, 3, 4, AttentionRank => 2);\n"
        "P = lightningParametrization(2, 3, AttentionRank => 2, CoefficientRing => kk);\n"
        "K = sub(closureIdeal P, vars ring I);\n"
        "agrees = I == K and numgens I == numgens K and sub(lowDegreeEquations(P, 4), vars ring I) == I;\n"
        "degs = J -> apply(J_*, f -> first degree f);\n"
        'result = hashTable {"kernel" => agrees, "323" => degs lowDegreeEquations(3, 2, 3), '
        '"314" => degs lowDegreeEquations(3, 1, 4, AttentionRank => 3)};'
    )
    job = run_json(
        body, schema={"kernel": bool, "323": [int], "314": [int]}, backend=m2_local, timeout=600, cache=False
    )
    counts = {key: {k: job.payload[key].count(k) for k in set(job.payload[key])} for key in ("323", "314")}
    assert job.payload["kernel"] and counts == {"323": {2: 45, 3: 80}, "314": {3: 20, 4: 90}}


@pytest.mark.m2
def test_loading_the_package_keeps_core_weights(m2_local):
    """needsPackage "LightningAttention" must not shadow Core's option Weights (weighted rings)."""
    body = (
        "R = QQ[x, y, Weights => {3, 1}];\n"
        'P = lightningParametrization(2, 1, Weights => "QKV", AttentionRank => 1);\n'
        'result = hashTable {"lead" => toString leadTerm(x + y^2), "core" => package Weights === Core, '
        '"weights" => P#"weights"};'
    )
    job = run_json(body, backend=m2_local, timeout=120, cache=False, schema={"lead": str, "core": bool, "weights": str})
    assert job.payload == {"lead": "x", "core": True, "weights": "QKV"}
