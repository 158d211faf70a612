"""Kingdomino Origins: Discovery (published 29), fire placement checks, Totem, Tribe, bonuses."""
from __future__ import annotations

import pytest

import engine
from engine.origins import award_totems
from engine_helpers import grid, kingdom, region_summary, total

# RULES.md's published Discovery breakdown on a 5x5 grid: desert 6 squares x 2 fire = 12;
# grassland 0; forest 1x1 (a fire token); lakes 2x1 + 3x2 (a 2-fire token); quarry 4x2
# (1 printed + a 1-fire token); volcanoes 0. Total 29.
PUBLISHED = """\
rules: origins-discovery
D1 D0 D0 L1 L0
D0 D1 D0 G0 G0
V1 W0+1 H Q1 Q0
L0 L0 L0+2 Q0+1 Q0
.  .  V2 .  .
"""


def test_published_discovery_example_is_29():
    s = engine.score(kingdom(PUBLISHED))
    assert s.total == 29
    assert region_summary(s) == sorted([
        ("desert", 6, 2, 12), ("grassland", 2, 0, 0), ("forest", 1, 1, 1), ("lake", 2, 1, 2),
        ("lake", 3, 2, 6), ("quarry", 4, 2, 8), ("volcano", 1, 0, 0), ("volcano", 1, 0, 0)])
    assert s.warnings == ()  # every token lies where a volcano could throw it
    # fire: printed 2 + 1 + 1 and tokens 1 + 2 + 1
    assert dict(s.tiebreak) == {"largest_region": 6, "fire": 8}


def test_volcano_regions_never_score():
    text = "rules: origins-discovery\n" + grid("D0", r2c2="H", r0c0="V3", r0c1="V3", r1c0="V2")
    s = engine.score(kingdom(text))
    assert s.total == 0
    assert ("volcano", 3, 0, 0) in region_summary(s)


def test_fire_is_printed_plus_tokens():
    # desert (0,0)-(0,1): 1 printed + a 2-fire token = 3, x 2 squares = 6; volcano (1,0) 2 craters
    text = "rules: origins-discovery\n" + grid("W0", r0c0="D1", r0c1="D0+2", r1c0="V2", r2c2="H")
    assert total(text) == 6


def fire_warnings(text):
    return engine.score(kingdom("rules: origins-discovery\n" + text)).warnings


def test_legal_token_reach_is_kings_move():
    # a 1-crater volcano reaches 3 squares, diagonals included
    assert fire_warnings(grid("D0", r0c0="V1", r3c3="D0+1", r2c2="H")) == ()
    assert fire_warnings(grid("D0", r0c0="V3", r1c1="D0+3", r2c2="H")) == ()


def test_token_too_far_from_its_volcano():
    w = fire_warnings(grid("D0", r0c0="V1", r4c4="D0+1", r2c2="H"))
    assert any("row 5, col 5" in x and "1-crater volcano within 3" in x for x in w)
    w = fire_warnings(grid("D0", r0c0="V2", r0c3="D0+2", r2c2="H"))
    assert any("row 1, col 4" in x and "within 2" in x for x in w)


def test_token_value_must_match_the_craters():
    w = fire_warnings(grid("D0", r0c0="V1", r0c1="D0+2", r2c2="H"))
    assert any("2-fire token needs a 2-crater volcano" in x for x in w)


def test_token_on_a_fire_symbol_or_a_volcano():
    w = fire_warnings(grid("D0", r0c0="V1", r0c1="D1+1", r2c2="H"))
    assert any("row 1, col 2" in x and "without a fire symbol" in x for x in w)
    w = fire_warnings(grid("D0", r0c0="V1", r0c1="V1+1", r2c2="H"))
    assert any("row 1, col 2" in x and "never lands on a volcano" in x for x in w)


def test_empire_of_fire_and_homo_habilis():
    assert engine.bonus_names("origins-discovery") == ["empire-of-fire", "homo-habilis"]
    # incomplete territory, hut in the centre: Empire of Fire still counts
    text = "rules: origins-discovery\n" + grid(".", r2c2="H", r2c3="D1", r2c4="D0")
    assert total(text, bonuses=["empire-of-fire"]) == 2 + 10
    assert total(text, bonuses=["homo-habilis"]) == 2
    full = "rules: origins-discovery\n" + grid("D0", r2c2="H", r0c0="D1")
    assert total(full, bonuses=["empire-of-fire", "homo-habilis"]) == 24 + 10 + 5
    with pytest.raises(engine.RulesError):
        engine.score(kingdom(full), bonuses=["harmony"])


def test_neolithic_seven_by_seven():
    text = "rules: neolithic\n" + grid("Q0", size=7, r3c3="H", r0c0="Q1")
    s = engine.score(kingdom(text), bonuses=["empire-of-fire", "homo-habilis"])
    assert s.rules == "origins-discovery" and s.total == 48 + 10 + 5


def test_kingdomino_terrain_is_not_origins():
    with pytest.raises(engine.KingdomError, match=r"row 0, col 0.*swamp"):
        engine.score(kingdom("rules: origins-discovery\n" + grid("D0", r0c0="S1", r2c2="H")))


