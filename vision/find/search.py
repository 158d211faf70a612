"""The search for the kingdom among what the detector found, and the one objective that
chooses among the windows read.

``vision.reader.Reader.find`` conducts it. The detector's outlines (``vision.find.detect``,
best first) are read in turn by :class:`OutlineSearch`, each as a window the square
classifier chooses in the outline's grid (a callable the reader gives: ``Reader.framed``).
When the search ends unconvinced, the whole-table search's kingdoms are read too
(``vision.find.whole_table.read_kingdoms``); a blurred 5x5 / 7x7 is cut as the other frames on
its outline (``vision.find.reframe``); a window short of a frame, or none, has the second tile
network search the photo again (``vision.find.second_net``). Each of those steps returns
windows (:class:`Candidate`); every choice among them is made by :class:`Objective`.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from vision.errors import PhotoError
from vision.find import detect, frame
from vision.find.detect import Grid, Outline
from vision.geometry import overlaps, same_grid
from vision.read import glare


@dataclass(frozen=True, eq=False)
class Candidate:
    """A window read as a possible kingdom: its corners (float32 (4, 2), image px: tl, tr, br,
    bl), its ``rows x cols`` squares, the frame it is read in (``size``, 5 or 7) and warnings.
    A window the classifier chose (``Reader.framed``) also holds its squares' logits (row by
    row) and readings (``grid``), the table's ring features around it
    (``vision.read.holes.ring_features``, when measured) and its squares read again with the
    glare taken off (``vision.read.glare.reread``, when made); one placed by the caller holds
    none of these yet."""

    corners: np.ndarray
    rows: int
    cols: int
    size: int
    warnings: tuple = ()
    logits: np.ndarray | None = None
    grid: list | None = None
    table: tuple | None = None
    reread: tuple | None = None


@dataclass(frozen=True, order=True)
class Rank:
    """How :class:`Objective` ranks a window: compared field by field, the greater first."""

    sure: bool          # it holds a sure castle
    frame: bool         # it is a 5x5 or 7x7 window
    score: float        # without a sure castle: its crispness (or its castle's odds); else 0


@dataclass(frozen=True, eq=False)
class Judged:
    """A window read, with what the objective weighs: its likeliest castle's odds as seen
    (``seen``) and with the glare taken off too (``castle``), how crisply its squares read
    (``vision.find.frame.crispness``), whether it is a 5x5 / 7x7 window, and how sure the
    detector was of the count of the outline it was read on (``count``; 0: not counted by
    the detector)."""

    window: Candidate
    castle: float
    seen: float
    crisp: float
    frame: bool
    count: float = 0.0


@dataclass(frozen=True, eq=False)
class Choice:
    """The window chosen so far: the window, its rank, its crispness and its count's
    confidence (as in :class:`Judged`)."""

    window: Candidate
    rank: Rank
    crisp: float
    count: float = 0.0


class Objective:
    """The one objective that chooses among the windows read for a photo.

    A window is in the running only when it holds at least ``[reader] min_tiles`` domino
    halves and a square with castle odds of at least ``min_castle_odds`` (with the glare
    taken off too, ``vision.read.glare``), or is a crisp 5x5 / 7x7 full of tiles whose castle
    a hand or glare hides (``vision.find.frame.castle_hidden``). Of the windows in the
    running, the one preferred is (:class:`Rank`, in this order):

    1. the one with a sure castle: odds of at least ``sure_castle_odds`` as seen (a castle
       seen only with the glare taken off is never sure); not sure, though, a window short
       of a frame read blurred (under ``short_sure_crisp``) once a 5x5 / 7x7 is the best, nor
       one read past a sure castle that reads blurrier than it by ``past_short_margin``;
    2. then a 5x5 or 7x7 window;
    3. then, without a sure castle, the one whose squares read crisper
       (``vision.find.frame.crispness``; with ``unsure_by_crisp`` off, the likelier castle).

    On equal ranks the window read first stays, except that while a sure castle read blurred
    is rechecked a window of the same frame wins when it reads crisper, one of a smaller
    frame when crisper by ``recheck_smaller_margin``, and a kingdom of the whole-table search
    wins when crisper by ``table_fallback_margin``.

    The same preferences judge an outline's grids (:meth:`pick_grid`), whether the search is
    convinced (:meth:`convinced`), the whole-table search's kingdoms (:meth:`pick_table`), the
    other frames cut on a blurred one's outline (:meth:`pick_reframed`) and the second tile
    network's window (:meth:`doubts`, :meth:`pick_second`)."""

    def __init__(self, cfg: dict, t_terrain: float):
        self.cfg, self.t = cfg, t_terrain
        self.frames = [int(n) for n in cfg["frame"]["square_frames"]]
        self.least = float(cfg["reader"]["min_castle_odds"])
        self.sure = float(cfg["reader"]["sure_castle_odds"])
        self.short_sure_crisp = float(cfg["reader"]["short_sure_crisp"])
        self.past_short_margin = float(cfg["reader"]["past_short_margin"])
        self.smaller_margin = float(cfg["reader"]["recheck_smaller_margin"])
        self.by_crisp = bool(cfg["reader"]["unsure_by_crisp"])
        self.table_crisp = float(cfg["reader"]["table_fallback_crisp"])
        self.table_margin = float(cfg["reader"]["table_fallback_margin"])
        # how much crisper than the outline's own grid another grid found for it must read
        self.grid_margins = {"outline": 0.0,
                             "lattice": float(cfg["lattice"]["keep_margin"]),
                             "blob": float(cfg["detect"]["blob_quad_margin"]),
                             "zoom": float(cfg["detect"]["zoom_crisp_margin"]),
                             "seams": float(cfg["detect"]["seam_crisp_margin"])}

    # ------------------------------------------------------------------ what a window is
    def castle(self, window: Candidate) -> float:
        """The window's likeliest castle's odds, as its squares were seen."""
        return frame.terrain_odds(window.logits, "castle", self.t).max()

    def crispness(self, window: Candidate) -> float:
        return frame.crispness(window.logits, self.t)

    def is_frame(self, window: Candidate) -> bool:
        """Whether the window is a 5x5 or 7x7 one (``[frame] square_frames``)."""
        return frame.is_frame(window.rows, window.cols, self.frames)

    def sure_count(self, count: float, rows: int, cols: int) -> bool:
        """Whether a window the detector counted with confidence ``count`` is a half-built
        kingdom's, read as sure as a frame: a count at least ``[reader]
        past_short_count_below`` of a window no longer than the smallest square frame, or as
        long as a frame (a half-built 7x7's 5x7). A 5x6 or 6x6 from a sure count is more
        often a 5x5 with a line of table read as tiles (brown wood read as swamp) than a
        half-built 7x7: the outlines over it are read."""
        longest = max(rows, cols)
        return (float(count) >= float(self.cfg["reader"]["past_short_count_below"])
                and (longest <= min(self.frames) or longest in self.frames))

    def in_running(self, judged: Judged) -> bool:
        """Whether the window may be the kingdom at all (see the class docstring)."""
        terrains = [sq.terrain for row in judged.window.grid for sq in row]
        return not frame.too_few_tiles(terrains, self.cfg) and (
            judged.castle >= self.least
            or frame.castle_hidden(terrains, judged.frame, judged.crisp, self.cfg))

    # ------------------------------------------------------------------ the outlines' windows
    def pick_grid(self, crisps, kinds) -> int:
        """Which of an outline's grids (their quick readings' crispness, their kinds:
        ``vision.find.detect.Grid``) is read in full: the crispest, each less its kind's
        margin (``[lattice] keep_margin``, ``[detect] blob_quad_margin``,
        ``zoom_crisp_margin``, ``seam_crisp_margin``; none for the outline's own); ties, the
        first."""
        return max(range(len(crisps)), key=lambda i: crisps[i] - self.grid_margins[kinds[i]])

    def rank(self, judged: Judged, best: Choice | None, past: bool) -> Rank:
        """The window's rank against ``best``, the window chosen so far; ``past``: read past
        a sure castle (see the class docstring, 1.)."""
        sure = judged.seen >= self.sure and (
            judged.frame or judged.crisp >= self.short_sure_crisp or best is None
            or not best.rank.frame)
        rank = Rank(sure, judged.frame, self._score(sure, judged.castle, judged.crisp))
        if past and judged.crisp < best.crisp - self.past_short_margin:
            rank = replace(rank, sure=False)      # read past a sure castle: blurred loses
        return rank

    def beats(self, judged: Judged, rank: Rank, best: Choice | None, recheck: bool) -> bool:
        """Whether the window, ranked ``rank``, is preferred to ``best``; ``recheck``: a sure
        castle read blurred is being rechecked."""
        if best is None or rank > best.rank:
            return True
        if not recheck or rank != best.rank:
            return False
        size, best_size = judged.window.size, best.window.size
        return (size == best_size and judged.crisp > best.crisp
                or size < best_size and judged.crisp > best.crisp + self.smaller_margin)

    def convinced(self, best: Choice | None) -> bool:
        """Whether the outlines' best window needs no whole-table search: a sure castle in a
        window read at least ``[reader] table_fallback_crisp`` crisply, 5x5 / 7x7 or from a
        sure count (:meth:`sure_count`)."""
        return best is not None and best.rank.sure and best.crisp >= self.table_crisp and (
            best.rank.frame or self.sure_count(best.count, best.window.rows, best.window.cols))

    # ------------------------------------------------------------------ the second looks
    def pick_table(self, best: Choice | None, kingdoms) -> Choice | None:
        """``best`` or a kingdom of the whole-table search (``kingdoms``: their ``window``
        and ``crisp``) that reads at least ``[reader] table_fallback_crisp``, or crisper than
        ``best`` by ``table_fallback_margin``, and ranks higher, or the same and crisper by
        that margin (a window padded with table reads crisper for its sure bare squares).
        Against a ``best`` read blurred, a 5x5 / 7x7 kingdom read at least that crisply ranks
        as a sure castle (``[reader] table_crisp_frame``). A kingdom chosen so was never
        counted by the detector (count 0)."""
        crisp_frame = (self.cfg["reader"]["table_crisp_frame"] and best is not None
                       and best.crisp < self.table_crisp)
        for kingdom in kingdoms:
            crisp = kingdom.crisp
            if crisp < self.table_crisp and (
                    best is None or crisp < best.crisp + self.table_margin):
                continue        # blurred: cut off the tiles' own grid, or a window of cloth
            castle, is_frame = self.castle(kingdom.window), self.is_frame(kingdom.window)
            sure = castle >= self.sure or crisp_frame and is_frame and crisp >= self.table_crisp
            rank = Rank(sure, is_frame, self._score(sure, castle, crisp))
            if best is None or rank > best.rank or (
                    rank == best.rank and crisp > best.crisp + self.table_margin):
                best = Choice(kingdom.window, rank, crisp, 0.0)
        return best

    def pick_reframed(self, found: Candidate, others) -> Candidate:
        """``found`` or, of the other frames cut on its outline (``others``,
        ``vision.find.reframe.other_frames``), the one whose squares read crispest, by at
        least ``[reader] other_frame_margin`` over ``found``'s, with a domino and a square of
        castle odds at least ``min_castle_odds``."""
        best, best_crisp = found, None
        for other in others:
            if best_crisp is None:
                best_crisp = self.crispness(found) + float(self.cfg["reader"]["other_frame_margin"])
            c = self.crispness(other)
            terrains = [sq.terrain for row in other.grid for sq in row]
            if c > best_crisp and self.castle(other) >= self.least \
                    and not frame.too_few_tiles(terrains, self.cfg):
                best, best_crisp = other, c
        return best

    def doubts(self, found: Candidate | None, count: float) -> bool:
        """Whether the second tile network is asked: nothing found, or a window short of a
        frame but from a count the detector was sure of (a half-built kingdom,
        :meth:`sure_count`)."""
        return found is None or not self.is_frame(found) and not self.sure_count(
            count, found.rows, found.cols)

    def pick_second(self, found: Candidate | None, other: Candidate | None):
        """``found`` or the second tile network's window ``other`` when that is a 5x5 / 7x7
        with a castle at least ``[reader] sure_castle_odds`` likely: anything less, where the
        first found nothing, made a "kingdom" of tables with none (loose dominoes, a mat)."""
        if other is not None and self.is_frame(other) and self.castle(other) >= self.sure:
            return other
        return found

    def _score(self, sure: bool, castle: float, crisp: float) -> float:
        return 0.0 if sure else (crisp if self.by_crisp else castle)


