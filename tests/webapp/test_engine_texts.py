"""The result page shows the engine's sentences (warnings, bonus reasons, courtier lines) in
the page's language, and English pages exactly as the engine says them (issue 19)."""
from __future__ import annotations

import html
import json
import re

import pytest
from webapp_helpers import page_token

E = {"terrain": "empty", "crowns": 0}
CJK_OR_HANGUL = re.compile(r"[\u1100-\u11ff\u3000-\u30ff\u3130-\u318f\u3400-\u4dbf"
                           r"\u4e00-\u9fff\uac00-\ud7af\uff00-\uffef]")
WARNING = "1 square(s) not joined to the castle: row 1 col 1"
REASON = "not met: frame completely filled, no domino discarded"
COURTIER = "Lumberjack r2c1: 3 + 2 wood x 3 = 9"
SAID = {"zh-TW": ("1 格未與城堡相連：第 1 列第 1 行", "未達成：王國完整填滿"),
        "zh-CN": ("1 格未与城堡相连：第 1 行第 1 列", "未达成：王国完全填满"),
        "ko-KR": ("왕궁에 이어지지 않은 칸 1개: 1행 1열", "미달성: 왕국을 빈칸 없이 채움")}


def _lost():
    cells = [[dict(E) for _ in range(5)] for _ in range(5)]
    cells[0][0] = {"terrain": "field", "crowns": 1}
    cells[2][2] = {"terrain": "castle", "crowns": 0}
    cells[2][3] = {"terrain": "field", "crowns": 0}
    return {"rules": "kingdomino", "size": 5, "cells": cells, "bonuses": ["harmony"]}


def _page_data(client, rid, accept):
    page = client.get(f"/r/{rid}", headers={"Accept-Language": accept}).get_data(as_text=True)
    data = json.loads(html.unescape(re.search(
        r'id="reading-data">(.*?)</script>', page, re.S).group(1)))
    texts = json.loads(html.unescape(re.search(
        r'id="texts-data">(.*?)</script>', page, re.S).group(1)))
    return page, data, texts


@pytest.fixture
def reading(client):
    token = page_token(client)
    resp = client.post("/api/readings", json=_lost(), headers={"X-CSRF-Token": token})
    assert resp.status_code == 201, resp.get_data(as_text=True)
    return resp.get_json()["id"]


@pytest.mark.parametrize("accept", sorted(SAID))
def test_the_result_page_hands_the_script_the_sentences_in_its_language(client, reading, accept):
    _, data, texts = _page_data(client, reading, accept)
    assert data["score"]["warnings"] == [WARNING]  # the reading's JSON keeps the English
    warning, reason = SAID[accept]
    assert texts[WARNING] == warning
    assert texts[REASON].startswith(reason)


def test_english_pages_carry_the_engines_english_and_no_cjk(client, reading):
    page, data, texts = _page_data(client, reading, "en-US,en;q=0.9")
    assert texts == {} and data["score"]["warnings"] == [WARNING]
    assert not CJK_OR_HANGUL.search(re.sub(r'<nav class="languages".*?</nav>', "", page, flags=re.S))


@pytest.mark.parametrize("accept, word", [("zh-TW", "伐木"), ("zh-CN", "伐木"), ("ko", "나무꾼")])
def test_a_new_scores_sentences_are_translated_for_the_page(client, accept, word):
    token = page_token(client)
    resp = client.post("/i18n/texts", json={"texts": [WARNING, COURTIER, "no template's"]},
                       headers={"X-CSRF-Token": token, "Accept-Language": accept})
    assert resp.status_code == 200
    texts = resp.get_json()["texts"]
    assert set(texts) == {WARNING, COURTIER} and word in texts[COURTIER]
    english = client.post("/i18n/texts", json={"texts": [WARNING]},
                          headers={"X-CSRF-Token": token, "Accept-Language": "en"})
    assert english.get_json() == {"texts": {}}


@pytest.mark.parametrize("body", [None, {"texts": "one"}, {"texts": [1]}, {"texts": ["x"] * 501}])
def test_bad_texts_requests_are_a_400_not_a_crash(client, body):
    token = page_token(client)
    resp = client.post("/i18n/texts", json=body, headers={"X-CSRF-Token": token})
    assert resp.status_code == 400
