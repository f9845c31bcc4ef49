"""Memory: how much a computation will take, how much it may take, and the refusal.

Every engine that allocates large arrays (inputs, backward seeds, the
Jacobian, its FLINT copy, symmetry tangents, the float64 SVD workspace)
first builds a :class:`MemoryEstimate` from the sizes alone, by arithmetic on
Python integers, and passes it to :func:`require_memory`.  Nothing large is
allocated before that check, so an impossible size is refused in
microseconds with the estimate, the limit and what to change, never with a
numpy traceback or the OOM killer.

The limit is the smallest of

* ``MemAvailable`` of ``/proc/meminfo`` (what the kernel can give without swapping),
* the room left under a cgroup memory limit (v2 ``memory.max - memory.current``,
  v1 ``memory.limit_in_bytes - memory.usage_in_bytes``, every ancestor of the
  process's cgroup), which is what binds inside containers and CI runners,
* the room left under ``RLIMIT_AS``,
* ``AG_ATTENTION_MEMORY_LIMIT`` (bytes, or with a suffix ``K``, ``M``, ``G``,
  ``T``), a limit of the user's choosing,

and an estimate is refused when the *additional* memory it needs exceeds it.
The estimates are calibrated against the peak resident set size measured with
``getrusage`` in a fresh process (``tests/test_resources.py`` keeps them
within 25 %).
"""

from __future__ import annotations

import os
import re
import resource
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import _clock
from ._errors import ComputationInterruptedError, ComputationTimeoutError, InsufficientMemoryError, InvalidArgumentError

__all__ = [
    "Deadline",
    "MemoryEstimate",
    "MemoryLimit",
    "memory_limit",
    "require_memory",
    "current_rss",
    "parse_bytes",
    "parse_size",
    "format_bytes",
]

#: cgroup limits at or above this are "no limit" (v1 writes 2^63 rounded to a page)
_UNLIMITED = 2**60
_SUFFIX = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


