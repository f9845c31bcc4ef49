"""Writing files safely: atomically, never through a planted link, and with a clear error when it fails.

Every file the package writes (reports, figures, sweep tables, caches, locks)
goes through this module:

* :func:`atomic_write` and :func:`atomic_open` write a temporary file in the
  target's directory, ``fsync`` it, rename it over the target and ``fsync``
  the directory.  The temporary file has an unpredictable name and is created
  with ``O_CREAT | O_EXCL | O_NOFOLLOW``, so a symbolic link planted at any
  name (the temporary's or the target's) is never followed: a planted
  temporary name makes the open fail and another name is drawn, and the
  rename replaces a link at the target *itself*, not the file it points to.
* :func:`open_nofollow` opens files that are appended to or locked in place
  (a sweep's journal and lock) without following a link.
* :func:`reserve` checks, before a long computation, that its output will
  fit: it allocates (``posix_fallocate``) as many bytes as the output is
  estimated to need, which fails on a full disk where writing an empty file
  would not.

A failure raises :class:`OutputError` naming the path and the reason (``No
space left on device``); the temporary file is removed, the old target is
left as it was.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from ._errors import OutputError

__all__ = ["OutputError", "atomic_write", "atomic_open", "open_nofollow", "reserve", "fsync_directory", "output_error"]

_TMP_ATTEMPTS = 16


def output_error(path: str | os.PathLike[str], exc: OSError, doing: str = "write") -> OutputError:
    """An :class:`OutputError` for ``exc`` at ``path``, naming both (``cannot write PATH: No space left ...``)."""
    reason = exc.strerror or str(exc)
    if exc.errno == errno.ELOOP:
        reason = "it is a symbolic link (not followed)"
    return OutputError(f"cannot {doing} {os.fspath(path)}: {reason}", path=os.fspath(path), errno=exc.errno)


def fsync_directory(directory: str | os.PathLike[str]) -> None:
    """``fsync`` a directory, so a rename in it survives a crash (ignored where directories cannot be synced)."""
    try:
        fd = os.open(os.fspath(directory), os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _create_temporary(target: Path, mode: int) -> tuple[int, Path]:
    """A new file next to ``target`` with an unpredictable name, created exclusively, never through a link."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    last: OSError | None = None
    for _ in range(_TMP_ATTEMPTS):
        tmp = target.with_name(f".{target.name}.{os.getpid()}.{secrets.token_hex(6)}.tmp")
        try:
            return os.open(tmp, flags, mode), tmp
        except FileExistsError as exc:  # taken (or planted): draw another name
            last = exc
        except OSError as exc:  # no such directory, no permission, a read-only file system: named, not raw
            raise output_error(target, exc) from None
    raise output_error(target, last or OSError(errno.EEXIST, "no free temporary name"))


@contextlib.contextmanager
def atomic_open(
    path: str | os.PathLike[str], mode: str = "wb", *, permissions: int = 0o644, encoding: str = "utf-8"
) -> Iterator[IO[Any]]:
    """A file object whose content replaces ``path`` atomically when the block ends without an error.

    ``mode`` is ``"wb"`` or ``"w"`` (text, ``encoding``).  On any error the
    temporary file is removed and ``path`` is untouched; an ``OSError`` comes
    out as :class:`OutputError` naming ``path``.
    """
    if mode not in ("wb", "w"):
        raise ValueError(f"mode={mode!r}: atomic_open writes whole files ('wb' or 'w')")
    target = Path(path)
    fd, tmp = _create_temporary(target, permissions)
    try:
        with os.fdopen(fd, mode, encoding=encoding if mode == "w" else None) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise output_error(target, exc) from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    fsync_directory(target.parent)


def atomic_write(path: str | os.PathLike[str], data: str | bytes, *, permissions: int = 0o644) -> Path:
    """Replace ``path`` by ``data`` (text as UTF-8) atomically; see :func:`atomic_open`."""
    payload = data.encode("utf-8") if isinstance(data, str) else data
    with atomic_open(path, "wb", permissions=permissions) as fh:
        fh.write(payload)
    return Path(path)


def open_nofollow(path: str | os.PathLike[str], flags: int, permissions: int = 0o644) -> int:
    """``os.open(path, flags | O_NOFOLLOW | O_CLOEXEC)``: a file descriptor, never through a symbolic link.

    An ``OSError`` (the path is a link: ``ELOOP``; a full disk; no permission)
    comes out as :class:`OutputError` naming the path.
    """
    try:
        return os.open(os.fspath(path), flags | os.O_NOFOLLOW | os.O_CLOEXEC, permissions)
    except OSError as exc:
        raise output_error(path, exc, "open") from None


def reserve(directory: str | os.PathLike[str], nbytes: int) -> None:
    """Check that ``directory`` is writable and has room for ``nbytes`` more, before the work starts.

    Allocates a probe file of ``nbytes`` (``posix_fallocate``: a full disk
    fails here, an empty file would not), then removes it.  Raises
    :class:`OutputError` naming the directory and the reason.
    """
    d = Path(directory)
    fd, probe = _create_temporary(d / "write-test", 0o600)
    try:
        if nbytes > 0:
            try:
                os.posix_fallocate(fd, 0, nbytes)
            except OSError as exc:
                if exc.errno not in (errno.EOPNOTSUPP, errno.EINVAL):
                    raise
                # a file system without fallocate: write the bytes instead
                chunk = b"\0" * min(nbytes, 1 << 20)
                left = nbytes
                while left > 0:
                    left -= os.write(fd, chunk[:left])
                os.fsync(fd)
    except OSError as exc:
        raise output_error(d, exc, f"write {nbytes:,} bytes in") from None
    finally:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(probe)
