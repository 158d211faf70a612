"""The kingdom's window chosen by the square classifier's table odds (vision.find.frame), on tiny
hand-made grids of odds: no photo, no network."""
from __future__ import annotations

import numpy as np
import pytest

from vision import config

from vision.find import frame
from vision.find.frame import best_window, square_gain
from vision.geometry import Window, ring_corners, window_corners

CFG = config.load()["frame"]


def gains(p_empty):
    return square_gain(np.asarray(p_empty, float), float(CFG["inside_empty"]),
                       float(CFG["odds_floor"]))


def grid_with_kingdom(R, C, win: Window, table=0.98, tile=0.02):
    p = np.full((R, C), table)
    p[win.row:win.row + win.rows, win.col:win.col + win.cols] = tile
    return p


def test_table_rows_around_a_5x5_kingdom_are_left_out():
    """A 5x5 kingdom read as 7x7 (a ring of table taken in), read one ring larger: 9x9 squares
    of which the middle 5x5 are tiles -> the 5x5 window, wherever the detector's grid was."""
    p = grid_with_kingdom(9, 9, Window(2, 2, 5, 5))
    keep = Window(1, 1, 7, 7)
    assert best_window(gains(p), 7, 7, keep, float(CFG["keep_bonus"])) == Window(2, 2, 5, 5)


def test_a_frame_one_column_off_moves_onto_the_tiles():
    """The detector's 5x5 grid starts one column left of the kingdom: the ring holds the
    kingdom's last column (tiles) and the grid's first column is table."""
    p = grid_with_kingdom(7, 7, Window(1, 2, 5, 5))
    keep = Window(1, 1, 5, 5)
    assert best_window(gains(p), 7, 7, keep, float(CFG["keep_bonus"])) == Window(1, 2, 5, 5)


def test_a_window_never_leaves_tiles_outside_for_a_bonus():
    p = grid_with_kingdom(7, 7, Window(1, 1, 5, 6))
    keep = Window(1, 1, 5, 5)
    assert best_window(gains(p), 7, 7, keep, float(CFG["keep_bonus"])) == Window(1, 1, 5, 6)


def test_empty_squares_inside_a_half_built_kingdom_stay_in():
    """An L-shaped half-built kingdom: its bounding box holds table squares, which stay."""
    p = np.full((6, 6), 0.98)
    p[1, 1:5] = 0.02           # a row of four tiles
    p[1:5, 1] = 0.02           # and a column of four
    assert best_window(gains(p), 7, 7) == Window(1, 1, 4, 4)


def test_squares_more_likely_table_beside_the_grid_do_not_move_it():
    """A ring column the classifier takes for table at only 70 % does not join the kingdom;
    at 5 % it does."""
    p = grid_with_kingdom(7, 7, Window(1, 1, 5, 5))
    p[1:6, 6] = 0.05
    keep, bonus = Window(1, 1, 5, 5), float(CFG["keep_bonus"])
    assert best_window(gains(p), 7, 7, keep, bonus) == Window(1, 1, 5, 6)
    p[1:6, 6] = 0.7
    assert best_window(gains(p), 7, 7, keep, bonus) == keep


def test_the_window_is_at_most_the_frame_asked_for():
    """Tiles over 7 columns with a 5x5 frame asked for: a 5-column window, no wider."""
    p = grid_with_kingdom(9, 9, Window(1, 1, 5, 7))
    win = best_window(gains(p), 5, 5)
    assert (win.rows, win.cols) == (5, 5) and 1 <= win.col <= 3 and win.row == 1


def test_a_window_needs_a_square():
    with pytest.raises(ValueError, match="at least one square"):
        best_window(np.zeros((3, 3)), 0, 5)


def test_window_corners_follow_the_grid_homography():
    corners = np.float32([[100, 100], [600, 100], [600, 600], [100, 600]])   # 5x5, 100 px squares
    big = ring_corners(corners, 5, 5, 1)
    assert np.allclose(big, [[0, 0], [700, 0], [700, 700], [0, 700]], atol=1e-3)
    one_right = window_corners(corners, 5, 5, Window(0, 1, 5, 5))
    assert np.allclose(one_right, corners + [100, 0], atol=1e-3)


def test_empty_odds_are_the_terrain_heads_table_share():
    from vision.read.labels import TERRAINS

    logits = np.zeros((2, len(TERRAINS) + 4))
    logits[0, TERRAINS.index("empty")] = 10.0
    logits[1, TERRAINS.index("field")] = 10.0
    p = frame.empty_odds(logits)
    assert p[0] > 0.99 and p[1] < 0.01


