"""vision.grid.refine: per-square shifts from tile edges."""
from __future__ import annotations

import numpy as np

from vision import config
from vision.grid import refine


def _cfg(**kw):
    cfg = config.load()
    cfg["grid"].update({"enabled": True, **kw})
    return cfg


def _board(rows, cols, cell, shifts):
    """Grey squares with dark seams, square (r, c) drawn shifted by shifts[(r, c)] (over its
    neighbours, as a pushed tile hides their edge in a photo)."""
    img = np.full((rows * cell, cols * cell, 3), 40, np.uint8)
    cells = [(r, c) for r in range(rows) for c in range(cols)]
    cells.sort(key=lambda rc: rc in shifts)  # shifted squares are laid last, on top
    for r, c in cells:
        if True:
            dx, dy = shifts.get((r, c), (0, 0))
            x0, y0 = c * cell + 1 + dx, r * cell + 1 + dy
            img[max(0, y0):y0 + cell - 2, max(0, x0):x0 + cell - 2] = 120 + 80 * ((r + c) % 2)
    return img


def test_no_shift_on_a_perfect_grid():
    off = refine(_board(5, 5, 60, {}), 5, 5, 60, _cfg())
    assert off.shape == (5, 5, 2)
    assert np.abs(off).max() <= 1


def test_shift_is_bounded():
    off = refine(np.random.default_rng(0).integers(0, 255, (300, 300, 3), np.uint8), 5, 5, 60, _cfg())
    assert np.abs(off).max() <= 0.15 * 60 + 1


def test_disabled_in_config_gives_zeros():
    off = refine(_board(5, 5, 60, {(2, 2): (8, -6)}), 5, 5, 60, _cfg(enabled=False))
    assert off.shape == (5, 5, 2) and not off.any()
