"""Grid counting: rows and columns of a rectified kingdom from the periodicity of the tile
edges (seams), constrained by the board's aspect ratio."""
from __future__ import annotations

import cv2
import numpy as np

from vision.geometry import warp_board

# px: an outline is rectified to this square to count its rows and columns
COUNT_SIDE = 280
# a boundary scores the log of its edge strength over this x the profile's median
SEAM_BIAS = 1.2
# ... capped at this either way
SEAM_CAP = 1.5
# a count whose median boundary is weaker than this x the profile's median is no count ...
SEAM_VALID = 1.5
# ... and scores minus this
SEAM_INVALID = 1.0
# penalty per unit |log((cols / rows) / aspect)|, the aspect from a phone-like focal length
ASPECT_WEIGHT = 4.0
# px: an outline is rectified to this square to measure its seams for a recount's veto
SEAM_SIDE = 600
# the phone-like focal length guess times these: the aspect they give must agree with the
# guess's for it to be used (focal_aspect's spread)
FOCAL_GUESSES = (0.5, 2.0)

def focal_aspect(quad: np.ndarray, shape, spread: float = 0.0) -> float | None:
    """Width/height of the world rectangle seen as ``quad`` (tl,tr,br,bl), with a phone-like
    focal length guess; None when the estimate is degenerate, or (``spread`` above 0) when the
    guess decides it: the aspects with ``FOCAL_GUESSES`` times that focal length differ from
    it by more than ``spread`` (log). A mild tilt gives about the same aspect whatever the
    focal length; a small kingdom seen steeply (its far edge a third shorter) gives 0.4 or
    2.5 for a square with the phone's guess when the camera's was shorter: no estimate is
    better than that one (``[detect] aspect_focal_spread``)."""
    h, w = shape[:2]
    quad = np.asarray(quad, np.float64).reshape(4, 2)
    aspect = _aspect_at(quad, w, h, 0.8 * max(h, w))
    if aspect is None or spread <= 0:
        return aspect
    for k in FOCAL_GUESSES:
        other = _aspect_at(quad, w, h, k * 0.8 * max(h, w))
        if other is None or abs(np.log(other / aspect)) > spread:
            return None
    return aspect


def _aspect_at(quad: np.ndarray, w: int, h: int, f: float) -> float | None:
    """:func:`focal_aspect` with the focal length ``f`` (px), the principal point the photo's
    centre."""
    K = np.array([[f, 0, w / 2], [0, f, h / 2], [0, 0, 1]])
    dst = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], np.float32)
    Hm = cv2.getPerspectiveTransform(dst, quad.astype(np.float32))  # unit square -> image
    B = np.linalg.inv(K) @ Hm
    r1, r2 = B[:, 0], B[:, 1]
    n1, n2 = np.linalg.norm(r1), np.linalg.norm(r2)
    if n1 < 1e-12 or n2 < 1e-12:
        return None
    return float(n1 / n2)


def far_from_square(quad: np.ndarray, shape, most: float, spread: float = 0.0) -> bool:
    """Whether the world rectangle seen as ``quad`` (:func:`focal_aspect`, ``spread`` passed
    on) is longer than ``most`` times its width either way: cut n x n, its squares would be
    that far from square (a half-built 2x5 kingdom's outline, 2.5 : 1). ``most`` 0 or less,
    or no estimate: False."""
    if most <= 0:
        return False
    aspect = focal_aspect(quad, shape, spread)
    return bool(aspect) and max(aspect, 1.0 / aspect) > most


def channel_sum(img: np.ndarray) -> np.ndarray:
    """``img.sum(2)`` of an H x W x 3 image, as numpy adds the channels in order (the same
    values, bit for bit), without its slow reduction over a short axis."""
    return (img[..., 0] + img[..., 1]) + img[..., 2]


def _edge_profiles(img: np.ndarray, tiles: np.ndarray):
    """Column profile of vertical-edge strength and row profile of horizontal-edge strength
    (colour edges, Lab), counted only where there are tiles."""
    lab = cv2.cvtColor(img, cv2.COLOR_BGR2LAB).astype(np.float32) if img.ndim == 3 else img.astype(np.float32)
    gx = np.abs(cv2.Sobel(lab, cv2.CV_32F, 1, 0, ksize=3))
    gy = np.abs(cv2.Sobel(lab, cv2.CV_32F, 0, 1, ksize=3))
    if gx.ndim == 3:
        gx, gy = channel_sum(gx), channel_sum(gy)
    w = tiles.astype(np.float32)
    px = (gx * w).sum(0) / (w.sum(0) + 1.0)
    py = (gy * w).sum(1) / (w.sum(1) + 1.0)
    return px, py


