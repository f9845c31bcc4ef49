"""Error hierarchy of ag-attention.

Every error the package raises on purpose derives from :class:`AgAttentionError`,
so callers (and the CLI) can separate "the input or the computation is at fault"
from programming errors.
"""

from __future__ import annotations

__all__ = [
    "AgAttentionError",
    "InvalidArchitectureError",
    "InvalidArgumentError",
    "InsufficientMemoryError",
    "ComputationError",
    "M2Error",
    "M2NotFoundError",
    "M2TimeoutError",
    "M2ExecutionError",
    "M2OutputError",
    "M2MemoryError",
    "MSolveError",
    "MSolveNotFoundError",
    "MSolveTimeoutError",
    "MSolveExecutionError",
    "MSolveOutputError",
    "NoClearGapError",
    "OutputError",
]


def _seconds(seconds: float) -> str:
    """A time limit as people write it: ``3`` (not ``2.99516``, what was left of a budget of 3 s), ``0.5``."""
    return f"{seconds:.3g}" if seconds < 1000 else f"{seconds:.0f}"


class AgAttentionError(Exception):
    """Base class of all errors raised by ag-attention."""


class InvalidArgumentError(AgAttentionError, ValueError):
    """A user-supplied value is invalid; the message names the value."""


class InvalidArchitectureError(InvalidArgumentError):
    """An architecture description is invalid (names the field and the value)."""

    def __init__(self, field: str, value: object, reason: str):
        self.field = field
        self.value = value
        self.reason = reason
        super().__init__(f"invalid architecture: {field}={value!r}: {reason}")


class InsufficientMemoryError(InvalidArgumentError):
    """A computation would need more memory than may be allocated; refused before allocating.

    ``estimate`` and ``limit`` are in bytes.  An invalid argument (exit 2):
    the sizes asked for do not fit this machine.
    """

    def __init__(self, message: str, *, estimate: int, limit: int):
        self.estimate = estimate
        self.limit = limit
        super().__init__(message)


class ComputationError(AgAttentionError):
    """An exact computation could not produce a trustworthy answer.

    Carries the prime and seed so the computation can be rerun.
    """

    def __init__(self, message: str, *, prime: int | None = None, seed: int | None = None):
        self.prime = prime
        self.seed = seed
        extra = []
        if prime is not None:
            extra.append(f"prime={prime}")
        if seed is not None:
            extra.append(f"seed={seed}")
        super().__init__(message + (f" ({', '.join(extra)})" if extra else ""))


class ComputationTimeoutError(ComputationError):
    """An in-process computation reached its time limit (``timeout=``, the CLI's ``--timeout``) and stopped.

    ``what`` names the step it was in, ``seconds`` the limit.  Nothing was
    computed wrong: it was only not finished.  The CLI exits with status 3 (as
    for an external job killed at its limit).
    """

    def __init__(self, what: str, seconds: float):
        self.what = what
        self.seconds = seconds
        super().__init__(
            f"time limit of {_seconds(seconds)} s reached during {what}: stopped (raise --timeout / "
            "timeout=, or use a smaller network)"
        )


class ComputationInterruptedError(ComputationTimeoutError):
    """Ctrl-C stopped an in-process computation that has no partial result to return (the point engine); ``what``
    names the step it was in.  A :class:`ComputationTimeoutError` (the CLI exits with status 3): the computations
    that return what they found (the landscape's) return it instead, said "interrupted"."""

    def __init__(self, what: str, seconds: float = 0.0):
        self.what = what
        self.seconds = seconds
        ComputationError.__init__(self, f"interrupted (Ctrl-C) during {what}: stopped")


class OutputError(AgAttentionError):
    """A file could not be written (a full disk, no permission, a planted link); names the path and the reason.

    ``path`` is the file or directory, ``errno`` the system's error number
    (None when there is none).  The CLI exits with status 4.
    """

    def __init__(self, message: str, *, path: str | None = None, errno: int | None = None):
        self.path = path
        self.errno = errno
        super().__init__(message)


class M2Error(AgAttentionError):
    """Base class of Macaulay2 problems."""


class M2NotFoundError(M2Error):
    """No usable Macaulay2 backend (local or container)."""


class M2TimeoutError(M2Error):
    """A Macaulay2 job exceeded its time limit and was killed."""

    def __init__(self, what: str, seconds: float):
        self.what = what
        self.seconds = seconds
        super().__init__(f"Macaulay2 job {what} timed out after {_seconds(seconds)} s and was killed")


class M2ExecutionError(M2Error):
    """Macaulay2 reported an error; carries its own message and location."""

    def __init__(self, message: str, *, location: str | None = None, output: str = ""):
        self.m2_message = message
        self.location = location
        self.output = output
        where = f" at {location}" if location else ""
        super().__init__(f"Macaulay2 error{where}: {message}")


class M2MemoryError(M2ExecutionError):
    """Macaulay2 ran out of memory: the backend's limit (``limit`` bytes) or the machine's."""

    def __init__(self, message: str, *, limit: int | None = None, output: str = ""):
        self.limit = limit
        super().__init__(message, output=output)


class M2OutputError(M2Error):
    """Macaulay2 finished but its output could not be parsed."""

    def __init__(self, message: str, *, output: str = ""):
        self.output = output
        tail = output[-500:] if output else ""
        super().__init__(message + (f"\n--- end of output ---\n{tail}" if tail else ""))


class NoClearGapError(ComputationError):
    """The singular values of a float64 Jacobian show no clear gap: no rank verdict."""


class MSolveError(AgAttentionError):
    """Base class of msolve problems."""


class MSolveNotFoundError(MSolveError):
    """No msolve executable (environment, PATH or the passagemath wheel)."""


class MSolveTimeoutError(MSolveError):
    """An msolve job exceeded its time limit and was killed."""

    def __init__(self, what: str, seconds: float):
        self.what = what
        self.seconds = seconds
        super().__init__(f"msolve job {what} timed out after {_seconds(seconds)} s and was killed")


class MSolveExecutionError(MSolveError):
    """msolve exited with an error (non-zero status, or no output file)."""

    def __init__(self, message: str, *, returncode: int | None = None, output: str = ""):
        self.returncode = returncode
        self.output = output
        super().__init__(message + (f"\n--- msolve said ---\n{output[-1000:]}" if output.strip() else ""))


class MSolveOutputError(MSolveError):
    """msolve finished but its output could not be parsed."""

    def __init__(self, message: str, *, output: str = ""):
        self.output = output
        super().__init__(message + (f"\n--- output (end) ---\n{output[-500:]}" if output else ""))


def brief(text: object, limit: int = 300) -> str:
    """The first line of ``text`` (an error message, a worker's exception), at most ``limit`` characters."""
    lines = str(text).strip().splitlines()
    first = lines[0] if lines else ""
    more = len(lines) > 1
    if len(first) > limit:
        first, more = first[:limit], True
    return first + (" [...]" if more else "")
