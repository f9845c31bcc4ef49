"""What every backend shares (ag_attention._m2.backend): the timeout argument, the version query."""

import signal
from pathlib import Path

import pytest

from ag_attention._errors import InvalidArgumentError, M2NotFoundError
from ag_attention._m2.backend import check_timeout, stderr_note
from tests.helpers import fake_m2


def test_bad_timeout(tmp_path):
    b = fake_m2(tmp_path, "true")
    for bad in [0, -1, "x", None]:
        with pytest.raises(InvalidArgumentError, match="timeout"):
            b.run("x", timeout=bad)


def test_a_version_query_without_output_says_why(tmp_path):
    b = fake_m2(tmp_path, "exit 0", version=False)
    with pytest.raises(M2NotFoundError, match=r"did not report its version .*exit status 0, no output"):
        b.version()
    b = fake_m2(tmp_path, "echo 'M2: cannot open the documentation database' >&2; exit 2", version=False)
    with pytest.raises(M2NotFoundError, match="exit status 2, stderr: M2: cannot open the documentation database"):
        b.version()


@pytest.mark.parametrize("value, seconds", [(1, 1.0), (0.5, 0.5), (9_999_999, 9_999_999.0)])
def test_a_timeout_is_seconds(value, seconds):
    assert check_timeout(value) == seconds and isinstance(check_timeout(value), float)


@pytest.mark.parametrize(
    "value, message",
    [
        (True, "m2_timeout=True: must be a number of seconds"),
        ("10", "m2_timeout='10': must be a number of seconds"),
        (float("nan"), "m2_timeout=nan: must be a number of seconds, above 0 and below 1e7"),
        (1e7, "m2_timeout=10000000.0: must be a number of seconds, above 0 and below 1e7"),
        (0, "m2_timeout=0: must be a number of seconds, above 0 and below 1e7"),
    ],
)
def test_a_bad_timeout_is_named(value, message):
    with pytest.raises(InvalidArgumentError) as err:
        check_timeout(value, "m2_timeout")
    assert str(err.value) == message


def test_stderr_notes_are_one_short_line():
    assert stderr_note("") == stderr_note(b"  \n") == "nothing on stderr"
    assert stderr_note("error:\n  bad\tthing\n") == "stderr: error: bad thing"
    assert stderr_note(b"bad \xff byte") == "stderr: bad \\xff byte"
    long = stderr_note("x" * 400, limit=300)
    assert long == "stderr: " + "x" * 300 + "..."


def test_a_job_runs_in_its_own_directory_with_a_minimal_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("AG_ATTENTION_SECRET", "not for the job")
    b = fake_m2(tmp_path, 'pwd; echo "HOME=$HOME"; env | grep -c AG_ATTENTION_SECRET; cat job.m2')
    out = b.run("print 1;", timeout=30, label="where")
    workdir, home, secret, script = out.stdout.splitlines()
    assert home == f"HOME={workdir}" and secret == "0" and script == "print 1;"
    assert (out.returncode, out.backend, out.script_name) == (0, "local", "job.m2") and out.seconds > 0
    assert not Path(workdir).exists()  # removed when the job ended


# what Macaulay2 1.21 and its libraries print when an allocation fails (measured under RLIMIT_AS, and the texts
# of libgc, libstdc++, tcmalloc and flint): every one of them, under a limit, is the limit's error
@pytest.mark.parametrize(
    "said",
    [
        "Insufficient memory for the allocation",  # libgc: 7 of 27 runs of implicitize 4,3 ranks 2 under 256m..600m
        "GC Warning: Out of Memory! Heap size: 290 MiB. Returning NULL!",
        "terminate called after throwing an instance of 'std::bad_alloc'",
        "Could not allocate memory",
        "Exception (FLINT memory_manager). Unable to allocate memory (1048576).",
        "FATAL ERROR: Out of memory trying to allocate internal tcmalloc data (bytes, object-size)",
        "Not enough memory.",
    ],
)
def test_every_allocation_failure_text_names_the_limit(tmp_path, said):
    from ag_attention._errors import M2MemoryError

    b = fake_m2(tmp_path, f'echo "{said}" >&2; exit 1')
    b.memory = "300m"
    with pytest.raises(M2MemoryError) as err:
        b.run("x", timeout=30, label="big job")
    text = str(err.value)
    assert text.startswith("Macaulay2 error: big job ran out of memory (") and said.split("(")[0] in text
    assert "300 MiB of address space" in text and "AG_ATTENTION_M2_MEMORY=600m" in text
    assert "probably" not in text and err.value.limit == 300 * 2**20


def test_a_job_that_dies_without_a_word_under_a_limit_probably_ran_out_of_memory(tmp_path, monkeypatch):
    from ag_attention._errors import M2ExecutionError, M2MemoryError
    from ag_attention._m2.jobs import run_json
    from ag_attention._m2.memory import MEMORY_ENV

    monkeypatch.delenv(MEMORY_ENV, raising=False)
    for ending, status in [
        ("exit 1", "exit status 1"),
        ("kill -SEGV $$", "killed by SIGSEGV"),
        ("kill -ABRT $$", "killed by SIGABRT"),
    ]:
        b = fake_m2(tmp_path, ending)
        b.memory = "300m"
        try:
            with pytest.raises(M2MemoryError) as err:
                run_json("result = 1;", schema={}, backend=b, timeout=30, cache=False, label="big job")
        except BaseException as exc:  # say which ending (a full-suite run once saw exit 0 and no output)
            raise AssertionError(f"fake M2 ending with {ending!r}: {type(exc).__name__}: {exc}") from exc
        text = str(err.value)
        assert f"big job probably ran out of memory (Macaulay2 ended with {status} and printed nothing" in text
        assert "300 MiB of address space" in text and "AG_ATTENTION_M2_MEMORY=600m" in text
        assert "not certain" in text and err.value.limit == 300 * 2**20
    # without a limit, after a message of Macaulay2's own, or killed by someone: not a memory error
    unlimited = fake_m2(tmp_path, "exit 1")
    unlimited.memory = "unlimited"
    said = fake_m2(tmp_path, 'echo "job.m2:1:1:(3): error: no method for adjacent objects" >&2; exit 1')
    # a signal this process ignores is ignored by the fake too (dispositions of SIG_IGN survive exec, and a shell
    # cannot reset them): under `nohup cmd &` SIGHUP and SIGINT are, and the fake would end with 0 and no output
    live = [
        sig
        for sig in ("KILL", "TERM", "INT", "HUP")
        if sig == "KILL" or signal.getsignal(getattr(signal, "SIG" + sig)) is not signal.SIG_IGN
    ]
    for b in [unlimited, said] + [fake_m2(tmp_path, f"kill -{sig} $$") for sig in live]:
        with pytest.raises(M2ExecutionError) as err:
            run_json("result = 1;", schema={}, backend=b, timeout=30, cache=False, label="job")
        assert not isinstance(err.value, M2MemoryError), str(err.value)
