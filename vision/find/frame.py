"""Choose the kingdom's frame by what the square classifier reads, not by the tile blob alone.

The detector (``vision.find.detect``) gives an outline and a rows x cols grid. Its blob can take in
table that looks like tiles (a 5x5 read as 7x7) or miss a row of tiles (a frame one column
off). A table cannot fake what the square classifier reads: it was trained with bare table as
its own class (``empty``). So the grid's squares are read (a grid one side short of a 5x5 or
7x7 frame is recounted on the same outline or read beyond that side, :func:`recount`,
:func:`completion`) and the window that holds the kingdom is chosen among every rectangle of
at most ``max_cells`` squares a side inside what was read:

- a square inside the window is a tile, the castle, or (less likely, ``[frame] inside_empty``)
  an empty square of a half-built kingdom;
- a square outside it is table (``empty``);
- the detector's own grid gets ``[frame] keep_bonus`` (log odds): the classifier must be
  sure before the frame moves; a 5x5 or 7x7 window with a tile on each side gets
  ``frame_bonus``;
- a square that looks like the table around what was read is table (``vision.read.holes``,
  ``judge_holes``), whatever the network reads in it;
- a square read as a tile that looks like no tile the network learned from is table at
  ``[novelty] frame_empty_odds`` at least (``vision.read.novelty``): a row of table cloth read
  as tiles at the window's edge is table, not kingdom.

Each square adds ``log(P(tile or castle) + inside_empty * P(empty)) - log(P(empty))`` to the
windows that hold it, so the best window is a largest-sum rectangle (prefix sums, every
window tried). A row of table squares read as table with high odds leaves the window; a tile
square outside costs its odds of not being table, so a window that leaves tiles out loses.

The chosen window's squares keep the logits read from the larger grid: their crops are the
ones ``vision.read.crops.cell_crops`` cuts for the window's own corners (the same homography,
shifted by whole cells), so the classifier sees what it saw in training.
"""
from __future__ import annotations

import numpy as np

from engine.kingdom import SIZES
from vision.read import holes
from vision.read import novelty
from vision.find.corner_refine import refine_photo_outline
from vision.geometry import Window, centres_off_photo, window_corners
from vision.find.gridcount import far_from_square, recount_cuts, seams_refute
from vision.read.labels import N_CROWNS, TERRAINS, terrain_probabilities


def is_frame(rows: int, cols: int, frames=SIZES) -> bool:
    """Whether a ``rows x cols`` grid is a finished kingdom's frame: n x n, n one of ``frames``
    (the game's sizes, ``engine.kingdom.SIZES``; the search passes ``[frame] square_frames``)."""
    return rows == cols and rows in frames


def frame_size(rows: int, cols: int, size: int | None = None) -> int:
    """The frame (squares a side, one of ``engine.kingdom.SIZES``) a ``rows x cols`` window is
    read in: ``size`` (the caller's) when it holds the window, else the smallest size that
    does (the largest when none does)."""
    need = max(rows, cols)
    if size is not None and size >= need:
        return size
    return next((n for n in sorted(SIZES) if need <= n), max(SIZES))


def terrain_odds(logits: np.ndarray, terrain: str, t_terrain: float = 1.0) -> np.ndarray:
    """Each square's probability of ``terrain`` by the classifier's terrain head."""
    return terrain_probabilities(logits, t_terrain)[:, TERRAINS.index(terrain)]


def empty_odds(logits: np.ndarray, t_terrain: float = 1.0) -> np.ndarray:
    """Each square's probability of being bare table (the terrain head's ``empty``)."""
    return terrain_odds(logits, "empty", t_terrain)


def square_gain(p_empty: np.ndarray, inside_empty: float, floor: float) -> np.ndarray:
    """Log odds a square adds to a window that holds it (against leaving it out as table)."""
    p = np.clip(np.asarray(p_empty, np.float64), floor, 1.0 - floor)
    return np.log((1.0 - p) + inside_empty * p) - np.log(p)


