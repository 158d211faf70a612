"""Squares that look like no Kingdomino tile, and Queendomino's towns (vision.read.novelty): the
distance from a terrain's features, the flags and reasons, the towns under each rule set, the
frame's table odds, and the shipped statistics."""
from __future__ import annotations

import cv2
import numpy as np
import pytest

from engine.messages import (TOWN_LIKE, TOWN_READ, TOWNS_WARNING, UNLIKE_TILES, UNLIKE_WARNING,
                             Message)
from tests.conftest import shared_path
from vision import config
from vision.read import novelty
from vision.read.classify import SquareReading
from vision.read.labels import TERRAINS
from vision.read.review import review_reasons

CFG = {"flag_above": 10.0, "town_near": 0.9, "town_margin": 0.02, "frame_empty_odds": 0.9}


def _unit(*values) -> np.ndarray:
    v = np.asarray(values, np.float32)
    return v / np.linalg.norm(v)


def _stats(towns=(), bank=()) -> novelty.Statistics:
    """Two features; every terrain's mean at (1, 0), the castle's at (0, 1); unit spread."""
    means = np.tile(np.array([1.0, 0.0]), (1, len(TERRAINS), 1))
    means[0, TERRAINS.index("castle")] = (0.0, 1.0)
    return novelty.Statistics(means, np.eye(2) * 100.0,
                              np.array(towns, np.float32).reshape(len(towns), 2),
                              np.array(bank, np.float32).reshape(len(bank), 2))


def test_a_statistics_file_loads_back_and_one_for_other_terrains_is_refused(tmp_path):
    stats = _stats(towns=[_unit(1, 1)], bank=[_unit(1, 0)])
    good = tmp_path / "good.npz"
    stats.save(good)
    back = novelty.load(str(good))
    assert np.allclose(back.means, stats.means) and np.allclose(back.precision, stats.precision)
    assert back.towns.shape == (1, 2) and back.bank.shape == (1, 2)
    with np.load(good) as data:
        fields = {k: data[k] for k in data.files}
    fields["terrains"] = np.array(list(reversed(TERRAINS)))
    other = tmp_path / "other.npz"
    np.savez(other, **fields)
    with pytest.raises(ValueError, match="other.npz was built for the terrains"):
        novelty.load(str(other))
    assert novelty.load(str(tmp_path / "absent.npz")) is None and novelty.load("") is None


def test_statistics_of_another_network_are_not_compared_with(tmp_path, caplog):
    """Another network's features lie in another space: every square would look unlike the
    tiles (and every window like table: a fold's network found no kingdom in any dev phone
    photo). Statistics are used only with the network they name; a file from before they
    named one, with none."""
    from types import SimpleNamespace

    path = tmp_path / "stats.npz"
    stats = _stats()
    novelty.Statistics(stats.means, stats.precision, stats.towns, stats.bank,
                       network="aaaa").save(path)
    assert novelty.load(str(path)).network == "aaaa"
    assert novelty.for_network(str(path), SimpleNamespace(identity="aaaa")) is not None
    with caplog.at_level("WARNING", logger="vision.read.novelty"):
        assert novelty.for_network(str(path), SimpleNamespace(identity="bbbb")) is None
    assert "another square network" in caplog.text
    unnamed = tmp_path / "unnamed.npz"
    stats.save(unnamed)
    assert novelty.load(str(unnamed)).network == ""
    with caplog.at_level("WARNING", logger="vision.read.novelty"):
        assert novelty.for_network(str(unnamed), SimpleNamespace(identity="bbbb")) is None
    assert "a square network it does not name" in caplog.text
    assert novelty.for_network(str(unnamed), SimpleNamespace()) is not None   # a stand-in
    # choosing a window with another network's statistics: the table odds as they are
    logits = np.zeros((2, len(TERRAINS) + 4), np.float32)
    logits[:, TERRAINS.index("field")] = 8.0
    clf = _Known([[1.0, 0.0], [0.0, 1.0]])
    cfg = {"novelty": dict(CFG, statistics=str(path))}
    clf.identity = "aaaa"
    from vision.find import frame

    assert frame.unlike_as_table(clf, logits, np.full(2, 0.01), cfg).tolist() == \
        pytest.approx([0.01, 0.9])
    clf.identity = "bbbb"
    assert frame.unlike_as_table(clf, logits, np.full(2, 0.01), cfg).tolist() == \
        pytest.approx([0.01, 0.01])


