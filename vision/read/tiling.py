"""Can a read kingdom be laid out with the game's dominoes? And the likeliest fix when not.

Every square of a kingdom except the castle is one half of a domino whose other half lies
next to it, so the squares read as tiles must pair up, neighbour with neighbour, into pairs
that are dominoes of the game (``partners`` from :func:`vision.read.classify.domino_partners`).
A reading where they cannot (an odd number of tile squares, a plain field read as bare
table, a half no neighbour completes) is impossible, whatever the network says; the
cheapest change of one or two squares to their next readings that makes it possible is the
likeliest true kingdom.

Readings are flattened ``(terrain, crowns)`` indices, ``terrain * 4 + crowns``; castle and
empty squares (rows of ``partners`` that are all False) are not part of any domino.
"""
from __future__ import annotations

import numpy as np


def _neighbours(i: int, rows: int, cols: int):
    r, c = divmod(i, cols)
    if r > 0:
        yield i - cols
    if r + 1 < rows:
        yield i + cols
    if c > 0:
        yield i - 1
    if c + 1 < cols:
        yield i + 1


class _Steps:
    """One augmenting-path step of Kuhn's method on the squares' chessboard: ``reading(i)``
    is square ``i``'s flat reading, ``near(i)`` its neighbours; ``tile`` and ``partners`` as
    in :func:`max_domino_matching`. Shared by the whole matching and :class:`_Near`'s."""

    def __init__(self, reading, near, tile: np.ndarray, partners: np.ndarray):
        self.reading, self.near, self.tile, self.partners = reading, near, tile, partners

    def augment(self, i: int, mate: dict, seen: set) -> bool:
        """Pair even square ``i`` by an augmenting path, updating ``mate`` (odd square ->
        even square); False when there is none."""
        ri = self.reading(i)
        for j in self.near(i):
            if j in seen:
                continue
            rj = self.reading(j)
            if not self.tile[rj] or not self.partners[ri, rj]:
                continue
            seen.add(j)
            if j not in mate or self.augment(mate[j], mate, seen):
                mate[j] = i
                return True
        return False


def max_domino_matching(readings, rows: int, cols: int, partners: np.ndarray) -> dict[int, int]:
    """A largest set of disjoint neighbouring pairs of tile squares that are game dominoes.

    ``readings``: flat reading index per square, row by row. Returns ``{square: partner}``
    (both directions). The grid is two-coloured like a chessboard and a domino always joins
    the two colours, so this is a bipartite matching (augmenting paths, Kuhn's method).
    """
    readings = [int(x) for x in readings]
    if len(readings) != rows * cols:
        raise ValueError(f"{len(readings)} readings for a {rows}x{cols} board: give rows*cols")
    tile = partners.any(axis=1)
    mate: dict[int, int] = {}
    steps = _Steps(readings.__getitem__, lambda i: _neighbours(i, rows, cols), tile, partners)
    for i in range(rows * cols):
        r, c = divmod(i, cols)
        if tile[readings[i]] and (r + c) % 2 == 0:
            steps.augment(i, mate, set())
    pairs = {}
    for j, i in mate.items():
        pairs[i], pairs[j] = j, i
    return pairs


def tileable(readings, rows: int, cols: int, partners: np.ndarray) -> bool:
    """Every tile square can be paired with a neighbour into a game domino."""
    tile = partners.any(axis=1)
    n_tiles = sum(bool(tile[int(x)]) for x in readings)
    if n_tiles % 2:
        return False
    return len(max_domino_matching(readings, rows, cols, partners)) == n_tiles


