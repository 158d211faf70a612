"""Procedurally drawn Kingdomino boards (no dataset pixels), for training data, tests and samples.

- ``render_board(terrain_grid, crown_grid, cell=100, rng=None, dominoes=None, return_mask=False)``
  draws a rectified board: ``rows*cell`` by ``cols*cell`` BGR pixels, square (r, c) in the cell
  at rows ``r*cell..(r+1)*cell``, columns ``c*cell..(c+1)*cell`` (give or take the few pixels
  each domino is shifted by, as hand-placed tiles are).
- ``random_layout(rng, size=5)`` lays out a plausible kingdom from the 48 real dominoes and
  returns a dict with ``terrain``, ``crowns`` (``size x size`` lists), ``dominoes`` (list of
  ``((r, c), (r, c), number)``) and ``castle`` (r, c); ``random_kingdom(rng, size=5)`` returns just
  ``(terrain, crowns)``.
- ``kingdom_json(terrain, crowns)`` gives the contract's Kingdom JSON for a pair of grids.
- Queendomino (issue 53), drawn only when asked for: ``town`` squares in a grid (red-brick
  construction sites; ``render_board(..., buildings={(r, c): crowns})`` stands a building tile
  on some), ``queendomino_layout(rng)`` (a ``random_layout`` with some domino halves made towns)
  and ``town_crops(rng, n)`` (town squares cut as the reader cuts its squares, for exemplars). A
  grid without towns draws exactly what it drew before: the same seed, the same scene.

Drawing is deterministic for a given ``rng`` state (``numpy.random.Generator``).
"""
from __future__ import annotations

import math

import cv2
import numpy as np

from engine.dominoes import dominoes
from engine.kingdom import SIZES
from vision.read.classify import TERRAINS

# Base colours (BGR) of each terrain as printed; each tile jitters around these.
BASE_BGR = {
    "field": (28, 190, 222),
    "forest": (34, 88, 50),
    "lake": (178, 100, 25),
    "grassland": (38, 158, 105),
    "swamp": (80, 112, 138),
    "mine": (32, 38, 48),
    "castle": (150, 150, 150),
}
TABLE_BGR = (120, 170, 205)  # light wood, the default colour of empty squares
# Queendomino's town squares: the median colour of the town squares in our labelled photos
# (vision/lab/data/queendomino_labels.json: BGR about (80-105, 90-122, 155-215), OpenCV hue 5-7,
# saturation 120-150), a brick red-orange well off the swamp's brown
TOWN = "town"
TOWN_BGR = (90, 112, 195)

def as_rng(rng) -> np.random.Generator:
    if rng is None:
        return np.random.default_rng()
    if isinstance(rng, (int, np.integer)):
        return np.random.default_rng(int(rng))
    return rng


def _jitter(colour, rng, amount=14) -> tuple:
    """Colour varied mostly in brightness (print and light), a little per channel."""
    k = 1.0 + rng.normal(0, amount / 160)
    return tuple(int(np.clip(v * k + rng.normal(0, amount / 3), 0, 255)) for v in colour)


def _shade(colour, factor) -> tuple:
    return tuple(int(np.clip(v * factor, 0, 255)) for v in colour)


# --------------------------------------------------------------------------- square drawing
# Each square is drawn upright in its own frame (s x s pixels, "top" = where the crowns sit) and
# then turned with its domino.

def _noise_layer(s, rng, scale, amp):
    """Smooth noise (s x s, float32, zero mean) made by upscaling a small random image."""
    n = max(2, int(s / scale))
    small = rng.normal(0, 1, (n, n)).astype(np.float32)
    return cv2.resize(small, (s, s), interpolation=cv2.INTER_CUBIC) * amp


def _base(s, colour, rng, amp=10):
    img = np.empty((s, s, 3), np.float32)
    img[:] = colour
    img += _noise_layer(s, rng, s / 4, amp)[..., None]
    img += rng.normal(0, 3, (s, s, 1)).astype(np.float32)
    return img


def _draw_field(s, rng):
    col = _jitter(BASE_BGR["field"], rng, 10)
    img = _base(s, col, rng, 8)
    dark = _shade(col, 0.82)
    light = _shade(col, 1.08)
    for _ in range(int(rng.integers(10, 22))):  # wheat strokes
        x, y = rng.uniform(0, s, 2)
        ang = rng.uniform(-0.5, 0.5) + math.pi / 3
        ln = rng.uniform(0.06, 0.16) * s
        p2 = (x + ln * math.cos(ang), y - ln * math.sin(ang))
        cv2.line(img, (int(x), int(y)), (int(p2[0]), int(p2[1])),
                 dark if rng.random() < 0.6 else light, max(1, int(s / 70)), cv2.LINE_AA)
    for _ in range(int(rng.integers(0, 3))):  # small dark birds
        x, y = rng.uniform(0.15, 0.85, 2) * s
        w = s * 0.03
        pts = np.array([[x - w, y - w / 2], [x, y], [x + w, y - w / 2]], np.int32)
        cv2.polylines(img, [pts], False, (30, 40, 50), max(1, int(s / 80)), cv2.LINE_AA)
    return img


def _draw_forest(s, rng):
    col = _jitter(BASE_BGR["forest"], rng, 8)
    img = _base(s, _shade(col, 0.75), rng, 6)
    n = int(rng.integers(14, 24))
    for _ in range(n):  # round tree crowns with a lit side
        x, y = rng.uniform(-0.05, 1.05, 2) * s
        r = rng.uniform(0.09, 0.16) * s
        c = _jitter(col, rng, 10)
        cv2.circle(img, (int(x), int(y + r * 0.6)), int(r * 0.9), _shade(c, 0.45), -1, cv2.LINE_AA)
        cv2.circle(img, (int(x), int(y)), int(r), c, -1, cv2.LINE_AA)
        cv2.circle(img, (int(x - r * 0.3), int(y - r * 0.3)), int(r * 0.45), _shade(c, 1.35), -1,
                   cv2.LINE_AA)
    return img


