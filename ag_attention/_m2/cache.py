"""On-disk cache of Macaulay2 results.

Entries are keyed by the SHA-256 of the job's script, the Macaulay2 version
and the LightningAttention package's content.  Each entry stores the key and
a checksum of its payload; a file that does not parse, or whose key or
checksum disagrees, or a directory where the entry should be, is treated as
corrupt: logged, removed, and recomputed (so is an entry whose result fails
its job's validation, see :func:`ag_attention._m2.jobs.run_json`).  Writes go
to a temporary file in the same directory and are renamed into place (atomic
on POSIX).  A cache that cannot be written (read-only, a file or directory in
the way, ``AG_ATTENTION_CACHE_DIR`` somewhere impossible) never loses a
result: :meth:`ResultCache.put` warns once per process (logging and
``warnings``) and returns None.  ``AG_ATTENTION_NO_CACHE=1`` or
``cache=False`` bypasses the cache; ``AG_ATTENTION_CACHE_DIR`` moves it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import tempfile
import threading
import warnings
from pathlib import Path
from typing import Any

__all__ = ["ResultCache", "CacheWriteWarning", "default_cache_dir", "cache_disabled_by_env"]

log = logging.getLogger(__name__)
FORMAT = 1


class CacheWriteWarning(UserWarning):
    """The Macaulay2 result cache could not be written (the result itself is returned)."""


_warned = False
_warn_lock = threading.Lock()


def _warn_write_failed(path: Path, exc: OSError) -> None:
    """Warn (logging and warnings) the first time in this process; later failures only at debug level."""
    global _warned
    with _warn_lock:
        first, _warned = not _warned, True
    message = (f"cannot write the Macaulay2 result cache ({path}: {exc.strerror or exc}); results are returned "
               "but not cached (set AG_ATTENTION_CACHE_DIR to a writable directory, or AG_ATTENTION_NO_CACHE=1); "
               "further failures are not reported")
    if first:
        log.warning("%s", message)
        warnings.warn(message, CacheWriteWarning, stacklevel=3)
    else:
        log.debug("cache write failed again: %s: %s", path, exc)


def default_cache_dir() -> Path:
    env = os.environ.get("AG_ATTENTION_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "ag-attention" / "m2"


def cache_disabled_by_env() -> bool:
    return os.environ.get("AG_ATTENTION_NO_CACHE", "") not in ("", "0")


def _canonical(payload: Any) -> str:
    return json.dumps(payload, sort_keys=True, separators=(",", ":"))


class ResultCache:
    def __init__(self, directory: str | os.PathLike[str] | None = None):
        self.directory = Path(directory) if directory is not None else default_cache_dir()
        self.corrupt_entries = 0

    @staticmethod
    def key(*parts: str) -> str:
        h = hashlib.sha256()
        for p in parts:
            h.update(p.encode())
            h.update(b"\0")
        return h.hexdigest()

    def path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        path = self.path(key)
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return None
        except IsADirectoryError:
            self.discard(key, "is a directory")
            return None
        except OSError as exc:
            log.warning("cache entry %s unreadable (%s); recomputing", path, exc)
            return None
        try:
            entry = json.loads(raw.decode("utf-8"))
            ok = (
                isinstance(entry, dict)
                and entry.get("format") == FORMAT
                and entry.get("key") == key
                and entry.get("sha256") == hashlib.sha256(_canonical(entry.get("payload")).encode()).hexdigest()
            )
        except (UnicodeDecodeError, json.JSONDecodeError, TypeError, ValueError):
            ok = False
        if not ok:
            self.discard(key, "is corrupt")
            return None
        return entry["payload"]

    def discard(self, key: str, why: str = "is corrupt") -> None:
        """Count the entry of ``key`` as corrupt and remove it (a file, or a directory in its place)."""
        path = self.path(key)
        self.corrupt_entries += 1
        log.warning("cache entry %s %s; removing it and recomputing", path, why)
        try:
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()
        except OSError as exc:
            log.debug("could not remove %s: %s", path, exc)

    def put(self, key: str, payload: dict[str, Any]) -> Path | None:
        """Store ``payload``; the entry's path, or None (with a warning, once per process) if it cannot be written."""
        path = self.path(key)
        entry = {
            "format": FORMAT,
            "key": key,
            "sha256": hashlib.sha256(_canonical(payload).encode()).hexdigest(),
            "payload": payload,
        }
        tmp = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
            with os.fdopen(fd, "w") as f:
                json.dump(entry, f)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
            tmp = None
        except OSError as exc:
            _warn_write_failed(path, exc)
            return None
        finally:
            if tmp is not None:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
        return path
