"""vision.lab.scenes.hard_tables: hard tables are reproducible, their truth matches the pixels, every kind is
drawn, and the frame-quality figures add up (on stubbed readers, so they do not depend on a model)."""
from __future__ import annotations

import json

import cv2
import numpy as np
import pytest

from vision.lab.evaluation.evaluate import score
from vision.lab.scenes import hard_tables as tables

W, H = 480, 360


def _scene(seed, **kw):
    kw.setdefault("scale", 0.6)
    return tables.make_hard_scene(seed, W, H, **kw)


# --------------------------------------------------------------------------- generator

def test_loose_tiles_keep_off_the_cleared_ring():
    # make_hard_scene(tiles_clear=) keeps a ring of squares around the kingdom bare of tiles
    # nothing else kept clear: the loose dominoes and tiles may go anywhere but the cleared block
    h, w = 480, 640
    keep_small = np.zeros((h // 8, w // 8), np.uint8)
    keep_tiles = keep_small.copy()
    keep_tiles[20:40, 25:55] = 255
    for seed in range(6):
        img = np.full((h, w, 3), 128, np.uint8)
        rng = np.random.default_rng(seed)
        placed = tables.add_clutter(img, keep_small, 40.0, rng, ["tiles", "dominoes", "draft_row"],
                                    keep_tiles=keep_tiles)
        assert placed
        block = img[20 * 8:40 * 8, 25 * 8:55 * 8].astype(int)
        assert np.abs(block - 128).max() <= 2, (seed, placed)


def test_same_seed_same_photo_and_truth():
    a, b, c = _scene(11), _scene(11), _scene(12)
    assert np.array_equal(a.image, b.image)
    assert np.array_equal(a.corners, b.corners)
    assert (a.terrain, a.crowns, a.table, a.palette, a.clutter) == (b.terrain, b.crowns, b.table,
                                                                    b.palette, b.clutter)
    assert a.seed == 11
    assert not np.array_equal(a.image, c.image)


@pytest.mark.parametrize("seed", [3, 4, 5, 6])
def test_corners_inside_photo_and_on_the_drawn_kingdom(seed):
    """Rectify the photo by the true corners: lake squares are blue and field squares yellow
    where the truth (in the photo's orientation) says, and just outside the outline is red table."""
    s = _scene(seed, table="plain", palette="red", clutter=False, lighting=False,
               rotation=float(np.random.default_rng(seed).uniform(0, 360)))
    assert s.image.shape == (H, W, 3)
    assert np.all(s.corners >= 0) and np.all(s.corners[:, 0] <= W) and np.all(s.corners[:, 1] <= H)
    assert s.size in (5, 7) and len(s.terrain) == s.size and all(len(r) == s.size for r in s.terrain)
    cell = 20
    n = s.size
    dst = np.float32([[0, 0], [n * cell, 0], [n * cell, n * cell], [0, n * cell]])
    board = cv2.warpPerspective(s.image, cv2.getPerspectiveTransform(s.corners, dst), (n * cell, n * cell))
    checked = 0
    castle = next((r, c) for r in range(n) for c in range(n) if s.terrain[r][c] == "castle")
    for r in range(n):
        for c in range(n):
            if s.crowns[r][c] or max(abs(r - castle[0]), abs(c - castle[1])) <= 1:
                continue  # buildings and the leaning 3D castle change a square's colour
            b, g, red = board[r * cell + 4:(r + 1) * cell - 4, c * cell + 4:(c + 1) * cell - 4] \
                .reshape(-1, 3).mean(0)
            if s.terrain[r][c] == "lake":
                assert b > red + 20, (r, c, s.terrain[r][c], (b, g, red))
                checked += 1
            elif s.terrain[r][c] == "field":
                assert red > b + 40, (r, c, s.terrain[r][c], (b, g, red))
                checked += 1
    assert checked >= 3
    # a ring just outside the outline is the red table (not tiles)
    centre = s.corners.mean(0)
    ring = centre + (s.corners - centre) * 1.12
    outside = [s.image[int(y), int(x)].astype(int) for x, y in ring if 0 <= x < W and 0 <= y < H]
    assert outside, "the test expects part of the ring inside the photo"
    for b, g, red in outside:
        assert red > g + 30 and red > b + 10


def test_every_table_kind_is_produced_and_keeps_its_palette():
    rng = np.random.default_rng(0)
    drawn = {tables.pick_table(rng)[0] for _ in range(200)}
    assert drawn == set(tables.TABLE_KINDS)
    for kind in tables.TABLE_KINDS:
        s = _scene(40, table=kind, clutter=False)
        assert s.table == kind and s.palette in tables.KIND_PALETTES[kind]
        surf = tables.table_surface(kind, 96, 128, np.random.default_rng(1))
        assert surf.shape == (96, 128, 3) and surf.dtype == np.uint8
        assert surf.std() > 1.0, f"{kind} is flat"
    # a plain cloth in a terrain's own colour really has that colour
    hsv = cv2.cvtColor(tables.table_surface("plain", 64, 64, 2, palette="field_yellow"), cv2.COLOR_BGR2HSV)
    (h0, h1), _, _ = tables.PALETTES["field_yellow"]
    assert h0 - 3 <= float(np.median(hsv[..., 0])) <= h1 + 3
    # patterned kinds differ from one seed to the next
    assert not np.array_equal(tables.table_surface("stripes", 64, 64, 1), tables.table_surface("stripes", 64, 64, 2))


def test_the_unseen_kinds_are_drawn_only_by_name():
    # a seed's scene is the same as before they were added: the default draw never picks them
    rng = np.random.default_rng(0)
    assert not {tables.pick_table(rng)[0] for _ in range(300)} & set(tables.UNSEEN_KINDS)
    rng = np.random.default_rng(0)
    assert {tables.pick_table(rng, kinds=tables.UNSEEN_KINDS)[0] for _ in range(100)} == set(tables.UNSEEN_KINDS)
    for kind in tables.UNSEEN_KINDS:
        s = _scene(41, table=kind, clutter=False)
        assert s.table == kind and s.palette in tables.KIND_PALETTES[kind]
        a = tables.table_surface(kind, 96, 128, np.random.default_rng(3), unit=120)
        assert a.shape == (96, 128, 3) and a.dtype == np.uint8 and a.std() > 1.0, f"{kind} is flat"
        assert np.array_equal(a, tables.table_surface(kind, 96, 128, np.random.default_rng(3), unit=120))


def test_kinds_named_on_a_command_line():
    parse = tables.parse_kinds
    assert parse(None) == tables.TABLE_KINDS and parse("unseen") == tables.UNSEEN_KINDS
    assert parse("all") == tables.TABLE_KINDS + tables.UNSEEN_KINDS
    assert parse(" felt, grid,felt ") == ("felt", "grid") and parse("motif") == ("motif",)
    assert "motif" not in parse("all")      # a training-only kind is measured only by name
    with pytest.raises(ValueError, match="unknown table kind lino: name kinds among plain"):
        parse("felt,lino")


def test_the_training_only_kind_is_never_drawn_unless_named():
    rng = np.random.default_rng(0)
    assert not {tables.pick_table(rng)[0] for _ in range(300)} & set(tables.TRAIN_ONLY_KINDS)
    for kind in tables.TRAIN_ONLY_KINDS:
        s = _scene(42, table=kind, clutter=False)
        assert s.table == kind and s.palette in tables.KIND_PALETTES[kind]


def test_a_motif_print_scatters_shapes_of_other_colours_on_its_ground():
    for seed in range(6):
        surf = tables.table_surface("motif", 240, 320, np.random.default_rng(seed),
                                    palette="white", unit=400)
        assert surf.shape == (240, 320, 3) and surf.dtype == np.uint8
        assert np.array_equal(surf, tables.table_surface("motif", 240, 320,
                                                         np.random.default_rng(seed),
                                                         palette="white", unit=400))
        # a white ground with shapes on it: most pixels are the ground, some are not
        gray = cv2.cvtColor(surf, cv2.COLOR_BGR2GRAY).astype(float)
        off = np.abs(gray - np.median(gray)) > 25
        assert 0.002 < off.mean() < 0.9, f"seed {seed}: {off.mean():.3f} of the cloth is shapes"
    # any size of print keeps to about 6000 shapes: a large table with specks is drawn quickly
    big = tables.table_surface("motif", 1200, 1600, np.random.default_rng(3), unit=100)
    assert big.shape == (1200, 1600, 3)


def test_a_cutting_mat_draws_lines_at_one_pitch():
    surf = tables.table_surface("grid", 400, 400, np.random.default_rng(5), palette="black", unit=400)
    gray = cv2.cvtColor(surf, cv2.COLOR_BGR2GRAY).astype(float)
    # lines (much brighter or darker than the median ground) cover some of it, not most
    off = np.abs(gray - np.median(gray)) > 40
    assert 0.01 < off.mean() < 0.5


def test_camouflage_is_made_of_several_colours_in_blotches():
    surf = tables.table_surface("camo", 200, 200, np.random.default_rng(7), palette="olive", unit=600)
    small = (surf[::10, ::10] // 32).reshape(-1, 3)
    assert len({tuple(c) for c in small}) >= 3
    # blotches: neighbouring pixels mostly share a colour
    assert np.abs(np.diff(surf.astype(int), axis=1)).mean() < 12


def test_bad_arguments_say_how_to_fix_them():
    with pytest.raises(ValueError, match="table kind must be one of"):
        tables.make_hard_scene(1, W, H, table="lino")
    with pytest.raises(ValueError, match="palette must be one of"):
        tables.table_surface("plain", 32, 32, 1, palette="teal-ish")
    with pytest.raises(ValueError, match="size must be 5 or 7"):
        tables.make_hard_scene(1, W, H, size=6)


def test_given_layout_is_the_truth_up_to_the_turn():
    lay = {"terrain": [["lake"] * 5 for _ in range(5)], "crowns": [[0] * 5 for _ in range(5)]}
    lay["terrain"][2][2] = "castle"
    lay["terrain"][0][0], lay["crowns"][0][0] = "field", 2
    s = _scene(8, layout=lay, clutter=False)
    assert s.size == 5 and s.terrain[2][2] == "castle"
    # the field square is one of the four corners, wherever the turn put it
    corners = {(0, 0): s.terrain[0][0], (0, 4): s.terrain[0][4], (4, 4): s.terrain[4][4], (4, 0): s.terrain[4][0]}
    assert sorted(corners.values()) == ["field", "lake", "lake", "lake"]
    where = [rc for rc, t in corners.items() if t == "field"][0]
    assert s.crowns[where[0]][where[1]] == 2


# --------------------------------------------------------------------------- measurement

def _truth_json(s, corners=None, review=(), change=None):
    cells = [[{"terrain": t, "crowns": c} for t, c in zip(tr, cr)] for tr, cr in zip(s.terrain, s.crowns)]
    if change:
        (r, c), new = change
        cells[r][c] = dict(cells[r][c], **new)
    return {"size": s.size, "rows": s.size, "cols": s.size, "cells": cells, "review": [list(x) for x in review],
            "corners": np.asarray(s.corners if corners is None else corners).tolist()}


class _Stub:
    def __init__(self, answer):
        self.answer = answer

    def read(self, image):
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


def _crowned_square(s):
    return next((r, c) for r in range(s.size) for c in range(s.size)
                if s.terrain[r][c] not in ("castle", "empty"))


def test_measure_scene_and_summary_arithmetic_on_stubbed_readers():
    s = _scene(21, size=5, clutter=False)
    n = s.size
    sq = _crowned_square(s)
    plus_one = ((sq), {"crowns": s.crowns[sq[0]][sq[1]] + 1})
    step = (s.corners[1] - s.corners[0]) / n        # one square along the first row
    moved = s.corners + step                          # the read frame one column over
    table_cells = {"terrain": "forest", "crowns": 0}
    shifted = _truth_json(s, corners=moved)
    for r in range(n):                                 # what lies under each read square
        shifted["cells"][r] = shifted["cells"][r][1:] + [table_cells]   # the last one off, as a tile
    rows = [tables.measure_scene(_Stub(_truth_json(s)), s),
            tables.measure_scene(_Stub(_truth_json(s, change=plus_one, review=[sq])), s),
            tables.measure_scene(_Stub(_truth_json(s, change=plus_one)), s),
            tables.measure_scene(_Stub(shifted), s),
            tables.measure_scene(_Stub(ValueError("no kingdom found")), s),
            tables.measure_scene(_Stub(RuntimeError("boom")), s)]
    perfect, flagged, unflagged, off, refused, crashed = rows

    assert perfect["found"] and perfect["grid_right"] and perfect["total_exact"]
    assert perfect["corner_error"] == pytest.approx(0, abs=1e-4)
    assert (perfect["squares_wrong"], perfect["squares_off"], perfect["squares_missed"]) == (0, 0, 0)
    assert perfect["total"] == score([list(r) for r in s.terrain], [list(r) for r in s.crowns])

    for row in (flagged, unflagged):
        assert row["squares_wrong"] == 1 and not row["total_exact"] and row["grid_right"]
    assert flagged["flagged"] and not unflagged["flagged"]

    land_in_first_column = sum(1 for r in range(n) if s.terrain[r][0] != "empty")
    assert off["squares_off"] == n and off["off_as_tile"] == n and off["squares_wrong"] == 0
    assert off["off_as_tile_unflagged"] == n            # none of them in review
    flagged_off = dict(shifted, review=[[0, n - 1], [1, n - 1]])
    assert tables.measure_scene(_Stub(flagged_off), s)["off_as_tile_unflagged"] == n - 2
    assert not off["grid_right"] or off["corner_error"] > 0.1
    assert off["squares_missed"] == land_in_first_column
    assert off["corner_error"] == pytest.approx(1 / n, rel=0.1)  # a side, over the mean side

    assert not refused["found"] and refused["crash"] is None
    assert not crashed["found"] and "RuntimeError" in crashed["crash"]

    summary = tables.summarise(rows)
    assert summary["n"] == 6 and summary["found"] == 4 and summary["crashed"] == 1
    assert summary["grid_right"] == 4  # a frame one column over is still 5x5
    assert summary["framed"] == 3 and summary["exact_framed"] == 1   # ... but it is not framed right
    off_exact = off["total_exact"]
    assert summary["total_exact"] == 1 + off_exact
    assert summary["wrong_total"] == 3 - off_exact
    assert summary["wrong_total_unflagged"] == 1 + (0 if off_exact or off["flagged"] else 1)
    assert summary["squares_off"] == n and summary["off_as_tile"] == n and summary["squares_wrong"] == 2
    assert summary["off_as_tile_unflagged"] == n
    errs = [perfect["corner_error"], flagged["corner_error"], unflagged["corner_error"], off["corner_error"]]
    assert summary["corner_error_max"] == pytest.approx(max(errs), abs=1e-4)
    assert summary["corner_error_mean"] == pytest.approx(np.mean(errs), abs=1e-4)
    kind = summary["by_table"][s.table]
    failing = 4 + (not off_exact)   # all but the perfect reading (and the shifted one if its total held)
    assert (kind["n"], kind["found"], kind["grid_right"], kind["failures"]) == (6, 4, 4, failing)
    assert len(summary["failures"]) == failing


def test_any_first_corner_and_direction_read_the_same():
    """A reader may start its outline at any corner: the squares are matched by where they lie."""
    s = _scene(22, size=5, clutter=False)
    obj = _truth_json(s)
    obj["corners"] = np.roll(s.corners, -1, axis=0).tolist()  # starts at tr: grid turned a quarter
    obj["cells"] = [list(row) for row in np.rot90(np.array(obj["cells"], dtype=object), 1)]
    row = tables.measure_scene(_Stub(obj), s)
    assert row["squares_wrong"] == 0 and row["squares_off"] == 0 and row["total_exact"]
    assert row["corner_error"] == pytest.approx(0, abs=1e-4)


def test_command_line_refuses_bad_input(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        tables.main(["--n", "0", "--out", str(tmp_path)])
    assert exc.value.code == 2 and "--n must be at least 1" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        tables.main(["--n", "1", "--kinds", "felt,lino", "--out", str(tmp_path)])
    assert exc.value.code == 2 and "unknown table kind lino" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        tables.main(["--n", "1", "--scale", "2", "--out", str(tmp_path)])
    assert exc.value.code == 2 and "--scale must be between" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        tables.main(["--n", "1", "--max-tilt", "80", "--out", str(tmp_path)])
    assert exc.value.code == 2 and "--max-tilt must be between" in capsys.readouterr().err
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert tables.main(["--n", "1", "--out", str(blocker / "sub")]) == 2
    assert "cannot write to" in capsys.readouterr().err


def test_command_line_writes_figures_and_examples(tmp_path, monkeypatch):
    import vision.reader

    class Perfect:
        scene = None

        def read(self, image):
            return _truth_json(self.scene)

    reader = Perfect()
    real = tables.make_hard_scene

    def remember(*a, **kw):
        reader.scene = real(*a, **kw)
        return reader.scene

    monkeypatch.setattr(vision.reader, "Reader", lambda: reader)
    monkeypatch.setattr(tables, "make_hard_scene", remember)
    assert tables.main(["--n", "2", "--seed", "9000", "--out", str(tmp_path), "--width", "320",
                        "--height", "240", "--examples", "2", "--scale", "0.3",
                        "--max-tilt", "40"]) == 0
    res = json.loads((tmp_path / "tables.json").read_text())
    assert res["summary"]["n"] == 2 and res["summary"]["total_exact"] == 2
    assert (res["settings"]["scale"], res["settings"]["max_tilt"]) == (0.3, 40.0)
    # the kingdom drawn at the share of the shorter side asked for
    side = np.linalg.norm(reader.scene.corners[1] - reader.scene.corners[0])
    assert side < 0.3 * 240 * 1.5
    assert [r["seed"] for r in res["scenes"]] == [9000, 9001]
    for name in res["settings"]["examples"]:
        assert cv2.imread(str(tmp_path / name)) is not None
    assert len(res["settings"]["examples"]) >= 1


def _picture_board(bare=(1, 3)):
    """A 5x5 board picture of flat colours (a stand-in for an AAU photo), one square bare."""
    colours = {"field": (40, 200, 230), "lake": (200, 90, 30), "castle": (150, 150, 150)}
    terrain = [["field" if (r + c) % 2 else "lake" for c in range(5)] for r in range(5)]
    terrain[2][2] = "castle"
    terrain[bare[0]][bare[1]] = "empty"
    img = np.zeros((250, 250, 3), np.uint8)
    mask = np.full((250, 250), 255, np.uint8)
    for r in range(5):
        for c in range(5):
            t = terrain[r][c]
            if t == "empty":
                mask[r * 50:(r + 1) * 50, c * 50:(c + 1) * 50] = 0
            else:
                img[r * 50:(r + 1) * 50, c * 50:(c + 1) * 50] = colours[t]
    crowns = [[1 if t == "field" else 0 for t in row] for row in terrain]
    return {"image": img, "mask": mask, "terrain": terrain, "crowns": crowns}


def test_a_board_picture_is_put_on_the_table_with_its_labels_and_bare_squares_show_the_table():
    board = _picture_board()
    s = tables.make_hard_scene(9005, 800, 600, board=board, clutter=False, lighting=False,
                               tile_mask=True, scale=0.6)
    assert s.size == 5 and s.terrain[2][2] == "castle"
    assert sorted(t for row in s.terrain for t in row) == sorted(t for row in board["terrain"] for t in row)
    (r, c), = [(r, c) for r in range(5) for c in range(5) if s.terrain[r][c] == "empty"]
    assert s.crowns[r][c] == 0
    # the bare square's centre is off the tile mask, its neighbours' centres on it
    tl, tr, br, bl = np.asarray(s.corners, float)

    def centre(rr, cc):
        u, v = (cc + 0.5) / 5, (rr + 0.5) / 5
        top, bottom = tl + (tr - tl) * u, bl + (br - bl) * u
        x, y = top + (bottom - top) * v
        return int(round(y)), int(round(x))

    assert s.tiles[centre(r, c)] == 0
    assert s.tiles[centre(2, 2)] == 255
    with pytest.raises(ValueError, match="not both"):
        tables.make_hard_scene(1, W, H, board=board, layout=board)


def test_measure_puts_the_given_boards_on_the_tables_in_turn(monkeypatch):
    seen = []

    class Blind:
        def read(self, image):
            raise ValueError("no kingdom found")

    real = tables.make_hard_scene
    boards = [_picture_board((0, 0)), _picture_board((4, 4))]
    monkeypatch.setattr(tables, "make_hard_scene",
                        lambda *a, **kw: seen.append(kw.get("board")) or real(*a, **kw))
    res = tables.measure(Blind(), [9000, 9001, 9002], 320, 240, clutter=False, boards=boards)
    assert [b is boards[i % 2] for i, b in enumerate(seen)] == [True] * 3
    assert res["summary"]["n"] == 3 and res["summary"]["found"] == 0


def test_command_line_board_choice_is_checked(tmp_path, capsys, shared_dir):
    with pytest.raises(SystemExit) as exc:
        tables.main(["--n", "1", "--out", str(tmp_path), "--groups", "aau:1"])
    assert exc.value.code == 2 and "--boards aau" in capsys.readouterr().err
    assert tables.main(["--n", "1", "--out", str(tmp_path), "--boards", "aau",
                        "--groups", "aau:1,aau:999"]) == 2
    assert "no AAU dev kingdom aau:999" in capsys.readouterr().err
