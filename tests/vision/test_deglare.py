"""Squares washed by glare read again with it taken off (vision.read.glare): the glare's share
worked by hand on flat boards, its removal, and which squares the network reads again."""
import copy

import numpy as np
import pytest

from vision import config

from vision.find.detect import Outline
from vision.read import glare as deglare

CELL, MARGIN = 64, 24


def _cfg(**dg):
    cfg = copy.deepcopy(config.load())
    cfg["deglare"].update(dg)
    return cfg


def _board(rows=2, cols=2, colour=(200, 60, 0)):
    """A rectified board of one tile colour (BGR) with a dark speck grid: tile art has a dark
    pixel near everywhere."""
    h, w = rows * CELL + 2 * MARGIN, cols * CELL + 2 * MARGIN
    board = np.empty((h, w, 3), np.uint8)
    board[:] = colour
    board[::8, ::8] = 0
    return board


def _wash(board, a, light=245.0, where=None):
    """``seen = tile * (1 - a) + light * a`` over ``where`` (a (y0, y1, x0, x1) box) or all."""
    out = board.astype(np.float32)
    y0, y1, x0, x1 = where or (0, board.shape[0], 0, board.shape[1])
    out[y0:y1, x0:x1] = out[y0:y1, x0:x1] * (1 - a) + light * a
    return np.clip(np.round(out), 0, 255).astype(np.uint8)


def test_no_glare_on_tile_art_reads_zero():
    dcfg = _cfg()["deglare"]
    field = deglare.glare_field(_board(), CELL, dcfg)
    assert field.shape == _board().shape[:2]
    assert field.max() < 0.01


def test_an_even_wash_gives_its_share_times_the_strength():
    dcfg = _cfg(strength=0.9)["deglare"]
    field = deglare.glare_field(_wash(_board(), 0.5), CELL, dcfg)
    # darkest channel 0 washed to 245 * 0.5: the share seen is 0.5, 0.9 of it put down to glare
    assert field[MARGIN + CELL, MARGIN + CELL] == pytest.approx(0.45, abs=0.01)


def test_removing_a_known_wash_gives_the_tile_back():
    dcfg = _cfg(strength=1.0)["deglare"]
    tile = _board()
    seen = _wash(tile, 0.6)
    field = deglare.glare_field(seen, CELL, dcfg)
    back = deglare.remove_glare(seen, field, dcfg)
    y, x = MARGIN + CELL + 3, MARGIN + CELL + 3      # off the speck grid
    assert np.abs(back[y, x].astype(int) - tile[y, x].astype(int)).max() <= 3
    assert np.abs(seen[y, x].astype(int) - tile[y, x].astype(int)).max() > 60


def test_the_tiles_share_is_never_taken_below_the_floor():
    dcfg = _cfg(strength=1.0, min_transmission=0.25)["deglare"]
    field = deglare.glare_field(np.full((200, 200, 3), 250, np.uint8), CELL, dcfg)
    assert field.max() == pytest.approx(0.75)
    out = deglare.remove_glare(np.full((200, 200, 3), 250, np.uint8), field, dcfg)
    assert out.dtype == np.uint8 and out.min() >= 0


def test_square_glare_is_the_mean_over_each_squares_middle():
    field = np.zeros((2 * CELL + 2 * MARGIN, 3 * CELL + 2 * MARGIN), np.float32)
    field[MARGIN + CELL:MARGIN + 2 * CELL, MARGIN + 2 * CELL:MARGIN + 3 * CELL] = 0.4
    g = deglare.square_glare(field, 2, 3, CELL, MARGIN)
    assert g.shape == (2, 3)
    assert g[1, 2] == pytest.approx(0.4)
    assert np.count_nonzero(g) == 1


@pytest.mark.parametrize("key, value, message", [
    ("window", 0, "window"), ("light", 300, "light"), ("strength", 0, "strength"),
    ("min_transmission", 1.5, "min_transmission")])
def test_settings_are_checked(key, value, message):
    with pytest.raises(ValueError, match=message):
        deglare.glare_field(_board(), CELL, _cfg(**{key: value})["deglare"])


class _CountingNet:
    """Reads every crop as 'logits' of its mean brightness; remembers how many it read. A
    reading whose last output is over 100 is sure."""

    def __init__(self):
        self.read = 0

    def sure(self, logits, p):
        return np.asarray(logits)[:, -1] > 100

    def logits(self, crops):
        self.read += len(crops)
        return np.repeat(np.asarray(crops, np.float32).mean(axis=(1, 2, 3))[:, None], 12, axis=1)


