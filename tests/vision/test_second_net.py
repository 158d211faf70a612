"""vision.find.second_net: the second tile network's reading, asked when the first found no 5x5 / 7x7."""
from types import SimpleNamespace

import numpy as np
import pytest

from vision import config

from vision.find import second_net
from vision.errors import PhotoError
from vision.read.labels import TERRAINS
from vision.reader import Reader


def _found(rows, cols, castle_logit):
    """A reading of ``rows x cols`` squares, all forest but one with ``castle_logit`` for castle."""
    logits = np.zeros((rows * cols, len(TERRAINS) + 4), np.float32)
    logits[:, TERRAINS.index("forest")] = 5.0
    logits[0, TERRAINS.index("castle")] = castle_logit
    return SimpleNamespace(rows=rows, cols=cols, logits=logits)


class FakeReader:
    """``find`` answers by the network the detector was given (``[detect] tile_net``)."""

    def __init__(self, second, answers):
        self.cfg = config.load()
        self.cfg["reader"]["second_tile_net"] = second
        self.classifier = SimpleNamespace(t_terrain=1.0)
        self.answers = answers
        self.asked = []

    _sure_count = Reader._sure_count       # the reader's own test of a half-built kingdom

    def find(self, image, size=None):
        net = self.cfg["detect"]["tile_net"]
        self.asked.append((net, self.cfg["reader"]["second_tile_net"], size))
        found = self.answers.get(net)
        if found is None:
            raise PhotoError("no kingdom found")
        return found


def test_a_5x5_or_7x7_reading_is_kept_without_asking():
    rd = FakeReader("b.onnx", {"b.onnx": _found(5, 5, 20.0)})
    best = _found(7, 7, 20.0)
    assert second_net.second_opinion(rd, None, None, best) is best
    assert rd.asked == []


def test_nothing_found_takes_the_second_networks_frame_with_a_sure_castle_asking_once():
    other = _found(7, 7, 20.0)
    rd = FakeReader("b.onnx", {"b.onnx": other})
    assert second_net.second_opinion(rd, None, 7, None) is other
    # asked once, with the second network, and with no second opinion of its own; the
    # reader's own configuration is not changed
    assert rd.asked == [("b.onnx", "", 7)]
    assert rd.cfg["detect"]["tile_net"] != "b.onnx"
    assert rd.cfg["reader"]["second_tile_net"] == "b.onnx"
    # a window short of a frame, or a frame with an unsure castle, is no kingdom there (loose
    # dominoes or a mat on a table with none)
    for weak in (_found(4, 3, 20.0), _found(5, 5, 0.0)):
        with pytest.raises(PhotoError, match="no kingdom"):
            second_net.second_opinion(FakeReader("b.onnx", {"b.onnx": weak}), None, None, None)


def test_a_short_window_gives_way_only_to_a_frame_with_a_sure_castle():
    short = _found(6, 3, 20.0)
    sure = float(config.load()["reader"]["sure_castle_odds"])
    assert 0 < sure < 1
    rd = FakeReader("b.onnx", {"b.onnx": _found(5, 5, 20.0)})
    assert second_net.second_opinion(rd, None, None, short).rows == 5
    # an unsure castle (forest logit 5, castle 0: odds about 0.007) does not win
    rd = FakeReader("b.onnx", {"b.onnx": _found(5, 5, 0.0)})
    assert second_net.second_opinion(rd, None, None, short) is short
    # nor does another short window (a half-built kingdom keeps its reading)
    rd = FakeReader("b.onnx", {"b.onnx": _found(4, 5, 20.0)})
    assert second_net.second_opinion(rd, None, None, short) is short
    # nor nothing
    rd = FakeReader("b.onnx", {})
    assert second_net.second_opinion(rd, None, None, short) is short


def test_no_kingdom_from_either_or_no_second_network_is_a_photo_error():
    with pytest.raises(PhotoError, match="no kingdom"):
        second_net.second_opinion(FakeReader("b.onnx", {}), None, None, None)
    rd = FakeReader("", {"": _found(5, 5, 20.0)})
    with pytest.raises(PhotoError, match="no kingdom"):
        second_net.second_opinion(rd, None, None, None)
    assert rd.asked == []
    short = _found(3, 3, 20.0)
    assert second_net.second_opinion(rd, None, None, short) is short


def test_a_short_window_the_detector_counted_surely_is_kept_without_asking():
    rd = FakeReader("b.onnx", {"b.onnx": _found(5, 5, 20.0)})
    sure = float(rd.cfg["reader"]["past_short_count_below"])
    half_built = _found(3, 4, 20.0)
    assert second_net.second_opinion(rd, None, None, half_built, sure) is half_built
    assert rd.asked == []
    # unsure, it is asked
    assert second_net.second_opinion(rd, None, None, half_built, sure - 0.1).rows == 5
    # a 5x6 is never a sure count (more often a 5x5 with a line of table read as tiles)
    assert second_net.second_opinion(rd, None, None, _found(5, 6, 20.0), 1.0).rows == 5


def test_the_second_search_uses_the_second_network_when_find_was_set_on_the_reader():
    """monkeypatch.setattr(reader, "find", ...) leaves, once undone, a ``find`` bound to that
    reader in its own attributes: a copy of the reader would search with the first network
    (the full test run recursed so, once)."""
    rd = FakeReader("b.onnx", {"b.onnx": _found(5, 5, 20.0)})
    rd.find = rd.find
    assert second_net.second_opinion(rd, None, None, None).rows == 5
    assert rd.asked == [("b.onnx", "", None)]
