"""Whole-table photos: every kingdom in one photo (``find_kingdoms``, ``read_table``).

At the end of a game the kingdoms lie side by side on the table. The detector's building blocks
(``vision.find.tilemap`` tile maps, ``vision.find.detect.outline_in_map`` outline + grid count + corners)
run on every tile blob big enough to be a kingdom instead of only the largest. A table whose
colours read as tile joins kingdoms, loose dominoes and bumps of cloth into one blob; only a
kingdom is thick, so each blob is opened in proportion to its thickness and cut where the
opening leaves it apart (``split_blob``), and each part is outlined from its own tile map alone
-- the opened part, the whole part and, when bumps fell off, its surest tiles
(``strict_mask``). Each outline's window is chosen by the square classifier as the single
reader chooses it (a callable the reader gives, ``Reader.framed``: ``vision.find.frame.choose``)
and read (``Reader.read_board``); of a blob's outlines that read
as a kingdom (``is_kingdom``: a castle, at least ``[table] min_tiles`` domino halves, at least
``[table] min_side`` squares along each side, a grid count at least ``[table]
min_grid_confidence`` sure), the one whose squares read crispest (``vision.find.frame.crispness``)
is kept. A few loose dominoes, the draft line, a box lid or a score pad are not kingdoms.

Each kingdom found so is then framed and read as a single kingdom is (``single_search``): the
reader's own search for the photo (``Reader.find``, what plain ``score`` reads) gives the
kingdom it lies on, and every other kingdom is searched for by the same search in a crop of
the photo around it (``[table] crop_margin`` sides of table); a window that search finds on
the same place replaces the table search's. A kingdom whose window reaches the photo's edge
(grown ``[table] cut_margin`` squares, it leaves the photo) is kept but flagged ``cut`` (with a
warning): it is not scored as complete. Table around a kingdom, even when the table reads as
tile up to the photo's edge, never makes it cut.

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
from vision.find.corner_refine import edge_map
from vision.find.detect import outline_in_map, working_sizes
from vision.errors import NO_KINGDOM, PhotoError
from vision.find.frame import crispness, terrain_odds, too_few_tiles
from vision.geometry import overlaps, ring_corners
from vision.find.tilemap import disk, largest, pixel_map, tile_net

CUT_WARNING = ("this kingdom is cut by the photo's edge: it is not scored as complete; take the "
               "photo again with every kingdom whole in the frame")


@dataclass(frozen=True)
class TableOutline:
    """One kingdom's outline found in a table photo (image px, tl, tr, br, bl)."""

    corners: np.ndarray
    rows: int
    cols: int
    confidence: float
    cut: bool                        # the outline reaches the photo's edge
    warnings: tuple = ()


@dataclass(frozen=True, eq=False)
class Kingdom:
    """A kingdom found in a table photo, unnumbered: where its window lies (``outline``, with
    the grid count's confidence and whether the photo's edge cuts it), the window read
    (``vision.find.search.Candidate``), its reading (``vision.reader.Reading``, with the cut
    warning) and how crisply its squares read (``vision.find.frame.crispness``)."""

    outline: TableOutline
    window: object
    reading: object
    crisp: float


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


def _tile_map(small: np.ndarray, det) -> np.ndarray:
    """The tile map to search: the network's mixed with the per-pixel model's (the per-pixel
    model's alone without the network)."""
    pixel = pixel_map(small, det)
    if not det["tile_net"]:
        return pixel
    mix = float(det["tile_net_weight"])
    return mix * tile_net(det).probability(small) + (1.0 - mix) * pixel


def _same_place(a, b) -> bool:
    """Two outlines of one kingdom: centres closer than a third of the smaller side."""
    d = np.linalg.norm(np.asarray(a.corners, float).mean(0) - np.asarray(b.corners, float).mean(0))
    return bool(d < min(_side(a.corners), _side(b.corners)) / 3)


