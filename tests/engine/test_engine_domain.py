"""Domain: points per walled domain and a player's income."""
from __future__ import annotations

import pytest

import engine
from engine.domain import domain_income, domain_points
from engine_helpers import kingdom


def test_published_domain_example():
    assert domain_points({"silver": 4, "forest": 1, "village": 1, "city": 1}) == 5 + 1 + 3 + 5


@pytest.mark.parametrize("contents,points", [
    ({"gold": 2}, 0), ({"gold": 3}, 5), ({"gold": 6}, 5), ({"gold": 3, "silver": 3}, 10),
    ({"gold": 2, "silver": 1, "copper": 2}, 0), ({"field": 5}, 0), ({"forest": 3, "village": 2}, 9),
    ({}, 0)])
def test_domain_points(contents, points):
    assert domain_points(contents) == points


def test_unknown_contents():
    with pytest.raises(engine.KingdomError, match="dragon"):
        domain_points({"dragon": 1})


def test_income_counts_kinds_of_mine():
    assert domain_income([{"gold": 1, "silver": 2}, {"gold": 4, "gems": 1, "forest": 2}]) == 3
    assert domain_income([{"forest": 2}]) == 0


GRID = """\
rules: domain
silver silver wall  gold    gold
silver silver wall  village forest
forest city   wall  gold    copper
village wall  wall  wall    wall
wall    field field field   gems
"""


def test_domains_on_a_grid():
    s = engine.score(kingdom(GRID))
    # left: 4 silver (5) + forest + city + village = 14; right: 3 gold (5) + village 3 +
    # forest 1 + 1 copper (0) = 9; bottom: fields + 1 gems = 0
    assert sorted(r.points for r in s.regions) == [0, 9, 14]
    assert s.total == 23
    assert s.to_json()["income"]["coins"] == 4


def test_two_royal_cities_warn_and_wrong_terrain_errors():
    s = engine.score(kingdom(GRID.replace("forest city", "city   city")))
    assert any("royal city" in w for w in s.warnings)
    with pytest.raises(engine.KingdomError, match=r"row 0, col 0.*mine"):
        engine.score(kingdom(GRID.replace("silver silver wall  gold", "M0 silver wall  gold", 1)))
