"""Every sentence a player meets on the pages follows their language (issue 52): the upload
form's refusals, the result of a photo with no kingdom, the batch page, the quest reasons that
POST /i18n/texts translates, and the rulebooks' words of ../shared/i18n/GLOSSARY.md.

"No English sentence" is checked as no run of three or more ASCII words in the text a person
reads, once file names, image formats, "Kingdomino", options and square names are set aside.
The photo's refusals are made by the reader itself (``vision.photo.files``), so a reworded one
that no template of ``kingdomino.photo_texts`` matches any more fails here.
"""
from __future__ import annotations

import io
import os
import re
from html.parser import HTMLParser

import pytest
from english_support import assert_no_english, english_in
from webapp_helpers import page_token, png_bytes

import engine
from kingdomino import i18n
from vision.errors import NO_KINGDOM, PhotoError
from vision.photo import files as photo_files

LANGUAGES = {"zh-TW": "zh_Hant", "zh-CN": "zh_Hans", "ko": "ko"}


class _Visible(HTMLParser):
    """The text a person sees on a page: no scripts, styles or the language menu (which names
    every language in its own words)."""

    def __init__(self):
        super().__init__()
        self.parts, self.hidden = [], 0

    def handle_starttag(self, tag, attrs):
        classes = dict(attrs).get("class") or ""
        if tag in ("script", "style") or (tag == "nav" and "languages" in classes) or self.hidden:
            self.hidden += 1

    def handle_endtag(self, tag):
        if self.hidden:
            self.hidden -= 1

    def handle_startendtag(self, tag, attrs):
        pass

    def handle_data(self, data):
        if not self.hidden:
            self.parts.append(data)


VOID = re.compile(r"<(?:input|img|br|meta|link|hr)\b[^>]*>", re.I)


def visible(html: str) -> str:
    parser = _Visible()
    parser.feed(VOID.sub(" ", html))
    return " ".join(" ".join(parser.parts).split())


# ----------------------------------------------------------------- the reader's refusals


def _refusals(tmp_path) -> list[str]:
    """The photo refusals a person can meet, as the reader words them today."""
    out = [NO_KINGDOM]
    for data in (b"", b"hello, this is text", b"\x00\x00\x00\x18ftypheic" + b"\x00" * 24,
                 png_bytes()[:40]):
        with pytest.raises(PhotoError) as exc:
            photo_files.check_photo(data)
        out.append(str(exc.value))
    with pytest.raises(PhotoError) as exc:
        photo_files.check_photo(png_bytes(), max_pixels=1000)
    out.append(str(exc.value))
    for path in (tmp_path / "missing.jpg", tmp_path):
        with pytest.raises(PhotoError) as exc:
            photo_files.read_photo_file(path)
        out.append(str(exc.value))
    link = tmp_path / "gone.jpg"
    os.symlink(tmp_path / "nowhere.jpg", link)
    out.append(photo_files.file_problem(link))
    return out


@pytest.mark.parametrize("locale", sorted(LANGUAGES.values()))
def test_every_refusal_of_the_reader_is_a_sentence_of_the_catalogs(tmp_path, locale):
    tr = i18n.translations(locale)
    for refusal in _refusals(tmp_path):
        assert i18n.parse(refusal), f"no template of kingdomino.photo_texts matches {refusal!r}"
        assert_no_english(str(i18n.render(refusal, tr)), f"{locale}: {refusal!r}")


# ----------------------------------------------------------------- the upload form


def _no_kingdom(photo, rules, bonuses=(), **_kw):
    raise PhotoError(NO_KINGDOM)


@pytest.fixture
def nothing_found(make_app):
    """An app whose reader finds no kingdom in any photo."""
    return make_app(READER=_no_kingdom).test_client()


def _upload(client, name, data, accept):
    return client.post("/upload", data={"csrf_token": page_token(client), "rules": "kingdomino",
                                        "photo": (io.BytesIO(data), name)},
                       headers={"Accept-Language": accept}, content_type="multipart/form-data")


@pytest.mark.parametrize("accept", sorted(LANGUAGES))
def test_the_upload_form_refuses_in_the_language(nothing_found, accept):
    for name, data in (("notes.txt", b"hello, this is text"), ("empty.jpg", b""),
                       ("cut.png", png_bytes()[:60]), ("photo.heic", b"\x00\x00\x00\x18ftypheic" + b"\x00" * 24)):
        resp = _upload(nothing_found, name, data, accept)
        assert resp.status_code == 400, name
        html = resp.get_data(as_text=True)
        error = re.search(r'<p class="error"[^>]*>(.*?)</p>', html, re.S).group(1)
        assert_no_english(error, f"{accept}: the refusal of {name}")
        assert '<p class="hint" lang="en">' not in html  # no English detail under it
        assert_no_english(visible(html), f"{accept}: the upload page refusing {name}")


