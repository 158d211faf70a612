"""Hard tables: kingdoms photographed on tables that look like tiles, and how well the reader frames them.

Three parts, all driven by a seeded ``numpy.random.Generator``:

- ``table_surface(kind, h, w, rng, palette=None, unit=None)``: a procedural table top. ``kind`` is
  one of ``TABLE_KINDS`` (plain cloth, felt play mat, wood, stripes, checks, printed cloth) or
  ``UNSEEN_KINDS`` (tartan, camouflage blotches, a cutting mat's grid, marble: drawn only by name),
  ``palette`` one of ``PALETTES`` (named colour ranges, several of them a terrain's own colours).
  Keep kinds, palettes and seeds apart between training and measuring: ``MEASURE_SEEDS_FROM``.
- ``make_hard_scene(rng, width=4000, height=3000, ...) -> HardScene``: a rendered kingdom (5x5 or
  7x7, 3D castle) on such a table, with clutter (stray dominoes and loose tiles, a score pad, a box
  lid, meeples, a hand and sleeve at the photo's edge), any rotation, camera tilt, hard shadows,
  glare, a colour cast, mild blur and noise. The truth: outer corners in photo pixels (the reader's
  order, ``vision.synth.top_first``), grid size, terrain and crowns per square as seen in the photo.
- ``measure(reader, seeds, ...)``: per scene, found or not, grid size right, outline corner error
  (``vision.find.detect.corner_error``), squares read off the kingdom, squares read wrong, total exact,
  wrong totals with or without a flagged wrong square; ``summarise`` adds them up.

``python3 -m vision.lab.scenes.hard_tables --n 40 --seed 9000 --out DIR`` writes the figures (``tables.json``)
and a few downscaled example photos (true outline green, the reader's red) to ``DIR``;
``--boards aau [--groups aau:1,aau:5]`` puts the AAU dev photos (real tile art) on the tables
instead of drawn kingdoms.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from engine.kingdom import BASE_TERRAINS, SIZES
from vision.lab.scenes import render

from vision.lab.scenes import synth
from vision.find.detect import corner_error
from vision.lab.evaluation.evaluate import score

# Seeds from here on are for measuring; a training set drawn with this module must stay below.
MEASURE_SEEDS_FROM = 9000

TABLE_KINDS = ("plain", "felt", "wood", "stripes", "checks", "print")
# Kinds drawn only when asked for by name (never by default, never for training): tables whose look
# no network here was shaped on, to measure the detector on a table it has never seen. Kept out of
# TABLE_KINDS so that a seed gives the same scene as before they were added.
UNSEEN_KINDS = ("tartan", "camo", "grid", "marble")
# Kinds drawn only for training a network, when asked for by name: more variety for the tile
# network (scattered shapes of every size, tile-sized squares in terrain colours among them),
# kept apart from every kind measured by default (a network trained on them is still measured
# on print, tartan, camo, grid and marble, which it never saw).
TRAIN_ONLY_KINDS = ("motif",)
ALL_KINDS = TABLE_KINDS + UNSEEN_KINDS + TRAIN_ONLY_KINDS

# Named colour ranges, OpenCV HSV (hue 0-179, saturation and value 0-255): (lo, hi) each.
PALETTES = {
    "felt_green": ((45, 75), (110, 220), (70, 160)),     # a green felt play mat (forest-like)
    "olive": ((24, 40), (90, 200), (60, 150)),           # olive felt (grassland / swamp-like)
    "grass_green": ((35, 55), (90, 200), (120, 210)),    # light green (grassland)
    "lake_blue": ((95, 115), (120, 240), (90, 210)),     # blue mat (lakes)
    "field_yellow": ((20, 30), (120, 230), (170, 245)),  # yellow (fields)
    "ochre": ((12, 22), (130, 220), (120, 200)),         # ochre (fields, swamp)
    "mine_grey": ((0, 179), (0, 30), (40, 150)),         # grey (mines)
    "swamp_brown": ((10, 20), (60, 140), (90, 170)),     # beige-brown (swamp)
    "red": ((0, 8), (120, 230), (90, 200)),
    "purple": ((125, 155), (60, 160), (60, 170)),
    "white": ((0, 179), (0, 25), (200, 245)),
    "black": ((0, 179), (0, 60), (15, 50)),
    "any": ((0, 179), (30, 255), (40, 240)),
    # wood tints
    "wood_pale": ((15, 24), (50, 110), (190, 240)),      # birch, maple
    "wood_honey": ((12, 20), (110, 180), (150, 215)),    # oak, pine
    "wood_yellow": ((18, 26), (130, 200), (170, 235)),   # yellow-lacquered pine
    "wood_red": ((4, 12), (120, 200), (90, 160)),        # cherry, mahogany
    "wood_dark": ((8, 18), (90, 170), (45, 100)),        # walnut
    "wood_grey": ((10, 25), (10, 50), (110, 190)),       # grey-washed
}
TERRAIN_PALETTES = ("felt_green", "olive", "grass_green", "lake_blue", "field_yellow", "ochre",
                    "mine_grey", "swamp_brown")
WOOD_PALETTES = ("wood_pale", "wood_honey", "wood_yellow", "wood_red", "wood_dark", "wood_grey")
# palettes each kind draws from when none is given
KIND_PALETTES = {
    "plain": TERRAIN_PALETTES + ("red", "purple", "white", "black", "any"),
    "felt": ("felt_green", "olive", "grass_green", "lake_blue", "mine_grey", "black", "red"),
    "wood": WOOD_PALETTES + ("field_yellow", "ochre"),
    "stripes": TERRAIN_PALETTES + ("red", "white", "black", "any"),
    "checks": TERRAIN_PALETTES + ("red", "white", "black", "any"),
    "print": TERRAIN_PALETTES + ("red", "purple", "white", "any"),
    "tartan": TERRAIN_PALETTES + ("red", "white", "black", "any"),
    "camo": TERRAIN_PALETTES,
    "grid": ("felt_green", "grass_green", "lake_blue", "mine_grey", "white", "black", "field_yellow"),
    "marble": ("white", "mine_grey", "black", "felt_green", "swamp_brown"),
    "motif": TERRAIN_PALETTES + WOOD_PALETTES + ("red", "purple", "white", "black", "any"),
}
CLUTTER = ("dominoes", "draft_row", "tiles", "score_pad", "box_lid", "meeples", "hand")
TILE_CLUTTER = ("dominoes", "draft_row", "tiles")   # clutter drawn with the kingdom's own tiles


@dataclass(frozen=True)
class HardScene:
    """A generated photo and its truth (terrain and crowns in the photo's orientation: row 0 runs
    along ``corners[0] -> corners[1]``)."""

    image: np.ndarray                # H x W x 3 BGR uint8
    corners: np.ndarray              # (4, 2) float32, tl, tr, br, bl as the reader orders them
    size: int                        # 5 or 7
    terrain: tuple                   # size x size terrain names
    crowns: tuple                    # size x size ints
    table: str                       # one of TABLE_KINDS
    palette: str                     # the table's main palette
    clutter: tuple = ()              # what lies on the table besides the kingdom
    seed: int | None = None
    extra: dict = field(default_factory=dict)   # rotation, tilt, turns, lighting
    tiles: np.ndarray | None = None  # H x W uint8, 255 on the kingdom's tiles (``tile_mask=True``)


def kind_names(text: str) -> tuple:
    """The names in a comma-separated list, stripped, each once, in order (empty names left out)."""
    return tuple(dict.fromkeys(k.strip() for k in text.split(",") if k.strip()))


def parse_kinds(text: str | None) -> tuple:
    """Table kinds named on a command line: comma-separated kinds of ``ALL_KINDS``, ``unseen``
    (``UNSEEN_KINDS``), ``all`` (every kind measured: ``TABLE_KINDS`` and ``UNSEEN_KINDS``), or nothing for the usual ``TABLE_KINDS``; ``ValueError``
    naming the choices otherwise."""
    text = (text or "").strip()
    if not text:
        return TABLE_KINDS
    if text in ("unseen", "all"):
        return UNSEEN_KINDS if text == "unseen" else TABLE_KINDS + UNSEEN_KINDS
    kinds = kind_names(text)
    bad = [k for k in kinds if k not in ALL_KINDS]
    if bad or not kinds:
        raise ValueError(f"unknown table kind {', '.join(bad) or '(none given)'}: name kinds "
                         f"among {', '.join(ALL_KINDS)} (comma-separated), or 'unseen' or 'all'")
    return kinds


def _check_choice(name: str, value, allowed) -> None:
    if value is not None and value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(allowed)}, got {value!r}")


# --------------------------------------------------------------------------- colours and noise

def palette_colour(palette: str, rng) -> np.ndarray:
    """A BGR colour (float32, 0-255) drawn from the named ``palette``."""
    _check_choice("palette", palette, tuple(PALETTES))
    rng = render.as_rng(rng)
    (h0, h1), (s0, s1), (v0, v1) = PALETTES[palette]
    hsv = np.array([[[rng.uniform(h0, h1), rng.uniform(s0, s1), rng.uniform(v0, v1)]]], np.float32)
    hsv = np.clip(np.round(hsv), 0, [179, 255, 255]).astype(np.uint8)
    return cv2.cvtColor(hsv, cv2.COLOR_HSV2BGR)[0, 0].astype(np.float32)


def _noise(h: int, w: int, scale: float, rng) -> np.ndarray:
    """Smooth zero-mean noise of unit spread whose blobs are about ``scale`` pixels across."""
    nh, nw = max(2, int(h / max(scale, 1))) + 1, max(2, int(w / max(scale, 1))) + 1
    small = rng.normal(0, 1, (nh, nw)).astype(np.float32)
    return cv2.resize(small, (w, h), interpolation=cv2.INTER_CUBIC)


def _log_uniform(rng, lo: float, hi: float) -> float:
    return float(math.exp(rng.uniform(math.log(lo), math.log(hi))))


def _turned_coords(h: int, w: int, angle: float):
    """Pixel coordinates turned by ``angle`` radians: (along, across)."""
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    c, s = math.cos(angle), math.sin(angle)
    return xx * c + yy * s, -xx * s + yy * c


# --------------------------------------------------------------------------- table surfaces

def _plain(h, w, rng, pal, unit):
    base = palette_colour(pal, rng)
    shade = (1 + 0.035 * _noise(h, w, unit * 0.6, rng) + 0.025 * _noise(h, w, 2, rng))
    if rng.random() < 0.6:  # creases: long soft folds in one direction
        along, across = _turned_coords(h, w, rng.uniform(0, math.pi))
        folds = np.sin(across / (unit * rng.uniform(0.2, 0.6)) * 2 * math.pi + _noise(h, w, unit, rng))
        shade += 0.05 * folds ** 5
    return base[None, None, :] * shade[..., None]


def _felt(h, w, rng, pal, unit):
    base = palette_colour(pal, rng)
    fuzz = cv2.GaussianBlur(rng.normal(0, 1, (h, w)).astype(np.float32), (0, 0), 0.8)
    shade = 1 + 0.07 * fuzz + 0.05 * _noise(h, w, unit * 0.4, rng)
    img = base[None, None, :] * shade[..., None]
    if rng.random() < 0.5:  # a play mat's printed border or zone lines
        colour = tuple(float(v) for v in np.clip(base * rng.uniform(1.3, 1.8), 0, 255))
        thick = max(1, int(unit * rng.uniform(0.004, 0.015)))
        for _ in range(int(rng.integers(1, 4))):
            ang = rng.uniform(0, math.pi)
            px, py = rng.uniform(0, w), rng.uniform(0, h)
            dx, dy = math.cos(ang) * 4 * (h + w), math.sin(ang) * 4 * (h + w)
            cv2.line(img, (int(px - dx), int(py - dy)), (int(px + dx), int(py + dy)), colour, thick,
                     cv2.LINE_AA)
    return img


def _wood(h, w, rng, pal, unit):
    base = palette_colour(pal, rng)
    turn = rng.uniform(0, math.pi)
    along, across = _turned_coords(h, w, turn)
    period = unit * rng.uniform(0.006, 0.03)
    warp = _noise(h, w, unit * 0.25, rng) * period * rng.uniform(1.5, 5)
    grain = np.sin((across + warp + 0.01 * along) * 2 * math.pi / period)
    streak = _noise(h, w, period * 0.7, rng)
    shade = 1 + rng.uniform(0.04, 0.1) * grain + 0.05 * streak + 0.04 * _noise(h, w, unit * 0.5, rng)
    plank = unit * rng.uniform(0.12, 0.45)
    index = np.floor((across - across.min()) / plank).astype(np.int32)
    tones = rng.uniform(0.9, 1.1, int(index.max()) + 1).astype(np.float32)
    shade *= tones[index]
    joint_w = max(1.0, unit * 0.003) / plank
    joint = np.abs(((across - across.min()) / plank) % 1.0 - 0.5) > 0.5 - joint_w / 2
    shade[joint] *= 0.6
    img = base[None, None, :] * shade[..., None]
    for _ in range(int(rng.integers(0, 5))):  # knots
        cx, cy = int(rng.uniform(0, w)), int(rng.uniform(0, h))
        ax = max(2, int(unit * rng.uniform(0.01, 0.04)))
        cv2.ellipse(img, (cx, cy), (ax, max(1, ax // 3)), math.degrees(turn), 0, 360,
                    tuple(float(v) for v in base * 0.55), -1, cv2.LINE_AA)
    return img


def _two_colours(rng, pal):
    """The palette's colour and a partner: a light, a dark or another palette's colour."""
    first = palette_colour(pal, rng)
    pick = rng.random()
    if pick < 0.4:
        second = palette_colour("white", rng)
    elif pick < 0.6:
        second = palette_colour("black", rng)
    else:
        second = palette_colour(str(rng.choice(list(KIND_PALETTES["stripes"]))), rng)
    return first, second


def _stripes(h, w, rng, pal, unit):
    along, across = _turned_coords(h, w, rng.uniform(0, math.pi))
    period = _log_uniform(rng, 0.02, 0.6) * unit
    colours = list(_two_colours(rng, pal))
    if rng.random() < 0.35:
        colours.append(palette_colour(str(rng.choice(list(PALETTES))), rng))
    bounds = np.cumsum(rng.dirichlet(np.ones(len(colours)) * 2))
    phase = (across / period) % 1.0
    index = np.searchsorted(bounds, phase).clip(0, len(colours) - 1)
    img = np.stack(colours)[index]
    img = cv2.GaussianBlur(img, (0, 0), max(0.5, period * 0.02))
    return img * (1 + 0.03 * _noise(h, w, 2, rng))[..., None]


def _checks(h, w, rng, pal, unit):
    along, across = _turned_coords(h, w, rng.uniform(0, math.pi))
    period = _log_uniform(rng, 0.03, 0.5) * unit
    a = ((along / period) % 1.0) < 0.5
    b = ((across / period) % 1.0) < 0.5
    first, second = _two_colours(rng, pal)
    if rng.random() < 0.5:  # gingham: where the two stripe sets cross the colour is strongest
        mid = 0.5 * (first + second)
        img = np.where((a & b)[..., None], first, np.where((a ^ b)[..., None], mid, second))
    else:  # a checkerboard of two colours
        img = np.where((a ^ b)[..., None], first, second)
    img = cv2.GaussianBlur(img.astype(np.float32), (0, 0), max(0.5, period * 0.02))
    return img * (1 + 0.03 * _noise(h, w, 2, rng))[..., None]


def _print(h, w, rng, pal, unit):
    base = palette_colour(pal, rng)
    img = np.empty((h, w, 3), np.float32)
    img[:] = base
    other = [palette_colour(str(rng.choice(list(PALETTES))), rng) for _ in range(3)]
    step = _log_uniform(rng, 0.04, 0.3) * unit
    if rng.random() < 0.5:  # polka dots on a (staggered) grid
        r = max(1, int(step * rng.uniform(0.12, 0.3)))
        colour = tuple(float(v) for v in other[0])
        for k, y in enumerate(np.arange(0, h + step, step)):
            shift = step / 2 if k % 2 and rng.random() < 0.9 else 0
            for x in np.arange(-step, w + step, step):
                cv2.circle(img, (int(x + shift), int(y)), r, colour, -1, cv2.LINE_AA)
    else:  # flowers: petals round a centre, scattered, with leaves
        n = int(min(4000, (h * w) / (step * step) * rng.uniform(0.5, 1.2)))
        for _ in range(n):
            cx, cy = rng.uniform(0, w), rng.uniform(0, h)
            size = step * rng.uniform(0.15, 0.35)
            petal = tuple(float(v) for v in other[int(rng.integers(0, 2))])
            turn = rng.uniform(0, 2 * math.pi)
            petals = int(rng.integers(4, 7))
            for k in range(petals):
                t = turn + 2 * math.pi * k / petals
                px, py = cx + math.cos(t) * size * 0.6, cy + math.sin(t) * size * 0.6
                cv2.ellipse(img, (int(px), int(py)), (max(1, int(size * 0.5)), max(1, int(size * 0.28))),
                            math.degrees(t), 0, 360, petal, -1, cv2.LINE_AA)
            cv2.circle(img, (int(cx), int(cy)), max(1, int(size * 0.25)),
                       tuple(float(v) for v in other[2]), -1, cv2.LINE_AA)
    return img * (1 + 0.03 * _noise(h, w, 2, rng) + 0.03 * _noise(h, w, unit * 0.5, rng))[..., None]


def _tartan(h, w, rng, pal, unit):
    """Plaid: bands of several widths and colours across and along, woven (their average), with
    a fine diagonal twill."""
    along, across = _turned_coords(h, w, rng.uniform(0, math.pi))
    first, second = _two_colours(rng, pal)
    colours = np.stack([first, second, palette_colour(str(rng.choice(list(PALETTES))), rng),
                        0.5 * (first + second)])
    period = _log_uniform(rng, 0.06, 0.6) * unit

    def bands(coord):
        n = int(rng.integers(3, 7))
        bounds = np.cumsum(rng.dirichlet(np.ones(n)))
        which = rng.integers(0, len(colours), n)
        index = np.searchsorted(bounds, (coord / period) % 1.0).clip(0, n - 1)
        return colours[which[index]]

    img = 0.5 * (bands(across) + bands(along))
    twill = np.sin((along + across) * 2 * math.pi / max(2.0, period * 0.03))
    img = img * (1 + 0.04 * twill)[..., None]
    return cv2.GaussianBlur(img.astype(np.float32), (0, 0), max(0.5, period * 0.01))


def _camo(h, w, rng, pal, unit):
    """Blotches of three to five terrain colours about a tile across or smaller (camouflage
    print): a table made of the kingdom's own colours in its own shapes."""
    colours = [palette_colour(pal, rng)] + [
        palette_colour(str(rng.choice(list(TERRAIN_PALETTES))), rng)
        for _ in range(int(rng.integers(2, 5)))]
    scale = _log_uniform(rng, 0.04, 0.3) * unit
    field_ = _noise(h, w, scale, rng) + 0.35 * _noise(h, w, scale / 3, rng)
    cuts = np.quantile(field_[::8, ::8], np.linspace(0, 1, len(colours) + 1)[1:-1])
    index = np.searchsorted(cuts, field_)
    img = np.stack(colours)[index]
    img = cv2.GaussianBlur(img.astype(np.float32), (0, 0), max(0.5, scale * 0.03))
    return img * (1 + 0.04 * _noise(h, w, 2, rng))[..., None]


