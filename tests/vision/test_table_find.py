"""Finding every kingdom of a table photo (vision.find.whole_table): blobs split where a table joins
kingdoms, each outline made from its own blob only, the window chosen by the classifier among
a blob's outlines, and "cut" meaning cut by the photo's edge."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from vision import config as vconfig
from vision.find import whole_table as table
from vision.reader import Reading
from vision.find.detect import Outline
from vision.find.whole_table import TableOutline

CFG = vconfig.load()


def _square(mask, x0, y0, side, value=1):
    mask[y0:y0 + side, x0:x0 + side] = value
    return mask


# ------------------------------------------------------------------ splitting blobs

def test_two_kingdoms_joined_by_a_bridge_of_table_are_two_blobs():
    prob = np.zeros((300, 400), np.float32)
    _square(prob, 40, 80, 120)
    _square(prob, 240, 80, 120)
    prob[130:150, 150:250] = 1.0          # a strip of table read as tile joins them
    det = vconfig.Section("detect", dict(CFG["detect"]))
    blobs = table._blobs(prob, det, CFG["table"])
    assert len(blobs) == 2
    centres = sorted(np.argwhere(masks[0])[:, 1].mean() for masks in blobs)
    assert centres[0] == pytest.approx(100, abs=8) and centres[1] == pytest.approx(300, abs=8)


def test_a_row_of_loose_dominoes_falls_off_the_kingdom_but_is_tried_with_it():
    blob = _square(np.zeros((300, 400), np.uint8), 100, 80, 150)
    blob[120:140, 250:330] = 1            # a strip one domino wide along one side
    parts = table.split_blob(blob, float(CFG["table"]["core_frac"]))
    assert len(parts) == 1
    opened, whole = parts[0]
    assert opened[130, 300] == 0 and whole[130, 300] == 1    # the strip: only in ``whole``
    assert opened[155, 175] == 1                              # the kingdom's middle: in both
    # the kingdom keeps its sides (corners are restored by the outline's straight sides)
    assert opened[82:228, 175].all() and opened[155, 102:248].all()


def test_a_plain_square_is_one_mask():
    blob = _square(np.zeros((200, 200), np.uint8), 40, 40, 120)
    parts = table.split_blob(blob, float(CFG["table"]["core_frac"]))
    assert len(parts) == 1 and len(parts[0]) == 1 and (parts[0][0] == blob).all()


# ------------------------------------------------------------------ the outline of one blob

def _board_photo(rng, w=1600, h=1200, x0=500, y0=300, side=600, n=5):
    """A grey table with a board of n x n coloured squares and dark seams, axis-aligned."""
    img = np.full((h, w, 3), 120, np.uint8)
    cell = side // n
    for r in range(n):
        for c in range(n):
            colour = rng.integers(40, 230, 3)
            img[y0 + r * cell + 3:y0 + (r + 1) * cell - 3,
                x0 + c * cell + 3:x0 + (c + 1) * cell - 3] = colour
            img[y0 + r * cell:y0 + r * cell + 3, x0 + c * cell:x0 + (c + 1) * cell] = 20
            img[y0 + r * cell:y0 + (r + 1) * cell, x0 + c * cell:x0 + c * cell + 3] = 20
    truth = np.float32([[x0, y0], [x0 + side, y0], [x0 + side, y0 + side], [x0, y0 + side]])
    return img, truth


def test_the_outline_does_not_take_in_a_table_that_reads_nearly_as_tile(monkeypatch):
    """A table whose tile odds sit just under the threshold (0.45: yellow wood, olive checks)
    once let the outline grow into it (the blob's map was handed on with the evidence around
    it, and the outline step's hysteresis took that in)."""
    from vision.find.detect import corner_error

    img, truth = _board_photo(np.random.default_rng(3))

    def tile_map(small, det):
        scale = small.shape[1] / img.shape[1]
        prob = np.full(small.shape[:2], 0.45, np.float32)
        x0, y0 = np.round(truth[0] * scale).astype(int)
        x1, y1 = np.round(truth[2] * scale).astype(int)
        prob[y0:y1, x0:x1] = 0.97
        return prob

    monkeypatch.setattr(table, "_tile_map", tile_map)
    found = table.find_kingdoms(img, CFG)
    assert len(found) == 1
    # (it took in 0.06-0.08 of a side of table on every side; now 0.02)
    assert corner_error(found[0].corners.astype(float), truth.astype(float), any_first=True) < 0.03


# ------------------------------------------------------------------ reading the outlines

class _FakeReader:
    """Stands in for vision.Reader: ``framed`` reads each outline as its logits say."""

    def __init__(self, logits_for):
        self.cfg = CFG
        self.logits_for = logits_for       # rows -> logits of that grid
        self.classifier = SimpleNamespace(t_terrain=1.0)
        self.framed_grids = []

    def framed(self, image, corners, rows, cols, size=None, warnings=(), cfg=None):
        self.framed_grids.append((rows, cols))
        return SimpleNamespace(corners=np.float32(corners), rows=rows, cols=cols,
                               logits=self.logits_for[rows], warnings=list(warnings))

    def find(self, image, size=None):
        """The single-kingdom search finds nothing: the table search's readings stand."""
        from vision.errors import NO_KINGDOM, PhotoError

        raise PhotoError(NO_KINGDOM)

    def read_board(self, image, found, size=None):
        grid = [["field"] * found.cols for _ in range(found.rows)]
        grid[found.rows // 2][found.cols // 2] = "castle"
        cells = [[{"terrain": t, "crowns": 0, "confidence": 0.99} for t in row] for row in grid]
        return Reading(size=max(found.rows, found.cols), cells=cells, review=[],
                       corners=np.float32(found.corners).tolist(), homography=[], rows=found.rows,
                       cols=found.cols, warnings=list(found.warnings))


def _blobs_found(monkeypatch, *blobs):
    """The photo's blobs, each given as its outlines in the order they are made."""
    monkeypatch.setattr(table, "_outlines_by_blob",
                        lambda image, cfg, boxes=None: [iter(outlines) for outlines in blobs])


def _logits(n, sure):
    lg = np.zeros((n * n, 12), np.float32)
    lg[:, 0] = sure        # one terrain stands out by ``sure`` log odds
    return lg


def _box(x, y, side):
    return np.float32([[x, y], [x + side, y], [x + side, y + side], [x, y + side]])


def test_of_a_blobs_outlines_the_one_whose_squares_read_crispest_is_kept(monkeypatch):
    """The surer grid count of a table-joined blob can be the outline that takes in table:
    its squares, cut across tiles, read blurred; the kingdom's own grid reads crisply."""
    bloated = TableOutline(_box(900, 900, 1200), 7, 7, 0.9, False)
    tight = TableOutline(_box(1000, 1000, 1000), 5, 5, 0.6, False)
    _blobs_found(monkeypatch, [bloated, tight])
    reader = _FakeReader({7: _logits(7, 1.0), 5: _logits(5, 6.0)})
    image = np.zeros((3000, 4000, 3), np.uint8)
    out = table.read_table(reader, image)
    assert len(out) == 1 and (out[0].reading.rows, out[0].reading.cols) == (5, 5)
    # and the other way round when the bloated one reads crisper
    reader = _FakeReader({7: _logits(7, 6.0), 5: _logits(5, 1.0)})
    assert table.read_table(reader, image)[0].reading.rows == 7


def test_an_outline_that_cannot_be_a_kingdom_is_not_read(monkeypatch):
    unsure = TableOutline(_box(1000, 1000, 1000), 5, 5, 0.1, False)
    strip = TableOutline(_box(100, 100, 400), 2, 5, 0.9, False)
    _blobs_found(monkeypatch, [unsure], [strip])
    reader = _FakeReader({5: _logits(5, 6.0), 2: _logits(2, 6.0)})
    with pytest.raises(ValueError):
        table.read_table(reader, np.zeros((3000, 4000, 3), np.uint8))
    assert reader.framed_grids == []


def test_a_blob_at_the_border_is_cut_only_when_its_kingdom_reaches_the_edge(monkeypatch):
    """A checked cloth can join a kingdom's blob to the photo's border while the kingdom lies
    whole in the photo: "cut" once flagged it (not scored as complete)."""
    inside = TableOutline(_box(1500, 600, 1000), 5, 5, 0.9, True)     # blob touched the border
    at_edge = TableOutline(_box(2950, 1990, 1000), 5, 5, 0.9, True)   # 10 px from the bottom
    _blobs_found(monkeypatch, [inside], [at_edge])
    reader = _FakeReader({5: _logits(5, 6.0)})
    out = table.read_table(reader, np.zeros((3000, 4000, 3), np.uint8))
    assert [k.cut for k in out] == [False, True]
    assert table.CUT_WARNING in out[1].reading.warnings
    assert table.CUT_WARNING not in out[0].reading.warnings


def test_leaves_photo():
    shape = (3000, 4000, 3)
    assert not table.leaves_photo(_box(1000, 1000, 1000), 5, 5, shape, 0.5)
    assert table.leaves_photo(_box(2950, 1000, 1000), 5, 5, shape, 0.5)      # 50 px: a quarter
    assert not table.leaves_photo(_box(2950, 1000, 1000), 5, 5, shape, 0.0)
    assert table.leaves_photo(_box(3100, 1000, 1000), 5, 5, shape, 0.0)


def test_the_strict_mask_keeps_the_sure_tiles_and_drops_cloth_that_reads_half_as_tile():
    prob = np.zeros((300, 400), np.float32)
    _square(prob, 100, 80, 150, 0.97)
    prob[100:140, 250:290] = 0.65          # a check of the cloth beside the kingdom
    blob = (prob > 0.5).astype(np.uint8)
    det = vconfig.Section("detect", dict(CFG["detect"]))
    strict = table.strict_mask(prob, blob, det, float(CFG["table"]["strict_thresholds"][0]))
    assert strict[120, 270] == 0 and strict[155, 175] == 1
    assert table.strict_mask(prob * 0.5, blob, det, 0.8) is None


def test_a_blobs_other_outlines_are_not_read_once_one_reads_crisply(monkeypatch):
    tight = TableOutline(_box(1000, 1000, 1000), 5, 5, 0.9, False)
    bloated = TableOutline(_box(900, 900, 1200), 7, 7, 0.6, False)
    _blobs_found(monkeypatch, [tight, bloated])
    reader = _FakeReader({5: _logits(5, 9.0), 7: _logits(7, 20.0)})
    out = table.read_table(reader, np.zeros((3000, 4000, 3), np.uint8))
    assert len(reader.framed_grids) == 1 and out[0].reading.rows == 5


def test_a_surer_count_of_an_outline_already_given_is_still_given(monkeypatch):
    """The 0.8 and 0.9 masks of a blob on checked cloth gave the same 5x5 outline, counted 0.41
    and 0.75 sure: the surer one was skipped as alike, and the unsure one is never read."""
    prob = np.zeros((300, 400), np.float32)
    _square(prob, 100, 80, 150, 0.97)
    whole = (prob > 0.5).astype(np.uint8)
    opened = whole.copy()
    opened[80:100, 100:120] = 0
    box = _box(1000, 1000, 1000)
    made = iter([Outline(box * 1.2, 5, 7, 0.56), Outline(box, 5, 5, 0.41),
                 Outline(box + 5, 5, 5, 0.75), Outline(box + 9, 5, 5, 0.6)])
    monkeypatch.setattr(table, "outline_in_map", lambda *a: next(made))
    det = vconfig.Section("detect", dict(CFG["detect"]))
    tab = dict(CFG["table"], strict_thresholds=[0.8, 0.9])
    given = list(table.blob_outlines(prob, (opened, whole), None, None, None, 1.0, 1.0,
                                     (3000, 4000, 3), det, tab))
    assert [(o.rows, o.cols, o.confidence) for o in given] == [(5, 7, 0.56), (5, 5, 0.41),
                                                              (5, 5, 0.75)]


def test_table_photos_mix_the_tile_maps_by_their_own_weight(monkeypatch):
    """[table] tile_net_weight, not [detect]'s, mixes the network's map for whole-table photos."""
    cfg = vconfig.load()
    cfg["detect"]["tile_net_weight"] = 1.0
    cfg["table"]["tile_net_weight"] = 0.25
    seen = []

    def fake_map(small, det):
        seen.append(float(det["tile_net_weight"]))
        return np.zeros(small.shape[:2], np.float32)

    monkeypatch.setattr(table, "_tile_map", fake_map)
    table._outlines_by_blob(np.full((300, 400, 3), 128, np.uint8), cfg)
    assert seen == [0.25]


def test_a_kingdom_with_table_all_around_is_not_cut(monkeypatch):
    """A kingdom with ~140 px of table on every side, whose table reads as tile up to the
    photo's edge (the blob touches the border), is whole: only an outline at the edge is cut."""
    inside = TableOutline(_box(140, 140, 1000), 5, 5, 0.9, True)      # 140 px to each edge
    _blobs_found(monkeypatch, [inside])
    out = table.read_table(_FakeReader({5: _logits(5, 6.0)}), np.zeros((1280, 1280, 3), np.uint8))
    assert [k.cut for k in out] == [False]
    assert table.CUT_WARNING not in out[0].reading.warnings


class _SingleReader(_FakeReader):
    """A fake whose single-kingdom search (``find``) finds one window: plain ``score``'s."""

    def __init__(self, logits_for, window):
        super().__init__(logits_for)
        self.window = window

    def find(self, image, size=None):
        return SimpleNamespace(corners=np.float32(self.window), rows=5, cols=5, logits=None,
                               warnings=["plain"])

    def check_found(self, reading):
        return reading


def test_the_kingdom_plain_score_finds_is_read_as_plain_score_reads_it(monkeypatch):
    """The table search cut one kingdom into two pieces; the reader's own window holds both:
    ``--all`` reads that window, as plain ``score`` does."""
    left = TableOutline(_box(1000, 1000, 500), 3, 3, 0.9, False)
    right = TableOutline(_box(1500, 1000, 500), 3, 3, 0.9, False)
    _blobs_found(monkeypatch, [left], [right])
    reader = _SingleReader({3: _logits(3, 6.0)}, _box(1000, 800, 1000))
    out = table.read_table(reader, np.zeros((3000, 4000, 3), np.uint8))
    assert len(out) == 1 and (out[0].reading.rows, out[0].reading.cols) == (5, 5)
    assert out[0].reading.warnings == ["plain"]


def _blobs_with_bounds(monkeypatch, *blobs):
    """The photo's blobs, each given as ``(bounds, outlines)``."""
    def outlines_by_blob(image, cfg, boxes=None):
        if boxes is not None:
            boxes.extend(box for box, _ in blobs)
        return [iter(outlines) for _, outlines in blobs]

    monkeypatch.setattr(table, "_outlines_by_blob", outlines_by_blob)


@pytest.mark.parametrize("found_at, castle, kept", [((2400, 900), 6.0, True),
                                                    ((1300, 900), 6.0, False),
                                                    ((2400, 900), -6.0, False)])
def test_a_blob_the_table_search_counts_no_kingdom_in_is_searched_as_a_single_kingdom(
        monkeypatch, found_at, castle, kept):
    """A sparse kingdom small in a wide photo: the table search counts its grid wrong (3x5,
    unsure) and reads no kingdom in its blob. The single-kingdom search in a crop around the
    blob finds it; what it finds over another kingdom (a loose domino beside it), or without a
    sure castle (a score pad), is no kingdom."""
    from vision.find.frame import TERRAINS

    logits = np.zeros((25, 12), np.float32)
    logits[12, TERRAINS.index("castle")] = castle
    first = TableOutline(_box(500, 1000, 1000), 5, 5, 0.9, False)
    miscounted = TableOutline(_box(2500, 1000, 600), 3, 5, 0.2, False)
    _blobs_with_bounds(monkeypatch, ((500, 1000, 1500, 2000), [first]),
                       ((2500, 1000, 3100, 1600), [miscounted]))
    searched = []

    def search_box(reader, image, box, grow, size):
        searched.append(tuple(box))
        if tuple(box) != (2500, 1000, 3100, 1600):
            return None
        window = SimpleNamespace(corners=_box(*found_at, 800), rows=5, cols=5, logits=logits,
                                 warnings=[])
        return window, reader.read_board(image, window)

    monkeypatch.setattr(table, "_search_box", search_box)
    out = table.read_table(_FakeReader({5: _logits(5, 6.0)}), np.zeros((3000, 4000, 3), np.uint8))
    assert (2500, 1000, 3100, 1600) in searched
    assert len(out) == (2 if kept else 1)
