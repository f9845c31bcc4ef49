"""Reproductions of the paper's results, each returning a :class:`~.report.Report`.

:data:`.registry.REPRODUCTIONS` is the table of them that ``ag-attention reproduce WHAT`` runs (a new reproduction:
its module and one entry there).
"""

from . import registry  # a namespace other rooms use
from .registry import M2_TIMEOUT, Reproduction, Request
from .report import output_directory, pyplot, rescue

__all__ = [
    "registry",
    "M2_TIMEOUT",
    "Reproduction",
    "Request",
    "output_directory",
    "pyplot",
    "rescue",
]
