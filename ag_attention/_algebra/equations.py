"""``closure_equations(arch, method=...)``: the ideal of the closure by the kernel, by interpolation, or either.

* ``"kernel"``: Macaulay2's kernel (:func:`ag_attention._algebra.implicitize.implicitize`),
  the whole ideal, small sizes only;
* ``"interpolate"``: every minimal generator of degree ``<= max_degree`` by
  exact interpolation per torus multidegree (:mod:`.interpolation`), then a
  test of :mod:`.completeness` (when msolve runs) says whether they generate
  the whole ideal: the length of an artinian reduction (at most 30 s; it can
  certify only Cohen-Macaulay closures), then the leading-ideal test (at most
  600 s per msolve run, and the backend's memory limit);
* ``"auto"``: interpolation to degree 2, 3, ..., ``max_degree`` until a
  test certifies the ideal complete; if it never does, Macaulay2's
  kernel under ``timeout``; if that times out too, the interpolated
  generators with "complete up to degree k" and the kernel's timeout recorded.
"""

from __future__ import annotations

from typing import Any

from .._architecture import Architecture, check_architecture
from .._checks import check_choice, check_int
from .._errors import InvalidArgumentError, M2TimeoutError
from .._m2 import check_timeout
from .._models import one_layer_problem
from .completeness import certify_completeness
from .implicitize import implicitize
from .interpolation import low_degree_equations

__all__ = ["closure_equations", "EQUATION_METHODS", "DEFAULT_MAX_DEGREE"]

EQUATION_METHODS = ("kernel", "interpolate", "auto")
#: interpolation's default top degree (``auto`` goes up to it)
DEFAULT_MAX_DEGREE = {"interpolate": 3, "auto": 4}


def _interpolable(arch: Architecture, coords: str, field: str) -> str | None:
    """Why interpolation does not apply (None if it does)."""
    problem = one_layer_problem(arch, "reduced", "interpolation (reduced coordinates, t >= 2)")
    if problem is not None:
        return problem
    if coords != "reduced" or field != "QQ":
        return "interpolation: reduced coordinates over QQ only (lifted from GF(p))"
    return None


def closure_equations(
    arch: Architecture,
    *,
    method: str = "kernel",
    max_degree: int | None = None,
    coords: str = "reduced",
    field: str = "QQ",
    weights: str | None = None,
    backend: str = "auto",
    timeout: float = 300.0,
    cache: bool = True,
    completeness: bool = True,
    completeness_timeout: float | None = None,
) -> Any:
    """The ideal of the closure of one layer (see the module docstring for the methods).

    ``completeness=False`` skips the completeness tests after an
    interpolation (the generators are then "up to degree k", untested);
    ``completeness_timeout`` bounds them (default ``timeout``).
    """
    arch = check_architecture(arch)

    check_choice(method, "method", EQUATION_METHODS)
    if max_degree is not None and method == "kernel":
        raise InvalidArgumentError(
            "--max-degree: only for --method interpolate or auto (the kernel is the whole ideal)"
        )
    if max_degree is not None:
        check_int(max_degree, "--max-degree", minimum=1)
    if method == "kernel" and (not completeness or completeness_timeout is not None):
        raise InvalidArgumentError(
            "--no-completeness and --completeness-timeout: only for --method interpolate or "
            "auto (the kernel is the whole ideal)"
        )
    why = _interpolable(arch, coords, field)
    if method == "interpolate" and why:
        raise InvalidArgumentError(why)

    def kernel() -> Any:
        return implicitize(
            arch, coords=coords, field=field, weights=weights, backend=backend, timeout=timeout, cache=cache
        )

    if method == "kernel" or why:  # auto on a size interpolation cannot do: the kernel
        return kernel()
    if not isinstance(completeness, bool):
        raise InvalidArgumentError(f"completeness={completeness!r}: must be True or False")
    if not completeness and method == "auto":
        raise InvalidArgumentError(
            "--no-completeness: only with --method interpolate (auto stops when a test certifies the ideal complete)"
        )
    limit = check_timeout(timeout if completeness_timeout is None else completeness_timeout, "--completeness-timeout")
    top = DEFAULT_MAX_DEGREE[method] if max_degree is None else max_degree

    def tested(eqs: Any) -> Any:
        if not completeness:
            eqs.extra["completeness"] = "not tested (--no-completeness)"
            return eqs
        return certify_completeness(eqs, limit, backend)

    if method == "interpolate":
        return tested(low_degree_equations(arch, max_degree=top))
    eqs = None
    for k in range(min(2, top), top + 1):
        eqs = tested(low_degree_equations(arch, max_degree=k))
        if eqs.certified_complete:
            return eqs
    assert eqs is not None
    try:
        return kernel()
    except M2TimeoutError as exc:
        eqs.extra["kernel"] = f"Macaulay2's kernel did not finish: {exc}"
        return eqs
