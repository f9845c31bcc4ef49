"""``ag-attention reproduce related``: every published work's part of the report, in one run.

The parts, one module each (``docs/related.md`` states the results with the numbers):

1. :mod:`.invariants` and :mod:`.their_code`: Alexandr, Duan, Montúfar, *Algebraic invariants of lightning
   self-attention* (arXiv:2604.15632): their families rebuilt from the definitions, and what their own Macaulay2
   code computes (golden files), compared member by member and ideal by ideal;
2. :mod:`.heads`: the multi-head poster (OpenReview 7vPmnHdAPl) against the certified dimensions;
3. :mod:`.boundaries`: the ED degree of decision boundaries (arXiv:2602.06105);
4. :mod:`.models`: other families through the general landscape API, against published counts (linear
   convolutional networks: Shahverdi, arXiv:2401.16613; deep linear networks: Bharadwaj and Hoşten,
   arXiv:2301.12651, their repository's raw outputs).

The shared report plumbing (checks, tables, files written atomically) is :mod:`ag_attention._reproduce.report`.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from ..._checks import check_int
from ..._errors import InvalidArgumentError
from ..._files import atomic_write
from ..report import Report, written
from .boundaries import boundary_checks
from .heads import POSTER, heads_section
from .invariants import REPOSITORY, invariants_section, m2_section
from .models import models_section
from .their_code import their_code_section

__all__ = ["reproduce_related"]


def reproduce_related(
    out: str | Path | None = None, *, quick: bool = False, seed: int = 0, workers: int | None = None
) -> Report:
    """Every published work's section (docs/related.md): the invariants rebuilt and their code's outputs (golden
    files), the multi-head fibers, the ED degrees of decision boundaries.  ``quick``: three sizes per family, fewer
    generator tables, the small golden cases, the quick certification grid, no Macaulay2 (about 30 s); the full run
    sweeps every architecture of the certification grids and asks Macaulay2 for the kernels it compares (cached
    after the first run; 8 min 14 s here from an empty cache).  Writes ``report.md``, ``report.json`` and
    ``related.json`` (every number) under ``out`` (``None``: nothing is written)."""
    if not isinstance(quick, bool):
        raise InvalidArgumentError(f"quick={quick!r}: must be True or False")
    seed = check_int(seed, "seed", minimum=0)
    report = Report(
        "Related results: invariants of lightning attention, multi-head fibers, decision boundaries, other families",
        summary=(
            "1. The families of equations of Alexandr, Duan and Montúfar (arXiv:2604.15632, code "
            f"{REPOSITORY}), rebuilt from their definitions, checked exactly on the parametrization and compared "
            "with the package's minimal generators per torus multidegree; what their own Macaulay2 code computes "
            "(golden files) against the package, member by member and ideal by ideal. 2. The functional "
            "dimension of "
            f"multi-head attention ({POSTER}) against every multi-head row of the certification grids and a "
            "certified softmax grid. 3. The ED degree of decision boundaries (Alexandr et al., arXiv:2602.06105) "
            "against a general cubic's. 4. Linear convolutional and deep linear networks through the general "
            "landscape API against published counts (Shahverdi, arXiv:2401.16613; Bharadwaj and Hoşten, "
            "arXiv:2301.12651). docs/related.md states the results."
        ),
        meta={"quick": quick, "seed": seed},
    )
    tmp = tempfile.TemporaryDirectory(prefix="ag-attention-related-") if out is None else None
    base = Path(tmp.name if tmp is not None else str(out))
    try:
        data: dict[str, Any] = {"invariants": invariants_section(report, quick, seed)}
        data["macaulay2"] = m2_section(report, quick)
        data["their_code"] = their_code_section(report, quick, seed)
        data["heads"] = heads_section(report, base, quick, seed, 1 if quick and workers is None else workers)
        data["boundaries"] = boundary_checks(report, quick, seed)
        data["models"] = models_section(report, quick, seed)
        report.record_engines(msolve=True, macaulay2=True)
        if tmp is None:
            written(report, lambda: atomic_write(base / "related.json", json.dumps(data, indent=1, default=str) + "\n"))
            report.meta["data"] = "related.json"
            written(report, lambda: report.write(base))
    finally:
        if tmp is not None:
            tmp.cleanup()
    return report
