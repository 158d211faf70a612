"""Squares washed out by glare, read again with the glare taken off.

A lamp or a window mirrored in glossy tiles adds white light: where the reflection lies, each
pixel is the tile's colour mixed with white, ``seen = tile * (1 - a) + light * a``, ``a`` the
glare's share (0 none, 1 a white patch). A lake under glare turns pale blue, a field cream,
and the square classifier reads such squares as table or is unsure.

The mix can be undone where ``a`` is known, and tile art tells it: nearly every part of a tile
holds some dark pixel in at least one colour channel (trees, water's deep blue, a field's low
blue channel, outlines), so the darkest channel value near a pixel is close to 0 without glare
and rises with it (``a * light``). This is the dark-channel reasoning used to take haze out
of photos, with the glare's white as the haze. The field is the per-pixel minimum over the
three channels, eroded over ``[deglare] window`` of a square (so one pale pixel is not glare)
and smoothed (glare varies slowly); ``a = strength * dark / light``.

Only squares whose mean glare share is at least ``[deglare] min_glare`` and that were not read
surely as a tile (``keep_sure``) are read again, from the same rectified board with the glare
taken off (``tile = (seen - light * a) / (1 - a)``, with ``1 - a`` kept at least
``min_transmission``); their network outputs replace those read as seen. Squares without
glare, the most of every photo, are read exactly as before.

A bare square of a pale table looks like glare too (its darkest channel is high); taken off,
it stays a flat, even square and still reads as table (the table-likeness of
``vision.read.holes`` is measured on the photo as seen, unchanged).
"""
from __future__ import annotations

import cv2
import numpy as np

from vision.read.labels import TERRAINS, terrain_probabilities
from vision.read.crops import cell_crops, crop_size, rectify


def _check(cfg: dict) -> None:
    if not 0.0 < float(cfg["window"]) <= 2.0:
        raise ValueError(f"[deglare] window must be in (0, 2] squares, got {cfg['window']}")
    if not 0.0 < float(cfg["light"]) <= 255.0:
        raise ValueError(f"[deglare] light must be in (0, 255], got {cfg['light']}")
    if not 0.0 < float(cfg["strength"]) <= 1.0:
        raise ValueError(f"[deglare] strength must be in (0, 1], got {cfg['strength']}")
    if not 0.0 < float(cfg["min_transmission"]) <= 1.0:
        raise ValueError("[deglare] min_transmission must be in (0, 1], "
                         f"got {cfg['min_transmission']}")


def glare_field(board: np.ndarray, cell: int, cfg: dict) -> np.ndarray:
    """Per pixel of a rectified BGR board, the estimated share of glare ``a`` in [0, 1)."""
    _check(cfg)
    if board.ndim != 3 or board.shape[2] != 3:
        raise ValueError("glare_field needs a colour (BGR) board")
    win = max(3, int(round(float(cfg["window"]) * cell)) | 1)
    # the darkest of B, G, R, plane by plane (the same values as numpy's min over the
    # channel axis, which takes about 15 times as long on a board)
    dark = np.minimum(np.minimum(board[..., 0], board[..., 1]),
                      board[..., 2]).astype(np.float32)
    dark = cv2.erode(dark, cv2.getStructuringElement(cv2.MORPH_RECT, (win, win)))
    dark = cv2.GaussianBlur(dark, (0, 0), win / 2.0)
    a = float(cfg["strength"]) * dark / float(cfg["light"])
    return np.clip(a, 0.0, 1.0 - float(cfg["min_transmission"]))


def remove_glare(board: np.ndarray, field: np.ndarray, cfg: dict) -> np.ndarray:
    """The board with the glare share ``field`` taken off (uint8 BGR, same shape)."""
    light = float(cfg["light"])
    keep = np.maximum(1.0 - field, float(cfg["min_transmission"]))[..., None]
    out = (board.astype(np.float32) - light * field[..., None]) / keep
    return np.clip(out, 0, 255).astype(np.uint8)


def square_glare(field: np.ndarray, rows: int, cols: int, cell: int, board_margin: int) -> np.ndarray:
    """Mean glare share over each square's central half, ``(rows, cols)``."""
    out = np.zeros((rows, cols), np.float64)
    q = cell // 4
    for r in range(rows):
        for c in range(cols):
            y, x = board_margin + r * cell, board_margin + c * cell
            out[r, c] = float(field[y + q:y + cell - q, x + q:x + cell - q].mean())
    return out


