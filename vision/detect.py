"""Find the kingdom in a photo and rectify it.

Pipeline (all thresholds in the ``[detect]`` section of ``config.toml``):

1. Downscale the photo (long side ``detect.mask_long_side``) and compute a per-pixel
   "tile likelihood" with a small quadratic logistic model on colour and local texture
   (coefficients in ``[detect.pixel_model]``, fitted on the dev phone photos by
   ``python3 -m vision.detect --fit-pixel-model``).
2. Keep the largest tile blob, take its convex hull and fit a quadrilateral to it: the four
   longest sides of a simplified hull, extended to meet (so cut corners of incomplete
   kingdoms are restored). An image that is nearly all tiles is taken as an already
   rectified board (the AAU photos).
3. Rectify the quadrilateral and count rows and columns from the periodicity of tile edges
   (seams between tiles), constrained by the board's aspect ratio.
4. Warp the full-resolution photo with ``vision.geometry.warp_board`` and refine each
   square's position with ``vision.grid.refine``.
"""
from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass, field

import cv2
import numpy as np

from . import config as _config
from .errors import PhotoError
from .geometry import as_corners, board_homography, warp_board

NO_KINGDOM = ("no kingdom found in the photo: take the photo from above with the whole "
              "kingdom in view, on a plain table, in good light")


@dataclass(frozen=True)
class Board:
    """A found kingdom: its outline in the photo and the rectified board image."""

    corners: np.ndarray          # float32 (4, 2): tl, tr, br, bl in image pixels
    rows: int                    # squares in the found rectangle
    cols: int
    size: int                    # frame: 5 or 7
    cell: int                    # px per square in ``image``
    homography: np.ndarray       # 3x3, image px -> rectified px
    image: np.ndarray            # rectified board, rows*cell x cols*cell (BGR)
    offsets: np.ndarray          # rows x cols x 2 (dx, dy) centre corrections in rectified px
    confidence: float            # 0..1
    warnings: list = field(default_factory=list)


def _section(cfg, name: str) -> dict:
    if cfg is None:
        cfg = _config.load()
    return cfg.get(name, {})


# ----------------------------------------------------------------------------- pixel model

def pixel_features(small: np.ndarray) -> np.ndarray:
    """Per-pixel features (H*W, F) float32: colour, chroma and local texture at two scales."""
    lab = cv2.cvtColor(small, cv2.COLOR_BGR2LAB).astype(np.float32)
    sat = cv2.cvtColor(small, cv2.COLOR_BGR2HSV)[..., 1].astype(np.float32)
    L, a, b = lab[..., 0], lab[..., 1], lab[..., 2]
    feats = [L, a, b, sat, np.hypot(a - 128, b - 128)]
    for k in (5, 11):
        for ch in (L, a, b):
            mu = cv2.blur(ch, (k, k))
            feats.append(np.sqrt(np.maximum(cv2.blur(ch * ch, (k, k)) - mu * mu, 0)))
    feats.append(L - np.median(L))
    return np.stack(feats, -1).reshape(-1, len(feats))


def _quadratic(x: np.ndarray) -> np.ndarray:
    """[x_i] + [x_i * x_j for i <= j]."""
    n = x.shape[1]
    iu, ju = np.triu_indices(n)
    return np.concatenate([x, x[:, iu] * x[:, ju]], axis=1)


def tile_probability(small: np.ndarray, model: dict) -> np.ndarray:
    """Probability that each pixel of ``small`` is on a tile (H x W float32)."""
    x = pixel_features(small)
    x = (x - np.asarray(model["mean"], np.float32)) / np.asarray(model["scale"], np.float32)
    z = _quadratic(x) @ np.asarray(model["coef"], np.float32) + np.float32(model["intercept"])
    p = 1.0 / (1.0 + np.exp(-np.clip(z, -30, 30)))
    return p.reshape(small.shape[:2]).astype(np.float32)


