"""The Court (Kingdomino print-and-play expansion): resource tokens, buildings, courtiers.

Per square: ``resource`` (true: a token; its kind follows the terrain), ``court`` (a courtier,
or ``building`` with ``building_crowns`` 1 or 2). Buildings add crowns to their square; each
courtier scores from the 8 squares around it. Rules: ``rules/EXPANSIONS.md`` (shared).
"""
from __future__ import annotations

from collections import Counter

from engine.errors import KingdomError
from engine.kingdom import COURT_TILES, COURTIERS, TOKEN_OF, Kingdom, square_code, square_name
from engine.messages import Message, N_
from engine.rules import Kingdomino, register

WARRIORS = ("axe-warrior", "sword-warrior", "light-archer", "heavy-archer")
# courtier -> (base points, points per item, item counted in the 8 squares around, its word)
VALUES = {
    "farmer": (3, 3, "wheat", "wheat"),
    "lumberjack": (3, 3, "wood", "wood"),
    "fisherman": (3, 3, "fish", "fish"),
    "shepherdess": (3, 3, "sheep", "sheep"),
    "banker": (2, 2, "token", "token(s)"),
    "queen": (2, 2, "character", "character(s)"),
    "king": (0, 1, "crown", "crown(s)"),
    "captain": (1, 3, "warrior", "warrior(s)"),
    "axe-warrior": (3, 0, None, ""),
    "sword-warrior": (3, 0, None, ""),
    "light-archer": (4, 0, None, ""),
    "heavy-archer": (4, 0, None, ""),
}
# Building tiles per terrain and the crowns they show (none for mines).
BUILDINGS = {"field": (1, 1, 1), "forest": (1, 1, 1), "lake": (1, 1, 1), "grassland": (1, 2),
             "swamp": (1, 2)}


def _title(courtier: str) -> str:
    return courtier.replace("-", " ").capitalize()


def has_court(kingdom: Kingdom) -> bool:
    return any(cell.token or cell.court for _, _, cell in kingdom.squares())


def _count(cell, item: str) -> int:
    if item == "token":
        return int(cell.token)
    if item == "character":
        return int(cell.court in COURTIERS)
    if item == "warrior":
        return int(cell.court in WARRIORS)
    if item == "crown":
        return cell.visible_crowns if cell.is_land else 0
    return int(cell.token and TOKEN_OF.get(cell.terrain) == item)


# a courtier's line of the breakdown ("Lumberjack r1c1: 3 + 4 wood x 3 = 15"); ``courtier`` is
# its name as a title, ``what`` the word of what it counts (both translated when rendered)
COURTIER_FIXED = N_("%(courtier)s %(square)s: %(points)s")
COURTIER_LINE = N_("%(courtier)s %(square)s: %(base)s + %(n)s %(what)s x %(each)s = %(points)s")
COUNTED = (N_("wheat"), N_("wood"), N_("fish"), N_("sheep"), N_("token(s)"), N_("character(s)"),
           N_("crown(s)"), N_("warrior(s)"))


def courtier_points(kingdom: Kingdom, r: int, c: int, courtier: str) -> tuple[int, str]:
    """(points, the arithmetic as a line: "Lumberjack r1c1: 3 + 4 wood x 3 = 15")."""
    base, each, item, word = VALUES[courtier]
    if item is None:
        return base, Message(COURTIER_FIXED, courtier=_title(courtier), square=square_code(r, c),
                             points=base)
    n = sum(_count(kingdom[rc], item) for rc in kingdom.around(r, c))
    points = base + n * each
    return points, Message(COURTIER_LINE, "n", courtier=_title(courtier), square=square_code(r, c),
                           base=base, n=n, what=word, each=each, points=points)


