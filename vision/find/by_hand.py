"""The kingdom's outline given by hand: four corners instead of the detector's search.

The contract (``../shared/CONTRACT.md``, "Telling the reader where the kingdom is"): four points
in the photo's pixels *as stored* (before any EXIF turn), any corner first, clockwise or not;
``size`` 5 or 7, or decided here from the squares' seams inside the outline.

- ``parse_corners(text) -> (4, 2) array``: ``"X1,Y1,X2,Y2,X3,Y3,X4,Y4"``; ``OutlineError`` when
  the text is not eight numbers or the four points cannot be a kingdom's outline.
- ``order_outline(points) -> tl, tr, br, bl`` as the reader wants them (``detect.order_top_first``).
- ``check_outline(points, shape)``: distinct, convex, not flat, inside or near the photo.
- ``decide_size(image, corners) -> 5 | 7``: which grid's seams the outline shows.
- ``read_outline(reader, image, points, size=None)`` and ``read_photo_outline(reader, data,
  points, size=None)``: the ``Reading`` of the kingdom inside the outline.

Thresholds: ``[outline]`` in ``config.toml``.
"""
from __future__ import annotations

import math
import re

import cv2
import numpy as np

from engine.kingdom import SIZES
from vision import config as _config
from vision.find.corner_refine import refine_photo_outline
from vision.find.gridcount import COUNT_SIDE, line_strengths
from vision.find.outline import order_top_first
from vision.photo import files as photo_files

FORMAT = "X1,Y1,X2,Y2,X3,Y3,X4,Y4"
# px: two corners closer than this are one point (a mistake)
MIN_SIDE_PX = 16
# degrees: each inner angle of an outline lies between this and 180 minus it
MIN_ANGLE_DEG = 20
# corners may lie this share of the photo's longer side beyond it
OUTSIDE_TOLERANCE = 0.25
# share of the rectified side searched around each expected seam for the 5 / 7 decision
SEAM_WINDOW = 0.012


class OutlineError(ValueError):
    """The outline given by hand cannot be used; the message says how to give it."""


# ---------------------------------------------------------------- text


def parse_corners(text) -> np.ndarray:
    """The four points of ``"X1,Y1,...,X4,Y4"`` (commas, optional spaces) as a (4, 2) array.

    Raises ``OutlineError`` for anything but eight finite numbers making four distinct points of
    a convex, non-flat quadrilateral (whatever their order).
    """
    if not isinstance(text, str) or not text.strip():
        raise OutlineError(f"give the outline as eight numbers {FORMAT} (the kingdom's four "
                           "outer corners in the photo's pixels)")
    parts = [p for p in re.split(r"[,\s;]+", text.strip()) if p]
    if len(parts) != 8:
        raise OutlineError(f"the outline needs eight numbers {FORMAT} (x and y of each of the "
                           f"four corners), got {len(parts)}")
    values = []
    for p in parts:
        try:
            v = float(p)
        except ValueError:
            raise OutlineError(f"{p[:20]!r} in the outline is not a number: give {FORMAT} "
                               "in pixels, e.g. 120,80,900,95,880,860,110,840") from None
        if not math.isfinite(v):
            raise OutlineError(f"{p[:20]!r} in the outline is not a finite number: give "
                               f"{FORMAT} in pixels")
        values.append(v)
    points = np.array(values, np.float64).reshape(4, 2)
    check_shape(points)
    return points


# ---------------------------------------------------------------- geometry


def order_outline(points) -> np.ndarray:
    """tl, tr, br, bl (float32): clockwise in the photo, tl-tr the side nearest its top."""
    return order_top_first(np.asarray(points, np.float32).reshape(4, 2))


