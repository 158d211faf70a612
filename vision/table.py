"""Whole-table photos: every kingdom in one photo (``find_kingdoms``, ``read_table``).

At the end of a game the kingdoms lie side by side on the table. The detector's building blocks
(``vision.tilemap`` tile maps, ``vision.detect.outline_in_map`` outline + grid count + corners)
run on every tile blob big enough to be a kingdom instead of only the largest; each found outline
is read by ``Reader.read(image, corners=..., rows=..., cols=...)`` and kept when the classifier
reads a kingdom (``is_kingdom``: a castle, at least ``[table] min_tiles`` domino halves, at least
``[table] min_side`` squares along each side, a grid count at least ``[table]
min_grid_confidence`` sure). A few loose
dominoes, the draft line, a box lid or a score pad are not kingdoms. A kingdom whose outline
reaches the photo's edge is kept but flagged ``cut`` (with a warning): it is not scored as
complete.

Numbering (``number_order``): by the kingdom's centre from left to right; centres closer in x
than ``[table] column_tolerance`` x the median kingdom side count as a tie (one column) and are
numbered top to bottom.

Settings: the ``[table]`` section of ``config.toml`` (with ``[detect]`` for everything else).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import cv2
import numpy as np

from vision import config as _config
from vision.corner_refine import edge_map
from vision.detect import outline_in_map, working_sizes
from vision.errors import NO_KINGDOM, PhotoError
from vision.reader import too_few_tiles
from vision.tilemap import disk, pixel_map, tile_net

CUT_WARNING = ("this kingdom is cut by the photo's edge: it is not scored as complete; take the "
               "photo again with every kingdom whole in the frame")


@dataclass(frozen=True)
class Outline:
    """One kingdom's outline found in a table photo (image px, tl, tr, br, bl)."""

    corners: np.ndarray
    rows: int
    cols: int
    confidence: float
    cut: bool                        # the outline reaches the photo's edge
    warnings: tuple = ()


@dataclass(frozen=True)
class TableKingdom:
    """A kingdom read in a table photo: its number (0-based, see ``number_order``) and reading."""

    kingdom: int
    reading: object                  # vision.reader.Reading (its warnings include the cut one)
    cut: bool


def number_order(centres, sides=None, tolerance: float | None = None, cfg=None) -> list[int]:
    """Indices of ``centres`` ((x, y) each) in numbering order: left to right, and top to bottom
    among centres closer in x than ``tolerance`` (px; default ``[table] column_tolerance`` x the
    median of ``sides``, the kingdoms' side lengths) to the first centre of their column."""
    pts = np.asarray(centres, np.float64).reshape(-1, 2)
    if len(pts) == 0:
        return []
    if tolerance is None:
        if sides is None:
            raise ValueError("number_order needs the kingdoms' sides or a tolerance in pixels")
        tab = (cfg if cfg is not None else _config.load())["table"]
        tolerance = float(tab["column_tolerance"]) * float(np.median(np.asarray(sides, float)))
    by_x = sorted(range(len(pts)), key=lambda i: (pts[i, 0], pts[i, 1]))
    columns: list[list[int]] = []
    for i in by_x:
        if columns and pts[i, 0] - pts[columns[-1][0], 0] <= tolerance:
            columns[-1].append(i)
        else:
            columns.append([i])
    return [i for col in columns for i in sorted(col, key=lambda j: (pts[j, 1], pts[j, 0]))]


def _maps(small: np.ndarray, det, both: bool) -> list[np.ndarray]:
    """The tile maps to search: the network's (mixed with the per-pixel model's) and, with
    ``both``, the per-pixel model's alone (sharper where a table's colours spread the other)."""
    pixel = pixel_map(small, det)
    if not det["tile_net"]:
        return [pixel]
    mix = float(det["tile_net_weight"])
    mixed = mix * tile_net(det).probability(small) + (1.0 - mix) * pixel
    return [mixed, pixel] if both else [mixed]


def _same_place(a, b) -> bool:
    """Two outlines of one kingdom: centres closer than a third of the smaller side."""
    d = np.linalg.norm(np.asarray(a.corners, float).mean(0) - np.asarray(b.corners, float).mean(0))
    return bool(d < min(_side(a.corners), _side(b.corners)) / 3)


def _merge(found_by_map: list[list], agree_at: float) -> list:
    """One outline per place: where both maps found one, the same grid with corners within
    ``[detect] outline_agree`` of a side keeps the per-pixel outline (as ``vision.detect.locate``
    does), otherwise the surer grid count wins (ties: the network's)."""
    from vision.detect import corner_error

    if len(found_by_map) == 1:
        return found_by_map[0]
    first, second = found_by_map
    out, used = [], set()
    for a in first:
        match = next((j for j, b in enumerate(second) if j not in used and _same_place(a, b)),
                     None)
        if match is None:
            out.append(a)
            continue
        used.add(match)
        b = second[match]
        agree = (a.rows, a.cols) == (b.rows, b.cols) and corner_error(
            np.asarray(a.corners, float), np.asarray(b.corners, float), any_first=True) <= agree_at
        out.append(b if agree or b.confidence > a.confidence else a)
    out += [b for j, b in enumerate(second) if j not in used
            and not any(_same_place(b, a) for a in out)]
    return out


