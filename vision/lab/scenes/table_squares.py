"""Training squares of kingdoms photographed on hard tables: bare table that looks like tiles.

The reader keeps the window of squares the classifier does not read as bare table
(``vision.find.frame``). Its ``empty`` examples were phone-photo squares and a few lifted-off border
squares on ``vision.lab.scenes.synth``'s four tables, so a table of a terrain's colour or pattern
(yellow wood, green felt, blue cloth, stripes, checks) was read as tiles and a 5x5 kingdom kept
as 7x7. This source puts kingdoms drawn by ``vision.lab.scenes.render`` on the tables of
``vision.lab.scenes.hard_tables`` (clutter, glare, hard shadows, tilt, a phone photo's size) and cuts the
kingdom's grid grown by ``ring`` squares on every side with the training crop path
(``vision.lab.training.squares.photo_training_crops``, the reader's crops padded for augmentation):

- the squares beyond the kingdom are labelled ``empty`` (0 crowns); loose dominoes and tiles
  are kept ``ring`` squares and more away from the kingdom (``make_hard_scene(tiles_clear=)``),
  so those squares show the table and what lies on it that is not a tile;
- the kingdom's squares keep their labels; ``HALF_BUILT`` of the kingdoms are half-built, their
  holes showing the table (labelled ``empty`` too);
- a square whose centre lies off the photo is not used (the reader would see replicated edge
  pixels there).

Seeds start at ``FIRST_SEED``, inside the training range (``tile_scenes.TRAIN_SEEDS_FROM`` on)
and apart from the tile network's scenes; a seed below ``TRAIN_SEEDS_FROM`` is refused (seeds
9000-99999 are the measurement's), and the held-out table kinds (``tile_scenes.HELD_OUT_KINDS``:
printed cloth) are never drawn.
"""
from __future__ import annotations

import numpy as np

from vision.geometry import centres_off_photo, ring_corners
from vision.read.labels import TERRAINS
from vision.lab.scenes import render
from vision.lab.scenes import hard_tables as tables
from vision.lab.scenes.tile_scenes import HELD_OUT_KINDS, TRAIN_KINDS, TRAIN_SEEDS_FROM

FIRST_SEED = TRAIN_SEEDS_FROM + 500_000   # apart from the tile network's scenes (100000 on)
SEEDS_PER_RUN = 10_000                    # seeds of one training run (``seed`` 0, 1, ... apart)
WIDTHS = (1400, 2400)                     # photo width drawn from this range, 4:3
HALF_BUILT = 0.3                          # share of kingdoms drawn half-built (holes show the table)
HALF_FILL = (0.4, 0.85)                   # ... filled to this share of the frame
CLEAR_MARGIN = 1.0                        # squares of table beyond the ring kept free of loose tiles


def check_seed(seed: int) -> int:
    """``seed`` if it is a training seed; a ``ValueError`` saying which to use otherwise."""
    seed = int(seed)
    if seed < TRAIN_SEEDS_FROM:
        raise ValueError(f"training seeds start at {TRAIN_SEEDS_FROM} (seeds from "
                         f"{tables.MEASURE_SEEDS_FROM} on are for measuring), got {seed}: "
                         f"pass a seed of {TRAIN_SEEDS_FROM} or more")
    return seed


def check_kinds(kinds) -> tuple:
    """``kinds`` as a tuple if it is a non-empty choice of the training kinds; a ``ValueError``
    otherwise (a held-out kind measures a table no network has seen)."""
    kinds = tuple(kinds)
    held = [k for k in kinds if k in HELD_OUT_KINDS]
    if held:
        raise ValueError(f"table kind(s) {', '.join(held)} are held out for measuring: "
                         f"choose from {', '.join(TRAIN_KINDS)}")
    if not kinds or any(k not in TRAIN_KINDS for k in kinds):
        raise ValueError(f"kinds must be a non-empty choice of {', '.join(TRAIN_KINDS)}, "
                         f"got {kinds}")
    return kinds


