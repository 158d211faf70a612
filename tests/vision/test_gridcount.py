"""Grid counting (vision.find.gridcount): a drawn board's rows and columns, and the speed-ups that
must give the same numbers as the plain formulas, bit for bit."""
import cv2
import numpy as np
import pytest

from vision import config
from vision.find.gridcount import (COUNT_SIDE, channel_sum, count_cells, line_strengths,
                                   seam_strength, seams_refute)
from vision.find.lattice import edge_profiles


@pytest.mark.parametrize("shape", [(280, 280, 3), (97, 203, 3), (1, 5, 3)])
def test_channel_sum_is_numpys_sum_over_channels(shape):
    rng = np.random.default_rng(sum(shape))
    lab = cv2.cvtColor(rng.integers(0, 256, shape, dtype=np.uint8), cv2.COLOR_BGR2LAB)
    g = np.abs(cv2.Sobel(lab.astype(np.float32), cv2.CV_32F, 1, 0, ksize=3))
    assert channel_sum(g).tobytes() == g.sum(2).tobytes()


def test_line_strengths_with_the_median_given_are_the_same():
    prof = np.random.default_rng(3).gamma(2.0, 1.0, 280)
    for n in range(2, 8):
        assert line_strengths(prof, n, median=np.median(prof)).tobytes() == \
            line_strengths(prof, n).tobytes()


def test_lattice_edge_profiles_are_the_plain_sums():
    rng = np.random.default_rng(5)
    rect = cv2.GaussianBlur(rng.integers(0, 256, (150, 170, 3), dtype=np.uint8), (0, 0), 1.5)
    weight = (rng.random((150, 170)) > 0.3).astype(np.uint8)
    lab = cv2.GaussianBlur(cv2.cvtColor(rect, cv2.COLOR_BGR2LAB).astype(np.float32), (0, 0), 0.8)
    gx = np.abs(cv2.Sobel(lab, cv2.CV_32F, 1, 0, ksize=3)).sum(2)
    gy = np.abs(cv2.Sobel(lab, cv2.CV_32F, 0, 1, ksize=3)).sum(2)
    w = weight.astype(np.float32)
    want = ((gx * w).sum(0) / (w.sum(0) + 1e-3), w.mean(0), (gy * w).sum(1) / (w.sum(1) + 1e-3),
            w.mean(1))
    for got, exp in zip(edge_profiles(rect, weight), want):
        assert got.tobytes() == exp.tobytes()


@pytest.mark.parametrize("rows, cols", [(5, 5), (4, 6)])
def test_a_drawn_board_counts_its_squares(rows, cols):
    """Squares of varied colours with dark seams, rectified to the count size: the count is
    the board's, sure of it."""
    det = config.load()["detect"]
    side = COUNT_SIDE
    rng = np.random.default_rng(rows * 10 + cols)
    colours = rng.integers(60, 230, (rows, cols, 3)).astype(np.uint8)
    img = cv2.resize(colours, (side, side), interpolation=cv2.INTER_NEAREST)
    for k in range(1, cols):
        x = round(k * side / cols)
        img[:, x - 1:x + 1] = 20
    for k in range(1, rows):
        y = round(k * side / rows)
        img[y - 1:y + 1, :] = 20
    r, c, conf = count_cells(img, np.ones((side, side), bool), cols / rows, det)
    assert (r, c) == (rows, cols) and conf > 0.5


def _tiles(rows: int, cols: int, square: int = 70, seed: int = 3) -> np.ndarray:
    """``rows x cols`` squares of random colours filling the image: colour edges as seams."""
    rng = np.random.default_rng(seed)
    colours = rng.integers(0, 256, (rows, cols, 3)).astype(np.uint8)
    return np.repeat(np.repeat(colours, square, 0), square, 1)


def _whole(image):
    h, w = image.shape[:2]
    return np.float32([[0, 0], [w, 0], [w, h], [0, h]])


@pytest.mark.parametrize("rows, cols, n", [(4, 5, 5), (5, 4, 5), (5, 6, 5), (5, 7, 7)])
def test_the_seams_refute_a_cut_across_the_tiles(rows, cols, n):
    """An outline holding ``rows x cols`` tiles, counted so: cut n x n, the lines of the side
    whose count changes fall on tile art (a half-built 4x5 cut 5x5); with the veto 0, never."""
    image = _tiles(rows, cols)
    fcfg = dict(config.load()["frame"])
    assert seams_refute(image, _whole(image), rows, cols, n, fcfg)
    fcfg["recount_seam_veto"] = 0
    assert not seams_refute(image, _whole(image), rows, cols, n, fcfg)


@pytest.mark.parametrize("n, rows, cols", [(5, 4, 5), (5, 5, 3), (7, 5, 7), (5, 6, 5)])
def test_the_seams_uphold_a_miscounted_side(n, rows, cols):
    """An n x n kingdom's outline with a side miscounted: the n x n cut's lines are the seams."""
    image = _tiles(n, n)
    fcfg = config.load()["frame"]
    assert not seams_refute(image, _whole(image), rows, cols, n, fcfg)


def test_seam_strength_is_the_mean_log_strength_of_the_lines():
    profile = np.ones(100)
    profile[[25, 50, 75]] = np.e ** 2
    assert seam_strength(profile, 4) == pytest.approx(2.0, abs=1e-5)
    assert seam_strength(profile, 5) == pytest.approx(0.0, abs=1e-5)
    assert seam_strength(profile, 1) == 0.0
