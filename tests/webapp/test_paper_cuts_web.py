"""The paper cuts a new user meets in the web app and the server (issue 52, items 1, 3, 5 and
9-12), each as it was seen. The browser's part (no word broken in a table cell, the outline's
touch-sized corners and the "read again" notice, the whole-table checkbox beside its words) is
in test_browser_paper_cuts.py and test_browser_outline.py."""
from __future__ import annotations

import io
import logging
import re
import socket
import struct

import pytest
from webapp_helpers import page_token, png_bytes

import engine
from kingdomino import i18n


def _upload(client, **form) -> dict:
    resp = client.post("/api/score", data={"photo": (io.BytesIO(png_bytes()), "k.png"), **form},
                       headers={"X-CSRF-Token": page_token(client)},
                       content_type="multipart/form-data")
    assert resp.status_code == 200, resp.get_data(as_text=True)
    return resp.get_json()


# ---------------------------------------------------------------- 1. kingdoms counted from 1


def test_the_game_page_counts_kingdoms_from_1(make_app, table_reader):
    client = make_app(TABLE_READER=table_reader).test_client()
    got = _upload(client, all="1")
    assert [k["kingdom"] for k in got["kingdoms"]] == [0, 1]  # the JSON: from 0 (contract)
    assert [k["source"].rsplit(" ", 1)[1] for k in got["kingdoms"]] == ["#1", "#2"]
    html = client.get(got["game"].split("localhost", 1)[1]).get_data(as_text=True)
    assert re.findall(r"<td>(\d)</td>", html) == ["1", "2"]  # the # column
    assert re.findall(r'font-weight="bold">(\d)</text>', html) == ["1", "2"]  # on the photo
    assert "(kingdom 1)" in html and "(kingdom 2)" in html and "(kingdom 0)" not in html
    assert 'aria-label="Name of kingdom 1"' in html
    assert 'value="kingdom 1"' in html and 'value="kingdom 2"' in html  # unnamed kingdoms


# ---------------------------------------------------------------- 3. bonus names in English


def test_english_pages_name_the_bonuses_as_the_rulebooks_do(client):
    html = client.get("/?rules=age-of-giants").get_data(as_text=True)
    shown = re.sub(r"<[^>]+>", " ", html)  # the words a person reads, not the form's values
    for name in ("Middle Kingdom", "Folie des Grandeurs", "Four Corners: field", "Bleak King",
                 "Local Business: mine"):
        assert name in shown, name
    for machine in ("middle-kingdom", "folie-des-grandeurs", "four-corners-field"):
        assert machine not in shown, machine
    rid = _upload(client, rules="age-of-giants", bonus="middle-kingdom")["id"]
    page = client.get(f"/r/{rid}").get_data(as_text=True)
    names = re.search(r'<script type="application/json" id="names-data">(.*?)</script>', page)
    assert '"middle-kingdom": "Middle Kingdom"' in names.group(1)


def test_every_bonus_has_an_english_title(app):
    from webapp import terms

    with app.test_request_context("/"):
        for rules in engine.rule_names():
            for bonus in engine.bonus_names(rules):
                title = terms.bonus_title(bonus)
                assert title != bonus and title[0].isupper(), (bonus, title)


# ---------------------------------------------------------------- 5. pieces the photo hides


def test_the_result_page_says_which_pieces_to_add_by_hand(client):
    rid = _upload(client, rules="the-court")["id"]
    html = client.get(f"/r/{rid}").get_data(as_text=True)
    note = re.search(r'id="pieces-note">([^<]*)<', html).group(1)
    assert "resources, courtiers, court buildings" in note and "by hand" in note
    plain = _upload(client)["id"]
    assert 'id="pieces-note"' not in client.get(f"/r/{plain}").get_data(as_text=True)
    # a kingdom built by hand has every piece a person gave it: nothing to say
    assert 'id="pieces-note"' not in client.get("/new?rules=the-court").get_data(as_text=True)
    client.set_cookie(i18n.COOKIE, "zh_Hant")
    html = client.get(f"/r/{rid}").get_data(as_text=True)
    note = re.search(r'id="pieces-note">([^<]*)<', html).group(1)
    assert "朝臣" in note and "by hand" not in note


