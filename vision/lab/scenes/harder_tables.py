"""Harder tables: a small kingdom seen steeply on patterned cloth, under a lamp, with a loose
domino or another kingdom's edge beside it (issue 54): what a standing player at a crowded table
photographs.

``make_harder_scene(rng, width=4000, height=3000, challenge=None, board=None) -> HardScene`` draws
one such photo with ``vision.lab.scenes.hard_tables``' parts (its tables, its ``HardScene`` truth),
never its random draws, so ``hard_tables`` seeds give the same scenes as before. Every scene has:

- a kingdom a fifth to a third of the photo's width (its outline's width), seen steeply: the far
  edge 20-42% shorter than the near one;
- cloth under it and around it, drawn in the kingdom's plane: stripes, checks, wood, or felt in a
  terrain's colours (``CLOTHS``); bare squares of the kingdom show the cloth.

``challenge`` (one of ``CHALLENGES``, default drawn) adds what lies on or beside it:

- ``steep``: nothing more;
- ``glare``: a lamp's glare (a bright washed-out ellipse) on part of the kingdom;
- ``loose``: a loose domino (two of the kingdom's own squares, so the same art) lying in the
  kingdom's plane half a square to a square and a half from one of its sides;
- ``neighbour``: another kingdom's edge (one or two rows of its tiles, no castle) one to two
  squares from one side;
- ``all``: glare and a loose domino together (the issue's harder set).

``measure`` in ``hard_tables`` reads them with ``harder=True``; ``kingdomino evaluate --harder N``
reports each challenge apart.
"""
from __future__ import annotations

import math

import cv2
import numpy as np

from vision.lab.scenes import render, synth
from vision.lab.scenes.hard_tables import (HardScene, TERRAIN_PALETTES, WOOD_PALETTES,
                                          _table_in_plane, placed_board, scene_start)

# Seeds for developing the reader on these scenes; report on seeds from REPORT_SEEDS_FROM on.
DEVELOP_SEEDS_FROM = 9800
REPORT_SEEDS_FROM = 9900
CHALLENGES = ("steep", "glare", "loose", "neighbour", "all")
CLOTHS = ("stripes", "checks", "wood", "felt")
CLOTH_PALETTES = {"stripes": TERRAIN_PALETTES + ("red", "white", "black"),
                  "checks": TERRAIN_PALETTES + ("red", "white", "black"),
                  "wood": WOOD_PALETTES,
                  "felt": TERRAIN_PALETTES}
WIDTH_FRACTION = (0.2, 1 / 3)       # the kingdom's outline width over the photo's
SHRINK = (0.20, 0.42)               # the far edge this much shorter than the near one


def parse_challenges(text: str | None) -> tuple:
    """Challenges named on a command line (comma-separated among ``CHALLENGES``), or all of them
    for nothing; ``ValueError`` naming the choices otherwise."""
    names = tuple(dict.fromkeys(k.strip() for k in (text or "").split(",") if k.strip()))
    if not names:
        return CHALLENGES
    bad = [k for k in names if k not in CHALLENGES]
    if bad:
        raise ValueError(f"unknown challenge {', '.join(bad)}: name challenges among "
                         f"{', '.join(CHALLENGES)} (comma-separated)")
    return names


def shrink_of(pts) -> float:
    """How much shorter the far edge is than the near one: over the two pairs of opposite sides
    of the quadrilateral ``pts``, the largest ``1 - short / long``."""
    p = np.asarray(pts, float)
    sides = np.linalg.norm(p - np.roll(p, -1, 0), axis=1)
    return float(max(1 - min(sides[0], sides[2]) / max(sides[0], sides[2]),
                     1 - min(sides[1], sides[3]) / max(sides[1], sides[3])))


