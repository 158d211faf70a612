"""Whole-table photos (issue 17): numbering, the not-a-kingdom rule, `score --all` and its
standings, with a stubbed reader (the reader itself is measured in vision.lab.scenes.whole_tables)."""
from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from kingdomino import service
from kingdomino import table as ktable
from vision import config as vconfig
from vision.errors import NO_KINGDOM, PhotoError
from vision.find.whole_table import is_kingdom, number_order

ROOT = Path(__file__).resolve().parent.parent


# ------------------------------------------------------------------ numbering

def test_numbering_left_to_right_and_ties_top_to_bottom():
    # two kingdoms in one column (x within the tolerance): the upper one first
    centres = [(100, 500), (130, 100), (900, 300), (500, 50)]
    assert number_order(centres, tolerance=50) == [1, 0, 3, 2]


def test_numbering_beyond_the_tolerance_is_left_to_right():
    centres = [(160, 100), (100, 500)]
    assert number_order(centres, tolerance=50) == [1, 0]
    assert number_order(centres, tolerance=70) == [0, 1]


def test_numbering_tolerance_follows_the_kingdoms_size():
    centres = [(400, 900), (600, 100)]  # 200 px apart in x
    assert number_order(centres, sides=[1000, 1000]) == [1, 0]   # half a side: one column
    assert number_order(centres, sides=[300, 300]) == [0, 1]     # two columns
    assert number_order([], sides=[]) == []
    with pytest.raises(ValueError, match="sides or a tolerance"):
        number_order(centres)


# ------------------------------------------------------------------ not a kingdom

def _reading(grid, castle_confidence=0.9):
    cells = [[{"terrain": {"F": "field", "L": "lake", "C": "castle", ".": "empty"}[t],
               "crowns": 0, "confidence": castle_confidence if t == "C" else 0.99}
              for t in row] for row in grid]
    return SimpleNamespace(cells=cells, rows=len(grid), cols=len(grid[0]))


CFG = vconfig.load()


def test_a_kingdom_is_a_castle_with_tiles():
    assert is_kingdom(_reading(["FFL", "FCL", "FL."]), CFG)


def test_loose_dominoes_without_castle_are_not_a_kingdom():
    assert not is_kingdom(_reading(["FF.", "LL.", "..."]), CFG)


def test_an_unsure_grid_count_is_not_a_kingdom():
    # clutter merged with a tile-coloured table counts its rows and columns unsure
    sure = float(CFG["table"]["min_grid_confidence"])
    kingdom = _reading(["FFLL", "FCLL", "FFLL"])
    assert is_kingdom(kingdom, CFG, grid_confidence=sure)
    assert not is_kingdom(kingdom, CFG, grid_confidence=sure * 0.9)


def test_two_loose_dominoes_are_not_a_kingdom_even_beside_a_castle():
    assert not is_kingdom(_reading(["FFL", "LC.", "..."]), CFG)


def test_a_draft_line_two_squares_wide_is_not_a_kingdom():
    assert not is_kingdom(_reading(["FF", "LC", "FF", "LL"]), CFG)


def test_a_castle_alone_is_not_a_kingdom():
    assert not is_kingdom(_reading(["...", ".C.", "..."]), CFG)


# ------------------------------------------------------------------ totems across kingdoms

def test_origins_totem_awards_the_majority_across_kingdoms():
    text = (ROOT / "samples" / "origins-totem.txt").read_text()
    rich = service.score_grid(text)           # 2 mammoths, 3 fish, ... and the fish totem held
    poor_text = text.replace("@mammoth", "").replace("totems: fish\n", "")
    poor = service.score_grid(poor_text)
    objs = [{**rich, "kingdom": 0}, {**poor, "kingdom": 1}]
    out = ktable.award_across(objs, "origins-totem")
    assert "mammoth" in out[0]["totems"] and "mammoth" not in out[1]["totems"]
    assert out[0]["score"]["total"] > out[1]["score"]["total"]
    # other rule sets are scored kingdom by kingdom: nothing changes
    assert ktable.award_across(objs, "kingdomino") is objs


# ------------------------------------------------------------------ the command line

def _scored(grid_text, k, corners_x):
    obj = service.score_grid(grid_text)
    return {**obj, "review": [], "corners": [[corners_x, 0], [corners_x + 100, 0],
                                            [corners_x + 100, 100], [corners_x, 100]],
            "warnings": [], "kingdom": k, "cut": False}


SMALL = "F1 F1 C\nL0 L0 L0\n. . .\n"
BIG = "F2 F1 C\nF1 F0 L0\nW0 W0 W0\n"


@pytest.fixture
def stub(monkeypatch):
    def fake(path, rules=None, bonuses=(), size=None):
        if "empty" in str(path):
            raise PhotoError(NO_KINGDOM)
        if "broken" in str(path):
            raise RuntimeError("boom")
        return [_scored(SMALL, 0, 10), _scored(BIG, 1, 500)]
    monkeypatch.setattr(ktable, "score_table", fake)


def _padded(text):
    # the engine takes 5x5: pad the 3x3 test grids with empty squares
    rows = [r.split() + ["."] * 2 for r in text.strip().splitlines()]
    return "\n".join(" ".join(r) for r in rows + [["."] * 5] * 2) + "\n"


SMALL, BIG = _padded(SMALL), _padded(BIG)


