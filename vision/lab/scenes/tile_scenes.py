"""Training scenes for the detector's tile network on domain-randomised tables (issue 16).

The tile network learned the four tables ``vision.synth`` draws, so on a green felt mat, a blue
cloth or yellow wood it takes the table for tiles. These scenes put the kingdom on the tables of
``vision.lab.scenes.hard_tables`` (every hue, a terrain's own colours included; wood, stripes, checks, felt;
clutter, glare, hard shadows) so the network has to learn what a kingdom is, not what a table
is not.

- ``hard_training_scene(seed, ...) -> (small_bgr, labels)``: one scene, drawn directly at a small
  size (800 x 600 by default) and downscaled to the detector's ``mask_long_side`` as the detector
  does; labels 1 tile / 0 not / -1 undecided, the format of ``vision.lab.training.pixels.synth_training_scenes``.
- ``hard_training_scenes(n, first_seed, boards=(), real_share=0)``: ``n`` of them, seeds
  ``first_seed`` on, that share of them with a photographed board (the AAU dev photos: real tile
  art, which the drawn kingdoms only imitate) instead of a drawn kingdom.
- ``mixed_training_scenes(n, seed, hard_share)``: the tile network's generated scenes, that share
  of them from this module and the rest from ``vision.lab.training.pixels.synth_training_scenes``.

Kept apart from the measurement: training seeds start at ``TRAIN_SEEDS_FROM`` (the measurement
uses ``tables.MEASURE_SEEDS_FROM`` on), and the table kinds in ``HELD_OUT_KINDS`` (printed cloth)
are never drawn for training, so one kind measures a table the network has never seen.
"""
from __future__ import annotations

import cv2
import numpy as np

from vision.lab.scenes import hard_tables as tables
from vision.lab.training.pixels import synth_training_scenes
from vision.find.tilemap import downscale

TRAIN_SEEDS_FROM = 100_000          # training seeds start here, far above the measuring seeds
HELD_OUT_KINDS = ("print",)         # table kinds never drawn for training
TRAIN_KINDS = tuple(k for k in tables.TABLE_KINDS if k not in HELD_OUT_KINDS)
# every kind a network may be trained on: the usual ones and those drawn for training only
TRAINABLE_KINDS = TRAIN_KINDS + tables.TRAIN_ONLY_KINDS


def training_kinds(text: str) -> tuple:
    """Table kinds named for training (comma-separated), each one of ``TRAINABLE_KINDS``:
    ``ValueError`` naming the choices for a kind kept for measuring or unknown."""
    kinds = tables.kind_names(str(text))
    bad = [k for k in kinds if k not in TRAINABLE_KINDS]
    if bad or not kinds:
        raise ValueError(f"{', '.join(bad) or 'no kind'} cannot be trained on: name kinds among "
                         f"{', '.join(TRAINABLE_KINDS)} (the others are kept for measuring)")
    return kinds


def scene_labels(tiles: np.ndarray, shape) -> np.ndarray:
    """Labels at ``shape`` (h, w) from a tile mask at any size (uint8, >127 on tiles): 1 well
    inside the tiles, 0 well outside them (the table and everything on it), -1 on the outline."""
    h, w = shape[:2]
    frac = cv2.resize(tiles.astype(np.float32) / 255.0, (w, h), interpolation=cv2.INTER_AREA)
    on = (frac > 0.5).astype(np.uint8) * 255
    y = np.full((h, w), -1, np.int8)
    y[cv2.erode(on, np.ones((3, 3), np.uint8)) > 0] = 1
    y[cv2.dilate(on, np.ones((5, 5), np.uint8)) == 0] = 0
    return y


def _check_seed(seed: int) -> None:
    if seed < TRAIN_SEEDS_FROM:
        raise ValueError(f"training seeds start at {TRAIN_SEEDS_FROM} (seeds from "
                         f"{tables.MEASURE_SEEDS_FROM} on are for measuring), got {seed}: "
                         f"pass a seed of {TRAIN_SEEDS_FROM} or more")


