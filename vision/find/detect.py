"""Find the kingdom in a photo: the orchestration (``candidates``, ``locate``).

Pipeline (all thresholds in the ``[detect]`` section of ``config.toml``):

1. Downscale the photo (long side ``detect.mask_long_side``) and compute a per-pixel
   "tile likelihood" (``vision.find.tilemap``): a small model on colour and local texture (fitted
   weights in ``models/pixel_model.json``) and, with ``[detect] tile_net`` set, a second map
   from a small convolutional network (``vision.find.tilenet``, ``models/tiles.onnx``) that sees
   two squares around each pixel; steps 2-3 run on both maps (see ``locate``).
2. Keep the largest tile blob (``vision.find.tilemap.tile_blob``), fit a quadrilateral to it
   (``vision.find.outline``): sides of the simplified hull and outline, extended to meet (so cut
   corners of incomplete kingdoms are restored), refitted to the vanishing points of the tile
   edges. An image that is nearly all tiles is taken as an already rectified board (the AAU
   photos).
3. Rectify the quadrilateral and count rows and columns from the periodicity of tile edges
   (seams between tiles), constrained by the board's aspect ratio (``vision.find.gridcount``);
   move the corners so the grid lines lie on seams (``vision.find.corner_refine``).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import cv2
import numpy as np

from vision import config as _config
from vision.find.corner_refine import edge_map, refine_corners
from vision.find.frame import is_frame
from vision.errors import NO_KINGDOM, PhotoError
from vision.geometry import corner_error, same_grid
from vision.find.gridcount import COUNT_SIDE, count_cells, focal_aspect
from vision.find.lattice import fit_lattice
from vision.find.outline import (VP_ROUNDS, edge_segments, fit_quad, order_top_first, seam_quad,
                                 segments_in, vp_quad)
from vision.find.seams import seam_regions
from vision.find.tilemap import (disk, downscale, half_thickness, is_rectified_board, largest, pixel_map,
                      tile_blob, tile_net)


@dataclass(frozen=True, eq=False)
class Grid:
    """A ``rows x cols`` grid of squares on the photo: its corners (float32 (4, 2), tl, tr, br,
    bl) and how it was found (``kind``): "outline" for an outline's own grid; for another grid
    found for it, "lattice" (the outline's grid before the seams' lattice moved it), "blob"
    (the blob's own quadrilateral, before the vanishing points moved it), "zoom" (found again
    in a crop around a small outline) or "seams" (the quadrilateral along the seams' own
    directions)."""

    corners: np.ndarray
    rows: int
    cols: int
    kind: str = "outline"


@dataclass(frozen=True, eq=False)
class Outline:
    """One outline the detector found: its corners (image px, tl, tr, br, bl), the grid
    counted in it, how sure the count is (0..1), its warnings, and the other grids found for
    it (:class:`Grid`, of kinds other than "outline"), which the reader reads too, keeping
    the crisper reading."""

    corners: np.ndarray
    rows: int
    cols: int
    confidence: float
    warnings: tuple = ()
    alternatives: tuple = ()

    @property
    def grid(self) -> Grid:
        """The outline's own grid."""
        return Grid(self.corners, self.rows, self.cols)


def working_sizes(image: np.ndarray, refine_long_side: int, mask_long_side: int):
    """The two working sizes of a photo: ``(mid, s_mid, small, s)``, ``mid`` about
    ``refine_long_side`` px long (outlines are refined there) and ``small`` about
    ``mask_long_side`` (tile maps are made there), each with its scale from the photo. Raises
    ``PhotoError`` for an image that is not an 8-bit colour image or is too small."""
    if not isinstance(image, np.ndarray) or image.dtype != np.uint8 or image.ndim != 3 \
            or image.shape[2] != 3:
        raise PhotoError("expected an 8-bit colour (BGR) image: decode the photo with "
                         "vision.load_image")
    if image.shape[0] < 16 or image.shape[1] < 16:
        raise PhotoError("the image is too small to hold a kingdom")
    mid, s_mid = downscale(image, refine_long_side)
    small, s = downscale(mid, mask_long_side)
    return mid, s_mid, small, s * s_mid


