"""Learning from corrections in the web app (``webapp.learned``): a correction or a "Looks
right" teaches, the next upload is read with it, what cannot teach says why, undo and the
/learned page take it back, and learning off reads and teaches nothing. The reader is fake; the
squares are cut the real way with a colour stand-in for the classifier (learning_support)."""
from __future__ import annotations

import io
import re

import pytest
from learning_support import colour_cutter, use_colour_network, with_learned
from webapp_helpers import FakeReader, jpeg_bytes, kingdom_cells, page_token

from kingdomino.store import Store


class LearningReader(FakeReader):
    """The fake reader, saying how many learned examples it read with (as the real one)."""

    def __call__(self, photo, rules, bonuses=(), corners=None, size=None):
        return with_learned(super().__call__(photo, rules, bonuses))


@pytest.fixture
def reader():
    return LearningReader()


@pytest.fixture
def make_learning_app(make_app, monkeypatch):
    use_colour_network(monkeypatch)  # the app reads with the network its cutter learns with

    def build(**extra):
        return make_app(**{"LEARNER": colour_cutter, **extra})
    return build


@pytest.fixture
def web(make_learning_app):
    app = make_learning_app()
    client = app.test_client()
    return app, client, page_token(client)


def upload(client, token, data=None) -> dict:
    resp = client.post("/api/score", data={"csrf_token": token,
                                           "photo": (io.BytesIO(data or jpeg_bytes()), "k.jpg")},
                       content_type="multipart/form-data")
    assert resp.status_code == 200, resp.get_data(as_text=True)
    return resp.get_json()


def post_kingdom(client, token, rid, cells, **extra):
    return client.post(f"/api/readings/{rid}/kingdom", json={"size": len(cells),
                                                              "cells": cells, **extra},
                       headers={"X-CSRF-Token": token})


def one_changed(r=2, c=3, terrain="lake", crowns=1):
    cells = kingdom_cells()
    cells[r][c] = {"terrain": terrain, "crowns": crowns}
    return cells


def test_a_correction_teaches_and_the_next_photo_is_read_with_it(web):
    app, client, token = web
    first = upload(client, token)
    assert "learned" not in first
    resp = post_kingdom(client, token, first["id"], one_changed())
    assert resp.status_code == 200
    got = resp.get_json()["learned"]
    assert got["kind"] == "correction" and got["added"] == 1 and got["seconds"] < 1
    second = upload(client, token)
    assert second["learned"] == 1
    view = client.get(f"/api/readings/{second['id']}").get_json()
    assert view["machine"]["learned"] == 1
    html = client.get(f"/r/{second['id']}").get_data(as_text=True)
    assert "Read with what 1 corrected square taught" in html


def test_looks_right_confirms_every_square_and_can_be_taken_back(web):
    app, client, token = web
    rid = upload(client, token)["id"]
    html = client.get(f"/r/{rid}").get_data(as_text=True)
    assert 'id="looks-right"' in html
    view = client.get(f"/api/readings/{rid}").get_json()
    got = post_kingdom(client, token, rid, view["kingdom"]["cells"]).get_json()["learned"]
    assert got["kind"] == "confirmation" and got["added"] == 25
    again = post_kingdom(client, token, rid, view["kingdom"]["cells"]).get_json()["learned"]
    assert again["added"] == 0 and "already" in again["why"]
    assert upload(client, token)["learned"] == 25
    resp = client.post(f"/api/readings/{rid}/learned/forget",
                       json={"correction": got["correction"]}, headers={"X-CSRF-Token": token})
    assert resp.status_code == 200 and resp.get_json() == {"removed": 25}
    assert "learned" not in upload(client, token)


def test_undo_takes_back_what_the_correction_taught(web):
    app, client, token = web
    rid = upload(client, token)["id"]
    post_kingdom(client, token, rid, one_changed())
    got = post_kingdom(client, token, rid, kingdom_cells()).get_json()["learned"]  # Undo
    assert got["kind"] == "undo" and got["removed"] == 1
    assert client.get("/api/learned").get_json()["total"] == 0


