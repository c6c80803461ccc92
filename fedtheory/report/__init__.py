"""Reports of ledger runs: the text table, ``claims.json``/``claims.md``, and the comparison of two runs.

A library module (not part of the command line), so that ``fedtheory verify``, :mod:`fedtheory.extend` and the
pytest plugin write the same reports.
"""
from .compare import COMPARE_ABSOLUTE_FLOOR, COMPARE_REPORT_RTOL, compare_runs
from .files import records_of, write_records, write_reports
from .table import TABLE_HEADER, fmt, render_table, render_worst_case, table_rows, terminal_width

__all__ = ["COMPARE_ABSOLUTE_FLOOR", "COMPARE_REPORT_RTOL", "compare_runs", "records_of", "write_records",
           "write_reports", "TABLE_HEADER", "fmt", "render_table", "render_worst_case", "table_rows", "terminal_width"]
