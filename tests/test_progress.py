"""Progress: a bar on a tty after the delay, plain lines elsewhere (at most every interval), nothing under quiet(),
never on stdout."""

import io
import sys
import time

import pytest

from ag_attention import InvalidArgumentError
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


# ---------------------------------------------------------------- off a terminal: a line at most every interval
class Clock:
    """A clock the test moves: ``clock.t = 12.0``."""

    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def _lines(**kwargs):
    clock, out = Clock(), io.StringIO()
    return progress.Lines(clock=clock, stream=out, **kwargs), clock, out


def test_a_line_says_k_of_n_the_time_elapsed_and_the_time_left():
    b, clock, out = _lines(total=7, desc="Macaulay2", unit="job", every=10)
    clock.t = 250.0
    b.update(3)
    b.set_postfix_str("d=3, d'=2, a=2", refresh=False)
    clock.t = 400.0
    b.update(1)
    assert out.getvalue().splitlines() == [
        "Macaulay2: 3/7 jobs finished, 04:10 elapsed, about 05:33 left",  # 250 s * 4 / 3
        "Macaulay2: 4/7 jobs finished, 06:40 elapsed, about 05:00 left (d=3, d'=2, a=2)",
    ]
    clock.t = 1500.0  # still 4: the rate so far says 18:45 are left, the count stood still for 18:20
    b.refresh()
    assert out.getvalue().splitlines()[-1].endswith("25:00 elapsed, about 18:45 left (d=3, d'=2, a=2)")
    clock.t = 2000.0  # it stood still for longer than the time left at the rate so far: no estimate then
    b.refresh()
    assert out.getvalue().splitlines()[-1] == (
        "Macaulay2: 4/7 jobs finished, 33:20 elapsed, the last one 26:40 ago, no estimate of the time left "
        "(d=3, d'=2, a=2)"
    )
    b.total = None  # no total: a count, no estimate
    clock.t = 3700.0
    b.update(1)
    assert out.getvalue().splitlines()[-1] == "Macaulay2: 5 jobs finished, 1:01:40 elapsed (d=3, d'=2, a=2)"


def test_a_resumed_count_takes_its_rate_from_this_run_alone():
    # 35,865 found before (a saved monodromy), 11 more in 50 s: 88 left at that rate is 6:40, not the 0:00 that the
    # resumed count's apparent rate (35,876 in 50 s) gave
    b, clock, out = _lines(total=35964, desc="monodromy", unit="solution", every=10, verb="found", initial=35865)
    clock.t = 50.0
    b.update(11)
    assert out.getvalue().splitlines() == ["monodromy: 35,876/35,964 solutions found, 00:50 elapsed, about 06:40 left"]
    b, clock, out = _lines(total=10, unit="job", every=10, initial=4)
    clock.t = 30.0
    b.refresh()  # nothing new yet: no rate, no estimate
    assert out.getvalue().splitlines() == [": 4/10 jobs finished, 00:30 elapsed"]


def test_lines_come_at_most_every_interval_the_first_after_it_and_one_at_the_end():
    b, clock, out = _lines(total=100, desc="sweep", unit="arch", every=10)
    for t in range(1, 10):  # 9 s: nothing yet
        clock.t = float(t)
        b.update()
    assert out.getvalue() == ""
    clock.t = 10.0
    b.update()
    clock.t = 19.5
    b.update()
    b.refresh()  # a tick while waiting: not due
    clock.t = 20.0
    b.refresh()  # due: the elapsed time goes on while nothing finishes
    clock.t = 25.0
    b.update(89)
    clock.t = 40.0
    b.refresh()  # all finished: no more ticks
    b.close()
    b.close()  # once
    assert out.getvalue().splitlines() == [
        "sweep: 10/100 archs finished, 00:10 elapsed, about 01:30 left",
        "sweep: 11/100 archs finished, 00:20 elapsed, about 02:41 left",
        "sweep: 100/100 archs finished, 00:40 elapsed",
    ]


def test_short_work_off_a_terminal_says_nothing_and_long_work_says_it_ended():
    b, clock, out = _lines(total=3, desc="ranks", unit="step", every=10)
    clock.t = 9.9
    b.update(3)
    b.close()
    assert out.getvalue() == ""
    b, clock, out = _lines(total=1, desc="ranks", unit="step", every=10)
    clock.t = 30.0  # one long step, no line during it: the end is said
    b.update(1)
    b.close()
    assert out.getvalue() == "ranks: 1/1 steps finished, 00:30 elapsed\n"