def best_window(gain: np.ndarray, max_rows: int, max_cols: int, keep: Window | None = None,
                keep_bonus: float = 0.0, frames=(), frame_bonus: float = 0.0,
                walls=None, wall_penalty: float = 0.0, edge_gain: float = 0.0,
                bonus_within: Window | None = None) -> Window:
    """The rectangle with the largest summed ``gain`` (a rows x cols array) of at most
    ``max_rows`` x ``max_cols`` squares (either way round); ``keep`` gets ``keep_bonus``, an
    ``n x n`` window (``n`` in ``frames``) ``frame_bonus`` when each of its four edge lines
    holds a tile (gain above ``edge_gain``: a kingdom's frame, finished or not, has a tile on
    every side), with ``bonus_within`` only inside that window (the grid as counted: a window
    grown past it must be carried by its own squares). ``walls`` (booleans, squares surely
    table): a window loses ``wall_penalty`` for each whole row or column of walls inside it
    (not on its edge): its tiles on either side could not be joined, though every domino is
    laid touching the kingdom; only tiles beyond it surer than the penalty (a line of
    glare-washed tiles read as table) keep them. Ties: ``keep``, the larger, the first."""
    gain = np.asarray(gain, np.float64)
    R, C = gain.shape
    if max_rows < 1 or max_cols < 1:
        raise ValueError(f"a window needs at least one square a side, got {max_rows}x{max_cols}")
    S = np.zeros((R + 1, C + 1))
    S[1:, 1:] = gain.cumsum(0).cumsum(1)
    along_rows, along_cols = _line_counts(gain > edge_gain)   # tiles along each row and column
    wall_rows, wall_cols = _line_counts(np.zeros((R, C), bool) if walls is None else walls)
    # thousands of windows: the sums and counts as Python numbers (the same doubles and
    # integers, read much faster than numpy's elements); each total is rounded as numpy
    # rounds it (Python's own round can differ in the last place)
    S = S.tolist()
    along_rows, along_cols = along_rows.tolist(), along_cols.tolist()
    wall_rows, wall_cols = wall_rows.tolist(), wall_cols.tolist()

    def edged(r, c, h, w):
        return (along_rows[r][c + w] > along_rows[r][c]
                and along_rows[r + h - 1][c + w] > along_rows[r + h - 1][c]
                and along_cols[r + h][c] > along_cols[r][c]
                and along_cols[r + h][c + w - 1] > along_cols[r][c + w - 1])

    def splits(r, c, h, w):
        return (sum(wall_rows[rr][c + w] - wall_rows[rr][c] == w
                    for rr in range(r + 1, r + h - 1))
                + sum(wall_cols[r + h][cc] - wall_cols[r][cc] == h
                      for cc in range(c + 1, c + w - 1)))
    keep_at = None if keep is None else (keep.row, keep.col, keep.rows, keep.cols)
    best, best_key = None, None
    for h in range(1, R + 1):
        for w in range(1, C + 1):
            if not ((h <= max_rows and w <= max_cols) or (h <= max_cols and w <= max_rows)):
                continue
            frame = is_frame(h, w, frames)
            for r in range(R - h + 1):
                for c in range(C - w + 1):
                    total = S[r + h][c + w] - S[r][c + w] - S[r + h][c] + S[r][c]
                    if wall_penalty and (h > 2 or w > 2):
                        total -= wall_penalty * splits(r, c, h, w)
                    is_keep = (r, c, h, w) == keep_at
                    if is_keep:
                        total += keep_bonus
                    if frame and edged(r, c, h, w) and (
                            bonus_within is None or Window(r, c, h, w).inside(bonus_within)):
                        total += frame_bonus
                    key = (round(np.float64(total), 9), is_keep, h * w)
                    if best_key is None or key > best_key:
                        best, best_key = Window(r, c, h, w), key
    return best


def _line_counts(mask) -> tuple[np.ndarray, np.ndarray]:
    """Running counts of a (rows, cols) boolean ``mask``: ``[r, c]`` of the first, the true
    squares of row r before column c; of the second, those of column c above row r."""
    mask = np.asarray(mask, bool)
    R, C = mask.shape
    along_rows = np.zeros((R, C + 1), int)
    along_rows[:, 1:] = mask.cumsum(1)
    along_cols = np.zeros((R + 1, C), int)
    along_cols[1:] = mask.cumsum(0)
    return along_rows, along_cols


