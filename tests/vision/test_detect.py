"""vision.find.detect: finding the kingdom's outline and grid (``locate``, ``candidates``)."""
from __future__ import annotations

import cv2
import numpy as np
import pytest

from tests.conftest import shared_path
from vision.find.detect import corner_error, locate
from vision.lab.training.pixels import evaluate_detection
from vision.errors import PhotoError

COLOURS = [(40, 200, 240), (40, 140, 40), (200, 120, 30), (60, 190, 120), (90, 110, 130),
           (30, 60, 90)]  # BGR: field, forest, lake, grassland, swamp, mine-ish


def _board_texture(rows: int, cols: int, cell: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    img = np.zeros((rows * cell, cols * cell, 3), np.uint8)
    for r in range(rows):
        for c in range(cols):
            col = np.array(COLOURS[rng.integers(len(COLOURS))], np.float32)
            noise = rng.normal(0, 25, (cell, cell, 1)).astype(np.float32)
            tile = np.clip(col + noise, 0, 255).astype(np.uint8)
            cv2.rectangle(tile, (0, 0), (cell - 1, cell - 1), (20, 20, 20), 2)  # seam
            img[r * cell:(r + 1) * cell, c * cell:(c + 1) * cell] = tile
    return img


def _scene(rows, cols, corners, shape=(900, 1200), seed=0):
    cell = 80
    board = _board_texture(rows, cols, cell, seed)
    src = np.float32([[0, 0], [cols * cell, 0], [cols * cell, rows * cell], [0, rows * cell]])
    H = cv2.getPerspectiveTransform(src, np.float32(corners))
    rng = np.random.default_rng(seed + 1)
    bg = np.clip(rng.normal(150, 6, shape + (1,)), 0, 255).astype(np.uint8).repeat(3, axis=2)
    warped = cv2.warpPerspective(board, H, (shape[1], shape[0]))
    mask = cv2.warpPerspective(np.full(board.shape[:2], 255, np.uint8), H, (shape[1], shape[0]))
    bg[mask > 0] = warped[mask > 0]
    return bg


@pytest.mark.parametrize("corners", [
    [[400, 200], [800, 210], [830, 640], [380, 620]],      # mild perspective
    [[600, 150], [900, 420], [620, 720], [330, 440]],      # rotated ~45 degrees
    [[450, 300], [780, 300], [900, 650], [330, 650]],      # oblique (trapezoid)
])
def test_recovers_corners_of_a_warped_5x5_board(corners):
    img = _scene(5, 5, corners)
    found = locate(img)
    assert (found.rows, found.cols) == (5, 5)
    truth = np.float32(corners)
    # the same 4 points whatever the starting corner; then the order must be the dataset's
    err = corner_error(found.corners, truth)
    assert err < 0.05, (found.corners, truth)
    assert 0.0 <= found.confidence <= 1.0


def test_corner_error_with_any_corner_first():
    truth = np.float32([[0, 0], [10, 0], [10, 10], [0, 10]])
    turned = np.roll(truth, 1, axis=0) + np.float32([1, 0])  # a quarter turn, 1 px off
    assert corner_error(turned, truth) > 0.9  # tl against tr and so on
    assert corner_error(turned, truth, any_first=True) == pytest.approx(0.1)


def test_top_side_comes_first():
    corners = [[600, 150], [900, 420], [620, 720], [330, 440]]  # diamond: tl is the top point
    found = locate(_scene(5, 5, corners))
    top = found.corners[:2, 1].mean()
    assert top <= min(found.corners[1:3, 1].mean(), found.corners[2:, 1].mean(),
                      found.corners[[3, 0], 1].mean()) + 1


def test_rectified_board_fills_the_image():
    img = _board_texture(5, 5, 100, seed=3)
    found = locate(img)
    assert (found.rows, found.cols) == (5, 5)
    expect = np.float32([[0, 0], [500, 0], [500, 500], [0, 500]])
    assert np.abs(found.corners - expect).max() <= 10


def test_blank_image_has_no_kingdom():
    with pytest.raises(PhotoError, match="no kingdom"):
        locate(np.full((600, 800, 3), 128, np.uint8))


@pytest.mark.slow
def test_dev_phone_photos():
    shared_path("datasets", "phone-photos", "corners.csv")
    from vision.lab.datasets import load_phone

    res = evaluate_detection(load_phone())
    wrong_grid = [(r["photo"], r["rows"], r["cols"]) for r in res["rows"] if not r["grid_right"]]
    assert not wrong_grid
    lost = [(r["photo"], round(r["error"], 3)) for r in res["rows"] if r["error"] > 0.2]
    assert not lost  # every kingdom located (worst corner within a fifth of the side)
    assert res["found"] >= 0.7  # worst corner within 5 % of the side
    assert res["median_error"] < 0.04


@pytest.mark.slow
def test_aau_photos_are_taken_as_rectified_boards():
    shared_path("datasets", "aau-kingdomino", "boards.csv")
    from vision.lab.datasets import load_aau

    res = evaluate_detection(load_aau()[:20])
    assert res["found"] >= 0.9


@pytest.mark.slow
def test_generated_scenes():
    """Rendered kingdoms on generated tables (vision.lab.scenes.synth), exact corners."""
    from vision.lab.scenes import synth

    rng = np.random.default_rng(2024)
    good = 0
    n = 8
    for i in range(n):
        size = 7 if i % 4 == 0 else 5
        b = synth.rendered_board(rng, size=size, cell=80)
        scene, corners = synth.make_scene(b["image"], rng, width=1400, board_mask=b["mask"])
        try:
            found = locate(scene)
        except PhotoError:
            continue
        if (found.rows, found.cols) == (size, size) and corner_error(
                found.corners, np.float32(corners)) < 0.05:
            good += 1
    assert good >= n - 2


def test_warns_when_the_board_touches_the_photo_edge():
    corners = [[-60, 100], [500, 80], [520, 560], [-40, 580]]  # left side cut off
    img = _scene(5, 5, corners, shape=(700, 900))
    found = locate(img)
    assert any("outside the photo" in w for w in found.warnings)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [12, 35, 76])
