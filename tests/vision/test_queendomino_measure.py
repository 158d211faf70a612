"""The Queendomino measure (vision.lab.evaluation.queendomino, `kingdomino evaluate
--queendomino`): its counting against labels on made-up readings, and one real photo read
through the service layer (skipped without ../shared)."""
from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import shared_path
from vision.lab.datasets import QueendominoPhoto, load_queendomino
from vision.lab.evaluation import queendomino as q

# a 3x3 labelled rectangle, 10 px squares: towns down the right-hand column
TERRAIN = (("grassland", "field", "town"),
           ("swamp", "castle", "town"),
           ("empty", "mine", "town"))
CROWNS = ((0, 1, 0), (1, 0, 0), (0, 2, 0))


def _photo() -> QueendominoPhoto:
    return QueendominoPhoto(
        dataset="queendomino", name="made_up_1.jpg", path=None, kingdom="k", rows=3, cols=3,
        corners=np.float32([[0, 0], [30, 0], [30, 30], [0, 30]]), terrain=TERRAIN,
        crowns=CROWNS, score=None)


def _cell(terrain, crowns=0):
    return {"terrain": terrain, "crowns": crowns, "confidence": 0.5}


def _reading(cells, corners, review=(), warnings=()):
    return {"rows": len(cells), "cols": len(cells[0]), "size": 5, "corners": corners,
            "cells": [[_cell(*c) for c in row] for row in cells],
            "review": [list(rc) for rc in review], "warnings": list(warnings)}


def test_towns_are_counted_as_read_flagged_or_neither():
    obj = _reading([[("grassland",), ("field", 1), ("swamp",)],
                    [("swamp", 1), ("castle",), ("town",)],
                    [("forest",), ("mine", 1), ("swamp", 2)]],
                   [[0, 0], [30, 0], [30, 30], [0, 30]], review=[(0, 2), (2, 1)])
    got = q.count(_photo(), obj, "queendomino")
    assert (got["towns"], got["town"], got["flagged"], got["neither"]) == (3, 1, 1, 1)
    assert got["town_flagged"] == 0
    assert got["read_as"] == {"swamp": 2, "town": 1}
    assert [(c["row"], c["col"], c["flagged"]) for c in got["town_cells"]] == \
        [(0, 2, True), (1, 2, False), (2, 2, False)]
    # empty read as forest (wrong, not flagged); the mine's crowns wrong but flagged
    assert (got["others"], got["wrong"], got["others_flagged"], got["wrong_unflagged"]) == \
        (6, 2, 1, 1)
    assert got["ok"] is False and got["warning"] is None


def test_a_frame_read_otherwise_is_compared_square_by_square():
    # the reader's frame: one column more on the left, read turned a quarter (first corner
    # at the labelled bottom-left), so read square (i, j) lies on labelled (2 - j, i - 1)
    corners = [[-10, 30], [-10, 0], [30, 0], [30, 30]]      # 4 rows along x, 3 cols up y
    cells = [[("lake",), ("empty",), ("empty",)],            # i = 0: off the labels (x < 0)
             [("empty",), ("swamp", 1), ("grassland",)],
             [("mine", 2), ("castle",), ("field", 1)],
             [("town",), ("town",), ("town",)]]
    got = q.count(_photo(), _reading(cells, corners), "queendomino")
    assert got["grid"] == "4x3"
    assert got["off_as_tile"] == 1                           # the lake off the labels
    assert (got["town"], got["flagged"], got["neither"], got["missed"]) == (3, 0, 0, 0)
    assert (got["others"], got["wrong"], got["tiles_missed"]) == (6, 0, 0)
    assert got["ok"] is True


