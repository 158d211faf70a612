"""The seams' lattice (vision.find.lattice): pitch and phase from edge profiles, the tile box, and a
drawn kingdom whose outline took in a band of table."""
import cv2
import numpy as np
import pytest

from vision import config
from vision.find.lattice import fit_lattice, fit_pitch, tile_box


def comb(length: int, pitch: float, phase: float, width: float = 1.0, base: float = 1.0):
    x = np.arange(length, dtype=np.float64)
    d = np.mod(x - phase, pitch)
    d = np.minimum(d, pitch - d)
    return base + 10.0 * np.exp(-0.5 * (d / width) ** 2)


PITCHES = np.exp(np.linspace(np.log(5), np.log(40), 200))


def test_pitch_and_phase_of_a_comb():
    prof = comb(200, 17.0, 5.0)
    p, phase, score = fit_pitch(prof, np.ones(200), PITCHES, border=8)
    assert p == pytest.approx(17.0, rel=0.03)
    assert min(abs(phase - 5.0), abs(phase - 5.0 - p)) <= 1.0
    assert score > 2


def test_half_and_double_pitch_lose():
    """Every other line of the true comb is a seam of a comb twice as coarse, and a comb half
    as fine has all of them: neither may win."""
    prof = comb(300, 20.0, 3.0)
    for lo, hi in ((8.0, 12.0), (35.0, 45.0)):
        only = np.exp(np.linspace(np.log(lo), np.log(hi), 40))
        worse = fit_pitch(prof, np.ones(300), only, border=8)[2]
        best = fit_pitch(prof, np.ones(300), PITCHES, border=8)
        assert best[0] == pytest.approx(20.0, rel=0.03)
        assert worse < best[2]


def test_the_kingdoms_border_is_not_a_seam():
    """Strong edges only at the two ends (the kingdom's border against the table) and weak
    uneven ones inside: the border must not make a lattice of its own."""
    prof = np.ones(200)
    prof[20], prof[180] = 50.0, 50.0
    cover = np.zeros(200)
    cover[18:183] = 1.0
    found = fit_pitch(prof, cover, PITCHES, border=10)
    assert found is None or found[2] < 1.5


def test_tile_box_keeps_holes_and_cuts_to_max_cells():
    cover = np.zeros((9, 9))
    cover[2:7, 2:7] = 0.9
    cover[4, 4] = 0.0          # a hole inside
    cover[6, 2] = 0.0          # a notch at a corner
    assert tile_box(cover, 0.5, 7) == (2, 2, 5, 5)
    wide = np.zeros((3, 10))
    wide[1, :] = 0.9
    wide[1, 9] = 0.6
    r0, c0, rows, cols = tile_box(wide, 0.5, 7)
    assert (rows, cols) == (1, 7) and c0 == 0
    assert tile_box(np.zeros((4, 4)), 0.5, 7) is None


def drawn_kingdom(n=5, cell=30, table_band=0.0, seed=3):
    """A kingdom of n x n squares (random colours, dark seams) on a table of a tile's colour;
    the tile map covers it and a band of ``table_band`` squares of table around it. Returns
    image, tile map, true corners."""
    rng = np.random.default_rng(seed)
    off = 3 * cell
    size = n * cell + 2 * off
    img = np.full((size, size, 3), (40, 170, 200), np.uint8)        # yellow "wood"
    img = cv2.add(img, rng.integers(0, 25, img.shape, dtype=np.uint8))
    for r in range(n):
        for c in range(n):
            colour = tuple(int(v) for v in rng.integers(30, 230, 3))
            y0, x0 = off + r * cell, off + c * cell
            cv2.rectangle(img, (x0, y0), (x0 + cell - 1, y0 + cell - 1), colour, -1)
            cv2.rectangle(img, (x0, y0), (x0 + cell - 1, y0 + cell - 1), (20, 20, 20), 1)
    tiles = np.zeros((size, size), np.float32)
    b = int(round(table_band * cell))
    tiles[off - b:off + n * cell + b, off - b:off + n * cell + b] = 1.0
    corners = np.float32([[off, off], [off + n * cell, off], [off + n * cell, off + n * cell],
                          [off, off + n * cell]])
    return img, tiles, corners


