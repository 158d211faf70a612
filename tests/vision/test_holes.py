"""Holes in a half-built kingdom (vision.read.holes): a square like the table around the kingdom
reads as table. Hand-worked features, then a drawn 3x3 kingdom on a noisy table."""
import copy

import cv2
import numpy as np
import pytest

from vision import config
from vision.read.holes import (boost_logits, chroma_share, distances, empty_boost, far_penalty,
                          ring_features, square_features, table_distance, with_holes)
from vision.read.labels import TERRAINS

SCALES = [1.0] * 7
EMPTY = TERRAINS.index("empty")
FOREST = TERRAINS.index("forest")


def test_distance_is_the_largest_scaled_difference():
    a = np.array([[10.0, 0, 0, 0, 0, 0, 0]])
    b = np.array([[13.0, 0, 0, 0, 0, 0, 4.0], [10.0, 1, 0, 0, 0, 0, 0]])
    d = distances(a, b, [6.0, 4, 4, 4, 3, 3, 2])
    assert d.shape == (1, 2)
    assert d[0, 0] == pytest.approx(2.0)          # texture 4 / 2 beats L 3 / 6
    assert d[0, 1] == pytest.approx(0.25)


def test_scales_are_checked():
    with pytest.raises(ValueError, match="7 positive"):
        distances(np.zeros((1, 7)), np.zeros((1, 7)), [1.0, 2.0])
    with pytest.raises(ValueError, match="7 positive"):
        distances(np.zeros((1, 7)), np.zeros((1, 7)), [1.0] * 6 + [0.0])


def _features(inside, ring_value=0.0):
    """(3, 3, 7) features of a 1x1 window: the ring all ``ring_value`` (first feature)."""
    f = np.zeros((3, 3, 7))
    f[..., 0] = ring_value
    f[1, 1, 0] = inside
    return f


def test_table_distance_to_the_nearest_ring_square():
    f = _features(0.4)
    d = table_distance(f, np.zeros((3, 3), bool), np.zeros((1, 1), bool), SCALES, 1.0)
    assert d.shape == (1, 1) and d[0, 0] == pytest.approx(0.4)


def test_ring_squares_off_the_photo_are_no_reference():
    f = _features(5.0)
    f[0, 0, 0] = 5.0                     # the only ring square like the window lies off the photo
    off = np.zeros((3, 3), bool)
    off[0, 0] = True
    d = table_distance(f, off, np.zeros((1, 1), bool), SCALES, 1.0)
    assert d[0, 0] == pytest.approx(5.0)   # the rest of the ring is 5 away
    off[:] = True
    off[1, 1] = False
    assert np.isinf(table_distance(f, off, np.zeros((1, 1), bool), SCALES, 1.0)[0, 0])


def test_a_lone_ring_square_like_a_sure_tile_is_no_reference():
    """A loose domino beside the kingdom (one ring square like the window's tile, unlike the
    rest of the ring) must not make that tile table; the table's own squares, alike, may."""
    f = _features(5.0)
    f[0, 0, 0] = 5.0
    sure = np.ones((1, 1), bool)
    assert table_distance(f, np.zeros((3, 3), bool), sure, SCALES, 1.0)[0, 0] == pytest.approx(5.0)
    # the same square not read surely: the ring square is a reference
    assert table_distance(f, np.zeros((3, 3), bool), ~sure, SCALES, 1.0)[0, 0] == 0.0
    # three ring squares alike (more than min_alike others): table, even beside a sure tile
    f[0, 1, 0] = f[0, 2, 0] = 5.0
    assert table_distance(f, np.zeros((3, 3), bool), sure, SCALES, 1.0, min_alike=2)[0, 0] == 0.0


def test_boost_falls_linearly_to_nothing():
    b = empty_boost(np.array([0.0, 0.5, 1.0, 3.0, np.inf]), 1.0, 8.0)
    assert b.tolist() == pytest.approx([8.0, 4.0, 0.0, 0.0, 0.0])


# --------------------------------------------------------------------- a drawn kingdom
PX = 60


def _table(rng, h, w):
    noise = rng.normal(0.0, 18.0, (h, w, 3)).astype(np.float32)
    noise = cv2.GaussianBlur(noise, (0, 0), 1.5)
    return np.clip(np.float32([90, 120, 150]) + noise, 0, 255).astype(np.uint8)


def _tile(colour, k):
    """A tile: a solid colour with k dark stripes (its own texture)."""
    t = np.full((PX, PX, 3), colour, np.uint8)
    for i in range(k):
        y = (i + 1) * PX // (k + 1)
        cv2.line(t, (4, y), (PX - 5, y), (20, 20, 20), 2)
    return t


