"""The immutable kingdom: a square grid of squares (terrain, crowns, extra pieces) and its readers.

Two ways in: Kingdom JSON (``Kingdom.from_json``) and the short text grid (``Kingdom.from_text``);
``load_kingdom`` takes either. Every error is a ``KingdomError`` naming the square (row, col),
0-based with row 0 at the top, and saying what to fix. See ``docs/engine.md`` for both formats.
"""
from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass, replace
from typing import Iterator

from engine.errors import KingdomError
from engine.messages import SQUARE, Message

SIZES = (5, 7)

# The base game's six terrains (Kingdomino; Queendomino and both expansions keep them).
BASE_TERRAINS = ("field", "forest", "lake", "grassland", "swamp", "mine")
# Every terrain any rule set knows; each rule set checks that a kingdom uses only its own.
TERRAINS = (
    *BASE_TERRAINS,                                              # Kingdomino
    "town",                                                      # Queendomino
    "desert", "quarry", "volcano",                               # Origins (+ grassland, lake, forest)
    "village", "city", "gold", "silver", "copper", "gems", "wall",  # Domain
    "castle", "hut", "empty",
)
START_TERRAINS = ("castle", "hut")
# Squares that never belong to a region.
NOT_LAND = ("castle", "hut", "empty")

# Squares that never carry printed crowns (the text grid writes them without a number).
NO_PRINTED_CROWNS = ("castle", "hut", "empty", "town", "village", "city", "gold", "silver",
                     "copper", "gems", "wall")

# One letter per terrain for the text grid; terrains without a letter are written by name.
LETTERS = {
    "F": "field", "W": "forest", "L": "lake", "G": "grassland", "S": "swamp", "M": "mine",
    "T": "town", "D": "desert", "Q": "quarry", "V": "volcano", "C": "castle", "H": "hut",
    ".": "empty",
}
LETTER_OF = {terrain: letter for letter, terrain in LETTERS.items()}

RESOURCES = ("mammoth", "fish", "mushroom", "flint")
CAVEMEN = ("hunter", "fishing-child", "gatherer", "sculptor", "painter", "fire-lady", "shaman")
CAVEMAN_ALIASES = {"fisher": "fishing-child", "fishing_child": "fishing-child",
                   "stone-carver": "sculptor", "stone_carver": "sculptor", "carver": "sculptor",
                   "fire_lady": "fire-lady", "firelady": "fire-lady"}
WARRIORS = {"small": 1, "amazon": 2, "oafish": 3}
BUILDING_PER = ("region", "tower", "knight")
# The Court (expansion): the twelve courtiers (one tile of each) and the building tiles.
COURTIERS = ("farmer", "lumberjack", "fisherman", "shepherdess", "banker", "queen", "king",
             "captain", "axe-warrior", "sword-warrior", "light-archer", "heavy-archer")
COURT_TILES = (*COURTIERS, "building")
COURT_ALIASES = {"axe_warrior": "axe-warrior", "sword_warrior": "sword-warrior",
                 "light_archery": "light-archer", "heavy_archery": "heavy-archer",
                 "light-archery": "light-archer", "heavy-archery": "heavy-archer"}
# The Court: which token a crownless square of these terrains gets (swamp and mine get none).
TOKEN_OF = {"field": "wheat", "forest": "wood", "lake": "fish", "grassland": "sheep"}
# Top-level keys a photo reading or a scored result may carry; accepted and ignored.
IGNORED_KEYS = ("review", "corners", "homography", "source", "score", "warnings", "error")


def _where(row: int, col: int) -> str:
    return f"square (row {row}, col {col})"


def a_or_an(word: str) -> str:
    """``word`` after its English article: "an empty", "an origins-tribe", "a castle"."""
    return f"{'an' if str(word)[:1].lower() in 'aeiou' else 'a'} {word}"