def fit_pixel_model(photos, long_side: int = 400, per_photo: int = 4000, C: float = 1.0,
                    seed: int = 0) -> dict:
    """Fit the tile-likelihood model on labelled phone photos (tiles vs. everything else).

    Positives: pixels of non-empty labelled squares; negatives: pixels well outside the
    labelled rectangle and empty squares inside it.
    """
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(seed)
    xs, ys = [], []
    for p in photos:
        small, s = _downscale(cv2.imread(str(p.path)), long_side)
        y = _label_mask(p, small.shape[:2], s).ravel()
        idx = np.flatnonzero(y >= 0)
        idx = rng.choice(idx, min(per_photo, len(idx)), replace=False)
        xs.append(pixel_features(small)[idx])
        ys.append(y[idx])
    x, y = np.concatenate(xs), np.concatenate(ys)
    mean, scale = x.mean(0), x.std(0) + 1e-6
    clf = LogisticRegression(C=C, max_iter=1000).fit(_quadratic((x - mean) / scale), y)
    return {"mean": mean.tolist(), "scale": scale.tolist(),
            "coef": clf.coef_[0].tolist(), "intercept": float(clf.intercept_[0])}


def _label_mask(p, shape, s: float) -> np.ndarray:
    """1 on labelled tiles, 0 on background, -1 undecided (edges), at scale ``s``."""
    cell = 16
    corners = p.corners * s
    H = board_homography(corners, p.rows, p.cols, cell)
    grid = np.array([[0 if t == "empty" else 255 for t in row] for row in p.terrain], np.uint8)
    grid = cv2.resize(grid, (p.cols * cell, p.rows * cell), interpolation=cv2.INTER_NEAREST)
    tiles = cv2.warpPerspective(grid, np.linalg.inv(H), (shape[1], shape[0]),
                                flags=cv2.INTER_NEAREST)
    quad = np.zeros(shape, np.uint8)
    cv2.fillConvexPoly(quad, np.round(corners).astype(np.int32), 255)
    y = np.full(shape, -1, np.int8)
    y[cv2.erode(tiles, np.ones((3, 3), np.uint8)) > 0] = 1
    y[cv2.dilate(quad, np.ones((9, 9), np.uint8)) == 0] = 0
    y[(quad > 0) & (cv2.dilate(tiles, np.ones((7, 7), np.uint8)) == 0)] = 0
    return y


# ----------------------------------------------------------------------------- geometry

def _downscale(image: np.ndarray, long_side: int) -> tuple[np.ndarray, float]:
    s = min(1.0, long_side / max(image.shape[:2]))
    if s >= 1.0:
        return image, 1.0
    return cv2.resize(image, None, fx=s, fy=s, interpolation=cv2.INTER_AREA), s


def _line_intersection(p1, p2, q1, q2):
    d1, d2 = p2 - p1, q2 - q1
    den = d1[0] * d2[1] - d1[1] * d2[0]
    if abs(den) < 1e-9:
        return None
    t = ((q1[0] - p1[0]) * d2[1] - (q1[1] - p1[1]) * d2[0]) / den
    return p1 + t * d1


def _fit_line(points: np.ndarray):
    vx, vy, x0, y0 = cv2.fitLine(points.astype(np.float32), cv2.DIST_HUBER, 0, 0.01, 0.01).ravel()
    return np.array([x0, y0], np.float64), np.array([x0 + vx, y0 + vy], np.float64)


def _angle_diff(a: float, b: float) -> float:
    """Difference of two line directions (radians, modulo pi), in degrees 0..90."""
    d = abs((a - b) % np.pi)
    return float(np.degrees(min(d, np.pi - d)))


