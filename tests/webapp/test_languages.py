"""The pages in Traditional Chinese, Simplified Chinese, Korean and English (issue 19).

The language comes from the language menu's cookie, else Accept-Language; ``<html lang>`` names
it; the words come from ``webapp/translations/<locale>.po`` (the page scripts' too).
"""
from __future__ import annotations

import io
import re

import pytest
from babel.messages.pofile import read_po
from webapp_helpers import page_token, png_bytes

from kingdomino import i18n

CJK_OR_HANGUL = re.compile(r"[\u1100-\u11ff\u3000-\u30ff\u3130-\u318f\u3400-\u4dbf"
                           r"\u4e00-\u9fff\uac00-\ud7af\uff00-\uffef]")
LANGUAGE_MENU = re.compile(r'<nav class="languages".*?</nav>', re.S)

# Accept-Language -> (<html lang>, upload page heading, result page "Why this score", "Total")
PAGES = {
    "zh-TW,zh;q=0.9": ("zh-Hant", "用照片為王國計分", "分數明細", "總分"),
    "zh-CN,zh;q=0.9": ("zh-Hans", "用照片为王国计分", "分数明细", "总分"),
    "ko-KR,ko;q=0.9,en;q=0.5": ("ko", "사진으로 왕국 점수 내기", "점수 내역", "합계"),
    "en-US,en;q=0.9": ("en", "Score a kingdom from a photo", "Why this score", "Total"),
}


def _reading(client) -> str:
    token = page_token(client)
    resp = client.post("/upload", data={"csrf_token": token, "rules": "kingdomino",
                                        "photo": (io.BytesIO(png_bytes()), "k.png")},
                       content_type="multipart/form-data")
    assert resp.status_code == 303, resp.get_data(as_text=True)[:400]
    return resp.headers["Location"].rsplit("/", 1)[1]


def _html_lang(html: str) -> str:
    return re.search(r'<html lang="([^"]+)"', html).group(1)


def _without_menu(html: str) -> str:
    """The page less its language menu (which names every language in that language)."""
    return LANGUAGE_MENU.sub("", html)


@pytest.mark.parametrize("accept", list(PAGES))
def test_upload_and_result_pages_follow_accept_language(client, accept):
    lang, heading, why, total = PAGES[accept]
    rid = _reading(client)
    home = client.get("/", headers={"Accept-Language": accept}).get_data(as_text=True)
    result = client.get(f"/r/{rid}", headers={"Accept-Language": accept}).get_data(as_text=True)
    for html in (home, result):
        assert _html_lang(html) == lang
    assert f"<h1>{heading}</h1>" in home
    assert why in result and f'<span class="label">{total}</span>' in result
    if lang == "en":
        for html in (home, result):
            found = CJK_OR_HANGUL.findall(_without_menu(html))
            assert not found, f"an English page carries CJK or Hangul: {found[:10]}"
    else:
        assert CJK_OR_HANGUL.search(_without_menu(home))


def test_traditional_and_simplified_are_different_text(client):
    tw = client.get("/", headers={"Accept-Language": "zh-TW"}).get_data(as_text=True)
    cn = client.get("/", headers={"Accept-Language": "zh-CN"}).get_data(as_text=True)
    hk = client.get("/", headers={"Accept-Language": "zh-HK"}).get_data(as_text=True)
    assert _html_lang(hk) == "zh-Hant"  # Hong Kong reads the traditional script too
    assert _without_menu(tw) != _without_menu(cn)
    assert "為" in tw and "為" not in _without_menu(cn) and "为" in cn


def test_rule_set_and_bonus_names_are_shown_in_the_language(client):
    html = client.get("/", headers={"Accept-Language": "ko"}).get_data(as_text=True)
    assert "킹도미노 (기본 게임; 7x7 왕국 포함)" in html  # the rulebook's "7x7 왕국"
    assert "미들 킹덤" in html and 'value="middle-kingdom"' in html  # the form still sends the name


