"""The square system of one layer along a path of forms: :class:`FormHomotopy`.

docs/math/landscape.md (landscape-form-homotopy).  A data set's form is ``G = E^T E`` (``E`` its stacked linear
maps, of rank ``r``); its critical points are tracked from those of a generic form ``E_0^T E_0`` of the same rank,
solved once and stored, along ``E(s) = E_0 + s (E_1 - E_0)`` with the target moving too.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .._errors import InvalidArgumentError
from .square import SquareSystem

__all__ = ["FormHomotopy"]


class FormHomotopy:
    """The system of ``S`` with the form moving too: parameters ``(w, s)`` (``n_x + 1``), form ``sum_k s^k F_k``
    (float ``n_x x n_x`` forms ``F_k`` at the scale of ``S``).  :meth:`factors` makes the path of a data set's
    form: ``E(s)^T E(s)`` for ``E(s) = E_0 + s (E_1 - E_0)``, from a generic form of the same rank at ``s = 0``
    (solved once, stored) to the data's ``G = E_1^T E_1`` at ``s = 1`` (docs/math/landscape.md
    landscape-form-homotopy).  Everything but :meth:`evaluate` (charts, invariants, sizes) is that of ``S``."""

    def __init__(self, S: SquareSystem, forms: Sequence[np.ndarray]) -> None:
        self.S = S
        self.forms = [np.asarray(F, dtype=float) for F in forms]
        for F in self.forms:
            if F.shape != (S.n_x, S.n_x):
                raise InvalidArgumentError(f"a form must be {S.n_x} x {S.n_x}, got {F.shape}")
            if not np.allclose(F, F.T, rtol=0, atol=1e-12 * max(1.0, float(np.abs(F).max()))):
                raise InvalidArgumentError(
                    f"a form must be symmetric; this one is not (max |F - F^T| = {float(np.abs(F - F.T).max()):.3g})"
                )
        # exactly symmetric (a product E^T E is so only up to its rounding): the compiled evaluation reads a row of a
        # form as its column
        self.forms = [(F + F.T) / 2 for F in self.forms]

    @classmethod
    def factors(cls, S: SquareSystem, E0: np.ndarray, E1: np.ndarray) -> FormHomotopy:
        """The path ``G(s) = E(s)^T E(s)``, ``E(s) = E_0 + s (E_1 - E_0)`` (``E_0, E_1`` real ``r x n_x``)."""
        E0, E1 = np.asarray(E0, dtype=float), np.asarray(E1, dtype=float)
        D = E1 - E0
        return cls(S, [E0.T @ E0, E0.T @ D + D.T @ E0, D.T @ D])

    def __getattr__(self, name: str) -> Any:
        if name == "S":  # not yet set (unpickling): no recursion
            raise AttributeError(name)
        return getattr(self.S, name)

    @property
    def n(self) -> int:
        return self.S.n

    @property
    def n_chart(self) -> int:
        return self.S.n_chart

    @property
    def n_parameters(self) -> int:
        return self.S.n_x + 1

    def parameter(self, w: np.ndarray, s: complex) -> np.ndarray:
        """The parameter ``(w, s)``."""
        return np.concatenate([np.asarray(w, dtype=complex).reshape(-1), [complex(s)]])

    def evaluate(
        self,
        theta: np.ndarray,
        p: np.ndarray,
        jacobian: bool = True,
        dp: np.ndarray | None = None,
        *,
        chart: np.ndarray,
    ) -> Any:
        """:meth:`SquareSystem.evaluate` at the form ``sum_k s^k F_k`` (``p = (w, s)``, one or a batch)."""
        Bn = np.asarray(theta).shape[0]
        p = np.asarray(p, dtype=complex)
        n_x, K = self.S.n_x, len(self.forms)
        w, s = p[..., :n_x], np.broadcast_to(p[..., n_x], (Bn,))
        c = s[:, None] ** np.arange(K)[None, :]
        dw = dc = None
        if dp is not None:
            dp = np.asarray(dp, dtype=complex)
            dw, ds = dp[..., :n_x], np.broadcast_to(dp[..., n_x], (Bn,))
            dc = np.zeros((Bn, K), dtype=complex)
            dc[:, 1:] = np.arange(1, K)[None, :] * c[:, :-1] * ds[:, None]
        return self.S.evaluate(theta, w, jacobian, dw, chart=chart, form=(c, dc, self.forms))
