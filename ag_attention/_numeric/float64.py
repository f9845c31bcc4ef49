"""float64 arithmetic for the network evaluator and the coordinates (the counterpart of exact GF(p))."""

from __future__ import annotations

import numpy as np

from .._network import OperatorArithmetic

__all__ = ["Float64"]


class Float64(OperatorArithmetic):
    """float64 arithmetic: the :class:`ag_attention._network.Arithmetic` protocol, like
    :class:`ag_attention._exact.field.GFp`."""

    exact = False
    dtype = np.float64

    def random(self, rng: np.random.Generator, shape: int | tuple[int, ...]) -> np.ndarray:
        return rng.standard_normal(shape)

    def einsum(self, spec: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        out: np.ndarray = np.einsum(spec, a, b, optimize=True)
        return out