def outlines(image: np.ndarray, cfg: dict, size: int | None):
    """The detector's outlines with their other grids (``vision.find.detect.candidates``),
    none when it finds no tile blob at all (the whole-table search may still find a
    kingdom)."""
    try:
        yield from detect.candidates(image, cfg, size, alternatives=True)
    except PhotoError:
        return


class OutlineSearch:
    """Reads the detector's outlines in turn and keeps the window :class:`Objective` prefers.

    Inputs: the photo, the size asked for (or None), the configuration, the square classifier
    (quick readings that compare an outline's grids, ``vision.find.frame.choose``; the glare's
    second reading) and ``window(corners, rows, cols, warnings)``, which chooses the window in
    a grid and reads it (``Reader.framed``), returning a :class:`Candidate`.

    An outline with other grids (``Outline.alternatives``) has each read on its squares as
    cut and the one :meth:`Objective.pick_grid` picks read in full. A window whose castle is
    unsure is read again with the glare taken off (``vision.read.glare.reread``). At most
    ``[frame] max_candidates`` outlines are tried. The first window with a sure castle ends
    the search when it is a 5x5 / 7x7, except:

    - a sure castle in a window short of a frame has up to ``[reader] past_short_castle``
      more outlines over it read (new grids only), unless its count was sure
      (:meth:`Objective.sure_count`): the detector's first outline may have cut the kingdom
      or counted it wrong on a tile-coloured table;
    - a sure castle in a window read blurred (under ``recheck_crisp_below``) has up to
      ``recheck_more`` more outlines over it read, those that can frame a window no larger
      than it (``vision.find.frame.can_frame``).

    An outline on a grid already read is read again only for another grid of it not read."""

    def __init__(self, image, size, cfg: dict, classifier, window, objective: Objective):
        self.image, self.size, self.cfg = image, size, cfg
        self.classifier, self.window, self.objective = classifier, window, objective
        self.best: Choice | None = None
        self.read: list[Grid] = []          # the grids read, once each
        self.more = int(cfg["reader"]["past_short_castle"])
        self.recheck = False

    def run(self, outlines) -> Choice | None:
        """The window chosen among ``outlines`` (``vision.find.detect.Outline``, best first);
        None when none holds a kingdom."""
        tries = int(self.cfg["frame"]["max_candidates"])
        for k, outline in enumerate(outlines):
            past = self.best is not None and self.best.rank.sure
            if past and self._passed_over(outline):
                if k + 1 >= tries:
                    break
                continue
            if past:
                self.more -= 1
            self.read.append(outline.grid)
            self._weigh(self._judge(outline), past)
            best = self.best
            if k + 1 >= tries or (best is not None and best.rank.sure and (
                    best.rank.frame and not self.recheck or self.more <= 0)):
                break
        return self.best

    def _passed_over(self, outline: Outline) -> bool:
        """Past a sure castle: whether ``outline`` is not read -- it lies off the window
        chosen, or on grids all read already, or (rechecking a blurred window) it can frame
        no 5x5 / 7x7 as large as that window."""
        best = self.best.window
        grow = int(self.cfg["frame"]["max_grow"])
        return (not overlaps(outline.corners, best.corners)
                or self._known(outline.grid) and all(self._known(g) for g in outline.alternatives)
                or self.recheck and not any(frame.can_frame(outline.rows, outline.cols, n, grow)
                                            for n in self.objective.frames if n <= best.size))

    def _known(self, grid: Grid) -> bool:
        same = float(self.cfg["lattice"]["same_grid"])
        return any(same_grid(grid.corners, grid.rows, grid.cols, g.corners, g.rows, g.cols, same)
                   for g in self.read)

    def _judge(self, outline: Outline) -> Judged:
        """The outline read: the grid :meth:`Objective.pick_grid` picks among its own and its
        other grids (compared on the squares as cut), its window chosen and read."""
        grids = [outline.grid, *outline.alternatives]
        if len(grids) > 1:
            quick = [frame.choose(self.image, g.corners, g.rows, g.cols, self.classifier,
                                  self.cfg, self.size, first_turn_only=True)[3] for g in grids]
            t = self.classifier.t_terrain
            grids = [grids[self.objective.pick_grid([frame.crispness(q, t) for q in quick],
                                                    [g.kind for g in grids])]]
        found = self.window(grids[0].corners, grids[0].rows, grids[0].cols, outline.warnings)
        castle = seen = self.objective.castle(found)
        if castle < self.objective.sure:   # glare on the castle? read again with it off
            found = replace(found, reread=glare.reread(
                self.image, found.corners, found.rows, found.cols, found.logits,
                self.classifier, self.cfg))
            castle = max(castle, glare.reread_odds(found.reread, self.classifier, "castle"))
        return Judged(found, castle, seen, self.objective.crispness(found),
                      self.objective.is_frame(found), float(outline.confidence))

    def _weigh(self, judged: Judged, past: bool) -> None:
        """Keep the window when the objective prefers it; a sure castle read first sets how
        many more outlines are read (see the class docstring)."""
        rank = self.objective.rank(judged, self.best, past)
        if not (self.objective.beats(judged, rank, self.best, self.recheck)
                and self.objective.in_running(judged)):
            return
        self.best = Choice(judged.window, rank, judged.crisp, judged.count)
        if rank.sure and not past:
            window = judged.window
            if judged.crisp < float(self.cfg["reader"]["recheck_crisp_below"]):
                self.recheck, self.more = True, int(self.cfg["reader"]["recheck_more"])
            elif self.objective.sure_count(judged.count, window.rows, window.cols):
                self.more = 0
