"""Frame rule: rows and columns of table at the edge of a read kingdom are not the kingdom.

A kingdom's outline hugs its tiles, so a row or column at the edge of the read rectangle in which
every square reads as table (``"empty"``) is table the detector took in: a 5x5 kingdom framed with
two rows of table reads as 7x5 and is put in a 7x7 frame. ``read_trimmed`` drops such rows and
columns and reads the smaller rectangle again, so the frame (5x5 or 7x7) is chosen from the
squares that are the kingdom. ``[reader] drop_table_edges`` turns it off.
"""
from __future__ import annotations

import numpy as np

TABLE = "empty"


def table_edges(terrains) -> tuple[int, int, int, int]:
    """How many rows (top, bottom) and columns (left, right) at the edge of a read grid (rows of
    terrain names) read as table in every square. A grid all of table keeps everything (no
    kingdom to frame: the caller refuses it); otherwise at least one row and column is left."""
    grid = np.array([[t == TABLE for t in row] for row in terrains], bool)
    if grid.size == 0 or grid.all():
        return 0, 0, 0, 0
    rows = np.flatnonzero(~grid.all(axis=1))
    cols = np.flatnonzero(~grid.all(axis=0))
    return (int(rows[0]), int(grid.shape[0] - 1 - rows[-1]),
            int(cols[0]), int(grid.shape[1] - 1 - cols[-1]))


def sub_corners(corners, rows: int, cols: int, top: int, left: int, new_rows: int,
                new_cols: int) -> np.ndarray:
    """The image corners (tl, tr, br, bl) of the ``new_rows x new_cols`` squares starting at
    square (``top``, ``left``) of the ``rows x cols`` rectangle with these corners."""
    import cv2

    from vision.geometry import board_homography

    inv = np.linalg.inv(board_homography(corners, rows, cols, 1))
    pts = np.array([[[left, top], [left + new_cols, top], [left + new_cols, top + new_rows],
                     [left, top + new_rows]]], np.float64)
    return cv2.perspectiveTransform(pts, inv)[0].astype(np.float32)


def read_trimmed(reader, image, found, size: int | None = None):
    """``reader.read_board(image, found, size)``; when rows or columns at the edge of what it
    read are all table, the rectangle without them is read again (its frame chosen anew)."""
    from vision.reader import _Found, _frame

    reading = reader.read_board(image, found, size)
    if not reader.cfg.get("reader", {}).get("drop_table_edges", True):
        return reading
    rows, cols = reading.rows, reading.cols
    top, bottom, left, right = table_edges(
        [[reading.cells[r][c]["terrain"] for c in range(cols)] for r in range(rows)])
    if not (top or bottom or left or right):
        return reading
    nr, nc = rows - top - bottom, cols - left - right
    offsets = None if found.offsets is None else found.offsets[top:top + nr, left:left + nc]
    cut = _Found(sub_corners(found.corners, rows, cols, top, left, nr, nc), nr, nc,
                 _frame(nr, nc, None), offsets,
                 list(found.warnings) + [f"{rows}x{cols} squares found; the {top + bottom} row(s) "
                                         f"and {left + right} column(s) of table at its edge "
                                         f"dropped: read as {nr}x{nc}"])
    return reader.read_board(image, cut, size)
