"""The container backend (ag_attention._m2.container): engine diagnostics, limits, the locked-down image, kills."""

import signal
import subprocess
import sys
import time

import pytest

from ag_attention import Architecture
from ag_attention._algebra.implicitize import implicitize
from ag_attention._errors import M2NotFoundError, M2TimeoutError
from ag_attention._m2 import runner
from ag_attention._m2.jobs import run_json
from ag_attention._m2.runner import ContainerBackend, M2MemoryError
from tests.helpers import processes_matching


def test_bad_container_engine_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("CONTAINER_ENGINE", "no-such-engine")
    b = runner.ContainerBackend()
    ok, why = b.available()
    assert not ok and "CONTAINER_ENGINE='no-such-engine'" in why
    with pytest.raises(M2NotFoundError, match="no-such-engine"):
        b.run("x", timeout=5)


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


LIST = 'L = toList(1..100000000);\nresult = hashTable {"n" => #L};'  # 800 MB in one allocation


@pytest.mark.m2
@pytest.mark.container
def test_container_memory_limit_is_a_clear_error(m2_container):
    b = ContainerBackend(image=m2_container.image, engine=m2_container.engine, memory="300m")
    with pytest.raises(M2MemoryError, match=r"300 MiB \(--memory\)") as err:
        run_json(LIST, schema={"n": int}, backend=b, timeout=300, cache=False)
    # certain: the container's cgroup counted the kill (not 'probably', not a guess from the status)
    assert "out-of-memory killer" in str(err.value) and "probably" not in str(err.value)


@pytest.mark.m2
@pytest.mark.container
def test_local_and_container_give_the_same_ideal(m2_local, m2_container):
    for arch, coords in [
        (Architecture((2, 1), (2,), tokens=2), "reduced"),
        (Architecture((2, 1), (2,), tokens=2), "full"),
        (Architecture((2, 2), (1,), tokens=2), "reduced"),
    ]:
        a = implicitize(arch, coords=coords, backend=m2_local, cache=False)
        b = implicitize(arch, coords=coords, backend=m2_container, cache=False)
        assert (a.backend, b.backend) == ("local", "container")
        assert a.generator_strings == b.generator_strings
        assert (a.dimension, a.degree, a.m2_version) == (b.dimension, b.degree, b.m2_version)


@pytest.mark.m2
@pytest.mark.container
def test_container_timeout_kills_the_container(m2_container):
    import os

    with pytest.raises(M2TimeoutError, match="after 3 s"):
        run_json("while true do null;\nresult = hashTable {};", schema={}, backend=m2_container, timeout=3, cache=False)
    # checked at once: the error is raised only after the container is killed and removed
    assert _containers(m2_container.engine, os.getpid()) == []
    assert processes_matching(f"ag-attention.pid={os.getpid()}") == []


_CHILD = """
import sys
from ag_attention._m2 import runner
from ag_attention._m2.jobs import run_json
b = runner.ContainerBackend(grace=float(sys.argv[2]))
b.version()  # its own short container first: the one the test watches is the job's
print("version known", flush=True)
run_json("while true do null;\\nresult = hashTable {};", schema={}, backend=b, timeout=float(sys.argv[1]), cache=False)
"""


def _containers(engine, pid):
    """The containers of the Python process ``pid`` (labelled by it: other processes' jobs do not count)."""
    out = subprocess.run(
        [engine, "ps", "-a", "--filter", f"label=ag-attention.pid={pid}", "--format", "{{.Names}}"],
        capture_output=True,
        text=True,
    ).stdout
    return [n for n in out.split() if n.startswith("ag-attention-")]


def _wait_for(condition, seconds):
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.2)
    return condition()