def _photo_with_board(board):
    """The board as a photo whose corners are the board's without its margin."""
    rows_px, cols_px = board.shape[0] - 2 * MARGIN, board.shape[1] - 2 * MARGIN
    corners = np.float32([[MARGIN, MARGIN], [MARGIN + cols_px, MARGIN],
                          [MARGIN + cols_px, MARGIN + rows_px], [MARGIN, MARGIN + rows_px]])
    return board, corners


def test_only_the_squares_under_glare_are_read_again():
    cfg = _cfg(min_glare=0.3)
    tile = _board(2, 3)
    y0, x0 = MARGIN + CELL, MARGIN + 2 * CELL         # the bottom right square washed
    seen = _wash(tile, 0.6, where=(y0 - 16, y0 + CELL + 16, x0 - 16, x0 + CELL + 16))
    image, corners = _photo_with_board(seen)
    logits = np.zeros((6, 12), np.float32)
    net = _CountingNet()
    out, again, _ = deglare.reread(image, corners, 2, 3, logits, net, cfg)
    assert again == [(1, 2)]
    assert net.read == 1
    assert np.all(out[:5] == 0)                          # the others as read
    assert out[5, 0] > 0
    # the washed square, read again, is darker (nearer the tile under it) than as seen
    assert out[5, 0] < np.asarray(seen[y0:y0 + CELL, x0:x0 + CELL], np.float32).mean() - 20


def test_nothing_is_read_again_when_off_or_without_glare():
    image, corners = _photo_with_board(_board(2, 3))
    logits = np.ones((6, 12), np.float32)
    net = _CountingNet()
    out, again, _ = deglare.reread(image, corners, 2, 3, logits, net, _cfg())
    assert again == [] and net.read == 0 and np.array_equal(out, logits)
    washed, corners = _photo_with_board(_wash(_board(2, 3), 0.7))
    out, again, _ = deglare.reread(washed, corners, 2, 3, logits, net, _cfg(enabled=False))
    assert again == [] and net.read == 0 and np.array_equal(out, logits)


def test_board_and_photo_glare_give_each_squares_share():
    """The review's glare share per square (vision.read.glare.board_glare, photo_glare): a wash of
    0.6, put down at 0.95 to glare, is 0.57 over a whole board worked by hand; over one square
    of six, the field's smoothing leaves a little less there and a little on its neighbours."""
    cfg = _cfg(strength=0.95)
    tile = _board(2, 3)
    assert np.allclose(deglare.board_glare(_wash(tile, 0.6), 2, 3, cfg), 0.57, atol=0.01)
    y0, x0 = MARGIN, MARGIN + CELL                    # the top middle square washed
    seen = _wash(tile, 0.6, where=(y0 - 16, y0 + CELL + 16, x0 - 16, x0 + CELL + 16))
    shares = deglare.board_glare(seen, 2, 3, cfg)
    assert shares.shape == (2, 3)
    assert 0.4 < shares[0, 1] < 0.58
    assert np.delete(shares.ravel(), 1).max() < 0.05
    image, corners = _photo_with_board(seen)
    assert np.allclose(deglare.photo_glare(image, corners, 2, 3, cfg), shares, atol=0.02)
    assert deglare.board_glare(tile, 2, 3, cfg).max() < 0.01


# --------------------------------------------------------------------- the reader
PX = 60
LAKE, CASTLE = (200, 60, 0), (128, 128, 128)


def _lake_kingdom(glare=(PX - 30, 2 * PX + 30, 3 * PX - 30, 4 * PX + 30)):
    """A 3x3 kingdom drawn frontally on dark cloth, the castle in the middle, lakes around,
    every tile specked dark; the box ``glare`` (y0, y1, x0, x1) washed by glare: by default
    the top-right lake and the cloth beside it."""
    rng = np.random.default_rng(5)
    img = np.clip(rng.normal(40, 6, (5 * PX, 5 * PX, 3)), 0, 255).astype(np.uint8)
    for i in range(3):
        for j in range(3):
            tile = np.empty((PX, PX, 3), np.uint8)
            tile[:] = CASTLE if (i, j) == (1, 1) else LAKE
            tile[::6, ::6] = 0
            img[(i + 1) * PX:(i + 2) * PX, (j + 1) * PX:(j + 2) * PX] = tile
    img = _wash(img, 0.6, where=glare)
    corners = np.float32([[PX, PX], [4 * PX, PX], [4 * PX, 4 * PX], [PX, 4 * PX]])
    return img, corners


