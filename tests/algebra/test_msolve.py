"""Running msolve (ag_attention._algebra.msolve): fake binaries for the error paths, the real one for counts and
limits."""

import contextlib
import signal
import sys
import time
import uuid

import pytest

from ag_attention import _progress as progress
from ag_attention._algebra import msolve, msolve_text
from ag_attention._algebra.certificate import build_system
from ag_attention._algebra.msolve import (
    MSolveExecutionError,
    MSolveNotFoundError,
    MSolveTimeoutError,
    count_solutions,
    find_msolve,
    msolve_available,
)
from tests.helpers import Terminal, fake_msolve, processes_matching


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


def test_the_wait_on_msolve_shows_its_label_and_backend(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("AG_ATTENTION_MSOLVE", fake_msolve(tmp_path, "sleep 0.3; echo '[0]:'"))
    monkeypatch.setattr(progress, "DELAY", 0.0)
    err = Terminal()
    monkeypatch.setattr(sys, "stderr", err)  # in the test body: pytest's capture resets it after set-up
    out = msolve.run_msolve(msolve.format_input(["x"], 101, ["x^2-1"]), label="slow count", backend="local")
    assert out.output.strip() == "[0]:" and "msolve slow count (local)" in err.getvalue()
    with progress.quiet():
        err.truncate(0)
        err.seek(0)
        msolve.run_msolve(msolve.format_input(["x"], 101, ["x^2-1"]), label="slow count", backend="local")
    assert err.getvalue() == ""
    assert capsys.readouterr().out == ""


def test_msolve_keeps_the_names_of_its_text_module():
    for name in msolve_text.__all__:
        assert getattr(msolve, name) is getattr(msolve_text, name)
    assert msolve.format_input(["x", "y"], 101, ["x*y*x"]) == "x,y\n101\n1*x^2*y\n"


@pytest.mark.container
def test_container_msolve_timeout_kills_the_container(m2_container):
    """A count past its timeout ends with MSolveTimeoutError and leaves no container and no msolve behind."""
    import random
    import subprocess

    from ag_attention._algebra.msolve import MSolveTimeoutError, run_msolve

    # 14 dense random quadrics in 14 variables (2^14 solutions): far more than 2 s of F4
    rng = random.Random(0)
    names = [f"x{i}" for i in range(14)]
    polys = [
        "+".join(f"{rng.randrange(1, 65521)}*{a}*{b}" for i, a in enumerate(names) for b in names[i + 1 :]) + "+1"
        for _ in range(14)
    ]
    text = ",".join(names) + "\n65521\n" + ",\n".join(polys) + "\n"
    with pytest.raises(MSolveTimeoutError, match="after 2 s"):
        run_msolve(text, flags=("-g", "1"), timeout=2, backend=m2_container, label="slow system")
    # at once (the error comes once the container is killed and removed), and only this process's containers
    # (labelled with its PID): other processes' jobs on the machine do not count
    import os

    names_left = subprocess.run(
        [
            m2_container.engine,
            "ps",
            "-a",
            "--filter",
            f"label=ag-attention.pid={os.getpid()}",
            "--format",
            "{{.Names}}",
        ],
        capture_output=True,
        text=True,
    ).stdout
    assert names_left.split() == []
    assert processes_matching(f"ag-attention.pid={os.getpid()}") == []


def test_missing_msolve_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.setenv("AG_ATTENTION_MSOLVE", str(tmp_path / "nothing"))
    with pytest.raises(MSolveNotFoundError, match="AG_ATTENTION_MSOLVE"):
        find_msolve()
    assert msolve_available()[0] is False


def test_timeout_kills_the_whole_process_group(tmp_path, monkeypatch):
    tag = str(3000 + uuid.uuid4().int % 5000)
    monkeypatch.setenv(
        "AG_ATTENTION_MSOLVE",
        fake_msolve(tmp_path, f'if [ "$1" = -h ]; then exit 0; fi; sleep {tag}1 & sleep {tag}2 & exec sleep {tag}3'),
    )
    with fails_if_hanging(), pytest.raises(MSolveTimeoutError, match="fake job .*after 1 s"):
        count_solutions(["x"], ["x-1"], 65521, timeout=1, label="fake job")
    assert processes_matching(f"sleep {tag}") == []  # at once: the error comes only once the group is gone


def test_failing_msolve_is_reported(tmp_path, monkeypatch):
    monkeypatch.setenv("AG_ATTENTION_MSOLVE", fake_msolve(tmp_path, "echo 'bad input' >&2; exit 3"))
    with pytest.raises(MSolveExecutionError, match="status 3") as err:
        count_solutions(["x"], ["x-1"], 65521, timeout=10)
    assert "bad input" in str(err.value)


def test_msolve_out_of_memory_names_the_limit(tmp_path, monkeypatch):
    monkeypatch.setenv(
        "AG_ATTENTION_MSOLVE",
        fake_msolve(tmp_path, "echo 'Allocating memory for hash-column lookup table failed,' >&2; kill -SEGV $$"),
    )
    with pytest.raises(MSolveExecutionError, match="ran out of memory under its memory limit") as err:
        count_solutions(["x"], ["x-1"], 65521, timeout=10, backend="local")
    assert "AG_ATTENTION_M2_MEMORY" in str(err.value) and "local backend" in str(err.value)


def test_real_msolve_under_a_small_memory_limit(msolve, monkeypatch):
    """The backend's address-space limit applies to msolve: a system that needs more fails with the limit named."""
    import random

    monkeypatch.setenv("AG_ATTENTION_M2_MEMORY", "300m")
    rng = random.Random(0)
    names = [f"x{i}" for i in range(12)]
    polys = [
        "+".join(f"{rng.randrange(1, 65521)}*{a}*{b}" for i, a in enumerate(names) for b in names[i:]) + "+1"
        for _ in range(12)
    ]
    with pytest.raises(MSolveExecutionError, match="memory"):
        count_solutions(names, polys, 65521, timeout=120, backend="local", linear_algebra=2)


def test_repeated_factors_count_right(msolve):
    # (x^3, y^2): 6 standard monomials; read as (x, y^2) it would be 2
    assert count_solutions(["x", "y"], ["x*x*x", "y*y"], 65521, timeout=30).count == 6
    assert count_solutions(["x", "y"], ["x*x*x-x*y*y", "y*y*y-1"], 65521, timeout=30).count == 9


def test_positive_dimensional_and_empty_systems(msolve):
    assert count_solutions(["x", "y"], ["x*y"], 65521, timeout=30).count is None
    assert count_solutions(["x", "y"], ["x-1", "x-2"], 65521, timeout=30).count == 0
    r = count_solutions(["x", "y"], ["x^2-1", "x*y-1"], 65521, method="parametrization", timeout=30)
    assert (r.count, r.distinct, r.zero_dimensional) == (2, 2, True)


def test_real_msolve_timeout(msolve, tmp_path, monkeypatch):
    # the real binary under a unique argv[0], so msolve jobs of other processes do not count
    tag = f"msolve-{uuid.uuid4().hex[:10]}"
    monkeypatch.setenv("AG_ATTENTION_MSOLVE", fake_msolve(tmp_path, f'exec -a {tag} "{msolve}" "$@"'))
    sy = build_system(3, 3, 1)  # about a minute: far beyond the limit of 1 s on any machine
    with fails_if_hanging(), pytest.raises(MSolveTimeoutError, match="after 1 s"):
        count_solutions(sy.variables, sy.polynomials, sy.prime, timeout=1)
    assert processes_matching(tag) == []


def test_the_version_query_takes_from_the_counts_budget(tmp_path, monkeypatch):
    """H5: ``msolve -h`` had a fixed 120 s limit; like Macaulay2's version query it now takes from the job's."""
    from ag_attention._m2.runner import get_backend

    monkeypatch.setattr(msolve, "_VERSIONS", {})
    # -h answers after a second, the count hangs: both together stay within the count's limit
    monkeypatch.setenv(
        "AG_ATTENTION_MSOLVE",
        fake_msolve(
            tmp_path, 'if [ "$1" = -h ]; then sleep 1; echo "msolve version 0.0.1"; exit 0; fi; exec sleep 1000'
        ),
    )
    local = get_backend("local")
    calls = []
    run_program = local.run_program

    def recorded(executable, args, files, **kw):
        t0 = time.monotonic()
        try:
            return run_program(executable, args, files, **kw)
        finally:
            calls.append((kw["label"], kw["timeout"], time.monotonic() - t0))

    monkeypatch.setattr(local, "run_program", recorded)
    with pytest.raises(MSolveTimeoutError, match=r"msolve job msolve count of x \(local backend\) timed out after 3 s"):
        count_solutions(["x"], ["x-1"], 65521, timeout=3, label="count of x", backend="local")
    (v_label, v_limit, v_took), (j_label, j_limit, _) = calls
    assert (v_label, v_limit, j_label) == ("msolve -h (version query)", 3.0, "msolve count of x")
    assert j_limit <= 3.0 - v_took  # what the version query left
    # a version query that hangs is bounded by the count's limit, and says so
    monkeypatch.setattr(msolve, "_VERSIONS", {})
    monkeypatch.setenv("AG_ATTENTION_MSOLVE", fake_msolve(tmp_path, "exec sleep 1000"))
    with pytest.raises(
        MSolveTimeoutError,
        match=r"msolve count of x: version query \(msolve -h, local backend\) timed out "
        r"after 1 s",
    ):
        count_solutions(["x"], ["x-1"], 65521, timeout=1, label="count of x", backend="local")
    assert msolve.msolve_version.__defaults__[-1] == 60.0  # alone, at most Macaulay2's VERSION_TIMEOUT


@pytest.mark.parametrize(
    "ending, said, not_said",
    [
        (
            'echo "ag-attention-container: exit status 137, oom_kill 1" >&2; exit 137',
            "it ran out of memory: the kernel's out-of-memory killer ended it (the container's cgroup counts 1",
            "outside",
        ),
        (
            "exit 137",
            "the container was killed from outside (exit status 137: SIGKILL of its first process, as `ENGINE kill`",
            "ran out of memory",
        ),
        (
            'echo "ag-attention-container: exit status 143, oom_kill 0" >&2; exit 143',
            "the container was stopped from outside (exit status 143: SIGTERM",
            "ran out of memory",
        ),
        (
            'echo "ag-attention-container: exit status 137, oom_kill 0" >&2; exit 137',
            "killed with SIGKILL inside the container, not by the out-of-memory killer",
            "ran out of memory",
        ),
    ],
)
def test_how_msolve_in_a_container_ended(tmp_path, monkeypatch, ending, said, not_said):
    """Q2 for msolve: the container's out-of-memory kill, and a container killed or stopped by hand, told apart."""
    from ag_attention._m2.runner import ContainerBackend

    monkeypatch.setattr(msolve, "_VERSIONS", {})
    engine = fake_msolve(
        tmp_path, f'case "$*" in *" msolve -h") echo "msolve version 0.10.1"; exit 0 ;; esac\n{ending}'
    )
    b = ContainerBackend(engine=engine, memory="1g")
    with pytest.raises(MSolveExecutionError) as err:
        count_solutions(["x"], ["x-1"], 65521, timeout=30, label="count", backend=b)
    text = str(err.value).split("\n--- msolve said ---")[0]
    assert said.replace("ENGINE", engine) in text and not_said not in text, text


@pytest.mark.usefixtures("msolve")
def test_a_count_modulo_p_reads_reduced_coefficients():
    # 2p x + y - 1 is y - 1 modulo p: with y^2 - 1 the solutions are a line (x free), not a finite set; msolve
    # reading 2p unreduced counted 2 (measured: a critical-point system over QQ counted 34 instead of 20)
    p = 2**31 - 1
    count = msolve.count_solutions(["x", "y"], [f"{2 * p}*x + y - 1", "y^2 - 1"], p, backend="local")
    assert count.count is None and not count.zero_dimensional
    count = msolve.count_solutions(["x", "y"], [f"{2 * p + 1}*x + y - 1", "y^2 - 1"], p, backend="local")
    assert count.count == 2
