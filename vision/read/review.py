"""Which squares of a reading a person should check, and why (the review list).

The classifier's confidence is one reason; the others come from the photo around the
squares: a square centred off the photo, a short gap between tiles that looks unlike the
table (glare washing a tile out), a bare square beside a tile that stands out from the
kingdom's other bare squares (the same at the rim), a square read as a tile that looks like
the table (a bare square of a cloth printed in a terrain's colours), a square read as a tile
that looks like no tile the classifier learned from, or like a Queendomino town
(``vision.read.novelty``).
"""
from __future__ import annotations

import cv2
import numpy as np

from engine.messages import (BARE_UNLIKE, GAP, GLARE, LIKE_TABLE, LOW_CONFIDENCE, NEAR_CASTLE,
                             OUTSIDE, RICH, TOWN_LIKE, UNLIKE_TILES, Message)
from vision.read.classify import SquareReading
from vision.geometry import board_homography
from vision.read.holes import pale_squares, table_distances


def outside_cells(shape, corners, rows: int, cols: int, rcfg: dict) -> set:
    """Cells whose centre maps outside the photo (by more than ``outside_tolerance`` cells)."""
    h, w = shape[:2]
    Hinv = np.linalg.inv(board_homography(corners, rows, cols, 1))
    tol = float(rcfg["outside_tolerance"])
    out = set()
    side = max(np.linalg.norm(np.asarray(corners[1]) - corners[0]) / cols, 1.0)
    for r in range(rows):
        for c in range(cols):
            p = cv2.perspectiveTransform(np.array([[[c + 0.5, r + 0.5]]], np.float64), Hinv)[0, 0]
            if (p[0] < -tol * side or p[1] < -tol * side or p[0] > w + tol * side
                    or p[1] > h + tol * side):
                out.add((r, c))
    return out


def review_reasons(grid: list[list[SquareReading]], rcfg: dict, outside=frozenset(),
                   gaps=frozenset(), like_table=frozenset(), bare=frozenset(),
                   glare=frozenset(), unlike=frozenset(), towns=frozenset()) -> dict:
    """(row, col) -> list of reasons a person should check that square. ``outside``: squares
    centred off the photo; ``gaps``: squares read as table in a short gap between tiles that
    look unlike the table (:func:`gaps_unlike_table`); ``like_table``: squares read as tiles
    that look like the table (:func:`tiles_like_table`); ``bare``: squares read as table
    beside a tile that look unlike the table, as the kingdom's other bare squares do not
    (:func:`bare_unlike_table`); ``glare``: squares under glare read less than surely
    (:func:`glare_squares`), flagged when no confidence reason already is; ``unlike``: squares
    read as tiles that look like no tile the classifier learned from, ``towns``: like a
    Queendomino town (``vision.read.novelty``). A tile read with odds of at least ``[review]
    flag_more_crowns`` that it holds more crowns than read (:func:`more_crowns`) is flagged
    for its confidence when no other confidence reason already is."""
    low = float(rcfg["min_confidence"])
    near_castle = float(rcfg["flag_castle_neighbours_below"])
    rich_from = int(rcfg["rich_crowns"])
    rich_low = float(rcfg["flag_rich_below"])
    more = float(rcfg["flag_more_crowns"])
    rows, cols = len(grid), len(grid[0]) if grid else 0
    castles = {(r, c) for r in range(rows) for c in range(cols) if grid[r][c].terrain == "castle"}
    reasons: dict = {}
    for r in range(rows):
        for c in range(cols):
            sq = grid[r][c]
            why = list(sq.flags)
            if sq.confidence < low:
                why.append(Message(LOW_CONFIDENCE, confidence=f"{sq.confidence:.2f}"))
            elif sq.confidence < near_castle and any(
                    abs(r - a) + abs(c - b) == 1 for a, b in castles):
                why.append(Message(NEAR_CASTLE, confidence=f"{sq.confidence:.2f}"))
            elif sq.crowns >= rich_from and sq.confidence < rich_low:
                why.append(Message(RICH, "n", n=sq.crowns, confidence=f"{sq.confidence:.2f}"))
            elif (r, c) in glare:
                why.append(Message(GLARE, confidence=f"{sq.confidence:.2f}"))
            elif more > 0 and more_crowns(sq) >= more:
                why.append(Message(LOW_CONFIDENCE, confidence=f"{sq.confidence:.2f}"))
            if (r, c) in outside:
                why.append(Message(OUTSIDE))
            if (r, c) in gaps:
                why.append(Message(GAP))
            elif (r, c) in bare:
                why.append(Message(BARE_UNLIKE))
            if (r, c) in like_table:
                why.append(Message(LIKE_TABLE))
            if (r, c) in towns:
                why.append(Message(TOWN_LIKE))
            elif (r, c) in unlike:
                why.append(Message(UNLIKE_TILES))
            if why:
                reasons[(r, c)] = why
    return reasons