def crispness(logits: np.ndarray, t_terrain: float = 1.0) -> float:
    """Mean log odds of each square's likeliest terrain: squares cut on the tiles' own grid
    read crisply; a grid of the wrong count cuts through tiles and reads blurred."""
    lg = np.asarray(logits, np.float64)[:, :len(TERRAINS)] / float(t_terrain)
    lg = lg - lg.max(axis=1, keepdims=True)
    return float(np.mean(-np.log(np.exp(lg).sum(axis=1))))


def read_grid(image, corners, rows: int, cols: int, classifier, cfg: dict,
              first_turn_only: bool = False) -> np.ndarray:
    """The classifier's logits for every square of the grid, row by row (today's crops;
    ``first_turn_only``: see ``SquareClassifier.logits``)."""
    from vision.read.crops import photo_crops

    ccfg = cfg["classify"]
    crops = photo_crops(image, corners, rows, cols, int(ccfg["cell"]),
                        board_margin=int(ccfg["board_margin"]),
                        crop_margin=int(ccfg["crop_margin"]))
    if first_turn_only:
        return classifier.logits(crops, first_turn_only=True)
    return classifier.logits(crops)


def recount(image, corners, rows: int, cols: int, classifier, cfg: dict, size: int | None = None,
            first_turn_only: bool = False):
    """The detector's grid, recounted when it is one side short of a square frame (``[frame]
    square_frames``, ``recount_short``) or a side over one (``max_over``): it is compared
    with the outline cut n x n (:func:`recount_cuts`) on the squares as cut (one quarter turn
    each), the crispest winning unless it is crisper by less than ``[frame]
    seam_veto_within`` and the seams refute its lines (``vision.find.gridcount.seams_refute``),
    and the winner read in full (not when ``first_turn_only``: a quick reading judges the
    grid as found, and no grid is recounted); a grid recounted so has
    its corners refined for the new count (``[frame] refine_recount``,
    ``vision.find.corner_refine.refine_photo_outline``). Returns ``(corners, rows, cols,
    logits)``. A half-built kingdom's strip is not recounted, nor an outline farther from
    square on the table than ``recount_max_aspect`` (its squares would be stretched)."""
    fcfg = cfg["frame"]
    cuts = [n for n in recount_cuts(rows, cols, [int(k) for k in fcfg["square_frames"]],
                                    int(fcfg["max_short"]), int(fcfg["max_over"]))
            if size is None or n <= size]
    if cuts and far_from_square(corners, image.shape, float(fcfg["recount_max_aspect"]),
                                float(cfg["detect"]["aspect_focal_spread"])):
        cuts = []     # an outline this long on the table holds no n x n grid of squares
    if fcfg["recount_short"] and cuts and not first_turn_only:
        # one side counted short of a square frame (an outline round the whole kingdom with a
        # side miscounted, or one that missed a row: vision.find.frame.completion then reads
        # beyond it) or over one (a seam in a tile's art counted as a column): the same
        # outline cut n x n against the count as found, on the squares as cut. Rounded: two
        # grids read alike (the same mean over 25 and 30 squares) are a tie, and a tie keeps
        # the detector's count
        quick = read_grid(image, corners, rows, cols, classifier, cfg, True)
        own = round(crispness(quick, classifier.t_terrain), 9)
        best, best_crisp = None, round(own + float(fcfg["recount_short_margin"]), 9)
        for n in cuts:
            square = read_grid(image, corners, n, n, classifier, cfg, True)
            c = round(crispness(square, classifier.t_terrain), 9)
            if c > best_crisp:
                best, best_crisp = n, c
        if best is not None and best_crisp - own < float(fcfg["seam_veto_within"]) \
                and seams_refute(image, corners, rows, cols, best, fcfg):
            best = None    # a cut barely crisper whose lines miss the seams: the count stays
        if best is not None:
            rows = cols = best
            if fcfg["refine_recount"] and cfg["detect"]["refine"]:
                # the detector put the lines of its own count on the seams: put the new
                # count's there (a few hundredths of a side; the crops are cut anew)
                corners = refine_photo_outline(image, corners, rows, cols, cfg["detect"])
    # a recount's winner: its first turn is remembered by the classifier, not read twice
    return corners, rows, cols, read_grid(image, corners, rows, cols, classifier, cfg,
                                          first_turn_only)


