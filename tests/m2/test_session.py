"""Persistent Macaulay2 sessions (ag_attention._m2.session): fresh-process results, limits, cleanup."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from ag_attention import M2ExecutionError, M2TimeoutError
from ag_attention._m2 import session as sessions
from ag_attention._m2.jobs import run_json
from ag_attention._m2.runner import LocalBackend

pytestmark = pytest.mark.m2


def _running_in(directory) -> list[int]:
    """Live processes whose working directory lies under ``directory`` (sessions run in their job directory)."""
    from ag_attention._m2.process import stat_fields

    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cwd = os.readlink(f"/proc/{entry}/cwd")
        except OSError:
            continue
        fields = stat_fields(int(entry))
        if cwd.startswith(str(directory)) and fields and fields[0] not in ("Z", "X"):
            found.append(int(entry))
    return found


@pytest.fixture
def backend(m2_local) -> LocalBackend:
    """A backend of its own (its own session pool), sessions on."""
    b = LocalBackend(m2_local.executable, sessions=True)
    yield b
    sessions.pool_for(b).close()


def _sessions_started(b: LocalBackend) -> int:
    return sessions.pool_for(b).started


def test_a_session_computes_what_a_fresh_process_computes(backend, m2_local):
    """Random numbers (the same seed at every job) and a closure: equal in a session and in a fresh process."""
    body = (
        "P = lightningParametrization(2, 1);\nI = closureIdeal P;\n"
        'result = hashTable {"r" => random(10^9), "degree" => degree I, "gens" => numgens I};'
    )
    schema = {"r": int, "degree": int, "gens": int}
    fresh = LocalBackend(m2_local.executable, sessions=False)
    a = run_json(body, schema=schema, backend=backend, timeout=120, cache=False).payload
    b = run_json(body, schema=schema, backend=backend, timeout=120, cache=False).payload
    c = run_json(body, schema=schema, backend=fresh, timeout=120, cache=False).payload
    assert a == b == c and a["degree"] == 4
    assert _sessions_started(backend) == 1 and sessions.pool_for(backend).fallbacks == 0  # both in one session


def test_symbols_of_a_job_do_not_reach_the_next(backend):
    """`x = 5` in one job; `QQ[x]` in the next still sees a symbol (without clearAll it is an error)."""
    run_json('x = 5;\nresult = hashTable {"x" => x};', schema={"x": int}, backend=backend, timeout=60, cache=False)
    r = run_json(
        'R = QQ[x];\nresult = hashTable {"n" => numgens R};',
        schema={"n": int},
        backend=backend,
        timeout=60,
        cache=False,
    )
    assert r.payload == {"n": 1} and _sessions_started(backend) == 1
    assert sessions.pool_for(backend).fallbacks == 0  # both ran in the session


def test_an_error_is_a_fresh_process_error_and_the_session_survives(backend, m2_local):
    bad = "P = lightningParametrization(0, 1);\nresult = hashTable {};"
    errors = []
    for b in (backend, LocalBackend(m2_local.executable, sessions=False)):
        with pytest.raises(M2ExecutionError) as err:
            run_json(bad, schema={}, backend=b, timeout=60, cache=False)
        errors.append((err.value.m2_message, err.value.location))
    assert errors[0] == errors[1] and errors[0][1].startswith("job.m2:3:")
    r = run_json('result = hashTable {"ok" => true};', schema={"ok": bool}, backend=backend, timeout=60, cache=False)
    assert r.payload == {"ok": True} and _sessions_started(backend) == 1
    assert sessions.pool_for(backend).fallbacks == 1  # the error was computed again in a fresh process


def test_a_timeout_kills_the_session_and_the_next_job_gets_a_new_one(backend):
    from ag_attention._m2.process import group_members

    run_json("result = hashTable {};", schema={}, backend=backend, timeout=60, cache=False)
    (old,) = sessions.pool_for(backend).pids
    with pytest.raises(M2TimeoutError, match="after 2 s"):
        run_json("while true do null;\nresult = hashTable {};", schema={}, backend=backend, timeout=2, cache=False)
    assert group_members(old) == []  # raised only once the session's process group is gone
    run_json("result = hashTable {};", schema={}, backend=backend, timeout=60, cache=False)
    assert _sessions_started(backend) == 2


def test_a_new_memory_setting_starts_a_new_session(backend, monkeypatch):
    monkeypatch.delenv("AG_ATTENTION_M2_MEMORY", raising=False)
    body = 'result = hashTable {"limits" => get "/proc/self/limits"};'
    limits = []
    for setting in ("1g", "2g"):
        monkeypatch.setenv("AG_ATTENTION_M2_MEMORY", setting)
        job = run_json(body, schema={"limits": str}, backend=backend, timeout=60, cache=False)
        (line,) = [ln for ln in job.payload["limits"].splitlines() if ln.startswith("Max address space")]
        limits.append(int(line.split()[3]))
    assert limits == [2**30, 2 * 2**30] and _sessions_started(backend) == 2


def test_sessions_off_runs_every_job_fresh(m2_local, monkeypatch):
    monkeypatch.setenv(sessions.SESSIONS_ENV, "0")
    b = LocalBackend(m2_local.executable)
    for _ in range(2):
        run_json("result = hashTable {};", schema={}, backend=b, timeout=60, cache=False)
    assert _sessions_started(b) == 0


def test_concurrent_jobs_use_at_most_the_slots(m2_local, monkeypatch):
    monkeypatch.setattr(sessions, "job_slots", lambda memory: 2)
    backend = LocalBackend(m2_local.executable, sessions=True)
    results = []

    def job(i: int) -> None:
        r = run_json(
            f'sleep 1;\nresult = hashTable {{"i" => {i}}};', schema={"i": int}, backend=backend, timeout=60, cache=False
        )
        results.append(r.payload["i"])

    threads = [threading.Thread(target=job, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == [0, 1, 2, 3] and _sessions_started(backend) == 2
    sessions.pool_for(backend).close()


_CHILD = """
import sys
from ag_attention._m2.jobs import run_json
from ag_attention._m2.runner import LocalBackend
b = LocalBackend(sys.argv[1], sessions=True)
run_json('result = hashTable {};', schema={}, backend=b, timeout=60, cache=False)
print("warm", flush=True)
run_json('while true do null;\\nresult = hashTable {};', schema={}, backend=b, timeout=600, cache=False)
"""


@pytest.mark.parametrize("sig, status", [(signal.SIGTERM, 128 + signal.SIGTERM), (signal.SIGKILL, -signal.SIGKILL)])
def test_killing_python_ends_its_sessions(m2_local, tmp_path, sig, status):
    """The session of a Python killed with SIGTERM (cleanup) or SIGKILL (parent-death signal) dies with it, even
    though a thread other than the killed job's own started it."""
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    child = subprocess.Popen(
        [sys.executable, "-c", _CHILD, m2_local.executable],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert child.stdout.readline().strip() == "warm", child.stderr.read()
    time.sleep(0.5)  # the endless job is under way
    assert _running_in(tmp_path), "no session is running"
    child.send_signal(sig)
    assert child.wait(timeout=30) == status, child.stderr.read()
    deadline = time.monotonic() + 10
    while _running_in(tmp_path) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _running_in(tmp_path) == []


def test_job_slots_are_bounded_by_cores_and_memory(monkeypatch):
    from ag_attention._resources import MemoryLimit

    monkeypatch.setattr(sessions, "usable_cores", lambda: 8)
    monkeypatch.setattr(sessions, "memory_limit", lambda: MemoryLimit(10 * 2**30, "test"))
    assert sessions.job_slots(4 * 2**30) == 2  # two jobs of 4 GiB fit in 10 GiB
    assert sessions.job_slots(2**30) == 8  # then the cores bind
    assert sessions.job_slots(None) == 2  # unlimited jobs count as 4 GiB
    assert sessions.job_slots(64 * 2**30) == 1  # at least one