@pytest.mark.parametrize("accept", sorted(LANGUAGES))
def test_a_photo_with_no_kingdom_is_said_in_the_language(nothing_found, accept):
    resp = _upload(nothing_found, "table.png", png_bytes(), accept)
    assert resp.status_code == 303
    page = nothing_found.get(resp.headers["Location"], headers={"Accept-Language": accept})
    text = visible(page.get_data(as_text=True))
    assert_no_english(text, f"{accept}: the result of a photo with no kingdom")
    said = i18n.render(NO_KINGDOM, i18n.translations(LANGUAGES[accept]))
    assert said != NO_KINGDOM and said in text


# ----------------------------------------------------------------- the batch page


def _batch_reader(photo, rules, bonuses=(), **_kw):
    """No kingdom in photos that say so; the fake reader's kingdom in the others."""
    from webapp_helpers import FakeReader

    if b"NOTHING" in photo:
        raise PhotoError(NO_KINGDOM)
    return FakeReader()(photo, rules, bonuses)


@pytest.mark.parametrize("accept", sorted(LANGUAGES))
def test_the_batch_results_are_in_the_language(make_app, accept):
    client = make_app(READER=_batch_reader, BATCH_JOBS=1, BATCH_WAIT=True).test_client()
    token = page_token(client, "/batch/")
    photos = [(io.BytesIO(png_bytes()), "ann.png"), (io.BytesIO(png_bytes() + b"NOTHING"), "bob.png"),
              (io.BytesIO(b"just some text, not a photo"), "notes.jpg")]
    resp = client.post("/batch/", data={"csrf_token": token, "rules": "kingdomino", "start": "1",
                                        "photos": photos},
                       headers={"Accept-Language": accept}, content_type="multipart/form-data")
    assert resp.status_code == 303, resp.get_data(as_text=True)[:300]
    page = client.get(resp.headers["Location"], headers={"Accept-Language": accept})
    html = page.get_data(as_text=True)
    status = visible(re.search(r'<p id="job-status">(.*?)</p>', html, re.S).group(1))
    assert re.search(r"3", status) and not english_in(status), status
    assert "photo(s) read" not in html and "to review" not in html
    assert_no_english(visible(html), f"{accept}: the batch results")


# ----------------------------------------------------------------- the quest reasons


def _texts(client, texts, accept, rules=None):
    body = {"texts": texts} if rules is None else {"texts": texts, "rules": rules}
    resp = client.post("/i18n/texts", json=body,
                       headers={"Accept-Language": accept, "X-CSRF-Token": page_token(client)})
    assert resp.status_code == 200, resp.get_data(as_text=True)
    return resp.get_json()["texts"]


QUEST_GRID = """rules: age-of-giants
F1 F1 F1 W0 F0
F1 W0 L0 W0 L0
F1 S0 C0 S0 F0
L0 M0 M0 M0 L0
F0 G0 G0 G0 F1"""


def _quest_reasons() -> list[str]:
    kingdom = engine.load_kingdom(QUEST_GRID)
    out = []
    for bonus in engine.bonus_names("age-of-giants"):
        out.append(str(engine.score(kingdom, bonuses=[bonus]).bonuses[0].reason))
    return out


@pytest.mark.parametrize("accept", sorted(LANGUAGES))
def test_every_quest_reason_is_translated_by_the_page_service(client, accept):
    reasons = _quest_reasons()
    assert "4 field corner(s) x 5 = 20 (r1c1, r1c5, r5c1, r5c5)" in reasons
    assert any(r.startswith("2 line(s) x 10 = 20: row 1 r1c1-r1c3 (1), column 1") for r in reasons)
    said = _texts(client, reasons, accept)
    for reason in reasons:
        assert reason in said, f"{accept}: not translated: {reason!r}"
        assert_no_english(said[reason], f"{accept}: {reason!r}")


def test_the_folie_des_grandeurs_rows_and_columns_are_each_language_s():
    reason = next(r for r in _quest_reasons() if "line(s)" in r)
    assert "第 1 列 r1c1-r1c3（1 條）、第 1 行 r1c1-r3c1（1 條）" in i18n.render(reason, i18n.translations("zh_Hant"))
    assert "第 1 行 r1c1-r1c3（1 条）、第 1 列 r1c1-r3c1（1 条）" in i18n.render(reason, i18n.translations("zh_Hans"))
    assert "1행 r1c1-r1c3 (1줄), 1열 r1c1-r3c1 (1줄)" in i18n.render(reason, i18n.translations("ko"))