def _kingdom(holes=((1, 1),), loose=None):
    """A 3x3 kingdom drawn frontally with a one-square ring of table around it (5x5 squares
    of PX px); ``holes``: the squares left bare; ``loose``: a ring square (row, col of the 5x5)
    holding a copy of tile (0, 2). Returns the image and the kingdom's corners."""
    rng = np.random.default_rng(3)
    img = _table(rng, 5 * PX, 5 * PX)
    colours = [(40, 140, 40), (200, 60, 30), (40, 200, 220), (90, 90, 90), None,
               (30, 60, 150), (160, 160, 40), (120, 40, 140), (60, 180, 120)]
    for i in range(3):
        for j in range(3):
            if (i, j) in holes:
                continue
            colour = colours[i * 3 + j] or (200, 200, 200)
            img[(i + 1) * PX:(i + 2) * PX, (j + 1) * PX:(j + 2) * PX] = _tile(colour, 1 + (i + j) % 3)
    if loose is not None:
        r, c = loose
        img[r * PX:(r + 1) * PX, c * PX:(c + 1) * PX] = img[PX:2 * PX, 3 * PX:4 * PX]
    corners = np.float32([[PX, PX], [4 * PX, PX], [4 * PX, 4 * PX], [PX, 4 * PX]])
    return img, corners


def _forest_logits(n=9, value=12.0, castle=None):
    lg = np.zeros((n, len(TERRAINS) + 4), np.float32)
    lg[:, FOREST] = value
    if castle is not None:                # the reader reads one castle: say where
        lg[castle, TERRAINS.index("castle")] = 20.0
    return lg


@pytest.fixture()
def cfg():
    return copy.deepcopy(config.load())


def test_features_tell_the_hole_from_the_tiles(cfg):
    img, corners = _kingdom()
    h = cfg["holes"]
    f = square_features(img, corners, 3, 3, int(h["px"]), float(h["inner"]))
    assert f.shape == (5, 5, 7)
    off = np.zeros((5, 5), bool)
    d = table_distance(f, off, np.zeros((3, 3), bool), h["scales"], float(h["max_distance"]))
    assert d[1, 1] < 0.5 * float(h["max_distance"])
    others = np.delete(d.reshape(-1), 4)
    assert others.min() > 2 * float(h["max_distance"])


def test_the_hole_reads_empty_and_the_tiles_keep_their_logits(cfg):
    img, corners = _kingdom()
    lg = _forest_logits(value=4.0)
    out = with_holes(img, corners, 3, 3, lg, cfg)
    gain = out[:, EMPTY] - lg[:, EMPTY]
    assert gain[4] > 0.5 * float(cfg["holes"]["boost"])
    assert out[4, EMPTY] > out[4, FOREST]               # the hole now reads as table
    assert np.array_equal(np.delete(out, 4, axis=0), np.delete(lg, 4, axis=0))
    cfg["holes"]["enabled"] = False
    assert np.array_equal(with_holes(img, corners, 3, 3, lg, cfg), lg)


def test_table_like_marks_the_hole_and_no_tile(cfg):
    from vision.read.holes import table_like

    img, corners = _kingdom()
    like = table_like(img, corners, 3, 3, cfg["holes"])
    assert like.shape == (3, 3) and like[1, 1] and like.sum() == 1


def test_a_hole_read_as_crowns_reads_as_bare_table(cfg):
    """A checked cloth can read as a mine with two crowns, the crown head sure of it: a hole
    that looks like the table loses that lead (no crowns), the tiles keep theirs."""
    img, corners = _kingdom()
    lg = _forest_logits(value=4.0, castle=0)
    lg[:, len(TERRAINS) + 2] = 9.0                   # every square "two crowns", surely
    out = with_holes(img, corners, 3, 3, lg, cfg, 0.5, 0.5)
    crowns = out[:, len(TERRAINS):]
    assert crowns[4].argmax() == 0                   # the hole: no crowns
    assert np.array_equal(np.delete(out, 4, axis=0), np.delete(lg, 4, axis=0))
    from vision.read.classify import SquareClassifier

    clf = SquareClassifier(None, cfg["classify"], load_network=False)
    clf.t_terrain = clf.t_crowns = 0.5
    grid = clf.read_logits(out, 3, 3)
    assert (grid[1][1].terrain, grid[1][1].crowns) == ("empty", 0)