def square_name(row: int, col: int) -> str:
    """A square as a warning names it for a person: counted from 1, row 1 at the top (the
    indexes of Kingdom JSON, and the errors about it, stay 0-based)."""
    return Message(SQUARE, row=row + 1, col=col + 1)


def square_code(row: int, col: int) -> str:
    """A square in short, counted from 1 ("r1c1"), as breakdowns and quest reasons write it."""
    return f"r{row + 1}c{col + 1}"


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _count(value, what: str, where: str, low: int = 0, high: int | None = None) -> int:
    if not _is_int(value):
        raise KingdomError(f"{where}: {what} must be a whole number, not {value!r}")
    if value < low or (high is not None and value > high):
        span = f"{low}..{high}" if high is not None else f">= {low}"
        raise KingdomError(f"{where}: {what} must be {span}, not {value}")
    return value


def _named(value, what: str, aliases: dict, names, where: str):
    """A piece given by name (a caveman, a court tile): its own name, an alias turned into it,
    or None when absent; anything else is an error that lists the names."""
    if value is None:
        return None
    name = aliases.get(value, value) if isinstance(value, str) else value
    if name not in names:
        raise KingdomError(f"{where}: unknown {what} {value!r}; use one of {', '.join(names)}")
    return name


@dataclass(frozen=True)
class Building:
    """A Queendomino building on a town square.

    ``crowns`` printed on it (count for its town region); end-game value ``points``: fixed when
    ``per`` is None, else ``points`` per separate region of ``terrain`` (``per="region"``), per
    tower in the kingdom (``per="tower"``) or per knight the player has (``per="knight"``);
    ``towers``: tower symbols on it.
    """
    name: str = ""
    crowns: int = 0
    points: int = 0
    per: str | None = None
    terrain: str | None = None
    towers: int = 0

    @classmethod
    def from_json(cls, obj, where: str) -> "Building":
        where = f"{where}, building"
        if isinstance(obj, str):
            obj = {"name": obj}
        if not isinstance(obj, dict):
            raise KingdomError(f"{where}: must be an object like {{\"name\": \"Statue\", \"points\": 5}}")
        name = obj.get("name", "")
        if not isinstance(name, str):
            raise KingdomError(f"{where}: name must be text, not {name!r}")
        per = obj.get("per")
        if per is not None and per not in BUILDING_PER:
            raise KingdomError(f"{where}: per must be one of {', '.join(BUILDING_PER)} (or absent "
                               f"for fixed points), not {per!r}")
        terrain = obj.get("terrain")
        if per == "region":
            if terrain not in TERRAINS or terrain in NOT_LAND:
                raise KingdomError(f"{where}: per region needs \"terrain\" (a land terrain such as "
                                   f"forest or town), not {terrain!r}")
        elif terrain is not None:
            raise KingdomError(f"{where}: \"terrain\" only goes with per: region")
        return cls(
            name=name,
            crowns=_count(obj.get("crowns", 0), "crowns", where),
            points=_count(obj.get("points", 0), "points", where),
            per=per,
            terrain=terrain,
            towers=_count(obj.get("towers", 0), "towers", where),
        )

    def to_json(self) -> dict:
        out: dict = {}
        if self.name:
            out["name"] = self.name
        for key in ("crowns", "points", "towers"):
            if getattr(self, key):
                out[key] = getattr(self, key)
        if self.per:
            out["per"] = self.per
        if self.terrain:
            out["terrain"] = self.terrain
        return out


