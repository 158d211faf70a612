"""Readable text for a scored result (the CLI's table without ``--json``).

Works from the contract's JSON only (``obj["score"]`` as ``engine.Score.to_json`` gives it), so
it can print any result: from a photo, a grid, or a stored one.
"""
from __future__ import annotations

_WIDTH = 56


def _row(label: str, points) -> str:
    return f"{label:<{_WIDTH - 8}}{points:>8}"


def _grid(obj: dict) -> list[str]:
    """The kingdom as the text grid (one token per square), when it is there and readable."""
    try:
        import engine

        kingdom = engine.Kingdom.from_json({k: obj[k] for k in ("rules", "size", "cells") if k in obj})
    except (ValueError, KeyError, TypeError):
        return []
    return [line for line in kingdom.to_text().splitlines()
            if line and not line.startswith(("rules:", "building ", "coins:", "knights:", "queen:",
                                              "totems:", "frame:"))]


def _extras(score: dict) -> list[str]:
    lines = []
    coins = score.get("coins")
    if isinstance(coins, dict):
        lines.append(_row(f"coins ({coins.get('coins', 0)} // 3)", coins.get("points", 0)))
    buildings = score.get("buildings")
    if isinstance(buildings, dict):
        for b in buildings.get("list", []):
            cell = b.get("cell", ["?", "?"])
            label = f"building {b.get('name', '?')} r{cell[0]}c{cell[1]} ({b.get('reason', '')})"
            lines.append(_row(label[:_WIDTH - 9], b.get("points", 0)))
    queen = score.get("queen")
    if isinstance(queen, dict) and queen.get("hosted"):
        lines.append(f"  (queen on the {queen.get('terrain')} of {queen.get('squares')} squares: "
                     f"+{queen.get('adds')} included above)")
    resources = score.get("resources")
    if isinstance(resources, dict):
        count = ", ".join(f"{n} {k}" for k, n in resources.get("count", {}).items() if n)
        lines.append(_row(f"resources ({count or 'none'})"[:_WIDTH - 9], resources.get("points", 0)))
    totems = score.get("totems")
    if isinstance(totems, dict):
        lines.append(_row(f"totems ({', '.join(totems.get('held', [])) or 'none'})", totems.get("points", 0)))
    cavemen = score.get("cavemen")
    if isinstance(cavemen, dict):
        for m in cavemen.get("list", []):
            cell = m.get("cell", ["?", "?"])
            lines.append(_row(f"{m.get('caveman')} r{cell[0]}c{cell[1]} ({m.get('reason', '')})"[:_WIDTH - 9],
                              m.get("points", 0)))
    warriors = score.get("warriors")
    if isinstance(warriors, dict):
        for g in warriors.get("groups", []):
            lines.append(_row(f"warriors {g.get('size')} x power {g.get('power')}", g.get("points", 0)))
    income = score.get("income")
    if isinstance(income, dict):
        kinds = ", ".join(income.get("mine_kinds", [])) or "no mines"
        lines.append(f"income: {income.get('coins', 0)} coin(s) a turn ({kinds})")
    return lines


def format_result(obj: dict) -> str:
    """A table of regions, extras, bonuses and the total, for one scored kingdom."""
    lines = []
    score = obj.get("score", {}) or {}
    title = str(obj["source"]) if obj.get("source") else "kingdom"
    rules = score.get("rules") or obj.get("rules")
    lines.append(f"{title}" + (f"  [{rules}, {obj.get('size')}x{obj.get('size')}]"
                                if rules and obj.get("size") else ""))
    lines.extend("  " + line for line in _grid(obj))
    lines.append(f"{'region':<20}{'squares':>8}{'crowns':>8}{'points':>8}")
    for region in score.get("regions", []):
        terrain = region.get("terrain", "?") + (" +queen" if region.get("queen") else "")
        lines.append(f"{terrain:<20}{region.get('squares', 0):>8}"
                     f"{region.get('crowns', 0):>8}{region.get('points', 0):>8}")
    lines.extend(_extras(score))
    for bonus in score.get("bonuses", []):
        lines.append(_row(f"bonus {bonus.get('name', '?')}", bonus.get("points", 0)))
        if not bonus.get("points"):
            lines.append(f"  ({bonus.get('reason', '')})")
    lines.append(_row("total", score.get("total", 0)))
    tiebreak = score.get("tiebreak") or {}
    if tiebreak:
        lines.append("tie-break: " + ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in tiebreak.items()))
    for warning in score.get("warnings", []):
        lines.append(f"warning: {warning}")
    if obj.get("review"):
        squares = ", ".join(f"r{r}c{c}" for r, c in obj["review"])
        lines.append(f"check by eye: {squares}")
    return "\n".join(lines)