def choose(image: np.ndarray, corners, rows: int, cols: int, classifier, cfg: dict,
           size: int | None = None, first_turn_only: bool = False):
    """The detector's grid recounted (:func:`recount`), read as it is or, one side short of a
    frame, beyond that side (:func:`completion`,
    :func:`grown_logits`), and the window holding the kingdom chosen in it
    (:func:`best_window`, on the logits with ``vision.read.holes`` applied). A window smaller than
    the grid as counted (not grown), short of (or over) a frame, is recounted on its own
    outline (``[frame] recount_window``).

    Returns ``(corners, rows, cols, logits)``: the window's corners, its size and its squares'
    logits (row by row) for ``classifier.read_logits``. ``size`` (5 or 7, given by the
    caller) caps the window, else ``[detect] max_cells``; ``first_turn_only``: as cut only."""
    corners, rows, cols, logits = recount(image, corners, rows, cols, classifier, cfg, size,
                                          first_turn_only)
    fcfg = cfg["frame"]
    cap = int(size) if size is not None else int(cfg["detect"]["max_cells"])
    frames = tuple(int(n) for n in fcfg["square_frames"] if int(n) <= cap)
    # a quick reading (comparing two grids of one outline) judges each grid as found
    across, down = (0, 0) if first_turn_only else completion(rows, cols, frames,
                                                            int(fcfg["max_grow"]))
    top, left = down, across
    R, C = rows + 2 * top, cols + 2 * left
    grown = Window(-top, -left, R, C)
    big = window_corners(corners, rows, cols, grown)
    strips = bool(top or left)
    ring_feats = None      # what was read and the ring around it, measured once for both uses
    if cfg["holes"]["enabled"] and (fcfg["judge_holes"] or strips and fcfg["skip_table_strips"]):
        ring_feats = holes.ring_features(image, big, R, C, cfg["holes"])
    if strips:
        table = None
        if fcfg["skip_table_strips"] and cfg["holes"]["enabled"]:
            table = holes.table_like(image, big, R, C, cfg["holes"], ring_feats)
        logits = grown_logits(image, corners, rows, cols, logits, top, left, classifier, cfg,
                              first_turn_only, table)
    judged = logits
    if fcfg["judge_holes"]:
        # a square like the table around the grid read is table (vision.read.holes): a hole, a row
        # of table the detector took in, a square read beyond the grid to complete a frame
        judged = holes.with_holes(image, big, R, C, logits, cfg, classifier.t_terrain,
                                  classifier.t_crowns, ring_feats)
    p_empty = unlike_as_table(classifier, logits, empty_odds(judged, classifier.t_terrain), cfg)
    gain = square_gain(p_empty, float(fcfg["inside_empty"]),
                       float(fcfg["odds_floor"])).reshape(R, C)
    # a square read as table, with vision.read.holes applied: a line of them splits a window
    walls = p_empty.reshape(R, C) >= float(fcfg["wall_empty_odds"])
    # a square read beyond the grid whose centre lies outside the photo is read from
    # replicated edge pixels: take it for table
    off = centres_off_photo(image.shape, big, R, C)
    off[top:top + rows, left:left + cols] = False
    gain[off] = np.log(float(fcfg["inside_empty"]))
    keep = Window(top, left, rows, cols)
    if across or down:    # a grid grown to complete a square frame: the window is at most that
        cap = max(rows, cols)
    win = best_window(gain, cap, cap, keep, float(fcfg["keep_bonus"]), frames,
                      float(fcfg["frame_bonus"]), walls, float(fcfg["wall_penalty"]),
                      float(fcfg["frame_edge_gain"]), keep if fcfg["bonus_within_grid"] else None)
    new = window_corners(corners, rows, cols, Window(win.row - top, win.col - left,
                                                     win.rows, win.cols))
    inside = win.rows <= rows and win.cols <= cols and (win.rows, win.cols) != (rows, cols)
    if fcfg["recount_window"] and not first_turn_only and inside \
            and recount_cuts(win.rows, win.cols, frames, int(fcfg["max_short"]),
                             int(fcfg["max_over"])):
        # a window cut out of a grid counted over more than the kingdom (a loose domino in
        # the blob) has that grid's squares: its outline is counted again, as a found grid is
        again = recount(image, new, win.rows, win.cols, classifier, cfg, size)
        if again[1:3] != (win.rows, win.cols):
            return again
    return new, win.rows, win.cols, logits[win.squares(R, C)]


