"""How the square classifier spends its forward passes (vision.read.classify.SquareClassifier.logits):
the quarter turns it averages, only for the squares not already sure as cut, and the crop
sets it remembers. A stand-in network reads each crop's top-left pixel: no model needed."""
from __future__ import annotations

import numpy as np
import pytest

from vision import config
from vision.read.classify import SquareClassifier
from vision.read.labels import N_CROWNS, TERRAINS

K = len(TERRAINS) + N_CROWNS


def _classifier(tta_sure: float):
    cfg = config.load()["classify"]
    cfg["tta"], cfg["tta_sure"] = 2, tta_sure
    clf = SquareClassifier(None, cfg, load_network=False)
    clf.t_terrain = clf.t_crowns = 1.0
    seen = []

    def forward(crops):
        """Top-left pixel 200: sure field, no crowns; anything else: unsure, its value/100."""
        seen.append(len(crops))
        out = np.zeros((len(crops), K), np.float32)
        for i, c in enumerate(crops):
            v = float(c[0, 0, 0])
            if v == 200:
                out[i, 0] = out[i, len(TERRAINS)] = 20.0
            else:
                out[i, 1] = v / 100.0
        return out

    clf._forward = forward
    return clf, seen


def _crops():
    """Two crops: the first sure whichever way up; the second reads 1.0 as cut and 0.5 upside
    down (its top-left and bottom-right pixels differ)."""
    crops = np.zeros((2, 88, 88, 3), np.uint8)
    crops[0] = 200
    crops[1, 0, 0] = 100
    crops[1, -1, -1] = 50
    return crops


def test_only_the_unsure_square_is_read_upside_down():
    clf, seen = _classifier(0.99)
    lg = clf.logits(_crops())
    assert seen == [2, 1]                        # both as cut, then the unsure one turned
    assert lg[0, 0] == pytest.approx(20.0)       # the sure square keeps its reading as cut
    assert lg[1, 1] == pytest.approx(0.75)       # the unsure one: the mean of 1.0 and 0.5


def test_over_one_every_square_is_turned():
    clf, seen = _classifier(1.01)
    lg = clf.logits(_crops())
    assert seen == [2, 2]
    assert lg[0, 0] == pytest.approx(20.0) and lg[1, 1] == pytest.approx(0.75)


def test_crops_read_again_cost_nothing_and_give_the_same_numbers():
    clf, seen = _classifier(0.99)
    quick = clf.logits(_crops(), first_turn_only=True)
    assert seen == [2] and quick[1, 1] == pytest.approx(1.0)
    full = clf.logits(_crops())
    assert seen == [2, 1]                        # the first turn was remembered
    again = clf.logits(_crops())
    assert seen == [2, 1] and np.array_equal(full, again)


def test_sure_needs_both_heads_sure():
    clf, _ = _classifier(0.99)
    lg = np.zeros((3, K))
    lg[0, 0] = lg[0, len(TERRAINS)] = 20.0       # both heads sure
    lg[1, 0] = 20.0                              # terrain sure, crowns uniform
    lg[2, len(TERRAINS)] = 20.0                  # crowns sure, terrain uniform
    assert clf.sure(lg, 0.99).tolist() == [True, False, False]
