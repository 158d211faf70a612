import numpy as np
import pytest

from tests.conftest import classifier_logits, plain_classify_cfg

from vision.read.classify import (MAX_CROWNS, N_CROWNS, TERRAINS, VALID, SquareClassifier,
                             SquareReading, decode, domino_partners,
                             supply_capacity, preprocess,
                             square_supply, supply_flags)
from vision.read.dominoes import partner_support


def logits_for(terrain: str, crowns: int, strength: float = 8.0) -> np.ndarray:
    return classifier_logits([[terrain]], [[crowns]], strength=strength)[0]


def test_prior_matches_the_rules():
    assert MAX_CROWNS["field"] == MAX_CROWNS["forest"] == MAX_CROWNS["lake"] == 1
    assert MAX_CROWNS["grassland"] == MAX_CROWNS["swamp"] == 2
    assert MAX_CROWNS["mine"] == 3
    assert MAX_CROWNS["castle"] == MAX_CROWNS["empty"] == 0


def test_prior_matches_the_domino_set():
    supply = square_supply()
    for (terrain, crowns), n in supply.items():
        assert VALID[TERRAINS.index(terrain), crowns], (terrain, crowns)
    assert supply[("mine", 3)] == 1 and supply[("mine", 0)] == 1


def test_labels_from_the_engine_are_in_the_shipped_network_order():
    # TERRAINS is built from the engine's domino set; the network's outputs are fixed by training
    import json

    from vision.read.classify import MODELS_DIR

    outputs = json.loads((MODELS_DIR / "squares.json").read_text())["outputs"]
    assert list(TERRAINS) == outputs["terrain"]
    assert list(range(N_CROWNS)) == outputs["crowns"]


def test_valid_reading_kept_with_high_confidence():
    t, c, conf, invalid = decode(logits_for("mine", 3)[None])
    assert TERRAINS[t[0]] == "mine" and c[0] == 3 and conf[0] > 0.99 and not invalid[0]


@pytest.mark.parametrize("terrain,crowns", [("field", 2), ("lake", 3), ("castle", 1),
                                            ("empty", 2), ("swamp", 3), ("forest", 2)])
def test_impossible_reading_never_output_and_flagged(terrain, crowns):
    t, c, conf, invalid = decode(logits_for(terrain, crowns)[None])
    assert VALID[t[0], c[0]]
    assert invalid[0]


def test_random_logits_always_decode_to_valid_pairs():
    rng = np.random.default_rng(3)
    z = rng.normal(0, 4, size=(500, len(TERRAINS) + N_CROWNS))
    t, c, conf, _ = decode(z)
    assert VALID[t, c].all()
    assert ((conf > 0) & (conf <= 1)).all()


def test_temperature_softens_confidence():
    z = logits_for("lake", 1, strength=3.0)[None]
    assert decode(z, 3.0, 3.0)[2][0] < decode(z, 1.0, 1.0)[2][0]


def test_two_three_crown_mines_are_flagged():
    grid = [[SquareReading("mine", 3, 0.99), SquareReading("mine", 3, 0.99),
             SquareReading("field", 1, 0.99)]]
    supply_flags(grid, square_supply())
    assert grid[0][0].flags and grid[0][1].flags and not grid[0][2].flags


def test_shipped_model_loads_in_cv2_dnn():
    clf = SquareClassifier()
    crops = np.random.default_rng(0).integers(0, 255, size=(3, clf.input_size, clf.input_size, 3),
                                              dtype=np.uint8)
    grid = clf.read(crops, 1, 3)
    assert len(grid) == 1 and len(grid[0]) == 3
    for sq in grid[0]:
        assert VALID[TERRAINS.index(sq.terrain), sq.crowns] and 0 < sq.confidence <= 1


