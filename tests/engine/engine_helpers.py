"""Small builders for the engine tests (kingdoms are written in the text grid format)."""
from __future__ import annotations

import textwrap

import engine


def kingdom(text: str) -> engine.Kingdom:
    return engine.Kingdom.from_text(textwrap.dedent(text))


def total(text: str, rules=None, bonuses=()) -> int:
    return engine.score(kingdom(text), rules=rules, bonuses=bonuses).total


def region_summary(score) -> list[tuple[str, int, int, int]]:
    """(terrain, squares, crowns, points) of every region, sorted, to compare with a hand count."""
    return sorted((r.terrain, r.squares, r.crowns, r.points) for r in score.regions)


def grid(fill: str, size: int = 5, **at: str) -> str:
    """A size x size text grid of ``fill`` with tokens placed at ``r{row}c{col}`` keys."""
    rows = [[fill] * size for _ in range(size)]
    for key, token in at.items():
        r, c = key[1:].split("c")
        rows[int(r)][int(c)] = token
    return "\n".join(" ".join(row) for row in rows) + "\n"
