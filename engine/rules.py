"""Rule sets: one small class each, found by name in a registry; all share ``find_regions``.

A rule set answers: which terrains it knows, how a region scores, which optional bonuses it has,
what extra points it adds (``extras``: each a JSON object with ``"points"`` added to the total),
its tie-break keys, and the consistency warnings it checks.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from engine.errors import KingdomError, RulesError
from engine.kingdom import BASE_TERRAINS, Kingdom, a_or_an
from engine.messages import TEMPLATES, Message, N_
from engine.regions import find_regions, terrain_key

Square = tuple[int, int]


@dataclass(frozen=True)
class RegionScore:
    terrain: str
    cells: tuple[Square, ...]
    crowns: int
    points: int
    queen: bool = False

    @property
    def squares(self) -> int:
        return len(self.cells)

    def to_json(self) -> dict:
        out = {"terrain": self.terrain, "squares": self.squares, "crowns": self.crowns,
               "points": self.points, "cells": [list(rc) for rc in self.cells]}
        if self.queen:
            out["queen"] = True
        return out


@dataclass(frozen=True)
class Bonus:
    name: str
    points: int
    reason: str

    def to_json(self) -> dict:
        return {"name": self.name, "points": self.points, "reason": self.reason}


@dataclass(frozen=True)
class Score:
    """A kingdom's score. ``total`` = region points + bonus points + each extra's ``"points"``."""
    total: int
    rules: str
    regions: tuple[RegionScore, ...]
    bonuses: tuple[Bonus, ...] = ()
    tiebreak: tuple[tuple[str, int], ...] = ()
    warnings: tuple[str, ...] = ()
    extras: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        out = {
            "total": self.total,
            "rules": self.rules,
            "regions": [r.to_json() for r in self.regions],
            "bonuses": [b.to_json() for b in self.bonuses],
            "tiebreak": dict(self.tiebreak),
            "warnings": list(self.warnings),
        }
        for key, value in self.extras.items():
            out[key] = value
        return out


_REGISTRY: dict[str, type["Rules"]] = {}


def register(cls: type["Rules"]) -> type["Rules"]:
    """Class decorator: make a rule set available by its name and aliases."""
    for name in (cls.name, *cls.aliases):
        _REGISTRY[name] = cls
    return cls


def _registry() -> dict[str, type["Rules"]]:
    # The rule-set modules register themselves on import.
    from engine import court, domain, giants, origins, queendomino  # noqa: F401

    return _REGISTRY


def rule_names() -> list[str]:
    """Canonical rule-set names (aliases are accepted too but not listed)."""
    return [name for name, cls in _registry().items() if cls.name == name]


def canonical_rules(name) -> str:
    if not isinstance(name, str) or name.lower() not in _registry():
        raise RulesError(f"unknown rule set {name!r}; choose one of: {', '.join(rule_names())}")
    return _registry()[name.lower()].name


def get_rules(name: str | None = None) -> "Rules":
    """The rule set called ``name`` (or an alias); ``RulesError`` when unknown."""
    return _registry()[canonical_rules(name or "kingdomino")]()


def bonus_names(rules: str | None = None) -> list[str]:
    """Optional bonuses of a rule set (default kingdomino)."""
    return list(get_rules(rules).bonuses)


# --- helpers shared by the bonuses ---------------------------------------------------------
def land_squares(kingdom: Kingdom) -> list[Square]:
    return [(r, c) for r, c, cell in kingdom.squares() if cell.terrain != "empty"]


def start_in_centre(kingdom: Kingdom) -> bool:
    """Castle/hut in the centre of the frame (the grid, or a smaller ``frame`` on a larger grid)."""
    start = kingdom.start
    if start is None:
        return False
    if kingdom.frame is None or kingdom.frame == kingdom.size:
        return start == (kingdom.size // 2, kingdom.size // 2)
    half = kingdom.frame // 2
    return all(abs(r - start[0]) <= half and abs(c - start[1]) <= half
               for r, c in land_squares(kingdom))


def frame_filled(kingdom: Kingdom) -> bool:
    """Every square of the frame is covered (no discarded domino)."""
    frame = kingdom.frame or kingdom.size
    squares = land_squares(kingdom)
    if len(squares) != frame * frame:
        return False
    rows = {r for r, _ in squares}
    cols = {c for _, c in squares}
    return max(rows) - min(rows) + 1 == frame and max(cols) - min(cols) + 1 == frame


NO_START = N_("no %(start)s: every kingdom starts from one")
NOT_JOINED = N_("%(n)s square(s) not joined to the %(start)s: %(listed)s%(more)s")
ROW_COL = N_("row %(row)s col %(col)s")
TOO_WIDE = N_("the kingdom spans %(rows)s rows and %(cols)s columns, more than its "
              "%(frame)sx%(frame)s frame")
UNSCORED = {"giants": N_("the giants on this kingdom count only with --rules %(rules)s; "
                         "%(name)s ignores them"),
            "Court tokens or tiles": N_("the Court tokens or tiles on this kingdom count only "
                                        "with --rules %(rules)s; %(name)s ignores them")}
NOT_MET = N_("not met: %(why)s")


def as_message(text: str):
    """A bonus reason as a :class:`Message` when it is one of the catalogs' (else the text)."""
    return Message(text) if text in TEMPLATES else text


