"""Synthetic phone photos: a rectified board placed on a table, seen by a tilted, turned camera.

Main entry points:

- ``make_scene(board_bgr, rng, width=None, ...) -> (scene_bgr, corners)``: the board (an AAU dev
  photo or a ``vision.lab.scenes.render`` board) put into a 3000-4000 px wide photo. ``corners`` is the
  ground truth, a float32 (4, 2) array ordered tl, tr, br, bl **as the reader orders them**
  (``top_first``: clockwise on screen, the tl-tr side being the side nearest the top of the
  photo, i.e. with the smallest mean y). With ``return_info=True`` a third value, a dict, also
  gives ``turns``.
- Re-indexing rule: the scene's corner ``i`` is the board image's corner ``(i + turns) % 4``
  (board corners in the order tl, tr, br, bl of the board image). So the grid as seen in the
  scene (row 0 along the tl-tr edge) is ``numpy.rot90(grid, turns)`` of the board's own grid:
  ``scene_grid(grid, turns)`` does this for label grids (lists of rows) and for images.
- ``evaluate_scenes(reader, boards, n, rng) -> dict``: how well a reader reads ``n`` scenes.
- ``python3 -m vision.lab.scenes.synth scenes OUTDIR --n N --seed S`` writes scenes and ``truth.json``;
  ``python3 -m vision.lab.scenes.synth samples samples/`` (re)writes the bundled sample photos.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import cv2
import numpy as np

from engine.kingdom import BASE_TERRAINS
from vision.lab.scenes import render

TABLES = ("wood", "laminate", "cloth", "mat")


# --------------------------------------------------------------------------- ground truth

def scene_grid(grid, turns: int):
    """The board's grid re-indexed as seen in the scene: ``numpy.rot90(grid, turns)``.

    Works for label grids (lists of rows; returns lists of rows) and for images/arrays.
    """
    if isinstance(grid, np.ndarray):
        return np.ascontiguousarray(np.rot90(grid, turns % 4))
    arr = np.empty((len(grid), len(grid[0])), dtype=object)
    for r, row in enumerate(grid):
        for c, v in enumerate(row):
            arr[r, c] = v
    return [list(row) for row in np.rot90(arr, turns % 4)]


def top_first(points) -> np.ndarray:
    """Order 4 corners clockwise on screen, starting so that the first side (tl-tr) is the side
    nearest the top of the photo (smallest mean y of its two ends); tl is its left end.

    This is the reader's convention (``vision.find.detect``), restated here so the ground truth does
    not depend on the detector's code.
    """
    pts = np.asarray(points, np.float64).reshape(4, 2)
    centre = pts.mean(axis=0)
    pts = pts[np.argsort(np.arctan2(pts[:, 1] - centre[1], pts[:, 0] - centre[0]))]
    side_y = [(pts[k, 1] + pts[(k + 1) % 4, 1]) / 2 for k in range(4)]
    return np.roll(pts, -int(np.argmin(side_y)), axis=0)


def turns_and_corners(board_pts: np.ndarray):
    """Scene-ordered corners and ``turns`` for the board corners (board tl, tr, br, bl order)."""
    ordered = top_first(board_pts)
    k = int(np.argmin(np.linalg.norm(board_pts - ordered[0], axis=1)))
    if not np.allclose(np.roll(board_pts, -k, axis=0), ordered, atol=1e-3):
        raise AssertionError("board corners are not a cyclic shift of the ordered corners")
    return ordered.astype(np.float32), k


# --------------------------------------------------------------------------- tables

def _smooth_noise(h, w, scale, rng):
    n_h, n_w = max(2, int(h / scale)), max(2, int(w / scale))
    small = rng.normal(0, 1, (n_h, n_w)).astype(np.float32)
    return cv2.resize(small, (w, h), interpolation=cv2.INTER_CUBIC)


def _table(kind, H, W, rng, plane_H=None, board_px=None):
    """A table texture (H x W BGR uint8). Drawn at quarter size then enlarged (cheap)."""
    h, w = max(8, H // 4), max(8, W // 4)
    if kind == "wood":
        base = np.array(rng.choice([(120, 170, 210), (90, 135, 180), (60, 90, 130), (150, 190, 215)]),
                        np.float32) * rng.uniform(0.85, 1.1)
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        warp = _smooth_noise(h, w, w / 6, rng) * rng.uniform(8, 20)
        period = rng.uniform(6, 18)
        grain = 0.6 * np.sin((yy + warp + 0.02 * xx) * 2 * math.pi / period)
        # streaks: noise stretched along the planks
        streak = cv2.resize(rng.normal(0, 1, (max(2, h // 2), max(2, w // 40))).astype(np.float32), (w, h),
                            interpolation=cv2.INTER_LINEAR)
        grain += 0.8 * streak + 0.4 * _smooth_noise(h, w, 3, rng)
        plank = max(4, int(rng.uniform(0.15, 0.35) * h))
        shade = 1 + 0.05 * grain + 0.05 * _smooth_noise(h, w, w / 3, rng)
        img = base[None, None, :] * shade[..., None]
        for y in range(int(rng.uniform(0, plank)), h, plank):
            img[y:y + plank] *= rng.uniform(0.92, 1.08)  # each plank its own tone
            img[y:y + 1] *= 0.55
        for _ in range(int(rng.integers(0, 4))):  # knots
            cx, cy = int(rng.uniform(0, w)), int(rng.uniform(0, h))
            ax = int(rng.uniform(3, 10))
            cv2.ellipse(img, (cx, cy), (ax, max(1, ax // 3)), 0, 0, 360, tuple(float(v) for v in base * 0.6), -1)
        if rng.random() < 0.5:
            img = cv2.resize(np.ascontiguousarray(img.transpose(1, 0, 2)), (w, h))
    elif kind == "laminate":  # plain grey, or a speckled beige-grey kitchen worktop
        g = rng.uniform(150, 215)
        base = np.array([g, g * rng.uniform(0.97, 1.02), g * rng.uniform(0.96, 1.04)], np.float32)
        if rng.random() < 0.5:
            base = base * np.array([0.86, 0.95, 1.02], np.float32)
        img = base[None, None, :] * (1 + 0.02 * _smooth_noise(h, w, w / 4, rng))[..., None]
        img += rng.normal(0, 4, (h, w, 1)).astype(np.float32)
        if rng.random() < 0.6:  # speckles
            sp = rng.random((h, w)) < rng.uniform(0.01, 0.05)
            img[sp] *= rng.uniform(0.6, 0.85)
    elif kind == "cloth":
        base = np.array(rng.choice([(40, 35, 35), (30, 30, 60), (60, 40, 30), (35, 45, 35), (70, 35, 25)]),
                        np.float32)
        img = base[None, None, :] * (1 + 0.15 * _smooth_noise(h, w, 2, rng)
                                     + 0.1 * _smooth_noise(h, w, w / 5, rng))[..., None]
        if rng.random() < 0.4:  # a cloth with small LED dots
            for _ in range(int(rng.integers(20, 80))):
                x, y = int(rng.uniform(0, w)), int(rng.uniform(0, h))
                cv2.circle(img, (x, y), 1, (200, 230, 250), -1)
        if rng.random() < 0.3:  # coloured LED strings hanging in lines of dots
            for _ in range(int(rng.integers(8, 30))):
                x = rng.uniform(0, w)
                colour = tuple(float(v) for v in rng.choice([(60, 60, 230), (230, 120, 60), (80, 200, 240)]))
                y_end = rng.uniform(0.2, 0.7) * h
                for y in np.arange(0, y_end, rng.uniform(2, 4)):
                    cv2.circle(img, (int(x + 3 * math.sin(y / 15)), int(y)), 1, colour, -1)
    else:  # cutting mat (navy, blue or green), grid drawn later in the board's plane
        base = np.array(rng.choice([(90, 50, 25), (110, 65, 30), (150, 100, 40), (80, 120, 40)]), np.float32)
        img = base[None, None, :] * (1 + 0.03 * _smooth_noise(h, w, w / 4, rng))[..., None]
    img = cv2.resize(np.clip(img, 0, 255).astype(np.uint8), (W, H), interpolation=cv2.INTER_LINEAR)
    if kind == "mat" and plane_H is not None:
        _mat_grid(img, plane_H, board_px, rng)
    return img


def _table_edge(img, board_pts, rng):
    """Replace the strip beyond a straight table edge, on the side away from the board."""
    H, W = img.shape[:2]
    side = int(rng.integers(0, 4))
    depth = rng.uniform(0.05, 0.2)
    lo, hi = board_pts.min(0), board_pts.max(0)
    if side == 0:
        a, b = (0, depth * H * rng.uniform(0.5, 1.5)), (W, depth * H * rng.uniform(0.5, 1.5))
        limit = lo[1] - 0.03 * H
        far = [(W, 0), (0, 0)]
    elif side == 1:
        a, b = (0, H * (1 - depth * rng.uniform(0.5, 1.5))), (W, H * (1 - depth * rng.uniform(0.5, 1.5)))
        limit = H - hi[1] - 0.03 * H
        far = [(W, H), (0, H)]
    elif side == 2:
        a, b = (depth * W * rng.uniform(0.5, 1.5), 0), (depth * W * rng.uniform(0.5, 1.5), H)
        limit = lo[0] - 0.03 * W
        far = [(0, H), (0, 0)]
    else:
        a, b = (W * (1 - depth * rng.uniform(0.5, 1.5)), 0), (W * (1 - depth * rng.uniform(0.5, 1.5)), H)
        limit = W - hi[0] - 0.03 * W
        far = [(W, H), (W, 0)]
    reach = max(a[1], b[1]) if side == 0 else H - min(a[1], b[1]) if side == 1 else \
        max(a[0], b[0]) if side == 2 else W - min(a[0], b[0])
    if reach > limit:  # would cut into the board: no edge in this photo
        return
    poly = np.array([a, b] + far, np.int32)
    colour = tuple(int(v) for v in rng.integers(20, 110, 3))
    cv2.fillPoly(img, [poly], colour)
    cv2.line(img, tuple(int(v) for v in a), tuple(int(v) for v in b), _shade(colour, 0.5),
             max(3, int(W / 400)), cv2.LINE_AA)


def _mat_grid(img, plane_H, board_px, rng):
    """Grid lines of a cutting mat, drawn in the board's plane (so they follow the perspective)."""
    H, W = img.shape[:2]
    step = board_px / rng.uniform(16, 24)
    colour = (230, 225, 215) if rng.random() < 0.7 else (60, 200, 230)
    off = rng.uniform(0, step, 2)
    ext = 3 * board_px
    thick = max(1, int(W / 1500))
    for axis in (0, 1):
        for i, t in enumerate(np.arange(-ext, ext + board_px, step)):
            t = t + off[axis]
            a = np.array([[t, -ext], [t, ext + board_px]]) if axis == 0 else \
                np.array([[-ext, t], [ext + board_px, t]])
            pts = np.c_[a, np.ones(2)] @ plane_H.T
            if np.any(pts[:, 2] <= 1e-6):
                continue
            p = pts[:, :2] / pts[:, 2:]
            if np.any(np.abs(p) > 8 * max(H, W)):
                continue
            cv2.line(img, tuple(int(v) for v in p[0]), tuple(int(v) for v in p[1]), colour,
                     thick * (2 if i % 5 == 0 else 1), cv2.LINE_AA)