def unlike_as_table(classifier, logits: np.ndarray, p_empty: np.ndarray, cfg: dict) -> np.ndarray:
    """``p_empty`` (each square's table odds) raised to ``[novelty] frame_empty_odds`` (0: as
    it is) for the squares whose network reading (``logits``, as read: their features are
    the classifier's, ``SquareClassifier.features_of``) is a tile unlike every tile it
    learned from (``vision.read.novelty``)."""
    ncfg = cfg["novelty"]
    least = float(ncfg["frame_empty_odds"])
    stats = novelty.for_network(ncfg["statistics"], classifier)
    if least <= 0 or stats is None or not hasattr(classifier, "features_of"):
        return p_empty
    lg = np.asarray(logits)
    terrains = [TERRAINS[int(i)] for i in lg[:, :len(TERRAINS)].argmax(axis=1)]
    unlike = novelty.unlike_tiles(
        terrains, novelty.distances(stats, classifier.features_of(lg), terrains), ncfg)
    return np.where(unlike, np.maximum(p_empty, least), p_empty)


def grown_logits(image, corners, rows: int, cols: int, logits: np.ndarray, top: int, left: int,
                 classifier, cfg: dict, first_turn_only: bool = False,
                 table: np.ndarray | None = None) -> np.ndarray:
    """Logits (row by row) of the grid grown by ``top`` squares above and below and ``left``
    on either side, the grid's own squares' ``logits`` kept: when it grows along one axis
    only, just the two new strips are read (cut by the same homography as the grid's), and
    a strip whose squares are all table by ``table`` (the grown grid's squares, booleans) is
    not read: it reads as sure bare table."""
    R, C = rows + 2 * top, cols + 2 * left
    if top and left:
        return read_grid(image, window_corners(corners, rows, cols, Window(-top, -left, R, C)),
                         R, C, classifier, cfg, first_turn_only)
    k = logits.shape[-1]
    out = np.empty((R, C, k), logits.dtype)
    out[top:top + rows, left:left + cols] = logits.reshape(rows, cols, k)
    if top:
        strips = [(Window(-top, 0, top, cols), (slice(0, top), slice(None))),
                  (Window(rows, 0, top, cols), (slice(top + rows, R), slice(None)))]
    else:
        strips = [(Window(0, -left, rows, left), (slice(None), slice(0, left))),
                  (Window(0, cols, rows, left), (slice(None), slice(left + cols, C)))]
    for w, (rs, cs) in strips:
        if table is not None and np.all(table[rs, cs]):
            out[rs, cs] = TABLE_LOGITS
            continue
        lg = read_grid(image, window_corners(corners, rows, cols, w), w.rows, w.cols,
                       classifier, cfg, first_turn_only)
        out[rs, cs] = lg.reshape(w.rows, w.cols, k)
    return out.reshape(R * C, k)


# a square known to be bare table without reading it: sure "empty", sure no crowns
TABLE_LOGITS = np.zeros(len(TERRAINS) + N_CROWNS, np.float32)
TABLE_LOGITS[TERRAINS.index("empty")] = TABLE_LOGITS[len(TERRAINS)] = 30.0


def can_frame(rows: int, cols: int, n: int, max_grow: int) -> bool:
    """Whether :func:`choose` can find an ``n x n`` window in a ``rows x cols`` grid: the
    grid holds one, or it is one side short of it by at most ``max_grow`` squares (read
    beyond that side, :func:`completion`)."""
    return (rows >= n and cols >= n) or (max(rows, cols) == n and n - min(rows, cols) <= max_grow)


def completion(rows: int, cols: int, frames, max_short: int | None = None) -> tuple[int, int]:
    """Squares to read beyond a ``rows x cols`` grid on each side, across (left and right)
    and down (top and bottom), so that every square frame of ``frames`` (sizes: a finished
    kingdom is 5x5 or 7x7) that holds the grid can be tried: a detector's outline that
    missed a row or two of tiles (the row's tiles the colour of the table) leaves a grid one
    side short of a square frame. A side more than ``max_short`` squares short is a
    half-built kingdom's strip, not a frame missing a row: nothing is read."""
    if rows == cols:
        return 0, 0
    n = max(rows, cols)
    if n not in frames or (max_short is not None and n - min(rows, cols) > max_short):
        return 0, 0
    return n - cols, n - rows


