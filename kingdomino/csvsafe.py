"""CSV cells that are safe to open in a spreadsheet: one helper used by every CSV the project writes.

A spreadsheet runs a cell that starts with ``=``, ``+``, ``-`` or ``@`` (and, in some, a tab or a
carriage return) as a formula, so a player named ``=HYPERLINK(...)`` or a photo named
``+SUM(1,1).jpg`` would run in the organiser's spreadsheet. Such text cells get a leading single
quote, which spreadsheets show as text. Numbers the project writes itself (ints and floats) stay
numbers, negative ones included.
"""
from __future__ import annotations

import csv

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value):
    """``value`` as a cell a spreadsheet shows as text: text starting like a formula is quoted."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


class _SafeWriter:
    def __init__(self, fh, **kwargs):
        self._w = csv.writer(fh, **kwargs)

    def writerow(self, row):
        return self._w.writerow([safe_cell(v) for v in row])

    def writerows(self, rows):
        for row in rows:
            self.writerow(row)


def writer(fh, **kwargs) -> _SafeWriter:
    """Like ``csv.writer``, but every cell goes through ``safe_cell``."""
    return _SafeWriter(fh, **kwargs)
