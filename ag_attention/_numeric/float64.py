"""float64 arithmetic for the network evaluator and the coordinates (the counterpart of exact GF(p))."""

from __future__ import annotations

import numpy as np

from .._network import OperatorArithmetic
from .._positions import Frequencies, circle_float

__all__ = ["Float64"]

#: operands of at most this many entries together are multiplied by numpy's C loop, without a path search
SMALL_EINSUM = 4096


class Float64(OperatorArithmetic):
    """float64 arithmetic: the :class:`ag_attention._network.Arithmetic` protocol, like
    :class:`ag_attention._exact.field.GFp`."""

    exact = False
    dtype = np.float64

    def random(self, rng: np.random.Generator, shape: int | tuple[int, ...]) -> np.ndarray:
        return rng.standard_normal(shape)

    def einsum(self, spec: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        # small operands: numpy's C loop directly (the path search and the BLAS dispatch of ``optimize=True`` cost
        # 20x the product itself there: 83 % of a training step at d = 3); large ones: through BLAS
        small = a.size + b.size <= SMALL_EINSUM
        out: np.ndarray = np.einsum(spec, a, b, optimize=not small)
        return out

    def circle(self, freqs: Frequencies, tokens: int) -> tuple[np.ndarray, np.ndarray]:
        """Rotary positions: ``cos(p theta_f)``, ``sin(p theta_f)`` at the true frequencies, in float64."""
        return circle_float(freqs, tokens)
