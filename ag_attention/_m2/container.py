"""The container backend: the project's Macaulay2 image under docker or podman.

``<engine> run`` of the image with no network, a read-only root file system,
a non-root user, memory (``--memory``) and process limits, all capabilities
dropped; the job directory is mounted read-only.  The container is named and
labelled with the Python's PID (``ag-attention.pid=PID``), so on timeout it
is killed with ``<engine> kill`` and removed (the client's process group is
killed too).

Three things end a container whose job is over:

* the job's own supervision (:mod:`ag_attention._m2.process`): on timeout,
  an interruption, SIGTERM or SIGHUP of Python, ``<engine> kill`` and
  ``<engine> rm -f``;
* a watchdog, for a Python killed with SIGKILL: the engine's client runs
  under a small Python process (:data:`WATCHDOG`, in the job's process group)
  that notices its parent is gone (a parent-death signal, and its parent PID
  checked four times a second) and kills and removes the container, within
  about a second;
* the container itself: its first process, a shell, runs the job under
  coreutils' ``timeout``, so it ends ``grace`` seconds after the job's limit
  even if nobody is left to kill it.

The shell also tells how a failed job ended (:data:`ENTRYPOINT`): after a
non-zero exit it prints ``ag-attention-container: exit status S, oom_kill N``
on standard error, ``N`` the out-of-memory kills its cgroup counts (cgroup v2
``memory.events``, v1 ``memory.oom_control``).  So a job the kernel killed for
memory (137 and ``N >= 1``) is told apart from a container killed by hand
(``podman kill``: the shell dies with it, no line, 137) or stopped
(``podman stop``: the shell passes SIGTERM to the job, 143, ``N = 0``).
"""

from __future__ import annotations

import ctypes
import dataclasses
import logging
import math
import os
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from .._errors import InvalidArgumentError, M2ExecutionError, M2MemoryError, M2NotFoundError
from .backend import HOW_TO_GET_M2, Backend, M2Output, stderr_note
from .memory import MEMORY_ENV
from .parse import exit_status, printable

__all__ = [
    "ContainerBackend",
    "DEFAULT_IMAGE",
    "ENGINE_TIMEOUT",
    "ENTRYPOINT",
    "WATCHDOG",
    "watch_parent",
    "ContainerEnd",
    "container_end",
]

log = logging.getLogger(__name__)

DEFAULT_IMAGE = os.environ.get("AG_ATTENTION_IMAGE", "localhost/ag-attention-m2:latest")
#: seconds an engine command (``info``, ``--version``, ``image inspect``) may take
ENGINE_TIMEOUT = 30.0
#: the largest ``--memory`` in MiB docker and podman take: they set the swap limit to twice it, a signed 64-bit number
MAX_CONTAINER_MIB = 2**42 - 1

#: the container's first process (``sh -c ENTRYPOINT ag-attention-job LIMIT COMMAND...``): the job under
#: ``timeout`` (SIGTERM, SIGHUP and SIGINT passed on to it), then, after a failure, the cgroup's OOM kills
ENTRYPOINT = r"""limit=$1; shift
child=
trap 'kill -TERM $child 2>/dev/null' TERM
trap 'kill -HUP $child 2>/dev/null' HUP
trap 'kill -INT $child 2>/dev/null' INT
timeout --signal=KILL "$limit" "$@" &
child=$!
wait $child; status=$?
while kill -0 $child 2>/dev/null; do wait $child; status=$?; done
if [ "$status" -ne 0 ]; then
  oom=$(sed -n 's/^oom_kill //p' /sys/fs/cgroup/memory.events \
    /sys/fs/cgroup/memory/memory.oom_control 2>/dev/null | head -n 1)
  echo "ag-attention-container: exit status $status, oom_kill ${oom:-unknown}" >&2
fi
exit "$status"
"""

