"""Job directories: a private temporary directory per job, its owner record, and the removal of stale ones.

A job directory (``ag-attention-m2-*`` in the temporary directory) holds the
job's files and, for Macaulay2 jobs, a copy of ``LightningAttention.m2``
(:func:`package_file`).  It is removed when the job ends; the one of a Python
killed with SIGKILL stays behind, so it records its owner (PID, the process's
start time and the boot) and :func:`clean_stale_job_dirs`, run before every
job, removes the directories whose owner is gone.
"""

from __future__ import annotations

import contextlib
import importlib.resources
import json
import logging
import os
import shutil
import stat
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from .._errors import M2NotFoundError
from .process import stat_fields

__all__ = [
    "job_directory",
    "clean_stale_job_dirs",
    "package_file",
    "process_start",
    "boot_id",
    "PACKAGE_NAME",
    "JOBDIR_PREFIX",
    "OWNER_FILE",
]

log = logging.getLogger(__name__)

PACKAGE_NAME = "LightningAttention.m2"
JOBDIR_PREFIX = "ag-attention-m2-"
OWNER_FILE = "owner.json"
#: a job directory without an owner record (older versions) is stale after this many seconds
STALE_WITHOUT_OWNER = 86400.0


# ------------------------------------------------------------------ the package
def _is_package(path: Path) -> bool:
    """A readable LightningAttention.m2 (not, say, a checkout's symlink stored as a text file)."""
    try:
        return path.is_file() and b"newPackage" in path.read_bytes()[:4096]
    except OSError:
        return False


def package_file() -> Path:
    """Path of ``LightningAttention.m2``.

    ``AG_ATTENTION_M2SCRIPTS`` (a directory) if set; otherwise the copy shipped
    in this Python package (``ag_attention/_m2/``: package data, a symlink to
    ``m2scripts/`` in the checkout); otherwise the checkout's ``m2scripts/``.
    """
    candidates: list[Path] = []
    env = os.environ.get("AG_ATTENTION_M2SCRIPTS")
    if env:
        candidates.append(Path(env) / PACKAGE_NAME)
    try:
        shipped = importlib.resources.files("ag_attention._m2") / PACKAGE_NAME
        if isinstance(shipped, Path):  # a zipped install has no path: the next candidate, if any
            candidates.append(shipped)
    except (ModuleNotFoundError, OSError):  # pragma: no cover
        pass
    candidates.append(Path(__file__).resolve().parents[2] / "m2scripts" / PACKAGE_NAME)
    for c in candidates:
        if _is_package(c):
            return c
        if env and c == candidates[0]:
            break  # an explicit setting that does not work is an error, not a fallback
    raise M2NotFoundError(
        f"the Macaulay2 package {PACKAGE_NAME} was not found (looked in {', '.join(map(str, candidates))}); "
        "set AG_ATTENTION_M2SCRIPTS to the directory holding it (m2scripts/ of the ag-attention sources)"
    )


# ------------------------------------------------------------------ owners
def process_start(pid: int) -> str | None:
    """The start time of ``pid`` (clock ticks after boot, ``/proc/PID/stat`` field 22), None if unknown."""
    fields = stat_fields(pid)
    return fields[19] if fields and len(fields) > 19 else None


def boot_id() -> str | None:
    try:
        with open("/proc/sys/kernel/random/boot_id") as fh:
            return fh.read().strip()
    except OSError:
        return None


def _owner_record() -> dict[str, object]:
    return {"pid": os.getpid(), "start": process_start(os.getpid()), "boot": boot_id()}


def _owner_alive(record: dict[str, object]) -> bool:
    """Is the process that wrote ``record`` still running (the same process, not a reused PID)?"""
    pid = record.get("pid")
    if not isinstance(pid, int) or pid <= 0:
        return False
    boot = boot_id()
    if boot is not None and record.get("boot") not in (None, boot):
        return False  # written before a reboot
    if process_start(os.getpid()) is None:  # no /proc: only "does the PID exist"
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    fields = stat_fields(pid)
    if fields is None or fields[0] in ("Z", "X"):
        return False
    return record.get("start") is None or fields[19] == record.get("start")


def _is_stale(entry: os.DirEntry[str]) -> bool:
    """A job directory of this user whose owner is gone (without a record: a day old); OSError if unreadable."""
    st = entry.stat(follow_symlinks=False)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid():
        return False
    try:
        record = json.loads((Path(entry.path) / OWNER_FILE).read_text())
        return not _owner_alive(record if isinstance(record, dict) else {})
    except (OSError, ValueError):  # no record (older versions) or an unreadable one
        return time.time() - st.st_mtime > STALE_WITHOUT_OWNER


def clean_stale_job_dirs(directory: str | os.PathLike[str] | None = None) -> list[Path]:
    """Remove the job directories (``ag-attention-m2-*``) whose owner process is gone; the removed ones.

    Only directories of this user are looked at; one without an owner record
    (written by older versions) counts as stale once it is a day old.
    """
    base = Path(directory if directory is not None else tempfile.gettempdir())
    removed = []
    try:
        entries = list(os.scandir(base))
    except OSError:
        return []
    for entry in entries:
        if not entry.name.startswith(JOBDIR_PREFIX):
            continue
        try:
            stale = _is_stale(entry)
        except OSError:
            continue
        if stale:
            shutil.rmtree(entry.path, ignore_errors=True)
            if not os.path.exists(entry.path):
                log.info("removed the job directory %s left by a killed process", entry.path)
                removed.append(Path(entry.path))
    return removed


# ------------------------------------------------------------------ one job's directory
@contextlib.contextmanager
def job_directory(files: dict[str, str], with_package: bool) -> Iterator[Path]:
    """A fresh job directory holding ``files`` (and the package), readable by the container's user.

    Stale directories of killed processes are removed first; this one is
    removed when the block ends.
    """
    try:
        clean_stale_job_dirs()
    except Exception as exc:  # pragma: no cover - housekeeping never fails a job
        log.debug("cleaning stale job directories failed: %s", exc)
    with tempfile.TemporaryDirectory(prefix=JOBDIR_PREFIX) as tmp:
        jobdir = Path(tmp)
        os.chmod(jobdir, 0o755)  # readable by the container's user
        (jobdir / OWNER_FILE).write_text(json.dumps(_owner_record()))
        for filename, text in files.items():
            (jobdir / filename).write_text(text)
        if with_package:
            shutil.copyfile(package_file(), jobdir / PACKAGE_NAME)
        for f in jobdir.iterdir():
            os.chmod(f, 0o644)
        yield jobdir