def check_shape(points) -> None:
    """Four distinct corners of a convex quadrilateral whose inner angles are not near 0 or 180
    degrees (any order); ``OutlineError`` saying what to change otherwise."""
    pts = np.asarray(points, np.float64).reshape(4, 2)
    min_side = MIN_SIDE_PX
    for i in range(4):
        for j in range(i + 1, 4):
            if np.linalg.norm(pts[i] - pts[j]) < min_side:
                raise OutlineError(
                    f"corners {i + 1} and {j + 1} of the outline are (nearly) the same point: "
                    "give the kingdom's four different outer corners")
    q = order_outline(pts).astype(np.float64)
    edges = np.roll(q, -1, axis=0) - q
    cross = edges[:, 0] * np.roll(edges, -1, axis=0)[:, 1] - edges[:, 1] * np.roll(edges, -1, axis=0)[:, 0]
    if not (np.all(cross > 0) or np.all(cross < 0)):
        raise OutlineError("the four corners do not make a convex outline (one lies inside the "
                           "others' triangle): give the kingdom's four outer corners")
    min_angle = MIN_ANGLE_DEG
    for k in range(4):
        a, b = -edges[k - 1], edges[k]
        cos = float(a @ b) / (np.linalg.norm(a) * np.linalg.norm(b))
        angle = math.degrees(math.acos(max(-1.0, min(1.0, cos))))
        if angle < min_angle or angle > 180.0 - min_angle:
            raise OutlineError(
                f"the outline is too flat (an inner angle of {angle:.0f} degrees; a kingdom seen "
                f"from above has angles between {min_angle:g} and {180 - min_angle:g}): give the "
                "kingdom's four outer corners")


def check_outline(points, shape) -> np.ndarray:
    """The outline ordered tl, tr, br, bl after ``check_shape`` and a check that it lies inside
    the photo of ``shape`` or near it (``OUTSIDE_TOLERANCE``)."""
    check_shape(points)
    pts = np.asarray(points, np.float64).reshape(4, 2)
    h, w = shape[:2]
    tol = OUTSIDE_TOLERANCE * max(h, w)
    for k, (x, y) in enumerate(pts):
        if x < -tol or y < -tol or x > w + tol or y > h + tol:
            raise OutlineError(
                f"corner {k + 1} of the outline ({x:g}, {y:g}) lies far outside the photo, which "
                f"is {w} x {h} pixels as stored: give the corners in the photo's own pixels")
    return order_outline(pts)


# ---------------------------------------------------------------- size


def _seam_evidence(profile: np.ndarray, n: int, window: float) -> float:
    raw = line_strengths(profile, n, window)
    return float(np.mean(np.log(np.maximum(raw, 1e-3))))


def decide_size(image: np.ndarray, corners) -> int:
    """5 or 7: the grid whose seams (tile edges every square) the outline's inside shows best
    (7 only when they beat 5's).

    The outline is rectified to ``vision.find.gridcount.COUNT_SIDE`` px; colour edges across
    each axis give a profile, and each grid scores the mean log strength of its interior lines
    over the profile's median (``vision.find.gridcount.line_strengths``).
    """
    side = COUNT_SIDE
    window = SEAM_WINDOW
    src = np.asarray(corners, np.float32).reshape(4, 2)
    dst = np.array([[0, 0], [side, 0], [side, side], [0, side]], np.float32)
    rect = cv2.warpPerspective(image, cv2.getPerspectiveTransform(src, dst), (side, side),
                               flags=cv2.INTER_AREA, borderMode=cv2.BORDER_REPLICATE)
    lab = cv2.cvtColor(rect, cv2.COLOR_BGR2LAB).astype(np.float32)
    gx = np.abs(cv2.Sobel(lab, cv2.CV_32F, 1, 0, ksize=3)).sum(2)
    gy = np.abs(cv2.Sobel(lab, cv2.CV_32F, 0, 1, ksize=3)).sum(2)
    px, py = gx.mean(0), gy.mean(1)
    score = {n: _seam_evidence(px, n, window) + _seam_evidence(py, n, window) for n in SIZES}
    return max(SIZES, key=lambda n: score[n])      # a tie: the first, the smaller


# ---------------------------------------------------------------- reading


def _on_seams(image, corners, n: int, cfg: dict) -> np.ndarray:
    """The outline's corners moved so its ``n x n`` grid lines lie on the tiles' seams, as the
    detector's are (``[outline] refine``; each corner at most ``[outline] refine_max_move`` of
    a square along x and along y: a hand is rougher than the detector)."""
    if not (cfg["outline"]["refine"] and cfg["detect"]["refine"]):
        return corners
    reach = float(cfg["outline"]["refine_max_move"])
    return refine_photo_outline(image, corners, n, n, dict(cfg["detect"], refine_max_move=reach))


