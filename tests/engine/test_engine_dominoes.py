"""The packaged domino list: what the consistency warnings rely on."""
from __future__ import annotations

from collections import Counter

from engine.dominoes import dominoes, square_counts
from tests.conftest import shared_path


def test_packaged_csv_is_the_shared_one():
    shared = shared_path("rules", "kingdomino-dominoes.csv")
    from importlib import resources

    packaged = resources.files("engine.data").joinpath("kingdomino-dominoes.csv").read_text("utf-8")
    assert packaged.strip().splitlines() == shared.read_text("utf-8").strip().splitlines()


def test_facts_from_the_rules():
    assert len(dominoes()) == 48
    assert sorted(d[0] for d in dominoes()) == list(range(1, 49))
    counts = square_counts()
    most = Counter()
    for (terrain, crowns), n in counts.items():
        most[terrain] = max(most[terrain], crowns)
    assert most == {"field": 1, "forest": 1, "lake": 1, "grassland": 2, "swamp": 2, "mine": 3}
    assert counts[("mine", 0)] == 1 and counts[("mine", 3)] == 1
    assert sum(counts.values()) == 96


def test_warnings_name_squares_from_1_as_people_count():
    """The web editor says "row 3, column 4" from 1; the warnings did from 0 (JSON stays 0-based)."""
    import engine

    cells = [[{"terrain": "empty", "crowns": 0} for _ in range(5)] for _ in range(5)]
    cells[2][2] = {"terrain": "castle", "crowns": 0}
    cells[0][1] = {"terrain": "forest", "crowns": 3}   # no forest square has 3 crowns
    warnings = engine.score(engine.Kingdom.from_json({"size": 5, "cells": cells})).warnings
    assert any(w.startswith("square (row 1, col 2): no forest square has 3 crown(s)") for w in warnings)
    assert any("not joined to the castle: row 1 col 2" in w for w in warnings)
