"""What the square classifier can read, from the game's facts (the engine's domino set): the
terrain and crown labels in the network's output order, which readings exist, how many of each
the 48 dominoes hold, and which readings pair into a domino."""
from __future__ import annotations

from collections import Counter
import numpy as np

from engine.dominoes import dominoes, square_counts
from engine.kingdom import TERRAINS as ENGINE_TERRAINS

# The network's terrain outputs, in its order: the terrains of the game's dominoes (in the
# engine's order), then the castle and a square with no tile (models/squares.json records it)
TERRAINS = tuple(t for t in ENGINE_TERRAINS if any(t in (d[1], d[3]) for d in dominoes())) + (
    "castle", "empty")
MAX_CROWNS = {t: max((k for (u, k) in square_counts() if u == t), default=0) for t in TERRAINS}
N_CROWNS = 4

# valid[t, c]: the game has a square of terrain t with c crowns
VALID = np.zeros((len(TERRAINS), N_CROWNS), dtype=bool)
for _i, _t in enumerate(TERRAINS):
    VALID[_i, :MAX_CROWNS[_t] + 1] = True


def square_supply() -> Counter:
    """How many squares of each ``(terrain, crowns)`` the 48 dominoes hold (the engine's count)."""
    return Counter(square_counts())


def domino_partners() -> np.ndarray:
    """``partners[a, b]``: some domino has a half reading ``a`` and the other half reading ``b``.

    Readings are flattened ``(terrain, crowns)`` indices ``terrain * 4 + crowns``. Castle and
    empty squares belong to no domino: their rows and columns stay False.
    """
    n = len(TERRAINS) * N_CROWNS
    partners = np.zeros((n, n), dtype=bool)
    for _, ta, ca, tb, cb in dominoes():
        a = TERRAINS.index(ta) * N_CROWNS + ca
        b = TERRAINS.index(tb) * N_CROWNS + cb
        partners[a, b] = partners[b, a] = True
    return partners


def game_crown_prior(supply: Counter) -> np.ndarray:
    """P(crowns | terrain) over the game's squares, ``(terrains, 4)``; castle/empty: no crowns."""
    prior = np.zeros((len(TERRAINS), N_CROWNS))
    for i, t in enumerate(TERRAINS):
        counts = [supply.get((t, k), 0) for k in range(N_CROWNS)]
        if sum(counts) == 0:
            counts = [1] + [0] * (N_CROWNS - 1)
        prior[i] = np.asarray(counts, float) / sum(counts)
    return prior


def supply_capacity(supply: Counter) -> np.ndarray:
    """Most squares of each flattened reading one kingdom can hold (castle, empty: no limit)."""
    cap = np.zeros(len(TERRAINS) * N_CROWNS)
    for i, t in enumerate(TERRAINS):
        for k in range(N_CROWNS):
            cap[i * N_CROWNS + k] = np.inf if t in ("castle", "empty") else supply.get((t, k), 0)
    return cap


def terrain_probabilities(logits: np.ndarray, t_terrain: float = 1.0) -> np.ndarray:
    """(squares, terrains): each square's terrain probabilities by the classifier's terrain
    head at temperature ``t_terrain``, in ``TERRAINS`` order."""
    lg = np.asarray(logits, np.float64).reshape(-1, logits.shape[-1])[:, :len(TERRAINS)]
    lg = lg / float(t_terrain)
    lg = lg - lg.max(axis=1, keepdims=True)
    p = np.exp(lg)
    p /= p.sum(axis=1, keepdims=True)
    return p
