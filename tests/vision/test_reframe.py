"""A blurred 5x5 / 7x7 window cut as the other square frame on its outline (vision.find.reframe), on
drawn kingdoms of flat squares read by a stand-in network: no dataset."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from vision.find import reframe
from vision.find.detect import Outline
from vision.find.search import Objective
from vision.find.frame import crispness
from vision.read.labels import TERRAINS

SQUARE, PAD = 50, 2


@pytest.fixture()
def reader(monkeypatch):
    from vision import Reader

    rd = Reader()
    monkeypatch.setattr(rd.classifier, "logits", _stand_in)
    return rd


def _stand_in(crops, first_turn_only=False):
    """A crop whose middle is one colour is a sure tile (white: the castle), one a tile edge
    runs through (a grid of the wrong count) unsure; grey is table."""
    out = np.zeros((len(crops), len(TERRAINS) + 4), np.float32)
    for i, crop in enumerate(np.asarray(crops)):
        h, w = crop.shape[:2]
        mid = crop[h // 3:2 * h // 3, w // 3:2 * w // 3].reshape(-1, 3).astype(float)
        one = np.ptp(mid, axis=0).max() < 10
        colour = mid.mean(axis=0)
        if not one:
            out[i, TERRAINS.index("forest")] = 1.0
        elif np.ptp(colour) < 10:
            out[i, TERRAINS.index("castle" if colour[0] > 200 else "empty")] = 9.0
        else:
            out[i, TERRAINS.index("field")] = 9.0
        out[i, len(TERRAINS)] = 9.0
    return out


def _kingdom(n: int):
    """A grey table, an n x n kingdom of distinct colours ``PAD`` squares in, the middle square
    white; the kingdom's outline (tl, tr, br, bl)."""
    side = (n + 2 * PAD) * SQUARE
    image = np.full((side, side, 3), 128, np.uint8)
    rng = np.random.default_rng(n)
    for r in range(n):
        for c in range(n):
            y, x = (PAD + r) * SQUARE, (PAD + c) * SQUARE
            image[y:y + SQUARE, x:x + SQUARE] = [rng.integers(0, 90), rng.integers(120, 256),
                                                 rng.integers(0, 90)]
    m = (PAD + n // 2) * SQUARE
    image[m:m + SQUARE, m:m + SQUARE] = 255
    a, b = PAD * SQUARE, (PAD + n) * SQUARE
    return image, np.float32([[a, a], [b, a], [b, b], [a, b]])


def _reframed(reader, image, found, size=None):
    """What ``Reader.find`` makes of its chosen window ``found``: the other frames cut on its
    outline (vision.find.reframe.other_frames), weighed by the reader's objective."""
    t = reader.classifier.t_terrain

    def window(corners, rows, cols, warnings=()):
        return reader.framed(image, corners, rows, cols, size, warnings)

    others = reframe.other_frames(found, window, reader.cfg, t, size)
    return Objective(reader.cfg, t).pick_reframed(found, others)


@pytest.mark.parametrize("kingdom, counted", [(7, 5), (5, 7)])
def test_a_blurred_frame_is_cut_as_the_other_frame_on_its_outline(reader, kingdom, counted):
    """The kingdom's outline counted as the wrong frame reads blurred (its squares cut across
    the tiles); cut as the other frame every square is one tile and reads crisply: that wins,
    with a warning, on the same outline."""
    image, outline = _kingdom(kingdom)
    wrong = reader.framed(image, outline, counted, counted)
    t = reader.classifier.t_terrain
    assert (wrong.rows, wrong.cols) == (counted, counted)
    assert crispness(wrong.logits, t) < float(reader.cfg["reader"]["other_frame_below"])
    found = _reframed(reader, image, wrong)
    assert (found.rows, found.cols) == (kingdom, kingdom)
    assert np.allclose(found.corners, outline)
    assert crispness(found.logits, t) > crispness(wrong.logits, t)
    assert any("crisper as" in w for w in found.warnings)
    assert not any("crisper as" in w for w in wrong.warnings)
    reading = reader.read_board(image, found)
    assert reading.cells[kingdom // 2][kingdom // 2]["terrain"] == "castle"


def test_a_crisp_frame_is_kept_and_the_other_frame_never_read(reader, monkeypatch):
    image, outline = _kingdom(7)
    right = reader.framed(image, outline, 7, 7)
    monkeypatch.setattr(reader, "framed", lambda *a, **k: pytest.fail("the other frame was read"))
    assert _reframed(reader, image, right) is right


def test_the_other_frame_is_never_larger_than_the_size_asked_for_nor_read_when_off(reader,
                                                                                 monkeypatch):
    image, outline = _kingdom(7)
    wrong = reader.framed(image, outline, 5, 5)
    assert _reframed(reader, image, wrong, size=5) is wrong
    monkeypatch.setitem(reader.cfg["reader"], "other_frame_below", -100.0)
    assert _reframed(reader, image, wrong) is wrong


def test_a_crisper_cut_without_a_castle_or_by_less_than_the_margin_loses(reader, monkeypatch):
    """The other frame must read crisper by [reader] other_frame_margin and hold a castle."""
    image, outline = _kingdom(7)
    wrong = reader.framed(image, outline, 5, 5)
    t = reader.classifier.t_terrain
    gain = crispness(reader.framed(image, outline, 7, 7).logits, t) - crispness(wrong.logits, t)
    monkeypatch.setitem(reader.cfg["reader"], "other_frame_margin", gain + 0.01)
    assert _reframed(reader, image, wrong) is wrong
    monkeypatch.setitem(reader.cfg["reader"], "other_frame_margin", gain - 0.01)
    assert _reframed(reader, image, wrong).rows == 7
    monkeypatch.setitem(reader.cfg["reader"], "min_castle_odds", 1.0)
    assert _reframed(reader, image, wrong) is wrong


def test_a_window_short_of_a_frame_is_left_alone(reader, monkeypatch):
    image, outline = _kingdom(5)
    piece = replace(reader.framed(image, outline, 5, 5), rows=4)     # a 4x5 piece: no frame
    monkeypatch.setattr(reader, "framed", lambda *a, **k: pytest.fail("another frame was read"))
    assert _reframed(reader, image, piece) is piece


def test_the_reader_cuts_its_blurred_find_as_the_other_frame(reader, monkeypatch):
    """Reader.find: the detector's only outline is the 7x7 kingdom's, counted 5x5."""
    from vision.find import detect

    image, outline = _kingdom(7)
    monkeypatch.setitem(reader.cfg["reader"], "table_fallback", False)
    monkeypatch.setattr(detect, "candidates", lambda img, cfg, size=None, **kw: iter(
        [Outline(outline, 5, 5, 0.9)]))
    assert (reader.find(image).rows, reader.find(image, size=5).rows) == (7, 5)
    monkeypatch.setitem(reader.cfg["reader"], "other_frame_below", -100.0)
    assert reader.find(image).rows == 5