def table_scene(seed: int, ring: int, kinds=TRAIN_KINDS, width: int | None = None,
                **scene_kw) -> tables.HardScene:
    """One kingdom on a hard table (``tables.make_hard_scene``) for training: a phone photo's size
    (``width`` drawn from ``WIDTHS`` unless given, 4:3), half-built now and then, loose tiles kept
    ``ring + CLEAR_MARGIN`` squares away. ``scene_kw`` go to ``make_hard_scene``."""
    seed = check_seed(seed)
    kinds = check_kinds(kinds)
    side = np.random.default_rng([seed, 1])       # size and fill apart from the scene's own draws
    if width is None:
        width = int(side.integers(WIDTHS[0], WIDTHS[1] + 1))
    size = 5 if side.random() < 0.6 else 7
    layout = None
    if side.random() < HALF_BUILT:
        layout = render.random_layout(side, size=size, fill=float(side.uniform(*HALF_FILL)))
    return tables.make_hard_scene(seed, int(width), int(width) * 3 // 4, size=size, layout=layout,
                                  kinds=kinds, tiles_clear=ring + CLEAR_MARGIN, **scene_kw)


def ring_labels(scene: tables.HardScene, ring: int):
    """Terrain indices, crowns and a beyond-the-kingdom mask of the grid ``ring`` squares larger
    than ``scene``'s kingdom, row by row: the kingdom's labels inside, ``empty`` beyond."""
    n = scene.size
    side = n + 2 * ring
    terrain = np.full((side, side), TERRAINS.index("empty"), np.int64)
    crowns = np.zeros((side, side), np.int64)
    terrain[ring:ring + n, ring:ring + n] = [[TERRAINS.index(t) for t in row] for row in scene.terrain]
    crowns[ring:ring + n, ring:ring + n] = np.asarray(scene.crowns, np.int64)
    beyond = np.ones((side, side), bool)
    beyond[ring:ring + n, ring:ring + n] = False
    return terrain.reshape(-1), crowns.reshape(-1), beyond.reshape(-1)


def scene_squares(scene: tables.HardScene, ring: int, cfg: dict, pad: int):
    """Crops (padded by ``pad``), terrain indices, crowns and the beyond-the-kingdom mask of the
    squares of ``scene``'s grid grown by ``ring`` whose centre lies on the photo."""
    from vision.lab.training.squares import photo_training_crops

    if ring < 0:
        raise ValueError(f"ring is a number of squares, 0 or more, got {ring}")
    side = scene.size + 2 * ring
    big = ring_corners(scene.corners, scene.size, scene.size, ring)
    crops = photo_training_crops(scene.image, big, side, side, cfg, pad)
    terrain, crowns, beyond = ring_labels(scene, ring)
    on = ~centres_off_photo(scene.image.shape, big, side, side).reshape(-1)
    return crops[on], terrain[on], crowns[on], beyond[on]


def table_examples(n_boards: int, cfg: dict, ring: int, seed: int = 0, pad: int | None = None,
                   kinds=TRAIN_KINDS, log=None):
    """``n_boards`` kingdoms on hard tables as training squares: (crops, terrain index, crowns),
    or None for no boards. Seeds ``FIRST_SEED + seed * SEEDS_PER_RUN`` on."""
    from vision.lab.training.squares import AUG_PAD

    pad = AUG_PAD if pad is None else pad
    if n_boards > SEEDS_PER_RUN:
        raise ValueError(f"at most {SEEDS_PER_RUN} boards a run, got {n_boards}")
    first = FIRST_SEED + int(seed) * SEEDS_PER_RUN
    xs, ts, cs = [], [], []
    for k in range(int(n_boards)):
        scene = table_scene(first + k, ring, kinds)
        x, t, c, _beyond = scene_squares(scene, ring, cfg, pad)
        xs.append(x)
        ts.append(t)
        cs.append(c)
    if not xs:
        return None
    x, t, c = np.concatenate(xs), np.concatenate(ts), np.concatenate(cs)
    if log:
        empty = int(np.sum(t == TERRAINS.index("empty")))
        log(f"added {len(x)} squares of {n_boards} kingdoms on hard tables ({empty} of them table)")
    return x, t, c