def _grid(h, w, rng, pal, unit):
    """A cutting mat or graph paper: thin lines at one pitch both ways, every fifth or tenth
    line bolder (a pitch near a square's side draws seams a table should not have)."""
    base = palette_colour(pal, rng)
    line = palette_colour("white", rng) if rng.random() < 0.7 else base * rng.uniform(0.4, 0.7)
    along, across = _turned_coords(h, w, rng.uniform(0, math.pi))
    pitch = _log_uniform(rng, 0.04, 0.35) * unit
    thin = max(0.8, pitch * rng.uniform(0.02, 0.06))
    major = int(rng.choice([5, 10]))
    strength = np.zeros((h, w), np.float32)
    for coord in (along, across):
        d = np.abs(((coord / pitch + 0.5) % 1.0) - 0.5) * pitch        # pixels to the nearest line
        k = np.round(coord / pitch).astype(np.int64)
        width = np.where(k % major == 0, thin * 2.5, thin)
        strength = np.maximum(strength, np.clip(width / 2 + 0.5 - d, 0, 1))
    img = base[None, None, :] * (1 - strength[..., None]) + line[None, None, :] * strength[..., None]
    return img * (1 + 0.03 * _noise(h, w, 2, rng) + 0.03 * _noise(h, w, unit * 0.5, rng))[..., None]


