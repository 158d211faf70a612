"""Squares that look like no Kingdomino tile: far from everything the square classifier knows.

The classifier always answers with one of its terrains, and a square of table cloth, another
game's tile or a drawn square can be read as one of them with full confidence. What it read is
compared here with what it was shown: each square's features (the tensor its last layer reads,
``SquareClassifier.features``) against the statistics of the labelled dev squares'
features (``models/novelty.npz``, built by ``python3 -m vision.lab.training.novelty`` from the
dev photos and kingdoms drawn as training draws them, with the shipped network, no
training): the mean of each terrain, photographed and drawn apart, and one spread shared by
all of them (their covariance, shrunk toward its mean variance). A square's *distance* is the
squared Mahalanobis distance of its features from the nearer mean of the terrain it is read
as: a square of table read as a tile most often lies far from that terrain's squares (about 7
in 10 of them, cut from generated hard tables, past the threshold).

A square read as a tile farther than ``[novelty] flag_above`` is in review ("looks like no
Kingdomino tile") and the reading says how many there are. The same file holds the features
of Queendomino town squares (cut from labelled photos of that game) and of every labelled dev
square: a square more alike (cosine) to its nearest town square than to its nearest dev
square by ``[novelty] town_margin``, and at least ``[novelty] town_near`` alike to it, looks
like a town (the network reads a town as a swamp, and not far from the swamps it knows: the
distance alone does not tell them apart). Everything here is numpy.
"""
from __future__ import annotations

import logging

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from engine.messages import TOWNS_WARNING, UNLIKE_WARNING, Message
from models import MODELS_DIR
from vision.read.labels import TERRAINS

log = logging.getLogger("vision.read.novelty")


@dataclass(frozen=True)
class Statistics:
    """``means`` ``(sets, terrains, D)`` (each set of squares' means: the dev photos', the
    drawn kingdoms'; a row of NaN for a terrain without squares), ``precision``
    ``(D, D)`` (the inverse of the shared, shrunk covariance), ``towns`` ``(M, D)`` (the
    features of town squares, each of length 1; ``M`` may be 0) and ``bank`` ``(K, D)`` (the
    features of the dev squares the statistics were made from)."""

    means: np.ndarray
    precision: np.ndarray
    towns: np.ndarray
    bank: np.ndarray
    network: str = ""     # the identity of the network whose features these are ("": not said)

    def save(self, path: Path) -> None:
        np.savez_compressed(path, means=self.means.astype(np.float32),
                            precision=self.precision.astype(np.float32),
                            towns=self.towns.astype(np.float16),
                            bank=self.bank.astype(np.float16), terrains=np.array(TERRAINS),
                            network=np.array(self.network))


@lru_cache(maxsize=4)
def load(name: str) -> Statistics | None:
    """The statistics file ``name`` in ``models/`` (a path is taken as it is); None for ``""``
    or a file that is not there (a reading then flags nothing as unlike the tiles)."""
    if not name:
        return None
    path = Path(name) if Path(name).is_absolute() else MODELS_DIR / name
    if not path.exists():
        return None
    with np.load(path) as data:
        if tuple(str(t) for t in data["terrains"]) != TERRAINS:
            raise ValueError(f"{path.name} was built for the terrains "
                             f"{list(data['terrains'])}, the classifier reads {list(TERRAINS)}")
        return Statistics(data["means"].astype(np.float64), data["precision"].astype(np.float64),
                          data["towns"].astype(np.float32), data["bank"].astype(np.float32),
                          str(data["network"]) if "network" in data.files else "")


_told: set = set()


def for_network(name: str, classifier) -> Statistics | None:
    """:func:`load`, for the square network ``classifier`` reads with: None (nothing flagged,
    said once in the log) when the statistics were made with another network or do not say
    which (``SquareClassifier.identity``): another network's features lie in another space,
    where every square looks unlike the tiles and every window like table (a fold's network
    in cross-validation, a model given by path, one trained after the statistics were
    built). A classifier that does not say its identity (a stand-in) takes them as they are."""
    stats = load(name)
    mine = getattr(classifier, "identity", None)
    if stats is None or not mine or stats.network == mine:
        return stats
    if (name, mine) not in _told:
        _told.add((name, mine))
        made = f"another square network ({stats.network})" if stats.network else \
            "a square network it does not name"
        log.warning("%s was built with %s, this reader's is %s: squares are not compared with "
                    "the known tiles; rebuild it with python3 -m vision.lab.training.novelty",
                    name, made, mine)
    return None


def distances(stats: Statistics, features: np.ndarray, terrains) -> np.ndarray:
    """Each square's squared Mahalanobis distance from the nearer of the mean features of the
    terrain it is read as (``terrains``: names). A square whose features are not known (a row
    of NaN) or read as a terrain without statistics is at distance 0."""
    feats = np.asarray(features, np.float64)
    if len(feats) == 0 or feats.shape[1] != stats.means.shape[-1]:
        return np.zeros(len(feats))
    idx = np.array([TERRAINS.index(t) for t in terrains], np.intp)
    out = np.full(len(feats), np.inf)
    for means in stats.means:
        diff = feats - means[idx]
        known = np.isfinite(diff).all(axis=1)
        d = diff[known]
        out[known] = np.minimum(out[known], np.einsum("ij,jk,ik->i", d, stats.precision, d))
    out[~np.isfinite(out)] = 0.0
    return out


def unlike_tiles(terrains, distance, cfg: dict) -> np.ndarray:
    """Squares read as a tile (not ``empty``) whose distance is over ``[novelty] flag_above``
    (0: none), as booleans in the order given."""
    above = float(cfg["flag_above"])
    d = np.asarray(distance, np.float64)
    if above <= 0:
        return np.zeros(len(d), bool)
    tile = np.array([t != "empty" for t in terrains], bool)
    return tile & (d > above)


def town_like(stats: Statistics, features: np.ndarray, terrains, cfg: dict) -> np.ndarray:
    """Squares read as a tile more alike (cosine) to their nearest town square than to their
    nearest dev square by at least ``[novelty] town_margin``, and at least ``[novelty]
    town_near`` alike to that town square (none without town examples), as booleans."""
    feats = np.nan_to_num(np.asarray(features, np.float32), nan=0.0)
    tile = np.array([t != "empty" for t in terrains], bool)
    if not len(stats.towns) or not tile.any() or feats.shape[1] != stats.towns.shape[1]:
        return np.zeros(len(tile), bool)
    town = (feats @ stats.towns.T).max(axis=1)
    out = tile & (town >= float(cfg["town_near"]))
    near = np.flatnonzero(out)      # the dev squares are compared with these alone (few)
    if len(near) and len(stats.bank):
        known = (feats[near] @ stats.bank.T).max(axis=1)
        out[near] = town[near] - known >= float(cfg["town_margin"])
    return out


def warnings(unlike: int, towns: int) -> list:
    """What a reading says of its squares unlike the tiles and like towns (none for 0)."""
    out = []
    if unlike:
        out.append(Message(UNLIKE_WARNING, "n", n=int(unlike)))
    if towns:
        out.append(Message(TOWNS_WARNING, "n", n=int(towns)))
    return out
