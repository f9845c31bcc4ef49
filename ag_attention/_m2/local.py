"""The local backend: ``M2 --script job.m2`` on this machine, its address space limited.

The job runs in a new session (its own process group), in its job directory,
which is also ``HOME``, with a minimal environment, a parent-death signal and
``RLIMIT_AS`` set between fork and exec (see :mod:`ag_attention._m2.process`).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Callable

from .._errors import M2NotFoundError
from .backend import HOW_TO_GET_M2, Backend
from .process import die_with_parent, limit_address_space

__all__ = ["LocalBackend"]


class LocalBackend(Backend):
    """``M2`` on PATH (or a given executable), its address space limited to ``memory``.

    ``memory``: ``"4g"``, ``"512m"``, bytes, or ``"unlimited"``; default
    ``AG_ATTENTION_M2_MEMORY`` or 4 GiB (read at each job).
    """

    name = "local"

    def __init__(self, executable: str | None = None, memory: str | int | None = None):
        super().__init__(memory)
        self.executable = executable or shutil.which("M2")

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
            raise M2NotFoundError("local backend: no M2 on PATH. " + HOW_TO_GET_M2)
        # M2 --script FILE takes exactly these two arguments
        return [self.executable, "--script", str(jobdir / "job.m2")]

    def _program_command(self, jobdir: Path, name: str, timeout: float, executable: str, args: list[str]) -> list[str]:
        return [executable, *(a.replace("{job}", str(jobdir)) for a in args)]

    def describe(self) -> str:
        return f"local ({self.executable})"
