"""Where a kingdom's seams are, when the tile maps cannot say: a table tile-coloured all over.

The tile maps (``vision.find.tilemap``) tell tile from table by colour and a little texture; a table
can look like tiles in both everywhere (a yellow floral cloth read as field, blotches of terrain
colours), and then their blob is the whole table. The kingdom's cardboard draws what no cloth
does: straight seams a square apart, running two ways. :func:`seam_regions` finds the regions
they cross, as tile maps of their own for :func:`vision.find.detect.candidates`.
"""
from __future__ import annotations

import cv2
import numpy as np

from vision.find.outline import SEAM_APART_DEG, SEAM_BIN_DEG, seam_directions
from vision.find.tilemap import disk

# segments at least this share of the long side (at the refinement size) ...
MIN_LENGTH = 0.012
# ... within this many degrees of the two main directions are the seams ...
TOLERANCE_DEG = 10.0
# ... drawn at the tile maps' size and closed by a disk of this share of its long side ...
CLOSE = 0.0075
# ... into regions of at least this share of the map
MIN_AREA = 0.004


def seam_regions(gray: np.ndarray, shape: tuple, det: dict) -> list[np.ndarray]:
    """Regions crossed by straight seams, best first: masks (uint8 0/1) of ``shape`` (rows,
    cols: the tile maps' size) for outlines found without the tile maps.

    The straight edge segments of ``gray`` (the photo at the refinement size) at least
    ``MIN_LENGTH`` of its long side, within ``TOLERANCE_DEG`` of the two directions most of
    their length runs (:func:`vision.find.outline.seam_directions`), are drawn at ``shape``;
    closed by a disk of ``CLOSE`` of the long side, each piece's convex hull is a region.
    Regions under ``MIN_AREA`` of the map are dropped; the rest are ranked by area times the
    share of their pixels on a seam, and the first ``[detect] seam_regions`` kept. Curved edges (blotches, flowers) and short ones (dots, grain)
    make none; straight edges of clutter (a box lid, a score pad) do, and hold no castle."""
    keep_n = int(det["seam_regions"])
    if keep_n <= 0 or gray.ndim != 2 or min(gray.shape) < 8:
        return []
    found = cv2.createLineSegmentDetector().detect(gray)[0]
    if found is None:
        return []
    segs = found.reshape(-1, 4)
    length = np.linalg.norm(segs[:, 2:] - segs[:, :2], axis=1)
    segs = segs[length >= MIN_LENGTH * max(gray.shape)]
    dirs = seam_directions(segs, SEAM_BIN_DEG, SEAM_APART_DEG)
    if dirs is None:
        return []
    d = segs[:, 2:] - segs[:, :2]
    ang = np.degrees(np.arctan2(d[:, 1], d[:, 0])) % 180.0
    tol = TOLERANCE_DEG
    along = np.zeros(len(segs), bool)
    for v in dirs:
        a = np.degrees(np.arctan2(v[1], v[0])) % 180.0
        along |= np.abs((ang - a + 90.0) % 180.0 - 90.0) <= tol
    h, w = int(shape[0]), int(shape[1])
    f = w / gray.shape[1]
    lines = np.zeros((h, w), np.uint8)
    for x1, y1, x2, y2 in np.round(segs[along] * f).astype(np.int32):
        cv2.line(lines, (int(x1), int(y1)), (int(x2), int(y2)), 1, 1)
    r = max(1, int(round(CLOSE * max(h, w))))
    closed = cv2.morphologyEx(lines, cv2.MORPH_CLOSE, disk(r))
    n, labels, stats, _ = cv2.connectedComponentsWithStats(closed)
    least = MIN_AREA * h * w
    ranked = []
    for i in range(1, n):
        if stats[i, cv2.CC_STAT_WIDTH] * stats[i, cv2.CC_STAT_HEIGHT] < least:
            continue        # its hull lies inside its box: too small whatever its shape
        hull = np.zeros((h, w), np.uint8)
        cv2.fillConvexPoly(hull, cv2.convexHull(cv2.findNonZero((labels == i).astype(np.uint8))), 1)
        area = int(hull.sum())
        if area < least:
            continue
        ranked.append((area * float(lines[hull > 0].mean()), i, hull))
    ranked.sort(key=lambda t: (-t[0], t[1]))
    return [hull for _, _, hull in ranked[:keep_n]]
