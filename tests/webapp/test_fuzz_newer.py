"""Property tests of the endpoints added after the first hardening round (issue 48): the outline
given by hand, the engine-sentence translations, the language menu, the game page and the batch
page's photos / start / progress. Whatever a client sends, no answer is a 500, an API error is
JSON with a message, and a redirect never leaves the site."""
from __future__ import annotations

import io
import json
from urllib.parse import urlsplit

import pytest
from webapp_helpers import CORNERS, FakeReader, page_token, png_bytes

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

SETTINGS = dict(deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.function_scoped_fixture])

# raw JSON texts no ordinary encoder makes: deep nesting, numbers past every float
NASTY_JSON = ["[" * 100_000 + "]" * 100_000, '{"a":' * 50_000 + "1" + "}" * 50_000,
              '{"corners": [[' + "9" * 400 + ', 1], [1, 1], [2, 2], [3, 3]], "size": 5}',
              '{"corners": [[1e400, 1], [1, 1], [2, 2], [3, 3]]}', '{"texts": ' + "[" * 5000 + "]" * 5000 + "}",
              '{"corners": "' + "9" * 400 + ',1,2,3,4,5,6,7"}', '{"texts": [' + '"a",' * 5000 + '"a"]}',
              "", "null", "nul", '{"corners": NaN}', '"\\ud800"']


def json_values():
    scalars = (st.none() | st.booleans() | st.integers(min_value=-10**60, max_value=10**60)
               | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=40)
               | st.sampled_from(["5", "7", "auto", "1,2,3,4,5,6,7,8", "a: 1 + 1 a" * 50]))
    return st.recursive(scalars, lambda inner: st.lists(inner, max_size=6)
                        | st.dictionaries(st.text(max_size=10), inner, max_size=5), max_leaves=30)


def outline_bodies():
    corner = st.lists(st.integers(-10**30, 10**30) | st.floats(allow_nan=True), min_size=0, max_size=3)
    return (st.fixed_dictionaries({"corners": st.lists(corner, max_size=5) | json_values(),
                                   "size": json_values()})
            | st.dictionaries(st.sampled_from(["corners", "size", "rules"]), json_values(), max_size=3)
            | json_values())


def raw(body) -> str | None:
    try:
        return json.dumps(body)
    except (ValueError, OverflowError):
        return None


def assert_sane(resp, api: bool):
    assert resp.status_code < 500, resp.get_data(as_text=True)[:300]
    if api and resp.status_code >= 400:
        assert resp.is_json and isinstance(resp.get_json().get("error"), str), resp.data[:200]
    location = resp.headers.get("Location")
    if location is not None:
        parts = urlsplit(location)
        if parts.netloc:  # werkzeug's own redirects (a doubled slash merged) name this host
            assert parts.scheme == "http" and parts.netloc == "localhost", location
        else:
            assert location.startswith("/") and not location.startswith(("//", "/\\")), location
        assert not any(ord(ch) < 0x21 or ch == "\\" for ch in location), repr(location)


@pytest.fixture
def fuzz(make_app, fresh_jobs, table_reader):
    app = make_app(TABLE_READER=table_reader, BATCH_JOBS=1, BATCH_WAIT=True,
                   BATCH_MAX_WAITING=10**6, MAX_CONTENT_LENGTH=2 * 1024 * 1024)
    client = app.test_client()
    token = page_token(client)
    h = {"X-CSRF-Token": token, "Accept": "application/json"}
    resp = client.post("/api/score", data={"photo": (io.BytesIO(png_bytes(640, 520)), "k.png")},
                       content_type="multipart/form-data", headers=h)
    assert resp.status_code == 200, resp.get_data(as_text=True)
    return app, client, h, resp.get_json()["id"]


def test_outline_endpoint_never_500(fuzz):
    app, client, h, rid = fuzz
    app.config["READ_OUTLINE"] = lambda photo, corners, size, rules, bonuses=(): FakeReader()(photo, rules, bonuses)
    url = f"/api/readings/{rid}/outline"
    for text in NASTY_JSON:
        assert_sane(client.post(url, data=text, content_type="application/json", headers=h), True)

    @settings(max_examples=150, **SETTINGS)
    @given(body=outline_bodies(), target=st.sampled_from([rid, "nope", "x" * 300, "%00"]))
    def check(body, target):
        text = raw(body)
        if text is not None:
            resp = client.post(f"/api/readings/{target}/outline", data=text,
                               content_type="application/json", headers=h)
            assert_sane(resp, True)

    check()
    good = {"corners": CORNERS, "size": 5}
    assert client.post(url, json=good, headers=h).status_code == 200  # the fuzz broke nothing


