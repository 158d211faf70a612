"""Upload -> read -> correct -> re-score -> reload from the permalink after a restart."""
from __future__ import annotations

import csv
import io
import json

from webapp_helpers import FAKE_TOTAL, REVIEW, kingdom_cells, not_listening, page_token, png_bytes

from kingdomino.store import Store


def upload(client, token, **fields):
    data = {"csrf_token": token, "rules": "kingdomino", "photo": (io.BytesIO(png_bytes()), "k.png")}
    data.update(fields)
    return client.post("/upload", data=data, content_type="multipart/form-data")


def test_upload_page_offers_camera_rules_and_bonuses(client):
    html = client.get("/").get_data(as_text=True)
    assert 'capture="environment"' in html and 'accept="image/*"' in html
    for name in ("kingdomino", "queendomino", "middle-kingdom", "harmony"):
        assert f'value="{name}"' in html
    assert 'name="claimed"' in html and 'name="player"' in html


def test_full_flow_survives_restart(make_app, reader):
    app = make_app()
    client = app.test_client()
    token = page_token(client)
    resp = upload(client, token, player="Ada", claimed="27")
    assert resp.status_code == 303, resp.get_data(as_text=True)
    url = resp.headers["Location"]
    rid = url.rsplit("/", 1)[1]
    assert reader.calls == 1

    page = client.get(url)
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    assert "Ada" in html and f'id="total">{FAKE_TOTAL}<' in html
    assert f"/r/{rid}/photo.jpg" in html

    view = client.get(f"/api/readings/{rid}").get_json()
    assert view["score"]["total"] == FAKE_TOTAL
    assert view["review"] == REVIEW
    # the dispute names the lake region holding the doubtful square (2, 3)
    assert view["dispute"]["difference"] == 27 - FAKE_TOTAL
    suspects = view["dispute"]["suspects"]
    assert [s["terrain"] for s in suspects] == ["lake"]
    assert [2, 3] in suspects[0]["doubtful"]
    # the photo is stored and served, downscaled JPEG
    photo = client.get(f"/r/{rid}/photo.jpg")
    assert photo.status_code == 200 and photo.data[:2] == b"\xff\xd8"

    # correct (2, 3): the lake of 3 squares gains its crown: 3 x 1 = 3 more points
    kingdom = view["kingdom"]
    kingdom["cells"][2][3]["crowns"] = 1
    resp = client.post(f"/api/readings/{rid}/kingdom", json=kingdom,
                       headers={"X-CSRF-Token": token})
    assert resp.status_code == 200, resp.get_data(as_text=True)
    after = resp.get_json()
    assert after["score"]["total"] == FAKE_TOTAL + 3
    assert after["dispute"]["difference"] == 0
    assert after["corrections"] == 1

    # a second correction, then an undo (the page posts the previous kingdom again)
    kingdom["cells"][4][2] = {"terrain": "swamp", "crowns": 0}  # swamp region 5 x 2 = 10
    assert client.post(f"/api/readings/{rid}/kingdom", json=kingdom,
                       headers={"X-CSRF-Token": token}).get_json()["score"]["total"] == 29
    kingdom["cells"][4][2] = {"terrain": "empty", "crowns": 0}
    undone = client.post(f"/api/readings/{rid}/kingdom", json=kingdom,
                         headers={"X-CSRF-Token": token}).get_json()
    assert undone["score"]["total"] == FAKE_TOTAL + 3 and undone["corrections"] == 3

    # restart: a new app on the same database serves the same permalink, corrected
    client2 = make_app().test_client()
    again = client2.get(f"/api/readings/{rid}").get_json()
    assert again["score"]["total"] == FAKE_TOTAL + 3
    assert again["kingdom"]["cells"][2][3] == {"terrain": "lake", "crowns": 1}
    assert f'id="total">{FAKE_TOTAL + 3}<' in client2.get(url).get_data(as_text=True)

    # nothing lost: the machine reading is kept apart from every correction
    store = Store(app.config["DATABASE"])
    try:
        rec = store.get(rid)
        assert rec["machine"]["cells"][2][3]["crowns"] == 0
        assert rec["machine"]["score"]["total"] == FAKE_TOTAL
        assert len(store.corrections(rid)) == 3
        assert rec["player"] == "Ada" and rec["claimed"] == 27
    finally:
        store.close()

    # exports
    exported = client2.get(f"/r/{rid}.json")
    assert exported.status_code == 200
    full = json.loads(exported.data)
    assert full["score"]["total"] == FAKE_TOTAL + 3
    assert full["machine"]["score"]["total"] == FAKE_TOTAL
    assert len(full["corrections"]) == 3
    rows = list(csv.DictReader(io.StringIO(client2.get(f"/r/{rid}.csv").get_data(as_text=True))))
    assert rows[-1]["item"] == "total" and int(rows[-1]["points"]) == FAKE_TOTAL + 3
    regions = [r for r in rows if r["item"] == "region"]
    assert sum(int(r["points"]) for r in regions) == FAKE_TOTAL + 3


