"""Unit tests of the Macaulay2 bridge that need no Macaulay2: parsing, cache, error paths.

Fake ``M2`` executables here only exercise parsing and error handling; every
test of a Macaulay2 *result* runs the real Macaulay2 (test_m2.py).
"""

import json
import re
import os
import signal
import stat
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pytest

from ag_attention._errors import (
    InvalidArgumentError,
    M2ExecutionError,
    M2NotFoundError,
    M2OutputError,
    M2TimeoutError,
)
from ag_attention._m2 import runner
from ag_attention._m2.cache import ResultCache
from ag_attention._m2.implicitize import check_field, parametrization_call
from ag_attention._m2.jobs import run_json
from ag_attention._m2.parse import BEGIN, END, extract_result, parse_error
from ag_attention import Architecture

from tests.helpers import DATA as TEST_DATA, fake_m2, no_backends, ok_m2, processes_matching

DATA = TEST_DATA / "m2"


# ------------------------------------------------------------------ parsing
@pytest.mark.parametrize(
    "name, message, location",
    [
        ("syntax", "syntax error at ';'", "job.m2:3:15"),
        ("runtime", "division by zero", "job.m2:3:14"),
        ("package", "lightningParametrization: d must be positive, got 0", "job.m2:3:5 (raised at LightningAttention.m2:86:19)"),
    ],
)
def test_error_messages_from_real_m2_output(name, message, location):
    stderr = (DATA / f"{name}.stderr").read_text()
    assert parse_error(stderr) == (message, location)
    with pytest.raises(M2ExecutionError) as err:
        extract_result("", stderr, 1)
    assert err.value.m2_message == message and err.value.location == location
    assert message in str(err.value) and location in str(err.value)


def test_result_markers():
    out = f"noise\n{BEGIN}\n{json.dumps({'a': [1, 'x']})}\n{END}\n"
    assert extract_result(out, "", 0) == {"a": [1, "x"]}
    with pytest.raises(M2OutputError, match="no result marker"):
        extract_result("just text\n", "", 0)
    with pytest.raises(M2OutputError, match="truncated"):
        extract_result(f"{BEGIN}\n{{\"a\": 1}}\n", "", 0)
    with pytest.raises(M2OutputError, match="not valid JSON"):
        extract_result(f"{BEGIN}\n{{'a': .5}}\n{END}\n", "", 0)
    with pytest.raises(M2ExecutionError, match="status 3 without an error message"):
        extract_result("", "segfault?", 3)


# ------------------------------------------------------------------ cache
def test_cache_roundtrip_and_corruption(tmp_path):
    cache = ResultCache(tmp_path)
    key = ResultCache.key("script", "1.21", "pkg")
    assert cache.get(key) is None
    path = cache.put(key, {"result": {"x": 1}, "seconds": 2.0})
    assert cache.get(key) == {"result": {"x": 1}, "seconds": 2.0}
    assert not [p for p in path.parent.iterdir() if p.name.startswith(".tmp")]  # atomic: no leftovers
    # tampered payload: checksum mismatch
    entry = json.loads(path.read_text())
    entry["payload"]["result"]["x"] = 2
    path.write_text(json.dumps(entry))
    assert cache.get(key) is None and not path.exists() and cache.corrupt_entries == 1
    # truncated file
    cache.put(key, {"result": {"x": 1}})
    path.write_text(path.read_text()[:20])
    assert cache.get(key) is None and cache.corrupt_entries == 2
    # bytes that are not UTF-8
    cache.put(key, {"result": {"x": 1}})
    path.write_bytes(b"\xff\xfe{")
    assert cache.get(key) is None and not path.exists() and cache.corrupt_entries == 3
    # an entry stored under another key
    cache.put(key, {"result": {}})
    other = ResultCache.key("other")
    os.makedirs(cache.path(other).parent, exist_ok=True)
    os.replace(cache.path(key), cache.path(other))
    assert cache.get(other) is None


# ------------------------------------------------------------------ fakes
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


def test_timeout_kills_the_whole_process_group(tmp_path):
    tag = str(3000 + uuid.uuid4().int % 5000)
    b = fake_m2(tmp_path, f"sleep {tag}1 & sleep {tag}2 & exec sleep {tag}3")
    t0 = time.perf_counter()
    with pytest.raises(M2TimeoutError) as err:
        b.run("x", timeout=1, label="fake job")
    assert time.perf_counter() - t0 < 20
    assert "fake job" in str(err.value) and "1 s" in str(err.value)
    assert processes_matching(f"sleep {tag}") == []


