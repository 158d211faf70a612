"""The plain functions behind the pages: grid on the photo, dispute, header checks."""
from __future__ import annotations

import cv2
import numpy as np
import pytest
from webapp_helpers import jpeg_bytes, png_bytes

from webapp.reading import dispute, doubtful_squares, grid_points, shrink_photo
from webapp.security import ImageRejected, check_image, image_format_and_size

CORNERS = [[100.0, 50.0], [500.0, 60.0], [520.0, 450.0], [80.0, 440.0]]


def _project(h_img_to_board, x, y):
    inv = np.linalg.inv(np.asarray(h_img_to_board))
    p = inv @ [x, y, 1.0]
    return p[:2] / p[2]


@pytest.mark.parametrize("cell, margin", [(100, 0), (64, 16)])
def test_grid_points_follow_the_homography(cell, margin):
    board = np.float32([[0, 0], [5 * cell, 0], [5 * cell, 5 * cell], [0, 5 * cell]]) + margin
    hom = cv2.getPerspectiveTransform(np.float32(CORNERS), board)
    pts = grid_points({"corners": CORNERS, "homography": hom.tolist(), "size": 5})
    assert len(pts) == 6 and len(pts[0]) == 6
    # the outer corners are the detected corners
    for (r, c), corner in zip([(0, 0), (0, 5), (5, 5), (5, 0)], CORNERS):
        assert pts[r][c] == pytest.approx(corner, abs=0.05)
    # an inner point is where the inverse homography sends that board point
    expect = _project(hom, margin + 2 * cell, margin + 3 * cell)
    assert pts[3][2] == pytest.approx(list(expect), abs=0.05)


def test_grid_points_without_homography_use_the_corners():
    square = [[0, 0], [70, 0], [70, 70], [0, 70]]
    pts = grid_points({"corners": square, "size": 7})
    assert pts[1][1] == pytest.approx([10, 10]) and pts[7][3] == pytest.approx([30, 70])
    assert grid_points({"size": 5, "cells": []}) is None  # built by hand: nothing to draw


def test_doubtful_and_dispute():
    machine = {"review": [[0, 0]],
               "cells": [[{"confidence": 0.99}, {"confidence": 0.3}], [{"confidence": 0.9}, {}]]}
    assert doubtful_squares(machine) == {(0, 0), (0, 1)}
    score = {"total": 10, "regions": [
        {"terrain": "field", "squares": 2, "crowns": 1, "points": 2, "cells": [[0, 0], [1, 0]]},
        {"terrain": "lake", "squares": 1, "crowns": 0, "points": 0, "cells": [[1, 1]]},
        {"terrain": "mine", "squares": 1, "crowns": 8, "points": 8, "cells": [[0, 1]]}]}
    d = dispute(14, score, machine, corrected=False)
    assert d["difference"] == 4
    assert [s["terrain"] for s in d["suspects"]] == ["field", "mine"]
    assert "above" in d["message"]
    assert dispute(None, score, machine, False) is None
    assert dispute(10, score, machine, False)["message"].startswith("The claimed score matches")
    sure = dispute(7, score, {"cells": [], "review": []}, True)
    assert sure["suspects"] == [] and "recount" in sure["message"]


def test_header_sizes():
    assert image_format_and_size(png_bytes(321, 123)) == ("png", 321, 123)
    assert image_format_and_size(jpeg_bytes(200, 150)) == ("jpeg", 200, 150)
    ok, webp = cv2.imencode(".webp", np.zeros((40, 60, 3), np.uint8))
    assert image_format_and_size(webp.tobytes()) == ("webp", 60, 40)
    with pytest.raises(ImageRejected, match="megapixels"):
        check_image(png_bytes(300, 300), max_pixels=300 * 299)
    check_image(png_bytes(300, 300), max_pixels=300 * 300)


def test_shrink_photo_keeps_the_aspect_and_reports_the_original_size():
    small, (w, h) = shrink_photo(jpeg_bytes(2000, 1000), max_side=500)
    assert (w, h) == (2000, 1000)
    img = cv2.imdecode(np.frombuffer(small, np.uint8), cv2.IMREAD_COLOR)
    assert img.shape[:2] == (250, 500)


def _kingdom(**squares):
    """A 5x5 Kingdomino kingdom: castle in the middle, the named squares ("r0c1": "forest1")."""
    cells = [[{"terrain": "castle" if (r, c) == (2, 2) else "empty", "crowns": 0}
              for c in range(5)] for r in range(5)]
    for name, value in squares.items():
        r, c = int(name[1]), int(name[3])
        cells[r][c] = {"terrain": value.rstrip("0123"), "crowns": int(value[-1])}
    return {"rules": "kingdomino", "size": 5, "cells": cells}


def test_undo_stack_replays_the_stored_corrections():
    from webapp.reading import undo_stack

    machine = {**_kingdom(r2c3="forest0"), "photo_size": [10, 10]}
    a = _kingdom(r2c3="field0")
    b = _kingdom(r2c3="field1")
    c = _kingdom(r2c3="field1", r1c2="lake0")

    def kingdoms(stack):
        return [s["kingdom"]["cells"] for s in stack]

    assert undo_stack(machine, "kingdomino", [], []) == []
    # two changes: Undo goes back to a, then to the machine's reading
    assert kingdoms(undo_stack(machine, "kingdomino", [], [a, b])) == \
        [_kingdom(r2c3="forest0")["cells"], a["cells"]]
    # the page saved an undo (b back to a): only the machine's reading is left to go back to
    assert kingdoms(undo_stack(machine, "kingdomino", [], [a, b, a])) == [machine["cells"]]
    # then a new change: it is undone first
    assert kingdoms(undo_stack(machine, "kingdomino", [], [a, b, a, c])) == \
        [machine["cells"], a["cells"]]
    # a save sent twice is one change
    assert kingdoms(undo_stack(machine, "kingdomino", [], [a, a])) == [machine["cells"]]
    # a kingdom built by hand: its first save is where Undo stops
    assert kingdoms(undo_stack(None, "kingdomino", [], [a, b])) == [a["cells"]]
    # the bonuses are part of a state, and the stack says them
    stack = undo_stack(machine, "kingdomino", [], [{**a, "bonuses": ["harmony"]}, a])
    assert [s["bonuses"] for s in stack] == [[], ["harmony"]]
