"""Queendomino: towns and their buildings, the queen, coins, towers and knights."""
from __future__ import annotations

from engine.messages import Message, N_
from engine.kingdom import BASE_TERRAINS
from engine.rules import VARIANTS, Rules, RegionScore, register

# a building's and the coins' arithmetic in the breakdown
FIXED = N_("%(points)s fixed")
PER_REGION = N_("%(points)s x %(n)s %(terrain)s region(s)")
PER_TOWER = N_("%(points)s x %(n)s tower(s)")
PER_KNIGHT = N_("%(points)s x %(n)s knight(s)")
COINS = N_("%(n)s coins // 3")


@register
class Queendomino(Rules):
    name = "queendomino"
    title = "Queendomino"
    terrains = (*BASE_TERRAINS, "town")
    cell_pieces = ("building",)
    kingdom_pieces = ("coins", "knights", "queen")
    # The Queendomino rulebook keeps the Kingdomino variants.
    bonuses = dict(VARIANTS)

    def regions(self, kingdom):
        regions = super().regions(kingdom)
        if kingdom.queen and regions:
            # She stands on the largest region: +1 crown there (+squares points). On a tie of
            # sizes every choice adds the same points; pick by (crowns, terrain) so the choice
            # does not depend on how the kingdom is turned.
            i = max(range(len(regions)),
                    key=lambda k: (regions[k].squares, regions[k].crowns, regions[k].terrain))
            reg = regions[i]
            regions[i] = RegionScore(reg.terrain, reg.cells, reg.crowns + 1,
                                     self.region_points(reg.terrain, reg.squares, reg.crowns + 1),
                                     queen=True)
        return regions

    def extras(self, kingdom, regions):
        towers = sum(cell.building.towers for _, _, cell in kingdom.squares() if cell.building)
        listed = []
        for r, c, cell in kingdom.squares():
            b = cell.building
            if b is None:
                continue
            if b.per is None:
                points, reason = b.points, Message(FIXED, points=b.points)
            elif b.per == "region":
                n = sum(1 for reg in regions if reg.terrain == b.terrain)
                points, reason = b.points * n, Message(PER_REGION, "n", points=b.points, n=n,
                                                       terrain=b.terrain)
            elif b.per == "tower":
                points, reason = b.points * towers, Message(PER_TOWER, "n", points=b.points, n=towers)
            else:
                points, reason = b.points * kingdom.knights, Message(PER_KNIGHT, "n", points=b.points,
                                                                     n=kingdom.knights)
            listed.append({"name": b.name or "building", "cell": [r, c], "crowns": b.crowns,
                           "points": points, "reason": reason})
        extras = {
            "coins": {"coins": kingdom.coins, "points": kingdom.coins // 3,
                      "reason": Message(COINS, "n", n=kingdom.coins)},
            "buildings": {"points": sum(b["points"] for b in listed), "towers": towers,
                          "knights": kingdom.knights, "list": listed},
        }
        queen = next((reg for reg in regions if reg.queen), None)
        extras["queen"] = ({"hosted": True, "terrain": queen.terrain, "squares": queen.squares,
                            "cells": [list(rc) for rc in queen.cells], "adds": queen.squares}
                           if queen else {"hosted": False})
        return extras

    def tiebreak(self, kingdom, regions):
        return [("largest_region", max((r.squares for r in regions), default=0))]
