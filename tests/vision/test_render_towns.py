"""vision.lab.scenes.render's Queendomino towns (issue 53): drawn only when asked for, in the
photos' colour, with buildings only on towns; and the Kingdomino scenes each seed drew before."""
from __future__ import annotations

import cv2
import numpy as np
import pytest

from vision.lab.scenes import render

# Each square's mean green (BGR channel 1) of render_board(random_layout(seed), cell=40, seed)
# as drawn before towns were added: a grid without towns must still draw exactly this (any
# extra draw from the rng before or between the squares moves every colour after it)
BEFORE = {
    3: [[147.1, 144.5, 191.7, 183.9, 84.4], [142.3, 156.7, 103.0, 172.5, 104.6],
        [158.6, 82.0, 80.4, 175.7, 91.6], [174.5, 195.7, 106.3, 107.7, 109.9],
        [100.9, 198.2, 197.5, 92.1, 80.3]],
    11: [[82.2, 70.2, 70.8, 107.1, 160.9], [75.2, 73.5, 113.4, 105.6, 190.9],
         [114.2, 173.0, 155.8, 88.5, 177.0], [94.8, 179.1, 144.7, 112.2, 105.2],
         [97.4, 83.3, 108.8, 107.5, 86.6]],
}
CASTLE = {3: (1, 1), 11: (2, 2)}


@pytest.mark.parametrize("seed", sorted(BEFORE))
def test_a_kingdomino_seed_draws_the_scene_it_drew_before(seed):
    lay = render.random_layout(np.random.default_rng(seed))
    assert lay["castle"] == CASTLE[seed]
    assert not any(t == "town" for row in lay["terrain"] for t in row)
    img = render.render_board(lay["terrain"], lay["crowns"], 40, np.random.default_rng(seed),
                              dominoes=lay["dominoes"])
    green = img.reshape(5, 40, 5, 40, 3).mean(axis=(1, 3))[..., 1]
    assert np.abs(green - np.array(BEFORE[seed])).max() < 0.6


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_a_town_is_brick_red_as_in_the_photos_and_no_swamp(seed):
    def median_hsv(terrain):
        sq = render.draw_square(terrain, 0, 96, np.random.default_rng(seed))
        return np.median(cv2.cvtColor(sq, cv2.COLOR_BGR2HSV).reshape(-1, 3), axis=0)

    h, s, v = median_hsv("town")
    assert 3 <= h <= 10 and s > 110 and v > 150     # photos: hue 5-7, saturation 120-150
    assert median_hsv("swamp")[0] > h + 5           # the swamp's brown is yellower


def test_towns_and_buildings_are_checked():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="no printed crowns"):
        render.draw_square("town", 1, 64, rng)
    with pytest.raises(ValueError, match="not on lake"):
        render.draw_square("lake", 0, 64, rng, building=1)
    with pytest.raises(ValueError, match=r"\(0, 1\) is not one"):
        render.render_board([["town", "lake"]], [[0, 0]], 32, rng, buildings={(0, 1): 0})


def test_a_building_changes_only_its_town_square():
    grid, crowns = [["town", "lake"]], [[0, 1]]
    bare = render.render_board(grid, crowns, 64, np.random.default_rng(4), max_turn=0)
    built = render.render_board(grid, crowns, 64, np.random.default_rng(4), max_turn=0,
                                buildings={(0, 0): 1})
    assert np.abs(built[:, :64].astype(int) - bare[:, :64]).mean() > 10
    assert built.shape == bare.shape


@pytest.mark.parametrize("seed", [5, 6])
def test_a_queendomino_layout_is_that_seeds_kingdom_with_some_halves_made_towns(seed):
    plain = render.random_layout(np.random.default_rng(seed))
    lay = render.queendomino_layout(np.random.default_rng(seed), towns=3)
    towns = {(r, c) for r, row in enumerate(lay["terrain"]) for c, t in enumerate(row)
             if t == "town"}
    assert len(towns) == 3
    for r, row in enumerate(lay["terrain"]):
        for c, t in enumerate(row):
            if (r, c) in towns:
                assert lay["crowns"][r][c] == 0
            else:
                assert (t, lay["crowns"][r][c]) == (plain["terrain"][r][c], plain["crowns"][r][c])
    halves = [{tuple(a), tuple(b)} for a, b, _ in lay["dominoes"]]
    assert all(sum(t in h for t in towns) <= 1 for h in halves)   # one town half a domino
    assert set(lay["buildings"]) <= towns
    render.render_board(lay["terrain"], lay["crowns"], 32, seed, dominoes=lay["dominoes"],
                        buildings=lay["buildings"])                # it draws


def test_town_crops_are_cut_as_the_reader_cuts_a_square():
    from vision import config

    ccfg = config.load()["classify"]
    side = ccfg["cell"] + 2 * ccfg["crop_margin"]
    crops, built = render.town_crops(np.random.default_rng(8), 6)
    assert crops.shape == (6, side, side, 3) and crops.dtype == np.uint8
    assert built.shape == (6,) and built.dtype == bool
    again, _ = render.town_crops(np.random.default_rng(8), 6)
    assert np.array_equal(crops, again)
    m = side // 4
    centre = crops[:, m:-m, m:-m].reshape(-1, 3).astype(float)
    b, g, r = np.median(centre, axis=0)
    assert r > g + 40 and r > b + 60                # red ground in the middle of every cut
