"""Corner refinement: move the four corners so that the grid lines lie on tile edges and seams
(``[detect] refine``)."""
from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np


def edge_map(gray: np.ndarray):
    """Gradient (gx, gy) of the smoothed image, scaled so strong edges are about 1."""
    g = cv2.GaussianBlur(gray, (0, 0), 1.2).astype(np.float32)
    gx = cv2.Sobel(g, cv2.CV_32F, 1, 0, ksize=3)
    gy = cv2.Sobel(g, cv2.CV_32F, 0, 1, ksize=3)
    norm = float(_percentile(cv2.magnitude(gx, gy), 99)) + 1e-6
    return gx / norm, gy / norm


def _percentile(values: np.ndarray, q: float):
    """``np.percentile(values, q)``, for a q near 100, at a third of its cost: it depends on
    the values' count and their sorted values next to the q-th place only, so numpy's own
    percentile of a sorted array of the same count that holds the true sorted values from
    a few places below that one on (the smaller ones all raised to the least of those) is
    the same number. Selecting those few is cheap; numpy's own selection, for four places
    at once, is not."""
    flat = values.reshape(-1)
    first = int(np.floor((flat.size - 1) * q / 100.0)) - 2
    if first < 1 or flat.size - first > flat.size // 4:
        return np.percentile(values, q)
    top = np.sort(np.partition(flat, first)[first:])
    same = np.empty_like(flat)
    same[:first] = top[0]
    same[first:] = top
    return np.percentile(same, q, overwrite_input=True)


