"""Age of Giants and The Court: the ten worked examples of EXPANSIONS.md, symmetry, validation."""
from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import engine
from engine.court import VALUES
from engine.giants import QUESTS
from engine.kingdom import COURTIERS, TOKEN_OF, Cell, Kingdom

EXAMPLES = json.loads((Path(__file__).parent / "data" / "expansion-examples.json").read_text())["examples"]
SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
TERRAINS = ("field", "forest", "lake", "grassland", "swamp", "mine")


def example_kingdom(ex) -> Kingdom:
    return engine.load_kingdom(f"rules: {ex['rules']}\n" + "\n".join(ex["grid"]))


# ------------------------------------------------------------------ the ten worked examples
@pytest.mark.parametrize("ex", EXAMPLES, ids=[f"example-{ex['example']}" for ex in EXAMPLES])
def test_worked_example_scores_as_written(ex):
    kingdom = example_kingdom(ex)
    result = engine.score(kingdom, bonuses=ex["bonuses"])
    assert result.rules == ex["rules"]
    assert sum(r.points for r in result.regions) == ex["regions"]
    assert {b.name: b.points for b in result.bonuses} == ex["bonus_points"]
    courtiers = result.extras.get("courtiers", {}).get("list", [])
    assert {c["courtier"]: c["points"] for c in courtiers} == ex["courtiers"]
    assert result.total == ex["total"]
    for name, points in ex.get("also", {}).items():
        assert engine.score(kingdom, bonuses=[name]).bonuses[0].points == points


@pytest.mark.parametrize("ex", EXAMPLES, ids=[f"example-{ex['example']}" for ex in EXAMPLES])
def test_worked_example_survives_both_formats(ex):
    kingdom = example_kingdom(ex)
    assert engine.Kingdom.from_text(kingdom.to_text()) == kingdom
    assert engine.Kingdom.from_json(json.loads(json.dumps(kingdom.to_json()))) == kingdom


def test_breakdown_lines_carry_the_arithmetic():
    ten = example_kingdom(EXAMPLES[9])
    lines = [c["reason"] for c in engine.score(ten).to_json()["courtiers"]["list"]]
    assert "Lumberjack r2c2: 3 + 4 wood x 3 = 15" in lines
    five = engine.score(example_kingdom(EXAMPLES[4]), bonuses=["folie-des-grandeurs"]).bonuses[0]
    assert five.reason.startswith("3 line(s) x 10 = 30")
    assert "row 1 r1c1-r1c5 (2)" in five.reason


def test_a_quest_not_met_says_why():
    one = example_kingdom(EXAMPLES[0])
    result = engine.score(one, bonuses=["lost-corner", "local-business-mine", "bleak-king"])
    reasons = {b.name: b.reason for b in result.bonuses}
    assert all(b.points == 0 for b in result.bonuses)
    assert reasons["lost-corner"] == "not met: the castle is on r3c3, not on a corner"
    assert reasons["local-business-mine"] == "not met: no mine square around the castle (r3c3)"
    assert reasons["bleak-king"].startswith("not met: no field, forest, grassland or lake region")
    two = example_kingdom(EXAMPLES[1])
    harmony = engine.score(two, bonuses=["harmony"]).bonuses[0]
    assert harmony.points == 0 and "r5c3" in harmony.reason


def test_local_business_counts_the_squares_around_the_castle():
    one = example_kingdom(EXAMPLES[0])
    # around the castle r3c3: r2c2 field, r2c3 forest, r2c4 lake, r3c2 grassland, r3c4 lake,
    # r4c2 grassland, r4c3 swamp, r4c4 swamp
    points = {t: engine.score(one, bonuses=[f"local-business-{t}"]).bonuses[0].points for t in TERRAINS}
    assert points == {"field": 5, "forest": 5, "lake": 10, "grassland": 10, "swamp": 10, "mine": 0}


def test_giants_hide_crowns_only_while_they_stand():
    one = example_kingdom(EXAMPLES[0])
    bare = one.replace(cells=tuple(tuple(Cell(c.terrain, c.crowns) for c in row) for row in one.cells))
    assert sum(r.points for r in engine.score(bare, "age-of-giants").regions) == 48
    assert sum(r.points for r in engine.score(one).regions) == 35


def test_every_quest_and_courtier_is_listed_for_the_cli():
    assert set(QUESTS) == set(engine.bonus_names("age-of-giants"))
    assert len(QUESTS) == 17
    assert engine.bonus_names("the-court") == ["middle-kingdom", "harmony"]
    assert set(VALUES) == set(COURTIERS)