class _MiddleClassifier:
    """Stands in for the square network: reads each crop by the pixels of its middle, the crop
    less 1/``cut`` of it on every side; ``read`` fills that crop's row of logits."""

    t_terrain = 1.0
    t_crowns = 1.0
    cut = 3

    def logits(self, crops, first_turn_only=False):
        from vision.read.labels import TERRAINS

        out = np.zeros((len(crops), len(TERRAINS) + 4))
        k = self.cut
        for i, crop in enumerate(crops):
            h, w = crop.shape[:2]
            middle = crop[h // k:(k - 1) * h // k, w // k:(k - 1) * w // k]
            self.read(middle.reshape(-1, 3).astype(float), out[i], TERRAINS)
        return out


class _ColourClassifier(_MiddleClassifier):
    """A crop whose middle is grey is table, else field."""

    def read(self, middle, row, terrains):
        grey = np.mean(np.ptp(middle, axis=1)) < 20
        row[terrains.index("empty" if grey else "field")] = 8.0


def _photo_with_kingdom(n_tiles: int, square: int = 60, pad: int = 3):
    """A grey table with an n x n block of coloured squares starting ``pad`` squares in."""
    side = (n_tiles + 2 * pad) * square
    image = np.full((side, side, 3), 128, np.uint8)
    rng = np.random.default_rng(0)
    for r in range(n_tiles):
        for c in range(n_tiles):
            y, x = (pad + r) * square, (pad + c) * square
            image[y:y + square, x:x + square] = rng.integers(0, 256, 3) * [1, 0, 1] + [0, 200, 0]
    return image


def _cfg():
    return config.load()


def _square_corners(x0, y0, x1, y1):
    return np.float32([[x0, y0], [x1, y0], [x1, y1], [x0, y1]])


def test_choose_drops_a_ring_of_table_the_detector_took_in():
    """The detector's 7x7 grid holds a 5x5 kingdom and a ring of table: the 5x5 window, with
    its own corners and its 25 squares' logits."""
    image = _photo_with_kingdom(5)
    found = _square_corners(120, 120, 540, 540)        # 7x7 squares of 60 px from (2, 2)
    corners, rows, cols, logits = frame.choose(image, found, 7, 7, _ColourClassifier(), _cfg())
    assert (rows, cols) == (5, 5) and len(logits) == 25
    assert np.allclose(corners, _square_corners(180, 180, 480, 480), atol=0.5)


def test_choose_drops_a_column_of_table_from_a_frame_one_column_off():
    """The window lies within the grid read: the table column is dropped and the kingdom's
    last one stays unread."""
    image = _photo_with_kingdom(5)
    found = _square_corners(120, 180, 420, 480)        # 5x5 from one column left of the kingdom
    corners, rows, cols, _ = frame.choose(image, found, 5, 5, _ColourClassifier(), _cfg())
    assert (rows, cols) == (5, 4)
    assert np.allclose(corners, _square_corners(180, 180, 420, 480), atol=0.5)


@pytest.mark.parametrize("rows, cols, frames, want, short", [
    (5, 5, (5, 7), (0, 0), 2),      # already a frame
    (4, 5, (5, 7), (0, 1), 2),      # one row short of 5x5: one more row read above and below
    (3, 5, (5, 7), (0, 2), 2),
    (7, 6, (5, 7), (1, 0), 2),      # one column short of 7x7
    (5, 7, (5, 7), (0, 2), 2),
    (6, 5, (5, 7), (0, 0), 2),      # six is no frame: the window within the grid is chosen
    (4, 5, (), (0, 0), 2),          # completion off
    (1, 3, (5, 7), (0, 0), 2),
    (2, 5, (5, 7), (0, 0), 2),      # a strip three short of a frame: a half-built kingdom
    (2, 5, (5,), (0, 3), None),     # ... unless any shortfall is asked for
])
def test_completion_reads_far_enough_for_every_square_frame_holding_the_grid(rows, cols, frames,
                                                                          want, short):
    assert frame.completion(rows, cols, frames, short) == want


def test_a_frame_sized_window_gets_its_bonus():
    """A 6x5 grid whose last row reads a little more tile than table (table cloth read as
    tiles): without the bonus the 6x5 window, with it the 5x5 frame."""
    p = np.full((6, 5), 0.02)
    p[5] = 0.45
    assert best_window(gains(p), 7, 7) == Window(0, 0, 6, 5)
    assert best_window(gains(p), 7, 7, frames=(5, 7), frame_bonus=3.0) == Window(0, 0, 5, 5)
    p[5] = 0.01                                  # a row of sure tiles stays in
    assert best_window(gains(p), 7, 7, frames=(5, 7), frame_bonus=3.0) == Window(0, 0, 6, 5)


def test_a_frames_side_needs_a_square_read_as_a_tile():
    """A half-built kingdom 4x5 (its last row one tile and bare squares) and beyond it a row
    of table, one square of it read only a little more tile than table (0.35): the frame
    bonus would take that row in for a 5x5; with [frame] frame_edge_gain it stays out."""
    p = np.full((5, 5), 0.02)
    p[3, :4] = 0.999                              # the kingdom's last row: one tile
    p[4] = [0.35, 0.999, 0.999, 0.999, 0.999]     # the table beyond
    edge = float(CFG["frame_edge_gain"])
    assert edge > gains([0.35])[0]
    assert best_window(gains(p), 7, 7, frames=(5, 7), frame_bonus=3.0) == Window(0, 0, 5, 5)
    assert best_window(gains(p), 7, 7, frames=(5, 7), frame_bonus=3.0, edge_gain=edge) == \
        Window(0, 0, 4, 5)


def test_the_frame_bonus_is_for_windows_inside_the_grid_as_counted():
    """A half-built 4x5 kingdom counted right, read one row beyond on each side to complete a
    frame; beyond its last row the table, one square of it read fairly surely as a tile
    (0.2): the bonus would take that row in for a 5x5. Only inside the counted grid
    ([frame] bonus_within_grid) it stays out; a 6x5 miscount is still cut to its 5x5 frame."""
    p = np.full((6, 5), 0.999)
    p[1:5] = 0.02
    p[4, :4] = 0.999                              # the kingdom's last row: one tile
    p[5, 0] = 0.2                                 # the table beyond: one square read as a tile
    counted = Window(1, 0, 4, 5)
    edge = float(CFG["frame_edge_gain"])
    kw = dict(frames=(5, 7), frame_bonus=3.0, edge_gain=edge)
    assert gains([0.2])[0] > edge
    assert best_window(gains(p), 5, 5, counted, 1.0, **kw) == Window(1, 0, 5, 5)
    assert best_window(gains(p), 5, 5, counted, 1.0, bonus_within=counted, **kw) == counted
    p = np.full((6, 5), 0.02)
    p[5] = 0.45                                   # a 6x5 count over a row of table
    assert best_window(gains(p), 7, 7, bonus_within=Window(0, 0, 6, 5), **kw) == Window(0, 0, 5, 5)
    assert Window(1, 1, 2, 2).inside(Window(0, 0, 3, 3))
    assert not Window(1, 1, 3, 2).inside(Window(0, 0, 3, 3))


def test_a_row_of_table_inside_a_window_splits_it():
    """A 5x5 kingdom, then a row of sure table, then a row the table's rim read as tiles
    (unsure ones): without walls the window takes all seven rows; with them the rim is cut
    off, as its tiles could not join the kingdom. A row of sure tiles beyond the wall (a
    line of tiles washed out by glare and read as table) outweighs the penalty and stays."""
    p = np.full((7, 5), 0.02)
    p[5] = 0.999
    p[6] = [0.3, 0.05, 0.2, 0.4, 0.999]
    walls = p >= 0.9
    penalty = float(CFG["wall_penalty"])
    assert best_window(gains(p), 7, 7) == Window(0, 0, 7, 5)
    assert best_window(gains(p), 7, 7, walls=walls, wall_penalty=penalty) == Window(0, 0, 5, 5)
    p[6] = 0.001
    assert best_window(gains(p), 7, 7, walls=p >= 0.9, wall_penalty=penalty) == \
        Window(0, 0, 7, 5)
    # a wall on the window's edge is no split: only what the squares themselves say
    p[6] = 0.999
    assert best_window(gains(p), 7, 7, walls=p >= 0.9, wall_penalty=penalty) == \
        Window(0, 0, 5, 5)


def test_a_column_of_table_splits_a_window_like_a_row():
    p = np.full((5, 7), 0.02)
    p[:, 2] = 0.999
    p[:, :2] = 0.15                               # two columns of unsure tiles beyond it
    win = best_window(gains(p), 7, 7, walls=p >= 0.9, wall_penalty=float(CFG["wall_penalty"]))
    assert win == Window(0, 3, 5, 4)
    assert best_window(gains(p), 7, 7) == Window(0, 0, 5, 7)


def test_a_frame_with_a_side_of_bare_table_gets_no_bonus():
    """A 5x4 kingdom (tiles) beside a column of sure table: bare squares inside a window cost
    little (half-built kingdoms), but a frame with a whole side of table is not a kingdom's."""
    p = np.full((5, 5), 0.02)
    p[:, 0] = 0.999
    assert best_window(gains(p), 7, 7, frames=(5, 7), frame_bonus=3.0) == Window(0, 1, 5, 4)
    p[2, 0] = 0.1                                # one tile on that side: the frame is a kingdom's
    assert best_window(gains(p), 7, 7, frames=(5, 7), frame_bonus=3.0) == Window(0, 0, 5, 5)


def test_choose_completes_a_grid_one_column_short_of_a_frame():
    """The detector's outline missed the kingdom's last column (5x4 squares): the column
    beyond is read and the 5x5 frame chosen; with completion off the 5x4 grid stays."""
    image = _photo_with_kingdom(5)
    found = _square_corners(180, 180, 420, 480)        # the kingdom's first 4 columns
    corners, rows, cols, logits = frame.choose(image, found, 5, 4, _ColourClassifier(), _cfg())
    assert (rows, cols) == (5, 5) and len(logits) == 25
    assert np.allclose(corners, _square_corners(180, 180, 480, 480), atol=0.5)
    cfg = _cfg()
    cfg["frame"]["square_frames"] = []
    corners, rows, cols, _ = frame.choose(image, found, 5, 4, _ColourClassifier(), cfg)
    assert (rows, cols) == (5, 4) and np.allclose(corners, found, atol=0.5)


def test_grown_logits_read_only_the_new_strips_and_match_the_whole_grown_grid():
    image = _photo_with_kingdom(5)
    found = _square_corners(180, 180, 420, 480)        # 5x4: one column each side is read
    clf, cfg = _ColourClassifier(), _cfg()
    own = frame.read_grid(image, found, 5, 4, clf, cfg)
    seen = []
    clf.logits = lambda crops, first_turn_only=False, read=clf.logits: (
        seen.append(len(crops)) or read(crops, first_turn_only))
    grown = frame.grown_logits(image, found, 5, 4, own, 0, 1, clf, cfg)
    assert seen == [5, 5]                              # two strips of 5 squares, no more
    whole = frame.read_grid(image, _square_corners(120, 180, 480, 480), 5, 6, clf, cfg)
    assert np.array_equal(grown, whole)


def test_a_strip_that_looks_like_the_table_is_not_read():
    """Completing a 5x4 grid reads the column beyond each side; the one left of the kingdom
    is bare table like the table around it (vision.read.holes): not read, it reads as table."""
    image = _photo_with_kingdom(5)
    found = _square_corners(180, 180, 420, 480)
    clf, cfg = _ColourClassifier(), _cfg()
    seen = []
    clf.logits = lambda crops, first_turn_only=False, read=clf.logits: (
        seen.append(len(crops)) or read(crops, first_turn_only))
    corners, rows, cols, _ = frame.choose(image, found, 5, 4, clf, cfg)
    assert (rows, cols) == (5, 5)
    # the grid as found, the same outline cut 5x5 (recount_short), the grid again, and then
    # only the kingdom's column
    assert seen == [20, 25, 20, 5]
    cfg["frame"]["skip_table_strips"] = False
    seen.clear()
    frame.choose(image, found, 5, 4, clf, cfg)
    assert seen == [20, 25, 20, 5, 5]


class _FooledClassifier(_MiddleClassifier):
    """Reads every crop as a field, fairly sure, the table too (a cloth the colour of a tile)."""

    def read(self, middle, row, terrains):
        row[terrains.index("field")] = 4.0


def test_choose_drops_a_row_that_looks_like_the_table_around_the_grid():
    """The detector took in a row of table that the classifier reads as tiles: the row looks
    like the table around the grid (vision.read.holes), so the window leaves it out; judged on
    the network's logits alone it stays."""
    image = _photo_with_kingdom(5)
    found = _square_corners(180, 180, 480, 540)        # the kingdom and one row of table
    corners, rows, cols, logits = frame.choose(image, found, 6, 5, _FooledClassifier(), _cfg())
    assert (rows, cols) == (5, 5) and len(logits) == 25
    assert np.allclose(corners, _square_corners(180, 180, 480, 480), atol=0.5)
    cfg = _cfg()
    cfg["frame"]["judge_holes"] = False
    _, rows, cols, _ = frame.choose(image, found, 6, 5, _FooledClassifier(), cfg)
    assert (rows, cols) == (6, 5)


def test_choose_never_reaches_beyond_the_photo():
    """The kingdom fills the photo and its grid missed the last column: read one column
    beyond each side, the one outside the photo (edge pixels repeated, read as tiles) stays
    out and the kingdom's last column comes in."""
    image = _photo_with_kingdom(5, pad=0)
    found = _square_corners(0, 0, 240, 300)            # 5 rows, the first 4 columns
    corners, rows, cols, _ = frame.choose(image, found, 5, 4, _ColourClassifier(), _cfg())
    assert (rows, cols) == (5, 5)
    assert np.allclose(corners, _square_corners(0, 0, 300, 300), atol=0.5)


def test_crispness_is_higher_for_sure_readings():
    from vision.read.labels import TERRAINS

    sure, unsure = np.zeros((4, len(TERRAINS) + 4)), np.zeros((4, len(TERRAINS) + 4))
    sure[:, 0] = 9.0
    unsure[:, 0], unsure[:, 1] = 2.0, 1.5
    assert frame.crispness(sure) > -0.01 > frame.crispness(unsure)


class _CutClassifier(_MiddleClassifier):
    """Reads a crop as a sure tile when its middle is one colour, unsure when a tile edge
    (a colour change) runs through it: what a grid of the wrong count cuts."""

    cut = 4

    def read(self, middle, row, terrains):
        one = np.ptp(middle, axis=0).max() < 10
        row[0] = 8.0 if one else 1.0


def test_a_side_counted_short_of_a_frame_is_recounted_on_the_same_outline():
    """The outline holds the whole 5x5 kingdom but one side was counted 3: cut 5x5 the squares
    read crisply, cut 5x3 they run through tiles. An outline that missed a row instead (its
    squares already the tiles' own) keeps its count: completion reads beyond it."""
    image = _photo_with_kingdom(5, square=70, pad=0)
    whole = _square_corners(0, 0, 350, 350)
    _, rows, cols, logits = frame.recount(image, whole, 5, 3, _CutClassifier(), _cfg())
    assert (rows, cols, len(logits)) == (5, 5, 25)
    short = _square_corners(0, 0, 280, 350)            # the kingdom's first 4 columns
    assert frame.recount(image, short, 5, 4, _CutClassifier(), _cfg())[1:3] == (5, 4)
    cfg = _cfg()
    cfg["frame"]["recount_short"] = False
    assert frame.recount(image, whole, 5, 3, _CutClassifier(), cfg)[1:3] == (5, 3)


def test_a_side_counted_one_over_a_frame_is_recounted_on_the_same_outline():
    """The outline holds the whole 5x5 kingdom but one side was counted 6 (a seam in a tile's
    art, a stripe of the table): cut 5x5 the squares read crisply, cut 5x6 they run through
    tiles. An outline that also took in a column of table (each square one colour when cut
    5x6) keeps its count: the window is chosen in it afterwards."""
    image = _photo_with_kingdom(5, square=70, pad=0)
    whole = _square_corners(0, 0, 350, 350)
    _, rows, cols, logits = frame.recount(image, whole, 5, 6, _CutClassifier(), _cfg())
    assert (rows, cols, len(logits)) == (5, 5, 25)
    assert frame.recount(image, whole, 6, 5, _CutClassifier(), _cfg())[1:3] == (5, 5)
    wider = _photo_with_kingdom(5, square=70, pad=1)[70:420]    # a column of table each side
    with_table = _square_corners(70, 0, 490, 350)                # the kingdom and the right one
    assert frame.recount(wider, with_table, 5, 6, _CutClassifier(), _cfg())[1:3] == (5, 6)
    cfg = _cfg()
    cfg["frame"]["max_over"] = 0
    assert frame.recount(image, whole, 5, 6, _CutClassifier(), cfg)[1:3] == (5, 6)


class _ArtFooledClassifier(_MiddleClassifier):
    """A network fooled by the tiles' art: surer where a tile edge runs through the crop's
    middle (log odds 6) than on one colour (5)."""

    cut = 4

    def read(self, middle, row, terrains):
        row[0] = 5.0 if np.ptp(middle, axis=0).max() < 10 else 6.0


def test_the_seams_keep_a_half_built_kingdoms_count_against_a_crisper_cut():
    """A half-built 4x5 kingdom counted 4x5: cut 5x5 its squares read a little crisper to a
    fooled network (15 of its 25 crops have a tile edge through their middles: 0.017 of mean
    log odds), but the 5-row cut's lines miss the tiles' seams (vision.find.gridcount.seams_refute):
    the count stays. With ``[frame] recount_seam_veto`` 0, or ``seam_veto_within`` under
    that gain (the network sure enough), the crisper cut wins."""
    image = _photo_with_kingdom(5, square=70, pad=0)[:280]       # the kingdom's first 4 rows
    whole = _square_corners(0, 0, 350, 280)
    assert frame.recount(image, whole, 4, 5, _ArtFooledClassifier(), _cfg())[1:3] == (4, 5)
    for key, value in (("recount_seam_veto", 0), ("seam_veto_within", 0.015)):
        cfg = _cfg()
        cfg["frame"][key] = value
        assert frame.recount(image, whole, 4, 5, _ArtFooledClassifier(), cfg)[1:3] == (5, 5)


def test_a_recounted_grid_has_its_corners_refined_for_the_new_count():
    """Recounted 5x6 -> 5x5 on an outline a tenth of a square off: the corners move onto the
    kingdom's edges for the 5x5 count; with refine_recount off they stay as found."""
    image = _photo_with_kingdom(5, square=70, pad=1)
    true = _square_corners(70, 70, 420, 420)
    off = true + np.float32([[7, -5], [-6, 7], [6, 5], [-5, -7]])
    corners, rows, cols, _ = frame.recount(image, off, 5, 6, _CutClassifier(), _cfg())
    assert (rows, cols) == (5, 5)
    assert np.abs(corners - true).max() < 0.5 * np.abs(off - true).max()
    cfg = _cfg()
    cfg["frame"]["refine_recount"] = False
    corners, rows, cols, _ = frame.recount(image, off, 5, 6, _CutClassifier(), cfg)
    assert (rows, cols) == (5, 5) and np.allclose(corners, off)


class _CutTableClassifier(_MiddleClassifier):
    """Grey middle: sure table; one colour: a sure field; a tile edge through it: unsure."""

    cut = 4

    def read(self, middle, row, terrains):
        spread = np.ptp(middle, axis=0).max()
        grey = np.ptp(middle, axis=1).mean() < 20 and spread < 10
        row[terrains.index("empty" if grey else "field")] = 8.0 if spread < 10 else 1.0


def _kingdom_gap_domino():
    """A 5x5 kingdom of 60 px squares, 100 px of table, a domino standing 2 squares high
    beside it (on a grey table); the detector's 5x5 grid over all three (100 x 60 px cells)."""
    image = np.full((420, 620, 3), 128, np.uint8)
    rng = np.random.default_rng(1)
    for r in range(5):
        for c in range(5):
            image[60 + 60 * r:120 + 60 * r, 60 + 60 * c:120 + 60 * c] = \
                rng.integers(0, 256, 3) * [1, 0, 1] + [0, 200, 0]
    image[60:180, 460:560] = (30, 200, 230)
    return image, _square_corners(60, 60, 560, 360)


def test_a_window_cut_from_a_grid_over_a_loose_domino_is_recounted():
    """The column of table between the kingdom and the domino is a wall: the window keeps
    the kingdom's three (wide) columns and is counted again on its own outline, 5x5."""
    image, found = _kingdom_gap_domino()
    corners, rows, cols, logits = frame.choose(image, found, 5, 5, _CutTableClassifier(),
                                               _cfg())
    assert (rows, cols, len(logits)) == (5, 5, 25)
    assert np.allclose(corners, _square_corners(60, 60, 360, 360), atol=3)
    cfg = _cfg()
    cfg["frame"]["recount_window"] = False
    assert frame.choose(image, found, 5, 5, _CutTableClassifier(), cfg)[1:3] == (5, 3)
    cfg["frame"]["wall_penalty"] = 0.0                  # no wall: the domino stays in
    corners, rows, cols, _ = frame.choose(image, found, 5, 5, _CutTableClassifier(), cfg)
    assert (rows, cols) == (5, 5) and np.allclose(corners, found, atol=1)


@pytest.mark.parametrize("rows, cols, n, want", [
    (5, 5, 5, True), (7, 7, 5, True), (5, 6, 5, True),    # holds one
    (3, 5, 5, True), (5, 1, 5, True), (5, 4, 5, True),    # one side short, read beyond
    (3, 7, 7, True), (2, 7, 7, False),                    # ... at most max_grow (4) short
    (1, 1, 5, False), (4, 4, 5, False), (5, 5, 7, False), (6, 5, 7, False)])
def test_can_frame_a_window_of_n_squares_a_side(rows, cols, n, want):
    assert frame.can_frame(rows, cols, n, 4) is want


@pytest.mark.parametrize("rows, cols, over, want", [
    (5, 6, 2, [5]), (6, 5, 1, [5]), (5, 7, 2, [5, 7]), (5, 7, 1, [7]),  # over, short
    (7, 8, 2, [7]), (6, 7, 2, [7]), (4, 5, 2, [5]), (3, 5, 2, [5]),
    (2, 5, 2, [5]), (1, 5, 2, []),                     # 1x5: a half-built kingdom's strip
    (5, 5, 2, []), (3, 4, 2, []), (5, 6, 0, [])])
def test_recount_cuts_the_frames_a_side_is_short_or_over_of(rows, cols, over, want):
    assert frame.recount_cuts(rows, cols, (5, 7), 3, over) == want


def test_recount_keeps_a_square_grid_and_a_strip_as_counted():
    """A square grid (a frame already) and a half-built kingdom's strip are not recounted."""
    image = _photo_with_kingdom(5, square=70, pad=0)
    found = _square_corners(0, 0, 350, 350)
    assert frame.recount(image, found, 7, 7, _CutClassifier(), _cfg())[1:3] == (7, 7)
    assert frame.recount(image[:70], _square_corners(0, 0, 350, 70), 1, 5, _CutClassifier(),
                         _cfg())[1:3] == (1, 5)


def test_table_edge_takes_off_a_line_of_table_read_as_tiles():
    """An edge line whose squares all read as table or lie nearer the table than ``most``,
    one of them read as a tile, leaves the window; a line of bare table alone (a frame's
    bare edge), one with a tile unlike the table, or a window one square thick, does not."""
    rows = [["field", "lake", "field"],
            ["forest", "mine", "field"],
            ["forest", "castle", "empty"]]
    far = np.full((3, 3), 5.0)
    near_right = far.copy()
    near_right[0, 2], near_right[1, 2] = 0.3, 0.6        # the right column's fields: table-like
    assert frame.table_edge(rows, near_right, 1.0) == Window(0, 0, 3, 2)
    assert frame.table_edge(rows, near_right, 0.5) is None     # 0.6 is not under 0.5
    assert frame.table_edge(rows, far, 1.0) is None
    bare_bottom = [r[:] for r in rows]
    bare_bottom[2] = ["empty"] * 3                              # read as table: no tile in it
    assert frame.table_edge(bare_bottom, far, 1.0) is None
    near_top = far.copy()
    near_top[0, :] = 0.2                                        # top first, then the others
    assert frame.table_edge(rows, np.minimum(near_top, near_right), 1.0) == Window(1, 0, 2, 3)
    assert frame.table_edge([["field", "field", "field"]], np.zeros((1, 3)), 1.0) == \
        Window(0, 1, 1, 2)                                      # a 1x3: only columns can go
    assert frame.table_edge([["field"]], np.zeros((1, 1)), 1.0) is None


def test_a_windows_squares_are_its_indices_in_the_grid_row_by_row():
    assert Window(1, 2, 2, 3).squares(4, 5).tolist() == [7, 8, 9, 12, 13, 14]
    assert Window(0, 0, 4, 5).squares(4, 5).tolist() == list(range(20))


def _hidden_cfg(tiles=12, crisp=-0.06):
    cfg = config.load()
    return {**cfg, "reader": {**cfg["reader"], "hidden_castle_tiles": tiles,
                              "hidden_castle_crisp": crisp}}


@pytest.mark.parametrize("tiles, is_frame, crisp, want", [
    (12, True, -0.03, True),      # a crisp 5x5 full of tiles: a kingdom whose castle is unseen
    (24, True, -0.06, True),      # at the crispness line
    (11, True, -0.03, False),     # too few tiles: loose dominoes, a box lid
    (24, False, -0.03, False),    # no 5x5 / 7x7 window
    (24, True, -0.07, False),     # read blurred: cut off the tiles' own grid
])
def test_a_crisp_frame_full_of_tiles_is_a_kingdom_without_a_castle(tiles, is_frame, crisp, want):
    terrains = ["lake"] * tiles + ["empty"] * (25 - tiles - 1) + ["castle"]
    assert frame.castle_hidden(terrains, is_frame, crisp, _hidden_cfg()) is want
    # the castle square does not count as a tile
    assert frame.castle_hidden(["castle"] * 25, True, 0.0, _hidden_cfg(tiles=1)) is False


def test_a_frame_without_a_castle_is_no_kingdom_when_off():
    assert frame.castle_hidden(["lake"] * 25, True, 0.0, _hidden_cfg(tiles=0)) is False


class _FirstBlurredClassifier(_MiddleClassifier):
    """Reads the first grid it is shown unsure and every later one as sure tiles: whatever
    cut is tried against the count as found reads crisper."""

    def __init__(self):
        self.calls = 0

    def logits(self, crops, first_turn_only=False):
        self.calls += 1
        out = np.zeros((len(crops), 12))
        out[:, 0] = 1.0 if self.calls == 1 else 8.0
        return out


def test_an_outline_far_from_square_on_the_table_is_not_recut_n_by_n():
    """A half-built 2x5 kingdom's outline (2.5 times as wide as tall on the table) is never cut
    5x5, however crisply the cut reads ([frame] recount_max_aspect): its squares would be
    2.5 times as wide as tall. With the gate off (0) the crisper cut wins, as a 4x5 outline
    (1.25) is still cut 5x5 with it on (2.0)."""
    from vision.find.gridcount import far_from_square

    image = np.full((400, 600, 3), 128, np.uint8)
    strip = _square_corners(100, 100, 450, 240)                  # 350 x 140 px: 2x5 squares
    assert far_from_square(strip, image.shape, 2.0)
    assert not far_from_square(strip, image.shape, 2.6) and not far_from_square(strip, image.shape, 0)
    assert frame.recount(image, strip, 2, 5, _FirstBlurredClassifier(), _cfg())[1:3] == (2, 5)
    cfg = _cfg()
    cfg["frame"]["recount_max_aspect"] = 0
    assert frame.recount(image, strip, 2, 5, _FirstBlurredClassifier(), cfg)[1:3] == (5, 5)
    four = _square_corners(100, 100, 450, 380)                   # 350 x 280 px: 4x5 squares
    assert not far_from_square(four, image.shape, 2.0)
    assert frame.recount(image, four, 4, 5, _FirstBlurredClassifier(), _cfg())[1:3] == (5, 5)


@pytest.mark.parametrize("rows, cols, size, want", [
    (5, 5, None, 5), (3, 4, None, 5), (6, 5, None, 7), (7, 7, None, 7), (8, 7, None, 7),
    (4, 4, 7, 7), (6, 6, 5, 7)])
def test_a_window_is_read_in_the_smallest_frame_that_holds_it(rows, cols, size, want):
    """The game's sizes (engine.kingdom.SIZES): the caller's size when it holds the window."""
    assert frame.frame_size(rows, cols, size) == want


def test_a_frame_is_square_and_one_of_the_sizes():
    assert frame.is_frame(5, 5) and frame.is_frame(7, 7)
    assert not frame.is_frame(5, 7) and not frame.is_frame(6, 6)
    assert not frame.is_frame(7, 7, (5,))


def test_an_aspect_that_hangs_on_the_focal_length_guess_is_no_aspect():
    """An outline seen head-on has about the same aspect on the table whatever the focal
    length; one seen steeply (its far edge half as long) does not, and with a spread
    ([detect] aspect_focal_spread) gets none: not an outline far from square either."""
    from vision.find.gridcount import far_from_square, focal_aspect

    shape = (3000, 4000, 3)
    flat = np.float32([[1500, 1000], [2500, 1000], [2500, 2000], [1500, 2000]])
    assert focal_aspect(flat, shape, 0.25) == pytest.approx(1.0, abs=0.01)
    steep = np.float32([[300, 200], [900, 260], [1300, 1100], [100, 1000]])  # far edge short
    guess = focal_aspect(steep, shape)
    assert guess is not None and focal_aspect(steep, shape, 0.25) is None
    assert far_from_square(steep, shape, max(guess, 1 / guess) * 0.9)
    assert not far_from_square(steep, shape, max(guess, 1 / guess) * 0.9, 0.25)


def test_a_band_of_table_with_a_loose_domino_in_it_leaves_a_frame():
    """A 7x5 window whose two top lines are table but for a loose domino's two squares is cut
    to the 5x5 below ([frame] loose_squares); not with three squares unlike the table, not
    a window that is a frame already, not when the setting is 0, and never one line: a
    half-built kingdom's 6x5 whose last line holds one domino stays."""
    kingdom = [["field"] * 5 for _ in range(5)]
    table = [["grassland"] * 5 for _ in range(2)]     # checks read as grassland
    terrains = table + kingdom
    far, near = 9.0, 0.2
    distance = np.full((7, 5), far)
    distance[:2] = near
    distance[0, 3] = distance[1, 3] = far              # the loose domino
    assert frame.loose_edge(terrains, distance, 2.0, (5, 7), 2) == Window(2, 0, 5, 5)
    assert frame.loose_edge(terrains, distance, 2.0, (5, 7), 0) is None
    three = distance.copy()
    three[1, 1] = far
    assert frame.loose_edge(terrains, three, 2.0, (5, 7), 2) is None
    assert frame.loose_edge(terrains[2:], distance[2:], 2.0, (5, 7), 2) is None
    # the band below as like the table as the one above: no side to choose
    both = table + kingdom[:3] + table
    d2 = np.full((7, 5), far)
    d2[:2] = d2[5:] = near
    assert frame.loose_edge(both, d2, 2.0, (5, 7), 2) is None
    half_built = kingdom + [["empty", "forest", "forest", "empty", "empty"]]
    d3 = np.full((6, 5), far)
    d3[5] = near
    d3[5, 1] = d3[5, 2] = far
    assert frame.loose_edge(half_built, d3, 2.0, (5, 7), 2) is None


def _every_window_plainly(gain, max_rows, max_cols, keep, keep_bonus, frames, frame_bonus,
                          walls, wall_penalty, edge_gain, bonus_within):
    """best_window's measure, window by window on numpy's own numbers: the sum of the gains,
    less the penalty per whole row or column of walls inside, plus the bonuses."""
    gain = np.asarray(gain, np.float64)
    R, C = gain.shape
    tile = gain > edge_gain
    S = np.zeros((R + 1, C + 1))
    S[1:, 1:] = gain.cumsum(0).cumsum(1)
    best, best_key = None, None
    for h in range(1, R + 1):
        for w in range(1, C + 1):
            if not ((h <= max_rows and w <= max_cols) or (h <= max_cols and w <= max_rows)):
                continue
            for r in range(R - h + 1):
                for c in range(C - w + 1):
                    win = Window(r, c, h, w)
                    total = S[r + h, c + w] - S[r, c + w] - S[r + h, c] + S[r, c]
                    if wall_penalty and (h > 2 or w > 2) and walls is not None:
                        inner = walls[r:r + h, c:c + w]
                        total -= wall_penalty * (int(inner[1:-1].all(1).sum())
                                                 + int(inner[:, 1:-1].all(0).sum()))
                    if win == keep:
                        total += keep_bonus
                    sides = (tile[r, c:c + w].any() and tile[r + h - 1, c:c + w].any()
                             and tile[r:r + h, c].any() and tile[r:r + h, c + w - 1].any())
                    if frame.is_frame(h, w, frames) and sides and (
                            bonus_within is None or win.inside(bonus_within)):
                        total += frame_bonus
                    key = (round(total, 9), win == keep, h * w)
                    if best_key is None or key > best_key:
                        best, best_key = win, key
    return best


@pytest.mark.parametrize("seed", range(5))
def test_the_best_window_is_the_one_each_window_measured_plainly_gives(seed):
    """best_window reads its sums as Python numbers (speed): the window must be the one the
    plain measure on numpy's numbers gives, ties at the ninth decimal included."""
    rng = np.random.default_rng(seed)
    for _ in range(40):
        R, C = (int(v) for v in rng.integers(1, 10, 2))
        gain = np.round(rng.normal(0, 3, (R, C)), 1) if seed % 2 else rng.normal(0, 3, (R, C))
        args = dict(keep=Window(int(rng.integers(0, R)), int(rng.integers(0, C)), 1, 1),
                    keep_bonus=float(rng.uniform(0, 2)), frames=(3, 5), frame_bonus=1.5,
                    walls=rng.random((R, C)) > 0.6, wall_penalty=float(rng.choice([0.0, 2.5])),
                    edge_gain=float(rng.uniform(-1, 1)),
                    bonus_within=Window(0, 0, R, C) if seed % 3 else None)
        max_rows, max_cols = (int(v) for v in rng.integers(1, 9, 2))
        assert best_window(gain, max_rows, max_cols, **args) == _every_window_plainly(
            gain, max_rows, max_cols, **args)