#: ``python -I -S -c WATCHDOG PARENT ENGINE NAME COMMAND...``: runs COMMAND (the engine's client) and, when its
#: parent is gone (SIGTERM, its parent-death signal, or another parent PID), kills and removes the container NAME
WATCHDOG = r"""
import os, signal, subprocess, sys, time
parent, engine, name, command = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4:]
stop = []
for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
    signal.signal(s, lambda signum, frame: stop.append(signum))

def engine_does(*args):
    try:
        subprocess.run([engine, *args, name], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=30)
    except Exception:
        pass

try:
    client = subprocess.Popen(command)
except OSError as exc:
    print(f"ag-attention: cannot run {command[0]}: {exc}", file=sys.stderr)
    sys.exit(127)
while not stop and os.getppid() == parent:
    try:
        code = client.wait(timeout=0.25)
        break
    except subprocess.TimeoutExpired:
        pass
else:
    for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(s, signal.SIG_IGN)
    deadline = time.monotonic() + 120
    while True:
        engine_does("kill")
        try:
            client.wait(timeout=1)
            break
        except subprocess.TimeoutExpired:
            if time.monotonic() > deadline:
                client.kill()
                client.wait()
                break
    engine_does("rm", "-f")
    os._exit(128 + (stop[0] if stop else signal.SIGTERM))
if code < 0:
    signal.signal(-code, signal.SIG_DFL)
    os.kill(os.getpid(), -code)
sys.exit(code if code >= 0 else 128 - code)
"""

_END_LINE = re.compile(r"^ag-attention-container: exit status (\d+), oom_kill (\d+|unknown)\s*$", re.MULTILINE)

_PR_SET_PDEATHSIG = 1


def watch_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    """In the watchdog: SIGTERM when the parent dies (Linux), which it answers by killing the container."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):
        pass


class ContainerEnd(NamedTuple):
    """How a container's job ended, from its status and the first process's last line (:data:`ENTRYPOINT`)."""

    status: int
    reported: bool  # the shell printed its line: it outlived the job (no kill of the whole container)
    oom_kills: int | None  # the cgroup's out-of-memory kills (None: not reported or unreadable)

    @property
    def out_of_memory(self) -> bool:
        return bool(self.oom_kills)

    @property
    def killed_from_outside(self) -> bool:
        """SIGKILL of the container's first process (``kill``; ``stop`` after its grace): the shell said nothing."""
        return self.status == 128 + signal.SIGKILL and not self.reported

    @property
    def stopped_from_outside(self) -> bool:
        """SIGTERM, SIGHUP or SIGINT to the container (``stop``), passed on to the job by the shell."""
        return self.reported and self.status - 128 in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)


def container_end(stderr: str, returncode: int) -> ContainerEnd:
    """How a container job ended (its engine client's exit status and standard error)."""
    found = _END_LINE.findall(stderr)
    if not found:
        return ContainerEnd(returncode, False, None)
    status, kills = found[-1]
    return ContainerEnd(int(status), True, None if kills == "unknown" else int(kills))


def _without_end_line(out: M2Output) -> M2Output:
    return dataclasses.replace(out, stderr=_END_LINE.sub("", out.stderr))


_IMAGE_MISSING = re.compile(r"no such image|image not known|not found|no such object|failed to find", re.IGNORECASE)


