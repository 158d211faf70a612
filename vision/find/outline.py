"""Outline fitting: the quadrilateral around a blob of square tiles (``fit_quad``), refitted to
the vanishing points of the tile edges (``vp_quad``)."""
from __future__ import annotations

from itertools import combinations

import cv2
import numpy as np

# outline points (about) that score how well a quadrilateral's sides lie on the outline
SUPPORT_POINTS = 240
# the convex hull is simplified to at most this many sides
MAX_HULL_SIDES = 8
# the outline's longest straight runs also tried as sides (a thin protrusion hides one)
MAX_OUTLINE_SIDES = 6
# outline points this close to a side (share of sqrt(blob area)) lie on it
SIDE_TOLERANCE = 0.03
# a quadrilateral's corners lie within this share of the blob's size from the blob ...
MAX_CORNER_OUT = 0.25
# ... its area at most this many times the hull's ...
MAX_QUAD_AREA_RATIO = 2.5
# ... and it holds at least this share of the blob's points
MIN_INSIDE = 0.97
# degrees: a segment this close to a side's direction belongs to that side's vanishing point
VP_FAMILY_DEG = 20.0
# px of the tile map: shorter segments are left out of the vanishing points
VP_MIN_SEGMENT = 8.0
# the sides bound the blob up to this share of its points on the far side
TANGENT_QUANTILE = 0.002
# a refit moving a corner more than this share of a side is refused (a wrong split)
VP_MAX_MOVE = 0.5
# the quadrilateral is refitted to the vanishing points this many times
VP_ROUNDS = 2
# degrees: segment directions are binned this wide (weighted by length) ...
SEAM_BIN_DEG = 2.0
# ... and the second direction lies at least this far from the first
SEAM_APART_DEG = 40.0


def line_intersection(p1, p2, q1, q2):
    d1, d2 = p2 - p1, q2 - q1
    den = d1[0] * d2[1] - d1[1] * d2[0]
    if abs(den) < 1e-9:
        return None
    t = ((q1[0] - p1[0]) * d2[1] - (q1[1] - p1[1]) * d2[0]) / den
    return p1 + t * d1


def _intersections(p1: np.ndarray, p2: np.ndarray) -> np.ndarray:
    """(m, m, 2): where line i (through ``p1[i]``, ``p2[i]``) meets line j, as
    :func:`line_intersection` finds it; NaN for (near) parallel lines."""
    d = p2 - p1
    den = d[:, None, 0] * d[None, :, 1] - d[:, None, 1] * d[None, :, 0]
    parallel = np.abs(den) < 1e-9
    dq = p1[None, :, :] - p1[:, None, :]                         # q1 - p1 for line i, line j
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (dq[..., 0] * d[None, :, 1] - dq[..., 1] * d[None, :, 0]) / np.where(parallel, 1.0, den)
    out = p1[:, None, :] + t[..., None] * d[:, None, :]
    out[parallel] = np.nan
    return out


def _fit_line(points: np.ndarray):
    vx, vy, x0, y0 = cv2.fitLine(points.astype(np.float32), cv2.DIST_HUBER, 0, 0.01, 0.01).ravel()
    return np.array([x0, y0], np.float64), np.array([x0 + vx, y0 + vy], np.float64)