def hard_training_scene(seed: int, long_side: int = 400, width: int = 800, height: int = 600,
                        kinds=TRAIN_KINDS, with_scene: bool = False, board: dict | None = None):
    """One kingdom on a hard table, drawn at ``width x height`` and downscaled so its long side
    is ``long_side``: ``(small_bgr, labels)``, or ``(small_bgr, labels, HardScene)`` with
    ``with_scene``. Loose dominoes and tiles in the clutter are labelled 0: the generator keeps
    them off the kingdom, and only the kingdom's own tiles are labelled 1. ``board``: a
    photographed kingdom to put on the table instead of a drawn one (``vision.lab.scenes.synth.aau_boards``)."""
    _check_seed(int(seed))
    kinds = tuple(kinds)
    drawable = tables.TABLE_KINDS + tables.TRAIN_ONLY_KINDS
    if not kinds or any(k not in drawable for k in kinds):
        raise ValueError(f"kinds must be a non-empty choice of {', '.join(drawable)}, got {kinds}")
    scene = tables.make_hard_scene(int(seed), width, height, kinds=kinds, tile_mask=True, board=board)
    small, _s = downscale(scene.image, long_side)
    y = scene_labels(scene.tiles, small.shape)
    return (small, y, scene) if with_scene else (small, y)


def real_board_turns(n: int, share: float) -> list:
    """Which of ``n`` scenes put a photographed board on the table: scene ``i`` does when
    ``floor((i + 1) * share)`` passes a whole number, so the share holds in every stretch."""
    if not 0.0 <= share <= 1.0:
        raise ValueError(f"the share of photographed boards is a fraction, 0 to 1, got {share}")
    return [int((i + 1) * share) > int(i * share) for i in range(int(n))]


def hard_training_scenes(n: int, first_seed: int = TRAIN_SEEDS_FROM, long_side: int = 400,
                         kinds=TRAIN_KINDS, boards=(), real_share: float = 0.0) -> list:
    """``n`` pairs from ``hard_training_scene``, seeds ``first_seed`` .. ``first_seed + n - 1``;
    ``real_share`` of them (when ``boards`` are given) with a photographed board, the boards
    taken in turn."""
    boards = list(boards)
    real = real_board_turns(n, real_share if boards else 0.0)
    out, k = [], 0
    for i in range(int(n)):
        board = None
        if real[i]:
            board, k = boards[k % len(boards)], k + 1
        out.append(hard_training_scene(first_seed + i, long_side, kinds=kinds, board=board))
    return out


def hard_seeds_from(n: int, seed: int, hard_share: float) -> int:
    """The first hard-table seed ``mixed_training_scenes(n, seed, hard_share=hard_share)`` draws."""
    return TRAIN_SEEDS_FROM + seed * int(round(n * hard_share))


def mixed_training_scenes(n: int, seed: int = 0, long_side: int = 400, hard_share: float = 0.5,
                          kinds=TRAIN_KINDS, boards=(), real_share: float = 0.0) -> list:
    """``n`` generated training pairs: ``round(n * hard_share)`` on hard tables (seeds
    ``TRAIN_SEEDS_FROM + seed * that many`` on, so different ``seed`` values draw different
    scenes; ``real_share`` of those with one of the photographed ``boards``) and the rest from
    ``vision.lab.training.pixels.synth_training_scenes(.., seed)``."""
    if not 0.0 <= hard_share <= 1.0:
        raise ValueError(f"hard_share is a fraction of the scenes, 0 to 1, got {hard_share}")
    n_hard = int(round(n * hard_share))
    pairs = synth_training_scenes(n - n_hard, seed=seed, long_side=long_side) if n > n_hard else []
    pairs += hard_training_scenes(n_hard, hard_seeds_from(n, seed, hard_share), long_side, kinds,
                                  boards, real_share)
    return pairs
