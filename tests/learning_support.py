"""Helpers of the learning-from-corrections tests: a stand-in for the square classifier (its
features are each crop's colour, no model needed), a cutter built on it that cuts squares the
real way (``vision.read.learned.examples_from_photo``), and a fake reader that says how many
examples it was read with, as the real one does (``"learned": N``)."""
from __future__ import annotations

import numpy as np


class ColourClassifier:
    """What ``examples_from_photo`` asks of a classifier: its crop settings and ``features``
    (here: each crop's mean and spread of colour, of length 1)."""

    cfg = {"cell": 32, "board_margin": 8, "crop_margin": 4}

    def features(self, crops) -> np.ndarray:
        crops = np.asarray(crops, np.float32)
        if len(crops) == 0:
            return np.zeros((0, 6), np.float32)
        f = np.concatenate([crops.mean(axis=(1, 2)), crops.std(axis=(1, 2))], axis=1) + 1.0
        return (f / np.linalg.norm(f, axis=1, keepdims=True)).astype(np.float32)


def colour_cutter(image, corners, rows, cols, cells):
    """The app's ``LEARNER`` in tests: squares cut as the reader cuts them, colour features."""
    from vision.read import learned

    return learned.examples_from_photo(ColourClassifier(), image, corners, rows, cols, cells)


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
