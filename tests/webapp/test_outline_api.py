"""The outline given by hand in the web app: /api/score's corners and size, reading a stored
result's photo again inside a new outline, and the upload that found no kingdom."""
from __future__ import annotations

import io

import numpy as np
import pytest
from webapp_helpers import CORNERS, FakeReader, kingdom_cells, page_token, png_bytes

OUTLINE = "120,60,480,70,470,440,110,430"


class OutlineReader(FakeReader):
    """The fake reader, also taking the outline; remembers what it was given."""

    def __init__(self):
        super().__init__()
        self.given = []

    def __call__(self, photo, rules, bonuses=(), corners=None, size=None):
        self.given.append((None if corners is None else np.asarray(corners).tolist(), size))
        return super().__call__(photo, rules, bonuses)


class ReadAgain:
    """A fake ``READ_OUTLINE``: a 7x7 kingdom of fields, one crown, inside the given outline."""

    def __init__(self):
        self.given = []

    def __call__(self, photo, corners, size, rules, bonuses=()):
        from kingdomino import service

        self.given.append((np.asarray(corners).tolist(), size, len(photo)))
        n = size or 7
        cells = [[{"terrain": "field", "crowns": 0} for _ in range(n)] for _ in range(n)]
        cells[0][0]["crowns"] = 1
        cells[n // 2][n // 2] = {"terrain": "castle", "crowns": 0}
        obj = service.score_grid({"rules": rules, "size": n, "cells": cells}, rules=rules,
                                 bonuses=bonuses)
        obj["corners"] = np.asarray(corners).tolist()
        obj["review"], obj["rows"], obj["cols"] = [], n, n
        return obj


@pytest.fixture
def reader():
    return OutlineReader()


def score(client, **fields):
    data = {"photo": (io.BytesIO(png_bytes()), "k.png"), **fields}
    return client.post("/api/score", data=data, content_type="multipart/form-data")


def test_api_score_passes_the_outline_and_size_to_the_reader(client, reader):
    resp = score(client, corners=OUTLINE, size="7")
    assert resp.status_code == 200, resp.get_json()
    assert reader.given == [([[120, 60], [480, 70], [470, 440], [110, 430]], 7)]
    resp = score(client)
    assert resp.status_code == 200 and reader.given[-1] == (None, None)


@pytest.mark.parametrize("fields, says", [
    ({"corners": "1,2,3"}, "eight numbers"),
    ({"corners": "a,b,c,d,e,f,g,h"}, "not a number"),
    ({"corners": "100,100,500,100,300,150,300,500"}, "convex"),
    ({"corners": "120,60,48000,70,47000,440,110,430"}, "outside the photo"),
    ({"corners": OUTLINE, "size": "6"}, "5 or 7"),
    ({"size": "seven"}, "5 or 7"),
])
def test_bad_outline_fields_are_400_json_and_nothing_is_read(client, reader, fields, says):
    resp = score(client, **fields)
    assert resp.status_code == 400
    assert says in resp.get_json()["error"]
    assert reader.calls == 0


@pytest.fixture
def stored(make_app):
    """An app whose outline reader is fake, with one photo read and one correction made."""
    again = ReadAgain()
    app = make_app(READ_OUTLINE=again)
    client = app.test_client()
    token = page_token(client)
    rid = score(client, csrf_token=token).get_json()["id"]
    cells = kingdom_cells()
    cells[2][3]["crowns"] = 1  # the referee fixes the lake the reader was unsure of
    resp = client.post(f"/api/readings/{rid}/kingdom", json={"size": 5, "cells": cells},
                       headers={"X-CSRF-Token": token})
    assert resp.status_code == 200 and resp.get_json()["score"]["total"] == 27
    return app, client, token, rid, again


def test_read_again_stores_a_new_machine_reading_and_sets_old_corrections_aside(stored):
    app, client, token, rid, again = stored
    corners = [[130, 70], [470, 80], [460, 430], [120, 420]]
    resp = client.post(f"/api/readings/{rid}/outline", json={"corners": corners, "size": 7},
                       headers={"X-CSRF-Token": token})
    assert resp.status_code == 200, resp.get_json()
    view = resp.get_json()
    assert again.given[0][:2] == (corners, 7)
    assert view["set_aside"] == 1
    # the new reading is what the page shows: the correction of the 5x5 squares is not applied
    assert len(view["kingdom"]["cells"]) == 7
    assert view["kingdom"]["cells"][0][0] == {"terrain": "field", "crowns": 1}
    assert view["score"]["total"] == view["machine"]["score"]["total"]
    assert view["grid"][0][0] == corners[0] and view["grid"][7][7] == corners[2]
    # the permalink shows it too, and the old machine reading and correction are still stored
    again_view = client.get(f"/api/readings/{rid}").get_json()
    assert again_view["kingdom"] == view["kingdom"]
    from kingdomino.store import Store

    store = Store(app.config["DATABASE"])
    try:
        history = store.rereadings(rid)
        assert [h["previous"]["corners"] for h in history] == [CORNERS]
        assert len(store.corrections(rid)) == 1
    finally:
        store.close()
    # a correction made after the new reading applies again
    cells = view["kingdom"]["cells"]
    cells[0][1]["crowns"] = 2
    resp = client.post(f"/api/readings/{rid}/kingdom", json={"size": 7, "cells": cells},
                       headers={"X-CSRF-Token": token})
    assert resp.get_json()["kingdom"]["cells"][0][1]["crowns"] == 2


def test_read_again_takes_the_corner_text_and_leaves_the_size_to_the_reader(stored):
    _, client, token, rid, again = stored
    resp = client.post(f"/api/readings/{rid}/outline", json={"corners": OUTLINE},
                       headers={"X-CSRF-Token": token})
    assert resp.status_code == 200 and again.given[0][1] is None


def test_read_again_needs_the_csrf_token(stored):
    _, client, _, rid, again = stored
    resp = client.post(f"/api/readings/{rid}/outline", json={"corners": OUTLINE})
    assert resp.status_code == 403 and again.given == []


@pytest.mark.parametrize("body, status, says", [
    ({"size": 5}, 400, "missing"),
    ({"corners": [[1, 2], [3, 4]]}, 400, "four [x, y]"),
    ({"corners": OUTLINE, "size": 9}, 400, "5 or 7"),
    ({"corners": "10,10,90000,10,90000,900,10,900"}, 400, "outside the photo"),
    ("not an object", 400, "send JSON"),
])
def test_bad_read_again_requests_are_4xx_json(stored, body, status, says):
    _, client, token, rid, again = stored
    resp = client.post(f"/api/readings/{rid}/outline", json=body,
                       headers={"X-CSRF-Token": token})
    assert resp.status_code == status and says in resp.get_json()["error"]
    assert again.given == []


def test_read_again_of_an_unknown_result_is_404(stored):
    _, client, token, _, _ = stored
    resp = client.post("/api/readings/nope/outline", json={"corners": OUTLINE},
                       headers={"X-CSRF-Token": token})
    assert resp.status_code == 404 and "error" in resp.get_json()


def test_upload_with_no_kingdom_found_leads_to_placing_the_outline(make_app):
    from vision.errors import PhotoError

    def blind(photo, rules, bonuses=()):
        raise PhotoError("no kingdom found in the photo: photograph it from above")

    again = ReadAgain()
    client = make_app(READER=blind, READ_OUTLINE=again).test_client()
    token = page_token(client)
    resp = client.post("/upload", data={"csrf_token": token, "rules": "kingdomino",
                                        "photo": (io.BytesIO(png_bytes()), "k.png")},
                       content_type="multipart/form-data")
    assert resp.status_code == 303
    page = client.get(resp.headers["Location"]).get_data(as_text=True)
    assert "no kingdom found" in page and 'id="outline-tool"' in page
    rid = resp.headers["Location"].rstrip("/").rsplit("/", 1)[-1]
    resp = client.post(f"/api/readings/{rid}/outline", json={"corners": OUTLINE, "size": 5},
                       headers={"X-CSRF-Token": token})
    assert resp.status_code == 200
    view = resp.get_json()
    assert view["error"] is None and view["score"]["total"] == view["machine"]["score"]["total"]
    assert view["set_aside"] == 0
