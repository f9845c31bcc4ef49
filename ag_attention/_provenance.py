"""Where a result came from: the ``provenance`` object of every JSON output and report.

``provenance(macaulay2=..., msolve=...)`` records the package version, the
git commit when the package runs from a checkout (``None`` from a wheel), the
date (UTC, ISO 8601), the Python and python-flint versions, and the versions of
the external engines a computation used (only those: an engine not passed is
not listed, so a row never claims a tool it did not run).

>>> p = provenance(macaulay2="1.21")
>>> sorted(p)
['commit', 'date', 'flint', 'macaulay2', 'python', 'version']
>>> p["macaulay2"]
'1.21'
"""

from __future__ import annotations

import datetime as _dt
import functools
import importlib.metadata
import platform
import subprocess
from pathlib import Path

from ._version import __version__

__all__ = ["provenance"]


@functools.lru_cache(maxsize=1)
def _commit() -> str | None:
    """The checkout's ``HEAD`` (with ``+dirty`` when tracked files changed), or None outside a git checkout."""
    root = Path(__file__).resolve().parent.parent
    if not (root / ".git").exists():
        return None
    try:
        head = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return head + ("+dirty" if dirty else "") if head else None


def _flint_version() -> str:
    """python-flint's version from its distribution's metadata (no import of flint outside exact/)."""
    try:
        return importlib.metadata.version("python-flint")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def provenance(**engines: str | None) -> dict[str, str | None]:
    """The provenance object: ``version``, ``commit``, ``date``, ``python``, ``flint`` and the ``engines`` given.

    ``engines`` maps an engine's name (``macaulay2``, ``msolve``) to its version;
    a ``None`` value is dropped (the engine was not used).
    """

    out: dict[str, str | None] = {
        "version": __version__,
        "commit": _commit(),
        "date": _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat(),
        "python": platform.python_version(),
        "flint": _flint_version(),
    }
    out.update({name: str(v) for name, v in engines.items() if v is not None})
    return out