@dataclass(frozen=True)
class Cell:
    """One square: terrain, printed crowns (fire symbols in Origins, craters on a volcano), pieces."""
    terrain: str
    crowns: int = 0
    building: Building | None = None    # Queendomino, town squares only
    fire_tokens: int = 0                # Origins: fires on the token lying here (0 = none, 1..3)
    resource: str | None = None         # Origins: mammoth, fish, mushroom, flint
    caveman: str | None = None          # Origins Tribe: one of CAVEMEN
    warrior: int = 0                    # Origins Tribe: warrior power 1..3 (0 = none)
    giants: int = 0                     # Age of Giants: giants standing here, each hides a crown
    token: bool = False                 # The Court: a resource token (JSON "resource": true)
    court: str | None = None            # The Court: a courtier (COURTIERS) or "building"
    building_crowns: int = 0            # The Court: crowns on the building tile (1 or 2)
    confidence: float | None = None     # from a photo reading; kept, never scored

    @property
    def is_land(self) -> bool:
        return self.terrain not in NOT_LAND

    @property
    def visible_crowns(self) -> int:
        """Crowns that score: printed + a Court building's, less those giants hide."""
        return max(0, self.crowns + self.building_crowns - self.giants)

    @classmethod
    def from_json(cls, obj, row: int, col: int) -> "Cell":
        where = _where(row, col)
        if isinstance(obj, str):
            return _parse_token(obj, row, col)
        if not isinstance(obj, dict):
            raise KingdomError(f"{where}: must be an object like {{\"terrain\": \"field\", \"crowns\": 1}}, "
                               f"not {type(obj).__name__}")
        terrain = obj.get("terrain")
        if not isinstance(terrain, str) or terrain.lower() not in TERRAINS:
            raise KingdomError(f"{where}: unknown terrain {terrain!r}; use one of {', '.join(TERRAINS)}")
        terrain = terrain.lower()
        crowns = _count(obj.get("crowns", 0), "crowns", where)
        building = obj.get("building")
        building = Building.from_json(building, where) if building is not None else None
        fire = _count(obj.get("fire_tokens", 0), "fire_tokens", where, 0, 3)
        resource = obj.get("resource")
        token = resource is True
        if isinstance(resource, bool):
            resource = None
        if resource is not None and resource not in RESOURCES:
            raise KingdomError(f"{where}: unknown resource {resource!r}; use one of {', '.join(RESOURCES)}")
        caveman = _named(obj.get("caveman"), "caveman", CAVEMAN_ALIASES, CAVEMEN, where)
        warrior = obj.get("warrior", 0)
        if isinstance(warrior, str):
            if warrior not in WARRIORS:
                raise KingdomError(f"{where}: unknown warrior {warrior!r}; use one of "
                                   f"{', '.join(WARRIORS)} or a power 1..3")
            warrior = WARRIORS[warrior]
        warrior = _count(warrior if warrior is not None else 0, "warrior power", where, 0, 3)
        confidence = obj.get("confidence")
        if confidence is not None and (isinstance(confidence, bool)
                                       or not isinstance(confidence, (int, float))):
            confidence = None
        giants = obj.get("giants", 0)
        if giants == 0 and "giant" in obj:   # "giant": true / a number, as some files write it
            giants = int(obj["giant"]) if isinstance(obj["giant"], bool) else obj["giant"]
        giants = _count(giants if giants is not None else 0, "giants", where, 0, 3)
        court = _named(obj.get("court"), "court tile", COURT_ALIASES, COURT_TILES, where)
        building_crowns = obj.get("building_crowns", 0) or 0
        if not _is_int(building_crowns) or building_crowns not in (0, 1, 2):
            raise KingdomError(f"{where}: building_crowns must be 1 or 2 (a building tile shows 1 "
                               f"or 2 crowns), not {building_crowns!r}")
        cell = cls(terrain, crowns, building, fire, resource, caveman, warrior, giants, token,
                   court, building_crowns, confidence)
        cell.check(row, col)
        return cell

    def check(self, row: int, col: int) -> None:
        where = _where(row, col)
        if self.terrain in NOT_LAND and self.crowns:
            raise KingdomError(f"{where}: {a_or_an(self.terrain)} square has no crowns, "
                               f"not {self.crowns}")
        if self.terrain == "town" and self.crowns:
            raise KingdomError(f"{where}: town squares have no printed crowns; put the crowns on "
                               f"the building (\"building\": {{\"crowns\": {self.crowns}}})")
        if self.building is not None and self.terrain != "town":
            raise KingdomError(f"{where}: a building stands on a town square, not on {self.terrain}")
        pieces = [n for n, v in (("fire token", self.fire_tokens), ("resource", self.resource),
                                 ("caveman", self.caveman), ("warrior", self.warrior)) if v]
        if pieces and self.terrain in ("empty",):
            raise KingdomError(f"{where}: an empty square cannot hold a {pieces[0]}")
        if self.caveman and self.warrior:
            raise KingdomError(f"{where}: one tile per square: a caveman or a warrior, not both")
        self._check_expansions(where)

    def _check_expansions(self, where: str) -> None:
        """Giants (Age of Giants) and tokens, courtiers, buildings (The Court) where they can lie."""
        crowns = self.crowns + self.building_crowns   # printed and a building's
        if self.giants and self.giants > crowns:
            if not crowns:
                raise KingdomError(f"{where}: a giant stands on a crown; this {self.terrain} square "
                                   f"has none (remove the giant or give the square its crowns)")
            raise KingdomError(f"{where}: {self.giants} giants but only {crowns} crown(s); each "
                               f"giant hides one crown, so at most {crowns} giants")
        if self.token:
            if self.terrain not in TOKEN_OF:
                raise KingdomError(f"{where}: a resource token lies only on field, forest, lake "
                                   f"or grassland, not on {self.terrain}")
            if self.crowns:
                raise KingdomError(f"{where}: a resource token lies only on a square without a "
                                   f"crown; this one has {self.crowns} (remove the token)")
            if self.court:
                raise KingdomError(f"{where}: a court tile goes on a square without a resource "
                                   f"token (the token is spent first): remove the token or the "
                                   f"{self.court}")
        if self.court:
            if not self.is_land:
                raise KingdomError(f"{where}: {a_or_an(self.court)} tile goes on a terrain square, "
                                   f"not on {a_or_an(self.terrain)}")
            if self.crowns:
                raise KingdomError(f"{where}: a court tile goes on a square without a crown; this "
                                   f"one has {self.crowns} (move the {self.court})")
            if self.court == "building":
                if self.terrain == "mine":
                    raise KingdomError(f"{where}: no building stands on a mine (buildings exist "
                                       f"for field, forest, lake, grassland and swamp)")
                if not self.building_crowns:
                    raise KingdomError(f"{where}: a building shows 1 or 2 crowns; give "
                                       f"\"building_crowns\": 1 or 2")
        if self.building_crowns and self.court != "building":
            raise KingdomError(f"{where}: \"building_crowns\" goes with \"court\": \"building\" "
                               f"(a building tile on this square)")

    def to_json(self) -> dict:
        out: dict = {"terrain": self.terrain, "crowns": self.crowns}
        if self.building is not None:
            out["building"] = self.building.to_json()
        if self.fire_tokens:
            out["fire_tokens"] = self.fire_tokens
        if self.resource:
            out["resource"] = self.resource
        if self.caveman:
            out["caveman"] = self.caveman
        if self.warrior:
            out["warrior"] = self.warrior
        if self.giants:
            out["giants"] = self.giants
        if self.token:
            out["resource"] = True
        if self.court:
            out["court"] = self.court
        if self.building_crowns:
            out["building_crowns"] = self.building_crowns
        if self.confidence is not None:
            out["confidence"] = self.confidence
        return out

    def to_token(self) -> str:
        token = LETTER_OF.get(self.terrain, self.terrain)
        marks = "g" * self.giants + ("r" if self.token else "")
        marks += f"b{self.building_crowns}" if self.building_crowns else ""
        if self.crowns or self.terrain not in NO_PRINTED_CROWNS or marks:
            token += str(self.crowns) + marks   # the expansions' marks go right after the crowns
        if self.fire_tokens:
            token += f"+{self.fire_tokens}"
        if self.resource:
            token += f"@{self.resource}"
        if self.caveman:
            token += f"!{self.caveman}"
        if self.warrior:
            token += f"^{self.warrior}"
        if self.court and self.court != "building":
            token += f"@{self.court}"
        return token