def test_a_loose_copy_of_a_tile_in_the_ring_leaves_that_tile_alone(cfg):
    img, corners = _kingdom(holes=(), loose=(0, 0))
    lg = _forest_logits()
    out = with_holes(img, corners, 3, 3, lg, cfg)
    assert np.array_equal(out, lg)
    cfg["holes"]["sure_tile"] = 1.01               # no square is sure: the copy is a reference
    out = with_holes(img, corners, 3, 3, lg, cfg)
    assert out[2, EMPTY] > lg[2, EMPTY]


def test_far_penalty_rises_from_far_to_full():
    d = np.array([0.0, 4.0, 5.0, 6.0, 9.0, np.inf])
    assert far_penalty(d, 4.0, 6.0, 6.0).tolist() == pytest.approx([0, 0, 3.0, 6.0, 6.0, 0])
    assert not far_penalty(d, 4.0, 6.0, 0.0).any()
    with pytest.raises(ValueError, match="far_distance"):
        far_penalty(d, 6.0, 4.0, 6.0)


def _washed(img, r, c):
    """Square (r, c) of the 3x3 kingdom washed white, as glare leaves a tile."""
    img[(r + 1) * PX:(r + 2) * PX, (c + 1) * PX:(c + 2) * PX] = 245
    return img


def test_a_washed_tile_read_as_table_reads_as_a_tile_only_when_read(cfg):
    """A tile washed white looks like no part of the table: reading a chosen window lowers
    its table odds; judging windows (far off) leaves them; a true hole keeps its own."""
    img, corners = _kingdom(holes=((1, 1),))
    img = _washed(img, 0, 2)
    lg = _forest_logits(value=2.0)
    lg[2, EMPTY] = 5.0                                # the washed tile read as table
    cfg["holes"].update(far_distance=4.0, far_full=6.0, far_penalty=6.0)
    judged = with_holes(img, corners, 3, 3, lg, cfg)
    assert judged[2].argmax() == EMPTY
    read = with_holes(img, corners, 3, 3, lg, cfg, far=True)
    assert read[2, :len(TERRAINS)].argmax() == FOREST
    assert read[4, EMPTY] == judged[4, EMPTY] > read[4, FOREST]     # the hole is table still
    cfg["holes"]["far_penalty"] = 0.0
    assert np.array_equal(with_holes(img, corners, 3, 3, lg, cfg, far=True), judged)


def test_chroma_share_is_a_squares_chroma_over_its_lightness():
    feats = np.zeros((3, 4, 7))
    feats[..., 0:3] = 128.0
    feats[1, 1, 0:3] = [200.0, 128.0, 168.0]          # pale yellow: chroma 40, L 200
    feats[1, 2, 0:3] = [100.0, 158.0, 168.0]          # dark orange: chroma 50, L 100
    assert np.allclose(chroma_share(feats), [[0.2, 0.5]])


def test_a_coloured_bare_square_unlike_the_table_stays_table(cfg):
    """A hole showing something else than the table (a mat, a box lid, another photo's wood)
    is far from the table too, but not pale: it keeps its table odds unless the gate is off."""
    img, corners = _kingdom(holes=((1, 1),))
    img = _washed(img, 0, 2)
    img[2 * PX:3 * PX, 2 * PX:3 * PX] = (40, 150, 210)          # the hole: ochre wood
    lg = _forest_logits(value=2.0)
    lg[2, EMPTY] = 5.0
    lg[4, EMPTY] = 5.0
    cfg["holes"].update(far_distance=4.0, far_full=6.0, far_penalty=6.0, far_pale=0.3)
    read = with_holes(img, corners, 3, 3, lg, cfg, far=True)
    assert read[2, :len(TERRAINS)].argmax() == FOREST            # the washed tile: pale
    assert read[4, :len(TERRAINS)].argmax() == EMPTY
    cfg["holes"]["far_pale"] = 0.0
    assert with_holes(img, corners, 3, 3, lg, cfg, far=True)[4, :len(TERRAINS)].argmax() == FOREST


def test_a_grey_photo_is_refused():
    with pytest.raises(ValueError, match="colour"):
        square_features(np.zeros((50, 50), np.uint8), np.float32([[0, 0], [9, 0], [9, 9], [0, 9]]),
                        1, 1, 32, 0.7)


