"""vision.find.tilenet: the detector's tile-likelihood network (its training: vision.lab.training.tiles)."""
from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import shared_path
from vision.find import tilenet
from vision.lab.training import tiles as training
from vision.lab.training.pixels import synth_training_scenes


def test_edge_pixels_weigh_more_and_undecided_ones_not_at_all():
    y = np.zeros((30, 30), np.int8)
    y[:, 15:] = 1
    y[:, 14:16] = -1  # the undecided band on the outline
    w = training._pixel_weights(y, 4.0)
    assert (w[:, 14:16] == 0).all()
    half = training.EDGE_BAND // 2  # reach from the nearest pixel of the other label
    for c in range(30):
        if c < 14:
            assert (w[:, c] == (4.0 if 16 - c <= half else 1.0)).all(), c
        elif c > 15:
            assert (w[:, c] == (4.0 if c - 13 <= half else 1.0)).all(), c


def test_augment_keeps_image_and_labels_aligned():
    rng = np.random.default_rng(0)
    img = np.zeros((120, 90, 3), np.uint8)  # smaller than a crop: padded
    y = np.zeros((120, 90), np.int8)
    img[40:80, 20:60] = 255
    y[40:80, 20:60] = 1
    for _ in range(10):
        a, b = training._augment(img, y, rng)
        assert a.shape == (training.CROP, training.CROP, 3) and b.shape == (training.CROP,) * 2
        assert (b == 1).sum() == 40 * 40  # the whole square survives every turn and flip
        assert a[b == 1].mean() > 150 > a[b == 0].mean() + 60  # and stays under its label
        assert (b == -1).sum() == training.CROP ** 2 - 120 * 90  # padding is undecided


def test_shrink_keeps_image_and_labels_aligned_and_marks_mixed_pixels_undecided():
    rng = np.random.default_rng(2)
    img = np.zeros((200, 160, 3), np.uint8)
    y = np.zeros((200, 160), np.int8)
    img[40:140, 60:120] = 255
    y[40:140, 60:120] = 1
    y[:10] = -1
    for _ in range(5):
        a, b = training._shrink(img, y, rng)
        f = a.shape[0] / 200
        assert 0.44 <= f <= 0.86 and a.shape[:2] == b.shape
        # the tile keeps its place and area (mixed pixels along its outline undecided)
        ys, xs = np.nonzero(b == 1)
        assert abs(ys.min() - 40 * f) <= 2 and abs(xs.max() - 119 * f) <= 2
        assert 0.8 * 6000 * f * f <= (b == 1).sum() <= 6000 * f * f
        assert a[b == 1].min() == 255 and a[b == 0].max() == 0
        assert (b[: int(10 * f)] == -1).all()  # the undecided band stays undecided
        assert (b == -1).sum() < 0.2 * b.size


def test_lighting_only_washes_towards_white_or_darkens():
    rng = np.random.default_rng(3)
    img = np.full((176, 176, 3), 100, np.uint8)
    assert (training._lighting(img, rng, False, False) == img).all()
    for _ in range(5):
        g = training._lighting(img, rng, True, False).astype(int)
        assert g.min() >= 99 and g.max() > 160  # a patch washed pale (99: truncation), nothing darkened
        assert (g == 100).mean() > 0.3           # and only a patch
        d = training._lighting(img, rng, False, True).astype(int)
        assert d.max() <= 100 and d.min() < 70   # a shadow, nothing brightened
        assert (d >= 99).mean() > 0.01           # and it has a lit side


def test_training_a_few_steps_exports_a_network_opencv_runs_alike(tmp_path):
    pytest.importorskip("torch", reason="training needs torch (pip install '.[train]')")
    pytest.importorskip("onnx", reason="exporting needs onnx (pip install '.[train]')")
    pairs = synth_training_scenes(2, seed=3, long_side=200)
    model = training.fit(pairs, [], steps=3, batch=2)
    path = tmp_path / "tiles.onnx"
    assert training.export(model, path) < 1e-4
    net = tilenet.TileNet(path)
    small = pairs[0][0][:150, :197]  # sides not multiples of the stride
    p = net.probability(small)
    assert p.shape == small.shape[:2] and p.dtype == np.float32
    assert 0.0 <= p.min() and p.max() <= 1.0


@pytest.mark.parametrize("section,key", [("detect", "tile_net"), ("reader", "second_tile_net")])
def test_shipped_networks_tell_the_kingdom_from_the_table(section, key):
    """On a generated scene of a drawn kingdom each shipped network (the detector's and the
    reader's second) marks the tiles, not the table: most tile pixels above 0.5, most table
    pixels below."""
    from models import model_path
    from vision import config

    name = config.load()[section].get(key)
    if not name:
        pytest.skip(f"[{section}] {key} is off")
    small, y = synth_training_scenes(1, seed=9077, long_side=400)[0]
    p = tilenet.TileNet(model_path(name)).probability(small)
    assert (p[y == 1] > 0.5).mean() > 0.9
    assert (p[y == 0] < 0.5).mean() > 0.9


def test_train_tiles_command_rebuilds_the_network_from_the_dev_photos(tmp_path):
    pytest.importorskip("torch", reason="training needs torch (pip install '.[train]')")
    pytest.importorskip("onnx", reason="exporting needs onnx (pip install '.[train]')")
    import json

    from kingdomino.cli import main

    datasets = shared_path("datasets")
    rc = main(["train", "--tiles", "--limit", "2", "--datasets", str(datasets),
               "--out", str(tmp_path)])
    assert rc == 0
    meta = json.loads((tmp_path / "tiles.json").read_text())
    assert meta["scenes"] == 2 and meta["onnx_vs_torch_max_abs_diff"] < 1e-4
    assert meta["hard_kinds"] == list(training.KINDS) and "print" not in meta["hard_kinds"]
    names = set(meta["phone_photos"])
    from vision.lab.datasets import load_phone

    assert names == {p.name for p in load_phone(datasets)}  # dev photos only
    p = tilenet.TileNet(tmp_path / "tiles.onnx").probability(np.zeros((64, 80, 3), np.uint8))
    assert p.shape == (64, 80)
    assert meta["glare_share"] == meta["shadow_share"] == meta["shrink_share"] == 0.0
    # the reader's second network: the same recipe with lighting drawn over the crops
    lit = json.loads((tmp_path / "tiles_lit.json").read_text())
    assert {k: lit[k] for k in ("glare_share", "shadow_share", "shrink_share")} == {
        f"{k}_share": v for k, v in training.LIT_SHARES.items()} and min(training.LIT_SHARES.values()) > 0
    assert {k: v for k, v in lit.items() if not k.endswith("_share") and k != "onnx_vs_torch_max_abs_diff"} \
        == {k: v for k, v in meta.items() if not k.endswith("_share") and k != "onnx_vs_torch_max_abs_diff"}
    assert (tmp_path / "tiles_lit.onnx").exists()


def test_train_tiles_without_the_datasets_says_so(tmp_path, run_cli):
    rc, _, err = run_cli("train", "--tiles", "--datasets", tmp_path / "none", "--out", tmp_path)
    assert rc == 1
    assert "photos.csv" in err
    assert not (tmp_path / "tiles.onnx").exists()
