"""vision.tilenet: the detector's tile-likelihood network (its training: vision.lab.tilenet)."""
from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import shared_path
from vision import tilenet
from vision.lab import tilenet as training
from vision.lab.pixel_model import synth_training_scenes


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


def test_shipped_network_tells_the_kingdom_from_the_table():
    """On a generated scene of a drawn kingdom the shipped network marks the tiles, not the
    table: most tile pixels above 0.5, most table pixels below."""
    from models import model_path
    from vision import config

    det = config.load()["detect"]
    if not det.get("tile_net"):
        pytest.skip("the config uses the per-pixel model only")
    small, y = synth_training_scenes(1, seed=9077, long_side=400)[0]
    p = tilenet.TileNet(model_path(det["tile_net"])).probability(small)
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


def test_train_tiles_without_the_datasets_says_so(tmp_path, capsys):
    from kingdomino.cli import main

    rc = main(["train", "--tiles", "--datasets", str(tmp_path / "none"), "--out", str(tmp_path)])
    assert rc == 1
    assert "photos.csv" in capsys.readouterr().err
    assert not (tmp_path / "tiles.onnx").exists()
