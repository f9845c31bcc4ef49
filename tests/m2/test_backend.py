"""What every backend shares (ag_attention._m2.backend): the timeout argument, the version query."""

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


@pytest.mark.parametrize("value, message", [
    (True, "m2_timeout=True: must be a number of seconds"),
    ("10", "m2_timeout='10': must be a number of seconds"),
    (float("nan"), "m2_timeout=nan: must be a number of seconds, above 0 and below 1e7"),
    (1e7, "m2_timeout=10000000.0: must be a number of seconds, above 0 and below 1e7"),
    (0, "m2_timeout=0: must be a number of seconds, above 0 and below 1e7"),
])
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
