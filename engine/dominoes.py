"""Consistency checks against the 48 Kingdomino dominoes (the packaged CSV, not ../shared)."""
from __future__ import annotations

import csv
import io
from collections import Counter
from functools import lru_cache
from importlib import resources

from engine.kingdom import Kingdom
from engine.messages import SQUARE, Message, N_


@lru_cache(maxsize=1)
def dominoes() -> tuple[tuple[int, str, int, str, int], ...]:
    """The 48 dominoes: (number, terrain_a, crowns_a, terrain_b, crowns_b)."""
    text = resources.files("engine.data").joinpath("kingdomino-dominoes.csv").read_text("utf-8")
    rows = []
    for row in csv.DictReader(io.StringIO(text)):
        rows.append((int(row["number"]), row["terrain_a"], int(row["crowns_a"]),
                     row["terrain_b"], int(row["crowns_b"])))
    return tuple(rows)


@lru_cache(maxsize=1)
def square_counts() -> Counter:
    """How many squares of each (terrain, crowns) the whole game has."""
    counts: Counter = Counter()
    for _, ta, ca, tb, cb in dominoes():
        counts[(ta, ca)] += 1
        counts[(tb, cb)] += 1
    return counts


NO_SUCH_SQUARE = N_("%(where)s: no %(terrain)s square has %(crowns)s crown(s) in the game "
                    "(%(terrain)s carries 0..%(most)s); check the reading")
TOO_MANY_CROWNED = N_("%(n)s %(terrain)s squares with %(crowns)s crown(s), but the game has only "
                      "%(have)s (first at row %(row)s, col %(col)s); check the reading")
TOO_MANY = N_("%(n)s %(terrain)s squares, but the game has only %(have)s")


def domino_warnings(kingdom: Kingdom) -> list[str]:
    """Squares the 48 dominoes cannot give: a crown count no domino has, or more of a kind."""
    game = square_counts()
    terrains = {t for t, _ in game}
    seen: Counter = Counter()
    where: dict = {}
    for r, c, cell in kingdom.squares():
        if cell.terrain in terrains:
            key = (cell.terrain, cell.crowns)
            seen[key] += 1
            where.setdefault(key, (r, c))
    warnings = []
    for (terrain, crowns), n in sorted(seen.items()):
        have = game.get((terrain, crowns), 0)
        r, c = where[(terrain, crowns)]
        if have == 0:
            most = max(k for t, k in game if t == terrain)
            warnings.append(Message(NO_SUCH_SQUARE, "crowns", where=Message(SQUARE, row=r + 1, col=c + 1),
                                    terrain=terrain, crowns=crowns, most=most))
        elif n > have:
            warnings.append(Message(TOO_MANY_CROWNED, "n", n=n, terrain=terrain, crowns=crowns,
                                    have=have, row=r + 1, col=c + 1))
    for terrain in sorted(terrains):
        n = sum(v for (t, _), v in seen.items() if t == terrain)
        have = sum(v for (t, _), v in game.items() if t == terrain)
        if n > have:
            warnings.append(Message(TOO_MANY, "n", n=n, terrain=terrain, have=have))
    return warnings
