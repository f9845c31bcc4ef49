"""float64 arithmetic for the network evaluator and the coordinates (the counterpart of exact GF(p))."""

from __future__ import annotations

import numpy as np

from .._network import OperatorArithmetic
from .._positions import Frequencies, circle_float

__all__ = ["Float64", "SmallFloat64"]


class Float64(OperatorArithmetic):
    """float64 arithmetic: the :class:`ag_attention._network.Arithmetic` protocol, like
    :class:`ag_attention._exact.field.GFp`."""

    exact = False
    dtype = np.float64

    def random(self, rng: np.random.Generator, shape: int | tuple[int, ...]) -> np.ndarray:
        return rng.standard_normal(shape)

    #: operands of at most this many entries together are multiplied by numpy's C loop (no path search, no BLAS);
    #: 0 here: every product through ``optimize=True``, whose results the BLAS-kernel variations fingerprint
    c_loop_below = 0

    def einsum(self, spec: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        out: np.ndarray = np.einsum(spec, a, b, optimize=a.size + b.size > self.c_loop_below)
        return out

    def circle(self, freqs: Frequencies, tokens: int) -> tuple[np.ndarray, np.ndarray]:
        """Rotary positions: ``cos(p theta_f)``, ``sin(p theta_f)`` at the true frequencies, in float64."""
        return circle_float(freqs, tokens)


class SmallFloat64(Float64):
    """:class:`Float64` for many small products (gradient descent on small layers): the path search and the BLAS
    dispatch of ``optimize=True`` cost 20x the product itself there (83 % of a training step at d = 3), so
    operands of up to 4,096 entries go through numpy's C loop: one training step 4x faster."""

    c_loop_below = 4096
