"""``ed-degree`` and ``critical-points`` (ag_attention._cli.landscape): end to end, at their limits, resumed,
interrupted, and bad data refused by name."""

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.cli import run_in_process, run_main


def _landscape_data(tmp_path):
    import numpy as np

    X = [[[1, 0], [0, 1]], [[1, 1], [2, -1]], [[0, 1], [1, 3]], [[2, 1], [1, 1]], [[1, -2], [1, 0]]]
    Y = [[[1], [0]], [[0], [2]], [[1], [1]], [[-1], [0]], [[0], [1]]]
    data = tmp_path / "data.npz"
    np.savez(data, inputs=np.array(X, dtype=float) * 0.5, targets=np.array(Y, dtype=float) * 0.125)
    return data


def test_cli_critical_points_of_a_data_file_and_where_weights_sit(tmp_path, capsys, msolve):
    import numpy as np

    data = _landscape_data(tmp_path)
    status, out, err = run_main(
        ["critical-points", "--widths", "2,1", "--data", str(data), "--method", "homotopy", "--json"], capsys
    )
    assert status == 0, err
    r = json.loads(out)
    assert (r["complex_certified"], r["real_pure"], r["minima"]) == (14, 6, 3) and r["complex_pure"] is None
    assert r["routes"][0]["route"].startswith("homotopy") and r["architecture"]["tokens"] == 2
    # a network at the least-loss minimum, as a user saves it: which critical point is it at?
    best = min(r["points"], key=lambda p: p["loss"][0])
    weights = tmp_path / "net.npz"
    np.savez(weights, **{"layers.0.heads.0.A": np.array(best["A"]) * 1.0001, "layers.0.heads.0.V": np.array(best["V"])})
    status, out, err = run_main(
        ["critical-points", "--widths", "2,1", "--data", str(data), "--method", "homotopy", "--weights", str(weights)],
        capsys,
    )
    assert status == 0, err
    line = next(x for x in out.splitlines() if x.strip().startswith("weights"))
    assert (
        "at critical point #0 (minimum" in line
        and "the global minimum among all real critical points (every one found: certified)" in line
    )


def _elapsed_cli(capsys, *args):
    """The command ``args`` run in this process (:func:`tests.cli.run_in_process`) and its wall time."""
    t0 = time.monotonic()
    r = run_in_process(capsys, *args)
    return r, time.monotonic() - t0


def test_cli_ed_degree_at_its_limit_says_not_decided_with_proven_bounds(capsys):
    # (3,1,2) generic is not decided in 8 s: the first line says so, with what is proven; within 8 * 1.1 + 5 s
    argv = ("ed-degree", "--widths", "3,1", "--ranks", "2", "--method", "monodromy", "--workers", "1")
    r, seconds = _elapsed_cli(capsys, *argv, "--timeout", "8")
    first = r.stdout.splitlines()[0]
    assert r.returncode == 3 and first.startswith("ED degree of widths 3,1 ranks 2 t=2 (generic): NOT DECIDED (")
    assert ">= " in first and "(proven lower bound)" in first and "<= 272,547 (proven upper bound)" in first
    assert "prime 0" not in r.stdout and "a square system of 12 unknowns" in r.stderr  # the estimate, first
    assert seconds < 8 * 1.1 + 5 + 5, seconds
    r, _ = _elapsed_cli(capsys, *argv, "--timeout", "5", "--json")
    d = json.loads(r.stdout)
    assert r.returncode == 3 and d["final"] is False and d["ed_degree"] is None and d["prime"] is None
    assert d["lower_bound"] >= 108 and d["upper_bound"] == 272547 and d["monodromy"]["final"] is False


def _save_then_resume(tmp_path, capsys, timeout: str):
    """A count stopped at 2 s with --save, then resumed for ``timeout`` seconds; the first and the resumed output,
    and the resumed run; then a state saved for another problem is refused."""
    state = tmp_path / "m.npz"
    common = ("ed-degree", "--widths", "2,2", "--method", "monodromy")
    r, _ = _elapsed_cli(capsys, *common, "--timeout", "2", "--save", str(state), "--json")
    first = json.loads(r.stdout)
    assert state.exists() and first["monodromy"]["checkpoint"] == str(state)
    r, _ = _elapsed_cli(capsys, *common, "--timeout", timeout, "--resume", str(state), "--save", str(state), "--json")
    other, _ = _elapsed_cli(capsys, *common, "--metric", "euclidean", "--resume", str(state))
    assert other.returncode == 2 and "saved for another problem" in other.stderr
    return first, json.loads(r.stdout), r


def test_cli_a_saved_count_resumes(tmp_path, capsys):
    """--save keeps the monodromy's state at its limit, --resume continues it with the solutions found (a resumed
    count run to the end: the slow test below, and tests/numeric/test_monodromy_state.py's in the library); a state
    saved for another problem is refused."""
    first, d, r = _save_then_resume(tmp_path, capsys, "3")
    assert d["monodromy"]["resumed"] and d["monodromy"]["found"] >= first["monodromy"]["found"] > 0
    assert (r.returncode, d["ed_degree"]) == ((0, 284) if d["final"] else (3, None)), r.stderr


@pytest.mark.slow
def test_cli_a_saved_count_resumes_to_the_end(tmp_path, capsys):
    _, d, r = _save_then_resume(tmp_path, capsys, "120")
    assert r.returncode == 0 and d["final"] and d["ed_degree"] == 284 and d["monodromy"]["resumed"]