def test_marginal_crown_prior_undoes_training_oversampling():
    # the crown head says 2 a little more than 1 for a swamp square, but it was shown 2-crown
    # squares four times as often as they occur: the corrected reading is 1 crown
    z = np.zeros(len(TERRAINS) + N_CROWNS)
    z[TERRAINS.index("swamp")] = 8.0
    z[len(TERRAINS) + 1] = 2.0
    z[len(TERRAINS) + 2] = 2.5
    trained, labelled = [0.5, 0.2, 0.2, 0.1], [0.7, 0.2, 0.05, 0.05]
    prior = np.tile(np.asarray(labelled) / np.asarray(trained), (len(TERRAINS), 1))
    assert decode(z[None])[1][0] == 2
    assert decode(z[None], prior=prior)[1][0] == 1


def test_crown_prior_mode_comes_from_the_config():
    clf = SquareClassifier(None, plain_classify_cfg(crown_prior="marginal"),
                           load_network=False)
    clf.set_crown_prior([0.5, 0.2, 0.2, 0.1], [0.7, 0.2, 0.05, 0.05])
    assert clf.prior is not None and clf.prior[0, 2] == pytest.approx(0.25)
    clf.cfg["crown_prior"] = "none"
    clf.set_crown_prior([0.5, 0.2, 0.2, 0.1], [0.7, 0.2, 0.05, 0.05])
    assert clf.prior is None
    clf.cfg["crown_prior"] = "bogus"
    with pytest.raises(ValueError, match="crown_prior"):
        clf.set_crown_prior([0.5, 0.2, 0.2, 0.1], [0.7, 0.2, 0.05, 0.05])


def _grid_logits(cells):
    return classifier_logits([[t for t, _ in cells]], [[c for _, c in cells]], strength=8.0)


def test_a_kingdom_without_a_castle_flags_its_most_castle_like_square():
    cells = [("field", 0)] * 4
    lg = _grid_logits(cells)
    lg[2, TERRAINS.index("castle")] = 6.0   # still read as field, but the castle is next best
    clf = SquareClassifier(None, plain_classify_cfg(), load_network=False)
    grid = clf.read_logits(lg, 2, 2)
    flagged = [(r, c) for r in range(2) for c in range(2) if grid[r][c].flags]
    assert flagged == [(1, 0)]


def test_each_square_keeps_its_terrains_crown_odds():
    """A square's crown odds are its read terrain's share with 0..3 crowns: the read count's
    is its confidence, and a crown the network half sees raises the odds of one more."""
    lg = _grid_logits([("lake", 0), ("lake", 0), ("field", 1), ("field", 1)])
    clf = SquareClassifier(None, plain_classify_cfg(), load_network=False)
    sure = clf.read_logits(lg, 2, 2)[0][0]
    lg[0, len(TERRAINS) + 1] = lg[0, len(TERRAINS)] - 1.0    # one crown: a little likely
    doubt = clf.read_logits(lg, 2, 2)[0][0]
    for sq in (sure, doubt):
        assert (sq.terrain, sq.crowns) == ("lake", 0)
        assert len(sq.crown_odds) == N_CROWNS and sum(sq.crown_odds) <= 1 + 1e-9
        assert sq.crown_odds[0] == pytest.approx(sq.confidence)
    assert doubt.crown_odds[1] > 0.01 > sure.crown_odds[1]


def test_two_castles_are_both_flagged():
    clf = SquareClassifier(None, plain_classify_cfg(), load_network=False)
    grid = clf.read_logits(_grid_logits([("castle", 0), ("field", 0), ("castle", 0), ("lake", 0)]), 2, 2)
    assert [bool(sq.flags) for row in grid for sq in row] == [True, False, True, False]


def reading(terrain: str, crowns: int) -> int:
    return TERRAINS.index(terrain) * N_CROWNS + crowns


