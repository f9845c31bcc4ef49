"""On-disk cache of Macaulay2 results.

Entries are keyed by the SHA-256 of the job's script, the Macaulay2 version
and the LightningAttention package's content.  Each entry stores the key and
a checksum of its payload; a file that does not parse, or whose key or
checksum disagrees, or a directory where the entry should be, is treated as
corrupt: logged, removed, and recomputed (so is an entry whose result fails
its job's validation, its form or its sense, see
:func:`ag_attention._m2.jobs.run_json` and :mod:`ag_attention._m2.schema`;
:meth:`ResultCache.get` checks a ``schema`` for callers that use the cache
directly).

Only what this user alone could have written is trusted, as ssh does with
keys:

* an entry is served only if it is a regular file (not a symbolic link)
  owned by this user and writable by nobody else; otherwise it is ignored
  with a warning (:class:`UnsafeCacheWarning`, once per path and process),
  and replaced when the result is computed again;
* the cache is used only if every directory from the root down to the
  entry's (the cache directory, its parents after resolving links, and the
  entry's subdirectory) is owned by this user or root and, if group or
  others may write it, has the sticky bit (as ``/tmp``: others cannot then
  rename or replace what is not theirs).  Otherwise the cache is neither read
  nor written, with a warning: the result is computed, not lost.  A
  subdirectory that is a symbolic link is refused the same way.

Directories are created with mode 0700 and entries 0600, whatever the umask.
Writes go through :func:`ag_attention._files.atomic_write` (a temporary file
with an unpredictable name, created with ``O_EXCL | O_NOFOLLOW``, renamed into
place), and entries are opened with ``O_NOFOLLOW``, so a planted link is
never followed.  A cache that cannot be written (read-only, a file or
directory in the way, ``AG_ATTENTION_CACHE_DIR`` somewhere impossible) never
loses a result: :meth:`ResultCache.put` warns once per process (logging and
``warnings``) and returns None.  ``AG_ATTENTION_NO_CACHE=1`` or
``cache=False`` bypasses the cache; ``AG_ATTENTION_CACHE_DIR`` moves it.
"""

from __future__ import annotations

import errno
import hashlib
import json
import logging
import os
import shutil
import stat
import threading
import warnings
from pathlib import Path
from typing import Any

from .._errors import M2OutputError, OutputError
from .._files import atomic_write, open_nofollow
from .schema import validate

__all__ = ["ResultCache", "CacheWriteWarning", "UnsafeCacheWarning", "default_cache_dir", "cache_disabled_by_env"]

log = logging.getLogger(__name__)
FORMAT = 1
#: an entry's size beyond which it is not read (a Macaulay2 result is far smaller)
MAX_ENTRY_BYTES = 256 * 2**20


class CacheWriteWarning(UserWarning):
    """The Macaulay2 result cache could not be written (the result itself is returned)."""


class UnsafeCacheWarning(UserWarning):
    """A cache directory or entry that another user could have written is not used (the result is computed)."""


_warned = False
_warn_lock = threading.Lock()
_unsafe_warned: set[str] = set()


def _warn_write_failed(path: Path, reason: str) -> None:
    """Warn (logging and warnings) the first time in this process; later failures only at debug level."""
    global _warned
    with _warn_lock:
        first, _warned = not _warned, True
    message = (
        f"cannot write the Macaulay2 result cache ({path}: {reason}); results are returned "
        "but not cached (set AG_ATTENTION_CACHE_DIR to a writable directory, or AG_ATTENTION_NO_CACHE=1); "
        "further failures are not reported"
    )
    if first:
        log.warning("%s", message)
        warnings.warn(message, CacheWriteWarning, stacklevel=3)
    else:
        log.debug("cache write failed again: %s: %s", path, reason)


def _warn_unsafe(path: Path | str, message: str) -> None:
    """Warn (logging and warnings) once per path and process."""
    with _warn_lock:
        first = str(path) not in _unsafe_warned
        _unsafe_warned.add(str(path))
    if first:
        log.warning("%s", message)
        warnings.warn(message, UnsafeCacheWarning, stacklevel=4)
    else:
        log.debug("%s", message)


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


