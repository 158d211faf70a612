"""Domain: a territory game scored per walled domain, and a player's income.

On a grid: ``wall`` (and ``empty``) squares separate domains; every other joined group of squares
is one domain. Contents: field 0, forest 1 each, village 3 each, the royal ``city`` 5, mines
(``gold``, ``silver``, ``copper``, ``gems``) 5 per kind held 3 or more times in the domain.
"""
from __future__ import annotations

from collections import Counter

from engine.errors import KingdomError
from engine.messages import Message, N_
from engine.regions import find_regions
from engine.rules import RegionScore, Rules, register

CITIES = N_("%(n)s royal city squares; the game has only one")

MINES = ("gold", "silver", "copper", "gems")
VALUES = {"field": 0, "forest": 1, "village": 3, "city": 5}
MINE_SET = 3       # mines of one kind needed for that kind to score
MINE_POINTS = 5    # what such a set of mines is worth in total


def domain_points(contents) -> int:
    """Points of one domain from its contents, a mapping like ``{"silver": 4, "forest": 1}``."""
    total = 0
    for what, n in dict(contents).items():
        if not isinstance(n, int) or isinstance(n, bool) or n < 0:
            raise KingdomError(f"domain contents: {what} must be a whole number >= 0, not {n!r}")
        if what in MINES:
            total += MINE_POINTS if n >= MINE_SET else 0
        elif what in VALUES:
            total += VALUES[what] * n
        else:
            raise KingdomError(f"domain contents: unknown {what!r}; use "
                               f"{', '.join((*VALUES, *MINES))}")
    return total


def domain_income(domains) -> int:
    """Coins a player earns each turn: 1 per distinct kind of mine in all their domains."""
    kinds = set()
    for contents in domains:
        kinds.update(k for k, n in dict(contents).items() if k in MINES and n > 0)
    return len(kinds)


@register
class Domain(Rules):
    name = "domain"
    title = "Domain (per walled domain; income per kind of mine)"
    terrains = ("field", "forest", "village", "city", *MINES, "wall")
    start_terrain = "castle"  # Domain has no start square; none is needed
    bonuses = {}

    def region_key(self, cell):
        return None if cell.terrain in ("wall", "empty", "castle") else "domain"

    def regions(self, kingdom):
        out = []
        for _, cells in find_regions(kingdom, self.region_key):
            contents = Counter(kingdom[rc].terrain for rc in cells)
            out.append(RegionScore("domain", cells, 0, domain_points(contents)))
        return out

    def extras(self, kingdom, regions):
        domains = [dict(Counter(kingdom[rc].terrain for rc in reg.cells)) for reg in regions]
        kinds = sorted({k for d in domains for k in d if k in MINES}, key=MINES.index)
        return {
            "domains": [{"cells": [list(rc) for rc in reg.cells], "contents": d, "points": reg.points}
                        for reg, d in zip(regions, domains)],
            "income": {"coins": domain_income(domains), "mine_kinds": kinds},
        }

    def tiebreak(self, kingdom, regions):
        return []

    def warnings(self, kingdom):
        cities = [(r, c) for r, c, cell in kingdom.squares() if cell.terrain == "city"]
        if len(cities) > 1:
            return [Message(CITIES, "n", n=len(cities))]
        return []
