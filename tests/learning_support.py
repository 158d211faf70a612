"""Helpers of the learning-from-corrections tests: a stand-in for the square classifier (its
features are each crop's colour, no model needed), a cutter built on it that cuts squares the
real way (``vision.read.learned.examples_from_photo``), and a fake reader that says how many
examples it was read with, as the real one does (``"learned": N``)."""
from __future__ import annotations

import numpy as np


class ColourClassifier:
    """What ``examples_from_photo`` and ``kingdomino.learning`` ask of a classifier: its crop
    settings, its ``identity`` and ``features`` (here: each crop's mean and spread of colour,
    of length 1). ``identity`` and ``order`` make another network of the same feature length:
    the six numbers in another order, another feature space. ``crops`` keeps every crop read."""

    cfg = {"cell": 32, "board_margin": 8, "crop_margin": 4}

    def __init__(self, identity: str = "colour", order=(0, 1, 2, 3, 4, 5)):
        self.identity, self.order, self.crops = identity, list(order), []

    def features(self, crops) -> np.ndarray:
        crops = np.asarray(crops, np.float32)
        self.crops.extend(crops)
        if len(crops) == 0:
            return np.zeros((0, 6), np.float32)
        f = np.concatenate([crops.mean(axis=(1, 2)), crops.std(axis=(1, 2))], axis=1) + 1.0
        f = f[:, self.order]
        return (f / np.linalg.norm(f, axis=1, keepdims=True)).astype(np.float32)


def colour_cutter(image, corners, rows, cols, cells):
    """The app's ``LEARNER`` in tests: squares cut as the reader cuts them, colour features."""
    from vision.read import learned

    return learned.examples_from_photo(ColourClassifier(), image, corners, rows, cols, cells)


colour_cutter.identity = ColourClassifier().identity  # the network its examples say made them


def use_colour_network(monkeypatch, net=None):
    """Have ``kingdomino.learning`` read (and remake examples) with the colour stand-in (or
    ``net``) in place of the real square network, as the colour cutter learns with it."""
    from kingdomino import learning

    net = net if net is not None else ColourClassifier()
    monkeypatch.setattr(learning, "_classifier", net)
    return net


def learned_count() -> int:
    """How many examples this thread's readings use now (``reading_with``)."""
    from kingdomino import service

    examples = service.examples_in_use()
    return len(examples) if examples is not None else 0


def with_learned(obj: dict) -> dict:
    """A reading as the real reader gives it: ``"learned": N`` when read with N examples."""
    n = learned_count()
    if n:
        obj["learned"] = n
    return obj


def features(n: int, width: int = 6, seed: int = 0) -> list[bytes]:
    """``n`` made-up features (float32 bytes, length 1)."""
    rng = np.random.default_rng(seed)
    f = rng.random((n, width)).astype(np.float32) + 0.1
    f /= np.linalg.norm(f, axis=1, keepdims=True)
    return [row.tobytes() for row in f]