def test_a_square_far_from_its_terrain_s_features_is_unlike_the_tiles():
    stats = _stats()
    feats = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 1.0], [0.0, 1.0]])
    terrains = ["field", "field", "castle", "empty"]
    d = novelty.distances(stats, feats, terrains)
    assert d[0] == pytest.approx(0.0) and d[2] == pytest.approx(0.0)
    assert d[1] == pytest.approx(200.0)          # (1 + 1) x 100: a field that looks like no field
    unlike = novelty.unlike_tiles(terrains, d, CFG)
    # the bare square is never flagged so, however far: the table is not a tile
    assert unlike.tolist() == [False, True, False, False]
    assert not novelty.unlike_tiles(terrains, d, dict(CFG, flag_above=0)).any()


def test_a_square_whose_features_are_not_known_is_not_flagged():
    d = novelty.distances(_stats(), np.full((2, 2), np.nan), ["field", "castle"])
    assert d.tolist() == [0.0, 0.0]


def test_a_square_nearer_a_town_than_any_known_square_looks_like_a_town():
    town, swamp = _unit(0.2, 1.0), _unit(1.0, 0.2)
    stats = _stats(towns=[town], bank=[swamp])
    feats = np.stack([_unit(0.25, 1.0), _unit(1.0, 0.25), _unit(0.25, 1.0)])
    like = novelty.town_like(stats, feats, ["swamp", "swamp", "empty"], CFG)
    assert like.tolist() == [True, False, False]
    # no town examples: nothing is a town
    assert not novelty.town_like(_stats(bank=[swamp]), feats, ["swamp"] * 3, CFG).any()


def test_the_reasons_name_a_square_unlike_the_tiles_and_one_like_a_town():
    grid = [[SquareReading("swamp", 0, 1.0), SquareReading("castle", 0, 1.0),
             SquareReading("field", 0, 1.0)]]
    rcfg = config.load()["review"]
    reasons = review_reasons(grid, rcfg, unlike={(0, 1)}, towns={(0, 0)})
    assert [m.msgid for m in reasons[(0, 0)]] == [TOWN_LIKE]
    assert [m.msgid for m in reasons[(0, 1)]] == [UNLIKE_TILES]
    assert (0, 2) not in reasons
    said = novelty.warnings(2, 0)
    assert said == ["2 square(s) look like no Kingdomino tile: check them"]
    assert said[0].msgid == UNLIKE_WARNING and novelty.warnings(0, 0) == []


def _reading(towns):
    from vision.reader import Reading

    cells = [[{"terrain": "swamp", "crowns": 0, "confidence": 0.99} for _ in range(5)]
             for _ in range(5)]
    cells[2][2] = {"terrain": "castle", "crowns": 0, "confidence": 1.0}
    reasons = {f"{r},{c}": [Message(TOWN_LIKE)] for r, c in towns}
    return Reading(size=5, cells=cells, review=[list(t) for t in towns],
                   corners=[[0, 0], [5, 0], [5, 5], [0, 5]],
                   homography=np.eye(3).tolist(), rows=5, cols=5,
                   warnings=novelty.warnings(0, len(towns)), reasons=reasons,
                   towns=[list(t) for t in towns])


def test_under_queendomino_rules_the_towns_are_read_as_towns():
    from kingdomino import service

    reading = _reading([(0, 0), (0, 1)])
    queen = service.score_reading(reading, rules="queendomino")
    assert queen["cells"][0][0]["terrain"] == "town" and queen["cells"][0][1]["terrain"] == "town"
    assert queen["cells"][0][2]["terrain"] == "swamp"
    assert not any(getattr(w, "msgid", None) == TOWNS_WARNING for w in queen["warnings"])
    assert [m.msgid for m in reading.with_towns().reasons["0,0"]] == [TOWN_READ]
    assert queen["review"] == [[0, 0], [0, 1]]            # still a person's to check
    base = service.score_reading(reading, rules="kingdomino")
    assert base["cells"][0][0]["terrain"] == "swamp"
    assert any(getattr(w, "msgid", None) == TOWNS_WARNING for w in base["warnings"])
    assert base["review"] == [[0, 0], [0, 1]]