def test_bonuses_and_rules_change_in_a_correction(client):
    token = page_token(client)
    rid = upload(client, token).headers["Location"].rsplit("/", 1)[1]
    kingdom = client.get(f"/api/readings/{rid}").get_json()["kingdom"]
    # the castle is in the centre: middle-kingdom adds 10
    resp = client.post(f"/api/readings/{rid}/kingdom",
                       json={**kingdom, "bonuses": ["middle-kingdom"]},
                       headers={"X-CSRF-Token": token})
    body = resp.get_json()
    assert body["score"]["total"] == FAKE_TOTAL + 10
    assert body["bonuses"] == ["middle-kingdom"]
    bad = client.post(f"/api/readings/{rid}/kingdom", json={**kingdom, "bonuses": ["nope"]},
                      headers={"X-CSRF-Token": token})
    assert bad.status_code == 400 and "nope" in bad.get_json()["error"]


def test_correction_that_cannot_be_scored_is_refused_and_not_stored(client, app):
    token = page_token(client)
    rid = upload(client, token).headers["Location"].rsplit("/", 1)[1]
    kingdom = client.get(f"/api/readings/{rid}").get_json()["kingdom"]
    kingdom["cells"][0][0] = {"terrain": "castle", "crowns": 0}  # a second castle
    resp = client.post(f"/api/readings/{rid}/kingdom", json=kingdom,
                       headers={"X-CSRF-Token": token})
    assert resp.status_code == 400
    assert "castle" in resp.get_json()["error"]
    assert client.get(f"/api/readings/{rid}").get_json()["corrections"] == 0


def test_api_score_contract_from_a_script(client, reader):
    # a script: no cookies, no Origin, no token
    resp = client.post("/api/score", data={"photo": (io.BytesIO(png_bytes()), "k.png"),
                                           "bonus": ["middle-kingdom", "harmony"]},
                       content_type="multipart/form-data")
    assert resp.status_code == 200, resp.get_data(as_text=True)
    body = resp.get_json()
    assert body["source"] == "k.png"
    assert body["rules"] == "kingdomino" and body["size"] == 5
    assert [[c["terrain"] for c in row] for row in body["cells"]] == \
        [[c["terrain"] for c in row] for row in kingdom_cells()]
    # middle kingdom (+10) applies; harmony does not (the bottom row has empty squares)
    assert body["score"]["total"] == FAKE_TOTAL + 10
    assert body["review"] == REVIEW
    assert body["permalink"].endswith(f"/r/{body['id']}")
    assert client.get(f"/r/{body['id']}").status_code == 200


def test_score_grid_contract(client):
    kingdom = {"rules": "kingdomino", "size": 5, "cells": kingdom_cells()}
    resp = client.post("/api/score-grid", json=kingdom)
    assert resp.status_code == 200
    body = resp.get_json()
    assert body["score"]["total"] == FAKE_TOTAL
    assert body["cells"][0][0] == {"terrain": "field", "crowns": 1}
    resp = client.post("/api/score-grid?bonus=middle-kingdom", json=kingdom)
    assert resp.get_json()["score"]["total"] == FAKE_TOTAL + 10


def test_build_from_scratch_and_save(client):
    page = client.get("/new?size=7")
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    data = json.loads(html.split('id="reading-data">', 1)[1].split("</script>", 1)[0])
    assert data["kingdom"]["size"] == 7 and data["kingdom"]["cells"][3][3]["terrain"] == "castle"
    token = page_token(client, "/new")
    kingdom = {"rules": "kingdomino", "size": 5, "cells": kingdom_cells(), "bonuses": ["harmony"],
               "player": "Bo"}
    resp = client.post("/api/readings", json=kingdom, headers={"X-CSRF-Token": token})
    assert resp.status_code == 201, resp.get_data(as_text=True)
    rid = resp.get_json()["id"]
    view = client.get(f"/api/readings/{rid}").get_json()
    assert view["score"]["total"] == FAKE_TOTAL and view["player"] == "Bo"
    assert view["photo"] is None and view["grid"] is None
    assert client.get(f"/r/{rid}").status_code == 200


def test_new_page_for_other_rule_sets(client):
    resp = client.get("/new?rules=origins-discovery")
    assert resp.status_code == 200
    data = json.loads(resp.get_data(as_text=True).split('id="reading-data">', 1)[1]
                      .split("</script>", 1)[0])
    assert data["kingdom"]["cells"][2][2]["terrain"] == "hut"
    assert client.get("/new?rules=nope").status_code == 400