def test_under_kingdomino_every_town_must_be_flagged_and_a_warning_given():
    cells = [[("grassland",), ("field", 1), ("town",)],
             [("swamp", 1), ("castle",), ("town",)],
             [("empty",), ("mine", 2), ("town",)]]
    corners = [[0, 0], [30, 0], [30, 30], [0, 30]]
    flagged = [(0, 2), (1, 2), (2, 2)]
    said = "3 squares look like Queendomino towns, which are not Kingdomino terrain"
    warned = q.count(_photo(), _reading(cells, corners, flagged, ["glare", said]), "kingdomino")
    assert warned["flagged"] == 3 and warned["warning"] == said and warned["ok"] is True
    assert (warned["town"], warned["town_flagged"], warned["neither"]) == (3, 3, 0)
    assert warned["queendomino_warning"] == said
    silent = q.count(_photo(), _reading(cells, corners, flagged, ["glare"]), "kingdomino")
    assert silent["warning"] is None and silent["ok"] is False
    unnamed = "2 square(s) look like no Kingdomino tile: check them"
    vague = q.count(_photo(), _reading(cells, corners, flagged, [unnamed]), "kingdomino")
    assert vague["warning"] == unnamed and vague["queendomino_warning"] is None
    # read as town but not flagged: right under queendomino, not under kingdomino
    unflagged = _reading(cells, corners, (), [said])
    assert q.count(_photo(), unflagged, "queendomino")["ok"] is True
    assert q.count(_photo(), unflagged, "kingdomino")["ok"] is False


def test_a_photo_not_read_counts_its_towns_as_missed():
    got = q.count(_photo(), None, "queendomino", error="no kingdom found")
    assert (got["read"], got["error"], got["neither"], got["missed"]) == \
        (False, "no kingdom found", 3, 3)
    assert got["tiles_missed"] == 5 and got["ok"] is False
    total = q.summed([got, q.count(_photo(), None, "queendomino")])
    assert (total["towns"], total["neither"], total["photos_read"], total["photos_ok"]) == \
        (6, 6, 0, 0)


def test_without_the_photos_the_command_says_where_it_looked(run_cli, tmp_path):
    res = run_cli("evaluate", "--queendomino", "--datasets", tmp_path)
    assert res.code == 2
    assert "queendomino-photos" in res.out


@pytest.mark.slow  # four readings of one photo with the shipped models (about 2 s)
def test_one_real_photo_measured_against_its_labels():
    root = shared_path("datasets", "queendomino-photos")
    photo = next(p for p in load_queendomino(root.parent) if p.name.endswith("_16.jpg"))
    res = q.measure([photo])
    assert [(r["way"], r["rules"]) for r in res["rows"]] == \
        [(w, r) for w in q.WAYS for r in q.RULES]
    towns, squares = len(photo.towns), photo.rows * photo.cols
    for row in res["rows"]:
        assert row["read"], row["error"]
        assert row["towns"] == towns == 3
        assert row["town"] + row["flagged"] - row["town_flagged"] + row["neither"] == towns
        assert row["town_flagged"] <= min(row["town"], row["flagged"])
        assert sum(row["read_as"].values()) == towns - row["missed"]
        assert len(row["town_cells"]) == towns - row["missed"]
        if row["way"] == "labelled":                 # read in the labelled 5x5 itself
            assert row["grid"] == "5x5"
            assert row["others"] == squares - towns and row["missed"] == 0
        judged = (row["flagged"] == towns and row["warning"] is not None
                  if row["rules"] == "kingdomino" else row["neither"] == 0)
        assert row["ok"] is judged
    for way in q.WAYS:
        for rules in q.RULES:
            assert res["sums"][way][rules]["towns"] == towns
    assert "labelled kingdomino" in q.format_sums(res)


def test_drawn_towns_are_set_beside_the_real_ones():
    root = shared_path("datasets", "queendomino-photos")
    photos = load_queendomino(root.parent)
    res = q.drawn_against_real(photos, n=4, seed=2)
    assert res["real"]["n"] == sum(len(p.towns) for p in photos) == 15
    assert sum(res["real"]["read_as"].values()) == 15
    assert res["drawn"]["n"] == 4 and sum(res["drawn"]["read_as"].values()) == 4
    drawn = res["cosine_to_real_towns"]["drawn"]
    assert drawn["n"] == 4 and -1 <= drawn["p10"] <= drawn["median"] <= drawn["p90"] <= 1
    assert res["cosine_to_real_towns"]["real_swamps"] == {"n": 0}      # none given
    assert "drawn towns   4" in q.format_drawn(res)