# Marks right after the crowns: g per giant, r a resource token, bN a building of N crowns.
_TOKEN = re.compile(r"^(?P<t>[A-Za-z][A-Za-z_-]*?|\.)(?:(?P<c>\d+)(?P<m>(?:g|r|b\d)*))?"
                    r"(?P<x>(?:[+@!^][^+@!^]+)*)$")
_SUFFIX = re.compile(r"([+@!^])([^+@!^]+)")


def _parse_token(token: str, row: int, col: int) -> Cell:
    where = _where(row, col)
    if token in ("CC", "..", "HH"):   # the doubled castle / empty / hut of two-letter grids
        token = token[0]
    m = _TOKEN.match(token)
    if not m:
        raise KingdomError(f"{where}: cannot read {token!r}; write a terrain letter and crowns, "
                           f"like F1, W0, M2, C (castle) or . (empty)")
    letters = m.group("t")
    terrain = LETTERS.get(letters.upper()) if len(letters) == 1 else letters.lower()
    if terrain not in TERRAINS:
        known = " ".join(f"{k}={v}" for k, v in LETTERS.items())
        raise KingdomError(f"{where}: unknown terrain {letters!r} in {token!r}; letters: {known} "
                           f"(or a full terrain name)")
    obj: dict = {"terrain": terrain, "crowns": int(m.group("c") or 0)}
    marks = m.group("m") or ""
    if marks:
        if marks.count("g"):
            obj["giants"] = marks.count("g")
        if "r" in marks:
            if marks.count("r") > 1:
                raise KingdomError(f"{where}: one resource token per square, not {marks.count('r')} "
                                   f"in {token!r}")
            obj["resource"] = True
        built = re.findall(r"b(\d)", marks)
        if built:
            if len(built) > 1:
                raise KingdomError(f"{where}: one building per square in {token!r}")
            obj["court"], obj["building_crowns"] = "building", int(built[0])
    for mark, value in _SUFFIX.findall(m.group("x")):
        if mark == "+":
            if not value.isdigit():
                raise KingdomError(f"{where}: fire token {value!r} in {token!r} must be 1, 2 or 3")
            obj["fire_tokens"] = int(value)
        elif mark == "@":
            name = COURT_ALIASES.get(value.lower(), value.lower())
            if name not in COURTIERS and name not in RESOURCES:
                raise KingdomError(f"{where}: unknown @{value} in {token!r}; @ names an Origins "
                                   f"resource ({', '.join(RESOURCES)}) or a courtier of The Court "
                                   f"({', '.join(COURTIERS)})")
            if name in COURTIERS:   # The Court: @farmer, @king, ...
                if "court" in obj:
                    raise KingdomError(f"{where}: one court tile per square in {token!r}")
                obj["court"] = name
            elif obj.get("resource") is True:
                raise KingdomError(f"{where}: {token!r} has a Court token (r) and an Origins "
                                   f"resource (@{value}); a square holds one or the other")
            else:
                obj["resource"] = value.lower()
        elif mark == "!":
            obj["caveman"] = value.lower()
        else:
            obj["warrior"] = int(value) if value.isdigit() else value.lower()
    return Cell.from_json(obj, row, col)