def _probe_engine(exe: str) -> tuple[bool, str]:
    """(does ``exe info`` run?, why not / the engine's version)."""
    try:
        r = subprocess.run(
            [exe, "info"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            timeout=ENGINE_TIMEOUT,
        )
    except subprocess.TimeoutExpired:
        return False, f"`{exe} info` did not answer within {ENGINE_TIMEOUT:g} s"
    except OSError as exc:
        return False, f"`{exe} info` could not be started: {exc}"
    if r.returncode != 0:
        return False, f"`{exe} info` failed ({exit_status(r.returncode)}, {stderr_note(r.stderr)})"
    try:
        v = subprocess.run([exe, "--version"], stdin=subprocess.DEVNULL, capture_output=True, timeout=ENGINE_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return True, f"{exe} (no version: `{exe} --version` failed: {exc})"
    text = v.stdout.decode("utf-8", "backslashreplace").strip()
    if v.returncode != 0 or not text:
        return (
            True,
            f"{exe} (prints no version: `{exe} --version` gave {exit_status(v.returncode)}, {stderr_note(v.stderr)})",
        )
    return True, text.splitlines()[0].strip()


def _find_engine() -> tuple[str, str, str]:
    """(``docker``/``podman`` or "" when none runs, the engine's version, the problem) for this environment.

    ``CONTAINER_ENGINE`` if set (and then only it), else the first of docker
    and podman whose ``info`` runs.
    """
    env = os.environ.get("CONTAINER_ENGINE")
    if env:
        exe = shutil.which(env)
        if not exe:
            return "", "", f"CONTAINER_ENGINE={env!r} is not an executable on PATH (use docker or podman)"
        ok, detail = _probe_engine(exe)
        return (env, detail, "") if ok else ("", detail, f"CONTAINER_ENGINE={env!r} does not run: {detail}")
    reasons = []
    for candidate in ("docker", "podman"):
        exe = shutil.which(candidate)
        if not exe:
            reasons.append(f"{candidate}: not on PATH")
            continue
        ok, detail = _probe_engine(exe)
        if ok:
            return candidate, detail, ""
        reasons.append(f"{candidate}: {detail}")
    return "", "", "neither a Docker engine nor podman runs here (" + "; ".join(reasons) + ")"


class ContainerBackend(Backend):
    """The project's image under docker or podman.

    ``memory``: the container's ``--memory`` (``"4g"``, bytes, ``"unlimited"``);
    default ``AG_ATTENTION_M2_MEMORY`` or 4 GiB.
    """

    name = "container"

    def __init__(
        self,
        image: str = DEFAULT_IMAGE,
        engine: str | None = None,
        memory: str | int | None = None,
        pids: int = 512,
        grace: float = 30.0,
    ):
        super().__init__(memory)
        self.image = image
        self._engine = engine
        self._engine_detail = ""
        self.pids = pids
        self.grace = grace  # the container kills itself this long after the job's limit

    @property
    def engine(self) -> str | None:
        """``docker`` or ``podman`` (``CONTAINER_ENGINE`` if set), None unless ``ENGINE info`` runs."""
        if self._engine is None:
            found, detail, problem = _find_engine()
            self._engine = found
            if detail:
                self._engine_detail = detail
            if problem:
                self._problem = problem
        return self._engine or None

    def available(self) -> tuple[bool, str]:
        engine = self.engine
        if engine is None:
            return False, getattr(self, "_problem", "no container engine")
        about = self._engine_detail or engine
        try:
            r = subprocess.run(
                [engine, "image", "inspect", self.image],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                timeout=ENGINE_TIMEOUT * 2,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return False, f"`{engine} image inspect {self.image}` failed: {exc}"
        if r.returncode != 0:
            err = r.stderr.decode("utf-8", "backslashreplace")
            if _IMAGE_MISSING.search(err):
                return False, f"the image {self.image} is missing (engine: {about}): build it with docker/build.sh"
            return False, (
                f"`{engine} image inspect {self.image}` failed ({exit_status(r.returncode)}, "
                f"{stderr_note(err)}; engine: {about})"
            )
        return True, f"{about}, image {self.image}"

    def _command(self, jobdir: Path, name: str, timeout: float) -> list[str]:
        return self._program_command(jobdir, name, timeout, "M2", ["--script", "/job/job.m2"])

    def _program_command(self, jobdir: Path, name: str, timeout: float, executable: str, args: list[str]) -> list[str]:
        engine = self.engine
        if engine is None:
            raise M2NotFoundError(
                f"container backend: {getattr(self, '_problem', 'no container engine')}. " + HOW_TO_GET_M2
            )
        # the container limits itself too (its shell runs the job under coreutils' timeout), so even
        # a container nobody is left to kill ends shortly after the job's limit
        limit = str(math.ceil(timeout + self.grace))
        memory = self.memory_limit()[0]
        # the watchdog kills the container when this Python dies, even by SIGKILL (no watchdog without an interpreter)
        watchdog = (
            [sys.executable, "-I", "-S", "-c", WATCHDOG, str(os.getpid()), engine, name] if sys.executable else []
        )
        return [
            *watchdog,
            engine,
            "run",
            "--rm",
            "--name",
            name,
            "--label",
            f"ag-attention.pid={os.getpid()}",
            "--network",
            "none",
            "--read-only",
            "--user",
            "1000:1000",
            *(["--memory", f"{max(1, memory // 2**20)}m"] if memory is not None else []),
            "--pids-limit",
            str(self.pids),
            "--cap-drop",
            "ALL",
            "--security-opt",
            "no-new-privileges",
            "--tmpfs",
            "/tmp:rw,size=512m",
            "--tmpfs",
            "/home/m2:rw,size=64m",
            "-e",
            "HOME=/home/m2",
            "-v",
            f"{jobdir}:/job:ro",
            "--entrypoint",
            "sh",
            self.image,
            "-c",
            ENTRYPOINT,
            "ag-attention-job",
            limit,
            executable,
            *(a.replace("{job}", "/job") for a in args),
        ]

    def _preexec(self) -> Callable[[], None]:
        # not the SIGKILL of a local job's parent-death signal: the watchdog must live to kill the container
        return watch_parent

    def memory_limit(self) -> tuple[int | None, str]:
        limit, source = super().memory_limit()
        if limit is not None and limit // 2**20 > MAX_CONTAINER_MIB:
            what = "memory" if source == "memory=" else MEMORY_ENV
            value = self.memory if source == "memory=" else os.environ.get(MEMORY_ENV, "").strip()
            raise InvalidArgumentError(
                f"{what}={value!r}: above the largest --memory docker and podman take ({MAX_CONTAINER_MIB} MiB, "
                "4 EiB: they set the swap limit to twice it); write unlimited for no limit"
            )
        return limit, source

    def _out_of_memory(self, out: M2Output, label: str) -> M2MemoryError | None:
        end = container_end(out.stderr, out.returncode)
        found = super()._out_of_memory(_without_end_line(out), label)  # its texts; silent under a limit
        if found is not None or out.returncode != 128 + signal.SIGKILL or end.killed_from_outside:
            return found
        output = (out.stderr + printable(out.stdout))[-2000:]
        if end.out_of_memory:
            evidence = (
                f"Macaulay2 was killed with SIGKILL inside the container, exit status 137, by the kernel's "
                f"out-of-memory killer: the container's cgroup counts {end.oom_kills} such kill(s)"
            )
            return M2MemoryError(self._memory_message(label, evidence), limit=self.memory_limit()[0], output=output)
        if end.reported and end.oom_kills is None:  # a cgroup that does not show its kills
            evidence = (
                "Macaulay2 was killed with SIGKILL inside the container, exit status 137, and the container "
                "does not show its out-of-memory kills; the out-of-memory killer, or the container's own "
                "time limit"
            )
            return M2MemoryError(
                self._memory_message(label, evidence, certain=False), limit=self.memory_limit()[0], output=output
            )
        return None

    def run(self, script: str, *, timeout: float, label: str = "job", with_package: bool = True) -> M2Output:
        """Run ``script`` in a fresh container; a container killed or stopped by hand is named as such."""
        out = super().run(script, timeout=timeout, label=label, with_package=with_package)
        why = self.outside_end(out)
        if why:
            raise M2ExecutionError(f"{label}: {why}", output=(out.stderr + printable(out.stdout))[-2000:])
        return out

    def outside_end(self, out: M2Output) -> str | None:
        """How the container was ended from outside, neither by its job nor for memory (None: it was not)."""
        end = container_end(out.stderr, out.returncode)
        engine = self.engine or "podman"
        if end.killed_from_outside:
            return (
                f"the container was killed from outside (exit status 137: SIGKILL of its first process, as "
                f"`{engine} kill` or a `{engine} stop` past its grace period do), not by the out-of-memory killer"
            )
        if end.stopped_from_outside:
            sig = signal.Signals(end.status - 128).name
            return (
                f"the container was stopped from outside (exit status {end.status}: {sig} to the container, "
                f"as `{engine} stop` sends), not by the out-of-memory killer"
            )
        if end.status == 128 + signal.SIGKILL and end.oom_kills == 0:
            return (
                "Macaulay2 was killed with SIGKILL inside the container, not by the out-of-memory killer (its "
                "cgroup counts no such kill): the container's own time limit, or a `kill -9` from outside"
            )
        return None

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
