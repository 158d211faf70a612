"""Standings: order players by total, then the rule set's tie-break keys, then a shared place."""
from __future__ import annotations

from engine.errors import RulesError
from engine.rules import Score


def _as_json(score) -> dict:
    if isinstance(score, Score):
        return score.to_json()
    if isinstance(score, dict) and "total" in score:
        return score
    raise RulesError(f"a player's score must be an engine.Score or its JSON, not {type(score).__name__}")


def rank(players) -> list[dict]:
    """``players``: (name, Score or score JSON) pairs. Returns the standings, best first:
    ``{"place", "player", "total", "tiebreak", "shared"}``; players equal on the total and every
    tie-break key share a place (the next place is skipped, as in 1, 1, 3).
    """
    rows = []
    rules = set()
    for entry in players:
        try:
            name, score = entry
        except (TypeError, ValueError):
            raise RulesError("rank() takes (player name, score) pairs") from None
        obj = _as_json(score)
        rules.add(obj.get("rules", "kingdomino"))
        rows.append((str(name), obj))
    if len(rules) > 1:
        raise RulesError(f"cannot rank scores of different rule sets together: {', '.join(sorted(rules))}")

    def key(row):
        obj = row[1]
        return (obj["total"], *obj.get("tiebreak", {}).values())

    rows.sort(key=key, reverse=True)
    keys = [key(row) for row in rows]
    out = []
    for i, (name, obj) in enumerate(rows):
        place = keys.index(keys[i]) + 1
        out.append({"place": place, "player": name, "total": obj["total"],
                    "tiebreak": dict(obj.get("tiebreak", {})),
                    "shared": keys.count(keys[i]) > 1})
    return out


def dynasty(games) -> dict:
    """Dynasty: one player's three games added up. ``games``: three Scores (or their JSON).

    Returns score-like JSON that ``rank`` accepts: ``{"total", "rules", "games", "tiebreak"}``;
    the rules name no tie-break for Dynasty, so equal totals share the place.
    """
    games = [_as_json(g) for g in games]
    if len(games) != 3:
        raise RulesError(f"a Dynasty is three games, not {len(games)}")
    rules = {g.get("rules", "kingdomino") for g in games}
    if len(rules) > 1:
        raise RulesError(f"a Dynasty's games use one rule set, not {', '.join(sorted(rules))}")
    return {"total": sum(g["total"] for g in games), "rules": rules.pop(),
            "games": [g["total"] for g in games], "tiebreak": {}}