def _bilinear(img: np.ndarray, pts: np.ndarray) -> np.ndarray:
    """``img`` sampled at (x, y) points with bilinear interpolation (edge pixels repeat)."""
    p = np.ascontiguousarray(pts, dtype=np.float32).reshape(-1, 2)
    n = len(p)
    width = 1024  # OpenCV maps are at most 32767 wide: lay the points out in rows
    pad = (-n) % width
    m = np.concatenate([p, np.zeros((pad, 2), np.float32)]).reshape(-1, width, 2) if n > width \
        else p.reshape(1, -1, 2)
    out = cv2.remap(img, m, None, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    return out.reshape(-1)[:n].astype(np.float64)


def _grid_points(rows: int, cols: int, per_cell: int = 8) -> np.ndarray:
    """Points on every grid line of a rows x cols board, in cell units, grouped per line."""
    lines = []
    for k in range(cols + 1):
        v = (np.arange(rows * per_cell) + 0.5) / per_cell
        lines.append(np.stack([np.full_like(v, k), v], 1))
    for k in range(rows + 1):
        u = (np.arange(cols * per_cell) + 0.5) / per_cell
        lines.append(np.stack([u, np.full_like(u, k)], 1))
    return lines


@dataclass(frozen=True)
class GridLines:
    """What scoring a grid's lines needs, made once from the first guess: the points on every
    grid line (in cells), which line each is on, each point's weight (tile beside it), each
    line's total weight, the lines that count, the image direction across each line, the
    board's corners in cells and the size of a cell in image px."""

    pts: np.ndarray
    line_id: np.ndarray
    weights: np.ndarray
    wsum: np.ndarray
    keep: np.ndarray
    normal: np.ndarray
    src: np.ndarray
    cell_px: float


# a grid line counts only with tile beside this share of its points (per cell)
MIN_LINE = 0.5
# the descent's first step, share of a cell ...
FIRST_STEP = 0.08
# ... halved until under this
MIN_STEP = 0.01


def grid_lines(quad: np.ndarray, rows: int, cols: int, tile_prob: np.ndarray | None = None, prob_scale: float = 1.0) -> GridLines:
    """:class:`GridLines` of the rows x cols grid with corners ``quad`` (see
    :func:`refine_corners`)."""
    per_cell = 8
    lines = _grid_points(rows, cols, per_cell)
    pts = np.concatenate(lines).astype(np.float32)
    line_id = np.concatenate([np.full(len(l), i) for i, l in enumerate(lines)])
    n_lines = len(lines)
    src = np.float32([[0, 0], [cols, 0], [cols, rows], [0, rows]])
    side = float(np.mean(np.linalg.norm(np.roll(quad, -1, 0) - quad, axis=1)))
    cell_px = side / max(1.0, (rows + cols) / 2)
    # the first guess's homography, and which points lie on vertical grid lines (the first
    # cols + 1 lines)
    H0 = cv2.getPerspectiveTransform(src, quad.astype(np.float32))
    vert = np.zeros(len(pts), bool)
    vert[:sum(len(l) for l in lines[:cols + 1])] = True
    weights = np.ones(len(pts), np.float64)
    if tile_prob is not None:
        off = np.where(vert[:, None], [[0.3, 0.0]], [[0.0, 0.3]]).astype(np.float32)
        sides = []
        for sgn in (1, -1):
            q = cv2.perspectiveTransform((pts + sgn * off).reshape(-1, 1, 2), H0).reshape(-1, 2)
            sides.append(_bilinear(tile_prob, q * prob_scale))
        weights = np.clip(np.maximum(*sides), 0.0, 1.0).astype(np.float64) + 1e-3
    wsum = np.bincount(line_id, weights, n_lines)
    keep = wsum > MIN_LINE * per_cell
    # the image direction across each grid line (from the first guess): only edges running
    # along the line count
    du = np.where(vert[:, None], [[0.05, 0.0]], [[0.0, 0.05]]).astype(np.float32)
    a = cv2.perspectiveTransform((pts - du).reshape(-1, 1, 2), H0).reshape(-1, 2)
    b = cv2.perspectiveTransform((pts + du).reshape(-1, 1, 2), H0).reshape(-1, 2)
    normal = b - a
    normal /= np.linalg.norm(normal, axis=1, keepdims=True) + 1e-9
    return GridLines(pts, line_id, weights, wsum, keep, normal, src, cell_px)


def refine_corners(edges, quad: np.ndarray, rows: int, cols: int, det: dict,
                   tile_prob: np.ndarray | None = None, prob_scale: float = 1.0) -> np.ndarray:
    """Move the four corners so that the rows x cols grid lines lie on tile edges and seams.

    Coordinate descent on the 8 corner coordinates, maximising the edge strength along all
    grid lines (each line weighted equally; along a line, points next to tiles count, so
    empty table does not), steps from ``FIRST_STEP`` of a cell down.
    """
    g = grid_lines(quad, rows, cols, tile_prob, prob_scale)
    pts, line_id, weights, wsum, keep, normal, src = (g.pts, g.line_id, g.weights, g.wsum,
                                                      g.keep, g.normal, g.src)
    n_lines = len(wsum)
    gx, gy = edges

    # the score runs thousands of times a photo: what it needs is made once here (the same
    # values: the normal's float32 parts are promoted to float64 as the product did)
    grid_pts = pts.reshape(-1, 1, 2)
    nx, ny = normal[:, 0].astype(np.float64), normal[:, 1].astype(np.float64)
    kept = np.flatnonzero(keep)
    # the points in one row of a map when they fit (:func:`_bilinear`'s layout)
    one_row = len(pts) <= 1024

    def sample(img, img_pts):
        if one_row:
            return cv2.remap(img, img_pts.reshape(1, -1, 2), None, cv2.INTER_LINEAR,
                             borderMode=cv2.BORDER_REPLICATE).reshape(-1)
        return _bilinear(img, img_pts)

    seen: dict = {}     # corners already scored (a step back, a move unchanged since)

    def score(q):
        key = q.tobytes()
        if key not in seen:
            seen[key] = _score(q)
        return seen[key]

    def _score(q):
        if not len(kept):
            return 0.0
        H = cv2.getPerspectiveTransform(src, q.astype(np.float32))
        img_pts = cv2.perspectiveTransform(grid_pts, H)
        vals = np.abs(sample(gx, img_pts) * nx + sample(gy, img_pts) * ny) * weights
        per_line = np.bincount(line_id, vals, n_lines) / wsum
        return float(per_line[kept].sum() / len(kept))

    return descend(score, quad, det, g.cell_px)


def descend(score, quad: np.ndarray, det: dict, cell_px: float) -> np.ndarray:
    """Coordinate descent on the 8 corner coordinates of ``quad``, maximising ``score(q)``:
    steps of ``FIRST_STEP`` of a cell (``cell_px``), halved when no move helps, down to
    ``MIN_STEP``; no corner moves more than ``[detect] refine_max_move``."""
    q = quad.astype(np.float64).copy()
    best = score(q)
    max_move = det["refine_max_move"] * cell_px
    step = FIRST_STEP * cell_px
    min_step = MIN_STEP * cell_px
    while step >= min_step:
        improved = False
        for i in range(4):
            for j in range(2):
                for sgn in (1, -1):
                    trial = q.copy()
                    trial[i, j] += sgn * step
                    if abs(trial[i, j] - quad[i, j]) > max_move:
                        continue
                    sc = score(trial)
                    if sc > best:
                        q, best, improved = trial, sc, True
        if not improved:
            step /= 2
    return q.astype(np.float32)


def refine_photo_outline(image: np.ndarray, corners, rows: int, cols: int, det: dict) -> np.ndarray:
    """:func:`refine_corners` for an outline in the photo's own pixels, on the photo shrunk to
    ``[detect] refine_long_side`` as the detector refines: for a grid whose count changed
    after the detector (a 5x6 recounted 5x5 on the same outline), whose lines the detector
    put on seams for the other count. Every point of each line counts (no tile map)."""
    from vision.find.tilemap import downscale

    small, s = downscale(image, int(det["refine_long_side"]))
    gray = cv2.cvtColor(small, cv2.COLOR_BGR2GRAY)
    quad = np.asarray(corners, np.float64) * s
    return (refine_corners(edge_map(gray), quad, rows, cols, det) / s).astype(np.float32)

