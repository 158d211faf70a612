import argparse

import cv2
import numpy as np
import pytest

from tests.conftest import shared_path


def test_training_on_two_boards_writes_a_loadable_onnx(tmp_path):
    pytest.importorskip("torch", reason="training needs torch (pip install '.[train]')")
    from vision.lab.training import squares as train
    from vision.read.classify import SquareClassifier

    datasets = shared_path("datasets")
    rc = train.main(argparse.Namespace(datasets=str(datasets), out=str(tmp_path), epochs=1, limit=2))
    assert rc == 0
    onnx = tmp_path / "squares.onnx"
    assert onnx.exists() and (tmp_path / "squares.json").exists()
    import json

    from vision import config
    meta = json.loads((tmp_path / "squares.json").read_text())
    # what the reader must repeat at run time is recorded with the model
    assert meta["margin_weight"] == config.load()["classify"]["margin_weight"]
    assert meta["crop_margin"] == config.load()["classify"]["crop_margin"]
    assert meta["n_photos"] == {"aau": 1, "phone": 1} and len(meta["photos"]) == 2
    net = cv2.dnn.readNetFromONNX(str(onnx))
    assert net is not None
    clf = SquareClassifier(onnx)
    crops = np.zeros((2, clf.input_size, clf.input_size, 3), np.uint8)
    assert clf.logits(crops).shape == (2, 12)


def test_temperature_fit_recovers_a_known_temperature():
    from vision.lab.training.squares import fit_temperature

    rng = np.random.default_rng(0)
    true = rng.normal(0, 2, size=(4000, 5))
    p = np.exp(true) / np.exp(true).sum(1, keepdims=True)
    labels = np.array([rng.choice(5, p=row) for row in p])
    assert abs(fit_temperature(true * 2.0, labels) - 2.0) < 0.3


def test_cross_validation_folds_never_split_a_kingdom():
    from vision.lab.datasets import load_aau, load_phone
    from vision.lab.evaluation.evaluate import assign_folds

    root = shared_path("datasets")
    photos = load_aau(root) + load_phone(root)
    folds = assign_folds(photos, 5)
    fold_of_group = {}
    for p, f in zip(photos, folds):
        assert fold_of_group.setdefault(p.group, f) == f, p.group
    sizes = [folds.count(f) for f in range(5)]
    assert min(sizes) > 0 and max(sizes) - min(sizes) <= max(sizes) // 2


def test_the_lab_scores_with_the_engine_even_a_grid_no_kingdom_holds():
    from vision.lab.evaluation.evaluate import score

    terrain = [["field", "field", "lake"], ["castle", "lake", "lake"]]
    crowns = [[1, 0, 0], [0, 1, 0]]
    assert score(terrain, crowns) == 2 * 1 + 3 * 1
    # a misread grid: a second castle, crowns on a castle and on an empty square score nothing
    misread = [["field", "castle", "lake"], ["castle", "lake", "empty"]]
    assert score(misread, [[1, 2, 0], [3, 1, 1]]) == 1 * 1 + 1 * 0 + 1 * 1  # field, two lakes


def test_blank_border_squares_lifts_ring_squares_off():
    from vision.lab.training.squares import blank_border_squares

    terrain = [["field", "lake", "forest"], ["mine", "field", "castle"], ["swamp", "lake", "empty"]]
    crowns = [[1, 0, 0], [2, 0, 0], [1, 0, 0]]
    mask, t2, c2 = blank_border_squares((30, 30, 3), terrain, crowns, np.random.default_rng(0), 3)
    lifted = [(r, c) for r in range(3) for c in range(3) if t2[r][c] == "empty" and terrain[r][c] != "empty"]
    assert len(lifted) == 3
    assert all(r != 1 or c != 1 for r, c in lifted)             # never the middle (not on the ring)
    assert t2[1][2] == "castle" and terrain[0][0] == "field"     # castle kept, input not changed
    for r in range(3):
        for c in range(3):
            cell = mask[r * 10:(r + 1) * 10, c * 10:(c + 1) * 10]
            assert (cell == (0 if (r, c) in lifted else 255)).all()
            if (r, c) in lifted:
                assert c2[r][c] == 0
    # asking for more than the ring holds lifts the whole ring (castle and empty squares excepted)
    _, t3, _ = blank_border_squares((30, 30, 3), terrain, crowns, np.random.default_rng(1), 20)
    assert [t3[r][c] for r in range(3) for c in range(3)].count("empty") == 7