def connection_warnings(kingdom: Kingdom, start_name: str) -> list[str]:
    """No start square; squares not joined to it; a kingdom wider than its frame."""
    warnings = []
    start = kingdom.start
    if start is None:
        warnings.append(Message(NO_START, start=start_name))
    else:
        reach = {start}
        stack = [start]
        while stack:
            r, c = stack.pop()
            for rc in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
                if 0 <= rc[0] < kingdom.size and 0 <= rc[1] < kingdom.size and rc not in reach \
                        and kingdom[rc].terrain != "empty":
                    reach.add(rc)
                    stack.append(rc)
        lost = [rc for rc in land_squares(kingdom) if rc not in reach]
        if lost:
            listed = tuple(Message(ROW_COL, row=r + 1, col=c + 1) for r, c in lost[:6])
            warnings.append(Message(NOT_JOINED, "n", n=len(lost), start=start_name, listed=listed,
                                    more=" ..." if len(lost) > 6 else ""))
    frame = kingdom.frame or kingdom.size
    squares = land_squares(kingdom)
    if squares:
        height = max(r for r, _ in squares) - min(r for r, _ in squares) + 1
        width = max(c for _, c in squares) - min(c for _, c in squares) + 1
        if max(height, width) > frame:
            warnings.append(Message(TOO_WIDE, rows=height, cols=width, frame=frame))
    return warnings


