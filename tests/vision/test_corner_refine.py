"""Corner refinement (vision.find.corner_refine): the grid lines moved onto a drawn grid's seams,
and the same corners as the plain coordinate descent, bit for bit."""
import cv2
import numpy as np
import pytest

from vision import config
from vision.find.corner_refine import (_bilinear, descend, edge_map, grid_lines, refine_corners,
                                  refine_photo_outline)


def drawn_grid(n: int, corners: np.ndarray, size=(900, 700)):
    """A grey photo of an n x n board of flat squares (varied greys, dark seams) seen as
    ``corners``, and a tile map that is 1 on the board."""
    cell = 40
    rng = np.random.default_rng(n)
    board = np.kron(rng.integers(90, 200, (n, n)), np.ones((cell, cell))).astype(np.uint8)
    for k in range(n + 1):
        board[:, max(0, k * cell - 1):k * cell + 1] = 40
        board[max(0, k * cell - 1):k * cell + 1, :] = 40
    src = np.float32([[0, 0], [n * cell, 0], [n * cell, n * cell], [0, n * cell]])
    H = cv2.getPerspectiveTransform(src, corners.astype(np.float32))
    gray = cv2.warpPerspective(board, H, size, borderValue=150)
    prob = cv2.warpPerspective(np.ones((n * cell, n * cell), np.float32), H, size)
    return gray, prob


def _plain(edges, quad, rows, cols, det, tile_prob):
    """refine_corners' score written plainly: every trial scored on its own with _bilinear."""
    g = grid_lines(quad, rows, cols, tile_prob)

    def score(q):
        H = cv2.getPerspectiveTransform(g.src, q.astype(np.float32))
        p = cv2.perspectiveTransform(g.pts.reshape(-1, 1, 2), H).reshape(-1, 2)
        vals = np.abs(_bilinear(edges[0], p) * g.normal[:, 0]
                      + _bilinear(edges[1], p) * g.normal[:, 1]) * g.weights
        per_line = np.bincount(g.line_id, vals, len(g.wsum)) / g.wsum
        return float(per_line[g.keep].mean()) if g.keep.any() else 0.0

    return descend(score, quad, det, g.cell_px)     # the same descent: only the score differs


TRUE = np.float32([[180, 120], [700, 150], [760, 620], [120, 580]])


@pytest.mark.parametrize("n", [5, 7])
def test_corners_a_tenth_of_a_square_off_move_onto_the_seams(n):
    det = config.load()["detect"]
    gray, prob = drawn_grid(n, TRUE)
    cell = float(np.linalg.norm(TRUE[1] - TRUE[0])) / n
    start = TRUE + np.float32([[0.1, -0.08], [-0.09, 0.1], [0.1, 0.07], [-0.08, -0.1]]) * cell
    found = refine_corners(edge_map(gray), start, n, n, det, prob)
    assert np.abs(found - TRUE).max() < 0.5 * np.abs(start - TRUE).max()


@pytest.mark.parametrize("n, seed", [(5, 0), (5, 1), (7, 2), (9, 3)])
def test_the_same_corners_as_scoring_each_trial_plainly(n, seed):
    """refine_corners prepares what every trial's score needs once (speed): the corners it
    finds must be exactly those of the plain descent (9 x 9: more points than one map row)."""
    det = config.load()["detect"]
    gray, prob = drawn_grid(n, TRUE)
    edges = edge_map(gray)
    rng = np.random.default_rng(seed)
    start = (TRUE + rng.uniform(-12, 12, (4, 2))).astype(np.float64)
    assert refine_corners(edges, start, n, n, det, prob).tobytes() == \
        _plain(edges, start, n, n, det, prob).tobytes()


def test_an_outline_in_a_big_photo_moves_onto_the_seams_in_photo_pixels():
    """refine_photo_outline works on the photo shrunk to [detect] refine_long_side and gives
    the corners back in the photo's own pixels: a drawn board enlarged to 3x that size, its
    outline a tenth of a square off, comes back nearer the truth."""
    det = config.load()["detect"]
    k = 3 * det["refine_long_side"] / 900
    gray, _ = drawn_grid(5, TRUE)
    photo = cv2.cvtColor(cv2.resize(gray, None, fx=k, fy=k, interpolation=cv2.INTER_LINEAR),
                         cv2.COLOR_GRAY2BGR)
    true = TRUE * k
    cell = float(np.linalg.norm(true[1] - true[0])) / 5
    start = true + np.float32([[0.1, -0.08], [-0.09, 0.1], [0.1, 0.07], [-0.08, -0.1]]) * cell
    found = refine_photo_outline(photo, start, 5, 5, det)
    assert found.dtype == np.float32 and found.shape == (4, 2)
    assert np.abs(found - true).max() < 0.5 * np.abs(start - true).max()


@pytest.mark.parametrize("seed", range(8))
def test_the_edge_maps_percentile_is_numpys_own(seed):
    """edge_map's scale is np.percentile's 99th of the gradient's magnitude, taken from the
    values near that place only: the same number, ties, tiny and 2-D arrays too."""
    from vision.find.corner_refine import _percentile

    rng = np.random.default_rng(seed)
    for n in (1, 2, 7, 150, 1001, int(rng.integers(2000, 60000))):
        values = (rng.random(n) ** rng.uniform(0.3, 4) * 300).astype(np.float32)
        if seed % 2:
            values = np.round(values / 7) * 7            # many equal values
        for q in (99, 99.9, 95, 50, 100):
            want = np.percentile(values, q)
            got = _percentile(values, q)
            assert got == want and np.asarray(got).dtype == np.asarray(want).dtype
    image = (rng.random((90, 120)) * 255).astype(np.uint8)
    g = cv2.GaussianBlur(image, (0, 0), 1.2).astype(np.float32)
    gx, gy = cv2.Sobel(g, cv2.CV_32F, 1, 0, ksize=3), cv2.Sobel(g, cv2.CV_32F, 0, 1, ksize=3)
    norm = float(np.percentile(cv2.magnitude(gx, gy), 99)) + 1e-6
    ex, ey = edge_map(image)
    assert ex.tobytes() == (gx / norm).tobytes() and ey.tobytes() == (gy / norm).tobytes()
