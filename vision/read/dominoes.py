"""Decoding a board's network outputs into readings: the most probable valid reading of each
square (the 48-domino set's facts), every square half of a domino with a neighbour
(``partner_support``), the whole board within the game's supply and tiled by dominoes.
``vision.read.classify.SquareClassifier.read_logits`` runs it; it needs no network."""
from __future__ import annotations

import numpy as np

from vision.read.labels import N_CROWNS, TERRAINS, VALID


def partner_support(joint: np.ndarray, rows: int, cols: int, partners: np.ndarray) -> np.ndarray:
    """For each square and each reading of it, the chance that some neighbour is read as a
    domino partner of that reading: ``max`` over the 4 neighbours of ``P(neighbour in partners)``.

    ``joint``: ``(rows*cols, terrains, 4)`` probabilities. Castle and empty readings need no
    partner (support 1). A square read as a half-domino that no neighbour can complete (a dark
    table square read as the one mine without crowns, far from a one-crown field) loses support.
    """
    flat = joint.reshape(rows, cols, -1)
    # s[r, c, a] = P(square (r, c) is a partner of reading a)
    s = flat @ partners.T.astype(flat.dtype)
    best = np.zeros_like(flat)
    best[1:] = np.maximum(best[1:], s[:-1])
    best[:-1] = np.maximum(best[:-1], s[1:])
    best[:, 1:] = np.maximum(best[:, 1:], s[:, :-1])
    best[:, :-1] = np.maximum(best[:, :-1], s[:, 1:])
    free = ~partners.any(axis=1)           # castle / empty
    best[..., free] = 1.0
    return best.reshape(joint.shape)


def _softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    z = x - x.max(axis=axis, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=axis, keepdims=True)


def _normalised(joint: np.ndarray) -> np.ndarray:
    """Each square's ``(terrains, 4)`` probabilities scaled to sum to 1."""
    return joint / np.maximum(joint.sum(axis=(1, 2), keepdims=True), 1e-300)


def decode(logits: np.ndarray, t_terrain: float = 1.0, t_crowns: float = 1.0,
           prior: np.ndarray | None = None, shape: tuple[int, int] | None = None,
           partners: np.ndarray | None = None, partner_floor: float = 1.0,
           one_castle: bool = False, capacity: np.ndarray | None = None,
           tiling_max_cost: float | None = None, report: dict | None = None):
    """Logits ``(N, 12)`` -> (terrain index, crowns, confidence, was the raw best invalid).

    The joint probability of (terrain, crowns) is the product of the two heads' (temperature
    scaled) probabilities; impossible pairs are removed and the rest renormalised; the
    confidence is the chosen pair's share. ``prior`` (``(terrains, 4)``), when given, multiplies
    the joint: the game's crowns-given-terrain odds over the crown head's training prior.
    With ``shape`` (rows, cols) and ``partners`` (:func:`domino_partners`), each reading is
    weighted by ``partner_floor + (1 - partner_floor) * support`` (:func:`partner_support`):
    a square must be half of a domino whose other half lies next to it. ``one_castle``: the
    square most likely to be the castle is read as the castle (confidence: that chance) and no
    other square is (their confidences keep the castle's share in the denominator).
    ``capacity`` (:func:`supply_capacity`): no reading is output more often than the game has
    such squares; the least confident extra ones take their next best reading that has room.
    ``tiling_max_cost`` (with ``shape`` and ``partners``): a reading whose tile squares cannot
    be paired into game dominoes (:mod:`vision.read.tiling`) takes the likeliest change of one or
    two squares that makes it possible, if one costs at most this (log odds); ``report``, a
    dict, receives ``"retiled"`` (squares so changed), ``"unpaired"`` (squares still
    without a domino partner when no change was found) and ``"odds"`` (``(N, terrains, 4)``:
    each square's valid readings' probabilities, summing to 1).
    """
    logits = np.asarray(logits, dtype=np.float64).reshape(-1, len(TERRAINS) + N_CROWNS)
    pt = _softmax(logits[:, :len(TERRAINS)] / t_terrain)
    pc = _softmax(logits[:, len(TERRAINS):] / t_crowns)
    joint = pt[:, :, None] * pc[:, None, :]
    if prior is not None:
        joint = _normalised(joint * prior[None])
    if shape is not None and partners is not None and partner_floor < 1.0:
        support = partner_support(_normalised(joint * VALID[None]), shape[0], shape[1], partners)
        joint = _normalised(joint * (partner_floor + (1.0 - partner_floor) * support))
    raw_best = joint.reshape(len(joint), -1).argmax(axis=1)
    raw_invalid = ~VALID.reshape(-1)[raw_best]
    valid = joint * VALID[None]
    flat = valid.reshape(len(joint), -1)
    total = flat.sum(axis=1)
    denom = np.maximum(total, 1e-300)
    if report is not None:
        report["odds"] = valid / denom[:, None, None]
    king = -1
    if one_castle and len(joint):
        castle = TERRAINS.index("castle") * N_CROWNS
        p_castle = flat[:, castle] / denom
        king = int(np.argmax(p_castle))
        flat = flat.copy()
        flat[:, castle] = 0.0
    best = flat.argmax(axis=1)
    conf = flat[np.arange(len(joint)), best] / denom
    if king >= 0:
        best[king], conf[king] = castle, p_castle[king]
    if capacity is not None:
        best, conf = _within_supply(flat, total, best, conf, np.asarray(capacity), king)
    if tiling_max_cost is not None and shape is not None and partners is not None:
        best, conf = _retile(flat, denom, best, conf, shape, partners, tiling_max_cost,
                             capacity, king, report, p_castle if king >= 0 else None)
    return best // N_CROWNS, best % N_CROWNS, conf, raw_invalid


