"""The memory limit of a Macaulay2 (or msolve) job: its setting, and the message when a job hits it.

Local jobs are limited in address space (``RLIMIT_AS``), container jobs with
``--memory``; both read ``memory=`` of the backend, else
``AG_ATTENTION_M2_MEMORY`` (e.g. ``8g``, ``unlimited``), else 4 GiB, at each job.
A limit is at least 256 MiB (Macaulay2 needs 240 MiB to start) and at most
``2^63 - 1`` bytes, the largest ``RLIMIT_AS`` takes (``unlimited`` removes it);
the container backend takes at most ``2^42 - 1`` MiB (4 EiB), since docker and
podman double ``--memory`` for swap.
"""

from __future__ import annotations

import os
import re

from .._errors import InvalidArgumentError
from .._resources import parse_size

__all__ = [
    "parse_memory",
    "memory_setting",
    "how_to_raise",
    "size",
    "MEMORY_ENV",
    "DEFAULT_MEMORY",
    "MIN_MEMORY",
    "MAX_MEMORY",
    "OUT_OF_MEMORY",
]

#: the memory limit of a job: local, address space (RLIMIT_AS); container, ``--memory``
MEMORY_ENV = "AG_ATTENTION_M2_MEMORY"
DEFAULT_MEMORY = "4g"
#: Macaulay2 1.21 (2 cores) needs 240 MiB of address space to start; smaller limits are refused
MIN_MEMORY = 256 * 2**20
#: the largest address-space limit the kernel takes (``setrlimit`` with a signed 64-bit ``rlim_t`` in Python)
MAX_MEMORY = 2**63 - 1

_NO_LIMIT = ("none", "unlimited", "off")

# Macaulay2 1.21 out of memory, measured under RLIMIT_AS: its GC ("*** out of memory trying to
# allocate N bytes, exiting ***", status 1; or libgc's "Insufficient memory for the allocation", status 1:
# 20 and 7 of 27 runs of `implicitize --widths 4,3 --ranks 2` under 256 MiB to 600 MiB), GMP ("GNU MP:
# Cannot allocate memory", SIGABRT), threads ("pthread_create: failed: Cannot allocate memory"),
# tcmalloc ("Out of memory trying to allocate internal tcmalloc data", "tcmalloc: allocation failed"),
# the loader below ~96 MiB ("failed to map segment from shared object"); and the texts of the libraries
# it links (libgc "GC Warning: Out of Memory!", libstdc++ "std::bad_alloc", flint "Unable to allocate
# memory", "Not enough memory", factory "memory exhausted", omalloc "Emergency Exit: Out of Memory")
OUT_OF_MEMORY = re.compile(
    r"out of memory|insufficient memory|not enough memory|memory exhausted|std::bad_alloc"
    r"|(?:cannot|could not|couldn't|unable to|failed to) allocate|allocation failed"
    r"|failed to map segment from shared object",
    re.IGNORECASE,
)


def size(n: int) -> str:
    """``4 GiB``, ``300 MiB``: a limit as the user wrote it."""
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
        parsed = (
            int(text) if text.isascii() and text.isdigit() else parse_size(text)
        )  # bytes exactly (a float rounds above 2^53)
        if parsed is None:
            raise InvalidArgumentError(
                f"{what}={value!r}: must be a size such as 4g, 512m or 4GiB (bytes without a unit), or unlimited"
            )
        n = int(parsed)
    if n > MAX_MEMORY:
        raise InvalidArgumentError(
            f"{what}={value!r}: above the largest address-space limit the kernel takes (RLIMIT_AS: 2^63 - 1 bytes, "
            "8 EiB); write unlimited for no limit"
        )
    if n < MIN_MEMORY:
        raise InvalidArgumentError(
            f"{what}={value!r}: below {size(MIN_MEMORY)}; Macaulay2 1.21 needs about 240 MiB of address space "
            "just to start (sizes without a unit are bytes: write 4g, 512m)"
        )
    return n


def memory_setting(explicit: object) -> tuple[int | None, str]:
    """(bytes or None, where the value comes from) for a backend's ``memory`` argument."""
    if explicit is not None:
        return parse_memory(explicit, "memory"), "memory="
    env = os.environ.get(MEMORY_ENV, "").strip()
    if env:
        return parse_memory(env, MEMORY_ENV), MEMORY_ENV
    return parse_memory(DEFAULT_MEMORY), "the default"


def how_to_raise(name: str, limit: int | None) -> str:
    """How to give the ``name`` backend (``local``, ``container``) more than ``limit``."""
    more = size(2 * limit) if limit else "8 GiB"
    cls = "LocalBackend" if name == "local" else "ContainerBackend"
    return (
        f"raise it with {MEMORY_ENV}={more.replace(' GiB', 'g').replace(' MiB', 'm')} "
        f"(or {cls}(memory=...); {MEMORY_ENV}=unlimited removes it)"
    )