@pytest.mark.parametrize("n", [5, 7])
def test_an_outline_grown_onto_the_table_is_cut_back_to_the_kingdom(n):
    """The blob took in most of a square of table on every side (a tile-coloured table) and
    the outline was counted 7x7: the seams give the squares' true size and the tile map the
    kingdom's extent."""
    cell = 30
    img, tiles, truth = drawn_kingdom(n, cell)
    grown = truth + np.float32([[-1, -1], [1, -1], [1, 1], [-1, 1]]) * cell * 0.9
    lat = config.load()["lattice"]
    found = fit_lattice(img, tiles, grown, 7, 7, lat)
    assert found is not None
    assert (found.rows, found.cols) == (n, n)
    assert np.abs(found.corners - truth).max() < 0.15 * cell


def test_a_band_of_table_the_tile_map_takes_for_tiles_stays_within_the_outline():
    """The lattice may cut an outline down, never grow it beyond: tile evidence outside the
    outline (a loose domino, the next kingdom) does not join the kingdom."""
    cell = 30
    img, tiles, truth = drawn_kingdom(5, cell, table_band=1.0)
    found = fit_lattice(img, tiles, truth, 5, 5, config.load()["lattice"])
    assert (found.rows, found.cols) == (5, 5)
    assert np.abs(found.corners - truth).max() < 0.15 * cell


def test_a_table_without_seams_gives_no_lattice():
    rng = np.random.default_rng(0)
    img = rng.integers(0, 255, (240, 240, 3), dtype=np.uint8)
    img = cv2.GaussianBlur(img, (0, 0), 3)
    tiles = np.ones((240, 240), np.float32)
    quad = np.float32([[40, 40], [200, 40], [200, 200], [40, 200]])
    assert fit_lattice(img, tiles, quad, 5, 5, config.load()["lattice"]) is None


def _one_pitch_at_a_time(profile, cover, pitches, phase_step, min_cover, border, near):
    """fit_pitch's measure, written plainly: every pitch scored on its own, then the finer
    search around the best (the reference the grouped search must match bit for bit)."""
    live = np.nonzero(cover >= min_cover * max(float(cover.max()), 1e-6))[0]
    a, b = live[0] + border, live[-1] - border
    xs = np.arange(int(np.ceil(a)), int(np.floor(b)) + 1, dtype=np.float64)
    vals = profile[xs.astype(int)]
    excess = np.maximum(vals - np.median(vals), 0.0)
    total = float(excess.sum())

    def at(x):
        i = np.clip(np.floor(x).astype(int), 0, len(profile) - 2)
        f = np.clip(x - i, 0.0, 1.0)
        return profile[i] * (1 - f) + profile[i + 1] * f

    def search(ps, phases_of):
        best = None
        for p in ps:
            phases = phases_of(p)
            d = np.mod(xs[None, :] - phases[:, None], p)
            d = np.minimum(d, p - d)
            share = (excess[None, :] * (d < near * p)).sum(1) / total
            k = np.arange(int(np.floor(a / p)) - 1, int(np.ceil(b / p)) + 2)
            lines = phases[:, None] + p * k[None, :]
            inside = (lines >= a) & (lines <= b)
            mids = lines + 0.5 * p
            mid_in = (mids >= a) & (mids <= b)
            on = (at(lines) * inside).sum(1) / np.maximum(inside.sum(1), 1)
            off = (at(mids) * mid_in).sum(1) / np.maximum(mid_in.sum(1), 1)
            score = np.where((inside.sum(1) >= 1) & (mid_in.sum(1) >= 1),
                             share * on / (off + 1e-6), 0.0)
            i = int(np.argmax(score))
            if score[i] > 0 and (best is None or score[i] > best[2]):
                best = (float(p), float(phases[i]), float(score[i]))
        return best

    best = search(pitches, lambda p: np.arange(0.0, p, phase_step))
    ratio = float(np.exp(np.mean(np.diff(np.log(pitches)))))
    fine = best[0] * ratio ** np.linspace(-1.0, 1.0, 9)
    finer = search(fine, lambda p: np.mod(best[1] + np.arange(-phase_step, phase_step + 1e-9,
                                                              phase_step / 4), p))
    return max((best, finer or best), key=lambda f: f[2])


