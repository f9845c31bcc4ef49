"""The exact room: python-flint's algorithms over GF(p) and QQ, and what they prove.

The front door of :mod:`ag_attention._exact`: other rooms import these names from here (``from .._exact import
rank``), never from its modules (tests/test_layout.py).  Ranks and echelon forms (``linalg``, a namespace, with
``modular_lu`` beneath it), dimensions by Jacobian ranks modulo primes (``dimension``, ``sampling``, ``runs``,
``result``, ``cost``), fibers, one layer's exact geometry (``onelayer``: differentials, factorization, singular
points, verdicts), balls of ball arithmetic (``balls``, a namespace), span bounds.
"""

from . import (
    balls,  # a namespace other rooms use
    linalg,  # a namespace other rooms use
)
from .balls import Balls, DeterminantBall, ball, determinant, evaluate, interval, precision, signature, top_eigenvalue
from .cost import (
    BLAS_EFFICIENCY,
    BLAS_SECONDS_PER_ENTRY,
    FLINT_SHARE,
    duration,
    estimate_dimension,
    jacobian_seconds,
    long_sequences,
    matrix_product_rate,
    rank_seconds,
)
from .dimension import DimensionResult, default_prime, dimension
from .fibers import FiberResult, fibers
from .field import DEFAULT_PRIME, SECOND_PRIME, GFp, check_prime, is_prime
from .linalg import ModularPolynomial, RationalPolynomial, rank
from .modular_lu import BLAS_PRIMES
from .onelayer import CertificateKind, PointVerdict, certify, differential, exact_rank, fiber, rank_mod_p, reduced_point
from .rational import rank_factorization
from .sampling import check_run_memory, run_memory, sampling_plan
from .spans import output_span

__all__ = [
    "linalg",
    "BLAS_EFFICIENCY",
    "BLAS_PRIMES",
    "BLAS_SECONDS_PER_ENTRY",
    "Balls",
    "CertificateKind",
    "DEFAULT_PRIME",
    "DeterminantBall",
    "DimensionResult",
    "FLINT_SHARE",
    "FiberResult",
    "GFp",
    "ModularPolynomial",
    "PointVerdict",
    "RationalPolynomial",
    "SECOND_PRIME",
    "ball",
    "balls",
    "certify",
    "check_prime",
    "check_run_memory",
    "default_prime",
    "determinant",
    "differential",
    "dimension",
    "duration",
    "estimate_dimension",
    "evaluate",
    "exact_rank",
    "fiber",
    "fibers",
    "interval",
    "is_prime",
    "jacobian_seconds",
    "long_sequences",
    "matrix_product_rate",
    "output_span",
    "precision",
    "rank",
    "rank_factorization",
    "rank_mod_p",
    "rank_seconds",
    "reduced_point",
    "run_memory",
    "sampling_plan",
    "signature",
    "top_eigenvalue",
]
