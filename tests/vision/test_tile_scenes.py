"""vision.lab.scenes.tile_scenes: the tile network's training scenes on hard tables."""
from __future__ import annotations

import cv2
import numpy as np
import pytest

from vision.lab.training import pixels as pixel_model

from vision.lab.training import tiles as tilenet
from vision.lab.scenes import hard_tables as tables
from vision.lab.scenes import tile_scenes


def _quad_mask(corners: np.ndarray, shape, grow: int = 0) -> np.ndarray:
    m = np.zeros(shape[:2], np.uint8)
    cv2.fillConvexPoly(m, np.round(corners).astype(np.int32), 255)
    if grow:
        m = cv2.dilate(m, np.ones((2 * grow + 1,) * 2, np.uint8))
    return m > 0


def test_the_tile_mask_leaves_the_photo_as_it_was_and_lies_on_the_kingdom():
    plain = tables.make_hard_scene(9003, 400, 300)
    masked = tables.make_hard_scene(9003, 400, 300, tile_mask=True)
    assert plain.tiles is None
    assert np.array_equal(plain.image, masked.image)  # the measuring photos do not move
    on = masked.tiles > 127
    inside = _quad_mask(masked.corners, on.shape, grow=2)
    assert on.sum() > 0.5 * inside.sum()
    assert not (on & ~inside).any()


@pytest.mark.parametrize("seed", [100_003, 100_005])  # both have loose dominoes or tiles
def test_only_the_kingdom_is_labelled_tile_and_everything_away_from_it_is_table(seed):
    small, y, scene = tile_scenes.hard_training_scene(seed, long_side=200, width=400, height=300,
                                                      with_scene=True)
    assert set(scene.clutter) & {"dominoes", "draft_row", "tiles"}
    assert y.shape == small.shape[:2] and small.shape[1] == 200
    corners = scene.corners * (small.shape[1] / scene.image.shape[1])
    near = _quad_mask(corners, y.shape, grow=3)
    assert (y == 1).sum() > 0.4 * _quad_mask(corners, y.shape).sum()
    assert not ((y == 1) & ~near).any()
    assert (y[~near] == 0).all()  # the table, loose dominoes and tiles included, is "not a tile"


def test_training_seeds_stay_clear_of_the_measuring_seeds():
    for seed in (tables.MEASURE_SEEDS_FROM, tile_scenes.TRAIN_SEEDS_FROM - 1):
        with pytest.raises(ValueError, match="seeds start at"):
            tile_scenes.hard_training_scene(seed, long_side=100, width=200, height=150)
    with pytest.raises(ValueError, match="kinds must be"):
        tile_scenes.hard_training_scene(tile_scenes.TRAIN_SEEDS_FROM, kinds=("lino",))


def test_the_held_out_table_kind_is_never_drawn_for_training():
    assert "print" in tile_scenes.HELD_OUT_KINDS and "print" not in tile_scenes.TRAIN_KINDS
    drawn = {tile_scenes.hard_training_scene(tile_scenes.TRAIN_SEEDS_FROM + i, long_side=80,
                                             width=160, height=120, with_scene=True)[2].table
             for i in range(15)}
    assert "print" not in drawn and len(drawn) >= 3


def test_training_kinds_are_named_among_those_kept_for_training():
    assert tile_scenes.training_kinds("felt, motif,felt") == ("felt", "motif")
    assert set(tile_scenes.TRAINABLE_KINDS) == set(tile_scenes.TRAIN_KINDS) | {"motif"}
    for kept in ("print", "camo", "lino", " "):
        with pytest.raises(ValueError, match="cannot be trained on: name kinds among plain"):
            tile_scenes.training_kinds(kept)
    s = tile_scenes.hard_training_scene(tile_scenes.TRAIN_SEEDS_FROM + 3, long_side=80, width=160,
                                        height=120, kinds=("motif",), with_scene=True)[2]
    assert s.table == "motif"


def test_the_mix_takes_its_share_of_hard_scenes_and_the_rest_from_the_old_generator():
    with pytest.raises(ValueError, match="hard_share"):
        tile_scenes.mixed_training_scenes(2, hard_share=1.5)
    old = pixel_model.synth_training_scenes(2, seed=1, long_side=100)
    mixed = tile_scenes.mixed_training_scenes(3, seed=1, long_side=100, hard_share=1 / 3)
    assert len(mixed) == 3
    for (a, ya), (b, yb) in zip(old, mixed[:2]):
        assert np.array_equal(a, b) and np.array_equal(ya, yb)
    hard, y = tile_scenes.hard_training_scene(tile_scenes.TRAIN_SEEDS_FROM + 1, long_side=100)
    assert np.array_equal(mixed[2][0], hard) and np.array_equal(mixed[2][1], y)


def test_the_tile_network_trains_on_the_mix():
    pairs, phone = tilenet.training_pairs([], 2, seed=0, long_side=100)
    want = tile_scenes.mixed_training_scenes(2, 0, 100, hard_share=tilenet.HARD_SHARE,
                                             kinds=tilenet.KINDS)
    assert "motif" in tilenet.KINDS and not set(tilenet.KINDS) & set(tile_scenes.HELD_OUT_KINDS)
    assert tilenet.HARD_SHARE > 0 and phone == []
    assert all(np.array_equal(a, b) and np.array_equal(ya, yb) for (a, ya), (b, yb) in zip(pairs, want))
    assert len(pairs) == 2


def test_photographed_boards_take_their_share_of_the_hard_scenes_in_turn():
    assert tile_scenes.real_board_turns(4, 0.5) == [False, True, False, True]
    assert tile_scenes.real_board_turns(3, 0.0) == [False] * 3
    assert tile_scenes.real_board_turns(3, 1.0) == [True] * 3
    with pytest.raises(ValueError, match="fraction"):
        tile_scenes.real_board_turns(3, 2.0)
    board = {"image": np.full((100, 100, 3), (40, 200, 230), np.uint8),
             "mask": np.full((100, 100), 255, np.uint8),
             "terrain": [["field"] * 5 for _ in range(5)], "crowns": [[0] * 5 for _ in range(5)]}
    first = tile_scenes.TRAIN_SEEDS_FROM + 7
    got = tile_scenes.hard_training_scenes(2, first, long_side=100, boards=[board], real_share=0.5)
    drawn = tile_scenes.hard_training_scene(first, long_side=100)
    real = tile_scenes.hard_training_scene(first + 1, long_side=100, board=board)
    assert np.array_equal(got[0][0], drawn[0]) and np.array_equal(got[1][0], real[0])
    assert np.array_equal(got[1][1], real[1])
    # without boards the share is ignored: every scene is drawn
    plain = tile_scenes.hard_training_scenes(2, first, long_side=100, real_share=0.5)
    assert np.array_equal(plain[1][0], tile_scenes.hard_training_scene(first + 1, long_side=100)[0])


def test_the_training_command_refuses_a_share_that_is_no_fraction(tmp_path, capsys):
    assert tilenet.main(["--out", str(tmp_path / "t.onnx"), "--real-share", "1.5"]) == 2
    err = capsys.readouterr().err
    assert "--real-share is a fraction, 0 to 1, got 1.5" in err and "Traceback" not in err
    assert not (tmp_path / "t.onnx").exists()
    assert tilenet.main(["--out", str(tmp_path / "t.onnx"), "--kinds", "felt,print"]) == 2
    err = capsys.readouterr().err
    assert "--kinds: print cannot be trained on" in err and "Traceback" not in err
    assert not (tmp_path / "t.onnx").exists()
