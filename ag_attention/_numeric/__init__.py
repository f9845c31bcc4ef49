"""Numerical dimension of normalized (softmax) attention networks, in float64.

Softmax attention is not polynomial, so the exact GF(p) engine does not
apply.  :func:`numerical_dimension` evaluates the same reverse-mode Jacobian
(:func:`ag_attention._network.jacobian`) in float64 on Gaussian input
sequences, normalizes its columns, and decides the rank from the largest gap
in the singular values.  That rank is *numerical, not a proof*: it records
the gap (orders of magnitude between the singular values on either side) and
refuses a verdict when no clear gap exists.

For softmax networks the dimension is also *certified* where possible
(:mod:`.certified`): a lower bound by ball arithmetic (a minor of the
Jacobian at a dyadic point and dyadic inputs, recomputed with python-flint's
``arb`` balls, whose determinant ball excludes 0; the rank at any point is at
most the generic rank, which is the dimension) and an upper bound by the
symmetry families 1 and 2 that survive the softmax (``P`` minus the GF(p)
rank of their tangents).  When the two meet, ``certified`` is True.

Conditioning: weights are drawn so that attention logits and layer outputs
are of order one (queries and keys with variance ``1 / (d_in sqrt(a))``,
values with variance ``1 / d_in``), inputs are standard Gaussian, and each
Jacobian column is scaled to unit norm (which does not change the rank).

The implementation: :mod:`.float64` (the arithmetic), :mod:`.gap` (the rank
from a spectrum), :mod:`.spectrum` (one Jacobian's singular values),
:mod:`.certified` (the proven bounds), :mod:`.dimension` (sampling, doubling,
the verdict) and :mod:`.result`
(:class:`NumericalResult`); this package only re-exports them.

The numerical room also holds homotopy continuation (:mod:`.tracker`: path
tracking in float64 batches; :mod:`.polylines`: many jobs of paths along
polylines; :mod:`.monodromy`: monodromy stopped by the trace test;
:mod:`.homotopy`: parameter homotopies) and its certification (:mod:`.certify`: the Krawczyk test in ball
arithmetic, distinctness and realness): the loss landscape
(:mod:`ag_attention._landscape`) poses its systems and calls these, never a
solver directly.  docs/math/landscape.md says what each proves.
"""

from __future__ import annotations

from .._errors import NoClearGapError
from .._models import new_directions_per_sample
from . import (
    certify,  # a namespace other rooms use
    executors,  # a namespace other rooms use
    homotopy,  # a namespace other rooms use
    kernels,  # a namespace other rooms use (numba is imported only when a kernel is first needed)
    monodromy,  # a namespace other rooms use
)
from .certified import RankCertificate, certify_dimension
from .certify import BITS
from .dimension import numerical_dimension
from .executors import default_workers
from .float64 import Float64, SmallFloat64
from .gap import GapRank, gap_rank
from .monodromy_state import check_state_paths
from .result import NumericalResult
from .spectrum import input_scale, numeric_memory, rows_per_sample
from .spectrum import spectrum as softmax_spectrum
from .strata import NearStrata, check_rtol, numerical_rank, one_layer_strata

__all__ = [
    "check_state_paths",
    "input_scale",
    "monodromy",
    "homotopy",
    "kernels",
    "executors",
    "certify",
    "Float64",
    "SmallFloat64",
    "GapRank",
    "NoClearGapError",
    "gap_rank",
    "NumericalResult",
    "numerical_dimension",
    "new_directions_per_sample",
    "numeric_memory",
    "rows_per_sample",
    "RankCertificate",
    "certify_dimension",
    "BITS",
    "NearStrata",
    "check_rtol",
    "default_workers",
    "numerical_rank",
    "one_layer_strata",
    "softmax_spectrum",
]
