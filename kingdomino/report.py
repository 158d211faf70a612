"""Readable text for a scored result (the CLI's table without ``--json``)."""
from __future__ import annotations


def format_result(obj: dict) -> str:
    """A table of regions and bonuses and the total, for one scored kingdom."""
    lines = []
    if obj.get("source"):
        lines.append(str(obj["source"]))
    score = obj.get("score", {})
    lines.append(f"{'terrain':<12}{'squares':>8}{'crowns':>8}{'points':>8}")
    for region in score.get("regions", []):
        lines.append(
            f"{region.get('terrain', '?'):<12}{region.get('squares', 0):>8}"
            f"{region.get('crowns', 0):>8}{region.get('points', 0):>8}"
        )
    for bonus in score.get("bonuses", []):
        lines.append(f"{'bonus ' + str(bonus.get('name', '?')):<28}{bonus.get('points', 0):>8}")
    lines.append(f"{'total':<28}{score.get('total', 0):>8}")
    for warning in score.get("warnings", []):
        lines.append(f"warning: {warning}")
    if obj.get("review"):
        squares = ", ".join(f"r{r}c{c}" for r, c in obj["review"])
        lines.append(f"check by eye: {squares}")
    return "\n".join(lines)
