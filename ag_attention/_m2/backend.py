"""The interface of a way to run Macaulay2 (and msolve): :class:`Backend` and what a job returns.

A backend says how to start a job (:meth:`Backend._command`,
:meth:`Backend._program_command`), what the child runs before ``exec``, its
environment, what to kill besides the process group, and how it recognizes a
job that ran out of memory.  Everything else is shared: the job directory
(:mod:`ag_attention._m2.jobdir`), the supervision under the timeout
(:mod:`ag_attention._m2.process`), the version query, the errors.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
import uuid
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from .._checks import check_seconds
from .._errors import M2MemoryError, M2NotFoundError, M2TimeoutError
from .jobdir import job_directory
from .memory import MEMORY_ENV, OUT_OF_MEMORY, how_to_raise, memory_setting, parse_memory, size
from .parse import exit_status, printable
from .process import die_with_parent, supervise, terminate_with_cleanup

__all__ = ["Backend", "M2Output", "check_timeout", "stderr_note", "VERSION_TIMEOUT", "HOW_TO_GET_M2"]

log = logging.getLogger(__name__)

#: seconds a version query may take at most (less when the job's own limit is smaller)
VERSION_TIMEOUT = 60.0
HOW_TO_GET_M2 = (
    "Macaulay2 is needed for this computation and no backend works here. Either `ag-attention m2 install` "
    "(Macaulay2 and msolve from their locked PyPI wheels, no root), install it locally "
    "(Debian/Ubuntu: `apt-get install macaulay2`, or `make setup` in the ag-attention checkout; other "
    "systems: https://macaulay2.com/Downloads), or build the project's image with `docker/build.sh` "
    "(needs a Docker engine or podman; `make setup-container` also installs podman on Debian)."
)


@dataclass(frozen=True)
class M2Output:
    """What one Macaulay2 process produced.

    ``stdout`` keeps bytes that are not UTF-8 as lone surrogates (``surrogateescape``),
    so the result parser can tell them apart; ``stderr`` shows them as ``\\xNN``.
    """

    stdout: str
    stderr: str
    returncode: int
    seconds: float
    backend: str
    script_name: str = "job.m2"


def check_timeout(timeout: float, name: str = "timeout") -> float:
    """Seconds as a float in ``(0, 1e7)``; a bool, a string or nan is an error naming ``name``
    (:func:`ag_attention._checks.check_seconds`)."""
    return check_seconds(timeout, name)


def stderr_note(stderr: str | bytes, limit: int = 300) -> str:
    """``stderr: ...`` (at most ``limit`` characters, on one line) or ``nothing on stderr``."""
    if isinstance(stderr, bytes):
        stderr = stderr.decode("utf-8", "backslashreplace")
    text = " ".join(stderr.split())
    if not text:
        return "nothing on stderr"
    return "stderr: " + (text if len(text) <= limit else text[:limit] + "...")


class Backend(ABC):
    """A way to run Macaulay2.

    ``memory``: the job's memory limit (``"4g"``, ``"512m"``, bytes, or
    ``"unlimited"``); default ``AG_ATTENTION_M2_MEMORY`` or 4 GiB, read at
    each job.  How a backend imposes it is its own (address space, ``--memory``).
    """

    name: str = "?"

    def __init__(self, memory: str | int | None = None) -> None:
        self._version: str | None = None
        self._lock = threading.Lock()
        self.memory = memory
        if memory is not None:
            parse_memory(memory, "memory")  # a bad value fails here, not at the first job

    @abstractmethod
    def available(self) -> tuple[bool, str]:
        """(works here?, explanation)."""

    @abstractmethod
    def _command(self, jobdir: Path, name: str, timeout: float) -> list[str]:
        """The argument list running ``job.m2`` from ``jobdir`` (``timeout``: the job's limit)."""

    def _on_timeout(self, name: str) -> None:  # noqa: B027 - a hook; the local backend needs nothing more
        """Extra cleanup after the client process group has been killed."""

    def _preexec(self) -> Callable[[], None]:
        """What the child runs between fork and exec."""
        return die_with_parent

    def memory_limit(self) -> tuple[int | None, str]:
        """(the job's memory limit in bytes or None, where it comes from)."""
        return memory_setting(self.memory)

    def _out_of_memory(self, out: M2Output, label: str) -> M2MemoryError | None:
        """The error to raise if ``out`` is a job that ran out of memory.

        Certain when it printed one of the allocation-failure texts of
        Macaulay2 and its libraries (:data:`~ag_attention._m2.memory.OUT_OF_MEMORY`);
        probable when, under a limit, it ended without printing a word and
        was not stopped by a signal someone sends (:func:`_silent_end`).
        """
        if out.returncode == 0:
            return None
        text = out.stderr + "\n" + printable(out.stdout[-2000:])
        m = OUT_OF_MEMORY.search(text)
        if m:
            line = next((ln.strip() for ln in text.splitlines() if m.group(0) in ln), m.group(0))
            return M2MemoryError(
                self._memory_message(label, f"{line!r}, {exit_status(out.returncode)}"),
                limit=self.memory_limit()[0],
                output=text[-2000:],
            )
        limit = self.memory_limit()[0]
        if limit is None or not _silent_end(out):
            return None
        # Macaulay2 reports its own errors (`error: ...`) and its crashes (`-- SIGSEGV` and a stack trace);
        # an allocation that fails where nothing checks it ends it without a word
        evidence = (
            f"Macaulay2 ended with {exit_status(out.returncode)} and printed nothing, as it does when an "
            "allocation fails where nothing reports it; not certain: any other failure prints a message"
        )
        return M2MemoryError(
            self._memory_message(label, evidence, certain=False),
            limit=limit,
            output=(out.stderr + printable(out.stdout))[-2000:],
        )

    def _memory_message(self, label: str, evidence: str, certain: bool = True) -> str:
        limit, source = self.memory_limit()
        ran_out = "ran out of memory" if certain else "probably ran out of memory"
        if limit is None:
            where = f"the {self.name} backend sets no limit ({MEMORY_ENV}=unlimited): the machine's memory is exhausted"
            return f"{label} {ran_out} ({evidence}); {where}"
        kind = "of address space (RLIMIT_AS)" if self.name == "local" else "(--memory)"
        start = " (Macaulay2 needs about 240 MiB just to start)" if limit < 512 * 2**20 else ""
        return (
            f"{label} {ran_out} ({evidence}): the {self.name} backend limits Macaulay2 to "
            f"{size(limit)} {kind}, from {source}{start}; {how_to_raise(self.name, limit)}"
        )

    def _environment(self, jobdir: Path) -> dict[str, str]:
        """Environment of the client process: minimal, with ``HOME`` the job directory."""
        return {
            "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
            "HOME": str(jobdir),
            "LANG": "C.UTF-8",
        }

    def version(self, timeout: float = VERSION_TIMEOUT) -> str:
        """Macaulay2's version string (``1.21``), cached; the query takes at most ``timeout`` seconds."""
        with self._lock:
            if self._version is None:
                out = self.run(
                    'print version#"VERSION";\n',
                    timeout=min(VERSION_TIMEOUT, check_timeout(timeout)),
                    label="version query",
                    with_package=False,
                )
                lines = [ln.strip() for ln in out.stdout.splitlines() if ln.strip()]
                if out.returncode != 0 or not lines:
                    raise M2NotFoundError(
                        f'{self.describe()}: Macaulay2 did not report its version to `print version#"VERSION"` '
                        f"({exit_status(out.returncode)}, {_what_was_printed(out)})"
                    )
                self._version = printable(lines[-1])
            return self._version

    def run(self, script: str, *, timeout: float, label: str = "job", with_package: bool = True) -> M2Output:
        """Run ``script`` in a fresh Macaulay2 process.

        Raises M2TimeoutError on timeout and M2MemoryError when Macaulay2 ran out of memory.
        """
        files = {"job.m2": script}
        out = self._job(
            files,
            lambda jobdir, name, limit: self._command(jobdir, name, limit),
            timeout=timeout,
            label=label,
            with_package=with_package,
        )
        oom = self._out_of_memory(out, label)
        if oom is not None:
            raise oom
        return out

    def run_program(
        self,
        executable: str,
        args: Sequence[str],
        files: dict[str, str],
        *,
        timeout: float,
        label: str = "job",
        timeout_error: type[Exception] | None = None,
    ) -> M2Output:
        """Run another program of the toolchain (msolve) with a Macaulay2 job's guarantees.

        The same job directory (``files`` written into it; ``{job}`` in
        ``args`` names it: ``/job`` in the container), its own process group,
        the timeout with the whole group (and the container) killed, the
        memory limit, the cleanup on interruption.  ``executable`` is a path
        on this machine for the local backend and a command in the image for
        the container.  On timeout raises ``timeout_error(label, timeout)``
        (default M2TimeoutError).
        """

        def command(jobdir: Path, name: str, limit: float) -> list[str]:
            return self._program_command(jobdir, name, limit, executable, list(args))

        try:
            return self._job(files, command, timeout=timeout, label=label, with_package=False)
        except M2TimeoutError:
            if timeout_error is None:
                raise
            raise timeout_error(f"{label} ({self.name} backend)", timeout) from None

    def _program_command(self, jobdir: Path, name: str, timeout: float, executable: str, args: list[str]) -> list[str]:
        """The argument list running ``executable args`` for :meth:`run_program`."""
        raise M2NotFoundError(f"the {self.name} backend runs Macaulay2 only")

    def _job(
        self,
        files: dict[str, str],
        command: Callable[[Path, str, float], list[str]],
        *,
        timeout: float,
        label: str,
        with_package: bool,
    ) -> M2Output:
        """A fresh job directory with ``files``, ``command(jobdir, name, timeout)`` run and supervised in it."""
        timeout = check_timeout(timeout)
        name = f"ag-attention-{uuid.uuid4().hex[:12]}"
        with job_directory(files, with_package) as jobdir:
            cmd = command(jobdir, name, timeout)
            log.debug("job %s (%s): %s", label, self.name, cmd)
            for filename, text in files.items():
                log.debug("%s:\n%s", filename, text[:20000])
            with terminate_with_cleanup():
                done = supervise(
                    cmd,
                    cwd=jobdir,
                    env=self._environment(jobdir),
                    preexec=self._preexec(),
                    timeout=timeout,
                    on_kill=lambda: self._on_timeout(name),
                    label=label,
                    where=self.name,
                )
        if done is None:
            raise M2TimeoutError(f"{label} ({self.name} backend)", timeout)
        # bytes, decoded here: output that is not UTF-8 is the parser's error, never a UnicodeDecodeError
        stdout = done.stdout.decode("utf-8", "surrogateescape")
        stderr = done.stderr.decode("utf-8", "backslashreplace")
        for line in stdout.splitlines():
            log.debug("M2 stdout: %s", printable(line))
        for line in stderr.splitlines():
            log.debug("M2 stderr: %s", line)
        return M2Output(stdout, stderr, done.returncode, done.seconds, self.name)

    def describe(self) -> str:
        return self.name


#: signals that someone sends to end a process (a person, the kernel's OOM killer, a timeout): no memory evidence
_SENT = {signal.SIGKILL, signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGPIPE}


def _silent_end(out: M2Output) -> bool:
    """``out`` failed without a word on either stream (no message, no result) and not by a signal someone sends.

    A signal shows as a negative status, or as ``128 + n`` from a shell or a container's first process.
    """
    if out.returncode == 0 or out.stderr.strip() or out.stdout.strip():
        return False
    n = -out.returncode if out.returncode < 0 else out.returncode - 128 if out.returncode > 128 else 0
    return n not in _SENT


def _what_was_printed(out: M2Output) -> str:
    """``no output``, or the stderr note (and the end of stdout after a failure)."""
    shown = "no output" if not (out.stdout.strip() or out.stderr.strip()) else stderr_note(out.stderr)
    if out.stdout.strip() and out.returncode != 0:
        shown += f"; stdout: {printable(out.stdout.strip())[-200:]}"
    return shown