class _Known:
    """A classifier that knows the features of the squares it read (by their logits)."""

    t_terrain = 1.0

    def __init__(self, feats):
        self.feats = np.asarray(feats, np.float32)

    def features_of(self, logits):
        return self.feats


def test_choosing_a_window_a_square_unlike_the_tiles_counts_as_table(monkeypatch):
    from vision.find import frame

    monkeypatch.setattr(novelty, "load", lambda name: _stats())
    logits = np.zeros((3, len(TERRAINS) + 4), np.float32)
    logits[:, TERRAINS.index("field")] = 8.0                # all three read as fields ...
    clf = _Known([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0]])      # ... the second unlike any field
    cfg = {"novelty": dict(CFG, statistics="x")}
    p = frame.unlike_as_table(clf, logits, np.full(3, 0.01), cfg)
    assert p.tolist() == pytest.approx([0.01, 0.9, 0.01])
    off = {"novelty": dict(CFG, statistics="x", frame_empty_odds=0.0)}
    assert frame.unlike_as_table(clf, logits, np.full(3, 0.01), off).tolist() == \
        pytest.approx([0.01] * 3)


def test_the_classifier_knows_the_features_of_the_squares_it_read():
    from vision.read.classify import SquareClassifier

    clf = SquareClassifier()
    rng = np.random.default_rng(0)
    crops = rng.integers(0, 255, (3, clf.input_size, clf.input_size, 3), np.uint8)
    logits = clf.logits(crops)
    assert np.allclose(clf.features_of(logits), clf.features(crops))
    assert np.isnan(clf.features_of(logits + 1.0)).all()


def test_the_shipped_statistics_fit_the_shipped_classifier():
    from vision.read.classify import SquareClassifier

    stats = novelty.load(config.load()["novelty"]["statistics"])
    assert stats is not None, "models/novelty.npz is missing: python3 -m vision.lab.training.novelty"
    clf = SquareClassifier()
    width = clf.features(np.zeros((1, clf.input_size, clf.input_size, 3), np.uint8)).shape[1]
    assert stats.means.shape[1:] == (len(TERRAINS), width)
    assert stats.precision.shape == (width, width) and stats.bank.shape[1] == width
    assert len(stats.towns) > 0
    assert stats.network == clf.identity, \
        "models/novelty.npz was built with another network: python3 -m vision.lab.training.novelty"


def test_the_queendomino_photos_towns_read_as_towns_or_flagged():
    """The labelled Queendomino photos read from their labelled outlines: every town square
    is read as a town under the Queendomino rules and flagged under Kingdomino's, with the
    warning. (The town examples come from these photos: this holds what ships, it does not
    measure how well towns of another game are read.)"""
    shared_path("datasets", "queendomino-photos", "images")
    from kingdomino import service
    from vision.lab.datasets import load_queendomino

    photo = next(p for p in load_queendomino() if p.name.endswith("_16.jpg"))
    towns = [(r, c) for r in range(photo.rows) for c in range(photo.cols)
             if photo.terrain[r][c] == "town"]
    assert towns
    image = cv2.imread(str(photo.path))
    reading = service.reader().read(image, corners=photo.corners, rows=photo.rows,
                                    cols=photo.cols)
    base = service.score_reading(reading, rules="kingdomino")
    assert all([r, c] in base["review"] for r, c in towns)
    assert any(getattr(w, "msgid", None) == TOWNS_WARNING for w in base["warnings"])
    queen = service.score_reading(reading, rules="queendomino")
    assert all(queen["cells"][r][c]["terrain"] == "town" for r, c in towns)