def _draw_lake(s, rng):
    col = _jitter(BASE_BGR["lake"], rng, 10)
    img = _base(s, col, rng, 10)
    grad = np.linspace(0.9, 1.1, s, dtype=np.float32)[None, :, None]
    img *= grad
    light = _shade(col, 1.3)
    for _ in range(int(rng.integers(4, 9))):  # ripples
        x, y = rng.uniform(0.1, 0.9, 2) * s
        ax = rng.uniform(0.05, 0.12) * s
        cv2.ellipse(img, (int(x), int(y)), (int(ax), int(ax * 0.3)), 0, 200, 340, light,
                    max(1, int(s / 60)), cv2.LINE_AA)
    if rng.random() < 0.3:  # a small boat
        x, y = rng.uniform(0.3, 0.7, 2) * s
        cv2.ellipse(img, (int(x), int(y)), (int(s * 0.07), int(s * 0.025)), rng.uniform(0, 180), 0, 360,
                    (40, 70, 110), -1, cv2.LINE_AA)
    return img


def _draw_grassland(s, rng):
    col = _jitter(BASE_BGR["grassland"], rng, 10)
    img = _base(s, col, rng, 10)
    for _ in range(int(rng.integers(6, 16))):  # white dots / sheep
        x, y = rng.uniform(0.08, 0.92, 2) * s
        r = rng.uniform(0.012, 0.03) * s
        cv2.ellipse(img, (int(x), int(y)), (int(r * 1.4), int(r)), 0, 0, 360, (235, 240, 240), -1,
                    cv2.LINE_AA)
        if r > 0.02 * s:
            cv2.circle(img, (int(x + r * 1.4), int(y)), max(1, int(r * 0.45)), (40, 40, 40), -1,
                       cv2.LINE_AA)
    for _ in range(int(rng.integers(5, 12))):  # grass tufts
        x, y = rng.uniform(0, s, 2)
        cv2.line(img, (int(x), int(y)), (int(x + s * 0.02), int(y - s * 0.04)), _shade(col, 0.75),
                 max(1, int(s / 90)), cv2.LINE_AA)
    return img


def _draw_swamp(s, rng):
    col = _jitter(BASE_BGR["swamp"], rng, 10)
    img = _base(s, col, rng, 12)
    for _ in range(int(rng.integers(3, 6))):  # darker muddy patches
        x, y = rng.uniform(0.1, 0.9, 2) * s
        cv2.ellipse(img, (int(x), int(y)), (int(rng.uniform(0.1, 0.25) * s), int(rng.uniform(0.04, 0.1) * s)),
                    rng.uniform(0, 180), 0, 360, _shade(col, 0.75), -1, cv2.LINE_AA)
    for _ in range(int(rng.integers(6, 14))):  # reeds
        x, y = rng.uniform(0.05, 0.95, 2) * s
        h = rng.uniform(0.08, 0.16) * s
        cv2.line(img, (int(x), int(y)), (int(x + rng.normal(0, s * 0.01)), int(y - h)), (40, 60, 70),
                 max(1, int(s / 80)), cv2.LINE_AA)
        cv2.ellipse(img, (int(x), int(y - h)), (max(1, int(s * 0.008)), max(1, int(s * 0.025))), 0, 0,
                    360, (30, 50, 90), -1, cv2.LINE_AA)
    return img


def _draw_mine(s, rng):
    col = _jitter(BASE_BGR["mine"], rng, 6)
    img = _base(s, col, rng, 6)
    for _ in range(int(rng.integers(6, 12))):  # rocks (golden-beige / grey polygons)
        cx, cy = rng.uniform(0.05, 0.95, 2) * s
        r = rng.uniform(0.06, 0.16) * s
        k = int(rng.integers(5, 8))
        angs = np.sort(rng.uniform(0, 2 * math.pi, k))
        pts = np.stack([cx + r * rng.uniform(0.6, 1.0, k) * np.cos(angs),
                        cy + r * rng.uniform(0.6, 1.0, k) * np.sin(angs)], 1).astype(np.int32)
        rock = (90, 150, 200) if rng.random() < 0.7 else (110, 115, 125)
        rock = _jitter(rock, rng, 12)
        cv2.fillPoly(img, [pts], rock, cv2.LINE_AA)
        cv2.polylines(img, [pts], True, _shade(rock, 0.5), max(1, int(s / 100)), cv2.LINE_AA)
    return img


