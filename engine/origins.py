"""Kingdomino Origins: Discovery, Totem and Tribe modes (7x7 = Neolithic).

Per square: ``crowns`` = printed fire symbols (on a volcano: its craters, 1..3), ``fire_tokens`` =
fires on the token lying there, ``resource``, ``caveman``, ``warrior``. Per kingdom: ``totems``.
"""
from __future__ import annotations

from collections import Counter

from engine.errors import KingdomError
from engine.kingdom import RESOURCES, Kingdom, a_or_an, square_name
from engine.messages import Message, N_
from engine.regions import find_regions
from engine.rules import Rules, frame_filled, register, start_in_centre

TOTEM_POINTS = {"mammoth": 3, "fish": 4, "mushroom": 5, "flint": 6}
# a caveman's arithmetic ("3 x 2 mammoth"); ``what`` is the word of what it counts
CAVEMAN_LINE = N_("%(each)s x %(n)s %(what)s")
RESOURCE_TERRAIN = {"mammoth": "grassland", "fish": "lake", "mushroom": "forest", "flint": "quarry"}
# Volcano craters -> (fires on its token, furthest reach in king's moves)
VOLCANO_REACH = {1: 3, 2: 2, 3: 1}
CAVEMAN_VALUES = {  # caveman -> (points, what is counted among the 8 squares around)
    "hunter": (3, "mammoth"), "fishing-child": (3, "fish"), "gatherer": (4, "mushroom"),
    "sculptor": (5, "flint"), "painter": (2, "resource"), "fire-lady": (1, "fire"),
    "shaman": (2, "caveman"),
}


def fire(cell) -> int:
    """Fire on a square: printed symbols plus token (a volcano's craters are not fire)."""
    return (0 if cell.terrain == "volcano" else cell.crowns) + cell.fire_tokens


def live_resource(cell) -> str | None:
    """The resource still on a square: a fire token landing on it destroyed it."""
    return cell.resource if cell.resource and not cell.fire_tokens else None


def resource_counts(kingdom: Kingdom) -> Counter:
    return Counter(res for _, _, cell in kingdom.squares() if (res := live_resource(cell)))


def award_totems(kingdoms) -> list[Kingdom]:
    """Totem mode across players: each resource's totem goes to the player with a strict
    majority of it. On a tie at the top the player already holding it (listed in its
    ``totems``) keeps it, otherwise nobody gets it. Returns the kingdoms with ``totems`` set.
    """
    kingdoms = list(kingdoms)
    counts = [resource_counts(k) for k in kingdoms]
    held: list[list[str]] = [[] for _ in kingdoms]
    for res in RESOURCES:
        top = max((c[res] for c in counts), default=0)
        if top == 0:
            continue
        leaders = [i for i, c in enumerate(counts) if c[res] == top]
        if len(leaders) == 1:
            held[leaders[0]].append(res)
        else:
            keepers = [i for i in leaders if res in kingdoms[i].totems]
            if len(keepers) == 1:
                held[keepers[0]].append(res)
    return [k.replace(totems=tuple(h)) for k, h in zip(kingdoms, held)]


@register
class OriginsDiscovery(Rules):
    name = "origins-discovery"
    aliases = ("origins", "discovery", "neolithic")
    title = "Kingdomino Origins, Discovery mode (7x7 = Neolithic)"
    terrains = ("desert", "grassland", "lake", "forest", "quarry", "volcano")
    start_terrain = "hut"
    cell_pieces = ("fire_tokens",)
    bonuses = {
        "empire-of-fire": (10, start_in_centre, N_("hut in the centre of the frame")),
        "homo-habilis": (5, frame_filled, N_("territory complete, no domino discarded")),
    }

    def region_crowns(self, kingdom, cells):
        return sum(fire(kingdom[rc]) for rc in cells)

    def region_points(self, terrain, squares, crowns):
        return 0 if terrain == "volcano" else squares * crowns

    def tiebreak(self, kingdom, regions):
        return [("largest_region", max((r.squares for r in regions), default=0)),
                ("fire", sum(fire(cell) for _, _, cell in kingdom.squares()))]

    def warnings(self, kingdom):
        return self.fire_warnings(kingdom) + super().warnings(kingdom)

    def fire_warnings(self, kingdom: Kingdom) -> list[str]:
        """Where a fire token could not have landed by the placement rule."""
        out = []
        volcanoes = [(r, c, cell.crowns) for r, c, cell in kingdom.squares() if cell.terrain == "volcano"]
        for r, c, cell in kingdom.squares():
            if cell.terrain == "volcano" and cell.crowns not in VOLCANO_REACH:
                out.append(f"{square_name(r, c)}: a volcano has 1, 2 or 3 craters, not {cell.crowns}")
            if not cell.fire_tokens:
                continue
            where = square_name(r, c)
            if cell.terrain == "volcano":
                out.append(f"{where}: a fire token never lands on a volcano")
            elif cell.terrain in ("hut", "empty"):
                out.append(f"{where}: a fire token lands on a terrain square, not on "
                           f"{a_or_an(cell.terrain)}")
            elif cell.crowns:
                out.append(f"{where}: a fire token lands on a square without a fire symbol")
            n = cell.fire_tokens
            reach = VOLCANO_REACH[n]
            if not any(craters == n and max(abs(vr - r), abs(vc - c)) <= reach
                       for vr, vc, craters in volcanoes):
                out.append(f"{where}: a {n}-fire token needs a {n}-crater volcano within {reach} "
                           f"square(s); none is there")
        return out

    def resource_warnings(self, kingdom: Kingdom) -> list[str]:
        out = []
        for r, c, cell in kingdom.squares():
            res = cell.resource
            if not res:
                continue
            where = square_name(r, c)
            if cell.terrain != RESOURCE_TERRAIN[res]:
                out.append(f"{where}: a {res} sits on {RESOURCE_TERRAIN[res]}, not on {cell.terrain}")
            if cell.crowns:
                out.append(f"{where}: no resource sits on a square with a fire symbol")
            if cell.fire_tokens:
                out.append(f"{where}: the fire token here destroyed the {res}; it is not counted")
        return out