def _colour_reader(monkeypatch):
    """A reader whose network reads a crop's middle by colour alone: deep blue is lake, grey
    the castle, anything else table."""
    from vision import Reader
    from vision.read.labels import TERRAINS

    reader = Reader(_cfg())
    # drawn squares of one colour look like no tile the network learned from
    # (vision.read.novelty, tested on its own): glare alone is asked about here
    reader.cfg["novelty"]["flag_above"] = 0

    def by_colour(crops, **kw):
        lg = np.zeros((len(crops), len(TERRAINS) + 4), np.float32)
        for k, crop in enumerate(np.asarray(crops, np.float32)):
            h = crop.shape[0]
            b, g, r = crop[h // 3:2 * h // 3, h // 3:2 * h // 3].reshape(-1, 3).mean(axis=0)
            name = "lake" if b - r > 120 else "castle" if abs(b - r) < 10 and b < 160 else "empty"
            lg[k, TERRAINS.index(name)] = 12.0
            lg[k, len(TERRAINS)] = 12.0            # no crown
        return lg

    monkeypatch.setattr(reader.classifier, "logits", by_colour)
    return reader


def _terrains(reading):
    return [[cell["terrain"] for cell in row[:3]] for row in reading.cells[:3]]


def test_the_reader_reads_a_tile_washed_by_glare_with_the_glare_taken_off(monkeypatch):
    img, corners = _lake_kingdom()
    reader = _colour_reader(monkeypatch)
    want = [["lake"] * 3, ["lake", "castle", "lake"], ["lake"] * 3]
    assert _terrains(reader.read(img, corners=corners, rows=3, cols=3)) == want
    # the window chosen by the frame's reading: judged as seen, read with the glare off
    found = reader.framed(img, corners, 3, 3)
    assert found.grid[0][2].terrain == "empty"
    assert _terrains(reader.read_board(img, found)) == want
    reader.cfg["deglare"]["enabled"] = False
    assert _terrains(reader.read(img, corners=corners, rows=3, cols=3))[0][2] == "empty"
    assert _terrains(reader.read_board(img, reader.framed(img, corners, 3, 3)))[0][2] == "empty"


@pytest.mark.parametrize("terrain, read_again", [("lake", False), ("empty", True)])
def test_a_square_read_surely_as_a_tile_is_not_read_again(terrain, read_again):
    from vision.read.labels import TERRAINS

    image, corners = _photo_with_board(_wash(_board(1, 2), 0.6))
    logits = np.zeros((2, 12), np.float32)
    logits[:, TERRAINS.index(terrain)] = 50.0
    logits[:, -1] = 200.0                               # sure, by the stub's measure
    net = _CountingNet()
    out, again, _ = deglare.reread(image, corners, 1, 2, logits, net, _cfg(min_glare=0.3))
    assert (again == [(0, 0), (0, 1)]) == read_again
    assert net.read == (2 if read_again else 0)
    assert np.array_equal(out, logits) != read_again


def test_a_castle_washed_by_glare_still_makes_the_outline_a_kingdom(monkeypatch):
    from vision.find import search
    from vision.find import frame
    from vision.errors import PhotoError

    # the glare on the castle (and the lakes round it)
    img, corners = _lake_kingdom(glare=(2 * PX - 20, 3 * PX + 20, 2 * PX - 20, 3 * PX + 20))
    reader = _colour_reader(monkeypatch)
    reader.cfg["reader"]["table_fallback"] = False
    # the detector's one outline: the kingdom's own
    monkeypatch.setattr(search, "outlines",
                        lambda image, cfg, size: iter([Outline(corners, 3, 3, 0.9)]))
    found = reader.framed(img, corners, 3, 3)
    # as seen, the castle reads as table: no square has castle odds
    assert frame.terrain_odds(found.logits, "castle", reader.classifier.t_terrain).max() < 0.01
    again = deglare.reread(img, corners, 3, 3, found.logits, reader.classifier, reader.cfg)
    assert deglare.reread_odds(again, reader.classifier, "castle") > 0.99  # as the castle
    kept = reader.find(img)
    assert (kept.rows, kept.cols) == (3, 3)
    # the second reading is made once: read_board takes the one find made
    made, real = [], deglare.reread
    monkeypatch.setattr(deglare, "reread", lambda *a, **k: made.append(1) or real(*a, **k))
    assert _terrains(reader.read_board(img, kept))[1][1] == "castle"
    assert made == []
    monkeypatch.setattr(deglare, "reread", real)
    # without the glare's second reading no castle is seen: the outline is no kingdom
    reader.cfg["deglare"]["enabled"] = False
    off = deglare.reread(img, corners, 3, 3, found.logits, reader.classifier, reader.cfg)
    assert deglare.reread_odds(off, reader.classifier, "castle") == 0.0
    with pytest.raises(PhotoError):
        reader.find(img)


def test_a_crisp_5x5_whose_castle_is_hidden_is_still_the_kingdom(monkeypatch):
    from vision.find import search
    from vision.errors import PhotoError

    # a 5x5 kingdom of lakes on dark cloth (the stand-in network reads grey as the castle);
    # a hand covers the castle square: no square reads as the castle
    rng = np.random.default_rng(3)
    img = np.clip(rng.normal(40, 6, (7 * PX, 7 * PX, 3)), 0, 255).astype(np.uint8)
    tile = np.empty((PX, PX, 3), np.uint8)
    tile[:] = LAKE
    tile[::6, ::6] = 0
    for i in range(5):
        for j in range(5):
            img[(i + 1) * PX:(i + 2) * PX, (j + 1) * PX:(j + 2) * PX] = tile
    img[3 * PX:4 * PX, 3 * PX:4 * PX] = (130, 160, 210)     # skin
    corners = np.float32([[PX, PX], [6 * PX, PX], [6 * PX, 6 * PX], [PX, 6 * PX]])
    reader = _colour_reader(monkeypatch)
    reader.cfg["reader"]["table_fallback"] = False
    monkeypatch.setattr(search, "outlines",
                        lambda image, cfg, size: iter([Outline(corners, 5, 5, 0.9)]))
    kept = reader.find(img)
    assert (kept.rows, kept.cols) == (5, 5)
    assert np.abs(np.asarray(kept.corners) - corners).max() < 2
    # with the rule off, a window without a castle is no kingdom
    reader.cfg["reader"]["hidden_castle_tiles"] = 0
    with pytest.raises(PhotoError):
        reader.find(img)


def test_a_castle_seen_only_with_the_glare_off_does_not_end_the_search(monkeypatch):
    from vision.find import search

    img, corners = _lake_kingdom(glare=(2 * PX - 20, 3 * PX + 20, 2 * PX - 20, 3 * PX + 20))
    reader = _colour_reader(monkeypatch)
    reader.cfg["reader"]["table_fallback"] = False
    cloth = np.float32([[0, 0], [PX - 10, 0], [PX - 10, PX - 10], [0, PX - 10]])   # bare cloth
    monkeypatch.setattr(search, "outlines", lambda image, cfg, size: iter(
        [Outline(corners, 3, 3, 0.9), Outline(cloth, 1, 1, 0.5)]))
    read, framed = [], reader.framed
    monkeypatch.setattr(reader, "framed", lambda *a, **k: read.append(1) or framed(*a, **k))
    kept = reader.find(img)
    # the castle read with the glare off makes the first outline a kingdom, and the one kept,
    # but not a sure one: the next outline is read too
    assert (kept.rows, kept.cols) == (3, 3) and np.allclose(kept.corners, corners, atol=2)
    assert len(read) == 2


def test_a_square_under_glare_read_less_than_surely_goes_to_review(monkeypatch):
    """Every square read a little unsure (0.975): of the two corner lakes, only the one under
    the glare is flagged, with the glare as the reason; with ``[review] flag_glare`` 0, neither
    is."""
    img, corners = _lake_kingdom()
    reader = _colour_reader(monkeypatch)
    read = reader.classifier.read_logits

    def a_little_unsure(logits, rows, cols):
        grid = read(logits, rows, cols)
        for row in grid:
            for sq in row:
                sq.confidence = 0.975
        return grid

    monkeypatch.setattr(reader.classifier, "read_logits", a_little_unsure)
    reading = reader.read(img, corners=corners, rows=3, cols=3)
    assert _terrains(reading)[0] == ["lake"] * 3
    assert [0, 2] in reading.review and [0, 0] not in reading.review
    assert "glare" in str(reading.reasons["0,2"][0])
    reader.cfg["review"]["flag_glare"] = 0
    assert [0, 2] not in reader.read(img, corners=corners, rows=3, cols=3).review