def test_all_json_one_line_per_kingdom_and_an_error_line(stub, run_cli):
    code, out, _ = run_cli("score", "table.jpg", "empty.jpg", "--all", "--json")
    lines = [json.loads(line) for line in out.splitlines()]
    assert code == 1
    assert [(o["source"], o.get("kingdom")) for o in lines] == [
        ("table.jpg", 0), ("table.jpg", 1), ("empty.jpg", None)]
    for o in lines[:2]:
        assert len(o["corners"]) == 4 and isinstance(o["score"]["total"], int)
        assert {"rules", "size", "cells", "review"} <= set(o)
    assert set(lines[2]) == {"source", "error"} and "no kingdom" in lines[2]["error"]


def test_all_exit_0_when_every_photo_is_read(stub, run_cli):
    assert run_cli("score", "table.jpg", "--all", "--json").code == 0


def test_a_reader_fault_is_an_error_line_not_a_traceback(stub, run_cli):
    code, out, _ = run_cli("score", "broken.jpg", "--all", "--json")
    assert code == 1
    out = json.loads(out)
    assert set(out) == {"source", "error"} and "internal error" in out["error"]


def test_all_verbose_prints_the_traceback_and_the_log_has_it(stub, run_cli, caplog):
    """A photo that fails under --all is handled as under a one-kingdom score
    (kingdomino.cli._photo_failed): the traceback on stderr only with --verbose, always in the
    debug log, and the next photo is still read."""
    import logging

    with caplog.at_level(logging.DEBUG, logger="kingdomino.score"):
        code, out, err = run_cli("score", "broken.jpg", "table.jpg", "--all", "--json")
    assert code == 1
    assert len(out.splitlines()) == 3 and "Traceback" not in out + err
    failed = [r for r in caplog.records if "broken.jpg" in r.getMessage()]
    assert failed and failed[0].exc_info and "boom" in str(failed[0].exc_info[1])
    code, out, err = run_cli("score", "broken.jpg", "--all", "--json", "--verbose")
    assert code == 1
    assert "Traceback" in err and "RuntimeError: boom" in err and "Traceback" not in out


def test_players_give_the_standings(stub, run_cli):
    code, out, _ = run_cli("score", "table.jpg", "--all", "--players", "Ann,Bob")
    assert code == 0
    assert "kingdom 1 (Ann)" in out and "kingdom 2 (Bob)" in out  # people count from 1
    standings = [line.strip() for line in out.split("standings:")[1].strip().splitlines()]
    big = service.score_grid(BIG)["score"]["total"]
    small = service.score_grid(SMALL)["score"]["total"]
    assert big != small
    first, second = ("Bob", "Ann") if big > small else ("Ann", "Bob")
    assert standings[0].startswith(f"1. {first}") and standings[1].startswith(f"2. {second}")


def test_players_count_mismatch_is_a_warning(stub, run_cli):
    code, out, _ = run_cli("score", "table.jpg", "--all", "--players", "Ann,Bob,Cat")
    assert code == 0
    assert "3 players named but 2 kingdoms found" in out


@pytest.mark.parametrize("argv", [
    ["score", "table.jpg", "--players", "Ann,Bob"],                       # without --all
    ["score", "table.jpg", "--all", "--players", "Ann,,Bob"],             # an empty name
    ["score", "table.jpg", "--all", "--players", "Ann,Ann"],              # a name twice
    ["score", "table.jpg", "--all", "--corners", "0,0,10,0,10,10,0,10"],  # one outline vs all
])
def test_usage_errors_exit_2(stub, argv, run_cli):
    code, _, err = run_cli(*argv)
    assert code == 2
    assert "kingdomino: error:" in err


# ------------------------------------------------------------------ decoding a table photo

@pytest.mark.parametrize("side, decodes, first", [
    (400.0, [(750, 1200, 3)], [200.5, 200.5]),              # squares of 80 px: read reduced
    (200.0, [(750, 1200, 3), (1500, 2400, 3)], [100.0, 100.0]),  # 40 px: read again whole
])
def test_a_table_photo_is_decoded_as_a_kingdoms_photo_and_its_corners_put_back(
        monkeypatch, tmp_path, side, decodes, first):
    """`score --all` reads the decode `score` reads (reduced with [io] read_long_side: the
    decode the square classifier learnt from; read again whole when a kingdom's squares come
    out under [io] whole_below_px there), and gives each kingdom's corners in the photo's own
    pixels."""
    import copy

    import cv2
    import numpy as np

    from vision.find import whole_table
    from vision.reader import Reading

    cfg = copy.deepcopy(vconfig.load())
    cfg["io"]["read_long_side"] = 1000
    cfg["io"]["whole_below_px"] = 64
    monkeypatch.setattr(vconfig, "load", lambda *a, **k: cfg)
    path = tmp_path / "table.jpg"
    cv2.imwrite(str(path), np.full((1500, 2400, 3), 90, np.uint8))
    cells = [[{"terrain": "empty", "crowns": 0, "confidence": 1.0} for _ in range(5)]
             for _ in range(5)]
    cells[2][2]["terrain"] = "castle"
    for c in (0, 1):
        cells[0][c]["terrain"] = "field"
    seen = []

    def read_table(reader, image, size=None):
        seen.append(image.shape)
        corners = [[100.0, 100.0], [100 + side, 100.0], [100 + side, 100 + side],
                   [100.0, 100 + side]]
        reading = Reading(5, cells, [], corners, np.eye(3).tolist(), 5, 5)
        return [whole_table.TableKingdom(0, reading, False)]

    monkeypatch.setattr(whole_table, "read_table", read_table)
    monkeypatch.setattr(service, "reader", lambda: None)
    objs = ktable.score_table(str(path))
    assert seen == decodes                       # libjpeg's decode at half the side first
    # the reduced image's pixel x covers the photo's 2x .. 2x + 1: its centre is 2x + 0.5
    assert objs[0]["corners"][0] == pytest.approx(first)