# --- Totem --------------------------------------------------------------------------------
TOTEM = """\
rules: origins-totem
totems: fish, flint
G0@mammoth   G0@mammoth L0@fish Q0@flint W0@mushroom
G0+1@mammoth V1         H       D0       D0
.            .          .       .        .
.            .          .       .        .
.            .          .       .        .
"""


def test_totem_resources_and_totems():
    s = engine.score(kingdom(TOTEM))
    j = s.to_json()
    # grassland 3 squares x 1 fire = 3; live resources 2 mammoth (one burnt) + fish + flint +
    # mushroom = 5; totems fish 4 + flint 6 = 10
    assert j["resources"]["points"] == 5 and j["resources"]["count"]["mammoth"] == 2
    assert j["totems"] == {"points": 10, "held": ["fish", "flint"]}
    assert s.total == 3 + 5 + 10
    assert any("row 2, col 1" in w and "destroyed" in w for w in s.warnings)


def test_totem_resource_on_the_wrong_terrain_is_a_warning():
    s = engine.score(kingdom("rules: origins-totem\n" + grid("D0", r2c2="H", r0c0="D0@fish")))
    assert any("row 1, col 1" in w and "fish sits on lake" in w for w in s.warnings)


def test_award_totems_strict_majority():
    a = kingdom("rules: origins-totem\n" + grid(".", r2c2="H", r2c3="G0@mammoth", r2c4="G0@mammoth",
                                                r1c2="L0@fish"))
    b = kingdom("rules: origins-totem\n" + grid(".", r2c2="H", r2c3="G0@mammoth", r1c2="L0@fish"))
    c = kingdom("rules: origins-totem\n" + grid(".", r2c2="H"))
    ka, kb, kc = award_totems([a, b, c])
    assert ka.totems == ("mammoth",) and kb.totems == () and kc.totems == ()
    # a tie at the top: the player already holding the totem keeps it
    ka, kb, kc = award_totems([a, b.replace(totems=("fish",)), c])
    assert ka.totems == ("mammoth",) and kb.totems == ("fish",)
    assert engine.score(kb).to_json()["totems"]["points"] == 4


# --- Tribe --------------------------------------------------------------------------------
def caveman_points(text: str, r=2, c=2) -> int:
    j = engine.score(kingdom("rules: origins-tribe\n" + text)).to_json()
    return next(m["points"] for m in j["cavemen"]["list"] if m["cell"] == [r, c])


@pytest.mark.parametrize("centre,around,points", [
    ("D0!hunter", dict(r1c1="G0@mammoth", r1c3="G0@mammoth", r3c3="L0@fish", r0c0="G0@mammoth"), 6),
    ("D0!fishing-child", dict(r1c2="L0@fish", r3c1="L0@fish", r2c1="G0@mammoth"), 6),
    ("D0!gatherer", dict(r2c3="W0@mushroom", r3c2="Q0@flint"), 4),
    ("D0!sculptor", dict(r1c1="Q0@flint", r3c3="Q0@flint", r1c2="W0@mushroom"), 10),
    ("D0!painter", dict(r1c1="G0@mammoth", r1c2="L0@fish", r1c3="W0@mushroom", r3c3="Q0@flint"), 8),
    ("D0!fire-lady", dict(r1c1="D2", r3c3="D0+1", r4c4="V1", r0c0="D3"), 3),
    ("D0!shaman", dict(r1c1="D0!hunter", r3c3="D0!painter", r2c3="D0^2"), 6),
    ("D0!hunter", dict(r1c1="G0+1@mammoth", r0c0="V1"), 0),  # the token burnt the mammoth
])
def test_each_caveman(centre, around, points):
    assert caveman_points(grid("D0", r2c2=centre, **around)) == points


def test_warrior_groups():
    # the published group: 3 joined warriors of power 1 + 2 + 1 = 4 -> 12; a lone oafish 3;
    # (1,3) touches (0,2) only diagonally: a lone small warrior, 1
    text = "rules: origins-tribe\n" + grid("D0", r0c0="D0^1", r0c1="D0^2", r0c2="D0^1", r1c3="D0^1",
                                           r4c4="D0^oafish", r2c2="H")
    j = engine.score(kingdom(text)).to_json()
    assert sorted(g["points"] for g in j["warriors"]["groups"]) == [1, 3, 12]
    assert j["warriors"]["points"] == 16 and j["total"] == 16


def test_tribe_resources_score_nothing_and_one_of_each_caveman():
    text = grid("G0", r2c2="H", r0c0="G1@mammoth", r4c4="G0@mammoth")
    assert total("rules: origins-tribe\n" + text) == total("rules: origins-discovery\n" + text) == 24
    with pytest.raises(engine.KingdomError, match="one hunter"):
        kingdom_text = "rules: origins-tribe\n" + grid("G0", r2c2="H", r0c0="G0!hunter", r4c4="G0!hunter")
        engine.score(kingdom(kingdom_text))


def test_too_many_oafish_warriors_is_a_warning():
    text = "rules: origins-tribe\n" + grid("G0", r2c2="H", r0c0="G0^3", r4c4="G0^3")
    assert any("2 oafish warriors" in w for w in engine.score(kingdom(text)).warnings)
