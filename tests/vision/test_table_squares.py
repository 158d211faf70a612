"""The square classifier's training source of kingdoms on hard tables (vision.lab.scenes.table_squares)."""
import cv2
import numpy as np
import pytest

from vision import config
from vision.geometry import ring_corners
from vision.read.labels import TERRAINS
from vision.lab.scenes import table_squares
from vision.lab.scenes import hard_tables as tables
from vision.lab.scenes.tile_scenes import TRAIN_SEEDS_FROM
from vision.read.crops import crop_size, photo_crops

CFG = config.load()["classify"]
EMPTY = TERRAINS.index("empty")


def _centres_on_photo(scene, ring: int) -> np.ndarray:
    """Which squares of the grid grown by ``ring`` (row by row) have their centre on the photo,
    found from the scene's own corners (not through the module)."""
    n = scene.size
    unit = np.float32([[0, 0], [n, 0], [n, n], [0, n]])
    to_photo = cv2.getPerspectiveTransform(unit, np.asarray(scene.corners, np.float32))
    steps = np.arange(-ring, n + ring) + 0.5
    centres = np.float32([[x, y] for y in steps for x in steps])
    x, y = cv2.perspectiveTransform(centres[None], to_photo)[0].T
    h, w = scene.image.shape[:2]
    return (x >= 0) & (y >= 0) & (x <= w) & (y <= h)


@pytest.mark.parametrize("seed, ring", [(TRAIN_SEEDS_FROM, 1), (TRAIN_SEEDS_FROM + 7, 2)])
def test_ring_squares_are_table_and_the_kingdom_keeps_its_labels_in_the_readers_crops(seed, ring):
    scene = table_squares.table_scene(seed, ring, width=480)
    crops, terrain, crowns, beyond = table_squares.scene_squares(scene, ring, CFG, pad=0)
    n = scene.size
    side = crop_size(CFG["cell"], CFG["crop_margin"])
    assert crops.shape == (len(terrain), side, side, 3)
    # the crops are the reader's: its own crop function over the grown grid gives the same pixels
    big = ring_corners(scene.corners, n, n, ring)
    reader = photo_crops(scene.image, big, n + 2 * ring, n + 2 * ring, CFG["cell"],
                         board_margin=CFG["board_margin"], crop_margin=CFG["crop_margin"])
    on = _centres_on_photo(scene, ring)
    assert np.array_equal(crops, reader[on])
    # every square beyond the kingdom is table, every kingdom square keeps its label, row by row
    assert beyond.sum() == len(terrain) - n * n
    assert np.all(terrain[beyond] == EMPTY) and np.all(crowns[beyond] == 0)
    assert [TERRAINS[t] for t in terrain[~beyond]] == [t for row in scene.terrain for t in row]
    assert list(crowns[~beyond]) == [c for row in scene.crowns for c in row]


def test_a_square_whose_centre_is_off_the_photo_is_not_used():
    # a kingdom filling the photo: much of a two-square ring lies beyond the photo's edge
    scene = table_squares.table_scene(TRAIN_SEEDS_FROM + 3, 2, width=480, scale=0.9, max_tilt=0)
    _crops, terrain, _crowns, beyond = table_squares.scene_squares(scene, 2, CFG, pad=0)
    n = scene.size
    kept = int(_centres_on_photo(scene, 2).sum())
    assert kept < (n + 4) ** 2
    assert len(terrain) == kept and (~beyond).sum() == n * n


def test_training_crops_are_padded_for_augmentation_and_table_squares_are_counted():
    x, t, c = table_squares.table_examples(2, CFG, 1, pad=5)
    side = crop_size(CFG["cell"], CFG["crop_margin"]) + 2 * 5
    assert x.shape[1:] == (side, side, 3) and len(x) == len(t) == len(c)
    # two kingdoms, each with at least a partly visible ring of table and tiles inside
    assert np.sum(t == EMPTY) >= 2 * 12 and np.sum(t != EMPTY) >= 2 * 12
    assert table_squares.table_examples(0, CFG, 1) is None


@pytest.mark.parametrize("seed", [0, 9000, 9039, 99_999])
def test_measuring_seeds_are_refused(seed):
    with pytest.raises(ValueError, match=str(TRAIN_SEEDS_FROM)):
        table_squares.table_scene(seed, 1, width=320)


def test_a_run_seed_that_reaches_below_the_training_seeds_is_refused():
    below = -(table_squares.FIRST_SEED // table_squares.SEEDS_PER_RUN) - 1
    with pytest.raises(ValueError, match=str(TRAIN_SEEDS_FROM)):
        table_squares.table_examples(1, CFG, 1, seed=below)


def test_the_held_out_table_kind_is_refused_and_never_drawn(monkeypatch):
    with pytest.raises(ValueError, match="held out"):
        table_squares.table_scene(TRAIN_SEEDS_FROM, 1, kinds=("wood", "print"), width=320)
    asked, drawn = [], []
    real = tables.make_hard_scene

    def spy(*args, **kw):
        asked.append(tuple(kw["kinds"]))
        scene = real(*args, **kw)
        drawn.append(scene.table)
        return scene

    monkeypatch.setattr(tables, "make_hard_scene", spy)
    monkeypatch.setattr(table_squares, "WIDTHS", (200, 240))
    table_squares.table_examples(6, CFG, 1)
    assert len(drawn) == 6
    assert all("print" not in kinds for kinds in asked)
    assert "print" not in drawn


def test_fit_trains_on_the_table_squares_of_its_own_seed(monkeypatch):
    from types import SimpleNamespace

    from vision.lab.training import squares as train

    one = (np.zeros((1, 120, 120, 3), np.uint8), np.array([0]), np.array([0]), np.array([0]))
    monkeypatch.setattr(train, "load_examples", lambda photos, cfg: one)
    monkeypatch.setattr(train, "SCENE_SHARE", 0.0)
    monkeypatch.setattr(table_squares, "WIDTHS", (200, 240))
    seen = {}

    def fake_train(x, t, c, **kw):
        seen.update(x=x, t=t, c=c, boost=kw["boost"])
        return SimpleNamespace()

    monkeypatch.setattr(train, "train_model", fake_train)
    train.fit([SimpleNamespace(dataset="aau")], CFG, 1, seed=3, rendered=0, table_boards=2)
    x, t, c = table_squares.table_examples(2, CFG, train.TABLE_RING, seed=3)
    assert np.array_equal(seen["t"][1:], t) and np.array_equal(seen["c"][1:], c)
    assert np.array_equal(seen["x"][1:], x) and len(seen["boost"]) == len(t) + 1
