"""A job's process (ag_attention._m2.process): its progress bar, the timeout, nothing left alive after it."""

import contextlib
import signal
import subprocess
import sys
import tempfile
import time
import uuid

import pytest

from ag_attention import _progress as progress
from ag_attention._errors import M2TimeoutError
from ag_attention._m2.jobs import run_json
from tests.helpers import Terminal, fake_m2, processes_matching


@contextlib.contextmanager
def fails_if_hanging(seconds=120):
    """Turn a hang into a failure (SIGALRM): a generous bound, never a measurement."""

    def hung(signum, frame):
        raise AssertionError(f"still running after {seconds} s: hung")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@pytest.fixture
def terminal(monkeypatch):
    """Call it in the test body: pytest's capture resets ``sys.stderr`` between set-up and the call."""
    monkeypatch.setattr(progress, "DELAY", 0.0)

    def install():
        err = Terminal()
        monkeypatch.setattr(sys, "stderr", err)
        return err

    return install


def test_the_wait_on_a_job_shows_its_label_and_backend(tmp_path, terminal, capsys):
    b = fake_m2(tmp_path, "sleep 0.3; echo done")
    err = terminal()
    out = b.run("x", timeout=30, label="slow job")
    assert out.stdout.strip() == "done"
    assert "slow job (local)" in err.getvalue()
    assert capsys.readouterr().out == ""  # the bar never goes to standard output


def test_no_bar_under_quiet(tmp_path, terminal):
    b = fake_m2(tmp_path, "sleep 0.3")
    err = terminal()
    with progress.quiet():
        b.run("x", timeout=30, label="slow job")
    assert err.getvalue() == ""


def test_timeout_kills_the_whole_process_group(tmp_path):
    tag = str(3000 + uuid.uuid4().int % 5000)
    b = fake_m2(tmp_path, f"sleep {tag}1 & sleep {tag}2 & exec sleep {tag}3")
    with fails_if_hanging(), pytest.raises(M2TimeoutError) as err:
        b.run("x", timeout=1, label="fake job")
    assert "fake job" in str(err.value) and "after 1 s" in str(err.value)
    assert processes_matching(f"sleep {tag}") == []  # at once: the error comes only once the group is gone


_CHILD = """
import sys
import tempfile
from ag_attention._m2 import runner
b = runner.LocalBackend(sys.argv[1], sessions=False)  # a fake M2: a fresh process per job
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
    deadline = time.monotonic() + 30  # SIGKILL: the kernel delivers the parent-death signal (a bound, not a measure)
    while processes_matching(f"sleep {tag}9") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert processes_matching(f"sleep {tag}9") == []


@pytest.mark.m2
def test_real_m2_timeout_leaves_nothing_running(m2_local, tmp_path, monkeypatch):
    # this job's directory lives under tmp_path, so other M2 jobs on the machine do not interfere
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with fails_if_hanging(), pytest.raises(M2TimeoutError, match="after 2 s"):
        run_json(
            "while true do null;\nresult = hashTable {};",
            schema={},
            backend=m2_local,
            timeout=2,
            cache=False,
            label="endless loop",
        )
    # checked at once: the error is raised only after the whole group is gone
    assert processes_matching(str(tmp_path)) == []