@dataclass(frozen=True)
class Kingdom:
    """A finished kingdom. Immutable: ``replace``, ``rotated`` and ``mirrored`` give new ones.

    Per-kingdom extras: ``coins``, ``knights``, ``queen`` (Queendomino: the player hosts the
    queen), ``totems`` (Origins Totem: resource totems the player holds), ``frame`` (the frame
    the game used when the grid is larger: a 5x5 game read on a 7x7 grid).
    """
    size: int
    cells: tuple[tuple[Cell, ...], ...]
    rules: str = "kingdomino"
    coins: int = 0
    knights: int = 0
    queen: bool = False
    totems: tuple[str, ...] = ()
    frame: int | None = None

    def __post_init__(self):
        if self.size not in SIZES:
            raise KingdomError(f"a kingdom is 5x5 or 7x7, not {self.size}x{self.size}")
        if len(self.cells) != self.size or any(len(row) != self.size for row in self.cells):
            raise KingdomError(f"cells must be {self.size} rows of {self.size} squares")
        starts = [(r, c) for r, c, cell in self.squares() if cell.terrain in START_TERRAINS]
        if len(starts) > 1:
            listed = ", ".join(f"({r}, {c})" for r, c in starts)
            raise KingdomError(f"{_where(*starts[1])}: a second castle/hut; a kingdom has one start "
                               f"square, found {len(starts)} at {listed}")
        if self.frame is not None and (self.frame not in SIZES or self.frame > self.size):
            raise KingdomError(f"frame must be 5 or 7 and at most the grid size {self.size}, "
                               f"not {self.frame!r}")

    # --- access -------------------------------------------------------------------------
    def __getitem__(self, rc: tuple[int, int]) -> Cell:
        return self.cells[rc[0]][rc[1]]

    def squares(self) -> Iterator[tuple[int, int, Cell]]:
        for r, row in enumerate(self.cells):
            for c, cell in enumerate(row):
                yield r, c, cell

    def around(self, r: int, c: int) -> list[tuple[int, int]]:
        """The up to 8 squares around (r, c) inside the grid (king's moves)."""
        return [(r + dr, c + dc) for dr in (-1, 0, 1) for dc in (-1, 0, 1)
                if (dr or dc) and 0 <= r + dr < self.size and 0 <= c + dc < self.size]

    @property
    def start(self) -> tuple[int, int] | None:
        """(row, col) of the castle or hut, or None."""
        for r, c, cell in self.squares():
            if cell.terrain in START_TERRAINS:
                return r, c
        return None

    def replace(self, **changes) -> "Kingdom":
        return replace(self, **changes)

    def rotated(self) -> "Kingdom":
        """The same kingdom turned a quarter clockwise."""
        n = self.size
        cells = tuple(tuple(self.cells[n - 1 - c][r] for c in range(n)) for r in range(n))
        return replace(self, cells=cells)

    def mirrored(self) -> "Kingdom":
        """The same kingdom seen in a mirror (left and right swapped)."""
        return replace(self, cells=tuple(tuple(reversed(row)) for row in self.cells))

    # --- JSON ---------------------------------------------------------------------------
    @classmethod
    def from_json(cls, obj) -> "Kingdom":
        if not isinstance(obj, dict):
            raise KingdomError("Kingdom JSON must be an object with \"size\" and \"cells\"")
        from engine.rules import canonical_rules

        rules = canonical_rules(obj.get("rules") or "kingdomino")
        cells = obj.get("cells")
        if not isinstance(cells, list) or not cells:
            raise KingdomError("\"cells\" must be a list of rows (5 or 7 rows of squares)")
        size = obj.get("size", len(cells))
        if not _is_int(size) or size not in SIZES:
            raise KingdomError(f"\"size\" must be 5 or 7, not {size!r}")
        if len(cells) != size:
            raise KingdomError(f"\"size\" is {size} but \"cells\" has {len(cells)} rows")
        rows = []
        for r, row in enumerate(cells):
            if not isinstance(row, list):
                raise KingdomError(f"row {r}: must be a list of {size} squares")
            if len(row) != size:
                raise KingdomError(f"row {r}: has {len(row)} squares, a {size}x{size} kingdom "
                                   f"needs {size}")
            rows.append(tuple(Cell.from_json(cell, r, c) for c, cell in enumerate(row)))
        return cls(size=size, cells=tuple(rows), rules=rules, **_kingdom_extras(obj))

    def to_json(self) -> dict:
        out: dict = {"rules": self.rules, "size": self.size,
                     "cells": [[cell.to_json() for cell in row] for row in self.cells]}
        if self.coins:
            out["coins"] = self.coins
        if self.knights:
            out["knights"] = self.knights
        if self.queen:
            out["queen"] = True
        if self.totems:
            out["totems"] = list(self.totems)
        if self.frame is not None:
            out["frame"] = self.frame
        return out

    # --- text grid ----------------------------------------------------------------------
    @classmethod
    def from_text(cls, text: str) -> "Kingdom":
        header: dict = {}
        grid: list[list[str]] = []
        buildings: list[tuple[int, list[str]]] = []
        for lineno, raw in enumerate(text.splitlines(), 1):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            key = re.match(r"^([A-Za-z_]+)\s*:\s*(.*)$", line)
            if key:
                header[key.group(1).lower()] = (lineno, key.group(2).strip())
            elif line.lower().startswith("building "):
                try:
                    buildings.append((lineno, shlex.split(line)[1:]))
                except ValueError as exc:
                    raise KingdomError(f"line {lineno}: cannot read the building line: {exc}") from None
            else:
                grid.append(line.split())
        if not grid:
            raise KingdomError("no squares found: write 5 or 7 lines of 5 or 7 squares like "
                               "'F1 W0 L0 C M2'")
        if len(grid) not in SIZES:
            rows = f"{len(grid)} line{'s' if len(grid) != 1 else ''} of squares"
            raise KingdomError(f"the grid has {rows}; a kingdom is 5x5 or 7x7: Kingdom JSON, or "
                               "a text grid of 5 or 7 lines of 5 or 7 squares such as "
                               "'F1 W0 L0 C M2' (a terrain letter, then its crowns)")
        size = len(grid)
        for r, row in enumerate(grid):
            if len(row) != size:
                raise KingdomError(f"row {r}: has {len(row)} squares, a {size}x{size} kingdom needs {size}")
        obj: dict = {"size": size, "cells": [[_parse_token(t, r, c).to_json() for c, t in enumerate(row)]
                                              for r, row in enumerate(grid)]}
        for key, (lineno, value) in header.items():
            obj[key] = _header_value(key, value, lineno)
        for lineno, words in buildings:
            r, c, building = _building_words(words, lineno, size)
            cell = obj["cells"][r][c]
            if "building" in cell:
                raise KingdomError(f"line {lineno}: {_where(r, c)} already has a building")
            cell["building"] = building
        return cls.from_json(obj)

    def to_text(self) -> str:
        lines = []
        if self.rules != "kingdomino":
            lines.append(f"rules: {self.rules}")
        for key in ("coins", "knights", "frame"):
            if getattr(self, key):
                lines.append(f"{key}: {getattr(self, key)}")
        if self.queen:
            lines.append("queen: yes")
        if self.totems:
            lines.append(f"totems: {', '.join(self.totems)}")
        tokens = [[cell.to_token() for cell in row] for row in self.cells]
        width = max(len(t) for row in tokens for t in row)
        lines.extend(" ".join(t.ljust(width) for t in row).rstrip() for row in tokens)
        for r, c, cell in self.squares():
            if cell.building is not None:
                words = [f"building {r} {c}"]
                b = cell.building
                if b.name:
                    words.append("name=" + shlex.quote(b.name))
                for key in ("crowns", "points", "towers"):
                    if getattr(b, key):
                        words.append(f"{key}={getattr(b, key)}")
                if b.per:
                    words.append(f"per={b.per}" + (f":{b.terrain}" if b.terrain else ""))
                lines.append(" ".join(words))
        return "\n".join(lines) + "\n"


