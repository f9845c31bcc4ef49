"""Running Macaulay2 jobs: a local ``M2`` or the project's container image.

Every job is a generated ``.m2`` file run under a timeout and a memory limit,
in a fresh process or a persistent session.

* Local: ``M2 --script job.m2`` in a new session (its own process group), in a
  private temporary directory that is also ``HOME``, with its address space
  limited (``RLIMIT_AS``, default 4 GiB: ``LocalBackend(memory=...)`` or
  ``AG_ATTENTION_M2_MEMORY``, e.g. ``8g``, ``unlimited``).  On timeout the
  whole process group is killed with SIGKILL.
* Container: ``docker``/``podman run`` of the image with no network, a
  read-only root file system, a non-root user, memory (``--memory``, the same
  setting) and process limits, all capabilities dropped; the job directory is
  mounted read-only.  The container is named, so on timeout it is killed with
  ``<engine> kill`` and removed, and the client process group is killed too;
  a watchdog kills it within about a second of a Python killed with SIGKILL,
  and its first process, a shell running the job under coreutils' ``timeout``,
  ends it ``grace`` seconds after the job's limit if nobody is left at all
  (:mod:`ag_attention._m2.container`).
* Sessions: the local backend runs jobs that use the package in persistent
  ``M2`` processes (:mod:`ag_attention._m2.session`), with the same limits.

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
(shipped inside this Python package, ``ag_attention/_m2/``; its source is the
checkout's ``m2scripts/``); scripts start with
``path = prepend(currentFileDirectory, path)``, so both backends run the same
package.  No shell is involved: commands are argument lists.

This module chooses the backend (:func:`get_backend`) and gathers the names
of the implementation, which lives in

* :mod:`ag_attention._m2.backend`: the interface (:class:`Backend`), a job's output, the version query;
* :mod:`ag_attention._m2.local` and :mod:`ag_attention._m2.container`: the two backends;
* :mod:`ag_attention._m2.process`: process groups, the timeout, the kill, signals;
* :mod:`ag_attention._m2.jobdir`: job directories, their owners and cleanup, the package file;
* :mod:`ag_attention._m2.memory`: the memory limit and its messages.
"""

from __future__ import annotations

from .._errors import InvalidArgumentError, M2MemoryError, M2NotFoundError
from .backend import HOW_TO_GET_M2, VERSION_TIMEOUT, Backend, M2Output, check_timeout
from .container import DEFAULT_IMAGE, ENGINE_TIMEOUT, ContainerBackend
from .jobdir import (
    JOBDIR_PREFIX,
    OWNER_FILE,
    PACKAGE_NAME,
    boot_id,
    clean_stale_job_dirs,
    package_file,
    process_start,
)
from .local import LocalBackend
from .memory import DEFAULT_MEMORY, MEMORY_ENV, MIN_MEMORY, parse_memory
from .process import group_members
from .wheel import WheelBackend

__all__ = [
    "M2Output",
    "M2MemoryError",
    "Backend",
    "LocalBackend",
    "ContainerBackend",
    "WheelBackend",
    "BACKEND_CLASSES",
    "get_backend",
    "available_backends",
    "package_file",
    "parse_memory",
    "clean_stale_job_dirs",
    "check_timeout",
    "group_members",
    "DEFAULT_IMAGE",
    "DEFAULT_MEMORY",
    "MIN_MEMORY",
    "MEMORY_ENV",
    "VERSION_TIMEOUT",
    "ENGINE_TIMEOUT",
    "HOW_TO_GET_M2",
    "PACKAGE_NAME",
    "JOBDIR_PREFIX",
    "OWNER_FILE",
    "BACKENDS",
    "default_backends",
    "process_start",
    "boot_id",
]

#: the Macaulay2 backends, in the order ``"auto"`` tries them: Macaulay2 on PATH (Debian's), the
#: passagemath-macaulay2 wheel of this Python (:mod:`ag_attention._m2.wheel`), the project's container image
BACKEND_CLASSES: dict[str, type[Backend]] = {
    "local": LocalBackend,
    "wheel": WheelBackend,
    "container": ContainerBackend,
}
BACKENDS = ("auto", *BACKEND_CLASSES)

#: the backends get_backend() hands out, one of each kind per process (replace an entry to use another)
default_backends: dict[str, Backend] = {}


def available_backends() -> dict[str, tuple[bool, str]]:
    return {name: _backend(name).available() for name in BACKEND_CLASSES}


def _backend(name: str) -> Backend:
    if name not in default_backends:
        default_backends[name] = BACKEND_CLASSES[name]()
    return default_backends[name]


def get_backend(name: str | Backend = "auto") -> Backend:
    """``"local"``, ``"wheel"``, ``"container"``, ``"auto"`` (the first available of them) or a Backend."""
    if isinstance(name, Backend):
        return name
    if name not in BACKENDS:
        raise InvalidArgumentError(f"backend={name!r}: must be one of {', '.join(BACKENDS)}")
    if name == "auto":
        reasons = []
        for candidate in BACKEND_CLASSES:
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