def contour_to_quad(contour: np.ndarray, det: dict | None = None) -> np.ndarray | None:
    """Bounding quadrilateral of a blob made of square tiles (possibly non-convex).

    The convex hull's sides that lie on the blob's outline (not bridging a concavity) are
    grouped by direction; the four longest groups are the kingdom's sides, each fitted with a
    line through its outline points, and consecutive sides meet at the corners. Hull edges
    that bridge a missing corner are ignored, so cut corners are restored.
    """
    det = det or {}
    cnt = contour.reshape(-1, 2).astype(np.float64)
    n = len(cnt)
    if n < 8:
        return None
    idx = cv2.convexHull(contour, returnPoints=False).ravel()
    idx = np.sort(idx)
    scale = np.sqrt(max(cv2.contourArea(contour), 1.0))
    tol = det.get("side_tolerance", 0.02) * scale
    merge_deg = det.get("side_merge_deg", 20.0)
    edges = []  # (angle, length, contour index list, supported)
    for k in range(len(idx)):
        a, b = idx[k], idx[(k + 1) % len(idx)]
        seg = np.arange(a, b + 1) if b > a else np.concatenate([np.arange(a, n), np.arange(0, b + 1)])
        pa, pb = cnt[a], cnt[b]
        d = pb - pa
        length = float(np.hypot(*d))
        if length < 1e-6:
            continue
        pts = cnt[seg]
        dist = np.abs((pts[:, 0] - pa[0]) * d[1] - (pts[:, 1] - pa[1]) * d[0]) / length
        edges.append((float(np.arctan2(d[1], d[0])), length, seg, float(dist.max()) <= tol))
    # group consecutive edges by direction; unsupported edges (bridges) carry no points
    groups = []  # [angle (length-weighted), supported length, points]
    for ang, length, seg, ok in edges:
        if groups and _angle_diff(groups[-1][0], ang) < merge_deg:
            g = groups[-1]
            if ok:
                w = g[1] + length
                # average directions modulo pi
                v = g[1] * np.array([np.cos(2 * g[0]), np.sin(2 * g[0])]) + length * np.array(
                    [np.cos(2 * ang), np.sin(2 * ang)])
                g[0] = float(np.arctan2(v[1], v[0]) / 2) if g[1] > 0 else ang
                g[1] = w
                g[2].append(seg)
            continue
        groups.append([ang, length if ok else 0.0, [seg] if ok else []])
    if len(groups) > 1 and _angle_diff(groups[0][0], groups[-1][0]) < merge_deg:
        last = groups.pop()
        groups[0][1] += last[1]
        groups[0][2] += last[2]
    groups = [g for g in groups if g[1] > 0]
    if len(groups) < 4:
        return None
    order = np.argsort([-g[1] for g in groups])[:4]
    sides = [groups[i] for i in sorted(order)]
    lines = [_fit_line(cnt[np.concatenate(g[2])]) for g in sides]
    quad = []
    for k in range(4):
        c = _line_intersection(*lines[k], *lines[(k + 1) % 4])
        if c is None:
            return None
        quad.append(c)
    quad = np.array(quad, np.float32)
    span = max(np.ptp(cnt[:, 0]), np.ptp(cnt[:, 1]))
    lo, hi = cnt.min(0) - 0.5 * span, cnt.max(0) + 0.5 * span
    if np.any(quad < lo) or np.any(quad > hi) or not cv2.isContourConvex(quad.reshape(-1, 1, 2)):
        return None
    return quad


