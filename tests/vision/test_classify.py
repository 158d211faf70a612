import numpy as np
import pytest

from tests.conftest import shared_path
from vision.classify import (MAX_CROWNS, MODELS_DIR, N_CROWNS, TERRAINS, VALID, SquareClassifier,
                             SquareReading, decode, square_supply, supply_flags)


def logits_for(terrain: str, crowns: int, strength: float = 8.0) -> np.ndarray:
    z = np.zeros(len(TERRAINS) + N_CROWNS)
    z[TERRAINS.index(terrain)] = strength
    z[len(TERRAINS) + crowns] = strength
    return z


def test_prior_matches_the_rules():
    assert MAX_CROWNS["field"] == MAX_CROWNS["forest"] == MAX_CROWNS["lake"] == 1
    assert MAX_CROWNS["grassland"] == MAX_CROWNS["swamp"] == 2
    assert MAX_CROWNS["mine"] == 3
    assert MAX_CROWNS["castle"] == MAX_CROWNS["empty"] == 0


def test_prior_matches_the_domino_set():
    supply = square_supply(shared_path("rules", "kingdomino-dominoes.csv"))
    for (terrain, crowns), n in supply.items():
        assert VALID[TERRAINS.index(terrain), crowns], (terrain, crowns)
    assert supply[("mine", 3)] == 1 and supply[("mine", 0)] == 1


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
    if not (MODELS_DIR / "squares.onnx").exists():
        pytest.skip("no trained model in models/ (run `kingdomino train`)")
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
    clf = SquareClassifier(None, {"cell": 64, "crop_margin": 12, "crown_prior": "marginal"},
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
    return np.stack([logits_for(t, c) for t, c in cells])


def test_a_kingdom_without_a_castle_flags_its_most_castle_like_square():
    cells = [("field", 0)] * 4
    lg = _grid_logits(cells)
    lg[2, TERRAINS.index("castle")] = 6.0   # still read as field, but the castle is next best
    clf = SquareClassifier(None, {"cell": 64, "crop_margin": 12}, load_network=False)
    grid = clf.read_logits(lg, 2, 2)
    flagged = [(r, c) for r in range(2) for c in range(2) if grid[r][c].flags]
    assert flagged == [(1, 0)]


def test_two_castles_are_both_flagged():
    clf = SquareClassifier(None, {"cell": 64, "crop_margin": 12}, load_network=False)
    grid = clf.read_logits(_grid_logits([("castle", 0), ("field", 0), ("castle", 0), ("lake", 0)]), 2, 2)
    assert [bool(sq.flags) for row in grid for sq in row] == [True, False, True, False]
