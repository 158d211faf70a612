"""vision.lab.evaluation.hand_outline: labelled corners moved as a hand would, and the count of photos
read exact from them with the outline's refinement on and off (a stand-in reader on a drawn
kingdom; the dev photos are read in the lab, not here)."""
from __future__ import annotations

from types import SimpleNamespace

import cv2
import numpy as np
import pytest

from vision.geometry import corner_error
from vision.lab.evaluation import hand_outline


def test_each_corner_moves_the_share_of_a_square_asked_the_same_way_each_run():
    corners = np.float64([[100, 100], [500, 100], [500, 500], [100, 500]])   # 80 px squares
    a = hand_outline.moved(corners, 5, 5, 0.25, "photo-a.jpg")
    assert np.allclose(np.linalg.norm(a - corners, axis=1), 20.0)
    assert np.allclose(a, hand_outline.moved(corners, 5, 5, 0.25, "photo-a.jpg"))
    assert not np.allclose(a, hand_outline.moved(corners, 5, 5, 0.25, "photo-b.jpg"))
    assert np.allclose(hand_outline.moved(corners, 5, 5, 0.0, "photo-a.jpg"), corners)


def _kingdom(n=5, cell=80, at=100, seam=3):
    """Flat squares of a colour each with dark seams between them on a grey table."""
    rng = np.random.default_rng(2)
    side = at + n * cell
    image = np.full((side + at, side + at, 3), 128, np.uint8)
    for r in range(n):
        for c in range(n):
            y, x = at + r * cell, at + c * cell
            image[y:y + cell, x:x + cell] = rng.integers(60, 250, 3)
            image[y:y + seam, x:x + cell] = image[y:y + cell, x:x + seam] = 25
    image[side - seam:side, at:side] = image[at:side, side - seam:side] = 25
    return image, np.float64([[at, at], [side, at], [side, side], [at, side]])


class _Reader:
    """Reads every square right when asked for an outline within 0.12 of a square of the
    kingdom's, else one square wrong (a crown lost), not in review."""

    def __init__(self, true, terrain, crowns):
        from vision import config

        self.cfg, self.true, self.terrain, self.crowns = config.load(), true, terrain, crowns
        self.cfg["outline"]["size_by_reading"] = False      # no network here: the seams decide

    def read(self, image, size=None, *, corners=None, rows=None, cols=None):
        cells = [[{"terrain": t, "crowns": k} for t, k in zip(tr, kr)]
                 for tr, kr in zip(self.terrain, self.crowns)]
        if corner_error(np.asarray(corners, np.float64), self.true) * rows > 0.12:
            cells[0][1] = dict(cells[0][1], crowns=0)
        return SimpleNamespace(cells=cells, review=[], warnings=[], size=rows)


def test_a_photo_read_exact_only_from_the_refined_outline(tmp_path):
    image, true = _kingdom()
    path = tmp_path / "k.png"
    cv2.imwrite(str(path), image)
    terrain = [["castle"] + ["field"] * 4] + [["forest"] * 5 for _ in range(4)]
    crowns = [[0, 1, 0, 0, 0]] + [[0] * 5 for _ in range(4)]
    photo = SimpleNamespace(path=path, name="k.png", corners=true, rows=5, cols=5,
                            terrain=terrain, crowns=crowns)
    half = SimpleNamespace(path=path, name="half.png", corners=true, rows=4, cols=5,
                           terrain=terrain[:4], crowns=crowns[:4])
    reader = _Reader(true, terrain, crowns)
    res = hand_outline.measure(lambda p: reader, [photo, half], [0.0, 0.15])
    as_given, refined = res["0.15 of a square, as given"], res["0.15 of a square, refined"]
    assert refined["n"] == as_given["n"] == 1                       # the half-built one skipped
    assert (refined["exact"], refined["squares_wrong"], refined["unflagged"]) == (1, 0, 0)
    assert (as_given["exact"], as_given["squares_wrong"], as_given["unflagged"]) == (0, 1, 1)
    assert "none in review" in as_given["failures"][0]["why"]
    assert res["0 of a square, as given"]["exact"] == 1
    decided = res["0.15 of a square, size decided"]       # the seams count the drawn 5x5
    assert (decided["size_right"], decided["exact"]) == (1, 1)


def test_bad_offsets_and_a_missing_dataset_say_so_and_exit_2(tmp_path, capsys):
    for off, says in (("0.1,x", "numbers joined by commas"), ("1.5", "under 1"),
                      ("-0.1", "at least 0")):
        with pytest.raises(SystemExit) as done:
            hand_outline.main(["--off", off])
        assert done.value.code == 2 and says in capsys.readouterr().err
    assert hand_outline.main(["--datasets", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("hand_outline: ") and "Traceback" not in err