def _marble(h, w, rng, pal, unit):
    """Stone: a pale or dark ground with winding veins and clouds."""
    base = palette_colour(pal, rng)
    vein = base * rng.uniform(0.35, 0.7) if base.mean() > 110 else np.minimum(base * 2.5 + 60, 255)
    along, across = _turned_coords(h, w, rng.uniform(0, math.pi))
    turb = (_noise(h, w, unit * 0.3, rng) + 0.5 * _noise(h, w, unit * 0.1, rng)
            + 0.25 * _noise(h, w, unit * 0.03, rng))
    wave = np.sin(across / (unit * rng.uniform(0.15, 0.6)) * 2 * math.pi + rng.uniform(2, 5) * turb)
    veins = np.clip(1 - np.abs(wave) / rng.uniform(0.05, 0.15), 0, 1) ** 2
    cloud = 1 + 0.06 * _noise(h, w, unit * 0.2, rng)
    img = base[None, None, :] * cloud[..., None] * (1 - veins[..., None]) + vein[None, None, :] * veins[..., None]
    return img * (1 + 0.02 * _noise(h, w, 2, rng))[..., None]


def _shape(img, kind: str, cx: float, cy: float, size: float, turn: float, colour) -> None:
    """One motif of ``kind`` about ``size`` px across, centred at (cx, cy), turned by ``turn``
    radians, drawn filled (a ring: outlined) in ``colour``."""
    c, s = math.cos(turn), math.sin(turn)

    def poly(points):
        pts = [(cx + x * c - y * s, cy + x * s + y * c) for x, y in points]
        cv2.fillPoly(img, [np.round(np.array(pts) * 16).astype(np.int32)], colour, cv2.LINE_AA, 4)

    r = size / 2
    if kind == "square":
        poly([(-r, -r), (r, -r), (r, r), (-r, r)])
    elif kind == "bar":
        poly([(-r, -r * 0.3), (r, -r * 0.3), (r, r * 0.3), (-r, r * 0.3)])
    elif kind == "triangle":
        poly([(0, -r), (r * 0.87, r * 0.5), (-r * 0.87, r * 0.5)])
    elif kind == "diamond":
        poly([(0, -r), (r * 0.6, 0), (0, r), (-r * 0.6, 0)])
    elif kind == "cross":
        poly([(-r, -r * 0.25), (r, -r * 0.25), (r, r * 0.25), (-r, r * 0.25)])
        poly([(-r * 0.25, -r), (r * 0.25, -r), (r * 0.25, r), (-r * 0.25, r)])
    elif kind == "ring":
        cv2.circle(img, (int(cx), int(cy)), max(1, int(r * 0.8)), colour,
                   max(1, int(r * 0.3)), cv2.LINE_AA)
    else:   # a blob: an ellipse
        cv2.ellipse(img, (int(cx), int(cy)), (max(1, int(r)), max(1, int(r * 0.6))),
                    math.degrees(turn), 0, 360, colour, -1, cv2.LINE_AA)


MOTIFS = ("square", "bar", "triangle", "diamond", "cross", "ring", "blob")


def _motif(h, w, rng, pal, unit):
    """Printed cloth of shapes (squares, bars, triangles, diamonds, crosses, rings, blobs) in
    two to four colours, from specks to about two tiles across, scattered or in rows; the
    colours often a terrain's and a tile-sized square among the shapes (training only)."""
    base = palette_colour(pal, rng)
    img = np.empty((h, w, 3), np.float32)
    img[:] = base
    others = [palette_colour(str(rng.choice(list(PALETTES))), rng)
              if rng.random() < 0.5 else palette_colour(str(rng.choice(TERRAIN_PALETTES)), rng)
              for _ in range(int(rng.integers(1, 4)))]
    kinds = [str(k) for k in rng.choice(MOTIFS, int(rng.integers(1, 4)), replace=False)]
    size = _log_uniform(rng, 0.02, 0.35) * unit
    spread = rng.uniform(0.0, 0.5)             # sizes vary this much (log) around ``size``
    step = size * rng.uniform(1.1, 3.0)
    least = math.sqrt(h * w / 6000.0)           # at most about 6000 shapes on the table
    if step < least:
        size, step = size * least / step, least
    turned = rng.random() < 0.5                 # each shape at its own angle, or all alike
    angle = rng.uniform(0, math.pi)
    if rng.random() < 0.5:                      # in rows (a regular print), a little jitter
        ca, sa = math.cos(angle), math.sin(angle)
        reach = int((h + w) / step) + 2
        i, j = np.meshgrid(np.arange(-reach, reach + 1), np.arange(-reach, reach + 1))
        xs = w / 2 + (i * ca - j * sa).ravel() * step
        ys = h / 2 + (i * sa + j * ca).ravel() * step
        keep = (xs > -step) & (xs < w + step) & (ys > -step) & (ys < h + step)
        xs, ys = xs[keep], ys[keep]
        centres = list(zip(xs + rng.normal(0, step * 0.05, len(xs)),
                           ys + rng.normal(0, step * 0.05, len(ys))))
    else:                                       # scattered
        n = int(h * w / (step * step))
        centres = list(zip(rng.uniform(0, w, n), rng.uniform(0, h, n)))
    for k, (x, y) in enumerate(centres):
        one = size * math.exp(rng.normal(0, spread)) if spread else size
        _shape(img, kinds[k % len(kinds)] if not turned else str(rng.choice(kinds)), x, y, one,
               rng.uniform(0, 2 * math.pi) if turned else angle,
               tuple(float(v) for v in others[int(rng.integers(0, len(others)))]))
    img = cv2.GaussianBlur(img, (0, 0), max(0.5, size * 0.01))
    return img * (1 + 0.03 * _noise(h, w, 2, rng) + 0.03 * _noise(h, w, unit * 0.5, rng))[..., None]