@pytest.fixture()
def stub_reader(monkeypatch):
    """A reader whose classifier reads every square but the first (the castle) as forest,
    unsurely (4 log odds). It reads by a square's place in the batch, so the glare's second
    reading (vision.read.glare, tested on its own) is off: the washed tile here is pure white."""
    from vision import Reader

    reader = Reader(copy.deepcopy(config.load()))
    reader.cfg["deglare"]["enabled"] = False
    monkeypatch.setattr(reader.classifier, "logits",
                        lambda crops, **kw: _forest_logits(len(crops), value=4.0, castle=0))
    return reader


TWO_HOLES = ((1, 1), (1, 2))      # the six forests left still pair into dominoes


def test_the_reader_reads_holes_from_given_corners_as_table(stub_reader):
    img, corners = _kingdom(TWO_HOLES)
    reading = stub_reader.read(img, corners=corners, rows=3, cols=3)
    terrains = [[cell["terrain"] for cell in row[:3]] for row in reading.cells[:3]]
    assert terrains == [["castle", "forest", "forest"], ["forest", "empty", "empty"],
                        ["forest", "forest", "forest"]]
    stub_reader.cfg["holes"]["enabled"] = False
    reading = stub_reader.read(img, corners=corners, rows=3, cols=3)
    assert reading.cells[1][1]["terrain"] == "forest"


def test_a_framed_window_reads_holes_as_table_and_keeps_the_networks_logits(stub_reader):
    img, corners = _kingdom(TWO_HOLES)
    found = stub_reader.framed(img, corners, 3, 3)
    assert [sq.terrain for sq in found.grid[1]] == ["forest", "empty", "empty"]
    # crispness and castle odds judge the frame by what the network read, not the boost
    assert np.array_equal(found.logits, _forest_logits(9, value=4.0, castle=0))


def test_the_reader_reads_a_washed_tile_as_a_tile_and_judges_its_window_as_the_network_does(
        stub_reader, monkeypatch):
    img, corners = _kingdom(holes=((1, 1),))
    img = _washed(img, 0, 2)

    def washed_read_as_table(crops, **kw):
        lg = _forest_logits(len(crops), value=4.0, castle=0)
        lg[2, EMPTY] = 6.0
        return lg

    monkeypatch.setattr(stub_reader.classifier, "logits", washed_read_as_table)
    stub_reader.cfg["holes"].update(far_distance=4.0, far_full=6.0, far_penalty=6.0)
    found = stub_reader.framed(img, corners, 3, 3)
    assert found.grid[0][2].terrain == "empty"          # judged as the network read it
    reading = stub_reader.read_board(img, found)
    assert reading.cells[0][2]["terrain"] == "forest"
    assert reading.cells[1][1]["terrain"] == "empty"    # the true hole
    stub_reader.cfg["holes"]["far_penalty"] = 0.0
    assert stub_reader.read_board(img, found).cells[0][2]["terrain"] == "empty"


def test_logits_of_another_window_are_refused(cfg):
    img, corners = _kingdom()
    feats, off = ring_features(img, corners, 3, 3, cfg["holes"])
    with pytest.raises(ValueError, match="4 squares' logits for a 3x3 window"):
        boost_logits(feats, off, _forest_logits(4), cfg["holes"])


def test_a_grid_measured_once_per_read_and_never_for_another_photo(cfg):
    """Within a read (vision.read.crops.read_once) the ring of a grid already measured on the
    photo is the one measured (the same values as measured afresh, read-only); a photo other
    than the one being read, or the same grid after the read, is measured anew."""
    from vision.read.crops import read_once

    img, corners = _kingdom()
    other, _ = _kingdom(holes=((0, 0), (2, 2)))
    h = cfg["holes"]
    alone = ring_features(img, corners, 3, 3, h)
    with read_once(img):
        first = ring_features(img, corners, 3, 3, h)
        again = ring_features(img, np.asarray(corners, np.float64), 3, 3, h)
        assert again[0] is first[0] and again[1] is first[1]
        with read_once(img):            # the search inside a read keeps the read's measures
            assert ring_features(img, corners, 3, 3, h)[0] is first[0]
        assert ring_features(img, corners + 1, 3, 3, h)[0] is not first[0]
        elsewhere = ring_features(other, corners, 3, 3, h)
        assert not np.array_equal(elsewhere[0], first[0])
        assert np.array_equal(elsewhere[0], ring_features(other, corners, 3, 3, h)[0])
    assert np.array_equal(first[0], alone[0]) and np.array_equal(first[1], alone[1])
    assert not first[0].flags.writeable and not first[1].flags.writeable
    after = ring_features(img, corners, 3, 3, h)
    assert after[0] is not first[0] and np.array_equal(after[0], alone[0])