def _draw_town(s, rng):
    """A Queendomino town square as printed: flat brick red-orange ground with a construction
    site on it -- timber scaffolding, pale cut stone blocks, a builder's fire or two."""
    col = _jitter(TOWN_BGR, rng, 10)
    img = _base(s, col, rng, 9)
    for _ in range(int(s * s / 300)):  # the ground's grain: small darker and lighter specks
        x, y = rng.uniform(0, s, 2)
        cv2.circle(img, (int(x), int(y)), max(1, int(s / 120)),
                   _shade(col, rng.choice([0.75, 1.15])), -1)
    lw = max(1, int(s / 45))
    timber = _jitter((35, 50, 80), rng, 8)
    x0, y0 = rng.uniform(0.1, 0.3, 2) * s
    w, h = rng.uniform(0.4, 0.6) * s, rng.uniform(0.3, 0.5) * s
    for k in range(3):  # the scaffold's posts, its beams and a brace
        x = int(x0 + w * k / 2)
        cv2.line(img, (x, int(y0)), (x, int(y0 + h)), timber, lw, cv2.LINE_AA)
    for f in (0.0, 0.5, 1.0):
        cv2.line(img, (int(x0), int(y0 + h * f)), (int(x0 + w), int(y0 + h * f)), timber, lw,
                 cv2.LINE_AA)
    cv2.line(img, (int(x0), int(y0 + h)), (int(x0 + w / 2), int(y0)), timber, lw, cv2.LINE_AA)
    for _ in range(int(rng.integers(2, 6))):  # cut stone blocks lying about
        cx, cy = rng.uniform(0.15, 0.85, 2) * s
        bw, bh = rng.uniform(0.08, 0.16) * s, rng.uniform(0.04, 0.08) * s
        box = cv2.boxPoints(((float(cx), float(cy)), (float(bw), float(bh)),
                             float(rng.uniform(-40, 40)))).astype(np.int32)
        stone = _jitter((200, 210, 215), rng, 10)
        cv2.fillPoly(img, [box], stone, cv2.LINE_AA)
        cv2.polylines(img, [box], True, _shade(stone, 0.55), max(1, lw // 2), cv2.LINE_AA)
    for _ in range(int(rng.integers(0, 3))):  # a builder's fire: yellow in orange
        cx, cy = rng.uniform(0.2, 0.8, 2) * s
        r = rng.uniform(0.025, 0.045) * s
        cv2.circle(img, (int(cx), int(cy)), int(r * 1.6), (40, 120, 235), -1, cv2.LINE_AA)
        cv2.circle(img, (int(cx), int(cy)), max(1, int(r)), (90, 230, 250), -1, cv2.LINE_AA)
    return img


def _building_tile(img, s, rng, crowns: int):
    """A Queendomino building tile laid on a town square: a slightly smaller red tile, lifted
    and pushed off the square's centre (as in the photos), a stone building on it, its crowns
    in the top-right corner and a white value shield in the bottom-right."""
    m = rng.uniform(0.04, 0.09) * s
    dx, dy = rng.uniform(-0.04, 0.04, 2) * s
    x0, y0, x1, y1 = (int(np.clip(v, 0, s)) for v in (m + dx, m + dy, s - m + dx, s - m + dy))
    shadow = max(1, int(s / 40))
    cv2.rectangle(img, (x0 + shadow, y0 + shadow), (x1 + shadow, y1 + shadow),
                  _shade(TOWN_BGR, 0.4), -1)                         # its edge's shadow
    side = max(y1 - y0, x1 - x0, 2)
    img[y0:y1, x0:x1] = _base(side, _jitter(TOWN_BGR, rng, 8), rng, 6)[:y1 - y0, :x1 - x0]
    cv2.rectangle(img, (x0, y0), (x1, y1), _shade(TOWN_BGR, 0.7), max(1, int(s / 60)))
    t = x1 - x0
    bw, bh = t * rng.uniform(0.32, 0.48), t * rng.uniform(0.35, 0.5)
    bx, by = x0 + (t - bw) * rng.uniform(0.3, 0.6), y0 + t * rng.uniform(0.25, 0.35)
    stone = _jitter((175, 185, 195), rng, 12)
    cv2.rectangle(img, (int(bx), int(by)), (int(bx + bw), int(by + bh)), stone, -1)
    if rng.random() < 0.5:  # battlements
        for k in range(4):
            cx = bx + bw * (k + 0.5) / 4
            cv2.rectangle(img, (int(cx - bw / 12), int(by - bh * 0.12)), (int(cx + bw / 12),
                          int(by)), stone, -1)
    else:                   # a roof, red or blue
        roof = np.array([[bx - bw * 0.1, by], [bx + bw / 2, by - bh * 0.45],
                         [bx + bw * 1.1, by]], np.int32)
        cv2.fillPoly(img, [roof], _jitter((50, 50, 170) if rng.random() < 0.6 else
                                          (150, 90, 50), rng, 10), cv2.LINE_AA)
    cv2.rectangle(img, (int(bx + bw * 0.4), int(by + bh * 0.6)), (int(bx + bw * 0.6),
                  int(by + bh)), (50, 60, 80), -1)
    cv2.rectangle(img, (int(bx), int(by)), (int(bx + bw), int(by + bh)), _shade(stone, 0.5),
                  max(1, int(s / 80)))
    g = t * 0.2
    for i in range(crowns):
        _crown_glyph(img, x1 - (i + 1) * g * 1.15 - t * 0.03, y0 + t * 0.04, g)
    r = max(2, int(t * 0.07))
    cx, cy = int(x1 - t * 0.14), int(y1 - t * 0.14)
    cv2.circle(img, (cx, cy), r, (245, 245, 245), -1, cv2.LINE_AA)       # the value shield
    cv2.circle(img, (cx, cy), r, (90, 80, 70), max(1, r // 4), cv2.LINE_AA)


# start-square tints of the four kings (BGR): stone grey, pink, blue, green
CASTLE_TINTS = ((150, 150, 150), (170, 150, 205), (190, 160, 130), (140, 170, 140))


def _draw_castle(s, rng):
    """The start square: cobbles in one king's tint with a large pale crown laid in them
    (where the 3D castle stands; ``render_board(castle_3d=True)`` adds it)."""
    col = _jitter(CASTLE_TINTS[int(rng.integers(0, len(CASTLE_TINTS)))], rng, 8)
    img = _base(s, col, rng, 6)
    step = s / 7
    for i in range(8):  # cobblestones
        for j in range(8):
            x = (j + (0.5 if i % 2 else 0)) * step
            y = i * step
            c = _jitter(_shade(col, rng.uniform(0.85, 1.15)), rng, 6)
            cv2.rectangle(img, (int(x), int(y)), (int(x + step * 0.9), int(y + step * 0.85)), c, -1)
    cv2.rectangle(img, (0, 0), (s - 1, s - 1), (60, 190, 220), max(2, int(s / 25)))  # yellow rim
    m = 0.2 * s
    pts = np.array([[m, 0.75 * s], [m, 0.3 * s], [0.35 * s, 0.5 * s], [0.5 * s, 0.22 * s],
                    [0.65 * s, 0.5 * s], [s - m, 0.3 * s], [s - m, 0.75 * s]], np.int32)
    cv2.fillPoly(img, [pts], _jitter((120, 225, 235), rng, 8), cv2.LINE_AA)
    cv2.polylines(img, [pts], True, (70, 170, 200), max(2, int(s / 40)), cv2.LINE_AA)
    return img


def _draw_start_plain(s, rng):
    """The start square of other printings: bare sand in a yellow-green grass band with pairs
    of small bushes on each side (no crown: the 3D castle, when there, stands on it)."""
    band = _jitter((60, 195, 185), rng, 12)
    img = _base(s, band, rng, 6)
    sand = np.array(_jitter((115, 178, 205), rng, 14), np.float32)
    inner = np.zeros((s, s), np.float32)
    m = int(round(s * rng.uniform(0.12, 0.16)))
    inner[m:s - m, m:s - m] = 1.0
    inner = cv2.GaussianBlur(inner, (0, 0), s * 0.012)[..., None]
    yy, xx = (np.mgrid[0:s, 0:s].astype(np.float32) - s / 2) / (s / 2)
    vignette = (1.0 - 0.12 * np.maximum(np.abs(yy), np.abs(xx)) ** 2)[..., None]
    sand_img = (sand * vignette + _noise_layer(s, rng, s / 6, 8)[..., None])
    img = img * (1 - inner) + sand_img * inner
    r = max(2, int(round(s * 0.035)))
    green, dark = _jitter((45, 125, 70), rng, 10), (25, 70, 35)
    for side in range(4):
        for t in (rng.uniform(0.25, 0.35), rng.uniform(0.6, 0.72)):
            for k in (-1, 1):
                u, v = t * s + k * r * 1.1, m + rng.normal(0, r * 0.3)
                pts = [(u, v), (s - v, u), (s - u, s - v), (v, s - u)][side]
                centre = (int(round(pts[0])), int(round(pts[1])))
                cv2.circle(img, centre, r, green, -1, cv2.LINE_AA)
                cv2.circle(img, centre, r, dark, max(1, r // 3), cv2.LINE_AA)
    return img


_DRAW = {"field": _draw_field, "forest": _draw_forest, "lake": _draw_lake,
         "grassland": _draw_grassland, "swamp": _draw_swamp, "mine": _draw_mine,
         "castle": _draw_castle, TOWN: _draw_town}
DRAWN = (*TERRAINS, TOWN)       # what a grid may hold: the classifier's terrains and towns


def _crown_shape(x, y, w, h):
    """Outline of a five-pointed crown in the box (x, y, w, h): points, then tip centres."""
    base = y + h
    band = y + h * 0.72
    tips_x = [x + w * f for f in (0.0, 0.25, 0.5, 0.75, 1.0)]
    tips_y = [y + h * f for f in (0.18, 0.05, 0.0, 0.05, 0.18)]
    dips_y = y + h * 0.48
    pts = [(x, base)]
    for k, (tx, ty) in enumerate(zip(tips_x, tips_y)):
        pts.append((tx, ty))
        if k < 4:
            pts.append(((tx + tips_x[k + 1]) / 2, dips_y))
    pts.append((x + w, base))
    return np.array(pts, np.float64), list(zip(tips_x, tips_y))


def _crown_glyph(img, x, y, g):
    """One crown, ``g`` pixels wide, top-left at (x, y): as printed on the tiles, a gold crown
    with a ball on each point, in a thick white outline edged with a thin grey line."""
    h = g * 0.7
    rim = max(1.0, g * 0.07)
    white, edge = (246, 246, 242), (150, 140, 135)
    gold, shade = (40, 200, 240), (20, 140, 200)
    pts, tips = _crown_shape(x + rim, y + rim, g - 2 * rim, h - rim)
    ball = max(1, int(round(g * 0.06)))
    thick = max(2, int(round(2 * rim)))
    # the white outline (drawn as a thick stroke around the filled crown), with its grey edge
    cv2.polylines(img, [pts.astype(np.int32)], True, edge, thick + 2, cv2.LINE_AA)
    for tx, ty in tips:
        cv2.circle(img, (int(tx), int(ty)), ball + thick // 2 + 1, edge, -1, cv2.LINE_AA)
    cv2.polylines(img, [pts.astype(np.int32)], True, white, thick, cv2.LINE_AA)
    for tx, ty in tips:
        cv2.circle(img, (int(tx), int(ty)), ball + thick // 2, white, -1, cv2.LINE_AA)
    cv2.fillPoly(img, [pts.astype(np.int32)], gold, cv2.LINE_AA)
    for tx, ty in tips:
        cv2.circle(img, (int(tx), int(ty)), ball, gold, -1, cv2.LINE_AA)
    band = y + rim + (h - rim) * 0.72
    cv2.line(img, (int(x + rim), int(band)), (int(x + g - rim), int(band)), shade,
             max(1, int(g / 20)), cv2.LINE_AA)


def _house(img, s, rng, x0, y0, w, stilts=False):
    """A half-timbered house with a red/brown roof, ``w`` wide, top-left of the walls at x0, y0."""
    h = w * rng.uniform(0.55, 0.75)
    lw = max(1, int(s / 90))
    if stilts:  # a lake house on posts over the water, with a little jetty
        for k in range(4):
            x = x0 + w * (0.1 + 0.27 * k)
            cv2.line(img, (int(x), int(y0 + h)), (int(x), int(y0 + h + 0.12 * s)), (40, 70, 100), lw + 1)
        cv2.rectangle(img, (int(x0 - 0.05 * s), int(y0 + h + 0.08 * s)),
                      (int(x0 + w + 0.12 * s), int(y0 + h + 0.11 * s)), (50, 90, 130), -1)
    wall = _jitter((165, 200, 222), rng, 8)
    cv2.rectangle(img, (int(x0), int(y0)), (int(x0 + w), int(y0 + h)), wall, -1)
    for k in range(1, 4):  # timber frame
        x = x0 + w * k / 4
        cv2.line(img, (int(x), int(y0)), (int(x), int(y0 + h)), (50, 70, 110), lw)
    cv2.line(img, (int(x0), int(y0 + h / 2)), (int(x0 + w), int(y0 + h / 2)), (50, 70, 110), lw)
    roof_col = _jitter((40, 60, 190) if rng.random() < 0.7 else (40, 90, 140), rng, 10)
    over = 0.12 * w
    rh = w * rng.uniform(0.35, 0.55)
    roof = np.array([[x0 - over, y0], [x0 + w * 0.2, y0 - rh], [x0 + w * 0.8, y0 - rh],
                     [x0 + w + over, y0]], np.int32)
    cv2.fillPoly(img, [roof], roof_col, cv2.LINE_AA)
    cv2.polylines(img, [roof], True, _shade(roof_col, 0.55), lw, cv2.LINE_AA)
    cv2.rectangle(img, (int(x0 + w * 0.42), int(y0 + h * 0.45)), (int(x0 + w * 0.58), int(y0 + h)),
                  (40, 60, 90), -1)


def _windmill(img, s, rng, cx, cy, w):
    body = np.array([[cx - 0.3 * w, cy + 0.6 * w], [cx - 0.15 * w, cy - 0.2 * w],
                     [cx + 0.15 * w, cy - 0.2 * w], [cx + 0.3 * w, cy + 0.6 * w]], np.int32)
    cv2.fillPoly(img, [body], _jitter((60, 100, 150), rng, 10), cv2.LINE_AA)
    a0 = rng.uniform(0, math.pi / 2)
    for k in range(4):  # four sails
        a = a0 + k * math.pi / 2
        tip = (cx + 0.6 * w * math.cos(a), cy - 0.2 * w + 0.6 * w * math.sin(a))
        cv2.line(img, (int(cx), int(cy - 0.2 * w)), (int(tip[0]), int(tip[1])), (185, 212, 230),
                 max(2, int(w / 10)), cv2.LINE_AA)
        cv2.line(img, (int(cx), int(cy - 0.2 * w)), (int(tip[0]), int(tip[1])), (60, 80, 110),
                 max(1, int(w / 40)), cv2.LINE_AA)


def _mine_entrance(img, s, rng, cx, cy, w):
    rock = _jitter((110, 170, 210), rng, 10)
    cv2.ellipse(img, (int(cx), int(cy)), (int(w / 2), int(w / 2.6)), 0, 180, 360, rock, -1, cv2.LINE_AA)
    cv2.ellipse(img, (int(cx), int(cy)), (int(w / 2), int(w / 6)), 0, 0, 180, rock, -1, cv2.LINE_AA)
    cv2.ellipse(img, (int(cx), int(cy)), (int(w / 6), int(w / 5)), 0, 180, 360, (20, 20, 25), -1, cv2.LINE_AA)
    cv2.rectangle(img, (int(cx - w / 6), int(cy)), (int(cx + w / 6), int(cy + w / 12)), (20, 20, 25), -1)
    if rng.random() < 0.6:  # a red mine cart
        cv2.rectangle(img, (int(cx + w * 0.25), int(cy + w * 0.05)), (int(cx + w * 0.45), int(cy + w * 0.17)),
                      (40, 40, 170), -1)


def _draw_building(img, s, rng, terrain="field"):
    """The picture a crown square shows, below the crowns: a house (on stilts on a lake), a
    windmill on a field now and then, a mine entrance in a rock mound on a mine."""
    w = rng.uniform(0.3, 0.45) * s
    cx = rng.uniform(0.3, 0.7) * s
    cy = rng.uniform(0.5, 0.62) * s
    if terrain == "mine":
        _mine_entrance(img, s, rng, cx, cy, w * 1.3)
    elif terrain == "field" and rng.random() < 0.4:
        _windmill(img, s, rng, cx, cy, w)
    else:
        _house(img, s, rng, cx - w / 2, cy - w * 0.2, w, stilts=terrain == "lake")


START_STYLES = ("printed", "plain")


def draw_square(terrain: str, crowns: int, s: int, rng, turns: int = 0,
                start: str = "printed", building: int | None = None) -> np.ndarray:
    """One square (``s`` x ``s`` BGR uint8), upright then turned ``turns`` x 90 degrees CCW.

    Crowns sit side by side along the square's top edge (its top-left corner for one crown) in
    the upright frame, as printed; ``turns`` turns them to any of the four edges. ``start``:
    how the castle's start square looks, ``"printed"`` (cobbles and a crown in a king's tint)
    or ``"plain"`` (bare sand in a grass band, as in other printings). ``building``: on a
    ``town`` square, a building tile stands on it with this many crowns printed (None: none;
    a town square itself carries no crowns).
    """
    if terrain not in _DRAW:
        raise ValueError(f"unknown terrain {terrain!r}; use one of {', '.join(DRAWN)}")
    if start not in START_STYLES:
        raise ValueError(f"unknown start square style {start!r}; use one of {', '.join(START_STYLES)}")
    if terrain == TOWN and crowns:
        raise ValueError("a town square carries no printed crowns: give them to its building")
    if building is not None and terrain != TOWN:
        raise ValueError(f"a building stands on a town square, not on {terrain}")
    img = _draw_start_plain(s, rng) if terrain == "castle" and start == "plain" else _DRAW[terrain](s, rng)
    if building is not None:
        _building_tile(img, s, rng, int(building))
    if crowns:
        if terrain != "castle":         # as in the game, every crowned square shows a building
            _draw_building(img, s, rng, terrain)
        g = s * rng.uniform(0.2, 0.25)
        gap = g * 0.3
        total = crowns * g + (crowns - 1) * gap
        x = s * 0.05 if crowns == 1 and rng.random() < 0.6 else (s - total) / 2 if crowns > 1 else s * 0.7
        x = min(max(x, s * 0.03), s - total - s * 0.03) if total < s * 0.94 else s * 0.03
        y = s * rng.uniform(0.03, 0.07)
        for i in range(crowns):
            _crown_glyph(img, x + i * (g + gap), y, g)
    img = np.clip(img, 0, 255).astype(np.uint8)
    return np.ascontiguousarray(np.rot90(img, turns % 4))


# --------------------------------------------------------------------------- board drawing

def _check_grids(terrain_grid, crown_grid):
    rows = len(terrain_grid)
    if rows == 0 or any(len(row) != len(terrain_grid[0]) for row in terrain_grid):
        raise ValueError("terrain_grid must be a non-empty rectangle of terrain names (list of rows)")
    cols = len(terrain_grid[0])
    if len(crown_grid) != rows or any(len(row) != cols for row in crown_grid):
        raise ValueError(f"crown_grid must have the same shape as terrain_grid ({rows} x {cols})")
    for row in terrain_grid:
        for t in row:
            if t not in DRAWN:
                raise ValueError(f"unknown terrain {t!r}; use one of {', '.join(DRAWN)}")
    return rows, cols


def render_board(terrain_grid, crown_grid, cell: int = 100, rng=None, dominoes=None,
                 table=None, return_mask: bool = False, max_shift: float = 0.04,
                 max_turn: float = 1.5, castle_3d: bool = False, start: str = "printed",
                 buildings=None):
    """Draw a rectified board of ``rows x cols`` squares, ``cell`` pixels each (BGR uint8).

    ``dominoes``: optional list of ``((r, c), (r, c), ...)`` pairs (as ``random_layout`` gives):
    the two halves of a domino are drawn as one tile (no gap between them, shifted together,
    crowns along the same long edge). Squares not in any pair are drawn as single tiles.
    ``table``: BGR colour of the bare table (empty squares and the gaps); default light wood.
    With ``return_mask=True`` returns ``(image, mask)`` where mask is 255 on tile pixels and 0 on
    bare table, so a scene can put its own table there. ``max_shift`` (fraction of a cell) and
    ``max_turn`` (degrees) bound how far each tile is moved and turned, as by a player's hand.
    ``castle_3d``: stand the 3D castle on the start square (it leans over its neighbours a
    little, as in many photos); the labels stay those of the squares underneath.
    ``start``: the start square's printing (see :func:`draw_square`).
    ``buildings``: ``{(r, c): crowns}`` of the town squares a building tile stands on
    (Queendomino; the building is drawn upright whichever way its domino lies).
    """
    rng = as_rng(rng)
    rows, cols = _check_grids(terrain_grid, crown_grid)
    buildings = {tuple(k): int(v) for k, v in dict(buildings or {}).items()}
    for r, c in buildings:
        if not (0 <= r < rows and 0 <= c < cols) or terrain_grid[r][c] != TOWN:
            raise ValueError(f"a building stands on a town square: ({r}, {c}) is not one")
    if cell < 16:
        raise ValueError(f"cell must be at least 16 pixels, got {cell}")
    H, W = rows * cell, cols * cell
    table = _jitter(table or TABLE_BGR, rng, 8)
    img = np.empty((H, W, 3), np.uint8)
    img[:] = table
    mask = np.zeros((H, W), np.uint8)

    tiles = []
    seen = set()
    for d in dominoes or ():
        sq = [tuple(p) for p in d[:2]]
        if any(terrain_grid[r][c] == "empty" for r, c in sq):
            continue
        tiles.append(sq)
        seen.update(sq)
    for r in range(rows):
        for c in range(cols):
            if (r, c) not in seen and terrain_grid[r][c] != "empty":
                tiles.append([(r, c)])

    gap = max(1, int(round(cell * 0.02)))
    shift_px = max(0, int(round(cell * max_shift)))
    for sq in tiles:
        if len(sq) == 2:
            (r0, c0), (r1, c1) = sq
            horizontal = r0 == r1
            # crowns lie along one long edge: up (0 turns) or down (2) for a horizontal domino,
            # left (1) or right (3) for a vertical one
            turns = (0 if horizontal else 1) + 2 * int(rng.integers(0, 2))
        else:
            turns = int(rng.integers(0, 4))
        dy, dx = (int(v) for v in rng.integers(-shift_px, shift_px + 1, 2))
        rs = [p[0] for p in sq]
        cs = [p[1] for p in sq]
        y0, y1 = min(rs) * cell, (max(rs) + 1) * cell
        x0, x1 = min(cs) * cell, (max(cs) + 1) * cell
        tile = np.empty((y1 - y0, x1 - x0, 3), np.uint8)
        for r, c in sq:
            t = terrain_grid[r][c]
            sq_img = draw_square(t, int(crown_grid[r][c]), cell, rng, turns, start)
            if (r, c) in buildings:        # a tile laid on the square, upright on the board
                laid = sq_img.astype(np.float32)
                _building_tile(laid, cell, rng, buildings[(r, c)])
                sq_img = np.clip(laid, 0, 255).astype(np.uint8)
            tile[(r * cell - y0):(r * cell - y0 + cell), (c * cell - x0):(c * cell - x0 + cell)] = sq_img
        if len(sq) == 2 and terrain_grid[sq[0][0]][sq[0][1]] != terrain_grid[sq[1][0]][sq[1][1]]:
            _seam(tile, horizontal, cell, rng)
        light = rng.uniform(0.93, 1.07)
        tile = np.clip(tile.astype(np.float32) * light, 0, 255).astype(np.uint8)
        # dark tile edge (the cardboard's side and the shadow in the gap)
        edge = _shade(table, 0.35)
        cv2.rectangle(tile, (0, 0), (tile.shape[1] - 1, tile.shape[0] - 1), edge, gap)
        # paste shifted, clipped to the board
        ty0, tx0 = y0 + dy + gap // 2, x0 + dx + gap // 2
        th, tw = tile.shape[0] - gap, tile.shape[1] - gap
        tile = cv2.resize(tile, (tw, th), interpolation=cv2.INTER_AREA)
        angle = float(rng.normal(0, max_turn / 2)) if max_turn else 0.0
        angle = max(-max_turn, min(max_turn, angle))
        if abs(angle) < 0.2:
            sy0, sx0 = max(ty0, 0), max(tx0, 0)
            sy1, sx1 = min(ty0 + th, H), min(tx0 + tw, W)
            img[sy0:sy1, sx0:sx1] = tile[sy0 - ty0:sy1 - ty0, sx0 - tx0:sx1 - tx0]
            mask[sy0:sy1, sx0:sx1] = 255
            continue
        # a hand-placed tile is turned a little: warp it into a padded window of the board
        pad = int(math.ceil(max(th, tw) * math.sin(math.radians(abs(angle))))) + 2
        wy0, wx0 = max(ty0 - pad, 0), max(tx0 - pad, 0)
        wy1, wx1 = min(ty0 + th + pad, H), min(tx0 + tw + pad, W)
        M = cv2.getRotationMatrix2D((tw / 2, th / 2), angle, 1.0)
        M[:, 2] += (tx0 - wx0, ty0 - wy0)
        size = (wx1 - wx0, wy1 - wy0)
        warped = cv2.warpAffine(tile, M, size, flags=cv2.INTER_LINEAR)
        m = cv2.warpAffine(np.full((th, tw), 255, np.uint8), M, size, flags=cv2.INTER_LINEAR)
        sel = m > 127
        img[wy0:wy1, wx0:wx1][sel] = warped[sel]
        mask[wy0:wy1, wx0:wx1][sel] = 255
    if castle_3d:
        for r in range(rows):
            for c in range(cols):
                if terrain_grid[r][c] == "castle":
                    _draw_castle_3d(img, mask, r, c, cell, rng)
    if return_mask:
        return img, mask
    return img


def _seam(tile, horizontal, cell, rng):
    """The printed border where a domino's two terrains meet: a wavy dark-brown line."""
    n = 12
    t = np.linspace(0, cell, n)
    wob = rng.normal(0, cell * 0.02, n).cumsum() * 0.5
    wob -= wob.mean()
    if horizontal:
        pts = np.stack([cell + wob, t], 1)
    else:
        pts = np.stack([t, cell + wob], 1)
    cv2.polylines(tile, [pts.astype(np.int32)], False, (40, 70, 100), max(1, int(cell / 45)), cv2.LINE_AA)


def _draw_castle_3d(img, mask, r, c, cell, rng):
    """The 3D castle standing on the start square, seen from above a little off-centre: its
    top is larger and shifted (up to a fifth of a cell), so it leans over the neighbours."""
    x0, y0 = c * cell + 0.08 * cell, r * cell + 0.08 * cell
    s = 0.84 * cell
    ang = rng.uniform(0, 2 * math.pi)
    off = rng.uniform(0.08, 0.2) * cell
    grow = rng.uniform(1.05, 1.2)
    base = np.array([[x0, y0], [x0 + s, y0], [x0 + s, y0 + s], [x0, y0 + s]])
    centre = base.mean(0)
    top = (base - centre) * grow + centre + off * np.array([math.cos(ang), math.sin(ang)])
    wall = _jitter((150, 140, 130), rng, 10)
    for k in range(4):  # the four walls, shaded by the side they face
        quad = np.array([base[k], base[(k + 1) % 4], top[(k + 1) % 4], top[k]], np.int32)
        cv2.fillPoly(img, [quad], _shade(wall, 0.7 + 0.1 * k), cv2.LINE_AA)
        cv2.fillPoly(mask, [quad], 255)
    t = top.astype(np.int32)
    cv2.fillPoly(img, [t], _shade(wall, 1.25), cv2.LINE_AA)
    inner = ((top - top.mean(0)) * 0.72 + top.mean(0)).astype(np.int32)
    cv2.fillPoly(img, [inner], _jitter((60, 170, 215), rng, 10), cv2.LINE_AA)  # yellow courtyard
    keep = ((top - top.mean(0)) * 0.35 + top.mean(0)).astype(np.int32)
    cv2.fillPoly(img, [keep], _shade(wall, 0.6), cv2.LINE_AA)
    cv2.polylines(img, [t], True, _shade(wall, 0.45), max(1, cell // 40), cv2.LINE_AA)
    cv2.fillPoly(mask, [t], 255)


# --------------------------------------------------------------------------- kingdom layout

def _neighbours(r, c, n):
    for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1)):
        rr, cc = r + dr, c + dc
        if 0 <= rr < n and 0 <= cc < n:
            yield rr, cc


def random_layout(rng=None, size: int = 5, fill: float | None = None) -> dict:
    """A plausible kingdom built from the 48 real dominoes, each used at most once.

    The castle goes anywhere in the ``size x size`` frame; dominoes are placed one by one, each
    touching the castle or a square of the same terrain (the game's connection rule), until the
    frame is full or no domino fits (``fill``: stop at that fraction of the frame, default: a
    finished kingdom, sometimes with a few squares left empty). Returns ``{"terrain", "crowns",
    "dominoes", "castle"}``; ``dominoes`` lists ``((r, c), (r, c), number)`` (first square = the
    domino's ``a`` half).
    """
    if size not in SIZES:
        raise ValueError(f"size must be 5 or 7, got {size}")
    rng = as_rng(rng)
    if fill is None:
        fill = 1.0 if rng.random() < 0.7 else float(rng.uniform(0.75, 1.0))
    best = None
    for _ in range(6):  # greedy placement gets stuck now and then: keep the fullest of a few tries
        lay = _layout_once(rng, size, fill)
        filled = 2 * len(lay["dominoes"])
        if best is None or filled > 2 * len(best["dominoes"]):
            best = lay
        if filled >= int(round(fill * (size * size - 1))) - 1:
            break
    return best


def _layout_once(rng, size, fill):
    n = size
    terrain = [["empty"] * n for _ in range(n)]
    crowns = [[0] * n for _ in range(n)]
    # castle: usually near the middle, anywhere in the frame
    if rng.random() < 0.5:
        castle = (n // 2, n // 2)
    else:
        castle = tuple(int(v) for v in rng.integers(0, n, 2))
    terrain[castle[0]][castle[1]] = "castle"
    target = int(round(fill * (n * n - 1)))
    deck = list(dominoes())
    order = rng.permutation(len(deck))
    placed = []
    filled = 0

    def ok(r, c, t):
        for rr, cc in _neighbours(r, c, n):
            if terrain[rr][cc] in (t, "castle"):
                return True
        return False

    for idx in order:
        if filled + 2 > target:
            break
        num, ta, ca, tb, cb = deck[idx]
        options = []
        for r in range(n):
            for c in range(n):
                if terrain[r][c] != "empty":
                    continue
                for dr, dc in ((0, 1), (1, 0), (0, -1), (-1, 0)):
                    r2, c2 = r + dr, c + dc
                    if not (0 <= r2 < n and 0 <= c2 < n) or terrain[r2][c2] != "empty":
                        continue
                    if not (ok(r, c, ta) or ok(r2, c2, tb)):
                        continue
                    # prefer placements that leave no isolated hole and join many like squares
                    score = sum(terrain[a][b] == ta for a, b in _neighbours(r, c, n)) + \
                        sum(terrain[a][b] == tb for a, b in _neighbours(r2, c2, n))
                    options.append((score, r, c, r2, c2))
        if not options:
            continue
        weights = np.array([1.0 + 2.0 * o[0] for o in options])
        # avoid leaving single empty squares that no domino can fill
        for i, (_, r, c, r2, c2) in enumerate(options):
            terrain[r][c] = terrain[r2][c2] = "x"
            holes = any(terrain[a][b] == "empty" and
                        all(terrain[e][f] != "empty" for e, f in _neighbours(a, b, n))
                        for p in ((r, c), (r2, c2)) for a, b in _neighbours(*p, n))
            terrain[r][c] = terrain[r2][c2] = "empty"
            if holes:
                weights[i] *= 0.05
        pick = options[int(rng.choice(len(options), p=weights / weights.sum()))]
        _, r, c, r2, c2 = pick
        terrain[r][c], crowns[r][c] = ta, ca
        terrain[r2][c2], crowns[r2][c2] = tb, cb
        placed.append(((r, c), (r2, c2), num))
        filled += 2
    return {"terrain": terrain, "crowns": crowns, "dominoes": placed, "castle": castle}


def queendomino_layout(rng=None, size: int = 5, towns: int | None = None,
                       building_share: float = 0.4) -> dict:
    """A ``random_layout`` kingdom with town squares, for drawing Queendomino kingdoms.

    The Queendomino dominoes are not in the project, so which squares are towns is made up:
    ``towns`` dominoes (default 2-4), picked at random, have their half with fewer crowns made
    a town (no crowns), as the photos' towns pair with a mine or a lake; about
    ``building_share`` of the towns get a building tile with 0 or 1 crown. Returns the layout
    with ``"buildings"`` (``{(r, c): crowns}``) added. Draws nothing from ``rng`` before
    ``random_layout`` does, so the kingdom under the towns is that seed's Kingdomino one."""
    rng = as_rng(rng)
    lay = random_layout(rng, size)
    terrain = [list(row) for row in lay["terrain"]]
    crowns = [list(row) for row in lay["crowns"]]
    n = int(rng.integers(2, 5)) if towns is None else int(towns)
    buildings = {}
    for k in rng.permutation(len(lay["dominoes"]))[:n]:
        a, b, _ = lay["dominoes"][int(k)]
        r, c = a if crowns[a[0]][a[1]] < crowns[b[0]][b[1]] else b
        terrain[r][c], crowns[r][c] = TOWN, 0
        if rng.random() < building_share:
            buildings[(r, c)] = int(rng.random() < 0.4)
    return {**lay, "terrain": terrain, "crowns": crowns, "buildings": buildings}


def town_crops(rng=None, n: int = 32, cfg: dict | None = None, size: int = 5):
    """``n`` drawn town squares cut as the reader cuts a square (``vision.read.crops``: the
    board rectified at ``[classify] cell`` px a square with its margins), for a reader that
    wants examples of what a town looks like; ``(crops (n, S, S, 3) uint8, has_building (n,)
    bool)``. Boards of ``queendomino_layout`` kingdoms are drawn until ``n`` towns are cut; the
    art is procedural (see ``_draw_town``), not the game's: a stand-in, not a photo."""
    from vision import config as _config
    from vision.read.crops import cell_crops, image_corners, rectify

    rng = as_rng(rng)
    ccfg = (cfg if cfg is not None else _config.load())["classify"]
    crops, built = [], []
    while len(crops) < n:
        lay = queendomino_layout(rng, size)
        cell = int(rng.integers(64, 112))
        img = render_board(lay["terrain"], lay["crowns"], cell, rng, dominoes=lay["dominoes"],
                           buildings=lay["buildings"])
        board, _ = rectify(img, image_corners(img), size, size, ccfg["cell"],
                           ccfg["board_margin"])
        cut = cell_crops(board, size, size, ccfg["cell"], board_margin=ccfg["board_margin"],
                         crop_margin=ccfg["crop_margin"])
        for r, row in enumerate(lay["terrain"]):
            for c, t in enumerate(row):
                if t == TOWN and len(crops) < n:
                    crops.append(cut[r * size + c])
                    built.append((r, c) in lay["buildings"])
    return np.stack(crops).astype(np.uint8), np.array(built, bool)


def random_kingdom(rng=None, size: int = 5):
    """``(terrain, crowns)`` grids (lists of rows) of a plausible kingdom (see ``random_layout``)."""
    lay = random_layout(rng, size)
    return lay["terrain"], lay["crowns"]


def kingdom_json(terrain, crowns, rules: str = "kingdomino") -> dict:
    """The contract's Kingdom JSON for a pair of grids."""
    rows, cols = _check_grids(terrain, crowns)
    if rows != cols:
        raise ValueError(f"a kingdom is square (5x5 or 7x7), got {rows} x {cols}")
    return {"rules": rules, "size": rows,
            "cells": [[{"terrain": terrain[r][c], "crowns": int(crowns[r][c])} for c in range(cols)]
                      for r in range(rows)]}
