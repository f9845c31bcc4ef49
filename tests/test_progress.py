"""Progress bars: on a tty after the delay, never under quiet(), never on a pipe, never on stdout."""

import io
import sys
import time

import pytest

from ag_attention import _progress as progress
from tests.helpers import Terminal


def _work(b, n=3):
    for _ in range(n):
        b.update()


@pytest.fixture
def tty(monkeypatch):
    """A terminal as standard error, no delay: call ``tty()`` in the test body (pytest's capture resets
    ``sys.stderr`` between a fixture's set-up and the test's call)."""
    monkeypatch.setattr(progress, "DELAY", 0.0)

    def install():
        err = Terminal()
        monkeypatch.setattr(sys, "stderr", err)
        return err

    return install


def test_a_bar_shows_on_a_terminal(tty):
    tty = tty()
    with progress.bar(total=3, desc="ranks") as b:
        _work(b)
    assert "ranks" in tty.getvalue() and "/3" in tty.getvalue()


def test_quiet_silences_every_bar(tty):
    tty = tty()
    with progress.quiet():
        with progress.bar(total=3, desc="ranks") as b:
            _work(b)
        with progress.elapsed("job", interval=0.01):
            time.sleep(0.05)
    assert tty.getvalue() == ""
    assert not progress.is_quiet()


def test_a_pipe_gets_no_bar(monkeypatch):
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    monkeypatch.setattr(progress, "DELAY", 0.0)
    with progress.bar(total=3, desc="ranks") as b:
        _work(b)
    assert err.getvalue() == ""


def test_short_work_shows_nothing(monkeypatch):
    err = Terminal()
    monkeypatch.setattr(sys, "stderr", err)
    with progress.elapsed("job", interval=0.01):
        time.sleep(0.05)
    assert "job" not in err.getvalue()


def test_elapsed_ticks_while_waiting(tty):
    tty = tty()
    with progress.elapsed("Macaulay2", interval=0.01):
        time.sleep(0.1)
    assert tty.getvalue().count("Macaulay2") >= 2


def test_track_counts_k_of_n(tty):
    tty = tty()
    assert list(progress.track(range(4), desc="sizes")) == [0, 1, 2, 3]
    assert "sizes" in tty.getvalue() and "/4" in tty.getvalue()


_UNSIZED = """
import time
from ag_attention import _progress as progress
progress.DELAY = 0.0
with progress.elapsed("msolve job (local)", limit=30):
    time.sleep(1.2)
"""


def test_a_terminal_that_reports_no_size_still_shows_the_bar(tmp_path):
    """A pty nobody sized reports 0 x 0: tqdm alone draws nothing there (what a review saw for 150 s); the bar
    falls back to 80 x 24 and names the job's time limit."""
    import os
    import pty
    import subprocess

    master, slave = pty.openpty()
    assert os.get_terminal_size(slave) == (0, 0)
    try:
        child = subprocess.run([sys.executable, "-c", _UNSIZED], stderr=slave, stdout=subprocess.DEVNULL, timeout=60)
        assert child.returncode == 0
        os.close(slave)
        out = b""
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # EIO: the other end is closed and drained
                break
            if not chunk:
                break
            out += chunk
    finally:
        os.close(master)
    assert b"msolve job (local): 00:01 of at most 30 s" in out
