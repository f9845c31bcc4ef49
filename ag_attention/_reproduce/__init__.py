"""Reproductions of the paper's results, each returning a :class:`~.report.Report`."""