# --------------------------------------------------------------------------- camera

def _rot(axis, ang):
    c, s = math.cos(ang), math.sin(ang)
    x, y, z = axis
    return np.array([[c + x * x * (1 - c), x * y * (1 - c) - z * s, x * z * (1 - c) + y * s],
                     [y * x * (1 - c) + z * s, c + y * y * (1 - c), y * z * (1 - c) - x * s],
                     [z * x * (1 - c) - y * s, z * y * (1 - c) + x * s, c + z * z * (1 - c)]])


def project_plane(bw, bh, side_px, rotation_deg, tilt_deg, tilt_dir, dist):
    """Homography from board pixels to an image centred on (0, 0) for the given camera pose."""
    s = side_px / max(bw, bh)
    # board pixel (u, v) -> plane point ((u - bw/2) s, (v - bh/2) s, 0)
    A = np.array([[s, 0, -bw / 2 * s], [0, s, -bh / 2 * s], [0, 0, 1]])
    R = _rot((0, 0, 1), math.radians(rotation_deg))
    axis = (math.cos(tilt_dir), math.sin(tilt_dir), 0.0)
    R = _rot(axis, math.radians(tilt_deg)) @ R
    f = dist
    # camera at (0, 0, -dist) looking along +z: x_img = f X / (Z + dist)
    K = np.array([[f, 0, 0], [0, f, 0], [0, 0, 1]])
    M = np.c_[R[:, 0], R[:, 1], np.array([0, 0, dist])]
    return K @ M @ A