def _blobs(prob: np.ndarray, det, tab) -> list[np.ndarray]:
    """Masks of the tile blobs big enough to be a kingdom, largest first."""
    soft = cv2.GaussianBlur(prob, (0, 0), 1.0)
    mask = (soft > det["prob_threshold"]).astype(np.uint8)
    k = max(3, int(round(det["close_frac"] * max(mask.shape))) | 1)
    mask = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, np.ones((k, k), np.uint8))
    ko = max(1, int(round(det["open_frac"] * max(mask.shape))))
    mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, disk(ko))
    n, labels, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=8)
    least = float(tab["min_area_frac"]) * mask.size
    keep = [i for i in range(1, n) if stats[i, cv2.CC_STAT_AREA] >= least]
    keep.sort(key=lambda i: -stats[i, cv2.CC_STAT_AREA])
    return [(labels == i).astype(np.uint8) for i in keep]


def find_kingdoms(image: np.ndarray, cfg=None) -> list[Outline]:
    """Every tile blob of the photo big enough to be a kingdom, as an outline (unread, unsorted).
    Raises ``PhotoError`` for an image that is not an 8-bit colour image."""
    cfg = cfg if cfg is not None else _config.load()
    tab = cfg["table"]
    det = _config.Section("detect", dict(cfg["detect"]))
    det["min_area_frac"] = float(tab["min_area_frac"])
    mid, s_mid, small, s = working_sizes(image, int(tab["refine_long_side"]),
                                         int(tab["mask_long_side"]))
    gray_mid = cv2.cvtColor(mid, cv2.COLOR_BGR2GRAY)
    edges = edge_map(gray_mid) if det["refine"] else None
    found_by_map = [_outlines(prob, mid, gray_mid, edges, s, s_mid, image.shape, det, tab)
                    for prob in _maps(small, det, bool(tab["both_maps"]))]
    return _merge(found_by_map, float(det["outline_agree"]))


def _outlines(prob, mid, gray_mid, edges, s, s_mid, shape, det, tab) -> list[Outline]:
    """The outline of every kingdom-sized blob of one tile map."""
    h, w = shape[:2]
    reach = disk(max(1, int(round(float(tab["reach"]) * max(prob.shape)))))
    out = []
    for blob in _blobs(prob, det, tab):
        own = prob * cv2.dilate(blob, reach).astype(np.float32)
        found = outline_in_map(own, mid, gray_mid, edges, s, s_mid, shape, det)
        if found is None:
            continue
        corners, rows, cols, conf, warnings = found
        ys, xs = np.nonzero(blob)
        tol = 0.01 * max(h, w)
        cut = bool(np.any(corners < -tol) or np.any(corners[:, 0] > w + tol)
                   or np.any(corners[:, 1] > h + tol) or xs.min() == 0 or ys.min() == 0
                   or xs.max() == blob.shape[1] - 1 or ys.max() == blob.shape[0] - 1)
        warnings = [x for x in warnings if "outside the photo" not in x]
        out.append(Outline(np.asarray(corners, np.float32), int(rows), int(cols), float(conf),
                           cut, tuple(warnings)))
    return out


def is_kingdom(reading, cfg=None, grid_confidence: float = 1.0) -> bool:
    """Whether a reading of a found outline is a kingdom: a castle read at least ``[table]
    min_castle`` sure, at least ``[table] min_tiles`` (and ``[reader] min_tiles``) domino halves,
    at least ``[table] min_side`` squares along each side, and its grid counted at least
    ``[table] min_grid_confidence`` sure (``grid_confidence``, from the outline). Loose
    dominoes, a draft line, a lid or a pad are not kingdoms."""
    cfg = cfg if cfg is not None else _config.load()
    tab = cfg["table"]
    cells = [cell for row in reading.cells for cell in row]
    terrains = [cell["terrain"] for cell in cells]
    if too_few_tiles(terrains, cfg):
        return False
    if sum(t not in ("castle", "empty") for t in terrains) < int(tab["min_tiles"]):
        return False
    if min(reading.rows, reading.cols) < int(tab["min_side"]):
        return False
    if grid_confidence < float(tab["min_grid_confidence"]):
        return False
    castle = [cell.get("confidence", 1.0) for cell in cells if cell["terrain"] == "castle"]
    return bool(castle) and max(castle) >= float(tab["min_castle"])


def _side(corners) -> float:
    c = np.asarray(corners, np.float64).reshape(4, 2)
    return float(np.mean(np.linalg.norm(np.roll(c, -1, axis=0) - c, axis=1)))


def read_table(reader, image: np.ndarray, size: int | None = None) -> list[TableKingdom]:
    """Find and read every kingdom of a table photo, numbered (see the module docstring).

    ``reader``: a ``vision.Reader``. Raises ``PhotoError`` (no kingdom) when none is found.
    """
    cfg = reader.cfg
    kept = []
    for found in find_kingdoms(image, cfg):
        try:
            reading = reader.read(image, size=size, corners=found.corners, rows=found.rows,
                                  cols=found.cols)
        except PhotoError:
            continue
        if not is_kingdom(reading, cfg, found.confidence):
            continue
        warnings = list(found.warnings) + list(reading.warnings)
        if found.cut:
            warnings.insert(0, CUT_WARNING)
        kept.append((found, replace(reading, warnings=warnings)))
    if not kept:
        raise PhotoError(NO_KINGDOM)
    order = number_order([np.asarray(f.corners, np.float64).mean(0) for f, _ in kept],
                         [_side(f.corners) for f, _ in kept], cfg=cfg)
    return [TableKingdom(k, kept[i][1], kept[i][0].cut) for k, i in enumerate(order)]
