"""vision.lab.scenes.render: terrain colours, crown glyphs, and kingdoms built only from the real dominoes."""
from __future__ import annotations

from collections import Counter

import cv2
import numpy as np
import pytest

from vision.lab.scenes import render

# OpenCV hue is 0..180. Ranges from the printed tiles: yellow fields, green forests/grassland,
# blue lakes, brownish swamps; mines dark, castles grey, neither saturated.
HUE_RANGES = {"field": (20, 35), "forest": (38, 85), "lake": (95, 125), "grassland": (35, 60),
              "swamp": (5, 30)}


def _hsv_means(terrain, seed, cell=96):
    img = render.render_board([[terrain]], [[0]], cell=cell, rng=np.random.default_rng(seed))
    inner = img[cell // 8: -cell // 8, cell // 8: -cell // 8]
    hsv = cv2.cvtColor(inner, cv2.COLOR_BGR2HSV).reshape(-1, 3).astype(float)
    return np.median(hsv, axis=0)


@pytest.mark.parametrize("terrain", sorted(HUE_RANGES))
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_terrain_hue(terrain, seed):
    h, s, v = _hsv_means(terrain, seed)
    lo, hi = HUE_RANGES[terrain]
    assert lo <= h <= hi, f"{terrain}: median hue {h}"
    assert s > 40, f"{terrain}: colourless (saturation {s})"


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_forest_darker_than_grassland_field_brightest(seed):
    v = {t: _hsv_means(t, seed)[2] for t in ("forest", "grassland", "field")}
    assert v["forest"] + 40 < v["grassland"] < v["field"] + 10


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_mine_dark_castle_pale_empty_is_table(seed):
    _, _, v_mine = _hsv_means("mine", seed)
    _, s_castle, v_castle = _hsv_means("castle", seed)
    assert v_mine < 90
    assert s_castle < 100 and v_castle > 100      # a start square in a king's pale tint
    table = (10, 200, 30)
    img, mask = render.render_board([["empty", "lake"]], [[0, 0]], cell=64, table=table,
                                    rng=np.random.default_rng(seed), return_mask=True)
    left = img[8:56, 8:56].reshape(-1, 3).mean(axis=0)
    assert np.abs(left - table).max() < 40
    assert mask[8:56, 8:56].max() == 0 and mask[8:56, 72:120].min() == 255


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_plain_start_square_is_sand_in_a_grass_band(seed):
    s = 96
    sq = render.draw_square("castle", 0, s, np.random.default_rng(seed), start="plain")
    hsv = cv2.cvtColor(sq, cv2.COLOR_BGR2HSV).astype(float)
    sand = np.median(hsv[s // 3: -s // 3, s // 3: -s // 3].reshape(-1, 3), axis=0)
    band = np.median(np.concatenate([hsv[:6].reshape(-1, 3), hsv[-6:].reshape(-1, 3)]), axis=0)
    assert 10 <= sand[0] <= 28 and sand[1] < band[1]        # sandy and paler than the band
    assert 25 <= band[0] <= 45                                # the yellow-green grass band
    printed = render.draw_square("castle", 0, s, np.random.default_rng(seed))
    assert not np.array_equal(sq, printed)
    with pytest.raises(ValueError, match="start square style"):
        render.draw_square("castle", 0, s, np.random.default_rng(seed), start="3d")


def _count_badges(square_bgr):
    """Count near-white rings of a crown outline's size (lakes and mines have no other white)."""
    s = square_bgr.shape[0]
    hsv = cv2.cvtColor(square_bgr, cv2.COLOR_BGR2HSV)
    white = ((hsv[..., 1] < 40) & (hsv[..., 2] > 215)).astype(np.uint8)
    n, _, stats, _ = cv2.connectedComponentsWithStats(white)
    areas = stats[1:, cv2.CC_STAT_AREA] / (s * s)
    return int(np.sum((areas > 0.007) & (areas < 0.09)))


@pytest.mark.parametrize("terrain", ["lake", "mine"])
@pytest.mark.parametrize("crowns", [0, 1, 2, 3])
def test_crowns_drawn_and_countable(terrain, crowns):
    for seed in range(3):
        rng = np.random.default_rng(seed)
        for turns in range(4):
            sq = render.draw_square(terrain, crowns, 120, rng, turns)
            assert sq.shape == (120, 120, 3)
            assert _count_badges(sq) == crowns, (terrain, crowns, seed, turns)


def test_crowns_turn_with_the_tile():
    """Upright, crowns sit along the top edge; one turn puts them on another edge."""
    for turns, side in ((0, "top"), (1, "left"), (2, "bottom"), (3, "right")):
        sq = render.draw_square("lake", 2, 120, np.random.default_rng(5), turns)
        hsv = cv2.cvtColor(sq, cv2.COLOR_BGR2HSV)
        white = (hsv[..., 1] < 40) & (hsv[..., 2] > 215)
        ys, xs = np.nonzero(white)
        centre = {"top": ys.mean() < 40, "bottom": ys.mean() > 80,
                  "left": xs.mean() < 40, "right": xs.mean() > 80}
        assert centre[side], (turns, ys.mean(), xs.mean())


def test_render_board_shape_and_errors():
    img = render.render_board([["field"] * 3, ["lake"] * 3], [[0] * 3, [1] * 3], cell=40, rng=1)
    assert img.shape == (80, 120, 3) and img.dtype == np.uint8
    with pytest.raises(ValueError, match="unknown terrain"):
        render.render_board([["desert"]], [[0]])
    with pytest.raises(ValueError, match="same shape"):
        render.render_board([["field", "lake"]], [[0]])


def test_render_is_deterministic_per_seed():
    t, c = render.random_kingdom(np.random.default_rng(3), 5)
    a = render.render_board(t, c, cell=48, rng=np.random.default_rng(9))
    b = render.render_board(t, c, cell=48, rng=np.random.default_rng(9))
    d = render.render_board(t, c, cell=48, rng=np.random.default_rng(10))
    assert np.array_equal(a, b) and not np.array_equal(a, d)


@pytest.mark.parametrize("size", [5, 7])
def test_random_layout_uses_only_real_dominoes(size):
    from engine.dominoes import dominoes

    real = {d[0]: d[1:] for d in dominoes()}
    assert len(real) == 48
    totals = Counter()
    for t_a, c_a, t_b, c_b in real.values():
        totals[(t_a, c_a)] += 1
        totals[(t_b, c_b)] += 1
    rng = np.random.default_rng(size)
    for _ in range(15):
        lay = render.random_layout(rng, size)
        terrain, crowns = lay["terrain"], lay["crowns"]
        assert len(terrain) == size and all(len(r) == size for r in terrain)
        nums = [d[2] for d in lay["dominoes"]]
        assert len(nums) == len(set(nums)), "a domino used twice"
        covered = Counter()
        for (ra, ca), (rb, cb), num in lay["dominoes"]:
            assert abs(ra - rb) + abs(ca - cb) == 1, "domino halves not adjacent"
            t_a, c_a, t_b, c_b = real[num]
            assert (terrain[ra][ca], crowns[ra][ca]) == (t_a, c_a)
            assert (terrain[rb][cb], crowns[rb][cb]) == (t_b, c_b)
            covered[(ra, ca)] += 1
            covered[(rb, cb)] += 1
        squares = Counter()
        for r in range(size):
            for c in range(size):
                t = terrain[r][c]
                if t in ("castle", "empty"):
                    assert crowns[r][c] == 0
                    assert covered[(r, c)] == 0
                else:
                    assert covered[(r, c)] == 1, "square not covered by exactly one domino"
                    squares[(t, crowns[r][c])] += 1
        assert sum(row.count("castle") for row in terrain) == 1
        assert all(squares[k] <= totals[k] for k in squares)
        # a finished-looking kingdom: most of the frame is filled
        assert sum(row.count("empty") for row in terrain) <= size * size // 2


def test_random_layout_follows_connection_rule():
    rng = np.random.default_rng(11)
    for _ in range(10):
        lay = render.random_layout(rng, 5)
        t = lay["terrain"]
        for (ra, ca), (rb, cb), _ in lay["dominoes"]:
            ok = False
            for (r, c) in ((ra, ca), (rb, cb)):
                for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1)):
                    rr, cc = r + dr, c + dc
                    if (rr, cc) in ((ra, ca), (rb, cb)) or not (0 <= rr < 5 and 0 <= cc < 5):
                        continue
                    ok |= t[rr][cc] in (t[r][c], "castle")
            assert ok, "domino touches neither its terrain nor the castle"


def test_kingdom_json_shape():
    t, c = render.random_kingdom(np.random.default_rng(1), 7)
    obj = render.kingdom_json(t, c)
    assert obj["size"] == 7 and obj["rules"] == "kingdomino"
    assert obj["cells"][3][4] == {"terrain": t[3][4], "crowns": c[3][4]}
    with pytest.raises(ValueError):
        render.kingdom_json([["field", "lake"]], [[0, 0]])


def test_castle_3d_stays_near_the_start_square():
    t = [["field"] * 5 for _ in range(5)]
    c = [[0] * 5 for _ in range(5)]
    t[2][2] = "castle"
    flat, m_flat = render.render_board(t, c, cell=60, rng=np.random.default_rng(4), return_mask=True)
    tall, m_tall = render.render_board(t, c, cell=60, rng=np.random.default_rng(4), return_mask=True,
                                       castle_3d=True)
    diff = np.abs(flat.astype(int) - tall.astype(int)).sum(axis=2) > 30
    ys, xs = np.nonzero(diff)
    assert len(ys) > 0.5 * 60 * 60, "no castle drawn"
    # everything that changed lies within the castle square grown by a quarter of a cell
    assert ys.min() >= 2 * 60 - 15 and ys.max() < 3 * 60 + 15
    assert xs.min() >= 2 * 60 - 15 and xs.max() < 3 * 60 + 15
    assert m_tall.sum() >= m_flat.sum()
