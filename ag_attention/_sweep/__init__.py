"""Sweeps: the dimension of every architecture of a grid, locally or on a Dask cluster, into Parquet.

Example (not a doctest: it computes 4,400 networks)::

    from ag_attention._sweep import sweep
    r = sweep("sweeps/findings-t2.toml", "results/findings-t2")     # all local cores
    r.summary["total"]["formula_applies"], r.summary["total"]["applies_agrees"]   # (852, 852)
    r = sweep("sweeps/findings-t2.toml", "results/findings-t2", scheduler="tcp://10.0.0.5:8786", resume=True)

* :mod:`~ag_attention._sweep.grid`: grid files (``[[architecture]]`` tables,
  ``[product]`` ranges) and their exact semantics;
* :mod:`~ag_attention._sweep.compute`: one row (the columns of results.parquet);
* :mod:`~ag_attention._sweep.store`: the crash-safe journal, resuming, the compaction;
* :mod:`~ag_attention._sweep.rows`: the stored rows read back (their schema, valid rows, the files);
* :mod:`~ag_attention._sweep.run`: :func:`sweep` on local processes or Dask;
* :mod:`~ag_attention._sweep.local`, :mod:`~ag_attention._sweep.distributed`: its local process
  pool and its Dask client;
* :mod:`~ag_attention._sweep.summary`: counts per variant, summary.md/.json, the plot;
* :mod:`~ag_attention._m2.cluster`: a local Dask cluster of subprocesses (tests, benchmarks);
* :mod:`~ag_attention._sweep.cli`: ``ag-attention sweep`` (``python -m ag_attention._sweep``).

Needs pyarrow (and distributed for ``scheduler=``): ``pip install pyarrow distributed`` (the extra ``sweep``);
without them only grid parsing works, and :func:`sweep` says what to install.
"""

from .cli import add_parser
from .compute import COLUMNS
from .grid import Grid, Spec, load_grid, parse_grid, to_architecture
from .rows import read_metadata, read_rows
from .run import SweepResult, sweep
from .summary import JITTER_SEED, OKABE_ITO, integer_ticks, jitter, jitter_amplitude, summarize

__all__ = [
    "sweep",
    "SweepResult",
    "Grid",
    "Spec",
    "load_grid",
    "parse_grid",
    "read_rows",
    "read_metadata",
    "summarize",
    "COLUMNS",
    "JITTER_SEED",
    "OKABE_ITO",
    "add_parser",
    "integer_ticks",
    "jitter",
    "jitter_amplitude",
    "to_architecture",
]