def format_bytes(n: int | float) -> str:
    """``1536 MiB`` style, in the largest unit that keeps one decimal meaningful."""
    n = float(n)
    if abs(n) >= 2**60 * 1000:
        return f"{n / 2**60:.1e} EiB"
    for unit, size in (("EiB", 2**60), ("PiB", 2**50), ("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if abs(n) >= size:
            return f"{n / size:.1f} {unit}"
    return f"{int(n)} B"


_SIZE = re.compile(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([KMGT]?)(?:i?B)?\s*", flags=re.ASCII | re.IGNORECASE)


def parse_size(text: str) -> float | None:
    """Bytes of ``8G``, ``512m``, ``4GiB``, ``1.5g`` or ``4096`` (units are powers of 1024); None if no size.

    >>> parse_size("8G") == 8 * 2**30, parse_size("1.5 KiB"), parse_size("lots")
    (True, 1536.0, None)
    """
    m = _SIZE.fullmatch(text)
    return None if m is None else float(m.group(1)) * _SUFFIX[m.group(2).upper()]


def parse_bytes(text: str, name: str = "AG_ATTENTION_MEMORY_LIMIT") -> int:
    """``"8G"`` -> 8 GiB; a clear error naming ``name`` otherwise."""
    value = parse_size(str(text))
    if value is None:
        raise InvalidArgumentError(
            f"{name}={text!r}: must be a number of bytes, optionally with K, M, G or T (e.g. 8G)"
        )
    if value < 1:
        raise InvalidArgumentError(f"{name}={text!r}: must be positive")
    return int(value)


def current_rss() -> int:
    """Resident set size of this process in bytes (0 where ``/proc`` is missing)."""
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _meminfo_available() -> int | None:
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def _read_int(path: Path) -> int | None:
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    if text == "max":
        return None
    try:
        return int(text)
    except ValueError:
        return None


def cgroup_room(proc_cgroup: str = "/proc/self/cgroup", root: str = "/sys/fs/cgroup") -> tuple[int, str] | None:
    """Bytes left under the tightest cgroup memory limit of this process, and which file set it.

    Walks the process's cgroup and its ancestors, for cgroup v2 (``memory.max``,
    ``memory.current``) and v1 (``memory/.../memory.limit_in_bytes``,
    ``memory.usage_in_bytes``).  None when no limit applies.
    """
    try:
        lines = Path(proc_cgroup).read_text().splitlines()
    except OSError:
        return None
    best: tuple[int, str] | None = None
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        if controllers == "":
            base, limit_name, usage_name = Path(root), "memory.max", "memory.current"
            if not (base / "cgroup.controllers").exists() and (base / "unified").is_dir():
                base = base / "unified"
        elif "memory" in controllers.split(","):
            base, limit_name, usage_name = Path(root) / "memory", "memory.limit_in_bytes", "memory.usage_in_bytes"
        else:
            continue
        rel = Path(path.lstrip("/"))
        for directory in [base / rel, *[base / p for p in rel.parents]]:
            limit = _read_int(directory / limit_name)
            if limit is None or limit >= _UNLIMITED:
                continue
            usage = _read_int(directory / usage_name) or 0
            room = max(0, limit - usage)
            if best is None or room < best[0]:
                best = (
                    room,
                    f"cgroup limit {format_bytes(limit)} ({directory / limit_name}), {format_bytes(usage)} in use",
                )
    return best


@dataclass(frozen=True)
class MemoryLimit:
    """How many more bytes this process may allocate, and what imposes that."""

    bytes: int | None  # None: unknown (no /proc): the check is skipped
    source: str


#: seconds for which the machine-wide readings (MemAvailable, the cgroup walk) are reused: a sweep checks
#: thousands of small estimates a second, and re-reading /proc and /sys cost a third of its time
SYSTEM_READING_TTL = 1.0
_system_cache: tuple[float, list[tuple[int, str]]] | None = None


def _system_room() -> list[tuple[int, str]]:
    """MemAvailable and the cgroup room, read at most once per :data:`SYSTEM_READING_TTL` seconds."""
    global _system_cache
    now = time.monotonic()  # a cache's age, not a deadline
    if _system_cache is not None and now - _system_cache[0] < SYSTEM_READING_TTL:
        return _system_cache[1]
    candidates: list[tuple[int, str]] = []
    avail = _meminfo_available()
    if avail is not None:
        candidates.append((avail, "MemAvailable in /proc/meminfo"))
    cg = cgroup_room()
    if cg is not None:
        candidates.append(cg)
    _system_cache = (now, candidates)
    return candidates


def memory_limit() -> MemoryLimit:
    """The smallest of MemAvailable, a cgroup limit, RLIMIT_AS and ``AG_ATTENTION_MEMORY_LIMIT``.

    The machine-wide readings are at most :data:`SYSTEM_READING_TTL` seconds old;
    the process's own (RLIMIT_AS, the resident size against the variable) are current.
    """
    candidates = list(_system_room())
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft != resource.RLIM_INFINITY:
        try:
            with open("/proc/self/statm") as fh:
                vsize = int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, ValueError, IndexError):
            vsize = 0
        candidates.append((max(0, soft - vsize), f"RLIMIT_AS {format_bytes(soft)} (ulimit -v)"))
    env = os.environ.get("AG_ATTENTION_MEMORY_LIMIT")
    if env:
        # a limit on the whole process: what is already resident counts against it
        candidates.append((max(0, parse_bytes(env) - current_rss()), f"AG_ATTENTION_MEMORY_LIMIT={env}"))
    if not candidates:
        return MemoryLimit(None, "unknown (no /proc/meminfo)")
    room, source = min(candidates, key=lambda c: c[0])
    return MemoryLimit(room, source)


@dataclass(frozen=True)
class MemoryEstimate:
    """Peak additional memory of a computation, in bytes, with the arrays behind it.

    ``parts`` maps a description (``"Jacobian 4,096 x 4,480 int64"``) to
    bytes; ``peak`` is the high-water mark of the stages (not the sum of all
    parts: arrays of different stages are not alive together).
    """

    peak: int
    parts: dict[str, int] = field(default_factory=dict)

    def largest(self, n: int = 3) -> str:
        top = sorted(self.parts.items(), key=lambda kv: -kv[1])[:n]
        return ", ".join(f"{name} {format_bytes(b)}" for name, b in top)

    def __add__(self, other: MemoryEstimate) -> MemoryEstimate:
        return MemoryEstimate(self.peak + other.peak, {**self.parts, **other.parts})

    def __or__(self, other: MemoryEstimate) -> MemoryEstimate:
        """Stages run one after the other: the larger peak."""
        return MemoryEstimate(max(self.peak, other.peak), {**self.parts, **other.parts})


#: what one more process-wide allocation may fragment or round up: a margin on top of the estimate
_SAFETY = 1.10


def require_memory(estimate: MemoryEstimate, what: str, change: str) -> MemoryLimit:
    """Refuse (:class:`InsufficientMemoryError`, exit 2) when ``estimate`` does not fit.

    ``what`` names the computation, ``change`` says what the user can change
    (e.g. "use fewer samples (--samples) or a smaller network").
    """
    limit = memory_limit()
    if limit.bytes is not None and estimate.peak * _SAFETY > limit.bytes:
        raise InsufficientMemoryError(
            f"{what} needs about {format_bytes(estimate.peak)} (largest arrays: {estimate.largest()}), "
            f"but only {format_bytes(limit.bytes)} is available to it ({limit.source}); {change}",
            estimate=estimate.peak,
            limit=limit.bytes,
        )
    return limit


class Deadline:
    """A time limit for in-process work: :meth:`check` raises :class:`~ag_attention.ComputationTimeoutError` past it.

    Long loops call :meth:`check` between pieces of work (a rank calls it after
    each run of columns), so the overrun is at most one piece.

    >>> d = Deadline(3600.0)
    >>> d.check("a step"); 0 < d.remaining() <= 3600
    True
    >>> Deadline(None).remaining() is None
    True
    """

    def __init__(self, seconds: float | None):
        self.seconds = seconds
        self.start = _clock.now()

    def remaining(self) -> float | None:
        """Seconds left (None: no limit)."""
        return None if self.seconds is None else self.seconds - (_clock.now() - self.start)

    def check(self, what: str) -> None:
        """Raise :class:`~ag_attention.ComputationTimeoutError` naming ``what`` if the limit has passed, or if the
        run was interrupted (Ctrl-C, :mod:`ag_attention._clock`), also without a limit."""
        left = self.remaining()
        if _clock.interrupted():  # (read after the clock: Ctrl-C may come while it is read)
            raise ComputationInterruptedError(what, float(self.seconds or 0.0))
        if left is not None and left <= 0:
            raise ComputationTimeoutError(what, float(self.seconds or 0.0))

    def fits(self, what: str, seconds: float) -> None:
        """Before a step that cannot stop halfway (one LAPACK call): raise
        :class:`~ag_attention.ComputationTimeoutError` now when its estimated ``seconds`` would pass the limit, rather
        than return that long after it (the deadline kept under load, not only idle)."""
        left = self.remaining()
        if _clock.interrupted():
            raise ComputationInterruptedError(what, float(self.seconds or 0.0))
        if left is not None and seconds > left:
            raise ComputationTimeoutError(
                f"{what} (estimated {seconds:.0f} s, {max(left, 0.0):.0f} s left: not started)",
                float(self.seconds or 0.0),
            )