def too_few_tiles(terrains, cfg: dict) -> bool:
    """Whether squares read with these terrains hold fewer domino halves (neither the castle
    nor empty) than ``[reader] min_tiles``: then a found "kingdom" is not one."""
    tiles = sum(t not in ("castle", "empty") for t in terrains)
    return tiles < int(cfg["reader"]["min_tiles"])


def castle_hidden(terrains, is_frame: bool, crisp: float, cfg: dict) -> bool:
    """Whether a window with no likely castle is a kingdom all the same: a 5x5 or 7x7 window
    (``is_frame``) read at least ``[reader] hidden_castle_crisp`` crisply (:func:`crispness`)
    with at least ``hidden_castle_tiles`` (0: off) domino halves. Glare can wash the castle
    white, a hand hide it; loose dominoes, a box lid or a score pad make no such window."""
    tiles = sum(t not in ("castle", "empty") for t in terrains)
    return bool(is_frame and tiles >= int(cfg["reader"]["hidden_castle_tiles"]) > 0
                and crisp >= float(cfg["reader"]["hidden_castle_crisp"]))


def table_edge(terrains, distance, most: float) -> Window | None:
    """The window (in squares of the ``rows x cols`` window read, ``terrains`` row by row)
    without its first edge line whose squares all read as table or look like the table
    around the window (``distance``: ``vision.read.holes.table_distances``, under ``most``), at
    least one of them read as a tile: a line of table taken in with the kingdom and read as
    tiles (yellow stripes beside it read as fields, green checks as grassland), which the
    classifier reads surely and so no odds of table can leave out. A line of glare-washed
    tiles lies far from the table; a true edge of tiles that all match the table is rare.
    None when no line is such, or the window is one square thick across it."""
    rows, cols = len(terrains), len(terrains[0]) if terrains else 0
    d = np.asarray(distance, np.float64)

    def table(r, c):
        return terrains[r][c] == "empty" or d[r, c] < most

    def line(cells):
        cells = list(cells)
        return all(table(r, c) for r, c in cells) and any(terrains[r][c] != "empty"
                                                           for r, c in cells)

    if rows > 1 and line((0, c) for c in range(cols)):
        return Window(1, 0, rows - 1, cols)
    if rows > 1 and line((rows - 1, c) for c in range(cols)):
        return Window(0, 0, rows - 1, cols)
    if cols > 1 and line((r, 0) for r in range(rows)):
        return Window(0, 1, rows, cols - 1)
    if cols > 1 and line((r, cols - 1) for r in range(rows)):
        return Window(0, 0, rows, cols - 1)
    return None


def loose_edge(terrains, distance, most: float, frames, loose: int) -> Window | None:
    """The window (``terrains`` row by row, ``distance`` as :func:`table_edge`'s) without an
    edge band of two lines whose squares all read as table or look like the table (under
    ``most``) but for at most ``loose`` of them, when the window is no n x n frame of
    ``frames`` and what is left is one: a loose domino lying beside the kingdom, the table
    between them narrower than a square, is taken in with a line of table and its own (a 5x5
    read 7x5), and its squares keep :func:`table_edge` from cutting. One line is never cut
    so: a half-built kingdom's edge line holding a domino or two is as like (a dev phone
    photo's 5x6 read 5x5). Of two such bands, the one with fewer squares unlike the table;
    None on a tie, or when ``loose`` is 0 or no band is such."""
    rows, cols = len(terrains), len(terrains[0]) if terrains else 0
    if loose <= 0 or is_frame(rows, cols, frames):
        return None
    d = np.asarray(distance, np.float64)
    table = np.array([[t == "empty" for t in line] for line in terrains]) | (d < most)
    found = []
    k = 2
    for cut, band in ((Window(k, 0, rows - k, cols), table[:k]),
                      (Window(0, 0, rows - k, cols), table[rows - k:]),
                      (Window(0, k, rows, cols - k), table[:, :k]),
                      (Window(0, 0, rows, cols - k), table[:, cols - k:])):
        unlike = int((~band).sum())
        if min(cut.rows, cut.cols) > 0 and is_frame(cut.rows, cut.cols, frames) \
                and unlike <= loose:
            found.append((unlike, cut))
    found.sort(key=lambda f: f[0])
    if not found or len(found) > 1 and found[0][0] == found[1][0]:
        return None
    return found[0][1]