def _uid() -> int:
    return os.geteuid()


def _directory_problem(path: Path, st: os.stat_result) -> str | None:
    """Why the directory ``path`` (its ``lstat``) cannot be trusted (a link, another user's, writable by others),
    and what to do about it."""
    own = "or set AG_ATTENTION_CACHE_DIR to a directory of your own"
    if stat.S_ISLNK(st.st_mode):
        return f"{path} is a symbolic link (remove it, {own})"
    if not stat.S_ISDIR(st.st_mode):
        return f"{path} is not a directory (remove it, {own})"
    if st.st_uid not in (_uid(), 0):
        return f"{path} is owned by uid {st.st_uid}, not by this user (uid {_uid()}) or root ({own})"
    mode = stat.S_IMODE(st.st_mode)
    if mode & 0o022 and not mode & stat.S_ISVTX:
        return f"{path} is writable by others (mode {mode:04o}, no sticky bit; chmod go-w {path}, {own})"
    return None


def _unsafe(problem: str) -> str:
    return (
        f"the Macaulay2 result cache is not used, since another user could plant results in it: {problem}; "
        "results are computed, but neither read from it nor written to it"
    )


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

    # ------------------------------------------------------------------ trust
    def _trusted_root(self, create: bool) -> Path | None:
        """The cache directory, links resolved, if it and every parent can be trusted (created if ``create``).

        None, with a warning, when a directory cannot be trusted; None
        silently when it does not exist (and is not to be created).
        Raises OSError when it cannot be created.
        """
        real = Path(os.path.realpath(self.directory))
        if create:
            self._make_directories(real)
        if os.path.lexists(real) and not os.path.isdir(real):
            raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(real))
        for d in (real, *real.parents):
            try:
                st = os.lstat(d)
            except FileNotFoundError:
                return None
            problem = _directory_problem(d, st)
            if problem:
                _warn_unsafe(d, _unsafe(problem))
                return None
        return real

    @staticmethod
    def _make_directories(real: Path) -> None:
        """Create the missing directories of ``real``, mode 0700 (a umask only removes bits)."""
        missing = []
        d = real
        while not os.path.lexists(d) and d != d.parent:
            missing.append(d)
            d = d.parent
        for d in reversed(missing):
            try:
                os.mkdir(d, 0o700)
            except FileExistsError:
                pass

    def _trusted_subdirectory(self, root: Path, key: str, create: bool) -> Path | None:
        """The entry's subdirectory of ``root`` if it can be trusted (created if ``create``); None otherwise."""
        sub = root / key[:2]
        if create:
            try:
                os.mkdir(sub, 0o700)
            except FileExistsError:
                pass
        try:
            st = os.lstat(sub)
        except FileNotFoundError:
            return None
        problem = _directory_problem(sub, st)
        if problem:
            _warn_unsafe(sub, _unsafe(problem))
            return None
        return sub

    # ------------------------------------------------------------------ read
    def get(self, key: str, schema: Any = None) -> dict[str, Any] | None:
        """The payload stored under ``key``, or None (missing, corrupt, untrusted).

        With ``schema`` the payload must also match it, in form and sense
        (:func:`ag_attention._m2.schema.validate`); an entry that does not is
        corrupt: removed and recomputed.
        """
        path = self.path(key)
        try:
            root = self._trusted_root(create=False)
        except OSError:
            return None
        sub = None if root is None else self._trusted_subdirectory(root, key, create=False)
        if sub is None:
            return None
        path = sub / path.name
        try:
            fd = open_nofollow(path, os.O_RDONLY | os.O_NONBLOCK)
        except OutputError as exc:
            if exc.errno == errno.ENOENT:
                return None
            if exc.errno == errno.ELOOP:
                _warn_unsafe(
                    path,
                    f"cache entry {path} is a symbolic link: ignored (not followed); the result is "
                    "computed again and stored in its place",
                )
                return None
            log.warning("cache entry %s unreadable (%s); recomputing", path, exc)
            return None
        try:
            st = os.fstat(fd)
            if stat.S_ISDIR(st.st_mode):
                os.close(fd)
                fd = -1
                self.discard(key, "is a directory")
                return None
            problem = self._entry_problem(st)
            if problem:
                _warn_unsafe(
                    path,
                    f"cache entry {path} {problem}: ignored, as ssh ignores such keys; the result is "
                    "computed again and stored in its place",
                )
                return None
            with os.fdopen(fd, "rb") as fh:
                fd = -1
                raw = fh.read(MAX_ENTRY_BYTES + 1)
        except OSError as exc:
            log.warning("cache entry %s unreadable (%s); recomputing", path, exc)
            return None
        finally:
            if fd >= 0:
                os.close(fd)
        try:
            entry = json.loads(raw.decode("utf-8"))
            ok = (
                len(raw) <= MAX_ENTRY_BYTES
                and isinstance(entry, dict)
                and entry.get("format") == FORMAT
                and entry.get("key") == key
                and entry.get("sha256") == hashlib.sha256(_canonical(entry.get("payload")).encode()).hexdigest()
            )
        except (UnicodeDecodeError, json.JSONDecodeError, TypeError, ValueError, RecursionError):
            ok = False
        if not ok:
            self.discard(key, "is corrupt")
            return None
        payload = entry["payload"]
        if schema is not None:
            try:
                validate(payload, schema, label="a cache entry")
            except M2OutputError as exc:
                self.discard(key, f"does not have the expected form ({exc})")
                return None
        return payload if isinstance(payload, dict) else None

    @staticmethod
    def _entry_problem(st: os.stat_result) -> str | None:
        """Why an entry (its ``fstat``) is not served: not a regular file, another user's, writable by others."""
        if not stat.S_ISREG(st.st_mode):
            return "is not a regular file"
        if st.st_uid != _uid():
            return f"is owned by uid {st.st_uid}, not by this user (uid {_uid()})"
        mode = stat.S_IMODE(st.st_mode)
        if mode & 0o022:
            return f"is writable by others (mode {mode:04o})"
        return None

    def trusted_file(self, name: str, *, create: bool) -> Path | None:
        """Where a result of another kind (a file ``name``, kept in the subdirectory of its first two characters,
        e.g. a stored solution set) is read (``create`` False) or written (True) under the entries' trust (module
        docstring): None when a directory cannot be trusted or created (with a warning), or, to read, when the file
        is missing, a link, not a regular file, another user's or writable by others (warned: it is computed again
        and replaced)."""
        try:
            root = self._trusted_root(create=create)
            sub = None if root is None else self._trusted_subdirectory(root, name, create=create)
        except OSError as exc:
            if create:
                _warn_write_failed(self.directory / name, exc.strerror or str(exc))
            return None
        if sub is None:
            return None
        path = sub / name
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            return path if create else None
        except OSError:
            return None
        problem = "is a symbolic link" if stat.S_ISLNK(st.st_mode) else self._entry_problem(st)
        if problem:
            if not create:
                _warn_unsafe(path, f"cache file {path} {problem}: ignored; it is computed again and replaced")
                return None
            if stat.S_ISDIR(st.st_mode):
                shutil.rmtree(path, ignore_errors=True)  # a directory in its place (a rename cannot replace it)
        return path

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

    # ------------------------------------------------------------------ write
    def put(self, key: str, payload: dict[str, Any]) -> Path | None:
        """Store ``payload``; the entry's path, or None (with a warning, once per process) if it cannot be written."""
        path = self.path(key)
        entry = {
            "format": FORMAT,
            "key": key,
            "sha256": hashlib.sha256(_canonical(payload).encode()).hexdigest(),
            "payload": payload,
        }
        try:
            root = self._trusted_root(create=True)
            sub = None if root is None else self._trusted_subdirectory(root, key, create=True)
            if sub is None:
                return None
            if os.path.isdir(sub / path.name) and not os.path.islink(sub / path.name):
                shutil.rmtree(sub / path.name)  # a directory in the entry's place
            atomic_write(sub / path.name, json.dumps(entry), permissions=0o600)
        except OSError as exc:
            _warn_write_failed(path, exc.strerror or str(exc))
            return None
        except OutputError as exc:
            _warn_write_failed(path, str(exc).rsplit(": ", 1)[-1])
            return None
        return path