def test_kingdom_on_a_blue_cutting_mat(seed):
    """Drawn kingdoms on a generated blue cutting mat with a printed grid: lakes and mat look
    alike pixel by pixel. With the per-pixel tile map alone these three scenes were read as
    5x5 with the worst corner 36 % of the side off, 5x6 and 7x7; the tile network's map is
    tried too and the surer grid count wins. The bound on the corner is below the old failure
    (36 %); the network trained with hard tables puts seed 12's worst corner at 12 % (5.5 %
    before; on 24 fresh mat scenes its median corner error fell, 1.6 % -> 1.4 %, see
    docs/tables.md), so the bound is 15 %."""
    from vision.lab.scenes import synth

    rng = np.random.default_rng(seed)
    b = synth.rendered_board(rng, size=5, cell=80)
    scene, corners = synth.make_scene(b["image"], rng, width=1600, board_mask=b["mask"],
                                      table="mat")
    found = locate(scene)
    assert (found.rows, found.cols) == (5, 5)
    err = corner_error(found.corners, np.float32(corners), any_first=True)
    assert err < 0.15


class _FlatNet:
    """Stands in for the tile network: a map of 0.9 everywhere."""

    def probability(self, small):
        return np.full(small.shape[:2], 0.9, np.float32)


@pytest.mark.parametrize("net_outline, pixel_outline, expected", [
    # the same grid in the same place: the per-pixel outline (sharper)
    (((0, 0), 5, 5, 0.99), ((4, 0), 5, 5, 0.50), "pixel"),
    # the same grid, corners a third of a side apart: the surer count
    (((0, 0), 5, 5, 0.99), ((170, 0), 5, 5, 0.50), "net"),
    (((0, 0), 5, 5, 0.40), ((170, 0), 5, 5, 0.90), "pixel"),
    # different grids: the surer count, ties to the network's
    (((0, 0), 5, 5, 0.80), ((0, 0), 5, 6, 0.95), "pixel"),
    (((0, 0), 5, 5, 0.80), ((0, 0), 5, 6, 0.80), "net"),
])
def test_which_of_the_two_outlines_is_kept(monkeypatch, net_outline, pixel_outline, expected):
    from vision import config
    from vision.find import detect

    cfg = config.load()
    cfg["detect"] = dict(cfg["detect"], tile_net="stub.onnx", tile_net_weight=1.0)
    monkeypatch.setattr(detect, "tile_net", lambda det: _FlatNet())
    square = np.float32([[100, 100], [600, 100], [600, 600], [100, 600]])

    def fake_outline(prob, *args):
        (dx, dy), rows, cols, conf = net_outline if prob.min() > 0.85 else pixel_outline
        return detect.Outline(square + np.float32([dx, dy]), rows, cols, conf)

    monkeypatch.setattr(detect, "outline_in_map", fake_outline)
    img = _scene(5, 5, [[300, 200], [800, 230], [780, 700], [280, 690]])
    found = detect.locate(img, cfg)
    chosen = net_outline if expected == "net" else pixel_outline
    assert (found.rows, found.cols, found.confidence) == chosen[1:]
    assert np.allclose(found.corners, square + np.float32(chosen[0]))


