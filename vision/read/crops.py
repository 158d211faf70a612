"""Square crops: the one function that cuts cells out of a rectified board.

Training and inference both go photo -> ``geometry.warp_board`` (corners, ``cell`` px per
square, a ``board_margin`` strip of surroundings) -> :func:`cell_crops`. Each crop is the cell
plus ``crop_margin`` pixels on every side, so crowns printed on a tile's edge, or a tile shifted
against the grid, are still seen. Pixels outside the board image are edge-replicated.

One read cuts and measures the same window more than once (``vision.find.frame`` judges the
window it chooses, ``Reader.framed`` and ``vision.read.glare`` read it): inside :func:`read_once`
for a photo, :func:`remembered` makes each such thing once (the rectified board of
:func:`rectify`, the ring features of ``vision.read.holes``).
"""
from __future__ import annotations

import contextvars
from contextlib import contextmanager

import cv2
import numpy as np

# (photo, {key: what was made}) while a read of that photo runs (read_once)
_READ: contextvars.ContextVar = contextvars.ContextVar("read_once", default=None)


@contextmanager
def read_once(image: np.ndarray):
    """Within it (one read of ``image``, left unchanged meanwhile), :func:`remembered` makes
    each thing of ``image`` once; forgotten on leaving. Per thread and task (a context
    variable); another photo's are made as ever. Nested for the same photo (a read's search),
    the outer one's are kept."""
    memo = _READ.get()
    if memo is not None and memo[0] is image:     # within a read of it already
        yield
        return
    token = _READ.set((image, {}))
    try:
        yield
    finally:
        _READ.reset(token)


def remembered(image: np.ndarray, key: tuple, make):
    """``make()``, a tuple of arrays that depend only on ``image`` and ``key``; within
    :func:`read_once` for ``image``, made once for a key and read-only (the same arrays
    again)."""
    memo = _READ.get()
    if memo is None or memo[0] is not image:
        return make()
    if key not in memo[1]:
        made = make()
        for a in made:
            a.setflags(write=False)
        memo[1][key] = made
    return memo[1][key]


def crop_size(cell: int, crop_margin: int) -> int:
    """Side of one crop in pixels."""
    return int(cell) + 2 * int(crop_margin)


def cell_crops(board: np.ndarray, rows: int, cols: int, cell: int, *, board_margin: int = 0,
               crop_margin: int = 0) -> np.ndarray:
    """Cut every cell of a rectified board, row by row.

    ``board`` is ``rows*cell + 2*board_margin`` pixels high (as ``warp_board`` makes it).
    Returns a ``(rows*cols, S, S, C)`` array with ``S = cell + 2*crop_margin``.
    """
    if rows < 1 or cols < 1 or cell < 1 or crop_margin < 0 or board_margin < 0:
        raise ValueError(f"bad crop geometry: rows={rows} cols={cols} cell={cell} "
                         f"crop_margin={crop_margin} board_margin={board_margin}")
    board = np.asarray(board)
    need_h, need_w = rows * cell + 2 * board_margin, cols * cell + 2 * board_margin
    if board.shape[0] < need_h or board.shape[1] < need_w:
        raise ValueError(f"board image is {board.shape[1]}x{board.shape[0]} px, smaller than "
                         f"{rows}x{cols} cells of {cell} px plus a {board_margin} px margin")
    size = crop_size(cell, crop_margin)
    pad = crop_margin + 1
    padded = cv2.copyMakeBorder(board, pad, pad, pad, pad, cv2.BORDER_REPLICATE)
    if padded.ndim == 2:
        padded = padded[:, :, None]
    out = np.empty((rows * cols, size, size, padded.shape[2]), dtype=board.dtype)
    for r in range(rows):
        for c in range(cols):
            x0 = board_margin + c * cell - crop_margin + pad
            y0 = board_margin + r * cell - crop_margin + pad
            out[r * cols + c] = padded[y0:y0 + size, x0:x0 + size]
    if board.ndim == 2:
        out = out[..., 0]
    return out


def rectify(image: np.ndarray, corners, rows: int, cols: int, cell: int,
            board_margin: int) -> tuple[np.ndarray, np.ndarray]:
    """Warp the photo's board (corners tl, tr, br, bl) to ``cell`` px squares plus a margin
    (``(board, H)``, ``vision.geometry.warp_board``; once a read, :func:`remembered`)."""
    from vision.geometry import warp_board

    # the warp starts from the corners as float32 (vision.geometry.as_corners)
    key = ("board", np.asarray(corners, np.float32).tobytes(), int(rows), int(cols), int(cell),
           int(board_margin))
    return remembered(image, key, lambda: warp_board(image, corners, rows, cols, cell,
                                                     board_margin))


def image_corners(image: np.ndarray) -> np.ndarray:
    """Corners of the whole image, for photos that already are a rectified board (AAU)."""
    h, w = image.shape[:2]
    return np.array([[0, 0], [w, 0], [w, h], [0, h]], dtype=np.float32)


def photo_crops(image: np.ndarray, corners, rows: int, cols: int, cell: int, *,
                board_margin: int, crop_margin: int) -> np.ndarray:
    """Photo + corners -> crops of every cell (``warp_board`` then :func:`cell_crops`)."""
    board, _ = rectify(image, corners, rows, cols, cell, board_margin)
    return cell_crops(board, rows, cols, cell, board_margin=board_margin,
                      crop_margin=crop_margin)