def test_translation_endpoint_never_500(fuzz):
    _app, client, h, _rid = fuzz
    for text in NASTY_JSON:
        for lang in ("ko", "zh-TW", "en"):
            resp = client.post("/i18n/texts", data=text, content_type="application/json",
                               headers={**h, "Accept-Language": lang})
            assert_sane(resp, False)

    sentences = st.text(max_size=200) | st.sampled_from(
        ["4 field corner(s) x 5 = 20", "a: 1 + 1 a" * 100, "lake: 3 squares x 2 crowns = 6",
         "\x00\u202e" * 50, "%(x)s {0} {}"])

    @settings(max_examples=120, **SETTINGS)
    @given(body=st.fixed_dictionaries({"texts": st.lists(sentences, max_size=8)}) | json_values(),
           lang=st.sampled_from(["ko", "zh-TW", "zh-CN", "en", "xx", "ko;q=x", "*" * 300]))
    def check(body, lang):
        text = raw(body)
        if text is not None:
            resp = client.post("/i18n/texts", data=text, content_type="application/json",
                               headers={**h, "Accept-Language": lang})
            assert_sane(resp, False)
            if resp.status_code == 200:
                assert isinstance(resp.get_json()["texts"], dict)

    check()


def test_language_menu_never_leaves_the_site(fuzz):
    _app, client, _h, _rid = fuzz
    awkward = st.sampled_from(["/\t/evil.example", "/\\evil.example", "//evil.example",
                               "/\r\nSet-Cookie:x=1", "javascript:alert(1)", "https://evil.example",
                               "/%2F%2Fevil.example", " /x", "/ok/page?q=1", "\x00/x", "/\u3000/x"])

    @settings(max_examples=200, **SETTINGS)
    @given(locale=st.sampled_from(["en", "ko", "zh-TW", "zh-CN"]) | st.text(max_size=12),
           target=awkward | st.text(max_size=40) | st.text(alphabet="/\\\t\r\n .%:@?#", max_size=12))
    def check(locale, target):
        resp = client.get("/lang/" + locale.replace("/", "%2F").replace("?", "%3F").replace("#", "%23"),
                          query_string={"next": target})
        assert_sane(resp, False)

    check()


def test_game_page_never_500(fuzz):
    _app, client, h, rid = fuzz
    made = client.post("/api/score", data={"all": "1", "photo": (io.BytesIO(png_bytes(900, 500)), "t.png")},
                       content_type="multipart/form-data", headers=h)
    assert made.status_code == 200, made.get_data(as_text=True)
    ids = [k["id"] for k in made.get_json()["kingdoms"]]

    @settings(max_examples=120, **SETTINGS)
    @given(picked=st.lists(st.sampled_from(ids + [rid, "nope", "x" * 41, ""]), max_size=10),
           names=st.lists(st.text(max_size=30) | st.sampled_from(["kingdom 0", "kingdom 1", "\x00\u202e"]),
                          max_size=12))
    def check(picked, names):
        resp = client.get("/game/" + ".".join(picked).replace("/", "%2F").replace("?", "%3F"),
                          query_string={"name": names})
        assert_sane(resp, False)

    check()


def test_batch_photos_start_progress_never_500(fuzz):
    _app, client, h, _rid = fuzz
    made = client.post("/batch/", data={"rules": "kingdomino"}, content_type="multipart/form-data",
                       headers=h)
    assert made.status_code < 500
    job_ids = ["nope", "0" * 200]
    if made.status_code == 201:
        job_ids.append(made.get_json()["upload"].split("/")[-2])
    photos = st.sampled_from([b"", b"\x89PNG\r\n\x1a\n", png_bytes(60, 50), b"PK\x03\x04junk",
                              b"\xff\xd8\xff", b"a,b\rc\n" * 10])

    @settings(max_examples=120, **SETTINGS)
    @given(job=st.sampled_from(job_ids) | st.text(alphabet="abcdef0123456789-", max_size=40),
           photo=photos, name=st.text(max_size=30), field=st.sampled_from(["photos", "manifest", "x"]),
           json_accept=st.booleans())
    def check(job, photo, name, field, json_accept):
        headers = h if json_accept else {"X-CSRF-Token": h["X-CSRF-Token"]}
        resp = client.post(f"/batch/{job}/photos", data={field: (io.BytesIO(photo), name or "p")},
                           content_type="multipart/form-data", headers=headers)
        assert_sane(resp, json_accept)
        assert_sane(client.get(f"/batch/{job}/progress", headers=headers), False)
        assert_sane(client.post(f"/batch/{job}/start", headers=headers), json_accept)
        assert_sane(client.get(f"/batch/{job}"), False)

    check()
