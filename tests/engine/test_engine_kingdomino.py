"""Kingdomino scoring, the optional bonuses, 7x7, and the consistency warnings (hand-worked)."""
from __future__ import annotations

import pytest

import engine
from engine_helpers import grid, kingdom, region_summary, total

# Hand count: fields 3x1 + forest 3x1 + lake 3x1 + grassland 4x(2+1) + swamp 2x1 + mines 3x(2+3)
# + field 2x1 + forest 2x0 + lake 2x0 = 3+3+3+12+2+15+2 = 40.
FULL = """\
F1 F0 W0 W1 L0
F0 G2 W0 L1 L0
S0 G0 C  M2 M3
S1 G0 G1 M0 F0
W0 W0 L0 L0 F1
"""


def test_hand_worked_kingdom():
    s = engine.score(kingdom(FULL))
    assert s.total == 40
    assert region_summary(s) == sorted([
        ("field", 3, 1, 3), ("forest", 3, 1, 3), ("lake", 3, 1, 3), ("grassland", 4, 3, 12),
        ("swamp", 2, 1, 2), ("mine", 3, 5, 15), ("field", 2, 1, 2), ("forest", 2, 0, 0),
        ("lake", 2, 0, 0)])
    assert dict(s.tiebreak) == {"largest_region": 4, "crowns": 13}
    assert s.warnings == ()


def test_score_json_shape():
    j = engine.score(kingdom(FULL), bonuses=["harmony"]).to_json()
    assert list(j)[:6] == ["total", "rules", "regions", "bonuses", "tiebreak", "warnings"]
    assert j["rules"] == "kingdomino"
    assert [r["points"] for r in j["regions"]] == sorted((r["points"] for r in j["regions"]), reverse=True)
    mine = next(r for r in j["regions"] if r["terrain"] == "mine")
    assert sorted(mine["cells"]) == [[2, 3], [2, 4], [3, 3]]
    assert j["bonuses"] == [{"name": "harmony", "points": 5, "reason": j["bonuses"][0]["reason"]}]
    assert list(j["tiebreak"]) == ["largest_region", "crowns"]


def test_separate_regions_of_one_terrain_score_separately():
    # field (0,0)-(0,1): 2 squares x 2 crowns = 4; field (0,3)-(0,4): 2 x 1 = 2 (joined: 4 x 3 = 12)
    text = grid("L0", r0c0="F1", r0c1="F1", r0c2="W0", r0c3="F1", r0c4="F0", r2c2="C")
    assert total(text) == 6


def test_diagonal_squares_are_not_joined():
    text = grid("L0", r0c0="S1", r1c1="S1", r2c2="C")
    assert total(text) == 2


def test_region_without_crowns_scores_nothing_and_castle_empty_are_no_region():
    s = engine.score(kingdom(grid("W0", r2c2="C", r0c0=".", r4c4=".")))
    assert s.total == 0
    assert [(r.terrain, r.squares) for r in s.regions] == [("forest", 22)]


def test_explicit_rules_override_the_kingdoms_own():
    k = kingdom("rules: queendomino\n" + FULL)
    assert engine.score(k).rules == "queendomino"
    assert engine.score(k, rules="kingdomino").rules == "kingdomino"


def test_middle_kingdom():
    assert total(FULL, bonuses=["middle-kingdom"]) == 50
    off = FULL.replace("S0 G0 C  M2", "S0 C  G0 M2")
    # castle at (2,1), not the centre; it cuts the grassland: (1,1) alone 1x2 and
    # (2,2),(3,1),(3,2) 3x1, instead of 4x3: 40 - 12 + 2 + 3 = 33
    assert total(off) == 33
    s = engine.score(kingdom(off), bonuses=["middle-kingdom"])
    assert s.total == 33 and s.bonuses[0].points == 0 and "not met" in s.bonuses[0].reason


def test_middle_kingdom_counts_for_an_incomplete_kingdom():
    text = grid(".", r2c2="C", r2c3="F1", r2c4="F0")
    assert total(text, bonuses=["middle-kingdom"]) == 2 + 10


def test_harmony_needs_every_square_filled():
    assert total(FULL, bonuses=["harmony"]) == 45
    holed = FULL.replace("F1\n", ".\n", 1).replace("W0 W0 L0 L0 F1", "W0 W0 L0 L0 .")
    # the lone field (3,4) keeps 0 crowns now: 40 - 2 = 38, and no Harmony
    assert total(holed, bonuses=["harmony"]) == 38


def test_both_bonuses_and_unknown_bonus():
    assert total(FULL, bonuses=["middle-kingdom", "harmony"]) == 55
    with pytest.raises(engine.RulesError, match="empire-of-fire"):
        engine.score(kingdom(FULL), bonuses=["empire-of-fire"])


def test_seven_by_seven_middle_kingdom_and_harmony():
    # 7x7 (Mighty Duel): one field region of 48 squares with 2 crowns = 96
    text = grid("F0", size=7, r3c3="C", r0c0="F1", r6c6="F1")
    assert total(text, bonuses=["middle-kingdom", "harmony"]) == 96 + 10 + 5
    off = grid("F0", size=7, r2c2="C", r0c0="F1", r6c6="F1")
    assert total(off, bonuses=["middle-kingdom"]) == 96


def test_frame_smaller_than_the_grid():
    # a 5x5 game read on a 7x7 grid: the block of squares sits at rows 1-5, cols 2-6
    rows = [["."] * 7 for _ in range(7)]
    for r in range(1, 6):
        for c in range(2, 7):
            rows[r][c] = "L0"
    rows[3][4] = "C"
    rows[1][2] = "L1"
    text = "frame: 5\n" + "\n".join(" ".join(row) for row in rows)
    s = engine.score(kingdom(text), bonuses=["middle-kingdom", "harmony"])
    assert s.total == 24 + 10 + 5
    assert not any("frame" in w or "joined" in w for w in s.warnings)
    rows[1][1] = "L0"  # now 6 columns wide: wider than the 5x5 frame
    s = engine.score(kingdom("frame: 5\n" + "\n".join(" ".join(row) for row in rows)),
                     bonuses=["middle-kingdom", "harmony"])
    assert any("more than its 5x5 frame" in w for w in s.warnings)
    assert s.total == 25


def test_warning_two_three_crown_mines_and_a_two_crown_field():
    s = engine.score(kingdom(grid("W0", r2c2="C", r0c0="M3", r4c4="M3", r1c1="F2")))
    text = " | ".join(s.warnings)
    assert "2 mine squares with 3 crown(s)" in text and "only 1" in text
    assert "row 1, col 1" in text and "field" in text
    assert s.total == 1 * 3 + 1 * 3 + 1 * 2  # still scored


def test_warning_more_squares_of_a_terrain_than_the_game_has():
    s = engine.score(kingdom(grid("S0", r2c2="C")))
    assert any("24 swamp squares" in w and "only 10" in w for w in s.warnings)


def test_real_kingdom_has_no_domino_warnings():
    assert engine.score(kingdom(FULL)).warnings == ()


def test_warning_disconnected_squares_and_no_castle():
    s = engine.score(kingdom(grid(".", r2c2="C", r2c3="F0", r0c0="W1", r0c1="W0")))
    assert any("2 square(s) not joined to the castle" in w and "row 1 col 1," in w for w in s.warnings)
    s = engine.score(kingdom(grid("F0")))
    assert any("no castle" in w for w in s.warnings)