def test_bonuses_changed_teach_nothing(web):
    app, client, token = web
    rid = upload(client, token)["id"]
    got = post_kingdom(client, token, rid, kingdom_cells(), bonuses=["harmony"]).get_json()
    assert got["learned"]["added"] == 0 and "no square changed" in got["learned"]["why"]


def test_a_kingdom_built_by_hand_says_it_cannot_teach(web):
    app, client, token = web
    resp = client.post("/api/readings", json={"size": 5, "cells": kingdom_cells()},
                       headers={"X-CSRF-Token": token})
    rid = resp.get_json()["id"]
    got = post_kingdom(client, token, rid, one_changed()).get_json()["learned"]
    assert got["added"] == 0 and "not read from a photo" in got["why"]


def test_a_reading_with_no_stored_photo_says_it_cannot_teach(web):
    app, client, token = web
    rid = upload(client, token)["id"]
    store = Store(app.config["DATABASE"])
    store._db.execute("UPDATE readings SET photo=NULL WHERE id=?", (rid,))
    store._db.commit()
    store.close()
    resp = post_kingdom(client, token, rid, one_changed())
    assert resp.status_code == 200  # the correction is kept
    got = resp.get_json()
    assert got["learned"]["added"] == 0 and "no stored photo" in got["learned"]["why"]
    assert got["kingdom"]["cells"][2][3] == {"terrain": "lake", "crowns": 1}


def test_a_square_outside_the_photo_says_it_cannot_teach(make_learning_app):
    class OffTheEdge(LearningReader):
        def __call__(self, photo, rules, bonuses=(), corners=None, size=None):
            obj = super().__call__(photo, rules, bonuses)
            obj["corners"] = [[100.0, 100.0], [500.0, 100.0], [500.0, 580.0], [100.0, 580.0]]
            return obj

    client = make_learning_app(READER=OffTheEdge()).test_client()
    token = page_token(client)
    rid = upload(client, token)["id"]
    cells = one_changed()
    cells[4][2] = {"terrain": "forest", "crowns": 0}
    got = post_kingdom(client, token, rid, cells).get_json()["learned"]
    assert got["added"] == 1 and "r5c3 lie outside the photo" in got["why"]


def test_a_learning_fault_keeps_the_correction_and_says_so(make_learning_app):
    def broken(*args):
        raise RuntimeError("boom")

    client = make_learning_app(LEARNER=broken).test_client()
    token = page_token(client)
    rid = upload(client, token)["id"]
    resp = post_kingdom(client, token, rid, one_changed())
    assert resp.status_code == 200
    assert "failed" in resp.get_json()["learned"]["why"]
    assert resp.get_json()["kingdom"]["cells"][2][3]["crowns"] == 1


def test_learning_off_reads_without_and_teaches_nothing(make_learning_app):
    app = make_learning_app()
    client = app.test_client()
    token = page_token(client)
    rid = upload(client, token)["id"]
    post_kingdom(client, token, rid, one_changed())
    assert upload(client, token)["learned"] == 1
    off = make_learning_app(LEARNING=False).test_client()  # kingdomino serve --no-learning
    token = page_token(off)
    assert "learned" not in upload(off, token)
    got = post_kingdom(off, token, rid, one_changed(0, 0, "mine", 1)).get_json()["learned"]
    assert got["added"] == 0 and "--no-learning" in got["why"]
    assert "Learning is off" in off.get("/learned").get_data(as_text=True)