def test_domino_partners_follow_the_domino_set():
    partners = domino_partners()
    assert (partners == partners.T).all()
    # the one crownless mine (domino 23) lies beside a one-crown field, nothing else
    assert np.flatnonzero(partners[reading("mine", 0)]).tolist() == [reading("field", 1)]
    # a crowned square's other half never has crowns (mine 2 + swamp 0, field 0 + mine 3)
    for a in np.flatnonzero(partners.any(axis=1)):
        if a % N_CROWNS:
            assert all(b % N_CROWNS == 0 for b in np.flatnonzero(partners[a]))
    assert not partners[reading("castle", 0)].any() and not partners[:, reading("empty", 0)].any()


def mixed(weights: dict, strength: float = 6.0) -> np.ndarray:
    """Logits whose terrain head prefers the given terrains by the given margins."""
    z = np.zeros(len(TERRAINS) + N_CROWNS)
    for terrain, w in weights.items():
        z[TERRAINS.index(terrain)] = w
    z[len(TERRAINS)] = strength      # no crowns
    return z


def test_partner_support_by_hand():
    # 1 x 2 board: a certain one-crown field beside a certain crownless mine
    joint = np.zeros((2, len(TERRAINS), N_CROWNS))
    joint[0, TERRAINS.index("field"), 1] = 1.0
    joint[1, TERRAINS.index("mine"), 0] = 1.0
    s = partner_support(joint, 1, 2, domino_partners()).reshape(2, -1)
    assert s[1, reading("mine", 0)] == 1.0 and s[0, reading("field", 1)] == 1.0
    assert s[1, reading("mine", 2)] == 0.0          # a 2-crown mine needs a field or swamp
    assert s[0, reading("castle", 0)] == 1.0        # the castle needs no partner


def test_a_dark_table_square_is_not_a_mine_without_a_one_crown_field_beside_it():
    # the middle square looks a little more like a mine than empty table; its neighbours are
    # table: no domino has a crownless mine without a one-crown field, so it reads as empty
    z = np.stack([mixed({"empty": 9}), mixed({"mine": 2.0, "empty": 1.5}), mixed({"empty": 9})])
    partners = domino_partners()
    t_off, _, _, _ = decode(z, shape=(1, 3), partners=partners, partner_floor=1.0)
    t_on, _, _, _ = decode(z, shape=(1, 3), partners=partners, partner_floor=0.05)
    assert TERRAINS[t_off[1]] == "mine" and TERRAINS[t_on[1]] == "empty"
    # beside a one-crown field the same square stays a mine
    field1 = logits_for("field", 1)
    z2 = np.stack([field1, z[1], z[2]])
    t2, c2, _, _ = decode(z2, shape=(1, 3), partners=partners, partner_floor=0.05)
    assert TERRAINS[t2[1]] == "mine" and c2[1] == 0


def test_one_castle_reads_exactly_one_castle():
    cells = [("castle", 0), ("field", 0), ("castle", 0), ("lake", 0)]
    lg = _grid_logits(cells)
    lg[2, TERRAINS.index("castle")] -= 1.0          # the second castle-like square is less so
    lg[2, TERRAINS.index("swamp")] = lg[2, TERRAINS.index("castle")] - 2.0
    t, c, conf, _ = decode(lg, one_castle=True)
    assert [TERRAINS[i] for i in t] == ["castle", "field", "swamp", "lake"]
    t_off, _, _, _ = decode(lg, one_castle=False)
    assert [TERRAINS[i] for i in t_off].count("castle") == 2


def test_one_castle_places_a_missing_castle_and_flags_it():
    cells = [("field", 0), ("swamp", 0), ("forest", 0), ("lake", 0)]
    lg = _grid_logits(cells)
    lg[1, TERRAINS.index("castle")] = lg[1, TERRAINS.index("swamp")] - 1.0   # swamp, castle next
    lg[3, TERRAINS.index("castle")] = lg[3, TERRAINS.index("lake")] - 3.0
    clf = SquareClassifier(None, plain_classify_cfg(one_castle=True, no_castle_candidates=2), load_network=False)
    grid = clf.read_logits(lg, 2, 2)
    assert grid[0][1].terrain == "castle" and grid[0][1].confidence < 0.5
    assert [bool(sq.flags) for row in grid for sq in row] == [False, True, False, True]


