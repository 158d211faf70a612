"""vision.find.second_net and the objective's part in it: the second tile network's search, asked
when the first found no 5x5 / 7x7, taken only for a frame with a sure castle."""
import numpy as np
import pytest

from vision import config

from vision.find import second_net
from vision.find.search import Candidate, Objective
from vision.errors import PhotoError
from vision.read.labels import TERRAINS


def _found(rows, cols, castle_logit):
    """A window of ``rows x cols`` squares, all forest but one with ``castle_logit`` for castle."""
    logits = np.zeros((rows * cols, len(TERRAINS) + 4), np.float32)
    logits[:, TERRAINS.index("forest")] = 5.0
    logits[0, TERRAINS.index("castle")] = castle_logit
    return Candidate(np.float32([[0, 0], [cols, 0], [cols, rows], [0, rows]]), rows, cols,
                     5 if max(rows, cols) <= 5 else 7, (), logits)


class _Search:
    """Stands in for the reader's search: answers by the network the detector was given
    (``[detect] tile_net``) and remembers what it was asked."""

    def __init__(self, answers):
        self.answers, self.asked = answers, []

    def __call__(self, cfg):
        net = cfg["detect"]["tile_net"]
        self.asked.append((net, cfg["reader"]["second_tile_net"]))
        if net not in self.answers:
            raise PhotoError("no kingdom found")
        return self.answers[net]


def _cfg(second="b.onnx"):
    cfg = config.load()
    cfg["reader"]["second_tile_net"] = second
    return cfg


def test_the_second_search_runs_once_with_the_second_network_and_leaves_the_config_alone():
    cfg, other = _cfg(), _found(7, 7, 20.0)
    search = _Search({"b.onnx": other})
    assert second_net.second_look(cfg, search) is other
    # asked once, with the second network, and with no second look of its own
    assert search.asked == [("b.onnx", "")]
    assert cfg["detect"]["tile_net"] != "b.onnx" and cfg["reader"]["second_tile_net"] == "b.onnx"


def test_no_second_network_or_no_kingdom_found_by_it_is_none():
    search = _Search({"": _found(5, 5, 20.0)})
    assert second_net.second_look(_cfg(""), search) is None and search.asked == []
    assert second_net.second_look(_cfg(), _Search({})) is None


def test_a_5x5_or_7x7_or_a_surely_counted_short_window_is_not_doubted():
    cfg = _cfg()
    objective = Objective(cfg, 1.0)
    assert not objective.doubts(_found(7, 7, 20.0), 0.0)
    assert objective.doubts(None, 0.0)
    sure = float(cfg["reader"]["past_short_count_below"])
    half_built = _found(3, 4, 20.0)
    assert not objective.doubts(half_built, sure)
    assert objective.doubts(half_built, sure - 0.1)         # unsure, it is asked
    # a 5x6 is never a sure count (more often a 5x5 with a line of table read as tiles)
    assert objective.doubts(_found(5, 6, 20.0), 1.0)


def test_the_second_window_is_taken_only_as_a_frame_with_a_sure_castle():
    cfg = _cfg()
    objective = Objective(cfg, 1.0)
    sure = float(cfg["reader"]["sure_castle_odds"])
    assert 0 < sure < 1
    short, frame = _found(6, 3, 20.0), _found(5, 5, 20.0)
    assert objective.pick_second(short, frame) is frame
    assert objective.pick_second(None, frame) is frame
    # an unsure castle (forest logit 5, castle 0: odds about 0.007), another short window or
    # nothing does not win: a half-built kingdom keeps its reading, nothing stays nothing
    for weak in (_found(5, 5, 0.0), _found(4, 5, 20.0), None):
        assert objective.pick_second(short, weak) is short
        assert objective.pick_second(None, weak) is None


def test_the_reader_asks_the_second_network_when_the_first_finds_nothing(monkeypatch):
    """Reader.find: the first network's search finds no outline, the second's a 5x5 with a
    sure castle; with no second network set, no kingdom."""
    from vision import Reader
    from vision.find import search
    from vision.find.detect import Outline

    reader = Reader()
    first = reader.cfg["detect"]["tile_net"]
    assert first and reader.cfg["reader"]["second_tile_net"] not in ("", first)
    corners = np.float32([[0, 0], [5, 0], [5, 5], [0, 5]])
    kingdom = _found(5, 5, 20.0)
    kingdom = Candidate(corners, 5, 5, 5, (), kingdom.logits,
                        reader.classifier.read_logits(kingdom.logits, 5, 5))
    nets = []

    def outlines(image, cfg, size):
        nets.append(cfg["detect"]["tile_net"])
        return iter([] if cfg["detect"]["tile_net"] == first else [Outline(corners, 5, 5, 0.9)])

    monkeypatch.setattr(search, "outlines", outlines)
    monkeypatch.setattr(reader, "framed", lambda *a, **k: kingdom)
    monkeypatch.setitem(reader.cfg["reader"], "table_fallback", False)
    image = np.zeros((60, 60, 3), np.uint8)
    assert reader.find(image) is kingdom
    assert nets == [first, reader.cfg["reader"]["second_tile_net"]]
    monkeypatch.setitem(reader.cfg["reader"], "second_tile_net", "")
    with pytest.raises(PhotoError, match="no kingdom"):
        reader.find(image)