def test_drill_mines_turns_only_tile_squares_into_crowned_mines():
    from vision.lab.training.squares import drill_mines

    terrain = [["field", "castle", "empty"], ["lake", "forest", "swamp"]]
    crowns = [[0, 0, 0], [1, 0, 2]]
    t2, c2, keep = drill_mines(terrain, crowns, np.random.default_rng(0), 10)
    # everything but the castle and the empty square becomes a mine with 1-3 crowns
    assert [[bool(k) for k in row] for row in keep] == [[True, False, False], [True, True, True]]
    for r in range(2):
        for c in range(3):
            if keep[r][c]:
                assert t2[r][c] == "mine" and 1 <= c2[r][c] <= 3
            else:
                assert (t2[r][c], c2[r][c]) == (terrain[r][c], crowns[r][c])
    assert terrain[0][0] == "field" and crowns[1][0] == 1          # the input is not changed
    # one square at a time: every tile square and every crown count turns up
    picked, counts = set(), set()
    for seed in range(60):
        t3, c3, k3 = drill_mines(terrain, crowns, np.random.default_rng(seed), 1)
        (where,) = [(r, c) for r in range(2) for c in range(3) if k3[r][c]]
        picked.add(where)
        counts.add(c3[where[0]][where[1]])
    assert picked == {(0, 0), (1, 0), (1, 1), (1, 2)} and counts == {1, 2, 3}


def test_photographed_turns_an_extra_grid_with_the_labels():
    from vision.lab.scenes import synth
    from vision.lab.training.squares import photographed

    board = np.full((90, 60, 3), 120, np.uint8)
    terrain = [["field", "lake"], ["forest", "mine"], ["swamp", "grassland"]]
    crowns = [[0, 1], [2, 3], [0, 0]]
    index = np.arange(6).reshape(3, 2)
    for seed in range(4):
        _, corners, t2, c2, i2 = photographed(synth, board, terrain, crowns,
                                              np.random.default_rng(seed), 600, extra=index)
        assert corners.shape == (4, 2)
        flat_t = [t for row in terrain for t in row]
        flat_c = [c for row in crowns for c in row]
        for r in range(len(t2)):
            for c in range(len(t2[0])):
                assert (t2[r][c], c2[r][c]) == (flat_t[i2[r][c]], flat_c[i2[r][c]])


def test_crown_drill_returns_only_the_drilled_mines(monkeypatch):
    from vision import config
    from vision.lab.training import squares as train
    from vision.read.classify import TERRAINS
    from vision.lab.training.squares import rendered_examples

    cfg = config.load()["classify"]
    # boards 0 and 2 are drawn straight, 1 and 3 put into a generated photo (turned)
    monkeypatch.setattr(train, "PLAIN_START", 0.0)
    x, t, c = rendered_examples(4, cfg, np.random.default_rng(3), drill=3)
    assert len(x) == len(t) == len(c) == 12
    assert set(t.tolist()) == {TERRAINS.index("mine")} and set(c.tolist()) <= {1, 2, 3}
    # with the bare start square drawn on some boards, each board's start square comes too
    monkeypatch.setattr(train, "PLAIN_START", 0.5)
    x, t, c = rendered_examples(4, cfg, np.random.default_rng(3), drill=3)
    assert len(x) == 16 and sorted(set(t.tolist())) == sorted({TERRAINS.index("mine"),
                                                                TERRAINS.index("castle")})
    assert (t == TERRAINS.index("castle")).sum() == 4 and set(c[t == TERRAINS.index("castle")]) == {0}
    # a plain call still returns whole boards, every terrain label a board has
    x, t, c = rendered_examples(1, cfg, np.random.default_rng(3))
    assert len(x) in (25, 49) and len(set(t.tolist())) > 2



