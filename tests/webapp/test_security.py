"""CSRF protection, safe defaults, secret key, headers."""
from __future__ import annotations

import inspect
import io
import os
import stat

from webapp_helpers import kingdom_cells, not_listening, page_token, png_bytes

import webapp


def _reading(client, token):
    resp = client.post("/upload", data={"csrf_token": token, "rules": "kingdomino",
                                        "photo": (io.BytesIO(png_bytes()), "k.png")},
                       content_type="multipart/form-data")
    assert resp.status_code == 303
    return resp.headers["Location"].rsplit("/", 1)[1]


def test_form_post_needs_the_token(client):
    page_token(client)  # the browser has a session now
    resp = client.post("/upload", data={"rules": "kingdomino",
                                        "photo": (io.BytesIO(png_bytes()), "k.png")},
                       content_type="multipart/form-data")
    assert resp.status_code == 403
    assert b"reload the page" in resp.data


def test_correction_needs_the_token(client):
    token = page_token(client)
    rid = _reading(client, token)
    kingdom = {"rules": "kingdomino", "size": 5, "cells": kingdom_cells()}
    resp = client.post(f"/api/readings/{rid}/kingdom", json=kingdom)
    assert resp.status_code == 403 and "token" in resp.get_json()["error"]
    resp = client.post(f"/api/readings/{rid}/kingdom", json=kingdom,
                       headers={"X-CSRF-Token": "forged"})
    assert resp.status_code == 403
    assert client.get(f"/api/readings/{rid}").get_json()["corrections"] == 0


def test_token_of_another_session_is_refused(app):
    alice, mallory = app.test_client(), app.test_client()
    token_a = page_token(alice)
    rid = _reading(alice, token_a)
    page_token(mallory)
    kingdom = {"rules": "kingdomino", "size": 5, "cells": kingdom_cells()}
    resp = mallory.post(f"/api/readings/{rid}/kingdom", json=kingdom,
                        headers={"X-CSRF-Token": page_token(alice)})
    assert resp.status_code == 403


def test_script_without_cookies_needs_no_token_but_browser_session_does(client):
    kingdom = {"size": 5, "cells": kingdom_cells()}
    assert client.post("/api/score-grid", json=kingdom).status_code == 200
    token = page_token(client)  # now the client carries a session cookie, like a browser
    assert client.post("/api/score-grid", json=kingdom).status_code == 403
    assert client.post("/api/score-grid", json=kingdom,
                       headers={"X-CSRF-Token": token}).status_code == 200


def test_cross_site_requests_are_refused(client):
    kingdom = {"size": 5, "cells": kingdom_cells()}
    resp = client.post("/api/score-grid", json=kingdom, headers={"Origin": "https://evil.example"})
    assert resp.status_code == 403 and "another web site" in resp.get_json()["error"]
    resp = client.post("/api/score-grid", json=kingdom, headers={"Sec-Fetch-Site": "cross-site"})
    assert resp.status_code == 403
    resp = client.post("/api/score-grid", json=kingdom, headers={"Origin": "null"})
    assert resp.status_code == 403
    # same origin is fine
    resp = client.post("/api/score-grid", json=kingdom, headers={"Origin": "http://localhost"})
    assert resp.status_code == 200


def test_secret_key_made_once_and_private(make_app, tmp_path):
    a = make_app()
    b = make_app()
    assert a.config["SECRET_KEY"] == b.config["SECRET_KEY"] and len(a.config["SECRET_KEY"]) >= 32
    path = tmp_path / "instance" / "secret_key"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    # a session made before a restart is still valid after it
    client = a.test_client()
    token = page_token(client)
    client2 = b.test_client()
    for cookie in client._cookies.values():
        client2.set_cookie(cookie.key, cookie.value, domain=cookie.domain)
    kingdom = {"size": 5, "cells": kingdom_cells()}
    assert client2.post("/api/score-grid", json=kingdom,
                        headers={"X-CSRF-Token": token}).status_code == 200


def test_safe_defaults(app, client):
    params = inspect.signature(webapp.serve).parameters
    assert params["host"].default == "127.0.0.1"
    assert not app.debug
    assert 0 < app.config["MAX_CONTENT_LENGTH"] <= 100 * 1024 * 1024
    assert app.config["SESSION_COOKIE_HTTPONLY"] and app.config["SESSION_COOKIE_SAMESITE"] == "Lax"
    resp = client.get("/")
    assert "script-src 'self'" in resp.headers["Content-Security-Policy"]
    assert resp.headers["X-Frame-Options"] == "DENY"


