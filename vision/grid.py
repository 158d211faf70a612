"""Per-square position refinement on a rectified board.

Hand-placed dominoes sit up to ~20% of a square off a perfect grid. For every square we look
for the shift (dx, dy) that puts the square's two vertical (two horizontal) borders on the
strongest tile edges nearby; the result is a ``rows x cols x 2`` array of centre corrections
in rectified pixels (``[..., 0]`` = dx, ``[..., 1]`` = dy). Thresholds: ``[grid]`` in
``config.toml``.
"""
from __future__ import annotations

import cv2
import numpy as np

from . import config as _config


def _section(cfg) -> dict:
    if cfg is None:
        cfg = _config.load()
    return cfg["grid"]


def _best_shift(profile: np.ndarray, lo: int, hi: int, max_shift: int, gain: float,
                floor: float = 0.0) -> int:
    """Shift s (|s| <= max_shift) maximising the weaker of profile[lo + s] and profile[hi + s]
    (both borders on an edge); 0 unless the best is clearly (``gain`` times) stronger than
    no shift."""
    n = len(profile)
    scores = {}
    for s in range(-max_shift, max_shift + 1):
        a, b = lo + s, hi + s
        if a < 0 or b >= n:
            continue
        scores[s] = min(profile[a], profile[b])  # both borders must sit on an edge
    if not scores or 0 not in scores:
        return 0
    s_best = max(scores, key=scores.get)
    if scores[s_best] <= gain * scores[0] + 1e-6 or scores[s_best] < floor:
        return 0
    return int(s_best)


def refine(board_image: np.ndarray, rows: int, cols: int, cell: int, cfg=None) -> np.ndarray:
    """Centre corrections (rows x cols x 2, float32, rectified px) for each square.

    ``board_image`` is the rectified board (``rows*cell`` x ``cols*cell``, BGR or grey).
    """
    g = _section(cfg)
    offsets = np.zeros((rows, cols, 2), np.float32)
    if not g["enabled"] or board_image is None or board_image.size == 0 or cell < 8:
        return offsets
    gray = board_image if board_image.ndim == 2 else cv2.cvtColor(board_image, cv2.COLOR_BGR2GRAY)
    gray = cv2.GaussianBlur(gray.astype(np.float32), (0, 0), 1.0)
    gx = np.abs(cv2.Sobel(gray, cv2.CV_32F, 1, 0, ksize=3))
    gy = np.abs(cv2.Sobel(gray, cv2.CV_32F, 0, 1, ksize=3))
    max_shift = int(round(g["max_shift"] * cell))
    inner = g["inner"]  # part of the square's length the edge profile is averaged over
    gain = g["min_gain"]
    H, W = gray.shape
    pad = int(round((1 - inner) / 2 * cell))
    k = max(3, int(round(g["seam_width"] * cell)) | 1)
    box = np.ones(k, np.float32) / k
    # a border counts as found only if its edge is as strong as a typical seam of this board
    q = g["seam_percentile"]
    rel = g["min_edge"]
    prof_x = np.convolve(gx.mean(axis=0), box, mode="same")
    prof_y = np.convolve(gy.mean(axis=1), box, mode="same")
    floor_x = rel * float(np.percentile(prof_x, q))
    floor_y = rel * float(np.percentile(prof_y, q))
    for r in range(rows):
        for c in range(cols):
            y0, y1 = r * cell + pad, min(H, (r + 1) * cell - pad)
            x0, x1 = c * cell + pad, min(W, (c + 1) * cell - pad)
            if y1 <= y0 or x1 <= x0:
                continue
            px = gx[y0:y1].mean(axis=0)
            py = gy[:, x0:x1].mean(axis=1)
            # a seam is a dark line with an edge on each side: smooth over its width so
            # the profile peaks at the seam's centre
            px = np.convolve(px, box, mode="same")
            py = np.convolve(py, box, mode="same")
            dx = _best_shift(px, c * cell, min(W - 1, (c + 1) * cell), max_shift, gain, floor_x)
            dy = _best_shift(py, r * cell, min(H - 1, (r + 1) * cell), max_shift, gain, floor_y)
            offsets[r, c] = (dx, dy)
    return offsets