def test_train_tiles_writes_the_files_the_reader_loads(tmp_path, monkeypatch):
    """The tile networks' file names are the configuration's, not the command's own."""
    from kingdomino.cli import main
    from vision import config
    from vision.lab.training import tiles

    asked = []
    monkeypatch.setattr(tiles, "main", lambda argv: asked.append(argv) or 0)
    assert main(["train", "--tiles", "--out", str(tmp_path)]) == 0
    cfg = config.load()
    assert [argv[argv.index("--out") + 1] for argv in asked] == [
        str(tmp_path / cfg["detect"]["tile_net"]), str(tmp_path / cfg["reader"]["second_tile_net"])]
    assert ["--lit" in argv for argv in asked] == [False, True]


def test_training_crops_are_cut_from_the_pixels_the_reader_decodes(tmp_path, monkeypatch):
    """With [io] read_long_side set, a 12 MP phone JPEG is read from a decode at half its side:
    the network must learn from crops cut from that same decode, not from the whole photo."""
    import copy
    from types import SimpleNamespace

    from vision import config
    from vision.lab.training.squares import load_examples
    from vision.photo import scale
    from vision.read.crops import photo_crops

    cfg = copy.deepcopy(config.load())
    cfg["io"]["read_long_side"] = long_side = 1000
    monkeypatch.setattr(config, "load", lambda *a, **k: cfg)
    rng = np.random.default_rng(3)
    w, h = 2 * long_side + 64, 3 * long_side // 2
    image = cv2.resize(rng.integers(0, 256, (h // 16, w // 16, 3), dtype=np.uint8), (w, h),
                       interpolation=cv2.INTER_NEAREST)
    path = tmp_path / "phone.jpg"
    cv2.imwrite(str(path), image, [cv2.IMWRITE_JPEG_QUALITY, 92])
    corners = np.array([[250, 200], [w - 350, 260], [w - 300, h - 190], [210, h - 250]], float)
    photo = SimpleNamespace(path=path, corners=corners, rows=2, cols=3, dataset="phone",
                            terrain=[["field"] * 3, ["forest"] * 3], crowns=[[0] * 3, [1] * 3])
    cc = cfg["classify"]
    x, t, c, b = load_examples([photo], cc, pad=0)

    decoded, factor = scale.load_for_reading(str(path), cfg)
    assert factor == 2
    read = photo_crops(decoded, scale.to_reduced_pixels(corners, factor), 2, 3, cc["cell"],
                       board_margin=cc["board_margin"], crop_margin=cc["crop_margin"])
    assert x.shape == read.shape
    assert np.array_equal(x, read)
    whole = photo_crops(cv2.imread(str(path)), corners, 2, 3, cc["cell"],
                        board_margin=cc["board_margin"], crop_margin=cc["crop_margin"])
    assert not np.array_equal(x, whole)
    assert list(t) == [0, 0, 0, 1, 1, 1] and list(c) == [0, 0, 0, 1, 1, 1]


@pytest.mark.parametrize("conv, downsample", [("full", "pool"), ("full", "stride"),
                                              ("separable", "pool"), ("separable", "stride")])
def test_every_recipe_network_reads_a_crop_into_both_heads(monkeypatch, conv, downsample):
    torch = pytest.importorskip("torch", reason="training needs torch (pip install '.[train]')")
    from vision.lab.training import squares as train
    from vision.read.classify import N_CROWNS, TERRAINS

    monkeypatch.setattr(train, "CONV", conv)
    monkeypatch.setattr(train, "DOWNSAMPLE", downsample)
    model = train.build_model(1).eval()
    with torch.no_grad():
        out = model(torch.zeros(2, 3, 88, 88))
    assert tuple(out.shape) == (2, len(TERRAINS) + N_CROWNS)
    weights = sum(p.numel() for p in model.parameters())
    monkeypatch.setattr(train, "CONV", "full")
    full = sum(p.numel() for p in train.build_model(1).parameters())
    # the separable layers keep a few of the full ones' weights; downsampling adds none
    assert (weights < full / 4) if conv == "separable" else weights == full


def test_an_unknown_convolution_is_refused(monkeypatch):
    pytest.importorskip("torch", reason="training needs torch (pip install '.[train]')")
    from vision.lab.training import squares as train

    monkeypatch.setattr(train, "CONV", "dilated")
    with pytest.raises(ValueError, match="CONV must be"):
        train.build_model(1)