def _retile(flat, denom, best, conf, shape, partners, max_cost, capacity, king, report,
            p_castle=None):
    """The likeliest tileable reading near ``best`` (:func:`vision.read.tiling.repair`).

    With ``p_castle`` (each square's castle odds; ``king`` holds the castle) the castle may
    also move to another square: a castle read on the wrong square leaves the true castle
    square as a tile with no partner and a tile as the castle, which no change of one or two
    other squares repairs. Each option's cost is the log odds given up on every changed square.
    """
    from vision.read import tiling

    rows, cols = shape
    if tiling.tileable(best, rows, cols, partners):     # the usual case: nothing to repair
        if report is not None:
            report["retiled"], report["unpaired"] = [], []
        return best, conf
    probs = flat / denom[:, None]
    castle = TERRAINS.index("castle") * N_CROWNS
    cap = None if capacity is None else np.asarray(capacity)
    found = None                                   # (cost, reading, its probabilities)
    moves = [(0.0, king)]
    other = int(probs[king].argmax()) if king >= 0 else -1  # the castle square, read otherwise
    if p_castle is not None and other >= 0 and probs[king, other] > 0:
        for j in np.flatnonzero(p_castle > 0):
            if j == king or probs[j, best[j]] <= 0:
                continue
            cost = float(np.log(p_castle[king] / probs[king, other])
                         + np.log(probs[j, best[j]] / p_castle[j]))
            if cost <= max_cost:
                moves.append((cost, int(j)))
        moves.sort()
    for move_cost, j in moves:
        if found is not None and move_cost >= found[0]:
            break
        trial, trial_probs = best.copy(), probs
        if j != king:
            trial_probs = probs.copy()
            trial_probs[j, castle] = p_castle[j]
            trial[king], trial[j] = other, castle
        changes = tiling.repair(trial_probs, trial, rows, cols, partners, max_cost - move_cost,
                                capacity=cap, fixed={j} if j >= 0 else (), banned={castle})
        if changes is None:
            continue
        cost = move_cost + sum(float(np.log(trial_probs[i, trial[i]] / trial_probs[i, a]))
                               for i, a in changes.items())
        for i, a in changes.items():
            trial[i] = a
        if found is None or cost < found[0]:
            found = (cost, trial, trial_probs)
    best, conf = best.copy(), conf.copy()
    retiled = []
    if found is not None:
        _, trial, trial_probs = found
        retiled = [int(i) for i in np.flatnonzero(trial != best)]
        for i in retiled:
            best[i] = trial[i]
            conf[i] = trial_probs[i, trial[i]]     # a moved castle's odds are in trial_probs
    if report is not None:
        report["retiled"] = retiled
        report["unpaired"] = [] if found is not None else tiling.unpaired(best, rows, cols, partners)
    return best, conf


def _within_supply(flat, total, best, conf, capacity, fixed: int = -1):
    """Move the least confident squares of over-used readings to their next best reading with
    room left (one square at a time); a square with no such reading keeps its own (flagged)."""
    flat, best, conf = flat.copy(), best.copy(), conf.copy()
    for _ in range(flat.size):
        counts = np.bincount(best, minlength=flat.shape[1])
        over = np.flatnonzero(counts > capacity)
        holders = np.flatnonzero(np.isin(best, over) & (np.arange(len(best)) != fixed))
        if not len(holders):
            break
        j = holders[np.argmin(conf[holders])]
        room = counts < capacity
        options = flat[j] * room
        if options.max() <= 0:
            break
        best[j] = int(options.argmax())
        conf[j] = options[best[j]] / max(float(total[j]), 1e-300)
    return best, conf