def _seg_dist(pts: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    d = b - a
    L2 = float(d @ d) + 1e-12
    t = np.clip(((pts - a) @ d) / L2, 0.0, 1.0)
    return np.linalg.norm(pts - (a + t[:, None] * d), axis=1)


def _inside_fraction(quad: np.ndarray, pts: np.ndarray, tol: float) -> float:
    """Fraction of ``pts`` inside the convex ``quad`` (grown by ``tol``)."""
    sign = np.sign(cv2.contourArea(quad.astype(np.float32).reshape(-1, 1, 2), oriented=True)) or 1.0
    ok = np.ones(len(pts), bool)
    for k in range(4):
        a, b = quad[k], quad[(k + 1) % 4]
        d = b - a
        cross = (d[0] * (pts[:, 1] - a[1]) - d[1] * (pts[:, 0] - a[0])) / (np.hypot(*d) + 1e-12)
        ok &= sign * cross >= -tol
    return float(ok.mean())


def fit_quad(contour: np.ndarray, det: dict | None = None, blob_pts: np.ndarray | None = None
             ) -> np.ndarray | None:
    """Bounding quadrilateral of a blob of square tiles, robust to missing corners.

    Candidate sides are the edges of the simplified convex hull; every choice of four of
    them (in order) whose quadrilateral encloses the hull is scored by how much of the
    blob's outline lies on it (a hull edge bridging a missing corner has no outline on it).
    The best quad's sides are then refitted to the outline points near them.
    """
    det = det or {}
    cnt = contour.reshape(-1, 2).astype(np.float64)
    if len(cnt) < 8:
        return None
    hull = cv2.convexHull(contour.astype(np.float32)).reshape(-1, 2)
    perim = cv2.arcLength(hull.reshape(-1, 1, 2), True)
    poly = hull
    for eps in (0.005, 0.01, 0.015, 0.02, 0.03, 0.04, 0.06):
        poly = cv2.approxPolyDP(hull.reshape(-1, 1, 2), eps * perim, True).reshape(-1, 2)
        if len(poly) <= int(det.get("max_hull_sides", 8)):
            break
    poly = poly.astype(np.float64)
    # candidate sides: simplified hull edges plus the longest straight runs of the outline
    # (a thin protrusion, e.g. a light strip touching the kingdom, hides a side from the hull)
    runs = cv2.approxPolyDP(contour.astype(np.float32), 0.015 * perim, True).reshape(-1, 2)
    runs = runs.astype(np.float64)
    cands = [(poly[i], poly[(i + 1) % len(poly)]) for i in range(len(poly))]
    run_edges = [(runs[i], runs[(i + 1) % len(runs)]) for i in range(len(runs))]
    run_edges.sort(key=lambda e: -np.hypot(*(e[1] - e[0])))
    for a, b in run_edges[:int(det.get("max_outline_sides", 6))]:
        if np.hypot(*(b - a)) > 0.1 * perim / 4:
            cands.append((a, b))
    centre = cnt.mean(0)
    mids = np.array([(a + b) / 2 for a, b in cands])
    order = np.argsort(np.arctan2(mids[:, 1] - centre[1], mids[:, 0] - centre[0]))
    lines = [cands[i] for i in order]
    m = len(lines)
    if m < 4:
        return None
    scale = np.sqrt(max(cv2.contourArea(contour), 1.0))
    tol = det.get("side_tolerance", 0.03) * scale
    best, best_key = None, None
    from itertools import combinations

    if blob_pts is None:
        blob_pts = cnt
    hull_area = abs(cv2.contourArea(hull.reshape(-1, 1, 2)))
    for combo in combinations(range(m), 4):
        quad = []
        for k in range(4):
            c = _line_intersection(*lines[combo[k]], *lines[combo[(k + 1) % 4]])
            if c is None:
                break
            quad.append(c)
        if len(quad) < 4:
            continue
        quad = np.array(quad)
        q32 = quad.astype(np.float32).reshape(-1, 1, 2)
        if not cv2.isContourConvex(q32):
            continue
        if _inside_fraction(quad, blob_pts, tol) < det.get("min_inside", 0.97):
            continue
        dist = np.min([_seg_dist(cnt, quad[k], quad[(k + 1) % 4]) for k in range(4)], axis=0)
        support = int((dist <= tol).sum())
        area = abs(cv2.contourArea(q32))
        if area > det.get("max_quad_area_ratio", 2.5) * hull_area:
            continue
        key = (support, -area)
        if best_key is None or key > best_key:
            best, best_key = quad, key
    if best is None:
        return None
    # refit each side to the outline points near it
    sides = []
    for k in range(4):
        a, b = best[k], best[(k + 1) % 4]
        near = cnt[_seg_dist(cnt, a, b) <= tol]
        sides.append(_fit_line(near) if len(near) >= 5 else (a, b))
    quad = []
    for k in range(4):
        c = _line_intersection(*sides[k], *sides[(k + 1) % 4])
        quad.append(c if c is not None else best[(k + 1) % 4])
    quad = np.array(quad, np.float32)
    if not cv2.isContourConvex(quad.reshape(-1, 1, 2)):
        quad = np.roll(best, -1, axis=0).astype(np.float32)
    return quad


def order_top_first(quad: np.ndarray) -> np.ndarray:
    """Order corners clockwise (in the image) starting so that tl-tr is the side nearest the
    top of the photo (the smallest mean y), tl its left end."""
    pts = np.asarray(quad, np.float32).reshape(4, 2)
    centre = pts.mean(axis=0)
    pts = pts[np.argsort(np.arctan2(pts[:, 1] - centre[1], pts[:, 0] - centre[0]))]
    side_y = [(pts[k, 1] + pts[(k + 1) % 4, 1]) / 2 for k in range(4)]
    start = int(np.argmin(side_y))
    return np.roll(pts, -start, axis=0)


def _blob(prob: np.ndarray, det: dict) -> np.ndarray | None:
    """Mask (uint8) of the largest tile blob, or None."""
    mask = (cv2.GaussianBlur(prob, (0, 0), 1.0) > det.get("prob_threshold", 0.5)).astype(np.uint8)
    k = max(3, int(round(det.get("close_frac", 0.012) * max(mask.shape))) | 1)
    ko = max(3, int(round(det.get("open_frac", 0.02) * max(mask.shape))) | 1)
    closed = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, np.ones((k, k), np.uint8))
    mask = cv2.morphologyEx(closed, cv2.MORPH_OPEN,
                            cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (ko, ko)))
    n, labels, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=8)
    if n <= 1:
        return None
    areas = stats[1:, cv2.CC_STAT_AREA]
    best = 1 + int(np.argmax(areas))
    if areas.max() < det.get("min_area_frac", 0.01) * mask.size:
        return None
    main = (labels == best).astype(np.uint8)
    # give back what the opening shaved off near the blob (tile edges, dark tiles)
    kg = 2 * ko + 1
    near = cv2.dilate(main, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (kg, kg)))
    grown = closed & near
    n, labels, stats, _ = cv2.connectedComponentsWithStats(grown, connectivity=8)
    if n <= 1:
        return main
    return (labels == 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))).astype(np.uint8)