def _blobs(prob: np.ndarray, det, tab) -> list[tuple]:
    """The tile blobs big enough to be a kingdom, largest first, each as its masks to try
    (:func:`split_blob`): a table whose colours read as tile joins kingdoms, loose dominoes
    and bumps of table into one blob, but only a kingdom is thick."""
    soft = cv2.GaussianBlur(prob, (0, 0), 1.0)
    mask = (soft > det["prob_threshold"]).astype(np.uint8)
    k = max(3, int(round(det["close_frac"] * max(mask.shape))) | 1)
    mask = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, np.ones((k, k), np.uint8))
    ko = max(1, int(round(det["open_frac"] * max(mask.shape))))
    mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, disk(ko))
    n, labels, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=8)
    least = float(tab["min_area_frac"]) * mask.size
    out = []
    for i in range(1, n):
        if stats[i, cv2.CC_STAT_AREA] >= least:
            out += [masks for masks in split_blob((labels == i).astype(np.uint8),
                                                  float(tab["core_frac"]))
                    if int(masks[0].sum()) >= least]
    out.sort(key=lambda masks: -int(masks[-1].sum()))
    return out


def split_blob(blob: np.ndarray, core_frac: float) -> list[tuple]:
    """The blob's thick parts, each as ``(opened, whole)`` uint8 masks (or ``(whole,)`` when
    the two are alike).

    The blob is opened with a disk of ``core_frac`` x its half-thickness (the largest distance
    from a blob pixel to the nearest pixel off it): strips thinner than the disk -- a row of
    loose dominoes, squares of a checked cloth beside a kingdom, a bridge of table between two
    kingdoms -- fall away, and what is left apart is one part each (``opened``). A kingdom,
    a square as thick as half its side, keeps its sides; but a half-built kingdom's lone
    square falls away too, so ``whole`` keeps every pixel of the blob nearer to this part
    than to the others (``read_table`` chooses between their outlines by what their squares
    read). When the opening took no more than it rounds off a plain square's corners (with a
    fifth more for the disk's pixel steps), the two are alike."""
    dist = cv2.distanceTransform(blob, cv2.DIST_L2, 5)
    r = int(round(core_frac * float(dist.max())))
    if r < 1:
        return [(blob,)]
    n, labels = cv2.connectedComponents((dist > r).astype(np.uint8), connectivity=8)
    if n <= 2:
        nearest = [blob]
    else:
        _, near = cv2.distanceTransformWithLabels((labels == 0).astype(np.uint8), cv2.DIST_L2,
                                                  5, labelType=cv2.DIST_LABEL_CCOMP)
        nearest = [((near == near[labels == i][0]) & (blob > 0)).astype(np.uint8)
                   for i in range(1, n)]
    parts = []
    for i, whole in zip(range(1, n), nearest):
        opened = cv2.dilate((labels == i).astype(np.uint8), disk(r)) & whole
        rounded = 4 * (1 - np.pi / 4) * r * r   # what opening a plain square takes off its corners
        taken = int(whole.sum()) - int(opened.sum())
        parts.append((opened, whole) if taken > 1.2 * rounded else (whole,))
    return parts


def find_kingdoms(image: np.ndarray, cfg=None) -> list[TableOutline]:
    """Every tile blob of the photo big enough to be a kingdom, as an outline (unread, unsorted):
    of a blob's outlines (:func:`blob_outlines`) the surest grid count (ties: the first made).
    Raises ``PhotoError`` for an image that is not an 8-bit colour image."""
    cfg = cfg if cfg is not None else _config.load()
    found = []
    for outlines in _outlines_by_blob(image, cfg):
        surest = max(outlines, key=lambda o: o.confidence, default=None)
        if surest is not None:
            found.append(surest)
    return found