def board_glare(board: np.ndarray, rows: int, cols: int, cfg: dict) -> np.ndarray:
    """Each square's mean glare share (:func:`square_glare`), ``(rows, cols)``, on a board
    rectified with the ``[classify]`` cell and margin (``cfg``: the whole config)."""
    cell, bm = int(cfg["classify"]["cell"]), int(cfg["classify"]["board_margin"])
    return square_glare(glare_field(board, cell, cfg["deglare"]), rows, cols, cell, bm)


def photo_glare(image: np.ndarray, corners, rows: int, cols: int, cfg: dict) -> np.ndarray:
    """:func:`board_glare` of the kingdom inside ``corners`` of a BGR photo."""
    ccfg = cfg["classify"]
    board, _ = rectify(image, corners, rows, cols, int(ccfg["cell"]), int(ccfg["board_margin"]))
    return board_glare(board, rows, cols, cfg)


def washed_crops(board: np.ndarray, rows: int, cols: int,
                 cfg: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """The squares of a rectified board (``[classify]`` cell and margins) under glare, as flat
    indices (row by row), and their crops cut from the board with the glare taken off (empty
    when there are none or ``[deglare] enabled`` is off); third, every square's glare share
    (:func:`square_glare`, (rows, cols); None when off)."""
    dcfg, ccfg = cfg["deglare"], cfg["classify"]
    cell, bm, cm = int(ccfg["cell"]), int(ccfg["board_margin"]), int(ccfg["crop_margin"])
    side = crop_size(cell, cm)
    none = np.zeros(0, np.int64), np.zeros((0, side, side, 3), np.uint8)
    if not dcfg["enabled"]:
        return (*none, None)
    field = glare_field(board, cell, dcfg)
    shares = square_glare(field, rows, cols, cell, bm)
    washed = np.argwhere(shares >= float(dcfg["min_glare"]))
    if len(washed) == 0:
        return (*none, shares)
    crops = cell_crops(remove_glare(board, field, dcfg), rows, cols, cell, board_margin=bm,
                       crop_margin=cm)
    idx = washed[:, 0] * cols + washed[:, 1]
    return idx, crops[idx], shares


def with_washed(logits: np.ndarray, washed, classifier,
                cfg: dict) -> tuple[np.ndarray, np.ndarray]:
    """Network outputs (row by row) with the squares of ``washed`` (from :func:`washed_crops`)
    replaced by the network's reading of their glare-free crops, except those already read
    surely as a tile (terrain and crowns at ``[deglare] keep_sure`` or more, calibrated, and
    not table): glare that left a tile readable is no reason to read it again. Returns the
    outputs and the flat indices of the squares read again."""
    idx, crops = washed[0], washed[1]
    out = np.array(logits, copy=True)
    again = np.zeros(len(idx), bool)
    if len(idx):
        seen = out[idx]
        sure = classifier.sure(seen, float(cfg["deglare"]["keep_sure"]))
        sure &= seen[:, :len(TERRAINS)].argmax(axis=1) != TERRAINS.index("empty")
        again = ~sure
        if again.any():
            out[idx[again]] = classifier.logits(crops[again])
    return out, np.asarray(idx)[again]


def reread(image: np.ndarray, corners, rows: int, cols: int, logits: np.ndarray, classifier,
           cfg: dict) -> tuple[np.ndarray, list[tuple[int, int]], np.ndarray | None]:
    """The network outputs with the squares under glare read again, glare taken off.

    ``logits``: the squares as read (``(rows * cols, 12)``, row by row); ``cfg``: the whole
    config (``[classify]`` for the crops, ``[deglare]`` for the glare). Returns the new
    outputs, the squares read again, ``(row, col)``, and every square's glare share
    (``(rows, cols)``, the review's glare flag; None when ``[deglare] enabled`` is off)."""
    logits = np.asarray(logits)
    if not cfg["deglare"]["enabled"] or len(logits) != rows * cols:
        return logits, [], None
    ccfg = cfg["classify"]
    board, _ = rectify(image, corners, rows, cols, int(ccfg["cell"]), int(ccfg["board_margin"]))
    washed = washed_crops(board, rows, cols, cfg)
    out, again = with_washed(logits, washed, classifier, cfg)
    return out, [(int(k) // cols, int(k) % cols) for k in again], washed[2]


def reread_odds(reread_result, classifier, terrain: str) -> float:
    """The likeliest square of ``terrain`` (calibrated probability) among the squares
    :func:`reread` read again (its ``(outputs, squares)``); 0 when it read none. The reader
    judges a window's castle so: a castle under a lamp's reflection reads as table."""
    raw, again = reread_result[0], reread_result[1]
    if not again:
        return 0.0
    probs = terrain_probabilities(raw, classifier.t_terrain)
    return float(probs[:, TERRAINS.index(terrain)].max())
