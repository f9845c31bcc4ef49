"""Numerical dimension of a network: float64 spectra, sample doubling, and the verdict."""

from __future__ import annotations

import math
import time

from .. import _progress as progress
from .._architecture import Architecture, check_architecture
from .._checks import check_int, check_real
from .._errors import InsufficientMemoryError, InvalidArgumentError, NoClearGapError
from .._models import expected_dimension, new_directions_per_sample
from .._resources import require_memory
from .certified import CERTIFY_MAX_PARAMETERS, RankCertificate, certify_dimension, default_certificate_samples
from .result import NumericalResult
from .spectrum import Spectrum, Steps, numeric_memory, spectrum, undecided_reason

__all__ = ["numerical_dimension"]


def _check_arguments(
    arch: object, seed: object, min_gap: object, raise_on_no_gap: object, max_doublings: object, certify: object = None
) -> float:
    """``min_gap`` as a float once every argument is valid."""
    if not isinstance(arch, Architecture):
        raise InvalidArgumentError(f"arch={arch!r}: must be an Architecture")
    check_int(seed, "seed", minimum=0)
    gap = check_real(min_gap, "min_gap", minimum=0, strict=True)
    if not isinstance(raise_on_no_gap, bool):
        raise InvalidArgumentError(f"raise_on_no_gap={raise_on_no_gap!r}: must be True or False")
    check_int(max_doublings, "max_doublings", minimum=0)
    if certify is not None and not isinstance(certify, bool):
        raise InvalidArgumentError(f"certify={certify!r}: must be True, False or None")
    return gap


def _sample_count(arch: Architecture, samples: object, per_sample: int) -> int:
    """The samples asked for, or enough that the directions they can add exceed ``1.5 P``."""
    if samples is None:
        return max(1, math.ceil(1.5 * arch.parameter_count / per_sample) + 1)
    return check_int(samples, "samples", minimum=1)


def _doubled(
    work: Architecture,
    seed: int,
    samples: int,
    min_gap: float,
    max_doublings: int,
    history: list[tuple[int, int | None]],
    steps: Steps,
) -> tuple[Spectrum, int]:
    """The spectrum with ``samples``, confirmed by doubling them, and doubled again while the rank grows.

    (The per-sample bound is only an upper bound on what a sample contributes.)
    Every spectrum computed is appended to ``history``.
    """
    P = work.parameter_count
    spec = spectrum(work, seed, samples, min_gap, steps)
    history.append((samples, spec.gap.rank))
    for _ in range(max_doublings):
        if spec.gap.rank is None or spec.gap.rank == P:
            break
        try:
            require_memory(numeric_memory(work, 2 * samples), "doubling the samples", "")
        except InsufficientMemoryError:
            break
        spec2 = spectrum(work, seed, 2 * samples, min_gap, steps)
        history.append((2 * samples, spec2.gap.rank))
        if spec2.gap.rank is not None and spec2.gap.rank <= spec.gap.rank:
            break
        spec, samples = spec2, 2 * samples
    return spec, samples


def numerical_dimension(
    arch: Architecture,
    *,
    seed: int = 0,
    samples: int | None = None,
    min_gap: float = 4.0,
    raise_on_no_gap: bool = True,
    max_doublings: int = 4,
    certify: bool | None = None,
) -> NumericalResult:
    """Dimension of a (normalized or lightning) network from float64 singular values.

    ``samples`` defaults to enough samples that the directions they can add
    (``new_directions_per_sample``) exceed ``1.5 P``; the rank is then
    confirmed with twice as many samples, doubling again while it grows (at
    most ``max_doublings`` times).  Each sample contributes ``ceil(3 P / N)``
    Gaussian combinations of its outputs (all of them if fewer), so the
    matrix has about ``3 P`` rows.  Raises :class:`NoClearGapError` when the
    spectrum has no clear gap (or returns a result with ``dimension=None``
    if ``raise_on_no_gap=False``).

    No verdict either (``dimension=None``, the reason in ``undecided``) when
    the rank reaches what the rows or samples can carry (too few samples),
    or when the softmax is saturated (attention weights 0 or 1 to machine
    precision, where its derivative vanishes numerically).  The temperature
    only rescales ``A`` (``phi_{A, V, tau} = phi_{A / tau, V, 1}``), so the
    neuromanifold does not depend on it and the Jacobian is evaluated at
    ``tau = 1``.

    Softmax networks are also certified (see
    docs/math/certificates.md): a lower bound by ball arithmetic
    (a minor of the Jacobian at a dyadic point whose determinant ball
    excludes 0: the rank at a point is at most the generic rank, the
    dimension) and an upper bound by the symmetry families 1 and 2 (``P``
    minus the rank over GF(p) of their tangents).  When they meet,
    ``certified`` is True and ``dimension`` is the proven value, even where
    the float64 spectrum gives no verdict.  ``certify=None`` (the default)
    certifies softmax networks of at most ``CERTIFY_MAX_PARAMETERS`` (400)
    parameters, ``True`` any size, ``False`` none.  The certificate uses its
    own dyadic inputs (all outputs of each), as many as by default here, and
    never more than ``samples`` when these are given.  A computation of more than a few seconds shows its steps
    (each spectrum's Jacobian and SVD) on a progress bar on standard error
    (after 2 s, and only on a terminal or in a notebook).
    """
    arch = check_architecture(arch)
    min_gap = _check_arguments(arch, seed, min_gap, raise_on_no_gap, max_doublings, certify)
    # the temperature rescales A only: same functions, computed where the logits are of order one
    work = arch if arch.temperature == 1.0 else arch.with_(temperature=1.0)
    per_sample = new_directions_per_sample(arch)
    adaptive = samples is None
    samples = _sample_count(arch, samples, per_sample)
    require_memory(
        numeric_memory(work, samples),
        f"{arch.describe()} with {samples:,} samples (float64)",
        "use fewer samples (--samples) or a smaller network",
    )
    t0 = time.perf_counter()
    history: list[tuple[int, int | None]] = []
    # one bar for the spectra (samples and assembly, SVD) of the first run and its doublings, on standard error
    with progress.bar(desc=f"numerical dimension of {arch.describe()}", unit="step") as bar:
        spec, samples = _doubled(
            work, seed, samples, min_gap, int(max_doublings) if adaptive else 0, history, Steps(bar)
        )
    undecided = undecided_reason(arch, spec, samples, per_sample)
    g = spec.gap
    certificate: RankCertificate | None = None
    if certify is None:
        certify = arch.parameter_count <= CERTIFY_MAX_PARAMETERS
    if certify and arch.normalized:
        n_cert = default_certificate_samples(work)
        certificate = certify_dimension(
            work, seed=int(seed), min_gap=min_gap, samples=n_cert if adaptive else min(n_cert, samples)
        )
    value = None if undecided else g.rank
    if certificate is not None and certificate.certified:
        value = certificate.lower
    result = NumericalResult(
        arch,
        value,
        arch.parameter_count,
        expected_dimension(arch),
        g,
        spec.singular_values,
        int(seed),
        samples,
        spec.rows,
        time.perf_counter() - t0,
        tuple(history),
        undecided,
        work.temperature,
        certificate,
    )
    if value is None and g.rank is None and raise_on_no_gap:
        raise NoClearGapError(f"{arch.describe()}: {undecided or g.reason}", seed=int(seed))
    return result