def _outlines_by_blob(image: np.ndarray, cfg, boxes: list | None = None) -> list:
    """One :func:`blob_outlines` generator per blob of the tile map. The network's map is
    mixed by ``[table] tile_net_weight``, not ``[detect]``'s; the outlines are counted without
    the seams' lattice (``vision.find.lattice``: on the 12 table photos it read 2 kingdoms
    fewer exactly, and took longer). ``boxes``, when given, gets each blob's bounds (image px:
    x0, y0, x1, y1), in the same order."""
    tab = cfg["table"]
    det = _config.Section("detect", dict(cfg["detect"]))
    det["min_area_frac"] = float(tab["min_area_frac"])
    det["tile_net_weight"] = float(tab["tile_net_weight"])
    mid, s_mid, small, s = working_sizes(image, int(tab["refine_long_side"]),
                                         int(tab["mask_long_side"]))
    gray_mid = cv2.cvtColor(mid, cv2.COLOR_BGR2GRAY)
    edges = edge_map(gray_mid) if det["refine"] else None
    prob = _tile_map(small, det)
    blobs = _blobs(prob, det, tab)
    if boxes is not None:
        for masks in blobs:
            ys, xs = np.nonzero(masks[-1])
            boxes.append((xs.min() / s, ys.min() / s, (xs.max() + 1) / s, (ys.max() + 1) / s))
    return [blob_outlines(prob, masks, mid, gray_mid, edges, s, s_mid, image.shape, det, tab)
            for masks in blobs]


def blob_outlines(prob, masks, mid, gray_mid, edges, s, s_mid, shape, det, tab):
    """The outlines of one blob, made as they are asked for (each costs the detector's outline
    step): the tile map inside each of its masks -- nothing of the table around it, nor of its
    neighbours -- handed to ``vision.find.detect.outline_in_map``, for each mask of
    :func:`split_blob` and, when the opening cut bumps off, of :func:`strict_mask` at each of
    ``[table] strict_thresholds``. An outline alike to one already given (the same grid, the
    corners within ``[detect] outline_agree``) whose count was as sure is skipped."""
    h, w = shape[:2]
    blob = masks[-1]
    ys, xs = np.nonzero(blob)
    touches = bool(xs.min() == 0 or ys.min() == 0 or xs.max() == blob.shape[1] - 1
                   or ys.max() == blob.shape[0] - 1)

    def each_mask():
        yield from masks
        if len(masks) > 1:     # bumps or strips fell off the blob: also its surest tiles alone
            for threshold in tab["strict_thresholds"]:
                strict = strict_mask(prob, blob, det, float(threshold))
                if strict is not None:
                    yield strict

    given = []
    for mask in each_mask():
        found = outline_in_map(prob * mask.astype(np.float32), mid, gray_mid, edges, s,
                               s_mid, shape, det)
        if found is None:
            continue
        corners, tol = found.corners, 0.01 * max(h, w)
        cut = touches or bool(np.any(corners < -tol) or np.any(corners[:, 0] > w + tol)
                              or np.any(corners[:, 1] > h + tol))
        warnings = tuple(x for x in found.warnings if "outside the photo" not in x)
        outline = TableOutline(np.asarray(corners, np.float32), int(found.rows),
                               int(found.cols), float(found.confidence), cut, warnings)
        if not any(_alike(outline, other, float(det["outline_agree"]))
                   and other.confidence >= outline.confidence for other in given):
            given.append(outline)
            yield outline


def strict_mask(prob: np.ndarray, blob: np.ndarray, det, threshold: float):
    """The largest part of ``blob`` whose (smoothed) tile odds pass ``threshold``, closed as
    the detector closes its masks (bridges seams): bumps of a cloth that reads half like tile
    fall away, the kingdom's tiles stay. None when nothing passes."""
    soft = cv2.GaussianBlur(prob, (0, 0), 1.0)
    k = max(3, int(round(det["close_frac"] * max(prob.shape))) | 1)
    sure = ((soft > threshold) & (blob > 0)).astype(np.uint8)
    return largest(cv2.morphologyEx(sure, cv2.MORPH_CLOSE, np.ones((k, k), np.uint8)))


def _alike(a: TableOutline, b: TableOutline, agree_at: float) -> bool:
    """The same grid with corners within ``agree_at`` of a side."""
    from vision.find.detect import corner_error

    return (a.rows, a.cols) == (b.rows, b.cols) and corner_error(
        np.asarray(a.corners, float), np.asarray(b.corners, float), any_first=True) <= agree_at


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