def _steep_camera(bw, bh, W, H, rng):
    """Board px -> photo px: a pinhole camera tilted about one of the board's axes until the
    far edge is ``SHRINK`` shorter, scaled to ``WIDTH_FRACTION`` of the photo's width, moved to a
    random place with a square's margin. Returns the homography and its shrink."""
    target = float(rng.uniform(*SHRINK))
    rotation = float(rng.uniform(0, 360))
    tilt_dir = math.radians(rotation + 90 * int(rng.integers(0, 4)) + rng.uniform(-8, 8))
    dist = float(rng.uniform(0.9, 1.6))
    box = np.array([[0, 0], [bw, 0], [bw, bh], [0, bh]], float)
    lo, hi = 0.0, 85.0
    for _ in range(30):                        # the shrink grows with the tilt: bisect
        tilt = (lo + hi) / 2
        P = synth.project_plane(bw, bh, 1.0, rotation, tilt, tilt_dir, dist)
        if shrink_of(synth.apply_h(P, box)) < target:
            lo = tilt
        else:
            hi = tilt
    pts = synth.apply_h(P, box)
    width = float(rng.uniform(*WIDTH_FRACTION)) * W
    k = width / float(np.ptp(pts[:, 0]))
    span = np.ptp(pts, 0) * k
    margin = span.max() / 7
    lo_xy = margin - pts.min(0) * k
    hi_xy = np.maximum(lo_xy, np.array([W, H]) - margin - pts.max(0) * k)
    move = rng.uniform(lo_xy, hi_xy)
    Hb = np.array([[k, 0, move[0]], [0, k, move[1]], [0, 0, 1]]) @ P
    return Hb / Hb[2, 2], shrink_of(synth.apply_h(Hb, box)), tilt, k * dist / W


def _warp_onto(scene, patch, mask, to_photo, shadow_px: float) -> None:
    """Paste ``patch`` (its ``mask`` > 127) through the homography ``to_photo``, a soft shadow first."""
    H, W = scene.shape[:2]
    m = cv2.warpPerspective(mask, to_photo, (W, H), flags=cv2.INTER_LINEAR)
    shade = np.roll(np.roll(m, int(shadow_px * 0.4), 0), int(shadow_px * 0.3), 1)
    synth.shadow(scene, shade, (0, 0), 0.35, max(3, shadow_px))
    warped = cv2.warpPerspective(patch, to_photo, (W, H), flags=cv2.INTER_LINEAR)
    on = m > 127
    scene[on] = warped[on]


def _loose_domino(scene, board, Hb, cell, rng) -> dict:
    """Two of the board's own land squares side by side, lying half a square to a square and a
    half off one of its sides, turned a little, in the kingdom's plane."""
    img, terrain = board["image"], board["terrain"]
    n = len(terrain)
    bh, bw = img.shape[:2]
    ch, cw = bh / n, bw / n
    land = [(r, c) for r in range(n) for c in range(n) if terrain[r][c] not in ("empty", "castle")]
    picks = [land[int(i)] for i in rng.choice(len(land), 2, replace=False)]
    s = int(round(min(ch, cw)))
    halves = [cv2.resize(img[int(r * ch):int((r + 1) * ch), int(c * cw):int((c + 1) * cw)], (s, s))
              for r, c in picks]
    domino = np.concatenate(halves, 1)
    H, W = scene.shape[:2]
    src = np.float32([[0, 0], [2 * s, 0], [2 * s, s], [0, s]])
    for side in (int(k) for k in rng.permutation(4)):     # the first side where it is in the photo
        gap = float(rng.uniform(0.5, 1.5)) * s
        upright = side in (1, 3) and rng.random() < 0.5 or side in (0, 2) and rng.random() < 0.3
        dw, dh = (s, 2 * s) if upright else (2 * s, s)
        span = bw if side in (0, 2) else bh
        start = float(rng.uniform(-0.5 * s, span - 0.5 * (dw if side in (0, 2) else dh)))
        cx, cy = {0: (start + dw / 2, -gap - dh / 2), 2: (start + dw / 2, bh + gap + dh / 2),
                  1: (bw + gap + dw / 2, start + dh / 2), 3: (-gap - dw / 2, start + dh / 2)}[side]
        turn = math.radians(float(rng.uniform(-12, 12)) + (90 if upright else 0))
        c, si = math.cos(turn), math.sin(turn)
        local = np.array([[-s, -s / 2], [s, -s / 2], [s, s / 2], [-s, s / 2]])
        plane = local @ np.array([[c, si], [-si, c]]) + [cx, cy]
        to_photo = Hb @ cv2.getPerspectiveTransform(src, plane.astype(np.float32)).astype(float)
        pts = synth.apply_h(to_photo, src.astype(float))
        if pts.min() >= 0 and pts[:, 0].max() < W and pts[:, 1].max() < H:
            break
    _warp_onto(scene, domino, np.full(domino.shape[:2], 255, np.uint8), to_photo, s * 0.06)
    return {"side": side, "gap_squares": round(gap / s, 2), "squares": [list(p) for p in picks],
            "corners": pts.round(1).tolist()}