_SURFACES = {"plain": _plain, "felt": _felt, "wood": _wood, "stripes": _stripes,
             "checks": _checks, "print": _print, "tartan": _tartan, "camo": _camo,
             "grid": _grid, "marble": _marble, "motif": _motif}


def pick_table(rng, kind: str | None = None, palette: str | None = None,
               kinds=TABLE_KINDS) -> tuple[str, str]:
    """``(kind, palette)``: the given ones, or drawn (``kind`` from ``kinds``, the palette from
    ``KIND_PALETTES[kind]``)."""
    _check_choice("table kind", kind, ALL_KINDS)
    _check_choice("palette", palette, tuple(PALETTES))
    for k in kinds:
        _check_choice("table kind", k, ALL_KINDS)
    rng = render.as_rng(rng)
    kind = kind or str(rng.choice(list(kinds)))
    palette = palette or str(rng.choice(list(KIND_PALETTES[kind])))
    return kind, palette


def table_surface(kind: str, h: int, w: int, rng, palette: str | None = None,
                  unit: float | None = None) -> np.ndarray:
    """An ``h x w`` BGR uint8 table top of ``kind`` (one of ``ALL_KINDS``) in ``palette`` (one of
    ``PALETTES``; default drawn from ``KIND_PALETTES[kind]``). ``unit``: pixels per kingdom side, the
    scale patterns are drawn at (stripe widths, planks, dots); default a third of the shorter side."""
    _check_choice("table kind", kind, ALL_KINDS)
    if int(h) < 8 or int(w) < 8:
        raise ValueError(f"a table surface needs at least 8 x 8 pixels, got {h} x {w}")
    rng = render.as_rng(rng)
    kind, palette = pick_table(rng, kind, palette)
    unit = float(unit) if unit else min(h, w) / 3
    img = _SURFACES[kind](int(h), int(w), rng, palette, unit)
    return np.clip(img, 0, 255).astype(np.uint8)


# --------------------------------------------------------------------------- clutter

def _paste(img, patch, cx, cy, ang, mask=None):
    """Paste ``patch`` (BGR) turned by ``ang`` radians with its centre at (cx, cy)."""
    h, w = patch.shape[:2]
    M = cv2.getRotationMatrix2D((w / 2, h / 2), -math.degrees(ang), 1.0)
    M[:, 2] += (cx - w / 2, cy - h / 2)
    H, W = img.shape[:2]
    m = np.full((h, w), 255, np.uint8) if mask is None else mask
    where = cv2.warpAffine(m, M, (W, H)) > 127
    img[where] = cv2.warpAffine(patch, M, (W, H))[where]


def _loose_tiles(img, cx, cy, square, ang, rng):
    """One to three single squares (a domino's halves split apart, tiles of another game)."""
    for k in range(int(rng.integers(1, 4))):
        t = str(rng.choice(list(BASE_TERRAINS)))
        tile = render.draw_square(t, int(rng.choice([0, 0, 1, 2])), max(12, int(square)), rng)
        x = cx + math.cos(ang) * square * 1.3 * k
        y = cy + math.sin(ang) * square * 1.3 * k
        a = ang + rng.uniform(-0.4, 0.4)
        synth.shadow(img, synth.poly_rect(x, y, square, square, a), (square * 0.04, square * 0.06),
                      0.4, square * 0.1)
        _paste(img, tile, x, y, a)
    return synth.poly_rect(cx + math.cos(ang) * square * 1.3, cy + math.sin(ang) * square * 1.3,
                            square * 4, square * 1.5, ang)


def _draft_row(img, cx, cy, square, ang, rng):
    """A column of 3-4 dominoes side by side, as the next round's draft lies on the table."""
    n = int(rng.integers(3, 5))
    nx, ny = -math.sin(ang), math.cos(ang)
    for k in range(n):
        off = (k - (n - 1) / 2) * square * 1.15
        synth.draw_loose_domino(img, cx + nx * off, cy + ny * off, 2 * square, ang, rng)
    return synth.poly_rect(cx, cy, 2.2 * square, n * square * 1.2, ang)


def _score_pad(img, cx, cy, size, ang, rng):
    """A score pad: cream paper printed with a table grid, numbers pencilled in."""
    w, h = int(size * 0.7), int(size)
    pad = np.empty((h, w, 3), np.uint8)
    pad[:] = palette_colour("white", rng).astype(np.uint8)
    ink = tuple(int(v) for v in rng.choice([(120, 110, 100), (150, 90, 60), (70, 70, 160)]))
    rows, cols = int(rng.integers(8, 16)), int(rng.integers(3, 7))
    top = int(h * 0.12)
    thick = max(1, int(size / 300))
    for r in range(rows + 1):
        y = top + int((h - top - h * 0.05) * r / rows)
        cv2.line(pad, (int(w * 0.06), y), (int(w * 0.94), y), ink, thick, cv2.LINE_AA)
    for c in range(cols + 1):
        x = int(w * 0.06 + w * 0.88 * c / cols)
        cv2.line(pad, (x, top), (x, int(h * 0.95)), ink, thick, cv2.LINE_AA)
    scale = max(0.3, (h - top) / rows / 40)
    for r in range(rows):
        for c in range(1, cols):
            if rng.random() < 0.7:
                y = top + int((h - top - h * 0.05) * (r + 0.8) / rows)
                x = int(w * 0.06 + w * 0.88 * (c + 0.2) / cols)
                cv2.putText(pad, str(int(rng.integers(0, 90))), (x, y), cv2.FONT_HERSHEY_SCRIPT_SIMPLEX,
                            scale, (60, 60, 60), max(1, int(scale * 2)), cv2.LINE_AA)
    synth.shadow(img, synth.poly_rect(cx, cy, w, h, ang), (size * 0.01, size * 0.015), 0.3, size * 0.03)
    _paste(img, pad, cx, cy, ang)
    return synth.poly_rect(cx, cy, w, h, ang)


def _box_lid(img, cx, cy, size, ang, rng):
    """The game box's lid: printed artwork (smooth colour blobs), a title band, a pale rim."""
    w, h = int(size), int(size * rng.uniform(0.7, 1.0))
    art = np.stack([_noise(h, w, size * 0.15, rng) for _ in range(3)], -1)
    base = np.stack([palette_colour(str(rng.choice(list(PALETTES))), rng) for _ in range(2)])
    mix = (np.tanh(art[..., :1]) + 1) / 2
    lid = base[0] * mix + base[1] * (1 - mix) + 25 * art
    band = slice(int(h * rng.uniform(0.05, 0.2)), int(h * rng.uniform(0.3, 0.4)))
    lid[band] = palette_colour(str(rng.choice(["red", "lake_blue", "field_yellow", "white"])), rng)
    lid = np.clip(lid, 0, 255).astype(np.uint8)
    cv2.putText(lid, "KINGDOMINO", (int(w * 0.08), int(band.stop - (band.stop - band.start) * 0.25)),
                cv2.FONT_HERSHEY_TRIPLEX, max(0.5, w / 700), (40, 40, 40), max(1, int(w / 250)),
                cv2.LINE_AA)
    rim = max(2, int(size * 0.02))
    cv2.rectangle(lid, (0, 0), (w - 1, h - 1), tuple(int(v) for v in palette_colour("white", rng)), rim)
    synth.shadow(img, synth.poly_rect(cx, cy, w, h, ang), (size * 0.03, size * 0.04), 0.5, size * 0.05)
    _paste(img, lid, cx, cy, ang)
    return synth.poly_rect(cx, cy, w, h, ang)


def _meeples(img, cx, cy, size, ang, rng):
    for _ in range(int(rng.integers(1, 5))):
        synth.draw_meeple(img, cx + rng.uniform(-2, 2) * size, cy + rng.uniform(-2, 2) * size, size,
                           rng.uniform(0, 2 * math.pi), rng)
    return synth.poly_rect(cx, cy, size * 5.5, size * 5.5, 0)


def _hand_plan(W: int, H: int, edge: int, along: float, size: float, rng) -> dict:
    """Where a hand and its sleeve reach in from photo edge ``edge`` (0 top, 1 right, 2 bottom,
    3 left) at ``along`` (0-1 of that edge), and their colours; ``footprint`` is what they cover."""
    inward = [(0, 1), (-1, 0), (0, -1), (1, 0)][edge]
    start = [(along * W, 0), (W, along * H), (along * W, H), (0, along * H)][edge]
    ang = math.atan2(inward[1], inward[0]) + rng.uniform(-0.5, 0.5)
    d = np.array([math.cos(ang), math.sin(ang)])
    n = np.array([-d[1], d[0]])
    p0 = np.array(start, float) - d * size * 0.3
    wrist = p0 + d * size * rng.uniform(1.2, 2.0)
    width = size * rng.uniform(0.45, 0.6)
    palm = wrist + d * size * 0.35
    return {"ang": ang, "d": d, "n": n, "p0": p0, "wrist": wrist, "width": width, "palm": palm,
            "size": size, "finger": [rng.uniform(0.35, 0.5) for _ in range(4)],
            "sleeve": palette_colour(str(rng.choice(["red", "lake_blue", "black", "white", "grass_green",
                                                     "any"])), rng),
            "skin": np.clip(palette_colour("wood_pale", rng) * rng.uniform(0.7, 1.05), 0, 255),
            "footprint": np.array([p0 + n * width, palm + d * size * 0.7 + n * width,
                                   palm + d * size * 0.7 - n * width, p0 - n * width]).astype(np.int32)}


