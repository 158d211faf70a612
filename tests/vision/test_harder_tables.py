"""vision.lab.scenes.harder_tables: small, steep kingdoms on cloth with glare, a loose domino or a
neighbour's edge; reproducible, their truth on the pixels, and measured challenge by challenge
(on stubbed readers: no figure here depends on a model)."""
from __future__ import annotations

import cv2
import numpy as np
import pytest

from vision.lab.scenes import hard_tables as tables
from vision.lab.scenes import harder_tables as harder

W, H = 640, 480
COLOURS = {"lake": (200, 60, 20), "field": (30, 200, 230), "forest": (30, 90, 30)}


def _flat_board(n=5, cell=40):
    """A board whose squares are flat colours: forest everywhere, a lake at (0, 0), a field at
    (0, n-1), a castle in the middle (drawn grey)."""
    terrain = [["forest"] * n for _ in range(n)]
    terrain[0][0], terrain[0][n - 1], terrain[n // 2][n // 2] = "lake", "field", "castle"
    crowns = [[0] * n for _ in range(n)]
    img = np.zeros((n * cell, n * cell, 3), np.uint8)
    for r in range(n):
        for c in range(n):
            img[r * cell:(r + 1) * cell, c * cell:(c + 1) * cell] = COLOURS.get(terrain[r][c],
                                                                                (128, 128, 128))
    return {"image": img, "mask": np.full(img.shape[:2], 255, np.uint8), "terrain": terrain,
            "crowns": crowns}


def _square_colours(scene):
    """The mean colour of each true square, the photo rectified by the true corners."""
    n, cell = scene.size, 30
    to = np.float32([[0, 0], [n * cell, 0], [n * cell, n * cell], [0, n * cell]])
    flat = cv2.warpPerspective(scene.image, cv2.getPerspectiveTransform(scene.corners, to),
                               (n * cell, n * cell)).astype(float)
    return [[flat[r * cell + 8:(r + 1) * cell - 8, c * cell + 8:(c + 1) * cell - 8].mean((0, 1))
             for c in range(n)] for r in range(n)]


@pytest.mark.parametrize("seed", range(9800, 9806))
def test_a_small_steep_kingdom_with_its_truth_on_the_pixels(seed):
    scene = harder.make_harder_scene(seed, W, H, board=_flat_board(), challenge="steep")
    assert scene.image.shape == (H, W, 3) and scene.size == 5
    x, y = scene.corners[:, 0], scene.corners[:, 1]
    assert x.min() >= 0 and x.max() <= W and y.min() >= 0 and y.max() <= H
    width = (x.max() - x.min()) / W
    assert harder.WIDTH_FRACTION[0] - 0.01 <= width <= harder.WIDTH_FRACTION[1] + 0.01
    assert harder.SHRINK[0] - 0.01 <= harder.shrink_of(scene.corners) <= harder.SHRINK[1] + 0.01
    assert scene.table in harder.CLOTHS and scene.extra["challenge"] == "steep"
    # the truth, in the photo's orientation, is where the pixels say
    colours = _square_colours(scene)
    for r in range(5):
        for c in range(5):
            want = scene.terrain[r][c]
            got = min(COLOURS, key=lambda t: np.abs(colours[r][c] - COLOURS[t]).sum())
            if want in COLOURS:
                assert got == want, (seed, r, c)


def test_the_same_seed_gives_the_same_scene_and_another_seed_another():
    a, b = harder.make_harder_scene(9810, W, H), harder.make_harder_scene(9810, W, H)
    c = harder.make_harder_scene(9811, W, H)
    assert np.array_equal(a.image, b.image) and np.array_equal(a.corners, b.corners)
    assert (a.terrain, a.table, a.palette, a.extra) == (b.terrain, b.table, b.palette, b.extra)
    assert a.seed == 9810 and not np.array_equal(a.image, c.image)


def test_hard_table_seeds_give_the_scenes_they_gave_before():
    # harder scenes take none of the hard tables' random draws: seeds measured before still
    # give the same table, kingdom and clutter (these were drawn before harder_tables existed)
    a = tables.make_hard_scene(9000, 240, 180)
    assert (a.table, a.palette, a.size, a.clutter) == ("felt", "felt_green", 5,
                                                       ("draft_row", "meeples"))
    assert a.terrain[0] == ("forest", "field", "field", "grassland", "lake")
    assert np.abs(a.corners - [[91, 43], [170, 7], [218, 79], [134, 127]]).max() < 1
    b = tables.make_hard_scene(9601, 240, 180)
    assert (b.table, b.palette, b.size, b.clutter) == ("wood", "wood_yellow", 7, ("dominoes", "tiles"))


def _off_kingdom(scene, pts):
    """Whether every point lies outside the kingdom's outline."""
    quad = scene.corners.reshape(-1, 1, 2).astype(np.float32)
    return all(cv2.pointPolygonTest(quad, (float(x), float(y)), False) < 0 for x, y in pts)


@pytest.mark.parametrize("seed", range(9820, 9826))
def test_a_loose_domino_lies_about_a_square_off_the_kingdom(seed):
    board = _flat_board()
    plain = harder.make_harder_scene(seed, W, H, board=board, challenge="steep", cloth="felt")
    scene = harder.make_harder_scene(seed, W, H, board=board, challenge="loose", cloth="felt")
    loose = scene.extra["loose"]
    assert 0.5 <= loose["gap_squares"] <= 1.5 and len(loose["squares"]) == 2
    pts = np.asarray(loose["corners"])
    assert _off_kingdom(scene, pts)
    side = np.mean(np.linalg.norm(scene.corners - np.roll(scene.corners, -1, 0), axis=1)) / 5
    centre = scene.corners.mean(0)
    assert np.linalg.norm(pts.mean(0) - centre) < 8 * side          # beside it, not far away
    assert scene.clutter == ("loose",) and plain.clutter == ()


def test_a_neighbours_edge_and_a_lamps_glare_are_drawn_where_said():
    scene = harder.make_harder_scene(9830, W, H, board=_flat_board(), challenge="neighbour")
    nb = scene.extra["neighbour"]
    assert nb["rows"] in (1, 2) and 1.0 <= nb["gap_squares"] <= 2.0
    lit = harder.make_harder_scene(9831, W, H, board=_flat_board(), challenge="glare",
                                   cloth="felt")
    dark = harder.make_harder_scene(9831, W, H, board=_flat_board(), challenge="steep",
                                    cloth="felt")
    x, y = (int(round(v)) for v in lit.extra["glare"]["at"])
    quad = lit.corners.reshape(-1, 1, 2).astype(np.float32)
    assert cv2.pointPolygonTest(quad, (float(x), float(y)), False) >= 0   # on the kingdom
    # the same scene but the glare (drawn last of the random parts) is brighter there
    assert lit.image[y, x].astype(int).sum() > dark.image[y, x].astype(int).sum() + 60
    both = harder.make_harder_scene(9832, W, H, challenge="all")
    assert "loose" in both.extra and "glare" in both.extra


def test_challenges_named_on_a_command_line():
    assert harder.parse_challenges(None) == harder.CHALLENGES
    assert harder.parse_challenges(" loose, glare,loose") == ("loose", "glare")
    with pytest.raises(ValueError, match="unknown challenge velvet"):
        harder.parse_challenges("velvet")
    with pytest.raises(ValueError, match="challenge must be one of"):
        harder.make_harder_scene(1, W, H, challenge="velvet")


@pytest.mark.parametrize("make", [tables.make_hard_scene, harder.make_harder_scene])
def test_a_photo_too_small_for_a_kingdom_is_refused_by_both_generators(make):
    with pytest.raises(ValueError, match="at least 120 pixels on each side, got 119 x 3000"):
        make(1, 119, 3000)
    assert make(3, 800, 600).seed == 3      # an int rng is the scene's seed


class _Truth:
    """Reads each harder scene (the flat 5x5 board) as its truth, except in the loose-domino
    scenes: there a 6x6 window, the row and column beyond the kingdom read as tiles (flagged in the
    first of them)."""

    def __init__(self, first, challenges):
        self.seed, self.challenges, self.i = first, challenges, 0

    def read(self, image):
        scene = harder.make_harder_scene(self.seed, 320, 240, board=_flat_board(),
                                         challenge=self.challenges[self.i % len(self.challenges)])
        # in step with the measure, which reads each scene as a phone's JPEG
        assert image.shape == scene.image.shape
        assert np.abs(image.astype(np.int16) - scene.image).mean() < 6
        n = scene.size
        cells = [[{"terrain": t, "crowns": int(k)} for t, k in zip(tr, kr)]
                 for tr, kr in zip(scene.terrain, scene.crowns)]
        corners, review = scene.corners.astype(float), []
        if scene.extra["challenge"] == "loose":     # a row and a column more, read as tiles
            unit = np.float32([[0, 0], [n, 0], [n, n], [0, n]])
            grid = cv2.getPerspectiveTransform(unit, scene.corners.astype(np.float32))
            corners = cv2.perspectiveTransform((unit * (n + 1) / n)[None], grid)[0].astype(float)
            for row in cells:
                row.append({"terrain": "forest", "crowns": 0})
            cells.append([{"terrain": "forest", "crowns": 0} for _ in range(n + 1)])
            n += 1
            review = [[r, c] for r in range(n) for c in range(n) if self.i < 2 and n - 1 in (r, c)]
        self.seed, self.i = self.seed + 1, self.i + 1
        return {"size": n, "rows": n, "cols": n, "corners": corners.tolist(), "cells": cells,
                "review": review}


def test_harder_scenes_are_counted_challenge_by_challenge():
    from vision.lab.evaluation.evaluate import format_hard_tables, hard_tables

    chosen = ("steep", "loose")
    h = hard_tables(4, 320, 240, 9800, reader=_Truth(9800, chosen), log=lambda m: None,
                    challenges=chosen, boards=[_flat_board()])
    assert [r["challenge"] for r in h["scenes"]] == ["steep", "loose", "steep", "loose"]
    c = h["summary"]["challenges"]
    assert (c["steep"]["n"], c["steep"]["grid_right"], c["steep"]["total_exact"]) == (2, 2, 2)
    sizes = {r["seed"]: r["size"] for r in h["scenes"]}
    off = {seed: 2 * sizes[seed] + 1 for seed in (9801, 9803)}   # the row and column beyond it
    assert (c["loose"]["grid_right"], c["loose"]["off_as_tile"]) == (0, off[9801] + off[9803])
    assert c["loose"]["off_as_tile_flagged"] == off[9801]   # 9801's flagged, 9803's not
    text = format_hard_tables(h)
    assert text.startswith("== harder tables, AAU dev boards: 4 generated scenes (seeds 9800-9803")
    assert "challenges steep, loose" in text.splitlines()[0]
    loose = next(x for x in text.splitlines() if x.split()[:1] == ["loose"])
    assert loose.split()[1:4] == ["2", "2", "0"]
    assert f"{off[9801] + off[9803]} ({off[9801]:>4})" in loose


def test_evaluate_reads_harder_scenes_with_the_shipped_models(tmp_path, monkeypatch, capsys):
    import json

    import vision.lab.training.squares as train
    from kingdomino.cli import main

    monkeypatch.setattr(train, "dev_photos", lambda datasets=None: [])   # the scenes alone
    out = tmp_path / "figures.json"
    assert main(["evaluate", "--quick", "--hard-tables", "0", "--table-photos", "0",
                 "--harder", "2", "--harder-challenges", "glare,loose", "--harder-seed", "9800",
                 "--hard-size", "400x300", "--per-photo", "harder", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "== harder tables: 2 generated scenes (seeds 9800-9801, 400x300; challenges glare, loose)" in text
    saved = json.loads(out.read_text())["harder"]
    assert [r["challenge"] for r in saved["scenes"]] == ["glare", "loose"]
    assert set(saved["summary"]["challenges"]) == {"glare", "loose"}
    for r in saved["scenes"]:
        assert f"  {r['seed']}  {r['size']}x{r['size']}  {r['table']}" in text


@pytest.mark.parametrize("argv, message", [
    (["--harder", "1", "--harder-seed", "9000"], "harder scenes' seeds start at 9800"),
    (["--harder", "1", "--harder-challenges", "velvet"], "--harder-challenges: unknown challenge"),
    (["--harder=-1"], "--harder and --harder-boards must be 0"),
])
def test_bad_harder_options_say_what_to_do(run_cli, argv, message):
    code, _, err = run_cli("evaluate", "--quick", "--hard-tables", "0", *argv)
    assert code == 2
    assert message in err and "Traceback" not in err