def _neighbour(scene, Hb, bw, bh, cell, rng) -> dict:
    """Another player's kingdom's edge, the same scale, one to two squares off one side, in the
    kingdom's plane: the one or two rows of an unfinished kingdom nearest this one (its castle,
    beyond the photo or the rows shown, left out as bare table)."""
    lay = render.random_layout(rng, 5, fill=float(rng.uniform(0.5, 0.9)))
    depth = int(rng.integers(1, 3))
    keep = range(5 - depth, 5)
    terrain = [["empty" if t == "castle" else t for t in lay["terrain"][r]] for r in keep]
    crowns = [list(lay["crowns"][r]) for r in keep]
    doms = [((a[0] - keep[0], a[1]), (b[0] - keep[0], b[1]), k) for a, b, k in lay["dominoes"]
            if a[0] in keep and b[0] in keep]
    img, mask = render.render_board(terrain, crowns, cell=int(cell), rng=rng, dominoes=doms,
                                    return_mask=True)
    side = int(rng.integers(0, 4))
    img, mask = (np.ascontiguousarray(np.rot90(x, -side)) for x in (img, mask))
    nh, nw = img.shape[:2]
    gap = float(rng.uniform(1.0, 2.0)) * cell
    shift = float(rng.uniform(-0.4, 0.4))
    if side == 0:
        x0, y0 = shift * bw, -gap - nh
    elif side == 2:
        x0, y0 = shift * bw, bh + gap
    elif side == 1:
        x0, y0 = bw + gap, shift * bh
    else:
        x0, y0 = -gap - nw, shift * bh
    to_photo = Hb @ np.array([[1, 0, x0], [0, 1, y0], [0, 0, 1]], float)
    _warp_onto(scene, img, mask, to_photo, cell * 0.06)
    return {"side": side, "rows": depth, "gap_squares": round(gap / cell, 2)}


