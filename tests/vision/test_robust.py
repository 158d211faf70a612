"""vision.lab.evaluation.robust: perturbed photos and where their labelled corners go, and the count of
kingdoms framed (a stand-in reader; the dev photos are read in the lab, not here)."""
from __future__ import annotations

from types import SimpleNamespace

import cv2
import numpy as np
import pytest

from vision.lab.evaluation import robust


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
    turned, corners = robust.change(image, [[8, 6], [18, 6], [18, 16], [8, 16]], f"turn{k}")
    assert turned.shape[:2] == (image.shape[:2] if k == 2 else image.shape[1::-1])
    x, y = corners[0]
    assert tuple(turned[int(round(y)), int(round(x))]) == (0, 0, 255)


def test_shrinking_scales_the_corners_and_colour_changes_keep_them():
    corners = [[8, 6], [18, 6], [18, 16], [8, 16]]
    image = np.full((30, 40, 3), 100, np.uint8)
    small, moved = robust.change(image, corners, "scale0.6")
    assert np.allclose(moved, np.float64(corners) * 0.6)
    assert robust.change(image, corners, "scale0.7")[0].shape[:2] == (21, 28)
    warm, kept = robust.change(image, corners, "warm")
    assert np.allclose(kept, corners)
    assert warm.dtype == np.uint8 and warm.shape == image.shape
    assert warm[0, 0, 2] > 100 > warm[0, 0, 0]        # redder, less blue


def _board(h=120, w=160, box=(60, 45, 100, 85)):
    """A mid-grey table with a ramp (so mirrored bands show) and a green block; its corners."""
    image = np.zeros((h, w, 3), np.uint8)
    image[...] = np.linspace(60, 120, w, dtype=np.uint8)[None, :, None]
    x0, y0, x1, y1 = box
    image[y0:y1, x0:x1] = (40, 180, 60)
    return image, np.float64([[x0, y0], [x1, y0], [x1, y1], [x0, y1]])


def test_far_shrinks_the_kingdom_inside_a_grown_table_of_the_same_size():
    image, corners = _board()
    far, moved = robust.change(image, corners, "far0.6")
    assert far.shape == image.shape
    side = np.ptp(moved, axis=0)
    assert np.allclose(side, 0.6 * np.ptp(corners, axis=0), rtol=0.03)
    green = (far[..., 1].astype(int) - far[..., 0]) > 80          # only one kingdom, where said
    ys, xs = np.nonzero(green)
    assert abs(xs.min() - moved[:, 0].min()) <= 1.5 and abs(ys.max() + 1 - moved[:, 1].max()) <= 1.5
    assert green.sum() == pytest.approx(side.prod(), rel=0.15)
    # a kingdom touching the photo's edge leaves no table to mirror: the change does not apply
    assert robust.change(*_board(box=(0, 45, 40, 85)), "far0.6") is None


def test_tilt_moves_the_corners_with_the_pixels():
    image, corners = _board()
    tilted, moved = robust.change(image, corners, "tilt")
    assert tilted.shape == image.shape
    inside = np.round(moved.mean(0)).astype(int)              # the block's centre, moved
    assert tuple(tilted[inside[1], inside[0]]) == (40, 180, 60)
    top, bottom = moved[1, 0] - moved[0, 0], moved[2, 0] - moved[3, 0]
    assert top < bottom                                        # the far side narrower


def test_glare_pales_the_table_beside_the_kingdom_or_the_kingdoms_edge():
    image, corners = _board()
    image[:, 120:] = 200                                       # a pale table on the right
    beside, kept = robust.change(image, corners, "glare_beside")
    assert np.allclose(kept, corners)
    paler = beside.astype(int).sum(2) - image.astype(int).sum(2)
    assert paler.min() >= 0
    left, right = paler[:, :60].sum(), paler[:, 100:].sum()
    assert left > 3 * right                        # beside the side with the darker table
    assert paler[45:85, 60:100].mean() < paler[45:85, 20:60].mean()   # the table, not the tiles
    on, _ = robust.change(image, corners, "glare_on")
    paler_on = on.astype(int).sum(2) - image.astype(int).sum(2)
    assert paler_on[45:85, 60:100].mean() > paler_on[45:85, 20:60].mean()  # the tiles' edge


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
    names = ["turn1", "scale0.7", "bright", "far0.6"]
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


def test_changes_joined_by_plus_are_made_one_after_the_other(tmp_path):
    image, photo = _photo(tmp_path)
    once, moved = robust.change(image, photo.corners, "turn1")
    both, corners = robust.change(image, photo.corners, "turn1+turn1")
    twice, want = robust.change(once, moved, "turn1")
    assert np.array_equal(both, twice) and np.allclose(corners, want)
    assert robust.turns("turn1+turn1") == 2 and robust.turns("far0.6+cool") == 0
    # any far factor between 0 and 1; a change that cannot apply stops the whole
    half, shrunk = robust.change(image, photo.corners, "far0.5+cool")
    assert half.shape == image.shape
    assert np.allclose(np.ptp(shrunk, axis=0), 0.5 * np.ptp(photo.corners, axis=0), atol=1.0)
    assert robust.unknown("far0.5+far1.5+sepia+far") == ["far1.5", "sepia", "far"]
    with pytest.raises(ValueError, match="far1.5"):
        robust.change(image, photo.corners, "cool+far1.5")


def test_each_photo_can_be_framed_by_its_own_reader(tmp_path):
    """``measure`` takes a function giving each photo's reader (each fold's network frames
    the photos it held out): the photo framed by a reader that frames it wrong is named."""
    _, photo = _photo(tmp_path)
    other = SimpleNamespace(**{**vars(photo), "name": "q.png"})
    readers = {"p.png": _Reader(), "q.png": _Reader(rows=3, cols=3)}
    res = robust.measure(lambda ph: readers[ph.name], [photo, other], ["turn1+turn2"])
    # three quarter turns in all: the grid found must be the labelled one turned
    assert res["turn1+turn2"]["framed"] == 1
    assert [f["photo"] for f in res["turn1+turn2"]["failures"]] == ["q.png"]


def test_fold_models_must_be_as_evaluate_keeps_them(tmp_path, monkeypatch):
    """Each photo gets the network of the one fold that was not trained on it (what evaluate
    wrote beside each network says which); a folder that is no cross-validation of the
    photos is refused."""
    import json

    import vision.lab.evaluation.evaluate as ev

    photos = [SimpleNamespace(name=n) for n in ("a", "b", "c")]
    (tmp_path / "fold1.onnx").write_bytes(b"")
    with pytest.raises(ValueError, match="fold0.onnx"):
        robust.fold_readers(tmp_path, photos)
    (tmp_path / "fold0.onnx").write_bytes(b"")
    with pytest.raises(ValueError, match="fold0.json"):
        robust.fold_readers(tmp_path, photos)
    for k, trained in enumerate((["b", "c"], ["a"])):
        (tmp_path / f"fold{k}.json").write_text(json.dumps({"trained_on": trained}))
    monkeypatch.setattr(ev, "fold_reader", lambda path, cfg: path.name)
    reader_for = robust.fold_readers(tmp_path, photos)
    assert [reader_for(p) for p in photos] == ["fold0.onnx", "fold1.onnx", "fold1.onnx"]
    (tmp_path / "fold1.json").write_text(json.dumps({"trained_on": ["c"]}))   # a: by both
    with pytest.raises(ValueError, match="a is held out by 2"):
        robust.fold_readers(tmp_path, photos)