def test_each_job_finished_gets_its_line_and_a_wait_shows_its_limit():
    b, clock, out = _lines(total=2, desc="Macaulay2", unit="job", every=10, each=True)
    clock.t = 1.0
    b.update()
    clock.t = 2.0
    b.update()
    b.close()
    assert out.getvalue().splitlines() == [
        "Macaulay2: 1/2 jobs finished, 00:01 elapsed, about 00:01 left",
        "Macaulay2: 2/2 jobs finished, 00:02 elapsed",
    ]
    b, clock, out = _lines(desc="msolve job (local)", unit="s", every=10, limit=30)
    clock.t = 12.0
    b.refresh()
    assert out.getvalue() == "msolve job (local): 00:12 elapsed of at most 30 s\n"


def test_the_interval_comes_from_the_environment_and_a_bad_one_is_refused(monkeypatch):
    assert progress.interval() == progress.INTERVAL == 10.0
    monkeypatch.setenv("AG_ATTENTION_PROGRESS_INTERVAL", "2.5")
    assert progress.interval() == 2.5 and progress.Lines(total=1).every == 2.5
    for bad in ("soon", "-1", "nan", "inf"):
        monkeypatch.setenv("AG_ATTENTION_PROGRESS_INTERVAL", bad)
        with pytest.raises(InvalidArgumentError, match=f"AG_ATTENTION_PROGRESS_INTERVAL='{bad}'"):
            progress.interval()


def test_a_bad_interval_stops_the_command_before_any_work(monkeypatch, capsys):
    from tests.cli import exit_of

    monkeypatch.setenv("AG_ATTENTION_PROGRESS_INTERVAL", "soon")
    status, out, err = exit_of(["dim", "--widths", "2,2", "--ranks", "1"], capsys)
    assert status == 2 and "AG_ATTENTION_PROGRESS_INTERVAL='soon'" in err and out == ""


def test_a_terminal_gets_a_bar_and_anything_else_lines(monkeypatch):
    monkeypatch.setattr(sys, "stderr", Terminal())
    with progress.bar(total=3, desc="ranks") as b:
        assert not isinstance(b, progress.Lines)
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    with progress.bar(total=3, desc="ranks") as b:
        assert isinstance(b, progress.Lines)
    with progress.quiet(), progress.bar(total=3, desc="ranks") as b:
        assert not isinstance(b, progress.Lines)  # tqdm's, disabled


def test_lines_go_to_standard_error_only_and_quiet_silences_them(monkeypatch, capsys):
    monkeypatch.setenv("AG_ATTENTION_PROGRESS_INTERVAL", "0")
    assert list(progress.track(range(3), desc="sizes", unit="size")) == [0, 1, 2]
    out, err = capsys.readouterr()
    assert out == "" and err.splitlines()[-1].startswith("sizes: 3/3 sizes finished, 00:00 elapsed")
    with progress.quiet():
        list(progress.track(range(3), desc="sizes"))
    monkeypatch.setenv("AG_ATTENTION_QUIET", "1")
    assert progress.is_quiet()
    list(progress.track(range(3), desc="sizes"))
    with progress.elapsed("job", interval=0.01):
        pass
    assert capsys.readouterr() == ("", "")


def test_a_run_logged_to_a_file_says_k_of_n(tmp_path):
    """`ag-attention reproduce variants --quick 2> log` (about 3 s): its networks counted k/88 in the log, the
    report alone on standard output."""
    import os
    import re
    import subprocess

    env = dict(os.environ, AG_ATTENTION_PROGRESS_INTERVAL="0")
    env.pop("AG_ATTENTION_QUIET", None)
    log = tmp_path / "log"
    with log.open("w") as err:
        r = subprocess.run(
            [sys.executable, "-m", "ag_attention", "reproduce", "variants", "--quick", "--out", str(tmp_path / "v")],
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
            env=env,
            timeout=300,
        )
    assert r.returncode == 0, log.read_text()
    lines = re.findall(
        r"^variants: (\d+)/(\d+) networks finished, \d\d:\d\d elapsed(, about \d\d:\d\d left)?", log.read_text(), re.M
    )
    assert len(lines) >= 2 and lines[-1][0] == lines[-1][1] and not lines[-1][2]
    assert all(k < n and left for k, n, left in [(int(a), int(b), c) for a, b, c in lines[:-1]])
    assert "finished" not in r.stdout and "PASSED" in r.stdout
