"""vision.lab.robust: perturbed photos and where their labelled corners go, and the count of
kingdoms framed (a stand-in reader; the dev photos are read in the lab, not here)."""
from __future__ import annotations

from types import SimpleNamespace

import cv2
import numpy as np
import pytest

from vision.lab import robust


def _photo(tmp_path, w=40, h=30):
    """A grey photo with a green 10x10 block at (8, 6); its corners clockwise from top-left."""
    image = np.full((h, w, 3), 128, np.uint8)
    image[6:16, 8:18] = (40, 180, 60)
    path = tmp_path / "p.png"
    cv2.imwrite(str(path), image)
    corners = np.float64([[8, 6], [18, 6], [18, 16], [8, 16]])
    return image, SimpleNamespace(path=path, name="p.png", corners=corners, rows=2, cols=3)


@pytest.mark.parametrize("k", [1, 2, 3])
def test_a_quarter_turn_takes_the_corners_with_the_photo(k, tmp_path):
    """A marked pixel and the labelled corners turned together: the pixel lands where the
    turned corner says."""
    image, _ = _photo(tmp_path)
    image[6, 8] = (0, 0, 255)                         # the top-left corner's pixel
    turned = robust.perturb(image, f"turn{k}")
    assert turned.shape[:2] == (image.shape[:2] if k == 2 else image.shape[1::-1])
    x, y = robust.corners_after([[8, 6], [18, 6], [18, 16], [8, 16]], f"turn{k}",
                                image.shape)[0]
    assert tuple(turned[int(round(y)), int(round(x))]) == (0, 0, 255)


def test_shrinking_scales_the_corners_and_colour_changes_keep_them():
    corners = [[8, 6], [18, 6], [18, 16], [8, 16]]
    assert np.allclose(robust.corners_after(corners, "scale0.6", (30, 40, 3)),
                       np.float64(corners) * 0.6)
    assert np.allclose(robust.corners_after(corners, "warm", (30, 40, 3)), corners)
    image = np.full((30, 40, 3), 100, np.uint8)
    warm = robust.perturb(image, "warm")
    assert warm.dtype == np.uint8 and warm.shape == image.shape
    assert warm[0, 0, 2] > 100 > warm[0, 0, 0]        # redder, less blue
    assert robust.perturb(image, "scale0.7").shape[:2] == (21, 28)


def test_an_unknown_perturbation_is_refused_with_the_names():
    with pytest.raises(ValueError, match="unknown perturbation 'sepia'.*warm"):
        robust.perturb(np.zeros((4, 4, 3), np.uint8), "sepia")
    with pytest.raises(ValueError, match="unknown perturbation"):
        robust.corners_after(np.zeros((4, 2)), "sepia", (4, 4, 3))


class _Reader:
    """Frames the green block (its bounding box) with a fixed grid; ``off`` shifts the outline
    by that many px; a photo with no green is no kingdom."""

    def __init__(self, rows=2, cols=3, off=0.0):
        self.rows, self.cols, self.off = rows, cols, off

    def find(self, image):
        g = (image[..., 1].astype(int) - image[..., 0] > 80)
        ys, xs = np.nonzero(g)
        if not len(xs):
            raise ValueError("no kingdom found")
        c = np.float64([[xs.min(), ys.min()], [xs.max() + 1, ys.min()],
                        [xs.max() + 1, ys.max() + 1], [xs.min(), ys.max() + 1]]) + self.off
        rows, cols = (self.rows, self.cols) if image.shape[0] < image.shape[1] else \
            (self.cols, self.rows)
        return SimpleNamespace(corners=c, rows=rows, cols=cols)


def test_measure_counts_framed_kingdoms_and_names_the_others(tmp_path):
    _, photo = _photo(tmp_path)
    names = ["turn1", "scale0.7", "bright"]
    res = robust.measure(_Reader(), [photo], names)
    assert list(res) == ["as taken", *names]
    assert all(r["n"] == 1 and r["framed"] == 1 and not r["failures"] for r in res.values())
    # an outline 4 px off (0.4 of a side) frames nothing, and says so
    res = robust.measure(_Reader(off=4.0), [photo], ["warm"])
    assert res["warm"]["framed"] == 0
    assert res["warm"]["failures"][0]["photo"] == "p.png"
    assert res["warm"]["failures"][0]["error"] == pytest.approx(0.4 * np.sqrt(2), abs=0.01)
    # the wrong grid, or nothing found, is not framed either; the next photo goes on
    res = robust.measure(_Reader(rows=3, cols=3), [photo, photo], ["noise"])
    assert res["noise"] == {"n": 2, "framed": 0, "failures": [
        {"photo": "p.png", "grid": "3x3", "error": 0.0}] * 2}
    blank = tmp_path / "blank.png"
    cv2.imwrite(str(blank), np.full((30, 40, 3), 128, np.uint8))
    table = SimpleNamespace(path=blank, name="blank.png", corners=photo.corners, rows=2, cols=3)
    res = robust.measure(_Reader(), [table, photo], ["dark"])
    assert res["dark"]["framed"] == 1
    assert res["dark"]["failures"] == [{"photo": "blank.png", "grid": None, "error": None}]


def test_main_refuses_unknown_names_before_loading_anything(capsys):
    with pytest.raises(SystemExit) as exc:
        robust.main(["--only", "warm,sepia"])
    assert exc.value.code == 2
    assert "unknown perturbation(s) sepia" in capsys.readouterr().err