def test_queendomino_pieces_are_scored(client):
    token = page_token(client, "/new")
    cells = [[{"terrain": "empty", "crowns": 0} for _ in range(5)] for _ in range(5)]
    cells[2][2] = {"terrain": "castle", "crowns": 0}
    cells[2][3] = {"terrain": "town", "crowns": 0, "building": {"crowns": 1, "points": 5}}
    cells[2][4] = {"terrain": "town", "crowns": 0}
    body = {"rules": "queendomino", "size": 5, "cells": cells, "coins": 7}
    resp = client.post("/api/score-grid", json=body, headers={"X-CSRF-Token": token})
    assert resp.status_code == 200, resp.get_data(as_text=True)
    score = resp.get_json()["score"]
    # town region 2 squares x 1 crown (on the building) = 2; building 5; coins 7 // 3 = 2
    assert score["total"] == 2 + 5 + 2


def test_tiebreak_order_is_kept_in_the_page(client):
    import engine

    token = page_token(client)
    url = upload(client, token).headers["Location"]
    html = client.get(url).get_data(as_text=True)
    data = json.loads(html.split('id="reading-data">', 1)[1].split("</script>", 1)[0])
    kingdom = engine.Kingdom.from_json({"rules": "kingdomino", "size": 5, "cells": kingdom_cells()})
    expected = list(engine.score(kingdom).to_json()["tiebreak"])
    assert len(expected) >= 2
    assert list(data["score"]["tiebreak"]) == expected


def test_serve_runs_waitress_on_localhost_with_the_given_db(monkeypatch, tmp_path):
    import waitress

    import webapp

    seen = {}

    monkeypatch.setattr(waitress, "create_server", not_listening(seen))
    monkeypatch.chdir(tmp_path)
    assert webapp.serve(port=5123, db="my.sqlite3") == 0
    assert seen["host"] == "127.0.0.1" and seen["port"] == 5123
    assert seen["app"].config["DATABASE"] == str(tmp_path / "my.sqlite3")
    assert not seen["app"].debug
    # the secret key sits beside the store, not in the folder the command ran from
    assert (tmp_path / "my.sqlite3").exists() and (tmp_path / "web" / "secret_key").exists()


def test_serve_without_a_store_uses_the_per_user_one(monkeypatch, tmp_path):
    import waitress

    import webapp

    seen = {}
    monkeypatch.setattr(waitress, "create_server", not_listening(seen))
    monkeypatch.setenv("KINGDOMINO_STORE", str(tmp_path / "data" / "k.sqlite3"))
    monkeypatch.chdir(tmp_path)
    assert webapp.serve(port=5124) == 0
    assert seen["app"].config["DATABASE"] == str(tmp_path / "data" / "k.sqlite3")
    assert not (tmp_path / "kingdomino.sqlite3").exists() and not (tmp_path / "instance").exists()


def test_serve_command_passes_trusted_hosts(monkeypatch, tmp_path):
    import webapp
    from kingdomino.cli import main

    seen = {}
    monkeypatch.setattr(webapp, "serve", lambda **kw: seen.update(kw) or 0)
    assert main(["serve", "--store", str(tmp_path / "s.sqlite3"), "--trusted-host", "a.example",
                 "--trusted-host", "b.example"]) == 0
    assert seen["trusted_hosts"] == ["a.example", "b.example"]


def test_stored_kingdom_that_no_longer_scores_still_opens(app, client):
    store = Store(app.config["DATABASE"])
    try:
        cells = kingdom_cells()
        cells[0][0] = {"terrain": "lava", "crowns": 0}
        rid = store.add_reading(rules="kingdomino", machine={"size": 5, "cells": cells})
    finally:
        store.close()
    page = client.get(f"/r/{rid}")
    assert page.status_code == 200
    assert "lava" in page.get_data(as_text=True)
    view = client.get(f"/api/readings/{rid}").get_json()
    assert view["score"] is None and "lava" in view["error"]


def test_rule_sets_extra_pieces_come_from_the_engine(client):
    """The editor offers the pieces each rule set declares (issue 14 #6), unchanged in the JSON."""
    import engine

    metas = {m["name"]: m for m in client.get("/api/rules").get_json()["rules"]}
    assert set(metas) == set(engine.rule_names())
    for name, meta in metas.items():
        rules = engine.get_rules(name)
        assert meta["pieces"] == {"cell": list(rules.cell_pieces),
                                  "kingdom": list(rules.kingdom_pieces)}
        assert meta["start"] == rules.start_terrain
    # what the page has always been sent for these (result.js draws its controls from it)
    assert metas["queendomino"]["pieces"] == {"cell": ["building"],
                                              "kingdom": ["coins", "knights", "queen"]}
    assert metas["origins-tribe"]["pieces"]["cell"] == ["fire_tokens", "resource", "caveman",
                                                        "warrior"]
    assert metas["origins-totem"]["pieces"] == {"cell": ["fire_tokens", "resource"],
                                                "kingdom": ["totems"]}
    assert metas["kingdomino"]["pieces"] == {"cell": [], "kingdom": []}


def test_api_module_has_routes_only(app):
    """The service the pages share lives apart from the API's routes (issue 14 #6)."""
    import webapp.api
    import webapp.service

    assert not hasattr(webapp.service, "bp")
    for name in ("view", "read_photo", "score_kingdom", "check_choice", "rules_meta"):
        assert not hasattr(webapp.api, name), name