def test_the_language_menu_is_on_every_page_and_remembered(client):
    rid = _reading(client)
    for url in ("/", f"/r/{rid}", "/new", "/batch/", "/no-such-page"):
        html = client.get(url).get_data(as_text=True)
        assert 'id="languages"' in html, url
        assert 'hreflang="ko"' in html and 'hreflang="zh-Hant"' in html, url
    resp = client.get("/lang/ko?next=/new")
    assert resp.status_code == 303 and resp.headers["Location"].endswith("/new")
    assert "lang=ko" in resp.headers["Set-Cookie"]
    # the choice outranks the browser's language from now on
    html = client.get("/new", headers={"Accept-Language": "zh-TW"}).get_data(as_text=True)
    assert _html_lang(html) == "ko" and "직접 왕국 만들기" in html


@pytest.mark.parametrize("target", ["//evil.example/x", "https://evil.example/", "/\\evil.example"])
def test_the_language_menu_only_goes_back_to_this_site(client, target):
    resp = client.get("/lang/zh_Hans", query_string={"next": target})
    assert resp.status_code == 303
    assert resp.headers["Location"] in ("/", "http://localhost/")


def test_an_unknown_language_is_a_404_page_not_a_crash(client):
    resp = client.get("/lang/xx")
    assert resp.status_code == 404
    assert "choose one from the menu" in resp.get_data(as_text=True)


def test_error_pages_speak_the_language_with_the_english_detail_under(client):
    resp = client.get("/r/nosuchid", headers={"Accept-Language": "zh-TW"})
    html = resp.get_data(as_text=True)
    assert resp.status_code == 404 and _html_lang(html) == "zh-Hant"
    assert "找不到頁面" in html and "這個網址沒有內容" in html
    assert 'lang="en"' in html and "check the link" in html  # the specific reason, in English
    api = client.get("/api/readings/nosuchid", headers={"Accept-Language": "zh-TW"})
    assert api.status_code == 404 and not CJK_OR_HANGUL.search(api.get_data(as_text=True))


def test_page_scripts_get_the_catalog_of_the_page_language(client):
    html = client.get("/new", headers={"Accept-Language": "zh-CN"}).get_data(as_text=True)
    assert '/i18n/zh_Hans.js' in html
    script = client.get("/i18n/zh_Hans.js")
    assert script.status_code == 200 and script.mimetype == "text/javascript"
    text = script.get_data(as_text=True)
    assert '"mine": "山峰"' in text and '"Undo": "撤销"' in text
    assert client.get("/i18n/xx.js").status_code == 404


# the rulebooks' words the issue lists (and those filled in from the published editions)
RULEBOOK = {
    "zh_Hant": {"field": "麥田", "lake": "湖泊", "forest": "森林", "mine": "山脈", "castle": "城堡",
                "grassland": "草地", "swamp": "沼澤", "Crowns": "皇冠", "Terrain": "地形",
                "region": "資產", "Points": "聲望分數"},
    "zh_Hans": {"field": "麦田", "swamp": "沼泽", "lake": "湖泊", "forest": "森林", "mine": "山峰",
                "Terrain": "领土"},
    "ko": {"forest": "숲", "grassland": "초원", "castle": "왕궁", "Crowns": "왕관", "Terrain": "지형",
           "region": "영역", "field": "밀밭", "lake": "호수", "mine": "광산"},
}


@pytest.mark.parametrize("locale", sorted(RULEBOOK))
def test_catalogs_use_the_rulebooks_words(locale):
    tr = i18n.translations(locale)
    for english, word in RULEBOOK[locale].items():
        assert tr.gettext(english) == word, english


@pytest.mark.parametrize("locale", ["zh_Hant", "zh_Hans", "ko"])
def test_every_message_is_translated_with_the_same_placeholders(locale):
    with (i18n.CATALOGS / f"{locale}.po").open("rb") as fh:
        catalog = read_po(fh, locale=locale)
    english = read_po((i18n.CATALOGS / "en.po").open("rb"), locale="en")
    assert {m.id for m in catalog if m.id} == {m.id for m in english if m.id}, \
        "the catalogs list different messages: update them from the same template (README)"
    names = re.compile(r"%\((\w+)\)s")
    for m in catalog:
        if not m.id:
            continue
        assert m.string and not m.fuzzy, f"{locale}: not translated: {m.id!r}"
        assert sorted(names.findall(m.string)) == sorted(names.findall(m.id)), m.id


