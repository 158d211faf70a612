"""The expansions over HTTP: the editor's metadata, a Court kingdom scored, bad pieces are 400."""
from __future__ import annotations

import pytest


def _court(**cell):
    cells = [[{"terrain": "forest", "crowns": 0} for _ in range(5)] for _ in range(5)]
    cells[2][2] = {"terrain": "castle"}
    cells[0][0] = {"terrain": "forest", "crowns": 0, "court": "lumberjack"}
    cells[0][1] = {"terrain": "forest", "crowns": 0, "resource": True}
    cells[1][1] = {"terrain": "forest", "crowns": 0, **cell} if cell else cells[1][1]
    return {"rules": "the-court", "size": 5, "cells": cells}


def test_a_court_kingdom_scores_with_each_courtier_listed(client):
    resp = client.post("/api/score-grid", json=_court())
    assert resp.status_code == 200, resp.get_json()
    courtiers = resp.get_json()["score"]["courtiers"]["list"]
    assert [c["reason"] for c in courtiers] == ["Lumberjack r1c1: 3 + 1 wood x 3 = 6"]
    assert resp.get_json()["cells"][0][1]["resource"] is True


@pytest.mark.parametrize("cell, words", [
    ({"giants": "two"}, "giants"),
    ({"giants": 1}, "giant"),
    ({"court": 5}, "court tile"),
    ({"court": "jester"}, "court tile"),
    ({"court": "building", "building_crowns": 1.0}, "1 or 2"),
    ({"court": "building", "building_crowns": [2]}, "1 or 2"),
    ({"resource": "yes"}, "resource"),
    ({"court": "lumberjack"}, "one lumberjack tile"),
])
def test_a_bad_piece_is_a_400_that_says_what_to_fix(client, cell, words):
    resp = client.post("/api/score-grid", json=_court(**cell))
    assert resp.status_code == 400
    assert words in resp.get_json()["error"]


def test_the_editor_learns_the_pieces_and_quests_from_the_engine(client):
    from webapp.service import rules_meta

    giants, court = rules_meta("age-of-giants"), rules_meta("the-court")
    assert giants["pieces"]["cell"] == ["giants"] and "giants" in giants["piece_options"]
    assert "folie-des-grandeurs" in giants["bonuses"] and "four-corners-lake" in giants["bonuses"]
    assert set(court["piece_options"]) == {"resource", "court", "building_crowns"}
    assert "king" in court["piece_options"]["court"]["values"]


def test_the_csv_export_adds_up_with_a_line_per_courtier(client):
    import csv
    import io

    from webapp_helpers import page_token

    token = page_token(client, "/new")
    resp = client.post("/api/readings", json=_court(), headers={"X-CSRF-Token": token})
    assert resp.status_code == 201, resp.get_data(as_text=True)
    rid = resp.get_json()["id"]
    rows = list(csv.DictReader(io.StringIO(client.get(f"/r/{rid}.csv").get_data(as_text=True))))
    courtiers = [r for r in rows if r["item"] == "courtier"]
    assert [r["name"] for r in courtiers] == ["Lumberjack r1c1: 3 + 1 wood x 3 = 6"]
    assert rows[-1]["item"] == "total"
    assert sum(int(r["points"]) for r in rows[:-1]) == int(rows[-1]["points"]) == 6
