"""The CLI's table in the language LANG / LC_MESSAGES name, through the web app's catalogs."""
from __future__ import annotations

import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest

from kingdomino import i18n
from kingdomino.report import format_result

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "samples" / "kingdomino.txt"


def _width(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _cli(env_lang: dict) -> str:
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), **env_lang}
    proc = subprocess.run([sys.executable, "-m", "kingdomino.cli", "score-grid", str(SAMPLE)],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.mark.parametrize("env, head, legend", [
    ({"LANG": "zh_TW.UTF-8"}, "資產", "F 麥田"),
    ({"LANG": "en_US.UTF-8", "LC_MESSAGES": "zh_CN.UTF-8"}, "区域", "M 山峰"),
    ({"LANG": "ko_KR.UTF-8"}, "영역", "C 왕궁"),
    ({"LANGUAGE": "fr:ko", "LANG": "C.UTF-8"}, "영역", "W 숲"),
])
def test_the_table_follows_lang_and_lc_messages(env, head, legend):
    out = _cli(env)
    assert head in out and legend in out


def test_the_table_stays_english_under_c_or_an_unknown_language():
    for env in ({"LANG": "C.UTF-8"}, {"LANG": "fr_FR.UTF-8"}, {}):
        out = _cli(env)
        assert "region" in out and "F field" in out
        assert not any(unicodedata.east_asian_width(ch) in "WF" for ch in out)


@pytest.mark.parametrize("locale", ["zh_Hant", "zh_Hans", "ko"])
def test_columns_line_up_by_display_width_in_cjk(locale):
    from kingdomino import service

    obj = service.score_grid(SAMPLE.read_text())
    lines = format_result(obj, locale=locale).splitlines()
    header = next(i for i, line in enumerate(lines) if line.strip().startswith(
        i18n.translations(locale).gettext("region")))
    rule = next(i for i, line in enumerate(lines) if line.strip() == "-" * 8)
    rows = [line for line in lines[header:rule + 2] if line and line[0] != " "]
    assert len(rows) >= 5
    assert {_width(line) for line in rows + [lines[header]]} == {56}  # the points column's end


# --- every sentence of the CLI in the language (issue 52) -----------------------------------

from english_support import assert_no_english  # noqa: E402

LANGS = {"zh_TW.UTF-8": "zh_Hant", "zh_CN.UTF-8": "zh_Hans", "ko_KR.UTF-8": "ko"}
# the commands a player runs (evaluate's and train's own options are the lab's: their one-line
# help in `kingdomino --help` is translated, their options are not)
COMMANDS = ("score", "score-grid", "batch", "serve", "learned")


@pytest.fixture(params=sorted(LANGS))
def lang(request, monkeypatch):
    for key in ("LANGUAGE", "LC_ALL", "LC_MESSAGES"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("LANG", request.param)
    return request.param


def test_every_command_s_help_is_in_the_language(run_cli, lang):
    tr = i18n.translations(LANGS[lang])
    for argv in [("--help",)] + [(command, "--help") for command in COMMANDS]:
        code, out, err = run_cli(*argv)
        assert code == 0, err
        assert out.startswith(tr.gettext("usage: ")), out[:80]
        assert tr.gettext("show this help message and exit") in out
        assert_no_english(out, f"{lang}: kingdomino {' '.join(argv)}")
    code, out, _ = run_cli("score", "--help")
    assert "positional arguments" not in out and "options:" not in out
    if LANGS[lang].startswith("zh"):
        assert "：\n" in out and ":\n" not in out  # the headings end with a full-width colon


def test_the_error_lines_are_in_the_language(run_cli, lang, tmp_path):
    text = tmp_path / "notes.jpg"
    text.write_text("not a photo at all")
    tr = i18n.translations(LANGS[lang])
    prefix = "kingdomino: " + tr.gettext("error: %(message)s").split("%")[0]
    for argv in (("score", tmp_path / "missing.jpg"), ("score", tmp_path), ("score", text),
                 ("score", "--size", "9", text), ("score",), ("score", "--players", "a,b", text),
                 ("score", "--rules", "giant", text), ("score", "--rules", "nope", text),
                 ("score", "--bonus", "harmonie", text), ("score", "--rules", "domain",
                                                           "--bonus", "harmony", text),
                 ("score-grid", tmp_path), ("score-grid", tmp_path / "missing.txt")):
        code, out, err = run_cli(*argv)
        assert code != 0 and err.strip(), argv
        assert tr.gettext("error: %(message)s").split("%")[0] in err
        assert_no_english(err, f"{lang}: kingdomino {' '.join(map(str, argv))}")
    _code, _out, err = run_cli("score", tmp_path / "missing.jpg")
    assert err.startswith(prefix)


def test_the_batch_summary_is_in_the_language(run_cli, lang, tmp_path):
    folder = tmp_path / "photos"
    folder.mkdir()
    (folder / "a.jpg").write_text("not a photo")
    (folder / "notes.txt").write_text("skipped")
    code, out, err = run_cli("batch", folder, "--out", tmp_path / "results.csv",
                             "--store", tmp_path / "store.sqlite3", "--jobs", "1")
    assert code == 1, err
    assert_no_english(out + err, f"{lang}: kingdomino batch")
    assert "photo(s)" not in out and "to review" not in out


@pytest.mark.parametrize("sample", sorted(p.name for p in (ROOT / "samples").glob("*.txt")))
def test_every_rule_set_s_table_is_in_the_language(run_cli, lang, sample):
    code, out, err = run_cli("score-grid", ROOT / "samples" / sample)
    assert code == 0, err
    tr = i18n.translations(LANGS[lang])
    heads = {i18n.word(tr, "region", rules) for rules in ("kingdomino", "origins-tribe")}
    lines = out.splitlines()
    header = next(i for i, line in enumerate(lines) if line.split(" ")[0] in heads)
    # the table after the grid (the grid's tokens are the text format's own: G0@mammoth)
    assert_no_english("\n".join(lines[header:]), f"{lang}: score-grid {sample}")


@pytest.mark.parametrize("env, said", [
    ({"LANG": "zh_TW.UTF-8"}, "平手判定：最大相連資產 4 格，其次是皇冠 13 頂"),
    ({"LANG": "zh_CN.UTF-8"}, "平局判定：最大区域 4 格，其次是皇冠 13 顶"),
    ({"LANG": "ko_KR.UTF-8"}, "동점 처리: 가장 넓은 영역 4칸, 그다음 왕관 13개"),
    ({"LANG": "C.UTF-8"}, "tie-break: largest region 4, then crowns 13")])
def test_the_tie_break_is_built_from_the_catalogs(env, said):
    assert said in _cli(env).splitlines()


def test_a_whole_table_s_standings_are_in_the_language(run_cli, lang, monkeypatch):
    from kingdomino import table
    from kingdomino import service

    def two_kingdoms(path, rules, bonuses=(), size=None):
        one = service.score_grid(SAMPLE.read_text(), rules=rules)
        return [{**one, "kingdom": 0, "cut": False}, {**one, "kingdom": 1, "cut": True}]

    monkeypatch.setattr(table, "score_table", two_kingdoms)
    code, out, err = run_cli("score", "table.jpg", "--all", "--players", "Ann,Bob,Cat")
    assert code == 0, err
    tr = i18n.translations(LANGS[lang])
    assert tr.gettext("standings:") in out and tr.gettext("kingdom %(n)s") % {"n": 2} in out
    assert_no_english(out, f"{lang}: score --all --players")
    code, out, err = run_cli("score", "--players", "Ann,,Cat", "--all", "table.jpg")
    assert code == 2 and "Ann,,Cat" in err
    assert_no_english(err, f"{lang}: an empty player's name")
