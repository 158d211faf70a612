"""The engine's and the reader's sentences (warnings, quest and bonus reasons, courtier lines,
review reasons) in each language of the catalogs, and in English exactly as before (issue 19)."""
from __future__ import annotations

import json
import pickle
import re
import subprocess
import sys
from pathlib import Path

import pytest

from engine import Kingdom, score
from engine.messages import LOW_CONFIDENCE, Message
from kingdomino import i18n
from kingdomino.report import format_result

ROOT = Path(__file__).resolve().parents[1]
CJK = re.compile(r"[\u3000-\u9fff\uac00-\ud7af\uff00-\uffef]")


def _kingdom(rows, rules="kingdomino"):
    """Kingdom JSON from rows of (terrain, crowns, extra fields)."""
    return Kingdom.from_json({"rules": rules, "size": len(rows), "cells": [
        [dict({"terrain": t, "crowns": k}, **(extra[0] if extra else {})) for t, k, *extra in row]
        for row in rows]})


E = ("empty", 0)
# a castle in the centre, a field joined to it and one lost in the top-left corner
LOST = _kingdom([[("field", 1), E, E, E, E], [E, E, E, E, E], [E, E, ("castle", 0), ("field", 0), E],
                 [E, E, E, E, E], [E, E, E, E, E]])
# a lumberjack next to two forests with resource tokens (The Court)
COURT = _kingdom([[("forest", 0, {"resource": True}), ("forest", 0, {"resource": True}), E, E, E],
                  [("field", 0, {"court": "lumberjack"}), E, E, E, E],
                  [E, E, ("castle", 0), E, E], [E, E, E, E, E], [E, E, E, E, E]], "the-court")

# what each language's sentences must say (the rulebook's words among them)
WORDS = {
    "zh_Hant": {"warning": "格未與城堡相連", "quest": "未達成", "courtier": "伐木", "review": "信心度低"},
    "zh_Hans": {"warning": "格未与城堡相连", "quest": "未达成", "courtier": "伐木", "review": "置信度低"},
    "ko": {"warning": "왕궁에 이어지지 않은 칸", "quest": "미달성", "courtier": "나무꾼", "review": "낮은 신뢰도"},
}


def _sentences():
    warning = score(LOST).warnings[0]
    quest = score(LOST, "age-of-giants", ["lost-corner"]).bonuses[0].reason
    courtier = score(COURT).to_json()["courtiers"]["list"][0]["reason"]
    review = Message(LOW_CONFIDENCE, confidence="0.62")
    return {"warning": warning, "quest": quest, "courtier": courtier, "review": review}


def test_the_sentences_are_todays_english_text():
    said = _sentences()
    assert said["warning"] == "1 square(s) not joined to the castle: row 1 col 1"
    assert said["quest"] == "not met: the castle is on r3c3, not on a corner"
    assert said["courtier"] == "Lumberjack r2c1: 3 + 2 wood x 3 = 9"
    assert said["review"] == "low confidence (0.62)"
    # JSON shows the text, a copy keeps what it was made from
    assert json.loads(json.dumps(score(LOST).to_json()))["warnings"] == [said["warning"]]
    again = pickle.loads(pickle.dumps(said["warning"]))
    assert again == said["warning"] and again.args == said["warning"].args
    assert said["warning"].describe()["msg"] == "%(n)s square(s) not joined to the %(start)s: %(listed)s%(more)s"


@pytest.mark.parametrize("locale", sorted(WORDS))
@pytest.mark.parametrize("what", ["warning", "quest", "courtier", "review"])
def test_each_language_says_the_sentences_in_its_words(locale, what):
    sentence = _sentences()[what]
    tr = i18n.translations(locale)
    said = i18n.render(sentence, tr)
    assert WORDS[locale][what] in said
    # the English text alone (a stored reading's JSON) is translated the same way
    assert i18n.render(str(sentence), tr) == said
    assert not re.search(r"\b(not met|square|crowns?|confidence|row)\b", said), said


def test_values_that_are_words_of_the_game_are_translated_too():
    quest = score(LOST, "age-of-giants", ["four-corners-field"]).bonuses[0].reason
    assert quest == "1 field corner(s) x 5 = 5 (r1c1)"
    assert "麥田" in i18n.render(quest, i18n.translations("zh_Hant"))
    assert "麦田" in i18n.render(quest, i18n.translations("zh_Hans"))
    assert "밀밭" in i18n.render(quest, i18n.translations("ko"))


def test_english_and_unknown_text_come_back_unchanged():
    for sentence in _sentences().values():
        assert i18n.render(sentence, i18n.translations("en")) == str(sentence)
    assert i18n.render("a sentence of no template", i18n.translations("ko")) == "a sentence of no template"


def test_an_undeclared_template_is_refused_with_how_to_fix_it():
    with pytest.raises(ValueError, match="declare it with engine.messages.N_"):
        Message("%(n)s things nobody declared", n=1)
    with pytest.raises(AttributeError):
        _sentences()["warning"].args = {}


@pytest.mark.parametrize("locale", sorted(WORDS))
def test_the_cli_table_says_warnings_reasons_and_courtiers_in_the_language(locale):
    lost = {"score": score(LOST, "kingdomino", ["harmony"]).to_json()}
    court = {"score": score(COURT).to_json()}
    english = format_result(lost, "en") + format_result(court, "en")
    assert "warning: 1 square(s) not joined to the castle: row 1 col 1" in english
    assert "(not met: frame completely filled, no domino discarded)" in english
    assert "Lumberjack r2c1: 3 + 2 wood x 3 = 9" in english
    table = format_result(lost, locale) + format_result(court, locale)
    for what in ("warning", "courtier"):
        assert WORDS[locale][what] in table
    assert "not met" not in table and "not joined" not in table


def test_the_cli_error_line_follows_lang():
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "LANG": "zh_TW.UTF-8"}
    proc = subprocess.run([sys.executable, "-m", "kingdomino.cli", "score-grid", "no-such-file.txt"],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("kingdomino: 錯誤：")
    env["LANG"] = "C.UTF-8"
    proc = subprocess.run([sys.executable, "-m", "kingdomino.cli", "score-grid", "no-such-file.txt"],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    assert proc.stderr.startswith("kingdomino: error: ") and not CJK.search(proc.stderr)


@pytest.mark.parametrize("locale, words", [("zh_Hant", ("巨人", "金幣")), ("zh_Hans", ("巨人", "钱币")),
                                           ("ko", ("거인", "동전"))])
def test_the_expansions_warnings_and_arithmetic_are_translated(locale, words):
    giants = [[{"terrain": "field", "crowns": 2, "giants": 2} for _ in range(5)] for _ in range(5)]
    giants[2][2] = {"terrain": "castle", "crowns": 0}
    warning = next(w for w in score(Kingdom.from_json(
        {"rules": "age-of-giants", "size": 5, "cells": giants})).warnings if "giants" in w)
    assert warning == "48 giants, but the game has only 6"
    coins = score(Kingdom.from_json({"rules": "queendomino", "size": 5, "coins": 7, "cells": [
        [{"terrain": "castle" if (r, c) == (2, 2) else "empty", "crowns": 0} for c in range(5)]
        for r in range(5)]})).to_json()["coins"]["reason"]
    assert coins == "7 coins // 3"
    tr = i18n.translations(locale)
    assert words[0] in i18n.render(warning, tr) and "48" in i18n.render(warning, tr)
    assert words[1] in i18n.render(coins, tr) and "7" in i18n.render(coins, tr)
