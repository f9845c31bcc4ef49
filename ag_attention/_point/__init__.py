"""A network with its weights, and its geometry there (issue 21): :class:`Network`, :func:`point_geometry`.

* :mod:`.weights`: weights in (arrays, numbers, ``.npz``, ``.safetensors``,
  PyTorch), exact rationals, the architecture inferred and checked;
* :mod:`.geometry`: the local rank at the weights, proven bounds;
* :mod:`.onelayer`: one layer's stratum, Theorem 3.4's verdicts, fiber,
  distance to the critical set;
* :mod:`.heads`: every head's exact ranks, spectra and verdicts from its factors, at any size (``--per-head``),
  and the kernel directions a dead or rank-deficient head exhibits;
* :mod:`.report`: :func:`point_geometry` and :class:`PointGeometry`.
"""

from .report import LayerAtPoint, NumericalAtPoint, PointGeometry, point_geometry
from .weights import Network

__all__ = ["Network", "PointGeometry", "LayerAtPoint", "NumericalAtPoint", "point_geometry"]