def more_crowns(sq: SquareReading) -> float:
    """The odds that the square ``sq`` holds more crowns than it was read with, its terrain as
    read (0 for a square whose odds are unknown, the castle or bare table). A crown missed is
    the usual miscount (a small, steep kingdom's crown blurred to a few pixels), and a square
    read surely can still give a missed crown a few hundredths."""
    if sq.terrain in ("empty", "castle") or not sq.crown_odds:
        return 0.0
    return float(sum(sq.crown_odds[sq.crowns + 1:]))


def glare_squares(grid, rcfg: dict, shares_of) -> set:
    """Squares read with a confidence under ``[review] flag_glare_below`` whose glare share
    (``vision.read.glare.square_glare``, (rows, cols) from ``shares_of()``, called only when some
    square is that unsure) is at least ``[review] flag_glare`` (0: none). Glare over part of
    a square can take a crown's colour off and leave the square read, a little less surely,
    without it (a lake's crown at the edge of a lamp's reflection, seed 17013: 0.98)."""
    least, below = float(rcfg["flag_glare"]), float(rcfg["flag_glare_below"])
    unsure = [(r, c) for r, row in enumerate(grid) for c, sq in enumerate(row)
              if sq.confidence < below]
    if least <= 0 or not unsure:
        return set()
    shares = np.asarray(shares_of(), np.float64)
    return {(r, c) for r, c in unsure if shares[r, c] >= least}


def gap_squares(grid, longest: int) -> set:
    """Squares read as table in a run of at most ``longest`` squares with a tile (castle
    included) at both ends, along a row or a column (``longest`` 0: none)."""
    rows, cols = len(grid), len(grid[0]) if grid else 0
    return {(r, c) for r in range(rows) for c in range(cols)
            if longest > 0 and grid[r][c].terrain == "empty" and _between_tiles(grid, r, c, longest)}


def tiles_like_table(grid, distance, rcfg: dict) -> set:
    """Squares read as tiles (castle included) whose distance to the table around the kingdom
    (``vision.read.holes.table_distance``, (rows, cols)) is under ``[review] flag_tile_like_table``
    (0: none): ``vision.read.holes`` raised their odds of table and the classifier still read a
    tile, as it does with a bare square of a cloth printed in a terrain's colours."""
    d = np.asarray(distance, np.float64)
    most = float(rcfg["flag_tile_like_table"])
    rows, cols = len(grid), len(grid[0]) if grid else 0
    return {(r, c) for r in range(rows) for c in range(cols)
            if grid[r][c].terrain != "empty" and d[r, c] < most}


def review_distances(grid, rcfg: dict, ring_of, hcfg: dict) -> tuple[set, set, set]:
    """``(gaps, bare, like_table)`` for :func:`review_reasons`; ``ring_of()`` gives the
    window's ``vision.read.holes.ring_features`` (measured only when a flag needs them), ``hcfg``
    the ``[holes]`` settings their distances to the table are measured with. ``bare`` holds
    the :func:`bare_unlike_table` squares and the :func:`washed_bare` ones."""
    gaps = gap_squares(grid, int(rcfg["flag_gaps"]))
    bare = bare_squares(grid) if float(rcfg["bare_unlike_table"]) > 0 else set()
    if not gaps and not bare and float(rcfg["flag_tile_like_table"]) <= 0:
        return set(), set(), set()
    ring = ring_of()
    distance = table_distances(*ring, hcfg)
    washed = set()
    if bare and float(rcfg["washed_light"]) > 0:
        washed = washed_bare(grid, distance, pale_squares(ring[0], float(rcfg["washed_light"]),
                                                          float(rcfg["washed_chroma"])),
                             rcfg, bare)
    return (gaps_unlike_table(grid, distance, rcfg, gaps),
            bare_unlike_table(grid, distance, rcfg, bare) | washed,
            tiles_like_table(grid, distance, rcfg))