def locate(image: np.ndarray, cfg=None, size: int | None = None) -> Outline:
    """The detector's first :class:`Outline` (corners, rows, cols, confidence, warnings); no
    warp, no other grids.

    With ``[detect] tile_net`` set, two tile maps are tried -- the network's (mixed with the
    per-pixel model's by ``tile_net_weight``) and the per-pixel model's alone. The same grid
    with corners within ``outline_agree`` of a side: the per-pixel outline. Otherwise the
    surer row and column count wins (ties: the network's). The network sees a lake on a blue
    mat for what it is; the per-pixel map has the sharper outline, where the network's spreads
    onto a wooden table beside other tiles (on the dev phone photos its outlines read 5 more
    squares wrong). The first of :func:`candidates`.
    """
    return next(candidates(image, cfg, size, fallback=False))


def candidates(image: np.ndarray, cfg=None, size: int | None = None, fallback: bool = True,
               alternatives: bool = False, zoom: bool = True, whole_board: bool = True):
    """Every :class:`Outline` found, best first (see :func:`locate`), made as they are asked
    for. The first is ``locate``'s choice; then the other tile map's outline and, for each of
    ``[detect] fallback_thresholds``, each map's blob at that tile threshold: the reader tries
    them in turn when what it read in one holds no kingdom (``fallback=False``: not these).
    Raises ``PhotoError`` (no kingdom) when there is none, or no more. ``alternatives``: each
    outline comes with its other grids (``Outline.alternatives``): its own grid before the
    seams' lattice (``vision.find.lattice``) moved it, and others (:func:`outline_in_map`);
    without, none. ``zoom`` (with ``alternatives``): when a map's outline is small in the
    photo (``[detect] zoom_below``), the first outline found in a crop around it
    (:func:`zoom_box`) and its other grids are that outline's other grids too (the first of
    kind "zoom"; each map's, as the surer count may be a tile-coloured table's): the tile maps are made at a fixed size, where a kingdom far from the camera
    is a few pixels a square; the reader keeps the crisper reading, as for the lattice's grid.
    ``whole_board``: an image that is tiles up to its borders
    (:func:`vision.find.tilemap.is_rectified_board`) is one board, taken whole (off for a crop
    cut around an outline, which holds table round the kingdom: there a tile-coloured table
    reads as tiles to the crop's borders)."""
    cfg = cfg if cfg is not None else _config.load()
    det, lat = cfg["detect"], cfg["lattice"]
    mid, s_mid, small, s = working_sizes(image, int(det["refine_long_side"]),
                                         int(det["mask_long_side"]))
    h, w = image.shape[:2]
    pixel = pixel_map(small, det)
    if whole_board and is_rectified_board(pixel, det):
        n = size or 5
        yield Outline(np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32), n, n, 0.9)
        return
    maps, cover = [pixel], pixel
    if det["tile_net"]:
        net = tile_net(det).probability(small)
        mix = float(det["tile_net_weight"])
        maps.insert(0, mix * net + (1.0 - mix) * pixel)
        mix = float(lat["cover_net_weight"])
        cover = mix * net + (1.0 - mix) * pixel
    gray_mid = cv2.cvtColor(mid, cv2.COLOR_BGR2GRAY)
    edges = edge_map(gray_mid) if det["refine"] else None
    # the lattice's tile map at the refinement size, once for every outline of the photo
    cover_mid = cv2.resize(cover, (mid.shape[1], mid.shape[0]), interpolation=cv2.INTER_LINEAR)

    frames = [int(n) for n in cfg["frame"]["square_frames"]]

    def outlines(d, probs=maps, own_cover=False):
        out = []
        for prob in probs:
            cov = cv2.resize(prob, mid.shape[1::-1]) if own_cover else cover_mid
            found = outline_in_map(prob, mid, gray_mid, edges, s, s_mid, image.shape, d, lat,
                                   cov, alternatives, frames)
            if found is not None:
                out.append(found)
        return out

    found = outlines(det)
    if len(found) == 2 and (found[0].rows, found[0].cols) == (found[1].rows, found[1].cols) \
            and corner_error(found[0].corners, found[1].corners,
                             any_first=True) <= det["outline_agree"]:
        found = found[1:]  # the same grid in the same place: the per-pixel map's sharper outline
    found.sort(key=lambda f: -f.confidence)   # the surer count first; ties: the network's
    # each map's outline small in the photo is found again nearer: the surer count may be the
    # table's (a field-yellow cloth), the other map's the kingdom's
    yield from (_zoomed(f, image, cfg, size) if zoom and alternatives else f for f in found)
    for threshold in det["fallback_thresholds"] if fallback else ():
        more = outlines(dict(det, prob_threshold=float(threshold)))
        if more and not found and zoom and alternatives:
            more[0] = _zoomed(more[0], image, cfg, size)
        found += more
        yield from more
    if fallback:
        # a table the tile maps take for tiles all over (a yellow cloth, blotches of terrain
        # colours): the regions its straight seams cross, each its own tile map and cover
        regions = [r.astype(np.float32) for r in seam_regions(gray_mid, small.shape[:2], det)]
        more = outlines(det, regions, own_cover=True)
        found += more
        yield from more
    if not found:
        raise PhotoError(NO_KINGDOM)


