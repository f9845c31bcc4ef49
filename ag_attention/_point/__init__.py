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

from . import plot  # a namespace other rooms use
from .checkpoints import read_names_file
from .estimate import estimate_point
from .head_readers import load_head_table
from .layouts import MODELS
from .onelayer import certify
from .report import LayerAtPoint, NumericalAtPoint, PointGeometry, point_geometry
from .training import CRITICAL_RATIO, RANK_TOLERANCE, TEACHERS, TrainingRun, train
from .weights import Network, exact_parameter_limit, read_arrays, to_fraction

__all__ = [
    "plot",
    "Network",
    "PointGeometry",
    "LayerAtPoint",
    "NumericalAtPoint",
    "point_geometry",
    "CRITICAL_RATIO",
    "MODELS",
    "RANK_TOLERANCE",
    "TEACHERS",
    "TrainingRun",
    "certify",
    "estimate_point",
    "exact_parameter_limit",
    "load_head_table",
    "read_arrays",
    "read_names_file",
    "to_fraction",
    "train",
]
