"""Whole-table photos (``kingdomino score PHOTO --all``, ``POST /api/score`` with ``all=1``, the
web app's game page and ``kingdomino batch --all``): every kingdom of one photo scored, numbered
as ``vision.find.whole_table`` numbers them, and the game's standings.

A kingdom cut by the photo's edge keeps ``"cut": true`` and a warning: it is scored as far as
it is seen, never as complete, and the standings mark it.

A service: it prints nothing and knows nothing of the command line (``kingdomino.cli`` prints
``score --all`` and chooses its exit codes) or of the web app.
"""
from __future__ import annotations

import engine

from kingdomino import service

TOTEM_RULES = ("origins-totem",)   # rule sets whose scores depend on the other kingdoms (totems)


class PlayersError(ValueError):
    """The players' names given for a table photo cannot be used."""


def parse_players(text) -> list[str]:
    """``"Ann,Bob,Cat"`` -> the names in kingdom order (0, 1, 2); ``PlayersError`` for an empty
    name or a name given twice."""
    if text is None:
        return []
    text = str(text)
    names = [name.strip() for name in text.split(",")]
    if not any(names):
        return []
    shown = repr(text if len(text) <= 60 else text[:60] + "...")  # never echo a whole page
    if any(not name for name in names):
        raise PlayersError(f"an empty name in the players {shown}: give one name per kingdom, "
                           "separated by commas, e.g. \"Ann,Bob,Cat\"")
    if len(set(names)) != len(names):
        raise PlayersError(f"a name is given twice in the players {shown}: give each player once")
    if any(len(name) > 80 for name in names):
        raise PlayersError("a player's name is longer than 80 characters: shorten it")
    return names


def award_across(objs: list[dict], rules: str | None, bonuses=()) -> list[dict]:
    """Rule sets whose points depend on the other players (Origins Totem: each totem goes to the
    player with a strict majority of its resource): the kingdoms rescored together."""
    if (rules or "kingdomino") not in TOTEM_RULES or len(objs) < 2:
        return objs
    kingdoms = [engine.Kingdom.from_json({k: o[k] for k in ("rules", "size", "cells") if k in o})
                for o in objs]
    out = []
    for obj, kingdom in zip(objs, engine.award_totems(kingdoms)):
        obj = dict(obj)
        obj["totems"] = list(kingdom.totems)
        obj["score"] = engine.score(kingdom, rules=rules, bonuses=tuple(bonuses)).to_json()
        out.append(obj)
    return out


def score_table(path_or_bytes, rules: str | None = None, bonuses=(), size: int | None = None
                ) -> list[dict]:
    """Every kingdom of a table photo (path or bytes), scored: the contract's object each
    (without ``source``) plus ``"kingdom"`` (its number) and ``"cut"``; in numbering order.
    The photo is decoded and read by ``vision.find.whole_table.read_table_photo`` (as a
    kingdom's photo is decoded for reading), the corners in the photo's pixels. Raises
    ``vision.PhotoError`` when the photo holds no kingdom."""
    from vision.find.whole_table import read_table_photo

    objs = []
    for found in read_table_photo(service.reader(), path_or_bytes, size=size):
        obj = service.score_reading(found.reading, rules=rules, bonuses=bonuses)
        obj["kingdom"] = found.kingdom
        obj["cut"] = bool(found.cut)
        objs.append(obj)
    return award_across(objs, rules, bonuses)


def player_name(players: list[str], k: int) -> str:
    return players[k] if k < len(players) else f"kingdom {k + 1}"  # people count from 1


def standings(objs: list[dict], players: list[str]) -> list[dict]:
    """The game's standings (``engine.rank``: total, then the rule set's tie-breaks), each row
    with ``kingdom`` (0-based, as the JSON's) and ``cut`` added. Kingdoms beyond the names
    given are named "kingdom N", counted from 1 as people count."""
    by_name = {player_name(players, o["kingdom"]): o for o in objs}
    rows = engine.rank([(name, o["score"]) for name, o in by_name.items()])
    for row in rows:
        o = by_name[row["player"]]
        row["kingdom"] = o["kingdom"]
        row["cut"] = bool(o.get("cut"))
    return rows


def players_warning(objs: list[dict], players: list[str]) -> str | None:
    """What to tell a person when the names given do not match the kingdoms found."""
    if players and len(players) != len(objs):
        return (f"{len(players)} players named but {len(objs)} kingdoms found: names go to "
                "kingdoms in numbering order (kingdom 1 is the leftmost); check the numbers on the "
                "photo")
    return None