def zoom_box(corners, shape, det: dict):
    """``(x0, y0, x1, y1)``: the photo px around an outline ``corners`` whose longer side
    (of its bounding box) is under ``[detect] zoom_below`` of the photo's longer side, grown
    by ``zoom_margin`` times that side on every side (within the photo); None for a larger
    outline (or ``zoom_below`` 0)."""
    c = np.asarray(corners, np.float64).reshape(4, 2)
    lo, hi = c.min(0), c.max(0)
    side = float(max(hi - lo))
    h, w = shape[:2]
    if side >= float(det["zoom_below"]) * max(h, w):
        return None
    grow = float(det["zoom_margin"]) * side
    x0, y0 = np.floor(np.maximum(lo - grow, 0)).astype(int)
    x1, y1 = np.ceil(np.minimum(hi + grow, [w, h])).astype(int)
    if x1 - x0 < 16 or y1 - y0 < 16:
        return None
    return int(x0), int(y0), int(x1), int(y1)


def _zoomed(outline: Outline, image, cfg, size) -> Outline:
    """The photo's first outline, with the first grid found in a crop around it (kind "zoom")
    and that outline's own other grids added to its other grids when it is small in the photo
    (:func:`zoom_box`) and the crop's grid is not the outline's own (``[lattice]
    same_grid``)."""
    box = zoom_box(outline.corners, image.shape, cfg["detect"])
    near = next(_in_crop(image, box, cfg, size), None) if box is not None else None
    if near is None or same_grid(near.corners, near.rows, near.cols, outline.corners,
                                 outline.rows, outline.cols, float(cfg["lattice"]["same_grid"])):
        return outline          # nothing new found nearer: nothing more to read
    zoomed = Grid(near.corners, near.rows, near.cols, "zoom")
    return replace(outline, alternatives=outline.alternatives + (zoomed,) + near.alternatives)


def _in_crop(image, box, cfg, size):
    """The :class:`Outline` s of :func:`candidates` in the crop ``box`` of ``image`` (with
    their other grids; no fallback thresholds, no zoom), their corners in the photo's px;
    none when the crop holds no kingdom."""
    x0, y0, x1, y1 = box
    off = np.float32([x0, y0])
    try:
        for f in candidates(np.ascontiguousarray(image[y0:y1, x0:x1]), cfg, size,
                            fallback=False, alternatives=True, zoom=False, whole_board=False):
            yield replace(f, corners=np.asarray(f.corners, np.float32) + off, alternatives=tuple(
                replace(g, corners=np.asarray(g.corners, np.float32) + off)
                for g in f.alternatives))
    except PhotoError:
        return


def blob_offered(grid, own, frames) -> bool:
    """Whether the blob's own quadrilateral, counted ``own`` (rows, cols after its lattice),
    goes to the reader beside the vanishing points' grid ``grid``: only as a 5x5 / 7x7 frame
    of ``frames`` where the vanishing points' grid is none (a square kingdom's side pulled
    onto stripes; a half-built kingdom's blob a column short is never offered)."""
    return is_frame(*own, frames) and not is_frame(*grid, frames)


# blob points (about) that check a quadrilateral holds the blob
INSIDE_POINTS = 300
# the outline ignores blob parts thinner than this x the blob's half-thickness
TANGENT_OPEN = 0.1
# px: edge segments are found on the blob's box at most this long
SEGMENT_SIDE = 600
# the seams' quadrilateral uses segments inside the blob eroded by this share of its half-thickness
SEAM_CORE_ERODE = 0.15
# below this grid-count confidence a warning is added
WARN_CONFIDENCE = 0.3