@pytest.mark.parametrize("tag, locale", [
    ("zh-TW", "zh_Hant"), ("zh-HK", "zh_Hant"), ("zh-Hant", "zh_Hant"), ("zh-CN", "zh_Hans"),
    ("zh-SG", "zh_Hans"), ("zh", "zh_Hans"), ("ko-KR", "ko"), ("en-GB", "en"), ("fr-FR", None),
    ("zh_TW.UTF-8", "zh_Hant"), ("C", None), ("", None), ("not a tag!", None)])
def test_language_tags_are_matched_by_language_and_script(tag, locale):
    assert i18n.match(tag) == locale


def test_a_fifth_language_is_one_catalog_file(tmp_path, monkeypatch, make_app):
    for name in i18n.available():
        (tmp_path / f"{name}.po").write_bytes((i18n.CATALOGS / f"{name}.po").read_bytes())
    (tmp_path / "fr.po").write_text(
        'msgid ""\nmsgstr ""\n"Language: fr\\n"\n"Content-Type: text/plain; charset=utf-8\\n"\n\n'
        'msgid "Score a kingdom from a photo"\nmsgstr "Compter un royaume sur une photo"\n',
        encoding="utf-8")
    monkeypatch.setattr(i18n, "CATALOGS", tmp_path)
    for cached in (i18n._catalog, i18n.translations, i18n.script_catalog):
        cached.cache_clear()
    try:
        assert "fr" in i18n.available()
        client = make_app().test_client()
        html = client.get("/", headers={"Accept-Language": "fr-FR"}).get_data(as_text=True)
        assert _html_lang(html) == "fr" and "<h1>Compter un royaume sur une photo</h1>" in html
        english = client.get("/", headers={"Accept-Language": "en"}).get_data(as_text=True)
        assert 'hreflang="fr"' in english  # and the menu offers it
    finally:
        for cached in (i18n._catalog, i18n.translations, i18n.script_catalog):
            cached.cache_clear()


def test_csv_downloads_from_the_pages_start_with_a_byte_order_mark(client):
    rid = _reading(client)
    html = client.get(f"/r/{rid}").get_data(as_text=True)
    assert f"/r/{rid}.csv?bom=1" in html
    assert client.get(f"/r/{rid}.csv?bom=1").get_data().startswith(b"\xef\xbb\xbfid,")
    assert client.get(f"/r/{rid}.csv").get_data().startswith(b"id,")  # scripts: as before


def test_the_upload_form_says_what_is_wrong_in_the_language(client):
    token = page_token(client)
    resp = client.post("/upload", data={"csrf_token": token, "rules": "kingdomino"},
                       headers={"Accept-Language": "ko"}, content_type="multipart/form-data")
    html = resp.get_data(as_text=True)
    assert resp.status_code == 400 and _html_lang(html) == "ko"
    assert "먼저 왕국 사진을 고르세요" in html
    # a reason without a translation: said in general in the language, the reason in English
    resp = client.post("/upload", data={"csrf_token": token, "rules": "no-such-rules",
                                        "photo": (io.BytesIO(png_bytes()), "k.png")},
                       headers={"Accept-Language": "zh-TW"}, content_type="multipart/form-data")
    html = resp.get_data(as_text=True)
    assert resp.status_code == 400 and "無法處理此請求" in html and '<p class="hint" lang="en">' in html


def test_the_game_and_batch_pages_speak_the_language(make_app, table_reader):
    client = make_app(TABLE_READER=table_reader).test_client()
    token = page_token(client)
    resp = client.post("/upload", data={"csrf_token": token, "rules": "kingdomino", "all": "1",
                                        "photo": (io.BytesIO(png_bytes()), "t.png")},
                       content_type="multipart/form-data")
    assert resp.status_code == 303 and "/game/" in resp.headers["Location"]
    game = client.get(resp.headers["Location"], headers={"Accept-Language": "zh-CN"})
    html = game.get_data(as_text=True)
    assert _html_lang(html) == "zh-Hans" and "整桌：2 个王国" in html and "明细</a>" in html
    assert "被照片边缘切到：不完整" in html  # the second kingdom is cut by the photo's edge
    batch = client.get("/batch/", headers={"Accept-Language": "ko"}).get_data(as_text=True)
    assert _html_lang(batch) == "ko" and "대회 전체 점수 내기" in batch