def _focal_aspect(quad: np.ndarray, shape) -> float | None:
    """Width/height of the world rectangle seen as ``quad`` (tl,tr,br,bl), with a phone-like
    focal length guess; None when the estimate is degenerate."""
    h, w = shape[:2]
    f = 0.8 * max(h, w)
    K = np.array([[f, 0, w / 2], [0, f, h / 2], [0, 0, 1]])
    dst = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], np.float32)
    Hm = cv2.getPerspectiveTransform(dst, quad.astype(np.float32))  # unit square -> image
    B = np.linalg.inv(K) @ Hm
    r1, r2 = B[:, 0], B[:, 1]
    n1, n2 = np.linalg.norm(r1), np.linalg.norm(r2)
    if n1 < 1e-12 or n2 < 1e-12:
        return None
    return float(n1 / n2)


def _edge_profiles(gray: np.ndarray, tiles: np.ndarray):
    """Column profile of vertical-edge strength and row profile of horizontal-edge strength,
    counted only where there are tiles."""
    gx = np.abs(cv2.Sobel(gray, cv2.CV_32F, 1, 0, ksize=3))
    gy = np.abs(cv2.Sobel(gray, cv2.CV_32F, 0, 1, ksize=3))
    w = tiles.astype(np.float32)
    px = (gx * w).sum(0) / (w.sum(0) + 1.0)
    py = (gy * w).sum(1) / (w.sum(1) + 1.0)
    return px, py


def _comb_score(profile: np.ndarray, n: int) -> float:
    """How much stronger the profile is at the n-1 interior cell boundaries than mid-cell."""
    if n <= 1:
        return 0.0
    L = len(profile)
    sm = np.convolve(profile, np.ones(3) / 3, mode="same")
    step = L / n
    at = [sm[max(0, int(round(k * step)) - 2):int(round(k * step)) + 3].max() for k in range(1, n)]
    mid = [sm[int(round((k + 0.5) * step))] for k in range(n)]
    base = np.median(sm) + 1e-6
    return float((np.mean(at) - np.mean(mid)) / base)


def _count_cells(gray, tiles, aspect, det) -> tuple[int, int, float]:
    """Choose rows, cols (1..7) from edge periodicity and the board's aspect ratio."""
    px, py = _edge_profiles(gray, tiles)
    max_n = int(det.get("max_cells", 7))
    sx = [_comb_score(px, n) for n in range(1, max_n + 1)]
    sy = [_comb_score(py, n) for n in range(1, max_n + 1)]
    wa = det.get("aspect_weight", 1.5)
    best, best_score = (1, 1), -1e9
    for r in range(1, max_n + 1):
        for c in range(1, max_n + 1):
            score = sx[c - 1] + sy[r - 1]
            if aspect is not None:
                score -= wa * abs(np.log((c / r) / aspect))
            if score > best_score:
                best, best_score = (r, c), score
    return best[0], best[1], best_score


