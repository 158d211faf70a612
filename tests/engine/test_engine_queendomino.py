"""Queendomino: towns, buildings, the queen, coins; the published 71-point example."""
from __future__ import annotations

import pytest

import engine
from engine_helpers import grid, kingdom, region_summary, total

# RULES.md's published example laid out on a 5x5 grid: coins 11 -> 3; fields 3x1; forests
# 2x1 + 1x1 (+ a 0-crown forest: 3 forest regions); lakes 3x2; grassland 4x(3+queen);
# swamp 1x1; mines 3x4; 4 town regions worth 0; Sawmill 2x3, Church 2x4, Travelling Castle 1x3
# towers, Big Tavern 2, Statue 5, Guardtower 3.
PUBLISHED = """\
rules: queendomino
coins: 11
queen: yes
F1 F0 F0 W1 W0
G1 G1 C  T  T
G1 G0 S1 L1 L1
W1 M2 T  T  L0
T  M1 M1 W0 T
building 1 3 name=Sawmill points=2 per=region:forest
building 1 4 name=Church points=2 per=region:town
building 3 2 name="Travelling Castle" points=1 per=tower towers=1
building 3 3 name="Big Tavern" points=2
building 4 0 name=Statue points=5
building 4 4 name=Guardtower points=3 towers=2
"""


def test_published_example_is_71():
    s = engine.score(kingdom(PUBLISHED))
    assert s.total == 71
    assert region_summary(s) == sorted([
        ("field", 3, 1, 3), ("forest", 2, 1, 2), ("forest", 1, 1, 1), ("forest", 1, 0, 0),
        ("lake", 3, 2, 6), ("grassland", 4, 4, 16), ("swamp", 1, 1, 1), ("mine", 3, 4, 12),
        ("town", 2, 0, 0), ("town", 2, 0, 0), ("town", 1, 0, 0), ("town", 1, 0, 0)])
    j = s.to_json()
    assert j["coins"]["points"] == 3
    by_name = {b["name"]: b["points"] for b in j["buildings"]["list"]}
    assert by_name == {"Sawmill": 6, "Church": 8, "Travelling Castle": 3, "Big Tavern": 2,
                       "Statue": 5, "Guardtower": 3}
    assert j["buildings"]["points"] == 27
    assert j["queen"]["terrain"] == "grassland" and j["queen"]["adds"] == 4
    assert dict(s.tiebreak) == {"largest_region": 4}


def test_published_example_sample_file(tmp_path):
    from pathlib import Path

    sample = Path(__file__).resolve().parents[2] / "samples" / "queendomino.txt"
    assert engine.score(engine.load_kingdom(sample.read_text())).total == 71


def test_without_the_queen_the_largest_region_loses_one_crown():
    assert total(PUBLISHED.replace("queen: yes", "queen: no")) == 71 - 4


@pytest.mark.parametrize("coins,points", [(0, 0), (2, 0), (3, 1), (8, 2), (11, 3)])
def test_coins_one_point_per_three(coins, points):
    base = total(PUBLISHED.replace("coins: 11", "coins: 0"))
    assert total(PUBLISHED.replace("coins: 11", f"coins: {coins}")) == base + points


def test_town_region_crowns_come_from_its_buildings():
    # town region (0,0)-(0,2): 3 squares, buildings with 1 + 1 crowns -> 3 x 2 = 6
    text = "rules: queendomino\n" + grid("W0", r0c0="T", r0c1="T", r0c2="T", r2c2="C") + \
        "building 0 0 crowns=1\nbuilding 0 2 crowns=1\n"
    assert total(text) == 6


def test_per_knight_and_per_tower_buildings():
    text = "rules: queendomino\nknights: 4\n" + grid("W0", r0c0="T", r0c1="L0", r0c2="T", r2c2="C") + \
        "building 0 0 name=Barracks points=1 per=knight\nbuilding 0 2 points=2 per=tower towers=3\n"
    s = engine.score(kingdom(text))
    assert s.total == 4 + 6
    assert s.to_json()["buildings"]["towers"] == 3


def test_queen_goes_to_the_largest_region_towns_included():
    # rows 0-3 a checkerboard of single squares; the town (row 4 + (3,4)) is the largest region:
    # 6 squares, a 1-crown building + the queen: 6 x 2 = 12
    rows = [["F0" if (r + c) % 2 else "W0" for c in range(5)] for r in range(4)]
    rows[0][0] = "C"
    rows[3][4] = "T"
    rows.append(["T"] * 5)
    text = "rules: queendomino\nqueen: yes\n" + "\n".join(" ".join(r) for r in rows) + \
        "\nbuilding 4 4 crowns=1\n"
    assert total(text) == 12
    # without the queen: 6 x 1
    assert total(text.replace("queen: yes", "queen: no")) == 6
    # a lake larger than the town takes the queen: 18 lake squares x 1 + town 6 x 1
    text = "rules: queendomino\nqueen: yes\n" + grid("L0", r4c0="T", r4c1="T", r4c2="T", r4c3="T",
                                                       r4c4="T", r3c4="T", r0c0="C") + \
        "building 4 4 crowns=1\n"
    assert total(text) == 18 + 6


def test_kingdomino_bonuses_available_and_terrain_check():
    assert engine.bonus_names("queendomino") == ["middle-kingdom", "harmony"]
    k = kingdom(PUBLISHED)
    assert engine.score(k, bonuses=["middle-kingdom"]).total == 71  # castle at (1,2): not centre
    assert engine.score(k, bonuses=["harmony"]).total == 76
    with pytest.raises(engine.KingdomError, match=r"row 1, col 3.*town.*not a kingdomino"):
        engine.score(k, rules="kingdomino")
