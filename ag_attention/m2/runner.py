"""Running Macaulay2 jobs: a local ``M2`` or the project's container image.

Every job is a fresh process fed a generated ``.m2`` file, under a timeout and
a memory limit.

* Local: ``M2 --script job.m2`` in a new session (its own process group), in a
  private temporary directory that is also ``HOME``, with its address space
  limited (``RLIMIT_AS``, default 4 GiB: ``LocalBackend(memory=...)`` or
  ``AG_ATTENTION_M2_MEMORY``, e.g. ``8g``, ``unlimited``).  On timeout the
  whole process group is killed with SIGKILL.
* Container: ``docker``/``podman run`` of the image with no network, a
  read-only root file system, a non-root user, memory (``--memory``, the same
  setting) and process limits, all capabilities dropped; the job directory is
  mounted read-only.  The container is named, so on timeout it is killed with
  ``<engine> kill`` and removed, and the client process group is killed too.
  Its first process is coreutils' ``timeout``, so it also ends by itself
  ``grace`` seconds after the job's limit if nobody is left to kill it.

A job returns or raises only once no live process of its group is left.  If
Python is terminated meanwhile, SIGTERM/SIGHUP run the same cleanup (unless
the application set handlers of its own), and the local child has a
parent-death signal, so even SIGKILL of Python leaves no M2 running.  The job
directory of a Python killed with SIGKILL stays behind; it records its owner
(PID, the process's start time and the boot), and the next job of any
ag-attention process removes the job directories whose owner is gone.

A job that runs out of memory raises :class:`M2MemoryError` naming the limit
and how to raise it (Macaulay2 1.21 needs about 240 MiB of address space just
to start; its address space exceeds its resident memory by about 200 MiB).

The job directory holds ``job.m2`` and a copy of ``LightningAttention.m2``
(shipped inside this Python package, ``ag_attention/m2/``; its source is the
checkout's ``m2scripts/``); scripts start with
``path = prepend(currentFileDirectory, path)``, so both backends run the same
package.  No shell is involved: commands are argument lists.
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib.resources
import json
import logging
import math
import numbers
import os
import re
import resource
import shutil
import signal
import stat
import subprocess
import tempfile
import threading
import time
import uuid
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from ..errors import InvalidArgumentError, M2MemoryError, M2NotFoundError, M2TimeoutError
from .parse import exit_status, printable

__all__ = [
    "M2Output",
    "M2MemoryError",
    "Backend",
    "LocalBackend",
    "ContainerBackend",
    "get_backend",
    "available_backends",
    "package_file",
    "parse_memory",
    "clean_stale_job_dirs",
    "DEFAULT_IMAGE",
    "DEFAULT_MEMORY",
    "MEMORY_ENV",
    "VERSION_TIMEOUT",
    "BACKENDS",
]

log = logging.getLogger(__name__)

BACKENDS = ("auto", "local", "container")
DEFAULT_IMAGE = os.environ.get("AG_ATTENTION_IMAGE", "localhost/ag-attention-m2:latest")
PACKAGE_NAME = "LightningAttention.m2"
#: the memory limit of a job: local, address space (RLIMIT_AS); container, ``--memory``
MEMORY_ENV = "AG_ATTENTION_M2_MEMORY"
DEFAULT_MEMORY = "4g"
#: Macaulay2 1.21 (2 cores) needs 240 MiB of address space to start; smaller limits are refused
MIN_MEMORY = 256 * 2**20
#: seconds a version query may take at most (less when the job's own limit is smaller)
VERSION_TIMEOUT = 60.0
#: seconds an engine command (``info``, ``--version``, ``image inspect``) may take
ENGINE_TIMEOUT = 30.0
JOBDIR_PREFIX = "ag-attention-m2-"
OWNER_FILE = "owner.json"
#: a job directory without an owner record (older versions) is stale after this many seconds
STALE_WITHOUT_OWNER = 86400.0
HOW_TO_GET_M2 = (
    "Macaulay2 is needed for this computation and no backend works here. Either install it locally "
    "(Debian/Ubuntu: `apt-get install macaulay2`, or `make setup` in the ag-attention checkout; other "
    "systems: https://macaulay2.com/Downloads), or build the project's image with `docker/build.sh` "
    "(needs a Docker engine or podman; `make setup-container` also installs podman on Debian)."
)


# ------------------------------------------------------------------ the package
def _is_package(path: Path) -> bool:
    """A readable LightningAttention.m2 (not, say, a checkout's symlink stored as a text file)."""
    try:
        return path.is_file() and b"newPackage" in path.read_bytes()[:4096]
    except OSError:
        return False


def package_file() -> Path:
    """Path of ``LightningAttention.m2``.

    ``AG_ATTENTION_M2SCRIPTS`` (a directory) if set; otherwise the copy shipped
    in this Python package (``ag_attention/m2/``: package data, a symlink to
    ``m2scripts/`` in the checkout); otherwise the checkout's ``m2scripts/``.
    """
    candidates: list[Path] = []
    env = os.environ.get("AG_ATTENTION_M2SCRIPTS")
    if env:
        candidates.append(Path(env) / PACKAGE_NAME)
    try:
        shipped = importlib.resources.files("ag_attention.m2") / PACKAGE_NAME
        if isinstance(shipped, Path):  # a zipped install has no path: the next candidate, if any
            candidates.append(shipped)
    except (ModuleNotFoundError, OSError):  # pragma: no cover
        pass
    candidates.append(Path(__file__).resolve().parents[2] / "m2scripts" / PACKAGE_NAME)
    for c in candidates:
        if _is_package(c):
            return c
        if env and c == candidates[0]:
            break  # an explicit setting that does not work is an error, not a fallback
    raise M2NotFoundError(
        f"the Macaulay2 package {PACKAGE_NAME} was not found (looked in {', '.join(map(str, candidates))}); "
        "set AG_ATTENTION_M2SCRIPTS to the directory holding it (m2scripts/ of the ag-attention sources)"
    )


# ------------------------------------------------------------------ limits
_MEMORY = re.compile(r"^(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?$")
_NO_LIMIT = ("none", "unlimited", "off")


def _size(n: int) -> str:
    for unit, k in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 2**k:
            return f"{n / 2**k:g} {unit}"
    return f"{n} bytes"


def parse_memory(value: object, what: str = "memory") -> int | None:
    """Bytes from ``4g``, ``512M``, ``4GiB``, ``1.5g``, ``4294967296``; None for ``unlimited``/``none``/``off``.

    >>> parse_memory("4g"), parse_memory("512MiB"), parse_memory("unlimited")
    (4294967296, 536870912, None)
    """
    if isinstance(value, bool):
        raise InvalidArgumentError(f"{what}={value!r}: must be a size such as 4g or 512m, or unlimited")
    if isinstance(value, int):
        n = value
    else:
        text = str(value).strip().lower()
        if text in _NO_LIMIT:
            return None
        m = _MEMORY.match(text)
        if not m:
            raise InvalidArgumentError(
                f"{what}={value!r}: must be a size such as 4g, 512m or 4GiB (bytes without a unit), or unlimited"
            )
        n = int(float(m.group(1)) * 1024 ** "bkmgt".index(m.group(2) or "b"))
    if n < MIN_MEMORY:
        raise InvalidArgumentError(
            f"{what}={value!r}: below {_size(MIN_MEMORY)}; Macaulay2 1.21 needs about 240 MiB of address space "
            "just to start (sizes without a unit are bytes: write 4g, 512m)"
        )
    return n


def _memory_setting(explicit: object) -> tuple[int | None, str]:
    """(bytes or None, where the value comes from) for a backend's ``memory`` argument."""
    if explicit is not None:
        return parse_memory(explicit, "memory"), "memory="
    env = os.environ.get(MEMORY_ENV, "").strip()
    if env:
        return parse_memory(env, MEMORY_ENV), MEMORY_ENV
    return parse_memory(DEFAULT_MEMORY), "the default"


def _how_to_raise(name: str, limit: int | None) -> str:
    more = _size(2 * limit) if limit else "8 GiB"
    cls = "LocalBackend" if name == "local" else "ContainerBackend"
    return (f"raise it with {MEMORY_ENV}={more.replace(' GiB', 'g').replace(' MiB', 'm')} "
            f"(or {cls}(memory=...); {MEMORY_ENV}=unlimited removes it)")


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
    """Seconds as a float in ``(0, 1e7)``; a bool, a string or nan is an error naming ``name``."""
    if isinstance(timeout, bool) or not isinstance(timeout, numbers.Real):
        raise InvalidArgumentError(f"{name}={timeout!r}: must be a number of seconds")
    t = float(timeout)
    if not (t > 0 and t < 1e7):
        raise InvalidArgumentError(f"{name}={timeout!r}: must be a number of seconds, above 0 and below 1e7")
    return t


def _stderr_note(stderr: str | bytes, limit: int = 300) -> str:
    if isinstance(stderr, bytes):
        stderr = stderr.decode("utf-8", "backslashreplace")
    text = " ".join(stderr.split())
    if not text:
        return "nothing on stderr"
    return "stderr: " + (text if len(text) <= limit else text[:limit] + "...")


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _stat_fields(pid: int) -> list[str] | None:
    """Fields of ``/proc/PID/stat`` after ``pid (comm)``: state, ppid, pgrp, ... (None if unreadable)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            text = fh.read()
    except OSError:
        return None
    # comm may hold spaces and parentheses
    return text[text.rfind(")") + 2:].split()


def group_members(pgid: int) -> list[int]:
    """Live (not zombie) processes of process group ``pgid``, read from ``/proc``.

    Empty where ``/proc`` is missing (the kill is then not verified).
    """
    members = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for entry in entries:
        if not entry.isdigit():
            continue
        fields = _stat_fields(int(entry))
        if fields and len(fields) > 2 and int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
            members.append(int(entry))
    return members


def _wait_group_gone(pgid: int, seconds: float = 10.0) -> list[int]:
    """Kill ``pgid`` until no live member is left (at most ``seconds``); the survivors."""
    deadline = time.monotonic() + seconds
    while True:
        left = group_members(pgid)
        if not left or time.monotonic() > deadline:
            return left
        try:
            os.killpg(pgid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        time.sleep(0.02)


_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    """In the child: SIGKILL when the parent dies (Linux), so a killed Python leaves no M2 behind."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        pass


def _limit_address_space(limit: int) -> None:  # pragma: no cover - runs in the child between fork and exec
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


# ------------------------------------------------------------------ job directories and their owners
def _process_start(pid: int) -> str | None:
    """The start time of ``pid`` (clock ticks after boot, ``/proc/PID/stat`` field 22), None if unknown."""
    fields = _stat_fields(pid)
    return fields[19] if fields and len(fields) > 19 else None


def _boot_id() -> str | None:
    try:
        with open("/proc/sys/kernel/random/boot_id") as fh:
            return fh.read().strip()
    except OSError:
        return None


def _owner_record() -> dict[str, object]:
    return {"pid": os.getpid(), "start": _process_start(os.getpid()), "boot": _boot_id()}


def _owner_alive(record: dict[str, object]) -> bool:
    """Is the process that wrote ``record`` still running (the same process, not a reused PID)?"""
    pid = record.get("pid")
    if not isinstance(pid, int) or pid <= 0:
        return False
    boot = _boot_id()
    if boot is not None and record.get("boot") not in (None, boot):
        return False  # written before a reboot
    if _process_start(os.getpid()) is None:  # no /proc: only "does the PID exist"
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    fields = _stat_fields(pid)
    if fields is None or fields[0] in ("Z", "X"):
        return False
    return record.get("start") is None or fields[19] == record.get("start")


def clean_stale_job_dirs(directory: str | os.PathLike[str] | None = None) -> list[Path]:
    """Remove the job directories (``ag-attention-m2-*``) whose owner process is gone; the removed ones.

    Only directories of this user are looked at; one without an owner record
    (written by older versions) counts as stale once it is a day old.
    """
    base = Path(directory if directory is not None else tempfile.gettempdir())
    removed = []
    try:
        entries = list(os.scandir(base))
    except OSError:
        return []
    uid = os.geteuid()
    for entry in entries:
        if not entry.name.startswith(JOBDIR_PREFIX):
            continue
        try:
            st = entry.stat(follow_symlinks=False)
            if not stat.S_ISDIR(st.st_mode) or st.st_uid != uid:
                continue
            try:
                record = json.loads((Path(entry.path) / OWNER_FILE).read_text())
                stale = not _owner_alive(record if isinstance(record, dict) else {})
            except FileNotFoundError:
                stale = time.time() - st.st_mtime > STALE_WITHOUT_OWNER
            except (OSError, ValueError):
                stale = time.time() - st.st_mtime > STALE_WITHOUT_OWNER
        except OSError:
            continue
        if stale:
            shutil.rmtree(entry.path, ignore_errors=True)
            if not os.path.exists(entry.path):
                log.info("removed the job directory %s left by a killed process", entry.path)
                removed.append(Path(entry.path))
    return removed


@contextlib.contextmanager
def _terminate_with_cleanup():
    """While a job runs, SIGTERM and SIGHUP raise SystemExit (where they would kill Python outright).

    The job's cleanup (kill the process group, kill the container) then runs
    before Python exits.  Handlers set by the application are left alone, and
    signal handlers can only be set from the main thread.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    installed = {}

    def handler(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    for sig in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(sig) is signal.SIG_DFL:
            installed[sig] = signal.signal(sig, handler)
    try:
        yield
    finally:
        for sig, previous in installed.items():
            signal.signal(sig, previous)


# Macaulay2 1.21 out of memory, measured under RLIMIT_AS: its GC ("*** out of memory trying to
# allocate N bytes, exiting ***", status 1), GMP ("GNU MP: Cannot allocate memory", SIGABRT),
# threads ("pthread_create: failed: Cannot allocate memory"), tcmalloc ("Out of memory trying to
# allocate internal tcmalloc data"), the loader below ~96 MiB ("failed to map segment from shared object")
_OUT_OF_MEMORY = re.compile(
    r"out of memory|cannot allocate memory|std::bad_alloc|failed to map segment from shared object|memory exhausted",
    re.IGNORECASE,
)


class Backend(ABC):
    """A way to run Macaulay2."""

    name: str = "?"

    def __init__(self) -> None:
        self._version: str | None = None
        self._lock = threading.Lock()

    @abstractmethod
    def available(self) -> tuple[bool, str]:
        """(works here?, explanation)."""

    @abstractmethod
    def _command(self, jobdir: Path, name: str, timeout: float) -> list[str]:
        """The argument list running ``job.m2`` from ``jobdir`` (``timeout``: the job's limit)."""

    def _on_timeout(self, name: str) -> None:
        """Extra cleanup after the client process group has been killed."""

    def _preexec(self) -> Callable[[], None]:
        """What the child runs between fork and exec."""
        return _die_with_parent

    def memory_limit(self) -> tuple[int | None, str]:
        """(the job's memory limit in bytes or None, where it comes from)."""
        return None, "none"

    def _out_of_memory(self, out: M2Output, label: str) -> M2MemoryError | None:
        """The error to raise if ``out`` is a job that ran out of memory."""
        if out.returncode == 0:
            return None
        text = out.stderr + "\n" + printable(out.stdout[-2000:])
        m = _OUT_OF_MEMORY.search(text)
        if not m:
            return None
        line = next((ln.strip() for ln in text.splitlines() if m.group(0) in ln), m.group(0))
        return M2MemoryError(self._memory_message(label, f"{line!r}, {exit_status(out.returncode)}"),
                             limit=self.memory_limit()[0], output=text[-2000:])

    def _memory_message(self, label: str, evidence: str) -> str:
        limit, source = self.memory_limit()
        if limit is None:
            where = f"the {self.name} backend sets no limit ({MEMORY_ENV}=unlimited): the machine's memory is exhausted"
            return f"{label} ran out of memory ({evidence}); {where}"
        kind = "of address space (RLIMIT_AS)" if self.name == "local" else "(--memory)"
        start = " (Macaulay2 needs about 240 MiB just to start)" if limit < 512 * 2**20 else ""
        return (f"{label} ran out of memory ({evidence}): the {self.name} backend limits Macaulay2 to "
                f"{_size(limit)} {kind}, from {source}{start}; {_how_to_raise(self.name, limit)}")

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
                out = self.run('print version#"VERSION";\n', timeout=min(VERSION_TIMEOUT, check_timeout(timeout)),
                               label="version query", with_package=False)
                lines = [ln.strip() for ln in out.stdout.splitlines() if ln.strip()]
                if out.returncode != 0 or not lines:
                    shown = "no output" if not (out.stdout.strip() or out.stderr.strip()) else _stderr_note(out.stderr)
                    if out.stdout.strip() and out.returncode != 0:
                        shown += f"; stdout: {printable(out.stdout.strip())[-200:]}"
                    raise M2NotFoundError(
                        f"{self.describe()}: Macaulay2 did not report its version to `print version#\"VERSION\"` "
                        f"({exit_status(out.returncode)}, {shown})"
                    )
                self._version = printable(lines[-1])
            return self._version

    def run(self, script: str, *, timeout: float, label: str = "job", with_package: bool = True) -> M2Output:
        """Run ``script`` in a fresh Macaulay2 process.

        Raises M2TimeoutError on timeout and M2MemoryError when Macaulay2 ran out of memory.
        """
        files = {"job.m2": script}
        out = self._job(files, lambda jobdir, name, limit: self._command(jobdir, name, limit), timeout=timeout,
                        label=label, with_package=with_package)
        oom = self._out_of_memory(out, label)
        if oom is not None:
            raise oom
        return out

    def run_program(self, executable: str, args: Sequence[str], files: dict[str, str], *, timeout: float,
                    label: str = "job", timeout_error: type[Exception] | None = None) -> M2Output:
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

    def _job(self, files: dict[str, str], command: Callable[[Path, str, float], list[str]], *, timeout: float,
             label: str, with_package: bool) -> M2Output:
        """A fresh job directory with ``files``, ``command(jobdir, name, timeout)`` run and supervised in it."""
        timeout = check_timeout(timeout)
        name = f"ag-attention-{uuid.uuid4().hex[:12]}"
        try:
            clean_stale_job_dirs()
        except Exception as exc:  # pragma: no cover - housekeeping never fails a job
            log.debug("cleaning stale job directories failed: %s", exc)
        with tempfile.TemporaryDirectory(prefix=JOBDIR_PREFIX) as tmp:
            jobdir = Path(tmp)
            os.chmod(jobdir, 0o755)  # readable by the container's user
            (jobdir / OWNER_FILE).write_text(json.dumps(_owner_record()))
            for filename, text in files.items():
                (jobdir / filename).write_text(text)
            if with_package:
                shutil.copyfile(package_file(), jobdir / PACKAGE_NAME)
            for f in jobdir.iterdir():
                os.chmod(f, 0o644)
            cmd = command(jobdir, name, timeout)
            log.debug("job %s (%s): %s", label, self.name, cmd)
            for filename, text in files.items():
                log.debug("%s:\n%s", filename, text[:20000])
            env = self._environment(jobdir)
            with _terminate_with_cleanup():
                return self._supervise(cmd, jobdir, env, name, label, timeout)

    def _supervise(self, cmd: list[str], jobdir: Path, env: dict[str, str], name: str, label: str, timeout: float) -> M2Output:
        """Start ``cmd`` in its own process group, wait at most ``timeout``, clean up on any exit."""
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            cmd, cwd=jobdir, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, start_new_session=True, preexec_fn=self._preexec(),
        )
        try:
            raw_out, raw_err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self._stop(proc, name, label)
            raise M2TimeoutError(f"{label} ({self.name} backend)", timeout) from None
        except BaseException:  # interrupted (KeyboardInterrupt, SIGTERM via SystemExit, ...)
            self._stop(proc, name, label)
            raise
        seconds = time.perf_counter() - t0
        # bytes, decoded here: output that is not UTF-8 is the parser's error, never a UnicodeDecodeError
        stdout = raw_out.decode("utf-8", "surrogateescape")
        stderr = raw_err.decode("utf-8", "backslashreplace")
        for line in stdout.splitlines():
            log.debug("M2 stdout: %s", printable(line))
        for line in stderr.splitlines():
            log.debug("M2 stderr: %s", line)
        return M2Output(stdout, stderr, proc.returncode, seconds, self.name)

    def _stop(self, proc: subprocess.Popen, name: str, label: str) -> None:
        """Kill the job's process group (and container), and return only once nothing of it is alive."""
        _kill_group(proc)
        self._on_timeout(name)
        try:
            proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:  # pragma: no cover - the kernel did not reap in 30 s
            pass
        left = _wait_group_gone(proc.pid)
        if left:  # pragma: no cover - SIGKILL is not ignorable
            log.error("processes %s of the killed job %s are still alive", left, label)

    def describe(self) -> str:
        return self.name


class LocalBackend(Backend):
    """``M2`` on PATH (or a given executable), its address space limited to ``memory``.

    ``memory``: ``"4g"``, ``"512m"``, bytes, or ``"unlimited"``; default
    ``AG_ATTENTION_M2_MEMORY`` or 4 GiB (read at each job).
    """

    name = "local"

    def __init__(self, executable: str | None = None, memory: str | int | None = None):
        super().__init__()
        self.executable = executable or shutil.which("M2")
        self.memory = memory
        if memory is not None:
            parse_memory(memory, "memory")  # a bad value fails here, not at the first job

    def memory_limit(self) -> tuple[int | None, str]:
        return _memory_setting(self.memory)

    def _preexec(self) -> Callable[[], None]:
        limit = self.memory_limit()[0]
        if limit is None:
            return _die_with_parent

        def setup() -> None:  # pragma: no cover - runs in the child between fork and exec
            _die_with_parent()
            _limit_address_space(limit)

        return setup

    def available(self) -> tuple[bool, str]:
        if not self.executable or not os.access(self.executable, os.X_OK):
            return False, "no M2 on PATH"
        return True, self.executable

    def _command(self, jobdir: Path, name: str, timeout: float) -> list[str]:
        if not self.executable:
            raise M2NotFoundError("local backend: no M2 on PATH. " + HOW_TO_GET_M2)
        # M2 --script FILE takes exactly these two arguments
        return [self.executable, "--script", str(jobdir / "job.m2")]

    def _program_command(self, jobdir: Path, name: str, timeout: float, executable: str, args: list[str]) -> list[str]:
        return [executable, *(a.replace("{job}", str(jobdir)) for a in args)]

    def describe(self) -> str:
        return f"local ({self.executable})"


def _probe_engine(exe: str) -> tuple[bool, str]:
    """(does ``exe info`` run?, why not / the engine's version)."""
    try:
        r = subprocess.run([exe, "info"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, timeout=ENGINE_TIMEOUT)
    except subprocess.TimeoutExpired:
        return False, f"`{exe} info` did not answer within {ENGINE_TIMEOUT:g} s"
    except OSError as exc:
        return False, f"`{exe} info` could not be started: {exc}"
    if r.returncode != 0:
        return False, f"`{exe} info` failed ({exit_status(r.returncode)}, {_stderr_note(r.stderr)})"
    try:
        v = subprocess.run([exe, "--version"], stdin=subprocess.DEVNULL, capture_output=True, timeout=ENGINE_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return True, f"{exe} (no version: `{exe} --version` failed: {exc})"
    text = v.stdout.decode("utf-8", "backslashreplace").strip()
    if v.returncode != 0 or not text:
        return True, f"{exe} (prints no version: `{exe} --version` gave {exit_status(v.returncode)}, {_stderr_note(v.stderr)})"
    return True, text.splitlines()[0].strip()


_IMAGE_MISSING = re.compile(r"no such image|image not known|not found|no such object|failed to find", re.IGNORECASE)


class ContainerBackend(Backend):
    """The project's image under docker or podman.

    ``memory``: the container's ``--memory`` (``"4g"``, bytes, ``"unlimited"``);
    default ``AG_ATTENTION_M2_MEMORY`` or 4 GiB.
    """

    name = "container"

    def __init__(self, image: str = DEFAULT_IMAGE, engine: str | None = None, memory: str | int | None = None,
                 pids: int = 512, grace: float = 30.0):
        super().__init__()
        self.image = image
        self._engine = engine
        self._engine_detail = ""
        self.memory = memory
        if memory is not None:
            parse_memory(memory, "memory")
        self.pids = pids
        self.grace = grace  # the container kills itself this long after the job's limit

    def memory_limit(self) -> tuple[int | None, str]:
        return _memory_setting(self.memory)

    @property
    def engine(self) -> str | None:
        """``docker`` or ``podman`` (``CONTAINER_ENGINE`` if set), None unless ``ENGINE info`` runs."""
        if self._engine is None:
            env = os.environ.get("CONTAINER_ENGINE")
            if env:
                exe = shutil.which(env)
                if not exe:
                    self._engine = ""
                    self._problem = f"CONTAINER_ENGINE={env!r} is not an executable on PATH (use docker or podman)"
                else:
                    ok, detail = _probe_engine(exe)
                    self._engine = env if ok else ""
                    self._engine_detail = detail
                    if not ok:
                        self._problem = f"CONTAINER_ENGINE={env!r} does not run: {detail}"
            else:
                reasons = []
                for candidate in ("docker", "podman"):
                    exe = shutil.which(candidate)
                    if not exe:
                        reasons.append(f"{candidate}: not on PATH")
                        continue
                    ok, detail = _probe_engine(exe)
                    if ok:
                        self._engine, self._engine_detail = candidate, detail
                        break
                    reasons.append(f"{candidate}: {detail}")
                else:
                    self._engine = ""
                    self._problem = "neither a Docker engine nor podman runs here (" + "; ".join(reasons) + ")"
        return self._engine or None

    def available(self) -> tuple[bool, str]:
        engine = self.engine
        if engine is None:
            return False, getattr(self, "_problem", "no container engine")
        about = self._engine_detail or engine
        try:
            r = subprocess.run([engine, "image", "inspect", self.image], stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=ENGINE_TIMEOUT * 2)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return False, f"`{engine} image inspect {self.image}` failed: {exc}"
        if r.returncode != 0:
            err = r.stderr.decode("utf-8", "backslashreplace")
            if _IMAGE_MISSING.search(err):
                return False, f"the image {self.image} is missing (engine: {about}): build it with docker/build.sh"
            return False, (f"`{engine} image inspect {self.image}` failed ({exit_status(r.returncode)}, "
                           f"{_stderr_note(err)}; engine: {about})")
        return True, f"{about}, image {self.image}"

    def _command(self, jobdir: Path, name: str, timeout: float) -> list[str]:
        return self._program_command(jobdir, name, timeout, "M2", ["--script", "/job/job.m2"])

    def _program_command(self, jobdir: Path, name: str, timeout: float, executable: str, args: list[str]) -> list[str]:
        engine = self.engine
        if engine is None:
            raise M2NotFoundError(f"container backend: {getattr(self, '_problem', 'no container engine')}. " + HOW_TO_GET_M2)
        # the container limits itself too (coreutils' timeout as its first process), so even
        # a container whose client was killed with SIGKILL ends shortly after the job's limit
        limit = str(math.ceil(timeout + self.grace))
        memory = self.memory_limit()[0]
        return [
            engine, "run", "--rm", "--name", name,
            "--network", "none", "--read-only", "--user", "1000:1000",
            *(["--memory", f"{max(1, memory // 2**20)}m"] if memory is not None else []),
            "--pids-limit", str(self.pids),
            "--cap-drop", "ALL", "--security-opt", "no-new-privileges",
            "--tmpfs", "/tmp:rw,size=512m", "--tmpfs", "/home/m2:rw,size=64m",
            "-e", "HOME=/home/m2",
            "-v", f"{jobdir}:/job:ro",
            "--entrypoint", "timeout",
            self.image, "--signal=KILL", limit, executable, *(a.replace("{job}", "/job") for a in args),
        ]

    def _out_of_memory(self, out: M2Output, label: str) -> M2MemoryError | None:
        found = super()._out_of_memory(out, label)
        if found is not None or out.returncode != 128 + signal.SIGKILL:
            return found
        # the kernel's OOM killer ends the container's M2 with SIGKILL and no message
        # (the container's own `timeout` would too, but only after the job's limit: a timeout)
        return M2MemoryError(self._memory_message(label, "Macaulay2 was killed with SIGKILL inside the container, "
                                                         "exit status 137: the out-of-memory killer"),
                             limit=self.memory_limit()[0], output=(out.stderr + printable(out.stdout))[-2000:])

    def _environment(self, jobdir: Path) -> dict[str, str]:
        # the engine client needs the caller's settings (DOCKER_HOST, podman's configuration)
        return dict(os.environ)

    def _on_timeout(self, name: str) -> None:
        engine = self.engine
        if engine is None:
            return
        for cmd in ([engine, "kill", name], [engine, "rm", "-f", name]):
            try:
                subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
            except (OSError, subprocess.TimeoutExpired):  # pragma: no cover
                log.warning("could not run %s", cmd)

    def describe(self) -> str:
        return f"container ({self.engine or 'no engine'}, {self.image})"


_default: dict[str, Backend] = {}


def available_backends() -> dict[str, tuple[bool, str]]:
    return {name: _backend(name).available() for name in ("local", "container")}


def _backend(name: str) -> Backend:
    if name not in _default:
        _default[name] = LocalBackend() if name == "local" else ContainerBackend()
    return _default[name]


def get_backend(name: str | Backend = "auto") -> Backend:
    """``"local"``, ``"container"``, ``"auto"`` (local if present, else container) or a Backend."""
    if isinstance(name, Backend):
        return name
    if name not in BACKENDS:
        raise InvalidArgumentError(f"backend={name!r}: must be one of {', '.join(BACKENDS)}")
    if name == "auto":
        reasons = []
        for candidate in ("local", "container"):
            ok, why = _backend(candidate).available()
            if ok:
                return _backend(candidate)
            reasons.append(f"{candidate}: {why}")
        raise M2NotFoundError(HOW_TO_GET_M2 + " (" + "; ".join(reasons) + ")")
    backend = _backend(name)
    ok, why = backend.available()
    if not ok:
        raise M2NotFoundError(f"{name} backend unavailable: {why}. " + HOW_TO_GET_M2)
    return backend