@pytest.mark.parametrize("seed", range(6))
def test_the_pitch_search_gives_what_one_pitch_at_a_time_gives(seed):
    """fit_pitch scores all combs of a pitch count together (speed): the pitch, phase and
    score must be exactly those of scoring each pitch on its own."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(120, 260))
    prof = comb(n, float(rng.uniform(14, 34)), float(rng.uniform(0, 14)), base=0.5) \
        + rng.gamma(1.0, 1.5, n)
    cover = np.clip(rng.uniform(0.2, 1.2, n) * (np.arange(n) > rng.integers(5, 30)), 0, 1)
    pitches = 24.0 * np.exp(np.linspace(np.log(0.6), np.log(1.6), int(rng.integers(20, 61))))
    fit = dict(phase_step=float(rng.choice([0.5, 0.75, 1.0])), min_cover=0.3,
               border=float(rng.uniform(0, 15)), near=0.15)
    assert fit_pitch(prof, cover, pitches, **fit) == _one_pitch_at_a_time(prof, cover, pitches,
                                                                          **fit)


@pytest.mark.parametrize("border", [-8.0, -3.0, 0.0])
def test_the_pitch_search_from_a_negative_start_is_unchanged(border):
    """A negative border starts the interior before x = 0 (then np.mod itself wraps)."""
    rng = np.random.default_rng(1)
    prof = comb(200, 19.0, 4.0) + rng.gamma(1.0, 1.0, 200)
    cover = np.ones(200)
    cover[:5], cover[-10:] = 0.0, 0.0
    pitches = 24.0 * np.exp(np.linspace(np.log(0.6), np.log(1.6), 40))
    fit = dict(phase_step=0.75, min_cover=0.3, border=border, near=0.15)
    assert fit_pitch(prof, cover, pitches, **fit) == _one_pitch_at_a_time(prof, cover, pitches,
                                                                          **fit)


@pytest.mark.parametrize("near", [0.1, 0.2, 0.25])
def test_edge_exactly_at_the_tolerance_counts_as_one_pitch_at_a_time_counts_it(near):
    """Whole-pixel pitches and phases put many edges exactly ``near`` of a pitch from a line,
    where the quick distance to the nearest line (rounded) cannot tell near from far: those
    are measured exactly, as scoring each pitch on its own does."""
    rng = np.random.default_rng(7)
    prof = comb(160, 10.0, 3.0, base=0.5) + rng.gamma(1.0, 1.0, 160)
    cover = np.ones(160)
    pitches = np.array([8.0, 9.0, 10.0, 11.0, 12.0, 16.0, 20.0])
    fit = dict(phase_step=1.0, min_cover=0.3, border=4.0, near=near)
    assert fit_pitch(prof, cover, pitches, **fit) == _one_pitch_at_a_time(prof, cover, pitches,
                                                                          **fit)


@pytest.mark.parametrize("seed", range(4))
def test_every_distance_measured_exactly_gives_the_same_fit(seed, monkeypatch):
    """The exact measure the quick one leaves the edges near the tolerance to, asked for
    every edge, gives the same pitch, phase and score."""
    from vision.find import lattice

    rng = np.random.default_rng(seed)
    n = int(rng.integers(120, 260))
    prof = comb(n, float(rng.uniform(14, 34)), float(rng.uniform(0, 14))) + rng.gamma(1.0, 1.5, n)
    cover = np.ones(n)
    cover[:8], cover[-8:] = 0.0, 0.0
    pitches = 24.0 * np.exp(np.linspace(np.log(0.6), np.log(1.6), 40))
    fit = dict(phase_step=0.75, min_cover=0.3, border=float(rng.uniform(-6, 12)), near=0.15)
    quick = fit_pitch(prof, cover, pitches, **fit)
    monkeypatch.setattr(lattice, "_RECHECK", 1.0)
    assert fit_pitch(prof, cover, pitches, **fit) == quick


def test_cell_cover_is_each_cells_central_mean():
    """cell_cover bounds each cell's central part in whole px once per row and column: each
    value is the mean of the tile map over that part (numpy's own), 0 for a part off the map."""
    from vision.find.lattice import cell_cover

    rng = np.random.default_rng(3)
    tiles = rng.random((90, 120)).astype(np.float32)
    xs, ys = np.array([-40.0, -3.5, 20.25, 47.0, 80.8, 125.0]), np.array([-2.0, 30.4, 61.0, 95.5])
    got = cell_cover(tiles, xs, ys, 0.5)
    for r in range(len(ys) - 1):
        for c in range(len(xs) - 1):
            x0, x1 = xs[c] + 0.25 * (xs[c + 1] - xs[c]), xs[c + 1] - 0.25 * (xs[c + 1] - xs[c])
            y0, y1 = ys[r] + 0.25 * (ys[r + 1] - ys[r]), ys[r + 1] - 0.25 * (ys[r + 1] - ys[r])
            i0, i1 = int(max(0, np.floor(y0))), int(min(90, np.ceil(y1)))
            j0, j1 = int(max(0, np.floor(x0))), int(min(120, np.ceil(x1)))
            want = float(tiles[i0:i1, j0:j1].mean()) if i1 > i0 and j1 > j0 else 0.0
            assert got[r, c] == want
