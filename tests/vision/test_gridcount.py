"""Grid counting (vision.gridcount): a drawn board's rows and columns, and the speed-ups that
must give the same numbers as the plain formulas, bit for bit."""
import cv2
import numpy as np
import pytest

from vision import config
from vision.gridcount import channel_sum, count_cells, line_strengths
from vision.lattice import edge_profiles


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
    side = int(det["count_side"])
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