@pytest.mark.parametrize("main, blob, offered", [
    ((5, 7), (5, 5), True),      # a square kingdom's side pulled onto stripes: 5x5 offered
    ((6, 5), (7, 7), True),
    ((5, 5), (5, 5), False),     # the vanishing points' grid is a frame already
    ((4, 5), (5, 6), False),     # the blob's own is no frame (a half-built kingdom's)
    ((5, 7), (5, 6), False),
])
def test_the_blobs_own_quadrilateral_is_offered_only_as_a_frame(main, blob, offered):
    """vision.find.detect passes the blob's own quadrilateral (a grid the vanishing points moved)
    on to the reader only as a 5x5 or 7x7 frame where the outline's grid is none."""
    from vision.find.detect import blob_offered

    assert blob_offered(main, blob, (5, 7)) is offered


def test_zoom_box_grows_a_small_outline_within_the_photo_and_leaves_a_large_one():
    from vision.find.detect import zoom_box

    det = {"zoom_below": 0.4, "zoom_margin": 0.5}
    small = [[500, 300], [600, 300], [600, 380], [500, 380]]          # 100 px of 1200
    assert zoom_box(small, (900, 1200, 3), det) == (450, 250, 650, 430)
    corner = [[10, 20], [110, 20], [110, 100], [10, 100]]              # clipped at the edge
    assert zoom_box(corner, (900, 1200, 3), det) == (0, 0, 160, 150)
    large = [[100, 100], [700, 100], [700, 600], [100, 600]]          # 600 px: 0.5 of 1200
    assert zoom_box(large, (900, 1200, 3), det) is None
    assert zoom_box(small, (900, 1200, 3), dict(det, zoom_below=0.0)) is None
    speck = [[500, 300], [504, 300], [504, 304], [500, 304]]          # a crop under 16 px
    assert zoom_box(speck, (900, 1200, 3), det) is None


def test_a_crop_with_no_kingdom_in_it_adds_nothing():
    """The crop around a small first outline holds no kingdom (a speck of colour on a plain
    table): no grid comes from it, and no "no kingdom" error escapes from the crop."""
    from vision import config
    from vision.find.detect import Outline, _in_crop, _zoomed

    cfg = config.load()
    img = np.full((900, 1200, 3), 150, np.uint8)
    assert list(_in_crop(img, (400, 200, 700, 500), cfg, None)) == []
    outline = Outline(np.float32([[540, 330], [600, 330], [600, 390], [540, 390]]), 5, 5, 0.9)
    assert _zoomed(outline, img, cfg, None) is outline


def test_a_crop_is_never_taken_whole_as_a_board(monkeypatch):
    """A crop around a small outline holds table round the kingdom: one that reads as tiles
    to its borders (a lake-blue or yellow cloth) is no rectified board, while the whole
    photo that does is one."""
    from vision import config
    from vision.find import detect

    cfg = config.load()
    monkeypatch.setattr(detect, "is_rectified_board", lambda prob, det: True)
    img = np.full((900, 1200, 3), 150, np.uint8)
    assert list(detect._in_crop(img, (400, 200, 700, 500), cfg, None)) == []
    whole = next(detect.candidates(img, cfg))
    assert np.array_equal(whole.corners, np.float32([[0, 0], [1200, 0], [1200, 900], [0, 900]]))