def could_be_kingdom(found: TableOutline, cfg) -> bool:
    """Whether a found outline's grid lets it be a kingdom (``is_kingdom``'s grid tests:
    ``[table] min_side`` squares a side, the count ``min_grid_confidence`` sure); the others
    are not worth reading (the window chosen in a grid is never larger than the grid)."""
    tab = cfg["table"]
    return min(found.rows, found.cols) >= int(tab["min_side"]) \
        and found.confidence >= float(tab["min_grid_confidence"])


def _side(corners) -> float:
    c = np.asarray(corners, np.float64).reshape(4, 2)
    return float(np.mean(np.linalg.norm(np.roll(c, -1, axis=0) - c, axis=1)))


def leaves_photo(corners, rows: int, cols: int, shape, margin: float) -> bool:
    """Whether the ``rows x cols`` grid with these corners, grown by ``margin`` squares on
    every side, reaches beyond the photo of this shape."""
    h, w = shape[:2]
    x, y = ring_corners(corners, rows, cols, margin).T
    return bool(np.any(x < 0) or np.any(y < 0) or np.any(x > w) or np.any(y > h))


def read_table(reader, image: np.ndarray, size: int | None = None) -> list[TableKingdom]:
    """Find and read every kingdom of a table photo, numbered (see the module docstring).

    ``reader``: a ``vision.Reader``, whose ``framed`` chooses and reads each window and
    ``read_board`` reads it (:func:`read_kingdoms`). Raises ``PhotoError`` (no kingdom) when
    none is found.
    """
    unread = []
    kept = single_search(reader, image, read_kingdoms(
        image, reader.cfg, reader.classifier.t_terrain,
        lambda corners, rows, cols, warnings=(): reader.framed(
            image, corners, rows, cols, size, warnings),
        lambda window: reader.read_board(image, window, size), unread), size, unread)
    if not kept:
        raise PhotoError(NO_KINGDOM)
    order = number_order([np.asarray(k.outline.corners, np.float64).mean(0) for k in kept],
                         [_side(k.outline.corners) for k in kept], cfg=reader.cfg)
    return [TableKingdom(n, kept[i].reading, kept[i].outline.cut) for n, i in enumerate(order)]


def read_table_photo(reader, path_or_bytes, size: int | None = None, cfg=None
                     ) -> list[TableKingdom]:
    """:func:`read_table` of a table photo (path or bytes) decoded as a kingdom's photo is
    decoded for reading (``vision.photo.scale.read_photo``: reduced with ``[io]
    read_long_side``, read again whole when the smallest kingdom's squares come out too small
    there, or none is found), each kingdom's reading in the photo's own pixels."""
    from vision.photo import scale

    found, factor = scale.read_photo(
        path_or_bytes, lambda image: read_table(reader, image, size),
        lambda kingdoms: min(scale.square_side(k.reading) for k in kingdoms), cfg)
    return [replace(k, reading=scale.to_photo_pixels(k.reading, factor)) for k in found]


def read_kingdoms(image: np.ndarray, cfg: dict, t_terrain: float, window, reading,
                  unread: list | None = None) -> list:
    """Every :class:`Kingdom` of the photo, unnumbered. ``window(corners, rows, cols,
    warnings)`` chooses and reads the window in an outline's grid, returning a
    ``vision.find.search.Candidate`` (``Reader.framed``), ``reading(window)`` reads it (``Reader.read_board``; may raise
    ``PhotoError``), ``t_terrain`` is the classifier's terrain temperature. The blobs'
    outlines are read surest grid count first (``[table] crisp_enough``) and the crispest of
    a blob's that reads as a kingdom is kept; a reading whose window leaves the photo gets
    the cut warning. An empty list when none does. ``unread``, when given, gets the bounds
    (image px: x0, y0, x1, y1) of each blob none of whose outlines read as a kingdom."""
    margin = float(cfg["table"]["cut_margin"])
    crisp_enough = float(cfg["table"]["crisp_enough"])
    kept, boxes = [], []
    blobs = _outlines_by_blob(image, cfg) if unread is None else _outlines_by_blob(image, cfg,
                                                                                  boxes)
    for n, outlines in enumerate(blobs):
        best = None
        for found in outlines:
            if not could_be_kingdom(found, cfg):
                continue     # not read at all: what is_kingdom would refuse by its grid alone
            framed = window(found.corners, found.rows, found.cols, found.warnings)
            try:
                read = reading(framed)
            except PhotoError:
                continue
            if not is_kingdom(read, cfg, found.confidence):
                continue
            sharp = crispness(framed.logits, t_terrain)
            if best is None or sharp > best[0]:
                best = (sharp, found, framed, read)
            if sharp >= crisp_enough:
                break        # its squares read as cut on the tiles' own grid: not worth more reads
        if best is None:     # nothing read as a kingdom: clutter or cloth, or a kingdom whose
            if n < len(boxes):          # grid the table search could not count
                unread.append(boxes[n])
            continue
        sharp, found, framed, read = best
        here = TableOutline(framed.corners, framed.rows, framed.cols, found.confidence, False)
        if any(_same_place(here, other.outline) for other in kept):
            continue
        kept.append(_with_cut(Kingdom(here, framed, read, sharp), image.shape, margin))
    return kept


