"""The reader: photo -> board (``vision.find.detect``) -> crops (``vision.read.crops``) -> squares.

``Reader`` loads the models once; ``Reader.read(image, size=None)`` returns a :class:`Reading`
whose ``to_json()`` gives the contract's kingdom fields plus where the board was found.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from vision import config as _config
from vision.read import glare as deglare
from vision.find import detect
from vision.find import frame
from vision.read import holes
from vision.find import reframe
from vision.find import second_net
from vision.find import whole_table as table
from vision.read.classify import SquareClassifier
from vision.errors import NO_KINGDOM, PhotoError
from vision.find.frame import too_few_tiles
from vision.geometry import board_homography, overlaps, window_corners
from vision.read.review import glare_squares, outside_cells, review_distances, review_reasons
from vision.read.crops import cell_crops, rectify


@dataclass
class Reading:
    """What the reader saw: a ``size x size`` grid of squares and where the kingdom was."""

    size: int
    cells: list                      # size x size dicts: terrain, crowns, confidence
    review: list                     # [row, col] a person should check
    corners: list                    # 4 x [x, y] image px: tl, tr, br, bl of the read rectangle
    homography: list                 # 3x3, image px -> rectified board px
    rows: int                        # the read rectangle (placed top-left in the frame)
    cols: int
    warnings: list = field(default_factory=list)
    reasons: dict = field(default_factory=dict)   # "r,c" -> why it is in review

    def to_json(self) -> dict:
        return {"size": self.size, "cells": self.cells, "review": self.review,
                "corners": self.corners, "homography": self.homography,
                "rows": self.rows, "cols": self.cols, "warnings": list(self.warnings)}


@dataclass
class _Found:
    corners: np.ndarray
    rows: int
    cols: int
    size: int
    offsets: np.ndarray | None      # in the classifier's board px
    warnings: list
    logits: np.ndarray | None = None  # the squares already read (vision.find.frame), row by row
    grid: list | None = None          # ... and their readings (classifier.read_logits)
    table: tuple | None = None        # vision.read.holes.ring_features of the window, when measured
    reread: tuple | None = None       # vision.read.glare.reread of logits, when made (find's castle)


def _frame(rows: int, cols: int, size: int | None) -> int:
    need = max(rows, cols)
    if size is not None and size >= need:
        return size
    return 5 if need <= 5 else 7


class Reader:
    """Loads the square classifier once; ``read`` is safe to call many times."""

    def __init__(self, config: dict | None = None, model_path=None):
        self.cfg = config if config is not None else _config.load()
        self.ccfg = self.cfg["classify"]
        self.rcfg = self.cfg["review"]
        self.classifier = SquareClassifier(model_path, self.ccfg)

    # ------------------------------------------------------------------ board
    def find(self, image: np.ndarray, size: int | None = None) -> _Found:
        """The kingdom's outline and grid. With ``[frame] enabled`` (and ``[grid]`` off) each
        outline the detector finds (``vision.find.detect.candidates``, best first) is read (with
        ``[frame] ring`` squares around it) and its window chosen by the square classifier
        (``vision.find.frame``; when the seams' lattice moved the detector's grid, or the vanishing
        points the blob's quadrilateral, the other grid is read too and the crisper kept). A
        window is a kingdom when it holds at least ``[reader] min_tiles`` domino halves and a
        square with castle odds of at least ``[reader] min_castle_odds`` (under
        ``sure_castle_odds``, read with the glare taken off too, ``vision.read.glare.reread_odds``,
        which makes no sure castle) or is a crisp frame full of tiles (``frame.castle_hidden``);
        the first whose castle odds reach ``sure_castle_odds`` is taken, else (after ``[frame]
        max_candidates`` outlines) a kingdom in a 5x5 or 7x7 window (``[frame] square_frames``)
        before one short of a frame, then the likeliest castle. A sure castle in a window short
        of a frame, from a count the detector was unsure of (``past_short_count_below``), has up
        to ``[reader] past_short_castle`` more outlines over it read (new grids only): a 5x5 or
        7x7 window there with a sure castle wins when its squares read as crisply
        (``past_short_margin``). A sure castle in a window read blurred (``recheck_*``) has up
        to ``recheck_more`` more outlines over it read, and the crispest frame wins. Once a 5x5
        or 7x7 window is read, a sure castle in a window short of a frame that reads blurred
        (``short_sure_crisp``) is ranked by its odds, not taken as sure. A search that ends
        unconvinced reads the whole-table search's kingdoms too (:meth:`_from_table`)."""
        if not self.cfg["frame"]["enabled"] or self.cfg["grid"]["enabled"]:
            return self._found_board(image, size)
        if size is not None and size not in (5, 7):
            raise ValueError(f"size must be 5 or 7, got {size}")
        tries = int(self.cfg["frame"]["max_candidates"])
        least = float(self.cfg["reader"]["min_castle_odds"])
        sure = float(self.cfg["reader"]["sure_castle_odds"])
        best, best_key, best_conf = None, None, 0.0
        frames = [int(n) for n in self.cfg["frame"]["square_frames"]]
        more = int(self.cfg["reader"]["past_short_castle"])
        same, read, best_crisp = float(self.cfg["lattice"]["same_grid"]), [], 0.0
        blurred = float(self.cfg["reader"]["recheck_crisp_below"])
        short_sure_crisp = float(self.cfg["reader"]["short_sure_crisp"])
        recheck, grow = False, int(self.cfg["frame"]["max_grow"])

        def known(c, r, k):     # a grid read already (``read``: corners, rows, cols)
            return any(detect.same_grid(c, r, k, *o, same) for o in read)

        for k, (corners, found_rows, found_cols, conf, warnings, first) in enumerate(
                _outlines(image, self.cfg, size)):
            read_on = best is not None and best_key[0]
            if read_on:
                # past a sure castle in a window short of a frame, only new outlines over that
                # window are read, ``past_short_castle`` at most (the detector's first
                # outline may have cut the kingdom or counted it wrong on a tile-coloured table)
                # (past a blurred 5x5 / 7x7 window, only outlines that can frame one)
                # (an outline on a grid already read is read again only for another grid
                # found for it that was not: the seams' quadrilateral of a count made twice)
                if not overlaps(corners, best.corners) or known(corners, found_rows, found_cols) \
                        and all(known(*alt[:3]) for alt in first or []) \
                        or recheck and not any(frame.can_frame(found_rows, found_cols, n, grow)
                                               for n in frames if n <= best.size):
                    if k + 1 >= tries:
                        break
                    continue
                more -= 1
            read.append((corners, found_rows, found_cols))
            # the outline's grid, then the others found for it (corners, rows, cols, kind):
            # "lattice" when the seams moved its grid, "blob" when vanishing points moved it,
            # "zoom" for a small outline's grid found again in a crop around it, "seams" for
            # the quadrilateral along the seams' own directions
            hypotheses = [(corners, found_rows, found_cols)] + [o[:3] for o in first or []]
            margins = [0.0] + [self._margin(o[3]) for o in first or []]
            if len(hypotheses) > 1:
                # the seams' lattice against the outline's own grid: the crisper reading wins
                # (squares cut on the tiles' own grid read crisply, a grid that cuts tiles
                # blurred), judged on the squares as cut; the winner is then read in full
                # (its first turn is not read twice)
                quick = [frame.choose(image, *h, self.classifier, self.cfg, size,
                                      first_turn_only=True)[3] for h in hypotheses]
                best_h = max(range(len(quick)), key=lambda i: frame.crispness(
                    quick[i], self.classifier.t_terrain) - margins[i])
                hypotheses = [hypotheses[best_h]]
            found = self.framed(image, *hypotheses[0], size, warnings)
            grid = found.grid
            castle = seen = frame.terrain_odds(found.logits, "castle",
                                               self.classifier.t_terrain).max()
            if castle < sure:   # glare on the castle? read again with it off (never sure so)
                found.reread = deglare.reread(image, found.corners, found.rows, found.cols,
                                              found.logits, self.classifier, self.cfg)
                castle = max(castle, deglare.reread_odds(found.reread, self.classifier, "castle"))
            crisp = frame.crispness(found.logits, self.classifier.t_terrain)
            is_frame = detect.is_frame(found.rows, found.cols, frames)
            # against a 5x5 / 7x7 window already read, a window short of a frame read blurred
            # (cut off the tiles' own grid) has its castle's odds ranked, not taken as sure: a
            # castle washed by glare in its kingdom's crisp frame lost to a piece counted wrong
            key = self._key(castle, seen >= sure and (
                is_frame or crisp >= short_sure_crisp or best is None or not best_key[1]),
                is_frame, crisp)
            if read_on and crisp < best_crisp - float(self.cfg["reader"]["past_short_margin"]):
                key = (False,) + key[1:]      # read past a sure castle: blurred squares lose
            better = best is None or key > best_key or (recheck and key == best_key and (
                found.size == best.size and crisp > best_crisp or found.size < best.size
                and crisp > best_crisp + float(self.cfg["reader"]["recheck_smaller_margin"])))
            terrains = [sq.terrain for row in grid for sq in row]
            if not too_few_tiles(terrains, self.cfg) and better and (
                    castle >= least or frame.castle_hidden(terrains, is_frame, crisp, self.cfg)):
                best, best_key, best_crisp, best_conf = found, key, crisp, float(conf)
                # a window that reads blurred (cut off the tiles' own grid) has ``recheck_more``
                # more outlines over it read: a frame wins over no frame, then the crispest;
                # a crisp short window from a count the detector was sure of (a half-built
                # kingdom on a plain table) ends the search as a frame-sized one does
                if key[0] and not read_on and crisp < blurred:
                    recheck, more = True, int(self.cfg["reader"]["recheck_more"])
                elif key[0] and not read_on and self._sure_count(conf, found.rows, found.cols):
                    more = 0
            # a kingdom with a sure castle in a 5x5 or 7x7 window ends the search (one short
            # of a frame too, unless ``past_short_castle``); an unsure castle (a box lid, a
            # window of table) lets the next outlines be read too: a 5x5 or 7x7 window wins
            # over one short of a frame, then the likelier castle
            if k + 1 >= tries or (best is not None and best_key[0]
                                  and (best_key[1] and not recheck or more <= 0)):
                break
        # unconvinced (no sure castle in a crisp window, 5x5 / 7x7 or from a sure count): the
        # whole-table search, which cuts a kingdom off a score board or a neighbour
        if self.cfg["reader"]["table_fallback"] and not (
                best is not None and best_key[0]
                and best_crisp >= float(self.cfg["reader"]["table_fallback_crisp"])
                and (best_key[1] or self._sure_count(best_conf, best.rows, best.cols))):
            found = self._from_table(image, size, best, best_key, best_crisp)
            best, best_conf = found, best_conf if found is best else 0.0   # 0: never counted
        if best is not None:   # a blurred 5x5 / 7x7: the other square frames on its outline
            best = reframe.other_frame(self, image, best, size)
        return second_net.second_opinion(self, image, size, best, best_conf)   # none: PhotoError

    def _from_table(self, image, size, best, best_key, best_crisp):
        """The whole-table search's kingdoms (``vision.find.whole_table.read_kingdoms``: every tile blob,
        each cut apart where only a thin bridge joins it to clutter) against ``best``, the
        detector's outlines' reading (key and crispness as in :meth:`find`): a kingdom there
        that reads at least ``[reader] table_fallback_crisp``, or crisper than ``best`` by
        ``table_fallback_margin`` (on camo cloth the kingdom's 5x5 read -0.137 against a 2x6
        strip's -0.265), wins when its key is higher, or the same and its squares read crisper
        by that margin (a window padded with table reads crisper for its sure bare squares).
        Against a ``best`` read blurred (under ``table_fallback_crisp``), a 5x5 / 7x7 kingdom
        read at least that crisply ranks as a sure castle (``[reader] table_crisp_frame``).
        The detector keeps only the largest blob, so a kingdom whose blob joins a score board
        or another kingdom beside it is outlined together with them."""
        frames = [int(n) for n in self.cfg["frame"]["square_frames"]]
        sure = float(self.cfg["reader"]["sure_castle_odds"])
        least = float(self.cfg["reader"]["table_fallback_crisp"])
        margin = float(self.cfg["reader"]["table_fallback_margin"])
        crisp_frame = (self.cfg["reader"]["table_crisp_frame"] and best is not None
                       and best_crisp < least)
        for _, found, _, crisp in table.read_kingdoms(self, image, size):
            if crisp < least and (best is None or crisp < best_crisp + margin):
                continue        # blurred: cut off the tiles' own grid, or a window of cloth
            castle = frame.terrain_odds(found.logits, "castle", self.classifier.t_terrain).max()
            is_frame = detect.is_frame(found.rows, found.cols, frames)
            key = self._key(castle, castle >= sure or crisp_frame and is_frame and crisp >= least,
                            is_frame, crisp)
            if best is None or key > best_key or (key == best_key and crisp > best_crisp + margin):
                best, best_key, best_crisp = found, key, crisp
        return best

    def _sure_count(self, conf: float, rows: int, cols: int) -> bool:
        """Whether a window the detector counted with confidence ``conf`` is a half-built
        kingdom's, read as sure as a frame: a count at least ``[reader]
        past_short_count_below`` of a window no longer than the smallest square frame, or
        as long as a frame (a half-built 7x7's 5x7). A 5x6 or 6x6 from a sure count is more
        often a 5x5 with a line of table read as tiles (brown wood read as swamp) than a
        half-built 7x7: the outlines over it are read."""
        frames = [int(n) for n in self.cfg["frame"]["square_frames"]]
        longest = max(rows, cols)
        return (float(conf) >= float(self.cfg["reader"]["past_short_count_below"])
                and (longest <= min(frames) or longest in frames))

    def _key(self, castle: float, sure: bool, is_frame: bool, crisp: float) -> tuple:
        """How :meth:`find` ranks a window: a sure castle first, then a 5x5 / 7x7 window,
        then (among unsure castles) how crisply its squares read or, with ``[reader]
        unsure_by_crisp`` off, the castle's odds."""
        return sure, is_frame, 0.0 if sure else (
            crisp if self.cfg["reader"]["unsure_by_crisp"] else castle)

    def _margin(self, kind: str) -> float:
        """How much crisper than the outline's grid another grid found for it must read:
        ``[lattice] keep_margin`` for the quadrilateral's own grid, ``[detect]
        blob_quad_margin`` for the blob's own quadrilateral, ``zoom_crisp_margin`` for a grid
        found in a crop around a small outline, ``seam_crisp_margin`` for the quadrilateral
        along the seams' own directions."""
        return float(self.cfg["detect"]["blob_quad_margin"] if kind == "blob"
                     else self.cfg["detect"]["zoom_crisp_margin"] if kind == "zoom"
                     else self.cfg["detect"]["seam_crisp_margin"] if kind == "seams"
                     else self.cfg["lattice"]["keep_margin"])

    def framed(self, image: np.ndarray, corners, rows: int, cols: int, size: int | None = None,
               warnings=(), cfg: dict | None = None) -> _Found:
        """A found outline's grid with the kingdom's window chosen in it by the square
        classifier (``vision.find.frame.choose``, settings ``[frame]`` of ``cfg``, default the
        reader's), its squares read: hand it to :meth:`read_board`. A window other than the
        outline's grid adds a warning."""
        cfg = cfg if cfg is not None else self.cfg
        new, new_rows, new_cols, logits = frame.choose(image, corners, rows, cols,
                                                       self.classifier, cfg, size)
        most = float(cfg["frame"]["trim_like_table"])
        smallest = min(int(n) for n in cfg["frame"]["square_frames"])
        while True:
            # a square like the table around the kingdom reads as table (vision.read.holes); the
            # classifier's own logits stay for judging frames (crispness, castle odds)
            table = None
            if cfg["holes"]["enabled"]:
                table = holes.ring_features(image, new, new_rows, new_cols, cfg["holes"])
            held = holes.with_holes(image, new, new_rows, new_cols, logits, cfg,
                                    self.classifier.t_terrain, self.classifier.t_crowns, table)
            grid = self.classifier.read_logits(held, new_rows, new_cols)
            if table is None or most <= 0 or max(new_rows, new_cols) <= smallest:
                break
            # an edge line of table read as tiles leaves a window larger than the smallest
            # frame (vision.find.frame.table_edge): a 5x5 read 5x6 or 7x7 with the table around
            # it; the rest is read again with its own ring of table
            cut = frame.table_edge([[sq.terrain for sq in row] for row in grid],
                                   holes.table_distances(*table, cfg["holes"]), most)
            if cut is None:
                break
            logits = logits[cut.squares(new_rows, new_cols)]
            new = window_corners(new, new_rows, new_cols, cut)
            new_rows, new_cols = cut.rows, cut.cols
        warnings = list(warnings)
        if (new_rows, new_cols) != (rows, cols):
            warnings.append(f"the outline found held {rows}x{cols} squares; by what its "
                            f"squares read, the kingdom is {new_rows}x{new_cols}: check its outline")
        return _Found(np.asarray(new, np.float32), new_rows, new_cols,
                      _frame(new_rows, new_cols, size), None, warnings, logits, grid, table)

    def _found_board(self, image: np.ndarray, size: int | None) -> _Found:
        cell = self.ccfg["cell"]
        board = detect.find_board(image, self.cfg, size=size)
        offsets = None
        if getattr(board, "offsets", None) is not None and board.cell:
            offsets = np.asarray(board.offsets, dtype=np.float64) * (cell / board.cell)
        return _Found(np.asarray(board.corners, np.float32), board.rows, board.cols,
                      board.size, offsets, list(board.warnings))

    # ------------------------------------------------------------------ read
    def read(self, image: np.ndarray, size: int | None = None, *, corners=None,
             rows: int | None = None, cols: int | None = None) -> Reading:
        """Read a BGR photo. ``corners`` (+ ``rows``, ``cols``) skip detection (known board)."""
        if image is None or not hasattr(image, "shape") or image.ndim != 3 or image.shape[2] != 3:
            raise PhotoError("expected a colour (BGR) image: decode the photo with vision.load_image")
        if size is not None and size not in (5, 7):
            raise ValueError(f"size must be 5 or 7, got {size}")
        if corners is not None:
            r, c = rows or 5, cols or 5
            found = _Found(np.asarray(corners, np.float32), r, c, _frame(r, c, size), None, [])
            return self.read_board(image, found, size)
        return self.check_found(self.read_board(image, self.find(image, size), size))

    def check_found(self, reading: Reading) -> Reading:
        """The reading of a kingdom the reader found itself, refused (``PhotoError``, "no
        kingdom") when it holds fewer domino halves than ``[reader] min_tiles``: what was found
        holds no domino (loose tiles, a mat's printed grid, a box lid)."""
        if too_few_tiles((cell["terrain"] for row in reading.cells for cell in row), self.cfg):
            raise PhotoError(NO_KINGDOM)
        return reading

    def read_board(self, image, found: _Found, size: int | None = None) -> Reading:
        cell, bm, cm = self.ccfg["cell"], self.ccfg["board_margin"], self.ccfg["crop_margin"]
        rows, cols = found.rows, found.cols
        grid, hcfg = found.grid, self.cfg["holes"]
        table = found.table        # the window's ring features, measured once per reading
        shares = None              # each square's glare share (vision.read.glare), when measured
        if grid is None:  # not read yet (vision.find.frame reads its window while choosing it)
            board, _ = rectify(image, found.corners, rows, cols, cell, bm)
            crops = cell_crops(board, rows, cols, cell, board_margin=bm, crop_margin=cm,
                               offsets=found.offsets)
            if hcfg["enabled"]:
                table = holes.ring_features(image, found.corners, rows, cols, hcfg)
            # squares under glare read again with it taken off (vision.read.glare), this board's
            washed = deglare.washed_crops(board, rows, cols, self.cfg, found.offsets)
            raw, _ = deglare.with_washed(self.classifier.logits(crops), washed, self.classifier,
                                         self.cfg)
            shares = washed[2]
            logits = holes.with_holes(image, found.corners, rows, cols, raw, self.cfg,
                                      self.classifier.t_terrain, self.classifier.t_crowns, table,
                                      far=True)
            grid = self.classifier.read_logits(logits, rows, cols)
        elif found.logits is not None:
            # the window was chosen, and judged, on the squares as seen; read, those under
            # glare are read again with it taken off (vision.read.glare; once, when find has) ...
            raw, again, shares = found.reread or deglare.reread(
                image, found.corners, rows, cols, found.logits, self.classifier, self.cfg)
            # ... and on table odds that leave squares unlike the table alone (clutter is
            # unlike it too); read, such a square is a washed-out tile more likely than table
            # (vision.read.holes.far_penalty)
            far_on = table is not None and float(hcfg["far_penalty"]) > 0
            if again or far_on:
                args = (image, found.corners, rows, cols, raw, self.cfg,
                        self.classifier.t_terrain, self.classifier.t_crowns, table)
                far = holes.with_holes(*args, far=far_on)
                if again or not np.array_equal(far, holes.with_holes(*args)):
                    grid = self.classifier.read_logits(far, rows, cols)
        gaps, bare, like_table = review_distances(
            grid, self.rcfg, lambda: table if table is not None else holes.ring_features(
                image, found.corners, rows, cols, hcfg), hcfg)
        glare = glare_squares(grid, self.rcfg, lambda: shares if shares is not None else
                              deglare.photo_glare(image, found.corners, rows, cols, self.cfg))
        reasons = review_reasons(grid, self.rcfg, outside_cells(image.shape, found.corners,
                                                                rows, cols, self.rcfg),
                                 gaps, like_table, bare, glare)
        frame = _frame(rows, cols, size if size is not None else found.size)
        warnings = list(found.warnings)
        if size is not None and frame != size:
            warnings.append(f"the kingdom found is {rows}x{cols} squares, larger than the "
                            f"{size}x{size} frame asked for: read as {frame}x{frame}")
        cells = [[{"terrain": "empty", "crowns": 0, "confidence": 1.0} for _ in range(frame)]
                 for _ in range(frame)]
        for r in range(rows):
            for c in range(cols):
                sq = grid[r][c]
                cells[r][c] = {"terrain": sq.terrain, "crowns": sq.crowns,
                               "confidence": round(float(sq.confidence), 4)}
        review = [[r, c] for r, c in sorted(reasons)]
        # homography from the image to the rectified board without the margin, cell px squares
        Hn = board_homography(found.corners, rows, cols, cell)
        return Reading(size=frame, cells=cells, review=review,
                       corners=[[float(x), float(y)] for x, y in found.corners],
                       homography=[[float(v) for v in row] for row in Hn],
                       rows=rows, cols=cols, warnings=warnings,
                       reasons={f"{r},{c}": v for (r, c), v in reasons.items()})


def _outlines(image, cfg, size):
    """The detector's outlines with their other grids (``detect.candidates``), none when it
    finds no tile blob at all (the whole-table search may still find a kingdom)."""
    try:
        yield from detect.candidates(image, cfg, size, alternatives=True)
    except PhotoError:
        return
