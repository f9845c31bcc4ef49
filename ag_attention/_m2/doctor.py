"""``ag-attention m2 doctor``: which Macaulay2 backends work here, and how fast."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from .._errors import AgAttentionError
from .jobs import run_json
from .runner import BACKEND_CLASSES, HOW_TO_GET_M2, VERSION_TIMEOUT, ContainerBackend

__all__ = ["BackendReport", "Doctor", "doctor"]


@dataclass
class BackendReport:
    name: str
    available: bool
    detail: str
    version: str | None = None
    overhead_seconds: float | None = None
    package_ok: bool | None = None
    error: str | None = None
    memory_limit: str | None = None  # e.g. "4 GiB of address space, the default"

    def to_dict(self) -> dict[str, Any]:
        return self.__dict__.copy()


@dataclass
class Doctor:
    backends: list[BackendReport] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return any(b.available and b.package_ok for b in self.backends)

    @property
    def help(self) -> str | None:
        """What to do: nothing when a backend works; the errors when one is there but broken; else install."""
        if self.ok:
            return None
        if any(b.available for b in self.backends):
            return "Macaulay2 is there but no backend ran a job: see the error of each backend above"
        return HOW_TO_GET_M2

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "backends": [b.to_dict() for b in self.backends], "help": self.help}

    def __str__(self) -> str:
        lines = ["Macaulay2 backends:"]
        for b in self.backends:
            if not b.available:
                lines.append(f"  {b.name:<10} unavailable: {b.detail}")
            elif b.error:
                lines.append(f"  {b.name:<10} BROKEN ({b.detail}): {b.error}")
            else:
                lines.append(
                    f"  {b.name:<10} Macaulay2 {b.version}, LightningAttention loads, "
                    f"{b.overhead_seconds:.2f} s per job ({b.detail}; memory limit {b.memory_limit})"
                )
        # get_backend("auto") takes the first available backend (local, wheel, container)
        first = next((b for b in self.backends if b.available), None)
        if first is None:
            lines.append("--backend auto: finds nothing")
        else:
            works = "" if first.package_ok else " (which is BROKEN: pass --backend explicitly)"
            lines.append(f"--backend auto: uses {first.name}{works}")
        if not self.ok:
            lines.append(self.help or "")
        return "\n".join(lines)


def doctor(timeout: float = 120) -> Doctor:
    report = Doctor()
    for backend in (cls() for cls in BACKEND_CLASSES.values()):
        ok, detail = backend.available()
        entry = BackendReport(backend.name, ok, detail)
        report.backends.append(entry)
        try:
            limit, source = backend.memory_limit()
            source = source if source == "the default" else f"from {source}"
            kind = "(--memory)" if isinstance(backend, ContainerBackend) else "of address space"
            entry.memory_limit = f"none, {source}" if limit is None else f"{limit / 2**30:g} GiB {kind}, {source}"
        except AgAttentionError as exc:  # a bad AG_ATTENTION_M2_MEMORY
            entry.error, entry.package_ok = str(exc), False
            continue
        if not ok:
            continue
        try:
            entry.version = backend.version(timeout=min(VERSION_TIMEOUT, timeout))
            t0 = time.perf_counter()
            job = run_json(
                'result = hashTable {"ok" => true};',
                schema={"ok": bool},
                backend=backend,
                timeout=timeout,
                label="doctor",
                cache=False,
            )
            entry.overhead_seconds = time.perf_counter() - t0
            entry.package_ok = job.payload.get("ok") is True
        except AgAttentionError as exc:
            entry.error = str(exc)
            entry.package_ok = False
    return report