def _with_cut(kingdom: Kingdom, shape, margin: float) -> Kingdom:
    """The kingdom flagged ``cut`` (and its reading warned) when its window grown ``margin``
    squares leaves the photo: its outline reaches the photo's edge."""
    w = kingdom.window
    cut = leaves_photo(w.corners, w.rows, w.cols, shape, margin)
    warnings = [x for x in kingdom.reading.warnings if x != CUT_WARNING]
    if cut:
        warnings.insert(0, CUT_WARNING)
    return replace(kingdom, outline=replace(kingdom.outline, cut=cut),
                   reading=replace(kingdom.reading, warnings=warnings))


def _plain(reader, image, size):
    """The window the reader's own search finds in the photo (``Reader.find``, as plain
    ``score`` reads it) and its reading; None when it finds no kingdom."""
    try:
        window = reader.find(image, size)
        return window, reader.check_found(reader.read_board(image, window, size))
    except PhotoError:
        return None


def _in_crop(reader, image, kingdom: Kingdom, size, margin: float):
    """The reader's own search (``Reader.find``) in a crop of the photo around ``kingdom``
    (its window's bounds grown ``margin`` x its side), its window moved back into the photo
    and read there; None when it finds no kingdom, or one elsewhere than ``kingdom``."""
    corners = np.asarray(kingdom.window.corners, np.float64)
    found = _search_box(reader, image, (*corners.min(0), *corners.max(0)),
                        margin * _side(corners), size)
    if found is None or not _same_place(TableOutline(found[0].corners, found[0].rows,
                                                     found[0].cols, 1.0, False),
                                        kingdom.outline):
        return None
    return found


def _search_box(reader, image, box, grow: float, size):
    """The reader's own search (``Reader.find``) in a crop of the photo: ``box`` (x0, y0, x1,
    y1, image px) grown ``grow`` px on every side; its window moved back into the photo and
    read there (``Reader.check_found``); None when it finds no kingdom."""
    h, w = image.shape[:2]
    x0, y0 = max(0, int(np.floor(box[0] - grow))), max(0, int(np.floor(box[1] - grow)))
    x1, y1 = min(w, int(np.ceil(box[2] + grow))), min(h, int(np.ceil(box[3] + grow)))
    try:
        found = reader.find(np.ascontiguousarray(image[y0:y1, x0:x1]), size)
    except PhotoError:
        return None
    window = replace(found, corners=np.asarray(found.corners, np.float32)
                     + np.float32([x0, y0]))
    try:
        return window, reader.check_found(reader.read_board(image, window, size))
    except PhotoError:
        return None


def _shared(a, b) -> float:
    """The share of the smaller of two windows (4 x 2 px) that lies over the other."""
    a = np.asarray(a, np.float32).reshape(4, 2)
    b = np.asarray(b, np.float32).reshape(4, 2)
    area, _ = cv2.intersectConvexConvex(a, b)
    least = min(cv2.contourArea(a), cv2.contourArea(b))
    return float(area) / least if least > 0 else 0.0