def _kingdom_extras(obj: dict) -> dict:
    out: dict = {}
    for key in ("coins", "knights"):
        if obj.get(key) is not None:
            out[key] = _count(obj[key], key, f"\"{key}\"")
    queen = obj.get("queen", False)
    if queen is None:
        queen = False
    if not isinstance(queen, bool):
        raise KingdomError(f"\"queen\" must be true or false (does this player host the queen?), "
                           f"not {queen!r}")
    out["queen"] = queen
    totems = obj.get("totems") or []
    if not isinstance(totems, list) or any(t not in RESOURCES for t in totems) \
            or len(set(totems)) != len(totems):
        raise KingdomError(f"\"totems\" must be a list of distinct resources ({', '.join(RESOURCES)}), "
                           f"not {totems!r}")
    out["totems"] = tuple(totems)
    if obj.get("frame") is not None:
        if not _is_int(obj["frame"]):
            raise KingdomError(f"\"frame\" must be 5 or 7, not {obj['frame']!r}")
        out["frame"] = obj["frame"]
    return out


def _header_value(key: str, value: str, lineno: int):
    if key == "rules":
        return value
    if key in ("coins", "knights", "frame", "size"):
        if not value.isdigit():
            raise KingdomError(f"line {lineno}: {key} must be a whole number, not {value!r}")
        return int(value)
    if key == "queen":
        if value.lower() not in ("yes", "no", "true", "false"):
            raise KingdomError(f"line {lineno}: queen must be yes or no, not {value!r}")
        return value.lower() in ("yes", "true")
    if key == "totems":
        return [t.strip().lower() for t in value.split(",") if t.strip()]
    raise KingdomError(f"line {lineno}: unknown setting {key!r}; known: rules, coins, knights, "
                       f"queen, totems, frame")