def _seg_dist(pts: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    d = b - a
    L2 = float(d @ d) + 1e-12
    t = np.clip(((pts - a) @ d) / L2, 0.0, 1.0)
    return np.linalg.norm(pts - (a + t[:, None] * d), axis=1)


def _inside_fractions(quads: np.ndarray, signs: np.ndarray, pts: np.ndarray, tol: float
                      ) -> np.ndarray:
    """Fraction of ``pts`` inside each convex quad of ``quads`` (K, 4, 2; grown by ``tol``),
    ``signs`` (K) the signs of their oriented areas: on the inner side of all four sides."""
    a = quads
    d = np.roll(quads, -1, axis=1) - a                                   # (K, 4, 2)
    cross = (d[..., 0, None] * (pts[None, None, :, 1] - a[..., 1, None])
             - d[..., 1, None] * (pts[None, None, :, 0] - a[..., 0, None])) \
        / (np.hypot(d[..., 0], d[..., 1]) + 1e-12)[..., None]
    ok = signs[:, None, None] * cross >= -tol
    return (ok[:, 0] & ok[:, 1] & ok[:, 2] & ok[:, 3]).sum(axis=1) / len(pts)


def _seg_dists(pts: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """:func:`_seg_dist` of ``pts`` to each segment ``a[i]``-``b[i]``: (len(a), len(pts)).
    The projections are one stacked matrix product, each segment's the same BLAS product
    as ``_seg_dist``'s (elementwise sums can round differently: fused multiply-adds)."""
    d = b - a
    L2 = np.array([float(v @ v) for v in d]) + 1e-12
    diff = pts[None, :, :] - a[:, None, :]
    t = np.clip((diff @ d[:, :, None])[..., 0] / L2[:, None], 0.0, 1.0)
    # the norm of each point's offset from its foot on the segment, x and y apart (numpy's
    # norm adds the two squares too, but slowly over a short axis)
    rx = pts[None, :, 0] - (a[:, 0, None] + t * d[:, 0, None])
    ry = pts[None, :, 1] - (a[:, 1, None] + t * d[:, 1, None])
    return np.sqrt(rx * rx + ry * ry)


def fit_quad(contour: np.ndarray, blob_pts: np.ndarray | None = None) -> np.ndarray | None:
    """Bounding quadrilateral of a blob of square tiles, robust to missing corners.

    Candidate sides are the edges of the simplified convex hull (:func:`_candidate_sides`);
    every choice of four of them (in order) whose quadrilateral encloses the hull
    (:func:`_fitting_quads`) is scored by how much of the blob's outline lies on it (a hull
    edge bridging a missing corner has no outline on it, :func:`_best_supported`). The best
    quad's sides are then refitted to the outline points near them (:func:`_refit_sides`).
    """
    cnt = contour.reshape(-1, 2).astype(np.float64)
    if len(cnt) < 8:
        return None
    hull = cv2.convexHull(contour.astype(np.float32)).reshape(-1, 2)
    lines = _candidate_sides(contour, cnt, hull)
    if len(lines) < 4:
        return None
    tol = SIDE_TOLERANCE * np.sqrt(max(cv2.contourArea(contour), 1.0))
    shapes, areas, signs = _fitting_quads(lines, cnt, hull)
    support = cnt[::max(1, len(cnt) // SUPPORT_POINTS)]
    best = _best_supported(shapes, areas, signs, cnt if blob_pts is None else blob_pts,
                           support, tol)
    if best is None:
        return None
    return _refit_sides(best, cnt, tol)


def _candidate_sides(contour: np.ndarray, cnt: np.ndarray, hull: np.ndarray) -> list:
    """The sides a quadrilateral may take, ``(a, b)`` point pairs in order round the outline's
    centre: the edges of the convex hull simplified to at most ``MAX_HULL_SIDES`` sides, plus
    the outline's ``MAX_OUTLINE_SIDES`` longest straight runs (a thin protrusion, e.g. a light
    strip touching the kingdom, hides a side from the hull)."""
    perim = cv2.arcLength(hull.reshape(-1, 1, 2), True)
    poly = hull
    for eps in (0.005, 0.01, 0.015, 0.02, 0.03, 0.04, 0.06):
        poly = cv2.approxPolyDP(hull.reshape(-1, 1, 2), eps * perim, True).reshape(-1, 2)
        if len(poly) <= MAX_HULL_SIDES:
            break
    poly = poly.astype(np.float64)
    runs = cv2.approxPolyDP(contour.astype(np.float32), 0.015 * perim, True).reshape(-1, 2)
    runs = runs.astype(np.float64)
    cands = [(poly[i], poly[(i + 1) % len(poly)]) for i in range(len(poly))]
    run_edges = [(runs[i], runs[(i + 1) % len(runs)]) for i in range(len(runs))]
    run_edges.sort(key=lambda e: -np.hypot(*(e[1] - e[0])))
    for a, b in run_edges[:MAX_OUTLINE_SIDES]:
        if np.hypot(*(b - a)) > 0.1 * perim / 4:
            cands.append((a, b))
    centre = cnt.mean(0)
    mids = np.array([(a + b) / 2 for a, b in cands])
    order = np.argsort(np.arctan2(mids[:, 1] - centre[1], mids[:, 0] - centre[0]))
    return [cands[i] for i in order]


def _fitting_quads(lines: list, cnt: np.ndarray, hull: np.ndarray) -> tuple[list, list, list]:
    """The quadrilaterals of every four of ``lines`` (in order) that may bound the blob:
    convex, their corners within ``MAX_CORNER_OUT`` of the outline's span from it, their area
    at most ``MAX_QUAD_AREA_RATIO`` times the hull's. Returns their corners, areas and the
    signs of their oriented areas."""
    hull_area = abs(cv2.contourArea(hull.reshape(-1, 1, 2)))
    span = max(np.ptp(cnt[:, 0]), np.ptp(cnt[:, 1]))
    margin = MAX_CORNER_OUT * span
    lo, hi = cnt.min(0) - margin, cnt.max(0) + margin
    # every pair of candidate lines meets once; each choice of four (in order) is a quad
    meet = _intersections(np.array([a for a, _ in lines]), np.array([b for _, b in lines]))
    combos = np.array(list(combinations(range(len(lines)), 4)), np.intp)
    quads = meet[combos, np.roll(combos, -1, axis=1)]            # (K, 4 corners, 2)
    near = ~np.isnan(quads).any(axis=(1, 2))
    near[near] = ~(np.any(quads[near] < lo, axis=(1, 2)) | np.any(quads[near] > hi, axis=(1, 2)))
    shapes, areas, signs = [], [], []
    for quad in quads[near]:                  # corners far from the blob (or none) are out
        q32 = quad.astype(np.float32).reshape(-1, 1, 2)
        if not cv2.isContourConvex(q32):
            continue
        oriented = cv2.contourArea(q32, oriented=True)
        area = abs(oriented)
        if area > MAX_QUAD_AREA_RATIO * hull_area:
            continue
        shapes.append(quad)
        areas.append(area)
        signs.append(np.sign(oriented) or 1.0)
    return shapes, areas, signs


def _best_supported(shapes: list, areas: list, signs: list, blob_pts: np.ndarray,
                    support: np.ndarray, tol: float) -> np.ndarray | None:
    """Of the quads (:func:`_fitting_quads`) that hold at least ``MIN_INSIDE`` of
    ``blob_pts``, the one with the most ``support`` points (the outline's) within ``tol`` of
    a side; ties: the smaller, the first. None when none holds the blob."""
    if not shapes:
        return None
    # every convex quad of a fitting size at once (a few array passes instead of thousands
    # of small calls a photo)
    shapes = np.array(shapes)
    inside = _inside_fractions(shapes, np.array(signs), blob_pts, tol)
    held = np.flatnonzero(inside >= MIN_INSIDE)
    best, best_key = None, None
    if len(held):
        dist = _seg_dists(support, shapes[held].reshape(-1, 2),
                          np.roll(shapes[held], -1, axis=1).reshape(-1, 2))
        supports = (dist.reshape(len(held), 4, -1).min(axis=1) <= tol).sum(axis=1)
        for i, count in zip(held, supports):
            key = (int(count), -areas[i])
            if best_key is None or key > best_key:
                best, best_key = shapes[i], key
    return best


def _refit_sides(best: np.ndarray, cnt: np.ndarray, tol: float) -> np.ndarray:
    """``best``'s sides each refitted to the outline points within ``tol`` of it, the corners
    where they meet (``best``'s own, turned one corner, when they make no convex quad)."""
    sides = []
    for k in range(4):
        a, b = best[k], best[(k + 1) % 4]
        near = cnt[_seg_dist(cnt, a, b) <= tol]
        sides.append(_fit_line(near) if len(near) >= 5 else (a, b))
    quad = []
    for k in range(4):
        c = line_intersection(*sides[k], *sides[(k + 1) % 4])
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


def edge_segments(gray: np.ndarray, mask: np.ndarray, max_side: int = 600) -> np.ndarray:
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
    return segments_in(found.reshape(-1, 4) / f + np.float32([x, y, x, y]), mask)


def segments_in(seg: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The segments (N, 4: x1, y1, x2, y2) whose midpoint lies on ``mask`` (in its px)."""
    mx = ((seg[:, 0] + seg[:, 2]) / 2).astype(int).clip(0, mask.shape[1] - 1)
    my = ((seg[:, 1] + seg[:, 3]) / 2).astype(int).clip(0, mask.shape[0] - 1)
    return seg[mask[my, mx] > 0]


def _norms(v: np.ndarray) -> np.ndarray:
    """Length of each row of an (n, 2) array: ``np.linalg.norm(v, axis=1)``'s values (the
    same two squares added) without its slow reduction over a 2-long axis."""
    return np.sqrt(v[:, 0] * v[:, 0] + v[:, 1] * v[:, 1])


def _vanishing_point(seg: np.ndarray, iters: int = 3, keep: float = 0.75) -> np.ndarray | None:
    """Homogeneous point (3,) where the segments' lines meet best (length-weighted, with
    the worst-fitting segments dropped each round)."""
    if len(seg) < 2:
        return None
    p1 = np.c_[seg[:, :2], np.ones(len(seg))]
    p2 = np.c_[seg[:, 2:], np.ones(len(seg))]
    lines = np.cross(p1, p2)
    lines /= _norms(lines[:, :2])[:, None] + 1e-12
    w = np.hypot(seg[:, 2] - seg[:, 0], seg[:, 3] - seg[:, 1])
    idx = np.arange(len(seg))
    v = None
    mid = (seg[:, :2] + seg[:, 2:]) / 2
    d_seg = seg[:, 2:] - seg[:, :2]
    seg_len = _norms(d_seg)
    for _ in range(iters):
        A = lines[idx] * w[idx, None]
        # V alone: LAPACK finds it the same way (the same vector, bit for bit) without the
        # k x k U a full decomposition builds; with fewer than 3 rows V needs the full form
        v = np.linalg.svd(A, full_matrices=len(A) < 3)[2][-1]
        # angle between each segment and the direction from its midpoint to v
        d_vp = v[:2] - mid * v[2]
        dot = d_seg[:, 0] * d_vp[:, 0] + d_seg[:, 1] * d_vp[:, 1]
        cosang = np.abs(dot) / (seg_len * _norms(d_vp) + 1e-12)
        err = np.arccos(np.clip(cosang, 0, 1))
        order = np.argsort(err)
        idx = order[:max(2, int(keep * len(order)))]
    return v


def _wrap(y: np.ndarray, period: float, out: np.ndarray | None = None) -> np.ndarray:
    """``y % period`` for ``y`` within (-period, 2 * period), as numpy's ``%`` gives it (bit for
    bit: ``y - period`` is exact there) without its slow division; into ``out`` (``y`` itself
    may be it: each value is moved once, by where it lay before)."""
    below, above = y < 0, y >= period
    out = np.array(y, copy=True) if out is None else out      # a float array's own type
    if out is not y:
        out[...] = y
    np.add(out, period, out=out, where=below)
    np.subtract(out, period, out=out, where=above)
    return out


def _tangent_lines(v: np.ndarray, pts: np.ndarray, q: float, centre: np.ndarray | None = None):
    """The two lines through vanishing point ``v`` that bound ``pts`` (robust quantile ``q``);
    each as a pair of points. ``centre``: ``pts.mean(0)``, when the caller has it."""
    centre = pts.mean(0) if centre is None else centre
    if abs(v[2]) < 1e-9 * np.linalg.norm(v[:2]):
        vp = centre + v[:2] / np.linalg.norm(v[:2]) * 1e7
    else:
        vp = v[:2] / v[2]
    ref = np.arctan2(*(centre - vp)[::-1])
    ang = np.arctan2(pts[:, 1] - vp[1], pts[:, 0] - vp[0])
    ang -= ref
    ang += np.pi
    _wrap(ang, 2 * np.pi, out=ang)
    ang -= np.pi
    lo, hi = np.quantile(ang, [q, 1 - q])
    out = []
    for a in (lo, hi):
        d = np.array([np.cos(a + ref), np.sin(a + ref)])
        # a second point on the line, near the points
        r = float(np.dot(centre - vp, d))
        out.append((vp, vp + r * d))
    return out


def vp_quad(segments: np.ndarray, quad: np.ndarray, pts: np.ndarray):
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
    tol = VP_FAMILY_DEG
    length = np.hypot(segments[:, 2] - segments[:, 0], segments[:, 3] - segments[:, 1])
    long_enough = length >= VP_MIN_SEGMENT
    horiz = segments[(ang < tol) & long_enough]
    vert = segments[(ang > 90 - tol) & long_enough]
    if len(horiz) < 3 or len(vert) < 3:
        return None
    vh, vv = _vanishing_point(horiz), _vanishing_point(vert)
    if vh is None or vv is None:
        return None
    q = TANGENT_QUANTILE
    centre = pts.mean(0)
    top, bottom = _tangent_lines(vh, pts, q, centre)
    left, right = _tangent_lines(vv, pts, q, centre)
    corners = []
    for a, b in ((top, left), (top, right), (bottom, right), (bottom, left)):
        c = line_intersection(*a, *b)
        if c is None:
            return None
        corners.append(c)
    new = order_top_first(np.array(corners, np.float32))
    if not cv2.isContourConvex(new.reshape(-1, 1, 2)):
        return None
    # the refit must stay near the first guess (a wrong split of the segments flies away)
    side = float(np.mean(np.linalg.norm(np.roll(quad, -1, 0) - quad, axis=1)))
    if np.max(np.linalg.norm(new - order_top_first(quad), axis=1)) > VP_MAX_MOVE * side:
        return None
    return new


def seam_directions(segments: np.ndarray, bin_deg: float, apart_deg: float):
    """The two directions (unit vectors) along which most of the segments' length lies, at
    least ``apart_deg`` apart: a kingdom's seams and sides run two ways, whatever the blob's
    shape. Angles are binned ``bin_deg`` wide (mod 180 degrees, smoothed over the neighbouring
    bins). None with no segment or no second direction."""
    if len(segments) < 2:
        return None
    d = segments[:, 2:] - segments[:, :2]
    length = _norms(d)
    ang = np.degrees(np.arctan2(d[:, 1], d[:, 0])) % 180.0
    n = max(4, int(round(180.0 / bin_deg)))
    hist = np.bincount((ang / 180.0 * n).astype(int) % n, weights=length, minlength=n)
    hist = hist + 0.5 * (np.roll(hist, 1) + np.roll(hist, -1))
    first = int(np.argmax(hist))
    apart = np.abs((np.arange(n) - first + n / 2) % n - n / 2) * (180.0 / n)
    rest = np.where(apart >= apart_deg, hist, -1.0)
    second = int(np.argmax(rest))
    if rest[second] <= 0:
        return None
    out = []
    for b in (first, second):
        a = np.radians((b + 0.5) * 180.0 / n)
        out.append(np.array([np.cos(a), np.sin(a), 0.0]))
    return out


def seam_quad(segments: np.ndarray, pts: np.ndarray) -> np.ndarray | None:
    """A quadrilateral for a blob of square tiles (points ``pts``) from the directions of
    its edge ``segments`` alone (found inside the blob, away from its rim): the
    parallelogram with sides along the two main directions (:func:`seam_directions`,
    ``SEAM_BIN_DEG``, ``SEAM_APART_DEG``) that bounds the points, refitted to the
    vanishing points (:func:`vp_quad`, ``VP_ROUNDS`` times). :func:`fit_quad` takes its sides
    from the blob's outline, which says nothing of the kingdom's turn when the blob is round
    (a glare patch or a fringe of a tile-coloured table taken in); the stripes of a table
    beside the kingdom then pull the vanishing points onto the table's own lines. None
    without two directions."""
    dirs = seam_directions(segments, SEAM_BIN_DEG, SEAM_APART_DEG)
    if dirs is None or len(pts) < 4:
        return None
    q = TANGENT_QUANTILE
    centre = pts.mean(0)
    (a1, a2), (b1, b2) = (_tangent_lines(v, pts, q, centre) for v in dirs)
    corners = [line_intersection(*a, *b) for a, b in ((a1, b1), (a1, b2), (a2, b2), (a2, b1))]
    if any(c is None for c in corners):
        return None
    quad = order_top_first(np.array(corners, np.float32))
    if not cv2.isContourConvex(quad.reshape(-1, 1, 2)):
        return None
    for _ in range(VP_ROUNDS):
        new = vp_quad(segments, quad, pts)
        if new is None:
            break
        quad = new
    return quad
