"""vision.trim: rows and columns of table at the edge of a found kingdom are dropped."""
from __future__ import annotations

import numpy as np
import pytest

from vision.classify import MODELS_DIR
from vision.trim import sub_corners, table_edges

E = "empty"


def test_edge_rows_and_columns_of_table_are_counted_inner_ones_are_not():
    k = [["field", "lake", E], [E, E, E], ["castle", E, "mine"]]
    assert table_edges(k) == (0, 0, 0, 0)  # an empty row inside the kingdom stays
    seven = [["field"] * 5 + [E, E] for _ in range(5)] + [[E] * 7, [E] * 7]
    assert table_edges(seven) == (0, 2, 0, 2)
    framed = [[E] * 4, [E, "castle", "swamp", E], [E, E, "forest", E], [E] * 4]
    assert table_edges(framed) == (1, 1, 1, 1)
    assert table_edges([[E, E], [E, E]]) == (0, 0, 0, 0)  # nothing to frame: left to the caller
    assert table_edges([[E, E, "field"]]) == (0, 0, 2, 0)


def test_sub_corners_follow_the_perspective():
    square = np.float32([[0, 0], [70, 0], [70, 70], [0, 70]])
    assert np.allclose(sub_corners(square, 7, 7, 1, 2, 5, 4), [[20, 10], [60, 10], [60, 60], [20, 60]])
    quad = np.float32([[10, 20], [300, 40], [280, 260], [30, 230]])
    assert np.allclose(sub_corners(quad, 7, 5, 0, 0, 7, 5), quad, atol=1e-3)
    inner = sub_corners(quad, 7, 5, 2, 1, 3, 3)
    assert all(min(quad[:, i]) < inner[:, i].min() and inner[:, i].max() < max(quad[:, i]) for i in (0, 1))


@pytest.fixture()
def reader():
    if not (MODELS_DIR / "squares.onnx").exists():
        pytest.skip("no trained model in models/ (run `kingdomino train`)")
    from vision import Reader

    r = Reader()
    r.cfg = {**r.cfg, "reader": {**r.cfg.get("reader", {}), "drop_table_edges": True}}
    return r


def _kingdom_in_table(reader, monkeypatch, n_found: int):
    """A 5x5 kingdom found as ``n_found x n_found`` squares: the extra rows and columns (bottom and
    right) read as table. The classifier answers by the rectangle it is shown."""
    from vision.classify import SquareReading
    from vision.reader import _Found

    image = np.full((400, 400, 3), 90, np.uint8)
    side = 40 * n_found
    found = _Found(np.float32([[20, 20], [20 + side, 20], [20 + side, 20 + side], [20, 20 + side]]),
                   n_found, n_found, 7 if n_found > 5 else 5, None, [])
    monkeypatch.setattr(reader, "find", lambda img, size=None: found)
    shown = []

    def read(crops, rows, cols):
        shown.append((rows, cols))
        return [[SquareReading("castle" if (r, c) == (2, 2) else ("field" if r < 5 and c < 5 else E),
                               0, 0.95) for c in range(cols)] for r in range(rows)]

    monkeypatch.setattr(reader.classifier, "read", read)
    return image, found, shown


def test_a_five_by_five_framed_with_table_is_read_five_by_five(reader, monkeypatch):
    image, found, shown = _kingdom_in_table(reader, monkeypatch, 7)
    reading = reader.read(image)
    assert (reading.size, reading.rows, reading.cols) == (5, 5, 5)
    assert shown == [(7, 7), (5, 5)]
    assert np.allclose(reading.corners, [[20, 20], [220, 20], [220, 220], [20, 220]])
    assert any("dropped" in w for w in reading.warnings)
    assert reader.read(image, size=7).size == 7  # a frame asked for is kept


def test_the_rule_leaves_a_tight_frame_hand_corners_and_a_switched_off_config_alone(reader, monkeypatch):
    image, found, shown = _kingdom_in_table(reader, monkeypatch, 5)
    assert reader.read(image).size == 5 and shown == [(5, 5)]
    image, found, shown = _kingdom_in_table(reader, monkeypatch, 7)
    by_hand = reader.read(image, corners=found.corners, rows=7, cols=7)
    assert (by_hand.size, by_hand.rows) == (7, 7) and shown == [(7, 7)]
    monkeypatch.setitem(reader.cfg, "reader", {**reader.cfg.get("reader", {}), "drop_table_edges": False})
    assert reader.read(image).size == 7