# ---------------------------------------------------------------- 9. a port in use


def test_serve_on_a_port_in_use_says_so_and_never_that_it_serves(tmp_path, capsys):
    from webapp import serve

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code = serve(host="127.0.0.1", port=port, db=str(tmp_path / "s.sqlite3"))
    out, err = capsys.readouterr()
    assert code == 1
    assert "serving on" not in out + err
    assert f"cannot listen on 127.0.0.1:{port}: the port is in use" in err
    assert f"--port {port + 1}" in err


# ---------------------------------------------------------------- 10. waitress's queue


def test_the_queue_warning_waits_for_a_real_backlog(caplog):
    from waitress.task import ThreadedTaskDispatcher

    import webapp

    webapp.quiet_queue_warnings()
    webapp.quiet_queue_warnings()  # once is enough: no second filter
    assert sum(isinstance(f, webapp._RealBacklog)
               for f in logging.getLogger("waitress.queue").filters) == 1

    class Task:
        def service(self):
            pass

        def cancel(self):
            pass

    dispatcher = ThreadedTaskDispatcher()  # no thread started: every task waits in the queue
    with caplog.at_level(logging.WARNING, logger="waitress.queue"):
        for _ in range(webapp.QUEUE_WARN_DEPTH - 1):
            dispatcher.add_task(Task())
        assert not [r for r in caplog.records if "queue depth" in r.getMessage()]
        dispatcher.add_task(Task())  # a real backlog: said
        assert [r for r in caplog.records if "queue depth" in r.getMessage()]


# ---------------------------------------------------------------- 11. the batch's note


def test_the_batch_note_and_the_list_above_it_agree(make_app):
    app = make_app(BATCH_JOBS=1, BATCH_WAIT=True)
    client = app.test_client()
    html = client.get("/batch/").get_data(as_text=True)
    h = {"X-CSRF-Token": re.search(r'name="csrf-token" content="([^"]+)"', html).group(1),
         "Accept": "application/json"}
    manifest = "photo,player,table,round\na.png,Ann,1,1\n"
    job = client.post("/batch/", data={"manifest": (io.BytesIO(manifest.encode()), "m.csv")},
                      headers=h, content_type="multipart/form-data").get_json()
    client.post(job["upload"], data={"photos": (io.BytesIO(png_bytes()), "a.png")}, headers=h,
                content_type="multipart/form-data")
    assert client.post(job["start"], headers=h).status_code == 202
    page = client.get(job["page"]).get_data(as_text=True)
    # the fake reader flags one square: one photo to check, one square in it
    assert "squares to check: 1, total" in page
    standings = page.split('id="standings"', 1)[1]
    notes = re.findall(r"photos to check: (\d+)", standings)
    assert notes and set(notes) == {"1"}
    assert not re.search(r"(?<!photos )to check: ", standings)  # once "to check: 1" alone


# ---------------------------------------------------------------- 12. the upload page, the icon


def test_the_whole_table_checkbox_sits_beside_its_words(client):
    html = client.get("/").get_data(as_text=True)
    label = re.search(r'<label class="check"><input type="checkbox" name="all"', html)
    assert label, "the checkbox's label lays it out in a row (app.css label.check)"
    css = client.get("/static/app.css").get_data(as_text=True)
    assert re.search(r"label\.check\s*\{[^}]*flex-direction:\s*row", css)


def test_the_site_has_an_icon(client):
    resp = client.get("/favicon.ico")
    assert resp.status_code == 200
    assert resp.mimetype in ("image/vnd.microsoft.icon", "image/x-icon")
    data = resp.get_data()
    reserved, kind, count = struct.unpack("<HHH", data[:6])
    assert (reserved, kind, count) == (0, 1, 1)
    width, height, _, _, _, _, size, offset = struct.unpack("<BBBBHHII", data[6:22])
    assert (width, height) == (32, 32) and offset == 22 and size == len(data) - 22
    assert data[22:30] == b"\x89PNG\r\n\x1a\n"
    import cv2
    import numpy as np

    image = cv2.imdecode(np.frombuffer(data[22:], np.uint8), cv2.IMREAD_UNCHANGED)
    assert image.shape == (32, 32, 4)
    assert "max-age" in resp.headers["Cache-Control"]