def washed_bare(grid, distance, pale, rcfg: dict, bare=None) -> set:
    """The :func:`bare_squares` that are ``pale`` (white or pale grey: ``vision.read.holes.
    pale_squares``) and lie at least ``[review] bare_unlike_table`` from the table around the
    kingdom: tiles washed white by glare and read as table, whatever the kingdom's other bare
    squares look like (a washed corner of a full kingdom has no true bare square to compare
    with, so :func:`bare_unlike_table`'s ratio takes them for the table's own look)."""
    d = np.asarray(distance, np.float64)
    least = float(rcfg["bare_unlike_table"])
    bare = bare_squares(grid) if bare is None else bare
    return {(r, c) for r, c in bare if pale[r][c] and np.isfinite(d[r, c]) and d[r, c] >= least}


def bare_squares(grid) -> set:
    """Squares read as table with a tile (castle included) beside them, along a row or a
    column."""
    rows, cols = len(grid), len(grid[0]) if grid else 0

    def tile(r, c):
        return 0 <= r < rows and 0 <= c < cols and grid[r][c].terrain != "empty"

    return {(r, c) for r in range(rows) for c in range(cols) if grid[r][c].terrain == "empty"
            and any(tile(r + dr, c + dc) for dr, dc in ((0, 1), (1, 0), (0, -1), (-1, 0)))}


def bare_unlike_table(grid, distance, rcfg: dict, bare=None) -> set:
    """The :func:`bare_squares` whose distance to the table around the kingdom
    (``vision.read.holes.table_distance``) is at least ``[review] bare_unlike_table`` (0: none) and
    at least ``bare_unlike_ratio`` times the median distance of the squares read as table, or
    at least ``bare_far_from_table`` whatever the others: a tile at the kingdom's rim washed
    out by glare and read as table lies in no gap, and looks much less like the table than the
    kingdom's true bare squares do (on a textured table every bare square lies farther from
    the ring of table, and none stands out); a whole corner of tiles read as table stands out
    from nothing, but lies far from the table. ``bare``: the :func:`bare_squares` when already
    found."""
    least = float(rcfg["bare_unlike_table"])
    if least <= 0:
        return set()
    d = np.asarray(distance, np.float64)
    rows, cols = d.shape
    empty = [d[r, c] for r in range(rows) for c in range(cols)
             if grid[r][c].terrain == "empty" and np.isfinite(d[r, c])]
    if not empty:
        return set()
    least = min(max(least, float(rcfg["bare_unlike_ratio"]) * float(np.median(empty))),
                float(rcfg["bare_far_from_table"]))
    bare = bare_squares(grid) if bare is None else bare
    return {(r, c) for r, c in bare if np.isfinite(d[r, c]) and d[r, c] >= least}


def gaps_unlike_table(grid, distance, rcfg: dict, gaps=None) -> set:
    """The :func:`gap_squares` (``[review] flag_gaps``) whose distance to the table around the
    kingdom (``vision.read.holes.table_distance``, (rows, cols)) is at least ``[review]
    gap_unlike_table``: a hole in a kingdom shows the table, a tile washed out by glare and
    read as table does not. No reference table (infinite distance): none. ``gaps``: the
    :func:`gap_squares` when already found."""
    d = np.asarray(distance, np.float64)
    least = float(rcfg["gap_unlike_table"])
    gaps = gap_squares(grid, int(rcfg["flag_gaps"])) if gaps is None else gaps
    return {(r, c) for r, c in gaps if np.isfinite(d[r, c]) and d[r, c] >= least}


def _between_tiles(grid, r: int, c: int, longest: int) -> bool:
    """Whether the square at (r, c) lies in a run of at most ``longest`` squares read as table
    with a tile (castle included) at both ends, along its row or its column: a gap of a square
    or two inside a kingdom is rare, tiles washed out by glare and read as table are not."""
    rows, cols = len(grid), len(grid[0])

    def tile(rr, cc):
        return grid[rr][cc].terrain != "empty"

    for dr, dc in ((0, 1), (1, 0)):
        ends = []
        for sign in (-1, 1):
            rr, cc, run = r + sign * dr, c + sign * dc, 0
            while 0 <= rr < rows and 0 <= cc < cols and not tile(rr, cc):
                rr, cc, run = rr + sign * dr, cc + sign * dc, run + 1
            ends.append((0 <= rr < rows and 0 <= cc < cols, run))
        if ends[0][0] and ends[1][0] and 1 + ends[0][1] + ends[1][1] <= longest:
            return True
    return False