def test_within_supply_moves_the_least_sure_extra_reading():
    # three 2-crown swamps, the game has two: the least sure one becomes its next best, 1 crown
    z = np.stack([logits_for("swamp", 2), logits_for("swamp", 2), logits_for("swamp", 2),
                  logits_for("field", 0)])
    z[1, len(TERRAINS) + 1] = z[1, len(TERRAINS) + 2] - 0.5      # unsure between 2 and 1 crowns
    z[2, len(TERRAINS) + 1] = z[2, len(TERRAINS) + 2] - 2.0
    cap = supply_capacity(square_supply())
    t, c, conf, _ = decode(z, capacity=cap)
    assert [(TERRAINS[a], int(b)) for a, b in zip(t, c)] == \
        [("swamp", 2), ("swamp", 1), ("swamp", 2), ("field", 0)]
    assert conf[1] < 0.5                      # the moved reading is not sure: it goes to review
    t0, c0, _, _ = decode(z)
    assert [int(b) for b in c0[:3]] == [2, 2, 2]


def test_within_supply_leaves_castle_and_empty_unlimited():
    cap = supply_capacity(square_supply())
    assert np.isinf(cap[reading("empty", 0)]) and np.isinf(cap[reading("castle", 0)])
    z = np.stack([logits_for("empty", 0)] * 6)
    t, _, _, _ = decode(z, capacity=cap)
    assert all(TERRAINS[i] == "empty" for i in t)
    assert cap[reading("mine", 3)] == 1 and cap[reading("field", 2)] == 0


def test_preprocess_dims_only_the_margin():
    crops = np.full((2, 10, 10, 3), 200, np.uint8)
    x = preprocess(crops, margin=2, margin_weight=0.5)
    assert x.shape == (2, 3, 10, 10)
    assert np.allclose(x[:, :, 2:8, 2:8], 200 / 255) and np.allclose(x[:, :, :2, :], 100 / 255)
    assert np.allclose(x[:, :, :, 8:], 100 / 255)
    assert np.allclose(preprocess(crops), 200 / 255)


class _OrientationNet:
    """A stand-in network whose first logit is the mean of each crop's top row of pixels."""

    def setInput(self, blob):
        self.blob = blob

    def forward(self):
        out = np.zeros((len(self.blob), 12), np.float32)
        out[:, 0] = self.blob[:, :, 0, :].mean(axis=(1, 2))
        return out


def _stub_classifier(tta):
    clf = SquareClassifier(None, plain_classify_cfg(tta=tta), load_network=False)
    clf.net, clf.margin, clf.margin_weight = _OrientationNet(), 0, 1.0
    return clf


@pytest.mark.parametrize("tta, turns", [(4, (0, 1, 2, 3)), (True, (0, 1, 2, 3)), (2, (0, 2)),
                                        (1, (0,)), (False, (0,))])
def test_tta_averages_the_quarter_turns_asked_for(tta, turns):
    """Each edge of the crop lit differently: each quarter turn brings another one to the top."""
    crop = np.zeros((1, 88, 88, 3), np.uint8)
    for k, level in enumerate((200, 120, 60, 20)):      # top, then the edges turns bring up
        np.rot90(crop[0], -k)[0, 20:68] = level
    once = _stub_classifier(1)
    views = [once.logits(np.rot90(crop, k, axes=(1, 2)))[0, 0] for k in range(4)]
    assert len(set(np.round(views, 4))) == 4              # the four views differ
    got = _stub_classifier(tta).logits(crop)[0, 0]
    assert got == pytest.approx(np.mean([views[k] for k in turns]), rel=1e-5)


def test_tta_setting_is_checked():
    clf = SquareClassifier(None, plain_classify_cfg(tta=3), load_network=False)
    clf.net = _OrientationNet()
    with pytest.raises(ValueError, match="tta must be 1, 2 or 4"):
        clf.logits(np.zeros((1, 88, 88, 3), np.uint8))


