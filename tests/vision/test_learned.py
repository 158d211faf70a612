"""Reading with what corrections taught (vision.read.learned): the nearest-example vote, the
square classifier's features, examples cut from a corrected photo, and the online measure."""
from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from tests.conftest import shared_path
from vision.read import learned
from vision.read.crops import cell_crops, rectify
from vision.read.labels import N_CROWNS, TERRAINS

ROOT = Path(__file__).resolve().parents[2]
NT = len(TERRAINS)
CFG = {"near": 0.93, "full": 0.97, "neighbours": 5, "trust": 0.95}


def _unit(*values) -> np.ndarray:
    v = np.asarray(values, np.float32)
    return v / np.linalg.norm(v)


def _logits(terrain: str, crowns: int = 0, margin: float = 6.0) -> np.ndarray:
    out = np.zeros(NT + N_CROWNS, np.float32)
    out[TERRAINS.index(terrain)] = margin
    out[NT + crowns] = margin
    return out


def _read(logits: np.ndarray) -> tuple[str, int]:
    return TERRAINS[int(np.argmax(logits[:NT]))], int(np.argmax(logits[NT:]))


# ---------------------------------------------------------------- the vote, numbers alone

def test_a_near_example_moves_a_square_and_a_far_one_leaves_it_alone():
    examples = learned.Examples([learned.Example(_unit(1, 0, 0), "forest", 1, id="a")])
    feats = np.stack([_unit(1, 0.05, 0), _unit(0, 1, 0)])     # like the example; unlike it
    logits = np.stack([_logits("field"), _logits("field")])
    out, used = learned.adapt(logits, feats, examples, CFG)
    assert _read(out[0]) == ("forest", 1)
    assert np.array_equal(out[1], logits[1])          # untouched, to the bit
    assert used == 1


@pytest.mark.parametrize("terrain, crowns", [("castle", 0), ("empty", 0), ("mine", 3),
                                             ("swamp", 2)])
def test_the_vote_covers_castle_table_and_crowns(terrain, crowns):
    examples = learned.Examples([learned.Example(_unit(0, 0, 1), terrain, crowns)])
    out, used = learned.adapt(_logits("lake", 1)[None], _unit(0, 0.02, 1)[None], examples, CFG)
    assert _read(out[0]) == (terrain, crowns) and used == 1


def test_a_square_read_as_its_examples_keeps_its_reading_and_a_sure_one_its_odds():
    examples = learned.Examples([learned.Example(_unit(1, 0), "field", 0)])
    p = lambda lg: np.exp(lg[:NT]) / np.exp(lg[:NT]).sum()   # noqa: E731
    for margin in (3.0, 12.0):
        logits = _logits("field", 0, margin=margin)[None]
        out, _ = learned.adapt(logits, _unit(1, 0)[None], examples, CFG)
        assert _read(out[0]) == ("field", 0)
        assert p(out[0])[0] >= p(logits[0])[0]
    assert p(out[0])[0] == pytest.approx(p(logits[0])[0], abs=1e-4)   # a sure one: as it was


def test_examples_below_the_near_threshold_do_not_count():
    examples = learned.Examples([learned.Example(_unit(1, 0), "mine", 2)])
    alike = np.cos(np.arccos(CFG["near"]) * 1.05)         # a little less alike than "near"
    feats = np.array([[alike, np.sqrt(1 - alike ** 2)]], np.float32)
    out, used = learned.adapt(_logits("field")[None], feats, examples, CFG)
    assert used == 0 and _read(out[0]) == ("field", 0)


def test_used_counts_distinct_examples_and_only_the_nearest_vote():
    cfg = dict(CFG, neighbours=2)
    examples = learned.Examples([learned.Example(_unit(1, 0, 0), "forest", 0, id=i)
                                 for i in range(4)])
    out, used = learned.adapt(np.stack([_logits("lake")] * 3),
                              np.stack([_unit(1, 0, 0)] * 3), examples, cfg)
    assert used == 2                                  # the same two examples for every square
    assert all(_read(row)[0] == "forest" for row in out)


def test_examples_of_another_classifier_are_refused():
    examples = learned.Examples([learned.Example(_unit(1, 0, 0), "forest", 0)])
    with pytest.raises(ValueError, match="another square classifier"):
        learned.adapt(_logits("field")[None], _unit(1, 0)[None], examples, CFG)


def test_an_example_the_game_has_none_of_is_refused():
    with pytest.raises(ValueError):
        learned.Example(_unit(1, 0), "castle", 1)
    with pytest.raises(ValueError):
        learned.Example(_unit(1, 0), "sea", 0)


# ---------------------------------------------------------------- the shipped network

@pytest.fixture(scope="module")
def reader():
    from vision import Reader

    return Reader()


@pytest.fixture(scope="module")
def sample(reader):
    """The rendered 5x5 sample, its reading (no examples) and its true cells."""
    image = cv2.imread(str(ROOT / "samples" / "kingdom-5x5.jpg"))
    truth = json.loads((ROOT / "samples" / "kingdom-5x5.truth.json").read_text())["cells"]
    reader.classifier.set_examples(None)
    return image, reader.read(image), truth