def line_strengths(profile: np.ndarray, n: int, window: float = 0.012,
                   median: float | None = None) -> np.ndarray:
    """Edge strength at the n-1 interior cell boundaries (max within +-window of the side),
    relative to the profile's median (``median``: that median, when the caller has it)."""
    L = len(profile)
    w = max(1, int(round(window * L)))
    base = float(np.median(profile) if median is None else median) + 1e-6
    out = []
    for k in range(1, n):
        x = int(round(k * L / n))
        out.append(profile[max(0, x - w):x + w + 1].max() / base)
    return np.array(out)


def _count_scores(profile: np.ndarray, det: dict) -> list:
    """Evidence for n = 1..max_cells cells along an axis. Each interior boundary scores the
    log of its edge strength over ``SEAM_BIAS``; a count whose median boundary is weaker than
    ``SEAM_VALID`` (also among the lines it adds to any count dividing it: twice the true
    count puts every other line through tile middles) scores ``-SEAM_INVALID``, otherwise
    the sum of its boundaries."""
    bias = np.log(SEAM_BIAS)
    cap = SEAM_CAP
    invalid = SEAM_INVALID
    valid = SEAM_VALID
    scores = [0.0]
    median = np.median(profile)          # once for every count
    for n in range(2, int(det["max_cells"]) + 1):
        raw = line_strengths(profile, n, median=median)
        s = np.clip(np.log(np.maximum(raw, 1e-3)) - bias, -cap, cap)
        ok = np.median(raw) >= valid
        # lines that n has beyond each smaller count m dividing it must be seams too
        for m in range(2, n):
            if n % m == 0:
                extra = [k for k in range(1, n) if (k * m) % n != 0]
                ok &= np.median(raw[np.array(extra) - 1]) >= valid
        scores.append(float(s.sum()) if ok else -invalid)
    return scores


def count_cells(gray, tiles, aspect, det) -> tuple[int, int, float]:
    """Rows and columns: edge evidence on each axis plus agreement with the board's aspect
    ratio (square tiles); also a 0..1 confidence from the margin over the runner-up."""
    px, py = _edge_profiles(gray, tiles)
    sx, sy = _count_scores(px, det), _count_scores(py, det)
    wa = ASPECT_WEIGHT
    pairs = []
    for r in range(1, len(sy) + 1):
        for c in range(1, len(sx) + 1):
            err = abs(np.log((c / r) / aspect)) if aspect else 0.0
            pairs.append((sy[r - 1] + sx[c - 1] - wa * err, r, c))
    pairs.sort(reverse=True)
    (best, r, c), second = pairs[0], pairs[1][0]
    conf = 1.0 - np.exp(-max(0.0, best - second))
    return r, c, float(np.clip(conf, 0.0, 1.0))


def recount_cuts(rows: int, cols: int, frames, max_short: int, max_over: int) -> list:
    """The n x n cuts (n in ``frames``) to compare with a ``rows x cols`` grid found on the
    same outline: the longer side's frame when the shorter is at most ``max_short`` short of
    it (5x4, 7x5: a side counted short, or a row missed), and the shorter side's when the
    longer is at most ``max_over`` over it (5x6, 5x7: a seam in a tile's art or a stripe of
    the table counted as a column). A half-built kingdom can be either shape: the cut that
    reads crisper decides (`vision.find.frame.recount`). A square grid, or a strip (1x5), has none."""
    if rows == cols:
        return []
    lo, hi = min(rows, cols), max(rows, cols)
    out = []
    if lo in frames and hi - lo <= max_over:
        out.append(lo)
    if hi in frames and hi - lo <= max_short:
        out.append(hi)
    return out


def seam_strength(profile: np.ndarray, n: int) -> float:
    """Mean log edge strength (over the profile's median) at the n-1 interior boundaries of n
    cells along ``profile`` (:func:`line_strengths`); 0 for one cell."""
    return float(np.mean(np.log(np.maximum(line_strengths(profile, n), 1e-3)))) if n > 1 else 0.0


def seams_refute(image: np.ndarray, corners, rows: int, cols: int, n: int, fcfg: dict) -> bool:
    """Whether the seams inside an outline counted ``rows x cols`` refute cutting it n x n:
    along a side whose count changes, the lines of n cells are weaker (:func:`seam_strength`,
    the outline rectified to ``SEAM_SIDE`` px square by the boards' own warp,
    ``vision.geometry.warp_board``) than the count's own by more
    than ``[frame] recount_seam_veto`` (0: never). Tiles meet in seams a square apart; a cut
    across them (a half-built 4x5 cut 5x5) puts its lines on tile art."""
    veto = float(fcfg["recount_seam_veto"])
    if veto <= 0:
        return False
    side = SEAM_SIDE
    rect, _ = warp_board(image, corners, 1, 1, side)
    across, down = _edge_profiles(rect, np.ones((side, side), np.uint8))
    return any(seam_strength(p, n) < seam_strength(p, k) - veto
               for p, k in ((down, rows), (across, cols)) if k != n)