def _draw_hand(img, plan: dict) -> None:
    d, n, size, width = plan["d"], plan["n"], plan["size"], plan["width"]
    palm, wrist, p0 = plan["palm"], plan["wrist"], plan["p0"]
    synth.shadow(img, plan["footprint"], (size * 0.08, size * 0.1), 0.4, size * 0.2)
    skin = tuple(float(v) for v in plan["skin"])
    cv2.ellipse(img, (int(palm[0]), int(palm[1])), (int(size * 0.4), int(size * 0.3)),
                math.degrees(plan["ang"]), 0, 360, skin, -1, cv2.LINE_AA)
    for k in range(4):  # fingers, spread a little
        fa = plan["ang"] + (k - 1.5) * 0.18
        root = palm + n * (k - 1.5) * size * 0.14 + d * size * 0.25
        tip = root + np.array([math.cos(fa), math.sin(fa)]) * size * plan["finger"][k]
        cv2.line(img, tuple(int(v) for v in root), tuple(int(v) for v in tip),
                 tuple(v * 0.97 for v in skin), max(2, int(size * 0.11)), cv2.LINE_AA)
    thumb = palm + n * size * 0.35 + d * size * 0.05
    cv2.line(img, tuple(int(v) for v in palm), tuple(int(v) for v in thumb), skin,
             max(2, int(size * 0.13)), cv2.LINE_AA)
    sleeve = tuple(float(v) for v in plan["sleeve"])
    arm = np.array([p0 + n * width / 2, wrist + n * width / 2, wrist - n * width / 2,
                    p0 - n * width / 2]).astype(np.int32)
    cv2.fillPoly(img, [arm], sleeve, cv2.LINE_AA)
    cuff = np.array([wrist - d * size * 0.12 + n * width / 2, wrist + n * width / 2,
                     wrist - n * width / 2, wrist - d * size * 0.12 - n * width / 2]).astype(np.int32)
    cv2.fillPoly(img, [cuff], tuple(v * 0.8 for v in sleeve), cv2.LINE_AA)


def _free(keep_small: np.ndarray, poly, shrink: int = 8) -> bool:
    m = np.zeros_like(keep_small)
    cv2.fillPoly(m, [np.round(np.asarray(poly, np.float64) / shrink).astype(np.int32)], 255)
    return not np.any(m & keep_small)


def add_clutter(scene, keep_small, square: float, rng, kinds, keep_tiles=None) -> list:
    """Clutter around the kingdom, never on it; returns what was placed. ``keep_tiles``: a
    larger keep-out mask (same size as ``keep_small``) for the clutter of ``TILE_CLUTTER``."""
    H, W = scene.shape[:2]
    placed = []
    for kind in kinds:
        for _try in range(25):
            cx, cy = rng.uniform(-0.05 * W, 1.05 * W), rng.uniform(-0.05 * H, 1.05 * H)
            ang = rng.uniform(0, 2 * math.pi)
            if kind == "hand":
                edge = int(rng.integers(0, 4))
                plan = _hand_plan(W, H, edge, rng.uniform(0.1, 0.9), square * rng.uniform(2.0, 3.5), rng)
                if _free(keep_small, plan["footprint"]):
                    _draw_hand(scene, plan)
                    placed.append(kind)
                    break
                continue
            foot = {"dominoes": (2.4 * square, 1.3 * square), "draft_row": (2.6 * square, 5.2 * square),
                    "tiles": (4.5 * square, 1.8 * square), "score_pad": (0.28 * max(W, H),) * 2,
                    "box_lid": (0.42 * max(W, H),) * 2, "meeples": (square * 2.5,) * 2}[kind]
            poly = synth.poly_rect(cx, cy, foot[0] * 1.2, foot[1] * 1.2, ang)
            keep = keep_tiles if keep_tiles is not None and kind in TILE_CLUTTER else keep_small
            if not _free(keep, poly):
                continue
            if kind == "dominoes":
                for k in range(int(rng.integers(1, 3))):
                    synth.draw_loose_domino(scene, cx + k * square * 0.3, cy + k * square * 1.2, 2 * square,
                                             ang + rng.uniform(-0.3, 0.3), rng)
            elif kind == "draft_row":
                _draft_row(scene, cx, cy, square, ang, rng)
            elif kind == "tiles":
                _loose_tiles(scene, cx - math.cos(ang) * square * 1.3, cy - math.sin(ang) * square * 1.3,
                             square, ang, rng)
            elif kind == "score_pad":
                _score_pad(scene, cx, cy, 0.22 * max(W, H), ang, rng)
            elif kind == "box_lid":
                _box_lid(scene, cx, cy, 0.32 * max(W, H), ang, rng)
            else:
                _meeples(scene, cx, cy, square * 0.45, ang, rng)
            placed.append(kind)
            break
    return placed


# --------------------------------------------------------------------------- light

def _hard_shadow(img, rng) -> None:
    """A sharp-edged shadow (a person, a lamp arm, a shelf) across part of the photo."""
    H, W = img.shape[:2]
    k = int(rng.integers(3, 7))
    cx, cy = rng.uniform(-0.2, 1.2) * W, rng.uniform(-0.2, 1.2) * H
    r = rng.uniform(0.25, 0.7) * max(W, H)
    angles = np.sort(rng.uniform(0, 2 * math.pi, k))
    poly = np.stack([cx + r * rng.uniform(0.5, 1.2, k) * np.cos(angles),
                     cy + r * rng.uniform(0.5, 1.2, k) * np.sin(angles)], 1)
    m = np.zeros((H, W), np.uint8)
    cv2.fillPoly(m, [poly.astype(np.int32)], 255)
    m = cv2.GaussianBlur(m, (0, 0), max(1.0, rng.uniform(0.001, 0.006) * W)).astype(np.float32) / 255
    strength = rng.uniform(0.25, 0.55)
    cool = np.array([1.05, 1.0, 0.93], np.float32)  # shade is lit by the sky: a little bluer
    out = img.astype(np.float32) * (1 - strength * m[..., None] * (2 - cool))
    img[:] = np.clip(out, 0, 255).astype(np.uint8)


def _glare(img, rng, near=None, reach: float = 0.0) -> None:
    """A bright, washed-out patch (a lamp or window mirrored in the table or the tiles)."""
    H, W = img.shape[:2]
    if near is not None and rng.random() < 0.7:
        cx, cy = np.asarray(near, float) + rng.uniform(-reach, reach, 2)
    else:
        cx, cy = rng.uniform(0, W), rng.uniform(0, H)
    h, w = H // 8, W // 8
    g = np.zeros((h, w), np.float32)
    axes = (max(1, int(rng.uniform(0.03, 0.12) * w)), max(1, int(rng.uniform(0.02, 0.08) * w)))
    cv2.ellipse(g, (int(cx / 8), int(cy / 8)), axes, rng.uniform(0, 180), 0, 360, 1.0, -1)
    g = cv2.GaussianBlur(g, (0, 0), max(0.5, w * rng.uniform(0.005, 0.03)))
    g = cv2.resize(g, (W, H), interpolation=cv2.INTER_LINEAR)[..., None]
    strength = rng.uniform(0.4, 0.9)
    out = img.astype(np.float32)
    out = out * (1 - strength * g) + strength * g * rng.uniform(225, 255)
    img[:] = np.clip(out, 0, 255).astype(np.uint8)


def _colour_cast(img, rng) -> list:
    gains = np.clip(1 + rng.normal(0, 0.09, 3), 0.75, 1.25).astype(np.float32)
    img[:] = np.clip(img.astype(np.float32) * gains, 0, 255).astype(np.uint8)
    return [round(float(g), 3) for g in gains]


# --------------------------------------------------------------------------- the scene

def _board(rng, size: int, layout: dict | None, cell: int, board: dict | None = None) -> dict:
    if board is not None:
        return board
    if layout is None:
        b = synth.rendered_board(rng, size=size, cell=cell, castle_3d=True)
        return b
    terrain, crowns = layout["terrain"], layout["crowns"]
    img, mask = render.render_board(terrain, crowns, cell=cell, rng=rng, dominoes=layout.get("dominoes"),
                                    return_mask=True, castle_3d=True)
    return {"image": img, "mask": mask, "terrain": terrain, "crowns": crowns}


