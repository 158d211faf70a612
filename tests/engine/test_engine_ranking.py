"""Standings with the official tie-breaks, and Dynasty."""
from __future__ import annotations

import pytest

import engine
from engine_helpers import grid, kingdom


def k_score(total, largest, crowns):
    return {"total": total, "rules": "kingdomino",
            "tiebreak": {"largest_region": largest, "crowns": crowns}}


def places(standings):
    return [(row["player"], row["place"]) for row in standings]


def test_kingdomino_tie_breaks():
    standings = engine.rank([
        ("ann", k_score(40, 4, 13)), ("bob", k_score(40, 5, 10)), ("cat", k_score(40, 4, 14)),
        ("dan", k_score(40, 4, 13)), ("eve", k_score(30, 9, 20)), ("fay", k_score(52, 1, 1))])
    assert places(standings) == [("fay", 1), ("bob", 2), ("cat", 3), ("ann", 4), ("dan", 4), ("eve", 6)]
    assert [row["shared"] for row in standings] == [False, False, False, True, True, False]


def test_ranking_real_scores():
    # a: field 3x1 = 3 and a 21-square forest; b: the same field, a 3-square lake cut out of the
    # forest (18 squares): equal totals, a has the larger region; c: a mirrored, ties with a
    a = engine.score(kingdom(grid("W0", r2c2="C", r0c0="F1", r0c1="F0", r0c2="F0")))
    b = engine.score(kingdom(grid("W0", r2c2="C", r0c0="F1", r0c1="F0", r0c2="F0",
                                  r4c4="L0", r4c3="L0", r3c4="L0")))
    c = engine.score(kingdom(grid("W0", r2c2="C", r0c4="F1", r0c3="F0", r0c2="F0")))
    assert a.total == b.total == c.total == 3
    standings = engine.rank([("b", b), ("a", a), ("c", c)])
    assert places(standings) == [("a", 1), ("c", 1), ("b", 3)]
    assert standings[0]["tiebreak"] == {"largest_region": 21, "crowns": 1}


def test_queendomino_ties_only_on_the_largest_region():
    q = lambda total, largest: {"total": total, "rules": "queendomino",  # noqa: E731
                                "tiebreak": {"largest_region": largest}}
    standings = engine.rank([("x", q(50, 6)), ("y", q(50, 7)), ("z", q(50, 6))])
    assert places(standings) == [("y", 1), ("x", 2), ("z", 2)]


def test_origins_tie_break_on_fire():
    o = lambda fire: {"total": 20, "rules": "origins-discovery",  # noqa: E731
                      "tiebreak": {"largest_region": 5, "fire": fire}}
    assert places(engine.rank([("x", o(3)), ("y", o(4))])) == [("y", 1), ("x", 2)]


def test_rank_refuses_mixed_rules_and_junk():
    with pytest.raises(engine.RulesError, match="different rule sets"):
        engine.rank([("x", k_score(1, 1, 1)), ("y", {"total": 1, "rules": "queendomino"})])
    with pytest.raises(engine.RulesError):
        engine.rank([("x", 12)])


def test_dynasty_adds_three_games():
    d1 = engine.dynasty([k_score(40, 4, 13), k_score(35, 3, 9), k_score(50, 6, 12)])
    d2 = engine.dynasty([k_score(60, 4, 13), k_score(30, 3, 9), k_score(35, 6, 12)])
    d3 = engine.dynasty([k_score(10, 4, 13), k_score(10, 3, 9), k_score(10, 6, 12)])
    assert d1["total"] == 125 and d1["games"] == [40, 35, 50]
    assert places(engine.rank([("p3", d3), ("p1", d1), ("p2", d2)])) == [("p1", 1), ("p2", 1), ("p3", 3)]
    with pytest.raises(engine.RulesError, match="three games"):
        engine.dynasty([k_score(1, 1, 1)])
