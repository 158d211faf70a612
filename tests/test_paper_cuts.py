"""The paper cuts a new user meets on the command line (issue 52, items 1, 5-8, 11, 13, 14):
each as it was seen, held so it does not come back. The web app's are in
tests/webapp/test_paper_cuts_web.py and the browser tests named there."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from kingdomino import report, service, standings, table

ROOT = Path(__file__).resolve().parents[1]
KINGDOM = ROOT / "samples" / "kingdomino.json"
PLAIN = [["field", "field", "lake", "lake", "forest"],
         ["field", "field", "lake", "forest", "forest"],
         ["swamp", "swamp", "castle", "mine", "mine"],
         ["grassland", "grassland", "grassland", "mine", "mine"],
         ["swamp", "swamp", "lake", "lake", "lake"]]


def cells(crowns_at=((0, 0),)):
    return [[{"terrain": t, "crowns": 1 if (r, c) in crowns_at else 0}
             for c, t in enumerate(row)] for r, row in enumerate(PLAIN)]


@pytest.fixture
def photo(tmp_path) -> Path:
    path = tmp_path / "kingdom.png"
    cv2.imwrite(str(path), np.full((240, 320, 3), 120, np.uint8))
    return path


# ---------------------------------------------------------------- 1. kingdoms counted from 1


def test_score_all_and_its_standings_count_kingdoms_from_1(run_cli, photo, monkeypatch):
    objs = [{**service.score_grid({"size": 5, "cells": cells()}), "kingdom": k, "cut": False,
             "corners": [[0, 0], [1, 0], [1, 1], [0, 1]]} for k in range(2)]
    monkeypatch.setattr(table, "score_table", lambda *a, **k: [dict(o) for o in objs])
    code, out, _ = run_cli("score", photo, "--all", "--players", "Ann,Bob")
    assert code == 0
    assert "kingdom 1 (Ann)" in out and "kingdom 2 (Bob)" in out and "kingdom 0" not in out
    assert "(kingdom 1)" in out and "(kingdom 2)" in out  # the standings
    code, out, _ = run_cli("score", photo, "--all", "--json")
    assert [json.loads(line)["kingdom"] for line in out.splitlines()] == [0, 1]  # contract
    assert table.player_name([], 0) == "kingdom 1"
    assert "kingdom 1 is the leftmost" in table.players_warning(objs, ["Ann"])


# ---------------------------------------------------------------- 5. reading warnings


def test_the_text_output_shows_the_readers_warnings(run_cli, photo, fake_reader):
    fake_reader(cells(), ["read as 5x5 (give the size with --size if it is 7x7)"])
    code, out, _ = run_cli("score", photo)
    assert code == 0 and "warning: read as 5x5 (give the size" in out
    code, out, _ = run_cli("score", photo, "--json")
    assert "read as 5x5" in json.loads(out)["warnings"][0]


@pytest.mark.parametrize("rules, pieces", [
    ("age-of-giants", ["giants"]),
    ("the-court", ["resources", "courtiers", "court buildings"]),
    ("queendomino", ["buildings", "coins", "knights", "queen"]),
    ("origins-discovery", ["fire tokens"]),
    ("origins-tribe", ["fire tokens", "resources", "cavemen", "warriors"]),
])
def test_a_photo_says_once_which_pieces_to_add_by_hand(run_cli, photo, fake_reader, rules,
                                                       pieces):
    land = cells()
    if rules == "queendomino":
        land[4][4] = {"terrain": "town", "crowns": 0}
    if rules.startswith("origins"):
        land = [[{**c, "terrain": {"field": "desert", "mine": "volcano", "castle": "hut"}.get(
            c["terrain"], c["terrain"])} for c in row] for row in land]
        land = [[{**c, "terrain": "quarry"} if c["terrain"] == "swamp" else c for c in row]
                for row in land]
    fake_reader(land)
    code, out, _ = run_cli("score", photo, "--rules", rules)
    assert code == 0, out
    said = [line for line in out.splitlines() if "not read from the photo" in line.lower()]
    assert len(said) == 1 and all(p in said[0] for p in pieces), out
    code, out, _ = run_cli("score", photo, "--rules", rules, "--json")
    warnings = json.loads(out)["warnings"]
    assert len([w for w in warnings if w.startswith("Not read from the photo")]) == 1


def test_terrains_and_crowns_only_say_nothing_more(run_cli, photo, fake_reader):
    fake_reader(cells())
    code, out, _ = run_cli("score", photo, "--json")
    assert not [w for w in json.loads(out)["warnings"] if "not read from the photo" in w.lower()]
    assert service.pieces_not_read("kingdomino") is None
    # a grid typed by a person has its pieces: nothing to add
    code, out, _ = run_cli("score-grid", ROOT / "samples" / "age-of-giants.txt")
    assert code == 0 and "not read from the photo" not in out.lower()


def test_the_pieces_sentence_is_said_in_the_readers_language():
    from kingdomino import i18n

    said = i18n.render(service.pieces_not_read("age-of-giants"), i18n.translations("zh_Hant"))
    assert "巨人" in said and "giants" not in said and "photo" not in said


# ---------------------------------------------------------------- 6. a closed pipe


def test_output_cut_short_by_head_ends_quietly():
    """``kingdomino score-grid ... | head``: the reader of the pipe goes away first; no
    BrokenPipeError traceback, exit 141 (as a shell reports SIGPIPE)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    proc = subprocess.Popen([sys.executable, "-m", "kingdomino", "score-grid", str(KINGDOM)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=ROOT)
    proc.stdout.close()  # as head does once it has its lines: before the table is written
    err = proc.stderr.read().decode()
    assert proc.wait(60) == 141
    assert "Traceback" not in err and "BrokenPipe" not in err, err


# ---------------------------------------------------------------- 7. exit codes and messages


def test_a_missing_photo_names_its_path_once(run_cli, tmp_path):
    missing = tmp_path / "x.jpg"
    code, _, err = run_cli("score", missing)
    assert code == 1  # that photo's error (the contract)
    assert err.count(str(missing)) == 1, err


@pytest.mark.parametrize("json_flag", [(), ("--json",)])
def test_score_grid_on_a_missing_file_or_a_folder_is_that_inputs_error(run_cli, tmp_path,
                                                                       json_flag):
    missing = tmp_path / "nope.json"
    code, out, err = run_cli("score-grid", missing, *json_flag)
    assert code == 1  # as score's missing photo: an input that cannot be read
    said = json.loads(out)["error"] if json_flag else err
    assert "no such file" in said and said.count(str(missing)) == 1
    code, out, err = run_cli("score-grid", tmp_path, *json_flag)
    assert code == 1
    said = json.loads(out)["error"] if json_flag else err
    assert f"{tmp_path} is a folder: give a Kingdom JSON or text grid file" in said
    assert "Is a directory" not in said


def test_score_grid_on_some_other_text_says_what_the_file_should_hold(run_cli, tmp_path):
    prose = tmp_path / "notes.txt"
    prose.write_text("remember to buy milk\n")
    code, _, err = run_cli("score-grid", prose)
    assert code == 1 and "1 rows" not in err
    assert "1 line of squares" in err and "5 or 7 lines of 5 or 7 squares" in err
    assert "'F1 W0 L0 C M2'" in err


@pytest.mark.parametrize("text, named", [("abc", "'abc'"), ("1,2,3,4,5,6,7,x", "'x'"),
                                         ("a,b", "'a', 'b'")])
def test_corners_that_are_not_numbers_are_named(run_cli, photo, text, named):
    code, out, err = run_cli("score", photo, "--corners", text)
    assert code == 2 and out == ""
    assert named in err and "not" in err and "got 1" not in err


def test_the_docstring_and_readme_give_the_same_exit_codes():
    from kingdomino import cli

    readme = (ROOT / "README.md").read_text()
    assert "missing photo or grid file" in readme and "141" in readme
    assert "141" in cli.__doc__ and "score-grid" in cli.__doc__


# ---------------------------------------------------------------- 8. rule set names


@pytest.mark.parametrize("given", ["age_of_giants", "Age of Giants", "AGE-OF-GIANTS", "giants"])
def test_rule_set_names_are_taken_in_any_case_with_spaces_or_underscores(run_cli, given):
    code, out, err = run_cli("score-grid", KINGDOM, "--rules", given, "--json")
    assert code == 0, err
    assert json.loads(out)["score"]["rules"] == "age-of-giants"


def test_bonus_names_too(run_cli):
    code, out, err = run_cli("score-grid", KINGDOM, "--bonus", "Middle Kingdom", "--json")
    assert code == 0, err
    assert [b["name"] for b in json.loads(out)["score"]["bonuses"]] == ["middle-kingdom"]


def test_an_unknown_rule_set_gets_a_suggestion_and_every_name_with_its_aliases(run_cli):
    code, _, err = run_cli("score-grid", KINGDOM, "--rules", "age-of-giant")
    assert code == 2
    assert "did you mean age-of-giants?" in err
    assert "age-of-giants (also giants, aog)" in err and "the-court (also court" in err
    code, _, err = run_cli("score-grid", KINGDOM, "--rules", "chess")
    assert code == 2 and "did you mean" not in err and "kingdomino" in err
    code, _, err = run_cli("score-grid", KINGDOM, "--bonus", "harmoni")
    assert code == 2 and "did you mean harmony?" in err


# ---------------------------------------------------------------- 11. the standings' note


def test_the_standings_note_counts_photos_to_check_apart_from_unreadable_ones():
    entries = [standings.Entry("Ann", "1", "1", total=40, status="review"),
               standings.Entry("Bob", "1", "1", total=None, status="error")]
    rows = standings.build(entries)
    text = standings.format_table(rows)
    ann = next(line for line in text.splitlines() if "Ann" in line)
    bob = next(line for line in text.splitlines() if "Bob" in line)
    assert "1 photo(s) to check" in ann
    assert "1 photo(s) unreadable" in bob and "to check" not in bob  # said once


# ---------------------------------------------------------------- 13. the engine's sentences


def test_folie_des_grandeurs_names_a_diagonal_once():
    land = cells(crowns_at=((0, 2), (1, 3), (2, 4)))
    land[2][4] = {"terrain": "mine", "crowns": 1}
    obj = service.score_grid({"rules": "age-of-giants", "size": 5, "cells": land},
                             bonuses=["folie-des-grandeurs"])
    reason = obj["score"]["bonuses"][0]["reason"]
    assert str(reason).count("r1c3-r3c5") == 1, reason


def test_an_empty_square_takes_an():
    land = cells()
    land[4][4] = {"terrain": "empty", "crowns": 1}
    with pytest.raises(ValueError) as caught:
        service.score_grid({"size": 5, "cells": land})
    assert "an empty square has no crowns" in str(caught.value)
    land[4][4] = {"terrain": "castle", "crowns": 1}
    land[2][2] = {"terrain": "lake", "crowns": 0}
    with pytest.raises(ValueError) as caught:
        service.score_grid({"size": 5, "cells": land})
    assert "a castle square has no crowns" in str(caught.value)
    with pytest.raises(ValueError) as caught:
        service.score_grid({"rules": "origins-tribe", "size": 5, "cells": cells()})
    assert "is not an origins-tribe terrain" in str(caught.value)


# ---------------------------------------------------------------- 14. the README


def test_the_readme_makes_a_virtual_environment_before_pip_install():
    readme = (ROOT / "README.md").read_text()
    venv = readme.find("python3 -m venv")
    assert venv >= 0 and venv < readme.find("pip install")


def test_the_readmes_reading_figures_lead_with_what_a_player_needs():
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## How well it reads", 1)[1].split("\n## ", 1)[0]
    first_table = section[section.index("|"):].split("\n\n", 1)[0]
    assert len(first_table.splitlines()) <= 6, first_table  # a few figures, not a wall
    assert "exact" in first_table and "flagged" in first_table