def _size_by_reading(reader, image, given, n: int, corners, cfg: dict):
    """The seams' count ``n`` (its outline ``corners``) against the other square frame cut in
    the same given outline: the squares' reading decides when one count reads crisper than
    the other by ``[outline] size_read_margin`` (``vision.find.frame.crispness``, the squares as
    cut: cut on the tiles' own grid they read crisply), else the seams' count stands.
    Returns ``(n, corners)``."""
    from vision.find.frame import crispness, read_grid

    margin = float(cfg["outline"]["size_read_margin"])
    classifier = reader.classifier

    def crisp(k, q):
        return crispness(read_grid(image, q, k, k, classifier, cfg, True), classifier.t_terrain)

    other = next(k for k in SIZES if k != n)        # 5 <-> 7
    moved = _on_seams(image, given, other, cfg)
    if crisp(other, moved) > crisp(n, corners) + margin:
        return other, moved
    return n, corners


def read_outline(reader, image: np.ndarray, points, size: int | None = None, cfg=None):
    """The reader's ``Reading`` of the kingdom inside ``points`` (upright image pixels, any
    order): a ``size`` x ``size`` board, its corners moved onto the tiles' seams first
    (:func:`_on_seams`; the reading's ``corners`` are those). ``size`` None: the seams decide
    (:func:`decide_size`), overruled by the squares' reading when it is clear
    (:func:`_size_by_reading`, ``[outline] size_by_reading``)."""
    if size is not None and size not in SIZES:
        raise OutlineError(f"size must be 5 or 7 (squares on a side of the kingdom), got {size!r}")
    cfg = cfg if cfg is not None else getattr(reader, "cfg", None) or _config.load()
    given = check_outline(points, image.shape)
    n = size if size is not None else decide_size(image, given)
    corners = _on_seams(image, given, n, cfg)
    if size is None and cfg["outline"]["size_by_reading"]:
        n, corners = _size_by_reading(reader, image, given, n, corners, cfg)
    reading = reader.read(image, size=n, corners=corners, rows=n, cols=n)
    if size is None:
        reading.warnings.append(f"outline given by hand: read as {n}x{n} (give the size to "
                                "choose it yourself)")
    return reading


def read_photo_outline(reader, data: bytes, points, size: int | None = None, cfg=None):
    """Decode the photo's bytes and read the kingdom inside ``points`` given in its *stored*
    pixels (before the EXIF turn); returns ``(reading, upright_points)``, the reading's
    corners in the upright photo's pixels.

    The photo is decoded as ``score`` decodes it (``vision.photo.scale``: reduced with ``[io]
    read_long_side``, the decode the square classifier learnt from) unless the outline's
    squares, counted as a 7x7's, would come out under ``[io] whole_below_px`` there: then
    whole, as ``score`` reads such a kingdom again."""
    from vision.photo import scale

    cfg = cfg if cfg is not None else _config.load()
    photo = photo_files.open_photo(data, cfg)
    info = photo.info
    pts = np.asarray(points, np.float64).reshape(4, 2)
    check_outline(pts, (info.height, info.width))
    sides = np.linalg.norm(pts - np.roll(pts, -1, axis=0), axis=1)
    factor = scale.reading_reduction(photo, cfg, square_px=sides.min() / max(SIZES))
    image = photo_files.load_image(photo, cfg, reduce=factor)
    turn = photo_files.exif_orientation(photo.data)
    upright_shape = (info.width, info.height) if turn >= 5 else (info.height, info.width)
    if image.shape[:2] != tuple(-(-d // factor) for d in upright_shape):
        turn = 1       # the decoder did not turn it: nor do the points
    upright = photo_files.stored_to_upright(pts, turn, info.width, info.height)
    reading = read_outline(reader, image, scale.to_reduced_pixels(upright, factor), size, cfg)
    return scale.to_photo_pixels(reading, factor), upright