def _lamp_glare(scene, quad, square: float, rng) -> dict:
    """A lamp mirrored in the tiles: a soft, bright ellipse one to two squares across centred on
    a random point of the kingdom, washing it out by 50-85%."""
    H, W = scene.shape[:2]
    a, b = rng.uniform(0.15, 0.85, 2)
    top = quad[0] + (quad[1] - quad[0]) * a
    bottom = quad[3] + (quad[2] - quad[3]) * a
    cx, cy = top + (bottom - top) * b
    g = np.zeros((H // 4, W // 4), np.float32)
    axes = (max(1, int(square * rng.uniform(0.5, 1.0) / 4)), max(1, int(square * rng.uniform(0.3, 0.6) / 4)))
    cv2.ellipse(g, (int(cx / 4), int(cy / 4)), axes, float(rng.uniform(0, 180)), 0, 360, 1.0, -1)
    g = cv2.GaussianBlur(g, (0, 0), max(0.5, square * rng.uniform(0.1, 0.25) / 4))
    g = cv2.resize(g, (W, H), interpolation=cv2.INTER_LINEAR)[..., None]
    strength = float(rng.uniform(0.5, 0.85))
    out = scene.astype(np.float32) * (1 - strength * g) + strength * g * float(rng.uniform(230, 255))
    scene[:] = np.clip(out, 0, 255).astype(np.uint8)
    return {"at": [round(float(cx), 1), round(float(cy), 1)], "strength": round(strength, 2)}


def make_harder_scene(rng=None, width: int = 4000, height: int = 3000, *, challenge: str | None = None,
                      board: dict | None = None, size: int | None = None, cloth: str | None = None,
                      seed: int | None = None) -> HardScene:
    """One harder-table photo and its truth (see the module's doc). ``rng``: a generator or an int
    seed (the same seed, challenge and board give the same photo). ``board``: a board picture
    (``vision.lab.scenes.synth.aau_boards``' dicts: real tile art) instead of a drawn kingdom;
    ``size``: 5 or 7 for a drawn one (default 5 three times in five). ``cloth``: one of ``CLOTHS``
    (default drawn). ``HardScene.extra`` holds the challenge, the shrink, the width fraction and
    what was put beside the kingdom."""
    rng, seed, W, H = scene_start(rng, seed, width, height)
    if challenge is not None and challenge not in CHALLENGES:
        raise ValueError(f"challenge must be one of {', '.join(CHALLENGES)}, got {challenge!r}")
    if cloth is not None and cloth not in CLOTHS:
        raise ValueError(f"cloth must be one of {', '.join(CLOTHS)}, got {cloth!r}")
    challenge = challenge or str(rng.choice(list(CHALLENGES)))
    cloth = cloth or str(rng.choice(list(CLOTHS)))
    palette = str(rng.choice(list(CLOTH_PALETTES[cloth])))
    if board is None:
        size = size or (5 if rng.random() < 0.6 else 7)
        board = synth.rendered_board(rng, size=size, cell=int(min(W, H) / 3 / size) + 8, castle_3d=True)
    n = len(board["terrain"])
    img, mask = board["image"], board["mask"]
    bh, bw = img.shape[:2]
    Hb, shrink, tilt, focal = _steep_camera(bw, bh, W, H, rng)
    board_pts, corners, turns, side = placed_board(Hb, bw, bh)
    cell = bw / n

    scene = _table_in_plane(cloth, palette, Hb, bw, W, H, rng)
    extra = {"challenge": challenge, "shrink": round(shrink, 3), "tilt": round(tilt, 2),
             "focal": round(focal, 3),
             "width_fraction": round(float(np.ptp(board_pts[:, 0])) / W, 3), "turns": turns}
    if challenge in ("loose", "all"):
        extra["loose"] = _loose_domino(scene, board, Hb, cell, rng)
    if challenge == "neighbour":
        extra["neighbour"] = _neighbour(scene, Hb, bw, bh, cell, rng)
    tiles = cv2.warpPerspective(mask, Hb, (W, H), flags=cv2.INTER_LINEAR)
    synth.shadow(scene, tiles, (0, 0), 0.35, max(3, side * 0.02))
    warped = cv2.warpPerspective(img, Hb, (W, H), flags=cv2.INTER_LINEAR)
    on = tiles > 127
    scene[on] = warped[on]
    if challenge in ("glare", "all"):
        extra["glare"] = _lamp_glare(scene, board_pts, side / n, rng)
    scene = synth.degrade_photo(scene, rng, mild=True)
    terrain = synth.scene_grid(board["terrain"], turns)
    crowns = synth.scene_grid(board["crowns"], turns)
    clutter = tuple(k for k in ("loose", "neighbour") if k in extra)
    return HardScene(image=scene, corners=corners, size=n,
                     terrain=tuple(tuple(str(t) for t in row) for row in terrain),
                     crowns=tuple(tuple(int(c) for c in row) for row in crowns),
                     table=cloth, palette=palette, clutter=clutter, seed=seed, extra=extra)