def _grid_in(quad, mid, gray_mid, edges, s, s_mid, shape, det, lat, cover_mid, prob,
             frames=()):
    """The grid in a quadrilateral (tile-map px): rows and columns counted on the rectified
    photo (step 5), moved onto the seams' lattice (5b), corners refined onto the seams (6).
    Returns ``(grid, confidence, first)``: the :class:`Grid` found (tile-map px) and ``first``
    the quadrilateral's own grid (kind "lattice") when the lattice moved it, else None; with
    ``frames`` (sizes), None unless the count is an n x n frame of them (the rest is not
    worked out)."""
    zoom = s_mid / s
    work = COUNT_SIDE
    Hq = cv2.getPerspectiveTransform(quad, np.array([[0, 0], [work, 0], [work, work], [0, work]],
                                                    np.float32))
    rect = cv2.warpPerspective(mid, Hq @ np.diag([1 / zoom, 1 / zoom, 1.0]), (work, work),
                               flags=cv2.INTER_LINEAR)
    tiles = cv2.warpPerspective(prob, Hq, (work, work), flags=cv2.INTER_LINEAR) > 0.5
    aspect = focal_aspect(quad / s, shape, float(det["aspect_focal_spread"]))
    rows, cols, conf = count_cells(rect, tiles, aspect, det)
    if frames and not is_frame(rows, cols, frames):
        return None             # asked for a 5x5 / 7x7 frame only: this count is none
    first = None                # the outline's own grid when the lattice moved it
    if lat is not None:
        if cover_mid is None:
            cover_mid = cv2.resize(prob, (mid.shape[1], mid.shape[0]),
                                   interpolation=cv2.INTER_LINEAR)
        found = fit_lattice(mid, cover_mid, quad * zoom, rows, cols, lat, aspect)
        if found is not None:
            moved = not same_grid(found.corners / zoom, found.rows, found.cols, quad, rows, cols,
                                  float(lat["same_grid"]))
            if moved:
                first = Grid(quad, rows, cols, "lattice")
            quad, rows, cols = found.corners / zoom, found.rows, found.cols
    if edges is not None:
        quad = refine_corners(edges, quad * zoom, rows, cols, det, prob, 1.0 / zoom) / zoom
        if first is not None:
            first = replace(first, corners=refine_corners(
                edges, first.corners * zoom, first.rows, first.cols, det, prob, 1.0 / zoom) / zoom)
            if not _is_new(first, [Grid(quad, rows, cols)], lat):
                first = None    # refined onto the same seams: one grid, read once
    return Grid(quad, rows, cols), conf, first