def apply_h(Hm, pts):
    p = np.c_[pts, np.ones(len(pts))] @ Hm.T
    return p[:, :2] / p[:, 2:]


# --------------------------------------------------------------------------- distractors

def poly_rect(cx, cy, w, h, ang):
    c, s = math.cos(ang), math.sin(ang)
    d = np.array([[-w / 2, -h / 2], [w / 2, -h / 2], [w / 2, h / 2], [-w / 2, h / 2]])
    return (d @ np.array([[c, s], [-s, c]]) + [cx, cy]).astype(np.int32)


def shadow(img, poly_or_mask, offset, strength, blur):
    H, W = img.shape[:2]
    if isinstance(poly_or_mask, np.ndarray) and poly_or_mask.ndim == 2 and poly_or_mask.shape == (H, W):
        m = poly_or_mask
    else:
        m = np.zeros((H, W), np.uint8)
        cv2.fillPoly(m, [np.asarray(poly_or_mask, np.int32) + np.int32(offset)], 255)
    k = int(blur) | 1
    m = cv2.GaussianBlur(m, (k, k), 0).astype(np.float32) / 255
    img[:] = (img * (1 - strength * m[..., None])).astype(np.uint8)


def _draw_box(img, cx, cy, size, ang, rng):
    w, h = size, size * rng.uniform(0.5, 1.0)
    poly = poly_rect(cx, cy, w, h, ang)
    shadow(img, poly, (size * 0.03, size * 0.04), 0.45, size * 0.06)
    colour = tuple(int(v) for v in rng.integers(20, 230, 3))
    cv2.fillPoly(img, [poly], colour, cv2.LINE_AA)
    inner = poly_rect(cx, cy, w * 0.8, h * 0.7, ang)
    cv2.fillPoly(img, [inner], tuple(int(v) for v in rng.integers(20, 230, 3)), cv2.LINE_AA)
    cv2.polylines(img, [poly], True, (240, 240, 240), max(2, int(size / 80)), cv2.LINE_AA)
    return poly


def _draw_paper(img, cx, cy, size, ang, rng):
    w, h = size * 0.72, size
    poly = poly_rect(cx, cy, w, h, ang)
    shadow(img, poly, (size * 0.01, size * 0.015), 0.3, size * 0.03)
    cv2.fillPoly(img, [poly], tuple(int(v) for v in rng.integers(215, 250, 3)), cv2.LINE_AA)
    c, s = math.cos(ang), math.sin(ang)
    for i in range(int(rng.integers(6, 16))):  # lines of writing / a score table
        y = -h * 0.4 + i * h * 0.055
        x0, x1 = -w * 0.4, -w * 0.4 + w * rng.uniform(0.3, 0.8)
        p0 = (cx + x0 * c - y * s, cy + x0 * s + y * c)
        p1 = (cx + x1 * c - y * s, cy + x1 * s + y * c)
        cv2.line(img, tuple(int(v) for v in p0), tuple(int(v) for v in p1), (90, 80, 70),
                 max(1, int(size / 250)), cv2.LINE_AA)
    return poly


def draw_meeple(img, cx, cy, size, ang, rng):
    colour = tuple(int(v) for v in rng.choice([(60, 60, 220), (40, 200, 230), (60, 170, 60),
                                                (200, 110, 40), (180, 90, 200)]))
    shadow(img, poly_rect(cx + size * 0.1, cy + size * 0.1, size * 0.8, size, ang), (0, 0), 0.4,
            size * 0.3)
    cv2.ellipse(img, (int(cx), int(cy)), (int(size * 0.4), int(size * 0.5)), math.degrees(ang), 0, 360,
                colour, -1, cv2.LINE_AA)
    hx, hy = cx - size * 0.45 * math.sin(ang), cy - size * 0.45 * math.cos(ang)
    cv2.circle(img, (int(hx), int(hy)), int(size * 0.25), _shade(colour, 1.15), -1, cv2.LINE_AA)
    cv2.circle(img, (int(cx - size * 0.1), int(cy - size * 0.15)), int(size * 0.1),
               _shade(colour, 1.4), -1, cv2.LINE_AA)
    return poly_rect(cx, cy - size * 0.2, size, size * 1.4, ang)


