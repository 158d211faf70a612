"""Find the kingdom in a photo and rectify it.

Pipeline (all thresholds in the ``[detect]`` section of ``config.toml``):

1. Downscale the photo (long side ``detect.mask_long_side``) and compute a per-pixel
   "tile likelihood" with a small quadratic logistic model on colour and local texture
   (coefficients in ``[detect.pixel_model]``, fitted on the dev phone photos by
   ``python3 -m vision.detect --fit-pixel-model``). With ``[detect] tile_net`` set, a second
   map from a small convolutional network (``vision.tilenet``, ``models/tiles.onnx``) that
   sees two squares around each pixel; steps 2-3 run on both maps (see ``locate``).
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
from .errors import NO_KINGDOM, PhotoError
from .geometry import as_corners, board_homography, warp_board

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
    if "w1" in model:  # one hidden layer (ReLU)
        hdn = np.maximum(x @ np.asarray(model["w1"], np.float32).reshape(x.shape[1], -1)
                         + np.asarray(model["b1"], np.float32), 0)
        z = hdn @ np.asarray(model["w2"], np.float32) + np.float32(model["b2"])
        p = 1.0 / (1.0 + np.exp(-np.clip(z, -30, 30)))
        return p.reshape(small.shape[:2]).astype(np.float32)
    n = x.shape[1]
    coef = np.asarray(model["coef"], np.float32)
    # the quadratic terms as a symmetric form: sum_ij A_ij x_i x_j with A from the i <= j terms
    iu, ju = np.triu_indices(n)
    A = np.zeros((n, n), np.float32)
    A[iu, ju] = coef[n:]
    z = np.einsum("ij,ij->i", x @ A, x) + x @ coef[:n] + np.float32(model["intercept"])
    p = 1.0 / (1.0 + np.exp(-np.clip(z, -30, 30)))
    return p.reshape(small.shape[:2]).astype(np.float32)


_TILE_NETS: dict = {}


def _tile_net(det: dict):
    """The network named by ``[detect] tile_net`` (a file in models/), loaded once."""
    from models import model_path

    from .tilenet import TileNet

    path = model_path(det["tile_net"])
    if path not in _TILE_NETS:
        if not path.exists():
            raise FileNotFoundError(f"tile network {path} is missing: run "
                                    "python3 -m vision.tilenet --out models/tiles.onnx")
        _TILE_NETS[path] = TileNet(path)
    return _TILE_NETS[path]


def _pixel_map(small: np.ndarray, det: dict) -> np.ndarray:
    model = det.get("pixel_model")
    if not model:
        raise RuntimeError("config [detect.pixel_model] is missing; run "
                           "python3 -m vision.detect --fit-pixel-model")
    return tile_probability(small, model)


def synth_training_scenes(n: int, seed: int = 0, long_side: int = 400):
    """``n`` scenes from ``vision.synth`` (rendered kingdoms on generated tables, exact
    corners): ``(small_bgr, labels)`` pairs, labels 1 tile / 0 not / -1 undecided."""
    from . import synth

    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        b = synth.rendered_board(rng, size=7 if i % 3 == 0 else 5, cell=60,
                                 full_frame=bool(i % 2))
        scene, corners = synth.make_scene(b["image"], rng, width=2 * long_side,
                                          board_mask=b["mask"])
        small, s = _downscale(scene, long_side)
        h, w = b["mask"].shape[:2]
        H = cv2.getPerspectiveTransform(np.float32([[0, 0], [w, 0], [w, h], [0, h]]),
                                        np.float32(corners) * s)
        tiles = cv2.warpPerspective((b["mask"] > 0).astype(np.uint8) * 255, H,
                                    (small.shape[1], small.shape[0]), flags=cv2.INTER_NEAREST)
        y = np.full(small.shape[:2], -1, np.int8)
        y[cv2.erode(tiles, np.ones((3, 3), np.uint8)) > 0] = 1
        y[cv2.dilate(tiles, np.ones((5, 5), np.uint8)) == 0] = 0
        out.append((small, y))
    return out


def fit_pixel_model(photos, long_side: int = 400, per_photo: int = 4000, C: float = 1.0,
                    seed: int = 0, extra=(), hidden: int = 0) -> dict:
    """Fit the tile-likelihood model on labelled phone photos (tiles vs. everything else).

    Positives: pixels of non-empty labelled squares; negatives: pixels well outside the
    labelled rectangle and empty squares inside it. ``extra``: more ``(small_bgr, labels)``
    pairs (e.g. ``synth_training_scenes``). ``hidden``: a one-hidden-layer network of that
    width instead of the quadratic logistic model.
    """
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(seed)
    xs, ys = [], []
    pairs = []
    for p in photos:
        small, s = _downscale(cv2.imread(str(p.path)), long_side)
        pairs.append((small, _label_mask(p, small.shape[:2], s)))
    for small, y in list(pairs) + list(extra):
        y = y.ravel()
        idx = np.flatnonzero(y >= 0)
        idx = rng.choice(idx, min(per_photo, len(idx)), replace=False)
        xs.append(pixel_features(small)[idx])
        ys.append(y[idx])
    x, y = np.concatenate(xs), np.concatenate(ys)
    mean, scale = x.mean(0), x.std(0) + 1e-6
    if hidden:
        from sklearn.neural_network import MLPClassifier

        mlp = MLPClassifier(hidden_layer_sizes=(hidden,), alpha=1e-3, max_iter=300,
                            random_state=seed).fit((x - mean) / scale, y)
        return {"mean": mean.tolist(), "scale": scale.tolist(),
                "w1": mlp.coefs_[0].ravel().tolist(), "b1": mlp.intercepts_[0].tolist(),
                "w2": mlp.coefs_[1].ravel().tolist(), "b2": float(mlp.intercepts_[1][0])}
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

def _downscale(image: np.ndarray, long_side: int, integer: bool = False
               ) -> tuple[np.ndarray, float]:
    """Shrink so the long side is about ``long_side``; ``integer`` uses a whole-number factor
    (OpenCV's fast path for big photos), so the result is between 1 and 2 x ``long_side``."""
    s = min(1.0, long_side / max(image.shape[:2]))
    if s >= 1.0:
        return image, 1.0
    if not integer and s < 0.4:
        # bilinear to twice the size first (it reads only the pixels it needs), then a 2x2
        # area average: a 12-megapixel photo in a few ms instead of tens
        h, w = image.shape[:2]
        w2, h2 = max(1, round(2 * s * w)), max(1, round(2 * s * h))
        sub = cv2.resize(image, (w2, h2), interpolation=cv2.INTER_LINEAR)
        out = cv2.resize(sub, (max(1, w2 // 2), max(1, h2 // 2)), interpolation=cv2.INTER_AREA)
        return out, out.shape[1] / w
    if integer:
        k = int(1.0 / s)
        if k <= 1:
            return image, 1.0
        h, w = image.shape[:2]
        out = cv2.resize(image, (w // k, h // k), interpolation=cv2.INTER_AREA)
        small, s2 = _downscale(out, long_side)
        return small, s2 * out.shape[1] / w
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
    step = max(1, len(cnt) // int(det.get("support_points", 240)))
    cnt_s = cnt[::step]
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
    span = max(np.ptp(cnt[:, 0]), np.ptp(cnt[:, 1]))
    margin = det.get("max_corner_out", 0.25) * span
    lo, hi = cnt.min(0) - margin, cnt.max(0) + margin
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
        if np.any(quad < lo) or np.any(quad > hi):  # corners far from the blob
            continue
        q32 = quad.astype(np.float32).reshape(-1, 1, 2)
        if not cv2.isContourConvex(q32):
            continue
        area = abs(cv2.contourArea(q32))
        if area > det.get("max_quad_area_ratio", 2.5) * hull_area:
            continue
        if _inside_fraction(quad, blob_pts, tol) < det.get("min_inside", 0.97):
            continue
        dist = np.min([_seg_dist(cnt_s, quad[k], quad[(k + 1) % 4]) for k in range(4)], axis=0)
        support = int((dist <= tol).sum())
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


def _largest(mask: np.ndarray):
    n, labels, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=8)
    if n <= 1:
        return None
    best = 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
    return (labels == best).astype(np.uint8)


def _disk(r: int) -> np.ndarray:
    return cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * r + 1, 2 * r + 1))


def _blob(prob: np.ndarray, det: dict) -> np.ndarray | None:
    """Mask (uint8) of the kingdom's tile blob, or None.

    Largest component of the closed tile mask, opened with a disk scaled to the blob's own
    thickness (cuts thin bridges to clutter: light strips, pencils, meeples), then grown by
    hysteresis into weaker tile evidence close to it (dark or brown tiles).
    """
    soft = cv2.GaussianBlur(prob, (0, 0), 1.0)
    mask = (soft > det.get("prob_threshold", 0.5)).astype(np.uint8)
    k = max(3, int(round(det.get("close_frac", 0.012) * max(mask.shape))) | 1)
    speck = int(round(det.get("speck_frac", 0.0) * max(mask.shape)))
    if speck > 0:  # remove specks (light dots, glints) before closing can join them to tiles
        mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, _disk(speck))
    closed = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, np.ones((k, k), np.uint8))
    ko = max(1, int(round(det.get("open_frac", 0.01) * max(mask.shape))))
    main = _largest(cv2.morphologyEx(closed, cv2.MORPH_OPEN, _disk(ko)))
    if main is None or main.sum() < det.get("min_area_frac", 0.01) * mask.size:
        return None
    # open again in proportion to the blob's thickness (half-width of its thickest part)
    thick = float(cv2.distanceTransform(main, cv2.DIST_L2, 3).max())
    r = int(round(det.get("open_thickness", 0.25) * thick))
    if r > ko:
        opened = _largest(cv2.morphologyEx(main, cv2.MORPH_OPEN, _disk(r)))
        if opened is not None:
            main = opened
    # hysteresis: take weaker tile evidence connected to the blob, within a short reach
    weak = (soft > det.get("prob_weak", 0.3)).astype(np.uint8)
    weak = cv2.morphologyEx(weak, cv2.MORPH_CLOSE, np.ones((k, k), np.uint8))
    reach = max(1, int(round(det.get("grow_reach", 0.15) * thick)))
    grown = weak & cv2.dilate(main, _disk(reach)) | main
    grown = cv2.morphologyEx(grown, cv2.MORPH_OPEN, _disk(max(1, r // 2)))
    out = _largest(grown)
    return out if out is not None else main


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


def _edge_profiles(img: np.ndarray, tiles: np.ndarray):
    """Column profile of vertical-edge strength and row profile of horizontal-edge strength
    (colour edges, Lab), counted only where there are tiles."""
    lab = cv2.cvtColor(img, cv2.COLOR_BGR2LAB).astype(np.float32) if img.ndim == 3 else img.astype(np.float32)
    gx = np.abs(cv2.Sobel(lab, cv2.CV_32F, 1, 0, ksize=3))
    gy = np.abs(cv2.Sobel(lab, cv2.CV_32F, 0, 1, ksize=3))
    if gx.ndim == 3:
        gx, gy = gx.sum(2), gy.sum(2)
    w = tiles.astype(np.float32)
    px = (gx * w).sum(0) / (w.sum(0) + 1.0)
    py = (gy * w).sum(1) / (w.sum(1) + 1.0)
    return px, py


def line_strengths(profile: np.ndarray, n: int, window: float = 0.012) -> np.ndarray:
    """Edge strength at the n-1 interior cell boundaries (max within +-window of the side),
    relative to the profile's median."""
    L = len(profile)
    w = max(1, int(round(window * L)))
    base = float(np.median(profile)) + 1e-6
    out = []
    for k in range(1, n):
        x = int(round(k * L / n))
        out.append(profile[max(0, x - w):x + w + 1].max() / base)
    return np.array(out)


def _count_scores(profile: np.ndarray, det: dict) -> list:
    """Evidence for n = 1..max_cells cells along an axis. Each interior boundary scores the
    log of its edge strength over ``seam_bias``; a count whose median boundary is weaker than
    ``seam_valid`` (also among the lines it adds to any count dividing it: twice the true
    count puts every other line through tile middles) scores ``-seam_invalid``, otherwise
    the sum of its boundaries."""
    bias = np.log(det.get("seam_bias", 1.2))
    cap = det.get("seam_cap", 1.5)
    invalid = det.get("seam_invalid", 1.0)
    valid = det.get("seam_valid", 1.5)
    scores = [0.0]
    for n in range(2, int(det.get("max_cells", 7)) + 1):
        raw = line_strengths(profile, n)
        s = np.clip(np.log(np.maximum(raw, 1e-3)) - bias, -cap, cap)
        ok = np.median(raw) >= valid
        # lines that n has beyond each smaller count m dividing it must be seams too
        for m in range(2, n):
            if n % m == 0:
                extra = [k for k in range(1, n) if (k * m) % n != 0]
                ok &= np.median(raw[np.array(extra) - 1]) >= valid
        scores.append(float(s.sum()) if ok else -invalid)
    return scores


def _count_cells(gray, tiles, aspect, det) -> tuple[int, int, float]:
    """Rows and columns: edge evidence on each axis plus agreement with the board's aspect
    ratio (square tiles); also a 0..1 confidence from the margin over the runner-up."""
    px, py = _edge_profiles(gray, tiles)
    sx, sy = _count_scores(px, det), _count_scores(py, det)
    wa = det.get("aspect_weight", 4.0)
    pairs = []
    for r in range(1, len(sy) + 1):
        for c in range(1, len(sx) + 1):
            err = abs(np.log((c / r) / aspect)) if aspect else 0.0
            pairs.append((sy[r - 1] + sx[c - 1] - wa * err, r, c))
    pairs.sort(reverse=True)
    (best, r, c), second = pairs[0], pairs[1][0]
    conf = 1.0 - np.exp(-max(0.0, best - second))
    return r, c, float(np.clip(conf, 0.0, 1.0))


def _edge_map(gray: np.ndarray):
    """Gradient (gx, gy) of the smoothed image, scaled so strong edges are about 1."""
    g = cv2.GaussianBlur(gray, (0, 0), 1.2).astype(np.float32)
    gx = cv2.Sobel(g, cv2.CV_32F, 1, 0, ksize=3)
    gy = cv2.Sobel(g, cv2.CV_32F, 0, 1, ksize=3)
    norm = float(np.percentile(cv2.magnitude(gx, gy), 99)) + 1e-6
    return gx / norm, gy / norm


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


def refine_corners(edges, quad: np.ndarray, rows: int, cols: int, det: dict,
                   tile_prob: np.ndarray | None = None, prob_scale: float = 1.0) -> np.ndarray:
    """Move the four corners so that the rows x cols grid lines lie on tile edges and seams.

    Coordinate descent on the 8 corner coordinates, maximising the edge strength along all
    grid lines (each line weighted equally; along a line, points next to tiles count, so
    empty table does not), steps from ``refine_step`` of a cell down.
    """
    per_cell = 8
    lines = _grid_points(rows, cols, per_cell)
    pts = np.concatenate(lines).astype(np.float32)
    line_id = np.concatenate([np.full(len(l), i) for i, l in enumerate(lines)])
    n_lines = len(lines)
    src = np.float32([[0, 0], [cols, 0], [cols, rows], [0, rows]])
    side = float(np.mean(np.linalg.norm(np.roll(quad, -1, 0) - quad, axis=1)))
    cell_px = side / max(1.0, (rows + cols) / 2)
    weights = np.ones(len(pts), np.float64)
    if tile_prob is not None:
        H0 = cv2.getPerspectiveTransform(src, quad.astype(np.float32))
        vertical = np.zeros(len(pts), bool)
        vertical[:sum(len(l) for l in lines[:cols + 1])] = True
        off = np.where(vertical[:, None], [[0.3, 0.0]], [[0.0, 0.3]]).astype(np.float32)
        sides = []
        for sgn in (1, -1):
            q = cv2.perspectiveTransform((pts + sgn * off).reshape(-1, 1, 2), H0).reshape(-1, 2)
            sides.append(_bilinear(tile_prob, q * prob_scale))
        weights = np.clip(np.maximum(*sides), 0.0, 1.0).astype(np.float64) + 1e-3
    wsum = np.bincount(line_id, weights, n_lines)
    keep = wsum > det.get("refine_min_line", 0.5) * per_cell
    # the image direction across each grid line (from the first guess): only edges running
    # along the line count
    gx, gy = edges
    H0 = cv2.getPerspectiveTransform(src, quad.astype(np.float32))
    vert = np.zeros(len(pts), bool)
    vert[:sum(len(l) for l in lines[:cols + 1])] = True
    du = np.where(vert[:, None], [[0.05, 0.0]], [[0.0, 0.05]]).astype(np.float32)
    a = cv2.perspectiveTransform((pts - du).reshape(-1, 1, 2), H0).reshape(-1, 2)
    b = cv2.perspectiveTransform((pts + du).reshape(-1, 1, 2), H0).reshape(-1, 2)
    normal = b - a
    normal /= np.linalg.norm(normal, axis=1, keepdims=True) + 1e-9

    def score(q):
        H = cv2.getPerspectiveTransform(src, q.astype(np.float32))
        img_pts = cv2.perspectiveTransform(pts.reshape(-1, 1, 2), H).reshape(-1, 2)
        vals = np.abs(_bilinear(gx, img_pts) * normal[:, 0]
                      + _bilinear(gy, img_pts) * normal[:, 1]) * weights
        per_line = np.bincount(line_id, vals, n_lines) / wsum
        return float(per_line[keep].mean()) if keep.any() else 0.0

    q = quad.astype(np.float64).copy()
    best = score(q)
    max_move = det.get("refine_max_move", 0.2) * cell_px
    step = det.get("refine_step", 0.08) * cell_px
    min_step = det.get("refine_min_step", 0.01) * cell_px
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


def _segments(gray: np.ndarray, mask: np.ndarray, max_side: int = 600) -> np.ndarray:
    """Straight edge segments (N, 4: x1, y1, x2, y2) of ``gray`` inside ``mask`` (found on
    the mask's bounding box, at most ``max_side`` px long)."""
    x, y, w, h = cv2.boundingRect(mask)
    if w < 4 or h < 4:
        return np.zeros((0, 4), np.float32)
    crop = gray[y:y + h, x:x + w]
    f = min(1.0, max_side / max(w, h))
    if f < 1.0:
        crop = cv2.resize(crop, None, fx=f, fy=f, interpolation=cv2.INTER_AREA)
    found = cv2.createLineSegmentDetector().detect(crop)[0]
    if found is None:
        return np.zeros((0, 4), np.float32)
    seg = found.reshape(-1, 4) / f + np.float32([x, y, x, y])
    mx = ((seg[:, 0] + seg[:, 2]) / 2).astype(int).clip(0, mask.shape[1] - 1)
    my = ((seg[:, 1] + seg[:, 3]) / 2).astype(int).clip(0, mask.shape[0] - 1)
    return seg[mask[my, mx] > 0]


def _vanishing_point(seg: np.ndarray, iters: int = 3, keep: float = 0.75) -> np.ndarray | None:
    """Homogeneous point (3,) where the segments' lines meet best (length-weighted, with
    the worst-fitting segments dropped each round)."""
    if len(seg) < 2:
        return None
    p1 = np.c_[seg[:, :2], np.ones(len(seg))]
    p2 = np.c_[seg[:, 2:], np.ones(len(seg))]
    lines = np.cross(p1, p2)
    lines /= np.linalg.norm(lines[:, :2], axis=1, keepdims=True) + 1e-12
    w = np.hypot(seg[:, 2] - seg[:, 0], seg[:, 3] - seg[:, 1])
    idx = np.arange(len(seg))
    v = None
    for _ in range(iters):
        A = lines[idx] * w[idx, None]
        v = np.linalg.svd(A)[2][-1]
        # angle between each segment and the direction from its midpoint to v
        mid = (seg[:, :2] + seg[:, 2:]) / 2
        d_seg = seg[:, 2:] - seg[:, :2]
        d_vp = v[:2] - mid * v[2]
        cosang = np.abs((d_seg * d_vp).sum(1)) / (np.linalg.norm(d_seg, axis=1) * np.linalg.norm(d_vp, axis=1) + 1e-12)
        err = np.arccos(np.clip(cosang, 0, 1))
        order = np.argsort(err)
        idx = order[:max(2, int(keep * len(order)))]
    return v


def _tangent_lines(v: np.ndarray, pts: np.ndarray, q: float):
    """The two lines through vanishing point ``v`` that bound ``pts`` (robust quantile ``q``);
    each as a pair of points."""
    centre = pts.mean(0)
    if abs(v[2]) < 1e-9 * np.linalg.norm(v[:2]):
        vp = centre + v[:2] / np.linalg.norm(v[:2]) * 1e7
    else:
        vp = v[:2] / v[2]
    ref = np.arctan2(*(centre - vp)[::-1])
    ang = np.arctan2(pts[:, 1] - vp[1], pts[:, 0] - vp[0]) - ref
    ang = (ang + np.pi) % (2 * np.pi) - np.pi
    lo, hi = np.quantile(ang, [q, 1 - q])
    out = []
    for a in (lo, hi):
        d = np.array([np.cos(a + ref), np.sin(a + ref)])
        # a second point on the line, near the points
        r = float(np.dot(centre - vp, d))
        out.append((vp, vp + r * d))
    return out


def vp_quad(segments: np.ndarray, quad: np.ndarray, pts: np.ndarray, det: dict):
    """Refit the quadrilateral from the two vanishing points of the tile edges.

    Segments are split into the two grid directions using the current ``quad`` (tl,tr,br,bl);
    the sides are the lines through each vanishing point that bound the tile blob ``pts``.
    Returns the new quad or None.
    """
    if len(segments) < 6:
        return None
    H = cv2.getPerspectiveTransform(quad.astype(np.float32),
                                    np.float32([[0, 0], [1, 0], [1, 1], [0, 1]]))
    ends = cv2.perspectiveTransform(segments.reshape(-1, 1, 2).astype(np.float32), H).reshape(-1, 4)
    d = ends[:, 2:] - ends[:, :2]
    ang = np.degrees(np.arctan2(np.abs(d[:, 1]), np.abs(d[:, 0])))
    tol = det.get("vp_family_deg", 20.0)
    length = np.hypot(segments[:, 2] - segments[:, 0], segments[:, 3] - segments[:, 1])
    long_enough = length >= det.get("vp_min_segment", 8.0)
    horiz = segments[(ang < tol) & long_enough]
    vert = segments[(ang > 90 - tol) & long_enough]
    if len(horiz) < 3 or len(vert) < 3:
        return None
    vh, vv = _vanishing_point(horiz), _vanishing_point(vert)
    if vh is None or vv is None:
        return None
    q = det.get("tangent_quantile", 0.002)
    top, bottom = _tangent_lines(vh, pts, q)
    left, right = _tangent_lines(vv, pts, q)
    corners = []
    for a, b in ((top, left), (top, right), (bottom, right), (bottom, left)):
        c = _line_intersection(*a, *b)
        if c is None:
            return None
        corners.append(c)
    new = order_top_first(np.array(corners, np.float32))
    if not cv2.isContourConvex(new.reshape(-1, 1, 2)):
        return None
    # the refit must stay near the first guess (a wrong split of the segments flies away)
    side = float(np.mean(np.linalg.norm(np.roll(quad, -1, 0) - quad, axis=1)))
    if np.max(np.linalg.norm(new - order_top_first(quad), axis=1)) > det.get("vp_max_move", 0.5) * side:
        return None
    return new


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
    """Corners (tl, tr, br, bl, image px), rows, cols, confidence, warnings; no warp.

    With ``[detect] tile_net`` set, two tile maps are tried -- the network's (mixed with the
    per-pixel model's by ``tile_net_weight``) and the per-pixel model's alone. The same grid
    with corners within ``outline_agree`` of a side: the per-pixel outline. Otherwise the
    surer row and column count wins (ties: the network's). The network sees a lake on a blue
    mat for what it is; the per-pixel map has the sharper outline, where the network's spreads
    onto a wooden table beside other tiles (on the dev phone photos its outlines read 5 more
    squares wrong).
    """
    det = _section(cfg, "detect")
    if image is None or image.ndim != 3 or image.shape[0] < 16 or image.shape[1] < 16:
        raise PhotoError("the image is too small to hold a kingdom")
    mid, s_mid = _downscale(image, int(det.get("refine_long_side", 800)))
    small, s = _downscale(mid, int(det.get("mask_long_side", 400)))
    s *= s_mid
    h, w = image.shape[:2]
    pixel = _pixel_map(small, det)
    if _is_rectified_board(pixel, det):
        corners = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32)
        n = size or 5
        return corners, n, n, 0.9, []
    maps = [pixel]
    if det.get("tile_net"):
        mix = float(det.get("tile_net_weight", 1.0))
        maps.insert(0, mix * _tile_net(det).probability(small) + (1.0 - mix) * pixel)
    gray_mid = cv2.cvtColor(mid, cv2.COLOR_BGR2GRAY)
    edges = _edge_map(gray_mid) if det.get("refine", True) else None
    found = [f for f in (_outline(prob, mid, gray_mid, edges, s, s_mid, image.shape, det)
                         for prob in maps) if f is not None]
    if not found:
        raise PhotoError(NO_KINGDOM)
    if len(found) == 2 and found[0][1:3] == found[1][1:3] and corner_error(
            found[0][0], found[1][0], any_first=True) <= det.get("outline_agree", 0.1):
        return found[1]  # the same grid in the same place: the per-pixel map's sharper outline
    return max(found, key=lambda f: f[3])  # the surer count; ties: the network's


def _outline(prob, mid, gray_mid, edges, s, s_mid, shape, det):
    """From one tile map: corners, rows, cols, confidence, warnings; None without a blob.
    ``mid``: the photo at the refinement size, ``gray_mid`` its grey, ``edges`` its edge map
    (None: no corner refinement); ``s``, ``s_mid``: their scales against the photo."""
    h, w = shape[:2]
    warnings: list[str] = []
    blob = _blob(prob, det)
    if blob is None:
        return None
    core = blob
    r_open = int(round(det.get("tangent_open", 0.0)
                       * float(cv2.distanceTransform(blob, cv2.DIST_L2, 3).max())))
    if r_open > 0:  # thin appendages (a table edge, a light strip) must not hold a side
        opened = _largest(cv2.morphologyEx(blob, cv2.MORPH_OPEN, _disk(r_open)))
        if opened is not None:
            core = opened
    contours, _ = cv2.findContours(core, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    cnt = max(contours, key=cv2.contourArea)
    ys, xs = np.nonzero(core)
    xs, ys = xs + 0.5, ys + 0.5
    pick = np.random.default_rng(0).choice(len(xs), min(int(det.get("inside_points", 300)), len(xs)), replace=False)
    quad = fit_quad(cnt, det, np.stack([xs[pick], ys[pick]], 1).astype(np.float64))
    if quad is None:
        quad = cv2.boxPoints(cv2.minAreaRect(cnt)).astype(np.float32)
    quad = order_top_first(quad)
    zoom = s_mid / s
    if det.get("use_vanishing_points", True):
        region = cv2.dilate(core, np.ones((5, 5), np.uint8))
        region = cv2.resize(region, (mid.shape[1], mid.shape[0]), interpolation=cv2.INTER_NEAREST)
        segs = _segments(gray_mid, region, int(det.get("segment_side", 600))) / zoom
        blob_pts = np.stack([xs, ys], 1).astype(np.float64)
        for _ in range(int(det.get("vp_rounds", 2))):
            new = vp_quad(segs, quad, blob_pts, det)
            if new is None:
                break
            quad = new
    # rectify at a working resolution and count the cells
    work = int(det.get("count_side", 280))
    Hq = cv2.getPerspectiveTransform(quad, np.array([[0, 0], [work, 0], [work, work], [0, work]],
                                                    np.float32))
    rect = cv2.warpPerspective(mid, Hq @ np.diag([1 / zoom, 1 / zoom, 1.0]), (work, work), flags=cv2.INTER_LINEAR)
    tiles = cv2.warpPerspective(prob, Hq, (work, work), flags=cv2.INTER_LINEAR) > 0.5
    aspect = _focal_aspect(quad / s, shape)
    rows, cols, conf = _count_cells(rect, tiles, aspect, det)
    if edges is not None:
        quad = refine_corners(edges, quad * zoom, rows, cols, det, prob, 1.0 / zoom) / zoom
    corners = (quad / s).astype(np.float32)
    hx, hy = blob.shape[1] - 1, blob.shape[0] - 1
    ys, xs = np.nonzero(blob)
    tol = 0.01 * max(h, w)
    outside = np.any(corners < -tol) or np.any(corners[:, 0] > w + tol) or np.any(
        corners[:, 1] > h + tol)
    if outside or xs.min() == 0 or ys.min() == 0 or xs.max() == hx or ys.max() == hy:
        warnings.append("part of the kingdom may be outside the photo: keep the whole "
                        "kingdom in the frame")
    if conf < det.get("warn_confidence", 0.3):
        warnings.append(f"the grid size ({rows} x {cols}) is uncertain; check it")
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

def corner_error(found: np.ndarray, truth: np.ndarray, any_first: bool = False) -> float:
    """Largest corner distance as a fraction of the labelled board's mean side length.
    ``any_first``: the smallest such error over the four choices of ``found``'s first corner
    (a kingdom has no "up": a board at 45 degrees has two top sides)."""
    side = np.mean(np.linalg.norm(np.roll(truth, -1, axis=0) - truth, axis=1))
    starts = range(4) if any_first else (0,)
    return float(min(np.max(np.linalg.norm(np.roll(found, k, axis=0) - truth, axis=1))
                     for k in starts) / side)


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
    lines = ["[detect.pixel_model]"]
    for k, v in model.items():
        lines.append(f"{k} = {fmt(v)}" if isinstance(v, list) else f"{k} = {v:.6g}")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m vision.detect",
                                 description="Evaluate kingdom detection on the dev photos.")
    ap.add_argument("--fit-pixel-model", action="store_true",
                    help="fit the tile-likelihood model on the dev phone photos; print TOML")
    ap.add_argument("--with-synth", type=int, default=0, metavar="N",
                    help="with --fit-pixel-model: also fit on N generated scenes (vision.synth)")
    ap.add_argument("--hidden", type=int, default=0,
                    help="with --fit-pixel-model: a one-hidden-layer network of this width")
    ap.add_argument("--aau", action="store_true", help="also evaluate the AAU dev photos")
    ap.add_argument("--only", default=None, help="only photos whose name contains this")
    args = ap.parse_args(argv)
    from .datasets import load_aau, load_phone

    photos = load_phone()
    if args.fit_pixel_model:
        extra = synth_training_scenes(args.with_synth) if args.with_synth else ()
        print(_toml_model(fit_pixel_model(photos, extra=extra, hidden=args.hidden)))
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