class Rules:
    """Base rule set: regions score squares x crowns; subclasses override a few methods."""
    name = ""
    aliases: tuple[str, ...] = ()
    title = ""
    terrains: tuple[str, ...] = ()
    start_terrain = "castle"
    # Extra pieces this rule set scores beyond terrain and crowns (Kingdom JSON field names, see
    # docs/engine.md): on a square, and on the whole kingdom. Editors offer exactly these.
    cell_pieces: tuple[str, ...] = ()
    kingdom_pieces: tuple[str, ...] = ()
    # How an editor offers a piece it has no special form for (docs/engine.md): per field,
    # {"kind": "count", "min", "max"} | {"kind": "flag"} | {"kind": "choice", "values": [...]},
    # plus "label" and "hint" for people.
    piece_options: dict[str, dict] = {}
    # bonus name -> (points, test, reason); the test takes the kingdom.
    bonuses: dict[str, tuple[int, Callable[[Kingdom], bool], str]] = {}

    # --- pieces a subclass may override ---------------------------------------------------
    def region_key(self, cell):
        return terrain_key(cell)

    def region_crowns(self, kingdom: Kingdom, cells) -> int:
        total = 0
        for rc in cells:
            cell = kingdom[rc]
            total += cell.crowns + (cell.building.crowns if cell.building else 0)
        return total

    def region_points(self, terrain: str, squares: int, crowns: int) -> int:
        return squares * crowns

    def regions(self, kingdom: Kingdom) -> list[RegionScore]:
        out = []
        for terrain, cells in find_regions(kingdom, self.region_key):
            crowns = self.region_crowns(kingdom, cells)
            out.append(RegionScore(terrain, cells, crowns, self.region_points(terrain, len(cells), crowns)))
        return out

    def extras(self, kingdom: Kingdom, regions: list[RegionScore]) -> dict:
        return {}

    def tiebreak(self, kingdom: Kingdom, regions: list[RegionScore]) -> list[tuple[str, int]]:
        return [("largest_region", max((r.squares for r in regions), default=0))]

    def warnings(self, kingdom: Kingdom) -> list[str]:
        return connection_warnings(kingdom, self.start_terrain)

    def bonus(self, name: str, kingdom: Kingdom, regions: list[RegionScore]) -> Bonus:
        """One chosen bonus, met or not (``name`` already checked); rule sets with bonuses
        worth more than a fixed amount override this."""
        points, test, reason = self.bonuses[name]
        ok = test(kingdom)
        return Bonus(name, points if ok else 0,
                     as_message(reason) if ok else Message(NOT_MET, why=as_message(reason)))

    # --- the fixed part -------------------------------------------------------------------
    def check_terrains(self, kingdom: Kingdom) -> None:
        allowed = set(self.terrains) | {self.start_terrain, "empty"}
        for r, c, cell in kingdom.squares():
            if cell.terrain not in allowed:
                raise KingdomError(
                    f"square (row {r}, col {c}): {cell.terrain} is not {a_or_an(self.name)} "
                    f"terrain; {self.name} uses {', '.join(sorted(allowed))}")

    def check_bonuses(self, bonuses) -> list[str]:
        if isinstance(bonuses, str):
            bonuses = [bonuses]
        names = []
        for bonus in bonuses:
            if bonus not in self.bonuses:
                raise RulesError(f"unknown bonus {bonus!r} for rules {self.name!r}; choose from: "
                                 f"{', '.join(self.bonuses) or '(this rule set has none)'}")
            if bonus not in names:
                names.append(bonus)
        return names

    def score(self, kingdom: Kingdom, bonuses=()) -> Score:
        names = self.check_bonuses(bonuses)
        self.check_terrains(kingdom)
        regions = self.regions(kingdom)
        extras = self.extras(kingdom, regions)
        awarded = [self.bonus(name, kingdom, regions) for name in names]
        regions.sort(key=lambda reg: (-reg.points, -reg.squares, reg.cells[0]))
        total = (sum(r.points for r in regions) + sum(b.points for b in awarded)
                 + sum(v.get("points", 0) for v in extras.values() if isinstance(v, dict)))
        return Score(total=total, rules=self.name, regions=tuple(regions), bonuses=tuple(awarded),
                     tiebreak=tuple(self.tiebreak(kingdom, regions)),
                     warnings=tuple(self.warnings(kingdom) + self.unscored_pieces(kingdom)),
                     extras=extras)

    def unscored_pieces(self, kingdom: Kingdom) -> list[str]:
        """The expansions' pieces on a kingdom scored by a rule set that ignores them."""
        if self.name in ("age-of-giants", "the-court"):
            return []
        out = []
        for what, test, rules in (("giants", lambda cell: cell.giants, "age-of-giants"),
                                  ("Court tokens or tiles", lambda cell: cell.token or cell.court,
                                   "the-court")):
            if any(test(cell) for _, _, cell in kingdom.squares()):
                out.append(Message(UNSCORED[what], rules=rules, name=self.name))
        return out


def score(kingdom: Kingdom, rules: str | None = None, bonuses=()) -> Score:
    """Score ``kingdom`` with ``rules`` (default: the kingdom's own ``rules``) and bonuses."""
    if not isinstance(kingdom, Kingdom):
        raise KingdomError("score() takes an engine.Kingdom; build one with Kingdom.from_json "
                           "or load_kingdom")
    return get_rules(rules or kingdom.rules).score(kingdom, bonuses)


# --- Kingdomino -------------------------------------------------------------------------------
# The base game's two variants, as bonuses: (points, test, reason). Queendomino keeps both;
# Age of Giants has them among its quest tiles (engine/giants.py).
MIDDLE_KINGDOM = (10, start_in_centre, N_("castle in the centre of the frame"))
HARMONY = (5, frame_filled, N_("frame completely filled, no domino discarded"))
VARIANTS = {"middle-kingdom": MIDDLE_KINGDOM, "harmony": HARMONY}


def _dominoes():
    from engine.dominoes import domino_warnings

    return domino_warnings


@register
class Kingdomino(Rules):
    name = "kingdomino"
    aliases = ("base", "mighty-duel")
    title = "Kingdomino (base game; 7x7 = Mighty Duel)"
    terrains = BASE_TERRAINS
    bonuses = dict(VARIANTS)

    def tiebreak(self, kingdom, regions):
        return [("largest_region", max((r.squares for r in regions), default=0)),
                ("crowns", sum(r.crowns for r in regions))]

    def warnings(self, kingdom):
        return _dominoes()(kingdom) + super().warnings(kingdom)
