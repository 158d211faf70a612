"""Whole-table photos on the web (issue 17): POST /api/score with all=1, the upload page's "whole
table" choice and the game page, with a stubbed table reader."""
from __future__ import annotations

import io
import re

import pytest
from webapp_helpers import FAKE_TOTAL, page_token, png_bytes


@pytest.fixture
def tclient(make_app, table_reader):
    return make_app(TABLE_READER=table_reader).test_client()


def post(client, **fields):
    data = {"photo": (io.BytesIO(png_bytes(1600, 600)), "table.png")}
    data.update(fields)
    return client.post("/api/score", data=data, content_type="multipart/form-data")


def test_api_all_gives_every_kingdom_each_stored_with_its_permalink(tclient, table_reader):
    resp = post(tclient, all="1", players="Ann,Bob")
    assert resp.status_code == 200, resp.get_data(as_text=True)
    body = resp.get_json()
    kingdoms = body["kingdoms"]
    assert [k["kingdom"] for k in kingdoms] == [0, 1]
    assert kingdoms[0]["score"]["total"] == FAKE_TOTAL
    assert kingdoms[1]["score"]["total"] < FAKE_TOTAL and kingdoms[1]["cut"] is True
    for k in kingdoms:
        assert len(k["corners"]) == 4 and {"rules", "size", "cells", "review", "source"} <= set(k)
        page = tclient.get(k["permalink"])  # each kingdom is a reading of its own
        assert page.status_code == 200
        assert tclient.get(f"/api/readings/{k['id']}").get_json()["player"] in ("Ann", "Bob")
    assert kingdoms[0]["id"] != kingdoms[1]["id"]
    game = tclient.get(body["game"])
    html = game.get_data(as_text=True)
    assert game.status_code == 200
    assert html.count("<polygon") == 2 and "incomplete" in html
    standings = re.findall(r'<li value="(\d+)">([^<(]+)\(kingdom (\d)\): (\d+)', html)
    # kingdoms counted from 1 on the page (their JSON "kingdom": 0 and 1)
    assert [(p, name.strip(), k) for p, name, k, _ in standings] == [("1", "Ann", "1"),
                                                                     ("2", "Bob", "2")]


def test_a_correction_shows_on_the_game_page(tclient):
    body = post(tclient, all="1").get_json()
    second = body["kingdoms"][1]
    kingdom = tclient.get(f"/api/readings/{second['id']}").get_json()["kingdom"]
    kingdom["cells"][0][0]["crowns"] = 3   # field of 5 squares: +10 points, now ahead
    token = page_token(tclient, second["permalink"])
    resp = tclient.post(f"/api/readings/{second['id']}/kingdom", json=kingdom,
                        headers={"X-CSRF-Token": token})
    assert resp.status_code == 200, resp.get_data(as_text=True)
    html = tclient.get(body["game"] + "?name=Ann&name=Bob").get_data(as_text=True)
    first = re.search(r'<li value="1">([^<(]+)\(kingdom', html).group(1).strip()
    assert first == "Bob" and "(corrected)" in html


def test_api_all_with_no_kingdom_is_422_and_stores_nothing(tclient, table_reader):
    table_reader.fail = ValueError("no kingdom found in the photo")
    resp = post(tclient, all="1")
    assert resp.status_code == 422 and "no kingdom" in resp.get_json()["error"]


def test_api_all_refuses_bad_requests(tclient):
    assert tclient.post("/api/score", data={"all": "1"},
                        content_type="multipart/form-data").status_code == 400
    resp = post(tclient, all="1", players="Ann,,Bob")
    assert resp.status_code == 400 and "empty name" in resp.get_json()["error"]
    resp = post(tclient, all="1", corners="0,0,10,0,10,10,0,10")
    assert resp.status_code == 400 and "one or the other" in resp.get_json()["error"]


def test_without_all_the_api_reads_one_kingdom(tclient, table_reader):
    resp = post(tclient)
    assert resp.status_code == 200 and "kingdoms" not in resp.get_json()
    assert table_reader.calls == 0


def test_upload_whole_table_goes_to_the_game_page(tclient):
    html = tclient.get("/").get_data(as_text=True)
    assert 'name="all"' in html and 'name="players"' in html
    token = page_token(tclient)
    resp = tclient.post("/upload", data={"csrf_token": token, "rules": "kingdomino", "all": "1",
                                         "players": "Ann,Bob",
                                         "photo": (io.BytesIO(png_bytes()), "t.png")},
                        content_type="multipart/form-data")
    assert resp.status_code == 303 and "/game/" in resp.headers["Location"]
    page = tclient.get(resp.headers["Location"]).get_data(as_text=True)
    assert 'value="Ann"' in page and 'value="Bob"' in page and page.count("breakdown</a>") == 2


def test_a_game_link_of_unknown_ids_is_404(tclient):
    assert tclient.get("/game/nothere1.nothere2").status_code == 404
    assert tclient.get("/game/..").status_code == 404


def test_api_all_checks_the_upload_as_a_single_photo_is(tclient, table_reader, monkeypatch):
    """The whole-table upload goes through the same checks as a one-kingdom upload
    (webapp.service.decode_upload): a file that is no photo is 400, a busy decoder 503, and
    the reader is never called; the file name is a label: its base name, its last 180
    characters."""
    resp = tclient.post("/api/score", data={"all": "1", "photo": (io.BytesIO(b"not a photo"),
                                                                  "t.png")},
                        content_type="multipart/form-data")
    assert resp.status_code == 400 and "error" in resp.get_json()
    assert table_reader.calls == 0

    long_name = "dir\\sub/" + "k" * 300 + ".png"
    resp = tclient.post("/api/score", data={"all": "1", "photo": (
        io.BytesIO(png_bytes(1600, 600)), long_name)}, content_type="multipart/form-data")
    assert resp.status_code == 200, resp.get_data(as_text=True)
    label = ("k" * 300 + ".png")[-180:]
    # the names people read count from 1 (the kingdoms' "kingdom": 0 and 1)
    assert [k["source"] for k in resp.get_json()["kingdoms"]] == [f"{label} #1", f"{label} #2"]

    from vision.photo import files as photo_io

    import webapp.service

    def busy(*args, **kwargs):
        raise photo_io.PhotoBusy("too many photos are being read at once: try again in a minute")

    monkeypatch.setattr(webapp.service, "shrink_photo", busy)
    calls = table_reader.calls
    resp = post(tclient, all="1")
    assert resp.status_code == 503 and "try again" in resp.get_json()["error"]
    assert table_reader.calls == calls
