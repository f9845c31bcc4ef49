"""ag-attention: computational algebraic geometry of self-attention networks."""

from .architecture import Architecture
from .errors import AgAttentionError, ComputationError, InvalidArchitectureError, InvalidArgumentError
from .exact.dimension import DimensionResult, dimension
from .models.formulas import expected_dimension

__all__ = [
    "Architecture",
    "AgAttentionError",
    "ComputationError",
    "InvalidArchitectureError",
    "InvalidArgumentError",
    "DimensionResult",
    "dimension",
    "expected_dimension",
]

__version__ = "0.1.0"