def _sure_castle(window, cfg, t_terrain: float) -> bool:
    """Whether the window's likeliest castle reads at least ``[reader] sure_castle_odds``."""
    return window.logits is not None and float(terrain_odds(
        window.logits, "castle", t_terrain).max()) >= float(cfg["reader"]["sure_castle_odds"])


def _part_of(corners, whole) -> bool:
    """Whether the outline ``corners`` is a piece of the window ``whole``: its centre lies
    inside it and it is smaller (the table search can cut one kingdom in pieces)."""
    c = np.asarray(corners, np.float32).reshape(4, 2)
    w = np.asarray(whole, np.float32).reshape(4, 2)
    centre = c.mean(0)
    return bool(cv2.pointPolygonTest(w, (float(centre[0]), float(centre[1])), False) >= 0
                and cv2.contourArea(c) < cv2.contourArea(w))


def single_search(reader, image: np.ndarray, kept: list, size=None, unread=()) -> list:
    """The whole-table search's kingdoms (``kept``) each framed and read as a single kingdom
    is (see the module docstring): the reader's own window for the photo replaces the kingdom
    it lies on (it is kept as well when it lies on none: a one-kingdom photo reads as plain
    ``score`` reads it, even a kingdom too small for the table search; not when others were
    found and it does not read as a kingdom), and each other kingdom's is the reader's own
    search in a crop around it. A blob the table search read no kingdom in (``unread``: its
    bounds, see :func:`read_kingdoms`; a sparse kingdom small in a wide photo is counted
    wrong there) that lies on no kingdom found gets the same search in a crop around it: a
    kingdom (``is_kingdom``) with a sure castle (``[reader] sure_castle_odds``: a score pad
    or loose dominoes read as one hold none) it finds there is kept when it lies over no
    other (at most ``[table] most_shared`` of the smaller of the two). Every kingdom is then
    flagged cut or not (``_with_cut``)."""
    cfg = reader.cfg
    tab = cfg["table"]
    t = reader.classifier.t_terrain
    out = list(kept)
    plain = _plain(reader, image, size)
    mine = None
    if plain is not None:
        window, read = plain
        here = TableOutline(window.corners, window.rows, window.cols, 1.0, False)
        same = [i for i, k in enumerate(out) if _same_place(here, k.outline)][:1]
        parts = [i for i, k in enumerate(out) if _part_of(k.outline.corners, window.corners)]
        over = [k for k in out if overlaps(window.corners, k.outline.corners)]
        if same or parts or not over and (not out or is_kingdom(read, cfg)):
            mine = Kingdom(here, window, read, crispness(window.logits, t)
                           if window.logits is not None else 0.0)
            out = [k for i, k in enumerate(out) if i not in same + parts]
    for i, k in enumerate(out):
        again = _in_crop(reader, image, k, size, float(tab["crop_margin"]))
        if again is not None:
            window, read = again
            out[i] = Kingdom(replace(k.outline, corners=window.corners, rows=window.rows,
                                     cols=window.cols), window, read,
                             crispness(window.logits, t) if window.logits is not None else 0.0)
    if mine is not None:
        out.append(mine)
    for box in unread:
        centre = ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2)
        if any(cv2.pointPolygonTest(np.asarray(k.window.corners, np.float32).reshape(4, 2),
                                    centre, False) >= 0 for k in out):
            continue         # a piece of a kingdom found
        found = _search_box(reader, image, box, float(tab["crop_margin"])
                            * max(box[2] - box[0], box[3] - box[1]), size)
        if found is None or not is_kingdom(found[1], cfg) or not _sure_castle(found[0], cfg, t) \
                or any(
                overlaps(found[0].corners, k.window.corners)
                or _shared(found[0].corners, k.window.corners) > float(tab["most_shared"])
                for k in out):
            continue         # kingdoms on a table lie side by side, not over each other
        window, read = found
        out.append(Kingdom(TableOutline(window.corners, window.rows, window.cols, 1.0, False),
                           window, read, crispness(window.logits, t)
                           if window.logits is not None else 0.0))
    margin = float(tab["cut_margin"])
    return [_with_cut(k, image.shape, margin) for k in out]