def _reader_crops(reader, image, reading) -> np.ndarray:
    """The crops exactly as ``Reader.read_board`` cuts them."""
    cc = reader.ccfg
    board, _ = rectify(image, reading.corners, reading.rows, reading.cols, cc["cell"],
                       cc["board_margin"])
    return cell_crops(board, reading.rows, reading.cols, cc["cell"],
                      board_margin=cc["board_margin"], crop_margin=cc["crop_margin"])


class _CountedNet:
    """The classifier's network, its runs counted."""

    def __init__(self, net):
        self.net, self.runs = net, []

    def setInput(self, blob):
        self.net.setInput(blob)

    def forward(self, *names):
        self.runs.append(names)
        return self.net.forward(*names)


def test_features_have_length_one_and_come_from_the_logits_run(reader, sample):
    from vision.read.classify import SquareClassifier

    image, reading, _ = sample
    crops = _reader_crops(reader, image, reading)
    clf = SquareClassifier()
    clf.net = counted = _CountedNet(clf.net)
    clf.set_examples([learned.Example(_unit(*([1] + [0] * 127)), "field", 0)])
    clf.logits(crops, first_turn_only=True)
    feats = clf.features(crops)
    assert len(counted.runs) == 1 and len(counted.runs[0][0]) == 2   # one run, both outputs
    assert feats.dtype == np.float32 and feats.shape == (len(crops), 128)
    assert np.allclose(np.linalg.norm(feats, axis=1), 1.0, atol=1e-5)


def test_without_examples_the_logits_are_todays(reader, sample):
    """The network read as a file (one output) and with its features added give the same
    logits, to the bit; so do no examples, and examples that are like no square."""
    from vision.read.classify import SquareClassifier

    image, reading, _ = sample
    crops = _reader_crops(reader, image, reading)
    clf = SquareClassifier()
    plain = SquareClassifier()
    plain.net, plain.outputs = cv2.dnn.readNetFromONNX(str(plain.path)), None
    want = plain.logits(crops)
    assert np.array_equal(clf.logits(crops), want)
    clf.set_examples([])
    assert np.array_equal(clf.logits(crops), want)
    far = -clf.features(crops).mean(axis=0)
    clf.set_examples([learned.Example(far, "mine", 3)])
    assert np.array_equal(clf.logits(crops), want) and clf.last_used == 0


def test_a_corrections_examples_are_the_readers_crops(reader, sample):
    image, reading, _ = sample
    crops = _reader_crops(reader, image, reading)
    cells = [(1, 2, "mine", 2), (4, 0, "mine", 2)]
    got = learned.examples_from_photo(reader.classifier, image, reading.corners, reading.rows,
                                      reading.cols, cells)
    assert [g[:4] for g in got] == cells
    want = reader.classifier.features(crops[[1 * 5 + 2, 4 * 5 + 0]])
    assert np.array_equal(np.stack([g[4] for g in got]), want)
    thumb = cv2.imdecode(np.frombuffer(got[0][5], np.uint8), cv2.IMREAD_COLOR)
    assert thumb.shape == crops[0].shape


def test_a_square_off_the_photo_teaches_nothing(reader, sample):
    image, reading, _ = sample
    far_row = 40                                       # a grid carried on far below the photo
    got = learned.examples_from_photo(reader.classifier, image, reading.corners, reading.rows,
                                      reading.cols, [(0, 0, "field", 1), (far_row, 0, "lake", 0)])
    assert [g[:2] for g in got] == [(0, 0)]
    with pytest.raises(ValueError):
        learned.examples_from_photo(reader.classifier, image, reading.corners, 5, 5,
                                    [(-1, 0, "lake", 0)])


def _hue_turned(image, amount: int) -> np.ndarray:
    """The photo under another lamp: its hue turned (OpenCV's 0-180 scale)."""
    hsv = cv2.cvtColor(image, cv2.COLOR_BGR2HSV)
    hsv[..., 0] = ((hsv[..., 0].astype(int) + amount) % 180).astype(np.uint8)
    return cv2.cvtColor(hsv, cv2.COLOR_HSV2BGR)


def _wrong(reading, truth) -> list:
    return [(r, c) for r in range(reading.rows) for c in range(reading.cols)
            if (reading.cells[r][c]["terrain"], reading.cells[r][c]["crowns"])
            != (truth[r][c]["terrain"], truth[r][c]["crowns"])]