def test_a_reread_forgets_what_the_old_outline_taught(make_learning_app):
    from test_outline_api import ReadAgain

    client = make_learning_app(READ_OUTLINE=ReadAgain()).test_client()
    token = page_token(client)
    rid = upload(client, token)["id"]
    post_kingdom(client, token, rid, one_changed())
    resp = client.post(f"/api/readings/{rid}/outline",
                       json={"corners": [[130, 70], [470, 80], [460, 430], [120, 420]],
                             "size": 7}, headers={"X-CSRF-Token": token})
    assert resp.status_code == 200 and resp.get_json()["learned"]["removed"] == 1
    assert client.get("/api/learned").get_json()["total"] == 0


# ---------------------------------------------------------------- the /learned page


def test_the_page_lists_with_thumbnails_and_links_and_deletes(web):
    app, client, token = web
    rid = upload(client, token)["id"]
    post_kingdom(client, token, rid, one_changed())
    post_kingdom(client, token, rid, one_changed(0, 0, "mine", 2))
    assert 'id="nav-learned"' in client.get("/").get_data(as_text=True)
    html = client.get("/learned").get_data(as_text=True)
    ids = [int(i) for i in re.findall(r'id="example-(\d+)"', html)]
    assert len(ids) == 2 and f'href="/r/{rid}"' in html
    thumb = client.get(f"/learned/{ids[0]}.jpg")
    assert thumb.status_code == 200 and thumb.mimetype == "image/jpeg"
    resp = client.post("/learned/forget", data={"csrf_token": token, "id": str(ids[0])})
    assert resp.status_code == 303
    assert f'id="example-{ids[0]}"' not in client.get("/learned").get_data(as_text=True)
    assert client.get(f"/learned/{ids[0]}.jpg").status_code == 404
    resp = client.post("/learned/forget-all", data={"csrf_token": token})
    assert resp.status_code == 400 and "tick the box" in resp.get_data(as_text=True)
    resp = client.post("/learned/forget-all", data={"csrf_token": token, "confirm": "yes"})
    assert resp.status_code == 303
    assert 'id="learned-none"' in client.get(resp.headers["Location"]).get_data(as_text=True)


@pytest.mark.parametrize("path, data", [("/learned/forget", {"id": "1"}),
                                        ("/learned/forget-all", {"confirm": "yes"})])
def test_the_page_forms_need_the_token(web, path, data):
    app, client, token = web
    assert client.post(path, data=data).status_code == 403


@pytest.mark.parametrize("value", ["abc", "", "-3", "1e3", "9" * 40])
def test_a_bad_id_is_400_not_500(web, value):
    app, client, token = web
    resp = client.post("/learned/forget", data={"csrf_token": token, "id": value})
    assert resp.status_code == 400 and "Traceback" not in resp.get_data(as_text=True)


@pytest.mark.parametrize("body, code", [({"id": "x"}, 400), ({"id": True}, 400), ({}, 400),
                                        ({"id": 99999}, 404), ({"all": True}, 200)])
def test_the_forget_api_says_what_is_wrong(web, body, code):
    app, client, token = web
    resp = client.post("/api/learned/forget", json=body, headers={"X-CSRF-Token": token})
    assert resp.status_code == code and ("error" in resp.get_json()) == (code != 200)


def test_taking_back_needs_a_correction_number_and_a_known_reading(web):
    app, client, token = web
    rid = upload(client, token)["id"]
    resp = client.post(f"/api/readings/{rid}/learned/forget", json={"correction": "one"},
                       headers={"X-CSRF-Token": token})
    assert resp.status_code == 400
    resp = client.post("/api/readings/nope/learned/forget", json={"correction": 1},
                       headers={"X-CSRF-Token": token})
    assert resp.status_code == 404


def test_the_list_api(web):
    app, client, token = web
    rid = upload(client, token)["id"]
    post_kingdom(client, token, rid, one_changed())
    body = client.get("/api/learned").get_json()
    assert body["total"] == 1 and body["learning"] is True
    [e] = body["examples"]
    assert (e["terrain"], e["crowns"], e["square"], e["reading_id"]) == ("lake", 1, [2, 3], rid)
    assert client.get("/api/learned?limit=x").status_code == 400