def _draw_pencil(img, cx, cy, size, ang, rng):
    poly = poly_rect(cx, cy, size, size * 0.045, ang)
    shadow(img, poly, (size * 0.01, size * 0.015), 0.35, size * 0.02)
    cv2.fillPoly(img, [poly], tuple(int(v) for v in rng.choice([(30, 200, 240), (40, 40, 200), (60, 140, 40)])),
                 cv2.LINE_AA)
    tip = (cx + math.cos(ang) * size * 0.55, cy + math.sin(ang) * size * 0.55)
    cv2.line(img, (int(cx + math.cos(ang) * size * 0.5), int(cy + math.sin(ang) * size * 0.5)),
             (int(tip[0]), int(tip[1])), (120, 170, 210), max(2, int(size * 0.04)), cv2.LINE_AA)
    return poly


def _shade(colour, f):
    return tuple(int(min(255, max(0, v * f))) for v in colour)


def _place_other_kingdom(img, keep_small, board_side, rng) -> bool:
    """Another player's (unfinished) kingdom on the same table, clear of the board."""
    H, W = img.shape[:2]
    lay = render.random_layout(rng, 5, fill=float(rng.uniform(0.25, 0.6)))
    rows = [r for r in range(5) if any(t != "empty" for t in lay["terrain"][r])]
    cols = [c for c in range(5) if any(lay["terrain"][r][c] != "empty" for r in range(5))]
    terrain = [lay["terrain"][r][cols[0]:cols[-1] + 1] for r in range(rows[0], rows[-1] + 1)]
    crowns = [lay["crowns"][r][cols[0]:cols[-1] + 1] for r in range(rows[0], rows[-1] + 1)]
    doms = [((a[0] - rows[0], a[1] - cols[0]), (b[0] - rows[0], b[1] - cols[0]), n)
            for a, b, n in lay["dominoes"]]
    cell = max(16, int(board_side / 5 * rng.uniform(0.6, 1.0)))
    tile, tmask = render.render_board(terrain, crowns, cell=cell, rng=rng, dominoes=doms,
                                      return_mask=True)
    h, w = tile.shape[:2]
    for _try in range(20):
        cx, cy = rng.uniform(0, W), rng.uniform(0, H)
        ang = rng.uniform(0, 2 * math.pi)
        poly = poly_rect(cx / 8, cy / 8, w * 1.2 / 8, h * 1.2 / 8, ang)
        m = np.zeros_like(keep_small)
        cv2.fillPoly(m, [poly], 255)
        if np.any(m & keep_small):
            continue
        M = cv2.getRotationMatrix2D((w / 2, h / 2), -math.degrees(ang), 1.0)
        M[:, 2] += (cx - w / 2, cy - h / 2)
        mk = cv2.warpAffine(tmask, M, (W, H))
        shadow(img, cv2.warpAffine(tmask, M + [[0, 0, board_side * 0.01], [0, 0, board_side * 0.015]],
                                    (W, H)), (0, 0), 0.35, max(3, board_side * 0.02))
        warped = cv2.warpAffine(tile, M, (W, H))
        sel = mk > 127
        img[sel] = warped[sel]
        return True
    return False


def draw_loose_domino(img, cx, cy, size, ang, rng):
    """A single domino lying apart from the kingdom (as in the real photos' draft rows)."""
    t = rng.choice(list(BASE_TERRAINS), 2)
    s = max(16, int(size / 2))
    tile = np.concatenate([render.draw_square(str(t[0]), 0, s, rng), render.draw_square(str(t[1]), 0, s, rng)], 1)
    h, w = tile.shape[:2]
    M = cv2.getRotationMatrix2D((w / 2, h / 2), -math.degrees(ang), 1.0)
    M[:, 2] += (cx - w / 2, cy - h / 2)
    poly = poly_rect(cx, cy, w, h, ang)
    shadow(img, poly, (size * 0.02, size * 0.03), 0.4, size * 0.05)
    warped = cv2.warpAffine(tile, M, (img.shape[1], img.shape[0]))
    m = cv2.warpAffine(np.full((h, w), 255, np.uint8), M, (img.shape[1], img.shape[0]))
    img[m > 127] = warped[m > 127]
    return poly


_DISTRACTORS = {"box": _draw_box, "paper": _draw_paper, "meeple": draw_meeple,
                "pencil": _draw_pencil, "domino": draw_loose_domino}


# --------------------------------------------------------------------------- the scene