def _is_rectified_board(prob: np.ndarray, det: dict) -> bool:
    """The whole image is the board: tiles nearly everywhere, up to the image borders."""
    frac = float((prob > 0.5).mean())
    h, w = prob.shape
    b = max(2, int(0.04 * min(h, w)))
    border = np.concatenate([prob[:b].ravel(), prob[-b:].ravel(), prob[:, :b].ravel(),
                             prob[:, -b:].ravel()])
    return (frac > det.get("rectified_tile_frac", 0.8)
            and float((border > 0.5).mean()) > det.get("rectified_border_frac", 0.6)
            and 0.8 < w / h < 1.25)


def _frame_size(rows: int, cols: int) -> int:
    return 7 if max(rows, cols) > 5 else 5


def locate(image: np.ndarray, cfg=None, size: int | None = None):
    """Corners (tl, tr, br, bl, image px), rows, cols, confidence, warnings; no warp."""
    det = _section(cfg, "detect")
    model = det.get("pixel_model")
    if not model:
        raise RuntimeError("config [detect.pixel_model] is missing; run "
                           "python3 -m vision.detect --fit-pixel-model")
    if image is None or image.ndim != 3 or image.shape[0] < 16 or image.shape[1] < 16:
        raise PhotoError("the image is too small to hold a kingdom")
    small, s = _downscale(image, int(det.get("mask_long_side", 400)))
    prob = tile_probability(small, model)
    warnings: list[str] = []
    h, w = image.shape[:2]
    if _is_rectified_board(prob, det):
        corners = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32)
        n = size or 5
        return corners, n, n, 0.9, warnings
    blob = _blob(prob, det)
    if blob is None:
        raise PhotoError(NO_KINGDOM)
    contours, _ = cv2.findContours(blob, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    cnt = max(contours, key=cv2.contourArea)
    ys, xs = np.nonzero(blob)
    pick = np.random.default_rng(0).choice(len(xs), min(600, len(xs)), replace=False)
    quad = fit_quad(cnt, det, np.stack([xs[pick], ys[pick]], 1).astype(np.float64))
    if quad is None:
        quad = cv2.boxPoints(cv2.minAreaRect(cnt)).astype(np.float32)
    quad = order_top_first(quad)
    # rectify at a working resolution and count the cells
    work = int(det.get("count_side", 280))
    Hq = cv2.getPerspectiveTransform(quad, np.array([[0, 0], [work, 0], [work, work], [0, work]],
                                                    np.float32))
    gray = cv2.cvtColor(small, cv2.COLOR_BGR2GRAY)
    rect = cv2.warpPerspective(gray, Hq, (work, work), flags=cv2.INTER_LINEAR)
    tiles = cv2.warpPerspective(prob, Hq, (work, work), flags=cv2.INTER_LINEAR) > 0.5
    aspect = _focal_aspect(quad / s, image.shape)
    rows, cols, score = _count_cells(rect, tiles, aspect, det)
    if size is not None and size in (5, 7):
        pass
    corners = (quad / s).astype(np.float32)
    hx, hy = blob.shape[1] - 1, blob.shape[0] - 1
    ys, xs = np.nonzero(blob)
    if xs.min() == 0 or ys.min() == 0 or xs.max() == hx or ys.max() == hy:
        warnings.append("part of the kingdom may be outside the photo")
    conf = float(np.clip(0.5 + 0.1 * score, 0.0, 1.0))
    return corners, rows, cols, conf, warnings


def find_board(image: np.ndarray, cfg=None, size: int | None = None) -> Board:
    """Find the kingdom in a BGR photo and rectify it (see the module docstring).

    ``size`` (5 or 7) forces the frame size. Raises ``PhotoError`` when no kingdom is found.
    """
    if size is not None and size not in (5, 7):
        raise ValueError(f"size must be 5 or 7, got {size}")
    if cfg is None:
        cfg = _config.load()
    det = _section(cfg, "detect")
    corners, rows, cols, conf, warnings = locate(image, cfg, size)
    frame = size or _frame_size(rows, cols)
    cell = int(det.get("cell", 100))
    board_img, H = warp_board(image, corners, rows, cols, cell)
    from . import grid

    offsets = grid.refine(board_img, rows, cols, cell, cfg)
    return Board(corners=as_corners(corners), rows=rows, cols=cols, size=frame, cell=cell,
                 homography=H, image=board_img, offsets=offsets, confidence=conf,
                 warnings=list(warnings))


# ----------------------------------------------------------------------------- evaluation

def corner_error(found: np.ndarray, truth: np.ndarray) -> float:
    """Largest corner distance as a fraction of the labelled board's mean side length."""
    side = np.mean(np.linalg.norm(np.roll(truth, -1, axis=0) - truth, axis=1))
    return float(np.max(np.linalg.norm(found - truth, axis=1)) / side)


def evaluate_detection(photos, cfg=None, threshold: float = 0.05) -> dict:
    """Compare detected corners and grid size with the labels of ``photos``.

    Returns ``{"rows": [per-photo dicts], "found": fraction, "grid_right": fraction,
    "median_error": ..., "max_error": ..., "median_ms": ...}``. A photo counts as found when
    its worst corner is within ``threshold`` of the board side.
    """
    from .io import load_image

    rows_out = []
    for p in photos:
        image = load_image(p.path, cfg)
        truth = p.corners if p.corners is not None else np.array(
            [[0, 0], [image.shape[1], 0], [image.shape[1], image.shape[0]], [0, image.shape[0]]],
            np.float32)
        t0 = time.perf_counter()
        try:
            corners, r, c, conf, warns = locate(image, cfg)
            err = corner_error(corners, truth)
        except PhotoError:
            r = c = 0
            conf, err, warns = 0.0, float("inf"), ["no kingdom found"]
        ms = 1000 * (time.perf_counter() - t0)
        rows_out.append({"photo": p.name, "rows": r, "cols": c, "true_rows": p.rows,
                         "true_cols": p.cols, "error": err, "found": err <= threshold,
                         "grid_right": (r, c) == (p.rows, p.cols), "confidence": conf,
                         "ms": ms, "warnings": warns})
    errs = np.array([r["error"] for r in rows_out])
    return {"rows": rows_out,
            "found": float(np.mean([r["found"] for r in rows_out])) if rows_out else 0.0,
            "grid_right": float(np.mean([r["grid_right"] for r in rows_out])) if rows_out else 0.0,
            "median_error": float(np.median(errs)) if len(errs) else float("nan"),
            "max_error": float(np.max(errs)) if len(errs) else float("nan"),
            "median_ms": float(np.median([r["ms"] for r in rows_out])) if rows_out else 0.0}


def _toml_model(model: dict) -> str:
    fmt = lambda v: "[" + ", ".join(f"{x:.6g}" for x in v) + "]"  # noqa: E731
    return ("[detect.pixel_model]\n"
            f"mean = {fmt(model['mean'])}\n"
            f"scale = {fmt(model['scale'])}\n"
            f"coef = {fmt(model['coef'])}\n"
            f"intercept = {model['intercept']:.6g}\n")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m vision.detect",
                                 description="Evaluate kingdom detection on the dev photos.")
    ap.add_argument("--fit-pixel-model", action="store_true",
                    help="fit the tile-likelihood model on the dev phone photos; print TOML")
    ap.add_argument("--aau", action="store_true", help="also evaluate the AAU dev photos")
    ap.add_argument("--only", default=None, help="only photos whose name contains this")
    args = ap.parse_args(argv)
    from .datasets import load_aau, load_phone

    photos = load_phone()
    if args.fit_pixel_model:
        print(_toml_model(fit_pixel_model(photos)))
        return 0
    if args.aau:
        photos = photos + load_aau()
    if args.only:
        photos = [p for p in photos if args.only in p.name]
    res = evaluate_detection(photos)
    print(f"{'photo':58s} {'grid':>5s} {'true':>5s} {'err%':>6s} {'ms':>6s}")
    for r in res["rows"]:
        flag = "" if r["found"] and r["grid_right"] else "  <-- "
        print(f"{r['photo'][:58]:58s} {r['rows']}x{r['cols']:<3d} {r['true_rows']}x{r['true_cols']:<3d}"
              f" {100 * r['error']:6.1f} {r['ms']:6.0f}{flag}")
    print(f"found {100 * res['found']:.0f}%  grid right {100 * res['grid_right']:.0f}%  "
          f"median error {100 * res['median_error']:.1f}%  max error {100 * res['max_error']:.1f}%"
          f"  median {res['median_ms']:.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