def _camera(bw, bh, W, H, rng, scale, max_tilt, rotation):
    """Board px -> photo px homography (``vision.synth``'s pinhole camera), shrunk to fit."""
    side = scale * min(W, H)
    dist = side * rng.uniform(1.3, 2.5)
    tilt = float(rng.uniform(0, max_tilt))
    tilt_dir = float(rng.uniform(0, 2 * math.pi))
    margin = 0.03 * min(W, H)
    box = np.array([[0, 0], [bw, 0], [bw, bh], [0, bh]], float)
    for _ in range(30):
        P = synth.project_plane(bw, bh, side, rotation, tilt, tilt_dir, dist)
        pts = synth.apply_h(P, box)
        span = pts.max(0) - pts.min(0)
        if span[0] <= W - 2 * margin and span[1] <= H - 2 * margin:
            break
        side, dist = side * 0.92, dist * 0.92
    lo = margin - pts.min(0)
    hi = np.maximum(lo, np.array([W, H]) - margin - pts.max(0))
    move = rng.uniform(lo, hi)
    Hb = np.array([[1, 0, move[0]], [0, 1, move[1]], [0, 0, 1]]) @ P
    return Hb / Hb[2, 2], tilt


def _table_in_plane(kind, palette, Hb, bw, W, H, rng, max_px: int = 1600):
    """The table drawn in the kingdom's plane (so its pattern shares the camera's perspective),
    then seen through the camera."""
    inv = np.linalg.inv(Hb)
    photo = np.array([[0, 0], [W, 0], [W, H], [0, H]], float)
    plane = synth.apply_h(inv, photo)
    lo = np.maximum(plane.min(0), -4 * bw) - 0.05 * bw
    hi = np.minimum(plane.max(0), 5 * bw) + 0.05 * bw
    k = max(float(np.max(hi - lo)) / max_px, 1e-6)          # board px per texture px
    tw, th = int(math.ceil((hi - lo)[0] / k)) + 2, int(math.ceil((hi - lo)[1] / k)) + 2
    tex = table_surface(kind, th, tw, rng, palette, unit=bw / k)
    S = Hb @ np.array([[k, 0, lo[0]], [0, k, lo[1]], [0, 0, 1]])
    return cv2.warpPerspective(tex, S, (W, H), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)


def placed_board(Hb, bw: int, bh: int):
    """Where the camera ``Hb`` puts a ``bw`` x ``bh`` board image: ``(its four corners in the
    photo (float32), those corners in the reader's order and the board's quarter turns
    (``synth.turns_and_corners``), its mean side in px)``; for both scene generators."""
    box = np.array([[0, 0], [bw, 0], [bw, bh], [0, bh]], float)
    board_pts = synth.apply_h(Hb, box).astype(np.float32)
    corners, turns = synth.turns_and_corners(board_pts)
    side = float(np.mean(np.linalg.norm(board_pts - np.roll(board_pts, -1, 0), axis=1)))
    return board_pts, corners, turns, side


def scene_start(rng, seed: int | None, width: int, height: int):
    """A scene generator's first step: ``(generator, seed, W, H)`` from ``rng`` (a generator or
    an int seed, which is then the scene's ``seed`` unless one is given) and the photo's size;
    ``ValueError`` for a photo under 120 pixels a side."""
    if seed is None and isinstance(rng, (int, np.integer)):
        seed = int(rng)
    W, H = int(width), int(height)
    if min(W, H) < 120:
        raise ValueError(f"the photo must be at least 120 pixels on each side, got {W} x {H}")
    return render.as_rng(rng), seed, W, H