def test_crops_read_again_cost_only_the_turns_not_read_yet(monkeypatch):
    """A grid read as cut (to compare frames) and then in full runs the network once per
    turn, and the full reading is the same numbers as a fresh one."""
    from vision import config

    cfg = dict(config.load()["classify"], tta=2)
    clf = SquareClassifier(None, cfg)
    calls = []
    real = clf._forward

    def counted(crops, **kw):     # the turn as cut gives the features too, in the same run
        calls.append(crops.shape[0])
        return real(crops, **kw)

    monkeypatch.setattr(clf, "_forward", counted)
    rng = np.random.default_rng(5)
    crops = rng.integers(0, 255, (6, clf.input_size, clf.input_size, 3), dtype=np.uint8)
    first = clf.logits(crops, first_turn_only=True)
    assert len(calls) == 1
    full = clf.logits(crops)
    assert len(calls) == 2                       # only the upside-down turn was new
    assert not np.array_equal(first, full)       # the turns differ, and both count
    fresh = SquareClassifier(None, cfg).logits(crops)
    assert np.array_equal(full, fresh)
    other = crops.copy()
    other[0, 0, 0, 0] ^= 1                       # other crops: read anew
    clf.logits(other)
    assert len(calls) == 4


def test_the_least_recently_read_crop_set_is_forgotten_first(monkeypatch):
    """The network's memo keeps ``TURNS_KEPT`` crop sets: a set read again while others are
    read stays (a hard photo's search comes back to its first windows); the set read longest
    ago is the one read anew."""
    from vision.read import classify

    monkeypatch.setattr(classify, "TURNS_KEPT", 3)
    clf = _stub_classifier(1)               # one turn: one network run a new set
    calls = []
    real = clf._forward

    def counted(crops, **kw):
        calls.append(crops.shape[0])
        return real(crops, **kw)

    monkeypatch.setattr(clf, "_forward", counted)
    rng = np.random.default_rng(7)
    sets = [rng.integers(0, 255, (2, clf.input_size, clf.input_size, 3), dtype=np.uint8)
            for _ in range(4)]
    first = clf.logits(sets[0])
    clf.logits(sets[1])
    clf.logits(sets[2])
    assert len(calls) == 3
    again = clf.logits(sets[0])          # read again: remembered, now the most recent
    assert len(calls) == 3 and np.array_equal(first, again)
    clf.logits(sets[3])                  # a fourth set: sets[1], read longest ago, goes
    assert len(calls) == 4
    clf.logits(sets[0])
    clf.logits(sets[2])
    assert len(calls) == 4
    clf.logits(sets[1])
    assert len(calls) == 5


def test_the_identity_is_the_model_files_and_stable_across_loads(tmp_path):
    from models import MODELS_DIR

    squares = (MODELS_DIR / "squares.onnx").read_bytes()
    (tmp_path / "a.onnx").write_bytes(squares)
    (tmp_path / "b.onnx").write_bytes(squares)
    (tmp_path / "c.onnx").write_bytes((MODELS_DIR / "tiles.onnx").read_bytes())
    cfg = plain_classify_cfg()
    loaded = SquareClassifier(tmp_path / "a.onnx", cfg)
    again = SquareClassifier(tmp_path / "a.onnx", cfg)
    copy = SquareClassifier(tmp_path / "b.onnx", cfg, load_network=False)
    other = SquareClassifier(tmp_path / "c.onnx", cfg, load_network=False)
    assert loaded.identity == again.identity == copy.identity
    assert isinstance(loaded.identity, str) and len(loaded.identity) == 16
    assert other.identity != loaded.identity
    (tmp_path / "b.onnx").write_bytes(squares + b"\0")  # one byte more: another file
    assert SquareClassifier(tmp_path / "b.onnx", cfg, load_network=False).identity \
        != loaded.identity