@pytest.mark.m2
@pytest.mark.container
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_killed_client_leaves_no_container(m2_container, sig):
    """Q3: SIGTERM, Python kills the container before exiting; SIGKILL, nothing in Python runs and the watchdog
    beside the engine's client kills it: in both cases promptly, long before the job's own limit (600 + 30 s)."""
    engine = m2_container.engine
    child = subprocess.Popen(
        [sys.executable, "-c", _CHILD, "600", "30"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout.readline() == "version known\n", child.stderr.read()
        assert _wait_for(lambda: _containers(engine, child.pid), 60), "the container did not start"
        time.sleep(1.0)
        child.send_signal(sig)
        child.wait(timeout=60)
        # a bound that only turns a hang into a failure: the container's own limit is 630 s away
        assert _wait_for(lambda: not _containers(engine, child.pid), 20), _containers(engine, child.pid)
        # neither the watchdog nor the engine's client is left (their arguments carry the label)
        assert _wait_for(lambda: not processes_matching(f"ag-attention.pid={child.pid}"), 10)
    finally:
        if child.poll() is None:
            child.kill()


def _run_in_thread(backend, body, schema):
    import threading

    outcome = {}

    def run():
        try:
            outcome["result"] = run_json(
                body, schema=schema, backend=backend, timeout=300, cache=False, label="long job"
            )
        except Exception as exc:  # the outcome is what the test looks at
            outcome["error"] = exc

    thread = threading.Thread(target=run)
    thread.start()
    return thread, outcome


@pytest.mark.m2
@pytest.mark.container
@pytest.mark.parametrize("how", [["kill"], ["stop", "--time", "1"]])
def test_a_container_stopped_by_hand_is_not_out_of_memory(m2_container, how):
    """Q2: `podman kill` or `podman stop` of the job's container ends it with 137 and no out-of-memory kill."""
    import os

    from ag_attention._errors import M2ExecutionError

    engine = m2_container.engine
    b = ContainerBackend(image=m2_container.image, engine=engine, memory="2g")
    b.version()  # its own short container first: the one to stop is the job's
    thread, outcome = _run_in_thread(b, "while true do null;\nresult = hashTable {};", {})
    try:
        assert _wait_for(lambda: _containers(engine, os.getpid()), 60), "the container did not start"
        (name,) = _containers(engine, os.getpid())
        time.sleep(1.0)
        subprocess.run([engine, *how, name], capture_output=True, timeout=60)
    finally:
        thread.join(timeout=120)
    error = outcome.get("error")
    assert isinstance(error, M2ExecutionError) and not isinstance(error, M2MemoryError), repr(error)
    said = {"kill": "killed from outside (exit status 137", "stop": "stopped from outside (exit status 143: SIGTERM"}
    assert "long job: the container was " + said[how[0]] in str(error), str(error)
    assert f"`{engine} {how[0]}`" in str(error) and "not by the out-of-memory killer" in str(error)


@pytest.mark.m2
@pytest.mark.container
def test_container_is_locked_down(m2_container):
    body = (
        'f = try (openOut "/usr/x"; "writable") else "read-only";\n'
        'n = try (openInOut "$localhost:80"; "network") else "no network";\n'
        'result = hashTable {"root" => f, "net" => n, "user" => first lines get "!id -u"};\n'
    )
    job = run_json(body, schema={"root": str, "net": str, "user": str}, backend=m2_container, timeout=60, cache=False)
    assert job.payload == {"root": "read-only", "net": "no network", "user": "1000"}


def _recording_engine(tmp_path):
    """An engine whose ``run`` waits (its PID in run.pid) and whose ``kill NAME`` ends it; calls in calls.log."""
    log, pid = tmp_path / "calls.log", tmp_path / "run.pid"
    exe = tmp_path / "engine"
    exe.write_text(
        "#!/bin/sh\n"
        f'echo "$*" >> {log}\n'
        'case "$1" in\n'
        f"  run) echo $$ > {pid}; exec sleep 1000 ;;\n"
        f'  kill) kill -9 "$(cat {pid})" ;;\n'
        "esac\n"
    )
    exe.chmod(0o755)
    return str(exe), log


def test_the_watchdog_passes_the_client_through(tmp_path):
    from ag_attention._m2.container import WATCHDOG

    def watched(*command):
        import os

        return subprocess.run(
            [sys.executable, "-I", "-S", "-c", WATCHDOG, str(os.getpid()), "engine", "name", *command],
            capture_output=True,
            text=True,
            timeout=60,
        )

    r = watched("sh", "-c", "echo out; echo err >&2; exit 7")
    assert (r.returncode, r.stdout, r.stderr) == (7, "out\n", "err\n")
    assert watched("sh", "-c", "kill -SEGV $$").returncode == -signal.SIGSEGV
    r = watched("/nonexistent/engine", "run")
    assert r.returncode == 127 and "cannot run /nonexistent/engine" in r.stderr


_PARENT = """
import subprocess, sys
from ag_attention._m2.container import WATCHDOG, watch_parent
import os
subprocess.Popen([sys.executable, "-I", "-S", "-c", WATCHDOG, str(os.getpid()), sys.argv[1], "the-container",
                  sys.argv[1], "run", "the-image"], preexec_fn=watch_parent if sys.argv[2] == "signal" else None)
print("started", flush=True)
import time
time.sleep(1000)
"""


@pytest.mark.parametrize("notice", ["signal", "parent pid"])
def test_the_watchdog_kills_the_container_when_its_parent_dies(tmp_path, notice):
    """Q3 without a container: the parent-death signal, or else the parent PID it checks, and then kill and rm."""
    engine, log = _recording_engine(tmp_path)
    parent = subprocess.Popen([sys.executable, "-c", _PARENT, engine, notice], stdout=subprocess.PIPE, text=True)
    assert parent.stdout.readline() == "started\n"
    assert _wait_for(lambda: log.exists() and "run the-image" in log.read_text(), 30)
    parent.kill()
    parent.wait()
    assert _wait_for(lambda: "rm -f the-container" in log.read_text(), 30), log.read_text()
    assert log.read_text().splitlines() == ["run the-image", "kill the-container", "rm -f the-container"]
    assert _wait_for(lambda: not processes_matching(f"{engine} run the-image"), 10)
