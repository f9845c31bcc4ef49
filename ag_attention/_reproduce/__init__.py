"""Reproductions of the paper's results, each returning a :class:`~.report.Report`.

:data:`.registry.REPRODUCTIONS` is the table of them that ``ag-attention reproduce WHAT`` runs (a new reproduction:
its module and one entry there).
"""