def _building_words(words: list[str], lineno: int, size: int) -> tuple[int, int, dict]:
    where = f"line {lineno}"
    if len(words) < 2 or not words[0].isdigit() or not words[1].isdigit():
        raise KingdomError(f"{where}: write 'building ROW COL name=... points=N per=region:forest'")
    r, c = int(words[0]), int(words[1])
    if r >= size or c >= size:
        raise KingdomError(f"{where}: square ({r}, {c}) is outside the {size}x{size} kingdom")
    building: dict = {}
    for word in words[2:]:
        key, sep, value = word.partition("=")
        if not sep:
            building["name"] = (building.get("name", "") + " " + word).strip()
        elif key == "name":
            building["name"] = value
        elif key in ("crowns", "points", "towers"):
            if not value.isdigit():
                raise KingdomError(f"{where}: {key} must be a whole number, not {value!r}")
            building[key] = int(value)
        elif key == "per":
            per, _, terrain = value.partition(":")
            building["per"] = per
            if terrain:
                building["terrain"] = terrain
        else:
            raise KingdomError(f"{where}: unknown building setting {key!r}; known: name, crowns, "
                               f"points, per, towers")
    return r, c, building


def load_kingdom(text: str) -> Kingdom:
    """A kingdom from Kingdom JSON text or the text grid format (decided by the first character)."""
    if not isinstance(text, str):
        raise KingdomError("give the kingdom as text (Kingdom JSON or the text grid format)")
    stripped = text.lstrip("\ufeff").strip()
    if not stripped:
        raise KingdomError("the kingdom is empty: give Kingdom JSON or the text grid format")
    if "\x00" in stripped:
        raise KingdomError("not a text file: give Kingdom JSON or the text grid format")
    if stripped[0] in "{[":
        try:
            obj = json.loads(stripped)
        except json.JSONDecodeError as exc:
            raise KingdomError(f"malformed JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
        except RecursionError:
            raise KingdomError("malformed JSON: nested too deeply to be a kingdom") from None
        return Kingdom.from_json(obj)
    return Kingdom.from_text(stripped)