class _Near:
    """Is a reading tileable once one or two of its squares change? Asked many times about one
    reading (:func:`repair` tries hundreds of changes), so the reading's largest matching is
    found once and each change starts from it: the pairs not touching a changed square are
    kept and only the chessboard-even tile squares left without a partner look for an
    augmenting path (Kuhn's method from any matching: a square that finds none now finds none
    later, so the first that fails answers no). The answer is :func:`tileable`'s."""

    def __init__(self, readings, rows: int, cols: int, partners: np.ndarray):
        self.readings = [int(x) for x in readings]
        self.rows, self.cols, self.partners = rows, cols, partners
        self.tile = partners.any(axis=1)
        self.near = [list(_neighbours(i, rows, cols)) for i in range(rows * cols)]
        self.even = [(i // cols + i % cols) % 2 == 0 for i in range(rows * cols)]
        pairs = max_domino_matching(self.readings, rows, cols, partners)
        self.mate = {j: i for j, i in pairs.items() if not self.even[j]}  # odd square -> even
        tiles = [bool(self.tile[x]) for x in self.readings]
        self.n_even = sum(t for t, e in zip(tiles, self.even) if e)
        self.n_odd = sum(t for t, e in zip(tiles, self.even) if not e)

    def tileable(self, changes) -> bool:
        """:func:`tileable` of the reading with ``changes`` ``[(square, reading), ...]``."""
        readings = self.readings
        changed = {}
        n_even, n_odd = self.n_even, self.n_odd
        for i, a in changes:
            a = int(a)
            old = readings[i] if i not in changed else changed[i]
            was, now = bool(self.tile[old]), bool(self.tile[a])
            if self.even[i]:
                n_even += now - was
            else:
                n_odd += now - was
            changed[i] = a
        if n_even != n_odd:            # a domino joins an even and an odd square
            return False

        def reading(i):
            return changed[i] if i in changed else readings[i]

        mate = {j: i for j, i in self.mate.items() if j not in changed and i not in changed}
        tile = self.tile
        steps = _Steps(reading, self.near.__getitem__, tile, self.partners)
        matched = set(mate.values())
        for i in range(self.rows * self.cols):
            if (self.even[i] and i not in matched and tile[reading(i)]
                    and not steps.augment(i, mate, set())):
                return False
        return True


def unpaired(readings, rows: int, cols: int, partners: np.ndarray) -> list[int]:
    """Tile squares left without a domino partner by a largest matching (empty when tileable)."""
    tile = partners.any(axis=1)
    mate = max_domino_matching(readings, rows, cols, partners)
    return [i for i, x in enumerate(readings) if tile[int(x)] and i not in mate]


def repair(probs: np.ndarray, best, rows: int, cols: int, partners: np.ndarray,
           max_cost: float, capacity: np.ndarray | None = None, fixed=(), banned=(),
           max_pair_options: int = 60):
    """The likeliest change of one or two squares that makes an untileable reading tileable.

    ``probs``: ``(rows*cols, readings)`` probabilities (zero: not allowed); ``best``: the
    current reading of each square. A change costs ``log(p(best) / p(new))`` summed over the
    changed squares; only changes costing at most ``max_cost`` are tried, the cheapest that
    works is returned as ``{square: new reading}`` (``{}``: already tileable; ``None``: no
    change within ``max_cost`` works). ``fixed`` squares keep their reading; ``banned``
    readings are never introduced (the castle: there is one, placed elsewhere); with
    ``capacity`` no reading ends up on more squares than the game has. Pairs are made from
    the ``max_pair_options`` cheapest single changes (the search stays small).
    """
    best = np.asarray(best, dtype=int).copy()
    if tileable(best, rows, cols, partners):
        return {}
    probs = np.asarray(probs, dtype=np.float64)
    p_best = probs[np.arange(len(best)), best]
    options = []                                   # (cost, square, reading)
    for i in range(len(best)):
        if i in fixed or p_best[i] <= 0:
            continue
        for a in np.flatnonzero(probs[i] > 0):
            if a == best[i] or a in banned:
                continue
            cost = float(np.log(p_best[i] / probs[i, a]))
            if cost <= max_cost:
                options.append((cost, i, int(a)))
    options.sort()
    near = _Near(best, rows, cols, partners)
    now = best.tolist()
    # how many squares read each reading, and how many the game has (plain lists: asked for
    # each of hundreds of changes, one or two squares at a time)
    counts = np.bincount(best, minlength=probs.shape[1]).tolist() if capacity is not None else None
    room = np.asarray(capacity).tolist() if capacity is not None else None

    def works(changes) -> bool:
        if counts is not None:
            # no new over-use of the supply: a reading the changes put on more squares than
            # before may not end on more squares than the game has (the others only lose)
            more: dict = {}
            for i, a in changes:
                more[a] = more.get(a, 0) + 1
                more[now[i]] = more.get(now[i], 0) - 1
            if any(n > 0 and counts[r] + n > room[r] for r, n in more.items()):
                return False
        return near.tileable(changes)

    found, found_cost = None, np.inf
    for cost, i, a in options:                     # cheapest single change
        if works([(i, a)]):
            found, found_cost = {i: a}, cost
            break
    short = options[:max_pair_options]
    for x, (c1, i, a) in enumerate(short):         # a cheaper pair?
        if 2 * c1 >= found_cost:
            break
        for c2, j, b in short[x + 1:]:
            if c1 + c2 >= found_cost:
                break
            if j != i and works([(i, a), (j, b)]):
                found, found_cost = {i: a, j: b}, c1 + c2
                break
    return found