_CHILD = """
import sys
import tempfile
from ag_attention._m2 import runner
b = runner.LocalBackend(sys.argv[1])
b.run("x", timeout=600, label="long job")
"""


@pytest.mark.parametrize("sig, status", [(signal.SIGTERM, 128 + signal.SIGTERM), (signal.SIGKILL, -signal.SIGKILL)])
def test_killing_python_kills_the_job(tmp_path, sig, status):
    # SIGTERM: the job is cleaned up before Python exits; SIGKILL: the job dies with its parent
    tag = str(3000 + uuid.uuid4().int % 5000)
    b = fake_m2(tmp_path, f"exec sleep {tag}9")
    child = subprocess.Popen([sys.executable, "-c", _CHILD, b.executable], stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while not processes_matching(f"sleep {tag}9") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert processes_matching(f"sleep {tag}9"), "the job did not start"
    child.send_signal(sig)
    assert child.wait(timeout=30) == status, child.stderr.read()
    deadline = time.monotonic() + 5  # SIGKILL: the kernel delivers the parent-death signal
    while processes_matching(f"sleep {tag}9") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert processes_matching(f"sleep {tag}9") == []


def test_bad_container_engine_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("CONTAINER_ENGINE", "no-such-engine")
    b = runner.ContainerBackend()
    ok, why = b.available()
    assert not ok and "CONTAINER_ENGINE='no-such-engine'" in why
    with pytest.raises(M2NotFoundError, match="no-such-engine"):
        b.run("x", timeout=5)


def test_missing_backend_explains_both_ways(monkeypatch):
    monkeypatch.setattr(runner, "default_backends", {"local": runner.LocalBackend("/nonexistent/M2"),
                                              "container": runner.ContainerBackend(engine="")})
    for name in ("auto", "local", "container"):
        with pytest.raises(M2NotFoundError) as err:
            runner.get_backend(name)
        text = str(err.value)
        assert "apt-get install macaulay2" in text and "docker/build.sh" in text
    with pytest.raises(InvalidArgumentError, match="backend='mars'"):
        runner.get_backend("mars")


def test_bad_timeout(tmp_path):
    b = fake_m2(tmp_path, "true")
    for bad in [0, -1, "x", None]:
        with pytest.raises(InvalidArgumentError, match="timeout"):
            b.run("x", timeout=bad)


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


# ------------------------------------------------------------------ memory limit (settings; the real M2 in test_m2.py)
def test_memory_settings(monkeypatch, tmp_path):
    assert runner.parse_memory("4g") == 4 * 2**30 and runner.parse_memory("512MiB") == 512 * 2**20
    assert runner.parse_memory("1.5G") == 3 * 2**29 and runner.parse_memory(2**30) == 2**30
    assert runner.parse_memory("unlimited") is None and runner.parse_memory("none") is None
    for bad in ["4x", "", "-1g", "4", "100m", True, "lots"]:
        with pytest.raises(InvalidArgumentError, match="memory"):
            runner.parse_memory(bad)
    monkeypatch.delenv(runner.MEMORY_ENV, raising=False)
    assert runner.LocalBackend("/bin/true").memory_limit() == (4 * 2**30, "the default")
    monkeypatch.setenv(runner.MEMORY_ENV, "8g")
    assert runner.LocalBackend("/bin/true").memory_limit() == (8 * 2**30, runner.MEMORY_ENV)
    assert runner.LocalBackend("/bin/true", memory="1g").memory_limit() == (2**30, "memory=")
    monkeypatch.setenv(runner.MEMORY_ENV, "8 gigs")
    with pytest.raises(InvalidArgumentError, match=runner.MEMORY_ENV):
        runner.LocalBackend("/bin/true").memory_limit()
    with pytest.raises(InvalidArgumentError, match="memory"):
        runner.LocalBackend("/bin/true", memory="4")  # 4 bytes: refused, not a job that cannot start
    monkeypatch.setenv(runner.MEMORY_ENV, "2g")
    # an engine that prints the command it is given: the container's command line, through a job
    engine = tmp_path / "engine"
    engine.write_text('#!/bin/sh\nprintf "%s\\n" "$@"\n')
    engine.chmod(0o755)
    cmd = runner.ContainerBackend(engine=str(engine)).run("x", timeout=10).stdout.splitlines()
    assert cmd[cmd.index("--memory") + 1] == "2048m"


def test_limit_reaches_the_child_and_out_of_memory_is_named(tmp_path, monkeypatch):
    monkeypatch.delenv(runner.MEMORY_ENV, raising=False)
    b = fake_m2(tmp_path, 'grep "Max address space" /proc/self/limits')
    b.memory = "300m"
    out = b.run("x", timeout=30)
    assert out.stdout.split()[3:5] == [str(300 * 2**20)] * 2  # soft and hard
    # what Macaulay2's GC prints when the limit is hit (measured): M2MemoryError, not a parse error
    b = fake_m2(tmp_path, 'echo "" >&2; echo " *** out of memory trying to allocate 800000008 bytes, exiting ***" >&2; exit 1')
    b.memory = "300m"
    with pytest.raises(runner.M2MemoryError) as err:
        run_json("result = 1;", schema={}, backend=b, timeout=30, cache=False, label="big job")
    text = str(err.value)
    assert "big job ran out of memory" in text and "300 MiB" in text and "AG_ATTENTION_M2_MEMORY=600m" in text
    assert "out of memory trying to allocate 800000008 bytes" in text and err.value.limit == 300 * 2**20
    b = fake_m2(tmp_path, 'echo "GNU MP: Cannot allocate memory (size=1992187536)" >&2; kill -ABRT $$')
    with pytest.raises(runner.M2MemoryError, match="SIGABRT"):
        b.run("x", timeout=30)


# ------------------------------------------------------------------ cache failures never lose a result
def test_a_directory_in_place_of_an_entry_is_a_corrupt_entry(tmp_path, cache_dir):
    b = ok_m2(tmp_path)
    assert not run_json("result = 1;", schema={"x": int}, backend=b, timeout=10).cached
    (entry,) = cache_dir.rglob("*.json")
    entry.unlink()
    entry.mkdir()
    (entry / "something").write_text("in the way")
    for _ in range(2):  # every rerun works: the directory is removed, the entry rewritten
        job = run_json("result = 1;", schema={"x": int}, backend=b, timeout=10)
        assert job.payload == {"x": 1}
    assert job.cached and entry.is_file()


def test_unwritable_cache_warns_once_and_returns_the_result(tmp_path, monkeypatch):
    import warnings

    from ag_attention._m2 import cache as cache_module

    b = ok_m2(tmp_path)
    monkeypatch.setattr(cache_module, "_warned", False)
    monkeypatch.setenv("AG_ATTENTION_CACHE_DIR", "/proc/x")  # cannot be created
    with pytest.warns(cache_module.CacheWriteWarning, match="/proc/x"):
        assert run_json("result = 1;", schema={"x": int}, backend=b, timeout=10).payload == {"x": 1}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once per process: no second warning
        assert run_json("result = 2;", schema={"x": int}, backend=b, timeout=10).payload == {"x": 1}
    # a read-only directory (root ignores permission bits: the write itself is made to fail too)
    ro = tmp_path / "ro"
    ro.mkdir()
    monkeypatch.setenv("AG_ATTENTION_CACHE_DIR", str(ro))
    monkeypatch.setattr(cache_module, "_warned", False)

    def denied(*args, **kwargs):
        raise PermissionError(13, "Permission denied", str(ro))

    monkeypatch.setattr(cache_module.tempfile, "mkstemp", denied)
    with pytest.warns(cache_module.CacheWriteWarning, match="Permission denied"):
        assert run_json("result = 3;", schema={"x": int}, backend=b, timeout=10).payload == {"x": 1}
    monkeypatch.undo()
    if os.geteuid() != 0:
        ro.chmod(0o555)
        monkeypatch.setenv("AG_ATTENTION_CACHE_DIR", str(ro))
        assert run_json("result = 4;", schema={"x": int}, backend=b, timeout=10).payload == {"x": 1}
    # a file where the cache directory should be
    (tmp_path / "file").write_text("x")
    monkeypatch.setenv("AG_ATTENTION_CACHE_DIR", str(tmp_path / "file"))
    monkeypatch.setattr(cache_module, "_warned", False)
    with pytest.warns(cache_module.CacheWriteWarning, match="Not a directory"):
        assert run_json("result = 5;", schema={"x": int}, backend=b, timeout=10).payload == {"x": 1}


# ------------------------------------------------------------------ validated output
def test_output_that_is_not_utf8_is_an_output_error(tmp_path, cache_dir):
    b = fake_m2(tmp_path, f"echo '{BEGIN}'; printf '{{\"x\": \"\\377\"}}\\n'; echo '{END}'")
    with pytest.raises(M2OutputError, match="not valid UTF-8 .byte 0xff"):
        run_json("result = 1;", schema={"x": str}, backend=b, timeout=10)
    assert not list(cache_dir.rglob("*.json"))
    # undecodable bytes outside the result (or in an error message) are harmless
    b = fake_m2(tmp_path, f"printf 'noise \\377\\n'; echo '{BEGIN}'; echo '{{\"x\": \"y\"}}'; echo '{END}'")
    assert run_json("result = 1;", schema={"x": str}, backend=b, timeout=10, cache=False).payload == {"x": "y"}
    b = fake_m2(tmp_path, "printf 'job.m2:1:1:(3): error: bad \\377 byte\\n' >&2; exit 1")
    with pytest.raises(M2ExecutionError, match=r"bad \\xff byte"):
        run_json("result = 1;", schema={}, backend=b, timeout=10, cache=False)


_GOOD = {"generators": ["c_1*c_2-c_3"], "terms": [[[[1, 1, 0], [1, 1]], [[0, 0, 1], [-1, 1]]]],
         "variables": ["c_1", "c_2", "c_3"], "dimension": 2, "codimension": 1, "degree": 2, "m2_version": "1.21"}


@pytest.mark.parametrize("change, complaint", [
    ({"dimension": "2"}, 'result["dimension"]: expected an integer'),
    ({"dimension": True}, 'result["dimension"]: expected an integer'),
    ({"generators": "c_1"}, 'result["generators"]: expected a list of a string'),
    ({"terms": [[[[1, 1], [1, 1]]]]}, "generators given by their terms in the variables"),
    ({"terms": []}, "1 generators"),
    ({"degree": None}, 'result["degree"]: expected an integer'),
    ({"variables": None}, 'result["variables"]'),
    ("missing", "the key 'codimension' is missing"),
])
def test_results_of_the_wrong_form_are_output_errors_and_not_cached(tmp_path, cache_dir, change, complaint):
    from ag_attention._m2.implicitize import implicitize

    payload = {k: v for k, v in _GOOD.items() if k != "codimension"} if change == "missing" else {**_GOOD, **change}
    b = ok_m2(tmp_path, json.dumps(payload))
    with pytest.raises(M2OutputError) as err:
        implicitize(Architecture((2, 1), (2,), tokens=2), backend=b)
    assert complaint in str(err.value)
    assert not list(cache_dir.rglob("*.json"))  # nothing unvalidated is cached


def test_cache_hits_are_validated_too(tmp_path, cache_dir):
    from ag_attention._m2.implicitize import implicitize

    arch = Architecture((2, 1), (2,), tokens=2)
    b = ok_m2(tmp_path, json.dumps(_GOOD))
    assert not implicitize(arch, backend=b).cached
    assert implicitize(arch, backend=b).cached
    (entry,) = cache_dir.rglob("*.json")
    cache = ResultCache(cache_dir)
    key = entry.stem
    # a valid checksum, but no "result" / a result of the wrong form: recomputed, not a KeyError
    for stored in ({"seconds": 1.0, "backend": "local"},
                   {"result": {**_GOOD, "degree": "two"}, "seconds": 1.0, "backend": "local"},
                   {"result": _GOOD, "seconds": "1", "backend": "local"}):
        cache.put(key, stored)
        r = implicitize(arch, backend=b)
        assert not r.cached and r.degree == 2
        assert implicitize(arch, backend=b).cached  # rewritten, valid again


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


# ------------------------------------------------------------------ the timeout covers the version query
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
    # the version query answers after a while, the job hangs: both together stay within the limit
    b = fake_m2(tmp_path, 'if grep -q "version#" "$2"; then sleep 1; echo 1.21; exit 0; fi; exec sleep 1000',
                version=False)
    calls = _recording(b)
    with pytest.raises(M2TimeoutError, match="after 3 s"):
        run_json("result = 1;", schema={}, backend=b, timeout=3, cache=False, label="the job")
    (v_label, v_limit, v_took), (j_label, j_limit, _) = calls
    assert (v_label, v_limit, j_label) == ("version query", 3.0, "the job")
    assert v_took + j_limit <= 3.0


# ------------------------------------------------------------------ job directories of a killed Python
_KILLED = """
import sys
import tempfile
from ag_attention._m2 import runner
runner.LocalBackend(sys.argv[1]).run("x", timeout=600, label="long job")
"""


def test_job_directory_of_a_killed_python_is_removed_by_the_next_run(tmp_path, monkeypatch):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    b = fake_m2(tmp_path, "exec sleep 1000")
    child = subprocess.Popen([sys.executable, "-c", _KILLED, b.executable], env={**os.environ, "TMPDIR": str(tmp)})
    deadline = time.monotonic() + 60
    while not list(tmp.glob("ag-attention-m2-*/job.m2")) and time.monotonic() < deadline:
        time.sleep(0.05)
    (left,) = [p.parent for p in tmp.glob("ag-attention-m2-*/job.m2")]
    child.kill()
    assert child.wait(timeout=30) == -signal.SIGKILL
    assert left.is_dir()  # nothing in the killed Python could remove it
    # a live owner's directory (this process) and one of a reused PID (same PID, other start time)
    live, reused = tmp / "ag-attention-m2-live", tmp / "ag-attention-m2-reused"
    for d, start in ((live, runner.process_start(os.getpid())), (reused, "1")):
        d.mkdir()
        (d / runner.OWNER_FILE).write_text(json.dumps({"pid": os.getpid(), "start": start, "boot": runner.boot_id()}))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    fake_m2(tmp_path, "true").run("x", timeout=30)
    assert not left.exists() and not reused.exists() and live.is_dir()
    assert sorted(p.name for p in tmp.iterdir()) == ["ag-attention-m2-live"]


# ------------------------------------------------------------------ engine diagnostics
def test_an_engine_that_does_not_run_is_not_an_image_problem(monkeypatch):
    monkeypatch.setenv("CONTAINER_ENGINE", "/bin/false")
    ok, why = runner.ContainerBackend().available()
    assert not ok and "does not run" in why and "exit status 1" in why and "image" not in why


def _fake_engine(tmp_path, inspect_error):
    exe = tmp_path / "engine"
    exe.write_text(
        "#!/bin/sh\n"
        'case "$1" in\n'
        "  info) exit 0 ;;\n"
        "  --version) exit 0 ;;\n"  # prints no version
        f"  image) echo '{inspect_error}' >&2; exit 125 ;;\n"
        "esac\nexit 1\n"
    )
    exe.chmod(0o755)
    return str(exe)


def test_engine_diagnostics_say_why(tmp_path, monkeypatch):
    monkeypatch.setenv("CONTAINER_ENGINE", _fake_engine(tmp_path, "Error: localhost/x: image not known"))
    ok, why = runner.ContainerBackend(image="localhost/x").available()
    assert not ok and "the image localhost/x is missing" in why and "docker/build.sh" in why
    assert "prints no version" in why and "exit status 0" in why
    monkeypatch.setenv("CONTAINER_ENGINE", _fake_engine(tmp_path, "Error: permission denied on the storage"))
    ok, why = runner.ContainerBackend(image="localhost/x").available()
    assert not ok and "missing" not in why and "exit status 125" in why and "permission denied on the storage" in why


def test_a_version_query_without_output_says_why(tmp_path):
    b = fake_m2(tmp_path, "exit 0", version=False)
    with pytest.raises(M2NotFoundError, match=r"did not report its version .*exit status 0, no output"):
        b.version()
    b = fake_m2(tmp_path, "echo 'M2: cannot open the documentation database' >&2; exit 2", version=False)
    with pytest.raises(M2NotFoundError, match="exit status 2, stderr: M2: cannot open the documentation database"):
        b.version()


# ------------------------------------------------------------------ reproduce theorem-3.4 without Macaulay2
def test_reproduce_without_macaulay2_is_one_m2_error(tmp_path, monkeypatch, capsys):
    from ag_attention._cli import main

    no_backends(monkeypatch)
    status = main(["reproduce", "theorem-3.4", "--quick", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert status == 3, err
    assert err.count("Macaulay2") >= 1 and err.count("ag-attention: Macaulay2:") == 1 and "FAILED" not in err
    assert "--no-m2" in err


def test_reproduce_with_no_m2_needs_no_macaulay2(monkeypatch):
    from ag_attention._reproduce import theorem34 as t34

    no_backends(monkeypatch)
    report = t34.reproduce_theorem_34(t34.Options(m2_grid=t34.QUICK_M2_GRID, point_grid=(t34.Size(2, 1, 2),), equation_grid=(),
                                                  use_m2=False, picture=False))
    assert report.passed and "m2_errors" not in report.meta


def test_reproduce_with_a_timing_out_item_keeps_the_others_and_is_an_m2_error(tmp_path):
    from ag_attention._errors import M2Error
    from ag_attention._reproduce import theorem34 as t34

    b = fake_m2(tmp_path, "exec sleep 1000")
    opts = t34.Options(m2_grid=(t34.Size(2, 1, 2), t34.Size(2, 1, 1)), point_grid=(t34.Size(2, 1, 2),), equation_grid=(),
                       backend=b, m2_timeout=1, picture=False)
    report = t34.reproduce_theorem_34(opts)
    m2 = [c for c in report.checks if c.claim == "Macaulay2 checks"]
    assert [c.case for c in m2] == ["d=2, d'=1, A free", "d=2, d'=1, a=1"] and not any(c.passed for c in m2)
    others = [c for c in report.checks if c.claim != "Macaulay2 checks"]
    assert others and all(c.passed for c in others)  # the pointwise items still ran
    assert [e["error"] for e in report.meta["m2_errors"]] == ["M2TimeoutError"] * 2
    with pytest.raises(M2Error, match="2 Macaulay2 item.s. did not finish: d=2, d'=1, A free: .*timed out"):
        t34.raise_for_m2_errors(report)


def test_reproduce_rejects_a_malformed_m2_result_per_item(tmp_path):
    from ag_attention._reproduce import theorem34 as t34

    b = ok_m2(tmp_path, '{"dimension": 5}')
    opts = t34.Options(m2_grid=(t34.Size(2, 1, 2),), point_grid=(), equation_grid=(), backend=b, picture=False)
    report = t34.reproduce_theorem_34(opts)
    (c,) = [c for c in report.checks if c.claim == "Macaulay2 checks"]
    assert "does not have the expected form" in c.observed and report.meta["m2_errors"][0]["error"] == "M2OutputError"


def test_doctor_tells_a_broken_macaulay2_from_a_missing_one(tmp_path, monkeypatch):
    from ag_attention._m2.doctor import doctor

    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "M2").write_text("#!/bin/sh\necho 'M2: something is wrong' >&2\nexit 1\n")
    (bindir / "M2").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}:/usr/bin:/bin")
    monkeypatch.setenv("CONTAINER_ENGINE", "/bin/false")
    report = doctor(timeout=30)
    local, container = report.backends
    assert local.available and not local.package_ok and "exit status 1, stderr: M2: something is wrong" in local.error
    assert not container.available and "does not run" in container.detail
    assert not report.ok and "apt-get" not in str(report) and "see the error" in report.to_dict()["help"]


def test_cli_reproduce_with_a_timing_out_item_writes_the_report_and_exits_3(tmp_path, monkeypatch, capsys):
    from ag_attention._cli import main

    hanging = fake_m2(tmp_path, "exec sleep 1000")
    monkeypatch.setattr(runner, "default_backends", {"local": hanging, "container": runner.ContainerBackend(engine="")})
    out = tmp_path / "out"
    status = main(["reproduce", "theorem-3.4", "--quick", "--backend", "local", "--m2-timeout", "1", "--out", str(out)])
    err = capsys.readouterr().err
    assert json.loads((out / "report.json").read_text())["meta"]["m2_errors"]
    assert err.count("ag-attention: Macaulay2:") == 1 and "did not finish" in err
    assert status == 3


@pytest.mark.parametrize(
    "kwargs, named",
    [(dict(cache="no"), "cache"), (dict(timeout=True), "timeout"), (dict(timeout=float("nan")), "timeout"),
     (dict(weights=""), "weights")],
)
def test_implicitize_refuses_odd_arguments_before_any_job(kwargs, named, monkeypatch):
    # no backend is consulted: the arguments are refused first
    from ag_attention._m2 import jobs
    from ag_attention._m2.implicitize import implicitize

    monkeypatch.setattr(jobs, "get_backend", lambda *a, **k: pytest.fail("a backend was consulted"))

    with pytest.raises(InvalidArgumentError, match=named):
        implicitize(Architecture((2, 1), (2,), tokens=2), **kwargs)