def make_hard_scene(rng=None, width: int = 4000, height: int = 3000, *, size: int | None = None,
                    layout: dict | None = None, table: str | None = None, palette: str | None = None,
                    kinds=TABLE_KINDS, clutter: bool = True, scale: float | None = None,
                    max_tilt: float = 35.0, rotation: float | None = None, lighting: bool = True,
                    seed: int | None = None, tile_mask: bool = False,
                    tiles_clear: float | None = None, board: dict | None = None) -> HardScene:
    """A kingdom on a hard table in a ``width x height`` photo.

    ``rng``: ``numpy.random.Generator`` or an int seed (the same seed gives the same photo).
    ``size``: 5 or 7 (default: 5 three times in five); ``layout``: a kingdom to draw instead of a
    random one (dict ``terrain``, ``crowns`` and optional ``dominoes`` as ``vision.render`` makes).
    ``board``: a board picture to put there instead of drawing one (dict ``image``, ``mask``,
    ``terrain``, ``crowns`` as ``vision.lab.scenes.synth.aau_boards`` gives: a photographed kingdom).
    ``table``/``palette``: the table's kind and colours (default drawn; ``kinds`` limits the draw).
    ``scale``: the kingdom's side as a fraction of the photo's shorter side (default 0.2-0.7).
    ``clutter``: stray dominoes, loose tiles, score pad, box lid, meeples, a hand at the edge.
    ``lighting``: hard shadow, glare, colour cast (mild blur, noise and JPEG always).
    ``tile_mask``: also keep the kingdom's tile mask in photo pixels (``HardScene.tiles``, for
    training labels); it draws nothing and takes no random numbers, so the photo is the same.
    ``tiles_clear``: loose dominoes and tiles (``TILE_CLUTTER``) keep at least this many squares
    of bare table around the kingdom, so a ring of squares around it is table only (training
    labels); default a quarter square, as the rest of the clutter (the photo as drawn before).
    """
    rng, seed, W, H = scene_start(rng, seed, width, height)
    if size is not None and size not in SIZES:
        raise ValueError(f"size must be 5 or 7, got {size}")
    if board is not None and layout is not None:
        raise ValueError("give either layout (a kingdom to draw) or board (a picture), not both")
    if board is not None:
        layout = board
    if layout is not None:
        n = len(layout["terrain"])
        if n not in SIZES or any(len(row) != n for row in layout["terrain"]):
            raise ValueError("layout['terrain'] must be a 5x5 or 7x7 grid (lists of rows)")
        size = n
    size = size or (5 if rng.random() < 0.6 else 7)
    kind, palette = pick_table(rng, table, palette, kinds)
    frac = float(rng.uniform(0.2, 0.7)) if scale is None else float(scale)
    cell = int(np.clip(frac * min(W, H) * 1.2 / size, 16, 320))
    board = _board(rng, size, layout, cell, board)
    img, mask = board["image"], board["mask"]
    bh, bw = img.shape[:2]
    rotation = float(rng.uniform(0, 360)) if rotation is None else float(rotation)
    Hb, tilt = _camera(bw, bh, W, H, rng, frac, max_tilt, rotation)
    board_pts, corners, turns, side = placed_board(Hb, bw, bh)
    square = side / size

    scene = _table_in_plane(kind, palette, Hb, bw, W, H, rng)
    quad = np.zeros((H, W), np.uint8)
    cv2.fillPoly(quad, [np.round(board_pts).astype(np.int32)], 255)
    keep = cv2.resize(quad, (max(1, W // 8), max(1, H // 8)), interpolation=cv2.INTER_NEAREST)
    keep_tiles = None
    if tiles_clear is not None:
        keep_tiles = cv2.dilate(keep, np.ones((3, 3), np.uint8),
                                iterations=max(1, int(math.ceil(square * float(tiles_clear) / 8))))
    keep = cv2.dilate(keep, np.ones((3, 3), np.uint8), iterations=max(1, int(square * 0.25 / 8)))
    placed = []
    if clutter:
        chosen = [str(c) for c in rng.choice(list(CLUTTER), int(rng.integers(2, 6)), replace=False)]
        placed = add_clutter(scene, keep, square, rng, chosen, keep_tiles)

    # the kingdom: soft drop shadow, the tiles' dark edge, the tiles
    tiles = cv2.warpPerspective(mask, Hb, (W, H), flags=cv2.INTER_LINEAR)
    synth.shadow(scene, tiles, (0, 0), 0.35, max(3, side * 0.02))
    edge = np.roll(tiles, max(1, int(side * 0.006)) * (1 if rng.random() < 0.5 else -1), axis=0) > 127
    scene[edge] = (scene[edge] * 0.4).astype(np.uint8)
    warped = cv2.warpPerspective(img, Hb, (W, H), flags=cv2.INTER_LINEAR)
    on = tiles > 127
    scene[on] = warped[on]

    light = {"hard_shadow": False, "glare": 0, "cast": None}
    if lighting:
        if rng.random() < 0.5:
            _hard_shadow(scene, rng)
            light["hard_shadow"] = True
        for _ in range(int(rng.choice([0, 1, 1, 2, 3]))):
            _glare(scene, rng, near=board_pts.mean(0), reach=side * 0.9)
            light["glare"] += 1
        if rng.random() < 0.7:
            light["cast"] = _colour_cast(scene, rng)
    scene = synth.degrade_photo(scene, rng, mild=True)
    terrain = synth.scene_grid(board["terrain"], turns)
    crowns = synth.scene_grid(board["crowns"], turns)
    return HardScene(image=scene, corners=corners, size=size,
                     terrain=tuple(tuple(str(t) for t in row) for row in terrain),
                     crowns=tuple(tuple(int(c) for c in row) for row in crowns),
                     table=kind, palette=palette, clutter=tuple(placed), seed=seed,
                     extra={"rotation": round(rotation, 2), "tilt": round(tilt, 2), "turns": turns,
                            "scale": round(frac, 3), **light},
                     tiles=tiles if tile_mask else None)


# --------------------------------------------------------------------------- measuring

def _reading_obj(reading) -> dict:
    return reading.to_json() if hasattr(reading, "to_json") else dict(reading)


def _square_map(scene: HardScene, obj: dict):
    """For each read square (within the read rectangle): the true square under its centre, or
    None when the centre lies off the kingdom."""
    rows = int(obj.get("rows") or obj["size"])
    cols = int(obj.get("cols") or obj["size"])
    found = np.asarray(obj["corners"], np.float32).reshape(4, 2)
    unit = np.float32([[0, 0], [cols, 0], [cols, rows], [0, rows]])
    to_photo = cv2.getPerspectiveTransform(unit, found)
    n = scene.size
    to_truth = cv2.getPerspectiveTransform(np.asarray(scene.corners, np.float32),
                                           np.float32([[0, 0], [n, 0], [n, n], [0, n]]))
    centres = np.float32([[c + 0.5, r + 0.5] for r in range(rows) for c in range(cols)])
    photo = cv2.perspectiveTransform(centres[None], to_photo)[0]
    truth = cv2.perspectiveTransform(photo[None], to_truth)[0]
    out = {}
    for (x, y), (r, c) in zip(truth, [(r, c) for r in range(rows) for c in range(cols)]):
        inside = 0 <= x < n and 0 <= y < n
        out[(r, c)] = (int(y), int(x)) if inside else None
    return out


def measure_scene(reader, scene: HardScene) -> dict:
    """How ``reader`` (``read(image)`` returning a ``vision.reader.Reading`` or its JSON) did on
    one scene. A ``ValueError`` from the reader is "not found"; any other exception is a crash
    (recorded, not raised: one bad scene must not stop a measurement)."""
    n = scene.size
    true_total = score([list(r) for r in scene.terrain], [list(r) for r in scene.crowns])
    row = {"seed": scene.seed, "table": scene.table, "palette": scene.palette, "size": n,
           "clutter": list(scene.clutter), "true_total": true_total, "found": False,
           "crash": None, "read_size": None, "grid_right": False, "corner_error": None,
           "squares_off": 0, "off_as_tile": 0, "off_as_tile_unflagged": 0, "squares_wrong": 0,
           "squares_missed": 0, "total": None, "total_exact": False, "flagged": False,
           "seconds": None, "off_as_tile_flagged": 0}
    if "challenge" in scene.extra:
        row["challenge"] = scene.extra["challenge"]
    t0 = time.perf_counter()
    try:
        reading = reader.read(scene.image)
    except ValueError as exc:
        row["why"] = f"not found: {exc}"[:120]
        return row
    except Exception as exc:  # noqa: BLE001 -- a crash is a figure to report, not to hide
        row["crash"] = f"{type(exc).__name__}: {exc}"[:200]
        row["why"] = "crash"
        return row
    finally:
        row["seconds"] = round(time.perf_counter() - t0, 3)
    obj = _reading_obj(reading)
    cells = obj["cells"]
    rows = int(obj.get("rows") or obj["size"])
    cols = int(obj.get("cols") or obj["size"])
    row["found"] = True
    row["read_size"] = int(obj["size"])
    row["read_rows_cols"] = [rows, cols]
    row["grid_right"] = int(obj["size"]) == n and rows == n and cols == n
    found = np.asarray(obj["corners"], np.float64).reshape(4, 2)
    row["corner_error"] = round(corner_error(found, np.asarray(scene.corners, np.float64), any_first=True), 4)
    bad = set()
    covered = set()
    review = {tuple(int(v) for v in rc) for rc in obj.get("review", [])}
    for (r, c), where in _square_map(scene, obj).items():
        cell = cells[r][c]
        if where is None:
            row["squares_off"] += 1
            if cell["terrain"] != "empty":
                row["off_as_tile"] += 1
                bad.add((r, c))
                row["off_as_tile_flagged"] += (r, c) in review
            continue
        covered.add(where)
        tr, tc = where
        if cell["terrain"] != scene.terrain[tr][tc] or int(cell["crowns"]) != scene.crowns[tr][tc]:
            row["squares_wrong"] += 1
            bad.add((r, c))
    row["squares_missed"] = sum(1 for r in range(n) for c in range(n)
                                if (r, c) not in covered and scene.terrain[r][c] != "empty")
    total = score([[cell["terrain"] for cell in line] for line in cells],
                  [[int(cell["crowns"]) for cell in line] for line in cells])
    row["total"] = total
    row["total_exact"] = total == true_total
    row["flagged"] = bool(bad & review)
    row["off_as_tile_unflagged"] = row["off_as_tile"] - row["off_as_tile_flagged"]
    row["why"] = _why(row)
    return row


def _why(row: dict) -> str:
    if not row["found"]:
        return "crash" if row["crash"] else "not found"
    parts = []
    if not row["grid_right"]:
        r, c = row.get("read_rows_cols", [row["read_size"]] * 2)
        parts.append(f"read {r}x{c} for {row['size']}x{row['size']}")
    if row["corner_error"] is not None and row["corner_error"] > 0.05:
        parts.append(f"outline off by {row['corner_error']:.2f} of a side")
    if row["off_as_tile"]:
        parts.append(f"{row['off_as_tile']} table square(s) read as tiles "
                     f"({row.get('off_as_tile_unflagged', 0)} not flagged)")
    if row["squares_wrong"]:
        parts.append(f"{row['squares_wrong']} square(s) wrong")
    if not row["total_exact"]:
        parts.append(f"total {row['total']} for {row['true_total']}")
    return "; ".join(parts) or "ok"


def framed(row: dict) -> bool:
    """The kingdom framed right: the right grid, no table square read as a tile, no land missed."""
    return bool(row["grid_right"] and not row["off_as_tile"] and not row["squares_missed"])


def failed(row: dict) -> bool:
    """A failure of the measurement: the wrong grid or a wrong total."""
    return not (row["grid_right"] and row["total_exact"])


def summarise(rows: list) -> dict:
    """Add up ``measure_scene`` rows: counts, corner errors (fractions of a side, over the found
    scenes), wrong totals with and without a flagged wrong square, and the same per table kind.
    ``exact_framed`` counts totals that are exact with the kingdom framed right (``framed``), not
    by luck from a wrong frame."""
    found = [r for r in rows if r["found"]]
    errs = [r["corner_error"] for r in found if r["corner_error"] is not None]
    wrong = [r for r in found if not r["total_exact"]]
    by_kind = {}
    for r in rows:
        k = by_kind.setdefault(r["table"], {"n": 0, "found": 0, "grid_right": 0, "total_exact": 0,
                                            "exact_framed": 0, "failures": 0})
        k["n"] += 1
        k["found"] += r["found"]
        k["grid_right"] += r["grid_right"]
        k["total_exact"] += r["total_exact"]
        k["exact_framed"] += r["total_exact"] and framed(r)
        k["failures"] += failed(r)
    return {
        "n": len(rows),
        "found": len(found),
        "crashed": sum(1 for r in rows if r["crash"]),
        "grid_right": sum(1 for r in rows if r["grid_right"]),
        "total_exact": sum(1 for r in rows if r["total_exact"]),
        "framed": sum(1 for r in rows if framed(r)),
        "exact_framed": sum(1 for r in rows if r["total_exact"] and framed(r)),
        "wrong_total": len(wrong),
        "wrong_total_flagged": sum(1 for r in wrong if r["flagged"]),
        "wrong_total_unflagged": sum(1 for r in wrong if not r["flagged"]),
        "corner_error_mean": round(float(np.mean(errs)), 4) if errs else None,
        "corner_error_median": round(float(np.median(errs)), 4) if errs else None,
        "corner_error_max": round(float(np.max(errs)), 4) if errs else None,
        "squares_off": sum(r["squares_off"] for r in rows),
        "off_as_tile": sum(r["off_as_tile"] for r in rows),
        "off_as_tile_flagged": sum(r.get("off_as_tile_flagged", 0) for r in rows),
        "off_as_tile_unflagged": sum(r.get("off_as_tile_unflagged", 0) for r in rows),
        "squares_wrong": sum(r["squares_wrong"] for r in rows),
        "squares_missed": sum(r["squares_missed"] for r in rows),
        "seconds_mean": round(float(np.mean([r["seconds"] for r in rows if r["seconds"] is not None])), 3)
        if any(r["seconds"] is not None for r in rows) else None,
        "by_table": dict(sorted(by_kind.items())),
        "failures": [{"seed": r["seed"], "table": r["table"], "palette": r["palette"], "why": r["why"]}
                     for r in rows if failed(r)],
    }


def measure(reader, seeds, width: int = 4000, height: int = 3000, on_scene=None, boards=(),
            challenges=None, **scene_kw) -> dict:
    """``{"scenes": [measure_scene rows], "summary": summarise(rows)}`` for one scene per seed.
    ``on_scene(scene, row)`` is called after each (to save examples or print progress).
    ``boards``: photographed boards (``vision.lab.scenes.synth.aau_boards``) put on the tables in turn
    instead of drawn kingdoms. ``challenges``: draw harder scenes instead
    (``vision.lab.scenes.harder_tables.make_harder_scene``), scene i with challenge i modulo their
    number (``scene_kw`` then goes to it)."""
    from vision.lab.scenes import harder_tables

    rows = []
    boards = list(boards)
    for i, seed in enumerate(seeds):
        if boards:
            scene_kw["board"] = boards[i % len(boards)]
        if challenges:
            scene = harder_tables.make_harder_scene(int(seed), width, height,
                                                    challenge=challenges[i % len(challenges)], **scene_kw)
        else:
            scene = make_hard_scene(int(seed), width, height, **scene_kw)
        row = measure_scene(reader, scene)
        rows.append(row)
        if on_scene is not None:
            on_scene(scene, row)
    return {"scenes": rows, "summary": summarise(rows)}


# --------------------------------------------------------------------------- command line

def example_image(scene: HardScene, row: dict | None = None, long_side: int = 1200,
                  found_corners=None) -> np.ndarray:
    """The photo downscaled, the true outline in green and the reader's (if any) in red."""
    H, W = scene.image.shape[:2]
    s = long_side / max(H, W)
    out = cv2.resize(scene.image, (max(1, int(W * s)), max(1, int(H * s))), interpolation=cv2.INTER_AREA)
    cv2.polylines(out, [np.round(scene.corners * s).astype(np.int32)], True, (0, 220, 0), 2, cv2.LINE_AA)
    if found_corners is not None:
        pts = np.asarray(found_corners, np.float64).reshape(4, 2) * s
        cv2.polylines(out, [np.round(pts).astype(np.int32)], True, (0, 0, 255), 2, cv2.LINE_AA)
    if row is not None:
        text = f"{row['seed']} {scene.table}/{scene.palette}: {row['why']}"[:90]
        cv2.putText(out, text, (10, 28), cv2.FONT_HERSHEY_SIMPLEX, 0.7, (255, 255, 255), 3, cv2.LINE_AA)
        cv2.putText(out, text, (10, 28), cv2.FONT_HERSHEY_SIMPLEX, 0.7, (20, 20, 20), 1, cv2.LINE_AA)
    return out


class _Recording:
    """Wraps a reader to keep the corners of its last reading (for the example photos)."""

    def __init__(self, reader):
        self.reader, self.last = reader, None

    def read(self, image):
        self.last = None
        reading = self.reader.read(image)
        self.last = _reading_obj(reading).get("corners")
        return reading


def _aau_boards(groups: str):
    """The AAU dev boards (only ``groups``, comma-separated, when given), or a message saying
    why there are none."""
    from vision.lab.datasets import load_aau

    try:
        photos = load_aau()
    except (FileNotFoundError, OSError) as exc:
        return f"no AAU dev photos ({exc}): --boards aau needs ../shared/datasets"
    want = {g.strip() for g in groups.split(",") if g.strip()}
    unknown = want - {p.group for p in photos}
    if unknown:
        return (f"--groups: no AAU dev kingdom {', '.join(sorted(unknown))} (groups are written "
                f"like aau:12)")
    return synth.aau_boards(photos=[p for p in photos if not want or p.group in want])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m vision.lab.scenes.hard_tables",
                                 description="Measure how the reader frames kingdoms on hard tables.")
    ap.add_argument("--n", type=int, default=40, help="number of scenes (default 40)")
    ap.add_argument("--seed", type=int, default=MEASURE_SEEDS_FROM,
                    help=f"first seed; scene i uses seed + i (default {MEASURE_SEEDS_FROM})")
    ap.add_argument("--out", type=Path, required=True, help="folder for tables.json and example photos")
    ap.add_argument("--width", type=int, default=4000)
    ap.add_argument("--height", type=int, default=3000)
    ap.add_argument("--table", choices=ALL_KINDS, default=None, help="only this table kind")
    ap.add_argument("--kinds", default=None,
                    help="draw the table among these kinds (comma-separated, 'unseen' for "
                         f"{', '.join(UNSEEN_KINDS)}, kinds no network here was trained on, or "
                         "'all'; default the usual kinds)")
    ap.add_argument("--palette", choices=tuple(PALETTES), default=None, help="only this palette")
    ap.add_argument("--scale", type=float, default=None,
                    help="the kingdom's side as a share of the photo's shorter side (default drawn "
                         "0.2-0.7; 0.25 with --max-tilt 45: a small, steep kingdom)")
    ap.add_argument("--max-tilt", type=float, default=35.0,
                    help="the camera's largest tilt in degrees (default 35)")
    ap.add_argument("--examples", type=int, default=8, help="example photos to write (default 8)")
    ap.add_argument("--boards", choices=("drawn", "aau"), default="drawn",
                    help="kingdoms drawn by vision.lab.scenes.render (default), or the AAU dev photos "
                         "(real tile art; needs ../shared)")
    ap.add_argument("--groups", default="",
                    help="with --boards aau: only these kingdom groups (comma-separated, e.g. "
                         "aau:1,aau:5), such as those a network was trained without")
    args = ap.parse_args(argv)
    if args.n < 1:
        ap.error("--n must be at least 1")
    if min(args.width, args.height) < 120:
        ap.error("--width and --height must be at least 120 pixels")
    if args.examples < 0:
        ap.error("--examples must be 0 or more")
    if args.scale is not None and not 0.05 <= args.scale <= 0.9:
        ap.error("--scale must be between 0.05 and 0.9 of the shorter side")
    if not 0 <= args.max_tilt <= 60:
        ap.error("--max-tilt must be between 0 and 60 degrees")
    try:
        kinds = parse_kinds(args.kinds)
    except ValueError as exc:
        ap.error(f"--kinds: {exc}")
    if args.groups and args.boards != "aau":
        ap.error("--groups chooses AAU boards: give it with --boards aau")
    boards = ()
    if args.boards == "aau":
        boards = _aau_boards(args.groups)
        if isinstance(boards, str):
            print(boards, file=sys.stderr)
            return 2
    try:
        args.out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        print(f"cannot write to {args.out}: {exc}", file=sys.stderr)
        return 2
    from vision.reader import Reader

    reader = _Recording(Reader())
    written = []

    def on_scene(scene, row):
        print(f"{row['seed']}  {scene.size}x{scene.size}  {scene.table:<7} {scene.palette:<12} "
              f"{row['why']}", flush=True)
        if len(written) < args.examples and (failed(row) or len(written) < args.examples // 2):
            name = f"scene_{row['seed']}.jpg"
            cv2.imwrite(str(args.out / name), example_image(scene, row, found_corners=reader.last),
                        [cv2.IMWRITE_JPEG_QUALITY, 85])
            written.append(name)

    res = measure(reader, range(args.seed, args.seed + args.n), args.width, args.height,
                  on_scene=on_scene, boards=boards, table=args.table, palette=args.palette,
                  kinds=kinds, scale=args.scale, max_tilt=args.max_tilt)
    res["settings"] = {"n": args.n, "seed": args.seed, "width": args.width, "height": args.height,
                       "table": args.table, "kinds": list(kinds), "palette": args.palette,
                       "scale": args.scale, "max_tilt": args.max_tilt, "examples": written,
                       "boards": [b["name"] for b in boards] or "drawn"}
    try:
        (args.out / "tables.json").write_text(json.dumps(res, indent=1) + "\n", encoding="utf-8")
    except OSError as exc:
        print(f"cannot write to {args.out}: {exc}", file=sys.stderr)
        return 2
    s = res["summary"]
    print(f"found {s['found']}/{s['n']}, grid right {s['grid_right']}, framed {s['framed']}, "
          f"totals exact {s['total_exact']} ({s['exact_framed']} framed right), "
          f"wrong totals {s['wrong_total']} ({s['wrong_total_unflagged']} without a flagged wrong square), "
          f"corner error mean {s['corner_error_mean']} max {s['corner_error_max']}, "
          f"table squares read as tiles {s['off_as_tile']} ({s['off_as_tile_unflagged']} not "
          f"flagged); "
          f"wrote {args.out / 'tables.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
