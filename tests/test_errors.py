"""The error hierarchy (ag_attention._errors): one base, and the values each error carries and names."""

from ag_attention._errors import (
    ComputationError,
    InsufficientMemoryError,
    InvalidArchitectureError,
    InvalidArgumentError,
    M2Error,
    M2ExecutionError,
    M2MemoryError,
    M2OutputError,
    M2TimeoutError,
    MSolveError,
    MSolveExecutionError,
    MSolveOutputError,
    MSolveTimeoutError,
    NoClearGapError,
)


def test_errors_module_holds_every_documented_error():
    assert issubclass(NoClearGapError, ComputationError)
    # the old import path still works
    from ag_attention._numeric import NoClearGapError as N2

    assert N2 is NoClearGapError


def test_every_error_derives_from_the_base():
    from ag_attention import _errors

    for name in _errors.__all__:
        cls = getattr(_errors, name)
        assert issubclass(cls, _errors.AgAttentionError), name
    # a bad value is also a ValueError (callers that catch ValueError keep working)
    assert issubclass(InvalidArgumentError, ValueError) and issubclass(InsufficientMemoryError, InvalidArgumentError)
    assert issubclass(M2MemoryError, M2ExecutionError) and issubclass(M2ExecutionError, M2Error)
    assert issubclass(MSolveExecutionError, MSolveError) and not issubclass(MSolveError, M2Error)


def test_an_invalid_architecture_names_the_field_and_the_value():
    err = InvalidArchitectureError("widths[1]", 0, "must be positive")
    assert (err.field, err.value, err.reason) == ("widths[1]", 0, "must be positive")
    assert str(err) == "invalid architecture: widths[1]=0: must be positive"
    assert str(InvalidArchitectureError("parametrization", "XY", "QKV or AV")) == (
        "invalid architecture: parametrization='XY': QKV or AV"
    )


def test_insufficient_memory_carries_the_estimate_and_the_limit():
    err = InsufficientMemoryError("the Jacobian needs 2 GiB", estimate=2 * 2**30, limit=2**30)
    assert (err.estimate, err.limit, str(err)) == (2 * 2**30, 2**30, "the Jacobian needs 2 GiB")


def test_a_computation_error_says_how_to_rerun_it():
    assert str(ComputationError("no gap")) == "no gap"
    err = ComputationError("no gap", prime=101, seed=3)
    assert (err.prime, err.seed, str(err)) == (101, 3, "no gap (prime=101, seed=3)")
    assert str(NoClearGapError("no clear gap", seed=0)) == "no clear gap (seed=0)"
    assert str(ComputationError("x", prime=7)) == "x (prime=7)"


def test_timeouts_name_the_job_and_the_limit():
    m2 = M2TimeoutError("implicitize (local backend)", 2.5)
    assert (m2.what, m2.seconds) == ("implicitize (local backend)", 2.5)
    assert str(m2) == "Macaulay2 job implicitize (local backend) timed out after 2.5 s and was killed"
    ms = MSolveTimeoutError("count", 60.0)
    assert str(ms) == "msolve job count timed out after 60 s and was killed" and ms.seconds == 60.0


def test_macaulay2_errors_keep_its_message_location_and_output():
    err = M2ExecutionError("division by zero", location="job.m2:3:14", output="stderr text")
    assert (err.m2_message, err.location, err.output) == ("division by zero", "job.m2:3:14", "stderr text")
    assert str(err) == "Macaulay2 error at job.m2:3:14: division by zero"
    assert str(M2ExecutionError("no location")) == "Macaulay2 error: no location"
    oom = M2MemoryError("job ran out of memory", limit=2**30)
    assert oom.limit == 2**30 and oom.location is None and str(oom) == "Macaulay2 error: job ran out of memory"


def test_output_errors_show_the_end_of_the_output():
    assert str(M2OutputError("no result marker")) == "no result marker"
    long = "x" * 600 + "THE END"
    err = M2OutputError("truncated", output=long)
    assert err.output == long
    assert str(err) == "truncated\n--- end of output ---\n" + long[-500:]
    assert str(MSolveOutputError("bad", output=long)) == "bad\n--- output (end) ---\n" + long[-500:]


def test_an_msolve_failure_shows_what_msolve_said_if_anything():
    err = MSolveExecutionError("msolve exited with status 3", returncode=3, output="bad input\n")
    assert err.returncode == 3 and str(err) == "msolve exited with status 3\n--- msolve said ---\nbad input\n"
    assert str(MSolveExecutionError("no output file", output="  \n")) == "no output file"  # blank: nothing shown
    said = "y" * 1500
    assert str(MSolveExecutionError("failed", output=said)).endswith("\n" + said[-1000:])
