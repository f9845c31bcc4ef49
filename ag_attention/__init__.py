"""ag-attention: computational algebraic geometry of self-attention networks.

Everything a user needs comes from here; the subpackages are the
implementation (their names may move between versions, these do not):

* describe a network: :class:`Architecture`, its polynomial map :class:`Parametrization`;
* its neuromanifold: :func:`dimension` (exact, GF(p)), :func:`numerical_dimension`
  (float64, also softmax), :func:`expected_dimension` (the paper's formulas),
  :func:`fibers` (which weights give the same function), :func:`upper_bounds` (the proven upper bounds,
  each an :class:`UpperBound` with its proof in docs/math/bounds.md);
* one layer's closure: :func:`implicitize` (Macaulay2), :func:`closure_equations`
  and :func:`low_degree_equations` (interpolation past Macaulay2's ``kernel``),
  :func:`degree`; :func:`certify` decides Theorem 3.4 at a point;
* a network with its weights: :class:`Network` (arrays, ``.npz``, ``.safetensors``, PyTorch; exact rationals)
  and its geometry there, :func:`point_geometry` (local rank, critical or not, fiber, Theorem 3.4's verdicts);
* the loss landscape of one layer: :func:`ed_degree` (the number of critical points of a squared loss on the
  closure, counted in the weights with msolve or on the implicit side with Macaulay2) and
  :func:`critical_points` (every critical point of a data set's loss, the real ones isolated and classified);
  :func:`ideal_ed_degree` (the ED degree of any variety given by its ideal, for a given metric);
  :class:`PolynomialModel`, :func:`model_ed_degree` and :func:`model_critical_points` (the same for the image of
  any polynomial parametrization: deep linear and linear convolutional networks, or anyone's model);
* grids of architectures: :func:`sweep` (local cores or a Dask cluster, Parquet);
* where a result came from: :func:`provenance`; errors derive from :class:`AgAttentionError`.

>>> from ag_attention import Architecture, dimension
>>> dimension(Architecture((2, 2), ranks=(2,), tokens=2)).dimension
7
"""

from ._algebra import (
    DegreeResult,
    Implicitization,
    LowDegreeEquations,
    closure_equations,
    degree,
    implicitize,
    low_degree_equations,
)
from ._architecture import Architecture
from ._errors import (
    AgAttentionError,
    ComputationError,
    ComputationInterruptedError,
    ComputationTimeoutError,
    InsufficientMemoryError,
    InvalidArchitectureError,
    InvalidArgumentError,
    M2Error,
    M2ExecutionError,
    M2MemoryError,
    M2NotFoundError,
    M2OutputError,
    M2TimeoutError,
    MSolveError,
    MSolveNotFoundError,
    MSolveTimeoutError,
    NoClearGapError,
    OutputError,
)
from ._exact import CertificateKind, DimensionResult, FiberResult, PointVerdict, dimension, fibers
from ._landscape import (
    BoundaryED,
    CriticalFamily,
    CriticalPoint,
    CriticalPoints,
    EDCount,
    EDDegree,
    IdealEDDegree,
    ModelCriticalPoint,
    ModelCriticalPoints,
    ModelEDDegree,
    Nearest,
    PolynomialModel,
    Route,
    boundary_ed_degree,
    critical_points,
    ed_degree,
    ideal_ed_degree,
    model_critical_points,
    model_ed_degree,
    polynomial_model,
)
from ._models import Parametrization, UpperBound, expected_dimension, upper_bounds
from ._numeric import NearStrata, NumericalResult, numerical_dimension
from ._point import Network, PointGeometry, certify, point_geometry
from ._positions import Rotary
from ._provenance import provenance
from ._sweep import SweepResult, sweep
from ._version import __version__ as __version__

__all__ = [
    # networks
    "Architecture",
    "Rotary",
    "Parametrization",
    # neuromanifolds
    "dimension",
    "DimensionResult",
    "numerical_dimension",
    "NumericalResult",
    "expected_dimension",
    "upper_bounds",
    "UpperBound",
    "fibers",
    "FiberResult",
    # one layer's closure
    "implicitize",
    "Implicitization",
    "closure_equations",
    "low_degree_equations",
    "LowDegreeEquations",
    "degree",
    "DegreeResult",
    "certify",
    "PointVerdict",
    # a network with its weights
    "Network",
    "point_geometry",
    "PointGeometry",
    "NearStrata",
    "CertificateKind",
    # the loss landscape
    "ed_degree",
    "ideal_ed_degree",
    "IdealEDDegree",
    "PolynomialModel",
    "polynomial_model",
    "model_ed_degree",
    "model_critical_points",
    "ModelEDDegree",
    "ModelCriticalPoints",
    "ModelCriticalPoint",
    "EDDegree",
    "EDCount",
    "critical_points",
    "CriticalPoints",
    "CriticalPoint",
    "CriticalFamily",
    "Nearest",
    "Route",
    "boundary_ed_degree",
    "BoundaryED",
    # grids of architectures
    "sweep",
    "SweepResult",
    # provenance
    "provenance",
    # errors
    "AgAttentionError",
    "ComputationTimeoutError",
    "ComputationInterruptedError",
    "InvalidArgumentError",
    "InvalidArchitectureError",
    "InsufficientMemoryError",
    "ComputationError",
    "NoClearGapError",
    "M2Error",
    "M2NotFoundError",
    "M2TimeoutError",
    "M2ExecutionError",
    "M2MemoryError",
    "M2OutputError",
    "MSolveError",
    "MSolveNotFoundError",
    "MSolveTimeoutError",
    "OutputError",
]