def test_the_corrected_squares_read_right_again(reader, sample):
    """Under a lamp the network was not trained for, the sample reads wrong; the squares a
    person corrected teach the reader, and read again they are right, and the reading says
    how many examples it was read with."""
    image, _, truth = sample
    shifted = _hue_turned(image, 20)
    clf = reader.classifier
    clf.set_examples(None)
    first = reader.read(shifted)
    wrong = _wrong(first, truth)
    assert wrong                                       # the test needs a misreading
    cells = [(r, c, truth[r][c]["terrain"], truth[r][c]["crowns"]) for r, c in wrong]
    taught = learned.examples_from_photo(clf, shifted, first.corners, first.rows, first.cols,
                                         cells)
    clf.set_examples([learned.Example(f, t, k, id=i) for i, (_, _, t, k, f, _) in
                      enumerate(taught)])
    try:
        again = reader.read(shifted)
        outlined = reader.read(shifted, corners=first.corners, rows=first.rows, cols=first.cols)
    finally:
        clf.set_examples(None)
    assert _wrong(again, truth) == [] and _wrong(outlined, truth) == []
    assert again.learned == len(wrong) and again.to_json()["learned"] == len(wrong)
    assert outlined.learned == len(wrong)          # counted from its crops, not found
    assert "learned" not in first.to_json()


# ---------------------------------------------------------------- the online measure

def test_the_online_order_is_by_source_then_by_number():
    from vision.lab.evaluation import online

    photos = online.photos_in_order(shared_path("datasets"), sets=("phone",))
    names = [p.name for p in photos]
    sources = [p.source for p in photos]
    assert sources == sorted(sources, key=str.lower)
    kt = [n for n in names if "scenario-3_" in n]
    assert kt.index(next(n for n in kt if n.endswith("3_2.jpg"))) < \
        kt.index(next(n for n in kt if n.endswith("3_10.jpg")))


def test_a_photo_read_in_its_labelled_frame_is_corrected_with_it(reader):
    """The correction of a dev photo cut with the reader's frame gives the labels of the
    squares that frame holds."""
    from vision.lab.evaluation import online

    photos = online.photos_in_order(shared_path("datasets"), sets=("phone",))
    photo = next(p for p in photos if p.name.endswith("game3.jpg"))
    photo.image = cv2.imread(str(photo.labelled.path))
    photo.corners = photo.labelled.corners
    lab = photo.labelled
    reading = reader.read(photo.image, corners=lab.corners, rows=lab.rows, cols=lab.cols)
    corners, rows, cols, cells = online.labelled_cells(photo, reading)
    assert (rows, cols) == (lab.rows, lab.cols)
    assert cells[0] == (0, 0, lab.terrain[0][0], lab.crowns[0][0])
    examples, how, seconds = online.correct(reader.classifier, photo, reading)
    assert how == "found" and len(examples) == rows * cols and seconds < 1.0


def test_a_photo_decoded_reduced_is_compared_and_corrected_in_that_decode(reader):
    """With [io] read_long_side set, a 12 MP dev photo is decoded at half its side as `score`
    decodes it: its labelled corners are taken into that decode's pixels, so the reader's
    frame there is recognised as the labelled grid and its correction is cut with it (with
    the photo's own corners the frame was never recognised and the squares were cut at twice
    their place)."""
    import copy

    from vision import config as vconfig
    from vision.lab.evaluation import online

    cfg = copy.deepcopy(vconfig.load())
    cfg["io"]["read_long_side"] = 2000
    photos = online.photos_in_order(shared_path("datasets"), sets=("phone",))
    photo = next(p for p in photos if p.name.endswith("20201123_135920.jpg"))
    online.decode(photo, cfg)
    whole = max(cv2.imread(str(photo.labelled.path), cv2.IMREAD_REDUCED_COLOR_2).shape[:2])
    assert max(photo.image.shape[:2]) == whole          # decoded at half the side
    lab_corners = np.asarray(photo.labelled.corners, float).reshape(4, 2)
    assert np.allclose(np.asarray(photo.corners).reshape(4, 2), (lab_corners - 0.5) / 2)
    lab = photo.labelled
    reading = reader.read(photo.image)
    assert online.labelled_cells(photo, reading) is not None
    examples, how, _ = online.correct(reader.classifier, photo, reading)
    assert how == "found" and len(examples) == lab.rows * lab.cols
    terrain = {(r, c): lab.terrain[r][c] for r in range(lab.rows) for c in range(lab.cols)}
    feats = np.stack([e.feature for e in examples])
    read_feats = reader.classifier.features(
        learned._crops(reader.classifier, photo.image, reading.corners, reading.rows,
                       reading.cols))
    assert np.allclose(feats, read_feats, atol=1e-4)    # the squares the reader read
    assert sorted(e.terrain for e in examples) == sorted(terrain.values())


def test_online_reads_each_photo_with_the_earlier_corrections():
    """The first photos of the online order: the second and third are read with what the
    earlier ones taught, the figures add up, and nothing exact is harmed."""
    from vision.lab.evaluation import online

    res = online.run(shared_path("datasets"), sets=("phone",), log=lambda line: None, limit=3)
    rows = res["photos"]
    assert [r["examples"] for r in rows] == [0, rows[0]["taught"],
                                             rows[0]["taught"] + rows[1]["taught"]]
    assert rows[1]["used"] > 0
    figures = res["summary"]["online"]["phone"]
    assert figures["photos"] == 3 and figures["harmed"] == []
    assert "cross" in res["summary"]
    assert res["summary"]["seconds"]["learn_max"] < 1.0
