"""On-disk cache of Macaulay2 results.

Entries are keyed by the SHA-256 of the job's script, the Macaulay2 version
and the LightningAttention package's content.  Each entry stores the key and
a checksum of its payload; a file that does not parse, or whose key or
checksum disagrees, is treated as corrupt: logged, removed, and recomputed.
Writes go to a temporary file in the same directory and are renamed into
place (atomic on POSIX).  ``AG_ATTENTION_NO_CACHE=1`` or ``cache=False``
bypasses the cache; ``AG_ATTENTION_CACHE_DIR`` moves it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["ResultCache", "default_cache_dir", "cache_disabled_by_env"]

log = logging.getLogger(__name__)
FORMAT = 1


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
        except (UnicodeDecodeError, json.JSONDecodeError, TypeError):
            ok = False
        if not ok:
            self.corrupt_entries += 1
            log.warning("cache entry %s is corrupt; removing it and recomputing", path)
            try:
                path.unlink()
            except OSError:
                pass
            return None
        return entry["payload"]

    def put(self, key: str, payload: dict[str, Any]) -> Path:
        path = self.path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        entry = {
            "format": FORMAT,
            "key": key,
            "sha256": hashlib.sha256(_canonical(payload).encode()).hexdigest(),
            "payload": payload,
        }
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "w") as f:
                json.dump(entry, f)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
        return path
