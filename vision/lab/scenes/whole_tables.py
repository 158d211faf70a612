"""Whole-table photos: 2-4 kingdoms side by side on a table, and how well ``vision.find.whole_table`` reads them.

- ``make_table_scene(seed, n=None, width=4000, height=3000) -> TableScene``: 2-4 rendered 5x5
  kingdoms (or two 7x7, Mighty Duel) of 700-1000 px, each turned any way with a slight tilt, on a
  procedural table (``vision.lab.scenes.hard_tables.table_surface``) with clutter around them (loose
  dominoes, a draft line, loose tiles, a score pad, a box lid, meeples, a hand), then a phone's
  light, blur, noise and JPEG. The truth per kingdom: outer corners (the reader's order), size,
  terrain and crowns as seen in the photo, and its number (``vision.find.whole_table.number_order`` on the
  true centres).
- ``measure(reader, seeds)``: per photo, kingdoms found, read exactly (``vision.lab.scenes.hard_tables``'
  per-kingdom measure on the matched reading), phantom kingdoms (read where there is none),
  numbering right, seconds.

Seeds from ``SEEDS_FROM`` are for measuring only; never train or tune on them.

``python3 -m vision.lab.scenes.whole_tables --n 12 --seed 20000 --out DIR`` writes ``table_photos.json``.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from vision.lab.scenes import render

from vision.lab.scenes import synth

from vision.lab.scenes import hard_tables as tables

SEEDS_FROM = 20000


@dataclass(frozen=True)
class TableScene:
    image: np.ndarray                 # H x W x 3 BGR
    kingdoms: tuple                   # tables.HardScene each (image shared), in numbering order
    table: str
    palette: str
    clutter: tuple
    seed: int | None


def _slots(n: int, W: int, H: int, rng) -> list[tuple[float, float, float, float]]:
    """n boxes (x0, y0, x1, y1) that do not overlap, one kingdom each."""
    if n == 4 or (n == 3 and rng.random() < 0.5):
        boxes = [(0, 0, W / 2, H / 2), (W / 2, 0, W, H / 2), (0, H / 2, W / 2, H), (W / 2, H / 2, W, H)]
        if n == 3:
            boxes.pop(int(rng.integers(0, 4)))
        return boxes
    return [(k * W / n, 0, (k + 1) * W / n, H) for k in range(n)]


def _place(board_px: int, box, side: float, rng):
    """Board px -> photo px: a turn, a slight tilt (corner jitter), inside ``box``."""
    ang = rng.uniform(0, 2 * math.pi)
    half = side / 2
    base = np.array([[-half, -half], [half, -half], [half, half], [-half, half]])
    rot = np.array([[math.cos(ang), -math.sin(ang)], [math.sin(ang), math.cos(ang)]])
    pts = base @ rot.T + rng.normal(0, 0.02 * side, (4, 2))
    x0, y0, x1, y1 = box
    margin = 0.04 * side
    lo = np.array([x0, y0]) + margin - pts.min(0)
    hi = np.maximum(lo, np.array([x1, y1]) - margin - pts.max(0))
    pts = pts + rng.uniform(lo, hi)
    src = np.float32([[0, 0], [board_px, 0], [board_px, board_px], [0, board_px]])
    return cv2.getPerspectiveTransform(src, pts.astype(np.float32))


def make_table_scene(seed: int, n: int | None = None, width: int = 4000, height: int = 3000,
                     clutter: bool = True) -> TableScene:
    """A table photo with ``n`` (default 2-4) kingdoms; see the module docstring."""
    from vision.find.whole_table import number_order

    rng = render.as_rng(seed)
    W, H = int(width), int(height)
    n = int(n) if n is not None else int(rng.integers(2, 5))
    if not 1 <= n <= 4:
        raise ValueError(f"a table photo holds 1 to 4 kingdoms, not {n}")
    size = 7 if n == 2 and rng.random() < 0.3 else 5
    kind, palette = tables.pick_table(rng)
    scene = tables.table_surface(kind, H, W, rng, palette, unit=0.2 * min(W, H))
    scale = min(W, H) / 3000
    boards, placed_h = [], []
    keep = np.zeros((max(1, H // 8), max(1, W // 8)), np.uint8)
    for box in _slots(n, W, H, rng)[:n]:
        side = float(rng.uniform(700, 1000)) * scale
        cell = int(np.clip(side * 1.2 / size, 16, 200))
        b = synth.rendered_board(rng, size=size, cell=cell, castle_3d=True)
        bh, bw = b["image"].shape[:2]
        Hb = _place(bw, box, side, rng)
        pts = cv2.perspectiveTransform(np.float32([[[0, 0], [bw, 0], [bw, bh], [0, bh]]]), Hb)[0]
        cv2.fillPoly(keep, [np.round(pts / 8).astype(np.int32)], 255)
        boards.append(b)
        placed_h.append((Hb, pts, side))
    keep = cv2.dilate(keep, np.ones((3, 3), np.uint8), iterations=max(1, int(0.05 * 800 * scale / 8)))
    placed = []
    if clutter:
        kinds = ["dominoes", "draft_row"] + [str(c) for c in rng.choice(
            [c for c in tables.CLUTTER if c not in ("dominoes", "draft_row")], int(rng.integers(1, 4)),
            replace=False)]
        placed = tables.add_clutter(scene, keep, 850 * scale / size, rng, kinds)
    truths = []
    for b, (Hb, pts, side) in zip(boards, placed_h):
        tiles = cv2.warpPerspective(b["mask"], Hb, (W, H), flags=cv2.INTER_LINEAR)
        synth.shadow(scene, tiles, (0, 0), 0.35, max(3, side * 0.02))
        edge = np.roll(tiles, max(1, int(side * 0.006)), axis=0) > 127
        scene[edge] = (scene[edge] * 0.4).astype(np.uint8)
        warped = cv2.warpPerspective(b["image"], Hb, (W, H), flags=cv2.INTER_LINEAR)
        on = tiles > 127
        scene[on] = warped[on]
        corners, turns = synth.turns_and_corners(pts.astype(np.float32))
        truths.append((corners, turns, b, side))
    image = synth.degrade_photo(scene, rng, mild=True)
    order = number_order([c.mean(0) for c, _, _, _ in truths], [s for _, _, _, s in truths])
    kingdoms = []
    for i in order:
        corners, turns, b, side = truths[i]
        terrain = synth.scene_grid(b["terrain"], turns)
        crowns = synth.scene_grid(b["crowns"], turns)
        kingdoms.append(tables.HardScene(
            image=image, corners=corners, size=size,
            terrain=tuple(tuple(str(t) for t in row) for row in terrain),
            crowns=tuple(tuple(int(c) for c in row) for row in crowns),
            table=kind, palette=palette, seed=seed))
    return TableScene(image=image, kingdoms=tuple(kingdoms), table=kind, palette=palette,
                      clutter=tuple(placed), seed=seed)


class _Given:
    """A stand-in reader that returns one reading already made (to reuse ``measure_scene``)."""

    def __init__(self, reading):
        self.reading = reading

    def read(self, image):
        return self.reading


def measure_photo(reader, scene: TableScene, read=None) -> dict:
    """One table photo: found, exact, phantom, numbering right, seconds. ``read(reader,
    image)`` reads it (default ``vision.find.whole_table.read_table``)."""
    if read is None:
        from vision.find.whole_table import read_table as read

    t0 = time.perf_counter()
    try:
        found = read(reader, scene.image)
    except ValueError:
        found = []
    seconds = time.perf_counter() - t0
    truth_centres = np.array([k.corners.mean(0) for k in scene.kingdoms])
    truth_sides = np.array([np.mean(np.linalg.norm(k.corners - np.roll(k.corners, -1, 0), axis=1))
                            for k in scene.kingdoms])
    matched: dict[int, int] = {}    # truth index -> found number
    phantom = 0
    rows = []
    for f in found:
        centre = np.asarray(f.reading.corners, np.float64).mean(0)
        d = np.linalg.norm(truth_centres - centre, axis=1)
        t = int(np.argmin(d))
        if d[t] > 0.35 * truth_sides[t] or t in matched:
            phantom += 1
            continue
        matched[t] = f.kingdom
        row = tables.measure_scene(_Given(f.reading), scene.kingdoms[t])
        rows.append({"truth": t, "kingdom": f.kingdom, "cut": f.cut, **{
            k: row[k] for k in ("grid_right", "corner_error", "squares_wrong", "total",
                                "true_total", "total_exact")}})
    exact = sum(1 for r in rows if r["total_exact"] and r["squares_wrong"] == 0 and r["grid_right"])
    numbering = (len(matched) == len(scene.kingdoms) and phantom == 0
                 and all(matched[t] == t for t in matched))
    return {"seed": scene.seed, "table": scene.table, "palette": scene.palette,
            "clutter": list(scene.clutter), "kingdoms": len(scene.kingdoms),
            "found": len(matched), "exact": exact, "phantom": phantom,
            "numbering_right": bool(numbering), "seconds": round(seconds, 3), "per_kingdom": rows}


def summarise(rows: list) -> dict:
    """The photos' figures added up; seconds: median and max per photo, and the median of the
    4-kingdom photos alone (None without one)."""
    kingdoms = sum(r["kingdoms"] for r in rows)
    four = [r["seconds"] for r in rows if r["kingdoms"] == 4]
    return {"photos": len(rows), "kingdoms": kingdoms,
            "found": sum(r["found"] for r in rows),
            "exact": sum(r["exact"] for r in rows),
            "phantom": sum(r["phantom"] for r in rows),
            "numbering_right": sum(r["numbering_right"] for r in rows),
            "seconds_median": round(float(np.median([r["seconds"] for r in rows])), 3) if rows else None,
            "seconds_max": max((r["seconds"] for r in rows), default=None),
            "seconds_four_median": round(float(np.median(four)), 3) if four else None}


def measure(reader, seeds, read=None, on_photo=None, **scene_kw) -> dict:
    """Every seed's photo made (``make_table_scene(seed, **scene_kw)``) and measured
    (``measure_photo``; ``on_photo(row)`` after each): ``summary`` and ``photos``."""
    rows = []
    for s in seeds:
        rows.append(measure_photo(reader, make_table_scene(int(s), **scene_kw), read))
        if on_photo is not None:
            on_photo(rows[-1])
    return {"summary": summarise(rows), "photos": rows}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m vision.lab.scenes.whole_tables",
                                 description="measure whole-table reading on generated table photos")
    ap.add_argument("--n", type=int, default=12, help="photos (default 12)")
    ap.add_argument("--seed", type=int, default=SEEDS_FROM, help=f"first seed (>= {SEEDS_FROM})")
    ap.add_argument("--kingdoms", type=int, default=None, help="kingdoms per photo (default 2-4)")
    ap.add_argument("--out", default=None, help="folder for table_photos.json and example photos")
    args = ap.parse_args(argv)
    if args.seed < SEEDS_FROM:
        ap.error(f"--seed must be {SEEDS_FROM} or more: lower seeds may be used for training")
    if args.n < 1:
        ap.error("--n must be at least 1")
    import vision

    reader = vision.Reader()
    result = measure(reader, range(args.seed, args.seed + args.n), n=args.kingdoms)
    print(json.dumps(result["summary"]))
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "table_photos.json").write_text(json.dumps(result, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
