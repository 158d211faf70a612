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
