"""External jobs beside the numerical work (ag_attention._landscape.beside), with real msolve jobs."""

import time

import pytest

from ag_attention._algebra.msolve import count_solutions
from ag_attention._errors import MSolveTimeoutError
from ag_attention._landscape.beside import Beside


def test_jobs_run_in_order_within_the_deadline(msolve):
    t0 = time.monotonic()
    with Beside(time.monotonic() + 30) as beside:
        beside.submit(
            "circle", lambda left: count_solutions(["x", "y"], ["x^2+y^2-1", "x-y"], 65521, timeout=left).count
        )
        beside.submit("capped", lambda left: left, cap=2.0)
        assert beside.wait("circle").value == 2 and beside.value("circle") == 2
        o = beside.wait("capped")
        assert o.ok and o.value <= 2.0
    assert time.monotonic() - t0 < 30


def test_a_job_with_no_time_left_is_not_started_and_a_failure_is_kept():
    with Beside(time.monotonic() + 0.5) as beside:
        beside.submit("late", lambda left: 1)
        beside.submit("boom", lambda left: 1 / 0)
        beside.submit("slow", lambda left: (_ for _ in ()).throw(MSolveTimeoutError("x", left)))
        assert beside.wait("late").state == "not started" and beside.value("late") is None
        assert beside.wait("boom").state in ("not started", "failed")
    with Beside(time.monotonic() + 30) as beside:
        beside.submit("boom", lambda left: 1 / 0)
        beside.submit("slow", lambda left: (_ for _ in ()).throw(MSolveTimeoutError("x", left)))
        assert beside.wait("slow").state == "timed out"
        assert beside.wait("boom").state == "failed"
        with pytest.raises(ZeroDivisionError):
            beside.raise_failures()


def test_an_error_of_the_caller_kills_the_jobs_under_way(tmp_path, monkeypatch):
    import uuid

    from tests.helpers import fake_msolve, processes_matching

    tag = f"0.{uuid.uuid4().int % 10**6:06d}"  # a sleep only this test starts
    monkeypatch.setenv(
        "AG_ATTENTION_MSOLVE", fake_msolve(tmp_path, f'if [ "$1" = -h ]; then exit 0; fi; exec sleep 6{tag}')
    )
    t0 = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        with Beside(time.monotonic() + 120) as beside:
            beside.submit("sleeper", lambda left: count_solutions(["x"], ["x-1"], 65521, timeout=left))
            while not processes_matching(f"sleep 6{tag}") and time.monotonic() - t0 < 30:
                time.sleep(0.05)
            raise KeyboardInterrupt
    assert time.monotonic() - t0 < 30 and processes_matching(f"sleep 6{tag}") == []  # killed, not waited for


def test_a_job_no_longer_needed_is_abandoned_and_its_process_killed(tmp_path, monkeypatch):
    import uuid

    from tests.helpers import fake_msolve, processes_matching

    tag = f"0.{uuid.uuid4().int % 10**6:06d}"
    monkeypatch.setenv(
        "AG_ATTENTION_MSOLVE", fake_msolve(tmp_path, f'if [ "$1" = -h ]; then exit 0; fi; exec sleep 7{tag}')
    )
    t0 = time.monotonic()
    with Beside(time.monotonic() + 120) as beside:
        beside.submit("long", lambda left: count_solutions(["x"], ["x-1"], 65521, timeout=left))
        beside.submit("next", lambda left: 2)
        assert beside.wait("long", timeout=0.5).state == "running"
        while not processes_matching(f"sleep 7{tag}") and time.monotonic() - t0 < 30:
            time.sleep(0.05)
        beside.abandon("long", "not needed: a test")
        o = beside.outcome("long")
        assert (o.state, o.value) == ("abandoned", "not needed: a test") and processes_matching(f"sleep 7{tag}") == []
        assert beside.wait("next").value == 2
        beside.abandon("next", "too late")  # a finished job is left as it was
        assert beside.outcome("next").ok
    assert time.monotonic() - t0 < 30