@pytest.mark.parametrize("row", list(itertools.product((0, 1), repeat=7)))
def test_folie_des_grandeurs_is_the_largest_set_of_lines_sharing_at_most_one_square(row):
    # a 7x7 kingdom crowned only on its middle row: compare with a brute-force maximum
    cells = [[Cell("swamp", 0) for _ in range(7)] for _ in range(7)]
    cells[0][0] = Cell("castle")
    for c, on in enumerate(row):
        cells[3][c] = Cell("field", on)
    kingdom = Kingdom(7, tuple(tuple(r) for r in cells), rules="age-of-giants")
    lines = [set(range(s, s + 3)) for s in range(5) if all(row[s:s + 3])]
    best = max((len(pick) for n in range(len(lines) + 1) for pick in itertools.combinations(lines, n)
                if all(len(a & b) <= 1 for a, b in itertools.combinations(pick, 2))), default=0)
    got = engine.score(kingdom, bonuses=["folie-des-grandeurs"]).bonuses[0].points
    assert got == 10 * best


# ------------------------------------------------------------------ symmetry
@st.composite
def expansion_kingdoms(draw):
    size = draw(st.sampled_from((5, 7)))
    palette = draw(st.lists(st.sampled_from(TERRAINS), min_size=1, max_size=3, unique=True))
    n = size * size
    terrains = draw(st.lists(st.sampled_from(palette + ["empty"]), min_size=n, max_size=n))
    mid = size // 2
    start_at = draw(st.none() | st.integers(0, n - 1)
                    | st.sampled_from([0, size - 1, n - 1, mid * size + mid, mid * size]))
    courtiers = iter(draw(st.permutations(COURTIERS)))
    cells = []
    for i, terrain in enumerate(terrains):
        if i == start_at or terrain == "empty":
            cells.append(Cell("castle" if i == start_at else "empty"))
            continue
        crowns = draw(st.sampled_from((0, 0, 0, 1, 1, 2, 3)))
        if crowns:
            cells.append(Cell(terrain, crowns, giants=draw(st.integers(0, crowns))))
            continue
        piece = draw(st.sampled_from(("none", "token", "token", "courtier", "courtier", "building")))
        if piece == "token" and terrain in TOKEN_OF:
            cells.append(Cell(terrain, token=True))
        elif piece == "courtier" and (who := next(courtiers, None)):
            cells.append(Cell(terrain, court=who))
        elif piece == "building" and terrain != "mine":
            b = draw(st.integers(1, 2))
            cells.append(Cell(terrain, court="building", building_crowns=b,
                              giants=draw(st.integers(0, b))))
        else:
            cells.append(Cell(terrain))
    grid = tuple(tuple(cells[r * size:(r + 1) * size]) for r in range(size))
    return Kingdom(size=size, cells=grid, rules=draw(st.sampled_from(("age-of-giants", "the-court"))))


def _summary(kingdom: Kingdom, rules: str) -> tuple:
    result = engine.score(kingdom, rules, engine.bonus_names(rules))
    courtiers = sorted((c["courtier"], c["points"])
                       for c in result.extras.get("courtiers", {}).get("list", []))
    return result.total, tuple((b.name, b.points) for b in result.bonuses), tuple(courtiers)


@SETTINGS
@given(expansion_kingdoms())
def test_turning_or_mirroring_changes_no_quest_no_courtier_no_total(kingdom):
    for rules in ("age-of-giants", "the-court"):
        want = _summary(kingdom, rules)
        turned = kingdom
        for _ in range(4):
            turned = turned.rotated()
            assert _summary(turned, rules) == want
            assert _summary(turned.mirrored(), rules) == want


@SETTINGS
@given(expansion_kingdoms())
def test_the_total_adds_up_and_both_formats_keep_every_piece(kingdom):
    result = engine.score(kingdom, bonuses=engine.bonus_names(kingdom.rules))
    courtiers = result.extras.get("courtiers", {}).get("points", 0)
    assert result.total == (sum(r.points for r in result.regions) + sum(b.points for b in result.bonuses)
                            + courtiers)
    for reg in result.regions:
        assert reg.crowns == sum(kingdom[rc].visible_crowns for rc in reg.cells)
    assert engine.Kingdom.from_text(kingdom.to_text()) == kingdom
    assert engine.Kingdom.from_json(kingdom.to_json()) == kingdom


