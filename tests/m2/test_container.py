"""The container backend (ag_attention._m2.container): engine diagnostics, limits, the locked-down image, kills."""

import signal
import subprocess
import sys
import time

import pytest

from ag_attention import Architecture
from ag_attention._errors import M2NotFoundError, M2TimeoutError
from ag_attention._m2 import runner
from ag_attention._m2.implicitize import implicitize
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
    with pytest.raises(M2MemoryError, match=r"300 MiB \(--memory\)"):
        run_json(LIST, schema={"n": int}, backend=b, timeout=300, cache=False)


@pytest.mark.m2
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


@pytest.mark.m2
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


@pytest.mark.m2
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