def test_a_small_kingdom_is_found_again_in_a_crop_around_it():
    """A 5x5 board a twelfth of the photo wide, its first outline a third of a square off:
    the grid found in a crop around it comes with it as another grid of kind "zoom", its
    corners in the photo's px. Where the crop finds the outline's own grid, or with
    ``zoom_below`` 0, nothing is added (nothing more to read); an outline found right is not
    moved off the kingdom by it."""
    from vision import config
    from vision.find.detect import Outline, _zoomed, candidates

    cfg = config.load()
    corners = np.float32([[560, 400], [660, 405], [665, 500], [555, 495]])
    img = _scene(5, 5, corners)
    off = Outline(corners + np.float32([7, -6]), 5, 5, 0.9)
    got = _zoomed(off, img, cfg, None)
    assert got.corners is off.corners and (got.rows, got.cols, got.confidence) == (5, 5, 0.9)
    assert [(g.rows, g.cols, g.kind) for g in got.alternatives] == [(5, 5, "zoom")]
    assert corner_error(np.asarray(got.alternatives[0].corners), corners, any_first=True) < 0.05
    # the crop around the grid it found finds that grid again: nothing more to read
    again = Outline(np.asarray(got.alternatives[0].corners, np.float32), 5, 5, 0.9)
    assert _zoomed(again, img, cfg, None) is again
    # found right, the photo's first outline keeps its grid; a zoom grid beside it (OpenCV
    # 5.1 finds one 0.06 of a side away, 5.0 none) is the same kingdom framed as well
    first = next(candidates(img, cfg, alternatives=True))
    assert corner_error(first.corners, corners, any_first=True) < 0.05
    assert all(corner_error(np.asarray(g.corners), corners, any_first=True) < 0.05
               for g in first.alternatives)
    never = dict(cfg, detect=dict(cfg["detect"], zoom_below=0.0))
    assert _zoomed(off, img, never, None) is off


@pytest.mark.parametrize("image, said", [
    (np.zeros((300, 300), np.uint8), "8-bit colour"),             # grey, not BGR
    (np.zeros((300, 300, 3), np.float32), "8-bit colour"),        # not 8-bit
    (np.zeros((300, 300, 4), np.uint8), "8-bit colour"),          # BGRA
    (np.zeros((12, 300, 3), np.uint8), "too small"),
])
def test_single_and_table_finders_refuse_the_same_bad_images(image, said):
    """One check serves both finders (vision.find.detect.working_sizes): the one-kingdom finder and
    the whole-table finder refuse an image that is no colour photo with the same PhotoError."""
    from vision.find.detect import candidates
    from vision.find.whole_table import find_kingdoms

    with pytest.raises(PhotoError, match=said):
        next(candidates(image))
    with pytest.raises(PhotoError, match=said):
        find_kingdoms(image)


def test_working_sizes_scales_match_the_shrunk_images():
    """The photo's two working sizes come with scales that map them back to the photo."""
    from vision.find.detect import working_sizes

    image = np.zeros((1500, 2000, 3), np.uint8)
    mid, s_mid, small, s = working_sizes(image, 1000, 250)
    assert max(mid.shape[:2]) == pytest.approx(2000 * s_mid, abs=1)
    assert max(small.shape[:2]) == pytest.approx(2000 * s, abs=1)
    assert max(mid.shape[:2]) == pytest.approx(1000, abs=2)
    assert max(small.shape[:2]) == pytest.approx(250, abs=2)


def test_same_grid_is_one_count_and_corners_within_a_share_of_a_square():
    from vision.find.detect import same_grid

    a = np.float64([[0, 0], [500, 0], [500, 500], [0, 500]])      # 5x5, 100 px squares
    assert same_grid(a, 5, 5, a + [20, 0], 5, 5, 0.25)            # 0.2 of a square off
    assert not same_grid(a, 5, 5, a + [30, 0], 5, 5, 0.25)        # 0.3 of a square off
    assert not same_grid(a, 5, 5, a, 5, 4, 0.25)                  # another count
    assert not same_grid(a, 7, 7, a + [20, 0], 7, 7, 0.25)        # 7x7: squares of 71 px
