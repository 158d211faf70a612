"""The one region finder every rule set uses: squares with the same key joined edge to edge."""
from __future__ import annotations

from typing import Callable, Hashable

from engine.kingdom import Cell, Kingdom

Square = tuple[int, int]


def find_regions(kingdom: Kingdom, key: Callable[[Cell], Hashable | None]
                 ) -> list[tuple[Hashable, tuple[Square, ...]]]:
    """Groups of orthogonally joined squares whose ``key(cell)`` is equal and not None.

    Returns ``(key, squares)`` pairs; squares sorted, groups ordered by their first square.
    """
    n = kingdom.size
    seen: set[Square] = set()
    groups = []
    for r, c, cell in kingdom.squares():
        k = key(cell)
        if k is None or (r, c) in seen:
            continue
        seen.add((r, c))
        stack, members = [(r, c)], []
        while stack:
            sr, sc = stack.pop()
            members.append((sr, sc))
            for nr, nc in ((sr - 1, sc), (sr + 1, sc), (sr, sc - 1), (sr, sc + 1)):
                if 0 <= nr < n and 0 <= nc < n and (nr, nc) not in seen \
                        and key(kingdom.cells[nr][nc]) == k:
                    seen.add((nr, nc))
                    stack.append((nr, nc))
        groups.append((k, tuple(sorted(members))))
    return groups


def terrain_key(cell: Cell):
    """Key for ordinary regions: the terrain of land squares (castle, hut, empty form none)."""
    return cell.terrain if cell.is_land else None
