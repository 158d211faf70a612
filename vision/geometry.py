"""Board geometry shared by every stage: the one warp that makes training and inference boards.

Corners are always ordered top-left, top-right, bottom-right, bottom-left in image pixels
(x, y). A rectified board is ``rows * cell`` by ``cols * cell`` pixels, square cells.
"""
from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np


def as_corners(corners) -> np.ndarray:
    """Validate and return corners as a float32 (4, 2) array (tl, tr, br, bl)."""
    pts = np.asarray(corners, dtype=np.float32)
    if pts.shape != (4, 2):
        raise ValueError(f"corners must be 4 (x, y) points, got an array of shape {pts.shape}")
    if not np.all(np.isfinite(pts)):
        raise ValueError("corners must be finite numbers")
    return pts


def board_homography(corners, rows: int, cols: int, cell: int) -> np.ndarray:
    """3x3 homography mapping image pixels to the rectified board of ``rows x cols`` cells."""
    if rows < 1 or cols < 1 or cell < 1:
        raise ValueError(f"rows, cols and cell must be positive, got {rows}, {cols}, {cell}")
    src = as_corners(corners)
    w, h = cols * cell, rows * cell
    dst = np.array([[0, 0], [w, 0], [w, h], [0, h]], dtype=np.float32)
    return cv2.getPerspectiveTransform(src, dst)


def warp_board(image: np.ndarray, corners, rows: int, cols: int, cell: int,
               margin: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Rectify the board whose outline is ``corners``.

    Returns ``(board, H)``: the board image (``rows*cell + 2*margin`` high) and the homography
    from image pixels to board pixels (margin included). ``margin`` keeps a strip of the
    surroundings so shifted tiles at the border are not cut off.
    """
    H = board_homography(corners, rows, cols, cell)
    shift = np.array([[1, 0, margin], [0, 1, margin], [0, 0, 1]], dtype=np.float64)
    H = shift @ H
    size = (cols * cell + 2 * margin, rows * cell + 2 * margin)
    board = cv2.warpPerspective(image, H, size, flags=cv2.INTER_AREA,
                                borderMode=cv2.BORDER_REPLICATE)
    return board, H


@dataclass(frozen=True)
class Window:
    """A rectangle of squares in a grid: first row, first column, rows, columns."""

    row: int
    col: int
    rows: int
    cols: int

    def inside(self, other: "Window") -> bool:
        """Whether every square of this window is one of ``other``'s."""
        return (other.row <= self.row and self.row + self.rows <= other.row + other.rows
                and other.col <= self.col and self.col + self.cols <= other.col + other.cols)

    def squares(self, rows: int, cols: int) -> np.ndarray:
        """The indices, row by row, of this window's squares among a ``rows x cols`` grid's
        (numbered row by row): to pick the window's readings out of the grid's."""
        return np.arange(rows * cols).reshape(rows, cols)[
            self.row:self.row + self.rows, self.col:self.col + self.cols].reshape(-1)


def ring_corners(corners, rows: int, cols: int, ring: float) -> np.ndarray:
    """Corners (tl, tr, br, bl, image px) of the grid ``ring`` squares (a fraction too) larger
    on every side than the ``rows x cols`` grid with these corners, by the same homography."""
    return window_corners(corners, rows, cols, Window(-ring, -ring, rows + 2 * ring,
                                                       cols + 2 * ring))


def window_corners(corners, rows: int, cols: int, w: Window) -> np.ndarray:
    """Image corners of window ``w`` given in squares of the ``rows x cols`` grid with these
    corners (``w.row``, ``w.col`` may be negative: squares beyond the grid)."""
    H_inv = np.linalg.inv(board_homography(corners, rows, cols, 1))
    pts = np.array([[[w.col, w.row], [w.col + w.cols, w.row],
                     [w.col + w.cols, w.row + w.rows], [w.col, w.row + w.rows]]], np.float64)
    return cv2.perspectiveTransform(pts, H_inv)[0].astype(np.float32)


def centres_off_photo(shape, corners, rows: int, cols: int) -> np.ndarray:
    """rows x cols booleans: the square's centre lies outside the photo of this shape."""
    H_inv = np.linalg.inv(board_homography(corners, rows, cols, 1))
    cr, cc = np.mgrid[0:rows, 0:cols]
    centres = np.stack([cc + 0.5, cr + 0.5], -1).reshape(1, -1, 2).astype(np.float64)
    x, y = cv2.perspectiveTransform(centres, H_inv)[0].T
    h, w = shape[:2]
    return ((x < 0) | (y < 0) | (x > w) | (y > h)).reshape(rows, cols)


def corner_error(found: np.ndarray, truth: np.ndarray, any_first: bool = False) -> float:
    """Largest corner distance as a fraction of the labelled board's mean side length.
    ``any_first``: the smallest such error over the four choices of ``found``'s first corner
    (a kingdom has no "up": a board at 45 degrees has two top sides)."""
    side = np.mean(np.linalg.norm(np.roll(truth, -1, axis=0) - truth, axis=1))
    starts = range(4) if any_first else (0,)
    return float(min(np.max(np.linalg.norm(np.roll(found, k, axis=0) - truth, axis=1))
                     for k in starts) / side)


def same_grid(a, rows_a: int, cols_a: int, b, rows_b: int, cols_b: int, squares: float) -> bool:
    """Two grids (corners, rows, cols) are one: the same count, and corners within
    ``squares`` of a square of each other (:func:`corner_error` is in sides)."""
    return (rows_a, cols_a) == (rows_b, cols_b) and corner_error(
        np.asarray(a, np.float64), np.asarray(b, np.float64)) <= squares / max(rows_a, cols_a)


def overlaps(corners, other) -> bool:
    """Whether two outlines (4 x 2 px) lie over each other: either one's centre lies inside
    the other."""
    a = np.asarray(corners, np.float32).reshape(4, 2)
    b = np.asarray(other, np.float32).reshape(4, 2)
    return any(cv2.pointPolygonTest(p, (float(q.mean(0)[0]), float(q.mean(0)[1])), False) >= 0
               for p, q in ((a, b), (b, a)))
