"""The local backend: ``M2`` on this machine, its address space limited.

Jobs that use the package run in persistent sessions
(:mod:`ag_attention._m2.session`); the others, and any job a session does
not bring to its end, run as ``M2 --script job.m2``.  Either way the process
runs in a new session (its own process group), in its job directory, which
is also ``HOME``, with a minimal environment, a parent-death signal and
``RLIMIT_AS`` set between fork and exec (see :mod:`ag_attention._m2.process`).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

from .. import _clock
from .. import _progress as progress
from .._errors import M2NotFoundError, M2TimeoutError
from .backend import HOW_TO_GET_M2, Backend, M2Output, check_timeout
from .process import die_with_parent, limit_address_space, terminate_with_cleanup
from .session import pool_for, sessions_enabled

__all__ = ["LocalBackend"]


class LocalBackend(Backend):
    """``M2`` on PATH (or a given executable), its address space limited to ``memory``.

    ``memory``: ``"4g"``, ``"512m"``, bytes, or ``"unlimited"``; default
    ``AG_ATTENTION_M2_MEMORY`` or 4 GiB (read at each job).  ``sessions``:
    run jobs in persistent sessions (:mod:`ag_attention._m2.session`); default
    ``AG_ATTENTION_M2_SESSIONS`` (on unless ``0``), read at each job.
    """

    name = "local"

    def __init__(self, executable: str | None = None, memory: str | int | None = None, sessions: bool | None = None):
        super().__init__(memory)
        self.executable = executable or shutil.which("M2")
        self.sessions = sessions

    def _preexec(self) -> Callable[[], None]:
        limit = self.memory_limit()[0]
        if limit is None:
            return die_with_parent

        def setup() -> None:  # pragma: no cover - runs in the child between fork and exec
            die_with_parent()
            limit_address_space(limit)

        return setup

    def available(self) -> tuple[bool, str]:
        if not self.executable or not os.access(self.executable, os.X_OK):
            return False, "no M2 on PATH"
        return True, self.executable

    def _command(self, jobdir: Path, name: str, timeout: float) -> list[str]:
        if not self.executable:
            raise M2NotFoundError(f"{self.name} backend: {self.available()[1]}. " + HOW_TO_GET_M2)
        # M2 --script FILE takes exactly these two arguments
        return [self.executable, "--script", str(jobdir / "job.m2")]

    def _program_command(self, jobdir: Path, name: str, timeout: float, executable: str, args: list[str]) -> list[str]:
        return [executable, *(a.replace("{job}", str(jobdir)) for a in args)]

    def run(self, script: str, *, timeout: float, label: str = "job", with_package: bool = True) -> M2Output:
        """Run ``script`` in a persistent session (:mod:`ag_attention._m2.session`), else in a fresh process.

        A job that does not end with its result in a session runs again in a
        fresh process within what is left of ``timeout``, so its error is a
        fresh process's; ``AG_ATTENTION_M2_SESSIONS=0`` always runs fresh.
        """

        timeout = check_timeout(timeout)
        use = sessions_enabled() if self.sessions is None else self.sessions
        if not (with_package and use and self.executable):
            return super().run(script, timeout=timeout, label=label, with_package=with_package)
        deadline = _clock.now() + timeout
        try:
            with terminate_with_cleanup(), progress.elapsed(f"{label} ({self.name}, session)", limit=timeout):
                out = pool_for(self).run(script, timeout=timeout, label=label)
        except TimeoutError:
            raise M2TimeoutError(f"{label} ({self.name} backend)", timeout) from None
        if out is not None:
            return out
        remaining = deadline - _clock.now()
        if remaining <= 0:
            raise M2TimeoutError(f"{label} ({self.name} backend)", timeout)
        return super().run(script, timeout=remaining, label=label, with_package=with_package)

    def describe(self) -> str:
        return f"local ({self.executable})"