@pytest.mark.parametrize(
    "arrays, argv, text",
    [
        ({"inputs": [[[1.0, 0.0]]]}, [], "no array named 'targets'"),
        ({"inputs": [[1.0, 0.0]], "targets": [[1.0]]}, [], "must be 3-d"),
        ({"inputs": [[[1.0, 0.0], [0.0, 1.0]]], "targets": [[[1.0], [0.0]]]}, ["--tokens", "3"], "--tokens=3, but"),
    ],
)
def test_cli_critical_points_refuses_bad_data_by_name(tmp_path, capsys, arrays, argv, text):
    import numpy as np

    path = tmp_path / "d.npz"
    np.savez(path, **{k: np.array(v) for k, v in arrays.items()})
    status, out, err = run_main(["critical-points", "--widths", "2,1", "--data", str(path), *argv], capsys)
    assert status == 2 and text in err and "Traceback" not in err
    status, out, err = run_main(["critical-points", "--widths", "2,1", "--data", str(tmp_path / "none.npz")], capsys)
    assert status == 2 and "none.npz" in err


@pytest.mark.parametrize("signum", ["SIGINT", "SIGTERM"])
def test_cli_ctrl_c_keeps_what_was_found(tmp_path, signum):
    # SIGTERM (a batch system's stop) as the first Ctrl-C: the state saved, the result printed
    import signal

    state = tmp_path / "m.npz"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "ag_attention._cli",
            "ed-degree",
            "--widths",
            "3,1",
            "--ranks",
            "2",
            "--timeout",
            "300",
            "--workers",
            "1",
            "--save",
            str(state),
            "--json",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # (a job started in the background inherits SIGINT ignored: Python then raises nothing)
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 60
    while not state.exists() and time.monotonic() < deadline:  # the first save: the monodromy is under way
        time.sleep(0.2)
    time.sleep(3)
    saved = state.stat().st_mtime_ns
    proc.send_signal(getattr(signal, signum))
    t0 = time.monotonic()
    out, err = proc.communicate(timeout=90)
    d = json.loads(out)
    assert state.stat().st_mtime_ns > saved  # written again as it stopped
    # the monodromy's solutions are kept (on disk too), the msolve counts beside it are stopped, not waited for
    assert proc.returncode == 3 and d["final"] is False and d["monodromy"]["stop"] == "interrupted", err
    # (how many it found in 3 s depends on the load: on a busy machine 22, idle several hundred)
    assert d["monodromy"]["found"] > 0 and "interrupted" in d["status"] and time.monotonic() - t0 < 60
    assert any(
        "stopped, interrupted" in r["outcome"] or r["outcome"].startswith("stopped at a limit") for r in d["routes"]
    )


def _wait_inside_the_run(pid: int, timeout: float = 120.0) -> None:
    """Until the process runs inside ``_clock.interruptible`` (it catches SIGTERM there: SigCgt in /proc), however
    long its imports take on a loaded machine."""
    import signal

    bit = 1 << (signal.SIGTERM - 1)
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            return  # (it ended)
        caught = next((int(line.split()[1], 16) for line in status.splitlines() if line.startswith("SigCgt:")), 0)
        if caught & bit:
            return
        time.sleep(0.05)
    raise AssertionError(f"process {pid} did not start its run within {timeout:g} s")


def test_cli_ctrl_c_on_critical_points_keeps_what_was_found(tmp_path):
    # (4,4): msolve's jobs run beside a monodromy that cannot finish; Ctrl-C at once and after some seconds
    import signal

    import numpy as np

    rng = np.random.default_rng(45)
    data = tmp_path / "D.npz"
    np.savez(data, inputs=rng.standard_normal((6, 2, 4)), targets=rng.standard_normal((6, 2, 4)))
    for wait in (0.5, 6.0):
        proc = subprocess.Popen(
            [sys.executable, "-m", "ag_attention._cli", "critical-points", "--widths", "4,4", "--data", str(data)]
            + ["--timeout", "300", "--json"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        _wait_inside_the_run(proc.pid)  # (Ctrl-C during Python's imports is Python's traceback, not ours)
        time.sleep(wait)
        proc.send_signal(signal.SIGINT)
        t0 = time.monotonic()
        out, err = proc.communicate(timeout=120)
        assert "Traceback" not in err and proc.returncode in (3, 130), err
        if proc.returncode == 3:  # (130: Ctrl-C before the computation began, said in one line)
            d = json.loads(out)
            assert d["final"] is False and time.monotonic() - t0 < 60  # (a hang guard: 10 s grace after Ctrl-C)
            assert not any("None" in r["outcome"] for r in d["routes"]), d["routes"]


def test_cli_critical_points_checks_every_option_before_the_work(tmp_path, capsys, monkeypatch):
    """--compact without --json and --weights of another layer are refused before any computation starts."""
    import numpy as np

    import ag_attention._cli.landscape as cli_landscape

    def no_work(*args, **kwargs):
        raise AssertionError("the work started")

    monkeypatch.setattr(cli_landscape, "critical_points", no_work)
    data = tmp_path / "d.npz"
    rng = np.random.default_rng(0)
    np.savez(data, inputs=rng.standard_normal((5, 2, 2)), targets=rng.standard_normal((5, 2, 1)))
    weights = tmp_path / "w.npz"
    np.savez(weights, **{"layers.0.heads.0.A": np.eye(3), "layers.0.heads.0.V": np.ones((1, 3))})
    base = ["critical-points", "--widths", "2,1", "--data", str(data)]
    status, out, err = run_main([*base, "--compact"], capsys)
    assert status == 2 and "--compact" in err and "Traceback" not in err
    status, out, err = run_main([*base, "--weights", str(weights)], capsys)
    assert status == 2 and "w.npz" in err and "Traceback" not in err
