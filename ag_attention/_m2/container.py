"""The container backend: the project's Macaulay2 image under docker or podman.

``<engine> run`` of the image with no network, a read-only root file system,
a non-root user, memory (``--memory``) and process limits, all capabilities
dropped; the job directory is mounted read-only.  The container is named, so
on timeout it is killed with ``<engine> kill`` and removed (the client's
process group is killed too).  Its first process is coreutils' ``timeout``,
so it also ends by itself ``grace`` seconds after the job's limit if nobody is
left to kill it.
"""

from __future__ import annotations

import logging
import math
import os
import re
import shutil
import signal
import subprocess
from pathlib import Path

from .._errors import InvalidArgumentError, M2MemoryError, M2NotFoundError
from .backend import HOW_TO_GET_M2, Backend, M2Output, stderr_note
from .memory import MEMORY_ENV
from .parse import exit_status, printable

__all__ = ["ContainerBackend", "DEFAULT_IMAGE", "ENGINE_TIMEOUT"]

log = logging.getLogger(__name__)

DEFAULT_IMAGE = os.environ.get("AG_ATTENTION_IMAGE", "localhost/ag-attention-m2:latest")
#: seconds an engine command (``info``, ``--version``, ``image inspect``) may take
ENGINE_TIMEOUT = 30.0
#: the largest ``--memory`` in MiB docker and podman take: they set the swap limit to twice it, a signed 64-bit number
MAX_CONTAINER_MIB = 2**42 - 1

_IMAGE_MISSING = re.compile(r"no such image|image not known|not found|no such object|failed to find", re.IGNORECASE)


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
        return False, f"`{exe} info` failed ({exit_status(r.returncode)}, {stderr_note(r.stderr)})"
    try:
        v = subprocess.run([exe, "--version"], stdin=subprocess.DEVNULL, capture_output=True, timeout=ENGINE_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return True, f"{exe} (no version: `{exe} --version` failed: {exc})"
    text = v.stdout.decode("utf-8", "backslashreplace").strip()
    if v.returncode != 0 or not text:
        return True, f"{exe} (prints no version: `{exe} --version` gave {exit_status(v.returncode)}, {stderr_note(v.stderr)})"
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

    def __init__(self, image: str = DEFAULT_IMAGE, engine: str | None = None, memory: str | int | None = None,
                 pids: int = 512, grace: float = 30.0):
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
            r = subprocess.run([engine, "image", "inspect", self.image], stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=ENGINE_TIMEOUT * 2)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return False, f"`{engine} image inspect {self.image}` failed: {exc}"
        if r.returncode != 0:
            err = r.stderr.decode("utf-8", "backslashreplace")
            if _IMAGE_MISSING.search(err):
                return False, f"the image {self.image} is missing (engine: {about}): build it with docker/build.sh"
            return False, (f"`{engine} image inspect {self.image}` failed ({exit_status(r.returncode)}, "
                           f"{stderr_note(err)}; engine: {about})")
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
