"""The reader: photo -> the kingdom's window (``vision.find``) -> its squares (``vision.read``).

``Reader`` loads the models once; ``Reader.read(image, size=None)`` returns a :class:`Reading`
whose ``to_json()`` gives the contract's kingdom fields plus where the board was found.
``Reader.find`` conducts the search for the kingdom (``vision.find.search``: the detector's
outlines, the whole-table search, the other frame, the second tile network), each step given
what it needs and the reader's ``framed`` to read a window; ``read_board`` reads the window
found.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from engine.kingdom import SIZES
from engine.messages import TOWN_LIKE, TOWN_READ, TOWNS_WARNING, Message
from vision import config as _config
from vision.read import glare as deglare
from vision.find import frame
from vision.read import holes
from vision.read import learned
from vision.read import novelty
from vision.find import reframe
from vision.find import search
from vision.find import second_net
from vision.find import whole_table as table
from vision.read.classify import SquareClassifier
from vision.errors import NO_KINGDOM, PhotoError
from vision.find.frame import frame_size, too_few_tiles
from vision.find.search import Candidate, Objective, OutlineSearch
from vision.geometry import board_homography, window_corners
from vision.read.review import glare_squares, outside_cells, review_distances, review_reasons
from vision.read.crops import cell_crops, read_once, rectify


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
    learned: int = 0                 # learned examples that moved its squares (vision.read.learned)
    towns: list = field(default_factory=list)     # [row, col] that look like Queendomino towns

    def to_json(self) -> dict:
        return {"size": self.size, "cells": self.cells, "review": self.review,
                "corners": self.corners, "homography": self.homography,
                "rows": self.rows, "cols": self.cols, "warnings": list(self.warnings),
                **({"learned": self.learned} if self.learned > 0 else {})}

    def with_towns(self) -> "Reading":
        """This reading for the Queendomino rules: the squares that look like its towns read as
        ``town`` (no printed crowns), in review with that reason, and without the warning that
        the kingdom looks like a Queendomino one (``vision.read.novelty``)."""
        if not self.towns:
            return self
        cells = [[dict(cell) for cell in row] for row in self.cells]
        reasons = dict(self.reasons)
        for r, c in self.towns:
            cells[r][c].update(terrain="town", crowns=0)
            key = f"{r},{c}"
            reasons[key] = [Message(TOWN_READ) if getattr(w, "msgid", None) == TOWN_LIKE else w
                            for w in reasons.get(key, [])]
        warnings = [w for w in self.warnings if getattr(w, "msgid", None) != TOWNS_WARNING]
        return replace(self, cells=cells, reasons=reasons, warnings=warnings)


class Reader:
    """Loads the square classifier once; ``read`` is safe to call many times."""

    def __init__(self, config: dict | None = None, model_path=None):
        self.cfg = config if config is not None else _config.load()
        self.ccfg = self.cfg["classify"]
        self.rcfg = self.cfg["review"]
        self.classifier = SquareClassifier(model_path, self.ccfg)

    # ------------------------------------------------------------------ board
    def find(self, image: np.ndarray, size: int | None = None) -> Candidate:
        """The kingdom's window (a ``vision.find.search.Candidate``, its squares read).

        Each outline the detector finds (``vision.find.detect.candidates``, best first) is
        read by :meth:`framed` and the windows weighed by ``vision.find.search.Objective``
        (``OutlineSearch`` says which outlines are read, and when the search ends). A search
        that ends unconvinced (``Objective.convinced``) reads the whole-table search's
        kingdoms too (``vision.find.whole_table.read_kingdoms``, with ``[reader]
        table_fallback``). A 5x5 / 7x7 window read blurred is cut as the other frames on its
        outline (``vision.find.reframe``), and no 5x5 / 7x7 window, or none, has the second
        tile network search the photo again (``vision.find.second_net``). Raises
        ``PhotoError`` (no kingdom) when nothing is found."""
        if size is not None and size not in SIZES:
            raise ValueError(f"size must be 5 or 7, got {size}")
        with read_once(image):    # a window's board and ring are made once for the search
            found = self._search(image, size, self.cfg)
        if found is None:
            raise PhotoError(NO_KINGDOM)
        return found

    def _search(self, image: np.ndarray, size: int | None, cfg: dict) -> Candidate | None:
        """:meth:`find`'s search with the configuration ``cfg`` (the second tile network's
        search runs it with its own); None when it finds no kingdom."""
        t = self.classifier.t_terrain
        objective = Objective(cfg, t)

        def window(corners, rows, cols, warnings=()):
            return self.framed(image, corners, rows, cols, size, warnings, cfg)

        best = OutlineSearch(image, size, cfg, self.classifier, window, objective).run(
            search.outlines(image, cfg, size))
        if cfg["reader"]["table_fallback"] and not objective.convinced(best):
            # the whole-table search cuts a kingdom off a score board or a neighbour
            best = objective.pick_table(best, table.read_kingdoms(
                image, cfg, t, window, lambda w: self.read_board(image, w, size)))
        found, count = (best.window, best.count) if best is not None else (None, 0.0)
        if found is not None:   # a blurred 5x5 / 7x7: the other square frames on its outline
            found = objective.pick_reframed(found, reframe.other_frames(found, window, cfg, t,
                                                                        size))
        if objective.doubts(found, count):   # no 5x5 / 7x7: the second tile network's search
            found = objective.pick_second(found, second_net.second_look(
                cfg, lambda other: self._search(image, size, other)))
        return found

    def framed(self, image: np.ndarray, corners, rows: int, cols: int, size: int | None = None,
               warnings=(), cfg: dict | None = None) -> Candidate:
        """A found outline's grid with the kingdom's window chosen in it by the square
        classifier (``vision.find.frame.choose``, settings ``[frame]`` of ``cfg``, default the
        reader's), its squares read: hand it to :meth:`read_board`. A window other than the
        outline's grid adds a warning."""
        cfg = cfg if cfg is not None else self.cfg
        new, new_rows, new_cols, logits = frame.choose(image, corners, rows, cols,
                                                       self.classifier, cfg, size)
        most = float(cfg["frame"]["trim_like_table"])
        frames = [int(n) for n in cfg["frame"]["square_frames"]]
        smallest = min(frames)
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
            terrains = [[sq.terrain for sq in row] for row in grid]
            distance = holes.table_distances(*table, cfg["holes"])
            cut = frame.table_edge(terrains, distance, most)
            if cut is None:
                # a band of table with a loose domino in it beside a frame (frame.loose_edge)
                cut = frame.loose_edge(terrains, distance, most, frames,
                                       int(cfg["frame"]["loose_squares"]))
            if cut is None:
                break
            logits = logits[cut.squares(new_rows, new_cols)]
            new = window_corners(new, new_rows, new_cols, cut)
            new_rows, new_cols = cut.rows, cut.cols
        warnings = list(warnings)
        if (new_rows, new_cols) != (rows, cols):
            warnings.append(f"the outline found held {rows}x{cols} squares; by what its "
                            f"squares read, the kingdom is {new_rows}x{new_cols}: check its outline")
        return Candidate(np.asarray(new, np.float32), new_rows, new_cols,
                         frame_size(new_rows, new_cols, size), tuple(warnings), logits, grid,
                         table)

    # ------------------------------------------------------------------ read
    def read(self, image: np.ndarray, size: int | None = None, *, corners=None,
             rows: int | None = None, cols: int | None = None) -> Reading:
        """Read a BGR photo. ``corners`` (+ ``rows``, ``cols``) skip detection (known board)."""
        if image is None or not hasattr(image, "shape") or image.ndim != 3 or image.shape[2] != 3:
            raise PhotoError("expected a colour (BGR) image: decode the photo with vision.load_image")
        if size is not None and size not in SIZES:
            raise ValueError(f"size must be 5 or 7, got {size}")
        if corners is not None:
            r, c = rows or 5, cols or 5
            found = Candidate(np.asarray(corners, np.float32), r, c, frame_size(r, c, size))
            return self.read_board(image, found, size)
        with read_once(image):    # ... and for its reading
            return self.check_found(self.read_board(image, self.find(image, size), size))

    def check_found(self, reading: Reading) -> Reading:
        """The reading of a kingdom the reader found itself, refused (``PhotoError``, "no
        kingdom") when it holds fewer domino halves than ``[reader] min_tiles``: what was found
        holds no domino (loose tiles, a mat's printed grid, a box lid)."""
        if too_few_tiles((cell["terrain"] for row in reading.cells for cell in row), self.cfg):
            raise PhotoError(NO_KINGDOM)
        return reading

    def read_board(self, image, found: Candidate, size: int | None = None) -> Reading:
        """The squares of the window ``found`` read (those under glare again with it taken
        off, a square like the table around read as table), with what a person should check
        (``vision.read.review``), in a ``size x size`` frame (default the window's)."""
        cell, bm, cm = self.ccfg["cell"], self.ccfg["board_margin"], self.ccfg["crop_margin"]
        rows, cols = found.rows, found.cols
        grid, hcfg = found.grid, self.cfg["holes"]
        table = found.table        # the window's ring features, measured once per reading
        shares = None              # each square's glare share (vision.read.glare), when measured
        feats = None               # each square's features (vision.read.novelty), when known
        if grid is None:  # not read yet (vision.find.frame reads its window while choosing it)
            board, _ = rectify(image, found.corners, rows, cols, cell, bm)
            crops = cell_crops(board, rows, cols, cell, board_margin=bm, crop_margin=cm)
            if hcfg["enabled"]:
                table = holes.ring_features(image, found.corners, rows, cols, hcfg)
            # squares under glare read again with it taken off (vision.read.glare), this board's
            washed = deglare.washed_crops(board, rows, cols, self.cfg)
            raw, _ = deglare.with_washed(self.classifier.logits(crops), washed, self.classifier,
                                         self.cfg)
            shares = washed[2]
            logits = holes.with_holes(image, found.corners, rows, cols, raw, self.cfg,
                                      self.classifier.t_terrain, self.classifier.t_crowns, table,
                                      far=True)
            grid = self.classifier.read_logits(logits, rows, cols)
            if self.classifier.outputs is not None:   # of the same network run, remembered
                feats = self.classifier.features(crops)
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
        if feats is None and found.logits is not None:   # as the window was read when found
            feats = self.classifier.features_of(found.logits)
        unlike, towns = self.unlike_squares(grid, feats)
        gaps, bare, like_table = review_distances(
            grid, self.rcfg, lambda: table if table is not None else holes.ring_features(
                image, found.corners, rows, cols, hcfg), hcfg)
        glare = glare_squares(grid, self.rcfg, lambda: shares if shares is not None else
                              deglare.photo_glare(image, found.corners, rows, cols, self.cfg))
        reasons = review_reasons(grid, self.rcfg, outside_cells(image.shape, found.corners,
                                                                rows, cols, self.rcfg),
                                 gaps, like_table, bare, glare, unlike, towns)
        frame = frame_size(rows, cols, size if size is not None else found.size)
        warnings = list(found.warnings) + novelty.warnings(len(unlike), len(towns))
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
                       reasons={f"{r},{c}": v for (r, c), v in reasons.items()},
                       learned=learned.board_count(self.classifier, image, found),
                       towns=[[r, c] for r, c in sorted(towns)])

    def unlike_squares(self, grid, feats) -> tuple[set, set]:
        """The squares of ``grid`` read as tiles that look like no tile the classifier learned
        from, and those that look like Queendomino towns (``vision.read.novelty``, settings
        ``[novelty]``; ``feats``: the squares' features, row by row); none without the
        statistics file or the features."""
        ncfg = self.cfg["novelty"]
        stats = novelty.for_network(ncfg["statistics"], self.classifier)
        if stats is None or feats is None or not grid:
            return set(), set()
        cols = len(grid[0])
        terrains = [sq.terrain for row in grid for sq in row]
        unlike = novelty.unlike_tiles(terrains, novelty.distances(stats, feats, terrains), ncfg)
        towns = novelty.town_like(stats, feats, terrains, ncfg)
        return ({divmod(int(i), cols) for i in np.flatnonzero(unlike & ~towns)},
                {divmod(int(i), cols) for i in np.flatnonzero(towns)})