# ------------------------------------------------------------------ validation
BAD = [
    ({"terrain": "field", "crowns": 0, "giants": 1}, "has none"),
    ({"terrain": "mine", "crowns": 2, "giants": 3}, "at most 2 giants"),
    ({"terrain": "forest", "crowns": 1, "resource": True}, "without a crown"),
    ({"terrain": "swamp", "crowns": 0, "resource": True}, "not on swamp"),
    ({"terrain": "mine", "crowns": 0, "court": "building", "building_crowns": 1}, "no building stands on a mine"),
    ({"terrain": "lake", "crowns": 0, "court": "building"}, "building_crowns"),
    ({"terrain": "lake", "crowns": 0, "building_crowns": 1}, "goes with"),
    ({"terrain": "castle", "court": "king"}, "not on a castle"),
    ({"terrain": "field", "crowns": 1, "court": "farmer"}, "without a crown"),
    ({"terrain": "field", "crowns": 0, "court": "farmer", "resource": True}, "remove the token"),
    ({"terrain": "field", "crowns": 0, "court": "jester"}, "unknown court tile"),
    ({"terrain": "field", "crowns": 0, "court": "building", "building_crowns": 3}, "must be 1 or 2"),
]


@pytest.mark.parametrize("cell,words", BAD, ids=[w for _, w in BAD])
def test_a_piece_where_it_cannot_lie_is_a_clear_error(cell, words):
    cells = [[{"terrain": "swamp", "crowns": 0} for _ in range(5)] for _ in range(5)]
    cells[1][2] = cell
    with pytest.raises(engine.KingdomError, match="row 1, col 2") as err:
        engine.Kingdom.from_json({"rules": "the-court", "size": 5, "cells": cells})
    assert words in str(err.value)


def test_two_of_a_courtier_that_exists_once_is_an_error():
    grid = "rules: the-court\n" + "\n".join(["F0@king F0 F0 F0 F0", "F0 F0 F0 F0 F0", "F0 F0 C F0 F0",
                                              "F0 F0 F0 F0 F0", "F0 F0 F0 F0 G0@king"])
    kingdom = engine.load_kingdom(grid)
    for rules in ("the-court", "age-of-giants"):   # both score the Court tiles they find
        with pytest.raises(engine.KingdomError, match="one king tile, found 2"):
            engine.score(kingdom, rules)


def test_an_unknown_mark_names_both_kinds_of_at_mark():
    with pytest.raises(engine.KingdomError, match="courtier of The Court"):
        engine.load_kingdom("F0@jester F0 F0 F0 F0\n" + "F0 F0 F0 F0 F0\n" * 4)


def test_warnings_against_the_expansions_pieces():
    rows = ["M3ggg M3ggg M3g F0b2 F0b1", "F0b1 F0b1 F0 F0 F0", "F0 F0 C F0 F0", "F0 F0 F0 F0 F0",
            "F0 F0 F0 F0 F0"]
    kingdom = engine.load_kingdom("\n".join(rows))
    court = engine.score(kingdom, "the-court").warnings
    assert any("no field building shows 2 crowns" in w for w in court)
    assert any("giants (Age of Giants)" in w for w in court)
    giants = engine.score(kingdom, "age-of-giants").warnings
    assert any("7 giants, but the game has only 6" in w for w in giants)
    plain = example_kingdom(EXAMPLES[0])
    assert engine.score(plain).warnings == ()


def test_expansion_pieces_under_another_rule_set_are_flagged_not_scored():
    one = example_kingdom(EXAMPLES[0])
    base = engine.score(one, "kingdomino")
    assert sum(r.points for r in base.regions) == 48  # the giants hide nothing there
    assert any("count only with --rules age-of-giants" in w for w in base.warnings)
    court = engine.score(example_kingdom(EXAMPLES[7]), "kingdomino")
    assert any("count only with --rules the-court" in w for w in court.warnings)


def test_the_expansion_marks_follow_the_crowns_whatever_other_marks_a_square_has():
    cells = [Cell("forest", 1, fire_tokens=2, giants=1), Cell("swamp", 0, warrior=1, court="building",
                                                             building_crowns=2, giants=2)]
    for cell in cells:
        assert engine.kingdom._parse_token(cell.to_token(), 0, 0) == cell
    with pytest.raises(engine.KingdomError, match="one or the other"):
        engine.kingdom._parse_token("G0r@mammoth", 0, 0)