def make_scene(board_bgr, rng, width=None, *, board_mask=None, table=None, rotation=None,
               tilt=None, max_tilt=35.0, scale=None, distractors=True, occlude=False,
               degrade=True, portrait=None, other_kingdom=False, return_info=False):
    """Put a rectified board into a synthetic phone photo.

    ``board_bgr``: the board image (its four image corners are the board's corners).
    ``rng``: ``numpy.random.Generator`` (or an int seed). ``width``: photo width (default random
    3000-4000). ``board_mask``: optional uint8 mask (255 = tile), e.g. from
    ``render_board(..., return_mask=True)``: pixels outside it show this scene's table.
    ``table``: one of ``TABLES`` (default random). ``rotation``: in-plane turn in degrees (default
    random 0-360). ``tilt``: camera tilt in degrees (default random 0-``max_tilt``). ``scale``:
    board side as a fraction of the photo's shorter side (default random 0.3-0.8).
    ``distractors``: boxes, sheets, meeples, pencils, loose dominoes around the board.
    ``occlude``: also put one object over part of an edge square. ``other_kingdom``: another
    player's unfinished kingdom elsewhere on the table (``info["other_kingdom"]`` says whether
    it fitted). ``degrade``: light gradient,
    colour cast, blur, noise, JPEG round trip (``"mild"``: no glare, little blur and noise).

    Returns ``(scene_bgr, corners)``, or ``(scene_bgr, corners, info)`` with ``return_info``:
    ``info["turns"]`` re-indexes the board's label grids (``scene_grid(grid, info["turns"])``),
    plus ``info["homography"]`` (board pixels -> scene pixels), ``table``, ``rotation``, ``tilt``,
    ``occluded``.
    """
    rng = render.as_rng(rng)
    board = np.asarray(board_bgr)
    if board.ndim != 3 or board.shape[2] != 3 or min(board.shape[:2]) < 16:
        raise ValueError("board_bgr must be a BGR image (H x W x 3) at least 16 pixels on each side")
    bh, bw = board.shape[:2]
    W = int(width) if width else int(rng.integers(3000, 4001))
    if portrait is None:
        portrait = rng.random() < 0.25
    H = int(round(W * 4 / 3)) if portrait else int(round(W * 3 / 4))
    rotation = float(rng.uniform(0, 360)) if rotation is None else float(rotation)
    tilt = float(rng.uniform(0, max_tilt)) if tilt is None else float(tilt)
    tilt_dir = float(rng.uniform(0, 2 * math.pi))
    frac = float(rng.uniform(0.3, 0.8)) if scale is None else float(scale)
    table = table or str(rng.choice(TABLES))
    if table not in TABLES:
        raise ValueError(f"table must be one of {', '.join(TABLES)}, got {table!r}")

    side = frac * min(W, H)
    dist = side * rng.uniform(1.3, 2.5)
    margin = 0.04 * min(W, H)
    for _ in range(20):  # shrink until the board fits in the frame
        P0 = project_plane(bw, bh, side, rotation, tilt, tilt_dir, dist)
        pts = apply_h(P0, np.array([[0, 0], [bw, 0], [bw, bh], [0, bh]], float))
        ext = pts.max(0) - pts.min(0)
        if ext[0] <= W - 2 * margin and ext[1] <= H - 2 * margin:
            break
        side *= 0.9
        dist *= 0.9
    lo = margin - pts.min(0)
    hi = np.array([W, H]) - margin - pts.max(0)
    shift = rng.uniform(lo, np.maximum(lo, hi))
    T = np.array([[1, 0, shift[0]], [0, 1, shift[1]], [0, 0, 1]])
    Hb = T @ P0
    Hb /= Hb[2, 2]
    board_pts = apply_h(Hb, np.array([[0, 0], [bw, 0], [bw, bh], [0, bh]], float)).astype(np.float32)
    corners, turns = turns_and_corners(board_pts)
    board_side = float(np.mean(np.linalg.norm(board_pts - np.roll(board_pts, -1, 0), axis=1)))

    scene = _table(table, H, W, rng, plane_H=Hb, board_px=max(bw, bh))
    if rng.random() < 0.2:  # the table's edge: floor or room beyond one side of the photo
        _table_edge(scene, board_pts, rng)

    # board area mask (for shadows and for keeping distractors off the board)
    quad = np.zeros((H, W), np.uint8)
    cv2.fillPoly(quad, [np.round(board_pts).astype(np.int32)], 255)
    if board_mask is None:
        tiles = quad
    else:
        bm = np.asarray(board_mask, np.uint8)
        if bm.shape != (bh, bw):
            raise ValueError(f"board_mask must be {bh} x {bw} like the board, got {bm.shape}")
        tiles = cv2.warpPerspective(bm, Hb, (W, H), flags=cv2.INTER_LINEAR)

    info = {"turns": turns, "homography": Hb.tolist(), "table": table, "rotation": rotation,
            "tilt": tilt, "occluded": False, "width": W, "height": H}

    # distractors first (they lie on the table, the board is never under them)
    keep_out = cv2.dilate(quad, np.ones((3, 3), np.uint8), iterations=1)
    keep_small = cv2.resize(keep_out, (W // 8, H // 8), interpolation=cv2.INTER_NEAREST)
    keep_small = cv2.dilate(keep_small, np.ones((5, 5), np.uint8))
    if distractors:
        kinds = list(_DISTRACTORS)
        for _ in range(int(rng.integers(1, 6))):
            kind = str(rng.choice(kinds, p=[0.2, 0.25, 0.3, 0.15, 0.1]))
            size = {"box": rng.uniform(0.2, 0.45), "paper": rng.uniform(0.25, 0.45),
                    "meeple": rng.uniform(0.025, 0.045), "pencil": rng.uniform(0.12, 0.22),
                    "domino": board_side / max(W, H) * rng.uniform(0.35, 0.45)}[kind] * max(W, H)
            for _try in range(15):
                cx, cy = rng.uniform(-0.1 * W, 1.1 * W), rng.uniform(-0.1 * H, 1.1 * H)
                ang = rng.uniform(0, 2 * math.pi)
                w_, h_ = (size, size) if kind != "domino" else (size, size / 2)
                poly = poly_rect(cx / 8, cy / 8, w_ * 1.5 / 8, h_ * 1.5 / 8, ang)
                m = np.zeros_like(keep_small)
                cv2.fillPoly(m, [poly], 255)
                if not np.any(m & keep_small):
                    _DISTRACTORS[kind](scene, cx, cy, size, ang, rng)
                    break
    if other_kingdom:
        info["other_kingdom"] = _place_other_kingdom(scene, keep_small, board_side, rng)

    # the board: shadow, tile thickness, then the tiles themselves
    shadow(scene, tiles, (0, 0), 0.35, max(3, board_side * 0.02))
    warped = cv2.warpPerspective(board, Hb, (W, H), flags=cv2.INTER_LINEAR)
    thick = max(1, int(board_side * 0.006))
    dy = thick if rng.random() < 0.5 else -thick
    side_mask = np.roll(tiles, dy, axis=0) > 127
    scene[side_mask] = (scene[side_mask] * 0.35).astype(np.uint8)
    if board_mask is None:
        alpha = tiles.astype(np.float32)[..., None] / 255
        scene = (warped * alpha + scene * (1 - alpha)).astype(np.uint8)
    else:
        sel = tiles > 127
        scene[sel] = warped[sel]

    if occlude:
        t = float(rng.uniform(0, 4))
        i = int(t) % 4
        p = board_pts[i] + (board_pts[(i + 1) % 4] - board_pts[i]) * (t - int(t))
        centre = board_pts.mean(0)
        p = p + (centre - p) * 0.03
        kind = str(rng.choice(["meeple", "pencil"]))
        size = (0.035 if kind == "meeple" else 0.18) * max(W, H)
        _DISTRACTORS[kind](scene, p[0], p[1], size, rng.uniform(0, 2 * math.pi), rng)
        info["occluded"] = True

    if degrade:
        scene = degrade_photo(scene, rng, mild=degrade == "mild")
    if return_info:
        return scene, corners, info
    return scene, corners


def degrade_photo(img, rng, mild=False):
    """Uneven light, a colour cast, blur, sensor noise and a JPEG round trip (``mild``: a good
    phone photo: no glare, little blur and noise)."""
    H, W = img.shape[:2]
    h, w = H // 8, W // 8
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    a, b = rng.uniform(-0.25, 0.25, 2)
    light = 1 + a * (xx / w - 0.5) + b * (yy / h - 0.5)
    cx, cy = rng.uniform(0.2, 0.8) * w, rng.uniform(0.2, 0.8) * h
    r2 = ((xx - cx) ** 2 + (yy - cy) ** 2) / (w * w + h * h)
    light *= 1 - rng.uniform(0, 0.5) * r2 * 2  # vignette / fall-off
    light *= rng.uniform(0.8, 1.15)
    warm = rng.uniform(0, 1) if rng.random() < 0.6 else 0.0
    gain = np.array([1 - 0.18 * warm, 1 - 0.03 * warm, 1 + 0.1 * warm], np.float32)
    light = cv2.resize(light, (W, H), interpolation=cv2.INTER_LINEAR)
    out = img.astype(np.float32)
    out *= light[..., None]
    out *= gain
    if rng.random() < 0.25 and not mild:  # glare: a soft bright spot
        g = np.zeros((h, w), np.float32)
        cv2.circle(g, (int(rng.uniform(0, w)), int(rng.uniform(0, h))), int(rng.uniform(0.05, 0.15) * w), 1.0, -1)
        g = cv2.GaussianBlur(g, (0, 0), w * 0.04)
        out += cv2.resize(g, (W, H))[..., None] * rng.uniform(40, 110)
    sigma = rng.uniform(0.3, 1.0 if mild else 2.2) * W / 3000
    out = cv2.GaussianBlur(out, (0, 0), sigma)
    noise = rng.normal(0, rng.uniform(1.5, 2.5 if mild else 5), (H // 2, W // 2)).astype(np.float32)
    out += cv2.resize(noise, (W, H), interpolation=cv2.INTER_NEAREST)[..., None]
    out = np.clip(out, 0, 255).astype(np.uint8)
    ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(70, 93))])
    return cv2.imdecode(buf, cv2.IMREAD_COLOR)


# --------------------------------------------------------------------------- boards to place

def _spans_frame(terrain) -> bool:
    n = len(terrain)
    land = [[t != "empty" for t in row] for row in terrain]
    return (any(land[0]) and any(land[-1]) and any(row[0] for row in land)
            and any(row[-1] for row in land) and n == len(terrain[0]))


def rendered_board(rng, size=5, cell=None, castle_3d=None, full_frame=True):
    """A random kingdom drawn by ``vision.lab.scenes.render``: dict ``image``, ``mask``, ``terrain``,
    ``crowns``, ``dominoes``. ``castle_3d``: default a 3D castle in a third of the boards.
    ``full_frame``: the tiles reach all four sides of the frame (so the board's corners are the
    kingdom's outline, as in a finished game; otherwise an empty border row or column leaves
    the frame's position undefined in a photo)."""
    rng = render.as_rng(rng)
    lay = render.random_layout(rng, size)
    for _ in range(20):
        if not full_frame or _spans_frame(lay["terrain"]):
            break
        lay = render.random_layout(rng, size)
    cell = cell or (320 if size == 5 else 230)
    if castle_3d is None:
        castle_3d = bool(rng.random() < 0.33)
    img, mask = render.render_board(lay["terrain"], lay["crowns"], cell=cell, rng=rng,
                                    dominoes=lay["dominoes"], return_mask=True, castle_3d=castle_3d)
    return {"image": img, "mask": mask, "terrain": lay["terrain"], "crowns": lay["crowns"],
            "dominoes": lay["dominoes"]}


def aau_boards(root=None, photos=None):
    """AAU dev photos as boards for ``evaluate_scenes`` and the hard-table scenes (needs
    ``../shared``): dicts ``image``, ``mask`` (0 on bare squares), ``terrain``, ``crowns``,
    ``name``, ``group``. ``photos``: these AAU photos (``vision.lab.datasets.LabelledPhoto``)
    instead of every dev photo."""
    from vision.lab.datasets import load_aau

    out = []
    for p in (load_aau(root) if photos is None else photos):
        img = cv2.imread(str(p.path))
        if img is None:
            continue
        # bare-table squares show the scene's own table, not the AAU photo's
        mask = np.full(img.shape[:2], 255, np.uint8)
        ch, cw = img.shape[0] / p.rows, img.shape[1] / p.cols
        for r in range(p.rows):
            for c in range(p.cols):
                if p.terrain[r][c] == "empty":
                    mask[int(r * ch):int((r + 1) * ch), int(c * cw):int((c + 1) * cw)] = 0
        out.append({"image": img, "mask": mask, "terrain": [list(r) for r in p.terrain],
                    "crowns": [list(r) for r in p.crowns], "name": p.name, "group": p.group})
    return out


# --------------------------------------------------------------------------- evaluation

def _reading_json(reading):
    obj = reading.to_json() if hasattr(reading, "to_json") else dict(reading)
    corners = obj.get("corners", getattr(reading, "corners", None))
    return obj, corners


def evaluate_scenes(reader, boards=None, n=20, rng=None, width=None, give_size=False, **scene_kw):
    """Read ``n`` synthetic scenes with ``reader`` and compare with the ground truth.

    ``boards``: list of dicts with ``image``, ``terrain``, ``crowns`` (optional ``mask``),
    used in turn; default: fresh rendered 5x5 and 7x7 kingdoms. ``reader`` has
    ``read(image, size=None)`` (``vision.Reader``). ``give_size``: pass the true size to the reader.
    Returns ``{"n", "found_pct", "corner_err_pct" (median mean-corner error as % of the board side,
    smallest over the 4 cyclic orders), "corner_order_ok_pct" (% of found boards whose tl corner
    is the true tl, i.e. the grid is not turned), "size_ok_pct" (% of found boards read at the
    right size), "terrain_acc", "crown_acc", "square_acc", "boards_exact", "boards_exact_pct",
    "seconds_per_read", "by_table" ({table: n, found_pct, corner_err_pct, boards_exact})}``.
    """
    rng = render.as_rng(rng)
    found = exact = 0
    sq_total = sq_terrain = sq_crowns = sq_both = 0
    corner_errs = []
    order_ok = size_ok = 0
    read_time = 0.0
    per_table = {}
    for i in range(n):
        if boards:
            b = boards[i % len(boards)]
        else:
            b = rendered_board(rng, size=5 if i % 2 == 0 else 7)
        scene, corners, info = make_scene(b["image"], rng, width, board_mask=b.get("mask"),
                                          return_info=True, **scene_kw)
        terrain = scene_grid(b["terrain"], info["turns"])
        crowns = scene_grid(b["crowns"], info["turns"])
        size = len(terrain)
        sq_total += size * size
        tab = per_table.setdefault(info["table"], {"n": 0, "found": 0, "errs": [], "exact": 0})
        tab["n"] += 1
        t0 = time.perf_counter()
        try:
            reading = reader.read(scene, size=size if give_size else None)
        except ValueError:
            continue
        finally:
            read_time += time.perf_counter() - t0
        obj, pred_corners = _reading_json(reading)
        found += 1
        tab["found"] += 1
        if pred_corners is not None:
            pc = np.asarray(pred_corners, np.float32).reshape(4, 2)
            side = float(np.mean(np.linalg.norm(corners - np.roll(corners, -1, 0), axis=1)))
            errs = [float(np.mean(np.linalg.norm(np.roll(pc, k, 0) - corners, axis=1))) for k in range(4)]
            corner_errs.append(100 * min(errs) / side)
            tab["errs"].append(corner_errs[-1])
            order_ok += int(np.argmin(errs) == 0)
        cells = obj.get("cells") or []
        if len(cells) != size or any(len(row) != size for row in cells):
            continue
        size_ok += 1
        all_ok = True
        for r in range(size):
            for c in range(size):
                t_ok = cells[r][c]["terrain"] == terrain[r][c]
                c_ok = int(cells[r][c]["crowns"]) == int(crowns[r][c])
                sq_terrain += t_ok
                sq_crowns += c_ok
                sq_both += t_ok and c_ok
                all_ok &= t_ok and c_ok
        exact += all_ok
        tab["exact"] += all_ok
    pct = lambda a, b: round(100.0 * a / b, 2) if b else 0.0  # noqa: E731
    med = lambda v: round(float(np.median(v)), 3) if v else None  # noqa: E731
    by_table = {k: {"n": v["n"], "found_pct": pct(v["found"], v["n"]), "corner_err_pct": med(v["errs"]),
                    "boards_exact": v["exact"]} for k, v in sorted(per_table.items())}
    return {"n": n, "found_pct": pct(found, n),
            "corner_err_pct": med(corner_errs),
            "corner_order_ok_pct": pct(order_ok, len(corner_errs)),
            "size_ok_pct": pct(size_ok, found),
            "terrain_acc": pct(sq_terrain, sq_total), "crown_acc": pct(sq_crowns, sq_total),
            "square_acc": pct(sq_both, sq_total), "boards_exact": exact,
            "boards_exact_pct": pct(exact, n), "seconds_per_read": round(read_time / max(n, 1), 3),
            "by_table": by_table}


# --------------------------------------------------------------------------- samples & CLI

# The bundled samples: name -> (size, layout seed, scene seed). Rendering uses seed + 1.
SAMPLES = {"kingdom-5x5": (5, 2002, 11), "kingdom-7x7": (7, 2020, 12)}


def sample_layout(name: str) -> dict:
    """The kingdom a bundled sample shows (from its fixed seed)."""
    size, seed, _ = SAMPLES[name]
    return render.random_layout(np.random.default_rng(seed), size)


def make_sample(name: str):
    """``(photo_bgr, truth_json)`` of a bundled sample, regenerated from its seeds."""
    size, seed, scene_seed = SAMPLES[name]
    lay = sample_layout(name)
    img, mask = render.render_board(lay["terrain"], lay["crowns"], cell=320 if size == 5 else 230,
                                    rng=np.random.default_rng(seed + 1), dominoes=lay["dominoes"],
                                    return_mask=True)
    srng = np.random.default_rng(scene_seed)
    # a sample should be unambiguous: turned well away from 45 degrees, moderately tilted
    rotation = 90 * int(srng.integers(0, 4)) + float(srng.uniform(-20, 20))
    scene, corners, info = make_scene(img, srng, width=3000, board_mask=mask, max_tilt=25,
                                      rotation=rotation, scale=0.75, portrait=False,
                                      degrade="mild", return_info=True)
    terrain = scene_grid(lay["terrain"], info["turns"])
    crowns = scene_grid(lay["crowns"], info["turns"])
    truth = render.kingdom_json(terrain, crowns)
    return scene, truth, corners


def _cmd_samples(out: Path) -> int:
    out.mkdir(parents=True, exist_ok=True)
    for name in SAMPLES:
        scene, truth, _ = make_sample(name)
        cv2.imwrite(str(out / f"{name}.jpg"), scene, [cv2.IMWRITE_JPEG_QUALITY, 85])
        (out / f"{name}.truth.json").write_text(json.dumps(truth, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {out / (name + '.jpg')} and {name}.truth.json")
    return 0


def _cmd_scenes(out: Path, n: int, seed: int, source: str, width: int | None, occlude: float,
                other: float = 0.0) -> int:
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    try:
        boards = aau_boards() if source == "aau" else None
    except OSError:
        boards = []
    if source == "aau" and not boards:
        print("no AAU dev photos found (needs ../shared/datasets)", file=sys.stderr)
        return 2
    truth = []
    for i in range(n):
        if boards:
            b = boards[int(rng.integers(0, len(boards)))]
        else:
            b = rendered_board(rng, size=5 if rng.random() < 0.6 else 7)
        scene, corners, info = make_scene(b["image"], rng, width, board_mask=b.get("mask"),
                                          occlude=bool(rng.random() < occlude),
                                          other_kingdom=bool(rng.random() < other), return_info=True)
        name = f"scene_{i:04d}.jpg"
        cv2.imwrite(str(out / name), scene, [cv2.IMWRITE_JPEG_QUALITY, 90])
        kj = render.kingdom_json(scene_grid(b["terrain"], info["turns"]),
                                 scene_grid(b["crowns"], info["turns"]))
        truth.append({"file": name, "corners": corners.round(2).tolist(), "size": kj["size"],
                      "cells": kj["cells"], "turns": info["turns"], "table": info["table"],
                      "rotation": round(info["rotation"], 2), "tilt": round(info["tilt"], 2),
                      "occluded": info["occluded"], "other_kingdom": info.get("other_kingdom", False),
                      "board": b.get("name", "rendered")})
        print(f"{name}  {info['table']:<8} rot {info['rotation']:6.1f}  tilt {info['tilt']:4.1f}", flush=True)
    (out / "truth.json").write_text(json.dumps(truth, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {n} scenes and truth.json to {out}")
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m vision.lab.scenes.synth",
                                 description="Synthetic Kingdomino photos with exact ground truth.")
    sub = ap.add_subparsers(dest="cmd", required=True)
    sc = sub.add_parser("scenes", help="write N scenes and truth.json to OUTDIR")
    sc.add_argument("outdir", type=Path)
    sc.add_argument("--n", type=int, default=20)
    sc.add_argument("--seed", type=int, default=0)
    sc.add_argument("--source", choices=("rendered", "aau"), default="rendered",
                    help="boards drawn by vision.lab.scenes.render, or AAU dev photos (needs ../shared)")
    sc.add_argument("--width", type=int, default=None, help="photo width (default random 3000-4000)")
    sc.add_argument("--occlude", type=float, default=0.0, help="fraction of scenes with an occluder")
    sc.add_argument("--other-kingdom", type=float, default=0.0,
                    help="fraction of scenes with a second, unfinished kingdom on the table")
    sp = sub.add_parser("samples", help="(re)write the bundled sample photos and their truth JSON")
    sp.add_argument("outdir", type=Path)
    args = ap.parse_args(argv)
    if args.cmd == "scenes":
        if args.n < 1:
            ap.error("--n must be at least 1")
        if args.width is not None and args.width < 200:
            ap.error("--width must be at least 200 pixels")
    try:
        if args.cmd == "samples":
            return _cmd_samples(args.outdir)
        return _cmd_scenes(args.outdir, args.n, args.seed, args.source, args.width, args.occlude,
                           args.other_kingdom)
    except OSError as exc:
        print(f"cannot write to {args.outdir}: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
