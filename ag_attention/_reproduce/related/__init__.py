"""Published results about lightning attention, recomputed (``ag-attention reproduce related``): one module per
published work, one entry point (:func:`reproduce_related`, in :mod:`.run`).

* :mod:`.invariants`: Alexandr, Duan, Montúfar, *Algebraic invariants of lightning self-attention*
  (arXiv:2604.15632), their families rebuilt from the definitions (their coordinates in :mod:`.coordinates`, the
  constructions in :mod:`.constructions`, the registry and the checks on the image in :mod:`.families`, the
  comparison with the package's minimal generators in :mod:`.explain`);
* :mod:`.their_code`: the same work's own Macaulay2 code (golden files of what it computes, package data in
  ``data/aldm`` checked against their manifest: :mod:`.golden`), compared member by member (:mod:`.spans`) and
  ideal by ideal (:mod:`.ideals`);
* :mod:`.heads`: the multi-head poster (OpenReview 7vPmnHdAPl);
* :mod:`.boundaries`: the ED degree of decision boundaries (arXiv:2602.06105).

The training dynamics of in-context learning (arXiv:2501.16265) have their own command: ``reproduce icl``
(:mod:`ag_attention._reproduce.icl`).
"""

from .boundaries import BOUNDARY_SIZES, BOUNDARY_SOURCES, BOUNDARY_VALUES, boundary_checks, boundary_source
from .constructions import DEFAULT_LINES, lie_certificate, lines_for
from .coordinates import (
    INVARIANTS,
    REPOSITORY,
    Label,
    check_coordinate_map,
    reduced_form,
    reduced_ring,
    their_coordinates,
    their_labels,
    their_ring,
)
from .explain import Explained, explain_generators
from .families import FAMILIES, FamilyCheck, check_family, family_members, linear_span, on_image
from .heads import (
    HEADS,
    POSTER,
    QUICK_SOFTMAX_GRID,
    SOFTMAX_GRID,
    compare_heads,
    heads_grid,
    heads_section,
    one_layer_criterion,
    poster_formula,
    softmax_heads,
)
from .invariants import (
    EXPLAIN_SIZES,
    FAMILY_SIZES,
    OUTSIDE,
    QUICK_EXPLAIN_SIZES,
    QUICK_FAMILY_SIZES,
    T1_VALUES,
    invariants_section,
    m2_section,
    reduced_against_m2,
    t1_against_m2,
)
from .run import reproduce_related

__all__ = [
    "REPOSITORY",
    "POSTER",
    "INVARIANTS",
    "HEADS",
    "Label",
    "their_labels",
    "their_coordinates",
    "reduced_form",
    "check_coordinate_map",
    "FAMILIES",
    "family_members",
    "check_family",
    "FamilyCheck",
    "lie_certificate",
    "DEFAULT_LINES",
    "lines_for",
    "explain_generators",
    "Explained",
    "their_ring",
    "reduced_ring",
    "on_image",
    "linear_span",
    "t1_against_m2",
    "reduced_against_m2",
    "invariants_section",
    "m2_section",
    "FAMILY_SIZES",
    "QUICK_FAMILY_SIZES",
    "OUTSIDE",
    "EXPLAIN_SIZES",
    "QUICK_EXPLAIN_SIZES",
    "T1_VALUES",
    "poster_formula",
    "one_layer_criterion",
    "compare_heads",
    "heads_grid",
    "SOFTMAX_GRID",
    "QUICK_SOFTMAX_GRID",
    "softmax_heads",
    "heads_section",
    "BOUNDARY_SIZES",
    "BOUNDARY_VALUES",
    "BOUNDARY_SOURCES",
    "boundary_source",
    "boundary_checks",
    "reproduce_related",
]