def courtier_extras(kingdom: Kingdom) -> dict:
    listed = []
    for r, c, cell in kingdom.squares():
        if cell.court in COURTIERS:
            points, reason = courtier_points(kingdom, r, c, cell.court)
            listed.append({"courtier": cell.court, "cell": [r, c], "points": points,
                           "reason": reason})
    tokens = Counter(TOKEN_OF[cell.terrain] for _, _, cell in kingdom.squares() if cell.token)
    buildings = [{"cell": [r, c], "terrain": cell.terrain, "crowns": cell.building_crowns}
                 for r, c, cell in kingdom.squares() if cell.court == "building"]
    return {"courtiers": {"points": sum(x["points"] for x in listed), "list": listed},
            "court_buildings": {"count": len(buildings), "list": buildings,
                                "note": "their crowns are counted in their regions"},
            "tokens": {"count": {kind: tokens[kind] for kind in TOKEN_OF.values()},
                       "note": "tokens left score nothing by themselves"}}


def check_court(kingdom: Kingdom) -> None:
    """Errors: a courtier that exists once found twice."""
    seen = Counter(cell.court for _, _, cell in kingdom.squares() if cell.court in COURTIERS)
    for name, n in seen.items():
        if n > 1:
            where = [square_name(r, c) for r, c, cell in kingdom.squares() if cell.court == name]
            raise KingdomError(f"The Court has one {name} tile, found {n} ({', '.join(where)}); "
                               f"remove all but one")


NO_SUCH_BUILDING = N_("%(where)s: no %(terrain)s building shows %(crowns)s crowns (they show "
                      "%(shown)s)")
TOO_MANY_BUILDINGS = N_("%(n)s %(terrain)s buildings with %(crowns)s crown(s), but the game has "
                        "only %(have)s")


def court_warnings(kingdom: Kingdom) -> list[str]:
    """Against the 13 building tiles: per terrain how many, and the crowns they show."""
    out = []
    built: dict[str, list[int]] = {}
    for r, c, cell in kingdom.squares():
        if cell.court == "building":
            built.setdefault(cell.terrain, []).append(cell.building_crowns)
            if cell.building_crowns not in BUILDINGS.get(cell.terrain, ()):
                out.append(Message(NO_SUCH_BUILDING, "crowns", where=square_name(r, c),
                                   terrain=cell.terrain, crowns=cell.building_crowns,
                                   shown=" or ".join(str(x) for x in sorted(set(BUILDINGS[cell.terrain])))))
    for terrain, crowns in built.items():
        have = Counter(BUILDINGS.get(terrain, ()))
        for k, n in Counter(crowns).items():
            if have[k] and n > have[k]:
                out.append(Message(TOO_MANY_BUILDINGS, "n", n=n, terrain=terrain, crowns=k,
                                   have=have[k]))
    return out


@register
class TheCourt(Kingdomino):
    name = "the-court"
    aliases = ("court", "la-cour")
    title = "Kingdomino: The Court (resources, buildings, courtiers)"
    cell_pieces = ("resource", "court", "building_crowns")
    piece_options = {
        "resource": {"kind": "flag", "label": "Resource token",
                     "hint": "wheat on a field, wood on a forest, fish on a lake, sheep on a "
                             "grassland; only on a square without a crown"},
        "court": {"kind": "choice", "values": list(COURT_TILES), "label": "Court tile",
                  "hint": "a courtier or a building, on a square without a crown or token"},
        "building_crowns": {"kind": "count", "min": 1, "max": 2, "label": "Building crowns",
                            "hint": "with a building only"},
    }

    def region_crowns(self, kingdom, cells):
        return sum(kingdom[rc].visible_crowns for rc in cells)

    def check_terrains(self, kingdom):
        super().check_terrains(kingdom)
        check_court(kingdom)

    def extras(self, kingdom, regions):
        return courtier_extras(kingdom)

    def warnings(self, kingdom):
        from engine.giants import PIECES, combined_warning

        out = court_warnings(kingdom)
        if any(cell.giants for _, _, cell in kingdom.squares()):
            out += combined_warning(PIECES[1])
        return out + super().warnings(kingdom)