def outline_in_map(prob, mid, gray_mid, edges, s, s_mid, shape, det, lat=None, cover_mid=None,
                   alternatives: bool = False, frames=()) -> Outline | None:
    """From one tile map: the :class:`Outline` found; None without a blob.
    ``mid``: the photo at the refinement size, ``gray_mid`` its grey, ``edges`` its edge map
    (None: no corner refinement); ``s``, ``s_mid``: their scales against the photo.
    ``lat``: the ``[lattice]`` section (None: no lattice, the outline's own count), whose
    squares are tiles by ``cover_mid`` (a tile map at ``mid``'s size; None: ``prob``). When
    the lattice moved the grid, the outline's own grid (kind "lattice") is one of its other
    grids (with ``alternatives``; without, it has none); when the vanishing points moved the
    blob's quadrilateral off a frame of ``frames`` (sizes) and the blob's own counts as one,
    that grid too (kind "blob"); when the grid is no such frame, the seams' own
    quadrilateral's (kind "seams"), when it counts as one."""
    h, w = shape[:2]
    warnings: list[str] = []
    blob = tile_blob(prob, det)
    if blob is None:
        return None
    core = blob
    r_open = int(round(TANGENT_OPEN * half_thickness(blob)))
    if r_open > 0:  # thin appendages (a table edge, a light strip) must not hold a side
        opened = largest(cv2.morphologyEx(blob, cv2.MORPH_OPEN, disk(r_open)))
        if opened is not None:
            core = opened
    contours, _ = cv2.findContours(core, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    cnt = max(contours, key=cv2.contourArea)
    ys, xs = np.nonzero(core)
    xs, ys = xs + 0.5, ys + 0.5
    pick = np.random.default_rng(0).choice(len(xs), min(INSIDE_POINTS, len(xs)), replace=False)
    quad = fit_quad(cnt, np.stack([xs[pick], ys[pick]], 1).astype(np.float64))
    if quad is None:
        quad = cv2.boxPoints(cv2.minAreaRect(cnt)).astype(np.float32)
    quad = order_top_first(quad)
    fitted = quad
    zoom = s_mid / s
    region = cv2.dilate(core, np.ones((5, 5), np.uint8))
    region = cv2.resize(region, (mid.shape[1], mid.shape[0]), interpolation=cv2.INTER_NEAREST)
    segs = edge_segments(gray_mid, region, SEGMENT_SIDE) / zoom
    blob_pts = np.stack([xs, ys], 1).astype(np.float64)
    for _ in range(VP_ROUNDS):
        new = vp_quad(segs, quad, blob_pts)
        if new is None:
            break
        quad = new
    moved = fitted is not quad      # the vanishing points moved the blob's quadrilateral
    grid = (mid, gray_mid, edges, s, s_mid, shape, det, lat, cover_mid, prob)
    found, conf, first = _grid_in(quad, *grid)
    quad, rows, cols = found.corners, found.rows, found.cols
    others = [] if first is None else [first]
    if lat is not None and moved and alternatives and frames \
            and not is_frame(rows, cols, frames):
        # the blob's own quadrilateral too, when the vanishing points moved it off a 5x5 or
        # 7x7 frame and the blob's own counts as one: stripes beside a kingdom pull a
        # vanishing point (the reader keeps the crisper reading)
        own = _grid_in(fitted, *grid, frames=frames)
        own = None if own is None else replace(own[0], kind="blob")
        if own is not None and blob_offered((rows, cols), (own.rows, own.cols), frames) \
                and _is_new(own, [found] + others, lat):
            others.append(own)
    if alternatives and frames and not is_frame(rows, cols, frames):
        # the seams' own directions, when the grid found is no 5x5 or 7x7 frame: a round blob
        # leaves the quadrilateral's turn to chance, and a striped or checked table beside
        # it pulls the vanishing points onto the table's lines
        seam = _seam_grid(segs, core, blob_pts, det, grid, frames)
        if seam is not None and _is_new(seam, [found] + others, lat):
            others.append(seam)
    corners = (quad / s).astype(np.float32)
    hx, hy = blob.shape[1] - 1, blob.shape[0] - 1
    bx, by, bw, bh = cv2.boundingRect(blob)     # the blob's extent (its pixels' least, most)
    tol = 0.01 * max(h, w)
    outside = np.any(corners < -tol) or np.any(corners[:, 0] > w + tol) or np.any(
        corners[:, 1] > h + tol)
    if outside or bx == 0 or by == 0 or bx + bw - 1 == hx or by + bh - 1 == hy:
        warnings.append("part of the kingdom may be outside the photo: keep the whole "
                        "kingdom in the frame")
    if conf < WARN_CONFIDENCE:
        warnings.append(f"the grid size ({rows} x {cols}) is uncertain; check it")
    return Outline(corners, rows, cols, conf, tuple(warnings), tuple(
        replace(o, corners=(o.corners / s).astype(np.float32)) for o in others)
                   if alternatives else ())


def _is_new(grid: Grid, known, lat) -> bool:
    """Whether ``grid`` is none of the ``known`` grids (``[lattice] same_grid``): each grid of
    an outline is read once."""
    return not any(same_grid(grid.corners, grid.rows, grid.cols, other.corners, other.rows,
                             other.cols, float(lat["same_grid"])) for other in known)


def _seam_grid(segs, core, pts, det, grid, frames):
    """The :class:`Grid` (kind "seams") of :func:`vision.find.outline.seam_quad` on the segments well
    inside the blob (``core`` eroded by ``SEAM_CORE_ERODE`` of its half-thickness:
    the table's lines at the rim are left out), when it counts as a 5x5 or 7x7 frame."""
    r = max(1, int(round(SEAM_CORE_ERODE * half_thickness(core))))
    quad = seam_quad(segments_in(segs, cv2.erode(core, disk(r))), pts)
    if quad is None:
        return None
    found = _grid_in(quad, *grid)[0]   # counted, then cut down by the seams' lattice
    return replace(found, kind="seams") if is_frame(found.rows, found.cols, frames) else None