# ----------------------------------------------------------------- the rulebooks' words

GLOSSARY = {  # ../shared/i18n/GLOSSARY.md: the word a player's rulebook uses, and what it replaced
    "zh_Hant": {"grassland": ("草地", "草原"), "harmony": ("和諧", None),
                "middle-kingdom": ("中央王國", None), "Queendomino": ("多米諾王后", "女王骨牌")},
    "zh_Hans": {"region": ("区域", "领地"), "largest region": ("最大区域", "领地"),
                "queen": ("王后", "女王")},
    "ko": {"middle-kingdom": ("미들 킹덤", "중앙 왕국"), "harmony": ("하모니", "조화"),
           "largest region": ("가장 넓은 영역", "가장 큰 영역")},
}


@pytest.mark.parametrize("locale", sorted(GLOSSARY))
def test_the_catalogs_use_the_glossary_s_words(locale):
    tr = i18n.translations(locale)
    for english, (word, old) in GLOSSARY[locale].items():
        said = tr.gettext(english)
        assert word in said, (english, said)
        assert old is None or old not in said, (english, said)


@pytest.mark.parametrize("locale", ["zh_Hant", "zh_Hans", "ko"])
def test_no_catalog_keeps_a_word_the_glossary_replaced(locale):
    replaced = {"zh_Hant": ("國王骨牌", "草原", "強力對決", "讀作", "被讀作", "骨牌", "標記", "地塊",
                            "同列"),
                "zh_Hans": ("领地", "翻倍", "国王多米诺", "女王多米诺", "骨牌", "读作", "地块", "个皇冠"),
                "ko": ("중앙 왕국", "조화", "왕조", "마이티 듀얼", "가장 큰 영역", "호수은", "탁자",
                       "신고한 점수")}[locale]
    with (i18n.CATALOGS / f"{locale}.po").open("rb") as fh:
        from babel.messages.pofile import read_po

        catalog = read_po(fh, locale=locale)
    for message in catalog:
        if message.id and message.string:
            for old in replaced:
                assert old not in message.string, f"{locale}: {old} in {message.string!r}"


def test_words_two_rulebooks_say_otherwise_follow_the_rule_set(app):
    tr = i18n.translations("zh_Hant")
    assert i18n.word(tr, "field") == "麥田" and i18n.word(tr, "field", "domain") == "原野"
    assert i18n.word(tr, "region") == "資產" and i18n.word(tr, "region", "origins-tribe") == "區域"
    with app.test_request_context(headers={"Accept-Language": "zh-TW"}):
        from webapp import service, terms

        names = terms.page_names(service.all_rules_meta())
    assert names["terrains"]["field"] == "麥田" and names["terrains_of"]["domain"]["field"] == "原野"
    assert names["rulebooks"]["origins-totem"] == "origins" and "kingdomino" not in names["rulebooks"]
    script = i18n.script_catalog("zh_Hant")
    assert script["origins" + i18n.CONTEXT_GLUE + "largest region %(n)s"] == "最大相連區域 %(n)s 格"


@pytest.mark.parametrize("accept, order", [
    ("zh-TW", "最大相連資產 5 格，其次是皇冠 9 頂"), ("zh-CN", "最大区域 5 格，其次是皇冠 9 顶"),
    ("ko", "가장 넓은 영역 5칸, 그다음 왕관 9개")])
def test_the_tie_break_is_said_with_the_language_s_punctuation(app, accept, order):
    with app.test_request_context(headers={"Accept-Language": accept}):
        from webapp import terms

        said = terms.tiebreak_text({"largest_region": 5, "crowns": 9}, "kingdomino")
    assert said.endswith(order) and ", " not in said.replace("영역 5칸, 그다음", "")


@pytest.mark.parametrize("accept, order", [
    ("zh-TW", "平手判定：最大相連資產"), ("zh-CN", "平局判定：最大区域"), ("ko", "동점 처리: 가장 넓은 영역")])
def test_the_game_page_is_in_the_language(make_app, table_reader, accept, order):
    client = make_app(TABLE_READER=table_reader).test_client()
    resp = client.post("/upload", data={"csrf_token": page_token(client), "rules": "kingdomino",
                                        "all": "1", "photo": (io.BytesIO(png_bytes()), "t.png")},
                       content_type="multipart/form-data")
    assert resp.status_code == 303
    html = client.get(resp.headers["Location"], headers={"Accept-Language": accept}).get_data(
        as_text=True)
    text = visible(html)
    assert order in text and "Tie-break" not in text
    assert_no_english(text, f"{accept}: the game page")