def test_player_name_is_escaped(client):
    token = page_token(client)
    resp = client.post("/upload", data={"csrf_token": token, "rules": "kingdomino",
                                        "player": "</script><script>alert(1)</script>",
                                        "photo": (io.BytesIO(png_bytes()), "k.png")},
                       content_type="multipart/form-data")
    html = client.get(resp.headers["Location"]).get_data(as_text=True)
    assert "<script>alert(1)" not in html


# ---------------------------------------------------------------- Host header (issue 15 #12)


def test_untrusted_host_is_refused_everywhere(make_app):
    app = make_app(TRUSTED_HOSTS=["localhost", "127.0.0.1"])
    client = app.test_client()
    evil = "http://evil.example:5077"
    resp = client.get("/", base_url=evil)
    assert resp.status_code == 400 and b"evil.example" not in resp.data
    resp = client.post("/api/score-grid", json={"size": 5, "cells": kingdom_cells()},
                       base_url=evil, headers={"Origin": evil})
    assert resp.status_code == 400 and "host" in resp.get_json()["error"].lower()
    # DNS rebinding: a page of evil.example with its own session tries a correction
    token = page_token(client)
    rid = _reading(client, token)
    kingdom = {"rules": "kingdomino", "size": 5, "cells": kingdom_cells()}
    resp = client.post(f"/api/readings/{rid}/kingdom", json=kingdom, base_url=evil,
                       headers={"Origin": evil, "X-CSRF-Token": token})
    assert resp.status_code == 400
    assert client.get(f"/api/readings/{rid}").get_json()["corrections"] == 0
    # the names it was started for still work, with a port
    assert client.get("/", base_url="http://localhost:5077").status_code == 200
    assert client.get("/", base_url="http://127.0.0.1:5077").status_code == 200


def test_permalinks_name_only_a_trusted_host(make_app):
    client = make_app(TRUSTED_HOSTS=["localhost"]).test_client()
    form = {"photo": (io.BytesIO(png_bytes()), "k.png")}
    resp = client.post("/api/score", data=form, content_type="multipart/form-data",
                       base_url="http://localhost:5077")
    assert resp.get_json()["permalink"].startswith("http://localhost:5077/r/")
    form = {"photo": (io.BytesIO(png_bytes()), "k.png")}
    resp = client.post("/api/score", data=form, content_type="multipart/form-data",
                       base_url="http://evil.example")
    assert resp.status_code == 400 and "permalink" not in resp.get_json()


def _served(monkeypatch, tmp_path, **kwargs):
    import waitress

    seen = {}
    monkeypatch.setattr(waitress, "create_server", not_listening(seen))
    monkeypatch.chdir(tmp_path)
    assert webapp.serve(db="s.sqlite3", **kwargs) == 0
    return seen


def test_serve_trusts_the_host_it_listens_on_and_localhost(monkeypatch, tmp_path):
    monkeypatch.delenv("KINGDOMINO_TRUSTED_HOSTS", raising=False)
    hosts = _served(monkeypatch, tmp_path, host="192.168.1.20")["app"].config["TRUSTED_HOSTS"]
    assert {"192.168.1.20", "localhost", "127.0.0.1"} <= set(hosts)
    assert "evil.example" not in hosts
    hosts = _served(monkeypatch, tmp_path, host="127.0.0.1",
                    trusted_hosts=["scores.club.example"])["app"].config["TRUSTED_HOSTS"]
    assert "scores.club.example" in hosts and "localhost" in hosts
    monkeypatch.setenv("KINGDOMINO_TRUSTED_HOSTS", "a.example, b.example")
    hosts = _served(monkeypatch, tmp_path)["app"].config["TRUSTED_HOSTS"]
    assert {"a.example", "b.example", "localhost"} <= set(hosts)


def test_serve_limits_connections_and_slow_clients(monkeypatch, tmp_path):
    """Issue 15 #9: connections that never finish their headers must not hold the server."""
    seen = _served(monkeypatch, tmp_path)
    app = seen["app"]
    assert 0 < seen["channel_timeout"] <= 30
    assert 0 < seen["cleanup_interval"] <= seen["channel_timeout"]
    assert seen["connection_limit"] >= 100
    assert seen["max_request_header_size"] <= 256 * 1024
    assert app.config["MAX_CONTENT_LENGTH"] < seen["max_request_body_size"] \
        <= 2 * app.config["MAX_CONTENT_LENGTH"]
    assert seen["asyncore_use_poll"] is True  # select() stops at 1024 descriptors
    assert seen["threads"] >= 2