@register
class OriginsTotem(OriginsDiscovery):
    name = "origins-totem"
    aliases = ("totem",)
    title = "Kingdomino Origins, Totem mode"
    cell_pieces = ("fire_tokens", "resource")
    kingdom_pieces = ("totems",)

    def extras(self, kingdom, regions):
        counts = resource_counts(kingdom)
        totems = sorted(kingdom.totems, key=RESOURCES.index)
        return {
            "resources": {"points": sum(counts.values()),
                          "count": {res: counts[res] for res in RESOURCES}},
            "totems": {"points": sum(TOTEM_POINTS[t] for t in totems), "held": totems},
        }

    def warnings(self, kingdom):
        return self.fire_warnings(kingdom) + self.resource_warnings(kingdom) \
            + super(OriginsDiscovery, self).warnings(kingdom)


@register
class OriginsTribe(OriginsDiscovery):
    name = "origins-tribe"
    aliases = ("tribe",)
    title = "Kingdomino Origins, Tribe mode"
    cell_pieces = ("fire_tokens", "resource", "caveman", "warrior")

    def check_terrains(self, kingdom):
        super().check_terrains(kingdom)
        seen = Counter(cell.caveman for _, _, cell in kingdom.squares() if cell.caveman)
        twice = [name for name, n in seen.items() if n > 1]
        if twice:
            raise KingdomError(f"the tribe has one {twice[0]}, found {seen[twice[0]]}")

    def caveman_points(self, kingdom: Kingdom, r: int, c: int, who: str) -> tuple[int, str]:
        value, what = CAVEMAN_VALUES[who]
        around = [kingdom[rc] for rc in kingdom.around(r, c)]
        if what == "fire":
            n = sum(fire(cell) for cell in around)
        elif what == "caveman":
            n = sum(1 for cell in around if cell.caveman or cell.warrior)
        elif what == "resource":
            n = sum(1 for cell in around if live_resource(cell))
        else:
            n = sum(1 for cell in around if live_resource(cell) == what)
        return value * n, Message(CAVEMAN_LINE, "n", each=value, n=n, what=what)

    def extras(self, kingdom, regions):
        cavemen = []
        for r, c, cell in kingdom.squares():
            if cell.caveman:
                points, reason = self.caveman_points(kingdom, r, c, cell.caveman)
                cavemen.append({"caveman": cell.caveman, "cell": [r, c], "points": points,
                                "reason": reason})
        groups = []
        for _, cells in find_regions(kingdom, lambda cell: "warrior" if cell.warrior else None):
            power = sum(kingdom[rc].warrior for rc in cells)
            groups.append({"cells": [list(rc) for rc in cells], "size": len(cells), "power": power,
                           "points": len(cells) * power})
        return {
            "cavemen": {"points": sum(m["points"] for m in cavemen), "list": cavemen},
            "warriors": {"points": sum(g["points"] for g in groups), "groups": groups},
        }

    def warnings(self, kingdom):
        out = self.fire_warnings(kingdom) + self.resource_warnings(kingdom)
        power = Counter(cell.warrior for _, _, cell in kingdom.squares() if cell.warrior)
        for p, most, label in ((1, 4, "small"), (2, 3, "amazon"), (3, 1, "oafish")):
            if power[p] > most:
                out.append(f"{power[p]} {label} warriors (power {p}), but the game has only {most}")
        return out + super(OriginsDiscovery, self).warnings(kingdom)
